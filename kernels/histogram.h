/*
** histogram.h: counting how many elements fall in each bin.
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

#endif /* PX_HISTOGRAM_H */
