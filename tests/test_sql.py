#!/usr/bin/python3
"""SQL-level tests of the extension, through Python's sqlite3 module and the
sqlite3 shell, as users load it.

    /usr/bin/python3 tests/test_sql.py ./parallel.so

Each test_* function is one case; the last line is "sql: N passed, N failed".
"""
import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

EXT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./parallel.so")


def connect(path=":memory:"):
    conn = sqlite3.connect(path)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.enable_load_extension(False)
    return conn


expect_error = harness.expect_error


def ncores():
    return len(os.sched_getaffinity(0))


# The default thread count is OMP_NUM_THREADS's when set (test_settings.py
# checks that); these tests expect the core count, whatever the caller's
# environment (the extension reads it when it loads, after this).
os.environ.pop("OMP_NUM_THREADS", None)


def test_version():
    v = connect().execute("SELECT par_version()").fetchone()[0]
    assert re.fullmatch(r"\d+\.\d+\.\d+", v), v
    # The CHANGELOG's newest entry is the version the library reports.
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    with open(os.path.join(root, "CHANGELOG.md")) as f:
        m = re.search(r"^## (\d+\.\d+\.\d+)", f.read(), re.M)
    assert m and m.group(1) == v, (m and m.group(1), v)


def test_config_defaults():
    c = connect()
    assert c.execute("SELECT par_config('threads')").fetchone()[0] == ncores()
    mem = c.execute("SELECT par_config('memory_mb')").fetchone()[0]
    assert isinstance(mem, int) and mem >= 64, mem
    assert c.execute("SELECT par_config('min_rows')").fetchone()[0] >= 0


def test_config_set():
    c = connect()
    for name, value in [("threads", 3), ("threads", 1), ("memory_mb", 100),
                        ("min_rows", 0), ("min_rows", 2**62)]:
        got = c.execute("SELECT par_config(?, ?)", (name, value)).fetchone()[0]
        assert got == value, (name, value, got)
        assert c.execute("SELECT par_config(?)", (name,)).fetchone()[0] == value
    # 0 threads means all cores, and reads back as the core count.
    assert c.execute("SELECT par_config('threads', 0)").fetchone()[0] == ncores()
    # Integral reals and integer text are accepted; names are case-blind.
    assert c.execute("SELECT par_config('THREADS', 2.0)").fetchone()[0] == 2
    assert c.execute("SELECT par_config('Min_Rows', '17')").fetchone()[0] == 17


def test_config_bad_values():
    c = connect()
    c.execute("SELECT par_config('threads', 2)")
    bad = [("threads", -1), ("threads", 1025), ("threads", "abc"), ("threads", None),
           ("threads", 1.5), ("threads", b"\x01"), ("memory_mb", 0),
           ("min_rows", -5), ("memory_mb", 1e300)]
    for name, value in bad:
        msg = expect_error(c, "SELECT par_config(?, ?)", "par_config: %s must be an integer"
                           % name, (name, value))
        assert "from" in msg and "to" in msg, msg
    # The value as the message shows it: a BLOB is not copied in as bytes,
    # which need not be text (helper-21's repro_8).
    for value, shown in [(-3, "not -3"), ("abc", "not 'abc'"), (None, "not NULL"),
                         (b"\xff\x00\xaa", "not a BLOB"), ("a\x00b", "a TEXT with a NUL")]:
        msg = expect_error(c, "SELECT par_config('threads', ?)", shown, (value,))
    # Nothing changed.
    assert c.execute("SELECT par_config('threads')").fetchone()[0] == 2


def test_config_bad_names():
    c = connect()
    expect_error(c, "SELECT par_config('thread')", "unknown setting 'thread'")
    expect_error(c, "SELECT par_config('nope', 3)", "unknown setting 'nope'")
    expect_error(c, "SELECT par_config(NULL)", "first argument must be a setting name")
    expect_error(c, "SELECT par_config(1)", "first argument must be a setting name")
    assert c.execute("SELECT par_config()").fetchone()[0].startswith("{\"threads\":")
    # A BLOB is no name, even one that spells a name, and neither is text
    # with a NUL byte inside (it used to be read up to the NUL).
    expect_error(c, "SELECT par_config(x'74687265616473', 2)", "first argument must be a setting")
    expect_error(c, "SELECT par_config(?, 2)", "first argument must be a setting",
                 ("threads\0junk",))
    assert c.execute("SELECT par_config('threads')").fetchone()[0] == ncores()
    expect_error(c, "SELECT par_config('threads', 1, 2)", "wrong number of arguments")


def test_config_per_connection():
    a, b = connect(), connect()
    a.execute("SELECT par_config('threads', 1)")
    assert b.execute("SELECT par_config('threads')").fetchone()[0] == ncores()
    assert a.execute("SELECT par_config('threads')").fetchone()[0] == 1


def test_config_not_in_views_or_triggers():
    """par_config changes state: SQLITE_DIRECTONLY keeps it out of schema
    objects that a stranger's database could carry."""
    c = connect()
    c.execute("CREATE VIEW v AS SELECT par_config('threads', 1) AS t")
    expect_error(c, "SELECT * FROM v", "unsafe use of par_config()")
    c.execute("CREATE TABLE t(x)")
    c.execute("CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
              "SELECT par_config('threads', 1); END")
    expect_error(c, "INSERT INTO t VALUES(1)", "unsafe use of par_config()")
    assert c.execute("SELECT count(*) FROM t").fetchone()[0] == 0
    assert c.execute("SELECT par_config('threads')").fetchone()[0] == ncores()
    # par_version is innocuous: fine in a view.
    c.execute("CREATE VIEW w AS SELECT par_version() AS v")
    assert c.execute("SELECT v FROM w").fetchone()[0]


def test_replace_function_then_close():
    """Replacing one of our functions drops only its reference to the shared
    settings; the others keep working and closing frees everything."""
    c = connect()
    c.create_function("par_config", 1, lambda x: 42)
    assert c.execute("SELECT par_config('threads')").fetchone()[0] == 42
    assert c.execute("SELECT par_config('threads', 1)").fetchone()[0] == 1
    assert c.execute("SELECT par_version()").fetchone()[0]
    c.close()


def test_load_twice():
    c = connect()
    c.execute("SELECT par_config('threads', 1)")
    c.enable_load_extension(True)
    c.load_extension(EXT)
    assert c.execute("SELECT par_config('threads')").fetchone()[0] == ncores()


def test_shell_load():
    """.load ./parallel in the sqlite3 shell, as the README shows."""
    d = os.path.dirname(EXT)
    name = os.path.splitext(os.path.basename(EXT))[0]
    out = subprocess.run(["sqlite3", ":memory:"], input=".load ./%s\nSELECT par_version();\n"
                         "SELECT par_config('threads', 1);\n" % name,
                         capture_output=True, text=True, cwd=d, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert re.fullmatch(r"\d+\.\d+\.\d+", lines[0]), out.stdout
    assert lines[1] == "1", out.stdout


def test_own_names_stay_inside():
    """SQLite opens extensions RTLD_GLOBAL, so a name the library exports can
    be taken by a library loaded before it (or take another's place): one
    loaded first that defines parTextArg() answering NULL made every
    function of ours reject its text argument.  Only the entry point is
    exported.  Run in a fresh process: a library's names bind once."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "clash.c")
        with open(src, "w") as f:
            f.write("#include <sqlite3ext.h>\n"
                    "SQLITE_EXTENSION_INIT1\n"
                    "const char *parTextArg(void *p){ return 0; }\n"
                    "int sqlite3_clash_init(sqlite3 *db, char **e, const sqlite3_api_routines *a){\n"
                    "  SQLITE_EXTENSION_INIT2(a); return SQLITE_OK; }\n")
        lib = os.path.join(tmp, "clash.so")
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", lib, src], check=True)
        script = ("import sqlite3, sys\n"
                  "c = sqlite3.connect(':memory:')\n"
                  "c.enable_load_extension(True)\n"
                  "c.load_extension(sys.argv[1])\n"
                  "c.load_extension(sys.argv[2])\n"
                  "print(c.execute(\"SELECT par_explain('SELECT 1')\").fetchone()[0])\n")
        out = subprocess.run(["/usr/bin/python3", "-c", script, lib, EXT],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("native"), out.stdout
    exported = subprocess.run(["nm", "-D", "--defined-only", EXT], capture_output=True,
                              text=True, check=True).stdout.split()
    # (older linkers also export the section markers and _init/_fini)
    linker = {"_init", "_fini", "__bss_start", "_edata", "_end"}
    names = [w for w in exported if w.isidentifier() and len(w) > 1 and w not in linker]
    assert names == ["sqlite3_parallel_init"], names


def test_threads_survive_close():
    """Closing the connection unloads nothing the OpenMP threads still run:
    a process that used several threads exits cleanly."""
    code = ("import sqlite3,sys\n"
            "c=sqlite3.connect(':memory:')\n"
            "c.enable_load_extension(True)\n"
            "c.load_extension(sys.argv[1])\n"
            "c.execute(\"SELECT par_config('min_rows',0), par_config('threads',3)\")\n"
            "c.execute('CREATE TABLE t(k,v)')\n"
            "c.execute('WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<50000)"
            " INSERT INTO t SELECT i%7, i FROM s')\n"
            "c.execute(\"CREATE VIRTUAL TABLE temp.v USING parallel('SELECT k, sum(v) FROM t GROUP BY k')\")\n"
            "assert len(c.execute('SELECT * FROM v').fetchall())==7\n"
            "c.close()\n")
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", code, EXT], capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, (out.returncode, out.stderr[-2000:])


def test_explain_and_profile():
    c = connect()
    c.execute("CREATE TABLE t(k, v)")
    c.executemany("INSERT INTO t VALUES(?, ?)", [(i % 3, i) for i in range(100)])
    plan = c.execute("SELECT par_explain('SELECT k, sum(v) FROM t GROUP BY k')").fetchone()[0]
    assert plan.startswith("scan      t:") and "\ngroup by  k;" in plan, plan
    assert "\naggregate sum(v)" in plan and "extract SQL" not in plan, plan
    plan = c.execute("SELECT par_explain('SELECT k, sum(v) FROM t GROUP BY k', 'verbose')"
                     ).fetchone()[0]
    assert "\nextract SQL: SELECT k, v FROM t\n" in plan and "\nfinal SQL:" in plan, plan
    assert "below min_rows (100000)" in plan, plan
    c.execute("SELECT par_config('min_rows', 50)")
    plan = c.execute("SELECT par_explain('SELECT k, sum(v) FROM t GROUP BY k')").fetchone()[0]
    assert "at or above min_rows (50)" in plan, plan
    c.execute("SELECT par_config('min_rows', 100000)")
    expect_error(c, "SELECT par_explain('SELECT 1', 'loud')", "must be 'verbose'")
    plan = c.execute("SELECT par_explain('SELECT k FROM t UNION SELECT v FROM t')").fetchone()[0]
    assert plan.startswith("native:") and "compound" in plan, plan
    prof = c.execute("SELECT par_profile('SELECT k, sum(v) FROM t GROUP BY k')").fetchone()[0]
    import json
    prof = json.loads(prof)
    assert prof["mode"] == "parallel" and prof["extract_rows"] == 100 and prof["groups"] == 3, prof
    assert prof["rows"] == 3, prof
    expect_error(c, "SELECT par_explain('SELECT nosuch FROM t')", "no such column: nosuch")
    expect_error(c, "SELECT par_explain('DELETE FROM t')", "not a read-only SELECT")
    expect_error(c, "SELECT par_profile(NULL)", "must be a SELECT")
    expect_error(c, "SELECT par_profile(?)", "must be a SELECT", ("SELECT 1\0; DELETE FROM t",))
    expect_error(c, "SELECT par_explain(?)", "must be a SELECT", ("SELECT k FROM t\0",))
    assert c.execute("SELECT count(*) FROM t").fetchone()[0] == 100


def test_sink_from_sql():
    """par_sink, the aggregate extraction feeds rows through, only takes the
    pointer the extension binds: from SQL, with any number of arguments, it
    is an error (with none it used to read a missing argument and crash)."""
    c = connect()
    c.execute("CREATE TABLE t(x)")
    c.executemany("INSERT INTO t VALUES(?)", [(i,) for i in range(5)])
    for args in ("", "1", "x", "x, x", "NULL, x, x"):
        expect_error(c, "SELECT par_sink(%s) FROM t" % args, "par_sink() is internal")
    expect_error(c, "SELECT par_sink()", "par_sink() is internal")
    assert c.execute("SELECT count(*) FROM t").fetchone()[0] == 5


# Parameters in SQLite's forms, with the Tcl array index ("$a(...)": up to
# the first ")", no space inside) that makes "(" and ")" part of the token
# ("#a(((" has no ")": an unrecognized token).
PARAMS = ["$a", "@a", ":a", "#a", "$a(x)", "@a(((()", ":a((((((((()", "#a(((", "$a::b(((()",
          "$::a(()", ":a::", "?", "?7"]


def test_parser_nasty_input():
    """SQL that SQLite reads other than token by token the way it looks
    ("$a((((()" is one parameter), that does not balance its parentheses,
    or that ends inside a string or comment: par_explain, par_profile and
    a view of it answer with rows or a clean SQLite error.  The parser used
    to split "$a(((()" into "(" tokens and walk past the end of its token
    array looking for their ")" (a crash)."""
    c = connect()
    c.execute("SELECT par_config('min_rows', 0)")
    c.execute("CREATE TABLE t(k, v)")
    c.executemany("INSERT INTO t VALUES(?, ?)", [(i % 3, i) for i in range(30)])
    nasty = ["", "   ", "-- only a comment", "/* only a comment */", "/* unterminated",
             ";", "(((", ")))", "SELECT", "SELECT (((", "SELECT count(*)) FROM t",
             "SELECT count(* FROM t", "SELECT sum(", "SELECT sum(v", "SELECT CAST(",
             "SELECT CAST(v AS", "SELECT 'abc", "SELECT \"abc", "SELECT [abc", "SELECT `abc",
             "SELECT x'ab", "SELECT count(*) FROM t /* open", "SELECT count(*) FROM t -- c",
             "SELECT count(*) FROM t )", "SELECT count(*) FROM t; (((",
             "SELECT k, count(*) FROM t GROUP BY k (((", "SELECT k FROM t GROUP BY (k",
             "SELECT k, count(*) FROM t GROUP BY k ORDER BY 1 LIMIT (((",
             "SELECT k, sum(v) FROM t GROUP BY k HAVING sum(v) > ((",
             "SELECT $a((((((((( ) FROM t", "SELECT $a(x y), count(*) FROM t", "SELECT $a(",
             "SELECT $ FROM t", "SELECT @ FROM t", "SELECT $::, count(*) FROM t"]
    for p in PARAMS:
        nasty += ["SELECT %s FROM t" % p,
                  "SELECT count(*), %s FROM t" % p,
                  "SELECT k, sum(v), %s AS x FROM t GROUP BY k" % p,
                  "SELECT k, sum(v) FROM t GROUP BY k HAVING %s IS NULL OR 1" % p,
                  "SELECT k, count(*) FROM t GROUP BY k ORDER BY %s, k" % p,
                  "SELECT k, count(%s) FROM t WHERE %s IS NULL GROUP BY k" % (p, p),
                  "SELECT k, max(v) FROM t GROUP BY k, %s" % p,
                  "SELECT k, count(*) FROM t GROUP BY k LIMIT coalesce(%s, 2)" % p]
    for sql in nasty:
        for q in ("SELECT par_explain(?)", "SELECT par_profile(?)"):
            try:
                c.execute(q, (sql,)).fetchall()
            except sqlite3.Error:
                pass
        try:
            c.execute("CREATE VIRTUAL TABLE temp.v USING parallel(%s)"
                      % ("'" + sql.replace("'", "''") + "'"))
        except sqlite3.Error:
            continue
        # Each parameter is a hidden column: bound to NULL, the view's rows
        # are the native ones with NULL in its place; left unbound, the scan
        # fails and says which.
        native = sql
        for p in sorted(PARAMS, key=len, reverse=True):
            native = native.replace(p, "NULL")
        nhidden = c.execute("SELECT count(*) FROM pragma_table_xinfo('v') "
                            "WHERE hidden").fetchone()[0]
        scan = "SELECT * FROM v"
        if nhidden:
            scan = "SELECT * FROM v(%s)" % ", ".join(["NULL"] * nhidden)
            expect_error(c, "SELECT * FROM v", "is not bound")
        outcome = []
        for q in (scan, native):
            try:
                outcome.append(sorted(map(repr, c.execute(q).fetchall())))
            except sqlite3.Error as e:
                outcome.append("error: %s" % e)
        c.execute("DROP TABLE temp.v")
        assert outcome[0] == outcome[1], (sql, outcome)
    # The parser follows such statements: they are accelerated.
    for p in ["$a(x)", "@a(((()", ":a((((((((()", "$a::b(((()", "$::a(()"]:
        plan = c.execute("SELECT par_explain(?)", ("SELECT k, sum(v), %s AS x FROM t GROUP BY k"
                                                   % p,)).fetchone()[0]
        assert plan.startswith("scan "), (p, plan)
    assert c.execute("SELECT count(*) FROM t").fetchone()[0] == 30



def test_collation_names_like_final_sql():
    """The final SQL names par_rows columns "_p<aff><coll><n>".  The
    planner used to write "_p??<n>" for a bare column, then patch the text
    by searching it for "?" (the letters) and "_p" (the column number), so
    an application collation named "a?b" in an aggregate's argument had a
    byte read from before an array written into its name (the final SQL no
    longer prepared) and "a?99999999" read far past the array (a crash).
    With such collations in aggregate arguments, GROUP BY, ORDER BY and
    bare columns, each view returns the native rows (as a multiset) and its
    final SQL names the collation as written."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import test_views as views
    names = ["a?b", "a?9", "a?99999999", "?", "??1", "_p??0", "_pn1", "_pnb0", "x_p3",
             "_pnb", "P_Pt2", "a\"?b"]
    c = connect()
    c.execute("SELECT par_config('min_rows', 0)")
    for i, name in enumerate(names):
        if i % 2:
            c.create_collation(name, lambda a, b: (a < b) - (a > b))        # reversed
        else:
            c.create_collation(name, lambda a, b: (a.lower() > b.lower()) - (a.lower() < b.lower()))
    c.execute("CREATE TABLE t(g INTEGER, n INTEGER, x TEXT)")
    words = ["a", "B", "b", "A", "c", "C ", None, "ab", "Ab"]
    c.executemany("INSERT INTO t VALUES(?, ?, ?)",
                  [(i % 4, (i * 7) % 11, words[(i * 5) % len(words)]) for i in range(60)])
    queries = [  # (SQL with {c} for the quoted name, whether {c} is inside an aggregate)
        ("SELECT g, max(x COLLATE {c}) FROM t GROUP BY g", True),
        ("SELECT max(x COLLATE {c}), min(n COLLATE {c}) FROM t", True),
        ("SELECT g, max(n COLLATE {c}) AS m, sum(n) FROM t GROUP BY g", True),
        ("SELECT g, min(x COLLATE {c}), count(*) FROM t GROUP BY g "
         "ORDER BY min(x COLLATE {c}), g", True),
        ("SELECT g, max(n COLLATE {c}) FROM t GROUP BY g HAVING max(n COLLATE {c}) > 8", True),
        ("SELECT n % 3 AS k, max(n COLLATE {c}), sum(n) FROM t GROUP BY k "
         "ORDER BY max(n COLLATE {c}) DESC, k", True),
        ("SELECT g, count(DISTINCT x COLLATE {c}) FROM t GROUP BY g", True),
        ("SELECT g, max(n COLLATE {c}), n FROM t GROUP BY g", True),
        ("SELECT g, group_concat(x COLLATE {c}, '|') FROM t GROUP BY g", True),
        ("SELECT x COLLATE {c}, count(*) FROM t GROUP BY x COLLATE {c}", False),
        ("SELECT g, count(*) FROM t GROUP BY g ORDER BY g COLLATE {c}", False),
        ("SELECT g, max(n), x COLLATE {c} FROM t GROUP BY g", False),
        ("SELECT g + 1, count(*) FROM t GROUP BY g + 1 ORDER BY max(x COLLATE {c})", True),
    ]
    for name in names:
        quoted = '"%s"' % name.replace('"', '""')
        for q, in_agg in queries:
            sql = q.format(c=quoted)
            plan = views.explain(c, sql)
            assert "does not prepare" not in plan, (sql, plan)
            if in_agg and plan.startswith("extract:"):
                final = [ln for ln in plan.splitlines() if ln.startswith("final")][0]
                assert "COLLATE %s" % quoted in final, (sql, plan)
            native = views.run_native(c, sql)
            assert native[0] == "ok", (sql, native)
            why = views.compare(native, views.run_view(c, sql), False, 1e-9)
            assert why is None, (sql, why)


def main():
    return harness.run("sql", globals())


if __name__ == "__main__":
    sys.exit(main())
