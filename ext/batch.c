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

#include <assert.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
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

/* May pB take nDelta more bytes under its limit (shared with other
** batches when pnShared is set)?  Sets bOverLimit when not. */
static int parBatchFits(ParBatch *pB, sqlite3_int64 nDelta){
  sqlite3_int64 nUsed = pB->pnShared ? __atomic_load_n(pB->pnShared, __ATOMIC_RELAXED)
                                     : pB->nMem;
  if( pB->mxMem>0 && nUsed + nDelta > pB->mxMem ){
    pB->bOverLimit = 1;
    return 0;
  }
  return 1;
}

/* Count nDelta bytes (negative: released) against pB's memory. */
static void parBatchCount(ParBatch *pB, sqlite3_int64 nDelta){
  pB->nMem += nDelta;
  if( pB->pnShared ) __atomic_add_fetch(pB->pnShared, nDelta, __ATOMIC_RELAXED);
}

/* Resize p from nOld to nNew bytes, counting the difference against the
** batch's limit.  On failure p is left as it was and NULL returned. */
static void *parBatchRealloc(ParBatch *pB, void *p, sqlite3_int64 nOld,
                             sqlite3_int64 nNew){
  void *pNew;
  if( !parBatchFits(pB, nNew - nOld) ) return 0;
  pNew = sqlite3_realloc64(p, (sqlite3_uint64)nNew);
  if( pNew || nNew==0 ) parBatchCount(pB, nNew - nOld);
  return pNew;
}

/* Grow *pp from nOld to nNew elements of sz bytes, leaving the new part
** as it comes: every row appended writes its value slots (0 for a NULL),
** and untouched pages cost no memory. */
static int parGrowRaw(ParBatch *pB, void **pp, sqlite3_int64 nOld,
                      sqlite3_int64 nNew, size_t sz){
  char *p = parBatchRealloc(pB, *pp, nOld*(sqlite3_int64)sz,
                            nNew*(sqlite3_int64)sz);
  if( p==0 ) return SQLITE_NOMEM;
  *pp = p;
  return SQLITE_OK;
}

/* Grow *pp from nOld to nNew elements of sz bytes, zeroing the new part. */
static int parGrow(ParBatch *pB, void **pp, sqlite3_int64 nOld,
                   sqlite3_int64 nNew, size_t sz){
  int rc = parGrowRaw(pB, pp, nOld, nNew, sz);
  if( rc==SQLITE_OK ) memset((char*)*pp + nOld*sz, 0, (size_t)(nNew-nOld)*sz);
  return rc;
}

/* Allocate *pp with n elements of sz bytes, not zeroed. */
static int parAlloc(ParBatch *pB, void **pp, sqlite3_int64 n, size_t sz){
  *pp = parBatchRealloc(pB, 0, 0, n*(sqlite3_int64)sz);
  return *pp || n==0 ? SQLITE_OK : SQLITE_NOMEM;
}

/* ---- kept blocks -------------------------------------------------------------
**
** A query allocates its large arrays (result columns, the dense group-by's
** accumulators) and frees them at its end; the next query's fresh pages
** then cost a fault and a zeroing each, about 8 ms of the 110 ms of a warm
** GROUP BY with 1M groups.  parBigFree() keeps the blocks freed most
** recently, up to PAR_BIG_KEEP bytes in all (the oldest go first), and
** parBigMalloc() takes a kept block that is at least the size asked and
** at most a quarter larger.  Every block is sqlite3_malloc64's own, so
** either side may be sqlite3_malloc64() or sqlite3_free() instead.
** Sanitizer builds keep blocks from PAR_BIG_MIN=4096 bytes (Makefile), so
** the tests reuse blocks all the time, and fill each block taken with
** 0xA5 (PAR_POISON_UNSET): code that reads what it did not write, or a
** kept block, fails there. */
#if defined(__SANITIZE_ADDRESS__)
# include <sanitizer/asan_interface.h>
/* A kept block is off limits to everything until taken again: a use after
** parBigFree() is reported as if the block had been freed. */
# define PAR_BIG_HIDE(p, n) ASAN_POISON_MEMORY_REGION(p, (size_t)(n))
# define PAR_BIG_SHOW(p, n) ASAN_UNPOISON_MEMORY_REGION(p, (size_t)(n))
#else
# define PAR_BIG_HIDE(p, n)
# define PAR_BIG_SHOW(p, n)
#endif

static struct {
  pthread_mutex_t mu;
  int n;                         /* blocks kept: a[0] oldest */
  sqlite3_int64 nByte;           /* their bytes */
  struct { void *p; sqlite3_int64 nByte; } a[PAR_BIG_SLOTS];
} parBig = { PTHREAD_MUTEX_INITIALIZER, 0, 0, {{0, 0}} };

static void parBigTake(int i){
  parBig.nByte -= parBig.a[i].nByte;
  memmove(&parBig.a[i], &parBig.a[i+1], sizeof(parBig.a[0])*(size_t)(parBig.n-i-1));
  parBig.n--;
}

void *parBigMalloc(sqlite3_int64 n){
  void *p = 0;
  int i, iBest = -1;
  if( n<PAR_BIG_MIN ) return sqlite3_malloc64((sqlite3_uint64)n);
  pthread_mutex_lock(&parBig.mu);
  for(i=0; i<parBig.n; i++){
    sqlite3_int64 m = parBig.a[i].nByte;
    if( m>=n && m-n<=n/4 && (iBest<0 || m<parBig.a[iBest].nByte) ) iBest = i;
  }
  if( iBest>=0 ){
    p = parBig.a[iBest].p;
    PAR_BIG_SHOW(p, parBig.a[iBest].nByte);
    parBigTake(iBest);
  }
  pthread_mutex_unlock(&parBig.mu);
  if( p==0 ){
    p = sqlite3_malloc64((sqlite3_uint64)n);
    /* Under a heap limit, what is kept may be what is missing. */
    if( p==0 && parBigRelease()>0 ) p = sqlite3_malloc64((sqlite3_uint64)n);
    return p;
  }
#ifdef PAR_POISON_UNSET
  memset(p, 0xA5, (size_t)n);    /* bytes nobody wrote are not zero */
#endif
  return p;
}

void parBigFree(void *p){
  void *aOut[PAR_BIG_SLOTS+1];
  int nOut = 0, i;
  sqlite3_int64 n = p ? (sqlite3_int64)sqlite3_msize(p) : 0;
  if( n<PAR_BIG_MIN || n>PAR_BIG_KEEP ){
    sqlite3_free(p);
    return;
  }
  pthread_mutex_lock(&parBig.mu);
#ifndef NDEBUG
  for(i=0; i<parBig.n; i++) assert( parBig.a[i].p!=p );   /* freed twice */
#endif
  while( parBig.n==PAR_BIG_SLOTS || parBig.nByte+n>PAR_BIG_KEEP ){
    aOut[nOut] = parBig.a[0].p;
    PAR_BIG_SHOW(aOut[nOut], parBig.a[0].nByte);
    nOut++;
    parBigTake(0);
  }
  PAR_BIG_HIDE(p, n);
  parBig.a[parBig.n].p = p;
  parBig.a[parBig.n].nByte = n;
  parBig.n++;
  parBig.nByte += n;
  pthread_mutex_unlock(&parBig.mu);
  for(i=0; i<nOut; i++) sqlite3_free(aOut[i]);
}

sqlite3_int64 parBigRelease(void){
  void *aOut[PAR_BIG_SLOTS];
  int nOut, i;
  sqlite3_int64 nByte;
  pthread_mutex_lock(&parBig.mu);
  nOut = parBig.n;
  nByte = parBig.nByte;
  for(i=0; i<nOut; i++){
    aOut[i] = parBig.a[i].p;
    PAR_BIG_SHOW(aOut[i], parBig.a[i].nByte);
  }
  parBig.n = 0;
  parBig.nByte = 0;
  pthread_mutex_unlock(&parBig.mu);
  for(i=0; i<nOut; i++) sqlite3_free(aOut[i]);
  return nByte;
}

/* ---- windows ---------------------------------------------------------------
**
** The pieces of one parallel read of a rowid table share their columns'
** arrays: a range of rowids holds at most as many rows as it spans, so
** piece i owns rows [iAt, iAt+span) of one array per column and width
** (8 bytes: INTEGER, REAL and MIXED values, which alias; 4: TEXT codes;
** 1: MIXED types), allocated once for every piece and touched only where
** rows are written.  parBatchConcat() then converts each piece to the
** column's final storage where it lies and closes the gaps a WHERE or
** missing rowids left (nothing to move when the rowids are dense). */
typedef struct ParWindowCol {
  uint64_t *a8;
  uint32_t *a4;
  uint8_t *a1;
} ParWindowCol;

struct ParWindow {
  int nCol;
  sqlite3_int64 nRow;          /* rows of every array */
  ParWindowCol *aCol;
};

ParWindow *parWindowNew(int nCol, sqlite3_int64 nRow){
  ParWindow *p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return 0;
  p->aCol = sqlite3_malloc64(sizeof(ParWindowCol)*(nCol>0 ? nCol : 1));
  if( p->aCol==0 ){ sqlite3_free(p); return 0; }
  memset(p->aCol, 0, sizeof(ParWindowCol)*(nCol>0 ? nCol : 1));
  p->nCol = nCol;
  p->nRow = nRow;
  return p;
}

void parWindowFree(ParWindow *p){
  int i;
  if( p==0 ) return;
  for(i=0; i<p->nCol; i++){
    sqlite3_free(p->aCol[i].a8);
    sqlite3_free(p->aCol[i].a4);
    sqlite3_free(p->aCol[i].a1);
  }
  sqlite3_free(p->aCol);
  sqlite3_free(p);
}

/* The shared array of width sz (8, 4 or 1 bytes) of column iCol, allocated
** by the first piece that needs it (pieces run on several threads). */
static void *parWindowArray(ParWindow *p, int iCol, size_t sz){
  void **pp = sz==8 ? (void**)&p->aCol[iCol].a8
            : sz==4 ? (void**)&p->aCol[iCol].a4 : (void**)&p->aCol[iCol].a1;
  void *pArr = __atomic_load_n(pp, __ATOMIC_ACQUIRE), *pNull = 0;
  if( pArr ) return pArr;
  pArr = sqlite3_malloc64((sqlite3_uint64)(p->nRow>0 ? p->nRow : 1)*sz);
  if( pArr==0 ) return 0;
  if( !__atomic_compare_exchange_n(pp, &pNull, pArr, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ){
    sqlite3_free(pArr);          /* another piece was first */
    pArr = pNull;
  }
  return pArr;
}

/* Storage of nAlloc elements of sz bytes for a value array of column pCol
** of pB: its own (zeroed below nZero), or its window.  The memory is
** counted against pB's limit either way. */
static int parColumnArray(ParBatch *pB, ParColumn *pCol, void **pp, size_t sz,
                          sqlite3_int64 nZero){
  sqlite3_int64 n = pB->nRowAlloc;
  if( pB->pWin ){
    char *pArr;
    if( !parBatchFits(pB, n*(sqlite3_int64)sz) ) return SQLITE_NOMEM;
    pArr = parWindowArray(pB->pWin, (int)(pCol - pB->aCol), sz);
    if( pArr==0 ) return SQLITE_NOMEM;
    parBatchCount(pB, n*(sqlite3_int64)sz);
    *pp = pArr + pB->iWinAt*(sqlite3_int64)sz;
    pCol->bWindow = 1;
  }else{
    int rc = parGrowRaw(pB, pp, 0, n, sz);
    if( rc ) return rc;
  }
  memset(*pp, 0, (size_t)nZero*sz);
  return SQLITE_OK;
}

static sqlite3_int64 parBitmapBytes(sqlite3_int64 nRow){ return (nRow+7)/8; }

/* ---- dictionary ---------------------------------------------------------- */

/* Load the 4 or 8 bytes at z (any alignment). */
static uint32_t parLoad4(const unsigned char *z){
  uint32_t w;
  memcpy(&w, z, 4);
  return w;
}
static uint64_t parLoad8(const unsigned char *z){
  uint64_t w;
  memcpy(&w, z, 8);
  return w;
}

/* The last bytes of a value of n bytes at z, as one word: the 8 bytes
** ending at z+n when n>=8 (overlapping what came before: the length is
** hashed too), else all of them (for 1-3 bytes: first, middle, last).
** Loads of fixed size compile to single moves; a memcpy of n bytes is a
** libc call per value. */
static uint64_t parTailWord(const unsigned char *z, sqlite3_int64 n){
  if( n>=8 ) return parLoad8(z + n - 8);
  if( n>=4 ) return (uint64_t)parLoad4(z) | (uint64_t)parLoad4(z + n - 4) << 32;
  if( n>0 ) return (uint64_t)z[0] | (uint64_t)z[n/2] << 8 | (uint64_t)z[n-1] << 16;
  return 0;
}

static inline uint64_t parHashBytes(const unsigned char *z, sqlite3_int64 n, int eKind){
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)n * 0xFF51AFD7ED558CCDULL)
             ^ (uint64_t)eKind;
  const unsigned char *zEnd = z + n;
  while( zEnd - z > 8 ){
    h = (h ^ parLoad8(z)) * 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 29;
    z += 8;
  }
  /* A product carries only upward: fold the high half down before and
  ** after the last multiply, so that every bit of the value reaches the
  ** low bits (the slot) and the high ones (the tag). */
  h = (h ^ parTailWord(z, zEnd - z)) * 0x94D049BB133111EBULL;
  h = (h ^ (h >> 32)) * 0xD6E8FEB86659FD93ULL;
  return h ^ (h >> 32);
}

/* parBytesEqual(), inlined where every entry goes through it. */
static inline int parBytesSame(const unsigned char *a, const unsigned char *b, sqlite3_int64 n){
  if( n>16 ) return memcmp(a, b, (size_t)n)==0;
  if( n>=8 ){
    return ((parLoad8(a) ^ parLoad8(b)) | (parLoad8(a+n-8) ^ parLoad8(b+n-8)))==0;
  }
  return parTailWord(a, n)==parTailWord(b, n);
}

int parBytesEqual(const unsigned char *a, const unsigned char *b, sqlite3_int64 n){
  return parBytesSame(a, b, n);
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

/* A slot of a dictionary's hash table: the bits PAR_DICT_TAG of the
** value's hash (compared before any byte: the high half) and its code+1
** (0: an empty slot; codes stay below 2^31).  Tests build with a mask of
** 0 too, so that the bytes decide every probe. */
#ifndef PAR_DICT_TAG
# define PAR_DICT_TAG 0xFFFFFFFF00000000ULL
#endif
#define PAR_SLOT(h, c)   (((h) & PAR_DICT_TAG) | ((uint64_t)(c) + 1))

/* Rebuild the hash table of pD with nHash slots. */
static int parDictRehash(ParBatch *pB, ParDict *pD, uint32_t nHash){
  uint64_t *aHash = parBatchRealloc(pB, 0, 0, (sqlite3_int64)nHash*8);
  uint32_t i;
  if( aHash==0 ) return SQLITE_NOMEM;
  memset(aHash, 0, (size_t)nHash*8);
  for(i=0; i<pD->nEntry; i++){
    uint64_t h = parHashBytes((const unsigned char*)parDictText(pD, i),
                              pD->aLen[i], pD->aKind[i]);
    uint32_t s = (uint32_t)h & (nHash-1);
    while( aHash[s] ) s = (s+1) & (nHash-1);
    aHash[s] = PAR_SLOT(h, i);
  }
  parBatchRealloc(pB, pD->aHash, (sqlite3_int64)pD->nHash*8, 0);
  pD->aHash = aHash;
  pD->nHash = nHash;
  return SQLITE_OK;
}

/* The code of the value (z, n, eKind) in pD, adding it if new. */
int parDictAdd(ParBatch *pB, ParDict *pD, const unsigned char *z,
               sqlite3_int64 n, int eKind, uint32_t *piCode){
  uint64_t h = parHashBytes(z, n, eKind), slot, tag = h & PAR_DICT_TAG;
  uint32_t s, c;
  int rc;
  if( pD->nHash==0 || (uint64_t)pD->nEntry*2 >= pD->nHash ){
    if( pD->nHash >= 0x80000000u ) return SQLITE_TOOBIG;
    rc = parDictRehash(pB, pD, pD->nHash ? pD->nHash*2 : 64);
    if( rc ) return rc;
  }
  for(s = (uint32_t)h & (pD->nHash-1); (slot = pD->aHash[s])!=0;
      s = (s+1) & (pD->nHash-1)){
    if( (slot & PAR_DICT_TAG)!=tag ) continue;
    c = (uint32_t)slot - 1;
    if( pD->aLen[c]==n && pD->aKind[c]==eKind
     && (n==0 || parBytesSame((const unsigned char*)pD->aByte + pD->aOff[c], z, n)) ){
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
  pD->aHash[s] = PAR_SLOT(h, c);
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

/* Pairs of texts on which comparisons other than SQLite's own BINARY,
** NOCASE and RTRIM are likely to differ from them: case outside ASCII,
** characters between 'Z' and 'a', trailing spaces and tabs, NUL bytes,
** prefixes. */
static const struct { const char *a, *b; int na, nb; } aCollProbe[] = {
#define PAR_PROBE(A, B) { A, B, (int)sizeof(A)-1, (int)sizeof(B)-1 }
  PAR_PROBE("a", "A"), PAR_PROBE("a", "B"), PAR_PROBE("A", "b"),
  PAR_PROBE("_", "a"), PAR_PROBE("_", "A"), PAR_PROBE("Z", "_"), PAR_PROBE("[", "a"),
  PAR_PROBE("abc", "AB"), PAR_PROBE("ABC", "abd"), PAR_PROBE("abc", "abd"),
  PAR_PROBE("ab", "a"), PAR_PROBE("10", "9"), PAR_PROBE("a", "a"),
  PAR_PROBE("a", "a "), PAR_PROBE("a ", "a"), PAR_PROBE("a", " a"), PAR_PROBE("", "a"),
  PAR_PROBE("", " "), PAR_PROBE("a  ", "a "), PAR_PROBE("a\t", "a"),
  PAR_PROBE("a b", "a  b"), PAR_PROBE("a\0b", "a\0c"), PAR_PROBE("a\0", "a"),
  PAR_PROBE("A\0b", "a"),
  PAR_PROBE("\xc3\xa9", "\xc3\x89"),            /* e acute, E acute */
  PAR_PROBE("\xc3\xa9", "e"), PAR_PROBE("\xc3\xa9", "f"),
  PAR_PROBE("\xc3\x84", "\xc3\xa4"),            /* A, a with diaeresis */
  PAR_PROBE("stra\xc3\x9f" "e", "STRASSE"),     /* sharp s */
  PAR_PROBE("I", "\xc4\xb1"),                   /* dotless i */
  PAR_PROBE("\xe2\x85\xa0", "\xe2\x85\xb0"),    /* roman numeral one */
#undef PAR_PROBE
};

static const char *const azCollName[PAR_N_COLL] = { "BINARY", "NOCASE", "RTRIM" };

const char *parCollName(int eColl){
  return eColl>=0 && eColl<PAR_N_COLL ? azCollName[eColl] : "?";
}

/* parCollReplaced() asked of SQLite: *pbSure is 0 when the probe did not
** run to the end (the mask is then every collation). */
static int parCollProbe(sqlite3 *db, int *pbSure){
  sqlite3_str *pSql = sqlite3_str_new(db);
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int e, i, mask = 0, bUtf8 = 0;
  *pbSure = 0;
  for(e=0; e<PAR_N_COLL; e++){
    sqlite3_str_appendf(pSql, "%s(?1 COLLATE %s > ?2) - (?1 COLLATE %s < ?2)",
                        e ? ", " : "SELECT ", azCollName[e], azCollName[e]);
  }
  zSql = sqlite3_str_finish(pSql);
  if( zSql==0 || sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) ){
    sqlite3_free(zSql);
    sqlite3_finalize(pStmt);
    return (1<<PAR_N_COLL) - 1;     /* cannot tell: none is trusted */
  }
  sqlite3_free(zSql);
  bUtf8 = parDbIsUtf8(db);
  for(i=0; i<(int)(sizeof(aCollProbe)/sizeof(aCollProbe[0])); i++){
    const unsigned char *a = (const unsigned char*)aCollProbe[i].a;
    const unsigned char *b = (const unsigned char*)aCollProbe[i].b;
    int na = aCollProbe[i].na, nb = aCollProbe[i].nb, bAscii = 1, k;
    for(k=0; k<na; k++) if( a[k]>=0x80 ) bAscii = 0;
    for(k=0; k<nb; k++) if( b[k]>=0x80 ) bAscii = 0;
    sqlite3_bind_text(pStmt, 1, (const char*)a, na, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, (const char*)b, nb, SQLITE_STATIC);
    if( sqlite3_step(pStmt)!=SQLITE_ROW ){
      sqlite3_finalize(pStmt);
      return (1<<PAR_N_COLL) - 1;
    }
    for(e=0; e<PAR_N_COLL; e++){
      int r = parCollCompare(e, a, na, b, nb);
      /* In UTF-16, BINARY compares the UTF-16 bytes: other orders beyond
      ** ASCII. */
      if( e==PAR_COLL_BINARY && !bUtf8 && !bAscii ) continue;
      if( sqlite3_column_int(pStmt, e)!=(r>0)-(r<0) ) mask |= 1<<e;
    }
    sqlite3_reset(pStmt);
  }
  *pbSure = sqlite3_finalize(pStmt)==SQLITE_OK;
  return mask;
}

/* The answer changes only when a collation is defined again, which the
** connection's plan cache sees (plancache.c): kept there when it can. */
int parDbIsUtf8(sqlite3 *db){
  sqlite3_stmt *pEnc = 0;
  int bUtf8 = 1;
  if( sqlite3_prepare_v2(db, "PRAGMA encoding", -1, &pEnc, 0)==SQLITE_OK
   && sqlite3_step(pEnc)==SQLITE_ROW ){
    bUtf8 = sqlite3_stricmp((const char*)sqlite3_column_text(pEnc, 0), "UTF-8")==0;
  }
  sqlite3_finalize(pEnc);
  return bUtf8;
}

int parCollReplaced(sqlite3 *db){
  int mask = parPlanCacheColl(db), bSure;
  if( mask>=0 ) return mask;
  mask = parCollProbe(db, &bSure);
  if( bSure ) parPlanCacheSetColl(db, mask);
  return mask;
}

typedef struct ParRankCtx { const ParDict *pD; int eColl; } ParRankCtx;

static int parDictCmp(const void *pA, const void *pB, void *pArg){
  const ParRankCtx *p = (const ParRankCtx*)pArg;
  const ParDict *pD = p->pD;
  uint32_t a = *(const uint32_t*)pA, b = *(const uint32_t*)pB;
  const unsigned char *za = (const unsigned char*)parDictText(pD, a);
  const unsigned char *zb = (const unsigned char*)parDictText(pD, b);
  if( pD->aKind[a]!=pD->aKind[b] ) return pD->aKind[a]==SQLITE_TEXT ? -1 : 1;
  return parCollCompare(pD->aKind[a]==SQLITE_TEXT ? p->eColl : PAR_COLL_BINARY,
                        za, (int)pD->aLen[a], zb, (int)pD->aLen[b]);
}

const uint32_t *parDictRank(ParDict *pD, int eColl){
  uint32_t *aIdx, *aRank, *aWon = 0, i, r;
  ParRankCtx ctx;
  /* The dictionary of a cached batch is read by queries of several threads
  ** at once: the ranks are published with a compare-and-swap, and a thread
  ** that loses the race frees its own (equal) copy. */
  aRank = __atomic_load_n(&pD->aRank[eColl], __ATOMIC_ACQUIRE);
  if( aRank ) return aRank;
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
  if( !__atomic_compare_exchange_n(&pD->aRank[eColl], &aWon, aRank, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE) ){
    sqlite3_free(aRank);
    aRank = aWon;
  }
  return aRank;
}

/* ---- building a batch ---------------------------------------------------- */

void parColumnClear(ParColumn *pCol){
  sqlite3_free(pCol->zName);
  sqlite3_free(pCol->zDeclType);
  sqlite3_free(pCol->aNull);
  if( !pCol->bWindow ){
    parBigFree(pCol->aInt);
    parBigFree(pCol->aReal);
    parBigFree(pCol->aCode);
    parBigFree(pCol->aType);
    parBigFree(pCol->aVal);
  }
  if( !pCol->bBorrowDict ) parDictFree(pCol->pDict);
  memset(pCol, 0, sizeof(*pCol));
}

void parBatchFree(ParBatch *pB){
  int i;
  /* Atomic: a batch in the columnar cache is shared by the connections of
  ** every thread (extract.c), which take and drop references to it through
  ** parBatchSubset() and this function only. */
  if( pB==0 || __atomic_fetch_sub(&pB->nRef, 1, __ATOMIC_ACQ_REL) > 1 ) return;
  if( pB->pOwner ){
    parBatchFree(pB->pOwner);
  }else{
    for(i=0; i<pB->nCol; i++) parColumnClear(&pB->aCol[i]);
  }
  for(i=0; i<pB->nKeep; i++) parBatchFree(pB->apKeep[i]);
  sqlite3_free(pB->apKeep);
  sqlite3_free(pB->aCol);
  sqlite3_free(pB);
}

ParBatch *parBatchSubset(ParBatch *pOwner, const int *aiCol, int nCol){
  ParBatch *pB = sqlite3_malloc(sizeof(*pB));
  int i;
  if( pB==0 ) return 0;
  memset(pB, 0, sizeof(*pB));
  pB->aCol = sqlite3_malloc64(sizeof(ParColumn)*(nCol>0 ? nCol : 1));
  if( pB->aCol==0 ){ sqlite3_free(pB); return 0; }
  for(i=0; i<nCol; i++) pB->aCol[i] = pOwner->aCol[aiCol[i]];
  pB->nCol = nCol;
  pB->nRow = pB->nRowAlloc = pOwner->nRow;
  pB->nRef = 1;
  pB->pOwner = pOwner;
  __atomic_fetch_add(&pOwner->nRef, 1, __ATOMIC_RELAXED);   /* see parBatchFree */
  return pB;
}

sqlite3_int64 parBatchBytes(const ParBatch *pB){
  sqlite3_int64 n = pB->nRow, nByte = 0;
  int i;
  for(i=0; i<pB->nCol; i++){
    const ParColumn *pCol = &pB->aCol[i];
    const ParDict *pD = pCol->pDict;
    if( pCol->aNull ) nByte += parBitmapBytes(n);
    nByte += n*((pCol->aInt ? 8 : 0) + (pCol->aReal ? 8 : 0) + (pCol->aCode ? 4 : 0)
                + (pCol->aType ? 1 : 0) + (pCol->aVal ? 8 : 0));
    if( pD ) nByte += pD->nByte + (sqlite3_int64)pD->nEntry*13 + (sqlite3_int64)pD->nHash*8;
  }
  return nByte;
}

/* Grow every array of every column to nNew rows: the NULL bitmaps zeroed
** (rows set their bit), the value arrays not. */
static int parBatchGrow(ParBatch *pB, sqlite3_int64 nNew){
  sqlite3_int64 nOld = pB->nRowAlloc;
  int i, rc = SQLITE_OK;
  for(i=0; i<pB->nCol && rc==SQLITE_OK; i++){
    ParColumn *pCol = &pB->aCol[i];
    if( pCol->aNull ){
      rc = parGrow(pB, (void**)&pCol->aNull, parBitmapBytes(nOld),
                   parBitmapBytes(nNew), 1);
    }
    if( rc==SQLITE_OK && pCol->aInt ) rc = parGrowRaw(pB, (void**)&pCol->aInt, nOld, nNew, 8);
    if( rc==SQLITE_OK && pCol->aReal ) rc = parGrowRaw(pB, (void**)&pCol->aReal, nOld, nNew, 8);
    if( rc==SQLITE_OK && pCol->aCode ) rc = parGrowRaw(pB, (void**)&pCol->aCode, nOld, nNew, 4);
    if( rc==SQLITE_OK && pCol->aType ) rc = parGrowRaw(pB, (void**)&pCol->aType, nOld, nNew, 1);
    if( rc==SQLITE_OK && pCol->aVal ) rc = parGrowRaw(pB, (void**)&pCol->aVal, nOld, nNew, 8);
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
  /* In a window aVal is where aInt or aReal was: each value moves onto
  ** itself. */
  if( (rc = parColumnArray(pB, pCol, (void**)&pCol->aType, 1, 0))!=0 ) return rc;
  if( (rc = parColumnArray(pB, pCol, (void**)&pCol->aVal, 8, 0))!=0 ) return rc;
  for(i=0; i<nRow; i++){
    int bNull = pCol->aNull && (pCol->aNull[i>>3] >> (i&7)) & 1;
    uint64_t v = 0;
    if( bNull ){
      pCol->aType[i] = SQLITE_NULL;
      pCol->aVal[i] = 0;
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
  if( pCol->bWindow ){
    /* aVal took aInt's or aReal's window; aCode's stays allocated. */
    parBatchCount(pB, (pCol->aInt || pCol->aReal) ? -nAlloc*8 : 0);
  }else{
    parBatchRealloc(pB, pCol->aInt, pCol->aInt ? nAlloc*8 : 0, 0);
    parBatchRealloc(pB, pCol->aReal, pCol->aReal ? nAlloc*8 : 0, 0);
    parBatchRealloc(pB, pCol->aCode, pCol->aCode ? nAlloc*4 : 0, 0);
  }
  pCol->aInt = 0;
  pCol->aReal = 0;
  pCol->aCode = 0;
  pCol->eStore = PAR_COL_MIXED;
  pCol->bRange = 0;
  return SQLITE_OK;
}

/* Give a column that held only NULLs (its first nRow rows) the storage
** for values of eType. */
static int parColumnStart(ParBatch *pB, ParColumn *pCol, int eType, sqlite3_int64 nRow){
  switch( eType ){
    case SQLITE_INTEGER:
      pCol->eStore = PAR_COL_INT;
      pCol->bRange = 1;
      pCol->iMin = INT64_MAX;
      pCol->iMax = INT64_MIN;
      return parColumnArray(pB, pCol, (void**)&pCol->aInt, 8, nRow);
    case SQLITE_FLOAT:
      pCol->eStore = PAR_COL_REAL;
      return parColumnArray(pB, pCol, (void**)&pCol->aReal, 8, nRow);
    case SQLITE_TEXT:
      pCol->eStore = PAR_COL_TEXT;
      return parColumnArray(pB, pCol, (void**)&pCol->aCode, 4, nRow);
    default:
      return parColumnToMixed(pB, pCol, nRow);
  }
}

static int parColumnAppend(ParBatch *pB, ParColumn *pCol, sqlite3_value *pVal,
                           sqlite3_int64 iRow){
  int eType = sqlite3_value_type(pVal);
  int rc = SQLITE_OK;
  int eWant;
  if( eType==SQLITE_NULL ){
    if( pCol->aNull==0 ){
      rc = parGrow(pB, (void**)&pCol->aNull, 0, parBitmapBytes(pB->nRowAlloc), 1);
      if( rc ) return rc;
    }
    pCol->aNull[iRow>>3] |= (uint8_t)(1 << (iRow&7));
    pCol->nNull++;
    /* A NULL's value slot holds 0 (the arrays grow unzeroed). */
    switch( pCol->eStore ){
      case PAR_COL_INT:  pCol->aInt[iRow] = 0; break;
      case PAR_COL_REAL: pCol->aReal[iRow] = 0; break;
      case PAR_COL_TEXT: pCol->aCode[iRow] = 0; break;
      case PAR_COL_MIXED:
        pCol->aType[iRow] = SQLITE_NULL;
        pCol->aVal[iRow] = 0;
        break;
    }
    return SQLITE_OK;
  }
  if( pCol->eStore==PAR_COL_NULL ){
    rc = parColumnStart(pB, pCol, eType, iRow);
  }else{
    eWant = pCol->eStore==PAR_COL_INT ? SQLITE_INTEGER
          : pCol->eStore==PAR_COL_REAL ? SQLITE_FLOAT
          : pCol->eStore==PAR_COL_TEXT ? SQLITE_TEXT : eType;
    if( eWant!=eType ) rc = parColumnToMixed(pB, pCol, iRow);
  }
  if( rc ) return rc;
  switch( eType ){
    case SQLITE_INTEGER: {
      sqlite3_int64 v = sqlite3_value_int64(pVal);
      if( pCol->eStore==PAR_COL_INT ){
        pCol->aInt[iRow] = v;
        if( v<pCol->iMin ) pCol->iMin = v;
        if( v>pCol->iMax ) pCol->iMax = v;
      }else{
        pCol->aVal[iRow] = (uint64_t)v;
      }
      break;
    }
    case SQLITE_FLOAT: {
      double r = sqlite3_value_double(pVal);
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
        z = sqlite3_value_text(pVal);
      }else{
        z = sqlite3_value_blob(pVal);
      }
      n = sqlite3_value_bytes(pVal);
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

static char *parBatchAppendError(ParBatch *pB, int rc);

/* A new empty batch with the columns (names, declared types) of pStmt. */
static int parBatchNew(sqlite3_stmt *pStmt, sqlite3_int64 mxMem,
                       sqlite3_int64 *pnShared, ParBatch **ppB, char **pzErr){
  int nCol = sqlite3_column_count(pStmt), i;
  ParBatch *pB;
  *ppB = 0;
  if( nCol<=0 ){
    *pzErr = sqlite3_mprintf("statement returns no columns: %s", sqlite3_sql(pStmt));
    return SQLITE_ERROR;
  }
  pB = sqlite3_malloc(sizeof(*pB));
  if( pB==0 ) goto nomem;
  memset(pB, 0, sizeof(*pB));
  pB->nRef = 1;
  pB->mxMem = mxMem;
  pB->pnShared = pnShared;
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
  *ppB = pB;
  return SQLITE_OK;
nomem:
  /* Over the limit already when other batches share it (the rows another
  ** worker read): the limit's error, not an out-of-memory one. */
  if( pB && pB->bOverLimit ){
    *pzErr = parBatchAppendError(pB, SQLITE_NOMEM);
    parBatchFree(pB);
    return SQLITE_FULL;
  }
  parBatchFree(pB);
  *pzErr = sqlite3_mprintf("out of memory while reading rows");
  return SQLITE_NOMEM;
}

/* Append one row, the values aVal[0..nCol-1], to pB.  On error returns
** SQLITE_NOMEM (see pB->bOverLimit) or SQLITE_FULL (a dictionary is full). */
static int parBatchAppend(ParBatch *pB, sqlite3_value **aVal){
  int i, rc;
  if( pB->nRow==pB->nRowAlloc ){
    sqlite3_int64 nNew;
    if( pB->pWin ) return SQLITE_CORRUPT;   /* more rows than rowids */
    nNew = pB->nRowAlloc ? pB->nRowAlloc*2 : PAR_MIN_ALLOC;
    if( parBatchGrow(pB, nNew) ) return SQLITE_NOMEM;
  }
  for(i=0; i<pB->nCol; i++){
    rc = parColumnAppend(pB, &pB->aCol[i], aVal[i], pB->nRow);
    if( rc ) return rc==SQLITE_NOMEM ? rc : SQLITE_FULL;
  }
  pB->nRow++;
  return SQLITE_OK;
}

/* The message for an error rc of parBatchAppend. */
static char *parBatchAppendError(ParBatch *pB, int rc){
  if( rc==SQLITE_CORRUPT ){
    return sqlite3_mprintf("a range of rowids returned more rows than it spans");
  }
  if( rc==SQLITE_FULL ){
    return sqlite3_mprintf("too many distinct values in one column");
  }
  if( pB->bOverLimit ){
    return sqlite3_mprintf("memory limit of %lld MB exceeded while reading "
                           "rows (see par_config('memory_mb'))",
                           pB->mxMem/(1024*1024));
  }
  return sqlite3_mprintf("out of memory while reading rows");
}

/* SQLite code for an error rc of parBatchAppend. */
static int parBatchAppendRc(ParBatch *pB, int rc){
  return (rc==SQLITE_NOMEM && pB->bOverLimit) ? SQLITE_FULL : rc;
}

int parBatchFromStmt(sqlite3_stmt *pStmt, sqlite3_int64 mxMem,
                     ParBatch **ppBatch, char **pzErr){
  sqlite3 *db = sqlite3_db_handle(pStmt);
  sqlite3_value *aStack[16], **aVal = aStack;
  ParBatch *pB = 0;
  int rc, i, nCol;

  *ppBatch = 0;
  *pzErr = 0;
  rc = parBatchNew(pStmt, mxMem, 0, &pB, pzErr);
  if( rc ) return rc;
  nCol = pB->nCol;
  if( nCol>16 && (aVal = sqlite3_malloc64(sizeof(sqlite3_value*)*nCol))==0 ){
    rc = SQLITE_NOMEM;
    *pzErr = sqlite3_mprintf("out of memory while reading rows");
    goto error;
  }
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    for(i=0; i<nCol; i++) aVal[i] = sqlite3_column_value(pStmt, i);
    rc = parBatchAppend(pB, aVal);
    if( rc ){
      *pzErr = parBatchAppendError(pB, rc);
      rc = parBatchAppendRc(pB, rc);
      goto error;
    }
  }
  if( rc!=SQLITE_DONE ){
    *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    goto error;
  }
  if( aVal!=aStack ) sqlite3_free(aVal);
  *ppBatch = pB;
  return SQLITE_OK;

error:
  if( aVal!=aStack ) sqlite3_free(aVal);
  parBatchFree(pB);
  return rc;
}

/* ---- extraction through an aggregate -------------------------------------
**
** Stepping a statement costs a round trip through sqlite3_step() per row
** and a mutex-protected sqlite3_column_*() call per value.  Instead the
** rows are fed to an aggregate, par_sink(:par_sink, c0, c1, ...), so that one
** sqlite3_step() runs the whole scan inside the VDBE and each row costs
** one function call whose arguments are read without locking.  The
** first argument is a ParSink bound with sqlite3_bind_pointer(), which SQL
** cannot forge; xFinal returns the address of parSinkMark, which tells
** that the par_sink that ran was ours and not an application's.
**
** Any other use is an error (PAR_SINK_INTERNAL), never a row.  With no
** rows xFinal has no argument to check, so it fails then too, and marks
** the ParSink that parBatchFromSink is running on this thread
** (parSinkRunning) for the same connection: that statement's error means
** "no rows".  A use that makes no call at all (GROUP BY over no rows)
** returns no rows and no error.  par_sink still shows in
** pragma_function_list: SQLite 3.40 cannot register a function that the
** list omits. */

/* Pointer values pass from one function's result to another's argument
** inside a statement: the type name must be one no other extension uses. */
#define PAR_SINK_PTR "sqlite-parallel ParSink"
#define PAR_SINK_INTERNAL "par_sink() is internal to the parallel extension"

typedef struct ParSink ParSink;
struct ParSink {
  ParBatch *pB;      /* rows go here */
  sqlite3 *db;       /* the connection running the statement */
  sqlite3_int64 nStop;  /* >0: stop the statement after this many rows */
  int rc;            /* first error of parBatchAppend */
  int bDone;         /* our xFinal ran */
  int bStopped;      /* the sink ended the statement after nStop rows */
  int bEmpty;        /* an xFinal without rows ran on db meanwhile */
};

/* The ParSink of the parBatchFromSink() running on this thread. */
static _Thread_local ParSink *parSinkRunning = 0;

static void parSinkStep(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  /* The ParSink, checked at the first row and kept in the aggregate's
  ** context: sqlite3_value_pointer() compares type strings every call. */
  ParSink **pp = (ParSink**)sqlite3_aggregate_context(ctx, sizeof(ParSink*));
  ParSink *p;
  if( pp==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( (p = *pp)==0 ){
    p = argc>0 ? (ParSink*)sqlite3_value_pointer(argv[0], PAR_SINK_PTR) : 0;
    if( p==0 || argc-1!=p->pB->nCol ){
      sqlite3_result_error(ctx, PAR_SINK_INTERNAL, -1);
      return;
    }
    *pp = p;
  }
  if( p->rc ) return;
  if( p->pB->nRow==p->nStop ){
    /* Every row wanted is in: an error is the one way to end the
    ** statement from here (parBatchFromSink does not report it). */
    p->bStopped = 1;
    sqlite3_result_error(ctx, "par_sink: enough rows", -1);
    return;
  }
  p->rc = parBatchAppend(p->pB, &argv[1]);
  if( p->rc ){
    char *zErr = parBatchAppendError(p->pB, p->rc);
    sqlite3_result_error(ctx, zErr ? zErr : "out of memory", -1);
    sqlite3_free(zErr);
  }
}

/* par_sink's result: an address no other function can guess. */
static const char parSinkMark = 0;

static void parSinkFinal(sqlite3_context *ctx){
  ParSink **pp = (ParSink**)sqlite3_aggregate_context(ctx, 0);
  ParSink *p = parSinkRunning;
  if( pp && *pp ){
    sqlite3_result_int64(ctx, (sqlite3_int64)(intptr_t)&parSinkMark);
    return;
  }
  if( pp==0 && p && p->db==sqlite3_context_db_handle(ctx) ) p->bEmpty = 1;
  sqlite3_result_error(ctx, PAR_SINK_INTERNAL, -1);
}

int parBatchRegister(sqlite3 *db){
  return sqlite3_create_function(db, "par_sink", -1, SQLITE_UTF8|SQLITE_DIRECTONLY, 0,
                                 0, parSinkStep, parSinkFinal);
}

char *parSinkSql(const char *zSql, int nSql, int nCol){
  sqlite3_str *pStr = sqlite3_str_new(0);
  int i;
  sqlite3_str_appendall(pStr, "WITH par_sink_src(");
  for(i=0; i<nCol; i++) sqlite3_str_appendf(pStr, "%sc%d", i ? "," : "", i);
  sqlite3_str_appendf(pStr, ") AS (%.*s\n) SELECT par_sink(:par_sink", nSql, zSql);
  for(i=0; i<nCol; i++) sqlite3_str_appendf(pStr, ",c%d", i);
  sqlite3_str_appendall(pStr, ") FROM par_sink_src");
  return sqlite3_str_finish(pStr);
}

/* The text of the prepared statement pStmt without what may follow it
** (a semicolon, spaces): its length. */
static int parStmtLength(const char *zSql, const char *zTail){
  int n = (int)(zTail - zSql);
  while( n>0 && (zSql[n-1]==';' || zSql[n-1]==' ' || zSql[n-1]=='\t'
                 || zSql[n-1]=='\n' || zSql[n-1]=='\r' || zSql[n-1]=='\f') ) n--;
  return n;
}

int parBatchFromSink(sqlite3 *db, sqlite3_stmt *pSink, sqlite3_stmt *pMeta,
                     sqlite3_int64 mxMem, sqlite3_int64 *pnShared, ParWindow *pWin,
                     sqlite3_int64 iAt, sqlite3_int64 nSpan, int bStop,
                     ParBatch **ppBatch, char **pzErr){
  ParSink sink, *pPrior = parSinkRunning;
  int rc;
  *ppBatch = 0;
  *pzErr = 0;
  memset(&sink, 0, sizeof(sink));
  sink.db = db;
  sink.nStop = bStop ? nSpan : -1;
  rc = parBatchNew(pMeta, mxMem, pnShared, &sink.pB, pzErr);
  if( rc ) return rc;
  if( pWin ){
    sink.pB->pWin = pWin;
    sink.pB->iWinAt = iAt;
    sink.pB->nRowAlloc = nSpan;
  }
  sqlite3_bind_pointer(pSink, sqlite3_bind_parameter_index(pSink, ":par_sink"),
                       &sink, PAR_SINK_PTR, 0);
  parSinkRunning = &sink;
  rc = sqlite3_step(pSink);
  parSinkRunning = pPrior;
  if( rc==SQLITE_ROW ){
    sink.bDone = sqlite3_column_type(pSink, 0)==SQLITE_INTEGER
              && sqlite3_column_int64(pSink, 0)==(sqlite3_int64)(intptr_t)&parSinkMark;
    rc = sink.bDone ? sqlite3_step(pSink) : SQLITE_DONE;
  }else if( rc==SQLITE_ERROR && sink.bEmpty && sink.pB->nRow==0
         && strcmp(sqlite3_errmsg(db), PAR_SINK_INTERNAL)==0 ){
    /* Our xFinal without rows.  (A statement that an application's
    ** function ran meanwhile can have set bEmpty too; ours then failed
    ** with par_sink's message before its first row, which only a function
    ** passing that message on as its own error could make it do.) */
    sink.bDone = 1;
    rc = SQLITE_DONE;
  }
  if( sink.bStopped ){
    rc = SQLITE_OK;
  }else if( sink.rc ){
    *pzErr = parBatchAppendError(sink.pB, sink.rc);
    rc = parBatchAppendRc(sink.pB, sink.rc);
  }else if( bStop && rc==SQLITE_DONE && sink.bDone && sink.pB->nRow!=nSpan ){
    rc = SQLITE_CORRUPT;
    *pzErr = sqlite3_mprintf("a range of rowids returned fewer rows than it spans");
  }else if( rc!=SQLITE_DONE ){
    *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  }else if( !sink.bDone ){
    rc = SQLITE_NOTFOUND;      /* not our par_sink: the caller steps rows */
  }else{
    rc = SQLITE_OK;
  }
  sqlite3_reset(pSink);
  sqlite3_clear_bindings(pSink);
  if( rc ){
    parBatchFree(sink.pB);
    return rc;
  }
  *ppBatch = sink.pB;
  return SQLITE_OK;
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

ParParams *parParamsNew(int n){
  ParParams *p = sqlite3_malloc64(sizeof(ParParams) + sizeof(sqlite3_value*)*(n+1));
  if( p==0 ) return 0;
  p->n = n;
  p->apVal = (sqlite3_value**)&p[1];
  memset(p->apVal, 0, sizeof(sqlite3_value*)*(n+1));
  return p;
}

ParParams *parParamsDup(const ParParams *p, int *pbNoMem){
  ParParams *pNew;
  int i;
  if( p==0 ) return 0;
  pNew = parParamsNew(p->n);
  if( pNew==0 ){ *pbNoMem = 1; return 0; }
  for(i=0; i<p->n; i++){
    pNew->apVal[i] = p->apVal[i] ? sqlite3_value_dup(p->apVal[i]) : 0;
    if( p->apVal[i] && pNew->apVal[i]==0 ) *pbNoMem = 1;
  }
  if( *pbNoMem ){
    parParamsFree(pNew);
    return 0;
  }
  return pNew;
}

void parParamsFree(ParParams *p){
  int i;
  if( p==0 ) return;
  for(i=0; i<p->n; i++) sqlite3_value_free(p->apVal[i]);
  sqlite3_free(p);
}

int parParamsBind(sqlite3_stmt *pStmt, const ParParams *p){
  int j, n = p ? sqlite3_bind_parameter_count(pStmt) : 0, rc = SQLITE_OK;
  for(j=1; j<=n && rc==SQLITE_OK; j++){
    const char *z = sqlite3_bind_parameter_name(pStmt, j);
    int i = 0;
    if( z==0 || strncmp(z, ":par_p", 6)!=0 || z[6]<'1' || z[6]>'9' ) continue;
    for(z+=6; *z>='0' && *z<='9' && i<=p->n; z++) i = i*10 + (*z - '0');
    if( *z || i<1 || i>p->n || p->apVal[i-1]==0 ) continue;
    rc = sqlite3_bind_value(pStmt, j, p->apVal[i-1]);
  }
  return rc;
}

char *parParamsKey(const ParParams *p){
  sqlite3_str *pStr = sqlite3_str_new(0);
  int i;
  for(i=0; p && i<p->n; i++){
    sqlite3_value *v = p->apVal[i];
    if( v==0 ) continue;
    sqlite3_str_appendf(pStr, "\n?%d=", i+1);
    switch( sqlite3_value_type(v) ){
      case SQLITE_INTEGER:
        sqlite3_str_appendf(pStr, "i%lld", sqlite3_value_int64(v));
        break;
      case SQLITE_FLOAT: {
        /* Every bit: -0.0 and 0.0, NaN payloads. */
        double r = sqlite3_value_double(v);
        sqlite3_uint64 u;
        memcpy(&u, &r, sizeof(u));
        sqlite3_str_appendf(pStr, "r%llx", u);
        break;
      }
      case SQLITE_NULL:
        sqlite3_str_appendall(pStr, "n");
        break;
      default: {
        /* TEXT and BLOB as hex of their bytes, with the length. */
        int eType = sqlite3_value_type(v), k, nByte;
        const unsigned char *a = eType==SQLITE_TEXT ? sqlite3_value_text(v)
                                                    : sqlite3_value_blob(v);
        nByte = sqlite3_value_bytes(v);
        sqlite3_str_appendf(pStr, "%c%d:", eType==SQLITE_TEXT ? 't' : 'b', nByte);
        for(k=0; a && k<nByte; k++) sqlite3_str_appendf(pStr, "%02x", a[k]);
        break;
      }
    }
  }
  if( sqlite3_str_errcode(pStr) ){
    sqlite3_free(sqlite3_str_finish(pStr));
    return 0;
  }
  {
    char *z = sqlite3_str_finish(pStr);
    return z ? z : sqlite3_mprintf("");
  }
}

int parBatchFromSql(sqlite3 *db, const char *zSql, const ParParams *pParams,
                    sqlite3_int64 mxMem, ParBatch **ppBatch, char **pzErr){
  sqlite3_stmt *pStmt = 0, *pSink = 0;
  char *zSink = 0;
  int rc, nCol;
  *ppBatch = 0;
  *pzErr = 0;
  rc = parPrepareOne(db, zSql, &pStmt, "no SQL statement given",
                     "only one SQL statement is allowed", pzErr);
  if( rc ) return rc;
  nCol = sqlite3_column_count(pStmt);
  if( !sqlite3_stmt_readonly(pStmt) || nCol==0 ){
    sqlite3_finalize(pStmt);
    *pzErr = sqlite3_mprintf("not a read-only query: %s", zSql);
    return SQLITE_ERROR;
  }
  /* Through par_sink when it is registered and the SELECT can be wrapped
  ** (not too many columns for one function call), else row by row. */
  if( nCol <= PAR_SINK_MAX_COL ){
    const char *zTail = 0;
    sqlite3_stmt *pOne = 0;
    /* The statement's own text, without a trailing semicolon. */
    if( sqlite3_prepare_v2(db, zSql, -1, &pOne, &zTail)==SQLITE_OK && pOne ){
      zSink = parSinkSql(zSql, parStmtLength(zSql, zTail), nCol);
    }
    sqlite3_finalize(pOne);
    if( zSink && sqlite3_prepare_v2(db, zSink, -1, &pSink, 0)!=SQLITE_OK ){
      sqlite3_finalize(pSink);
      pSink = 0;
    }
  }
  rc = parParamsBind(pStmt, pParams);
  if( rc==SQLITE_OK && pSink ) rc = parParamsBind(pSink, pParams);
  if( rc ){
    *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  }else{
    rc = pSink ? parBatchFromSink(db, pSink, pStmt, mxMem, 0, 0, 0, 0, 0, ppBatch, pzErr)
               : SQLITE_NOTFOUND;
    if( rc==SQLITE_NOTFOUND ) rc = parBatchFromStmt(pStmt, mxMem, ppBatch, pzErr);
  }
  sqlite3_finalize(pSink);
  sqlite3_free(zSink);
  sqlite3_finalize(pStmt);
  return rc;
}

/* ---- concatenation ---------------------------------------------------------
**
** Batches read in pieces (rowid ranges, in parallel) become one batch in
** piece order.  A column keeps INT, REAL or TEXT storage when every piece
** has it (or holds only NULLs), else becomes MIXED; dictionaries are merged
** into one, entry by entry in piece order, and codes are mapped to it. */

/* Storage of column iCol over all pieces. */
static int parConcatStore(ParBatch **aIn, int nIn, int iCol){
  int e = PAR_COL_NULL, i;
  for(i=0; i<nIn; i++){
    int ePiece = aIn[i]->aCol[iCol].eStore;
    if( ePiece==PAR_COL_NULL || ePiece==e ) continue;
    if( e!=PAR_COL_NULL || ePiece==PAR_COL_MIXED ) return PAR_COL_MIXED;
    e = ePiece;
  }
  return e;
}

/* OR the first nRow bits of aSrc into aDst from bit iAt on.  Pieces rarely
** start on a byte boundary, so neighbouring pieces share a byte of aDst:
** this runs serially, a byte at a time, never inside the parallel copy. */
static void parBitmapOrAt(uint8_t *aDst, sqlite3_int64 iAt, const uint8_t *aSrc,
                          sqlite3_int64 nRow){
  sqlite3_int64 k, nByte = (nRow+7)>>3;
  int sh = (int)(iAt & 7);
  uint8_t *d = aDst + (iAt>>3);
  for(k=0; k<nByte; k++){
    unsigned b = aSrc[k];
    if( k==nByte-1 && (nRow&7) ) b &= (1u << (nRow&7)) - 1;  /* bits past nRow */
    if( b==0 ) continue;
    d[k] |= (uint8_t)(b << sh);
    if( sh && (b >> (8-sh)) ) d[k+1] |= (uint8_t)(b >> (8-sh));
  }
}

/* Copy the values (not the NULL bits) of piece pSrc into pDst from row iAt
** on; aMap maps pSrc's dictionary codes to pDst's.  Pieces never share a
** value slot, so pieces are copied in parallel. */
static void parConcatCopy(ParColumn *pDst, const ParColumn *pSrc, sqlite3_int64 nRow,
                          sqlite3_int64 iAt, const uint32_t *aMap){
  sqlite3_int64 i;
  switch( pDst->eStore ){
    case PAR_COL_NULL:
      return;
    case PAR_COL_INT:
      if( pSrc->aInt ) memcpy(pDst->aInt+iAt, pSrc->aInt, nRow*8);
      else memset(pDst->aInt+iAt, 0, nRow*8);     /* a piece of NULLs only */
      return;
    case PAR_COL_REAL:
      if( pSrc->aReal ) memcpy(pDst->aReal+iAt, pSrc->aReal, nRow*8);
      else memset(pDst->aReal+iAt, 0, nRow*8);
      return;
    case PAR_COL_TEXT:
      if( pSrc->aCode ){
        for(i=0; i<nRow; i++) pDst->aCode[iAt+i] = aMap[pSrc->aCode[i]];
      }else{
        memset(pDst->aCode+iAt, 0, nRow*4);
      }
      return;
  }
  for(i=0; i<nRow; i++){
    int bNull = pSrc->aNull && ((pSrc->aNull[i>>3] >> (i&7)) & 1);
    int eType = bNull ? SQLITE_NULL : parColumnType(pSrc, i);
    uint64_t v = 0;
    switch( pSrc->eStore ){
      case PAR_COL_INT:   if( !bNull ) v = (uint64_t)pSrc->aInt[i]; break;
      case PAR_COL_REAL:  if( !bNull ) memcpy(&v, &pSrc->aReal[i], 8); break;
      case PAR_COL_TEXT:  if( !bNull ) v = aMap[pSrc->aCode[i]]; break;
      case PAR_COL_MIXED:
        v = pSrc->aVal[i];
        if( eType==SQLITE_TEXT || eType==SQLITE_BLOB ) v = aMap[v];
        break;
    }
    pDst->aType[iAt+i] = (uint8_t)eType;
    pDst->aVal[iAt+i] = v;
  }
}

/* Column j of the pieces aIn, which lie in pWin at their iWinAt: convert
** each piece to pCol's storage where it lies (codes mapped by aaMap[i]),
** move the pieces to rows aAt[i] (when a WHERE or missing rowids left
** gaps), and give pWin's arrays, cut to the rows, to pCol. */
static int parWindowTake(ParBatch *pB, ParColumn *pCol, ParBatch **aIn, int nIn, int j,
                         const sqlite3_int64 *aAt, uint32_t **aaMap, ParWindow *pWin,
                         int nThread){
  ParWindowCol *pW = &pWin->aCol[j];
  sqlite3_int64 nRow = pB->nRow;
  const int e = pCol->eStore;
  int i, w, bGap = 0, bWork = 0;
  size_t aSz[3] = {8, 4, 1};
  void **aArr[3];

  if( e==PAR_COL_NULL ) return SQLITE_OK;
  if( (e!=PAR_COL_TEXT && parWindowArray(pWin, j, 8)==0)
   || (e==PAR_COL_TEXT && parWindowArray(pWin, j, 4)==0)
   || (e==PAR_COL_MIXED && parWindowArray(pWin, j, 1)==0) ){
    return SQLITE_NOMEM;
  }
  /* INTEGER and REAL pieces are in their final form already: no team
  ** then (waking a team's sleeping threads can cost milliseconds, more
  ** than the check). */
  for(i=0; i<nIn && !bWork; i++){
    bWork = aIn[i]->nRow && (e==PAR_COL_TEXT || e==PAR_COL_MIXED
                             || aIn[i]->aCol[j].eStore==PAR_COL_NULL);
  }
  #pragma omp parallel for num_threads(nThread) schedule(dynamic, 1) if(nThread>1 && bWork)
  for(i=0; i<nIn; i++){
    const ParColumn *pSrc = &aIn[i]->aCol[j];
    const sqlite3_int64 n = aIn[i]->nRow, at = aIn[i]->iWinAt;
    const uint32_t *aMap = aaMap[i];
    uint64_t *v8 = pW->a8 ? pW->a8 + at : 0;
    uint32_t *v4 = pW->a4 ? pW->a4 + at : 0;
    uint8_t *v1 = pW->a1 ? pW->a1 + at : 0;
    sqlite3_int64 k;
    if( n==0 ) continue;
    if( pSrc->eStore==PAR_COL_NULL ){
      if( e==PAR_COL_TEXT ) memset(v4, 0, (size_t)n*4); else memset(v8, 0, (size_t)n*8);
      if( e==PAR_COL_MIXED ) memset(v1, SQLITE_NULL, (size_t)n);
      continue;
    }
    if( e==PAR_COL_TEXT ){
      for(k=0; k<n; k++) v4[k] = aMap[v4[k]];
    }else if( e==PAR_COL_MIXED ){
      /* INTEGER and REAL values are already where MIXED keeps them. */
      for(k=0; k<n; k++){
        int bNull = pSrc->aNull && (pSrc->aNull[k>>3] >> (k&7)) & 1;
        switch( pSrc->eStore ){
          case PAR_COL_INT:  v1[k] = bNull ? SQLITE_NULL : SQLITE_INTEGER; break;
          case PAR_COL_REAL: v1[k] = bNull ? SQLITE_NULL : SQLITE_FLOAT; break;
          case PAR_COL_TEXT:
            v1[k] = bNull ? SQLITE_NULL : SQLITE_TEXT;
            v8[k] = bNull ? 0 : aMap[v4[k]];
            break;
          default:
            if( v1[k]==SQLITE_TEXT || v1[k]==SQLITE_BLOB ) v8[k] = aMap[v8[k]];
            break;
        }
      }
    }
  }
  /* Close the gaps, piece by piece in order: each moves to lower rows,
  ** onto rows no later piece still needs. */
  for(i=0; i<nIn; i++) if( aAt[i]!=aIn[i]->iWinAt ) bGap = 1;
  aArr[0] = (void**)&pW->a8;
  aArr[1] = (void**)&pW->a4;
  aArr[2] = (void**)&pW->a1;
  for(w=0; w<3; w++){
    int bUsed = w==0 ? e!=PAR_COL_TEXT : w==1 ? e==PAR_COL_TEXT : e==PAR_COL_MIXED;
    char *a = *aArr[w], *aCut;
    if( !bUsed ){
      sqlite3_free(a);
      *aArr[w] = 0;
      continue;
    }
    for(i=0; bGap && i<nIn; i++){
      if( aAt[i]!=aIn[i]->iWinAt && aIn[i]->nRow ){
        memmove(a + aAt[i]*aSz[w], a + aIn[i]->iWinAt*aSz[w], (size_t)aIn[i]->nRow*aSz[w]);
      }
    }
    /* Cut to the rows (shrinking in place; the old block if that fails). */
    aCut = nRow<pWin->nRow ? sqlite3_realloc64(a, (sqlite3_uint64)(nRow>0 ? nRow : 1)*aSz[w]) : 0;
    if( aCut ) a = aCut;
    *aArr[w] = 0;
    pB->nMem += nRow*(sqlite3_int64)aSz[w];
    switch( e ){
      case PAR_COL_INT:   pCol->aInt = (sqlite3_int64*)a; break;
      case PAR_COL_REAL:  pCol->aReal = (double*)a; break;
      case PAR_COL_TEXT:  pCol->aCode = (uint32_t*)a; break;
      default:
        if( w==0 ) pCol->aVal = (uint64_t*)a; else pCol->aType = (uint8_t*)a;
        break;
    }
  }
  return SQLITE_OK;
}

/* ---- merging dictionaries ----------------------------------------------------
**
** The pieces' dictionaries of one column become one whose codes are in
** order of first appearance over the pieces in order (piece 0's entries
** in their order, then each value of piece 1 not seen before, and so on),
** and aaMap[i][e] becomes the code of piece i's entry e.  Serially that is
** one parDictAdd() per entry of every piece: it grows with the number of
** pieces (8 per thread) times the distinct values of a piece.  In
** parallel (parDictMergeParallel), with the position of entry e of piece
** i written pos = i<<nEntryBits | e (so positions order as pieces, then
** entries):
**
**  1. Per piece, each thread reading its pieces' dictionaries once, in
**     order: every entry is looked up in one table shared by the threads
**     (ParMergeTable: open addressing over an array of values, each with
**     where its bytes are and the first position seen).  An absent value
**     is added with a compare-and-swap of its slot; a present one gets
**     the entry's position when that is earlier, with compare-and-swap.
**     At the end each value holds its first position, whatever the order
**     the threads came in; aaMap[i][e] holds the value's index.
**  2. Per piece: an entry whose value holds its own position is its
**     value's first occurrence (marked PAR_MERGE_NEW); count them and
**     their bytes.  One pass over the pieces turns the counts into each
**     piece's first code and byte offset.
**  3. Per piece: a first occurrence's code is its piece's first code plus
**     its rank among the piece's first occurrences; it goes to its value,
**     its bytes in place.  Then every entry takes its value's code.
**  4. The dictionary's hash table, from the hashes saved in 3, filled in
**     code order: slot for slot the table the serial merge leaves.
**
** The shared table is sized for the largest piece's entries at a quarter
** full; when the values prove more (half full), it is made 4 times larger
** and step 1 starts again, so it stays small when the pieces share their
** values (a bench Q3 piece holds 86% of all the values).  Only 2's pass
** (a step per piece) and 4 (a store per distinct value) are serial.  The
** dictionary's arrays are allocated once, with the sizes the serial merge
** grows them to, and counted against pB; the shared table (16 bytes a
** slot, 2 to 8 slots a distinct value) and the saved hashes are scratch,
** not counted, like aaMap.
**
** Why not partitions of the hash space, each thread walking every piece's
** entries of its partitions: each partition then reads every piece's
** dictionary again, a cache line for a few entries, and at 2 threads that
** step alone took longer than the whole serial merge (bench/concat.c). */

/* Entries of all pieces below which the merge runs serially: a team of
** threads (waking one can cost milliseconds) and the extra passes cost
** more than they save. */
#ifndef PAR_MERGE_MIN
# define PAR_MERGE_MIN 32768
#endif

#define PAR_MERGE_NEW  0x80000000u   /* aaMap mark: the first occurrence */
#define PAR_MERGE_LOCAL 64           /* values a thread takes at a time */
#define PAR_MERGE_PER_THREAD 131072  /* entries per thread of the merge */

/* The serial merge: one parDictAdd() per entry, in order. */
static int parDictMergeSerial(ParBatch *pB, ParColumn *pCol, ParBatch **aIn, int nIn,
                              int j, uint32_t **aaMap){
  int i, rc;
  for(i=0; i<nIn; i++){
    const ParDict *pD = aIn[i]->aCol[j].pDict;
    uint32_t e;
    if( pD==0 || pD->nEntry==0 ) continue;
    for(e=0; e<pD->nEntry; e++){
      rc = parDictAdd(pB, pCol->pDict, (const unsigned char*)parDictText(pD, e),
                      pD->aLen[e], pD->aKind[e], &aaMap[i][e]);
      if( rc ) return rc;
    }
  }
  return SQLITE_OK;
}

/* A value in the shared table of the parallel merge: where its bytes are
** (in the piece whose entry put it there) and the first position found so
** far, lowered with compare-and-swap; steps 2 and 3 put its code there. */
typedef struct ParMergeValue {
  const unsigned char *z;
  uint32_t nLenBlob;                 /* length, top bit set for a BLOB */
  uint32_t iPos;                     /* piece<<nEntryBits | entry; then the code */
} ParMergeValue;

/* The shared table of the parallel merge: nSlot slots (a power of two),
** each 0 or (its value's index in aVal, plus 1) << 32 | the hash's tag;
** values are taken PAR_MERGE_LOCAL at a time by each thread, and never
** more than nVal, half the slots. */
typedef struct ParMergeTable {
  uint64_t *aSlot;
  uint32_t nSlot;
  ParMergeValue *aVal;
  uint32_t nVal;
  uint32_t nTaken;                   /* values handed out to threads */
  int bFull;                         /* nVal are not enough: start again */
} ParMergeTable;

/* Step 1 of the parallel merge: aaMap[i][e] = the index of entry e of
** piece i's value in pT->aVal, which holds its first position; or
** pT->bFull set (none of it to be used). */
static void parMergeFind(ParMergeTable *pT, const ParDict *const *apD, int nIn,
                         int nEntryBits, uint32_t **aaMap, int nThread){
  const uint32_t mTag = (uint32_t)((uint64_t)PAR_DICT_TAG >> 32), mSlot = pT->nSlot - 1;
  int i;
  pT->nTaken = 0;
  pT->bFull = 0;
  #pragma omp parallel num_threads(nThread)
  {
    uint32_t iNext = 0, iEnd = 0;    /* this thread's values not used yet */
    sqlite3_int64 k;
    #pragma omp for schedule(static)
    for(k=0; k<pT->nSlot; k++) pT->aSlot[k] = 0;
    #pragma omp for schedule(dynamic, 1)
    for(i=0; i<nIn; i++){
      const ParDict *pD = apD[i];
      uint32_t n = pD ? pD->nEntry : 0, e;
      uint64_t aH[16];
      for(e=0; e<n && !__atomic_load_n(&pT->bFull, __ATOMIC_RELAXED); e++){
        const unsigned char *z = (const unsigned char*)parDictText(pD, e);
        const uint32_t nLenBlob = pD->aLen[e] | (pD->aKind[e]==SQLITE_BLOB ? 0x80000000u : 0);
        const uint32_t iPos = ((uint32_t)i << nEntryBits) | e;
        uint32_t tag, s, v = 0;
        uint64_t h;
        if( (e&15)==0 ){
          /* Hash 16 entries ahead and fetch their slots meanwhile. */
          uint32_t x, nx = n-e<16 ? n-e : 16;
          for(x=0; x<nx; x++){
            aH[x] = parHashBytes((const unsigned char*)parDictText(pD, e+x), pD->aLen[e+x],
                                 pD->aKind[e+x]);
            __builtin_prefetch(&pT->aSlot[(uint32_t)aH[x] & mSlot]);
          }
        }
        h = aH[e&15];
        tag = (uint32_t)(h >> 32) & mTag;
        for(s=(uint32_t)h & mSlot; ; s=(s+1) & mSlot){
          uint64_t cur = __atomic_load_n(&pT->aSlot[s], __ATOMIC_ACQUIRE);
          if( cur==0 ){
            if( iNext==iEnd ){
              iNext = __atomic_fetch_add(&pT->nTaken, PAR_MERGE_LOCAL, __ATOMIC_RELAXED);
              iEnd = iNext + PAR_MERGE_LOCAL;
              if( iEnd>pT->nVal ){
                __atomic_store_n(&pT->bFull, 1, __ATOMIC_RELAXED);
                iNext = iEnd;
                break;
              }
            }
            pT->aVal[iNext].z = z;
            pT->aVal[iNext].nLenBlob = nLenBlob;
            pT->aVal[iNext].iPos = iPos;
            if( __atomic_compare_exchange_n(&pT->aSlot[s], &cur,
                                            (uint64_t)(iNext+1) << 32 | tag, 0,
                                            __ATOMIC_RELEASE, __ATOMIC_ACQUIRE) ){
              v = iNext++;
              break;
            }
            /* Another thread took the slot: cur is its word. */
          }
          if( (uint32_t)cur==tag ){
            ParMergeValue *pV;
            v = (uint32_t)(cur >> 32) - 1;
            pV = &pT->aVal[v];
            if( pV->nLenBlob==nLenBlob
             && ((nLenBlob & 0x7fffffff)==0 || parBytesSame(pV->z, z, nLenBlob & 0x7fffffff)) ){
              uint32_t iOld = __atomic_load_n(&pV->iPos, __ATOMIC_RELAXED);
              while( iPos<iOld && !__atomic_compare_exchange_n(&pV->iPos, &iOld, iPos, 0,
                                                               __ATOMIC_RELAXED, __ATOMIC_RELAXED) ){}
              break;
            }
          }
        }
        aaMap[i][e] = v;
      }
    }
  }
}

/* The parallel merge (see above) of column j's entries, aBase[i] the
** number of them before piece i's (aBase[nIn]: all of them, below 2^29,
** so that the largest shared table has at most 2^31 slots);
** aaMap[i] is allocated for every piece with entries; a position takes
** nEntryBits bits for the entry and fits in 31 with the piece's. */
static int parDictMergeParallel(ParBatch *pB, ParColumn *pCol, ParBatch **aIn, int nIn,
                                int j, uint32_t **aaMap, const sqlite3_int64 *aBase,
                                int nEntryBits, int nThread){
  ParDict *pM = pCol->pDict;
  const ParDict **apD = 0;
  ParMergeTable tab;
  uint64_t *aCodeHash = 0;
  sqlite3_int64 *aNew = 0, *aNewByte = 0, nSlot, nSlotMax, nByte, nByteAlloc, nEntryLast;
  sqlite3_int64 nMax = 0;
  uint32_t nEntry, nAlloc, nHash, c;
  int i, iLast = -1, rc = SQLITE_NOMEM;

  memset(&tab, 0, sizeof(tab));
  apD = sqlite3_malloc64(sizeof(ParDict*)*nIn);
  aNew = sqlite3_malloc64((sqlite3_uint64)(nIn+1)*8);
  aNewByte = sqlite3_malloc64((sqlite3_uint64)(nIn+1)*8);
  if( apD==0 || aNew==0 || aNewByte==0 ) goto merge_done;
  for(i=0; i<nIn; i++){
    apD[i] = aIn[i]->aCol[j].pDict;
    if( aBase[i+1]-aBase[i] > nMax ) nMax = aBase[i+1]-aBase[i];
  }

  /* 1. First positions, in a table sized for the largest piece and grown
  ** 4 times while too small; the largest one fits every entry of every
  ** piece and what the threads hold back. */
  for(nSlotMax=1024; nSlotMax<2*(aBase[nIn] + (sqlite3_int64)PAR_MERGE_LOCAL*nThread);
      nSlotMax*=2){}
  for(nSlot=1024; nSlot<4*nMax || nSlot<4*PAR_MERGE_LOCAL*nThread; nSlot*=2){}
  if( nSlot>nSlotMax ) nSlot = nSlotMax;
  for(;;){
    tab.nSlot = (uint32_t)nSlot;
    tab.nVal = (uint32_t)(nSlot/2);
    tab.aSlot = sqlite3_malloc64((sqlite3_uint64)nSlot*8);
    tab.aVal = sqlite3_malloc64((sqlite3_uint64)tab.nVal*sizeof(ParMergeValue));
    if( tab.aSlot==0 || tab.aVal==0 ) goto merge_done;
    parMergeFind(&tab, apD, nIn, nEntryBits, aaMap, nThread);
    if( !tab.bFull ) break;
    assert( nSlot<nSlotMax );
    sqlite3_free(tab.aSlot);
    sqlite3_free(tab.aVal);
    tab.aSlot = 0;
    tab.aVal = 0;
    nSlot = nSlot*4 < nSlotMax ? nSlot*4 : nSlotMax;
  }

  /* 2. First occurrences and their bytes per piece, then each piece's
  ** first code and byte offset. */
  #pragma omp parallel for num_threads(nThread) schedule(dynamic, 1)
  for(i=0; i<nIn; i++){
    const ParDict *pD = apD[i];
    uint32_t n = (uint32_t)(aBase[i+1]-aBase[i]), e;
    sqlite3_int64 nNew = 0, nNewByte = 0;
    for(e=0; e<n; e++){
      if( tab.aVal[aaMap[i][e]].iPos == (((uint32_t)i << nEntryBits) | e) ){
        aaMap[i][e] |= PAR_MERGE_NEW;
        nNew++;
        nNewByte += pD->aLen[e];
      }
    }
    aNew[i+1] = nNew;
    aNewByte[i+1] = nNewByte;
  }
  aNew[0] = aNewByte[0] = 0;
  for(i=0; i<nIn; i++){
    aNew[i+1] += aNew[i];
    aNewByte[i+1] += aNewByte[i];
    if( aBase[i+1]>aBase[i] ) iLast = i;
  }
  assert( iLast>=0 && aNew[nIn]>0 );
  nEntry = (uint32_t)aNew[nIn];
  nByte = aNewByte[nIn];

  /* The sizes the serial merge ends with: parDictAdd() doubles the
  ** entries from 64 when full, the bytes from 4096 when short (none for
  ** empty values only), and the table from 64 slots whenever a call finds
  ** it half full: nEntryLast, the entries before the last call, decide. */
  nEntryLast = nEntry - ((aaMap[iLast][aBase[iLast+1]-aBase[iLast]-1] & PAR_MERGE_NEW) ? 1 : 0);
  if( nEntryLast >= ((sqlite3_int64)1 << 30) ){ rc = SQLITE_TOOBIG; goto merge_done; }
  for(nAlloc=64; nAlloc<nEntry; nAlloc*=2){}
  for(nHash=64; (sqlite3_int64)nHash <= 2*nEntryLast; nHash*=2){}
  nByteAlloc = 0;
  if( nByte>0 ) for(nByteAlloc=4096; nByteAlloc<nByte; nByteAlloc*=2){}
  if( (rc = parGrowRaw(pB, (void**)&pM->aOff, 0, nAlloc, 8))!=0
   || (rc = parGrowRaw(pB, (void**)&pM->aLen, 0, nAlloc, 4))!=0
   || (rc = parGrowRaw(pB, (void**)&pM->aKind, 0, nAlloc, 1))!=0
   || (nByteAlloc && (rc = parGrowRaw(pB, (void**)&pM->aByte, 0, nByteAlloc, 1))!=0)
   || (rc = parGrow(pB, (void**)&pM->aHash, 0, nHash, 8))!=0 ){
    goto merge_done;
  }
  pM->nAlloc = nAlloc;
  pM->nByteAlloc = nByteAlloc;
  pM->nHash = nHash;
  /* What the serial merge's zeroed growth leaves past the end. */
  memset(pM->aOff + nEntry, 0, (size_t)(nAlloc-nEntry)*8);
  memset(pM->aLen + nEntry, 0, (size_t)(nAlloc-nEntry)*4);
  memset(pM->aKind + nEntry, 0, (size_t)(nAlloc-nEntry));
  if( nByteAlloc ) memset(pM->aByte + nByte, 0, (size_t)(nByteAlloc-nByte));
  rc = SQLITE_NOMEM;
  aCodeHash = sqlite3_malloc64((sqlite3_uint64)nEntry*8);
  if( aCodeHash==0 ) goto merge_done;

  /* 3. The first occurrences' codes (in their slots) and bytes, then
  ** every entry's code. */
  #pragma omp parallel num_threads(nThread)
  {
    int q;
    #pragma omp for schedule(dynamic, 1)
    for(q=0; q<nIn; q++){
      const ParDict *pD = apD[q];
      uint32_t n = (uint32_t)(aBase[q+1]-aBase[q]), e, cNew = (uint32_t)aNew[q];
      sqlite3_int64 iOff = aNewByte[q];
      for(e=0; e<n; e++){
        uint32_t m = aaMap[q][e], nLen = pD->aLen[e];
        const unsigned char *z = (const unsigned char*)parDictText(pD, e);
        if( !(m & PAR_MERGE_NEW) ) continue;
        tab.aVal[m & ~PAR_MERGE_NEW].iPos = cNew;
        pM->aOff[cNew] = iOff;
        pM->aLen[cNew] = nLen;
        pM->aKind[cNew] = pD->aKind[e];
        if( nLen ) memcpy(pM->aByte + iOff, z, nLen);
        aCodeHash[cNew] = parHashBytes(z, nLen, pD->aKind[e]);
        cNew++;
        iOff += nLen;
      }
    }
    #pragma omp for schedule(dynamic, 1)
    for(q=0; q<nIn; q++){
      uint32_t n = (uint32_t)(aBase[q+1]-aBase[q]), e;
      for(e=0; e<n; e++) aaMap[q][e] = tab.aVal[aaMap[q][e] & ~PAR_MERGE_NEW].iPos;
    }
  }
  pM->nEntry = nEntry;
  pM->nByte = nByte;

  /* 4. The hash table, in code order. */
  for(c=0; c<nEntry; c++){
    uint32_t s = (uint32_t)aCodeHash[c] & (nHash-1);
    while( pM->aHash[s] ) s = (s+1) & (nHash-1);
    pM->aHash[s] = PAR_SLOT(aCodeHash[c], c);
  }
  rc = SQLITE_OK;

merge_done:
  sqlite3_free(apD);
  sqlite3_free(tab.aSlot);
  sqlite3_free(tab.aVal);
  sqlite3_free(aNew);
  sqlite3_free(aNewByte);
  sqlite3_free(aCodeHash);
  return rc;
}

/* Column j's merged dictionary in pCol->pDict (none when no piece has an
** entry) and aaMap[i], the code of each entry of piece i's dictionary
** (NULL for a piece without entries; the previous column's arrays are
** freed).  Serially or in parallel: the same dictionary either way. */
static int parDictMerge(ParBatch *pB, ParColumn *pCol, ParBatch **aIn, int nIn, int j,
                        uint32_t **aaMap, int nThread){
  sqlite3_int64 *aBase, nMax = 0;
  int i, rc, nEntryBits, nPieceBits;
  aBase = sqlite3_malloc64(sizeof(sqlite3_int64)*(nIn+1));
  if( aBase==0 ) return SQLITE_NOMEM;
  aBase[0] = 0;
  for(i=0; i<nIn; i++){
    const ParDict *pD = aIn[i]->aCol[j].pDict;
    uint32_t n = pD ? pD->nEntry : 0;
    aBase[i+1] = aBase[i] + n;
    if( n>nMax ) nMax = n;
    sqlite3_free(aaMap[i]);
    aaMap[i] = 0;
  }
  if( aBase[nIn]==0 ){
    sqlite3_free(aBase);
    return SQLITE_OK;
  }
  rc = SQLITE_NOMEM;
  pCol->pDict = parBatchRealloc(pB, 0, 0, sizeof(ParDict));
  if( pCol->pDict==0 ) goto merge_out;
  memset(pCol->pDict, 0, sizeof(ParDict));
  for(i=0; i<nIn; i++){
    if( aBase[i+1]==aBase[i] ) continue;
    aaMap[i] = sqlite3_malloc64(sizeof(uint32_t)*(aBase[i+1]-aBase[i]));
    if( aaMap[i]==0 ) goto merge_out;
  }
  /* Positions (piece, entry) must fit in 31 bits. */
  for(nEntryBits=0; ((sqlite3_int64)1 << nEntryBits) < nMax; nEntryBits++){}
  for(nPieceBits=0; (1 << nPieceBits) < nIn; nPieceBits++){}
  if( nThread>1 && nIn>1 && aBase[nIn]>=PAR_MERGE_MIN && aBase[nIn]<((sqlite3_int64)1 << 29)
   && nEntryBits+nPieceBits<=31 ){
    /* Threads by the work: PAR_MERGE_PER_THREAD entries each at least.
    ** The pieces of a table share most of their values, so every thread
    ** looks up the same few table slots: past ~32 threads (the 64-core
    ** device, 10,000 texts in 305 pieces) the merge took 90-110 ms against
    ** 10-40 ms at 32, the slots' cache lines moving between cores. */
    int nMerge = (int)(aBase[nIn]/PAR_MERGE_PER_THREAD);
    if( nMerge<2 ) nMerge = 2;
    if( nMerge>nThread ) nMerge = nThread;
    rc = parDictMergeParallel(pB, pCol, aIn, nIn, j, aaMap, aBase, nEntryBits, nMerge);
  }else{
    rc = parDictMergeSerial(pB, pCol, aIn, nIn, j, aaMap);
  }
merge_out:
  sqlite3_free(aBase);
  return rc;
}

int parBatchConcat(ParBatch **aIn, int nIn, sqlite3_int64 mxMem, int nThread,
                   ParWindow *pWin, ParBatch **ppOut, char **pzErr){
  ParBatch *pB = 0;
  uint32_t **aaMap = 0;
  sqlite3_int64 nRow = 0, *aAt = 0;
  int i, j, rc = SQLITE_OK;

  assert( nIn>=1 );
  *ppOut = 0;
  *pzErr = 0;
  for(i=0; i<nIn; i++) nRow += aIn[i]->nRow;
  pB = sqlite3_malloc(sizeof(*pB));
  aAt = sqlite3_malloc64(sizeof(sqlite3_int64)*nIn);
  aaMap = sqlite3_malloc64(sizeof(uint32_t*)*nIn);
  /* Zeroed before anything can fail: the error path frees them. */
  if( pB ) memset(pB, 0, sizeof(*pB));
  if( aaMap ) memset(aaMap, 0, sizeof(uint32_t*)*nIn);
  if( pB==0 || aAt==0 || aaMap==0 ) goto nomem;
  pB->nRef = 1;
  pB->mxMem = mxMem;
  pB->aCol = parBatchRealloc(pB, 0, 0, (sqlite3_int64)aIn[0]->nCol*sizeof(ParColumn));
  if( pB->aCol==0 ) goto nomem;
  memset(pB->aCol, 0, aIn[0]->nCol*sizeof(ParColumn));
  pB->nCol = aIn[0]->nCol;
  pB->nRow = pB->nRowAlloc = nRow;
  for(i=0, nRow=0; i<nIn; i++){ aAt[i] = nRow; nRow += aIn[i]->nRow; }

  for(j=0; j<pB->nCol; j++){
    ParColumn *pCol = &pB->aCol[j];
    sqlite3_int64 nNull = 0;
    pCol->zName = parDup(aIn[0]->aCol[j].zName);
    pCol->zDeclType = parDup(aIn[0]->aCol[j].zDeclType);
    if( pCol->zName==0 ) goto nomem;
    pCol->eStore = parConcatStore(aIn, nIn, j);
    if( pCol->eStore==PAR_COL_INT ){
      /* The range of the pieces' ranges (a piece of NULLs has none). */
      pCol->bRange = 1;
      pCol->iMin = INT64_MAX;
      pCol->iMax = INT64_MIN;
      for(i=0; i<nIn; i++){
        const ParColumn *pSrc = &aIn[i]->aCol[j];
        if( pSrc->eStore!=PAR_COL_INT ) continue;
        if( !pSrc->bRange ) pCol->bRange = 0;
        if( pSrc->iMin<pCol->iMin ) pCol->iMin = pSrc->iMin;
        if( pSrc->iMax>pCol->iMax ) pCol->iMax = pSrc->iMax;
      }
    }
    for(i=0; i<nIn; i++) nNull += aIn[i]->aCol[j].nNull;
    pCol->nNull = nNull;
    if( nNull && parGrow(pB, (void**)&pCol->aNull, 0, parBitmapBytes(nRow), 1) ) goto nomem;
    /* Not zeroed here: every row is written by the parallel copy below,
    ** which is also where the pages are first touched. */
    switch( pWin ? PAR_COL_NULL : pCol->eStore ){
      case PAR_COL_INT:  rc = parAlloc(pB, (void**)&pCol->aInt, nRow, 8); break;
      case PAR_COL_REAL: rc = parAlloc(pB, (void**)&pCol->aReal, nRow, 8); break;
      case PAR_COL_TEXT: rc = parAlloc(pB, (void**)&pCol->aCode, nRow, 4); break;
      case PAR_COL_MIXED:
        rc = parAlloc(pB, (void**)&pCol->aType, nRow, 1);
        if( rc==SQLITE_OK ) rc = parAlloc(pB, (void**)&pCol->aVal, nRow, 8);
        break;
    }
    if( rc ) goto nomem;
    /* One dictionary for all pieces, in piece order. */
    if( parDictMerge(pB, pCol, aIn, nIn, j, aaMap, nThread) ) goto nomem;
    if( pCol->aNull ){
      for(i=0; i<nIn; i++){
        const ParColumn *pSrc = &aIn[i]->aCol[j];
        if( pSrc->aNull && pSrc->nNull ){
          parBitmapOrAt(pCol->aNull, aAt[i], pSrc->aNull, aIn[i]->nRow);
        }
      }
    }
    if( pWin ){
      /* The pieces' values are in place already, or nearly. */
      if( parWindowTake(pB, pCol, aIn, nIn, j, aAt, aaMap, pWin, nThread) ) goto nomem;
    }else{
      /* Pieces are copied side by side: pure memory work. */
      #pragma omp parallel for num_threads(nThread) schedule(dynamic, 1) if(nThread>1)
      for(i=0; i<nIn; i++){
        if( aIn[i]->nRow ) parConcatCopy(pCol, &aIn[i]->aCol[j], aIn[i]->nRow, aAt[i], aaMap[i]);
      }
    }
    /* Column j is in the new batch: peak memory stays near one copy. */
    for(i=0; i<nIn; i++){
      if( aIn[i]->nRef==1 ) parColumnClear(&aIn[i]->aCol[j]);
    }
  }
  for(i=0; i<nIn; i++) sqlite3_free(aaMap[i]);
  sqlite3_free(aaMap);
  sqlite3_free(aAt);
  *ppOut = pB;
  return SQLITE_OK;

nomem:
  rc = SQLITE_NOMEM;
  if( pB && pB->bOverLimit ){
    *pzErr = parBatchAppendError(pB, SQLITE_NOMEM);
    rc = SQLITE_FULL;
  }else{
    *pzErr = sqlite3_mprintf("out of memory while reading rows");
  }
  if( aaMap ) for(i=0; i<nIn; i++) sqlite3_free(aaMap[i]);
  sqlite3_free(aaMap);
  sqlite3_free(aAt);
  parBatchFree(pB);
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

/* Longest TEXT value that parDictResult hands over NUL-terminated. */
#define PAR_TEXT_TERM_MAX 255

/* A TEXT or BLOB value (eType) of code c in pCol's dictionary.
**
** SQLite marks a string set with its length as unterminated, and the first
** sqlite3_value_text() of it (length(), an application reading the column)
** then reallocates the register to add the NUL; the next row's value,
** longer than the shrunk buffer, allocates it again: a realloc, a malloc
** and a free a row, each behind a mutex in Debian's SQLite.  A string given
** with length -1 arrives terminated, so a short TEXT value goes as a
** NUL-terminated copy, the same bytes when none of them is a NUL (else,
** as a longer one, with its length). */
static void parDictResult(const ParColumn *pCol, uint32_t c, int eType,
                          sqlite3_context *ctx){
  const ParDict *pD = pCol->pDict;
  /* Never a NULL pointer: that would make the result NULL. */
  const char *z = parDictText(pD, c);
  size_t n = pD->aLen[c];
  if( eType==SQLITE_TEXT ){
    char zBuf[PAR_TEXT_TERM_MAX+1];
    size_t k = 0;
    if( n<=PAR_TEXT_TERM_MAX ){
      while( k<n && (zBuf[k] = z[k])!=0 ) k++;   /* copy up to a NUL */
    }
    if( k==n && n<=PAR_TEXT_TERM_MAX ){
      zBuf[n] = 0;
      sqlite3_result_text(ctx, zBuf, -1, SQLITE_TRANSIENT);
    }else{
      sqlite3_result_text(ctx, z, (int)n, SQLITE_TRANSIENT);
    }
  }else{
    sqlite3_result_blob(ctx, z, (int)n, SQLITE_TRANSIENT);
  }
}

/* Every result row of a view passes through here once per column read:
** one switch on the storage, and for MIXED one on the row's type (which
** is SQLITE_NULL for a NULL). */
void parColumnResult(const ParColumn *pCol, sqlite3_int64 iRow,
                     sqlite3_context *ctx){
  int bNull = pCol->aNull && (pCol->aNull[iRow>>3] >> (iRow&7)) & 1;
  switch( pCol->eStore ){
    case PAR_COL_INT:
      if( bNull ) sqlite3_result_null(ctx);
      else sqlite3_result_int64(ctx, pCol->aInt[iRow]);
      return;
    case PAR_COL_REAL:
      if( bNull ) sqlite3_result_null(ctx);
      else sqlite3_result_double(ctx, pCol->aReal[iRow]);
      return;
    case PAR_COL_TEXT:
      if( bNull ) sqlite3_result_null(ctx);
      else parDictResult(pCol, pCol->aCode[iRow], SQLITE_TEXT, ctx);
      return;
    case PAR_COL_MIXED: {
      uint64_t v = pCol->aVal[iRow];
      switch( pCol->aType[iRow] ){
        case SQLITE_INTEGER:
          sqlite3_result_int64(ctx, (sqlite3_int64)v);
          return;
        case SQLITE_FLOAT: {
          double r;
          memcpy(&r, &v, 8);
          sqlite3_result_double(ctx, r);
          return;
        }
        case SQLITE_TEXT: case SQLITE_BLOB:
          parDictResult(pCol, (uint32_t)v, pCol->aType[iRow], ctx);
          return;
        default:
          assert( pCol->aType[iRow]==SQLITE_NULL );
          sqlite3_result_null(ctx);
          return;
      }
    }
    default:
      sqlite3_result_null(ctx);
      return;
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

#define PAR_KEY_BLOCK ((sqlite3_int64)1 << 16)

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
  sqlite3_int64 i, nBlock;
  px_stop *pStop = px_stop_installed();
  int nDone = 0;                 /* threads done (px_stop_wait) */

  *paKey1 = *paKey2 = 0;
  if( pCol->pDict ){
    aRank = parDictRank(pCol->pDict, eColl);
    if( aRank==0 ) return SQLITE_NOMEM;
  }
  a1 = parBigMalloc((sqlite3_int64)(nRow ? nRow : 1)*8);
  if( a1==0 ) return SQLITE_NOMEM;

  if( pCol->eStore==PAR_COL_INT && pCol->nNull>0 ){
    /* One word still works when no value takes the NULL's word. */
    sqlite3_int64 taken = nullKey ? INT64_MAX : INT64_MIN;
    for(i=0; i<nRow && !bGeneral; i++){
      if( pCol->aInt[i]==taken && !((pCol->aNull[i>>3] >> (i&7)) & 1) ) bGeneral = 1;
    }
  }
  if( pCol->eStore==PAR_COL_MIXED ) bGeneral = 1;

  /* Blocks of PAR_KEY_BLOCK rows, asking between them whether to stop
  ** (par.h): a stopped caller discards the keys. */
  nBlock = (nRow + PAR_KEY_BLOCK - 1) / PAR_KEY_BLOCK;
  if( !bGeneral ){
    #pragma omp parallel num_threads(nThread)
    {
      int nTeam = omp_get_num_threads(), t = omp_get_thread_num();
      sqlite3_int64 b, j;
      for(b=nBlock*t/nTeam; b<nBlock*(t+1)/nTeam && !px_stopping(pStop); b++){
        sqlite3_int64 hi = (b+1)*PAR_KEY_BLOCK < nRow ? (b+1)*PAR_KEY_BLOCK : nRow;
        for(j=b*PAR_KEY_BLOCK; j<hi; j++){
          uint64_t k;
          if( pCol->aNull && (pCol->aNull[j>>3] >> (j&7)) & 1 ){
            k = nullKey;
          }else{
            switch( pCol->eStore ){
              case PAR_COL_INT:  k = px_key_i64(pCol->aInt[j]); break;
              case PAR_COL_REAL: k = px_key_f64(pCol->aReal[j]); break;
              default:           k = (uint64_t)aRank[pCol->aCode[j]] + 1; break;
            }
          }
          a1[j] = k ^ flip;
        }
      }
      px_stop_wait(pStop, &nDone, nTeam);
    }
    *paKey1 = a1;
    return SQLITE_OK;
  }

  a2 = sqlite3_malloc64((sqlite3_uint64)(nRow ? nRow : 1)*8);
  if( a2==0 ){
    sqlite3_free(a1);
    return SQLITE_NOMEM;
  }
  #pragma omp parallel num_threads(nThread) reduction(|:anyRem)
  {
    int nTeam = omp_get_num_threads(), t = omp_get_thread_num();
    sqlite3_int64 b, j;
    for(b=nBlock*t/nTeam; b<nBlock*(t+1)/nTeam && !px_stopping(pStop); b++){
      sqlite3_int64 hi = (b+1)*PAR_KEY_BLOCK < nRow ? (b+1)*PAR_KEY_BLOCK : nRow;
      for(j=b*PAR_KEY_BLOCK; j<hi; j++){
        int eType = parColumnType(pCol, j);
        uint64_t k = 0, rem = 0, v;
        double r;
        v = pCol->eStore==PAR_COL_MIXED ? pCol->aVal[j] : (uint64_t)pCol->aInt[j];
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
        a1[j] = k ^ flip;
        a2[j] = rem ^ flip;
      }
    }
    px_stop_wait(pStop, &nDone, nTeam);
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
    pDst->aInt = parBigMalloc((sqlite3_uint64)n*8);
    if( pDst->aInt==0 ) return SQLITE_NOMEM;
    px_gather_u64((const uint64_t*)pSrc->aInt, aIdx, (uint64_t*)pDst->aInt, (size_t)nRow, nThread);
  }
  if( pSrc->aReal ){
    pDst->aReal = parBigMalloc((sqlite3_uint64)n*8);
    if( pDst->aReal==0 ) return SQLITE_NOMEM;
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(i=0; i<nRow; i++) pDst->aReal[i] = pSrc->aReal[aIdx[i]];
  }
  if( pSrc->aCode ){
    pDst->aCode = parBigMalloc((sqlite3_uint64)n*4);
    if( pDst->aCode==0 ) return SQLITE_NOMEM;
    px_gather_u32(pSrc->aCode, aIdx, pDst->aCode, (size_t)nRow, nThread);
  }
  if( pSrc->aType ){
    pDst->aType = parBigMalloc((sqlite3_uint64)n);
    if( pDst->aType==0 ) return SQLITE_NOMEM;
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(i=0; i<nRow; i++) pDst->aType[i] = pSrc->aType[aIdx[i]];
  }
  if( pSrc->aVal ){
    pDst->aVal = parBigMalloc((sqlite3_uint64)n*8);
    if( pDst->aVal==0 ) return SQLITE_NOMEM;
    px_gather_u64(pSrc->aVal, aIdx, pDst->aVal, (size_t)nRow, nThread);
  }
  return SQLITE_OK;
}
