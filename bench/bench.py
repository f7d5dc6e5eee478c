#!/usr/bin/python3
"""The benchmark of DESIGN.md section 5: each query natively in SQLite,
through the extension (parallel view; par_histogram for Q8) and in DuckDB,
one after another in one run.

    make bench                         # 10M rows, median of 3 runs, all cores
    make bench-duckdb                  # once: installs DuckDB (npm) for bench/duckdb
    BENCH_ROWS=100000 make bench       # small and quick
    BENCH_THREADS=1,2 make bench       # the parallel systems at 1 and at 2 threads
    BENCH_QUERIES=Q1,Q2 make bench     # only these queries

Generates (once, deterministically) bench/data/bench_<rows>.db in WAL mode
with fact (BENCH_ROWS rows), dim (BENCH_ROWS/10 rows) and dim2 (dim's keys
and groups in a column with no index, for Q10); a file made before dim2
existed gets dim2 added, fact and dim untouched.  For each query,
each repetition runs one after another: native SQLite; the extraction
queries of the view's plan (par_explain) alone, natively; then at each
thread count the extension cold (after par_cache_clear(), when it exists),
warm (again right after, only when a cache exists), par_profile (for the
extraction time), cold with serial extraction (parallel_extract 0) and its
par_profile (for the share of the kernels and the delivery of the rows),
and DuckDB.  Every measurement reads every result row:
Q1-Q7, Q9 and Q10 through the same aggregate over the result columns for every
system, Q8 as its (bin, count) rows.  Times are medians of BENCH_REPS runs.

The floor of each query is the same read over a TEMP TABLE that holds the
query's result (filled once per query, before the repetitions, from the
view when there is one, else natively; its columns have no declared type,
so every value keeps its type): no view can hand rows to SQLite faster than
SQLite steps them out of such a table.  Its answer is checked like the
others'.

DuckDB, when installed in bench/duckdb/node_modules, runs in a node child
process (bench/duckdb/server.mjs) holding the same rows, exported once from
the SQLite file to CSV under bench/data/, in its own in-memory tables.

Every system's answer is checked against native SQLite: the views' bit for
bit, DuckDB's REAL values within a relative 1e-9 (it sums in its own order).  Prints the table and writes it to bench/results.md
(unless BENCH_RESULTS=0); ends with "bench: N passed, N failed" and exits
non-zero if any answer differed.
"""
import csv
import datetime
import itertools
import json
import math
import os
import shutil
import sqlite3
import statistics
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXT = os.environ.get("BENCH_EXT", os.path.join(ROOT, "parallel.so"))
ROWS = int(os.environ.get("BENCH_ROWS", "10000000"))
REPS = int(os.environ.get("BENCH_REPS", "3"))
DATA = os.path.join(ROOT, "bench", "data")
DB = os.path.join(DATA, "bench_%d.db" % ROWS)
DUCKDB_DIR = os.path.join(ROOT, "bench", "duckdb")

QUERIES = [
    ("Q1", "SELECT k_small, sum(v_int), count(*), avg(v_real), min(v_real), max(v_real) "
           "FROM fact GROUP BY k_small"),
    ("Q2", "SELECT k_large, sum(v_int) FROM fact GROUP BY k_large"),
    ("Q3", "SELECT k_text, sum(v_int) FROM fact GROUP BY k_text"),
    ("Q4", "SELECT id, v_real FROM fact ORDER BY v_real LIMIT 5"),
    ("Q5", "SELECT id, v_real FROM fact ORDER BY v_real"),
    ("Q6", "SELECT d.grp, count(*), sum(f.v_int) FROM fact f JOIN dim d ON d.id = f.k_large "
           "GROUP BY d.grp"),
    ("Q7", "SELECT id, sum(v_int) OVER (PARTITION BY k_small ORDER BY ts ROWS UNBOUNDED "
           "PRECEDING) FROM fact"),
    ("Q8", None),   # the histogram, below
    ("Q9", "SELECT sum(v_int), sum(v_real) FROM fact"),
    # Q6 on a key with no index.  SQLite 3.40.1's EXPLAIN QUERY PLAN:
    #   SCAN f
    #   SEARCH d USING AUTOMATIC COVERING INDEX (k=?)
    #   USE TEMP B-TREE FOR GROUP BY
    # (it builds an index on dim2.k for this one statement, then looks every
    # fact row up in it).
    ("Q10", "SELECT d.grp, count(*), sum(f.v_int) FROM fact f JOIN dim2 d ON d.k = f.k_large "
            "GROUP BY d.grp"),
]

# Q8: 100 equal-width bins over [lo, hi] = [min, max] of v_real, as
# par_histogram defines them: edge b = min(lo + b*w, hi) with w = (hi - lo) /
# 100, bin b holds edge b <= v < edge b+1, the last bin also v = hi.  The
# GROUP BY equivalents guess the bin as (v - lo) / w truncated and move it by
# one where the guess falls on the wrong side of an edge computed that way.
HISTOGRAM_SQL = "SELECT * FROM par_histogram('fact', 'v_real', 100)"
HISTOGRAM_READ = "SELECT v_real FROM fact"
HISTOGRAM_RANGE = ("(SELECT min(v_real) AS lo, max(v_real) AS hi, "
                   "(max(v_real) - min(v_real)) / 100 AS w FROM fact)")
HISTOGRAM_SQLITE = (
    "SELECT CASE WHEN g < 99 AND min(lo + (g + 1) * w, hi) <= v_real THEN g + 1 "
    "            WHEN g > 0 AND min(lo + g * w, hi) > v_real THEN g - 1 "
    "            ELSE g END AS bin, count(*) AS count "
    "FROM (SELECT v_real, lo, hi, w, min(99, CAST((v_real - lo) / w AS INT)) AS g "
    "      FROM fact, %s) GROUP BY bin" % HISTOGRAM_RANGE)
# DuckDB's CAST to an integer rounds and its least() skips NULLs: truncate,
# and cap with CASE, as SQLite's CAST and two-argument min() do.
HISTOGRAM_DUCKDB = (
    "SELECT CASE WHEN g < 99 AND least(lo + (g + 1) * w, hi) <= v_real THEN g + 1 "
    "            WHEN g > 0 AND least(lo + g * w, hi) > v_real THEN g - 1 "
    "            ELSE g END AS bin, count(*) AS count "
    "FROM (SELECT v_real, lo, hi, w, CASE WHEN t > 99 THEN 99 ELSE t END AS g "
    "      FROM (SELECT v_real, lo, hi, w, CAST(trunc((v_real - lo) / w) AS BIGINT) AS t "
    "            FROM fact, %s)) GROUP BY bin" % HISTOGRAM_RANGE)


# ---- the data ------------------------------------------------------------

def add_dim2(c):
    """dim2 := dim's rows as (k, grp, label) with k = dim.id, in one
    transaction of c (isolation_level None).  No index on k; the rowid order
    is k ordered by a 32-bit integer hash (xorshift-multiply, one to one on
    32-bit values, so the order is total and deterministic; a multiplicative
    hash alone would order k in an arithmetic progression)."""
    c.execute("BEGIN")
    c.execute("CREATE TABLE dim2(k INT, grp INT, label TEXT)")
    c.execute("""
        WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?1),
        a(i, x) AS (SELECT i, ((i | (i >> 16)) - (i & (i >> 16))) * 73244475 & 4294967295
                    FROM s),
        b(i, x) AS (SELECT i, ((x | (x >> 16)) - (x & (x >> 16))) * 73244475 & 4294967295
                    FROM a),
        h(i, x) AS (SELECT i, (x | (x >> 16)) - (x & (x >> 16)) FROM b)
        INSERT INTO dim2(rowid, k, grp, label)
        SELECT row_number() OVER (ORDER BY x), i, i % 1000, 'L' || (i % 5000) FROM h""",
              (max(1, ROWS // 10),))
    c.execute("COMMIT")


def generate():
    if os.path.exists(DB):
        c = sqlite3.connect(DB, isolation_level=None)
        if c.execute("SELECT 1 FROM sqlite_schema WHERE name = 'dim2'").fetchone() is None:
            t0 = time.time()
            add_dim2(c)
            print("added dim2 to %s in %.1f s" % (DB, time.time() - t0), flush=True)
        c.close()
        return
    os.makedirs(DATA, exist_ok=True)
    tmp = DB + ".tmp"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(tmp + suffix):
            os.remove(tmp + suffix)
    t0 = time.time()
    c = sqlite3.connect(tmp, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA synchronous=OFF")
    c.execute("BEGIN")
    c.execute("CREATE TABLE fact(id INTEGER PRIMARY KEY, k_small INT, k_large INT, "
              "k_text TEXT, v_int INT, v_real REAL, ts INT)")
    c.execute("CREATE TABLE dim(id INTEGER PRIMARY KEY, grp INT, label TEXT)")
    # Multiplicative hashing of the row number: deterministic, well spread.
    c.execute("""
        WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?1),
        h(i, a, b, d) AS (SELECT i, (i * 2654435761) % 4294967291,
                                    (i * 40503 + 12345) % 4294967279,
                                    (i * 97 + 7) % 1000003 FROM s)
        INSERT INTO fact SELECT i, a % 100, (a / 100) % ?2, 'name' || (b % 10000),
               (b % 2000001) - 1000000, (a % 1000000) / 1000.0 + (i % 7) * 0.0001,
               d * 1000 + i % 1000 FROM h""", (ROWS, max(1, ROWS // 10)))
    c.execute("""
        WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?1)
        INSERT INTO dim SELECT i, i % 1000, 'L' || (i % 5000) FROM s""", (max(1, ROWS // 10),))
    c.execute("COMMIT")
    add_dim2(c)
    c.close()
    os.rename(tmp, DB)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(tmp + suffix):
            os.remove(tmp + suffix)
    print("generated %s in %.1f s" % (DB, time.time() - t0), flush=True)


def duckdb_type(declared):
    """DuckDB's type for a column of SQLite's declared type (by affinity)."""
    t = declared.upper()
    if "INT" in t:
        return "BIGINT"
    if "CHAR" in t or "CLOB" in t or "TEXT" in t:
        return "VARCHAR"
    if "REAL" in t or "FLOA" in t or "DOUB" in t:
        return "DOUBLE"
    raise ValueError("no DuckDB type for declared type %r" % declared)


def export_csv(conn, table):
    """bench/data/bench_<rows>_<table>.csv (written once) and its DuckDB columns.
    Python writes each REAL as its shortest exact repr, so DuckDB reads back
    the very same doubles."""
    path = os.path.join(DATA, "bench_%d_%s.csv" % (ROWS, table))
    columns = [(name, duckdb_type(decl))
               for _, name, decl, *_ in conn.execute("PRAGMA table_info(%s)" % table)]
    if not os.path.exists(path):
        t0 = time.time()
        write_csv(conn, table, path)
        print("exported %s in %.1f s" % (path, time.time() - t0), flush=True)
    return path, columns


# ---- the systems ---------------------------------------------------------

def write_csv(conn, table, path):
    """path := every row of table as CSV (written aside, then renamed)."""
    with open(path + ".tmp", "w", newline="") as f:
        out = csv.writer(f)
        cur = conn.execute("SELECT * FROM %s" % table)
        while True:
            rows = cur.fetchmany(10000)
            if not rows:
                break
            out.writerows(rows)
    os.rename(path + ".tmp", path)


def timed(conn, sql):
    """Seconds to run sql and fetch every row, the rows, the column names."""
    t0 = time.perf_counter()
    cur = conn.execute(sql)
    rows = cur.fetchall()
    return time.perf_counter() - t0, rows, [d[0] for d in cur.description]


def has_sqlite_object(conn, kind, name):
    """Whether the extension defines a function (kind "function") or a
    table-valued function (kind "module") of that name on this build."""
    return conn.execute("SELECT 1 FROM pragma_%s_list WHERE name = ?" % kind,
                        (name,)).fetchone() is not None


def sqlite_wrap(conn, sql):
    """SELECT count(*), total(...) over every result column of sql: reads
    every row, and counts text by its length."""
    ncol = len(conn.execute("SELECT * FROM (%s) LIMIT 0" % sql).description)
    names = ", ".join("c%d" % i for i in range(ncol))
    agg = ", ".join(["count(*)"] + [
        "total(CASE typeof(c%d) WHEN 'text' THEN length(c%d) ELSE c%d END)" % (i, i, i)
        for i in range(ncol)])
    return "WITH s(%s) AS (%s) SELECT %s FROM s" % (names, sql, agg)


def fill_floor(conn, sql):
    """temp.bench_floor := the rows of sql, in its order, under its column
    names, in columns without a declared type (no affinity: every value is
    stored as sql returns it)."""
    cur = conn.execute("SELECT * FROM (%s) LIMIT 0" % sql)
    names, seen = [], set()
    for i, d in enumerate(cur.description):
        name = d[0] if d[0] not in seen else "%s:%d" % (d[0], i)
        seen.add(name)
        names.append('"%s"' % name.replace('"', '""'))
    conn.execute("DROP TABLE IF EXISTS temp.bench_floor")
    conn.execute("CREATE TEMP TABLE bench_floor(%s)" % ", ".join(names))
    conn.execute("INSERT INTO temp.bench_floor SELECT * FROM (%s)" % sql)
    conn.commit()


class DuckDB:
    """The node child process of bench/duckdb/server.mjs."""

    @staticmethod
    def installed():
        return (shutil.which("node") is not None and os.path.exists(
            os.path.join(DUCKDB_DIR, "node_modules", "@duckdb", "node-api", "package.json")))

    def __init__(self):
        self.proc = subprocess.Popen(["node", os.path.join(DUCKDB_DIR, "server.mjs")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, **request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("DuckDB server exited (status %s)" % self.proc.wait())
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError("DuckDB: %s\n  in %r" % (answer["error"], request))
        return answer

    def load(self, table, csv_path, columns):
        return self.ask(op="load", table=table, csv=csv_path, columns=columns)["ms"] / 1000

    def threads(self, n):
        self.ask(op="threads", n=n)

    def query(self, sql):
        answer = self.ask(op="query", sql=sql)
        return answer["ms"] / 1000, [tuple(r) for r in answer["rows"]]

    def wrap(self, sql):
        """The same aggregate as sqlite_wrap in DuckDB's SQL: its columns have
        one type each, and kahan_sum is at least as exact as SQLite's total."""
        types = self.ask(op="describe", sql=sql)["types"]
        names = ", ".join("c%d" % i for i in range(len(types)))
        agg = ", ".join(["count(*)"] + [
            "coalesce(kahan_sum(%s), 0.0)" % (
                "length(c%d)" % i if t == "VARCHAR" else "CAST(c%d AS DOUBLE)" % i)
            for i, t in enumerate(types)])
        return "WITH s(%s) AS (%s) SELECT %s FROM s" % (names, sql, agg)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


# ---- answers -------------------------------------------------------------

def bins(rows, columns=None):
    """Q8's answer: sorted (bin, count) pairs of the non-empty bins, from the
    columns of those names when the column names are known."""
    if columns:
        b, n = columns.index("bin"), columns.index("count")
        rows = [(r[b], r[n]) for r in rows]
    return sorted(((b, n) for b, n in rows if n),
                  key=lambda r: (r[0] is not None, r[0] or 0))


def same(a, b, exact=True):
    """Do row lists a and b agree?  REAL values bit for bit when exact, else
    within a relative 1e-9."""
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        if len(ra) != len(rb):
            return False
        for x, y in zip(ra, rb):
            if isinstance(x, float) or isinstance(y, float):
                if exact and (not isinstance(x, float) or not isinstance(y, float)
                              or struct.pack("<d", x) != struct.pack("<d", y)):
                    return False
                if not exact and (x is None or y is None
                                  or not math.isclose(x, y, rel_tol=1e-9)):
                    return False
            elif x != y:
                return False
    return True


def differing_rows(a, b, exact, most=5):
    """Up to `most` pairs of rows where a and b differ (None past an end)."""
    pairs = [(x, y) for x, y in itertools.zip_longest(a, b)
             if x is None or y is None or not same([x], [y], exact)]
    return pairs[:most]


# ---- one query -----------------------------------------------------------

class Plan:
    """What to run for one query on each system, and how to read answers."""

    def __init__(self, conn, duck, qid, sql, has_histogram):
        self.qid = qid
        self.profile_sql = None      # SELECT for par_profile (views only)
        self.read_sqls = []          # the needed columns alone, wrapped
        self.note = None             # why there is no parallel side
        self.floor = None            # the read over temp.bench_floor
        if sql is None:              # Q8
            self.native = HISTOGRAM_SQLITE
            self.duckdb = HISTOGRAM_DUCKDB
            if has_histogram:
                self.parallel = HISTOGRAM_SQL
                self.read_sqls = [sqlite_wrap(conn, HISTOGRAM_READ)]
                # Its rows, read as the view's are: the 100 rows alone.
                self.floor = "SELECT * FROM temp.bench_floor"
                fill_floor(conn, HISTOGRAM_SQL)
            else:
                self.parallel = None
                self.note = "par_histogram does not exist in this build"
            return
        self.native = sqlite_wrap(conn, sql)
        self.duckdb = duck.wrap(sql) if duck else None
        try:
            explain = conn.execute("SELECT par_explain(?, 'verbose')", (sql,)).fetchone()[0]
        except sqlite3.OperationalError:
            # A build before par_explain(sql, 'verbose') (BENCH_EXT): its one
            # form has the lines "extract: SELECT ...".
            explain = conn.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
        if explain.startswith("native:"):
            self.parallel = None
            self.note = explain.splitlines()[0]
            fill_floor(conn, sql)
            self.floor = sqlite_wrap(conn, "SELECT * FROM temp.bench_floor")
            return
        conn.execute("DROP TABLE IF EXISTS temp.bench_v")
        conn.execute("CREATE VIRTUAL TABLE temp.bench_v USING parallel('%s')"
                     % sql.replace("'", "''"))
        self.parallel = sqlite_wrap(conn, "SELECT * FROM bench_v")
        fill_floor(conn, "SELECT * FROM bench_v")
        self.floor = sqlite_wrap(conn, "SELECT * FROM temp.bench_floor")
        self.profile_sql = sql
        # par_explain's verbose line "extract SQL: SELECT ...", one per source.
        self.read_sqls = [sqlite_wrap(conn, line[line.index(": SELECT ") + 2:])
                          for line in explain.splitlines()
                          if line.startswith("extract") and ": SELECT " in line]

    def answer(self, rows, columns=None):
        return bins(rows, columns) if self.qid == "Q8" else rows


def run_query(conn, duck, plan, thread_counts, has_cache):
    """Runs every system of the plan REPS times, one after another in each
    repetition.  Returns the median seconds and every repetition's answer,
    keyed by (system, thread count); the thread count is None for what runs
    natively in SQLite ("native", "read")."""
    times, answers = {}, {}

    def record(key, t, rows=None, columns=None):
        times.setdefault(key, []).append(t)
        if rows is not None:
            answers.setdefault(key, []).append(plan.answer(rows, columns))

    for _ in range(REPS):
        record(("native", None), *timed(conn, plan.native))
        if plan.floor:
            record(("floor", None), *timed(conn, plan.floor))
        if plan.read_sqls:
            record(("read", None), sum(timed(conn, s)[0] for s in plan.read_sqls))
        for n in thread_counts:
            if plan.parallel:
                conn.execute("SELECT par_config('threads', ?)", (n,))
                if has_cache:
                    conn.execute("SELECT par_cache_clear()")
                record(("cold", n), *timed(conn, plan.parallel))
                if has_cache:
                    record(("warm", n), *timed(conn, plan.parallel))
                if plan.profile_sql:
                    if has_cache:
                        conn.execute("SELECT par_cache_clear()")
                    profile = json.loads(conn.execute(
                        "SELECT par_profile(?)", (plan.profile_sql,)).fetchone()[0])
                    record(("extract", n), profile["extract_ms"] / 1000)
                if plan.profile_sql and has_cache:
                    # Cold again, every row read serially on this connection;
                    # the share of the kernels and the delivery of the rows
                    # (par_profile's groupby_ms + final_ms) in that time.
                    conn.execute("SELECT par_config('parallel_extract', 0)")
                    try:
                        conn.execute("SELECT par_cache_clear()")
                        record(("serial", n), *timed(conn, plan.parallel))
                        conn.execute("SELECT par_cache_clear()")
                        profile = json.loads(conn.execute(
                            "SELECT par_profile(?)", (plan.profile_sql,)).fetchone()[0])
                        work = profile["groupby_ms"] + profile["final_ms"]
                        record(("share", n), work / (profile["extract_ms"] + work))
                    finally:
                        conn.execute("SELECT par_config('parallel_extract', 1)")
            if duck:
                duck.threads(n)
                record(("duckdb", n), *duck.query(plan.duckdb))
    return {k: statistics.median(v) for k, v in times.items()}, answers


# ---- the table -----------------------------------------------------------

HEADER = ("| query | threads | native | floor: temp table | parallel cold | parallel warm "
          "| cold, serial extraction | kernels share (serial) | read columns: "
          "extract_ms | read columns: stepped natively | DuckDB | cold vs native "
          "| warm vs native | serial vs native | DuckDB vs native | cold vs DuckDB "
          "| warm vs DuckDB | same answer |")


def fmt(t):
    return "-" if t is None else "%.3f s" % t


def ratio(reference, t):
    """How many times faster than the reference (below 1: slower)."""
    return "-" if reference is None or not t else "%.3gx" % (reference / t)


def table_rows(plan, thread_counts, times, answers, has_cache, duck):
    """The table's rows for one query (one per thread count), the number of
    rows whose answers all agreed and of rows where one did not, and the
    mismatches to print."""
    native = times[("native", None)]
    reference = answers[("native", None)][0]
    lines, npass, nfail, details = [], 0, 0, []
    for n in thread_counts:
        cold, warm = times.get(("cold", n)), times.get(("warm", n))
        duckdb = times.get(("duckdb", n))
        if plan.parallel is None:
            cold_cell = warm_cell = "not accelerated yet"
        else:
            cold_cell = fmt(cold)
            warm_cell = fmt(warm) if has_cache else "no cache yet"
        serial, share = times.get(("serial", n)), times.get(("share", n))
        checked = [s for s in ("cold", "warm", "serial", "duckdb") if (s, n) in answers]
        if ("floor", None) in answers:
            checked.append("floor")
        wrong = {s: a for s in checked for a in answers[(s, None if s == "floor" else n)]
                 if not same(reference, a, s != "duckdb")}
        if wrong:
            verdict = "NO: " + ", ".join(wrong)
            nfail += 1
            for s, a in wrong.items():
                details.append("%s: %s at %d threads differs from native:" % (plan.qid, s, n))
                details += ["   native %r, %s %r" % (x, s, y) for x, y in differing_rows(reference, a, s != "duckdb")]
        elif checked:
            verdict = "yes"
            npass += 1
        else:
            verdict = "native only"
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
                     "| %s | %s | %s |" % (
            plan.qid, n, fmt(native), fmt(times.get(("floor", None))), cold_cell, warm_cell,
            fmt(serial),
            "-" if share is None else "%.1f%%" % (100 * share), fmt(times.get(("extract", n))),
            fmt(times.get(("read", None))), fmt(duckdb) if duck else "skipped",
            ratio(native, cold), ratio(native, warm), ratio(native, serial),
            ratio(native, duckdb), ratio(duckdb, cold), ratio(duckdb, warm), verdict))
    return lines, npass, nfail, details


def parse_threads(default):
    text = os.environ.get("BENCH_THREADS", "")
    if not text:
        return [default]
    counts = [int(x) for x in text.split(",")]
    if any(n < 1 for n in counts):
        raise ValueError("BENCH_THREADS: thread counts must be 1 or more, not %r" % text)
    return counts


def main():
    generate()
    conn = sqlite3.connect(DB)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    thread_counts = parse_threads(conn.execute("SELECT par_config('threads')").fetchone()[0])
    has_cache = has_sqlite_object(conn, "function", "par_cache_clear")
    has_histogram = has_sqlite_object(conn, "module", "par_histogram")

    duck = None
    duck_note = "DuckDB: skipped (run make bench-duckdb)."
    if DuckDB.installed():
        duck = DuckDB()
        load_s = sum(duck.load(table, *export_csv(conn, table)) for table in ("fact", "dim", "dim2"))
        version = duck.query("SELECT version()")[1][0][0]
        duck_note = ("DuckDB %s (@duckdb/node-api): the same rows in its own in-memory "
                     "tables, loaded from a CSV export in %.1f s (not timed), `SET threads` "
                     "to the same thread count." % (version, load_s))

    lines = [HEADER, "|" + "---|" * HEADER.count(" | ") + "---|"]
    print("\n".join(lines), flush=True)
    npass = nfail = 0
    details, notes = [], []
    only = [q for q in os.environ.get("BENCH_QUERIES", "").split(",") if q]
    unknown = set(only) - {qid for qid, _ in QUERIES}
    if unknown:
        raise ValueError("BENCH_QUERIES: no query %s" % ", ".join(sorted(unknown)))
    for qid, sql in QUERIES:
        if only and qid not in only:
            continue
        plan = Plan(conn, duck, qid, sql, has_histogram)
        times, answers = run_query(conn, duck, plan, thread_counts, has_cache)
        rows, p, f, d = table_rows(plan, thread_counts, times, answers, has_cache, duck)
        for line in rows + d:
            print(line, flush=True)
        lines += rows
        npass, nfail, details = npass + p, nfail + f, details + d
        if plan.note:
            notes.append("%s: %s" % (qid, plan.note))
        conn.execute("DROP TABLE IF EXISTS temp.bench_v")
        conn.execute("DROP TABLE IF EXISTS temp.bench_floor")
    if duck:
        duck.close()

    head = [
        "Benchmark (`make bench`, bench/bench.py): %d rows in fact, %d in dim and dim2; %d cores; "
        "parallel systems at %s thread%s; median of %d run%s; %s." % (
            ROWS, max(1, ROWS // 10), os.cpu_count(), ",".join(map(str, thread_counts)),
            "" if thread_counts == [1] else "s", REPS, "" if REPS == 1 else "s",
            datetime.date.today().isoformat()),
        "",
        "- native: SQLite %s alone. parallel: the query through a parallel view "
        "(Q8: `%s`, against the GROUP BY of its bins natively and in DuckDB); cold after "
        "`par_cache_clear()`, warm run again right after; cold, serial extraction: cold with "
        "`par_config('parallel_extract', 0)` (every row read on the caller's connection), "
        "and the share of `groupby_ms + final_ms` (kernels and delivery of the rows) in "
        "`par_profile`'s total for that mode.%s" % (
            sqlite3.sqlite_version, HISTOGRAM_SQL,
            "" if has_cache else " No columnar cache yet (no `par_cache_clear`): no warm runs."),
        "- floor: the same read over a TEMP TABLE holding the query's result (filled "
        "once from the view, else natively; columns without a declared type): the "
        "fastest any view could hand SQLite these rows. Q8: `SELECT *` of "
        "par_histogram's rows.",
        "- read columns: extract_ms is the view's extraction phase from `par_profile` "
        "(cold); stepped natively is the extraction SQL that `par_explain` shows (Q8: `%s`) "
        "run alone in SQLite on one connection through the same aggregate." % HISTOGRAM_READ,
        "- " + duck_note,
        "- Every measurement reads every result row: Q1-Q7, Q9 and Q10 through `count(*)` and "
        "`total()` over each result column (text by its length; DuckDB: `kahan_sum`), Q8 as "
        "its rows. Same answer: every system's result equals native SQLite's (the views' "
        "bit for bit; DuckDB's REAL within a relative 1e-9; Q8: the same count in every "
        "non-empty bin).",
        "- Ratios: reference time / system time (above 1: faster than the reference).",
    ] + ["- %s" % n for n in notes]
    return finish(head, lines, "BENCH_RESULTS", "results.md", "bench", npass, nfail)


def finish(head, lines, env, name, label, npass, nfail):
    """Print the table, write it to bench/NAME unless $ENV is 0, print the
    summary line; the exit status."""
    out = "\n".join(head) + "\n\n" + "\n".join(lines) + "\n"
    print()
    print(out)
    if os.environ.get(env, "1") != "0":
        with open(os.path.join(ROOT, "bench", name), "w") as f:
            f.write(out)
    print("%s: %d passed, %d failed" % (label, npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
