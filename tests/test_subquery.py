#!/usr/bin/python3
"""Subqueries in FROM and WITH through parallel views, compared in order
with SQLite itself.

    /usr/bin/python3 tests/test_subquery.py ./parallel.so              # ~20 s
    /usr/bin/python3 tests/test_subquery.py ./parallel.so --seed 17    # one world, every case
    /usr/bin/python3 tests/test_subquery.py ./parallel.so --seed 17 --case 4
    SUBQUERY_CASES=4 SUBQUERY_SEED=7 ...                               # 4x the worlds, others

A SELECT whose FROM is one subquery (or one common table expression used
once) that SQLite merges into it is planned as merged (ext/plan_flatten.c);
every other one runs natively.  The worlds are test_join.py's (2-5 tables
of keys mixing storage classes, NULLs, duplicates, NOCASE/RTRIM columns,
REALs whose sums depend on their order, int64 extremes, empty tables).
Each case is an outer SELECT (GROUP BY with aggregates, aggregates alone,
ORDER BY with ties and LIMIT, DISTINCT, plain rows, "*") over a subquery
whose select list mixes plain columns, numeric expressions and other
expressions (typeof, ||, substr, CAST, literals), with and without
aliases, over one table or a join; the outer SELECT filters and groups by
those columns, names them qualified or not, compares them with each other
(where a merged expression would change collation), gives aliases that
clash with the subquery's or its tables' column names; written as FROM
(...), as WITH, or nested two deep.  Each runs natively and as a parallel
view at 1, 2 and 3 threads (test_join.py's check: same rows, order,
storage classes, REAL bits).

Tests:
  test_random_subqueries   the worlds above
  test_targeted            the rules of the merge, each against SQLite
  test_merges_happen       the shapes that must be accelerated are (par_explain)
  test_exists_as_in        [NOT] EXISTS correlated by one equality as [NOT] IN
  test_expression_subqueries
                           GROUP BY with subqueries in WHERE (read in parallel:
                           on every worker connection), the select list, HAVING
                           (scalar, IN, NOT IN, EXISTS) and ORDER BY, and
                           ORDER BY a subquery without GROUP BY; uncorrelated
                           ones accelerated, correlated ones native
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_join as J                       # noqa: E402  (its worlds and check)
from harness import run                     # noqa: E402

SEED = int(os.environ.get("SUBQUERY_SEED", "9100"))
SCALE = float(os.environ.get("SUBQUERY_CASES", "1")) * (0.2 if J.ASAN else 1.0)
WORLDS = max(2, int(14 * SCALE))
CASES = 30
STATS = {}

INNER_PLAIN = ["{k}", "{k2}", "{s}", "{z}", "{v}", "{x}", "{i}"]
INNER_NUM = ["{z} * 2", "{v} + {i}", "-{z}", "{z} > 2", "{i} - {z}", "{v} / 3", "{z} IS NULL"]
INNER_OTHER = ["typeof({k})", "{s} || 'x'", "substr({s}, 1, 1)", "CAST({k} AS TEXT)",
               "coalesce({s}, 'n')", "1", "'lit'", "+{s}", "lower({s})"]


def inner_item(rng, refs):
    kind = rng.choices(["plain", "num", "other"], [50, 25, 25])[0]
    form = rng.choice({"plain": INNER_PLAIN, "num": INNER_NUM, "other": INNER_OTHER}[kind])
    return kind, J.fill(rng, form, refs)


def gen_inner(rng, w):
    """(subquery SQL, its column names, kinds)."""
    if rng.random() < 0.4:
        t = rng.choice(w.tables)
        aliased = rng.random() < 0.4
        r = J.Ref(t, "a" if aliased else t.name, aliased)
        frm = t.name + (" AS a" if aliased else "")
        wheres = [J.table_filter(rng, r)] if rng.random() < 0.5 else []
        refs = [r]
    else:
        frm, wheres, refs = J.gen_from(rng, w)
    items, names, kinds = [], [], []
    for j in range(rng.randint(2, 5)):
        kind, expr = inner_item(rng, refs)
        if kind == "plain" and rng.random() < 0.3:
            name = expr.split(".")[-1]
            if name.lower() in [n.lower() for n in names]:
                continue
            items.append(expr)
        else:
            name = "c%d" % j
            items.append("%s AS %s" % (expr, name))
        names.append(name)
        kinds.append(kind)
    if rng.random() < 0.05:
        items.append(items[0].split(" AS ")[0])     # a duplicate name: native
        names.append(names[0])
        kinds.append(kinds[0])
    where = " WHERE " + " AND ".join(wheres) if wheres else ""
    return "SELECT %s FROM %s%s" % (", ".join(items), frm, where), names, kinds


def outer_ref(rng, names, qual):
    n = rng.choice(names)
    return "%s.%s" % (qual, n) if qual and rng.random() < 0.4 else n


def gen_outer(rng, names, qual):
    """(select list, WHERE, tail) over the subquery's columns."""
    ref = lambda: outer_ref(rng, names, qual)        # noqa: E731
    where = ""
    if rng.random() < 0.5:
        where = " WHERE " + rng.choice([
            "%s > 2" % ref(), "%s IS NULL" % ref(), "%s = 'a'" % ref(), "%s <> %s" % (ref(), ref()),
            "%s BETWEEN 1 AND 5" % ref(), "%s IN (1, 'a', 5)" % ref(), "%s" % ref(),
            "%s < %s COLLATE NOCASE" % (ref(), ref())])
    shape = rng.choices(["group", "agg", "order", "distinct", "plain", "star"],
                        [35, 12, 20, 12, 11, 10])[0]
    if shape in ("group", "agg"):
        keys = [ref() for _ in range(rng.randint(1, 2))] if shape == "group" else []
        aggs = [rng.choice(["count(*)", "count(%s)", "sum(%s)", "total(%s)", "avg(%s)",
                            "min(%s)", "max(%s)", "group_concat(%s)", "count(DISTINCT %s)",
                            "%s"]).replace("%s", ref()) for _ in range(rng.randint(1, 3))]
        if not any("(" in a for a in aggs):
            aggs.append("count(*)")
        alias = rng.choice(["a%d", "a%d", names[-1] if rng.random() < 0.3 else "a%d", "z1"])
        items = keys + ["%s AS %s" % (a, alias.replace("%d", str(j)) if "%d" in alias
                                      else alias if j == 0 else "a%d" % j)
                        for j, a in enumerate(aggs)]
        tail = ""
        if keys:
            tail = " GROUP BY " + ", ".join(keys)
            if rng.random() < 0.15:
                tail += " HAVING count(*) > 1"
            if rng.random() < 0.4:
                tail += " ORDER BY " + ", ".join(
                    rng.choice(["1", keys[0], "2"]) + rng.choice(J.DIRS)
                    for _ in range(rng.randint(1, 2))) + J.limit(rng)
        return ", ".join(items), where, tail
    if shape == "star":
        return ("*" if rng.random() < 0.7 or not qual else qual + ".*"), where, \
            " ORDER BY 1" + J.limit(rng) if rng.random() < 0.5 else ""
    cols = [ref() for _ in range(rng.randint(1, 3))]
    if shape == "distinct":
        return "DISTINCT " + ", ".join(cols), where, \
            (" ORDER BY " + cols[0] if rng.random() < 0.5 else "") + J.limit(rng)
    if shape == "plain":
        return ", ".join(cols), where, ""
    terms = [ref() + rng.choice(J.DIRS) + rng.choice(J.NULLSP) for _ in range(rng.randint(1, 2))]
    return ", ".join(cols), where, " ORDER BY " + ", ".join(terms) + J.limit(rng)


def gen_query(w, case):
    rng = random.Random("subquery %d %d" % (w.seed, case))
    for _ in range(30):
        inner, names, kinds = gen_inner(rng, w)
        n = J.join_rows(w.conn, "(%s)" % inner, "")
        if n is None:
            continue
        break
    form = rng.choices(["from", "with", "nested"], [55, 30, 15])[0]
    qual = rng.choice([None, "s", "q"])
    sel, where, tail = gen_outer(rng, names, qual)
    if form == "nested":
        # the subquery itself over a subquery that passes its columns on
        inner = "SELECT %s FROM (%s)%s" % (", ".join(names), inner,
                                           rng.choice(["", " AS r"]))
    if form == "with":
        name = qual or "s"
        src = name if rng.random() < 0.7 or qual is None else "%s AS %s" % (name, name)
        return "WITH %s AS (%s) SELECT %s FROM %s%s%s" % (name, inner, sel, src, where, tail)
    return "SELECT %s FROM (%s)%s%s%s" % (sel, inner, " AS %s" % qual if qual else "", where, tail)


def classify(conn, sql):
    plan = conn.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
    first = plan.split("\n")[0]
    if first.startswith("native:"):
        why = first.split("not merged: ", 1)[1] if "not merged: " in first \
            else first.replace("native: SQLite runs the whole SELECT (", "")
        return "native: " + J.squash(why.split(":")[0].rstrip(")"))
    return "merged" if "\nfrom      the subquery" in plan else "accelerated, not merged"


def run_world(seed, cases, fails, verbose=False):
    w = J.World(seed)
    for case in cases:
        sql = gen_query(w, case)
        kind = classify(w.conn, sql)
        STATS[kind] = STATS.get(kind, 0) + 1
        why = J.check(w.conn, sql)
        if verbose:
            print("-- case %d: %s\n   %s\n   %s" % (case, sql, kind, "ok" if why is None else why))
        if why is not None:
            fails.append("seed %d case %d: %s\n    %s\n    replay: /usr/bin/python3 "
                         "tests/test_subquery.py %s --seed %d --case %d"
                         % (seed, case, sql, why, os.path.relpath(J.EXT), seed, case))
    w.conn.close()


def test_random_subqueries():
    fails = []
    before = dict(STATS)        # (the other tests' counts are not this one's)
    if J.REPLAY_SEED is not None:
        cases = [J.REPLAY_CASE] if J.REPLAY_CASE is not None else range(CASES)
        run_world(J.REPLAY_SEED, cases, fails, verbose=True)
    else:
        for k in range(WORLDS):
            run_world(SEED + k, range(CASES), fails)
    assert not fails, "%d of the cases differ:\n%s" % (len(fails), "\n".join(fails[:6]))
    if J.REPLAY_SEED is None and not J.ASAN:
        mine = {k: v - before.get(k, 0) for k, v in STATS.items()}
        assert mine.get("merged", 0) >= 0.3 * sum(mine.values()), mine


# Subqueries in expressions: uncorrelated ones go whole into the SQL that
# evaluates their clause; correlated ones (naming the outer table) native.
EXPR_SUBS = ["(SELECT avg({z2}) FROM {t2})", "(SELECT count(*) FROM {t2} WHERE {k2} > 2)",
             "(SELECT max({s2}) FROM {t2})", "(SELECT {k2} FROM {t2} ORDER BY 1 LIMIT 1)",
             "(SELECT total({v2}) FROM {t2})", "(SELECT 1)",
             "(SELECT count(*) FROM {t2} WHERE {k2} = {k})"]           # correlated
HAVINGS = ["sum({z}) > {sub}", "count(*) >= {sub}", "{k} IN (SELECT {k2} FROM {t2})",
           "EXISTS (SELECT 1 FROM {t2} WHERE {k2} = {k})", "max({s}) < {sub}",
           "{k} NOT IN (SELECT {k2} FROM {t2} WHERE {k2} IS NOT NULL)", "{sub} IS NULL"]


def gen_expr_query(w, rng):
    t, t2 = rng.choice(w.tables), rng.choice(w.tables)
    a2 = "o" if t2 is t else t2.name
    f = {"k": "%s.k" % t.name, "z": "%s.%s" % (t.name, t.col("z")),
         "s": "%s.%s" % (t.name, t.col("s")), "v": "%s.%s" % (t.name, t.col("v")),
         "t2": "%s AS %s" % (t2.name, a2), "k2": "%s.k" % a2,
         "z2": "%s.%s" % (a2, t2.col("z")), "s2": "%s.%s" % (a2, t2.col("s")),
         "v2": "%s.%s" % (a2, t2.col("v"))}
    f["sub"] = rng.choice(EXPR_SUBS).format(**f)
    shape = rng.choice(["group", "group", "agg", "order", "where", "where"])
    if shape == "where":
        # in WHERE: part of the reading query, on every worker connection
        cond = rng.choice(["{z} > {sub}", "{k} IN (SELECT {k2} FROM {t2})",
                           "EXISTS (SELECT 1 FROM {t2} WHERE {k2} = {k})",
                           "NOT EXISTS (SELECT 1 FROM {t2} WHERE {k2} = {k})",
                           "{k} NOT IN (SELECT {k2} FROM {t2} WHERE {k2} IS NOT NULL)",
                           "{s} < {sub}"])
        return ("SELECT {k}, count(*), sum({z}), total({v}) FROM %s WHERE %s GROUP BY {k}%s"
                % (t.name, cond, rng.choice(["", " ORDER BY 2 DESC, 1"]))).format(**f)
    if shape == "order":
        sql = "SELECT {k}, {sub} AS q, {z} FROM %s ORDER BY %s, {z}, {k}%s" % (
            t.name, rng.choice(["{sub}", "q", "{s}"]), J.limit(rng))
        return sql.format(**f)
    items = ["{k}", "count(*)", "sum({z})", "total({v})"]
    if rng.random() < 0.4:
        items.append("{sub} AS q")
    sql = "SELECT %s FROM %s" % (", ".join(items), t.name)
    if shape == "group":
        sql += " GROUP BY {k}"
        if rng.random() < 0.7:
            sql += " HAVING " + rng.choice(HAVINGS)
        if rng.random() < 0.4:
            sql += " ORDER BY " + rng.choice(["2 DESC, 1", "{sub}, 1", "1"])
    return sql.format(**f)


def test_expression_subqueries():
    fails, n = [], 0
    for k in range(max(1, WORLDS // 2)):
        w = J.World(SEED + 500 + k)
        rng = random.Random("expr %d" % k)
        for case in range(CASES):
            sql = gen_expr_query(w, rng)
            kind = classify(w.conn, sql)
            STATS["expression subquery: " + kind] = STATS.get("expression subquery: " + kind, 0) + 1
            n += kind.startswith("accelerated") or kind == "merged"
            why = J.check(w.conn, sql)
            if why:
                fails.append("world %d case %d: %s\n    %s" % (SEED + 500 + k, case, sql, why))
        w.conn.close()
    assert not fails, "%d differ:\n%s" % (len(fails), "\n".join(fails[:6]))
    assert J.ASAN or n > 0.3 * CASES * max(1, WORLDS // 2), STATS


def outer_from(w, rng):
    """(FROM, its WHERE terms, the reference the subquery correlates with):
    one table as "a" (mostly), or test_join's joins."""
    if rng.random() < 0.6:
        t = rng.choice(w.tables)
        return "%s AS a" % t.name, [], J.Ref(t, "a", True)
    frm, wheres, refs = J.gen_from(rng, w)
    return frm, wheres, rng.choice(refs)


def gen_exists_query(w, rng):
    """A GROUP BY over one table or a join whose WHERE holds [NOT] EXISTS
    over another table correlated by one equality (keys of every type and
    collation: the rewrite as [NOT] IN must keep to the ones where = and
    IN agree), sometimes more terms, correlated or not."""
    frm, wheres, r = outer_from(w, rng)
    t2 = rng.choice(w.tables)
    o = J.Ref(t2, "o", True)
    ka, kb = rng.choice(r.t.keys), rng.choice(t2.keys)
    eq = rng.choice(["%s = %s" % (o.c(kb), r.c(ka)), "%s = %s" % (r.c(ka), o.c(kb)),
                     "%s == %s" % (o.c(kb), r.c(ka))])
    terms = [eq]
    if rng.random() < 0.4:
        terms.append(J.table_filter(rng, o))
    if rng.random() < 0.15:
        terms.append("%s < %s" % (o.stem("z"), r.stem("z")))        # correlated: no rewrite
    rng.shuffle(terms)
    sub = "%sEXISTS (SELECT %s FROM %s AS o WHERE %s)" % (
        rng.choice(["", "NOT "]), rng.choice(["*", "1", o.c("k")]), t2.name, " AND ".join(terms))
    wheres = wheres + [sub] + ([J.table_filter(rng, r)] if rng.random() < 0.3 else [])
    rng.shuffle(wheres)
    return "SELECT %s, count(*), sum(%s), total(%s) FROM %s WHERE %s GROUP BY 1%s" % (
        r.c("k"), r.stem("z"), r.stem("v"), frm, " AND ".join(wheres),
        rng.choice(["", " ORDER BY 2 DESC, 1"]))


def test_exists_as_in():
    """[NOT] EXISTS correlated by one equality, over a table without an
    index on its side, runs as [NOT] IN (par_explain: "where     [NOT]
    EXISTS"); SQLite's rows at 1, 2 and 3 threads, NULL keys, every key
    type and collation."""
    fails, n, rewritten = [], 0, 0
    for k in range(max(1, WORLDS // 2)):
        w = J.World(SEED + 900 + k)
        rng = random.Random("exists %d" % k)
        for case in range(CASES):
            sql = gen_exists_query(w, rng)
            if J.join_rows(w.conn, sql.split(" FROM ", 1)[1].split(" WHERE ")[0], "") is None:
                continue
            try:
                plan = w.conn.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
            except Exception:
                plan = ""
            rewritten += "\nwhere     [NOT] EXISTS" in plan
            n += 1
            why = J.check(w.conn, sql)
            if why:
                fails.append("world %d case %d: %s\n    %s" % (SEED + 900 + k, case, sql, why))
        w.conn.close()
    STATS["EXISTS as IN: rewritten"] = rewritten
    STATS["EXISTS as IN: cases"] = n
    assert not fails, "%d differ:\n%s" % (len(fails), "\n".join(fails[:6]))
    # (most world keys have a collation or an index: the targeted cases
    # below are the ones that must be rewritten)
    assert J.ASAN or rewritten > 0, (rewritten, n)
    c = J.connect(os.path.join(J.TMP, "exists.db"))
    c.execute("PRAGMA journal_mode=WAL")
    c.executescript(WORLD_SQL + """
        CREATE TABLE e(k INT, s TEXT, sn TEXT COLLATE NOCASE, z INT);
        INSERT INTO e VALUES (1, 'a', 'A', 1), (1, 'b', 'b', 2), (NULL, 'c', 'c', 3), (3, '3', 'a', 4),
                             ('x', NULL, NULL, 5), (4.0, 'A', 'B', 6);
        CREATE TABLE ei(k INT, z INT); CREATE INDEX ei_k ON ei(k);
        INSERT INTO ei SELECT k, z FROM e;""")
    c.execute("SELECT par_config('min_rows', 0)")
    for sql, want in [
            ("SELECT k, count(*), total(v) FROM f WHERE EXISTS (SELECT 1 FROM e WHERE e.k = f.k) "
             "GROUP BY k", True),
            ("SELECT k, count(*), total(v) FROM f WHERE NOT EXISTS (SELECT * FROM e WHERE f.k = e.k) "
             "GROUP BY k", True),
            ("SELECT k, count(*) FROM f WHERE NOT EXISTS (SELECT 1 FROM e WHERE e.k = f.k AND e.z > 1) "
             "AND z > 0 GROUP BY k", True),
            ("SELECT s, count(*) FROM f WHERE EXISTS (SELECT 1 FROM e WHERE e.s = f.s) GROUP BY s", True),
            # the same as the join of f and a table: grouped by d's keys
            ("SELECT d.grp, count(*) FROM f JOIN d ON d.id = f.k WHERE NOT EXISTS "
             "(SELECT 1 FROM e WHERE e.k = f.z) GROUP BY d.grp", True),
            # TEXT against INTEGER: = converts, so not rewritten
            ("SELECT k, count(*) FROM f WHERE EXISTS (SELECT 1 FROM e WHERE e.s = f.k) GROUP BY k", False),
            # a NOCASE column on either side
            ("SELECT sn, count(*) FROM f WHERE EXISTS (SELECT 1 FROM e WHERE e.sn = f.sn) GROUP BY sn",
             False),
            ("SELECT s, count(*) FROM f WHERE NOT EXISTS (SELECT 1 FROM e WHERE e.s = f.sn) GROUP BY s",
             False),
            # an index on the key: SQLite looks up, kept
            ("SELECT k, count(*) FROM f WHERE EXISTS (SELECT 1 FROM ei WHERE ei.k = f.k) GROUP BY k", False),
            # a second correlated term
            ("SELECT k, count(*) FROM f WHERE EXISTS (SELECT 1 FROM e WHERE e.k = f.k AND e.z < f.z) "
             "GROUP BY k", False)]:
        why = J.check(c, sql)
        plan = c.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
        if why or want != ("\nwhere     [NOT] EXISTS" in plan):
            fails.append("%s\n    %s\n    %s" % (sql, why, plan))
    c.close()
    assert not fails, "\n".join(fails)


WORLD_SQL = """
CREATE TABLE f(id INTEGER PRIMARY KEY, k INT, s TEXT, sn TEXT COLLATE NOCASE, v REAL, z INT);
CREATE TABLE d(id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, grp INT, z INT);
INSERT INTO d VALUES (1, 'a', 1, 5), (2, 'A', 1, 6), (3, 'b', 2, 7), (4, NULL, NULL, 8);
INSERT INTO f(k, s, sn, v, z) SELECT value % 5, char(97 + value % 3), char(65 + value % 2),
       CASE value % 4 WHEN 0 THEN 0.1 WHEN 1 THEN 1e16 WHEN 2 THEN -1e16 ELSE NULL END,
       CASE WHEN value % 7 = 0 THEN NULL ELSE value % 6 END
  FROM (WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n
                                    WHERE value < 400) SELECT value FROM n);
INSERT INTO f(k, s, sn, v, z) VALUES (NULL, 'A', 'a', 2.5, 3), ('5', 'b ', 'B', -0.0, 4);
"""

# (SQL, True when it must be merged)
TARGETED = [
    # a numeric expression: merged; REAL sums in the order SQLite reads the join
    ("SELECT grp, sum(val), count(*) FROM (SELECT d.grp AS grp, f.v * 2 AS val "
     "FROM f JOIN d ON d.id = f.k) GROUP BY grp", True),
    # the subquery's WHERE and the outer one's
    ("SELECT k, total(v) FROM (SELECT k, v FROM f WHERE z > 1) AS q WHERE q.k <> 2 GROUP BY k",
     True),
    ("WITH w AS (SELECT s, z FROM f WHERE v IS NOT NULL) SELECT s, count(*), sum(z) FROM w "
     "GROUP BY s ORDER BY 2 DESC, 1", True),
    ("WITH w AS (SELECT s, z FROM f) SELECT s, count(*) FROM w AS x GROUP BY x.s", True),
    # "||" keeps no collation once merged; it stands alone here: merged
    ("SELECT c, count(*) FROM (SELECT sn || '' AS c FROM f) GROUP BY c", True),
    # ... but here it is compared with a NOCASE column: SQLite compares it
    # under BINARY (the subquery column's implicit collation): native
    ("SELECT count(*) FROM (SELECT s || '' AS c, sn FROM f) WHERE c = sn", False),
    ("SELECT count(*) FROM (SELECT s || '' AS c, sn FROM f) WHERE sn = c", False),
    # a plain NOCASE column keeps its collation when merged
    ("SELECT c, count(*) FROM (SELECT sn AS c FROM f) GROUP BY c ORDER BY c", True),
    ("SELECT count(*) FROM (SELECT sn AS c, s FROM f) WHERE c = s", True),
    # an outer alias that a table of the subquery has as a column: native
    ("SELECT k + 1 AS z, count(*) FROM (SELECT k FROM f) GROUP BY z", False),
    # an outer alias named as a subquery column
    ("SELECT k AS s, count(*) FROM (SELECT k, s FROM f) GROUP BY s", False),
    ("SELECT k AS k, count(*) FROM (SELECT k, s FROM f) GROUP BY k", True),
    # "*" of the outer SELECT
    ("SELECT * FROM (SELECT k, z * 2 AS zz FROM f) ORDER BY zz DESC, 1 LIMIT 7", True),
    ("SELECT DISTINCT * FROM (SELECT k, s FROM f) ORDER BY 2, 1", True),
    # nested two deep
    ("SELECT k, sum(z) FROM (SELECT k, z FROM (SELECT k, z, s FROM f WHERE s <> 'c')) "
     "GROUP BY k", True),
    # not merged: aggregates, LIMIT, DISTINCT in the subquery; a compound
    ("SELECT n, count(*) FROM (SELECT k, count(*) AS n FROM f GROUP BY k) GROUP BY n", False),
    ("SELECT k, count(*) FROM (SELECT k FROM f LIMIT 50) GROUP BY k", False),
    ("SELECT k, count(*) FROM (SELECT DISTINCT k, s FROM f) GROUP BY k", False),
    ("SELECT k, count(*) FROM (SELECT k FROM f UNION ALL SELECT grp FROM d) GROUP BY k", False),
    ("WITH w AS (SELECT k FROM f) SELECT count(*) FROM w AS a JOIN w AS b ON a.k = b.k", False),
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) "
     "SELECT n % 2, count(*) FROM r GROUP BY 1", False),
    # a subquery beside a table: as before (SQLite joins it in the scan)
    ("SELECT d.grp, count(*) FROM d JOIN (SELECT k FROM f) AS q ON q.k = d.id GROUP BY d.grp",
     False),
    # errors are SQLite's
    ("SELECT nosuch, count(*) FROM (SELECT k FROM f) GROUP BY 1", False),
]


def test_targeted():
    c = J.connect(os.path.join(J.TMP, "targeted_subquery.db"))
    c.execute("PRAGMA journal_mode=WAL")
    c.executescript(WORLD_SQL)
    c.execute("SELECT par_config('min_rows', 0)")
    fails = []
    for sql, must_merge in TARGETED:
        why = J.check(c, sql)
        if why:
            fails.append("%s\n    %s" % (sql, why))
            continue
        try:
            plan = c.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
        except Exception as e:      # an error SQLite gives too (checked above)
            plan = str(e)
        merged = "\nfrom      the subquery" in plan
        if merged != must_merge:
            fails.append("%s\n    %s merged: %s" % (sql, "not" if must_merge else "", plan))
    c.close()
    assert not fails, "\n".join(fails)


def test_merges_happen():
    """par_explain names the merge and the join or group-by that follows."""
    c = J.connect(os.path.join(J.TMP, "merges.db"))
    c.executescript(WORLD_SQL)
    plan = c.execute("SELECT par_explain(?, 'verbose')", (TARGETED[0][0],)).fetchone()[0]
    c.close()
    assert "from      the subquery in FROM merged" in plan, plan
    assert "rewritten SQL: SELECT grp" not in plan and "rewritten SQL: SELECT d.grp" in plan, plan
    assert "hash join" in plan and "group by  d.grp" in plan, plan


def run_generated(label, seed_off, gen, marker, allowed=None):
    """Check gen(world, rng)'s queries over WORLDS // 2 worlds (seeds SEED +
    seed_off + k): each natively and as a view at 1, 2 and 3 threads.
    gen returns (sql, the FROM clause whose join size decides whether the
    query is drawn again, whether the rewrite may apply).  Counts in STATS
    the cases and those whose par_explain holds marker; fails on a
    difference, on the marker where the rewrite may not apply, and (not
    under ASan) when no case shows the marker."""
    fails, n, hit, wrong = [], 0, 0, []
    for k in range(max(1, WORLDS // 2)):
        w = J.World(SEED + seed_off + k)
        rng = random.Random("%s %d" % (label, k))
        for case in range(CASES):
            sql, frm, ok = gen(w, rng)
            if J.join_rows(w.conn, frm, "") is None:
                continue
            try:
                plan = w.conn.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
            except Exception:
                plan = ""
            done = marker in plan
            hit += done
            if done and not ok:
                wrong.append(sql)
            n += 1
            why = J.check(w.conn, sql)
            if why:
                fails.append("world %d case %d: %s\n    %s" % (SEED + seed_off + k, case, sql, why))
        w.conn.close()
    STATS[label + ": " + marker.strip().split("\n")[-1][:40]] = hit
    STATS[label + ": cases"] = n
    assert not fails, "%d differ:\n%s" % (len(fails), "\n".join(fails[:6]))
    assert not wrong, "rewritten where it must not be:\n" + "\n".join(wrong[:6])
    assert J.ASAN or hit > 0, (hit, n)


# ---- correlated scalar subqueries of aggregates as derived tables ----------------

SCALAR_E = [  # (expression of the subquery's select list, rewritable)
    ("avg({v})", True), ("sum({z})", True), ("0.5 * avg({v})", True), ("min({k})", True),
    ("max({s})", True), ("sum({v}) + 1", True), ("-max({z})", True), ("avg(DISTINCT {z})", True),
    ("sum({i})", True), ("max({k}) || ''", True),
    ("coalesce(sum({z}), 0)", False), ("count(*)", False), ("total({v})", False),
    ("max({s} COLLATE NOCASE)", False), ("CAST(avg({v}) AS INTEGER)", False),
    ("abs(sum({z}))", False)]
SCALAR_L = ["{z}", "{v}", "{s}", "{k}", "{z} + 0", "'b'", "{i}", "{x}", "2"]
SCALAR_OPS = ["<", "<=", ">", ">=", "=", "==", "<>", "!="]


def gen_scalar_agg_query(w, rng):
    """(SQL, rewritable as far as the text tells): one table or a join whose
    WHERE compares something with a subquery of aggregates over another
    table, correlated by one or two equalities of keys (every type and
    collation), sometimes a filter of its own or a correlated term that is
    no equality; the outer SELECT an order-sensitive aggregate, a GROUP BY,
    or rows in SQLite's order."""
    frm, wheres, r = outer_from(w, rng)
    t2 = rng.choice(w.tables)
    o = J.Ref(t2, "o", True)
    terms = []
    for _ in range(rng.choice([1, 1, 1, 2])):
        ka, kb = rng.choice(r.t.keys), rng.choice(t2.keys)
        terms.append(rng.choice(["%s = %s" % (o.c(kb), r.c(ka)), "%s = %s" % (r.c(ka), o.c(kb)),
                                 "%s == %s" % (o.c(kb), r.c(ka))]))
    ok = True
    if rng.random() < 0.4:
        terms.append(J.table_filter(rng, o))
    if rng.random() < 0.1:
        terms.append("%s < %s" % (o.stem("z"), r.stem("z")))        # correlated: no rewrite
        ok = False
    rng.shuffle(terms)
    e, rewritable = rng.choice(SCALAR_E)
    ok_terms = ok
    ok = ok and rewritable
    e = J.fill(rng, e, [o])
    left = J.fill(rng, rng.choice(SCALAR_L), [r])
    inner_from = "%s AS o" % t2.name
    if rng.random() < 0.25:
        # a join inside: rewritten only for min/max of typed columns (any
        # order of the rows gives them)
        t3 = rng.choice(w.tables)
        inner_from += " JOIN %s AS p ON p.%s = %s" % (t3.name, rng.choice(t3.keys),
                                                      o.c(rng.choice(t2.keys)))
        e = J.fill(rng, rng.choice(["min({v})", "max({z})", "min({i})", "max({s})"]), [o])
        ok = ok_terms
    sub = "%s %s (SELECT %s FROM %s WHERE %s)" % (
        left, rng.choice(SCALAR_OPS), e, inner_from, " AND ".join(terms))
    if rng.random() < 0.1:
        sub = "(SELECT %s FROM %s WHERE %s) < %s" % (e, inner_from, " AND ".join(terms), left)
        ok = False                                                   # (left of the operator)
    wheres = wheres + [sub] + ([J.table_filter(rng, r)] if rng.random() < 0.3 else [])
    rng.shuffle(wheres)
    shape = rng.random()
    if shape < 0.35:
        sql = "SELECT count(*), sum(%s), total(%s), min(%s) FROM %s WHERE %s" % (
            r.stem("v"), r.stem("i"), r.stem("s"), frm, " AND ".join(wheres))
    elif shape < 0.7:
        sql = "SELECT %s, count(*), sum(%s) FROM %s WHERE %s GROUP BY 1%s" % (
            r.c("k"), r.stem("v"), frm, " AND ".join(wheres),
            rng.choice(["", " ORDER BY 2 DESC, 1"]))
    else:
        sql = "SELECT %s, %s FROM %s WHERE %s%s" % (
            r.c("k"), r.stem("v"), frm, " AND ".join(wheres),
            rng.choice(["", " ORDER BY 2 LIMIT 7", " ORDER BY 1 DESC"]))
    return sql, ok


def test_scalar_aggregates_as_groups():
    """x op (SELECT agg FROM t2 WHERE t2.a = y ...) as a join with the groups
    of t2 (par_explain: "where     a correlated subquery"): SQLite's rows at
    1, 2 and 3 threads over the worlds' keys (mixed storage classes,
    collations, NULLs, empty tables), REAL sums in the order SQLite makes
    them; the shapes that must not be rewritten are not."""
    def gen(w, rng):
        sql, ok = gen_scalar_agg_query(w, rng)
        return sql, sql.split(" FROM ", 1)[1].split(" WHERE ")[0], ok
    run_generated("scalar aggregate subquery", 1300, gen, "\nwhere     a correlated subquery")


SCALAR_WORLD_SQL = """
CREATE TABLE e(k INT, s TEXT, sn TEXT COLLATE NOCASE, v REAL, z INT, b);
INSERT INTO e VALUES (1, 'a', 'A', 0.1, 1, 1), (1, 'b', 'b', 1e16, 2, '1'), (1, 'B', 'a', -1e16, 3, 1.0),
                     (NULL, 'c', 'c', 2.5, 3, NULL), (3, '3', 'a', 0.25, 4, 'x'), ('x', NULL, NULL, 5, 5, 2),
                     (4.0, 'A', 'B', NULL, 6, 3), (2, 'c', 'C', 7.5, NULL, 4);
CREATE TABLE ei(k INT, v REAL); CREATE INDEX ei_k ON ei(k);
INSERT INTO ei SELECT k, v FROM e;
CREATE TABLE empty(k INT, v REAL, z INT);
"""

# (SQL, True when it must be rewritten)
SCALAR_TARGETED = [
    # TPC-H's Q17: an order-sensitive REAL sum over the rows that pass
    ("SELECT sum(v), count(*) FROM f WHERE v < (SELECT 2 * avg(v) FROM e WHERE e.k = f.k)", True),
    ("SELECT k, sum(v) FROM f WHERE z >= (SELECT avg(z) FROM e WHERE f.k = e.k) GROUP BY k", True),
    # NULL keys, keys no group has, an empty table: rows dropped
    ("SELECT count(*) FROM f WHERE v > (SELECT min(v) FROM empty WHERE empty.k = f.k)", True),
    ("SELECT id, k FROM f WHERE z = (SELECT max(z) FROM e WHERE e.k = f.k) ORDER BY k, id", True),
    # two correlated columns
    ("SELECT id FROM f WHERE z <= (SELECT sum(z) FROM e WHERE e.k = f.k AND e.s = f.s) ORDER BY id",
     True),
    # the subquery's own filter
    ("SELECT k, count(*) FROM f WHERE v <> (SELECT avg(v) FROM e WHERE e.k = f.k AND e.z > 1) "
     "GROUP BY k", True),
    # a TEXT column compared with a number: TEXT affinity converts the
    # subquery's value ("+" keeps that), a BLOB column's not
    ("SELECT id, s FROM f WHERE s < (SELECT max(z) FROM e WHERE e.k = f.k) ORDER BY id", True),
    ("SELECT count(*) FROM f WHERE s = (SELECT max(b) FROM e WHERE e.k = f.k)", True),
    ("SELECT count(*) FROM f WHERE k = (SELECT min(b) FROM e WHERE e.k = f.k)", True),
    # text min/max compared under the outer column's collation
    ("SELECT id FROM f WHERE sn = (SELECT max(s) FROM e WHERE e.k = f.k) ORDER BY id", True),
    ("SELECT id FROM f WHERE s || '' = (SELECT max(sn) FROM e WHERE e.k = f.k) ORDER BY id", True),
    # not rewritten: count (0 over no rows), coalesce, the subquery on the
    # left, a correlated non-equality, an index on the key, NOCASE keys,
    # TEXT against INTEGER keys
    ("SELECT count(*) FROM f WHERE z > (SELECT count(*) FROM e WHERE e.k = f.k)", False),
    ("SELECT count(*) FROM f WHERE z > (SELECT coalesce(sum(z), 0) FROM e WHERE e.k = f.k)", False),
    ("SELECT count(*) FROM f WHERE (SELECT avg(z) FROM e WHERE e.k = f.k) < z", False),
    ("SELECT count(*) FROM f WHERE z > (SELECT avg(z) FROM e WHERE e.k = f.k AND e.z < f.z)", False),
    ("SELECT sum(v) FROM f WHERE v < (SELECT avg(v) FROM ei WHERE ei.k = f.k)", False),
    ("SELECT count(*) FROM f WHERE z > (SELECT avg(z) FROM e WHERE e.sn = f.sn)", False),
    ("SELECT count(*) FROM f WHERE z > (SELECT avg(z) FROM e WHERE e.s = f.k)", False),
]


def test_scalar_aggregates_targeted():
    c = J.connect(os.path.join(J.TMP, "scalar.db"))
    c.execute("PRAGMA journal_mode=WAL")
    c.executescript(WORLD_SQL + SCALAR_WORLD_SQL)
    c.execute("SELECT par_config('min_rows', 0)")
    fails = []
    for sql, want in SCALAR_TARGETED:
        why = J.check(c, sql)
        plan = c.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
        done = "\nwhere     a correlated subquery" in plan
        if why or want != done or (done and "hash join" not in plan):
            fails.append("%s\n    %s\n    %s" % (sql, why, plan))
    c.close()
    assert not fails, "\n".join(fails)


# ---- subqueries in FROM joined with tables ------------------------------------------

DERIVED_COLS = ["count(*) AS n", "sum({z}) AS sz", "total({v}) AS tv", "max({s}) AS ms",
                "min({k}) AS mk", "avg({v}) AS av", "sum({z}) * 2 AS sz2", "count({s}) AS ns"]


def gen_derived_query(w, rng):
    """A table (or a join) joined with a subquery in FROM, usually of groups
    (a GROUP BY on a key, aggregates, sometimes HAVING or an expression the
    subquery's final SQL computes), on its key; over it an aggregate, a
    GROUP BY or rows."""
    t = rng.choice(w.tables)
    r = J.Ref(t, "a", True)
    t2 = rng.choice(w.tables)
    o = J.Ref(t2, "o", True)
    kb = rng.choice(t2.keys)
    cols = rng.sample(DERIVED_COLS, rng.randint(1, 3))
    cols = [J.fill(rng, c, [o]) for c in cols]
    where = (" WHERE " + J.table_filter(rng, o)) if rng.random() < 0.4 else ""
    having = " HAVING count(*) > 1" if rng.random() < 0.2 else ""
    if rng.random() < 0.8:
        inner = "SELECT %s AS gk, %s FROM %s AS o%s GROUP BY %s%s" % (
            o.c(kb), ", ".join(cols), t2.name, where, o.c(kb), having)
    else:
        inner = "SELECT %s AS gk, %s AS gz FROM %s AS o%s" % (o.c(kb), o.stem("z"), t2.name, where)
        cols = ["gz"]
    on = rng.choice(["g.gk = %s", "%s = g.gk", "g.gk == %s"]) % r.c(rng.choice(t.keys))
    join = rng.choice(["JOIN (%s) AS g ON %s", "CROSS JOIN (%s) AS g ON %s",
                       ", (%s) AS g WHERE %s"]) % (inner, on)
    filt = [J.table_filter(rng, r)] if rng.random() < 0.3 else []
    if rng.random() < 0.1:
        filt.append("g.gk IS NOT NULL")                             # filters the subquery's rows
    frm = "%s AS a %s" % (t.name, join)
    wh = (" AND " if " WHERE " in join else " WHERE ") + " AND ".join(filt) if filt else ""
    names = [c.split(" AS ")[-1] for c in cols]
    shape = rng.random()
    if shape < 0.35:
        sql = "SELECT count(*), sum(%s), %s FROM %s%s" % (
            r.stem("v"), ", ".join("max(g.%s)" % n for n in names), frm, wh)
    elif shape < 0.7:
        sql = "SELECT g.%s, count(*), sum(%s) FROM %s%s GROUP BY 1%s" % (
            names[0], r.stem("v"), frm, wh, rng.choice(["", " ORDER BY 2 DESC, 1"]))
    else:
        sql = "SELECT %s, %s, g.gk FROM %s%s%s" % (
            r.c("k"), ", ".join("g." + n for n in names), frm, wh,
            rng.choice(["", " ORDER BY 1, 2 LIMIT 9", " ORDER BY 3 DESC"]))
    return sql, frm + wh


def test_derived_tables_in_joins():
    """A subquery in FROM joined with tables runs by its own plan (par_explain:
    "the subquery's rows, by its own plan"), its rows the join's build
    side: SQLite's rows at 1, 2 and 3 threads."""
    def gen(w, rng):
        return gen_derived_query(w, rng) + (True,)
    run_generated("subquery joined", 1700, gen, "the subquery's rows, by its own plan")


# ---- a subquery of groups alone in FROM (TPC-H's Q13) ---------------------------------

GROUPED_AGGS = ["count(*) AS n", "count({s}) AS n", "sum({z}) AS n", "max({z}) AS n",
                "avg({z}) AS n", "min({s}) AS n", "total({v}) AS n"]


def gen_grouped_query(w, rng):
    """An outer SELECT over one subquery of groups: grouped by one of the
    subquery's aggregates (counts, sums, averages: keys of mixed types),
    or aggregates over it, or its rows sorted."""
    if rng.random() < 0.6:
        t = rng.choice(w.tables)
        r = J.Ref(t, "o", True)
        frm, wheres, refs = "%s AS o" % t.name, [], [r]
        if rng.random() < 0.4:
            wheres.append(J.table_filter(rng, r))
    else:
        frm, wheres, refs = J.gen_from(rng, w)
        r = rng.choice(refs)
    key = r.c(rng.choice(r.t.keys))
    agg = J.fill(rng, rng.choice(GROUPED_AGGS), [r])
    inner = "SELECT %s AS gk, %s, sum(%s) AS sv FROM %s%s GROUP BY %s%s" % (
        key, agg, r.stem("v"), frm, " WHERE " + " AND ".join(wheres) if wheres else "", key,
        " HAVING count(*) > 1" if rng.random() < 0.2 else "")
    shape = rng.random()
    if shape < 0.5:
        sql = "SELECT n, count(*) AS c%s FROM (%s) AS g GROUP BY n%s" % (
            rng.choice(["", ", sum(sv)", ", max(gk)"]), inner,
            rng.choice(["", " ORDER BY c DESC, n DESC", " ORDER BY 1"]))
    elif shape < 0.75:
        sql = "SELECT count(*), sum(n), max(gk)%s FROM (%s) AS g" % (
            rng.choice(["", ", total(sv)"]), inner)
    else:
        sql = "SELECT gk, n FROM (%s) AS g ORDER BY n DESC, gk%s" % (inner, J.limit(rng))
    return sql, frm + (" WHERE " + " AND ".join(wheres) if wheres else "")


def test_grouped_subquery_alone():
    """A subquery of groups alone in FROM runs by its own plan (par_explain:
    "from      subquery"), the outer SELECT's operators over its rows:
    SQLite's rows at 1, 2 and 3 threads."""
    def gen(w, rng):
        return gen_grouped_query(w, rng) + (True,)
    run_generated("subquery of groups alone", 2100, gen, "\nfrom      subquery g")


# ---- x IN (SELECT y ...) as a join ---------------------------------------------------

def gen_in_query(w, rng):
    """One table or a join whose WHERE holds x IN (SELECT y FROM t2 ...):
    keys of every type and collation on both sides (the rewrite keeps to
    one affinity class under BINARY), duplicates and NULLs in the list,
    a filter, DISTINCT or a GROUP BY inside, a subquery of its own in
    there; the outer SELECT an order-sensitive aggregate, a GROUP BY, or
    rows in SQLite's order."""
    frm, wheres, r = outer_from(w, rng)
    t2 = rng.choice(w.tables)
    o = J.Ref(t2, "o", True)
    x = rng.choice([r.c(rng.choice(r.t.keys)), r.c(rng.choice(r.t.keys)), r.stem("z")])
    y = rng.choice([o.c(rng.choice(t2.keys)), o.stem("z")])
    inner = "SELECT %s%s FROM %s AS o" % (rng.choice(["", "", "DISTINCT "]), y, t2.name)
    f = []
    if rng.random() < 0.5:
        f.append(J.table_filter(rng, o))
    if rng.random() < 0.2:
        f.append("%s IN (SELECT %s FROM %s)" % (o.stem("z"), rng.choice(["z1", "1", "2"]),
                                              rng.choice(w.tables).name))
    if f:
        inner += " WHERE " + " AND ".join(f)
    if rng.random() < 0.15:
        inner += " GROUP BY %s" % y
    wheres = wheres + ["%s IN (%s)" % (x, inner)]
    if rng.random() < 0.3:
        wheres.append(J.table_filter(rng, r))
    rng.shuffle(wheres)
    shape = rng.random()
    if shape < 0.35:
        return "SELECT count(*), sum(%s), min(%s) FROM %s WHERE %s" % (
            r.stem("v"), r.stem("s"), frm, " AND ".join(wheres))
    if shape < 0.7:
        return "SELECT %s, count(*), sum(%s) FROM %s WHERE %s GROUP BY 1%s" % (
            r.c("k"), r.stem("v"), frm, " AND ".join(wheres),
            rng.choice(["", " ORDER BY 2 DESC, 1"]))
    return "SELECT %s, %s FROM %s WHERE %s ORDER BY 2%s" % (
        r.c("k"), r.stem("v"), frm, " AND ".join(wheres), J.limit(rng))


def test_in_as_join():
    """x IN (SELECT y ...) as a join with the subquery's distinct values
    (par_explain: "where     x IN (SELECT y ...)"): SQLite's rows at 1, 2
    and 3 threads."""
    def gen(w, rng):
        sql = gen_in_query(w, rng)
        return sql, sql.split(" FROM ", 1)[1].split(" WHERE ")[0], True
    run_generated("IN as a join", 2500, gen, "\nwhere     x IN (SELECT y")


# ---- uncorrelated scalar subqueries computed once ------------------------------

BOUND_E = [  # (the subquery's one result expression, computed once and bound)
    ("avg({v})", True), ("count(*)", True), ("max({s})", True), ("total({v})", True),
    ("sum({z}) * 0.5", True), ("-min({z})", True), ("abs(sum({z}))", True),
    ("coalesce(max({k}), 0)", True), ("min({s}) || 'x'", True), ("count(*) > 3", True),
    ("sum({z}) + abs(-9223372036854775808)", True),       # fails: SQLite runs it
    ("{k}", False), ("CAST(avg({v}) AS INTEGER)", False), ("max({s} COLLATE NOCASE)", False),
    ("({z})", False)]


def gen_bound_query(w, rng):
    """(SQL, FROM, computed once as far as the text tells): one table or a
    join whose WHERE or HAVING compares with a subquery over another table
    that names nothing outside it (every type and collation on both
    sides, an empty table, a failing expression, a filter inside, a
    column of affinity or COLLATE: not rewritten); aggregates, GROUP BY,
    or rows in SQLite's order."""
    frm, wheres, r = outer_from(w, rng)
    t2 = rng.choice(w.tables)
    o = J.Ref(t2, "o", True)
    e, ok = rng.choice(BOUND_E)
    e = e.format(v=o.stem("v"), s=o.stem("s"), z=o.stem("z"), k=o.c(rng.choice(t2.keys)))
    sub = "(SELECT %s FROM %s AS o%s)" % (
        e, t2.name, " WHERE " + J.table_filter(rng, o) if rng.random() < 0.4 else "")
    lhs = rng.choice([r.stem("z"), r.stem("v"), r.stem("s"), r.c(rng.choice(r.t.keys)), "2"])
    op = rng.choice(SCALAR_OPS)
    term = rng.choice(["%s %s %s" % (lhs, op, sub), "%s %s %s" % (sub, op, lhs)])
    shape = rng.random()
    if shape < 0.3:
        wheres = wheres + [term]
        if rng.random() < 0.3:
            wheres.append(J.table_filter(rng, r))
        rng.shuffle(wheres)
        sql = "SELECT %s, count(*), sum(%s) FROM %s WHERE %s GROUP BY 1%s" % (
            r.c("k"), r.stem("v"), frm, " AND ".join(wheres),
            rng.choice(["", " ORDER BY 2 DESC, 1"]))
    elif shape < 0.55:
        wheres = wheres + [term]
        rng.shuffle(wheres)
        sql = "SELECT %s, %s FROM %s WHERE %s ORDER BY 2%s" % (
            r.c("k"), r.stem("v"), frm, " AND ".join(wheres), J.limit(rng))
    else:
        agg = rng.choice(["sum(%s)" % r.stem("z"), "count(*)", "max(%s)" % r.stem("s"),
                          "total(%s)" % r.stem("v")])
        cmp_ = rng.choice(["%s %s %s" % (agg, op, sub), "%s %s %s" % (sub, op, agg)])
        sql = "SELECT %s, count(*), total(%s) FROM %s%s GROUP BY 1 HAVING %s%s" % (
            r.c("k"), r.stem("v"), frm, " WHERE " + " AND ".join(wheres) if wheres else "",
            cmp_, rng.choice(["", " ORDER BY 3, 1"]))
    return sql, frm, ok


def test_scalar_subqueries_bound():
    """Uncorrelated scalar subqueries in WHERE and HAVING computed once
    before the scan and bound as values (par_explain: "computed once
    before each scan"), only where their value has no affinity: SQLite's
    rows (and errors) at 1, 2 and 3 threads."""
    run_generated("scalar bound", 2800, gen_bound_query, "computed once before each scan")


def test_scalar_subqueries_by_their_plan_in_context():
    """The two worlds of SUBQUERY_SEED=21 where SQLite runs an uncorrelated
    subquery through an automatic partial index in some statements and
    scans its table in others, so that its answer (a first row of several,
    a REAL total) depends on the statement: the final SQL over the grouped
    rows, a worker's range.  A subquery whose loops differ there stays out
    of the final SQL and is not computed alone; a scalar subquery SQLite
    runs through an automatic index keeps the SELECT native (plan.c
    planSubqueriesSame, planAutomaticScalar).  Found by a helper's stress
    run (worlds 2821 and 2822 differed; the old code too)."""
    fails = []
    for k in (0, 1):
        w = J.World(21 + 2800 + k)
        rng = random.Random("scalar bound %d" % k)
        for case in range(CASES):
            sql, frm, ok = gen_bound_query(w, rng)
            if J.join_rows(w.conn, frm, "") is None:
                continue
            why = J.check(w.conn, sql)
            if why:
                fails.append("world %d case %d: %s\n    %s" % (21 + 2800 + k, case, sql, why))
        w.conn.close()
    assert not fails, "%d differ:\n%s" % (len(fails), "\n".join(fails[:6]))


# ---- common table expressions written where they are used --------------------

def gen_with_query(w, rng):
    """(SQL, FROM, inlined as far as the text tells): a WITH of one or two
    common table expressions (a GROUP BY, a filter, a column list or
    aliases, the second reading the first) used once or twice: joined
    with a table, alone in FROM, in a scalar subquery compared in WHERE
    (TPC-H's Q15 shape); a column list over aliased items is left alone."""
    t1, t2 = rng.choice(w.tables), rng.choice(w.tables)
    o = J.Ref(t2, "o", True)
    k2, v2, z2 = o.c(rng.choice(t2.keys)), o.stem("v"), o.stem("z")
    filt = " WHERE " + J.table_filter(rng, o) if rng.random() < 0.4 else ""
    shape = rng.random()
    ok = True
    if shape < 0.4:
        body = "c1(ck, cv) AS (SELECT %s, %s FROM %s AS o%s GROUP BY 1)" % (
            k2, rng.choice(["sum(%s)" % v2, "total(%s)" % v2, "count(*)", "max(%s)" % z2]),
            t2.name, filt)
    elif shape < 0.7:
        body = "c1 AS (SELECT %s AS ck, %s AS cv FROM %s AS o%s)" % (k2, v2, t2.name, filt)
    elif shape < 0.85:
        body = "c1(ck, cv) AS (SELECT %s, %s + 1 FROM %s AS o%s)" % (k2, z2, t2.name, filt)
    else:
        body = "c1(ck, cv) AS (SELECT %s AS x, %s FROM %s AS o%s)" % (k2, v2, t2.name, filt)
        ok = False
    ctes = [body]
    src = "c1"
    if rng.random() < 0.3:
        ctes.append("c2 AS (SELECT ck, cv FROM c1 WHERE cv IS NOT NULL)")
        src = "c2"
    a = J.Ref(t1, "a", True)
    form = rng.random()
    if form < 0.35:
        extra = (" AND c.cv = (SELECT max(cv) FROM %s)" % src) if rng.random() < 0.6 else ""
        main = "SELECT %s, c.cv FROM %s AS a, %s AS c WHERE c.ck = %s%s ORDER BY 1, 2" % (
            a.c("k"), t1.name, src, a.c(rng.choice(t1.keys)), extra)
        frm = "%s AS a" % t1.name
    elif form < 0.6:
        main = "SELECT %s, count(*), sum(c.cv) FROM %s AS a JOIN %s AS c ON c.ck = %s GROUP BY 1" % (
            a.c("k"), t1.name, src, a.c(rng.choice(t1.keys)))
        frm = "%s AS a" % t1.name
    elif form < 0.8:
        main = "SELECT ck, cv FROM %s ORDER BY cv, ck%s" % (src, J.limit(rng))
        frm = "%s AS o" % t2.name
    else:
        main = ("SELECT %s, %s FROM %s AS a WHERE %s > (SELECT avg(cv) FROM %s) ORDER BY 1, 2"
                % (a.c("k"), a.stem("v"), t1.name, a.stem("v"), src))
        frm = "%s AS a" % t1.name
    return "WITH %s %s" % (", ".join(ctes), main), frm, ok


def test_with_inlined():
    """WITH's common table expressions written as subqueries where they
    are used (par_explain: "from      the WITH clause's common table
    expressions"), each then planned as any subquery: SQLite's rows at 1,
    2 and 3 threads."""
    run_generated("WITH inlined", 3100, gen_with_query, "the WITH clause's common table")


# ---- correlated subqueries over a join, as filters of the joined rows ---------

CORR_E = ["count(*)", "total({v})", "coalesce(max({z}), 0)", "min({v})", "sum({z}) + 1",
          "max({s})", "avg({v})"]


def gen_corr_query(w, rng):
    """(SQL, FROM, True): a join of two tables by their keys whose WHERE
    compares an unqualified column with a correlated subquery over a third
    table (TPC-H's Q2 shape: its aggregate may be one the decorrelation
    does not take), or holds [NOT] EXISTS correlated by a non-equality;
    the outer SELECT in SQLite's order, or grouped."""
    t1, t2, t3 = rng.choice(w.tables), rng.choice(w.tables), rng.choice(w.tables)
    a, b, o = J.Ref(t1, "a", True), J.Ref(t2, "b", True), J.Ref(t3, "o", True)
    frm = "%s AS a JOIN %s AS b ON b.%s = a.%s" % (t1.name, t2.name, rng.choice(t2.keys),
                                                   rng.choice(t1.keys))
    outer_z, outer_v = t1.col("z"), rng.choice([t1.col("v"), t2.col("v")])
    e = rng.choice(CORR_E).format(v=o.stem("v"), z=o.stem("z"), s=o.stem("s"))
    inner_where = "%s = %s" % (o.c(rng.choice(t3.keys)), rng.choice([outer_z, t1.col("z")]))
    if rng.random() < 0.4:
        inner_where += " AND " + J.table_filter(rng, o)
    if rng.random() < 0.25:
        term = "%sEXISTS (SELECT 1 FROM %s AS o WHERE %s < %s)" % (
            rng.choice(["", "NOT "]), t3.name, o.stem("z"), outer_z)
    else:
        term = "%s %s (SELECT %s FROM %s AS o WHERE %s)" % (
            outer_v, rng.choice(SCALAR_OPS), e, t3.name, inner_where)
    if rng.random() < 0.5:
        return ("SELECT a.k, b.k, %s FROM %s WHERE %s ORDER BY 1, 2%s" % (
            outer_v, frm, term, J.limit(rng)), frm, True)
    return ("SELECT a.k, count(*), sum(b.%s) FROM %s WHERE %s GROUP BY 1" % (
        t2.col("v"), frm, term), frm, True)


def test_correlated_filters_over_joins():
    """A term with a correlated subquery over a join, left as written, is a
    filter SQLite evaluates over the joined rows, the SELECT's columns
    under their own names (par_explain: "filter:" under the join): SQLite's
    rows at 1, 2 and 3 threads."""
    run_generated("correlated filter", 3400, gen_corr_query, "\n  filter: ")


def report():
    print("queries by par_explain outcome (information only):")
    for kind, n in sorted(STATS.items(), key=lambda kv: (-kv[1], kv[0])):
        print("  %5d  %s" % (n, kind))


if __name__ == "__main__":
    if J.REPLAY_SEED is not None:
        os.environ["HARNESS_ONLY"] = "test_random_subqueries"
    sys.exit(run("test_subquery", globals(), after=report))
