/*
** topk.h: the first k rows of a stable sort by multi-word keys, without
** sorting the rest (ORDER BY ... LIMIT k).
**
** Usage, with keys built as for px_sort_words_perm() (sort.h):
**
**   px_topk_words_perm(aaWord, nWord, n, 5, aOut, nthreads);
**
** puts in aOut[0..4] the five rows that px_sort_words_perm() would put
** first, in the same order.
*/
#ifndef PX_TOPK_H
#define PX_TOPK_H

#include "par.h"

/* Above n / PX_TOPK_SORT_DIV rows wanted, px_topk_words_perm() sorts
** everything instead: on 10M random keys at 2 threads the heaps cost about
** as much as px_sort_words_perm() at k = n / 400, and sift every row at
** any k when the keys come in decreasing order (bench/bench_kernels.c
** times both at the switch).  The tests read it to try both sides. */
#ifndef PX_TOPK_SORT_DIV
#define PX_TOPK_SORT_DIV 512
#endif

/* The rows 0..n-1 have keys of nWord 64-bit words, word 0 the most
** significant: row r's key is (aaWord[0][r], ..., aaWord[nWord-1][r]).
** On return aOut[j], for j < m = min(k, n), is the row that a stable
** ascending sort by key puts j-th (rows of equal keys in increasing
** order): exactly aPerm[0..m-1] of px_sort_words_perm().  aOut (m entries)
** is the output, the words inputs only; k = 0 writes nothing, nWord = 0
** (every key equal) gives rows 0..m-1.
**
** When k <= n / PX_TOPK_SORT_DIV: each of up to 128 pieces of the rows
** (runs of about 2^19 rows, decided by n alone) keeps its best min(k, piece) rows in
** a max-heap on (key, row), then the pieces' sorted heaps are merged.
** Work O(n + P k log k (1 + log(n / P k))) for P pieces with keys in random
** order (O(n log k) at worst: keys in decreasing order), plus O(k log P)
** for the merge; span O(n / nthreads) for those terms over P, plus the
** merge; scratch 16 bytes per kept row.  A row is compared on its first
** word unless it ties there.  Larger k: px_sort_words_perm(), its work and
** span, with 4 n bytes of scratch when k < n.
**
** Returns PX_OK, PX_ENOMEM, PX_ETOOBIG when n > UINT32_MAX, or PX_EINTR
** when the installed px_stop (par.h) said stop (asked every 2^16 rows;
** aOut is then meaningless, but nothing is written past aOut[m-1]). */
int px_topk_words_perm(const uint64_t *const *aaWord, int nWord, size_t n, size_t k,
                       uint32_t *aOut, int nthreads);

/* One key word per row computed from the row's value rather than read
** from an array, so that a top k over one column needs no array of keys:
** row r's word is nullKey when bit r of aNull is set (aNull may be NULL),
** else flip ^ enc(a[r]) where enc is, by eKind, the identity (uint64_t
** values), px_key_i64() (int64_t) or px_key_f64() (double), sort.h. */
#define PX_KEYSRC_U64 0
#define PX_KEYSRC_I64 1
#define PX_KEYSRC_F64 2
typedef struct px_key_src {
  const void *a;             /* n values of the kind eKind */
  int eKind;                 /* PX_KEYSRC_* */
  uint64_t flip;             /* xor'ed into each encoded value (~0: descending) */
  const uint8_t *aNull;      /* bit r set: row r is NULL; or NULL */
  uint64_t nullKey;          /* the word of a NULL row (not flipped) */
} px_key_src;

/* px_topk_words_perm() over the one word per row that pSrc makes: the same
** result as materialising the words (px_keys_from_src()) and calling it,
** without the array when k <= n / PX_TOPK_SORT_DIV (8 n bytes of scratch
** otherwise).  Work and span of px_topk_words_perm() with nWord = 1. */
int px_topk_src_perm(const px_key_src *pSrc, size_t n, size_t k, uint32_t *aOut,
                     int nthreads);

/* aKey[r] = the word pSrc makes for row r, r < n (output, n entries).
** Work O(n), span O(n / nthreads). */
void px_keys_from_src(const px_key_src *pSrc, size_t n, uint64_t *aKey, int nthreads);

#endif /* PX_TOPK_H */
