/*
** planint.h: the planner's own state and helpers, shared by the files
** that plan one operator each (plan.c: the group-by and the frame every
** plan has; plan_sort.c: ORDER BY, DISTINCT and LIMIT without GROUP BY).
** Nothing outside the planner includes it.
*/
#ifndef PAR_PLANINT_H
#define PAR_PLANINT_H

#include "plan.h"

/* A replacement in the final SQL: the SELECT's text of span is read as
** par_rows column iCol (the result column of the group-by).  Its text is
** written from these fields (buildReplText), never read back. */
typedef struct ParRepl {
  ParSpan span;
  int eKind;         /* PAR_REPL_* */
  int iCol;          /* the par_rows column */
  int iCollTok;      /* AGG: the token naming the collation of the COLLATE
                     ** its result takes, or -1 */
  char cAff, cColl;  /* ITEM, BARE: the column's letters of PAR_ROWS_AFF
                     ** and PAR_ROWS_COLL ('?' until known) */
} ParRepl;
#define PAR_REPL_AGG  0  /* an aggregate call: its result, as a function's */
#define PAR_REPL_ITEM 1  /* a select-list item that a GROUP BY key stands for */
#define PAR_REPL_BARE 2  /* a bare column reference */

typedef struct ParBuild {
  sqlite3 *db;
  ParSelect *pSel;
  ParPlan *pPlan;
  char *zFrom;           /* FROM clause text */
  int nExpr;             /* extraction columns so far */
  char **azExpr;         /* their text */
  int nRepl;             /* replacements in the final SQL */
  ParRepl *aRepl;
  int eFunc;             /* the functions below: 0 not read yet, 1 read,
                         ** -1 pragma_function_list does not answer as
                         ** SQLite defines it (assume the worst) */
  int nFunc;             /* the application's functions and every aggregate
                         ** or window function, from one read of the list */
  struct ParBuildFunc { char *zName; int nArg, bBuiltin, bAgg; } *aFunc;
  int nBareSensitive;    /* bare columns 0..n-1 are values of the group's
                         ** row (the rest: keys only ordered by) */
  int bLoops;            /* the SELECT's loops read (buildSelectLoops) */
  char *zLoops;          /* ...they (NULL: could not be read) */
  int bLoopsSort;        /* ...and whether GROUP BY sorts */
  ParWinSpec *aWinChain; /* windows built on another, one slot per window
                         ** call (plan_window.c winSpecOf), shallow copies */
  int bOrderMatters;     /* the result depends on the order the rows are
                         ** read in, whatever the aggregates (the sort) */
  char *zOrderWhy;       /* the extraction query visits the rows in another
                         ** order than SQLite: native unless the join
                         ** operator visits them in SQLite's (buildCheckOrder) */
  int rc;
} ParBuild;

/* The builder's helpers (plan.c). */
/* Does db hold a write transaction (the planner then reads no index's
** columns)? */
int buildWriting(sqlite3 *db);
void buildNoMem(ParBuild *pB);
/* Set the plan's zWhy (the first reason given wins); returns 1. */
int buildWhy(ParBuild *pB, const char *zFmt, const char *zArg);
/* Index of extraction expression zExpr (taking ownership), reusing an
** identical one. */
int buildExpr(ParBuild *pB, char *zExpr);
int buildSubqueryColKind(const char *zInner, int iCol);
/* Does table zTab (of any schema) declare an RTRIM collation?  1 also
** when out of memory. */
int buildRtrimTable(sqlite3 *db, const char *zTab);
/* Is zName/nArg an aggregate or window function (buildIsAggFunc), or one
** the application defined (buildIsAppFunc)? */
int buildIsAggFunc(ParBuild *pB, const char *zName, int nArg);
int buildIsAppFunc(ParBuild *pB, const char *zName, int nArg);
/* The collation SQLite uses for extraction column iCol of pExtract, the
** SELECT's tokens [iTok, iTokEnd); PAR_COLL_UNKNOWN when not known. */
int buildCollation(ParBuild *pB, sqlite3_stmt *pExtract, int iCol,
                   int iTok, int iTokEnd, int bUtf8);
/* The collation of extraction column iCol of pExtract, a table's column
** read straight (not through a subquery: the caller checks): the column's
** declared one, PAR_COLL_UNKNOWN for a view's column or one not known. */
int buildOriginColl(ParBuild *pB, sqlite3_stmt *pExtract, int iCol);
/* e, or PAR_COLL_UNKNOWN when the application replaced it. */
int buildKnownColl(int e, int mReplaced);
/* Tokens [*pt0, *pt1) without parentheses around the whole. */
void buildStripParens(const ParToken *a, int *pt0, int *pt1);

/* "EXPLAIN QUERY PLAN zSql" prepared, pParams bound (they can change the
** plan), or NULL when it does not prepare. */
sqlite3_stmt *buildExplainStmt(sqlite3 *db, const char *zSql, const ParParams *pParams);

/* plan_flatten.c: zSql rewritten into the SELECT the planners take, in
** *pzFlat (NULL: as it is), with *pmDone the PAR_FLAT_* done: its FROM's
** one subquery (or one common table expression used once) merged as
** SQLite merges it (or *pzWhy := why not, NULL when it has none); WHERE
** terms [NOT] EXISTS (SELECT ... WHERE t2.a = x ...) as [NOT] IN lists.
** Strings sqlite3_malloc'd.  SQLITE_OK or SQLITE_NOMEM. */
int parFlatten(sqlite3 *db, const char *zSql, const ParParams *pParams,
               char **pzFlat, int *pmDone, char **pzWhy);
/* zSql with each uncorrelated scalar subquery beside a comparison in its
** WHERE and HAVING whose value has no affinity written as a parameter
** ":par_p<nParam+k>" (k from 1), the subqueries' texts in azBind[k-1]
** (*pnBind of them, at most PAR_MAX_BIND); NULL when there is none. */
char *parBindScalars(sqlite3 *db, const char *zSql, int nParam, int *pnBind, char **azBind,
                     int *pRc);
/* zWhy unless the extraction query reads the rows in the order SQLite's
** plan for the SELECT does, when the result depends on it. */
void buildCheckOrder(ParBuild *pB);

/* Is any call of pB's SELECT outside the aggregates it parsed an
** aggregate or window function (a built-in the kernels do not compute,
** or the application's)?  Then zWhy (or out of memory) and 1. */
int buildOtherAggs(ParBuild *pB);

/* Are tokens [s0, s1) and [t0, t1) of pSel the same, names compared
** without regard to case? */
int buildTokensEqual(const ParSelect *pSel, int s0, int s1, int t0, int t1);

/* How many instructions of zSql's program step or seek backwards through
** a table or index (-1: it does not prepare): plan.c. */
int buildBackwardSteps(sqlite3 *db, const char *zSql, const ParParams *pParams);

/* Does the result depend on the order the rows are read in (SQLite's)?
** Bare columns, a sort, or an aggregate whose value does (REAL sums...). */
int buildOrderSensitive(ParBuild *pB);
/* The loops of zSql's query plan, one "SCAN ..."/"SEARCH ..." line each,
** and whether GROUP BY sorts; the SELECT's own, read once per build
** (buildSelectLoops).  NULL when they cannot be read. */
char *buildLoops(sqlite3 *db, const char *zSql, const ParParams *pParams, int *pbGroupSort);
const char *buildSelectLoops(ParBuild *pB, int *pbGroupSort);

/* Plan the join of the FROM clause's tables (plan_join.c): pPlan->pJoin,
** or pPlan->zJoinWhy when SQLite reads the join. */
void buildJoinPlan(ParBuild *pB);

/* Plan a SELECT whose select list calls window functions, when nothing
** else keeps it from the kernels (ParSelect.bWindow): plan_window.c. */
/* The final SQL's pieces (plan.c): add a replacement of span s; does
** "SELECT zExpr FROM <from>" prepare (is a name a column)?; span s with
** the replacements inside it applied; is span s an ORDER BY term that
** names a select-list alias? */
void buildRepl(ParBuild *pB, ParSpan s, int eKind, int iCol, int iCollTok);
int buildResolves(ParBuild *pB, const char *zExpr);
char *buildRewrite(ParBuild *pB, ParSpan s);
int buildOrderAlias(const ParSelect *pSel, ParSpan s);
/* The select list with its replacements and aliases, then
** " FROM par_rows(:par_rows)", appended to pStr. */
void buildSelectList(ParBuild *pB, sqlite3_str *pStr);
void buildWindowPlan(ParBuild *pB);
/* Windows over a GROUP BY's result see the groups in SQLite's order?
** 1 with zWhy when not (plan_window.c). */
int buildGroupWindowOrder(ParBuild *pB, const int *aKeyTok);

/* The extraction query "SELECT [*,] pB->azExpr FROM from [WHERE (where)]"
** into pB->pPlan (zExtract and its parts, nExtractCol, azExtractExpr):
** plan_sort.c. */
void buildPlainExtraction(ParBuild *pB, int nStar);
/* "SELECT (limit), (offset)" of pB's SELECT, which has LIMIT (NULL when out
** of memory: pB->rc says so): plan_sort.c. */
char *buildLimitSql(ParBuild *pB);

/* Plan a SELECT without GROUP BY and aggregates that has ORDER BY or
** DISTINCT (plan_sort.c). */
void buildSortPlan(ParBuild *pB);

/* The sort operator after the group-by (pPlan->pSort, bGroup), when
** every ORDER BY term of pB's SELECT is one column of the group-by's
** result; else nothing, and the final SQL sorts.  eGroupOrder: the order
** SQLite makes the groups in (plan.c, buildGroupOrder).  Call it once the
** replacements and their letters are known (buildBareAffinities). */
void buildGroupSortPlan(ParBuild *pB, int eGroupOrder);

#endif /* PAR_PLANINT_H */
