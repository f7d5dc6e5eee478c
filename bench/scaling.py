#!/usr/bin/python3
"""How the views scale with threads, operator by operator: for each query of
the benchmark (bench.py's, on its data) and each thread count, the view read
cold (cache cleared) and warm, and par_profile's time for each operator of
the pipeline (scan, group by / sort, final), cold and warm.

    BENCH_THREADS=1,16,32,64 /usr/bin/python3 bench/scaling.py
    BENCH_QUERIES=Q1,Q2 BENCH_ROWS=1000000 BENCH_REPS=3 /usr/bin/python3 bench/scaling.py

Times are medians of BENCH_REPS runs (default 3), in seconds for the
reads and milliseconds for the operators; the read goes through the same
wrapper as bench.py (every result row read), the profile does not return
rows through a view (its final is the SQL over the groups, or nothing).
A query that gets slower with more threads shows which operator grew.
Prints a markdown table; writes nothing.
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (its data, queries and wrapper)

REPS = int(os.environ.get("BENCH_REPS", "3"))


def median_time(fn):
    ts = []
    for _ in range(REPS):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def profile(conn, sql):
    """The operators' milliseconds of one par_profile run, as 'op ms' text."""
    p = json.loads(conn.execute("SELECT par_profile(?)", (sql,)).fetchone()[0])
    ops = p.get("operators")
    if ops is None:   # a build from before the pipeline
        ops = [{"op": "scan", "ms": p["extract_ms"]}, {"op": "group by", "ms": p["groupby_ms"]},
               {"op": "final", "ms": p["final_ms"]}]
    text = " + ".join("%s %.1f" % (o["op"], o["ms"]) for o in ops) + \
        ("" if p["mode"] == "parallel" else " (native)")
    r = p.get("read_phases")
    if r:   # the parallel read's phases (extract.c)
        text += " [%d workers: %s]" % (r["workers"], ", ".join(
            "%s %.1f" % (k[:-3], v) for k, v in r.items() if k.endswith("_ms")))
    return text


def main():
    bench.generate()
    conn = bench.sqlite3.connect(bench.DB)
    conn.enable_load_extension(True)
    conn.load_extension(bench.EXT)
    ncores = conn.execute("SELECT par_config('threads')").fetchone()[0]
    counts = [int(t) for t in os.environ.get("BENCH_THREADS", "1,%d" % ncores).split(",")]
    only = [q for q in os.environ.get("BENCH_QUERIES", "").split(",") if q]
    print("| query | threads | cold s | warm s | cold ms by operator | warm ms by operator |")
    print("|---|---|---|---|---|---|")
    for qid, sql in bench.QUERIES:
        if (only and qid not in only) or qid == "Q8":
            continue
        conn.execute("DROP TABLE IF EXISTS temp.v")
        conn.execute("CREATE VIRTUAL TABLE temp.v USING parallel(%s)"
                     % ("'" + sql.replace("'", "''") + "'"))
        wrap = bench.sqlite_wrap(conn, "SELECT * FROM v")
        for t in counts:
            conn.execute("SELECT par_config('threads', ?)", (t,))

            def cold():
                conn.execute("SELECT par_cache_clear()")
                conn.execute(wrap).fetchall()
            tc = median_time(cold)
            tw = median_time(lambda: conn.execute(wrap).fetchall())
            conn.execute("SELECT par_cache_clear()")
            pc = profile(conn, sql)
            pw = profile(conn, sql)
            print("| %s | %d | %.3f | %.3f | %s | %s |" % (qid, t, tc, tw, pc, pw), flush=True)
    conn.execute("SELECT par_config('threads', 0)")


if __name__ == "__main__":
    main()
