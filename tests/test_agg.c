/*
** test_agg.c: agg.c's window-shaped use (step a row, remove the oldest,
** read the value) against SQLite's own window functions.
**
** For random columns (integers with values near the int64 limits, REALs,
** TEXT that reads as an integer, a real or neither, BLOBs, NULLs, in
** every mix) extracted with parBatchFromSql, each of count(*), count(x),
** sum(x), total(x) and avg(x) over frames ROWS BETWEEN w-1 PRECEDING AND
** CURRENT ROW (w = 1, 2, 3, 7, and all rows: no removals) is computed with
** parAggStep() / parAggInverse() / parAggValue() on one sequential state
** and compared with
**   SELECT f(x) OVER (ORDER BY id ROWS BETWEEN w-1 PRECEDING AND CURRENT ROW)
** row by row: storage class and bits (doubles bit for bit).  Where
** parAggValue() reports an integer overflow, SQLite's statement must fail
** with "integer overflow".  Also: min, max and group_concat have no
** inverse (SQLITE_MISUSE).
**
**   make build/test_agg && ./build/test_agg
*/
#include "check.h"
#include "agg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *db;

static void exec(const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr) ){
    fprintf(stderr, "SQL error: %s\n  in: %s\n", zErr, zSql);
    exit(2);
  }
}

/* Table t(id, x) of nRow rows, the values of x drawn from the classes in
** mClass (bit 1<<SQLITE_INTEGER etc., 1<<SQLITE_NULL for NULL). */
static void makeTable(check_rng *r, int nRow, int mClass, int bBig){
  static const sqlite3_int64 aBig[] = {
    INT64_MAX, INT64_MIN, INT64_MAX-1, INT64_MIN+1, 4611686018427387905LL,
    -4611686018427387905LL, 9007199254740993LL, -9007199254740993LL,
  };
  static const char *azText[] = {
    "12", "-7", " 3 ", "1.5", "1e3", "abc", "", "9223372036854775807", "0x10", "2.5x",
  };
  sqlite3_stmt *pIns;
  int i;
  exec("DROP TABLE IF EXISTS t; CREATE TABLE t(id INTEGER PRIMARY KEY, x)");
  exec("BEGIN");
  sqlite3_prepare_v2(db, "INSERT INTO t(id, x) VALUES(?1, ?2)", -1, &pIns, 0);
  for(i=0; i<nRow; i++){
    int e;
    do{ e = 1 + (int)check_below(r, 5); }while( !(mClass & (1<<e)) );
    sqlite3_bind_int(pIns, 1, i+1);
    switch( e ){
      case SQLITE_INTEGER:
        if( bBig && check_below(r, 4)==0 ){
          sqlite3_bind_int64(pIns, 2, aBig[check_below(r, sizeof(aBig)/sizeof(aBig[0]))]);
        }else{
          sqlite3_bind_int64(pIns, 2, (sqlite3_int64)check_below(r, 2001) - 1000);
        }
        break;
      case SQLITE_FLOAT:
        sqlite3_bind_double(pIns, 2, ((double)check_below(r, 1u<<30) - (1<<29)) / 7.0
                                     * (check_below(r, 8)==0 ? 1e15 : 1.0));
        break;
      case SQLITE_TEXT:
        sqlite3_bind_text(pIns, 2, azText[check_below(r, sizeof(azText)/sizeof(azText[0]))],
                          -1, SQLITE_STATIC);
        break;
      case SQLITE_BLOB:
        sqlite3_bind_blob(pIns, 2, "42", 2, SQLITE_STATIC);
        break;
      default:
        sqlite3_bind_null(pIns, 2);
        break;
    }
    sqlite3_step(pIns);
    sqlite3_reset(pIns);
  }
  sqlite3_finalize(pIns);
  exec("COMMIT");
}

static const struct { int eFunc; const char *zName; } aFunc[] = {
  { PAR_AGG_COUNT_STAR, "count(*)" }, { PAR_AGG_COUNT, "count(x)" },
  { PAR_AGG_SUM, "sum(x)" }, { PAR_AGG_TOTAL, "total(x)" }, { PAR_AGG_AVG, "avg(x)" },
};

/* Function iFunc over frames of w rows (0: all rows so far) of batch pB's
** column 0, against SQLite. */
static void checkFrames(ParBatch *pB, int iFunc, int w){
  ParPlanAgg agg;
  ParAggRun run;
  ParAcc acc;
  ParColumn out;
  sqlite3_int64 n = pB->nRow, i;
  sqlite3_stmt *pStmt = 0;
  char *zSql, zFrame[16] = "UNBOUNDED";
  int rc, bOverflow = 0;

  memset(&agg, 0, sizeof(agg));
  agg.eFunc = aFunc[iFunc].eFunc;
  agg.iArg = agg.eFunc==PAR_AGG_COUNT_STAR ? -1 : 0;
  agg.iText = agg.iSep = -1;
  agg.eColl = -1;
  memset(&run, 0, sizeof(run));
  memset(&out, 0, sizeof(out));
  out.eStore = PAR_COL_MIXED;
  out.aType = malloc((size_t)n+1);
  out.aVal = malloc(8*((size_t)n+1));
  check_case("%s over %d rows, frames of %d", aFunc[iFunc].zName, (int)n, w);
  rc = parAggRunInit(db, &agg, pB->aCol, n, 1, &run);
  CHECK(rc==SQLITE_OK, "parAggRunInit: %d", rc);
  if( agg.eFunc==PAR_AGG_SUM || agg.eFunc==PAR_AGG_TOTAL || agg.eFunc==PAR_AGG_AVG ){
    run.bSeq = 1;                /* as a window operator asks (agg.c rule 6) */
  }
  parAccInit(&acc);
  for(i=0; i<n && rc==SQLITE_OK; i++){
    /* SQLite removes the row that leaves the frame before it adds the
    ** next one: the order decides a REAL sum's bits. */
    if( w>0 && i>=w ){
      rc = parAggInverse(&run, &acc, i-w);
      CHECK(rc==SQLITE_OK, "parAggInverse: %d", rc);
    }
    parAggStep(&run, &acc, i);
    bOverflow |= parAggValue(&run, &acc, &out, i);
  }

  if( w>0 ) sqlite3_snprintf(sizeof(zFrame), zFrame, "%d", w-1);
  zSql = sqlite3_mprintf("SELECT %s OVER (ORDER BY id ROWS BETWEEN %s PRECEDING AND "
                         "CURRENT ROW) FROM t ORDER BY id", aFunc[iFunc].zName, zFrame);
  sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  for(i=0; rc==SQLITE_OK && (rc = sqlite3_step(pStmt))==SQLITE_ROW; i++, rc = SQLITE_OK){
    int e = sqlite3_column_type(pStmt, 0);
    CHECK(i<n, "more rows than %lld", (long long)n);
    if( i>=n ) break;
    CHECK(out.aType[i]==e, "row %lld: type %d, SQLite %d", (long long)i, out.aType[i], e);
    if( out.aType[i]!=e ) break;
    if( e==SQLITE_INTEGER ){
      sqlite3_int64 v = sqlite3_column_int64(pStmt, 0);
      CHECK((sqlite3_int64)out.aVal[i]==v, "row %lld: %lld, SQLite %lld", (long long)i,
            (long long)out.aVal[i], (long long)v);
    }else if( e==SQLITE_FLOAT ){
      double v = sqlite3_column_double(pStmt, 0), x;
      memcpy(&x, &out.aVal[i], 8);
      CHECK(memcmp(&x, &v, 8)==0, "row %lld: %.17g, SQLite %.17g", (long long)i, x, v);
    }
  }
  if( bOverflow ){
    CHECK(rc==SQLITE_ERROR && strcmp(sqlite3_errmsg(db), "integer overflow")==0,
          "overflow: SQLite gave %d %s", rc, sqlite3_errmsg(db));
  }else{
    CHECK(rc==SQLITE_DONE && i==n, "SQLite: rc %d (%s) after %lld of %lld rows", rc,
          sqlite3_errmsg(db), (long long)i, (long long)n);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  parAggRunClear(&run);
  free(out.aType);
  free(out.aVal);
}

/* min, max and group_concat: no inverse. */
static void checkNoInverse(ParBatch *pB){
  static const int aNo[] = { PAR_AGG_MIN, PAR_AGG_MAX, PAR_AGG_GROUP_CONCAT };
  int k;
  check_case("no inverse for min, max, group_concat");
  for(k=0; k<3; k++){
    ParAggRun run;
    ParPlanAgg agg;
    ParAcc acc;
    memset(&run, 0, sizeof(run));
    memset(&agg, 0, sizeof(agg));
    agg.eFunc = aNo[k];
    run.pAgg = &agg;
    run.pArg = &pB->aCol[0];
    parAccInit(&acc);
    CHECK(parAggInverse(&run, &acc, 0)==SQLITE_MISUSE, "function %d", aNo[k]);
  }
}

int main(int argc, char **argv){
  static const int aClass[] = {
    1<<SQLITE_INTEGER, (1<<SQLITE_INTEGER)|(1<<SQLITE_NULL), 1<<SQLITE_FLOAT,
    (1<<SQLITE_INTEGER)|(1<<SQLITE_FLOAT)|(1<<SQLITE_NULL),
    (1<<SQLITE_TEXT)|(1<<SQLITE_INTEGER), 0x3e, 1<<SQLITE_NULL,
  };
  static const int aW[] = { 1, 2, 3, 7, 0 };
  check_rng r = { check_seed() };
  int c, f, k, bBig;

  if( sqlite3_open(":memory:", &db) ) return 2;
  for(bBig=0; bBig<2; bBig++){
    for(c=0; c<(int)(sizeof(aClass)/sizeof(aClass[0])); c++){
      ParBatch *pB = 0;
      char *zErr = 0;
      int rc;
      makeTable(&r, 1 + (int)check_below(&r, 300), aClass[c], bBig);
      rc = parBatchFromSql(db, "SELECT x FROM t ORDER BY id", 0, 0, &pB, &zErr);
      check_case("extract classes 0x%x", aClass[c]);
      CHECK(rc==SQLITE_OK, "parBatchFromSql: %s", zErr ? zErr : "?");
      sqlite3_free(zErr);
      if( rc ) continue;
      for(f=0; f<(int)(sizeof(aFunc)/sizeof(aFunc[0])); f++){
        for(k=0; k<(int)(sizeof(aW)/sizeof(aW[0])); k++) checkFrames(pB, f, aW[k]);
      }
      if( c==0 && bBig==0 ) checkNoInverse(pB);
      parBatchFree(pB);
    }
  }
  sqlite3_close(db);
  return check_summary("agg");
}
