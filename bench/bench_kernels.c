/*
** bench_kernels.c: kernel throughput against memcpy, 1 thread vs all cores.
**
**   make bench-kernels   (or ./build/bench_kernels [n [reps [only]]], where
**                        only, if given, keeps the kernels whose name
**                        contains it)
**
** For every kernel, on n = 10M elements by default: elements per second,
** GB/s of input, and the ratio of that to memcpy's bandwidth with the same
** number of threads, at 1 thread and at px_ncores() threads.
**
** How the numbers are defined.  Each figure is the best of nRep runs (the
** run least disturbed by the rest of the machine; the median is printed
** too).  The runs are interleaved: each round times every kernel once.  memcpy bandwidth is
** bytes copied per second (each thread memcpy()s a contiguous share of an
** n-element array of 8-byte values); a kernel's GB/s is bytes of input per
** second, where the input is what the kernel must read once: 8 bytes per
** element for i64/f64 scans and reductions, 8 + 1 for a segmented scan
** (value and head flag), 8 + 4 for gather (index and value) and for the
** sorts (key and permutation), 4 for a histogram of bin indices, 8 for
** the fused histogram of doubles (value -> bin -> count).  So "vs memcpy" 0.5 means
** the kernel consumes its input at half the rate memcpy copies it.
**
** Targets (PASS / MISS): scans and reductions >= 0.5 of memcpy, the sort
** of random u64 keys with a permutation >= 80M keys/s, both histograms into
** 100 bins >= 500M values/s; sort and histogram targets are for all cores.
** The kernels of grouping: the counting sort of bin indices with a
** permutation (4 bytes in per element), into 100 bins and into n/10 bins
** (groups of ten rows, as GROUP BY a key of n/10 values); the sort of
** two-word keys with a permutation (16 bytes: both words); and the
** segments of a sorted leading word plus one word read through a
** permutation (20 bytes: 8 + 8 + 4), for groups of ten.
** The sort is timed three ways to justify MSD: the plain parallel LSD with
** 8-bit and with 11-bit digits, and the MSD that px_sort_u64_perm() uses.
** The kernels of ORDER BY: the top k rows (px_topk_words_perm) for k = 5
** and 1000 by one random word and by two words (a first word of 1000
** values, so that ties read the second), 8 bytes in per element (the
** first word: the second is read on ties only), and at the k where it
** switches to sorting (n / PX_TOPK_SORT_DIV), against the full sort by
** one word (px_sort_words_perm, 12 bytes: key and permutation) and by two
** (above); and packing those two words into one (px_keys_pack, 16 bytes).
*/
#include "par.h"
#include "sort.h"
#include "scan.h"
#include "reduce.h"
#include "gather.h"
#include "histogram.h"
#include "segment.h"
#include "topk.h"
#include "keys.h"
#include "join.h"
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t n = 10000000;
static int nRep = 9;

/* Inputs and outputs, allocated and touched once. */
static int64_t *aI, *aOutI;
static double *aF, *aOutF;
static uint8_t *aHead, *aFlag;
static uint32_t *aIdx, *aBin, *aBinBig, *aPerm, *aPerm0;
static uint64_t *aKey, *aKey0, *aCount, *aWord1, *aLead, *aTie, *aPacked;
static size_t *aOff;
static double aEdge[101];

static uint64_t rng_state = 42;
static uint64_t rnd(void){                /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void *xmalloc(size_t sz){
  void *p = malloc(sz);
  if( p==0 ){ fprintf(stderr, "out of memory\n"); exit(1); }
  memset(p, 0, sz);                        /* fault the pages in now */
  return p;
}

/* ---- the kernels under test ----------------------------------------------- */

static void run_memcpy(int nt){
  #pragma omp parallel num_threads(nt)
  {
    size_t lo, hi;
    px_team_range(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
    memcpy(aOutI + lo, aI + lo, (hi - lo) * sizeof(int64_t));
  }
}
static void run_scan_i64(int nt){ px_scan_incl_i64(aI, aOutI, n, nt); }
static void run_scan_f64(int nt){ px_scan_excl_f64(aF, aOutF, n, nt); }
static void run_segscan(int nt){ px_segscan_f64(PX_SUM, aF, aHead, aOutF, n, nt); }
static void run_reduce_i64(int nt){ int64_t x; px_reduce_i64(PX_SUM, aI, n, &x, nt); }
static void run_reduce_f64(int nt){ double x; px_reduce_f64(PX_SUM, aF, n, &x, nt); }
static void run_max_f64(int nt){ double x; px_reduce_f64(PX_MAX, aF, n, &x, nt); }
static void run_gather(int nt){ px_gather_u64((uint64_t*)aI, aIdx, (uint64_t*)aOutI, n, nt); }
static void run_scatter(int nt){ px_scatter_u64((uint64_t*)aI, aPerm0, (uint64_t*)aOutI, n, nt); }
static void run_compact(int nt){ px_compact_u64((uint64_t*)aI, aFlag, n, (uint64_t*)aOutI, nt); }
static void run_hist(int nt){ px_histogram_u32(aBin, n, 100, aCount, nt); }
/* Doubles -> bin -> counts, fused: 100 equal-width bins over [-1, 1]. */
static void run_hist_f64(int nt){ px_histogram_f64(aF, 0, n, aEdge, 100, aCount, nt); }

/* Sorts start from the same random keys and the identity permutation. */
static void prep_sort(void){
  memcpy(aKey, aKey0, n * sizeof(uint64_t));
  memcpy(aPerm, aPerm0, n * sizeof(uint32_t));
}
static void run_sort_msd(int nt){ px_sort_u64_perm(aKey, aPerm, n, nt); }
static void run_sort_lsd8(int nt){ px_sort_u64_perm_lsd(aKey, aPerm, n, 8, nt); }
static void run_sort_lsd11(int nt){ px_sort_u64_perm_lsd(aKey, aPerm, n, 11, nt); }
static void run_sort_keys(int nt){ px_sort_u64_perm(aKey, 0, n, nt); }
static void run_countsort(int nt){
  px_countsort_u32(aBin, n, 100, aPerm, aOff, 0, 0, 0, nt);
}
static void run_countsort_big(int nt){
  px_countsort_u32(aBinBig, n, (uint32_t)(n/10 + 1), aPerm, aOff, 0, 0, 0, nt);
}
static void run_sort_words(int nt){
  const uint64_t *aa[2];
  aa[0] = aKey0;
  aa[1] = aWord1;
  px_sort_words_perm(aa, 2, n, aPerm, aKey, nt);
}
static void run_segments(int nt){
  const uint64_t *aa[1];
  size_t nSeg;
  aa[0] = aWord1;
  px_segments_u64(aLead, aa, 1, aPerm0, n, aFlag, aOff, &nSeg, nt);
}

static void run_sort_word(int nt){
  const uint64_t *aa[1];
  aa[0] = aKey0;
  px_sort_words_perm(aa, 1, n, aPerm, aKey, nt);
}
/* Top k by aKey0 alone, or by (aTie, aWord1). */
static void run_topk(int nWord, size_t k, int nt){
  const uint64_t *aa[2];
  aa[0] = nWord==1 ? aKey0 : aTie;
  aa[1] = aWord1;
  px_topk_words_perm(aa, nWord, n, k, aPerm, nt);
}
static void run_topk5(int nt){ run_topk(1, 5, nt); }
static void run_topk1000(int nt){ run_topk(1, 1000, nt); }
static void run_topk5_w2(int nt){ run_topk(2, 5, nt); }
static void run_topk1000_w2(int nt){ run_topk(2, 1000, nt); }
static void run_topk_switch(int nt){ run_topk(1, n / PX_TOPK_SORT_DIV, nt); }
/* The equi-joins: build keys aJoinB (nJoinB rows), probe keys aJoinP (n
** rows); the output arrays hold up to 2n rows (a larger output is not
** written: the count is enough to time the probe). */
static uint64_t *aJoinU, *aJoinR, *aJoinS, *aJoinP, *aJoinPS;
static uint32_t *aJoinOutP, *aJoinOutB;
static void run_join(const uint64_t *aB, size_t nB, const uint64_t *aP, int nt){
  const uint64_t *aaB[1], *aaP[1];
  px_join_table *pT;
  px_join_result *pR;
  size_t nOut;
  aaB[0] = aB;
  aaP[0] = aP;
  if( px_join_build(aaB, 1, nB, 0, nt, &pT) ) return;
  if( px_join_probe(pT, aaP, n, 0, PX_JOIN_INNER, nt, &pR, &nOut)==PX_OK ){
    if( nOut<=2*n ) px_join_emit(pR, aJoinOutP, aJoinOutB, nt); else px_join_result_free(pR);
  }
  px_join_table_free(pT);
}
static void run_join_pk(int nt){ run_join(aJoinU, n/10, aJoinP, nt); }
static void run_join_nn(int nt){ run_join(aJoinR, n, aJoinP, nt); }
static void run_join_skew(int nt){ run_join(aJoinS, n, aJoinPS, nt); }

static void run_pack(int nt){
  const uint64_t *aa[2];
  uint64_t *aaOut[2];
  int nOut;
  aa[0] = aTie;
  aa[1] = aWord1;
  aaOut[0] = aPacked;
  aaOut[1] = aKey;
  px_keys_pack(aa, 2, n, aaOut, &nOut, nt);
}

typedef struct bench {
  const char *zName;
  double szIn;                 /* bytes of input per element */
  void (*xRun)(int nt);
  void (*xPrep)(void);         /* untimed set-up before each run, or NULL */
  int eTarget;                 /* 0 none, 1 >= 0.5 memcpy, 2 keys/s, 3 values/s */
  double rTarget;              /* elements/s for targets 2 and 3 */
} bench;

static const bench aBench[] = {
  { "memcpy",               8, run_memcpy,     0, 0, 0 },
  { "scan_incl_i64",        8, run_scan_i64,   0, 1, 0 },
  { "scan_excl_f64",        8, run_scan_f64,   0, 1, 0 },
  { "segscan_f64 sum",      9, run_segscan,    0, 0, 0 },
  { "reduce_i64 sum",       8, run_reduce_i64, 0, 1, 0 },
  { "reduce_f64 sum",       8, run_reduce_f64, 0, 1, 0 },
  { "reduce_f64 max",       8, run_max_f64,    0, 0, 0 },
  { "gather_u64",          12, run_gather,     0, 0, 0 },
  { "scatter_u64",         12, run_scatter,    0, 0, 0 },
  { "compact_u64 (50%)",    9, run_compact,    0, 0, 0 },
  { "histogram 100 bins",   4, run_hist,       0, 3, 500e6 },
  { "histogram_f64 100 bins",8, run_hist_f64,  0, 3, 500e6 },
  { "sort lsd 8-bit+perm", 12, run_sort_lsd8,  prep_sort, 0, 0 },
  { "sort lsd 11-bit+perm",12, run_sort_lsd11, prep_sort, 0, 0 },
  { "sort msd+perm",       12, run_sort_msd,   prep_sort, 2, 80e6 },
  { "sort msd keys only",   8, run_sort_keys,  prep_sort, 0, 0 },
  { "countsort 100 bins",   4, run_countsort,  0, 0, 0 },
  { "countsort n/10 bins",  4, run_countsort_big, 0, 0, 0 },
  { "sort 2 words+perm",   16, run_sort_words, 0, 0, 0 },
  { "segments 10 per group", 20, run_segments, 0, 0, 0 },
  { "sort 1 word+perm",    12, run_sort_word,  0, 0, 0 },
  { "topk k=5",             8, run_topk5,      0, 0, 0 },
  { "topk k=1000",          8, run_topk1000,   0, 0, 0 },
  { "topk 2 words k=5",     8, run_topk5_w2,   0, 0, 0 },
  { "topk 2 words k=1000",  8, run_topk1000_w2, 0, 0, 0 },
  { "topk k=n/SORT_DIV",    8, run_topk_switch, 0, 0, 0 },
  { "keys pack 2 words",   16, run_pack,       0, 0, 0 },
  { "join n x n/10 pk",      8, run_join_pk,    0, 0, 0 },
  { "join n x n",            8, run_join_nn,    0, 0, 0 },
  { "join skew 1e4 dups",    8, run_join_skew,  0, 0, 0 },
};
#define N_BENCH ((int)(sizeof(aBench)/sizeof(aBench[0])))
#define MAX_REP 64

/* One timed run of p with nt threads, in seconds. */
static double time_once(const bench *p, int nt){
  double t;
  if( p->xPrep ) p->xPrep();
  t = omp_get_wtime();
  p->xRun(nt);
  return omp_get_wtime() - t;
}

static int cmp_double(const void *a, const void *b){
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv){
  static double aTime[N_BENCH][2][MAX_REP];
  int aThr[2], nThr, it, ib, r, nMiss = 0;
  const char *zOnly = 0;
  double aCopy[2];
  size_t i;
  if( argc>1 ) n = (size_t)strtoull(argv[1], 0, 10);
  if( argc>2 ) nRep = atoi(argv[2]);
  if( argc>3 ) zOnly = argv[3];
  if( nRep<1 ) nRep = 1;
  if( nRep>MAX_REP ) nRep = MAX_REP;
  aThr[0] = 1;
  aThr[1] = px_ncores();
  nThr = aThr[1]>1 ? 2 : 1;

  aI = xmalloc(n * 8); aOutI = xmalloc(n * 8);
  aF = xmalloc(n * 8); aOutF = xmalloc(n * 8);
  aHead = xmalloc(n); aFlag = xmalloc(n);
  aIdx = xmalloc(n * 4); aBin = xmalloc(n * 4);
  aPerm = xmalloc(n * 4); aPerm0 = xmalloc(n * 4);
  aKey = xmalloc(n * 8); aKey0 = xmalloc(n * 8);
  aCount = xmalloc(PX_HIST_SLOTS(100) * 8);
  aBinBig = xmalloc(n * 4); aWord1 = xmalloc(n * 8); aLead = xmalloc(n * 8);
  aOff = xmalloc((n + 2) * sizeof(size_t));
  aTie = xmalloc(n * 8); aPacked = xmalloc(n * 8);
  aJoinU = xmalloc(n/10 * 8 + 8); aJoinR = xmalloc(n * 8); aJoinS = xmalloc(n * 8);
  aJoinP = xmalloc(n * 8); aJoinPS = xmalloc(n * 8);
  aJoinOutP = xmalloc(2 * n * 4 + 4); aJoinOutB = xmalloc(2 * n * 4 + 4);
  px_edges_uniform(-1.0, 1.0, 100, aEdge);
  for(i=0; i<n; i++){
    uint64_t x = rnd();
    aI[i] = (int64_t)(x >> 20) - ((int64_t)1 << 43);
    aF[i] = (double)(int64_t)x / 9223372036854775808.0;
    aHead[i] = x % 1000 == 0;             /* segments of ~1000 */
    aFlag[i] = (x >> 32) & 1;             /* keep half */
    aIdx[i] = (uint32_t)((x >> 16) % n);
    aBin[i] = (uint32_t)((x >> 24) % 100);
    aKey0[i] = rnd();
    aPerm0[i] = (uint32_t)i;
    aBinBig[i] = (uint32_t)(aKey0[i] % (n/10 + 1));
    aWord1[i] = aKey0[i] >> 40;
    aLead[i] = i / 10;
    aTie[i] = aKey0[i] % 1000;
    aJoinR[i] = rnd() % n;
    aJoinP[i] = rnd() % (n/10 ? n/10 : 1);          /* a key of aJoinU */
    aJoinPS[i] = rnd() % n;
    aJoinS[i] = (rnd() % (n/10000 ? n/10000 : 1)) * 10000;   /* one of n/1e4 keys */
  }
  /* n/10 unique keys, in random order: i*2654435761 mod n/10 is a
  ** permutation when n/10 is coprime to it; the identity otherwise. */
  for(i=0; i<n/10; i++) aJoinU[i] = (n/10) % 2654435761u ? i * 2654435761u % (n/10) : i;

  /* Round r times every kernel once at every thread count, so that a
  ** burst of load from other processes spoils one run of many kernels
  ** rather than every run of one. */
  for(r=0; r<nRep; r++){
    for(ib=0; ib<N_BENCH; ib++){
      if( ib && zOnly && strstr(aBench[ib].zName, zOnly)==0 ) continue;
      for(it=0; it<nThr; it++) aTime[ib][it][r] = time_once(&aBench[ib], aThr[it]);
    }
  }
  for(ib=0; ib<N_BENCH; ib++){
    for(it=0; it<nThr; it++) qsort(aTime[ib][it], nRep, sizeof(double), cmp_double);
  }

  printf("bench_kernels: n = %zu; best of %d runs (median in brackets); "
         "threads 1 and %d (px_ncores)\n", n, nRep, aThr[nThr-1]);
  printf("GB/s = 1e9 bytes/s; a kernel's GB/s counts the bytes of its input, memcpy's\n"
         "the bytes it copies; \"vs memcpy\" divides by memcpy with as many threads.\n\n");
  for(it=0; it<nThr; it++){
    aCopy[it] = (double)n * 8 / aTime[0][it][0] / 1e9;
    printf("memcpy (%d thread%s): %6.2f GB/s  [%.2f]\n", aThr[it], aThr[it]>1 ? "s" : "",
           aCopy[it], (double)n * 8 / aTime[0][it][nRep/2] / 1e9);
  }
  printf("\n%-22s %3s %16s %7s %10s  %s\n", "kernel", "thr", "Melem/s [median]",
         "GB/s", "vs memcpy", "target");
  for(ib=1; ib<N_BENCH; ib++){
    const bench *p = &aBench[ib];
    if( zOnly && strstr(p->zName, zOnly)==0 ) continue;
    for(it=0; it<nThr; it++){
      double rElem = (double)n / aTime[ib][it][0];
      double rMed = (double)n / aTime[ib][it][nRep/2];
      double rGB = rElem * p->szIn / 1e9, rRatio = rGB / aCopy[it];
      int bAll = it==nThr-1;
      char zTarget[64] = "";
      if( p->eTarget==1 ){
        snprintf(zTarget, sizeof(zTarget), ">= 0.50 memcpy: %s", rRatio>=0.5 ? "PASS" : "MISS");
        nMiss += rRatio<0.5;
      }else if( p->eTarget>=2 && bAll ){
        snprintf(zTarget, sizeof(zTarget), ">= %.0fM %s/s: %s", p->rTarget/1e6,
                 p->eTarget==2 ? "keys" : "values", rElem>=p->rTarget ? "PASS" : "MISS");
        nMiss += rElem<p->rTarget;
      }
      printf("%-22s %3d %7.1f [%6.1f] %7.2f %10.2f  %s\n", p->zName, aThr[it], rElem/1e6,
             rMed/1e6, rGB, rRatio, zTarget);
    }
  }
  printf("\ntargets missed: %d\n", nMiss);
  return 0;
}
