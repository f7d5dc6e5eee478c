/*
** reduce.h: reductions of a whole array to one value.
**
** Blocks are reduced independently and their results combined in block
** order, so every result depends on n and the data only.
*/
#ifndef PX_REDUCE_H
#define PX_REDUCE_H

#include "par.h"

/* *pOut = op(in[0..n-1]) for op PX_SUM, PX_MIN, PX_MAX (PX_COUNT: n).
** PX_SUM is exact: it returns PX_EOVERFLOW (and leaves *pOut unset) when the
** mathematical sum does not fit in int64.  For n = 0: sum 0, min INT64_MAX,
** max INT64_MIN.  Work O(n), span O(n / nthreads + n / PX_BLOCK). */
int px_reduce_i64(px_op op, const int64_t *in, size_t n, int64_t *pOut, int nthreads);

/* *pOut = op(in[0..n-1]) for doubles.  PX_SUM uses Neumaier compensated
** summation within each block and again across block results, so it is at
** least as accurate as serial compensated summation of the block sums and
** bit-identical for every thread count.  PX_MIN and PX_MAX skip NaNs (the
** result is NaN only when every element is NaN or n = 0 gives +Inf / -Inf
** for min / max); -0.0 and +0.0 compare equal and the first one seen in
** block order wins.  Returns PX_OK. */
int px_reduce_f64(px_op op, const double *in, size_t n, double *pOut, int nthreads);

#endif /* PX_REDUCE_H */
