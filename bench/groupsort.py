#!/usr/bin/python3
"""ORDER BY over a GROUP BY's result: the sort operator against the final
SQL's sort (SQLite's sorter over par_rows), at 10, 1K and 1M groups.

    /usr/bin/python3 bench/groupsort.py ./parallel.so [BASELINE.so] [rows]

Each extension given (say this build and one without the sort operator
after the group-by, built from an earlier commit) is timed on the same
data, warm (the columnar cache holds the table), best of 5: "view", the
whole SELECT count(*) FROM view (the rows go through the view's cursor,
not Python), and "after", what follows the group-by in par_profile: the
sort operator and the final SQL (the group-by's own time varies far more
than the sort costs, so the whole is a poor measure of the sort).
"""
import os
import sqlite3
import sys
import time

EXT = [os.path.abspath(a) for a in sys.argv[1:] if a.endswith(".so")]
ROWS = int(([a for a in sys.argv[1:] if a.isdigit()] or ["2000000"])[0])
DB = "/tmp/par_groupsort_bench.db"
QUERIES = [
    "SELECT k, sum(v) AS s FROM t{g} GROUP BY k ORDER BY s DESC",
    "SELECT k, sum(v) AS s FROM t{g} GROUP BY k ORDER BY s DESC LIMIT 10",
    "SELECT k, count(*) AS n, max(v) FROM t{g} GROUP BY k ORDER BY n, 3 DESC",
]
GROUPS = (10, 1000, 1000000)


def setup():
    if os.path.exists(DB):
        return
    c = sqlite3.connect(DB)
    c.execute("PRAGMA journal_mode=WAL")
    for g in GROUPS:
        c.execute("CREATE TABLE t%d(k INT, v INT)" % g)
        c.execute("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM s WHERE i<?) "
                  "INSERT INTO t%d SELECT (i*7919) %% %d, (i*31) %% 1000 FROM s" % (g, g),
                  (ROWS - 1,))
    c.commit()
    c.close()


def after_groupby(c, sql, n=5):
    """Least time of the sort operator plus the final SQL (par_profile)."""
    import json
    best = 1e9
    for _ in range(n):
        p = json.loads(c.execute("SELECT par_profile(?)", (sql,)).fetchone()[0])
        best = min(best, sum(o["ms"] for o in p["operators"]
                             if o["op"] in ("sort", "final")))
    return best


def timed(c, sql, n=5):
    best = 1e9
    for _ in range(n):
        t0 = time.perf_counter()
        c.execute(sql).fetchone()
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def main():
    setup()
    conns = []
    for ext in EXT:
        c = sqlite3.connect(DB)
        c.enable_load_extension(True)
        c.load_extension(ext)
        conns.append(c)
    native = sqlite3.connect(DB)
    print("%-72s %9s %s" % ("query", "native ms", "  ".join(
        "%s: view ms, after ms" % os.path.basename(os.path.dirname(e)) for e in EXT)))
    for q in QUERIES:
        for g in GROUPS:
            sql = q.format(g=g)
            cols = []
            for i, c in enumerate(conns):
                c.execute("DROP TABLE IF EXISTS temp.v")
                c.execute("CREATE VIRTUAL TABLE temp.v USING parallel('%s')" % sql)
                c.execute("SELECT count(*) FROM temp.v").fetchone()       # warm the cache
                cols.append(timed(c, "SELECT count(*) FROM temp.v"))
                cols.append(after_groupby(c, sql))
            nat = timed(native, "SELECT count(*) FROM (%s)" % sql, 1)
            print("%-72s %9.1f %s" % (sql, nat, "  ".join("%8.2f" % x for x in cols)))


main()
