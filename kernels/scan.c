/*
** scan.c: prefix sums and segmented scans (scan.h), on par.h's driver.
**
** How it works.
**
**   Plain scans.  Each block is cut into SCAN_STRIPS strips of (almost)
**   equal length; a block's summary is the sum of each strip, each summed
**   left to right.  Carries advance strip by strip (carry += strip sum), and
**   a strip's outputs are a running sum started from its carry.  The strips
**   give the finish loop SCAN_STRIPS independent dependency chains, which
**   is what makes the f64 scan run at memory speed instead of at the
**   latency of one floating-point add per element.  For i64 every order of
**   the (wrapping, unsigned) additions gives the same result anyway.
**
**   Segmented scans.  A block's summary is (does the block contain a
**   segment head, fold of the elements from its last head or its start).
**   Combining A then B gives B's fold if B has a head, else A (op) B.  A
**   block is finished run by run, a run being the elements from a head (or
**   the block start) to the next head: out[k] = carry (op) fold(run up to
**   k), where the carry is the identity for runs starting at a head.  Both
**   the summary and the finish fold a run the same way, left to right from
**   its first element, so the carry into a block equals the last output of
**   the block before, bit for bit.
**
**   The identities make "no carry" exact: -0.0 for f64 sums (-0.0 + x == x
**   for every x, zeros included), NaN for f64 min/max (NaNs are skipped, so
**   NaN (op) x == x), INT64_MAX / INT64_MIN / 0 for i64.
*/
#include "scan.h"
#include <assert.h>
#include <math.h>
#include <string.h>

#define SCAN_STRIPS 4

/* Unrolls the loops over strips, which keeps each strip's running value in
** a register instead of a stack slot. */
#define SCAN_UNROLL _Pragma("GCC unroll 8")

/* ---- plain scans -------------------------------------------------------
** Generated for T = uint64_t (the i64 scans: unsigned, so sums wrap without
** undefined behaviour) and T = double, with ZERO the identity of +. */
typedef struct scan_ctx {
  const void *in;
  void *out;
  int bExcl;           /* exclusive: out[i] excludes in[i] */
} scan_ctx;

/* Strip j of a block of length len is [j*m, (j+1)*m) with m = len /
** SCAN_STRIPS, except that the last strip runs to the end of the block. */
#define SCAN_DEFINE(T, NAME, ZERO)                                           \
static void NAME##_reduce(void *pCtx, size_t lo, size_t hi, void *pSum){     \
  const T *in = ((const scan_ctx*)pCtx)->in;                                 \
  T *aS = pSum;                                                              \
  size_t m = (hi - lo) / SCAN_STRIPS, k;                                     \
  int j;                                                                     \
  T s[SCAN_STRIPS];                                                          \
  for(j=0; j<SCAN_STRIPS; j++) s[j] = ZERO;                                  \
  for(k=lo; k<lo+m; k++){                                                    \
    SCAN_UNROLL                                                              \
    for(j=0; j<SCAN_STRIPS; j++) s[j] += in[k + j*m];                        \
  }                                                                          \
  for(k=lo+SCAN_STRIPS*m; k<hi; k++) s[SCAN_STRIPS-1] += in[k];              \
  for(j=0; j<SCAN_STRIPS; j++) aS[j] = s[j];                                 \
}                                                                            \
static void NAME##_combine(void *pCtx, void *pAcc, const void *pSum){        \
  T *pA = pAcc;                                                              \
  const T *aS = pSum;                                                        \
  int j;                                                                     \
  for(j=0; j<SCAN_STRIPS; j++) *pA += aS[j];                                 \
}                                                                            \
static void NAME##_finish(void *pCtx, size_t lo, size_t hi,                  \
                          const void *pAcc, const void *pSum){               \
  const scan_ctx *p = pCtx;                                                  \
  const T *in = p->in;                                                       \
  T *out = p->out;                                                           \
  const T *aS = pSum;                                                        \
  size_t m = (hi - lo) / SCAN_STRIPS, k;                                     \
  int j;                                                                     \
  T r[SCAN_STRIPS];                                                          \
  r[0] = *(const T*)pAcc;                                                    \
  for(j=1; j<SCAN_STRIPS; j++) r[j] = r[j-1] + aS[j-1];                      \
  if( p->bExcl ){                                                            \
    for(k=lo; k<lo+m; k++){                                                  \
      SCAN_UNROLL                                                            \
      for(j=0; j<SCAN_STRIPS; j++){                                          \
        T x = in[k + j*m];                                                   \
        out[k + j*m] = r[j];                                                 \
        r[j] += x;                                                           \
      }                                                                      \
    }                                                                        \
    for(k=lo+SCAN_STRIPS*m; k<hi; k++){                                      \
      T x = in[k];                                                           \
      out[k] = r[SCAN_STRIPS-1];                                             \
      r[SCAN_STRIPS-1] += x;                                                 \
    }                                                                        \
  }else{                                                                     \
    for(k=lo; k<lo+m; k++){                                                  \
      SCAN_UNROLL                                                            \
      for(j=0; j<SCAN_STRIPS; j++){                                          \
        r[j] += in[k + j*m];                                                 \
        out[k + j*m] = r[j];                                                 \
      }                                                                      \
    }                                                                        \
    for(k=lo+SCAN_STRIPS*m; k<hi; k++){                                      \
      r[SCAN_STRIPS-1] += in[k];                                             \
      out[k] = r[SCAN_STRIPS-1];                                             \
    }                                                                        \
  }                                                                          \
}                                                                            \
static const px_blocked NAME##_kernel = {                                    \
  SCAN_STRIPS * sizeof(T), NAME##_reduce, NAME##_combine, NAME##_finish      \
};                                                                           \
/* Runs the scan; returns the total.  The summaries are SCAN_STRIPS wide,  \
** so the accumulator is too (only its first element is the carry). */      \
static T NAME##_run(const void *in, void *out, size_t n, int bExcl,          \
                    int nthreads){                                           \
  scan_ctx x;                                                                \
  T aAcc[SCAN_STRIPS];                                                       \
  int j;                                                                     \
  x.in = in;                                                                 \
  x.out = out;                                                               \
  x.bExcl = bExcl;                                                           \
  for(j=0; j<SCAN_STRIPS; j++) aAcc[j] = ZERO;                               \
  px_scan_blocks(&NAME##_kernel, &x, n, nthreads, aAcc);                     \
  return aAcc[0];                                                            \
}

SCAN_DEFINE(uint64_t, scanu64, 0)
SCAN_DEFINE(double, scanf64, -0.0)

int64_t px_scan_excl_i64(const int64_t *in, int64_t *out, size_t n, int nthreads){
  return (int64_t)scanu64_run(in, out, n, 1, nthreads);
}
int64_t px_scan_incl_i64(const int64_t *in, int64_t *out, size_t n, int nthreads){
  return (int64_t)scanu64_run(in, out, n, 0, nthreads);
}

/* The empty sum is +0.0: the -0.0 identity must not leak into out[0] of an
** exclusive scan or into the total of an empty input. */
double px_scan_excl_f64(const double *in, double *out, size_t n, int nthreads){
  double r = scanf64_run(in, out, n, 1, nthreads);
  if( n==0 ) return 0.0;
  out[0] = 0.0;
  return r;
}
double px_scan_incl_f64(const double *in, double *out, size_t n, int nthreads){
  double r = scanf64_run(in, out, n, 0, nthreads);
  return n==0 ? 0.0 : r;
}

/* ---- segmented scans --------------------------------------------------- */

/* Where segments start: head flags (aHead) or offsets (aOff, nSeg). */
typedef struct seg_ctx {
  px_op op;
  const void *in;      /* NULL allowed for PX_COUNT */
  void *out;
  const uint8_t *aHead;
  const size_t *aOff;
  size_t nSeg;
} seg_ctx;

/* The smallest s with aOff[s] >= i (aOff[nSeg] = n bounds the search). */
static size_t seg_lower(const seg_ctx *p, size_t i){
  size_t lo = 0, hi = p->nSeg;
  while( lo<hi ){
    size_t mid = lo + (hi - lo)/2;
    if( p->aOff[mid] < i ) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/* The first segment head in [i, hi), or hi if there is none.  *pCur is a
** cursor into aOff for the offsets form (SIZE_MAX: not positioned yet);
** successive calls must pass increasing i. */
static size_t seg_next(const seg_ctx *p, size_t *pCur, size_t i, size_t hi){
  if( i==0 ) return 0;
  if( p->aHead ){
    while( i<hi && p->aHead[i]==0 ) i++;
    return i;
  }
  if( *pCur==SIZE_MAX ) *pCur = seg_lower(p, i);
  while( p->aOff[*pCur] < i ) (*pCur)++;
  return p->aOff[*pCur] < hi ? p->aOff[*pCur] : hi;
}

/* The last segment head in [lo, hi), or hi if there is none. */
static size_t seg_last(const seg_ctx *p, size_t lo, size_t hi){
  size_t k;
  if( p->aHead ){
    for(k=hi; k>lo; k--){
      if( k-1==0 || p->aHead[k-1] ) return k-1;
    }
    return hi;
  }
  k = seg_lower(p, hi);          /* aOff[k-1] < hi <= aOff[k] */
  if( k>0 && p->aOff[k-1]>=lo ) return p->aOff[k-1];
  return hi;
}

/* fold(a..k) for every k in [a, b): s = X(a), s = OPF(s, X(k)), and when
** out is not NULL out[k] = OPF(c, s).  X(k) is read before out[k] is
** written, so out may equal in. */
#define SEG_LOOP(OPF, X) do{                                                 \
  s = X(a);                                                                  \
  if( out ){                                                                 \
    out[a] = OPF(c, s);                                                      \
    for(k=a+1; k<b; k++){ s = OPF(s, X(k)); out[k] = OPF(c, s); }           \
  }else{                                                                     \
    for(k=a+1; k<b; k++) s = OPF(s, X(k));                                   \
  }                                                                          \
}while(0)

/* The segmented kernels of type T: ADD, MIN and MAX are the operators,
** ONE the count step and ID_* the identities. */
#define SEG_DEFINE(T, NAME, ADD, MIN, MAX, ONE, ID_SUM, ID_MIN, ID_MAX)      \
typedef struct NAME##_sum { T v; int bHead; } NAME##_sum;                    \
static T NAME##_identity(px_op op){                                          \
  switch( op ){                                                              \
    case PX_MIN: return ID_MIN;                                              \
    case PX_MAX: return ID_MAX;                                              \
    default:     return ID_SUM;                                              \
  }                                                                          \
}                                                                            \
/* Folds the run [a, b), a < b, as SEG_LOOP does; returns the fold. */       \
static T NAME##_run(const seg_ctx *p, size_t a, size_t b, T c, T *out){      \
  const T *in = p->in;                                                       \
  const T one = ONE;                                                         \
  size_t k;                                                                  \
  T s;                                                                       \
  assert( a<b );                                                             \
  switch( p->op ){                                                           \
    case PX_SUM:   SEG_LOOP(ADD, SEG_IN);  break;                            \
    case PX_MIN:   SEG_LOOP(MIN, SEG_IN);  break;                            \
    case PX_MAX:   SEG_LOOP(MAX, SEG_IN);  break;                            \
    default:       SEG_LOOP(ADD, SEG_ONE); break;                            \
  }                                                                          \
  return s;                                                                  \
}                                                                            \
static void NAME##_reduce(void *pCtx, size_t lo, size_t hi, void *pSum){     \
  const seg_ctx *p = pCtx;                                                   \
  NAME##_sum *pS = pSum;                                                     \
  size_t h = seg_last(p, lo, hi);                                            \
  pS->bHead = h<hi;                                                          \
  pS->v = NAME##_run(p, h<hi ? h : lo, hi, NAME##_identity(p->op), 0);       \
}                                                                            \
static void NAME##_combine(void *pCtx, void *pAcc, const void *pSum){        \
  const seg_ctx *p = pCtx;                                                   \
  NAME##_sum *pA = pAcc;                                                     \
  const NAME##_sum *pS = pSum;                                               \
  T a = pA->v, s = pS->v;                                                    \
  if( pS->bHead ){ pA->v = s; return; }                                      \
  switch( p->op ){                                                           \
    case PX_MIN: pA->v = MIN(a, s); break;                                   \
    case PX_MAX: pA->v = MAX(a, s); break;                                   \
    default:     pA->v = ADD(a, s); break;                                   \
  }                                                                          \
}                                                                            \
static void NAME##_finish(void *pCtx, size_t lo, size_t hi,                  \
                          const void *pAcc, const void *pSum){               \
  const seg_ctx *p = pCtx;                                                   \
  T id = NAME##_identity(p->op);                                             \
  size_t cur = SIZE_MAX;                                                     \
  size_t h = seg_next(p, &cur, lo, hi);                                      \
  if( h>lo ) NAME##_run(p, lo, h, ((const NAME##_sum*)pAcc)->v, p->out);     \
  while( h<hi ){                                                             \
    size_t h2 = seg_next(p, &cur, h+1, hi);                                  \
    NAME##_run(p, h, h2, id, p->out);                                        \
    h = h2;                                                                  \
  }                                                                          \
}                                                                            \
static const px_blocked NAME##_kernel = {                                    \
  sizeof(NAME##_sum), NAME##_reduce, NAME##_combine, NAME##_finish           \
};                                                                           \
static void NAME##_go(seg_ctx *p, size_t n, int nthreads){                   \
  NAME##_sum acc;                                                            \
  assert( p->op==PX_COUNT || p->in );                                        \
  memset(&acc, 0, sizeof(acc));                                              \
  acc.v = NAME##_identity(p->op);                                            \
  px_scan_blocks(&NAME##_kernel, p, n, nthreads, &acc);                      \
}

/* The element SEG_LOOP folds: the input, or 1 for PX_COUNT (in and one
** are locals of the run function). */
#define SEG_IN(k)  in[k]
#define SEG_ONE(k) one

/* i64: sums wrap (in unsigned arithmetic); min and max are exact. */
#define I64_ADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define I64_MIN(a, b) ((b) < (a) ? (b) : (a))
#define I64_MAX(a, b) ((b) > (a) ? (b) : (a))
/* f64: min and max skip NaNs; of equal values (-0.0, +0.0) the earlier,
** left operand is kept, which makes them associative bit for bit. */
#define F64_ADD(a, b) ((a) + (b))
#define F64_MIN(a, b) ((b) < (a) || (a) != (a) ? (b) : (a))
#define F64_MAX(a, b) ((b) > (a) || (a) != (a) ? (b) : (a))

SEG_DEFINE(int64_t, segi64, I64_ADD, I64_MIN, I64_MAX, 1,
           0, INT64_MAX, INT64_MIN)
SEG_DEFINE(double, segf64, F64_ADD, F64_MIN, F64_MAX, 1.0,
           -0.0, NAN, NAN)

static seg_ctx seg_make(px_op op, const void *in, void *out,
                        const uint8_t *aHead, const size_t *aOff, size_t nSeg){
  seg_ctx x;
  x.op = op;
  x.in = in;
  x.out = out;
  x.aHead = aHead;
  x.aOff = aOff;
  x.nSeg = nSeg;
  return x;
}

int px_segscan_i64(px_op op, const int64_t *in, const uint8_t *aHead,
                   int64_t *out, size_t n, int nthreads){
  seg_ctx x = seg_make(op, in, out, aHead, 0, 0);
  assert( aHead || n==0 );
  segi64_go(&x, n, nthreads);
  return PX_OK;
}
int px_segscan_f64(px_op op, const double *in, const uint8_t *aHead,
                   double *out, size_t n, int nthreads){
  seg_ctx x = seg_make(op, in, out, aHead, 0, 0);
  assert( aHead || n==0 );
  segf64_go(&x, n, nthreads);
  return PX_OK;
}
int px_segscan_i64_off(px_op op, const int64_t *in, const size_t *aOff,
                       size_t nSeg, int64_t *out, int nthreads){
  seg_ctx x = seg_make(op, in, out, 0, aOff, nSeg);
  assert( aOff[0]==0 );
  segi64_go(&x, aOff[nSeg], nthreads);
  return PX_OK;
}
int px_segscan_f64_off(px_op op, const double *in, const size_t *aOff,
                       size_t nSeg, double *out, int nthreads){
  seg_ctx x = seg_make(op, in, out, 0, aOff, nSeg);
  assert( aOff[0]==0 );
  segf64_go(&x, aOff[nSeg], nthreads);
  return PX_OK;
}
