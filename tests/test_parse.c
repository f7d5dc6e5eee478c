/*
** test_parse.c: the structure sqlparse.c gives the planner, for SELECTs
** whose expected structure is written out by hand.
**
** 1. FROM as a tree: every source kind, every join operator, ON and USING,
**    parenthesized joins, quoted names and keywords as names, comments.
** 2. Windows: window function calls in the select list and ORDER BY
**    (arguments, FILTER, OVER name or OVER (...)) and WINDOW definitions,
**    with their base window, PARTITION BY, ORDER BY terms (direction,
**    NULLS, COLLATE), frames with expressions and EXCLUDE.
** 3. zWhy stays what the planner has always been told ("a window
**    function", "a WINDOW clause", ...), and the clauses after a WINDOW
**    clause are taken down.
** 4. Every allocation failing in turn: SQLITE_NOMEM or the same structure,
**    nothing leaked (the ASan build checks leaks).
** 5. Random token soup, balanced or not: no crash, every span inside the
**    text and in order.
**
** Each case compares a one-line rendering of the structure (dumpSelect)
** with the expected text; spans are rendered as the text they cover, so
** the expected strings show what a span covers.
*/
#include "check.h"
#include "sqlparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rendering ------------------------------------------------------------- */

static void putSpan(sqlite3_str *pOut, const char *zSql, ParSpan s){
  sqlite3_str_appendf(pOut, "[%.*s]", s.iEnd - s.iStart, zSql + s.iStart);
}

static void putJoin(sqlite3_str *pOut, int e){
  static const struct { int f; const char *z; } a[] = {
    { PAR_JOIN_COMMA, "comma" }, { PAR_JOIN_NATURAL, "natural" },
    { PAR_JOIN_LEFT, "left" }, { PAR_JOIN_RIGHT, "right" },
    { PAR_JOIN_OUTER, "outer" }, { PAR_JOIN_INNER, "inner" },
    { PAR_JOIN_CROSS, "cross" },
  };
  int k, n = 0;
  sqlite3_str_appendall(pOut, "<");
  for(k=0; k<(int)(sizeof(a)/sizeof(a[0])); k++){
    if( e & a[k].f ) sqlite3_str_appendf(pOut, "%s%s", n++ ? "|" : "", a[k].z);
  }
  sqlite3_str_appendall(pOut, "> ");
}

static void putFrom(sqlite3_str *pOut, const char *zSql, const ParFrom *pF){
  int i, k;
  for(i=0; i<pF->nSrc; i++){
    const ParFromSrc *pS = &pF->aSrc[i];
    if( i ){
      sqlite3_str_appendall(pOut, " ");
      putJoin(pOut, pS->eJoin);
    }
    switch( pS->eType ){
      case PAR_SRC_TABLE:
        sqlite3_str_appendf(pOut, "table %s%s%s", pS->zSchema ? pS->zSchema : "",
                            pS->zSchema ? "." : "", pS->zName);
        break;
      case PAR_SRC_FUNC:
        sqlite3_str_appendf(pOut, "func %s%s%s(", pS->zSchema ? pS->zSchema : "",
                            pS->zSchema ? "." : "", pS->zName);
        for(k=0; k<pS->nArg; k++){
          if( k ) sqlite3_str_appendall(pOut, ";");
          putSpan(pOut, zSql, pS->aArg[k]);
        }
        sqlite3_str_appendall(pOut, ")");
        break;
      case PAR_SRC_SUBQUERY:
        sqlite3_str_appendall(pOut, "subquery");
        putSpan(pOut, zSql, pS->inner);
        break;
      case PAR_SRC_GROUP:
        sqlite3_str_appendall(pOut, "group(");
        putFrom(pOut, zSql, pS->pGroup);
        sqlite3_str_appendall(pOut, ")");
        break;
      default:
        sqlite3_str_appendf(pOut, "?%d", pS->eType);
    }
    if( pS->zAlias ) sqlite3_str_appendf(pOut, " AS %s", pS->zAlias);
    if( pS->eIndexed==PAR_INDEXED_BY ) sqlite3_str_appendf(pOut, " INDEXED BY %s", pS->zIndex);
    if( pS->eIndexed==PAR_INDEXED_NOT ) sqlite3_str_appendall(pOut, " NOT INDEXED");
    if( pS->bOn ){
      sqlite3_str_appendall(pOut, " ON");
      putSpan(pOut, zSql, pS->on);
    }
    if( pS->bUsing ){
      sqlite3_str_appendall(pOut, " USING(");
      for(k=0; k<pS->nUsing; k++) sqlite3_str_appendf(pOut, "%s%s", k ? "," : "", pS->azUsing[k]);
      sqlite3_str_appendall(pOut, ")");
    }
  }
}

static void putBound(sqlite3_str *pOut, const char *zSql, const ParFrameBound *pB){
  static const char *az[] = { "none", "unbounded preceding", "preceding", "current row",
                              "following", "unbounded following" };
  if( pB->eBound==PAR_BOUND_PRECEDING || pB->eBound==PAR_BOUND_FOLLOWING ){
    putSpan(pOut, zSql, pB->expr);
    sqlite3_str_appendall(pOut, " ");
  }
  sqlite3_str_appendall(pOut, pB->eBound>=0 && pB->eBound<=5 ? az[pB->eBound] : "?");
}

static void putWindow(sqlite3_str *pOut, const char *zSql, const ParWinSpec *pW){
  static const char *azFrame[] = { "", "rows", "range", "groups" };
  static const char *azExcl[] = { "", "no others", "current row", "group", "ties" };
  int k, n = 0;
  sqlite3_str_appendall(pOut, "(");
  if( pW->zBase ){ sqlite3_str_appendf(pOut, "base %s", pW->zBase); n++; }
  if( pW->nPartition ){
    sqlite3_str_appendf(pOut, "%spartition ", n++ ? "; " : "");
    for(k=0; k<pW->nPartition; k++){
      if( k ) sqlite3_str_appendall(pOut, ",");
      putSpan(pOut, zSql, pW->aPartition[k]);
    }
  }
  if( pW->nOrder ){
    sqlite3_str_appendf(pOut, "%sorder ", n++ ? "; " : "");
    for(k=0; k<pW->nOrder; k++){
      const ParExpr *pE = &pW->aOrder[k];
      if( k ) sqlite3_str_appendall(pOut, ",");
      putSpan(pOut, zSql, pE->span);
      if( pE->bDesc ) sqlite3_str_appendall(pOut, " desc");
      if( pE->eNulls ) sqlite3_str_appendf(pOut, " nulls %s",
                                           pE->eNulls==PAR_NULLS_FIRST ? "first" : "last");
      if( pE->zCollate ) sqlite3_str_appendf(pOut, " collate %s", pE->zCollate);
    }
  }
  if( pW->eFrame ){
    sqlite3_str_appendf(pOut, "%s%s ", n++ ? "; " : "", azFrame[pW->eFrame]);
    if( pW->bBetween ) sqlite3_str_appendall(pOut, "between ");
    putBound(pOut, zSql, &pW->start);
    sqlite3_str_appendall(pOut, " and ");
    putBound(pOut, zSql, &pW->end);
    if( pW->eExclude ) sqlite3_str_appendf(pOut, " exclude %s", azExcl[pW->eExclude]);
  }
  sqlite3_str_appendall(pOut, ")");
}

/* The whole structure, one line. */
static char *dumpSelect(const ParSelect *p){
  sqlite3_str *pOut = sqlite3_str_new(0);
  const char *z = p->zSql;
  int i, k;
  sqlite3_str_appendall(pOut, "from: ");
  if( p->pFrom ) putFrom(pOut, z, p->pFrom);
  else sqlite3_str_appendall(pOut, "-");
  for(i=0; i<p->nWinCall; i++){
    const ParWinCall *pC = &p->aWinCall[i];
    sqlite3_str_appendf(pOut, " | %s#%d %s(%s%s", pC->eClause==PAR_CLAUSE_SELECT ? "col" : "order",
                        pC->iExpr, pC->zName, pC->bDistinct ? "DISTINCT " : "",
                        pC->bStar ? "*" : "");
    for(k=0; k<pC->nArg; k++){
      if( k ) sqlite3_str_appendall(pOut, ";");
      putSpan(pOut, z, pC->aArg[k]);
    }
    sqlite3_str_appendall(pOut, ")");
    if( pC->bFilter ){
      sqlite3_str_appendall(pOut, " filter");
      putSpan(pOut, z, pC->filter);
    }
    if( pC->zOver ) sqlite3_str_appendf(pOut, " over %s", pC->zOver);
    else{
      sqlite3_str_appendall(pOut, " over ");
      putWindow(pOut, z, &pC->win);
    }
  }
  for(i=0; i<p->nWinDef; i++){
    sqlite3_str_appendf(pOut, " | window %s ", p->aWinDef[i].zName);
    putWindow(pOut, z, &p->aWinDef[i]);
  }
  if( p->zTreeWhy ) sqlite3_str_appendf(pOut, " | tree: %s", p->zTreeWhy);
  return sqlite3_str_finish(pOut);
}

/* ---- cases ----------------------------------------------------------------- */

typedef struct Case { const char *zSql; const char *zWant; } Case;

static const Case aFrom[] = {
  { "SELECT 1", "from: -" },
  { "SELECT a FROM t", "from: table t" },
  { "SELECT a FROM main.t AS x", "from: table main.t AS x" },
  { "SELECT a FROM \"my tab\" \"al\"\"ias\"", "from: table my tab AS al\"ias" },
  { "SELECT a FROM [t 1] 'x'", "from: table t 1 AS x" },
  { "SELECT a FROM `s`.`t` INDEXED BY \"i 1\"", "from: table s.t INDEXED BY i 1" },
  { "SELECT a FROM t AS y NOT INDEXED WHERE a>1", "from: table t AS y NOT INDEXED" },
  { "SELECT * FROM a, b,c", "from: table a <comma|inner> table b <comma|inner> table c" },
  { "SELECT * FROM a JOIN b ON a.x = b.x", "from: table a <inner> table b ON[a.x = b.x]" },
  { "SELECT * FROM a INNER JOIN b USING (x)", "from: table a <inner> table b USING(x)" },
  { "SELECT * FROM a LEFT JOIN b ON a.x=b.x LEFT OUTER JOIN c ON c.y=b.y",
    "from: table a <left|outer> table b ON[a.x=b.x] <left|outer> table c ON[c.y=b.y]" },
  { "SELECT * FROM a NATURAL LEFT JOIN b", "from: table a <natural|left|outer> table b" },
  { "SELECT * FROM a natural left outer join b", "from: table a <natural|left|outer> table b" },
  { "SELECT * FROM a NATURAL JOIN b", "from: table a <natural|inner> table b" },
  { "SELECT * FROM a CROSS JOIN b", "from: table a <inner|cross> table b" },
  { "SELECT * FROM a RIGHT JOIN b ON 1 FULL OUTER JOIN c ON 1",
    "from: table a <right|outer> table b ON[1] <left|right|outer> table c ON[1]" },
  { "SELECT * FROM a JOIN b USING (x, \"y z\", [w])",
    "from: table a <inner> table b USING(x,y z,w)" },
  /* ON: subqueries, CASE, IN lists, BETWEEN ... AND, join keywords as
  ** column names after a dot. */
  { "SELECT * FROM a JOIN b ON a.x IN (SELECT x FROM c JOIN d ON 1) AND b.left "
    "BETWEEN 1 AND 2 JOIN e ON CASE WHEN a.y THEN 1 ELSE 0 END, f",
    "from: table a <inner> table b ON[a.x IN (SELECT x FROM c JOIN d ON 1) AND b.left "
    "BETWEEN 1 AND 2] <inner> table e ON[CASE WHEN a.y THEN 1 ELSE 0 END] <comma|inner> table f" },
  /* Subqueries, nested parentheses, joins of subqueries. */
  { "SELECT * FROM (SELECT a FROM t) AS s",
    "from: subquery[SELECT a FROM t] AS s" },
  { "SELECT * FROM (SELECT a, (SELECT 1) FROM t WHERE (a > 1)) s JOIN (VALUES (1),(2)) v "
    "ON s.a = v.column1",
    "from: subquery[SELECT a, (SELECT 1) FROM t WHERE (a > 1)] AS s <inner> "
    "subquery[VALUES (1),(2)] AS v ON[s.a = v.column1]" },
  { "SELECT * FROM (WITH c AS (SELECT 1) SELECT * FROM c) LEFT JOIN ((SELECT 2)) q ON 1",
    "from: subquery[WITH c AS (SELECT 1) SELECT * FROM c] <left|outer> "
    "group(subquery[SELECT 2]) AS q ON[1]" },
  { "SELECT * FROM a LEFT JOIN (b JOIN c ON b.x = c.x) ON a.y = b.y",
    "from: table a <left|outer> group(table b <inner> table c ON[b.x = c.x]) ON[a.y = b.y]" },
  { "SELECT * FROM (a, (b NATURAL JOIN c)) AS g, d",
    "from: group(table a <comma|inner> group(table b <natural|inner> table c)) AS g "
    "<comma|inner> table d" },
  /* Table-valued functions. */
  { "SELECT * FROM json_each('[1,2]') AS j, main.generate_series(1, (2+3), 1) g",
    "from: func json_each(['[1,2]']) AS j <comma|inner> func main.generate_series([1];[(2+3)];[1]) AS g" },
  { "SELECT * FROM t JOIN pragma_table_info('t') p ON p.name = t.a",
    "from: table t <inner> func pragma_table_info(['t']) AS p ON[p.name = t.a]" },
  { "SELECT * FROM f()", "from: func f()" },
  /* Keywords as names, comments, clauses after FROM. */
  { "SELECT * FROM \"select\" AS \"from\" /* c */ JOIN key -- x\n ON 1 WHERE 2",
    "from: table select AS from <inner> table key ON[1]" },
  { "SELECT * FROM t AS left JOIN rows replace ON 1 GROUP BY 1",
    "from: table t AS left <inner> table rows AS replace ON[1]" },
  { "SELECT a FROM t ORDER BY 1 LIMIT 2", "from: table t" },
  { "SELECT a FROM t UNION SELECT b FROM u", "from: table t" },
};

static const Case aWindow[] = {
  { "SELECT row_number() OVER () FROM t", "from: table t | col#0 row_number() over ()" },
  { "SELECT id, sum(v) OVER (PARTITION BY k ORDER BY ts ROWS UNBOUNDED PRECEDING) FROM fact",
    "from: table fact | col#1 sum([v]) over (partition [k]; order [ts]; "
    "rows unbounded preceding and current row)" },
  { "SELECT sum(x) OVER (PARTITION BY a, b+1 ORDER BY c DESC NULLS FIRST, d COLLATE nocase, "
    "e ASC NULLS LAST RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING EXCLUDE TIES) FROM t",
    "from: table t | col#0 sum([x]) over (partition [a],[b+1]; order [c] desc nulls first,"
    "[d COLLATE nocase] collate nocase,[e] nulls last; range between current row and "
    "unbounded following exclude ties)" },
  { "SELECT avg(x) OVER (ORDER BY y GROUPS BETWEEN 1+1 PRECEDING AND (SELECT 2) FOLLOWING "
    "EXCLUDE NO OTHERS), max(x) OVER (ORDER BY y ROWS BETWEEN CAST(? AS INT) PRECEDING AND "
    "CURRENT ROW EXCLUDE CURRENT ROW) FROM t",
    "from: table t | col#0 avg([x]) over (order [y]; groups between [1+1] preceding and "
    "[(SELECT 2)] following exclude no others) | col#1 max([x]) over (order [y]; rows between "
    "[CAST(? AS INT)] preceding and current row exclude current row)" },
  { "SELECT count(*) FILTER (WHERE x > (1)) OVER w, count(DISTINCT y) OVER \"w 2\" FROM t "
    "WINDOW w AS (ORDER BY z), \"w 2\" AS (w ROWS 3 PRECEDING EXCLUDE GROUP)",
    "from: table t | col#0 count(*) filter[x > (1)] over w | col#1 count(DISTINCT [y]) over w 2"
    " | window w (order [z]) | window w 2 (base w; rows [3] preceding and current row "
    "exclude group)" },
  { "SELECT first_value(a) OVER (w PARTITION BY b) FROM t WINDOW w AS (), v AS (w)",
    "from: table t | col#0 first_value([a]) over (base w; partition [b]) | window w () "
    "| window v (base w)" },
  /* Nested in expressions, in ORDER BY, not in subqueries; "rows" as a
  ** column name; a window call's arguments with commas and parentheses. */
  { "SELECT coalesce(lag(a, 1, (2)) OVER (ORDER BY rows), 0) + 1 AS r, "
    "(SELECT sum(b) OVER () FROM u) FROM t ORDER BY rank() OVER (ORDER BY a, rows) DESC, 2",
    "from: table t | col#0 lag([a];[1];[(2)]) over (order [rows]) "
    "| order#0 rank() over (order [a],[rows])" },
  { "SELECT sum(a) OVER (ORDER BY a COLLATE \"NOCASE\" DESC ROWS 1 FOLLOWING) FROM t",
    "from: table t | col#0 sum([a]) over (order [a COLLATE \"NOCASE\"] desc collate NOCASE; "
    "rows [1] following and current row)" },
  { "SELECT \"sum\"(a) OVER(PARTITION BY (a), [b] ORDER BY (c), d) FROM t",
    "from: table t | col#0 sum([a]) over (partition [(a)],[[b]]; order [(c)],[d])" },
  /* Frames after ")", a quoted name, a number; a collation named rows;
  ** a window call inside CASE; FILTER with a subquery. */
  { "SELECT CASE WHEN a THEN ntile(2) OVER (w ORDER BY (b) DESC RANGE BETWEEN UNBOUNDED "
    "PRECEDING AND UNBOUNDED FOLLOWING) END, sum(a) OVER (ORDER BY \"a\" ROWS 1 PRECEDING), "
    "min(a) OVER (ORDER BY a COLLATE rows), max(a) FILTER (WHERE a IN (SELECT (1))) OVER "
    "(PARTITION BY 1 GROUPS CURRENT ROW) FROM t WINDOW w AS (PARTITION BY c)",
    "from: table t | col#0 ntile([2]) over (base w; order [(b)] desc; range between unbounded "
    "preceding and unbounded following) | col#1 sum([a]) over (order [\"a\"]; rows [1] "
    "preceding and current row) | col#2 min([a]) over (order [a COLLATE rows] collate rows) "
    "| col#3 max([a]) filter[a IN (SELECT (1))] over (partition [1]; groups current row and "
    "current row) | window w (partition [c])" },
  /* Not window calls: FILTER alone, an alias named over. */
  { "SELECT count(*) FILTER (WHERE a) FROM t", "from: table t" },
  { "SELECT count(*) over FROM t", "from: table t" },
  /* After a WINDOW clause: ORDER BY (with window calls) and LIMIT. */
  { "SELECT a FROM t WINDOW w AS (PARTITION BY a) ORDER BY sum(a) OVER w LIMIT 3",
    "from: table t | order#0 sum([a]) over w | window w (partition [a])" },
};

/* The parser only ever sees SQL that SQLite prepared: so must the cases
** be, up to names it does not know. */
static void checkSqliteParses(const char *zSql){
  sqlite3 *db = 0;
  sqlite3_stmt *pStmt = 0;
  int rc;
  if( sqlite3_open(":memory:", &db) ){ CHECK(0, "sqlite3_open"); return; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  CHECK(rc==SQLITE_OK || (strstr(sqlite3_errmsg(db), "syntax error")==0
                          && strstr(sqlite3_errmsg(db), "incomplete input")==0),
        "SQLite: %s", sqlite3_errmsg(db));
  sqlite3_finalize(pStmt);
  sqlite3_close(db);
}

/* zWhy as the planner has always seen it, and the clauses taken down. */
static void checkWhy(void){
  static const struct { const char *zSql; const char *zWhy; int nOrder; int bLimit; } a[] = {
    { "SELECT sum(a) OVER () FROM t", "a window function", 0, 0 },
    { "SELECT a FROM t WINDOW w AS () ORDER BY a LIMIT 1", "a WINDOW clause", 1, 1 },
    { "SELECT sum(a) OVER w FROM t WINDOW w AS () ORDER BY a", "a window function", 1, 0 },
    { "SELECT a FROM t WINDOW w AS () UNION SELECT 1", "a WINDOW clause", 0, 0 },
    { "SELECT a FROM t UNION SELECT 1 ORDER BY 1", "a compound SELECT", 0, 0 },
    { "SELECT count(*) FILTER (WHERE a) FROM t", "an aggregate with FILTER", 0, 0 },
    { "WITH c AS (SELECT 1) SELECT * FROM c", "a WITH clause", 0, 0 },
    { "SELECT a FROM t JOIN (SELECT 1) ON 1 ORDER BY a", 0, 1, 0 },
  };
  int i;
  for(i=0; i<(int)(sizeof(a)/sizeof(a[0])); i++){
    ParSelect s;
    check_case("why: %s", a[i].zSql);
    checkSqliteParses(a[i].zSql);
    CHECK(parSelectParse(a[i].zSql, &s)==SQLITE_OK, "parse");
    CHECK((s.zWhy==0 && a[i].zWhy==0) || (s.zWhy && a[i].zWhy && strcmp(s.zWhy, a[i].zWhy)==0),
          "zWhy %s, want %s", s.zWhy ? s.zWhy : "NULL", a[i].zWhy ? a[i].zWhy : "NULL");
    CHECK(s.nOrder==a[i].nOrder, "nOrder %d, want %d", s.nOrder, a[i].nOrder);
    CHECK(s.bLimit==a[i].bLimit, "bLimit %d, want %d", s.bLimit, a[i].bLimit);
    CHECK(s.zTreeWhy==0, "zTreeWhy %s", s.zTreeWhy);
    parSelectClear(&s);
  }
}

/* The names recorded as possible column references (aRef) and aggregate
** calls (aAgg), the WINDOW clause's span: the group-by planner rewrites
** them in its final SQL.  Frame words are never references. */
static void checkWindowRefs(void){
  static const struct { const char *zSql; const char *zRefs; int nAgg; const char *zClause; } a[] = {
    { "SELECT a, sum(sum(x)) OVER (PARTITION BY a ORDER BY b ROWS BETWEEN UNBOUNDED PRECEDING "
      "AND CURRENT ROW EXCLUDE NO OTHERS) FROM t GROUP BY a", "a a b", 1, 0 },
    { "SELECT rank() OVER w FROM t GROUP BY k WINDOW w AS (PARTITION BY k ORDER BY count(*) "
      "RANGE CURRENT ROW), v AS (w GROUPS 1 PRECEDING)", "k w", 1,
      "w AS (PARTITION BY k ORDER BY count(*) RANGE CURRENT ROW), v AS (w GROUPS 1 PRECEDING)" },
    { "SELECT rows, range FROM t", "rows range", 0, 0 },
  };
  int i, k;
  for(i=0; i<(int)(sizeof(a)/sizeof(a[0])); i++){
    ParSelect s;
    sqlite3_str *pStr = sqlite3_str_new(0);
    char *zRefs, *zClause = 0;
    check_case("window refs: %s", a[i].zSql);
    checkSqliteParses(a[i].zSql);
    CHECK(parSelectParse(a[i].zSql, &s)==SQLITE_OK, "parse");
    for(k=0; k<s.nRef; k++){
      sqlite3_str_appendf(pStr, "%s%.*s", k ? " " : "", s.aRef[k].iEnd - s.aRef[k].iStart,
                          a[i].zSql + s.aRef[k].iStart);
    }
    zRefs = sqlite3_str_finish(pStr);
    CHECK(zRefs && strcmp(zRefs, a[i].zRefs)==0, "refs '%s', want '%s'", zRefs, a[i].zRefs);
    CHECK(s.nAgg==a[i].nAgg, "nAgg %d, want %d", s.nAgg, a[i].nAgg);
    if( s.winClause.iTokEnd>0 ) zClause = parSpanText(a[i].zSql, s.winClause);
    CHECK((zClause==0 && a[i].zClause==0)
          || (zClause && a[i].zClause && strcmp(zClause, a[i].zClause)==0),
          "clause '%s', want '%s'", zClause ? zClause : "", a[i].zClause ? a[i].zClause : "");
    sqlite3_free(zRefs);
    sqlite3_free(zClause);
    parSelectClear(&s);
  }
}

static void checkCases(const char *zGroup, const Case *a, int n){
  int i;
  for(i=0; i<n; i++){
    ParSelect s;
    char *z;
    check_case("%s: %s", zGroup, a[i].zSql);
    checkSqliteParses(a[i].zSql);
    CHECK(parSelectParse(a[i].zSql, &s)==SQLITE_OK, "parse");
    z = dumpSelect(&s);
    CHECK(z && strcmp(z, a[i].zWant)==0, "\n  got  %s\n  want %s", z, a[i].zWant);
    sqlite3_free(z);
    parSelectClear(&s);
  }
}

/* ORDER BY terms of the SELECT itself carry their collation too. */
static void checkOrderCollate(void){
  ParSelect s;
  const char *zSql = "SELECT a FROM t ORDER BY a COLLATE nocase DESC, b, c || d COLLATE rtrim";
  check_case("ORDER BY collations");
  CHECK(parSelectParse(zSql, &s)==SQLITE_OK, "parse");
  CHECK(s.nOrder==3, "nOrder %d", s.nOrder);
  if( s.nOrder==3 ){
    CHECK(s.aOrder[0].zCollate && strcmp(s.aOrder[0].zCollate, "nocase")==0 && s.aOrder[0].bDesc,
          "term 0");
    CHECK(s.aOrder[1].zCollate==0 && s.aOrder[1].iCollTok==-1, "term 1");
    CHECK(s.aOrder[2].zCollate && strcmp(s.aOrder[2].zCollate, "rtrim")==0, "term 2");
  }
  CHECK(s.nCol==1 && s.aCol[0].iCollTok==-1 && s.having.iCollTok==-1, "elsewhere: iCollTok -1");
  parSelectClear(&s);
}

/* ---- allocation failures --------------------------------------------------- */

static sqlite3_mem_methods sysMem;
static int nAllocLeft = -1;   /* allocations before one fails; -1: none fails */

static void *failMalloc(int n){
  if( nAllocLeft==0 ) return 0;
  if( nAllocLeft>0 ) nAllocLeft--;
  return sysMem.xMalloc(n);
}
static void *failRealloc(void *p, int n){
  if( nAllocLeft==0 ) return 0;
  if( nAllocLeft>0 ) nAllocLeft--;
  return sysMem.xRealloc(p, n);
}

static void checkNoMem(const Case *a, int n){
  int i, k;
  for(i=0; i<n; i++){
    check_case("out of memory: %s", a[i].zSql);
    for(k=0; k<1000; k++){
      ParSelect s;
      int rc;
      nAllocLeft = k;
      rc = parSelectParse(a[i].zSql, &s);
      nAllocLeft = -1;
      CHECK(rc==SQLITE_OK || rc==SQLITE_NOMEM, "rc %d", rc);
      if( rc==SQLITE_OK ){
        char *z = dumpSelect(&s);
        CHECK(z && strcmp(z, a[i].zWant)==0, "failure %d: got %s", k, z);
        sqlite3_free(z);
        parSelectClear(&s);
        break;
      }
      parSelectClear(&s);
    }
    CHECK(k<1000, "never succeeds");
  }
}

/* ---- token soup ------------------------------------------------------------ */

static void checkSpan(const ParSelect *p, ParSpan s, int nLen){
  CHECK(s.iStart>=0 && s.iStart<=s.iEnd && s.iEnd<=nLen && s.iTok>=0
        && s.iTok<=s.iTokEnd && s.iTokEnd<p->nTok, "span [%d,%d) tokens [%d,%d) in %s",
        s.iStart, s.iEnd, s.iTok, s.iTokEnd, p->zSql);
}

static void checkFromSpans(const ParSelect *p, const ParFrom *pF, int nLen){
  int i, k;
  for(i=0; i<pF->nSrc; i++){
    const ParFromSrc *pS = &pF->aSrc[i];
    checkSpan(p, pS->span, nLen);
    checkSpan(p, pS->on, nLen);
    checkSpan(p, pS->inner, nLen);
    for(k=0; k<pS->nArg; k++) checkSpan(p, pS->aArg[k], nLen);
    for(k=0; k<pS->nUsing; k++) checkSpan(p, pS->aUsing[k], nLen);
    if( pS->pGroup ) checkFromSpans(p, pS->pGroup, nLen);
  }
}

static void checkWindowSpans(const ParSelect *p, const ParWinSpec *pW, int nLen){
  int k;
  checkSpan(p, pW->spec, nLen);
  checkSpan(p, pW->frame, nLen);
  checkSpan(p, pW->start.expr, nLen);
  checkSpan(p, pW->end.expr, nLen);
  for(k=0; k<pW->nPartition; k++) checkSpan(p, pW->aPartition[k], nLen);
  for(k=0; k<pW->nOrder; k++) checkSpan(p, pW->aOrder[k].span, nLen);
}

static void checkSoup(check_rng *r){
  static const char *az[] = {
    "SELECT", "FROM", "JOIN", "LEFT", "NATURAL", "OUTER", "CROSS", "ON", "USING",
    "AS", "INDEXED", "BY", "NOT", ",", "(", ")", "(", ")", ".", "a", "b", "\"q\"", "'s'",
    "1", "OVER", "FILTER", "WHERE", "WINDOW", "PARTITION", "ORDER", "ROWS", "RANGE",
    "GROUPS", "BETWEEN", "AND", "UNBOUNDED", "PRECEDING", "FOLLOWING", "CURRENT", "ROW",
    "EXCLUDE", "NO", "OTHERS", "TIES", "GROUP", "COLLATE", "DESC", "NULLS", "FIRST",
    "sum", "*", "+", "LIMIT", "UNION", "VALUES", "WITH", "DISTINCT", "CASE", "END",
    "FULL", "RIGHT", "INNER", "?", "CAST", "ALL", "HAVING",
  };
  int iRep;
  check_case("token soup");
  for(iRep=0; iRep<20000; iRep++){
    char zSql[1000];
    int n = 0, nTok = 1 + (int)check_below(r, 40), k, i, d = 0;
    int bBalance = iRep%4!=0;   /* mostly balanced: the second walk runs */
    ParSelect s;
    n += snprintf(zSql + n, sizeof(zSql) - n, "SELECT");
    for(k=0; k<nTok; k++){
      const char *zTok = az[check_below(r, sizeof(az)/sizeof(az[0]))];
      if( bBalance && zTok[0]==')' && d==0 ) zTok = "(";
      if( zTok[0]=='(' ) d++;
      if( zTok[0]==')' ) d--;
      n += snprintf(zSql + n, sizeof(zSql) - n, " %s", zTok);
    }
    while( bBalance && d-->0 ) n += snprintf(zSql + n, sizeof(zSql) - n, " )");
    if( parSelectParse(zSql, &s)==SQLITE_OK ){
      if( s.pFrom ) checkFromSpans(&s, s.pFrom, n);
      for(i=0; i<s.nWinCall; i++){
        checkSpan(&s, s.aWinCall[i].call, n);
        for(k=0; k<s.aWinCall[i].nArg; k++) checkSpan(&s, s.aWinCall[i].aArg[k], n);
        checkWindowSpans(&s, &s.aWinCall[i].win, n);
      }
      for(i=0; i<s.nWinDef; i++) checkWindowSpans(&s, &s.aWinDef[i], n);
      sqlite3_free(dumpSelect(&s));
    }
    parSelectClear(&s);
    if( check_case_failed() ) break;
  }
}

int main(void){
  check_rng r = { check_seed() };
  sqlite3_mem_methods m;
  sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sysMem);
  m = sysMem;
  m.xMalloc = failMalloc;
  m.xRealloc = failRealloc;
  sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
  sqlite3_initialize();

  checkCases("from", aFrom, (int)(sizeof(aFrom)/sizeof(aFrom[0])));
  checkCases("window", aWindow, (int)(sizeof(aWindow)/sizeof(aWindow[0])));
  checkWhy();
  checkWindowRefs();
  checkOrderCollate();
  checkNoMem(aFrom, (int)(sizeof(aFrom)/sizeof(aFrom[0])));
  checkNoMem(aWindow, (int)(sizeof(aWindow)/sizeof(aWindow[0])));
  checkSoup(&r);
  return check_summary("parse");
}
