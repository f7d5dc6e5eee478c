/*
** test_batch.c: columnar extraction and sort keys against SQLite itself.
**
** 1. Round trip: random tables whose columns mix all five storage classes
**    (and pure ones, all-NULL ones, empty tables) are extracted with
**    parBatchFromSql; every value must equal what SQLite returns for the
**    same SELECT, storage class and bytes (doubles bit for bit), both read
**    from the arrays and handed back through parColumnResult.
** 2. Sort keys: for each column, collation and direction, the dense rank
**    that our keys give every row must equal SQLite's own
**    dense_rank() OVER (ORDER BY c COLLATE x [DESC] NULLS FIRST|LAST),
**    and be the same at 1, 2 and 3 threads.
** 3. Errors: statements that are not a single read-only query, SQL errors,
**    the memory limit.
** 4. A sink that stops its statement after a number of rows, inside one
**    read transaction while another connection commits.
** 5. Dictionary: values of every length up to 40 bytes differing in one
**    byte at every position, TEXT and BLOB, and many random short values
**    with repeats, against a plain search of the values seen so far: equal
**    values (kind and bytes) get the same code, others new codes in order.
** 6. Merged dictionaries: a table read in 1 to 512 rowid ranges, joined by
**    parBatchConcat at 1, 2, 3 and 8 threads (serially or in parallel),
**    gives the dictionaries, codes and memory count of the serial merge
**    (parDictAdd in piece order), array for array.
*/
#include "check.h"
#include "batch.h"
#include "sort.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sqlite3 *db;

static void exec(const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr) ){
    fprintf(stderr, "SQL error: %s\n  in: %s\n", zErr, zSql);
    exit(2);
  }
}

/* ---- random data ---------------------------------------------------------- */

static const sqlite3_int64 aIntEdge[] = {
  0, 1, -1, 2, INT64_MAX, INT64_MIN, INT64_MAX-1, INT64_MIN+1,
  9007199254740992LL, 9007199254740993LL, -9007199254740993LL,
  9223372036854774784LL, 9223372036854774785LL, 4611686018427387905LL,
};
static const double aRealEdge[] = {
  0.0, -0.0, 1.0, -1.0, 0.5, 1e308, -1e308, 5e-324, -5e-324, 2.2250738585072014e-308,
  9007199254740992.0, 9223372036854775808.0, -9223372036854775808.0,
  9223372036854774784.0, 1e19, HUGE_VAL, -HUGE_VAL, 3.14159,
};
static const char *azTextEdge[] = {
  "", "a", "A", "a ", "a  ", "b", "B", " a", "ab", "aB", "Ab", "abc", "z",
  "\xc3\xa9", "\xc3\x89", "E", "e", "10", "9", "1.0", "-", "~", "a\tb",
};

/* Bind a random value of one of the classes allowed by mClass (bit
** 1<<SQLITE_INTEGER etc.; bit 1<<SQLITE_NULL for NULL). */
static void bindRandom(sqlite3_stmt *pStmt, int iParam, check_rng *r, int mClass){
  int e;
  do{ e = 1 + (int)check_below(r, 5); }while( !(mClass & (1<<e)) );
  switch( e ){
    case SQLITE_INTEGER: {
      sqlite3_int64 v;
      switch( check_below(r, 4) ){
        case 0: v = aIntEdge[check_below(r, sizeof(aIntEdge)/sizeof(aIntEdge[0]))]; break;
        case 1: v = (sqlite3_int64)check_below(r, 7) - 3; break;
        case 2: v = (sqlite3_int64)check_next(r); break;
        default: v = (sqlite3_int64)check_below(r, 2000) - 1000; break;
      }
      sqlite3_bind_int64(pStmt, iParam, v);
      break;
    }
    case SQLITE_FLOAT: {
      double v;
      switch( check_below(r, 4) ){
        case 0: v = aRealEdge[check_below(r, sizeof(aRealEdge)/sizeof(aRealEdge[0]))]; break;
        case 1: v = (double)((sqlite3_int64)check_below(r, 7) - 3); break;
        case 2: {
          uint64_t bits = check_next(r);
          memcpy(&v, &bits, 8);
          if( isnan(v) ) v = 0.25;
          break;
        }
        default: v = ((double)check_below(r, 2000) - 1000) / 8; break;
      }
      sqlite3_bind_double(pStmt, iParam, v);
      break;
    }
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
      char buf[16];
      int n, i;
      if( check_below(r, 2)==0 ){
        const char *z = azTextEdge[check_below(r, sizeof(azTextEdge)/sizeof(azTextEdge[0]))];
        n = (int)strlen(z);
        memcpy(buf, z, n);
      }else{
        n = (int)check_below(r, 6);
        for(i=0; i<n; i++){
          /* Mostly letters and spaces, sometimes any byte (NUL included,
          ** which matters to NOCASE).  Keep text valid UTF-8: ASCII. */
          int c = (int)check_below(r, 10);
          buf[i] = c<4 ? "aAbB"[c] : c<6 ? ' ' : c<8 ? 'a'+(char)check_below(r, 26)
                 : (char)check_below(r, e==SQLITE_TEXT ? 128 : 256);
        }
      }
      if( e==SQLITE_TEXT ) sqlite3_bind_text(pStmt, iParam, buf, n, SQLITE_TRANSIENT);
      else sqlite3_bind_blob(pStmt, iParam, buf, n, SQLITE_TRANSIENT);
      break;
    }
    default:
      sqlite3_bind_null(pStmt, iParam);
      break;
  }
}

#define M_NULL (1<<SQLITE_NULL)
#define M_INT  (1<<SQLITE_INTEGER)
#define M_REAL (1<<SQLITE_FLOAT)
#define M_TEXT (1<<SQLITE_TEXT)
#define M_BLOB (1<<SQLITE_BLOB)
#define M_ALL  (M_NULL|M_INT|M_REAL|M_TEXT|M_BLOB)

/* Column profiles of the random table t(c0..c9). */
static const int aProfile[] = {
  M_INT, M_INT|M_NULL, M_REAL, M_REAL|M_NULL, M_TEXT|M_NULL, M_ALL,
  M_NULL, M_BLOB, M_INT|M_REAL, M_TEXT|M_BLOB|M_NULL,
};
static const int aProfileStore[] = {
  PAR_COL_INT, PAR_COL_INT, PAR_COL_REAL, PAR_COL_REAL, PAR_COL_TEXT,
  PAR_COL_MIXED, PAR_COL_NULL, PAR_COL_MIXED, PAR_COL_MIXED, PAR_COL_MIXED,
};
#define N_PROFILE (int)(sizeof(aProfile)/sizeof(aProfile[0]))

/* (Re)create t with nRow random rows.  Columns have no declared type, so
** no affinity changes the values bound. */
static void makeTable(check_rng *r, int nRow){
  sqlite3_stmt *pIns;
  int i, j;
  exec("DROP TABLE IF EXISTS t;"
       "CREATE TABLE t(c0, c1, c2, c3 REAL, c4 TEXT, c5, c6, c7 BLOB, c8, c9)");
  exec("BEGIN");
  sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?,?,?,?,?,?,?,?,?,?)", -1, &pIns, 0);
  for(i=0; i<nRow; i++){
    for(j=0; j<N_PROFILE; j++) bindRandom(pIns, j+1, r, aProfile[j]);
    sqlite3_step(pIns);
    sqlite3_reset(pIns);
  }
  sqlite3_finalize(pIns);
  exec("COMMIT");
}

/* ---- round trip ------------------------------------------------------------ */

/* The batch that the SQL function bv(col, row) reads. */
static ParBatch *pCurBatch;
static void bvFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int iCol = sqlite3_value_int(argv[0]);
  sqlite3_int64 iRow = sqlite3_value_int64(argv[1]);
  parColumnResult(&pCurBatch->aCol[iCol], iRow, ctx);
}

/* Does value (eType, pVal) from SQLite equal row iRow of pCol, read from
** the arrays? */
static int sameValue(const ParColumn *pCol, sqlite3_int64 iRow, sqlite3_value *pVal){
  int eType = sqlite3_value_type(pVal);
  uint64_t v = pCol->eStore==PAR_COL_MIXED ? pCol->aVal[iRow] : 0;
  if( parColumnType(pCol, iRow)!=eType ) return 0;
  /* MIXED types hold NULL too (kernels read aType alone), and a NULL's
  ** number slot holds 0. */
  if( pCol->eStore==PAR_COL_MIXED && pCol->aType[iRow]!=eType ) return 0;
  if( eType==SQLITE_NULL ){
    switch( pCol->eStore ){
      case PAR_COL_INT:   return pCol->aInt[iRow]==0;
      case PAR_COL_REAL:  return pCol->aReal[iRow]==0;
      case PAR_COL_MIXED: return v==0;
    }
  }
  switch( eType ){
    case SQLITE_INTEGER:
      return sqlite3_value_int64(pVal) ==
             (pCol->eStore==PAR_COL_INT ? pCol->aInt[iRow] : (sqlite3_int64)v);
    case SQLITE_FLOAT: {
      double a = sqlite3_value_double(pVal), b;
      if( pCol->eStore==PAR_COL_REAL ) b = pCol->aReal[iRow];
      else memcpy(&b, &v, 8);
      return memcmp(&a, &b, 8)==0;
    }
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
      const ParDict *pD = pCol->pDict;
      uint32_t c = pCol->eStore==PAR_COL_TEXT ? pCol->aCode[iRow] : (uint32_t)v;
      const void *z = eType==SQLITE_TEXT ? (const void*)sqlite3_value_text(pVal)
                                         : sqlite3_value_blob(pVal);
      int n = sqlite3_value_bytes(pVal);
      return pD && c<pD->nEntry && pD->aKind[c]==eType && (int)pD->aLen[c]==n
          && (n==0 || memcmp(z, pD->aByte + pD->aOff[c], n)==0);
    }
    default:
      return 1;
  }
}

/* Two sqlite3_values identical: same class, same bytes. */
static int sameSqlValue(sqlite3_value *a, sqlite3_value *b){
  int e = sqlite3_value_type(a);
  if( e!=sqlite3_value_type(b) ) return 0;
  switch( e ){
    case SQLITE_INTEGER: return sqlite3_value_int64(a)==sqlite3_value_int64(b);
    case SQLITE_FLOAT: {
      double x = sqlite3_value_double(a), y = sqlite3_value_double(b);
      return memcmp(&x, &y, 8)==0;
    }
    case SQLITE_TEXT: case SQLITE_BLOB: {
      int n = sqlite3_value_bytes(a);
      const void *za = e==SQLITE_TEXT ? (const void*)sqlite3_value_text(a) : sqlite3_value_blob(a);
      const void *zb = e==SQLITE_TEXT ? (const void*)sqlite3_value_text(b) : sqlite3_value_blob(b);
      return n==sqlite3_value_bytes(b) && (n==0 || memcmp(za, zb, n)==0);
    }
    default: return 1;
  }
}

/* Batch pB holds exactly the rows of zSql, column by column, read from the
** arrays and through parColumnResult; with aStore, the storage of each
** column.  Frees pB. */
static void checkBatchRows(ParBatch *pB, const char *zSql, const int *aStore){
  sqlite3_stmt *pNat = 0, *pBv = 0;
  sqlite3_int64 iRow = 0;
  int i;

  sqlite3_prepare_v2(db, zSql, -1, &pNat, 0);
  sqlite3_prepare_v2(db, "SELECT bv(?1, ?2)", -1, &pBv, 0);
  pCurBatch = pB;
  CHECK(pB->nCol==sqlite3_column_count(pNat), "nCol %d", pB->nCol);
  for(i=0; i<pB->nCol; i++){
    const char *zDecl = sqlite3_column_decltype(pNat, i);
    CHECK(strcmp(pB->aCol[i].zName, sqlite3_column_name(pNat, i))==0,
          "name of column %d: %s", i, pB->aCol[i].zName);
    CHECK((zDecl==0 && pB->aCol[i].zDeclType==0)
          || (zDecl && pB->aCol[i].zDeclType && strcmp(zDecl, pB->aCol[i].zDeclType)==0),
          "decltype of column %d", i);
    if( aStore && pB->nRow>40 ){
      CHECK(pB->aCol[i].eStore==aStore[i], "column %d storage %d, want %d",
            i, pB->aCol[i].eStore, aStore[i]);
    }
  }
  for(i=0; i<pB->nCol; i++){
    /* An INTEGER column knows its least and greatest value. */
    const ParColumn *pCol = &pB->aCol[i];
    sqlite3_int64 mn = INT64_MAX, mx = INT64_MIN, r;
    if( pCol->eStore!=PAR_COL_INT ) continue;
    for(r=0; r<pB->nRow; r++){
      if( pCol->aNull && (pCol->aNull[r>>3] >> (r&7)) & 1 ) continue;
      if( pCol->aInt[r]<mn ) mn = pCol->aInt[r];
      if( pCol->aInt[r]>mx ) mx = pCol->aInt[r];
    }
    CHECK(pCol->bRange && pCol->iMin==mn && pCol->iMax==mx,
          "column %d: range %d %lld..%lld, want %lld..%lld", i, pCol->bRange,
          (long long)pCol->iMin, (long long)pCol->iMax, (long long)mn, (long long)mx);
  }
  while( sqlite3_step(pNat)==SQLITE_ROW ){
    CHECK(iRow < pB->nRow, "batch has fewer rows than SQLite");
    if( iRow >= pB->nRow ) break;
    for(i=0; i<pB->nCol; i++){
      sqlite3_value *pVal = sqlite3_column_value(pNat, i);
      CHECK(sameValue(&pB->aCol[i], iRow, pVal), "row %lld col %d differs (type %d)",
            (long long)iRow, i, sqlite3_value_type(pVal));
      sqlite3_bind_int(pBv, 1, i);
      sqlite3_bind_int64(pBv, 2, iRow);
      if( sqlite3_step(pBv)==SQLITE_ROW ){
        CHECK(sameSqlValue(sqlite3_column_value(pBv, 0), pVal),
              "row %lld col %d differs after parColumnResult", (long long)iRow, i);
      }else{
        CHECK(0, "bv() failed: %s", sqlite3_errmsg(db));
      }
      sqlite3_reset(pBv);
    }
    iRow++;
  }
  CHECK(iRow==pB->nRow, "row count %lld, SQLite %lld", (long long)pB->nRow, (long long)iRow);
  sqlite3_finalize(pNat);
  sqlite3_finalize(pBv);
  parBatchFree(pB);
  pCurBatch = 0;
}

static void checkRoundTrip(const char *zSql, const int *aStore){
  ParBatch *pB = 0;
  char *zErr = 0;
  int rc;

  check_case("round trip: %s", zSql);
  rc = parBatchFromSql(db, zSql, 0, 0, &pB, &zErr);
  CHECK(rc==SQLITE_OK, "extraction failed: %s", zErr ? zErr : "?");
  sqlite3_free(zErr);
  if( rc ) return;
  checkBatchRows(pB, zSql, aStore);
}

/* ---- concatenation ------------------------------------------------------------ */

/* The greatest rowid of t (0 when empty). */
static sqlite3_int64 maxRowid(void){
  sqlite3_stmt *pMax;
  sqlite3_int64 n = 0;
  sqlite3_prepare_v2(db, "SELECT max(rowid) FROM t", -1, &pMax, 0);
  if( sqlite3_step(pMax)==SQLITE_ROW ) n = sqlite3_column_int64(pMax, 0);
  sqlite3_finalize(pMax);
  return n;
}

/* Table t read in nPiece rowid ranges of random sizes (empty pieces, pieces
** of one row, boundaries anywhere in a byte of the NULL bitmap), the pieces
** joined by parBatchConcat on nThread threads: the rows of the whole table,
** in rowid order, with the storage a single read gives. */
static void checkConcat(check_rng *r, int nPiece, int nThread){
  ParBatch *apPiece[64];
  ParBatch *pCat = 0;
  char *zErr = 0;
  sqlite3_int64 nRow = 0, iLo = 1;
  int i, rc = SQLITE_OK;

  if( nPiece>64 ) nPiece = 64;
  nRow = maxRowid();
  check_case("concat: %lld rows in %d pieces on %d threads", (long long)nRow, nPiece, nThread);
  memset(apPiece, 0, sizeof(apPiece));
  for(i=0; i<nPiece && rc==SQLITE_OK; i++){
    sqlite3_int64 iHi = i==nPiece-1 ? nRow : iLo - 1 + (sqlite3_int64)(check_below(r, (uint64_t)(nRow/2 + 2)));
    char *zSql = sqlite3_mprintf("SELECT * FROM t WHERE rowid BETWEEN %lld AND %lld",
                                 (long long)iLo, (long long)iHi);
    rc = parBatchFromSql(db, zSql, 0, 0, &apPiece[i], &zErr);
    CHECK(rc==SQLITE_OK, "piece %d: %s", i, zErr ? zErr : "?");
    sqlite3_free(zErr);
    zErr = 0;
    sqlite3_free(zSql);
    if( iHi >= iLo ) iLo = iHi + 1;
  }
  if( rc==SQLITE_OK ){
    rc = parBatchConcat(apPiece, nPiece, 0, nThread, 0, &pCat, &zErr);
    CHECK(rc==SQLITE_OK, "concat: %s", zErr ? zErr : "?");
    sqlite3_free(zErr);
  }
  for(i=0; i<nPiece; i++) if( apPiece[i] ) parBatchFree(apPiece[i]);
  if( rc==SQLITE_OK ) checkBatchRows(pCat, "SELECT * FROM t ORDER BY rowid", aProfileStore);
}

/* The same with the pieces read through par_sink into one window (the
** way parallel extraction reads a rowid table): each piece writes where
** its rowids lie, a WHERE leaves gaps to close, and columns whose storage
** changes along the rowids (INTEGER here, TEXT there, NULL elsewhere)
** are converted where they lie. */
static void checkConcatWindow(check_rng *r, int nPiece, int nThread, const char *zWhere){
  ParBatch *apPiece[64];
  ParBatch *pCat = 0;
  ParWindow *pWin = 0;
  char *zErr = 0, *zSel, *zWant;
  sqlite3_int64 nRow = 0, iLo = 1;
  int i, rc = SQLITE_OK;

  if( nPiece>64 ) nPiece = 64;
  nRow = maxRowid();
  if( nRow==0 ) return;
  check_case("concat in a window: %lld rows in %d pieces on %d threads, WHERE %s",
             (long long)nRow, nPiece, nThread, zWhere);
  zSel = sqlite3_mprintf(
      "SELECT *, CASE WHEN rowid*3<=%lld THEN c0 WHEN rowid*3<=%lld THEN c4 END,"
      " CASE WHEN rowid*2>%lld THEN c2 END, CASE WHEN rowid*2>%lld THEN c5 END,"
      " CASE WHEN rowid*4>%lld THEN c4 END, CASE WHEN rowid*4>%lld THEN c1 END FROM t",
      (long long)nRow, (long long)nRow*2, (long long)nRow, (long long)nRow,
      (long long)nRow, (long long)nRow*3);
  pWin = parWindowNew(15, nRow);
  CHECK(pWin!=0, "parWindowNew");
  memset(apPiece, 0, sizeof(apPiece));
  for(i=0; i<nPiece && rc==SQLITE_OK && pWin; i++){
    sqlite3_int64 iHi = i==nPiece-1 ? nRow : iLo - 1 + (sqlite3_int64)(check_below(r, (uint64_t)(nRow/2 + 2)));
    char *zSql = sqlite3_mprintf("%s WHERE rowid BETWEEN %lld AND %lld AND (%s)", zSel,
                                 (long long)iLo, (long long)iHi, zWhere);
    char *zSink = parSinkSql(zSql, (int)strlen(zSql), 15);
    sqlite3_stmt *pMeta = 0, *pSink = 0;
    if( iHi<iLo-1 ) iHi = iLo-1;
    sqlite3_prepare_v2(db, zSql, -1, &pMeta, 0);
    sqlite3_prepare_v2(db, zSink, -1, &pSink, 0);
    CHECK(pMeta && pSink, "prepare: %s", sqlite3_errmsg(db));
    rc = pMeta && pSink ? parBatchFromSink(db, pSink, pMeta, 0, 0, pWin, iLo-1, iHi-iLo+1,
                                           0, &apPiece[i], &zErr) : SQLITE_ERROR;
    CHECK(rc==SQLITE_OK, "piece %d: %s", i, zErr ? zErr : "?");
    sqlite3_free(zErr);
    zErr = 0;
    sqlite3_finalize(pMeta);
    sqlite3_finalize(pSink);
    sqlite3_free(zSql);
    sqlite3_free(zSink);
    iLo = iHi + 1;
  }
  if( rc==SQLITE_OK && pWin ){
    rc = parBatchConcat(apPiece, nPiece, 0, nThread, pWin, &pCat, &zErr);
    CHECK(rc==SQLITE_OK, "concat: %s", zErr ? zErr : "?");
    sqlite3_free(zErr);
  }
  for(i=0; i<nPiece; i++) if( apPiece[i] ) parBatchFree(apPiece[i]);
  parWindowFree(pWin);
  zWant = sqlite3_mprintf("%s WHERE (%s) ORDER BY rowid", zSel, zWhere);
  if( rc==SQLITE_OK && pCat ) checkBatchRows(pCat, zWant, 0);
  sqlite3_free(zWant);
  sqlite3_free(zSel);
}

/* ---- merging dictionaries ------------------------------------------------------ */

/* Table m: 60000 rows whose TEXT values the pieces mostly share (c0, with
** empty strings), TEXT and BLOB values of equal bytes with integers and
** NULLs (c1, MIXED), values found once each but only in some rowid ranges
** (c2: pieces of NULLs only, and shared tables that must grow), empty
** values only (c3), no text (c4), and 2^14 values, the last one first seen
** in the last row (c5: the hash table's size depends on whether the last
** entry merged is new). */
#define MERGE_ROWS 60000
static void makeMergeTable(void){
  exec("DROP TABLE IF EXISTS m; CREATE TABLE m(c0, c1, c2, c3, c4, c5);"
       "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<60000)"
       " INSERT INTO m SELECT"
       "  CASE WHEN i%53=0 THEN NULL WHEN i%47=0 THEN '' ELSE 'k'||((i*2654435761)%20011) END,"
       "  CASE i%5 WHEN 0 THEN 'v'||((i*40503)%700) WHEN 1 THEN CAST('v'||((i*40503)%700) AS BLOB)"
       "   WHEN 2 THEN i WHEN 3 THEN NULL ELSE CASE WHEN i%2 THEN '' ELSE x'' END END,"
       "  CASE WHEN (i/4000)%3<>0 THEN 'u'||i END,"
       "  CASE WHEN i%3=0 THEN '' END,"
       "  i*7,"
       "  CASE WHEN i=60000 THEN 'last' ELSE 'w'||(i%16383) END FROM s");
}

/* The serial merge of column j of the pieces, with parDictAdd() as
** parBatchConcat() did it before it merged in parallel: *pRef, and
** aaRef[i][e] the code of piece i's entry e. */
static void mergeReference(ParBatch **apPiece, int nPiece, int j, ParBatch *pRefB,
                           ParDict *pRef, uint32_t **aaRef){
  int i;
  memset(pRefB, 0, sizeof(*pRefB));
  memset(pRef, 0, sizeof(*pRef));
  for(i=0; i<nPiece; i++){
    const ParDict *pD = apPiece[i]->aCol[j].pDict;
    uint32_t e;
    aaRef[i] = 0;
    if( pD==0 || pD->nEntry==0 ) continue;
    aaRef[i] = malloc(sizeof(uint32_t)*pD->nEntry);
    for(e=0; e<pD->nEntry; e++){
      CHECK(parDictAdd(pRefB, pRef, (const unsigned char*)parDictText(pD, e), pD->aLen[e],
                       pD->aKind[e], &aaRef[i][e])==SQLITE_OK, "reference merge");
    }
  }
}

/* Column j of pOut (the pieces joined) against the serial merge: the same
** dictionary array for array (the hash table slot for slot, the sizes
** allocated), and every row's value mapped to the code the serial merge
** gives it; the dictionary still takes lookups and additions. */
static void checkMergedColumn(ParBatch *pOut, ParBatch **apPiece, int nPiece, int j){
  ParBatch refB, *pB;
  ParDict ref;
  const ParColumn *pCol = &pOut->aCol[j];
  const ParDict *pD = pCol->pDict;
  uint32_t **aaRef = calloc((size_t)nPiece, sizeof(uint32_t*)), c;
  sqlite3_int64 iAt = 0, k;
  int i, nBad = 0;

  mergeReference(apPiece, nPiece, j, &refB, &ref, aaRef);
  if( ref.nEntry==0 ){
    CHECK(pD==0, "column %d: a dictionary without entries", j);
  }else if( pD==0 ){
    CHECK(0, "column %d: no dictionary, want %u entries", j, ref.nEntry);
  }else{
    CHECK(pD->nEntry==ref.nEntry && pD->nAlloc==ref.nAlloc && pD->nByte==ref.nByte
          && pD->nByteAlloc==ref.nByteAlloc && pD->nHash==ref.nHash,
          "column %d: entries %u/%u alloc %u/%u bytes %lld/%lld alloc %lld/%lld hash %u/%u", j,
          pD->nEntry, ref.nEntry, pD->nAlloc, ref.nAlloc, (long long)pD->nByte,
          (long long)ref.nByte, (long long)pD->nByteAlloc, (long long)ref.nByteAlloc,
          pD->nHash, ref.nHash);
    if( pD->nEntry==ref.nEntry && pD->nAlloc==ref.nAlloc && pD->nHash==ref.nHash
     && pD->nByteAlloc==ref.nByteAlloc ){
      CHECK(memcmp(pD->aOff, ref.aOff, 8*(size_t)ref.nAlloc)==0, "column %d: aOff", j);
      CHECK(memcmp(pD->aLen, ref.aLen, 4*(size_t)ref.nAlloc)==0, "column %d: aLen", j);
      CHECK(memcmp(pD->aKind, ref.aKind, (size_t)ref.nAlloc)==0, "column %d: aKind", j);
      CHECK((pD->aByte==0)==(ref.aByte==0)
            && (ref.aByte==0 || memcmp(pD->aByte, ref.aByte, (size_t)ref.nByteAlloc)==0),
            "column %d: aByte", j);
      CHECK(memcmp(pD->aHash, ref.aHash, 8*(size_t)ref.nHash)==0, "column %d: aHash", j);
    }
    for(i=0; i<PAR_N_COLL; i++) CHECK(pD->aRank[i]==0, "column %d: ranks built", j);
  }
  /* Every row: the piece's value, under the serial merge's code. */
  for(i=0; i<nPiece; i++){
    const ParColumn *pSrc = &apPiece[i]->aCol[j];
    for(k=0; k<apPiece[i]->nRow && nBad<5; k++){
      int eType = parColumnType(pSrc, k), eOut = parColumnType(pCol, iAt+k);
      uint64_t vWant = 0, vGot = 0;
      if( eType==SQLITE_TEXT || eType==SQLITE_BLOB ){
        uint32_t cSrc = pSrc->eStore==PAR_COL_TEXT ? pSrc->aCode[k] : (uint32_t)pSrc->aVal[k];
        vWant = aaRef[i][cSrc];
        vGot = pCol->eStore==PAR_COL_TEXT ? pCol->aCode[iAt+k] : pCol->aVal[iAt+k];
      }else if( eType==SQLITE_INTEGER ){
        vWant = (uint64_t)(pSrc->eStore==PAR_COL_INT ? pSrc->aInt[k] : (sqlite3_int64)pSrc->aVal[k]);
        vGot = pCol->eStore==PAR_COL_INT ? (uint64_t)pCol->aInt[iAt+k] : pCol->aVal[iAt+k];
      }
      if( eType!=eOut || vWant!=vGot ){
        CHECK(0, "column %d, piece %d, row %lld: type %d value %llu, want type %d value %llu",
              j, i, (long long)k, eOut, (unsigned long long)vGot, eType,
              (unsigned long long)vWant);
        nBad++;
      }
    }
    iAt += apPiece[i]->nRow;
  }
  /* Lookups find every entry; a new value comes next. */
  if( pD && pD->nEntry==ref.nEntry ){
    pB = pOut;
    for(c=0; c<ref.nEntry; c++){
      uint32_t iCode = UINT32_MAX;
      int rc = parDictAdd(pB, pCol->pDict, (const unsigned char*)parDictText(&ref, c),
                          ref.aLen[c], ref.aKind[c], &iCode);
      if( rc!=SQLITE_OK || iCode!=c ){
        CHECK(0, "column %d: entry %u looked up as %u (rc %d)", j, c, iCode, rc);
        break;
      }
    }
    c = UINT32_MAX;
    CHECK(parDictAdd(pB, pCol->pDict, (const unsigned char*)"\x01new", 4, SQLITE_BLOB, &c)==SQLITE_OK
          && c==ref.nEntry, "column %d: a new value got code %u, want %u", j, c, ref.nEntry);
  }
  for(i=0; i<nPiece; i++) free(aaRef[i]);
  free(aaRef);
  sqlite3_free(ref.aOff);
  sqlite3_free(ref.aLen);
  sqlite3_free(ref.aKind);
  sqlite3_free(ref.aByte);
  sqlite3_free(ref.aHash);
}

/* Table m read in nPiece rowid ranges (random cuts: empty pieces too),
** joined at 1, 2, 3 and 8 threads: each time the dictionaries the serial
** merge makes and the same memory counted; a memory limit just short of
** it fails alike at 1 and 8 threads; with allocations failing, an error. */
static void checkMerge(check_rng *r, int nPiece){
  static const int aThread[] = { 1, 2, 3, 8 };
  ParBatch **apPiece = calloc((size_t)nPiece, sizeof(ParBatch*));
  sqlite3_int64 *aCut = malloc(sizeof(sqlite3_int64)*(nPiece+1)), nMem1 = 0;
  char *zErr = 0, *zErr1 = 0;
  int i, t, j, rc = SQLITE_OK, rc1 = SQLITE_OK;

  check_case("merge: %d rows in %d pieces", MERGE_ROWS, nPiece);
  aCut[0] = 0;
  aCut[nPiece] = MERGE_ROWS;
  for(i=1; i<nPiece; i++) aCut[i] = (sqlite3_int64)check_below(r, MERGE_ROWS+1);
  for(i=1; i<nPiece; i++){         /* sorted: an insertion sort is enough */
    sqlite3_int64 x = aCut[i];
    for(j=i; j>1 && aCut[j-1]>x; j--) aCut[j] = aCut[j-1];
    aCut[j] = x;
  }
  for(i=0; i<nPiece && rc==SQLITE_OK; i++){
    char *zSql = sqlite3_mprintf("SELECT * FROM m WHERE rowid>%lld AND rowid<=%lld",
                                 (long long)aCut[i], (long long)aCut[i+1]);
    rc = parBatchFromSql(db, zSql, 0, 0, &apPiece[i], &zErr);
    CHECK(rc==SQLITE_OK, "piece %d: %s", i, zErr ? zErr : "?");
    sqlite3_free(zSql);
    sqlite3_free(zErr);
    zErr = 0;
    if( rc==SQLITE_OK ) apPiece[i]->nRef++;     /* kept for the next join */
  }
  for(t=0; t<(int)(sizeof(aThread)/sizeof(aThread[0])) && rc==SQLITE_OK; t++){
    ParBatch *pOut = 0;
    check_case("merge: %d rows in %d pieces on %d threads", MERGE_ROWS, nPiece, aThread[t]);
    rc = parBatchConcat(apPiece, nPiece, 0, aThread[t], 0, &pOut, &zErr);
    CHECK(rc==SQLITE_OK, "concat: %s", zErr ? zErr : "?");
    sqlite3_free(zErr);
    zErr = 0;
    if( rc ) break;
    if( t==0 ) nMem1 = pOut->nMem;
    CHECK(pOut->nMem==nMem1, "memory counted %lld, at 1 thread %lld",
          (long long)pOut->nMem, (long long)nMem1);
    for(j=0; j<pOut->nCol; j++) checkMergedColumn(pOut, apPiece, nPiece, j);
    parBatchFree(pOut);
  }
  if( rc==SQLITE_OK && nPiece==64 ){
    /* Allocations failing anywhere (a heap limit at 32 heights up to the
    ** join's peak): an error or the same batch, and no leak (ASan). */
    sqlite3_int64 nBase, nPeak;
    ParBatch *pOut = 0;
    int k;
    check_case("merge: %d pieces, allocations failing", nPiece);
    nBase = sqlite3_memory_used();
    sqlite3_memory_highwater(1);
    rc = parBatchConcat(apPiece, nPiece, 0, 8, 0, &pOut, &zErr);
    nPeak = sqlite3_memory_highwater(0) - nBase;
    parBatchFree(pOut);
    for(k=0; k<32 && rc==SQLITE_OK; k++){
      int rcK;
      pOut = 0;
      sqlite3_hard_heap_limit64(nBase + nPeak*k/32 + 1);
      rcK = parBatchConcat(apPiece, nPiece, 0, 8, 0, &pOut, &zErr);
      sqlite3_hard_heap_limit64(0);
      CHECK(rcK==SQLITE_OK ? pOut && pOut->nMem==nMem1 && zErr==0
                           : rcK==SQLITE_NOMEM && pOut==0,   /* message: if it fits */
            "heap limit %d/32: rc %d (%s)", k, rcK, zErr ? zErr : "-");
      sqlite3_free(zErr);
      zErr = 0;
      parBatchFree(pOut);
    }
  }
  if( rc==SQLITE_OK ){
    ParBatch *pOut = 0;
    check_case("merge: %d pieces under a memory limit", nPiece);
    rc1 = parBatchConcat(apPiece, nPiece, nMem1-1, 1, 0, &pOut, &zErr1);
    CHECK(rc1==SQLITE_FULL && pOut==0, "1 thread: rc %d", rc1);
    rc = parBatchConcat(apPiece, nPiece, nMem1-1, 8, 0, &pOut, &zErr);
    CHECK(rc==rc1 && pOut==0 && zErr && zErr1 && strcmp(zErr, zErr1)==0,
          "8 threads: rc %d (%s), at 1 thread %d (%s)", rc, zErr ? zErr : "-", rc1,
          zErr1 ? zErr1 : "-");
    sqlite3_free(zErr);
    sqlite3_free(zErr1);
  }
  for(i=0; i<nPiece; i++){
    if( apPiece[i] ){
      parBatchFree(apPiece[i]);
      parBatchFree(apPiece[i]);
    }
  }
  free(apPiece);
  free(aCut);
}

/* ---- sort keys --------------------------------------------------------------- */

typedef struct KeyRow { uint64_t k1, k2; sqlite3_int64 i; } KeyRow;
static int keyRowCmp(const void *pA, const void *pB){
  const KeyRow *a = pA, *b = pB;
  if( a->k1!=b->k1 ) return a->k1<b->k1 ? -1 : 1;
  if( a->k2!=b->k2 ) return a->k2<b->k2 ? -1 : 1;
  return a->i<b->i ? -1 : a->i>b->i;
}

static const char *azColl[] = { "BINARY", "NOCASE", "RTRIM" };

/* Compare the dense ranks our keys give column zCol of t (read in rowid
** order) with SQLite's dense_rank() for every collation and direction. */
static void checkKeys(const char *zCol){
  char *zSql = sqlite3_mprintf("SELECT %s FROM t ORDER BY rowid", zCol);
  ParBatch *pB = 0;
  char *zErr = 0;
  int eColl, flags, t;
  int rc = parBatchFromSql(db, zSql, 0, 0, &pB, &zErr);
  sqlite3_free(zSql);
  if( rc ){
    check_case("keys %s", zCol);
    CHECK(0, "extraction failed: %s", zErr);
    sqlite3_free(zErr);
    return;
  }
  for(eColl=0; eColl<PAR_N_COLL; eColl++){
    for(flags=0; flags<4; flags++){
      sqlite3_int64 n = pB->nRow, i;
      uint64_t *a1[3], *a2[3];
      KeyRow *aRow;
      sqlite3_int64 *aOurs, *aTheirs;
      sqlite3_stmt *pStmt;
      check_case("keys %s COLLATE %s%s%s (%lld rows, storage %d)", zCol, azColl[eColl],
                 (flags & PAR_KEY_DESC) ? " DESC" : "",
                 (flags & PAR_KEY_NULLS_LAST) ? " NULLS LAST" : " NULLS FIRST",
                 (long long)n, pB->aCol[0].eStore);
      for(t=0; t<3; t++){
        rc = parColumnKeys(&pB->aCol[0], n, eColl, flags, t+1, &a1[t], &a2[t]);
        CHECK(rc==SQLITE_OK, "parColumnKeys rc=%d", rc);
      }
      for(t=1; t<3; t++){
        CHECK(memcmp(a1[0], a1[t], n*8)==0, "key1 differs at %d threads", t+1);
        CHECK((a2[0]==0)==(a2[t]==0), "key2 presence differs at %d threads", t+1);
        if( a2[0] && a2[t] ) CHECK(memcmp(a2[0], a2[t], n*8)==0, "key2 differs");
      }
      aRow = malloc((n+1)*sizeof(KeyRow));
      aOurs = malloc((n+1)*sizeof(sqlite3_int64));
      aTheirs = malloc((n+1)*sizeof(sqlite3_int64));
      for(i=0; i<n; i++){
        aRow[i].k1 = a1[0][i];
        aRow[i].k2 = a2[0] ? a2[0][i] : 0;
        aRow[i].i = i;
      }
      qsort(aRow, n, sizeof(KeyRow), keyRowCmp);
      for(i=0; i<n; i++){
        aOurs[aRow[i].i] = (i==0) ? 1 : aOurs[aRow[i-1].i]
            + (aRow[i].k1!=aRow[i-1].k1 || aRow[i].k2!=aRow[i-1].k2);
      }
      zSql = sqlite3_mprintf(
          "SELECT rowid, dense_rank() OVER (ORDER BY %s COLLATE %s %s %s) FROM t",
          zCol, azColl[eColl], (flags & PAR_KEY_DESC) ? "DESC" : "ASC",
          (flags & PAR_KEY_NULLS_LAST) ? "NULLS LAST" : "NULLS FIRST");
      sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
      sqlite3_free(zSql);
      /* rowids are 1..n in insertion order, rows of the batch 0..n-1. */
      while( sqlite3_step(pStmt)==SQLITE_ROW ){
        sqlite3_int64 r = sqlite3_column_int64(pStmt, 0) - 1;
        if( r>=0 && r<n ) aTheirs[r] = sqlite3_column_int64(pStmt, 1);
      }
      sqlite3_finalize(pStmt);
      for(i=0; i<n; i++){
        CHECK(aOurs[i]==aTheirs[i], "row %lld: our rank %lld, SQLite's %lld",
              (long long)i, (long long)aOurs[i], (long long)aTheirs[i]);
      }
      for(t=0; t<3; t++){
        sqlite3_free(a1[t]);
        sqlite3_free(a2[t]);
      }
      free(aRow);
      free(aOurs);
      free(aTheirs);
    }
  }
  parBatchFree(pB);
}

/* ---- errors ------------------------------------------------------------------ */

/* A call that had to fail with rc wantRc and a message holding zWant,
** returning no batch.  Frees *pzErr. */
static void checkFailed(int rc, int wantRc, char **pzErr, const char *zWant,
                        const ParBatch *pB){
  CHECK(rc==wantRc, "rc=%d, not %d", rc, wantRc);
  CHECK(*pzErr && strstr(*pzErr, zWant), "message: %s", *pzErr ? *pzErr : "");
  CHECK(pB==0, "batch returned");
  sqlite3_free(*pzErr);
  *pzErr = 0;
}

static void checkError(const char *zSql, const char *zWant){
  ParBatch *pB = 0;
  char *zErr = 0;
  int rc;
  check_case("error: %s", zSql);
  rc = parBatchFromSql(db, zSql, 0, 0, &pB, &zErr);
  CHECK(rc!=SQLITE_OK, "no error");
  CHECK(pB==0, "batch returned with an error");
  CHECK(zErr && strstr(zErr, zWant), "message '%s', want '%s'", zErr ? zErr : "(none)", zWant);
  sqlite3_free(zErr);
  parBatchFree(pB);
}

static sqlite3_int64 countRows(void){
  sqlite3_stmt *p;
  sqlite3_int64 n = -1;
  sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &p, 0);
  if( sqlite3_step(p)==SQLITE_ROW ) n = sqlite3_column_int64(p, 0);
  sqlite3_finalize(p);
  return n;
}

static void checkErrors(void){
  sqlite3_int64 n = countRows();
  ParBatch *pB = 0;
  char *zErr = 0;
  int rc;
  checkError("DELETE FROM t", "not a read-only query");
  checkError("SELECT 1; DELETE FROM t", "only one SQL statement");
  checkError("SELECT 1; SELECT 2", "only one SQL statement");
  checkError("BEGIN", "not a read-only query");
  checkError("SELECT nosuchcol FROM t", "no such column: nosuchcol");
  checkError("SELECT * FROM nosuchtable", "no such table: nosuchtable");
  checkError("SELEC 1", "syntax error");
  checkError("", "no SQL statement");
  checkError("  -- just a comment", "no SQL statement");
  checkError("SELECT abs(-9223372036854775807-1)", "integer overflow");
  check_case("errors change nothing");
  CHECK(countRows()==n, "rows of t changed: %lld -> %lld", (long long)n, (long long)countRows());
  check_case("trailing comment and semicolon are one statement");
  rc = parBatchFromSql(db, "SELECT 1; -- done\n  ", 0, 0, &pB, &zErr);
  CHECK(rc==SQLITE_OK && pB && pB->nRow==1, "rc=%d %s", rc, zErr ? zErr : "");
  parBatchFree(pB);
  sqlite3_free(zErr);

  check_case("memory limit");
  rc = parBatchFromSql(db, "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 "
                       "FROM s WHERE i<200000) SELECT i, i*2.5, 'x'||i FROM s",
                       0, 1<<20, &pB, &zErr);
  checkFailed(rc, SQLITE_FULL, &zErr, "memory limit of 1 MB exceeded", pB);

  /* A worker that starts its range after the others pushed the shared
  ** count over the limit fails at once, with the limit's error too (it
  ** used to report SQLITE_NOMEM, "out of memory"). */
  check_case("memory limit, shared count already over it");
  {
    sqlite3_stmt *pMeta = 0, *pSink = 0;
    sqlite3_int64 nShared = (1<<20) + 1;
    char *zSink = parSinkSql("SELECT 1, 'x'", 13, 2);
    CHECK(parBatchRegister(db)==SQLITE_OK, "parBatchRegister");   /* ours, not an app's */
    sqlite3_prepare_v2(db, "SELECT 1, 'x'", -1, &pMeta, 0);
    sqlite3_prepare_v2(db, zSink, -1, &pSink, 0);
    CHECK(pMeta && pSink, "prepare: %s", sqlite3_errmsg(db));
    rc = pMeta && pSink ? parBatchFromSink(db, pSink, pMeta, 1<<20, &nShared, 0, 0, 0, 0, &pB, &zErr)
                        : SQLITE_ERROR;
    checkFailed(rc, SQLITE_FULL, &zErr, "memory limit of 1 MB exceeded", pB);
    CHECK(nShared==(1<<20) + 1, "shared count changed: %lld", (long long)nShared);
    sqlite3_free(zSink);
    sqlite3_finalize(pMeta);
    sqlite3_finalize(pSink);
  }
}

/* ---- a sink that stops the statement ------------------------------------- */

/* Read rowids lo.. of u through the sink with bStop and nSpan rows on pR;
** returns the rc, and the values read in *pB. */
static int sinkStopRead(sqlite3 *pR, sqlite3_stmt *pSink, sqlite3_stmt *pMeta,
                        sqlite3_int64 lo, sqlite3_int64 nSpan, ParBatch **ppB, char **pzErr){
  sqlite3_bind_int64(pSink, sqlite3_bind_parameter_index(pSink, ":par_lo"), lo);
  return parBatchFromSink(pR, pSink, pMeta, 0, 0, 0, 0, nSpan, 1, ppB, pzErr);
}

/* The values of an INTEGER column are first, first+step, ...? */
static int sinkStopValues(ParBatch *pB, sqlite3_int64 nRow, sqlite3_int64 first,
                          sqlite3_int64 step){
  sqlite3_int64 i;
  if( pB==0 || pB->nRow!=nRow || pB->aCol[0].eStore!=PAR_COL_INT ) return 0;
  for(i=0; i<nRow; i++) if( pB->aCol[0].aInt[i]!=first + i*step ) return 0;
  return 1;
}

/* parBatchFromSink with bStop (ranges taken by row count, extract.c): the
** statement ends after nSpan rows, inside the read transaction that the
** next range goes on reading (one snapshot while another connection
** commits); fewer rows than nSpan are an error. */
static void checkSinkStop(void){
  char zPath[] = "/tmp/par_sink_stop_XXXXXX";
  const char *zRange = "SELECT v FROM u WHERE rowid>=:par_lo";
  sqlite3 *pR = 0, *pW = 0;
  sqlite3_stmt *pMeta = 0, *pSink = 0;
  ParBatch *pB = 0;
  char *zErr = 0, *zSink = 0, *zWal = 0;
  int fd = mkstemp(zPath), rc;

  check_case("sink stopped after nSpan rows");
  CHECK(fd>=0, "mkstemp");
  if( fd<0 ) return;
  close(fd);
  rc = sqlite3_open(zPath, &pW);
  if( rc==SQLITE_OK ) rc = sqlite3_open(zPath, &pR);
  if( rc==SQLITE_OK ){
    rc = sqlite3_exec(pW, "PRAGMA journal_mode=WAL; CREATE TABLE u(v);"
                          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<100)"
                          " INSERT INTO u(rowid, v) SELECT i, i*10 FROM n", 0, 0, 0);
  }
  if( rc==SQLITE_OK ) rc = parBatchRegister(pR);
  if( rc==SQLITE_OK ) rc = sqlite3_exec(pR, "BEGIN; PRAGMA schema_version", 0, 0, 0);
  zSink = parSinkSql(zRange, (int)strlen(zRange), 1);
  if( rc==SQLITE_OK ) rc = sqlite3_prepare_v2(pR, zRange, -1, &pMeta, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_prepare_v2(pR, zSink, -1, &pSink, 0);
  CHECK(rc==SQLITE_OK, "setup: %s", pR ? sqlite3_errmsg(pR) : "?");
  if( rc ) goto done;

  rc = sinkStopRead(pR, pSink, pMeta, 11, 10, &pB, &zErr);
  CHECK(rc==SQLITE_OK, "rc=%d %s", rc, zErr ? zErr : "");
  CHECK(sinkStopValues(pB, 10, 110, 10), "rows 11..20 expected, got %lld",
        pB ? (long long)pB->nRow : -1LL);
  CHECK(!sqlite3_get_autocommit(pR), "the read transaction ended with the stop");
  parBatchFree(pB);
  pB = 0;

  check_case("the read transaction survives the stop");
  rc = sqlite3_exec(pW, "UPDATE u SET v = -v", 0, 0, 0);
  CHECK(rc==SQLITE_OK, "update: %s", sqlite3_errmsg(pW));
  rc = sinkStopRead(pR, pSink, pMeta, 91, 10, &pB, &zErr);   /* ends with the table */
  CHECK(rc==SQLITE_OK, "rc=%d %s", rc, zErr ? zErr : "");
  CHECK(sinkStopValues(pB, 10, 910, 10), "rows 91..100 of the old snapshot expected");
  parBatchFree(pB);
  pB = 0;
  rc = sinkStopRead(pR, pSink, pMeta, 1, 3, &pB, &zErr);
  CHECK(rc==SQLITE_OK && sinkStopValues(pB, 3, 10, 10), "rows 1..3 of the old snapshot");
  parBatchFree(pB);
  pB = 0;

  check_case("fewer rows than nSpan");
  rc = sinkStopRead(pR, pSink, pMeta, 95, 10, &pB, &zErr);
  checkFailed(rc, SQLITE_CORRUPT, &zErr, "fewer rows than it spans", pB);

  check_case("after the transaction, the new snapshot");
  sqlite3_exec(pR, "COMMIT", 0, 0, 0);
  rc = sinkStopRead(pR, pSink, pMeta, 1, 2, &pB, &zErr);
  CHECK(rc==SQLITE_OK && sinkStopValues(pB, 2, -10, -10), "rows 1..2 negated");
  parBatchFree(pB);

done:
  sqlite3_free(zErr);
  sqlite3_free(zSink);
  sqlite3_finalize(pMeta);
  sqlite3_finalize(pSink);
  sqlite3_close(pR);
  sqlite3_close(pW);
  remove(zPath);
  zWal = sqlite3_mprintf("%s-wal", zPath);
  if( zWal ) remove(zWal);
  sqlite3_free(zWal);
  zWal = sqlite3_mprintf("%s-shm", zPath);
  if( zWal ) remove(zWal);
  sqlite3_free(zWal);
}

/* ---- shapes of SELECT that the par_sink wrapper must keep ---------------- */

static void sinkNoop(sqlite3_context *ctx, int argc, sqlite3_value **argv){}
static void sinkFinal(sqlite3_context *ctx){ sqlite3_result_int(ctx, 1); }

static void checkSinkShapes(void){
  sqlite3_str *pStr;
  char *zSql;
  int i;
  exec("DROP TABLE IF EXISTS s; CREATE TABLE s(a, b TEXT COLLATE NOCASE);"
       "INSERT INTO s VALUES(3,'x'),(1,'Y'),(2,NULL),(1,'y'),(NULL,'z'),(2.5,x'00');"
       "DROP TABLE IF EXISTS par_sink_src; CREATE TABLE par_sink_src(q);"
       "INSERT INTO par_sink_src VALUES(42)");
  checkRoundTrip("SELECT a, b FROM s ORDER BY b, a DESC", 0);
  checkRoundTrip("SELECT a, b FROM s ORDER BY a LIMIT 3 OFFSET 1;", 0);
  checkRoundTrip("WITH w(x) AS (SELECT a FROM s) SELECT x, x*2 FROM w WHERE x>1 /* c */ ;\n", 0);
  checkRoundTrip("VALUES(1, 'a'), (2, x'ff'), (NULL, 2.5)", 0);
  checkRoundTrip("SELECT a, ?1, :x FROM s", 0);
  checkRoundTrip("SELECT q, (SELECT count(*) FROM par_sink_src) FROM par_sink_src", 0);
  checkRoundTrip("SELECT b, count(*) FROM s GROUP BY b -- trailing comment", 0);
  checkRoundTrip("SELECT DISTINCT b FROM s", 0);
  checkRoundTrip("SELECT a FROM s UNION ALL SELECT b FROM s", 0);
  /* More columns than a function takes arguments: rows are stepped. */
  pStr = sqlite3_str_new(db);
  sqlite3_str_appendall(pStr, "SELECT a");
  for(i=1; i<150; i++) sqlite3_str_appendf(pStr, ", a+%d", i);
  sqlite3_str_appendall(pStr, " FROM s");
  zSql = sqlite3_str_finish(pStr);
  checkRoundTrip(zSql, 0);
  sqlite3_free(zSql);
}

/* An application that defines its own par_sink still gets its rows. */
static void checkSinkReplaced(void){
  sqlite3_create_function(db, "par_sink", -1, SQLITE_UTF8, 0, 0, sinkNoop, sinkFinal);
  checkRoundTrip("SELECT a, b FROM s", 0);
  sqlite3_create_function(db, "par_sink", -1, SQLITE_UTF8, 0, 0, sinkNoop, 0);
  sqlite3_create_function(db, "par_sink", -1, SQLITE_UTF8, 0, sinkNoop, 0, 0);
  checkRoundTrip("SELECT a, b FROM s", 0);
}

/* ---- hand-picked ordering cases ------------------------------------------- */

static void checkTricky(void){
  static const char *azVal[] = {
    "NULL", "0", "0.0", "-0.0", "1", "1.0", "-1", "9007199254740992",
    "9007199254740993", "9007199254740992.0", "9007199254740994.0",
    "9223372036854775807", "9223372036854775806", "9223372036854775808.0",
    "9223372036854774784", "9223372036854774784.0", "9223372036854774785",
    "-9223372036854775808", "-9223372036854775807", "-9223372036854775808.0",
    "-9223372036854774785", "-9223372036854774784.0", "1e308", "-1e308",
    "9e999", "-9e999", "4.9e-324", "''", "'a'", "'A'", "'a '", "'A  '", "'b'",
    "'a'||char(0)||'b'", "'a'||char(0)||'c'", "'A'||char(0)", "x''", "x'00'",
    "x'61'", "x'41'", "x'6100'", "'9'", "'10'", "NULL", "1", "'a'",
  };
  sqlite3_stmt *pIns;
  int i;
  exec("DROP TABLE IF EXISTS t; CREATE TABLE t(c)");
  for(i=0; i<(int)(sizeof(azVal)/sizeof(azVal[0])); i++){
    char *z = sqlite3_mprintf("INSERT INTO t VALUES(%s)", azVal[i]);
    sqlite3_prepare_v2(db, z, -1, &pIns, 0);
    sqlite3_step(pIns);
    sqlite3_finalize(pIns);
    sqlite3_free(z);
  }
  checkRoundTrip("SELECT c, typeof(c) FROM t", 0);
  checkKeys("c");
  /* The same values as the only storage class of a column. */
  checkKeys("CASE WHEN typeof(c)='integer' THEN c END");
  checkKeys("CASE WHEN typeof(c)='real' THEN c END");
  checkKeys("CASE WHEN typeof(c)='text' THEN c END");
  checkKeys("CASE WHEN typeof(c)='blob' THEN c END");
  checkKeys("CASE WHEN typeof(c) IN ('integer','null') THEN coalesce(c, 5) END");
}

/* The reference for checkDictionary: the values added so far, each
** malloc'd to its exact length (ASan catches a read past its end). */
typedef struct DictRef {
  unsigned char **az;
  int *an, *aKind, n, nAlloc;
} DictRef;

/* Add (z, n, eKind) to pD and to the reference; check the code. */
static void dictAddCheck(ParBatch *pB, ParDict *pD, DictRef *pRef, const unsigned char *z,
                         int n, int eKind){
  unsigned char *zCopy = malloc(n ? (size_t)n : 1);
  uint32_t iCode = UINT32_MAX;
  int i, iWant = -1;
  memcpy(zCopy, z, (size_t)n);
  for(i=0; i<pRef->n && iWant<0; i++){
    if( pRef->an[i]==n && pRef->aKind[i]==eKind && memcmp(pRef->az[i], z, (size_t)n)==0 ){
      iWant = i;
    }
  }
  CHECK(parDictAdd(pB, pD, zCopy, n, eKind, &iCode)==SQLITE_OK, "parDictAdd n=%d", n);
  if( iWant<0 ){
    if( pRef->n==pRef->nAlloc ){
      pRef->nAlloc = pRef->nAlloc ? 2*pRef->nAlloc : 256;
      pRef->az = realloc(pRef->az, sizeof(*pRef->az)*pRef->nAlloc);
      pRef->an = realloc(pRef->an, sizeof(int)*pRef->nAlloc);
      pRef->aKind = realloc(pRef->aKind, sizeof(int)*pRef->nAlloc);
    }
    iWant = pRef->n++;
    pRef->az[iWant] = zCopy;
    pRef->an[iWant] = n;
    pRef->aKind[iWant] = eKind;
    zCopy = 0;
  }
  /* The dictionary's code 0 is the batch's own 'x'. */
  CHECK(iCode==(uint32_t)iWant + 1, "n=%d kind=%d: code %u, want %d", n, eKind, iCode,
        iWant + 1);
  if( iCode==(uint32_t)iWant + 1 ){
    CHECK(pD->aLen[iCode]==(uint32_t)n && pD->aKind[iCode]==eKind
          && memcmp(parDictText(pD, iCode), z, (size_t)n)==0, "entry %u's bytes", iCode);
  }
  free(zCopy);
}

static void checkDictionary(check_rng *r){
  ParBatch *pB = 0;
  ParDict *pD;
  DictRef ref;
  char *zErr = 0;
  unsigned char a[48];
  int n, i, k, rep;

  check_case("dictionary");
  /* The byte comparison alone (in the dictionary, the hash's tag nearly
  ** always decides first): equal, and one byte different at each place. */
  for(n=0; n<=40; n++){
    unsigned char *x = malloc(n ? (size_t)n : 1), *y = malloc(n ? (size_t)n : 1);
    for(i=0; i<n; i++) x[i] = y[i] = (unsigned char)check_below(r, 256);
    CHECK(parBytesEqual(x, y, n), "n=%d: equal bytes", n);
    for(i=0; i<n; i++){
      y[i] ^= (unsigned char)(1 + check_below(r, 255));
      CHECK(!parBytesEqual(x, y, n), "n=%d: byte %d differs", n, i);
      y[i] = x[i];
    }
    free(x);
    free(y);
  }
  memset(&ref, 0, sizeof(ref));
  CHECK(parBatchFromSql(db, "SELECT 'x'", 0, 0, &pB, &zErr)==SQLITE_OK, "batch: %s", zErr);
  if( pB==0 ) return;
  pD = pB->aCol[0].pDict;
  /* Entry 0 ('x') as the reference's first value, code 1 onwards. */
  for(n=0; n<=40; n++){
    for(k=0; k<2; k++){
      int eKind = k ? SQLITE_BLOB : SQLITE_TEXT;
      for(i=0; i<n; i++) a[i] = (unsigned char)('a' + i%26);
      dictAddCheck(pB, pD, &ref, a, n, eKind);
      for(i=0; i<n; i++){
        unsigned char c = a[i];
        a[i] = (unsigned char)(c ^ 1);
        dictAddCheck(pB, pD, &ref, a, n, eKind);
        a[i] = 0;
        dictAddCheck(pB, pD, &ref, a, n, eKind);
        a[i] = c;
      }
      dictAddCheck(pB, pD, &ref, a, n, eKind);        /* again: the same code */
    }
  }
  /* Random short values over a small alphabet: many repeats, many hash
  ** table growths. */
  for(rep=0; rep<40000; rep++){
    n = (int)check_below(r, 13);
    for(i=0; i<n; i++) a[i] = (unsigned char)("ab\0c"[check_below(r, 4)]);
    dictAddCheck(pB, pD, &ref, a, n, check_below(r, 8) ? SQLITE_TEXT : SQLITE_BLOB);
  }
  CHECK(pD->nEntry==(uint32_t)ref.n + 1, "entries %u, want %d", pD->nEntry, ref.n + 1);
  for(i=0; i<ref.n; i++) free(ref.az[i]);
  free(ref.az);
  free(ref.an);
  free(ref.aKind);
  parBatchFree(pB);
}

/* Kept blocks (parBigMalloc / parBigFree): a block freed is handed out
** again for the same size or up to a quarter less, never for much less or
** more; no more than PAR_BIG_KEEP bytes or PAR_BIG_SLOTS blocks stay kept,
** the oldest going first; small blocks are never kept; parBigRelease()
** frees them all; threads taking and giving blocks at once lose none. */
static void checkKeptBlocks(void){
  const sqlite3_int64 m = PAR_BIG_MIN>((sqlite3_int64)1<<16) ? PAR_BIG_MIN : (sqlite3_int64)1<<16;
  void *p, *q, *a[PAR_BIG_SLOTS+4];
  sqlite3_int64 n;
  int i, bAll;

  check_case("kept blocks: reuse by size");
  parBigRelease();
  p = parBigMalloc(4*m);
  CHECK(p!=0, "malloc");
  memset(p, 1, (size_t)(4*m));
  parBigFree(p);
  q = parBigMalloc(4*m);
  CHECK(q==p, "same size: the kept block (%p, got %p)", p, q);
  parBigFree(q);
  q = parBigMalloc(4*m - m/2);
  CHECK(q==p, "an eighth less: the kept block");
  parBigFree(q);
  q = parBigMalloc(2*m);
  CHECK(q!=p, "half the size: not the kept block (twice too large)");
  sqlite3_free(q);
  q = parBigMalloc(5*m);
  CHECK(q!=p, "larger: not the kept block");
  CHECK(q!=0, "malloc");
  memset(q, 2, (size_t)(5*m));
  sqlite3_free(q);
  n = parBigRelease();
  CHECK(n>=4*m && n<5*m, "release returns the kept bytes (%lld)", (long long)n);
  CHECK(parBigRelease()==0, "nothing kept after a release");

  check_case("kept blocks: small ones are freed");
  if( PAR_BIG_MIN>1 ){
    p = parBigMalloc(PAR_BIG_MIN/2);
    parBigFree(p);
    n = parBigRelease();
    CHECK(n==0, "a block under PAR_BIG_MIN was kept (%lld bytes)", (long long)n);
  }
  parBigFree(0);
  CHECK(parBigRelease()==0, "NULL was kept");

  check_case("kept blocks: bounded, oldest out first");
  for(i=0; i<PAR_BIG_SLOTS+4; i++) a[i] = parBigMalloc(m);
  for(i=0; i<PAR_BIG_SLOTS+4; i++){
    CHECK(a[i]!=0, "malloc %d", i);
    parBigFree(a[i]);
  }
  /* The 4 oldest went; the last PAR_BIG_SLOTS are there. */
  for(i=0; i<PAR_BIG_SLOTS; i++) a[i] = parBigMalloc(m);
  n = parBigRelease();
  CHECK(n==0, "only PAR_BIG_SLOTS blocks kept (%lld bytes left)", (long long)n);
  for(i=0; i<PAR_BIG_SLOTS; i++) sqlite3_free(a[i]);
  p = parBigMalloc(PAR_BIG_KEEP/2 + m);
  q = parBigMalloc(PAR_BIG_KEEP/2 + m);
  parBigFree(p);
  parBigFree(q);                 /* the two do not fit: p goes */
  n = parBigRelease();
  CHECK(n>=PAR_BIG_KEEP/2+m && n<=PAR_BIG_KEEP, "kept within PAR_BIG_KEEP (%lld)", (long long)n);
  p = parBigMalloc(PAR_BIG_KEEP + m);
  parBigFree(p);                 /* larger than everything kept may be */
  CHECK(parBigRelease()==0, "a block over PAR_BIG_KEEP was kept");

  check_case("kept blocks: threads");
  bAll = 1;
  #pragma omp parallel for num_threads(4) reduction(&&:bAll)
  for(i=0; i<400; i++){
    sqlite3_int64 sz = m*(1 + i%3);
    unsigned char *b = parBigMalloc(sz);
    if( b==0 ){ bAll = 0; continue; }
    memset(b, i&0xff, (size_t)sz);
    bAll = bAll && b[0]==(i&0xff) && b[sz-1]==(i&0xff);
    parBigFree(b);
  }
  CHECK(bAll, "a block was shared by two threads");
  n = parBigRelease();
  CHECK(n>=0 && n<=PAR_BIG_KEEP, "kept within PAR_BIG_KEEP after threads (%lld)", (long long)n);
}

int main(int argc, char **argv){
  check_rng r = { check_seed() };
  static const int aSize[] = { 0, 1, 2, 3, 17, 300, 2500 };
  int iSize, rep, j, iSink;
  int nRep = getenv("CHECK_REPS") ? atoi(getenv("CHECK_REPS")) : 3;

  if( sqlite3_open(":memory:", &db) ) return 2;
  sqlite3_create_function(db, "bv", 2, SQLITE_UTF8, 0, bvFunc, 0, 0);

  /* Everything twice: rows stepped one by one, then fed to par_sink. */
  for(iSink=0; iSink<2; iSink++){
  check_case("par_sink registered: %d", iSink);
  if( iSink ) CHECK(parBatchRegister(db)==SQLITE_OK, "parBatchRegister");
  checkTricky();
  checkSinkShapes();
  for(rep=0; rep<nRep; rep++){
    for(iSize=0; iSize<(int)(sizeof(aSize)/sizeof(aSize[0])); iSize++){
      makeTable(&r, aSize[iSize]);
      checkRoundTrip("SELECT * FROM t", aProfileStore);
      checkConcat(&r, 1, 1);
      checkConcat(&r, 2 + (int)check_below(&r, 30), 1 + (int)check_below(&r, 4));
      if( iSink ){
        static const char *azWhere[] = {
          "1", "c1 IS NOT NULL", "rowid%3<>1", "rowid%97=0", "typeof(c5)='text'", "0",
        };
        checkConcatWindow(&r, 1, 1, "1");
        for(j=0; j<(int)(sizeof(azWhere)/sizeof(azWhere[0])); j++){
          checkConcatWindow(&r, 2 + (int)check_below(&r, 30), 1 + (int)check_below(&r, 4),
                            azWhere[j]);
        }
      }
      if( aSize[iSize]<=300 ){
        checkRoundTrip("SELECT c5 AS x, c5 AS x, c0+1, c2*2, c4||'!', typeof(c5), "
                       "upper(c4), c9 COLLATE NOCASE FROM t WHERE c1 IS NOT NULL", 0);
        for(j=0; j<N_PROFILE; j++){
          char zCol[16];
          snprintf(zCol, sizeof(zCol), "c%d", j);
          checkKeys(zCol);
        }
      }
    }
  }
  checkErrors();
  }
  makeMergeTable();
  {
    static const int aMergePiece[] = { 1, 2, 7, 64, 512 };
    for(j=0; j<(int)(sizeof(aMergePiece)/sizeof(aMergePiece[0])); j++){
      checkMerge(&r, aMergePiece[j]);
    }
  }
  checkSinkReplaced();
  checkSinkStop();
  checkDictionary(&r);
  checkKeptBlocks();
  sqlite3_close(db);
  return check_summary("batches");
}
