/*
** quantile.h: doubles put in order, for order statistics (medians,
** percentiles, the edges of equal-count histogram bins).
**
** Usage: px_sort_f64(a, n, nthreads); then a[k] is the k-th smallest value
** (k from 0), so the q-quantile is read off a[] directly.
*/
#ifndef PX_QUANTILE_H
#define PX_QUANTILE_H

#include "par.h"

/* Sort a[0..n-1] ascending by value, in place: on return a[i] <= a[i+1]
** for every i (NaNs: those with the sign bit set first, the others last).
** Equal values keep their bits: -0.0 comes before +0.0.  The doubles are
** turned into order-preserving 64-bit keys in place, sorted by
** px_sort_u64_perm() (radix, no permutation; its scratch is 8*n bytes)
** and turned back, so the result is the same for every thread count.
** Returns PX_OK, PX_ENOMEM / PX_ETOOBIG (n > UINT32_MAX) with a[]
** unchanged, or PX_EINTR when stopped (par.h) with a[] holding values it
** held, in no order.  Work O(n * w / 8) for w varying key bits, span O(w/8 * n /
** nthreads). */
int px_sort_f64(double *a, size_t n, int nthreads);

#endif /* PX_QUANTILE_H */
