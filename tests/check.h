/*
** check.h: the smallest test harness that does the job.
**
**   check_case("sort n=%zu threads=%d", n, t);   // open a named case
**   CHECK(out[i] == ref[i], "i=%zu got %lld want %lld", i, out[i], ref[i]);
**   ...                                          // next check_case() or
**   return check_summary("kernels");             // check_summary() closes it
**
** A case passes when none of its CHECKs failed; the first few failures of
** a case are printed with file and line.  check_summary() prints
** "NAME: N passed, N failed" (tests/run.sh adds these up) and returns the
** process exit status.  Also a small deterministic random generator.
*/
#ifndef CHECK_H
#define CHECK_H

#include <stdint.h>
#include <stddef.h>

void check_case(const char *zFmt, ...) __attribute__((format(printf, 1, 2)));
void check_fail(const char *zFile, int iLine, const char *zFmt, ...)
    __attribute__((format(printf, 3, 4)));
int check_summary(const char *zName);
int check_case_failed(void);

#define CHECK(cond, ...) \
  do { if( !(cond) ) check_fail(__FILE__, __LINE__, __VA_ARGS__); } while(0)

/* splitmix64: deterministic, seedable, good enough for test data. */
typedef struct check_rng { uint64_t s; } check_rng;
static inline uint64_t check_next(check_rng *r){
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
/* Uniform in [0, n), n > 0. */
static inline uint64_t check_below(check_rng *r, uint64_t n){
  return check_next(r) % n;
}

/* The seed for this run: CHECK_SEED from the environment, else fixed. */
uint64_t check_seed(void);

#endif /* CHECK_H */
