/*
** batch.c: extraction of a SELECT's result into a columnar batch, the
** batch's values back into SQLite, and order-preserving sort keys.
**
**   ParBatch *pB; char *zErr;
**   rc = parBatchFromSql(db, "SELECT k, sum(v) FROM t GROUP BY k", 0, &pB, &zErr);
**   ... pB->aCol[1].aInt[i] ...  parColumnResult(&pB->aCol[0], i, ctx);
**   parColumnKeys(&pB->aCol[0], pB->nRow, PAR_COLL_NOCASE, 0, 2, &k1, &k2);
**   parBatchFree(pB);
**
** How it works:
**  1. Extraction steps the statement on the calling thread and appends each
**     value to its column.  A column starts without storage; its first
**     non-NULL value picks INT, REAL or TEXT storage (a BLOB picks MIXED).
**     A value of another storage class converts the column to MIXED once,
**     keeping every earlier value and its type.  TEXT and BLOB bytes go to
**     the column's dictionary (a hash table over exact bytes), rows hold
**     codes.  Arrays grow by doubling; every allocation is counted against
**     the batch's memory limit.
**  2. Sort keys: a column that holds one storage class gets a one-word key
**     (the int64 or double encoding of kernels/sort.h, or the text's
**     collation rank), with NULL given a word no value uses.  Anything else
**     uses the general encoding: NULL = 0, a number = the double key of the
**     largest double <= it (so INTEGER and REAL compare by value), TEXT and
**     BLOB = their rank above every number's key.  An integer no double
**     equals also gets a second word, its distance to that double
**     (0..2047), which orders integers between two adjacent doubles.
**  3. Collation ranks sort the distinct dictionary entries once with
**     SQLite's own rules for BINARY, NOCASE and RTRIM, and give equal
**     entries equal dense ranks.
*/
#include "batch.h"
#include "gather.h"
#include "sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PAR_MIN_ALLOC 1024

/* First key word above every number's key (px_key_f64(+Inf) + 1); TEXT
** ranks start here, BLOB ranks follow them. */
#define PAR_KEY_TEXT_BASE 0xFFF0000000000001ULL

int parCollFromName(const char *zName){
  if( zName==0 || sqlite3_stricmp(zName, "BINARY")==0 ) return PAR_COLL_BINARY;
  if( sqlite3_stricmp(zName, "NOCASE")==0 ) return PAR_COLL_NOCASE;
  if( sqlite3_stricmp(zName, "RTRIM")==0 ) return PAR_COLL_RTRIM;
  return -1;
}

/* ---- memory ------------------------------------------------------------ */

/* Resize p from nOld to nNew bytes, counting the difference against the
** batch's limit.  On failure p is left as it was and NULL returned. */
static void *parBatchRealloc(ParBatch *pB, void *p, sqlite3_int64 nOld,
                             sqlite3_int64 nNew){
  void *pNew;
  if( pB->mxMem>0 && pB->nMem - nOld + nNew > pB->mxMem ){
    pB->bOverLimit = 1;
    return 0;
  }
  pNew = sqlite3_realloc64(p, (sqlite3_uint64)nNew);
  if( pNew ) pB->nMem += nNew - nOld;
  return pNew;
}

/* Grow *pp from nOld to nNew elements of sz bytes, zeroing the new part. */
static int parGrow(ParBatch *pB, void **pp, sqlite3_int64 nOld,
                   sqlite3_int64 nNew, size_t sz){
  char *p = parBatchRealloc(pB, *pp, nOld*(sqlite3_int64)sz,
                            nNew*(sqlite3_int64)sz);
  if( p==0 ) return SQLITE_NOMEM;
  memset(p + nOld*sz, 0, (size_t)(nNew-nOld)*sz);
  *pp = p;
  return SQLITE_OK;
}

static sqlite3_int64 parBitmapBytes(sqlite3_int64 nRow){ return (nRow+7)/8; }

/* ---- dictionary ---------------------------------------------------------- */

static uint64_t parHashBytes(const unsigned char *z, sqlite3_int64 n, int eKind){
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)n * 0xFF51AFD7ED558CCDULL)
             ^ (uint64_t)eKind;
  uint64_t w;
  while( n>=8 ){
    memcpy(&w, z, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 29;
    z += 8;
    n -= 8;
  }
  w = 0;
  memcpy(&w, z, (size_t)n);
  h = (h ^ w) * 0x94D049BB133111EBULL;
  return h ^ (h >> 31);
}

static void parDictFree(ParDict *pD){
  int i;
  if( pD==0 ) return;
  sqlite3_free(pD->aOff);
  sqlite3_free(pD->aLen);
  sqlite3_free(pD->aKind);
  sqlite3_free(pD->aByte);
  sqlite3_free(pD->aHash);
  for(i=0; i<PAR_N_COLL; i++) sqlite3_free(pD->aRank[i]);
  sqlite3_free(pD);
}

/* Rebuild the hash table of pD with nHash slots. */
static int parDictRehash(ParBatch *pB, ParDict *pD, uint32_t nHash){
  uint32_t *aHash = parBatchRealloc(pB, 0, 0, (sqlite3_int64)nHash*4);
  uint32_t i;
  if( aHash==0 ) return SQLITE_NOMEM;
  memset(aHash, 0, (size_t)nHash*4);
  for(i=0; i<pD->nEntry; i++){
    uint64_t h = parHashBytes((const unsigned char*)pD->aByte + pD->aOff[i],
                              pD->aLen[i], pD->aKind[i]);
    uint32_t s = (uint32_t)h & (nHash-1);
    while( aHash[s] ) s = (s+1) & (nHash-1);
    aHash[s] = i+1;
  }
  parBatchRealloc(pB, pD->aHash, (sqlite3_int64)pD->nHash*4, 0);
  pD->aHash = aHash;
  pD->nHash = nHash;
  return SQLITE_OK;
}

/* The code of the value (z, n, eKind) in pD, adding it if new. */
int parDictAdd(ParBatch *pB, ParDict *pD, const unsigned char *z,
               sqlite3_int64 n, int eKind, uint32_t *piCode){
  uint64_t h = parHashBytes(z, n, eKind);
  uint32_t s, c;
  int rc;
  if( pD->nHash==0 || (uint64_t)pD->nEntry*2 >= pD->nHash ){
    if( pD->nHash >= 0x80000000u ) return SQLITE_TOOBIG;
    rc = parDictRehash(pB, pD, pD->nHash ? pD->nHash*2 : 64);
    if( rc ) return rc;
  }
  for(s = (uint32_t)h & (pD->nHash-1); (c = pD->aHash[s])!=0;
      s = (s+1) & (pD->nHash-1)){
    c--;
    if( pD->aLen[c]==n && pD->aKind[c]==eKind
     && (n==0 || memcmp(pD->aByte + pD->aOff[c], z, (size_t)n)==0) ){
      *piCode = c;
      return SQLITE_OK;
    }
  }
  if( pD->nEntry==pD->nAlloc ){
    uint32_t nNew = pD->nAlloc ? pD->nAlloc*2 : 64;
    if( (rc = parGrow(pB, (void**)&pD->aOff, pD->nAlloc, nNew, 8))!=0
     || (rc = parGrow(pB, (void**)&pD->aLen, pD->nAlloc, nNew, 4))!=0
     || (rc = parGrow(pB, (void**)&pD->aKind, pD->nAlloc, nNew, 1))!=0 ){
      return rc;
    }
    pD->nAlloc = nNew;
  }
  if( pD->nByte + n > pD->nByteAlloc ){
    sqlite3_int64 nNew = pD->nByteAlloc ? pD->nByteAlloc*2 : 4096;
    while( nNew < pD->nByte + n ) nNew *= 2;
    rc = parGrow(pB, (void**)&pD->aByte, pD->nByteAlloc, nNew, 1);
    if( rc ) return rc;
    pD->nByteAlloc = nNew;
  }
  c = pD->nEntry++;
  if( n ) memcpy(pD->aByte + pD->nByte, z, (size_t)n);
  pD->aOff[c] = pD->nByte;
  pD->aLen[c] = (uint32_t)n;
  pD->aKind[c] = (uint8_t)eKind;
  pD->nByte += n;
  pD->aHash[s] = c+1;
  *piCode = c;
  return SQLITE_OK;
}

/* SQLite's collations on (a, na) and (b, nb), as in its main.c and util.c,
** including NOCASE's stop at a NUL byte (sqlite3StrNICmp). */
static int parCollCompare(int eColl, const unsigned char *a, int na,
                          const unsigned char *b, int nb){
  int n, r;
  if( eColl==PAR_COLL_RTRIM ){
    while( na>0 && a[na-1]==' ' ) na--;
    while( nb>0 && b[nb-1]==' ' ) nb--;
  }
  n = na<nb ? na : nb;
  if( eColl==PAR_COLL_NOCASE ){
    int i;
    r = 0;
    for(i=0; i<n; i++){
      int ca = a[i], cb = b[i];
      if( ca==0 ) break;
      if( ca>='A' && ca<='Z' ) ca += 'a'-'A';
      if( cb>='A' && cb<='Z' ) cb += 'a'-'A';
      if( ca!=cb ){ r = ca - cb; break; }
    }
    if( i<n && a[i]==0 ){
      int cb = b[i];
      if( cb>='A' && cb<='Z' ) cb += 'a'-'A';
      r = -cb;
    }
  }else{
    r = n ? memcmp(a, b, (size_t)n) : 0;
  }
  return r ? r : na - nb;
}

typedef struct ParRankCtx { const ParDict *pD; int eColl; } ParRankCtx;

static int parDictCmp(const void *pA, const void *pB, void *pArg){
  const ParRankCtx *p = (const ParRankCtx*)pArg;
  const ParDict *pD = p->pD;
  uint32_t a = *(const uint32_t*)pA, b = *(const uint32_t*)pB;
  const unsigned char *za = (const unsigned char*)pD->aByte + pD->aOff[a];
  const unsigned char *zb = (const unsigned char*)pD->aByte + pD->aOff[b];
  if( pD->aKind[a]!=pD->aKind[b] ) return pD->aKind[a]==SQLITE_TEXT ? -1 : 1;
  return parCollCompare(pD->aKind[a]==SQLITE_TEXT ? p->eColl : PAR_COLL_BINARY,
                        za, (int)pD->aLen[a], zb, (int)pD->aLen[b]);
}

const uint32_t *parDictRank(ParDict *pD, int eColl){
  uint32_t *aIdx, *aRank, i, r;
  ParRankCtx ctx;
  if( pD->aRank[eColl] ) return pD->aRank[eColl];
  aIdx = sqlite3_malloc64((sqlite3_uint64)(pD->nEntry ? pD->nEntry : 1)*4);
  aRank = sqlite3_malloc64((sqlite3_uint64)(pD->nEntry ? pD->nEntry : 1)*4);
  if( aIdx==0 || aRank==0 ){
    sqlite3_free(aIdx);
    sqlite3_free(aRank);
    return 0;
  }
  for(i=0; i<pD->nEntry; i++) aIdx[i] = i;
  ctx.pD = pD;
  ctx.eColl = eColl;
  qsort_r(aIdx, pD->nEntry, sizeof(uint32_t), parDictCmp, &ctx);
  for(i=0, r=0; i<pD->nEntry; i++){
    if( i>0 && parDictCmp(&aIdx[i-1], &aIdx[i], &ctx)!=0 ) r++;
    aRank[aIdx[i]] = r;
  }
  sqlite3_free(aIdx);
  pD->aRank[eColl] = aRank;
  return aRank;
}

/* ---- building a batch ---------------------------------------------------- */

void parColumnClear(ParColumn *pCol){
  sqlite3_free(pCol->zName);
  sqlite3_free(pCol->zDeclType);
  sqlite3_free(pCol->aNull);
  sqlite3_free(pCol->aInt);
  sqlite3_free(pCol->aReal);
  sqlite3_free(pCol->aCode);
  sqlite3_free(pCol->aType);
  sqlite3_free(pCol->aVal);
  if( !pCol->bBorrowDict ) parDictFree(pCol->pDict);
  memset(pCol, 0, sizeof(*pCol));
}

void parBatchFree(ParBatch *pB){
  int i;
  if( pB==0 ) return;
  for(i=0; i<pB->nCol; i++) parColumnClear(&pB->aCol[i]);
  sqlite3_free(pB->aCol);
  sqlite3_free(pB);
}

/* Grow every array of every column to nNew rows. */
static int parBatchGrow(ParBatch *pB, sqlite3_int64 nNew){
  sqlite3_int64 nOld = pB->nRowAlloc;
  int i, rc = SQLITE_OK;
  for(i=0; i<pB->nCol && rc==SQLITE_OK; i++){
    ParColumn *pCol = &pB->aCol[i];
    if( pCol->aNull ){
      rc = parGrow(pB, (void**)&pCol->aNull, parBitmapBytes(nOld),
                   parBitmapBytes(nNew), 1);
    }
    if( rc==SQLITE_OK && pCol->aInt ) rc = parGrow(pB, (void**)&pCol->aInt, nOld, nNew, 8);
    if( rc==SQLITE_OK && pCol->aReal ) rc = parGrow(pB, (void**)&pCol->aReal, nOld, nNew, 8);
    if( rc==SQLITE_OK && pCol->aCode ) rc = parGrow(pB, (void**)&pCol->aCode, nOld, nNew, 4);
    if( rc==SQLITE_OK && pCol->aType ) rc = parGrow(pB, (void**)&pCol->aType, nOld, nNew, 1);
    if( rc==SQLITE_OK && pCol->aVal ) rc = parGrow(pB, (void**)&pCol->aVal, nOld, nNew, 8);
    if( rc ){
      /* Arrays of this column already grown must not be grown again: give
      ** up on the batch, the caller frees it. */
      return rc;
    }
  }
  pB->nRowAlloc = nNew;
  return rc;
}

/* Convert pCol to MIXED storage holding its first nRow values. */
static int parColumnToMixed(ParBatch *pB, ParColumn *pCol, sqlite3_int64 nRow){
  sqlite3_int64 i, nAlloc = pB->nRowAlloc;
  int eType = pCol->eStore==PAR_COL_INT ? SQLITE_INTEGER
            : pCol->eStore==PAR_COL_REAL ? SQLITE_FLOAT
            : pCol->eStore==PAR_COL_TEXT ? SQLITE_TEXT : SQLITE_NULL;
  int rc;
  if( (rc = parGrow(pB, (void**)&pCol->aType, 0, nAlloc, 1))!=0 ) return rc;
  if( (rc = parGrow(pB, (void**)&pCol->aVal, 0, nAlloc, 8))!=0 ) return rc;
  for(i=0; i<nRow; i++){
    int bNull = pCol->aNull && (pCol->aNull[i>>3] >> (i&7)) & 1;
    uint64_t v = 0;
    if( bNull ){
      pCol->aType[i] = SQLITE_NULL;
      continue;
    }
    switch( pCol->eStore ){
      case PAR_COL_INT:  v = (uint64_t)pCol->aInt[i]; break;
      case PAR_COL_REAL: memcpy(&v, &pCol->aReal[i], 8); break;
      case PAR_COL_TEXT: v = pCol->aCode[i]; break;
    }
    pCol->aType[i] = (uint8_t)eType;
    pCol->aVal[i] = v;
  }
  parBatchRealloc(pB, pCol->aInt, pCol->aInt ? nAlloc*8 : 0, 0);
  parBatchRealloc(pB, pCol->aReal, pCol->aReal ? nAlloc*8 : 0, 0);
  parBatchRealloc(pB, pCol->aCode, pCol->aCode ? nAlloc*4 : 0, 0);
  pCol->aInt = 0;
  pCol->aReal = 0;
  pCol->aCode = 0;
  pCol->eStore = PAR_COL_MIXED;
  return SQLITE_OK;
}

/* Give a column that held only NULLs the storage for values of eType. */
static int parColumnStart(ParBatch *pB, ParColumn *pCol, int eType){
  sqlite3_int64 n = pB->nRowAlloc;
  switch( eType ){
    case SQLITE_INTEGER:
      pCol->eStore = PAR_COL_INT;
      return parGrow(pB, (void**)&pCol->aInt, 0, n, 8);
    case SQLITE_FLOAT:
      pCol->eStore = PAR_COL_REAL;
      return parGrow(pB, (void**)&pCol->aReal, 0, n, 8);
    case SQLITE_TEXT:
      pCol->eStore = PAR_COL_TEXT;
      return parGrow(pB, (void**)&pCol->aCode, 0, n, 4);
    default:
      return parColumnToMixed(pB, pCol, 0);
  }
}

static int parColumnAppend(ParBatch *pB, ParColumn *pCol, sqlite3_stmt *pStmt,
                           int iCol, sqlite3_int64 iRow){
  int eType = sqlite3_column_type(pStmt, iCol);
  int rc = SQLITE_OK;
  int eWant;
  if( eType==SQLITE_NULL ){
    if( pCol->aNull==0 ){
      rc = parGrow(pB, (void**)&pCol->aNull, 0, parBitmapBytes(pB->nRowAlloc), 1);
      if( rc ) return rc;
    }
    pCol->aNull[iRow>>3] |= (uint8_t)(1 << (iRow&7));
    pCol->nNull++;
    if( pCol->eStore==PAR_COL_MIXED ) pCol->aType[iRow] = SQLITE_NULL;
    return SQLITE_OK;
  }
  if( pCol->eStore==PAR_COL_NULL ){
    rc = parColumnStart(pB, pCol, eType);
  }else{
    eWant = pCol->eStore==PAR_COL_INT ? SQLITE_INTEGER
          : pCol->eStore==PAR_COL_REAL ? SQLITE_FLOAT
          : pCol->eStore==PAR_COL_TEXT ? SQLITE_TEXT : eType;
    if( eWant!=eType ) rc = parColumnToMixed(pB, pCol, iRow);
  }
  if( rc ) return rc;
  switch( eType ){
    case SQLITE_INTEGER: {
      sqlite3_int64 v = sqlite3_column_int64(pStmt, iCol);
      if( pCol->eStore==PAR_COL_INT ) pCol->aInt[iRow] = v;
      else pCol->aVal[iRow] = (uint64_t)v;
      break;
    }
    case SQLITE_FLOAT: {
      double r = sqlite3_column_double(pStmt, iCol);
      if( pCol->eStore==PAR_COL_REAL ) pCol->aReal[iRow] = r;
      else memcpy(&pCol->aVal[iRow], &r, 8);
      break;
    }
    default: {
      /* TEXT or BLOB: the bytes go to the dictionary. */
      const unsigned char *z;
      int n;
      uint32_t iCode = 0;
      if( eType==SQLITE_TEXT ){
        z = sqlite3_column_text(pStmt, iCol);
      }else{
        z = sqlite3_column_blob(pStmt, iCol);
      }
      n = sqlite3_column_bytes(pStmt, iCol);
      if( z==0 && n>0 ) return SQLITE_NOMEM;
      if( pCol->pDict==0 ){
        pCol->pDict = parBatchRealloc(pB, 0, 0, sizeof(ParDict));
        if( pCol->pDict==0 ) return SQLITE_NOMEM;
        memset(pCol->pDict, 0, sizeof(ParDict));
      }
      rc = parDictAdd(pB, pCol->pDict, z ? z : (const unsigned char*)"", n,
                      eType, &iCode);
      if( rc ) return rc;
      if( pCol->eStore==PAR_COL_TEXT ) pCol->aCode[iRow] = iCode;
      else pCol->aVal[iRow] = iCode;
      break;
    }
  }
  if( pCol->eStore==PAR_COL_MIXED ) pCol->aType[iRow] = (uint8_t)eType;
  return SQLITE_OK;
}

static char *parDup(const char *z){
  return z ? sqlite3_mprintf("%s", z) : 0;
}

int parBatchFromStmt(sqlite3_stmt *pStmt, sqlite3_int64 mxMem,
                     ParBatch **ppBatch, char **pzErr){
  sqlite3 *db = sqlite3_db_handle(pStmt);
  int nCol = sqlite3_column_count(pStmt);
  ParBatch *pB = 0;
  int rc = SQLITE_OK, i;

  *ppBatch = 0;
  *pzErr = 0;
  if( nCol<=0 ){
    *pzErr = sqlite3_mprintf("statement returns no columns: %s",
                             sqlite3_sql(pStmt));
    return SQLITE_ERROR;
  }
  pB = sqlite3_malloc(sizeof(*pB));
  if( pB==0 ) goto nomem;
  memset(pB, 0, sizeof(*pB));
  pB->mxMem = mxMem;
  pB->aCol = parBatchRealloc(pB, 0, 0, (sqlite3_int64)nCol*sizeof(ParColumn));
  if( pB->aCol==0 ) goto nomem;
  memset(pB->aCol, 0, nCol*sizeof(ParColumn));
  pB->nCol = nCol;
  for(i=0; i<nCol; i++){
    ParColumn *pCol = &pB->aCol[i];
    pCol->zName = parDup(sqlite3_column_name(pStmt, i));
    pCol->zDeclType = parDup(sqlite3_column_decltype(pStmt, i));
    if( pCol->zName==0 ) goto nomem;
  }

  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    if( pB->nRow==pB->nRowAlloc ){
      sqlite3_int64 nNew = pB->nRowAlloc ? pB->nRowAlloc*2 : PAR_MIN_ALLOC;
      if( parBatchGrow(pB, nNew) ) goto nomem;
    }
    for(i=0; i<nCol; i++){
      rc = parColumnAppend(pB, &pB->aCol[i], pStmt, i, pB->nRow);
      if( rc ) break;
    }
    if( rc ){
      if( rc==SQLITE_NOMEM ) goto nomem;
      *pzErr = sqlite3_mprintf("too many distinct values in column %d", i+1);
      goto error;
    }
    pB->nRow++;
  }
  if( rc!=SQLITE_DONE ){
    *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    goto error;
  }
  *ppBatch = pB;
  return SQLITE_OK;

nomem:
  rc = SQLITE_NOMEM;
  if( pB && pB->bOverLimit ){
    *pzErr = sqlite3_mprintf("memory limit of %lld MB exceeded while reading "
                             "rows (see par_config('memory_mb'))",
                             pB->mxMem/(1024*1024));
    rc = SQLITE_FULL;
  }else{
    *pzErr = sqlite3_mprintf("out of memory while reading rows");
  }
error:
  parBatchFree(pB);
  return rc;
}

int parPrepareOne(sqlite3 *db, const char *zSql, sqlite3_stmt **ppStmt,
                  const char *zNone, const char *zMany, char **pzErr){
  sqlite3_stmt *pStmt = 0, *pNext = 0;
  const char *zTail = 0;
  int rc;
  *ppStmt = 0;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, &zTail);
  if( rc ){
    *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    return rc;
  }
  if( pStmt==0 ){
    *pzErr = sqlite3_mprintf("%s", zNone);
    return SQLITE_ERROR;
  }
  /* Anything but whitespace and comments after the statement is a second
  ** statement; preparing it tells (without running it). */
  if( zTail && *zTail ){
    rc = sqlite3_prepare_v2(db, zTail, -1, &pNext, 0);
    sqlite3_finalize(pNext);
    if( rc || pNext ){
      sqlite3_finalize(pStmt);
      *pzErr = sqlite3_mprintf("%s", zMany);
      return SQLITE_ERROR;
    }
  }
  *ppStmt = pStmt;
  return SQLITE_OK;
}

int parBatchFromSql(sqlite3 *db, const char *zSql, sqlite3_int64 mxMem,
                    ParBatch **ppBatch, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  int rc;
  *ppBatch = 0;
  *pzErr = 0;
  rc = parPrepareOne(db, zSql, &pStmt, "no SQL statement given",
                     "only one SQL statement is allowed", pzErr);
  if( rc ) return rc;
  if( !sqlite3_stmt_readonly(pStmt) || sqlite3_column_count(pStmt)==0 ){
    sqlite3_finalize(pStmt);
    *pzErr = sqlite3_mprintf("not a read-only query: %s", zSql);
    return SQLITE_ERROR;
  }
  rc = parBatchFromStmt(pStmt, mxMem, ppBatch, pzErr);
  sqlite3_finalize(pStmt);
  return rc;
}

/* ---- values back to SQLite ----------------------------------------------- */

int parColumnType(const ParColumn *pCol, sqlite3_int64 iRow){
  if( pCol->aNull && (pCol->aNull[iRow>>3] >> (iRow&7)) & 1 ) return SQLITE_NULL;
  switch( pCol->eStore ){
    case PAR_COL_INT:   return SQLITE_INTEGER;
    case PAR_COL_REAL:  return SQLITE_FLOAT;
    case PAR_COL_TEXT:  return SQLITE_TEXT;
    case PAR_COL_MIXED: return pCol->aType[iRow];
    default:            return SQLITE_NULL;
  }
}

void parColumnResult(const ParColumn *pCol, sqlite3_int64 iRow,
                     sqlite3_context *ctx){
  int eType = parColumnType(pCol, iRow);
  uint64_t v = pCol->eStore==PAR_COL_MIXED ? pCol->aVal[iRow] : 0;
  switch( eType ){
    case SQLITE_INTEGER:
      sqlite3_result_int64(ctx, pCol->eStore==PAR_COL_INT
                                ? pCol->aInt[iRow] : (sqlite3_int64)v);
      break;
    case SQLITE_FLOAT: {
      double r;
      if( pCol->eStore==PAR_COL_REAL ) r = pCol->aReal[iRow];
      else memcpy(&r, &v, 8);
      sqlite3_result_double(ctx, r);
      break;
    }
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
      const ParDict *pD = pCol->pDict;
      uint32_t c = pCol->eStore==PAR_COL_TEXT ? pCol->aCode[iRow] : (uint32_t)v;
      /* Never a NULL pointer: that would make the result NULL. */
      const char *z = pD->aByte ? pD->aByte + pD->aOff[c] : "";
      if( eType==SQLITE_TEXT ){
        sqlite3_result_text(ctx, z, (int)pD->aLen[c], SQLITE_TRANSIENT);
      }else{
        sqlite3_result_blob(ctx, z, (int)pD->aLen[c], SQLITE_TRANSIENT);
      }
      break;
    }
    default:
      sqlite3_result_null(ctx);
      break;
  }
}

/* ---- sort keys ------------------------------------------------------------ */

/* The largest double <= i, and in *pRem the distance i - that double
** (0..2047: doubles near 2^63 are 1024 apart). */
static double parFloorDouble(sqlite3_int64 i, uint64_t *pRem){
  double d = (double)i;
  if( d >= 9223372036854775808.0 ){
    d = 9223372036854774784.0;           /* 2^63 - 1024 */
  }else if( (sqlite3_int64)d > i ){
    d = nextafter(d, -INFINITY);
  }
  *pRem = (uint64_t)i - (uint64_t)(sqlite3_int64)d;
  return d;
}

int parColumnKeys(ParColumn *pCol, sqlite3_int64 nRow, int eColl, int flags,
                  int nThread, uint64_t **paKey1, uint64_t **paKey2){
  int bDesc = (flags & PAR_KEY_DESC)!=0;
  int bNullsFirst = (flags & PAR_KEY_NULLS_LAST)==0;
  /* NULL's word before the DESC complement: 0 sorts first, ~0 last. */
  uint64_t nullKey = (bNullsFirst ^ bDesc) ? 0 : ~(uint64_t)0;
  uint64_t flip = bDesc ? ~(uint64_t)0 : 0;
  const uint32_t *aRank = 0;
  uint64_t *a1, *a2 = 0;
  uint64_t anyRem = 0;
  int bGeneral = 0;
  sqlite3_int64 i;

  *paKey1 = *paKey2 = 0;
  if( pCol->pDict ){
    aRank = parDictRank(pCol->pDict, eColl);
    if( aRank==0 ) return SQLITE_NOMEM;
  }
  a1 = sqlite3_malloc64((sqlite3_uint64)(nRow ? nRow : 1)*8);
  if( a1==0 ) return SQLITE_NOMEM;

  if( pCol->eStore==PAR_COL_INT && pCol->nNull>0 ){
    /* One word still works when no value takes the NULL's word. */
    sqlite3_int64 taken = nullKey ? INT64_MAX : INT64_MIN;
    for(i=0; i<nRow && !bGeneral; i++){
      if( pCol->aInt[i]==taken && !((pCol->aNull[i>>3] >> (i&7)) & 1) ) bGeneral = 1;
    }
  }
  if( pCol->eStore==PAR_COL_MIXED ) bGeneral = 1;

  if( !bGeneral ){
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(i=0; i<nRow; i++){
      uint64_t k;
      if( pCol->aNull && (pCol->aNull[i>>3] >> (i&7)) & 1 ){
        k = nullKey;
      }else{
        switch( pCol->eStore ){
          case PAR_COL_INT:  k = px_key_i64(pCol->aInt[i]); break;
          case PAR_COL_REAL: k = px_key_f64(pCol->aReal[i]); break;
          default:           k = (uint64_t)aRank[pCol->aCode[i]] + 1; break;
        }
      }
      a1[i] = k ^ flip;
    }
    *paKey1 = a1;
    return SQLITE_OK;
  }

  a2 = sqlite3_malloc64((sqlite3_uint64)(nRow ? nRow : 1)*8);
  if( a2==0 ){
    sqlite3_free(a1);
    return SQLITE_NOMEM;
  }
  #pragma omp parallel for num_threads(nThread) schedule(static) reduction(|:anyRem)
  for(i=0; i<nRow; i++){
    int eType = parColumnType(pCol, i);
    uint64_t k = 0, rem = 0, v;
    double r;
    v = pCol->eStore==PAR_COL_MIXED ? pCol->aVal[i] : (uint64_t)pCol->aInt[i];
    switch( eType ){
      case SQLITE_NULL:
        k = nullKey;
        break;
      case SQLITE_INTEGER:
        k = px_key_f64(parFloorDouble((sqlite3_int64)v, &rem));
        break;
      case SQLITE_FLOAT:
        memcpy(&r, &v, 8);
        k = px_key_f64(r);
        break;
      default:  /* TEXT, BLOB: ranks of TEXT come first */
        k = PAR_KEY_TEXT_BASE + aRank[(uint32_t)v];
        break;
    }
    anyRem |= rem;
    a1[i] = k ^ flip;
    a2[i] = rem ^ flip;
  }
  if( anyRem==0 ){
    sqlite3_free(a2);
    a2 = 0;
  }
  *paKey1 = a1;
  *paKey2 = a2;
  return SQLITE_OK;
}

int parColumnGather(const ParColumn *pSrc, const uint32_t *aIdx, sqlite3_int64 nRow,
                    int nThread, ParColumn *pDst){
  sqlite3_int64 i, n = nRow ? nRow : 1;
  memset(pDst, 0, sizeof(*pDst));
  pDst->eStore = pSrc->eStore;
  pDst->pDict = pSrc->pDict;
  pDst->bBorrowDict = 1;
  if( pSrc->aNull ){
    sqlite3_int64 nNull = 0;
    pDst->aNull = sqlite3_malloc64((sqlite3_uint64)parBitmapBytes(n));
    if( pDst->aNull==0 ) return SQLITE_NOMEM;
    #pragma omp parallel for num_threads(nThread) schedule(static) reduction(+:nNull)
    for(i=0; i<parBitmapBytes(nRow); i++){
      uint8_t b = 0;
      int k;
      for(k=0; k<8 && i*8+k<nRow; k++){
        uint32_t r = aIdx[i*8+k];
        if( (pSrc->aNull[r>>3] >> (r&7)) & 1 ){
          b |= (uint8_t)(1<<k);
          nNull++;
        }
      }
      pDst->aNull[i] = b;
    }
    pDst->nNull = nNull;
  }
  if( pSrc->aInt ){
    pDst->aInt = sqlite3_malloc64((sqlite3_uint64)n*8);
    if( pDst->aInt==0 ) return SQLITE_NOMEM;
    px_gather_u64((const uint64_t*)pSrc->aInt, aIdx, (uint64_t*)pDst->aInt, (size_t)nRow, nThread);
  }
  if( pSrc->aReal ){
    pDst->aReal = sqlite3_malloc64((sqlite3_uint64)n*8);
    if( pDst->aReal==0 ) return SQLITE_NOMEM;
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(i=0; i<nRow; i++) pDst->aReal[i] = pSrc->aReal[aIdx[i]];
  }
  if( pSrc->aCode ){
    pDst->aCode = sqlite3_malloc64((sqlite3_uint64)n*4);
    if( pDst->aCode==0 ) return SQLITE_NOMEM;
    px_gather_u32(pSrc->aCode, aIdx, pDst->aCode, (size_t)nRow, nThread);
  }
  if( pSrc->aType ){
    pDst->aType = sqlite3_malloc64((sqlite3_uint64)n);
    if( pDst->aType==0 ) return SQLITE_NOMEM;
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(i=0; i<nRow; i++) pDst->aType[i] = pSrc->aType[aIdx[i]];
  }
  if( pSrc->aVal ){
    pDst->aVal = sqlite3_malloc64((sqlite3_uint64)n*8);
    if( pDst->aVal==0 ) return SQLITE_NOMEM;
    px_gather_u64(pSrc->aVal, aIdx, pDst->aVal, (size_t)nRow, nThread);
  }
  return SQLITE_OK;
}
