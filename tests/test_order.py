#!/usr/bin/python3
"""ORDER BY, LIMIT/OFFSET and DISTINCT through parallel views, compared in
order with SQLite itself.

    /usr/bin/python3 tests/test_order.py ./parallel.so            # ~10 s (ASan build: fewer cases)
    /usr/bin/python3 tests/test_order.py ./parallel.so --quick    # a few seconds
    ORDER_CASES=4 ORDER_SEED=7 ...                                # 4x the cases, another world
    (the counts in the code are nominal: make test runs 0.4 of them, 0.1 under ASan)

Every case runs one SELECT natively and as a parallel view at
par_config('threads') 1, 2 and 3 (min_rows 0, so reads and kernels run
on several threads even for small tables) and compares the rows as
sequences: the same rows in the same order, each value of the same storage
class, REALs bit for bit; the three thread counts must agree exactly with
each other too.  Where the native SELECT fails, the view must fail with an
error containing the native message; where it succeeds, the view must not
fail.  Ties are frequent on purpose (few distinct values, 1 and 1.0, 'a'
and 'A', 'a' and 'a ', 0 and -0.0), so the order SQLite gives rows with
equal keys, and which row of a tie a LIMIT keeps, must be reproduced.

The world (one WAL database file, so parallel views read it on worker
connections, and one TEMP table, read serially): rowid tables of 0, 1, 300,
2000 (with an index) and 20000 rows, a WITHOUT ROWID table, all with the
columns of every declared type: INTEGER, REAL, TEXT, TEXT COLLATE NOCASE,
TEXT COLLATE RTRIM, BLOB, NUMERIC and none, values full of NULLs,
duplicates and mixed storage classes, int64 extremes and integers past 2^53
beside the nearest doubles, -0.0, empty strings, strings differing only by
case or trailing spaces.

Tests:
  test_random_order_by        SELECT cols|*|exprs FROM t [WHERE] ORDER BY 1-4
                              terms (columns, expressions, aliases,
                              ordinals; ASC/DESC, NULLS FIRST/LAST,
                              COLLATE) [LIMIT [OFFSET]] in every LIMIT form
  test_random_distinct        SELECT DISTINCT [ORDER BY] [LIMIT]
  test_random_group_order     ORDER BY over GROUP BY results, with LIMIT
  test_limit_forms            LIMIT/OFFSET as literals, expressions, the
                              comma form, REAL, text, bad values (errors)
  test_limit_parameters       LIMIT/OFFSET bound through a parameterised
                              view and par_view, every kind of value
  test_top_k_large            small LIMITs on 20000 rows, ties at the cut
  test_spilled_sort           full sorts of 20000 rows that SQLite spills to
                              disk (cache_size 1): ties still in reading order
  test_empty_and_one_row      tables of 0 and 1 rows
  test_plain_shapes_accelerated
                              the plain shapes the sort engine must run
                              (par_explain does not start with "native:"),
                              the one test that fails until it lands
  test_checker_finds_differences
                              the comparison catches a changed tie order,
                              1 for 1.0, -0.0 for 0.0, a row more, an error
After the tests, a line says how many of the SELECTs checked ran
accelerated and how many natively (information only, from par_explain).

The last line is "test_order: N passed, N failed".
"""
import os
import random
import sqlite3
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run, token, tokens, outcome, show  # noqa: E402

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
EXT = os.path.abspath(ARGS[0] if ARGS else "./parallel.so")
QUICK = "--quick" in sys.argv
ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
SEED = int(os.environ.get("ORDER_SEED", "20261127"))
# Cases per random test: fewer under the sanitizers, a handful in --quick.
# make test runs within 10 minutes on an idle 2-core machine: the random tests
# take 0.4 of their nominal counts there (ORDER_CASES=2.5 for all of them).
SCALE = float(os.environ.get("ORDER_CASES", "1")) * (0.08 if QUICK else 0.1 if ASAN else 0.4)
BIG_ROWS = 20000
THREADS = (1, 2, 3)
MAX_SHOWN = 8            # failures described in full per test

TMP = tempfile.mkdtemp(prefix="par_order_")
STATS = {"accelerated": 0, "native": 0, "error": 0}


def ncases(n):
    return max(3, int(n * SCALE))


def connect(path):
    c = sqlite3.connect(path, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(EXT)
    c.enable_load_extension(False)
    return c


# ---- the world --------------------------------------------------------------------

BIG_INTS = [2**53 + 1, 2**53, -(2**53 + 1), 2**63 - 1, -2**63, 2**62 + 1]
NEAR_DOUBLES = [2.0**53, 9007199254740994.0, -2.0**53, 9.223372036854776e18, -9.223372036854776e18,
                4.611686018427388e18]
WORDS = ["a", "A", "a ", "A ", "a  ", "ab", "aB", "Ab", "b", "B", "B ", "", " ", "abc", "ABC",
         "é", "É", "z"]
BLOBS = [b"", b"\x00", b"a", b"A", b"\x00\x01", b"12"]
NUM_TEXT = ["1", "1.0", " 2", "2 ", "3.5", "-0", "1e2", "0x10", "12abc", "9007199254740993"]

# name, declared type, vocabulary
COLUMNS = [
    ("i", "INTEGER", [0, 1, -1, 2, 3, 7, 1.0, 2.5, -0.0, "3", "abc", b"\x01"] + BIG_INTS),
    ("r", "REAL", [0.0, -0.0, 1.0, 1, 0.5, -2.25, 1e300, -1e-300, 2.0, "2.5", "x"] + NEAR_DOUBLES),
    ("s", "TEXT", WORDS + NUM_TEXT + [1, 1.0, 2.5, b"a"]),
    ("sn", "TEXT COLLATE NOCASE", WORDS + ["1", " 1", 1, b"A"]),
    ("sr", "TEXT COLLATE RTRIM", WORDS + ["1 ", "1", 1.5, b"a "]),
    ("bl", "BLOB", BLOBS + [1, 1.0, "a", "A", -0.0]),
    ("nm", "NUMERIC", [1, 1.0, "1.0", "2", 2.5, "2.50", "x", "", -0.0, 0, b"1"] + BIG_INTS[:3]
     + NEAR_DOUBLES[:2] + ["9007199254740993"]),
    ("x", "", [1, 1.0, "1", -0.0, 0, 0.0, 2, 2.5, "a", "A", "a ", "", b"", b"a", 3, "10", "9"]
     + BIG_INTS[:2] + NEAR_DOUBLES[:2]),
    ("k", "INTEGER", [0, 1, 2, 3]),
]
# Per column, pairs of values that tie under its comparison yet differ:
# every table holds one pair of each column, among its most frequent values.
TWINS = {
    "i": [(1, 1.0), (2**53, 2.0**53), (0, -0.0)],
    "r": [(0.0, -0.0), (1.0, 1)],
    "s": [("a", "A"), ("a", "a "), (1, 1.0)],
    "sn": [("a", "A"), ("Ab", "aB"), ("b", "B")],
    "sr": [("a", "a "), ("B", "B  "), ("", " ")],
    "bl": [(b"a", b"a"), (1, 1.0)],
    "nm": [(1, "1.0"), (2.5, "2.50")],
    "x": [(1, 1.0), ("a", "A"), (0, -0.0), (2**53, 2.0**53)],
    "k": [(1, 1)],
}
COLNAMES = [c for c, _, _ in COLUMNS]


def make_rows(rng, n, distinct=None):
    """n rows over COLUMNS: each column draws (skewed) from a few values of
    its vocabulary, some NULL, so that keys tie a lot."""
    vocab, pnull = {}, {}
    for name, _, pool in COLUMNS:
        k = distinct or rng.choice([2, 3, 5, 8, len(pool)])
        vocab[name] = list(rng.choice(TWINS[name])) + rng.sample(pool, min(k, len(pool)))
        pnull[name] = rng.choice([0.0, 0.1, 0.3])
    rows = []
    for _ in range(n):
        row = []
        for name, _, _ in COLUMNS:
            if rng.random() < pnull[name]:
                row.append(None)
            else:
                voc = vocab[name]
                row.append(voc[min(int(rng.expovariate(2.5 / len(voc))), len(voc) - 1)])
        rows.append(row)
    return rows


class World:
    """The tables, by name: name -> (rows, has a rowid)."""

    def __init__(self):
        rng = random.Random(SEED)
        self.path = os.path.join(TMP, "order.db")
        c = connect(self.path)
        c.execute("PRAGMA journal_mode=WAL")
        decl = ", ".join(("%s %s" % (n, d)).strip() for n, d, _ in COLUMNS)
        ins = ",".join("?" * len(COLUMNS))
        self.tables = {}
        c.execute("BEGIN")
        big = BIG_ROWS if not QUICK else 5000
        for name, n, kind in [("t0", 0, "rowid"), ("t1", 1, "rowid"), ("ts", 300, "rowid"),
                              ("tm", 2000, "index"), ("tw", 500, "worowid"), ("tb", big, "rowid"),
                              ("tt", 300, "temp")]:
            rows = make_rows(rng, n, distinct=4 if name == "tb" else None)
            if kind == "worowid":
                c.execute("CREATE TABLE %s(pk INTEGER PRIMARY KEY, %s) WITHOUT ROWID" % (name, decl))
                keys = rng.sample(range(10 * n), n)
                c.executemany("INSERT INTO %s VALUES(?, %s)" % (name, ins),
                              [[k] + r for k, r in zip(keys, rows)])
            else:
                c.execute("CREATE %sTABLE %s(%s)" % ("TEMP " if kind == "temp" else "", name, decl))
                c.executemany("INSERT INTO %s VALUES(%s)" % (name, ins), rows)
            if kind == "index":
                c.execute("CREATE INDEX %s_k ON %s(k, sn)" % (name, name))
            self.tables[name] = kind
        c.execute("COMMIT")
        c.execute("ANALYZE")
        c.execute("SELECT par_config('min_rows', 0)")
        self.conn = c


_world = []


def world():
    if not _world:
        _world.append(World())
    return _world[0]


# ---- running and comparing --------------------------------------------------------

def first_difference(a, b):
    if len(a) != len(b):
        return "row count: native %d, view %d" % (len(a), len(b))
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "row %d: native %r, view %r" % (i, x, y)
    return None


def quote(sql):
    return "'" + sql.replace("'", "''") + "'"


class Cases:
    """One test's cases: the failures it found, described up to MAX_SHOWN."""

    def __init__(self, name):
        self.name = name
        self.n = 0
        self.fails = []

    def fail(self, sql, why):
        self.fails.append("%s\n    %s" % (sql, why))

    def done(self):
        assert self.n > 0
        if self.fails:
            raise AssertionError("%d of %d cases differ:\n  %s" % (
                len(self.fails), self.n, "\n  ".join(self.fails[:MAX_SHOWN])))
        print("     %s: %d cases" % (self.name, self.n))

    def check(self, sql, params=(), scan_args=None, via_par_view=False, view_sql=None):
        """sql natively (with params bound) against a view of it (of view_sql
        when given: the checker's own test) scanned at each thread count
        (SELECT * FROM v(scan_args) when given)."""
        c = world().conn
        self.n += 1
        if view_sql is None:
            view_sql = sql
            try:
                plan = c.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
                STATS["native" if plan.startswith("native:") else "accelerated"] += 1
            except sqlite3.Error:
                STATS["error"] += 1
        want = outcome(lambda: c.execute(sql, params).fetchall())
        try:
            if via_par_view:
                c.execute("SELECT par_view('ov', ?)", (view_sql,))
            else:
                c.execute("CREATE VIRTUAL TABLE temp.ov USING parallel(%s)" % quote(view_sql))
        except sqlite3.Error as e:
            if want[0] == "error" and want[1] in str(e):
                return
            self.fail(sql, "native %s, creating the view: %s" % (show(want), e))
            return
        try:
            scan = "SELECT * FROM ov"
            if scan_args is not None:
                scan += "(%s)" % ", ".join("?" * len(scan_args))
            got = []
            for t in THREADS:
                c.execute("SELECT par_config('threads', ?)", (t,))
                got.append(outcome(lambda: c.execute(scan, scan_args or ()).fetchall()))
        finally:
            c.execute("SELECT par_config('threads', 0)")
            c.execute("DROP TABLE temp.ov")
        for t, g in zip(THREADS[1:], got[1:]):
            if g != got[0]:
                self.fail(sql, "threads 1 gave %s, threads %d %s" % (show(got[0]), t, show(g)))
                return
        g = got[0]
        if want[0] == "error" or g[0] == "error":
            if not (want[0] == g[0] == "error" and want[1] in g[1]):
                self.fail(sql, "native %s, view %s" % (show(want), show(g)))
            return
        diff = first_difference(want[1], g[1])
        if diff:
            self.fail(sql, "%s\n    native %s\n    view   %s" % (diff, show(want), show(g)))


# ---- the generator ----------------------------------------------------------------

# Row-level expressions over the columns; ORDER BY and select-list items.
EXPRS = ["i + 1", "length(s)", "-i", "x COLLATE NOCASE", "s COLLATE RTRIM", "abs(r)",
         "substr(sn, 1, 1)", "typeof(x)", "coalesce(i, r)", "i % 3", "round(r)", "x + 0",
         "CASE WHEN k > 1 THEN s ELSE x END", "CASE k WHEN 0 THEN 'b' WHEN 1 THEN 'A' END",
         "upper(sn)", "sr || ''", "k * 1.5", "nm", "bl", "x IS NULL", "-r", "lower(s)",
         "min(k, 2)", "iif(k > 0, sn, sr)", "k - 2"]
WHERES = ["k > 0", "i IS NOT NULL", "s < 'b'", "x = 1", "r > 0.5", "sn = 'a'", "sr = 'a'",
          "k IN (1, 3)", "typeof(x) <> 'blob'", "nm >= 1", "length(s) > 1", "NOT (k = 2)",
          "x IS NULL OR k = 0", "1"]
COLLATES = ["", "", "", " COLLATE BINARY", " COLLATE NOCASE", " COLLATE RTRIM"]
DIRS = ["", "", " ASC", " DESC", " DESC"]
NULLSP = ["", "", "", " NULLS FIRST", " NULLS LAST"]
LIMIT_N = ["0", "1", "2", "3", "5", "10", "-1", "1000000", "1+2", "(2*2)", "2.0", "'3'", "-5",
           "abs(-4)", "' 2'", "7"]
OFFSET_N = ["0", "1", "3", "50", "-2", "1+1", "'2'", "4.0", "100000"]


def limit_clause(rng):
    """No LIMIT, or LIMIT n, LIMIT n OFFSET m, LIMIT m, n (offset first)."""
    p = rng.random()
    if p < 0.3:
        return ""
    n = rng.choice(LIMIT_N)
    if p < 0.65:
        return " LIMIT " + n
    m = rng.choice(OFFSET_N)
    if p < 0.9:
        return " LIMIT %s OFFSET %s" % (n, m)
    return " LIMIT %s, %s" % (m, n)


def order_term(rng, items, aliases):
    """One ORDER BY term: an alias, an ordinal, a column or an expression,
    with an optional COLLATE, direction and NULLS placement."""
    p = rng.random()
    if aliases and p < 0.25:
        t = rng.choice(aliases)
    elif items and p < 0.45:
        t = str(rng.randint(1, len(items)))
    elif p < 0.75:
        t = rng.choice(COLNAMES)
    else:
        t = rng.choice(EXPRS)
        if "COLLATE" in t:
            return t + rng.choice(DIRS) + rng.choice(NULLSP)
    return t + rng.choice(COLLATES) + rng.choice(DIRS) + rng.choice(NULLSP)


def order_by(rng, items, aliases, nmax=4):
    return " ORDER BY " + ", ".join(order_term(rng, items, aliases)
                                    for _ in range(rng.randint(1, nmax)))


def pick_table(rng, big=False):
    names = ["t0", "t1"] + ["ts", "tm"] * 4 + ["tw", "tt"] * 2
    return "tb" if big else rng.choice(names)


def where(rng, table):
    if rng.random() < 0.5:
        return ""
    w = rng.choice(WHERES + (["rowid % 3 = 0"] if world().tables[table] != "worowid" else []))
    return " WHERE " + w


def select_list(rng):
    """(sql text, items, aliases): '*', or 1-4 columns and expressions,
    some with an alias."""
    if rng.random() < 0.15:
        return "*", COLNAMES, []
    items, aliases, parts = [], [], []
    for j in range(rng.randint(1, 4)):
        e = rng.choice(COLNAMES + EXPRS)
        items.append(e)
        if rng.random() < 0.3:
            aliases.append("o%d" % j)
            parts.append("%s AS o%d" % (e, j))
        else:
            parts.append(e)
    return ", ".join(parts), items, aliases


def gen_order_by(rng, big=False):
    t = pick_table(rng, big)
    sel, items, aliases = select_list(rng)
    return "SELECT %s FROM %s%s%s%s" % (sel, t, where(rng, t), order_by(rng, items, aliases),
                                        limit_clause(rng))


DISTINCT_ITEMS = ["sn", "sr", "k", "x", "s", "i", "r", "nm", "bl", "sn COLLATE BINARY",
                  "s COLLATE NOCASE", "upper(s)", "k % 2", "typeof(x)", "x COLLATE RTRIM"]


def gen_distinct(rng):
    t = pick_table(rng)
    items = rng.sample(DISTINCT_ITEMS, rng.randint(1, 3))
    sql = "SELECT DISTINCT %s FROM %s%s" % (", ".join(items), t, where(rng, t))
    p = rng.random()
    if p < 0.25:
        pass                                    # no ORDER BY
    elif p < 0.5:                               # ORDER BY the select list itself
        sql += " ORDER BY " + ", ".join(
            "%s%s%s" % (e, rng.choice(DIRS), rng.choice(NULLSP)) for e in items)
    elif p < 0.7:                               # a column not in the select list
        sql += " ORDER BY %s%s, %s" % (rng.choice([c for c in COLNAMES if c not in items]),
                                       rng.choice(DIRS), rng.choice(items))
    else:
        sql += order_by(rng, items, [], nmax=3)
    return sql + limit_clause(rng)


GROUP_KEYS = ["k", "sn", "x", "sr", "i % 3", "typeof(x)", "s COLLATE NOCASE", "nm", "k, sn",
              "sr, k"]
AGGS = ["count(*)", "count(x)", "min(s)", "max(sn)", "total(r)", "min(x)", "max(i)",
        "sum(k)", "avg(k)", "count(DISTINCT sn)"]


def gen_group(rng):
    t = pick_table(rng)
    keys = rng.choice(GROUP_KEYS)
    aggs = rng.sample(AGGS, rng.randint(1, 3))
    items = keys.split(", ") + aggs
    sel = ", ".join(keys.split(", ") + ["%s AS a%d" % (a, j) for j, a in enumerate(aggs)])
    sql = "SELECT %s FROM %s%s GROUP BY %s" % (sel, t, where(rng, t), keys)
    terms = []
    for _ in range(rng.randint(1, 3)):
        p = rng.random()
        if p < 0.3:
            t_ = "a%d" % rng.randrange(len(aggs))
        elif p < 0.6:
            t_ = str(rng.randint(1, len(items)))
        else:
            t_ = rng.choice(keys.split(", ") + aggs)
        terms.append(t_ + rng.choice(DIRS) + rng.choice(NULLSP))
    return sql + " ORDER BY " + ", ".join(terms) + limit_clause(rng)


# ---- the tests ----------------------------------------------------------------------

def test_random_order_by():
    rng = random.Random(SEED + 1)
    cases = Cases("order by")
    for _ in range(ncases(600)):
        cases.check(gen_order_by(rng))
    cases.done()


def test_random_distinct():
    rng = random.Random(SEED + 2)
    cases = Cases("distinct")
    for _ in range(ncases(300)):
        cases.check(gen_distinct(rng))
    cases.done()


def test_random_group_order():
    rng = random.Random(SEED + 3)
    cases = Cases("group by + order by")
    for _ in range(ncases(200)):
        cases.check(gen_group(rng))
    cases.done()


def test_limit_forms():
    """Every form of LIMIT and OFFSET SQLite reads, good and bad, on tables
    with ties at every cut."""
    cases = Cases("limit forms")
    limits = ["0", "1", "3", "-1", "-100", "1000000", "9223372036854775807", "1+2", "(1+1)*2",
              "2.0", "'3'", "' 4'", "'4 '", "2.5", "'x'", "NULL", "x'02'", "'0x3'", "'1e1'",
              "CAST(2 AS REAL)", "(SELECT 2)", "k"]
    offsets = ["0", "2", "-3", "299", "300", "100000", "1+1", "'2'", "3.0", "1.5", "NULL", "'a'"]
    base = ["SELECT k, sn, i FROM %s ORDER BY k", "SELECT sn, sr FROM %s ORDER BY sn DESC, sr",
            "SELECT DISTINCT sn FROM %s ORDER BY sn", "SELECT * FROM %s ORDER BY x NULLS LAST"]
    # Every SELECT on ts; two of them (ties, DISTINCT) on the WITHOUT ROWID
    # table; one on the empty table.  Under the sanitizers or --quick: the
    # two on ts alone.
    light = QUICK or ASAN
    for t in ["ts"] if light else ["ts", "tw", "t0"]:
        for b in base[::2] if light or t == "tw" else base if t == "ts" else base[:1]:
            q = b % t
            for n in limits:
                cases.check("%s LIMIT %s" % (q, n))
            for m in offsets:
                cases.check("%s LIMIT 3 OFFSET %s" % (q, m))
                cases.check("%s LIMIT %s, 4" % (q, m))        # the comma form: offset first
            cases.check("%s LIMIT -1 OFFSET 5" % q)
    cases.done()


LIMIT_VALUES = [0, 1, 3, -1, 2.0, "3", " 4", 2.5, "x", None, 10**6, 2**63 - 1, -2**63, b"\x02",
                "1e1", -0.0]


def test_limit_parameters():
    """LIMIT and OFFSET as parameters of the view, bound by v(...) and by
    par_view's views, against the same SELECT with the values bound."""
    rng = random.Random(SEED + 4)
    cases = Cases("limit parameters")
    shapes = ["SELECT k, sn, x FROM %s ORDER BY k, sn LIMIT :n",
              "SELECT i, s FROM %s ORDER BY s COLLATE NOCASE DESC LIMIT :n OFFSET :m",
              "SELECT DISTINCT sn FROM %s ORDER BY 1 LIMIT ?1, ?2",
              "SELECT * FROM %s ORDER BY r NULLS FIRST, i LIMIT ? OFFSET ?",
              "SELECT k, count(*) AS c FROM %s GROUP BY k ORDER BY c DESC LIMIT :n",
              "SELECT sr FROM %s WHERE k >= :lo ORDER BY sr LIMIT :n"]
    for shape in shapes:
        nparam = max(shape.count(":"), shape.count("?"))
        for t in ("ts", "tw", "tm"):
            sql = shape % t
            for _ in range(ncases(6)):
                vals = [rng.choice(LIMIT_VALUES) for _ in range(nparam)]
                cases.check(sql, vals, scan_args=vals, via_par_view=rng.random() < 0.5)
    cases.done()


def test_top_k_large():
    """Small LIMITs on the 20000-row table, whose keys have a few values
    each: every cut falls inside a run of ties."""
    rng = random.Random(SEED + 5)
    cases = Cases("top-k")
    fixed = ["SELECT k, i, sn FROM tb ORDER BY k LIMIT 5",
             "SELECT k, i, sn FROM tb ORDER BY k DESC LIMIT 5",
             "SELECT * FROM tb ORDER BY sn LIMIT 10",
             "SELECT * FROM tb ORDER BY sn COLLATE BINARY DESC, k LIMIT 10 OFFSET 3",
             "SELECT x, r FROM tb ORDER BY x NULLS LAST LIMIT 7",
             "SELECT rowid, r FROM tb ORDER BY r DESC NULLS LAST LIMIT 3",
             "SELECT sr, rowid FROM tb ORDER BY sr LIMIT 1",
             "SELECT i FROM tb ORDER BY i LIMIT 5 OFFSET 19990",
             "SELECT DISTINCT sn FROM tb ORDER BY sn LIMIT 2",
             "SELECT DISTINCT sr, k FROM tb ORDER BY k DESC LIMIT 3"]
    for sql in fixed:
        cases.check(sql)
    for _ in range(ncases(40)):
        sql = gen_order_by(rng, big=True)
        if " LIMIT " not in sql:
            sql += " LIMIT %d" % rng.choice([1, 2, 3, 10, 100])
        cases.check(sql)
    cases.done()


def test_spilled_sort():
    """SQLite's sort spills to disk past max(cache, 250 pages) of records
    (vdbesort.c; 1 MB here with cache_size 1): 20000 rows of 130 bytes and
    more make runs, merged, whose ties still come in reading order, and the
    views' too.  (Checked with strace: SQLite opens a temporary file.)"""
    c = world().conn
    cases = Cases("spilled sort")
    old = c.execute("PRAGMA cache_size").fetchone()[0]
    c.execute("PRAGMA cache_size = 1")
    c.execute("PRAGMA threads = 0")
    try:
        pad = "hex(zeroblob(60)) AS pad"
        for sql in ["SELECT k, i, sn, %s FROM tb ORDER BY k" % pad,
                    "SELECT i, r, s, sn, bl, %s FROM tb ORDER BY sn DESC" % pad,
                    "SELECT x, rowid, %s FROM tb ORDER BY x COLLATE NOCASE NULLS LAST, k DESC"
                    % pad,
                    "SELECT DISTINCT sr, k, %s FROM tb ORDER BY k" % pad]:
            cases.check(sql)
    finally:
        c.execute("PRAGMA cache_size = %d" % old)
    cases.done()


def test_empty_and_one_row():
    cases = Cases("empty and one row")
    for t in ("t0", "t1"):
        for sql in ["SELECT * FROM %s ORDER BY k", "SELECT k FROM %s ORDER BY 1 DESC LIMIT 0",
                    "SELECT i FROM %s ORDER BY i LIMIT 5 OFFSET 1",
                    "SELECT DISTINCT sn FROM %s ORDER BY sn", "SELECT DISTINCT x FROM %s",
                    "SELECT k, count(*) FROM %s GROUP BY k ORDER BY 2 LIMIT 1",
                    "SELECT s FROM %s ORDER BY s LIMIT 'x'"]:
            cases.check(sql % t)
    cases.done()


# The plain shapes the sort engine (ext/plan_sort.c) must accelerate: one
# rowid table, no WHERE or a simple one, ORDER BY columns, expressions,
# aliases or ordinals in any direction and NULLS placement and the three
# collations, integer LIMIT/OFFSET, SELECT DISTINCT with or without ORDER BY.
PLAIN_SHAPES = [
    "SELECT i, s FROM ts ORDER BY i",
    "SELECT i, s FROM ts ORDER BY i DESC",
    "SELECT i, r, s, sn, sr, bl, nm, x, k FROM ts ORDER BY k, s",
    "SELECT k, r FROM ts ORDER BY r NULLS LAST",
    "SELECT k, r FROM ts ORDER BY r DESC NULLS FIRST, k ASC",
    "SELECT x, k FROM ts ORDER BY x, k DESC LIMIT 10",
    "SELECT s FROM ts ORDER BY s COLLATE NOCASE",
    "SELECT s, sr FROM ts ORDER BY sr COLLATE RTRIM DESC, s COLLATE BINARY",
    "SELECT sn FROM ts ORDER BY sn",
    "SELECT i + 1 AS j, s FROM ts ORDER BY j",
    "SELECT i, s FROM ts ORDER BY length(s), -i",
    "SELECT i, s FROM ts ORDER BY 2, 1 DESC",
    "SELECT i AS a, k FROM ts ORDER BY a DESC NULLS LAST LIMIT 5 OFFSET 2",
    "SELECT i, k FROM ts WHERE k > 0 ORDER BY i LIMIT 20",
    "SELECT r FROM ts WHERE r IS NOT NULL ORDER BY r DESC LIMIT 3",
    "SELECT i, s FROM ts ORDER BY i LIMIT 0",
    "SELECT k, x, sn FROM tb ORDER BY k LIMIT 5",
    "SELECT i, s FROM tb ORDER BY i DESC LIMIT 100 OFFSET 50",
    "SELECT DISTINCT k FROM ts",
    "SELECT DISTINCT sn FROM ts",
    "SELECT DISTINCT k, sn FROM ts ORDER BY k, sn",
    "SELECT DISTINCT sr FROM ts ORDER BY sr DESC",
    "SELECT DISTINCT x FROM tb ORDER BY x LIMIT 3",
]


def test_plain_shapes_accelerated():
    c = world().conn
    native = []
    for sql in PLAIN_SHAPES:
        plan = c.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
        if plan.startswith("native:"):
            native.append("%s\n    %s" % (sql, plan.strip().split("\n")[0]))
    # Their rows are checked too, so that a wrong answer shows here as well.
    cases = Cases("plain shapes")
    for sql in PLAIN_SHAPES:
        cases.check(sql)
    try:
        cases.done()
        wrong = ""
    except AssertionError as e:
        wrong = "\n" + str(e)
    assert not native and not wrong, "%d of %d plain ORDER BY / DISTINCT shapes run natively:\n  %s%s" % (
        len(native), len(PLAIN_SHAPES), "\n  ".join(native), wrong)


def test_checker_finds_differences():
    """The comparison itself: a view of another SELECT that differs only in
    the order of tied rows, 1 against 1.0, -0.0 against 0.0, one row more,
    or an error, is a failure."""
    pairs = [
        ("SELECT k, i FROM ts ORDER BY k, i", "SELECT k, i FROM ts ORDER BY k, i DESC"),
        ("SELECT sn FROM ts ORDER BY sn", "SELECT sn FROM ts ORDER BY sn, rowid DESC"),
        ("SELECT k, s FROM ts ORDER BY k", "SELECT k, s FROM ts ORDER BY k, rowid DESC"),
        ("SELECT DISTINCT sn FROM ts", "SELECT DISTINCT sn FROM ts ORDER BY rowid DESC"),
        ("SELECT 1 AS v", "SELECT 1.0 AS v"),
        ("SELECT -0.0 AS v", "SELECT 0.0 AS v"),
        ("SELECT '1' AS v", "SELECT 1 AS v"),
        ("SELECT k FROM ts ORDER BY k LIMIT 3", "SELECT k FROM ts ORDER BY k LIMIT 4"),
        ("SELECT k FROM ts LIMIT 1", "SELECT k FROM ts LIMIT 'x'"),
        ("SELECT k FROM ts LIMIT 'x'", "SELECT k FROM ts LIMIT 1"),
    ]
    for sql, other in pairs:
        cases = Cases("checker")
        cases.check(sql, view_sql=other)
        assert len(cases.fails) == 1, (sql, other)
    cases = Cases("checker")
    cases.check("SELECT sn FROM ts ORDER BY sn", view_sql="SELECT sn FROM ts ORDER BY sn")
    assert not cases.fails, cases.fails


def report():
    print("SELECTs checked: %d ran accelerated, %d natively, %d are errors (par_explain)"
          % (STATS["accelerated"], STATS["native"], STATS["error"]))


if __name__ == "__main__":
    sys.exit(run("test_order", globals(), after=report))
