/*
** histogram.h: counting how many elements fall in each bin: of bin
** indices (px_histogram_u32), or of doubles and integers against edges
** (px_histogram_f64 / _i64, the fused "value -> bin -> count" kernels).
**
** Each thread fills a private histogram over whole blocks, then the private
** histograms are added up bin by bin (seed 004: per-thread local histograms
** plus a reduction).  Counts are integers, so the result is exact and the
** same for every thread count.
*/
#ifndef PX_HISTOGRAM_H
#define PX_HISTOGRAM_H

#include "par.h"

/* Histogram over bin indices: on return aCount[b] = number of i < n with
** aBin[i] == b, for b in 0..nBin-1 (aCount is overwritten, not added to).
** Indices >= nBin are counted in no bin; the function returns how many
** there were.  Private histograms cost nthreads * nBin * 8 bytes; when that
** allocation fails the histogram is built serially.  Work O(n + nthreads *
** nBin), span O(n / nthreads + nBin). */
uint64_t px_histogram_u32(const uint32_t *aBin, size_t n, uint32_t nBin,
                          uint64_t *aCount, int nthreads);

/*
** Binning doubles and integers against edges.
**
** Edges aEdge[0..nBin] (nBin >= 1) are finite and non-decreasing.  They
** split the numbers into nBin + 3 slots, the layout of aCount below:
**
**   aCount[0]          under: x < aEdge[0]
**   aCount[1 + b]      bin b: aEdge[b] <= x < aEdge[b+1]  (b < nBin-1)
**                      last bin b = nBin-1: aEdge[nBin-1] <= x <= aEdge[nBin]
**   aCount[nBin + 1]   over: x > aEdge[nBin]
**   aCount[nBin + 2]   NaN
**
** so the slot of x is the number of edges <= x, except that x equal to
** the last edge belongs to the last bin.  Equal edges make empty bins.
** Comparisons are exact: an int64 x is compared with a double edge by
** value, as SQLite compares INTEGER with REAL (not by (double)x, which
** rounds beyond 2^53).
*/
#define PX_HIST_SLOTS(nBin) ((size_t)(nBin) + 3)

/* Equal-width edges over [lo, hi], lo <= hi finite, nBin >= 1: on return
** aEdge[0] = lo, aEdge[nBin] = hi, and for 0 < b < nBin
**   aEdge[b] = min(lo + b*w, hi),  w = (hi - lo) / nBin,
** or w = hi/nBin - lo/nBin when hi - lo overflows.  Each step is one IEEE
** double operation, so SQL that writes the same expression computes the
** same edges.  The edges are non-decreasing; all equal when lo == hi. */
void px_edges_uniform(double lo, double hi, uint32_t nBin, double *aEdge);

/* Histogram of doubles: on return aCount[0..PX_HIST_SLOTS(nBin)-1] holds
** the counts per slot (above) of the elements aX[i], i < n, whose bit i in
** aSkip (bit i%8 of byte i/8) is clear; aSkip may be NULL (count all).
** aCount is overwritten.  Returns the number of elements counted.  Each
** element's bin is guessed arithmetically (edges from px_edges_uniform
** are almost always guessed right) and checked against its two edges; a
** wrong guess is corrected by binary search, so the result depends only on
** the edges, never on the guess.  Private histograms cost nthreads *
** (nBin+3) * 8 bytes (serial when that allocation fails).  Work O(n) for
** equal-width edges, O(n log nBin) at worst; span O(n / nthreads + nBin). */
uint64_t px_histogram_f64(const double *aX, const uint8_t *aSkip, size_t n,
                          const double *aEdge, uint32_t nBin, uint64_t *aCount,
                          int nthreads);

/* The same for int64 values, compared with the edges exactly. */
uint64_t px_histogram_i64(const int64_t *aX, const uint8_t *aSkip, size_t n,
                          const double *aEdge, uint32_t nBin, uint64_t *aCount,
                          int nthreads);

/* Range of the finite doubles among aX[0..n-1] not skipped by aSkip (as
** above; may be NULL): returns how many there are and, when that is not
** 0, sets *pMin and *pMax to the least and greatest of them (when -0.0
** and +0.0 tie, which one is unspecified but the same for every thread
** count).  Infinities and NaNs are left out.  Work O(n), span O(n / nthreads + n / PX_BLOCK). */
uint64_t px_range_f64(const double *aX, const uint8_t *aSkip, size_t n,
                      double *pMin, double *pMax, int nthreads);

/* The same for int64 values (all finite). */
uint64_t px_range_i64(const int64_t *aX, const uint8_t *aSkip, size_t n,
                      int64_t *pMin, int64_t *pMax, int nthreads);

/* The greatest double <= v and the least double >= v: (double)v rounds to
** nearest, which beyond 2^53 may land on either side of v. */
double px_f64_below_i64(int64_t v);
double px_f64_above_i64(int64_t v);

#endif /* PX_HISTOGRAM_H */
