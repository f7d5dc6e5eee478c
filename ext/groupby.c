/*
** groupby.c: the group-by operator of parallel views.  How each aggregate
** is computed (SQLite's exact semantics: states, steps, sums, results) is
** agg.c's; this file groups the rows and runs agg.c's states over them in
** parallel.
**
**   rc = parGroupBy(pCtx, db, pPlan, pIn, &pOut, &bNative, &zErr);
**
** pIn is the extraction batch of pPlan (keys, aggregate arguments, bare
** columns); pOut gets one row per group: the aggregates, then the bare
** columns (see plan.h).  bNative is set when the data needs a collation
** the planner could not determine: the caller then runs the SELECT
** natively.
**
** How it works:
**  1. Group: each key column becomes one or two order-preserving 64-bit
**     words (batch.c, under the key's collation).  Few groups (a single
**     word whose values span fewer than PAR_DIRECT_MAX values, or no GROUP
**     BY): no sorting at all; fixed row chunks fold their rows into private
**     accumulators per key value, then each key value combines its chunks
**     in order.  Otherwise (or with DISTINCT / group_concat, which need
**     each group's rows together) rows are partitioned by a counting sort
**     (px_countsort_u32) or radix sorted word by word, least significant
**     first (px_sort_words_perm; both kernels/sort.h): a permutation
**     listing every group's rows in their original order and the groups'
**     offsets (the non-empty bins, or where the key changes:
**     kernels/segment.h); the needed columns are gathered into that order
**     so aggregation reads memory sequentially.
**  2. Aggregate: each group's rows are visited in their original order,
**     so order-sensitive results come out as SQLite's: integer overflow of
**     sum() (an error only if a running sum overflows before any REAL is
**     seen, SQLite 3.40's rule), which of equal values min()/max() keep,
**     group_concat() order, and the row bare columns come from (see
**     bareRow()).  Large groups are cut into fixed chunks whose partial
**     results are combined in order; chunks of all groups run in
**     parallel.  Chunk boundaries depend on the data only, so results are
**     the same for every thread count.
**  2b. REAL sums (sum, total, avg of anything but integers that provably
**     add exactly as doubles) are SQLite's own, bit for bit: each group's
**     values are added by one thread in row order with the steps of the
**     SQLite library loaded (sumStep() in func.c: plain double addition
**     before 3.43, Kahan-Babuska-Neumaier steps from 3.43 on; see
**     agg.c).  Such an aggregate is not folded in chunks: it runs as one
**     task per group (direct strategies: over a stable partition of the
**     rows by key value), many groups at once.
**  3. DISTINCT keeps the first row of each (group, value) pair: a stable
**     radix sort by (group, value words) marks them.
**  4. Dense key values (one key, no DISTINCT or group_concat, sums that
**     cannot overflow): each thread keeps agg.c's dense accumulators for
**     every key value over its own contiguous rows; they merge in thread
**     order.
**  The strategies: aggregateDirect(), aggregateDense(), aggregateSorted()
**  (after a counting or radix sort); parGroupBy() picks one (groupBins(),
**  groupStrategy()), each split into its phases (directChunk(), ...).
*/
#include "groupby.h"
#include "agg.h"
#include "gather.h"
#include "histogram.h"
#include "segment.h"
#include "sort.h"

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define PAR_DIRECT_MAX 65536   /* accumulators per key value up to this many */
#define PAR_COUNT_MAX  (1<<24) /* counting sort, not radix, below this many
                               ** key values (and fewer than the rows) */
#define PAR_CHUNK      65536   /* rows per chunk of a large group */
#define PAR_DIRECT_ACC 262144  /* most (chunk, key value) accumulators */
#define PAR_SCATTER_MAX 16     /* REAL columns a counting sort scatters */
/* ---- grouping ------------------------------------------------------------------- */

/* Can two rows of pCol be one group (equal) and yet hold different values?
** Only numbers can: 1 and 1.0, 0.0 and -0.0.  Says yes when the column
** holds both INTEGER and REAL values, or a -0.0. */
static int keyEqualButDifferent(const ParColumn *pCol, size_t n){
  static const uint64_t mNegZero = (uint64_t)1 << 63;
  size_t i;
  int bInt = 0, bReal = 0;
  switch( pCol->eStore ){
    case PAR_COL_REAL:
      for(i=0; i<n; i++){
        uint64_t u;
        if( pCol->aNull && (pCol->aNull[i>>3] >> (i&7)) & 1 ) continue;
        memcpy(&u, &pCol->aReal[i], sizeof(u));
        if( u==mNegZero ) return 1;
      }
      return 0;
    case PAR_COL_MIXED:
      for(i=0; i<n; i++){
        if( pCol->aType[i]==SQLITE_INTEGER ){
          bInt = 1;
        }else if( pCol->aType[i]==SQLITE_FLOAT ){
          bReal = 1;
          if( pCol->aVal[i]==mNegZero ) return 1;
        }
        if( bInt && bReal ) return 1;
      }
      return 0;
    default:
      return 0;         /* one storage class, compared by its bytes */
  }
}

/* Order-preserving words of the plan's keys, most significant first. */
static int keyWords(const ParPlan *pPlan, ParBatch *pIn, int nThread,
                    uint64_t **aaWord, int *pnWord){
  int k, rc = SQLITE_OK;
  *pnWord = 0;
  for(k=0; k<pPlan->nKey && rc==SQLITE_OK; k++){
    uint64_t *a1 = 0, *a2 = 0;
    int eColl = pPlan->aKeyColl[k]<0 ? PAR_COLL_BINARY : pPlan->aKeyColl[k];
    rc = parColumnKeys(&pIn->aCol[k], pIn->nRow, eColl, 0, nThread, &a1, &a2);
    if( rc==SQLITE_OK ){
      aaWord[(*pnWord)++] = a1;
      if( a2 ) aaWord[(*pnWord)++] = a2;
    }
  }
  return rc;
}

/* Sort rows by the key words: *paPerm lists the rows group by group
** (original order inside a group), *paOff has the nGroup+1 offsets.  With
** aBin (one key whose nBin bins are its groups, in order) a counting sort,
** else a radix sort word by word, least significant first. */
static int sortGroups(uint64_t **aaWord, int nWord, const uint32_t *aBin, uint32_t nBin,
                      size_t n, int nThread, uint32_t **paPerm, size_t **paOff,
                      size_t *pnGroup){
  uint32_t *aPerm = sqlite3_malloc64((n+1)*sizeof(uint32_t));
  uint64_t *aSorted = 0;     /* radix sort: the sorted first word */
  size_t *aOff = 0, i, nGroup = 0;
  int rc = SQLITE_OK;
  if( aPerm==0 ) return SQLITE_NOMEM;
  if( aBin ){
    /* aOff gets the bins' starts, then in place those of the non-empty
    ** bins: the groups (one word: equal bin, equal word), in order. */
    size_t nOff = ((size_t)nBin > n ? (size_t)nBin : n) + 2;
    aOff = sqlite3_malloc64(nOff*sizeof(size_t));
    if( aOff==0 ) rc = SQLITE_NOMEM;
    if( rc==SQLITE_OK ){
      rc = parRcFromPx(px_countsort_u32(aBin, n, nBin, aPerm, aOff, 0, 0, 0, nThread));
    }
    if( rc==SQLITE_OK ){
      for(i=0; i<nBin; i++){
        if( aOff[i+1]>aOff[i] ) aOff[nGroup++] = aOff[i];
      }
      aOff[nGroup] = n;
    }
  }else{
    const uint64_t *const *aaW = (const uint64_t *const *)aaWord;
    aOff = sqlite3_malloc64((n+2)*sizeof(size_t));
    if( nWord>0 ) aSorted = sqlite3_malloc64((n+1)*sizeof(uint64_t));
    if( aOff==0 || (nWord>0 && aSorted==0) ) rc = SQLITE_NOMEM;
    if( rc==SQLITE_OK ){
      rc = parRcFromPx(px_sort_words_perm(aaW, nWord, n, aPerm, aSorted, nThread));
    }
    if( rc==SQLITE_OK ){
      /* Groups start where any word changes: the most significant word
      ** sorted, read in order, the others through the permutation. */
      rc = parRcFromPx(px_segments_u64(aSorted, nWord>0 ? aaW + 1 : 0,
                                       nWord>0 ? nWord - 1 : 0, aPerm, n, 0, aOff,
                                       &nGroup, nThread));
    }
    /* Without keys there is exactly one group, even for no rows. */
    if( rc==SQLITE_OK && nWord==0 && nGroup==0 ){ aOff[0] = 0; aOff[1] = n; nGroup = 1; }
  }
  sqlite3_free(aSorted);
  if( rc ){
    sqlite3_free(aPerm);
    sqlite3_free(aOff);
    return rc;
  }
  *pnGroup = nGroup;
  *paPerm = aPerm;
  *paOff = aOff;
  return SQLITE_OK;
}

/* aFirst[p] = 1 on the first position of each distinct non-NULL value of
** pArg within its group (groups are the position ranges of aOff). */
static int markDistinct(const size_t *aOff, size_t nGroup, const ParColumn *pArg,
                        int eColl, sqlite3_int64 nRow, int nThread, uint8_t **paFirst){
  size_t n = (size_t)nRow, i;
  uint64_t *a1 = 0, *a2 = 0, *aTmp = 0, *aGid = 0;
  uint32_t *aOrd = 0;
  uint8_t *aFirst = sqlite3_malloc64(n+1);
  int rc = parColumnKeys((ParColumn*)pArg, nRow, eColl, 0, nThread, &a1, &a2);
  aTmp = sqlite3_malloc64((n+1)*8);
  aGid = sqlite3_malloc64((n+1)*8);
  aOrd = sqlite3_malloc64((n+1)*4);
  if( rc==SQLITE_OK && (aFirst==0 || aTmp==0 || aGid==0 || aOrd==0) ) rc = SQLITE_NOMEM;
  if( rc==SQLITE_OK ){
    /* Stable sort of the positions by (group, value). */
    const uint64_t *aaW[3];
    aaW[0] = aGid;
    aaW[1] = a1;
    aaW[2] = a2;
    assert( aOff!=0 );
    px_segment_ids_u64(aOff, nGroup, aGid, nThread);
    rc = parRcFromPx(px_sort_words_perm(aaW, a2 ? 3 : 2, n, aOrd, aTmp, nThread));
    if( rc==SQLITE_OK ){
      #pragma omp parallel for num_threads(nThread) schedule(static)
      for(i=0; i<n; i++){
        uint32_t r = aOrd[i];
        int bFirst = 1;
        if( i>0 ){
          uint32_t q = aOrd[i-1];
          bFirst = aGid[r]!=aGid[q] || a1[r]!=a1[q] || (a2 && a2[r]!=a2[q]);
        }
        aFirst[r] = (uint8_t)(bFirst && parColumnType(pArg, r)!=SQLITE_NULL);
      }
    }
  }
  sqlite3_free(a1);
  sqlite3_free(a2);
  sqlite3_free(aTmp);
  sqlite3_free(aGid);
  sqlite3_free(aOrd);
  if( rc ){
    sqlite3_free(aFirst);
    return rc;
  }
  *paFirst = aFirst;
  return SQLITE_OK;
}

/* ---- the result batch ------------------------------------------------------------ */

/* Make column iCol of pOut with pOut->nRow rows: MIXED, all NULL, or
** left unset when !bNull (the caller writes every row, and touches the
** pages first in parallel); or eStore INTEGER or REAL, left unset, with
** no NULLs yet. */
static int outColumn(ParBatch *pOut, int iCol, const char *zName, int bNull, int eStore){
  ParColumn *pCol = &pOut->aCol[iCol];
  size_t n = (size_t)(pOut->nRow ? pOut->nRow : 1);
  pCol->zName = sqlite3_mprintf("%s", zName);
  pCol->eStore = eStore;
  if( eStore==PAR_COL_INT || eStore==PAR_COL_REAL ){
    void *p = parBigMalloc((sqlite3_int64)n*8);
    if( eStore==PAR_COL_INT ) pCol->aInt = p; else pCol->aReal = p;
    return pCol->zName==0 || p==0 ? SQLITE_NOMEM : SQLITE_OK;
  }
  assert( eStore==PAR_COL_MIXED );
  pCol->aType = parBigMalloc((sqlite3_int64)n);
  pCol->aVal = parBigMalloc((sqlite3_int64)n*8);
  if( pCol->zName==0 || pCol->aType==0 || pCol->aVal==0 ) return SQLITE_NOMEM;
  if( bNull ){
    memset(pCol->aType, SQLITE_NULL, n);
    memset(pCol->aVal, 0, n*8);
  }else{
#ifdef PAR_POISON_UNSET
    /* Sanitizer builds: a row the caller forgets to write is no type at
    ** all (parColumnResult asserts), not a NULL by luck of zeroed pages. */
    memset(pCol->aType, 0xAB, n);
    memset(pCol->aVal, 0xCD, n*8);
#endif
  }
  return SQLITE_OK;
}

/* Prepare aRun[j] for aggregate j over the columns aCol (rows or group
** positions, whichever the caller aggregates over): agg.c's, and the first
** row of each value within its group for DISTINCT. */
static int prepareRuns(sqlite3 *db, const ParPlan *pPlan, ParColumn *aCol,
                       sqlite3_int64 nRow, const size_t *aOff, size_t nGroup,
                       int nThread, ParAggRun *aRun){
  int k, rc = SQLITE_OK;
  for(k=0; k<pPlan->nAgg && rc==SQLITE_OK; k++){
    const ParPlanAgg *pA = &pPlan->aAgg[k];
    ParAggRun *pR = &aRun[k];
    rc = parAggRunInit(db, pA, aCol, nRow, nThread, pR);
    if( rc==SQLITE_OK && pA->bDistinct ){
      rc = markDistinct(aOff, nGroup, pR->pArg, pA->eColl<0 ? PAR_COLL_BINARY : pA->eColl,
                        nRow, nThread, &pR->aFirst);
    }
  }
  return rc;
}

/* Write the aggregates a[0..nAgg-1] of group gi, every one (NULL for
** group_concat, which finishResult() writes).  Returns 1 when sum()
** overflowed (the caller then lets SQLite run the SELECT), else 0. */
static int outGroup(const ParAggRun *aRun, int nAgg, const ParAcc *a, ParBatch *pOut,
                    sqlite3_int64 gi){
  int j, bOverflow = 0;
  for(j=0; j<nAgg; j++) bOverflow |= parAggValue(&aRun[j], &a[j], &pOut->aCol[j], gi);
  return bOverflow;
}

/* Make the result batch: nGroup rows of nAgg aggregates and nBare bare
** columns, MIXED and all NULL so far (unset when !bNull), or stored as
** aStore says when it is not NULL (see outColumn()). */
static int newResult(const ParPlan *pPlan, size_t nGroup, int bNull, const int *aStore,
                     ParBatch **ppOut){
  int nOut = pPlan->nAgg + pPlan->nBare, k, rc = SQLITE_OK;
  ParBatch *pOut = sqlite3_malloc(sizeof(ParBatch));
  *ppOut = pOut;
  if( pOut==0 ) return SQLITE_NOMEM;
  memset(pOut, 0, sizeof(*pOut));
  pOut->nRef = 1;
  pOut->nRow = (sqlite3_int64)nGroup;
  pOut->nRowAlloc = pOut->nRow;
  pOut->aCol = sqlite3_malloc64(sizeof(ParColumn)*(nOut+1));
  if( pOut->aCol==0 ) return SQLITE_NOMEM;
  memset(pOut->aCol, 0, sizeof(ParColumn)*(nOut+1));
  pOut->nCol = nOut;
  for(k=0; k<nOut && rc==SQLITE_OK; k++){
    char zName[32];
    sqlite3_snprintf(sizeof(zName), zName, "c%d", k);
    rc = outColumn(pOut, k, zName, bNull, aStore ? aStore[k] : PAR_COL_MIXED);
  }
  return rc;
}

/* Copied TEXT and BLOB values keep the codes of the columns they come
** from: the result borrows those dictionaries (aRun's arguments for
** min/max, aBareSrc's columns for bare columns).  group_concat results
** get dictionaries of their own, built from aCol (rows in the order of
** aOff's groups). */
static int finishResult(const ParPlan *pPlan, const ParAggRun *aRun, ParColumn *aCol,
                        const ParColumn *aBareSrc, const size_t *aOff, size_t nGroup,
                        ParBatch *pOut){
  int k, rc = SQLITE_OK, nAgg = pPlan->nAgg;
  for(k=0; k<pPlan->nBare; k++){
    pOut->aCol[nAgg+k].pDict = aBareSrc[pPlan->aBareCol[k]].pDict;
    pOut->aCol[nAgg+k].bBorrowDict = 1;
  }
  for(k=0; k<nAgg && rc==SQLITE_OK; k++){
    rc = parAggFinishColumn(&aRun[k], aCol, aOff, nGroup, pOut, k);
  }
  return rc;
}

/* The row SQLite takes bare columns from.  It loads them on a group's
** first row only, unless a min() or max() is present: then on every row
** where the last one it analysed (iDecide) did not skip, that is up to the
** row that set its final value, or every row while its values are NULL.
** iFirst / iLast: the group's first and last row; -1 for an empty group. */
static sqlite3_int64 bareRow(const ParAcc *a, int iDecide, sqlite3_int64 iFirst,
                             sqlite3_int64 iLast){
  if( iDecide<0 ) return iFirst;
  return a[iDecide].iBest>=0 ? a[iDecide].iBest : iLast;
}

/* ---- the two strategies ----------------------------------------------------------- */

/* The sequential sums of aggregateDirect() (aRun[j].bSeq) into *paSeq
** ([b*nAgg+j] for key value b; malloc): every key value's rows in order,
** by a stable counting sort of the rows by aBin (all rows when aBin is
** NULL), then one task per key value and sum, many at once.  A REAL
** argument without NULLs is gathered into that order first, so that each
** task reads its values in sequence. */
static int directSeq(const ParAggRun *aRun, int nAgg, const uint32_t *aBin, uint32_t nBin,
                     size_t n, int nThread, ParAcc **paSeq){
  uint32_t *aPerm = 0;
  size_t *aOff = sqlite3_malloc64(sizeof(size_t)*((size_t)nBin+1));
  ParAcc *aSeq = malloc(sizeof(ParAcc)*(size_t)nBin*nAgg);   /* 16-byte aligned */
  ParAggRun *aOrd = sqlite3_malloc64(sizeof(ParAggRun)*(nAgg+1));  /* aRun, gathered */
  ParColumn *aCol = sqlite3_malloc64(sizeof(ParColumn)*(nAgg+1));
  px_stop *pStop = px_stop_installed();
  sqlite3_int64 t, nTask = (sqlite3_int64)nBin*nAgg;
  size_t i;
  int j, rc = SQLITE_OK;
  *paSeq = 0;
  if( aCol ) memset(aCol, 0, sizeof(ParColumn)*(nAgg+1));
  if( aOff==0 || aSeq==0 || aOrd==0 || aCol==0 ){ rc = SQLITE_NOMEM; goto done; }
  memcpy(aOrd, aRun, sizeof(ParAggRun)*nAgg);
  for(i=0; i<(size_t)nBin*nAgg; i++) parAccInit(&aSeq[i]);
  aOff[0] = 0;
  if( aBin ){
    const void *aaSrc[PAR_SCATTER_MAX];
    void *aaDst[PAR_SCATTER_MAX];
    int nVal = 0, bPerm = 0;
    for(j=0; j<nAgg; j++){
      const ParColumn *pArg = aRun[j].pArg;
      if( !aRun[j].bSeq ) continue;
      if( pArg->eStore!=PAR_COL_REAL || pArg->nNull || nVal==PAR_SCATTER_MAX ){
        bPerm = 1;              /* read through the row numbers */
        continue;
      }
      aCol[j].eStore = PAR_COL_REAL;
      aCol[j].aReal = parBigMalloc((sqlite3_int64)(n+1)*8);
      if( aCol[j].aReal==0 ){ rc = SQLITE_NOMEM; goto done; }
      aOrd[j].pArg = &aCol[j];
      aaSrc[nVal] = pArg->aReal;
      aaDst[nVal++] = aCol[j].aReal;
    }
    if( bPerm ){
      aPerm = sqlite3_malloc64((n+1)*sizeof(uint32_t));
      if( aPerm==0 ){ rc = SQLITE_NOMEM; goto done; }
    }
    rc = parRcFromPx(px_countsort_u32(aBin, n, nBin, aPerm, aOff, nVal, aaSrc, aaDst,
                                      nThread));
    if( rc ) goto done;
    assert( aOff[nBin]==n );
  }else{
    aOff[1] = n;
  }
  #pragma omp parallel for num_threads(nThread) schedule(dynamic, 1)
  for(t=0; t<nTask; t++){
    size_t bb = (size_t)t/nAgg;
    int jj = (int)(t%nAgg);
    if( !aRun[jj].bSeq || aOff[bb]==aOff[bb+1] || px_stopping(pStop) ) continue;
    parAggSeqFold(&aOrd[jj], &aSeq[t], aCol[jj].aReal ? 0 : aPerm, aOff[bb], aOff[bb+1]);
  }
  if( px_stopping(pStop) ) rc = SQLITE_INTERRUPT;
done:
  for(j=0; aCol && j<nAgg; j++) parBigFree(aCol[j].aReal);
  sqlite3_free(aCol);
  sqlite3_free(aOrd);
  sqlite3_free(aPerm);
  sqlite3_free(aOff);
  if( rc ) free(aSeq); else *paSeq = aSeq;
  return rc;
}

/* One run of aggregateDirect(): per chunk of rows, a state per (key value,
** aggregate) and the key values' row counts, first and last rows. */
typedef struct ParDirectRun {
  const ParPlan *pPlan;
  ParBatch *pIn;
  const uint32_t *aBin;      /* each row's key value, or NULL: all in bin 0 */
  uint32_t nBin;
  int nThread;
  size_t n, nChunk;
  size_t accStride;          /* ParAccs per chunk */
  size_t cntStride;          /* counts, first and last rows per chunk */
  ParAggRun *aRun;           /* [j]: aggregate j */
  ParAcc *aAcc;              /* [c*accStride + b*nAgg + j] (malloc) */
  sqlite3_int64 *aCnt, *aFirst, *aLast;   /* [c*cntStride + b] */
  sqlite3_int64 *aGid;       /* [b]: the group of key value b, or -1 */
  uint64_t *aMag;            /* [c*nAgg+j]: integer sums, see parAggFold() */
  ParAcc *aSeq;              /* [b*nAgg+j]: sequential sum j of key value b */
} ParDirectRun;

/* Set up *p (zeroed by the caller): chunks, the aggregates, the arrays. */
static int directInit(ParDirectRun *p, sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
                      const uint32_t *aBin, uint32_t nBin, int nThread){
  size_t n = (size_t)pIn->nRow, nChunk;
  int nAgg = pPlan->nAgg, rc, k;
  nChunk = (n + PAR_CHUNK - 1)/PAR_CHUNK;
  if( nChunk > PAR_DIRECT_ACC/nBin ) nChunk = PAR_DIRECT_ACC/nBin;
  if( nChunk<1 ) nChunk = 1;
  p->pPlan = pPlan;
  p->pIn = pIn;
  p->aBin = aBin;
  p->nBin = nBin;
  p->nThread = nThread;
  p->n = n;
  p->nChunk = nChunk;
  /* Each chunk's private state is followed by at least 128 unused bytes,
  ** so two threads never write to one cache line (with few key values,
  ** and none at all without GROUP BY, they would on every row). */
  p->accStride = nBin*(size_t)nAgg + (128 + sizeof(ParAcc) - 1)/sizeof(ParAcc);
  p->cntStride = nBin + 16;
  p->aRun = sqlite3_malloc64(sizeof(ParAggRun)*(nAgg+1));
  if( p->aRun==0 ) return SQLITE_NOMEM;
  memset(p->aRun, 0, sizeof(ParAggRun)*(nAgg+1));
  rc = prepareRuns(db, pPlan, pIn->aCol, pIn->nRow, 0, 0, nThread, p->aRun);
  if( rc ) return rc;
  for(k=0; k<nAgg; k++) p->aRun[k].bFastSum = parAggIntSum(&p->aRun[k]);
  /* malloc: ParAcc needs the 16-byte alignment of __int128. */
  p->aAcc = malloc(sizeof(ParAcc)*nChunk*p->accStride);
  p->aCnt = sqlite3_malloc64(sizeof(sqlite3_int64)*nChunk*p->cntStride);
  p->aFirst = sqlite3_malloc64(sizeof(sqlite3_int64)*nChunk*p->cntStride);
  p->aLast = sqlite3_malloc64(sizeof(sqlite3_int64)*nChunk*p->cntStride);
  p->aGid = sqlite3_malloc64(sizeof(sqlite3_int64)*(nBin+1));
  p->aMag = sqlite3_malloc64(sizeof(uint64_t)*(nChunk*nAgg+1));
  if( p->aAcc==0 || p->aCnt==0 || p->aFirst==0 || p->aLast==0 || p->aGid==0
   || p->aMag==0 ){
    return SQLITE_NOMEM;
  }
  memset(p->aMag, 0, sizeof(uint64_t)*(nChunk*nAgg+1));
  return SQLITE_OK;
}

static void directFree(ParDirectRun *p){
  int k;
  for(k=0; p->aRun && k<p->pPlan->nAgg; k++) parAggRunClear(&p->aRun[k]);
  sqlite3_free(p->aRun);
  free(p->aAcc);
  sqlite3_free(p->aCnt);
  sqlite3_free(p->aFirst);
  sqlite3_free(p->aLast);
  sqlite3_free(p->aGid);
  sqlite3_free(p->aMag);
  free(p->aSeq);
}

/* Chunk c's rows into its private states, in order, and its counts,
** first and last rows per key value. */
static void directChunk(ParDirectRun *p, size_t c){
  size_t n = p->n, lo = n*c/p->nChunk, hi = n*(c+1)/p->nChunk, r, i;
  int nAgg = p->pPlan->nAgg, j;
  ParAcc *a = &p->aAcc[c*p->accStride];
  sqlite3_int64 *cnt = &p->aCnt[c*p->cntStride], *first = &p->aFirst[c*p->cntStride];
  sqlite3_int64 *last = &p->aLast[c*p->cntStride];
  for(i=0; i<p->nBin*(size_t)nAgg; i++) parAccInit(&a[i]);
  memset(cnt, 0, p->nBin*sizeof(sqlite3_int64));
  if( p->aBin==0 ){
    cnt[0] = (sqlite3_int64)(hi-lo);
    first[0] = (sqlite3_int64)lo;
    last[0] = (sqlite3_int64)hi-1;
  }else{
    for(r=lo; r<hi; r++){
      uint32_t bin = p->aBin[r];
      if( cnt[bin]++==0 ) first[bin] = (sqlite3_int64)r;
      last[bin] = (sqlite3_int64)r;
    }
  }
  for(j=0; j<nAgg; j++){
    parAggFold(&p->aRun[j], a + j, nAgg, p->aBin, lo, hi,
               p->aRun[j].bFastSum ? &p->aMag[c*nAgg+j] : 0);
  }
}

/* Integer sums folded fast: again, following the running sums, if one
** might overflow. */
static void directRefold(ParDirectRun *p){
  int nAgg = p->pPlan->nAgg, k;
  size_t b;
  for(k=0; k<nAgg; k++){
    uint64_t m = 0;
    sqlite3_int64 c;
    if( !p->aRun[k].bFastSum ) continue;
    for(b=0; b<p->nChunk; b++) if( p->aMag[b*nAgg+k]>m ) m = p->aMag[b*nAgg+k];
    if( parSumCannotOverflow(m, p->n) ) continue;
    #pragma omp parallel for num_threads(p->nThread) schedule(dynamic, 1)
    for(c=0; c<(sqlite3_int64)p->nChunk; c++){
      size_t lo = p->n*c/p->nChunk, hi = p->n*(c+1)/p->nChunk, i;
      for(i=0; i<p->nBin; i++) parAccInit(&p->aAcc[c*p->accStride + i*nAgg + k]);
      parAggFold(&p->aRun[k], &p->aAcc[c*p->accStride + k], nAgg, p->aBin, lo, hi, 0);
    }
  }
}

/* Key value bi's result row: its chunks' states combined in order, the
** sequential sums, the bare columns.  Returns 1 when sum() overflowed. */
static int directGroup(ParDirectRun *p, size_t bi, ParBatch *pOut){
  const ParPlan *pPlan = p->pPlan;
  int nAgg = pPlan->nAgg, j, bOverflow;
  sqlite3_int64 iFirst = -1, iLast = -1, gi = p->aGid[bi];
  ParAcc *a0 = 0;
  size_t c;
  for(c=0; c<p->nChunk; c++){
    ParAcc *a = &p->aAcc[c*p->accStride + bi*nAgg];
    if( p->aCnt[c*p->cntStride+bi]==0 ) continue;
    if( a0==0 ){
      a0 = a;
      iFirst = p->aFirst[c*p->cntStride+bi];
    }else{
      for(j=0; j<nAgg; j++) parAggCombine(&p->aRun[j], &a0[j], &a[j]);
    }
    iLast = p->aLast[c*p->cntStride+bi];
  }
  if( a0==0 ) a0 = &p->aAcc[bi*nAgg];   /* no rows: chunk 0's empty state */
  for(j=0; j<nAgg && p->aSeq; j++){
    if( p->aRun[j].bSeq ) a0[j] = p->aSeq[bi*nAgg + j];
  }
  bOverflow = outGroup(p->aRun, nAgg, a0, pOut, gi);
  for(j=0; j<pPlan->nBare; j++){
    parAggCopy(&pOut->aCol[nAgg+j], gi, &p->pIn->aCol[pPlan->aBareCol[j]],
               bareRow(a0, pPlan->iDecide, iFirst, iLast));
  }
  return bOverflow;
}

/* Few key values: no sorting.  Fixed row chunks (boundaries depend on n
** and nBin only) each fold their rows, in order, into private accumulators
** per key value; then each key value combines its chunks in order.  aBin
** NULL: no GROUP BY, every row in the one bin. */
static int aggregateDirect(sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
                           const uint32_t *aBin, uint32_t nBin, int nThread,
                           ParBatch **ppOut, int *pbOverflow){
  ParDirectRun run;
  px_stop *pStop = px_stop_installed();
  sqlite3_int64 c, bi;
  size_t b, nGroup = 0;
  int bOverflow = 0, nSeq = 0, k, rc;

  memset(&run, 0, sizeof(run));
  rc = directInit(&run, db, pPlan, pIn, aBin, nBin, nThread);
  if( rc ) goto done;
  #pragma omp parallel for num_threads(nThread) schedule(dynamic, 1)
  for(c=0; c<(sqlite3_int64)run.nChunk; c++){
    if( !px_stopping(pStop) ) directChunk(&run, (size_t)c);   /* nothing is read after */
  }
  if( px_stopping(pStop) ){ rc = SQLITE_INTERRUPT; goto done; }
  directRefold(&run);
  for(k=0; k<pPlan->nAgg; k++) if( run.aRun[k].bSeq ) nSeq++;
  if( nSeq>0 ){
    rc = directSeq(run.aRun, pPlan->nAgg, aBin, nBin, run.n, nThread, &run.aSeq);
    if( rc ) goto done;
  }
  /* Groups are the key values that occur, in key order. */
  for(b=0; b<nBin; b++){
    size_t c2;
    sqlite3_int64 t = 0;
    for(c2=0; c2<run.nChunk; c2++) t += run.aCnt[c2*run.cntStride+b];
    /* Without GROUP BY there is one group even for no rows. */
    run.aGid[b] = (t || pPlan->nKey==0) ? (sqlite3_int64)nGroup++ : -1;
  }
  rc = newResult(pPlan, nGroup, 1, 0, ppOut);
  if( rc ) goto done;
  #pragma omp parallel for num_threads(nThread) schedule(dynamic, 16) reduction(|:bOverflow)
  for(bi=0; bi<(sqlite3_int64)nBin; bi++){
    if( run.aGid[bi]>=0 ) bOverflow |= directGroup(&run, (size_t)bi, *ppOut);
  }
  rc = finishResult(pPlan, run.aRun, pIn->aCol, pIn->aCol, 0, 0, *ppOut);

done:
  *pbOverflow = bOverflow;
  directFree(&run);
  return rc;
}

/* Has the caller asked to stop (par.h)?  For loops over many small
** items: every 64th index asks, the others only read the flag. */
static int stopAt(px_stop *p, size_t i){
  if( p==0 ) return 0;
  return (i & 63)==0 ? px_stopping(p) : __atomic_load_n(&p->bStop, __ATOMIC_RELAXED);
}

/* One run of aggregateSorted(). */
typedef struct ParSortedRun {
  const ParPlan *pPlan;
  ParBatch *pIn;
  const uint32_t *aPerm;     /* the rows, group by group */
  const size_t *aOff;        /* [g]: group g's first position; nGroup+1 */
  size_t nGroup;
  int nThread;
  ParColumn *aG;             /* [k]: input column k in group order, when used */
  ParAggRun *aRun;           /* [j]: aggregate j, over aG */
  size_t nChunk;             /* chunks of the large groups */
  size_t *aChunk;            /* [c]: first position of chunk c */
  size_t *aChunkGroup;       /* [c]: the group of chunk c */
  ParAcc *aAcc;              /* [c*nAgg + j]: aggregate j over chunk c */
  ParAcc *aOwn;              /* [t*(nAgg+1) + j]: thread t's, for one group */
  sqlite3_int64 *aBare;      /* [g]: the input row of group g's bare columns */
} ParSortedRun;

/* The columns the aggregates read, gathered into group order, and the
** aggregates over them. */
static int sortedInit(ParSortedRun *p, sqlite3 *db){
  const ParPlan *pPlan = p->pPlan;
  int nAgg = pPlan->nAgg, nCol = p->pIn->nCol, k, rc = SQLITE_OK;
  uint8_t *aUsed = sqlite3_malloc64(nCol+1);
  p->aG = sqlite3_malloc64(sizeof(ParColumn)*(nCol+1));
  p->aRun = sqlite3_malloc64(sizeof(ParAggRun)*(nAgg+1));
  /* Zeroed before anything can fail: the error path frees what they hold. */
  if( p->aG ) memset(p->aG, 0, sizeof(ParColumn)*(nCol+1));
  if( p->aRun ) memset(p->aRun, 0, sizeof(ParAggRun)*(nAgg+1));
  if( p->aG==0 || aUsed==0 || p->aRun==0 ){ sqlite3_free(aUsed); return SQLITE_NOMEM; }
  memset(aUsed, 0, nCol+1);
  for(k=0; k<nAgg; k++){
    const ParPlanAgg *pA = &pPlan->aAgg[k];
    if( pA->iArg>=0 ) aUsed[pA->iArg] = 1;
    if( pA->iText>=0 ) aUsed[pA->iText] = 1;
    if( pA->iSep>=0 ) aUsed[pA->iSep] = 1;
  }
  for(k=0; k<nCol && rc==SQLITE_OK; k++){
    if( aUsed[k] ) rc = parColumnGather(&p->pIn->aCol[k], p->aPerm, p->pIn->nRow,
                                        p->nThread, &p->aG[k]);
    if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  }
  sqlite3_free(aUsed);
  if( rc ) return rc;
  rc = prepareRuns(db, pPlan, p->aG, p->pIn->nRow, p->aOff, p->nGroup, p->nThread, p->aRun);
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  if( rc ) return rc;
  p->aOwn = malloc((size_t)p->nThread*(nAgg+1)*sizeof(ParAcc));   /* 16-byte aligned */
  if( pPlan->nBare>0 ) p->aBare = sqlite3_malloc64((p->nGroup+1)*sizeof(sqlite3_int64));
  if( p->aOwn==0 || (pPlan->nBare>0 && p->aBare==0) ) return SQLITE_NOMEM;
  return SQLITE_OK;
}

static void sortedFree(ParSortedRun *p){
  int k;
  for(k=0; p->aRun && k<p->pPlan->nAgg; k++) parAggRunClear(&p->aRun[k]);
  for(k=0; p->aG && k<p->pIn->nCol; k++) parColumnClear(&p->aG[k]);
  sqlite3_free(p->aG);
  sqlite3_free(p->aRun);
  sqlite3_free(p->aChunk);
  sqlite3_free(p->aChunkGroup);
  free(p->aAcc);
  free(p->aOwn);
  sqlite3_free(p->aBare);
}

/* The large groups' chunks, in group order, folded in parallel; their
** sequential sums, one task per group and sum, into the state of the
** group's first chunk. */
static int sortedChunks(ParSortedRun *p, px_stop *pStop){
  const size_t *aOff = p->aOff;
  int nAgg = p->pPlan->nAgg;
  size_t nChunk = 0, c = 0, g, q;
  sqlite3_int64 gi, ci;
  #pragma omp parallel for num_threads(p->nThread) schedule(static) reduction(+:nChunk)
  for(gi=0; gi<(sqlite3_int64)p->nGroup; gi++){
    size_t len = aOff[gi+1]-aOff[gi];
    if( len>PAR_CHUNK ) nChunk += (len + PAR_CHUNK - 1)/PAR_CHUNK;
  }
  p->nChunk = nChunk;
  if( nChunk==0 ) return SQLITE_OK;
  p->aChunk = sqlite3_malloc64(nChunk*sizeof(size_t));
  p->aChunkGroup = sqlite3_malloc64(nChunk*sizeof(size_t));
  p->aAcc = malloc(nChunk*(nAgg+1)*sizeof(ParAcc));          /* 16-byte aligned */
  if( p->aChunk==0 || p->aChunkGroup==0 || p->aAcc==0 ) return SQLITE_NOMEM;
  for(g=0; g<p->nGroup; g++){
    if( aOff[g+1]-aOff[g]<=PAR_CHUNK ) continue;
    for(q=aOff[g]; q<aOff[g+1]; q+=PAR_CHUNK){
      p->aChunk[c] = q;
      p->aChunkGroup[c++] = g;
    }
  }
  assert( c==nChunk );
  #pragma omp parallel for num_threads(p->nThread) schedule(dynamic, 1)
  for(ci=0; ci<(sqlite3_int64)nChunk; ci++){
    size_t lo = p->aChunk[ci], hi = aOff[p->aChunkGroup[ci]+1];
    ParAcc *a = &p->aAcc[(size_t)ci*nAgg];
    int j;
    if( px_stopping(pStop) ) continue;     /* nothing is read after */
    if( hi-lo>PAR_CHUNK ) hi = lo + PAR_CHUNK;
    for(j=0; j<nAgg; j++){
      parAccInit(&a[j]);
      parAggFold(&p->aRun[j], &a[j], 1, 0, lo, hi, 0);
    }
  }
  #pragma omp parallel for num_threads(p->nThread) schedule(dynamic, 1)
  for(ci=0; ci<(sqlite3_int64)nChunk*nAgg; ci++){
    size_t c1 = (size_t)ci/nAgg, g1 = p->aChunkGroup[c1];
    int j = (int)(ci%nAgg);
    if( !p->aRun[j].bSeq || (c1>0 && p->aChunkGroup[c1-1]==g1) ) continue;
    if( px_stopping(pStop) ) continue;
    parAggSeqFold(&p->aRun[j], &p->aAcc[c1*nAgg + j], 0, aOff[g1], aOff[g1+1]);
  }
  return SQLITE_OK;
}

/* Group gi's result row: a small group folded here into this thread's
** states, a large one's chunks combined in order; and the row its bare
** columns come from.  Returns 1 when sum() overflowed. */
static int sortedGroup(ParSortedRun *p, size_t gi, ParBatch *pOut){
  const ParPlan *pPlan = p->pPlan;
  size_t lo = p->aOff[gi], hi = p->aOff[gi+1];
  int nAgg = pPlan->nAgg, j, bOverflow;
  sqlite3_int64 iBare = -1;
  ParAcc *a;
  if( hi-lo<=PAR_CHUNK ){
    a = &p->aOwn[(size_t)omp_get_thread_num()*(nAgg+1)];
    for(j=0; j<nAgg; j++){
      parAccInit(&a[j]);
      parAggFold(&p->aRun[j], &a[j], 1, 0, lo, hi, 0);
      if( p->aRun[j].bSeq ) parAggSeqFold(&p->aRun[j], &a[j], 0, lo, hi);
    }
  }else{
    /* The group's first chunk; its others follow it. */
    size_t c0 = 0, c1 = p->nChunk, c;
    while( c0<c1 ){
      size_t mid = (c0+c1)/2;
      if( p->aChunkGroup[mid] < gi ) c0 = mid+1; else c1 = mid;
    }
    a = &p->aAcc[c0*nAgg];
    for(c=c0+1; c<p->nChunk && p->aChunkGroup[c]==gi; c++){
      for(j=0; j<nAgg; j++) parAggCombine(&p->aRun[j], &a[j], &p->aAcc[c*nAgg+j]);
    }
  }
  if( hi>lo ) iBare = bareRow(a, pPlan->iDecide, (sqlite3_int64)lo, (sqlite3_int64)hi-1);
  bOverflow = outGroup(p->aRun, nAgg, a, pOut, (sqlite3_int64)gi);
  if( p->aBare ) p->aBare[gi] = iBare<0 ? -1 : (sqlite3_int64)p->aPerm[iBare];
  return bOverflow;
}

/* Bare columns in loops of their own: the input rows are scattered, and
** short loops keep many reads of them in flight at once. */
static void sortedBare(ParSortedRun *p, ParBatch *pOut, px_stop *pStop){
  const ParPlan *pPlan = p->pPlan;
  const sqlite3_int64 *aBare = p->aBare;
  int k;
  for(k=0; k<pPlan->nBare; k++){
    ParColumn *pDst = &pOut->aCol[pPlan->nAgg+k];
    const ParColumn *pSrc = &p->pIn->aCol[pPlan->aBareCol[k]];
    sqlite3_int64 gi;
    if( (pSrc->eStore==PAR_COL_INT || pSrc->eStore==PAR_COL_REAL) && pSrc->nNull==0 ){
      /* Numbers without NULLs: nothing to decide per row. */
      int bInt = pSrc->eStore==PAR_COL_INT;
      #pragma omp parallel for num_threads(p->nThread) schedule(static)
      for(gi=0; gi<(sqlite3_int64)p->nGroup; gi++){
        sqlite3_int64 r = aBare[gi];
        if( stopAt(pStop, (size_t)gi) ) continue;      /* nothing is read after */
        uint64_t v = 0;
        if( r>=0 ){
          if( bInt ) v = (uint64_t)pSrc->aInt[r]; else memcpy(&v, &pSrc->aReal[r], 8);
        }
        pDst->aType[gi] = (uint8_t)(r<0 ? SQLITE_NULL : bInt ? SQLITE_INTEGER : SQLITE_FLOAT);
        pDst->aVal[gi] = v;
      }
    }else{
      #pragma omp parallel for num_threads(p->nThread) schedule(static)
      for(gi=0; gi<(sqlite3_int64)p->nGroup; gi++){
        if( !stopAt(pStop, (size_t)gi) ) parAggCopy(pDst, gi, pSrc, aBare[gi]);
      }
    }
  }
}

/* Any number of groups: rows sorted into groups, the aggregates' columns
** gathered into that order (so aggregation reads memory sequentially).
** A group of at most PAR_CHUNK rows is folded in one go by the thread that
** writes its result row; a larger one is cut into chunks of PAR_CHUNK
** rows, folded in parallel beforehand and combined in order.  Bare
** columns are read from the input, at the one row each group takes them
** from. */
static int aggregateSorted(sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
                           const uint32_t *aPerm, const size_t *aOff, size_t nGroup,
                           int nThread, ParBatch **ppOut, int *pbOverflow){
  ParSortedRun run;
  px_stop *pStop = px_stop_installed();   /* par.h: asked per chunk and group */
  sqlite3_int64 gi;
  int bOverflow = 0, rc;

  memset(&run, 0, sizeof(run));
  run.pPlan = pPlan;
  run.pIn = pIn;
  run.aPerm = aPerm;
  run.aOff = aOff;
  run.nGroup = nGroup;
  run.nThread = nThread;
  rc = sortedInit(&run, db);
  if( rc==SQLITE_OK ) rc = sortedChunks(&run, pStop);
  if( rc ) goto done;
  if( px_stopping(pStop) ){ rc = SQLITE_INTERRUPT; goto done; }

  /* Every group's result row.  Every output value is written (unless
  ** stopping: the result is freed then). */
  rc = newResult(pPlan, nGroup, 0, 0, ppOut);
  if( rc ) goto done;
  #pragma omp parallel for num_threads(nThread) schedule(dynamic, 256) reduction(|:bOverflow)
  for(gi=0; gi<(sqlite3_int64)nGroup; gi++){
    if( !stopAt(pStop, (size_t)gi) ) bOverflow |= sortedGroup(&run, (size_t)gi, *ppOut);
  }
  if( px_stopping(pStop) ){ rc = SQLITE_INTERRUPT; goto done; }
  sortedBare(&run, *ppOut, pStop);
  if( px_stopping(pStop) ){ rc = SQLITE_INTERRUPT; goto done; }
  rc = finishResult(pPlan, run.aRun, run.aG, pIn->aCol, aOff, nGroup, *ppOut);

done:
  *pbOverflow = bOverflow;
  sortedFree(&run);
  return rc;
}

/* ---- dense accumulation -------------------------------------------------------- */

/* Can aggregateDense() compute pPlan's aggregates?  Bare columns must
** come from each group's first row, or be an INTEGER key itself (bIntKey:
** equal keys are the same value whichever row they come from); each
** aggregate must have dense accumulators (agg.h).  Integer sums are
** checked for overflow later. */
static int denseFits(const ParPlan *pPlan, const ParBatch *pIn, int bIntKey){
  int j;
  if( pPlan->nKey>1 ) return 0;
  for(j=0; j<pPlan->nBare && pPlan->iDecide>=0; j++){
    if( pPlan->aBareCol[j]!=0 || !bIntKey ) return 0;
  }
  for(j=0; j<pPlan->nAgg; j++){
    const ParPlanAgg *pA = &pPlan->aAgg[j];
    if( !parAggDenseFits(pA, pA->iArg>=0 ? &pIn->aCol[pA->iArg] : 0) ) return 0;
  }
  return 1;
}

/* The result of aggregateDense() for nGroup groups, each column stored as
** its values are: INTEGER for counts, and for sums, least and greatest
** values of INTEGER arguments and the INTEGER key; REAL for total(), avg()
** and the least and greatest of REAL arguments (each NULL where a group has
** no value); a bare column from each group's first row MIXED. */
static int denseResult(const ParPlan *pPlan, const ParAggDense *aD, const ParColumn *pIntKey,
                       size_t nGroup, ParBatch **ppOut){
  int nAgg = pPlan->nAgg, nOut = nAgg + pPlan->nBare, k, rc;
  int *aStore = sqlite3_malloc64(sizeof(int)*(nOut+1));
  if( aStore==0 ) return SQLITE_NOMEM;
  for(k=0; k<nOut; k++){
    if( k<nAgg ){
      aStore[k] = parAggDenseStore(&aD[k]);
    }else{
      aStore[k] = pPlan->aBareCol[k-nAgg]==0 && pIntKey ? PAR_COL_INT : PAR_COL_MIXED;
    }
  }
  rc = newResult(pPlan, nGroup, 0, aStore, ppOut);
  sqlite3_free(aStore);
  return rc;
}

/* Row i of pCol (nRow rows) is NULL. */
static int denseNull(ParColumn *pCol, sqlite3_int64 i, size_t nRow){
  if( pCol->aNull==0 ){
    size_t nByte = nRow/8 + 1;
    pCol->aNull = sqlite3_malloc64(nByte);
    if( pCol->aNull==0 ) return SQLITE_NOMEM;
    memset(pCol->aNull, 0, nByte);
  }
  pCol->aNull[i>>3] |= (uint8_t)(1 << (i&7));
  pCol->nNull++;
  return SQLITE_OK;
}

/* One run of aggregateDense(): each thread's arrays per key value. */
typedef struct ParDenseRun {
  const ParPlan *pPlan;
  ParBatch *pIn;
  ParAggBins bins;           /* each row's key value */
  uint32_t nBin;
  int nThread;
  int nVal, nCnt;            /* value and count arrays per thread */
  int bFirst;                /* each thread's first row per key value */
  ParAggDense *aD;           /* [j]: aggregate j */
  sqlite3_int64 **aaVal;     /* [t*nVal + i]: thread t's value array i */
  uint32_t **aaCnt;          /* [t*nCnt + i]: 0 is the rows per key value */
  uint32_t **aaFirst;        /* [t]: thread t's first row per key value */
  uint32_t *aGid;            /* [b]: the group of key value b, or UINT32_MAX */
  size_t nGroup;
} ParDenseRun;

/* Set up *p (zeroed by the caller): the aggregates' dense accumulators and
** the arrays of pointers to each thread's.  Returns SQLITE_DONE when an
** integer sum might overflow. */
static int denseInit(ParDenseRun *p, const ParPlan *pPlan, ParBatch *pIn,
                     const uint32_t *aBin, uint32_t nBin, const ParColumn *pIntKey,
                     sqlite3_int64 iLo, int nThread){
  int nAgg = pPlan->nAgg, j;
  size_t n = (size_t)pIn->nRow;
  p->pPlan = pPlan;
  p->pIn = pIn;
  p->nBin = nBin;
  p->nThread = nThread;
  p->nCnt = 1;
  p->bins.aBin = aBin;
  p->bins.aKey = pIntKey ? pIntKey->aInt : 0;
  p->bins.aNull = pIntKey && pIntKey->nNull ? pIntKey->aNull : 0;
  p->bins.lo = (uint64_t)iLo;
  p->bins.base = p->bins.aNull ? 1 : 0;
  for(j=0; j<pPlan->nBare; j++){
    if( pPlan->aBareCol[j]!=0 || pIntKey==0 ) p->bFirst = 1;
  }
  p->aD = sqlite3_malloc64(sizeof(ParAggDense)*(nAgg+1));
  if( p->aD==0 ) return SQLITE_NOMEM;
  for(j=0; j<nAgg; j++){
    const ParPlanAgg *pA = &pPlan->aAgg[j];
    parAggDenseInit(&p->aD[j], pA, pA->iArg>=0 ? &pIn->aCol[pA->iArg] : 0,
                    &p->nVal, &p->nCnt);
  }
  p->aaVal = sqlite3_malloc64(sizeof(sqlite3_int64*)*((size_t)nThread*p->nVal+1));
  p->aaCnt = sqlite3_malloc64(sizeof(uint32_t*)*((size_t)nThread*p->nCnt+1));
  p->aGid = parBigMalloc((sqlite3_int64)sizeof(uint32_t)*((sqlite3_int64)nBin+1));
  p->aaFirst = sqlite3_malloc64(sizeof(uint32_t*)*((size_t)nThread+1));
  if( p->aaVal==0 || p->aaCnt==0 || p->aGid==0 || p->aaFirst==0 ) return SQLITE_NOMEM;
  memset(p->aaFirst, 0, sizeof(uint32_t*)*((size_t)nThread+1));
  memset(p->aaVal, 0, sizeof(sqlite3_int64*)*((size_t)nThread*p->nVal+1));
  memset(p->aaCnt, 0, sizeof(uint32_t*)*((size_t)nThread*p->nCnt+1));
  for(j=0; j<nAgg; j++){
    if( !parAggDenseExact(&p->aD[j], n, nThread) ) return SQLITE_DONE;
  }
  return SQLITE_OK;
}

static void denseFree(ParDenseRun *p){
  int t;
  if( p->aaVal ) for(t=0; t<p->nThread*p->nVal; t++) parBigFree(p->aaVal[t]);
  if( p->aaCnt ) for(t=0; t<p->nThread*p->nCnt; t++) parBigFree(p->aaCnt[t]);
  if( p->aaFirst ) for(t=0; t<p->nThread; t++) parBigFree(p->aaFirst[t]);
  sqlite3_free(p->aaVal);
  sqlite3_free(p->aaCnt);
  sqlite3_free(p->aaFirst);
  parBigFree(p->aGid);
  sqlite3_free(p->aD);
}

/* Thread slot tt's arrays, allocated and first touched by the thread that
** fills them.  Returns 0 when one could not be had. */
static int denseAlloc(ParDenseRun *p, int tt){
  size_t nBin = p->nBin, b;
  sqlite3_int64 **aV = &p->aaVal[(size_t)tt*p->nVal];
  uint32_t **aC = &p->aaCnt[(size_t)tt*p->nCnt];
  int i, j;
  for(i=0; i<p->nCnt; i++){
    aC[i] = parBigMalloc((sqlite3_int64)sizeof(uint32_t)*((sqlite3_int64)nBin+1));
    if( aC[i]==0 ) return 0;
    memset(aC[i], 0, sizeof(uint32_t)*nBin);
  }
  for(j=0; j<p->pPlan->nAgg; j++){
    const ParAggDense *pD = &p->aD[j];
    sqlite3_int64 *a, v0;
    if( pD->iVal<0 ) continue;
    a = aV[pD->iVal] = parBigMalloc((sqlite3_int64)sizeof(sqlite3_int64)*((sqlite3_int64)nBin+1));
    if( a==0 ) return 0;
    v0 = parAggDenseStart(pD);
    if( v0 ) for(b=0; b<nBin; b++) a[b] = v0;
    else memset(a, 0, sizeof(sqlite3_int64)*nBin);
  }
  if( p->bFirst ){
    p->aaFirst[tt] = parBigMalloc((sqlite3_int64)sizeof(uint32_t)*((sqlite3_int64)nBin+1));
    if( p->aaFirst[tt]==0 ) return 0;
  }
  return 1;
}

/* Thread slot tt's share of the rows, a contiguous range, into its
** arrays: a pass for the rows per key value (and the first of each), then
** one per aggregate, each block by block in order, asking between blocks
** whether to stop.  (Interleaving the aggregates block by block was
** slower.) */
static void denseThread(ParDenseRun *p, int tt, px_stop *pStop){
  size_t n = (size_t)p->pIn->nRow, r;
  size_t lo0 = n*tt/p->nThread, hi0 = n*(tt+1)/p->nThread, lo, hi;
  sqlite3_int64 **aV = &p->aaVal[(size_t)tt*p->nVal];
  uint32_t **aC = &p->aaCnt[(size_t)tt*p->nCnt];
  uint32_t *cnt = aC[0], *first = p->aaFirst[tt];
  const ParAggBins *pBins = &p->bins;
  int j;
  for(lo=lo0; lo<hi0 && !px_stopping(pStop); lo=hi){
    hi = hi0 - lo > PAR_CHUNK ? lo + PAR_CHUNK : hi0;
    if( first ){
      PAR_DENSE_FOR_ROWS(pBins, {
        if( cnt[bin]++==0 ) first[bin] = (uint32_t)r;
      })
    }else{
      PAR_DENSE_FOR_ROWS(pBins, { cnt[bin]++; })
    }
  }
  for(j=0; j<p->pPlan->nAgg; j++){
    const ParAggDense *pD = &p->aD[j];
    if( !parAggDenseReads(pD) ) continue;
    for(lo=lo0; lo<hi0 && !px_stopping(pStop); lo=hi){
      hi = hi0 - lo > PAR_CHUNK ? lo + PAR_CHUNK : hi0;
      parAggDenseFold(pD, pBins, lo, hi, pD->iVal>=0 ? aV[pD->iVal] : 0,
                      pD->iCnt>=0 ? aC[pD->iCnt] : 0);
    }
  }
}

/* Thread 0's arrays get the totals, key value by key value in thread
** order. */
static void denseMerge(ParDenseRun *p){
  sqlite3_int64 bi;
  int nThread = p->nThread, nCnt = p->nCnt, nVal = p->nVal;
  #pragma omp parallel for num_threads(nThread) schedule(static)
  for(bi=0; bi<(sqlite3_int64)p->nBin; bi++){
    int u, jj;
    for(u=1; u<nThread; u++){
      if( p->bFirst && p->aaCnt[0][bi]==0 ) p->aaFirst[0][bi] = p->aaFirst[u][bi];
      for(jj=0; jj<nCnt; jj++) p->aaCnt[jj][bi] += p->aaCnt[(size_t)u*nCnt+jj][bi];
      for(jj=0; jj<p->pPlan->nAgg; jj++){
        const ParAggDense *pD = &p->aD[jj];
        if( pD->iVal<0 ) continue;
        parAggDenseMerge(pD, &p->aaVal[pD->iVal][bi], p->aaVal[(size_t)u*nVal+pD->iVal][bi]);
      }
    }
  }
}

/* Every key value a group, and a value in every group: thread 0's totals
** are an INTEGER sum's, min's or max's result column as they are. */
static void denseAdopt(ParDenseRun *p, ParBatch *pOut){
  int j;
  for(j=0; j<p->pPlan->nAgg && p->nGroup==p->nBin; j++){
    const ParAggDense *pD = &p->aD[j];
    if( parAggDenseIsResult(pD) ){
      ParColumn *pDst = &pOut->aCol[j];
      parBigFree(pDst->aInt);
      pDst->aInt = p->aaVal[pD->iVal];
      p->aaVal[pD->iVal] = 0;
    }
  }
}

/* The result rows: the key or the first row's bare columns, and each
** aggregate's value from thread 0's totals; then the NULLs. */
static int denseWrite(ParDenseRun *p, const ParColumn *pIntKey, sqlite3_int64 iLo,
                      ParBatch *pOut){
  const ParPlan *pPlan = p->pPlan;
  int nAgg = pPlan->nAgg, bKeyNull = pIntKey && pIntKey->nNull>0, j, rc = SQLITE_OK;
  sqlite3_int64 bi;
  size_t b;
  #pragma omp parallel for num_threads(p->nThread) schedule(static)
  for(bi=0; bi<(sqlite3_int64)p->nBin; bi++){
    sqlite3_int64 gi = p->aGid[bi];
    int jj;
    if( p->aGid[bi]==UINT32_MAX ) continue;
    for(jj=0; jj<pPlan->nBare; jj++){
      ParColumn *pDst = &pOut->aCol[nAgg+jj];
      if( pDst->eStore==PAR_COL_INT ){
        /* The key (its NULL bin 0 gets its bit below). */
        pDst->aInt[gi] = bKeyNull && bi==0 ? 0
                       : (sqlite3_int64)((uint64_t)iLo + (uint64_t)(bi - bKeyNull));
      }else{
        parAggCopy(pDst, gi, &p->pIn->aCol[pPlan->aBareCol[jj]], p->aaFirst[0][bi]);
      }
    }
    for(jj=0; jj<nAgg; jj++){
      const ParAggDense *pD = &p->aD[jj];
      uint32_t nn = p->aaCnt[pD->iCnt>=0 ? pD->iCnt : 0][bi];
      if( pD->iVal>=0 && p->aaVal[pD->iVal]==0 ) continue;    /* the column already */
      parAggDenseWrite(pD, &pOut->aCol[jj], gi, pD->iVal>=0 ? p->aaVal[pD->iVal][bi] : 0, nn);
    }
  }
  /* NULLs: the NULL key's group, and sums, averages, least and greatest
  ** values of groups whose arguments were all NULL. */
  if( bKeyNull && p->aGid[0]!=UINT32_MAX ){
    for(j=0; j<pPlan->nBare && rc==SQLITE_OK; j++){
      if( pOut->aCol[nAgg+j].eStore==PAR_COL_INT ){
        rc = denseNull(&pOut->aCol[nAgg+j], 0, p->nGroup);
      }
    }
  }
  for(j=0; j<nAgg && rc==SQLITE_OK; j++){
    const ParAggDense *pD = &p->aD[j];
    const uint32_t *aN = p->aaCnt[pD->iCnt>=0 ? pD->iCnt : 0];
    if( !parAggDenseNull(pD) ) continue;
    for(b=0; b<p->nBin && rc==SQLITE_OK; b++){
      if( p->aGid[b]!=UINT32_MAX && aN[b]==0 ) rc = denseNull(&pOut->aCol[j], p->aGid[b], p->nGroup);
    }
  }
  return rc;
}

/* Few enough key values for memory (nBin per thread, no more than four
** times the rows in all) and no aggregate needing its group's rows in
** order: private accumulators per thread for every key value (agg.h's
** dense accumulators).  Bare columns come from each group's first row
** (its first in the first thread that has one); a bare column that is an
** INTEGER key itself (pIntKey, binned by intKeyBins() from iLo) comes
** from its bin.  Returns SQLITE_OK with *ppOut NULL when an integer sum
** might overflow (the caller then uses another strategy). */
static int aggregateDense(const ParPlan *pPlan, ParBatch *pIn, const uint32_t *aBin,
                          uint32_t nBin, const ParColumn *pIntKey, sqlite3_int64 iLo,
                          int nThread, ParBatch **ppOut){
  ParDenseRun run;
  size_t b;
  int j, t, rc;
  px_stop *pStop;                /* par.h: asked per block of rows */

  *ppOut = 0;
  assert( aBin || pIntKey );
  memset(&run, 0, sizeof(run));
  rc = denseInit(&run, pPlan, pIn, aBin, nBin, pIntKey, iLo, nThread);
  if( rc==SQLITE_DONE ){ rc = SQLITE_OK; goto done; }
  if( rc ) goto done;

  /* One slot per thread: a slot runs on some thread even when OpenMP
  ** gives fewer than asked. */
  pStop = px_stop_installed();
  #pragma omp parallel for num_threads(nThread) schedule(static, 1)
  for(t=0; t<nThread; t++){
    if( denseAlloc(&run, t) ) denseThread(&run, t, pStop);
  }
  for(t=0; t<nThread*run.nVal; t++) if( run.aaVal[t]==0 ) rc = SQLITE_NOMEM;
  for(t=0; t<nThread*run.nCnt; t++) if( run.aaCnt[t]==0 ) rc = SQLITE_NOMEM;
  for(t=0; t<nThread && run.bFirst; t++) if( run.aaFirst[t]==0 ) rc = SQLITE_NOMEM;
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  if( rc ) goto done;
  denseMerge(&run);

  /* Groups: the key values that occur, in key order.  Without GROUP BY
  ** there is one group even for no rows. */
  for(b=0; b<nBin; b++){
    run.aGid[b] = (run.aaCnt[0][b] || pPlan->nKey==0) ? (uint32_t)run.nGroup++ : UINT32_MAX;
  }
  rc = denseResult(pPlan, run.aD, pIntKey, run.nGroup, ppOut);
  if( rc ) goto done;
  for(j=0; j<pPlan->nBare; j++){
    ParColumn *pDst = &(*ppOut)->aCol[pPlan->nAgg+j];
    if( pDst->eStore!=PAR_COL_MIXED ) continue;
    pDst->pDict = pIn->aCol[pPlan->aBareCol[j]].pDict;
    pDst->bBorrowDict = 1;
  }
  denseAdopt(&run, *ppOut);
  rc = denseWrite(&run, pIntKey, iLo, *ppOut);

done:
  denseFree(&run);
  if( rc ){
    parBatchFree(*ppOut);
    *ppOut = 0;
  }
  return rc;
}

/* The bins of an INTEGER key column, when its values span fewer than
** PAR_COUNT_MAX-1: NULL is bin 0 (when there are NULLs), value v is bin
** v - least (+1 with NULLs).  *pnBin stays 0 when they span more.  The
** array of bins is made only by intKeyBins(): the dense path reads the
** key in place. */
static void intKeyRange(const ParColumn *pCol, size_t n, int nThread,
                        uint32_t *pnBin, sqlite3_int64 *piLo){
  const uint8_t *aNull = pCol->nNull ? pCol->aNull : 0;
  sqlite3_int64 lo, hi;
  *pnBin = 0;
  parIntRange(pCol, n, nThread, &lo, &hi);
  if( lo>hi ){
    lo = hi = 0;                 /* NULLs only */
  }else if( (sqlite3_uint64)hi - (sqlite3_uint64)lo >= PAR_COUNT_MAX-1 ){
    return;
  }
  *pnBin = (uint32_t)((sqlite3_uint64)hi - (sqlite3_uint64)lo) + 1 + (aNull ? 1 : 0);
  *piLo = lo;
}

static int intKeyBins(const ParColumn *pCol, size_t n, int nThread, sqlite3_int64 iLo,
                      uint32_t **paBin){
  const sqlite3_int64 *v = pCol->aInt;
  const uint8_t *aNull = pCol->nNull ? pCol->aNull : 0;
  uint32_t *aBin, base = aNull ? 1 : 0;
  size_t i;
  *paBin = aBin = sqlite3_malloc64(n*sizeof(uint32_t) + 1);
  if( aBin==0 ) return SQLITE_NOMEM;
  #pragma omp parallel for num_threads(nThread)
  for(i=0; i<n; i++){
    aBin[i] = (aNull && (aNull[i>>3] >> (i&7)) & 1) ? 0
            : (uint32_t)((sqlite3_uint64)v[i] - (sqlite3_uint64)iLo) + base;
  }
  return SQLITE_OK;
}

/* The bins of a TEXT key column under collation eColl, straight from its
** dictionary codes: NULL is bin 0 (when there are NULLs), a value is its
** dense rank among the dictionary's entries (+1 with NULLs), which is the
** order of the sort keys (parColumnKeys), equal values under the
** collation in one bin.  Spares the key words (8 bytes a row) and a pass
** for their range; the ranks stay with the dictionary for the next query
** of a cached batch.  *pnBin stays 0 when they span PAR_COUNT_MAX-1 or
** more. */
static int textKeyBins(ParColumn *pCol, int eColl, size_t n, int nThread,
                       uint32_t **paBin, uint32_t *pnBin){
  const uint32_t *aRank, *aCode = pCol->aCode;
  const uint8_t *aNull = pCol->nNull ? pCol->aNull : 0;
  uint32_t nRank = 0, e, base = aNull ? 1 : 0, *aBin;
  size_t i;
  *paBin = 0;
  *pnBin = 0;
  aRank = parDictRank(pCol->pDict, eColl);
  if( aRank==0 ) return SQLITE_NOMEM;
  for(e=0; e<pCol->pDict->nEntry; e++) if( aRank[e]+1>nRank ) nRank = aRank[e]+1;
  if( (uint64_t)nRank + base >= PAR_COUNT_MAX-1 ) return SQLITE_OK;
  *paBin = aBin = sqlite3_malloc64(n*sizeof(uint32_t) + 1);
  if( aBin==0 ) return SQLITE_NOMEM;
  #pragma omp parallel for num_threads(nThread)
  for(i=0; i<n; i++){
    aBin[i] = (aNull && (aNull[i>>3] >> (i&7)) & 1) ? 0 : aRank[aCode[i]] + base;
  }
  *pnBin = nRank + base;
  return SQLITE_OK;
}

/* The bins of key k of several (see parGroupBy()): *paBin (n of them,
** sqlite3_malloc) and *pnBin, in the order of the key's sort keys, equal
** keys in one bin; *pnBin stays 0 (and *paBin NULL) when the key's values
** span PAR_COUNT_MAX-1 or more, or need two words. */
static int oneKeyBins(const ParPlan *pPlan, ParBatch *pIn, int k, size_t n, int nThread,
                      uint32_t **paBin, uint32_t *pnBin){
  ParColumn *pCol = &pIn->aCol[k];
  int eColl = pPlan->aKeyColl[k], rc = SQLITE_OK;
  *paBin = 0;
  *pnBin = 0;
  if( pCol->eStore==PAR_COL_INT ){
    sqlite3_int64 iLo = 0;
    intKeyRange(pCol, n, nThread, pnBin, &iLo);
    if( *pnBin ) rc = intKeyBins(pCol, n, nThread, iLo, paBin);
  }else if( pCol->eStore==PAR_COL_TEXT && pCol->pDict && eColl>=0 && eColl<PAR_N_COLL ){
    rc = textKeyBins(pCol, eColl, n, nThread, paBin, pnBin);
  }else{
    uint64_t *a1 = 0, *a2 = 0;
    rc = parColumnKeys(pCol, (sqlite3_int64)n, eColl<0 ? PAR_COLL_BINARY : eColl, 0, nThread,
                       &a1, &a2);
    if( rc==SQLITE_OK && a2==0 ){
      uint64_t lo = UINT64_MAX, hi = 0;
      size_t i;
      #pragma omp parallel for num_threads(nThread) reduction(min:lo) reduction(max:hi)
      for(i=0; i<n; i++){
        if( a1[i]<lo ) lo = a1[i];
        if( a1[i]>hi ) hi = a1[i];
      }
      if( hi-lo < PAR_COUNT_MAX-1 ){
        uint32_t *aBin = sqlite3_malloc64(n*sizeof(uint32_t) + 1);
        if( aBin==0 ){
          rc = SQLITE_NOMEM;
        }else{
          #pragma omp parallel for num_threads(nThread)
          for(i=0; i<n; i++) aBin[i] = (uint32_t)(a1[i]-lo);
          *paBin = aBin;
          *pnBin = (uint32_t)(hi-lo+1);
        }
      }
    }
    sqlite3_free(a1);
    sqlite3_free(a2);
  }
  if( rc ){
    sqlite3_free(*paBin);
    *paBin = 0;
    *pnBin = 0;
  }
  return rc;
}

/* Bins for several keys whose value combinations are few: each key's bins
** (oneKeyBins()), combined as one number per row, most significant key
** first, so that bins are in key order and each is one group.  *pnBin
** stays 0 when a key has none or the combinations reach PAR_COUNT_MAX. */
static int multiKeyBins(const ParPlan *pPlan, ParBatch *pIn, size_t n, int nThread,
                        uint32_t **paBin, uint32_t *pnBin){
  uint32_t *aBin = 0, nBin = 1;
  int k, rc = SQLITE_OK;
  *paBin = 0;
  *pnBin = 0;
  for(k=0; k<pPlan->nKey && rc==SQLITE_OK; k++){
    uint32_t *aK = 0, nK = 0;
    size_t i;
    rc = oneKeyBins(pPlan, pIn, k, n, nThread, &aK, &nK);
    if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
    if( rc || nK==0 || (uint64_t)nBin*nK >= PAR_COUNT_MAX ){
      sqlite3_free(aK);
      sqlite3_free(aBin);
      return rc;
    }
    if( aBin==0 ){
      aBin = aK;
    }else{
      #pragma omp parallel for num_threads(nThread)
      for(i=0; i<n; i++) aBin[i] = aBin[i]*nK + aK[i];
      sqlite3_free(aK);
    }
    nBin *= nK;
  }
  *paBin = aBin;
  *pnBin = nBin;
  return rc;
}

/* Is there room under memory_mb for pIn's rows and nExtra more bytes of
** the group-by's own arrays?  Else *pzErr, before those are made. */
static int groupFits(const ParContext *pCtx, const ParBatch *pIn, double nExtra,
                     char **pzErr){
  sqlite3_int64 mx = parMemLimit(pCtx);
  if( mx>0 && (double)parBatchBytes(pIn) + nExtra > (double)mx ){
    *pzErr = sqlite3_mprintf("memory limit of %lld MB exceeded while grouping rows "
                             "(see par_config('memory_mb'))", mx/(1024*1024));
    return SQLITE_FULL;
  }
  return SQLITE_OK;
}

/* The peak bytes the sorted strategies take besides the input, for n rows
** in at most nGroup groups: the larger of the sorting phase (permutation;
** the radix sort's nWord words, sorted copy and scratch, or the counting
** sort's bins and histograms of nBin bins) and the aggregation phase
** (permutation and group offsets, the aggregated columns in group order,
** the keys of min()/max() and of DISTINCT, the result). */
static double sortedBytes(const ParPlan *pPlan, const ParBatch *pIn, size_t n,
                          int nWord, uint32_t nBin, int nThread, double nGroup){
  double sort, agg, perRow = 12;
  int k;
  if( nWord>0 ) sort = (double)n*(8.0*nWord + 24);
  else sort = (double)n*13 + (double)nBin*(4.0*nThread + 8);
  for(k=0; k<pIn->nCol; k++){
    int j, bUsed = 0;
    for(j=0; j<pPlan->nAgg; j++){
      const ParPlanAgg *pA = &pPlan->aAgg[j];
      if( pA->iArg==k || pA->iText==k || pA->iSep==k ) bUsed = 1;
    }
    if( bUsed ) perRow += 9;
  }
  for(k=0; k<pPlan->nAgg; k++){
    const ParPlanAgg *pA = &pPlan->aAgg[k];
    if( pA->bDistinct ) perRow += 49;
    if( pA->eFunc==PAR_AGG_MIN || pA->eFunc==PAR_AGG_MAX ) perRow += 16;
  }
  agg = (double)n*perRow + nGroup*(9.0*(pPlan->nAgg + pPlan->nBare) + 8);
  return sort>agg ? sort : agg;
}

/* Does the data need a collation the planner could not determine?  Only
** text does: the SELECT then runs natively. */
static int collationUnknown(const ParPlan *pPlan, const ParBatch *pIn){
  int k;
  for(k=0; k<pPlan->nKey + pPlan->nAgg; k++){
    const ParColumn *pCol;
    int eColl;
    if( k<pPlan->nKey ){
      eColl = pPlan->aKeyColl[k];
      pCol = &pIn->aCol[k];
    }else{
      const ParPlanAgg *pA = &pPlan->aAgg[k-pPlan->nKey];
      if( pA->eFunc!=PAR_AGG_MIN && pA->eFunc!=PAR_AGG_MAX && !pA->bDistinct ) continue;
      eColl = pA->eColl;
      pCol = &pIn->aCol[pA->iArg];
    }
    if( eColl==PAR_COLL_UNKNOWN && pCol->pDict ){
      uint32_t e;
      for(e=0; e<pCol->pDict->nEntry; e++){
        if( pCol->pDict->aKind[e]==SQLITE_TEXT ) return 1;
      }
    }
  }
  return 0;
}

/* A HAVING term SQLite moved into WHERE sees each row's key: the final
** SQL, which sees the group's row's, answers the same only when every
** row of a group holds the same value of each key it may name (keys
** under NOCASE or RTRIM keep their terms in HAVING).  Does some group
** hold different values?  The SELECT then runs natively. */
static int havingKeysDiffer(const ParPlan *pPlan, const ParBatch *pIn){
  int k;
  for(k=0; k<pPlan->nKey && pPlan->bHavingKeys; k++){
    if( pPlan->aKeyColl[k]!=PAR_COLL_NOCASE && pPlan->aKeyColl[k]!=PAR_COLL_RTRIM
     && keyEqualButDifferent(&pIn->aCol[k], (size_t)pIn->nRow) ){
      return 1;
    }
  }
  return 0;
}

/* How parGroupBy() groups: the bins of the keys when they can be had, the
** key words otherwise, and the strategy. */
typedef struct ParGroupHow {
  uint32_t *aBin;            /* each row's bin (sqlite3_malloc), or NULL */
  uint32_t nBin;             /* bins: key values in order; 1 without keys */
  const ParColumn *pIntKey;  /* the INTEGER key the bins come from */
  sqlite3_int64 iKeyLo;      /* its least value */
  uint64_t *aaWord[2*PAR_ROWS_MAX+2];    /* the key words (keyWords()) */
  int nWord;
  int bDirect, bDense, bCount;           /* the strategy (else radix sort) */
} ParGroupHow;

/* The bins of a single key that is not an INTEGER or TEXT column with a
** known collation: from its one key word, when it has one and its values
** span fewer than PAR_COUNT_MAX-1 (the words stay in pHow either way). */
static int wordBins(const ParPlan *pPlan, ParBatch *pIn, int nThread, ParGroupHow *pHow){
  size_t n = (size_t)pIn->nRow, i;
  int rc = keyWords(pPlan, pIn, nThread, pHow->aaWord, &pHow->nWord);
  /* Stopped: the words are partly written; read none of them. */
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  if( rc==SQLITE_OK && pHow->nWord==1 ){
    const uint64_t *w = pHow->aaWord[0];
    uint64_t lo = UINT64_MAX, hi = 0;
    #pragma omp parallel for num_threads(nThread) reduction(min:lo) reduction(max:hi)
    for(i=0; i<n; i++){
      if( w[i]<lo ) lo = w[i];
      if( w[i]>hi ) hi = w[i];
    }
    if( hi-lo < PAR_COUNT_MAX-1 ){
      pHow->nBin = (uint32_t)(hi-lo+1);
      pHow->aBin = sqlite3_malloc64(n*sizeof(uint32_t));
      if( pHow->aBin==0 ) return SQLITE_NOMEM;
      #pragma omp parallel for num_threads(nThread)
      for(i=0; i<n; i++) pHow->aBin[i] = (uint32_t)(w[i]-lo);
    }
  }
  return rc;
}

/* Bins, when they can be had: one key whose values (or words) span fewer
** than PAR_COUNT_MAX, each bin one group, in key order; several keys whose
** combinations are few; one bin without GROUP BY. */
static int groupBins(const ParPlan *pPlan, ParBatch *pIn, int nThread, int eForce,
                     ParGroupHow *pHow){
  size_t n = (size_t)pIn->nRow;
  if( pPlan->nKey==0 ){
    pHow->nBin = 1;              /* one bin, and no array of bins */
  }else if( pPlan->nKey>1 && n>0 && eForce!=PAR_GROUP_RADIX ){
    return multiKeyBins(pPlan, pIn, n, nThread, &pHow->aBin, &pHow->nBin);
  }else if( pPlan->nKey==1 && n>0 && eForce!=PAR_GROUP_RADIX ){
    if( pIn->aCol[0].eStore==PAR_COL_INT ){
      /* An INTEGER key: straight from the values (NULL first, then the
      ** values in order: the order of the sort keys). */
      intKeyRange(&pIn->aCol[0], n, nThread, &pHow->nBin, &pHow->iKeyLo);
      if( pHow->nBin ) pHow->pIntKey = &pIn->aCol[0];
    }else if( pIn->aCol[0].eStore==PAR_COL_TEXT && pIn->aCol[0].pDict
           && pPlan->aKeyColl[0]>=0 && pPlan->aKeyColl[0]<PAR_N_COLL ){
      return textKeyBins(&pIn->aCol[0], pPlan->aKeyColl[0], n, nThread,
                         &pHow->aBin, &pHow->nBin);
    }else{
      return wordBins(pPlan, pIn, nThread, pHow);
    }
  }
  return SQLITE_OK;
}

/* The strategy: par_config('group_strategy') when it applies, else the
** first that does of direct, dense (within its memory bound), counting
** sort, radix sort.  All give the same result.  bOrdered: an aggregate
** needs its group's rows together (DISTINCT, group_concat). */
static void groupStrategy(const ParPlan *pPlan, const ParBatch *pIn, int nThread,
                          int eForce, int bOrdered, ParGroupHow *pHow){
  size_t n = (size_t)pIn->nRow;
  uint32_t nBin = pHow->nBin;
  int bBins = pHow->aBin!=0 || pHow->pIntKey!=0, bSmall;
  int bDirect = (bBins || pPlan->nKey==0) && !bOrdered && nBin<=PAR_DIRECT_MAX;
  int bDense = bBins && !bOrdered && pPlan->nKey==1 && n<UINT32_MAX
            && denseFits(pPlan, pIn, pHow->pIntKey!=0);
  int bCount = bBins && pPlan->nKey>0 && (nBin<=PAR_DIRECT_MAX || (!bOrdered && nBin<=n));
  /* A forced dense or counting sort also runs on small inputs, within
  ** 2^20 (or four per row) accumulators or histogram bins in all. */
  bSmall = (size_t)nBin*(size_t)nThread <= (4*n > (1<<20) ? 4*n : (1<<20));
  if( eForce==PAR_GROUP_DIRECT && bDirect ){
    bDense = bCount = 0;
  }else if( eForce==PAR_GROUP_DENSE && bDense && bSmall ){
    bDirect = bCount = 0;
  }else if( eForce==PAR_GROUP_COUNT && bBins && pPlan->nKey>0 && bSmall ){
    bDirect = bDense = 0;
    bCount = 1;
  }else if( eForce==PAR_GROUP_RADIX ){
    bDirect = bDense = bCount = 0;
  }else if( bDirect ){
    bDense = bCount = 0;
  }else{
    /* Dense: each thread's accumulators for every key value; no more of
    ** them in all than four per row. */
    bDense = bDense && (size_t)nBin*(size_t)nThread <= 4*n;
  }
  pHow->bDirect = bDirect;
  pHow->bDense = bDense;
  pHow->bCount = bCount;
}

/* The direct strategy, within memory_mb. */
static int groupDirect(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
                       int nThread, ParGroupHow *pHow, ParBatch **ppOut, int *pbOverflow,
                       char **pzErr, const char **pzStrategy){
  size_t n = (size_t)pIn->nRow;
  uint32_t nBin = pHow->nBin;
  /* Accumulators: chunks of rows times key values, within a bound. */
  double nAcc = (double)(n/PAR_CHUNK + 1);
  int rc;
  if( nAcc*nBin > PAR_DIRECT_ACC ) nAcc = (double)(PAR_DIRECT_ACC/nBin > 0 ? PAR_DIRECT_ACC/nBin : 1);
  rc = groupFits(pCtx, pIn, (pHow->aBin ? 4.0*n : 0)
                            + nAcc*nBin*(pPlan->nAgg + 1)*sizeof(ParAcc)
                            + (double)nBin*(9.0*(pPlan->nAgg + pPlan->nBare) + 24), pzErr);
  if( rc ) return rc;
  *pzStrategy = "per-chunk accumulators per key value (few key values)";
  return aggregateDirect(db, pPlan, pIn, pHow->aBin, nBin, nThread, ppOut, pbOverflow);
}

/* The dense strategy, within memory_mb.  SQLITE_OK with *ppOut NULL when
** an integer sum might overflow: the caller goes on to a sort. */
static int groupDense(ParContext *pCtx, const ParPlan *pPlan, ParBatch *pIn, int nThread,
                      ParGroupHow *pHow, ParBatch **ppOut, char **pzErr,
                      const char **pzStrategy){
  size_t n = (size_t)pIn->nRow;
  uint32_t nBin = pHow->nBin;
  /* Each thread's value and count arrays per key value, the result. */
  int rc = groupFits(pCtx, pIn, (pHow->aBin ? 4.0*n : 0)
                                + (double)nThread*nBin*(12.0*pPlan->nAgg + 8)
                                + (double)nBin*(9.0*(pPlan->nAgg + pPlan->nBare) + 4), pzErr);
  if( rc ) return rc;
  rc = aggregateDense(pPlan, pIn, pHow->aBin, nBin, pHow->pIntKey, pHow->iKeyLo, nThread,
                      ppOut);
  if( rc || *ppOut ){
    *pzStrategy = "per-thread accumulators per key value (dense key values)";
  }
  return rc;
}

/* The sorted strategies: a counting sort by the bins (bCount), else a
** radix sort by the key words; then aggregateSorted(). */
static int groupSorted(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
                       int nThread, ParGroupHow *pHow, ParBatch **ppOut, int *pbOverflow,
                       char **pzErr, const char **pzStrategy){
  size_t n = (size_t)pIn->nRow, nGroup = 0, *aOff = 0;
  uint32_t *aPerm = 0, *aBin;
  int rc = SQLITE_OK, k;
  if( !pHow->bCount ){
    sqlite3_free(pHow->aBin);
    pHow->aBin = 0;
    if( pHow->nWord==0 && pPlan->nKey>0 ){
      rc = keyWords(pPlan, pIn, nThread, pHow->aaWord, &pHow->nWord);
    }
    if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
    if( rc ) return rc;
  }
  aBin = pHow->aBin;
  rc = groupFits(pCtx, pIn, sortedBytes(pPlan, pIn, n, aBin ? 0 : pHow->nWord,
                                       aBin ? pHow->nBin : 0, nThread,
                                       (double)(aBin && pHow->nBin<n ? pHow->nBin : n)), pzErr);
  if( rc ) return rc;
  *pzStrategy = aBin ? "counting sort, then segments"
              : pHow->nWord==0 ? "one group, in order" : "radix sort, then segments";
  rc = sortGroups(pHow->aaWord, pHow->nWord, aBin, pHow->nBin, n, nThread, &aPerm, &aOff,
                  &nGroup);
  for(k=0; k<pHow->nWord; k++){ sqlite3_free(pHow->aaWord[k]); pHow->aaWord[k] = 0; }
  pHow->nWord = 0;
  sqlite3_free(pHow->aBin);
  pHow->aBin = 0;
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  if( rc==SQLITE_OK ){
    rc = aggregateSorted(db, pPlan, pIn, aPerm, aOff, nGroup, nThread, ppOut, pbOverflow);
  }
  sqlite3_free(aPerm);
  sqlite3_free(aOff);
  return rc;
}

/* Row i of pCol as a class and 64 bits: equal pairs are the same value,
** byte for byte (text by its dictionary code: one code per value). */
static inline void keyCell(const ParColumn *p, size_t i, uint8_t *pCls, uint64_t *pBits){
  if( p->aNull && (p->aNull[i>>3] >> (i&7)) & 1 ){
    *pCls = SQLITE_NULL;
    *pBits = 0;
    return;
  }
  switch( p->eStore ){
    case PAR_COL_INT:  *pCls = SQLITE_INTEGER; *pBits = (uint64_t)p->aInt[i]; return;
    case PAR_COL_REAL: *pCls = SQLITE_FLOAT; memcpy(pBits, &p->aReal[i], 8); return;
    case PAR_COL_TEXT: *pCls = SQLITE_TEXT; *pBits = p->aCode[i]; return;
    case PAR_COL_MIXED: *pCls = p->aType[i]; *pBits = p->aVal[i]; return;
  }
  *pCls = SQLITE_NULL;
  *pBits = 0;
}

/* Does the first GROUP BY key, an INTEGER column, decide the others: do
** the rows of each of its values hold the same value of every other key,
** byte for byte?  (TPC-H's Q10: GROUP BY c_custkey, c_name, c_acctbal,
** c_phone, n_name, c_address, c_comment.)  Then the groups of the first
** key alone are the groups, in the same order (ascending keys: the first
** decides), and the other keys, bare columns of the result, are any row's
** values: the group-by runs on the first key alone, sparing the others'
** sort keys (text ranks: a sort of each dictionary).  Two passes over the
** rows: each value's first row claimed (any one will do), then every row
** compared with it. */
static int keyDecides(const ParPlan *pPlan, ParBatch *pIn, int nThread){
  const ParColumn *p0 = &pIn->aCol[0];
  const uint8_t *aNull = p0->nNull ? p0->aNull : 0;    /* (as intKeyRange) */
  size_t n = (size_t)pIn->nRow, i;
  uint32_t nBin = 0, *aFirst;
  sqlite3_int64 iLo = 0;
  int bSame = 1, k;
  if( pPlan->nKey<2 || p0->eStore!=PAR_COL_INT || n<2 || n>=UINT32_MAX ) return 0;
  intKeyRange(p0, n, nThread, &nBin, &iLo);
  if( nBin==0 || nBin>4*n + 1024 ) return 0;
  aFirst = sqlite3_malloc64((sqlite3_int64)nBin*sizeof(uint32_t));
  if( aFirst==0 ) return 0;
  memset(aFirst, 0xff, (size_t)nBin*sizeof(uint32_t));
  #pragma omp parallel for num_threads(nThread) schedule(static)
  for(i=0; i<n; i++){
    int bNull = aNull && (aNull[i>>3] >> (i&7)) & 1;
    uint32_t b = bNull ? 0 : (uint32_t)((sqlite3_uint64)p0->aInt[i] - (sqlite3_uint64)iLo)
                                + (aNull ? 1 : 0);
    uint32_t e = UINT32_MAX;
    __atomic_compare_exchange_n(&aFirst[b], &e, (uint32_t)i, 0, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
  }
  #pragma omp parallel for num_threads(nThread) schedule(static) private(k) \
          reduction(&&:bSame)
  for(i=0; i<n; i++){
    int bNull = aNull && (aNull[i>>3] >> (i&7)) & 1;
    uint32_t b = bNull ? 0 : (uint32_t)((sqlite3_uint64)p0->aInt[i] - (sqlite3_uint64)iLo)
                                + (aNull ? 1 : 0);
    size_t f = aFirst[b];
    for(k=1; k<pPlan->nKey && bSame && f!=i; k++){
      uint8_t c1, c2;
      uint64_t v1, v2;
      keyCell(&pIn->aCol[k], i, &c1, &v1);
      keyCell(&pIn->aCol[k], f, &c2, &v2);
      bSame = c1==c2 && v1==v2;
    }
  }
  sqlite3_free(aFirst);
  return bSame;
}

int parGroupBy(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
               ParBatch **ppOut, int *pbNative, char **pzErr,
               const char **pzStrategy){
  int nThread = parThreadsFor(pCtx, pIn->nRow);
  int eForce = pCtx->eGroupStrategy;
  int rc, k, bOverflow = 0, bOrdered = 0, bDecides = 0;
  size_t n = (size_t)pIn->nRow;
  ParGroupHow how;
  ParPlan one;

  *ppOut = 0;
  *pbNative = 0;
  *pzErr = 0;
  memset(&how, 0, sizeof(how));
  if( collationUnknown(pPlan, pIn) ){
    *pbNative = 1;
    return SQLITE_OK;
  }
  if( pPlan->nKey>PAR_ROWS_MAX ) return SQLITE_ERROR;
  if( havingKeysDiffer(pPlan, pIn) ){
    *pbNative = 1;
    return SQLITE_OK;
  }
  for(k=0; k<pPlan->nAgg; k++){
    const ParPlanAgg *pA = &pPlan->aAgg[k];
    if( pA->bDistinct || pA->eFunc==PAR_AGG_GROUP_CONCAT ) bOrdered = 1;
  }
  if( eForce==PAR_GROUP_AUTO && keyDecides(pPlan, pIn, nThread) ){
    /* The first key alone: the others come out as bare columns. */
    one = *pPlan;
    one.nKey = 1;
    pPlan = &one;
    bDecides = 1;
  }

  rc = groupBins(pPlan, pIn, nThread, eForce, &how);
  if( rc ) goto done;
  if( parStopped() ){ rc = SQLITE_INTERRUPT; goto done; }
  groupStrategy(pPlan, pIn, nThread, eForce, bOrdered, &how);
  if( how.pIntKey && how.aBin==0 && (how.bDirect || (how.bCount && !how.bDense)) ){
    rc = intKeyBins(how.pIntKey, n, nThread, how.iKeyLo, &how.aBin);
    if( rc ) goto done;
  }
  if( how.bDirect ){
    rc = groupDirect(pCtx, db, pPlan, pIn, nThread, &how, ppOut, &bOverflow, pzErr,
                     pzStrategy);
    goto done;
  }
  if( how.bDense ){
    rc = groupDense(pCtx, pPlan, pIn, nThread, &how, ppOut, pzErr, pzStrategy);
    if( rc || *ppOut ) goto done;
    /* An integer sum might overflow: a strategy that follows row order. */
    if( how.bCount && how.aBin==0 ){
      rc = intKeyBins(how.pIntKey, n, nThread, how.iKeyLo, &how.aBin);
      if( rc ) goto done;
    }
  }
  rc = groupSorted(pCtx, db, pPlan, pIn, nThread, &how, ppOut, &bOverflow, pzErr,
                   pzStrategy);

done:
  for(k=0; k<how.nWord; k++) sqlite3_free(how.aaWord[k]);
  sqlite3_free(how.aBin);
  if( bDecides && *pzStrategy ){
    /* (par_profile: the same strategy, by the first key.) */
    static const char *azBy[][2] = {
      { "per-chunk accumulators per key value (few key values)",
        "per-chunk accumulators per value of the first key, which decides the others" },
      { "per-thread accumulators per key value (dense key values)",
        "per-thread accumulators per value of the first key, which decides the others" },
      { "counting sort, then segments",
        "counting sort by the first key, which decides the others, then segments" },
      { "radix sort, then segments",
        "radix sort by the first key, which decides the others, then segments" },
    };
    for(k=0; k<(int)(sizeof(azBy)/sizeof(azBy[0])); k++){
      if( strcmp(*pzStrategy, azBy[k][0])==0 ) *pzStrategy = azBy[k][1];
    }
  }
  if( rc==SQLITE_OK && bOverflow ){
    /* Whether SQLite reports "integer overflow" depends on which groups
    ** its plan finalizes (HAVING moved to WHERE, LIMIT stopping early):
    ** let SQLite itself answer. */
    parBatchFree(*ppOut);
    *ppOut = 0;
    *pbNative = 1;
  }
  if( rc ){
    parBatchFree(*ppOut);
    *ppOut = 0;
    if( *pzErr==0 ) *pzErr = sqlite3_mprintf("%s", sqlite3_errstr(rc));
  }
  return rc;
}
