/*
** sort.c: stable radix sort of 64-bit keys with a 32-bit permutation, and
** the order-preserving key encodings (sort.h).
**
** How it works (most significant digit first):
**
**   1. Parallel pass.  The digit is the SORT_TOP_BITS bits that end at the
**      highest bit in which the keys differ (the OR of key ^ key[0]).  Each
**      thread counts digits over its contiguous share of the blocks while
**      it ORs that mask, on a guess: the top bits (or, for a bucket, the
**      bits just below the parent's digit).  Only if the mask shows the
**      guess wrong are the digits counted again.  Bucket d of thread t
**      starts after every element of a smaller digit and after bucket d
**      of threads < t (bucket-major, thread-minor), so the scatter into
**      the scratch buffer is stable.
**   2. Buckets.  Each bucket is then sorted on its own: buckets larger than
**      SORT_BIG (skewed input) by another parallel pass, one after the
**      other; the rest in parallel, handed out dynamically, by a serial,
**      cache-resident MSD radix sort (sort_rec).  It takes a digit of
**      about log2(bucket size) bits (at most SORT_REC_BITS), again at the
**      highest varying bit of the bucket (an all-equal bucket is done);
**      when every resulting bucket has at most SORT_SMALL elements, which
**      is the usual case, one insertion sort over the whole range
**      finishes them all, else the large buckets recurse.  The schedule
**      cannot change the output: a stable sort's output is unique.
**   3. Ping-pong.  Data moves between the caller's arrays (buffer 0) and
**      the scratch (buffer 1) at the same offsets, one direction per pass;
**      whatever ends in buffer 1 is copied back, so every finished range
**      ends in buffer 0.
**
** Why MSD and not LSD: bench/bench_kernels.c times both on 10M random keys
** with a permutation (px_sort_u64_perm_lsd() below is the plain parallel
** LSD baseline, sharing radix_pass()).  LSD makes one pass over memory per
** digit (6 with 11-bit digits, 8 with 8-bit ones); MSD makes one, after
** which each bucket fits in the cache, and it was about twice as fast.
**
** Bits that never vary cost nothing in either: LSD skips digits with no
** varying bit, MSD puts each digit at the highest varying bit.
**
** Keys of several words (px_sort_words_perm) are sorted one word at a
** time, least significant first, each pass of px_sort_u64_perm() stable.
**
** The counting sort (px_countsort_u32) is the parallel pass above with
** the bin as the digit: each thread counts the bins of its contiguous
** share of the blocks, the counts become starts bucket-major, thread-minor,
** and each thread moves its rows to their starts in order.
*/
#include "sort.h"
#include "gather.h"
#include <assert.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef SORT_TOP_BITS
#define SORT_TOP_BITS 11   /* digit of a parallel pass */
#endif
#ifndef SORT_REC_BITS
#define SORT_REC_BITS 12   /* widest digit of a cache-resident pass */
#endif
#ifndef SORT_SMALL
#define SORT_SMALL    48   /* insertion sort at or below this many */
#endif

/* Buckets above this many elements get a parallel pass of their own; as
** many keys and permutation entries as fit in a core's L2 cache.  In a
** tiny-block test build it shrinks with the block, which exercises the
** parallel passes on small inputs. */
#define SORT_BIG ((size_t)16 * PX_BLOCK)

#define TOP_NBUCKET ((size_t)1 << SORT_TOP_BITS)

/* ---- key encodings ------------------------------------------------------ */

double px_unkey_f64(uint64_t k){
  uint64_t u = (k >> 63) ? k ^ ((uint64_t)1 << 63) : ~k;
  double v;
  memcpy(&v, &u, sizeof(v));
  return v;
}

/* ---- buffers ------------------------------------------------------------ */

typedef struct sort_bufs {
  uint64_t *k[2];      /* keys: [0] the caller's array, [1] scratch */
  uint32_t *p[2];      /* permutation, the same way; both NULL if none */
  int nthreads;        /* the caller's thread limit */
  uint32_t *aHist;     /* per-thread digit counters of the parallel passes */
  px_stop *pStop;      /* the caller's (par.h), or NULL: asked per bucket */
} sort_bufs;

/* The bits in which some key of k[lo..hi-1] differs from x. */
static uint64_t varying_range(const uint64_t *k, size_t lo, size_t hi, uint64_t x){
  uint64_t m = 0;
  size_t i;
  for(i=lo; i<hi; i++) m |= k[i] ^ x;
  return m;
}

/* The bits in which some key of k[0..n-1] differs from k[0], by nt
** threads. */
static uint64_t varying_bits(const uint64_t *k, size_t n, int nt){
  uint64_t m = 0;
  size_t b, nb = px_nblocks(n);
  #pragma omp parallel for schedule(static) num_threads(nt) if(nt>1) \
          reduction(|:m)
  for(b=0; b<nb; b++){
    size_t lo, hi;
    px_block_range(n, b, &lo, &hi);
    m |= varying_range(k, lo, hi, k[0]);
  }
  return m;
}

/* Copies elements [lo, hi) of the scratch back into the caller's arrays. */
static void copy_range(const sort_bufs *pB, size_t lo, size_t hi){
  memcpy(pB->k[0] + lo, pB->k[1] + lo, (hi - lo) * sizeof(uint64_t));
  if( pB->p[0] ) memcpy(pB->p[0] + lo, pB->p[1] + lo, (hi - lo) * sizeof(uint32_t));
}

/* The same for [lo, lo+n), by nt threads. */
static void copy_back(const sort_bufs *pB, size_t lo, size_t n, int nt){
  #pragma omp parallel num_threads(nt) if(nt>1)
  {
    size_t a, b;
    px_team_range(n, omp_get_thread_num(), omp_get_num_threads(), &a, &b);
    copy_range(pB, lo + a, lo + b);
  }
}

/* The digit of key x: nBits bits starting at bit shift. */
static inline size_t digit(uint64_t x, int shift, int nBits){
  return (size_t)(x >> shift) & (((size_t)1 << nBits) - 1);
}

/* The shift of the nBits-bit digit that ends at the highest bit of mask
** (mask != 0), or 0 when that bit is below nBits. */
static int top_shift(uint64_t mask, int nBits){
  int h = 63 - __builtin_clzll(mask);
  return h >= nBits ? h - nBits + 1 : 0;
}

/* The moving half of a counting-sort pass: element i in [a, b) of (kS, pS)
** goes to position aPos[d]++ of (kD, pD), d its digit.  With and without a
** permutation are separate loops, so that neither tests pD per element. */
static inline void scatter(const uint64_t *kS, const uint32_t *pS, uint64_t *kD,
                           uint32_t *pD, size_t a, size_t b, int shift, int nBits,
                           uint32_t *aPos){
  size_t i;
  if( pD ){
    for(i=a; i<b; i++){
      uint32_t j = aPos[digit(kS[i], shift, nBits)]++;
      kD[j] = kS[i];
      pD[j] = pS[i];
    }
  }else{
    for(i=a; i<b; i++) kD[aPos[digit(kS[i], shift, nBits)]++] = kS[i];
  }
}

/* ---- the cache-resident serial sort ------------------------------------- */

/* Stable insertion sort of [lo, lo+n) of buffer s into buffer 0 (in place
** when s is 0). */
static void sort_small(const sort_bufs *pB, int s, size_t lo, size_t n){
  const uint64_t *kS = pB->k[s] + lo;
  const uint32_t *pS = pB->p[s] ? pB->p[s] + lo : 0;
  uint64_t *kD = pB->k[0] + lo;
  uint32_t *pD = pB->p[0] ? pB->p[0] + lo : 0;
  size_t i, j;
  for(i=0; i<n; i++){
    uint64_t x = kS[i];
    uint32_t v = pS ? pS[i] : 0;
    for(j=i; j>0 && kD[j-1]>x; j--){
      kD[j] = kD[j-1];
      if( pD ) pD[j] = pD[j-1];
    }
    kD[j] = x;
    if( pD ) pD[j] = v;
  }
}

/* Sorts [lo, lo+n) of buffer s, leaving the result in buffer 0; the keys
** are known to agree in bits above-1 and up.  The digit has about log2(n)
** bits (at most SORT_REC_BITS), so that buckets hold one or two elements
** on average and the insertion sorts are short.  The histogram is counted
** in the same pass as the varying bits, on a guess: the digit just below
** bit `above`; only when the guess is wrong is it counted again. */
static void sort_rec(const sort_bufs *pB, int s, size_t lo, size_t n, int above){
  uint32_t aEnd[(size_t)1 << SORT_REC_BITS];
  const uint64_t *kS = pB->k[s] + lo;
  const uint32_t *pS = pB->p[s] ? pB->p[s] + lo : 0;
  uint64_t *kD = pB->k[1-s] + lo;
  uint32_t *pD = pB->p[1-s] ? pB->p[1-s] + lo : 0;
  uint64_t mask = 0;
  size_t i, d, nBucket;
  uint32_t a, run, c, cMax;
  int shift, nBits;

  if( n<=SORT_SMALL ){
    sort_small(pB, s, lo, n);
    return;
  }
  nBits = 63 - __builtin_clzll((uint64_t)n);
  if( nBits>SORT_REC_BITS ) nBits = SORT_REC_BITS;
  nBucket = (size_t)1 << nBits;
  shift = above > nBits ? above - nBits : 0;

  /* aEnd[d] counts digit d, then holds the start of bucket d, and after
  ** the scatter its end. */
  memset(aEnd, 0, nBucket * sizeof(uint32_t));
  for(i=0; i<n; i++){
    mask |= kS[i] ^ kS[0];
    aEnd[digit(kS[i], shift, nBits)]++;
  }
  if( mask==0 ){
    if( s ) copy_range(pB, lo, lo + n);
    return;
  }
  if( top_shift(mask, nBits)!=shift ){
    shift = top_shift(mask, nBits);
    memset(aEnd, 0, nBucket * sizeof(uint32_t));
    for(i=0; i<n; i++) aEnd[digit(kS[i], shift, nBits)]++;
  }
  for(run=0, cMax=0, d=0; d<nBucket; d++){
    c = aEnd[d];
    aEnd[d] = run;
    run += c;
    if( c>cMax ) cMax = c;
  }
  scatter(kS, pS, kD, pD, 0, n, shift, nBits, aEnd);

  if( (mask & (((uint64_t)1 << shift) - 1))==0 ){
    /* The digit held every varying bit: each bucket is all-equal. */
    if( s==0 ) copy_range(pB, lo, lo + n);
    return;
  }
  if( cMax<=SORT_SMALL ){
    /* Every bucket is small: one insertion sort over the whole range
    ** finishes them all (no element moves past a bucket boundary, as every
    ** key of a later bucket is larger), without a call per bucket. */
    sort_small(pB, 1-s, lo, n);
    return;
  }
  for(a=0, d=0; d<nBucket; a=aEnd[d++]){
    /* A bucket of one that landed in buffer 0 is done. */
    if( aEnd[d]-a > (uint32_t)(s==1) ) sort_rec(pB, 1-s, lo + a, aEnd[d] - a, shift);
  }
}

/* ---- the parallel pass -------------------------------------------------- */

/* One stable counting-sort pass of [lo, lo+n) from buffer s into buffer
** 1-s on the nBits-bit digit at *pShift, by up to nt threads.
**
** When pMask is not NULL, *pShift is a guess: the pass also computes the
** bits that vary (into *pMask), and when the digit that ends at the
** highest of them is not the guess, it counts again with that digit and
** sets *pShift.  If no bit varies, nothing moves.
**
** When aStart is not NULL, aStart[d] receives the start of bucket d
** relative to lo, for d in 0..2^nBits (the last one is n).  pB->aHist has
** room for nt * 2^nBits counters. */
static void radix_pass(const sort_bufs *pB, int s, size_t lo, size_t n, int nBits,
                       int nt, int *pShift, uint64_t *pMask, uint32_t *aStart){
  const uint64_t *kS = pB->k[s] + lo;
  const uint32_t *pS = pB->p[s] ? pB->p[s] + lo : 0;
  uint64_t *kD = pB->k[1-s] + lo;
  uint32_t *pD = pB->p[1-s] ? pB->p[1-s] + lo : 0;
  size_t nBucket = (size_t)1 << nBits;
  uint64_t mask = 0;
  int shift = *pShift, bSkip = 0, nCounted = 0, nDone = 0;
  #pragma omp parallel num_threads(nt) if(nt>1)
  {
    int t = omp_get_thread_num(), nTeam = omp_get_num_threads();
    int sh = shift;
    uint32_t *aMine = pB->aHist + (size_t)t * nBucket;
    uint64_t m = 0;
    size_t a, b, i;
    px_team_range(n, t, nTeam, &a, &b);
    memset(aMine, 0, nBucket * sizeof(uint32_t));
    if( pMask ){
      for(i=a; i<b; i++){
        m |= kS[i] ^ kS[0];
        aMine[digit(kS[i], sh, nBits)]++;
      }
      #pragma omp atomic
      mask |= m;
      #pragma omp barrier
      if( mask && top_shift(mask, nBits)!=sh ){
        sh = top_shift(mask, nBits);
        memset(aMine, 0, nBucket * sizeof(uint32_t));
        for(i=a; i<b; i++) aMine[digit(kS[i], sh, nBits)]++;
      }
    }else{
      for(i=a; i<b; i++) aMine[digit(kS[i], sh, nBits)]++;
    }
    if( pMask==0 || mask ){
      /* Stop before the scatter (par.h): the installing thread asks, and
      ** after the barrier every thread reads the same answer; nothing
      ** moves then. */
      px_stop_now(pB->pStop);
      px_stop_wait(pB->pStop, &nCounted, nTeam);
      #pragma omp barrier
      /* Counters become starts: bucket-major, then thread order. */
      #pragma omp single
      {
        uint32_t run = 0, c;
        size_t d;
        int u;
        for(d=0; d<nBucket; d++){
          if( aStart ) aStart[d] = run;
          for(u=0; u<nTeam; u++){
            c = pB->aHist[(size_t)u * nBucket + d];
            pB->aHist[(size_t)u * nBucket + d] = run;
            run += c;
          }
        }
        if( aStart ) aStart[nBucket] = run;
        bSkip = pB->pStop && __atomic_load_n(&pB->pStop->bStop, __ATOMIC_RELAXED);
      }
      if( !bSkip ){
        /* In blocks, asking between them: a stop leaves part of the
        ** destination written (with values of the source), and the caller
        ** reads none of it. */
        size_t c0, c1;
        for(c0=a; c0<b && !px_stopping(pB->pStop); c0=c1){
          c1 = b - c0 > ((size_t)1 << 16) ? c0 + ((size_t)1 << 16) : b;
          scatter(kS, pS, kD, pD, c0, c1, sh, nBits, aMine);
        }
      }
      px_stop_wait(pB->pStop, &nDone, nTeam);
    }
  }
  if( bSkip ){
    /* Stopped: as if no bit varied, so the caller moves nothing. */
    if( pMask ) *pMask = 0;
    return;
  }
  if( pMask ){
    *pMask = mask;
    if( mask ) *pShift = top_shift(mask, nBits);
  }
}

/* Sorts [lo, lo+n) of buffer s in parallel, leaving the result in buffer
** 0; the keys agree in bits above-1 and up.  A parallel pass on the top
** digit, then the buckets (see above). */
static void sort_par(const sort_bufs *pB, int s, size_t lo, size_t n, int above){
  uint32_t aStart[TOP_NBUCKET + 1];
  int nt = px_threads_for(px_nblocks(n), pB->nthreads);
  int shift = above > SORT_TOP_BITS ? above - SORT_TOP_BITS : 0;
  uint64_t mask;
  size_t d;
  radix_pass(pB, s, lo, n, SORT_TOP_BITS, nt, &shift, &mask, aStart);
  if( pB->pStop && __atomic_load_n(&pB->pStop->bStop, __ATOMIC_RELAXED) ) return;
  if( mask==0 ){
    if( s ) copy_back(pB, lo, n, nt);
    return;
  }
  if( (mask & (((uint64_t)1 << shift) - 1))==0 ){
    if( s==0 ) copy_back(pB, lo, n, nt);
    return;
  }
  for(d=0; d<TOP_NBUCKET; d++){
    size_t len = aStart[d+1] - aStart[d];
    if( len>SORT_BIG && !px_stopping(pB->pStop) ) sort_par(pB, 1-s, lo + aStart[d], len, shift);
  }
  /* A bucket skipped when stopping keeps what buffer 0 held there: the
  ** caller's values, so the permutation stays within bounds. */
  #pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if(nt>1)
  for(d=0; d<TOP_NBUCKET; d++){
    size_t len = aStart[d+1] - aStart[d];
    if( len>0 && len<=SORT_BIG && !px_stopping(pB->pStop) ){
      sort_rec(pB, 1-s, lo + aStart[d], len, shift);
    }
  }
}

/* ---- entry points ------------------------------------------------------- */

/* A scratch allocation of nByte bytes, freed with free().  Large ones ask
** Linux for transparent huge pages: the top-level scatter writes to 2^11
** places at once in each of two arrays, and with 4 KiB pages the faults
** and TLB misses of the fresh scratch cost as much as the sorting. */
static void *scratch_alloc(size_t nByte){
#ifdef MADV_HUGEPAGE
  const size_t szHuge = (size_t)2 << 20;
  if( nByte>=2*szHuge ){
    void *p = 0;
    size_t sz = (nByte + szHuge - 1) / szHuge * szHuge;
    if( posix_memalign(&p, szHuge, sz) ) return 0;
    madvise(p, sz, MADV_HUGEPAGE);    /* advice only: failure is harmless */
    return p;
  }
#endif
  return malloc(nByte);
}

/* Allocates the scratch of *pB for n elements and digits of nBits bits;
** returns PX_OK or PX_ENOMEM (then nothing is left allocated). */
static int bufs_open(sort_bufs *pB, uint64_t *aKey, uint32_t *aPerm,
                     size_t n, int nBits, int nthreads){
  int nt = px_threads_for(px_nblocks(n), nthreads);
  memset(pB, 0, sizeof(*pB));
  pB->pStop = px_stop_installed();
  pB->k[0] = aKey;
  pB->p[0] = aPerm;
  pB->nthreads = nthreads;
  pB->k[1] = scratch_alloc(n * sizeof(uint64_t));
  pB->p[1] = aPerm ? scratch_alloc(n * sizeof(uint32_t)) : 0;
  pB->aHist = malloc(((size_t)nt << nBits) * sizeof(uint32_t));
  if( pB->k[1]==0 || (aPerm && pB->p[1]==0) || pB->aHist==0 ){
    free(pB->k[1]);
    free(pB->p[1]);
    free(pB->aHist);
    return PX_ENOMEM;
  }
  return PX_OK;
}

static void bufs_close(sort_bufs *pB){
  free(pB->k[1]);
  free(pB->p[1]);
  free(pB->aHist);
}

int px_sort_u64_perm(uint64_t *aKey, uint32_t *aPerm, size_t n, int nthreads){
  sort_bufs b;
  if( n>UINT32_MAX ) return PX_ETOOBIG;
  if( n<=SORT_SMALL ){
    /* In place, no scratch needed. */
    b.k[0] = b.k[1] = aKey;
    b.p[0] = b.p[1] = aPerm;
    sort_small(&b, 0, 0, n);
    return PX_OK;
  }
  if( bufs_open(&b, aKey, aPerm, n, SORT_TOP_BITS, nthreads) ) return PX_ENOMEM;
  if( n<=SORT_BIG ){
    sort_rec(&b, 0, 0, n, 64);
  }else{
    sort_par(&b, 0, 0, n, 64);
  }
  bufs_close(&b);
  return px_stopping(b.pStop) ? PX_EINTR : PX_OK;
}

int px_sort_u64_perm_lsd(uint64_t *aKey, uint32_t *aPerm, size_t n,
                         int nBits, int nthreads){
  sort_bufs b;
  uint64_t mask;
  int nt = px_threads_for(px_nblocks(n), nthreads);
  int s = 0, shift;
  assert( nBits>=1 && nBits<=16 );
  if( n>UINT32_MAX ) return PX_ETOOBIG;
  if( n<2 ) return PX_OK;
  if( bufs_open(&b, aKey, aPerm, n, nBits, nthreads) ) return PX_ENOMEM;
  b.pStop = 0;          /* the baseline runs to the end */
  mask = varying_bits(aKey, n, nt);
  for(shift=0; shift<64; shift+=nBits){
    int w = 64 - shift < nBits ? 64 - shift : nBits;
    if( digit(mask, shift, w)==0 ) continue;
    radix_pass(&b, s, 0, n, w, nt, &shift, 0, 0);
    s = 1 - s;
  }
  if( s ) copy_back(&b, 0, n, nt);
  bufs_close(&b);
  return PX_OK;
}

/* ---- keys of several words ------------------------------------------------ */

/* aPerm[i] = i and aKey[i] = aW[i] for i < n, by up to nt threads. */
static void identity_copy(uint32_t *aPerm, uint64_t *aKey, const uint64_t *aW,
                          size_t n, int nt){
  #pragma omp parallel num_threads(nt) if(nt>1)
  {
    size_t a, b, i;
    px_team_range(n, omp_get_thread_num(), omp_get_num_threads(), &a, &b);
    for(i=a; i<b; i++) aPerm[i] = (uint32_t)i;
    if( aKey ) memcpy(aKey + a, aW + a, (b - a) * sizeof(uint64_t));
  }
}

int px_sort_words_perm(const uint64_t *const *aaWord, int nWord, size_t n,
                       uint32_t *aPerm, uint64_t *aTop, int nthreads){
  px_stop *pStop = px_stop_installed();
  int nt = px_threads_for(px_nblocks(n), nthreads);
  uint64_t *aKey = aTop;    /* the word being sorted, in the order so far */
  int k, rc = PX_OK;
  assert( nWord>=0 );
  if( n>UINT32_MAX ) return PX_ETOOBIG;
  if( aKey==0 && nWord>0 ){
    aKey = malloc((n ? n : 1) * sizeof(uint64_t));
    if( aKey==0 ) return PX_ENOMEM;
  }
  /* The least significant word through the identity: a copy. */
  identity_copy(aPerm, nWord>0 ? aKey : 0, nWord>0 ? aaWord[nWord-1] : 0, n, nt);
  for(k=nWord-1; k>=0 && rc==PX_OK; k--){
    if( k<nWord-1 ) px_gather_u64(aaWord[k], aPerm, aKey, n, nthreads);
    /* A stopped gather leaves aKey partly written: ask before sorting. */
    rc = px_stop_now(pStop) ? PX_EINTR : px_sort_u64_perm(aKey, aPerm, n, nthreads);
  }
  if( aKey!=aTop ) free(aKey);
  return rc;
}

/* ---- counting sort by bin ------------------------------------------------- */

#define COUNT_ASK ((size_t)1 << 16)   /* rows or bins between asks to stop */

int px_countsort_u32(const uint32_t *aBin, size_t n, uint32_t nBin,
                     uint32_t *aPerm, size_t *aStart, int nVal,
                     const void *const *aaSrc, void *const *aaDst, int nthreads){
  int nt = px_threads_for(px_nblocks(n), nthreads);
  px_stop *pStop = px_stop_installed();
  uint32_t *aHist;    /* [t*nBin + b]: thread t's count of bin b, then start */
  int nDone[2] = {0, 0};
  assert( nVal>=0 );
  if( n>UINT32_MAX ) return PX_ETOOBIG;
  aHist = calloc((size_t)nt * nBin + 1, sizeof(uint32_t));
  if( aHist==0 ) return PX_ENOMEM;
  /* Each pass asks whether to stop every COUNT_ASK rows (or bins); once
  ** told, a thread skips the rest of its share, and px_stop_wait() keeps
  ** the asking thread asking until every thread is through, so that a stop
  ** reaches those still working. */
  #pragma omp parallel num_threads(nt) if(nt>1)
  {
    int t = omp_get_thread_num(), nTeam = omp_get_num_threads();
    uint32_t *h = aHist + (size_t)t * nBin;
    size_t lo, hi, c0, c1, i;
    px_team_range(n, t, nTeam, &lo, &hi);
    for(c0=lo; c0<hi && !px_stopping(pStop); c0=c1){
      c1 = hi - c0 > COUNT_ASK ? c0 + COUNT_ASK : hi;
      for(i=c0; i<c1; i++) h[aBin[i]]++;
    }
    px_stop_wait(pStop, &nDone[0], nTeam);
    #pragma omp barrier
    if( t==0 ){
      /* Counts become starts: bin-major, then thread order.  Thread 0
      ** began the team, so it is the one that asks (par.h). */
      uint32_t run = 0, cnt;
      size_t b;
      int u;
      for(b=0; b<nBin; b++){
        if( (b % COUNT_ASK)==0 && px_stopping(pStop) ) break;
        if( aStart ) aStart[b] = run;
        for(u=0; u<nTeam; u++){
          cnt = aHist[(size_t)u * nBin + b];
          aHist[(size_t)u * nBin + b] = run;
          run += cnt;
        }
      }
      if( aStart ) aStart[nBin] = run;
    }
    #pragma omp barrier
    /* Counts or starts cut short would move rows out of bounds: a stop
    ** asked before this barrier is seen by every thread here. */
    if( (aPerm || nVal>0) && !px_stopping(pStop) ){
      for(c0=lo; c0<hi && !px_stopping(pStop); c0=c1){
        c1 = hi - c0 > COUNT_ASK ? c0 + COUNT_ASK : hi;
        if( nVal==0 ){
          for(i=c0; i<c1; i++) aPerm[h[aBin[i]]++] = (uint32_t)i;
        }else{
          for(i=c0; i<c1; i++){
            uint32_t pos = h[aBin[i]]++;
            int k;
            if( aPerm ) aPerm[pos] = (uint32_t)i;
            for(k=0; k<nVal; k++){
              memcpy((char*)aaDst[k] + (size_t)pos * 8, (const char*)aaSrc[k] + i * 8, 8);
            }
          }
        }
      }
    }
    px_stop_wait(pStop, &nDone[1], nTeam);
  }
  free(aHist);
  return px_stopping(pStop) ? PX_EINTR : PX_OK;
}
