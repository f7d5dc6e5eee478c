/*
** histogram.c: the distribution functions: par_histogram as a table-valued
** function and as an aggregate (JSON), par_median and par_percentile.
**
**   .load ./parallel
**   SELECT * FROM par_histogram('requests', 'latency_ms', 20);         -- min..max
**   SELECT * FROM par_histogram('requests', 'latency_ms', 50, 0, 1000); -- fixed range
**   SELECT * FROM par_histogram('SELECT latency_ms FROM requests WHERE day = ''2026-11-01''',
**                               'latency_ms', '[0, 10, 50, 100, 500, 1000]');
**   SELECT * FROM par_histogram('requests', 'latency_ms', 20, 'quantile');
**   SELECT route, par_histogram(latency_ms, 10, 0, 500) FROM requests GROUP BY route;
**   SELECT par_median(latency_ms), par_percentile(latency_ms, 99) FROM requests;
**
** What the histograms mean (the README has the SQL equivalents):
**
**   (1)  Each input row counts in exactly one result row: 'null' (NULL; a
**        NaN, which SQLite never stores, would count here too), 'under'
**        (a number below the first edge), 'bin' (bin b holds lo <= x < hi,
**        the last bin lo <= x <= hi), 'over' (above the last edge), or
**        'other' (TEXT or BLOB).  Rows other than bins appear only when
**        their count is not 0; bins always appear, numbered 0..n-1 from
**        the low end, bin NULL on the other rows.
**   (2)  Numbers are compared with the edges by value, as SQLite compares
**        INTEGER with REAL: an integer beyond 2^53 is not rounded first.
**        Edges are REAL, and never -0.0 (of two equal zeros, which one is
**        the least or an edge would be arbitrary).
**   (3)  bins = n: n equal-width bins, edges lo + b * ((hi - lo) / n)
**        (capped at hi; px_edges_uniform() in kernels/histogram.h gives
**        the exact formula), the last edge hi itself.  lo and hi are the
**        arguments (as REAL), or by default the least and greatest finite
**        number of the input; an INTEGER extreme that no double equals is
**        rounded outwards, so every finite number is inside.  -Inf and
**        +Inf are then 'under' and 'over'.  If every number is equal, all
**        edges are that number and every number is in the last bin.  With
**        no finite number at all there are no bins.
**   (4)  bins = '[e0, e1, ..., en]': a JSON array of at least two finite,
**        increasing numbers: the edges themselves.
**   (5)  'quantile': n equal-count bins over the finite numbers (sorted
**        ascending, N of them): edge b (b < n) is the number at offset
**        floor(b * N / n), the last edge the greatest, an INTEGER edge
**        rounded down to a double (up for the last) so the number it came
**        from stays in its bin.  Without ties each bin holds floor or ceil
**        of N/n numbers; ties stay together, leaving some bins empty.
**   (6)  Rows come in SQLite's order of the values they count: null,
**        under, bins 0..n-1, over, other.  cumulative is the running sum
**        of count in that order, fraction is count / (all input rows), as
**        REAL (NULL when there are no rows).  The table form over no rows
**        gives bins (fixed range, edges) or nothing; the aggregate over no
**        rows at all returns NULL (SQLite passes it no arguments then).
**
** par_median(x) and par_percentile(x, p) follow SQLite's percentile
** extension (ext/misc/percentile.c): NULLs are ignored; p is a number from
** 0 to 100 and the same for every row (within 0.1); the result is the
** height at p/100 * (N-1) of the line through the sorted values, by linear
** interpolation, always REAL, NULL without values.  TEXT, BLOB and
** infinite inputs are errors.
**
** How it works.  The table form reads its source through the columnar
** extraction (one parExtract() call, below: a table in a database file is
** read in parallel rowid ranges, or comes from the columnar cache; a
** SELECT is read on the caller's connection), finds the range or
** sorts for quantiles, and bins with px_histogram_f64 / _i64: every
** thread counts a contiguous share of the values into a private histogram,
** and the private histograms are added up (seed 004).  The aggregates
** buffer the values SQLite hands them row by row and do the same in their
** final step.  All counts are integers and every edge is computed on one
** thread, so results are identical for any thread count.
**
** Memory.  What the functions hold at once counts against
** par_config('memory_mb') and is checked before it is allocated, with an
** error "memory limit of N MB exceeded while ...": the input (the
** extracted column, or a group's values), the edges, the slot counts and
** the rows; the sorted copy for quantile bins, or par_median's values
** with the sort's scratch; and the aggregate's JSON text, as it is
** written.  Each thread's private histogram comes on top: when those do
** not fit, fewer threads bin (same counts).  Error messages quote an
** argument up to PAR_HIST_QUOTE_MAX characters.
*/
#include "batch.h"
#include "extract.h"
#include "plan.h"
#include "histogram.h"
#include "quantile.h"

#include <assert.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most bins one histogram may have (bins = n, or n+1 edges). */
#define PAR_HIST_MAX_BINS (1 << 20)

/* Most characters of an argument an error message quotes: a longer one
** is cut to its first PAR_HIST_QUOTE_MAX-3 characters and "...". */
#define PAR_HIST_QUOTE_MAX 80

/* Bytes of one object of the aggregate's JSON: at least those of
** {"bin":0,"lo":0.0,"hi":0.0,"count":0,"cumulative":0,"fraction":0.0,
** "kind":"bin"}; at most those with three reals of 39 characters
** (parFmtReal's buffers), three integers of 20 and the longest kind. */
#define PAR_HIST_JSON_ROW_MIN 80
#define PAR_HIST_JSON_ROW_MAX 320

/* How the edges are chosen. */
#define PAR_HIST_RANGE    0   /* equal width over the input's min..max */
#define PAR_HIST_FIXED    1   /* equal width over given lo..hi */
#define PAR_HIST_EDGES    2   /* given edges */
#define PAR_HIST_QUANTILE 3   /* equal count */

/* Kinds of result row, in their output order. */
#define PAR_KIND_NULL  0
#define PAR_KIND_UNDER 1
#define PAR_KIND_BIN   2
#define PAR_KIND_OVER  3
#define PAR_KIND_OTHER 4
static const char *const azKind[] = { "null", "under", "bin", "over", "other" };

/* The parsed bins/lo/hi arguments. */
typedef struct ParHistSpec {
  int eMode;            /* PAR_HIST_* */
  uint32_t nBin;
  double lo, hi;        /* PAR_HIST_FIXED */
  double *aEdge;        /* PAR_HIST_EDGES: nBin+1 edges (sqlite3_malloc) */
} ParHistSpec;

/* The values to bin: doubles and integers (each with an optional skip
** bitmap), and how many NULL and TEXT/BLOB values came with them. */
typedef struct ParHistData {
  const double *aReal;
  const uint8_t *aRealSkip;
  size_t nReal;
  const int64_t *aInt;
  const uint8_t *aIntSkip;
  size_t nInt;
  sqlite3_int64 nNull, nOther;
} ParHistData;

/* One result row. */
typedef struct ParHistRow {
  int eKind;                 /* PAR_KIND_* */
  sqlite3_int64 iBin;        /* PAR_KIND_BIN: the bin number */
  int bLo, bHi;              /* lo, hi not NULL */
  double lo, hi;
  sqlite3_int64 nCount, nCum;
} ParHistRow;

/* A computed histogram: its rows. */
typedef struct ParHistOut {
  ParHistRow *aRow;          /* sqlite3_malloc */
  sqlite3_int64 nRow;
  sqlite3_int64 nTotal;      /* input rows, for fraction */
} ParHistOut;

/* The table-valued function: a virtual table and its cursor. */
typedef struct ParHist {
  sqlite3_vtab base;
  sqlite3 *db;
  ParContext *pCtx;          /* the connection's settings (not owned) */
} ParHist;

typedef struct ParHistCursor {
  sqlite3_vtab_cursor base;
  ParHistOut out;
  sqlite3_int64 iRow;
  sqlite3_value *apArg[5];   /* the arguments, for the hidden columns */
} ParHistCursor;

/* Columns of the table-valued function; the hidden ones are its arguments. */
#define PAR_HIST_COL_SOURCE 7
#define PAR_HIST_NARG       5

/* ==== helpers ============================================================== */

static void parHistSpecClear(ParHistSpec *p){
  sqlite3_free(p->aEdge);
  memset(p, 0, sizeof(*p));
}

/* The bytes *pSpec holds. */
static sqlite3_int64 parHistSpecBytes(const ParHistSpec *pSpec){
  return pSpec->aEdge ? (sqlite3_int64)sizeof(double) * ((sqlite3_int64)pSpec->nBin + 1) : 0;
}

static void parHistOutClear(ParHistOut *p){
  sqlite3_free(p->aRow);
  memset(p, 0, sizeof(*p));
}

/* The message for going over memory_mb while doing zWhile, in zFunc. */
static char *parHistMemError(const ParContext *pCtx, const char *zFunc, const char *zWhile){
  return sqlite3_mprintf("%s: memory limit of %lld MB exceeded while %s "
                         "(see par_config('memory_mb'))", zFunc,
                         parMemLimit(pCtx)/(1024*1024), zWhile);
}

/* The bytes left under memory_mb when nUsed are held, for parBufPush():
** -1 without a limit. */
static sqlite3_int64 parHistRoom(const ParContext *pCtx, sqlite3_int64 nUsed){
  sqlite3_int64 mx = parMemLimit(pCtx);
  if( mx<=0 ) return -1;
  return nUsed<mx ? mx - nUsed : 0;
}

/* Is there room under memory_mb for nByte bytes, all that the function
** holds at once (its input included)?  Else *pzErr, before any of it is
** allocated, and SQLITE_ERROR (SQLITE_FULL would roll back the caller's
** transaction).  A limit of 0 is none. */
static int parHistFits(const ParContext *pCtx, double nByte, const char *zWhile,
                       char **pzErr){
  sqlite3_int64 mx = parMemLimit(pCtx);
  if( mx>0 && nByte > (double)mx ){
    *pzErr = parHistMemError(pCtx, "par_histogram", zWhile);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

static int parIsSpace(char c){
  return c==' ' || c=='\t' || c=='\n' || c=='\r';
}

/* Where to cut the n bytes at z when quoting them: the bytes of their
** first PAR_HIST_QUOTE_MAX-3 characters (UTF-8) when there are more than
** PAR_HIST_QUOTE_MAX characters, else -1 (quote them whole). */
static int parHistCutAt(const char *z, size_t n){
  size_t i;
  int nChar = 0, iCut = 0;
  for(i=0; i<n; i++){
    if( ((unsigned char)z[i] & 0xc0)==0x80 ) continue;   /* inside a character */
    if( nChar==PAR_HIST_QUOTE_MAX-3 ) iCut = (int)i;
    if( nChar==PAR_HIST_QUOTE_MAX ) return iCut;
    nChar++;
  }
  return -1;
}

/* Append the n bytes at z to pStr, cut as parHistCutAt() says. */
static void parHistAppendCut(sqlite3_str *pStr, const char *z, size_t n){
  int k = parHistCutAt(z, n);
  if( k<0 ){
    sqlite3_str_append(pStr, z, (int)n);
  }else{
    sqlite3_str_append(pStr, z, k);
    sqlite3_str_appendall(pStr, "...");
  }
}

/* "par_histogram: " and zMsg, a message from elsewhere (SQLite, the
** extraction) that may quote the source or the column (zSource, zCol;
** either may be NULL) whole, or a name or token from inside a SELECT:
** those are cut, and so is every other run of text without a space and
** every text in double quotes (SQLite's near "...": syntax error) that is
** too long.  The result comes from sqlite3_malloc. */
static char *parHistErrMsg(const char *zMsg, const char *zSource, const char *zCol){
  const char *azArg[2], *zEnd;
  size_t anArg[2], i = 0, iWord = 0;
  int a;
  sqlite3_str *pStr = sqlite3_str_new(0);
  azArg[0] = zSource;
  azArg[1] = zCol;
  for(a=0; a<2; a++){
    anArg[a] = azArg[a] ? strlen(azArg[a]) : 0;
    if( parHistCutAt(azArg[a], anArg[a])<0 ) anArg[a] = 0;   /* short: never cut */
  }
  sqlite3_str_appendall(pStr, "par_histogram: ");
  for(;;){
    if( i==iWord && zMsg[i]=='"' && (zEnd = strrchr(&zMsg[i+1], '"'))!=0 ){
      /* Up to the last '"': a token may hold spaces and quotes. */
      sqlite3_str_appendchar(pStr, 1, '"');
      parHistAppendCut(pStr, &zMsg[i+1], (size_t)(zEnd - &zMsg[i+1]));
      i = iWord = (size_t)(zEnd - zMsg);     /* the '"' starts the next word */
      continue;
    }
    for(a=0; a<2; a++){
      if( anArg[a] && strncmp(&zMsg[i], azArg[a], anArg[a])==0 ) break;
    }
    if( a<2 || zMsg[i]==0 || parIsSpace(zMsg[i]) ){
      /* The word before, then the argument or the space. */
      parHistAppendCut(pStr, &zMsg[iWord], i - iWord);
      if( zMsg[i]==0 ) break;
      if( a<2 ){
        parHistAppendCut(pStr, azArg[a], anArg[a]);
        i += anArg[a];
      }else{
        sqlite3_str_appendchar(pStr, 1, zMsg[i++]);
      }
      iWord = i;
    }else{
      i++;
    }
  }
  return sqlite3_str_finish(pStr);
}

/* The text zArg as an error message quotes it (sqlite3_malloc). */
static char *parHistQuote(const char *zArg){
  sqlite3_str *pStr = sqlite3_str_new(0);
  parHistAppendCut(pStr, zArg, strlen(zArg));
  return sqlite3_str_finish(pStr);
}

/* A function argument as an error message quotes it: parArgText(), cut
** (sqlite3_malloc). */
static char *parHistArgText(sqlite3_value *pVal){
  char *z = parArgText(pVal);
  int k = z ? parHistCutAt(z, strlen(z)) : -1;
  if( k>=0 ) memcpy(&z[k], "...", 4);   /* the cut-off text had room */
  return z;
}

/* A double as text that reads back as the same double, in the C locale:
** the shortest of 15, 16 or 17 significant digits, with ".0" added to an
** integral value so that it still reads as REAL. */
static void parFmtReal(double r, char *zBuf, size_t nBuf){
  const char *zPoint = localeconv()->decimal_point;
  char zTmp[64];
  int prec;
  size_t i, j, nPoint = zPoint ? strlen(zPoint) : 0;
  for(prec=15; prec<17; prec++){
    snprintf(zTmp, sizeof(zTmp), "%.*g", prec, r);
    if( strtod(zTmp, 0)==r ) break;
  }
  if( prec==17 ) snprintf(zTmp, sizeof(zTmp), "%.17g", r);
  /* Replace the locale's decimal point with '.'. */
  for(i=j=0; zTmp[i] && j+3<nBuf; ){
    if( nPoint && strncmp(&zTmp[i], zPoint, nPoint)==0 ){
      zBuf[j++] = '.';
      i += nPoint;
    }else{
      zBuf[j++] = zTmp[i++];
    }
  }
  zBuf[j] = 0;
  if( strpbrk(zBuf, ".eEni")==0 && j+3<nBuf ) memcpy(zBuf + j, ".0", 3);
}

/* The JSON number at z[*pi] as a double, locale-independently; advances
** *pi.  Returns 0 on success, 1 when no number starts there. */
static int parJsonNumber(const char *z, int *pi, double *pR){
  const char *zPoint = localeconv()->decimal_point;
  int i = *pi, iStart = *pi, nDigit = 0;
  sqlite3_str *pStr;
  char *zNum;
  if( z[i]=='-' ) i++;
  if( z[i]=='0' ){
    i++;
    nDigit = 1;
  }else{
    while( z[i]>='0' && z[i]<='9' ){ i++; nDigit++; }
  }
  if( nDigit==0 ) return 1;
  if( z[i]=='.' ){
    i++;
    if( !(z[i]>='0' && z[i]<='9') ) return 1;
    while( z[i]>='0' && z[i]<='9' ) i++;
  }
  if( z[i]=='e' || z[i]=='E' ){
    i++;
    if( z[i]=='+' || z[i]=='-' ) i++;
    if( !(z[i]>='0' && z[i]<='9') ) return 1;
    while( z[i]>='0' && z[i]<='9' ) i++;
  }
  /* strtod reads the locale's decimal point: give it that. */
  pStr = sqlite3_str_new(0);
  for(; iStart<i; iStart++){
    if( z[iStart]=='.' ) sqlite3_str_appendall(pStr, zPoint ? zPoint : ".");
    else sqlite3_str_appendchar(pStr, 1, z[iStart]);
  }
  zNum = sqlite3_str_finish(pStr);
  if( zNum==0 ) return 1;
  *pR = strtod(zNum, 0);
  sqlite3_free(zNum);
  *pi = i;
  return 0;
}

/* Append nElem elements of sz bytes from pElem at *pa (count *pn,
** allocated *pnAlloc), growing it to at most mxMem bytes (no limit when
** mxMem < 0).  Returns SQLITE_OK, SQLITE_NOMEM or SQLITE_TOOBIG (over
** mxMem: nothing appended). */
static int parBufPush(void **pa, sqlite3_int64 *pn, sqlite3_int64 *pnAlloc, size_t sz,
                      const void *pElem, sqlite3_int64 nElem, sqlite3_int64 mxMem){
  if( *pn + nElem > *pnAlloc ){
    sqlite3_int64 nNew = *pnAlloc ? *pnAlloc * 2 : 256;
    void *aNew;
    if( nNew < *pn + nElem ) nNew = *pn + nElem;
    if( mxMem>=0 && nNew * (sqlite3_int64)sz > mxMem ){
      nNew = mxMem / (sqlite3_int64)sz;
      if( nNew < *pn + nElem ) return SQLITE_TOOBIG;
    }
    aNew = sqlite3_realloc64(*pa, (sqlite3_uint64)nNew * sz);
    if( aNew==0 ) return SQLITE_NOMEM;
    *pa = aNew;
    *pnAlloc = nNew;
  }
  memcpy((char*)*pa + (size_t)*pn * sz, pElem, (size_t)nElem * sz);
  *pn += nElem;
  return SQLITE_OK;
}

/* The edges of requirement (4) from the JSON array zJson into pSpec,
** within PAR_HIST_MAX_BINS bins and memory_mb. */
static int parHistParseEdges(const ParContext *pCtx, const char *zJson, ParHistSpec *pSpec,
                             char **pzErr){
  double *aEdge = 0;
  sqlite3_int64 nEdge = 0, nAlloc = 0;
  int i = 0, rc;
  while( parIsSpace(zJson[i]) ) i++;
  if( zJson[i]!='[' ) goto malformed;
  i++;
  while( parIsSpace(zJson[i]) ) i++;
  if( zJson[i]!=']' ){
    for(;;){
      double r;
      if( parJsonNumber(zJson, &i, &r) ) goto malformed;
      /* n+1 edges are n bins: the limit of bins = n holds here too. */
      if( nEdge>PAR_HIST_MAX_BINS ){
        *pzErr = sqlite3_mprintf("par_histogram: a JSON array of edges may have at most "
                                 "%d edges (%d bins)", PAR_HIST_MAX_BINS + 1,
                                 PAR_HIST_MAX_BINS);
        goto error;
      }
      if( !isfinite(r) ){
        *pzErr = sqlite3_mprintf("par_histogram: edge %lld is not a finite number", nEdge);
        goto error;
      }
      if( nEdge>0 && !(r > aEdge[nEdge-1]) ){
        char zA[40], zB[40];
        parFmtReal(r, zA, sizeof(zA));
        parFmtReal(aEdge[nEdge-1], zB, sizeof(zB));
        *pzErr = sqlite3_mprintf("par_histogram: edges must be increasing, but edge %lld "
                                 "(%s) is not greater than edge %lld (%s)", nEdge, zA,
                                 nEdge-1, zB);
        goto error;
      }
      rc = parBufPush((void**)&aEdge, &nEdge, &nAlloc, sizeof(r), &r, 1,
                      parHistRoom(pCtx, 0));
      if( rc==SQLITE_TOOBIG ){
        *pzErr = parHistMemError(pCtx, "par_histogram", "reading the edges");
      }
      if( rc ) goto error;
      while( parIsSpace(zJson[i]) ) i++;
      if( zJson[i]==']' ) break;
      if( zJson[i]!=',' ) goto malformed;
      i++;
      while( parIsSpace(zJson[i]) ) i++;
    }
  }
  i++;
  while( parIsSpace(zJson[i]) ) i++;
  if( zJson[i] ) goto malformed;
  if( nEdge<2 ){
    char *zArg = parHistQuote(zJson);
    *pzErr = sqlite3_mprintf("par_histogram: a JSON array of edges needs at least two "
                             "numbers (one bin): %s", zArg ? zArg : "");
    sqlite3_free(zArg);
    goto error;
  }
  pSpec->eMode = PAR_HIST_EDGES;
  pSpec->nBin = (uint32_t)(nEdge - 1);
  pSpec->aEdge = aEdge;
  return SQLITE_OK;

malformed: {
    char *zArg = parHistQuote(zJson);
    *pzErr = sqlite3_mprintf("par_histogram: bins is not a JSON array of numbers "
                             "(error at character %d): %s", i, zArg ? zArg : "");
    sqlite3_free(zArg);
  }
error:
  sqlite3_free(aEdge);
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* pVal as a number, the way sqlite3_value_numeric_type() reads it (text
** that reads as a number counts as that number): its type into *peType and
** its value into *pR, without changing pVal.  The conversion runs on a copy
** that SQLite makes on db (a result column): a copy from sqlite3_value_dup()
** has no connection, which sqlite3_value_numeric_type() needs from 3.53. */
static int parHistNumber(sqlite3 *db, sqlite3_value *pVal, int *peType, double *pR){
  sqlite3_stmt *pStmt = 0;
  int rc;
  *peType = sqlite3_value_type(pVal);
  *pR = sqlite3_value_double(pVal);
  if( *peType!=SQLITE_TEXT ) return SQLITE_OK;
  /* Text with a NUL byte inside is no number (as SQLite 3.40 reads it;
  ** later versions read up to the NUL). */
  if( parTextArg(pVal)==0 ) return SQLITE_OK;
  rc = sqlite3_prepare_v2(db, "SELECT ?1", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_value(pStmt, 1, pVal);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    sqlite3_value *pCol = sqlite3_column_value(pStmt, 0);
    *peType = sqlite3_value_numeric_type(pCol);
    *pR = sqlite3_value_double(pCol);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt);
  sqlite3_finalize(pStmt);
  return rc;
}

/* A finite number from lo or hi, or an error naming the argument. */
static int parHistRangeArg(sqlite3 *db, sqlite3_value *pVal, const char *zName, double *pR,
                           char **pzErr){
  int eType;
  int rc = parHistNumber(db, pVal, &eType, pR);
  if( rc ) return rc;
  if( eType!=SQLITE_INTEGER && eType!=SQLITE_FLOAT ){
    char *zArg = parHistArgText(pVal);
    *pzErr = sqlite3_mprintf("par_histogram: %s must be a number, not %s", zName,
                             zArg ? zArg : "that");
    sqlite3_free(zArg);
    return SQLITE_ERROR;
  }
  if( !isfinite(*pR) ){
    *pzErr = sqlite3_mprintf("par_histogram: %s must be finite", zName);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* Parse bins and the optional pA4, pA5 (NULL pointers when absent) into
** *pSpec: requirements (3) to (5). */
static int parHistParseSpec(sqlite3 *db, const ParContext *pCtx, sqlite3_value *pBins,
                            sqlite3_value *pA4,
                            sqlite3_value *pA5, ParHistSpec *pSpec, char **pzErr){
  int eType = sqlite3_value_type(pBins), rc;
  const char *zBins = parTextArg(pBins);
  memset(pSpec, 0, sizeof(*pSpec));
  if( zBins ){
    int i = 0;
    while( parIsSpace(zBins[i]) ) i++;
    if( zBins[i]=='[' ){
      if( pA4 ){
        *pzErr = sqlite3_mprintf("par_histogram: with a JSON array of edges as bins, "
                                 "give no lo, hi or 'quantile'");
        return SQLITE_ERROR;
      }
      return parHistParseEdges(pCtx, zBins, pSpec, pzErr);
    }
  }
  {
    /* An integer: INTEGER, an integral REAL, or text that reads as one. */
    double r;
    rc = parHistNumber(db, pBins, &eType, &r);
    if( rc ) return rc;
    if( (eType!=SQLITE_INTEGER && eType!=SQLITE_FLOAT) || r!=floor(r)
     || r<1 || r>PAR_HIST_MAX_BINS ){
      char *zArg = parHistArgText(pBins);
      *pzErr = sqlite3_mprintf("par_histogram: bins must be an integer from 1 to %d "
                               "or a JSON array of edges, not %s", PAR_HIST_MAX_BINS,
                               zArg ? zArg : "that");
      sqlite3_free(zArg);
      return SQLITE_ERROR;
    }
    pSpec->nBin = (uint32_t)r;
  }
  if( pA4==0 ){
    pSpec->eMode = PAR_HIST_RANGE;
    return SQLITE_OK;
  }
  if( parTextArg(pA4) && sqlite3_stricmp(parTextArg(pA4), "quantile")==0 ){
    if( pA5 ){
      *pzErr = sqlite3_mprintf("par_histogram: 'quantile' takes no further argument");
      return SQLITE_ERROR;
    }
    pSpec->eMode = PAR_HIST_QUANTILE;
    return SQLITE_OK;
  }
  if( pA5==0 ){
    char *zArg = parHistArgText(pA4);
    *pzErr = sqlite3_mprintf("par_histogram: after bins give lo and hi, or 'quantile', "
                             "not only %s", zArg ? zArg : "one argument");
    sqlite3_free(zArg);
    return SQLITE_ERROR;
  }
  rc = parHistRangeArg(db, pA4, "lo", &pSpec->lo, pzErr);
  if( rc==SQLITE_OK ) rc = parHistRangeArg(db, pA5, "hi", &pSpec->hi, pzErr);
  if( rc ) return rc;
  if( !(pSpec->lo < pSpec->hi) ){
    char zLo[40], zHi[40];
    parFmtReal(pSpec->lo, zLo, sizeof(zLo));
    parFmtReal(pSpec->hi, zHi, sizeof(zHi));
    *pzErr = sqlite3_mprintf("par_histogram: lo (%s) must be less than hi (%s)", zLo, zHi);
    return SQLITE_ERROR;
  }
  pSpec->eMode = PAR_HIST_FIXED;
  return SQLITE_OK;
}

/* The edges of a 'quantile' histogram, requirement (5): the finite
** numbers, integers rounded down, sorted; edge b at offset b*N/n.  The
** sorted copy and the sort's scratch (16 bytes a number) come on top of
** the nHeld bytes held already. */
static int parHistQuantileEdges(ParContext *pCtx, const ParHistData *pD, uint64_t nFinite,
                                double rTop, uint32_t nBin, double nHeld, int nThread,
                                double *aEdge, char **pzErr){
  double *aSorted;       /* the finite numbers, owned here */
  size_t i, j = 0;
  uint32_t b;
  int rc;
  rc = parHistFits(pCtx, nHeld + 16.0*(double)nFinite, "sorting the numbers for quantile "
                   "bins", pzErr);
  if( rc ) return rc;
  aSorted = sqlite3_malloc64(sizeof(double) * (nFinite ? nFinite : 1));
  if( aSorted==0 ) return SQLITE_NOMEM;
  for(i=0; i<pD->nReal; i++){
    double x = pD->aReal[i];
    if( pD->aRealSkip && (pD->aRealSkip[i>>3] >> (i&7)) & 1 ) continue;
    if( isfinite(x) ) aSorted[j++] = x;
  }
  for(i=0; i<pD->nInt; i++){
    if( pD->aIntSkip && (pD->aIntSkip[i>>3] >> (i&7)) & 1 ) continue;
    aSorted[j++] = px_f64_below_i64(pD->aInt[i]);
  }
  /* Rounding down is monotonic, so it commutes with sorting. */
  rc = px_sort_f64(aSorted, j, nThread);
  if( rc ){
    sqlite3_free(aSorted);
    return parRcFromPx(rc);
  }
  for(b=0; b<nBin; b++) aEdge[b] = aSorted[(uint64_t)b * j / nBin];
  aEdge[nBin] = rTop;
  sqlite3_free(aSorted);
  return SQLITE_OK;
}

/* The bytes of the private histograms of nSlot slots that binning pD on
** nThread threads makes (histogram.h): one per thread of each kernel
** that starts several, the larger of the two (they run one after the
** other). */
static double parHistPrivBytes(const ParHistData *pD, size_t nSlot, int nThread){
  int ntR = px_threads_for(px_nblocks(pD->nReal), nThread);
  int ntI = px_threads_for(px_nblocks(pD->nInt), nThread);
  int nt = ntR>ntI ? ntR : ntI;
  return nt>1 ? (double)nt * (double)nSlot * sizeof(uint64_t) : 0.0;
}

/* Compute the histogram of *pD under *pSpec into *pOut: requirements (1)
** to (6).  The caller holds nHeld bytes meanwhile (input, spec); with
** them, every array made here is checked against memory_mb before it is
** made: the edges, the slot counts, the rows and each thread's private
** histogram (fewer threads when those do not fit: the counts are the
** same for any number). */
static int parHistCompute(ParContext *pCtx, const ParHistSpec *pSpec, const ParHistData *pD,
                          double nHeld, ParHistOut *pOut, char **pzErr){
  static const double aNoEdge[2] = { 0.0, 0.0 };
  double *aEdge = 0;           /* nBin+1 edges (owned) */
  uint64_t *aCount = 0;        /* slot counts, PX_HIST_SLOTS(nBin) (owned) */
  uint64_t *aTmp = 0;          /* the integers' slot counts (owned) */
  const double *aUse;
  uint32_t nBin = pSpec->nBin, nUse, b;
  size_t s, nSlot, nRowMax;
  sqlite3_int64 nNull = pD->nNull, nCum = 0, nRow = 0;
  int nThread = parThreadsFor(pCtx, (sqlite3_int64)(pD->nReal + pD->nInt));
  int nBinThread;               /* threads for the kernels that bin */
  int rc = SQLITE_OK, bBins = 1;
  sqlite3_int64 mx = parMemLimit(pCtx);
  double nNeed;
  ParHistRow *aRow = 0;

  memset(pOut, 0, sizeof(*pOut));
  nHeld += sizeof(double) * ((double)nBin + 1);
  rc = parHistFits(pCtx, nHeld, "binning", pzErr);
  if( rc ) return rc;
  aEdge = sqlite3_malloc64(sizeof(double) * ((sqlite3_uint64)nBin + 1));
  if( aEdge==0 ) return SQLITE_NOMEM;
  if( pSpec->eMode==PAR_HIST_FIXED ){
    px_edges_uniform(pSpec->lo, pSpec->hi, nBin, aEdge);
  }else if( pSpec->eMode==PAR_HIST_EDGES ){
    memcpy(aEdge, pSpec->aEdge, sizeof(double) * ((size_t)nBin + 1));
  }else{
    /* The range of the finite numbers (3), integers rounded outwards. */
    double mnR = 0, mxR = 0, lo, hi;
    int64_t mnI = 0, mxI = 0;
    uint64_t nR = px_range_f64(pD->aReal, pD->aRealSkip, pD->nReal, &mnR, &mxR, nThread);
    uint64_t nI = px_range_i64(pD->aInt, pD->aIntSkip, pD->nInt, &mnI, &mxI, nThread);
    if( nR + nI==0 ){
      bBins = 0;
    }else{
      lo = nI==0 ? mnR : nR==0 ? px_f64_below_i64(mnI) : fmin(mnR, px_f64_below_i64(mnI));
      hi = nI==0 ? mxR : nR==0 ? px_f64_above_i64(mxI) : fmax(mxR, px_f64_above_i64(mxI));
      if( pSpec->eMode==PAR_HIST_QUANTILE ){
        rc = parHistQuantileEdges(pCtx, pD, nR + nI, hi, nBin, nHeld, nThread, aEdge,
                                  pzErr);
      }else{
        px_edges_uniform(lo, hi, nBin, aEdge);
      }
    }
  }
  /* No edge is -0.0 (which of two equal zeros is the least is arbitrary). */
  for(b=0; bBins && b<=nBin; b++) aEdge[b] += 0.0;
  /* Without bins, one empty bin at 0 still sorts -Inf under, +Inf over. */
  aUse = bBins ? aEdge : aNoEdge;
  nUse = bBins ? nBin : 1;
  nSlot = PX_HIST_SLOTS(nUse);
  nRowMax = (bBins ? (size_t)nBin : 0) + 4;     /* null, under, bins, over, other */
  nNeed = nHeld + 2.0 * sizeof(uint64_t) * (double)nSlot
        + sizeof(ParHistRow) * (double)nRowMax;
  if( rc==SQLITE_OK ) rc = parHistFits(pCtx, nNeed, "binning", pzErr);
  if( rc==SQLITE_OK ){
    aCount = sqlite3_malloc64(sizeof(uint64_t) * nSlot);
    aTmp = sqlite3_malloc64(sizeof(uint64_t) * nSlot);
    aRow = sqlite3_malloc64(sizeof(ParHistRow) * nRowMax);
    if( aCount==0 || aTmp==0 || aRow==0 ) rc = SQLITE_NOMEM;
  }
  if( rc ){
    sqlite3_free(aEdge);
    sqlite3_free(aCount);
    sqlite3_free(aTmp);
    sqlite3_free(aRow);
    return rc;
  }
  /* Each thread's private histogram comes on top: as many threads as fit. */
  nBinThread = nThread;
  while( mx>0 && nBinThread>1
      && nNeed + parHistPrivBytes(pD, nSlot, nBinThread) > (double)mx ){
    nBinThread--;
  }
  px_histogram_f64(pD->aReal, pD->aRealSkip, pD->nReal, aUse, nUse, aCount, nBinThread);
  px_histogram_i64(pD->aInt, pD->aIntSkip, pD->nInt, aUse, nUse, aTmp, nBinThread);
  for(s=0; s<nSlot; s++) aCount[s] += aTmp[s];
  nNull += (sqlite3_int64)aCount[nUse + 2];    /* NaN is NULL to SQLite */
  memset(aRow, 0, sizeof(ParHistRow) * nRowMax);
  /* Rows in SQLite's order of their values (6). */
  if( nNull ){
    aRow[nRow].eKind = PAR_KIND_NULL;
    aRow[nRow++].nCount = nNull;
  }
  if( aCount[0] ){
    aRow[nRow].eKind = PAR_KIND_UNDER;
    aRow[nRow].bHi = bBins;
    aRow[nRow].hi = aEdge[0];
    aRow[nRow++].nCount = (sqlite3_int64)aCount[0];
  }
  for(b=0; bBins && b<nBin; b++){
    aRow[nRow].eKind = PAR_KIND_BIN;
    aRow[nRow].iBin = b;
    aRow[nRow].bLo = aRow[nRow].bHi = 1;
    aRow[nRow].lo = aEdge[b];
    aRow[nRow].hi = aEdge[b+1];
    aRow[nRow++].nCount = (sqlite3_int64)aCount[b+1];
  }
  if( aCount[nUse+1] ){
    aRow[nRow].eKind = PAR_KIND_OVER;
    aRow[nRow].bLo = bBins;
    aRow[nRow].lo = aEdge[nBin];
    aRow[nRow++].nCount = (sqlite3_int64)aCount[nUse+1];
  }
  if( pD->nOther ){
    aRow[nRow].eKind = PAR_KIND_OTHER;
    aRow[nRow++].nCount = pD->nOther;
  }
  for(s=0; s<(size_t)nRow; s++){
    nCum += aRow[s].nCount;
    aRow[s].nCum = nCum;
  }
  pOut->aRow = aRow;
  pOut->nRow = nRow;
  pOut->nTotal = nCum;
  sqlite3_free(aEdge);
  sqlite3_free(aCount);
  sqlite3_free(aTmp);
  return SQLITE_OK;
}

/* Column iCol (0 bin .. 6 kind) of row r of pOut as the result of ctx. */
static void parHistRowResult(const ParHistOut *pOut, const ParHistRow *r, int iCol,
                             sqlite3_context *ctx){
  switch( iCol ){
    case 0: if( r->eKind==PAR_KIND_BIN ) sqlite3_result_int64(ctx, r->iBin); break;
    case 1: if( r->bLo ) sqlite3_result_double(ctx, r->lo); break;
    case 2: if( r->bHi ) sqlite3_result_double(ctx, r->hi); break;
    case 3: sqlite3_result_int64(ctx, r->nCount); break;
    case 4: sqlite3_result_int64(ctx, r->nCum); break;
    case 5:
      if( pOut->nTotal ) sqlite3_result_double(ctx, (double)r->nCount / (double)pOut->nTotal);
      break;
    default: sqlite3_result_text(ctx, azKind[r->eKind], -1, SQLITE_STATIC); break;
  }
}

/* The rows of pOut as a JSON array of objects (the aggregate's result),
** in *pzJson (sqlite3_malloc: *pnJson bytes and a 0).  The text may take
** at most mxByte bytes (no limit when mxByte < 0): the least it can take
** is checked first, then each row before it is added.  Returns SQLITE_OK,
** SQLITE_NOMEM or SQLITE_TOOBIG (more than mxByte: nothing returned). */
static int parHistJson(const ParHistOut *pOut, sqlite3_int64 mxByte, char **pzJson,
                       sqlite3_int64 *pnJson){
  char *zJson = 0;
  sqlite3_int64 nJson = 0, nAlloc = 0, i;
  int rc = SQLITE_OK;
  char zA[40], zB[40], zF[40];
  *pzJson = 0;
  *pnJson = 0;
  if( mxByte>=0 && pOut->nRow*(PAR_HIST_JSON_ROW_MIN + 1) + 2 > mxByte ){
    return SQLITE_TOOBIG;
  }
  for(i=0; rc==SQLITE_OK && i<pOut->nRow; i++){
    const ParHistRow *r = &pOut->aRow[i];
    char zBin[24], zObj[PAR_HIST_JSON_ROW_MAX + 4];
    int n;
    if( r->bLo ) parFmtReal(r->lo, zA, sizeof(zA)); else memcpy(zA, "null", 5);
    if( r->bHi ) parFmtReal(r->hi, zB, sizeof(zB)); else memcpy(zB, "null", 5);
    if( pOut->nTotal ){
      parFmtReal((double)r->nCount / (double)pOut->nTotal, zF, sizeof(zF));
    }else{
      memcpy(zF, "null", 5);
    }
    if( r->eKind==PAR_KIND_BIN ) snprintf(zBin, sizeof(zBin), "%lld", r->iBin);
    else memcpy(zBin, "null", 5);
    /* The object with the '[' or ',' before it, and "]" after the last. */
    n = snprintf(zObj, sizeof(zObj), "%c{\"bin\":%s,\"lo\":%s,\"hi\":%s,\"count\":%lld,"
                 "\"cumulative\":%lld,\"fraction\":%s,\"kind\":\"%s\"}%s",
                 i ? ',' : '[', zBin, zA, zB, r->nCount, r->nCum, zF, azKind[r->eKind],
                 i==pOut->nRow-1 ? "]" : "");
    assert( n>0 && n<(int)sizeof(zObj) );
    rc = parBufPush((void**)&zJson, &nJson, &nAlloc, 1, zObj, n, mxByte);
  }
  if( rc==SQLITE_OK && pOut->nRow==0 ){
    rc = parBufPush((void**)&zJson, &nJson, &nAlloc, 1, "[]", 2, mxByte);
  }
  if( rc==SQLITE_OK ) rc = parBufPush((void**)&zJson, &nJson, &nAlloc, 1, "", 1, mxByte);
  if( rc ){
    sqlite3_free(zJson);
    return rc;
  }
  *pzJson = zJson;
  *pnJson = nJson - 1;
  return SQLITE_OK;
}

/* An identifier quoted with backticks: never read as a string literal,
** unlike a double-quoted name that matches no column. */
static void parAppendId(sqlite3_str *pStr, const char *zId){
  sqlite3_str_appendchar(pStr, 1, '`');
  for(; *zId; zId++){
    sqlite3_str_appendchar(pStr, *zId=='`' ? 2 : 1, *zId);
  }
  sqlite3_str_appendchar(pStr, 1, '`');
}

/* True if zName (in schema zSchema, or any when NULL) names a table or
** view that a SELECT can read. */
static int parHistHasTable(sqlite3 *db, const char *zSchema, const char *zName){
  sqlite3_str *pStr = sqlite3_str_new(db);
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int rc;
  sqlite3_str_appendall(pStr, "SELECT 1 FROM ");
  if( zSchema ){
    parAppendId(pStr, zSchema);
    sqlite3_str_appendchar(pStr, 1, '.');
  }
  parAppendId(pStr, zName);
  zSql = sqlite3_str_finish(pStr);
  if( zSql==0 ) return 0;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return rc==SQLITE_OK;
}

/* The extraction of column zCol of zSource, a table name (maybe
** schema.table) or a single read-only SELECT, as the parts of a plan's
** extraction query: *pzCols, *pzFrom and the query *pzSql (SELECT cols
** FROM from), each from sqlite3_malloc. */
static int parHistSourceSql(sqlite3 *db, const char *zSource, const char *zCol,
                            char **pzCols, char **pzFrom, char **pzSql, char **pzErr){
  ParToken *aTok;
  int nTok = 0, bSelect, bName, rc = SQLITE_OK, i, iEnd = 0;
  sqlite3_str *pStr;
  *pzSql = 0;
  aTok = parTokenize(zSource, &nTok);
  if( aTok==0 ) return SQLITE_NOMEM;
  bSelect = parTokIs(zSource, &aTok[0], "SELECT") || parTokIs(zSource, &aTok[0], "WITH")
         || parTokIs(zSource, &aTok[0], "VALUES");
  /* The statement ends at its last token that is not a semicolon. */
  for(i=0; i<nTok && aTok[i].eType!=PT_EOF; i++){
    if( aTok[i].eType!=PT_SEMI ) iEnd = aTok[i].i + aTok[i].n;
  }
  /* Anything but NAME or NAME.NAME is meant as a statement: if it is no
  ** table, say what is wrong with it as one. */
  bName = i==1 || (i==3 && aTok[1].eType==PT_DOT);
  sqlite3_free(aTok);
  *pzCols = *pzFrom = 0;
  pStr = sqlite3_str_new(db);
  parAppendId(pStr, zCol);
  *pzCols = sqlite3_str_finish(pStr);
  pStr = sqlite3_str_new(db);
  if( bSelect ){
    char *zErr = 0;
    sqlite3_stmt *pSel = 0;
    rc = parPrepareSelect(db, zSource, &pSel, &zErr);
    if( rc==SQLITE_OK && sqlite3_bind_parameter_count(pSel)>0 ){
      /* Nothing could bind them: refused, as CREATE VIEW does. */
      const char *zP = parFirstParam(pSel);
      zErr = sqlite3_mprintf("parameters are not allowed in the source: %s", zP);
      rc = SQLITE_ERROR;
    }
    sqlite3_finalize(pSel);
    if( rc ){
      *pzErr = parHistErrMsg(zErr ? zErr : sqlite3_errstr(rc), zSource, zCol);
      sqlite3_free(zErr);
    }
    /* A newline ends a trailing -- comment before the parenthesis. */
    sqlite3_str_appendf(pStr, "(%.*s\n)", iEnd, zSource);
  }else{
    const char *zDot = strchr(zSource, '.');
    if( parHistHasTable(db, 0, zSource) ){
      parAppendId(pStr, zSource);
    }else{
      char *zSchema = zDot ? sqlite3_mprintf("%.*s", (int)(zDot - zSource), zSource) : 0;
      if( zSchema && parHistHasTable(db, zSchema, zDot+1) ){
        parAppendId(pStr, zSchema);
        sqlite3_str_appendchar(pStr, 1, '.');
        parAppendId(pStr, zDot+1);
      }else{
        char *zErr = 0;
        rc = SQLITE_ERROR;
        if( !bName && parPrepareSelect(db, zSource, 0, &zErr)!=SQLITE_OK && zErr ){
          *pzErr = parHistErrMsg(zErr, zSource, zCol);
        }else{
          char *zArg = parHistQuote(zSource);
          *pzErr = sqlite3_mprintf("par_histogram: no such table: %s (the source must "
                                   "be a table name or a SELECT statement)",
                                   zArg ? zArg : "");
          sqlite3_free(zArg);
        }
        sqlite3_free(zErr);
      }
      sqlite3_free(zSchema);
    }
  }
  *pzFrom = sqlite3_str_finish(pStr);
  *pzSql = *pzCols && *pzFrom ? sqlite3_mprintf("SELECT %s FROM %s", *pzCols, *pzFrom) : 0;
  if( rc==SQLITE_OK && *pzSql==0 ) rc = SQLITE_NOMEM;
  if( rc ){
    sqlite3_free(*pzCols);
    sqlite3_free(*pzFrom);
    sqlite3_free(*pzSql);
    *pzCols = *pzFrom = *pzSql = 0;
  }
  return rc;
}

/* Run the table form: extract column zCol of zSource and bin it. */
static int parHistRun(ParHist *pTab, const char *zSource, const char *zCol,
                      const ParHistSpec *pSpec, ParHistOut *pOut, char **pzErr){
  ParBatch *pB = 0;
  ParColumn *pCol;
  ParHistData d;
  double *aReal = 0;      /* MIXED: its REAL values (owned) */
  int64_t *aInt = 0;      /* MIXED: its INTEGER values (owned) */
  char *zCols = 0, *zFrom = 0, *zSql = 0, *zErr = 0, *zWhy = 0;
  ParPlan plan;           /* just the extraction part of a plan */
  ParStamp stamp;
  double nHeld;           /* bytes held while binning: input, split, spec */
  int rc, eMode;

  /* The versions a serial read is kept in the cache under, taken before
  ** anything runs on the caller's connection.  This statement began
  ** reading main already: main's stamp is the worker version noted by an
  ** earlier scan, when that moment still vouches for the read. */
  parExtractStamp(pTab->pCtx, pTab->db, &stamp);
  rc = parHistSourceSql(pTab->db, zSource, zCol, &zCols, &zFrom, &zSql, pzErr);
  if( rc ) return rc;
  memset(&plan, 0, sizeof(plan));
  plan.zExtract = zSql;
  plan.zExtractCols = zCols;
  plan.zExtractFrom = zFrom;
  plan.nExtractCol = 1;
  /* The one place this file reads a source: through the columnar
  ** extraction.  pB is a reference (the cache may hold another). */
  rc = parExtract(pTab->pCtx, pTab->db, &plan, &stamp, &pB, &eMode, &zWhy, &zErr);
  sqlite3_free(zWhy);
  sqlite3_free(zCols);
  sqlite3_free(zFrom);
  sqlite3_free(zSql);
  if( rc ){
    *pzErr = parHistErrMsg(zErr ? zErr : sqlite3_errstr(rc), zSource, zCol);
    sqlite3_free(zErr);
    return rc;
  }
  memset(&d, 0, sizeof(d));
  nHeld = (double)(parBatchBytes(pB) + parHistSpecBytes(pSpec));
  pCol = &pB->aCol[0];
  d.nNull = pCol->nNull;
  switch( pCol->eStore ){
    case PAR_COL_INT:
      d.aInt = (const int64_t*)pCol->aInt;   /* both 64-bit two's complement */
      d.aIntSkip = pCol->aNull;
      d.nInt = (size_t)pB->nRow;
      break;
    case PAR_COL_REAL:
      d.aReal = pCol->aReal;
      d.aRealSkip = pCol->aNull;
      d.nReal = (size_t)pB->nRow;
      break;
    case PAR_COL_TEXT:
      d.nOther = pB->nRow - pCol->nNull;
      break;
    case PAR_COL_MIXED: {
      /* Split the numbers by type; the rest is NULL or other. */
      sqlite3_int64 i;
      double nSplit = 16.0 * ((double)pB->nRow + 1);
      rc = parHistFits(pTab->pCtx, nHeld + nSplit, "binning", pzErr);
      if( rc ) break;
      nHeld += nSplit;
      aReal = sqlite3_malloc64(sizeof(double) * (pB->nRow + 1));
      aInt = sqlite3_malloc64(sizeof(int64_t) * (pB->nRow + 1));
      if( aReal==0 || aInt==0 ){
        rc = SQLITE_NOMEM;
        break;
      }
      d.nNull = 0;
      for(i=0; i<pB->nRow; i++){
        uint64_t v = pCol->aVal[i];
        switch( pCol->aType[i] ){
          case SQLITE_INTEGER: aInt[d.nInt++] = (int64_t)v; break;
          case SQLITE_FLOAT:   memcpy(&aReal[d.nReal++], &v, sizeof(double)); break;
          case SQLITE_NULL:    d.nNull++; break;
          default:             d.nOther++; break;
        }
      }
      d.aReal = aReal;
      d.aInt = aInt;
      break;
    }
    default:
      break;
  }
  if( rc==SQLITE_OK ){
    /* An interrupt stops the sort of quantile bins (parext.h). */
    ParStop stop;
    parStopBegin(pTab->db, &stop);
    rc = parHistCompute(pTab->pCtx, pSpec, &d, nHeld, pOut, pzErr);
    parStopEnd(&stop);
  }
  sqlite3_free(aReal);
  sqlite3_free(aInt);
  parBatchFree(pB);
  return rc;
}

/* ==== par_histogram: the table-valued function ============================== */

/* Set the error message of the virtual table, freeing the previous one. */
static void parHistSetError(sqlite3_vtab *pVtab, char *zMsg){
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = zMsg;
}

static int parHistConnect(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                          sqlite3_vtab **ppVtab, char **pzErr){
  ParHist *pTab;
  int rc = sqlite3_declare_vtab(db,
      "CREATE TABLE x(bin INTEGER, lo REAL, hi REAL, count INTEGER, cumulative INTEGER,"
      " fraction REAL, kind TEXT, source HIDDEN, \"column\" HIDDEN, bins HIDDEN,"
      " range_lo HIDDEN, range_hi HIDDEN)");
  if( rc ) return rc;
  /* It runs SQL: never from a trigger or a view a stranger's file holds. */
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  pTab = sqlite3_malloc(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->db = db;
  pTab->pCtx = (ParContext*)pAux;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

/* The plan: idxNum has bit j set when argument j (source, column, bins,
** range_lo, range_hi) is given; they are passed to xFilter in that order. */
static int parHistBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int aIdx[PAR_HIST_NARG], i, j, mask = 0, nArg = 0;
  for(j=0; j<PAR_HIST_NARG; j++) aIdx[j] = -1;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *p = &pInfo->aConstraint[i];
    j = p->iColumn - PAR_HIST_COL_SOURCE;
    if( j<0 || j>=PAR_HIST_NARG ) continue;
    if( p->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( !p->usable ) return SQLITE_CONSTRAINT;
    aIdx[j] = i;
  }
  for(j=0; j<PAR_HIST_NARG; j++){
    if( aIdx[j]<0 ) continue;
    mask |= 1 << j;
    pInfo->aConstraintUsage[aIdx[j]].argvIndex = ++nArg;
    pInfo->aConstraintUsage[aIdx[j]].omit = 1;
  }
  if( (mask & 7)!=7 || mask==(7|16) ){
    parHistSetError(pVtab, sqlite3_mprintf("par_histogram: expected the arguments "
        "(source, column, bins [, lo, hi]) or (source, column, bins, 'quantile')"));
    return SQLITE_ERROR;
  }
  pInfo->idxNum = mask;
  pInfo->estimatedCost = 1e6;
  pInfo->estimatedRows = 100;
  return SQLITE_OK;
}

static int parHistDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab->zErrMsg);
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int parHistOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  ParHistCursor *pCur = sqlite3_malloc(sizeof(*pCur));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static void parHistCursorReset(ParHistCursor *pCur){
  int j;
  parHistOutClear(&pCur->out);
  for(j=0; j<PAR_HIST_NARG; j++){
    sqlite3_value_free(pCur->apArg[j]);
    pCur->apArg[j] = 0;
  }
  pCur->iRow = 0;
}

static int parHistClose(sqlite3_vtab_cursor *cur){
  parHistCursorReset((ParHistCursor*)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int parHistFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                         int argc, sqlite3_value **argv){
  ParHistCursor *pCur = (ParHistCursor*)cur;
  ParHist *pTab = (ParHist*)cur->pVtab;
  ParHistSpec spec;
  const char *zSource, *zCol;
  char *zErr = 0;
  int j, k = 0, rc;

  parHistCursorReset(pCur);
  memset(&spec, 0, sizeof(spec));
  for(j=0; j<PAR_HIST_NARG; j++){
    if( (idxNum & (1 << j))==0 ) continue;
    pCur->apArg[j] = sqlite3_value_dup(argv[k++]);
    if( pCur->apArg[j]==0 ) return SQLITE_NOMEM;
  }
  zSource = parTextArg(pCur->apArg[0]);
  zCol = parTextArg(pCur->apArg[1]);
  if( zSource==0 ){
    zErr = sqlite3_mprintf("par_histogram: the source must be a table name or a SELECT "
                           "statement");
    rc = SQLITE_ERROR;
  }else if( zCol==0 ){
    zErr = sqlite3_mprintf("par_histogram: the column must be a column name");
    rc = SQLITE_ERROR;
  }else{
    rc = parHistParseSpec(pTab->db, pTab->pCtx, pCur->apArg[2], pCur->apArg[3], pCur->apArg[4],
                          &spec, &zErr);
  }
  if( rc==SQLITE_OK ) rc = parHistRun(pTab, zSource, zCol, &spec, &pCur->out, &zErr);
  parHistSpecClear(&spec);
  if( rc ){
    parHistSetError(&pTab->base, zErr ? zErr : sqlite3_mprintf("%s", sqlite3_errstr(rc)));
    /* SQLITE_FULL (the extraction over memory_mb) would make SQLite roll
    ** back the caller's transaction, as for SQLITE_NOMEM: it is an error. */
    return rc==SQLITE_FULL ? SQLITE_ERROR : rc;
  }
  return SQLITE_OK;
}

static int parHistNext(sqlite3_vtab_cursor *cur){
  ((ParHistCursor*)cur)->iRow++;
  return SQLITE_OK;
}

static int parHistEof(sqlite3_vtab_cursor *cur){
  ParHistCursor *pCur = (ParHistCursor*)cur;
  return pCur->iRow>=pCur->out.nRow;
}

static int parHistColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  ParHistCursor *pCur = (ParHistCursor*)cur;
  if( i>=PAR_HIST_COL_SOURCE ){
    sqlite3_value *pArg = pCur->apArg[i - PAR_HIST_COL_SOURCE];
    if( pArg ) sqlite3_result_value(ctx, pArg);
    return SQLITE_OK;
  }
  parHistRowResult(&pCur->out, &pCur->out.aRow[pCur->iRow], i, ctx);
  return SQLITE_OK;
}

static int parHistRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = ((ParHistCursor*)cur)->iRow;
  return SQLITE_OK;
}

static sqlite3_module parHistModule = {
  0,                   /* iVersion */
  0,                   /* xCreate: 0 makes it eponymous-only */
  parHistConnect,      /* xConnect: declare the columns, direct use only */
  parHistBestIndex,    /* xBestIndex: the arguments, in column order */
  parHistDisconnect,   /* xDisconnect */
  0,                   /* xDestroy */
  parHistOpen,         /* xOpen */
  parHistClose,        /* xClose */
  parHistFilter,       /* xFilter: extracts, bins, keeps the rows */
  parHistNext,         /* xNext */
  parHistEof,          /* xEof */
  parHistColumn,       /* xColumn */
  parHistRowid,        /* xRowid: the row's position */
  0, 0, 0, 0, 0, 0, 0, /* read-only: no xUpdate, transactions, functions */
  0, 0, 0, 0           /* xRename .. xShadowName */
};

/* ==== par_histogram: the aggregate =========================================== */

/* The state of one group. */
typedef struct ParHistAgg {
  int bInit;                 /* the spec is parsed */
  int bFailed;               /* an error was reported: ignore further rows */
  ParHistSpec spec;
  sqlite3_value *apSpec[3];  /* bins, lo/'quantile', hi as first given */
  int nSpec;
  double *aReal;             /* the REAL values (sqlite3_malloc) */
  int64_t *aInt;             /* the INTEGER values (sqlite3_malloc) */
  sqlite3_int64 nReal, nRealAlloc, nInt, nIntAlloc;
  sqlite3_int64 nNull, nOther;
} ParHistAgg;

/* True if two argument values are the same value of the same type. */
static int parValueSame(sqlite3_value *a, sqlite3_value *b){
  int eType = sqlite3_value_type(a);
  if( eType!=sqlite3_value_type(b) ) return 0;
  switch( eType ){
    case SQLITE_NULL:    return 1;
    case SQLITE_INTEGER: return sqlite3_value_int64(a)==sqlite3_value_int64(b);
    case SQLITE_FLOAT:   return sqlite3_value_double(a)==sqlite3_value_double(b);
    default: {
      int n = sqlite3_value_bytes(a);
      const void *pA = eType==SQLITE_TEXT ? (const void*)sqlite3_value_text(a)
                                          : sqlite3_value_blob(a);
      const void *pB = eType==SQLITE_TEXT ? (const void*)sqlite3_value_text(b)
                                          : sqlite3_value_blob(b);
      return n==sqlite3_value_bytes(b) && (n==0 || memcmp(pA, pB, n)==0);
    }
  }
}

static void parHistAggStep(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  ParContext *pCtx = (ParContext*)sqlite3_user_data(ctx);
  ParHistAgg *p = sqlite3_aggregate_context(ctx, sizeof(*p));
  int rc = SQLITE_OK, j;
  if( p==0 || p->bFailed ) return;
  if( !p->bInit ){
    char *zErr = 0;
    p->bInit = 1;
    rc = parHistParseSpec(sqlite3_context_db_handle(ctx), pCtx, argv[1], argc>2 ? argv[2] : 0, argc>3 ? argv[3] : 0,
                          &p->spec, &zErr);
    if( rc ){
      p->bFailed = 1;
      if( zErr ) sqlite3_result_error(ctx, zErr, -1);
      else sqlite3_result_error_code(ctx, rc);
      sqlite3_free(zErr);
      return;
    }
    p->nSpec = argc - 1;
    for(j=0; j<p->nSpec; j++){
      p->apSpec[j] = sqlite3_value_dup(argv[j+1]);
      if( p->apSpec[j]==0 ) rc = SQLITE_NOMEM;
    }
  }else{
    for(j=0; j<p->nSpec; j++){
      if( !parValueSame(p->apSpec[j], argv[j+1]) ){
        p->bFailed = 1;
        sqlite3_result_error(ctx, "par_histogram: bins, lo and hi must be the same for "
                             "every row of a group", -1);
        return;
      }
    }
  }
  if( rc==SQLITE_OK ){
    /* The group's values, with its edges, within memory_mb. */
    sqlite3_int64 nSpec = parHistSpecBytes(&p->spec);
    switch( sqlite3_value_type(argv[0]) ){
      case SQLITE_NULL:
        p->nNull++;
        break;
      case SQLITE_INTEGER: {
        int64_t v = sqlite3_value_int64(argv[0]);
        rc = parBufPush((void**)&p->aInt, &p->nInt, &p->nIntAlloc, sizeof(v), &v, 1,
                        parHistRoom(pCtx, nSpec + 8*p->nRealAlloc));
        break;
      }
      case SQLITE_FLOAT: {
        double v = sqlite3_value_double(argv[0]);
        rc = parBufPush((void**)&p->aReal, &p->nReal, &p->nRealAlloc, sizeof(v), &v, 1,
                        parHistRoom(pCtx, nSpec + 8*p->nIntAlloc));
        break;
      }
      default:
        p->nOther++;
        break;
    }
  }
  if( rc ){
    p->bFailed = 1;
    if( rc==SQLITE_TOOBIG ){
      char *zErr = parHistMemError(pCtx, "par_histogram", "buffering the values of a group");
      if( zErr ) sqlite3_result_error(ctx, zErr, -1);
      else sqlite3_result_error_nomem(ctx);
      sqlite3_free(zErr);
    }else{
      sqlite3_result_error_code(ctx, rc);
    }
  }
}

static void parHistAggFinal(sqlite3_context *ctx){
  ParContext *pCtx = (ParContext*)sqlite3_user_data(ctx);
  ParHistAgg *p = sqlite3_aggregate_context(ctx, 0);
  int j;
  if( p==0 ) return;     /* no rows: NULL (6) */
  if( !p->bFailed ){
    ParHistData d;
    ParHistOut out;
    char *zErr = 0;
    int rc;
    memset(&d, 0, sizeof(d));
    d.aReal = p->aReal;
    d.nReal = (size_t)p->nReal;
    d.aInt = p->aInt;
    d.nInt = (size_t)p->nInt;
    d.nNull = p->nNull;
    d.nOther = p->nOther;
    rc = parHistCompute(pCtx, &p->spec, &d, (double)(parHistSpecBytes(&p->spec)
                        + 8*(p->nRealAlloc + p->nIntAlloc)), &out, &zErr);
    if( rc==SQLITE_OK ){
      /* The values are done with; the rows and the spec stay while the
      ** JSON is written. */
      char *zJson = 0;
      sqlite3_int64 nJson = 0;
      sqlite3_free(p->aReal);
      sqlite3_free(p->aInt);
      p->aReal = 0;
      p->aInt = 0;
      rc = parHistJson(&out, parHistRoom(pCtx, parHistSpecBytes(&p->spec)
                       + (sqlite3_int64)sizeof(ParHistRow)*out.nRow), &zJson, &nJson);
      parHistOutClear(&out);
      if( rc==SQLITE_TOOBIG ){
        zErr = parHistMemError(pCtx, "par_histogram", "writing the JSON result");
      }
      if( rc==SQLITE_OK ) sqlite3_result_text64(ctx, zJson, nJson, sqlite3_free, SQLITE_UTF8);
    }
    if( rc!=SQLITE_OK ){
      if( zErr ) sqlite3_result_error(ctx, zErr, -1);
      else sqlite3_result_error_code(ctx, rc);
    }
    sqlite3_free(zErr);
  }
  parHistSpecClear(&p->spec);
  for(j=0; j<p->nSpec; j++) sqlite3_value_free(p->apSpec[j]);
  sqlite3_free(p->aReal);
  sqlite3_free(p->aInt);
  memset(p, 0, sizeof(*p));
}

/* ==== par_median, par_percentile ============================================ */

/* The state of one group. */
typedef struct ParPctile {
  int bPct;                  /* rPct is set */
  int bFailed;
  double rPct;               /* the fraction, 0.0 to 1.0 */
  double *a;                 /* the values (sqlite3_malloc) */
  sqlite3_int64 n, nAlloc;
} ParPctile;

/* The error message zFmt with the function's name for "%s": par_median
** has one argument, par_percentile two. */
static void parPctError(sqlite3_context *ctx, int argc, const char *zFmt){
  const char *zName = argc==1 ? "par_median" : "par_percentile";
  char *zMsg = sqlite3_mprintf(zFmt, zName);
  sqlite3_result_error(ctx, zMsg ? zMsg : zFmt, -1);
  sqlite3_free(zMsg);
}

static void parPctStep(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  ParContext *pCtx = (ParContext*)sqlite3_user_data(ctx);
  ParPctile *p;
  double rPct = 0.5, y;
  sqlite3_int64 mxBuf;
  int eType, rc;
  if( argc==2 ){
    /* p must be a number from 0 to 100. */
    eType = sqlite3_value_numeric_type(argv[1]);
    rPct = sqlite3_value_double(argv[1]) / 100.0;
    if( (eType!=SQLITE_INTEGER && eType!=SQLITE_FLOAT) || !(rPct>=0.0 && rPct<=1.0) ){
      parPctError(ctx, argc, "the fraction argument to %s() is not between 0.0 and 100.0");
      return;
    }
  }
  p = sqlite3_aggregate_context(ctx, sizeof(*p));
  if( p==0 || p->bFailed ) return;
  /* ... and the same (within 0.001 as a fraction) for every row. */
  if( !p->bPct ){
    p->rPct = rPct;
    p->bPct = 1;
  }else if( !(fabs(p->rPct - rPct)<=0.001) ){
    p->bFailed = 1;
    parPctError(ctx, argc, "the fraction argument to %s() is not the same for all input rows");
    return;
  }
  eType = sqlite3_value_type(argv[0]);
  if( eType==SQLITE_NULL ) return;
  if( eType!=SQLITE_INTEGER && eType!=SQLITE_FLOAT ){
    p->bFailed = 1;
    parPctError(ctx, argc, "input to %s() is not numeric");
    return;
  }
  y = sqlite3_value_double(argv[0]);
  if( isinf(y) ){
    p->bFailed = 1;
    parPctError(ctx, argc, "Inf input to %s()");
    return;
  }
  /* The values may take half of memory_mb: the sort's scratch, as large,
  ** takes the other half (quantile.h). */
  mxBuf = parHistRoom(pCtx, 0);
  rc = parBufPush((void**)&p->a, &p->n, &p->nAlloc, sizeof(y), &y, 1,
                  mxBuf<0 ? -1 : mxBuf/2);
  if( rc ){
    p->bFailed = 1;
    if( rc==SQLITE_TOOBIG ){
      char *zErr = parHistMemError(pCtx, argc==1 ? "par_median" : "par_percentile",
                                   "buffering the values to sort");
      if( zErr ) sqlite3_result_error(ctx, zErr, -1);
      else sqlite3_result_error_nomem(ctx);
      sqlite3_free(zErr);
    }else{
      sqlite3_result_error_code(ctx, rc);
    }
  }
}

static void parPctFinal(sqlite3_context *ctx){
  ParContext *pCtx = (ParContext*)sqlite3_user_data(ctx);
  ParPctile *p = sqlite3_aggregate_context(ctx, 0);
  if( p==0 ) return;
  if( !p->bFailed && p->n>0 ){
    ParStop stop;       /* an interrupt stops the sort (parext.h) */
    int rc;
    parStopBegin(sqlite3_context_db_handle(ctx), &stop);
    rc = px_sort_f64(p->a, (size_t)p->n, parThreadsFor(pCtx, p->n));
    parStopEnd(&stop);
    if( rc ){
      sqlite3_result_error_code(ctx, parRcFromPx(rc));
    }else{
      /* The height at ix of the line through the sorted values. */
      double ix = p->rPct * (double)(p->n - 1);
      sqlite3_int64 i1 = (sqlite3_int64)ix;
      sqlite3_int64 i2 = ix==(double)i1 || i1==p->n - 1 ? i1 : i1 + 1;
      double v1 = p->a[i1], v2 = p->a[i2];
      sqlite3_result_double(ctx, v1 + (v2 - v1) * (ix - (double)i1));
    }
  }
  sqlite3_free(p->a);
  memset(p, 0, sizeof(*p));
}

/* ==== registration ========================================================= */

int parHistogramRegister(sqlite3 *db, ParContext *pCtx){
  static const int aFlag = SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS;
  int rc, nArg;
  rc = sqlite3_create_module_v2(db, "par_histogram", &parHistModule,
                                parContextRef(pCtx), parContextUnref);
  for(nArg=2; rc==SQLITE_OK && nArg<=4; nArg++){
    rc = sqlite3_create_function_v2(db, "par_histogram", nArg, aFlag, parContextRef(pCtx),
                                    0, parHistAggStep, parHistAggFinal, parContextUnref);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function_v2(db, "par_median", 1, aFlag, parContextRef(pCtx), 0,
                                    parPctStep, parPctFinal, parContextUnref);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function_v2(db, "par_percentile", 2, aFlag, parContextRef(pCtx),
                                    0, parPctStep, parPctFinal, parContextUnref);
  }
  return rc;
}
