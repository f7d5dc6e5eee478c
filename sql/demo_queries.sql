-- demo_queries.sql: what `make demo` runs in the sqlite3 shell over the
-- 1M-row sales table of sql/demo.sql:
--
--   sqlite3 -bail -box build/demo.db < sql/demo_queries.sql
--
-- Four queries, each run natively by SQLite and then through the extension
-- (a parallel view, par_histogram, par_median): twice, the first time with
-- the columnar cache empty, the second time from it.  Every answer is kept
-- in a temp table and compared with SQLite's own (EXCEPT both ways and the
-- row counts); a difference stops the demo with an error.  The times come
-- from julianday('now') between statements (milliseconds), so they include
-- writing the answer into its temp table, the same for both sides.
.load ./parallel
.print 'The extension and its settings (min_rows: smaller inputs run serially):'
SELECT par_version() AS version,
       par_config('threads') AS threads,
       par_config('memory_mb') AS memory_mb,
       par_config('min_rows') AS min_rows,
       (SELECT count(*) FROM sales) AS sales_rows;

-- A stopwatch: UPDATE clock starts it, SELECT ms FROM lap reads it.
CREATE TEMP TABLE clock(t REAL);
INSERT INTO clock VALUES (julianday('now'));
CREATE TEMP VIEW lap AS
  SELECT CAST(round((julianday('now') - t) * 86400000.0) AS INT) AS ms FROM clock;
CREATE TEMP TABLE timing(query TEXT, how TEXT, ms INT);
-- checks.differing: rows in one answer and not the other, and the
-- difference in row counts; anything but 0 aborts the demo.
CREATE TEMP TABLE checks(query TEXT, differing INT);
CREATE TEMP TRIGGER checks_agree BEFORE INSERT ON checks WHEN NEW.differing <> 0
BEGIN
  SELECT RAISE(ABORT, 'a parallel answer differs from SQLite''s own');
END;

-- ---- 1. A GROUP BY report ------------------------------------------------
.print ''
.print '1. A GROUP BY report: sales per region and product since 2020.'
UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE report_native AS
  SELECT region, upper(product) AS product, count(*) AS n, sum(amount) AS cents,
         round(avg(price), 2) AS avg_price, min(price) AS lo, max(price) AS hi
    FROM sales WHERE year >= 2020 GROUP BY region, 2;
INSERT INTO timing SELECT 'GROUP BY report', 'native', ms FROM lap;

CREATE VIRTUAL TABLE temp.report USING parallel(
  'SELECT region, upper(product) AS product, count(*) AS n, sum(amount) AS cents,
          round(avg(price), 2) AS avg_price, min(price) AS lo, max(price) AS hi
     FROM sales WHERE year >= 2020 GROUP BY region, 2');
.output /dev/null
SELECT par_cache_clear();    -- the first run reads the table, not the cache
.output stdout
UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE report_par AS SELECT * FROM report;
INSERT INTO timing SELECT 'GROUP BY report', 'parallel', ms FROM lap;
UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE report_warm AS SELECT * FROM report;
INSERT INTO timing SELECT 'GROUP BY report', 'cached', ms FROM lap;

INSERT INTO checks SELECT 'GROUP BY report',
    (SELECT count(*) FROM (SELECT * FROM report_native EXCEPT SELECT * FROM report_par))
  + (SELECT count(*) FROM (SELECT * FROM report_par EXCEPT SELECT * FROM report_native))
  + (SELECT count(*) FROM (SELECT * FROM report_native EXCEPT SELECT * FROM report_warm))
  + (SELECT count(*) FROM (SELECT * FROM report_warm EXCEPT SELECT * FROM report_native))
  + abs((SELECT count(*) FROM report_native) - (SELECT count(*) FROM report_par))
  + abs((SELECT count(*) FROM report_native) - (SELECT count(*) FROM report_warm));
SELECT * FROM report_par ORDER BY cents DESC LIMIT 6;

-- ---- 2. A text key -------------------------------------------------------
.print ''
.print '2. A text key: orders per customer (20,000 groups), the top five.'
UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE customers_native AS
  SELECT customer, count(*) AS orders, sum(amount) AS cents, max(price) AS top_price
    FROM sales GROUP BY customer;
INSERT INTO timing SELECT 'text-key GROUP BY', 'native', ms FROM lap;

CREATE VIRTUAL TABLE temp.customers USING parallel(
  'SELECT customer, count(*) AS orders, sum(amount) AS cents, max(price) AS top_price
     FROM sales GROUP BY customer');
.output /dev/null
SELECT par_cache_clear();    -- the first run reads the table, not the cache
.output stdout
UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE customers_par AS SELECT * FROM customers;
INSERT INTO timing SELECT 'text-key GROUP BY', 'parallel', ms FROM lap;
UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE customers_warm AS SELECT * FROM customers;
INSERT INTO timing SELECT 'text-key GROUP BY', 'cached', ms FROM lap;

INSERT INTO checks SELECT 'text-key GROUP BY',
    (SELECT count(*) FROM (SELECT * FROM customers_native EXCEPT SELECT * FROM customers_par))
  + (SELECT count(*) FROM (SELECT * FROM customers_par EXCEPT SELECT * FROM customers_native))
  + (SELECT count(*) FROM (SELECT * FROM customers_native EXCEPT SELECT * FROM customers_warm))
  + (SELECT count(*) FROM (SELECT * FROM customers_warm EXCEPT SELECT * FROM customers_native))
  + abs((SELECT count(*) FROM customers_native) - (SELECT count(*) FROM customers_par))
  + abs((SELECT count(*) FROM customers_native) - (SELECT count(*) FROM customers_warm));
SELECT * FROM customers_par ORDER BY cents DESC, customer LIMIT 5;

-- ---- 3. A histogram ------------------------------------------------------
-- par_histogram's ten equal bins over [0, 100000) are 10,000 cents wide,
-- so SQLite's own answer is a GROUP BY over amount / 10000.
.print ''
.print '3. A histogram of amounts: ten bins of $100 (par_histogram).'
UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE hist_native AS
  SELECT amount / 10000 AS bin, count(*) AS count
    FROM sales WHERE amount >= 0 AND amount < 100000 GROUP BY 1;
INSERT INTO timing SELECT 'par_histogram', 'native', ms FROM lap;

.output /dev/null
SELECT par_cache_clear();    -- the first run reads the table, not the cache
.output stdout
UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE hist_par AS
  SELECT * FROM par_histogram('sales', 'amount', 10, 0, 100000);
INSERT INTO timing SELECT 'par_histogram', 'parallel', ms FROM lap;
UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE hist_warm AS
  SELECT * FROM par_histogram('sales', 'amount', 10, 0, 100000);
INSERT INTO timing SELECT 'par_histogram', 'cached', ms FROM lap;

INSERT INTO checks SELECT 'par_histogram',
    (SELECT count(*) FROM (SELECT * FROM hist_native EXCEPT SELECT bin, count FROM hist_par))
  + (SELECT count(*) FROM (SELECT bin, count FROM hist_par EXCEPT SELECT * FROM hist_native))
  + (SELECT count(*) FROM (SELECT * FROM hist_par EXCEPT SELECT * FROM hist_warm))
  + abs((SELECT count(*) FROM hist_native) - (SELECT count(*) FROM hist_par))
  + abs((SELECT count(*) FROM hist_par) - (SELECT count(*) FROM hist_warm));
SELECT bin, lo / 100 AS "from $", hi / 100 AS "to $", count, cumulative,
       substr('##############################', 1, CAST(round(fraction * 100) AS INT)) AS share
  FROM hist_par ORDER BY bin;

-- ---- 4. A median ---------------------------------------------------------
-- SQLite 3.40 has no median: natively it is the middle of ORDER BY, and
-- for an even count the point halfway between the two middle values,
-- a + (b - a) * 0.5, as par_median (and percentile.c) interpolate.
.print ''
.print '4. The median price (par_median).'
UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE median_native AS
  SELECT a + (b - a) * 0.5 AS median_price FROM (
    SELECT min(price) AS a, max(price) AS b FROM (
      SELECT price FROM sales WHERE price IS NOT NULL ORDER BY price
       LIMIT 2 - (SELECT count(price) FROM sales) % 2
      OFFSET ((SELECT count(price) FROM sales) - 1) / 2));
INSERT INTO timing SELECT 'par_median', 'native', ms FROM lap;

UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE median_par AS SELECT par_median(price) AS median_price FROM sales;
INSERT INTO timing SELECT 'par_median', 'parallel', ms FROM lap;
UPDATE clock SET t = julianday('now');
CREATE TEMP TABLE median_warm AS SELECT par_median(price) AS median_price FROM sales;
INSERT INTO timing SELECT 'par_median', 'cached', ms FROM lap;

INSERT INTO checks SELECT 'par_median',
    (SELECT count(*) FROM (SELECT * FROM median_native EXCEPT SELECT * FROM median_par))
  + (SELECT count(*) FROM (SELECT * FROM median_native EXCEPT SELECT * FROM median_warm))
  + abs((SELECT count(*) FROM median_native) - (SELECT count(*) FROM median_par));
SELECT n.median_price AS native, p.median_price AS par_median
  FROM median_native n, median_par p;

-- ---- Side by side --------------------------------------------------------
.print ''
.print 'Native SQLite against the extension (milliseconds; "cached": the same'
.print 'again, the columns read from the columnar cache; par_median has no cache):'
SELECT t.query,
       max(CASE how WHEN 'native' THEN ms END) AS native_ms,
       max(CASE how WHEN 'parallel' THEN ms END) AS parallel_ms,
       max(CASE how WHEN 'cached' THEN ms END) AS cached_ms,
       printf('%.1fx', max(CASE how WHEN 'native' THEN ms END) * 1.0
                       / max(1, max(CASE how WHEN 'parallel' THEN ms END))) AS speedup,
       CASE c.differing WHEN 0 THEN 'yes' ELSE 'NO' END AS same_answer
  FROM timing t JOIN checks c ON c.query = t.query
 GROUP BY t.query ORDER BY min(t.rowid);

.print ''
.print 'What ran where (par_explain):'
.mode list
SELECT par_explain('SELECT region, upper(product) AS product, count(*) AS n, sum(amount) AS cents,
                            round(avg(price), 2) AS avg_price, min(price) AS lo, max(price) AS hi
                       FROM sales WHERE year >= 2020 GROUP BY region, 2') AS plan;
