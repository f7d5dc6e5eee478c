/*
** agg.h: SQLite's aggregate functions over batch columns, one place for
** the group-by (groupby.c) and the window operator (see agg.c).
**
** An aggregate is a ParAggRun (what it computes, over which column) and
** any number of states ParAcc, one per run of rows (a group, a chunk of
** a group, a frame).  The life of a state, as SQLite's xStep, xInverse,
** xValue and xFinal:
**
**   ParAggRun r = {0};  ParAcc a;
**   parAggRunInit(db, pAgg, aCol, nRow, nThread, &r);   (r.aFirst: DISTINCT;
**                                     a window sets r.bSeq for sums: agg.c 6)
**   parAccInit(&a);
**   parAggStep(&r, &a, iRow);  ...                       add rows in order
**   parAggInverse(&r, &a, iRow);  ...                    remove the oldest
**   parAggValue(&r, &a, pDst, i);                        the value, any time
**   parAggRunClear(&r);
**
** parAggFold() and parAggSeqFold() are the loops of parAggStep() over a
** range of rows; parAggCombine() joins the states of two consecutive runs.
** The ParAggDense functions are a second representation, columnar, for
** aggregates whose result does not depend on the order of the rows.
*/
#ifndef PAR_AGG_H
#define PAR_AGG_H

#include "plan.h"

#include <string.h>

/* ---- values ------------------------------------------------------------- */

/* A value of a batch column: returns its storage class (SQLITE_*) and sets
** *pV to its bits (int64, double bits, or dictionary code; 0 for NULL). */
int parAggColGet(const ParColumn *pCol, sqlite3_int64 iRow, uint64_t *pV);

/* Row iSrc of pSrc into row iDst of MIXED column pDst, as it is (its text
** keeps pSrc's dictionary code); NULL when iSrc<0. */
void parAggCopy(ParColumn *pDst, sqlite3_int64 iDst, const ParColumn *pSrc,
                sqlite3_int64 iSrc);

/* Is row r of pCol NULL by its bitmap (INT and REAL storage)? */
static inline int parIsNullRow(const ParColumn *pCol, size_t r){
  return pCol->aNull && (pCol->aNull[r>>3] >> (r&7)) & 1;
}

/* The least and greatest value of INTEGER column pCol's first n rows,
** NULLs aside (*pLo > *pHi when there are none). */
void parIntRange(const ParColumn *pCol, size_t n, int nThread,
                 sqlite3_int64 *pLo, sqlite3_int64 *pHi);

/* The numbers sum(), total() and avg() read from a column: INTEGER and
** REAL as they are, TEXT and BLOB dictionary entries converted once each
** by SQLite itself (sqlite3_value_numeric_type(), sqlite3_value_int64()
** or sqlite3_value_double(): sumStep()'s reading of its argument). */
typedef struct ParNum {
  const ParColumn *pCol;
  uint8_t *aType;      /* per dictionary entry: SQLITE_INTEGER or SQLITE_FLOAT */
  sqlite3_int64 *aI;
  double *aR;
} ParNum;

int parNumInit(sqlite3 *db, const ParColumn *pCol, ParNum *p);
void parNumClear(ParNum *p);
/* Row iRow as a number: returns SQLITE_NULL, SQLITE_INTEGER (*pI and *pR
** set) or SQLITE_FLOAT (*pR set). */
int parNumGet(const ParNum *p, sqlite3_int64 iRow, sqlite3_int64 *pI, double *pR);

/* ---- the state of one aggregate ------------------------------------------ */

/* The state of one aggregate over a run of rows.  Combining the states of
** two consecutive runs gives the state of their concatenation, except for
** sequential sums (ParAggRun.bSeq), which one pass over all of a group's
** rows in order fills as SQLite's SumCtx (parSumStep()).
** 16-byte aligned (__int128): arrays of them come from malloc(). */
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

/* The empty state (no rows). */
static inline void parAccInit(ParAcc *a){
  memset(a, 0, sizeof(*a));
  a->iBest = -1;
}

/* ---- SQLite's SumCtx (sum, total, avg), step by step ---------------------- */

/* Does the SQLite library loaded sum with Kahan-Babuska-Neumaier steps
** (3.43 and later) rather than plain double additions?  bKbn below. */
int parSumKbn(void);
/* sumStep() for one non-NULL value: INTEGER v (bInt) or REAL r. */
void parSumStep(ParAcc *a, int bKbn, int bInt, sqlite3_int64 v, double r);
/* sumInverse() for one non-NULL value that parSumStep() added before. */
void parSumInverse(ParAcc *a, int bKbn, int bInt, sqlite3_int64 v, double r);
/* The REAL result (totalFinalize(); avgFinalize() before the division). */
double parSumReal(const ParAcc *a, int bKbn);
/* Is sum()'s result the INTEGER iSum? */
int parSumIsInt(const ParAcc *a, int bKbn);
/* Does sumFinalize() fail with "integer overflow"? */
int parSumOverflow(const ParAcc *a, int bKbn);

/* The magnitude of the integer farthest from 0 among mn and mx. */
uint64_t parIntMagnitude(sqlite3_int64 mn, sqlite3_int64 mx);
/* Can no running sum of n integers of magnitude at most m overflow? */
int parSumCannotOverflow(uint64_t m, size_t n);

/* ---- one aggregate ------------------------------------------------------ */

/* Keys of a min/max argument: lexicographic (a1, a2); a2 may be NULL. */
typedef struct ParAggKey { uint64_t *a1, *a2; } ParAggKey;

/* Everything the aggregation of one aggregate needs: set by
** parAggRunInit(), freed by parAggRunClear(). */
typedef struct ParAggRun {
  const ParPlanAgg *pAgg;
  const ParColumn *pArg;     /* argument column, or NULL for count(*) */
  ParNum num;                /* sum/total/avg */
  ParAggKey key;             /* min/max, unless bValue */
  int bValue;                /* min/max over INT or REAL storage: values are
                             ** compared as they are, no keys are built */
  uint8_t *aFirst;           /* DISTINCT: 1 on the first row of each value
                             ** (the caller's, sqlite3_malloc; freed here) */
  int bFastSum;              /* sum/total/avg of INT storage: folded
                             ** without following the running sum first
                             ** (the caller's choice; see parAggFold()) */
  int bSeq;                  /* sum/total/avg added in row order by one
                             ** thread per group (parAggSeqFold()): not
                             ** folded in chunks, never combined */
  int bKbn;                  /* the sums of SQLite 3.43 and later */
} ParAggRun;

/* Prepare *pR (zeroed by the caller) for aggregate pA over the columns aCol
** of nRow rows: the numbers of sum/total/avg, the keys of min/max under
** pA's collation, whether sums must be sequential.  Leaves aFirst (DISTINCT)
** to the caller.  On error the caller still calls parAggRunClear(). */
int parAggRunInit(sqlite3 *db, const ParPlanAgg *pA, ParColumn *aCol,
                  sqlite3_int64 nRow, int nThread, ParAggRun *pR);
void parAggRunClear(ParAggRun *pR);

/* Could parAggFold() sum pR without following the running sums?  (An
** INTEGER argument, not DISTINCT, not sequential.) */
int parAggIntSum(const ParAggRun *pR);

/* Row iRow into a (xStep): sequential sums with SQLite's sumStep() (one
** row of parAggSeqFold()), group_concat not at all (parAggFinishColumn()
** builds it from the rows). */
void parAggStep(const ParAggRun *pR, ParAcc *a, sqlite3_int64 iRow);

/* Remove row iRow, the oldest row stepped into a and not yet removed
** (xInverse), for count(*), count, and sequential sum/total/avg
** (sumInverse()).  Returns SQLITE_OK, or SQLITE_MISUSE for min, max and
** group_concat, whose windows need another state (see agg.c). */
int parAggInverse(const ParAggRun *pR, ParAcc *a, sqlite3_int64 iRow);

/* Rows [lo, hi) into a[aBin[r]*stride] (all into a[0] when aBin is NULL),
** in row order; pMag: see agg.c.  Sequential sums are left alone. */
void parAggFold(const ParAggRun *pR, ParAcc *a, int stride, const uint32_t *aBin,
                size_t lo, size_t hi, uint64_t *pMag);
/* Sequential sum pR over positions [lo, hi) into a, in order: rows
** aIdx[p] of the argument, or rows p when aIdx is NULL. */
void parAggSeqFold(const ParAggRun *pR, ParAcc *a, const uint32_t *aIdx,
                   size_t lo, size_t hi);
/* a = a followed by b (not for sequential sums). */
void parAggCombine(const ParAggRun *pR, ParAcc *a, const ParAcc *b);

/* The value of a into row i of MIXED column pDst without changing a
** (xValue, and xFinal): NULL for group_concat, which
** parAggFinishColumn() writes.  Returns 1 when sum() fails with "integer
** overflow" (pDst's row is NULL then), else 0. */
int parAggValue(const ParAggRun *pR, const ParAcc *a, ParColumn *pDst, sqlite3_int64 i);

/* After parAggValue() for every group: pDst (column iCol of pOut) borrows
** the dictionary of min/max's argument; group_concat's values of the
** nGroup groups (positions aOff[g]..aOff[g+1]-1 of aCol) are built into a
** dictionary of its own. */
int parAggFinishColumn(const ParAggRun *pR, const ParColumn *aCol, const size_t *aOff,
                       size_t nGroup, ParBatch *pOut, int iCol);

/* ---- dense accumulators ------------------------------------------------- */

/* A second state for aggregates that need no order, held as arrays per
** key value (bin): an int64 (the sum, or the bits of the least or
** greatest value) and a count of non-NULL arguments when the argument has
** NULLs.  Sums of integers that cannot overflow and min/max over numbers
** (ties keep the earlier row) give the same result whatever rows each
** array took, so arrays of consecutive row ranges merge in order into the
** result of one. */
typedef struct ParAggDense {
  int eFunc;
  const ParColumn *pArg;
  int bNulls;          /* counts of non-NULL arguments of its own */
  int iVal, iCnt;      /* its arrays among a thread's (-1: none / the rows') */
} ParAggDense;

/* Can aggregate pA over pArg (NULL for count(*)) be dense? */
int parAggDenseFits(const ParPlanAgg *pA, const ParColumn *pArg);
/* Set *pD for aggregate pA over pArg; *pnVal and *pnCnt count the arrays. */
void parAggDenseInit(ParAggDense *pD, const ParPlanAgg *pA, const ParColumn *pArg,
                     int *pnVal, int *pnCnt);
/* Do pD's sums stay exact (else the caller uses a state that follows row
** order)?  n rows. */
int parAggDenseExact(const ParAggDense *pD, size_t n, int nThread);
/* The starting value of pD's value array. */
sqlite3_int64 parAggDenseStart(const ParAggDense *pD);
/* The storage class of pD's result column (PAR_COL_INT or PAR_COL_REAL). */
int parAggDenseStore(const ParAggDense *pD);
/* *p0 = *p0 merged with x, the value of a later range of rows. */
void parAggDenseMerge(const ParAggDense *pD, sqlite3_int64 *p0, sqlite3_int64 x);
/* The result of value v over nn non-NULL values (rows) into row gi of
** pDst (parAggDenseStore()); a row that must be NULL gets 0 here and its
** NULL from the caller where parAggDenseNull() says so. */
void parAggDenseWrite(const ParAggDense *pD, ParColumn *pDst, sqlite3_int64 gi,
                      sqlite3_int64 v, uint32_t nn);
/* Is pD's result NULL for a group without non-NULL values? */
int parAggDenseNull(const ParAggDense *pD);
/* Does pD read its argument (count(*), and count(x) without NULLs, are
** the rows per key value)? */
int parAggDenseReads(const ParAggDense *pD);
/* Is pD's value array, merged, its result column as it is, when every
** key value has rows (sum, min, max of INTEGERs without NULLs)? */
int parAggDenseIsResult(const ParAggDense *pD);

/* Where dense folding finds each row's bin: an array of bins, or an
** INTEGER key read in place (bin v - lo, +1 after the NULL bin 0 when the
** key has NULLs), which spares writing and reading a bin per row. */
typedef struct ParAggBins {
  const uint32_t *aBin;      /* the bins, or NULL: from the key */
  const sqlite3_int64 *aKey;
  const uint8_t *aNull;      /* the key's NULLs, or NULL when it has none */
  uint64_t lo;
  uint32_t base;             /* 1 with NULLs, else 0 */
} ParAggBins;

static inline uint32_t parAggBinOf(const ParAggBins *p, size_t r){
  if( p->aBin ) return p->aBin[r];
  if( p->aNull && (p->aNull[r>>3] >> (r&7)) & 1 ) return 0;
  return (uint32_t)((uint64_t)p->aKey[r] - p->lo) + p->base;
}

/* Run the statements that follow pBins for rows r in [lo, hi), with bin
** the row's bin; the loop is specialized for each source of bins (these
** loops are the dense path). */
#define PAR_DENSE_FOR_ROWS(pBins, ...)                                     \
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
    for(r=lo; r<hi; r++){ uint32_t bin = parAggBinOf(pBins, r); __VA_ARGS__ } \
  }

/* Rows [lo, hi) of aggregate pD into one range's arrays: aVal (sum, or
** least/greatest value) and aCnt (non-NULL arguments, when pD has its own
** counts). */
void parAggDenseFold(const ParAggDense *pD, const ParAggBins *pBins, size_t lo, size_t hi,
                     sqlite3_int64 *aVal, uint32_t *aCnt);

#endif /* PAR_AGG_H */
