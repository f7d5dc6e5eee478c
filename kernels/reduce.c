/*
** reduce.c: reductions of a whole array (reduce.h), on par.h's driver.
**
** How it works.  Each block is reduced on its own and the block results
** are folded in block order by px_reduce_blocks().
**
**   i64 sum: every block sums the high and the low 32-bit halves of its
**   elements separately in 64 bits (exact: a block is far shorter than
**   2^31 elements) and joins them into an __int128; the blocks are folded
**   in __int128, which cannot overflow (n < 2^64), and the total is checked
**   against the int64 range once, at the end.
**
**   f64 sum: Neumaier's compensated summation (a running sum s and a
**   running compensation c that collects the low-order bits lost by each
**   s + x).  Inside a block, 8 independent (s, c) lanes take the elements
**   in turn, which hides the latency of the add and lets the compiler use
**   vector instructions; the lanes are then folded into the block's (s, c)
**   by the same compensated step, and the blocks likewise.  The result is
**   s + c.  An infinite or NaN s is returned as is (the compensation of an
**   overflow is meaningless).
**
**   min/max: the identity of the fold is INT64_MAX / INT64_MIN for i64 and
**   NaN for f64 (f64 min and max skip NaNs and keep the earlier of equal
**   values, so -0.0 vs +0.0 is decided by position, not by thread).
*/
#include "reduce.h"
#include <math.h>
#include <string.h>

#define NLANE 8

typedef struct reduce_ctx {
  px_op op;
  const void *in;
} reduce_ctx;

/* ---- i64 ---------------------------------------------------------------- */

typedef union i64_sum {
  __int128 s;          /* PX_SUM */
  int64_t v;           /* PX_MIN, PX_MAX */
} i64_sum;

static void i64_reduce(void *pCtx, size_t lo, size_t hi, void *pSum){
  const reduce_ctx *p = pCtx;
  const int64_t *in = p->in;
  i64_sum *pS = pSum;
  size_t k;
  if( p->op==PX_SUM ){
    /* x = hi * 2^32 + lo with lo = the low 32 bits, unsigned: the two
    ** halves sum without overflow in 64 bits (a block has far fewer than
    ** 2^31 elements), in a loop the compiler vectorises. */
    uint64_t sLo = 0;
    int64_t sHi = 0;
    for(k=lo; k<hi; k++){
      sLo += (uint32_t)in[k];
      sHi += in[k] >> 32;          /* arithmetic shift (gcc, clang) */
    }
    pS->s = (__int128)sHi * ((__int128)1 << 32) + sLo;
  }else if( p->op==PX_MIN ){
    int64_t m = INT64_MAX;
    for(k=lo; k<hi; k++) m = in[k] < m ? in[k] : m;
    pS->v = m;
  }else{
    int64_t m = INT64_MIN;
    for(k=lo; k<hi; k++) m = in[k] > m ? in[k] : m;
    pS->v = m;
  }
}

static void i64_combine(void *pCtx, void *pAcc, const void *pSum){
  const reduce_ctx *p = pCtx;
  i64_sum *pA = pAcc;
  const i64_sum *pS = pSum;
  switch( p->op ){
    case PX_SUM: pA->s += pS->s; break;
    case PX_MIN: if( pS->v < pA->v ) pA->v = pS->v; break;
    default:     if( pS->v > pA->v ) pA->v = pS->v; break;
  }
}

static const px_blocked i64_kernel = {
  sizeof(i64_sum), i64_reduce, i64_combine, 0
};

int px_reduce_i64(px_op op, const int64_t *in, size_t n, int64_t *pOut, int nthreads){
  reduce_ctx x;
  i64_sum acc;
  if( op==PX_COUNT ){
    if( (uint64_t)n > (uint64_t)INT64_MAX ) return PX_EOVERFLOW;
    *pOut = (int64_t)n;
    return PX_OK;
  }
  x.op = op;
  x.in = in;
  memset(&acc, 0, sizeof(acc));
  if( op==PX_MIN ) acc.v = INT64_MAX;
  if( op==PX_MAX ) acc.v = INT64_MIN;
  px_reduce_blocks(&i64_kernel, &x, n, nthreads, &acc);
  if( op!=PX_SUM ){
    *pOut = acc.v;
  }else if( acc.s < INT64_MIN || acc.s > INT64_MAX ){
    return PX_EOVERFLOW;
  }else{
    *pOut = (int64_t)acc.s;
  }
  return PX_OK;
}

/* ---- f64 ---------------------------------------------------------------- */

typedef struct f64_sum {
  double s;            /* running sum; PX_MIN / PX_MAX: the result */
  double c;            /* PX_SUM: compensation */
} f64_sum;

/* Pairs of doubles (GCC vector extension; plain SSE2 on x86-64).  Every
** operation on them is the IEEE operation on each half, so the results do
** not depend on how the compiler maps them. */
typedef double v2d __attribute__((vector_size(16)));

/* The rounding error of t = s + x, exactly (Knuth's TwoSum).  Neumaier's
** step computes the same error with a branch on |s| >= |x|; this form has
** no branch, so random signs cost no mispredictions, and it vectorises. */
#define TWO_SUM_ERR(s, x, t) (((s) - ((t) - ((t) - (s)))) + ((x) - ((t) - (s))))

/* One Neumaier step: s + c += x. */
static inline void neumaier(double *pS, double *pC, double x){
  double s = *pS, t = s + x;
  *pC += TWO_SUM_ERR(s, x, t);
  *pS = t;
}

/* One step of NVEC independent pairs of lanes, on in[k .. k+2*NVEC-1]. */
#define NVEC 4
static inline void neumaier_v(v2d *aS, v2d *aC, const double *in){
  int j;
  #pragma GCC unroll 8
  for(j=0; j<NVEC; j++){
    v2d x, t;
    memcpy(&x, in + 2*j, sizeof(x));
    t = aS[j] + x;
    aC[j] += TWO_SUM_ERR(aS[j], x, t);
    aS[j] = t;
  }
}

/* Compensated sum of in[lo..hi-1] into *pS: 2*NVEC lanes take the
** elements in turn (lane L gets k = lo + L mod 2*NVEC), then the lanes and
** the leftover elements are folded in order by the scalar step. */
static void f64_sum_block(const double *in, size_t lo, size_t hi, f64_sum *pS){
  v2d aS[NVEC], aC[NVEC];
  double s = -0.0, c = 0.0;
  size_t k;
  int j;
  for(j=0; j<NVEC; j++){
    aS[j] = (v2d){ -0.0, -0.0 };
    aC[j] = (v2d){ 0.0, 0.0 };
  }
  for(k=lo; k+2*NVEC<=hi; k+=2*NVEC) neumaier_v(aS, aC, in + k);
  for(j=0; j<NVEC; j++){
    neumaier(&s, &c, aS[j][0]);
    neumaier(&s, &c, aS[j][1]);
    c += aC[j][0] + aC[j][1];
  }
  for(; k<hi; k++) neumaier(&s, &c, in[k]);
  pS->s = s;
  pS->c = c;
}

/* First-wins min / max that skip NaN (m is NaN until a number is seen). */
static double f64_min(double m, double x){ return x < m || m != m ? x : m; }
static double f64_max(double m, double x){ return x > m || m != m ? x : m; }

/* Min or max of in[lo..hi-1] the plain way: the first non-NaN, then every
** strictly smaller (larger) element; NaN if all are NaN. */
static double f64_minmax_serial(const double *in, size_t lo, size_t hi, int bMax){
  double m = NAN;
  size_t k;
  for(k=lo; k<hi; k++) m = bMax ? f64_max(m, in[k]) : f64_min(m, in[k]);
  return m;
}

/* The same, fast: NLANE independent lanes find the value (min(x) is
** -max(-x), and negation is exact); only when it is a zero (whose sign
** depends on which zero came first) or an infinity (which may mean "no
** number at all") is the block scanned the plain way.  Any other value has
** one representation, so which lane found it does not matter. */
static double f64_minmax_block(const double *in, size_t lo, size_t hi, int bMax){
  const double sgn = bMax ? 1.0 : -1.0;
  double m[NLANE], r;
  size_t k;
  int j;
  for(j=0; j<NLANE; j++) m[j] = -INFINITY;
  for(k=lo; k+NLANE<=hi; k+=NLANE){
    #pragma GCC unroll 8
    for(j=0; j<NLANE; j++){
      double x = sgn * in[k+j];
      m[j] = x > m[j] ? x : m[j];    /* NaN x: false, skipped */
    }
  }
  for(; k<hi; k++){
    double x = sgn * in[k];
    m[0] = x > m[0] ? x : m[0];
  }
  r = m[0];
  for(j=1; j<NLANE; j++) r = m[j] > r ? m[j] : r;
  r *= sgn;
  if( r==0.0 || isinf(r) ) r = f64_minmax_serial(in, lo, hi, bMax);
  return r;
}

static void f64_reduce(void *pCtx, size_t lo, size_t hi, void *pSum){
  const reduce_ctx *p = pCtx;
  f64_sum *pS = pSum;
  if( p->op==PX_SUM ){
    f64_sum_block(p->in, lo, hi, pS);
  }else{
    pS->s = f64_minmax_block(p->in, lo, hi, p->op==PX_MAX);
    pS->c = 0.0;
  }
}

static void f64_combine(void *pCtx, void *pAcc, const void *pSum){
  const reduce_ctx *p = pCtx;
  f64_sum *pA = pAcc;
  const f64_sum *pS = pSum;
  switch( p->op ){
    case PX_SUM:
      neumaier(&pA->s, &pA->c, pS->s);
      pA->c += pS->c;
      break;
    case PX_MIN: pA->s = f64_min(pA->s, pS->s); break;
    default:     pA->s = f64_max(pA->s, pS->s); break;
  }
}

static const px_blocked f64_kernel = {
  sizeof(f64_sum), f64_reduce, f64_combine, 0
};

int px_reduce_f64(px_op op, const double *in, size_t n, double *pOut, int nthreads){
  reduce_ctx x;
  f64_sum acc;
  if( op==PX_COUNT ){
    *pOut = (double)n;
    return PX_OK;
  }
  x.op = op;
  x.in = in;
  acc.s = op==PX_SUM ? -0.0 : NAN;
  acc.c = 0.0;
  px_reduce_blocks(&f64_kernel, &x, n, nthreads, &acc);
  if( n==0 ){
    *pOut = op==PX_SUM ? 0.0 : op==PX_MIN ? INFINITY : -INFINITY;
  }else if( op==PX_SUM ){
    *pOut = isfinite(acc.s) ? acc.s + acc.c : acc.s;
  }else{
    *pOut = acc.s;
  }
  return PX_OK;
}
