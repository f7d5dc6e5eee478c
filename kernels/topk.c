/*
** topk.c: the first k rows of a stable sort by multi-word keys (topk.h).
**
** How it works:
**
**   1. Pieces.  The blocks are cut into P runs of about TOPK_PIECE_BLOCKS
**      blocks (at most TOPK_MAX_PIECES runs, cut as px_team_range() cuts a
**      team's share), so P and every piece depend on n only.  The threads
**      take contiguous runs of pieces.  Large pieces because a piece of
**      r rows admits about k ln(r / k) random rows into its heap: at k =
**      1000 on 10M rows, pieces of 2^19 rows took half the time of pieces
**      of 2^17 (bench/bench_kernels.c), and 20 pieces still feed 16 cores.
**   2. Selection.  A piece's first m = min(k, piece) rows are heapified
**      into a max-heap on (key, row); every later row that comes before the
**      root replaces it and sifts down.  Rows are visited in increasing
**      order, so a row that ties the root's key comes after it: the scan
**      compares each row's first word with the root's, and reads the other
**      words only on a tie.  With keys in random order few rows ever enter
**      the heap, and the scan runs at the speed of reading word 0.
**   3. Each piece heapsorts its heap into ascending (key, row) order.
**   4. Merge.  One thread merges the P sorted runs through a min-heap of
**      the pieces on their next entry, writing rows until k are out.
**      (key, row) is a total order (rows are distinct), so the k rows and
**      their order are those of the stable sort, whatever the pieces.
**
** Why a binary heap: the scan must reject most rows with one compare
** against a threshold held in a register, and a heap keeps the threshold
** (the worst kept row) at its root and admits a row in O(log k).  Entries
** carry word 0 beside the row so that sifting reads other words only on
** ties.  When k is a good part of n almost every row enters the heap and
** this is a comparison sort; then px_sort_words_perm() (a radix sort) is
** faster, and is used (PX_TOPK_SORT_DIV, topk.h).
*/
#include "topk.h"
#include "sort.h"
#include <assert.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#ifndef TOPK_PIECE_BLOCKS
#define TOPK_PIECE_BLOCKS 64      /* blocks per piece: 2^19 rows */
#endif
#define TOPK_MAX_PIECES   128     /* so at most 128 k candidates */
#define TOPK_ASK ((size_t)1 << 16)   /* rows between asks to stop */

/* A kept row: its first key word and its number. */
typedef struct topk_ent {
  uint64_t key;
  uint32_t row;
} topk_ent;

/* Word 0 of row i: aaW[0][i], or computed from pSrc when it is set. */
static inline __attribute__((always_inline))
uint64_t key0(const uint64_t *a0, const px_key_src *pSrc, int eKind, size_t i){
  uint64_t k;
  if( pSrc==0 ) return a0[i];
  if( pSrc->aNull && ((pSrc->aNull[i>>3] >> (i&7)) & 1) ) return pSrc->nullKey;
  switch( eKind ){
    case PX_KEYSRC_I64: k = px_key_i64(((const int64_t*)pSrc->a)[i]); break;
    case PX_KEYSRC_F64: k = px_key_f64(((const double*)pSrc->a)[i]); break;
    default:            k = ((const uint64_t*)pSrc->a)[i]; break;
  }
  return k ^ pSrc->flip;
}

/* Compares words 1..nWord-1 of rows a and b: <0, 0 or >0. */
static inline int rest_cmp(const uint64_t *const *aaW, int nWord, uint32_t a, uint32_t b){
  int w;
  for(w=1; w<nWord; w++){
    uint64_t x = aaW[w][a], y = aaW[w][b];
    if( x!=y ) return x<y ? -1 : 1;
  }
  return 0;
}

/* Does *a come before *b in (key, row) order? */
static inline int ent_less(const uint64_t *const *aaW, int nWord,
                           const topk_ent *a, const topk_ent *b){
  int c;
  if( a->key!=b->key ) return a->key < b->key;
  c = nWord>1 ? rest_cmp(aaW, nWord, a->row, b->row) : 0;
  return c ? c<0 : a->row < b->row;
}

/* Restores the max-heap h[0..m-1] below position i. */
static inline void sift_down(const uint64_t *const *aaW, int nWord, topk_ent *h,
                             size_t m, size_t i){
  topk_ent x = h[i];
  for(;;){
    size_t c = 2*i + 1;
    if( c>=m ) break;
    if( c+1<m && ent_less(aaW, nWord, &h[c], &h[c+1]) ) c++;
    if( !ent_less(aaW, nWord, &x, &h[c]) ) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

/* Leaves in h[0..m-1] the best m rows of [lo, hi) (m <= hi - lo), sorted
** ascending by (key, row).  Returns 1 if told to stop (h is then
** meaningless), else 0.  Inlined three times, so that nWord is the
** constant 1 in the fast paths, and pSrc (word 0 computed from values, one
** word only) NULL in the others. */
static inline __attribute__((always_inline))
int select_piece(const uint64_t *const *aaW, const px_key_src *pSrc, int eKind, int nWord,
                 size_t lo, size_t hi, size_t m, topk_ent *h, px_stop *pStop){
  const uint64_t *a0 = pSrc ? 0 : aaW[0];
  size_t i, c0, c1;
  for(i=0; i<m; i++){
    h[i].key = key0(a0, pSrc, eKind, lo + i);
    h[i].row = (uint32_t)(lo + i);
  }
  for(i=m/2; i>0; i--) sift_down(aaW, nWord, h, m, i-1);
  for(c0=lo+m; c0<hi; c0=c1){
    uint64_t thr = h[0].key;
    c1 = hi - c0 > TOPK_ASK ? c0 + TOPK_ASK : hi;
    if( px_stopping(pStop) ) return 1;
    for(i=c0; i<c1; i++){
      uint64_t x = key0(a0, pSrc, eKind, i);
      /* Row i comes after the root unless its key is smaller: on a tie
      ** of every word, the larger row number decides. */
      if( x>thr ) continue;
      if( x==thr && (nWord<2 || rest_cmp(aaW, nWord, (uint32_t)i, h[0].row)>=0) ) continue;
      h[0].key = x;
      h[0].row = (uint32_t)i;
      sift_down(aaW, nWord, h, m, 0);
      thr = h[0].key;
    }
  }
  /* Heapsort: the largest goes last. */
  for(i=m; i>1; i--){
    topk_ent t = h[0];
    h[0] = h[i-1];
    h[i-1] = t;
    sift_down(aaW, nWord, h, i-1, 0);
  }
  return 0;
}

/* Restores the min-heap aQ[0..nQ-1] of pieces, ordered by their next
** entries aEnt[aPos[piece]], below position at. */
static void queue_sift(const uint64_t *const *aaW, int nWord, const topk_ent *aEnt,
                       const size_t *aPos, int *aQ, int nQ, int at){
  int x = aQ[at], c;
  for(;;){
    c = 2*at + 1;
    if( c>=nQ ) break;
    if( c+1<nQ && ent_less(aaW, nWord, &aEnt[aPos[aQ[c+1]]], &aEnt[aPos[aQ[c]]]) ) c++;
    if( !ent_less(aaW, nWord, &aEnt[aPos[aQ[c]]], &aEnt[aPos[x]]) ) break;
    aQ[at] = aQ[c];
    at = c;
  }
  aQ[at] = x;
}

/* Merges the sorted runs aEnt[aOff[p]..aOff[p+1]-1], p < nPiece, writing
** the rows of the first m entries to aOut (m <= the entries in all).
** Returns 1 if told to stop. */
static int merge_pieces(const uint64_t *const *aaW, int nWord, const topk_ent *aEnt,
                        const size_t *aOff, int nPiece, size_t m, uint32_t *aOut,
                        px_stop *pStop){
  size_t aPos[TOPK_MAX_PIECES];    /* next entry of each piece */
  int aQ[TOPK_MAX_PIECES];         /* min-heap of pieces on their next entry */
  int nQ = 0, p;
  size_t j;
  for(p=0; p<nPiece; p++){
    aPos[p] = aOff[p];
    if( aOff[p+1]>aOff[p] ) aQ[nQ++] = p;
  }
  for(p=nQ/2; p>0; p--) queue_sift(aaW, nWord, aEnt, aPos, aQ, nQ, p-1);
  for(j=0; j<m; j++){
    int x = aQ[0];
    if( (j % TOPK_ASK)==0 && px_stopping(pStop) ) return 1;
    assert( nQ>0 );
    aOut[j] = aEnt[aPos[x]].row;
    if( ++aPos[x]==aOff[x+1] ){
      aQ[0] = aQ[--nQ];      /* piece x is used up */
      if( nQ==0 ) continue;
    }
    queue_sift(aaW, nWord, aEnt, aPos, aQ, nQ, 0);
  }
  return 0;
}

/* Large k: the prefix of a full sort. */
static int topk_by_sort(const uint64_t *const *aaWord, int nWord, size_t n, size_t m,
                        uint32_t *aOut, int nthreads){
  uint32_t *aPerm;
  int rc;
  if( m==n ) return px_sort_words_perm(aaWord, nWord, n, aOut, 0, nthreads);
  aPerm = malloc(n * sizeof(uint32_t));
  if( aPerm==0 ) return PX_ENOMEM;
  rc = px_sort_words_perm(aaWord, nWord, n, aPerm, 0, nthreads);
  if( rc==PX_OK ) memcpy(aOut, aPerm, m * sizeof(uint32_t));
  free(aPerm);
  return rc;
}

/* The selection and the merge (steps 1 to 4) for m = min(k, n) rows, of
** the words aaWord or of the one word pSrc makes. */
static int topk_select(const uint64_t *const *aaWord, const px_key_src *pSrc, int nWord,
                       size_t n, size_t m, uint32_t *aOut, int nthreads){
  px_stop *pStop = px_stop_installed();
  size_t aOff[TOPK_MAX_PIECES + 1];  /* piece p's entries: aOff[p]..aOff[p+1]-1 */
  size_t nb = px_nblocks(n);
  topk_ent *aEnt;                    /* every piece's kept rows, owned here */
  int nPiece, nt, p, nDone = 0, rc = PX_OK;

  nPiece = (int)((nb + TOPK_PIECE_BLOCKS - 1) / TOPK_PIECE_BLOCKS < TOPK_MAX_PIECES
                 ? (nb + TOPK_PIECE_BLOCKS - 1) / TOPK_PIECE_BLOCKS : TOPK_MAX_PIECES);
  aOff[0] = 0;
  for(p=0; p<nPiece; p++){
    size_t lo, hi;
    px_team_range(n, p, nPiece, &lo, &hi);
    aOff[p+1] = aOff[p] + (hi - lo < m ? hi - lo : m);
  }
  aEnt = malloc(aOff[nPiece] * sizeof(topk_ent));
  if( aEnt==0 ) return PX_ENOMEM;
  nt = px_threads_for(nb, nthreads);
  if( nt>nPiece ) nt = nPiece;
  #pragma omp parallel num_threads(nt) if(nt>1)
  {
    int t = omp_get_thread_num(), nTeam = omp_get_num_threads(), q;
    for(q=nPiece*t/nTeam; q<nPiece*(t+1)/nTeam; q++){
      size_t lo, hi;
      int bStop;
      px_team_range(n, q, nPiece, &lo, &hi);
      size_t mq = aOff[q+1] - aOff[q];
      topk_ent *h = aEnt + aOff[q];
      /* Each call inlined with its constants: the loops differ. */
      if( pSrc && pSrc->eKind==PX_KEYSRC_F64 ){
        bStop = select_piece(0, pSrc, PX_KEYSRC_F64, 1, lo, hi, mq, h, pStop);
      }else if( pSrc && pSrc->eKind==PX_KEYSRC_I64 ){
        bStop = select_piece(0, pSrc, PX_KEYSRC_I64, 1, lo, hi, mq, h, pStop);
      }else if( pSrc ){
        bStop = select_piece(0, pSrc, PX_KEYSRC_U64, 1, lo, hi, mq, h, pStop);
      }else if( nWord==1 ){
        bStop = select_piece(aaWord, 0, 0, 1, lo, hi, mq, h, pStop);
      }else{
        bStop = select_piece(aaWord, 0, 0, nWord, lo, hi, mq, h, pStop);
      }
      if( bStop ) break;
    }
    px_stop_wait(pStop, &nDone, nTeam);
  }
  if( px_stopping(pStop)
   || merge_pieces(aaWord, nWord, aEnt, aOff, nPiece, m, aOut, pStop) ){
    rc = PX_EINTR;
  }
  free(aEnt);
  return rc;
}

int px_topk_words_perm(const uint64_t *const *aaWord, int nWord, size_t n, size_t k,
                       uint32_t *aOut, int nthreads){
  size_t m = k<n ? k : n, j;
  assert( nWord>=0 );
  if( n>UINT32_MAX ) return PX_ETOOBIG;
  if( m==0 ) return PX_OK;
  if( nWord==0 ){
    for(j=0; j<m; j++) aOut[j] = (uint32_t)j;
    return PX_OK;
  }
  if( m > n / PX_TOPK_SORT_DIV ) return topk_by_sort(aaWord, nWord, n, m, aOut, nthreads);
  return topk_select(aaWord, 0, nWord, n, m, aOut, nthreads);
}

int px_topk_src_perm(const px_key_src *pSrc, size_t n, size_t k, uint32_t *aOut,
                     int nthreads){
  size_t m = k<n ? k : n;
  uint64_t *aKey;
  const uint64_t *aaKey[1];
  int rc;
  if( n>UINT32_MAX ) return PX_ETOOBIG;
  if( m==0 ) return PX_OK;
  if( m <= n / PX_TOPK_SORT_DIV ) return topk_select(0, pSrc, 1, n, m, aOut, nthreads);
  /* Many rows wanted: the keys, then the sort. */
  aKey = malloc(n * sizeof(uint64_t));
  if( aKey==0 ) return PX_ENOMEM;
  px_keys_from_src(pSrc, n, aKey, nthreads);
  aaKey[0] = aKey;
  rc = px_stopping(px_stop_installed()) ? PX_EINTR
     : topk_by_sort(aaKey, 1, n, m, aOut, nthreads);
  free(aKey);
  return rc;
}

void px_keys_from_src(const px_key_src *pSrc, size_t n, uint64_t *aKey, int nthreads){
  size_t i;
  int nt = px_threads_for(px_nblocks(n), nthreads);
  #pragma omp parallel for num_threads(nt) if(nt>1) schedule(static)
  for(i=0; i<n; i++) aKey[i] = key0(0, pSrc, pSrc->eKind, i);
}
