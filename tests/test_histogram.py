#!/usr/bin/python3
"""Tests of par_histogram (table-valued and aggregate), par_median and
par_percentile against plain SQL that SQLite evaluates itself.

    /usr/bin/python3 tests/test_histogram.py ./parallel.so

The oracles:
  - edges: the documented formulas, evaluated by SQLite (equal width), or
    ORDER BY .. LIMIT 1 OFFSET .. over the finite numbers (quantiles);
  - counts: GROUP BY over a CASE that compares each value with the edges
    (as SQLite compares INTEGER with REAL: exactly);
  - percentiles: the interpolation of percentile.c over ORDER BY .. OFFSET;
and every answer must be bit-identical at 1, 2 and 3 threads.

Each test_* function is one case; the last line is
"histogram: N passed, N failed".  HIST_SEED changes the random data.
"""
import json
import math
import os
import random
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

EXT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./parallel.so")
SEED = int(os.environ.get("HIST_SEED", "20261101"))
FINITE = "typeof(x) IN ('integer', 'real') AND x > -1e999 AND x < 1e999"


def connect(path=":memory:"):
    conn = sqlite3.connect(path)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.enable_load_extension(False)
    conn.execute("SELECT par_config('min_rows', 0)")
    return conn


expect_error = harness.expect_error


def exact(rows):
    """Rows with floats as their bits, so -0.0 != 0.0 and nothing rounds."""
    return [tuple(v.hex() if isinstance(v, float) else v for v in r) for r in rows]


def at_threads(conn, sql, params=()):
    """The rows of sql, checked to be bit-identical at 1, 2 and 3 threads."""
    out = None
    for t in (1, 2, 3):
        conn.execute("SELECT par_config('threads', ?)", (t,))
        rows = conn.execute(sql, params).fetchall()
        if out is None:
            out = rows
        else:
            assert exact(rows) == exact(out), "threads=%d differs:\n%r\n%r" % (t, rows, out)
    conn.execute("SELECT par_config('threads', 0)")
    return out


def below(v):
    """The greatest double <= v (v an int or a float)."""
    if isinstance(v, float):
        return v
    f = float(v)
    return f if f <= v else math.nextafter(f, -math.inf)


def above(v):
    if isinstance(v, float):
        return v
    f = float(v)
    return f if f >= v else math.nextafter(f, math.inf)


# ---- the oracles: plain SQL ---------------------------------------------------

def sql_uniform_edges(conn, lo, hi, n):
    """Edges of n equal-width bins over [lo, hi], by the README's formula,
    computed by SQLite."""
    if math.isinf(hi - lo):
        expr = "min(2 * (?1/2 + b * ((?2/2 - ?1/2) / ?3)), ?2)"
    else:
        expr = "min(?1 + b * ((?2 - ?1) / ?3), ?2)"
    mid = conn.execute(
        "WITH RECURSIVE s(b) AS (SELECT 1 UNION ALL SELECT b + 1 FROM s WHERE b < ?3) "
        "SELECT %s FROM s WHERE b < ?3 ORDER BY b" % expr, (lo, hi, n)).fetchall()
    # No edge is -0.0.
    return [e + 0.0 for e in [lo] + [r[0] for r in mid] + [hi]]


def sql_range(conn, src):
    """min and max of the finite numbers of src (column x), rounded out."""
    mn, mx = conn.execute("SELECT min(x), max(x) FROM (%s) WHERE %s" % (src, FINITE)).fetchone()
    if mn is None:
        return None
    return below(mn), above(mx)


def sql_quantile_edges(conn, src, n):
    cnt = conn.execute("SELECT count(*) FROM (%s) WHERE %s" % (src, FINITE)).fetchone()[0]
    if cnt == 0:
        return None
    edges = []
    for b in range(n):
        v = conn.execute("SELECT x FROM (%s) WHERE %s ORDER BY x LIMIT 1 OFFSET ?" % (src, FINITE),
                         (b * cnt // n,)).fetchone()[0]
        edges.append(below(v) + 0.0)
    mx = conn.execute("SELECT max(x) FROM (%s) WHERE %s" % (src, FINITE)).fetchone()[0]
    edges.append(above(mx) + 0.0)
    return edges


def sql_counts(conn, src, edges):
    """Counts per kind and bin: GROUP BY over a CASE comparing x with the
    edges.  edges None: no bins (only infinities can be numbers then)."""
    if edges is None:
        case = ("CASE WHEN x IS NULL THEN 'null' WHEN typeof(x) IN ('text', 'blob') "
                "THEN 'other' WHEN x < 0 THEN 'under' ELSE 'over' END")
        params = ()
    else:
        n = len(edges) - 1
        whens = ["WHEN x IS NULL THEN 'null'", "WHEN typeof(x) IN ('text', 'blob') THEN 'other'",
                 "WHEN x < ?1 THEN 'under'"]
        whens += ["WHEN x < ?%d THEN %d" % (b + 2, b) for b in range(n - 1)]
        whens.append("WHEN x <= ?%d THEN %d" % (n + 1, n - 1))
        case = "CASE %s ELSE 'over' END" % " ".join(whens)
        params = tuple(edges)
    rows = conn.execute("SELECT %s AS k, count(*) FROM (%s) GROUP BY k" % (case, src),
                        params).fetchall()
    return dict(rows)


def sql_bins_by_subquery(conn, src, edges):
    """Counts per bin of x in [e0, en] another way: the bin of x is the
    greatest b whose lower edge is <= x (the top edge closes the last)."""
    conn.execute("DROP TABLE IF EXISTS temp.e")
    conn.execute("CREATE TEMP TABLE e(b INTEGER PRIMARY KEY, lo REAL)")
    conn.executemany("INSERT INTO temp.e VALUES(?, ?)", list(enumerate(edges[:-1])))
    rows = conn.execute(
        "SELECT (SELECT max(b) FROM temp.e WHERE lo <= x) AS k, count(*) FROM (%s) "
        "WHERE typeof(x) IN ('integer', 'real') AND x >= ?1 AND x <= ?2 GROUP BY k" % src,
        (edges[0], edges[-1])).fetchall()
    return dict(rows)


def expected_rows(edges, counts, total):
    """The rows par_histogram must return, in its order."""
    out = []

    def add(b, lo, hi, cnt, kind):
        out.append([b, lo, hi, cnt, 0, None, kind])
    if counts.get("null"):
        add(None, None, None, counts["null"], "null")
    if counts.get("under"):
        add(None, None, edges[0] if edges else None, counts["under"], "under")
    if edges:
        for b in range(len(edges) - 1):
            add(b, edges[b], edges[b + 1], counts.get(b, 0), "bin")
    if counts.get("over"):
        add(None, edges[-1] if edges else None, None, counts["over"], "over")
    if counts.get("other"):
        add(None, None, None, counts["other"], "other")
    cum = 0
    for r in out:
        cum += r[3]
        r[4] = cum
        r[5] = r[3] / total if total else None
    return [tuple(r) for r in out]


def check_table_form(conn, src, args, edges):
    """par_histogram over src (a SELECT with a column x) against the SQL
    counts for the given edges; returns the rows."""
    sql = "SELECT * FROM par_histogram(?, 'x'%s)" % "".join(", ?" for _ in args)
    got = at_threads(conn, sql, (src,) + tuple(args))
    total = conn.execute("SELECT count(*) FROM (%s)" % src).fetchone()[0]
    want = expected_rows(edges, sql_counts(conn, src, edges), total)
    assert exact(got) == exact(want), "par_histogram%r over %s\n got %r\nwant %r" % (
        args, src, got, want)
    return got


# ---- random data ------------------------------------------------------------

SPECIAL = [0, 1, -1, 0.0, -0.0, 0.5, 2**53, 2**53 + 1, -(2**53) - 1, 2**63 - 1, -(2**63),
           2**62 + 1, 1e308, -1e308, 5e-324, 0.1, float("inf"), float("-inf")]


def random_value(rng, kind):
    r = rng.random()
    if r < 0.08:
        return None
    if kind == "int":
        if r < 0.15:
            return rng.choice([2**63 - 1, -(2**63), 2**53 + 1, -(2**53) - 3, 0])
        return rng.randrange(-1000, 1000) if r < 0.7 else rng.randrange(-2**62, 2**62)
    if kind == "real":
        if r < 0.12:
            return rng.choice([float("inf"), float("-inf"), -0.0, 0.0])
        return round(rng.uniform(-50, 150), rng.choice([0, 1, 3, 15]))
    # mixed: every storage class, duplicates, extremes
    if r < 0.15:
        return rng.choice(["abc", "12", "", b"\x00\x01", b""])
    if r < 0.25:
        return rng.choice(SPECIAL)
    if r < 0.6:
        return rng.randrange(-100, 100)
    return round(rng.uniform(-100, 100), rng.choice([0, 2, 15]))


def make_table(conn, name, kind, n, rng, decl="", groups=3):
    conn.execute("DROP TABLE IF EXISTS %s" % name)
    conn.execute("CREATE TABLE %s(g INTEGER, x %s)" % (name, decl))
    conn.executemany("INSERT INTO %s VALUES(?, ?)" % name,
                     [(rng.randrange(groups), random_value(rng, kind)) for _ in range(n)])


TABLES = [("real", ""), ("real", "REAL"), ("int", ""), ("int", "INTEGER"), ("mixed", ""),
          ("mixed", "TEXT")]


# ---- table form ---------------------------------------------------------------

def test_default_range_random():
    c = connect()
    rng = random.Random(SEED)
    for kind, decl in TABLES:
        make_table(c, "t", kind, rng.choice([1, 2, 50, 3000]), rng, decl)
        src = "SELECT x FROM t"
        for n in (1, 2, 7, 20, 100):
            rg = sql_range(c, src)
            edges = sql_uniform_edges(c, rg[0], rg[1], n) if rg else None
            check_table_form(c, src, (n,), edges)
        # The table name form reads the same rows.
        a = c.execute("SELECT * FROM par_histogram('t', 'x', 10)").fetchall()
        b = c.execute("SELECT * FROM par_histogram('SELECT x FROM t', 'x', 10)").fetchall()
        assert exact(a) == exact(b)


def test_fixed_range_random():
    c = connect()
    rng = random.Random(SEED + 1)
    for kind, decl in TABLES:
        make_table(c, "t", kind, 2000, rng, decl)
        src = "SELECT x FROM t WHERE g < 2"
        for _ in range(6):
            lo = rng.choice([0, -50, rng.uniform(-100, 50), -2**62, 0.1])
            hi = lo + rng.choice([1, 7, 100, rng.uniform(0.001, 200), 2**62])
            if not float(lo) < float(hi):       # the range vanishes as REAL
                continue
            n = rng.choice([1, 3, 10, 50, 99])
            edges = sql_uniform_edges(c, float(lo), float(hi), n)
            check_table_form(c, src, (n, lo, hi), edges)
    # lo and hi as numeric text, as integral REAL bins.
    rows = c.execute("SELECT bin, lo, hi FROM par_histogram('t', 'x', 4.0, '0', '2e1')").fetchall()
    assert [r[1] for r in rows if r[0] is not None] == [0.0, 5.0, 10.0, 15.0], rows


def test_explicit_edges_random():
    c = connect()
    rng = random.Random(SEED + 2)
    for kind, decl in TABLES:
        make_table(c, "t", kind, 2000, rng, decl)
        for _ in range(5):
            vals = sorted(set(round(rng.uniform(-120, 160), rng.choice([0, 1, 16]))
                              for _ in range(rng.randrange(2, 40))))
            if len(vals) < 2:
                continue
            text = "[" + ", ".join(repr(v) if rng.random() < 0.5 else str(int(v)) if v == int(v)
                                   else repr(v) for v in vals) + "]"
            edges = [float(v) + 0.0 for v in json.loads(text)]   # no edge is -0.0
            check_table_form(c, "SELECT x FROM t", (text,), edges)
    # The example, whitespace and exponents.
    text = " [0, 10 ,50,\n100, 5e2, 1.0E3 ] "
    check_table_form(c, "SELECT x FROM t WHERE g = 1", (text,), [0.0, 10.0, 50.0, 100.0, 500.0, 1000.0])
    check_table_form(c, "SELECT x FROM t", ("[-1e-300, 1e-300]",), [-1e-300, 1e-300])


def test_quantile_random():
    c = connect()
    rng = random.Random(SEED + 3)
    for kind, decl in TABLES:
        make_table(c, "t", kind, rng.choice([1, 7, 2500]), rng, decl)
        src = "SELECT x FROM t"
        for n in (1, 2, 4, 10, 33):
            check_table_form(c, src, (n, "quantile"), sql_quantile_edges(c, src, n))
    # Distinct values: equal counts, differing by at most one.
    c.execute("CREATE TABLE d(x)")
    c.executemany("INSERT INTO d VALUES(?)", [(v,) for v in rng.sample(range(100000), 1003)])
    rows = c.execute("SELECT count FROM par_histogram('d', 'x', 10, 'QUANTILE') "
                     "WHERE kind = 'bin'").fetchall()
    assert sorted(set(r[0] for r in rows)) == [100, 101] and sum(r[0] for r in rows) == 1003, rows


def test_large_bin_counts():
    """More bins than fit the L1 counters: checked against the correlated
    subquery form of the bins."""
    c = connect()
    rng = random.Random(SEED + 4)
    make_table(c, "t", "mixed", 3000, rng)
    for n in (1022, 1500, 5000):
        rows = at_threads(c, "SELECT bin, lo, hi, count FROM par_histogram('t', 'x', ?, -100, 100)"
                          " WHERE kind = 'bin'", (n,))
        edges = sql_uniform_edges(c, -100.0, 100.0, n)
        assert [r[1] for r in rows] + [rows[-1][2]] == edges
        want = sql_bins_by_subquery(c, "SELECT x FROM t", edges)
        got = {r[0]: r[3] for r in rows if r[3]}
        assert got == want, n


def test_threads_identical_large():
    """80000 rows: the kernels run on several threads; every form must
    give the same bits at 1, 2 and 3 threads and agree with SQL."""
    c = connect()
    rng = random.Random(SEED + 5)
    make_table(c, "t", "mixed", 80000, rng, groups=4)
    make_table(c, "r", "real", 80000, rng, "REAL")
    for name in ("t", "r"):
        src = "SELECT x FROM %s" % name
        rg = sql_range(c, src)
        check_table_form(c, src, (100,), sql_uniform_edges(c, rg[0], rg[1], 100))
        check_table_form(c, src, (64, -50, 50), sql_uniform_edges(c, -50.0, 50.0, 64))
        check_table_form(c, src, ("[-10, 0, 0.5, 99]",), [-10.0, 0.0, 0.5, 99.0])
        check_table_form(c, src, (16, "quantile"), sql_quantile_edges(c, src, 16))
    at_threads(c, "SELECT g, par_histogram(x, 10), par_median(x), par_percentile(x, 90) "
               "FROM r WHERE x > -1e999 AND x < 1e999 GROUP BY g")


def test_empty_and_degenerate_inputs():
    c = connect()
    c.execute("CREATE TABLE e(x)")
    # No rows: no bins without a range; bins of count 0 with one.
    assert c.execute("SELECT * FROM par_histogram('e', 'x', 5)").fetchall() == []
    assert c.execute("SELECT * FROM par_histogram('e', 'x', 5, 'quantile')").fetchall() == []
    rows = c.execute("SELECT * FROM par_histogram('e', 'x', 2, 0, 1)").fetchall()
    assert rows == [(0, 0.0, 0.5, 0, 0, None, "bin"), (1, 0.5, 1.0, 0, 0, None, "bin")], rows
    rows = c.execute("SELECT * FROM par_histogram('e', 'x', '[1, 2]')").fetchall()
    assert rows == [(0, 1.0, 2.0, 0, 0, None, "bin")], rows
    # Only NULLs, only text: one row each.
    c.executemany("INSERT INTO e VALUES(?)", [(None,), (None,)])
    assert c.execute("SELECT * FROM par_histogram('e', 'x', 5)").fetchall() == [
        (None, None, None, 2, 2, 1.0, "null")]
    c.execute("DELETE FROM e")
    c.executemany("INSERT INTO e VALUES(?)", [("a",), (b"b",)])
    assert c.execute("SELECT * FROM par_histogram('e', 'x', 5)").fetchall() == [
        (None, None, None, 2, 2, 1.0, "other")]
    # Only infinities: no finite range, so no bins; -Inf under, +Inf over.
    c.execute("DELETE FROM e")
    c.executemany("INSERT INTO e VALUES(?)", [(1e999,), (-1e999,), (1e999,)])
    for args in ("5", "5, 'quantile'"):
        rows = c.execute("SELECT * FROM par_histogram('e', 'x', %s)" % args).fetchall()
        assert rows == [(None, None, None, 1, 1, 1 / 3, "under"),
                        (None, None, None, 2, 3, 2 / 3, "over")], rows
    # All equal: every edge is that value, everything in the last bin.
    c.execute("DELETE FROM e")
    c.executemany("INSERT INTO e VALUES(?)", [(7,), (7.0,), (7,), (1e999,)])
    rows = c.execute("SELECT * FROM par_histogram('e', 'x', 3)").fetchall()
    assert rows == [(0, 7.0, 7.0, 0, 0, 0.0, "bin"), (1, 7.0, 7.0, 0, 0, 0.0, "bin"),
                    (2, 7.0, 7.0, 3, 3, 0.75, "bin"), (None, 7.0, None, 1, 4, 0.25, "over")], rows
    check_table_form(c, "SELECT x FROM e", (3, "quantile"), sql_quantile_edges(c, "SELECT x FROM e", 3))
    # A single row.
    rows = c.execute("SELECT * FROM par_histogram('SELECT 2.5 AS x', 'x', 1)").fetchall()
    assert rows == [(0, 2.5, 2.5, 1, 1, 1.0, "bin")], rows


def test_infinities_and_extremes():
    c = connect()
    c.execute("CREATE TABLE t(x INTEGER)")
    vals = [-(2**63), 2**63 - 1, 2**53 + 1, 2**53 + 3, -(2**53) - 1, 0, 1e999, -1e999, None,
            2**63 - 512, 2**62 + 1]
    c.executemany("INSERT INTO t VALUES(?)", [(v,) for v in vals])
    src = "SELECT x FROM t"
    rows = check_table_form(c, src, (7,), sql_uniform_edges(c, *sql_range(c, src), 7))
    # The extremes are inside the range: only the infinities are out.
    assert [(r[6], r[3]) for r in rows if r[6] != "bin"] == [
        ("null", 1), ("under", 1), ("over", 1)], rows
    assert rows[2][1] == -2.0**63 and rows[-2][2] == 2.0**63, rows
    check_table_form(c, src, (5, "quantile"), sql_quantile_edges(c, src, 5))
    # Integers beyond 2^53 are compared exactly, not as rounded doubles:
    # 2^53+1 is below the edge 2^53+2, so under; 2^53+3 is above, so in.
    edge = float(2**53 + 2)
    check_table_form(c, src, (1, edge, edge + 8), [edge, edge + 8])
    check_table_form(c, src, ("[%r, %r]" % (edge, 2.0**63),), [edge, 2.0**63])
    # A range wider than the largest double.
    c.execute("CREATE TABLE w(x REAL)")
    c.executemany("INSERT INTO w VALUES(?)", [(v,) for v in
                  (-1.7976931348623157e308, 1.7976931348623157e308, 0.0, 1e308, -1e307, 5e-324)])
    src = "SELECT x FROM w"
    rows = check_table_form(c, src, (9,), sql_uniform_edges(c, *sql_range(c, src), 9))
    assert all(math.isfinite(r[1]) for r in rows), rows
    check_table_form(c, src, (4, -1e308, 1.7e308), sql_uniform_edges(c, -1e308, 1.7e308, 4))


def test_source_forms():
    c = connect()
    c.execute('CREATE TABLE "my table"("a`b" REAL, "x y" INT)')
    c.executemany('INSERT INTO "my table" VALUES(?, ?)', [(i / 3, i) for i in range(30)])
    want = c.execute("SELECT * FROM par_histogram('SELECT \"a`b\" FROM \"my table\"', 'a`b', 3)"
                     ).fetchall()
    assert sum(r[3] for r in want) == 30, want
    assert c.execute("SELECT * FROM par_histogram('my table', 'a`b', 3)").fetchall() == want
    assert c.execute("SELECT * FROM par_histogram('main.my table', 'a`b', 3)").fetchall() == want
    # Schemas: temp and attached; a view; WITH and VALUES; trailing ; and comment.
    c.execute("CREATE TEMP TABLE t2(x)")
    c.execute("INSERT INTO t2 VALUES(1), (2), (3)")
    assert sum(r[3] for r in c.execute("SELECT * FROM par_histogram('temp.t2', 'x', 2)")) == 3
    c.execute("ATTACH ':memory:' AS aux")
    c.execute("CREATE TABLE aux.t3(x)")
    c.execute("INSERT INTO aux.t3 VALUES(5), (6)")
    assert sum(r[3] for r in c.execute("SELECT * FROM par_histogram('aux.t3', 'x', 2)")) == 2
    c.execute('CREATE VIEW v AS SELECT "x y" * 2 AS x FROM "my table"')
    rows = c.execute("SELECT lo, count FROM par_histogram('v', 'x', 2)").fetchall()
    assert rows == [(0.0, 15), (29.0, 15)], rows
    for src in ("WITH s(x) AS (VALUES(1), (2)) SELECT x FROM s", "VALUES(1), (2)",
                "SELECT 1 AS x UNION ALL SELECT 2;", "SELECT 1 AS x UNION ALL SELECT 2 -- end",
                "SELECT 1 AS x UNION ALL SELECT 2 /* end */ ;  "):
        col = "column1" if src.startswith("VALUES") else "x"
        rows = c.execute("SELECT count FROM par_histogram(?, ?, 1)", (src, col)).fetchall()
        assert rows == [(2,)], (src, rows)
    # An expression column of a SELECT goes by its name.
    rows = c.execute("SELECT count FROM par_histogram('SELECT \"x y\" % 3 FROM \"my table\"', "
                     "'\"x y\" % 3', 3)").fetchall()
    assert rows == [(10,), (10,), (10,)], rows


def test_named_arguments_and_hidden_columns():
    c = connect()
    c.execute("CREATE TABLE t(x)")
    c.executemany("INSERT INTO t VALUES(?)", [(i,) for i in range(10)])
    rows = c.execute("SELECT bin, count, source, \"column\", bins, range_lo, range_hi "
                     "FROM par_histogram WHERE source = 't' AND \"column\" = 'x' AND bins = 2 "
                     "AND range_lo = 0 AND range_hi = 10").fetchall()
    assert rows == [(0, 5, "t", "x", 2, 0, 10), (1, 5, "t", "x", 2, 0, 10)], rows
    # Arguments from another table: one histogram per row of it.
    c.execute("CREATE TABLE spec(n)")
    c.execute("INSERT INTO spec VALUES(1), (5)")
    rows = c.execute("SELECT n, count(*), sum(h.count) FROM spec, par_histogram('t', 'x', spec.n) h "
                     "GROUP BY n").fetchall()
    assert rows == [(1, 1, 10), (5, 5, 10)], rows


def test_errors_table_form():
    c = connect()
    c.execute("CREATE TABLE t(x)")
    c.executemany("INSERT INTO t VALUES(?)", [(i,) for i in range(10)])
    h = "SELECT * FROM par_histogram(%s)"
    cases = [
        ("'t', 'x', 0", "bins must be an integer from 1 to 1048576 or a JSON array of edges, not 0"),
        ("'t', 'x', -3", "not -3"),
        ("'t', 'x', 1.5", "not 1.5"),
        ("'t', 'x', 'abc'", "not 'abc'"),
        ("'t', 'x', NULL", "not NULL"),
        ("'t', 'x', x'01'", "not a BLOB"),
        ("'t', 'x', 1048577", "not 1048577"),
        ("'t', 'x', 3, 5, 1", "lo (5.0) must be less than hi (1.0)"),
        ("'t', 'x', 3, 2, 2", "lo (2.0) must be less than hi (2.0)"),
        ("'t', 'x', 3, NULL, 1", "lo must be a number, not NULL"),
        ("'t', 'x', 3, 0, 'z'", "hi must be a number, not 'z'"),
        ("'t', 'x', 3, 0, 1e999", "hi must be finite"),
        ("'t', 'x', 3, 0", "give lo and hi, or 'quantile', not only 0"),
        ("'t', 'x', 3, 'quantile', 5", "'quantile' takes no further argument"),
        ("'t', 'x', 3, 'quantil'", "not only 'quantil'"),
        ("'t', 'x', '[1, 2', 1", "give no lo, hi or 'quantile'"),
        ("'SELECT x FROM t WHERE x > ?', 'x', 3", "parameters are not allowed in the source: ?"),
        ("'SELECT x FROM t WHERE x > :lo', 'x', 3", "parameters are not allowed in the source: :lo"),
        ("'t', 'x', '[1, 2'", "bins is not a JSON array of numbers (error at character 5): [1, 2"),
        ("'t', 'x', '[1,, 2]'", "not a JSON array of numbers"),
        ("'t', 'x', '[1, 2] x'", "not a JSON array of numbers"),
        ("'t', 'x', '[1, \"2\"]'", "not a JSON array of numbers"),
        ("'t', 'x', '[01, 2]'", "not a JSON array of numbers"),
        ("'t', 'x', '[1., 2]'", "not a JSON array of numbers"),
        ("'t', 'x', '[1, 2, 1.5]'", "edges must be increasing, but edge 2 (1.5) is not greater "
                                    "than edge 1 (2.0)"),
        ("'t', 'x', '[1, 1]'", "edge 1 (1.0) is not greater than edge 0 (1.0)"),
        ("'t', 'x', '[5]'", "needs at least two numbers"),
        ("'t', 'x', '[]'", "needs at least two numbers"),
        ("'t', 'x', '[0, 1e999]'", "edge 1 is not a finite number"),
        ("'t', 'nosuch', 3", "par_histogram: no such column: nosuch"),
        ("'nosuch', 'x', 3", "par_histogram: no such table: nosuch"),
        ("'nosuch.t', 'x', 3", "no such table: nosuch.t"),
        ("'DELETE FROM t', 'x', 3", "not a read-only SELECT statement: DELETE FROM t"),
        ("'SELECT x FROM t; DELETE FROM t', 'x', 3", "only a single SELECT statement is allowed"),
        ("'SELECT nosuch FROM t', 'x', 3", "no such column: nosuch"),
        ("'SELECT x FROM t', 'y', 3", "no such column: y"),
        ("'CREATE TABLE u(x)', 'x', 3", "not a read-only SELECT statement"),
        ("NULL, 'x', 3", "the source must be a table name or a SELECT statement"),
        ("42, 'x', 3", "the source must be a table name or a SELECT statement"),
        ("'t', NULL, 3", "the column must be a column name"),
        ("'t', 'x'", "expected the arguments (source, column, bins [, lo, hi])"),
        ("'t'", "expected the arguments"),
    ]
    for args, frag in cases:
        expect_error(c, h % args, frag)
    expect_error(c, h % "'t', 'x', 1, 2, 3, 4", "too many arguments")
    # Text with a NUL byte inside is no name, spec or number (it used to
    # be read up to the NUL: 'x\0junk' read column x).
    nul = [("?, 'x', 3", "t\0junk", "the source must be a table name or a SELECT statement"),
           ("'t', ?, 3", "x\0junk", "the column must be a column name"),
           ("'t', 'x', ?", "[1, 2]\0junk", "not a TEXT with a NUL byte inside"),
           ("'t', 'x', 3, ?", "quantile\0junk", "not only a TEXT with a NUL byte inside"),
           ("'t', 'x', 3, ?, 5", "0\0009", "lo must be a number, not a TEXT with a NUL byte")]
    for args, param, frag in nul:
        expect_error(c, h % args, frag, (param,))
    expect_error(c, "SELECT par_histogram(x, ?) FROM t", "not a TEXT with a NUL byte inside",
                 ("[1, 2]\0junk",))
    # Nothing was changed or created, and the connection still works.
    assert c.execute("SELECT count(*) FROM t").fetchone()[0] == 10
    assert c.execute("SELECT count(*) FROM sqlite_master WHERE name = 'u'").fetchone()[0] == 0
    assert len(c.execute(h % "'t', 'x', 2").fetchall()) == 2


def test_database_file_and_changes():
    """A table in a database file, big enough for parallel extraction where
    the extraction allows it, read again after every change (never a stale
    column)."""
    import tempfile
    d = tempfile.mkdtemp()
    path = os.path.join(d, "h.db")
    c = connect(path)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("SELECT par_config('min_rows', 100000)")
    c.execute("CREATE TABLE t(x REAL)")
    c.execute("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 150000) "
              "INSERT INTO t SELECT (i * 7919 % 100003) / 7.0 FROM s")
    c.commit()
    src = "SELECT x FROM t"
    for step in range(3):
        rg = sql_range(c, src)
        check_table_form(c, src, (50,), sql_uniform_edges(c, rg[0], rg[1], 50))
        rows = c.execute("SELECT * FROM par_histogram('t', 'x', 50)").fetchall()
        want = c.execute("SELECT * FROM par_histogram('SELECT x FROM t', 'x', 50)").fetchall()
        assert exact(rows) == exact(want), step
        c.execute("UPDATE t SET x = x * 2 WHERE rowid % 3 = ?", (step,))
        c.execute("INSERT INTO t VALUES(NULL), ('text'), (1e999)")
        c.commit()
    c.close()
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    os.rmdir(d)


def test_one_thread_reads_cached():
    """At one thread the table form reads on the caller's connection, whose
    statement has begun reading main.  When the moment an earlier view scan
    noted vouches for that read (no commit since), the read is kept in the
    cache under the worker version noted, and served again; another
    connection's commit makes it stale at once."""
    import tempfile
    d = tempfile.mkdtemp()
    path = os.path.join(d, "h1.db")
    c = connect(path)
    c.isolation_level = None
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("SELECT par_config('threads', 1)")
    c.execute("CREATE TABLE t(x REAL)")
    c.execute("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20000) "
              "INSERT INTO t SELECT (i * 7919 % 10007) / 3.0 FROM s")
    c.execute("CREATE VIRTUAL TABLE temp.v USING parallel('SELECT count(*) FROM t')")
    src = "SELECT x FROM t"

    def hist():
        return exact(c.execute("SELECT * FROM par_histogram('t', 'x', 20)").fetchall())

    def want():
        rg = sql_range(c, src)
        edges = sql_uniform_edges(c, rg[0], rg[1], 20)
        total = c.execute("SELECT count(*) FROM t").fetchone()[0]
        return exact(expected_rows(edges, sql_counts(c, src, edges), total))

    def hits():
        return sum(r[0] for r in c.execute("SELECT hits FROM par_cache"))

    for step in range(2):
        c.execute("SELECT * FROM v").fetchall()      # the moment noted
        first = hist()
        assert first == want(), step
        h0 = hits()
        assert hist() == first and hits() == h0 + 1, (step, h0, hits())
        other = sqlite3.connect(path)
        other.execute("UPDATE t SET x = x + 1000 WHERE rowid % 4 = ?", (step,))
        other.commit()
        other.close()
        after = hist()
        assert after == want() and after != first, step
    c.close()
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    os.rmdir(d)


def test_not_in_views_or_triggers():
    """The table form runs SQL: SQLITE_VTAB_DIRECTONLY keeps it out of
    schema objects."""
    c = connect()
    c.execute("CREATE TABLE t(x)")
    c.execute("INSERT INTO t VALUES(1)")
    c.execute("CREATE VIEW v AS SELECT * FROM par_histogram('t', 'x', 2)")
    expect_error(c, "SELECT * FROM v", "unsafe use of virtual table")
    c.execute("CREATE TABLE log(n)")
    c.execute("CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
              "INSERT INTO log SELECT count FROM par_histogram('t', 'x', 2); END")
    expect_error(c, "INSERT INTO t VALUES(2)", "unsafe use of virtual table")
    # The aggregates are innocuous: fine in a view.
    c.execute("CREATE VIEW w AS SELECT par_median(x) AS m, par_histogram(x, 1) AS h FROM t")
    assert c.execute("SELECT m FROM w").fetchone()[0] == 1.0


def test_memory_limit():
    """Over memory_mb: an error that leaves an open transaction as it was
    (the table form's SQLITE_FULL rolled it back)."""
    c = connect()
    c.execute("CREATE TABLE t(x REAL)")
    c.execute("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 300000) "
              "INSERT INTO t SELECT i * 0.5 FROM s")
    c.execute("INSERT INTO t VALUES(0.25)")   # opens a transaction
    assert c.in_transaction
    c.execute("SELECT par_config('memory_mb', 1)")
    fails_cleanly(c, "SELECT * FROM par_histogram('t', 'x', 4)", "par_histogram: " + over_limit(
        1, "reading rows"))
    fails_cleanly(c, "SELECT par_histogram(x, 4) FROM t", "par_histogram: " + over_limit(
        1, "buffering the values of a group"))
    fails_cleanly(c, "SELECT par_median(x) FROM t", "par_median: " + over_limit(
        1, "buffering the values to sort"))
    c.execute("SELECT par_config('memory_mb', 1024)")
    assert sum(r[3] for r in c.execute("SELECT * FROM par_histogram('t', 'x', 4)")) == 300001


def over_limit(mb, what):
    return "memory limit of %d MB exceeded while %s (see par_config('memory_mb'))" % (mb, what)


def snapshot(conn):
    """What an error must leave unchanged: the schema and every table's rows."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                         "ORDER BY name")]
    return (conn.execute("SELECT * FROM sqlite_master ORDER BY name").fetchall(),
            [conn.execute("SELECT * FROM %s ORDER BY rowid" % t).fetchall() for t in tables])


def fails_cleanly(conn, sql, fragment, params=()):
    """sql fails with fragment in its message, changes nothing (an open
    transaction stays open), and the connection answers the next query;
    returns the message."""
    before = snapshot(conn), conn.in_transaction
    msg = expect_error(conn, sql, fragment, params)
    assert (snapshot(conn), conn.in_transaction) == before, sql
    assert conn.execute("SELECT count(*) FROM par_histogram('SELECT 1 AS x', 'x', 1)"
                        ).fetchone()[0] == 1
    return msg


def test_memory_limit_bins():
    """memory_mb bounds the bins' arrays (edges, counts, rows, each
    thread's private counts) and the aggregate's JSON, checked before they
    are made: a 1048576-bin aggregate wrote 120 MB under a 100 MB limit."""
    c = connect()
    c.execute("CREATE TABLE t(g, x)")
    c.executemany("INSERT INTO t VALUES(?, ?)", [(i % 2, i * 0.5) for i in range(1000)])
    edges = "[%s]" % ", ".join(str(i) for i in range(20001))
    c.execute("SELECT par_config('memory_mb', 1)")
    binning = over_limit(1, "binning")
    for args in ("1048576", "20000", "20000, 0, 1", "20000, 'quantile'", "?"):
        params = (edges,) if args == "?" else ()
        fails_cleanly(c, "SELECT * FROM par_histogram('t', 'x', %s)" % args, binning, params)
        fails_cleanly(c, "SELECT g, par_histogram(x, %s) FROM t GROUP BY g" % args, binning, params)
    # Under the limit: 10000 bins take about 800 kB as rows of the table
    # form; as JSON they do not fit, whether the least it could take
    # (80 bytes an object) is already too much (10000 bins) or only the
    # text written so far (7000 bins with 17-digit edges).
    assert c.execute("SELECT count(*) FROM par_histogram('t', 'x', 10000, 0, 0.1)"
                     ).fetchone()[0] == 10001
    text = c.execute("SELECT par_histogram(x, 5000, 0, 0.1) FROM t").fetchone()[0]
    assert len(json.loads(text)) == 5001
    json_over = over_limit(1, "writing the JSON result")
    for n in (10000, 7000):
        fails_cleanly(c, "SELECT par_histogram(x, %d, 0, 0.1) FROM t" % n, json_over)
    # The case: at 100 MB the bins fit, their JSON (120 MB) not.
    c.execute("SELECT par_config('memory_mb', 100)")
    assert c.execute("SELECT count(*) FROM par_histogram('t', 'x', 1048576)"
                     ).fetchone()[0] == 1048576
    fails_cleanly(c, "SELECT par_histogram(x, 1048576) FROM t", over_limit(100, "writing the "
                  "JSON result"))
    # Private counts per thread that do not fit mean fewer threads, not an
    # error or another answer: 200000 values and 50000 bins take 5.3 MB,
    # and 0.4 MB more a thread: under 6 MB they are binned on one.
    c.execute("CREATE TABLE big(x)")
    c.execute("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 199999) "
              "INSERT INTO big SELECT (i * 7919) % 100003 FROM s")
    sql = "SELECT * FROM par_histogram('big', 'x', 50000)"
    c.execute("SELECT par_config('memory_mb', 1024)")
    want = at_threads(c, sql)
    c.execute("SELECT par_config('memory_mb', 6)")
    assert exact(at_threads(c, sql)) == exact(want)
    c.execute("SELECT par_config('memory_mb', 5)")
    fails_cleanly(c, sql, over_limit(5, "binning"))


def test_memory_limit_values():
    """What the values take counts too: a group's INTEGER and REAL values
    together (each used to have the whole limit), the input with the
    sorted copy of quantile bins, and par_median's values with the sort's
    scratch."""
    c = connect()
    c.execute("CREATE TABLE t(x)")
    # 70000 INTEGER and 70000 REAL values: 1.1 MB.
    c.execute("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 139999) "
              "INSERT INTO t SELECT CASE WHEN i % 2 THEN i ELSE i + 0.5 END FROM s")
    c.execute("CREATE TABLE r(x REAL)")
    c.execute("INSERT INTO r SELECT x FROM t LIMIT 50000")
    c.execute("CREATE TABLE m(x REAL)")
    c.execute("INSERT INTO m SELECT x FROM t LIMIT 100000")
    c.execute("SELECT par_config('memory_mb', 1)")
    fails_cleanly(c, "SELECT par_histogram(x, 4) FROM t", "par_histogram: " + over_limit(
        1, "buffering the values of a group"))
    # 50000 numbers (400 kB), sorted into a copy with scratch (800 kB).
    sorting = over_limit(1, "sorting the numbers for quantile bins")
    fails_cleanly(c, "SELECT par_histogram(x, 4, 'quantile') FROM r", sorting)
    fails_cleanly(c, "SELECT * FROM par_histogram('r', 'x', 4, 'quantile')", sorting)
    assert len(json.loads(c.execute("SELECT par_histogram(x, 4) FROM r").fetchone()[0])) == 4
    # 100000 values (800 kB) to sort with as much scratch.
    for f in ("par_median(x)", "par_percentile(x, 10)"):
        fails_cleanly(c, "SELECT %s FROM m" % f, "%s: %s" % (f.split("(")[0], over_limit(
            1, "buffering the values to sort")))
    assert c.execute("SELECT par_median(x) FROM r").fetchone()[0] is not None
    c.execute("SELECT par_config('memory_mb', 1024)")
    assert len(json.loads(c.execute("SELECT par_histogram(x, 4) FROM t").fetchone()[0])) == 4


def test_edges_limit():
    """A JSON array of edges has the limit of bins = n: 1048577 edges
    (1048576 bins) and no more (1048578 were taken)."""
    c = connect()
    c.execute("CREATE TABLE t(x)")
    c.executemany("INSERT INTO t VALUES(?)", [(i,) for i in range(10)])
    at_limit = "[%s]" % ",".join(str(i) for i in range(1048577))
    past = at_limit[:-1] + ",1048577]"
    assert c.execute("SELECT count(*), sum(count) FROM par_histogram('t', 'x', ?) "
                     "WHERE kind = 'bin'", (at_limit,)).fetchone() == (1048576, 10)
    assert c.execute("SELECT count(*) FROM par_histogram('t', 'x', 1048576)").fetchone()[0] \
        == 1048576
    msg = "a JSON array of edges may have at most 1048577 edges (1048576 bins)"
    fails_cleanly(c, "SELECT * FROM par_histogram('t', 'x', ?)", msg, (past,))
    fails_cleanly(c, "SELECT par_histogram(x, ?) FROM t", msg, (past,))
    fails_cleanly(c, "SELECT * FROM par_histogram('t', 'x', 1048577)", "not 1048577")


def test_errors_cut_long_arguments():
    """An error message quotes an argument up to about 80 characters: a
    longer one as its first 77 and "..." (whole characters)."""
    c = connect()
    c.execute("CREATE TABLE t(x)")
    c.executemany("INSERT INTO t VALUES(?)", [(i,) for i in range(10)])
    assert c.in_transaction
    long_ = "a" * 1000
    cut = "a" * 77 + "..."
    quoted = "'" + "a" * 76 + "..."     # 'text' as quoted, cut the same
    h = "SELECT * FROM par_histogram(%s)"
    cases = [
        (h % "'t', 'x', ?", long_, "bins must be an integer from 1 to 1048576 or a JSON array "
         "of edges, not " + quoted),
        (h % "'t', 'x', ?", "[1, 2" + long_, "(error at character 5): [1, 2" + "a" * 72 + "..."),
        (h % "'t', 'x', ?", "[5" + " " * 1000 + "]", "needs at least two numbers (one bin): [5 "),
        (h % "'t', 'x', 3, ?, 1", long_, "lo must be a number, not " + quoted),
        (h % "'t', 'x', 3, 0, ?", long_, "hi must be a number, not " + quoted),
        (h % "'t', 'x', 3, ?", long_, "not only " + quoted),
        (h % "?, 'x', 3", long_, "no such table: " + cut + " (the source must be"),
        (h % "?, 'x', 3", "DELETE FROM t WHERE x = '%s'" % long_,
         "not a read-only SELECT statement: DELETE FROM t WHERE x = '" + "a" * 52 + "..."),
        (h % "?, 'x', 3", "SELECT %s(x) AS x FROM t" % long_, "no such function: " + cut),
        (h % "'t', ?, 3", long_, "no such column: " + cut),
        (h % "?, 'x', 3", "SELECT x FROM t WHERE %s %s" % (long_, long_),
         'near "' + cut + '": syntax error'),
        (h % "?, 'x', 3", "SELECT x FROM t WHERE x = '" + "a b " * 250,
         "unrecognized token: \"'" + "a b " * 19 + "...\""),
        (h % "'t', 'x', ?", "é" * 1000, "not '" + "é" * 76 + "..."),
        ("SELECT par_histogram(x, ?) FROM t", long_, "not " + quoted),
        ("SELECT par_histogram(x, ?) FROM t", "[1, 2" + long_, "[1, 2" + "a" * 72 + "..."),
        ("SELECT par_histogram(x, 3, ?, 1) FROM t", long_, "lo must be a number, not " + quoted),
    ]
    for sql, param, frag in cases:
        msg = fails_cleanly(c, sql, frag, (param,))
        assert len(msg) < 200 and "a" * 78 not in msg and "é" * 78 not in msg, msg
# ---- aggregate form --------------------------------------------------------------

def json_rows(text):
    return [(o["bin"], o["lo"], o["hi"], o["count"], o["cumulative"], o["fraction"], o["kind"])
            for o in json.loads(text)]


def test_aggregate_matches_table_form():
    c = connect()
    rng = random.Random(SEED + 6)
    for kind, decl in TABLES:
        make_table(c, "t", kind, 1500, rng, decl, groups=4)
        for args in ("5", "3, -50, 50", "'[-10, 0, 10, 1e3]'", "4, 'quantile'", "1", "2, 0.5, 0.75"):
            got = at_threads(c, "SELECT g, par_histogram(x, %s) FROM t GROUP BY g ORDER BY g" % args)
            for g, text in got:
                want = c.execute("SELECT * FROM par_histogram('SELECT x FROM t WHERE g = %d', "
                                 "'x', %s)" % (g, args)).fetchall()
                assert exact(json_rows(text)) == exact(want), (kind, decl, args, g, text, want)
    # JSON numbers read back as REAL where the table has REAL.
    text = c.execute("SELECT par_histogram(x, 2, 0, 10) FROM (SELECT 1 AS x)").fetchone()[0]
    assert '"lo":0.0,"hi":5.0' in text and '"fraction":1.0' in text, text
    assert c.execute("SELECT json_valid(?)", (text,)).fetchone()[0] == 1
    assert c.execute("SELECT json_extract(?, '$[0].count')", (text,)).fetchone()[0] == 1


def test_aggregate_edge_cases():
    c = connect()
    c.execute("CREATE TABLE t(g, x, n)")
    # No rows at all: NULL.
    assert c.execute("SELECT par_histogram(x, 3) FROM t").fetchone()[0] is None
    assert c.execute("SELECT par_histogram(x, 3, 0, 1) FROM t").fetchone()[0] is None
    c.executemany("INSERT INTO t VALUES(?, ?, ?)", [(1, None, 2), (1, "a", 2), (2, 5, 2), (2, 6, 3)])
    assert json_rows(c.execute("SELECT par_histogram(x, n) FROM t WHERE g = 1").fetchone()[0]) == [
        (None, None, None, 1, 1, 0.5, "null"), (None, None, None, 1, 2, 0.5, "other")]
    expect_error(c, "SELECT par_histogram(x, n) FROM t", "bins, lo and hi must be the same for "
                 "every row of a group")
    # A group's bins may come from a column as long as it is constant.
    got = c.execute("SELECT g, par_histogram(x, n) FROM t WHERE g = 1 OR n = 2 GROUP BY g").fetchall()
    assert len(got) == 2
    expect_error(c, "SELECT par_histogram(x, 0) FROM t", "bins must be an integer from 1")
    expect_error(c, "SELECT par_histogram(x, 2, 1, 1) FROM t", "lo (1.0) must be less than hi")
    expect_error(c, "SELECT par_histogram(x, '[2, 1]') FROM t", "edges must be increasing")
    expect_error(c, "SELECT par_histogram(x, 2, 'quantile', 1) FROM t",
                 "'quantile' takes no further argument")
    expect_error(c, "SELECT par_histogram(x) FROM t", "wrong number of arguments")


# ---- par_median, par_percentile ---------------------------------------------------

def sql_percentile(conn, src, p):
    """percentile.c's answer, from ORDER BY .. OFFSET in SQL."""
    n = conn.execute("SELECT count(x) FROM (%s)" % src).fetchone()[0]
    if n == 0:
        return None
    ix = conn.execute("SELECT (? / 100.0) * (? - 1)", (p, n)).fetchone()[0]
    i1 = int(ix)
    i2 = i1 if ix == float(i1) or i1 == n - 1 else i1 + 1
    q = "SELECT CAST(x AS REAL) FROM (%s) WHERE x IS NOT NULL ORDER BY x LIMIT 1 OFFSET ?" % src
    v1 = conn.execute(q, (i1,)).fetchone()[0]
    v2 = conn.execute(q, (i2,)).fetchone()[0]
    return conn.execute("SELECT ?1 + (?2 - ?1) * (?3 - ?4)", (v1, v2, ix, i1)).fetchone()[0]


def test_percentile_random():
    c = connect()
    rng = random.Random(SEED + 7)
    c.execute("CREATE TABLE t(g, x)")
    for n in (0, 1, 2, 3, 10, 1000, 20000):
        c.execute("DELETE FROM t")
        vals = [(rng.randrange(3), rng.choice([None, rng.randrange(-9, 9), rng.uniform(-1e6, 1e6),
                 rng.choice([2**63 - 1, -(2**63), 2**53 + 1, -0.0, 1e308, -1e308])]))
                for _ in range(n)]
        c.executemany("INSERT INTO t VALUES(?, ?)", vals)
        for p in (0, 1, 25, 33.3, 50, 90, 99, 99.9, 100, "75"):
            got = at_threads(c, "SELECT g, par_percentile(x, ?) FROM t GROUP BY g ORDER BY g", (p,))
            for g, v in got:
                want = sql_percentile(c, "SELECT x FROM t WHERE g = %d" % g, float(p))
                assert (v is None and want is None) or v == want, (n, p, g, v, want)
            whole = c.execute("SELECT par_percentile(x, ?) FROM t", (p,)).fetchone()[0]
            assert whole == sql_percentile(c, "SELECT x FROM t", float(p)), (n, p)
        m = at_threads(c, "SELECT par_median(x), par_percentile(x, 50) FROM t")[0]
        assert m[0] == m[1] == sql_percentile(c, "SELECT x FROM t", 50.0), (n, m)
        assert m[0] is None or isinstance(m[0], float)


def test_interrupt_stops_sorts():
    """An interrupt stops the sort of par_median and of quantile bins
    (kernels/par.h, px_stop): interrupts spread over each query give the
    right answer or "interrupted", and the connection answers afterwards."""
    import threading
    import time
    c = connect()
    c.execute("CREATE TABLE t(x REAL)")
    c.execute("INSERT INTO t SELECT (i * 7919 % 1000003) * 0.5 FROM (WITH RECURSIVE r(i) AS "
              "(SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i<400000) SELECT i FROM r)")
    stopped = 0
    for sql in ["SELECT par_median(x) FROM t",
                "SELECT * FROM par_histogram('t', 'x', 50, 'quantile')"]:
        want = c.execute(sql).fetchall()
        t0 = time.time()
        assert c.execute(sql).fetchall() == want
        full = time.time() - t0
        for i in range(6):
            timer = threading.Timer(full * i / 5, c.interrupt)
            timer.start()
            try:
                assert c.execute(sql).fetchall() == want, sql
            except sqlite3.OperationalError as e:
                assert "interrupted" in str(e), (sql, str(e))
                stopped += 1
            timer.join()
        assert c.execute(sql).fetchall() == want, sql
    assert stopped > 0, "nothing was interrupted"


def test_percentile_errors():
    c = connect()
    c.execute("CREATE TABLE t(x, p)")
    c.executemany("INSERT INTO t VALUES(?, ?)", [(1, 50), (2, 50.05), (3, 50), (None, 50)])
    assert c.execute("SELECT par_percentile(x, p) FROM t").fetchone()[0] == 2.0
    c.execute("INSERT INTO t VALUES(4, 51)")
    expect_error(c, "SELECT par_percentile(x, p) FROM t",
                 "the fraction argument to par_percentile() is not the same for all input rows")
    for p in ("-1", "100.5", "NULL", "'abc'", "x'00'"):
        expect_error(c, "SELECT par_percentile(x, %s) FROM t" % p,
                     "the fraction argument to par_percentile() is not between 0.0 and 100.0")
    assert c.execute("SELECT par_percentile(x, '25') FROM t").fetchone()[0] == 1.75
    c.execute("INSERT INTO t VALUES('7', 50)")
    expect_error(c, "SELECT par_percentile(x, 50) FROM t", "input to par_percentile() is not numeric")
    expect_error(c, "SELECT par_median(x) FROM t", "input to par_median() is not numeric")
    c.execute("DELETE FROM t WHERE x = '7'")
    c.execute("INSERT INTO t VALUES(x'01', 50)")
    expect_error(c, "SELECT par_median(x) FROM t", "input to par_median() is not numeric")
    c.execute("DELETE FROM t WHERE typeof(x) = 'blob'")
    c.execute("INSERT INTO t VALUES(-1e999, 50)")
    expect_error(c, "SELECT par_median(x) FROM t", "Inf input to par_median()")
    expect_error(c, "SELECT par_percentile(x, 1) FROM t", "Inf input to par_percentile()")
    expect_error(c, "SELECT par_percentile(x) FROM t", "wrong number of arguments")
    # NULLs only, and no rows: NULL.
    assert c.execute("SELECT par_median(NULL) FROM t").fetchone()[0] is None
    assert c.execute("SELECT par_median(x) FROM t WHERE 0").fetchone()[0] is None


def main():
    return harness.run("histogram", globals())


if __name__ == "__main__":
    sys.exit(main())
