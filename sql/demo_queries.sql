-- demo_queries.sql: what `make demo` runs in the sqlite3 shell.
.load ./parallel
.print 'The extension and its settings:'
SELECT par_version() AS version,
       par_config('threads') AS threads,
       par_config('memory_mb') AS memory_mb,
       par_config('min_rows') AS min_rows;

.print ''
.print 'A parallel view: an ordinary SELECT, computed by the kernels.'
CREATE VIRTUAL TABLE temp.by_region USING parallel(
  'SELECT region, upper(product) AS p, sum(amount) AS total, count(*) AS n,
          round(avg(price), 2) AS avg_price
     FROM sales WHERE year >= 2020 GROUP BY region, p HAVING count(*) > 10');
SELECT * FROM by_region ORDER BY total DESC LIMIT 6;

.print ''
.print 'The same SELECT run natively gives the same rows:'
SELECT count(*) AS rows_that_differ FROM (
  SELECT * FROM by_region
  EXCEPT
  SELECT region, upper(product) AS p, sum(amount) AS total, count(*) AS n,
         round(avg(price), 2) AS avg_price
    FROM sales WHERE year >= 2020 GROUP BY region, p HAVING count(*) > 10);

.print ''
.print 'Aggregates over the whole table, and text grouped under NOCASE:'
CREATE VIRTUAL TABLE temp.totals USING parallel(
  'SELECT count(*) AS n, count(region) AS with_region, min(price), max(price),
          total(amount) AS total_amount FROM sales');
SELECT * FROM totals;
CREATE VIRTUAL TABLE temp.products USING parallel(
  'SELECT product COLLATE NOCASE AS product, count(DISTINCT region) AS regions,
          group_concat(DISTINCT year) AS years
     FROM sales GROUP BY 1');
SELECT * FROM products;

.print ''
.print 'Distributions: a histogram of prices (bins in parallel), quartile bins'
.print 'of amounts, and the median and 90th percentile price:'
SELECT * FROM par_histogram('sales', 'price', 5);
SELECT bin, lo, hi, count FROM par_histogram('sales', 'amount', 4, 'quantile');
SELECT par_median(price) AS median_price, par_percentile(price, 90) AS p90 FROM sales;

.print ''
.print 'What ran where (par_explain):'
SELECT par_explain('SELECT region, sum(amount) FROM sales GROUP BY region');
SELECT par_explain('SELECT * FROM sales ORDER BY amount LIMIT 3');
