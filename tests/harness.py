"""The runner shared by the Python test scripts: every function named
test_* of a module, in name order; a failure prints its traceback and the
rest still run; the last line is "<label>: N passed, N failed".

HARNESS_ONLY=test_a,test_b runs only those functions (a name that is not
there is a failure), HARNESS_SKIP=... all but those: tests/run.sh runs the
tests that time themselves on their own and the rest beside other suites."""
import os
import sqlite3
import struct
import sys
import threading
import time
import traceback


def run_threads(target, n):
    """target(0) .. target(n-1), each on a thread of its own, all at once;
    returns when every one has finished."""
    threads = [threading.Thread(target=target, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def run(label, namespace, after=None):
    """Run the test_* functions of namespace (a module's globals()); then
    after() if given.  Returns the exit status: 1 if any failed."""
    tests = [(n, f) for n, f in sorted(namespace.items()) if n.startswith("test_")]
    npass = nfail = 0
    only = [n for n in os.environ.get("HARNESS_ONLY", "").split(",") if n]
    skip = [n for n in os.environ.get("HARNESS_SKIP", "").split(",") if n]
    for name in only + skip:
        if name not in namespace:
            nfail += 1
            print("FAIL %s: HARNESS_ONLY or HARNESS_SKIP names it, but there is no such test" % name)
    if only:
        tests = [(n, f) for n, f in tests if n in only]
    tests = [(n, f) for n, f in tests if n not in skip]
    for name, fn in tests:
        t0 = time.time()
        try:
            fn()
            npass += 1
            print("ok   %s (%.1fs)" % (name, time.time() - t0))
        except Exception:
            nfail += 1
            print("FAIL %s" % name)
            traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
    if after:
        after()
    print("%s: %d passed, %d failed" % (label, npass, nfail))
    return 1 if nfail else 0


def connect_ext(path, ext):
    """A connection in autocommit mode to path with the extension ext loaded
    (and extension loading turned off again)."""
    c = sqlite3.connect(path, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(ext)
    c.enable_load_extension(False)
    return c


def expect_error(conn, sql, fragment, params=()):
    """sql fails with an error message containing fragment; returns it."""
    try:
        conn.execute(sql, params).fetchall()
    except sqlite3.Error as e:
        assert fragment in str(e), "error %r lacks %r" % (str(e), fragment)
        return str(e)
    raise AssertionError("no error from %r" % (sql,))


# ---- exact comparison of result rows (the differential tests) ------------------

def token(v):
    """A value as an exact, comparable token: its class and, for REALs, bits."""
    if isinstance(v, float):
        return ("real", struct.pack("<d", v))
    return (type(v).__name__, v)


def tokens(rows):
    return [tuple(token(v) for v in r) for r in rows]


def outcome(fn):
    """("ok", the rows fn() returns as tokens) or ("error", its message)."""
    try:
        return ("ok", tokens(fn()))
    except sqlite3.Error as e:
        return ("error", str(e))


def show(res, n=8):
    """An outcome as text: its first n rows and how many."""
    if res[0] != "ok":
        return "%s: %s" % res
    rows = [tuple(v[1] if v[0] != "real" else struct.unpack("<d", v[1])[0] for v in r)
            for r in res[1]]
    s = ", ".join(repr(r) for r in rows[:n])
    return "[%s%s] (%d rows)" % (s, ", ..." if len(rows) > n else "", len(rows))
