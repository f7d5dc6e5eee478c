/*
** join.c: the equi-join kernel (join.h, which says how it works and why).
**
** Every pass runs over fixed blocks (par.h): a block's work and its count
** depend on the data only, the counts are combined in block order, so the
** output is the same for every thread count.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* qsort_r */
#endif
#include "join.h"
#include "sort.h"
#include <assert.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Probe rows whose lookups overlap (join.h, Probe). */
#define JOIN_GROUP 16

/* One distinct build key: its tag, and its rows: when nRow is 1, iRow is
** that row; otherwise iRow is the position of the first of them in aRow. */
typedef struct join_key {
  uint64_t tag;
  uint32_t iRow;
  uint32_t nRow;
} join_key;

struct px_join_table {
  const uint64_t *aW[PX_JOIN_MAX_WORDS];  /* the caller's words */
  int nWord;
  int bExact;          /* equal tags are equal keys (one word, full hash) */
  int nBits;           /* bucket = top nBits bits of the tag */
  size_t nBuild;       /* build rows */
  size_t nValid;       /* build rows not skipped */
  uint32_t nKey;       /* distinct keys */
  join_key *aKey;      /* nKey keys in tag order; owned */
  uint32_t *aBucket;   /* 2^nBits + 1 starts into aKey; owned */
  uint32_t *aRow;      /* nValid rows grouped by key, or NULL when every
                       ** key has one row; owned */
  uint64_t *aDirect;   /* dense keys (one word, few values between the
                       ** least and the greatest): the probe state of key
                       ** uMin + d at aDirect[d] (join_direct), instead of
                       ** aKey and aBucket; owned */
  uint64_t uMin;
  size_t nDirect;
};

struct px_join_result {
  const px_join_table *pT;
  int eKind;
  size_t nProbe;
  uint64_t *aState;    /* per probe row: iRow << 32 | nRow of its key (0: none) */
  size_t *aOff;        /* per block: its first output row; then nOut */
};

/* ---- hashing ------------------------------------------------------------------ */

/* A bijective 64-bit mix (the finaliser of MurmurHash3). */
static inline uint64_t join_mix(uint64_t x){
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

#if PX_JOIN_HASH_BITS >= 64
# define JOIN_TAG_MASK (~(uint64_t)0)
#else
# define JOIN_TAG_MASK (~(~(uint64_t)0 >> PX_JOIN_HASH_BITS))
#endif

/* The tag of row r of keys aW[0..nWord-1]. */
static inline uint64_t join_tag(const uint64_t *const *aW, int nWord, size_t r){
  uint64_t h = join_mix(aW[0][r]);
  int w;
  for(w=1; w<nWord; w++) h = join_mix(h ^ (aW[w][r] + 0x9e3779b97f4a7c15ULL + (h << 6)));
  return h & JOIN_TAG_MASK;
}

static inline uint32_t join_bucket(uint64_t tag, int nBits){
  return nBits ? (uint32_t)(tag >> (64 - nBits)) : 0;
}

/* Are row a of keys aA and row b of keys aB equal in all nWord words? */
static inline int join_same(const uint64_t *const *aA, size_t a,
                            const uint64_t *const *aB, size_t b, int nWord){
  int w;
  for(w=0; w<nWord; w++) if( aA[w][a]!=aB[w][b] ) return 0;
  return 1;
}

/* ---- blocks ------------------------------------------------------------------- */

/* Runs xBlock(pCtx, b, lo, hi) on every block b = [lo, hi) of n elements,
** on up to nthreads, each thread a run of blocks, asking between blocks
** whether to stop.  Returns 1 when told to stop (blocks were skipped). */
static int join_blocks(size_t n, int nthreads, px_stop *pStop, void *pCtx,
                       void (*xBlock)(void*, size_t, size_t, size_t)){
  size_t nb = px_nblocks(n);
  int nt = px_threads_for(nb, nthreads), nDone = 0;
  #pragma omp parallel num_threads(nt) if(nt>1)
  {
    int nTeam = omp_get_num_threads();
    size_t a, b, lo;
    px_team_range(n, omp_get_thread_num(), nTeam, &a, &b);
    for(lo=a; lo<b && !px_stopping(pStop); lo+=PX_BLOCK){
      xBlock(pCtx, lo / PX_BLOCK, lo, b - lo > PX_BLOCK ? lo + PX_BLOCK : b);
    }
    px_stop_wait(pStop, &nDone, nTeam);
  }
  return px_stopping(pStop);
}

/* aCnt[0..nb-1] becomes its exclusive scan, aCnt[nb] the total.  Returns 1
** when the total does not fit in a size_t. */
static int join_scan(size_t *aCnt, size_t nb){
  size_t run = 0, c, b;
  for(b=0; b<nb; b++){
    c = aCnt[b];
    aCnt[b] = run;
    if( __builtin_add_overflow(run, c, &run) ) return 1;
  }
  aCnt[nb] = run;
  return 0;
}

/* ---- build -------------------------------------------------------------------- */

typedef struct build_ctx {
  px_join_table *pT;
  const uint8_t *aSkip;
  size_t *aCnt;        /* per block: a count, then its start */
  uint64_t *aTag;      /* nValid tags, then sorted */
  uint32_t *aRow;      /* nValid rows, sorted with the tags */
} build_ctx;

/* Counts the rows of a block that are not skipped. */
static void build_count(void *pCtx, size_t b, size_t lo, size_t hi){
  build_ctx *p = pCtx;
  size_t c = 0, i;
  for(i=lo; i<hi; i++) c += p->aSkip[i]==0;
  p->aCnt[b] = c;
}

/* Writes the tag and row of each row of a block that is not skipped. */
static void build_tags(void *pCtx, size_t b, size_t lo, size_t hi){
  build_ctx *p = pCtx;
  const px_join_table *pT = p->pT;
  size_t j = p->aSkip ? p->aCnt[b] : lo, i;
  for(i=lo; i<hi; i++){
    if( p->aSkip && p->aSkip[i] ) continue;
    p->aTag[j] = join_tag(pT->aW, pT->nWord, i);
    p->aRow[j++] = (uint32_t)i;
  }
}

/* qsort_r's order of rows: by words, then row. */
static int build_cmp(const void *a, const void *b, void *pArg){
  const px_join_table *pT = pArg;
  uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  int w;
  for(w=0; w<pT->nWord; w++){
    uint64_t u = pT->aW[w][x], v = pT->aW[w][y];
    if( u!=v ) return u<v ? -1 : 1;
  }
  return x<y ? -1 : x>y;
}

/* For each run of equal tags that starts in a block: when its rows do not
** all have the key of its first row (a collision), sorts them by (words,
** row), so that equal keys are contiguous and in increasing row order. */
static void build_collide(void *pCtx, size_t b, size_t lo, size_t hi){
  build_ctx *p = pCtx;
  const px_join_table *pT = p->pT;
  size_t n = pT->nValid, i, e;
  for(i=lo; i<hi; i=e){
    int bMixed = 0;
    if( i>0 && p->aTag[i]==p->aTag[i-1] ){ e = i + 1; continue; }
    for(e=i+1; e<n && p->aTag[e]==p->aTag[i]; e++){
      if( !bMixed ) bMixed = !join_same(pT->aW, p->aRow[e], pT->aW, p->aRow[i], pT->nWord);
    }
    if( bMixed ) qsort_r(p->aRow + i, e - i, sizeof(uint32_t), build_cmp, (void*)pT);
  }
}

/* Is sorted position i the first row of a key? */
static inline int build_is_start(const build_ctx *p, size_t i){
  const px_join_table *pT = p->pT;
  if( i==0 || p->aTag[i]!=p->aTag[i-1] ) return 1;
  return !pT->bExact && !join_same(pT->aW, p->aRow[i], pT->aW, p->aRow[i-1], pT->nWord);
}

/* Counts the keys that start in a block. */
static void build_count_keys(void *pCtx, size_t b, size_t lo, size_t hi){
  build_ctx *p = pCtx;
  size_t c = 0, i;
  for(i=lo; i<hi; i++) c += build_is_start(p, i);
  p->aCnt[b] = c;
}

/* Writes the keys that start in a block, with the position of their first
** row and their count (which may reach past the block). */
static void build_keys(void *pCtx, size_t b, size_t lo, size_t hi){
  build_ctx *p = pCtx;
  px_join_table *pT = p->pT;
  size_t k = p->aCnt[b], i, e;
  for(i=lo; i<hi; i++){
    if( !build_is_start(p, i) ) continue;
    for(e=i+1; e<pT->nValid && !build_is_start(p, e); e++){}
    pT->aKey[k].tag = p->aTag[i];
    pT->aKey[k].nRow = (uint32_t)(e - i);
    pT->aKey[k].iRow = e - i==1 ? p->aRow[i] : (uint32_t)i;
    k++;
  }
}

/* Writes the starts of the buckets that end at the keys of a block: bucket
** d starts at the first key whose bucket is d or more. */
static void build_buckets(void *pCtx, size_t b, size_t lo, size_t hi){
  build_ctx *p = pCtx;
  px_join_table *pT = p->pT;
  size_t nBucket = (size_t)1 << pT->nBits, d, dPrev, k;
  for(k=lo; k<hi; k++){
    d = join_bucket(pT->aKey[k].tag, pT->nBits);
    dPrev = k ? join_bucket(pT->aKey[k-1].tag, pT->nBits) + (size_t)1 : 0;
    for(; dPrev<=d; dPrev++) pT->aBucket[dPrev] = (uint32_t)k;
  }
  if( hi==pT->nKey ){
    d = join_bucket(pT->aKey[hi-1].tag, pT->nBits) + (size_t)1;
    for(; d<=nBucket; d++) pT->aBucket[d] = pT->nKey;
  }
}

/* Dense keys: one word whose values, least to greatest, span at most
** JOIN_DIRECT_SPAN times the rows (and 2^31 values): each value is a slot
** of an array holding its probe state, which a probe reads in one access
** instead of a hash lookup (primary keys 1..n, the common build side).
** Rows of each value are counted, then placed in row order (a stable
** counting sort) when a value has several.  Serial: a build side is the
** small one, and this costs two passes over it. */
#define JOIN_DIRECT_SPAN 4
static int join_direct(px_join_table *pT, const uint64_t *aW, const uint8_t *aSkip,
                       px_stop *pStop){
  size_t n = pT->nBuild, i, nSpan, nMulti = 0;
  uint64_t uMin = UINT64_MAX, uMax = 0;
  uint64_t *aDirect;
  uint32_t *aCnt;
  for(i=0; i<n; i++){
    if( aSkip && aSkip[i] ) continue;
    if( aW[i]<uMin ) uMin = aW[i];
    if( aW[i]>uMax ) uMax = aW[i];
  }
  if( pT->nValid==0 || uMax-uMin >= (uint64_t)JOIN_DIRECT_SPAN*pT->nValid + 64
   || uMax-uMin >= ((uint64_t)1<<31) ){
    return PX_OK;                     /* not dense: the hash table */
  }
  nSpan = (size_t)(uMax - uMin) + 1;
  aDirect = calloc(nSpan, sizeof(uint64_t));
  aCnt = calloc(nSpan, sizeof(uint32_t));
  if( aDirect==0 || aCnt==0 ){
    free(aDirect);
    free(aCnt);
    return PX_ENOMEM;
  }
  for(i=0; i<n; i++){
    if( aSkip && aSkip[i] ) continue;
    if( aCnt[aW[i]-uMin]++ == 1 ) nMulti++;
  }
  if( px_stop_now(pStop) ){
    free(aDirect);
    free(aCnt);
    return PX_EINTR;
  }
  if( nMulti ){
    /* Values with several rows: their rows in aRow, in row order. */
    size_t d, at = 0;
    pT->aRow = malloc((pT->nValid ? pT->nValid : 1) * sizeof(uint32_t));
    if( pT->aRow==0 ){
      free(aDirect);
      free(aCnt);
      return PX_ENOMEM;
    }
    for(d=0; d<nSpan; d++){
      if( aCnt[d]>1 ) aDirect[d] = (uint64_t)at << 32;
      at += aCnt[d];
    }
    for(i=0; i<n; i++){
      uint64_t *pS;
      if( aSkip && aSkip[i] ) continue;
      d = (size_t)(aW[i]-uMin);
      pS = &aDirect[d];
      if( aCnt[d]==1 ){
        *pS = (uint64_t)i << 32 | 1;
      }else{
        uint32_t k = (uint32_t)*pS;   /* rows placed so far */
        pT->aRow[(*pS >> 32) + k] = (uint32_t)i;
        *pS = (*pS & 0xFFFFFFFF00000000ULL) | (k + 1);
      }
    }
  }else{
    for(i=0; i<n; i++){
      if( aSkip && aSkip[i] ) continue;
      aDirect[aW[i]-uMin] = (uint64_t)i << 32 | 1;
    }
  }
  free(aCnt);
  pT->aDirect = aDirect;
  pT->uMin = uMin;
  pT->nDirect = nSpan;
  return PX_OK;
}

void px_join_table_free(px_join_table *pT){
  if( pT==0 ) return;
  free(pT->aDirect);
  free(pT->aKey);
  free(pT->aBucket);
  free(pT->aRow);
  free(pT);
}

size_t px_join_table_bytes(const px_join_table *pT){
  if( pT==0 ) return 0;
  if( pT->aDirect ){
    return sizeof(*pT) + pT->nDirect * sizeof(uint64_t)
         + (pT->aRow ? pT->nValid * sizeof(uint32_t) : 0);
  }
  return sizeof(*pT) + (size_t)pT->nKey * sizeof(join_key)
       + (((size_t)1 << pT->nBits) + 1) * sizeof(uint32_t)
       + (pT->aRow ? pT->nValid * sizeof(uint32_t) : 0);
}

int px_join_build(const uint64_t *const *aaWord, int nWord, size_t nBuild,
                  const uint8_t *aSkip, int nthreads, px_join_table **ppT){
  px_stop *pStop = px_stop_installed();
  size_t nb = px_nblocks(nBuild);
  px_join_table *pT;
  build_ctx x;
  int rc = PX_OK, w;

  assert( nWord>=1 && nWord<=PX_JOIN_MAX_WORDS );
  *ppT = 0;
  if( nBuild>UINT32_MAX - 1 ) return PX_ETOOBIG;
  memset(&x, 0, sizeof(x));
  pT = calloc(1, sizeof(*pT));
  if( pT==0 ) return PX_ENOMEM;
  for(w=0; w<nWord; w++) pT->aW[w] = aaWord[w];
  pT->nWord = nWord;
  pT->bExact = nWord==1 && PX_JOIN_HASH_BITS>=64;
  pT->nBuild = nBuild;
  x.pT = pT;
  x.aSkip = aSkip;
  x.aCnt = malloc((nb + 1) * sizeof(size_t));
  x.aTag = malloc((nBuild ? nBuild : 1) * sizeof(uint64_t));
  x.aRow = malloc((nBuild ? nBuild : 1) * sizeof(uint32_t));
  if( x.aCnt==0 || x.aTag==0 || x.aRow==0 ){ rc = PX_ENOMEM; goto build_done; }

  /* The tags of the rows not skipped, sorted. */
  if( aSkip ){
    if( join_blocks(nBuild, nthreads, pStop, &x, build_count) ){ rc = PX_EINTR; goto build_done; }
    join_scan(x.aCnt, nb);
    pT->nValid = x.aCnt[nb];
  }else{
    pT->nValid = nBuild;
  }
  if( nWord==1 ){
    rc = join_direct(pT, aaWord[0], aSkip, pStop);
    if( rc || pT->aDirect ) goto build_done;
  }
  if( join_blocks(nBuild, nthreads, pStop, &x, build_tags) ){ rc = PX_EINTR; goto build_done; }
  rc = px_sort_u64_perm(x.aTag, x.aRow, pT->nValid, nthreads);
  if( rc ) goto build_done;
  if( !pT->bExact
   && join_blocks(pT->nValid, nthreads, pStop, &x, build_collide) ){
    rc = PX_EINTR;
    goto build_done;
  }

  /* The keys. */
  nb = px_nblocks(pT->nValid);
  if( join_blocks(pT->nValid, nthreads, pStop, &x, build_count_keys) ){
    rc = PX_EINTR;
    goto build_done;
  }
  join_scan(x.aCnt, nb);
  pT->nKey = (uint32_t)x.aCnt[nb];
  pT->aKey = malloc((pT->nKey ? pT->nKey : 1) * sizeof(join_key));
  if( pT->aKey==0 ){ rc = PX_ENOMEM; goto build_done; }
  if( join_blocks(pT->nValid, nthreads, pStop, &x, build_keys) ){ rc = PX_EINTR; goto build_done; }

  /* The buckets: as many as keys, rounded up to a power of two. */
  while( ((size_t)1 << pT->nBits) < pT->nKey ) pT->nBits++;
  pT->aBucket = malloc((((size_t)1 << pT->nBits) + 1) * sizeof(uint32_t));
  if( pT->aBucket==0 ){ rc = PX_ENOMEM; goto build_done; }
  if( pT->nKey==0 ){
    pT->aBucket[0] = pT->aBucket[1] = 0;
  }else if( join_blocks(pT->nKey, nthreads, pStop, &x, build_buckets) ){
    rc = PX_EINTR;
    goto build_done;
  }

  /* The rows of each key, needed only when some key has several. */
  if( pT->nKey<pT->nValid ){
    pT->aRow = x.aRow;             /* handed over to the table */
    x.aRow = 0;
  }

build_done:
  free(x.aCnt);
  free(x.aTag);
  free(x.aRow);
  if( rc ){
    px_join_table_free(pT);
    return rc;
  }
  *ppT = pT;
  return PX_OK;
}

/* ---- probe -------------------------------------------------------------------- */

typedef struct probe_ctx {
  const px_join_table *pT;
  const uint64_t *const *aaP;
  const uint8_t *aSkip;
  px_join_result *pR;
} probe_ctx;

/* The output rows of a probe row whose key has nRow build rows. */
static inline size_t probe_nout(int eKind, uint32_t nRow){
  switch( eKind ){
    case PX_JOIN_INNER: return nRow;
    case PX_JOIN_LEFT:  return nRow ? nRow : 1;
    case PX_JOIN_SEMI:  return nRow!=0;
    default:            return nRow==0;
  }
}

static void probe_block_hash(const probe_ctx *p, size_t b, size_t lo, size_t hi);

/* Looks up every row of a block, in groups of JOIN_GROUP: first the tags
** and buckets (prefetching the bucket starts), then the buckets' ranges
** (prefetching their first keys), then the keys.  Writes each row's state
** and the block's output count. */
static void probe_block(void *pCtx, size_t b, size_t lo, size_t hi){
  const probe_ctx *p = pCtx;
  const px_join_table *pT = p->pT;
  if( pT->aDirect ){
    /* Dense keys: one read per row. */
    const uint64_t *aW = p->aaP[0], *aDirect = pT->aDirect, uMin = pT->uMin;
    const uint64_t nDirect = pT->nDirect;
    uint64_t *aSt = p->pR->aState;
    int eKind = p->pR->eKind;
    size_t nOut = 0, i;
    for(i=lo; i<hi; i++){
      uint64_t d = aW[i] - uMin, st = 0;
      if( d<nDirect && (p->aSkip==0 || p->aSkip[i]==0) ) st = aDirect[d];
      aSt[i] = st;
      nOut += probe_nout(eKind, (uint32_t)st);
    }
    p->pR->aOff[b] = nOut;
    return;
  }
  probe_block_hash(p, b, lo, hi);
}

/* probe_block() through the hash table. */
static void probe_block_hash(const probe_ctx *p, size_t b, size_t lo, size_t hi){
  const px_join_table *pT = p->pT;
  const uint32_t *aBucket = pT->aBucket;
  const join_key *aKey = pT->aKey;
  uint64_t *aState = p->pR->aState;
  int nWord = pT->nWord, eKind = p->pR->eKind;
  uint64_t aTag[JOIN_GROUP];
  uint32_t aLo[JOIN_GROUP], aHi[JOIN_GROUP];
  uint8_t aLook[JOIN_GROUP];
  size_t nOut = 0, g, i, m;
  for(g=lo; g<hi; g+=m){
    m = hi - g < JOIN_GROUP ? hi - g : JOIN_GROUP;
    for(i=0; i<m; i++){
      aLook[i] = p->aSkip==0 || p->aSkip[g+i]==0;
      if( !aLook[i] ) continue;
      aTag[i] = join_tag(p->aaP, nWord, g + i);
      aLo[i] = join_bucket(aTag[i], pT->nBits);
      __builtin_prefetch(aBucket + aLo[i]);
    }
    for(i=0; i<m; i++){
      if( !aLook[i] ){ aLo[i] = aHi[i] = 0; continue; }
      aHi[i] = aBucket[aLo[i] + (size_t)1];
      aLo[i] = aBucket[aLo[i]];
      __builtin_prefetch(aKey + aLo[i]);
    }
    for(i=0; i<m; i++){
      uint64_t st = 0;
      uint32_t k;
      for(k=aLo[i]; k<aHi[i]; k++){
        if( aKey[k].tag!=aTag[i] ) continue;
        if( !pT->bExact ){
          uint32_t r = aKey[k].nRow==1 ? aKey[k].iRow : pT->aRow[aKey[k].iRow];
          if( !join_same(p->aaP, g + i, pT->aW, r, nWord) ) continue;
        }
        st = (uint64_t)aKey[k].iRow << 32 | aKey[k].nRow;
        break;
      }
      aState[g+i] = st;
      nOut += probe_nout(eKind, (uint32_t)st);
    }
  }
  p->pR->aOff[b] = nOut;
}

void px_join_result_free(px_join_result *pR){
  if( pR==0 ) return;
  free(pR->aState);
  free(pR->aOff);
  free(pR);
}

int px_join_probe(const px_join_table *pT, const uint64_t *const *aaProbe, size_t nProbe,
                  const uint8_t *aSkip, int eKind, int nthreads, px_join_result **ppR,
                  size_t *pnOut){
  px_stop *pStop = px_stop_installed();
  size_t nb = px_nblocks(nProbe);
  px_join_result *pR;
  probe_ctx x;
  int rc = PX_OK;

  assert( eKind>=PX_JOIN_INNER && eKind<=PX_JOIN_ANTI );
  *ppR = 0;
  *pnOut = 0;
  if( nProbe>UINT32_MAX - 1 ) return PX_ETOOBIG;
  pR = calloc(1, sizeof(*pR));
  if( pR==0 ) return PX_ENOMEM;
  pR->pT = pT;
  pR->eKind = eKind;
  pR->nProbe = nProbe;
  pR->aState = malloc((nProbe ? nProbe : 1) * sizeof(uint64_t));
  pR->aOff = malloc((nb + 1) * sizeof(size_t));
  if( pR->aState==0 || pR->aOff==0 ){
    rc = PX_ENOMEM;
  }else{
    x.pT = pT;
    x.aaP = aaProbe;
    x.aSkip = aSkip;
    x.pR = pR;
    if( join_blocks(nProbe, nthreads, pStop, &x, probe_block) ){
      rc = PX_EINTR;
    }else if( join_scan(pR->aOff, nb) ){
      rc = PX_ETOOBIG;
    }
  }
  if( rc ){
    px_join_result_free(pR);
    return rc;
  }
  *ppR = pR;
  *pnOut = pR->aOff[nb];
  return PX_OK;
}

/* ---- emit --------------------------------------------------------------------- */

typedef struct emit_ctx {
  const px_join_result *pR;
  uint32_t *aProbe, *aBuild;
} emit_ctx;

/* Writes the output rows of a block from its first output slot. */
static void emit_block(void *pCtx, size_t b, size_t lo, size_t hi){
  const emit_ctx *p = pCtx;
  const px_join_result *pR = p->pR;
  const uint32_t *aRow = pR->pT->aRow;
  const uint64_t *aState = pR->aState;
  uint32_t *aProbe = p->aProbe, *aBuild = p->aBuild;
  size_t j = pR->aOff[b], i;
  int eKind = pR->eKind;
  if( eKind==PX_JOIN_SEMI || eKind==PX_JOIN_ANTI ){
    uint32_t want = eKind==PX_JOIN_SEMI;
    for(i=lo; i<hi; i++){
      if( ((uint32_t)aState[i]!=0)==want ) aProbe[j++] = (uint32_t)i;
    }
    return;
  }
  for(i=lo; i<hi; i++){
    uint32_t nRow = (uint32_t)aState[i], iRow = (uint32_t)(aState[i] >> 32), k;
    if( nRow<=1 ){
      if( nRow==0 && eKind==PX_JOIN_INNER ) continue;
      aProbe[j] = (uint32_t)i;
      if( aBuild ) aBuild[j] = nRow ? iRow : PX_JOIN_NONE;
      j++;
      continue;
    }
    for(k=0; k<nRow; k++) aProbe[j+k] = (uint32_t)i;
    if( aBuild ) memcpy(aBuild + j, aRow + iRow, (size_t)nRow * sizeof(uint32_t));
    j += nRow;
  }
}

int px_join_emit(px_join_result *pR, uint32_t *aProbe, uint32_t *aBuild, int nthreads){
  emit_ctx x;
  int bStop;
  x.pR = pR;
  x.aProbe = aProbe;
  x.aBuild = aBuild;
  bStop = join_blocks(pR->nProbe, nthreads, px_stop_installed(), &x, emit_block);
  px_join_result_free(pR);
  return bStop ? PX_EINTR : PX_OK;
}
