/*
** parext.h: what the parts of the extension under ext/ share: the
** per-connection context with its settings, each part's register function,
** and the mapping from kernel status codes to SQLite result codes.
**
** Every ext/ file except parallel.c starts with
**
**   #include "parext.h"      (which does SQLITE_EXTENSION_INIT3)
**
** and exposes one `int parXxxRegister(sqlite3 *db, ParContext *pCtx)`
** that sqlite3_parallel_init() calls.
*/
#ifndef PAREXT_H
#define PAREXT_H

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include <stdint.h>

#include "par.h"

#define PAR_VERSION "0.6.0"

/*
** The settings of one connection (par_config); cache_mb, the process's,
** is kept with the process's cache (extract.c).  One ParContext is made per
** connection by sqlite3_parallel_init(); every function and module
** registered on that connection holds a reference, and the last xDestroy
** frees it (a user may replace one of our functions, which destroys that
** registration's reference only).
*/
/* The phases of a parallel read (extract.c), timed for par_profile. */
#define PAR_READ_POOL     0   /* opening worker connections */
#define PAR_READ_PREPARE  1   /* their statements, their plans checked */
#define PAR_READ_SNAPSHOT 2   /* one snapshot begun, the span of keys */
#define PAR_READ_RANGES   3   /* the workers reading their ranges */
#define PAR_READ_CONCAT   4   /* the pieces joined into one batch */
#define PAR_READ_END      5   /* the snapshot ended, statements finalized */
#define PAR_READ_NPHASE   6

typedef struct ParContext ParContext;
struct ParContext {
  int nRef;                  /* registrations holding this context */
  int nThread;               /* "threads": kernels use this many threads */
  sqlite3_int64 mxMemMb;     /* "memory_mb": working memory limit per query */
  sqlite3_int64 nMinRow;     /* "min_rows": below this, run serially */
  int bParExtract;           /* "parallel_extract": 0 or 1 */
  int eGroupStrategy;        /* "group_strategy": PAR_GROUP_* */
  int eJoinStrategy;         /* "join_strategy": PAR_JOIN_AUTO or _SQLITE */
  struct ParPool *pPool;     /* worker connections, one pool per database
                             ** file, most recently used first (extract.c) */
  unsigned iPoolGen;         /* pools opened so far (a pool's identity) */
  void *pDescJob;            /* a view's description for par_schema_lock
                             ** to run (view.c), or NULL */
  struct ParViewCursor *pViewCursors;   /* open cursors of parallel views
                             ** (view.c), whose statements are ours */
  struct ParPlanCache *pPlanCache;   /* plans kept while a parallel view is
                             ** connected (plancache.c), or NULL */
  struct ParJoinMemo *pJoinMemo;     /* joins of cached tables kept
                             ** (op_join.c), most recent first */
  int nReadWorker;           /* the last parallel read (extract.c): its
                             ** workers (0: none since the last scan) */
  double aReadMs[PAR_READ_NPHASE];   /* ...and the time of each phase */
};

/* join_strategy: whether a join the operator can run is run by it (AUTO)
** or by SQLite inside the scan, as a join it cannot run is (SQLITE): to
** compare the two, and for tests of the latter. */
#define PAR_JOIN_AUTO    0
#define PAR_JOIN_SQLITE  1

/* group_strategy: how GROUP BY groups its rows.  AUTO picks from the
** data; the others are used whenever they apply to the query (else AUTO
** decides), so tests can run every strategy on any query. */
#define PAR_GROUP_AUTO   0
#define PAR_GROUP_DIRECT 1   /* per-chunk accumulators per key value */
#define PAR_GROUP_DENSE  2   /* per-thread accumulators per key value */
#define PAR_GROUP_COUNT  3   /* counting sort, then segments */
#define PAR_GROUP_RADIX  4   /* radix sort, then segments */

ParContext *parContextNew(void);
/* Drop the joins pCtx keeps (op_join.c). */
void parJoinMemoClear(ParContext *pCtx);
ParContext *parContextRef(ParContext *p);
void parContextUnref(void *p);   /* usable as an xDestroy */

/* parCollReplaced()'s answer kept for db (plancache.c): the mask, or -1
** when none is kept (or it may be stale); ...SetColl keeps one while the
** connection's plan cache can tell when it goes stale. */
int parPlanCacheColl(sqlite3 *db);
void parPlanCacheSetColl(sqlite3 *db, int mColl);

/* Threads to use for an input of nRow rows under the settings of pCtx. */
int parThreadsFor(const ParContext *pCtx, sqlite3_int64 nRow);

/* A monotonic clock in milliseconds, for the timings par_profile reports. */
double parNowMs(void);

/* Working-memory limit of pCtx in bytes. */
sqlite3_int64 parMemLimit(const ParContext *pCtx);

/* SQLite result code for a kernel status code (PX_*). */
int parRcFromPx(int pxrc);

/*
** Stopping the kernels of an interrupted query (sqlite3_interrupt, Ctrl-C
** in the shell, or a progress handler returning nonzero): between
** parStopBegin() and parStopEnd() the calling thread has a px_stop
** installed (kernels/par.h) that asks by stepping the probe on db, which
** fails then (SQLite 3.40 has no sqlite3_is_interrupted()).  Kernels it runs stop
** within milliseconds and return PX_EINTR; parStopped() says whether they
** were asked to.
*/
/* The probe statement: stepping it on the caller's connection answers
** whether the connection was interrupted, and runs the application's
** progress handler (sqlite3_progress_handler, which SQLite 3.40 gives no
** way to read) as SQLite's own statements would: it executes about 2000
** VDBE instructions, so a handler set to run every N instructions runs at
** every step of it for N up to 2000, and every N/2000 steps beyond.
** parProbeStop() steps it: 1 when it failed with SQLITE_INTERRUPT (an
** interrupt, or the handler returned nonzero). */
int parProbePrepare(sqlite3 *db, sqlite3_stmt **ppProbe);
int parProbeStop(sqlite3_stmt *pProbe);

typedef struct ParStop {
  px_stop base;
  sqlite3_stmt *pProbe;      /* "SELECT 1" on db, or NULL: prepare failed */
  px_stop *pPrev;            /* installed before (restored at the end) */
} ParStop;
void parStopBegin(sqlite3 *db, ParStop *p);
void parStopEnd(ParStop *p);
int parStopped(void);        /* the installed px_stop says stop (asks
                             ** now: for checks between phases) */

/* Looking up functions in pragma_function_list, which an authorizer can
** deny, or read columns of as NULL: PAR_FUNCLIST_SQL(cond) counts the
** functions that meet cond (with ?1, ?2... bound by the caller) and, in
** the same pass, two of SQLite's own (a scalar and an aggregate) by every
** column a lookup reads.  parFuncListAsk() steps and resets such a
** statement: 1 when some function meets cond, 0 when none does, -1 when
** the list does not answer as SQLite defines it (assume the worst). */
#define PAR_FUNCLIST_SQL(cond)                                                \
  "SELECT count(*) FILTER (WHERE " cond "), count(*) FILTER (WHERE "        \
  "(name='abs' AND builtin AND narg=1 AND type='s') OR "                    \
  "(name='count' AND builtin AND narg=0 AND type IN ('a','w'))) "           \
  "FROM pragma_function_list"
int parFuncListAsk(sqlite3_stmt *pStmt);

/* The text of a function argument that is TEXT with no NUL byte inside
** (a name, a statement, a bins spec), else NULL.  The type is checked
** before the text is asked for, which would make a BLOB read as TEXT. */
const char *parTextArg(sqlite3_value *pVal);

/* A function argument as an error message shows it (sqlite3_malloc):
** 'text', NULL, a number, "a BLOB"; never bytes that are not text. */
char *parArgText(sqlite3_value *pVal);

/* The name of pStmt's first parameter that has one ("?2", ":lo"), or "?"
** when none has (only ? parameters); for error messages. */
const char *parFirstParam(sqlite3_stmt *pStmt);

/* How many of the application's statements on db are running now (begun
** and not reset), the statements of open parallel view cursors aside
** (view.c).  The one scanning a view, or calling par_profile(), is one. */
int parAppStatementsBusy(const ParContext *pCtx, sqlite3 *db);

/* The parts. */
int parConfigRegister(sqlite3 *db, ParContext *pCtx);
int parViewRegister(sqlite3 *db, ParContext *pCtx);
int parCacheRegister(sqlite3 *db, ParContext *pCtx);
void parExtractShutdown(ParContext *pCtx);
/* Close the worker connections beyond what the threads setting now uses. */
void parExtractTrim(ParContext *pCtx);
void parCacheAttach(sqlite3_int64 mxDefaultMb);
void parCacheDetach(void);
sqlite3_int64 parCacheBudgetMb(void);     /* "cache_mb": the process's */
void parCacheSetBudgetMb(sqlite3_int64 mb);
int parHistogramRegister(sqlite3 *db, ParContext *pCtx);

#endif /* PAREXT_H */
