/*
** config.c: the connection's settings and the functions that read them.
**
**   SELECT par_version();                 -- '0.6.0'
**   SELECT par_config();                  -- every setting: '{"threads":2,...}'
**   SELECT par_config('threads');         -- value in force, e.g. 2
**   SELECT par_config('threads', 1);      -- set; returns 1
**   SELECT par_config('threads', 0);      -- back to the default; returns 2
**                                         -- (OMP_NUM_THREADS, else all cores)
**   SELECT par_config('memory_mb', 512);  -- working memory limit per query
**   SELECT par_config('min_rows', 0);     -- run in parallel from the first row
**   SELECT par_config('cache_mb', 256);   -- the process's cache budget
**   SELECT * FROM par_settings;           -- name, value, default_value, min,
**                                         -- max, description of each
**
** How it works: each connection has one ParContext (parext.h) holding the
** settings, shared by every function and module of the extension on that
** connection through the functions' user data and reference counted.
** par_config validates the name and the value against the table
** aSetting[] below, then writes the field; bad names and bad values are
** errors that name the setting and the accepted range, and change nothing.
** par_config() and par_settings list aSetting[] in its order, with the
** values in force on the connection that asks.  One setting is not the
** connection's: cache_mb is the budget of the columnar cache, which every
** connection of the process shares (extract.c, 4), so setting it on any
** connection sets it for all; it goes back to its default when the last
** connection using the extension closes.
*/
#include "parext.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PAR_MAX_THREADS 1024

/* Settings: name, accepted range, and meaning (par_settings shows it). */
typedef enum ParSettingId {
  PAR_THREADS, PAR_MEMORY_MB, PAR_MIN_ROWS, PAR_PARALLEL_EXTRACT, PAR_CACHE_MB,
  PAR_GROUP_STRATEGY,
  PAR_JOIN_STRATEGY
} ParSettingId;
static const struct ParSetting {
  const char *zName;
  ParSettingId eId;
  sqlite3_int64 iMin, iMax;
  const char *zDesc;
} aSetting[] = {
  { "threads",   PAR_THREADS,   0, PAR_MAX_THREADS,
    "threads the kernels use; 0 sets the default: OMP_NUM_THREADS if set, else all cores" },
  { "memory_mb", PAR_MEMORY_MB, 1, (sqlite3_int64)1 << 30,
    "limit on the working memory of one query, in MiB" },
  { "min_rows",  PAR_MIN_ROWS,  0, LLONG_MAX,
    "inputs with fewer rows run on one thread" },
  { "parallel_extract", PAR_PARALLEL_EXTRACT, 0, 1,
    "1: read sources on worker connections when possible; 0: always serially" },
  { "cache_mb",  PAR_CACHE_MB,  0, (sqlite3_int64)1 << 30,
    "budget in MiB of the columnar cache, which every connection of the process "
    "shares: set on one, it is set for all (0: no cache)" },
  { "group_strategy", PAR_GROUP_STRATEGY, PAR_GROUP_AUTO, PAR_GROUP_RADIX,
    "GROUP BY: 0 chooses from the data; 1 direct, 2 dense, 3 counting sort, "
    "4 radix sort when they apply" },
  { "join_strategy", PAR_JOIN_STRATEGY, PAR_JOIN_AUTO, PAR_JOIN_SQLITE,
    "joins: 0 the join operator's hash join where it applies; 1 SQLite joins the "
    "tables inside the scan" },
};
#define N_SETTING (int)(sizeof(aSetting)/sizeof(aSetting[0]))

#define PAR_DEFAULT_MIN_ROWS 100000

/* Physical memory in MiB divided by nDiv, at least 64: the defaults of
** memory_mb (half) and cache_mb (a quarter). */
static sqlite3_int64 parDefaultMemMb(int nDiv){
  long nPage = sysconf(_SC_PHYS_PAGES);
  long szPage = sysconf(_SC_PAGESIZE);
  sqlite3_int64 mb;
  if( nPage<=0 || szPage<=0 ) return 1024;
  mb = (sqlite3_int64)nPage * szPage / (nDiv * 1024 * 1024);
  return mb<64 ? 64 : mb;
}

/* OMP_NUM_THREADS as libgomp reads it: a list of positive integers
** separated by commas (spaces around each allowed), of which the first is
** for the outermost level; 0 when unset or not such a list (OpenMP then
** ignores it too).  Values above iMax read as iMax. */
static int parOmpThreads(int iMax){
  const char *z = getenv("OMP_NUM_THREADS");
  sqlite3_int64 iFirst = 0;
  int nItem = 0;
  if( z==0 ) return 0;
  for(;;){
    sqlite3_int64 v = 0;
    int nDigit = 0;
    while( *z==' ' || *z=='\t' ) z++;
    for(; *z>='0' && *z<='9'; z++, nDigit++){
      v = v*10 + (*z - '0');
      if( v>(sqlite3_int64)UINT_MAX ) return 0;     /* strtoul would overflow */
    }
    while( *z==' ' || *z=='\t' ) z++;
    if( nDigit==0 || v==0 ) return 0;
    if( nItem++==0 ) iFirst = v;
    if( *z==0 ) break;
    if( *z++!=',' ) return 0;
  }
  return iFirst>iMax ? iMax : (int)iFirst;
}

/* The threads a connection starts with, and par_config('threads', 0) sets:
** OMP_NUM_THREADS when it names a number (see above), else every core.
** (Worker connections stay capped at the cores: extract.c.) */
static int parDefaultThreads(void){
  int n = parOmpThreads(PAR_MAX_THREADS);
  return n>0 ? n : px_ncores();
}

ParContext *parContextNew(void){
  ParContext *p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return 0;
  memset(p, 0, sizeof(*p));
  p->nRef = 1;
  p->nThread = parDefaultThreads();
  p->mxMemMb = parDefaultMemMb(2);
  p->nMinRow = PAR_DEFAULT_MIN_ROWS;
  p->bParExtract = 1;
  parCacheAttach(parDefaultMemMb(4));
  return p;
}

ParContext *parContextRef(ParContext *p){
  p->nRef++;
  return p;
}

void parContextUnref(void *pArg){
  ParContext *p = (ParContext*)pArg;
  if( p && --p->nRef==0 ){
    parJoinMemoClear(p);
    parExtractShutdown(p);
    parCacheDetach();
    sqlite3_free(p);
  }
}

/* A kernel's thread starts, joins and per-thread scratch (histograms,
** accumulators, pieces) cost more than a share of too few rows saves:
** measured on a 32-core machine over 10M rows (bench/scaling.py), the
** sort, top-k and group-by kernels ran fastest at 8 to 16 threads and
** slower at 32.  So each thread beyond the first needs this many times
** min_rows rows (600,000 by default: 10M rows take 16 threads); with
** min_rows 0, as the tests set it, every thread is used. */
#define PAR_ROWS_PER_THREAD_X_MIN_ROWS 6

int parThreadsFor(const ParContext *pCtx, sqlite3_int64 nRow){
  sqlite3_int64 nPer = pCtx->nMinRow * PAR_ROWS_PER_THREAD_X_MIN_ROWS;
  if( nRow < pCtx->nMinRow ) return 1;
  if( nPer>0 && nRow/nPer < pCtx->nThread ) return nRow/nPer > 2 ? (int)(nRow/nPer) : 2;
  return pCtx->nThread;
}

double parNowMs(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec*1e3 + ts.tv_nsec/1e6;
}

sqlite3_int64 parMemLimit(const ParContext *pCtx){
  return pCtx->mxMemMb * 1024 * 1024;
}

int parRcFromPx(int pxrc){
  switch( pxrc ){
    case PX_OK:        return SQLITE_OK;
    case PX_ENOMEM:    return SQLITE_NOMEM;
    case PX_EINTR:     return SQLITE_INTERRUPT;
    case PX_ETOOBIG:   return SQLITE_TOOBIG;
    default:           return SQLITE_ERROR;
  }
}

/* The probe: about PAR_PROBE_OPS VDBE instructions of additions of a
** bound 0 (a few microseconds), in columns of 250 terms (SQLite limits the
** depth of an expression). */
#define PAR_PROBE_OPS 2000

int parProbePrepare(sqlite3 *db, sqlite3_stmt **ppProbe){
  sqlite3_str *pStr = sqlite3_str_new(db);
  char *zSql;
  int i, rc;
  *ppProbe = 0;
  sqlite3_str_appendall(pStr, "SELECT ?1");
  for(i=1; i<PAR_PROBE_OPS/2; i++){
    sqlite3_str_appendall(pStr, i%250==0 ? ", ?1" : "+?1");
  }
  zSql = sqlite3_str_finish(pStr);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, ppProbe, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_int(*ppProbe, 1, 0);
  if( rc ){
    sqlite3_finalize(*ppProbe);
    *ppProbe = 0;
  }
  return rc;
}

int parProbeStop(sqlite3_stmt *pProbe){
  int rc = sqlite3_step(pProbe);
  sqlite3_reset(pProbe);
  return rc==SQLITE_INTERRUPT;
}

/* xAsk of a ParStop: stepping the probe fails once the connection is
** interrupted (a statement is running on it: this one's, so the flag
** stays set until it ends) or its progress handler asks to stop. */
static int parStopAsk(void *pArg){
  ParStop *p = (ParStop*)pArg;
  return p->pProbe ? parProbeStop(p->pProbe) : 0;
}

void parStopBegin(sqlite3 *db, ParStop *p){
  int rc;
  memset(p, 0, sizeof(*p));
  p->base.xAsk = parStopAsk;
  p->base.pArg = p;
  p->pPrev = px_stop_installed();
  /* Preparing fails too when the interrupt came already (and without a
  ** probe, for want of memory, nothing stops). */
  rc = parProbePrepare(db, &p->pProbe);
  if( (rc & 0xff)==SQLITE_INTERRUPT ) p->base.bStop = 1;
  px_stop_install(&p->base);
}

void parStopEnd(ParStop *p){
  px_stop_install(p->pPrev);
  sqlite3_finalize(p->pProbe);
  p->pProbe = 0;
}

int parStopped(void){
  return px_stop_now(px_stop_installed());
}

int parFuncListAsk(sqlite3_stmt *pStmt){
  int iRes = -1;
  if( sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_int(pStmt, 1)==2 ){
    iRes = sqlite3_column_int(pStmt, 0)>0;
  }
  sqlite3_reset(pStmt);
  return iRes;
}

const char *parTextArg(sqlite3_value *pVal){
  const char *z;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ) return 0;
  z = (const char*)sqlite3_value_text(pVal);
  if( z==0 || (int)strlen(z)!=sqlite3_value_bytes(pVal) ) return 0;
  return z;
}

const char *parFirstParam(sqlite3_stmt *pStmt){
  int i, n = sqlite3_bind_parameter_count(pStmt);
  for(i=1; i<=n; i++){
    const char *z = sqlite3_bind_parameter_name(pStmt, i);
    if( z ) return z;
  }
  return "?";
}

char *parArgText(sqlite3_value *pVal){
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_NULL: return sqlite3_mprintf("NULL");
    case SQLITE_BLOB: return sqlite3_mprintf("a BLOB");
    case SQLITE_TEXT:
      return parTextArg(pVal) ? sqlite3_mprintf("'%q'", sqlite3_value_text(pVal))
                              : sqlite3_mprintf("a TEXT with a NUL byte inside");
    default:          return sqlite3_mprintf("%s", sqlite3_value_text(pVal));
  }
}

/* par_version(): the extension's version string. */
static void parVersionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3_result_text(ctx, PAR_VERSION, -1, SQLITE_STATIC);
}

static sqlite3_int64 parSettingGet(const ParContext *p, ParSettingId eId){
  switch( eId ){
    case PAR_THREADS:   return p->nThread;
    case PAR_MEMORY_MB: return p->mxMemMb;
    case PAR_PARALLEL_EXTRACT: return p->bParExtract;
    case PAR_CACHE_MB:  return parCacheBudgetMb();
    case PAR_GROUP_STRATEGY: return p->eGroupStrategy;
    case PAR_JOIN_STRATEGY: return p->eJoinStrategy;
    default:            return p->nMinRow;
  }
}

/* The value a connection starts with (that 0 sets for threads). */
static sqlite3_int64 parSettingDefault(ParSettingId eId){
  switch( eId ){
    case PAR_THREADS:   return parDefaultThreads();
    case PAR_MEMORY_MB: return parDefaultMemMb(2);
    case PAR_PARALLEL_EXTRACT: return 1;
    case PAR_CACHE_MB:  return parDefaultMemMb(4);
    case PAR_GROUP_STRATEGY: return PAR_GROUP_AUTO;
    case PAR_JOIN_STRATEGY: return PAR_JOIN_AUTO;
    default:            return PAR_DEFAULT_MIN_ROWS;
  }
}

static void parSettingSet(ParContext *p, ParSettingId eId, sqlite3_int64 v){
  switch( eId ){
    case PAR_THREADS:   p->nThread = v==0 ? parDefaultThreads() : (int)v; parExtractTrim(p); break;
    case PAR_MEMORY_MB: p->mxMemMb = v; break;
    case PAR_PARALLEL_EXTRACT: p->bParExtract = (int)v; break;
    case PAR_CACHE_MB:  parCacheSetBudgetMb(v); break;
    case PAR_GROUP_STRATEGY: p->eGroupStrategy = (int)v; break;
    case PAR_JOIN_STRATEGY: p->eJoinStrategy = (int)v; break;
    default:            p->nMinRow = v; break;
  }
}

/* Read an integer argument: an INTEGER, a REAL with an integral value, or
** text that reads as one.  Returns 0 and sets *pV on success. */
static int parIntArg(sqlite3_value *pVal, sqlite3_int64 *pV){
  switch( sqlite3_value_numeric_type(pVal) ){
    case SQLITE_INTEGER:
      *pV = sqlite3_value_int64(pVal);
      return 0;
    case SQLITE_FLOAT: {
      double r = sqlite3_value_double(pVal);
      if( r>=-9.2e18 && r<=9.2e18 && r==(double)(sqlite3_int64)r ){
        *pV = (sqlite3_int64)r;
        return 0;
      }
      return 1;
    }
    default:
      return 1;
  }
}

/* par_config(name [, value]): read or set a setting; returns the value in
** force afterwards.  par_config(): every setting as a JSON object. */
static void parConfigFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  ParContext *p = (ParContext*)sqlite3_user_data(ctx);
  const char *zName;
  const struct ParSetting *pSet = 0;
  int i;
  if( argc==0 ){
    /* Every setting, as a JSON object in the order of aSetting[]. */
    sqlite3_str *pStr = sqlite3_str_new(0);
    char *zJson;
    for(i=0; i<N_SETTING; i++){
      sqlite3_str_appendf(pStr, "%c\"%s\":%lld", i ? ',' : '{', aSetting[i].zName,
                          parSettingGet(p, aSetting[i].eId));
    }
    sqlite3_str_appendchar(pStr, 1, '}');
    zJson = sqlite3_str_finish(pStr);
    if( zJson==0 ){
      sqlite3_result_error_nomem(ctx);
    }else{
      sqlite3_result_text(ctx, zJson, -1, sqlite3_free);
    }
    return;
  }
  zName = parTextArg(argv[0]);
  if( zName==0 ){
    sqlite3_result_error(ctx, "par_config: the first argument must be a "
                         "setting name (threads, memory_mb, min_rows, parallel_extract, cache_mb, group_strategy, join_strategy)", -1);
    return;
  }
  for(i=0; i<N_SETTING; i++){
    if( sqlite3_stricmp(zName, aSetting[i].zName)==0 ) pSet = &aSetting[i];
  }
  if( pSet==0 ){
    char *zErr = sqlite3_mprintf("par_config: unknown setting '%s' (known: "
                                 "threads, memory_mb, min_rows, parallel_extract, cache_mb, group_strategy, join_strategy)", zName);
    sqlite3_result_error(ctx, zErr ? zErr : "par_config: unknown setting", -1);
    sqlite3_free(zErr);
    return;
  }
  if( argc==2 ){
    sqlite3_int64 v = 0;
    if( parIntArg(argv[1], &v) || v<pSet->iMin || v>pSet->iMax ){
      char *zVal = parArgText(argv[1]);
      char *zErr = sqlite3_mprintf(
          "par_config: %s must be an integer from %lld to %lld, not %s",
          pSet->zName, pSet->iMin, pSet->iMax, zVal ? zVal : "that");
      sqlite3_free(zVal);
      sqlite3_result_error(ctx, zErr ? zErr : "par_config: bad value", -1);
      sqlite3_free(zErr);
      return;
    }
    parSettingSet(p, pSet->eId, v);
  }
  sqlite3_result_int64(ctx, parSettingGet(p, pSet->eId));
}

/* ---- par_settings: one row per setting of aSetting[] ---------------------- */

typedef struct ParSettingsVtab {
  sqlite3_vtab base;
  ParContext *pCtx;      /* not owned: the module holds the reference */
} ParSettingsVtab;

typedef struct ParSettingsCursor {
  sqlite3_vtab_cursor base;
  int iRow;              /* index into aSetting[] */
} ParSettingsCursor;

static int parSettingsConnect(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                              sqlite3_vtab **ppVtab, char **pzErr){
  ParSettingsVtab *pTab;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(name TEXT, value INTEGER, "
                                    "default_value INTEGER, min INTEGER, max INTEGER, "
                                    "description TEXT)");
  if( rc ) return rc;
  pTab = sqlite3_malloc(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->pCtx = (ParContext*)pAux;
  /* It reads the connection's settings: not from a stranger's schema. */
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int parSettingsBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  pInfo->estimatedCost = N_SETTING;
  pInfo->estimatedRows = N_SETTING;
  return SQLITE_OK;
}

static int parSettingsDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int parSettingsOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  ParSettingsCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static int parSettingsClose(sqlite3_vtab_cursor *cur){
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int parSettingsFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                             int argc, sqlite3_value **argv){
  ((ParSettingsCursor*)cur)->iRow = 0;
  return SQLITE_OK;
}

static int parSettingsNext(sqlite3_vtab_cursor *cur){
  ((ParSettingsCursor*)cur)->iRow++;
  return SQLITE_OK;
}

static int parSettingsEof(sqlite3_vtab_cursor *cur){
  return ((ParSettingsCursor*)cur)->iRow>=N_SETTING;
}

static int parSettingsColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  ParSettingsCursor *pCur = (ParSettingsCursor*)cur;
  const ParContext *p = ((ParSettingsVtab*)cur->pVtab)->pCtx;
  const struct ParSetting *pSet = &aSetting[pCur->iRow];
  switch( i ){
    case 0:  sqlite3_result_text(ctx, pSet->zName, -1, SQLITE_STATIC); break;
    case 1:  sqlite3_result_int64(ctx, parSettingGet(p, pSet->eId)); break;
    case 2:  sqlite3_result_int64(ctx, parSettingDefault(pSet->eId)); break;
    case 3:  sqlite3_result_int64(ctx, pSet->iMin); break;
    case 4:  sqlite3_result_int64(ctx, pSet->iMax); break;
    default: sqlite3_result_text(ctx, pSet->zDesc, -1, SQLITE_STATIC); break;
  }
  return SQLITE_OK;
}

static int parSettingsRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = ((ParSettingsCursor*)cur)->iRow + 1;
  return SQLITE_OK;
}

static sqlite3_module parSettingsModule = {
  0,                     /* iVersion */
  0,                     /* xCreate: 0 makes it eponymous-only */
  parSettingsConnect,    /* xConnect */
  parSettingsBestIndex,  /* xBestIndex: a full scan of a few rows */
  parSettingsDisconnect, /* xDisconnect */
  0,                     /* xDestroy */
  parSettingsOpen,       /* xOpen */
  parSettingsClose,      /* xClose */
  parSettingsFilter,     /* xFilter */
  parSettingsNext,       /* xNext */
  parSettingsEof,        /* xEof */
  parSettingsColumn,     /* xColumn: the values in force when read */
  parSettingsRowid,      /* xRowid */
  0, 0, 0, 0, 0, 0, 0,   /* read-only: no xUpdate, transactions, functions */
  0, 0, 0, 0             /* xRename .. xShadowName */
};

int parConfigRegister(sqlite3 *db, ParContext *pCtx){
  int rc;
  rc = sqlite3_create_function_v2(db, "par_version", 0,
         SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS,
         parContextRef(pCtx), parVersionFunc, 0, 0, parContextUnref);
  if( rc!=SQLITE_OK ) return rc;
  /* par_config changes connection state: never from triggers or views. */
  rc = sqlite3_create_function_v2(db, "par_config", 0,
         SQLITE_UTF8|SQLITE_DIRECTONLY,
         parContextRef(pCtx), parConfigFunc, 0, 0, parContextUnref);
  if( rc!=SQLITE_OK ) return rc;
  rc = sqlite3_create_function_v2(db, "par_config", 1,
         SQLITE_UTF8|SQLITE_DIRECTONLY,
         parContextRef(pCtx), parConfigFunc, 0, 0, parContextUnref);
  if( rc!=SQLITE_OK ) return rc;
  rc = sqlite3_create_function_v2(db, "par_config", 2,
         SQLITE_UTF8|SQLITE_DIRECTONLY,
         parContextRef(pCtx), parConfigFunc, 0, 0, parContextUnref);
  if( rc!=SQLITE_OK ) return rc;
  return sqlite3_create_module_v2(db, "par_settings", &parSettingsModule,
                                  parContextRef(pCtx), parContextUnref);
}
