/*
** reduce.c: reductions of a whole array (reduce.h), on par.h's driver.
**
** How it works.  Each block is reduced on its own and the block results
** are folded in block order by px_reduce_blocks().
**
**   i64 sum: every block sums into __int128 accumulators, which cannot
**   overflow (a block has far fewer than 2^64 elements), and so does the
**   fold; the total is checked against the int64 range once, at the end.
**
**   f64 sum: Neumaier's compensated summation (a running sum s and a
**   running compensation c that collects the low-order bits lost by each
**   s + x).  Inside a block, NLANE independent (s, c) lanes take the
**   elements in turn, which hides the latency of the add; the lanes are
**   then folded into the block's (s, c) by the same compensated step, and
**   the blocks likewise.  The result is s + c.  An infinite or NaN s is
**   returned as is (the compensation of an overflow is meaningless).
**
**   min/max: the identity of the fold is INT64_MAX / INT64_MIN for i64 and
**   NaN for f64 (f64 min and max skip NaNs and keep the earlier of equal
**   values, so -0.0 vs +0.0 is decided by position, not by thread).
*/
#include "reduce.h"
#include <math.h>
#include <string.h>

#define NLANE 4

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
    __int128 s[NLANE] = {0};
    int j;
    for(k=lo; k+NLANE<=hi; k+=NLANE){
      for(j=0; j<NLANE; j++) s[j] += in[k+j];
    }
    for(; k<hi; k++) s[0] += in[k];
    for(j=1; j<NLANE; j++) s[0] += s[j];
    pS->s = s[0];
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

/* One Neumaier step: s + c += x.  The branch picks the operand whose low
** bits s + x lost; it is a select, so both sides are computed. */
static inline void neumaier(double *pS, double *pC, double x){
  double s = *pS, t = s + x;
  double big = fabs(s) >= fabs(x) ? s : x;
  double small = fabs(s) >= fabs(x) ? x : s;
  *pC += (big - t) + small;
  *pS = t;
}

/* First-wins min / max that skip NaN (m is NaN until a number is seen). */
static double f64_min(double m, double x){ return x < m || m != m ? x : m; }
static double f64_max(double m, double x){ return x > m || m != m ? x : m; }

static void f64_reduce(void *pCtx, size_t lo, size_t hi, void *pSum){
  const reduce_ctx *p = pCtx;
  const double *in = p->in;
  f64_sum *pS = pSum;
  size_t k = lo;
  if( p->op==PX_SUM ){
    double s[NLANE], c[NLANE];
    int j;
    for(j=0; j<NLANE; j++){ s[j] = -0.0; c[j] = 0.0; }
    for(; k+NLANE<=hi; k+=NLANE){
      for(j=0; j<NLANE; j++) neumaier(&s[j], &c[j], in[k+j]);
    }
    for(; k<hi; k++) neumaier(&s[0], &c[0], in[k]);
    for(j=1; j<NLANE; j++){
      neumaier(&s[0], &c[0], s[j]);
      c[0] += c[j];
    }
    pS->s = s[0];
    pS->c = c[0];
    return;
  }
  /* Min / max: skip the leading NaNs, then NaNs fail every comparison. */
  pS->c = 0.0;
  while( k<hi && in[k]!=in[k] ) k++;
  if( k==hi ){
    pS->s = NAN;
  }else{
    double m = in[k];
    if( p->op==PX_MIN ){
      for(; k<hi; k++) if( in[k] < m ) m = in[k];
    }else{
      for(; k<hi; k++) if( in[k] > m ) m = in[k];
    }
    pS->s = m;
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
