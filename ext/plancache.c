/*
** plancache.c: planning asks SQLite what it needs once per schema, and
** keeps the answer.
**
**   ParPlan *p; char *zErr;
**   rc = parPlanGet(pCtx, db, "SELECT g, sum(v) FROM t GROUP BY g", pParams, &p, &zErr);
**   ... read *p (it may be shared with the cache: never change it) ...
**   parPlanFree(p);              (drops this reference)
**
** A parallel view plans its SELECT at every scan, since tables, indexes,
** collations and functions may have changed since the last; planning
** runs some thirty statements (plan.c) and parCollReplaced() another
** thirty (batch.c).  The connection's plan cache keeps the plans of the
** last PAR_PLAN_CACHE_MAX (SELECT, parameter values) and the answer of
** parCollReplaced(), and hands them out while nothing they depend on has
** changed.
**
** What a plan depends on (parPlanBuild, buildPlan), and how each is
** checked before a kept plan is used:
**  1. The SELECT's text, and the values bound to its parameters (with
**     STAT4 they may change SQLite's query plan, which the planner reads):
**     the key, with the values as parParamsKey() writes them.
**  2. The schema of every database of the connection (tables, columns
**     and their types and collations, indexes, views, temp objects that
**     shadow main's), and the statistics SQLite loaded with it: a kept
**     statement, the canary, reads sqlite_schema of each database.  Each
**     step of it checks each database's schema cookie and the generation
**     of the connection's copy of the schema (OP_Transaction); when either
**     moved, SQLite prepares it again (SQLITE_STMTSTATUS_REPREPARE counts
**     that).  This catches this connection's DDL, committed or not (and
**     its rollback), other connections' committed DDL (a read of the file
**     brings it in), VACUUM, and every reload of the schema, which
**     reloads the statistics too.  Statistics change otherwise only by
**     ANALYZE on this connection, which expires every statement (below);
**     another connection's ANALYZE reaches SQLite's planner here only
**     with a reload.  Nothing else of the data is read by the planner
**     (no row counts), so the data version is not part of the key: a
**     commit that changes only rows keeps the plans.
**  3. Everything that expires every prepared statement of the connection
**     (sqlite3_expired() of the canary): a collation or function defined
**     again under a name and number of arguments it had (case_sensitive_like
**     defines like() again), ANALYZE, DETACH, every flag pragma
**     (reverse_unordered_selects, which the planner reads, among them),
**     sqlite3_db_config flags (double-quoted strings...), a new
**     authorizer (which may deny what the planner reads),
**     sqlite3_deserialize.
**  4. ATTACH, which expires no statement: the names and files of the
**     connection's databases, compared.
**  5. Functions defined under a new name or number of arguments or text
**     encoding, which expire nothing but may take the place of SQLite's
**     own (a sum() of any number of arguments is called instead of
**     SQLite's sum(x)) or make a name of the SELECT an aggregate: the
**     number of the application's functions (pragma_function_list), which
**     only grows then.  Read only for a plan the kernels run: a plan that
**     runs natively leaves every function to SQLite.
**  6. The connection's limits (sqlite3_limit), which decide whether the
**     SELECT prepares at all: compared.
** Not dependencies: the threads, min_rows, memory_mb and group_strategy
** settings (the planner never reads them: extract.c and groupby.c do, at
** every scan); the encoding, fixed once the schema is read (a view
** exists only then); the data itself (above).
**
** parCollReplaced()'s answer depends only on the collations (3) and the
** encoding: it is kept with the cache while the canary is not expired.
** batch.c reaches it by the connection alone, through a registry of the
** process's caches (a mutex guards the list; each cache is used under its
** connection's mutex, as every call comes from a statement running on it).
**
** A check costs one step of the canary (and, for a plan the kernels run,
** one read of the function list).  The canary's step begins a read of
** every database of the connection: like any statement's, it lasts while
** the statement scanning the view runs, or to the end of an explicit
** transaction.
**
** Lifetime: a kept statement would make sqlite3_close() fail (SQLITE_BUSY),
** so the cache exists only while a parallel view of the connection is
** connected: the first scan makes it, and any view's xDisconnect, which
** SQLite calls before it closes a connection, drops it (parPlanCacheDrop).
** Plans are reference counted (ParPlan.nRef): a cursor keeps its plan
** after the cache drops it.
*/
#include "plan.h"

#include <pthread.h>
#include <string.h>

/* Plans kept per connection (the most recently used first). */
#define PAR_PLAN_CACHE_MAX 16

/* The limits that may decide whether a SELECT prepares. */
static const int aLimitId[] = {
  SQLITE_LIMIT_LENGTH, SQLITE_LIMIT_SQL_LENGTH, SQLITE_LIMIT_COLUMN,
  SQLITE_LIMIT_EXPR_DEPTH, SQLITE_LIMIT_COMPOUND_SELECT, SQLITE_LIMIT_VDBE_OP,
  SQLITE_LIMIT_FUNCTION_ARG, SQLITE_LIMIT_ATTACHED, SQLITE_LIMIT_LIKE_PATTERN_LENGTH,
  SQLITE_LIMIT_VARIABLE_NUMBER, SQLITE_LIMIT_TRIGGER_DEPTH, SQLITE_LIMIT_WORKER_THREADS
};
#define PAR_N_LIMIT ((int)(sizeof(aLimitId)/sizeof(aLimitId[0])))

typedef struct ParPlanEntry {
  char *zKey;                /* the SELECT, then "\x1e" and parParamsKey() */
  ParPlan *pPlan;            /* one reference */
} ParPlanEntry;

typedef struct ParPlanCache ParPlanCache;
struct ParPlanCache {
  sqlite3 *db;
  sqlite3_stmt *pCanary;     /* reads each database's sqlite_schema, or
                             ** NULL: nothing is kept */
  int nReprepare;            /* its SQLITE_STMTSTATUS_REPREPARE then */
  char *zDbs;                /* each database's name and file */
  int aLimit[PAR_N_LIMIT];   /* sqlite3_limit() of each of aLimitId */
  sqlite3_stmt *pFuncs;      /* counts the application's functions */
  sqlite3_int64 nFunc;       /* ...their number, or -1 when not read since
                             ** the canary was made */
  int mColl;                 /* parCollReplaced(), or -1: not known */
  int nEntry;
  ParPlanEntry aEntry[PAR_PLAN_CACHE_MAX];
  ParPlanCache *pNext;       /* the registry's next */
};

static pthread_mutex_t cacheMutex = PTHREAD_MUTEX_INITIALIZER;
static ParPlanCache *pCacheList;   /* every cache of the process */

/* Each database of db as "name\x1ffile\x1e" (sqlite3_malloc), NULL when
** out of memory. */
static char *cacheDbList(sqlite3 *db){
  sqlite3_str *pStr = sqlite3_str_new(0);
  const char *zName;
  int i;
  for(i=0; (zName = sqlite3_db_name(db, i))!=0; i++){
    const char *zFile = sqlite3_db_filename(db, zName);
    sqlite3_str_appendf(pStr, "%s\x1f%s\x1e", zName, zFile ? zFile : "");
  }
  if( sqlite3_str_errcode(pStr) ){
    sqlite3_free(sqlite3_str_finish(pStr));
    return 0;
  }
  return sqlite3_str_finish(pStr);
}

static void cacheLimits(sqlite3 *db, int *aLimit){
  int i;
  for(i=0; i<PAR_N_LIMIT; i++) aLimit[i] = sqlite3_limit(db, aLimitId[i], -1);
}

/* Step a statement that checks something, and reset it: 1 when it ran
** to the end, its one row (if any) in *piVal. */
static int cacheStep(sqlite3_stmt *pStmt, sqlite3_int64 *piVal){
  int rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    if( piVal ) *piVal = sqlite3_column_int64(pStmt, 0);
    rc = sqlite3_step(pStmt);
  }
  return sqlite3_reset(pStmt)==SQLITE_OK && rc==SQLITE_DONE;
}

/* The number of the application's functions, or -1 when the list does
** not answer (an authorizer may deny it).  The statement is kept (the
** pragma reads the list anew at every step). */
static sqlite3_int64 cacheFuncCount(ParPlanCache *p){
  sqlite3_int64 n = -1;
  if( p->pFuncs==0
   && sqlite3_prepare_v2(p->db, "SELECT count(*) FROM pragma_function_list WHERE NOT builtin",
                         -1, &p->pFuncs, 0)!=SQLITE_OK ){
    sqlite3_finalize(p->pFuncs);
    p->pFuncs = 0;
    return -1;
  }
  if( !cacheStep(p->pFuncs, &n) ) n = -1;
  return n;
}

/* Forget everything kept (the registration stays). */
static void cacheClear(ParPlanCache *p){
  int i;
  for(i=0; i<p->nEntry; i++){
    sqlite3_free(p->aEntry[i].zKey);
    parPlanFree(p->aEntry[i].pPlan);
  }
  p->nEntry = 0;
  sqlite3_finalize(p->pCanary);
  p->pCanary = 0;
  sqlite3_finalize(p->pFuncs);
  p->pFuncs = 0;
  sqlite3_free(p->zDbs);
  p->zDbs = 0;
  p->nFunc = -1;
  p->mColl = -1;
}

/* Start keeping again: the canary over the databases there are now.
** Leaves p->pCanary NULL when it cannot be made (nothing is kept then). */
static void cacheStart(ParPlanCache *p){
  sqlite3_str *pStr = sqlite3_str_new(0);
  const char *zName;
  char *zSql;
  int i;
  cacheClear(p);
  sqlite3_str_appendall(pStr, "SELECT 0 FROM ");
  for(i=0; (zName = sqlite3_db_name(p->db, i))!=0; i++){
    sqlite3_str_appendf(pStr, "%s\"%w\".sqlite_schema", i ? ", " : "", zName);
  }
  sqlite3_str_appendall(pStr, " WHERE 0");
  zSql = sqlite3_str_finish(pStr);
  p->zDbs = cacheDbList(p->db);
  if( zSql==0 || p->zDbs==0
   || sqlite3_prepare_v2(p->db, zSql, -1, &p->pCanary, 0)!=SQLITE_OK
   || !cacheStep(p->pCanary, 0) ){
    cacheClear(p);
  }else{
    p->nReprepare = sqlite3_stmt_status(p->pCanary, SQLITE_STMTSTATUS_REPREPARE, 0);
    cacheLimits(p->db, p->aLimit);
  }
  sqlite3_free(zSql);
}

/* Does everything kept still hold (2, 3, 4, 6 of the header)? */
static int cacheValid(ParPlanCache *p){
  int aLimit[PAR_N_LIMIT];
  char *zDbs;
  int bSame;
  if( p->pCanary==0 || sqlite3_expired(p->pCanary) ) return 0;
  cacheLimits(p->db, aLimit);
  if( memcmp(aLimit, p->aLimit, sizeof(aLimit))!=0 ) return 0;
  zDbs = cacheDbList(p->db);
  bSame = zDbs && strcmp(zDbs, p->zDbs)==0;
  sqlite3_free(zDbs);
  return bSame && cacheStep(p->pCanary, 0)
      && sqlite3_stmt_status(p->pCanary, SQLITE_STMTSTATUS_REPREPARE, 0)==p->nReprepare;
}

/* Have the application's functions stayed as they were (5 of the
** header)?  The first ask after the canary was made notes them. */
static int cacheFuncsSame(ParPlanCache *p){
  sqlite3_int64 n = cacheFuncCount(p);
  if( n<0 ) return 0;
  if( p->nFunc<0 ) p->nFunc = n;
  return n==p->nFunc;
}

/* The connection's cache, made and registered when new (NULL when out of
** memory). */
static ParPlanCache *cacheOf(ParContext *pCtx, sqlite3 *db){
  ParPlanCache *p = pCtx->pPlanCache;
  if( p ) return p;
  p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return 0;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->nFunc = -1;
  p->mColl = -1;
  pthread_mutex_lock(&cacheMutex);
  p->pNext = pCacheList;
  pCacheList = p;
  pthread_mutex_unlock(&cacheMutex);
  pCtx->pPlanCache = p;
  return p;
}

int parPlanGet(ParContext *pCtx, sqlite3 *db, const char *zSql, const ParParams *pParams,
               ParPlan **ppPlan, char **pzErr){
  ParPlanCache *p = cacheOf(pCtx, db);
  ParPlanEntry e;
  char *zParams;
  int rc, i;
  *ppPlan = 0;
  *pzErr = 0;
  if( p==0 ) return SQLITE_NOMEM;
  if( !sqlite3_get_autocommit(db) ){
    /* Inside BEGIN ... COMMIT the canary's step would begin a read of
    ** every attached database, fixing its snapshot (and, in rollback
    ** mode, holding its lock) until COMMIT, where the SELECT itself may
    ** never read it: plan afresh, touching only what planning reads. */
    return parPlanBuild(db, zSql, pParams, ppPlan, pzErr);
  }
  if( !cacheValid(p) ) cacheStart(p);
  zParams = parParamsKey(pParams);
  e.zKey = zParams ? sqlite3_mprintf("%s\x1e%s", zSql, zParams) : 0;
  sqlite3_free(zParams);
  if( e.zKey==0 ) return SQLITE_NOMEM;
  for(i=0; p->pCanary && i<p->nEntry && strcmp(p->aEntry[i].zKey, e.zKey)!=0; i++){}
  if( p->pCanary && i<p->nEntry ){
    e.pPlan = p->aEntry[i].pPlan;
    if( e.pPlan->zWhy==0 && !cacheFuncsSame(p) ){
      /* Functions came: plan everything again. */
      for(i=0; i<p->nEntry; i++){
        sqlite3_free(p->aEntry[i].zKey);
        parPlanFree(p->aEntry[i].pPlan);
      }
      p->nEntry = 0;
      p->nFunc = -1;
    }else{
      /* A hit: move it to the front. */
      sqlite3_free(e.zKey);
      e = p->aEntry[i];
      memmove(&p->aEntry[1], &p->aEntry[0], sizeof(e)*i);
      p->aEntry[0] = e;
      e.pPlan->nRef++;
      *ppPlan = e.pPlan;
      return SQLITE_OK;
    }
  }
  rc = parPlanBuild(db, zSql, pParams, &e.pPlan, pzErr);
  if( rc==SQLITE_OK && p->pCanary && (e.pPlan->zWhy || cacheFuncsSame(p)) ){
    if( p->nEntry==PAR_PLAN_CACHE_MAX ){
      p->nEntry--;
      sqlite3_free(p->aEntry[p->nEntry].zKey);
      parPlanFree(p->aEntry[p->nEntry].pPlan);
    }
    memmove(&p->aEntry[1], &p->aEntry[0], sizeof(e)*p->nEntry);
    p->aEntry[0] = e;
    p->nEntry++;
    e.pPlan->nRef++;
    e.zKey = 0;
  }
  sqlite3_free(e.zKey);
  *ppPlan = rc==SQLITE_OK ? e.pPlan : 0;
  return rc;
}

void parPlanCacheDrop(ParContext *pCtx){
  ParPlanCache *p = pCtx->pPlanCache, **pp;
  if( p==0 ) return;
  pthread_mutex_lock(&cacheMutex);
  for(pp=&pCacheList; *pp!=p; pp=&(*pp)->pNext){}
  *pp = p->pNext;
  pthread_mutex_unlock(&cacheMutex);
  cacheClear(p);
  sqlite3_free(p);
  pCtx->pPlanCache = 0;
}

/* The cache of db whose canary still holds, or NULL.  The caller holds
** cacheMutex. */
static ParPlanCache *cacheFind(sqlite3 *db){
  ParPlanCache *p;
  for(p=pCacheList; p; p=p->pNext){
    if( p->db==db && p->pCanary && !sqlite3_expired(p->pCanary) ) return p;
  }
  return 0;
}

int parPlanCacheColl(sqlite3 *db){
  ParPlanCache *p;
  int m = -1;
  pthread_mutex_lock(&cacheMutex);
  p = cacheFind(db);
  if( p ) m = p->mColl;
  pthread_mutex_unlock(&cacheMutex);
  return m;
}

void parPlanCacheSetColl(sqlite3 *db, int mColl){
  ParPlanCache *p;
  pthread_mutex_lock(&cacheMutex);
  p = cacheFind(db);
  if( p ) p->mColl = mColl;
  pthread_mutex_unlock(&cacheMutex);
}
