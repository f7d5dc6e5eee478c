/*
** op_sort.c: the sort operator: DISTINCT, ORDER BY, LIMIT and OFFSET over
** a batch, as ParPlanSort (plan.h) describes and plan_sort.c plans.
**
**   SELECT DISTINCT k_text FROM fact;                      -- distinct
**   SELECT id, v_real FROM fact ORDER BY v_real;           -- sort
**   SELECT id, v_real FROM fact ORDER BY v_real LIMIT 5;   -- top-k
**   SELECT k_small, count(*) AS n FROM fact GROUP BY 1 ORDER BY n;  -- groups
**
** How it works, over the rows in the order they were read (SQLite's):
**  1. DISTINCT: the rows' sort keys over the select list (batch.h:
**     parColumnKeys, equal keys for values SQLite finds equal under the
**     collations) are sorted stably; the first row of each run of equal
**     keys is the first such row read.  Those rows, in reading order, are
**     the rows kept.
**  2. ORDER BY: the kept rows' keys, term by term, sorted stably (LSD
**     radix sort by words, kernels/sort.h), or, when LIMIT + OFFSET is
**     small against the rows, the first LIMIT + OFFSET of that order
**     selected per thread and merged (kernels/topk.h).  Either way, ties in
**     reading order.
**  3. OFFSET and LIMIT cut the order; the result batch gathers the
**     columns the view returns.
** After a group-by (ParPlanSort.bGroup) the rows are the groups, in
** ascending key order (bReverse: taken in reverse before the stable
** sort), and the result keeps every column for the final SQL.
** LIMIT and OFFSET are evaluated by SQLite on the caller's connection;
** a value that is not an integer (SQLite converts some, fails on others)
** makes the SELECT run natively, as does text under a collation the
** planner could not tell (PAR_COLL_UNKNOWN).
*/
#include "parext.h"
#include "op_sort.h"
#include "sort.h"
#include "topk.h"
#include "keys.h"
#include "gather.h"

#include <string.h>

/* Run LIMIT + OFFSET against the rows through top-k selection rather than
** a full sort when they are at most this fraction of the rows. */
#define PAR_TOPK_FRACTION 64

int parLimitEval(sqlite3 *db, const ParPlan *pPlan, const char *zLimit, sqlite3_int64 *piLimit,
                 sqlite3_int64 *piOffset, int *pbNative){
  sqlite3_stmt *pStmt = 0;
  int rc;
  *piLimit = -1;
  *piOffset = 0;
  if( zLimit==0 ) return SQLITE_OK;
  rc = sqlite3_prepare_v2(db, zLimit, -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = parParamsBind(pStmt, pPlan->pParams);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW
   && sqlite3_column_type(pStmt, 0)==SQLITE_INTEGER
   && sqlite3_column_type(pStmt, 1)==SQLITE_INTEGER ){
    /* select.c computeLimitOffset: a negative LIMIT is none, a negative
    ** OFFSET is 0. */
    *piLimit = sqlite3_column_int64(pStmt, 0);
    *piOffset = sqlite3_column_int64(pStmt, 1);
    if( *piLimit<0 ) *piLimit = -1;
    if( *piOffset<0 ) *piOffset = 0;
  }else{
    *pbNative = 1;
  }
  rc = sqlite3_finalize(pStmt);
  return rc==SQLITE_NOMEM ? SQLITE_NOMEM : SQLITE_OK;
}

/* Does a key of unknown collation meet text?  Then SQLite's order is not
** known here. */
int parSortUnknownText(const ParBatch *pIn, const ParSortKey *aKey, int nKey){
  int k;
  uint32_t e;
  for(k=0; k<nKey; k++){
    const ParDict *pD = pIn->aCol[aKey[k].iCol].pDict;
    if( aKey[k].eColl>=0 || pD==0 ) continue;
    for(e=0; e<pD->nEntry; e++) if( pD->aKind[e]==SQLITE_TEXT ) return 1;
  }
  return 0;
}

/* The key words of aKey[0..nKey-1] for the rows aRow[0..nRow-1] of pIn
** (all of pIn's rows, in order, when aRow is NULL): *pnWord arrays of
** nRow words in aaWord, most significant first (parBigMalloc, the
** caller frees them, also on error). */
int parSortWords(ParBatch *pIn, const ParSortKey *aKey, int nKey, const uint32_t *aRow,
                 size_t nRow, int nThread, uint64_t **aaWord, int *pnWord){
  int k, rc = SQLITE_OK;
  *pnWord = 0;
  for(k=0; k<nKey && rc==SQLITE_OK; k++){
    ParColumn *pCol = &pIn->aCol[aKey[k].iCol];
    uint64_t *a1 = 0, *a2 = 0;
    int w;
    rc = parColumnKeys(pCol, pIn->nRow, aKey[k].eColl>=0 ? aKey[k].eColl : PAR_COLL_BINARY,
                       aKey[k].flags, nThread, &a1, &a2);
    if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
    for(w=0; w<2; w++){
      uint64_t *a = w ? a2 : a1, *g;
      if( a==0 ) continue;
      if( rc || aRow==0 ){
        if( rc ) parBigFree(a); else aaWord[(*pnWord)++] = a;
        continue;
      }
      g = parBigMalloc((sqlite3_int64)(nRow ? nRow : 1)*8);
      if( g==0 ){
        rc = SQLITE_NOMEM;
      }else{
        px_gather_u64(a, aRow, g, nRow, nThread);
        aaWord[(*pnWord)++] = g;
      }
      parBigFree(a);
    }
  }
  return rc;
}

/* Several key words whose values span few bits, packed in place into
** fewer words (the same order and equality: kernels/keys.h), so the radix
** sort makes fewer passes; the words left over are freed. */
int parSortPack(uint64_t **aaWord, int *pnWord, size_t nRow, int nThread){
  int nOut = 0, k, rc;
  if( *pnWord<2 ) return SQLITE_OK;
  rc = parRcFromPx(px_keys_pack((const uint64_t *const*)aaWord, *pnWord, nRow, aaWord, &nOut,
                                nThread));
  if( rc ) return rc;
  for(k=nOut; k<*pnWord; k++){
    parBigFree(aaWord[k]);
    aaWord[k] = 0;
  }
  *pnWord = nOut;
  return SQLITE_OK;
}

void parSortWordsFree(uint64_t **aaWord, int nWord){
  int k;
  for(k=0; k<nWord; k++) parBigFree(aaWord[k]);
}

/* DISTINCT: *paRow gets the first row of each set of equal rows, in
** reading order, and *pnRow their number. */
static int sortDistinct(ParBatch *pIn, const ParPlanSort *pS, int nThread, uint32_t **paRow,
                        size_t *pnRow){
  size_t n = (size_t)pIn->nRow, j;
  uint64_t *aaWord[2*PAR_SORT_MAX_KEY];
  uint32_t *aPerm = 0, *aRow = 0;
  uint8_t *aFirst = 0;
  int nWord = 0, rc, k;
  *paRow = 0;
  *pnRow = 0;
  rc = parSortWords(pIn, pS->aDistinct, pS->nDistinct, 0, n, nThread, aaWord, &nWord);
  if( rc==SQLITE_OK ){
    aPerm = parBigMalloc((sqlite3_int64)(n ? n : 1)*4);
    aRow = parBigMalloc((sqlite3_int64)(n ? n : 1)*4);
    aFirst = parBigMalloc((sqlite3_int64)(n ? n : 1));
    if( aPerm==0 || aRow==0 || aFirst==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ) rc = parSortPack(aaWord, &nWord, n, nThread);
  if( rc==SQLITE_OK ){
    rc = parRcFromPx(px_sort_words_perm((const uint64_t *const*)aaWord, nWord, n, aPerm, 0,
                                        nThread));
  }
  if( rc==SQLITE_OK ){
    /* The sort is stable: the first of a run of equal keys was read first. */
    #pragma omp parallel for num_threads(nThread) schedule(static) private(k)
    for(j=0; j<n; j++){
      int bFirst = j==0;
      for(k=0; k<nWord && !bFirst; k++){
        bFirst = aaWord[k][aPerm[j]]!=aaWord[k][aPerm[j-1]];
      }
      aFirst[aPerm[j]] = (uint8_t)bFirst;
    }
    *pnRow = px_compact_idx(aFirst, n, aRow, nThread);
    *paRow = aRow;
    aRow = 0;
  }
  parSortWordsFree(aaWord, nWord);
  parBigFree(aPerm);
  parBigFree(aRow);
  parBigFree(aFirst);
  return rc;
}

/* ORDER BY over the rows aRow[0..nRow-1] (all rows when aRow is NULL):
** *paOut gets the first nWant rows of the stable order, as rows of pIn.
** *pzStrategy: "sort" or "top-k". */
static int sortOrder(ParBatch *pIn, const ParPlanSort *pS, const uint32_t *aRow, size_t nRow,
                     size_t nWant, int nThread, uint32_t **paOut, const char **pzStrategy){
  uint64_t *aaWord[2*PAR_SORT_MAX_KEY];
  uint32_t *aPerm = 0;
  int nWord = 0, rc;
  size_t j;
  *paOut = 0;
  if( pS->nKey==1 && aRow==0 && nWant<=nRow/PX_TOPK_SORT_DIV ){
    /* One numeric term without NULLs, few rows wanted: the kernel makes
    ** each row's key as it reads the values (no array of keys). */
    ParColumn *pCol = &pIn->aCol[pS->aKey[0].iCol];
    if( pCol->nNull==0 && (pCol->eStore==PAR_COL_INT || pCol->eStore==PAR_COL_REAL) ){
      px_key_src src;
      memset(&src, 0, sizeof(src));
      src.a = pCol->eStore==PAR_COL_INT ? (const void*)pCol->aInt : (const void*)pCol->aReal;
      src.eKind = pCol->eStore==PAR_COL_INT ? PX_KEYSRC_I64 : PX_KEYSRC_F64;
      src.flip = (pS->aKey[0].flags & PAR_KEY_DESC) ? ~(uint64_t)0 : 0;
      aPerm = parBigMalloc((sqlite3_int64)(nWant ? nWant : 1)*4);
      if( aPerm==0 ) return SQLITE_NOMEM;
      *pzStrategy = "top-k";
      rc = parRcFromPx(px_topk_src_perm(&src, nRow, nWant, aPerm, nThread));
      if( rc ){
        parBigFree(aPerm);
        return rc;
      }
      *paOut = aPerm;
      return SQLITE_OK;
    }
  }
  rc = parSortWords(pIn, pS->aKey, pS->nKey, aRow, nRow, nThread, aaWord, &nWord);
  if( rc==SQLITE_OK ){
    aPerm = parBigMalloc((sqlite3_int64)(nRow ? nRow : 1)*4);
    if( aPerm==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK && nWant<nRow ){
    /* LIMIT + OFFSET: the first nWant rows of the order (which the kernel
    ** finds by a full sort when they are many: PX_TOPK_SORT_DIV). */
    *pzStrategy = nWant<=nRow/PX_TOPK_SORT_DIV ? "top-k" : "sort";
    rc = parRcFromPx(px_topk_words_perm((const uint64_t *const*)aaWord, nWord, nRow, nWant,
                                        aPerm, nThread));
  }else if( rc==SQLITE_OK ){
    *pzStrategy = "sort";
    rc = parSortPack(aaWord, &nWord, nRow, nThread);
    if( rc==SQLITE_OK ){
      rc = parRcFromPx(px_sort_words_perm((const uint64_t *const*)aaWord, nWord, nRow, aPerm,
                                          0, nThread));
    }
  }
  if( rc==SQLITE_OK && aRow ){
    /* Positions among the kept rows, to rows of pIn. */
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(j=0; j<nWant; j++) aPerm[j] = aRow[aPerm[j]];
  }
  parSortWordsFree(aaWord, nWord);
  if( rc ){
    parBigFree(aPerm);
    return rc;
  }
  *paOut = aPerm;
  return SQLITE_OK;
}

/* The result: nRow rows of pIn, aRow[0..nRow-1], of the columns the view
** returns (the others all NULL, never read), or of every column of a
** group-by's result.  That result is the pipeline's own and is dropped
** after the sort: the dictionaries its columns own move to the sorted
** columns (whose text then borrows only the extraction's). */
static int sortResult(ParBatch *pIn, const ParPlan *pPlan, const uint32_t *aRow, size_t nRow,
                      int nThread, ParBatch **ppOut){
  int bAll = pPlan->pSort->bGroup;
  ParBatch *pOut = sqlite3_malloc(sizeof(ParBatch));
  int c, i, rc = SQLITE_OK;
  *ppOut = pOut;
  if( pOut==0 ) return SQLITE_NOMEM;
  memset(pOut, 0, sizeof(*pOut));
  pOut->nRef = 1;
  pOut->nRow = pOut->nRowAlloc = (sqlite3_int64)nRow;
  pOut->aCol = sqlite3_malloc64(sizeof(ParColumn)*(pIn->nCol+1));
  if( pOut->aCol==0 ) return SQLITE_NOMEM;
  memset(pOut->aCol, 0, sizeof(ParColumn)*(pIn->nCol+1));
  pOut->nCol = pIn->nCol;
  for(c=0; c<pIn->nCol; c++){
    pOut->aCol[c].eStore = PAR_COL_NULL;
    pOut->aCol[c].nNull = pOut->nRow;
  }
  for(i=0; i<(bAll ? pIn->nCol : pPlan->nCol) && rc==SQLITE_OK; i++){
    c = bAll ? i : pPlan->aDirect[i];
    if( pOut->aCol[c].eStore!=PAR_COL_NULL || pIn->aCol[c].eStore==PAR_COL_NULL ) continue;
    rc = parColumnGather(&pIn->aCol[c], aRow, (sqlite3_int64)nRow, nThread, &pOut->aCol[c]);
    if( rc==SQLITE_OK && bAll && pIn->aCol[c].pDict && !pIn->aCol[c].bBorrowDict ){
      pIn->aCol[c].bBorrowDict = 1;
      pOut->aCol[c].bBorrowDict = 0;
    }
  }
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  return rc;
}

/* Is there room under memory_mb for pIn's rows and what the sort makes
** besides (an upper bound: two words per key and per DISTINCT column,
** twice while they are gathered, the permutation and the radix sort's
** scratch, the result's columns)?  Else *pzErr, before anything is made. */
static int sortFits(const ParContext *pCtx, const ParPlan *pPlan, const ParBatch *pIn,
                    int nCol, double nWant, char **pzErr){
  const ParPlanSort *pS = pPlan->pSort;
  sqlite3_int64 mx = parMemLimit(pCtx);
  double n = (double)pIn->nRow, nExtra;
  if( pS->nDistinct==0 && pS->nKey>0 && nWant<=n/PX_TOPK_SORT_DIV ){
    /* Top-k: the keys (or none), the kept rows, the few rows returned. */
    nExtra = n * 16.0 * pS->nKey + nWant * (16.0 + 16.0 * nCol);
  }else{
    nExtra = n * (16.0*2*(pS->nKey + pS->nDistinct) + 4 + 4 + 12 + 8 + 1)
           + nWant * 16.0 * nCol;
  }
  if( mx>0 && (double)parBatchBytes(pIn) + nExtra > (double)mx ){
    *pzErr = sqlite3_mprintf("memory limit of %lld MB exceeded while sorting rows "
                             "(see par_config('memory_mb'))", mx/(1024*1024));
    return SQLITE_FULL;
  }
  return SQLITE_OK;
}

int parSortRun(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
               ParBatch **ppOut, int *pbNative, char **pzErr, const char **pzStrategy){
  const ParPlanSort *pS = pPlan->pSort;
  size_t n = (size_t)pIn->nRow, nRow = n, nOut, iFrom;
  sqlite3_int64 iLimit, iOffset;
  uint32_t *aRow = 0, *aOrder = 0;
  int nThread = parThreadsFor(pCtx, pIn->nRow);
  int rc;

  *ppOut = 0;
  *pbNative = 0;
  *pzErr = 0;
  *pzStrategy = pS->nDistinct ? "distinct" : "sort";
  if( pS->nKey>PAR_SORT_MAX_KEY || pS->nDistinct>PAR_SORT_MAX_KEY ){
    *pbNative = 1;
    return SQLITE_OK;
  }
  if( n>(size_t)UINT32_MAX ) return SQLITE_TOOBIG;
  if( parSortUnknownText(pIn, pS->aKey, pS->nKey)
   || parSortUnknownText(pIn, pS->aDistinct, pS->nDistinct) ){
    *pbNative = 1;
    return SQLITE_OK;
  }
  rc = parLimitEval(db, pPlan, pS->zLimit, &iLimit, &iOffset, pbNative);
  if( rc || *pbNative ) return rc;
  rc = sortFits(pCtx, pPlan, pIn, pS->bGroup ? pIn->nCol : pPlan->nCol, (iLimit<0 || iOffset>=(sqlite3_int64)n
                                  || iLimit>(sqlite3_int64)n - iOffset)
                                 ? (double)n : (double)(iLimit + iOffset), pzErr);
  if( rc ) return rc;

  if( pS->nDistinct ){
    rc = sortDistinct(pIn, pS, nThread, &aRow, &nRow);
  }else if( pS->bReverse ){
    /* Ties in the reverse of the input's order: sort the rows reversed. */
    size_t j;
    aRow = parBigMalloc((sqlite3_int64)(n ? n : 1)*4);
    if( aRow==0 ) rc = SQLITE_NOMEM;
    for(j=0; rc==SQLITE_OK && j<n; j++) aRow[j] = (uint32_t)(n - 1 - j);
  }
  /* The rows [iFrom, iFrom+nOut) of the order. */
  iFrom = (size_t)iOffset<nRow ? (size_t)iOffset : nRow;
  nOut = nRow - iFrom;
  if( iLimit>=0 && (size_t)iLimit<nOut ) nOut = (size_t)iLimit;
  if( rc==SQLITE_OK && pS->nKey ){
    rc = sortOrder(pIn, pS, aRow, nRow, iFrom + nOut, nThread, &aOrder, pzStrategy);
    parBigFree(aRow);
    aRow = aOrder;
  }
  if( rc==SQLITE_OK && aRow==0 ){
    /* Neither DISTINCT nor ORDER BY changed the order. */
    size_t j;
    aRow = parBigMalloc((sqlite3_int64)(n ? n : 1)*4);
    if( aRow==0 ) rc = SQLITE_NOMEM;
    for(j=0; rc==SQLITE_OK && j<n; j++) aRow[j] = (uint32_t)j;
  }
  if( rc==SQLITE_OK ){
    rc = sortResult(pIn, pPlan, aRow + iFrom, nOut, nThread, ppOut);
  }
  parBigFree(aRow);
  if( rc ){
    parBatchFree(*ppOut);
    *ppOut = 0;
    if( rc==SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("out of memory sorting %lld rows",
                                                    (long long)n);
  }
  return rc;
}
