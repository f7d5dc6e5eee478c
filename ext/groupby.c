/*
** groupby.c: the group-by operator of parallel views, with SQLite's exact
** aggregate semantics.
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
**     seqStep()).  Such an aggregate is not folded in chunks: it runs as
**     one task per group (direct strategies: over a stable partition of
**     the rows by key value), many groups at once.
**  3. DISTINCT keeps the first row of each (group, value) pair: a stable
**     radix sort by (group, value words) marks them.
**  TEXT and BLOB arguments of sum/total/avg are converted by SQLite itself
**  (sqlite3_value_numeric_type), once per distinct value.
*/
#include "groupby.h"
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

/* A value of a batch column: storage class and bits (int64, double bits,
** or dictionary code). */
static int colGet(const ParColumn *pCol, sqlite3_int64 iRow, uint64_t *pV){
  int e = parColumnType(pCol, iRow);
  switch( pCol->eStore ){
    case PAR_COL_INT:   *pV = (uint64_t)pCol->aInt[iRow]; break;
    case PAR_COL_REAL:  memcpy(pV, &pCol->aReal[iRow], 8); break;
    case PAR_COL_TEXT:  *pV = pCol->aCode[iRow]; break;
    case PAR_COL_MIXED: *pV = pCol->aVal[iRow]; break;
    default:            *pV = 0; break;
  }
  return e;
}

/* Numeric view of a column for sum/total/avg: TEXT and BLOB dictionary
** entries converted the way sqlite3_value_numeric_type() and
** sqlite3_value_double() do. */
typedef struct ParNum {
  const ParColumn *pCol;
  uint8_t *aType;      /* per dictionary entry: SQLITE_INTEGER or SQLITE_FLOAT */
  sqlite3_int64 *aI;
  double *aR;
} ParNum;

static int parNumInit(sqlite3 *db, const ParColumn *pCol, ParNum *p){
  const ParDict *pD = pCol->pDict;
  sqlite3_stmt *pStmt = 0;
  uint32_t i, n = pD ? pD->nEntry : 0;
  int rc;
  memset(p, 0, sizeof(*p));
  p->pCol = pCol;
  if( n==0 ) return SQLITE_OK;
  p->aType = sqlite3_malloc64(n);
  p->aI = sqlite3_malloc64(n*sizeof(sqlite3_int64));
  p->aR = sqlite3_malloc64(n*sizeof(double));
  if( p->aType==0 || p->aI==0 || p->aR==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, "SELECT ?1", -1, &pStmt, 0);
  for(i=0; i<n && rc==SQLITE_OK; i++){
    const char *z = parDictText(pD, i);
    sqlite3_value *pV;
    if( pD->aKind[i]==SQLITE_TEXT ){
      sqlite3_bind_text(pStmt, 1, z, (int)pD->aLen[i], SQLITE_STATIC);
    }else{
      sqlite3_bind_blob(pStmt, 1, z, (int)pD->aLen[i], SQLITE_STATIC);
    }
    if( sqlite3_step(pStmt)!=SQLITE_ROW ){ rc = sqlite3_reset(pStmt); break; }
    /* The column's own value, converted in place: a copy from
    ** sqlite3_value_dup() has no connection, which
    ** sqlite3_value_numeric_type() needs from SQLite 3.53. */
    pV = sqlite3_column_value(pStmt, 0);
    if( sqlite3_value_numeric_type(pV)==SQLITE_INTEGER ){
      p->aType[i] = SQLITE_INTEGER;
      p->aI[i] = sqlite3_value_int64(pV);
      p->aR[i] = (double)p->aI[i];
    }else{
      p->aType[i] = SQLITE_FLOAT;
      p->aR[i] = sqlite3_value_double(pV);
    }
    sqlite3_reset(pStmt);
  }
  sqlite3_finalize(pStmt);
  return rc;
}

static void parNumClear(ParNum *p){
  sqlite3_free(p->aType);
  sqlite3_free(p->aI);
  sqlite3_free(p->aR);
}

/* Row iRow as a number: SQLITE_NULL, SQLITE_INTEGER (*pI and *pR set) or
** SQLITE_FLOAT (*pR set). */
static int parNumGet(const ParNum *p, sqlite3_int64 iRow, sqlite3_int64 *pI, double *pR){
  uint64_t v;
  int e = colGet(p->pCol, iRow, &v);
  switch( e ){
    case SQLITE_INTEGER: *pI = (sqlite3_int64)v; *pR = (double)*pI; return e;
    case SQLITE_FLOAT:   memcpy(pR, &v, 8); return e;
    case SQLITE_NULL:    return e;
    default:
      *pI = p->aI[v];
      *pR = p->aR[v];
      return p->aType[v];
  }
}

/* ---- accumulators ------------------------------------------------------------- */

/* The state of one aggregate over a run of rows.  Combining the states of
** two consecutive runs gives the state of their concatenation, except for
** sequential sums (ParAggRun.bSeq), which one pass over all of a group's
** rows in order fills as SQLite's SumCtx (seqStep()). */
typedef struct ParAcc {
  sqlite3_int64 n;        /* non-NULL values (rows for count(*)) */
  __int128 iSum;          /* integer sum (sequential: SQLite's iSum) */
  __int128 iMin, iMax;    /* least and greatest running sum over those */
  double rSum, rErr;      /* sequential sums: SQLite's rSum and rErr */
  uint8_t bApprox;        /* sequential sums: a non-integer was seen */
  uint8_t bOvfl;          /* sequential sums: SQLite's overflow flag */
  sqlite3_int64 iBest;    /* min/max: row of the kept value, -1 none */
  uint64_t kBest;         /* min/max with one-word keys: its key */
} ParAcc;

static void accInit(ParAcc *a){
  memset(a, 0, sizeof(*a));
  a->iBest = -1;
}

/* ---- SQLite's sums, step by step -------------------------------------------- */

/* Does the SQLite library loaded sum with Kahan-Babuska-Neumaier steps
** (3.43 and later) rather than plain double additions? */
static int seqKbn(void){
  return sqlite3_libversion_number()>=3043000;
}

/* One compensated step (func.c kahanBabuskaNeumaierStep; C11 evaluates
** each operation in double, in this order: no contraction, no reordering). */
static void kbnStep(ParAcc *a, double r){
  double s = a->rSum, t = s + r;
  if( fabs(s)>fabs(r) ) a->rErr += (s - t) + r;
  else a->rErr += (r - t) + s;
  a->rSum = t;
}

/* An integer of 2^52 or more in magnitude goes in as a multiple of 16384
** and the rest, each exact as a double (kahanBabuskaNeumaierStepInt64). */
static void kbnStepInt(ParAcc *a, sqlite3_int64 v){
  if( v<=-4503599627370496LL || v>=4503599627370496LL ){
    sqlite3_int64 sm = v % 16384;
    kbnStep(a, (double)(v - sm));
    kbnStep(a, (double)sm);
  }else{
    kbnStep(a, (double)v);
  }
}

/* The switch from the exact integer sum to the compensated one
** (kahanBabuskaNeumaierInit). */
static void kbnInit(ParAcc *a, sqlite3_int64 v){
  if( v<=-4503599627370496LL || v>=4503599627370496LL ){
    sqlite3_int64 sm = v % 16384;
    a->rSum = (double)(v - sm);
    a->rErr = (double)sm;
  }else{
    a->rSum = (double)v;
    a->rErr = 0.0;
  }
}

/* SQLite's sumStep() for one non-NULL value: an INTEGER v (bInt) or a
** REAL r.  Before 3.43 every value is added to rSum as a double and the
** integer sum is followed, for the overflow error, until a REAL comes;
** from 3.43 the integer sum is exact until a REAL or an overflow, then
** everything goes through the compensated steps. */
static void seqStep(ParAcc *a, int bKbn, int bInt, sqlite3_int64 v, double r){
  a->n++;
  if( !bKbn ){
    if( bInt ){
      sqlite3_int64 x = (sqlite3_int64)a->iSum;
      a->rSum += (double)v;
      if( !a->bApprox && !a->bOvfl ){
        if( __builtin_add_overflow(x, v, &x) ) a->bOvfl = 1;
        else a->iSum = x;
      }
    }else{
      a->rSum += r;
      a->bApprox = 1;
    }
  }else if( !a->bApprox ){
    if( bInt ){
      sqlite3_int64 x = (sqlite3_int64)a->iSum;
      if( !__builtin_add_overflow(x, v, &x) ){
        a->iSum = x;
      }else{
        a->bOvfl = 1;
        kbnInit(a, (sqlite3_int64)a->iSum);
        a->bApprox = 1;
        kbnStepInt(a, v);
      }
    }else{
      kbnInit(a, (sqlite3_int64)a->iSum);
      a->bApprox = 1;
      kbnStep(a, r);
    }
  }else if( bInt ){
    kbnStepInt(a, v);
  }else{
    a->bOvfl = 0;
    kbnStep(a, r);
  }
}

/* The REAL result of a sequential sum (SQLite's sumFinalize, totalFinalize
** and avgFinalize before the division): rSum, plus rErr from 3.43 on; the
** exact integer sum while no REAL came (3.43+).  When rErr is not finite
** (the sum overflowed), 3.45.3 and later leave it out, 3.43.1 to 3.45.2
** only when it is a NaN, and 3.43.0 adds it anyway: a NaN result, which
** SQLite returns as NULL (sqlite3_result_double), as the view does. */
static double seqReal(const ParAcc *a, int bKbn){
  int v = sqlite3_libversion_number();
  if( !bKbn ) return a->rSum;
  if( !a->bApprox ) return (double)(sqlite3_int64)a->iSum;
  if( v>=3045003 ) return isfinite(a->rErr) ? a->rSum + a->rErr : a->rSum;
  if( v>=3043001 ) return isnan(a->rErr) ? a->rSum : a->rSum + a->rErr;
  return a->rSum + a->rErr;
}

/* Is the integer sum the result of sum() (no REAL, no overflow)? */
static int seqIsInt(const ParAcc *a, int bKbn){
  return bKbn ? !a->bApprox : (!a->bApprox && !a->bOvfl);
}

/* Keys of a min/max argument: lexicographic (k1, k2). */
typedef struct ParKey { uint64_t *a1, *a2; } ParKey;

static int keyCmp(const ParKey *k, sqlite3_int64 i, sqlite3_int64 j){
  if( k->a1[i]!=k->a1[j] ) return k->a1[i]<k->a1[j] ? -1 : 1;
  if( k->a2 && k->a2[i]!=k->a2[j] ) return k->a2[i]<k->a2[j] ? -1 : 1;
  return 0;
}

/* Everything the aggregation of one aggregate needs. */
typedef struct ParAggRun {
  const ParPlanAgg *pAgg;
  const ParColumn *pArg;     /* argument column, or NULL for count(*) */
  ParNum num;                /* sum/total/avg */
  ParKey key;                /* min/max, unless bValue */
  int bValue;                /* min/max over INT or REAL storage: values are
                             ** compared as they are, no keys are built */
  uint8_t *aFirst;           /* DISTINCT: 1 on the first row of each value */
  int bFastSum;              /* sum/total/avg of INT storage: folded by
                             ** aggregateDirect() without following the
                             ** running sum first (see foldChunk()) */
  int bSeq;                  /* sum/total/avg added in row order by one
                             ** thread per group (seqFold()): not folded in
                             ** chunks, never combined */
  int bKbn;                  /* the sums of SQLite 3.43 and later */
} ParAggRun;

/* Compare the min/max argument at rows i and j: <0, 0, >0.  Stored
** numbers compare by value (-0.0 equals 0.0, as in SQLite); everything
** else through its sort keys. */
static int runCmp(const ParAggRun *pR, sqlite3_int64 i, sqlite3_int64 j){
  if( pR->bValue ){
    const ParColumn *c = pR->pArg;
    if( c->eStore==PAR_COL_INT ){
      sqlite3_int64 x = c->aInt[i], y = c->aInt[j];
      return (x>y) - (x<y);
    }else{
      double x = c->aReal[i], y = c->aReal[j];
      return (x>y) - (x<y);
    }
  }
  return keyCmp(&pR->key, i, j);
}

/* Fold rows [lo, hi) of an INT or REAL column into min/max accumulators
** a[aBin[r]*stride], comparing values (kBest holds the kept value's bits). */
#define PAR_FOLD_MINMAX(TYPE, ARR, BETTER) {                               \
    for(r=lo; r<hi; r++){                                                  \
      ParAcc *p = &a[aBin ? (size_t)aBin[r]*stride : 0];                   \
      TYPE v = pCol->ARR[r], kept;                                         \
      if( pCol->aNull && (pCol->aNull[r>>3] >> (r&7)) & 1 ) continue;      \
      memcpy(&kept, &p->kBest, 8);                                         \
      if( p->iBest<0 || BETTER ){                                          \
        p->iBest = (sqlite3_int64)r;                                       \
        memcpy(&p->kBest, &v, 8);                                          \
      }                                                                    \
    }                                                                      \
  }

/* Fold row iRow into a. */
static void accStep(const ParAggRun *pR, ParAcc *a, sqlite3_int64 iRow){
  int e;
  if( pR->aFirst && !pR->aFirst[iRow] ) return;
  switch( pR->pAgg->eFunc ){
    case PAR_AGG_COUNT_STAR:
      a->n++;
      return;
    case PAR_AGG_COUNT:
      if( parColumnType(pR->pArg, iRow)!=SQLITE_NULL ) a->n++;
      return;
    case PAR_AGG_SUM: case PAR_AGG_TOTAL: case PAR_AGG_AVG: {
      /* Not sequential: an INTEGER column, whose sum is exact. */
      sqlite3_int64 i = 0;
      double r = 0;
      assert( !pR->bSeq && pR->pArg->eStore==PAR_COL_INT );
      e = parNumGet(&pR->num, iRow, &i, &r);
      if( e!=SQLITE_INTEGER ) return;
      a->n++;
      a->iSum += i;
      if( a->iSum < a->iMin ) a->iMin = a->iSum;
      if( a->iSum > a->iMax ) a->iMax = a->iSum;
      return;
    }
    case PAR_AGG_MIN: case PAR_AGG_MAX: {
      /* Only a strictly better value replaces: ties keep the first. */
      int c;
      if( parColumnType(pR->pArg, iRow)==SQLITE_NULL ) return;
      if( a->iBest<0 ){ a->iBest = iRow; return; }
      c = runCmp(pR, a->iBest, iRow);
      if( pR->pAgg->eFunc==PAR_AGG_MIN ? c>0 : c<0 ) a->iBest = iRow;
      return;
    }
    default:
      return;  /* group_concat: built separately */
  }
}

/* The magnitude of the integer farthest from 0 among mn and mx. */
static uint64_t intMagnitude(sqlite3_int64 mn, sqlite3_int64 mx){
  uint64_t a = mn<0 ? (uint64_t)0 - (uint64_t)mn : (uint64_t)mn;
  uint64_t b = mx<0 ? (uint64_t)0 - (uint64_t)mx : (uint64_t)mx;
  return a>b ? a : b;
}

/* Can no running sum of n integers of magnitude at most m overflow? */
static int sumCannotOverflow(uint64_t m, size_t n){
  return (unsigned __int128)m * n < ((unsigned __int128)1 << 63);
}

/* Fold rows [lo, hi) into a[aBin[r]*stride] (the accumulators of
** aggregate pR per key value; all into a[0] when aBin is NULL), in row
** order.  The common storage classes
** get loops of their own; everything else goes through accStep().
**
** pMag (integer sums only; NULL otherwise): sum without following the
** running sum's range (iMin, iMax stay 0) and raise *pMag to the largest
** magnitude summed.  The caller checks with sumCannotOverflow() that no
** running sum can overflow, else folds again without pMag. */
static void foldChunk(const ParAggRun *pR, ParAcc *a, int stride, const uint32_t *aBin,
                      size_t lo, size_t hi, uint64_t *pMag){
  const ParColumn *pCol = pR->pArg;
  int e = pR->pAgg->eFunc;
  size_t r;
  if( pR->bSeq ) return;        /* seqFold() adds these, group by group */
  if( pR->aFirst==0 && (e==PAR_AGG_COUNT_STAR
       || (e==PAR_AGG_COUNT && pCol->nNull==0 && pCol->eStore!=PAR_COL_MIXED
           && pCol->eStore!=PAR_COL_NULL)) ){
    for(r=lo; r<hi; r++) a[aBin ? (size_t)aBin[r]*stride : 0].n++;
    return;
  }
  if( pR->aFirst==0 && (e==PAR_AGG_SUM || e==PAR_AGG_TOTAL || e==PAR_AGG_AVG) ){
    if( pCol->eStore==PAR_COL_INT && pMag ){
      const sqlite3_int64 *v = pCol->aInt;
      sqlite3_int64 mn = 0, mx = 0;
      if( aBin==0 && pCol->aNull==0 ){
        /* Wrapping 64-bit sum: exact whenever the caller's check holds. */
        uint64_t sum = 0;
        for(r=lo; r<hi; r++){
          sum += (uint64_t)v[r];
          mn = v[r]<mn ? v[r] : mn;
          mx = v[r]>mx ? v[r] : mx;
        }
        a[0].n += (sqlite3_int64)(hi-lo);
        a[0].iSum += (sqlite3_int64)sum;
      }else{
        for(r=lo; r<hi; r++){
          ParAcc *p = &a[aBin ? (size_t)aBin[r]*stride : 0];
          if( pCol->aNull && (pCol->aNull[r>>3] >> (r&7)) & 1 ) continue;
          p->n++;
          p->iSum += v[r];
          mn = v[r]<mn ? v[r] : mn;
          mx = v[r]>mx ? v[r] : mx;
        }
      }
      if( intMagnitude(mn, mx)>*pMag ) *pMag = intMagnitude(mn, mx);
      return;
    }
    if( pCol->eStore==PAR_COL_INT ){
      /* All integers: the exact sum is all that is needed (outGroup). */
      for(r=lo; r<hi; r++){
        ParAcc *p = &a[aBin ? (size_t)aBin[r]*stride : 0];
        if( pCol->aNull && (pCol->aNull[r>>3] >> (r&7)) & 1 ) continue;
        p->n++;
        p->iSum += pCol->aInt[r];
        if( p->iSum < p->iMin ) p->iMin = p->iSum;
        if( p->iSum > p->iMax ) p->iMax = p->iSum;
      }
      return;
    }
  }
  if( pR->aFirst==0 && pR->bValue ){
    /* Only a strictly better value replaces: ties keep the first. */
    if( pCol->eStore==PAR_COL_INT ){
      if( e==PAR_AGG_MIN ) PAR_FOLD_MINMAX(sqlite3_int64, aInt, v<kept)
      else PAR_FOLD_MINMAX(sqlite3_int64, aInt, v>kept)
    }else{
      if( e==PAR_AGG_MIN ) PAR_FOLD_MINMAX(double, aReal, v<kept)
      else PAR_FOLD_MINMAX(double, aReal, v>kept)
    }
    return;
  }
  if( pR->aFirst==0 && (e==PAR_AGG_MIN || e==PAR_AGG_MAX) && pR->key.a2==0 ){
    /* One-word keys: compare with the kept key, not the kept row's. */
    const uint64_t *k = pR->key.a1;
    for(r=lo; r<hi; r++){
      ParAcc *p = &a[aBin ? (size_t)aBin[r]*stride : 0];
      if( parColumnType(pCol, (sqlite3_int64)r)==SQLITE_NULL ) continue;
      if( p->iBest<0 || (e==PAR_AGG_MIN ? k[r]<p->kBest : k[r]>p->kBest) ){
        p->iBest = (sqlite3_int64)r;
        p->kBest = k[r];
      }
    }
    return;
  }
  for(r=lo; r<hi; r++) accStep(pR, &a[aBin ? (size_t)aBin[r]*stride : 0], (sqlite3_int64)r);
}

/* Add the values of sequential sum pR at positions [lo, hi) to a, in
** order, as SQLite's sumStep() does: rows aIdx[p] of the argument, or
** rows p when aIdx is NULL.  The one pass over a group's rows that gives
** SQLite's bits; REAL columns get loops of their own. */
static void seqFold(const ParAggRun *pR, ParAcc *a, const uint32_t *aIdx,
                    size_t lo, size_t hi){
  const ParColumn *pCol = pR->pArg;
  size_t p;
  assert( pR->bSeq );
  if( pCol->eStore==PAR_COL_REAL && pR->aFirst==0 ){
    const double *v = pCol->aReal;
    const uint8_t *aNull = pCol->nNull ? pCol->aNull : 0;
    sqlite3_int64 c = 0;
    if( !pR->bKbn ){
      double sum = a->rSum;
      for(p=lo; p<hi; p++){
        size_t r = aIdx ? aIdx[p] : p;
        if( aNull && (aNull[r>>3] >> (r&7)) & 1 ) continue;
        sum += v[r];
        c++;
      }
      a->rSum = sum;
      a->n += c;
      if( c ) a->bApprox = 1;
      return;
    }
    /* 3.43+: the first REAL switches to the compensated sum (from an
    ** integer sum of 0); after that each value is one kbnStep(). */
    for(p=lo; p<hi; p++){
      size_t r = aIdx ? aIdx[p] : p;
      if( aNull && (aNull[r>>3] >> (r&7)) & 1 ) continue;
      if( a->bApprox ){
        a->n++;
        a->bOvfl = 0;
        kbnStep(a, v[r]);
      }else{
        seqStep(a, 1, 0, 0, v[r]);
      }
    }
    return;
  }
  for(p=lo; p<hi; p++){
    size_t r = aIdx ? aIdx[p] : p;
    sqlite3_int64 i = 0;
    double x = 0;
    int e;
    if( pR->aFirst && !pR->aFirst[r] ) continue;
    e = parNumGet(&pR->num, (sqlite3_int64)r, &i, &x);
    if( e==SQLITE_NULL ) continue;
    seqStep(a, pR->bKbn, e==SQLITE_INTEGER, i, x);
  }
}

/* a = a followed by b. */
static void accCombine(const ParAggRun *pR, ParAcc *a, const ParAcc *b){
  if( pR->bSeq ) return;        /* filled by seqFold(), not in chunks */
  switch( pR->pAgg->eFunc ){
    case PAR_AGG_SUM: case PAR_AGG_TOTAL: case PAR_AGG_AVG:
      if( a->iSum + b->iMin < a->iMin ) a->iMin = a->iSum + b->iMin;
      if( a->iSum + b->iMax > a->iMax ) a->iMax = a->iSum + b->iMax;
      a->iSum += b->iSum;
      break;
    case PAR_AGG_MIN: case PAR_AGG_MAX:
      if( b->iBest>=0 ){
        int c = a->iBest<0 ? 1 : runCmp(pR, a->iBest, b->iBest);
        if( a->iBest<0 || (pR->pAgg->eFunc==PAR_AGG_MIN ? c>0 : c<0) ) a->iBest = b->iBest;
      }
      break;
    default:
      break;
  }
  a->n += b->n;
}

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

static void outCopy(ParColumn *pDst, sqlite3_int64 iDst, const ParColumn *pSrc,
                    sqlite3_int64 iSrc){
  uint64_t v = 0;
  pDst->aType[iDst] = (uint8_t)(iSrc<0 ? SQLITE_NULL : colGet(pSrc, iSrc, &v));
  pDst->aVal[iDst] = v;
}

static void outFloat(ParColumn *pDst, sqlite3_int64 i, double r){
  pDst->aType[i] = SQLITE_FLOAT;
  memcpy(&pDst->aVal[i], &r, 8);
}

/* Write the aggregates a[0..nAgg-1] of group gi, every one (NULL for
** group_concat, which finishResult() writes).  Returns 1 when sum()
** overflowed (the caller then lets SQLite run the SELECT), else 0. */
static int outGroup(const ParAggRun *aRun, int nAgg, const ParAcc *a, ParBatch *pOut,
                    sqlite3_int64 gi){
  int j, bOverflow = 0;
  for(j=0; j<nAgg; j++){
    ParColumn *pDst = &pOut->aCol[j];
    pDst->aType[gi] = SQLITE_NULL;
    pDst->aVal[gi] = 0;
    switch( aRun[j].pAgg->eFunc ){
      case PAR_AGG_COUNT_STAR: case PAR_AGG_COUNT:
        pDst->aType[gi] = SQLITE_INTEGER;
        pDst->aVal[gi] = (uint64_t)a[j].n;
        break;
      case PAR_AGG_SUM:
        if( a[j].n==0 ) break;
        if( aRun[j].bSeq ){
          int bKbn = aRun[j].bKbn;
          if( a[j].bOvfl && (!bKbn || a[j].bApprox) ){
            bOverflow = 1;        /* SQLite's "integer overflow" */
          }else if( seqIsInt(&a[j], bKbn) ){
            pDst->aType[gi] = SQLITE_INTEGER;
            pDst->aVal[gi] = (uint64_t)(sqlite3_int64)a[j].iSum;
          }else{
            outFloat(pDst, gi, seqReal(&a[j], bKbn));
          }
        }else if( a[j].iMin < INT64_MIN || a[j].iMax > INT64_MAX ){
          bOverflow = 1;
        }else{
          pDst->aType[gi] = SQLITE_INTEGER;
          pDst->aVal[gi] = (uint64_t)(sqlite3_int64)a[j].iSum;
        }
        break;
      case PAR_AGG_TOTAL:
        /* Not sequential: integers whose running double sum is exact. */
        outFloat(pDst, gi, aRun[j].bSeq ? seqReal(&a[j], aRun[j].bKbn)
                                        : (double)a[j].iSum);
        break;
      case PAR_AGG_AVG:
        if( a[j].n==0 ) break;
        outFloat(pDst, gi, (aRun[j].bSeq ? seqReal(&a[j], aRun[j].bKbn)
                                         : (double)a[j].iSum)/(double)a[j].n);
        break;
      case PAR_AGG_MIN: case PAR_AGG_MAX:
        outCopy(pDst, gi, aRun[j].pArg, a[j].iBest);
        break;
      default:
        break;
    }
  }
  return bOverflow;
}

/* group_concat over positions [lo, hi) into a new string (sqlite3_malloc);
** *pn its length, -1 (and NULL) when no value was concatenated; NULL
** with *pRc set when the string could not be made (out of memory, too
** big). */
static char *groupConcat(const ParColumn *pText, const ParColumn *pSep,
                         const uint8_t *aFirst, size_t lo, size_t hi, sqlite3_int64 *pn,
                         int *pRc){
  sqlite3_str *pStr = sqlite3_str_new(0);
  size_t p;
  int bFirst = 1;
  for(p=lo; p<hi; p++){
    uint64_t v;
    if( aFirst && !aFirst[p] ) continue;
    if( colGet(pText, p, &v)==SQLITE_NULL ) continue;
    if( !bFirst ){
      if( pSep==0 ){
        sqlite3_str_appendchar(pStr, 1, ',');
      }else{
        uint64_t s;
        if( colGet(pSep, p, &s)!=SQLITE_NULL && pSep->pDict->aLen[s] ){
          const ParDict *pD = pSep->pDict;
          sqlite3_str_append(pStr, parDictText(pD, s), (int)pD->aLen[s]);
        }
      }
    }
    bFirst = 0;
    if( pText->pDict->aLen[v] ){
      sqlite3_str_append(pStr, parDictText(pText->pDict, v),
                         (int)pText->pDict->aLen[v]);
    }
  }
  *pn = bFirst ? -1 : sqlite3_str_length(pStr);
  *pRc = sqlite3_str_errcode(pStr);
  if( bFirst || *pRc ){
    sqlite3_free(sqlite3_str_finish(pStr));
    return 0;
  }
  return sqlite3_str_finish(pStr);
}

static void intRange(const ParColumn *pCol, size_t n, int nThread,
                     sqlite3_int64 *pLo, sqlite3_int64 *pHi);

/* Must sum/total/avg pR over nRow rows add in row order, one thread per
** group (bSeq)?  Yes unless its argument is an INTEGER column whose sums
** are exact whatever the order: sum() (exact, or an overflow that sends
** the query to SQLite), and total() and avg() when every running sum is
** exact as a double too: below 2^53 in magnitude before 3.43 (SQLite adds
** each integer to a double), below 2^63 from 3.43 on (its integer sum is
** exact until it overflows). */
static int seqNeeded(const ParAggRun *pR, sqlite3_int64 nRow, int nThread){
  sqlite3_int64 mn, mx;
  uint64_t m;
  if( pR->pArg->eStore!=PAR_COL_INT ) return 1;
  if( pR->pAgg->eFunc==PAR_AGG_SUM ) return 0;
  intRange(pR->pArg, (size_t)nRow, nThread, &mn, &mx);
  if( mn>mx ) return 0;                     /* NULLs only */
  m = intMagnitude(mn, mx);
  if( pR->bKbn ) return !sumCannotOverflow(m, (size_t)nRow);
  return (unsigned __int128)m*(uint64_t)nRow > ((unsigned __int128)1 << 53);
}

/* Prepare aRun[j] for aggregate j over the columns aCol (rows or group
** positions, whichever the caller aggregates over). */
static int prepareRuns(sqlite3 *db, const ParPlan *pPlan, ParColumn *aCol,
                       sqlite3_int64 nRow, const size_t *aOff, size_t nGroup,
                       int nThread, ParAggRun *aRun){
  int k, rc = SQLITE_OK;
  for(k=0; k<pPlan->nAgg && rc==SQLITE_OK; k++){
    const ParPlanAgg *pA = &pPlan->aAgg[k];
    ParAggRun *pR = &aRun[k];
    int eColl = pA->eColl<0 ? PAR_COLL_BINARY : pA->eColl;
    pR->pAgg = pA;
    pR->pArg = pA->iArg>=0 ? &aCol[pA->iArg] : 0;
    if( pA->eFunc==PAR_AGG_SUM || pA->eFunc==PAR_AGG_TOTAL || pA->eFunc==PAR_AGG_AVG ){
      rc = parNumInit(db, pR->pArg, &pR->num);
      pR->bKbn = seqKbn();
      pR->bSeq = seqNeeded(pR, nRow, nThread);
    }
    if( (pA->eFunc==PAR_AGG_MIN || pA->eFunc==PAR_AGG_MAX)
     && (pR->pArg->eStore==PAR_COL_INT || pR->pArg->eStore==PAR_COL_REAL) ){
      pR->bValue = 1;
    }else if( rc==SQLITE_OK && (pA->eFunc==PAR_AGG_MIN || pA->eFunc==PAR_AGG_MAX) ){
      rc = parColumnKeys(&aCol[pA->iArg], nRow, eColl, 0, nThread,
                         &pR->key.a1, &pR->key.a2);
    }
    if( rc==SQLITE_OK && pA->bDistinct ){
      rc = markDistinct(aOff, nGroup, pR->pArg, eColl, nRow, nThread, &pR->aFirst);
    }
  }
  return rc;
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
  size_t g;
  for(k=0; k<nAgg; k++){
    int e = pPlan->aAgg[k].eFunc;
    if( e==PAR_AGG_MIN || e==PAR_AGG_MAX ){
      pOut->aCol[k].pDict = aRun[k].pArg->pDict;
      pOut->aCol[k].bBorrowDict = 1;
    }
  }
  for(k=0; k<pPlan->nBare; k++){
    pOut->aCol[nAgg+k].pDict = aBareSrc[pPlan->aBareCol[k]].pDict;
    pOut->aCol[nAgg+k].bBorrowDict = 1;
  }
  for(k=0; k<nAgg && rc==SQLITE_OK; k++){
    const ParPlanAgg *pA = &pPlan->aAgg[k];
    ParColumn *pDst = &pOut->aCol[k];
    if( pA->eFunc!=PAR_AGG_GROUP_CONCAT ) continue;
    pDst->pDict = sqlite3_malloc(sizeof(ParDict));
    if( pDst->pDict==0 ){ rc = SQLITE_NOMEM; break; }
    memset(pDst->pDict, 0, sizeof(ParDict));
    for(g=0; g<nGroup && rc==SQLITE_OK; g++){
      sqlite3_int64 nStr = 0;
      char *z = groupConcat(&aCol[pA->iText], pA->iSep>=0 ? &aCol[pA->iSep] : 0,
                            aRun[k].aFirst, aOff[g], aOff[g+1], &nStr, &rc);
      if( rc ) break;
      if( nStr>=0 ){
        uint32_t iCode = 0;
        if( z==0 && nStr>0 ){ rc = SQLITE_NOMEM; break; }
        rc = parDictAdd(pOut, pDst->pDict, (const unsigned char*)(z ? z : ""),
                        nStr, SQLITE_TEXT, &iCode);
        pDst->aType[g] = SQLITE_TEXT;
        pDst->aVal[g] = iCode;
      }
      sqlite3_free(z);
    }
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
  for(i=0; i<(size_t)nBin*nAgg; i++) accInit(&aSeq[i]);
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
    seqFold(&aOrd[jj], &aSeq[t], aCol[jj].aReal ? 0 : aPerm, aOff[bb], aOff[bb+1]);
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

/* Few key values: no sorting.  Fixed row chunks (boundaries depend on n
** and nBin only) each fold their rows, in order, into private accumulators
** per key value; then each key value combines its chunks in order.  aBin
** NULL: no GROUP BY, every row in the one bin. */
static int aggregateDirect(sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
                           const uint32_t *aBin, uint32_t nBin, int nThread,
                           ParBatch **ppOut, int *pbOverflow){
  size_t n = (size_t)pIn->nRow, nChunk, nGroup = 0, b, accStride, cntStride;
  int nAgg = pPlan->nAgg, iDecide = pPlan->iDecide, rc, k;
  ParAggRun *aRun = sqlite3_malloc64(sizeof(ParAggRun)*(nAgg+1));
  ParAcc *aAcc = 0;
  sqlite3_int64 *aCnt = 0, *aFirst = 0, *aLast = 0, *aGid = 0;
  uint64_t *aMag = 0;           /* [c*nAgg+j]: integer sums, see foldChunk() */
  ParAcc *aSeq = 0;             /* [b*nAgg+j]: sequential sum j of key value b */
  int bOverflow = 0, nSeq = 0;

  nChunk = (n + PAR_CHUNK - 1)/PAR_CHUNK;
  if( nChunk > PAR_DIRECT_ACC/nBin ) nChunk = PAR_DIRECT_ACC/nBin;
  if( nChunk<1 ) nChunk = 1;
  /* Each chunk's private state is followed by at least 128 unused bytes,
  ** so two threads never write to one cache line (with few key values,
  ** and none at all without GROUP BY, they would on every row). */
  accStride = nBin*(size_t)nAgg + (128 + sizeof(ParAcc) - 1)/sizeof(ParAcc);
  cntStride = nBin + 16;
  if( aRun==0 ) return SQLITE_NOMEM;
  memset(aRun, 0, sizeof(ParAggRun)*(nAgg+1));
  rc = prepareRuns(db, pPlan, pIn->aCol, pIn->nRow, 0, 0, nThread, aRun);
  for(k=0; k<nAgg && rc==SQLITE_OK; k++){
    int e = aRun[k].pAgg->eFunc;
    aRun[k].bFastSum = (e==PAR_AGG_SUM || e==PAR_AGG_TOTAL || e==PAR_AGG_AVG)
                    && aRun[k].aFirst==0 && aRun[k].pArg->eStore==PAR_COL_INT
                    && !aRun[k].bSeq;
    if( aRun[k].bSeq ) nSeq++;
  }
  if( rc==SQLITE_OK ){
    /* malloc: ParAcc needs the 16-byte alignment of __int128. */
    aAcc = malloc(sizeof(ParAcc)*nChunk*accStride);
    aCnt = sqlite3_malloc64(sizeof(sqlite3_int64)*nChunk*cntStride);
    aFirst = sqlite3_malloc64(sizeof(sqlite3_int64)*nChunk*cntStride);
    aLast = sqlite3_malloc64(sizeof(sqlite3_int64)*nChunk*cntStride);
    aGid = sqlite3_malloc64(sizeof(sqlite3_int64)*(nBin+1));
    aMag = sqlite3_malloc64(sizeof(uint64_t)*(nChunk*nAgg+1));
    if( aAcc==0 || aCnt==0 || aFirst==0 || aLast==0 || aGid==0 || aMag==0 ) rc = SQLITE_NOMEM;
    else memset(aMag, 0, sizeof(uint64_t)*(nChunk*nAgg+1));
  }
  if( rc==SQLITE_OK ){
    sqlite3_int64 c;
    px_stop *pStop = px_stop_installed();
    #pragma omp parallel for num_threads(nThread) schedule(dynamic, 1)
    for(c=0; c<(sqlite3_int64)nChunk; c++){
      size_t lo = n*c/nChunk, hi = n*(c+1)/nChunk, r, i;
      ParAcc *a = &aAcc[c*accStride];
      sqlite3_int64 *cnt = &aCnt[c*cntStride], *first = &aFirst[c*cntStride];
      sqlite3_int64 *last = &aLast[c*cntStride];
      int j;
      if( px_stopping(pStop) ) continue;     /* nothing is read after */
      for(i=0; i<nBin*(size_t)nAgg; i++) accInit(&a[i]);
      memset(cnt, 0, nBin*sizeof(sqlite3_int64));
      if( aBin==0 ){
        cnt[0] = (sqlite3_int64)(hi-lo);
        first[0] = (sqlite3_int64)lo;
        last[0] = (sqlite3_int64)hi-1;
      }else{
        for(r=lo; r<hi; r++){
          uint32_t bin = aBin[r];
          if( cnt[bin]++==0 ) first[bin] = (sqlite3_int64)r;
          last[bin] = (sqlite3_int64)r;
        }
      }
      for(j=0; j<nAgg; j++){
        foldChunk(&aRun[j], a + j, nAgg, aBin, lo, hi,
                  aRun[j].bFastSum ? &aMag[c*nAgg+j] : 0);
      }
    }
    if( px_stopping(pStop) ) rc = SQLITE_INTERRUPT;
    /* Integer sums folded fast: again, following the running sums, if
    ** one might overflow. */
    for(k=0; k<nAgg && rc==SQLITE_OK; k++){
      uint64_t m = 0;
      if( !aRun[k].bFastSum ) continue;
      for(b=0; b<nChunk; b++) if( aMag[b*nAgg+k]>m ) m = aMag[b*nAgg+k];
      if( sumCannotOverflow(m, n) ) continue;
      #pragma omp parallel for num_threads(nThread) schedule(dynamic, 1)
      for(c=0; c<(sqlite3_int64)nChunk; c++){
        size_t lo = n*c/nChunk, hi = n*(c+1)/nChunk, i;
        for(i=0; i<nBin; i++) accInit(&aAcc[c*accStride + i*nAgg + k]);
        foldChunk(&aRun[k], &aAcc[c*accStride + k], nAgg, aBin, lo, hi, 0);
      }
    }
    if( rc==SQLITE_OK && nSeq>0 ) rc = directSeq(aRun, nAgg, aBin, nBin, n, nThread, &aSeq);
    /* Groups are the key values that occur, in key order. */
    for(b=0; b<nBin && rc==SQLITE_OK; b++){
      size_t c2;
      sqlite3_int64 t = 0;
      for(c2=0; c2<nChunk; c2++) t += aCnt[c2*cntStride+b];
      /* Without GROUP BY there is one group even for no rows. */
      aGid[b] = (t || pPlan->nKey==0) ? (sqlite3_int64)nGroup++ : -1;
    }
    if( rc==SQLITE_OK ) rc = newResult(pPlan, nGroup, 1, 0, ppOut);
  }
  if( rc==SQLITE_OK ){
    sqlite3_int64 bi;
    #pragma omp parallel for num_threads(nThread) schedule(dynamic, 16) reduction(|:bOverflow)
    for(bi=0; bi<(sqlite3_int64)nBin; bi++){
      ParAcc *a0 = 0;
      sqlite3_int64 iFirst = -1, iLast = -1;
      size_t c;
      int j;
      if( aGid[bi]<0 ) continue;
      for(c=0; c<nChunk; c++){
        ParAcc *a = &aAcc[c*accStride + bi*nAgg];
        if( aCnt[c*cntStride+bi]==0 ) continue;
        if( a0==0 ){
          a0 = a;
          iFirst = aFirst[c*cntStride+bi];
        }else{
          for(j=0; j<nAgg; j++) accCombine(&aRun[j], &a0[j], &a[j]);
        }
        iLast = aLast[c*cntStride+bi];
      }
      if( a0==0 ) a0 = &aAcc[bi*nAgg];   /* no rows: chunk 0's empty state */
      for(j=0; j<nAgg && aSeq; j++){
        if( aRun[j].bSeq ) a0[j] = aSeq[bi*nAgg + j];
      }
      bOverflow |= outGroup(aRun, nAgg, a0, *ppOut, aGid[bi]);
      for(j=0; j<pPlan->nBare; j++){
        outCopy(&(*ppOut)->aCol[nAgg+j], aGid[bi], &pIn->aCol[pPlan->aBareCol[j]],
                bareRow(a0, iDecide, iFirst, iLast));
      }
    }
    rc = finishResult(pPlan, aRun, pIn->aCol, pIn->aCol, 0, 0, *ppOut);
  }
  *pbOverflow = bOverflow;
  for(k=0; k<nAgg; k++){
    parNumClear(&aRun[k].num);
    sqlite3_free(aRun[k].key.a1);
    sqlite3_free(aRun[k].key.a2);
    sqlite3_free(aRun[k].aFirst);
  }
  sqlite3_free(aRun);
  free(aAcc);
  sqlite3_free(aCnt);
  sqlite3_free(aFirst);
  sqlite3_free(aLast);
  sqlite3_free(aGid);
  sqlite3_free(aMag);
  free(aSeq);
  return rc;
}

/* Has the caller asked to stop (par.h)?  For loops over many small
** items: every 64th index asks, the others only read the flag. */
static int stopAt(px_stop *p, size_t i){
  if( p==0 ) return 0;
  return (i & 63)==0 ? px_stopping(p) : __atomic_load_n(&p->bStop, __ATOMIC_RELAXED);
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
  size_t nChunk = 0;             /* chunks of the large groups */
  int nAgg = pPlan->nAgg, iDecide = pPlan->iDecide, nCol = pIn->nCol, rc = SQLITE_OK, k;
  ParColumn *aG = sqlite3_malloc64(sizeof(ParColumn)*(nCol+1));
  uint8_t *aUsed = sqlite3_malloc64(nCol+1);
  ParAggRun *aRun = sqlite3_malloc64(sizeof(ParAggRun)*(nAgg+1));
  size_t *aChunk = 0;            /* [c]: first position of chunk c */
  size_t *aChunkGroup = 0;       /* [c]: the group of chunk c */
  ParAcc *aAcc = 0;              /* [c*nAgg + j]: aggregate j over chunk c */
  ParAcc *aOwn = 0;              /* [t*(nAgg+1) + j]: thread t's, for one group */
  sqlite3_int64 *aBare = 0;      /* [g]: the input row of group g's bare columns */
  int bOverflow = 0;
  px_stop *pStop = px_stop_installed();   /* par.h: asked per chunk and group */

  /* Zeroed before anything can fail: the error path frees what they hold. */
  if( aG ) memset(aG, 0, sizeof(ParColumn)*(nCol+1));
  if( aRun ) memset(aRun, 0, sizeof(ParAggRun)*(nAgg+1));
  if( aG==0 || aUsed==0 || aRun==0 ){ rc = SQLITE_NOMEM; goto done; }
  memset(aUsed, 0, nCol+1);
  for(k=0; k<nAgg; k++){
    const ParPlanAgg *pA = &pPlan->aAgg[k];
    if( pA->iArg>=0 ) aUsed[pA->iArg] = 1;
    if( pA->iText>=0 ) aUsed[pA->iText] = 1;
    if( pA->iSep>=0 ) aUsed[pA->iSep] = 1;
  }
  for(k=0; k<nCol && rc==SQLITE_OK; k++){
    if( aUsed[k] ) rc = parColumnGather(&pIn->aCol[k], aPerm, pIn->nRow, nThread, &aG[k]);
    if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  }
  if( rc ) goto done;
  rc = prepareRuns(db, pPlan, aG, pIn->nRow, aOff, nGroup, nThread, aRun);
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  if( rc ) goto done;
  aOwn = malloc((size_t)nThread*(nAgg+1)*sizeof(ParAcc));   /* 16-byte aligned */
  if( pPlan->nBare>0 ) aBare = sqlite3_malloc64((nGroup+1)*sizeof(sqlite3_int64));
  if( aOwn==0 || (pPlan->nBare>0 && aBare==0) ){ rc = SQLITE_NOMEM; goto done; }

  /* The large groups' chunks, in group order, folded in parallel. */
  {
    sqlite3_int64 gi;
    #pragma omp parallel for num_threads(nThread) schedule(static) reduction(+:nChunk)
    for(gi=0; gi<(sqlite3_int64)nGroup; gi++){
      size_t len = aOff[gi+1]-aOff[gi];
      if( len>PAR_CHUNK ) nChunk += (len + PAR_CHUNK - 1)/PAR_CHUNK;
    }
  }
  if( nChunk>0 ){
    size_t c = 0, g, p;
    sqlite3_int64 ci;
    aChunk = sqlite3_malloc64(nChunk*sizeof(size_t));
    aChunkGroup = sqlite3_malloc64(nChunk*sizeof(size_t));
    aAcc = malloc(nChunk*(nAgg+1)*sizeof(ParAcc));          /* 16-byte aligned */
    if( aChunk==0 || aChunkGroup==0 || aAcc==0 ){ rc = SQLITE_NOMEM; goto done; }
    for(g=0; g<nGroup; g++){
      if( aOff[g+1]-aOff[g]<=PAR_CHUNK ) continue;
      for(p=aOff[g]; p<aOff[g+1]; p+=PAR_CHUNK){
        aChunk[c] = p;
        aChunkGroup[c++] = g;
      }
    }
    assert( c==nChunk );
    #pragma omp parallel for num_threads(nThread) schedule(dynamic, 1)
    for(ci=0; ci<(sqlite3_int64)nChunk; ci++){
      size_t lo = aChunk[ci], hi = aOff[aChunkGroup[ci]+1];
      ParAcc *a = &aAcc[(size_t)ci*nAgg];
      int j;
      if( px_stopping(pStop) ) continue;     /* nothing is read after */
      if( hi-lo>PAR_CHUNK ) hi = lo + PAR_CHUNK;
      for(j=0; j<nAgg; j++){
        accInit(&a[j]);
        foldChunk(&aRun[j], &a[j], 1, 0, lo, hi, 0);
      }
    }
    /* Sequential sums of the large groups: one task per group and sum,
    ** into the state of the group's first chunk. */
    #pragma omp parallel for num_threads(nThread) schedule(dynamic, 1)
    for(ci=0; ci<(sqlite3_int64)nChunk*nAgg; ci++){
      size_t c1 = (size_t)ci/nAgg, g1 = aChunkGroup[c1];
      int j = (int)(ci%nAgg);
      if( !aRun[j].bSeq || (c1>0 && aChunkGroup[c1-1]==g1) ) continue;
      if( px_stopping(pStop) ) continue;
      seqFold(&aRun[j], &aAcc[c1*nAgg + j], 0, aOff[g1], aOff[g1+1]);
    }
  }
  if( px_stopping(pStop) ){ rc = SQLITE_INTERRUPT; goto done; }

  /* Every group's result row: small groups folded here, large ones
  ** combined chunk by chunk in order.  Every output value is written
  ** (unless stopping: the result is freed then). */
  rc = newResult(pPlan, nGroup, 0, 0, ppOut);
  if( rc ) goto done;
  {
    sqlite3_int64 gi;
    #pragma omp parallel for num_threads(nThread) schedule(dynamic, 256) reduction(|:bOverflow)
    for(gi=0; gi<(sqlite3_int64)nGroup; gi++){
      size_t lo = aOff[gi], hi = aOff[gi+1];
      sqlite3_int64 iBare = -1;
      ParAcc *a;
      int j;
      if( stopAt(pStop, (size_t)gi) ) continue;
      if( hi-lo<=PAR_CHUNK ){
        a = &aOwn[(size_t)omp_get_thread_num()*(nAgg+1)];
        for(j=0; j<nAgg; j++){
          accInit(&a[j]);
          foldChunk(&aRun[j], &a[j], 1, 0, lo, hi, 0);
          if( aRun[j].bSeq ) seqFold(&aRun[j], &a[j], 0, lo, hi);
        }
      }else{
        /* The group's first chunk; its others follow it. */
        size_t c0 = 0, c1 = nChunk, c;
        while( c0<c1 ){
          size_t mid = (c0+c1)/2;
          if( aChunkGroup[mid] < (size_t)gi ) c0 = mid+1; else c1 = mid;
        }
        a = &aAcc[c0*nAgg];
        for(c=c0+1; c<nChunk && aChunkGroup[c]==(size_t)gi; c++){
          for(j=0; j<nAgg; j++) accCombine(&aRun[j], &a[j], &aAcc[c*nAgg+j]);
        }
      }
      if( hi>lo ) iBare = bareRow(a, iDecide, (sqlite3_int64)lo, (sqlite3_int64)hi-1);
      bOverflow |= outGroup(aRun, nAgg, a, *ppOut, gi);
      if( aBare ) aBare[gi] = iBare<0 ? -1 : (sqlite3_int64)aPerm[iBare];
    }
  }
  if( px_stopping(pStop) ){ rc = SQLITE_INTERRUPT; goto done; }
  /* Bare columns in loops of their own: the input rows are scattered,
  ** and short loops keep many reads of them in flight at once. */
  for(k=0; k<pPlan->nBare; k++){
    ParColumn *pDst = &(*ppOut)->aCol[nAgg+k];
    const ParColumn *pSrc = &pIn->aCol[pPlan->aBareCol[k]];
    sqlite3_int64 gi;
    if( (pSrc->eStore==PAR_COL_INT || pSrc->eStore==PAR_COL_REAL) && pSrc->nNull==0 ){
      /* Numbers without NULLs: nothing to decide per row. */
      int bInt = pSrc->eStore==PAR_COL_INT;
      #pragma omp parallel for num_threads(nThread) schedule(static)
      for(gi=0; gi<(sqlite3_int64)nGroup; gi++){
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
      #pragma omp parallel for num_threads(nThread) schedule(static)
      for(gi=0; gi<(sqlite3_int64)nGroup; gi++){
        if( !stopAt(pStop, (size_t)gi) ) outCopy(pDst, gi, pSrc, aBare[gi]);
      }
    }
  }
  if( px_stopping(pStop) ){ rc = SQLITE_INTERRUPT; goto done; }
  rc = finishResult(pPlan, aRun, aG, pIn->aCol, aOff, nGroup, *ppOut);

done:
  *pbOverflow = bOverflow;
  if( aRun ){
    for(k=0; k<nAgg; k++){
      parNumClear(&aRun[k].num);
      sqlite3_free(aRun[k].key.a1);
      sqlite3_free(aRun[k].key.a2);
      sqlite3_free(aRun[k].aFirst);
    }
  }
  if( aG ){
    for(k=0; k<nCol; k++) parColumnClear(&aG[k]);
  }
  sqlite3_free(aG);
  sqlite3_free(aUsed);
  sqlite3_free(aRun);
  sqlite3_free(aChunk);
  sqlite3_free(aChunkGroup);
  free(aAcc);
  free(aOwn);
  sqlite3_free(aBare);
  return rc;
}

/* ---- dense accumulation -------------------------------------------------------- */

/* The least and greatest value of INTEGER column pCol's first n rows,
** NULLs aside (*pLo > *pHi when there are none): kept since the rows were
** read, else one parallel pass (px_range_i64). */
static void intRange(const ParColumn *pCol, size_t n, int nThread,
                     sqlite3_int64 *pLo, sqlite3_int64 *pHi){
  const uint8_t *aNull = pCol->nNull ? pCol->aNull : 0;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  if( pCol->bRange ){
    lo = pCol->iMin;
    hi = pCol->iMax;
  }else if( px_range_i64((const int64_t*)pCol->aInt,     /* both 64-bit two's complement */
                          aNull, n, &lo, &hi, nThread)==0 ){
    lo = INT64_MAX;              /* no value: lo > hi */
    hi = INT64_MIN;
  }
  *pLo = lo;
  *pHi = hi;
}

/* aggregateDense() keeps, per thread and key value, the group's row count
** and for each aggregate an int64 (the sum, or the bits of the least or
** greatest value) and a count of non-NULL arguments when the argument has
** NULLs.  Sums of integers that cannot overflow and min/max over numbers
** (ties keep the earlier row) give the same result whatever rows each
** thread takes, so the threads take contiguous row ranges, and combining
** them in order gives the result of one thread. */
typedef struct ParDense {
  int eFunc;
  const ParColumn *pArg;
  int bNulls;          /* counts of non-NULL arguments of its own */
  int iVal, iCnt;      /* its arrays among a thread's (-1: none / the rows') */
} ParDense;

/* Can aggregateDense() compute pPlan's aggregates?  Bare columns must
** come from each group's first row, or be an INTEGER key itself (bIntKey:
** equal keys are the same value whichever row they come from).  Integer
** sums are checked for overflow later. */
static int denseFits(const ParPlan *pPlan, const ParBatch *pIn, int bIntKey){
  int j;
  if( pPlan->nKey>1 ) return 0;
  for(j=0; j<pPlan->nBare && pPlan->iDecide>=0; j++){
    if( pPlan->aBareCol[j]!=0 || !bIntKey ) return 0;
  }
  for(j=0; j<pPlan->nAgg; j++){
    const ParPlanAgg *pA = &pPlan->aAgg[j];
    const ParColumn *pArg = pA->iArg>=0 ? &pIn->aCol[pA->iArg] : 0;
    if( pA->bDistinct ) return 0;
    switch( pA->eFunc ){
      case PAR_AGG_COUNT_STAR: case PAR_AGG_COUNT:
        break;
      case PAR_AGG_SUM: case PAR_AGG_TOTAL: case PAR_AGG_AVG:
        if( pArg->eStore!=PAR_COL_INT ) return 0;
        break;
      case PAR_AGG_MIN: case PAR_AGG_MAX:
        if( pArg->eStore!=PAR_COL_INT && pArg->eStore!=PAR_COL_REAL ) return 0;
        break;
      default:
        return 0;
    }
  }
  return 1;
}

static int isNullRow(const ParColumn *pCol, size_t r){
  return pCol->aNull && (pCol->aNull[r>>3] >> (r&7)) & 1;
}

/* Where the dense path finds each row's bin: an array of bins, or an
** INTEGER key read in place (bin v - lo, +1 after the NULL bin 0 when the
** key has NULLs), which spares writing and reading a bin per row. */
typedef struct ParBinOf {
  const uint32_t *aBin;      /* the bins, or NULL: from the key */
  const sqlite3_int64 *aKey;
  const uint8_t *aNull;      /* the key's NULLs, or NULL when it has none */
  uint64_t lo;
  uint32_t base;             /* 1 with NULLs, else 0 */
} ParBinOf;

static uint32_t binOf(const ParBinOf *p, size_t r){
  if( p->aBin ) return p->aBin[r];
  if( p->aNull && (p->aNull[r>>3] >> (r&7)) & 1 ) return 0;
  return (uint32_t)((uint64_t)p->aKey[r] - p->lo) + p->base;
}

/* Run the statements that follow pBins for rows r in [lo, hi), with bin
** the row's bin; the loop is specialized for each source of bins (these
** loops are the dense path). */
#define DENSE_FOR_ROWS(pBins, ...)                                         \
  if( (pBins)->aBin ){                                                     \
    const uint32_t *aB_ = (pBins)->aBin;                                   \
    for(r=lo; r<hi; r++){ uint32_t bin = aB_[r]; __VA_ARGS__ }             \
  }else if( (pBins)->aNull==0 ){                                           \
    const sqlite3_int64 *aK_ = (pBins)->aKey;                              \
    const uint64_t kLo_ = (pBins)->lo;                                     \
    for(r=lo; r<hi; r++){                                                  \
      uint32_t bin = (uint32_t)((uint64_t)aK_[r] - kLo_); __VA_ARGS__      \
    }                                                                      \
  }else{                                                                   \
    for(r=lo; r<hi; r++){ uint32_t bin = binOf(pBins, r); __VA_ARGS__ }    \
  }

/* Fold rows [lo, hi) of aggregate pD into the arrays of one thread: aVal
** (sum, or least/greatest value) and aCnt (non-NULL arguments, when pD has
** its own counts). */
static void denseFold(const ParDense *pD, const ParBinOf *pBins, size_t lo, size_t hi,
                      sqlite3_int64 *aVal, uint32_t *aCnt){
  const ParColumn *pCol = pD->pArg;
  size_t r;
  switch( pD->eFunc ){
    case PAR_AGG_COUNT:
      DENSE_FOR_ROWS(pBins, {
        if( parColumnType(pCol, (sqlite3_int64)r)!=SQLITE_NULL ) aCnt[bin]++;
      })
      break;
    case PAR_AGG_SUM: case PAR_AGG_TOTAL: case PAR_AGG_AVG: {
      /* Unsigned: wrapping is defined; aggregateDense() ruled overflow
      ** out before. */
      const sqlite3_int64 *v = pCol->aInt;
      uint64_t *s = (uint64_t*)aVal;
      if( aCnt ){
        DENSE_FOR_ROWS(pBins, {
          if( isNullRow(pCol, r) ) continue;
          s[bin] += (uint64_t)v[r];
          aCnt[bin]++;
        })
      }else{
        DENSE_FOR_ROWS(pBins, { s[bin] += (uint64_t)v[r]; })
      }
      break;
    }
    case PAR_AGG_MIN: case PAR_AGG_MAX: {
      /* Only a strictly better value replaces: ties keep the first (for
      ** REAL, 0.0 and -0.0 are equal but print differently). */
      int bMin = pD->eFunc==PAR_AGG_MIN;
      DENSE_FOR_ROWS(pBins, {
        if( isNullRow(pCol, r) ) continue;
        if( aCnt ) aCnt[bin]++;
        if( pCol->eStore==PAR_COL_INT ){
          sqlite3_int64 x = pCol->aInt[r];
          if( bMin ? x<aVal[bin] : x>aVal[bin] ) aVal[bin] = x;
        }else{
          double x = pCol->aReal[r], k;
          memcpy(&k, &aVal[bin], 8);
          if( bMin ? x<k : x>k ) memcpy(&aVal[bin], &x, 8);
        }
      })
      break;
    }
    default:
      break;
  }
}

/* The starting value of min/max accumulators: the worst possible, so the
** first value always replaces it (and an equal one leaves the same bits). */
static sqlite3_int64 denseStart(const ParDense *pD){
  if( pD->eFunc!=PAR_AGG_MIN && pD->eFunc!=PAR_AGG_MAX ) return 0;
  if( pD->pArg->eStore==PAR_COL_INT ){
    return pD->eFunc==PAR_AGG_MIN ? INT64_MAX : INT64_MIN;
  }else{
    double r = pD->eFunc==PAR_AGG_MIN ? INFINITY : -INFINITY;
    sqlite3_int64 v;
    memcpy(&v, &r, 8);
    return v;
  }
}

/* The result of aggregateDense() for nGroup groups, each column stored as
** its values are: INTEGER for counts, and for sums, least and greatest
** values of INTEGER arguments and the INTEGER key; REAL for total(), avg()
** and the least and greatest of REAL arguments (each NULL where a group has
** no value); a bare column from each group's first row MIXED. */
static int denseResult(const ParPlan *pPlan, const ParDense *aD, const ParColumn *pIntKey,
                       size_t nGroup, ParBatch **ppOut){
  int nAgg = pPlan->nAgg, nOut = nAgg + pPlan->nBare, k, rc;
  int *aStore = sqlite3_malloc64(sizeof(int)*(nOut+1));
  if( aStore==0 ) return SQLITE_NOMEM;
  for(k=0; k<nOut; k++){
    if( k<nAgg ){
      int e = aD[k].eFunc;
      aStore[k] = (e==PAR_AGG_TOTAL || e==PAR_AGG_AVG) ? PAR_COL_REAL
                : (e==PAR_AGG_MIN || e==PAR_AGG_MAX) ? aD[k].pArg->eStore : PAR_COL_INT;
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

/* Few enough key values for memory (nBin per thread, no more than four
** times the rows in all) and no aggregate needing its group's rows in
** order: private accumulators per thread for every key value.  Bare
** columns come from each group's first row (its first in the first thread
** that has one); a bare column that is an INTEGER key itself (pIntKey,
** binned by intKeyBins() from iLo) comes from its bin.  Returns SQLITE_OK
** with *ppOut NULL when an integer sum might overflow (the caller then
** uses another strategy). */
static int aggregateDense(const ParPlan *pPlan, ParBatch *pIn, const uint32_t *aBin,
                          uint32_t nBin, const ParColumn *pIntKey, sqlite3_int64 iLo,
                          int nThread, ParBatch **ppOut){
  ParBinOf bins;
  size_t n = (size_t)pIn->nRow, b;
  int nAgg = pPlan->nAgg, nVal = 0, nCnt = 1, j, t, rc = SQLITE_OK;
  ParDense *aD = sqlite3_malloc64(sizeof(ParDense)*(nAgg+1));
  sqlite3_int64 **aaVal = 0;     /* [t*nVal + i]: thread t's value array i */
  uint32_t **aaCnt = 0;          /* [t*nCnt + i]: 0 is the rows per key value */
  uint32_t *aGid = 0;
  uint32_t **aaFirst = 0;        /* [t]: thread t's first row per key value */
  size_t nGroup = 0;
  int bFirst = 0;
  px_stop *pStop;                /* par.h: asked per block of rows */

  *ppOut = 0;
  if( aD==0 ) return SQLITE_NOMEM;
  assert( aBin || pIntKey );
  bins.aBin = aBin;
  bins.aKey = pIntKey ? pIntKey->aInt : 0;
  bins.aNull = pIntKey && pIntKey->nNull ? pIntKey->aNull : 0;
  bins.lo = (uint64_t)iLo;
  bins.base = bins.aNull ? 1 : 0;
  for(j=0; j<pPlan->nBare; j++){
    if( pPlan->aBareCol[j]!=0 || pIntKey==0 ) bFirst = 1;
  }
  for(j=0; j<nAgg; j++){
    const ParPlanAgg *pA = &pPlan->aAgg[j];
    ParDense *pD = &aD[j];
    pD->eFunc = pA->eFunc;
    pD->pArg = pA->iArg>=0 ? &pIn->aCol[pA->iArg] : 0;
    pD->bNulls = pD->pArg && (pD->pArg->nNull>0 || pD->pArg->eStore==PAR_COL_MIXED
                              || pD->pArg->eStore==PAR_COL_NULL);
    pD->iVal = pD->iCnt = -1;
    if( pD->eFunc!=PAR_AGG_COUNT_STAR && pD->eFunc!=PAR_AGG_COUNT ) pD->iVal = nVal++;
    if( pD->bNulls ) pD->iCnt = nCnt++;
  }
  aaVal = sqlite3_malloc64(sizeof(sqlite3_int64*)*((size_t)nThread*nVal+1));
  aaCnt = sqlite3_malloc64(sizeof(uint32_t*)*((size_t)nThread*nCnt+1));
  aGid = parBigMalloc((sqlite3_int64)sizeof(uint32_t)*((sqlite3_int64)nBin+1));
  aaFirst = sqlite3_malloc64(sizeof(uint32_t*)*((size_t)nThread+1));
  if( aaVal==0 || aaCnt==0 || aGid==0 || aaFirst==0 ){
    rc = SQLITE_NOMEM;
    goto done;
  }
  memset(aaFirst, 0, sizeof(uint32_t*)*((size_t)nThread+1));
  memset(aaVal, 0, sizeof(sqlite3_int64*)*((size_t)nThread*nVal+1));
  memset(aaCnt, 0, sizeof(uint32_t*)*((size_t)nThread*nCnt+1));
  /* Integer sums: no running sum can overflow when the count of values
  ** times the greatest magnitude stays below 2^63; total() and avg()
  ** before SQLite 3.43 add doubles, exact only below 2^53 (seqNeeded()). */
  for(j=0; j<nAgg; j++){
    sqlite3_int64 mn, mx;
    if( aD[j].eFunc!=PAR_AGG_SUM && aD[j].eFunc!=PAR_AGG_TOTAL && aD[j].eFunc!=PAR_AGG_AVG ){
      continue;
    }
    intRange(aD[j].pArg, n, nThread, &mn, &mx);
    if( mn<=mx && !sumCannotOverflow(intMagnitude(mn, mx), n) ) goto done;
    if( mn<=mx && aD[j].eFunc!=PAR_AGG_SUM && !seqKbn()
     && (unsigned __int128)intMagnitude(mn, mx)*n > ((unsigned __int128)1 << 53) ){
      goto done;
    }
  }

  /* One slot per thread: a slot runs on some thread even when OpenMP
  ** gives fewer than asked. */
  pStop = px_stop_installed();
  #pragma omp parallel for num_threads(nThread) schedule(static, 1)
  for(t=0; t<nThread; t++){
    int tt = t, bOk = 1, i, jj;
    size_t bb;
    size_t lo = n*tt/nThread, hi = n*(tt+1)/nThread, r;
    sqlite3_int64 **aV = &aaVal[(size_t)tt*nVal];
    uint32_t **aC = &aaCnt[(size_t)tt*nCnt];
    /* Each thread allocates and first touches its own arrays. */
    for(i=0; i<nCnt && bOk; i++){
      aC[i] = parBigMalloc((sqlite3_int64)sizeof(uint32_t)*((sqlite3_int64)nBin+1));
      if( aC[i] ) memset(aC[i], 0, sizeof(uint32_t)*nBin); else bOk = 0;
    }
    for(jj=0; jj<nAgg && bOk; jj++){
      if( aD[jj].iVal<0 ) continue;
      aV[aD[jj].iVal] = parBigMalloc((sqlite3_int64)sizeof(sqlite3_int64)*((sqlite3_int64)nBin+1));
      if( aV[aD[jj].iVal]==0 ){ bOk = 0; break; }
      if( aD[jj].eFunc==PAR_AGG_MIN || aD[jj].eFunc==PAR_AGG_MAX ){
        sqlite3_int64 v0 = denseStart(&aD[jj]), *p = aV[aD[jj].iVal];
        for(bb=0; bb<nBin; bb++) p[bb] = v0;
      }else{
        memset(aV[aD[jj].iVal], 0, sizeof(sqlite3_int64)*nBin);
      }
    }
    if( bOk && bFirst ){
      aaFirst[tt] = parBigMalloc((sqlite3_int64)sizeof(uint32_t)*((sqlite3_int64)nBin+1));
      if( aaFirst[tt]==0 ) bOk = 0;
    }
    if( bOk ){
      uint32_t *cnt = aC[0], *first = aaFirst[tt];
      size_t lo0 = lo, hi0 = hi;
      /* Each pass over the share block by block in order, asking between
      ** blocks whether to stop.  (A pass per aggregate over the whole
      ** share: interleaving them block by block was slower.) */
      for(lo=lo0; lo<hi0 && !px_stopping(pStop); lo=hi){
        hi = hi0 - lo > PAR_CHUNK ? lo + PAR_CHUNK : hi0;
        if( first ){
          DENSE_FOR_ROWS(&bins, {
            if( cnt[bin]++==0 ) first[bin] = (uint32_t)r;
          })
        }else{
          DENSE_FOR_ROWS(&bins, { cnt[bin]++; })
        }
      }
      for(jj=0; jj<nAgg; jj++){
        const ParDense *pD = &aD[jj];
        if( pD->eFunc==PAR_AGG_COUNT_STAR || (pD->eFunc==PAR_AGG_COUNT && !pD->bNulls) ){
          continue;
        }
        for(lo=lo0; lo<hi0 && !px_stopping(pStop); lo=hi){
          hi = hi0 - lo > PAR_CHUNK ? lo + PAR_CHUNK : hi0;
          denseFold(pD, &bins, lo, hi, pD->iVal>=0 ? aV[pD->iVal] : 0,
                    pD->iCnt>=0 ? aC[pD->iCnt] : 0);
        }
      }
    }
  }
  for(t=0; t<nThread*nVal; t++) if( aaVal[t]==0 ) rc = SQLITE_NOMEM;
  for(t=0; t<nThread*nCnt; t++) if( aaCnt[t]==0 ) rc = SQLITE_NOMEM;
  for(t=0; t<nThread && bFirst; t++) if( aaFirst[t]==0 ) rc = SQLITE_NOMEM;
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  if( rc ) goto done;

  /* Thread 0's arrays get the totals, key value by key value in thread
  ** order. */
  {
    sqlite3_int64 bi;
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(bi=0; bi<(sqlite3_int64)nBin; bi++){
      int u, jj;
      for(u=1; u<nThread; u++){
        if( bFirst && aaCnt[0][bi]==0 ) aaFirst[0][bi] = aaFirst[u][bi];
        for(jj=0; jj<nCnt; jj++) aaCnt[jj][bi] += aaCnt[(size_t)u*nCnt+jj][bi];
        for(jj=0; jj<nAgg; jj++){
          const ParDense *pD = &aD[jj];
          sqlite3_int64 *p0, x;
          if( pD->iVal<0 ) continue;
          p0 = &aaVal[pD->iVal][bi];
          x = aaVal[(size_t)u*nVal+pD->iVal][bi];
          if( pD->eFunc==PAR_AGG_MIN || pD->eFunc==PAR_AGG_MAX ){
            int bMin = pD->eFunc==PAR_AGG_MIN;
            if( pD->pArg->eStore==PAR_COL_INT ){
              if( bMin ? x<*p0 : x>*p0 ) *p0 = x;
            }else{
              double rx, r0;
              memcpy(&rx, &x, 8);
              memcpy(&r0, p0, 8);
              if( bMin ? rx<r0 : rx>r0 ) *p0 = x;
            }
          }else{
            *p0 = (sqlite3_int64)((uint64_t)*p0 + (uint64_t)x);
          }
        }
      }
    }
  }

  /* Groups: the key values that occur, in key order.  Without GROUP BY
  ** there is one group even for no rows. */
  for(b=0; b<nBin; b++){
    aGid[b] = (aaCnt[0][b] || pPlan->nKey==0) ? (uint32_t)nGroup++ : UINT32_MAX;
  }
  rc = denseResult(pPlan, aD, pIntKey, nGroup, ppOut);
  if( rc ) goto done;
  for(j=0; j<pPlan->nBare; j++){
    ParColumn *pDst = &(*ppOut)->aCol[nAgg+j];
    if( pDst->eStore!=PAR_COL_MIXED ) continue;
    pDst->pDict = pIn->aCol[pPlan->aBareCol[j]].pDict;
    pDst->bBorrowDict = 1;
  }
  /* Every key value a group, and a value in every group: thread 0's
  ** totals are an INTEGER sum's, min's or max's column as they are. */
  for(j=0; j<nAgg && nGroup==nBin; j++){
    if( aD[j].iVal>=0 && !aD[j].bNulls && aD[j].eFunc!=PAR_AGG_TOTAL
     && aD[j].eFunc!=PAR_AGG_AVG && aD[j].pArg->eStore==PAR_COL_INT ){
      ParColumn *pDst = &(*ppOut)->aCol[j];
      parBigFree(pDst->aInt);
      pDst->aInt = aaVal[aD[j].iVal];
      aaVal[aD[j].iVal] = 0;
    }
  }
  {
    sqlite3_int64 bi;
    int bKeyNull = pIntKey && pIntKey->nNull>0;
    ParBatch *pOut = *ppOut;
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(bi=0; bi<(sqlite3_int64)nBin; bi++){
      sqlite3_int64 gi = aGid[bi];
      int jj;
      if( aGid[bi]==UINT32_MAX ) continue;
      for(jj=0; jj<pPlan->nBare; jj++){
        ParColumn *pDst = &pOut->aCol[nAgg+jj];
        if( pDst->eStore==PAR_COL_INT ){
          /* The key (its NULL bin 0 gets its bit below). */
          pDst->aInt[gi] = bKeyNull && bi==0 ? 0
                         : (sqlite3_int64)((uint64_t)iLo + (uint64_t)(bi - bKeyNull));
        }else{
          outCopy(pDst, gi, &pIn->aCol[pPlan->aBareCol[jj]], aaFirst[0][bi]);
        }
      }
      for(jj=0; jj<nAgg; jj++){
        const ParDense *pD = &aD[jj];
        ParColumn *pDst = &pOut->aCol[jj];
        uint32_t nn = aaCnt[pD->iCnt>=0 ? pD->iCnt : 0][bi];
        sqlite3_int64 v = pD->iVal>=0 && aaVal[pD->iVal] ? aaVal[pD->iVal][bi] : 0;
        switch( pD->eFunc ){
          case PAR_AGG_COUNT_STAR: case PAR_AGG_COUNT:
            pDst->aInt[gi] = nn;
            break;
          case PAR_AGG_TOTAL:
            pDst->aReal[gi] = (double)v;
            break;
          case PAR_AGG_AVG:
            pDst->aReal[gi] = nn>0 ? (double)v/(double)nn : 0.0;
            break;
          default:   /* sum, min, max: NULL without a value, set below */
            if( pD->iVal>=0 && aaVal[pD->iVal]==0 ) break;    /* the column already */
            if( pDst->eStore==PAR_COL_INT ) pDst->aInt[gi] = nn>0 ? v : 0;
            else if( nn>0 ) memcpy(&pDst->aReal[gi], &v, 8);
            else pDst->aReal[gi] = 0.0;
            break;
        }
      }
    }
    /* NULLs: the NULL key's group, and sums, averages, least and greatest
    ** values of groups whose arguments were all NULL. */
    if( bKeyNull && aGid[0]!=UINT32_MAX ){
      for(j=0; j<pPlan->nBare && rc==SQLITE_OK; j++){
        if( pOut->aCol[nAgg+j].eStore==PAR_COL_INT ) rc = denseNull(&pOut->aCol[nAgg+j], 0, nGroup);
      }
    }
    for(j=0; j<nAgg && rc==SQLITE_OK; j++){
      const ParDense *pD = &aD[j];
      const uint32_t *aN = aaCnt[pD->iCnt>=0 ? pD->iCnt : 0];
      if( !pD->bNulls || pD->eFunc==PAR_AGG_COUNT || pD->eFunc==PAR_AGG_TOTAL ) continue;
      for(b=0; b<nBin && rc==SQLITE_OK; b++){
        if( aGid[b]!=UINT32_MAX && aN[b]==0 ) rc = denseNull(&pOut->aCol[j], aGid[b], nGroup);
      }
    }
  }

done:
  if( aaVal ) for(t=0; t<nThread*nVal; t++) parBigFree(aaVal[t]);
  if( aaCnt ) for(t=0; t<nThread*nCnt; t++) parBigFree(aaCnt[t]);
  sqlite3_free(aaVal);
  sqlite3_free(aaCnt);
  parBigFree(aGid);
  if( aaFirst ) for(t=0; t<nThread; t++) parBigFree(aaFirst[t]);
  sqlite3_free(aaFirst);
  sqlite3_free(aD);
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
  intRange(pCol, n, nThread, &lo, &hi);
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

int parGroupBy(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
               ParBatch **ppOut, int *pbNative, char **pzErr,
               const char **pzStrategy){
  int nThread = parThreadsFor(pCtx, pIn->nRow);
  int eForce = pCtx->eGroupStrategy;
  int rc = SQLITE_OK, k, nWord = 0, bOverflow = 0, bOrdered = 0;
  int bBins, bDirect, bDense, bCount, bSmall;
  const ParColumn *pIntKey = 0;  /* the INTEGER key the bins come from */
  sqlite3_int64 iKeyLo = 0;      /* its least value */
  size_t n = (size_t)pIn->nRow, i, nGroup = 0;
  uint64_t *aaWord[2*PAR_ROWS_MAX+2];
  uint32_t *aBin = 0, *aPerm = 0, nBin = 0;
  size_t *aOff = 0;

  *ppOut = 0;
  *pbNative = 0;
  *pzErr = 0;

  /* A collation the planner could not determine matters only for text. */
  for(k=0; k<pPlan->nKey + pPlan->nAgg; k++){
    const ParColumn *pCol;
    int eColl;
    if( k<pPlan->nKey ){
      eColl = pPlan->aKeyColl[k];
      pCol = &pIn->aCol[k];
    }else{
      const ParPlanAgg *pA = &pPlan->aAgg[k-pPlan->nKey];
      if( pA->bDistinct || pA->eFunc==PAR_AGG_GROUP_CONCAT ) bOrdered = 1;
      if( pA->eFunc!=PAR_AGG_MIN && pA->eFunc!=PAR_AGG_MAX && !pA->bDistinct ) continue;
      eColl = pA->eColl;
      pCol = &pIn->aCol[pA->iArg];
    }
    if( eColl==PAR_COLL_UNKNOWN && pCol->pDict ){
      uint32_t e;
      for(e=0; e<pCol->pDict->nEntry; e++){
        if( pCol->pDict->aKind[e]==SQLITE_TEXT ){
          *pbNative = 1;
          return SQLITE_OK;
        }
      }
    }
  }
  if( pPlan->nKey>PAR_ROWS_MAX ) return SQLITE_ERROR;

  /* A HAVING term SQLite moved into WHERE sees each row's key: the final
  ** SQL, which sees the group's row's, answers the same only when every
  ** row of a group holds the same value of each key it may name (keys
  ** under NOCASE or RTRIM keep their terms in HAVING). */
  for(k=0; k<pPlan->nKey && pPlan->bHavingKeys; k++){
    if( pPlan->aKeyColl[k]!=PAR_COLL_NOCASE && pPlan->aKeyColl[k]!=PAR_COLL_RTRIM
     && keyEqualButDifferent(&pIn->aCol[k], n) ){
      *pbNative = 1;
      return SQLITE_OK;
    }
  }

  /* Bins, when they can be had: one key whose values (or words) span
  ** fewer than PAR_COUNT_MAX, each bin one group, in key order; one bin
  ** without GROUP BY. */
  if( pPlan->nKey==0 ){
    nBin = 1;                    /* one bin, and no array of bins */
  }else if( pPlan->nKey>1 && n>0 && eForce!=PAR_GROUP_RADIX ){
    rc = multiKeyBins(pPlan, pIn, n, nThread, &aBin, &nBin);
  }else if( pPlan->nKey==1 && n>0 && eForce!=PAR_GROUP_RADIX ){
    if( pIn->aCol[0].eStore==PAR_COL_INT ){
      /* An INTEGER key: straight from the values (NULL first, then the
      ** values in order: the order of the sort keys). */
      intKeyRange(&pIn->aCol[0], n, nThread, &nBin, &iKeyLo);
      if( nBin ) pIntKey = &pIn->aCol[0];
    }else if( pIn->aCol[0].eStore==PAR_COL_TEXT && pIn->aCol[0].pDict
           && pPlan->aKeyColl[0]>=0 && pPlan->aKeyColl[0]<PAR_N_COLL ){
      rc = textKeyBins(&pIn->aCol[0], pPlan->aKeyColl[0], n, nThread, &aBin, &nBin);
    }else{
      rc = keyWords(pPlan, pIn, nThread, aaWord, &nWord);
      /* Stopped: the words are partly written; read none of them. */
      if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
      if( rc==SQLITE_OK && nWord==1 ){
        const uint64_t *w = aaWord[0];
        uint64_t lo = UINT64_MAX, hi = 0;
        #pragma omp parallel for num_threads(nThread) reduction(min:lo) reduction(max:hi)
        for(i=0; i<n; i++){
          if( w[i]<lo ) lo = w[i];
          if( w[i]>hi ) hi = w[i];
        }
        if( hi-lo < PAR_COUNT_MAX-1 ){
          nBin = (uint32_t)(hi-lo+1);
          aBin = sqlite3_malloc64(n*sizeof(uint32_t));
          if( aBin==0 ){
            rc = SQLITE_NOMEM;
          }else{
            #pragma omp parallel for num_threads(nThread)
            for(i=0; i<n; i++) aBin[i] = (uint32_t)(w[i]-lo);
          }
        }
      }
    }
  }
  if( rc ) goto done;

  if( parStopped() ){ rc = SQLITE_INTERRUPT; goto done; }

  /* The strategy: par_config('group_strategy') when it applies, else the
  ** first that does of direct, dense (within its memory bound), counting
  ** sort, radix sort.  All give the same result. */
  bBins = aBin!=0 || pIntKey!=0;
  bDirect = (bBins || pPlan->nKey==0) && !bOrdered && nBin<=PAR_DIRECT_MAX;
  bDense = bBins && !bOrdered && pPlan->nKey==1 && n<UINT32_MAX && denseFits(pPlan, pIn, pIntKey!=0);
  bCount = bBins && pPlan->nKey>0 && (nBin<=PAR_DIRECT_MAX || (!bOrdered && nBin<=n));
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
  if( pIntKey && aBin==0 && (bDirect || (bCount && !bDense)) ){
    rc = intKeyBins(pIntKey, n, nThread, iKeyLo, &aBin);
    if( rc ) goto done;
  }
  if( bDirect ){
    /* Accumulators: chunks of rows times key values, within a bound. */
    double nAcc = (double)(n/PAR_CHUNK + 1);
    if( nAcc*nBin > PAR_DIRECT_ACC ) nAcc = (double)(PAR_DIRECT_ACC/nBin > 0 ? PAR_DIRECT_ACC/nBin : 1);
    rc = groupFits(pCtx, pIn, (aBin ? 4.0*n : 0) + nAcc*nBin*(pPlan->nAgg + 1)*sizeof(ParAcc)
                              + (double)nBin*(9.0*(pPlan->nAgg + pPlan->nBare) + 24), pzErr);
    if( rc ) goto done;
    *pzStrategy = "per-chunk accumulators per key value (few key values)";
    rc = aggregateDirect(db, pPlan, pIn, aBin, nBin, nThread, ppOut, &bOverflow);
    goto done;
  }
  if( bDense ){
    /* Each thread's value and count arrays per key value, the result. */
    rc = groupFits(pCtx, pIn, (aBin ? 4.0*n : 0)
                              + (double)nThread*nBin*(12.0*pPlan->nAgg + 8)
                              + (double)nBin*(9.0*(pPlan->nAgg + pPlan->nBare) + 4), pzErr);
    if( rc ) goto done;
    rc = aggregateDense(pPlan, pIn, aBin, nBin, pIntKey, iKeyLo, nThread, ppOut);
    if( rc || *ppOut ){
      *pzStrategy = "per-thread accumulators per key value (dense key values)";
      goto done;
    }
    /* An integer sum might overflow: a strategy that follows row order. */
    if( bCount && aBin==0 ){
      rc = intKeyBins(pIntKey, n, nThread, iKeyLo, &aBin);
      if( rc ) goto done;
    }
  }
  if( !bCount ){
    sqlite3_free(aBin);
    aBin = 0;
    if( nWord==0 && pPlan->nKey>0 ) rc = keyWords(pPlan, pIn, nThread, aaWord, &nWord);
    if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
    if( rc ) goto done;
  }
  rc = groupFits(pCtx, pIn, sortedBytes(pPlan, pIn, n, aBin ? 0 : nWord, aBin ? nBin : 0,
                                       nThread, (double)(aBin && nBin<n ? nBin : n)), pzErr);
  if( rc ) goto done;
  *pzStrategy = aBin ? "counting sort, then segments"
              : nWord==0 ? "one group, in order" : "radix sort, then segments";
  rc = sortGroups(aaWord, nWord, aBin, nBin, n, nThread, &aPerm, &aOff, &nGroup);
  for(k=0; k<nWord; k++){ sqlite3_free(aaWord[k]); aaWord[k] = 0; }
  sqlite3_free(aBin);
  aBin = 0;
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  if( rc==SQLITE_OK ){
    rc = aggregateSorted(db, pPlan, pIn, aPerm, aOff, nGroup, nThread, ppOut, &bOverflow);
  }

done:
  for(k=0; k<nWord; k++) sqlite3_free(aaWord[k]);
  sqlite3_free(aBin);
  sqlite3_free(aPerm);
  sqlite3_free(aOff);
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
