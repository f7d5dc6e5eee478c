#!/usr/bin/python3
"""ORDER BY [LIMIT/OFFSET] over a GROUP BY's result, sorted by the sort
operator after the group-by, compared in order with SQLite itself.

    /usr/bin/python3 tests/test_groupsort.py ./parallel.so       # ~10 s
    GROUPSORT_CASES=4 GROUPSORT_SEED=7 ...                        # 4x the cases, another world

Every case runs one SELECT natively and as a parallel view at
par_config('threads') 1, 2 and 3 (min_rows 0: the kernels run on several
threads even for a few groups) and compares the rows as sequences: the
same rows in the same order, each value of the same storage class, REALs
bit for bit; the thread counts must agree exactly with each other.  Where
the native SELECT fails, the view must fail with the native message.

The data make ties the rule: keys and aggregate arguments draw from a few
values (NULL, 1 and 1.0, 'a' and 'A' under NOCASE, 'a' and 'a ' under
RTRIM, mixed storage classes), so many groups share a count, a sum, a
min; which of them comes first is the order SQLite makes the groups in
(ascending keys, or descending, or each key in its ORDER BY term's
direction when there are as many terms as keys), and which a LIMIT keeps
follows from it.  One table has an index on its key, so SQLite reads the
groups in index order.

Tests:
  test_random_group_sort       GROUP BY 1-2 keys, 1-3 aggregates, ORDER BY
                               1-3 terms (keys, aggregates: expression,
                               alias, ordinal; ASC/DESC, NULLS FIRST/LAST,
                               COLLATE; now and then an expression over
                               aggregates, which the final SQL sorts),
                               HAVING, LIMIT/OFFSET in every form; most
                               cases must run the sort operator
  test_many_groups_ties        thousands of groups with a handful of
                               counts: full sorts and top-k at every cut
  test_shapes                  which ORDER BY terms the sort operator takes
                               (par_explain), and par_profile's sort line
  test_final_sql_keeps_order   with HAVING, SQLite's plan of the final SQL
                               has no sorter and scans par_rows once

The last line is "test_groupsort: N passed, N failed".
"""
import json
import os
import random
import shutil
import sqlite3
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run, token, outcome, show, connect_ext  # noqa: E402

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
EXT = os.path.abspath(ARGS[0] if ARGS else "./parallel.so")
ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
SEED = int(os.environ.get("GROUPSORT_SEED", "20261126"))
SCALE = float(os.environ.get("GROUPSORT_CASES", "1")) * (0.25 if ASAN else 1.0)
THREADS = (1, 2, 3)
MAX_SHOWN = 8
TMP = tempfile.mkdtemp(prefix="par_groupsort_")

# name, declared type, vocabulary (a few values each, chosen per table)
COLUMNS = [
    ("k", "INTEGER", [0, 1, 2, 3, 1.0, 2.5, "3", "a", b"\x01"]),
    ("sn", "TEXT COLLATE NOCASE", ["a", "A", "b", "B", "ab", "aB", "", "1", 1, b"A"]),
    ("sr", "TEXT COLLATE RTRIM", ["a", "a ", "b", "B  ", "", " ", 1.5, b"a "]),
    ("x", "", [1, 1.0, "1", -0.0, 0, 2, 2.5, "a", "A", "a ", b"", b"a", 2**53, 2.0**53]),
    ("i", "INTEGER", [0, 1, -1, 2, 3, 7, 2**62, -2**62]),
    ("r", "REAL", [0.0, -0.0, 1.0, 0.5, -2.25, 0.1, 1e300, 3.0]),
]
COLNAMES = [c for c, _, _ in COLUMNS]

KEYS = ["k", "sn", "sr", "x", "i % 3", "(i % 3)", "i % 3, k", "typeof(x)", "x COLLATE NOCASE", "k, sn", "sr, k",
        "sn, x", "k, i % 2"]
AGGS = ["count(*)", "count(x)", "sum(k)", "sum(i)", "total(r)", "avg(i)", "min(sn)", "max(sr)",
        "min(x)", "max(x)", "max(i)", "min(r)", "count(DISTINCT sn)", "max(x COLLATE NOCASE)", "group_concat(sr)"]
EXPR_TERMS = ["count(*) * 2", "sum(i) / count(*)", "-count(*)", "max(i) + 1",
              "count(*) || ''", "coalesce(min(x), 0)"]
DIRS = ["", "", " ASC", " DESC", " DESC"]
NULLSP = ["", "", "", " NULLS FIRST", " NULLS LAST"]
COLLS = ["", "", "", "", " COLLATE BINARY", " COLLATE NOCASE", " COLLATE RTRIM"]
HAVINGS = ["count(*) > 1", "count(*) >= 2 OR k IS NULL", "sum(i) IS NOT NULL", "max(x) <> 2",
           "min(sn) < 'b'", "total(r) > 0"]
LIMIT_N = ["0", "1", "2", "3", "5", "-1", "-7", "100000", "1+1", "(SELECT 2)", "'3'", "2.0"]
OFFSET_N = ["0", "1", "2", "4", "-2", "100000", "1+2", "'1'"]


def ncases(n):
    return max(3, int(n * SCALE))


def connect(path):
    return connect_ext(path, EXT)


def make_rows(rng, n):
    """n rows, each column skewed over a few values of its vocabulary, some
    NULL: many groups tie in their aggregates."""
    vocab, pnull = {}, {}
    for name, _, pool in COLUMNS:
        vocab[name] = rng.sample(pool, rng.choice([2, 3, 4, len(pool)]))
        pnull[name] = rng.choice([0.0, 0.1, 0.3])
    rows = []
    for _ in range(n):
        row = []
        for name, _, _ in COLUMNS:
            voc = vocab[name]
            row.append(None if rng.random() < pnull[name]
                       else voc[min(int(rng.expovariate(2.0 / len(voc))), len(voc) - 1)])
        rows.append(row)
    return rows


class World:
    def __init__(self):
        rng = random.Random(SEED)
        c = connect(os.path.join(TMP, "groupsort.db"))
        c.execute("PRAGMA journal_mode=WAL")
        decl = ", ".join(("%s %s" % (n, d)).strip() for n, d, _ in COLUMNS)
        ins = ",".join("?" * len(COLUMNS))
        c.execute("BEGIN")
        for name, n in [("t0", 0), ("t1", 1), ("ts", 400), ("tm", 1500), ("tt", 300)]:
            c.execute("CREATE %sTABLE %s(%s)" % ("TEMP " if name == "tt" else "", name, decl))
            c.executemany("INSERT INTO %s VALUES(%s)" % (name, ins), make_rows(rng, n))
        c.execute("CREATE INDEX tm_k ON tm(k)")
        # Many groups, few distinct counts: g has 3000 values, each in 1-4 rows.
        c.execute("CREATE TABLE tg(g INTEGER, h TEXT COLLATE NOCASE, v)")
        rows = []
        for g in range(3000):
            for _ in range(rng.choice([1, 1, 2, 3, 4])):
                rows.append((g if g % 97 else None if g % 2 else g * 1.0,
                             rng.choice(["p", "P", "q", None]), rng.choice([1, 2, 2.0, None, "z"])))
        rng.shuffle(rows)
        c.executemany("INSERT INTO tg VALUES(?,?,?)", rows)
        c.execute("COMMIT")
        c.execute("ANALYZE")
        c.execute("SELECT par_config('min_rows', 0)")
        self.conn = c


_world = []


def world():
    if not _world:
        _world.append(World())
    return _world[0]


def quote(sql):
    return "'" + sql.replace("'", "''") + "'"


def uses_sort(sql):
    plan = world().conn.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
    return "\nsort " in plan and "\ngroup by " in plan


class Cases:
    def __init__(self, name):
        self.name, self.n, self.nsort, self.fails = name, 0, 0, []

    def check(self, sql):
        c = world().conn
        self.n += 1
        try:
            self.nsort += uses_sort(sql)
        except sqlite3.Error:
            pass
        want = outcome(lambda: c.execute(sql).fetchall())
        try:
            c.execute("CREATE VIRTUAL TABLE temp.gv USING parallel(%s)" % quote(sql))
        except sqlite3.Error as e:
            if not (want[0] == "error" and want[1] in str(e)):
                self.fails.append("%s\n    native %s, creating the view: %s" % (sql, show(want), e))
            return
        try:
            got = []
            for t in THREADS:
                c.execute("SELECT par_config('threads', ?)", (t,))
                got.append(outcome(lambda: c.execute("SELECT * FROM gv").fetchall()))
        finally:
            c.execute("SELECT par_config('threads', 0)")
            c.execute("DROP TABLE temp.gv")
        for t, g in zip(THREADS, got):
            ok = g == want if want[0] == "ok" else g[0] == "error" and want[1] in g[1]
            if not ok:
                diff = ""
                if g[0] == want[0] == "ok":
                    a, b = want[1], g[1]
                    i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), None)
                    diff = ("row count %d vs %d" % (len(a), len(b)) if i is None
                            else "first difference at row %d" % i)
                self.fails.append("%s\n    threads %d: %s\n    native %s\n    view   %s"
                                  % (sql, t, diff, show(want), show(g)))
                return

    def done(self, min_sorted=0.0):
        assert self.n > 0
        if self.fails:
            raise AssertionError("%d of %d cases differ:\n  %s" % (
                len(self.fails), self.n, "\n  ".join(self.fails[:MAX_SHOWN])))
        print("     %s: %d cases, %d through the sort operator" % (self.name, self.n, self.nsort))
        assert self.nsort >= min_sorted * self.n, \
            "only %d of %d cases ran the sort operator" % (self.nsort, self.n)


def limit_clause(rng):
    p = rng.random()
    if p < 0.35:
        return ""
    n = rng.choice(LIMIT_N)
    if p < 0.7:
        return " LIMIT " + n
    m = rng.choice(OFFSET_N)
    return " LIMIT %s OFFSET %s" % (n, m) if p < 0.9 else " LIMIT %s, %s" % (m, n)


def gen_group(rng):
    t = rng.choice(["t0", "t1", "ts", "ts", "tm", "tm", "tt"])
    keys = rng.choice(KEYS).split(", ")
    aggs = rng.sample(AGGS, rng.randint(1, 3))
    items, parts = [], []
    for j, e in enumerate(keys + aggs):
        items.append(e)
        parts.append("%s AS c%d" % (e, j) if rng.random() < 0.4 else e)
    rng.shuffle(parts) if rng.random() < 0.2 else None
    sql = "SELECT %s FROM %s" % (", ".join(parts), t)
    if rng.random() < 0.3:
        sql += rng.choice([" WHERE k IS NOT NULL", " WHERE i > 0", " WHERE sn <> 'b'"])
    sql += " GROUP BY " + ", ".join(keys)
    if rng.random() < 0.25:
        sql += " HAVING " + rng.choice(HAVINGS)
    terms = []
    for _ in range(rng.randint(1, 3)):
        p = rng.random()
        if p < 0.25:
            term = "c%d" % rng.randrange(len(items))
            if term not in sql:
                term = str(rng.randint(1, len(parts)))
        elif p < 0.45:
            term = str(rng.randint(1, len(parts)))
        elif p < 0.9:
            term = rng.choice(keys + aggs)
        else:
            term = rng.choice(EXPR_TERMS)
        if "COLLATE" not in term:
            term += rng.choice(COLLS)
        terms.append(term + rng.choice(DIRS) + rng.choice(NULLSP))
    return sql + " ORDER BY " + ", ".join(terms) + limit_clause(rng)


def test_random_group_sort():
    rng = random.Random(SEED + 1)
    cases = Cases("group by + order by")
    for _ in range(ncases(160)):
        cases.check(gen_group(rng))
    cases.done(min_sorted=0.5)


def test_first_key_decides():
    """GROUP BY g, h, w, ... where the first key, an INTEGER column,
    decides the others in the rows (each g one h, one w: a customer's id,
    name, address): grouped by g alone, the others taken from any row
    (par_profile names it); where some g holds two values of another key,
    even ones its collation finds equal ('a' and 'A' under NOCASE, 1 and
    1.0, 0.0 and -0.0) or NULL and a value, grouped by all the keys.
    SQLite's rows either way."""
    c = world().conn
    rng = random.Random(SEED + 5)
    c.execute("CREATE TABLE tk(g INTEGER, h TEXT COLLATE NOCASE, w, x REAL, v)")
    rows = []
    for g in range(600):
        h, w, x = rng.choice(["p", "P", "q", None]), rng.choice([1, 2.5, "z", None, b"b"]), \
            rng.choice([0.5, -1.0, None])
        for _ in range(rng.choice([1, 2, 3])):
            rows.append((None if g == 101 else g, h, w, x, rng.choice([1, 0.1, 1e16, -1e16])))
    rng.shuffle(rows)
    c.executemany("INSERT INTO tk VALUES(?,?,?,?,?)", rows)
    c.commit()
    cases = Cases("first key decides")
    decided = []
    sqls = ["SELECT g, h, w, count(*), sum(v) FROM tk GROUP BY g, h, w",
            "SELECT g, h, w, x, total(v) FROM tk GROUP BY g, h, w, x ORDER BY 5 DESC LIMIT 30",
            "SELECT h, g, max(v) FROM tk GROUP BY g, h ORDER BY 3, 1",
            "SELECT g, w, group_concat(v) FROM tk GROUP BY g, w"]
    for sql in sqls:
        cases.check(sql)
        prof = json.loads(c.execute("SELECT par_profile(?)", (sql,)).fetchone()[0])
        decided.append("which decides the others" in json.dumps(prof))
    assert all(decided), decided
    # One g with 'a' and 'A' (NOCASE: one group), one with 1 and 1.0, one
    # with 0.0 and -0.0, one with NULL and a value: every key groups.
    for bad in [(7, "a", "A", "h"), (8, 1, 1.0, "w"), (9, 0.0, -0.0, "x"), (10, None, 2, "w")]:
        g, a, b, col = bad
        c.execute("UPDATE tk SET %s = ? WHERE g = ? AND rowid = (SELECT min(rowid) FROM tk "
                  "WHERE g = ?)" % col, (a, g, g))
        c.execute("INSERT INTO tk(g, h, w, x, v) SELECT g, h, w, x, v FROM tk WHERE g = ? "
                  "LIMIT 1", (g,))
        c.execute("UPDATE tk SET %s = ? WHERE rowid = (SELECT max(rowid) FROM tk)" % col, (b,))
        c.commit()
        for sql in sqls:
            cases.check(sql)
    c.execute("DROP TABLE tk")
    c.commit()
    # The first key gathered by a join from a column with NULLs, none of
    # them among the joined rows: a NULL bitmap and no NULL (its bins then
    # have no NULL bin: a bin past the end crashed, JOIN_CASES=3
    # JOIN_SEED=99 in test_join).
    c.execute("CREATE TABLE kl(id INTEGER PRIMARY KEY, rid INTEGER, v REAL)")
    c.execute("CREATE TABLE kr(id INTEGER PRIMARY KEY, g INTEGER, h TEXT)")
    c.executemany("INSERT INTO kr VALUES(?,?,?)", [(i, i % 50, "h%d" % (i % 50)) for i in range(200)]
                  + [(i, None, None) for i in range(200, 260)])
    c.executemany("INSERT INTO kl VALUES(?,?,?)", [(i, i % 200, i * 0.5) for i in range(3000)])
    c.commit()
    for sql in ["SELECT kr.g, kr.h, count(*), sum(kl.v) FROM kl LEFT JOIN kr ON kr.id = kl.rid "
                "GROUP BY kr.g, kr.h",
                "SELECT kr.g, kr.h, count(*) FROM kl JOIN kr ON kr.id = kl.rid GROUP BY kr.g, kr.h",
                "SELECT kr.g, kr.h, total(kl.v) FROM kl LEFT JOIN kr ON kr.id = kl.rid "
                "GROUP BY kr.g, kr.h ORDER BY 3 DESC LIMIT 5"]:
        cases.check(sql)
    c.execute("DROP TABLE kl")
    c.execute("DROP TABLE kr")
    c.commit()
    cases.done()


def test_many_groups_ties():
    cases = Cases("many groups")
    shapes = ["SELECT g, count(*) AS n FROM tg GROUP BY g ORDER BY n DESC",
              "SELECT g, count(*) AS n FROM tg GROUP BY g ORDER BY n",
              "SELECT g, count(*) FROM tg GROUP BY g ORDER BY 2 DESC",
              "SELECT g, max(v), count(*) FROM tg GROUP BY 1 ORDER BY 2 NULLS LAST",
              "SELECT g, min(h) FROM tg GROUP BY g ORDER BY g DESC",
              "SELECT h, g, count(*) AS n FROM tg GROUP BY h, g ORDER BY n DESC, h",
              "SELECT h, g, count(*) AS n FROM tg GROUP BY h, g ORDER BY h DESC, n",
              "SELECT h, g, sum(v) AS s FROM tg GROUP BY h, g ORDER BY h, g DESC",
              "SELECT h, g, sum(v) AS s FROM tg GROUP BY g, h ORDER BY s DESC, g DESC",
              "SELECT h, count(*) AS n FROM tg GROUP BY h ORDER BY h COLLATE BINARY DESC",
              "SELECT g, total(v) FROM tg GROUP BY g HAVING count(*) > 1 ORDER BY 2"]
    cuts = ["", " LIMIT 7", " LIMIT 40 OFFSET 3", " LIMIT 10 OFFSET 2995"]
    for s in shapes:
        for cut in cuts if not ASAN else cuts[::3]:
            cases.check(s + cut)
    cases.done(min_sorted=1.0)


def test_shapes():
    """The terms the sort operator takes, and the ones left to the final SQL."""
    w = world()
    sorted_ = ["SELECT k, count(*) FROM ts GROUP BY k ORDER BY count(*)",
               "SELECT k, count(*) AS n FROM ts GROUP BY k ORDER BY n DESC LIMIT 2",
               "SELECT k, count(*) FROM ts GROUP BY k ORDER BY 2, 1",
               "SELECT k AS kk, max(sn) FROM ts GROUP BY k ORDER BY kk NULLS LAST",
               "SELECT sn, max(sr) FROM ts GROUP BY sn ORDER BY sn COLLATE BINARY",
               "SELECT sn, max(sr) FROM ts GROUP BY sn ORDER BY (max(sr)) COLLATE NOCASE DESC",
               "SELECT i % 3, sum(i) FROM ts GROUP BY i % 3 ORDER BY 1 DESC",
               "SELECT sum(i) FROM ts ORDER BY 1",
               "SELECT i % 3, sum(i) FROM ts GROUP BY i % 3 ORDER BY i % 3 DESC",
               "SELECT k, count(*) FROM ts GROUP BY k HAVING count(*) > 1 ORDER BY 2 LIMIT 2"]
    final = ["SELECT k, count(*) FROM ts GROUP BY k ORDER BY count(*) * 2",
             "SELECT k, sum(i), count(*) FROM ts GROUP BY k ORDER BY sum(i) / count(*)",
             "SELECT DISTINCT k, count(*) FROM ts GROUP BY k ORDER BY 2",
             "SELECT k, count(*) FROM ts GROUP BY k ORDER BY k + 1",
             "SELECT count(*) FROM ts GROUP BY i % 3 ORDER BY i % 3"]
    for q in sorted_:
        assert uses_sort(q), "no sort operator: %s\n%s" % (
            q, w.conn.execute("SELECT par_explain(?)", (q,)).fetchone()[0])
    for q in final:
        plan = w.conn.execute("SELECT par_explain(?)", (q,)).fetchone()[0]
        assert "\nsort " not in plan and "ORDER BY" in plan.split("final     ")[1], (q, plan)
    p = json.loads(w.conn.execute("SELECT par_profile(?)", (sorted_[1],)).fetchone()[0])
    ops = [o["op"] for o in p["operators"]]
    assert ops == ["scan", "group by", "sort", "final"], ops
    assert p["operators"][2]["rows"] == 2, p
    plan = w.conn.execute("SELECT par_explain(?)", (sorted_[1],)).fetchone()[0]
    assert "\nlimit     (2), 0" in plan, plan


def test_final_sql_keeps_order():
    """With HAVING the final SQL filters the sorted groups: SQLite's plan of
    it must read par_rows once, in order, with no sorter."""
    c = world().conn
    shapes = ["SELECT k, count(*) AS n FROM ts GROUP BY k HAVING n > 1 ORDER BY n DESC LIMIT 3",
              "SELECT sn, k, max(x) FROM tm GROUP BY sn, k HAVING max(x) IS NOT NULL ORDER BY 3",
              "SELECT g, count(*) FROM tg GROUP BY g HAVING g % 2 = 0 ORDER BY 2 DESC, 1"]
    for q in shapes:
        plan = c.execute("SELECT par_explain(?, 'verbose')", (q,)).fetchone()[0]
        assert "\nsort " in plan, plan
        final = plan.split("final SQL:   ")[1].strip()
        assert "ORDER BY" not in final, final
        eqp = [r[3] for r in c.execute("EXPLAIN QUERY PLAN " + final, {"par_rows": None})]
        assert len(eqp) == 1 and eqp[0].startswith("SCAN par_rows"), (final, eqp)
        cases = Cases("having")
        cases.check(q)
        cases.done(min_sorted=1.0)


def cleanup():
    if _world:
        _world[0].conn.close()
    shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(run("test_groupsort", globals(), after=cleanup))
