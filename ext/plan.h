/*
** plan.h: from a SELECT's text to a plan: extraction query -> group-by
** operator -> final SQL evaluated by SQLite over the operator's result.
*/
#ifndef PAR_PLAN_H
#define PAR_PLAN_H

#include "batch.h"
#include "sqlparse.h"

/* Columns of the result batch are handed to the final SQL through the
** table-valued function par_rows(:par_rows): column j of the batch is available
** under the name "_p<a><c><j>", where <a> picks the column affinity SQLite
** applies in comparisons: n (none), i (INTEGER), r (REAL), t (TEXT),
** u (NUMERIC), and <c> the column's collation: b (BINARY), n (NOCASE),
** r (RTRIM).  At most PAR_ROWS_MAX batch columns. */
#define PAR_ROWS_MAX 64
#define PAR_ROWS_AFF "nirtu"
#define PAR_ROWS_COLL "bnr"

/* Collation of a key, min/max or DISTINCT argument: PAR_COLL_* or this
** when the planner cannot tell (the query then runs natively if the
** column turns out to hold text). */
#define PAR_COLL_UNKNOWN (-1)

typedef struct ParPlanAgg ParPlanAgg;
struct ParPlanAgg {
  int eFunc;         /* PAR_AGG_* */
  int bDistinct;
  int iArg;          /* extraction column of the argument, or -1 */
  int iText;         /* group_concat: extraction column of the argument
                     ** as TEXT */
  int iSep;          /* group_concat: extraction column of the separator
                     ** as TEXT, or -1 for the default ',' */
  int eColl;         /* min, max, DISTINCT: collation of the argument */
  char *zText;       /* the call as written, for par_explain */
};

/* The operators of a plan, in the order they run (ParPlan.aOp; exec.c runs
** them, parPlanExplain shows a line or two for each).  Each takes the
** batch of the one before and returns a batch; any of them can find at
** run time that the SELECT must run natively. */
#define PAR_OP_SCAN   0   /* the extraction query's rows: extract.c */
#define PAR_OP_GROUP  1   /* GROUP BY and the aggregates: groupby.c */
#define PAR_OP_SORT   2   /* DISTINCT, ORDER BY, OFFSET, LIMIT: op_sort.c */
#define PAR_OP_FINAL  3   /* the final SQL over par_rows, or the columns as
                          ** they are (aDirect): view.c */
#define PAR_OP_JOIN   4   /* the tables of a join, each read by a scan of
                          ** its own, joined into the extraction's columns:
                          ** op_join.c (it follows PAR_OP_SCAN) */
#define PAR_OP_VALUE  6   /* (par_profile only) the uncorrelated scalar
                          ** subqueries computed before the scan (exec.c) */
#define PAR_OP_WINDOW 5   /* window functions over the extraction's rows:
                          ** op_window.c */
#define PAR_MAX_OP    8
#define PAR_MAX_BIND  8   /* scalar subqueries computed once, per SELECT */

/* One key of the sort operator (plan_sort.c, op_sort.c): extraction
** column iCol under collation eColl (PAR_COLL_*, or PAR_COLL_UNKNOWN: the
** query runs natively if the column holds text), flags PAR_KEY_*. */
typedef struct ParSortKey ParSortKey;
struct ParSortKey {
  int iCol;
  int eColl;
  int flags;
  char *zText;       /* the term as written, for par_explain */
};

/* The sort operator: of the extraction's rows, keep the first of each set
** of rows whose aDistinct columns are equal (DISTINCT), order them by the
** aKey terms (stable: ties keep the order the rows were read in, which is
** SQLite's: see plan_sort.c), then skip OFFSET rows and keep LIMIT.  After
** a group-by (bGroup) it sorts the groups instead: aKey's iCol are columns
** of the group-by's result, ties in the order SQLite makes the groups (the
** result's order, or its reverse: bReverse), and every column is kept. */
typedef struct ParPlanSort ParPlanSort;
struct ParPlanSort {
  int nKey;              /* ORDER BY terms (0: none), then the terms that
                         ** break their ties (nTerm..nKey-1) */
  ParSortKey *aKey;
  int nTerm;             /* the ORDER BY terms among aKey */
  int nDistinct;         /* DISTINCT: the select list's columns (0: none) */
  ParSortKey *aDistinct;
  char *zLimit;          /* "SELECT (limit), (offset)" evaluated on the
                         ** caller's connection at run time, or NULL */
  int bGroup;            /* over the group-by's result (PAR_OP_GROUP runs
                         ** first), not the extraction's rows */
  int bReverse;          /* ties in the reverse of the input's order */
};

typedef struct ParPlan ParPlan;

/* One key of a join step: the build table's scan column iBuildCol equals
** column iProbeCol of the scan of table iProbeTab (an earlier table),
** compared as SQLite compares the columns of the ON or WHERE term it comes
** from: under collation eColl (PAR_COLL_*: the left operand's column's),
** and after numeric affinity applied to TEXT on both sides when bNumeric
** (either column has INTEGER, REAL or NUMERIC affinity). */
typedef struct ParJoinKey ParJoinKey;
struct ParJoinKey {
  int iProbeTab, iProbeCol;
  int iBuildCol;
  int eColl;
  int bNumeric;
  char *zText;       /* the term as written, for par_explain */
};

/* One table of a join, in the order the join runs (SQLite's loops: the
** first is the outer loop).  pScan reads its rows: an extraction plan of
** its own (SELECT columns FROM table AS alias WHERE its terms), read,
** cached and invalidated like any other.  Table i > 0 is joined to the
** tables before it by aKey (a hash join: built on this table, probed with
** the rows joined so far, in their order). */
typedef struct ParJoinTab ParJoinTab;
struct ParJoinTab {
  char *zName;       /* the name SQLite's plan gives it (alias or table) */
  ParPlan *pScan;
  int nKey;
  ParJoinKey *aKey;
  int bLeft;         /* LEFT JOIN: a row before it with no match is kept,
                     ** this table's columns NULL */
  int bOrderKnown;   /* rows matching one probe row come in the order
                     ** SQLite's loop would visit them (rowid order, which
                     ** the scan reads in); else they must be unique when
                     ** the order matters (checked at run time) */
  char *zLoop;       /* SQLite's loop over it, for par_explain */
  int bRowidKey;     /* its one key is its rowid, which SQLite's loop looks
                     ** up: op_join.c may read only the rows the probe
                     ** keys name (rowid lookups) instead of the table */
  ParPlan *pSub;     /* a subquery in FROM (a derived table): its own plan,
                     ** whose result rows are the table's (op_join.c runs
                     ** it); pScan then reads it through SQLite only where
                     ** the join falls back to SQLite.  NULL: a table */
  int *aSubCol;      /* ...scan column j is pSub's result column aSubCol[j] */
  int nOrd;          /* >0: SQLite's loop walks an index of the table, whose
                     ** entries are in the order of aOrd (its key columns,
                     ** as scan columns, under the index's collations and
                     ** directions), then rowid: op_join.c sorts the rows,
                     ** read in rowid order, into that order (stable) */
  ParSortKey *aOrd;  /* (PAR_SORT_MAX_ORD slots) */
  char *zOrdIdx;     /* ...that index's name (par_explain) */
};

/* The join operator: extraction column j of the plan is column aOutCol[j]
** of table aOutTab[j]'s scan. */
typedef struct ParPlanJoin ParPlanJoin;
struct ParPlanJoin {
  int nTab;
  ParJoinTab *aTab;
  int *aOutTab, *aOutCol;   /* the output's columns: the extraction's, then
                            ** nResidCol more that zResid reads */
  int bOrderMatters; /* the result depends on the order of the joined rows:
                     ** they must come in SQLite's nested-loop order */
  char *zResid;      /* "SELECT rowid FROM par_rows(:par_rows) WHERE ...":
                     ** the terms that name several tables and are no keys,
                     ** which SQLite evaluates over the joined rows, or NULL */
  char *zResidText;  /* ...those terms as written (par_explain) */
  int nResidCol;
  char *zCalc;       /* "SELECT e1, ... FROM par_rows(:par_rows)": the
                     ** extraction's columns that name several tables,
                     ** which SQLite computes over the joined rows (after
                     ** zResid), or NULL */
  char *zCalcText;   /* ...those columns as written (par_explain) */
  int nCalc;
  int *aCalcCol;     /* the extraction column of each (its output column
                     ** until then holds a stand-in) */
};
#define PAR_JOIN_MAX_RESID 16      /* such terms at most */
#define PAR_JOIN_MAX_TAB 8
#define PAR_SORT_MAX_ORD 16        /* index columns a table is sorted by */
#define PAR_JOIN_MAX_KEY 4   /* keys per table: two words each at most, and the
                             ** kernel takes 8 (kernels/join.h) */

/* ---- the window operator (plan_window.c, op_window.c) ---- */

/* What a window function computes (ParWinFunc.eFunc). */
#define PAR_WF_AGG          1   /* an aggregate: ParWinFunc.agg */
#define PAR_WF_ROW_NUMBER   2
#define PAR_WF_RANK         3
#define PAR_WF_DENSE_RANK   4
#define PAR_WF_PERCENT_RANK 5
#define PAR_WF_CUME_DIST    6
#define PAR_WF_NTILE        7   /* iN: its argument */
#define PAR_WF_LAG          8   /* iN: the offset; iDefault */
#define PAR_WF_LEAD         9
#define PAR_WF_FIRST_VALUE 10
#define PAR_WF_LAST_VALUE  11
#define PAR_WF_NTH_VALUE   12   /* iN: its second argument */

/* A frame (sqlparse.h: PAR_FRAME_*, PAR_BOUND_*): the start and end
** bound, n of n PRECEDING / FOLLOWING in iStart / iEnd. */
typedef struct ParWinFrame {
  int eType;                 /* PAR_FRAME_ROWS, _RANGE or _GROUPS */
  int eStart, eEnd;
  sqlite3_int64 iStart, iEnd;
} ParWinFrame;

/* One window function call of the select list: result column j of the
** window operator is aFunc[j]. */
typedef struct ParWinFunc {
  int eFunc;                 /* PAR_WF_* */
  ParPlanAgg agg;            /* PAR_WF_AGG: the aggregate, its argument */
  int iArg;                  /* value functions: extraction column of x */
  int iDefault;              /* lag, lead: column of the default, or -1 */
  int iFilter;               /* FILTER (WHERE f): column of "CASE WHEN (f)
                             ** THEN 1 ELSE 0 END" (rows with 0 are not
                             ** stepped), or -1 */
  sqlite3_int64 iN;          /* see PAR_WF_* */
  int iWin;                  /* its window: ParPlanWindow.aWin[iWin] */
  ParWinFrame frame;         /* as SQLite sets it (sqlite3WindowUpdate) */
  char *zText;               /* the call as written, for par_explain */
} ParWinFunc;

/* A window: the calls SQLite evaluates in one pass (window.c: the same
** PARTITION BY, ORDER BY and frame).  Keys are extraction columns. */
typedef struct ParWinDef {
  int nPart; ParSortKey *aPart;   /* PARTITION BY (flags 0) */
  int nOrder; ParSortKey *aOrder; /* ORDER BY */
  char *zText;                    /* for par_explain */
} ParWinDef;

/* The window operator.  SQLite evaluates the window of the first call of
** the select list last (outermost), each window over the rows of the one
** after it, sorted stably by its PARTITION BY and ORDER BY (window.c,
** sqlite3WindowRewrite: a subquery per window, each with an ORDER BY):
** aWin[0] is that outermost window, and its order the result's.  The
** operator's result: the extraction's columns, then one per aFunc. */
typedef struct ParPlanWindow {
  int nWin; ParWinDef *aWin;
  int nFunc; ParWinFunc *aFunc;
  char *zLimit;              /* "SELECT (limit), (offset)", or NULL */
  int nOutCol; int *aOutCol; /* with a final SQL: the result's columns it
                             ** reads (else those of ParPlan.aDirect) */
} ParPlanWindow;

#define PAR_FLAT_MERGED 1   /* ParPlan.mFlat: a subquery in FROM merged */
#define PAR_FLAT_EXISTS 2   /* [NOT] EXISTS terms as [NOT] IN */
#define PAR_FLAT_OR     4   /* a term common to an OR's branches out of it */
#define PAR_FLAT_DECOR  8   /* correlated scalar subqueries of aggregates
                            ** as derived tables of groups, joined */
#define PAR_FLAT_SEMI  16   /* x IN (SELECT y ...) as a join with the
                            ** subquery's distinct values */
#define PAR_FLAT_BIND  32   /* uncorrelated scalar subqueries as parameters
                            ** (ParPlan.apBind) */
#define PAR_FLAT_WITH  64   /* common table expressions written where they
                            ** are used */

struct ParPlan {
  char *zSql;        /* the SELECT as given (its parameters written as
                     ** :par_p<i>: see parParamsRewrite) */
  ParParams *pParams;   /* the values bound to them (NULL: none) */
  int nCol;          /* columns it returns */
  char *zColSig;     /* each column's declared type and the collation of
                     ** the table column it comes from: when it changes,
                     ** so may the view's declaration (view.c) */
  char *zFlat;       /* zSql rewritten (plan_flatten.c): its subquery in
                     ** FROM merged into it as SQLite merges it, and/or
                     ** [NOT] EXISTS terms as [NOT] IN; the plan follows
                     ** it.  NULL: zSql as it is */
  int mFlat;         /* PAR_FLAT_* done in zFlat */
  char *zWhy;        /* NULL: accelerated; else why it runs natively */
  char *zExtract;    /* extraction query: SELECT zExtractCols FROM
                     ** zExtractFrom [WHERE (zExtractWhere)] */
  char *zExtractCols;
  char *zExtractFrom;
  char *zExtractWhere;  /* NULL: no WHERE */
  int nExtractExpr;     /* the expressions of zExtractCols, one by one */
  char **azExtractExpr; /* (0 and NULL: not known; the cache then reuses
                        ** only an entry of exactly these columns) */
  int nKey;          /* extraction columns 0..nKey-1: the GROUP BY keys */
  int *aKeyColl;     /* collation of each key */
  char **azKey;      /* each key's text, for par_explain */
  int nAgg;
  ParPlanAgg *aAgg;  /* result column j<nAgg: aggregate j */
  int nBare;         /* result column nAgg+k: bare column k, the value of */
  int *aBareCol;     /* extraction column aBareCol[k] in the group's row
                     ** SQLite takes bare columns from */
  int nExtractCol;   /* columns of the extraction query */
  int iDecide;       /* the min/max aggregate whose updates choose the row
                     ** of bare columns (SQLite's last in its analysis
                     ** order: select list, ORDER BY, HAVING), or -1 */
  int bHavingKeys;   /* HAVING names a column outside aggregate calls: a
                     ** term SQLite may move into WHERE (see parGroupBy) */
  char *zFinal;      /* final SQL over par_rows(:par_rows) */
  int bFinalWindows; /* it evaluates window functions over the groups */
  int *aDirect;      /* when not NULL the final SQL only picks columns:
                     ** view column i is result column aDirect[i] */
  ParPlanSort *pSort;   /* the sort operator: instead of the group-by (no
                        ** final SQL: aDirect picks the columns), or after
                        ** it (bGroup: the final SQL has no ORDER BY), or
                        ** NULL */
  ParPlanJoin *pJoin;   /* the extraction's FROM is a join the kernels run
                        ** (PAR_OP_JOIN), or NULL: SQLite reads it */
  char *zJoinWhy;       /* ...why not, when the FROM joins tables */
  char *zJoinOnly;      /* the join operator visits the rows in SQLite's
                        ** order and the extraction query does not (its
                        ** plan differs; this says how): where the join
                        ** is left to SQLite, SQLite runs the SELECT */
  int nBind;            /* uncorrelated scalar subqueries written as
                        ** parameters :par_p<iBind+k> (plan_flatten.c
                        ** parBindScalars), each computed by its own plan
                        ** apBind[k] before a run (exec.c), its value set in
                        ** pParams and in the join's scans' */
  int iBind;
  ParPlan *apBind[PAR_MAX_BIND];
  ParPlanWindow *pWindow;   /* the window operator (aDirect picks its
                            ** columns), or NULL */
  int nOp;              /* the pipeline: PAR_OP_* in the order they run */
  int aOp[PAR_MAX_OP];  /* (0 operators: native) */
  int nRef;          /* references: parPlanFree frees at the last (a
                     ** plan the cache keeps is shared: plancache.c) */
};

/* Plan zSql on db, with pParams (may be NULL) bound to the statements
** the planner runs (the plan can depend on the values with STAT4) and
** kept in the plan for every statement derived from it.  Returns
** SQLITE_OK with *ppPlan set (accelerated or not: see zWhy), or an error
** code with *pzErr set (SQLite's own message when the SELECT does not
** prepare). */
int parPlanBuild(sqlite3 *db, const char *zSql, const ParParams *pParams,
                 ParPlan **ppPlan, char **pzErr);

/* zSql, a SELECT prepared as pStmt, with every parameter written as
** ":par_p<i>", i its number in pStmt (sqlite3_malloc; NULL when out of
** memory).  *pnParam gets the highest number, and *pazName an array of
** that many names (sqlite3_malloc, each too): the parameter as first
** written in zSql ("?", "?3", ":since"), NULL for a number it does not
** use.  Free the names with parParamsNamesFree(). */
char *parParamsRewrite(const char *zSql, sqlite3_stmt *pStmt, int *pnParam,
                       char ***pazName);
void parParamsNamesFree(char **azName, int nName);
/* Drop a reference to p; the last frees it. */
void parPlanFree(ParPlan *p);
void parPlanJoinFree(ParPlanJoin *pJoin);
void parPlanWindowFree(ParPlanWindow *pWindow);

/* As parPlanBuild(), through the connection's plan cache (plancache.c):
** the plan may be one kept from an earlier call, shared (read it only),
** when nothing it depends on has changed since. */
int parPlanGet(ParContext *pCtx, sqlite3 *db, const char *zSql, const ParParams *pParams,
               ParPlan **ppPlan, char **pzErr);

/* Drop pCtx's plan cache and the statements it keeps (a parallel view's
** xDisconnect: SQLite calls it before it closes the connection, which
** fails while a statement is left). */
void parPlanCacheDrop(ParContext *pCtx);

/* What par_explain() shows besides the plan. */
typedef struct ParExplainIn {
  const char *zMode;     /* how the extraction reads its rows (extract.c) */
  const char *zModeLong; /* the same with every detail (verbose) */
  sqlite3_int64 nRow;    /* rows of the table read (-1: not known) */
  sqlite3_int64 nMinRow; /* the min_rows and threads settings */
  int nThread;
  char **azParam;        /* parameter i+1 as written (or NULL), to show */
  int nParam;            /* the SELECT's own names instead of :par_p<i> */
  int bVerbose;          /* add the extraction and final SQL */
  char **azJoinMode;     /* how each table of the join is read (or NULL) */
  int bJoinSqlite;       /* join_strategy says SQLite joins the tables */
  const ParPlan *pBind;  /* (parPlanExplain: its bound subqueries, shown as
                         ** they are written) */
} ParExplainIn;

/* The plan as a few lines of text, one per operator, for par_explain(). */
char *parPlanExplain(const ParPlan *p, const ParExplainIn *pIn);

/* The schema an unqualified table name zTab resolves to, as SQLite
** resolves it (temp, main, then attached databases in order), found
** without SQL or pragmas (extract.c); NULL when none has it. */
char *parResolveSchema(sqlite3 *db, const char *zTab);

/* Check that zSql is one read-only SELECT statement; on success
** returns SQLITE_OK and, if ppStmt is not NULL, the prepared statement. */
int parPrepareSelect(sqlite3 *db, const char *zSql, sqlite3_stmt **ppStmt, char **pzErr);

/* The collation (owned by SQLite) of the table column result column iCol
** of pStmt is taken straight from, or NULL when it is not one. */
const char *parOriginColl(sqlite3 *db, sqlite3_stmt *pStmt, int iCol);

/* The letter of PAR_ROWS_AFF for the affinity of declared type zType
** (NULL: none), by SQLite's rules (datatype3.html section 3.1). */
char parAffinityLetter(const char *zType);

/* The first column of the first row of zSql as an integer, or iDefault. */
sqlite3_int64 parQueryInt(sqlite3 *db, const char *zSql, sqlite3_int64 iDefault);

#endif /* PAR_PLAN_H */
