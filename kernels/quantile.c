/*
** quantile.c: sorting doubles in place (quantile.h).
**
** How it works.  A double's bits, read as an unsigned integer, order the
** non-negative doubles correctly and the negative ones backwards.  So the
** key of v is its bits with the sign bit set when v >= +0.0, and all bits
** flipped when the sign bit is set (larger magnitude, smaller key).  That
** map is a bijection, so it is undone exactly after the radix sort: every
** bit of every value survives, -0.0 and NaN payloads included.  The keys
** are written over the doubles themselves (memcpy, no type punning).
*/
#include "quantile.h"
#include "sort.h"
#include <omp.h>
#include <string.h>

static inline uint64_t f64_key(uint64_t u){
  return (u >> 63) ? ~u : u | ((uint64_t)1 << 63);
}
static inline uint64_t f64_unkey(uint64_t k){
  return (k >> 63) ? k ^ ((uint64_t)1 << 63) : ~k;
}

/* Replace each 8-byte word of a[0..n-1] by its key (bToKey) or back. */
static void f64_keys(void *a, size_t n, int bToKey, int nthreads){
  unsigned char *p = (unsigned char*)a;
  size_t nb = px_nblocks(n), b;
  int nt = px_threads_for(nb, nthreads);
  #pragma omp parallel for schedule(static) num_threads(nt) if(nt>1)
  for(b=0; b<nb; b++){
    size_t lo, hi, i;
    px_block_range(n, b, &lo, &hi);
    for(i=lo; i<hi; i++){
      uint64_t u;
      memcpy(&u, p + i*8, 8);
      u = bToKey ? f64_key(u) : f64_unkey(u);
      memcpy(p + i*8, &u, 8);
    }
  }
}

int px_sort_f64(double *a, size_t n, int nthreads){
  int rc;
  if( n<2 ) return PX_OK;
  if( n>UINT32_MAX ) return PX_ETOOBIG;
  f64_keys(a, n, 1, nthreads);
  rc = px_sort_u64_perm((uint64_t*)(void*)a, 0, n, nthreads);
  /* On failure the keys are values a[] held (after PX_EINTR in no order,
  ** some twice): turning them back leaves doubles in a[]. */
  f64_keys(a, n, 0, nthreads);
  return rc;
}
