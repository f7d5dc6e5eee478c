#!/usr/bin/python3
"""TPC-H's 22 queries natively in SQLite, through parallel views and in
DuckDB, on data of our own generator (bench/tpch/dbgen.c, docs/tpch.md).

    make bench-tpch                        # SF 1, all cores, median of 3 runs
    SF=0.1 make bench-tpch                 # scale factor 0.1
    TPCH_THREADS=1,2 make bench-tpch       # the parallel systems at 1 and at 2 threads
    TPCH_QUERIES=Q1,Q6 make bench-tpch     # only these queries
    TPCH_REPS=1 TPCH_LIMIT=60 ...          # one run of each; 60 s a query at most
    TPCH_RESULTS=0 ...                     # do not write bench/tpch.md

Generates (once) bench/data/tpch_sf<SF>.db: the 8 tables in WAL mode with
the specification's primary keys and no other index: region, nation,
supplier, customer, part and orders with an INTEGER PRIMARY KEY, partsupp
and lineitem with PRIMARY KEY(...) on a rowid table; dates as TEXT
'YYYY-MM-DD', DECIMAL columns as REAL.  build/tpch_dbgen is used as it is
when it exists (make builds it otherwise).

The queries are the specification's with its default substitution
parameters, in SQLite's dialect: date arithmetic as date('1994-01-01', '+1
year'), extract(year ...) as CAST(substr(d, 1, 4) AS INTEGER), Q15's view
as a WITH clause, derived tables as written (Q13's column list moved into
its SELECT), Q6's DISCOUNT +- 0.01 precomputed as 0.05 and 0.07 (in
doubles 0.06 - 0.01 < 0.05, which would leave out the lines the
specification's DECIMAL arithmetic keeps).  DuckDB runs them translated mechanically (duckdb_sql) on its
own in-memory copy, dates as DATE.

For each query, each repetition runs one after another: native SQLite
(stopped by a progress handler after TPCH_LIMIT seconds: "> limit"); then
at each thread count (par_config('threads', n)) the parallel view of the
query (par_view) cold, after par_cache_clear(), and warm, right after
(stopped by sqlite3_interrupt after TPCH_LIMIT seconds); and DuckDB at
that thread count.  Times are medians; a system over the limit once is not
run again.  Every answer is checked against native SQLite's: the views'
bit for bit and in order (bench.py's same()), DuckDB's REALs within a
relative 1e-9 (in order, or as the same multiset where ORDER BY leaves ties
open).  Where native SQLite did not finish, the views' answers cannot be
checked and the table says so.  "plan" is par_explain's word for the
query: "kernels" or "native".  Writes bench/tpch.md (unless TPCH_RESULTS=0);
ends with "bench-tpch: N passed, N failed" (a query passes when every
answer it could check agreed) and exits non-zero if any answer differed
or a view failed.
"""
import datetime
import math
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import (DuckDB, differing_rows, finish, has_sqlite_object, same,  # noqa: E402
                   timed, write_csv)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXT = os.environ.get("TPCH_EXT", os.path.join(ROOT, "parallel.so"))
DATA = os.path.join(ROOT, "bench", "data")
DBGEN = os.path.join(ROOT, "build", "tpch_dbgen")

# The tables in the order they load, with the specification's columns.
SCHEMA = [
    ("region", "r_regionkey INTEGER PRIMARY KEY, r_name TEXT, r_comment TEXT"),
    ("nation", "n_nationkey INTEGER PRIMARY KEY, n_name TEXT, n_regionkey INTEGER, "
               "n_comment TEXT"),
    ("supplier", "s_suppkey INTEGER PRIMARY KEY, s_name TEXT, s_address TEXT, "
                 "s_nationkey INTEGER, s_phone TEXT, s_acctbal REAL, s_comment TEXT"),
    ("customer", "c_custkey INTEGER PRIMARY KEY, c_name TEXT, c_address TEXT, "
                 "c_nationkey INTEGER, c_phone TEXT, c_acctbal REAL, c_mktsegment TEXT, "
                 "c_comment TEXT"),
    ("part", "p_partkey INTEGER PRIMARY KEY, p_name TEXT, p_mfgr TEXT, p_brand TEXT, "
             "p_type TEXT, p_size INTEGER, p_container TEXT, p_retailprice REAL, "
             "p_comment TEXT"),
    ("partsupp", "ps_partkey INTEGER, ps_suppkey INTEGER, ps_availqty INTEGER, "
                 "ps_supplycost REAL, ps_comment TEXT, PRIMARY KEY(ps_partkey, ps_suppkey)"),
    ("orders", "o_orderkey INTEGER PRIMARY KEY, o_custkey INTEGER, o_orderstatus TEXT, "
               "o_totalprice REAL, o_orderdate TEXT, o_orderpriority TEXT, o_clerk TEXT, "
               "o_shippriority INTEGER, o_comment TEXT"),
    ("lineitem", "l_orderkey INTEGER, l_partkey INTEGER, l_suppkey INTEGER, "
                 "l_linenumber INTEGER, l_quantity REAL, l_extendedprice REAL, "
                 "l_discount REAL, l_tax REAL, l_returnflag TEXT, l_linestatus TEXT, "
                 "l_shipdate TEXT, l_commitdate TEXT, l_receiptdate TEXT, "
                 "l_shipinstruct TEXT, l_shipmode TEXT, l_comment TEXT, "
                 "PRIMARY KEY(l_orderkey, l_linenumber)"),
]


def sf_name(sf):
    """The scale factor as it appears in file names: 1, 0.01, 10."""
    return "%g" % sf


def db_path(sf, data=DATA):
    return os.path.join(data, "tpch_sf%s.db" % sf_name(sf))


# ---- the data ------------------------------------------------------------

def dbgen():
    """build/tpch_dbgen, made when missing (a machine without a compiler
    can bring it along)."""
    if not os.path.exists(DBGEN):
        subprocess.run(["make", "--no-print-directory", "-C", ROOT, "build/tpch_dbgen"],
                       check=True, stdout=sys.stderr)
    return DBGEN


def generate(sf, path, quiet=False):
    """path := the TPC-H tables at scale factor sf, unless it exists.  Built
    under path.tmp with no journal and renamed when complete, so a stopped
    run leaves nothing half made; WAL mode is set after the load."""
    if os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(tmp + suffix):
            os.remove(tmp + suffix)
    gen = dbgen()
    t0 = time.time()
    c = sqlite3.connect(tmp, isolation_level=None)
    c.execute("PRAGMA journal_mode=OFF")
    c.execute("PRAGMA synchronous=OFF")
    c.execute("PRAGMA cache_size=-262144")
    c.execute("BEGIN")
    for table, columns in SCHEMA:
        c.execute("CREATE TABLE %s(%s)" % (table, columns))
        ncol = len(c.execute("PRAGMA table_info(%s)" % table).fetchall())
        insert = "INSERT INTO %s VALUES (%s)" % (table, ", ".join("?" * ncol))
        proc = subprocess.Popen([gen, "-s", repr(sf), table], stdout=subprocess.PIPE,
                                text=True, bufsize=1 << 20)
        # The columns' affinities turn the text into INTEGER and REAL values.
        c.executemany(insert, (line[:-1].split("|") for line in proc.stdout))
        if proc.wait() != 0:
            raise RuntimeError("tpch_dbgen -s %r %s failed (status %d)"
                               % (sf, table, proc.returncode))
    c.execute("COMMIT")
    c.execute("PRAGMA journal_mode=WAL")
    c.close()
    os.rename(tmp, path)
    if not quiet:
        print("generated %s in %.1f s" % (path, time.time() - t0), flush=True)


# ---- the queries ---------------------------------------------------------

def queries(sf):
    """[(id, SQL)]: the 22 queries in SQLite's dialect with the
    specification's default substitution parameters (Q11's FRACTION is
    0.0001 / SF)."""
    return [
        ("Q1", """
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty,
       sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price,
       avg(l_discount) AS avg_disc, count(*) AS count_order
FROM lineitem
WHERE l_shipdate <= date('1998-12-01', '-90 day')
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus"""),
        ("Q2", """
SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
FROM part, supplier, partsupp, nation, region
WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND p_size = 15
  AND p_type LIKE '%BRASS' AND s_nationkey = n_nationkey
  AND n_regionkey = r_regionkey AND r_name = 'EUROPE'
  AND ps_supplycost = (
    SELECT min(ps_supplycost) FROM partsupp, supplier, nation, region
    WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey
      AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey
      AND r_name = 'EUROPE')
ORDER BY s_acctbal DESC, n_name, s_name, p_partkey
LIMIT 100"""),
        ("Q3", """
SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue,
       o_orderdate, o_shippriority
FROM customer, orders, lineitem
WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey
  AND l_orderkey = o_orderkey AND o_orderdate < '1995-03-15'
  AND l_shipdate > '1995-03-15'
GROUP BY l_orderkey, o_orderdate, o_shippriority
ORDER BY revenue DESC, o_orderdate
LIMIT 10"""),
        ("Q4", """
SELECT o_orderpriority, count(*) AS order_count
FROM orders
WHERE o_orderdate >= '1993-07-01' AND o_orderdate < date('1993-07-01', '+3 month')
  AND EXISTS (SELECT * FROM lineitem
              WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)
GROUP BY o_orderpriority
ORDER BY o_orderpriority"""),
        ("Q5", """
SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM customer, orders, lineitem, supplier, nation, region
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey
  AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey
  AND n_regionkey = r_regionkey AND r_name = 'ASIA'
  AND o_orderdate >= '1994-01-01' AND o_orderdate < date('1994-01-01', '+1 year')
GROUP BY n_name
ORDER BY revenue DESC"""),
        ("Q6", """
SELECT sum(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_shipdate >= '1994-01-01' AND l_shipdate < date('1994-01-01', '+1 year')
  AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"""),
        ("Q7", """
SELECT supp_nation, cust_nation, l_year, sum(volume) AS revenue
FROM (SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation,
             CAST(substr(l_shipdate, 1, 4) AS INTEGER) AS l_year,
             l_extendedprice * (1 - l_discount) AS volume
      FROM supplier, lineitem, orders, customer, nation n1, nation n2
      WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey
        AND s_nationkey = n1.n_nationkey AND c_nationkey = n2.n_nationkey
        AND ((n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY')
          OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE'))
        AND l_shipdate BETWEEN '1995-01-01' AND '1996-12-31') AS shipping
GROUP BY supp_nation, cust_nation, l_year
ORDER BY supp_nation, cust_nation, l_year"""),
        ("Q8", """
SELECT o_year, sum(CASE WHEN nation = 'BRAZIL' THEN volume ELSE 0 END) / sum(volume)
       AS mkt_share
FROM (SELECT CAST(substr(o_orderdate, 1, 4) AS INTEGER) AS o_year,
             l_extendedprice * (1 - l_discount) AS volume, n2.n_name AS nation
      FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region
      WHERE p_partkey = l_partkey AND s_suppkey = l_suppkey AND l_orderkey = o_orderkey
        AND o_custkey = c_custkey AND c_nationkey = n1.n_nationkey
        AND n1.n_regionkey = r_regionkey AND r_name = 'AMERICA'
        AND s_nationkey = n2.n_nationkey
        AND o_orderdate BETWEEN '1995-01-01' AND '1996-12-31'
        AND p_type = 'ECONOMY ANODIZED STEEL') AS all_nations
GROUP BY o_year
ORDER BY o_year"""),
        ("Q9", """
SELECT nation, o_year, sum(amount) AS sum_profit
FROM (SELECT n_name AS nation, CAST(substr(o_orderdate, 1, 4) AS INTEGER) AS o_year,
             l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity AS amount
      FROM part, supplier, lineitem, partsupp, orders, nation
      WHERE s_suppkey = l_suppkey AND ps_suppkey = l_suppkey AND ps_partkey = l_partkey
        AND p_partkey = l_partkey AND o_orderkey = l_orderkey
        AND s_nationkey = n_nationkey AND p_name LIKE '%green%') AS profit
GROUP BY nation, o_year
ORDER BY nation, o_year DESC"""),
        ("Q10", """
SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue,
       c_acctbal, n_name, c_address, c_phone, c_comment
FROM customer, orders, lineitem, nation
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey
  AND o_orderdate >= '1993-10-01' AND o_orderdate < date('1993-10-01', '+3 month')
  AND l_returnflag = 'R' AND c_nationkey = n_nationkey
GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
ORDER BY revenue DESC
LIMIT 20"""),
        ("Q11", """
SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value
FROM partsupp, supplier, nation
WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY'
GROUP BY ps_partkey
HAVING sum(ps_supplycost * ps_availqty) > (
  SELECT sum(ps_supplycost * ps_availqty) * %r
  FROM partsupp, supplier, nation
  WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY')
ORDER BY value DESC""" % (0.0001 / sf)),
        ("Q12", """
SELECT l_shipmode,
       sum(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH'
                THEN 1 ELSE 0 END) AS high_line_count,
       sum(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH'
                THEN 1 ELSE 0 END) AS low_line_count
FROM orders, lineitem
WHERE o_orderkey = l_orderkey AND l_shipmode IN ('MAIL', 'SHIP')
  AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
  AND l_receiptdate >= '1994-01-01' AND l_receiptdate < date('1994-01-01', '+1 year')
GROUP BY l_shipmode
ORDER BY l_shipmode"""),
        ("Q13", """
SELECT c_count, count(*) AS custdist
FROM (SELECT c_custkey, count(o_orderkey) AS c_count
      FROM customer LEFT OUTER JOIN orders
        ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%'
      GROUP BY c_custkey) AS c_orders
GROUP BY c_count
ORDER BY custdist DESC, c_count DESC"""),
        ("Q14", """
SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%'
                         THEN l_extendedprice * (1 - l_discount) ELSE 0 END)
       / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
FROM lineitem, part
WHERE l_partkey = p_partkey
  AND l_shipdate >= '1995-09-01' AND l_shipdate < date('1995-09-01', '+1 month')"""),
        ("Q15", """
WITH revenue0 (supplier_no, total_revenue) AS (
  SELECT l_suppkey, sum(l_extendedprice * (1 - l_discount))
  FROM lineitem
  WHERE l_shipdate >= '1996-01-01' AND l_shipdate < date('1996-01-01', '+3 month')
  GROUP BY l_suppkey)
SELECT s_suppkey, s_name, s_address, s_phone, total_revenue
FROM supplier, revenue0
WHERE s_suppkey = supplier_no
  AND total_revenue = (SELECT max(total_revenue) FROM revenue0)
ORDER BY s_suppkey"""),
        ("Q16", """
SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt
FROM partsupp, part
WHERE p_partkey = ps_partkey AND p_brand <> 'Brand#45'
  AND p_type NOT LIKE 'MEDIUM POLISHED%' AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9)
  AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier
                         WHERE s_comment LIKE '%Customer%Complaints%')
GROUP BY p_brand, p_type, p_size
ORDER BY supplier_cnt DESC, p_brand, p_type, p_size"""),
        ("Q17", """
SELECT sum(l_extendedprice) / 7.0 AS avg_yearly
FROM lineitem, part
WHERE p_partkey = l_partkey AND p_brand = 'Brand#23' AND p_container = 'MED BOX'
  AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem
                    WHERE l_partkey = p_partkey)"""),
        ("Q18", """
SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
FROM customer, orders, lineitem
WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey
                     HAVING sum(l_quantity) > 300)
  AND c_custkey = o_custkey AND o_orderkey = l_orderkey
GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
ORDER BY o_totalprice DESC, o_orderdate
LIMIT 100"""),
        ("Q19", """
SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM lineitem, part
WHERE (p_partkey = l_partkey AND p_brand = 'Brand#12'
       AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
       AND l_quantity >= 1 AND l_quantity <= 1 + 10 AND p_size BETWEEN 1 AND 5
       AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON')
   OR (p_partkey = l_partkey AND p_brand = 'Brand#23'
       AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
       AND l_quantity >= 10 AND l_quantity <= 10 + 10 AND p_size BETWEEN 1 AND 10
       AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON')
   OR (p_partkey = l_partkey AND p_brand = 'Brand#34'
       AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
       AND l_quantity >= 20 AND l_quantity <= 20 + 10 AND p_size BETWEEN 1 AND 15
       AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON')"""),
        ("Q20", """
SELECT s_name, s_address
FROM supplier, nation
WHERE s_suppkey IN (
    SELECT ps_suppkey FROM partsupp
    WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'forest%')
      AND ps_availqty > (
        SELECT 0.5 * sum(l_quantity) FROM lineitem
        WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey
          AND l_shipdate >= '1994-01-01' AND l_shipdate < date('1994-01-01', '+1 year')))
  AND s_nationkey = n_nationkey AND n_name = 'CANADA'
ORDER BY s_name"""),
        ("Q21", """
SELECT s_name, count(*) AS numwait
FROM supplier, lineitem l1, orders, nation
WHERE s_suppkey = l1.l_suppkey AND o_orderkey = l1.l_orderkey AND o_orderstatus = 'F'
  AND l1.l_receiptdate > l1.l_commitdate
  AND EXISTS (SELECT * FROM lineitem l2
              WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)
  AND NOT EXISTS (SELECT * FROM lineitem l3
                  WHERE l3.l_orderkey = l1.l_orderkey AND l3.l_suppkey <> l1.l_suppkey
                    AND l3.l_receiptdate > l3.l_commitdate)
  AND s_nationkey = n_nationkey AND n_name = 'SAUDI ARABIA'
GROUP BY s_name
ORDER BY numwait DESC, s_name
LIMIT 100"""),
        ("Q22", """
SELECT cntrycode, count(*) AS numcust, sum(c_acctbal) AS totacctbal
FROM (SELECT substr(c_phone, 1, 2) AS cntrycode, c_acctbal
      FROM customer
      WHERE substr(c_phone, 1, 2) IN ('13', '31', '23', '29', '30', '18', '17')
        AND c_acctbal > (SELECT avg(c_acctbal) FROM customer
                         WHERE c_acctbal > 0.00
                           AND substr(c_phone, 1, 2)
                               IN ('13', '31', '23', '29', '30', '18', '17'))
        AND NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)) AS custsale
GROUP BY cntrycode
ORDER BY cntrycode"""),
    ]


def duckdb_sql(sql):
    """A query of queries() in DuckDB's dialect, where dates are DATEs:
    date('D', '+N unit') -> (DATE 'D' + INTERVAL N unit) and
    CAST(substr(x, 1, 4) AS INTEGER) -> extract(year FROM x); plain date
    literals compare with DATE columns as they are."""
    def interval(m):
        n = int(m.group(2))
        return "(DATE '%s' %s INTERVAL %d %s)" % (m.group(1), "-" if n < 0 else "+", abs(n),
                                                  m.group(3).upper())
    sql = re.sub(r"date\('(\d{4}-\d\d-\d\d)', '([+-]\d+) (day|month|year)'\)", interval, sql)
    return re.sub(r"CAST\(substr\(([\w.]+), 1, 4\) AS INTEGER\)", r"extract(year FROM \1)", sql)


def plan_word(conn, sql):
    """par_explain's verdict in one word: "native" when the whole query
    runs in SQLite, else "kernels"."""
    return "native" if conn.execute("SELECT par_explain(?)", (sql,)).fetchone()[0] \
        .startswith("native") else "kernels"


# ---- DuckDB --------------------------------------------------------------

def duckdb_columns(conn, table):
    """DuckDB's columns for a table: dates as DATE, by their names."""
    out = []
    for _, name, decl, *_ in conn.execute("PRAGMA table_info(%s)" % table):
        t = decl.upper()
        out.append((name, "DATE" if name.endswith("date") else
                    "BIGINT" if "INT" in t else "DOUBLE" if "REAL" in t else "VARCHAR"))
    return out


def export_csv(conn, sf, table):
    """bench/data/tpch_sf<SF>_<table>.csv, written once (REALs as Python's
    shortest exact repr, so DuckDB reads the same doubles)."""
    path = os.path.join(DATA, "tpch_sf%s_%s.csv" % (sf_name(sf), table))
    if not os.path.exists(path):
        write_csv(conn, table, path)
    return path


DATE_JSON = re.compile(r"^(\d{4}-\d\d-\d\d)T00:00:00(\.000)?Z?$")


def duckdb_rows(rows):
    """DuckDB's rows with its DATEs (JSON timestamps) back as 'YYYY-MM-DD'."""
    def value(v):
        if isinstance(v, str):
            m = DATE_JSON.match(v)
            if m:
                return m.group(1)
        return v
    return [tuple(value(v) for v in r) for r in rows]


def duckdb_agrees(reference, rows):
    """DuckDB's rows equal SQLite's, REALs within a relative 1e-9: in order,
    or else as a multiset (rows that tie under ORDER BY may come in another
    order)."""
    if same(reference, rows, exact=False):
        return True

    def key(r):
        return tuple((v is None, type(v) is str, v if v is not None else 0) for v in r)
    try:
        return same(sorted(reference, key=key), sorted(rows, key=key), exact=False)
    except TypeError:
        return False


# ---- one query -----------------------------------------------------------

class OverLimit(Exception):
    pass


def run_native(conn, sql, limit):
    """(seconds, rows) of sql natively, or OverLimit after limit seconds
    (a progress handler stops it)."""
    deadline = time.perf_counter() + limit
    conn.set_progress_handler(lambda: time.perf_counter() > deadline, 100000)
    try:
        t, rows, _ = timed(conn, sql)
        return t, rows
    except sqlite3.OperationalError as e:
        if time.perf_counter() > deadline and "interrupt" in str(e):
            raise OverLimit()
        raise
    finally:
        conn.set_progress_handler(None, 0)


def run_view(conn, limit):
    """(seconds, rows) of the view tpch_v, or OverLimit after limit seconds
    (sqlite3_interrupt from a timer: it also stops the kernels)."""
    timer = threading.Timer(limit, conn.interrupt)
    timer.start()
    t0 = time.perf_counter()
    try:
        t, rows, _ = timed(conn, "SELECT * FROM tpch_v")
        return t, rows
    except sqlite3.OperationalError as e:
        if time.perf_counter() - t0 >= limit and "interrupt" in str(e):
            raise OverLimit()
        raise
    finally:
        timer.cancel()


def run_query(conn, duck, qid, sql, thread_counts, reps, limit):
    """Every system REPS times; returns {system key: [seconds] or "limit"
    or an error text} and {system key: [answers]}.  Keys: ("native",),
    ("cold", n), ("warm", n), ("duckdb", n)."""
    times, answers = {}, {}

    def attempt(key, fn):
        if not isinstance(times.get(key, []), list):
            return          # over the limit or failed before: not again
        try:
            t, rows = fn()
        except OverLimit:
            times[key] = "limit"
            return
        except (sqlite3.Error, RuntimeError) as e:
            times[key] = "error: %s" % e
            return
        times.setdefault(key, []).append(t)
        answers.setdefault(key, []).append(rows)

    conn.execute("SELECT par_view('tpch_v', ?)", (sql,))
    for _ in range(reps):
        attempt(("native",), lambda: run_native(conn, sql, limit))
        for n in thread_counts:
            conn.execute("SELECT par_config('threads', ?)", (n,))
            conn.execute("SELECT par_cache_clear()")
            attempt(("cold", n), lambda: run_view(conn, limit))
            attempt(("warm", n), lambda: run_view(conn, limit))
            if duck:
                duck.threads(n)
                attempt(("duckdb", n),
                        lambda: (lambda a: (a[0], duckdb_rows(a[1])))(duck.query(duckdb_sql(sql))))
    conn.execute("DROP TABLE temp.tpch_v")
    return times, answers


def check(qid, times, answers):
    """(verdict cell, passed?, failed?, lines to print) for one query."""
    native = answers.get(("native",), [None])[0]
    errors = ["%s %s" % (" ".join(map(str, k)), v) for k, v in times.items()
              if isinstance(v, str) and v.startswith("error")]
    wrong, details = [], []
    for key, runs in answers.items():
        if key == ("native",) or native is None:
            continue
        exact = key[0] != "duckdb"
        for rows in runs:
            if not (same(native, rows) if exact else duckdb_agrees(native, rows)):
                name = "%s at %d" % key
                wrong.append(name)
                details.append("%s: %s differs from native:" % (qid, name))
                details += ["   native %r, %s %r" % (x, key[0], y)
                            for x, y in differing_rows(native, rows, exact)]
                break
    if errors or wrong:
        return "NO: " + ", ".join(errors + wrong), False, True, details + errors
    if native is None:
        return "unchecked (native > limit)", False, False, details
    if len(native) == 0:
        return "yes (empty)", True, False, details
    return "yes", True, False, details


# ---- the table -----------------------------------------------------------

def cell(v):
    if v is None:
        return "-"
    if v == "limit":
        return "> limit"
    if isinstance(v, str):
        return "error"
    return "%.3f s" % statistics.median(v)


def speedup(native, t, limit):
    """native / t, "> X" where native did not finish."""
    if not isinstance(t, list):
        return "-"
    t = statistics.median(t)
    if native == "limit":
        return "> %.3gx" % (limit / t)
    if not isinstance(native, list) or not t:
        return "-"
    return "%.3gx" % (statistics.median(native) / t)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    sf = float(os.environ.get("SF", "1"))
    reps = int(os.environ.get("TPCH_REPS", "3"))
    limit = float(os.environ.get("TPCH_LIMIT", "90"))
    if reps < 1 or limit <= 0:
        raise ValueError("TPCH_REPS must be 1 or more and TPCH_LIMIT above 0")
    path = db_path(sf)
    generate(sf, path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    for name in ("par_view", "par_cache_clear", "par_explain"):
        if not has_sqlite_object(conn, "function", name):
            raise RuntimeError("%s: no %s() in this build" % (EXT, name))
    text = os.environ.get("TPCH_THREADS", "")
    thread_counts = [int(x) for x in text.split(",")] if text else \
        [conn.execute("SELECT par_config('threads')").fetchone()[0]]
    if any(n < 1 for n in thread_counts):
        raise ValueError("TPCH_THREADS: thread counts must be 1 or more, not %r" % text)
    all_queries = queries(sf)
    only = [q for q in os.environ.get("TPCH_QUERIES", "").split(",") if q]
    unknown = set(only) - {q for q, _ in all_queries}
    if unknown:
        raise ValueError("TPCH_QUERIES: no query %s" % ", ".join(sorted(unknown)))

    duck = None
    duck_note = "DuckDB: skipped (run make bench-duckdb)."
    if DuckDB.installed():
        os.makedirs(DATA, exist_ok=True)
        t0 = time.time()
        paths = [(table, export_csv(conn, sf, table)) for table, _ in SCHEMA]
        export_s = time.time() - t0
        duck = DuckDB()
        load_s = sum(duck.load(table, p, duckdb_columns(conn, table)) for table, p in paths)
        version = duck.query("SELECT version()")[1][0][0]
        duck_note = ("DuckDB %s (@duckdb/node-api): the same rows in its own in-memory tables "
                     "(dates as DATE), loaded from a CSV export in %.1f s (export %.1f s; "
                     "neither timed), `SET threads` to the same thread count; the queries "
                     "translated by `duckdb_sql()`." % (version, load_s, export_s))

    heads = ["query", "plan", "native"]
    for n in thread_counts:
        heads += ["cold %d" % n, "warm %d" % n, "cold vs native %d" % n,
                  "warm vs native %d" % n]
        if duck:
            heads += ["DuckDB %d" % n, "DuckDB vs native %d" % n]
    heads.append("same answer")
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    print("\n".join(lines), flush=True)
    npass = nfail = 0
    details, speedups = [], {n: [] for n in thread_counts}
    for qid, sql in all_queries:
        if only and qid not in only:
            continue
        word = plan_word(conn, sql)
        times, answers = run_query(conn, duck, qid, sql, thread_counts, reps, limit)
        verdict, ok, bad, d = check(qid, times, answers)
        npass += ok
        nfail += bad
        native = times.get(("native",))
        row = [qid, word, cell(native)]
        for n in thread_counts:
            cold, warm = times.get(("cold", n)), times.get(("warm", n))
            row += [cell(cold), cell(warm), speedup(native, cold, limit),
                    speedup(native, warm, limit)]
            if duck:
                row += [cell(times.get(("duckdb", n))),
                        speedup(native, times.get(("duckdb", n)), limit)]
            if isinstance(native, list) and isinstance(cold, list):
                speedups[n].append(statistics.median(native) / statistics.median(cold))
        row.append(verdict)
        lines.append("| " + " | ".join(row) + " |")
        print(lines[-1], flush=True)
        for line in d:
            print(line, flush=True)
        details += d
    if duck:
        duck.close()

    means = ["- Geometric mean of the cold speedups at %d thread%s over the %d queries "
             "where native and the view both finished: %s." % (
                 n, "" if n == 1 else "s", len(speedups[n]),
                 "-" if not speedups[n] else "%.2fx" % geomean(speedups[n]))
             for n in thread_counts]
    head = [
        "TPC-H (`make bench-tpch`, bench/tpch.py): scale factor %s, data of "
        "bench/tpch/dbgen.c (docs/tpch.md); %d cores; views at %s thread%s; median of %d "
        "run%s; limit %g s a query; SQLite %s; %s." % (
            sf_name(sf), os.cpu_count(), ",".join(map(str, thread_counts)),
            "" if thread_counts == [1] else "s", reps, "" if reps == 1 else "s", limit,
            sqlite3.sqlite_version, datetime.date.today().isoformat()),
        "",
        "- native: SQLite alone, stopped after the limit (\"> limit\"). cold: the query's "
        "parallel view (`par_view`) after `par_cache_clear()`; warm: the same again right "
        "after. plan: `par_explain`'s verdict, \"kernels\" or \"native\" (the view runs the "
        "query in SQLite).",
        "- " + duck_note,
        "- Same answer: the views' rows equal native SQLite's bit for bit and in order, "
        "DuckDB's within a relative 1e-9 (in order, or as a multiset where ORDER BY leaves "
        "ties open); \"unchecked\" where native SQLite did not finish.",
        "- Ratios: native time / system time (above 1: faster than native).",
    ] + means
    return finish(head, lines, "TPCH_RESULTS", "tpch.md", "bench-tpch", npass, nfail)


if __name__ == "__main__":
    sys.exit(main())
