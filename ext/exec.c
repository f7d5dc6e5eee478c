/*
** exec.c: runs a plan's pipeline (ParPlan.aOp): the scan reads the
** extraction query's rows into a batch (extract.c), each operator after it
** takes the batch of the one before and returns a new one (groupby.c,
** op_sort.c), and the cursor returns the last batch's rows (view.c, by
** the final SQL or straight from the batch).
**
**   SELECT par_profile('SELECT k, sum(v) FROM t GROUP BY k');   -- a run, timed
**
** Everything a run shares is here, in one place: the timing of each
** operator (par_profile), the stop of an interrupted query (parStopBegin:
** the kernels ask between pieces of work), and the decision of any
** operator that SQLite must run the SELECT instead (an integer sum that
** overflows, text under a collation only SQLite knows, a LIMIT that is not
** an integer): the run then drops every batch and says so, and the caller
** runs the SELECT natively.
*/
#include "parext.h"
#include "exec.h"
#include "groupby.h"
#include "op_sort.h"
#include "op_join.h"
#include "op_window.h"

#include <string.h>

const char *parOpName(int eOp){
  switch( eOp ){
    case PAR_OP_SCAN:  return "scan";
    case PAR_OP_GROUP: return "group by";
    case PAR_OP_SORT:  return "sort";
    case PAR_OP_JOIN:  return "join";
    case PAR_OP_WINDOW: return "window";
    case PAR_OP_VALUE: return "value";
    default:           return "final";
  }
}

int parExecFinalStmt(sqlite3 *db, const ParPlan *pPlan, ParBatch *pOut, sqlite3_stmt **ppStmt){
  int rc = sqlite3_prepare_v2(db, pOut ? pPlan->zFinal : pPlan->zSql, -1, ppStmt, 0);
  if( rc==SQLITE_OK && pOut ){
    /* By name: a parameter of the SELECT may come first in the text. */
    rc = sqlite3_bind_pointer(*ppStmt, sqlite3_bind_parameter_index(*ppStmt, ":par_rows"),
                              pOut, PAR_BATCH_PTR, 0);
  }
  if( rc==SQLITE_OK ) rc = parParamsBind(*ppStmt, pPlan->pParams);
  return rc;
}

sqlite3_int64 parPlanRowidSpan(sqlite3 *db, const ParPlan *pPlan){
  char *zSql;
  sqlite3_int64 n;
  if( pPlan->zExtractFrom==0 ) return -1;
  /* (Each of min() and max() alone: SQLite reads one end of the b-tree.) */
  zSql = sqlite3_mprintf("SELECT (SELECT max(_rowid_) FROM %s) - (SELECT min(_rowid_) FROM %s) + 1",
                         pPlan->zExtractFrom, pPlan->zExtractFrom);
  n = zSql ? parQueryInt(db, zSql, -1) : -1;
  sqlite3_free(zSql);
  return n;
}

void parExecClear(ParExec *pX){
  parBatchFree(pX->pOut);
  parBatchFree(pX->pIn);
  pX->pIn = pX->pOut = 0;
  sqlite3_free(pX->zJoinSqlite);
  pX->zJoinSqlite = 0;
}

/* Operator eOp over pIn: *ppOut, or *pbNative. */
static int execOp(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, int eOp, ParBatch *pIn,
                  ParBatch **ppOut, int *pbNative, char **pzErr, const char **pzStrategy){
  switch( eOp ){
    case PAR_OP_GROUP:
      return parGroupBy(pCtx, db, pPlan, pIn, ppOut, pbNative, pzErr, pzStrategy);
    case PAR_OP_SORT:
      return parSortRun(pCtx, db, pPlan, pIn, ppOut, pbNative, pzErr, pzStrategy);
    case PAR_OP_WINDOW:
      return parWindowRun(pCtx, db, pPlan, pIn, ppOut, pbNative, pzErr, pzStrategy);
  }
  *pzErr = sqlite3_mprintf("operator %d cannot run here", eOp);
  return SQLITE_INTERNAL;
}

/* The value of uncorrelated scalar subquery k of pPlan (ParPlan.apBind),
** computed by its own plan, or by SQLite where that plan is native: its
** first row's one column, NULL without rows, in *ppVal.  *pbFail (rc
** SQLITE_OK) when it fails: SQLite then runs the SELECT, and says what it
** says where it evaluates the subquery. */
static int execScalar(ParContext *pCtx, sqlite3 *db, const ParPlan *pSub, const ParStamp *pStamp,
                      sqlite3_value **ppVal, int *pbFail){
  ParExec x;
  sqlite3_stmt *pStmt = 0;
  char *zErr = 0, *zSql = 0;
  int rc;
  *ppVal = 0;
  rc = parExecRun(pCtx, db, pSub, pStamp, &x, &zErr);
  sqlite3_free(zErr);
  if( rc ){
    if( rc==SQLITE_NOMEM || rc==SQLITE_INTERRUPT ) return rc;
    *pbFail = 1;
    return SQLITE_OK;
  }
  if( x.bNative ){
    rc = parExecFinalStmt(db, pSub, 0, &pStmt);
  }else if( pSub->aDirect ){
    /* The last operator's batch: its column of the result's one column. */
    zSql = sqlite3_mprintf("SELECT _p%c%c%d FROM par_rows(:par_rows) LIMIT 1",
                           PAR_ROWS_AFF[0], PAR_ROWS_COLL[0], pSub->aDirect[0]);
    rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
    if( rc==SQLITE_OK ){
      rc = sqlite3_bind_pointer(pStmt, sqlite3_bind_parameter_index(pStmt, ":par_rows"),
                                x.pOut ? x.pOut : x.pIn, PAR_BATCH_PTR, 0);
    }
  }else{
    rc = parExecFinalStmt(db, pSub, x.pOut ? x.pOut : x.pIn, &pStmt);
  }
  if( rc==SQLITE_OK ){
    int r = sqlite3_step(pStmt);
    if( r==SQLITE_ROW ){
      *ppVal = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
    }else if( r==SQLITE_DONE ){
      /* No row: NULL, as SQLite's subquery gives. */
      sqlite3_finalize(pStmt);
      pStmt = 0;
      rc = sqlite3_prepare_v2(db, "SELECT NULL", -1, &pStmt, 0);
      if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
        *ppVal = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
      }
    }else{
      rc = r;
    }
    if( rc==SQLITE_OK && *ppVal==0 ) rc = SQLITE_NOMEM;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  parExecClear(&x);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && rc!=SQLITE_INTERRUPT ){
    *pbFail = 1;
    rc = SQLITE_OK;
  }
  return rc;
}

/* Compute pPlan's uncorrelated scalar subqueries and set their values in
** the parameters of the plan and of each scan of its join.  *pbFail when
** one fails (SQLite runs the SELECT). */
static int execBind(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, const ParStamp *pStamp,
                    int *pbFail){
  int k, t, rc = SQLITE_OK;
  for(k=0; k<pPlan->nBind && rc==SQLITE_OK && !*pbFail; k++){
    sqlite3_value *v = 0;
    int i = pPlan->iBind - 1 + k;
    rc = execScalar(pCtx, db, pPlan->apBind[k], pStamp, &v, pbFail);
    if( rc || *pbFail ) break;
    for(t=-1; t<(pPlan->pJoin ? pPlan->pJoin->nTab : 0) && rc==SQLITE_OK; t++){
      ParParams *p = t<0 ? pPlan->pParams : pPlan->pJoin->aTab[t].pScan->pParams;
      if( p==0 || i>=p->n ) continue;
      sqlite3_value_free(p->apVal[i]);
      p->apVal[i] = t<0 ? v : sqlite3_value_dup(v);
      if( p->apVal[i]==0 ) rc = SQLITE_NOMEM;
    }
    if( pPlan->pParams==0 || i>=pPlan->pParams->n ) sqlite3_value_free(v);
  }
  return rc;
}

int parExecRun(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, const ParStamp *pStamp,
               ParExec *pX, char **pzErr){
  double t0 = parNowMs(), t1;
  char *zWhy = 0;
  int rc = SQLITE_OK, i;
  ParStop stop;
  ParOpStat *pStat;

  memset(pX, 0, sizeof(*pX));
  pX->iNativeOp = -1;
  *pzErr = 0;
  pCtx->nReadWorker = 0;
  memset(pCtx->aReadMs, 0, sizeof(pCtx->aReadMs));
  if( pPlan->zWhy || pPlan->nOp<1 || pPlan->aOp[0]!=PAR_OP_SCAN ){
    pX->bNative = 1;
    return SQLITE_OK;
  }
  if( pPlan->nBind ){
    int bFail = 0;
    rc = execBind(pCtx, db, pPlan, pStamp, &bFail);
    if( rc ) return rc;
    pStat = &pX->aStat[pX->nStat++];
    pStat->eOp = PAR_OP_VALUE;
    pStat->ms = parNowMs() - t0;
    pStat->nRow = pPlan->nBind;
    t0 = parNowMs();
    if( bFail ){
      pX->bNative = 1;
      pX->iNativeOp = 0;
      return SQLITE_OK;
    }
  }
  if( pPlan->zJoinOnly && pCtx->eJoinStrategy!=PAR_JOIN_AUTO ){
    /* Only the join operator reads the rows in SQLite's order. */
    pX->bNative = 1;
    pX->iNativeOp = 0;
    return SQLITE_OK;
  }
  if( pPlan->pJoin && pCtx->eJoinStrategy==PAR_JOIN_AUTO ){
    /* The tables, each by its own scan, joined by the kernels; or, when
    ** the join finds it must, the extraction query read by SQLite. */
    ParJoinOut jo;
    rc = parJoinRun(pCtx, db, pPlan, pStamp, &jo, pzErr);
    if( rc==SQLITE_OK && jo.zSqlite==0 ){
      pX->pIn = jo.pOut;
      pX->eMode = jo.eMode;
      pStat = &pX->aStat[pX->nStat++];
      pStat->eOp = PAR_OP_SCAN;
      pStat->ms = jo.msScan;
      pStat->nRow = -1;
      pStat = &pX->aStat[pX->nStat++];
      pStat->eOp = PAR_OP_JOIN;
      pStat->ms = jo.msJoin;
      pStat->nRow = pX->pIn->nRow;
      pStat->zStrategy = jo.bKept ? "hash join (kept from an earlier run)"
                       : jo.bReordered ? "hash join (the largest table probes: another order than "
                                          "SQLite's loops, which does not matter here)"
                       : jo.nLookup ? "hash join (a table read by rowid lookups of the probe "
                                      "keys, as SQLite's loop looks them up)"
                       : "hash join";
    }else if( rc==SQLITE_OK && pPlan->zJoinOnly ){
      /* SQLite must join the tables, and the extraction query would
      ** visit the rows in another order than the SELECT: SQLite runs it. */
      pX->zJoinSqlite = jo.zSqlite;
      pX->bNative = 1;
      pX->iNativeOp = 0;
      return SQLITE_OK;
    }else if( rc==SQLITE_OK ){
      pX->zJoinSqlite = jo.zSqlite;
    }
  }
  if( pX->pIn==0 && rc==SQLITE_OK ){
    rc = parExtract(pCtx, db, pPlan, pStamp, &pX->pIn, &pX->eMode, &zWhy, pzErr);
    sqlite3_free(zWhy);
    pStat = &pX->aStat[pX->nStat++];
    pStat->eOp = PAR_OP_SCAN;
    pStat->ms = parNowMs() - t0;
    pStat->nRow = pX->pIn ? pX->pIn->nRow : 0;
  }
  if( rc==SQLITE_ERROR ){
    /* An SQL function failed on some row (abs(-9223372036854775808)...):
    ** whether SQLite fails too depends on the rows it reaches (LIMIT), so
    ** let SQLite run the SELECT and say. */
    sqlite3_free(*pzErr);
    *pzErr = 0;
    pX->bNative = 1;
    pX->iNativeOp = 0;
    return SQLITE_OK;
  }
  if( rc ) return rc;

  /* The operators between the scan and the cursor, each over the batch
  ** of the one before (the scan's, for the first).  A batch between two
  ** operators is dropped once the second has run: what the second's batch
  ** needs of it, it takes (the sort takes the group-by's dictionaries);
  ** every batch may borrow the scan's text, which the run keeps. */
  parStopBegin(db, &stop);
  for(i=1; i<pPlan->nOp && pPlan->aOp[i]!=PAR_OP_FINAL && rc==SQLITE_OK; i++){
    ParBatch *pPrev = pX->pOut ? pX->pOut : pX->pIn, *pNext = 0;
    if( pPlan->aOp[i]==PAR_OP_JOIN ) continue;      /* ran with the scan */
    t1 = parNowMs();
    pStat = &pX->aStat[pX->nStat++];
    pStat->eOp = pPlan->aOp[i];
    rc = execOp(pCtx, db, pPlan, pPlan->aOp[i], pPrev, &pNext, &pX->bNative, pzErr,
                &pStat->zStrategy);
    pStat->ms = parNowMs() - t1;
    pStat->nRow = pNext ? pNext->nRow : 0;
    if( pPrev!=pX->pIn ) parBatchFree(pPrev);
    pX->pOut = pNext;
    if( pX->bNative ){
      pX->iNativeOp = i;
      break;
    }
  }
  parStopEnd(&stop);
  if( rc || pX->bNative ) parExecClear(pX);
  return rc;
}
