/*
** keys.c: packing multi-word sort keys into fewer words (keys.h).
**
** How it works.  Pass 1: each thread of a team takes a contiguous run of
** blocks (px_team_range()) and keeps the min and max of every word over
** it; the runs' results are folded on one thread (min and max are exact,
** so the fold order does not matter).  Then the layout: field i gets w_i
** bits and, in order, the next output word that has w_i bits left, at the
** shift just below the bits already taken.  Pass 2: each thread packs its
** run row by row, building one output word at a time from its fields.
**
** Why the order is kept: v -> v - min_i is increasing on [min_i, max_i]
** and fits in w_i bits, and the output words, read most significant word
** and bit first, are the fields' bits concatenated in order (with zero
** padding in the same places for every row).  So comparing packed keys
** word by word compares the fields one after another, as comparing the
** original keys does.
**
** In place is safe: an output word holds only fields of inputs at or after
** its own index, and row r's inputs are all read before its output words
** are written (each is read for the first output word it belongs to, and
** that word comes at or before the input's index).
*/
#include "keys.h"
#include <assert.h>
#include <omp.h>
#include <stdlib.h>

#define KEYS_ASK ((size_t)1 << 16)   /* rows between asks to stop */

int px_keys_pack(const uint64_t *const *aaIn, int nIn, size_t n,
                 uint64_t **aaOut, int *pnOut, int nthreads){
  px_stop *pStop = px_stop_installed();
  int nt = px_threads_for(px_nblocks(n), nthreads);
  uint64_t *aMin, *aMax;  /* [t*nIn + i]: word i's min, max over thread t's run */
  int *aField;            /* the fields that take bits, in order (input words) */
  int *aShift;            /* [f]: the shift of field aField[f] */
  int *aEnd;              /* [j]: end of output word j's fields in aField */
  int nField = 0, nOut = 0, i, nDone[2] = {0, 0}, used = 64;
  assert( nIn>=0 );
  *pnOut = 0;
  if( nIn==0 || n==0 ) return PX_OK;
  aMin = malloc((size_t)nIn * (2 * (size_t)nt * sizeof(uint64_t) + 3 * sizeof(int)));
  if( aMin==0 ) return PX_ENOMEM;
  aMax = aMin + (size_t)nt * nIn;
  aField = (int*)(aMax + (size_t)nt * nIn);
  aShift = aField + nIn;
  aEnd = aShift + nIn;
  /* Every thread's slots start empty: a team smaller than nt leaves some. */
  for(i=0; i<nt*nIn; i++){   /* nt*nIn fits: it is a few cores times nIn */
    aMin[i] = ~(uint64_t)0;
    aMax[i] = 0;
  }

  #pragma omp parallel num_threads(nt) if(nt>1)
  {
    int t = omp_get_thread_num(), nTeam = omp_get_num_threads(), w;
    size_t lo, hi, c0, c1, r;
    px_team_range(n, t, nTeam, &lo, &hi);
    for(c0=lo; c0<hi && !px_stopping(pStop); c0=c1){
      c1 = hi - c0 > KEYS_ASK ? c0 + KEYS_ASK : hi;
      for(w=0; w<nIn; w++){
        const uint64_t *a = aaIn[w];
        uint64_t mn = aMin[(size_t)t*nIn + w], mx = aMax[(size_t)t*nIn + w];
        for(r=c0; r<c1; r++){
          mn = a[r] < mn ? a[r] : mn;
          mx = a[r] > mx ? a[r] : mx;
        }
        aMin[(size_t)t*nIn + w] = mn;
        aMax[(size_t)t*nIn + w] = mx;
      }
    }
    px_stop_wait(pStop, &nDone[0], nTeam);
  }
  if( px_stopping(pStop) ){
    free(aMin);
    return PX_EINTR;
  }

  /* Fold into row 0 of aMin / aMax, then lay the fields out. */
  for(i=0; i<nIn; i++){
    int t, wBits;
    uint64_t mn = aMin[i], mx = aMax[i];
    for(t=1; t<nt; t++){
      if( aMin[(size_t)t*nIn + i]<mn ) mn = aMin[(size_t)t*nIn + i];
      if( aMax[(size_t)t*nIn + i]>mx ) mx = aMax[(size_t)t*nIn + i];
    }
    aMin[i] = mn;
    wBits = mx==mn ? 0 : 64 - __builtin_clzll(mx - mn);
    if( wBits==0 ) continue;
    if( used + wBits > 64 ){
      if( nOut>0 ) aEnd[nOut-1] = nField;
      nOut++;
      used = 0;
    }
    used += wBits;
    aField[nField] = i;
    aShift[nField] = 64 - used;
    nField++;
  }
  if( nOut>0 ) aEnd[nOut-1] = nField;

  if( nOut>0 ){
    #pragma omp parallel num_threads(nt) if(nt>1)
    {
      int t = omp_get_thread_num(), nTeam = omp_get_num_threads();
      size_t lo, hi, c0, c1, r;
      px_team_range(n, t, nTeam, &lo, &hi);
      for(c0=lo; c0<hi && !px_stopping(pStop); c0=c1){
        c1 = hi - c0 > KEYS_ASK ? c0 + KEYS_ASK : hi;
        for(r=c0; r<c1; r++){
          int j, f = 0;
          for(j=0; j<nOut; j++){
            uint64_t x = 0;
            for(; f<aEnd[j]; f++){
              x |= (aaIn[aField[f]][r] - aMin[aField[f]]) << aShift[f];
            }
            aaOut[j][r] = x;
          }
        }
      }
      px_stop_wait(pStop, &nDone[1], nTeam);
    }
  }
  free(aMin);
  if( px_stopping(pStop) ) return PX_EINTR;
  *pnOut = nOut;
  return PX_OK;
}
