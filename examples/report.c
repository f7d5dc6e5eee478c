/*
** report.c: an application that loads the extension with
** sqlite3_load_extension(), creates a parallel view and prints its rows.
**
**   gcc -o build/report examples/report.c -lsqlite3
**   ./build/report [./parallel.so [database-file]]
**
** It makes its own data: 200,000 orders in a table of the database file
** (a temporary one by default, removed at the end), twice
** par_config('min_rows'), so the view reads and groups them in parallel.
** It prints a report per region and checks it against the same SELECT run
** natively by SQLite: the exit status is 0 only if every row agrees.
**
** How it works: the extension is loaded once per connection (loading
** SQL functions through SQL stays off: only the C API is enabled); a view
** is a virtual table in the temp schema whose argument is one SELECT; each
** scan of it runs the SELECT through the extension, and its rows come back
** through the ordinary sqlite3_step() loop.
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPORT_SQL \
  "SELECT region, count(*) AS orders, sum(cents) AS cents, " \
  "       round(avg(cents) / 100.0, 2) AS mean_dollars " \
  "  FROM orders WHERE year >= 2022 GROUP BY region"

/* Run SQL that returns no rows; on an error print it and return it. */
static int execOrReport(sqlite3 *db, const char *zSql){
  char *zErr = 0;
  int rc = sqlite3_exec(db, zSql, 0, 0, &zErr);
  if( rc!=SQLITE_OK ){
    fprintf(stderr, "report: %s\n  in: %s\n", zErr ? zErr : sqlite3_errstr(rc), zSql);
    sqlite3_free(zErr);
  }
  return rc;
}

/* Print every row of zSql, one line each, columns separated by " | ",
** and return the number of rows (-1 on an error). */
static int printRows(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt = 0;
  int nRow = 0, rc, i;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)!=SQLITE_OK ){
    fprintf(stderr, "report: %s\n", sqlite3_errmsg(db));
    return -1;
  }
  for(i=0; i<sqlite3_column_count(pStmt); i++){
    printf("%s%s", i ? " | " : "  ", sqlite3_column_name(pStmt, i));
  }
  printf("\n");
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    for(i=0; i<sqlite3_column_count(pStmt); i++){
      const unsigned char *z = sqlite3_column_text(pStmt, i);
      printf("%s%s", i ? " | " : "  ", z ? (const char*)z : "NULL");
    }
    printf("\n");
    nRow++;
  }
  if( rc!=SQLITE_DONE ){
    fprintf(stderr, "report: %s\n", sqlite3_errmsg(db));
    nRow = -1;
  }
  sqlite3_finalize(pStmt);
  return nRow;
}

/* The first column of the first row of zSql as an integer (-1 on an error). */
static sqlite3_int64 queryInt(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 v = -1;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    v = sqlite3_column_int64(pStmt, 0);
  }else{
    fprintf(stderr, "report: %s\n", sqlite3_errmsg(db));
  }
  sqlite3_finalize(pStmt);
  return v;
}

int main(int argc, char **argv){
  const char *zExt = argc>1 ? argv[1] : "./parallel.so";
  char zPath[] = "/tmp/report_XXXXXX";
  const char *zDb = argc>2 ? argv[2] : 0;
  sqlite3 *db = 0;
  char *zErr = 0;
  int rc = 1, nRow;
  sqlite3_int64 nDiff;

  if( zDb==0 ){
    int fd = mkstemp(zPath);
    if( fd<0 ){ perror("report: mkstemp"); return 1; }
    close(fd);
    zDb = zPath;
  }
  if( sqlite3_open(zDb, &db)!=SQLITE_OK ){
    fprintf(stderr, "report: cannot open %s: %s\n", zDb, sqlite3_errmsg(db));
    goto done;
  }

  /* Enable sqlite3_load_extension() alone (not SQL's load_extension()),
  ** load the library, and disable it again. */
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 1, (int*)0);
  if( sqlite3_load_extension(db, zExt, 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "report: cannot load %s: %s\n", zExt, zErr);
    sqlite3_free(zErr);
    goto done;
  }
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int*)0);

  /* The data: WAL mode lets the extension's worker connections read the
  ** file in parallel while this connection holds it open. */
  if( execOrReport(db,
        "PRAGMA journal_mode = WAL;"
        "DROP TABLE IF EXISTS orders;"
        "CREATE TABLE orders(id INTEGER PRIMARY KEY, region TEXT, year INT, cents INT);"
        "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 200000)"
        " INSERT INTO orders SELECT i,"
        "   CASE i % 4 WHEN 0 THEN 'north' WHEN 1 THEN 'south' WHEN 2 THEN 'east'"
        "              ELSE 'west' END,"
        "   2019 + (i * 13) % 6, (i * 7919) % 100000 FROM s;") ) goto done;

  /* The parallel view: its argument is the SELECT, quoted as an SQL string
  ** (REPORT_SQL has no quotes of its own to double). */
  if( execOrReport(db, "CREATE VIRTUAL TABLE temp.report USING parallel('" REPORT_SQL "')") ){
    goto done;
  }
  printf("Orders per region since 2022 (a parallel view):\n");
  nRow = printRows(db, "SELECT * FROM report ORDER BY region");
  if( nRow<0 ) goto done;

  /* The same SELECT run natively: no row may differ, either way. */
  nDiff = queryInt(db,
      "SELECT (SELECT count(*) FROM (SELECT * FROM report EXCEPT " REPORT_SQL "))"
      "     + (SELECT count(*) FROM (" REPORT_SQL " EXCEPT SELECT * FROM report))"
      "     + abs((SELECT count(*) FROM report) - (SELECT count(*) FROM (" REPORT_SQL ")))");
  printf("%d rows; rows that differ from native SQLite: %lld\n", nRow, (long long)nDiff);
  rc = nDiff==0 ? 0 : 1;

done:
  sqlite3_close(db);
  if( zDb==zPath ){
    char zSide[sizeof(zPath) + 8];
    unlink(zPath);
    snprintf(zSide, sizeof(zSide), "%s-wal", zPath);
    unlink(zSide);
    snprintf(zSide, sizeof(zSide), "%s-shm", zPath);
    unlink(zSide);
  }
  return rc;
}
