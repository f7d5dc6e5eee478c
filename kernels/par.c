/*
** par.c: thread counts, status names, and the blocked driver of par.h.
**
** How the drivers work.  px_reduce_blocks() reduces every block into its own
** slot of a scratch array (blocks handed out with a static schedule), then
** folds the slots in block order on one thread.  px_scan_blocks() does the
** same window by window: the threads reduce the blocks of a window, one
** thread folds their summaries into the running carry (recording the carry
** into each block), and the threads finish the window's blocks.  A window is PX_WINDOW_BLOCKS blocks per thread, small
** enough that a thread's blocks are still in its cache when it finishes
** them; the static schedule gives a thread the same blocks in both loops.
** The window only orders the work, so results do not depend on it.
*/
#include "par.h"
#include <assert.h>
#include <omp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Blocks per thread in one window of px_scan_blocks(): 2^17 elements, 1
** MiB of doubles in and 1 MiB out, well inside L2 (16 blocks of 8192).  It
** is a number of elements, not of blocks, so that tiny-block test builds do
** not synchronise the threads every few elements. */
#ifndef PX_WINDOW_BLOCKS
#define PX_WINDOW_BLOCKS (PX_BLOCK < ((size_t)1 << 17) ? ((size_t)1 << 17) / PX_BLOCK : 1)
#endif

int px_threads_for(size_t nBlock, int nthreads){
  if( nBlock <= PX_PAR_MIN_BLOCKS || nthreads <= 1 ) return 1;
  if( (size_t)nthreads > nBlock ) return (int)nBlock;
  return nthreads;
}

int px_ncores(void){
  int n = omp_get_num_procs();
  return n > 0 ? n : 1;
}

const char *px_errstr(int rc){
  switch( rc ){
    case PX_OK:        return "not an error";
    case PX_ENOMEM:    return "out of memory";
    case PX_EINTR:     return "interrupted";
    case PX_EOVERFLOW: return "integer overflow";
    case PX_ETOOBIG:   return "input too large";
  }
  return "unknown error";
}

/* ---- stopping early ------------------------------------------------------ */

static _Thread_local px_stop *tlStop = 0;

void px_stop_install(px_stop *p){
  tlStop = p;
}

px_stop *px_stop_installed(void){
  return tlStop;
}

int px_stopping(px_stop *p){
  if( p==0 ) return 0;
  if( __atomic_load_n(&p->bStop, __ATOMIC_RELAXED) ) return 1;
  /* The clock costs more than a flag: the owner reads it every 16th call
  ** (a coarse clock where there is one: a few ns, ticks of a few ms). */
  if( tlStop==p && (p->nCall++ & 15)==0 ){
#ifdef CLOCK_MONOTONIC_COARSE
    struct timespec ts;
    double t;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    t = (double)ts.tv_sec + 1e-9*(double)ts.tv_nsec;
#else
    double t = omp_get_wtime();
#endif
    if( t>=p->tNext ){
      p->tNext = t + PX_STOP_EVERY;
      if( p->xAsk(p->pArg) ){
        __atomic_store_n(&p->bStop, 1, __ATOMIC_RELAXED);
        return 1;
      }
    }
  }
  return 0;
}

int px_stop_now(px_stop *p){
  if( p==0 ) return 0;
  if( __atomic_load_n(&p->bStop, __ATOMIC_RELAXED) ) return 1;
  if( tlStop==p && p->xAsk(p->pArg) ){
    __atomic_store_n(&p->bStop, 1, __ATOMIC_RELAXED);
    return 1;
  }
  return 0;
}

void px_stop_wait(px_stop *p, int *pnDone, int nTeam){
  int n = __atomic_add_fetch(pnDone, 1, __ATOMIC_ACQ_REL), nSpin = 0;
  if( p==0 || tlStop!=p ) return;
  while( n<nTeam && !px_stopping(p) ){
    /* Yield for a while (about 1 ms: the others are about done), then
    ** sleep: with more threads than cores, spinning takes a core from
    ** the threads it waits for. */
    if( ++nSpin<1000 ){
      sched_yield();
    }else{
      struct timespec ts = { 0, 50000 };
      nanosleep(&ts, 0);
    }
    n = __atomic_load_n(pnDone, __ATOMIC_ACQUIRE);
  }
}

/* ---- the drivers ---------------------------------------------------------- */

/* The serial path of both drivers: one block at a time, no scratch. */
static void blocks_serial(const px_blocked *pK, void *pCtx, size_t n,
                          int bFinish, void *pAcc){
  _Alignas(16) unsigned char aSum[PX_SUM_MAX];
  size_t nb = px_nblocks(n), b, lo, hi;
  for(b=0; b<nb; b++){
    px_block_range(n, b, &lo, &hi);
    pK->xReduce(pCtx, lo, hi, aSum);
    if( bFinish ) pK->xFinish(pCtx, lo, hi, pAcc, aSum);
    pK->xCombine(pCtx, pAcc, aSum);
  }
}

void px_reduce_blocks(const px_blocked *pK, void *pCtx, size_t n,
                      int nthreads, void *pAcc){
  size_t nb = px_nblocks(n), sz = pK->szSum, b;
  int nt = px_threads_for(nb, nthreads);
  unsigned char *aSum;               /* one summary per block, owned here */
  assert( sz <= PX_SUM_MAX );
  aSum = nt > 1 ? malloc(nb * sz) : 0;
  if( aSum==0 ){
    blocks_serial(pK, pCtx, n, 0, pAcc);
    return;
  }
  #pragma omp parallel for schedule(static) num_threads(nt)
  for(b=0; b<nb; b++){
    size_t lo, hi;
    px_block_range(n, b, &lo, &hi);
    pK->xReduce(pCtx, lo, hi, aSum + b*sz);
  }
  for(b=0; b<nb; b++) pK->xCombine(pCtx, pAcc, aSum + b*sz);
  free(aSum);
}

void px_scan_blocks(const px_blocked *pK, void *pCtx, size_t n,
                    int nthreads, void *pAcc){
  size_t nb = px_nblocks(n), sz = pK->szSum;
  int nt = px_threads_for(nb, nthreads);
  unsigned char *aSum;   /* per block: summary, owned here */
  unsigned char *aCarry; /* per block: combined summary of the blocks before */
  assert( sz <= PX_SUM_MAX );
  aSum = nt > 1 ? malloc(2 * nb * sz) : 0;
  if( aSum==0 ){
    blocks_serial(pK, pCtx, n, 1, pAcc);
    return;
  }
  aCarry = aSum + nb*sz;
  #pragma omp parallel num_threads(nt)
  {
    size_t nWin = (size_t)omp_get_num_threads() * PX_WINDOW_BLOCKS;
    size_t w0, w1, b;
    for(w0=0; w0<nb; w0=w1){
      w1 = nb - w0 > nWin ? w0 + nWin : nb;
      #pragma omp for schedule(static)
      for(b=w0; b<w1; b++){
        size_t lo, hi;
        px_block_range(n, b, &lo, &hi);
        pK->xReduce(pCtx, lo, hi, aSum + b*sz);
      }
      #pragma omp single
      for(b=w0; b<w1; b++){
        memcpy(aCarry + b*sz, pAcc, sz);
        pK->xCombine(pCtx, pAcc, aSum + b*sz);
      }
      #pragma omp for schedule(static) nowait
      for(b=w0; b<w1; b++){
        size_t lo, hi;
        px_block_range(n, b, &lo, &hi);
        pK->xFinish(pCtx, lo, hi, aCarry + b*sz, aSum + b*sz);
      }
    }
  }
  free(aSum);
}
