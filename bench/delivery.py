#!/usr/bin/python3
"""What a parallel view's result row costs to hand to SQLite, against the
same row stepped out of a temp table (the floor of bench.py).

    /usr/bin/python3 bench/delivery.py [EXT ...]
    DELIVERY_ROWS=1000000 DELIVERY_REPS=5 /usr/bin/python3 bench/delivery.py \
        /tmp/old/parallel.so ./parallel.so

Each EXT (default ./parallel.so; each file must be named parallel.so, as
SQLite derives the entry point from the name) is loaded on a connection of
its own in this one process, and the repetitions alternate between them,
so that a busy machine slows every build alike: compare builds in one run.

For each size N (DELIVERY_ROWS, default 1M and 10M) a file
bench/data/delivery_<N>.db (made once) holds d(k INT, r REAL, t TEXT) with
N distinct k, and each case below is a view whose result has N rows:

    int, real   SELECT k, sum(r) FROM d GROUP BY k
    int, text   SELECT k, min(t) FROM d GROUP BY k

(DELIVERY_CASES=text: only the cases whose name holds one of these words.)

The read is bench.py's: count(*) and total() of every column (text by its
length), here inside a subquery correlated with an outer row number x, so
that one statement scans the view K times.  A view computes once per
statement (view.c, parViewFilterBusy: a later scan takes the first scan's
rows), so the time for K = 3 less the time for K = 1, halved, is the cost
of one scan's delivery alone: xFilter taking the rows, then xNext, xEof and
xColumn for every row; no compute.  Delivery and floor are CPU time (one
thread does all of it), which other processes on a busy machine disturb
far less than the wall clock; the first scan is wall-clock time.  The floor is the same over a TEMP TABLE
holding the view's rows (no declared types: every value as the view gave
it).  The table shows medians of DELIVERY_REPS runs (default 3) in
nanoseconds per row: the whole first scan (compute and delivery, warm:
the columns cached), delivery, floor, and delivery / floor (goal: 1.3 at
most).
"""
import os
import sqlite3
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "parallel.so")
SIZES = [int(x) for x in os.environ.get("DELIVERY_ROWS", "1000000,10000000").split(",")]
REPS = int(os.environ.get("DELIVERY_REPS", "3"))
DATA = os.path.join(ROOT, "bench", "data")
ONLY = [w for w in os.environ.get("DELIVERY_CASES", "").split(",") if w]

CASES = [
    ("int, real", "SELECT k, sum(r) FROM d GROUP BY k"),
    ("int, text", "SELECT k, min(t) FROM d GROUP BY k"),
]


def database(n):
    """bench/data/delivery_<n>.db, made once (WAL, as bench.py's)."""
    path = os.path.join(DATA, "delivery_%d.db" % n)
    if not os.path.exists(path):
        os.makedirs(DATA, exist_ok=True)
        tmp = path + ".tmp"
        if os.path.exists(tmp):
            os.remove(tmp)
        c = sqlite3.connect(tmp)
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("PRAGMA synchronous=OFF")
        c.execute("CREATE TABLE d(k INT, r REAL, t TEXT)")
        c.execute("""
            WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?1)
            INSERT INTO d SELECT (i * 2654435761) % ?1, (i % 1000) / 8.0,
                   'name' || ((i * 2654435761) % ?1) FROM s""", (n,))
        c.commit()
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        c.close()
        os.rename(tmp, path)
    return path


def scans(src, names, k):
    """bench.py's read of every column of src, in a subquery run for each of
    k outer rows (correlated with them, so SQLite runs it each time)."""
    agg = " + ".join(["count(*)"] + [
        "total(CASE typeof(%s) WHEN 'text' THEN length(%s) ELSE %s END)" % (c, c, c)
        for c in names])
    return ("SELECT (SELECT %s FROM %s WHERE x > 0) FROM (WITH RECURSIVE s(x) AS "
            "(SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < %d) SELECT x FROM s)"
            % (agg, src, k))


def timed(conn, sql):
    """Wall-clock and CPU seconds (this process, every thread) to run sql,
    and its rows."""
    t0, c0 = time.perf_counter(), time.process_time()
    rows = conn.execute(sql).fetchall()
    return time.perf_counter() - t0, time.process_time() - c0, rows


def connect(path, ext):
    conn = sqlite3.connect(path)
    conn.enable_load_extension(True)
    conn.load_extension(ext)
    return conn


def measure(conns, n, sql):
    """Per build: ns per row of the first scan, of delivery, of the floor,
    and delivery / floor."""
    names = None
    for conn in conns:
        conn.execute("DROP TABLE IF EXISTS temp.v")
        conn.execute("CREATE VIRTUAL TABLE temp.v USING parallel('%s')"
                     % sql.replace("'", "''"))
        cur = conn.execute("SELECT * FROM v LIMIT 0")
        names = ['"%s"' % d[0].replace('"', '""') for d in cur.description]
        conn.execute("DROP TABLE IF EXISTS temp.f")
        conn.execute("CREATE TEMP TABLE f(%s)" % ", ".join(names))
        conn.execute("INSERT INTO temp.f SELECT * FROM v")    # fills the cache too
        conn.commit()
    t = [{"one": [], "view": [], "floor": []} for _ in conns]
    answer = None
    for _ in range(REPS):
        for conn, tc in zip(conns, t):
            for key, src in (("view", "v"), ("floor", "temp.f")):
                s1, c1, r1 = timed(conn, scans(src, names, 1))
                _, c3, r3 = timed(conn, scans(src, names, 3))
                answer = answer or r1
                assert r1 == answer and r3 == answer * 3, (r1, r3, answer)
                tc[key].append((c3 - c1) / 2)
                if key == "view":
                    tc["one"].append(s1)
    for conn in conns:
        conn.execute("DROP TABLE temp.f")
        conn.execute("DROP TABLE temp.v")
    out = []
    for tc in t:
        m = {k: statistics.median(v) for k, v in tc.items()}
        out.append((1e9 * m["one"] / n, 1e9 * m["view"] / n, 1e9 * m["floor"] / n,
                    m["view"] / m["floor"]))
    return out


def main():
    exts = sys.argv[1:] or [os.path.join(ROOT, "parallel.so")]
    print("| rows | columns | build | first scan ns/row | delivery ns/row "
          "| floor ns/row | delivery / floor |")
    print("|---|---|---|---|---|---|---|")
    for n in SIZES:
        path = database(n)
        conns = [connect(path, ext) for ext in exts]
        for name, sql in CASES:
            if ONLY and not any(w in name for w in ONLY):
                continue
            for ext, r in zip(exts, measure(conns, n, sql)):
                print("| %d | %s | %s | %.1f | %.1f | %.1f | %.2f |"
                      % ((n, name, os.path.relpath(ext, ROOT)) + r), flush=True)
        threads = conns[0].execute("SELECT par_config('threads')").fetchone()[0]
        for conn in conns:
            conn.close()
    print("%d threads, median of %d runs" % (threads, REPS))


if __name__ == "__main__":
    main()
