/*
** par.h: the pieces every kernel shares: status codes, the thread count
** convention, and the one blocking scheme all kernels use.
**
** Blocking scheme (the reason results never depend on the thread count):
**
**   1. The input of n elements is cut into fixed blocks of PX_BLOCK elements
**      (the last one shorter).  Block boundaries depend on n only.
**   2. A serial kernel runs over each block; blocks are handed to threads
**      with a static OpenMP schedule, but nothing a block computes depends on
**      which thread ran it.
**   3. The per-block results are combined in block order (reduce, or scan of
**      block sums), then each block is finished if the kernel needs it.
**
** So floating-point results are bit-identical for 1, 2, 3 or any number of
** threads: only the order of independent block computations changes.  With
** at most PX_PAR_MIN_BLOCKS blocks, no threads are started at all (the
** serial cutoff); this changes speed only, never results.
**
** Kernels never include sqlite3.h.  They take arrays, a length, a thread
** count and caller-owned outputs, return an int status (PX_OK, ...), never
** print and never abort; preconditions are checked with assert().
*/
#ifndef PX_PAR_H
#define PX_PAR_H

#include <stddef.h>
#include <stdint.h>

/* Status codes returned by kernels. */
#define PX_OK        0  /* success */
#define PX_ENOMEM    1  /* a scratch allocation failed */
#define PX_EINTR     2  /* the caller asked the operator to stop */
#define PX_EOVERFLOW 3  /* an exact integer result does not fit in int64 */
#define PX_ETOOBIG   4  /* input longer than the kernel supports */

/* Elements per block.  Test builds define a tiny block (-DPX_BLOCK=8) so
** that small inputs exercise the multi-block paths. */
#ifndef PX_BLOCK
#define PX_BLOCK 8192
#endif

/* Start threads only when there are more blocks than this. */
#ifndef PX_PAR_MIN_BLOCKS
#define PX_PAR_MIN_BLOCKS 4
#endif

/* Operators for the reduce and segmented-scan kernels. */
typedef enum px_op {
  PX_SUM = 0,
  PX_MIN = 1,
  PX_MAX = 2,
  PX_COUNT = 3
} px_op;

/* Number of blocks covering n elements. */
static inline size_t px_nblocks(size_t n){
  return (n + PX_BLOCK - 1) / PX_BLOCK;
}

/* Half-open range [*pLo, *pHi) of block b of an n-element input. */
static inline void px_block_range(size_t n, size_t b, size_t *pLo, size_t *pHi){
  size_t lo = b * (size_t)PX_BLOCK;
  size_t hi = lo + PX_BLOCK;
  *pLo = lo;
  *pHi = hi < n ? hi : n;
}

/* Threads to use for nBlock blocks when the caller allows nthreads:
** 1 below the serial cutoff, else min(nthreads, nBlock), at least 1. */
int px_threads_for(size_t nBlock, int nthreads);

/* The number of cores the process may use (the default thread count). */
int px_ncores(void);

/* A human-readable name for a status code ("out of memory", ...). */
const char *px_errstr(int rc);

#endif /* PX_PAR_H */
