#!/usr/bin/python3
"""par_profile of one benchmark query, cold (cache cleared) and warm, at
each thread count: where the time of a view's run goes, operator by
operator, with the parallel read's phases.

    BENCH_THREADS=2,16 BENCH_QUERIES=Q7 /usr/bin/python3 bench/profile_one.py

Uses bench.py's data and queries; prints one JSON line per run."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def main():
    bench.generate()
    conn = bench.sqlite3.connect(bench.DB)
    conn.enable_load_extension(True)
    conn.load_extension(bench.EXT)
    counts = [int(t) for t in os.environ.get("BENCH_THREADS", "2").split(",")]
    only = [q for q in os.environ.get("BENCH_QUERIES", "Q7").split(",") if q]
    for qid, sql in bench.QUERIES:
        if qid not in only or sql is None:
            continue
        for t in counts:
            conn.execute("SELECT par_config('threads', ?)", (t,))
            for kind in ("cold", "warm", "warm"):
                if kind == "cold":
                    conn.execute("SELECT par_cache_clear()")
                p = json.loads(conn.execute("SELECT par_profile(?)", (sql,)).fetchone()[0])
                ops = " + ".join("%s %.1f" % (o["op"], o["ms"]) for o in p["operators"])
                print("%s %2d %s: %s %s" % (qid, t, kind, ops, json.dumps(p.get("read_phases", ""))),
                      flush=True)


if __name__ == "__main__":
    main()
