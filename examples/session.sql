-- session.sql: a session in the sqlite3 shell, from the repository root:
--
--   sqlite3 /tmp/readings.db < examples/session.sql
--
-- It makes its own table (150,000 sensor readings, made deterministically:
-- every run prints the same rows, examples/session.expected), so any
-- database file will do; in a file, the views read it in parallel.
.load ./parallel
.mode box
DROP TABLE IF EXISTS readings;
CREATE TABLE readings(id INTEGER PRIMARY KEY, sensor TEXT, hour INT, value REAL);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 150000)
INSERT INTO readings
SELECT i, 'sensor-' || (i * 7 % 6), i / 6250,
       CASE WHEN i % 97 = 0 THEN NULL ELSE ((i * 7919) % 10007) / 100.0 END
  FROM s;

.print 'A GROUP BY through a parallel view:'
CREATE VIRTUAL TABLE temp.per_sensor USING parallel(
  'SELECT sensor, count(*) AS n, count(value) AS with_value,
          round(avg(value), 3) AS mean, min(value) AS lo, max(value) AS hi
     FROM readings GROUP BY sensor');
SELECT * FROM per_sensor ORDER BY sensor;

.print 'The same SELECT run natively gives the same rows:'
SELECT count(*) AS rows_that_differ FROM (
  SELECT * FROM per_sensor
  EXCEPT
  SELECT sensor, count(*) AS n, count(value) AS with_value,
         round(avg(value), 3) AS mean, min(value) AS lo, max(value) AS hi
    FROM readings GROUP BY sensor);

.print 'The n highest readings (ORDER BY with LIMIT; :n is a parameter):'
SELECT par_view('highest',
  'SELECT id, sensor, value FROM readings ORDER BY value DESC, id LIMIT :n');
SELECT * FROM highest(3);

.print 'A histogram of the values, five equal bins (NULLs have a row of their own):'
SELECT * FROM par_histogram('readings', 'value', 5);

.print 'The median and the 95th percentile:'
SELECT par_median(value) AS median, par_percentile(value, 95) AS p95 FROM readings;

.print 'A cumulative histogram: a running sum of the counts of the bins (a window over'
.print 'par_histogram), beside the number of values below each upper edge, counted natively:'
CREATE TEMP VIEW cumulative AS
SELECT bin, lo, hi, count, sum(count) OVER (ORDER BY bin) AS running,
       (SELECT count(*) FROM readings
         WHERE value < h.hi OR (h.bin = 4 AND value = h.hi)) AS native
  FROM par_histogram('readings', 'value', 5) AS h
 WHERE kind = 'bin';
SELECT * FROM cumulative;
SELECT count(*) AS bins_that_differ FROM cumulative WHERE running <> native;
