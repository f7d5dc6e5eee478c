#!/usr/bin/python3
"""How a parallel view hands its rows to SQLite (view.c parViewColumn, batch.c
parColumnResult): every value of a result, read back through SQL (typeof,
length, hex) and by Python, is the one the same SELECT gives natively.

    /usr/bin/python3 tests/test_delivery.py ./parallel.so

Aimed at the delivery's own paths: short TEXT handed over NUL-terminated
(and the values where it must not be: a NUL inside, 255 bytes and longer),
the dictionary entries fetched ahead of the row read (results of 0..39 rows
around that distance, NULL rows among them), MIXED columns, and the final
SQL over par_rows beside the direct path."""
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness

EXT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./parallel.so")


def connect():
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.execute("SELECT par_config('min_rows', 0)")
    return conn


def same_as_native(conn, sql, direct=True):
    """The view of sql gives the rows sql gives natively: fetched as they are
    and through typeof/length/hex of every column; direct says whether the
    plan must hand the result batch over itself (no final SQL)."""
    explain = conn.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
    assert not explain.startswith("native:"), explain
    assert ("the groups as they are" in explain) == direct, explain
    conn.execute("DROP TABLE IF EXISTS temp.v")
    conn.execute("CREATE VIRTUAL TABLE temp.v USING parallel('%s')" % sql.replace("'", "''"))
    ncol = len(conn.execute("SELECT * FROM v LIMIT 0").description)
    names = ", ".join("c%d" % i for i in range(ncol))
    probe = ", ".join("c%d, typeof(c%d), length(c%d), hex(c%d)" % (i, i, i, i)
                      for i in range(ncol))
    got = conn.execute("WITH s(%s) AS (SELECT * FROM v) SELECT %s FROM s" % (names, probe)).fetchall()
    want = conn.execute("WITH s(%s) AS (%s) SELECT %s FROM s" % (names, sql, probe)).fetchall()
    key = lambda r: tuple((x is None, type(x).__name__, x if x is not None else 0) for x in r)
    assert sorted(got, key=key) == sorted(want, key=key), (sql, got[:5], want[:5])
    raw = conn.execute("SELECT * FROM v").fetchall()
    assert sorted(raw, key=key) == sorted(conn.execute(sql).fetchall(), key=key), sql


TEXTS = ["", "a", "abc", "x" * 254, "y" * 255, "z" * 256, "w" * 1000, "\u00e9t\u00e9 \u2603",
         "nul\x00inside", "\x00", "end\x00", "q" * 254 + "\x00"]


def fill(conn, rows):
    conn.execute("DROP TABLE IF EXISTS t")
    conn.execute("CREATE TABLE t(k INT, x, s TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)


def test_text_values():
    """Every TEXT value, with a NUL inside or not, short or long, as a group
    key and as min() of a group (a UTF-16 database runs natively)."""
    conn = connect()
    fill(conn, [(i, None, s) for i, s in enumerate(TEXTS)]
         + [(i, None, s + "!") for i, s in enumerate(TEXTS)] + [(99, None, None)])
    same_as_native(conn, "SELECT k, min(s) FROM t GROUP BY k")
    same_as_native(conn, "SELECT s, count(*) FROM t GROUP BY s")
    same_as_native(conn, "SELECT k, max(s) || '' FROM t GROUP BY k", direct=False)


def test_result_sizes():
    """Results of 0..39 rows, every third one NULL, and one of 5000 rows:
    the entries fetched ahead stop at the last row."""
    conn = connect()
    for n in list(range(0, 41, 3)) + [16, 17, 5000]:
        fill(conn, [(i, None, None if i % 3 == 1 else "v%d" % (i * 7919 % 1009))
                    for i in range(n)])
        same_as_native(conn, "SELECT k, min(s) FROM t GROUP BY k")


def test_mixed_values():
    """A column of every storage class (MIXED): integers, reals, TEXT with
    and without a NUL, BLOBs, NULLs."""
    conn = connect()
    values = [1, -2, 2.5, 1e300, "one", "t\x00wo", b"", b"\x00\x01", b"blob", None,
              "x" * 300, 7]
    fill(conn, [(i * 13 % 50, v, None) for i, v in enumerate(values * 5)])
    same_as_native(conn, "SELECT k, min(x), max(x) FROM t GROUP BY k")
    same_as_native(conn, "SELECT x, count(*) FROM t GROUP BY x")
    same_as_native(conn, "SELECT k, min(x) + 0, max(x) FROM t GROUP BY k", direct=False)


if __name__ == "__main__":
    sys.exit(harness.run("delivery", globals()))
