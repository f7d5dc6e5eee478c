/*
** op_join.c: the join operator: each table of a join read by a scan of
** its own (extract.c: parallel, cached per table), then joined by the
** hash-join kernels (kernels/join.h) into the columns the extraction
** query would have returned, in SQLite's nested-loop order (plan_join.c
** says why that order holds).
**
**   SELECT d.grp, count(*), sum(f.v) FROM fact f JOIN dim d ON d.id = f.k
**     GROUP BY d.grp;
**
** Keys compare as SQLite compares the two columns of an equality:
**   - NULL never matches;
**   - numbers by value: an INTEGER and a REAL are equal when the REAL is
**     that integer exactly (sqlite3IntFloatCompare), so a REAL with an
**     integral value in range becomes that integer, any other keeps its
**     bits in a class of its own;
**   - with numeric comparison affinity, TEXT that looks like a number on
**     either side is that number (SQLite itself converts each distinct
**     text: "CAST(x AS NUMERIC)" when "x = CAST(x AS NUMERIC)", which is
**     applyNumericAffinity's answer), other TEXT stays text;
**   - TEXT under the key's collation: each distinct text is written in a
**     form where the collation's equality is byte equality (NOCASE: ASCII
**     letters folded, and bytes after a NUL ignored, as sqlite3StrNICmp
**     does; RTRIM: trailing spaces dropped) and numbered in a dictionary
**     both sides share;
**   - BLOB by bytes, never equal to TEXT.
** A key is then a class and a 64-bit payload per row: one word when every
** value on both sides is an INTEGER (or NULL), else two.
**
** The rows of the tables are read at one snapshot: a commit that comes
** between two tables' scans (the caller holds no transaction) is seen in
** the data version, and the join is then left to SQLite, as it is when
** the order of matches cannot be told (see ParJoinTab.bOrderKnown).
*/
#include "parext.h"
#include "op_join.h"
#include "join.h"
#include "gather.h"
#include "sort.h"
#include "op_sort.h"
#include "exec.h"

#include <stdlib.h>
#include <string.h>

/* Classes of a key value. */
#define JK_NULL 0
#define JK_INT  1
#define JK_REAL 2     /* not an integer in int64's range */
#define JK_TEXT 3
#define JK_BLOB 4

/* One run of the join. */
typedef struct JoinRun {
  ParContext *pCtx;
  sqlite3 *db;
  const ParPlanJoin *pJoin;
  ParBatch *apB[PAR_JOIN_MAX_TAB];   /* each table's rows */
  sqlite3_stmt *pNum;                /* numeric affinity of a text */
  int nThread;
  int nOutCol;                       /* the extraction's columns, then the
                                     ** residual terms' (ParPlanJoin) */
  uint32_t *aaOrd[PAR_JOIN_MAX_TAB]; /* a table's rows in the order of the
                                     ** index SQLite walks (ParJoinTab.aOrd),
                                     ** or NULL: in reading order */
  char *zSqlite;                     /* why SQLite must read the join */
} JoinRun;

/* The canonical values of one key column of a table. */
typedef struct JoinCanon {
  uint8_t *aCls;     /* per row: JK_*; NULL when every row is JK_INT */
  uint64_t *aPay;    /* per row: the payload */
  int bBorrow;       /* aPay is the column's own aInt: not to free */
} JoinCanon;

static void joinCanonFree(JoinCanon *p){
  parBigFree(p->aCls);
  if( !p->bBorrow ) parBigFree(p->aPay);
  memset(p, 0, sizeof(*p));
}

static inline void joinCanonReal(double r, uint8_t *pCls, uint64_t *pPay){
  if( r>=-9223372036854775808.0 && r<9223372036854775808.0 && (double)(int64_t)r==r ){
    *pCls = JK_INT;
    *pPay = (uint64_t)(int64_t)r;
  }else{
    *pCls = JK_REAL;
    memcpy(pPay, &r, 8);
  }
}

/* The form of text (z, n) whose byte equality is eColl's equality, in
** *pzOut (n bytes or fewer; aBuf when it differs from z). */
static sqlite3_int64 joinCollForm(int eColl, const char *z, sqlite3_int64 n, char *aBuf,
                                  const char **pzOut){
  sqlite3_int64 i;
  *pzOut = z;
  if( eColl==PAR_COLL_RTRIM ){
    while( n>0 && z[n-1]==' ' ) n--;
  }else if( eColl==PAR_COLL_NOCASE ){
    int bNul = 0;
    for(i=0; i<n; i++){
      char c = bNul ? 0 : z[i];
      if( c>='A' && c<='Z' ) c += 'a'-'A';
      aBuf[i] = c;
      if( z[i]==0 ) bNul = 1;
    }
    *pzOut = aBuf;
  }
  return n;
}

/* The numeric value TEXT (z, n) takes under numeric affinity, as SQLite
** gives it: *pCls JK_INT or JK_REAL with *pPay, or JK_TEXT when it stays
** text. */
static int joinNumeric(JoinRun *pR, const char *z, sqlite3_int64 n, uint8_t *pCls,
                       uint64_t *pPay){
  int rc;
  if( pR->pNum==0 ){
    rc = sqlite3_prepare_v2(pR->db,
        "SELECT CASE WHEN ?1 = CAST(?1 AS NUMERIC) THEN CAST(?1 AS NUMERIC) END",
        -1, &pR->pNum, 0);
    if( rc ) return rc;
  }
  rc = sqlite3_bind_text64(pR->pNum, 1, z, (sqlite3_uint64)n, SQLITE_STATIC, SQLITE_UTF8);
  if( rc ) return rc;
  *pCls = JK_TEXT;
  if( sqlite3_step(pR->pNum)==SQLITE_ROW ){
    switch( sqlite3_column_type(pR->pNum, 0) ){
      case SQLITE_INTEGER:
        *pCls = JK_INT;
        *pPay = (uint64_t)sqlite3_column_int64(pR->pNum, 0);
        break;
      case SQLITE_FLOAT:
        joinCanonReal(sqlite3_column_double(pR->pNum, 0), pCls, pPay);
        break;
    }
  }
  rc = sqlite3_reset(pR->pNum);
  return rc==SQLITE_ROW || rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/* Class and payload of every dictionary entry of pD as a key value under
** eColl and bNumeric, texts numbered in pShared (both sides' dictionary). */
static int joinDictCanon(JoinRun *pR, const ParDict *pD, int eColl, int bNumeric,
                         ParBatch *pSharedB, ParDict *pShared, uint8_t *aCls, uint64_t *aPay){
  char *aBuf = 0;
  sqlite3_int64 nBuf = 0;
  uint32_t e;
  int rc = SQLITE_OK;
  for(e=0; e<pD->nEntry && rc==SQLITE_OK; e++){
    const char *z = parDictText(pD, e), *zForm;
    sqlite3_int64 n = pD->aLen[e];
    uint32_t iCode;
    if( pD->aKind[e]==SQLITE_TEXT && bNumeric ){
      rc = joinNumeric(pR, z, n, &aCls[e], &aPay[e]);
      if( rc || aCls[e]!=JK_TEXT ) continue;
    }
    if( n>nBuf ){
      sqlite3_free(aBuf);
      nBuf = n*2;
      aBuf = sqlite3_malloc64((sqlite3_uint64)nBuf);
      if( aBuf==0 ){ rc = SQLITE_NOMEM; break; }
    }
    if( pD->aKind[e]==SQLITE_TEXT ){
      n = joinCollForm(eColl, z, n, aBuf, &zForm);
      aCls[e] = JK_TEXT;
    }else{
      zForm = z;
      aCls[e] = JK_BLOB;
    }
    rc = parDictAdd(pSharedB, pShared, (const unsigned char*)zForm, n, pD->aKind[e], &iCode);
    aPay[e] = iCode;
  }
  sqlite3_free(aBuf);
  return rc;
}

static inline int joinIsNull(const ParColumn *pCol, sqlite3_int64 i){
  return pCol->aNull && ((pCol->aNull[i>>3] >> (i&7)) & 1);
}

/* The key values of column pCol (nRow rows) into *pC. */
static int joinCanonCol(JoinRun *pR, const ParColumn *pCol, sqlite3_int64 nRow, int eColl,
                        int bNumeric, ParBatch *pSharedB, ParDict *pShared, JoinCanon *pC){
  uint8_t *aDCls = 0;
  uint64_t *aDPay = 0;
  sqlite3_int64 i, n = nRow ? nRow : 1;
  int rc = SQLITE_OK;
  if( pCol->eStore==PAR_COL_INT ){
    /* The integers are the payloads: no copy (the common key). */
    pC->aPay = (uint64_t*)pCol->aInt;
    pC->bBorrow = 1;
    if( pCol->nNull>0 ){
      uint8_t *aCls = pC->aCls = parBigMalloc(n);
      if( aCls==0 ) return SQLITE_NOMEM;
      #pragma omp parallel for num_threads(pR->nThread) schedule(static)
      for(i=0; i<nRow; i++) aCls[i] = joinIsNull(pCol, i) ? JK_NULL : JK_INT;
    }
    return SQLITE_OK;
  }
  pC->aCls = parBigMalloc(n);
  pC->aPay = parBigMalloc(n*8);
  if( pC->aCls==0 || pC->aPay==0 ) return SQLITE_NOMEM;
  if( pCol->pDict ){
    uint32_t nE = pCol->pDict->nEntry ? pCol->pDict->nEntry : 1;
    aDCls = sqlite3_malloc64(nE);
    aDPay = sqlite3_malloc64((sqlite3_uint64)nE*8);
    if( aDCls==0 || aDPay==0 ) rc = SQLITE_NOMEM;
    if( rc==SQLITE_OK ){
      rc = joinDictCanon(pR, pCol->pDict, eColl, bNumeric, pSharedB, pShared, aDCls, aDPay);
    }
  }
  if( rc==SQLITE_OK ){
    uint8_t *aCls = pC->aCls;
    uint64_t *aPay = pC->aPay;
    #pragma omp parallel for num_threads(pR->nThread) schedule(static)
    for(i=0; i<nRow; i++){
      uint8_t c = JK_NULL;
      uint64_t v = 0;
      if( !joinIsNull(pCol, i) ){
        switch( pCol->eStore ){
          case PAR_COL_INT:  c = JK_INT; v = (uint64_t)pCol->aInt[i]; break;
          case PAR_COL_REAL: joinCanonReal(pCol->aReal[i], &c, &v); break;
          case PAR_COL_TEXT: c = aDCls[pCol->aCode[i]]; v = aDPay[pCol->aCode[i]]; break;
          case PAR_COL_MIXED:
            switch( pCol->aType[i] ){
              case SQLITE_INTEGER: c = JK_INT; v = pCol->aVal[i]; break;
              case SQLITE_FLOAT: {
                double r;
                memcpy(&r, &pCol->aVal[i], 8);
                joinCanonReal(r, &c, &v);
                break;
              }
              case SQLITE_TEXT: case SQLITE_BLOB:
                c = aDCls[pCol->aVal[i]]; v = aDPay[pCol->aVal[i]]; break;
            }
            break;
        }
      }
      aCls[i] = c;
      aPay[i] = v;
    }
  }
  sqlite3_free(aDCls);
  sqlite3_free(aDPay);
  return rc;
}

/* Rows joined so far: aaIdx[t][r] is row r's row of table t (t < nTab);
** aaIdx[t] NULL: row r itself (before the first step). */
typedef struct JoinRows {
  sqlite3_int64 n;
  int nTab;
  uint32_t *aaIdx[PAR_JOIN_MAX_TAB];
  int abNone[PAR_JOIN_MAX_TAB];      /* aaIdx[t] may hold PX_JOIN_NONE */
} JoinRows;

static void joinRowsClear(JoinRows *p){
  int t;
  for(t=0; t<p->nTab; t++) parBigFree(p->aaIdx[t]);
  memset(p, 0, sizeof(*p));
}

/* The key words of one side: for key k, word aPay[...] (and the class
** first when any value of either side is not an INTEGER), gathered by
** aIdx (NULL: as they are) over n rows; aSkip for rows with a NULL key. */
static int joinWords(JoinRun *pR, JoinCanon *aC, int nKey, const int *aTwo,
                     const uint32_t *const *aaIdx, sqlite3_int64 n, uint64_t **aaWord,
                     int *abBorrow, uint8_t *aSkip){
  int k, w = 0;
  sqlite3_int64 i, nA = n ? n : 1;
  memset(aSkip, 0, (size_t)nA);
  for(k=0; k<nKey; k++){
    const uint32_t *aIdx = aaIdx ? aaIdx[k] : 0;
    const uint8_t *aCls = aC[k].aCls;
    const uint64_t *aPay = aC[k].aPay;
    uint64_t *aW, *aW2 = 0;
    if( aIdx==0 && !aTwo[k] ){
      /* The payloads as they are: the word itself. */
      aaWord[w] = aC[k].aPay;
      abBorrow[w] = aC[k].bBorrow;
      if( !aC[k].bBorrow ) aC[k].aPay = 0;     /* the words own it now */
      w++;
      if( aCls ){
        #pragma omp parallel for num_threads(pR->nThread) schedule(static)
        for(i=0; i<n; i++) if( aCls[i]==JK_NULL ) aSkip[i] = 1;
      }
      continue;
    }
    aW = aaWord[w] = parBigMalloc(nA*8);
    if( aW==0 ) return SQLITE_NOMEM;
    w++;
    if( aTwo[k] ){
      aW2 = aaWord[w] = parBigMalloc(nA*8);
      if( aW2==0 ) return SQLITE_NOMEM;
      w++;
    }
    #pragma omp parallel for num_threads(pR->nThread) schedule(static)
    for(i=0; i<n; i++){
      uint32_t r = aIdx ? aIdx[i] : (uint32_t)i;
      if( r==PX_JOIN_NONE ){
        /* NULL padding of a LEFT JOIN: a NULL key. */
        aSkip[i] = 1;
        aW[i] = 0;
        if( aW2 ) aW2[i] = 0;
        continue;
      }
      if( aCls && aCls[r]==JK_NULL ) aSkip[i] = 1;
      if( aW2 ){
        aW[i] = aCls ? aCls[r] : JK_INT;
        aW2[i] = aPay[r];
      }else{
        aW[i] = aPay[r];
      }
    }
  }
  return SQLITE_OK;
}

/* Does any value of aC (n rows) have a class other than INTEGER/NULL? */
static int joinNeedsClass(const JoinCanon *pC, sqlite3_int64 n){
  sqlite3_int64 i;
  if( pC->aCls==0 ) return 0;
  for(i=0; i<n; i++) if( pC->aCls[i]>JK_INT ) return 1;
  return 0;
}

/* Is there room under memory_mb for the tables' rows and nExtra bytes
** more?  Else *pzErr. */
static int joinFits(JoinRun *pR, double nExtra, char **pzErr){
  sqlite3_int64 mx = parMemLimit(pR->pCtx);
  double n = nExtra;
  int t;
  for(t=0; t<pR->pJoin->nTab; t++) if( pR->apB[t] ) n += (double)parBatchBytes(pR->apB[t]);
  if( mx>0 && n>(double)mx ){
    *pzErr = sqlite3_mprintf("memory limit of %lld MB exceeded while joining tables "
                             "(see par_config('memory_mb'))", mx/(1024*1024));
    return SQLITE_FULL;
  }
  return SQLITE_OK;
}

/* Join table iTab (> 0) to the rows joined so far (*pRows). */
static int joinStep(JoinRun *pR, int iTab, JoinRows *pRows, char **pzErr){
  const ParJoinTab *pT = &pR->pJoin->aTab[iTab];
  ParBatch *pBuild = pR->apB[iTab];
  JoinCanon aB[PAR_JOIN_MAX_TAB*2], aP[PAR_JOIN_MAX_TAB*2];
  ParColumn aDict[PAR_JOIN_MAX_TAB*2];
  ParBatch sharedB;
  uint64_t *aaBW[PAR_JOIN_MAX_TAB*4], *aaPW[PAR_JOIN_MAX_TAB*4];
  int abBW[PAR_JOIN_MAX_TAB*4], abPW[PAR_JOIN_MAX_TAB*4];   /* borrowed words */
  const uint32_t *aaPIdx[PAR_JOIN_MAX_TAB*2];
  int aTwo[PAR_JOIN_MAX_TAB*2];
  uint8_t *aSkipB = 0, *aSkipP = 0;
  uint32_t *aProbe = 0, *aBuildIdx = 0;
  px_join_table *pTable = 0;
  px_join_result *pRes = 0;
  size_t nOut = 0;
  int k, t, nWord = 0, rc = SQLITE_OK, nKey = pT->nKey, bSameRows = 0;
  sqlite3_int64 nB = pBuild->nRow, nP = pRows->n, i;
  JoinRows next;

  if( nKey>PAR_JOIN_MAX_TAB*2 ){
    *pzErr = sqlite3_mprintf("too many join keys");
    return SQLITE_INTERNAL;
  }
  /* The keys: a class and a payload per row and key, the words, the rows
  ** joined so far (an upper bound). */
  rc = joinFits(pR, (double)(nB + nP)*(2.0 + 25.0*nKey) + (double)nP*4*iTab, pzErr);
  if( rc ) return rc;
  memset(aB, 0, sizeof(aB));
  memset(aP, 0, sizeof(aP));
  memset(aDict, 0, sizeof(aDict));
  memset(aaBW, 0, sizeof(aaBW));
  memset(aaPW, 0, sizeof(aaPW));
  memset(abBW, 0, sizeof(abBW));
  memset(abPW, 0, sizeof(abPW));
  memset(&sharedB, 0, sizeof(sharedB));
  memset(&next, 0, sizeof(next));
  sharedB.nRef = 1;

  /* Each key's values on both sides: the build table's rows, the probe
  ** table's rows (gathered per joined row below). */
  for(k=0; k<nKey && rc==SQLITE_OK; k++){
    const ParJoinKey *pK = &pT->aKey[k];
    ParBatch *pProbeB = pR->apB[pK->iProbeTab];
    aDict[k].pDict = sqlite3_malloc(sizeof(ParDict));
    if( aDict[k].pDict==0 ){ rc = SQLITE_NOMEM; break; }
    memset(aDict[k].pDict, 0, sizeof(ParDict));
    rc = joinCanonCol(pR, &pBuild->aCol[pK->iBuildCol], nB, pK->eColl, pK->bNumeric,
                      &sharedB, aDict[k].pDict, &aB[k]);
    if( rc==SQLITE_OK ){
      rc = joinCanonCol(pR, &pProbeB->aCol[pK->iProbeCol], pProbeB->nRow, pK->eColl,
                        pK->bNumeric, &sharedB, aDict[k].pDict, &aP[k]);
    }
    if( rc==SQLITE_OK ){
      aTwo[k] = joinNeedsClass(&aB[k], nB) || joinNeedsClass(&aP[k], pProbeB->nRow);
      nWord += 1 + aTwo[k];
      aaPIdx[k] = pRows->aaIdx[pK->iProbeTab];
    }
  }
  if( rc ) goto done;
  aSkipB = parBigMalloc(nB ? nB : 1);
  aSkipP = parBigMalloc(nP ? nP : 1);
  if( aSkipB==0 || aSkipP==0 ){ rc = SQLITE_NOMEM; goto done; }
  if( pR->aaOrd[iTab] ){
    /* The build rows in the index's order: a row's matches come in it. */
    const uint32_t *aaBIdx[PAR_JOIN_MAX_TAB*2];
    for(k=0; k<nKey; k++) aaBIdx[k] = pR->aaOrd[iTab];
    rc = joinWords(pR, aB, nKey, aTwo, aaBIdx, nB, aaBW, abBW, aSkipB);
  }else{
    rc = joinWords(pR, aB, nKey, aTwo, 0, nB, aaBW, abBW, aSkipB);
  }
  if( rc==SQLITE_OK ) rc = joinWords(pR, aP, nKey, aTwo, aaPIdx, nP, aaPW, abPW, aSkipP);
  for(k=0; k<nKey; k++){
    joinCanonFree(&aB[k]);
    joinCanonFree(&aP[k]);
  }
  if( rc ) goto done;

  rc = parRcFromPx(px_join_build((const uint64_t *const*)aaBW, nWord, (size_t)nB, aSkipB,
                                 pR->nThread, &pTable));
  if( rc==SQLITE_OK ){
    rc = parRcFromPx(px_join_probe(pTable, (const uint64_t *const*)aaPW, (size_t)nP,
                                   aSkipP, pT->bLeft ? PX_JOIN_LEFT : PX_JOIN_INNER,
                                   pR->nThread, &pRes, &nOut));
  }
  if( rc ) goto done;
  if( nOut>=0xFFFFFFFFu ){
    *pzErr = sqlite3_mprintf("a join of more than 4294967294 rows");
    rc = SQLITE_TOOBIG;
    goto done;
  }
  /* The joined rows (an index per table, twice while they are made), the
  ** hash table, and the extraction's columns over them. */
  rc = joinFits(pR, (double)nOut*(4.0*(iTab + 3) + 8.0*pR->nOutCol)
                    + (double)px_join_table_bytes(pTable) + (double)nP*4*iTab, pzErr);
  if( rc ) goto done;
  aProbe = parBigMalloc((sqlite3_int64)(nOut ? nOut : 1)*4);
  aBuildIdx = parBigMalloc((sqlite3_int64)(nOut ? nOut : 1)*4);
  if( aProbe==0 || aBuildIdx==0 ){ rc = SQLITE_NOMEM; goto done; }
  rc = parRcFromPx(px_join_emit(pRes, aProbe, aBuildIdx, pR->nThread));
  pRes = 0;
  if( rc ) goto done;
  if( pR->aaOrd[iTab] ){
    /* Positions in the index's order, to rows. */
    const uint32_t *aOrd = pR->aaOrd[iTab];
    #pragma omp parallel for num_threads(pR->nThread) schedule(static)
    for(i=0; i<(sqlite3_int64)nOut; i++){
      if( aBuildIdx[i]!=PX_JOIN_NONE ) aBuildIdx[i] = aOrd[aBuildIdx[i]];
    }
  }

  if( pR->pJoin->bOrderMatters && !pT->bOrderKnown ){
    /* SQLite's loop gives no order among the matches of one row: they
    ** must be unique. */
    for(i=1; i<(sqlite3_int64)nOut && aProbe[i]!=aProbe[i-1]; i++){}
    if( i<(sqlite3_int64)nOut ){
      pR->zSqlite = sqlite3_mprintf("several rows of %s match one row and SQLite's loop "
                                    "(%s) does not tell their order", pT->zName, pT->zLoop);
      if( pR->zSqlite==0 ) rc = SQLITE_NOMEM;
      goto done;
    }
  }

  /* The joined rows: each earlier table's row through the probe row; the
  ** same rows as before when each probe row is kept once, in order (a
  ** key of the build table matched by every row, as a fact table's by
  ** its dimensions'). */
  next.n = (sqlite3_int64)nOut;
  next.nTab = iTab+1;
  if( (sqlite3_int64)nOut==nP ){
    int bSame = 1;
    #pragma omp parallel for num_threads(pR->nThread) schedule(static) reduction(&&:bSame)
    for(i=0; i<nP; i++) bSame = bSame && aProbe[i]==(uint32_t)i;
    bSameRows = bSame;
  }
  for(t=0; t<iTab; t++){
    next.abNone[t] = pRows->abNone[t];
    if( bSameRows ){
      next.aaIdx[t] = pRows->aaIdx[t];
      pRows->aaIdx[t] = 0;
      continue;
    }
    next.aaIdx[t] = parBigMalloc((sqlite3_int64)(nOut ? nOut : 1)*4);
    if( next.aaIdx[t]==0 ){ rc = SQLITE_NOMEM; goto done; }
    if( pRows->aaIdx[t] ){
      /* (A NULL-padded row's index stays PX_JOIN_NONE: probe rows are
      ** real rows, and their indices are gathered as they are.) */
      px_gather_u32(pRows->aaIdx[t], aProbe, next.aaIdx[t], nOut, pR->nThread);
    }else{
      memcpy(next.aaIdx[t], aProbe, nOut*4);
    }
  }
  next.aaIdx[iTab] = aBuildIdx;
  if( pT->bLeft && nOut>0 ){
    int bNone = 0;
    #pragma omp parallel for num_threads(pR->nThread) schedule(static) reduction(||:bNone)
    for(i=0; i<(sqlite3_int64)nOut; i++) bNone = bNone || aBuildIdx[i]==PX_JOIN_NONE;
    next.abNone[iTab] = bNone;
  }
  aBuildIdx = 0;
  joinRowsClear(pRows);
  *pRows = next;
  memset(&next, 0, sizeof(next));

done:
  joinRowsClear(&next);
  px_join_result_free(pRes);
  px_join_table_free(pTable);
  parBigFree(aProbe);
  parBigFree(aBuildIdx);
  parBigFree(aSkipB);
  parBigFree(aSkipP);
  for(k=0; k<PAR_JOIN_MAX_TAB*4; k++){
    if( !abBW[k] ) parBigFree(aaBW[k]);
    if( !abPW[k] ) parBigFree(aaPW[k]);
  }
  for(k=0; k<PAR_JOIN_MAX_TAB*2; k++){
    joinCanonFree(&aB[k]);
    joinCanonFree(&aP[k]);
    parColumnClear(&aDict[k]);
  }
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  return rc;
}

/* ---- joins kept ------------------------------------------------------------
**
** A join of tables read from the columnar cache is kept with the batches
** it joined (a reference to each cache entry's batch): a later run whose
** scans return those same batches (same entries: nothing changed, the
** cache says) returns the kept join without joining again.  A batch a
** reference is held to is never freed, so a batch at the same address is
** the same batch.  At most PAR_JOIN_MEMO joins per connection, each of at
** most a sixteenth of cache_mb; par_cache_clear() drops them. */
#define PAR_JOIN_MEMO 4
typedef struct ParJoinMemo ParJoinMemo;
struct ParJoinMemo {
  char *zKey;                        /* the plan's extraction and values */
  int nTab;
  ParBatch *apIn[PAR_JOIN_MAX_TAB];  /* the cache's batches joined */
  ParBatch *pOut;                    /* the join */
  struct ParJoinMemo *pNext;
};

static void joinMemoFree(ParJoinMemo *m){
  int t;
  for(t=0; t<m->nTab; t++) parBatchFree(m->apIn[t]);
  parBatchFree(m->pOut);
  sqlite3_free(m->zKey);
  sqlite3_free(m);
}

void parJoinMemoClear(ParContext *pCtx){
  while( pCtx && pCtx->pJoinMemo ){
    ParJoinMemo *m = pCtx->pJoinMemo;
    pCtx->pJoinMemo = m->pNext;
    joinMemoFree(m);
  }
}

/* The key of pPlan's join run in order aOrd (NULL: SQLite's) (sqlite3_malloc), or NULL:
** the extraction, its values, and what decides the order of the joined
** rows (SQLite's loops, which two SELECTs of one extraction may differ
** in, and the order the tables are joined in). */
static char *joinMemoKey(const ParPlan *pPlan, const int *aOrd){
  char *zParams = parParamsKey(pPlan->pParams);
  sqlite3_str *pStr;
  int t;
  if( zParams==0 ) return 0;
  pStr = sqlite3_str_new(0);
  sqlite3_str_appendf(pStr, "%s\x01%s\x01%d\x01%s\x01%s\x01", pPlan->zExtract, zParams,
                      pPlan->pJoin->bOrderMatters,
                      pPlan->pJoin->zResid ? pPlan->pJoin->zResid : "",
                      pPlan->pJoin->zCalc ? pPlan->pJoin->zCalc : "");
  for(t=0; aOrd && t<pPlan->pJoin->nTab; t++) sqlite3_str_appendf(pStr, "%d,", aOrd[t]);
  for(t=0; t<pPlan->pJoin->nTab; t++){
    sqlite3_str_appendf(pStr, "\x01%s", pPlan->pJoin->aTab[t].zLoop);
  }
  sqlite3_free(zParams);
  return sqlite3_str_finish(pStr);
}

/* The kept join of exactly the batches apB (their owners), or NULL. */
static ParBatch *joinMemoFind(ParContext *pCtx, const char *zKey, ParBatch **apB, int nTab){
  ParJoinMemo *m;
  int t, *aiCol;
  ParBatch *pOut;
  for(m=pCtx->pJoinMemo; m; m=m->pNext){
    if( strcmp(m->zKey, zKey)!=0 ) continue;
    for(t=0; t<nTab && apB[t]->pOwner==m->apIn[t]; t++){}
    if( t<nTab ) return 0;
    aiCol = sqlite3_malloc64(sizeof(int)*(m->pOut->nCol+1));
    if( aiCol==0 ) return 0;
    for(t=0; t<m->pOut->nCol; t++) aiCol[t] = t;
    pOut = parBatchSubset(m->pOut, aiCol, m->pOut->nCol);
    sqlite3_free(aiCol);
    return pOut;
  }
  return 0;
}

/* Keep pOut, the join of apB, when every one of them is a cache entry's. */
static void joinMemoKeep(ParContext *pCtx, const char *zKey, ParBatch **apB, int nTab,
                         ParBatch *pOut){
  ParJoinMemo *m, **pp;
  int t, n;
  for(t=0; t<nTab; t++) if( apB[t]->pOwner==0 ) return;
  if( (double)parBatchBytes(pOut) > (double)parCacheBudgetMb()*1024*1024/16 ) return;
  m = sqlite3_malloc(sizeof(*m));
  if( m==0 ) return;
  memset(m, 0, sizeof(*m));
  m->zKey = sqlite3_mprintf("%s", zKey);
  if( m->zKey==0 ){ sqlite3_free(m); return; }
  m->nTab = nTab;
  for(t=0; t<nTab; t++){
    m->apIn[t] = apB[t]->pOwner;
    __atomic_fetch_add(&m->apIn[t]->nRef, 1, __ATOMIC_RELAXED);   /* see parBatchFree */
  }
  m->pOut = pOut;
  __atomic_fetch_add(&pOut->nRef, 1, __ATOMIC_RELAXED);
  /* First, dropping one of the same key and the oldest past the limit. */
  for(pp=&pCtx->pJoinMemo; *pp; ){
    if( strcmp((*pp)->zKey, zKey)==0 ){
      ParJoinMemo *pOld = *pp;
      *pp = pOld->pNext;
      joinMemoFree(pOld);
    }else{
      pp = &(*pp)->pNext;
    }
  }
  m->pNext = pCtx->pJoinMemo;
  pCtx->pJoinMemo = m;
  for(n=1, pp=&m->pNext; *pp; n++){
    if( n>=PAR_JOIN_MEMO ){
      ParJoinMemo *pOld = *pp;
      *pp = pOld->pNext;
      joinMemoFree(pOld);
    }else{
      pp = &(*pp)->pNext;
    }
  }
}

/* The data versions of every database of db, summed: a commit by another
** connection to any of them changes it.  Not temp's: no other connection
** writes it, and it joins the list when SQLite first opens it (during a
** connection's first scan) - a commit that never came. */
static sqlite3_int64 joinDataVersion(sqlite3 *db){
  sqlite3_stmt *pList = 0;
  sqlite3_int64 v = 0;
  if( sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list WHERE name <> 'temp'",
                         -1, &pList, 0) ){
    return -1;
  }
  while( sqlite3_step(pList)==SQLITE_ROW ){
    char *zSql = sqlite3_mprintf("PRAGMA \"%w\".data_version",
                                 (const char*)sqlite3_column_text(pList, 0));
    v = v*31 + (zSql ? parQueryInt(db, zSql, -1) : -1);
    sqlite3_free(zSql);
  }
  sqlite3_finalize(pList);
  return v;
}

/* pDst = rows aIdx[0..n-1] of pSrc as parColumnGather() makes them,
** except that an index PX_JOIN_NONE gives NULL (a LEFT JOIN's padding). */
static int joinGatherPadded(const ParColumn *pSrc, sqlite3_int64 nSrc, const uint32_t *aIdx,
                            int bMayNone, sqlite3_int64 n, int nThread, ParColumn *pDst){
  sqlite3_int64 i, nNone = 0, nNull = 0;
  uint32_t *aSafe;
  int rc;
  if( aIdx==0 ){
    /* Every row of the table, in order: its arrays, borrowed (the batch
    ** keeps the table's batch alive), and a copy of its NULL bitmap. */
    *pDst = *pSrc;
    pDst->zName = pDst->zDeclType = 0;
    pDst->aNull = 0;
    pDst->bWindow = 1;
    pDst->bBorrowDict = 1;
    if( pSrc->aNull ){
      pDst->aNull = sqlite3_malloc64((sqlite3_uint64)(n+7)/8 + 1);
      if( pDst->aNull==0 ) return SQLITE_NOMEM;
      memcpy(pDst->aNull, pSrc->aNull, (size_t)(n+7)/8);
    }
    return SQLITE_OK;
  }
  if( bMayNone ){
    #pragma omp parallel for num_threads(nThread) schedule(static) reduction(+:nNone)
    for(i=0; i<n; i++) nNone += aIdx[i]==PX_JOIN_NONE;
  }
  if( nNone==0 ) return parColumnGather(pSrc, aIdx, n, nThread, pDst);
  if( nSrc==0 || pSrc->eStore==PAR_COL_NULL ){
    /* Nothing to gather: every row is padding (or NULL anyway). */
    memset(pDst, 0, sizeof(*pDst));
    pDst->eStore = PAR_COL_NULL;
    pDst->nNull = n;
    pDst->aNull = sqlite3_malloc64((sqlite3_uint64)(n+7)/8 + 1);
    if( pDst->aNull==0 ) return SQLITE_NOMEM;
    memset(pDst->aNull, 0xff, (size_t)(n+7)/8 + 1);   /* (as batch.c's: every bit) */
    return SQLITE_OK;
  }
  /* Gather row 0 (any row) for the padding, then mark it NULL. */
  aSafe = parBigMalloc((n ? n : 1)*4);
  if( aSafe==0 ) return SQLITE_NOMEM;
  for(i=0; i<n; i++) aSafe[i] = aIdx[i]==PX_JOIN_NONE ? 0 : aIdx[i];
  rc = parColumnGather(pSrc, aSafe, n, nThread, pDst);
  if( rc==SQLITE_OK && pDst->aNull==0 ){
    pDst->aNull = sqlite3_malloc64((sqlite3_uint64)(n+7)/8);
    if( pDst->aNull==0 ) rc = SQLITE_NOMEM;
    else memset(pDst->aNull, 0, (size_t)(n+7)/8);
  }
  parBigFree(aSafe);
  if( rc ) return rc;
  for(i=0; i<n; i++){
    if( aIdx[i]==PX_JOIN_NONE ){
      pDst->aNull[i>>3] |= (uint8_t)(1<<(i&7));
      if( pDst->aType ){
        pDst->aType[i] = SQLITE_NULL;
        pDst->aVal[i] = 0;
      }
      if( pDst->aInt ) pDst->aInt[i] = 0;
      if( pDst->aReal ) pDst->aReal[i] = 0.0;
      if( pDst->aCode ) pDst->aCode[i] = 0;
    }
  }
  for(i=0; i<n; i++) nNull += (pDst->aNull[i>>3] >> (i&7)) & 1;
  pDst->nNull = nNull;
  return SQLITE_OK;
}

/* The output batch: extraction column j gathered from its table. */
static int joinOutput(JoinRun *pR, const ParPlan *pPlan, JoinRows *pRows, ParBatch **ppOut){
  const ParPlanJoin *pJoin = pR->pJoin;
  ParBatch *pOut = sqlite3_malloc(sizeof(*pOut));
  int j, t, rc = SQLITE_OK;
  if( pOut==0 ) return SQLITE_NOMEM;
  memset(pOut, 0, sizeof(*pOut));
  pOut->nRef = 1;
  pOut->nRow = pOut->nRowAlloc = pRows->n;
  pOut->aCol = sqlite3_malloc64(sizeof(ParColumn)*(pR->nOutCol+1));
  pOut->apKeep = sqlite3_malloc64(sizeof(ParBatch*)*pJoin->nTab);
  if( pOut->aCol==0 || pOut->apKeep==0 ){
    parBatchFree(pOut);
    return SQLITE_NOMEM;
  }
  memset(pOut->aCol, 0, sizeof(ParColumn)*(pR->nOutCol+1));
  for(t=0; t<pJoin->nTab; t++){
    pOut->apKeep[pOut->nKeep++] = pR->apB[t];
    pR->apB[t] = 0;
  }
  pOut->nCol = pR->nOutCol;
  for(j=0; j<pR->nOutCol && rc==SQLITE_OK; j++){
    const ParColumn *pSrc = &pOut->apKeep[pJoin->aOutTab[j]]->aCol[pJoin->aOutCol[j]];
    rc = joinGatherPadded(pSrc, pOut->apKeep[pJoin->aOutTab[j]]->nRow,
                          pRows->aaIdx[pJoin->aOutTab[j]], pRows->abNone[pJoin->aOutTab[j]],
                          pRows->n, pR->nThread, &pOut->aCol[j]);
    if( rc==SQLITE_OK ){
      pOut->aCol[j].zName = sqlite3_mprintf("%s", pSrc->zName ? pSrc->zName : "");
      if( pSrc->zDeclType ) pOut->aCol[j].zDeclType = sqlite3_mprintf("%s", pSrc->zDeclType);
      if( pOut->aCol[j].zName==0 ) rc = SQLITE_NOMEM;
    }
  }
  if( rc ){
    parBatchFree(pOut);
    return rc;
  }
  pOut->nMem = parBatchBytes(pOut);
  *ppOut = pOut;
  return SQLITE_OK;
}

/* The terms over several tables that are no keys (ParPlanJoin.zResid),
** evaluated by SQLite over the joined rows in their order: *ppB becomes
** the rows where they are true, without the columns only they read.  When
** a term fails on some row (a function's error), *pzSqlite: SQLite then
** joins the tables, and fails or not as its loops reach that row. */
static int joinFilter(sqlite3 *db, const ParPlan *pPlan, int nThread, ParBatch **ppB,
                      char **pzSqlite){
  const ParPlanJoin *pJoin = pPlan->pJoin;
  ParBatch *pB = *ppB, *pOut = 0;
  sqlite3_stmt *pStmt = 0;
  uint32_t *aIdx;
  sqlite3_int64 n = 0;
  int rc, j;
  if( pJoin->zResid==0 ) return SQLITE_OK;
  aIdx = parBigMalloc((pB->nRow ? pB->nRow : 1)*4);
  if( aIdx==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, pJoin->zResid, -1, &pStmt, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_bind_pointer(pStmt, sqlite3_bind_parameter_index(pStmt, ":par_rows"), pB,
                              PAR_BATCH_PTR, 0);
  }
  if( rc==SQLITE_OK ) rc = parParamsBind(pStmt, pPlan->pParams);
  while( rc==SQLITE_OK && (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    aIdx[n++] = (uint32_t)sqlite3_column_int64(pStmt, 0);
    rc = SQLITE_OK;
  }
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && rc!=SQLITE_INTERRUPT ){
    *pzSqlite = sqlite3_mprintf("a term over several tables fails on a joined row (%s)",
                                sqlite3_errmsg(db));
    rc = *pzSqlite ? SQLITE_OK : SQLITE_NOMEM;
  }
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_OK && *pzSqlite==0 ){
    pOut = sqlite3_malloc(sizeof(*pOut));
    if( pOut ){
      memset(pOut, 0, sizeof(*pOut));
      pOut->aCol = sqlite3_malloc64(sizeof(ParColumn)*(pB->nCol+1));
    }
    if( pOut==0 || pOut->aCol==0 ){
      rc = SQLITE_NOMEM;
    }else{
      memset(pOut->aCol, 0, sizeof(ParColumn)*(pB->nCol+1));
      pOut->nRef = 1;
      pOut->nRow = pOut->nRowAlloc = n;
      /* The terms' columns go, unless the columns computed next read them. */
      pOut->nCol = pJoin->zCalc ? pB->nCol : pPlan->nExtractCol;
      /* The dictionaries stay the tables' batches': they move along. */
      pOut->apKeep = pB->apKeep;
      pOut->nKeep = pB->nKeep;
      pB->apKeep = 0;
      pB->nKeep = 0;
      for(j=0; j<pOut->nCol && rc==SQLITE_OK; j++){
        const ParColumn *pSrc = &pB->aCol[j];
        rc = parColumnGather(pSrc, aIdx, n, nThread, &pOut->aCol[j]);
        if( rc==SQLITE_OK ){
          pOut->aCol[j].zName = sqlite3_mprintf("%s", pSrc->zName ? pSrc->zName : "");
          if( pSrc->zDeclType ) pOut->aCol[j].zDeclType = sqlite3_mprintf("%s", pSrc->zDeclType);
          if( pOut->aCol[j].zName==0 ) rc = SQLITE_NOMEM;
        }
      }
    }
    if( rc==SQLITE_OK ){
      pOut->nMem = parBatchBytes(pOut);
      parBatchFree(pB);
      *ppB = pOut;
      pOut = 0;
    }
  }
  if( pOut ){
    /* Give the dictionaries back to the batch that frees them. */
    pB->apKeep = pOut->apKeep;
    pB->nKeep = pOut->nKeep;
    pOut->apKeep = 0;
    pOut->nKeep = 0;
    parBatchFree(pOut);
  }
  parBigFree(aIdx);
  return rc;
}

/* The extraction's columns that name several tables (ParPlanJoin.zCalc),
** computed by SQLite over the joined rows in their order, in place of
** their stand-ins; then *ppB without the columns only they (and the
** filter) read.  When one fails on some row, *pzSqlite, as joinFilter. */
static int joinCompute(sqlite3 *db, const ParPlan *pPlan, ParBatch **ppB, char **pzSqlite){
  const ParPlanJoin *pJoin = pPlan->pJoin;
  ParBatch *pB = *ppB, *pCalc = 0;
  sqlite3_stmt *pStmt = 0;
  char *zErr = 0;
  int rc, j;
  if( pJoin->zCalc==0 ) return SQLITE_OK;
  rc = sqlite3_prepare_v2(db, pJoin->zCalc, -1, &pStmt, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_bind_pointer(pStmt, sqlite3_bind_parameter_index(pStmt, ":par_rows"), pB,
                              PAR_BATCH_PTR, 0);
  }
  if( rc==SQLITE_OK ) rc = parParamsBind(pStmt, pPlan->pParams);
  if( rc==SQLITE_OK ) rc = parBatchFromStmt(pStmt, 0, &pCalc, &zErr);
  sqlite3_finalize(pStmt);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && rc!=SQLITE_INTERRUPT ){
    *pzSqlite = sqlite3_mprintf("a column over several tables fails on a joined row (%s)",
                                zErr ? zErr : sqlite3_errmsg(db));
    rc = *pzSqlite ? SQLITE_OK : SQLITE_NOMEM;
  }
  sqlite3_free(zErr);
  if( rc==SQLITE_OK && *pzSqlite==0 ){
    if( pCalc->nCol!=pJoin->nCalc || pCalc->nRow!=pB->nRow ){
      rc = SQLITE_INTERNAL;
    }else{
      for(j=0; j<pJoin->nCalc; j++){
        /* Swap: each batch frees the column it then holds. */
        ParColumn *pDst = &pB->aCol[pJoin->aCalcCol[j]], tmp = *pDst;
        *pDst = pCalc->aCol[j];
        pCalc->aCol[j] = tmp;
      }
      for(j=pPlan->nExtractCol; j<pB->nCol; j++) parColumnClear(&pB->aCol[j]);
      pB->nCol = pPlan->nExtractCol;
      pB->nMem = parBatchBytes(pB);
    }
  }
  parBatchFree(pCalc);
  return rc;
}

/* A join whose order does not matter run in another order than SQLite's
** loops: the plan with its tables reordered and each key given to the
** later of its two tables there (a key compares both sides alike: its
** collation and affinity are the term's). */
typedef struct JoinOrder {
  ParPlanJoin join;
  ParJoinTab aTab[PAR_JOIN_MAX_TAB];
  ParJoinKey aKey[PAR_JOIN_MAX_TAB*PAR_JOIN_MAX_KEY];
  int *aOutTab;
  int aOrd[PAR_JOIN_MAX_TAB];      /* new position -> plan position */
} JoinOrder;

/* The order to join pR's tables in when the order of the joined rows does
** not matter: the largest table probes (read once, never hashed), then,
** of the tables a key links to those joined so far, the smallest is built
** next.  Returns 0 (pO->aOrd unset) to keep SQLite's order: a LEFT JOIN,
** SQLite's order already that one, or a table with more keys than the
** kernel takes in the new order. */
static int joinChooseOrder(JoinRun *pR, JoinOrder *pO){
  const ParPlanJoin *pJ = pR->pJoin;
  int n = pJ->nTab, i, t, k, aPos[PAR_JOIN_MAX_TAB], aDone[PAR_JOIN_MAX_TAB];
  int aNKey[PAR_JOIN_MAX_TAB], bSame = 1;
  if( pJ->bOrderMatters || n<2 ) return 0;
  for(t=0; t<n; t++) if( pJ->aTab[t].bLeft ) return 0;
  memset(aDone, 0, sizeof(aDone));
  for(i=0; i<n; i++){
    int best = -1;
    for(t=0; t<n; t++){
      int bLinked = i==0;
      if( aDone[t] ) continue;
      /* linked: a key of t to a table done, or of a table done to t */
      for(k=0; k<pJ->aTab[t].nKey && !bLinked; k++) bLinked = aDone[pJ->aTab[t].aKey[k].iProbeTab];
      for(k=0; k<n && !bLinked; k++){
        int m;
        if( !aDone[k] ) continue;
        for(m=0; m<pJ->aTab[k].nKey && !bLinked; m++) bLinked = pJ->aTab[k].aKey[m].iProbeTab==t;
      }
      if( !bLinked ) continue;
      if( best<0 || (i==0 ? pR->apB[t]->nRow > pR->apB[best]->nRow
                          : pR->apB[t]->nRow < pR->apB[best]->nRow) ){
        best = t;
      }
    }
    if( best<0 ) return 0;
    aDone[best] = 1;
    pO->aOrd[i] = best;
    aPos[best] = i;
    bSame &= best==i;
  }
  if( bSame ) return 0;
  memset(aNKey, 0, sizeof(aNKey));
  for(t=0; t<n; t++){
    for(k=0; k<pJ->aTab[t].nKey; k++){
      int p = pJ->aTab[t].aKey[k].iProbeTab;
      aNKey[aPos[t]>aPos[p] ? aPos[t] : aPos[p]]++;
    }
  }
  for(i=1; i<n; i++) if( aNKey[i]>PAR_JOIN_MAX_KEY || aNKey[i]==0 ) return 0;
  return 1;
}

/* Run pR's join in the order pO->aOrd (joinChooseOrder) instead: the plan
** and the tables' batches reordered. */
static int joinReorder(JoinRun *pR, JoinOrder *pO){
  const ParPlanJoin *pJ = pR->pJoin;
  ParBatch *apB[PAR_JOIN_MAX_TAB];
  int n = pJ->nTab, i, t, k, j, aPos[PAR_JOIN_MAX_TAB], nKeyUsed = 0;
  for(i=0; i<n; i++) aPos[pO->aOrd[i]] = i;
  pO->aOutTab = sqlite3_malloc64(sizeof(int)*(pR->nOutCol+1));
  if( pO->aOutTab==0 ) return SQLITE_NOMEM;
  for(j=0; j<pR->nOutCol; j++) pO->aOutTab[j] = aPos[pJ->aOutTab[j]];
  pO->join = *pJ;
  pO->join.aTab = pO->aTab;
  pO->join.aOutTab = pO->aOutTab;
  for(i=0; i<n; i++){
    pO->aTab[i] = pJ->aTab[pO->aOrd[i]];
    pO->aTab[i].nKey = 0;
    pO->aTab[i].aKey = &pO->aKey[nKeyUsed];
    nKeyUsed += PAR_JOIN_MAX_KEY;
  }
  for(t=0; t<n; t++){
    for(k=0; k<pJ->aTab[t].nKey; k++){
      const ParJoinKey *pK = &pJ->aTab[t].aKey[k];
      int p = pK->iProbeTab;
      ParJoinTab *pT = &pO->aTab[aPos[t]>aPos[p] ? aPos[t] : aPos[p]];
      ParJoinKey *pNew = &pT->aKey[pT->nKey++];
      *pNew = *pK;
      if( aPos[t]>aPos[p] ){
        pNew->iProbeTab = aPos[p];
      }else{
        pNew->iProbeTab = aPos[t];
        pNew->iProbeCol = pK->iBuildCol;
        pNew->iBuildCol = pK->iProbeCol;
      }
    }
  }
  for(i=0; i<n; i++) apB[i] = pR->apB[pO->aOrd[i]];
  for(i=0; i<n; i++) pR->apB[i] = apB[i];
  pR->pJoin = &pO->join;
  return SQLITE_OK;
}

/* The rows of pT, a subquery in FROM: its own plan run by the kernels
** (exec.c), its result as a batch of the columns the join reads
** (pT->aSubCol).  The last operator's batch itself where the plan only
** picks its columns (aDirect), else the final SQL's rows over it.  Sets
** *pzSqlite (rc SQLITE_OK, *ppB NULL) when the plan finds at run time that
** SQLite must run the subquery: then SQLite reads the join. */
static int joinSubRows(ParContext *pCtx, sqlite3 *db, const ParJoinTab *pT,
                       const ParStamp *pStamp, ParBatch **ppB, char **pzSqlite, char **pzErr){
  const ParPlan *pSub = pT->pSub;
  ParExec x;
  ParBatch *pLast, *pB = 0;
  int rc, j, *aiCol = 0;
  *ppB = 0;
  rc = parExecRun(pCtx, db, pSub, pStamp, &x, pzErr);
  if( rc ) return rc;
  if( x.bNative ){
    *pzSqlite = sqlite3_mprintf("SQLite runs subquery %s (found at run time)", pT->zName);
    parExecClear(&x);
    return *pzSqlite ? SQLITE_OK : SQLITE_NOMEM;
  }
  pLast = x.pOut ? x.pOut : x.pIn;
  aiCol = sqlite3_malloc64(sizeof(int)*(pT->pScan->nExtractCol+1));
  if( aiCol==0 ){
    rc = SQLITE_NOMEM;
  }else if( pSub->aDirect ){
    for(j=0; j<pT->pScan->nExtractCol; j++) aiCol[j] = pSub->aDirect[pT->aSubCol[j]];
    pB = parBatchSubset(pLast, aiCol, pT->pScan->nExtractCol);
    if( pB==0 ) rc = SQLITE_NOMEM;
  }else{
    /* The final SQL over the result: the subquery's rows, all columns. */
    sqlite3_stmt *pStmt = 0;
    ParBatch *pAll = 0;
    rc = parExecFinalStmt(db, pSub, pLast, &pStmt);
    if( rc==SQLITE_OK ){
      rc = parBatchFromStmt(pStmt, 0, &pAll, pzErr);
    }else{
      *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    }
    sqlite3_finalize(pStmt);
    if( rc==SQLITE_OK ){
      for(j=0; j<pT->pScan->nExtractCol; j++) aiCol[j] = pT->aSubCol[j];
      pB = parBatchSubset(pAll, aiCol, pT->pScan->nExtractCol);
      if( pB==0 ) rc = SQLITE_NOMEM;
    }
    parBatchFree(pAll);
  }
  if( pB && pLast!=x.pIn ){
    /* The result's text may be the scan's dictionaries: keep that too. */
    pB->apKeep = sqlite3_malloc64(sizeof(ParBatch*));
    if( pB->apKeep==0 ){
      rc = SQLITE_NOMEM;
    }else{
      pB->apKeep[pB->nKeep++] = x.pIn;
      __atomic_fetch_add(&x.pIn->nRef, 1, __ATOMIC_RELAXED);
    }
  }
  sqlite3_free(aiCol);
  parExecClear(&x);
  if( rc ){
    parBatchFree(pB);
    return rc;
  }
  *ppB = pB;
  return SQLITE_OK;
}

/* A table is read by rowid lookups where the rows probing it are fewer
** than its rowid span divided by this. */
#define PAR_JOIN_LOOKUP_RATIO 8

/* Compare two int64 (qsort). */
static int joinCmpI64(const void *a, const void *b){
  sqlite3_int64 x = *(const sqlite3_int64*)a, y = *(const sqlite3_int64*)b;
  return x<y ? -1 : x>y;
}

/* The plan of pScan's extraction with "AND key IN (SELECT value FROM
** json_each(zKeys))" added (zKeys bound as one more parameter, so that
** the read is cached under its keys like any other), or NULL when out of
** memory. */
static ParPlan *joinLookupPlan(sqlite3 *db, const ParPlan *pScan, const char *zKey,
                               const char *zKeys){
  ParPlan *p = sqlite3_malloc(sizeof(*p));
  int n = pScan->pParams ? pScan->pParams->n : 0, i, bNoMem = 0;
  sqlite3_stmt *pStmt = 0;
  if( p==0 ) return 0;
  memset(p, 0, sizeof(*p));
  p->nRef = 1;
  p->pParams = parParamsNew(n+1);
  if( p->pParams ){
    for(i=0; i<n; i++){
      const sqlite3_value *v = pScan->pParams->apVal[i];
      p->pParams->apVal[i] = v ? sqlite3_value_dup(v) : 0;
      if( v && p->pParams->apVal[i]==0 ) bNoMem = 1;
    }
    if( sqlite3_prepare_v2(db, "SELECT ?1", -1, &pStmt, 0)==SQLITE_OK
     && sqlite3_bind_text(pStmt, 1, zKeys, -1, SQLITE_STATIC)==SQLITE_OK
     && sqlite3_step(pStmt)==SQLITE_ROW ){
      p->pParams->apVal[n] = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
    }
    sqlite3_finalize(pStmt);
  }
  p->zExtractCols = sqlite3_mprintf("%s", pScan->zExtractCols);
  p->zExtractFrom = sqlite3_mprintf("%s", pScan->zExtractFrom);
  p->zExtractWhere = pScan->zExtractWhere
    ? sqlite3_mprintf("(%s) AND %s IN (SELECT value FROM json_each(:par_p%d))",
                      pScan->zExtractWhere, zKey, n+1)
    : sqlite3_mprintf("%s IN (SELECT value FROM json_each(:par_p%d))", zKey, n+1);
  p->zExtract = sqlite3_mprintf("SELECT %s FROM %s WHERE %s", p->zExtractCols,
                                p->zExtractFrom, p->zExtractWhere);
  p->nExtractCol = pScan->nExtractCol;
  p->azExtractExpr = sqlite3_malloc64(sizeof(char*)*(pScan->nExtractExpr+1));
  if( p->azExtractExpr ){
    for(i=0; i<pScan->nExtractExpr; i++){
      p->azExtractExpr[i] = sqlite3_mprintf("%s", pScan->azExtractExpr[i]);
      if( p->azExtractExpr[i]==0 ) bNoMem = 1;
      p->nExtractExpr = i+1;
    }
  }
  if( bNoMem || p->pParams==0 || p->pParams->apVal[n]==0 || p->zExtractCols==0
   || p->zExtractFrom==0 || p->zExtractWhere==0 || p->zExtract==0 || p->azExtractExpr==0 ){
    parPlanFree(p);
    return 0;
  }
  return p;
}

/* The rows of table iTab (bRowidKey) that the rows joined so far can
** match: "WHERE (its terms) AND key IN (the probe keys)", SQLite's rowid
** lookups, read and cached as any scan (extract.c).  Only where those
** rows are few beside the table's rowid span nSpan (PAR_JOIN_LOOKUP_RATIO)
** and every probe key is an INTEGER or NULL (a REAL or TEXT one may equal
** a rowid under the key's numeric comparison: the whole table then).
** *ppB stays NULL when not done. */
static int joinLookup(JoinRun *pR, int iTab, const JoinRows *pRows, sqlite3_int64 nSpan,
                      const ParStamp *pStamp, ParBatch **ppB, char **pzErr){
  const ParJoinTab *pT = &pR->pJoin->aTab[iTab];
  const ParJoinKey *pK = &pT->aKey[0];
  const ParBatch *pProbe = pR->apB[pK->iProbeTab];
  const ParColumn *pCol;
  const uint32_t *aIdx = pRows->aaIdx[pK->iProbeTab];
  const ParPlan *pScan = pT->pScan;
  ParPlan *pLook;
  sqlite3_int64 i, n = 0;
  sqlite3_int64 *aKey = 0;
  sqlite3_str *pStr = 0;
  char *zKeys = 0, *zWhy = 0;
  int rc = SQLITE_OK, eMode;
  *ppB = 0;
  if( pProbe==0 ) return SQLITE_OK;
  pCol = &pProbe->aCol[pK->iProbeCol];
  if( nSpan<0 || pRows->n >= nSpan/PAR_JOIN_LOOKUP_RATIO ) return SQLITE_OK;
  if( pCol->eStore!=PAR_COL_INT && pCol->eStore!=PAR_COL_MIXED && pCol->eStore!=PAR_COL_NULL ){
    return SQLITE_OK;
  }
  aKey = sqlite3_malloc64(sizeof(sqlite3_int64)*(pRows->n+1));
  if( aKey==0 ) return SQLITE_NOMEM;
  for(i=0; i<pRows->n; i++){
    sqlite3_int64 r = aIdx ? (sqlite3_int64)aIdx[i] : i;
    if( aIdx && aIdx[i]==PX_JOIN_NONE ) continue;
    if( pCol->eStore==PAR_COL_NULL || joinIsNull(pCol, r) ) continue;
    if( pCol->eStore==PAR_COL_INT ){
      aKey[n++] = pCol->aInt[r];
    }else if( pCol->aType[r]==SQLITE_INTEGER ){
      aKey[n++] = (sqlite3_int64)pCol->aVal[r];
    }else{
      sqlite3_free(aKey);
      return SQLITE_OK;                     /* a REAL, TEXT or BLOB key */
    }
  }
  qsort(aKey, (size_t)n, sizeof(aKey[0]), joinCmpI64);
  pStr = sqlite3_str_new(0);
  sqlite3_str_appendchar(pStr, 1, '[');
  for(i=0; i<n; i++){
    if( i>0 && aKey[i]==aKey[i-1] ) continue;
    sqlite3_str_appendf(pStr, "%s%lld", sqlite3_str_length(pStr)>1 ? "," : "", aKey[i]);
  }
  sqlite3_str_appendchar(pStr, 1, ']');
  sqlite3_free(aKey);
  zKeys = sqlite3_str_finish(pStr);
  pLook = zKeys ? joinLookupPlan(pR->db, pScan, pScan->azExtractExpr[pK->iBuildCol], zKeys) : 0;
  sqlite3_free(zKeys);
  if( pLook==0 ) return SQLITE_NOMEM;
  rc = parExtract(pR->pCtx, pR->db, pLook, pStamp, ppB, &eMode, &zWhy, pzErr);
  sqlite3_free(zWhy);
  parPlanFree(pLook);
  return rc;
}

/* The rows of table iTab in the order of the index SQLite's loop walks
** (ParJoinTab.aOrd: its key columns, then the rowid, which the rows,
** read in rowid order, keep among equal keys: the sort is stable):
** pR->aaOrd[iTab], left NULL when they are in that order already.  Sets
** pR->zSqlite when a key of a collation the planner could not tell meets
** text. */
static int joinIndexPerm(JoinRun *pR, int iTab){
  const ParJoinTab *pT = &pR->pJoin->aTab[iTab];
  ParBatch *pB = pR->apB[iTab];
  sqlite3_int64 n = pB->nRow, i;
  uint64_t *aaWord[2*PAR_SORT_MAX_ORD];
  uint32_t *aPerm = 0;
  int nWord = 0, w, rc, bSorted = 1;
  if( parSortUnknownText(pB, pT->aOrd, pT->nOrd) ){
    pR->zSqlite = sqlite3_mprintf("text under a collation not known here orders the "
                                  "index SQLite walks over %s", pT->zName);
    return pR->zSqlite ? SQLITE_OK : SQLITE_NOMEM;
  }
  rc = parSortWords(pB, pT->aOrd, pT->nOrd, 0, (size_t)n, pR->nThread, aaWord, &nWord);
  if( rc==SQLITE_OK ){
    /* Read in that order already (a table loaded in its key's order)? */
    #pragma omp parallel for num_threads(pR->nThread) schedule(static) private(w) \
            reduction(&&:bSorted)
    for(i=1; i<n; i++){
      int c = 0;
      for(w=0; w<nWord && c==0; w++){
        c = aaWord[w][i-1]<aaWord[w][i] ? -1 : aaWord[w][i-1]>aaWord[w][i];
      }
      bSorted = bSorted && c<=0;
    }
  }
  if( rc==SQLITE_OK && !bSorted ){
    rc = parSortPack(aaWord, &nWord, (size_t)n, pR->nThread);
    if( rc==SQLITE_OK && (aPerm = parBigMalloc((n ? n : 1)*4))==0 ) rc = SQLITE_NOMEM;
    if( rc==SQLITE_OK ){
      rc = parRcFromPx(px_sort_words_perm((const uint64_t *const*)aaWord, nWord, (size_t)n,
                                          aPerm, 0, pR->nThread));
    }
    if( rc==SQLITE_OK ){
      pR->aaOrd[iTab] = aPerm;
      aPerm = 0;
    }
  }
  parSortWordsFree(aaWord, nWord);
  parBigFree(aPerm);
  return rc;
}

int parJoinRun(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, const ParStamp *pStamp,
               ParJoinOut *pO, char **pzErr){
  const ParPlanJoin *pJoin = pPlan->pJoin;
  JoinRun r;
  JoinRows rows;
  sqlite3_int64 v0, nMax = 0;
  double t0 = parNowMs();
  char *zMemo = 0;
  int i, rc = SQLITE_OK, nCached = 0, nPar = 0, bReorder, bSub = 0, nDefer = 0;
  sqlite3_int64 aSpan[PAR_JOIN_MAX_TAB];   /* a table read when its turn
                                           ** comes: its rowid span, else 0 */
  ParStop stop;
  ParBatch *apIn[PAR_JOIN_MAX_TAB];  /* the tables' batches, in plan order */
  JoinOrder ord;

  memset(&r, 0, sizeof(r));
  memset(&rows, 0, sizeof(rows));
  memset(&ord, 0, sizeof(ord));
  r.pCtx = pCtx;
  r.db = db;
  r.pJoin = pJoin;
  r.nOutCol = pPlan->nExtractCol + pJoin->nResidCol;
  pO->pOut = 0;
  pO->zSqlite = 0;
  pO->eMode = PAR_EXTRACT_SERIAL;
  pO->bKept = 0;
  pO->bReordered = 0;
  pO->nLookup = 0;
  v0 = joinDataVersion(db);
  memset(aSpan, 0, sizeof(aSpan));
  for(i=0; i<pJoin->nTab && rc==SQLITE_OK && r.zSqlite==0; i++){
    char *zWhy = 0;
    int eMode = PAR_EXTRACT_PARALLEL;
    if( i>0 && pJoin->nTab==2 && pJoin->aTab[i].bRowidKey && r.apB[0]
     && (aSpan[i] = parPlanRowidSpan(db, pJoin->aTab[i].pScan))
        > PAR_JOIN_LOOKUP_RATIO*r.apB[0]->nRow
     && !parExtractHasEntry(pCtx, db, pJoin->aTab[i].pScan) ){
      /* Read when its turn comes: maybe only the rows the probes name
      ** (the outer table's rows are few beside it: SQLite's order then,
      ** not the largest table probing).  Two tables only: with more, the
      ** rows probing it are not known before the joins ahead of it, and
      ** the tables are better read together, each in parallel. */
      nDefer++;
      continue;
    }else{
      aSpan[i] = 0;
    }
    if( pJoin->aTab[i].pSub ){
      rc = joinSubRows(pCtx, db, &pJoin->aTab[i], pStamp, &r.apB[i], &r.zSqlite, pzErr);
      bSub = 1;
    }else{
      rc = parExtract(pCtx, db, pJoin->aTab[i].pScan, pStamp, &r.apB[i], &eMode, &zWhy, pzErr);
    }
    sqlite3_free(zWhy);
    if( rc==SQLITE_OK && r.apB[i] ){
      nCached += eMode==PAR_EXTRACT_CACHED;
      nPar += eMode==PAR_EXTRACT_PARALLEL || eMode==PAR_EXTRACT_COUNTED;
      if( r.apB[i]->nRow>nMax ) nMax = r.apB[i]->nRow;
    }
  }
  pO->eMode = nCached==pJoin->nTab ? PAR_EXTRACT_CACHED
            : nPar ? PAR_EXTRACT_PARALLEL : PAR_EXTRACT_SERIAL;
  pO->msScan = parNowMs() - t0;
  if( rc || r.zSqlite ) goto done;
  if( v0<0 || joinDataVersion(db)!=v0 ){
    r.zSqlite = sqlite3_mprintf("a commit came while the tables were read");
    goto done;
  }

  t0 = parNowMs();
  /* (SQLite's order where a table waits for its probe keys.) */
  bReorder = nDefer ? 0 : joinChooseOrder(&r, &ord);
  /* (Not with a subquery: its rows are made anew by each run.) */
  zMemo = bSub || nDefer ? 0 : joinMemoKey(pPlan, bReorder ? ord.aOrd : 0);
  if( zMemo && (pO->pOut = joinMemoFind(pCtx, zMemo, r.apB, pJoin->nTab))!=0 ){
    pO->msJoin = parNowMs() - t0;
    pO->bKept = 1;
    goto done;
  }
  r.nThread = parThreadsFor(pCtx, nMax);
  for(i=0; i<pJoin->nTab; i++) apIn[i] = r.apB[i];
  if( bReorder ){
    /* The order of the joined rows does not matter: the largest table
    ** probes, the smaller ones are built. */
    rc = joinReorder(&r, &ord);
    if( rc ) goto done;
    pO->bReordered = 1;
  }
  rows.n = r.apB[0]->nRow;
  rows.nTab = 1;
  parStopBegin(db, &stop);
  if( pJoin->aTab[0].nOrd ){
    /* The outer loop walks an index: its rows in the index's order. */
    rc = joinIndexPerm(&r, 0);
    rows.aaIdx[0] = r.aaOrd[0];
    r.aaOrd[0] = 0;
  }
  for(i=1; i<pJoin->nTab && rc==SQLITE_OK && r.zSqlite==0; i++){
    if( aSpan[i]>0 ){
      /* Its rows: by rowid lookups of the probe keys when few, else all
      ** (the data version is checked again below). */
      char *zWhy = 0;
      int eMode;
      rc = joinLookup(&r, i, &rows, aSpan[i], pStamp, &r.apB[i], pzErr);
      if( rc==SQLITE_OK && r.apB[i] ){
        pO->nLookup++;
      }else if( rc==SQLITE_OK ){
        rc = parExtract(pCtx, db, pJoin->aTab[i].pScan, pStamp, &r.apB[i], &eMode, &zWhy,
                        pzErr);
        sqlite3_free(zWhy);
      }
      if( rc ) break;
      apIn[i] = r.apB[i];
    }
    if( pJoin->aTab[i].nOrd ){
      rc = joinIndexPerm(&r, i);
      if( rc || r.zSqlite ) break;
    }
    rc = joinStep(&r, i, &rows, pzErr);
  }
  parStopEnd(&stop);
  if( rc==SQLITE_OK && r.zSqlite==0 && nDefer && joinDataVersion(db)!=v0 ){
    r.zSqlite = sqlite3_mprintf("a commit came while the tables were read");
  }
  if( rc==SQLITE_OK && r.zSqlite==0 ){
    /* (joinOutput takes the tables' batches: their owners first.) */
    for(i=0; i<pJoin->nTab; i++) __atomic_fetch_add(&apIn[i]->nRef, 1, __ATOMIC_RELAXED);
    rc = joinOutput(&r, pPlan, &rows, &pO->pOut);
    if( rc==SQLITE_OK ) rc = joinFilter(db, pPlan, r.nThread, &pO->pOut, &r.zSqlite);
    if( rc==SQLITE_OK && r.zSqlite==0 ) rc = joinCompute(db, pPlan, &pO->pOut, &r.zSqlite);
    if( r.zSqlite ){
      parBatchFree(pO->pOut);
      pO->pOut = 0;
    }
    if( rc==SQLITE_OK && zMemo && r.zSqlite==0 ){
      joinMemoKeep(pCtx, zMemo, apIn, pJoin->nTab, pO->pOut);
    }
    for(i=0; i<pJoin->nTab; i++) parBatchFree(apIn[i]);
  }
  pO->msJoin = parNowMs() - t0;

done:
  sqlite3_free(ord.aOutTab);
  sqlite3_free(zMemo);
  joinRowsClear(&rows);
  for(i=0; i<pJoin->nTab; i++){
    parBatchFree(r.apB[i]);
    parBigFree(r.aaOrd[i]);
  }
  sqlite3_finalize(r.pNum);
  if( rc ){
    sqlite3_free(r.zSqlite);
    parBatchFree(pO->pOut);
    pO->pOut = 0;
    return rc;
  }
  pO->zSqlite = r.zSqlite;
  return SQLITE_OK;
}
