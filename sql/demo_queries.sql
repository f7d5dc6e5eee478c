-- demo_queries.sql: what `make demo` runs in the sqlite3 shell.
.load ./parallel
.print 'The extension and its settings:'
SELECT par_version() AS version,
       par_config('threads') AS threads,
       par_config('memory_mb') AS memory_mb,
       par_config('min_rows') AS min_rows;
.print 'Settings are per connection; bad values are refused with a clear error:'
SELECT par_config('threads', 1) AS threads_now;
SELECT par_config('threads', 0) AS back_to_all_cores;
.bail off
SELECT par_config('threads', -3);
.bail on
.print 'The sample data, natively (the next issues run these through parallel views):'
SELECT region, count(*) AS n, sum(amount) AS total, round(avg(price), 2) AS avg_price
  FROM sales WHERE year >= 2020 GROUP BY region ORDER BY total DESC;
