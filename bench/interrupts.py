"""How promptly an interrupted parallel view stops: sqlite3_interrupt() at
random moments of a warm scan of a 5M-row, 1M-group view, for each group-by
strategy that can take it, at each thread count of BENCH_THREADS.

    make bench-interrupts        (INT_ROWS, INT_SCANS, BENCH_THREADS)

Each scan is interrupted by another thread after a delay drawn uniformly
from the scan's uninterrupted time; the latency is from the interrupt call
to the scan's error.  Prints the median, 99th percentile and worst latency
per strategy, and appends nothing to bench/results.md: quote it by hand.
"""
import os
import random
import sqlite3
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXT = os.environ.get("BENCH_EXT", os.path.join(HERE, "..", "parallel"))
ROWS = int(os.environ.get("INT_ROWS", "5000000"))
SCANS = int(os.environ.get("INT_SCANS", "100"))
GROUPS = ROWS // 5
DB = os.path.join(HERE, "data", "interrupts_%d.db" % ROWS)
STRATEGIES = [("count", 3, "SELECT k, sum(v), count(*) FROM t GROUP BY k"),
              ("radix", 4, "SELECT k, sum(v), count(*) FROM t GROUP BY k"),
              ("auto, REAL sums", 0, "SELECT k, sum(r), avg(r) FROM t GROUP BY k")]


def generate():
    if os.path.exists(DB):
        return
    os.makedirs(os.path.dirname(DB), exist_ok=True)
    c = sqlite3.connect(DB + ".tmp")
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, k INT, v INT, r REAL)")
    rng = random.Random(5)
    batch = 200000
    for lo in range(0, ROWS, batch):
        c.executemany("INSERT INTO t(k, v, r) VALUES(?, ?, ?)",
                      [(rng.randrange(GROUPS), rng.randrange(1000), rng.random())
                       for _ in range(min(batch, ROWS - lo))])
        c.commit()
    c.close()
    os.rename(DB + ".tmp", DB)


def main():
    generate()
    text = os.environ.get("BENCH_THREADS", "")
    threads = [int(t) for t in text.split(",") if t] or [os.cpu_count()]
    c = sqlite3.connect(DB, check_same_thread=False)
    c.enable_load_extension(True)
    c.load_extension(EXT)
    rng = random.Random(1)
    print("interrupts: %d rows, %d groups, %d scans per line" % (ROWS, GROUPS, SCANS))
    print("%-16s %7s %9s %9s %9s %9s %8s" % ("strategy", "threads", "scan_ms", "p50_ms",
                                               "p99_ms", "max_ms", "stopped"))
    for n in threads:
        c.execute("SELECT par_config('threads', ?)", (n,))
        for name, strategy, sql in STRATEGIES:
            c.execute("SELECT par_config('group_strategy', ?)", (strategy,))
            c.execute("DROP TABLE IF EXISTS temp.v")
            c.execute("CREATE VIRTUAL TABLE temp.v USING parallel('%s')" % sql)
            c.execute("SELECT count(*) FROM v").fetchall()          # warm the cache
            t0 = time.perf_counter()
            c.execute("SELECT count(*) FROM v").fetchall()
            full = time.perf_counter() - t0
            lat = []
            for _ in range(SCANS):
                delay = rng.uniform(0, full)
                fired = []

                def fire():
                    time.sleep(delay)
                    fired.append(time.perf_counter())
                    c.interrupt()
                timer = threading.Thread(target=fire)
                timer.start()
                try:
                    c.execute("SELECT count(*) FROM v").fetchall()
                    done = None
                except sqlite3.OperationalError as e:
                    assert "interrupt" in str(e), str(e)
                    done = time.perf_counter()
                timer.join()
                if done is not None and fired:
                    lat.append(done - fired[0])
            lat.sort()
            if lat:
                p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))]
                print("%-16s %7d %9.1f %9.1f %9.1f %9.1f %4d/%-3d" % (
                    name, n, full * 1e3, statistics.median(lat) * 1e3, p99 * 1e3,
                    lat[-1] * 1e3, len(lat), SCANS))
            sys.stdout.flush()
    c.close()


if __name__ == "__main__":
    main()
