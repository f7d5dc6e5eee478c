"""Parameterised parallel views and par_view(), against SQLite itself.

    /usr/bin/python3 tests/test_params.py ./parallel.so

A view's SELECT may hold parameters (?, ?NNN, :name, @name, $name); each
is a HIDDEN column of the view, bound by SQLite's table-valued syntax
(SELECT * FROM v(2020)) or by = / IS on the column.  Every case here runs
the same SELECT natively with the same values bound by sqlite3_bind_* and
compares: the rows as multisets (in order where the SELECT orders them,
REAL values bit for bit), on random data full of NULLs, mixed storage
classes, duplicates and NOCASE text, with values of every type bound
(NULL, integers, reals, numeric and other text, blobs, extremes), at 1
and 3 threads, from an in-memory database (serial extraction) and from a
file (parallel extraction and the columnar cache, where two bindings must
never share an entry).  Then the errors: a scan that leaves a parameter
unbound, par_view's bad arguments (which change nothing), par_profile's.
"""
import os
import random
import sqlite3
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import expect_error, run  # noqa: E402

EXT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./parallel.so")
TMP = tempfile.mkdtemp(prefix="par_params_")


def connect(path=":memory:"):
    c = sqlite3.connect(path, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(EXT)
    return c


def key(v):
    """A value as a comparable, exact token (REALs by their bits)."""
    if isinstance(v, float):
        return ("r", struct.pack("<d", v))
    return (type(v).__name__, v)


def rows_key(rows):
    return [tuple(key(v) for v in r) for r in rows]


def fill(c, n, seed, extremes=True):
    rnd = random.Random(seed)
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, g, s TEXT COLLATE NOCASE, x, r REAL)")
    words = ["a", "A", "b", "B ", "abc", "Abc", "", "10", "9"]
    rows = []
    for i in range(n):
        g = rnd.choice([None, 1, 2, 2.0, 3, "2", "x", b"\x01", -7])
        s = rnd.choice([None] + words)
        x = rnd.choice([None, rnd.randint(-50, 50), rnd.randint(-50, 50) + 0.5, str(rnd.randint(0, 20)),
                        "t%d" % rnd.randint(0, 3)] + ([2**62, -2**63] if extremes else []))
        r = rnd.choice([None, rnd.uniform(-100, 100), 0.1, -0.0, float(rnd.randint(0, 9))])
        rows.append((i + 1, g, s, x, r))
    c.executemany("INSERT INTO t VALUES(?, ?, ?, ?, ?)", rows)


# Query shapes; {a}, {b}, {c} are parameter slots, filled with one style.
SHAPES = [
    ("SELECT g, count(*), sum(x) FROM t WHERE x > {a} GROUP BY g", 1),
    ("SELECT s, count(*) AS n, total(r) FROM t WHERE id % 7 <> {a} OR s = {b} GROUP BY s", 2),
    ("SELECT g, max(x), min(s) FROM t GROUP BY g HAVING count(*) > {a} ORDER BY g", 1),
    ("SELECT g, sum(r), count(DISTINCT s) FROM t WHERE r < {a} GROUP BY g "
     "ORDER BY 2 DESC, 1 LIMIT {b}", 2),
    ("SELECT coalesce(g, {a}) AS k, count(*), group_concat(s, {b}) FROM t GROUP BY k", 2),
    ("SELECT g, sum(x * {a}), avg(r + {b}) FROM t GROUP BY g", 2),
    ("SELECT count(*), sum(id), {a} AS tag FROM t WHERE s >= {b} AND s < {c}", 3),
    ("SELECT g, count(*) FROM t WHERE x = {a} OR {a} IS NULL GROUP BY g", 1),
    ("SELECT s, max(r) FROM t WHERE g IN ({a}, {b}) GROUP BY s ORDER BY s LIMIT 5 OFFSET {c}", 3),
    ("SELECT id % 5 AS m, sum(x) FROM t WHERE id BETWEEN {a} AND {b} GROUP BY m", 2),
    # Shapes that run natively inside the view bind the same values.
    ("SELECT id, x FROM t WHERE x > {a} ORDER BY id LIMIT {b}", 2),
    ("SELECT g FROM t WHERE id < {a} UNION SELECT {b}", 2),
    ("SELECT id, sum(id) OVER (ORDER BY id) FROM t WHERE id < {a} ORDER BY id", 1),
]

STYLES = [
    ("?", lambda k: "?"),
    ("?NNN", lambda k: "?%d" % (k + 1)),
    ("?NNN reversed", lambda k: "?%d" % (3 - k)),
    (":name", lambda k: ":p%s" % "abc"[k]),
    ("@name", lambda k: "@p%s" % "abc"[k]),
    ("$name", lambda k: "$p%s" % "abc"[k]),
    ("mixed", lambda k: [":lo", "@mid", "$hi"][k]),
]

VALUES = [None, 0, 1, 3, -1, 10, 2**63 - 1, -2**63, 0.5, -0.0, 1e308, float("inf"),
          "2", "5.0", "abc", "A", "", b"\x01", b""]


def shape_sql(shape, nslot, style):
    """The shape's SQL in one style, and the parameter numbers SQLite gives
    it: ?NNN its number, a name or ? one more than the highest so far (a
    name seen before keeps its number)."""
    sql = shape.format(**{"abc"[k]: "\0%d\0" % k for k in range(nslot)})
    parts = sql.split("\0")
    out, nums, seen, top = [], [], {}, 0
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(part)
            continue
        name = style(int(part))
        if name == "?":
            num = top + 1
        elif name.startswith("?"):
            num = int(name[1:])
        else:
            num = seen.get(name) or top + 1
            seen[name] = num
        top = max(top, num)
        if num not in nums:
            nums.append(num)
        out.append(name)
    return "".join(out), sorted(nums)


def native_rows(c, sql, bound):
    """sql run by SQLite with bound[i] bound to parameter number i+1."""
    return c.execute(sql, bound).fetchall()


def hidden_columns(c, view):
    return [r[0] for r in c.execute("SELECT name FROM pragma_table_xinfo(?) WHERE hidden",
                                    (view,))]


def compare(c, sql, view_sql, args, bound, label, fails):
    ordered = "ORDER BY" in sql
    try:
        want = native_rows(c, sql, bound)
        want_err = None
    except sqlite3.Error as e:
        want, want_err = None, str(e)
    try:
        got = c.execute(view_sql, args).fetchall()
        got_err = None
    except sqlite3.Error as e:
        got, got_err = None, str(e)
    if want_err or got_err:
        if not (want_err and got_err and want_err in got_err):
            fails.append("%s: %s %r: native %r, view %r" % (label, sql, bound, want_err, got_err))
        return
    a, b = rows_key(want), rows_key(got)
    if not ordered:
        a, b = sorted(a), sorted(b)
    if a != b:
        fails.append("%s: %s with %r via %s\n  native %r\n  view   %r"
                     % (label, sql, bound, view_sql, want[:6], got[:6]))


def run_cases(c, label, seed, nvalues=4):
    """Every shape in every style: the view bound by v(...) and by WHERE,
    through CREATE VIRTUAL TABLE and par_view, against SQLite."""
    rnd = random.Random(seed)
    fails = []
    ncase = 0
    for shape, nslot in SHAPES:
        for sname, style in STYLES:
            sql, nums = shape_sql(shape, nslot, style)
            nmax = max(nums)
            if rnd.random() < 0.5:
                c.execute("DROP TABLE IF EXISTS temp.v")
                c.execute("CREATE VIRTUAL TABLE temp.v USING parallel(%s)"
                          % ("'" + sql.replace("'", "''") + "'"))
            else:
                assert c.execute("SELECT par_view('v', ?)", (sql,)).fetchone()[0] == "v"
            hid = hidden_columns(c, "v")
            assert len(hid) == len(nums), (sql, hid, nums)
            for _ in range(nvalues):
                vals = [rnd.choice(VALUES) for _ in nums]
                bound = [None] * nmax
                for n, v in zip(nums, vals):
                    bound[n - 1] = v
                # v(...) binds hidden columns in parameter-number order.
                ncase += 1
                compare(c, sql, "SELECT * FROM v(%s)" % ", ".join("?" * len(vals)), vals, bound,
                        label + " " + sname + " v(...)", fails)
                # WHERE binds by name: = for values, IS for NULL.
                conds = " AND ".join('"%s" %s ?' % (h, "IS" if v is None else "=")
                                     for h, v in zip(hid, vals))
                ncase += 1
                compare(c, sql, "SELECT * FROM v WHERE " + conds, vals, bound,
                        label + " " + sname + " WHERE", fails)
            c.execute("DROP TABLE temp.v")
    assert not fails, "%d of %d cases differ:\n%s" % (len(fails), ncase, "\n".join(fails[:8]))
    return ncase


def test_memory_database_every_style():
    c = connect()
    fill(c, 400, 1)
    for threads in (1, 3):
        c.execute("SELECT par_config('threads', ?)", (threads,))
        c.execute("SELECT par_config('min_rows', 0)")
        run_cases(c, "memory/%d threads" % threads, 10 + threads)
    c.close()


def test_file_database_parallel_and_cache():
    path = os.path.join(TMP, "params.db")
    c = connect(path)
    c.execute("PRAGMA journal_mode=WAL")
    fill(c, 3000, 2)
    c.execute("SELECT par_config('min_rows', 0)")
    for threads in (1, 3):
        c.execute("SELECT par_config('threads', ?)", (threads,))
        run_cases(c, "file/%d threads" % threads, 20 + threads, nvalues=3)
    # The cache keeps one entry per binding: alternate values many times.
    sql = "SELECT g, count(*), total(r), sum(id) FROM t WHERE x > :lo GROUP BY g"
    c.execute("SELECT par_view('w', ?)", (sql,))
    for i in range(12):
        lo = [0, 10, "5", 2.5, None][i % 5]
        want = sorted(rows_key(c.execute(sql, {"lo": lo}).fetchall()))
        got = sorted(rows_key(c.execute("SELECT * FROM w(?)", (lo,)).fetchall()))
        assert got == want, (lo, got, want)
    prof = c.execute("SELECT par_profile(?, 10)", (sql,)).fetchone()[0]
    assert '"extract":"cached"' in prof, prof
    # A commit makes every binding's entry stale.
    c.execute("UPDATE t SET x = 100 WHERE id % 3 = 0")
    for lo in (0, 10):
        want = sorted(rows_key(c.execute(sql, {"lo": lo}).fetchall()))
        got = sorted(rows_key(c.execute("SELECT * FROM w(?)", (lo,)).fetchall()))
        assert got == want, (lo, got, want)
    c.close()


def test_repeated_scans_bind_per_scan():
    """One statement scanning the view with several bindings: a correlated
    subquery, a join, a UNION ALL; each scan gets its own values."""
    c = connect()
    fill(c, 500, 3, extremes=False)
    c.execute("SELECT par_config('min_rows', 0)")
    c.execute("CREATE TABLE o(k)")
    c.executemany("INSERT INTO o VALUES(?)", [(v,) for v in (-10, 0, 5, 5, "3", None, 20.5)])
    c.execute("SELECT par_view('v', 'SELECT g, count(*) AS n, sum(x) AS sx FROM t "
              "WHERE x > :lo GROUP BY g')")
    base = "(SELECT g, count(*) AS n, sum(x) AS sx FROM t WHERE x > o.k GROUP BY g)"
    cases = [
        ("SELECT k, (SELECT sum(n) FROM v WHERE lo = o.k) FROM o",
         "SELECT k, (SELECT sum(n) FROM %s) FROM o" % base),
        ("SELECT k, (SELECT count(*) FROM v(o.k)) FROM o",
         "SELECT k, (SELECT count(*) FROM %s) FROM o" % base),
        ("SELECT o.k, v.g, v.n, v.sx FROM o, v WHERE v.lo = o.k", None),
        ("SELECT * FROM v(0) UNION ALL SELECT * FROM v(10) UNION ALL SELECT * FROM v('x')",
         "SELECT g, count(*), sum(x) FROM t WHERE x > 0 GROUP BY g UNION ALL "
         "SELECT g, count(*), sum(x) FROM t WHERE x > 10 GROUP BY g UNION ALL "
         "SELECT g, count(*), sum(x) FROM t WHERE x > 'x' GROUP BY g"),
    ]
    for got_sql, want_sql in cases:
        got = sorted(rows_key(c.execute(got_sql).fetchall()))
        if want_sql is None:
            # The join: each outer row's own binding, computed row by row.
            want = []
            for (k,) in c.execute("SELECT k FROM o").fetchall():
                for r in c.execute("SELECT g, count(*), sum(x) FROM t WHERE x > ? GROUP BY g",
                                   (k,)).fetchall():
                    want.append((k,) + r)
            want = sorted(rows_key(want))
        else:
            want = sorted(rows_key(c.execute(want_sql).fetchall()))
        assert got == want, (got_sql, got[:5], want[:5])
    # The hidden column reads back the value bound.
    got = c.execute("SELECT DISTINCT lo, typeof(lo) FROM v('7')").fetchall()
    assert got in ([], [("7", "text")]), got
    got = c.execute("SELECT DISTINCT lo, typeof(lo) FROM v(-100)").fetchall()
    assert got == [(-100, "integer")], got
    c.close()


def ab_table(n, mod):
    """A connection with t(a, b): n rows (i % mod, i)."""
    c = connect()
    c.execute("CREATE TABLE t(a, b)")
    c.executemany("INSERT INTO t VALUES(?, ?)", [(i % mod, i) for i in range(n)])
    return c


def test_hidden_column_names():
    c = connect()
    c.execute("CREATE TABLE t(a, lo, p1)")
    c.execute("INSERT INTO t VALUES(1, 2, 3)")
    c.execute("CREATE VIRTUAL TABLE temp.v USING parallel('SELECT lo, p1, count(*) FROM t "
              "WHERE a > :lo OR a = ? OR a = @lo OR a = ?7 OR a = $x::y GROUP BY lo, p1')")
    cols = c.execute("SELECT name, hidden FROM pragma_table_xinfo('v')").fetchall()
    # :lo and @lo are two parameters; ? is number 2; ?7 leaves 4..6 unused.
    assert cols == [("lo", 0), ("p1", 0), ("count(*)", 0), ("lo:1", 1), ("p2", 1),
                    ("lo:2", 1), ("p7", 1), ("x::y", 1)], cols
    got = c.execute("SELECT * FROM v(0, NULL, NULL, NULL, NULL)").fetchall()
    assert got == [(2, 3, 1)], got
    got = c.execute('SELECT * FROM v WHERE "lo:1" = 5 AND p2 = 1 AND "lo:2" IS NULL '
                    'AND p7 IS NULL AND "x::y" IS NULL').fetchall()
    assert got == [(2, 3, 1)], got
    # A visible column named like a parameter is still the visible one.
    got = c.execute("SELECT lo FROM v(0, 0, 0, 0, 0)").fetchall()
    assert got == [(2,)], got
    c.close()


def test_unbound_parameter_is_an_error():
    c = ab_table(30, 3)
    c.execute("CREATE VIRTUAL TABLE temp.v USING parallel('SELECT a, sum(b) FROM t "
              "WHERE b > :lo AND b < :hi GROUP BY a')")
    for sql in ["SELECT * FROM v", "SELECT * FROM v(5)", "SELECT * FROM v WHERE lo = 5",
                "SELECT * FROM v WHERE lo > 5 AND hi = 9", "SELECT * FROM v WHERE hi = 20"]:
        msg = expect_error(c, sql, "is not bound")
        assert ("parameter :lo" in msg) or ("parameter :hi" in msg), msg
        assert "parallel view v" in msg, msg
    # Both bound, either way: rows.
    assert len(c.execute("SELECT * FROM v(5, 20)").fetchall()) == 3
    assert len(c.execute("SELECT * FROM v WHERE hi = 20 AND lo = 5").fetchall()) == 3
    # Two = constraints on one parameter: the first binds, SQLite checks the
    # other against the value bound (no row passes 5 = 6).
    assert c.execute("SELECT * FROM v WHERE lo = 5 AND lo = 6 AND hi = 20").fetchall() == []
    # A view without parameters keeps no hidden column.
    c.execute("CREATE VIRTUAL TABLE temp.w USING parallel('SELECT a, count(*) FROM t GROUP BY a')")
    assert c.execute("SELECT count(*) FROM pragma_table_xinfo('w') WHERE hidden").fetchone()[0] == 0
    c.close()


def test_par_view():
    c = ab_table(40, 4)
    # No doubled quotes when the SELECT is bound.
    sql = "SELECT a, group_concat(b, ', ') AS l, 'it''s' AS q FROM t WHERE b % 2 = 0 GROUP BY a"
    assert c.execute("SELECT par_view('Rep', ?)", (sql,)).fetchone()[0] == "Rep"
    assert sorted(c.execute("SELECT * FROM rep").fetchall()) == sorted(c.execute(sql).fetchall())
    ddl = c.execute("SELECT sql FROM sqlite_temp_schema WHERE name = 'Rep'").fetchone()[0]
    assert "USING parallel(" in ddl, ddl
    # Replacing a parallel view of that name (any case).
    assert c.execute("SELECT par_view('rep', 'SELECT count(*) FROM t')").fetchone()[0] == "rep"
    assert c.execute("SELECT * FROM rep").fetchall() == [(40,)]

    def snapshot():
        return (c.execute("SELECT type, name, sql FROM sqlite_temp_schema ORDER BY name").fetchall(),
                c.execute("SELECT * FROM rep").fetchall())
    before = snapshot()
    # Errors change nothing: the old view stays.
    expect_error(c, "SELECT par_view('rep', 'SELECT nosuch FROM t')", "no such column: nosuch")
    expect_error(c, "SELECT par_view('rep', 'DELETE FROM t')", "not a read-only SELECT")
    expect_error(c, "SELECT par_view('rep', 'SELECT 1; SELECT 2')", "only a single SELECT")
    expect_error(c, "SELECT par_view('rep', NULL)", "second argument must be a SELECT")
    expect_error(c, "SELECT par_view('rep', 5)", "second argument must be a SELECT")
    expect_error(c, "SELECT par_view(NULL, 'SELECT 1')", "first argument must be the view's name")
    expect_error(c, "SELECT par_view('', 'SELECT 1')", "first argument must be the view's name")
    expect_error(c, "SELECT par_view(x'00', 'SELECT 1')", "first argument must be the view's name")
    expect_error(c, "SELECT par_view('rep')", "wrong number of arguments")
    expect_error(c, "SELECT par_view('main.rep', 'SELECT 1')", "without a schema")
    expect_error(c, "SELECT par_view('temp.rep', 'SELECT 1')", "without a schema")
    assert snapshot() == before
    # A name held by a table or view of another kind is refused.
    c.execute("CREATE TEMP TABLE plain(x)")
    c.execute("CREATE TEMP VIEW tv AS SELECT 1")
    expect_error(c, "SELECT par_view('plain', 'SELECT 1')", "not a parallel view")
    expect_error(c, "SELECT par_view('TV', 'SELECT 1')", "not a parallel view")
    # Nor may the view hide a table of another schema (the one it reads).
    expect_error(c, "SELECT par_view('T', 'SELECT count(*) FROM t')",
                 "main.T exists: a view temp.T would hide it")
    c.execute("ATTACH ':memory:' AS aux")
    c.execute("CREATE TABLE aux.other(x)")
    expect_error(c, "SELECT par_view('other', 'SELECT 1')", "aux.other exists")
    assert c.execute("SELECT count(*) FROM plain").fetchone()[0] == 0
    # Names needing quotes.
    assert c.execute("SELECT par_view('my view\"x', 'SELECT a FROM t LIMIT 1')").fetchone()[0] \
        == 'my view"x'
    assert c.execute('SELECT count(*) FROM "my view""x"').fetchone()[0] == 1
    # Inside a transaction: the view is made and the transaction goes on.
    c.execute("BEGIN")
    c.execute("INSERT INTO t VALUES(9, 9)")
    c.execute("SELECT par_view('tx', 'SELECT count(*) FROM t')")
    assert c.execute("SELECT * FROM tx").fetchall() == [(41,)]
    c.execute("ROLLBACK")
    assert c.execute("SELECT count(*) FROM t").fetchone()[0] == 40
    # Never from a trigger or a view (it changes the schema).
    c.execute("CREATE VIEW mk AS SELECT par_view('z', 'SELECT 1')")
    expect_error(c, "SELECT * FROM mk", "unsafe use of par_view")
    # Dropping the view it reads from the statement that reads it fails,
    # and the view stays as it was.
    expect_error(c, "SELECT par_view('rep', 'SELECT 2') FROM rep", "par_view: database table is locked")
    assert c.execute("SELECT * FROM rep").fetchall() == [(40,)]
    c.close()


def test_profile_and_explain_with_parameters():
    c = ab_table(40, 4)
    sql = "SELECT a, sum(b) FROM t WHERE b > :lo GROUP BY a HAVING count(*) > ?"
    plan = c.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
    assert "WHERE b > :lo" in plan and "par_p" not in plan, plan
    plan = c.execute("SELECT par_explain(?, 'verbose')", (sql,)).fetchone()[0]
    assert "par_p" not in plan and "> ?" in plan, plan
    import json
    prof = json.loads(c.execute("SELECT par_profile(?, 20, 3)", (sql,)).fetchone()[0])
    want = c.execute(sql, (20, 3)).fetchall()
    assert prof["rows"] == len(want) and prof["extract_rows"] == 19, (prof, want)
    # Unbound ones read as NULL, as in SQLite.
    prof = json.loads(c.execute("SELECT par_profile(?)", (sql,)).fetchone()[0])
    assert prof["rows"] == 0, prof
    expect_error(c, "SELECT par_profile(?, 1, 2, 3)", "3 values for a SELECT of 2 parameters",
                 (sql,))
    expect_error(c, "SELECT par_profile()", "first argument must be a SELECT")
    c.close()


if __name__ == "__main__":
    sys.exit(run("params", globals()))
