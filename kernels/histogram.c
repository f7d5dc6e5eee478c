/*
** histogram.c: counts per bin (histogram.h).
**
** How it works.  Each thread counts its share of the blocks (a contiguous
** range of them) into a private histogram (no atomics, no sharing of cache lines while counting); then
** the threads add the private histograms up, each taking a range of bins.
** Counting itself spreads consecutive elements over HIST_COPIES copies of
** the counters when the bins fit in L1, so that runs of the same bin do
** not wait on each other's increments.
*/
#include "histogram.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Interleaved copies of small histograms, and the largest nBin for them:
** HIST_COPIES * HIST_SMALL 32-bit counters (16 KiB) stay in L1. */
#define HIST_COPIES 4
#define HIST_SMALL  1024

/* Elements counted into 32-bit counters before they are flushed to the
** 64-bit histogram (so a counter never exceeds 2^31). */
#define HIST_FLUSH ((size_t)1 << 31)

/* Adds the counts of aBin[lo..hi) to aCount[0..nBin-1]; returns the number
** of indices >= nBin. */
static uint64_t hist_range(const uint32_t *aBin, size_t lo, size_t hi,
                           uint32_t nBin, uint64_t *aCount){
  uint64_t nOut = 0;
  size_t k;
  if( nBin<=HIST_SMALL ){
    /* Slot nBin of each copy counts the out-of-range indices. */
    uint32_t a[HIST_COPIES][HIST_SMALL+1];
    uint32_t b;
    int j;
    while( lo<hi ){
      size_t end = hi - lo > HIST_FLUSH ? lo + HIST_FLUSH : hi;
      for(j=0; j<HIST_COPIES; j++) memset(a[j], 0, (nBin + 1) * sizeof(uint32_t));
      for(k=lo; k+HIST_COPIES<=end; k+=HIST_COPIES){
        #pragma GCC unroll 8
        for(j=0; j<HIST_COPIES; j++){
          b = aBin[k+j];
          a[j][b < nBin ? b : nBin]++;
        }
      }
      for(; k<end; k++){
        b = aBin[k];
        a[0][b < nBin ? b : nBin]++;
      }
      for(b=0; b<=nBin; b++){
        uint64_t c = 0;
        for(j=0; j<HIST_COPIES; j++) c += a[j][b];
        if( b<nBin ) aCount[b] += c; else nOut += c;
      }
      lo = end;
    }
    return nOut;
  }
  for(k=lo; k<hi; k++){
    if( aBin[k]<nBin ) aCount[aBin[k]]++; else nOut++;
  }
  return nOut;
}

uint64_t px_histogram_u32(const uint32_t *aBin, size_t n, uint32_t nBin,
                          uint64_t *aCount, int nthreads){
  size_t nb = px_nblocks(n);
  int nt = px_threads_for(nb, nthreads);
  uint64_t *aPriv;     /* nt private histograms of nBin counts, owned here */
  uint64_t nOut = 0;
  memset(aCount, 0, nBin * sizeof(uint64_t));
  aPriv = nt > 1 ? calloc((size_t)nt * nBin + 1, sizeof(uint64_t)) : 0;
  if( aPriv==0 ) return hist_range(aBin, 0, n, nBin, aCount);
  #pragma omp parallel num_threads(nt) reduction(+:nOut)
  {
    int iMe = omp_get_thread_num(), nTeam = omp_get_num_threads(), t;
    size_t b, lo, hi;
    px_team_range(n, iMe, nTeam, &lo, &hi);
    nOut += hist_range(aBin, lo, hi, nBin, aPriv + (size_t)iMe * nBin);
    #pragma omp barrier
    #pragma omp for schedule(static)
    for(b=0; b<nBin; b++){
      uint64_t c = 0;
      for(t=0; t<nTeam; t++) c += aPriv[(size_t)t*nBin + b];
      aCount[b] = c;
    }
  }
  free(aPriv);
  return nOut;
}
