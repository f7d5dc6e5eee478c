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

/*
** Stopping early (an interrupted query).  A caller that must be able to
** stop the kernels it runs installs a px_stop on its thread around them.
** A kernel takes the installed one on entry (px_stop_installed(), on the
** calling thread) and asks px_stopping() between pieces of its work
** (buckets, groups, passes), from any of its threads; once it answers 1
** the kernel skips the rest and returns PX_EINTR, its outputs meaningless
** (the caller discards them) but every index in them still in bounds.
**
** Only the installing thread calls xAsk (it may use what is not safe to
** use from other threads, such as an SQLite connection), at most about
** every PX_STOP_EVERY seconds; other threads only read the flag.
*/
#ifndef PX_STOP_EVERY
#define PX_STOP_EVERY 0.002
#endif

typedef struct px_stop {
  int (*xAsk)(void *pArg);  /* nonzero: stop */
  void *pArg;
  int bStop;                /* set once xAsk said stop (read atomically) */
  unsigned nCall;           /* the owner's calls since it last read the clock */
  double tNext;             /* when the owner asks next (seconds) */
} px_stop;

/* Install p on the calling thread (NULL: remove).  The caller sets xAsk
** and pArg, and zeroes the rest, before the first install. */
void px_stop_install(px_stop *p);

/* The px_stop installed on the calling thread, or NULL. */
px_stop *px_stop_installed(void);

/* 1 once p says stop (0 for NULL); on the installing thread this may ask. */
int px_stopping(px_stop *p);

/* The same, but the installing thread asks whenever it calls (for checks
** between phases, too few for the clock to matter). */
int px_stop_now(px_stop *p);

/* The end of a team thread's share of work that asks px_stopping() as it
** goes: every thread of the team (nTeam of them, *pnDone 0 before the
** team starts) calls this once, after its share.  The installing thread
** keeps asking until all have, so that a stop reaches the others while it
** would otherwise wait for them in the barrier without asking; the others
** return at once. */
void px_stop_wait(px_stop *p, int *pnDone, int nTeam);

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

/* Half-open range [*pLo, *pHi) of the elements of thread t's share of the
** blocks when a team of nTeam threads splits them into contiguous runs
** (blocks nb*t/nTeam up to nb*(t+1)/nTeam, nb = px_nblocks(n)). */
static inline void px_team_range(size_t n, int t, int nTeam,
                                 size_t *pLo, size_t *pHi){
  size_t nb = px_nblocks(n);
  size_t lo = nb * (size_t)t / (size_t)nTeam * PX_BLOCK;
  size_t hi = nb * (size_t)(t + 1) / (size_t)nTeam * PX_BLOCK;
  *pLo = lo < n ? lo : n;
  *pHi = hi < n ? hi : n;
}

/* Threads to use for nBlock blocks when the caller allows nthreads:
** 1 below the serial cutoff (nBlock <= PX_PAR_MIN_BLOCKS), else
** min(nthreads, nBlock), at least 1 (nthreads < 1 counts as 1). */
int px_threads_for(size_t nBlock, int nthreads);

/* The number of cores the process may use (the default thread count). */
int px_ncores(void);

/* A human-readable name for a status code ("out of memory", ...). */
const char *px_errstr(int rc);

/*
** The blocked driver: the blocking scheme above, written once.  A kernel
** describes what it does to one block and how two block results combine;
** the driver runs the blocks on threads and combines in block order.
**
**   xReduce(pCtx, lo, hi, pSum)   summarise block [lo, hi) into *pSum
**                                 (szSum bytes, at most PX_SUM_MAX).
**   xCombine(pCtx, pAcc, pSum)    *pAcc = *pAcc (+) *pSum, where *pAcc
**                                 summarises the blocks before this one.
**   xFinish(pCtx, lo, hi, pAcc, pSum)
**                                 scans only: write the output of block
**                                 [lo, hi) given *pAcc, the combined
**                                 summary of every block before it, and
**                                 *pSum, the block's own summary.
**
** The driver always calls xCombine in block order, from the value *pAcc
** held on entry (the identity), so the combined results depend on n and
** the data only.  In-place kernels are fine: a block's xReduce runs before
** its xFinish.  Neither driver allocates below the serial cutoff, and if
** the per-block scratch (nBlock * szSum bytes, twice that for scans)
** cannot be allocated they
** run serially: same result, never an error.  pAcc points at szSum
** bytes.
*/
#define PX_SUM_MAX 32

typedef struct px_blocked {
  size_t szSum;
  void (*xReduce)(void *pCtx, size_t lo, size_t hi, void *pSum);
  void (*xCombine)(void *pCtx, void *pAcc, const void *pSum);
  void (*xFinish)(void *pCtx, size_t lo, size_t hi, const void *pAcc,
                  const void *pSum);
} px_blocked;

/* On return *pAcc = *pAcc (+) sum(block 0) (+) ... (+) sum(block last). */
void px_reduce_blocks(const px_blocked *pK, void *pCtx, size_t n,
                      int nthreads, void *pAcc);

/* Calls xFinish on every block with the combined summary of the blocks
** before it, and on return *pAcc is the combined summary of all blocks.
** Blocks are processed in windows of a few per thread, reduce then finish,
** so the finish pass re-reads its input from cache, not from memory. */
void px_scan_blocks(const px_blocked *pK, void *pCtx, size_t n,
                    int nthreads, void *pAcc);

#endif /* PX_PAR_H */
