/*
** gather.h: gather, scatter and compaction (filter through a scan).
*/
#ifndef PX_GATHER_H
#define PX_GATHER_H

#include "par.h"

/* Gather: on return dst[i] = src[idx[i]] for i in 0..n-1.  Every idx[i]
** must be a valid index into src.  dst must not overlap src.  Gather and
** scatter stop early when the caller's px_stop (par.h) says so, leaving
** dst partly written: the caller then discards it. */
void px_gather_u64(const uint64_t *src, const uint32_t *idx, uint64_t *dst,
                   size_t n, int nthreads);
void px_gather_u32(const uint32_t *src, const uint32_t *idx, uint32_t *dst,
                   size_t n, int nthreads);

/* Scatter: on return dst[idx[i]] = src[i] for i in 0..n-1.  The idx[i] must
** be distinct (a permutation or a part of one), so the result does not
** depend on the order of the writes.  dst must not overlap src. */
void px_scatter_u64(const uint64_t *src, const uint32_t *idx, uint64_t *dst,
                    size_t n, int nthreads);
void px_scatter_u32(const uint32_t *src, const uint32_t *idx, uint32_t *dst,
                    size_t n, int nthreads);

/* Compaction: writes, in increasing order, every index i < n with
** aFlag[i] != 0 to aIdx (which must have room for that many, n at most)
** and returns how many there are.  Indices are 32-bit, so n is at most
** 2^32.  A count per block, an exclusive scan of the counts, then each
** block writes at its offset.  Work O(n), span O(n / nthreads + n /
** PX_BLOCK). */
size_t px_compact_idx(const uint8_t *aFlag, size_t n, uint32_t *aIdx, int nthreads);

/* Compaction of values: writes in[i] for every i with aFlag[i] != 0 to out,
** in order, and returns how many.  out must not overlap in. */
size_t px_compact_u64(const uint64_t *in, const uint8_t *aFlag, size_t n,
                      uint64_t *out, int nthreads);

#endif /* PX_GATHER_H */
