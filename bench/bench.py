#!/usr/bin/python3
"""The benchmark of DESIGN.md section 5: each query natively in SQLite and
through a parallel view, one after another in one run.

    make bench                        # BENCH_ROWS=10000000 BENCH_REPS=3
    BENCH_ROWS=100000 make bench      # small and quick

Generates (once, deterministically) bench/data/bench_<rows>.db in WAL mode
with fact(BENCH_ROWS rows) and dim(BENCH_ROWS/10 rows).  For each query:
native time, view time, the view's phases (extraction = reading the needed
columns alone, then kernels + result delivery, from par_profile), and
whether both returned the same answer.  Every measurement reads every
result row through the same wrapping aggregate.  Times are medians of
BENCH_REPS runs.  Writes the table to bench/results.md.
"""
import datetime
import json
import math
import os
import sqlite3
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXT = os.path.join(ROOT, "parallel.so")
ROWS = int(os.environ.get("BENCH_ROWS", "10000000"))
REPS = int(os.environ.get("BENCH_REPS", "3"))
DATA = os.path.join(ROOT, "bench", "data")
DB = os.path.join(DATA, "bench_%d.db" % ROWS)

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
    ("Q8", "SELECT CAST((v_real - 0.0) / ((SELECT max(v_real) FROM fact) - 0.0) * 100 AS INT) "
           "AS bin, count(*) FROM fact GROUP BY bin"),
    ("Q9", "SELECT sum(v_int), sum(v_real) FROM fact"),
]


def generate():
    if os.path.exists(DB):
        return
    os.makedirs(DATA, exist_ok=True)
    tmp = DB + ".tmp"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(tmp + suffix):
            os.remove(tmp + suffix)
    t0 = time.time()
    c = sqlite3.connect(tmp)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA synchronous=OFF")
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
    c.commit()
    c.close()
    os.rename(tmp, DB)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(tmp + suffix):
            os.remove(tmp + suffix)
    print("generated %s in %.1f s" % (DB, time.time() - t0), flush=True)


def connect():
    c = sqlite3.connect(DB)
    c.enable_load_extension(True)
    c.load_extension(EXT)
    return c


def timed(conn, sql):
    t0 = time.perf_counter()
    rows = conn.execute(sql).fetchall()
    return time.perf_counter() - t0, rows


def same(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a[0], b[0]):
        if isinstance(x, float) or isinstance(y, float):
            if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-6):
                return False
        elif x != y:
            return False
    return True


def fmt(t):
    return "-" if t is None else ("%.3f s" % t)


def main():
    generate()
    conn = connect()
    threads = conn.execute("SELECT par_config('threads')").fetchone()[0]
    lines = []
    lines.append("| query | native | view | view: read columns | view: kernels + delivery "
                 "| view vs native | same answer |")
    lines.append("|---|---|---|---|---|---|---|")
    nsame = ndiff = 0
    for qid, sql in QUERIES:
        explain = conn.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
        accelerated = not explain.startswith("native:")
        # Column names c0..cN keep the wrapper independent of the SELECT's names.
        cols = [d[0] for d in conn.execute("SELECT * FROM (%s) LIMIT 0" % sql).description]
        names = ", ".join("c%d" % i for i in range(len(cols)))
        agg = ", ".join(["count(*)"] + [
            "total(CASE typeof(c%d) WHEN 'text' THEN length(c%d) ELSE c%d END)" % (i, i, i)
            for i in range(len(cols))])
        native_sql = "WITH s(%s) AS (%s) SELECT %s FROM s" % (names, sql, agg)
        tn = []
        for _ in range(REPS):
            t, native_rows = timed(conn, native_sql)
            tn.append(t)
        native_t = statistics.median(tn)
        if not accelerated:
            lines.append("| %s | %s | not accelerated yet | - | - | - | - |" % (qid, fmt(native_t)))
            print(lines[-1], flush=True)
            continue
        conn.execute("DROP TABLE IF EXISTS temp.bench_v")
        conn.execute("CREATE VIRTUAL TABLE temp.bench_v USING parallel('%s')"
                     % sql.replace("'", "''"))
        view_sql = "WITH s(%s) AS (SELECT * FROM bench_v) SELECT %s FROM s" % (names, agg)
        tv, prof = [], []
        for _ in range(REPS):
            t, view_rows = timed(conn, view_sql)
            tv.append(t)
            prof.append(json.loads(conn.execute("SELECT par_profile(?)", (sql,)).fetchone()[0]))
        view_t = statistics.median(tv)
        extract = statistics.median(p["extract_ms"] for p in prof) / 1000
        rest = max(0.0, view_t - extract)
        ok = same(native_rows, view_rows)
        nsame += ok
        ndiff += not ok
        lines.append("| %s | %s | %s | %s | %s (%.0f%%) | %.1fx faster | %s |" % (
            qid, fmt(native_t), fmt(view_t), fmt(extract), fmt(rest),
            100.0 * rest / view_t if view_t else 0, native_t / view_t if view_t else 0,
            "yes" if ok else "NO"))
        print(lines[-1], flush=True)
        if not ok:
            print("   native %r\n   view   %r" % (native_rows, view_rows), flush=True)
    head = ("Benchmark: %d rows in fact, %d cores, %d threads, median of %d runs, %s.\n"
            "Extraction is serial on the caller's connection; no columnar cache yet.\n"
            "DuckDB: skipped (not part of this run).\n" % (
                ROWS, os.cpu_count(), threads, REPS, datetime.date.today().isoformat()))
    out = head + "\n" + "\n".join(lines) + "\n"
    print()
    print(out)
    if os.environ.get("BENCH_RESULTS", "1") != "0":
        with open(os.path.join(ROOT, "bench", "results.md"), "w") as f:
            f.write(out)
    # For make test's smoke run: every accelerated query gave native's answer.
    print("bench: %d passed, %d failed" % (nsame, ndiff))
    return 1 if ndiff else 0


if __name__ == "__main__":
    sys.exit(main())
