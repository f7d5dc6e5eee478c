"""plan_cost.py: what one scan of a small parallel view costs on the
caller's connection: the statements it runs there (seen through
conn.set_trace_callback, which reports each statement SQLite starts on
that connection, the extension's own included; statements only prepared,
and those of worker connections, are not seen) and the time per scan
against the same SELECT run natively.

  /usr/bin/python3 bench/plan_cost.py ./parallel.so [ROWS] [SCANS] [file|memory]

The database is a file in a temporary directory (or :memory:).

Prints the statements of one scan grouped by their first words, then
"view: N statements/scan, X ms/scan; native: Y ms/scan"."""
import collections
import os
import sqlite3
import sys
import tempfile
import time

so = sys.argv[1] if len(sys.argv) > 1 else "./parallel.so"
nrow = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
nscan = int(sys.argv[3]) if len(sys.argv) > 3 else 200
kind = sys.argv[4] if len(sys.argv) > 4 else "file"

SELECT = "SELECT g, sum(v), count(*), min(s) FROM t GROUP BY g"

tmp = tempfile.TemporaryDirectory()
conn = sqlite3.connect(os.path.join(tmp.name, "plan_cost.db") if kind == "file" else ":memory:",
                       isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(so)
conn.execute("CREATE TABLE t(g INT, v INT, s TEXT)")
conn.executemany("INSERT INTO t VALUES (?, ?, ?)",
                 [(i % 17, i * 7 % 1000, "s%d" % (i % 31)) for i in range(nrow)])
conn.execute("CREATE VIRTUAL TABLE temp.pv USING parallel('%s')" % SELECT)
assert sorted(conn.execute("SELECT * FROM pv").fetchall()) == \
    sorted(conn.execute(SELECT).fetchall())

# The statements of one scan (after a first scan, which may set things up).
seen = []
conn.set_trace_callback(seen.append)
conn.execute("SELECT * FROM pv").fetchall()
seen.clear()
conn.execute("SELECT * FROM pv").fetchall()
conn.set_trace_callback(None)
kinds = collections.Counter(" ".join(s.split()[:3])[:60] for s in seen)
for k, n in kinds.most_common():
    print("%5d  %s" % (n, k))


def per_scan(sql):
    t0 = time.perf_counter()
    for _ in range(nscan):
        conn.execute(sql).fetchall()
    return (time.perf_counter() - t0) / nscan * 1000


# The two alternate, best of 5 each: the machine's noise hits both.
tv = tn = float("inf")
for _ in range(5):
    tv = min(tv, per_scan("SELECT * FROM pv"))
    tn = min(tn, per_scan(SELECT))
print("view: %d statements/scan, %.3f ms/scan; native: %.3f ms/scan (%s, %d rows, best of 5 x %d scans)"
      % (len(seen), tv, tn, kind, nrow, nscan))
