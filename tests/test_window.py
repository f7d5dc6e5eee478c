#!/usr/bin/python3
"""Window functions through parallel views, compared in order with SQLite
itself.

    /usr/bin/python3 tests/test_window.py ./parallel.so      # ~8 s (ASan build: 0.25 of the cases)
    WINDOW_CASES=4 WINDOW_SEED=7 ...                          # 4x the cases, another world

Every case runs one SELECT natively and as a parallel view at
par_config('threads') 1, 2 and 3 (min_rows 0: reads and kernels run on
several threads even for tiny tables) and compares the rows as sequences:
the same rows in the same order, each value of the same storage class,
REALs bit for bit; the thread counts must agree exactly with each other.
Where the native SELECT fails (integer overflow, a bad ntile argument, a
frame SQLite does not support), the view must fail with an error
containing the native message; where it succeeds, the view must not fail.

The order of the rows is part of the answer even without a top-level
ORDER BY: SQLite evaluates the windows of a SELECT from the last one
written to the first (calls with the same window share it), each as a
sort of the rows the one before it left, so the rows come out sorted by
the first window's PARTITION BY + ORDER BY, ties in the order the window
after it left them, and so on down to the reading order of the table
(rowid order, or an index's order when SQLite reads one).

The data make ties the rule: partition and order keys draw from a few
values each (NULL, 1 and 1.0, 'a' and 'A' under NOCASE, 'a' and 'a '
under RTRIM, mixed storage classes in one column, -0.0), numbers in text
('12', ' 3', '1e3', 'x'), REALs whose sums depend on the order of the
additions (0.1, 1e16, -1e16), and integers near 2^63 whose sums overflow,
in a running sum or midway through a sliding frame.  The world is one WAL
database file: rowid tables of 0, 1, 4, 300 and 2000 rows (the last with
an index on its partition column, so SQLite may read in index order) and
a few for the targeted tests (tie, tsmall, tnull, tb), all but tb
with columns of the declared types INTEGER, REAL, TEXT, TEXT COLLATE
NOCASE, TEXT COLLATE RTRIM, NUMERIC and none.

Tests:
  test_random_windows          SELECT items FROM t [WHERE] [ORDER BY]
                               [LIMIT/OFFSET], 1-4 window calls (every
                               built-in window function and aggregate
                               but count(DISTINCT), FILTER
                               now and then, bad ntile and nth_value
                               arguments) OVER (PARTITION BY 0-2 ORDER BY
                               0-3 [frame]) or OVER name with WINDOW name
                               AS (...), shared or different windows,
                               ROWS/RANGE/GROUPS frames in every BETWEEN
                               form and the short forms, EXCLUDE, plain
                               columns and row expressions beside them;
                               a few invalid ones (SQLite's errors)
  test_should_accelerate       of the SELECTs test_random_windows checks,
                               the ones the first window engine takes
                               (ACCELERATED_RULE below): at least
                               MIN_ACCELERATED of them must show a
                               "window" line in par_explain (fails until
                               the window engine lands); how many of those
                               then ran natively (par_profile's mode) is
                               printed, information only
  test_all_ties                every function on one partition of ties
  test_empty_and_one_row       every function on tables of 0 and 1 rows
  test_frames_past_partition   frames wider than their partitions
  test_null_keys               NULL partition and order keys (a third and a
                               quarter of tnull's rows), NULLS FIRST/LAST,
                               ASC and DESC
  test_collated_partitions     'a' and 'A' one NOCASE partition, 'a' and
                               'a ' one RTRIM partition, 1 and 1.0 one
  test_integer_overflow        sum() overflowing in a running frame, and
                               SQLite 3.40's own sliding-frame quirks: an
                               error where the frame's sum fits, a wrapped
                               value where it does not
  test_invalid_windows         SQLite's error messages, through the view
  test_large_wal_threads       20000 rows in a WAL file, read in parallel,
                               several partitions: bit-identical at 1, 2
                               and 3 threads and equal to SQLite
  test_checker_finds_differences
                               the comparison catches a changed tie order,
                               an INTEGER for a REAL, -0.0 for 0.0, a REAL
                               summed in another order, a row more, an
                               error

The last line is "test_window: N passed, N failed".
"""
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run, outcome, show, connect_ext  # noqa: E402

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
EXT = os.path.abspath(ARGS[0] if ARGS else "./parallel.so")
ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
SEED = int(os.environ.get("WINDOW_SEED", "20261128"))
SCALE = float(os.environ.get("WINDOW_CASES", "1")) * (0.25 if ASAN else 1.0)
THREADS = (1, 2, 3)
MAX_SHOWN = 8            # failures described in full per test
RANDOM_CASES = 260       # test_random_windows, nominal (times SCALE)
BIG_ROWS = 20000
# The share of the SELECTs that ACCELERATED_RULE says the window engine
# takes that par_explain must show running it ("window" line).  Not 1.0:
# the rule is the plan of the first version, not a promise for each case.
MIN_ACCELERATED = 0.70
TMP = tempfile.mkdtemp(prefix="par_window_")


def ncases(n):
    return max(3, int(n * SCALE))


def connect(path):
    return connect_ext(path, EXT)


# ---- the world --------------------------------------------------------------------

BIG = [2**62, 2**62 - 1, -2**62, 2**63 - 1, -2**63, 3, -3, 0]
# name, declared type, vocabulary.  p, g and o are the usual partition and
# order keys; big makes integer sums overflow.
COLUMNS = [
    ("p", "INTEGER", [0, 1, 2, 3, 1.0, 2.5, "1", "a", b"\x01"]),
    ("g", "TEXT COLLATE NOCASE", ["a", "A", "b", "B", "ab", "aB", "", "1", 1]),
    ("o", "", [1, 1.0, 2, 2.5, "2", "10", "a", "A", b"a", -0.0, 0, 3]),
    ("i", "INTEGER", [0, 1, -1, 2, 3, 7, 1.0, 2.5, "12", " 3", "x", 2**53]),
    ("r", "REAL", [0.0, -0.0, 1.0, 1, 0.5, -2.25, 0.1, 1e16, -1e16, 3.0, 1e300, "1e3"]),
    ("s", "TEXT", ["12", " 3", "1e3", "x", "a", "A", "", "3", 1, 2.5, b"1"]),
    ("sr", "TEXT COLLATE RTRIM", ["a", "a ", "b", "B  ", "", " ", "1", 1.5]),
    ("nm", "NUMERIC", [1, 1.0, "1.0", "2", 2.5, "2.50", "x", "", -0.0, 0, b"1", "1e3"]),
    ("x", "", [1, 1.0, "1", -0.0, 0, 2, 2.5, "a", "A", "a ", b"", b"a", " 3", "1e3", 2**53, 0.1]),
    ("big", "INTEGER", BIG),
]
COLNAMES = [c for c, _, _ in COLUMNS]
DECL = ", ".join(("%s %s" % (n, d)).strip() for n, d, _ in COLUMNS)


def make_rows(rng, n, fixed=None):
    """n rows over COLUMNS: each column draws (skewed) from a few values of
    its vocabulary, some NULL, so that keys tie a lot; fixed maps a column
    to the one value it takes in every row."""
    vocab, pnull = {}, {}
    for name, _, pool in COLUMNS:
        vocab[name] = rng.sample(pool, rng.choice([2, 3, 4, len(pool)]))
        pnull[name] = rng.choice([0.0, 0.1, 0.3])
    rows = []
    for _ in range(n):
        row = []
        for name, _, _ in COLUMNS:
            voc = vocab[name]
            if fixed and name in fixed:
                row.append(fixed[name])
            elif rng.random() < pnull[name]:
                row.append(None)
            else:
                row.append(voc[min(int(rng.expovariate(2.5 / len(voc))), len(voc) - 1)])
        rows.append(row)
    return rows


class World:
    def __init__(self):
        rng = random.Random(SEED)
        c = connect(os.path.join(TMP, "window.db"))
        c.execute("PRAGMA journal_mode=WAL")
        ins = ",".join("?" * len(COLUMNS))
        c.execute("BEGIN")
        for name, n in [("t0", 0), ("t1", 1), ("t4", 4), ("ts", 300), ("tm", 2000)]:
            c.execute("CREATE TABLE %s(%s)" % (name, DECL))
            c.executemany("INSERT INTO %s VALUES(%s)" % (name, ins), make_rows(rng, n))
        c.execute("CREATE INDEX tm_p ON tm(p)")
        # One partition of ties: p and o the same in every row.
        c.execute("CREATE TABLE tie(%s)" % DECL)
        c.executemany("INSERT INTO tie VALUES(%s)" % ins, make_rows(rng, 40, {"p": 1, "o": 2}))
        # Partitions of 1-3 rows: frames wider than their partition.
        c.execute("CREATE TABLE tsmall(%s)" % DECL)
        rows = make_rows(rng, 60)
        for j, row in enumerate(rows):
            row[0] = j // 2 if j % 5 else j     # p
        c.executemany("INSERT INTO tsmall VALUES(%s)" % ins, rows)
        # NULL partition and order keys in every third and fourth row.
        c.execute("CREATE TABLE tnull(%s)" % DECL)
        rows = make_rows(rng, 300)
        for j, row in enumerate(rows):
            row[0] = None if j % 3 == 0 else row[0]     # p
            row[2] = None if j % 4 == 0 else row[2]     # o
        c.executemany("INSERT INTO tnull VALUES(%s)" % ins, rows)
        # The large table: several partitions, REALs whose sums depend on
        # the order of the additions.
        c.execute("CREATE TABLE tb(p INTEGER, g TEXT COLLATE NOCASE, o INTEGER, v REAL, w INTEGER, x)")
        rows = []
        for j in range(BIG_ROWS):
            rows.append((rng.choice([0, 1, 2, 3, 4, 5, 6, None]), rng.choice(["a", "A", "b", "c", None]),
                         rng.randrange(50) if rng.random() > 0.05 else None,
                         rng.choice([0.1, 0.2, 1e16, -1e16, 3.5, -0.0, None, rng.random()]),
                         rng.randrange(-1000, 1000), rng.choice([1, 1.0, "a", b"b", None, 2.5])))
        c.executemany("INSERT INTO tb VALUES(?,?,?,?,?,?)", rows)
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

def quote(sql):
    return "'" + sql.replace("'", "''") + "'"


def plan_of(sql):
    """par_explain's text for sql, or None where par_explain fails."""
    try:
        return world().conn.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
    except sqlite3.Error:
        return None


def runs_window(plan):
    """par_explain shows the window engine running the windows."""
    return (plan is not None and not plan.startswith("native:")
            and any(line.startswith("window") for line in plan.split("\n")))


def first_difference(a, b):
    if len(a) != len(b):
        return "row count: native %d, view %d" % (len(a), len(b))
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "row %d: native %r, view %r" % (i, x, y)
    return None


class Cases:
    """One test's cases: the failures it found, described up to MAX_SHOWN."""

    def __init__(self, name):
        self.name, self.n, self.nwindow, self.fails = name, 0, 0, []

    def fail(self, sql, why):
        self.fails.append("%s\n    %s" % (sql, why))

    def check(self, sql, view_sql=None):
        """sql natively against a view of it (of view_sql when given: the
        checker's own test) scanned at each thread count; returns the
        native outcome."""
        c = world().conn
        self.n += 1
        self.nwindow += runs_window(plan_of(sql))
        want = outcome(lambda: c.execute(sql).fetchall())
        try:
            c.execute("CREATE VIRTUAL TABLE temp.wv USING parallel(%s)" % quote(view_sql or sql))
        except sqlite3.Error as e:
            if not (want[0] == "error" and want[1] in str(e)):
                self.fail(sql, "native %s, creating the view: %s" % (show(want), e))
            return want
        try:
            got = []
            for t in THREADS:
                c.execute("SELECT par_config('threads', ?)", (t,))
                got.append(outcome(lambda: c.execute("SELECT * FROM wv").fetchall()))
        finally:
            c.execute("SELECT par_config('threads', 0)")
            c.execute("DROP TABLE temp.wv")
        for t, g in zip(THREADS[1:], got[1:]):
            if g != got[0]:
                self.fail(sql, "threads 1 gave %s, threads %d %s" % (show(got[0]), t, show(g)))
                return want
        g = got[0]
        if want[0] == "error" or g[0] == "error":
            if not (want[0] == g[0] == "error" and want[1] in g[1]):
                self.fail(sql, "native %s, view %s" % (show(want), show(g)))
            return want
        diff = first_difference(want[1], g[1])
        if diff:
            self.fail(sql, "%s\n    native %s\n    view   %s" % (diff, show(want), show(g)))
        return want

    def done(self):
        assert self.n > 0
        if self.fails:
            raise AssertionError("%d of %d cases differ:\n  %s" % (
                len(self.fails), self.n, "\n  ".join(self.fails[:MAX_SHOWN])))
        print("     %s: %d cases, %d through the window engine" % (self.name, self.n, self.nwindow))


# ---- the generator ----------------------------------------------------------------

PART_TERMS = ["p", "p", "g", "o", "i % 3", "s COLLATE NOCASE", "sr", "x", "nm", "r > 0", "p, g"]
ORDER_TERMS = ["o", "o", "i", "r", "s", "g", "sr", "nm", "x", "p", "i % 3", "s COLLATE NOCASE",
               "-i", "x COLLATE NOCASE", "big", "rowid", "length(s)"]
NUMERIC_ORDER = ["o", "i", "r", "nm", "x", "big", "-i", "rowid"]   # for RANGE n PRECEDING
DIRS = ["", "", " ASC", " DESC", " DESC"]
NULLSP = ["", "", "", " NULLS FIRST", " NULLS LAST"]
EXCLUDES = ["NO OTHERS", "CURRENT ROW", "GROUP", "TIES"]
ARGS_X = ["i", "r", "s", "g", "sr", "nm", "x", "o", "p", "i + 1", "r * 2", "length(s)",
          "x COLLATE NOCASE", "big"]
SUM_ARGS = ["i", "r", "s", "nm", "x", "o", "p", "i + 1", "r * 2", "length(s)", "big", "big", "r"]
DEFAULTS = ["0", "'d'", "NULL", "1.5", "-0.0", "x", "i", "s"]
FILTERS = ["i > 0", "x IS NOT NULL", "g = 'a'", "r < 1", "o = 1"]
ITEMS = ["p", "g", "o", "x", "r", "rowid", "i + 1", "typeof(x)", "s || '!'", "sr", "nm"]
WHERES = ["p > 0", "i IS NOT NULL", "g <> 'b'", "o = 1", "r > 0.5", "typeof(x) <> 'blob'",
          "rowid % 3 <> 0", "NOT (p = 2)"]
WRAPS = ["(%s) + 1", "coalesce(%s, 0)", "-(%s)", "typeof(%s)"]
# rank: SQLite 3.40 ranks a frame start/end as UP < nP < CR < nF < UF; a
# BETWEEN frame is valid when its start does not rank above its end.
BOUNDS = [("UNBOUNDED PRECEDING", 0), ("%d PRECEDING", 1), ("CURRENT ROW", 2),
          ("%d FOLLOWING", 3), ("UNBOUNDED FOLLOWING", 4)]


class Window:
    """A window definition and what the first window engine makes of it."""

    def __init__(self, parts, orders, frame, unit, bounds, exclude):
        self.parts = parts            # PARTITION BY terms
        self.orders = orders          # ORDER BY terms, with direction and NULLS
        self.frame = frame            # frame text, or ""
        self.unit = unit              # ROWS, RANGE, GROUPS or None
        self.bounds = bounds          # (start kind, end kind): 'U', 'n', 'C' per BOUNDS
        self.exclude = exclude
        self.valid = True             # SQLite accepts it (as the generator knows)

    def text(self):
        s = []
        if self.parts:
            s.append("PARTITION BY " + ", ".join(self.parts))
        if self.orders:
            s.append("ORDER BY " + ", ".join(self.orders))
        if self.frame:
            s.append(self.frame)
        return " ".join(s)

    def accelerated(self):
        """ACCELERATED_RULE, frames: ROWS/RANGE/GROUPS with UNBOUNDED and
        CURRENT ROW bounds, n PRECEDING/FOLLOWING for ROWS and GROUPS, no
        EXCLUDE."""
        if not self.valid or self.exclude:
            return False
        return self.unit != "RANGE" or "n" not in self.bounds


def gen_bound(rng, kinds):
    text, rank = rng.choice([b for b in BOUNDS if b[1] in kinds])
    n = rng.randint(0, 3)
    return (text % n if "%d" in text else text), rank


def gen_window(rng):
    parts = []
    if rng.random() < 0.65:
        parts = rng.choice(PART_TERMS).split(", ")
        if rng.random() < 0.2:
            parts.append(rng.choice(["o", "g", "i % 2"]))
    orders = [rng.choice(ORDER_TERMS) + rng.choice(DIRS) + rng.choice(NULLSP)
              for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3]))]
    w = Window(parts, orders, "", None, (), "")
    if rng.random() < 0.4:
        return w
    unit = rng.choice(["ROWS", "ROWS", "RANGE", "GROUPS"])
    p = rng.random()
    if p < 0.2:                         # the short forms
        start, r0 = gen_bound(rng, (0, 1, 2))
        w.frame, w.bounds = "%s %s" % (unit, start), (BOUNDS[r0][0][0], "C")
    else:
        if p < 0.93:                    # a valid BETWEEN
            start, r0 = gen_bound(rng, (0, 1, 2, 3))
            end, r1 = gen_bound(rng, [k for k in (1, 2, 3, 4) if k >= r0])
        else:                           # any: SQLite's error where invalid
            start, r0 = gen_bound(rng, (0, 1, 2, 3))
            end, r1 = gen_bound(rng, (1, 2, 3, 4))
            w.valid = r0 <= r1
        w.frame = "%s BETWEEN %s AND %s" % (unit, start, end)
        w.bounds = (BOUNDS[r0][0][0], BOUNDS[r1][0][0])
    w.bounds = tuple("n" if b in "%" else b for b in w.bounds)
    w.unit = unit
    if unit == "RANGE" and "n" in w.bounds:
        # One numeric ORDER BY term, or (now and then) SQLite's error.
        if rng.random() < 0.9:
            w.orders = [rng.choice(NUMERIC_ORDER) + rng.choice(DIRS) + rng.choice(NULLSP)]
        elif len(w.orders) != 1:
            w.valid = False
    if rng.random() < 0.1:
        w.exclude = rng.choice(EXCLUDES)
        w.frame += " EXCLUDE " + w.exclude
    return w


def gen_call(rng):
    """(function call text, is an aggregate, the engine takes it)."""
    x = rng.choice(ARGS_X)
    p = rng.random()
    if p < 0.2:
        return rng.choice(["row_number()", "rank()", "dense_rank()", "percent_rank()",
                           "cume_dist()"]), False, True
    if p < 0.27:
        if rng.random() < 0.85:
            return "ntile(%d)" % rng.randint(1, 7), False, True
        return "ntile(%s)" % rng.choice(["0", "-1", "'x'", "NULL"]), False, False
    if p < 0.42:
        f = rng.choice(["lag", "lead"])
        q = rng.random()
        if q < 0.3:
            return "%s(%s)" % (f, x), False, True
        k = rng.randint(0, 3)
        if q < 0.6:
            return "%s(%s, %d)" % (f, x, k), False, True
        return "%s(%s, %d, %s)" % (f, x, k, rng.choice(DEFAULTS)), False, True
    if p < 0.55:
        q = rng.random()
        if q < 0.35:
            return "first_value(%s)" % x, False, True
        if q < 0.7:
            return "last_value(%s)" % x, False, True
        if q < 0.97:
            return "nth_value(%s, %d)" % (x, rng.randint(1, 4)), False, True
        return "nth_value(%s, 0)" % x, False, False
    y = rng.choice(SUM_ARGS)
    call = rng.choice(["sum(%s)" % y, "total(%s)" % y, "avg(%s)" % y, "count(*)", "count(%s)" % x,
                       "min(%s)" % x, "max(%s)" % x, "group_concat(%s)" % x,
                       "group_concat(%s, '-')" % x, "sum(%s)" % y, "count(*)"])
    return call, True, True


class Select:
    def __init__(self, sql, should):
        self.sql, self.should = sql, should


def gen_select(rng):
    """A random SELECT with window calls, and whether ACCELERATED_RULE says
    the first window engine takes it:

    ACCELERATED_RULE: each item a plain column, a row expression or a whole
    window call (no expression around one); no GROUP BY, FILTER, EXCLUDE or
    DISTINCT; one table; functions row_number, rank, dense_rank,
    percent_rank, cume_dist, ntile(literal), lag/lead (literal offset >= 0,
    any default), first_value, last_value, nth_value(literal), count, sum,
    total, avg, min, max, group_concat; frames of ROWS/RANGE/GROUPS with
    UNBOUNDED or CURRENT ROW bounds or (ROWS and GROUPS) n PRECEDING/
    FOLLOWING; no top-level ORDER BY but a prefix of the first window's
    PARTITION BY + ORDER BY terms."""
    t = rng.choice(["t0", "t1", "t4", "ts", "ts", "tm", "tm", "tm"])
    should = True
    windows = [gen_window(rng)]
    named = rng.random() < 0.25
    items = []                          # (text, its window or None)
    for _ in range(rng.randint(1, 4)):
        call, agg, ok = gen_call(rng)
        should &= ok
        if rng.random() < 0.4:
            w = windows[0]
        else:
            w = gen_window(rng)
            windows.append(w)
        should &= w.accelerated()
        if rng.random() < 0.1 and (agg or rng.random() < 0.2):
            call += " FILTER (WHERE %s)" % rng.choice(FILTERS)
            should = False
        if named:
            call += " OVER w%d" % windows.index(w)
        else:
            call += " OVER (%s)" % w.text()
        if rng.random() < 0.06:
            call = rng.choice(WRAPS) % call
            should = False
        items.append((call, w))
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        items.append((rng.choice(ITEMS), None))
    rng.shuffle(items)
    first = next(w for _, w in items if w is not None)
    distinct = rng.random() < 0.03
    should &= not distinct
    sql = "SELECT %s%s FROM %s" % ("DISTINCT " if distinct else "", ", ".join(i for i, _ in items), t)
    if rng.random() < 0.25:
        sql += " WHERE " + rng.choice(WHERES)
    if named:
        used = [w for _, w in items if w is not None]
        sql += " WINDOW " + ", ".join("w%d AS (%s)" % (j, w.text()) for j, w in enumerate(windows)
                                      if w in used)
    p = rng.random()
    if p < 0.15:
        keys = first.parts + first.orders
        if keys:
            sql += " ORDER BY " + ", ".join(keys[:rng.randint(1, len(keys))])
        else:
            sql += " ORDER BY rowid"
            should = False
    elif p < 0.22:
        sql += " ORDER BY %s%s%s" % (rng.choice(ITEMS + ["1"]), rng.choice(DIRS), rng.choice(NULLSP))
        should = False
    if rng.random() < 0.15:
        sql += " LIMIT %d" % rng.choice([0, 1, 3, 10, 100])
        if rng.random() < 0.5:
            sql += " OFFSET %d" % rng.choice([0, 1, 5, 50])
    return Select(sql, should)


def random_selects():
    """test_random_windows' SELECTs: the same ones in test_should_accelerate."""
    rng = random.Random(SEED + 1)
    return [gen_select(rng) for _ in range(ncases(RANDOM_CASES))]


# ---- the tests ----------------------------------------------------------------------

def test_random_windows():
    cases = Cases("random windows")
    nerr = 0
    for s in random_selects():
        nerr += cases.check(s.sql)[0] == "error"
    cases.done()
    print("     of which %d fail natively (the view gives the same error)" % nerr)
    assert nerr < cases.n / 3, "too many errors: %d of %d" % (nerr, cases.n)


def test_should_accelerate():
    selects = random_selects()
    should = [s for s in selects if s.should]
    missed, other, fell_back = [], 0, 0
    for s in selects:
        plan = plan_of(s.sql)
        if not s.should:
            other += runs_window(plan)
        elif not runs_window(plan):
            missed.append("%s\n    %s" % (s.sql, (plan or "par_explain fails").split("\n")[0]))
        else:
            # Information only: planned, but run natively after all (e.g.
            # mixed storage classes in a sliding REAL sum).
            try:
                prof = json.loads(world().conn.execute("SELECT par_profile(?)", (s.sql,)).fetchone()[0])
                fell_back += prof["mode"] == "native"
            except sqlite3.Error:
                pass
    taken = len(should) - len(missed)
    print("     %d of %d SELECTs the first engine should take show a window line, %d of them"
          " ran natively after all (par_profile); %d of the %d others show one"
          % (taken, len(should), fell_back, other, len(selects) - len(should)))
    assert len(should) >= len(selects) / 3, (len(should), len(selects))
    assert taken >= MIN_ACCELERATED * len(should), \
        "only %d of %d (%.0f%%, at least %.0f%% wanted) run the window engine; for example:\n  %s" % (
            taken, len(should), 100.0 * taken / len(should), 100 * MIN_ACCELERATED,
            "\n  ".join(missed[:MAX_SHOWN]))


FUNCS = ["row_number()", "rank()", "dense_rank()", "percent_rank()", "cume_dist()", "ntile(3)",
         "ntile(1)", "lag(x)", "lag(x, 2)", "lag(x, 0)", "lag(x, 1, 'd')", "lag(x, 3, i)",
         "lead(x)", "lead(r, 2)", "lead(x, 1, -0.0)", "lead(s, 3, x)", "first_value(x)",
         "last_value(x)", "nth_value(x, 1)", "nth_value(r, 3)", "nth_value(s, 4)", "sum(i)",
         "sum(r)", "sum(s)", "sum(nm)", "total(x)", "total(i)", "avg(r)", "avg(nm)", "count(*)",
         "count(x)", "min(x)", "max(x)", "min(g)", "max(sr)", "min(x COLLATE NOCASE)",
         "group_concat(x)", "group_concat(s, '-')", "group_concat(g, '')"]
FRAMES = ["", "ROWS UNBOUNDED PRECEDING", "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
          "ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING", "ROWS 2 PRECEDING",
          "RANGE BETWEEN CURRENT ROW AND CURRENT ROW", "RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
          "GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING", "GROUPS CURRENT ROW",
          "ROWS BETWEEN 3 FOLLOWING AND UNBOUNDED FOLLOWING", "ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING"]


def every_function(cases, table, windows, per=3):
    """Each function of FUNCS over each window, per calls to a SELECT."""
    for w in windows:
        for j in range(0, len(FUNCS), per):
            calls = ", ".join("%s OVER (%s)" % (f, w) for f in FUNCS[j:j + per])
            cases.check("SELECT rowid, x, %s FROM %s" % (calls, table))


def test_all_ties():
    """One partition, one order value: every row a peer of every other."""
    cases = Cases("all ties")
    windows = ["", "ORDER BY o", "PARTITION BY p ORDER BY o DESC", "PARTITION BY p"]
    windows += ["PARTITION BY p ORDER BY o " + f for f in FRAMES[1:]]
    every_function(cases, "tie", windows if not ASAN else windows[::2], per=5)
    cases.done()


def test_empty_and_one_row():
    cases = Cases("0 and 1 rows")
    windows = ["", "PARTITION BY p ORDER BY o", "ORDER BY x ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
               "ORDER BY i RANGE BETWEEN 2 PRECEDING AND 2 FOLLOWING", "ORDER BY o GROUPS 1 PRECEDING"]
    for t in ["t0", "t1"]:
        every_function(cases, t, windows, per=8)
        for bad in ["ntile(0)", "ntile(-1)", "ntile('x')", "ntile(NULL)", "nth_value(x, 0)"]:
            want = cases.check("SELECT %s OVER (ORDER BY o) FROM %s" % (bad, t))
            assert (want[0] == "error") == (t == "t1"), (bad, t, show(want))
    cases.check("SELECT sum(big) OVER (), count(*) OVER () FROM t0")
    cases.done()


def test_frames_past_partition():
    """Partitions of 1-3 rows (tsmall) under frames of up to 3 rows each
    side, nth_value past the frame's end."""
    cases = Cases("frames past the partition")
    for f in ["ROWS BETWEEN 3 PRECEDING AND 3 FOLLOWING", "ROWS BETWEEN 3 FOLLOWING AND UNBOUNDED FOLLOWING",
              "ROWS BETWEEN UNBOUNDED PRECEDING AND 3 PRECEDING", "GROUPS BETWEEN 3 PRECEDING AND 2 FOLLOWING",
              "GROUPS BETWEEN 2 FOLLOWING AND 3 FOLLOWING", "RANGE BETWEEN 3 PRECEDING AND 3 FOLLOWING",
              "ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING", "ROWS BETWEEN 0 PRECEDING AND 0 FOLLOWING"]:
        w = "PARTITION BY p ORDER BY %s %s" % ("i" if f.startswith("RANGE") else "o", f)
        cases.check("SELECT p, o, sum(i) OVER w, count(*) OVER w, nth_value(x, 4) OVER w, "
                    "last_value(x) OVER w, group_concat(x) OVER w, min(x) OVER w, avg(r) OVER w "
                    "FROM tsmall WINDOW w AS (%s)" % w)
    cases.check("SELECT p, lag(x, 3) OVER w, lead(x, 3, 'none') OVER w, ntile(7) OVER w, "
                "cume_dist() OVER w FROM tsmall WINDOW w AS (PARTITION BY p ORDER BY o)")
    cases.done()


def test_null_keys():
    cases = Cases("NULL keys")
    for t in ["tnull", "tm"]:
        for order in ["o", "o NULLS FIRST", "o NULLS LAST", "o DESC", "o DESC NULLS FIRST",
                      "o DESC NULLS LAST", "x NULLS LAST, o DESC"]:
            cases.check("SELECT p, o, rank() OVER w, row_number() OVER w, sum(r) OVER w, "
                        "first_value(x) OVER w, lag(o) OVER w FROM %s "
                        "WINDOW w AS (PARTITION BY p ORDER BY %s)" % (t, order))
        cases.check("SELECT p, g, dense_rank() OVER (PARTITION BY p, g ORDER BY o NULLS LAST "
                    "GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW), count(o) OVER (PARTITION BY p) "
                    "FROM %s" % t)
    cases.done()


def test_range_offsets_over_nulls_and_text():
    """RANGE frames with offsets over ORDER BY values with NULLs: NULL +- n
    is NULL, NULLs are peers, beyond every number on the side the order
    puts them (NULLS FIRST/LAST, ASC/DESC): a NULL row's frame is the NULL
    group (to the partition's end with an UNBOUNDED bound), a number's
    holds NULLs only through an UNBOUNDED bound.  Texts and blobs: SQLite
    adds no offset to them, and they sort after every number, by the
    term's collation."""
    c = world().conn
    c.execute("DROP TABLE IF EXISTS trn")
    c.execute("CREATE TABLE trn(p, o, v INTEGER, s TEXT COLLATE NOCASE)")
    rng = random.Random(SEED + 13)
    texts = [None, 1, 2, 2.5, "a", "A", "b", "10", "2", b"x", b"", " a", "a "]
    c.executemany("INSERT INTO trn VALUES(?, ?, ?, ?)",
                  [(rng.randrange(3), rng.choice([None, None, 1, 2, 3, 5, 2.5, -1, 7.0, 2**53]),
                    rng.randrange(100), rng.choice(texts)) for _ in range(300)])
    cases = Cases("RANGE offsets over NULLs and text")
    frames = ["BETWEEN 1 PRECEDING AND 1 FOLLOWING", "BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING",
              "BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING", "BETWEEN 2 FOLLOWING AND 3 FOLLOWING",
              "BETWEEN 0 PRECEDING AND CURRENT ROW", "2 PRECEDING"]
    for f in frames if not ASAN else frames[::2]:
        for od in ["o", "o DESC", "o NULLS LAST", "o DESC NULLS FIRST", "s", "s COLLATE BINARY DESC",
                   "s COLLATE RTRIM NULLS LAST"]:
            sql = ("SELECT rowid, sum(v) OVER w, count(*) OVER w, min(v) OVER w, first_value(v) OVER w "
                   "FROM trn WINDOW w AS (PARTITION BY p ORDER BY %s RANGE %s)" % (od, f))
            cases.check(sql)
            mode = json.loads(c.execute("SELECT par_profile(?)", (sql,)).fetchone()[0])["mode"]
            assert mode != "native", (sql, mode)
    cases.done()
    c.execute("DROP TABLE trn")


def test_collated_partitions():
    """'a' and 'A' are one partition under NOCASE, 'a' and 'a ' one under
    RTRIM, 1 and 1.0 one partition in a column with no affinity."""
    c = world().conn
    c.execute("DROP TABLE IF EXISTS tc")
    c.execute("CREATE TABLE tc(g TEXT COLLATE NOCASE, sr TEXT COLLATE RTRIM, s TEXT, x, v INTEGER)")
    rows = [("a", "a", "a", 1, 1), ("A", "a ", "A", 1.0, 2), ("b", "b", "b", 2, 3),
            ("B", "B  ", "ab", "1", 4), ("a", "a  ", "A", 1, 5), (None, None, None, None, 6),
            ("aB", "", "AB", 1.0, 7), ("Ab", " ", "aB", b"1", 8)]
    c.executemany("INSERT INTO tc VALUES(?,?,?,?,?)", rows * 3)
    cases = Cases("collated partitions")
    for part in ["g", "sr", "s COLLATE NOCASE", "x", "s", "g COLLATE BINARY", "s COLLATE RTRIM"]:
        cases.check("SELECT rowid, %s, row_number() OVER w, sum(v) OVER w, count(*) OVER w, "
                    "first_value(s) OVER w, rank() OVER (PARTITION BY %s ORDER BY s) "
                    "FROM tc WINDOW w AS (PARTITION BY %s ORDER BY rowid)" % (part, part, part))
        cases.check("SELECT g, min(s) OVER (ORDER BY %s), max(s) OVER (ORDER BY %s DESC "
                    "ROWS 1 PRECEDING) FROM tc" % (part, part))
    n = c.execute("SELECT count(DISTINCT c) FROM (SELECT count(*) OVER (PARTITION BY g) AS c FROM tc "
                  "WHERE g IN ('a', 'A'))").fetchone()[0]
    assert n == 1, "'a' and 'A' are not one NOCASE partition"
    c.execute("DROP TABLE tc")
    cases.done()


def test_integer_overflow():
    """sum() of integers past 2^63: "integer overflow" from a running sum;
    in sliding frames SQLite 3.40 removes the row leaving the frame
    (without an overflow check) before it adds the one entering (with
    one), so an intermediate sum that wraps gives an error where the
    frame's own sum fits, or a wrapped value where it does not."""
    c = world().conn
    c.execute("DROP TABLE IF EXISTS tov")
    c.execute("CREATE TABLE tov(id INTEGER PRIMARY KEY, p INTEGER, v INTEGER)")
    seqs = {1: [2**62, 2**62 - 1, 1, -2**62],
            2: [-2**62, 2**62, 2**62, -2**62],
            3: [-2**62, 2**62, 2**62, 2**62],
            4: [1, 2, 3, 4]}
    c.executemany("INSERT INTO tov(p, v) VALUES(?, ?)", [(p, v) for p, vs in seqs.items() for v in vs])
    cases = Cases("integer overflow")
    E, M = 2**62, 2**63 - 1
    # window -> partition -> SQLite 3.40's sums, or its error
    expect = {
        "PARTITION BY p ORDER BY id": {1: "error", 2: [-E, 0, E, 0], 4: [1, 3, 6, 10]},
        "PARTITION BY p ORDER BY id ROWS 1 PRECEDING": {1: [E, M, E, 1 - E], 2: "error"},
        # The frames' sums are -E, 0, E, E: all fit, yet removing -E from
        # 0 + E (2^63) wraps, and adding -E to the wrapped sum overflows.
        "PARTITION BY p ORDER BY id ROWS 2 PRECEDING": {2: "error",
                                                         # the last is really 3 * 2^62
                                                         3: [-E, 0, E, -E]},
        "PARTITION BY p ORDER BY id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING": {2: [E, 0, 0, E], 3: "error"},
        "PARTITION BY p ORDER BY id ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING": {1: [M, E, 1 - E, -E]},
        "PARTITION BY p ORDER BY id GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW": {1: [E, M, E, 1 - E],
                                                                                 3: "error"},
        "PARTITION BY p": {2: [0, 0, 0, 0], 3: "error"},
    }
    for w, per_p in expect.items():
        for p, want in per_p.items():
            got = cases.check("SELECT id, v, sum(v) OVER w, total(v) OVER w, avg(v) OVER w, "
                              "count(v) OVER w FROM tov WHERE p = %d WINDOW w AS (%s)" % (p, w))
            if want == "error":
                assert got == ("error", "integer overflow"), (w, p, show(got))
            else:
                assert got[0] == "ok" and [r[2] for r in got[1]] == [("int", v) for v in want], \
                    (w, p, show(got))
    # All partitions at once: one overflow anywhere fails the whole SELECT.
    cases.check("SELECT id, sum(v) OVER (PARTITION BY p ORDER BY id ROWS 1 PRECEDING) FROM tov")
    cases.check("SELECT id, sum(v) OVER (PARTITION BY p ORDER BY id ROWS 2 PRECEDING) FROM tov")
    cases.check("SELECT id, sum(v) OVER (PARTITION BY p ORDER BY id ROWS 2 PRECEDING) FROM tov WHERE p <> 2")
    cases.check("SELECT id, sum(v) OVER (ORDER BY id) FROM tov WHERE p = 4")
    c.execute("DROP TABLE tov")
    cases.done()


def test_invalid_windows():
    cases = Cases("invalid windows")
    bad = [
        ("SELECT sum(i) OVER (ORDER BY o, i RANGE 1 PRECEDING) FROM ts", "requires one ORDER BY"),
        ("SELECT sum(i) OVER (RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM ts", "requires one ORDER BY"),
        ("SELECT sum(i) OVER (ORDER BY o ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM ts",
         "unsupported frame specification"),
        ("SELECT sum(i) OVER (ORDER BY o ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW) FROM ts",
         "unsupported frame specification"),
        ("SELECT sum(i) OVER (ORDER BY o ROWS -1 PRECEDING) FROM ts", "non-negative integer"),
        ("SELECT sum(i) OVER (ORDER BY o ROWS BETWEEN CURRENT ROW AND 1.5 FOLLOWING) FROM ts",
         "non-negative integer"),
        ("SELECT row_number() FILTER (WHERE i > 0) OVER () FROM ts", "FILTER clause"),
        ("SELECT count(DISTINCT x) OVER () FROM ts", "DISTINCT is not supported"),
        ("SELECT sum(i) OVER w FROM ts", "no such window: w"),
        ("SELECT ntile(0) OVER (ORDER BY o) FROM ts", "argument of ntile must be a positive integer"),
        ("SELECT ntile(-1) OVER () FROM ts", "argument of ntile must be a positive integer"),
        ("SELECT ntile('x') OVER () FROM ts", "argument of ntile must be a positive integer"),
        ("SELECT ntile(NULL) OVER () FROM ts", "argument of ntile must be a positive integer"),
        ("SELECT nth_value(x, 0) OVER () FROM ts", "second argument to nth_value"),
        ("SELECT rank(x) OVER () FROM ts", "wrong number of arguments"),
        ("SELECT lag() OVER () FROM ts", "wrong number of arguments"),
        ("SELECT nosuch(x) OVER () FROM ts", "no such function"),
        ("SELECT abs(x) OVER () FROM ts", "abs() may not be used as a window function"),
        ("SELECT sum(nosuch) OVER () FROM ts", "no such column"),
        ("SELECT i FROM ts WHERE sum(i) OVER () > 0", "misuse of window function"),
    ]
    for sql, fragment in bad:
        want = cases.check(sql)
        assert want[0] == "error" and fragment in want[1], (sql, show(want))
    cases.done()


def test_large_wal_threads():
    """20000 rows in a WAL file (read in parallel: min_rows 0), 8
    partitions of ~2500 rows, REAL sums that depend on the order of the
    additions: bit-identical at 1, 2 and 3 threads and equal to SQLite."""
    c = world().conn
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # The setup reads tb in parallel (shown by a shape accelerated today).
    plan = plan_of("SELECT p, sum(v) FROM tb GROUP BY p")
    assert "tb: parallel" in plan, plan
    cases = Cases("20000 rows")
    shapes = [
        "SELECT rowid, sum(v) OVER (PARTITION BY p ORDER BY o, rowid) FROM tb",
        "SELECT p, o, sum(v) OVER (PARTITION BY p ORDER BY o), total(v) OVER (PARTITION BY p ORDER BY o) FROM tb",
        "SELECT avg(v) OVER (PARTITION BY g ORDER BY o ROWS BETWEEN 6 PRECEDING AND CURRENT ROW), w FROM tb",
        "SELECT row_number() OVER w, rank() OVER w, dense_rank() OVER w, percent_rank() OVER w, "
        "cume_dist() OVER w, ntile(4) OVER w FROM tb WINDOW w AS (PARTITION BY p ORDER BY o DESC)",
        "SELECT lag(v, 2, 0) OVER w, lead(x) OVER w, first_value(w) OVER w, last_value(x) OVER w, "
        "nth_value(v, 3) OVER w FROM tb WINDOW w AS (PARTITION BY p, g ORDER BY o NULLS LAST)",
        "SELECT sum(w) OVER (PARTITION BY p ORDER BY o RANGE BETWEEN 3 PRECEDING AND 2 FOLLOWING), "
        "count(x) OVER (PARTITION BY p ORDER BY o GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM tb",
        "SELECT min(x) OVER w, max(v) OVER w, group_concat(w, ',') OVER w FROM tb "
        "WINDOW w AS (PARTITION BY g ORDER BY rowid ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING)",
        "SELECT g, o, sum(v) OVER (ORDER BY o ROWS UNBOUNDED PRECEDING), "
        "sum(w) OVER (PARTITION BY g) FROM tb WHERE o > 10",
        "SELECT p, o, row_number() OVER (PARTITION BY p ORDER BY o) FROM tb ORDER BY p LIMIT 50 OFFSET 2490",
    ]
    for sql in shapes if not ASAN else shapes[::2]:
        cases.check(sql)
    cases.done()


def test_group_concat_frames():
    """group_concat over frames whose start moves: SQLite removes a value
    by its byte count plus a separator length (groupConcatInverse), and
    when that empties the text while values remain (empty texts), the next
    value comes without a separator; a NULL separator adds none; the
    result is NULL while the text is empty."""
    c = world().conn
    c.execute("DROP TABLE IF EXISTS tgc")
    c.execute("CREATE TABLE tgc(p, o, v, s)")
    c.executemany("INSERT INTO tgc VALUES(1, ?, ?, ?)",
                  [(1, "", None), (2, "", "-"), (3, "b", "--"), (4, "cd", "-"), (5, "", "---"),
                   (6, "e", None)])
    rng = random.Random(SEED + 5)
    vals = ["", "a", "bc", None, 12, 1.5, "", "", "xyz", b"q", "\u00e9"]
    seps = [None, "", "-", "--", ",", 7, "", "\u00e9"]
    c.executemany("INSERT INTO tgc VALUES(?, ?, ?, ?)",
                  [(rng.randrange(2, 5), rng.randrange(6), rng.choice(vals), rng.choice(seps))
                   for _ in range(200)])
    cases = Cases("group_concat frames")
    frames = ["ROWS BETWEEN 1 PRECEDING AND CURRENT ROW", "ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING",
              "ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
              "GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING", "RANGE BETWEEN 1 PRECEDING AND CURRENT ROW",
              "ROWS BETWEEN 0 PRECEDING AND 0 FOLLOWING", "RANGE BETWEEN CURRENT ROW AND 2 FOLLOWING"]
    calls = ["group_concat(v)", "group_concat(v, s)", "group_concat(v, '')",
             "group_concat(v, '--') FILTER (WHERE o > 1)"]
    for j, f in enumerate(frames if not ASAN else frames[::2]):
        cases.check("SELECT rowid, %s FROM tgc WINDOW w AS (PARTITION BY p ORDER BY o %s)"
                    % (", ".join(cl + " OVER w" for cl in calls), f))
        cases.check("SELECT rowid, group_concat(v, s) OVER (ORDER BY o DESC %s) FROM tgc" % f)
    cases.done()
    assert cases.nwindow == cases.n, (cases.nwindow, cases.n)
    plan = plan_of("SELECT group_concat(v) OVER (ORDER BY o ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) "
                   "FROM tgc")
    assert plan.startswith("native:") and "starts FOLLOWING or ends PRECEDING" in plan, plan
    c.execute("DROP TABLE tgc")


def test_moving_min_max():
    """min/max over frames whose start moves, of values other than
    integers: a queue by sort keys where equal keys are one value (REALs,
    TEXT under BINARY, BLOBs, INTEGERs with TEXT); natively where SQLite's
    index of the frame could return either of two equal values (0.0 and
    -0.0, 1 and 1.0, 'a' and 'A' under NOCASE).  A REAL column keeps no
    -0.0 (SQLite stores it as the integer 0): z has no affinity."""
    c = world().conn
    c.execute("DROP TABLE IF EXISTS tmm")
    c.execute("CREATE TABLE tmm(p, o, r REAL, s TEXT, sn TEXT COLLATE NOCASE, m, b BLOB, z, ir)")
    rng = random.Random(SEED + 9)
    c.executemany("INSERT INTO tmm VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (rng.randrange(3), rng.randrange(8), rng.choice([None, 0.5, -1.25, 3.0, 1e300, -1e300, 2.5, 7.0]),
         rng.choice([None, "a", "b", "ab", "", "B", "\u00e9"]), rng.choice(["a", "A", "b"]),
         rng.choice([None, 1, 2, "x", b"y", 3, "a", 2**62]), rng.choice([None, b"a", b"", b"ab"]),
         rng.choice([0.0, -0.0, 1.5]), rng.choice([1, 1.0, 2, 0.5]))
        for _ in range(300)])
    cases = Cases("moving min/max")
    frames = ["ROWS BETWEEN 2 PRECEDING AND CURRENT ROW", "ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING",
              "GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW", "RANGE BETWEEN 2 PRECEDING AND 1 FOLLOWING",
              "ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING"]
    fast, slow = ["r", "s", "m", "b", "r * 2", "s COLLATE BINARY"], ["sn", "z", "ir", "s COLLATE NOCASE"]
    native = 0
    for f in frames if not ASAN else frames[::2]:
        for arg in fast + slow:
            sql = ("SELECT rowid, min(%s) OVER w, max(%s) OVER w FROM tmm "
                   "WINDOW w AS (PARTITION BY p ORDER BY o %s)" % (arg, arg, f))
            cases.check(sql)
            mode = json.loads(c.execute("SELECT par_profile(?)", (sql,)).fetchone()[0])["mode"]
            assert (mode == "native") == (arg in slow), (sql, mode)
    cases.done()
    c.execute("DROP TABLE tmm")


def test_windows_on_windows():
    """A window built on a named one (OVER (w ORDER BY x), WINDOW v AS (w
    frame)): the other's PARTITION BY (and ORDER BY), its own frame."""
    cases = Cases("windows on windows")
    for t in ["ts", "tnull", "tie"]:
        cases.check("SELECT rowid, sum(i) OVER (w ORDER BY o), rank() OVER (w ORDER BY o DESC), "
                    "count(*) OVER w, lag(x) OVER (w ORDER BY rowid) FROM %s WINDOW w AS (PARTITION BY p)" % t)
        cases.check("SELECT rowid, total(r) OVER v, min(x) OVER (w ROWS 2 PRECEDING), "
                    "group_concat(s) OVER (w GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM %s "
                    "WINDOW w AS (PARTITION BY p ORDER BY o), v AS (w ROWS BETWEEN 1 PRECEDING AND "
                    "1 FOLLOWING)" % t)
        cases.check("SELECT rowid, sum(i) OVER (w ORDER BY o), sum(i) OVER (PARTITION BY p ORDER BY o) "
                    "FROM %s WINDOW w AS (PARTITION BY p)" % t)
    cases.done()
    assert cases.nwindow == cases.n, (cases.nwindow, cases.n)
    for sql, fragment in [
            ("SELECT sum(i) OVER (w PARTITION BY o) FROM ts WINDOW w AS ()", "PARTITION clause"),
            ("SELECT sum(i) OVER (w ORDER BY o) FROM ts WINDOW w AS (ORDER BY p)", "ORDER BY clause"),
            ("SELECT sum(i) OVER (w ORDER BY o) FROM ts WINDOW w AS (ROWS 1 PRECEDING)",
             "frame specification")]:
        want = Cases("errors").check(sql)
        assert want[0] == "error" and fragment in want[1], (sql, show(want))


# A final SQL over the window operator's rows: expressions around window
# calls, and ORDER BY terms the windows' order does not give, evaluated by
# SQLite over par_rows, whose columns keep each reference's affinity and
# collation (comparisons, sorting under NOCASE/RTRIM).
FINAL_CASES = 120        # test_final_sql, nominal (times SCALE)
F_EXPRS = ["%s + 1", "coalesce(%s, 'none')", "typeof(%s)", "%s = 1", "%s > '1'",
           "CASE WHEN %s > 2 THEN g ELSE sr END", "%s || s", "-%s", "%s IS NULL",
           "x - %s", "i * %s", "max(%s, o)", "%s COLLATE NOCASE"]
F_REFS = ["g = 'a'", "sr = 'a'", "x = 1", "x = '1'", "i = '12'", "nm = 2", "s < 'b'",
          "typeof(x)", "i + 1", "length(s)", "g || sr", "rowid", "p", "o"]
F_ORDER = ["g", "sr", "s", "x", "o", "p", "i", "g COLLATE BINARY", "s COLLATE NOCASE",
           "rowid", "nm", "x || ''", "i % 3", "1", "2"]


def gen_final_select(rng):
    t = rng.choice(["t0", "t1", "ts", "ts", "tm", "tie", "tnull", "tsmall"])
    wins = [gen_window(rng) for _ in range(rng.choice([1, 1, 2]))]
    items = []
    for _ in range(rng.randint(1, 3)):
        call, _, _ = gen_call(rng)
        call += " OVER (%s)" % rng.choice(wins).text()
        if rng.random() < 0.6:
            call = rng.choice(F_EXPRS) % call
        items.append(call)
    for _ in range(rng.choice([0, 1, 1, 2])):
        items.append(rng.choice(F_REFS))
    rng.shuffle(items)
    sql = "SELECT %s FROM %s" % (", ".join("%s AS c%d" % (e, j) if rng.random() < 0.3 else e
                                           for j, e in enumerate(items)), t)
    if rng.random() < 0.2:
        sql += " WHERE " + rng.choice(WHERES)
    if rng.random() < 0.7:
        sql += " ORDER BY " + ", ".join(rng.choice(F_ORDER) + rng.choice(DIRS) + rng.choice(NULLSP)
                                        for _ in range(rng.randint(1, 3)))
    if rng.random() < 0.3:
        sql += " LIMIT %d" % rng.choice([0, 1, 3, 10, 100])
        if rng.random() < 0.5:
            sql += " OFFSET %d" % rng.choice([0, 1, 5])
    return sql


def test_final_sql():
    rng = random.Random(SEED + 11)
    cases = Cases("final SQL")
    for _ in range(ncases(FINAL_CASES)):
        cases.check(gen_final_select(rng))
    for sql in [
            "SELECT p, r - lag(r) OVER (PARTITION BY p ORDER BY o) AS d FROM ts ORDER BY g, d",
            "SELECT g, row_number() OVER (ORDER BY o) FROM ts ORDER BY g DESC LIMIT 7",
            "SELECT sr, count(*) OVER (PARTITION BY sr) = 1 FROM ts ORDER BY sr, x",
            "SELECT x, sum(i) OVER (ORDER BY o ROWS 2 PRECEDING) FROM ts ORDER BY 1",
            "SELECT min(g) OVER (ORDER BY o) AS m FROM ts ORDER BY rowid DESC",
            "SELECT x, lag(x) OVER (ORDER BY o) = x FROM tie ORDER BY x"]:
        cases.check(sql)
    cases.done()
    # ORDER BY a window call (itself, its alias, its ordinal): SQLite
    # computes it again in a subquery of its own: native, with why.
    for sql in ["SELECT o, rank() OVER (ORDER BY o) AS r FROM ts ORDER BY r",
                "SELECT o, rank() OVER (ORDER BY o) FROM ts ORDER BY 2 DESC",
                "SELECT o FROM ts ORDER BY sum(i) OVER (ORDER BY o)"]:
        plan = plan_of(sql)
        assert plan.startswith("native:") and "ORDER BY term that is a window call" in plan, plan
    plan = plan_of("SELECT o, rank() OVER (ORDER BY o) + 1 FROM ts ORDER BY g")
    assert runs_window(plan) and "final     SQLite evaluates" in plan, plan


# Windows over a GROUP BY's result: the kernels group, SQLite evaluates the
# windows over the groups in the final SQL, which must see them in the
# order SQLite makes them (par_rows: ascending keys; SQLite: the directions
# of a window's ORDER BY when it has as many terms as GROUP BY).
GROUP_CASES = 150        # test_windows_over_groups, nominal (times SCALE)
G_KEYS = ["p", "g", "o", "i % 3", "s COLLATE NOCASE", "sr", "x", "nm", "r > 0"]
G_AGGS = ["sum(i)", "total(r)", "count(*)", "count(x)", "min(x)", "max(s)", "avg(r)",
          "group_concat(s)", "sum(big)", "sum(r)", "max(g)"]
G_FUNCS = ["sum(%s)", "total(%s)", "avg(%s)", "count(%s)", "min(%s)", "max(%s)",
           "group_concat(%s)", "row_number()", "rank()", "dense_rank()", "percent_rank()",
           "cume_dist()", "ntile(2)", "lag(%s)", "lead(%s, 1, 0)", "first_value(%s)",
           "last_value(%s)", "nth_value(%s, 2)", "count(*)"]
G_FRAMES = ["", "", "", "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING", "ROWS UNBOUNDED PRECEDING",
            "GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW", "RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
            "ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING EXCLUDE CURRENT ROW"]


def gen_group_select(rng):
    """A random SELECT with GROUP BY (or aggregates alone) and windows over
    its groups."""
    t = rng.choice(["t0", "t1", "t4", "ts", "tm", "tm", "tie", "tnull", "tsmall"])
    keys = rng.sample(G_KEYS, rng.choice([0, 1, 1, 1, 2, 2, 3]))
    values = keys + [rng.choice(G_AGGS) for _ in range(3)]

    def window():
        parts = rng.sample(keys, rng.randint(0, min(1, len(keys)))) if keys else []
        orders = [rng.choice(values) + rng.choice(DIRS) + rng.choice(NULLSP)
                  for _ in range(rng.choice([0, 1, 1, 2]))]
        if keys and rng.random() < 0.3:     # as many terms as GROUP BY
            orders = [k + rng.choice(DIRS) for k in keys[len(parts):]]
        text = []
        if parts:
            text.append("PARTITION BY " + ", ".join(parts))
        if orders:
            text.append("ORDER BY " + ", ".join(orders))
            text.append(rng.choice(G_FRAMES))
        return " ".join(text).strip()

    wins = [window() for _ in range(rng.choice([1, 1, 2]))]
    items = []
    for k in keys:
        if rng.random() < 0.7:
            items.append(k)
    for _ in range(rng.randint(1, 3)):
        f = rng.choice(G_FUNCS)
        call = f % rng.choice(values) if "%s" in f else f
        call += " OVER " + ("w%d" % rng.randrange(len(wins)) if rng.random() < 0.3
                            else "(%s)" % rng.choice(wins))
        if rng.random() < 0.15:
            call = rng.choice(WRAPS) % call
        items.append(call)
    if rng.random() < 0.5:
        items.append(rng.choice(G_AGGS))
    rng.shuffle(items)
    sql = "SELECT %s FROM %s" % (", ".join(items), t)
    if rng.random() < 0.2:
        sql += " WHERE " + rng.choice(WHERES)
    if keys:
        sql += " GROUP BY " + ", ".join(keys)
        if rng.random() < 0.2:
            sql += " HAVING " + rng.choice(["count(*) > 1", "sum(i) IS NOT NULL", "min(x) <> 1"])
    if "OVER w" in sql:
        sql += " WINDOW " + ", ".join("w%d AS (%s)" % (j, w) for j, w in enumerate(wins))
    p = rng.random()
    if p < 0.3 and keys:
        sql += " ORDER BY " + ", ".join(k + rng.choice(DIRS) for k in rng.sample(keys, 1))
    elif p < 0.4:
        sql += " ORDER BY %d DESC" % rng.randint(1, len(items))
    if rng.random() < 0.15:
        sql += " LIMIT %d" % rng.choice([0, 1, 3, 10])
    return sql


def runs_group(plan):
    return (plan is not None and not plan.startswith("native:")
            and any(line.startswith("group by") for line in plan.split("\n")))


def test_windows_over_groups():
    rng = random.Random(SEED + 7)
    cases = Cases("windows over groups")
    sqls = [gen_group_select(rng) for _ in range(ncases(GROUP_CASES))]
    sqls += [
        # The groups in the window's direction: the window's sort orders them fully.
        "SELECT p, sum(i), sum(sum(i)) OVER (ORDER BY p DESC) FROM tm GROUP BY p",
        "SELECT p, g, count(*), rank() OVER (ORDER BY p DESC, g) FROM tm GROUP BY p, g",
        # ... or not: SQLite's groups come in another order than par_rows'.
        "SELECT p, g, count(*), row_number() OVER (PARTITION BY p ORDER BY count(*) DESC) "
        "FROM tm GROUP BY p, g",
        "SELECT o, count(*) AS n, row_number() OVER (ORDER BY count(*) DESC) FROM tm GROUP BY o",
        "SELECT sum(i), sum(sum(i)) OVER (), count(*) OVER () FROM tm",
        "SELECT p, sum(r) AS s, s - lag(s) OVER (ORDER BY p) FROM tm GROUP BY p",
        "SELECT p, avg(r), avg(avg(r)) OVER w, max(p) OVER w FROM tm GROUP BY p "
        "WINDOW w AS (ORDER BY p ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) ORDER BY 2",
        "SELECT g, count(*), group_concat(g, '|') OVER (ORDER BY count(*), g) FROM tm GROUP BY g",
        "SELECT p, sum(big) OVER (ORDER BY p) FROM tm GROUP BY p",
        "SELECT p, sum(sum(big)) OVER (ORDER BY p) FROM tm GROUP BY p",
        # An aggregate only in a WINDOW definition no call uses: no aggregate
        # query (60 rows natively); in a used one: one group.
        "SELECT cume_dist() OVER w1 FROM tsmall WINDOW w0 AS (ORDER BY max(s)), w1 AS ()",
        "SELECT count(*) OVER w0 FROM tsmall WINDOW w0 AS (ORDER BY max(s)), w1 AS ()",
        "SELECT p, count(*) OVER w0 FROM tsmall GROUP BY p WINDOW w0 AS (ORDER BY max(s), p)",
        # ... which picks the row of the keys' values only when used.
        "SELECT ntile(2) OVER w0, s COLLATE NOCASE FROM tnull GROUP BY s COLLATE NOCASE "
        "WINDOW w0 AS (PARTITION BY s COLLATE NOCASE), w1 AS (ORDER BY max(s))",
    ]
    ngroup = 0
    for sql in sqls:
        cases.check(sql)
        ngroup += runs_group(plan_of(sql))
    cases.done()
    print("     %d of %d grouped by the kernels" % (ngroup, len(sqls)))
    assert ngroup >= 0.5 * len(sqls), (ngroup, len(sqls))
    # The planner's own rules: grouped by the kernels, or native with why.
    for sql, why in [
            ("SELECT p, sum(sum(i)) OVER (ORDER BY p DESC) FROM ts GROUP BY p", None),
            ("SELECT o, row_number() OVER (ORDER BY count(*) DESC) FROM ts GROUP BY o",
             "the directions of a window's ORDER BY"),
            ("SELECT DISTINCT p, sum(i) OVER () FROM tm GROUP BY p", "DISTINCT with window"),
            ("SELECT count(*) OVER w1 FROM ts WINDOW w0 AS (ORDER BY max(s)), w1 AS ()",
             "an aggregate call in a WINDOW definition"),
            ("SELECT p, sum(i) OVER (PARTITION BY p ORDER BY o) FROM ts", "window")]:
        plan = plan_of(sql)
        if why is None:
            assert runs_group(plan), (sql, plan)
        elif why == "window":
            assert runs_window(plan), (sql, plan)
        else:
            assert plan.startswith("native:") and why in plan, (sql, plan)


def test_checker_finds_differences():
    """The comparison itself: a view of another SELECT that differs only in
    the order of tied rows, the storage class of a value, -0.0 for 0.0, a
    REAL summed in another order, one row more, or an error is a failure."""
    pairs = [
        ("SELECT rowid, row_number() OVER (ORDER BY rowid % 3) FROM ts",
         "SELECT rowid, row_number() OVER (ORDER BY rowid % 3, rowid DESC) FROM ts"),
        ("SELECT rowid % 3 AS k, count(*) OVER (PARTITION BY rowid % 3) FROM ts",
         "SELECT rowid % 3 AS k, count(*) OVER (PARTITION BY rowid % 3) FROM ts ORDER BY k DESC"),
        ("SELECT count(*) OVER () FROM ts", "SELECT count(*) OVER () * 1.0 FROM ts"),
        ("SELECT sum(p) OVER () FROM tie", "SELECT total(p) OVER () FROM tie"),
        ("SELECT -0.0 AS v", "SELECT 0.0 AS v"),
        ("SELECT sum(v) OVER (ORDER BY v ROWS UNBOUNDED PRECEDING) AS s FROM (SELECT 0.1 AS v"
         " UNION ALL SELECT 0.2 UNION ALL SELECT 0.3) ORDER BY s DESC LIMIT 1",
         "SELECT sum(v) OVER (ORDER BY v DESC ROWS UNBOUNDED PRECEDING) AS s FROM (SELECT 0.1 AS v"
         " UNION ALL SELECT 0.2 UNION ALL SELECT 0.3) ORDER BY s DESC LIMIT 1"),
        ("SELECT rowid FROM ts LIMIT 3", "SELECT rowid FROM ts LIMIT 4"),
        ("SELECT ntile(1) OVER () FROM ts", "SELECT ntile(0) OVER () FROM ts"),
        ("SELECT ntile(0) OVER () FROM ts", "SELECT ntile(1) OVER () FROM ts"),
    ]
    for sql, other in pairs:
        cases = Cases("checker")
        cases.check(sql, view_sql=other)
        assert len(cases.fails) == 1, (sql, other, cases.fails)
    cases = Cases("checker")
    cases.check(pairs[0][0])
    assert not cases.fails, cases.fails
    # And what counts as run by the window engine.
    assert runs_window("scan      t: parallel\nwindow    sum(v) OVER (ORDER BY o)\nfinal     x")
    assert runs_window("window: row_number() OVER ()")
    assert not runs_window("native: SQLite runs the whole SELECT (a window function)\nwindow")
    assert not runs_window("scan      t: parallel\nsort      o\nfinal     rows, window")
    assert not runs_window(None)


def cleanup():
    if _world:
        _world[0].conn.close()
    shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(run("test_window", globals(), after=cleanup))
