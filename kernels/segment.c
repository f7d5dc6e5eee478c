/*
** segment.c: head flags and offsets of the segments of equal keys, and
** the segment of each position (segment.h).
**
** How px_segments_u64() works.  Each thread of a team takes a contiguous
** run of blocks (par.h's px_team_range()), flags the starts in it and
** counts them; after one barrier each thread writes its starts after
** those of the runs before it.  One barrier in all: a scan kernel's
** windows (px_compact_idx()) would meet every 2^17 positions per thread,
** and a barrier waits out any thread the system has preempted.  The
** flags and offsets are a function of the keys only, so they do not
** depend on the team.
**
** px_segment_ids_u64() finds, for each block of positions, the segment of
** its first position by binary search, then walks the offsets.
*/
#include "segment.h"
#include <assert.h>
#include <omp.h>
#include <stdlib.h>

#define SEG_ASK ((size_t)1 << 16)    /* positions between asks to stop */

/* Flags the starts of positions [lo, hi) into aHead and returns how many;
** position 0 always starts one. */
static size_t flag_range(const uint64_t *aLead, const uint64_t *const *aaWord,
                         int nWord, const uint32_t *aPerm, size_t lo, size_t hi,
                         uint8_t *aHead){
  size_t j, c = 0;
  int w;
  for(j=lo; j<hi; j++){
    int bNew = (j==0);
    if( j>0 ){
      /* A sorted leading word is read in order.  Then every other word,
      ** without branches, so that the scattered reads overlap (the
      ** previous row's words are still cached). */
      if( aLead ) bNew = aLead[j]!=aLead[j-1];
      if( aPerm ){
        uint32_t r = aPerm[j], q = aPerm[j-1];
        for(w=0; w<nWord; w++) bNew |= aaWord[w][r]!=aaWord[w][q];
      }else{
        for(w=0; w<nWord; w++) bNew |= aaWord[w][j]!=aaWord[w][j-1];
      }
    }
    aHead[j] = (uint8_t)bNew;
    c += (size_t)bNew;
  }
  return c;
}

int px_segments_u64(const uint64_t *aLead, const uint64_t *const *aaWord, int nWord,
                    const uint32_t *aPerm, size_t n, uint8_t *aHead,
                    size_t *aOff, size_t *pnSeg, int nthreads){
  int nt = px_threads_for(px_nblocks(n), nthreads), u;
  px_stop *pStop = px_stop_installed();
  uint8_t *aFlag = aHead ? aHead : malloc(n ? n : 1);
  size_t *aCount = malloc(((size_t)nt + 1) * sizeof(size_t));  /* [t]: starts in run t */
  size_t nSeg = 0;
  int nTeamUsed = 1, nDone[2] = {0, 0};
  assert( nWord>=0 );
  *pnSeg = 0;
  if( aFlag==0 || aCount==0 ){
    if( aFlag!=aHead ) free(aFlag);
    free(aCount);
    return PX_ENOMEM;
  }
  #pragma omp parallel num_threads(nt) if(nt>1)
  {
    int t = omp_get_thread_num(), nTeam = omp_get_num_threads(), v;
    size_t lo, hi, c0, c1, j, c = 0;
    px_team_range(n, t, nTeam, &lo, &hi);
    for(c0=lo; c0<hi; c0=c1){
      c1 = hi - c0 > SEG_ASK ? c0 + SEG_ASK : hi;
      if( px_stopping(pStop) ){
        hi = c0;             /* the run ends here: what follows is unflagged */
        break;
      }
      c += flag_range(aLead, aaWord, nWord, aPerm, c0, c1, aFlag);
    }
    aCount[t] = c;
    if( t==0 ) nTeamUsed = nTeam;
    px_stop_wait(pStop, &nDone[0], nTeam);
    #pragma omp barrier
    for(c=0, v=0; v<t; v++) c += aCount[v];
    /* Without branches; stops at the run's last start, so that no write
    ** lands in the next run's slots. */
    while( hi>lo && aFlag[hi-1]==0 ) hi--;
    for(c0=lo; c0<hi && !px_stopping(pStop); c0=c1){
      c1 = hi - c0 > SEG_ASK ? c0 + SEG_ASK : hi;
      for(j=c0; j<c1; j++){
        aOff[c] = j;
        c += aFlag[j];
      }
    }
    px_stop_wait(pStop, &nDone[1], nTeam);
  }
  for(u=0; u<nTeamUsed; u++) nSeg += aCount[u];
  aOff[nSeg] = n;
  *pnSeg = nSeg;
  if( aFlag!=aHead ) free(aFlag);
  free(aCount);
  return px_stopping(pStop) ? PX_EINTR : PX_OK;
}

void px_segment_ids_u64(const size_t *aOff, size_t nSeg, uint64_t *aId, int nthreads){
  size_t n = aOff[nSeg], nb = px_nblocks(n), b;
  int nt = px_threads_for(nb, nthreads);
  #pragma omp parallel for schedule(static) num_threads(nt) if(nt>1)
  for(b=0; b<nb; b++){
    size_t lo, hi, i, s0 = 0, s1 = nSeg;
    px_block_range(n, b, &lo, &hi);
    /* s0: the first segment that ends after lo, the one lo is in. */
    while( s0<s1 ){
      size_t mid = s0 + (s1 - s0) / 2;
      if( aOff[mid+1]<=lo ) s0 = mid + 1; else s1 = mid;
    }
    for(i=lo; i<hi; i++){
      while( aOff[s0+1]<=i ) s0++;
      aId[i] = s0;
    }
  }
}
