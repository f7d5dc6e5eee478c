/*
** scan.h: prefix sums (scan) and segmented scans.
**
** All scans follow par.h's blocking scheme: a reduce of each block, a serial
** scan of the block sums, then each block re-scanned from its offset.
** Integer sums wrap around modulo 2^64 (they are computed in unsigned
** arithmetic, never undefined behaviour).  Floating-point results depend on
** n only, never on the thread count; they may differ from a left-to-right
** serial loop in the last bits because the association is by block (and,
** in plain scans, by strips of a block): an output that sums k+1 inputs is
** within 2 (k+1) DBL_EPSILON * (sum of their magnitudes) of the serial
** loop's.  f64 min and max skip NaNs, and of equal values (-0.0, +0.0)
** keep the earlier one, so they equal the serial loop's bit for bit.
*/
#ifndef PX_SCAN_H
#define PX_SCAN_H

#include "par.h"

/* Exclusive scan: on return out[i] = in[0] + ... + in[i-1] (out[0] = 0) and
** the function returns the total in[0] + ... + in[n-1].  out may equal in.
** Work O(n), span O(n / nthreads + n / PX_BLOCK). */
int64_t px_scan_excl_i64(const int64_t *in, int64_t *out, size_t n, int nthreads);
double px_scan_excl_f64(const double *in, double *out, size_t n, int nthreads);

/* Inclusive scan: on return out[i] = in[0] + ... + in[i]; returns the total.
** out may equal in. */
int64_t px_scan_incl_i64(const int64_t *in, int64_t *out, size_t n, int nthreads);
double px_scan_incl_f64(const double *in, double *out, size_t n, int nthreads);

/* Inclusive segmented scan with segments given by head flags: element 0 and
** every i with aHead[i] != 0 start a segment; on return out[i] = op over the
** elements from the start of i's segment through i.  op is PX_SUM, PX_MIN,
** PX_MAX, or PX_COUNT (out[i] = 1-based position of i in its segment; in
** may then be NULL).  out may equal in.  Returns PX_OK. */
int px_segscan_i64(px_op op, const int64_t *in, const uint8_t *aHead,
                   int64_t *out, size_t n, int nthreads);
int px_segscan_f64(px_op op, const double *in, const uint8_t *aHead,
                   double *out, size_t n, int nthreads);

/* The same with segments given by offsets: segment s is [aOff[s],
** aOff[s+1]), aOff[0] = 0, aOff[nSeg] = n, non-decreasing (empty segments
** allowed).  For PX_COUNT with the f64 form, out[i] holds the position as a
** double. */
int px_segscan_i64_off(px_op op, const int64_t *in, const size_t *aOff,
                       size_t nSeg, int64_t *out, int nthreads);
int px_segscan_f64_off(px_op op, const double *in, const size_t *aOff,
                       size_t nSeg, double *out, int nthreads);

#endif /* PX_SCAN_H */
