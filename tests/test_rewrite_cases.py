#!/usr/bin/python3
"""The planner rewrites of plan_flatten.c (a subquery in FROM or a
WITH used once merged into the outer SELECT; [NOT] EXISTS correlated by one
equality as [NOT] IN), plan.c's uncorrelated subqueries kept whole, and
joins computing columns over several tables -- the inputs a review found
where a parallel view's answer differed from SQLite's.

    /usr/bin/python3 tests/test_rewrite_cases.py ./parallel.so       # a few seconds

Each test makes a small WAL database, runs its SELECTs natively and as a
parallel view at 1, 2 and 3 threads with min_rows 0 (test_join.py's
check: the same rows in the same order, storage classes, REAL bits, or
the same error) and lists every SQL that differs.

Tests (each failed on the code it was written against):
  test_exists_as_in_keeps_the_outer_scan      EXISTS as IN over an indexed outer column
  test_merge_keyword_alias_captured           an outer alias "key" that f has as a column
  test_merge_double_quoted_string_collation   "A" as a subquery column loses BINARY
  test_subquery_double_quoted_outer_column    (SELECT ... "g") taken as uncorrelated
  test_where_subquery_over_rtrim_text         NOT EXISTS over a table with RTRIM text:
                                              SQLite's answer differs by rowid range
  test_parameters_inside_subqueries_run_by_their_own_plan
                                              :m, :zz inside rewritten subqueries
  test_group_by_with_the_rowid_not_first      GROUP BY s, id: SQLite's groups in rowid order
  test_where_terms_before_on_terms            a failing scalar subquery in WHERE, an ON term
                                              false on every row: SQLite's error
  test_failing_subquery_as_the_probe_key_of_an_empty_table
                                              a failing subquery SQLite evaluates as a
                                              lookup key, the table empty: SQLite's error

Open cases (open_*: found by a stress run, not passed yet, so not run;
REWRITE_OPEN=1 runs them as tests too):
  open_failing_subquery_after_a_filter_the_extraction_plans_first
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_join as J                       # noqa: E402  (its check and connect)
from harness import run                     # noqa: E402

# f: 300 rows; k has an index; v REALs whose sum depends on their order;
# "key" a column named as a keyword SQLite takes as a name.
WORLD_SQL = """
CREATE TABLE f(id INTEGER PRIMARY KEY, k INT, s TEXT, v REAL, z INT, "key" INT, g INT);
CREATE INDEX fk ON f(k);
INSERT INTO f(k, s, v, z, "key", g) SELECT (value * 7) % 5, char(97 + value % 3),
       CASE value % 4 WHEN 0 THEN 0.1 WHEN 1 THEN 1e16 WHEN 2 THEN -1e16 ELSE 0.3 END,
       value % 6, value % 3, value % 2
  FROM (WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n
                                    WHERE value < 300) SELECT value FROM n);
CREATE TABLE e(k INT, s TEXT, z INT);
INSERT INTO e VALUES (1, 'a', 1), (3, 'b', 2), (NULL, 'c', 3), (4.0, 'A', 4);
"""


def world(name, sql=WORLD_SQL):
    c = J.connect(os.path.join(J.TMP, name + ".db"))
    c.execute("PRAGMA journal_mode=WAL")
    c.executescript(sql)
    c.execute("SELECT par_config('min_rows', 0)")
    return c


def check_all(c, sqls):
    fails = []
    for sql in sqls:
        why = J.check(c, sql)
        if why:
            fails.append("%s\n    %s" % (sql, why))
    c.close()
    assert not fails, "\n".join(fails)


def test_exists_as_in_keeps_the_outer_scan():
    """EXISTS as IN over an outer column with an index: SQLite reads the
    outer table through the index for the IN list (SEARCH f USING INDEX
    fk), another order than the EXISTS query's rowid scan, so group_concat,
    REAL sums and ORDER BY ties differ."""
    check_all(world("exists_index"), [
        "SELECT g, sum(v), group_concat(id) FROM f WHERE EXISTS "
        "(SELECT 1 FROM e WHERE e.k = f.k) GROUP BY g",
        "SELECT sum(v), group_concat(id) FROM f WHERE EXISTS (SELECT 1 FROM e WHERE e.k = f.k)",
        "SELECT id, v FROM f WHERE EXISTS (SELECT 1 FROM e WHERE e.k = f.k) ORDER BY v LIMIT 5"])


def test_merge_keyword_alias_captured():
    """An outer alias spelt as a keyword SQLite takes as a name (key) that a
    table of the subquery has as a column: once merged, GROUP BY key and
    WHERE key name f.key, not the alias."""
    check_all(world("keyword_alias"), [
        "SELECT x AS key, count(*) FROM (SELECT g AS x, v FROM f) GROUP BY key",
        "SELECT x AS key, sum(v) FROM (SELECT g AS x, v FROM f) WHERE key > 0 GROUP BY 1"])


NOCASE_SQL = """
CREATE TABLE t(id INTEGER PRIMARY KEY, sn TEXT COLLATE NOCASE, s TEXT, z INT, v REAL);
INSERT INTO t(sn, s, z, v) VALUES ('a', 'a', 1, 0.1), ('A', 'A', 2, 1e16), ('b', 'B', 3, -1e16),
                                  ('B', 'b', 4, 0.3), (NULL, NULL, 5, NULL), ('a', 'x', 6, 2.5);
"""


def test_merge_double_quoted_string_collation():
    """A double-quoted name that names no column is a string ("A"): as a
    subquery column SQLite gives it BINARY, so x = sn compares under
    BINARY; merged as if it were a column, "A" = sn takes sn's NOCASE."""
    check_all(world("dqs", NOCASE_SQL), [
        'SELECT count(*), sum(z) FROM (SELECT "A" AS x, sn, z FROM t) WHERE x = sn',
        'SELECT count(*), sum(z) FROM (SELECT "A" AS x, sn, z FROM t) WHERE sn = x'])


def test_subquery_double_quoted_outer_column():
    """A subquery in the select list or HAVING that names a column of the
    outer SELECT in double quotes ("g") prepares alone (there "g" is a
    string), so it is taken as uncorrelated and goes whole into the final
    SQL over par_rows, where "g" is the string 'g' again, not f.g."""
    check_all(world("dq_correlated"), [
        'SELECT g, (SELECT count(*) FROM e WHERE e.k <= "g") AS q, count(*) FROM f GROUP BY g',
        'SELECT g, count(*) FROM f GROUP BY g HAVING count(*) > '
        '(SELECT count(*) FROM e WHERE e.k < "g") * 100'])


def test_where_subquery_over_rtrim_text():
    """SQLite 3.40 looks RTRIM text up in an automatic index through a Bloom
    filter that hashes its length ('a ' misses 'a'), where the correlated
    subquery's loop builds one: whether it does depends on the rows read,
    so each rowid range of the extraction got an answer of its own
    (found by test_subquery.py, seed 4242 x5).  Native, and not rewritten
    as NOT IN (SQLite's answer changes with the plan)."""
    c = world("rtrim", """
        CREATE TABLE t1(x1 BLOB, s1 TEXT COLLATE RTRIM, k INT, z1 INT);
        INSERT INTO t1 SELECT CASE value % 4 WHEN 0 THEN value % 9 WHEN 1 THEN 'a'
                                WHEN 2 THEN 9007199254740993 ELSE NULL END,
                              CASE value % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'a ' ELSE 'b' END,
                              value % 3, value % 5
          FROM (WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n
                                            WHERE value < 400) SELECT value FROM n);""")
    sqls = ["SELECT a.k, count(*), sum(a.z1) FROM t1 AS a WHERE NOT EXISTS "
            "(SELECT 1 FROM t1 AS o WHERE a.x1 = o.x1 AND o.s1 = 'a') GROUP BY 1",
            "SELECT a.k, count(*) FROM t1 AS a WHERE a.z1 < "
            "(SELECT avg(o.z1) FROM t1 AS o WHERE o.x1 = a.x1 AND o.s1 = 'a') GROUP BY 1"]
    for sql in sqls:
        plan = c.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
        assert plan.startswith("native:") and "RTRIM" in plan, plan
    check_all(c, sqls)


def test_parameters_inside_subqueries_run_by_their_own_plan():
    """Parameters inside a correlated aggregate subquery, an IN (SELECT)
    and a grouped subquery in FROM, each of which runs by its own plan
    (the planner's texts keep the SELECT's :par_p<i> names, bound from the
    view's values): each view's rows equal the SELECT's with the same
    values, for two sets of values, and par_explain names the rewrite."""
    c = world("params", """
        CREATE TABLE f(id INTEGER PRIMARY KEY, k INT, v REAL, z INT);
        CREATE TABLE e(k INT, v REAL, z INT);
        INSERT INTO f(k, v, z) SELECT value % 7, (value % 13) * 0.1, value % 5
          FROM (WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n
                                            WHERE value < 500) SELECT value FROM n);
        INSERT INTO e(k, v, z) SELECT value % 9, (value % 11) * 0.3, value % 4
          FROM (WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n
                                            WHERE value < 300) SELECT value FROM n);""")
    cases = [
        ("SELECT count(*), sum(v) FROM f WHERE v < (SELECT :m * avg(v) FROM e "
         "WHERE e.k = f.k AND e.z <> :zz)", "where     a correlated subquery"),
        ("SELECT k, count(*), sum(v) FROM f WHERE k IN (SELECT k FROM e WHERE z = :zz) GROUP BY k",
         "where     x IN (SELECT y"),
        ("SELECT n, count(*) FROM (SELECT k, count(*) AS n FROM f WHERE z < :zz GROUP BY k) AS g "
         "GROUP BY n", "from      subquery g"),
    ]
    bad = []
    for sql, marker in cases:
        plan = c.execute("SELECT par_explain(?)", (sql,)).fetchone()[0]
        if marker not in plan:
            bad.append("%s\n    not rewritten: %s" % (sql, plan))
        c.execute("CREATE VIRTUAL TABLE temp.pv USING parallel(%s)" % J.quote(sql))
        names = [r[1].lstrip(":") for r in c.execute("PRAGMA table_xinfo(pv)") if r[6]]
        for values in ({"m": 0.5, "zz": 1}, {"m": 2, "zz": 3}):
            want = c.execute(sql, {n: values[n] for n in names}).fetchall()
            for t in J.THREADS:
                c.execute("SELECT par_config('threads', ?)", (t,))
                got = c.execute("SELECT * FROM pv(%s)" % ", ".join("?" * len(names)),
                                [values[n] for n in names]).fetchall()
                if got != want:
                    bad.append("%s %s threads %d\n    native %s\n    view   %s"
                               % (sql, values, t, want, got))
        c.execute("SELECT par_config('threads', 0)")
        c.execute("DROP TABLE temp.pv")
    c.close()
    assert not bad, "\n".join(bad)


def test_group_by_with_the_rowid_not_first():
    """GROUP BY s, id (id the INTEGER PRIMARY KEY, not the first key): SQLite
    reads "SCAN g" without a sorter, each row its own group, in rowid order;
    the view returned the groups sorted by (s, id) (plan.c buildGroupOrder
    took a rowid scan without a sorter for the keys' order)."""
    c = world("group_rowid", """
        CREATE TABLE g(id INTEGER PRIMARY KEY, k INTEGER, s TEXT, v REAL);
        INSERT INTO g(k, s, v) VALUES (1, 'a', 0.1), (1, 'b', 1e16), (2, 'a', -1e16),
                                      (NULL, 'c', 3), (0, 'a', 4), (1, 'a', 5);""")
    check_all(c, [
        "SELECT k, id, count(*), sum(v) FROM g GROUP BY k, id",
        "SELECT s, id, count(*) FROM g GROUP BY s, id",
        "SELECT s, count(*) FROM g WHERE k > 0 GROUP BY s, id",
        "SELECT s, count(*) FROM g GROUP BY s, id LIMIT 2",
        "SELECT id, s, count(*) FROM g GROUP BY id, s",
    ])


def test_where_terms_before_on_terms():
    """An ON term false on every row of b (b.z < 0) and a WHERE term whose
    scalar subquery fails (malformed JSON, integer overflow): SQLite appends
    the ON clause to the WHERE clause, so tests the WHERE term first and
    fails; b's scan tested the ON term first and the view returned 0 (found
    by a random stress run; plan_join.c joinConditions)."""
    c = world("where_on", """
        CREATE TABLE a(k INT, z INT);
        CREATE TABLE b(d INT, z INT);
        INSERT INTO a VALUES (1, 1), (2, 2);
        INSERT INTO b VALUES (1, 1), (2, 2);""")
    check_all(c, [
        "SELECT count(*) FROM a JOIN b ON a.k = b.d AND b.z < 0 WHERE b.z = (SELECT json('x'))",
        "SELECT a.k, count(*) FROM a JOIN b ON a.k = b.d AND b.z < 0 "
        "WHERE b.z = (SELECT json('x')) GROUP BY a.k",
        "SELECT count(*) FROM a JOIN b ON a.k = b.d AND a.z < 0 "
        "WHERE a.z = (SELECT abs(-9223372036854775807 - 1))",
        "SELECT count(*) FROM a JOIN b ON a.k = b.d WHERE b.z < 0 AND b.z = (SELECT json('x'))",
        "SELECT count(*) FROM a JOIN b ON a.k = b.d AND b.z > 0 WHERE b.z = (SELECT 1)",
    ])


def test_failing_subquery_as_the_probe_key_of_an_empty_table():
    """b empty, a term b.z = (SELECT json('x') FROM a): SQLite searches b
    by an automatic index on (z, k), evaluating the subquery as the probe
    key for each row of a, and fails; b's scan reads no rows, so never
    evaluated the term, and the view returned no rows (the join took a's
    loop over index ak: plan_join.c joinIndexOrder).  A subquery left in
    WHERE now keeps such a SELECT native (plan.c buildCanDefer), as before
    the index order."""
    c = world("probe_key_empty", """
        CREATE TABLE a(id INTEGER PRIMARY KEY, k INT, v REAL, z INT);
        CREATE TABLE b(k INT, d INT, z INT);
        CREATE INDEX ak ON a(k, v);
        INSERT INTO a(k, v, z) VALUES (2, 0.5, 1), (1, 1e16, 2), (1, 0.1, 3);""")
    check_all(c, [
        "SELECT a.k, sum(b.z) FROM a JOIN b ON a.k = b.k WHERE b.z = (SELECT json('x') FROM a) "
        "GROUP BY a.k",
    ])


def open_failing_subquery_after_a_filter_the_extraction_plans_first():
    """SQLite (GROUP BY t2.k) loops over t2 first and fails on the term
    t2.z < (SELECT json(...)); the extraction query, the same FROM and WHERE
    without GROUP BY, loops over w first, whose filter w.n <= (SELECT
    avg(n) ...) leaves no rows, so never evaluates the failing term: the
    view returns no rows ("SQLite joins the tables in the scan").  The WITH
    form reaches it since WITH is written where used (plan_flatten.c
    flatUseBodies); the old code ran it natively."""
    c = world("extract_order", """
        CREATE TABLE t1(k INT, z INT);
        CREATE TABLE t2(id INTEGER PRIMARY KEY, k INT, z INT);
        CREATE INDEX t2kz ON t2(k, z);
        INSERT INTO t1 WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n
                                                   WHERE value < 200) SELECT value % 20, value FROM n;
        INSERT INTO t1 VALUES (0, 1);
        INSERT INTO t2(k, z) VALUES (0, 4);""")
    check_all(c, [
        "WITH w AS (SELECT k, count(*) AS n FROM t1 GROUP BY k) SELECT t2.k, count(*) FROM t2 "
        "LEFT JOIN t1 ON t2.k = t1.k JOIN w ON w.k = t2.k WHERE w.n <= (SELECT avg(n) FROM w) "
        "AND t2.z < (SELECT json('x' || count(*)) FROM t1) GROUP BY t2.k",
        "SELECT t2.k, count(*) FROM t2 LEFT JOIN t1 ON t2.k = t1.k JOIN (SELECT k, count(*) AS n "
        "FROM t1 GROUP BY k) AS w ON w.k = t2.k WHERE w.n <= (SELECT avg(n) FROM (SELECT k, "
        "count(*) AS n FROM t1 GROUP BY k)) AND t2.z < (SELECT json('x' || count(*)) FROM t1) "
        "GROUP BY t2.k",
    ])


if __name__ == "__main__":
    ns = dict(globals())
    if os.environ.get("REWRITE_OPEN"):
        ns.update({"test_" + n[5:]: f for n, f in globals().items() if n.startswith("open_")})
    sys.exit(run("test_rewrite_cases", ns))
