/*
** view.c: parallel views, the par_rows table-valued function that hands a
** batch to SQL, par_view(), par_explain() and par_profile().
**
**   .load ./parallel
**   CREATE VIRTUAL TABLE temp.by_region USING parallel(
**     'SELECT region, sum(amount) AS total, count(*) AS n FROM sales
**      WHERE year >= :since GROUP BY region');
**   SELECT * FROM by_region(2020) ORDER BY total DESC;
**   SELECT * FROM by_region WHERE since = 2020;           -- the same
**   SELECT par_view('by_region', 'SELECT ...');   -- creates or replaces it
**   SELECT par_explain('SELECT region, sum(amount) FROM sales GROUP BY region');
**
** How it works:
**  1. xCreate takes the SELECT (a single-quoted string), prepares it on the
**     caller's connection (so errors, the authorizer and the schema are
**     SQLite's own), declares the view's columns with the names and
**     declared types SQLite reports for it (a duplicate name gets ":1",
**     ":2"... as in a SQLite view), and plans it (plan.c).  Only the temp
**     schema may hold a parallel view: a database file must never carry a
**     definition that runs SQL when someone opens it.
**  2. Parameters.  Each parameter of the SELECT (?, ?NNN, :name, @name,
**     $name) is a HIDDEN column after the view's own, in parameter-number
**     order (so v(2020) binds the first), named after the parameter
**     without its prefix, p<i> for ? and ?NNN.  xBestIndex takes the =,
**     IS or IS NULL constraint on each hidden column; xFilter gets the
**     values and fails, naming the parameter, when one is missing (SQLite
**     would bind NULL: a scan that silently returns nothing is worse).
**     The planner writes parameter i as :par_p<i> in every SQL text it
**     derives (plan.c, parParamsRewrite), and the values travel with the
**     plan: bound to the extraction on the caller's connection or on each
**     worker, part of the cache keys and of the memo's identity, bound to
**     the final SQL.
**  3. Every scan (xFilter) runs the query again, like a view: the
**     extraction query into a batch (batch.c), the group-by operator
**     (groupby.c), then the final SQL over par_rows(:par_rows) with the
**     result batch bound by sqlite3_bind_pointer; the cursor returns that
**     statement's rows.  A SELECT that is not accelerated runs natively
**     and the cursor returns its rows.
**  4. par_rows(batch) serves column j of a batch under the names
**     _p<a><c><j>: <a> an affinity (n none, i INTEGER, r REAL, t TEXT,
**     u NUMERIC) and <c> a collation (b BINARY, n NOCASE, r RTRIM), so
**     comparisons and ORDER BY in the final SQL see the affinity and the
**     collation of the column the value came from.  Any other use of
**     par_rows (or of par_schema_lock, below) is an error.
**  5. par_view(name, sql) runs DROP TABLE (when temp.name is a parallel
**     view) and CREATE VIRTUAL TABLE in one savepoint, so a SELECT bound
**     from an application needs no quoting, and an error leaves the old
**     view.  A table-valued par_query('SELECT ...') cannot exist: an
**     eponymous virtual table has one fixed set of columns.
*/
#include "extract.h"
#include "exec.h"

#include <assert.h>
#include <string.h>


/* Set the error message of a virtual table, freeing the previous one. */
static void parViewSetError(sqlite3_vtab *pVtab, const char *zFmt, const char *zArg){
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = sqlite3_mprintf(zFmt, zArg);
}

/* ==== internal tables: par_rows and par_schema_lock ===========================
**
** Only the extension's own statements may use them, so every other use is
** an error naming the table (PAR_INTERNAL), never rows: par_rows needs its
** argument to be a batch the extension bound with sqlite3_bind_pointer(),
** which no SQL can make, and par_schema_lock needs a view description the
** extension is waiting for (ParContext.pDescJob).  Both modules have no
** xCreate, so CREATE VIRTUAL TABLE cannot name them.  They still show in
** pragma_module_list (and par_sink in pragma_function_list): SQLite 3.40
** has no way to register a module or function that those lists omit. */
#define PAR_INTERNAL "%s is internal to the parallel extension"

/* ==== par_rows: a batch as rows ============================================== */

typedef struct ParRowsCursor {
  sqlite3_vtab_cursor base;
  const ParBatch *pB;      /* not owned */
  sqlite3_int64 iRow;
} ParRowsCursor;

#define PAR_ROWS_NAFF 5
#define PAR_ROWS_NCOLL 3
#define PAR_ROWS_NVAR (PAR_ROWS_NAFF*PAR_ROWS_NCOLL)
#define PAR_ROWS_HIDDEN (PAR_ROWS_MAX*PAR_ROWS_NVAR)

static int parRowsConnect(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                          sqlite3_vtab **ppVtab, char **pzErr){
  static const char *azType[] = { "", " INTEGER", " REAL", " TEXT", " NUMERIC" };
  static const char *azColl[] = { "", " COLLATE NOCASE", " COLLATE RTRIM" };
  sqlite3_str *pStr = sqlite3_str_new(db);
  char *zSql;
  int j, a, k, rc;
  sqlite3_str_appendall(pStr, "CREATE TABLE x(");
  for(j=0; j<PAR_ROWS_MAX; j++){
    for(a=0; a<PAR_ROWS_NAFF; a++){
      for(k=0; k<PAR_ROWS_NCOLL; k++){
        sqlite3_str_appendf(pStr, "_p%c%c%d%s%s, ", PAR_ROWS_AFF[a], PAR_ROWS_COLL[k], j,
                            azType[a], azColl[k]);
      }
    }
  }
  sqlite3_str_appendall(pStr, "batch HIDDEN)");
  zSql = sqlite3_str_finish(pStr);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_declare_vtab(db, zSql);
  sqlite3_free(zSql);
  if( rc ) return rc;
  *ppVtab = sqlite3_malloc(sizeof(sqlite3_vtab));
  if( *ppVtab==0 ) return SQLITE_NOMEM;
  memset(*ppVtab, 0, sizeof(sqlite3_vtab));
  return SQLITE_OK;
}

/* The extension always names the batch (par_rows(:par_rows)): a scan without
** one is not the extension's. */
static int parRowsBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int i, iArg = -1, bUnusable = 0;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *p = &pInfo->aConstraint[i];
    if( p->iColumn!=PAR_ROWS_HIDDEN || p->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( !p->usable ) bUnusable = 1;
    else if( iArg<0 ) iArg = i;
  }
  if( iArg<0 ){
    if( bUnusable ) return SQLITE_CONSTRAINT;   /* another plan may bind it */
    parViewSetError(pVtab, PAR_INTERNAL, "par_rows");
    return SQLITE_ERROR;
  }
  pInfo->aConstraintUsage[iArg].argvIndex = 1;
  pInfo->aConstraintUsage[iArg].omit = 1;
  pInfo->estimatedCost = 1000.0;
  pInfo->estimatedRows = 1000;
  return SQLITE_OK;
}

static int parRowsDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int parRowsOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  ParRowsCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static int parRowsClose(sqlite3_vtab_cursor *cur){
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int parRowsFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                         int argc, sqlite3_value **argv){
  ParRowsCursor *pCur = (ParRowsCursor*)cur;
  pCur->pB = argc>0 ? sqlite3_value_pointer(argv[0], PAR_BATCH_PTR) : 0;
  pCur->iRow = 0;
  if( pCur->pB==0 ){
    /* Any value SQL can make: NULL, a number, text, a blob, another
    ** extension's pointer. */
    parViewSetError(cur->pVtab, PAR_INTERNAL, "par_rows");
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

static int parRowsNext(sqlite3_vtab_cursor *cur){
  ((ParRowsCursor*)cur)->iRow++;
  return SQLITE_OK;
}

static int parRowsEof(sqlite3_vtab_cursor *cur){
  ParRowsCursor *pCur = (ParRowsCursor*)cur;
  return pCur->pB==0 || pCur->iRow>=pCur->pB->nRow;
}

static int parRowsColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  ParRowsCursor *pCur = (ParRowsCursor*)cur;
  int j = i/PAR_ROWS_NVAR;
  if( i<PAR_ROWS_HIDDEN && j<pCur->pB->nCol ){
    parColumnResult(&pCur->pB->aCol[j], pCur->iRow, ctx);
  }
  return SQLITE_OK;
}

static int parRowsRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = ((ParRowsCursor*)cur)->iRow;
  return SQLITE_OK;
}

static sqlite3_module parRowsModule = {
  0,                   /* iVersion */
  0,                   /* xCreate: 0 makes it eponymous-only */
  parRowsConnect,      /* xConnect */
  parRowsBestIndex,    /* xBestIndex: needs the batch argument */
  parRowsDisconnect,   /* xDisconnect */
  0,                   /* xDestroy */
  parRowsOpen,         /* xOpen */
  parRowsClose,        /* xClose */
  parRowsFilter,       /* xFilter: takes the batch, refuses anything else */
  parRowsNext,         /* xNext */
  parRowsEof,          /* xEof */
  parRowsColumn,       /* xColumn */
  parRowsRowid,        /* xRowid */
  0, 0, 0, 0, 0, 0, 0, /* read-only: no xUpdate, transactions, functions */
  0, 0, 0, 0           /* xRename .. xShadowName */
};

/* ==== parallel views =========================================================== */

/* The statements of the application running on a connection (the final
** statements of parallel views aside), each with how many times it has
** run (SQLITE_STMTSTATUS_RUN). */
typedef struct ParRunning {
  int n;
  struct { sqlite3_stmt *p; int nRun; } *a;
  int nDb;
  unsigned *aVersion;        /* each database's SQLITE_FCNTL_DATA_VERSION:
                             ** moves at every commit, any connection's
                             ** (that this one has seen), DDL included */
  sqlite3_int64 nChange;     /* sqlite3_total_changes64() then */
  int bWrite;                /* one of them is not read-only */
} ParRunning;

/* The batches one scan of a view computed, which later scans in the same
** statement execution take (see parViewFilterBusy).  The cursors that
** hold one (computed it, or took it) point to it; the last to let go
** frees it. */
typedef struct ParViewMemo ParViewMemo;
struct ParViewMemo {
  ParBatch *pIn, *pOut;      /* one reference each (pIn NULL: not needed) */
  ParRunning run;            /* when they were computed */
  char *zExtract, *zFinal;   /* the plan's, then ("" for none) */
  char *zParams;             /* the values bound then (parParamsKey) */
  int nHold;                 /* open cursors holding it */
  unsigned nLet;             /* holds let go so far */
  ParViewMemo *pNext;        /* the view's next (older) one */
};

typedef struct ParView {
  sqlite3_vtab base;
  sqlite3 *db;
  ParContext *pCtx;    /* the connection's settings (not owned) */
  ParPlan *pPlan;      /* the plan at creation (each scan plans again) */
  int nCol;            /* columns declared for the view */
  int nBusy;           /* xFilter/xNext of this view running: a scan that
                       ** starts meanwhile means the view reads itself */
  ParViewMemo *pMemo;  /* rows for later scans of one statement, newest
                       ** first */
  char *zSql;          /* the SELECT */
  char *zSem;          /* its columns' affinities and collations as
                       ** declared to SQLite (ParViewDesc.zSem) */
  char *zColSig;       /* the plan's zColSig when zSem was last checked */
  int bBroken;         /* connected while the SELECT did not compile: its
                       ** columns are not known, every use fails (see
                       ** parViewBestIndex), DROP TABLE works */
  char *zName;         /* the view's name, for messages */
  int nParam;          /* highest parameter number of the SELECT */
  char **azParam;      /* each number's parameter as written, or NULL */
  int nHidden;         /* hidden columns nCol.. , one per parameter */
  int *aHidden;        /* hidden column k binds number aHidden[k] */
} ParView;

typedef struct ParViewCursor {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *pStmt;   /* the final SQL, or the native SELECT */
  ParBatch *pIn;         /* extraction batch: pOut borrows its text */
  ParBatch *pOut;        /* group-by result, read by pStmt */
  sqlite3_int64 iRow;
  int bEof;
  const int *aDirect;    /* set: rows come straight from pOut (plan.h) */
  ParPlan *pPlan;        /* this scan's plan (owned: other cursors of the
                         ** same view may scan at the same time), holding
                         ** the values bound to the parameters */
  ParViewMemo *pMemo;    /* the memo it holds, or NULL */
  int bScanned;          /* it computed or took what it holds */
  unsigned nLetAtOpen;   /* pMemo->nLet when it took its hold at xOpen */
  struct ParViewCursor *pNextOpen;   /* ParContext.pViewCursors list */
  ParParams *pParams;    /* the values xFilter bound (NULL: no parameter) */
} ParViewCursor;

/* The module argument zArg without the blanks around it: *pn bytes from
** the returned pointer. */
static const char *parViewArgTrim(const char *zArg, int *pn){
  int n = (int)strlen(zArg);
  while( n>0 && (zArg[n-1]==' ' || zArg[n-1]=='\t' || zArg[n-1]=='\n' || zArg[n-1]=='\r') ) n--;
  while( *zArg==' ' || *zArg=='\t' || *zArg=='\n' || *zArg=='\r' ){ zArg++; n--; }
  *pn = n;
  return zArg;
}

/* Is the module argument one single-quoted string? */
static int parViewArgQuoted(const char *zArg){
  int n;
  const char *z = parViewArgTrim(zArg, &n);
  return n>=2 && z[0]=='\'' && z[n-1]=='\'';
}

/* The SQL text of a quoted module argument (NULL: out of memory). */
static char *parViewArgSql(const char *zArg){
  int n;
  const char *z = parViewArgTrim(zArg, &n);
  return parDequote(z, n);
}

/* What a view needs from its SELECT: the CREATE TABLE text declaring its
** columns (SQLite's names and declared types, duplicates renamed, the
** collations SQLite gives the expressions), their number and the plan.
** Runs statements on db. */
typedef struct ParViewDesc {
  const char *zSql;      /* in: the SELECT */
  int rc;                /* out */
  char *zErr;
  char *zDecl;
  char *zSem;            /* each column's affinity letter and collation:
                         ** what outer queries compare with */
  int nCol;
  ParPlan *pPlan;        /* planned from zPlanSql, nothing bound */
  char *zPlanSql;        /* zSql with its parameters renamed (plan.h,
                         ** parParamsRewrite) */
  int nParam;            /* highest parameter number, 0: none */
  char **azParam;        /* each number's parameter as written, or NULL */
  int nHidden;           /* hidden columns, one per parameter used */
  int *aHidden;          /* hidden column k binds number aHidden[k] */
  int bDone;             /* parViewDescribe ran */
} ParViewDesc;

static void parViewDescClear(ParViewDesc *pD){
  parPlanFree(pD->pPlan);
  sqlite3_free(pD->zDecl);
  sqlite3_free(pD->zSem);
  sqlite3_free(pD->zErr);
  sqlite3_free(pD->zPlanSql);
  parParamsNamesFree(pD->azParam, pD->nParam);
  sqlite3_free(pD->aHidden);
  memset(pD, 0, sizeof(*pD));
}

/* ---- a view column as SQLite sees it: name, affinity, collation ---------- */

/* Does the bracket starting at token t0 ("(" or CASE) end at token t1-1? */
static int parViewBracket(const char *z, const ParToken *a, int t0, int t1){
  int bCase = parTokIs(z, &a[t0], "CASE"), d = 0, k;
  if( !bCase && a[t0].eType!=PT_LP ) return 0;
  for(k=t0; k<t1; k++){
    if( bCase ? parTokIs(z, &a[k], "CASE") : a[k].eType==PT_LP ) d++;
    if( (bCase ? parTokIs(z, &a[k], "END") : a[k].eType==PT_RP) && --d==0 ) break;
  }
  return k==t1-1;
}

/* Are tokens [t0, t1) a name or a dotted chain of names? */
static int parViewNameChain(const ParToken *a, int t0, int t1){
  int k;
  if( t1<=t0 || (t1-t0)%2==0 ) return 0;
  for(k=t0; k<t1; k++){
    if( (k-t0)%2==0 ? (a[k].eType!=PT_ID && a[k].eType!=PT_QID) : a[k].eType!=PT_DOT ){
      return 0;
    }
  }
  return 1;
}

/* Are tokens [t0, t1) one primary expression, possibly with COLLATE
** operators after it: a name or a dotted chain of names, a literal, or a
** bracket (parenthesis, CASE ... END, a call)? */
static int parViewPrimary(const char *z, const ParToken *a, int t0, int t1){
  while( t1-t0>=3 && parTokIs(z, &a[t1-2], "COLLATE") ) t1 -= 2;
  if( t1-t0==1 ) return 1;
  if( t1<=t0 ) return 0;
  return parViewBracket(z, a, t0, t1)
      || (a[t0].eType==PT_ID && a[t0+1].eType==PT_LP && parViewBracket(z, a, t0+1, t1))
      || parViewNameChain(a, t0, t1);
}

/* The AS of "CAST ( x AS type )" when that is tokens [t0, t1), else -1. */
static int parViewCastAs(const char *z, const ParToken *a, int t0, int t1){
  int d = 0, k, iAs = -1;
  if( t1-t0<5 || !parTokIs(z, &a[t0], "CAST") || !parViewBracket(z, a, t0+1, t1) ) return -1;
  for(k=t0+1; k<t1-1; k++){
    if( a[k].eType==PT_LP ) d++;
    if( a[k].eType==PT_RP ) d--;
    if( d==1 && parTokIs(z, &a[k], "AS") ) iAs = k;
  }
  return iAs+1<t1-1 ? iAs : -1;
}

/* Strip from tokens [*pt0, *pt1) what SQLite looks through: outer
** parentheses, and COLLATE on the whole (bColl), unary + and CAST
** (bCast: sqlite3ExprCollSeq looks through those, sqlite3ExprAffinity
** does not). */
static void parViewStrip(const char *z, const ParToken *a, int *pt0, int *pt1, int bColl,
                         int bCast){
  int t0 = *pt0, t1 = *pt1, iAs;
  for(;;){
    if( bColl && t1-t0>=3 && parTokIs(z, &a[t1-2], "COLLATE") && parViewPrimary(z, a, t0, t1-2) ){
      t1 -= 2;
    }else if( t1-t0>=2 && parViewBracket(z, a, t0, t1) && a[t0].eType==PT_LP ){
      t0++;
      t1--;
    }else if( bCast && t1-t0>=2 && a[t0].eType==PT_OP && z[a[t0].i]=='+' && a[t0].n==1 ){
      t0++;
    }else if( bCast && (iAs = parViewCastAs(z, a, t0, t1))>0 ){
      t0 += 2;
      t1 = iAs;
    }else{
      break;
    }
  }
  *pt0 = t0;
  *pt1 = t1;
}

/* pSel prepared again with tokens [t0, t1) alone in place of result
** column iCol, for SQLite to say where that comes from; NULL if it does
** not prepare. */
static sqlite3_stmt *parViewPrepareAlone(sqlite3 *db, const ParSelect *pSel, int iCol,
                                         int t0, int t1){
  const char *z = pSel->zSql;
  const ParSpan *pSpan = &pSel->aCol[iCol].span;
  sqlite3_stmt *pAlone = 0;
  char *zSql = sqlite3_mprintf("%.*s%.*s%s", pSpan->iStart, z,
                               pSel->aTok[t1-1].i + pSel->aTok[t1-1].n - pSel->aTok[t0].i,
                               z + pSel->aTok[t0].i, z + pSpan->iEnd);
  if( zSql==0 || sqlite3_prepare_v2(db, zSql, -1, &pAlone, 0)
   || sqlite3_column_count(pAlone)<=iCol ){
    sqlite3_finalize(pAlone);
    pAlone = 0;
  }
  sqlite3_free(zSql);
  return pAlone;
}

/* The collation SQLite gives result column iCol of pSel (prepared as
** pStmt) when its expression has no COLLATE: a column's own, taken
** straight or through CAST and unary + (sqlite3ExprCollSeq looks through
** them).  For those the SELECT is prepared again with the column alone
** in that place, and SQLite names where it comes from.  pSel NULL: the
** select list is not known, only straight columns are seen.  NULL for
** none. */
static char *parViewColumnColl(sqlite3 *db, const ParSelect *pSel, sqlite3_stmt *pStmt,
                               int iCol){
  sqlite3_stmt *pAlone = 0, *p = pStmt;
  const char *zColl;
  char *zOut = 0;
  if( pSel ){
    int t0 = pSel->aCol[iCol].span.iTok, t1 = pSel->aCol[iCol].span.iTokEnd;
    parViewStrip(pSel->zSql, pSel->aTok, &t0, &t1, 0, 1);
    if( t0!=pSel->aCol[iCol].span.iTok ){
      p = pAlone = parViewPrepareAlone(db, pSel, iCol, t0, t1);
    }
  }
  if( p && (zColl = parOriginColl(db, p, iCol))!=0 ){
    zOut = sqlite3_mprintf("%s", zColl);
  }
  sqlite3_finalize(pAlone);
  return zOut;
}

/* A SQLite view names a column "x COLLATE y" without an alias, in
** parentheses or not, after the column x (its name looks through
** COLLATE); a statement's column name is the expression's text.  The name
** (sqlite3_malloc) for such a column, else NULL. */
static char *parViewCollateName(const ParSelect *pSel, int iCol){
  const ParToken *a = pSel->aTok;
  int t0 = pSel->aCol[iCol].span.iTok, t1 = pSel->aCol[iCol].span.iTokEnd, k, bColl = 0;
  if( pSel->aCol[iCol].zAlias ) return 0;
  /* Only a COLLATE makes the names differ (a column in parentheses is
  ** named after it either way). */
  for(k=t0; k<t1; k++) if( parTokIs(pSel->zSql, &a[k], "COLLATE") ) bColl = 1;
  parViewStrip(pSel->zSql, a, &t0, &t1, 1, 0);
  if( !bColl || !parViewNameChain(a, t0, t1) ) return 0;
  return parDequote(pSel->zSql + a[t1-1].i, a[t1-1].n);
}

/* The type to declare for result column iCol of pSel, whose decltype
** SQLite does not give (an expression), so that it has the affinity SQLite
** gives the expression (sqlite3ExprAffinity): a CAST's type; a column's
** declared type through COLLATE and parentheses (the SELECT is prepared
** again with the column alone in that place).  NULL for none. */
static char *parViewColumnType(sqlite3 *db, const ParSelect *pSel, int iCol){
  const char *z = pSel->zSql, *zType;
  const ParToken *a = pSel->aTok;
  const ParSpan *pSpan = &pSel->aCol[iCol].span;
  int t0 = pSpan->iTok, t1 = pSpan->iTokEnd, iAs;
  sqlite3_stmt *pAlone;
  char *zOut = 0;
  parViewStrip(z, a, &t0, &t1, 1, 0);
  if( (iAs = parViewCastAs(z, a, t0, t1))>0 ){
    return sqlite3_mprintf("%.*s", a[t1-2].i + a[t1-2].n - a[iAs+1].i, z + a[iAs+1].i);
  }
  if( t0==pSpan->iTok && t1==pSpan->iTokEnd ) return 0;
  pAlone = parViewPrepareAlone(db, pSel, iCol, t0, t1);
  if( pAlone && (zType = sqlite3_column_decltype(pAlone, iCol))!=0 ){
    zOut = sqlite3_mprintf("%s", zType);
  }
  sqlite3_finalize(pAlone);
  return zOut;
}

/* The name of the hidden column of parameter zParam: the name without its
** prefix (:since, @since, $since: since), p<i> for ? and ?NNN. */
static char *parViewParamColumn(const char *zParam, int iNum){
  if( zParam[0]=='?' ) return sqlite3_mprintf("p%d", iNum);
  return sqlite3_mprintf("%s", zParam + 1);
}

/* Declare a HIDDEN column for each parameter of pD (after the nCol
** columns named azName), in parameter-number order, which is the order
** SQLite's table-valued syntax binds them in: SELECT * FROM v(2020).  A
** name taken already gets ":1", ":2"... as a repeated column name does. */
static int parViewDeclareParams(sqlite3_str *pDecl, ParViewDesc *pD, char **azName, int nCol){
  char **azHid;
  int i, j, k, rc = SQLITE_OK;
  if( pD->nParam==0 ) return SQLITE_OK;
  azHid = sqlite3_malloc64(sizeof(char*)*pD->nParam);
  pD->aHidden = sqlite3_malloc64(sizeof(int)*pD->nParam);
  if( azHid==0 || pD->aHidden==0 ){
    sqlite3_free(azHid);
    return SQLITE_NOMEM;
  }
  for(i=0; i<pD->nParam && rc==SQLITE_OK; i++){
    char *zBase, *z;
    unsigned cnt = 0;
    if( pD->azParam[i]==0 ) continue;
    zBase = parViewParamColumn(pD->azParam[i], i+1);
    z = zBase ? sqlite3_mprintf("%s", zBase) : 0;
    while( z ){
      int bTaken = 0;
      for(j=0; j<nCol && !bTaken; j++) bTaken = sqlite3_stricmp(azName[j], z)==0;
      for(k=0; k<pD->nHidden && !bTaken; k++) bTaken = sqlite3_stricmp(azHid[k], z)==0;
      if( !bTaken ) break;
      sqlite3_free(z);
      z = sqlite3_mprintf("%s:%u", zBase, ++cnt);
    }
    sqlite3_free(zBase);
    if( z==0 ){ rc = SQLITE_NOMEM; break; }
    azHid[pD->nHidden] = z;
    pD->aHidden[pD->nHidden++] = i+1;
    sqlite3_str_appendf(pDecl, ", \"%w\" HIDDEN", z);
  }
  for(k=0; k<pD->nHidden; k++) sqlite3_free(azHid[k]);
  sqlite3_free(azHid);
  return rc;
}

static void parViewDescribe(sqlite3 *db, ParViewDesc *pD){
  sqlite3_stmt *pStmt = 0;
  sqlite3_str *pDecl = 0, *pSem = 0;
  char **azName = 0;
  ParSelect sel;
  int rc, i, j, nCol = 0, bSel = 0;

  pD->bDone = 1;
  memset(&sel, 0, sizeof(sel));
  rc = parPrepareSelect(db, pD->zSql, &pStmt, &pD->zErr);
  if( rc ) goto done;
  /* Parameters become hidden columns; the plan names them :par_p<i>. */
  pD->zPlanSql = parParamsRewrite(pD->zSql, pStmt, &pD->nParam, &pD->azParam);
  if( pD->zPlanSql==0 ){ rc = SQLITE_NOMEM; goto done; }
  nCol = sqlite3_column_count(pStmt);
  /* The select list as written, for its COLLATE operators. */
  if( parSelectParse(pD->zSql, &sel)!=SQLITE_OK ){ rc = SQLITE_NOMEM; goto done; }
  bSel = sel.nCol==nCol;
  azName = sqlite3_malloc64(sizeof(char*)*nCol);
  pDecl = sqlite3_str_new(db);
  pSem = sqlite3_str_new(db);
  if( azName==0 ){ rc = SQLITE_NOMEM; goto done; }
  memset(azName, 0, sizeof(char*)*nCol);
  sqlite3_str_appendall(pDecl, "CREATE TABLE x(");
  for(i=0; i<nCol && rc==SQLITE_OK; i++){
    const char *zName = sqlite3_column_name(pStmt, i);
    char *zBare = bSel ? parViewCollateName(&sel, i) : 0;
    if( zBare ) zName = zBare;
    const char *zType = sqlite3_column_decltype(pStmt, i);
    char *zExprType;
    unsigned cnt = 0;
    char *z = sqlite3_mprintf("%s", zName ? zName : "");
    for(j=0; z && j<i; j++){
      if( sqlite3_stricmp(azName[j], z)==0 ){
        sqlite3_free(z);
        z = sqlite3_mprintf("%s:%u", zName ? zName : "", ++cnt);
        j = -1;
      }
    }
    sqlite3_free(zBare);
    if( z==0 ){ rc = SQLITE_NOMEM; break; }
    azName[i] = z;
    /* An expression's affinity, as a SQLite view's column has it. */
    zExprType = zType==0 && bSel ? parViewColumnType(db, &sel, i) : 0;
    if( zExprType ) zType = zExprType;
    sqlite3_str_appendf(pDecl, "%s\"%w\"%s%s", i ? ", " : "", z,
                        zType ? " " : "", zType ? zType : "");
    sqlite3_str_appendchar(pSem, 1, parAffinityLetter(zType));
    sqlite3_free(zExprType);
    {
      /* The collation of a SQLite view's column: its expression's explicit
      ** COLLATE, else the collation of a column it is (through CAST or
      ** unary +). */
      int t = bSel ? parExprCollateTok(sel.zSql, sel.aTok, sel.aCol[i].span.iTok,
                                       sel.aCol[i].span.iTokEnd) : -1;
      char *zColl = 0;
      if( t>=0 ){
        char *zTok = parDequote(sel.zSql + sel.aTok[t].i, sel.aTok[t].n);
        sqlite3_str_appendf(pDecl, " COLLATE %.*s", sel.aTok[t].n, sel.zSql + sel.aTok[t].i);
        sqlite3_str_appendf(pSem, "%s|", zTok ? zTok : "?");
        sqlite3_free(zTok);
      }else if( t==-1 && (zColl = parViewColumnColl(db, bSel ? &sel : 0, pStmt, i))!=0
             && sqlite3_stricmp(zColl, "BINARY")!=0 ){
        sqlite3_str_appendf(pDecl, " COLLATE \"%w\"", zColl);
        sqlite3_str_appendf(pSem, "%s|", zColl);
      }else{
        sqlite3_str_appendall(pSem, "BINARY|");
      }
      sqlite3_free(zColl);
    }
  }
  if( rc==SQLITE_OK ) rc = parViewDeclareParams(pDecl, pD, azName, nCol);
  sqlite3_str_appendall(pDecl, ")");
  if( rc ) goto done;
  pD->zDecl = sqlite3_str_finish(pDecl);
  pD->zSem = sqlite3_str_finish(pSem);
  pDecl = pSem = 0;
  if( pD->zDecl==0 || pD->zSem==0 ){ rc = SQLITE_NOMEM; goto done; }
  for(i=0; pD->zSem[i]; i++){
    /* Collation names are case-insensitive. */
    if( pD->zSem[i]>='a' && pD->zSem[i]<='z' ) pD->zSem[i] -= 'a'-'A';
  }
  pD->nCol = nCol;
  rc = parPlanBuild(db, pD->zPlanSql, 0, &pD->pPlan, &pD->zErr);

done:
  if( pDecl ) sqlite3_free(sqlite3_str_finish(pDecl));
  if( pSem ) sqlite3_free(sqlite3_str_finish(pSem));
  if( azName ){
    for(i=0; i<nCol; i++) sqlite3_free(azName[i]);
    sqlite3_free(azName);
  }
  sqlite3_finalize(pStmt);
  parSelectClear(&sel);
  pD->rc = rc;
}

/* ---- par_schema_lock: xCreate's statements under SQLite's schema lock
**
** xCreate runs inside CREATE VIRTUAL TABLE with no schema lock held: if
** another connection changed a schema this connection has cached, the
** first statement xCreate prepares or steps makes SQLite 3.40 drop every
** cached schema, temp included, where the table being created lives, and
** the process crashes later (at DETACH, at close).  SQLite holds its
** schema lock while it asks a virtual table for a plan (xBestIndex), so
** xCreate prepares "SELECT 1 FROM par_schema_lock" and this table's
** xBestIndex describes the view: a stale schema then only makes the
** statements fail with SQLITE_SCHEMA (the schemas are dropped later, when
** nothing is using them), and CREATE VIRTUAL TABLE reports it.  The job
** is handed over in the connection's ParContext. */

typedef struct ParLockVtab {
  sqlite3_vtab base;
  ParContext *pCtx;
  sqlite3 *db;
} ParLockVtab;

static int parLockConnect(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                          sqlite3_vtab **ppVtab, char **pzErr){
  ParLockVtab *p;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(unused)");
  if( rc ) return rc;
  p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->pCtx = (ParContext*)pAux;
  p->db = db;
  *ppVtab = &p->base;
  return SQLITE_OK;
}

/* Only parViewDescribeLocked's statement finds a job waiting.  The job is
** withdrawn while it runs: the SELECT it prepares cannot read
** par_schema_lock (the job again) either. */
static int parLockBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  ParLockVtab *p = (ParLockVtab*)pVtab;
  ParViewDesc *pD = (ParViewDesc*)p->pCtx->pDescJob;
  if( pD==0 ){
    parViewSetError(pVtab, PAR_INTERNAL, "par_schema_lock");
    return SQLITE_ERROR;
  }
  if( !pD->bDone ){
    p->pCtx->pDescJob = 0;
    parViewDescribe(p->db, pD);
    p->pCtx->pDescJob = pD;
  }
  pInfo->estimatedCost = 1;
  return SQLITE_OK;
}

/* The extension prepares its statement and never runs it. */
static int parLockFilter(sqlite3_vtab_cursor *pCur, int idxNum, const char *idxStr,
                         int argc, sqlite3_value **argv){
  parViewSetError(pCur->pVtab, PAR_INTERNAL, "par_schema_lock");
  return SQLITE_ERROR;
}

static int parLockNext(sqlite3_vtab_cursor *pCur){ return SQLITE_OK; }
static int parLockEof(sqlite3_vtab_cursor *pCur){ return 1; }
static int parLockColumn(sqlite3_vtab_cursor *pCur, sqlite3_context *ctx, int i){
  return SQLITE_OK;
}
static int parLockRowid(sqlite3_vtab_cursor *pCur, sqlite_int64 *pRowid){
  *pRowid = 0;
  return SQLITE_OK;
}

static sqlite3_module parLockModule = {
  0,                   /* iVersion */
  0,                   /* xCreate: eponymous only */
  parLockConnect,      /* xConnect */
  parLockBestIndex,    /* xBestIndex: runs the pending ParViewDesc, or
                       ** refuses a use that is not the extension's */
  parRowsDisconnect, 0, /* freeing the table and cursor: as for par_rows */
  parRowsOpen, parRowsClose, parLockFilter, parLockNext, parLockEof,
  parLockColumn, parLockRowid,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
};

/* Describe zSql for xCreate, under the schema lock (above). */
static void parViewDescribeLocked(sqlite3 *db, ParContext *pCtx, ParViewDesc *pD){
  sqlite3_stmt *pLock = 0;
  void *pPrior = pCtx->pDescJob;
  int rc;
  pCtx->pDescJob = pD;
  rc = sqlite3_prepare_v2(db, "SELECT 1 FROM par_schema_lock", -1, &pLock, 0);
  sqlite3_finalize(pLock);
  pCtx->pDescJob = pPrior;
  if( !pD->bDone && rc ){
    pD->rc = rc;
    pD->zErr = sqlite3_mprintf("cannot describe the SELECT: %s", sqlite3_errmsg(db));
  }else if( !pD->bDone ){
    /* The name found an application's table first. */
    pD->rc = SQLITE_ERROR;
    pD->zErr = sqlite3_mprintf("cannot describe the SELECT: a table named "
        "par_schema_lock hides the internal table of the parallel extension");
  }
}

static int parViewDisconnect(sqlite3_vtab *pVtab);

static int parViewInit(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                       sqlite3_vtab **ppVtab, char **pzErr, int bCreate){
  ParView *pView = 0;
  char *zSql = 0;
  ParViewDesc desc;
  int rc, bBroken = 0;

  *ppVtab = 0;
  memset(&desc, 0, sizeof(desc));
  if( sqlite3_stricmp(argv[1], "temp")!=0 ){
    *pzErr = sqlite3_mprintf("parallel views can only be created in the temp "
        "schema: CREATE VIRTUAL TABLE temp.%s USING parallel('SELECT ...')", argv[2]);
    return SQLITE_ERROR;
  }
  if( argc!=4 || !parViewArgQuoted(argv[3]) ){
    *pzErr = sqlite3_mprintf("parallel: expected one argument, a SELECT statement "
                             "in single quotes: USING parallel('SELECT ...')");
    return SQLITE_ERROR;
  }
  zSql = parViewArgSql(argv[3]);
  if( zSql==0 ) return SQLITE_NOMEM;
  desc.zSql = zSql;
  if( bCreate ){
    parViewDescribeLocked(db, (ParContext*)pAux, &desc);
  }else{
    parViewDescribe(db, &desc);      /* SQLite holds the schema lock */
  }
  rc = desc.rc;
  if( rc==SQLITE_SCHEMA ){
    sqlite3_free(desc.zErr);
    desc.zErr = sqlite3_mprintf("a database schema changed since this connection "
                                "last read it; run the statement again");
  }
  if( rc==SQLITE_ERROR && !bCreate ){
    /* The SELECT no longer compiles (a table or column it reads is gone,
    ** changed by another connection): like a SQLite view, the view stays,
    ** every use fails with SQLite's message, and DROP TABLE removes it
    ** (which connects it first). */
    rc = SQLITE_OK;
    bBroken = 1;
    sqlite3_free(desc.zDecl);
    desc.zDecl = sqlite3_mprintf("CREATE TABLE x(\"the view's SELECT does not compile\")");
    if( desc.zDecl==0 ) rc = SQLITE_NOMEM;
    desc.nCol = 1;
    desc.nHidden = 0;
  }
  if( rc ) goto error;
  rc = sqlite3_declare_vtab(db, desc.zDecl);
  if( rc ){
    sqlite3_free(desc.zErr);
    desc.zErr = sqlite3_mprintf("cannot declare the view's columns: %s", sqlite3_errmsg(db));
    goto error;
  }
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);

  pView = sqlite3_malloc(sizeof(*pView));
  if( pView==0 ){ rc = SQLITE_NOMEM; goto error; }
  memset(pView, 0, sizeof(*pView));
  pView->db = db;
  pView->pCtx = (ParContext*)pAux;
  pView->nCol = desc.nCol;
  pView->pPlan = desc.pPlan;
  pView->bBroken = bBroken;
  pView->zSql = zSql;
  pView->zSem = desc.zSem;
  pView->zColSig = desc.pPlan ? sqlite3_mprintf("%s", desc.pPlan->zColSig) : 0;
  pView->zName = sqlite3_mprintf("%s", argv[2]);
  pView->nParam = desc.nParam;
  pView->azParam = desc.azParam;
  pView->nHidden = desc.nHidden;
  pView->aHidden = desc.aHidden;
  zSql = 0;
  desc.pPlan = 0;
  desc.zSem = 0;
  desc.azParam = 0;
  desc.nParam = 0;
  desc.aHidden = 0;
  *ppVtab = &pView->base;
  if( pView->zName==0 ){
    parViewDisconnect(&pView->base);
    *ppVtab = 0;
    rc = SQLITE_NOMEM;
  }
  goto done;

error:
  *pzErr = sqlite3_mprintf("parallel: %s", desc.zErr ? desc.zErr : sqlite3_errstr(rc));
  if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
done:
  parViewDescClear(&desc);
  sqlite3_free(zSql);
  return rc;
}

static int parViewCreate(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                         sqlite3_vtab **ppVtab, char **pzErr){
  return parViewInit(db, pAux, argc, argv, ppVtab, pzErr, 1);
}

static int parViewConnect(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                          sqlite3_vtab **ppVtab, char **pzErr){
  return parViewInit(db, pAux, argc, argv, ppVtab, pzErr, 0);
}

/* Is pStmt the statement of an open cursor of a parallel view? */
static int parViewOwnStmt(const ParContext *pCtx, sqlite3_stmt *pStmt){
  const ParViewCursor *p;
  for(p=pCtx->pViewCursors; p; p=p->pNextOpen){
    if( p->pStmt==pStmt ) return 1;
  }
  return 0;
}

int parAppStatementsBusy(const ParContext *pCtx, sqlite3 *db){
  sqlite3_stmt *pStmt;
  int n = 0;
  for(pStmt=sqlite3_next_stmt(db, 0); pStmt; pStmt=sqlite3_next_stmt(db, pStmt)){
    if( sqlite3_stmt_busy(pStmt) && !parViewOwnStmt(pCtx, pStmt) ) n++;
  }
  return n;
}

/* The application's statements running on db now.  Returns SQLITE_NOMEM
** or SQLITE_OK. */
static int parRunningGet(const ParContext *pCtx, sqlite3 *db, ParRunning *p){
  sqlite3_stmt *pStmt;
  int n = 0, i;
  memset(p, 0, sizeof(*p));
  p->nChange = sqlite3_total_changes64(db);
  for(pStmt=sqlite3_next_stmt(db, 0); pStmt; pStmt=sqlite3_next_stmt(db, pStmt)){
    if( sqlite3_stmt_busy(pStmt) ) n++;
  }
  while( sqlite3_db_name(db, p->nDb) ) p->nDb++;
  /* One block: the statements, then the versions. */
  p->a = sqlite3_malloc64(sizeof(p->a[0])*(n+1) + sizeof(unsigned)*(p->nDb+1));
  if( p->a==0 ) return SQLITE_NOMEM;
  p->aVersion = (unsigned*)&p->a[n+1];
  for(i=0; i<p->nDb; i++){
    p->aVersion[i] = 0;
    sqlite3_file_control(db, sqlite3_db_name(db, i), SQLITE_FCNTL_DATA_VERSION,
                         &p->aVersion[i]);
  }
  for(pStmt=sqlite3_next_stmt(db, 0); pStmt && p->n<n; pStmt=sqlite3_next_stmt(db, pStmt)){
    if( !sqlite3_stmt_busy(pStmt) || parViewOwnStmt(pCtx, pStmt) ) continue;
    p->a[p->n].p = pStmt;
    p->a[p->n].nRun = sqlite3_stmt_status(pStmt, SQLITE_STMTSTATUS_RUN, 0);
    if( !sqlite3_stmt_readonly(pStmt) ) p->bWrite = 1;
    p->n++;
  }
  return SQLITE_OK;
}

static int parRunningSame(const ParRunning *p1, const ParRunning *p2){
  int i;
  if( p1->nChange!=p2->nChange || p1->n!=p2->n || p1->nDb!=p2->nDb ) return 0;
  for(i=0; i<p1->nDb; i++){
    if( p1->aVersion[i]!=p2->aVersion[i] ) return 0;
  }
  for(i=0; i<p1->n; i++){
    if( p1->a[i].p!=p2->a[i].p || p1->a[i].nRun!=p2->a[i].nRun ) return 0;
  }
  return 1;
}

/* Is plan text z (NULL: none) the memo's zMemo ("" for none)? */
static int parSameText(const char *z, const char *zMemo){
  return strcmp(z ? z : "", zMemo)==0;
}

/* Does pOut borrow dictionaries (of the extraction batch)? */
static int parBorrowsText(const ParBatch *pOut){
  int i;
  for(i=0; i<pOut->nCol; i++){
    if( pOut->aCol[i].bBorrowDict && pOut->aCol[i].pDict ) return 1;
  }
  return 0;
}

static void parViewMemoFree(ParViewMemo *pM){
  parBatchFree(pM->pOut);
  parBatchFree(pM->pIn);
  sqlite3_free(pM->run.a);
  sqlite3_free(pM->zExtract);
  sqlite3_free(pM->zFinal);
  sqlite3_free(pM->zParams);
  sqlite3_free(pM);
}

/* pCur lets go of its memo; the last holder frees it. */
static void parViewUnhold(ParView *pView, ParViewCursor *pCur){
  ParViewMemo *pM = pCur->pMemo, **pp;
  pCur->pMemo = 0;
  pCur->bScanned = 0;
  if( pM==0 ) return;
  pM->nLet++;
  if( --pM->nHold>0 ) return;
  for(pp=&pView->pMemo; *pp && *pp!=pM; pp=&(*pp)->pNext){}
  if( *pp ) *pp = pM->pNext;
  parViewMemoFree(pM);
}

/* Keep what pCur just computed for the later scans of its statement
** execution (parViewFilterBusy), pCur its first holder.  Takes pRun's
** array, kept or freed. */
static void parViewMemoKeep(ParView *pView, ParViewCursor *pCur, ParRunning *pRun){
  const ParPlan *pPlan = pCur->pPlan;
  ParViewMemo *pM;
  if( pCur->pOut==0 || pRun->bWrite || parExtractVolatile(pPlan)
   || (pM = sqlite3_malloc(sizeof(*pM)))==0 ){
    sqlite3_free(pRun->a);
    return;
  }
  memset(pM, 0, sizeof(*pM));
  pM->run = *pRun;
  pM->zExtract = sqlite3_mprintf("%s", pPlan->zExtract ? pPlan->zExtract : "");
  pM->zFinal = sqlite3_mprintf("%s", pPlan->zFinal ? pPlan->zFinal : "");
  pM->zParams = parParamsKey(pPlan->pParams);
  pM->pOut = pCur->pOut;
  pM->pOut->nRef++;
  if( parBorrowsText(pCur->pOut) ){
    pM->pIn = pCur->pIn;
    pM->pIn->nRef++;
  }
  if( pM->zExtract==0 || pM->zFinal==0 || pM->zParams==0 ){
    parViewMemoFree(pM);
    return;
  }
  pM->nHold = 1;
  pM->pNext = pView->pMemo;
  pView->pMemo = pM;
  pCur->pMemo = pM;
  pCur->bScanned = 1;
}

static int parViewBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  ParView *pView = (ParView*)pVtab;
  if( pView->bBroken ){
    /* SQLite's message now; when the SELECT compiles again, the columns
    ** SQLite knows for the view are still not its columns. */
    char *zErr = 0;
    int rc = parPrepareSelect(pView->db, pView->zSql, 0, &zErr);
    sqlite3_free(pVtab->zErrMsg);
    pVtab->zErrMsg = rc
        ? sqlite3_mprintf("parallel: %s", zErr ? zErr : sqlite3_errstr(rc))
        : sqlite3_mprintf("parallel: the view's SELECT did not compile when this "
                          "connection last read the schema; drop the view and create it again");
    sqlite3_free(zErr);
    return SQLITE_ERROR;
  }
  /* Every scan computes the whole SELECT; constraints on its columns are
  ** left to SQLite.  Each hidden column takes the value of its first
  ** usable = or IS constraint (table-valued syntax, v(2020), makes =
  ** constraints) as its parameter's, in argv order; idxStr lists the
  ** hidden columns those are, as numbers separated by commas.  A plan
  ** that leaves a parameter unbound costs so much that SQLite takes it
  ** only when no other exists, and its scan fails (parViewFilter). */
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 1000;
  if( pView->nHidden>0 ){
    sqlite3_str *pStr = sqlite3_str_new(0);
    int i, k, nArg = 0, nBound = 0;
    for(k=0; k<pView->nHidden; k++){
      int iCol = pView->nCol + k;
      for(i=0; i<pInfo->nConstraint; i++){
        const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
        if( pC->iColumn!=iCol || !pC->usable ) continue;
        if( pC->op==SQLITE_INDEX_CONSTRAINT_ISNULL ){
          /* WHERE p IS NULL: NULL, with no value to pass ("n"). */
          pInfo->aConstraintUsage[i].omit = 1;
          sqlite3_str_appendf(pStr, "%sn%d", nBound ? "," : "", k);
        }else if( pC->op==SQLITE_INDEX_CONSTRAINT_EQ || pC->op==SQLITE_INDEX_CONSTRAINT_IS ){
          pInfo->aConstraintUsage[i].argvIndex = ++nArg;
          pInfo->aConstraintUsage[i].omit = 1;
          sqlite3_str_appendf(pStr, "%s%d", nBound ? "," : "", k);
        }else{
          continue;
        }
        nBound++;
        break;
      }
    }
    if( sqlite3_str_errcode(pStr) ){
      sqlite3_free(sqlite3_str_finish(pStr));
      return SQLITE_NOMEM;
    }
    pInfo->idxStr = sqlite3_str_finish(pStr);     /* NULL: none bound */
    pInfo->needToFreeIdxStr = 1;
    pInfo->idxNum = nBound;
    if( nBound<pView->nHidden ){
      pInfo->estimatedCost = 1e30;
      pInfo->estimatedRows = (sqlite3_int64)1 << 40;
    }
  }
  return SQLITE_OK;
}

static int parViewDisconnect(sqlite3_vtab *pVtab){
  ParView *pView = (ParView*)pVtab;
  /* Every cursor is closed by now, and with it every memo. */
  assert( pView->pMemo==0 );
  /* Before SQLite closes the connection: the cache keeps statements. */
  parPlanCacheDrop(pView->pCtx);
  parPlanFree(pView->pPlan);
  sqlite3_free(pView->base.zErrMsg);
  sqlite3_free(pView->zName);
  parParamsNamesFree(pView->azParam, pView->nParam);
  sqlite3_free(pView->aHidden);
  sqlite3_free(pView->zSql);
  sqlite3_free(pView->zSem);
  sqlite3_free(pView->zColSig);
  sqlite3_free(pView);
  return SQLITE_OK;
}

static int parViewOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  ParView *pView = (ParView*)pVtab;
  ParContext *pCtx = pView->pCtx;
  ParViewCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCur = &pCur->base;
  pCur->pNextOpen = pCtx->pViewCursors;
  pCtx->pViewCursors = pCur;
  /* SQLite opens the next scan's cursor before it closes the last one's:
  ** a cursor opened while the same statements run holds the memo too, so
  ** that it outlives the old one (its first scan checks again whether it
  ** may use it). */
  if( pView->pMemo ){
    ParRunning run;
    ParViewMemo *pM;
    if( parRunningGet(pCtx, pView->db, &run)==SQLITE_OK ){
      for(pM=pView->pMemo; pM && !parRunningSame(&run, &pM->run); pM=pM->pNext){}
      if( pM ){
        pCur->pMemo = pM;
        pCur->nLetAtOpen = pM->nLet;
        pM->nHold++;
      }
    }
    sqlite3_free(run.a);
  }
  return SQLITE_OK;
}

static void parViewCursorReset(ParViewCursor *pCur){
  sqlite3_finalize(pCur->pStmt);
  pCur->pStmt = 0;
  parBatchFree(pCur->pOut);
  parBatchFree(pCur->pIn);
  pCur->pOut = pCur->pIn = 0;
  pCur->iRow = 0;
  pCur->bEof = 1;
  pCur->aDirect = 0;
  parPlanFree(pCur->pPlan);
  pCur->pPlan = 0;
}

static int parViewClose(sqlite3_vtab_cursor *cur){
  ParViewCursor *pCur = (ParViewCursor*)cur, **pp;
  ParView *pView = (ParView*)cur->pVtab;
  parViewUnhold(pView, pCur);
  parViewCursorReset(pCur);
  parParamsFree(pCur->pParams);
  for(pp=&pView->pCtx->pViewCursors; *pp && *pp!=pCur; pp=&(*pp)->pNextOpen){}
  if( *pp ) *pp = pCur->pNextOpen;
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* Step the cursor's statement to its next row. */
static int parViewStep(ParViewCursor *pCur){
  ParView *pView = (ParView*)pCur->base.pVtab;
  int rc = sqlite3_step(pCur->pStmt);
  if( rc==SQLITE_ROW ){
    pCur->iRow++;
    return SQLITE_OK;
  }
  pCur->bEof = 1;
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  rc = sqlite3_reset(pCur->pStmt);
  parViewSetError(&pView->base, "%s", sqlite3_errmsg(pView->db));
  return rc ? rc : SQLITE_ERROR;
}

static int parViewFilterBusy(sqlite3_vtab_cursor *cur);

/* Inside CREATE TABLE ... AS SELECT (the row for the new table is already
** in the schema table, still empty), the statements a scan runs must not
** make SQLite reload a schema another connection changed: with it the
** temp schema, from that row ("malformed database schema").  Here, each
** schema the connection has is checked by a statement that does not
** prepare itself again (sqlite3_prepare): a stale one makes SQLite drop
** its schemas, without reloading them; the scan then answers
** SQLITE_SCHEMA, the CREATE is rolled back and prepared again (by
** sqlite3_step), now on the current schemas.  1 when that happened. */
static int parViewSchemaMoved(const ParContext *pCtx, sqlite3 *db){
  sqlite3_stmt *pStmt;
  int i, bCreate = 0, bMoved = 0;
  for(pStmt=sqlite3_next_stmt(db, 0); pStmt; pStmt=sqlite3_next_stmt(db, pStmt)){
    const char *z = sqlite3_sql(pStmt);
    if( !sqlite3_stmt_busy(pStmt) || parViewOwnStmt(pCtx, pStmt) || z==0 ) continue;
    while( *z==' ' || *z=='\t' || *z=='\n' || *z=='\r' ) z++;
    if( sqlite3_strnicmp(z, "CREATE", 6)==0 ) bCreate = 1;
  }
  for(i=0; bCreate && !bMoved && sqlite3_db_name(db, i); i++){
    char *zSql;
    if( i==1 ) continue;                          /* temp: this statement's */
    zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema LIMIT 0", sqlite3_db_name(db, i));
    pStmt = 0;
    if( zSql && sqlite3_prepare(db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
      sqlite3_step(pStmt);
      bMoved = sqlite3_reset(pStmt)==SQLITE_SCHEMA;
    }
    sqlite3_finalize(pStmt);
    sqlite3_free(zSql);
  }
  return bMoved;
}

/* A NULL sqlite3_value of our own (sqlite3_value_free frees it), or NULL
** when out of memory: SQLite 3.40 has no constructor, so it is a copy
** of a NULL column of a statement on db. */
static sqlite3_value *parNullValue(sqlite3 *db){
  sqlite3_value *pVal = 0;
  sqlite3_stmt *pStmt = 0;
  if( sqlite3_prepare_v2(db, "SELECT NULL", -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    pVal = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
  return pVal;
}

/* The values xFilter got (parViewBestIndex chose which hidden column
** each is) as the parameters of pCur's next scan; an error naming the
** first parameter left unbound. */
static int parViewBindArgs(ParView *pView, ParViewCursor *pCur, int idxNum,
                           const char *idxStr, int argc, sqlite3_value **argv){
  ParParams *p;
  int i, k;
  parParamsFree(pCur->pParams);
  pCur->pParams = 0;
  p = parParamsNew(pView->nParam);
  if( p==0 ) return SQLITE_NOMEM;
  pCur->pParams = p;
  for(i=0; idxStr && *idxStr; ){
    int bNull = *idxStr=='n';
    if( bNull ) idxStr++;
    k = 0;
    while( *idxStr>='0' && *idxStr<='9' ) k = k*10 + (*idxStr++ - '0');
    if( *idxStr==',' ) idxStr++;
    if( k<pView->nHidden && (bNull || i<argc) ){
      int iNum = pView->aHidden[k];
      sqlite3_value_free(p->apVal[iNum-1]);
      p->apVal[iNum-1] = bNull ? parNullValue(pView->db) : sqlite3_value_dup(argv[i]);
      if( p->apVal[iNum-1]==0 ) return SQLITE_NOMEM;
    }
    if( !bNull ) i++;
  }
  for(k=0; k<pView->nHidden; k++){
    int iNum = pView->aHidden[k];
    if( p->apVal[iNum-1]==0 ){
      char *zErr = sqlite3_mprintf("parallel view %s: parameter %s is not bound (SELECT * "
          "FROM %s(...), or WHERE with = on its hidden column)", pView->zName,
          pView->azParam[iNum-1], pView->zName);
      sqlite3_free(pView->base.zErrMsg);
      pView->base.zErrMsg = zErr;
      return zErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
  }
  return SQLITE_OK;
}

/* A scan that ends interrupted may have planned under the interrupt (a
** progress handler, sqlite3_interrupt()): the planner's read of
** pragma_function_list then fails, the planner takes every function for
** the application's, and the plan runs natively.  The connection's plan
** cache would hand that plan to every later scan (natively, memory_mb
** not enforced) until the schema changed, so it drops what it kept: the
** next scan plans again. */
static void parViewInterrupted(ParView *pView, int rc){
  if( (rc & 0xff)==SQLITE_INTERRUPT ) parPlanCacheDrop(pView->pCtx);
}

static int parViewFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                         int argc, sqlite3_value **argv){
  ParView *pView = (ParView*)cur->pVtab;
  int rc;
  if( parViewSchemaMoved(pView->pCtx, pView->db) ) return SQLITE_SCHEMA;
  if( pView->nBusy>0 ){
    parViewSetError(&pView->base, "a parallel view cannot read itself (%s)",
                    pView->pPlan->zSql);
    return SQLITE_ERROR;
  }
  if( pView->nHidden>0 ){
    rc = parViewBindArgs(pView, (ParViewCursor*)cur, idxNum, idxStr, argc, argv);
    if( rc ) return rc;
  }
  pView->nBusy++;
  rc = parViewFilterBusy(cur);
  pView->nBusy--;
  parViewInterrupted(pView, rc);
  /* A memory_mb limit (SQLITE_FULL inside) is the scan's error alone:
  ** SQLITE_FULL would make SQLite roll back the caller's transaction. */
  return rc==SQLITE_FULL ? SQLITE_ERROR : rc;
}

/* A table the view reads was created again on this connection with other
** declared types or collations (SQLite then keeps the virtual table
** connected, with the columns declared at first): the view's columns
** would compare and convert as before, where a SQLite view follows.
** When the columns it would declare now differ, the scan fails; else the
** new signature is noted. */
static int parViewRedeclared(ParView *pView, const ParPlan *pNew, char **pzErr){
  ParViewDesc d;
  int rc;
  memset(&d, 0, sizeof(d));
  d.zSql = pView->zSql;
  parViewDescribe(pView->db, &d);
  rc = d.rc;
  if( rc ){
    *pzErr = d.zErr;
    d.zErr = 0;
  }else if( pView->zSem==0 || strcmp(d.zSem, pView->zSem)!=0 ){
    *pzErr = sqlite3_mprintf("the view's columns now have other affinities or "
                             "collations (a table it reads was created again); drop "
                             "and create the view again");
    rc = SQLITE_ERROR;
  }else{
    char *z = sqlite3_mprintf("%s", pNew->zColSig);
    if( z==0 ){
      rc = SQLITE_NOMEM;
    }else{
      sqlite3_free(pView->zColSig);
      pView->zColSig = z;
    }
  }
  parViewDescClear(&d);
  return rc;
}

static int parViewFilterBusy(sqlite3_vtab_cursor *cur){
  ParViewCursor *pCur = (ParViewCursor*)cur;
  ParView *pView = (ParView*)cur->pVtab;
  char *zErr = 0;
  int rc, bServe;
  ParStamp stamp;
  ParRunning run;

  /* SQLite scans a view again within one statement (a correlated
  ** subquery, the inner side of a nested loop: SQLite 3.40 opens a new
  ** cursor each time, before it closes the last).  A later scan takes the
  ** first scan's rows, as SQLite computes such a subquery once.  Only the
  ** cursor that computed them, or one opened while they were held that
  ** saw a holder close before its scan (SQLite's next-scan pattern: open
  ** the new cursor, close the old, scan), takes them, so they never leave
  ** the statement execution that computed them; and only while the
  ** application runs the same statements in the same executions, none of
  ** which writes (a writing statement's own changes are not counted until
  ** it ends, and SQLite runs its subqueries again in each trigger), with
  ** no change counted and no commit seen since, and the view plans to the
  ** same SQL reading nothing volatile (random(), the time now).  Other
  ** connections' commits wait for the next execution, as they do for
  ** SQLite's own statements. */
  /* The stamp before anything runs on the connection (planning does); the
  ** statements running after it (its read of main can see a commit, which
  ** moves main's data version: then, not at the next scan). */
  parExtractStamp(pView->pCtx, pView->db, &stamp);
  if( parRunningGet(pView->pCtx, pView->db, &run) ) return SQLITE_NOMEM;
  bServe = pCur->pMemo && !run.bWrite
        && (pCur->bScanned || pCur->nLetAtOpen!=pCur->pMemo->nLet)
        && parRunningSame(&run, &pCur->pMemo->run);
  if( !bServe ) parViewUnhold(pView, pCur);
  parViewCursorReset(pCur);
  pCur->bEof = 0;
  /* Plan again: tables, indexes and collations may have changed since
  ** the last scan, and the plan depends on all of them (the plan cache
  ** knows when they have not: plancache.c). */
  {
    ParPlan *pNew = 0;
    rc = parPlanGet(pView->pCtx, pView->db, pView->pPlan->zSql, pCur->pParams, &pNew, &zErr);
    if( rc==SQLITE_OK && pNew->nCol!=pView->nCol ){
      parPlanFree(pNew);
      zErr = sqlite3_mprintf("the view's SELECT now returns a different number of "
                             "columns; drop and create the view again");
      rc = SQLITE_ERROR;
    }
    if( rc==SQLITE_OK
     && (pView->zColSig==0 || strcmp(pNew->zColSig, pView->zColSig)!=0) ){
      rc = parViewRedeclared(pView, pNew, &zErr);
      if( rc ) parPlanFree(pNew);
    }
    if( rc ){
      sqlite3_free(run.a);
      parViewUnhold(pView, pCur);
      parViewSetError(&pView->base, "%s", zErr ? zErr : sqlite3_errstr(rc));
      sqlite3_free(zErr);
      return rc;
    }
    pCur->pPlan = pNew;
  }
  if( bServe ){
    char *zParams = parParamsKey(pCur->pPlan->pParams);
    bServe = pCur->pPlan->zWhy==0 && zParams && strcmp(zParams, pCur->pMemo->zParams)==0
          && parSameText(pCur->pPlan->zExtract, pCur->pMemo->zExtract)
          && parSameText(pCur->pPlan->zFinal, pCur->pMemo->zFinal);
    sqlite3_free(zParams);
    if( !bServe ) parViewUnhold(pView, pCur);
  }
  if( bServe ){
    ParViewMemo *pM = pCur->pMemo;
    pCur->pIn = pM->pIn;
    pCur->pOut = pM->pOut;
    if( pCur->pIn ) pCur->pIn->nRef++;
    pCur->pOut->nRef++;
    pCur->bScanned = 1;
    sqlite3_free(run.a);
  }else{
    ParExec x;
    rc = parExecRun(pView->pCtx, pView->db, pCur->pPlan, &stamp, &x, &zErr);
    pCur->pIn = x.pIn;
    pCur->pOut = x.pOut;
    sqlite3_free(x.zJoinSqlite);     /* (par_profile shows it; a scan not) */
    if( rc ){
      sqlite3_free(run.a);
      parViewSetError(&pView->base, "%s", zErr ? zErr : sqlite3_errstr(rc));
      sqlite3_free(zErr);
      return rc;
    }
    /* A read that failed (an SQL function's error, or an interrupt the
    ** workers met) runs natively this time only: the next scan tries
    ** again rather than keep that answer. */
    if( !(x.bNative && x.iNativeOp==0) ) parViewMemoKeep(pView, pCur, &run);
    else sqlite3_free(run.a);
  }
  if( pCur->pOut && pCur->pPlan->aDirect ){
    pCur->aDirect = pCur->pPlan->aDirect;
    pCur->bEof = pCur->pOut->nRow==0;
    return SQLITE_OK;
  }
  rc = parExecFinalStmt(pView->db, pCur->pPlan, pCur->pOut, &pCur->pStmt);
  if( rc ){
    parViewSetError(&pView->base, "%s", sqlite3_errmsg(pView->db));
    return rc;
  }
  return parViewStep(pCur);
}

static int parViewNext(sqlite3_vtab_cursor *cur){
  ParViewCursor *pCur = (ParViewCursor*)cur;
  ParView *pView = (ParView*)cur->pVtab;
  int rc;
  if( pCur->aDirect ){
    pCur->iRow++;
    pCur->bEof = pCur->iRow >= pCur->pOut->nRow;
    return SQLITE_OK;
  }
  pView->nBusy++;
  rc = parViewStep(pCur);
  pView->nBusy--;
  parViewInterrupted(pView, rc);
  return rc;
}

static int parViewEof(sqlite3_vtab_cursor *cur){
  return ((ParViewCursor*)cur)->bEof;
}

/* Rows ahead of the one read whose TEXT entries are fetched into the cache
** (parViewColumn). */
#define PAR_VIEW_AHEAD 16

static int parViewColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  ParViewCursor *pCur = (ParViewCursor*)cur;
  ParView *pView = (ParView*)cur->pVtab;
  if( i>=pView->nCol ){
    /* A hidden column: the value bound to its parameter. */
    int k = i - pView->nCol;
    if( k<pView->nHidden && pCur->pParams ){
      sqlite3_result_value(ctx, pCur->pParams->apVal[pView->aHidden[k]-1]);
    }
    return SQLITE_OK;
  }
  if( pCur->aDirect ){
    const ParColumn *pCol = &pCur->pOut->aCol[pCur->aDirect[i]];
    sqlite3_int64 iRow = pCur->iRow;
    if( pCol->pDict && (pCol->eStore==PAR_COL_TEXT || pCol->eStore==PAR_COL_MIXED) ){
      /* TEXT (or MIXED) rows point into the column's dictionary in the
      ** order the values were extracted, so a result's rows (in group
      ** order) read entries at random: cache misses on aOff, aLen and the
      ** bytes, most of the cost of handing a row of text to SQLite.  Ask
      ** for the entry of row iRow+AHEAD and for the bytes of row
      ** iRow+AHEAD/2 (whose aOff was asked for AHEAD/2 rows ago).  The
      ** code of a NULL (or a number's bits) may be any number: only a code
      ** below nEntry is followed.  Written here, not in a helper: GCC 12
      ** (ipa-modref) drops a call to a function that only prefetches. */
      const ParDict *pD = pCol->pDict;
      sqlite3_int64 nRow = pCur->pOut->nRow, r;
      uint32_t c;
      if( (r = iRow + PAR_VIEW_AHEAD) < nRow ){
        c = pCol->eStore==PAR_COL_TEXT ? pCol->aCode[r] : (uint32_t)pCol->aVal[r];
        if( c < pD->nEntry ){
          __builtin_prefetch(&pD->aOff[c]);
          __builtin_prefetch(&pD->aLen[c]);
        }
      }
      if( (r = iRow + PAR_VIEW_AHEAD/2) < nRow && pD->aByte ){
        c = pCol->eStore==PAR_COL_TEXT ? pCol->aCode[r] : (uint32_t)pCol->aVal[r];
        if( c < pD->nEntry ) __builtin_prefetch(pD->aByte + pD->aOff[c]);
      }
    }else if( pCol->aNull==0 ){
      /* The common cases without the call to batch.c. */
      if( pCol->eStore==PAR_COL_INT ){
        sqlite3_result_int64(ctx, pCol->aInt[iRow]);
        return SQLITE_OK;
      }
      if( pCol->eStore==PAR_COL_REAL ){
        sqlite3_result_double(ctx, pCol->aReal[iRow]);
        return SQLITE_OK;
      }
    }
    parColumnResult(pCol, iRow, ctx);
    return SQLITE_OK;
  }
  sqlite3_result_value(ctx, sqlite3_column_value(pCur->pStmt, i));
  return SQLITE_OK;
}

static int parViewRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = ((ParViewCursor*)cur)->iRow;
  return SQLITE_OK;
}

static sqlite3_module parViewModule = {
  0,                   /* iVersion */
  parViewCreate,       /* xCreate: temp only; prepare, declare, plan
                       ** (under SQLite's schema lock: par_schema_lock) */
  parViewConnect,      /* xConnect: the same (SQLite holds the lock) */
  parViewBestIndex,    /* xBestIndex: full scans, SQLite filters */
  parViewDisconnect,   /* xDisconnect */
  parViewDisconnect,   /* xDestroy: nothing stored outside memory */
  parViewOpen,         /* xOpen */
  parViewClose,        /* xClose */
  parViewFilter,       /* xFilter: runs the plan */
  parViewNext,         /* xNext */
  parViewEof,          /* xEof */
  parViewColumn,       /* xColumn */
  parViewRowid,        /* xRowid: the row's position */
  0, 0, 0, 0, 0, 0, 0, /* read-only: no xUpdate, transactions, functions */
  0, 0, 0, 0           /* xRename .. xShadowName */
};

/* ==== par_explain, par_profile ===================================================== */

/* Plan the SELECT zSql given to par_explain or par_profile: its parameters
** renamed as a view's are, argv[0..nArg-1] bound to numbers 1..nArg (the
** others read as NULL, as in SQLite); *pazParam and *pnParam (may be
** NULL) get the parameters as written.  *pzErr as parPlanBuild's. */
static int parPlanText(sqlite3 *db, const char *zSql, int nArg, sqlite3_value **argv,
                       ParPlan **ppPlan, char ***pazParam, int *pnParam, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  ParParams *p = 0;
  char *zPlanSql = 0, **azParam = 0;
  int nParam = 0, rc, i;
  *ppPlan = 0;
  rc = parPrepareSelect(db, zSql, &pStmt, pzErr);
  if( rc ) return rc;
  zPlanSql = parParamsRewrite(zSql, pStmt, &nParam, &azParam);
  sqlite3_finalize(pStmt);
  if( zPlanSql==0 ) return SQLITE_NOMEM;
  if( nArg>nParam ){
    *pzErr = sqlite3_mprintf("%d value%s for a SELECT of %d parameter%s", nArg,
                             nArg==1 ? "" : "s", nParam, nParam==1 ? "" : "s");
    rc = SQLITE_ERROR;
  }else if( nArg>0 ){
    p = parParamsNew(nParam);      /* borrows argv's values */
    if( p==0 ){
      rc = SQLITE_NOMEM;
    }else{
      for(i=0; i<nArg; i++){
        /* A number the SELECT does not use binds nothing. */
        if( azParam[i] ) p->apVal[i] = argv[i];
      }
    }
  }
  if( rc==SQLITE_OK ) rc = parPlanBuild(db, zPlanSql, p, ppPlan, pzErr);
  sqlite3_free(p);               /* the plan holds copies of the values */
  sqlite3_free(zPlanSql);
  if( rc==SQLITE_OK && pazParam ){
    *pazParam = azParam;
    *pnParam = nParam;
  }else{
    parParamsNamesFree(azParam, nParam);
  }
  return rc;
}

/* par_explain's text for pPlan (a subquery in FROM's own plan too: the
** join's line for it holds that plan's text). */
static char *viewExplainPlan(ParContext *pCtx, sqlite3 *db, ParPlan *pPlan, char **azParam,
                             int nParam, int bVerbose){
  char *zOut;
  ParExplainIn in;
  sqlite3_int64 nRow = pPlan->zWhy ? -1 : parPlanRowidSpan(db, pPlan);
  char *zMode = pPlan->zWhy ? 0 : parExtractExplain(pCtx, db, pPlan, nRow, 0);
  char *zModeLong = pPlan->zWhy || !bVerbose ? 0
                  : parExtractExplain(pCtx, db, pPlan, nRow, 1);
  memset(&in, 0, sizeof(in));
  in.zMode = zMode;
  in.zModeLong = zModeLong;
  in.nRow = nRow;
  in.nMinRow = pCtx->nMinRow;
  in.nThread = nRow>=0 ? parThreadsFor(pCtx, nRow) : pCtx->nThread;   /* the kernels' */
  in.azParam = azParam;
  in.nParam = nParam;
  in.bVerbose = bVerbose;
  in.bJoinSqlite = pCtx->eJoinStrategy==PAR_JOIN_SQLITE;
  if( pPlan->pJoin && !in.bJoinSqlite ){
    /* How each table of the join is read. */
    int t;
    in.azJoinMode = sqlite3_malloc64(sizeof(char*)*pPlan->pJoin->nTab);
    for(t=0; in.azJoinMode && t<pPlan->pJoin->nTab; t++){
      ParPlan *pScan = pPlan->pJoin->aTab[t].pScan;
      in.azJoinMode[t] = pPlan->pJoin->aTab[t].pSub
        ? viewExplainPlan(pCtx, db, pPlan->pJoin->aTab[t].pSub, azParam, nParam, 0)
        : parExtractExplain(pCtx, db, pScan, parPlanRowidSpan(db, pScan), 0);
    }
    if( bVerbose ){
      /* The extraction mode: each table's, in full. */
      sqlite3_str *pM = sqlite3_str_new(db);
      for(t=0; t<pPlan->pJoin->nTab; t++){
        ParPlan *pScan = pPlan->pJoin->aTab[t].pSub ? pPlan->pJoin->aTab[t].pSub
                       : pPlan->pJoin->aTab[t].pScan;
        char *z = parExtractExplain(pCtx, db, pScan, parPlanRowidSpan(db, pScan), 1);
        sqlite3_str_appendf(pM, "%s%s: %s", t ? "; " : "", pPlan->pJoin->aTab[t].zName,
                            z ? z : "?");
        sqlite3_free(z);
      }
      sqlite3_free(zModeLong);
      zModeLong = sqlite3_str_finish(pM);
      in.zModeLong = zModeLong;
    }
  }
  zOut = parPlanExplain(pPlan, &in);
  if( in.azJoinMode ){
    int t;
    for(t=0; t<pPlan->pJoin->nTab; t++) sqlite3_free(in.azJoinMode[t]);
    sqlite3_free(in.azJoinMode);
  }
  sqlite3_free(zMode);
  sqlite3_free(zModeLong);
  return zOut;
}

/* par_explain(sql [, 'verbose']): the plan as a few short lines, one per
** operator; 'verbose' adds the SQL of the extraction and of the final
** query. */
static void parExplainFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  ParContext *pCtx = (ParContext*)sqlite3_user_data(ctx);
  const char *zSql = parTextArg(argv[0]);
  ParPlan *pPlan = 0;
  char *zErr = 0, *zOut, **azParam = 0;
  int rc, bVerbose = 0, nParam = 0;
  if( zSql==0 ){
    sqlite3_result_error(ctx, "par_explain: the argument must be a SELECT statement", -1);
    return;
  }
  if( argc==2 ){
    const char *zOpt = parTextArg(argv[1]);
    if( zOpt==0 || sqlite3_stricmp(zOpt, "verbose")!=0 ){
      char *zVal = parArgText(argv[1]);
      char *zMsg = sqlite3_mprintf("par_explain: the second argument must be "
                                   "'verbose', not %s", zVal ? zVal : "that");
      sqlite3_result_error(ctx, zMsg ? zMsg : "par_explain: bad argument", -1);
      sqlite3_free(zMsg);
      sqlite3_free(zVal);
      return;
    }
    bVerbose = 1;
  }
  rc = parPlanText(db, zSql, 0, 0, &pPlan, &azParam, &nParam, &zErr);
  if( rc ){
    char *zMsg = sqlite3_mprintf("par_explain: %s", zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_result_error(ctx, zMsg ? zMsg : "par_explain: error", -1);
    sqlite3_free(zMsg);
    sqlite3_free(zErr);
    return;
  }
  zOut = viewExplainPlan(pCtx, db, pPlan, azParam, nParam, bVerbose);
  parParamsNamesFree(azParam, nParam);
  parPlanFree(pPlan);
  if( zOut==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, zOut, -1, sqlite3_free);
}

/* par_profile(sql [, value...]): run the SELECT through the parallel
** plan once, the values bound to its parameters by number, and report
** where the time went. */
static void parProfileFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  ParContext *pCtx = (ParContext*)sqlite3_user_data(ctx);
  const char *zSql = argc>0 ? parTextArg(argv[0]) : 0;
  ParPlan *pPlan = 0;
  sqlite3_stmt *pStmt = 0;
  char *zErr = 0;
  double t0, tFinal = 0;
  sqlite3_int64 nRow = 0;
  int rc, bNative, i;
  static const char *azMode[] = { "serial", "parallel", "cached", "parallel" };
  static const char *azRanges[] = { "-", "rowid bounds", "-", "row counts" };
  ParStamp stamp;
  ParExec x;

  memset(&x, 0, sizeof(x));
  if( argc==0 || zSql==0 ){
    sqlite3_result_error(ctx, "par_profile: the first argument must be a SELECT statement", -1);
    return;
  }
  parExtractStamp(pCtx, db, &stamp);
  rc = parPlanText(db, zSql, argc-1, &argv[1], &pPlan, 0, 0, &zErr);
  if( rc==SQLITE_OK ) rc = parExecRun(pCtx, db, pPlan, &stamp, &x, &zErr);
  if( rc==SQLITE_OK ){
    t0 = parNowMs();
    if( x.pOut && pPlan->aDirect ){
      nRow = x.pOut->nRow;         /* the view reads them from the batch */
    }else{
      rc = parExecFinalStmt(db, pPlan, x.pOut, &pStmt);
      while( rc==SQLITE_OK && (rc = sqlite3_step(pStmt))==SQLITE_ROW ){ nRow++; rc = SQLITE_OK; }
      if( rc==SQLITE_DONE ) rc = SQLITE_OK;
    }
    if( rc && zErr==0 ) zErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    tFinal = parNowMs() - t0;
  }
  bNative = x.pOut==0;
  if( rc==SQLITE_OK ){
    /* The first keys for the scan and the one operator (as before the
    ** pipeline); then every operator, the cursor's last. */
    const ParOpStat *pOp = 0;
    for(i=1; i<x.nStat && pOp==0; i++){
      if( x.aStat[i].eOp!=PAR_OP_JOIN ) pOp = &x.aStat[i];
    }
    sqlite3_str *pStr = sqlite3_str_new(db);
    sqlite3_str_appendf(pStr, "{\"mode\":\"%s\",\"extract\":\"%s\",\"extract_ranges\":\"%s\","
        "\"extract_ms\":%.3f,\"extract_rows\":%lld,"
        "\"groupby_ms\":%.3f,\"groups\":%lld,\"strategy\":\"%s\",\"final_ms\":%.3f,"
        "\"rows\":%lld,\"threads\":%d,\"operators\":[",
        bNative ? "native" : "parallel",
        bNative ? "-" : azMode[x.eMode],
        bNative ? "-" : azRanges[x.eMode], x.nStat ? x.aStat[0].ms : 0.0,
        x.pIn ? x.pIn->nRow : 0, pOp ? pOp->ms : 0.0, pOp ? pOp->nRow : 0,
        pOp && pOp->zStrategy ? pOp->zStrategy : "-", tFinal, nRow,
        parThreadsFor(pCtx, x.pIn ? x.pIn->nRow : 0));
    for(i=0; i<x.nStat; i++){
      const ParOpStat *p = &x.aStat[i];
      sqlite3_str_appendf(pStr, "{\"op\":\"%s\",\"ms\":%.3f,\"rows\":%lld", parOpName(p->eOp),
                          p->ms, p->nRow);
      if( p->zStrategy ) sqlite3_str_appendf(pStr, ",\"strategy\":\"%s\"", p->zStrategy);
      sqlite3_str_appendall(pStr, "},");
    }
    sqlite3_str_appendf(pStr, "{\"op\":\"%s\",\"ms\":%.3f,\"rows\":%lld}]", bNative
                        ? "native" : "final", tFinal, nRow);
    if( pCtx->nReadWorker ){
      /* Where the time of the parallel reads went (extract.c). */
      const double *a = pCtx->aReadMs;
      sqlite3_str_appendf(pStr, ",\"read_phases\":{\"workers\":%d,\"open_ms\":%.3f,"
          "\"prepare_ms\":%.3f,\"snapshot_ms\":%.3f,\"ranges_ms\":%.3f,\"concat_ms\":%.3f,"
          "\"end_ms\":%.3f}", pCtx->nReadWorker, a[PAR_READ_POOL], a[PAR_READ_PREPARE],
          a[PAR_READ_SNAPSHOT], a[PAR_READ_RANGES], a[PAR_READ_CONCAT], a[PAR_READ_END]);
    }
    if( x.zJoinSqlite ){
      /* The join found at run time that SQLite must read it. */
      sqlite3_str_appendf(pStr, ",\"join_sqlite\":\"%w\"", x.zJoinSqlite);
    }
    if( x.bNative && x.iNativeOp>=0 ){
      /* An operator found at run time that SQLite must run the SELECT. */
      sqlite3_str_appendf(pStr, ",\"native_at\":\"%s\"",
                          parOpName(pPlan->aOp[x.iNativeOp]));
    }
    sqlite3_str_appendall(pStr, "}");
    if( sqlite3_str_errcode(pStr) ){
      sqlite3_free(sqlite3_str_finish(pStr));
      sqlite3_result_error_nomem(ctx);
    }else{
      sqlite3_result_text(ctx, sqlite3_str_finish(pStr), -1, sqlite3_free);
    }
  }else{
    char *zMsg = sqlite3_mprintf("par_profile: %s", zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_result_error(ctx, zMsg ? zMsg : "par_profile: error", -1);
    sqlite3_free(zMsg);
  }
  sqlite3_finalize(pStmt);
  parExecClear(&x);
  parPlanFree(pPlan);
  sqlite3_free(zErr);
}

/* ==== par_view ======================================================================= */

/* Is the temp table zName a parallel view (its CREATE statement names
** the module parallel)?  1 yes, 0 no such table, -1 a table or view of
** another kind, SQLITE_NOMEM as -2. */
static int parViewExists(sqlite3 *db, const char *zName){
  sqlite3_stmt *pStmt = 0;
  int iRes = -2;
  if( sqlite3_prepare_v2(db, "SELECT sql FROM temp.sqlite_schema WHERE name=?1 "
                         "COLLATE NOCASE AND type IN ('table','view')", -1, &pStmt, 0) ){
    return -2;
  }
  sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
  if( sqlite3_step(pStmt)!=SQLITE_ROW ){
    iRes = 0;
  }else{
    /* CREATE VIRTUAL TABLE [temp.]name USING parallel(...) */
    const char *zDdl = (const char*)sqlite3_column_text(pStmt, 0);
    int nTok = 0, i;
    ParToken *aTok = zDdl ? parTokenize(zDdl, &nTok) : 0;
    iRes = -1;
    for(i=0; aTok && i+1<nTok; i++){
      if( parTokIs(zDdl, &aTok[i], "USING") ){
        if( parTokIs(zDdl, &aTok[i+1], "parallel") && parTokIs(zDdl, &aTok[1], "VIRTUAL") ){
          iRes = 1;
        }
        break;
      }
    }
    if( zDdl && aTok==0 ) iRes = -2;
    sqlite3_free(aTok);
  }
  sqlite3_finalize(pStmt);
  return iRes;
}

/* par_view(name, sql): create the parallel view temp.name of the SELECT
** sql, replacing a parallel view of that name, in one savepoint (an
** error leaves the old view as it was); returns the name.  The same as
** CREATE VIRTUAL TABLE temp.name USING parallel('sql') without the
** quoting, and from a bound parameter. */
static void parViewFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zName = parTextArg(argv[0]);
  const char *zSql = parTextArg(argv[1]);
  char *zDdl = 0, *zErr = 0;
  int iHas, rc;
  if( zName==0 || zName[0]==0 ){
    sqlite3_result_error(ctx, "par_view: the first argument must be the view's name", -1);
    return;
  }
  if( strchr(zName, '.') ){
    /* 'main.v' would be a view named "main.v" in temp. */
    sqlite3_result_error(ctx, "par_view: the name is the view's alone, without a schema "
                         "(the view is always temp.NAME)", -1);
    return;
  }
  if( zSql==0 ){
    sqlite3_result_error(ctx, "par_view: the second argument must be a SELECT statement", -1);
    return;
  }
  iHas = parViewExists(db, zName);
  if( iHas==-2 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( iHas>=0 ){
    /* A temp name hides a table of that name in every other schema
    ** (where the SELECT may read it): refused. */
    sqlite3_stmt *pStmt = 0;
    char *zMsg = 0;
    if( sqlite3_prepare_v2(db, "SELECT schema FROM pragma_table_list WHERE name=?1 "
                           "COLLATE NOCASE AND schema<>'temp'", -1, &pStmt, 0)==SQLITE_OK ){
      sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
      if( sqlite3_step(pStmt)==SQLITE_ROW ){
        zMsg = sqlite3_mprintf("par_view: %s.%s exists: a view temp.%s would hide it",
                               sqlite3_column_text(pStmt, 0), zName, zName);
        iHas = -3;
      }
    }
    sqlite3_finalize(pStmt);
    if( iHas==-3 ){
      sqlite3_result_error(ctx, zMsg ? zMsg : "par_view: the name is taken", -1);
      sqlite3_free(zMsg);
      return;
    }
  }
  if( iHas<0 ){
    char *zMsg = sqlite3_mprintf("par_view: temp.%s exists and is not a parallel view", zName);
    sqlite3_result_error(ctx, zMsg ? zMsg : "par_view: the name is taken", -1);
    sqlite3_free(zMsg);
    return;
  }
  zDdl = iHas ? sqlite3_mprintf("DROP TABLE temp.\"%w\"; CREATE VIRTUAL TABLE temp.\"%w\" "
                                "USING parallel(%Q)", zName, zName, zSql)
              : sqlite3_mprintf("CREATE VIRTUAL TABLE temp.\"%w\" USING parallel(%Q)",
                                zName, zSql);
  if( zDdl==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  rc = sqlite3_exec(db, "SAVEPOINT par_view", 0, 0, &zErr);
  if( rc==SQLITE_OK ){
    rc = sqlite3_exec(db, zDdl, 0, 0, &zErr);
    if( rc ) sqlite3_exec(db, "ROLLBACK TO par_view", 0, 0, 0);
    sqlite3_exec(db, "RELEASE par_view", 0, 0, 0);
  }
  sqlite3_free(zDdl);
  if( rc ){
    char *zMsg = sqlite3_mprintf("par_view: %s", zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_result_error(ctx, zMsg ? zMsg : "par_view: error", -1);
    if( rc!=SQLITE_ERROR ) sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zMsg);
  }else{
    sqlite3_result_text(ctx, zName, -1, SQLITE_TRANSIENT);
  }
  sqlite3_free(zErr);
}

int parViewRegister(sqlite3 *db, ParContext *pCtx){
  int rc = sqlite3_create_module_v2(db, "parallel", &parViewModule,
                                    parContextRef(pCtx), parContextUnref);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_module_v2(db, "par_schema_lock", &parLockModule,
                                  parContextRef(pCtx), parContextUnref);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_module_v2(db, "par_rows", &parRowsModule, 0, 0);
  }
  /* These prepare and run SQL: never from a trigger or a view. */
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function_v2(db, "par_explain", 1, SQLITE_UTF8|SQLITE_DIRECTONLY,
                                    parContextRef(pCtx), parExplainFunc, 0, 0,
                                    parContextUnref);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function_v2(db, "par_explain", 2, SQLITE_UTF8|SQLITE_DIRECTONLY,
                                    parContextRef(pCtx), parExplainFunc, 0, 0,
                                    parContextUnref);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function_v2(db, "par_profile", -1, SQLITE_UTF8|SQLITE_DIRECTONLY,
                                    parContextRef(pCtx), parProfileFunc, 0, 0,
                                    parContextUnref);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function_v2(db, "par_view", 2, SQLITE_UTF8|SQLITE_DIRECTONLY,
                                    parContextRef(pCtx), parViewFunc, 0, 0,
                                    parContextUnref);
  }
  return rc;
}
