-- demo.sql: the sample database of `make demo`: 50,000 sales, made
-- deterministically (no random()) so every run shows the same numbers.
PRAGMA journal_mode = WAL;
DROP TABLE IF EXISTS sales;
CREATE TABLE sales(
  id      INTEGER PRIMARY KEY,
  region  TEXT,
  product TEXT,
  year    INT,
  amount  INT,      -- cents
  price   REAL
);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 50000)
INSERT INTO sales(id, region, product, year, amount, price)
SELECT i,
       CASE i % 5 WHEN 0 THEN 'north' WHEN 1 THEN 'south' WHEN 2 THEN 'East'
                  WHEN 3 THEN 'west' ELSE NULL END,
       CASE (i * 7) % 4 WHEN 0 THEN 'apple' WHEN 1 THEN 'Banana'
                        WHEN 2 THEN 'cherry' ELSE 'date' END,
       2018 + (i * 13) % 7,
       (i * 7919) % 100000,
       round(((i * 104729) % 10000) / 100.0 + 0.5, 2)
FROM s;
