/*
** sort.h: stable radix sort of unsigned 64-bit keys carrying a 32-bit
** permutation, the order-preserving encodings of int64 and double into
** such keys, the sort of rows by keys of several such words, and the
** counting sort of rows by small bin numbers.
**
** Usage: encode each row's key with px_key_i64() or px_key_f64() (or build
** a composite key), set aPerm[i] = i, sort, then aPerm[j] is the row that
** comes j-th.  Keys wider than 64 bits are sorted word by word, least
** significant word first, relying on stability (px_sort_words_perm()).
** Rows whose keys are already numbered 0..nBin-1 in key order (bins) are
** sorted by px_countsort_u32() in two passes over them.
*/
#ifndef PX_SORT_H
#define PX_SORT_H

#include "par.h"
#include <string.h>

/* Order-preserving encodings: a < b as int64 iff px_key_i64(a) <
** px_key_i64(b) as uint64, and px_unkey_i64() inverts it. */
static inline uint64_t px_key_i64(int64_t v){
  return (uint64_t)v ^ ((uint64_t)1 << 63);
}
static inline int64_t px_unkey_i64(uint64_t k){
  return (int64_t)(k ^ ((uint64_t)1 << 63));
}

/* Order-preserving encoding of a double: for non-NaN a, b, a < b iff
** px_key_f64(a) < px_key_f64(b), and a == b iff the keys are equal (so -0.0
** and +0.0 get the same key, the key of +0.0).  Every NaN maps to one key
** above that of +Inf.  px_unkey_f64() inverts it for non-NaN values other
** than -0.0 (which comes back as +0.0). */
static inline uint64_t px_key_f64(double v){
  uint64_t u;
  if( v!=v ) return 0xFFF0000000000001ull;   /* the key of +Inf, plus 1 */
  if( v==0.0 ) v = 0.0;                      /* -0.0 gets the key of +0.0 */
  memcpy(&u, &v, sizeof(u));
  /* Negative: flip all bits (larger magnitude sorts first); positive: set
  ** the sign bit so that they sort above every negative. */
  return (u >> 63) ? ~u : u | ((uint64_t)1 << 63);
}
double px_unkey_f64(uint64_t k);

/* Sort aKey[0..n-1] ascending, stably, in place; when aPerm is not NULL,
** aPerm[0..n-1] is permuted along with the keys (aPerm[j] ends up holding
** the value that was next to the j-th smallest key).  Bits that are the
** same in every key cost no pass.  Scratch of 12*n bytes is allocated
** internally.  Returns PX_OK, PX_ENOMEM, PX_ETOOBIG when n > UINT32_MAX,
** or PX_EINTR when the px_stop installed on the calling thread (par.h) said
** stop: then aKey and aPerm hold values they held before, in no order.
** Work O(n * w / 8) where w is the number of bits that vary, span O(w/8 *
** n / nthreads) plus O(2^11) per pass. */
int px_sort_u64_perm(uint64_t *aKey, uint32_t *aPerm, size_t n, int nthreads);

/* The same contract and result, by plain parallel LSD radix sort: one
** stable counting pass per nBits-bit digit (1 <= nBits <= 16) from the
** least significant up, skipping digits in which no key differs.  It is
** the baseline that bench/bench_kernels.c measures px_sort_u64_perm()
** against, and a second implementation for the tests.  Scratch 12*n bytes
** plus nthreads * 2^nBits * 4. */
int px_sort_u64_perm_lsd(uint64_t *aKey, uint32_t *aPerm, size_t n,
                         int nBits, int nthreads);

/* Stable sort of the rows 0..n-1 by keys of nWord 64-bit words, word 0
** the most significant: row r's key is (aaWord[0][r], ...,
** aaWord[nWord-1][r]).  On return aPerm[j] (n entries, output) is the row
** that comes j-th, rows of equal keys in increasing order, and aTop[j] =
** aaWord[0][aPerm[j]] (n entries, output; NULL: not wanted, the scratch
** it stands for is then allocated).  nWord 0: every key equal, aPerm the
** identity.  The words are inputs only.  LSD by words: for each word from
** the least significant, that word gathered through the permutation so far
** is sorted by px_sort_u64_perm() along with the permutation.  Returns
** PX_OK, PX_ENOMEM, PX_ETOOBIG when n > UINT32_MAX, or PX_EINTR when the
** installed px_stop (par.h) said stop (aPerm then holds rows, in no
** order).  Work O(nWord * n * w / 8), span that of nWord sorts. */
int px_sort_words_perm(const uint64_t *const *aaWord, int nWord, size_t n,
                       uint32_t *aPerm, uint64_t *aTop, int nthreads);

/* Stable counting sort of the rows 0..n-1 by bin, aBin[i] < nBin (input,
** n entries).  On return, for every row's position j in the sorted order
** (bin by bin, the rows of a bin in increasing order):
**   aPerm[j] is the row (unless aPerm is NULL; n entries);
**   aaDst[k][j] = aaSrc[k][row] for k < nVal (8-byte values, n each: the
**   rows' values scattered into sorted order, each thread writing its
**   rows' values in sequence per bin, where a gather would read them at
**   random); no aaDst[k] may overlap an aaSrc[k'];
** and aStart[b] (unless NULL; nBin+1 entries) is the position of bin b's
** first row, aStart[nBin] = n.  Scratch: a count per bin per thread.
** Returns PX_OK, PX_ENOMEM, PX_ETOOBIG when n > UINT32_MAX, or PX_EINTR
** when the installed px_stop said stop (asked every 2^16 rows or bins;
** the outputs are then partly written, but never out of bounds).
** Work O(n (1 + nVal) + nBin * nthreads), span O(n (1 + nVal) / nthreads
** + nBin * nthreads). */
int px_countsort_u32(const uint32_t *aBin, size_t n, uint32_t nBin,
                     uint32_t *aPerm, size_t *aStart, int nVal,
                     const void *const *aaSrc, void *const *aaDst, int nthreads);

#endif /* PX_SORT_H */
