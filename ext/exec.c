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
