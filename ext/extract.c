/*
** extract.c: reading the rows of a plan's extraction query, in parallel
** on read-only worker connections when the source allows it, and keeping
** what was read in a columnar cache.
**
**   .load ./parallel
**   CREATE VIRTUAL TABLE temp.r USING parallel(
**     'SELECT k, sum(v) FROM main.t WHERE v > 0 GROUP BY k');
**   SELECT * FROM r;                  -- cold: rowid ranges read in parallel
**   SELECT * FROM r;                  -- warm: the columns come from the cache
**   SELECT * FROM par_cache;          -- source, columns, rows, bytes, hits
**                                     -- (of every connection of the process)
**   SELECT par_cache_clear();         -- drop every entry of the process
**   SELECT par_config('parallel_extract', 0);   -- always read serially
**   SELECT par_config('cache_mb', 256);         -- the process's cache budget
**
** How it works:
**  1. The source.  Rows are read in parallel only when the extraction
**     query reads one table of a database file in the table's order
**     ("SCAN t" in its query plan), with nothing else (no subquery, no
**     index), and a range of rowids makes it "SEARCH t USING INTEGER
**     PRIMARY KEY" (for a WITHOUT ROWID table: a range of its first
**     primary-key column, "SEARCH t USING PRIMARY KEY"): then the rows of
**     a range are exactly the rows of the query whose keys fall in it, in
**     the same order.  The caller's
**     connection must have no uncommitted change to that database (its
**     own writes are visible on it alone), and a read transaction of its
**     must be one the workers can share (see "the caller's snapshot"
**     below: vouched for, or of autocommit statements alone, which read
**     the latest commit as a new statement would).  The query may use no
**     application-defined function (a worker
**     has SQLite's built-in ones only) and no collation SQLite does not
**     define.  Everything else is read serially on the caller's connection,
**     and par_explain says why.
**  2. One snapshot.  Worker connections (opened lazily, read-only, one per
**     thread, closed with the caller's connection; a pool of them per
**     database file, on the PAR_STAMP_MAX files read last) each begin a read
**     transaction.  In WAL mode a "gate" connection holds the write lock
**     meanwhile (BEGIN IMMEDIATE), so no commit lands between the first
**     worker's snapshot and the last's; in rollback mode the first
**     worker's shared lock already keeps every commit out.  When the lock
**     cannot be had quickly the rows are read serially.
**  3. Ranges.  The rowids min..max are cut into 8 ranges per thread, or
**     fewer of at least PAR_RANGE_MIN_ROWS rowids, 2 per thread at least (of
**     a WITHOUT ROWID table: integer bounds between the least key and the
**     greatest number, the first range open below, the last open above,
**     where text and blob keys fall; see parPkColumn()), taken
**     by the workers as they finish (so skew in the data evens out); each
**     range feeds par_sink (batch.c) on the worker's own connection, and
**     the pieces are joined in rowid order (parBatchConcat).  SQLite
**     compares each row's rowid with the end of its range, about a tenth
**     of the cost of a row; the last range has no end to compare with,
**     and when the last read of every row of the table (no WHERE) found
**     every rowid from min to max and the data version is still the one
**     it read (ParDense), no range has: each reads from its first rowid on
**     and par_sink stops the statement after as many rows as the range
**     spans.  Below
**     min_rows rowids, one serial read on the caller's connection is
**     cheaper.  The calling thread waits and checks for sqlite3_interrupt()
**     on its connection every few milliseconds; an interrupt stops the
**     workers.
**  4. The cache.  One per process, shared by every connection (in any
**     thread) that loaded the extension: connections to the same file
**     share the columns instead of copying them.  What extraction read is
**     kept under a key made of the database file and the worker's SQL
**     (and the expressions it read: a later extraction needing some of
**     them from the same table, alias and WHERE shares their columns).
**     A data version (SQLITE_FCNTL_DATA_VERSION) is a connection's own
**     count of the commits it has seen, so entries are stamped in the
**     numbers of one connection of the process per file, its tracker
**     (ParTrack: read-only, used under the cache's mutex only), which any
**     connection can ask: a read brings it up to date with every commit,
**     of this process or another, schema changes included.  The rows read
**     are of a known version of the reading connection's pool (the
**     workers' snapshot, or the stamp taken before a serial read); when
**     the entry is kept, the tracker's version is read before and after
**     that pool connection's (parTrackPair): equal, no commit came in
**     between, so the tracker's version names the content of that moment,
**     and the entry is kept only if the pool's version then is still the
**     one read (else a commit came since the read, and it would be stale
**     at once).  A lookup uses an entry only if the tracker's version now
**     is the entry's; when the caller's snapshot must be the one read
**     (parCallerSnapshot), also only if the caller's pool is at that
**     snapshot's version at a moment the tracker is at the entry's.  A
**     tracker whose file was moved or replaced drops its entries and opens
**     the file now at the path; a pool's version is used only while the
**     pool's file has not moved either.  The tracker of a file lives as
**     long as some pool of the process is open on it (a user count): the
**     last pool to close drops the file's entries, so a DETACHed file is
**     no longer held open, and everything is freed when the last
**     connection closes.  Entries are dropped least recently used first
**     to stay within cache_mb, the process's budget (set on any
**     connection, it is every connection's).  Threads: the cache, the
**     trackers and the budget are under one mutex; a lookup hands out a
**     batch of the caller's own that shares the entry's columns
**     (parBatchSubset), whose reference to the entry's batch is atomic
**     (batch.c), so a batch in use stays alive after its entry goes.
*/
#include "extract.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- structures ------------------------------------------------------------ */

/* What the last read of every row of a table found (parReadParallel): its
** rowids are min..max, every one present, as long as the file's data
** version is the one read then.  Ranges of such a table are then taken by
** row count, from their first rowid on, with no upper bound for SQLite
** to compare each row's rowid with (about a tenth of the cost of a row). */
#define PAR_DENSE_MAX 8
typedef struct ParDense {
  char *zTable;         /* NULL: a free slot */
  unsigned iVersion;    /* data version of the pool's first connection */
  sqlite3_int64 iMin, iMax;
} ParDense;

/* Worker connections on one database file. */
typedef struct ParPool ParPool;
struct ParPool {
  char *zFile;          /* the file, as sqlite3_db_filename() names it */
  int nConn;
  sqlite3 **aConn;      /* read-only, one per thread */
  sqlite3 *pGate;       /* read-write: holds the write lock of a WAL file
                        ** while the workers begin (or NULL) */
  sqlite3 *pCheck;      /* read-only: the file attached as zCheckSchema to
                        ** an empty main, to compile the caller's SQL for
                        ** an attached database as a new connection does
                        ** (parCompilesAsNew), or NULL */
  char *zCheckSchema;
  unsigned iGen;        /* ParContext.iPoolGen when it was opened */
  ParDense aDense[PAR_DENSE_MAX];   /* tables read whole; a new one takes
                        ** slot iDense, the next slot after it */
  int iDense;
  int bSync;            /* main's file: at one moment with no commit in
                        ** between, the caller's main had data version
                        ** iSyncCaller and aConn[0] iSyncWorker (see
                        ** parCallerVouched) */
  unsigned iSyncCaller, iSyncWorker;
  int bUnsync;          /* a try failed after the caller's main began its
                        ** read transaction at data version iUnsyncCaller:
                        ** nothing vouches for that snapshot */
  unsigned iUnsyncCaller;
  struct ParTrack *pTrack;   /* the process's tracker of zFile (one user
                        ** reference), or NULL: nothing read is kept */
  ParPool *pNext;       /* the connection's next pool (less recently used) */
};

/* The process's version tracker of one database file (see the header, 4):
** everything in it, and the cache, is under parShared.mutex. */
typedef struct ParTrack ParTrack;
struct ParTrack {
  char *zFile;          /* as sqlite3_db_filename() names it */
  sqlite3 *pDb;         /* read-only on zFile, or NULL (opened when next
                        ** needed): its data versions are the entries' */
  int nUser;            /* pools on zFile, of every connection */
  ParTrack *pNext;
};

typedef struct ParCacheEntry ParCacheEntry;
struct ParCacheEntry {
  ParCacheEntry *pPrev, *pNext;   /* LRU list, most recent first */
  char *zKey;           /* file, LIKE mode and the worker's SQL */
  char *zSource;        /* schema.table, for par_cache */
  char *zCols;          /* the extracted expressions, for par_cache */
  char *zBase;          /* file, LIKE mode, table, alias and WHERE */
  int nExpr;            /* the expressions one by one (0: not known) */
  char **azExpr;
  ParTrack *pTrack;     /* the tracker of the file */
  unsigned iVersion;    /* ...and its data version for these rows */
  ParBatch *pBatch;     /* one reference; only parBatchSubset() wrappers
                        ** of it are handed out (parCacheLookup) */
  sqlite3_int64 nHit;
};

typedef struct ParCache ParCache;
struct ParCache {
  ParCacheEntry *pFirst, *pLast;
  sqlite3_int64 nByte;  /* bytes of all entries' batches */
  int nEntry;
};

/* What the connections of the process share: the cache, the trackers of
** the files its entries come from, and the budget.  Freed when the last
** ParContext goes (parCacheDetach). */
static struct ParShared {
  pthread_mutex_t mutex;
  int nCtx;             /* ParContexts alive (connections using us) */
  sqlite3_int64 mxCacheMb;   /* "cache_mb"; -1: not set yet */
  ParCache cache;
  ParTrack *pTrack;
} parShared = { PTHREAD_MUTEX_INITIALIZER, 0, -1, { 0, 0, 0, 0 }, 0 };

/* A source that can be read in parallel (parSourceResolve). */
typedef struct ParSource ParSource;
struct ParSource {
  char *zSchema;        /* the table's schema on the caller's connection */
  char *zTable;
  const char *zFile;    /* its file (owned by SQLite) */
  const char *zRowid;   /* how the worker SQL names the rowid */
  char *zPk;            /* WITHOUT ROWID: the first primary-key column
                        ** (then zRowid is NULL) */
  char *zWorkerSql;     /* the extraction on a worker connection, where
                        ** the file is "main", for rowids :par_lo..:par_hi
                        ** (WITHOUT ROWID: :par_lo <= key < :par_hi) */
  char *zWorkerTailSql; /* the same for :par_lo <= key (rowid), with no
                        ** upper bound: the last range, and every range
                        ** when they are taken by row count; or NULL */
  char *zRangePlan;     /* the query plan the caller's connection has for
                        ** the worker SQL (through par_sink): a worker
                        ** must plan it the same (settings, statistics) */
  char *zTailPlan;      /* the same for zWorkerTailSql */
  char *zKey;           /* cache key */
  char *zBase;          /* the key without the columns: an entry with the
                        ** same base and every needed column serves too */
  int bWal;             /* the file is in WAL mode */
  int bLikeCs;          /* the caller's LIKE is case sensitive */
  int bJoin;            /* zTable is the outermost table of a join: each
                        ** range of it is joined on its worker */
  int bAll;             /* every row of a rowid table, no WHERE: the rows
                        ** read are the table's (see ParDense) */
  const ParParams *pParams;   /* the plan's values of its parameters */
};

static void parSourceClear(ParSource *p){
  sqlite3_free(p->zSchema);
  sqlite3_free(p->zTable);
  sqlite3_free(p->zWorkerSql);
  sqlite3_free(p->zWorkerTailSql);
  sqlite3_free(p->zRangePlan);
  sqlite3_free(p->zTailPlan);
  sqlite3_free(p->zPk);
  sqlite3_free(p->zKey);
  sqlite3_free(p->zBase);
  memset(p, 0, sizeof(*p));
}

/* ---- small helpers --------------------------------------------------------- */

/* Run zSql on db, ignoring rows; SQLite's result code. */
static int parExec(sqlite3 *db, const char *zSql){
  return sqlite3_exec(db, zSql, 0, 0, 0);
}

/* The detail lines of zSql's query plan, each ending in "\n", or NULL.
** Without the lines of subqueries in expressions (SCALAR SUBQUERY, LIST
** SUBQUERY and what runs under them): a subquery runs whole wherever its
** expression is evaluated, on any connection, and leaves the order in
** which the statement reads its tables as it is. */
static char *parQueryPlan(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt = 0;
  sqlite3_str *pStr;
  char *zEqp = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", zSql);
  int rc = zEqp ? sqlite3_prepare_v2(db, zEqp, -1, &pStmt, 0) : SQLITE_NOMEM;
  int aSub[64], nSub = 0, k;
  sqlite3_free(zEqp);
  if( rc ){
    sqlite3_finalize(pStmt);
    return 0;
  }
  pStr = sqlite3_str_new(db);
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zDetail = (const char*)sqlite3_column_text(pStmt, 3);
    int iParent = sqlite3_column_int(pStmt, 1);
    for(k=0; k<nSub && aSub[k]!=iParent; k++){}
    if( k<nSub || (zDetail && (strstr(zDetail, "SCALAR SUBQUERY")
                               || strstr(zDetail, "LIST SUBQUERY"))) ){
      if( nSub>=(int)(sizeof(aSub)/sizeof(aSub[0])) ){
        sqlite3_finalize(pStmt);
        sqlite3_free(sqlite3_str_finish(pStr));
        return 0;
      }
      aSub[nSub++] = sqlite3_column_int(pStmt, 0);
      continue;
    }
    sqlite3_str_appendf(pStr, "%s\n", zDetail);
  }
  sqlite3_str_appendall(pStr, "");   /* an empty plan is "", not NULL */
  sqlite3_finalize(pStmt);
  return sqlite3_str_finish(pStr);
}

/* True if zPlan is one line that starts with zStart and contains zHas
** (if not NULL) and does not contain zNot (if not NULL). */
static int parPlanIs(const char *zPlan, const char *zStart, const char *zHas,
                     const char *zNot){
  const char *zEnd;
  if( zPlan==0 || strncmp(zPlan, zStart, strlen(zStart))!=0 ) return 0;
  zEnd = strchr(zPlan, '\n');
  if( zEnd==0 || zEnd[1]!=0 ) return 0;
  if( zHas && strstr(zPlan, zHas)==0 ) return 0;
  if( zNot && strstr(zPlan, zNot)!=0 ) return 0;
  return 1;
}

/* zPlan (from parQueryPlan, or NULL) on one line for a message: its
** lines separated by ';'.  Returns zPlan. */
static char *parPlanLine(char *zPlan){
  char *z;
  for(z=zPlan; z && *z; z++){ if( *z=='\n' ) *z = z[1] ? ';' : 0; }
  return zPlan;
}

/* ---- the source ------------------------------------------------------------ */

/* Does table zTab exist in schema zSchema of db?  No for zTab NULL. */
static int parHasTable(sqlite3 *db, const char *zSchema, const char *zTab){
  return zTab && sqlite3_table_column_metadata(db, zSchema, zTab, 0, 0, 0, 0, 0, 0)==SQLITE_OK;
}

/* The schema an unqualified table name zTab resolves to, as SQLite
** resolves it (temp, main, then attached databases in order), or NULL
** (also for zTab NULL: out of memory before). */
char *parResolveSchema(sqlite3 *db, const char *zTab){
  const char *zName;
  int i;
  if( parHasTable(db, "temp", zTab) ) return sqlite3_mprintf("temp");
  /* Databases by number, without SQL (the authorizer would see it). */
  for(i=0; (zName = sqlite3_db_name(db, i))!=0; i++){
    if( i!=1 && parHasTable(db, zName, zTab) ) return sqlite3_mprintf("%s", zName);
  }
  return 0;
}

/* Built-in functions whose answer is the caller connection's own. */
static const char *azConnFunc[] = { "changes", "total_changes", "last_insert_rowid" };

/* Operators that call a function by name, which an application may define
** (SQLite's own LIKE and GLOB included). */
static const char *azOpFunc[] = { "like", "glob", "regexp", "match" };

/* Does like() on db answer as SQLite's own does, case-blind or not (as
** PRAGMA case_sensitive_like chose)?  Probed, ESCAPE included. */
static int parLikeIsBuiltin(sqlite3 *db){
  static const char *zProbe =
      "SELECT ('abc' LIKE 'a%') || ('abc' LIKE 'b%') || ('ABC' LIKE 'a%') "
      "|| ('a_c' LIKE 'a\\_c' ESCAPE '\\') || ('abc' LIKE 'a\\_c' ESCAPE '\\') "
      "|| ('xyz' LIKE 'zzz') || ('x' LIKE '_') || ('xy' LIKE '_')";
  const char *zGot;
  sqlite3_stmt *pStmt = 0;
  int bBuiltin = 0;
  if( sqlite3_prepare_v2(db, zProbe, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW
   && (zGot = (const char*)sqlite3_column_text(pStmt, 0))!=0 ){
    bBuiltin = strcmp(zGot, "10110010")==0 || strcmp(zGot, "10010010")==0;
  }
  sqlite3_finalize(pStmt);
  return bBuiltin;
}

/* Why the function calls and collations named in zText keep a worker
** from computing what the caller's connection computes, or NULL. */
/* Why the application's functions cannot be told from SQLite's. */
static char *parFuncListWhy(void){
  return sqlite3_mprintf("your connection's functions cannot be listed "
                         "(pragma_function_list: an authorizer?)");
}

/* Is a function named z (n bytes) the application's?  1, 0, or -1 when the
** list does not answer; *ppFunc is prepared at the first question (most
** texts ask none) and finalized by the caller.  par_timecheck() is ours:
** every connection that reads an extraction has it. */
static int parAppFunc(sqlite3 *db, sqlite3_stmt **ppFunc, const char *z, int n){
  static const char zCheck[] = "par_timecheck";
  if( (n<0 ? (int)strlen(z) : n)==(int)sizeof(zCheck)-1
   && sqlite3_strnicmp(z, zCheck, (int)sizeof(zCheck)-1)==0 ){
    return 0;
  }
  if( *ppFunc==0
   && sqlite3_prepare_v2(db, PAR_FUNCLIST_SQL("name=?1 COLLATE NOCASE AND NOT builtin"), -1,
                         ppFunc, 0)!=SQLITE_OK ){
    return -1;
  }
  sqlite3_bind_text(*ppFunc, 1, z, n, SQLITE_STATIC);
  return parFuncListAsk(*ppFunc);
}

static char *parForeignNames(sqlite3 *db, const char *zText){
  int nTok = 0, i, k;
  ParToken *aTok = parTokenize(zText, &nTok);
  char *zWhy = 0;
  sqlite3_stmt *pFunc = 0;
  if( aTok==0 ) return sqlite3_mprintf("out of memory");
  for(i=0; zWhy==0 && i<nTok; i++){
    const ParToken *t = &aTok[i];
    if( t->eType!=PT_ID ) continue;
    for(k=0; zWhy==0 && k<(int)(sizeof(azOpFunc)/sizeof(azOpFunc[0])); k++){
      int bApp;
      if( !parTokIs(zText, t, azOpFunc[k]) || (i+1<nTok && aTok[i+1].eType==PT_LP) ) continue;
      if( k==0 ){
        /* PRAGMA case_sensitive_like defines like() anew too, so like()
        ** is known by what it answers: SQLite's, with or without case. */
        bApp = !parLikeIsBuiltin(db);
      }else{
        bApp = parAppFunc(db, &pFunc, azOpFunc[k], -1);
      }
      if( bApp<0 ){
        zWhy = parFuncListWhy();
      }else if( bApp ){
        zWhy = sqlite3_mprintf("its %s operator calls the application's %s() function, "
                               "which worker connections do not have", azOpFunc[k],
                               azOpFunc[k]);
      }
    }
  }
  for(i=0; zWhy==0 && i+1<nTok; i++){
    const ParToken *t = &aTok[i];
    if( t->eType==PT_ID && aTok[i+1].eType==PT_LP ){
      for(k=0; zWhy==0 && k<(int)(sizeof(azConnFunc)/sizeof(azConnFunc[0])); k++){
        if( parTokIs(zText, t, azConnFunc[k]) ){
          zWhy = sqlite3_mprintf("it calls %s(), whose answer is the caller's "
                                 "connection's", azConnFunc[k]);
        }
      }
      if( zWhy ) continue;
      switch( parAppFunc(db, &pFunc, zText + t->i, t->n) ){
        case 1:
          zWhy = sqlite3_mprintf("it calls %.*s(), a function of the application "
                                 "that worker connections do not have", t->n, zText + t->i);
          break;
        case -1:
          zWhy = parFuncListWhy();
          break;
      }
    }else if( parTokIs(zText, t, "COLLATE")
           && (aTok[i+1].eType==PT_ID || aTok[i+1].eType==PT_QID) ){
      char *zColl = parDequote(zText + aTok[i+1].i, aTok[i+1].n);
      if( zColl && parCollFromName(zColl)<0 ){
        zWhy = sqlite3_mprintf("it uses the collation %s of the application", zColl);
      }
      sqlite3_free(zColl);
    }
  }
  sqlite3_finalize(pFunc);
  sqlite3_free(aTok);
  return zWhy;
}

/* Why database zSchema of db cannot be read by another connection, nor
** its rows kept, whatever the query: NULL when it can. */
static char *parConnectionWhy(sqlite3 *db, const char *zSchema){
  int bMoved = 0;
  if( parQueryInt(db, "PRAGMA read_uncommitted", 0) ){
    return sqlite3_mprintf("read_uncommitted is on: with a shared cache this connection "
                           "sees changes other connections have not committed");
  }
  if( sqlite3_file_control(db, zSchema, SQLITE_FCNTL_HAS_MOVED, &bMoved)==SQLITE_OK
   && bMoved ){
    return sqlite3_mprintf("the file of %s was moved or replaced since this connection "
                           "opened it", zSchema);
  }
  return 0;
}

/* ---- date and time functions ------------------------------------------------
**
** SQLite's date and time functions (date.c of 3.40) read the current
** moment in three cases only: called with no time value (date() is
** date('now'); strftime(f) too), with a time value that is TEXT equal to
** 'now' in any case (as sqlite3_value_text() reads it: a BLOB too, up to
** a NUL byte), or with the modifier 'localtime' or 'utc' (the local time
** zone).  No other modifier reads the clock ('unixepoch' after 'now' only
** makes the result NULL).  A call is "fixed" when it has a time value,
** every modifier is a string literal other than 'localtime' and 'utc', and
** strftime's format is a literal: its value then depends on the moment
** only where the time value is 'now'.  A literal time value is decided
** here; any other is checked at each row by par_timecheck(), wrapped
** around it in the SQL that runs (parDatedInit): it returns its argument
** as it is and counts the 'now' it sees in parNowSeen, which the
** extraction reads before and after (parExtract).  CURRENT_DATE,
** CURRENT_TIME and CURRENT_TIMESTAMP always read the moment. */

/* 'now' values par_timecheck() has seen, on any connection, any thread. */
static unsigned long long parNowSeen = 0;

static unsigned long long parNowCount(void){
  return __atomic_load_n(&parNowSeen, __ATOMIC_SEQ_CST);
}

/* par_timecheck(X): X, unchanged (type and bytes); counts X in parNowSeen
** when a date and time function would read it as 'now'. */
static void parTimeCheckFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3_value *pVal = argv[0];
  int eType = sqlite3_value_type(pVal), bNow = 0;
  (void)argc;
  /* The copy first: reading the argument as text can change it (a BLOB
  ** gets a text form and then reports TEXT). */
  sqlite3_result_value(ctx, pVal);
  if( eType==SQLITE_TEXT ){
    /* The bytes in UTF-8 (sqlite3_value_bytes converts UTF-16 in place)
    ** without the NUL terminator a copy would need: "now" and then the
    ** end or a NUL byte, as a C string compares. */
    int n = sqlite3_value_bytes(pVal);
    const char *z = (const char*)sqlite3_value_blob(pVal);
    bNow = n>=3 && z && sqlite3_strnicmp(z, "now", 3)==0 && (n==3 || z[3]==0);
  }else if( eType==SQLITE_BLOB && sqlite3_value_bytes(pVal)>=3 ){
    /* As date.c reads it: text in the database's encoding. */
    const char *z = (const char*)sqlite3_value_text(pVal);
    bNow = z && sqlite3_stricmp(z, "now")==0;
  }
  if( bNow ) __atomic_fetch_add(&parNowSeen, 1, __ATOMIC_RELAXED);
}

/* Register par_timecheck() on db: the caller's connection and every
** connection of ours that prepares the extraction. */
static int parTimeCheckRegister(sqlite3 *db){
  return sqlite3_create_function(db, "par_timecheck", 1,
                                 SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS, 0,
                                 parTimeCheckFunc, 0, 0);
}

/* What the date and time calls of a text do (parDatesScan), bits. */
#define PAR_DATES_CALL      1   /* there is a call */
#define PAR_DATES_ZONE      2   /* a call with a time value is not fixed: a
                                ** modifier not a string literal, or
                                ** 'localtime' or 'utc'; a format not a
                                ** literal.  Every connection of the
                                ** process reads the same zone. */
#define PAR_DATES_UNCHECKED 4   /* a time value is an expression that
                                ** nothing checks for 'now' */
#define PAR_DATES_NOW       8   /* a call reads the moment: no time value,
                                ** or 'now' written */
#define PAR_DATES_CHECKED   16  /* a time value is checked by
                                ** par_timecheck() */
/* What may not be kept: values that depend on more than the rows. */
#define PAR_DATES_NOT_FIXED (PAR_DATES_ZONE|PAR_DATES_UNCHECKED|PAR_DATES_NOW)

/* Does token t of zText name zName: an identifier, quoted or not? */
static int parTokNames(const char *zText, const ParToken *t, const char *zName){
  char *z;
  int bSame;
  if( t->eType==PT_ID ) return parTokIs(zText, t, zName);
  if( t->eType!=PT_QID ) return 0;
  z = parDequote(zText + t->i, t->n);
  bSame = z && sqlite3_stricmp(z, zName)==0;
  sqlite3_free(z);
  return bSame;
}

/* Is token t a string literal whose text is zValue in any case?  -1 when
** out of memory. */
static int parTokString(const char *zText, const ParToken *t, const char *zValue){
  char *z;
  int bSame;
  if( t->eType!=PT_STRING ) return 0;
  z = parDequote(zText + t->i, t->n);
  if( z==0 ) return -1;
  bSame = sqlite3_stricmp(z, zValue)==0;
  sqlite3_free(z);
  return bSame;
}

/* SQLite's date and time functions; strftime, last, takes a format
** before the time value. */
static const char *azDateFunc[] = {
  "date", "time", "datetime", "julianday", "unixepoch", "strftime",
};
#define PAR_N_DATE_FUNC ((int)(sizeof(azDateFunc)/sizeof(azDateFunc[0])))

/* The tokens of one date and time call whose name is aTok[iName]: the
** arguments' token ranges [aArg[2k], aArg[2k+1]) in aArg (room for
** nMax), their number in *pnArg, and the call's closing parenthesis;
** -1 when the parentheses do not close or there are more than nMax. */
static int parCallArgs(const ParToken *aTok, int nTok, int iName, int *aArg, int nMax,
                       int *pnArg){
  int j = iName + 2, nDepth = 0, iStart = j;
  *pnArg = 0;
  for(; j<nTok && aTok[j].eType!=PT_EOF; j++){
    int e = aTok[j].eType;
    if( e==PT_LP ){
      nDepth++;
    }else if( e==PT_RP && nDepth>0 ){
      nDepth--;
    }else if( (e==PT_RP || e==PT_COMMA) && nDepth==0 ){
      if( e==PT_RP && j==iStart && *pnArg==0 ) return j;     /* f() */
      if( *pnArg>=nMax ) return -1;
      aArg[2*(*pnArg)] = iStart;
      aArg[2*(*pnArg)+1] = j;
      (*pnArg)++;
      if( e==PT_RP ) return j;
      iStart = j + 1;
    }
  }
  return -1;
}

/* The PAR_DATES_* bits of zText (tokens aTok[0..nTok-1]).  With aOpen and
** aClose (nTok each, zeroed), each time value par_timecheck() must wrap
** counts one in aOpen at its first token and one in aClose at its last.
** -1 when out of memory. */
static int parDatesScan(const char *zText, const ParToken *aTok, int nTok, int *aOpen,
                        int *aClose){
  int i, k, m = 0;
  for(i=0; i+1<nTok; i++){
    int aArg[2*16], nArg, iTime, a, b, r;
    if( parTokIs(zText, &aTok[i], "CURRENT_DATE") || parTokIs(zText, &aTok[i], "CURRENT_TIME")
     || parTokIs(zText, &aTok[i], "CURRENT_TIMESTAMP")
     || (aTok[i+1].eType==PT_LP && (parTokNames(zText, &aTok[i], "current_date")
                                    || parTokNames(zText, &aTok[i], "current_time")
                                    || parTokNames(zText, &aTok[i], "current_timestamp"))) ){
      m |= PAR_DATES_CALL|PAR_DATES_NOW;
      continue;
    }
    if( aTok[i+1].eType!=PT_LP ) continue;
    for(k=0; k<PAR_N_DATE_FUNC && !parTokNames(zText, &aTok[i], azDateFunc[k]); k++){}
    if( k==PAR_N_DATE_FUNC ) continue;
    m |= PAR_DATES_CALL;
    iTime = k==PAR_N_DATE_FUNC-1;      /* strftime(format, time, ...) */
    if( parCallArgs(aTok, nTok, i, aArg, 16, &nArg)<0 || nArg<=iTime ){
      m |= PAR_DATES_NOW;              /* no time value: 'now' */
      continue;
    }
    if( iTime && (aArg[1]-aArg[0]!=1 || (aTok[aArg[0]].eType!=PT_STRING
                                         && aTok[aArg[0]].eType!=PT_NUMBER)) ){
      m |= PAR_DATES_ZONE;             /* a format that is not a literal */
    }
    for(k=iTime+1; k<nArg; k++){
      const ParToken *t = &aTok[aArg[2*k]];
      if( aArg[2*k+1]-aArg[2*k]!=1 || t->eType!=PT_STRING ){
        m |= PAR_DATES_ZONE;           /* only string literals are known */
      }else if( (r = parTokString(zText, t, "localtime"))!=0
             || (r = parTokString(zText, t, "utc"))!=0 ){
        if( r<0 ) return -1;
        m |= PAR_DATES_ZONE;
      }
    }
    a = aArg[2*iTime];
    b = aArg[2*iTime+1];
    if( b-a==1 && (aTok[a].eType==PT_STRING || aTok[a].eType==PT_NUMBER
                   || parTokIs(zText, &aTok[a], "NULL")) ){
      if( (r = parTokString(zText, &aTok[a], "now"))<0 ) return -1;
      if( r ) m |= PAR_DATES_NOW;
    }else{
      /* An expression (a column, a parameter...): checked when it is
      ** par_timecheck(...) whole. */
      int nInner = 0, aInner[2];
      if( b-a>=3 && parTokNames(zText, &aTok[a], "par_timecheck") && aTok[a+1].eType==PT_LP
       && parCallArgs(aTok, nTok, a, aInner, 1, &nInner)==b-1 && nInner==1 ){
        m |= PAR_DATES_CHECKED;
      }else{
        m |= PAR_DATES_UNCHECKED;
        if( aOpen ){
          aOpen[a]++;
          aClose[b-1]++;
        }
      }
    }
  }
  return m;
}

/* The PAR_DATES_* bits of zText, or -1 when out of memory. */
static int parDatesOf(const char *zText){
  int nTok = 0, m;
  ParToken *aTok = parTokenize(zText, &nTok);
  if( aTok==0 ) return -1;
  m = parDatesScan(zText, aTok, nTok, 0, 0);
  sqlite3_free(aTok);
  return m;
}

/* zText (NULL: none) with par_timecheck() around each time value that
** needs it; NULL also when out of memory (*pbNoMem then set). */
static char *parDatesWrap(const char *zText, int *pbNoMem){
  int nTok = 0, k, iAt = 0;
  ParToken *aTok;
  int *aOpen;
  sqlite3_str *pStr;
  if( zText==0 ) return 0;
  aTok = parTokenize(zText, &nTok);
  aOpen = aTok ? sqlite3_malloc64(sizeof(int)*2*(nTok+1)) : 0;
  if( aOpen==0 || (memset(aOpen, 0, sizeof(int)*2*(nTok+1)),
                   parDatesScan(zText, aTok, nTok, aOpen, aOpen+nTok+1))<0 ){
    sqlite3_free(aTok);
    sqlite3_free(aOpen);
    *pbNoMem = 1;
    return 0;
  }
  pStr = sqlite3_str_new(0);
  for(k=0; k<nTok; k++){
    int nOpen = aOpen[k], nClose = aOpen[nTok+1+k];
    if( nOpen ){
      sqlite3_str_append(pStr, zText + iAt, aTok[k].i - iAt);
      while( nOpen-- ) sqlite3_str_appendall(pStr, "par_timecheck(");
      iAt = aTok[k].i;
    }
    if( nClose ){
      sqlite3_str_append(pStr, zText + iAt, aTok[k].i + aTok[k].n - iAt);
      while( nClose-- ) sqlite3_str_appendall(pStr, ")");
      iAt = aTok[k].i + aTok[k].n;
    }
  }
  sqlite3_str_appendall(pStr, zText + iAt);
  sqlite3_free(aTok);
  sqlite3_free(aOpen);
  if( sqlite3_str_errcode(pStr) ){
    sqlite3_free(sqlite3_str_finish(pStr));
    *pbNoMem = 1;
    return 0;
  }
  return sqlite3_str_finish(pStr);
}

/* A plan whose extraction runs with its time values checked. */
typedef struct ParDated {
  ParPlan plan;         /* the caller's, with the texts below in place */
  char *azOwn[4];       /* zExtract, zExtractCols, zExtractFrom and
                        ** zExtractWhere wrapped (owned), or NULL */
  int mDates;           /* PAR_DATES_* of plan.zExtract */
} ParDated;

static void parDatedClear(ParDated *d){
  int i;
  for(i=0; i<4; i++) sqlite3_free(d->azOwn[i]);
  memset(d, 0, sizeof(*d));
}

/* pPlan as *d: its extraction with par_timecheck() around each time value
** that needs it, where db plans the wrapped query as it plans the one
** written (else as written: its time values stay unchecked).  Returns
** SQLITE_OK or SQLITE_NOMEM. */
static int parDatedInit(sqlite3 *db, const ParPlan *pPlan, ParDated *d){
  int bNoMem = 0, i, m;
  char *zMine = 0, *zWrapped = 0;
  memset(d, 0, sizeof(*d));
  d->plan = *pPlan;
  if( pPlan->zExtract==0 ) return SQLITE_OK;
  d->mDates = parDatesOf(pPlan->zExtract);
  if( d->mDates<0 ) return SQLITE_NOMEM;
  if( (d->mDates & PAR_DATES_UNCHECKED)==0 || (d->mDates & PAR_DATES_NOW)!=0 ){
    return SQLITE_OK;
  }
  d->azOwn[0] = parDatesWrap(pPlan->zExtract, &bNoMem);
  d->azOwn[1] = parDatesWrap(pPlan->zExtractCols, &bNoMem);
  d->azOwn[2] = parDatesWrap(pPlan->zExtractFrom, &bNoMem);
  d->azOwn[3] = parDatesWrap(pPlan->zExtractWhere, &bNoMem);
  if( bNoMem || d->azOwn[0]==0 ){
    parDatedClear(d);
    return SQLITE_NOMEM;
  }
  /* The same plan (an index on an expression no longer matches a wrapped
  ** one; the order of the rows depends on the plan), and every time value
  ** checked now. */
  zMine = parQueryPlan(db, pPlan->zExtract);
  zWrapped = parQueryPlan(db, d->azOwn[0]);
  m = parDatesOf(d->azOwn[0]);
  if( m<0 ){
    bNoMem = 1;
  }else if( zMine && zWrapped && strcmp(zMine, zWrapped)==0
         && (m & PAR_DATES_UNCHECKED)==0 ){
    d->plan.zExtract = d->azOwn[0];
    if( d->azOwn[1] ) d->plan.zExtractCols = d->azOwn[1];
    if( d->azOwn[2] ) d->plan.zExtractFrom = d->azOwn[2];
    if( d->azOwn[3] ) d->plan.zExtractWhere = d->azOwn[3];
    d->mDates = m;
  }else{
    for(i=0; i<4; i++){
      sqlite3_free(d->azOwn[i]);
      d->azOwn[i] = 0;
    }
  }
  sqlite3_free(zMine);
  sqlite3_free(zWrapped);
  if( bNoMem ){
    parDatedClear(d);
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* Does some identifier of zText name a row that zList (a query of one
** parameter, ?1, the name) finds?  1 also when the query fails, or out
** of memory. */
static int parNamesListed(sqlite3 *db, const char *zText, const char *zList){
  sqlite3_stmt *pList = 0;
  int nTok = 0, i, bFound = 0;
  ParToken *aTok = parTokenize(zText, &nTok);
  if( aTok==0 ) return 1;
  if( sqlite3_prepare_v2(db, zList, -1, &pList, 0)!=SQLITE_OK ) bFound = 1;
  for(i=0; !bFound && i<nTok; i++){
    char *zName;
    if( aTok[i].eType!=PT_ID && aTok[i].eType!=PT_QID ) continue;
    zName = parDequote(zText + aTok[i].i, aTok[i].n);
    if( zName==0 ){ bFound = 1; break; }
    sqlite3_bind_text(pList, 1, zName, -1, SQLITE_TRANSIENT);
    if( sqlite3_step(pList)!=SQLITE_DONE ) bFound = 1;
    sqlite3_reset(pList);
    sqlite3_free(zName);
  }
  sqlite3_finalize(pList);
  sqlite3_free(aTok);
  return bFound;
}

/* Does any identifier of zText name a view, in any schema of db?  1 also
** when the list cannot be read, or out of memory. */
static int parNamesView(sqlite3 *db, const char *zText){
  return parNamesListed(db, zText, "SELECT 1 FROM pragma_table_list WHERE type='view' "
                                   "AND name=?1 COLLATE NOCASE");
}

/* Calls of built-in functions whose answer can change for the same rows
** (random(), counts of changes; timediff(), not a function of SQLite 3.40,
** as any call of that name), then the CURRENT_* keywords, which read the
** moment with parentheses or without.  What such a text reads must not be
** kept in the cache.  The date and time functions: parDatesScan. */
static const char *azVolatile[] = {
  "random", "randomblob", "changes", "total_changes", "last_insert_rowid", "timediff",
  "current_date", "current_time", "current_timestamp",
};
#define PAR_VOLATILE_KEYWORD 6    /* azVolatile[6..]: keywords too */

int parVolatileNames(const char *zText){
  int nTok = 0, i, k, bVolatile = 0;
  ParToken *aTok = parTokenize(zText, &nTok);
  if( aTok==0 ) return 1;
  for(i=0; !bVolatile && i<nTok; i++){
    int bCall = i+1<nTok && aTok[i+1].eType==PT_LP;
    char *zName;
    /* A call (a quoted name calls too), or a CURRENT_* keyword (a column
    ** may be named "date", or "current_date" quoted). */
    if( aTok[i].eType==PT_QID && !bCall ) continue;
    if( aTok[i].eType!=PT_ID && aTok[i].eType!=PT_QID ) continue;
    zName = parDequote(zText + aTok[i].i, aTok[i].n);
    if( zName==0 ){ bVolatile = 1; break; }
    for(k=0; k<(int)(sizeof(azVolatile)/sizeof(azVolatile[0])); k++){
      if( sqlite3_stricmp(zName, azVolatile[k])==0 && (bCall || k>=PAR_VOLATILE_KEYWORD) ){
        bVolatile = 1;
      }
    }
    sqlite3_free(zName);
  }
  if( !bVolatile ){
    int m = parDatesScan(zText, aTok, nTok, 0, 0);
    bVolatile = m<0 || (m & PAR_DATES_NOT_FIXED)!=0;
  }
  sqlite3_free(aTok);
  return bVolatile;
}

/* Is database zSchema of db on SQLite's default VFS? */
static int parDefaultVfs(sqlite3 *db, const char *zSchema, char **pzVfs){
  char *zVfs = 0;
  int bDefault;
  sqlite3_file_control(db, zSchema, SQLITE_FCNTL_VFSNAME, &zVfs);
  bDefault = zVfs && sqlite3_vfs_find(0) && strcmp(zVfs, sqlite3_vfs_find(0)->zName)==0;
  if( pzVfs ) *pzVfs = zVfs; else sqlite3_free(zVfs);
  return bDefault;
}

/* The extraction SQL over schema zSchema's table zTable (alias zAlias) for
** the rows whose key zKey (zAlias's rowid name, or a quoted column) is at
** least :par_lo and, unless bTail, zHiOp :par_hi. */
static char *parKeyRangeSql(const ParPlan *pPlan, const char *zSchema, const char *zTable,
                            const char *zAlias, const char *zKey, const char *zHiOp,
                            int bTail){
  char *zHi = bTail ? sqlite3_mprintf("")
                    : sqlite3_mprintf(" AND \"%w\".%s%s:par_hi", zAlias, zKey, zHiOp);
  char *z = zHi ? sqlite3_mprintf("SELECT %s FROM \"%w\".\"%w\" AS \"%w\" WHERE %s%s%s"
                                  "\"%w\".%s>=:par_lo%s",
                                  pPlan->zExtractCols, zSchema, zTable, zAlias,
                                  pPlan->zExtractWhere ? "(" : "",
                                  pPlan->zExtractWhere ? pPlan->zExtractWhere : "",
                                  pPlan->zExtractWhere ? ") AND " : "",
                                  zAlias, zKey, zHi) : 0;
  sqlite3_free(zHi);
  return z;
}

/* The extraction SQL over schema zSchema's table, for rowids between the
** parameters :par_lo and :par_hi (bTail: from :par_lo on). */
static char *parRangeSql(const ParPlan *pPlan, const char *zSchema, const char *zTable,
                         const char *zAlias, const char *zRowid, int bTail){
  return parKeyRangeSql(pPlan, zSchema, zTable, zAlias, zRowid, "<=", bTail);
}

/* The extraction SQL over schema zSchema's WITHOUT ROWID table, for the
** rows whose first primary-key column zPk is at least :par_lo and, unless
** bTail, less than :par_hi. */
static char *parPkRangeSql(const ParPlan *pPlan, const char *zSchema, const char *zTable,
                           const char *zAlias, const char *zPk, int bTail){
  char *zKey = sqlite3_mprintf("\"%w\"", zPk);
  char *z = zKey ? parKeyRangeSql(pPlan, zSchema, zTable, zAlias, zKey, "<", bTail) : 0;
  sqlite3_free(zKey);
  return z;
}

/* The first primary-key column of WITHOUT ROWID table zSchema.zTable when
** integer bounds on it cut the table into ranges of its own order: the
** key ascends, and the column's affinity is not TEXT (numbers then compare
** as numbers, and every text or blob value sorts after every number).
** NULL, with *pzWhy set, when not. */
static char *parPkColumn(sqlite3 *db, const char *zSchema, const char *zTable, char **pzWhy){
  char *zSql = sqlite3_mprintf(
      "SELECT x.name, x.desc, coalesce(c.type, '') FROM \"%w\".pragma_index_list(%Q) AS l, "
      "\"%w\".pragma_index_xinfo(l.name) AS x LEFT JOIN \"%w\".pragma_table_info(%Q) AS c "
      "ON c.name = x.name WHERE l.origin = 'pk' AND x.seqno = 0",
      zSchema, zTable, zSchema, zSchema, zTable);
  sqlite3_stmt *pStmt = 0;
  char *zPk = 0;
  *pzWhy = 0;
  if( zSql && sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zName = (const char*)sqlite3_column_text(pStmt, 0);
    const char *zType = (const char*)sqlite3_column_text(pStmt, 2);
    char *zUp = sqlite3_mprintf("%s", zType ? zType : "");
    char *z;
    for(z=zUp; z && *z; z++) if( *z>='a' && *z<='z' ) *z -= 'a' - 'A';
    if( zName==0 || zUp==0 ){
      *pzWhy = sqlite3_mprintf("out of memory");
    }else if( sqlite3_column_int(pStmt, 1) ){
      *pzWhy = sqlite3_mprintf("the primary key of %s descends", zTable);
    }else if( strstr(zUp, "INT")==0
           && (strstr(zUp, "CHAR") || strstr(zUp, "CLOB") || strstr(zUp, "TEXT")) ){
      *pzWhy = sqlite3_mprintf("the first primary-key column of %s has TEXT affinity",
                               zTable);
    }else{
      zPk = sqlite3_mprintf("%s", zName);
      if( zPk==0 ) *pzWhy = sqlite3_mprintf("out of memory");
    }
    sqlite3_free(zUp);
  }else{
    *pzWhy = sqlite3_mprintf("%s has no rowid and no primary key to cut it into ranges",
                             zTable);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return zPk;
}

/* Can pPlan's extraction be read in parallel on worker connections?  On
** SQLITE_OK either fills *pSrc or sets *pzWhy to the reason it cannot. */
/* The one database (its index) whose tables zSql reads, from its program:
** -1 when it reads several, none, a virtual table, or (bFuncs) calls a
** volatile built-in or an application's function (views' included:
** name(nArg) in P4 of the function opcodes).  Date and time functions
** pass when zSql names no view and its own calls are all fixed, their
** time values checked (no PAR_DATES_NOT_FIXED bit): the program does not
** tell which call an opcode is, nor its arguments. */
static int parProgramDb(sqlite3 *db, const char *zSql, int bFuncs){
  sqlite3_stmt *pEx = 0, *pFunc = 0;
  char *zEx = sqlite3_mprintf("EXPLAIN %s", zSql);
  int iDb = -1, bOk = 1, bDates = -1;   /* -1: not asked yet */
  if( zEx==0 || sqlite3_prepare_v2(db, zEx, -1, &pEx, 0)!=SQLITE_OK ) bOk = 0;
  while( bOk && sqlite3_step(pEx)==SQLITE_ROW ){
    const char *zOp = (const char*)sqlite3_column_text(pEx, 1);
    if( zOp==0 || strcmp(zOp, "VOpen")==0 ){
      bOk = 0;
    }else if( strcmp(zOp, "Transaction")==0 ){
      int i = sqlite3_column_int(pEx, 2);
      if( iDb>=0 && i!=iDb ) bOk = 0;
      iDb = i;
    }else if( bFuncs && (strcmp(zOp, "Function")==0 || strcmp(zOp, "PureFunc")==0
                         || strncmp(zOp, "Agg", 3)==0) ){
      const char *zP4 = (const char*)sqlite3_column_text(pEx, 5);
      int n = 0, k;
      while( zP4 && zP4[n] && zP4[n]!='(' ) n++;
      for(k=0; zP4 && k<(int)(sizeof(azVolatile)/sizeof(azVolatile[0])); k++){
        if( (int)strlen(azVolatile[k])==n && sqlite3_strnicmp(zP4, azVolatile[k], n)==0 ){
          bOk = 0;
        }
      }
      for(k=0; bOk && zP4 && k<PAR_N_DATE_FUNC; k++){
        if( (int)strlen(azDateFunc[k])==n && sqlite3_strnicmp(zP4, azDateFunc[k], n)==0 ){
          if( bDates<0 ){
            int m = parDatesOf(zSql);
            bDates = m>=0 && (m & PAR_DATES_NOT_FIXED)==0 && !parNamesView(db, zSql);
          }
          bOk = bDates;
        }
      }
      /* The application's, or the list cannot tell. */
      if( bOk && zP4 && n>0 && parAppFunc(db, &pFunc, zP4, n)!=0 ) bOk = 0;
    }
  }
  sqlite3_finalize(pFunc);
  sqlite3_finalize(pEx);
  sqlite3_free(zEx);
  return bOk ? iDb : -1;
}

/* Does any identifier of zText name a temp view?  A temp view reads
** main's tables without a transaction on temp: its program shows no read
** of temp, so redefining it changes no data version a cache entry could
** notice, and on a worker connection the name is something else (or
** nothing).  1 also when out of memory. */
static int parNamesTempView(sqlite3 *db, const char *zText){
  return parNamesListed(db, zText, "SELECT 1 FROM temp.sqlite_master WHERE type='view' "
                                   "AND name=?1 COLLATE NOCASE");
}

/* The extraction SQL of a join for rowids between :par_lo and :par_hi of
** its table named zAlias in the FROM clause (which stays as written: on a
** worker, the caller's main is main too). */
static char *parJoinRangeSql(const ParPlan *pPlan, const char *zAlias, const char *zRowid){
  return sqlite3_mprintf("SELECT %s FROM %s WHERE %s%s%s"
                         "\"%w\".%s>=:par_lo AND \"%w\".%s<=:par_hi",
                         pPlan->zExtractCols, pPlan->zExtractFrom,
                         pPlan->zExtractWhere ? "(" : "",
                         pPlan->zExtractWhere ? pPlan->zExtractWhere : "",
                         pPlan->zExtractWhere ? ") AND " : "",
                         zAlias, zRowid, zAlias, zRowid);
}

/* Is every line of query plan zPlan after the first a loop over a table
** or an index that exists before the statement runs ("SCAN x", "SEARCH x
** USING ...")?  Automatic indexes, Bloom filters, temporary b-trees and
** subqueries are built by each run: once per range in parallel. */
static int parPlanInnerLoops(const char *zPlan){
  const char *z = zPlan ? strchr(zPlan, '\n') : 0;
  /* Anywhere in the plan (a table named so only costs the parallel read). */
  if( z==0 || strstr(zPlan, "AUTOMATIC") || strstr(zPlan, "BLOOM") ) return 0;
  for(z++; *z; z = strchr(z, '\n') + 1){
    if( strncmp(z, "SCAN ", 5)!=0 && strncmp(z, "SEARCH ", 7)!=0 ) return 0;
  }
  return 1;
}

/* In FROM clause zFrom of a join (tokens aTok[0..nTok-1]), the table the
** plan names zName (its alias, else its name, "schema.name" when written
** so): *piSchema (-1: none), *piTable and *piRef (the alias, else the
** name: how SQL refers to it) get its tokens.  0 when not found. */
static int parJoinTable(const char *zFrom, const ParToken *aTok, int nTok, const char *zName,
                        int *piSchema, int *piTable, int *piRef){
  static const char *azNotAlias[] = {
    "ON", "USING", "JOIN", "INNER", "CROSS", "NATURAL", "LEFT", "RIGHT", "FULL",
    "OUTER", "INDEXED", "NOT", "WHERE",
  };
  int p, nDepth = 0;
#define ISNAME(k) ((k)<nTok && (aTok[k].eType==PT_ID || aTok[k].eType==PT_QID))
  for(p=0; p<nTok; p++){
    int iSchema = -1, iTable = p, q, iAlias = -1, k, bMatch;
    char *zRef;
    /* Tables follow the start, a comma or JOIN outside parentheses (not
    ** a comma of USING (a, b) or of a function's arguments). */
    if( p>0 && aTok[p-1].eType==PT_LP ) nDepth++;
    if( p>0 && aTok[p-1].eType==PT_RP ) nDepth--;
    if( nDepth!=0 ) continue;
    if( p>0 && aTok[p-1].eType!=PT_COMMA && !parTokIs(zFrom, &aTok[p-1], "JOIN") ) continue;
    if( !ISNAME(p) ) continue;
    if( p+2<nTok && aTok[p+1].eType==PT_DOT && ISNAME(p+2) ){
      iSchema = p;
      iTable = p+2;
    }
    q = iTable + 1;
    if( q<nTok && parTokIs(zFrom, &aTok[q], "AS") ){
      iAlias = q+1;
    }else if( ISNAME(q) ){
      iAlias = q;
      for(k=0; k<(int)(sizeof(azNotAlias)/sizeof(azNotAlias[0])); k++){
        if( parTokIs(zFrom, &aTok[q], azNotAlias[k]) ) iAlias = -1;
      }
    }
    if( iAlias>=0 && !ISNAME(iAlias) ) continue;
    k = iAlias>=0 ? iAlias : iTable;
    zRef = parDequote(zFrom + aTok[k].i, aTok[k].n);
    if( zRef && iAlias<0 && iSchema>=0 ){
      char *zSchema = parDequote(zFrom + aTok[iSchema].i, aTok[iSchema].n);
      char *zFull = zSchema ? sqlite3_mprintf("%s.%s", zSchema, zRef) : 0;
      sqlite3_free(zSchema);
      sqlite3_free(zRef);
      zRef = zFull;
    }
    bMatch = zRef && sqlite3_stricmp(zRef, zName)==0;
    sqlite3_free(zRef);
    if( bMatch ){
      *piSchema = iSchema;
      *piTable = iTable;
      *piRef = k;
      return 1;
    }
  }
#undef ISNAME
  return 0;
}

static int parCallerVouched(ParContext *pCtx, sqlite3 *db, const char *zSchema,
                            const char *zFile, unsigned *piMust);

/* The reason why a source is read serially, zWhy (made by sqlite3_mprintf
** or a *Why() helper), into *pzWhy: SQLITE_OK, or SQLITE_NOMEM when there
** was no memory to say why. */
static int parSerialWhy(char **pzWhy, char *zWhy){
  *pzWhy = zWhy;
  return zWhy ? SQLITE_OK : SQLITE_NOMEM;
}

/* The FROM clause zFrom of pPlan is a join (tokens aTok[0..nTok-1]): which
** table to cut into rowid ranges, each range joined on its worker?  The
** table of SQLite's outermost loop, if the loop is a SCAN in rowid order
** that leads no other loop.  Only inner joins of main's tables (as the
** caller's connection resolves their names: no temp table or temp view in
** the way, nothing attached, no virtual table): a worker has main's file
** as main, and nothing else.  Sets pSrc's bJoin, zTable and zSchema, and
** *pzAlias (how the SQL names the table), *pzPlan (SQLite's plan for the
** join through par_sink) and *pzSink (that SQL), which the caller frees
** whatever the result.  SQLITE_OK, with *pzWhy when it is read serially;
** or SQLITE_NOMEM. */
static int parSourceJoin(sqlite3 *db, const ParPlan *pPlan, const ParToken *aTok, int nTok,
                         ParSource *pSrc, char **pzAlias, char **pzPlan, char **pzSink,
                         char **pzWhy){
  const char *zFrom = pPlan->zExtractFrom;
  int iSchema = -1, iTable = -1, iRef = -1, i;
  const char *zEnd, *zUsing;
  char *zShown, *zPlan;
  pSrc->bJoin = 1;
  for(i=0; i<nTok; i++){
    if( parTokIs(zFrom, &aTok[i], "LEFT") || parTokIs(zFrom, &aTok[i], "RIGHT")
     || parTokIs(zFrom, &aTok[i], "FULL") || parTokIs(zFrom, &aTok[i], "OUTER") ){
      return parSerialWhy(pzWhy, sqlite3_mprintf("an outer join is read serially"));
    }
    if( parTokIs(zFrom, &aTok[i], "SELECT") || parTokIs(zFrom, &aTok[i], "VALUES") ){
      return parSerialWhy(pzWhy, sqlite3_mprintf("a subquery in FROM is read serially"));
    }
  }
  /* Functions of the application (in ON, in views) and volatile ones
  ** too: the workers would call SQLite's own, or another draw. */
  if( parProgramDb(db, pPlan->zExtract, 1)!=0 || parNamesTempView(db, zFrom) ){
    return parSerialWhy(pzWhy, sqlite3_mprintf(
        "the join reads tables outside main, a temp view or a virtual table, "
        "or calls a function of the application or a volatile one"));
  }
  if( (*pzWhy = parForeignNames(db, zFrom))!=0 ) return SQLITE_OK;
  *pzSink = parSinkSql(pPlan->zExtract, (int)strlen(pPlan->zExtract), pPlan->nExtractCol);
  if( *pzSink==0 ) return SQLITE_NOMEM;
  zPlan = *pzPlan = parQueryPlan(db, *pzSink);
  if( zPlan==0 ){
    return parSerialWhy(pzWhy, sqlite3_mprintf("its query plan cannot be read: %s",
                                               sqlite3_errmsg(db)));
  }
  zEnd = strchr(zPlan, '\n');
  zUsing = strstr(zPlan, " USING ");
  if( strncmp(zPlan, "SCAN ", 5)!=0 || zEnd==0 || (zUsing && zUsing<zEnd) ){
    return parSerialWhy(pzWhy, sqlite3_mprintf(
        "SQLite does not join from one table read in rowid order (its plan: %s)",
        parPlanLine(zPlan)));
  }
  zShown = sqlite3_mprintf("%.*s", (int)(zEnd - zPlan - 5), zPlan + 5);
  if( zShown==0 ) return SQLITE_NOMEM;
  {
    /* The name must lead no other loop (a view's own aliases, once
    ** flattened, could repeat it). */
    int nLoop = 0;
    const char *z;
    for(z=zPlan; *z; z = strchr(z, '\n') + 1){
      const char *zName = strncmp(z, "SCAN ", 5)==0 ? z+5
                        : strncmp(z, "SEARCH ", 7)==0 ? z+7 : 0;
      size_t n = strlen(zShown);
      if( zName && strncmp(zName, zShown, n)==0 && (zName[n]=='\n' || zName[n]==' ') ){
        nLoop++;
      }
    }
    if( nLoop!=1 || !parJoinTable(zFrom, aTok, nTok, zShown, &iSchema, &iTable, &iRef) ){
      sqlite3_free(zShown);
      return parSerialWhy(pzWhy, sqlite3_mprintf(
          "the join's first table is not found once in its FROM clause"));
    }
  }
  sqlite3_free(zShown);
  *pzAlias = parDequote(zFrom + aTok[iRef].i, aTok[iRef].n);
  pSrc->zTable = parDequote(zFrom + aTok[iTable].i, aTok[iTable].n);
  if( *pzAlias==0 || pSrc->zTable==0 ) return SQLITE_NOMEM;
  pSrc->zSchema = iSchema>=0 ? parDequote(zFrom + aTok[iSchema].i, aTok[iSchema].n)
                             : parResolveSchema(db, pSrc->zTable);
  if( pSrc->zSchema && sqlite3_stricmp(pSrc->zSchema, "main")!=0 ){
    return parSerialWhy(pzWhy, sqlite3_mprintf("the join reads tables outside main"));
  }
  return SQLITE_OK;
}

/* Which table does pPlan's extraction read?  Its FROM clause is
** [schema .] table [[AS] alias] and nothing more, or a join
** (parSourceJoin).  Sets pSrc's zTable and zSchema (NULL when the name
** resolves to nothing), *pzAlias and, for a join, *pzPlan and *pzSink
** (see parSourceJoin; the caller frees them whatever the result).
** SQLITE_OK, with *pzWhy when it is read serially; or SQLITE_NOMEM. */
static int parSourceFrom(sqlite3 *db, const ParPlan *pPlan, ParSource *pSrc,
                         char **pzAlias, char **pzPlan, char **pzSink, char **pzWhy){
  const char *zFrom = pPlan->zExtractFrom;
  ParToken *aTok;
  int nTok = 0, iName = 0, iAlias = -1, i, rc = SQLITE_OK;

  aTok = parTokenize(zFrom, &nTok);
  if( aTok==0 ) return SQLITE_NOMEM;
  nTok--;   /* the PT_EOF */
#define ISNAME(k) ((k)<nTok && (aTok[k].eType==PT_ID || aTok[k].eType==PT_QID))
  if( nTok>=3 && ISNAME(0) && aTok[1].eType==PT_DOT && ISNAME(2) ) iName = 2;
  i = iName + 1;
  if( i<nTok && parTokIs(zFrom, &aTok[i], "AS") ) i++;
  if( ISNAME(i) ){ iAlias = i; i++; }
  if( ISNAME(iName) && i==nTok ){
    pSrc->zTable = parDequote(zFrom + aTok[iName].i, aTok[iName].n);
    *pzAlias = iAlias>=0 ? parDequote(zFrom + aTok[iAlias].i, aTok[iAlias].n)
                         : sqlite3_mprintf("%s", pSrc->zTable);
    pSrc->zSchema = iName ? parDequote(zFrom + aTok[0].i, aTok[0].n)
                          : parResolveSchema(db, pSrc->zTable);
  }else{
    rc = parSourceJoin(db, pPlan, aTok, nTok, pSrc, pzAlias, pzPlan, pzSink, pzWhy);
  }
#undef ISNAME
  sqlite3_free(aTok);
  if( rc==SQLITE_OK && *pzWhy==0 && (pSrc->zTable==0 || *pzAlias==0) ) rc = SQLITE_NOMEM;
  return rc;
}

/* Can worker connections read pSrc's table as the caller's connection
** would?  It must be a table (not a view, nor in temp) of a database
** file on the default VFS; the caller's connection must have no
** uncommitted change there, nor a snapshot only it can see; and nothing
** the extraction names (functions, collations, settings of the
** connection) may differ on a new connection.  SQLITE_OK, with *pzWhy
** when it is read serially; or SQLITE_NOMEM. */
static int parSourceShared(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan,
                           ParSource *pSrc, char **pzWhy){
  if( pSrc->zSchema==0 || !parHasTable(db, pSrc->zSchema, pSrc->zTable) ){
    /* A view named with its schema (main.v) too: SQLite's plan shows its
    ** tables, not it, and its rows need not be its rowids' ranges. */
    return parSerialWhy(pzWhy, sqlite3_mprintf("%s is not a table", pSrc->zTable));
  }
  if( sqlite3_stricmp(pSrc->zSchema, "temp")==0 ){
    return parSerialWhy(pzWhy, sqlite3_mprintf(
        "%s is a temp table: only the caller's connection sees it", pSrc->zTable));
  }
  pSrc->zFile = sqlite3_db_filename(db, pSrc->zSchema);
  if( pSrc->zFile==0 || pSrc->zFile[0]==0 ){
    return parSerialWhy(pzWhy, sqlite3_mprintf(
        "%s is in an in-memory or temporary database", pSrc->zTable));
  }
  {
    char *zVfs = 0;
    if( !parDefaultVfs(db, pSrc->zSchema, &zVfs) ){
      *pzWhy = sqlite3_mprintf("the database %s uses the VFS %s, not the default one",
                               pSrc->zSchema, zVfs ? zVfs : "?");
    }
    sqlite3_free(zVfs);
    if( *pzWhy ) return SQLITE_OK;
  }
  /* Uncommitted writes are only on the caller's connection, and so is the
  ** snapshot of an explicit transaction, unless the moment noted vouches
  ** for it (parCallerVouched).  A read transaction in autocommit mode
  ** belongs to the statements running now (parCallerSnapshot). */
  switch( sqlite3_txn_state(db, pSrc->zSchema) ){
    case SQLITE_TXN_WRITE:
      return parSerialWhy(pzWhy, sqlite3_mprintf(
          "the connection has uncommitted changes to %s: only it sees them", pSrc->zSchema));
    case SQLITE_TXN_READ: {
      unsigned iMust;
      if( !sqlite3_get_autocommit(db)
       && !parCallerVouched(pCtx, db, pSrc->zSchema, pSrc->zFile, &iMust) ){
        if( sqlite3_stricmp(pSrc->zSchema, "main")==0 ){
          return parSerialWhy(pzWhy, sqlite3_mprintf(
              "the connection is inside a transaction on main, and a commit may "
              "have come before it began reading: only it sees its snapshot%s", ""));
        }
        return parSerialWhy(pzWhy, sqlite3_mprintf(
            "the connection is inside a transaction on %s (only main's snapshot "
            "can be shared): only it sees its snapshot", pSrc->zSchema));
      }
      break;
    }
  }
  if( parQueryInt(db, "PRAGMA reverse_unordered_selects", 0) ){
    return parSerialWhy(pzWhy, sqlite3_mprintf("reverse_unordered_selects is on"));
  }
  if( (*pzWhy = parConnectionWhy(db, pSrc->zSchema))!=0 ) return SQLITE_OK;
  *pzWhy = parForeignNames(db, pPlan->zExtractCols);
  if( *pzWhy==0 && pPlan->zExtractWhere ) *pzWhy = parForeignNames(db, pPlan->zExtractWhere);
  if( *pzWhy ) return SQLITE_OK;
  {
    int m = parCollReplaced(db), e;
    for(e=0; e<PAR_N_COLL && (m & (1<<e))==0; e++){}
    if( m ){
      return parSerialWhy(pzWhy, sqlite3_mprintf(
          "the application replaced the collation %s, which worker connections "
          "have as SQLite defines it", parCollName(e)));
    }
  }
  return SQLITE_OK;
}

/* Which name of the rowid cuts pSrc's table into ranges: one for which a
** range of rowids restricts SQLite's plan for the extraction to a range
** of the same order, "SEARCH t USING INTEGER PRIMARY KEY" (a join: the
** same loops inside its plan zPlan, so the ranges' rows one after the
** other are the rows of the whole join, in its order).  Sets pSrc's zRowid and zRangePlan, and for one table zTailPlan
** when a range open above keeps that plan too; zRowid stays NULL when no
** name does (or no memory was left). */
static void parSourceRowid(sqlite3 *db, const ParPlan *pPlan, ParSource *pSrc,
                           const char *zAlias, const char *zPlan){
  static const char *azRowid[] = { "rowid", "_rowid_", "oid" };
  int i;
  for(i=0; i<3 && pSrc->zRowid==0; i++){
    char *zRange = pSrc->bJoin ? parJoinRangeSql(pPlan, zAlias, azRowid[i])
                 : parRangeSql(pPlan, pSrc->zSchema, pSrc->zTable, zAlias, azRowid[i], 0);
    char *zRangeSink = zRange ? parSinkSql(zRange, (int)strlen(zRange), pPlan->nExtractCol) : 0;
    char *zRangePlan = zRangeSink ? parQueryPlan(db, zRangeSink) : 0;
    if( pSrc->bJoin ){
      int nShown = (int)(strchr(zPlan, '\n') - zPlan) - 5;   /* after "SCAN " */
      char *zWant = sqlite3_mprintf("SEARCH %.*s USING INTEGER PRIMARY KEY "
                                    "(rowid>? AND rowid<?)%s",
                                    nShown, zPlan + 5, strchr(zPlan, '\n'));
      if( zWant && zRangePlan && strcmp(zWant, zRangePlan)==0 ) pSrc->zRowid = azRowid[i];
      sqlite3_free(zWant);
    }else if( parPlanIs(zRangePlan, "SEARCH ", "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)", 0) ){
      pSrc->zRowid = azRowid[i];
    }
    if( pSrc->zRowid ){
      pSrc->zRangePlan = zRangePlan;
      zRangePlan = 0;
    }
    sqlite3_free(zRange);
    sqlite3_free(zRangeSink);
    sqlite3_free(zRangePlan);
  }
  if( pSrc->zRowid && !pSrc->bJoin ){
    /* From a rowid on, without an upper bound: SQLite then compares no
    ** rowid with the range's end at each row (about a tenth of the cost of
    ** reading a row). */
    char *zTail = parRangeSql(pPlan, pSrc->zSchema, pSrc->zTable, zAlias, pSrc->zRowid, 1);
    char *zTailSink = zTail ? parSinkSql(zTail, (int)strlen(zTail), pPlan->nExtractCol) : 0;
    char *zTailPlan = zTailSink ? parQueryPlan(db, zTailSink) : 0;
    if( parPlanIs(zTailPlan, "SEARCH ", "USING INTEGER PRIMARY KEY (rowid>?)", 0) ){
      pSrc->zTailPlan = zTailPlan;
      zTailPlan = 0;
    }
    sqlite3_free(zTail);
    sqlite3_free(zTailSink);
    sqlite3_free(zTailPlan);
  }
}

/* pSrc's table is WITHOUT ROWID: does a range of its first primary-key
** column restrict SQLite's scan to a range of the same order, "SEARCH t
** USING PRIMARY KEY", both closed and open above?  Sets pSrc's zPk,
** zRangePlan and zTailPlan.  SQLITE_OK, with *pzWhy when it is read
** serially; or SQLITE_NOMEM. */
static int parSourcePk(sqlite3 *db, const ParPlan *pPlan, ParSource *pSrc,
                       const char *zAlias, char **pzWhy){
  char *zPkWhy = 0, *zRange, *zRangeSink, *zRangePlan, *zTail, *zTailSink, *zTailPlan;
  char *zHas, *zTailHas;
  pSrc->zPk = parPkColumn(db, pSrc->zSchema, pSrc->zTable, &zPkWhy);
  if( pSrc->zPk==0 ) return parSerialWhy(pzWhy, zPkWhy);
  zRange = parPkRangeSql(pPlan, pSrc->zSchema, pSrc->zTable, zAlias, pSrc->zPk, 0);
  zTail = parPkRangeSql(pPlan, pSrc->zSchema, pSrc->zTable, zAlias, pSrc->zPk, 1);
  zRangeSink = zRange ? parSinkSql(zRange, (int)strlen(zRange), pPlan->nExtractCol) : 0;
  zTailSink = zTail ? parSinkSql(zTail, (int)strlen(zTail), pPlan->nExtractCol) : 0;
  zRangePlan = zRangeSink ? parQueryPlan(db, zRangeSink) : 0;
  zTailPlan = zTailSink ? parQueryPlan(db, zTailSink) : 0;
  zHas = sqlite3_mprintf("USING PRIMARY KEY (%s>? AND %s<?)", pSrc->zPk, pSrc->zPk);
  zTailHas = sqlite3_mprintf("USING PRIMARY KEY (%s>?)", pSrc->zPk);
  if( zHas==0 || zTailHas==0
   || !parPlanIs(zRangePlan, "SEARCH ", zHas, 0) || !parPlanIs(zTailPlan, "SEARCH ", zTailHas, 0) ){
    sqlite3_free(pSrc->zPk);
    pSrc->zPk = 0;
  }else{
    pSrc->zRangePlan = zRangePlan;
    pSrc->zTailPlan = zTailPlan;
    zRangePlan = zTailPlan = 0;
  }
  sqlite3_free(zRange);
  sqlite3_free(zTail);
  sqlite3_free(zRangeSink);
  sqlite3_free(zTailSink);
  sqlite3_free(zRangePlan);
  sqlite3_free(zTailPlan);
  sqlite3_free(zHas);
  sqlite3_free(zTailHas);
  if( pSrc->zPk==0 ){
    return parSerialWhy(pzWhy, sqlite3_mprintf(
        "a range of its primary key does not restrict SQLite's scan of %s", pSrc->zTable));
  }
  return SQLITE_OK;
}

/* Can pSrc's table be cut into ranges whose rows, one range after the
** other, are the extraction's rows in its order?  The query must read
** the table in rowid order (a join: from it, through tables and indexes
** that exist before it runs), and a range of rowids (parSourceRowid) or
** of a WITHOUT ROWID table's first key column (parSourcePk) must keep
** that plan.  *pzPlan and *pzSink: SQLite's plan for the extraction and
** its SQL, a join's from parSourceJoin, else made here (the caller frees
** them whatever the result).  SQLITE_OK, with *pzWhy when it is read
** serially; or SQLITE_NOMEM. */
static int parSourceRanges(sqlite3 *db, const ParPlan *pPlan, ParSource *pSrc,
                           const char *zAlias, char **pzPlan, char **pzSink, char **pzWhy){
  if( pSrc->bJoin ){
    if( !parPlanInnerLoops(*pzPlan) ){
      return parSerialWhy(pzWhy, sqlite3_mprintf(
          "SQLite's plan for the join builds something at each run (%s)",
          parPlanLine(*pzPlan)));
    }
  }else{
    *pzSink = parSinkSql(pPlan->zExtract, (int)strlen(pPlan->zExtract), pPlan->nExtractCol);
    *pzPlan = *pzSink ? parQueryPlan(db, *pzSink) : 0;
    if( !parPlanIs(*pzPlan, "SCAN ", 0, " USING ") ){
      return parSerialWhy(pzWhy, sqlite3_mprintf(
          "SQLite does not read %s in rowid order alone (its plan: %s)", pSrc->zTable,
          *pzPlan ? parPlanLine(*pzPlan) : "?"));
    }
  }
  parSourceRowid(db, pPlan, pSrc, zAlias, *pzPlan);
  if( pSrc->zRowid==0 && !pSrc->bJoin
   && sqlite3_table_column_metadata(db, pSrc->zSchema, pSrc->zTable,
                                    "rowid", 0, 0, 0, 0, 0)!=SQLITE_OK ){
    int rc = parSourcePk(db, pPlan, pSrc, zAlias, pzWhy);
    if( rc || *pzWhy ) return rc;
  }
  if( pSrc->zRowid==0 && pSrc->zPk==0 ){
    return parSerialWhy(pzWhy, sqlite3_mprintf(
        pSrc->bJoin ? "a range of the rowids of %s does not keep SQLite's plan for the join"
                    : "%s has no rowid to cut it into ranges", pSrc->zTable));
  }
  return SQLITE_OK;
}

/* What the workers run and what the cache knows the rows by: pSrc's
** worker SQL (the file is "main" there) for a range and for a range open
** above, its cache key and base, and the file's journal mode and the
** caller's LIKE, on which both depend.  SQLITE_OK or SQLITE_NOMEM. */
static int parSourceWorker(sqlite3 *db, const ParPlan *pPlan, ParSource *pSrc,
                           const char *zAlias){
  {
    char *zJm = sqlite3_mprintf("PRAGMA \"%w\".journal_mode", pSrc->zSchema);
    sqlite3_stmt *pJm = 0;
    pSrc->bWal = 0;
    if( zJm && sqlite3_prepare_v2(db, zJm, -1, &pJm, 0)==SQLITE_OK
     && sqlite3_step(pJm)==SQLITE_ROW ){
      pSrc->bWal = sqlite3_stricmp((const char*)sqlite3_column_text(pJm, 0), "wal")==0;
    }
    sqlite3_finalize(pJm);
    sqlite3_free(zJm);
  }
  pSrc->bLikeCs = parQueryInt(db, "SELECT 'a' LIKE 'A'", 1)==0;
  if( pSrc->zPk ){
    pSrc->zWorkerSql = parPkRangeSql(pPlan, "main", pSrc->zTable, zAlias, pSrc->zPk, 0);
    pSrc->zWorkerTailSql = parPkRangeSql(pPlan, "main", pSrc->zTable, zAlias, pSrc->zPk, 1);
    if( pSrc->zWorkerTailSql==0 ){
      sqlite3_free(pSrc->zWorkerSql);
      pSrc->zWorkerSql = 0;
    }
  }else if( pSrc->bJoin ){
    pSrc->zWorkerSql = parJoinRangeSql(pPlan, zAlias, pSrc->zRowid);
  }else{
    pSrc->zWorkerSql = parRangeSql(pPlan, "main", pSrc->zTable, zAlias, pSrc->zRowid, 0);
    if( pSrc->zWorkerSql && pSrc->zTailPlan ){
      pSrc->zWorkerTailSql = parRangeSql(pPlan, "main", pSrc->zTable, zAlias, pSrc->zRowid, 1);
      if( pSrc->zWorkerTailSql==0 ) return SQLITE_NOMEM;
      pSrc->bAll = pPlan->zExtractWhere==0;
    }
  }
  if( pSrc->zWorkerSql ){
    /* The base of a join: its whole FROM clause, and its plan (the order
    ** of a join's rows depends on it, and the plan on the columns read:
    ** an entry serves fewer columns only in the same order). */
    /* The values bound to the SELECT's parameters are part of both. */
    const char *zFrom = pPlan->zExtractFrom;
    char *zParams = parParamsKey(pPlan->pParams);
    if( zParams==0 ) return SQLITE_NOMEM;
    pSrc->zKey = sqlite3_mprintf("%s\n%d\n%s%s", pSrc->zFile, pSrc->bLikeCs, pSrc->zWorkerSql,
                                 zParams);
    pSrc->zBase = pSrc->bJoin
        ? sqlite3_mprintf("%s\n%d\njoin\n%s\n%s\n%d\n%s%s", pSrc->zFile, pSrc->bLikeCs,
                          zFrom, pSrc->zRangePlan, pPlan->zExtractWhere!=0,
                          pPlan->zExtractWhere ? pPlan->zExtractWhere : "", zParams)
        : sqlite3_mprintf("%s\n%d\n%s\n%s\n%d\n%s%s", pSrc->zFile, pSrc->bLikeCs,
                          pSrc->zTable, zAlias, pPlan->zExtractWhere!=0,
                          pPlan->zExtractWhere ? pPlan->zExtractWhere : "", zParams);
    sqlite3_free(zParams);
  }
  if( pSrc->zWorkerSql==0 || pSrc->zKey==0 || pSrc->zBase==0 ) return SQLITE_NOMEM;
  return SQLITE_OK;
}

/* Can pPlan's extraction be read in parallel, and how?  Fills pSrc and
** returns SQLITE_OK; or returns SQLITE_OK with *pzWhy, the reason it is
** read serially (pSrc cleared); or SQLITE_NOMEM.  The steps, each of
** which can send it to a serial read: the settings and the query's
** moment, the table read (parSourceFrom), whether workers can share it
** (parSourceShared), its ranges (parSourceRanges), then the workers' SQL
** and the cache key (parSourceWorker). */
static int parSourceResolve(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan,
                            ParSource *pSrc, char **pzWhy){
  char *zAlias = 0, *zWhy = 0, *zPlan = 0, *zSink = 0;
  int rc = SQLITE_OK;

  memset(pSrc, 0, sizeof(*pSrc));
  pSrc->pParams = pPlan->pParams;
  *pzWhy = 0;
#define WHY(...) do{ rc = parSerialWhy(&zWhy, sqlite3_mprintf(__VA_ARGS__)); goto done; }while(0)
  if( !pCtx->bParExtract ) WHY("parallel_extract is off");
  if( pCtx->nThread<=1 ) WHY("one thread (see par_config('threads'))");
  if( pPlan->zExtractFrom==0 ) WHY("the query has no extraction");
  {
    /* One moment for the whole read, as SQLite's one statement has. */
    int m = parDatesOf(pPlan->zExtract);
    if( m<0 ){ rc = SQLITE_NOMEM; goto done; }
    if( m & PAR_DATES_NOW ){
      WHY("it calls a date and time function that reads the moment ('now', or no time "
          "value): each worker would read its own");
    }
    if( m & PAR_DATES_UNCHECKED ){
      WHY("the time values of its date and time functions cannot be checked for 'now' "
          "(par_timecheck() around them changes SQLite's plan, or is not allowed)");
    }
  }
#undef WHY
  rc = parSourceFrom(db, pPlan, pSrc, &zAlias, &zPlan, &zSink, &zWhy);
  if( rc==SQLITE_OK && zWhy==0 ) rc = parSourceShared(pCtx, db, pPlan, pSrc, &zWhy);
  if( rc==SQLITE_OK && zWhy==0 ){
    rc = parSourceRanges(db, pPlan, pSrc, zAlias, &zPlan, &zSink, &zWhy);
  }
  if( rc==SQLITE_OK && zWhy==0 ) rc = parSourceWorker(db, pPlan, pSrc, zAlias);

done:
  sqlite3_free(zAlias);
  sqlite3_free(zPlan);
  sqlite3_free(zSink);
  if( rc || zWhy ){
    parSourceClear(pSrc);
    *pzWhy = zWhy;
  }
  return rc;
}

/* Can what a serial read of pPlan's extraction returns be kept in the
** cache, and found there again?  It must read tables of one database file
** (on the default VFS; no virtual table, nothing in temp), call nothing
** that can answer differently for the same rows, and the caller must
** have no uncommitted change there nor a transaction nothing vouches for
** inside BEGIN (as for parallel reads).  Keeping it also needs a ParStamp
** (parExtractStampPools).  The key is
** the extraction SQL itself (row order included: only the same SQL is
** served).  Fills pSrc (zSchema, zTable: the FROM clause, zFile, zKey,
** zBase) and returns 1; 0 when it cannot be cached. */
static int parSerialSource(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan,
                           ParSource *pSrc){
  char *zWhy;
  int iDb, eTxn;
  unsigned iMust;

  memset(pSrc, 0, sizeof(*pSrc));
  if( parCacheBudgetMb()<=0 || pPlan->zExtract==0 || pPlan->zExtractFrom==0 ) return 0;
  /* Application collations (functions are checked in the program below);
  ** a replaced built-in one could be replaced again otherwise. */
  if( (zWhy = parForeignNames(db, pPlan->zExtract))!=0 ){
    sqlite3_free(zWhy);
    return 0;
  }
  if( parCollReplaced(db) ) return 0;
  /* One database file, nothing volatile, no temp view. */
  iDb = parProgramDb(db, pPlan->zExtract, 1);
  if( iDb<0 || iDb==1 || parNamesTempView(db, pPlan->zExtract) ) return 0;
  if( sqlite3_db_name(db, iDb) ) pSrc->zSchema = sqlite3_mprintf("%s", sqlite3_db_name(db, iDb));
  if( pSrc->zSchema==0 ) return 0;
  if( (zWhy = parConnectionWhy(db, pSrc->zSchema))!=0 ){
    sqlite3_free(zWhy);
    parSourceClear(pSrc);
    return 0;
  }
  pSrc->zFile = sqlite3_db_filename(db, pSrc->zSchema);
  eTxn = sqlite3_txn_state(db, pSrc->zSchema);
  if( pSrc->zFile==0 || pSrc->zFile[0]==0 || !parDefaultVfs(db, pSrc->zSchema, 0)
   || eTxn==SQLITE_TXN_WRITE
   || (eTxn==SQLITE_TXN_READ && !sqlite3_get_autocommit(db)
       && !parCallerVouched(pCtx, db, pSrc->zSchema, pSrc->zFile, &iMust)) ){
    parSourceClear(pSrc);
    return 0;
  }
  pSrc->zTable = sqlite3_mprintf("(%s)", pPlan->zExtractFrom);
  pSrc->bLikeCs = parQueryInt(db, "SELECT 'a' LIKE 'A'", 1)==0;
  {
    char *zParams = parParamsKey(pPlan->pParams);
    pSrc->zKey = zParams ? sqlite3_mprintf("%s\n%d\n%d\nserial\n%s%s", pSrc->zFile,
                               pSrc->bLikeCs,
                               (int)parQueryInt(db, "PRAGMA reverse_unordered_selects", 0),
                               pPlan->zExtract, zParams) : 0;
    sqlite3_free(zParams);
  }
  pSrc->zBase = pSrc->zKey ? sqlite3_mprintf("%s", pSrc->zKey) : 0;
  if( pSrc->zTable==0 || pSrc->zKey==0 || pSrc->zBase==0 ){
    parSourceClear(pSrc);
    return 0;
  }
  return 1;
}

/* ---- the process's trackers ------------------------------------------------ */

static void parCacheDrop(ParCache *c, ParCacheEntry *e);

/* Drop the entries of tracker t, and close its connection: they go
** together, since another connection numbers the versions anew.  Under
** the mutex. */
static void parTrackReset(ParTrack *t){
  ParCacheEntry *e, *eNext;
  for(e=parShared.cache.pFirst; e; e=eNext){
    eNext = e->pNext;
    if( e->pTrack==t ) parCacheDrop(&parShared.cache, e);
  }
  sqlite3_close_v2(t->pDb);
  t->pDb = 0;
}

/* A user reference to the tracker of zFile, made if there is none; NULL
** when out of memory.  Takes the mutex. */
static ParTrack *parTrackAcquire(const char *zFile){
  ParTrack *t;
  pthread_mutex_lock(&parShared.mutex);
  for(t=parShared.pTrack; t && strcmp(t->zFile, zFile)!=0; t=t->pNext){}
  if( t==0 && (t = sqlite3_malloc(sizeof(*t)))!=0 ){
    memset(t, 0, sizeof(*t));
    if( (t->zFile = sqlite3_mprintf("%s", zFile))==0 ){
      sqlite3_free(t);
      t = 0;
    }else{
      t->pNext = parShared.pTrack;
      parShared.pTrack = t;
    }
  }
  if( t ) t->nUser++;
  pthread_mutex_unlock(&parShared.mutex);
  return t;
}

/* Drop a user reference to t (NULL: none); the last one drops its entries
** (no connection of the process reads the file any more) and frees it.
** Takes the mutex. */
static void parTrackRelease(ParTrack *t){
  ParTrack **pp;
  if( t==0 ) return;
  pthread_mutex_lock(&parShared.mutex);
  if( --t->nUser==0 ){
    parTrackReset(t);
    for(pp=&parShared.pTrack; *pp!=t; pp=&(*pp)->pNext){}
    *pp = t->pNext;
    sqlite3_free(t->zFile);
    sqlite3_free(t);
  }
  pthread_mutex_unlock(&parShared.mutex);
}

/* The data version of t's file now, as its connection sees it once a read
** brings it up to date: 1 with *pv, or 0 when it cannot read (busy, say).
** A file moved or replaced since the connection opened it drops every
** entry of t (and 0): the connection opened next reads the file now at
** the path.  Under the mutex. */
static int parTrackVersion(ParTrack *t, unsigned *pv){
  int bMoved = 0;
  if( t->pDb==0 ){
    int rc = sqlite3_open_v2(t->zFile, &t->pDb, SQLITE_OPEN_READONLY|SQLITE_OPEN_NOMUTEX
                             |SQLITE_OPEN_EXRESCODE, 0);
    if( rc ){
      sqlite3_close_v2(t->pDb);
      t->pDb = 0;
      return 0;
    }
    /* Other threads wait for the mutex meanwhile: not long. */
    sqlite3_busy_timeout(t->pDb, 100);
  }
  if( sqlite3_file_control(t->pDb, "main", SQLITE_FCNTL_HAS_MOVED, &bMoved)!=SQLITE_OK
   || bMoved ){
    parTrackReset(t);
    return 0;
  }
  if( parExec(t->pDb, "PRAGMA schema_version")!=SQLITE_OK ) return 0;
  *pv = 0;
  sqlite3_file_control(t->pDb, "main", SQLITE_FCNTL_DATA_VERSION, pv);
  return 1;
}

/* ---- worker connections ---------------------------------------------------- */

static void parPoolFree(ParPool *p){
  int i;
  if( p==0 ) return;
  parTrackRelease(p->pTrack);
  for(i=0; i<p->nConn; i++) sqlite3_close_v2(p->aConn[i]);
  sqlite3_close_v2(p->pGate);
  sqlite3_close_v2(p->pCheck);
  sqlite3_free(p->zCheckSchema);
  sqlite3_free(p->aConn);
  sqlite3_free(p->zFile);
  for(i=0; i<PAR_DENSE_MAX; i++) sqlite3_free(p->aDense[i].zTable);
  sqlite3_free(p);
}

/* Has the file any connection of p has open been moved or replaced since
** (another file renamed over it, say, and attached again by the caller)?
** Its connections would read the old one. */
static int parPoolMoved(ParPool *p){
  int i, bMoved = 0;
  for(i=0; i<p->nConn && !bMoved; i++){
    sqlite3_file_control(p->aConn[i], "main", SQLITE_FCNTL_HAS_MOVED, &bMoved);
  }
  if( p->pGate && !bMoved ){
    sqlite3_file_control(p->pGate, "main", SQLITE_FCNTL_HAS_MOVED, &bMoved);
  }
  if( p->pCheck && !bMoved ){
    sqlite3_file_control(p->pCheck, p->zCheckSchema, SQLITE_FCNTL_HAS_MOVED, &bMoved);
  }
  return bMoved;
}

/* The pool of pCtx on zFile, or NULL. */
static ParPool *parPoolFind(ParContext *pCtx, const char *zFile){
  ParPool *p;
  for(p=pCtx->pPool; p && strcmp(p->zFile, zFile)!=0; p=p->pNext){}
  return p;
}

/* Close pool pDrop of pCtx (NULL: nothing).  The cache entries of its
** file go with the last pool on it in the process (parTrackRelease). */
static void parPoolDrop(ParContext *pCtx, ParPool *pDrop){
  ParPool **pp;
  for(pp=&pCtx->pPool; *pp && *pp!=pDrop; pp=&(*pp)->pNext){}
  if( *pp ){
    *pp = pDrop->pNext;
    parPoolFree(pDrop);
  }
}

/* How many worker connections a parallel read uses: the threads setting,
** but no more than the cores (more would only wait for a core, each
** holding two file descriptors of the process). */
static int parReadThreads(const ParContext *pCtx){
  int n = pCtx->nThread < px_ncores() ? pCtx->nThread : px_ncores();
  return n>1 ? n : 1;
}

void parExtractTrim(ParContext *pCtx){
  ParPool *p;
  int nKeep = parReadThreads(pCtx);
  for(p=pCtx->pPool; p; p=p->pNext){
    while( p->nConn>nKeep ) sqlite3_close_v2(p->aConn[--p->nConn]);
  }
}

/* The pool of pCtx on zFile with at least nConn connections (and the gate
** when bGate), opened as needed; NULL with *pzWhy set when they cannot be
** opened (or out of memory).  A connection keeps pools on PAR_STAMP_MAX
** files at most (the least recently used is closed), so that scans of
** views over different databases, one after the other, find their
** workers, and their cache entries, still there. */
static ParPool *parPoolGet(ParContext *pCtx, const char *zFile, int nConn, int bGate,
                           char **pzWhy){
  ParPool *p = parPoolFind(pCtx, zFile);
  const int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  int rc = SQLITE_OK;
  if( p && parPoolMoved(p) ){
    parPoolDrop(pCtx, p);
    p = 0;
  }
  if( p && p!=pCtx->pPool ){
    /* To the front. */
    ParPool *q;
    for(q=pCtx->pPool; q->pNext!=p; q=q->pNext){}
    q->pNext = p->pNext;
    p->pNext = pCtx->pPool;
    pCtx->pPool = p;
  }
  if( p==0 ){
    ParPool *q;
    int n = 1;
    p = sqlite3_malloc(sizeof(*p));
    if( p==0 ) return 0;
    memset(p, 0, sizeof(*p));
    p->zFile = sqlite3_mprintf("%s", zFile);
    if( p->zFile==0 ){ sqlite3_free(p); return 0; }
    p->iGen = ++pCtx->iPoolGen;
    p->pTrack = parTrackAcquire(zFile);
    p->pNext = pCtx->pPool;
    pCtx->pPool = p;
    for(q=p; q->pNext; q=q->pNext){
      if( ++n>PAR_STAMP_MAX ){
        parPoolDrop(pCtx, q->pNext);
        break;
      }
    }
  }
  if( p->nConn<nConn ){
    sqlite3 **aNew = sqlite3_realloc64(p->aConn, sizeof(sqlite3*)*nConn);
    if( aNew==0 ) return 0;
    p->aConn = aNew;
    while( p->nConn<nConn && rc==SQLITE_OK ){
      sqlite3 *pDb = 0;
      rc = sqlite3_open_v2(zFile, &pDb, SQLITE_OPEN_READONLY|flags, 0);
      if( rc==SQLITE_OK ) rc = parBatchRegister(pDb);
      if( rc==SQLITE_OK ) rc = parTimeCheckRegister(pDb);
      if( rc==SQLITE_OK ) sqlite3_busy_timeout(pDb, 200);
      if( rc ){
        *pzWhy = sqlite3_mprintf("a worker connection cannot open %s: %s", zFile,
                                 pDb ? sqlite3_errmsg(pDb) : sqlite3_errstr(rc));
        sqlite3_close_v2(pDb);
        return 0;
      }
      p->aConn[p->nConn++] = pDb;
    }
  }
  if( bGate && p->pGate==0 ){
    rc = sqlite3_open_v2(zFile, &p->pGate, SQLITE_OPEN_READWRITE|flags, 0);
    if( rc ){
      *pzWhy = sqlite3_mprintf("cannot hold the write lock of %s to begin one snapshot: %s",
                               zFile, p->pGate ? sqlite3_errmsg(p->pGate) : sqlite3_errstr(rc));
      sqlite3_close_v2(p->pGate);
      p->pGate = 0;
      return 0;
    }
    sqlite3_busy_timeout(p->pGate, 250);
  }
  return p;
}

/* End the read transactions of the first n connections. */
static void parSnapshotEnd(ParPool *p, int n){
  int i;
  for(i=0; i<n; i++){
    if( !sqlite3_get_autocommit(p->aConn[i]) ) parExec(p->aConn[i], "ROLLBACK");
  }
}

/* Begin one read transaction on each of the first n connections, all on
** the same committed snapshot (see the header, 2).  On failure ends what
** it began and sets *pzWhy. */
static int parSnapshotBegin(ParPool *p, int n, int bWal, char **pzWhy){
  int i, rc = SQLITE_OK;
  if( bWal && parExec(p->pGate, "BEGIN IMMEDIATE")!=SQLITE_OK ){
    *pzWhy = sqlite3_mprintf("another connection holds the write lock, so one "
                             "snapshot for all workers cannot be ensured");
    return SQLITE_BUSY;
  }
  for(i=0; i<n && rc==SQLITE_OK; i++){
    /* Reading the schema cookie starts the read transaction. */
    rc = parExec(p->aConn[i], "BEGIN; PRAGMA schema_version");
  }
  if( bWal ) parExec(p->pGate, "ROLLBACK");
  if( rc ){
    *pzWhy = sqlite3_mprintf("a worker connection cannot begin reading: %s",
                             sqlite3_errmsg(p->aConn[i-1]));
    parSnapshotEnd(p, i);
  }
  return rc;
}

/* The data version of connection pDb's main database. */
static unsigned parDataVersion(sqlite3 *pDb){
  unsigned v = 0;
  sqlite3_file_control(pDb, "main", SQLITE_FCNTL_DATA_VERSION, &v);
  return v;
}

/* The file's data version now, as pool p's first connection sees it once a
** read brings it up to date: 1 with *pv, or 0 when it cannot read. */
static int parPoolVersion(ParPool *p, unsigned *pv){
  if( p==0 || p->nConn==0 || parExec(p->aConn[0], "PRAGMA schema_version")!=SQLITE_OK ) return 0;
  *pv = parDataVersion(p->aConn[0]);
  return 1;
}

/* The slot of table zTable in p->aDense, or -1. */
static int parDenseFind(ParPool *p, const char *zTable){
  int i;
  for(i=0; i<PAR_DENSE_MAX; i++){
    if( p->aDense[i].zTable && sqlite3_stricmp(p->aDense[i].zTable, zTable)==0 ) return i;
  }
  return -1;
}

/* Are the rowids of zTable known to be iMin..iMax, every one, at data
** version iVersion? */
static int parDenseKnown(ParPool *p, const char *zTable, unsigned iVersion,
                         sqlite3_int64 iMin, sqlite3_int64 iMax){
  int i = parDenseFind(p, zTable);
  return i>=0 && p->aDense[i].iVersion==iVersion
      && p->aDense[i].iMin==iMin && p->aDense[i].iMax==iMax;
}

/* Record what a read of every row of zTable at data version iVersion found:
** nRow rows with rowids iMin..iMax.  Only when they are all there. */
static void parDenseRecord(ParPool *p, const char *zTable, unsigned iVersion,
                           sqlite3_int64 iMin, sqlite3_int64 iMax, sqlite3_int64 nRow){
  int i = parDenseFind(p, zTable);
  if( iMax<iMin || (sqlite3_uint64)iMax - (sqlite3_uint64)iMin != (sqlite3_uint64)nRow - 1 ){
    if( i>=0 ){
      sqlite3_free(p->aDense[i].zTable);
      p->aDense[i].zTable = 0;
    }
    return;
  }
  if( i<0 ){
    char *z = sqlite3_mprintf("%s", zTable);
    if( z==0 ) return;
    i = p->iDense;
    p->iDense = (p->iDense + 1) % PAR_DENSE_MAX;
    sqlite3_free(p->aDense[i].zTable);
    p->aDense[i].zTable = z;
  }
  p->aDense[i].iVersion = iVersion;
  p->aDense[i].iMin = iMin;
  p->aDense[i].iMax = iMax;
}

/* ---- the caller's snapshot -------------------------------------------------
**
** A statement reads the snapshot of its connection's read transaction,
** which began when the first running statement read the database (in
** autocommit mode: a moment ago for a statement alone, but earlier when
** another statement of the caller's is left open, stepped and not reset),
** or, inside an explicit transaction, at the transaction's first read.
** It is older than the latest commit, which workers and the cache's stamps
** see, once another connection commits.  SQLite has no call to compare
** snapshots (no SQLITE_ENABLE_SNAPSHOT), so at the start of a view's scan
** with no transaction of the caller's on main, the data versions of the
** caller's main and of the pool's first connection are noted together,
** with no commit in between (parExtractSync; its read of main begins the
** caller's read transaction, which lasts for the statement, or for the
** explicit transaction).  A read transaction of the caller's whose data
** version is still the one noted began with no commit since; if the
** workers' snapshot (or a cache entry) has the worker version noted, it
** is the caller's (parCallerVouched).  When nothing vouches for the
** caller's snapshot, its connection reads, unless in autocommit mode its
** statement is the only one running (parCallerSnapshot). */

/* The data version of the caller's database zSchema: of the snapshot its
** read transaction holds, or else of its last one. */
static unsigned parCallerVersion(sqlite3 *db, const char *zSchema){
  unsigned v = 0;
  sqlite3_file_control(db, zSchema, SQLITE_FCNTL_DATA_VERSION, &v);
  return v;
}

/* Note the moment (see above) for pool p on main's file; the caller has no
** transaction on main. */
static void parExtractSync(sqlite3 *db, ParPool *p){
  unsigned v1, v2, c;
  p->bSync = 0;
  if( !parPoolVersion(p, &v1) ) return;
  /* A read of the caller's main brings its version up to date. */
  if( parQueryInt(db, "PRAGMA main.schema_version", -1)<0 ) return;
  c = parCallerVersion(db, "main");
  p->bUnsync = 1;               /* until the pair below is noted */
  p->iUnsyncCaller = c;
  if( !parPoolVersion(p, &v2) || v1!=v2 ) return;   /* a commit came in between */
  p->bUnsync = 0;
  p->bSync = 1;
  p->iSyncCaller = c;
  p->iSyncWorker = v1;
}

/* Does the moment noted vouch for the caller's read transaction on
** zSchema (file zFile)?  Only main's, whose data version is still the one
** noted: no commit came since, and *piMust is the version workers and
** cache entries must have to show what it shows. */
static int parCallerVouched(ParContext *pCtx, sqlite3 *db, const char *zSchema,
                            const char *zFile, unsigned *piMust){
  ParPool *p;
  if( sqlite3_stricmp(zSchema, "main")!=0 || zFile==0 ) return 0;
  if( (p = parPoolFind(pCtx, zFile))==0 || !p->bSync ) return 0;
  if( parCallerVersion(db, "main")!=p->iSyncCaller ) return 0;
  *piMust = p->iSyncWorker;
  return 1;
}

/* May what workers read of the caller's zSchema (file zFile), or what the
** cache keeps of it, stand for what the caller's connection sees now?
** 1 when the caller has no transaction on it.  When the moment noted
** vouches for the caller's read transaction: 1 with *pbMust set, if the
** workers' snapshot or the cache entry has data version *piMust.  Else
** 0 inside an explicit transaction; and in autocommit mode, 1 with this
** statement alone running: like a new statement, it began reading a
** moment ago (a commit since is not seen, see the README), 0 with others
** (only the caller sees its snapshot). */
static int parCallerSnapshot(ParContext *pCtx, sqlite3 *db, const char *zSchema,
                             const char *zFile, int *pbMust, unsigned *piMust){
  ParPool *p;
  *pbMust = 0;
  switch( sqlite3_txn_state(db, zSchema) ){
    case SQLITE_TXN_NONE: return 1;
    case SQLITE_TXN_READ: break;
    default:              return 0;
  }
  if( parCallerVouched(pCtx, db, zSchema, zFile, piMust) ){
    *pbMust = 1;
    return 1;
  }
  if( !sqlite3_get_autocommit(db) ) return 0;
  if( sqlite3_stricmp(zSchema, "main")==0 && (p = parPoolFind(pCtx, zFile))!=0
   && p->bUnsync && parCallerVersion(db, "main")==p->iUnsyncCaller ){
    return 0;
  }
  return parAppStatementsBusy(pCtx, db)<=1;
}

/* Why a snapshot of the caller's that the moment noted vouches for is
** not the workers' (or a cache entry's). */
static char *parCommitCameWhy(const char *zSchema){
  return sqlite3_mprintf("a commit came after your connection began reading %s: only it "
                         "sees that snapshot", zSchema);
}

/* Why the caller's snapshot of zSchema keeps the workers out. */
static char *parCallerSnapshotWhy(const char *zSchema){
  return sqlite3_mprintf("your connection is already reading %s (another statement of "
                         "it, or this one), and a commit may have come since that read "
                         "began: only your connection sees that snapshot", zSchema);
}

/* ---- parallel reading ------------------------------------------------------ */

typedef struct ParRun ParRun;
typedef struct ParWorker {
  ParRun *pRun;
  sqlite3 *pDb;           /* owned by the pool, used by this worker only */
  sqlite3_stmt *pSink;    /* the worker SQL through par_sink */
  sqlite3_stmt *pTail;    /* WITHOUT ROWID: the last range's, or NULL */
  sqlite3_stmt *pMeta;    /* the worker SQL itself: column names */
  pthread_t tid;
  int bStarted;
} ParWorker;

struct ParRun {
  int nChunk;
  sqlite3_int64 *aLo, *aHi;     /* rowid range of each chunk (WITHOUT
                                ** ROWID: key range, aLo[0] unused: the
                                ** first range has no lower bound, the
                                ** last no upper bound) */
  int bPk;                      /* key ranges of a WITHOUT ROWID table */
  int bCount;                   /* the rowids are dense (ParDense): each
                                ** range is the first aHi-aLo+1 rows from
                                ** aLo on */
  ParWindow *pWin;              /* rowid ranges: chunk i's rows go to rows
                                ** aLo[i]-aLo[0].. of these arrays, or NULL */
  ParBatch **apChunk;           /* what each chunk read */
  int iNext;                    /* next chunk to take (atomic) */
  int bStop;                    /* stop taking chunks (atomic) */
  sqlite3_int64 mxMem;
  const ParParams *pParams;     /* values of the SELECT's parameters (read
                                ** by every worker at once) */
  sqlite3_int64 nShared;        /* bytes of all chunks (atomic) */
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int nDone;                    /* workers finished (under mutex) */
  int rc;                       /* first error (under mutex) */
  char *zErr;
};

static void *parWorkerMain(void *pArg){
  ParWorker *w = (ParWorker*)pArg;
  ParRun *r = w->pRun;
  for(;;){
    int i = __atomic_fetch_add(&r->iNext, 1, __ATOMIC_RELAXED), rc, bTail;
    char *zErr = 0;
    sqlite3_stmt *pStmt;
    if( i>=r->nChunk || __atomic_load_n(&r->bStop, __ATOMIC_RELAXED) ) break;
    /* No upper bound to check for the last range, nor for any range
    ** taken by row count. */
    bTail = w->pTail && (r->bCount || i==r->nChunk-1);
    pStmt = bTail ? w->pTail : w->pSink;
    if( r->bPk && i==0 ){
      /* Below every number; no text or blob is below the first bound. */
      sqlite3_bind_double(pStmt, sqlite3_bind_parameter_index(pStmt, ":par_lo"), -INFINITY);
    }else{
      sqlite3_bind_int64(pStmt, sqlite3_bind_parameter_index(pStmt, ":par_lo"), r->aLo[i]);
    }
    if( !bTail ){
      sqlite3_bind_int64(pStmt, sqlite3_bind_parameter_index(pStmt, ":par_hi"), r->aHi[i]);
    }
    /* The view's parameters (parBatchFromSink clears every binding). */
    parParamsBind(pStmt, r->pParams);
    rc = parBatchFromSink(w->pDb, pStmt, w->pMeta, r->mxMem, &r->nShared, r->pWin,
                          r->pWin ? r->aLo[i] - r->aLo[0] : 0,
                          (r->pWin || r->bCount) ? r->aHi[i] - r->aLo[i] + 1 : 0, r->bCount,
                          &r->apChunk[i], &zErr);
    if( rc ){
      __atomic_store_n(&r->bStop, 1, __ATOMIC_RELAXED);
      pthread_mutex_lock(&r->mutex);
      if( r->rc==SQLITE_OK || r->rc==SQLITE_INTERRUPT ){
        sqlite3_free(r->zErr);
        r->rc = rc;
        r->zErr = zErr;
        zErr = 0;
      }
      pthread_mutex_unlock(&r->mutex);
      sqlite3_free(zErr);
      break;
    }
  }
  pthread_mutex_lock(&r->mutex);
  r->nDone++;
  pthread_cond_signal(&r->cond);
  pthread_mutex_unlock(&r->mutex);
  return 0;
}

/* Prepare worker w's statements for pSrc on its connection, with the
** caller's LIKE: pMeta (the worker SQL, for its columns), pSink (the same
** through par_sink) and pTail (the range open above, when pSrc has one).
** SQLITE_OK, or sqlite3_prepare_v2's first error (SQLITE_NOMEM when no
** memory was left for the SQL); the caller finalizes them either way. */
static int parWorkerPrepare(ParWorker *w, const ParSource *pSrc){
  sqlite3 *pDb = w->pDb;
  char *zSink;
  int rc;
  parExec(pDb, pSrc->bLikeCs ? "PRAGMA case_sensitive_like=1"
                             : "PRAGMA case_sensitive_like=0");
  rc = sqlite3_prepare_v2(pDb, pSrc->zWorkerSql, -1, &w->pMeta, 0);
  if( rc==SQLITE_OK ){
    zSink = parSinkSql(pSrc->zWorkerSql, (int)strlen(pSrc->zWorkerSql),
                       sqlite3_column_count(w->pMeta));
    rc = zSink ? sqlite3_prepare_v2(pDb, zSink, -1, &w->pSink, 0) : SQLITE_NOMEM;
    sqlite3_free(zSink);
  }
  if( rc==SQLITE_OK && pSrc->zWorkerTailSql ){
    zSink = parSinkSql(pSrc->zWorkerTailSql, (int)strlen(pSrc->zWorkerTailSql),
                       sqlite3_column_count(w->pMeta));
    rc = zSink ? sqlite3_prepare_v2(pDb, zSink, -1, &w->pTail, 0) : SQLITE_NOMEM;
    sqlite3_free(zSink);
  }
  return rc;
}

/* Does worker w plan its statements as the caller's connection does
** (pSrc's zRangePlan and zTailPlan)?  Its settings, such as
** automatic_index, and the statistics it loaded can differ, and the
** order of the rows depends on the plan.  1 if so; else 0 with *pzWhy
** (NULL when no memory was left to say why). */
static int parWorkerPlansAlike(const ParWorker *w, const ParSource *pSrc, char **pzWhy){
  const char *azSql[2];
  const char *azWant[2];
  int k;
  azSql[0] = sqlite3_sql(w->pSink);
  azWant[0] = pSrc->zRangePlan;
  azSql[1] = w->pTail ? sqlite3_sql(w->pTail) : 0;
  azWant[1] = pSrc->zTailPlan;
  for(k=0; k<2; k++){
    char *zGot;
    if( azSql[k]==0 ) continue;
    zGot = parQueryPlan(w->pDb, azSql[k]);
    if( zGot==0 || azWant[k]==0 || strcmp(zGot, azWant[k])!=0 ){
      *pzWhy = sqlite3_mprintf("a worker connection plans the extraction otherwise "
                               "(its plan: %s)", zGot ? parPlanLine(zGot)
                                                      : sqlite3_errmsg(w->pDb));
      sqlite3_free(zGot);
      return 0;
    }
    sqlite3_free(zGot);
  }
  return 1;
}

/* The span of pSrc's keys, read on pDb inside the workers' snapshot:
** *piMin and *piMax get the least and the greatest rowid (a WITHOUT ROWID
** table: the least key and the greatest number among the keys, text and
** blobs sorting after numbers, as integers around them), and stay as
** they are when the table is empty or the statements fail.  *pzWhy when
** the keys are not numbers. */
static void parKeySpan(sqlite3 *pDb, const ParSource *pSrc, sqlite3_int64 *piMin,
                       sqlite3_int64 *piMax, char **pzWhy){
  char *zMin, *zMax;
  sqlite3_stmt *pMin = 0, *pMax = 0;
  /* Two statements: SQLite finds a lone min() or max() at one end of the
  ** b-tree, but scans the whole table for both at once. */
  if( pSrc->zPk ){
    zMin = sqlite3_mprintf("SELECT min(\"%w\") FROM main.\"%w\"", pSrc->zPk, pSrc->zTable);
    zMax = sqlite3_mprintf("SELECT max(\"%w\") FROM main.\"%w\" WHERE \"%w\"<=%lld",
                           pSrc->zPk, pSrc->zTable, pSrc->zPk, (sqlite3_int64)INT64_MAX);
  }else{
    zMin = sqlite3_mprintf("SELECT min(%s) FROM main.\"%w\"", pSrc->zRowid, pSrc->zTable);
    zMax = sqlite3_mprintf("SELECT max(%s) FROM main.\"%w\"", pSrc->zRowid, pSrc->zTable);
  }
  if( zMin && zMax
   && sqlite3_prepare_v2(pDb, zMin, -1, &pMin, 0)==SQLITE_OK
   && sqlite3_prepare_v2(pDb, zMax, -1, &pMax, 0)==SQLITE_OK
   && sqlite3_step(pMin)==SQLITE_ROW && sqlite3_step(pMax)==SQLITE_ROW ){
    int eMin = sqlite3_column_type(pMin, 0), eMax = sqlite3_column_type(pMax, 0);
    if( eMin==SQLITE_INTEGER && eMax==SQLITE_INTEGER ){
      *piMin = sqlite3_column_int64(pMin, 0);
      *piMax = sqlite3_column_int64(pMax, 0);
    }else if( pSrc->zPk && (eMin==SQLITE_INTEGER || eMin==SQLITE_FLOAT)
           && (eMax==SQLITE_INTEGER || eMax==SQLITE_FLOAT) ){
      double lo = floor(sqlite3_column_double(pMin, 0));
      double hi = ceil(sqlite3_column_double(pMax, 0));
      *piMin = lo<=-9.2e18 ? INT64_MIN : lo>=9.2e18 ? INT64_MAX : (sqlite3_int64)lo;
      *piMax = hi<=-9.2e18 ? INT64_MIN : hi>=9.2e18 ? INT64_MAX : (sqlite3_int64)hi;
      if( eMin==SQLITE_INTEGER ) *piMin = sqlite3_column_int64(pMin, 0);
      if( eMax==SQLITE_INTEGER ) *piMax = sqlite3_column_int64(pMax, 0);
    }else if( pSrc->zPk && eMin!=SQLITE_NULL ){
      *pzWhy = sqlite3_mprintf("the keys of %s are not numbers: no ranges to cut",
                               pSrc->zTable);
    }
  }
  sqlite3_finalize(pMin);
  sqlite3_finalize(pMax);
  sqlite3_free(zMin);
  sqlite3_free(zMax);
}

/* Add the time since *pt to phase e of pCtx's last parallel read, and
** start the next phase now. */
static void parReadPhase(ParContext *pCtx, int e, double *pt){
  double t = parNowMs();
  pCtx->aReadMs[e] += t - *pt;
  *pt = t;
}

/* Keys a range spans at least, while there are 2 ranges per thread. */
#define PAR_RANGE_MIN_ROWS 32768

/* Does zSql hold a subquery SQLite evaluates once per run of the
** statement (an uncorrelated SCALAR or LIST SUBQUERY of its plan)? */
static int parHasOnceSubquery(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt = 0;
  char *zEqp = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", zSql);
  int bOnce = 0;
  if( zEqp && sqlite3_prepare_v2(db, zEqp, -1, &pStmt, 0)==SQLITE_OK ){
    while( sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zD = (const char*)sqlite3_column_text(pStmt, 3);
      if( zD && (strstr(zD, "SCALAR SUBQUERY") || strstr(zD, "LIST SUBQUERY"))
       && strstr(zD, "CORRELATED")==0 ){
        bOnce = 1;
      }
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zEqp);
  return bOnce;
}

/* Cut the keys iMin..iMax into pRun's ranges (bPk: key ranges of a
** WITHOUT ROWID table, else rowid ranges): 8 per thread (fewer, not
** below 2, when that makes them shorter than PAR_RANGE_MIN_ROWS), equal in span,
** so that workers taking them as they finish even out skew in the data;
** iMax<iMin (an empty table): one empty range, which still names the
** columns.  Sets nChunk and bPk, and allocates aLo, aHi and apChunk (the
** caller frees them, on failure too).  SQLITE_OK or SQLITE_NOMEM. */
static int parRunRanges(ParRun *pRun, int nThread, int bPk, sqlite3_int64 iMin,
                        sqlite3_int64 iMax, int bOnce){
  int i;
  pRun->nChunk = iMax>=iMin ? nThread*8 : 1;
  if( iMax>=iMin && bOnce ){
    /* A subquery SQLite runs once per statement runs once per range:
    ** one range per thread. */
    pRun->nChunk = nThread;
  }else if( iMax>=iMin ){
    /* Ranges of at least PAR_RANGE_MIN_ROWS keys while there are 2 per
    ** thread: each piece builds dictionaries of its own text, which the
    ** join merges, so many small pieces cost more than they even out
    ** (Q3 at 64 threads: 512 pieces of 20K rows took twice the merging
    ** of 256 pieces at 32). */
    sqlite3_uint64 nSpan = (sqlite3_uint64)iMax - (sqlite3_uint64)iMin;
    sqlite3_uint64 nMax = nSpan/PAR_RANGE_MIN_ROWS;
    if( nMax<(sqlite3_uint64)pRun->nChunk ){
      pRun->nChunk = nMax>(sqlite3_uint64)nThread*2 ? (int)nMax : nThread*2;
    }
  }
  pRun->aLo = sqlite3_malloc64(sizeof(sqlite3_int64)*pRun->nChunk);
  pRun->aHi = sqlite3_malloc64(sizeof(sqlite3_int64)*pRun->nChunk);
  pRun->apChunk = sqlite3_malloc64(sizeof(ParBatch*)*pRun->nChunk);
  if( pRun->apChunk ) memset(pRun->apChunk, 0, sizeof(ParBatch*)*pRun->nChunk);
  if( pRun->aLo==0 || pRun->aHi==0 || pRun->apChunk==0 ) return SQLITE_NOMEM;
  pRun->bPk = bPk;
  if( iMax<iMin ){
    pRun->aLo[0] = 1;
    pRun->aHi[0] = 0;
  }else if( pRun->bPk ){
    /* Key ranges [aLo[i], aHi[i]) = [aLo[i], aLo[i+1]): the bounds never
    ** decrease, so the ranges cover every key once, in key order. */
    unsigned __int128 span = (unsigned __int128)((sqlite3_uint64)iMax - (sqlite3_uint64)iMin) + 1;
    for(i=0; i<pRun->nChunk; i++){
      pRun->aLo[i] = (sqlite3_int64)((sqlite3_uint64)iMin
                     + (sqlite3_uint64)(span * (unsigned)i / (unsigned)pRun->nChunk));
    }
    for(i=0; i+1<pRun->nChunk; i++) pRun->aHi[i] = pRun->aLo[i+1];
    pRun->aHi[pRun->nChunk-1] = iMax;
  }else{
    /* Rowid ranges [aLo[i], aHi[i]]; a span shorter than the ranges
    ** would leave some empty, which are left out (aLo[i+1]-1 would
    ** wrap below INT64_MIN). */
    unsigned __int128 span = (unsigned __int128)((sqlite3_uint64)iMax - (sqlite3_uint64)iMin) + 1;
    int nChunk = pRun->nChunk, k = 0;
    for(i=0; i<nChunk; i++){
      sqlite3_int64 lo = (sqlite3_int64)((sqlite3_uint64)iMin
                         + (sqlite3_uint64)(span * (unsigned)i / (unsigned)nChunk));
      if( k>0 && lo==pRun->aLo[k-1] ) continue;
      if( k>0 ) pRun->aHi[k-1] = lo - 1;
      pRun->aLo[k++] = lo;
    }
    pRun->nChunk = k;
    pRun->aHi[k-1] = iMax;
  }
  return SQLITE_OK;
}

/* Read pRun's ranges with the workers aW[0..nThread-1], each on a thread
** of its own (the calling thread reads every range when no thread can be
** had), and return when they are done.  Meanwhile the calling thread
** checks pProbe (sqlite3_interrupt() on the caller's connection, its
** progress handler) every 5 ms and on a stop interrupts the workers.
** What was read, or the first error, is in pRun's apChunk, rc and zErr. */
static void parRunWorkers(ParRun *pRun, ParWorker *aW, int nThread, sqlite3_stmt *pProbe){
  int i, nStarted = 0;
  pthread_mutex_init(&pRun->mutex, 0);
  pthread_cond_init(&pRun->cond, 0);
  for(i=0; i<nThread; i++){
    if( pthread_create(&aW[i].tid, 0, parWorkerMain, &aW[i])==0 ){
      aW[i].bStarted = 1;
      nStarted++;
    }
  }
  if( nStarted==0 ){
    /* No thread to be had: the calling thread reads every range. */
    aW[0].bStarted = 0;
    parWorkerMain(&aW[0]);
  }else{
    pthread_mutex_lock(&pRun->mutex);
    while( pRun->nDone<nStarted ){
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 5*1000*1000;
      if( ts.tv_nsec>=1000000000 ){ ts.tv_sec++; ts.tv_nsec -= 1000000000; }
      pthread_cond_timedwait(&pRun->cond, &pRun->mutex, &ts);
      if( pRun->nDone<nStarted && !__atomic_load_n(&pRun->bStop, __ATOMIC_RELAXED) ){
        pthread_mutex_unlock(&pRun->mutex);
        if( parProbeStop(pProbe) ){
          __atomic_store_n(&pRun->bStop, 1, __ATOMIC_RELAXED);
          for(i=0; i<nThread; i++) sqlite3_interrupt(aW[i].pDb);
          pthread_mutex_lock(&pRun->mutex);
          if( pRun->rc==SQLITE_OK ) pRun->rc = SQLITE_INTERRUPT;
        }else{
          pthread_mutex_lock(&pRun->mutex);
        }
      }
    }
    pthread_mutex_unlock(&pRun->mutex);
    for(i=0; i<nThread; i++) if( aW[i].bStarted ) pthread_join(aW[i].tid, 0);
  }
  pthread_mutex_destroy(&pRun->mutex);
  pthread_cond_destroy(&pRun->cond);
}

/* Read pSrc with nThread workers of pool p inside one snapshot (with bMust:
** only if its data version is iMust, see parCallerSnapshot).  Returns
** SQLITE_OK with *ppBatch, *piVersion and *pbCounted (the ranges were taken
** by row count: see ParDense), SQLITE_OK with *pzWhy set when it must be
** read serially instead (and *pbStale set when that is because a worker
** plans it otherwise than the caller), or an error with *pzErr.  The
** steps: the workers' statements (parWorkerPrepare, parWorkerPlansAlike),
** the snapshot, the span of the keys in it (parKeySpan), the ranges
** (parRunRanges), the read (parRunWorkers), then the pieces joined. */
static int parReadParallel(ParContext *pCtx, sqlite3 *db, ParPool *p, const ParSource *pSrc,
                           int nThread, int bMust, unsigned iMust, ParBatch **ppBatch,
                           unsigned *piVersion, int *pbCounted, int *pbStale, char **pzWhy,
                           char **pzErr){
  ParWorker *aW = 0;
  ParRun run;
  sqlite3_stmt *pProbe = 0;
  sqlite3_int64 iMin = 0, iMax = -1;
  int rc, i, bSnapshot = 0;
  double t = parNowMs();

  memset(&run, 0, sizeof(run));
  /* A commit since the caller's snapshot: known before anything is
  ** prepared (and checked again once the workers hold theirs). */
  if( bMust && parPoolVersion(p, piVersion) && *piVersion!=iMust ){
    *pzWhy = parCommitCameWhy(pSrc->zSchema);
    return *pzWhy ? SQLITE_OK : SQLITE_NOMEM;
  }
  /* The probe for interrupts and the progress handler (parext.h):
  ** preparing it fails if an interrupt came already. */
  rc = parProbePrepare(db, &pProbe);
  if( rc ){
    *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    goto done;
  }
  aW = sqlite3_malloc64(sizeof(ParWorker)*nThread);
  if( aW==0 ){ rc = SQLITE_NOMEM; goto done; }
  memset(aW, 0, sizeof(ParWorker)*nThread);

  /* Statements first: a worker that cannot prepare them reads nothing.
  ** One worker after another (about 0.1 ms each): side by side they took
  ** longer (45 ms for 64 workers on the 64-core device, against 5 ms
  ** serially: SQLite's prepares share its global mutexes). */
  for(i=0; i<nThread; i++){
    aW[i].pRun = &run;
    aW[i].pDb = p->aConn[i];
    rc = parWorkerPrepare(&aW[i], pSrc);
    if( rc==SQLITE_NOMEM ) goto done;
    if( rc ){
      *pzWhy = sqlite3_mprintf("the extraction does not prepare on a worker "
                               "connection: %s", sqlite3_errmsg(aW[i].pDb));
      rc = SQLITE_OK;
      goto done;
    }
    if( !parWorkerPlansAlike(&aW[i], pSrc, pzWhy) ){
      *pbStale = 1;
      goto done;
    }
  }

  pCtx->nReadWorker = nThread;
  parReadPhase(pCtx, PAR_READ_PREPARE, &t);
  rc = parSnapshotBegin(p, nThread, pSrc->bWal, pzWhy);
  if( rc ){ rc = *pzWhy ? SQLITE_OK : SQLITE_NOMEM; goto done; }
  bSnapshot = 1;
  *piVersion = parDataVersion(p->aConn[0]);
  if( bMust && *piVersion!=iMust ){
    *pzWhy = parCommitCameWhy(pSrc->zSchema);
    goto done;
  }
  parKeySpan(p->aConn[0], pSrc, &iMin, &iMax, pzWhy);
  if( *pzWhy ) goto done;
  /* Below min_rows rowids the caller reads faster alone (the kernels'
  ** rule too: parThreadsFor). */
  if( iMax>=iMin
   && (sqlite3_uint64)iMax - (sqlite3_uint64)iMin + 1 < (sqlite3_uint64)pCtx->nMinRow ){
    *pzWhy = sqlite3_mprintf("fewer than min_rows (%lld) rows", pCtx->nMinRow);
    goto done;
  }

  rc = parRunRanges(&run, nThread, pSrc->zPk!=0, iMin, iMax,
                    parHasOnceSubquery(p->aConn[0], pSrc->zWorkerSql));
  if( rc ) goto done;
  run.bCount = pSrc->bAll && parDenseKnown(p, pSrc->zTable, *piVersion, iMin, iMax);
  run.mxMem = parMemLimit(pCtx);
  run.pParams = pSrc->pParams;
  /* A range of rowids holds at most as many rows as it spans (a join's
  ** can hold more: no windows then): the chunks write straight into
  ** arrays of the whole span, side by side (batch.c, windows), so joining
  ** them moves nothing when the rowids are dense.
  ** Only while the span is small against the memory limit: the arrays
  ** are counted whole, rows a WHERE drops included (never touched, those
  ** pages take no memory). */
  if( !run.bPk && !pSrc->bJoin && iMax>=iMin ){
    sqlite3_uint64 nSpan = (sqlite3_uint64)iMax - (sqlite3_uint64)iMin;   /* less one */
    sqlite3_uint64 nCol = (sqlite3_uint64)sqlite3_column_count(aW[0].pMeta);
    if( nSpan++ < ((sqlite3_uint64)1 << 40)
     && (run.mxMem==0 || nSpan <= (sqlite3_uint64)run.mxMem/(4*13*nCol)) ){
      run.pWin = parWindowNew((int)nCol, (sqlite3_int64)nSpan);
      if( run.pWin==0 ){ rc = SQLITE_NOMEM; goto done; }
    }
  }
  parReadPhase(pCtx, PAR_READ_SNAPSHOT, &t);
  parRunWorkers(&run, aW, nThread, pProbe);
  parReadPhase(pCtx, PAR_READ_RANGES, &t);

  rc = run.rc;
  if( rc==SQLITE_INTERRUPT ){
    sqlite3_free(run.zErr);
    run.zErr = 0;
    *pzErr = sqlite3_mprintf("interrupted");
  }else if( rc ){
    *pzErr = run.zErr;
    run.zErr = 0;
  }else{
    rc = parBatchConcat(run.apChunk, run.nChunk, run.mxMem, nThread, run.pWin, ppBatch,
                        pzErr);
    if( rc==SQLITE_OK && pSrc->bAll && !run.bCount ){
      parDenseRecord(p, pSrc->zTable, *piVersion, iMin, iMax, (*ppBatch)->nRow);
    }
    *pbCounted = run.bCount;
    parReadPhase(pCtx, PAR_READ_CONCAT, &t);
  }

done:
  if( bSnapshot ) parSnapshotEnd(p, nThread);
  for(i=0; aW && i<nThread; i++){
    sqlite3_finalize(aW[i].pSink);
    sqlite3_finalize(aW[i].pTail);
    sqlite3_finalize(aW[i].pMeta);
  }
  for(i=0; run.apChunk && i<run.nChunk; i++) parBatchFree(run.apChunk[i]);
  parWindowFree(run.pWin);
  sqlite3_free(run.apChunk);
  sqlite3_free(run.aLo);
  sqlite3_free(run.aHi);
  sqlite3_free(run.zErr);
  sqlite3_finalize(pProbe);
  sqlite3_free(aW);
  parReadPhase(pCtx, PAR_READ_END, &t);
  return rc;
}

/* ---- the cache ------------------------------------------------------------- */

static void parCacheUnlink(ParCache *c, ParCacheEntry *e){
  if( e->pPrev ) e->pPrev->pNext = e->pNext; else c->pFirst = e->pNext;
  if( e->pNext ) e->pNext->pPrev = e->pPrev; else c->pLast = e->pPrev;
  e->pPrev = e->pNext = 0;
}

static void parCacheLinkFirst(ParCache *c, ParCacheEntry *e){
  e->pPrev = 0;
  e->pNext = c->pFirst;
  if( c->pFirst ) c->pFirst->pPrev = e; else c->pLast = e;
  c->pFirst = e;
}

static void parCacheEntryFree(ParCacheEntry *e){
  int i;
  parBatchFree(e->pBatch);
  sqlite3_free(e->zKey);
  sqlite3_free(e->zSource);
  sqlite3_free(e->zCols);
  sqlite3_free(e->zBase);
  for(i=0; i<e->nExpr; i++) sqlite3_free(e->azExpr[i]);
  sqlite3_free(e->azExpr);
  sqlite3_free(e);
}

static void parCacheDrop(ParCache *c, ParCacheEntry *e){
  parCacheUnlink(c, e);
  c->nByte -= e->pBatch->nMem;
  c->nEntry--;
  parCacheEntryFree(e);
}

/* Drop least recently used entries until the cache holds at most nMax
** bytes. */
static void parCacheTrim(ParCache *c, sqlite3_int64 nMax){
  while( c->pLast && c->nByte>nMax ) parCacheDrop(c, c->pLast);
}

/* The budget in bytes.  Under the mutex. */
static sqlite3_int64 parCacheMaxBytes(void){
  return parShared.mxCacheMb>0 ? parShared.mxCacheMb*1024*1024 : 0;
}

static ParCacheEntry *parCacheFind(ParCache *c, const char *zKey){
  ParCacheEntry *e;
  for(e=c->pFirst; e; e=e->pNext){
    if( strcmp(e->zKey, zKey)==0 ) return e;
  }
  return 0;
}

/* The data version of tracker t and of pool p's first connection at one
** moment, with no commit in between: t's version read before and after
** p's is the same.  Both connections on the file now at the path (moved
** is checked after the reads).  1 with *pvTrack and *pvPool, else 0.
** Under the mutex. */
static int parTrackPair(ParTrack *t, ParPool *p, unsigned *pvTrack, unsigned *pvPool){
  unsigned v1, v2, v3;
  if( !parTrackVersion(t, &v1) || !parPoolVersion(p, pvPool) || !parTrackVersion(t, &v2)
   || v1!=v2 ){
    return 0;
  }
  /* The pool's file, then the tracker's, still the one at the path. */
  if( parPoolMoved(p) || !parTrackVersion(t, &v3) || v3!=v1 ) return 0;
  *pvTrack = v1;
  return 1;
}

/* Keep *ppBatch, which holds the rows of pool p's file at data version
** iVersion of p's first connection, under pSrc's key (replacing a stale
** entry) if that is still what the file holds: the entry is stamped with
** the tracker's version of the same moment.  The caller's reference then
** becomes a wrapper of its own (parBatchSubset): the batch itself is
** shared by threads, and only references through wrappers are taken. */
static void parCachePut(const ParPlan *pPlan, const ParSource *pSrc, ParBatch **ppBatch,
                        ParPool *p, unsigned iVersion){
  ParCache *c = &parShared.cache;
  ParBatch *pBatch = *ppBatch, *pMine = 0;
  ParCacheEntry *e;
  unsigned vTrack = 0, vPool = 0;
  int *aiCol, i;

  if( p==0 || p->pTrack==0 ) return;
  aiCol = sqlite3_malloc64(sizeof(int)*(pBatch->nCol+1));
  if( aiCol==0 ) return;
  for(i=0; i<pBatch->nCol; i++) aiCol[i] = i;
  pMine = parBatchSubset(pBatch, aiCol, pBatch->nCol);
  sqlite3_free(aiCol);
  if( pMine==0 ) return;
  e = sqlite3_malloc(sizeof(*e));
  if( e==0 ){
    parBatchFree(pMine);
    return;
  }
  memset(e, 0, sizeof(*e));
  e->zKey = sqlite3_mprintf("%s", pSrc->zKey);
  e->zSource = sqlite3_mprintf("%s.%s", pSrc->zSchema, pSrc->zTable);
  e->zCols = sqlite3_mprintf("%s", pPlan->zExtractCols);
  e->zBase = sqlite3_mprintf("%s", pSrc->zBase);
  if( pPlan->nExtractExpr ){
    e->azExpr = sqlite3_malloc64(sizeof(char*)*pPlan->nExtractExpr);
    for(i=0; e->azExpr && i<pPlan->nExtractExpr; i++){
      if( (e->azExpr[i] = sqlite3_mprintf("%s", pPlan->azExtractExpr[i]))==0 ) break;
      e->nExpr = i+1;
    }
  }
  if( e->zKey==0 || e->zSource==0 || e->zCols==0 || e->zBase==0
   || e->nExpr<pPlan->nExtractExpr ){
    parCacheEntryFree(e);
    parBatchFree(pMine);
    return;
  }
  pthread_mutex_lock(&parShared.mutex);
  if( parShared.mxCacheMb<=0 || pBatch->nMem>parCacheMaxBytes()
   || !parTrackPair(p->pTrack, p, &vTrack, &vPool) || vPool!=iVersion ){
    /* Too big, or not what the file holds now (a commit came since the
    ** read: the entry would be stale at once). */
    pthread_mutex_unlock(&parShared.mutex);
    parCacheEntryFree(e);
    parBatchFree(pMine);
    return;
  }
  {
    ParCacheEntry *eOld = parCacheFind(c, pSrc->zKey);
    if( eOld ) parCacheDrop(c, eOld);
  }
  e->pTrack = p->pTrack;
  e->iVersion = vTrack;
  e->pBatch = pBatch;             /* the caller's reference, handed over */
  *ppBatch = pMine;
  parCacheLinkFirst(c, e);
  c->nByte += pBatch->nMem;
  c->nEntry++;
  parCacheTrim(c, parCacheMaxBytes());
  pthread_mutex_unlock(&parShared.mutex);
}

/* The entry that serves pPlan's extraction from pSrc: the one of exactly
** its columns, else one with the same base (file, table, alias, WHERE)
** holding every expression it needs; aiCol (room for nExtractExpr) gets
** where each needed column is in the entry, and *pbExact whether it is
** the exact one.  Whether the entry is still current is not checked.
** Under the mutex. */
static ParCacheEntry *parCacheMatch(ParCache *c, const ParSource *pSrc, const ParPlan *pPlan,
                                    int *aiCol, int *pbExact){
  ParCacheEntry *e = parCacheFind(c, pSrc->zKey);
  int i, j;
  *pbExact = e!=0;
  if( e || pPlan->nExtractExpr==0 ) return e;
  for(e=c->pFirst; e; e=e->pNext){
    if( e->nExpr==0 || strcmp(e->zBase, pSrc->zBase)!=0 ) continue;
    for(i=0; i<pPlan->nExtractExpr; i++){
      for(j=0; j<e->nExpr && strcmp(e->azExpr[j], pPlan->azExtractExpr[i])!=0; j++){}
      if( j==e->nExpr ) break;
      aiCol[i] = j;
    }
    if( i==pPlan->nExtractExpr ) return e;
  }
  return 0;
}

/* Is there an entry that would serve pPlan's extraction from pSrc? */
static int parCacheHas(const ParSource *pSrc, const ParPlan *pPlan){
  int *aiCol = sqlite3_malloc64(sizeof(int)*(pPlan->nExtractExpr+1)), bExact, bHas;
  if( aiCol==0 ) return 0;
  pthread_mutex_lock(&parShared.mutex);
  bHas = parCacheMatch(&parShared.cache, pSrc, pPlan, aiCol, &bExact)!=0;
  pthread_mutex_unlock(&parShared.mutex);
  sqlite3_free(aiCol);
  return bHas;
}

/* The cached batch for pPlan's extraction from pSrc if it is still what
** the file holds (a new batch of the caller's own that shares the entry's
** columns, or the needed ones of a wider entry), else NULL (a stale entry
** is dropped).  The tracker of the file says: its version now is the
** entry's.  With bMust, only if the caller's snapshot is that content too:
** pCtx's pool on the file has data version iMust (parCallerSnapshot) at a
** moment the tracker's version is the entry's (parTrackPair). */
static ParBatch *parCacheLookup(ParContext *pCtx, const ParSource *pSrc, const ParPlan *pPlan,
                                int bMust, unsigned iMust){
  ParCache *c = &parShared.cache;
  ParCacheEntry *e;
  ParBatch *pB = 0;
  unsigned v, vPool;
  int *aiCol, bExact = 0, i;
  aiCol = sqlite3_malloc64(sizeof(int)*(pPlan->nExtractExpr+1));
  if( aiCol==0 ) return 0;
  pthread_mutex_lock(&parShared.mutex);
  e = parCacheMatch(c, pSrc, pPlan, aiCol, &bExact);
  /* (A tracker that fails may have dropped e with every entry of its
  ** file: e is not touched after a failure.) */
  if( e==0 || !parTrackVersion(e->pTrack, &v) ) goto done;
  if( v!=e->iVersion ){
    parCacheDrop(c, e);
    goto done;
  }
  if( bMust ){
    ParPool *p = parPoolFind(pCtx, pSrc->zFile);
    if( p==0 || p->nConn==0 || !parTrackPair(e->pTrack, p, &v, &vPool) ) goto done;
    if( v!=e->iVersion ){
      parCacheDrop(c, e);
      goto done;
    }
    if( vPool!=iMust ) goto done;      /* current, but newer than the caller's */
  }
  if( bExact ){
    sqlite3_free(aiCol);
    aiCol = sqlite3_malloc64(sizeof(int)*(e->pBatch->nCol+1));
    if( aiCol==0 ) goto done;
    for(i=0; i<e->pBatch->nCol; i++) aiCol[i] = i;
    pB = parBatchSubset(e->pBatch, aiCol, e->pBatch->nCol);
  }else{
    pB = parBatchSubset(e->pBatch, aiCol, pPlan->nExtractExpr);
  }
  if( pB ){
    e->nHit++;
    parCacheUnlink(c, e);
    parCacheLinkFirst(c, e);
  }
done:
  pthread_mutex_unlock(&parShared.mutex);
  sqlite3_free(aiCol);
  return pB;
}

/* ---- extraction ------------------------------------------------------------ */

static void parExtractStampPools(ParContext *pCtx, sqlite3 *db, ParStamp *pStamp);

void parExtractStamp(ParContext *pCtx, sqlite3 *db, ParStamp *pStamp){
  ParPool *p, **pp;
  const char *zName, *zMain;
  int i, bMainNone, bCache;
  memset(pStamp, 0, sizeof(*pStamp));
  /* Pools on files the caller no longer has attached: closed (they would
  ** hold the files open, and their cache entries, for nothing). */
  for(pp=&pCtx->pPool; (p = *pp)!=0; ){
    int bFile = 0;
    for(i=0; !bFile && (zName = sqlite3_db_name(db, i))!=0; i++){
      const char *zFile = i==1 ? 0 : sqlite3_db_filename(db, zName);
      bFile = zFile && strcmp(zFile, p->zFile)==0;
    }
    if( bFile ){
      pp = &p->pNext;
    }else{
      parPoolDrop(pCtx, p);
    }
  }
  /* main's file gets a pool of one connection when it has none: the
  ** stamps of serial reads (most often of main) and the moment noted below
  ** need one (a transaction's later scans are vouched for by it, the cache
  ** off included). */
  zMain = sqlite3_db_filename(db, "main");
  bMainNone = zMain && zMain[0] && sqlite3_txn_state(db, "main")==SQLITE_TXN_NONE;
  bCache = parCacheBudgetMb()>0;
  if( zMain && zMain[0] && (bCache || bMainNone)
   && parPoolFind(pCtx, zMain)==0 && parDefaultVfs(db, "main", 0) ){
    char *zWhy = 0;
    parPoolGet(pCtx, zMain, 1, 0, &zWhy);
    sqlite3_free(zWhy);
  }
  if( bCache ) parExtractStampPools(pCtx, db, pStamp);
  /* Last (its read of the caller's main begins a read transaction that
  ** lasts as long as the statement running now, or the caller's explicit
  ** transaction): the moment parCallerVouched() compares with, on main's
  ** pool. */
  if( bMainNone && (p = parPoolFind(pCtx, zMain))!=0 && p->nConn>0 ) parExtractSync(db, p);
}

/* parExtractStamp() with the cache on: the stamps. */
static void parExtractStampPools(ParContext *pCtx, sqlite3 *db, ParStamp *pStamp){
  ParPool *p;
  const char *zName;
  int i;
  for(p=pCtx->pPool; p && pStamp->n<PAR_STAMP_MAX; p=p->pNext){
    int bFile = 0, bTxn = 0, bMainRead = 0;
    unsigned iMust = 0;
    if( p->nConn==0 ) continue;
    for(i=0; (zName = sqlite3_db_name(db, i))!=0; i++){
      const char *zFile = i==1 ? 0 : sqlite3_db_filename(db, zName);
      int eTxn;
      if( zFile==0 || strcmp(zFile, p->zFile)!=0 ) continue;
      eTxn = sqlite3_txn_state(db, zName);
      if( i==0 && eTxn==SQLITE_TXN_READ ) bMainRead = 1;
      else if( eTxn!=SQLITE_TXN_NONE ) bTxn = 1;
      bFile = 1;
    }
    /* A read of main's that the moment noted vouches for holds the
    ** content of the worker version noted: a serial read in it is stamped
    ** with that version. */
    if( bMainRead && !parCallerVouched(pCtx, db, "main", p->zFile, &iMust) ) bTxn = 1;
    if( !bFile || bTxn || !parPoolVersion(p, &pStamp->a[pStamp->n].iVersion) ) continue;
    if( bMainRead ) pStamp->a[pStamp->n].iVersion = iMust;
    pStamp->a[pStamp->n].iGen = p->iGen;
    pStamp->n++;
  }
}

/* Does pHit, columns from the cache, fit memory_mb?  They count as the
** same rows read again would, so that whether a query fails does not
** depend on what the cache holds.  If not, frees pHit and sets *pzErr. */
static int parCacheHitFits(ParContext *pCtx, ParBatch *pHit, char **pzErr){
  sqlite3_int64 mxMem = parMemLimit(pCtx);
  if( mxMem>0 && parBatchBytes(pHit)>mxMem ){
    parBatchFree(pHit);
    *pzErr = sqlite3_mprintf("memory limit of %lld MB exceeded while reading rows "
                             "(see par_config('memory_mb'))", mxMem/(1024*1024));
    return SQLITE_FULL;
  }
  return SQLITE_OK;
}

/* The operand of opcode zOp that holds a database's number: 1 for P1, 3
** for P3, 0 when none does. */
static int parDbOperand(const char *zOp){
  static const char *az1[] = { "Transaction", "ReadCookie", "SetCookie" };
  static const char *az3[] = { "OpenRead", "ReopenIdx", "OpenWrite" };
  int i;
  for(i=0; i<(int)(sizeof(az1)/sizeof(az1[0])); i++) if( strcmp(zOp, az1[i])==0 ) return 1;
  for(i=0; i<(int)(sizeof(az3)/sizeof(az3[0])); i++) if( strcmp(zOp, az3[i])==0 ) return 3;
  return 0;
}

/* The program db compiles for zSql: opcodes and operands (not P4, which
** can hold addresses), one line each, with "db" for an operand that names
** database iDb (the same database is another number on another
** connection); NULL when it does not prepare.  TableLock is left out:
** only a shared cache has it (at the end, where nothing jumps past it). */
static char *parProgramText(sqlite3 *db, const char *zSql, int iDb){
  char *zEx = sqlite3_mprintf("EXPLAIN %s", zSql);
  sqlite3_stmt *pEx = 0;
  sqlite3_str *pStr;
  int rc = zEx ? sqlite3_prepare_v2(db, zEx, -1, &pEx, 0) : SQLITE_NOMEM;
  sqlite3_free(zEx);
  if( rc ){
    sqlite3_finalize(pEx);
    return 0;
  }
  pStr = sqlite3_str_new(0);
  while( sqlite3_step(pEx)==SQLITE_ROW ){
    const char *zOp = (const char*)sqlite3_column_text(pEx, 1);
    int k, iOp;
    if( zOp==0 || strcmp(zOp, "TableLock")==0 ) continue;
    iOp = parDbOperand(zOp);
    sqlite3_str_appendf(pStr, "%s", zOp);
    for(k=1; k<=3; k++){
      int v = sqlite3_column_int(pEx, 1+k);
      if( k==iOp && v==iDb ) sqlite3_str_appendall(pStr, " db");
      else sqlite3_str_appendf(pStr, " %d", v);
    }
    sqlite3_str_appendf(pStr, " %d\n", sqlite3_column_int(pEx, 6));
  }
  rc = sqlite3_finalize(pEx);
  if( rc ){
    sqlite3_free(sqlite3_str_finish(pStr));
    return 0;
  }
  return sqlite3_str_finish(pStr);
}

/* The number of database zSchema on db, or -1.  No SQL: the caller's
** authorizer would see it. */
static int parSchemaNumber(sqlite3 *db, const char *zSchema){
  const char *zName;
  int i;
  for(i=0; (zName = sqlite3_db_name(db, i))!=0; i++){
    if( sqlite3_stricmp(zName, zSchema)==0 ) return i;
  }
  return -1;
}

/* A new read-only connection that sees zFile as schema zSchema: for main
** the file itself, else an empty in-memory main with the file attached
** under that name (so that the caller's SQL, which names the schema or
** resolves a bare name to it, compiles there as is).  NULL with *pzWhy
** set when it cannot be had. */
static sqlite3 *parCheckerOpen(const char *zFile, const char *zSchema, char **pzWhy){
  const int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  int bMain = sqlite3_stricmp(zSchema, "main")==0;
  sqlite3 *pDb = 0;
  sqlite3_stmt *pAttach = 0;
  /* Read-only: ATTACH opens the file with main's flags. */
  int rc = sqlite3_open_v2(bMain ? zFile : ":memory:", &pDb, flags, 0);
  if( rc==SQLITE_OK ) rc = parTimeCheckRegister(pDb);
  if( rc==SQLITE_OK ){
    sqlite3_busy_timeout(pDb, 200);
    if( !bMain ){
      rc = sqlite3_prepare_v2(pDb, "ATTACH ?1 AS ?2", -1, &pAttach, 0);
      if( rc==SQLITE_OK ){
        sqlite3_bind_text(pAttach, 1, zFile, -1, SQLITE_STATIC);
        sqlite3_bind_text(pAttach, 2, zSchema, -1, SQLITE_STATIC);
        sqlite3_step(pAttach);
        rc = sqlite3_finalize(pAttach);
      }
    }
  }
  if( rc ){
    *pzWhy = sqlite3_mprintf("a new connection cannot open %s: %s", zFile,
                             pDb ? sqlite3_errmsg(pDb) : sqlite3_errstr(rc));
    sqlite3_close_v2(pDb);
    return 0;
  }
  return pDb;
}

/* The program of pPlan's extraction on pNew, a new connection that sees
** the file as zSchema; NULL with *pzWhy set when it does not compile. */
static char *parProgramOnNew(sqlite3 *pNew, const ParPlan *pPlan, const char *zSchema,
                             int bLikeCs, char **pzWhy){
  char *zCookie = sqlite3_mprintf("PRAGMA \"%w\".schema_version", zSchema);
  char *zNew;
  /* Reading the schema cookie reloads a schema changed since. */
  if( zCookie ) parExec(pNew, zCookie);
  sqlite3_free(zCookie);
  parExec(pNew, bLikeCs ? "PRAGMA case_sensitive_like=1" : "PRAGMA case_sensitive_like=0");
  zNew = parProgramText(pNew, pPlan->zExtract, parSchemaNumber(pNew, zSchema));
  if( zNew==0 ){
    *pzWhy = sqlite3_mprintf("the extraction does not compile on a new connection to "
                             "the file: %s", sqlite3_errmsg(pNew));
  }
  return zNew;
}

/* Does db compile pPlan's extraction from zSchema (the database of file
** zFile) as a new connection to the same file does?  An authorizer that
** answers SQLITE_IGNORE has a column read as NULL, which worker
** connections (and rows read before it was set) know nothing of.
** Returns 1 when it does, 0 when it does not, -1 with *pzWhy set when
** there is nothing to compare with.
**
** The pool's connection compares first (for an attached database, its
** checker: the file attached to an empty main).  When it differs, a
** connection opened now decides: the pool's may hold statistics loaded
** before an ANALYZE (no schema change tells it), and is then opened
** again; if the new one differs too, the pool stays (and with it the
** file's cache entries, through its tracker: other scans of the file may
** still use them). */
static int parCompilesAsNew(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan,
                            const char *zSchema, const char *zFile, int bLikeCs,
                            char **pzWhy){
  char *zMine = 0, *zNew = 0;
  ParPool *p;
  sqlite3 *pNew = 0;
  int iRes = -1, iDb;
  *pzWhy = 0;
  if( zSchema==0 || zFile==0 || zFile[0]==0 ) return 1;
  iDb = parSchemaNumber(db, zSchema);
  zMine = iDb>=0 ? parProgramText(db, pPlan->zExtract, iDb) : 0;
  if( zMine==0 ){
    *pzWhy = sqlite3_mprintf("the extraction does not compile on your connection: %s",
                             sqlite3_errmsg(db));
    goto done;
  }
  p = parPoolGet(pCtx, zFile, 1, 0, pzWhy);
  if( p==0 || p->nConn==0 ) goto done;
  if( sqlite3_stricmp(zSchema, "main")==0 ){
    pNew = p->aConn[0];
  }else{
    if( p->pCheck && sqlite3_stricmp(p->zCheckSchema, zSchema)!=0 ){
      sqlite3_close_v2(p->pCheck);
      p->pCheck = 0;
    }
    if( p->pCheck==0 ){
      sqlite3_free(p->zCheckSchema);
      p->zCheckSchema = sqlite3_mprintf("%s", zSchema);
      if( p->zCheckSchema ) p->pCheck = parCheckerOpen(zFile, zSchema, pzWhy);
      if( p->pCheck==0 ) goto done;
    }
    pNew = p->pCheck;
  }
  zNew = parProgramOnNew(pNew, pPlan, zSchema, bLikeCs, pzWhy);
  if( zNew==0 ) goto done;
  iRes = strcmp(zMine, zNew)==0;
  if( iRes==0 ){
    sqlite3 *pFresh = parCheckerOpen(zFile, zSchema, pzWhy);
    sqlite3_free(zNew);
    zNew = pFresh ? parProgramOnNew(pFresh, pPlan, zSchema, bLikeCs, pzWhy) : 0;
    sqlite3_close_v2(pFresh);
    if( zNew==0 ){
      iRes = -1;
    }else if( strcmp(zMine, zNew)==0 ){
      /* The pool's connection was out of date. */
      parPoolDrop(pCtx, parPoolFind(pCtx, zFile));
      iRes = 1;
    }
  }

done:
  if( iRes!=-1 ){
    sqlite3_free(*pzWhy);
    *pzWhy = 0;
  }else if( *pzWhy==0 ){
    *pzWhy = sqlite3_mprintf("out of memory");
  }
  sqlite3_free(zMine);
  sqlite3_free(zNew);
  return iRes;
}

/* The reason for serial reads that parCompilesAsNew() gives (iRes 0 or
** -1 with zCheck). */
static char *parAsNewWhy(int iRes, char *zCheck){
  if( iRes==0 ){
    sqlite3_free(zCheck);
    return sqlite3_mprintf("your connection compiles the extraction otherwise than a new "
                           "connection does (an authorizer that reads a column as NULL?)");
  }
  return zCheck;
}

/* parCompilesAsNew() for a serial source: 1 when it compiles as new. */
static int parSerialAsNew(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan,
                          const ParSource *pSrc){
  char *zCheck = 0;
  int iRes = parCompilesAsNew(pCtx, db, pPlan, pSrc->zSchema, pSrc->zFile, pSrc->bLikeCs,
                              &zCheck);
  sqlite3_free(zCheck);
  return iRes==1;
}

/* parExtract() of d's plan, its time values checked as d says. */
static int parExtractDated(ParContext *pCtx, sqlite3 *db, const ParDated *d,
                           const ParStamp *pStamp, ParBatch **ppBatch, int *peMode,
                           char **pzWhy, char **pzErr){
  const ParPlan *pPlan = &d->plan;
  const int bChecked = (d->mDates & PAR_DATES_CHECKED)!=0;
  ParSource src;
  char *zWhy = 0;
  int rc, iAsNew = -2;   /* parCompilesAsNew() for src (-2: not asked) */
  int bMust = 0;         /* parCallerSnapshot() */
  unsigned iMust = 0;
  char *zAsNew = 0;      /* ...and the schema it was for */

  *ppBatch = 0;
  *peMode = PAR_EXTRACT_SERIAL;
  *pzWhy = 0;
  *pzErr = 0;
  rc = parSourceResolve(pCtx, db, pPlan, &src, &zWhy);
  if( rc ) return rc;
  if( zWhy==0 ){
    char *zCheck = 0;
    iAsNew = parCompilesAsNew(pCtx, db, pPlan, src.zSchema, src.zFile, src.bLikeCs, &zCheck);
    if( iAsNew!=1 ){
      zWhy = parAsNewWhy(iAsNew, zCheck);
      if( zWhy==0 ) rc = SQLITE_NOMEM;
    }
    zAsNew = sqlite3_mprintf("%s", src.zSchema);
    if( zAsNew==0 ) rc = SQLITE_NOMEM;
  }
  if( zWhy==0 && rc==SQLITE_OK
   && !parCallerSnapshot(pCtx, db, src.zSchema, src.zFile, &bMust, &iMust) ){
    zWhy = parCallerSnapshotWhy(src.zSchema);
    if( zWhy==0 ) rc = SQLITE_NOMEM;
  }
  if( zWhy==0 && rc==SQLITE_OK ){
    ParBatch *pHit = parCacheLookup(pCtx, &src, pPlan, bMust, iMust);
    if( pHit && (rc = parCacheHitFits(pCtx, pHit, pzErr))!=SQLITE_OK ){
      parSourceClear(&src);
      sqlite3_free(zAsNew);
      return rc;
    }
    if( pHit ){
      *ppBatch = pHit;
      *peMode = PAR_EXTRACT_CACHED;
    }else{
      int nThread = parReadThreads(pCtx), bStale = 0, bCounted = 0;
      double t = parNowMs();
      ParPool *p = parPoolGet(pCtx, src.zFile, nThread, src.bWal, &zWhy);
      unsigned iVersion = 0;
      parReadPhase(pCtx, PAR_READ_POOL, &t);
      unsigned long long iNow = parNowCount();
      if( p==0 && zWhy==0 ) rc = SQLITE_NOMEM;
      if( p ){
        rc = parReadParallel(pCtx, db, p, &src, nThread, bMust, iMust, ppBatch, &iVersion,
                             &bCounted, &bStale, &zWhy, pzErr);
      }
      if( rc==SQLITE_OK && *ppBatch && bChecked && parNowCount()!=iNow ){
        /* 'now' at some row (or on another connection meanwhile): each
        ** range read its own moment, where SQLite reads one. */
        parBatchFree(*ppBatch);
        *ppBatch = 0;
        zWhy = sqlite3_mprintf("a time value was 'now' at some row: SQLite's one read "
                               "has one moment, the workers' ranges one each");
        if( zWhy==0 ) rc = SQLITE_NOMEM;
      }
      if( bStale ){
        /* A worker planned otherwise: most likely statistics it loaded
        ** before an ANALYZE (which changes no schema version, so they stay
        ** loaded).  New connections load them afresh for the next scan;
        ** this one is read serially. */
        parPoolDrop(pCtx, parPoolFind(pCtx, src.zFile));
      }
      if( rc==SQLITE_OK && *ppBatch ){
        *peMode = bCounted ? PAR_EXTRACT_COUNTED : PAR_EXTRACT_PARALLEL;
        if( !parVolatileNames(pPlan->zExtract) ){
          parCachePut(pPlan, &src, ppBatch, p, iVersion);
        }
      }
    }
  }
  parSourceClear(&src);
  if( rc==SQLITE_OK && *ppBatch==0 ){
    /* Read serially on the caller's connection; kept in the cache when it
    ** can be, stamped with the file's version from before this scan ran
    ** anything on the caller's connection (after a commit since then it is
    ** not kept: never wrongly current).  Without a stamp the
    ** pool is opened on the file, so that the next scan has one. */
    int iStamp = -1, k;     /* pStamp->a[iStamp]: the stamp of the pool read */
    /* The check of the parallel attempt holds for its database: not
    ** again. */
    if( (iAsNew==-2 || iAsNew==1) && parSerialSource(pCtx, db, pPlan, &src)
     && ((iAsNew==1 && sqlite3_stricmp(zAsNew, src.zSchema)==0)
         || parSerialAsNew(pCtx, db, pPlan, &src)) ){
      ParBatch *pHit = 0;
      char *zPoolWhy = 0;
      ParPool *p = parPoolGet(pCtx, src.zFile, 1, 0, &zPoolWhy);
      sqlite3_free(zPoolWhy);
      if( p && parCallerSnapshot(pCtx, db, src.zSchema, src.zFile, &bMust, &iMust) ){
        pHit = parCacheLookup(pCtx, &src, pPlan, bMust, iMust);
      }
      if( pHit && (rc = parCacheHitFits(pCtx, pHit, pzErr))!=SQLITE_OK ){
        parSourceClear(&src);
        sqlite3_free(zAsNew);
        *pzWhy = zWhy;
        return rc;
      }
      if( pHit ){
        *ppBatch = pHit;
        *peMode = PAR_EXTRACT_CACHED;
      }else{
        for(k=0; p && pStamp && k<pStamp->n && iStamp<0; k++){
          if( pStamp->a[k].iGen==p->iGen ) iStamp = k;
        }
      }
    }
    if( *ppBatch==0 ){
      unsigned long long iNow = parNowCount();
      ParPool *p;
      rc = parBatchFromSql(db, pPlan->zExtract, pPlan->pParams, parMemLimit(pCtx), ppBatch,
                           pzErr);
      p = iStamp>=0 ? parPoolFind(pCtx, src.zFile) : 0;
      if( rc==SQLITE_OK && p && p->iGen==pStamp->a[iStamp].iGen
       && (!bChecked || parNowCount()==iNow) ){
        parCachePut(pPlan, &src, ppBatch, p, pStamp->a[iStamp].iVersion);
      }
    }
    parSourceClear(&src);
  }
  sqlite3_free(zAsNew);
  *pzWhy = zWhy;
  return rc;
}

/* What the last parExtract() on this thread read, for parExtractVolatile():
** a view asks on the thread that scanned, right after its extraction. */
static _Thread_local struct {
  const ParPlan *pPlan;
  int bVolatile;        /* its values may differ for the same rows */
} parLastRead;

int parExtract(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, const ParStamp *pStamp,
               ParBatch **ppBatch, int *peMode, char **pzWhy, char **pzErr){
  ParDated d;
  unsigned long long iNow = parNowCount();
  int rc = parDatedInit(db, pPlan, &d);
  *ppBatch = 0;
  *peMode = PAR_EXTRACT_SERIAL;
  *pzWhy = 0;
  *pzErr = 0;
  if( rc==SQLITE_OK ) rc = parExtractDated(pCtx, db, &d, pStamp, ppBatch, peMode, pzWhy, pzErr);
  parLastRead.pPlan = pPlan;
  parLastRead.bVolatile = rc!=SQLITE_OK
      || (*peMode!=PAR_EXTRACT_CACHED
          && (parVolatileNames(d.plan.zExtract)
              || ((d.mDates & PAR_DATES_CHECKED) && parNowCount()!=iNow)));
  parDatedClear(&d);
  return rc;
}

int parExtractHasEntry(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan){
  char *z = parExtractExplain(pCtx, db, pPlan, -1, 0);
  int bHas = z && strncmp(z, "cached", 6)==0;
  sqlite3_free(z);
  return bHas;
}

int parExtractVolatile(const ParPlan *pPlan){
  if( parLastRead.pPlan==pPlan ) return parLastRead.bVolatile;
  return pPlan->zExtract && parVolatileNames(pPlan->zExtract);
}

/* parExtractExplain() of d's plan. */
static char *parExplainDated(ParContext *pCtx, sqlite3 *db, const ParDated *d,
                             sqlite3_int64 nSpan, int bVerbose){
  const ParPlan *pPlan = &d->plan;
  ParSource src;
  char *zWhy = 0, *zOut;
  if( parSourceResolve(pCtx, db, pPlan, &src, &zWhy) ) return 0;
  if( zWhy==0 ){
    char *zCheck = 0;
    int iAsNew = parCompilesAsNew(pCtx, db, pPlan, src.zSchema, src.zFile, src.bLikeCs,
                                  &zCheck);
    if( iAsNew!=1 ) zWhy = parAsNewWhy(iAsNew, zCheck);
  }
  if( zWhy==0 ){
    int bMust;
    unsigned iMust, v;
    if( !parCallerSnapshot(pCtx, db, src.zSchema, src.zFile, &bMust, &iMust) ){
      zWhy = parCallerSnapshotWhy(src.zSchema);
      if( zWhy==0 ){
        parSourceClear(&src);
        return 0;
      }
    }else if( bMust && (!parPoolVersion(parPoolFind(pCtx, src.zFile), &v) || v!=iMust) ){
      zWhy = parCommitCameWhy(src.zSchema);
      if( zWhy==0 ){
        parSourceClear(&src);
        return 0;
      }
    }
  }
  if( zWhy ){
    ParSource ser;
    int bMust;
    unsigned iMust;
    int bCached = parSerialSource(pCtx, db, pPlan, &ser)
               && parSerialAsNew(pCtx, db, pPlan, &ser)
               && parCallerSnapshot(pCtx, db, ser.zSchema, ser.zFile, &bMust, &iMust)
               && parCacheHas(&ser, pPlan);
    zOut = sqlite3_mprintf("%sserial, on the caller's connection (%s)",
                           bCached ? "cached when still current, else " : "", zWhy);
    parSourceClear(&ser);
  }else if( nSpan>=0 && (sqlite3_uint64)nSpan < (sqlite3_uint64)pCtx->nMinRow ){
    /* parReadParallel's rule: the caller reads so few rowids faster alone
    ** (an entry of the parallel read still serves). */
    zOut = sqlite3_mprintf("%sserial, on the caller's connection (fewer than min_rows "
                           "(%lld) rows)", parCacheHas(&src, pPlan) ? "cached when still "
                           "current, else " : "", pCtx->nMinRow);
  }else if( !bVerbose ){
    zOut = sqlite3_mprintf("%sparallel, %d worker connections%s",
                           parCacheHas(&src, pPlan) ? "cached when still current, else " : "",
                           parReadThreads(pCtx), src.bJoin ? " (each joins its rows)" : "");
  }else if( parCacheHas(&src, pPlan) ){
    zOut = sqlite3_mprintf("cached when still current, else parallel: %s ranges "
                           "of %s.%s%s on %d worker connections", src.zPk ? "primary-key" : "rowid",
                           src.zSchema, src.zTable, src.bJoin ? " (each joined on its worker)" : "",
                           parReadThreads(pCtx));
  }else{
    zOut = sqlite3_mprintf("parallel: %s ranges of %s.%s%s on %d worker connections, "
                           "one snapshot (serial below min_rows = %lld rows)%s",
                           src.zPk ? "primary-key" : "rowid",
                           src.zSchema, src.zTable, src.bJoin ? " (each joined on its worker)" : "",
                           parReadThreads(pCtx), pCtx->nMinRow,
                           src.bAll ? "; taken by row count when the last read of every row "
                                      "found every rowid from min to max, and no commit came since"
                                    : "");
  }
  parSourceClear(&src);
  sqlite3_free(zWhy);
  return zOut;
}

char *parExtractExplain(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan,
                        sqlite3_int64 nSpan, int bVerbose){
  ParDated d;
  const char *zNote = 0;
  char *zOut;
  if( parDatedInit(db, pPlan, &d) ) return 0;
  zOut = parExplainDated(pCtx, db, &d, nSpan, bVerbose);
  if( d.mDates & PAR_DATES_NOW ){
    zNote = "never kept: a date and time call reads the moment ('now', or no time value)";
  }else if( !bVerbose ){
    zNote = 0;         /* what follows: checks that do not change the mode */
  }else if( d.mDates & PAR_DATES_UNCHECKED ){
    zNote = "the time values of date and time calls cannot be checked for 'now': kept "
            "only when SQLite's program calls none of them (an index on the call)";
  }else if( d.mDates & PAR_DATES_ZONE ){
    zNote = "never kept: a date and time call reads the local time zone ('localtime', "
            "'utc'), or has a modifier or format that is not a literal";
  }else if( d.mDates & PAR_DATES_CHECKED ){
    zNote = "time values checked for 'now' at each row: a read that meets one is read "
            "again serially, and not kept";
  }
  if( zOut && zNote ){
    char *z = sqlite3_mprintf("%s; %s", zOut, zNote);
    sqlite3_free(zOut);
    zOut = z;
  }
  parDatedClear(&d);
  return zOut;
}

void parExtractShutdown(ParContext *pCtx){
  while( pCtx->pPool ) parPoolDrop(pCtx, pCtx->pPool);
}

void parCacheAttach(sqlite3_int64 mxDefaultMb){
  pthread_mutex_lock(&parShared.mutex);
  parShared.nCtx++;
  if( parShared.mxCacheMb<0 ) parShared.mxCacheMb = mxDefaultMb;
  pthread_mutex_unlock(&parShared.mutex);
}

void parCacheDetach(void){
  pthread_mutex_lock(&parShared.mutex);
  if( --parShared.nCtx==0 ){
    /* Every pool is closed, so every tracker is gone with its entries;
    ** the budget goes back to the default too, as when the library is
    ** unloaded. */
    parCacheTrim(&parShared.cache, -1);
    assert( parShared.pTrack==0 && parShared.cache.nEntry==0 );
    parShared.mxCacheMb = -1;
  }
  pthread_mutex_unlock(&parShared.mutex);
}

sqlite3_int64 parCacheBudgetMb(void){
  sqlite3_int64 mb;
  pthread_mutex_lock(&parShared.mutex);
  mb = parShared.mxCacheMb>0 ? parShared.mxCacheMb : 0;
  pthread_mutex_unlock(&parShared.mutex);
  return mb;
}

void parCacheSetBudgetMb(sqlite3_int64 mb){
  pthread_mutex_lock(&parShared.mutex);
  parShared.mxCacheMb = mb;
  parCacheTrim(&parShared.cache, parCacheMaxBytes());
  pthread_mutex_unlock(&parShared.mutex);
}

/* ---- par_cache and par_cache_clear ------------------------------------------ */

typedef struct ParCacheRow {
  char *zSource, *zCols;
  sqlite3_int64 nRow, nByte, nHit;
} ParCacheRow;

typedef struct ParCacheCursor {
  sqlite3_vtab_cursor base;
  ParCacheRow *aRow;     /* the entries when the scan began */
  int nRow, iRow;
} ParCacheCursor;

typedef struct ParCacheVtab {
  sqlite3_vtab base;
} ParCacheVtab;

static int parCacheConnect(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                           sqlite3_vtab **ppVtab, char **pzErr){
  ParCacheVtab *pTab;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(source TEXT, columns TEXT, "
                                    "rows INTEGER, bytes INTEGER, hits INTEGER)");
  if( rc ) return rc;
  pTab = sqlite3_malloc(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int parCacheBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  pInfo->estimatedCost = 10;
  pInfo->estimatedRows = 10;
  return SQLITE_OK;
}

static int parCacheDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int parCacheOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  ParCacheCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static void parCacheCursorReset(ParCacheCursor *pCur){
  int i;
  for(i=0; i<pCur->nRow; i++){
    sqlite3_free(pCur->aRow[i].zSource);
    sqlite3_free(pCur->aRow[i].zCols);
  }
  sqlite3_free(pCur->aRow);
  pCur->aRow = 0;
  pCur->nRow = pCur->iRow = 0;
}

static int parCacheClose(sqlite3_vtab_cursor *cur){
  parCacheCursorReset((ParCacheCursor*)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int parCacheFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                          int argc, sqlite3_value **argv){
  ParCacheCursor *pCur = (ParCacheCursor*)cur;
  ParCache *c = &parShared.cache;
  ParCacheEntry *e;
  int rc = SQLITE_OK;
  parCacheCursorReset(pCur);
  pthread_mutex_lock(&parShared.mutex);
  if( c->nEntry>0 ){
    pCur->aRow = sqlite3_malloc64(sizeof(ParCacheRow)*c->nEntry);
    if( pCur->aRow==0 ) rc = SQLITE_NOMEM;
  }
  for(e=c->pFirst; e && rc==SQLITE_OK; e=e->pNext){
    ParCacheRow *r = &pCur->aRow[pCur->nRow++];
    r->zSource = sqlite3_mprintf("%s", e->zSource);
    r->zCols = sqlite3_mprintf("%s", e->zCols);
    r->nRow = e->pBatch->nRow;
    r->nByte = e->pBatch->nMem;
    r->nHit = e->nHit;
    if( r->zSource==0 || r->zCols==0 ) rc = SQLITE_NOMEM;
  }
  pthread_mutex_unlock(&parShared.mutex);
  return rc;
}

static int parCacheNext(sqlite3_vtab_cursor *cur){
  ((ParCacheCursor*)cur)->iRow++;
  return SQLITE_OK;
}

static int parCacheEof(sqlite3_vtab_cursor *cur){
  ParCacheCursor *pCur = (ParCacheCursor*)cur;
  return pCur->iRow>=pCur->nRow;
}

static int parCacheColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  ParCacheCursor *pCur = (ParCacheCursor*)cur;
  const ParCacheRow *r = &pCur->aRow[pCur->iRow];
  switch( i ){
    case 0:  sqlite3_result_text(ctx, r->zSource, -1, SQLITE_TRANSIENT); break;
    case 1:  sqlite3_result_text(ctx, r->zCols, -1, SQLITE_TRANSIENT); break;
    case 2:  sqlite3_result_int64(ctx, r->nRow); break;
    case 3:  sqlite3_result_int64(ctx, r->nByte); break;
    default: sqlite3_result_int64(ctx, r->nHit); break;
  }
  return SQLITE_OK;
}

static int parCacheRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = ((ParCacheCursor*)cur)->iRow + 1;
  return SQLITE_OK;
}

static sqlite3_module parCacheModule = {
  0,                    /* iVersion */
  0,                    /* xCreate: 0 makes it eponymous-only */
  parCacheConnect,      /* xConnect */
  parCacheBestIndex,    /* xBestIndex: a full scan of a few rows */
  parCacheDisconnect,   /* xDisconnect */
  0,                    /* xDestroy */
  parCacheOpen,         /* xOpen */
  parCacheClose,        /* xClose */
  parCacheFilter,       /* xFilter: copies the entries */
  parCacheNext,         /* xNext */
  parCacheEof,          /* xEof */
  parCacheColumn,       /* xColumn */
  parCacheRowid,        /* xRowid */
  0, 0, 0, 0, 0, 0, 0,  /* read-only: no xUpdate, transactions, functions */
  0, 0, 0, 0            /* xRename .. xShadowName */
};

/* par_cache_clear(): drop every entry of the process's cache; returns how
** many there were. */
static void parCacheClearFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int n;
  pthread_mutex_lock(&parShared.mutex);
  n = parShared.cache.nEntry;
  parCacheTrim(&parShared.cache, -1);
  pthread_mutex_unlock(&parShared.mutex);
  parJoinMemoClear((ParContext*)sqlite3_user_data(ctx));   /* and joins kept */
  parBigRelease();               /* and the blocks kept for reuse */
  sqlite3_result_int(ctx, n);
}

int parCacheRegister(sqlite3 *db, ParContext *pCtx){
  int rc = sqlite3_create_module_v2(db, "par_cache", &parCacheModule,
                                    parContextRef(pCtx), parContextUnref);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function_v2(db, "par_cache_clear", 0, SQLITE_UTF8|SQLITE_DIRECTONLY,
                                    parContextRef(pCtx), parCacheClearFunc, 0, 0,
                                    parContextUnref);
  }
  if( rc==SQLITE_OK ) rc = parTimeCheckRegister(db);
  return rc;
}


