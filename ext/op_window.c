/*
** op_window.c: the window operator: window function calls over a batch,
** as ParPlanWindow (plan.h) describes and plan_window.c plans.
**
**   SELECT id, sum(v) OVER (PARTITION BY k ORDER BY ts ROWS UNBOUNDED PRECEDING)
**     FROM t;                                           -- running sums
**   SELECT id, rank() OVER (ORDER BY score DESC) FROM t; -- ranks
**
** How it works, window by window from the innermost (the last in SQLite's
** order, plan_window.c) to aWin[0]:
**  1. Sort: the rows, in the order the window before left them (reading
**     order for the first), sorted stably by the window's PARTITION BY and
**     ORDER BY keys (batch.h: parColumnKeys, equal keys for values SQLite
**     finds equal under the collations; kernels/sort.h, LSD radix sort).
**  2. Heads: a position starts a partition when a PARTITION BY key
**     differs from the position before, a peer group when that or an
**     ORDER BY key does.
**  3. Values, partition by partition (many at once, one thread each): the
**     ranking functions from positions and peer groups; lag and lead by
**     offset within the partition; first_value, last_value and nth_value
**     from the frame's bounds; aggregates as SQLite steps them (agg.c):
**     a frame that starts at UNBOUNDED PRECEDING only adds rows, in order;
**     one whose start moves and whose end is CURRENT ROW or FOLLOWING
**     removes the rows that leave before it adds the next (window.c:
**     AGGINVERSE after RETURN_ROW), which is SQLite's own sequence, so
**     REAL sums come out bit for bit.  Other frames (a start FOLLOWING, an
**     end PRECEDING) and min/max over a moving start run only where the
**     order of additions and removals cannot show: counts, sums of
**     integers too small to round or overflow, min/max of integers (a
**     monotonic queue); else the SELECT runs natively.
** Results are written at each row's place in the extraction batch; the
** result batch gathers the view's columns in aWin[0]'s order, cut by
** LIMIT and OFFSET.  Parallelism: the sorts and gathers over all rows; the
** values across partitions (one large partition runs on one thread).
*/
#include "parext.h"
#include "op_window.h"
#include "op_sort.h"
#include "agg.h"
#include "sort.h"
#include "gather.h"
#include "keys.h"

#include <string.h>

/* One window's rows, sorted: aPerm[j] is the row at position j; aHead[j]
** bit 0: position j starts a partition, bit 1: a peer group. */
typedef struct WinOrder {
  uint32_t *aPerm;
  uint8_t *aHead;
  uint32_t *aPart;       /* positions where partitions start, then n */
  size_t nPart;
  int bIdentity;         /* aPerm is 0, 1, 2, ... (no window sorted yet) */
  uint64_t *aRK1, *aRK2; /* a RANGE frame with an offset over text or blob
                         ** values: the ORDER BY term's sort keys by row
                         ** (ascending, its collation), else NULL */
} WinOrder;

/* Result column of one call: MIXED (aggregates and value functions),
** INTEGER (ranks) or REAL (percent_rank, cume_dist), at each row's place. */
static int winColumn(ParColumn *pCol, size_t n, int eStore){
  size_t m = n ? n : 1;
  memset(pCol, 0, sizeof(*pCol));
  pCol->eStore = eStore;
  if( eStore==PAR_COL_INT ){
    pCol->aInt = parBigMalloc((sqlite3_int64)m*8);
    return pCol->aInt ? SQLITE_OK : SQLITE_NOMEM;
  }
  if( eStore==PAR_COL_REAL ){
    pCol->aReal = parBigMalloc((sqlite3_int64)m*8);
    return pCol->aReal ? SQLITE_OK : SQLITE_NOMEM;
  }
  pCol->aType = parBigMalloc((sqlite3_int64)m);
  pCol->aVal = parBigMalloc((sqlite3_int64)m*8);
  return pCol->aType && pCol->aVal ? SQLITE_OK : SQLITE_NOMEM;
}

/* Text under a collation the planner could not tell: SQLite's order and
** equality are not known here. */
static int winUnknownText(const ParBatch *pIn, int iCol, int eColl){
  const ParDict *pD;
  uint32_t e;
  if( eColl>=0 || iCol<0 ) return 0;
  pD = pIn->aCol[iCol].pDict;
  for(e=0; pD && e<pD->nEntry; e++) if( pD->aKind[e]==SQLITE_TEXT ) return 1;
  return 0;
}

/* Free word array w of winSort's aaG (its own, or parColumnKeys()'s). */
#define WIN_FREE_WORD(w) \
  do{ if( aSmall[w] ) sqlite3_free(aaG[w]); else parBigFree(aaG[w]); \
      aaG[w] = 0; aSmall[w] = 0; }while(0)

/* The greatest of n words (0 for none). */
static uint64_t winMaxWord(const uint64_t *a, size_t n, int nThread){
  uint64_t mx = 0;
  size_t j;
  #pragma omp parallel for num_threads(nThread) schedule(static) reduction(max:mx)
  for(j=0; j<n; j++) if( a[j]>mx ) mx = a[j];
  return mx;
}

/* Sort the positions of pO->aPerm (the order so far) stably by the keys
** aKey[0..nKey-1], then mark partition (the first nPart keys) and peer
** heads, and list where partitions start.  The keys' words, in the order
** so far, are packed (kernels/keys.h): the PARTITION BY words into
** few, the ORDER BY words into few, and the two into one word when they
** fit, whose sorted copy then tells the heads; else each sorted word is
** gathered to compare neighbours. */
static int winSort(ParBatch *pIn, const ParSortKey *aKey, int nKey, int nPart, size_t n,
                   int nThread, WinOrder *pO){
  uint64_t *aaG[2*2*PAR_ROWS_MAX], *aTop = 0, *aTmp = 0;
  uint8_t aSmall[2*2*PAR_ROWS_MAX];    /* aaG[w] is parColumnKeys()'s own */
  uint32_t *aPos = 0, *aNew = 0;
  int nPw = 0, nW = 0, nP = 0, nO = 0, k, w, rc = SQLITE_OK, wO = 0, bOne = 0;
  size_t j;

  memset(aaG, 0, sizeof(aaG));
  memset(aSmall, 0, sizeof(aSmall));
  for(k=0; k<nKey && rc==SQLITE_OK; k++){
    uint64_t *a1 = 0, *a2 = 0;
    int m;
    rc = parColumnKeys(&pIn->aCol[aKey[k].iCol], (sqlite3_int64)n,
                       aKey[k].eColl>=0 ? aKey[k].eColl : PAR_COLL_BINARY, aKey[k].flags,
                       nThread, &a1, &a2);
    for(m=0; m<2; m++){
      uint64_t *a = m ? a2 : a1;
      if( a==0 ) continue;
      if( rc==SQLITE_OK && pO->bIdentity ){
        /* In reading order already: the words themselves. */
        aSmall[nW] = 1;
        aaG[nW++] = a;
        if( k<nPart ) nPw++;
        continue;
      }
      if( rc==SQLITE_OK ){
        aaG[nW] = parBigMalloc((sqlite3_int64)(n ? n : 1)*8);
        if( aaG[nW]==0 ) rc = SQLITE_NOMEM;
        else px_gather_u64(a, pO->aPerm, aaG[nW], n, nThread);
        nW++;
        if( k<nPart ) nPw++;
      }
      sqlite3_free(a);
    }
  }
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  /* Pack: PARTITION BY words to aaG[0..nP), ORDER BY words after them. */
  if( rc==SQLITE_OK && nPw>0 ){
    rc = parRcFromPx(px_keys_pack((const uint64_t *const*)aaG, nPw, n, aaG, &nP, nThread));
  }else{
    nP = nPw;
  }
  if( rc==SQLITE_OK && nW-nPw>0 ){
    rc = parRcFromPx(px_keys_pack((const uint64_t *const*)(aaG+nPw), nW-nPw, n, aaG+nPw, &nO,
                                  nThread));
  }else{
    nO = nW - nPw;
  }
  if( rc==SQLITE_OK ){
    for(w=nP; w<nPw; w++){ WIN_FREE_WORD(w); }
    for(w=nPw+nO; w<nW; w++){ WIN_FREE_WORD(w); }
    for(w=0; w<nO; w++){
      aaG[nP+w] = aaG[nPw+w];
      aSmall[nP+w] = aSmall[nPw+w];
      if( nP!=nPw ){ aaG[nPw+w] = 0; aSmall[nPw+w] = 0; }
    }
    nW = nP + nO;
  }
  if( rc==SQLITE_OK && nP==1 && nO==1 ){
    /* One word when both fit: the partition's bits above the order's. */
    uint64_t mP = winMaxWord(aaG[0], n, nThread), mO = winMaxWord(aaG[1], n, nThread);
    int wP = 0;
    while( wP<64 && (mP>>wP) ) wP++;
    while( wO<64 && (mO>>wO) ) wO++;
    if( wP + wO<=64 ){
      uint64_t *a0 = aaG[0], *a1 = aaG[1];
      #pragma omp parallel for num_threads(nThread) schedule(static)
      for(j=0; j<n; j++) a0[j] = (wO<64 ? a0[j]<<wO : 0) | a1[j];
      WIN_FREE_WORD(1);
      nW = 1;
      bOne = 1;
    }
  }else if( rc==SQLITE_OK && nW==1 ){
    bOne = 1;
    wO = nP==1 ? 0 : 64;       /* the word is the partition's, or the order's */
  }
  if( rc==SQLITE_OK ){
    aPos = parBigMalloc((sqlite3_int64)(n ? n : 1)*4);
    aNew = parBigMalloc((sqlite3_int64)(n ? n : 1)*4);
    aTop = parBigMalloc((sqlite3_int64)(n ? n : 1)*8);
    if( aPos==0 || aNew==0 || aTop==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    /* Stable: ties keep the order so far. */
    rc = parRcFromPx(px_sort_words_perm((const uint64_t *const*)aaG, nW, n, aPos,
                                        nW ? aTop : 0, nThread));
  }
  if( rc==SQLITE_OK ){
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(j=0; j<n; j++){
      aNew[j] = pO->aPerm[aPos[j]];
      pO->aHead[j] = j==0 ? 3 : 0;
    }
    parBigFree(pO->aPerm);
    pO->aPerm = aNew;
    aNew = 0;
  }
  if( rc==SQLITE_OK && bOne ){
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(j=1; j<n; j++){
      if( aTop[j]!=aTop[j-1] ){
        int bPart = wO<64 && (aTop[j]>>wO)!=(aTop[j-1]>>wO);
        pO->aHead[j] = bPart ? 3 : 2;
      }
    }
  }else if( rc==SQLITE_OK && nW>0 ){
    aTmp = parBigMalloc((sqlite3_int64)(n ? n : 1)*8);
    if( aTmp==0 ) rc = SQLITE_NOMEM;
    for(w=0; w<nW && rc==SQLITE_OK; w++){
      px_gather_u64(aaG[w], aPos, aTmp, n, nThread);
      #pragma omp parallel for num_threads(nThread) schedule(static)
      for(j=1; j<n; j++){
        if( aTmp[j]!=aTmp[j-1] ) pO->aHead[j] |= w<nP ? 3 : 2;
      }
    }
  }
  for(w=0; w<(int)(sizeof(aaG)/sizeof(aaG[0])); w++){ WIN_FREE_WORD(w); }
  pO->bIdentity = 0;
  parBigFree(aPos);
  parBigFree(aNew);
  parBigFree(aTop);
  parBigFree(aTmp);
  if( rc ) return rc;
  {
    /* Partition starts. */
    uint8_t *aFlag = parBigMalloc((sqlite3_int64)(n ? n : 1));
    if( aFlag==0 ) return SQLITE_NOMEM;
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(j=0; j<n; j++) aFlag[j] = pO->aHead[j] & 1;
    {
      size_t nHead = 0;
      #pragma omp parallel for num_threads(nThread) schedule(static) reduction(+:nHead)
      for(j=0; j<n; j++) nHead += aFlag[j];
      parBigFree(pO->aPart);
      pO->aPart = parBigMalloc((sqlite3_int64)(nHead+1)*4);
      if( pO->aPart==0 ){ parBigFree(aFlag); return SQLITE_NOMEM; }
    }
    pO->nPart = px_compact_idx(aFlag, n, pO->aPart, nThread);
    pO->aPart[pO->nPart] = (uint32_t)n;
    parBigFree(aFlag);
  }
  return SQLITE_OK;
}

/* ---- one partition ---------------------------------------------------------- */

/* The partition of positions [p0, p1): its peer groups start at aG[0..nG-1]
** (aG[nG] = p1). */
typedef struct WinPart {
  size_t p0, p1;
  uint32_t *aG;
  size_t nG;
  uint32_t *aRs, *aRe;   /* RANGE with an offset: each peer group's frame
                         ** as positions [aRs[g], aRe[g]) (winRange) */
} WinPart;

/* A number as SQLite holds it: INTEGER i or REAL r; or NULL (nNull -1 or
** 1: below or above every value, where the window's order puts it); or a
** text or blob (bStr), which sorts after every number, by its keys. */
typedef struct WinNum {
  int bInt; sqlite3_int64 i; double r; int nNull;
  int bStr; uint64_t k1, k2;
} WinNum;

/* a + n (bSub: a - n) as SQLite's OP_Add / OP_Subtract of an INTEGER
** n >= 0 (winRangeFits keeps integers away from overflow). */
static WinNum winNumAdd(WinNum a, sqlite3_int64 n, int bSub){
  if( a.nNull || a.bStr ) return a;        /* NULL +- n is NULL; SQLite adds
                                           ** nothing to text (reg1 >= '') */
  if( a.bInt ) a.i = bSub ? a.i - n : a.i + n;
  else a.r = bSub ? a.r - (double)n : a.r + (double)n;
  return a;
}

/* Compare two numbers as SQLite does (an INTEGER and a REAL by value,
** exactly: sqlite3IntFloatCompare). */
static int winNumCmp(WinNum a, WinNum b){
  if( a.nNull || b.nNull ) return a.nNull==b.nNull ? 0 : a.nNull ? a.nNull : -b.nNull;
  if( a.bStr || b.bStr ){
    if( !(a.bStr && b.bStr) ) return a.bStr ? 1 : -1;
    if( a.k1!=b.k1 ) return a.k1<b.k1 ? -1 : 1;
    return (a.k2>b.k2) - (a.k2<b.k2);
  }
  if( a.bInt && b.bInt ) return (a.i>b.i) - (a.i<b.i);
  if( !a.bInt && !b.bInt ) return (a.r>b.r) - (a.r<b.r);
  if( a.bInt ){
    long double x = (long double)a.i, y = (long double)b.r;
    return (x>y) - (x<y);
  }else{
    long double x = (long double)a.r, y = (long double)b.i;
    return (x>y) - (x<y);
  }
}

/* The ORDER BY value of row r (a number or NULL: winRangeFits checked);
** nNull, NULL's place. */
static WinNum winNumAt(const ParColumn *pKey, sqlite3_int64 r, int nNull, const WinOrder *pO){
  WinNum v;
  uint64_t bits = 0;
  int e = parAggColGet(pKey, r, &bits);
  v.nNull = e==SQLITE_NULL ? nNull : 0;
  v.bStr = e==SQLITE_TEXT || e==SQLITE_BLOB;
  v.k1 = v.bStr && pO->aRK1 ? pO->aRK1[r] : 0;
  v.k2 = v.bStr && pO->aRK2 ? pO->aRK2[r] : 0;
  v.bInt = e==SQLITE_INTEGER;
  v.i = (sqlite3_int64)bits;
  memcpy(&v.r, &bits, 8);
  if( v.bInt ) v.r = 0;
  return v;
}

/* The frames of a RANGE frame with an offset over the peer groups of pP
** (window.c windowCodeRangeTest: the offset is added to the start
** cursor's value for n PRECEDING starts and ends, to the current row's
** for FOLLOWING; subtracted under DESC, with the comparisons turned):
**   start n PRECEDING: the first group h with not  k_h + n <  k_g
**   start n FOLLOWING: the first group h with not  k_g + n >  k_h
**   end   n FOLLOWING: the last group h with not   k_g + n <  k_h
**   end   n PRECEDING: the last group h with       k_h + n <= k_g
** (ASC; DESC: k - n and the comparisons reversed).  The keys grow (or
** fall) with the groups, so each bound moves forward only.  NULL, plus or
** minus n, stays NULL, equal to NULL and beyond every number on the side
** where the order puts NULLs (SQLite's NULLEQ comparisons, and its
** BIGNULL branch for NULLS LAST): the NULL group's frame is itself (with
** an UNBOUNDED bound, up to that end), and a number's frame holds NULLs
** only through an UNBOUNDED bound or an end past every number.  flags:
** the key's PAR_KEY_*. */
static void winRange(WinPart *pP, const ParWinFrame *pF, const ParColumn *pKey, int flags,
                     const WinOrder *pO){
  const uint32_t *aPerm = pO->aPerm;
  size_t g, hs = 0, he = 0, nG = pP->nG;
  int bDesc = (flags & PAR_KEY_DESC)!=0;
  int s = bDesc ? -1 : 1;
  int nNull = ((flags & PAR_KEY_NULLS_LAST) ? 1 : -1) * s;
  for(g=0; g<nG; g++){
    WinNum kg = winNumAt(pKey, aPerm[pP->aG[g]], nNull, pO);
    size_t fs, fe;
    switch( pF->eStart ){
      case PAR_BOUND_PRECEDING:
        while( hs<nG && s*winNumCmp(winNumAdd(winNumAt(pKey, aPerm[pP->aG[hs]], nNull, pO), pF->iStart,
                                              bDesc), kg)<0 ) hs++;
        fs = hs;
        break;
      case PAR_BOUND_FOLLOWING:
        while( hs<nG && s*winNumCmp(winNumAdd(kg, pF->iStart, bDesc),
                                    winNumAt(pKey, aPerm[pP->aG[hs]], nNull, pO))>0 ) hs++;
        fs = hs;
        break;
      case PAR_BOUND_CURRENT_ROW: fs = g; break;
      default: fs = 0; break;
    }
    switch( pF->eEnd ){
      case PAR_BOUND_FOLLOWING:
        if( he<g ) he = g;
        while( he<nG && !(s*winNumCmp(winNumAdd(kg, pF->iEnd, bDesc),
                                      winNumAt(pKey, aPerm[pP->aG[he]], nNull, pO))<0) ) he++;
        fe = he;           /* groups [.., he) */
        break;
      case PAR_BOUND_PRECEDING:
        while( he<nG && s*winNumCmp(winNumAdd(winNumAt(pKey, aPerm[pP->aG[he]], nNull, pO), pF->iEnd,
                                              bDesc), kg)<=0 ) he++;
        fe = he;
        break;
      case PAR_BOUND_CURRENT_ROW: fe = g+1; break;
      default: fe = nG; break;
    }
    if( fs>=fe ){
      pP->aRs[g] = pP->aRe[g] = (uint32_t)pP->p0;
    }else{
      pP->aRs[g] = pP->aG[fs];
      pP->aRe[g] = pP->aG[fe];
    }
  }
}

/* Can winRange() follow SQLite over pKey's n rows: integers far from
** overflow with the offsets added?  -1 if not; 1 if texts or blobs are
** among the values (winRange then compares them by their keys), else 0. */
static int winRangeFits(const ParColumn *pKey, size_t n, const ParWinFrame *pF){
  size_t r;
  int bStr = 0;
  sqlite3_int64 lim = (sqlite3_int64)1 << 62;
  if( pF->iStart>=lim || pF->iEnd>=lim ) return -1;
  for(r=0; r<n; r++){
    uint64_t bits = 0;
    int e = parAggColGet(pKey, (sqlite3_int64)r, &bits);
    if( e==SQLITE_INTEGER ){
      sqlite3_int64 i = (sqlite3_int64)bits;
      if( i>=lim || i<=-lim ) return -1;
    }else if( e==SQLITE_TEXT || e==SQLITE_BLOB ){
      bStr = 1;
    }
  }
  return bStr;
}

/* Is pF a RANGE frame with an offset? */
static int winIsRangeOffset(const ParWinFrame *pF){
  return pF->eType==PAR_FRAME_RANGE
      && (pF->eStart==PAR_BOUND_PRECEDING || pF->eStart==PAR_BOUND_FOLLOWING
          || pF->eEnd==PAR_BOUND_PRECEDING || pF->eEnd==PAR_BOUND_FOLLOWING);
}

/* Frame of unit u (a row for ROWS, a peer group else) of pP under pF, as
** positions [*pFs, *pFe) (empty when *pFs >= *pFe). */
static void winFrameOf(const WinPart *pP, const ParWinFrame *pF, size_t u, size_t *pFs,
                       size_t *pFe){
  int bRows = pF->eType==PAR_FRAME_ROWS;
  sqlite3_int64 nu = bRows ? (sqlite3_int64)(pP->p1 - pP->p0) : (sqlite3_int64)pP->nG;
  sqlite3_int64 s = 0, e = 0, iu = (sqlite3_int64)u;
  if( winIsRangeOffset(pF) ){
    *pFs = pP->aRs[u];
    *pFe = pP->aRe[u];
    return;
  }
  switch( pF->eStart ){
    case PAR_BOUND_UNBOUNDED_PRECEDING: s = 0; break;
    case PAR_BOUND_PRECEDING:           s = iu - pF->iStart; break;
    case PAR_BOUND_CURRENT_ROW:         s = iu; break;
    case PAR_BOUND_FOLLOWING:           s = iu + pF->iStart; break;
    default:                            s = nu; break;
  }
  switch( pF->eEnd ){
    case PAR_BOUND_PRECEDING:           e = iu - pF->iEnd; break;
    case PAR_BOUND_CURRENT_ROW:         e = iu; break;
    case PAR_BOUND_FOLLOWING:           e = iu + pF->iEnd; break;
    case PAR_BOUND_UNBOUNDED_FOLLOWING: e = nu - 1; break;
    default:                            e = -1; break;
  }
  if( s<0 ) s = 0;
  if( e>nu-1 ) e = nu-1;
  if( s>e ){
    *pFs = *pFe = pP->p0;
    return;
  }
  *pFs = bRows ? pP->p0 + (size_t)s : pP->aG[s];
  *pFe = bRows ? pP->p0 + (size_t)e + 1 : pP->aG[e+1];
}

/* The positions of unit u: [*pa, *pb). */
static void winUnit(const WinPart *pP, int bRows, size_t u, size_t *pa, size_t *pb){
  if( bRows ){ *pa = pP->p0 + u; *pb = *pa + 1; }
  else{ *pa = pP->aG[u]; *pb = pP->aG[u+1]; }
}

/* What one call needs while it runs. */
typedef struct WinCall {
  const ParWinFunc *pF;
  ParAggRun run;             /* aggregates */
  int bDeque;                /* min/max of integers over a moving frame */
  int bFree;                 /* additions and removals in any order */
  int bFast;                 /* count, or sum/total/avg of an INTEGER column
                             ** that cannot overflow or round, over frames
                             ** from UNBOUNDED PRECEDING: running sums of the
                             ** values gathered in order (aV) */
  uint64_t *aV;              /* ...the argument at each position */
  uint8_t *aVNull;           /* ...and whether it is NULL or filtered out
                             ** (or NULL: none is) */
  const sqlite3_int64 *aFilt;   /* FILTER: 0 for the rows not stepped (by
                             ** row), or NULL */
  int bConcat;               /* group_concat: built by winConcat() */
  uint64_t *aK1, *aK2;       /* min/max over a moving frame of other values
                             ** than integers: their sort keys by row
                             ** (parColumnKeys; aK2 NULL when one word) */
  int bAtPos;                /* results at each position of the order (the
                             ** outermost window's, the result's), else at
                             ** each row's place in the extraction batch */
  ParColumn out;             /* the result */
} WinCall;

/* Where the result of position j goes. */
#define WIN_OUT(pC, aPerm, j)  ((pC)->bAtPos ? (sqlite3_int64)(j) : (sqlite3_int64)(aPerm)[j])

/* Ranking functions of the partition. */
static void winRank(const WinCall *pC, const WinPart *pP, const uint32_t *aPerm){
  const ParWinFunc *pF = pC->pF;
  size_t cnt = pP->p1 - pP->p0, g, j;
  for(g=0; g<pP->nG; g++){
    size_t a = pP->aG[g], b = pP->aG[g+1];
    for(j=a; j<b; j++){
      sqlite3_int64 r = WIN_OUT(pC, aPerm, j);
      size_t i = j - pP->p0;
      switch( pF->eFunc ){
        case PAR_WF_ROW_NUMBER: pC->out.aInt[r] = (sqlite3_int64)i + 1; break;
        case PAR_WF_RANK:       pC->out.aInt[r] = (sqlite3_int64)(a - pP->p0) + 1; break;
        case PAR_WF_DENSE_RANK: pC->out.aInt[r] = (sqlite3_int64)g + 1; break;
        case PAR_WF_PERCENT_RANK:
          pC->out.aReal[r] = cnt>1 ? (double)(a - pP->p0) / (double)(cnt - 1) : 0.0;
          break;
        case PAR_WF_CUME_DIST:
          pC->out.aReal[r] = (double)(b - pP->p0) / (double)cnt;
          break;
        case PAR_WF_NTILE: {
          /* window.c ntileValueFunc. */
          sqlite3_int64 nParam = pF->iN, nTotal = (sqlite3_int64)cnt, iRow = (sqlite3_int64)i;
          sqlite3_int64 nSize = nTotal / nParam;
          if( nSize==0 ){
            pC->out.aInt[r] = iRow + 1;
          }else{
            sqlite3_int64 nLarge = nTotal - nParam*nSize, iSmall = nLarge*(nSize+1);
            pC->out.aInt[r] = iRow<iSmall ? 1 + iRow/(nSize+1) : 1 + nLarge + (iRow-iSmall)/nSize;
          }
          break;
        }
      }
    }
  }
}

/* lag and lead: the argument at the row k before or after, within the
** partition, else the default of the current row (or NULL). */
static void winShift(WinCall *pC, const WinPart *pP, const uint32_t *aPerm, const ParBatch *pIn){
  const ParWinFunc *pF = pC->pF;
  const ParColumn *pArg = &pIn->aCol[pF->iArg];
  const ParColumn *pDef = pF->iDefault>=0 ? &pIn->aCol[pF->iDefault] : 0;
  size_t j;
  for(j=pP->p0; j<pP->p1; j++){
    sqlite3_int64 t = pF->eFunc==PAR_WF_LAG ? (sqlite3_int64)j - pF->iN
                                            : (sqlite3_int64)j + pF->iN;
    if( t>=(sqlite3_int64)pP->p0 && t<(sqlite3_int64)pP->p1 ){
      parAggCopy(&pC->out, WIN_OUT(pC, aPerm, j), pArg, aPerm[t]);
    }else if( pDef ){
      parAggCopy(&pC->out, WIN_OUT(pC, aPerm, j), pDef, aPerm[j]);
    }else{
      parAggCopy(&pC->out, WIN_OUT(pC, aPerm, j), pArg, -1);
    }
  }
}

/* first_value, last_value, nth_value: a row of the frame. */
static void winPick(WinCall *pC, const WinPart *pP, const uint32_t *aPerm, const ParBatch *pIn){
  const ParWinFunc *pF = pC->pF;
  const ParColumn *pArg = &pIn->aCol[pF->iArg];
  int bRows = pF->frame.eType==PAR_FRAME_ROWS;
  size_t nu = bRows ? pP->p1 - pP->p0 : pP->nG, u, a, b, j, fs, fe;
  for(u=0; u<nu; u++){
    sqlite3_int64 iSrc = -1;
    winFrameOf(pP, &pF->frame, u, &fs, &fe);
    if( fs<fe ){
      if( pF->eFunc==PAR_WF_FIRST_VALUE ) iSrc = aPerm[fs];
      else if( pF->eFunc==PAR_WF_LAST_VALUE ) iSrc = aPerm[fe-1];
      else if( (sqlite3_int64)(fe - fs) >= pF->iN ) iSrc = aPerm[fs + (size_t)pF->iN - 1];
    }
    winUnit(pP, bRows, u, &a, &b);
    for(j=a; j<b; j++) parAggCopy(&pC->out, WIN_OUT(pC, aPerm, j), pArg, iSrc);
  }
}

/* Does the value of row a come before (-1), with (0) or after (1) that of
** row b in min/max's order?  By the INTEGERs, or by the keys (aK1). */
static int winDequeCmp(const WinCall *pC, const ParColumn *pArg, uint32_t a, uint32_t b){
  if( pC->aK1==0 ){
    sqlite3_int64 x = pArg->aInt[a], y = pArg->aInt[b];
    return x<y ? -1 : x>y;
  }
  if( pC->aK1[a]!=pC->aK1[b] ) return pC->aK1[a]<pC->aK1[b] ? -1 : 1;
  if( pC->aK2==0 || pC->aK2[a]==pC->aK2[b] ) return 0;
  return pC->aK2[a]<pC->aK2[b] ? -1 : 1;
}

/* min/max over frames whose bounds only move forward: a queue of
** positions of increasing (min) or decreasing (max) values, of an INTEGER
** column or compared by their keys (winDequeKeys: equal keys there are
** the same value).  aQ: scratch of the partition's size. */
static void winDeque(WinCall *pC, const WinPart *pP, const uint32_t *aPerm, uint32_t *aQ){
  const ParWinFunc *pF = pC->pF;
  const ParColumn *pArg = pC->run.pArg;
  int bMax = pF->agg.eFunc==PAR_AGG_MAX, bRows = pF->frame.eType==PAR_FRAME_ROWS;
  size_t nu = bRows ? pP->p1 - pP->p0 : pP->nG, u, a, b, j, fs, fe, next = pP->p0;
  size_t qh = 0, qt = 0;
  int bNone = pArg->eStore==PAR_COL_NULL;   /* a column of NULLs */
  for(u=0; u<nu; u++){
    winFrameOf(pP, &pF->frame, u, &fs, &fe);
    if( next<fs ) next = fs;
    for(; next<fe; next++){
      uint32_t r = aPerm[next];
      /* No FILTER here: SQLite 3.40's min/max over a moving frame start
      ** keeps every non-NULL value in its index (window.c windowAggStep,
      ** the SQLITE_FUNC_MINMAX branch, checks no filter). */
      if( bNone || parIsNullRow(pArg, r) ) continue;
      while( qt>qh ){
        int c = winDequeCmp(pC, pArg, aPerm[aQ[qt-1]], r);
        if( bMax ? c<=0 : c>=0 ) qt--; else break;
      }
      aQ[qt++] = (uint32_t)next;
    }
    while( qh<qt && aQ[qh]<fs ) qh++;
    winUnit(pP, bRows, u, &a, &b);
    for(j=a; j<b; j++){
      sqlite3_int64 r = WIN_OUT(pC, aPerm, j);
      if( qh<qt && fs<fe ){
        parAggCopy(&pC->out, r, pArg, aPerm[aQ[qh]]);
      }else{
        pC->out.aType[r] = SQLITE_NULL;
        pC->out.aVal[r] = 0;
      }
    }
  }
}

/* An aggregate over its frames, stepped as SQLite steps it (see the top
** of the file).  Returns 1 when sum() overflows (SQLite fails). */
static int winAgg(WinCall *pC, const WinPart *pP, const uint32_t *aPerm){
  const ParWinFunc *pF = pC->pF;
  int bRows = pF->frame.eType==PAR_FRAME_ROWS, bOver = 0;
  int bRunning = pF->frame.eStart==PAR_BOUND_UNBOUNDED_PRECEDING;
  size_t nu = bRows ? pP->p1 - pP->p0 : pP->nG, u, a, b, j, fs, fe;
  size_t nStep = pP->p0, nGone = pP->p0;
  ParAcc acc;
  parAccInit(&acc);
  for(u=0; u<nu; u++){
    winFrameOf(pP, &pF->frame, u, &fs, &fe);
    if( !bRunning && !pC->bFree ){
      /* SQLite: the rows that left, then the rows that came. */
      for(; nGone<fs; nGone++){
        if( pC->aFilt==0 || pC->aFilt[aPerm[nGone]] ) parAggInverse(&pC->run, &acc, aPerm[nGone]);
      }
    }
    for(; nStep<fe; nStep++){
      if( pC->aFilt==0 || pC->aFilt[aPerm[nStep]] ) parAggStep(&pC->run, &acc, aPerm[nStep]);
    }
    if( !bRunning && pC->bFree ){
      /* An empty frame (its start past its end) holds none of the rows. */
      size_t nTo = fs<fe ? fs : nStep;
      for(; nGone<nTo && nGone<nStep; nGone++){
        if( pC->aFilt==0 || pC->aFilt[aPerm[nGone]] ) parAggInverse(&pC->run, &acc, aPerm[nGone]);
      }
    }
    winUnit(pP, bRows, u, &a, &b);
    for(j=a; j<b; j++) bOver |= parAggValue(&pC->run, &acc, &pC->out, WIN_OUT(pC, aPerm, j));
  }
  return bOver;
}

/* A bFast aggregate: running count and sum of the values in order, exact
** (no overflow, no rounding: winCallInit checked), so the state SQLite's
** steps reach is the count and the sum. */
static void winAggFast(WinCall *pC, const WinPart *pP, const uint32_t *aPerm){
  const ParWinFunc *pF = pC->pF;
  int bRows = pF->frame.eType==PAR_FRAME_ROWS, e = pF->agg.eFunc;
  size_t nu = bRows ? pP->p1 - pP->p0 : pP->nG, u, a, b, j, fs, fe, nStep = pP->p0;
  sqlite3_int64 iSum = 0, nCnt = 0;
  for(u=0; u<nu; u++){
    winFrameOf(pP, &pF->frame, u, &fs, &fe);
    if( e==PAR_AGG_COUNT_STAR && pC->aVNull==0 ){
      if( fe>nStep ){ nCnt += (sqlite3_int64)(fe - nStep); nStep = fe; }
    }else{
      for(; nStep<fe; nStep++){
        if( pC->aVNull && pC->aVNull[nStep] ) continue;
        if( e!=PAR_AGG_COUNT && e!=PAR_AGG_COUNT_STAR ) iSum += (sqlite3_int64)pC->aV[nStep];
        nCnt++;
      }
    }
    winUnit(pP, bRows, u, &a, &b);
    for(j=a; j<b; j++){
      sqlite3_int64 r = WIN_OUT(pC, aPerm, j);
      if( pC->out.eStore==PAR_COL_INT ){
        pC->out.aInt[r] = e==PAR_AGG_SUM ? iSum : nCnt;
        continue;
      }
      pC->out.aType[r] = SQLITE_NULL;
      pC->out.aVal[r] = 0;
      if( e==PAR_AGG_COUNT || e==PAR_AGG_COUNT_STAR ){
        pC->out.aType[r] = SQLITE_INTEGER;
        pC->out.aVal[r] = (uint64_t)nCnt;
      }else if( e==PAR_AGG_SUM ){
        if( nCnt ){ pC->out.aType[r] = SQLITE_INTEGER; pC->out.aVal[r] = (uint64_t)iSum; }
      }else{
        double x = (double)iSum;
        if( e==PAR_AGG_AVG ){
          if( nCnt==0 ) continue;
          x = x / (double)nCnt;
        }
        pC->out.aType[r] = SQLITE_FLOAT;
        memcpy(&pC->out.aVal[r], &x, 8);
      }
    }
  }
}

/* Partition p of pO: its positions and peer groups, and, for a RANGE
** frame with an offset (pRange, or NULL), each group's frame over the
** ORDER BY key of window pD.  Free with winPartClose(). */
static int winPartOpen(WinPart *pP, const WinOrder *pO, size_t p, const ParWinFrame *pRange,
                       const ParWinDef *pD, const ParBatch *pIn){
  size_t j, k;
  memset(pP, 0, sizeof(*pP));
  pP->p0 = pO->aPart[p];
  pP->p1 = pO->aPart[p+1];
  for(j=pP->p0; j<pP->p1; j++) pP->nG += (pO->aHead[j]>>1) & 1;
  pP->aG = sqlite3_malloc64(sizeof(uint32_t)*(pP->nG+1));
  if( pP->aG==0 ) return SQLITE_NOMEM;
  for(j=pP->p0, k=0; j<pP->p1; j++) if( (pO->aHead[j]>>1) & 1 ) pP->aG[k++] = (uint32_t)j;
  pP->aG[pP->nG] = (uint32_t)pP->p1;
  if( pRange ){
    pP->aRs = sqlite3_malloc64(sizeof(uint32_t)*(pP->nG+1)*2);
    if( pP->aRs==0 ) return SQLITE_NOMEM;
    pP->aRe = pP->aRs + pP->nG + 1;
    winRange(pP, pRange, &pIn->aCol[pD->aOrder[0].iCol], pD->aOrder[0].flags, pO);
  }
  return SQLITE_OK;
}

static void winPartClose(WinPart *pP){
  sqlite3_free(pP->aG);
  sqlite3_free(pP->aRs);
  memset(pP, 0, sizeof(*pP));
}

/* SQLite's group_concat state (func.c, GroupConcatCtx), followed step by
** step because a moving frame removes values by byte counts: the text
** z[i0..i0+n); bEmpty, the str.mxAlloc==0 that makes the next value a
** first term (no separator before it: true at the start and whenever a
** removal empties the text, even with values left, as empty texts can
** leave); nAccum, the values held; nFirst, the length of the separator
** given with the first term (1 without a separator argument), which a
** removal takes off after the value while no other length was seen; once
** one was, aSep[iSep0..] holds the length of the separator after each
** value held (pnSepLengths). */
typedef struct WinConcatState {
  char *z; sqlite3_int64 nAlloc, i0, n;
  int bEmpty;
  sqlite3_int64 nAccum, nFirst;
  int bTrack;
  int *aSep; sqlite3_int64 iSep0, nSepAlloc;
} WinConcatState;

/* Room for nMore bytes after the text; 1 when that passes mxMem (the
** SELECT then runs natively), SQLITE_NOMEM, else 0. */
static int winConcatRoom(WinConcatState *pS, sqlite3_int64 nMore, sqlite3_int64 mxMem){
  if( pS->i0>0 && pS->i0 + pS->n + nMore > pS->nAlloc ){
    memmove(pS->z, pS->z + pS->i0, (size_t)pS->n);
    pS->i0 = 0;
  }
  if( pS->n + nMore > pS->nAlloc ){
    sqlite3_int64 nNew = pS->nAlloc ? pS->nAlloc*2 : 256;
    char *zNew;
    while( nNew < pS->n + nMore ) nNew *= 2;
    if( mxMem>0 && nNew>mxMem ) return 1;
    zNew = sqlite3_realloc64(pS->z, (sqlite3_uint64)nNew);
    if( zNew==0 ) return SQLITE_NOMEM;
    pS->z = zNew;
    pS->nAlloc = nNew;
  }
  return 0;
}

/* Slot i of pnSepLengths, growing it. */
static int *winConcatSep(WinConcatState *pS, sqlite3_int64 i){
  if( pS->iSep0 + i >= pS->nSepAlloc ){
    sqlite3_int64 nNew = pS->nSepAlloc ? pS->nSepAlloc*2 : 64;
    int *aNew;
    if( pS->iSep0>0 ){
      memmove(pS->aSep, pS->aSep + pS->iSep0, sizeof(int)*(size_t)(pS->nSepAlloc - pS->iSep0));
      pS->iSep0 = 0;
    }
    while( nNew <= i ) nNew *= 2;
    aNew = sqlite3_realloc64(pS->aSep, sizeof(int)*(sqlite3_uint64)nNew);
    if( aNew==0 ) return 0;
    pS->aSep = aNew;
    pS->nSepAlloc = nNew;
  }
  return &pS->aSep[pS->iSep0 + i];
}

/* groupConcatStep: value zVal/nVal (not NULL), separator zSep/nSep
** (bSepArg: given; zSep NULL: a NULL one).  Returns as winConcatRoom. */
static int winConcatStep(WinConcatState *pS, const char *zVal, sqlite3_int64 nVal, int bSepArg,
                         const char *zSep, sqlite3_int64 nSep, sqlite3_int64 mxMem){
  int bFirst = pS->bEmpty, rc;
  pS->bEmpty = 0;
  if( !bSepArg ){
    zSep = ",";
    nSep = 1;
    if( bFirst ) pS->nFirst = 1;
  }else if( bFirst ){
    pS->nFirst = zSep ? nSep : 0;
  }else{
    if( zSep==0 ) nSep = 0;
    if( nSep!=pS->nFirst || pS->bTrack ){
      sqlite3_int64 i;
      int *pSlot;
      if( !pS->bTrack ){
        /* The separators so far all had the first one's length. */
        pS->bTrack = 1;
        pS->iSep0 = 0;
        for(i=0; i<pS->nAccum-1; i++){
          if( (pSlot = winConcatSep(pS, i))==0 ) return SQLITE_NOMEM;
          *pSlot = (int)pS->nFirst;
        }
      }
      if( pS->nAccum>0 ){
        if( (pSlot = winConcatSep(pS, pS->nAccum-1))==0 ) return SQLITE_NOMEM;
        *pSlot = (int)nSep;
      }
    }
  }
  pS->nAccum++;
  if( bFirst ) nSep = 0;
  if( (rc = winConcatRoom(pS, nSep + nVal, mxMem))!=0 ) return rc;
  if( nSep ) memcpy(pS->z + pS->i0 + pS->n, zSep, (size_t)nSep);
  pS->n += nSep;
  if( nVal ) memcpy(pS->z + pS->i0 + pS->n, zVal, (size_t)nVal);
  pS->n += nVal;
  return 0;
}

/* groupConcatInverse of a value of nVal bytes (not NULL). */
static void winConcatInverse(WinConcatState *pS, sqlite3_int64 nVal){
  sqlite3_int64 nVS = nVal;
  pS->nAccum--;
  if( pS->bTrack ){
    if( pS->nAccum>0 ){
      nVS += pS->aSep[pS->iSep0];
      pS->iSep0++;
    }
  }else{
    nVS += pS->nFirst;
  }
  if( nVS>=pS->n ){
    pS->n = 0;
  }else{
    pS->i0 += nVS;
    pS->n -= nVS;
  }
  if( pS->n==0 ){
    pS->i0 = 0;
    pS->bEmpty = 1;
    pS->bTrack = 0;
    pS->iSep0 = 0;
  }
}

/* Row r's value and separator for group_concat: 0 when its value is NULL
** (or a FILTER leaves the row out), else 1. */
static int winConcatArgs(const WinCall *pC, const ParColumn *pText, const ParColumn *pSep,
                         uint32_t r, const char **pzVal, sqlite3_int64 *pnVal,
                         const char **pzSep, sqlite3_int64 *pnSep){
  uint64_t v = 0, sv = 0;
  if( pC->aFilt && !pC->aFilt[r] ) return 0;
  if( parAggColGet(pText, r, &v)!=SQLITE_TEXT ) return 0;
  *pzVal = parDictText(pText->pDict, (uint32_t)v);
  *pnVal = pText->pDict->aLen[v];
  *pzSep = 0;
  *pnSep = 0;
  if( pSep && parAggColGet(pSep, r, &sv)==SQLITE_TEXT ){
    *pzSep = parDictText(pSep->pDict, (uint32_t)sv);
    *pnSep = pSep->pDict->aLen[sv];
  }
  return 1;
}

/* group_concat, partition by partition on one thread (the strings go into
** one dictionary), stepped and removed in SQLite's sequence (as winAgg:
** the frames the planner lets through start at UNBOUNDED PRECEDING, or
** start before or at their row and end at or after it), each row's value
** the text then, NULL when it is empty (groupConcatValue:
** sqlite3_str_value of an empty string is NULL).  *pbNative when the
** strings would pass the memory limit (SQLite makes them one at a
** time). */
static int winConcat(WinCall *pC, const ParWinDef *pD, const WinOrder *pO, const ParBatch *pIn,
                     sqlite3_int64 mxMem, int *pbNative){
  const ParWinFunc *pF = pC->pF;
  const ParColumn *pText = &pIn->aCol[pF->agg.iText];
  const ParColumn *pSep = pF->agg.iSep>=0 ? &pIn->aCol[pF->agg.iSep] : 0;
  const uint32_t *aPerm = pO->aPerm;
  int bRows = pF->frame.eType==PAR_FRAME_ROWS, rc = SQLITE_OK;
  int bRunning = pF->frame.eStart==PAR_BOUND_UNBOUNDED_PRECEDING;
  WinConcatState st;
  ParBatch acct;
  size_t p;
  memset(&acct, 0, sizeof(acct));
  memset(&st, 0, sizeof(st));
  acct.mxMem = mxMem;
  for(p=0; p<pO->nPart && rc==SQLITE_OK; p++){
    WinPart part;
    size_t j, u, nu, a, b, fs, fe, nStep, nGone;
    rc = winPartOpen(&part, pO, p, winIsRangeOffset(&pF->frame) ? &pF->frame : 0, pD, pIn);
    if( rc ){ winPartClose(&part); break; }
    nu = bRows ? part.p1 - part.p0 : part.nG;
    st.i0 = st.n = st.nAccum = st.nFirst = st.iSep0 = 0;
    st.bEmpty = 1;
    st.bTrack = 0;
    nStep = nGone = part.p0;
    for(u=0; u<nu && rc==SQLITE_OK; u++){
      uint32_t iCode = 0;
      const char *zVal, *zSep;
      sqlite3_int64 nVal, nSep;
      winFrameOf(&part, &pF->frame, u, &fs, &fe);
      /* SQLite: the rows that left, then the rows that came. */
      for(; !bRunning && nGone<fs && nGone<nStep; nGone++){
        if( winConcatArgs(pC, pText, pSep, aPerm[nGone], &zVal, &nVal, &zSep, &nSep) ){
          winConcatInverse(&st, nVal);
        }
      }
      for(; nStep<fe && rc==SQLITE_OK; nStep++){
        if( winConcatArgs(pC, pText, pSep, aPerm[nStep], &zVal, &nVal, &zSep, &nSep) ){
          rc = winConcatStep(&st, zVal, nVal, pSep!=0, zSep, nSep, mxMem);
          if( rc==1 ){ *pbNative = 1; rc = SQLITE_DONE; }
        }
      }
      if( rc ) break;
      if( st.n>0 ){
        rc = parDictAdd(&acct, pC->out.pDict, (const unsigned char*)st.z + st.i0, st.n,
                        SQLITE_TEXT, &iCode);
        if( rc && acct.bOverLimit ){ *pbNative = 1; rc = SQLITE_DONE; break; }
      }
      winUnit(&part, bRows, u, &a, &b);
      for(j=a; j<b; j++){
        sqlite3_int64 r = WIN_OUT(pC, aPerm, j);
        pC->out.aType[r] = st.n>0 ? SQLITE_TEXT : SQLITE_NULL;
        pC->out.aVal[r] = st.n>0 ? iCode : 0;
      }
    }
    winPartClose(&part);
    if( (p & 63)==0 && rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  }
  sqlite3_free(st.z);
  sqlite3_free(st.aSep);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/* ---- the operator ------------------------------------------------------------ */

/* A bFast call's argument at each position of the order aPerm. */
static int winGatherArg(WinCall *pC, const ParBatch *pIn, const uint32_t *aPerm, size_t n,
                        int nThread){
  const ParColumn *pArg = pC->pF->agg.iArg>=0 ? &pIn->aCol[pC->pF->agg.iArg] : 0;
  const sqlite3_int64 *aFilt = pC->aFilt;
  size_t j;
  if( pArg==0 ){
    /* count(*): only a FILTER skips rows. */
    if( aFilt==0 ) return SQLITE_OK;
    pC->aVNull = parBigMalloc((sqlite3_int64)(n ? n : 1));
    if( pC->aVNull==0 ) return SQLITE_NOMEM;
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(j=0; j<n; j++) pC->aVNull[j] = aFilt[aPerm[j]]==0;
    return SQLITE_OK;
  }
  if( pArg->eStore==PAR_COL_INT ){
    pC->aV = parBigMalloc((sqlite3_int64)(n ? n : 1)*8);
    if( pC->aV==0 ) return SQLITE_NOMEM;
    px_gather_u64((const uint64_t*)pArg->aInt, aPerm, pC->aV, n, nThread);
  }
  if( pArg->nNull>0 || pArg->eStore!=PAR_COL_INT || aFilt ){
    pC->aVNull = parBigMalloc((sqlite3_int64)(n ? n : 1));
    if( pC->aVNull==0 ) return SQLITE_NOMEM;
    #pragma omp parallel for num_threads(nThread) schedule(static)
    for(j=0; j<n; j++){
      pC->aVNull[j] = parColumnType(pArg, aPerm[j])==SQLITE_NULL
                   || (aFilt && aFilt[aPerm[j]]==0);
    }
  }
  return SQLITE_OK;
}

/* Does each value of sum/total/avg's argument read as an integer, all
** small enough that no sum of them rounds or overflows (then the order of
** additions and removals cannot show)? */
static int winExactInts(const ParAggRun *pR, size_t n){
  size_t r;
  sqlite3_int64 mx = 0;
  for(r=0; r<n; r++){
    sqlite3_int64 i = 0;
    double x = 0;
    int e = parNumGet(&pR->num, (sqlite3_int64)r, &i, &x);
    if( e==SQLITE_FLOAT ) return 0;
    if( e==SQLITE_INTEGER ){
      if( i<=-((sqlite3_int64)1<<53) || i>=((sqlite3_int64)1<<53) ) return 0;
      if( i<0 ) i = -i;
      if( i>mx ) mx = i;
    }
  }
  return (unsigned __int128)(uint64_t)mx * (uint64_t)(n ? n : 1) < ((unsigned __int128)1 << 53);
}

/* min/max over a moving frame of a column that is not all INTEGER: SQLite
** keeps the frame's values in an index (window.c, the MINMAX branch of
** windowAggStep) and returns its first or last entry, and which of two
** equal values that is depends on the index.  The queue compares keys
** (parColumnKeys, under the call's collation) where equal keys are the
** same value: REALs without both 0.0 and -0.0, INTEGERs with no REALs (or
** REALs with no INTEGERs, 1 = 1.0), TEXT under BINARY, BLOBs.  Else
** *pbNative. */
static int winDequeKeys(WinCall *pC, ParBatch *pIn, size_t n, int nThread, int *pbNative){
  ParColumn *pArg = &pIn->aCol[pC->pF->agg.iArg];
  int eColl = pC->pF->agg.eColl, bInt = 0, bReal = 0, bText = 0, bBlob = 0, bPos0 = 0, bNeg0 = 0;
  int rc;
  size_t r;
  for(r=0; r<n; r++){
    uint64_t v = 0;
    switch( parAggColGet(pArg, (sqlite3_int64)r, &v) ){
      case SQLITE_INTEGER: bInt = 1; break;
      case SQLITE_TEXT:    bText = 1; break;
      case SQLITE_BLOB:    bBlob = 1; break;
      case SQLITE_FLOAT:
        bReal = 1;
        if( v==0 ) bPos0 = 1;
        if( v==((uint64_t)1<<63) ) bNeg0 = 1;
        break;
    }
  }
  if( (bInt && bReal) || (bPos0 && bNeg0) || (bText && eColl!=PAR_COLL_BINARY)
   || ((bText || bBlob) && pArg->pDict==0) ){
    *pbNative = 1;
    return SQLITE_OK;
  }
  /* Without text, the collation (maybe one the kernels do not know) does
  ** not matter. */
  rc = parColumnKeys(pArg, (sqlite3_int64)n, bText ? eColl : PAR_COLL_BINARY, 0, nThread,
                     &pC->aK1, &pC->aK2);
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  if( rc==SQLITE_OK ) pC->bDeque = 1;
  return rc;
}

/* Prepare call pC; *pbNative when the operator cannot compute it exactly
** over these rows. */
static int winCallInit(sqlite3 *db, WinCall *pC, ParBatch *pIn, size_t n, int nThread,
                       int *pbNative){
  const ParWinFunc *pF = pC->pF;
  int rc, eStore = PAR_COL_MIXED;
  if( pF->eFunc==PAR_WF_AGG && pF->agg.eFunc==PAR_AGG_GROUP_CONCAT ){
    /* A dictionary of its own for the strings it makes. */
    pC->bConcat = 1;
    rc = winColumn(&pC->out, n, PAR_COL_MIXED);
    if( rc ) return rc;
    pC->out.pDict = sqlite3_malloc(sizeof(ParDict));
    if( pC->out.pDict==0 ) return SQLITE_NOMEM;
    memset(pC->out.pDict, 0, sizeof(ParDict));
  }
  if( pF->iFilter>=0 ){
    const ParColumn *pFilt = &pIn->aCol[pF->iFilter];
    if( pFilt->eStore==PAR_COL_INT && pFilt->nNull==0 ){
      pC->aFilt = pFilt->aInt;
    }else if( n>0 ){
      *pbNative = 1;           /* CASE gave something else: not followed */
      return SQLITE_OK;
    }
  }
  if( pF->eFunc==PAR_WF_ROW_NUMBER || pF->eFunc==PAR_WF_RANK || pF->eFunc==PAR_WF_DENSE_RANK
   || pF->eFunc==PAR_WF_NTILE ){
    eStore = PAR_COL_INT;
  }else if( pF->eFunc==PAR_WF_PERCENT_RANK || pF->eFunc==PAR_WF_CUME_DIST ){
    eStore = PAR_COL_REAL;
  }else if( pF->eFunc==PAR_WF_AGG && pF->frame.eStart==PAR_BOUND_UNBOUNDED_PRECEDING ){
    /* Running counts, and running sums that are exact: see WinCall. */
    int e = pF->agg.eFunc;
    const ParColumn *pArg = pF->agg.iArg>=0 ? &pIn->aCol[pF->agg.iArg] : 0;
    if( e==PAR_AGG_COUNT_STAR || e==PAR_AGG_COUNT ){
      pC->bFast = 1;
      eStore = PAR_COL_INT;
    }else if( (e==PAR_AGG_SUM || e==PAR_AGG_TOTAL || e==PAR_AGG_AVG)
           && pArg->eStore==PAR_COL_INT ){
      sqlite3_int64 mn, mx;
      uint64_t m;
      parIntRange(pArg, n, nThread, &mn, &mx);
      m = mn>mx ? 0 : parIntMagnitude(mn, mx);
      if( e==PAR_AGG_SUM ? parSumCannotOverflow(m, n)
                         : (unsigned __int128)m*(n ? n : 1) < ((unsigned __int128)1 << 53) ){
        pC->bFast = 1;
        if( e==PAR_AGG_SUM && pArg->nNull==0 && pF->frame.eEnd!=PAR_BOUND_PRECEDING
         && pC->aFilt==0 ){
          eStore = PAR_COL_INT;      /* never NULL: the frame holds its row */
        }
      }
    }
  }
  if( pC->bConcat ) return SQLITE_OK;
  rc = winColumn(&pC->out, n, eStore);
  if( rc || pC->bFast ) return rc;
  if( rc ) return rc;
  if( pF->eFunc==PAR_WF_LAG || pF->eFunc==PAR_WF_LEAD || pF->eFunc==PAR_WF_FIRST_VALUE
   || pF->eFunc==PAR_WF_LAST_VALUE || pF->eFunc==PAR_WF_NTH_VALUE ){
    const ParColumn *pArg = &pIn->aCol[pF->iArg];
    const ParColumn *pDef = pF->iDefault>=0 ? &pIn->aCol[pF->iDefault] : 0;
    /* Copied text keeps its code: one dictionary for the column. */
    if( pDef && pDef->pDict && pArg->pDict && pDef->pDict!=pArg->pDict ){
      *pbNative = 1;
      return SQLITE_OK;
    }
    pC->out.pDict = pArg->pDict ? pArg->pDict : pDef ? pDef->pDict : 0;
    pC->out.bBorrowDict = 1;
    return SQLITE_OK;
  }
  if( pF->eFunc==PAR_WF_AGG ){
    int e = pF->agg.eFunc;
    int bRunning = pF->frame.eStart==PAR_BOUND_UNBOUNDED_PRECEDING;
    int bSqliteOrder = pF->frame.eStart!=PAR_BOUND_FOLLOWING
                    && pF->frame.eEnd!=PAR_BOUND_PRECEDING;
    if( winUnknownText(pIn, pF->agg.iArg, (e==PAR_AGG_MIN || e==PAR_AGG_MAX) ? pF->agg.eColl : 0) ){
      *pbNative = 1;
      return SQLITE_OK;
    }
    rc = parAggRunInit(db, &pF->agg, pIn->aCol, (sqlite3_int64)n, nThread, &pC->run);
    if( rc ) return rc;
    if( e==PAR_AGG_SUM || e==PAR_AGG_TOTAL || e==PAR_AGG_AVG ){
      pC->run.bSeq = 1;            /* SQLite's SumCtx, step by step */
      if( !bRunning && !bSqliteOrder ){
        pC->bFree = winExactInts(&pC->run, n);
        if( !pC->bFree ) *pbNative = 1;
      }
    }else if( e==PAR_AGG_MIN || e==PAR_AGG_MAX ){
      if( !bRunning ){
        pC->bDeque = pC->run.pArg->eStore==PAR_COL_INT || pC->run.pArg->eStore==PAR_COL_NULL;
        if( !pC->bDeque ){
          rc = winDequeKeys(pC, pIn, n, nThread, pbNative);
          if( rc ) return rc;
        }
      }
      if( pC->run.pArg->pDict ){
        pC->out.pDict = pC->run.pArg->pDict;
        pC->out.bBorrowDict = 1;
      }
    }else{
      pC->bFree = !bSqliteOrder;   /* counts */
    }
  }
  return SQLITE_OK;
}

/* Window iWin's RANGE frame with an offset, when its ORDER BY values hold
** texts or blobs: their sort keys (ascending, under the term's collation)
** in pO->aRK1/aRK2, by which winRange compares them as SQLite's OP_Ge and
** friends do under that collation. */
static int winRangeKeys(const ParPlanWindow *pW, int iWin, ParBatch *pIn, size_t n, int nThread,
                        WinOrder *pO){
  const ParWinDef *pD = &pW->aWin[iWin];
  int f;
  for(f=0; f<pW->nFunc; f++){
    const ParWinFunc *pF = &pW->aFunc[f];
    if( pF->iWin==iWin && winIsRangeOffset(&pF->frame) ){
      ParColumn *pKey = &pIn->aCol[pD->aOrder[0].iCol];
      if( winRangeFits(pKey, n, &pF->frame)<=0 ) return SQLITE_OK;
      return parColumnKeys(pKey, (sqlite3_int64)n, pD->aOrder[0].eColl, 0, nThread,
                           &pO->aRK1, &pO->aRK2);
    }
  }
  return SQLITE_OK;
}

/* The calls of window iWin over the rows in pO's order, partition by
** partition.  *pbOver when a sum overflows. */
static int winValues(const ParPlanWindow *pW, int iWin, WinCall *aCall, const WinOrder *pO,
                     const ParBatch *pIn, int nThread, int *pbOver){
  const ParWinFrame *pRange = 0;      /* the window's RANGE frame with an offset */
  size_t p;
  int rc = SQLITE_OK, bOver = 0, f;
  for(f=0; f<pW->nFunc && pRange==0; f++){
    if( aCall[f].pF->iWin==iWin && winIsRangeOffset(&aCall[f].pF->frame) ){
      pRange = &aCall[f].pF->frame;
    }
  }
  #pragma omp parallel for num_threads(nThread) schedule(dynamic, 1) reduction(|:bOver) private(f)
  for(p=0; p<pO->nPart; p++){
    WinPart part;
    uint32_t *aQ = 0;
    int bErr = 0;
    if( __atomic_load_n(&rc, __ATOMIC_RELAXED) ) continue;
    if( (p & 63)==0 && parStopped() ){
      __atomic_store_n(&rc, SQLITE_INTERRUPT, __ATOMIC_RELAXED);
      continue;
    }
    bErr = winPartOpen(&part, pO, p, pRange, &pW->aWin[iWin], pIn)!=SQLITE_OK;
    for(f=0; !bErr && f<pW->nFunc; f++){
      WinCall *pC = &aCall[f];
      if( pC->pF->iWin!=iWin ) continue;
      switch( pC->pF->eFunc ){
        case PAR_WF_AGG:
          if( pC->bConcat ){
            break;                   /* winConcat(), one thread */
          }else if( pC->bFast ){
            winAggFast(pC, &part, pO->aPerm);
          }else if( pC->bDeque ){
            if( aQ==0 ) aQ = sqlite3_malloc64(sizeof(uint32_t)*(part.p1 - part.p0 + 1));
            if( aQ==0 ){ bErr = 1; break; }
            winDeque(pC, &part, pO->aPerm, aQ);
          }else{
            bOver |= winAgg(pC, &part, pO->aPerm);
          }
          break;
        case PAR_WF_LAG: case PAR_WF_LEAD:
          winShift(pC, &part, pO->aPerm, pIn);
          break;
        case PAR_WF_FIRST_VALUE: case PAR_WF_LAST_VALUE: case PAR_WF_NTH_VALUE:
          winPick(pC, &part, pO->aPerm, pIn);
          break;
        default:
          winRank(pC, &part, pO->aPerm);
          break;
      }
    }
    if( bErr ) __atomic_store_n(&rc, SQLITE_NOMEM, __ATOMIC_RELAXED);
    winPartClose(&part);
    sqlite3_free(aQ);
  }
  *pbOver = bOver;
  return rc;
}

/* The result: the rows at positions aPos[0..nRow-1] of the final order,
** the columns the view returns or the final SQL reads (the others all
** NULL, never read). */
static int winResult(const ParPlan *pPlan, ParBatch *pIn, WinCall *aCall,
                     const uint32_t *aRow, size_t iFrom, size_t nRow, int nThread,
                     ParBatch **ppOut){
  int nExtract = pPlan->nExtractCol, nCol = nExtract + pPlan->pWindow->nFunc;
  ParBatch *pOut = sqlite3_malloc(sizeof(ParBatch));
  uint32_t *aSeq = 0;
  int c, i, rc = SQLITE_OK;
  size_t j;
  *ppOut = pOut;
  if( pOut==0 ) return SQLITE_NOMEM;
  memset(pOut, 0, sizeof(*pOut));
  pOut->nRef = 1;
  pOut->nRow = pOut->nRowAlloc = (sqlite3_int64)nRow;
  pOut->aCol = sqlite3_malloc64(sizeof(ParColumn)*(nCol+1));
  if( pOut->aCol==0 ) return SQLITE_NOMEM;
  memset(pOut->aCol, 0, sizeof(ParColumn)*(nCol+1));
  pOut->nCol = nCol;
  for(c=0; c<nCol; c++){
    pOut->aCol[c].eStore = PAR_COL_NULL;
    pOut->aCol[c].nNull = pOut->nRow;
  }
  for(i=0; i<(pPlan->aDirect ? pPlan->nCol : pPlan->pWindow->nOutCol) && rc==SQLITE_OK; i++){
    const ParColumn *pSrc;
    c = pPlan->aDirect ? pPlan->aDirect[i] : pPlan->pWindow->aOutCol[i];
    pSrc = c<nExtract ? &pIn->aCol[c] : &aCall[c - nExtract].out;
    if( pOut->aCol[c].eStore!=PAR_COL_NULL || pSrc->eStore==PAR_COL_NULL ) continue;
    if( c>=nExtract && aCall[c - nExtract].bAtPos && iFrom==0
     && nRow==(size_t)pIn->nRow ){
      /* Every position, in order: the column itself moves. */
      pOut->aCol[c] = aCall[c - nExtract].out;
      memset(&aCall[c - nExtract].out, 0, sizeof(ParColumn));
      continue;
    }
    if( c>=nExtract && aCall[c - nExtract].bAtPos && aSeq==0 ){
      /* Results at positions: rows iFrom.. of them, in order. */
      aSeq = parBigMalloc((sqlite3_int64)(nRow ? nRow : 1)*4);
      if( aSeq==0 ){ rc = SQLITE_NOMEM; break; }
      #pragma omp parallel for num_threads(nThread) schedule(static)
      for(j=0; j<nRow; j++) aSeq[j] = (uint32_t)(iFrom + j);
    }
    rc = parColumnGather(pSrc, c>=nExtract && aCall[c - nExtract].bAtPos ? aSeq : aRow,
                         (sqlite3_int64)nRow, nThread, &pOut->aCol[c]);
    if( rc==SQLITE_OK && c>=nExtract && pSrc->pDict && !pSrc->bBorrowDict ){
      /* group_concat's own dictionary moves with its values. */
      pOut->aCol[c].bBorrowDict = 0;
      aCall[c - nExtract].out.bBorrowDict = 1;
    }
  }
  parBigFree(aSeq);
  return rc;
}

/* Is there room under memory_mb for what the operator makes besides pIn
** (an upper bound: key words twice, the order, heads, each call's
** column, the result)?  Else *pzErr. */
static int winFits(const ParContext *pCtx, const ParPlan *pPlan, const ParBatch *pIn,
                   char **pzErr){
  const ParPlanWindow *pW = pPlan->pWindow;
  sqlite3_int64 mx = parMemLimit(pCtx);
  double n = (double)pIn->nRow, nKey = 0;
  int i;
  for(i=0; i<pW->nWin; i++) nKey += pW->aWin[i].nPart + pW->aWin[i].nOrder;
  if( mx>0 && (double)parBatchBytes(pIn)
               + n * (16.0*2*nKey + 4*4 + 2 + 9.0*pW->nFunc + 16.0*pPlan->nCol) > (double)mx ){
    *pzErr = sqlite3_mprintf("memory limit of %lld MB exceeded while computing window "
                             "functions (see par_config('memory_mb'))", mx/(1024*1024));
    return SQLITE_FULL;
  }
  return SQLITE_OK;
}

int parWindowRun(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
                 ParBatch **ppOut, int *pbNative, char **pzErr, const char **pzStrategy){
  const ParPlanWindow *pW = pPlan->pWindow;
  size_t n = (size_t)pIn->nRow, j, iFrom, nOut;
  int nThread = parThreadsFor(pCtx, pIn->nRow);
  sqlite3_int64 iLimit, iOffset;
  WinCall *aCall = 0;
  WinOrder o;
  int rc, g, k, f, bOver = 0;

  *ppOut = 0;
  *pbNative = 0;
  *pzErr = 0;
  *pzStrategy = "sort, then partitions in parallel";
  memset(&o, 0, sizeof(o));
  if( n>(size_t)UINT32_MAX - 1 ) return SQLITE_TOOBIG;
  for(g=0; g<pW->nWin; g++){
    const ParWinDef *pD = &pW->aWin[g];
    for(k=0; k<pD->nPart; k++){
      if( winUnknownText(pIn, pD->aPart[k].iCol, pD->aPart[k].eColl) ) *pbNative = 1;
    }
    for(k=0; k<pD->nOrder; k++){
      if( winUnknownText(pIn, pD->aOrder[k].iCol, pD->aOrder[k].eColl) ) *pbNative = 1;
    }
  }
  if( *pbNative ) return SQLITE_OK;
  rc = parLimitEval(db, pPlan, pW->zLimit, &iLimit, &iOffset, pbNative);
  if( rc || *pbNative ) return rc;
  rc = winFits(pCtx, pPlan, pIn, pzErr);
  if( rc ) return rc;

  aCall = sqlite3_malloc64(sizeof(WinCall)*(pW->nFunc+1));
  o.aPerm = parBigMalloc((sqlite3_int64)(n ? n : 1)*4);
  o.aHead = parBigMalloc((sqlite3_int64)(n ? n : 1));
  o.bIdentity = 1;
  if( aCall==0 || o.aPerm==0 || o.aHead==0 ){ rc = SQLITE_NOMEM; goto done; }
  memset(aCall, 0, sizeof(WinCall)*(pW->nFunc+1));
  for(f=0; f<pW->nFunc && rc==SQLITE_OK && !*pbNative; f++){
    const ParWinFunc *pF = &pW->aFunc[f];
    aCall[f].pF = pF;
    if( winIsRangeOffset(&pF->frame) ){
      /* One ORDER BY term (SQLite's rule); texts under a collation the
      ** kernels know. */
      const ParWinDef *pD = &pW->aWin[pF->iWin];
      int e = pD->nOrder==1 ? winRangeFits(&pIn->aCol[pD->aOrder[0].iCol], n, &pF->frame) : -1;
      if( e<0 || (e>0 && pD->aOrder[0].eColl<0) ){
        *pbNative = 1;
        break;
      }
    }
    rc = winCallInit(db, &aCall[f], pIn, n, nThread, pbNative);
  }
  if( rc || *pbNative ) goto done;
  #pragma omp parallel for num_threads(nThread) schedule(static)
  for(j=0; j<n; j++) o.aPerm[j] = (uint32_t)j;

  /* The innermost window first: each sorts the order the one before left. */
  for(g=pW->nWin-1; g>=0 && rc==SQLITE_OK; g--){
    const ParWinDef *pD = &pW->aWin[g];
    ParSortKey aKey[2*PAR_ROWS_MAX];
    if( pD->nPart ) memcpy(aKey, pD->aPart, sizeof(ParSortKey)*pD->nPart);
    if( pD->nOrder ) memcpy(aKey + pD->nPart, pD->aOrder, sizeof(ParSortKey)*pD->nOrder);
    rc = winSort(pIn, aKey, pD->nPart + pD->nOrder, pD->nPart, n, nThread, &o);
    if( rc==SQLITE_OK ) rc = winRangeKeys(pW, g, pIn, n, nThread, &o);
    for(f=0; f<pW->nFunc && rc==SQLITE_OK; f++){
      if( aCall[f].pF->iWin!=g ) continue;
      aCall[f].bAtPos = g==0;
      if( aCall[f].bFast ) rc = winGatherArg(&aCall[f], pIn, o.aPerm, n, nThread);
    }
    if( rc==SQLITE_OK ) rc = winValues(pW, g, aCall, &o, pIn, nThread, &bOver);
    for(f=0; f<pW->nFunc && rc==SQLITE_OK && !*pbNative; f++){
      if( aCall[f].pF->iWin==g && aCall[f].bConcat ){
        rc = winConcat(&aCall[f], &pW->aWin[g], &o, pIn, parMemLimit(pCtx), pbNative);
      }
    }
    if( rc==SQLITE_OK && *pbNative ) goto done;
    sqlite3_free(o.aRK1);
    sqlite3_free(o.aRK2);
    o.aRK1 = o.aRK2 = 0;
    for(f=0; f<pW->nFunc; f++){
      parBigFree(aCall[f].aV);
      parBigFree(aCall[f].aVNull);
      aCall[f].aV = 0;
      aCall[f].aVNull = 0;
      if( aCall[f].pF->iWin==g ){
        sqlite3_free(aCall[f].aK1);
        sqlite3_free(aCall[f].aK2);
        aCall[f].aK1 = aCall[f].aK2 = 0;
      }
    }
    if( rc==SQLITE_OK && bOver ){
      /* sum() overflows: SQLite says "integer overflow". */
      *pbNative = 1;
      goto done;
    }
  }
  if( rc==SQLITE_OK && parStopped() ) rc = SQLITE_INTERRUPT;
  if( rc ) goto done;

  iFrom = (size_t)iOffset<n ? (size_t)iOffset : n;
  nOut = n - iFrom;
  if( iLimit>=0 && (size_t)iLimit<nOut ) nOut = (size_t)iLimit;
  rc = winResult(pPlan, pIn, aCall, o.aPerm + iFrom, iFrom, nOut, nThread, ppOut);

done:
  sqlite3_free(o.aRK1);
  sqlite3_free(o.aRK2);
  for(f=0; aCall && f<pW->nFunc; f++){
    parAggRunClear(&aCall[f].run);
    parColumnClear(&aCall[f].out);
    parBigFree(aCall[f].aV);
    parBigFree(aCall[f].aVNull);
    sqlite3_free(aCall[f].aK1);
    sqlite3_free(aCall[f].aK2);
  }
  sqlite3_free(aCall);
  parBigFree(o.aPerm);
  parBigFree(o.aHead);
  parBigFree(o.aPart);
  if( rc ){
    parBatchFree(*ppOut);
    *ppOut = 0;
    if( rc==SQLITE_NOMEM && *pzErr==0 ){
      *pzErr = sqlite3_mprintf("out of memory computing window functions over %lld rows",
                               (long long)n);
    }
  }
  return rc;
}
