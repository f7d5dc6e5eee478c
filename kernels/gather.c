/*
** gather.c: gather, scatter and compaction (gather.h).
**
** How it works.  Gather and scatter are independent per element, so the
** blocks are simply shared out among the threads.  Compaction is a scan:
** count the flags of each block, an exclusive scan of the counts gives each
** block its first output slot, then each block writes its survivors there
** (par.h's px_scan_blocks() does the counting, scanning and scheduling).
*/
#include "gather.h"
#include <assert.h>
#include <omp.h>

typedef struct gather_ctx {
  const void *src;
  const uint32_t *idx;
  void *dst;
} gather_ctx;

/* Runs xBlock on every block of an n-element input, on up to nthreads,
** each thread a run of blocks, asking between blocks whether to stop
** (par.h: then the output is partly written). */
static void map_blocks(size_t n, int nthreads, void *pCtx,
                       void (*xBlock)(const gather_ctx*, size_t, size_t)){
  size_t nb = px_nblocks(n);
  int nt = px_threads_for(nb, nthreads), nDone = 0;
  px_stop *pStop = px_stop_installed();
  #pragma omp parallel num_threads(nt) if(nt>1)
  {
    int nTeam = omp_get_num_threads();
    size_t a, b, lo;
    px_team_range(n, omp_get_thread_num(), nTeam, &a, &b);
    for(lo=a; lo<b && !px_stopping(pStop); lo+=PX_BLOCK){
      xBlock(pCtx, lo, b - lo > PX_BLOCK ? lo + PX_BLOCK : b);
    }
    px_stop_wait(pStop, &nDone, nTeam);
  }
}

/* The gather and scatter of element type T, named px_gather_SUF and
** px_scatter_SUF. */
#define GATHER_DEFINE(T, SUF)                                                \
static void gather_##SUF(const gather_ctx *p, size_t lo, size_t hi){        \
  const T *src = p->src;                                                     \
  T *dst = p->dst;                                                           \
  size_t k;                                                                  \
  for(k=lo; k<hi; k++) dst[k] = src[p->idx[k]];                              \
}                                                                            \
static void scatter_##SUF(const gather_ctx *p, size_t lo, size_t hi){       \
  const T *src = p->src;                                                     \
  T *dst = p->dst;                                                           \
  size_t k;                                                                  \
  for(k=lo; k<hi; k++) dst[p->idx[k]] = src[k];                              \
}                                                                            \
void px_gather_##SUF(const T *src, const uint32_t *idx, T *dst,             \
                     size_t n, int nthreads){                                \
  gather_ctx x = { src, idx, dst };                                          \
  map_blocks(n, nthreads, &x, gather_##SUF);                                 \
}                                                                            \
void px_scatter_##SUF(const T *src, const uint32_t *idx, T *dst,            \
                      size_t n, int nthreads){                               \
  gather_ctx x = { src, idx, dst };                                          \
  map_blocks(n, nthreads, &x, scatter_##SUF);                                \
}

GATHER_DEFINE(uint64_t, u64)
GATHER_DEFINE(uint32_t, u32)

/* ---- compaction --------------------------------------------------------- */

typedef struct compact_ctx {
  const uint8_t *aFlag;
  const uint64_t *in;  /* values to keep, or NULL to keep indices */
  uint64_t *out;       /* when in != NULL */
  uint32_t *aIdx;      /* when in == NULL */
} compact_ctx;

static void compact_count(void *pCtx, size_t lo, size_t hi, void *pSum){
  const uint8_t *aFlag = ((const compact_ctx*)pCtx)->aFlag;
  size_t k, c = 0;
  for(k=lo; k<hi; k++) c += aFlag[k]!=0;
  *(size_t*)pSum = c;
}

static void compact_add(void *pCtx, void *pAcc, const void *pSum){
  *(size_t*)pAcc += *(const size_t*)pSum;
}

/* Without branches: every element is written at the next free slot, which
** only advances past kept ones.  The loop stops at the block's last kept
** element, so no write lands beyond the block's own output (where another
** thread may be writing). */
static void compact_write(void *pCtx, size_t lo, size_t hi,
                          const void *pAcc, const void *pSum){
  const compact_ctx *p = pCtx;
  const uint8_t *aFlag = p->aFlag;
  size_t j = *(const size_t*)pAcc, k;
  while( hi>lo && aFlag[hi-1]==0 ) hi--;
  if( p->in ){
    for(k=lo; k<hi; k++){ p->out[j] = p->in[k]; j += aFlag[k]!=0; }
  }else{
    for(k=lo; k<hi; k++){ p->aIdx[j] = (uint32_t)k; j += aFlag[k]!=0; }
  }
}

static const px_blocked compact_kernel = {
  sizeof(size_t), compact_count, compact_add, compact_write
};

static size_t compact_run(compact_ctx *p, size_t n, int nthreads){
  size_t nOut = 0;
  px_scan_blocks(&compact_kernel, p, n, nthreads, &nOut);
  return nOut;
}

size_t px_compact_idx(const uint8_t *aFlag, size_t n, uint32_t *aIdx, int nthreads){
  compact_ctx x = { aFlag, 0, 0, aIdx };
  assert( n-1 <= (size_t)UINT32_MAX || n==0 );
  return compact_run(&x, n, nthreads);
}

size_t px_compact_u64(const uint64_t *in, const uint8_t *aFlag, size_t n,
                      uint64_t *out, int nthreads){
  compact_ctx x = { aFlag, in, out, 0 };
  return compact_run(&x, n, nthreads);
}
