#!/usr/bin/python3
"""Stress the window operator (plan_window.c, op_window.c) against SQLite.

make test runs it once in the plain lane (the bugs it found stay found);
by hand, with other seeds and more cases:

    /usr/bin/python3 tests/stress_window.py ./parallel.so           # ~2-4 min
    STRESS_SEED=5 STRESS_CASES=600 /usr/bin/python3 tests/stress_window.py ./parallel.so
    ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \\
      LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \\
      STRESS_CASES=150 /usr/bin/python3 tests/stress_window.py ./build/asan/parallel.so

Every SELECT runs natively and as a parallel view at par_config('threads')
1, 2 and 3 (min_rows 0) in a WAL database file; rows, order, storage class
and REAL bits must match, errors must contain SQLite's message.  Beyond
tests/test_window.py it tries: WITHOUT ROWID tables, indexes on the
PARTITION BY / ORDER BY columns, 5000-row tables, one window spelled
several ways in one SELECT (t.a / a / (a), OVER w / inline), ORDER BY
naming a select-list alias, LIMIT/OFFSET expressions (negative, the
"LIMIT off, n" form), RANGE offsets over text/real/NULL keys, sum overflow
(running, sliding), interrupts (progress handler), memory_mb 1, and
par_explain of every case.

Prints each disagreement (SQL, native, view), how many cases ran through
the window operator, and how many of the shapes views.md says are
accelerated ran natively (with par_explain's reason).  Exit status 1 when
any case disagrees.
"""
import os
import random
import sqlite3
import struct
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import connect_ext  # noqa: E402

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
EXT = os.path.abspath(ARGS[0] if ARGS else "./parallel.so")
SEED = int(os.environ.get("STRESS_SEED", "1"))
NCASES = int(os.environ.get("STRESS_CASES", "400"))
THREADS = (1, 2, 3)
TMP = tempfile.mkdtemp(prefix="stress_window_")


def connect(path):
    return connect_ext(path, EXT)


def token(v):
    if isinstance(v, float):
        return ("real", struct.pack("<d", v))
    return (type(v).__name__, v)


def outcome(f):
    try:
        return ("rows", [tuple(token(v) for v in r) for r in f()])
    except sqlite3.Error as e:
        return ("error", str(e))


def short(o, n=6):
    if o[0] == "error":
        return "error: " + o[1]
    rows = [tuple(v for _, v in r) for r in o[1]]
    return "%d rows %r%s" % (len(rows), rows[:n], " ..." if len(rows) > n else "")


# ---- the world ----------------------------------------------------------------

VOCAB = {
    "p": [0, 1, 2, 1.0, "1", "a", "A", b"\x01", None],
    "g": ["a", "A", "b", "a ", "B", None, 1, "1"],
    "o": [1, 1.0, 2, 2**53, 2**53 + 1, float(2**53), -0.0, 0, 0.5, "2", "10", "x", None, b"z",
          2**63 - 1, -2**63],
    "v": [1, -1, 2**62, 2**63 - 1, -2**63, 0.1, 1e16, -1e16, -0.0, "3", "1e3", "x", None, b"b",
          2**53 + 1, float(2**53)],
    "i": [0, 1, 2, 3, -5, 7, None],
}
COLS = "p, g, o, v, i"


def rows_for(rng, n, mode="mixed"):
    out = []
    for k in range(n):
        if mode == "ints":
            out.append((rng.randrange(4), rng.choice(["a", "A", "b"]), rng.randrange(20),
                        rng.randrange(-50, 50), rng.randrange(5)))
        elif mode == "big":
            out.append((rng.randrange(3), "a", k % 7,
                        rng.choice([2**62, 2**62, -2**62, 2**63 - 1, -2**63, 1, -1]),
                        rng.randrange(3)))
        else:
            out.append(tuple(rng.choice(VOCAB[c]) for c in ("p", "g", "o", "v", "i")))
    return out


def build_world():
    rng = random.Random(SEED)
    c = connect(os.path.join(TMP, "w.db"))
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("BEGIN")
    decl = "p INTEGER, g TEXT COLLATE NOCASE, o, v, i INTEGER"
    specs = [("t0", 0, "mixed"), ("t1", 1, "mixed"), ("t5", 5, "mixed"), ("tm", 200, "mixed"),
             ("tb", 5000, "mixed"), ("tn", 300, "ints"), ("tov", 60, "big")]
    for name, n, mode in specs:
        c.execute("CREATE TABLE %s(%s)" % (name, decl))
        c.executemany("INSERT INTO %s VALUES(?,?,?,?,?)" % name, rows_for(rng, n, mode))
    # WITHOUT ROWID: read in primary key order (k DESC).
    c.execute("CREATE TABLE wr(k INTEGER, id INTEGER, %s, PRIMARY KEY(k DESC, id)) WITHOUT ROWID"
              % decl)
    c.executemany("INSERT INTO wr VALUES(?,?,?,?,?,?,?)",
                  [(rng.randrange(5), j) + r for j, r in enumerate(rows_for(rng, 300, "mixed"))])
    # Indexes on the partition and order columns.
    c.execute("CREATE TABLE ti(%s)" % decl)
    c.executemany("INSERT INTO ti VALUES(?,?,?,?,?)", rows_for(rng, 400, "mixed"))
    c.execute("CREATE INDEX ti_p ON ti(p)")
    c.execute("CREATE INDEX ti_o ON ti(o DESC)")
    c.execute("CREATE INDEX ti_go ON ti(g, o)")
    c.execute("CREATE TABLE tr(%s, sr TEXT COLLATE RTRIM)" % decl)
    c.executemany("INSERT INTO tr VALUES(?,?,?,?,?,?)",
                  [r + (rng.choice(["a", "a ", "a  ", "b", "B", None]),)
                   for r in rows_for(rng, 120, "mixed")])
    c.execute("CREATE INDEX tr_sr ON tr(sr)")
    c.execute("COMMIT")
    c.execute("ANALYZE")
    c.execute("SELECT par_config('min_rows', 0)")
    return c


# ---- checking -----------------------------------------------------------------

class Stats:
    def __init__(self):
        self.n = 0
        self.window = 0
        self.native = Counter()
        self.fails = []
        self.expect_fast_native = []


ST = Stats()


def quote(s):
    return "'" + s.replace("'", "''") + "'"


def explain(c, sql):
    try:
        return c.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
    except sqlite3.Error as e:
        return "par_explain error: %s" % e


def check(c, sql, expect_fast=False, label=""):
    """sql natively vs as a view at each thread count; records failures."""
    ST.n += 1
    plan = explain(c, sql)
    is_window = plan is not None and not plan.startswith("native:") and \
        any(line.startswith("window") for line in plan.split("\n"))
    if plan.startswith("par_explain error"):
        pass
    want = outcome(lambda: c.execute(sql).fetchall())
    try:
        c.execute("CREATE VIRTUAL TABLE temp.sv USING parallel(%s)" % quote(sql))
    except sqlite3.Error as e:
        if not (want[0] == "error" and want[1] in str(e)):
            ST.fails.append((label, sql, "native %s / creating view: %s" % (short(want), e)))
        return
    got, modes = [], []
    try:
        for t in THREADS:
            c.execute("SELECT par_config('threads', ?)", (t,))
            got.append(outcome(lambda: c.execute("SELECT * FROM sv").fetchall()))
        if is_window and want[0] == "rows":
            try:
                prof = c.execute("SELECT par_profile(?)", (sql,)).fetchone()[0]
            except sqlite3.Error:
                prof = ""
            modes.append('"mode":"native"' in (prof or "").replace(" ", ""))
    finally:
        c.execute("SELECT par_config('threads', 0)")
        c.execute("DROP TABLE temp.sv")
    if is_window and not any(modes):
        ST.window += 1
    else:
        why = plan.split("\n")[0] if not is_window else "run-time native"
        ST.native[why[:110]] += 1
        if expect_fast:
            ST.expect_fast_native.append((label, sql, why))
    for t, g in zip(THREADS[1:], got[1:]):
        if g != got[0]:
            ST.fails.append((label, sql, "threads 1 %s / threads %d %s" % (short(got[0]), t, short(g))))
            return
    g = got[0]
    if want[0] == "error" or g[0] == "error":
        if not (want[0] == g[0] == "error" and want[1] in g[1]):
            ST.fails.append((label, sql, "native %s / view %s" % (short(want), short(g))))
        return
    if want != g:
        a, b = want[1], g[1]
        if len(a) != len(b):
            d = "row count native %d view %d" % (len(a), len(b))
        else:
            k = next(i for i in range(len(a)) if a[i] != b[i])
            d = "row %d: native %r view %r" % (k, a[k], b[k])
        ST.fails.append((label, sql, d + "\n      native " + short(want) + "\n      view   " + short(g)))


# ---- targeted cases -------------------------------------------------------------

def targeted(c):
    T = []
    # One window spelled several ways, with another window between.
    for t in ("tm", "tn", "ti", "wr"):
        T += [
            "SELECT rowid AS r, row_number() OVER (PARTITION BY p ORDER BY o), "
            "rank() OVER (ORDER BY i), row_number() OVER (PARTITION BY %s.p ORDER BY o) FROM %s" % (t, t),
            "SELECT row_number() OVER (PARTITION BY p ORDER BY o), "
            "rank() OVER (ORDER BY i), row_number() OVER (PARTITION BY (p) ORDER BY ((o))) FROM %s" % t,
            "SELECT row_number() OVER w, rank() OVER (ORDER BY i), "
            "row_number() OVER (PARTITION BY p ORDER BY o) FROM %s WINDOW w AS (PARTITION BY p ORDER BY o)" % t,
            "SELECT sum(i) OVER (ORDER BY o), rank() OVER (PARTITION BY g), "
            "sum(i) OVER (ORDER BY o ASC), count(*) OVER (ORDER BY o RANGE UNBOUNDED PRECEDING) FROM %s" % t,
            "SELECT sum(i) OVER (ORDER BY o ROWS 1 PRECEDING), rank() OVER (PARTITION BY g), "
            "sum(i) OVER (ORDER BY o ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM %s" % t,
            "SELECT sum(i) OVER (ORDER BY o DESC NULLS LAST), rank() OVER (PARTITION BY i), "
            "sum(i) OVER (ORDER BY o DESC) FROM %s" % t,
            "SELECT sum(i) OVER (ORDER BY o ROWS BETWEEN 01 PRECEDING AND 1 FOLLOWING), rank() OVER (PARTITION BY i), "
            "sum(i) OVER (ORDER BY o ROWS BETWEEN 1 PRECEDING AND (1) FOLLOWING) FROM %s" % t,
            "SELECT count(*) OVER (ORDER BY o ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE NO OTHERS),"
            " rank() OVER (PARTITION BY i), row_number() OVER (ORDER BY o) FROM %s" % t,
            "SELECT row_number() OVER (ORDER BY o), rank() OVER (PARTITION BY i), "
            "count(*) OVER (ORDER BY o ROWS UNBOUNDED PRECEDING) FROM %s" % t,
            "SELECT lag(i) OVER (PARTITION BY g ORDER BY o), rank() OVER (PARTITION BY i), "
            "lead(i) OVER (PARTITION BY g ORDER BY o) FROM %s" % t,
            "SELECT i, cume_dist() OVER (ORDER BY o), rank() OVER (PARTITION BY p), "
            "count(*) OVER (ORDER BY o GROUPS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) FROM %s" % t,
        ]
    # Top-level ORDER BY: the first window's order, spelled other ways; an alias.
    T += [
        "SELECT p, row_number() OVER (PARTITION BY p ORDER BY o) FROM tm ORDER BY p",
        "SELECT p, row_number() OVER (PARTITION BY p ORDER BY o) FROM tm ORDER BY p NULLS FIRST",
        "SELECT p, row_number() OVER (PARTITION BY p ORDER BY o) FROM tm ORDER BY p ASC, o ASC NULLS FIRST",
        "SELECT p, row_number() OVER (PARTITION BY p ORDER BY o DESC) FROM tm ORDER BY p, o DESC NULLS LAST",
        "SELECT i AS p, row_number() OVER (PARTITION BY p ORDER BY o) FROM tm ORDER BY p",
        "SELECT i AS o, p, row_number() OVER (PARTITION BY p ORDER BY o) FROM tm ORDER BY p, o",
        "SELECT -i AS o, row_number() OVER (ORDER BY o) AS rn FROM tn ORDER BY o",
        "SELECT g, row_number() OVER (ORDER BY g) FROM tm ORDER BY g",
        "SELECT g, row_number() OVER (ORDER BY g COLLATE BINARY) FROM tm ORDER BY g COLLATE BINARY",
        "SELECT g, row_number() OVER (ORDER BY g) FROM tm ORDER BY g COLLATE BINARY",
        "SELECT sr, row_number() OVER (ORDER BY sr) FROM tr ORDER BY sr",
        "SELECT sr, rank() OVER (PARTITION BY sr) FROM tr",
        "SELECT g, rank() OVER (PARTITION BY g ORDER BY sr) FROM tr",
        "SELECT o, row_number() OVER (ORDER BY o) AS o FROM tm ORDER BY o",
        "SELECT i AS x, row_number() OVER (ORDER BY o) FROM tm ORDER BY x",
        "SELECT p AS q, sum(i) OVER (PARTITION BY p) FROM tm ORDER BY q",
        "SELECT rank() OVER (ORDER BY o) AS rk, o FROM tm ORDER BY rk",
        "SELECT 1 AS o, row_number() OVER (ORDER BY o) FROM tm ORDER BY o",
    ]
    # LIMIT / OFFSET.
    for lim in ("3", "-1", "0", "2 OFFSET 3", "2 OFFSET -3", "-1 OFFSET 7", "3, 2", "1+1",
                "(SELECT 2)", "'2'", "2.5", "NULL", "1 OFFSET 'x'", "9223372036854775807 OFFSET 5",
                "abs(-2)"):
        T.append("SELECT i, row_number() OVER (ORDER BY o) FROM tm LIMIT %s" % lim)
        T.append("SELECT i, sum(i) OVER (PARTITION BY p ORDER BY o) FROM tn ORDER BY p LIMIT %s" % lim)
    # RANGE with offsets over keys of every kind.
    for t in ("tn", "tm", "tb", "ti", "tr", "t5", "t1", "t0"):
        for oc in ("i", "o", "v", "-i", "i * 0.5", "p", "g", "sr" if t == "tr" else "i + 0.0"):
            for d in ("", " DESC", " NULLS LAST", " DESC NULLS FIRST"):
                T.append("SELECT %s, count(*) OVER (ORDER BY %s%s RANGE BETWEEN 1 PRECEDING AND 2 FOLLOWING),"
                         " sum(i) OVER (ORDER BY %s%s RANGE BETWEEN 0 FOLLOWING AND 3 FOLLOWING) FROM %s"
                         % (oc, oc, d, oc, d, t))
    # Every ROWS / GROUPS bound combination.
    bounds = ["UNBOUNDED PRECEDING", "%d PRECEDING", "CURRENT ROW", "%d FOLLOWING", "UNBOUNDED FOLLOWING"]
    for unit in ("ROWS", "GROUPS", "RANGE"):
        for a in range(4):
            for b in range(a, 5):
                if a == 0 and b == 0:
                    continue
                for n0, n1 in ((0, 0), (1, 3), (3, 1), (2, 0)):
                    s = bounds[a] % n0 if "%" in bounds[a] else bounds[a]
                    e = bounds[b] % n1 if "%" in bounds[b] else bounds[b]
                    fr = "%s BETWEEN %s AND %s" % (unit, s, e)
                    T.append("SELECT i, sum(v) OVER (PARTITION BY p ORDER BY i %s), min(o) OVER (PARTITION BY p ORDER BY i %s),"
                             " first_value(o) OVER (PARTITION BY p ORDER BY i %s), nth_value(g, 2) OVER (PARTITION BY p ORDER BY i %s),"
                             " count(o) FILTER (WHERE i > 1) OVER (PARTITION BY p ORDER BY i %s) FROM tm" % ((fr,) * 5))
    # sum overflow, running and sliding, and avg/total over huge values.
    for fr in ("", "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW", "ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING",
               "ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING", "ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING",
               "GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING", "ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING"):
        for f in ("sum(v)", "avg(v)", "total(v)", "sum(v) FILTER (WHERE i <> 1)", "min(v)", "max(v)"):
            T.append("SELECT %s OVER (PARTITION BY p ORDER BY o %s) FROM tov" % (f, fr))
            T.append("SELECT %s OVER (ORDER BY i, o %s) FROM tov" % (f, fr))
    # lag / lead / ntile / nth_value argument forms.
    for k in range(4):
        for dflt in ("", ", 'd'", ", v", ", -0.0", ", NULL", ", 2**1" if False else ", 1.5"):
            T.append("SELECT lag(o, %d%s) OVER (PARTITION BY p ORDER BY i), lead(g, %d%s) OVER (ORDER BY o) FROM tm"
                     % (k, dflt, k, dflt))
    for n in range(1, 8):
        T.append("SELECT ntile(%d) OVER (PARTITION BY i ORDER BY o), ntile(%d) OVER () FROM tm" % (n, n))
    for n in range(1, 5):
        T.append("SELECT nth_value(v, %d) OVER (PARTITION BY p ORDER BY o ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING),"
                 " nth_value(o, %d) OVER (ORDER BY i) FROM tm" % (n, n))
    T += ["SELECT lag(o, -1) OVER (ORDER BY i) FROM tm", "SELECT lead(o, 0) OVER (ORDER BY i) FROM tm",
          "SELECT ntile(0) OVER (ORDER BY i) FROM tm", "SELECT nth_value(o, 0) OVER (ORDER BY i) FROM tm",
          "SELECT ntile(9999999999999999) OVER (ORDER BY i) FROM tm",
          "SELECT lag(o, 9223372036854775807) OVER (ORDER BY i) FROM tm",
          "SELECT nth_value(o, 9223372036854775807) OVER (ORDER BY i) FROM tm",
          "SELECT sum(i) OVER (ORDER BY i ROWS BETWEEN 9223372036854775807 PRECEDING AND 9223372036854775807 FOLLOWING) FROM tm",
          "SELECT sum(i) OVER (ORDER BY i ROWS BETWEEN 999999999999999 PRECEDING AND 999999999999999 FOLLOWING) FROM tm",
          "SELECT sum(i) OVER (ORDER BY i GROUPS BETWEEN 999999999999999 PRECEDING AND 1 PRECEDING) FROM tm",
          "SELECT count(*) OVER (ORDER BY i RANGE BETWEEN 999999999999999 PRECEDING AND 999999999999999 FOLLOWING) FROM tm",
          "SELECT count(*) OVER (ORDER BY o RANGE BETWEEN 999999999999999 PRECEDING AND 1 FOLLOWING) FROM tm",
          "SELECT count(*) OVER (ORDER BY o DESC RANGE BETWEEN 5 PRECEDING AND 999999999999999 FOLLOWING) FROM tm",
          "SELECT count(*), count(o) OVER () FROM tm",
          "SELECT count(*) OVER (), count(o) OVER (), count() OVER () FROM tm",
          "SELECT t.i AS a, sum(t.i) OVER (PARTITION BY t.p) AS b FROM tm AS t WHERE t.i > 0",
          "SELECT i, sum(i) OVER (ORDER BY o) FROM tm WHERE o > 1 AND typeof(o) = 'integer'",
          "SELECT i, row_number() OVER win FROM tm WINDOW win AS (ORDER BY i), other AS (ORDER BY o)",
          "SELECT min(g) OVER (ORDER BY i ROWS 2 PRECEDING), max(g) OVER (ORDER BY i ROWS 2 PRECEDING) FROM tm",
          "SELECT min(g) FILTER (WHERE i > 2) OVER (ORDER BY o ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM tm",
          "SELECT max(sr) OVER (PARTITION BY g ORDER BY o ROWS 1 PRECEDING), min(sr) OVER (PARTITION BY g) FROM tr",
          "SELECT * , row_number() OVER () FROM tm",
          "SELECT k, id, row_number() OVER (PARTITION BY k) FROM wr",
          "SELECT k, id, rank() OVER (ORDER BY id DESC), row_number() OVER (PARTITION BY p) FROM wr WHERE k > 1",
          "SELECT p, row_number() OVER (PARTITION BY p) FROM ti WHERE p > 0",
          "SELECT p, row_number() OVER (PARTITION BY p) FROM ti WHERE p = 1",
          "SELECT o, row_number() OVER (ORDER BY o DESC) FROM ti WHERE o > 1",
          "SELECT g, o, rank() OVER (PARTITION BY g ORDER BY o) FROM ti WHERE g = 'a'",
          "SELECT g, o, rank() OVER (PARTITION BY g ORDER BY o) FROM ti INDEXED BY ti_go",
          "SELECT g, o, rank() OVER (PARTITION BY g ORDER BY o) FROM ti NOT INDEXED",
          "SELECT o, sum(i) OVER (ORDER BY o ROWS 3 PRECEDING) FROM tb",
          "SELECT o, total(v) OVER (PARTITION BY p ORDER BY i ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING) FROM tb",
          "SELECT avg(v) OVER (PARTITION BY g), count(v) OVER (PARTITION BY g) FROM tb",
          # Reverse index / primary key scans that give a window its order.
          "SELECT k, id, row_number() OVER (ORDER BY k) FROM wr",
          "SELECT g, o, row_number() OVER (ORDER BY g DESC, o DESC) FROM ti",
          "SELECT sr, row_number() OVER (ORDER BY sr DESC) FROM tr",
          "SELECT o, row_number() OVER (ORDER BY o) FROM ti",
          "SELECT o, row_number() OVER (ORDER BY o) FROM ti WHERE o > 0",
          # One window in other spellings: case, quotes, spaces, collation name.
          "SELECT i, row_number() OVER (ORDER BY O), row_number() OVER (PARTITION BY p), "
          "row_number() OVER (ORDER BY o) FROM tm",
          "SELECT i, row_number() OVER (ORDER BY \"o\"), row_number() OVER (PARTITION BY p), "
          "row_number() OVER (ORDER BY o) FROM tm",
          "SELECT i, row_number() OVER (ORDER BY o + 0), row_number() OVER (PARTITION BY p), "
          "row_number() OVER (ORDER BY o+0) FROM tm",
          "SELECT i, row_number() OVER (ORDER BY o COLLATE NOCASE), row_number() OVER (PARTITION BY p), "
          "row_number() OVER (ORDER BY o COLLATE nocase) FROM tm",
          # A WINDOW name defined twice (SQLite 3.40 takes the last).
          "SELECT i, sum(i) OVER w FROM tm WINDOW w AS (ORDER BY o), w AS (ORDER BY i)",
          "SELECT g, row_number() OVER (PARTITION BY g ORDER BY i) AS g FROM tn ORDER BY g",
          ]
    return T


# ---- random cases ----------------------------------------------------------------

TABLES = ["t0", "t1", "t5", "tm", "tm", "tn", "tn", "ti", "wr", "tr", "tov", "tb"]
PARTS = ["p", "g", "i", "o", "p, g", "i % 2", "g COLLATE BINARY"]
ORDS = ["o", "i", "v", "g", "p", "-i", "o COLLATE NOCASE", "rowid"]
FUNCS = ["row_number()", "rank()", "dense_rank()", "percent_rank()", "cume_dist()", "ntile(%N)",
         "lag(%X)", "lag(%X, %K)", "lead(%X, %K, %D)", "first_value(%X)", "last_value(%X)",
         "nth_value(%X, %N)", "count(*)", "count(%X)", "sum(%S)", "total(%S)", "avg(%S)", "min(%X)",
         "max(%X)", "sum(%S) FILTER (WHERE %F)", "count(*) FILTER (WHERE %F)", "min(%X) FILTER (WHERE %F)"]


def rwin(rng, tab):
    s = []
    if rng.random() < 0.6:
        s.append("PARTITION BY " + rng.choice(PARTS))
    if rng.random() < 0.8:
        ords = rng.sample(ORDS if tab != "wr" else ORDS[:-1] + ["id"], rng.choice([1, 1, 2]))
        s.append("ORDER BY " + ", ".join(o + rng.choice(["", " DESC", " NULLS LAST", " DESC NULLS FIRST"])
                                         for o in ords))
    if rng.random() < 0.5:
        unit = rng.choice(["ROWS", "GROUPS", "RANGE"])
        b = ["UNBOUNDED PRECEDING", "%d PRECEDING", "CURRENT ROW", "%d FOLLOWING", "UNBOUNDED FOLLOWING"]
        a = rng.randrange(4)
        e = rng.randrange(max(a, 1), 5)
        sa = b[a] % rng.randint(0, 3) if "%" in b[a] else b[a]
        se = b[e] % rng.randint(0, 3) if "%" in b[e] else b[e]
        s.append("%s BETWEEN %s AND %s" % (unit, sa, se))
    return " ".join(s)


def rcall(rng):
    f = rng.choice(FUNCS)
    return (f.replace("%N", str(rng.randint(1, 7))).replace("%K", str(rng.randint(0, 3)))
            .replace("%X", rng.choice(["o", "v", "g", "i", "p"]))
            .replace("%S", rng.choice(["v", "i", "o"]))
            .replace("%D", rng.choice(["'d'", "0", "v", "-0.0", "NULL"]))
            .replace("%F", rng.choice(["i > 1", "o IS NOT NULL", "g = 'a'", "v"])))


def random_case(rng):
    tab = rng.choice(TABLES)
    wins = [rwin(rng, tab) for _ in range(rng.choice([1, 2, 2, 3]))]
    items = []
    named = rng.random() < 0.2
    for k in range(rng.choice([1, 2, 3, 4])):
        w = rng.choice(wins)
        if named and rng.random() < 0.5:
            items.append("%s OVER w%d AS c%d" % (rcall(rng), wins.index(w), k))
        else:
            items.append("%s OVER (%s) AS c%d" % (rcall(rng), w, k))
    if rng.random() < 0.7:
        items.insert(rng.randrange(len(items) + 1), rng.choice(["i", "o", "rowid" if tab != "wr" else "id", "typeof(v)", "g"]))
    sql = "SELECT %s FROM %s" % (", ".join(items), tab)
    if rng.random() < 0.25:
        sql += " WHERE " + rng.choice(["i > 1", "o IS NOT NULL", "g <> 'b'", "p = 1", "typeof(v) = 'integer'"])
    if named:
        sql += " WINDOW " + ", ".join("w%d AS (%s)" % (k, w) for k, w in enumerate(wins))
    if rng.random() < 0.15:
        sql += " LIMIT %d" % rng.randint(-1, 20)
        if rng.random() < 0.5:
            sql += " OFFSET %d" % rng.randint(-2, 10)
    return sql


# ---- interrupts, memory, explain ------------------------------------------------------

def misc(c):
    sql = "SELECT o, sum(i) OVER (PARTITION BY p ORDER BY o ROWS 3 PRECEDING), rank() OVER (ORDER BY v) FROM tb"
    c.execute("CREATE VIRTUAL TABLE temp.iv USING parallel(%s)" % quote(sql))
    want = outcome(lambda: c.execute(sql).fetchall())
    for t in THREADS:
        c.execute("SELECT par_config('threads', ?)", (t,))
        for after in (1, 50, 1000, 20000):
            calls = [0]

            def handler():
                calls[0] += 1
                return 1 if calls[0] >= after else 0
            c.set_progress_handler(handler, 10)
            o = outcome(lambda: c.execute("SELECT * FROM iv").fetchall())
            c.set_progress_handler(None, 0)
            ST.n += 1
            # A handler that said stop stops the scan; one that never did
            # (the window operator's scan makes fewer VM steps on this
            # connection than SQLite's own would) leaves SQLite's rows.
            if calls[0] >= after:
                ok = o[0] == "error" and "interrupt" in o[1]
            else:
                ok = o == want
            if not ok:
                ST.fails.append(("interrupt", sql, "threads %d after %d: %s (calls %d)"
                                 % (t, after, short(o, 1), calls[0])))
        o = outcome(lambda: c.execute("SELECT count(*) FROM iv").fetchall())
        if o[0] != "rows" or o[1][0][0][1] != 5000:
            ST.fails.append(("interrupt-after", sql, short(o)))
    c.execute("SELECT par_config('threads', 0)")
    c.execute("DROP TABLE temp.iv")
    # Memory limit.
    c.execute("CREATE VIRTUAL TABLE temp.mv USING parallel(%s)" % quote(sql))
    old_mb = c.execute("SELECT par_config('memory_mb')").fetchone()[0]
    try:
        c.execute("SELECT par_config('memory_mb', 1)")
        o = outcome(lambda: c.execute("SELECT * FROM mv").fetchall())
        ST.n += 1
        want = outcome(lambda: c.execute(sql).fetchall())
        if o[0] == "rows" and o != want:
            ST.fails.append(("memory_mb 1", sql, "wrong rows under memory limit: " + short(o)))
        print("memory_mb 1:", o[0], o[1] if o[0] == "error" else "")
    finally:
        c.execute("SELECT par_config('memory_mb', ?)", (old_mb,))
        c.execute("DROP TABLE temp.mv")
    # Explain of odd things.
    for s in ("SELECT row_number() OVER () FROM tm", "SELECT rank() OVER (ORDER BY o) FROM t0",
              "SELECT sum(i) OVER (ORDER BY o RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM tm"):
        e = explain(c, s)
        if e is None or "error" in e[:20]:
            ST.fails.append(("explain", s, repr(e)))


def main():
    c = build_world()
    rng = random.Random(SEED * 7919)
    cases = [(s, True, "targeted") for s in targeted(c)]
    cases += [(random_case(rng), False, "random") for _ in range(NCASES)]
    for k, (sql, fast, label) in enumerate(cases):
        check(c, sql, False, label)
        if k % 200 == 0:
            print("  %d/%d cases, %d failures" % (k, len(cases), len(ST.fails)), flush=True)
    misc(c)
    seen = set()
    for label, sql, why in ST.fails:
        print("\nFAIL [%s] %s\n      %s" % (label, sql, why))
    print("\nnative fallbacks (reason: count):")
    for why, n in ST.native.most_common(40):
        print("  %4d  %s" % (n, why))
    print("\n%d cases, %d through the window operator" % (ST.n, ST.window))
    print("stress_window: %d passed, %d failed" % (ST.n - len(ST.fails), len(ST.fails)))
    return 1 if ST.fails else 0


if __name__ == "__main__":
    sys.exit(main())
