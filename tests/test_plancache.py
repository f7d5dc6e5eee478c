"""The plan cache (ext/plancache.c): a parallel view's scans reuse its plan
while nothing the plan depends on changed, and plan again when something
did.

    /usr/bin/python3 tests/test_plancache.py ./parallel.so

Each test scans a view (which plans and keeps the plan), changes one thing
the plan depends on, and scans again: the second scan must plan again
(the planner's read of pragma_function_list shows in the statements the
scan runs, seen through set_trace_callback) and return what the same
SELECT returns natively.  The changes are chosen so that the first scan's
plan would give other rows: a key collation that is no longer the
table's, an index SQLite now reads the groups through, a sum() the
application now defines, parameter values the first plan binds.  A scan
with nothing changed, or only rows, must not plan again.
"""
import os
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run  # noqa: E402

EXT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./parallel.so")
TMP = tempfile.mkdtemp(prefix="par_plancache_")

# The planner reads the function list with this statement (plan.c,
# buildFuncListRead): once per plan made.
PLANNER_MARK = "SELECT name, narg, builtin"

WORDS = ["a", "A", "b", "B", "c", "C", "ab", "AB", "Ab"]


def connect(path=":memory:"):
    # No statement cache: SQLite's own kept statements keep the functions
    # they were prepared with, where the SELECT prepared now (as a view's
    # scan runs it) takes those defined since.
    c = sqlite3.connect(path, isolation_level=None, cached_statements=0)
    c.enable_load_extension(True)
    c.load_extension(EXT)
    return c


def fill(c, table="t", coll="NOCASE", n=60):
    c.execute("CREATE TABLE %s(g TEXT COLLATE %s, v INTEGER)" % (table, coll))
    c.executemany("INSERT INTO %s VALUES(?, ?)" % table,
                  [(WORDS[i % len(WORDS)], i) for i in range(n)])


def scan(c, sql, params=()):
    """The rows of sql and whether running it planned a view."""
    seen = []
    c.set_trace_callback(seen.append)
    try:
        rows = c.execute(sql, params).fetchall()
    finally:
        c.set_trace_callback(None)
    return rows, any(PLANNER_MARK in s for s in seen)


def check(c, view, select, planned, params=(), ordered=False):
    """Scanning view returns select's rows; it planned iff planned (None:
    either)."""
    got, did = scan(c, "SELECT * FROM %s" % view if not params else
                    "SELECT * FROM %s(%s)" % (view, ", ".join("?" * len(params))), params)
    want = c.execute(select, params).fetchall()
    if not ordered:
        got, want = sorted(got, key=repr), sorted(want, key=repr)
    assert got == want, "%s\n  view   %r\n  native %r" % (select, got, want)
    assert planned is None or did == planned, "%s: planned %r, expected %r" % (select, did, planned)


def view(c, name, select):
    c.execute("CREATE VIRTUAL TABLE temp.%s USING parallel('%s')"
              % (name, select.replace("'", "''")))


GROUPS = "SELECT count(*), sum(v) FROM t GROUP BY g"


def test_scans_reuse_the_plan():
    c = connect()
    fill(c)
    view(c, "pv", GROUPS)
    check(c, "pv", GROUPS, True)
    check(c, "pv", GROUPS, False)
    check(c, "pv", GROUPS, False)
    # Rows are not what the plan depends on.
    c.execute("INSERT INTO t VALUES('zz', 5)")
    check(c, "pv", GROUPS, False)
    # Inside BEGIN ... COMMIT a scan plans afresh (the cache's check would
    # begin a read of every attached database: see the next test).
    c.execute("BEGIN")
    c.execute("DELETE FROM t WHERE v < 10")
    check(c, "pv", GROUPS, True)
    c.execute("COMMIT")
    check(c, "pv", GROUPS, False)


def test_transaction_snapshot_of_unread_database():
    """A scan inside BEGIN reads what its SELECT reads, as SQLite would: an
    attached database it never reads keeps no snapshot from the scan, so a
    later read in the transaction sees another connection's commit made
    after the scan, as natively."""
    main_path = os.path.join(TMP, "snap_main.db")
    other_path = os.path.join(TMP, "snap_other.db")
    for path in (main_path, other_path):
        w = sqlite3.connect(path)
        w.execute("PRAGMA journal_mode=WAL")
        w.close()
    c = connect(main_path)
    fill(c)
    c.execute("ATTACH ? AS other", (other_path,))
    c.execute("CREATE TABLE other.u(x)")
    view(c, "pv", GROUPS)
    check(c, "pv", GROUPS, True)
    for native in (True, False):
        c.execute("DELETE FROM other.u")
        c.execute("BEGIN")
        if native:
            c.execute(GROUPS).fetchall()
        else:
            c.execute("SELECT * FROM pv").fetchall()
        w = sqlite3.connect(other_path, isolation_level=None)
        w.execute("INSERT INTO u VALUES(1)")
        w.close()
        n = c.execute("SELECT count(*) FROM other.u").fetchone()[0]
        c.execute("COMMIT")
        assert n == 1, ("native" if native else "view", n)


def test_table_created_again_with_other_collation():
    c = connect()
    fill(c)
    view(c, "pv", GROUPS)
    check(c, "pv", GROUPS, True)
    c.execute("DROP TABLE t")
    fill(c, coll="BINARY")
    check(c, "pv", GROUPS, True)
    c.execute("DROP TABLE t")
    c.execute("CREATE TABLE t(g INTEGER, v TEXT)")
    c.executemany("INSERT INTO t VALUES(?, ?)", [(i % 5, str(i)) for i in range(40)])
    check(c, "pv", GROUPS, True)
    check(c, "pv", GROUPS, False)


def test_create_index_and_analyze():
    c = connect()
    c.execute("CREATE TABLE t(g INT, v INT)")
    c.executemany("INSERT INTO t VALUES(?, ?)", [(i % 7, i) for i in range(200)])
    sql = "SELECT g, count(*) AS n FROM t GROUP BY g ORDER BY n LIMIT 3"
    view(c, "pv", sql)
    check(c, "pv", sql, True, ordered=True)
    check(c, "pv", sql, False, ordered=True)
    # SQLite now reads the groups through the index, in descending order,
    # which decides the rows the LIMIT keeps.
    c.execute("CREATE INDEX ti ON t(g DESC)")
    check(c, "pv", sql, True, ordered=True)
    check(c, "pv", sql, False, ordered=True)
    c.execute("ANALYZE")
    check(c, "pv", sql, True, ordered=True)
    c.execute("DROP INDEX ti")
    check(c, "pv", sql, True, ordered=True)


def test_schema_change_inside_a_transaction_and_its_rollback():
    c = connect()
    fill(c)
    view(c, "pv", GROUPS)
    check(c, "pv", GROUPS, True)
    c.execute("BEGIN")
    c.execute("DROP TABLE t")
    fill(c, coll="BINARY")
    check(c, "pv", GROUPS, True)
    c.execute("ROLLBACK")
    check(c, "pv", GROUPS, True)
    check(c, "pv", GROUPS, False)


def test_temp_table_shadows_main():
    c = connect()
    fill(c)
    view(c, "pv", GROUPS)
    check(c, "pv", GROUPS, True)
    fill(c, table="temp.t", coll="BINARY", n=30)
    check(c, "pv", GROUPS, True)
    c.execute("DROP TABLE temp.t")
    check(c, "pv", GROUPS, True)


def test_collation_replaced():
    c = connect()
    fill(c)
    view(c, "pv", GROUPS)
    check(c, "pv", GROUPS, True)
    # NOCASE now tells every case apart.
    c.create_collation("NOCASE", lambda a, b: (a > b) - (a < b))
    # par_explain plans without the cache, but asks the cache whether the
    # collations are SQLite's own: it must know they are not now, as a
    # connection that never had them does.
    d = connect()
    fill(d)
    d.create_collation("NOCASE", lambda a, b: (a > b) - (a < b))
    explain = "SELECT par_explain(?)"
    assert c.execute(explain, (GROUPS,)).fetchone() == d.execute(explain, (GROUPS,)).fetchone()
    check(c, "pv", GROUPS, True)
    check(c, "pv", GROUPS, False)
    c.create_collation("NOCASE", lambda a, b: (a.lower() > b.lower()) - (a.lower() < b.lower()))
    check(c, "pv", GROUPS, True)


def test_function_replaced():
    c = connect()
    fill(c)
    view(c, "pv", GROUPS)
    check(c, "pv", GROUPS, True)
    # A sum() of one argument takes SQLite's place (it expires statements).
    c.create_function("sum", 1, lambda x: 7)
    check(c, "pv", GROUPS, True)
    check(c, "pv", GROUPS, False)
    c.create_function("sum", 1, lambda x: 9)
    check(c, "pv", GROUPS, True)
    # So does one of any number of arguments, which expires nothing.
    c = connect()
    fill(c)
    view(c, "pv", GROUPS)
    check(c, "pv", GROUPS, True)
    check(c, "pv", GROUPS, False)
    c.create_function("sum", -1, lambda *a: 8)
    check(c, "pv", GROUPS, True)
    check(c, "pv", GROUPS, False)


def test_function_used_by_the_select_replaced():
    c = connect()
    fill(c)
    sql = "SELECT g, sum(abs(v - 30)), count(*) FROM t GROUP BY g"
    view(c, "pv", sql)
    check(c, "pv", sql, True)
    c.create_function("abs", 1, lambda x: -x if x is not None else None)
    check(c, "pv", sql, True)
    # An aggregate of the name, of any number of arguments (which expires
    # no statement): the SELECT nests aggregates now, as SQLite says.
    sql2 = "SELECT count(*), sum(length(ltrim(g))) FROM t GROUP BY v % 3"
    view(c, "pv2", sql2)
    check(c, "pv2", sql2, True)
    check(c, "pv2", sql2, False)

    class Agg:
        def __init__(self):
            self.n = 0

        def step(self, *a):
            self.n += 1

        def finalize(self):
            return self.n

    c.create_aggregate("ltrim", -1, Agg)
    try:
        c.execute(sql2).fetchall()
        raise AssertionError("SQLite ran a nested aggregate")
    except sqlite3.Error as e:
        native_err = str(e)
    try:
        c.execute("SELECT * FROM pv2").fetchall()
        raise AssertionError("the view ran " + sql2)
    except sqlite3.Error as e:
        assert native_err in str(e), (native_err, str(e))


def test_aggregate_defined_under_a_name_of_the_select():
    c = connect()
    fill(c)
    sql = "SELECT count(*), sum(v) FROM t GROUP BY g"
    view(c, "pv", sql)
    check(c, "pv", sql, True)

    class Count:
        def __init__(self):
            self.n = 0

        def step(self, *a):
            self.n += 100

        def finalize(self):
            return self.n

    # count() of any number of arguments, in UTF-16 or not: it expires no
    # statement, and SQLite calls it instead of its own.
    c.create_aggregate("count", -1, Count)
    check(c, "pv", sql, True)


def test_pragmas():
    c = connect()
    c.execute("CREATE TABLE t(g INT, v INT)")
    c.executemany("INSERT INTO t VALUES(?, ?)", [(i % 4, i) for i in range(40)])
    sql = "SELECT g, group_concat(v) FROM t GROUP BY g"
    view(c, "pv", sql)
    check(c, "pv", sql, True)
    # Rows inside a group would come reversed through the kernels.
    c.execute("PRAGMA reverse_unordered_selects = 1")
    check(c, "pv", sql, True)
    check(c, "pv", sql, False)
    c.execute("PRAGMA reverse_unordered_selects = 0")
    check(c, "pv", sql, True)
    like = "SELECT count(*) FROM t WHERE CAST(v AS TEXT) || 'A' LIKE '%a' GROUP BY g"
    view(c, "pv2", like)
    check(c, "pv2", like, True)
    c.execute("PRAGMA case_sensitive_like = 1")
    check(c, "pv2", like, True)
    c.execute("PRAGMA case_sensitive_like = 0")
    check(c, "pv2", like, True)


def test_attach_and_detach():
    c = connect(os.path.join(TMP, "attach_main.db"))
    for name, coll in (("x1", "NOCASE"), ("x2", "BINARY")):
        path = os.path.join(TMP, name + ".db")
        d = sqlite3.connect(path, isolation_level=None)
        d.execute("DROP TABLE IF EXISTS u")
        d.execute("CREATE TABLE u(g TEXT COLLATE %s, v INTEGER)" % coll)
        d.executemany("INSERT INTO u VALUES(?, ?)", [(WORDS[i % len(WORDS)], i) for i in range(50)])
        d.close()
    c.execute("ATTACH ? AS x", (os.path.join(TMP, "x1.db"),))
    sql = "SELECT count(*), sum(v) FROM u GROUP BY g"
    view(c, "pv", sql)
    check(c, "pv", sql, True)
    check(c, "pv", sql, False)
    # The same name, another file whose u has another collation.
    c.execute("DETACH x")
    c.execute("ATTACH ? AS x", (os.path.join(TMP, "x2.db"),))
    check(c, "pv", sql, True)
    # A database more: planned again (its tables may shadow none here,
    # but the cache cannot tell without planning).
    c.execute("ATTACH ? AS y", (os.path.join(TMP, "x1.db"),))
    check(c, "pv", sql, True)
    check(c, "pv", sql, False)


def test_other_connection_changes_the_schema():
    path = os.path.join(TMP, "other.db")
    if os.path.exists(path):
        os.remove(path)
    c = connect(path)
    fill(c)
    view(c, "pv", GROUPS)
    check(c, "pv", GROUPS, True)
    d = sqlite3.connect(path, isolation_level=None)
    d.execute("BEGIN")
    d.execute("DROP TABLE t")
    fill(d, coll="BINARY")
    # Not committed: this connection still sees the old table.
    check(c, "pv", GROUPS, False)
    d.execute("COMMIT")
    check(c, "pv", GROUPS, True)
    # Reading the new schema reset temp's too, and with it the view: SQLite
    # connects it again (which plans) at the next scan.
    check(c, "pv", GROUPS, None)
    check(c, "pv", GROUPS, False)
    d.execute("INSERT INTO t VALUES('q', 1)")
    check(c, "pv", GROUPS, False)
    d.close()


def test_parameters_each_their_own():
    c = connect()
    fill(c)
    sql = "SELECT g, count(*), sum(v) FROM t WHERE v > ? GROUP BY g"
    view(c, "pv", sql)
    check(c, "pv", sql, True, params=(10,))
    check(c, "pv", sql, True, params=(40,))
    check(c, "pv", sql, False, params=(10,))
    check(c, "pv", sql, False, params=(40,))
    check(c, "pv", sql, True, params=("10",))


def test_limits():
    c = connect()
    fill(c)
    view(c, "pv", GROUPS)
    check(c, "pv", GROUPS, True)
    check(c, "pv", GROUPS, False)
    # The SELECT returns two columns: now it does not prepare.
    c.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, 1)
    try:
        c.execute(GROUPS).fetchall()
        raise AssertionError("SQLite ran " + GROUPS)
    except sqlite3.Error as e:
        native_err = str(e)
    try:
        c.execute("SELECT * FROM pv").fetchall()
        raise AssertionError("the view ran " + GROUPS)
    except sqlite3.Error as e:
        assert native_err in str(e), (native_err, str(e))
    c.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, 100)
    check(c, "pv", GROUPS, True)


def test_views_dropped_and_connection_closed():
    """The cache keeps statements only while a view is there: dropping
    views and closing the connection leaves nothing behind."""
    c = connect()
    fill(c)
    view(c, "pv", GROUPS)
    view(c, "pv2", GROUPS)
    check(c, "pv", GROUPS, True)
    check(c, "pv2", GROUPS, False)
    c.execute("DROP TABLE pv")
    check(c, "pv2", GROUPS, True)
    c.execute("DROP TABLE pv2")
    assert c.execute("SELECT count(*) FROM t").fetchone()[0] == 60
    view(c, "pv", GROUPS)
    check(c, "pv", GROUPS, True)
    c.close()


sys.exit(run("plancache", globals()))
