/*
** agg.c: the rules of SQLite's aggregate functions, for operators that
** compute them over batch columns (groupby.c; window functions next).
**
**   ParAggRun r = {0};  ParAcc a;
**   rc = parAggRunInit(db, &pPlan->aAgg[j], aCol, nRow, nThread, &r);
**   parAccInit(&a);
**   parAggFold(&r, &a, 1, 0, lo, hi, 0);  or  parAggStep(&r, &a, iRow);
**   bOverflow = parAggValue(&r, &a, pDst, iGroup);
**   parAggRunClear(&r);
**
** The contract: each function gives, bit for bit, what the SQLite library
** loaded gives for the same rows in the same order (func.c of SQLite
** 3.40.1, the library of this system; where later versions differ, their
** rules too, chosen at run time by sqlite3_libversion_number()):
**
**  1. count(*) counts rows, count(x) non-NULL values (countStep).
**  2. sum(x), total(x), avg(x) read each value as sumStep() does:
**     sqlite3_value_numeric_type(), so TEXT and BLOB that look like an
**     integer count as INTEGER, other text as its numeric prefix or 0.0,
**     a REAL (ParNum, converted by SQLite itself once per distinct value).
**     NULLs are skipped.
**  3. Sums are SumCtx: an exact int64 sum while only integers come; from
**     SQLite 3.40.1's sumStep(): every value also added to the double
**     rSum in row order, an int64 overflow marks the sum (sumFinalize():
**     "integer overflow", which the caller hands to SQLite itself, since
**     whether SQLite reports it depends on which groups its plan
**     finalizes); from 3.43: Kahan-Babuska-Neumaier steps in row order
**     once a REAL or an overflow comes (kahanBabuskaNeumaierStep,
**     ...StepInt64, ...Init).  A REAL sum is only ever added in row order
**     by one thread (bSeq, parAggSeqFold()): DESIGN.md's "REAL sums".
**     Integer sums whose every running sum provably fits (and total() and
**     avg() whose running double sums are provably exact) may be added in
**     any order and combined (parAggFold(), parAggCombine(), the dense
**     arrays); a running sum's range (iMin, iMax) tells whether one
**     overflowed.
**  4. Finishing (parAggValue(), which reads a without changing it: xValue
**     as well as xFinal): sum() NULL without values, INTEGER while exact,
**     else REAL (sumFinalize: rSum, plus rErr from 3.43 with the
**     version-specific handling of a non-finite rErr); total() REAL, 0.0
**     without values (totalFinalize); avg() REAL sum / count, NULL without
**     values (avgFinalize); count an INTEGER (countFinalize).
**  4b. min(x), max(x) (minmaxStep): NULLs skipped; a value replaces the
**     kept one only when strictly better (sqlite3MemCompare under the
**     argument's collation: NULL < numbers by value < TEXT < BLOB), so
**     ties keep the first row, which decides bare columns and which of
**     0.0 / -0.0 or 1 / 1.0 comes out.  Stored numbers compare by value;
**     anything else by its sort keys (parColumnKeys).
**  5. group_concat(x [, sep]) (groupConcatStep): NULL values skipped;
**     the separator (',' by default; sep of the row being added, NULL
**     sep as '') goes before every value but the first; NULL without
**     values.  Built per group into a dictionary (parAggFinishColumn()).
**  5b. DISTINCT: the caller marks the first row of each (group, value)
**     in ParAggRun.aFirst; the rest are skipped.
**  6. Removing the oldest row (parAggInverse(), xInverse for sliding
**     frames): countInverse() and sumInverse() (parSumInverse()) on
**     sequential states.  A window operator asks parAggRunInit() for the
**     state, sets bSeq for sum/total/avg of any argument (the integer
**     shortcut of rule 3 does not survive removals: SQLite's running sum
**     then follows steps and inverses in their order), steps rows with
**     parAggStep(), removes them with parAggInverse() and reads each
**     row's value with parAggValue().  The order is SQLite's (window.c:
**     AGGINVERSE follows RETURN_ROW): the rows that leave the frame are
**     removed before the next row is added, which decides a REAL sum's
**     bits.  min/max and group_concat have no such inverse here (see
**     parAggInverse()).  tests/test_agg.c checks this against SQLite's
**     window functions.
**
** Values are written as the batch keeps them: MIXED columns of storage
** class and bits, TEXT and BLOB as dictionary codes of the column they
** come from (parAggCopy(); the result column borrows that dictionary).
** parAggRunInit() and parAggFinishColumn() run on the calling thread
** (they call SQLite; the keys of min/max are built in parallel); the
** others may run on any thread and never call SQLite.
*/
#include "agg.h"
#include "histogram.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- values ------------------------------------------------------------------ */

/* A value of a batch column: storage class and bits (int64, double bits,
** or dictionary code). */
int parAggColGet(const ParColumn *pCol, sqlite3_int64 iRow, uint64_t *pV){
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

int parNumInit(sqlite3 *db, const ParColumn *pCol, ParNum *p){
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

void parNumClear(ParNum *p){
  sqlite3_free(p->aType);
  sqlite3_free(p->aI);
  sqlite3_free(p->aR);
}

/* Row iRow as a number: SQLITE_NULL, SQLITE_INTEGER (*pI and *pR set) or
** SQLITE_FLOAT (*pR set). */
int parNumGet(const ParNum *p, sqlite3_int64 iRow, sqlite3_int64 *pI, double *pR){
  uint64_t v;
  int e = parAggColGet(p->pCol, iRow, &v);
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

/* The least and greatest value of INTEGER column pCol's first n rows,
** NULLs aside (*pLo > *pHi when there are none): kept since the rows were
** read, else one parallel pass (px_range_i64). */
void parIntRange(const ParColumn *pCol, size_t n, int nThread,
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

/* ---- SQLite's sums, step by step -------------------------------------------- */

/* Does the SQLite library loaded sum with Kahan-Babuska-Neumaier steps
** (3.43 and later) rather than plain double additions? */
int parSumKbn(void){
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
void parSumStep(ParAcc *a, int bKbn, int bInt, sqlite3_int64 v, double r){
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
double parSumReal(const ParAcc *a, int bKbn){
  int v = sqlite3_libversion_number();
  if( !bKbn ) return a->rSum;
  if( !a->bApprox ) return (double)(sqlite3_int64)a->iSum;
  if( v>=3045003 ) return isfinite(a->rErr) ? a->rSum + a->rErr : a->rSum;
  if( v>=3043001 ) return isnan(a->rErr) ? a->rSum : a->rSum + a->rErr;
  return a->rSum + a->rErr;
}

/* Is the integer sum the result of sum() (no REAL, no overflow)? */
int parSumIsInt(const ParAcc *a, int bKbn){
  return bKbn ? !a->bApprox : (!a->bApprox && !a->bOvfl);
}

/* Before 3.43 sumStep() marks an overflow as approx too; from 3.43 a REAL
** that comes after an overflow clears it (parSumStep()). */
int parSumOverflow(const ParAcc *a, int bKbn){
  return a->bOvfl && (!bKbn || a->bApprox);
}

/* SQLite's sumInverse().  Before 3.43: while no REAL and no overflow came,
** an INTEGER leaves both sums (rSum as a double subtraction, iSum as
** int64 arithmetic); else the double leaves rSum.  From 3.43: while no
** REAL came, the integer leaves iSum; then the negated value goes through
** the compensated steps (-INT64_MIN as INT64_MAX and 1). */
void parSumInverse(ParAcc *a, int bKbn, int bInt, sqlite3_int64 v, double r){
  a->n--;
  if( !bKbn ){
    if( bInt && !a->bApprox && !a->bOvfl ){
      a->rSum -= (double)v;
      a->iSum = (sqlite3_int64)((uint64_t)(sqlite3_int64)a->iSum - (uint64_t)v);
    }else{
      a->rSum -= bInt ? (double)v : r;
    }
  }else if( !a->bApprox ){
    a->iSum = (sqlite3_int64)((uint64_t)(sqlite3_int64)a->iSum - (uint64_t)v);
  }else if( bInt ){
    if( v!=INT64_MIN ){
      kbnStepInt(a, -v);
    }else{
      kbnStepInt(a, INT64_MAX);
      kbnStepInt(a, 1);
    }
  }else{
    kbnStep(a, -r);
  }
}

/* The magnitude of the integer farthest from 0 among mn and mx. */
uint64_t parIntMagnitude(sqlite3_int64 mn, sqlite3_int64 mx){
  uint64_t a = mn<0 ? (uint64_t)0 - (uint64_t)mn : (uint64_t)mn;
  uint64_t b = mx<0 ? (uint64_t)0 - (uint64_t)mx : (uint64_t)mx;
  return a>b ? a : b;
}

/* Can no running sum of n integers of magnitude at most m overflow? */
int parSumCannotOverflow(uint64_t m, size_t n){
  return (unsigned __int128)m * n < ((unsigned __int128)1 << 63);
}

/* ---- one aggregate ---------------------------------------------------------- */

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
  parIntRange(pR->pArg, (size_t)nRow, nThread, &mn, &mx);
  if( mn>mx ) return 0;                     /* NULLs only */
  m = parIntMagnitude(mn, mx);
  if( pR->bKbn ) return !parSumCannotOverflow(m, (size_t)nRow);
  return (unsigned __int128)m*(uint64_t)nRow > ((unsigned __int128)1 << 53);
}

int parAggRunInit(sqlite3 *db, const ParPlanAgg *pA, ParColumn *aCol,
                  sqlite3_int64 nRow, int nThread, ParAggRun *pR){
  int eColl = pA->eColl<0 ? PAR_COLL_BINARY : pA->eColl, rc = SQLITE_OK;
  pR->pAgg = pA;
  pR->pArg = pA->iArg>=0 ? &aCol[pA->iArg] : 0;
  if( pA->eFunc==PAR_AGG_SUM || pA->eFunc==PAR_AGG_TOTAL || pA->eFunc==PAR_AGG_AVG ){
    rc = parNumInit(db, pR->pArg, &pR->num);
    pR->bKbn = parSumKbn();
    pR->bSeq = seqNeeded(pR, nRow, nThread);
  }
  if( (pA->eFunc==PAR_AGG_MIN || pA->eFunc==PAR_AGG_MAX)
   && (pR->pArg->eStore==PAR_COL_INT || pR->pArg->eStore==PAR_COL_REAL) ){
    pR->bValue = 1;
  }else if( rc==SQLITE_OK && (pA->eFunc==PAR_AGG_MIN || pA->eFunc==PAR_AGG_MAX) ){
    rc = parColumnKeys(&aCol[pA->iArg], nRow, eColl, 0, nThread,
                       &pR->key.a1, &pR->key.a2);
  }
  return rc;
}

void parAggRunClear(ParAggRun *pR){
  parNumClear(&pR->num);
  sqlite3_free(pR->key.a1);
  sqlite3_free(pR->key.a2);
  sqlite3_free(pR->aFirst);
  memset(pR, 0, sizeof(*pR));
}

int parAggIntSum(const ParAggRun *pR){
  int e = pR->pAgg->eFunc;
  return (e==PAR_AGG_SUM || e==PAR_AGG_TOTAL || e==PAR_AGG_AVG)
      && pR->aFirst==0 && pR->pArg->eStore==PAR_COL_INT && !pR->bSeq;
}

static int keyCmp(const ParAggKey *k, sqlite3_int64 i, sqlite3_int64 j){
  if( k->a1[i]!=k->a1[j] ) return k->a1[i]<k->a1[j] ? -1 : 1;
  if( k->a2 && k->a2[i]!=k->a2[j] ) return k->a2[i]<k->a2[j] ? -1 : 1;
  return 0;
}

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
void parAggStep(const ParAggRun *pR, ParAcc *a, sqlite3_int64 iRow){
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
      /* Sequential: SQLite's sumStep().  Else an INTEGER column, whose
      ** sum is exact. */
      sqlite3_int64 i = 0;
      double r = 0;
      e = parNumGet(&pR->num, iRow, &i, &r);
      if( pR->bSeq ){
        if( e!=SQLITE_NULL ) parSumStep(a, pR->bKbn, e==SQLITE_INTEGER, i, r);
        return;
      }
      assert( pR->pArg->eStore==PAR_COL_INT );
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

/* Requirement 6: countInverse() and sumInverse().  min() and max() have
** no xInverse in SQLite: window.c keeps a sliding frame's values in an
** ephemeral index ordered by value; a window operator would keep the
** frame's rows in a monotonic queue (ties: the earliest row, as here) or
** a segment tree of parAggCombine()d states.  group_concat's inverse
** drops the first value and its separator from the front of the string:
** it needs the string as state, not a ParAcc. */
int parAggInverse(const ParAggRun *pR, ParAcc *a, sqlite3_int64 iRow){
  if( pR->aFirst ) return SQLITE_MISUSE;     /* no DISTINCT in windows */
  switch( pR->pAgg->eFunc ){
    case PAR_AGG_COUNT_STAR:
      a->n--;
      return SQLITE_OK;
    case PAR_AGG_COUNT:
      if( parColumnType(pR->pArg, iRow)!=SQLITE_NULL ) a->n--;
      return SQLITE_OK;
    case PAR_AGG_SUM: case PAR_AGG_TOTAL: case PAR_AGG_AVG: {
      sqlite3_int64 i = 0;
      double r = 0;
      int e;
      if( !pR->bSeq ) return SQLITE_MISUSE;  /* the running sums' range */
      e = parNumGet(&pR->num, iRow, &i, &r);
      if( e!=SQLITE_NULL ) parSumInverse(a, pR->bKbn, e==SQLITE_INTEGER, i, r);
      return SQLITE_OK;
    }
    default:
      return SQLITE_MISUSE;
  }
}

/* Fold rows [lo, hi) into a[aBin[r]*stride] (the accumulators of
** aggregate pR per key value; all into a[0] when aBin is NULL), in row
** order.  The common storage classes
** get loops of their own; everything else goes through parAggStep().
**
** pMag (integer sums only; NULL otherwise): sum without following the
** running sum's range (iMin, iMax stay 0) and raise *pMag to the largest
** magnitude summed.  The caller checks with parSumCannotOverflow() that no
** running sum can overflow, else folds again without pMag. */
void parAggFold(const ParAggRun *pR, ParAcc *a, int stride, const uint32_t *aBin,
                      size_t lo, size_t hi, uint64_t *pMag){
  const ParColumn *pCol = pR->pArg;
  int e = pR->pAgg->eFunc;
  size_t r;
  if( pR->bSeq ) return;        /* parAggSeqFold() adds these, group by group */
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
      }else if( pCol->aNull==0 ){
        /* A state per key value, no NULLs: nothing to decide per row. */
        for(r=lo; r<hi; r++){
          ParAcc *p = &a[(size_t)aBin[r]*stride];
          p->n++;
          p->iSum += v[r];
          mn = v[r]<mn ? v[r] : mn;
          mx = v[r]>mx ? v[r] : mx;
        }
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
      if( parIntMagnitude(mn, mx)>*pMag ) *pMag = parIntMagnitude(mn, mx);
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
  for(r=lo; r<hi; r++) parAggStep(pR, &a[aBin ? (size_t)aBin[r]*stride : 0], (sqlite3_int64)r);
}

/* Add the values of sequential sum pR at positions [lo, hi) to a, in
** order, as SQLite's sumStep() does: rows aIdx[p] of the argument, or
** rows p when aIdx is NULL.  The one pass over a group's rows that gives
** SQLite's bits; REAL columns get loops of their own. */
void parAggSeqFold(const ParAggRun *pR, ParAcc *a, const uint32_t *aIdx,
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
        parSumStep(a, 1, 0, 0, v[r]);
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
    parSumStep(a, pR->bKbn, e==SQLITE_INTEGER, i, x);
  }
}

/* a = a followed by b. */
void parAggCombine(const ParAggRun *pR, ParAcc *a, const ParAcc *b){
  if( pR->bSeq ) return;        /* filled by parAggSeqFold(), not in chunks */
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

void parAggCopy(ParColumn *pDst, sqlite3_int64 iDst, const ParColumn *pSrc,
                    sqlite3_int64 iSrc){
  uint64_t v = 0;
  pDst->aType[iDst] = (uint8_t)(iSrc<0 ? SQLITE_NULL : parAggColGet(pSrc, iSrc, &v));
  pDst->aVal[iDst] = v;
}

static void outFloat(ParColumn *pDst, sqlite3_int64 i, double r){
  pDst->aType[i] = SQLITE_FLOAT;
  memcpy(&pDst->aVal[i], &r, 8);
}

/* Requirement 4: sumFinalize(), totalFinalize(), avgFinalize(),
** countFinalize(), minMaxValue(); nothing in a is changed, so this is
** xValue as well as xFinal. */
int parAggValue(const ParAggRun *pR, const ParAcc *a, ParColumn *pDst, sqlite3_int64 i){
  int bOverflow = 0;
  pDst->aType[i] = SQLITE_NULL;
  pDst->aVal[i] = 0;
  switch( pR->pAgg->eFunc ){
    case PAR_AGG_COUNT_STAR: case PAR_AGG_COUNT:
      pDst->aType[i] = SQLITE_INTEGER;
      pDst->aVal[i] = (uint64_t)a->n;
      break;
    case PAR_AGG_SUM:
      if( a->n==0 ) break;
      if( pR->bSeq ){
        if( parSumOverflow(a, pR->bKbn) ){
          bOverflow = 1;        /* SQLite's "integer overflow" */
        }else if( parSumIsInt(a, pR->bKbn) ){
          pDst->aType[i] = SQLITE_INTEGER;
          pDst->aVal[i] = (uint64_t)(sqlite3_int64)a->iSum;
        }else{
          outFloat(pDst, i, parSumReal(a, pR->bKbn));
        }
      }else if( a->iMin < INT64_MIN || a->iMax > INT64_MAX ){
        bOverflow = 1;
      }else{
        pDst->aType[i] = SQLITE_INTEGER;
        pDst->aVal[i] = (uint64_t)(sqlite3_int64)a->iSum;
      }
      break;
    case PAR_AGG_TOTAL:
      /* Not sequential: integers whose running double sum is exact. */
      outFloat(pDst, i, pR->bSeq ? parSumReal(a, pR->bKbn) : (double)a->iSum);
      break;
    case PAR_AGG_AVG:
      if( a->n==0 ) break;
      outFloat(pDst, i, (pR->bSeq ? parSumReal(a, pR->bKbn) : (double)a->iSum)
                        /(double)a->n);
      break;
    case PAR_AGG_MIN: case PAR_AGG_MAX:
      parAggCopy(pDst, i, pR->pArg, a->iBest);
      break;
    default:
      break;
  }
  return bOverflow;
}

/* Requirement 5: group_concat over positions [lo, hi) into a new string
** (sqlite3_malloc); *pn its length, -1 (and NULL) when no value was
** concatenated; NULL with *pRc set when the string could not be made (out
** of memory, too big). */
static char *groupConcat(const ParColumn *pText, const ParColumn *pSep,
                         const uint8_t *aFirst, size_t lo, size_t hi, sqlite3_int64 *pn,
                         int *pRc){
  sqlite3_str *pStr = sqlite3_str_new(0);
  size_t p;
  int bFirst = 1;
  for(p=lo; p<hi; p++){
    uint64_t v;
    if( aFirst && !aFirst[p] ) continue;
    if( parAggColGet(pText, p, &v)==SQLITE_NULL ) continue;
    if( !bFirst ){
      if( pSep==0 ){
        sqlite3_str_appendchar(pStr, 1, ',');
      }else{
        uint64_t s;
        if( parAggColGet(pSep, p, &s)!=SQLITE_NULL && pSep->pDict->aLen[s] ){
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

/* Copied TEXT and BLOB values keep the codes of the columns they come
** from: a min/max result borrows its argument's dictionary; group_concat
** results get a dictionary of their own. */
int parAggFinishColumn(const ParAggRun *pR, const ParColumn *aCol, const size_t *aOff,
                       size_t nGroup, ParBatch *pOut, int iCol){
  const ParPlanAgg *pA = pR->pAgg;
  ParColumn *pDst = &pOut->aCol[iCol];
  size_t g;
  int rc = SQLITE_OK;
  if( pA->eFunc==PAR_AGG_MIN || pA->eFunc==PAR_AGG_MAX ){
    pDst->pDict = pR->pArg->pDict;
    pDst->bBorrowDict = 1;
    return SQLITE_OK;
  }
  if( pA->eFunc!=PAR_AGG_GROUP_CONCAT ) return SQLITE_OK;
  pDst->pDict = sqlite3_malloc(sizeof(ParDict));
  if( pDst->pDict==0 ) return SQLITE_NOMEM;
  memset(pDst->pDict, 0, sizeof(ParDict));
  for(g=0; g<nGroup && rc==SQLITE_OK; g++){
    sqlite3_int64 nStr = 0;
    char *z = groupConcat(&aCol[pA->iText], pA->iSep>=0 ? &aCol[pA->iSep] : 0,
                          pR->aFirst, aOff[g], aOff[g+1], &nStr, &rc);
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
  return rc;
}

/* ---- dense accumulators ------------------------------------------------------ */

int parAggDenseFits(const ParPlanAgg *pA, const ParColumn *pArg){
  if( pA->bDistinct ) return 0;
  switch( pA->eFunc ){
    case PAR_AGG_COUNT_STAR: case PAR_AGG_COUNT:
      return 1;
    case PAR_AGG_SUM: case PAR_AGG_TOTAL: case PAR_AGG_AVG:
      return pArg->eStore==PAR_COL_INT;
    case PAR_AGG_MIN: case PAR_AGG_MAX:
      return pArg->eStore==PAR_COL_INT || pArg->eStore==PAR_COL_REAL;
    default:
      return 0;
  }
}

void parAggDenseInit(ParAggDense *pD, const ParPlanAgg *pA, const ParColumn *pArg,
                     int *pnVal, int *pnCnt){
  pD->eFunc = pA->eFunc;
  pD->pArg = pArg;
  pD->bNulls = pArg && (pArg->nNull>0 || pArg->eStore==PAR_COL_MIXED
                        || pArg->eStore==PAR_COL_NULL);
  pD->iVal = pD->iCnt = -1;
  if( pD->eFunc!=PAR_AGG_COUNT_STAR && pD->eFunc!=PAR_AGG_COUNT ) pD->iVal = (*pnVal)++;
  if( pD->bNulls ) pD->iCnt = (*pnCnt)++;
}

/* Integer sums: no running sum can overflow when the count of values
** times the greatest magnitude stays below 2^63; total() and avg()
** before SQLite 3.43 add doubles, exact only below 2^53 (seqNeeded()). */
int parAggDenseExact(const ParAggDense *pD, size_t n, int nThread){
  sqlite3_int64 mn, mx;
  if( pD->eFunc!=PAR_AGG_SUM && pD->eFunc!=PAR_AGG_TOTAL && pD->eFunc!=PAR_AGG_AVG ){
    return 1;
  }
  parIntRange(pD->pArg, n, nThread, &mn, &mx);
  if( mn<=mx && !parSumCannotOverflow(parIntMagnitude(mn, mx), n) ) return 0;
  if( mn<=mx && pD->eFunc!=PAR_AGG_SUM && !parSumKbn()
   && (unsigned __int128)parIntMagnitude(mn, mx)*n > ((unsigned __int128)1 << 53) ){
    return 0;
  }
  return 1;
}

int parAggDenseStore(const ParAggDense *pD){
  int e = pD->eFunc;
  if( e==PAR_AGG_TOTAL || e==PAR_AGG_AVG ) return PAR_COL_REAL;
  if( e==PAR_AGG_MIN || e==PAR_AGG_MAX ) return pD->pArg->eStore;
  return PAR_COL_INT;
}

/* Only a strictly better value replaces: ties keep the first. */
void parAggDenseMerge(const ParAggDense *pD, sqlite3_int64 *p0, sqlite3_int64 x){
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

void parAggDenseWrite(const ParAggDense *pD, ParColumn *pDst, sqlite3_int64 gi,
                      sqlite3_int64 v, uint32_t nn){
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
    default:   /* sum, min, max: NULL without a value */
      if( pDst->eStore==PAR_COL_INT ) pDst->aInt[gi] = nn>0 ? v : 0;
      else if( nn>0 ) memcpy(&pDst->aReal[gi], &v, 8);
      else pDst->aReal[gi] = 0.0;
      break;
  }
}

int parAggDenseNull(const ParAggDense *pD){
  return pD->bNulls && pD->eFunc!=PAR_AGG_COUNT && pD->eFunc!=PAR_AGG_TOTAL;
}

int parAggDenseReads(const ParAggDense *pD){
  return pD->eFunc!=PAR_AGG_COUNT_STAR && (pD->eFunc!=PAR_AGG_COUNT || pD->bNulls);
}

int parAggDenseIsResult(const ParAggDense *pD){
  return pD->iVal>=0 && !pD->bNulls && pD->eFunc!=PAR_AGG_TOTAL
      && pD->eFunc!=PAR_AGG_AVG && pD->pArg->eStore==PAR_COL_INT;
}

/* Fold rows [lo, hi) of aggregate pD into the arrays of one thread: aVal
** (sum, or least/greatest value) and aCnt (non-NULL arguments, when pD has
** its own counts). */
void parAggDenseFold(const ParAggDense *pD, const ParAggBins *pBins, size_t lo, size_t hi,
                      sqlite3_int64 *aVal, uint32_t *aCnt){
  const ParColumn *pCol = pD->pArg;
  size_t r;
  switch( pD->eFunc ){
    case PAR_AGG_COUNT:
      PAR_DENSE_FOR_ROWS(pBins, {
        if( parColumnType(pCol, (sqlite3_int64)r)!=SQLITE_NULL ) aCnt[bin]++;
      })
      break;
    case PAR_AGG_SUM: case PAR_AGG_TOTAL: case PAR_AGG_AVG: {
      /* Unsigned: wrapping is defined; aggregateDense() ruled overflow
      ** out before. */
      const sqlite3_int64 *v = pCol->aInt;
      uint64_t *s = (uint64_t*)aVal;
      if( aCnt ){
        PAR_DENSE_FOR_ROWS(pBins, {
          if( parIsNullRow(pCol, r) ) continue;
          s[bin] += (uint64_t)v[r];
          aCnt[bin]++;
        })
      }else{
        PAR_DENSE_FOR_ROWS(pBins, { s[bin] += (uint64_t)v[r]; })
      }
      break;
    }
    case PAR_AGG_MIN: case PAR_AGG_MAX: {
      /* Only a strictly better value replaces: ties keep the first (for
      ** REAL, 0.0 and -0.0 are equal but print differently). */
      int bMin = pD->eFunc==PAR_AGG_MIN;
      PAR_DENSE_FOR_ROWS(pBins, {
        if( parIsNullRow(pCol, r) ) continue;
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
sqlite3_int64 parAggDenseStart(const ParAggDense *pD){
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
