-- demo.sql: the sample database of `make demo`: 1,000,000 sales, made
-- deterministically (no random()) so every run shows the same numbers,
-- with a recursive CTE that any sqlite3 shell runs (no generate_series).
-- sql/demo.sh builds it into build/demo.db once (and again when this file
-- changes); 1M rows is ten times par_config('min_rows')'s default, so the
-- demo's views run in parallel.
PRAGMA journal_mode = WAL;
DROP TABLE IF EXISTS sales;
CREATE TABLE sales(
  id       INTEGER PRIMARY KEY,
  region   TEXT,     -- 4 regions and NULL, one of them capitalised
  product  TEXT,
  customer TEXT,     -- 20,000 names: the text key of the demo
  year     INT,
  amount   INT,      -- cents, 0 to 99,900, small amounts the most common
  price    REAL
);
BEGIN;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000000)
INSERT INTO sales(id, region, product, customer, year, amount, price)
SELECT i,
       CASE i % 5 WHEN 0 THEN 'north' WHEN 1 THEN 'south' WHEN 2 THEN 'East'
                  WHEN 3 THEN 'west' ELSE NULL END,
       CASE (i * 7) % 4 WHEN 0 THEN 'apple' WHEN 1 THEN 'Banana'
                        WHEN 2 THEN 'cherry' ELSE 'date' END,
       'customer ' || ((i * 31337) % 20000),
       2018 + (i * 13) % 7,
       ((i * 7919) % 1000) * (1 + (i * 104729) % 100),
       round(((i * 104729) % 10000) / 100.0 + 0.5, 2)
FROM s;
COMMIT;
