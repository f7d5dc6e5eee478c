/*
** join.h: the equi-join kernel: a hash table over the build side's keys,
** probed by every row of the probe side, the matching pairs written in
** nested-loop order.
**
** Usage (keys built as for sort.h: nWord 64-bit words per row, word-major):
**
**   px_join_table *pT;
**   px_join_result *pR;
**   size_t nOut;
**   rc = px_join_build(aaBuild, nWord, nBuild, aBuildNull, nthreads, &pT);
**   rc = px_join_probe(pT, aaProbe, nProbe, aProbeNull, PX_JOIN_INNER,
**                      nthreads, &pR, &nOut);
**   ... check nOut against the memory limit, allocate aProbe, aBuild ...
**   rc = px_join_emit(pR, aProbe, aBuild, nthreads);     (frees pR)
**   px_join_table_free(pT);
**
** then (aProbe[j], aBuild[j]), j < nOut, are the pairs in the order a
** nested loop over the probe rows (outer) and the build rows (inner)
** produces them.
**
** How it works, and why (2-core AMD EPYC, 2 MiB L2 per core, 32 MiB L3):
**
**   Build.  Each build row's key is hashed to a 64-bit tag (a strong mix of
**   its words; for one word the mix is a bijection, so equal tags are equal
**   keys and no word is read again).  The rows that are not skipped are
**   sorted by tag with px_sort_u64_perm() (stable: equal tags keep their
**   rows in increasing order); runs of equal tags that hold more than one
**   key (a collision) are sorted by (words, row).  Each run of equal keys
**   becomes one entry of the key array (tag, its rows, their count), so the
**   table holds each distinct key once: duplicates never lengthen a probe.
**   The key array is in tag order, so bucket d (the top log2(nBucket) bits
**   of the tag, nBucket the power of two >= the number of keys) is the
**   range aBucket[d]..aBucket[d+1] of it: one array of 4-byte starts, no
**   chains, no empty slots to skip.  A key of one row stores that row in
**   its entry; the array of rows per key is kept only when some key has
**   several.
**
**   Dense keys.  With one word whose values (unsigned) span at most four
**   times the build rows, the table is instead an array with a slot per
**   value between the least and the greatest, holding what a probe needs
**   (the row, or the position and count of the value's rows in row order,
**   by a counting sort); no hash, no sort.  A probe is then one read of
**   that array.  Primary keys 1..n, the usual build side, are dense: on
**   10M probe rows into 1M keys this is about 5 times faster than the hash
**   table (bench/bench_kernels.c).
**
**   Probe.  One lookup per probe row: hash, read the bucket's range, walk
**   its keys (about one) comparing tags (and, for several words, the words
**   of the key's first row).  The lookups of a group of 16 rows go in
**   three steps, prefetching the bucket starts, then the key entries, so
**   that 16 cache misses overlap instead of following one another.  What
**   the emit step needs is kept per probe row (8 bytes: the key's first
**   row, or its first position in the rows array, and its count), along
**   with the output count of each block; an exclusive scan of those gives
**   each block its first output slot.
**
**   Emit.  Each block writes its rows from its slot, in probe row order,
**   each probe row's matches in increasing build row (the order of the
**   rows array).  Work per row O(1 + its matches): skew costs only output.
**
**   Measured (bench/bench_kernels.c "join" lines, 10M probe rows, whole
**   build + probe + emit, 2 threads, on a machine shared with other work):
**   against 1M unique keys 63M probe rows/s (0.16 s), against 10M random
**   keys 20M/s (0.5 s, mostly the build's sort of 10M tags), the skewed
**   10M x (1K keys of 10K rows) 50M/s.  Radix partitioning of the probe
**   side (so that each part of the table stays in the cache) was not
**   tried: the 1M-key table (20 MiB) fits this machine's L3, and
**   partitioning would need a pass to put the output back in probe order.
**
**   Work: build O(nBuild * (1 + nWord)) plus its sort, probe O(nProbe *
**   nWord * (1 + keys sharing a bucket)), emit O(nProbe + nOut).  Span:
**   those over nthreads, plus O(nBlock) for the serial scans of block
**   counts.  Memory: the table holds 16 bytes per distinct key, 4 per
**   bucket, plus 4 per build row when some key repeats
**   (px_join_table_bytes()); the build's scratch is 12 bytes per build row
**   plus the sort's 12; a probe result holds 8 bytes per probe row.
**
** Hash tags keep the top PX_JOIN_HASH_BITS bits of the mix only: the
** tiny-block test builds keep 5, which forces every kind of collision
** (equal tags of different keys, every key in a few buckets).
*/
#ifndef PX_JOIN_H
#define PX_JOIN_H

#include "par.h"

#ifndef PX_JOIN_HASH_BITS
# if PX_BLOCK < 64
#  define PX_JOIN_HASH_BITS 5     /* tiny-block test builds: 32 tags */
# else
#  define PX_JOIN_HASH_BITS 64
# endif
#endif

#define PX_JOIN_MAX_WORDS 8

/* Keys: nWord 64-bit words per row, word-major like sort.h: row r's key is
** (aaWord[0][r], ..., aaWord[nWord-1][r]), 1 <= nWord <= PX_JOIN_MAX_WORDS.
** Two rows match when all their words are equal.  aSkip (may be NULL):
** rows with aSkip[r] != 0 never match (the caller's NULL keys). */
typedef struct px_join_table px_join_table;

/* Builds the table of the nBuild rows' keys into *ppT (NULL on error).
** The table keeps the pointers to aaWord (the words, not the array of
** pointers): the caller keeps the words alive and unchanged until
** px_join_table_free().  Returns PX_OK, PX_ENOMEM, PX_EINTR (the installed
** px_stop said stop) or PX_ETOOBIG (nBuild > UINT32_MAX - 1). */
int px_join_build(const uint64_t *const *aaWord, int nWord, size_t nBuild,
                  const uint8_t *aSkip, int nthreads, px_join_table **ppT);
void px_join_table_free(px_join_table *pT);

/* The bytes of memory the table holds (for the caller's memory limit). */
size_t px_join_table_bytes(const px_join_table *pT);

#define PX_JOIN_INNER 0   /* a pair (p, b) for every probe row p and build row b with equal keys */
#define PX_JOIN_LEFT  1   /* INNER, plus (p, PX_JOIN_NONE) for each probe row p with no match */
#define PX_JOIN_SEMI  2   /* p once for each probe row with at least one match (aBuild unused) */
#define PX_JOIN_ANTI  3   /* p once for each probe row with no match (aBuild unused) */
#define PX_JOIN_NONE  UINT32_MAX

/* Probing in two steps, so that the caller allocates the output (it
** checks its memory limit first).
**
** px_join_probe() matches each of the nProbe rows (keys aaProbe, nWord
** words as the table's; aSkip may be NULL: rows with aSkip[p] != 0 match
** nothing) and sets *pnOut to the number of output rows of kind eKind and
** *ppR to a state (NULL on error).  It returns PX_OK, PX_ENOMEM,
** PX_EINTR, or PX_ETOOBIG (nProbe > UINT32_MAX - 1, or more output rows
** than a size_t counts).  The state refers to the table and the probe
** keys no more: the table must outlive it, the probe keys need not.
**
** px_join_emit() writes the rows into caller-owned arrays aProbe[nOut] and
** aBuild[nOut] (aBuild may be NULL: only the probe side is written; it is
** never written for SEMI and ANTI), then frees the state, whatever it
** returns: PX_OK or PX_EINTR (the outputs then partly written, nothing
** past nOut).  px_join_result_free() frees a state without emitting.
**
** OUTPUT ORDER (the operator depends on it to reproduce SQLite's
** nested-loop order): rows by increasing p; the matches of one p by
** increasing b.  Identical for every nthreads. */
typedef struct px_join_result px_join_result;
int px_join_probe(const px_join_table *pT, const uint64_t *const *aaProbe, size_t nProbe,
                  const uint8_t *aSkip, int eKind, int nthreads, px_join_result **ppR,
                  size_t *pnOut);
int px_join_emit(px_join_result *pR, uint32_t *aProbe, uint32_t *aBuild, int nthreads);
void px_join_result_free(px_join_result *pR);

#endif /* PX_JOIN_H */
