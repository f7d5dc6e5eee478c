/*
** extract.h: where the rows of a plan's extraction query come from (see
** extract.c): the columnar cache, read-only worker connections reading
** rowid ranges of one snapshot in parallel, or the caller's connection.
*/
#ifndef PAR_EXTRACT_H
#define PAR_EXTRACT_H

#include "plan.h"

/* How a batch was read (parExtract's *peMode). */
#define PAR_EXTRACT_SERIAL   0
#define PAR_EXTRACT_PARALLEL 1
#define PAR_EXTRACT_CACHED   2
#define PAR_EXTRACT_COUNTED  3    /* parallel, the ranges taken by row count */

/* The data versions of the worker pools' files, taken before a scan runs
** anything on the caller's connection (parExtractStamp), while that
** connection has no transaction on the file: its reads then begin later,
** so a serial read stamped with it can be cached (after a commit in
** between it is not: the pool's version has moved on when it is kept). */
#define PAR_STAMP_MAX 4       /* pools of a connection (extract.c) */
typedef struct ParStamp {
  int n;
  struct {
    unsigned iGen;      /* the pool it was read from */
    unsigned iVersion;
  } a[PAR_STAMP_MAX];
} ParStamp;

void parExtractStamp(ParContext *pCtx, sqlite3 *db, ParStamp *pStamp);

/* Does zText call a built-in function whose answer can change for the
** same rows (random(), the time now, counts of changes)?  A date and time
** call counts unless it is fixed (extract.c) and its time value a literal
** other than 'now' or checked by par_timecheck(). */
int parVolatileNames(const char *zText);

/* May what pPlan's extraction read differ for the same rows?  After
** parExtract(pPlan) on this thread: whether it met a volatile call or a
** time value 'now' (then not cached); else parVolatileNames() of its
** extraction as written. */
int parExtractVolatile(const ParPlan *pPlan);

/* Read the rows of pPlan's extraction query into *ppBatch (a reference:
** release it with parBatchFree).  pStamp (may be NULL): see ParStamp.
** *peMode says how; *pzWhy (sqlite3_malloc, the caller frees; may be
** NULL) says why it was read serially.  Errors as parBatchFromSql(). */
int parExtract(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, const ParStamp *pStamp,
               ParBatch **ppBatch, int *peMode, char **pzWhy, char **pzErr);

/* What parExtract would do now, as one line of text for par_explain
** (sqlite3_malloc'd), without reading anything: short, or with bVerbose
** every detail.  nSpan: the rowid span of the table read (-1: not known),
** against min_rows. */
char *parExtractExplain(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan,
                        sqlite3_int64 nSpan, int bVerbose);

/* Does the cache hold an entry that may serve pPlan's extraction (current
** or not: parExtract checks), as par_explain says "cached when still
** current"? */
int parExtractHasEntry(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan);

/* The worker pools of a connection, closed with its context. */
void parExtractShutdown(ParContext *pCtx);
/* Close the worker connections beyond what the threads setting now uses. */
void parExtractTrim(ParContext *pCtx);

/* The process's cache (extract.c, 4): each ParContext made attaches to
** it, and detaches when freed; the last to go frees it.  mxDefaultMb is
** the budget until cache_mb is set on any connection. */
void parCacheAttach(sqlite3_int64 mxDefaultMb);
void parCacheDetach(void);
/* cache_mb, the process's budget (0: no cache); setting it drops entries
** until the cache fits. */
sqlite3_int64 parCacheBudgetMb(void);
void parCacheSetBudgetMb(sqlite3_int64 mb);

/* par_cache_clear() and the par_cache table. */
int parCacheRegister(sqlite3 *db, ParContext *pCtx);

#endif /* PAR_EXTRACT_H */
