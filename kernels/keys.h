/*
** keys.h: packing sort keys of several words into fewer words, in the same
** order.
**
** Usage, before px_sort_words_perm() or px_topk_words_perm() (sort.h,
** topk.h) on keys whose words each span a small range (small integers,
** dictionary codes, flags):
**
**   px_keys_pack(aaKey, nKey, n, aaPacked, &nPacked, nthreads);
**   px_sort_words_perm(aaPacked, nPacked, n, aPerm, 0, nthreads);
**
** sorts the rows in the order of the original keys with fewer radix
** passes.
*/
#ifndef PX_KEYS_H
#define PX_KEYS_H

#include "par.h"

/* Packs the keys (aaIn[0][r], ..., aaIn[nIn-1][r]) of the rows r < n,
** word 0 the most significant, into keys of *pnOut words (aaOut[0][r],
** ..., aaOut[*pnOut-1][r]) such that lexicographic order and equality of
** the packed keys are those of the original keys.  Input word i spans
** [min_i, max_i] over the rows; it becomes a field of w_i bits (the bits
** of max_i - min_i; 0 when min_i = max_i: the field is dropped) holding
** v - min_i.  The fields, in order, fill output words greedily from the
** most significant end, a field that does not fit in what is left of a
** word starting the next one (a field is never split; one of 64 bits is a
** word of its own); unused low bits are 0.  So *pnOut is the fewest words
** that hold the fields in order, 0 when every key is equal (or n = 0).
**
** aaIn (nIn arrays of n) is input; aaOut (nIn arrays of n, provided by the
** caller) is output, of which only the first *pnOut arrays are written;
** aaOut[i] may be aaIn[i] (in place), but no other overlap is allowed.
** Returns PX_OK, PX_ENOMEM, or PX_EINTR when the installed px_stop (par.h)
** said stop (asked every 2^16 rows; the outputs, and in place the inputs,
** are then partly written).  Two passes: a blocked min/max reduce of every
** word, then the packing.  Work O(n (nIn + *pnOut)), span O(n (nIn +
** *pnOut) / nthreads + nIn nthreads). */
int px_keys_pack(const uint64_t *const *aaIn, int nIn, size_t n,
                 uint64_t **aaOut, int *pnOut, int nthreads);

#endif /* PX_KEYS_H */
