#!/usr/bin/python3
"""Tests of the settings as a user first meets them: par_config() listing
every setting as JSON, the par_settings table, the threads default read
from OMP_NUM_THREADS, and cache_mb as the budget of the whole process.

    /usr/bin/python3 tests/test_settings.py ./parallel.so

Each test_* function is one case; the last line is "settings: N passed, N failed".
"""
import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

EXT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./parallel.so")
NAMES = ["threads", "memory_mb", "min_rows", "parallel_extract", "cache_mb", "group_strategy",
         "join_strategy"]

expect_error = harness.expect_error


def connect(path=":memory:"):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.enable_load_extension(False)
    return conn


def ncores():
    return len(os.sched_getaffinity(0))


def listing(c):
    """par_config() as a dict (keys in its order), and par_settings' rows."""
    text = c.execute("SELECT par_config()").fetchone()[0]
    obj = json.loads(text, object_pairs_hook=lambda kv: kv)
    rows = c.execute("SELECT name, value, default_value, min, max, description "
                     "FROM par_settings").fetchall()
    return obj, rows


def check_agrees(c):
    """par_config(), par_settings and par_config(name) say the same."""
    obj, rows = listing(c)
    assert [k for k, _ in obj] == NAMES, obj
    assert [r[0] for r in rows] == NAMES, rows
    for (name, v), r in zip(obj, rows):
        one = c.execute("SELECT par_config(?)", (name,)).fetchone()[0]
        assert isinstance(v, int) and v == one == r[1], (name, v, one, r)
        assert r[3] <= r[1] <= r[4], r
        assert r[3] <= r[2] <= r[4], r
        assert isinstance(r[5], str) and len(r[5]) > 10, r
    assert json.loads(c.execute("SELECT json(par_config())").fetchone()[0]) == dict(obj)
    return dict(obj), {r[0]: r for r in rows}


def test_listing_fresh_connection():
    c = connect()
    values, rows = check_agrees(c)
    # A fresh connection has every default in force.
    for name in NAMES:
        assert rows[name][1] == rows[name][2], rows[name]
    assert values["threads"] == ncores() or os.environ.get("OMP_NUM_THREADS")
    assert values["parallel_extract"] == 1 and values["group_strategy"] == 0
    assert values["join_strategy"] == 0
    assert values["min_rows"] == 100000


def test_listing_follows_changes():
    c = connect()
    _, rows = check_agrees(c)
    for name, v in [("threads", 3), ("memory_mb", 77), ("min_rows", 0),
                    ("parallel_extract", 0), ("group_strategy", 4), ("threads", 1),
                    ("min_rows", 2**62), ("group_strategy", 0), ("join_strategy", 1),
                    ("join_strategy", 0)]:
        assert c.execute("SELECT par_config(?, ?)", (name, v)).fetchone()[0] == v
        values, now = check_agrees(c)
        assert values[name] == v
        assert now[name][2] == rows[name][2]          # the default stays
    # threads 0: back to the default, which the listing then shows.
    c.execute("SELECT par_config('threads', 0)")
    values, now = check_agrees(c)
    assert values["threads"] == now["threads"][2]
    # The ranges are the ones the errors name.
    for name in NAMES:
        lo, hi = rows[name][3], rows[name][4]
        msg = expect_error(c, "SELECT par_config(?, ?)", "par_config: %s must be an integer"
                           % name, (name, "nope"))
        assert "from %d to %d" % (lo, hi) in msg, msg
        if lo > -2**63:
            expect_error(c, "SELECT par_config(?, ?)", "from %d" % lo, (name, lo - 1))
        if hi < 2**63 - 1:
            expect_error(c, "SELECT par_config(?, ?)", "to %d" % hi, (name, hi + 1))
    check_agrees(c)


def test_errors_unchanged():
    c = connect()
    before = c.execute("SELECT par_config()").fetchone()[0]
    expect_error(c, "SELECT par_config('thread')", "unknown setting 'thread'")
    expect_error(c, "SELECT par_config('nope', 3)", "unknown setting 'nope'")
    expect_error(c, "SELECT par_config(NULL)", "first argument must be a setting name")
    expect_error(c, "SELECT par_config(1)", "first argument must be a setting name")
    expect_error(c, "SELECT par_config('threads', 1, 2)", "wrong number of arguments")
    expect_error(c, "SELECT par_config('threads', -1)", "threads must be an integer")
    assert c.execute("SELECT par_config()").fetchone()[0] == before


def test_settings_table_read_only_and_direct_only():
    """par_settings reads the connection's state: never from a view or a
    trigger (a stranger's schema), and it cannot be written."""
    c = connect()
    expect_error(c, "INSERT INTO par_settings(name) VALUES('x')", "par_settings")
    expect_error(c, "UPDATE par_settings SET value = 1", "par_settings")
    expect_error(c, "DELETE FROM par_settings", "par_settings")
    c.execute("CREATE VIEW v AS SELECT name, value FROM par_settings")
    expect_error(c, "SELECT * FROM v", "unsafe use of virtual table")
    c.execute("CREATE TABLE t(x)")
    c.execute("CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
              "SELECT value FROM par_settings; END")
    expect_error(c, "INSERT INTO t VALUES(1)", "unsafe use of virtual table")
    assert c.execute("SELECT count(*) FROM t").fetchone()[0] == 0
    # par_config() with no argument is DIRECTONLY as par_config(name) is.
    c.execute("CREATE VIEW w AS SELECT par_config() AS j")
    expect_error(c, "SELECT * FROM w", "unsafe use of par_config()")
    # Filters and joins work as on any table.
    assert c.execute("SELECT value FROM par_settings WHERE name = 'min_rows'"
                     ).fetchone()[0] == 100000
    assert c.execute("SELECT count(*) FROM par_settings a JOIN par_settings b USING(name)"
                     ).fetchone()[0] == len(NAMES)


def test_settings_per_connection_listing():
    """Each connection lists its own values (cache_mb aside: the process's)."""
    a, b = connect(), connect()
    a.execute("SELECT par_config('threads', 1)")
    a.execute("SELECT par_config('min_rows', 5)")
    va, _ = check_agrees(a)
    vb, _ = check_agrees(b)
    assert va["threads"] == 1 and va["min_rows"] == 5
    assert vb["threads"] != 1 or ncores() == 1
    assert vb["min_rows"] == 100000
    # cache_mb is the budget of the process's cache: set on one connection,
    # every connection lists it.
    default = va["cache_mb"]
    assert vb["cache_mb"] == default
    assert b.execute("SELECT par_config('cache_mb', 7)").fetchone()[0] == 7
    va, rows = check_agrees(a)
    assert va["cache_mb"] == 7 and rows["cache_mb"][2] == default
    a.execute("SELECT par_config('cache_mb', ?)", (default,))
    assert check_agrees(b)[0]["cache_mb"] == default


THREADS_CHILD = r"""
import json, sqlite3, sys
c = sqlite3.connect(":memory:")
c.enable_load_extension(True)
c.load_extension(sys.argv[1])
t = c.execute("SELECT par_config('threads')").fetchone()[0]
d = c.execute("SELECT default_value FROM par_settings WHERE name = 'threads'").fetchone()[0]
c.execute("SELECT par_config('threads', 1)")
z = c.execute("SELECT par_config('threads', 0)").fetchone()[0]
j = json.loads(c.execute("SELECT par_config()").fetchone()[0])["threads"]
print(json.dumps([t, d, z, j]))
"""


def threads_with(omp):
    """[threads in force, its default, par_config('threads', 0), par_config()'s]
    in a new process with OMP_NUM_THREADS = omp (None: unset)."""
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    out = subprocess.run([sys.executable, "-c", THREADS_CHILD, EXT], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    # (libgomp itself warns on stderr of a value it ignores.)
    text = out.stdout.decode()
    assert out.returncode == 0, text + out.stderr.decode()
    return json.loads(text)


def test_threads_default_from_omp_num_threads():
    n = ncores()
    # As libgomp reads it: a list of positive integers, the first for the
    # outermost level; anything else in it makes the whole value ignored.
    for omp, want in [(None, n), ("3", 3), (" 3 ", 3), ("8,2", 8), ("8, 2", 8),
                      ("5,garbage", n), ("garbage", n), ("", n), ("0", n), ("-4", n),
                      ("3x", n), ("2.5", n), ("99999999999999999999", n), ("5000", 1024),
                      ("1", 1), (",4", n), ("4,", n), ("+3", n)]:
        got = threads_with(omp)
        assert got == [want] * 4, (omp, got, want)


def main():
    return harness.run("settings", globals())


if __name__ == "__main__":
    sys.exit(main())
