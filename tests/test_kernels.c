/*
** test_kernels.c: every kernel against a plain serial reference.
**
** Each kernel runs on sizes 0, 1, 2, PX_BLOCK-1, PX_BLOCK, PX_BLOCK+1, a
** few multi-block sizes and a large random input, with 1, 2, 3 and
** px_ncores() threads.  The build with -DPX_BLOCK=8 -DPX_PAR_MIN_BLOCKS=1
** (build/test_kernels_tiny) runs the same tests through the multi-block
** and multi-thread paths on small inputs.
**
** What is compared:
**   - integer results: exactly equal to the reference;
**   - double results: bit-identical for every thread count, and close to
**     the left-to-right reference: |got - want| <= 2 (k+1) DBL_EPSILON *
**     (|x_0| + ... + |x_k|) for an element that sums k+1 inputs (both the
**     blocked and the serial sum have error at most about (k+1) u times
**     that sum of magnitudes, u = DBL_EPSILON/2, and each path adds at most
**     k+1 further roundings).  Sums of small integers are exact in any
**     order, and must then equal the reference exactly; min, max and count
**     must always equal it bit for bit;
**   - f64 reduce sum: against a binary128 reference, within Neumaier's
**     bound 2u|s| + 4 n u^2 sum|x|, and exact on 1e16, 1, -1e16 patterns
**     where plain summation returns 0;
**   - sort: keys and permutation equal to a stable qsort over (key, index);
**   - binning against edges: every slot count equal to a linear count of
**     the edges <= x per value, compared in long double (exact for int64
**     and double alike);
**   - sorting doubles: bit-identical to qsort by value (-0.0 before +0.0);
**   - keys of several words, counting sort by bin, segment heads, offsets
**     and ids: exactly equal to a plain serial loop (a stable qsort over
**     (words, row) for the sort), for every thread count;
**   - top k: the first min(k, n) rows of px_sort_words_perm(), for k from
**     0 past n, on keys with many ties and on decreasing keys;
**   - packed keys: the words of an independent packing, whose order and
**     equal keys are those of the original keys (a stable qsort by each);
**   - joins: the exact pairs, in order, of a reference that sorts the build
**     side and binary-searches each probe row (itself checked against the
**     literal nested loop on small sides), for every kind; the tiny-block
**     build keeps 5 bits of hash (join.h), so there every key collides.
**
** Run it with CHECK_SEED=n to change the random inputs.
*/
#include "check.h"
#include "par.h"
#include "sort.h"
#include "scan.h"
#include "reduce.h"
#include "gather.h"
#include "segment.h"
#include "histogram.h"
#include "quantile.h"
#include "topk.h"
#include "keys.h"
#include "join.h"
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/resource.h>
#include <unistd.h>
#endif

#define B PX_BLOCK

static int aThr[4], nThr;          /* the thread counts under test */
static size_t aSize[16];           /* sizes under test (small to large) */
static int nSize;
static check_rng rng;

/* ---- helpers ------------------------------------------------------------ */

static void *xmalloc(size_t n){
  void *p = malloc(n ? n : 1);
  if( p==0 ){ fprintf(stderr, "out of memory\n"); exit(2); }
  return p;
}

static double rand_unit(void){      /* uniform in [-1, 1) */
  return (double)(int64_t)check_next(&rng) / 9223372036854775808.0;
}

/* Bitwise equality of doubles (NaN == NaN, -0.0 != +0.0). */
static int same_f64(double a, double b){
  return memcmp(&a, &b, sizeof(a))==0;
}

/* CHECKs that two integer arrays are equal; reports the first difference. */
static void check_u64s(const uint64_t *got, const uint64_t *want, size_t n, const char *z){
  size_t i;
  for(i=0; i<n && got[i]==want[i]; i++){}
  CHECK(i==n, "%s[%zu]: got %llu want %llu", z, i,
        (unsigned long long)(i<n ? got[i] : 0), (unsigned long long)(i<n ? want[i] : 0));
}
static void check_u32s(const uint32_t *got, const uint32_t *want, size_t n, const char *z){
  size_t i;
  for(i=0; i<n && got[i]==want[i]; i++){}
  CHECK(i==n, "%s[%zu]: got %u want %u", z, i, i<n ? got[i] : 0, i<n ? want[i] : 0);
}
static void check_f64s_same(const double *got, const double *want, size_t n, const char *z){
  size_t i;
  for(i=0; i<n && same_f64(got[i], want[i]); i++){}
  CHECK(i==n, "%s[%zu]: got %a want %a", z, i, i<n ? got[i] : 0, i<n ? want[i] : 0);
}

/* CHECKs |got[i] - want[i]| <= 2 (k+1) eps A where k counts the inputs
** summed into element i since aStart[i] (its segment start; 0 for a plain
** scan) and A is the sum of their magnitudes, kept in aAbs[i]. */
static void check_f64s_close(const double *got, const double *want, const double *aAbs,
                             const size_t *aStart, size_t n, const char *z){
  size_t i;
  for(i=0; i<n; i++){
    double k = (double)(i - (aStart ? aStart[i] : 0) + 1);
    double tol = 2 * k * DBL_EPSILON * aAbs[i];
    if( !(fabs(got[i] - want[i]) <= tol) ) break;
  }
  CHECK(i==n, "%s[%zu]: got %.17g want %.17g", z, i, i<n ? got[i] : 0, i<n ? want[i] : 0);
}

/* Fills a[0..n-1] with random bytes (full-range 64-bit values). */
static void fill_u64(uint64_t *a, size_t n){
  size_t i;
  for(i=0; i<n; i++) a[i] = check_next(&rng);
}

/* ---- par.h ---------------------------------------------------------------- */

static void test_par(void){
  size_t n, t, lo, hi, prev;
  int rc, T;
  check_case("par: px_threads_for");
  CHECK(px_threads_for(0, 8)==1, "0 blocks");
  CHECK(px_threads_for(PX_PAR_MIN_BLOCKS, 8)==1, "at the cutoff");
  CHECK(px_threads_for(PX_PAR_MIN_BLOCKS+1, 1)==1, "one thread allowed");
  CHECK(px_threads_for(PX_PAR_MIN_BLOCKS+1, 0)==1, "zero threads allowed");
  CHECK(px_threads_for(PX_PAR_MIN_BLOCKS+1, 1000)==PX_PAR_MIN_BLOCKS+1, "capped by blocks");
  CHECK(px_threads_for(1000, 3)==3, "capped by nthreads");

  check_case("par: px_ncores, px_errstr");
  CHECK(px_ncores()>=1, "ncores %d", px_ncores());
  for(rc=PX_OK; rc<=PX_ETOOBIG; rc++){
    CHECK(px_errstr(rc) && px_errstr(rc)[0], "rc %d has no name", rc);
    CHECK(rc==0 || strcmp(px_errstr(rc), px_errstr(rc-1))!=0, "rc %d same name", rc);
  }
  CHECK(strcmp(px_errstr(99), px_errstr(PX_ENOMEM))!=0, "unknown code");

  check_case("par: px_team_range covers [0,n) in block-aligned order");
  for(n=0; n<=9*B+1; n += B/2 + 1){
    for(T=1; T<=5; T++){
      prev = 0;
      for(t=0; t<(size_t)T; t++){
        px_team_range(n, (int)t, T, &lo, &hi);
        CHECK(lo==prev && lo<=hi && (lo%B==0 || lo==n), "n=%zu T=%d t=%zu", n, T, t);
        prev = hi;
      }
      CHECK(prev==n, "n=%zu T=%d ends at %zu", n, T, prev);
    }
  }
}

/* ---- scan.h: plain scans ------------------------------------------------- */

/* The references: left to right, starting from 0 (unsigned for i64, so
** that sums wrap). */
#define REF_SCAN(T, NAME)                                                    \
static T NAME(const T *in, T *out, size_t n, int bExcl){                     \
  T s = 0;                                                                   \
  size_t i;                                                                  \
  for(i=0; i<n; i++){                                                        \
    if( bExcl ){ out[i] = s; s += in[i]; }else{ s += in[i]; out[i] = s; }    \
  }                                                                          \
  return s;                                                                  \
}
REF_SCAN(uint64_t, ref_scan_u64)
REF_SCAN(double, ref_scan_f64)

static void test_scan_i64(void){
  int iz, it, bExcl, bInPlace;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz];
    uint64_t *in = xmalloc(n * 8), *ref = xmalloc(n * 8), *out = xmalloc(n * 8);
    uint64_t tot, want;
    fill_u64(in, n);               /* full range: the sums wrap */
    for(bExcl=0; bExcl<2; bExcl++){
      want = ref_scan_u64(in, ref, n, bExcl);
      for(it=0; it<nThr; it++){
        for(bInPlace=0; bInPlace<2; bInPlace++){
          const uint64_t *src = in;
          check_case("scan_%s_i64 n=%zu threads=%d%s", bExcl ? "excl" : "incl", n,
                     aThr[it], bInPlace ? " in place" : "");
          if( bInPlace ){ memcpy(out, in, n * 8); src = out; }
          tot = (uint64_t)(bExcl ? px_scan_excl_i64 : px_scan_incl_i64)(
              (const int64_t*)src, (int64_t*)out, n, aThr[it]);
          CHECK(tot==want, "total %llu want %llu", (unsigned long long)tot,
                (unsigned long long)want);
          check_u64s(out, ref, n, "out");
        }
      }
    }
    free(in); free(ref); free(out);
  }
}

/* Doubles of three kinds: small integers (every sum exact), random reals
** of mixed magnitude and sign, and all -0.0. */
static void fill_f64(double *a, size_t n, int kind){
  size_t i;
  for(i=0; i<n; i++){
    switch( kind ){
      case 0: a[i] = (double)((int64_t)check_below(&rng, 2001) - 1000); break;
      case 1: a[i] = ldexp(rand_unit(), (int)check_below(&rng, 40) - 20); break;
      default: a[i] = -0.0; break;
    }
  }
}

static void test_scan_f64(void){
  int iz, it, bExcl, kind;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz], i;
    double *in = xmalloc(n * 8), *ref = xmalloc(n * 8), *out = xmalloc(n * 8);
    double *first = xmalloc(n * 8), *aAbs = xmalloc(n * 8);
    for(kind=0; kind<3; kind++){
      fill_f64(in, n, kind);
      for(i=0; i<n; i++) aAbs[i] = (i ? aAbs[i-1] : 0) + fabs(in[i]);
      for(bExcl=0; bExcl<2; bExcl++){
        double want = ref_scan_f64(in, ref, n, bExcl), tot, tot1 = 0;
        for(it=0; it<nThr; it++){
          check_case("scan_%s_f64 kind=%d n=%zu threads=%d", bExcl ? "excl" : "incl",
                     kind, n, aThr[it]);
          if( it==nThr-1 ){           /* in place, once */
            memcpy(out, in, n * 8);
            tot = (bExcl ? px_scan_excl_f64 : px_scan_incl_f64)(out, out, n, aThr[it]);
          }else{
            tot = (bExcl ? px_scan_excl_f64 : px_scan_incl_f64)(in, out, n, aThr[it]);
          }
          if( it==0 ){
            memcpy(first, out, n * 8);
            tot1 = tot;
          }
          check_f64s_same(out, first, n, "vs 1 thread");
          CHECK(same_f64(tot, tot1), "total %a vs 1 thread %a", tot, tot1);
          if( kind==0 ){
            check_f64s_same(out, ref, n, "exact");
            CHECK(tot==want, "total %.17g want %.17g", tot, want);
          }else{
            /* An exclusive out[i] sums the inputs before i. */
            if( bExcl && n>0 ){
              CHECK(out[0]==0 && !signbit(out[0]), "out[0] %a", out[0]);
              check_f64s_close(out+1, ref+1, aAbs, 0, n-1, "close");
            }else{
              check_f64s_close(out, ref, aAbs, 0, n, "close");
            }
            CHECK(fabs(tot - want) <= 2*(n+1)*DBL_EPSILON*(n ? aAbs[n-1] : 0),
                  "total %.17g want %.17g", tot, want);
          }
        }
      }
    }
    free(in); free(ref); free(out); free(first); free(aAbs);
  }
  check_case("scan_f64 n=0 totals are +0.0");
  CHECK(!signbit(px_scan_excl_f64(0, 0, 0, 1)) && !signbit(px_scan_incl_f64(0, 0, 0, 1)),
        "signbit");
}

/* ---- scan.h: segmented scans --------------------------------------------- */

/* The references, for T = int64_t (ADD wraps) and double.  f64 min / max
** skip NaNs and keep the earlier of equal values, as scan.h documents (the
** NaN tests are false for int64_t). */
#define REF_SEG(T, NAME, ADD)                                                \
static void NAME(px_op op, const T *in, const uint8_t *aHead, T *out, size_t n){ \
  T s = 0;                                                                   \
  size_t i;                                                                  \
  for(i=0; i<n; i++){                                                        \
    T x = op==PX_COUNT ? 1 : in[i];                                          \
    if( i==0 || aHead[i] ) s = x;                                            \
    else if( op==PX_SUM || op==PX_COUNT ) s = ADD(s, x);                     \
    else if( op==PX_MIN ) s = (x < s || s != s) ? x : s;                     \
    else s = (x > s || s != s) ? x : s;                                      \
    out[i] = s;                                                              \
  }                                                                          \
}
#define ADD_WRAP(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define ADD_PLAIN(a, b) ((a) + (b))
REF_SEG(int64_t, ref_seg_i64, ADD_WRAP)
REF_SEG(double, ref_seg_f64, ADD_PLAIN)

static const char *azOp[] = { "sum", "min", "max", "count" };

/* Doubles for segmented min / max / sum: kind 0 small integers, 1 random
** reals, 2 a mix of special values (NaN, +-0, +-Inf, subnormal, DBL_MAX). */
static double seg_f64_value(int kind){
  static const double aSpecial[] = {
    0.0, -0.0, 1.0, -1.0, 4.9e-324, -4.9e-324, 2.2250738585072009e-308,
    DBL_MAX, -DBL_MAX, 1e300, -1e300
  };
  double v;
  if( kind==0 ) return (double)((int64_t)check_below(&rng, 201) - 100);
  if( kind==1 ) return ldexp(rand_unit(), (int)check_below(&rng, 40) - 20);
  switch( check_below(&rng, 8) ){
    case 0: v = NAN; break;
    case 1: v = check_below(&rng, 2) ? INFINITY : -INFINITY; break;
    case 2: case 3: v = aSpecial[check_below(&rng, sizeof(aSpecial)/sizeof(aSpecial[0]))]; break;
    default: v = rand_unit(); break;
  }
  return v;
}

/* Head flags with about one head per 1/p elements; aOff, aStart the same
** segments as offsets (with some empty segments) and per-element starts. */
static size_t make_segments(uint8_t *aHead, size_t *aOff, size_t *aStart, size_t n, unsigned pm){
  size_t i, nSeg = 0;
  for(i=0; i<n; i++){
    aHead[i] = i==0 || check_below(&rng, 1000) < pm;
    if( aHead[i] && i ){
      if( check_below(&rng, 4)==0 ) aOff[nSeg++] = i;   /* an empty segment */
    }
    if( aHead[i] ) aOff[nSeg++] = i;
    aStart[i] = aHead[i] ? i : aStart[i-1];
  }
  if( n==0 ) aOff[nSeg++] = 0;
  aOff[nSeg] = n;
  return nSeg;
}

static void test_segscan(void){
  static const unsigned aDensity[] = { 0, 2, 100, 900 };   /* heads per 1000 */
  int iz, id, it, op, kind, bOff;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz] > 100000 ? 100000 : aSize[iz], i, nSeg;
    int64_t *inI = xmalloc(n*8), *refI = xmalloc(n*8), *outI = xmalloc(n*8);
    double *inF = xmalloc(n*8), *refF = xmalloc(n*8), *outF = xmalloc(n*8);
    double *firstF = xmalloc(n*8), *aAbs = xmalloc(n*8);
    uint8_t *aHead = xmalloc(n);
    size_t *aOff = xmalloc((2*n + 2) * sizeof(size_t)), *aStart = xmalloc(n * sizeof(size_t));
    for(id=0; id<4; id++){
      nSeg = make_segments(aHead, aOff, aStart, n, aDensity[id]);
      /* i64: full-range values, so sums wrap. */
      for(i=0; i<n; i++) inI[i] = (int64_t)check_next(&rng);
      for(op=PX_SUM; op<=PX_COUNT; op++){
        ref_seg_i64(op, inI, aHead, refI, n);
        for(it=0; it<nThr; it++){
          for(bOff=0; bOff<2; bOff++){
            const int64_t *src = op==PX_COUNT && bOff ? 0 : inI;
            check_case("segscan_i64%s %s n=%zu heads/1000=%u threads=%d", bOff ? "_off" : "",
                       azOp[op], n, aDensity[id], aThr[it]);
            if( it==nThr-1 && op!=PX_COUNT ){ memcpy(outI, inI, n*8); src = outI; }
            if( bOff ){
              CHECK(px_segscan_i64_off(op, src, aOff, nSeg, outI, aThr[it])==PX_OK, "rc");
            }else{
              CHECK(px_segscan_i64(op, src, aHead, outI, n, aThr[it])==PX_OK, "rc");
            }
            check_u64s((uint64_t*)outI, (uint64_t*)refI, n, "out");
          }
        }
      }
      /* f64 */
      for(kind=0; kind<3; kind++){
        for(i=0; i<n; i++){
          inF[i] = seg_f64_value(kind);
          aAbs[i] = (aStart[i]==i ? 0 : aAbs[i-1]) + fabs(inF[i]);
        }
        for(op=PX_SUM; op<=PX_COUNT; op++){
          if( op==PX_SUM && kind==2 ) continue;  /* overflow order: not comparable */
          ref_seg_f64(op, inF, aHead, refF, n);
          for(it=0; it<nThr; it++){
            for(bOff=0; bOff<2; bOff++){
              const double *src = op==PX_COUNT && bOff ? 0 : inF;
              check_case("segscan_f64%s %s kind=%d n=%zu heads/1000=%u threads=%d",
                         bOff ? "_off" : "", azOp[op], kind, n, aDensity[id], aThr[it]);
              if( it==nThr-1 && op!=PX_COUNT ){ memcpy(outF, inF, n*8); src = outF; }
              if( bOff ){
                CHECK(px_segscan_f64_off(op, src, aOff, nSeg, outF, aThr[it])==PX_OK, "rc");
              }else{
                CHECK(px_segscan_f64(op, src, aHead, outF, n, aThr[it])==PX_OK, "rc");
              }
              if( it==0 && bOff==0 ) memcpy(firstF, outF, n*8);
              check_f64s_same(outF, firstF, n, "vs 1 thread");
              if( op==PX_SUM && kind==1 ){
                check_f64s_close(outF, refF, aAbs, aStart, n, "close");
              }else{
                check_f64s_same(outF, refF, n, "exact");
              }
            }
          }
        }
      }
    }
    free(inI); free(refI); free(outI); free(inF); free(refF); free(outF);
    free(firstF); free(aAbs); free(aHead); free(aOff); free(aStart);
  }
}

/* ---- reduce.h -------------------------------------------------------------- */

static void check_reduce_i64(const int64_t *in, size_t n, const char *zWhat){
  __int128 s = 0;
  int64_t mn = INT64_MAX, mx = INT64_MIN, got;
  int it, rc, bFits;
  size_t i;
  for(i=0; i<n; i++){
    s += in[i];
    if( in[i]<mn ) mn = in[i];
    if( in[i]>mx ) mx = in[i];
  }
  bFits = s>=INT64_MIN && s<=INT64_MAX;
  for(it=0; it<nThr; it++){
    check_case("reduce_i64 %s n=%zu threads=%d", zWhat, n, aThr[it]);
    got = 12345;
    rc = px_reduce_i64(PX_SUM, in, n, &got, aThr[it]);
    if( bFits ){
      CHECK(rc==PX_OK && got==(int64_t)s, "sum rc=%d got %lld want %lld", rc,
            (long long)got, (long long)s);
    }else{
      CHECK(rc==PX_EOVERFLOW && got==12345, "sum should overflow: rc=%d", rc);
    }
    rc = px_reduce_i64(PX_MIN, in, n, &got, aThr[it]);
    CHECK(rc==PX_OK && got==mn, "min %lld want %lld", (long long)got, (long long)mn);
    rc = px_reduce_i64(PX_MAX, in, n, &got, aThr[it]);
    CHECK(rc==PX_OK && got==mx, "max %lld want %lld", (long long)got, (long long)mx);
    rc = px_reduce_i64(PX_COUNT, in, n, &got, aThr[it]);
    CHECK(rc==PX_OK && got==(int64_t)n, "count %lld", (long long)got);
  }
}

static void test_reduce_i64(void){
  int iz;
  size_t i;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz];
    int64_t *in = xmalloc(n*8);
    for(i=0; i<n; i++) in[i] = (int64_t)(check_next(&rng) >> 24) - ((int64_t)1 << 39);
    check_reduce_i64(in, n, "random");
    /* Near the limits: intermediate sums overflow int64, the total fits
    ** or not depending on the last element. */
    for(i=0; i<n; i++) in[i] = (i & 1) ? INT64_MIN + 7 : INT64_MAX - 3;
    check_reduce_i64(in, n, "alternating MAX/MIN");
    for(i=0; i<n; i++) in[i] = INT64_MAX - (int64_t)check_below(&rng, 10);
    check_reduce_i64(in, n, "all near MAX");
    for(i=0; i<n; i++) in[i] = INT64_MIN + (int64_t)check_below(&rng, 10);
    check_reduce_i64(in, n, "all near MIN");
    free(in);
  }
  {
    int64_t a[] = { INT64_MAX, 1, -1 }, b[] = { INT64_MAX, 1 }, c[] = { INT64_MIN, -1 };
    int64_t d[] = { INT64_MIN, INT64_MIN, INT64_MAX, INT64_MAX, 1 };
    check_reduce_i64(a, 3, "MAX,1,-1 fits");
    check_reduce_i64(b, 2, "MAX,1 overflows");
    check_reduce_i64(c, 2, "MIN,-1 overflows");
    check_reduce_i64(d, 5, "MIN,MIN,MAX,MAX,1 fits");
  }
}

/* Reference f64 sum in binary128; its own error is far below the bound. */
static double ref_sum_q(const double *in, size_t n, double *pAbs){
  __float128 s = 0;
  double a = 0;
  size_t i;
  for(i=0; i<n; i++){ s += in[i]; a += fabs(in[i]); }
  *pAbs = a;
  return (double)s;
}

static void check_reduce_f64(const double *in, size_t n, const char *zWhat){
  double mn = NAN, mx = NAN, want, aAbs, got, first = 0, u = DBL_EPSILON/2;
  int it, bSpecial = 0;
  size_t i;
  for(i=0; i<n; i++){
    if( in[i] < mn || mn != mn ) mn = in[i];
    if( in[i] > mx || mx != mx ) mx = in[i];
    bSpecial |= !(fabs(in[i]) < 1e300);   /* non-finite, or sums may overflow */
  }
  if( n==0 ){ mn = INFINITY; mx = -INFINITY; }
  want = ref_sum_q(in, n, &aAbs);
  for(it=0; it<nThr; it++){
    check_case("reduce_f64 %s n=%zu threads=%d", zWhat, n, aThr[it]);
    CHECK(px_reduce_f64(PX_SUM, in, n, &got, aThr[it])==PX_OK, "rc");
    if( it==0 ) first = got;
    CHECK(same_f64(got, first), "sum %a vs 1 thread %a", got, first);
    if( !bSpecial ){
      double tol = 2*u*fabs(want) + 4*(double)n*u*u*aAbs;
      CHECK(fabs(got - want) <= tol, "sum %.17g want %.17g (tol %g)", got, want, tol);
    }
    CHECK(px_reduce_f64(PX_MIN, in, n, &got, aThr[it])==PX_OK && same_f64(got, mn),
          "min %a want %a", got, mn);
    CHECK(px_reduce_f64(PX_MAX, in, n, &got, aThr[it])==PX_OK && same_f64(got, mx),
          "max %a want %a", got, mx);
    CHECK(px_reduce_f64(PX_COUNT, in, n, &got, aThr[it])==PX_OK && got==(double)n,
          "count %g", got);
  }
}

static void test_reduce_f64(void){
  int iz;
  size_t i, k;
  double got, naive;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz];
    double *in = xmalloc(n*8);
    fill_f64(in, n, 1);
    check_reduce_f64(in, n, "random");
    /* Ill-conditioned: huge terms cancel, the small ones are the answer. */
    for(i=0; i<n; i++){
      in[i] = ldexp(rand_unit(), (int)check_below(&rng, 100));
      if( i & 1 ) in[i] = -in[i-1] + rand_unit();
    }
    check_reduce_f64(in, n, "cancelling");
    for(i=0; i<n; i++) in[i] = seg_f64_value(2);
    check_reduce_f64(in, n, "special values");
    for(i=0; i<n; i++) in[i] = NAN;
    check_reduce_f64(in, n, "all NaN");
    /* Sparse zeros of both signs: the max (min) is the first zero. */
    for(i=0; i<n; i++){
      in[i] = check_below(&rng, 16) ? -1.0 : check_below(&rng, 2) ? -0.0 : 0.0;
    }
    check_reduce_f64(in, n, "sparse zeros and -1");
    for(i=0; i<n; i++) in[i] = -in[i];
    check_reduce_f64(in, n, "sparse zeros and 1");
    /* 1e16, 1, -1e16 repeated (whole periods): the sum is the number of
    ** periods; a plain left-to-right sum returns 0. */
    for(i=0; i<n; i++) in[i] = i%3==0 ? 1e16 : i%3==1 ? 1.0 : -1e16;
    for(naive=0, i=0; i<n-n%3; i++) naive += in[i];
    for(k=0; k<(size_t)nThr; k++){
      check_case("reduce_f64 1e16,1,-1e16 n=%zu threads=%d", n-n%3, aThr[k]);
      px_reduce_f64(PX_SUM, in, n-n%3, &got, aThr[k]);
      CHECK(got==(double)(n/3), "got %.17g want %zu (naive %.17g)", got, n/3, naive);
    }
    free(in);
  }
  {
    double a[] = { -0.0, 0.0, -0.0 }, b[] = { 0.0, -0.0 };
    double c[] = { NAN, 1.0, NAN, -2.0, NAN }, d[] = { INFINITY, -INFINITY };
    double e[] = { 1.0, INFINITY, 2.0 }, f[] = { 4.9e-324, 4.9e-324, -DBL_MAX, DBL_MAX };
    check_reduce_f64(a, 3, "-0,+0,-0");
    check_reduce_f64(b, 2, "+0,-0");
    check_reduce_f64(c, 5, "NaN mixed");
    check_reduce_f64(e, 3, "with +Inf");
    check_reduce_f64(f, 4, "subnormals, DBL_MAX");
    check_case("reduce_f64 Inf - Inf is NaN, Inf stays Inf");
    px_reduce_f64(PX_SUM, d, 2, &got, 1);
    CHECK(got!=got, "Inf-Inf got %g", got);
    px_reduce_f64(PX_SUM, e, 3, &got, 1);
    CHECK(got==INFINITY, "1+Inf+2 got %g", got);
    px_reduce_f64(PX_SUM, f, 4, &got, 1);
    CHECK(got==2*4.9e-324, "subnormals got %a", got);
  }
}

/* ---- gather.h ------------------------------------------------------------ */

static void test_gather(void){
  int iz, it;
  size_t i;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz];
    uint64_t *src = xmalloc(n*8), *dst = xmalloc(n*8), *ref = xmalloc(n*8);
    uint32_t *src32 = xmalloc(n*4), *dst32 = xmalloc(n*4), *ref32 = xmalloc(n*4);
    uint32_t *aIdx = xmalloc(n*4), *aPerm = xmalloc(n*4);
    fill_u64(src, n);
    for(i=0; i<n; i++){
      src32[i] = (uint32_t)src[i] ^ (uint32_t)(src[i] >> 32);
      aIdx[i] = (uint32_t)check_below(&rng, n);     /* repeats allowed */
      aPerm[i] = (uint32_t)i;
    }
    for(i=n; i>1; i--){                             /* Fisher-Yates */
      size_t j = check_below(&rng, i);
      uint32_t t = aPerm[i-1]; aPerm[i-1] = aPerm[j]; aPerm[j] = t;
    }
    for(it=0; it<nThr; it++){
      check_case("gather n=%zu threads=%d", n, aThr[it]);
      for(i=0; i<n; i++){ ref[i] = src[aIdx[i]]; ref32[i] = src32[aIdx[i]]; }
      px_gather_u64(src, aIdx, dst, n, aThr[it]);
      px_gather_u32(src32, aIdx, dst32, n, aThr[it]);
      check_u64s(dst, ref, n, "u64");
      check_u32s(dst32, ref32, n, "u32");

      check_case("scatter n=%zu threads=%d", n, aThr[it]);
      for(i=0; i<n; i++){ ref[aPerm[i]] = src[i]; ref32[aPerm[i]] = src32[i]; }
      memset(dst, 0, n*8);
      memset(dst32, 0, n*4);
      px_scatter_u64(src, aPerm, dst, n, aThr[it]);
      px_scatter_u32(src32, aPerm, dst32, n, aThr[it]);
      check_u64s(dst, ref, n, "u64");
      check_u32s(dst32, ref32, n, "u32");
    }
    free(src); free(dst); free(ref); free(src32); free(dst32); free(ref32);
    free(aIdx); free(aPerm);
  }
}

static void test_compact(void){
  static const unsigned aDensity[] = { 0, 10, 500, 1000 };   /* kept per 1000 */
  int iz, id, it;
  size_t i, nRef, nGot;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz];
    uint8_t *aFlag = xmalloc(n);
    uint64_t *in = xmalloc(n*8), *out = xmalloc(n*8), *ref = xmalloc(n*8);
    uint32_t *aIdx = xmalloc(n*4), *refIdx = xmalloc(n*4);
    fill_u64(in, n);
    for(id=0; id<4; id++){
      for(nRef=0, i=0; i<n; i++){
        /* Any non-zero byte keeps the element. */
        aFlag[i] = check_below(&rng, 1000) < aDensity[id] ? (uint8_t)(1 + check_below(&rng, 255)) : 0;
        if( aFlag[i] ){ refIdx[nRef] = (uint32_t)i; ref[nRef] = in[i]; nRef++; }
      }
      for(it=0; it<nThr; it++){
        check_case("compact n=%zu kept/1000=%u threads=%d", n, aDensity[id], aThr[it]);
        nGot = px_compact_idx(aFlag, n, aIdx, aThr[it]);
        CHECK(nGot==nRef, "idx count %zu want %zu", nGot, nRef);
        check_u32s(aIdx, refIdx, nRef, "idx");
        nGot = px_compact_u64(in, aFlag, n, out, aThr[it]);
        CHECK(nGot==nRef, "u64 count %zu want %zu", nGot, nRef);
        check_u64s(out, ref, nRef, "u64");
      }
    }
    free(aFlag); free(in); free(out); free(ref); free(aIdx); free(refIdx);
  }
}

/* ---- histogram.h ---------------------------------------------------------- */

static void test_histogram(void){
  static const uint32_t aNBin[] = { 0, 1, 100, 1024, 1025, 70000 };
  int iz, ib, it;
  size_t i;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz];
    uint32_t *aBin = xmalloc(n*4);
    for(ib=0; ib<(int)(sizeof(aNBin)/sizeof(aNBin[0])); ib++){
      uint32_t nBin = aNBin[ib];
      uint64_t *aCount = xmalloc((nBin + 1) * 8), *aRef = xmalloc((nBin + 1) * 8);
      uint64_t nOut = 0, got;
      memset(aRef, 0, (nBin + 1) * 8);
      for(i=0; i<n; i++){
        /* Mostly in range, some just above, a few far out. */
        aBin[i] = check_below(&rng, 50)==0 ? UINT32_MAX - (uint32_t)check_below(&rng, 3)
                : (uint32_t)check_below(&rng, nBin + nBin/10 + 1);
        if( aBin[i]<nBin ) aRef[aBin[i]]++; else nOut++;
      }
      for(it=0; it<nThr; it++){
        check_case("histogram n=%zu nBin=%u threads=%d", n, nBin, aThr[it]);
        aCount[nBin] = 777;                          /* must stay untouched */
        for(i=0; i<nBin; i++) aCount[i] = 12345;     /* overwritten, not added */
        got = px_histogram_u32(aBin, n, nBin, aCount, aThr[it]);
        CHECK(got==nOut, "out of range %llu want %llu", (unsigned long long)got,
              (unsigned long long)nOut);
        check_u64s(aCount, aRef, nBin, "count");
        CHECK(aCount[nBin]==777, "wrote past nBin");
      }
      free(aCount); free(aRef);
    }
    free(aBin);
  }
}

/* ---- histogram.h: binning against edges ----------------------------------- */

/* The slot of x by the contract of histogram.h: a linear count of the
** edges <= x, with long double comparisons (exact for int64 and double
** alike when long double has 64 mantissa bits). */
static uint32_t ref_slot(long double x, int bNaN, const double *aEdge, uint32_t nBin){
  uint32_t s = 0, k;
  if( bNaN ) return nBin + 2;
  for(k=0; k<=nBin; k++) s += (long double)aEdge[k] <= x;
  if( s==nBin + 1 && x==(long double)aEdge[nBin] ) s = nBin;
  return s;
}

/* Edge sets: each a shape the guess-and-check binning could get wrong. */
static const char *azEdgeShape[] = {
  "uniform [-1,1]", "uniform, lo == hi", "random with duplicates",
  "uniform [-DBL_MAX, DBL_MAX]", "uniform over 4 ulps", "uniform [-3e18, 9e18]"
};
#define N_EDGE_SHAPE ((int)(sizeof(azEdgeShape)/sizeof(azEdgeShape[0])))

static int cmp_f64(const void *a, const void *b){
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static void fill_edges(double *aEdge, uint32_t nBin, int shape){
  uint32_t k;
  switch( shape ){
    case 0: px_edges_uniform(-1.0, 1.0, nBin, aEdge); break;
    case 1: px_edges_uniform(0.25, 0.25, nBin, aEdge); break;
    case 2:
      for(k=0; k<=nBin; k++){
        aEdge[k] = k && check_below(&rng, 5)==0 ? aEdge[k-1] : rand_unit() * 100;
      }
      qsort(aEdge, nBin + 1, sizeof(double), cmp_f64);
      break;
    case 3: px_edges_uniform(-DBL_MAX, DBL_MAX, nBin, aEdge); break;
    case 4: px_edges_uniform(1.0, 1.0 + 4*DBL_EPSILON, nBin, aEdge); break;
    default: px_edges_uniform(-3e18, 9e18, nBin, aEdge); break;
  }
}

/* A double near the edges: inside, on an edge, just beside one, outside,
** infinite, NaN, signed zeros, subnormal. */
static double edge_value(const double *aEdge, uint32_t nBin){
  double lo = aEdge[0], hi = aEdge[nBin], w = hi - lo, e;
  switch( check_below(&rng, 20) ){
    case 0: return INFINITY;
    case 1: return -INFINITY;
    case 2: return check_below(&rng, 3) ? NAN : -NAN;
    case 3: return check_below(&rng, 2) ? 0.0 : -0.0;
    case 4: case 5: case 6:
      e = aEdge[check_below(&rng, nBin + 1)];
      switch( check_below(&rng, 3) ){
        case 0: return e;
        case 1: return nextafter(e, INFINITY);
        default: return nextafter(e, -INFINITY);
      }
    case 7: return rand_unit() * DBL_MAX;
    case 8: return 4.9406564584124654e-324 * (double)check_below(&rng, 3);
    default:
      if( !isfinite(w) ) return rand_unit() * DBL_MAX;
      return lo + w * (rand_unit() * 0.6 + 0.5);   /* [-0.1, 1.1] of the range */
  }
}

/* An int64 near the edges or near the places where doubles stop being
** exact. */
static int64_t edge_value_i64(const double *aEdge, uint32_t nBin){
  static const int64_t aX[] = { INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1, 0, -1 };
  uint64_t r = check_next(&rng);
  int64_t d = (int64_t)(r >> 60) - 8;          /* -8..7 */
  double e;
  switch( check_below(&rng, 8) ){
    case 0: return aX[check_below(&rng, 6)];
    case 1: return (int64_t)r;
    case 2: return ((int64_t)1 << 53) + d;
    case 3: return -((int64_t)1 << 53) + d;
    case 4: case 5:
      e = aEdge[check_below(&rng, nBin + 1)];
      if( e > -9.2e18 && e < 9.2e18 ) return (int64_t)e + d;
      return (int64_t)r;
    default:
      e = edge_value(aEdge, nBin);
      if( e > -9.2e18 && e < 9.2e18 ) return (int64_t)e;
      return (int64_t)(r >> 1);
  }
}

static void test_histogram_edges(void){
  static const uint32_t aNBin[] = { 1, 2, 7, 100, 1021, 1022, 3000 };
  int iz, ib, is, it, bInt, bSkip;
  size_t i;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz];
    double *aF = xmalloc(n*8);
    int64_t *aI = xmalloc(n*8);
    uint8_t *aSkip = xmalloc((n + 7)/8);
    for(ib=0; ib<(int)(sizeof(aNBin)/sizeof(aNBin[0])); ib++){
      uint32_t nBin = aNBin[ib];
      size_t nSlot = PX_HIST_SLOTS(nBin);
      double *aEdge;
      uint64_t *aCount, *aRef;
      if( (double)n * nBin > 4e6 ) continue;     /* the reference is O(n nBin) */
      aEdge = xmalloc((nBin + 1) * 8);
      aCount = xmalloc((nSlot + 1) * 8);
      aRef = xmalloc(nSlot * 8);
      for(is=0; is<N_EDGE_SHAPE; is++){
        fill_edges(aEdge, nBin, is);
        for(bInt=0; bInt<2; bInt++){
          uint64_t nCounted = 0, got;
          if( bInt && LDBL_MANT_DIG<64 ) continue;
          bSkip = (int)check_below(&rng, 2);
          for(i=0; i<(n + 7)/8; i++){
            uint64_t r = check_next(&rng);
            aSkip[i] = (uint8_t)(r & (r >> 8) & (r >> 16));   /* ~1/8 of the bits */
          }
          memset(aRef, 0, nSlot * 8);
          for(i=0; i<n; i++){
            uint32_t s;
            if( bInt ){
              aI[i] = edge_value_i64(aEdge, nBin);
              s = ref_slot((long double)aI[i], 0, aEdge, nBin);
            }else{
              aF[i] = edge_value(aEdge, nBin);
              s = ref_slot((long double)aF[i], aF[i]!=aF[i], aEdge, nBin);
            }
            if( bSkip && (aSkip[i>>3] >> (i&7)) & 1 ) continue;
            aRef[s]++;
            nCounted++;
          }
          for(it=0; it<nThr; it++){
            check_case("histogram_%s n=%zu nBin=%u edges %s%s threads=%d", bInt ? "i64" : "f64",
                       n, nBin, azEdgeShape[is], bSkip ? " skip" : "", aThr[it]);
            for(i=0; i<nSlot; i++) aCount[i] = 12345;   /* overwritten, not added */
            aCount[nSlot] = 777;                        /* must stay untouched */
            got = bInt ? px_histogram_i64(aI, bSkip ? aSkip : 0, n, aEdge, nBin, aCount, aThr[it])
                       : px_histogram_f64(aF, bSkip ? aSkip : 0, n, aEdge, nBin, aCount, aThr[it]);
            CHECK(got==nCounted, "counted %llu want %llu", (unsigned long long)got,
                  (unsigned long long)nCounted);
            check_u64s(aCount, aRef, nSlot, "slot");
            CHECK(aCount[nSlot]==777, "wrote past the last slot");
          }
        }
      }
      free(aEdge); free(aCount); free(aRef);
    }
    free(aF); free(aI); free(aSkip);
  }
}

static void test_edges_uniform(void){
  static const double aRange[][2] = {
    { 0.0, 1.0 }, { -1.0, 1.0 }, { 3.0, 3.0 }, { -DBL_MAX, DBL_MAX }, { -1e308, 1.7e308 },
    { 1.0, 1.0 + DBL_EPSILON }, { -5e-324, 5e-324 }, { -9.3e18, 9.3e18 }, { 0.1, 0.7 }
  };
  static const uint32_t aNBin[] = { 1, 2, 3, 10, 100, 1000, 65536 };
  double *aEdge = xmalloc((65536 + 1) * 8);
  int ir, ib;
  uint32_t b;
  check_case("edges_uniform: known values");
  px_edges_uniform(0.0, 1.0, 10, aEdge);
  CHECK(aEdge[3]==0.30000000000000004 && aEdge[7]==0.7000000000000001 && aEdge[10]==1.0,
        "%.17g %.17g", aEdge[3], aEdge[7]);
  px_edges_uniform(-1.0, 1.0, 2, aEdge);
  CHECK(aEdge[0]==-1.0 && aEdge[1]==0.0 && aEdge[2]==1.0, "%g %g %g", aEdge[0], aEdge[1], aEdge[2]);
  for(ir=0; ir<(int)(sizeof(aRange)/sizeof(aRange[0])); ir++){
    double lo = aRange[ir][0], hi = aRange[ir][1];
    for(ib=0; ib<(int)(sizeof(aNBin)/sizeof(aNBin[0])); ib++){
      uint32_t nBin = aNBin[ib];
      int bWide = isinf(hi - lo);
      check_case("edges_uniform [%g, %g] nBin=%u", lo, hi, nBin);
      px_edges_uniform(lo, hi, nBin, aEdge);
      CHECK(aEdge[0]==lo && aEdge[nBin]==hi, "ends %g %g", aEdge[0], aEdge[nBin]);
      for(b=1; b<nBin; b++){
        /* The formula of the contract, written out again. */
        double w = bWide ? (hi/2 - lo/2) / nBin : (hi - lo) / nBin;
        double e = bWide ? 2 * (lo/2 + b * w) : lo + b * w;
        if( e > hi ) e = hi;
        if( !same_f64(aEdge[b], e) || !(aEdge[b] >= aEdge[b-1]) || !isfinite(aEdge[b]) ) break;
      }
      CHECK(b>=nBin, "edge %u = %.17g (before it %.17g)", b, aEdge[b], aEdge[b-1]);
      if( nBin>=10 && bWide ){
        double mid = lo/2 + hi/2;
        CHECK(fabs(aEdge[nBin/2] - mid) < 1e-6 * (hi/2 - lo/2), "middle %g", aEdge[nBin/2]);
      }
    }
  }
  free(aEdge);
}

static void test_range(void){
  int iz, it, bInt, bSkip;
  size_t i;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz];
    double *aF = xmalloc(n*8);
    int64_t *aI = xmalloc(n*8);
    uint8_t *aSkip = xmalloc((n + 7)/8);
    for(bInt=0; bInt<2; bInt++){
      for(bSkip=0; bSkip<2; bSkip++){
        double mnF = 0, mxF = 0, mn1 = 0, mx1 = 0;
        int64_t mnI = 0, mxI = 0;
        uint64_t nRef = 0;
        int kind = (int)check_below(&rng, 3);      /* 2: all infinite or NaN */
        for(i=0; i<(n + 7)/8; i++) aSkip[i] = (uint8_t)check_next(&rng);
        for(i=0; i<n; i++){
          uint64_t r = check_next(&rng);
          int bSkipped = bSkip && (aSkip[i>>3] >> (i&7)) & 1;
          if( bInt ){
            aI[i] = r % 4 ? (int64_t)r >> (r % 60) : (r % 8 ? INT64_MIN : INT64_MAX);
            if( bSkipped ) continue;
            if( nRef==0 || aI[i]<mnI ) mnI = aI[i];
            if( nRef==0 || aI[i]>mxI ) mxI = aI[i];
            nRef++;
          }else{
            aF[i] = kind==2 || r % 7==0 ? (r % 3==0 ? NAN : r % 3==1 ? INFINITY : -INFINITY)
                  : r % 11==0 ? (r % 2 ? -0.0 : 0.0) : rand_unit() * ldexp(1, (int)(r % 64));
            if( bSkipped || !isfinite(aF[i]) ) continue;
            if( nRef==0 || aF[i]<mnF ) mnF = aF[i];
            if( nRef==0 || aF[i]>mxF ) mxF = aF[i];
            nRef++;
          }
        }
        for(it=0; it<nThr; it++){
          double gotMnF = 1, gotMxF = 1;
          int64_t gotMnI = 1, gotMxI = 1;
          uint64_t got;
          check_case("range_%s n=%zu%s threads=%d", bInt ? "i64" : "f64", n,
                     bSkip ? " skip" : "", aThr[it]);
          if( bInt ){
            got = px_range_i64(aI, bSkip ? aSkip : 0, n, &gotMnI, &gotMxI, aThr[it]);
            CHECK(got==nRef, "count %llu want %llu", (unsigned long long)got,
                  (unsigned long long)nRef);
            CHECK(nRef==0 || (gotMnI==mnI && gotMxI==mxI), "min %lld max %lld",
                  (long long)gotMnI, (long long)gotMxI);
          }else{
            got = px_range_f64(aF, bSkip ? aSkip : 0, n, &gotMnF, &gotMxF, aThr[it]);
            CHECK(got==nRef, "count %llu want %llu", (unsigned long long)got,
                  (unsigned long long)nRef);
            /* Equal to the reference (a tie of -0.0 and +0.0 may go either
            ** way), and the same bits for every thread count. */
            CHECK(nRef==0 || (gotMnF==mnF && gotMxF==mxF),
                  "min %a max %a want %a %a", gotMnF, gotMxF, mnF, mxF);
            if( it==0 ){ mn1 = gotMnF; mx1 = gotMxF; }
            CHECK(nRef==0 || (same_f64(gotMnF, mn1) && same_f64(gotMxF, mx1)),
                  "min %a max %a at 1 thread %a %a", gotMnF, gotMxF, mn1, mx1);
            CHECK(nRef || (gotMnF==1 && gotMxF==1), "min/max set for no values");
          }
        }
      }
    }
    free(aF); free(aI); free(aSkip);
  }
}

static void test_f64_of_i64(void){
  static const int64_t aX[] = {
    INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1, INT64_MAX - 512, INT64_MAX - 513,
    0, 1, -1, ((int64_t)1 << 53) + 1, ((int64_t)1 << 53) + 3, -((int64_t)1 << 53) - 1,
    ((int64_t)1 << 62) + 511, ((int64_t)1 << 62) + 513
  };
  int i;
  check_case("px_f64_below_i64 / px_f64_above_i64");
  if( LDBL_MANT_DIG<64 ) return;
  for(i=0; i<10000; i++){
    int64_t v = i < (int)(sizeof(aX)/sizeof(aX[0])) ? aX[i]
              : (int64_t)check_next(&rng) >> check_below(&rng, 12);
    double dn = px_f64_below_i64(v), up = px_f64_above_i64(v);
    long double lv = (long double)v;
    CHECK((long double)dn <= lv && (long double)nextafter(dn, INFINITY) > lv,
          "below(%lld) = %.17g", (long long)v, dn);
    CHECK((long double)up >= lv && (long double)nextafter(up, -INFINITY) < lv,
          "above(%lld) = %.17g", (long long)v, up);
    if( check_case_failed() ) break;
  }
}

/* ---- quantile.h ------------------------------------------------------------- */

/* The order of px_sort_f64: NaNs with the sign bit, numbers by value with
** -0.0 before +0.0, other NaNs. */
static int sort_f64_class(double x){ return x==x ? 1 : signbit(x) ? 0 : 2; }
static int sort_f64_cmp(const void *a, const void *b){
  double x = *(const double*)a, y = *(const double*)b;
  int cx = sort_f64_class(x), cy = sort_f64_class(y);
  if( cx!=cy ) return cx < cy ? -1 : 1;
  if( cx!=1 ) return 0;
  if( x!=y ) return x < y ? -1 : 1;
  return signbit(y) - signbit(x) ? (signbit(x) ? -1 : 1) : 0;
}

static void test_sort_f64(void){
  static const size_t aExtra[] = { 1000, 65536, 300000 };
  int iz, it, shape, rc;
  size_t i;
  for(iz=0; iz<nSize + 3; iz++){
    size_t n = iz<nSize ? aSize[iz] : aExtra[iz-nSize];
    double *a = xmalloc(n*8), *aRef = xmalloc(n*8), *aGot = xmalloc(n*8);
    if( B<1024 && n>20011 ){ free(a); free(aRef); free(aGot); continue; }
    for(shape=0; shape<3; shape++){
      for(i=0; i<n; i++){
        uint64_t r = check_next(&rng);
        switch( shape ){
          case 0: a[i] = rand_unit() * ldexp(1, (int)(r % 200) - 100); break;
          case 1: a[i] = (double)(r % 5) - 2; break;           /* many duplicates */
          default: {
            static const double aS[] = { 0.0, -0.0, INFINITY, -INFINITY, 1e-320, -1e-320 };
            a[i] = r % 4 ? aS[(r >> 8) % 6] : r % 3 ? NAN : -NAN;
            break;
          }
        }
      }
      memcpy(aRef, a, n*8);
      qsort(aRef, n, 8, sort_f64_cmp);
      for(it=0; it<nThr; it++){
        check_case("sort_f64 n=%zu shape %d threads=%d", n, shape, aThr[it]);
        memcpy(aGot, a, n*8);
        rc = px_sort_f64(aGot, n, aThr[it]);
        CHECK(rc==PX_OK, "rc %d", rc);
        for(i=0; i<n && same_f64(aGot[i], aRef[i]); i++){}
        CHECK(i==n, "[%zu] got %a want %a", i, i<n ? aGot[i] : 0, i<n ? aRef[i] : 0);
      }
    }
    free(a); free(aRef); free(aGot);
  }
  check_case("sort_f64 n > UINT32_MAX is PX_ETOOBIG");
  CHECK(px_sort_f64(0, (size_t)UINT32_MAX + 1, 1)==PX_ETOOBIG, "etoobig");
}

/* ---- sort.h ----------------------------------------------------------------- */

static void test_keys(void){
  static const double aD[] = {
    -INFINITY, -DBL_MAX, -1e300, -1.5, -1.0, -2.2250738585072014e-308,
    -4.9406564584124654e-324, -0.0, 0.0, 4.9406564584124654e-324,
    9.8813129168249309e-324, 2.2250738585072009e-308, 2.2250738585072014e-308,
    1.0, 1.0000000000000002, 1e300, DBL_MAX, INFINITY
  };
  static const int64_t aI[] = {
    INT64_MIN, INT64_MIN+1, -((int64_t)1<<32), -1, 0, 1, (int64_t)1<<32,
    INT64_MAX-1, INT64_MAX
  };
  size_t nD = sizeof(aD)/sizeof(aD[0]), nI = sizeof(aI)/sizeof(aI[0]), i, j;
  double nan1 = NAN, nan2 = -NAN, nan3;
  uint64_t u = 0x7ff0000000000123ULL;
  memcpy(&nan3, &u, 8);                   /* a NaN with a payload */

  check_case("px_key_f64 preserves order and equality over all pairs");
  for(i=0; i<nD; i++){
    for(j=0; j<nD; j++){
      uint64_t ki = px_key_f64(aD[i]), kj = px_key_f64(aD[j]);
      CHECK((aD[i] < aD[j])==(ki < kj), "%a < %a", aD[i], aD[j]);
      CHECK((aD[i] == aD[j])==(ki == kj), "%a == %a", aD[i], aD[j]);
    }
    CHECK(px_key_f64(aD[i]) < px_key_f64(nan1), "%a below NaN", aD[i]);
  }
  check_case("px_key_f64 of NaN, -0.0; px_unkey_f64");
  CHECK(px_key_f64(nan1)==px_key_f64(INFINITY)+1, "NaN key");
  CHECK(px_key_f64(nan2)==px_key_f64(nan1) && px_key_f64(nan3)==px_key_f64(nan1), "one NaN key");
  CHECK(px_key_f64(-0.0)==px_key_f64(0.0), "-0.0");
  for(i=0; i<nD; i++){
    double back = px_unkey_f64(px_key_f64(aD[i]));
    CHECK(same_f64(back, aD[i]==0 ? 0.0 : aD[i]), "unkey %a gave %a", aD[i], back);
  }
  check_case("px_key_i64 preserves order over all pairs; px_unkey_i64");
  for(i=0; i<nI; i++){
    for(j=0; j<nI; j++){
      CHECK((aI[i] < aI[j])==(px_key_i64(aI[i]) < px_key_i64(aI[j])), "%lld < %lld",
            (long long)aI[i], (long long)aI[j]);
    }
    CHECK(px_unkey_i64(px_key_i64(aI[i]))==aI[i], "unkey %lld", (long long)aI[i]);
  }
}

typedef struct sort_ref { uint64_t k; uint32_t i; } sort_ref;
static int sort_ref_cmp(const void *a, const void *b){
  const sort_ref *x = a, *y = b;
  if( x->k != y->k ) return x->k < y->k ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

/* Sort inputs.  Each names a shape that a radix sort can get wrong. */
static const char *azShape[] = {
  "random", "all equal", "sorted", "reverse sorted", "high bits only",
  "low bits only", "few distinct", "skewed into one bucket", "doubles",
  "int64 extremes"
};
#define N_SHAPE ((int)(sizeof(azShape)/sizeof(azShape[0])))

static void fill_keys(uint64_t *k, size_t n, int shape){
  size_t i;
  for(i=0; i<n; i++){
    uint64_t r = check_next(&rng);
    switch( shape ){
      case 0: k[i] = r; break;
      case 1: k[i] = 0x0123456789abcdefULL; break;
      case 2: k[i] = (uint64_t)i * 0x9e3779b97f4aULL; break;
      case 3: k[i] = ~((uint64_t)i * 0x9e3779b97f4aULL); break;
      case 4: k[i] = (r >> 44) << 44 | 0x5555; break;
      case 5: k[i] = 0xfedcba9876500000ULL | (r & 0xfff); break;
      case 6: k[i] = (r % 5) * 0x1000000100000001ULL; break;
      case 7: k[i] = r % 10 ? 0xabc0000000000000ULL | (r >> 40) : r; break;
      case 8: k[i] = px_key_f64(r % 4 ? ldexp(rand_unit(), (int)(r % 200) - 100)
                                      : seg_f64_value(2)); break;
      default: {
        static const int64_t aX[] = { INT64_MIN, INT64_MAX, 0, -1, 1 };
        k[i] = px_key_i64(r % 3 ? (int64_t)(r >> 48) - 30000 : aX[(r >> 8) % 5]);
        break;
      }
    }
  }
}

/* Sorts a copy of k (permutation p0, or the identity when p0 is NULL) with
** every thread count and px_sort_u64_perm, its keys-only form, and the LSD
** baseline, comparing with the reference kRef / pRef. */
static void check_sort(const uint64_t *k, const uint32_t *p0, size_t n, const char *zWhat,
                       int bLsd){
  sort_ref *a = xmalloc(n * sizeof(sort_ref));
  uint64_t *kRef = xmalloc(n*8), *kGot = xmalloc(n*8);
  uint32_t *pRef = xmalloc(n*4), *pGot = xmalloc(n*4);
  size_t i;
  int it, iAlg, rc;
  for(i=0; i<n; i++){ a[i].k = k[i]; a[i].i = (uint32_t)i; }
  qsort(a, n, sizeof(sort_ref), sort_ref_cmp);
  for(i=0; i<n; i++){ kRef[i] = a[i].k; pRef[i] = p0 ? p0[a[i].i] : a[i].i; }
  for(it=0; it<nThr; it++){
    for(iAlg=0; iAlg<(bLsd ? 4 : 2); iAlg++){
      static const char *azAlg[] = { "msd", "msd keys only", "lsd 8-bit", "lsd 11-bit" };
      check_case("sort %s %s n=%zu threads=%d", azAlg[iAlg], zWhat, n, aThr[it]);
      memcpy(kGot, k, n*8);
      for(i=0; i<n; i++) pGot[i] = p0 ? p0[i] : (uint32_t)i;
      switch( iAlg ){
        case 0: rc = px_sort_u64_perm(kGot, pGot, n, aThr[it]); break;
        case 1: rc = px_sort_u64_perm(kGot, 0, n, aThr[it]); break;
        case 2: rc = px_sort_u64_perm_lsd(kGot, pGot, n, 8, aThr[it]); break;
        default: rc = px_sort_u64_perm_lsd(kGot, pGot, n, 11, aThr[it]); break;
      }
      CHECK(rc==PX_OK, "rc %d", rc);
      check_u64s(kGot, kRef, n, "key");
      if( iAlg!=1 ) check_u32s(pGot, pRef, n, "perm");
    }
  }
  free(a); free(kRef); free(kGot); free(pRef); free(pGot);
}

static void test_sort(void){
  static const size_t aExtra[] = { 47, 48, 49, 1000, 65536, 100000 };
  int iz, is;
  size_t i, n;
  char zWhat[64];
  for(is=0; is<N_SHAPE; is++){
    for(iz=0; iz<nSize + 6; iz++){
      uint64_t *k;
      n = iz<nSize ? aSize[iz] : aExtra[iz-nSize];
      if( n>100000 ) continue;
      k = xmalloc(n*8);
      fill_keys(k, n, is);
      check_sort(k, 0, n, azShape[is], 1);
      free(k);
    }
  }
  /* Large random inputs; permutation values that are not the identity. */
  {
    uint64_t *k;
    uint32_t *p0;
    n = B>=1024 ? 2000000 : 100000;
    k = xmalloc(n*8);
    p0 = xmalloc(n*4);
    fill_keys(k, n, 0);
    for(i=0; i<n; i++) p0[i] = (uint32_t)check_next(&rng);
    check_sort(k, p0, n, "random, random perm values", 0);
    fill_keys(k, n, 7);
    snprintf(zWhat, sizeof(zWhat), "%s", azShape[7]);
    check_sort(k, 0, n, zWhat, 0);
    free(k); free(p0);
  }
  check_case("sort n > UINT32_MAX is PX_ETOOBIG");
  CHECK(px_sort_u64_perm(0, 0, (size_t)UINT32_MAX + 1, 1)==PX_ETOOBIG, "msd");
  CHECK(px_sort_u64_perm_lsd(0, 0, (size_t)UINT32_MAX + 1, 8, 1)==PX_ETOOBIG, "lsd");
}

/* ---- the kernels of grouping (sort.h, segment.h) -------------------------- */

/* Words with many duplicates: word w of row i takes one of a few values
** (shape 0: 3 values, 1: 2^10, 2: any, 3: all equal), so that rows tie on
** the more significant words and the less significant ones decide. */
static void fill_words(uint64_t **aaW, int nWord, size_t n, int shape){
  int w;
  size_t i;
  for(w=0; w<nWord; w++){
    for(i=0; i<n; i++){
      uint64_t r = check_next(&rng);
      switch( (shape + w) % 4 ){
        case 0: aaW[w][i] = (r % 3) << 62 | (r % 3); break;
        case 1: aaW[w][i] = r & 0x3ff; break;
        case 2: aaW[w][i] = r; break;
        default: aaW[w][i] = 0x8000000000000000ULL; break;
      }
    }
  }
}

typedef struct words_ref { const uint64_t *const *aaW; int nWord; } words_ref;
static words_ref gWords;            /* for words_cmp (qsort has no context) */
static int words_cmp(const void *a, const void *b){
  uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  int w;
  for(w=0; w<gWords.nWord; w++){
    uint64_t u = gWords.aaW[w][x], v = gWords.aaW[w][y];
    if( u!=v ) return u<v ? -1 : 1;
  }
  return x<y ? -1 : x>y;
}

static void test_sort_words(void){
  static const size_t aExtra[] = { 48, 49, 1000, 100000 };
  int iz, it, nWord, shape, bTop;
  size_t i;
  for(iz=0; iz<nSize + 4; iz++){
    size_t n = iz<nSize ? aSize[iz] : aExtra[iz-nSize];
    uint64_t *aa[3], *aTop = xmalloc(n*8);
    uint32_t *pRef = xmalloc(n*4), *pGot = xmalloc((n+1)*4);
    for(nWord=0; nWord<=3; nWord++){
      for(i=0; i<3; i++) aa[i] = xmalloc(n*8);
      for(shape=0; shape<4; shape++){
        if( nWord<2 && shape>0 && n>1000 ) continue;
        fill_words(aa, nWord, n, shape);
        for(i=0; i<n; i++) pRef[i] = (uint32_t)i;
        gWords.aaW = (const uint64_t *const *)aa;
        gWords.nWord = nWord;
        qsort(pRef, n, sizeof(uint32_t), words_cmp);
        for(it=0; it<nThr; it++){
          for(bTop=0; bTop<2; bTop++){
            int rc;
            check_case("sort words n=%zu words=%d shape=%d%s threads=%d", n, nWord, shape,
                       bTop ? "" : " (no top)", aThr[it]);
            pGot[n] = 0xa5a5a5a5u;
            for(i=0; i<n; i++) aTop[i] = ~(uint64_t)0;
            rc = px_sort_words_perm((const uint64_t *const *)aa, nWord, n, pGot,
                                    bTop ? aTop : 0, aThr[it]);
            CHECK(rc==PX_OK, "rc %d", rc);
            check_u32s(pGot, pRef, n, "perm");
            CHECK(pGot[n]==0xa5a5a5a5u, "wrote past n");
            if( bTop && nWord>0 ){
              for(i=0; i<n && aTop[i]==aa[0][pRef[i]]; i++){}
              CHECK(i==n, "top[%zu]", i);
            }
          }
        }
      }
      for(i=0; i<3; i++) free(aa[i]);
    }
    free(aTop); free(pRef); free(pGot);
  }
  check_case("sort words n > UINT32_MAX is PX_ETOOBIG");
  CHECK(px_sort_words_perm(0, 1, (size_t)UINT32_MAX + 1, 0, 0, 1)==PX_ETOOBIG, "rc");
}

/* ---- topk.h and keys.h: the kernels of ORDER BY ---------------------------- */

/* The k values tried for n rows: none, a few, both sides of the switch to
** sorting (PX_TOPK_SORT_DIV), all but one, all, and more than all. */
static int topk_ks(size_t n, int bBig, size_t *aK){
  size_t d = n / PX_TOPK_SORT_DIV;
  int nK = 0;
  aK[nK++] = 0; aK[nK++] = 1; aK[nK++] = 7;
  if( d>1 ) aK[nK++] = d/2 + 1;
  aK[nK++] = d;
  if( bBig ) return nK;
  aK[nK++] = 2; aK[nK++] = d + 1;
  if( n>0 ) aK[nK++] = n - 1;
  aK[nK++] = n; aK[nK++] = n + 5; aK[nK++] = 2*n + 100;
  return nK;
}

/* Top k against the prefix of px_sort_words_perm() (itself checked against
** a stable qsort here up to TOPK_QSORT_MAX rows), on words with many ties
** (fill_words) and on keys in decreasing order (every row enters the
** heaps), for every thread count; nothing may be written past min(k, n).
** Above TOPK_QSORT_MAX rows, fewer shapes and k values: the heaps of
** large pieces are what is new there, and the switch to sorting once. */
#define TOPK_QSORT_MAX 20000
static void test_topk(void){
  static const size_t aExtra[] = { 48, 49, 1000, 20000, 70001 };  /* the last: 128+ pieces
                                                                 ** with tiny blocks */
  int iz, it, nWord, shape, ik, nK;
  size_t i, aK[16];
  for(iz=0; iz<nSize + 5; iz++){
    size_t n = iz<nSize ? aSize[iz] : aExtra[iz-nSize];
    uint64_t *aa[3];
    uint32_t *pRef = xmalloc(n*4), *pSort = xmalloc(n*4), *pGot = xmalloc((2*n + 110)*4);
    int bBig = n>TOPK_QSORT_MAX;
    nK = topk_ks(n, bBig, aK);
    for(i=0; i<3; i++) aa[i] = xmalloc(n*8);
    for(nWord=0; nWord<=3; nWord++){
      for(shape=0; shape<5; shape++){
        int rc;
        if( nWord==0 && shape>0 ) continue;
        if( bBig && shape!=(nWord==1 ? 2 : nWord==2 ? 4 : nWord==3 ? 0 : -1) ) continue;
        if( shape<4 ){
          fill_words(aa, nWord, n, shape);
        }else{
          /* Decreasing in the row, in runs of three equal first words. */
          fill_words(aa, nWord, n, 0);
          for(i=0; i<n && nWord>0; i++) aa[0][i] = (n - i) / 3;
        }
        check_case("topk reference: sort words n=%zu words=%d shape=%d", n, nWord, shape);
        rc = px_sort_words_perm((const uint64_t *const *)aa, nWord, n, pSort, 0, 1);
        CHECK(rc==PX_OK, "rc %d", rc);
        if( !bBig ){
          for(i=0; i<n; i++) pRef[i] = (uint32_t)i;
          gWords.aaW = (const uint64_t *const *)aa;
          gWords.nWord = nWord;
          qsort(pRef, n, sizeof(uint32_t), words_cmp);
          check_u32s(pSort, pRef, n, "perm");
        }
        /* A large size sorts once: random single words, k just past the
        ** switch. */
        aK[nK] = n / PX_TOPK_SORT_DIV + 1;
        for(ik=0; ik<nK + (bBig && nWord==1 && shape==2); ik++){
          size_t k = aK[ik], m = k<n ? k : n;
          for(it=0; it<nThr; it++){
            check_case("topk n=%zu k=%zu words=%d shape=%d threads=%d", n, k, nWord, shape,
                       aThr[it]);
            for(i=0; i<m+2; i++) pGot[i] = 0xa5a5a5a5u;
            rc = px_topk_words_perm((const uint64_t *const *)aa, nWord, n, k, pGot, aThr[it]);
            CHECK(rc==PX_OK, "rc %d", rc);
            check_u32s(pGot, pSort, m, "row");
            CHECK(pGot[m]==0xa5a5a5a5u && pGot[m+1]==0xa5a5a5a5u, "wrote past min(k, n)");
          }
        }
      }
    }
    for(i=0; i<3; i++) free(aa[i]);
    free(pRef); free(pSort); free(pGot);
  }
  check_case("topk n > UINT32_MAX is PX_ETOOBIG");
  CHECK(px_topk_words_perm(0, 1, (size_t)UINT32_MAX + 1, 5, 0, 1)==PX_ETOOBIG, "rc");
}

/* px_topk_src_perm and px_keys_from_src: the words they make are those of
** a serial reference (px_key_i64/px_key_f64, the flip, NULL rows' word),
** and the top k over them is px_topk_words_perm's over those words, for
** int64 and double values full of ties (-0.0 beside 0.0, extremes), both
** directions, with and without NULL rows, every k around the switch to
** sorting. */
static void test_topk_src(void){
  static const size_t aExtra[] = { 1000, 20000, 70001 };
  int iz, it, eKind, bDesc, bNull;
  size_t i, aK[16];
  for(iz=0; iz<nSize + 3; iz++){
    size_t n = iz<nSize ? aSize[iz] : aExtra[iz-nSize];
    int64_t *aI = xmalloc(n*8);
    double *aD = xmalloc(n*8);
    uint8_t *aNull = xmalloc(n/8 + 1);
    uint64_t *aRef = xmalloc(n*8), *aGotKey = xmalloc(n*8);
    uint32_t *pRef = xmalloc((n + 110)*4), *pGot = xmalloc((n + 110)*4);
    int nK = topk_ks(n, n>TOPK_QSORT_MAX, aK);
    aK[nK++] = n / PX_TOPK_SORT_DIV + 1;
    for(i=0; i<n; i++){
      uint64_t r = check_next(&rng);
      static const double aV[] = { 0.0, -0.0, 1.5, -1.5, 1e308, -1e308, 2.0, 0.25 };
      aI[i] = (r % 5)==0 ? INT64_MIN : (r % 7)==0 ? INT64_MAX : (int64_t)(r % 13) - 6;
      aD[i] = aV[(r >> 8) % 8];
    }
    memset(aNull, 0, n/8 + 1);
    for(i=0; i<n; i+=3) aNull[i>>3] |= (uint8_t)(1 << (i&7));
    for(eKind=PX_KEYSRC_I64; eKind<=PX_KEYSRC_F64; eKind++){
      for(bDesc=0; bDesc<2; bDesc++){
        for(bNull=0; bNull<2; bNull++){
          px_key_src src;
          const uint64_t *aa[1];
          memset(&src, 0, sizeof(src));
          src.a = eKind==PX_KEYSRC_I64 ? (const void*)aI : (const void*)aD;
          src.eKind = eKind;
          src.flip = bDesc ? ~(uint64_t)0 : 0;
          src.aNull = bNull ? aNull : 0;
          src.nullKey = bDesc ? 7 : ~(uint64_t)0 - 7;
          for(i=0; i<n; i++){
            if( bNull && (aNull[i>>3] >> (i&7)) & 1 ){
              aRef[i] = src.nullKey;
            }else{
              aRef[i] = (eKind==PX_KEYSRC_I64 ? px_key_i64(aI[i]) : px_key_f64(aD[i])) ^ src.flip;
            }
          }
          check_case("keys_from_src n=%zu kind=%d desc=%d null=%d", n, eKind, bDesc, bNull);
          px_keys_from_src(&src, n, aGotKey, 3);
          for(i=0; i<n && aGotKey[i]==aRef[i]; i++){}
          CHECK(i==n, "word of row %zu", i);
          aa[0] = aRef;
          for(it=0; it<nK; it++){
            size_t k = aK[it], m = k<n ? k : n;
            int rc, t;
            rc = px_topk_words_perm(aa, 1, n, k, pRef, 1);
            CHECK(rc==PX_OK, "reference rc %d", rc);
            for(t=0; t<nThr; t++){
              check_case("topk_src n=%zu k=%zu kind=%d desc=%d null=%d threads=%d", n, k,
                         eKind, bDesc, bNull, aThr[t]);
              for(i=0; i<m+2; i++) pGot[i] = 0xa5a5a5a5u;
              rc = px_topk_src_perm(&src, n, k, pGot, aThr[t]);
              CHECK(rc==PX_OK, "rc %d", rc);
              check_u32s(pGot, pRef, m, "row");
              CHECK(pGot[m]==0xa5a5a5a5u && pGot[m+1]==0xa5a5a5a5u, "wrote past min(k, n)");
            }
          }
        }
      }
    }
    free(aI); free(aD); free(aNull); free(aRef); free(aGotKey); free(pRef); free(pGot);
  }
  check_case("topk_src n > UINT32_MAX is PX_ETOOBIG");
  CHECK(px_topk_src_perm(0, (size_t)UINT32_MAX + 1, 5, 0, 1)==PX_ETOOBIG, "rc");
}

/* The independent packing: min and max by a loop, widths by counting
** bits one at a time, fields placed from the top of each word, the next
** word when a field does not fit.  Returns the word count. */
static int ref_pack(uint64_t *const *aaIn, int nIn, size_t n, uint64_t **aaOut){
  int i, nOut = 0, used = 0;
  size_t r;
  for(i=0; i<nIn; i++){
    uint64_t mn = ~(uint64_t)0, mx = 0, span;
    int w = 0;
    for(r=0; r<n; r++){
      if( aaIn[i][r]<mn ) mn = aaIn[i][r];
      if( aaIn[i][r]>mx ) mx = aaIn[i][r];
    }
    for(span = n ? mx - mn : 0; span; span >>= 1) w++;
    if( w==0 ) continue;
    if( nOut==0 || used + w > 64 ){
      nOut++;
      used = 0;
      for(r=0; r<n; r++) aaOut[nOut-1][r] = 0;
    }
    used += w;
    for(r=0; r<n; r++){
      uint64_t v = aaIn[i][r] - mn;
      aaOut[nOut-1][r] += w==64 ? v : v << (64 - used);
    }
  }
  return nOut;
}

/* Compares rows by the words of gPack (qsort has no context), then row. */
static words_ref gPack;
static int pack_cmp(const void *a, const void *b){
  words_ref save = gWords;
  int c;
  gWords = gPack;
  c = words_cmp(a, b);
  gWords = save;
  return c;
}

/* Word i of a row, of one of several spans: constant, 1 bit, a few bits at
** a high base, 20, 31, 32, 33, 63 bits, the full 64 (both ends present). */
static void fill_pack_word(uint64_t *a, size_t n, int kind){
  uint64_t base = check_next(&rng);
  size_t r;
  for(r=0; r<n; r++){
    uint64_t x = check_next(&rng);
    switch( kind ){
      case 0: a[r] = base; break;
      case 1: a[r] = 7 + (x & 1); break;
      case 2: a[r] = ~(uint64_t)0 - (x % 5); break;
      case 3: a[r] = (base >> 1) + (x & 0xfffff); break;
      case 4: a[r] = x >> 33; break;
      case 5: a[r] = x >> 32; break;
      case 6: a[r] = (x >> 31) + 12345; break;
      case 7: a[r] = x >> 1; break;
      default: a[r] = r==0 ? 0 : r==1 ? ~(uint64_t)0 : x; break;
    }
    if( kind>0 && (x >> 60)==0 ) a[r] = a[r>0 ? r-1 : 0];   /* ties */
  }
}
#define N_PACK_KIND 9

/* Packing: the word count and the words equal to the independent packing,
** nothing written to the words beyond it nor past n; the order of rows by
** the packed words (a stable qsort) equal to the order by the original
** words, with equal packed keys exactly where the original keys are
** equal; in place the same.  Above TOPK_QSORT_MAX rows the order is not
** checked again (the packing is checked against the same reference). */
static void test_keys_pack(void){
  static const size_t aExtra[] = { 1000, 65537 };
  int iz, it, nIn, iCase, bInPlace;
  size_t i, r;
  for(iz=0; iz<nSize + 2; iz++){
    size_t n = iz<nSize ? aSize[iz] : aExtra[iz-nSize];
    uint64_t *aIn[6], *aOut[6], *aRef[6], *aWork[6];
    uint32_t *pRef = xmalloc(n*4), *pPack = xmalloc(n*4);
    for(i=0; i<6; i++){
      aIn[i] = xmalloc(n*8);
      aOut[i] = xmalloc((n+1)*8);
      aRef[i] = xmalloc(n*8);
      aWork[i] = xmalloc((n+1)*8);
    }
    for(nIn=0; nIn<=6; nIn++){
      if( n>TOPK_QSORT_MAX && nIn!=1 && nIn!=3 && nIn!=6 ) continue;
      for(iCase=0; iCase<(n>TOPK_QSORT_MAX ? 2 : 6); iCase++){
        int nRef, nGot, rc;
        /* Case 0: every kind in turn; 1: wide fields that just fit
        ** (32 + 32, 31 + 33, 63 + 1 ...); the rest at random. */
        for(i=0; i<(size_t)nIn; i++){
          static const int aFit[] = { 5, 5, 4, 6, 7, 1 };
          int kind = iCase==0 ? (int)i % N_PACK_KIND : iCase==1 ? aFit[i]
                   : (int)check_below(&rng, N_PACK_KIND);
          fill_pack_word(aIn[i], n, kind);
        }
        nRef = ref_pack(aIn, nIn, n, aRef);
        for(it=0; it<nThr; it++){
          for(bInPlace=0; bInPlace<2; bInPlace++){
            uint64_t **aaDst = bInPlace ? aWork : aOut;
            check_case("keys pack n=%zu words=%d case=%d threads=%d%s", n, nIn, iCase, aThr[it],
                       bInPlace ? " in place" : "");
            for(i=0; i<6; i++){
              if( bInPlace && (int)i<nIn ) memcpy(aWork[i], aIn[i], n*8);
              else for(r=0; r<n; r++) aaDst[i][r] = 0x5a5a5a5a5a5a5a5aULL;
              aaDst[i][n] = 0x5a5a5a5a5a5a5a5aULL;
            }
            nGot = -1;
            rc = px_keys_pack(bInPlace ? (const uint64_t *const *)aWork
                                       : (const uint64_t *const *)aIn,
                              nIn, n, aaDst, &nGot, aThr[it]);
            CHECK(rc==PX_OK, "rc %d", rc);
            CHECK(nGot==nRef, "%d words, want %d", nGot, nRef);
            if( nGot!=nRef ) continue;
            for(i=0; i<(size_t)nRef; i++) check_u64s(aaDst[i], aRef[i], n, "packed");
            for(i=nRef; i<6 && !bInPlace; i++){
              for(r=0; r<n && aaDst[i][r]==0x5a5a5a5a5a5a5a5aULL; r++){}
              CHECK(r==n, "word %zu written", i);
            }
            for(i=0; i<6; i++) CHECK(aaDst[i][n]==0x5a5a5a5a5a5a5a5aULL, "wrote past n");
          }
        }
        /* The order and equality of the packed keys (the reference's,
        ** equal to the kernel's as checked) are those of the keys. */
        if( n>TOPK_QSORT_MAX ) continue;
        check_case("keys pack keeps the order n=%zu words=%d case=%d", n, nIn, iCase);
        for(i=0; i<n; i++) pRef[i] = (uint32_t)i;
        gWords.aaW = (const uint64_t *const *)aIn;
        gWords.nWord = nIn;
        qsort(pRef, n, sizeof(uint32_t), words_cmp);
        for(i=0; i<n; i++) pPack[i] = (uint32_t)i;
        gPack.aaW = (const uint64_t *const *)aRef;
        gPack.nWord = nRef;
        qsort(pPack, n, sizeof(uint32_t), pack_cmp);
        check_u32s(pPack, pRef, n, "order");
        for(r=1; r<n; r++){
          uint32_t x = pRef[r-1], y = pRef[r];
          int bSame = 1, bSamePacked = 1;
          for(i=0; i<(size_t)nIn; i++) bSame &= aIn[i][x]==aIn[i][y];
          for(i=0; i<(size_t)nRef; i++) bSamePacked &= aRef[i][x]==aRef[i][y];
          if( bSame!=bSamePacked ) break;
        }
        CHECK(r>=n, "rows %u and %u: equal as keys or as packed keys, not both",
              r<n ? pRef[r-1] : 0, r<n ? pRef[r] : 0);
      }
    }
    for(i=0; i<6; i++){ free(aIn[i]); free(aOut[i]); free(aRef[i]); free(aWork[i]); }
    free(pRef); free(pPack);
  }
}

/* The reference counting sort: one serial stable pass. */
static void ref_countsort(const uint32_t *aBin, size_t n, uint32_t nBin, uint32_t *aPerm,
                          size_t *aStart){
  size_t i, b, *aAt = xmalloc(((size_t)nBin + 1)*sizeof(size_t));
  memset(aStart, 0, ((size_t)nBin + 1)*sizeof(size_t));
  for(i=0; i<n; i++) aStart[aBin[i]+1]++;
  for(b=0; b<nBin; b++) aStart[b+1] += aStart[b];
  memcpy(aAt, aStart, ((size_t)nBin + 1)*sizeof(size_t));
  for(i=0; i<n; i++) aPerm[aAt[aBin[i]]++] = (uint32_t)i;
  free(aAt);
}

static void test_countsort(void){
  static const uint32_t aNBin[] = { 1, 2, 7, 1000, 70000 };
  static const size_t aExtra[] = { 65535, 65536, 65537, 300007 };
  int iz, ib, it, iv;
  size_t i, k;
  for(iz=0; iz<nSize + 4; iz++){
    size_t n = iz<nSize ? aSize[iz] : aExtra[iz-nSize];
    uint32_t *aBin = xmalloc(n*4), *pRef = xmalloc(n*4), *pGot = xmalloc((n+1)*4);
    uint64_t *aSrc[2], *aDst[2], *aRefV = xmalloc(n*8);
    for(k=0; k<2; k++){
      aSrc[k] = xmalloc(n*8);
      aDst[k] = xmalloc((n+1)*8);
      fill_u64(aSrc[k], n);
    }
    for(ib=0; ib<(int)(sizeof(aNBin)/sizeof(aNBin[0])); ib++){
      uint32_t nBin = aNBin[ib];
      size_t *sRef = xmalloc(((size_t)nBin+1)*sizeof(size_t));
      size_t *sGot = xmalloc(((size_t)nBin+2)*sizeof(size_t));
      if( nBin>1000 && n<1000 && n>2 ) nBin = (uint32_t)n/2;   /* many empty bins */
      for(i=0; i<n; i++){
        /* Skewed: half the rows in bin 0 or the last bin. */
        uint64_t r = check_next(&rng);
        aBin[i] = r & 1 ? (uint32_t)((r >> 1) % nBin) : (r & 2 ? 0 : nBin-1);
      }
      ref_countsort(aBin, n, nBin, pRef, sRef);
      for(it=0; it<nThr; it++){
        /* iv: 0 perm only; 1 perm, starts and 2 values; 2 values and
        ** starts, no perm; 3 starts only. */
        for(iv=0; iv<4; iv++){
          const void *aaS[2];
          void *aaD[2];
          int nVal = iv==1 || iv==2 ? 2 : 0, rc;
          uint32_t *pOut = iv<2 ? pGot : 0;
          size_t *sOut = iv>0 ? sGot : 0;
          aaS[0] = aSrc[0]; aaS[1] = aSrc[1];
          aaD[0] = aDst[0]; aaD[1] = aDst[1];
          check_case("countsort n=%zu bins=%u variant=%d threads=%d", n, nBin, iv, aThr[it]);
          pGot[n] = 0xa5a5a5a5u;
          sGot[nBin+1] = 12345;
          aDst[0][n] = aDst[1][n] = 777;
          rc = px_countsort_u32(aBin, n, nBin, pOut, sOut, nVal, aaS, aaD, aThr[it]);
          CHECK(rc==PX_OK, "rc %d", rc);
          if( pOut ) check_u32s(pGot, pRef, n, "perm");
          if( sOut ){
            for(i=0; i<=nBin && sGot[i]==sRef[i]; i++){}
            CHECK(i>nBin, "start[%zu] got %zu want %zu", i, i<=nBin ? sGot[i] : 0,
                  i<=nBin ? sRef[i] : 0);
          }
          for(k=0; k<(size_t)nVal; k++){
            for(i=0; i<n; i++) aRefV[i] = aSrc[k][pRef[i]];
            check_u64s(aDst[k], aRefV, n, k ? "value 1" : "value 0");
          }
          CHECK(pGot[n]==0xa5a5a5a5u && sGot[nBin+1]==12345 && aDst[0][n]==777
                && aDst[1][n]==777, "wrote past the end");
        }
      }
      free(sRef); free(sGot);
    }
    for(k=0; k<2; k++){ free(aSrc[k]); free(aDst[k]); }
    free(aBin); free(pRef); free(pGot); free(aRefV);
  }
  check_case("countsort n > UINT32_MAX is PX_ETOOBIG");
  CHECK(px_countsort_u32(0, (size_t)UINT32_MAX + 1, 1, 0, 0, 0, 0, 0, 1)==PX_ETOOBIG, "rc");
}

/* Segments: keys with few distinct values, so that runs of equal keys
** cross block boundaries; through a random permutation or none, with and
** without a leading word. */
static void test_segments(void){
  int iz, it, nWord, iCase;
  size_t i;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz];
    uint64_t *aLead = xmalloc(n*8), *aa[2];
    uint32_t *aPerm = xmalloc(n*4);
    uint8_t *hRef = xmalloc(n), *hGot = xmalloc(n+1);
    size_t *oRef = xmalloc((n+1)*sizeof(size_t)), *oGot = xmalloc((n+2)*sizeof(size_t));
    aa[0] = xmalloc(n*8);
    aa[1] = xmalloc(n*8);
    for(i=0; i<n; i++) aPerm[i] = (uint32_t)i;
    for(i=n; i>1; i--){                             /* Fisher-Yates */
      size_t j = check_below(&rng, i);
      uint32_t t = aPerm[i-1]; aPerm[i-1] = aPerm[j]; aPerm[j] = t;
    }
    for(iCase=0; iCase<8; iCase++){
      int bLead = iCase & 1, bPerm = (iCase >> 1) & 1, nRun = iCase>>2 ? 100 : 3;
      uint64_t cur = 0;
      for(nWord=0; nWord<=2; nWord++){
        size_t nRef = 0, nGot = 12345;
        /* Sorted-like runs: each key repeats for about nRun positions. */
        for(i=0; i<n; i++){
          int w;
          if( check_below(&rng, nRun)==0 ) cur = check_next(&rng) % 3;
          aLead[i] = cur;
          for(w=0; w<2; w++) aa[w][bPerm ? aPerm[i] : i] = (cur >> w) & 1 ? cur : 0;
          if( check_below(&rng, 4*nRun)==0 ) aa[1][bPerm ? aPerm[i] : i] ^= 5;
        }
        for(i=0; i<n; i++){
          int w, bNew = i==0;
          if( i>0 && bLead ) bNew |= aLead[i]!=aLead[i-1];
          for(w=0; w<nWord && i>0; w++){
            size_t r = bPerm ? aPerm[i] : i, q = bPerm ? aPerm[i-1] : i-1;
            bNew |= aa[w][r]!=aa[w][q];
          }
          hRef[i] = (uint8_t)bNew;
          if( bNew ) oRef[nRef++] = i;
        }
        oRef[nRef] = n;
        for(it=0; it<nThr; it++){
          int bHead, rc;
          for(bHead=0; bHead<2; bHead++){
            check_case("segments n=%zu lead=%d perm=%d words=%d run=%d%s threads=%d", n, bLead,
                       bPerm, nWord, nRun, bHead ? "" : " (no heads)", aThr[it]);
            hGot[n] = 0x5a;
            oGot[n+1] = 999;
            rc = px_segments_u64(bLead ? aLead : 0, (const uint64_t *const *)aa, nWord,
                                 bPerm ? aPerm : 0, n, bHead ? hGot : 0, oGot, &nGot,
                                 aThr[it]);
            CHECK(rc==PX_OK, "rc %d", rc);
            CHECK(nGot==nRef, "nSeg %zu want %zu", nGot, nRef);
            for(i=0; i<=nRef && i<=nGot && oGot[i]==oRef[i]; i++){}
            CHECK(i>nRef, "off[%zu] got %zu want %zu", i, i<=nGot ? oGot[i] : 0, oRef[i]);
            if( bHead ){
              for(i=0; i<n && hGot[i]==hRef[i]; i++){}
              CHECK(i==n, "head[%zu] got %d want %d", i, i<n ? hGot[i] : 0, i<n ? hRef[i] : 0);
            }
            CHECK(hGot[n]==0x5a && oGot[n+1]==999, "wrote past the end");
          }
        }
      }
    }
    free(aLead); free(aa[0]); free(aa[1]); free(aPerm);
    free(hRef); free(hGot); free(oRef); free(oGot);
  }
}

static void test_segment_ids(void){
  static const unsigned aEmpty[] = { 0, 300, 900 };   /* empty segments per 1000 */
  int iz, ie, it;
  size_t i, s;
  for(iz=0; iz<nSize; iz++){
    size_t n = aSize[iz];
    size_t *aOff = xmalloc((2*n+4)*sizeof(size_t));   /* at most n empty segments */
    uint64_t *aRef = xmalloc(n*8), *aGot = xmalloc((n+1)*8);
    for(ie=0; ie<3; ie++){
      size_t nSeg = 0;
      /* Segments of random length (1 to 20) between runs of empty ones;
      ** also empty ones first and last. */
      aOff[0] = 0;
      for(i=0; i<n; ){
        if( nSeg<n && check_below(&rng, 1000)<aEmpty[ie] ){ aOff[++nSeg] = i; continue; }
        i += 1 + check_below(&rng, 20);
        if( i>n ) i = n;
        aOff[++nSeg] = i;
      }
      if( ie>0 ) aOff[++nSeg] = n;
      for(s=0; s<nSeg; s++){
        for(i=aOff[s]; i<aOff[s+1]; i++) aRef[i] = s;
      }
      for(it=0; it<nThr; it++){
        check_case("segment ids n=%zu segments=%zu empty/1000=%u threads=%d", n, nSeg,
                   aEmpty[ie], aThr[it]);
        aGot[n] = 4242;
        px_segment_ids_u64(aOff, nSeg, aGot, aThr[it]);
        check_u64s(aGot, aRef, n, "id");
        CHECK(aGot[n]==4242, "wrote past n");
      }
    }
    free(aOff); free(aRef); free(aGot);
  }
}

/* Out of memory: with the address space limited to just above what the
** process uses, the scratch of a 4M-element sort cannot be allocated; the
** sort must say so and leave its input alone; so must a top k that sorts
** (k = n - 1) and needs a copy of the permutation.  (Not under ASan, whose
** shadow memory needs an unlimited address space.) */
static void test_sort_enomem(void){
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
  size_t n = (size_t)1 << 22, i, nPage = 0;
  uint64_t *k = xmalloc(n*8), *k0 = xmalloc(n*8);
  uint32_t *p = xmalloc(n*4);
  struct rlimit old, lim;
  int rc, rcLsd, rcTopk;
  const uint64_t *aa[1];
  FILE *f = fopen("/proc/self/statm", "r");
  if( f==0 || fscanf(f, "%zu", &nPage)!=1 || getrlimit(RLIMIT_AS, &old) ){
    if( f ) fclose(f);
    free(k); free(k0); free(p);
    return;
  }
  fclose(f);
  fill_keys(k, n, 0);
  memcpy(k0, k, n*8);
  for(i=0; i<n; i++) p[i] = (uint32_t)i;
  lim = old;
  lim.rlim_cur = nPage * (size_t)sysconf(_SC_PAGESIZE) + ((size_t)16 << 20);
  setrlimit(RLIMIT_AS, &lim);
  rc = px_sort_u64_perm(k, p, n, 2);
  rcLsd = px_sort_u64_perm_lsd(k, p, n, 8, 2);
  aa[0] = k;
  rcTopk = px_topk_words_perm(aa, 1, n, n - 1, p, 2);    /* sorts: a copy of n rows */
  setrlimit(RLIMIT_AS, &old);
  check_case("sort without memory for its scratch is PX_ENOMEM");
  CHECK(rc==PX_ENOMEM && rcLsd==PX_ENOMEM, "rc %d lsd %d", rc, rcLsd);
  CHECK(rcTopk==PX_ENOMEM, "topk rc %d", rcTopk);
  check_u64s(k, k0, n, "key untouched");
  for(i=0; i<n && p[i]==i; i++){}
  CHECK(i==n, "perm[%zu] changed", i);
  free(k); free(k0); free(p);
#endif
}

/* A px_stop whose xAsk says stop at its nStopAt-th call (never: 0). */
typedef struct stop_after { px_stop base; int nAsk, nStopAt; } stop_after;
static int stop_after_ask(void *pArg){
  stop_after *p = (stop_after*)pArg;
  return ++p->nAsk==p->nStopAt;
}

/* Stopping (par.h): a sort that is never told to stop gives the sort's
** result with a px_stop installed; told to stop before it starts, or
** part-way (the asks are a few ms apart, a sort of this size takes
** longer), it returns PX_EINTR with every permutation entry still one of
** the rows, and the key and permutation arrays untouched beyond n. */
static void test_sort_stop(void){
  size_t n = 4000000 + 17, i;
  uint64_t *k = xmalloc((n+1)*8), *k0 = xmalloc(n*8), *kWant = xmalloc(n*8);
  uint32_t *p = xmalloc((n+1)*4), *pWant = xmalloc(n*4);
  int iCase, it;
  fill_keys(k0, n, 0);
  memcpy(kWant, k0, n*8);
  for(i=0; i<n; i++) pWant[i] = (uint32_t)i;
  px_sort_u64_perm(kWant, pWant, n, 1);
  for(iCase=0; iCase<3; iCase++){
    for(it=0; it<nThr; it++){
      stop_after s;
      int rc;
      memset(&s, 0, sizeof(s));
      s.base.xAsk = stop_after_ask;
      s.base.pArg = &s;
      s.nStopAt = iCase==0 ? 0 : iCase==1 ? 1 : 2;
      memcpy(k, k0, n*8);
      for(i=0; i<n; i++) p[i] = (uint32_t)i;
      k[n] = 0x5a5a5a5a5a5a5a5aULL;
      p[n] = 0xa5a5a5a5u;
      check_case("sort with a px_stop that stops at ask %d, %d threads", s.nStopAt, aThr[it]);
      px_stop_install(&s.base);
      rc = px_sort_u64_perm(k, p, n, aThr[it]);
      px_stop_install(0);
      CHECK(px_stop_installed()==0, "still installed");
      CHECK(k[n]==0x5a5a5a5a5a5a5a5aULL && p[n]==0xa5a5a5a5u, "wrote past n");
      if( iCase==0 ){
        CHECK(rc==PX_OK && s.nAsk>0, "rc %d after %d asks", rc, s.nAsk);
        check_u64s(k, kWant, n, "key");
        check_u32s(p, pWant, n, "perm");
      }else{
        CHECK(rc==PX_EINTR, "rc %d after %d asks", rc, s.nAsk);
        for(i=0; i<n && p[i]<n; i++){}
        CHECK(i==n, "perm[%zu] = %u, not a row", i, i<n ? p[i] : 0);
      }
    }
  }
  /* No px_stop: never asks, the same result. */
  memcpy(k, k0, n*8);
  for(i=0; i<n; i++) p[i] = (uint32_t)i;
  check_case("sort with no px_stop installed");
  CHECK(px_sort_u64_perm(k, p, n, 2)==PX_OK, "rc");
  check_u64s(k, kWant, n, "key");
  check_u32s(p, pWant, n, "perm");
  free(k); free(k0); free(kWant); free(p); free(pWant);
}

/* Gather and scatter with a px_stop: never told to stop, the full result;
** told to stop at the first ask, every element is either untouched or
** right (a stop leaves the output partly written, never wrongly), nothing
** is written past n, and with one thread nothing at all. */
static void test_gather_stop(void){
  size_t n = 1000003, i, nWritten;
  uint64_t *src = xmalloc(n*8), *dst = xmalloc((n+1)*8);
  uint32_t *aIdx = xmalloc(n*4);
  int iCase, it;
  fill_u64(src, n);
  for(i=0; i<n; i++) aIdx[i] = (uint32_t)check_below(&rng, n);
  for(iCase=0; iCase<2; iCase++){
    for(it=0; it<nThr; it++){
      stop_after s;
      memset(&s, 0, sizeof(s));
      s.base.xAsk = stop_after_ask;
      s.base.pArg = &s;
      s.nStopAt = iCase;
      for(i=0; i<=n; i++) dst[i] = ~(uint64_t)0;
      check_case("gather with a px_stop that stops at ask %d, %d threads", iCase, aThr[it]);
      px_stop_install(&s.base);
      px_gather_u64(src, aIdx, dst, n, aThr[it]);
      px_stop_install(0);
      CHECK(dst[n]==~(uint64_t)0, "wrote past n");
      for(i=0, nWritten=0; i<n; i++){
        if( dst[i]==src[aIdx[i]] ){ nWritten++; continue; }
        if( dst[i]!=~(uint64_t)0 ) break;
      }
      CHECK(i==n, "dst[%zu] is neither untouched nor src[idx]", i);
      if( iCase==0 ){
        CHECK(nWritten==n, "%zu of %zu written without a stop", nWritten, n);
      }else if( aThr[it]==1 ){
        CHECK(nWritten<n/100, "%zu of %zu written after a stop at the first ask",
              nWritten, n);
      }
    }
  }
  free(src); free(dst); free(aIdx);
}


/* Installs *p, new, to say stop at its nStopAt-th ask (never: 0). */
static void stop_arm(stop_after *p, int nStopAt){
  memset(p, 0, sizeof(*p));
  p->base.xAsk = stop_after_ask;
  p->base.pArg = p;
  p->nStopAt = nStopAt;
  px_stop_install(&p->base);
}

/* The kernels of grouping with a px_stop: never told to stop, the result
** of no px_stop; told to stop at the first ask, PX_EINTR, nothing written
** past the outputs' ends, and every permutation entry written a row. */
static void test_group_kernels_stop(void){
  size_t n = 3000017, i, nSeg, nSegWant;
  uint32_t nBin = 1000;
  uint32_t *aBin = xmalloc(n*4), *p = xmalloc((n+1)*4), *pWant = xmalloc(n*4);
  uint64_t *aa[2], *aTop = xmalloc((n+1)*8);
  size_t *aOff = xmalloc((n+2)*sizeof(size_t)), *aOffWant = xmalloc((n+1)*sizeof(size_t));
  int iCase, it, rc;
  aa[0] = xmalloc(n*8);
  aa[1] = xmalloc(n*8);
  for(i=0; i<n; i++){
    aBin[i] = (uint32_t)check_below(&rng, nBin);
    aa[0][i] = check_below(&rng, 1000);
    aa[1][i] = check_below(&rng, 1000);
  }
  rc = px_sort_words_perm((const uint64_t *const *)aa, 2, n, pWant, aTop, 2);
  rc |= px_segments_u64(aTop, (const uint64_t *const *)aa + 1, 1, pWant, n, 0, aOffWant,
                        &nSegWant, 2);
  check_case("group kernels without a px_stop");
  CHECK(rc==PX_OK && nSegWant>1000 && nSegWant<n, "rc %d nSeg %zu", rc, nSegWant);
  for(iCase=0; iCase<2; iCase++){
    for(it=0; it<nThr; it++){
      stop_after s;
      /* A fresh px_stop for each kernel: each stops at its own first ask. */
      stop_arm(&s, iCase);

      check_case("sort words with a px_stop that stops at ask %d, %d threads", iCase, aThr[it]);
      p[n] = 0xa5a5a5a5u;
      aTop[n] = 42;
      rc = px_sort_words_perm((const uint64_t *const *)aa, 2, n, p, aTop, aThr[it]);
      CHECK(p[n]==0xa5a5a5a5u && aTop[n]==42, "wrote past n");
      if( iCase==0 ){
        CHECK(rc==PX_OK, "rc %d", rc);
        check_u32s(p, pWant, n, "perm");
      }else{
        CHECK(rc==PX_EINTR, "rc %d", rc);
        for(i=0; i<n && p[i]<n; i++){}
        CHECK(i==n, "perm[%zu] = %u, not a row", i, i<n ? p[i] : 0);
      }

      stop_arm(&s, iCase);
      check_case("segments with a px_stop that stops at ask %d, %d threads", iCase, aThr[it]);
      aOff[n+1] = 777;
      rc = px_segments_u64(aTop, (const uint64_t *const *)aa + 1, 1, pWant, n, 0, aOff,
                           &nSeg, aThr[it]);
      CHECK(aOff[n+1]==777, "wrote past n+1");
      if( iCase==0 ){
        CHECK(rc==PX_OK && nSeg==nSegWant, "rc %d nSeg %zu", rc, nSeg);
        for(i=0; i<=nSeg && aOff[i]==aOffWant[i]; i++){}
        CHECK(i>nSeg, "off[%zu]", i);
      }else{
        CHECK(rc==PX_EINTR && nSeg<=n, "rc %d nSeg %zu", rc, nSeg);
      }

      stop_arm(&s, iCase);
      check_case("countsort with a px_stop that stops at ask %d, %d threads", iCase, aThr[it]);
      for(i=0; i<=n; i++) p[i] = 0xa5a5a5a5u;
      aOff[nBin+1] = 777;
      rc = px_countsort_u32(aBin, n, nBin, p, aOff, 0, 0, 0, aThr[it]);
      CHECK(p[n]==0xa5a5a5a5u && aOff[nBin+1]==777, "wrote past the end");
      if( iCase==0 ){
        CHECK(rc==PX_OK && aOff[nBin]==n, "rc %d", rc);
      }else{
        CHECK(rc==PX_EINTR, "rc %d", rc);
        for(i=0; i<n && (p[i]<n || p[i]==0xa5a5a5a5u); i++){}
        CHECK(i==n, "perm[%zu] = %u, not a row", i, i<n ? p[i] : 0);
      }
      px_stop_install(0);
    }
  }
  free(aBin); free(p); free(pWant); free(aa[0]); free(aa[1]); free(aTop);
  free(aOff); free(aOffWant);
}

/* The kernels of ORDER BY with a px_stop: never told to stop, the result of
** no px_stop; told to stop at the first ask, PX_EINTR and nothing written
** past the outputs' ends (the topk of 1000 rows is the heap path up to
** n / PX_TOPK_SORT_DIV; 2 n / 3 rows sorts). */
static void test_order_kernels_stop(void){
  size_t n = 3000017, i, iK;
  static const size_t aK[] = { 5, 1000, 2000000 };
  uint32_t *p = xmalloc((n+1)*4), *pWant = xmalloc(n*4);
  uint64_t *aa[2], *aOut[2];
  int iCase, it, nWord, rc, nOut;
  for(i=0; i<2; i++){
    aa[i] = xmalloc(n*8);
    aOut[i] = xmalloc((n+1)*8);
  }
  for(i=0; i<n; i++){
    aa[0][i] = check_below(&rng, 1000);
    aa[1][i] = check_next(&rng);
  }
  rc = px_sort_words_perm((const uint64_t *const *)aa, 2, n, pWant, 0, 2);
  check_case("order kernels without a px_stop");
  CHECK(rc==PX_OK, "rc %d", rc);
  for(iCase=0; iCase<2; iCase++){
    for(it=0; it<nThr; it++){
      stop_after s;
      for(iK=0; iK<sizeof(aK)/sizeof(aK[0]); iK++){
        for(nWord=1; nWord<=2; nWord++){
          if( nWord==1 && iK==2 ) continue;
          stop_arm(&s, iCase);
          check_case("topk k=%zu words=%d with a px_stop that stops at ask %d, %d threads",
                     aK[iK], nWord, iCase, aThr[it]);
          p[aK[iK]] = 0xa5a5a5a5u;
          rc = px_topk_words_perm((const uint64_t *const *)aa, nWord, n, aK[iK], p, aThr[it]);
          px_stop_install(0);
          CHECK(p[aK[iK]]==0xa5a5a5a5u, "wrote past k");
          if( iCase==0 ){
            CHECK(rc==PX_OK, "rc %d", rc);
            if( nWord==2 ) check_u32s(p, pWant, aK[iK], "row");
          }else{
            CHECK(rc==PX_EINTR, "rc %d", rc);
          }
        }
      }

      stop_arm(&s, iCase);
      check_case("keys pack with a px_stop that stops at ask %d, %d threads", iCase, aThr[it]);
      aOut[0][n] = aOut[1][n] = 42;
      nOut = -1;
      rc = px_keys_pack((const uint64_t *const *)aa, 2, n, aOut, &nOut, aThr[it]);
      px_stop_install(0);
      CHECK(aOut[0][n]==42 && aOut[1][n]==42, "wrote past n");
      if( iCase==0 ){
        CHECK(rc==PX_OK && nOut==2, "rc %d, %d words", rc, nOut);
      }else{
        CHECK(rc==PX_EINTR && nOut==0, "rc %d, %d words", rc, nOut);
      }
    }
  }
  for(i=0; i<2; i++){ free(aa[i]); free(aOut[i]); }
  free(p); free(pWant);
}

/* px_stop_wait: the installing thread, done with its share at once, keeps
** asking while another thread of its team works on, so that thread sees
** the stop (here it works until it does, or gives up after 10 s); without
** the asking it would wait for nothing.  A thread without the px_stop
** returns at once. */
static void test_stop_wait(void){
  stop_after s;
  int nDone = 0, bSaw = 0, nTeam = 0;
  memset(&s, 0, sizeof(s));
  s.base.xAsk = stop_after_ask;
  s.base.pArg = &s;
  s.nStopAt = 3;
  check_case("px_stop_wait asks until the team is done");
  px_stop_install(&s.base);
  #pragma omp parallel num_threads(2)
  {
    int t = omp_get_thread_num();
    px_stop *p = px_stop_installed();
    #pragma omp single
    nTeam = omp_get_num_threads();
    if( t!=0 ){
      double t0 = omp_get_wtime();
      CHECK(p==0, "the px_stop is the installing thread's only");
      while( !px_stopping(&s.base) && omp_get_wtime()-t0<10.0 ){}
      bSaw = px_stopping(&s.base);
    }
    px_stop_wait(p ? p : &s.base, &nDone, omp_get_num_threads());
  }
  px_stop_install(0);
  CHECK(nDone==nTeam, "%d of %d threads done", nDone, nTeam);
  if( nTeam>1 ){
    CHECK(bSaw, "the other thread never saw the stop (%d asks)", s.nAsk);
    CHECK(s.nAsk==3, "%d asks", s.nAsk);
  }
}

/* ---- join.h: the equi-join kernel ------------------------------------------ */

/* Join keys: nWord words per row; shape 0: each word one of about n/2
** values (duplicates on both sides, some rows unmatched); 1: word 0
** unique on the build side (a primary key), the probe side in twice that
** range; 2: every key equal; 3: each word one of 3 values (few keys, many
** duplicates); 4: random 64-bit words, every third probe row copied from a
** random build row.  The words after the first take few values, so rows
** often tie on word 0 and differ later. */
static void fill_join(uint64_t **aaB, uint64_t **aaP, int nWord, size_t nB, size_t nP,
                      int shape){
  size_t dom = (nB > nP ? nB : nP)/2 + 1, i;
  int w;
  for(w=0; w<nWord; w++){
    uint64_t d = w==0 ? dom : 3;
    for(i=0; i<nB; i++){
      switch( shape ){
        case 0: aaB[w][i] = check_below(&rng, d); break;
        case 1: aaB[w][i] = w==0 ? i*7 : check_below(&rng, 2); break;
        case 2: aaB[w][i] = 42; break;
        case 3: aaB[w][i] = check_below(&rng, 3) << 40; break;
        default: aaB[w][i] = check_next(&rng); break;
      }
    }
    for(i=0; i<nP; i++){
      switch( shape ){
        case 0: aaP[w][i] = check_below(&rng, d); break;
        case 1: aaP[w][i] = w==0 ? check_below(&rng, 2*nB + 1)*7/2 : check_below(&rng, 2); break;
        case 2: aaP[w][i] = 42; break;
        case 3: aaP[w][i] = check_below(&rng, 3) << 40; break;
        default: aaP[w][i] = check_next(&rng); break;
      }
    }
  }
  if( shape==4 && nB>0 ){
    for(i=0; i<nP; i+=3){
      size_t r = check_below(&rng, nB);
      for(w=0; w<nWord; w++) aaP[w][i] = aaB[w][r];
    }
  }
}

/* Skip flags: none (NULL), about one row in 8, or every row. */
static uint8_t *fill_skip(size_t n, int eSkip){
  uint8_t *a;
  size_t i;
  if( eSkip==0 ) return 0;
  a = xmalloc(n);
  for(i=0; i<n; i++) a[i] = eSkip==2 ? 1 : check_below(&rng, 8)==0;
  return a;
}

/* The reference join: the build rows not skipped, sorted by (words, row)
** with qsort (ref_join_sort(), into aSort, returning how many); each probe
** row's matches found by binary search (ref_join_match()); then for each
** probe row in order, its matches in increasing row order (ref_join(),
** which writes the pairs, unless aP is NULL, and returns their number). */
static size_t ref_join_sort(uint64_t *const *aaB, int nWord, size_t nB,
                            const uint8_t *aSkipB, uint32_t *aSort){
  size_t nS = 0, i;
  for(i=0; i<nB; i++) if( aSkipB==0 || !aSkipB[i] ) aSort[nS++] = (uint32_t)i;
  gWords.aaW = (const uint64_t *const *)aaB;
  gWords.nWord = nWord;
  qsort(aSort, nS, sizeof(uint32_t), words_cmp);
  return nS;
}

/* The first of aSort[0..nS-1] whose key is above (bAbove) or at least
** the key of probe row i. */
static size_t ref_join_bound(uint64_t *const *aaB, uint64_t *const *aaP, int nWord,
                             const uint32_t *aSort, size_t nS, size_t i, int bAbove){
  size_t lo = 0, hi = nS, mid;
  int w, c;
  while( lo<hi ){
    mid = lo + (hi - lo)/2;
    for(w=0, c=0; w<nWord && c==0; w++){
      uint64_t u = aaB[w][aSort[mid]], v = aaP[w][i];
      c = u<v ? -1 : u>v;
    }
    if( c<0 || (bAbove && c==0) ) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/* For each probe row i: aLo[i] and aCnt[i], the range of aSort that holds
** its matches (empty for a skipped row). */
static void ref_join_match(uint64_t *const *aaB, uint64_t *const *aaP, int nWord,
                           const uint32_t *aSort, size_t nS, size_t nP,
                           const uint8_t *aSkipP, size_t *aLo, size_t *aCnt){
  size_t i;
  for(i=0; i<nP; i++){
    aLo[i] = aCnt[i] = 0;
    if( aSkipP==0 || !aSkipP[i] ){
      aLo[i] = ref_join_bound(aaB, aaP, nWord, aSort, nS, i, 0);
      aCnt[i] = ref_join_bound(aaB, aaP, nWord, aSort, nS, i, 1) - aLo[i];
    }
  }
}

static size_t ref_join(const uint32_t *aSort, const size_t *aLo, const size_t *aCnt,
                       size_t nP, int eKind, uint32_t *aP, uint32_t *aB){
  size_t nOut = 0, i, k;
  for(i=0; i<nP; i++){
    if( eKind==PX_JOIN_INNER || eKind==PX_JOIN_LEFT ){
      if( aP ){
        for(k=0; k<aCnt[i]; k++){ aP[nOut+k] = (uint32_t)i; aB[nOut+k] = aSort[aLo[i]+k]; }
      }
      nOut += aCnt[i];
      if( aCnt[i]==0 && eKind==PX_JOIN_LEFT ){
        if( aP ){ aP[nOut] = (uint32_t)i; aB[nOut] = PX_JOIN_NONE; }
        nOut++;
      }
    }else if( (aCnt[i]>0)==(eKind==PX_JOIN_SEMI) ){
      if( aP ) aP[nOut] = (uint32_t)i;
      nOut++;
    }
  }
  return nOut;
}

/* The literal nested loop, for small sides: CHECKs that ref_join() agrees
** (so that the reference itself is checked). */
static void check_ref_join(uint64_t *const *aaB, uint64_t *const *aaP, int nWord,
                           size_t nB, size_t nP, const uint8_t *aSkipB,
                           const uint8_t *aSkipP, int eKind, const uint32_t *aP,
                           const uint32_t *aB, size_t nRef){
  size_t nOut = 0, i, j;
  int w, bBad = 0;
  for(i=0; i<nP && !bBad; i++){
    size_t nMatch = 0;
    for(j=0; j<nB && !(aSkipP && aSkipP[i]); j++){
      if( aSkipB && aSkipB[j] ) continue;
      for(w=0; w<nWord && aaB[w][j]==aaP[w][i]; w++){}
      if( w<nWord ) continue;
      nMatch++;
      if( eKind<=PX_JOIN_LEFT ){
        bBad = nOut>=nRef || aP[nOut]!=i || aB[nOut]!=j;
        nOut++;
      }
    }
    if( (eKind==PX_JOIN_LEFT && nMatch==0) || (eKind==PX_JOIN_SEMI && nMatch>0)
     || (eKind==PX_JOIN_ANTI && nMatch==0) ){
      bBad = bBad || nOut>=nRef || aP[nOut]!=i
          || (eKind==PX_JOIN_LEFT && aB[nOut]!=PX_JOIN_NONE);
      nOut++;
    }
  }
  CHECK(!bBad && nOut==nRef, "the reference is not the nested loop (row %zu)", i);
}

static const char *azJoinKind[] = { "inner", "left", "semi", "anti" };

/* Probes table pT with the probe rows and emits (both sides, then for
** INNER and LEFT the probe side alone), CHECKing the rows against the
** reference's nRef rows aRefP, aRefB; aGotP, aGotB have room for nRef+1. */
static void check_join_probe(const px_join_table *pT, uint64_t *const *aaP, size_t nP,
                             const uint8_t *aSkipP, int eKind, int nthreads,
                             const uint32_t *aRefP, const uint32_t *aRefB, size_t nRef,
                             uint32_t *aGotP, uint32_t *aGotB){
  int bBuild, rc;
  size_t i;
  for(bBuild=1; bBuild>=0; bBuild--){
    px_join_result *pR = 0;
    size_t nOut = 0;
    int bB = bBuild && eKind<=PX_JOIN_LEFT;     /* aBuild passed */
    if( bBuild==0 && eKind!=PX_JOIN_LEFT ) break;
    rc = px_join_probe(pT, (const uint64_t *const *)aaP, nP, aSkipP, eKind, nthreads,
                       &pR, &nOut);
    CHECK(rc==PX_OK && pR, "probe rc %d", rc);
    CHECK(nOut==nRef, "nOut %zu want %zu", nOut, nRef);
    if( rc || nOut!=nRef ){
      px_join_result_free(pR);
      return;
    }
    aGotP[nRef] = aGotB[nRef] = 0xa5a5a5a5u;
    if( !bB ) memset(aGotB, 0x5a, nRef*4);
    rc = px_join_emit(pR, aGotP, bB ? aGotB : 0, nthreads);
    CHECK(rc==PX_OK, "emit rc %d", rc);
    check_u32s(aGotP, aRefP, nRef, "probe row");
    if( bB ) check_u32s(aGotB, aRefB, nRef, "build row");
    CHECK(aGotP[nRef]==0xa5a5a5a5u && aGotB[nRef]==0xa5a5a5a5u, "wrote past nOut");
    if( !bB ){
      for(i=0; i<nRef && aGotB[i]==0x5a5a5a5au; i++){}
      CHECK(i==nRef, "aBuild written");
    }
  }
}

/* Every kind of join against the reference, exact pairs in order, on sizes
** 0, 1, 2, block-1, block, block+1, ... for both sides, nWord 1..3, the
** key shapes of fill_join(), skipped rows on either side, every thread
** count (one table per thread count, probed for every kind).  Kinds whose
** output would exceed 4M rows are left out (the skewed shapes on large
** sides), and the larger sizes run fewer cases (the tiny-block build runs
** all of them through many blocks). */
static void test_join(void){
  int iz, iq, nWord, shape, eSkip, eKind, it, w;
  for(iz=0; iz<nSize; iz++){
    for(iq=0; iq<3; iq++){
      size_t nB = aSize[iz];
      size_t nP = iq==0 ? nB : iq==1 ? aSize[(iz + 3) % nSize] : aSize[(iz + 7) % nSize];
      size_t nMax = nB > nP ? nB : nP;
      uint64_t *aaB[3], *aaP[3];
      size_t *aLo, *aCnt;
      if( iq>0 && nB==nP ) continue;
      /* With 5-bit tags every probe walks 1/32 of the keys: small sides. */
      if( PX_JOIN_HASH_BITS<64 && nMax>1000 ) continue;
      /* Beyond a few blocks, two pairings of sizes (not three). */
      if( nMax>8*B && iq==2 ) continue;
      /* The large size: a large side against a smaller one. */
      if( nMax>100*B && (nB==nP || nP<B) ) continue;
      for(w=0; w<3; w++){ aaB[w] = xmalloc(nB*8); aaP[w] = xmalloc(nP*8); }
      aLo = xmalloc(nP*sizeof(size_t));
      aCnt = xmalloc(nP*sizeof(size_t));
      for(nWord=1; nWord<=3; nWord++){
        for(shape=0; shape<5; shape++){
          /* Medium sides: the skewed shapes with one word; large: one
          ** or two words, shapes 0, 1 and 4. */
          if( nMax>8*B && (nWord==3 || shape==2 || shape==3 || (nWord==2 && shape>0)) ) continue;
          /* Large: one word, shapes 0 and 4 (unique and random keys). */
          if( nMax>100*B && (nWord>1 || (shape!=0 && shape!=4)) ) continue;
          fill_join(aaB, aaP, nWord, nB, nP, shape);
          for(eSkip=0; eSkip<4; eSkip++){
            /* eSkip: 0 none, 1 some on both sides, 2 every build row, 3
            ** every probe row. */
            uint8_t *aSkipB, *aSkipP;
            uint32_t *aSort, *aRefP[4], *aRefB[4], *aGotP, *aGotB;
            size_t nS, nRef[4], nGot = 0;
            if( eSkip>=2 && (nWord>1 || shape>0 || nMax>8*B) ) continue;
            if( eSkip==1 && nMax>100*B && shape>0 ) continue;
            aSkipB = fill_skip(nB, eSkip==1 ? 1 : eSkip==2 ? 2 : 0);
            aSkipP = fill_skip(nP, eSkip==1 ? 1 : eSkip==3 ? 2 : 0);
            aSort = xmalloc(nB*4);
            nS = ref_join_sort(aaB, nWord, nB, aSkipB, aSort);
            ref_join_match(aaB, aaP, nWord, aSort, nS, nP, aSkipP, aLo, aCnt);
            for(eKind=PX_JOIN_INNER; eKind<=PX_JOIN_ANTI; eKind++){
              nRef[eKind] = ref_join(aSort, aLo, aCnt, nP, eKind, 0, 0);
              aRefP[eKind] = aRefB[eKind] = 0;
              if( nRef[eKind]>((size_t)4<<20) ) continue;
              if( nRef[eKind]>nGot ) nGot = nRef[eKind];
              aRefP[eKind] = xmalloc(nRef[eKind]*4);
              aRefB[eKind] = xmalloc(nRef[eKind]*4);
              ref_join(aSort, aLo, aCnt, nP, eKind, aRefP[eKind], aRefB[eKind]);
              if( nB*nP<=(size_t)40000 ){
                check_case("join reference n=%zu x %zu words=%d shape=%d skip=%d %s",
                           nP, nB, nWord, shape, eSkip, azJoinKind[eKind]);
                check_ref_join(aaB, aaP, nWord, nB, nP, aSkipB, aSkipP, eKind,
                               aRefP[eKind], aRefB[eKind], nRef[eKind]);
              }
            }
            aGotP = xmalloc((nGot+1)*4);
            aGotB = xmalloc((nGot+1)*4);
            for(it=0; it<nThr; it++){
              px_join_table *pT = 0;
              int rc;
              /* Beyond a few blocks, thread counts 2 and 3 on one case. */
              if( nMax>8*B && it>0 && it<nThr-1 && (nWord>1 || shape>0 || eSkip>0) ) continue;
              check_case("join build n=%zu words=%d shape=%d skip=%d threads=%d",
                         nB, nWord, shape, eSkip, aThr[it]);
              rc = px_join_build((const uint64_t *const *)aaB, nWord, nB, aSkipB, aThr[it], &pT);
              CHECK(rc==PX_OK && pT, "build rc %d", rc);
              if( rc ) continue;
              CHECK(px_join_table_bytes(pT)>=(nS ? 20 : 4), "table bytes");
              for(eKind=PX_JOIN_INNER; eKind<=PX_JOIN_ANTI; eKind++){
                if( aRefP[eKind]==0 ) continue;
                check_case("join n=%zu x %zu words=%d shape=%d skip=%d %s threads=%d",
                           nP, nB, nWord, shape, eSkip, azJoinKind[eKind], aThr[it]);
                check_join_probe(pT, aaP, nP, aSkipP, eKind, aThr[it], aRefP[eKind],
                                 aRefB[eKind], nRef[eKind], aGotP, aGotB);
              }
              px_join_table_free(pT);
            }
            for(eKind=PX_JOIN_INNER; eKind<=PX_JOIN_ANTI; eKind++){
              free(aRefP[eKind]); free(aRefB[eKind]);
            }
            free(aGotP); free(aGotB); free(aSort); free(aSkipB); free(aSkipP);
          }
        }
      }
      for(w=0; w<3; w++){ free(aaB[w]); free(aaP[w]); }
      free(aLo); free(aCnt);
    }
  }
}

/* Skew and sizes: 3000 probe rows of one key against 3000 build rows of
** it (9M pairs: work must follow the output, not its square), and a probe
** that frees its state without emitting; limits (PX_ETOOBIG). */
static void test_join_skew(void){
  size_t n = 3000, i, nOut = 0, nWant = n*n;
  uint64_t *aK = xmalloc(n*8);
  uint32_t *aP = xmalloc(nWant*4), *aB = xmalloc(nWant*4);
  const uint64_t *aa[1];
  px_join_table *pT = 0;
  px_join_result *pR = 0;
  int rc, it;
  for(i=0; i<n; i++) aK[i] = 7;
  aa[0] = aK;
  for(it=0; it<nThr; it++){
    check_case("join skew: %zu x %zu rows of one key, threads=%d", n, n, aThr[it]);
    rc = px_join_build(aa, 1, n, 0, aThr[it], &pT);
    CHECK(rc==PX_OK, "build rc %d", rc);
    if( rc ) continue;
    rc = px_join_probe(pT, aa, n, 0, PX_JOIN_LEFT, aThr[it], &pR, &nOut);
    CHECK(rc==PX_OK && nOut==nWant, "probe rc %d nOut %zu", rc, nOut);
    if( rc==PX_OK && nOut==nWant ){
      rc = px_join_emit(pR, aP, aB, aThr[it]);
      for(i=0; i<nWant && aP[i]==i/n && aB[i]==i%n; i++){}
      CHECK(rc==PX_OK && i==nWant, "rc %d pair %zu", rc, i);
    }
    rc = px_join_probe(pT, aa, n, 0, PX_JOIN_INNER, aThr[it], &pR, &nOut);
    CHECK(rc==PX_OK && nOut==nWant, "probe rc %d", rc);
    px_join_result_free(pR);
    px_join_table_free(pT);
  }
  check_case("join: more than UINT32_MAX - 1 rows on a side is PX_ETOOBIG");
  pT = (px_join_table*)1;
  CHECK(px_join_build(aa, 1, UINT32_MAX, 0, 1, &pT)==PX_ETOOBIG && pT==0, "build");
  rc = px_join_build(aa, 1, 1, 0, 1, &pT);
  CHECK(rc==PX_OK, "build rc %d", rc);
  if( rc==PX_OK ){
    pR = (px_join_result*)1;
    CHECK(px_join_probe(pT, aa, UINT32_MAX, 0, PX_JOIN_INNER, 1, &pR, &nOut)==PX_ETOOBIG
          && pR==0, "probe");
    px_join_table_free(pT);
  }
  free(aK); free(aP); free(aB);
}

/* Out of memory: the address space limited to a little more than the
** process uses, from nothing spare to 512 MiB in steps of half as much
** again, so that the allocations of the build (4M rows: 24 bytes per row
** and the sort's scratch) and of the probe (8 per row) fail at some steps: each
** call returns PX_OK with the right count, or PX_ENOMEM with nothing
** returned.  (Not under ASan, whose shadow memory needs an unlimited
** address space, nor with tags of a few bits, where 2M rows probe slowly.) */
static void test_join_enomem(void){
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && PX_JOIN_HASH_BITS>=64
  size_t n = (size_t)1 << 22, i, nPage = 0, nWant, nOut, nExtra;
  uint64_t *aK = xmalloc(n*8);
  const uint64_t *aa[1];
  struct rlimit old, lim;
  px_join_table *pT = 0, *pT0 = 0;
  px_join_result *pR = 0;
  int rcB, rcP, nOk = 0, nFail = 0;
  FILE *f;
  for(i=0; i<n; i++) aK[i] = check_below(&rng, n);
  aa[0] = aK;
  if( px_join_build(aa, 1, n, 0, 2, &pT0) ){
    CHECK(0, "join build without a limit");
    free(aK);
    return;
  }
  px_join_probe(pT0, aa, n, 0, PX_JOIN_INNER, 2, &pR, &nWant);
  px_join_result_free(pR);
  if( getrlimit(RLIMIT_AS, &old) ){ free(aK); px_join_table_free(pT0); return; }
  check_case("join without memory is PX_ENOMEM");
  for(nExtra=0; nExtra<=((size_t)512<<20); nExtra = nExtra ? nExtra*3/2 : (size_t)4<<20){
    f = fopen("/proc/self/statm", "r");
    if( f==0 || fscanf(f, "%zu", &nPage)!=1 ){ if( f ) fclose(f); break; }
    fclose(f);
    lim = old;
    lim.rlim_cur = nPage * (size_t)sysconf(_SC_PAGESIZE) + nExtra;
    setrlimit(RLIMIT_AS, &lim);
    pT = (px_join_table*)1;
    rcB = px_join_build(aa, 1, n, 0, 2, &pT);
    pR = (px_join_result*)1;
    rcP = px_join_probe(pT0, aa, n, 0, PX_JOIN_INNER, 2, &pR, &nOut);
    setrlimit(RLIMIT_AS, &old);
    CHECK(rcB==PX_OK ? pT!=0 : rcB==PX_ENOMEM && pT==0, "build rc %d at +%zu MiB", rcB,
          nExtra>>20);
    CHECK(rcP==PX_OK ? pR!=0 && nOut==nWant : rcP==PX_ENOMEM && pR==0,
          "probe rc %d at +%zu MiB", rcP, nExtra>>20);
    nOk += rcB==PX_OK;
    nFail += rcB==PX_ENOMEM;
    if( rcB==PX_OK ) px_join_table_free(pT);
    if( rcP==PX_OK ) px_join_result_free(pR);
  }
  CHECK(nOk>0 && nFail>0, "%d builds ran, %d ran out of memory", nOk, nFail);
  px_join_table_free(pT0);
  free(aK);
#endif
}

/* Stopping: told to stop at the first ask, build, probe and emit return
** PX_EINTR (emit freeing its state), nothing is returned and nothing
** written past the output; never told to, the result of no px_stop. */
static void test_join_stop(void){
  size_t n = PX_JOIN_HASH_BITS<64 ? 2003 : 1000003, i, nOut = 0, nWant = 0;
  uint64_t *aK = xmalloc(n*8);
  uint32_t *aP = xmalloc((n+1)*4), *aB = xmalloc((n+1)*4);
  const uint64_t *aa[1];
  px_join_table *pT = 0, *pT0 = 0;
  px_join_result *pR = 0;
  int iCase, it, rc;
  for(i=0; i<n; i++) aK[i] = check_below(&rng, n);
  aa[0] = aK;
  rc = px_join_build(aa, 1, n, 0, 2, &pT0);
  if( rc==PX_OK ) rc = px_join_probe(pT0, aa, n, 0, PX_JOIN_LEFT, 2, &pR, &nWant);
  px_join_result_free(pR);
  check_case("join without a px_stop");
  CHECK(rc==PX_OK && nWant>=n, "rc %d nOut %zu", rc, nWant);
  if( rc ){ free(aK); free(aP); free(aB); return; }
  if( nWant>n ){ aP = realloc(aP, (nWant+1)*4); aB = realloc(aB, (nWant+1)*4); }
  for(iCase=0; iCase<2; iCase++){
    for(it=0; it<nThr; it++){
      stop_after s;
      check_case("join with a px_stop that stops at ask %d, %d threads", iCase, aThr[it]);
      stop_arm(&s, iCase);
      pT = (px_join_table*)1;
      rc = px_join_build(aa, 1, n, 0, aThr[it], &pT);
      px_stop_install(0);
      CHECK(iCase ? rc==PX_EINTR && pT==0 : rc==PX_OK, "build rc %d", rc);
      if( rc==PX_OK ) px_join_table_free(pT);

      stop_arm(&s, iCase);
      pR = (px_join_result*)1;
      rc = px_join_probe(pT0, aa, n, 0, PX_JOIN_LEFT, aThr[it], &pR, &nOut);
      px_stop_install(0);
      CHECK(iCase ? rc==PX_EINTR && pR==0 : rc==PX_OK && nOut==nWant, "probe rc %d", rc);
      if( rc ) continue;

      stop_arm(&s, iCase);
      aP[nWant] = aB[nWant] = 0xa5a5a5a5u;
      rc = px_join_emit(pR, aP, aB, aThr[it]);
      px_stop_install(0);
      CHECK(rc==PX_OK, "emit rc %d", rc);
      CHECK(aP[nWant]==0xa5a5a5a5u && aB[nWant]==0xa5a5a5a5u, "wrote past nOut");
      if( iCase==0 ) continue;
      /* Emit told to stop: a probe unstopped, then an emit stopped. */
      rc = px_join_probe(pT0, aa, n, 0, PX_JOIN_LEFT, aThr[it], &pR, &nOut);
      CHECK(rc==PX_OK, "probe rc %d", rc);
      if( rc ) continue;
      stop_arm(&s, iCase);
      rc = px_join_emit(pR, aP, aB, aThr[it]);
      px_stop_install(0);
      CHECK(rc==PX_EINTR, "emit rc %d", rc);
      CHECK(aP[nWant]==0xa5a5a5a5u && aB[nWant]==0xa5a5a5a5u, "wrote past nOut");
    }
  }
  px_join_table_free(pT0);
  free(aK); free(aP); free(aB);
}

/* ---- main --------------------------------------------------------------- */

/* CHECK_TIMES=1 prints each test's seconds (to find what makes the run
** long). */
#define TIMED(f) do{ double t0_ = omp_get_wtime(); f(); \
  if( getenv("CHECK_TIMES") ) fprintf(stderr, "%-28s %.2f s\n", #f, omp_get_wtime() - t0_); \
}while(0)

int main(void){
  static const int aWant[] = { 1, 2, 3, 0 };
  int i, j;
  rng.s = check_seed();
  for(i=0; i<4; i++){
    int t = aWant[i] ? aWant[i] : px_ncores();
    for(j=0; j<nThr && aThr[j]!=t; j++){}
    if( j==nThr ) aThr[nThr++] = t;
  }
  {
    /* The large size is smaller with tiny blocks: those builds are about
    ** the multi-block paths, and their many tiny windows are slow. */
    const size_t a[] = { 0, 1, 2, B-1, B, B+1, 2*B+3, 7*B, 37*B+11, B>=1024 ? 1000003 : 20011 };
    for(i=0; i<(int)(sizeof(a)/sizeof(a[0])); i++) aSize[nSize++] = a[i];
  }
  TIMED(test_par);
  TIMED(test_scan_i64);
  TIMED(test_scan_f64);
  TIMED(test_segscan);
  TIMED(test_reduce_i64);
  TIMED(test_reduce_f64);
  TIMED(test_gather);
  TIMED(test_compact);
  TIMED(test_histogram);
  TIMED(test_keys);
  TIMED(test_sort);
  TIMED(test_sort_words);
  TIMED(test_topk);
  TIMED(test_topk_src);
  TIMED(test_keys_pack);
  TIMED(test_countsort);
  TIMED(test_segments);
  TIMED(test_segment_ids);
  TIMED(test_join_enomem);
  TIMED(test_join);
  TIMED(test_join_skew);
  TIMED(test_sort_enomem);
  TIMED(test_join_stop);
  TIMED(test_sort_stop);
  TIMED(test_gather_stop);
  TIMED(test_group_kernels_stop);
  TIMED(test_order_kernels_stop);
  TIMED(test_stop_wait);
  /* After the out-of-memory test: these free large blocks that the
  ** limited address space there could otherwise reuse. */
  TIMED(test_edges_uniform);
  TIMED(test_histogram_edges);
  TIMED(test_range);
  TIMED(test_f64_of_i64);
  TIMED(test_sort_f64);
  return check_summary("kernels");
}
