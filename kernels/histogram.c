/*
** histogram.c: counts per bin (histogram.h).
**
** How it works.  Each thread counts its share of the blocks (a contiguous
** range of them) into a private histogram (no atomics, no sharing of cache
** lines while counting); then the threads add the private histograms up,
** each taking a range of bins.  Counting itself spreads consecutive
** elements over HIST_COPIES copies of the counters when the bins fit in
** L1, so that runs of the same bin do not wait on each other's increments.
**
** Binning values against edges (px_histogram_f64 / _i64) fuses the bin
** computation into that counting loop: no index array is written.  For
** each value the bin is guessed as floor((x - lo) * nBin / (hi - lo)),
** clamped to a real bin, and accepted only if aEdge[b] <= x < aEdge[b+1];
** anything else (a rounding miss, a value out of range, the closed top
** edge, NaN, unequal edges) goes through a binary search for the number
** of edges <= x.  The accepted answer is the same either way, so results
** depend on the edges alone.  Integers within 2^53 are exact as doubles
** and take the same path; larger ones are compared with the edges
** exactly.
*/
#include "histogram.h"
#include <assert.h>
#include <math.h>
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

/* ---- binning against edges ---------------------------------------------- */

/* Everything the slot of one value is computed from. */
typedef struct bin_spec {
  const double *aEdge;   /* nBin + 1 edges, non-decreasing */
  uint32_t nBin;
  double lo, hi;         /* aEdge[0] and aEdge[nBin] */
  double scale;          /* nBin / (hi - lo), or 0 when not finite */
  double tMax;           /* the highest bin, nBin - 1, as a double */
} bin_spec;

static void bin_spec_init(bin_spec *p, const double *aEdge, uint32_t nBin){
  double r;
  assert( nBin>=1 );
  p->aEdge = aEdge;
  p->nBin = nBin;
  p->lo = aEdge[0];
  p->hi = aEdge[nBin];
  r = (double)nBin / (p->hi - p->lo);
  p->scale = r>0.0 && r<INFINITY ? r : 0.0;
  p->tMax = (double)(nBin - 1);
}

void px_edges_uniform(double lo, double hi, uint32_t nBin, double *aEdge){
  uint32_t b;
  assert( nBin>=1 && lo<=hi );
  aEdge[0] = lo;
  if( !isinf(hi - lo) ){
    double w = (hi - lo) / (double)nBin;
    for(b=1; b<nBin; b++){
      double e = lo + (double)b * w;
      aEdge[b] = e < hi ? e : hi;
    }
  }else{
    /* The range is wider than DBL_MAX: the same with everything halved
    ** (exact for numbers this large), doubled at the end. */
    double w = (hi/2 - lo/2) / (double)nBin;
    for(b=1; b<nBin; b++){
      double e = 2 * (lo/2 + (double)b * w);
      aEdge[b] = e < hi ? e : hi;
    }
  }
  aEdge[nBin] = hi;
}

/* The slot of x by binary search: the number of edges <= x, less one
** when x is the top edge (the last bin is closed); NaN has its own slot. */
static uint32_t slot_search_f64(const bin_spec *p, double x){
  const double *e = p->aEdge;
  size_t lo = 0, len = (size_t)p->nBin + 1;
  if( x!=x ) return p->nBin + 2;
  while( len>0 ){
    size_t h = len / 2;
    if( e[lo+h]<=x ){
      lo += h + 1;
      len -= h + 1;
    }else{
      len = h;
    }
  }
  return (uint32_t)lo - (x==p->hi);
}

/* e <= x exactly, for a finite double e and an int64 x. */
static int edge_le_i64(double e, int64_t x){
  if( e < -9223372036854775808.0 ) return 1;
  if( e >= 9223372036854775808.0 ) return 0;
  return (int64_t)ceil(e) <= x;      /* x is an integer */
}

/* e == x exactly. */
static int edge_eq_i64(double e, int64_t x){
  return e >= -9223372036854775808.0 && e < 9223372036854775808.0
      && (double)(int64_t)e == e && (int64_t)e == x;
}

/* slot_search_f64() for an integer beyond 2^53, with exact comparisons. */
static uint32_t slot_search_i64(const bin_spec *p, int64_t x){
  const double *e = p->aEdge;
  size_t lo = 0, len = (size_t)p->nBin + 1;
  while( len>0 ){
    size_t h = len / 2;
    if( edge_le_i64(e[lo+h], x) ){
      lo += h + 1;
      len -= h + 1;
    }else{
      len = h;
    }
  }
  if( lo==(size_t)p->nBin + 1 && edge_eq_i64(p->hi, x) ) lo--;   /* the closed top */
  return (uint32_t)lo;
}

#define HIST_SMALL_SLOTS (HIST_SMALL + 3)
#define SKIPPED(aSkip, k) ((aSkip) && ((aSkip)[(k)>>3] >> ((k)&7)) & 1)

/* Elements binned per chunk: each pass over a chunk works in L1. */
#define BIN_CHUNK 256

/* Clamps a guess t (bins from lo) to a bin, 0..nBin-1; NaN gives 0. */
static inline uint32_t guess_bin(const bin_spec *p, double t){
  t = t > 0.0 ? t : 0.0;
  t = t < p->tMax ? t : p->tMax;
  return (uint32_t)(int32_t)t;
}

/* The slots of aX[0..m-1] (m <= BIN_CHUNK) into aS[0..m-1].  First every
** guess, in a loop the compiler vectorizes; then each guess is kept if x
** lies within its bin's edges, else replaced by the searched slot. */
static void slots_f64(const bin_spec *p, const double *aX, size_t m, uint32_t *aS){
  const double *e = p->aEdge, lo = p->lo, scale = p->scale;
  size_t i;
  for(i=0; i<m; i++) aS[i] = guess_bin(p, (aX[i] - lo) * scale);
  for(i=0; i<m; i++){
    double x = aX[i];
    uint32_t b = aS[i];
    aS[i] = e[b]<=x && x<e[b+1] ? b + 1 : slot_search_f64(p, x);
  }
}

/* The same for int64: within +-2^53 the double is x itself, so double
** comparisons are exact; beyond, exact comparisons. */
static void slots_i64(const bin_spec *p, const int64_t *aX, size_t m, uint32_t *aS){
  const double *e = p->aEdge, lo = p->lo, scale = p->scale;
  size_t i;
  for(i=0; i<m; i++) aS[i] = guess_bin(p, ((double)aX[i] - lo) * scale);
  for(i=0; i<m; i++){
    int64_t v = aX[i];
    double x = (double)v;
    uint32_t b = aS[i];
    if( (uint64_t)v + ((uint64_t)1 << 53) > ((uint64_t)1 << 54) ){
      aS[i] = slot_search_i64(p, v);
    }else{
      aS[i] = e[b]<=x && x<e[b+1] ? b + 1 : slot_search_f64(p, x);
    }
  }
}

/* Adds the slots aS[0..m-1] of elements k0.. whose aSkip bit is clear to
** the counters: HIST_COPIES interleaved 32-bit copies a[j*nStride + slot]
** (runs of one slot do not wait on each other's increments), or the
** 64-bit aCount directly when a is NULL. */
static void count_slots(const uint32_t *aS, size_t m, const uint8_t *aSkip, size_t k0,
                        uint32_t *a, size_t nStride, uint64_t *aCount){
  size_t i = 0;
  if( a==0 ){
    for(i=0; i<m; i++){
      if( !SKIPPED(aSkip, k0 + i) ) aCount[aS[i]]++;
    }
    return;
  }
  if( aSkip==0 ){
    for(; i+HIST_COPIES<=m; i+=HIST_COPIES){
      int j;
      for(j=0; j<HIST_COPIES; j++) a[j*nStride + aS[i+j]]++;
    }
  }
  for(; i<m; i++){
    if( !SKIPPED(aSkip, k0 + i) ) a[(i % HIST_COPIES)*nStride + aS[i]]++;
  }
}

/* Adds the slot counts of the elements [lo, hi) of aX (int64 if bInt,
** else double) not skipped by aSkip to aCount[0..nBin+2]. */
static void bin_range(const bin_spec *p, const void *aX, int bInt, const uint8_t *aSkip,
                      size_t lo, size_t hi, uint64_t *aCount){
  uint32_t aS[BIN_CHUNK];
  uint32_t a[HIST_COPIES * HIST_SMALL_SLOTS];   /* small histograms, in L1 */
  size_t nSlot = PX_HIST_SLOTS(p->nBin), s, k;
  int bSmall = nSlot<=HIST_SMALL_SLOTS;
  while( lo<hi ){
    size_t end = hi - lo > HIST_FLUSH ? lo + HIST_FLUSH : hi;
    if( bSmall ) memset(a, 0, HIST_COPIES * nSlot * sizeof(uint32_t));
    for(k=lo; k<end; k+=BIN_CHUNK){
      size_t m = end - k < BIN_CHUNK ? end - k : BIN_CHUNK;
      if( bInt ) slots_i64(p, (const int64_t*)aX + k, m, aS);
      else slots_f64(p, (const double*)aX + k, m, aS);
      count_slots(aS, m, aSkip, k, bSmall ? a : 0, nSlot, aCount);
    }
    if( bSmall ){
      for(s=0; s<nSlot; s++){
        uint64_t c = 0;
        int j;
        for(j=0; j<HIST_COPIES; j++) c += a[j*nSlot + s];
        aCount[s] += c;
      }
    }
    lo = end;
  }
}

/* Both histograms: private per-thread counts over contiguous runs of
** blocks, then a reduction slot by slot. */
static uint64_t bin_histogram(const bin_spec *p, const void *aX, int bInt,
                              const uint8_t *aSkip, size_t n, uint64_t *aCount,
                              int nthreads){
  size_t nSlot = PX_HIST_SLOTS(p->nBin), s;
  int nt = px_threads_for(px_nblocks(n), nthreads);
  uint64_t *aPriv;     /* nt private histograms of nSlot counts, owned here */
  uint64_t nTotal = 0;
  memset(aCount, 0, nSlot * sizeof(uint64_t));
  aPriv = nt > 1 ? calloc((size_t)nt * nSlot, sizeof(uint64_t)) : 0;
  if( aPriv==0 ){
    bin_range(p, aX, bInt, aSkip, 0, n, aCount);
  }else{
    #pragma omp parallel num_threads(nt)
    {
      int iMe = omp_get_thread_num(), nTeam = omp_get_num_threads(), t;
      uint64_t *aMine = aPriv + (size_t)iMe * nSlot;
      size_t lo, hi, k;
      px_team_range(n, iMe, nTeam, &lo, &hi);
      bin_range(p, aX, bInt, aSkip, lo, hi, aMine);
      #pragma omp barrier
      #pragma omp for schedule(static)
      for(k=0; k<nSlot; k++){
        uint64_t c = 0;
        for(t=0; t<nTeam; t++) c += aPriv[(size_t)t*nSlot + k];
        aCount[k] = c;
      }
    }
    free(aPriv);
  }
  for(s=0; s<nSlot; s++) nTotal += aCount[s];
  return nTotal;
}

uint64_t px_histogram_f64(const double *aX, const uint8_t *aSkip, size_t n,
                          const double *aEdge, uint32_t nBin, uint64_t *aCount,
                          int nthreads){
  bin_spec spec;
  bin_spec_init(&spec, aEdge, nBin);
  return bin_histogram(&spec, aX, 0, aSkip, n, aCount, nthreads);
}

uint64_t px_histogram_i64(const int64_t *aX, const uint8_t *aSkip, size_t n,
                          const double *aEdge, uint32_t nBin, uint64_t *aCount,
                          int nthreads){
  bin_spec spec;
  bin_spec_init(&spec, aEdge, nBin);
  return bin_histogram(&spec, aX, 1, aSkip, n, aCount, nthreads);
}

/* ---- ranges ------------------------------------------------------------- */

typedef struct range_ctx { const void *aX; const uint8_t *aSkip; } range_ctx;
typedef struct range_f64 { double mn, mx; uint64_t n; } range_f64;
typedef struct range_i64 { int64_t mn, mx; uint64_t n; } range_i64;

/* Four independent lanes of branch-free min/max: no loop-carried chain
** through one accumulator, no unpredictable branch on skipped or
** non-finite elements (x - x is 0 only for finite x). */
static void range_f64_reduce(void *pCtx, size_t lo, size_t hi, void *pSum){
  const range_ctx *c = (const range_ctx*)pCtx;
  const double *aX = (const double*)c->aX;
  const uint8_t *aSkip = c->aSkip;
  double mn[4] = { INFINITY, INFINITY, INFINITY, INFINITY };
  double mx[4] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY };
  uint64_t n = 0;
  range_f64 r = { 0.0, 0.0, 0 };
  size_t k = lo;
  int j;
  #define RANGE_F64_STEP(J, X, KEEP) {                         \
    double x_ = (X);                                           \
    int ok_ = (x_ - x_)==0.0 && (KEEP);                        \
    double l_ = ok_ ? x_ : INFINITY, h_ = ok_ ? x_ : -INFINITY; \
    mn[J] = l_ < mn[J] ? l_ : mn[J];                           \
    mx[J] = h_ > mx[J] ? h_ : mx[J];                           \
    n += (uint64_t)ok_;                                        \
  }
  if( aSkip==0 ){
    for(; k+4<=hi; k+=4){
      for(j=0; j<4; j++) RANGE_F64_STEP(j, aX[k+j], 1)
    }
  }
  for(; k<hi; k++) RANGE_F64_STEP(k & 3, aX[k], !SKIPPED(aSkip, k))
  #undef RANGE_F64_STEP
  for(j=1; j<4; j++){
    if( mn[j] < mn[0] ) mn[0] = mn[j];
    if( mx[j] > mx[0] ) mx[0] = mx[j];
  }
  if( n ){
    r.mn = mn[0];
    r.mx = mx[0];
    r.n = n;
  }
  memcpy(pSum, &r, sizeof(r));
}

static void range_f64_combine(void *pCtx, void *pAcc, const void *pSum){
  range_f64 *a = (range_f64*)pAcc;
  const range_f64 *s = (const range_f64*)pSum;
  if( s->n==0 ) return;
  if( a->n==0 ){ *a = *s; return; }
  if( s->mn < a->mn ) a->mn = s->mn;
  if( s->mx > a->mx ) a->mx = s->mx;
  a->n += s->n;
}

static void range_i64_reduce(void *pCtx, size_t lo, size_t hi, void *pSum){
  const range_ctx *c = (const range_ctx*)pCtx;
  const int64_t *aX = (const int64_t*)c->aX;
  const uint8_t *aSkip = c->aSkip;
  int64_t mn[4] = { INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX };
  int64_t mx[4] = { INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN };
  uint64_t n = 0;
  range_i64 r = { 0, 0, 0 };
  size_t k = lo;
  int j;
  #define RANGE_I64_STEP(J, X, KEEP) {                         \
    int64_t x_ = (X);                                          \
    int ok_ = (KEEP);                                          \
    int64_t l_ = ok_ ? x_ : INT64_MAX, h_ = ok_ ? x_ : INT64_MIN; \
    mn[J] = l_ < mn[J] ? l_ : mn[J];                           \
    mx[J] = h_ > mx[J] ? h_ : mx[J];                           \
    n += (uint64_t)ok_;                                        \
  }
  if( aSkip==0 ){
    for(; k+4<=hi; k+=4){
      for(j=0; j<4; j++) RANGE_I64_STEP(j, aX[k+j], 1)
    }
  }
  for(; k<hi; k++) RANGE_I64_STEP(k & 3, aX[k], !SKIPPED(aSkip, k))
  #undef RANGE_I64_STEP
  for(j=1; j<4; j++){
    if( mn[j] < mn[0] ) mn[0] = mn[j];
    if( mx[j] > mx[0] ) mx[0] = mx[j];
  }
  if( n ){
    r.mn = mn[0];
    r.mx = mx[0];
    r.n = n;
  }
  memcpy(pSum, &r, sizeof(r));
}

static void range_i64_combine(void *pCtx, void *pAcc, const void *pSum){
  range_i64 *a = (range_i64*)pAcc;
  const range_i64 *s = (const range_i64*)pSum;
  if( s->n==0 ) return;
  if( a->n==0 ){ *a = *s; return; }
  if( s->mn < a->mn ) a->mn = s->mn;
  if( s->mx > a->mx ) a->mx = s->mx;
  a->n += s->n;
}

uint64_t px_range_f64(const double *aX, const uint8_t *aSkip, size_t n,
                      double *pMin, double *pMax, int nthreads){
  static const px_blocked k = { sizeof(range_f64), range_f64_reduce, range_f64_combine, 0 };
  range_ctx c;
  range_f64 acc = { 0.0, 0.0, 0 };
  c.aX = aX;
  c.aSkip = aSkip;
  px_reduce_blocks(&k, &c, n, nthreads, &acc);
  if( acc.n ){
    *pMin = acc.mn;
    *pMax = acc.mx;
  }
  return acc.n;
}

uint64_t px_range_i64(const int64_t *aX, const uint8_t *aSkip, size_t n,
                      int64_t *pMin, int64_t *pMax, int nthreads){
  static const px_blocked k = { sizeof(range_i64), range_i64_reduce, range_i64_combine, 0 };
  range_ctx c;
  range_i64 acc = { 0, 0, 0 };
  c.aX = aX;
  c.aSkip = aSkip;
  px_reduce_blocks(&k, &c, n, nthreads, &acc);
  if( acc.n ){
    *pMin = acc.mn;
    *pMax = acc.mx;
  }
  return acc.n;
}

/* ---- integers as doubles ------------------------------------------------- */

double px_f64_below_i64(int64_t v){
  double d = (double)v;
  /* d is within one step of v; below 2^63 it converts back exactly. */
  if( d >= 9223372036854775808.0 || (int64_t)d > v ) d = nextafter(d, -INFINITY);
  return d;
}

double px_f64_above_i64(int64_t v){
  double d = (double)v;
  if( d < 9223372036854775808.0 && (int64_t)d < v ) d = nextafter(d, INFINITY);
  return d;
}
