/*
** segment.h: segments of a sorted sequence: where the key changes (head
** flags and offsets), and the segment of each position.
**
** Usage, after sorting rows by a key (sort.h):
**
**   px_segments_u64(aTop, aaWord+1, nWord-1, aPerm, n, 0, aOff, &nSeg, nt);
**
** gives the groups of equal keys as positions [aOff[s], aOff[s+1]) of the
** sorted order, the form scan.h's px_segscan_*_off() take.
*/
#ifndef PX_SEGMENT_H
#define PX_SEGMENT_H

#include "par.h"

/* Segments of equal keys: position j (0 <= j < n) has the key (aLead[j],
** aaWord[0][r], ..., aaWord[nWord-1][r]) with r = aPerm[j] (aLead NULL: no
** such word; aPerm NULL: r = j); a segment starts at position 0 and at
** every j whose key differs from position j-1's.  On return aHead[j] = 1
** at every start and 0 elsewhere (n bytes; NULL: not wanted, the scratch
** is then allocated), aOff[0..nSeg-1] are the starts in increasing order
** and aOff[nSeg] = n (n+1 entries), and *pnSeg = nSeg (0 when n = 0; 1
** when there is no word at all and n > 0).  All arrays but aHead, aOff and
** pnSeg are inputs.  Returns PX_OK, PX_ENOMEM, or PX_EINTR when the
** installed px_stop (par.h) said stop (asked every 2^16 positions; the
** outputs are then meaningless but every write in bounds).  Work
** O(n (1 + nWord)), span O(n (1 + nWord) / nthreads); one barrier. */
int px_segments_u64(const uint64_t *aLead, const uint64_t *const *aaWord, int nWord,
                    const uint32_t *aPerm, size_t n, uint8_t *aHead,
                    size_t *aOff, size_t *pnSeg, int nthreads);

/* The segment of each position: on return aId[i] = s for every i in
** [aOff[s], aOff[s+1]), s < nSeg, where aOff[0] = 0 and aOff is
** non-decreasing (empty segments allowed); aId has aOff[nSeg] entries.
** Work O(n + nSeg) for n = aOff[nSeg], span O(n / nthreads + log nSeg)
** plus the empty segments that fall inside one block. */
void px_segment_ids_u64(const size_t *aOff, size_t nSeg, uint64_t *aId, int nthreads);

#endif /* PX_SEGMENT_H */
