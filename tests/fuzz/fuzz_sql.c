/*
** fuzz_sql.c: a libFuzzer target that hands arbitrary bytes to the parts of
** the extension that parse SQL: a parallel view's SELECT, par_explain's and
** par_profile's argument, and par_histogram's bins.
**
**   make fuzz                         # clang, FUZZ_SECONDS (600) of fuzzing
**   make fuzz FUZZ_SECONDS=60 FUZZ_JOBS=2
**   build/fuzz/fuzz_sql -dict=tests/fuzz/sql.dict build/fuzz-corpus
**   build/asan/fuzz_replay tests/fuzz/corpus tests/fuzz/crashes   # make test
**
** The input.  Byte 0 chooses what the rest (the text, below) is used as,
** and the settings the extension runs under; m = byte0 % 4, s = byte0 / 4:
**
**   m = 0  CREATE VIRTUAL TABLE temp.v USING parallel('text'), quotes
**          doubled; SELECT * FROM v twice (cold, then warm from the
**          columnar cache); DROP TABLE temp.v
**   m = 1  SELECT par_explain(?1), the text bound as TEXT
**   m = 2  the text as par_histogram's bins, spliced into SQL in the
**          table-valued form over each source below and in the aggregate
**          form, then bound as TEXT to both forms and to par_percentile
**   m = 3  SELECT par_profile(?1), the text bound as TEXT
**
**   group_strategy = s % 5, threads = 1 + (s/5) % 3,
**   parallel_extract = (s/15) % 2, min_rows = s >= 60 ? 10^6 : 0
**
** so 'P' (80, s = 20) is a view with threads 2, group_strategy 0 (auto),
** parallel extraction on and min_rows 0; 'Q', 'R', 'S' the other modes.
**
** The database (made once per process): main is a file in /tmp (worker
** connections can read it in parallel), with t (every storage class in one
** column, NOCASE and RTRIM columns, INTEGER/REAL extremes, infinities, rowid
** holes, two indexes), w (WITHOUT ROWID, keys of every class), s (sparse
** rowids from INT64_MIN to INT64_MAX), e (empty), "my table" (names that
** need quoting); aux is ATTACH ':memory:' (u, and a t of its own); ax is
** an attached file (p); temp holds tt.
**
** How it works.  The extension is compiled into this program with
** -DSQLITE_CORE and registered with sqlite3_parallel_init(); with tiny
** blocks (-DPX_BLOCK=8, Makefile) its parallel paths run on these small
** tables.  Every input starts from the same state: settings set from byte
** 0, columnar cache emptied, no view left over.  A progress handler stops
** any statement of the connection after about PAR_FUZZ_OPS virtual machine
** operations, and sqlite3_limit() bounds lengths, so inputs end quickly.
** Result rows are read in full (every byte of every value) so that the
** sanitizers see the extension's results.  Errors are expected and
** ignored: only crashes, leaks and sanitizer reports are findings.
**
** PAR_FUZZ_VERBOSE=1 in the environment prints each statement with its
** first rows, its error and its time.
*/
#include <sqlite3.h>

#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int sqlite3_parallel_init(sqlite3 *db, char **pzErrMsg, const void *pApi);

int LLVMFuzzerInitialize(int *pArgc, char ***pArgv);
int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData);

/* Progress-handler calls (one per 1000 operations) before a statement of
** the connection is interrupted: about 2 million operations for each
** statement the harness runs, and those the extension runs for it. */
#define PAR_FUZZ_OPS 2000

static sqlite3 *db;
static char zMainPath[64], zAxPath[64];
static int nProgress;
static int bVerbose;         /* PAR_FUZZ_VERBOSE set: print each statement */

/* LeakSanitizer's suppressions: clang's OpenMP runtime keeps a few blocks
** per thread it started until after the leak check at exit. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void){
  return "leak:libomp.so\n";
}

static int fuzzProgress(void *pArg){
  (void)pArg;
  return ++nProgress > PAR_FUZZ_OPS;
}

static double fuzzNowMs(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec*1e3 + ts.tv_nsec/1e6;
}

/* Setup SQL that must work: anything else is a broken harness. */
static void fuzzExecOrDie(const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "fuzz_sql: setup failed: %s\n  in: %s\n", zErr ? zErr : "?", zSql);
    abort();
  }
}

/* Run one statement of the input to its end, touching every byte of every
** value it returns; errors are ignored. */
static void fuzzStep(sqlite3_stmt *pStmt){
  volatile unsigned uSum = 0;
  int rc, nRow = 0;
  double t0 = bVerbose ? fuzzNowMs() : 0;
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    nRow++;
    int i, n = sqlite3_column_count(pStmt);
    for(i=0; i<n; i++){
      const unsigned char *z = 0;
      int j, nByte = 0;
      switch( sqlite3_column_type(pStmt, i) ){
        case SQLITE_INTEGER: uSum += (unsigned)sqlite3_column_int64(pStmt, i); break;
        case SQLITE_FLOAT:   uSum += (unsigned)(sqlite3_column_double(pStmt, i)!=0.0); break;
        case SQLITE_TEXT:
          z = sqlite3_column_text(pStmt, i);
          nByte = sqlite3_column_bytes(pStmt, i);
          break;
        case SQLITE_BLOB:
          z = sqlite3_column_blob(pStmt, i);
          nByte = sqlite3_column_bytes(pStmt, i);
          break;
      }
      for(j=0; z && j<nByte; j++) uSum += z[j];
      if( bVerbose && nRow<=3 ){
        fprintf(stderr, "  row %d col %d: %.200s\n", nRow, i, (const char*)sqlite3_column_text(pStmt, i));
      }
    }
  }
  if( bVerbose ){
    fprintf(stderr, "  %d rows, %s, %.1f ms\n", nRow,
            rc==SQLITE_DONE ? "done" : sqlite3_errmsg(db), fuzzNowMs() - t0);
  }
  (void)uSum;
}

/* Prepare zSql (its first statement), bind the text to every parameter
** when aText is not NULL, and run it. */
static void fuzzRun(const char *zSql, const char *aText, int nText){
  sqlite3_stmt *pStmt = 0;
  if( zSql==0 ) return;
  if( bVerbose ) fprintf(stderr, "%s\n", zSql);
  nProgress = 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)!=SQLITE_OK ){
    if( bVerbose ) fprintf(stderr, "  prepare: %s\n", sqlite3_errmsg(db));
  }else if( pStmt ){
    int i;
    for(i=1; aText && i<=sqlite3_bind_parameter_count(pStmt); i++){
      sqlite3_bind_text(pStmt, i, aText, nText, SQLITE_STATIC);
    }
    fuzzStep(pStmt);
  }
  sqlite3_finalize(pStmt);
}

/* Remove the databases of fuzzers that died without running atexit()
** (a crash ends a libFuzzer run): files named as ours of a dead process. */
static void fuzzRemoveStale(void){
  glob_t g;
  size_t i;
  if( glob("/tmp/par_fuzz_*.db*", 0, 0, &g)!=0 ) return;
  for(i=0; i<g.gl_pathc; i++){
    int pid = atoi(g.gl_pathv[i] + strlen("/tmp/par_fuzz_"));
    if( pid>0 && kill(pid, 0)!=0 && errno==ESRCH ) unlink(g.gl_pathv[i]);
  }
  globfree(&g);
}

static void fuzzAtExit(void){
  static const char *const azSuffix[] = { "", "-wal", "-shm", "-journal" };
  char zPath[80];
  size_t i;
  if( db ){
    sqlite3_close_v2(db);
    db = 0;
  }
  for(i=0; i<sizeof(azSuffix)/sizeof(azSuffix[0]); i++){
    snprintf(zPath, sizeof(zPath), "%s%s", zMainPath, azSuffix[i]);
    unlink(zPath);
    snprintf(zPath, sizeof(zPath), "%s%s", zAxPath, azSuffix[i]);
    unlink(zPath);
  }
}

static const char *const azSetup[] = {
  "CREATE TABLE t(a INTEGER, b REAL, c TEXT COLLATE NOCASE, d BLOB, e,"
  " f TEXT COLLATE RTRIM, g INTEGER NOT NULL, h NUMERIC)",
  "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i<399)"
  " INSERT INTO t SELECT"
  "  CASE WHEN i%13=0 THEN NULL WHEN i%17=0 THEN 9223372036854775807-i"
  "       WHEN i%19=0 THEN -9223372036854775808+i WHEN i%43=0 THEN 9007199254740993"
  "       ELSE (i*7)%50-10 END,"
  "  CASE WHEN i%11=0 THEN NULL WHEN i%23=0 THEN 9e999 WHEN i%29=0 THEN -9e999"
  "       WHEN i%31=0 THEN -0.0 WHEN i%37=0 THEN 1.7976931348623157e308"
  "       WHEN i%41=0 THEN 5e-324 ELSE (i%37)*0.25-3 END,"
  "  CASE i%8 WHEN 0 THEN NULL WHEN 1 THEN 'a' WHEN 2 THEN 'A' WHEN 3 THEN 'b'||(i%5)"
  "       WHEN 4 THEN 'B'||(i%5) WHEN 5 THEN '' WHEN 6 THEN 'a ' ELSE char(233) END,"
  "  CASE i%5 WHEN 0 THEN NULL WHEN 1 THEN x'00ff' WHEN 2 THEN x''"
  "       WHEN 3 THEN CAST(i%9 AS BLOB) ELSE zeroblob(i%3) END,"
  "  CASE i%7 WHEN 0 THEN NULL WHEN 1 THEN i%20 WHEN 2 THEN (i%20)*0.5"
  "       WHEN 3 THEN 'x'||(i%10) WHEN 4 THEN CAST('x'||(i%4) AS BLOB)"
  "       WHEN 5 THEN 9007199254740992+(i%3) ELSE 'X'||(i%10) END,"
  "  CASE i%5 WHEN 0 THEN 'a' WHEN 1 THEN 'a ' WHEN 2 THEN 'a  ' WHEN 3 THEN NULL"
  "       ELSE 'b' END,"
  "  i%8,"
  "  CASE i%5 WHEN 0 THEN '10' WHEN 1 THEN '1e2' WHEN 2 THEN 'x' WHEN 3 THEN NULL"
  "       ELSE i*1.5 END"
  " FROM n",
  "DELETE FROM t WHERE rowid%50=7",
  "CREATE INDEX t_cg ON t(c, g)",
  "CREATE INDEX t_e ON t(e DESC, a)",
  "CREATE TABLE w(k PRIMARY KEY, v, n INTEGER) WITHOUT ROWID",
  "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i<149)"
  " INSERT INTO w SELECT"
  "  CASE i%6 WHEN 0 THEN i WHEN 1 THEN -i*1.5 WHEN 2 THEN 'k'||i"
  "       WHEN 3 THEN CAST('k'||i AS BLOB) WHEN 4 THEN i+0.5"
  "       ELSE 9223372036854775807-i END,"
  "  CASE i%4 WHEN 0 THEN NULL WHEN 1 THEN i WHEN 2 THEN 'v'||(i%3) ELSE i*0.1 END,"
  "  i%5"
  " FROM n",
  "CREATE TABLE s(id INTEGER PRIMARY KEY, x REAL, y TEXT COLLATE NOCASE)",
  "INSERT INTO s VALUES(-9223372036854775808, 1, 'a'), (-1, -2.5, 'B'),"
  " (0, NULL, NULL), (1, 0.0, 'b'), (2, 3, ''), (1000001, 1e300, 'A'),"
  " (9223372036854775807, -1e300, 'c')",
  "WITH RECURSIVE n(i) AS (SELECT 3 UNION ALL SELECT i+1 FROM n WHERE i<60)"
  " INSERT INTO s SELECT i*i*i*1000, i*0.5, 'y'||(i%7) FROM n",
  "CREATE TABLE e(x, y TEXT)",
  "CREATE TABLE \"my table\"(\"a`b\" INTEGER, \"x\"\"y\" TEXT, \"z] w\")",
  "INSERT INTO \"my table\" VALUES(1, 'q', 2), (NULL, 'Q', x'01'), (3, NULL, 2.5)",
  "ATTACH ':memory:' AS aux",
  "CREATE TABLE aux.u(g INTEGER, x, z TEXT COLLATE NOCASE)",
  "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i<59)"
  " INSERT INTO aux.u SELECT i%4, CASE i%3 WHEN 0 THEN i WHEN 1 THEN i*0.5"
  " ELSE 'z' END, CASE i%2 WHEN 0 THEN 'Z' ELSE 'z' END FROM n",
  "CREATE TABLE aux.t(a, g)",
  "INSERT INTO aux.t VALUES(1, 1), (2, 2), ('a', 1)",
  "CREATE TEMP TABLE tt(g INTEGER PRIMARY KEY, name TEXT)",
  "INSERT INTO tt VALUES(0, 'zero'), (1, 'one'), (2, 'two'), (5, 'five')",
};

int LLVMFuzzerInitialize(int *pArgc, char ***pArgv){
  char *zErr = 0;
  char *zAttach;
  size_t i;
  (void)pArgc; (void)pArgv;
  bVerbose = getenv("PAR_FUZZ_VERBOSE")!=0;
  fuzzRemoveStale();
  snprintf(zMainPath, sizeof(zMainPath), "/tmp/par_fuzz_%d.db", (int)getpid());
  snprintf(zAxPath, sizeof(zAxPath), "/tmp/par_fuzz_%d_ax.db", (int)getpid());
  unlink(zMainPath);
  unlink(zAxPath);
  if( sqlite3_open(zMainPath, &db)!=SQLITE_OK ){
    fprintf(stderr, "fuzz_sql: cannot open %s\n", zMainPath);
    abort();
  }
  atexit(fuzzAtExit);
  if( sqlite3_parallel_init(db, &zErr, 0)!=SQLITE_OK ){
    fprintf(stderr, "fuzz_sql: sqlite3_parallel_init: %s\n", zErr ? zErr : "?");
    abort();
  }
  fuzzExecOrDie("PRAGMA journal_mode=WAL");
  fuzzExecOrDie("BEGIN");
  for(i=0; i<sizeof(azSetup)/sizeof(azSetup[0]); i++) fuzzExecOrDie(azSetup[i]);
  fuzzExecOrDie("COMMIT");
  zAttach = sqlite3_mprintf("ATTACH %Q AS ax", zAxPath);
  fuzzExecOrDie(zAttach);
  sqlite3_free(zAttach);
  fuzzExecOrDie("CREATE TABLE ax.p(id INTEGER PRIMARY KEY, g, v REAL)");
  fuzzExecOrDie("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<99)"
                " INSERT INTO ax.p SELECT i, i%3, i*0.25 FROM n");

  /* Bounds for what the inputs may ask for, none below what the extension
  ** itself needs (par_rows declares 64*15+1 columns, par_sink takes an
  ** argument per extracted column); the attached count is the one in use,
  ** so that no input can attach more. */
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1000000);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1000000);
  sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 50);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 2);
  sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000);
  sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 4);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int*)0);
  sqlite3_progress_handler(db, 1000, fuzzProgress, 0);
  return 0;
}

/* The sources the bins are tried on: source and column of the table
** form, FROM and GROUP BY of the aggregate form. */
static const char *const azHistSrc[][4] = {
  { "t", "e", "t", "g % 2" },     { "t", "a", "t", "g < 4" },   { "t", "b", "t", "c IS NULL" },
  { "w", "v", "w", "n % 2" },     { "s", "x", "s", "id > 0" },  { "e", "x", "e", "y" },
  { "aux.u", "x", "aux.u", "g % 2" }, { "ax.p", "v", "ax.p", "g" },
  { "SELECT h FROM t WHERE g < 4", "h", "t WHERE g < 4", "h IS NULL" },
};

int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData){
  int eMode, s, nText;
  char *zText, *zSql;
  if( db==0 ) LLVMFuzzerInitialize(0, 0);
  if( nData<1 || nData>100000 ) return 0;
  eMode = aData[0] % 4;
  s = aData[0] / 4;
  nText = (int)(nData - 1);
  /* A copy with a terminating NUL (the input may hold NULs of its own:
  ** as SQL text it ends at the first, as a bound value it has them all). */
  zText = malloc(nData);
  if( zText==0 ) return 0;
  memcpy(zText, aData + 1, nText);
  zText[nText] = 0;

  nProgress = 0;
  zSql = sqlite3_mprintf(
      "DROP TABLE IF EXISTS temp.v;"
      "SELECT par_config('threads', %d), par_config('group_strategy', %d),"
      " par_config('parallel_extract', %d), par_config('min_rows', %d),"
      " par_config('memory_mb', 64), par_config('cache_mb', 16), par_cache_clear()",
      1 + (s/5)%3, s%5, (s/15)%2, s>=60 ? 1000000 : 0);
  if( zSql ) fuzzExecOrDie(zSql);
  sqlite3_free(zSql);

  switch( eMode ){
    case 0: {
      sqlite3_stmt *pStmt = 0;
      zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.v USING parallel('%q')", zText);
      if( bVerbose ) fprintf(stderr, "%s\n", zSql ? zSql : "(no memory)");
      nProgress = 0;
      if( zSql && sqlite3_exec(db, zSql, 0, 0, 0)==SQLITE_OK ){
        if( bVerbose ) fprintf(stderr, "SELECT * FROM v (twice)\n");
        if( sqlite3_prepare_v2(db, "SELECT * FROM v", -1, &pStmt, 0)==SQLITE_OK ){
          nProgress = 0;
          fuzzStep(pStmt);
          sqlite3_reset(pStmt);
          nProgress = 0;
          fuzzStep(pStmt);
        }
        sqlite3_finalize(pStmt);
      }else if( bVerbose ){
        fprintf(stderr, "  %s\n", sqlite3_errmsg(db));
      }
      sqlite3_free(zSql);
      break;
    }
    case 1:
      fuzzRun("SELECT par_explain(?1)", zText, nText);
      break;
    case 2: {
      /* One source per input (s picks it): a million bins take a while. */
      const char *const *az = azHistSrc[s % (sizeof(azHistSrc)/sizeof(azHistSrc[0]))];
      zSql = sqlite3_mprintf("SELECT * FROM par_histogram(%Q, %Q, %s)", az[0], az[1], zText);
      fuzzRun(zSql, 0, 0);
      sqlite3_free(zSql);
      zSql = sqlite3_mprintf("SELECT %s, par_histogram(%s, %s) FROM %s GROUP BY %s",
                             az[3], az[1], zText, az[2], az[3]);
      fuzzRun(zSql, 0, 0);
      sqlite3_free(zSql);
      zSql = sqlite3_mprintf("SELECT * FROM par_histogram(%Q, %Q, ?1)", az[0], az[1]);
      fuzzRun(zSql, zText, nText);
      sqlite3_free(zSql);
      zSql = sqlite3_mprintf("SELECT * FROM par_histogram(%Q, %Q, ?1, 'quantile')", az[0], az[1]);
      fuzzRun(zSql, zText, nText);
      sqlite3_free(zSql);
      fuzzRun("SELECT g % 2, par_histogram(a, ?1), par_histogram(e, ?1, 0, 10),"
              " par_percentile(b, ?1), par_median(a) FROM t GROUP BY g % 2", zText, nText);
      break;
    }
    case 3:
      fuzzRun("SELECT par_profile(?1)", zText, nText);
      break;
  }

  /* Clean up even after the progress handler stopped the input; free the
  ** cache and the blocks kept for reuse, which libFuzzer would otherwise
  ** count as memory the input did not give back (and run it again to
  ** look for a leak). */
  nProgress = 0;
  sqlite3_exec(db, "DROP TABLE IF EXISTS temp.v; SELECT par_cache_clear()", 0, 0, 0);
  free(zText);
  return 0;
}
