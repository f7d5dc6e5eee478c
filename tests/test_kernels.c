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
**   - sort: keys and permutation equal to a stable qsort over (key, index).
**
** Run it with CHECK_SEED=n to change the random inputs.
*/
#include "check.h"
#include "par.h"
#include "sort.h"
#include "scan.h"
#include "reduce.h"
#include "gather.h"
#include "histogram.h"
#include <float.h>
#include <math.h>
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

/* Out of memory: with the address space limited to just above what the
** process uses, the scratch of a 4M-element sort cannot be allocated; the
** sort must say so and leave its input alone.  (Not under ASan, whose
** shadow memory needs an unlimited address space.) */
static void test_sort_enomem(void){
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
  size_t n = (size_t)1 << 22, i, nPage = 0;
  uint64_t *k = xmalloc(n*8), *k0 = xmalloc(n*8);
  uint32_t *p = xmalloc(n*4);
  struct rlimit old, lim;
  int rc, rcLsd;
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
  setrlimit(RLIMIT_AS, &old);
  check_case("sort without memory for its scratch is PX_ENOMEM");
  CHECK(rc==PX_ENOMEM && rcLsd==PX_ENOMEM, "rc %d lsd %d", rc, rcLsd);
  check_u64s(k, k0, n, "key untouched");
  for(i=0; i<n && p[i]==i; i++){}
  CHECK(i==n, "perm[%zu] changed", i);
  free(k); free(k0); free(p);
#endif
}

/* ---- main --------------------------------------------------------------- */

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
  test_par();
  test_scan_i64();
  test_scan_f64();
  test_segscan();
  test_reduce_i64();
  test_reduce_f64();
  test_gather();
  test_compact();
  test_histogram();
  test_keys();
  test_sort();
  test_sort_enomem();
  return check_summary("kernels");
}
