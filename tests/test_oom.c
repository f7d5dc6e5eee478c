/*
** test_oom.c: every allocation the extension makes may fail.
**
**   build/test_oom ./parallel.so
**
** SQLite's allocator is replaced by one that fails the Nth allocation
** after it is armed.  For each statement below, a child process opens a
** database file, loads the extension, arms the failure and runs the
** statement: it must succeed or fail with an error (never crash, which
** the sanitizers of build/asan/test_oom also watch), and then the same
** connection must run it again, unarmed, to the answer of a run without
** failures; after par_cache_clear() (which also frees the blocks batch.c
** keeps for reuse) and sqlite3_close() no allocation may be left.  N takes every value up to
** OOM_DENSE and then OOM_STEPS values spread over the statement's
** allocations (OOM_STEPS from the environment: more of them).
**
** Children: the parent never loads the extension (OpenMP's threads do not
** survive fork()), and each child runs one N.
*/
#include "check.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define OOM_DENSE 60

/* ---- the allocator ----------------------------------------------------------- */

static long nCall;          /* allocations since armed */
static long nFailAt;        /* the one that fails (0: none) */
static int bArmed;
static long nLive;          /* allocations not freed */

static void *oomMalloc(int n){
  long *p;
  if( bArmed && ++nCall==nFailAt ) return 0;
  p = malloc((size_t)n + 16);
  if( p==0 ) return 0;
  p[0] = n;
  nLive++;
  return p + 2;
}
static void oomFree(void *q){
  if( q==0 ) return;
  nLive--;
  free((long*)q - 2);
}
static int oomSize(void *q){ return q ? (int)((long*)q)[-2] : 0; }
static void *oomRealloc(void *q, int n){
  long *p;
  if( q==0 ) return oomMalloc(n);
  if( bArmed && ++nCall==nFailAt ) return 0;
  p = realloc((long*)q - 2, (size_t)n + 16);
  if( p==0 ) return 0;
  p[0] = n;
  return p + 2;
}
static int oomRoundup(int n){ return (n + 7) & ~7; }
static int oomInit(void *p){ (void)p; return 0; }
static void oomShutdown(void *p){ (void)p; }
static const sqlite3_mem_methods oomMethods = {
  oomMalloc, oomFree, oomRealloc, oomSize, oomRoundup, oomInit, oomShutdown, 0
};

/* ---- the statements --------------------------------------------------------- */

static const char *zExt, *zPath;

/* Run once on each new connection, unarmed. */
static const char *zSetup =
  "SELECT par_config('min_rows', 0);"
  "CREATE VIRTUAL TABLE temp.v USING parallel('SELECT g, count(*), sum(k), min(s), "
  "group_concat(s) FROM t GROUP BY g HAVING count(*) > 1 ORDER BY 2 DESC, 1');";

/* Each statement, and the query whose answer shows what it did (NULL:
** the statement's own rows). */
static const struct OomStmt { const char *zSql, *zCheck; } aStmt[] = {
  { "CREATE VIRTUAL TABLE temp.w USING parallel('SELECT s COLLATE NOCASE AS c, g % 3, "
    "count(DISTINCT k), max(r), avg(r) FROM t WHERE k > 2 GROUP BY 1, 2 ORDER BY 3, 1 DESC')",
    "SELECT * FROM w" },
  { "SELECT * FROM v", 0 },
  { "SELECT * FROM v, (SELECT 1 UNION SELECT 2)", 0 },
  { "SELECT d.name, count(*), sum(t.k) FROM t JOIN d ON d.id = t.g GROUP BY d.name", 0 },
  { "SELECT par_explain('SELECT g, sum(k) FROM t GROUP BY g')", 0 },
  { "SELECT * FROM par_histogram('t', 'r', 4)", 0 },
  { "SELECT g, par_median(r), par_percentile(r, 90), par_histogram(r, 2) FROM t GROUP BY g", 0 },
  { "SELECT source, columns, rows FROM par_cache", 0 },
};
#define N_STMT ((int)(sizeof(aStmt)/sizeof(aStmt[0])))

/* Text appended to a malloc'd buffer: the harness's own memory is not
** SQLite's, so no failure is injected into it. */
typedef struct Text { char *z; size_t n, nAlloc; } Text;
static void textAppend(Text *p, const char *z){
  size_t n = strlen(z);
  if( p->n + n + 1 > p->nAlloc ){
    p->nAlloc = (p->n + n + 1)*2;
    p->z = realloc(p->z, p->nAlloc);
    if( p->z==0 ) _exit(2);
  }
  memcpy(p->z + p->n, z, n + 1);
  p->n += n;
}

/* The rows of zSql, as text (malloc), or NULL with *pRc set when it
** fails. */
static char *runText(sqlite3 *db, const char *zSql, int *pRc){
  sqlite3_stmt *p = 0;
  Text out = { 0, 0, 0 };
  int rc, i;
  textAppend(&out, "");
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  while( rc==SQLITE_OK && (rc = sqlite3_step(p))==SQLITE_ROW ){
    for(i=0; i<sqlite3_column_count(p); i++){
      const unsigned char *zVal = sqlite3_column_text(p, i);
      if( zVal==0 && sqlite3_column_type(p, i)!=SQLITE_NULL ){ rc = SQLITE_NOMEM; break; }
      textAppend(&out, zVal ? (const char*)zVal : "NULL");
      textAppend(&out, "|");
    }
    if( rc==SQLITE_ROW ) rc = SQLITE_OK;
    textAppend(&out, "\n");
  }
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  sqlite3_finalize(p);
  *pRc = rc;
  if( rc ){
    free(out.z);
    return 0;
  }
  return out.z;
}

static sqlite3 *openLoaded(void){
  sqlite3 *db = 0;
  char *zErr = 0;
  if( sqlite3_open(zPath, &db) ) _exit(2);
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, zExt, 0, &zErr) ){
    fprintf(stderr, "cannot load %s: %s\n", zExt, zErr);
    _exit(2);
  }
  if( sqlite3_exec(db, zSetup, 0, 0, &zErr) ){
    fprintf(stderr, "setup: %s\n", zErr);
    _exit(2);
  }
  return db;
}

/* In a child: report and end with status 1 (_exit flushes nothing). */
static void childFail(const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  printf("  ");
  vprintf(zFmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  _exit(1);
}

/* Does the error of a statement that failed under an injected allocation
** failure say so?  SQLite's own "no such table" counts too: a CREATE it
** rolled back leaves none. */
static int namesFailure(sqlite3 *db, int rc){
  const char *zMsg = sqlite3_errmsg(db);
  return rc==SQLITE_NOMEM || sqlite3_errcode(db)==SQLITE_NOMEM
      || strstr(zMsg, "memory")!=0 || strstr(zMsg, "no such")!=0;
}

/* Child: statement iStmt with allocation nFail failing (0: none).
** Writes to fd: the allocations the statement made, then the answer.
** Exit status 0, or 1 when something checked went wrong (printed). */
static void child(int iStmt, long nFail, int fd){
  const struct OomStmt *pS = &aStmt[iStmt];
  sqlite3 *db;
  char *zFirst, *zAgain;
  int rc;
  long nBefore = nLive, nMade;
  db = openLoaded();
  nCall = 0;
  nFailAt = nFail;
  bArmed = 1;
  zFirst = runText(db, pS->zSql, &rc);
  bArmed = 0;
  nMade = nCall;
  if( zFirst==0 && !namesFailure(db, rc) ){
    childFail("N=%ld: %s failed with: %s", nFail, pS->zSql, sqlite3_errmsg(db));
  }
  /* Unarmed, the connection must work: a statement that failed runs
  ** again, then the answer the parent compares. */
  if( zFirst==0 && pS->zCheck ){
    zFirst = runText(db, pS->zSql, &rc);
    if( zFirst==0 ){
      childFail("N=%ld: %s then failed again unarmed: %s", nFail, pS->zSql,
                sqlite3_errmsg(db));
    }
  }
  zAgain = runText(db, pS->zCheck ? pS->zCheck : pS->zSql, &rc);
  if( zAgain==0 ){
    childFail("N=%ld: %s then failed again unarmed: %s", nFail, pS->zSql, sqlite3_errmsg(db));
  }
  if( write(fd, &nMade, sizeof(nMade))!=(ssize_t)sizeof(nMade)
   || write(fd, zAgain, strlen(zAgain))<0 ){
    _exit(2);
  }
  free(zFirst);
  free(zAgain);
  /* Blocks kept for reuse are the process's, not the connection's. */
  sqlite3_exec(db, "SELECT par_cache_clear()", 0, 0, 0);
  if( sqlite3_close(db)!=SQLITE_OK ){
    childFail("N=%ld: sqlite3_close: %s", nFail, sqlite3_errmsg(db));
  }
  if( nLive!=nBefore ){
    childFail("N=%ld: %s: %ld allocations left after close", nFail, aStmt[iStmt].zSql,
              nLive - nBefore);
  }
  _exit(0);
}

/* Run child(iStmt, nFail) in a process; its answer (malloc) in *pzAnswer
** and its allocation count in *pnMade.  0 when it went well. */
static int runChild(int iStmt, long nFail, long *pnMade, char **pzAnswer){
  int aFd[2], st;
  pid_t pid;
  size_t n = 0, nAlloc = 256;
  char *z = malloc(nAlloc);
  ssize_t got;
  if( z==0 || pipe(aFd) ) return 2;
  fflush(stdout);
  pid = fork();
  if( pid==0 ){
    close(aFd[0]);
    child(iStmt, nFail, aFd[1]);
  }
  close(aFd[1]);
  *pnMade = 0;
  if( read(aFd[0], pnMade, sizeof(*pnMade))!=(ssize_t)sizeof(*pnMade) ) *pnMade = -1;
  while( (got = read(aFd[0], z + n, nAlloc - n - 1))>0 ){
    n += (size_t)got;
    if( nAlloc - n < 2 ){
      char *zNew = realloc(z, nAlloc *= 2);
      if( zNew==0 ) break;
      z = zNew;
    }
  }
  z[n] = 0;
  close(aFd[0]);
  waitpid(pid, &st, 0);
  *pzAnswer = z;
  if( WIFSIGNALED(st) ){
    printf("  N=%ld: %s: killed by signal %d\n", nFail, aStmt[iStmt].zSql, WTERMSIG(st));
    return 1;
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* The database: t (mixed values, NULLs) and d, written without the
** extension. */
static void makeDatabase(void){
  sqlite3 *db;
  char *zErr = 0;
  unlink(zPath);
  if( sqlite3_open(zPath, &db)
   || sqlite3_exec(db,
        "PRAGMA journal_mode=WAL;"
        "CREATE TABLE t(g INTEGER, k, s TEXT, r REAL);"
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<300) "
        "INSERT INTO t SELECT i % 7, CASE WHEN i % 11 = 0 THEN NULL WHEN i % 13 = 0 THEN 'x' "
        "ELSE i * 3 END, CASE i % 4 WHEN 0 THEN 'a' WHEN 1 THEN 'A' WHEN 2 THEN 'b ' END, "
        "i * 0.25 FROM c;"
        "CREATE TABLE d(id INTEGER PRIMARY KEY, name TEXT);"
        "INSERT INTO d VALUES(0, 'zero'), (1, 'one'), (2, 'two'), (3, 'one');",
        0, 0, &zErr) ){
    fprintf(stderr, "cannot make %s: %s\n", zPath, zErr ? zErr : sqlite3_errmsg(db));
    exit(2);
  }
  sqlite3_close(db);
}

int main(int argc, char **argv){
  char zTmp[] = "/tmp/par_oom_XXXXXX";
  char *zDir, zDb[64];
  int i, nSteps = getenv("OOM_STEPS") ? atoi(getenv("OOM_STEPS")) : 60;
  if( argc<2 ){
    fprintf(stderr, "usage: %s EXTENSION\n", argv[0]);
    return 2;
  }
  zExt = argv[1];
  zDir = mkdtemp(zTmp);
  if( zDir==0 ) return 2;
  snprintf(zDb, sizeof(zDb), "%s/oom.db", zDir);
  zPath = zDb;
  sqlite3_config(SQLITE_CONFIG_MALLOC, &oomMethods);
  sqlite3_initialize();
  makeDatabase();
  if( getenv("OOM_CHILD") ){
    /* One statement and N in this process, for a debugger. */
    child(getenv("OOM_STMT") ? atoi(getenv("OOM_STMT")) : 0, atol(getenv("OOM_CHILD")), 1);
  }
  for(i=0; i<N_STMT; i++){
    char *zWant = 0;
    if( getenv("OOM_STMT") && atoi(getenv("OOM_STMT"))!=i ) continue;
    long nTotal = 0, nFail, nStep, nMade;
    check_case("every allocation of: %s", aStmt[i].zSql);
    if( runChild(i, 0, &nTotal, &zWant) || nTotal<=0 ){
      CHECK(0, "the statement fails without an allocation failure");
      free(zWant);
      continue;
    }
    nStep = nTotal>OOM_DENSE ? (nTotal - OOM_DENSE)/nSteps + 1 : 1;
    for(nFail=1; nFail<=nTotal && !check_case_failed();
        nFail += nFail<OOM_DENSE ? 1 : nStep){
      char *zGot = 0;
      int rc = runChild(i, nFail, &nMade, &zGot);
      CHECK(rc==0, "allocation %ld of %ld failing: see above", nFail, nTotal);
      CHECK(rc!=0 || strcmp(zGot, zWant)==0, "allocation %ld failing: then\n%s\nnot\n%s",
            nFail, zGot, zWant);
      free(zGot);
    }
    free(zWant);
  }
  for(i=0; i<4; i++){
    static const char *azSuffix[] = { "", "-wal", "-shm", "-journal" };
    char zFile[80];
    snprintf(zFile, sizeof(zFile), "%s%s", zDb, azSuffix[i]);
    unlink(zFile);
  }
  rmdir(zDir);
  return check_summary("oom");
}
