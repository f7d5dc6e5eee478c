/*
** plan_window.c: planning the window operator, for a SELECT whose select
** list calls window functions over the rows of its FROM and WHERE:
**
**   SELECT id, sum(v) OVER (PARTITION BY k ORDER BY ts) AS run,
**          rank() OVER w
**     FROM t WHERE ... WINDOW w AS (ORDER BY v DESC)
**
** reads the extraction query
**
**   SELECT id, k, ts, v FROM t WHERE (...)   -- items, window keys, arguments
**
** then the window operator (op_window.c) sorts the rows by each window,
** computes every call, and returns the items straight from its result
** (ParPlan.aDirect) when each is a column of the row or one whole window
** call; else (an expression around a call, an ORDER BY the windows' order
** does not give) SQLite evaluates the select list, ORDER BY and LIMIT
** over the operator's rows in a final SQL (winFinalSql).  Windows over a
** GROUP BY's result are SQLite's, in the group-by's final SQL (plan.c;
** the order of the groups: buildGroupWindowOrder).
**
** SQLite's order (window.c of SQLite 3.40, sqlite3WindowRewrite and
** sqlite3WindowLink): the calls whose window is the same as the first
** call's (PARTITION BY, ORDER BY and frame, after sqlite3WindowUpdate
** gave the ranking functions, lag and lead frames of their own) are
** evaluated over a subquery ORDER BY that window's PARTITION BY and ORDER
** BY terms; every other call moves into that subquery, which does the
** same with its first call, and so on.  The innermost subquery reads the
** rows as SQLite's plan does; each level sorts the rows of the one inside
** with SQLite's sorter, which is stable (plan_sort.c: ties in the order
** they came).  So: windows in the order of their first call (aWin[0]
** outermost), each a stable sort of the rows of the next, and the result
** in aWin[0]'s order.  A top-level ORDER BY that is a prefix of aWin[0]'s
** PARTITION BY and ORDER BY (same terms, directions) is what SQLite drops
** as redundant; another sorts the rows in the final SQL as SQLite's sorter
** sorts them (stable), unless it sorts by a window call, which SQLite
** computes again in a subquery of its own (resolveAlias copies the item):
** native.  Also native: DISTINCT, EXCLUDE, bounds that are not integer
** literals, a window built on a window built on another, ntile / nth_value /
** lag / lead arguments that are not integer literals, group_concat over
** a frame that starts FOLLOWING or ends PRECEDING.
*/
#include "parext.h"
#include "plan.h"
#include "planint.h"

#include <string.h>

/* The integer literal of tokens [t0, t1): 1 with *pV, else 0. */
static int winLiteral(const ParSelect *pSel, int t0, int t1, sqlite3_int64 *pV){
  const ParToken *a = pSel->aTok;
  sqlite3_int64 v = 0;
  int k;
  buildStripParens(a, &t0, &t1);
  if( t1-t0!=1 || a[t0].eType!=PT_NUMBER || a[t0].n>15 ) return 0;
  for(k=0; k<a[t0].n; k++){
    char c = pSel->zSql[a[t0].i + k];
    if( c<'0' || c>'9' ) return 0;
    v = v*10 + (c - '0');
  }
  *pV = v;
  return 1;
}

/* Is the text of tokens [t0, t1) free of aggregate and window function
** calls (then it can be an extraction column)? */
static int winPlainExpr(ParBuild *pB, int t0, int t1){
  const ParSelect *pSel = pB->pSel;
  const ParToken *a = pSel->aTok;
  int i;
  for(i=t0; i+1<t1; i++){
    if( (a[i].eType==PT_ID || a[i].eType==PT_QID) && a[i+1].eType==PT_LP ){
      char *zName = parDequote(pSel->zSql + a[i].i, a[i].n);
      int d = 0, j, nArg = 0, bAgg;
      if( zName==0 ){ buildNoMem(pB); return 0; }
      for(j=i+1; j<t1; j++){
        if( a[j].eType==PT_LP ) d++;
        if( a[j].eType==PT_RP && --d==0 ) break;
        if( d==1 && a[j].eType==PT_COMMA ) nArg++;
      }
      if( j>i+2 ) nArg++;
      bAgg = buildIsAggFunc(pB, zName, nArg);
      sqlite3_free(zName);
      if( bAgg ) return 0;
    }
  }
  return 1;
}

/* Extraction column of the expression of tokens [t0, t1), or -1 (with
** zWhy) when it calls an aggregate. */
static int winExpr(ParBuild *pB, int t0, int t1){
  const ParSelect *pSel = pB->pSel;
  ParSpan s;
  if( !winPlainExpr(pB, t0, t1) ){
    buildWhy(pB, "an aggregate inside a window%s", "");
    return -1;
  }
  memset(&s, 0, sizeof(s));
  s.iTok = t0;
  s.iTokEnd = t1;
  s.iStart = pSel->aTok[t0].i;
  s.iEnd = pSel->aTok[t1-1].i + pSel->aTok[t1-1].n;
  return buildExpr(pB, parSpanText(pSel->zSql, s));
}

/* The last WINDOW definition named zName (SQLite 3.40 takes it, no
** error), or NULL.  pBefore: only among the definitions before it (a
** definition built on another links to the latest one defined earlier:
** sqlite3WindowChain runs as the parser reads the clause). */
static const ParWinSpec *winDefNamedBefore(const ParSelect *pSel, const char *zName,
                                           const ParWinSpec *pBefore){
  const ParWinSpec *pW = 0;
  int k, n = pSel->nWinDef;
  if( pBefore && pBefore>=pSel->aWinDef && pBefore<pSel->aWinDef + n ){
    n = (int)(pBefore - pSel->aWinDef);
  }
  for(k=0; k<n; k++){
    if( pSel->aWinDef[k].zName && sqlite3_stricmp(pSel->aWinDef[k].zName, zName)==0 ){
      pW = &pSel->aWinDef[k];
    }
  }
  return pW;
}

static const ParWinSpec *winDefNamed(const ParSelect *pSel, const char *zName){
  return winDefNamedBefore(pSel, zName, 0);
}

/* The window spec call c uses (its own, or the WINDOW definition it
** names), or NULL with zWhy.  A window built on another ("OVER (w ORDER BY
** x)", "v AS (w ROWS 2 PRECEDING)") takes the other's PARTITION BY, and
** its ORDER BY when it has none, and keeps its own frame (window.c,
** sqlite3WindowChain: anything else is SQLite's error); it is made in
** pB->aWinChain, one slot per call. */
static const ParWinSpec *winSpecOf(ParBuild *pB, const ParWinCall *pC){
  const ParSelect *pSel = pB->pSel;
  const ParWinSpec *pW = &pC->win, *pBase;
  ParWinSpec *pM;
  if( pC->zOver ){
    pW = winDefNamed(pSel, pC->zOver);
    if( pW==0 ){ buildWhy(pB, "a window the planner cannot find%s", ""); return 0; }
  }
  if( pW->eExclude!=PAR_EXCLUDE_NONE ){
    /* Even EXCLUDE NO OTHERS: SQLite 3.40 then evaluates the frame
    ** another way (window.c: eExclude set, each frame scanned whole and
    ** finalized), and keeps the window apart from one without it. */
    buildWhy(pB, "a window frame with EXCLUDE%s", "");
    return 0;
  }
  if( pW->zBase==0 ) return pW;
  pBase = winDefNamedBefore(pSel, pW->zBase, pW);
  if( pBase==0 || pBase->zBase ){
    buildWhy(pB, "a window built on a name no earlier definition has, or on a window "
             "built on another%s", "");
    return 0;
  }
  if( pB->aWinChain==0 ){
    pB->aWinChain = sqlite3_malloc64(sizeof(ParWinSpec)*(pSel->nWinCall+1));
    if( pB->aWinChain==0 ){ buildNoMem(pB); return 0; }
  }
  pM = &pB->aWinChain[pC - pSel->aWinCall];
  *pM = *pW;
  pM->zBase = 0;
  pM->nPartition = pBase->nPartition;
  pM->aPartition = pBase->aPartition;
  if( pW->nOrder==0 ){
    pM->nOrder = pBase->nOrder;
    pM->aOrder = pBase->aOrder;
  }
  return pM;
}

/* One bound of a frame: *peBound, *piN.  0 with zWhy when it is not an
** integer literal. */
static int winBound(ParBuild *pB, const ParFrameBound *pBd, int eType, int *peBound,
                    sqlite3_int64 *piN){
  *peBound = pBd->eBound;
  *piN = 0;
  if( pBd->eBound==PAR_BOUND_PRECEDING || pBd->eBound==PAR_BOUND_FOLLOWING ){
    if( !winLiteral(pB->pSel, pBd->expr.iTok, pBd->expr.iTokEnd, piN) ){
      buildWhy(pB, "a frame bound that is not an integer literal%s", "");
      return 0;
    }
  }
  return 1;
}

/* The frame of call pC over window pW, as SQLite sets it (window.c:
** sqlite3WindowAlloc, then sqlite3WindowUpdate for the built-in window
** functions, which ignore the frame written). */
static int winFrame(ParBuild *pB, const ParWinSpec *pW, int eFunc, ParWinFrame *pF){
  static const struct { int eFunc, eType, eStart, eEnd; } aUp[] = {
    { PAR_WF_ROW_NUMBER,   PAR_FRAME_ROWS,   PAR_BOUND_UNBOUNDED_PRECEDING, PAR_BOUND_CURRENT_ROW },
    { PAR_WF_DENSE_RANK,   PAR_FRAME_RANGE,  PAR_BOUND_UNBOUNDED_PRECEDING, PAR_BOUND_CURRENT_ROW },
    { PAR_WF_RANK,         PAR_FRAME_RANGE,  PAR_BOUND_UNBOUNDED_PRECEDING, PAR_BOUND_CURRENT_ROW },
    { PAR_WF_PERCENT_RANK, PAR_FRAME_GROUPS, PAR_BOUND_CURRENT_ROW, PAR_BOUND_UNBOUNDED_FOLLOWING },
    { PAR_WF_CUME_DIST,    PAR_FRAME_GROUPS, PAR_BOUND_FOLLOWING, PAR_BOUND_UNBOUNDED_FOLLOWING },
    { PAR_WF_NTILE,        PAR_FRAME_ROWS,   PAR_BOUND_CURRENT_ROW, PAR_BOUND_UNBOUNDED_FOLLOWING },
    { PAR_WF_LEAD,         PAR_FRAME_ROWS,   PAR_BOUND_UNBOUNDED_PRECEDING,
                                             PAR_BOUND_UNBOUNDED_FOLLOWING },
    { PAR_WF_LAG,          PAR_FRAME_ROWS,   PAR_BOUND_UNBOUNDED_PRECEDING, PAR_BOUND_CURRENT_ROW },
  };
  int k;
  memset(pF, 0, sizeof(*pF));
  for(k=0; k<(int)(sizeof(aUp)/sizeof(aUp[0])); k++){
    if( aUp[k].eFunc==eFunc ){
      pF->eType = aUp[k].eType;
      pF->eStart = aUp[k].eStart;
      pF->eEnd = aUp[k].eEnd;
      pF->iStart = pF->eStart==PAR_BOUND_FOLLOWING ? 1 : 0;
      return 1;
    }
  }
  if( pW->eFrame==PAR_FRAME_NONE ){
    pF->eType = PAR_FRAME_RANGE;
    pF->eStart = PAR_BOUND_UNBOUNDED_PRECEDING;
    pF->eEnd = PAR_BOUND_CURRENT_ROW;
    return 1;
  }
  pF->eType = pW->eFrame;
  if( !winBound(pB, &pW->start, pW->eFrame, &pF->eStart, &pF->iStart) ) return 0;
  if( pW->bBetween ){
    if( !winBound(pB, &pW->end, pW->eFrame, &pF->eEnd, &pF->iEnd) ) return 0;
  }else{
    pF->eEnd = PAR_BOUND_CURRENT_ROW;
  }
  return 1;
}

/* The function of call pC: PAR_WF_*, with agg.eFunc for an aggregate;
** 0 with zWhy when the operator does not compute it. */
static int winFunc(ParBuild *pB, const ParWinCall *pC, ParWinFunc *pF){
  static const struct { const char *z; int e, nMin, nMax; } aFn[] = {
    { "row_number", PAR_WF_ROW_NUMBER, 0, 0 }, { "rank", PAR_WF_RANK, 0, 0 },
    { "dense_rank", PAR_WF_DENSE_RANK, 0, 0 }, { "percent_rank", PAR_WF_PERCENT_RANK, 0, 0 },
    { "cume_dist", PAR_WF_CUME_DIST, 0, 0 }, { "ntile", PAR_WF_NTILE, 1, 1 },
    { "lag", PAR_WF_LAG, 1, 3 }, { "lead", PAR_WF_LEAD, 1, 3 },
    { "first_value", PAR_WF_FIRST_VALUE, 1, 1 }, { "last_value", PAR_WF_LAST_VALUE, 1, 1 },
    { "nth_value", PAR_WF_NTH_VALUE, 2, 2 },
  };
  static const struct { const char *z; int e; } aAgg[] = {
    { "count", PAR_AGG_COUNT }, { "sum", PAR_AGG_SUM }, { "total", PAR_AGG_TOTAL },
    { "avg", PAR_AGG_AVG }, { "min", PAR_AGG_MIN }, { "max", PAR_AGG_MAX },
    { "group_concat", PAR_AGG_GROUP_CONCAT },
  };
  int k, nArg = pC->bStar ? 0 : pC->nArg;
  if( pC->bDistinct ){ buildWhy(pB, "a window call with DISTINCT%s", ""); return 0; }
  if( buildIsAppFunc(pB, pC->zName, nArg) ){
    buildWhy(pB, "%s() is the application's", pC->zName);
    return 0;
  }
  for(k=0; k<(int)(sizeof(aFn)/sizeof(aFn[0])); k++){
    if( sqlite3_stricmp(pC->zName, aFn[k].z)==0 && nArg>=aFn[k].nMin && nArg<=aFn[k].nMax ){
      pF->eFunc = aFn[k].e;
      return 1;
    }
  }
  for(k=0; k<(int)(sizeof(aAgg)/sizeof(aAgg[0])); k++){
    if( sqlite3_stricmp(pC->zName, aAgg[k].z)==0 ){
      int e = aAgg[k].e;
      if( e==PAR_AGG_COUNT && nArg==0 ) e = PAR_AGG_COUNT_STAR;
      if( (e==PAR_AGG_COUNT_STAR && !pC->bStar && nArg!=0)
       || (e==PAR_AGG_GROUP_CONCAT && nArg!=1 && nArg!=2)
       || (e!=PAR_AGG_COUNT_STAR && e!=PAR_AGG_GROUP_CONCAT && nArg!=1) ){
        break;
      }
      pF->eFunc = PAR_WF_AGG;
      pF->agg.eFunc = e;
      return 1;
    }
  }
  buildWhy(pB, "%s() as a window function the kernels do not compute", pC->zName);
  return 0;
}

/* Keys of a window's PARTITION BY (bOrder 0) or ORDER BY terms. */
static int winKeys(ParBuild *pB, const ParWinSpec *pW, int bOrder, int *pn, ParSortKey **pa){
  int n = bOrder ? pW->nOrder : pW->nPartition, j;
  ParSortKey *a;
  *pn = n;
  *pa = 0;
  if( n==0 ) return 1;
  if( n>PAR_ROWS_MAX ){ buildWhy(pB, "a window of too many terms%s", ""); return 0; }
  a = *pa = sqlite3_malloc64(sizeof(ParSortKey)*n);
  if( a==0 ){ buildNoMem(pB); return 0; }
  memset(a, 0, sizeof(ParSortKey)*n);
  for(j=0; j<n; j++){
    const ParSpan *pS = bOrder ? &pW->aOrder[j].span : &pW->aPartition[j];
    a[j].iCol = winExpr(pB, pS->iTok, pS->iTokEnd);
    if( a[j].iCol<0 || pB->rc ) return 0;
    a[j].zText = parSpanText(pB->pSel->zSql, *pS);
    if( a[j].zText==0 ){ buildNoMem(pB); return 0; }
    if( bOrder ){
      const ParExpr *pO = &pW->aOrder[j];
      a[j].flags = pO->bDesc ? PAR_KEY_DESC : 0;
      if( pO->eNulls==PAR_NULLS_LAST || (pO->eNulls==PAR_NULLS_DEFAULT && pO->bDesc) ){
        a[j].flags |= PAR_KEY_NULLS_LAST;
      }
    }
  }
  return 1;
}

static int winSameKeys(const ParSortKey *a, int na, const ParSortKey *b, int nb){
  int j;
  if( na!=nb ) return 0;
  for(j=0; j<na; j++){
    if( a[j].iCol!=b[j].iCol || a[j].flags!=b[j].flags ) return 0;
  }
  return 1;
}

static int winSameFrame(const ParWinFrame *a, const ParWinFrame *b){
  return a->eType==b->eType && a->eStart==b->eStart && a->eEnd==b->eEnd
      && a->iStart==b->iStart && a->iEnd==b->iEnd;
}

void parPlanWindowFree(ParPlanWindow *pW){
  int i, j;
  if( pW==0 ) return;
  for(i=0; i<pW->nWin; i++){
    ParWinDef *pD = &pW->aWin[i];
    for(j=0; j<pD->nPart; j++) sqlite3_free(pD->aPart[j].zText);
    for(j=0; j<pD->nOrder; j++) sqlite3_free(pD->aOrder[j].zText);
    sqlite3_free(pD->aPart);
    sqlite3_free(pD->aOrder);
    sqlite3_free(pD->zText);
  }
  for(i=0; i<pW->nFunc; i++) sqlite3_free(pW->aFunc[i].zText);
  sqlite3_free(pW->aOutCol);
  sqlite3_free(pW->aWin);
  sqlite3_free(pW->aFunc);
  sqlite3_free(pW->zLimit);
  sqlite3_free(pW);
}

/* The calls, their windows (aWin: one per distinct window in the order
** of first use, SQLite's), their arguments.  aItemCall[i]: the call item
** i is, or -1. */
static int winCalls(ParBuild *pB, ParPlanWindow *pPW, int *aItemCall, int bFinal){
  ParSelect *pSel = pB->pSel;
  const char *z = pSel->zSql;
  ParWinFrame *aFrame;
  int c, k;
  pPW->aFunc = sqlite3_malloc64(sizeof(ParWinFunc)*pSel->nWinCall);
  pPW->aWin = sqlite3_malloc64(sizeof(ParWinDef)*pSel->nWinCall);
  aFrame = sqlite3_malloc64(sizeof(ParWinFrame)*pSel->nWinCall);
  if( pPW->aFunc==0 || pPW->aWin==0 || aFrame==0 ){
    sqlite3_free(aFrame);
    buildNoMem(pB);
    return 0;
  }
  memset(pPW->aFunc, 0, sizeof(ParWinFunc)*pSel->nWinCall);
  memset(pPW->aWin, 0, sizeof(ParWinDef)*pSel->nWinCall);
  for(c=0; c<pSel->nWinCall; c++){
    const ParWinCall *pC = &pSel->aWinCall[c];
    ParWinFunc *pF = &pPW->aFunc[pPW->nFunc++];
    const ParWinSpec *pW;
    ParWinDef d;
    pF->iWin = -1;
    pF->iArg = pF->iDefault = pF->iFilter = pF->agg.iArg = pF->agg.iText = pF->agg.iSep = -1;
    pF->zText = parSpanText(z, pC->call);
    if( pF->zText==0 ){ buildNoMem(pB); break; }
    /* Without a final SQL, each call is a whole item (winNeedsFinal). */
    if( !bFinal ) aItemCall[pC->iExpr] = c;
    if( !winFunc(pB, pC, pF) ) break;
    if( (pW = winSpecOf(pB, pC))==0 ) break;
    if( !winFrame(pB, pW, pF->eFunc, &pF->frame) ) break;

    /* Arguments. */
    switch( pF->eFunc ){
      case PAR_WF_AGG:
        if( pF->agg.eFunc==PAR_AGG_GROUP_CONCAT ){
          /* Its values and separators as the text SQLite concatenates
          ** (sqlite3_value_text): read by SQLite, as the group-by's are. */
          const ParSpan *a = pC->aArg;
          if( !winPlainExpr(pB, a[0].iTok, a[0].iTokEnd)
           || (pC->nArg==2 && !winPlainExpr(pB, a[1].iTok, a[1].iTokEnd)) ){
            buildWhy(pB, "an aggregate inside a window%s", "");
            break;
          }
          /* Removals by byte counts (groupConcatInverse): followed in
          ** SQLite's sequence, which the operator has for frames that
          ** start before or at their row and end at or after it. */
          if( pF->frame.eStart!=PAR_BOUND_UNBOUNDED_PRECEDING
           && (pF->frame.eStart==PAR_BOUND_FOLLOWING || pF->frame.eEnd==PAR_BOUND_PRECEDING) ){
            buildWhy(pB, "group_concat() over a frame that starts FOLLOWING or ends "
                     "PRECEDING%s", "");
            break;
          }
          pF->agg.iText = buildExpr(pB, sqlite3_mprintf("CAST((%.*s) AS TEXT)",
                                    a[0].iEnd - a[0].iStart, z + a[0].iStart));
          if( pC->nArg==2 ){
            pF->agg.iSep = buildExpr(pB, sqlite3_mprintf("CAST((%.*s) AS TEXT)",
                                     a[1].iEnd - a[1].iStart, z + a[1].iStart));
          }
        }else if( pF->agg.eFunc!=PAR_AGG_COUNT_STAR ){
          pF->agg.iArg = winExpr(pB, pC->aArg[0].iTok, pC->aArg[0].iTokEnd);
        }
        pF->agg.zText = 0;
        break;
      case PAR_WF_NTILE:
        if( !winLiteral(pSel, pC->aArg[0].iTok, pC->aArg[0].iTokEnd, &pF->iN) || pF->iN<1 ){
          buildWhy(pB, "ntile() of an argument that is not a positive integer literal%s", "");
        }
        break;
      case PAR_WF_NTH_VALUE:
        pF->iArg = winExpr(pB, pC->aArg[0].iTok, pC->aArg[0].iTokEnd);
        if( !winLiteral(pSel, pC->aArg[1].iTok, pC->aArg[1].iTokEnd, &pF->iN) || pF->iN<1 ){
          buildWhy(pB, "nth_value() of an N that is not a positive integer literal%s", "");
        }
        break;
      case PAR_WF_LAG: case PAR_WF_LEAD:
        pF->iArg = winExpr(pB, pC->aArg[0].iTok, pC->aArg[0].iTokEnd);
        pF->iN = 1;
        if( pC->nArg>=2 && !winLiteral(pSel, pC->aArg[1].iTok, pC->aArg[1].iTokEnd, &pF->iN) ){
          buildWhy(pB, "lag() or lead() of an offset that is not an integer literal%s", "");
        }
        if( pC->nArg>=3 ) pF->iDefault = winExpr(pB, pC->aArg[2].iTok, pC->aArg[2].iTokEnd);
        break;
      case PAR_WF_FIRST_VALUE: case PAR_WF_LAST_VALUE:
        pF->iArg = winExpr(pB, pC->aArg[0].iTok, pC->aArg[0].iTokEnd);
        break;
    }
    if( pC->bFilter && pB->rc==SQLITE_OK && pB->pPlan->zWhy==0 ){
      /* SQLite steps (and removes) only the rows where the filter is true:
      ** the truth of the value as its OP_IfNot reads it, CASE's too. */
      if( pF->eFunc!=PAR_WF_AGG || !winPlainExpr(pB, pC->filter.iTok, pC->filter.iTokEnd) ){
        buildWhy(pB, "a FILTER the planner does not follow%s", "");
        break;
      }
      pF->iFilter = buildExpr(pB, sqlite3_mprintf("CASE WHEN (%.*s) THEN 1 ELSE 0 END",
                                                  pC->filter.iEnd - pC->filter.iStart,
                                                  z + pC->filter.iStart));
    }
    if( pB->rc || pB->pPlan->zWhy ) break;

    /* Its window: the same as an earlier call's (keys and frame), or new. */
    memset(&d, 0, sizeof(d));
    if( !winKeys(pB, pW, 0, &d.nPart, &d.aPart) || !winKeys(pB, pW, 1, &d.nOrder, &d.aOrder) ){
      pPW->aWin[pPW->nWin++] = d;      /* freed with the plan */
      break;
    }
    aFrame[c] = pF->frame;
    for(k=0; k<c && pF->iWin<0; k++){
      const ParWinDef *pD = &pPW->aWin[pPW->aFunc[k].iWin];
      if( winSameKeys(pD->aPart, pD->nPart, d.aPart, d.nPart)
       && winSameKeys(pD->aOrder, pD->nOrder, d.aOrder, d.nOrder)
       && winSameFrame(&aFrame[k], &pF->frame) ){
        pF->iWin = pPW->aFunc[k].iWin;
      }
    }
    if( pF->iWin>=0 ){
      pPW->aWin[pPW->nWin] = d;        /* not kept: free it below */
      for(k=0; k<d.nPart; k++) sqlite3_free(d.aPart[k].zText);
      for(k=0; k<d.nOrder; k++) sqlite3_free(d.aOrder[k].zText);
      sqlite3_free(d.aPart);
      sqlite3_free(d.aOrder);
      memset(&pPW->aWin[pPW->nWin], 0, sizeof(ParWinDef));
    }else{
      d.zText = parSpanText(z, pC->over);
      if( d.zText==0 ) buildNoMem(pB);
      pF->iWin = pPW->nWin;
      pPW->aWin[pPW->nWin++] = d;
    }
  }
  sqlite3_free(aFrame);
  return pB->rc==SQLITE_OK && pB->pPlan->zWhy==0;
}

/* Are tokens [s0, s1) and [t0, t1) the same (names in any case)? */
static int winSameTokens(const ParSelect *pSel, int s0, int s1, int t0, int t1){
  buildStripParens(pSel->aTok, &s0, &s1);
  buildStripParens(pSel->aTok, &t0, &t1);
  return buildTokensEqual(pSel, s0, s1, t0, t1);
}

/* A top-level ORDER BY: each term the same as the term in its place
** among the first window's PARTITION BY then ORDER BY terms (which
** sqlite3WindowRewrite finds redundant: the window's order is the
** result's)?  1 if so, else 0 (the final SQL sorts). */
static int winOrderBy(ParBuild *pB, const ParWinSpec *pW){
  const ParSelect *pSel = pB->pSel;
  int j;
  if( pSel->nOrder>pW->nPartition + pW->nOrder ) return 0;
  for(j=0; j<pSel->nOrder; j++){
    const ParExpr *pO = &pSel->aOrder[j];
    int bSame, t, k;
    /* SQLite reads a name of ORDER BY as a select-list alias first (and a
    ** lone number as an ordinal): the term may then be another value. */
    for(t=pO->span.iTok; t<pO->span.iTokEnd; t++){
      const ParToken *pT = &pSel->aTok[t];
      if( pT->eType==PT_NUMBER && pO->span.iTokEnd-pO->span.iTok==1 ){
        return 0;
      }
      if( pT->eType!=PT_ID && pT->eType!=PT_QID ) continue;
      for(k=0; k<pSel->nCol; k++){
        char *zName = pSel->aCol[k].zAlias ? parDequote(pSel->zSql + pT->i, pT->n) : 0;
        int bAlias = zName && sqlite3_stricmp(zName, pSel->aCol[k].zAlias)==0;
        sqlite3_free(zName);
        if( bAlias ) return 0;
      }
    }
    if( j<pW->nPartition ){
      const ParSpan *pP = &pW->aPartition[j];
      bSame = !pO->bDesc && pO->eNulls!=PAR_NULLS_LAST
           && winSameTokens(pSel, pO->span.iTok, pO->span.iTokEnd, pP->iTok, pP->iTokEnd);
    }else{
      const ParExpr *pT = &pW->aOrder[j - pW->nPartition];
      int eNullsO = pO->eNulls==PAR_NULLS_DEFAULT ? (pO->bDesc ? 2 : 1) : pO->eNulls;
      int eNullsT = pT->eNulls==PAR_NULLS_DEFAULT ? (pT->bDesc ? 2 : 1) : pT->eNulls;
      bSame = pO->bDesc==pT->bDesc && eNullsO==eNullsT
           && winSameTokens(pSel, pO->span.iTok, pO->span.iTokEnd, pT->span.iTok, pT->span.iTokEnd);
    }
    if( !bSame ) return 0;
  }
  return 1;
}

/* The subqueries (co-routines, materialized views) in zSql's query plan,
** or -1 when it does not prepare. */
static int winSubqueries(sqlite3 *db, const char *zSql, const ParParams *pParams){
  sqlite3_stmt *pStmt = 0;
  char *zEqp = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", zSql);
  int n = 0;
  if( zEqp==0 || sqlite3_prepare_v2(db, zEqp, -1, &pStmt, 0) ){
    sqlite3_free(zEqp);
    return -1;
  }
  sqlite3_free(zEqp);
  parParamsBind(pStmt, pParams);
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *z = (const char*)sqlite3_column_text(pStmt, 3);
    if( z && (strncmp(z, "CO-ROUTINE", 10)==0 || strncmp(z, "MATERIALIZE", 11)==0) ) n++;
  }
  sqlite3_finalize(pStmt);
  return n;
}

/* SQLite's loops over the tables must be the extraction's (the rows come
** in its order into the innermost window's sort). */
static void winCheckOrder(ParBuild *pB){
  ParPlan *pPlan = pB->pPlan;
  int bSort = 0;
  const char *z1;
  char *z2 = 0, *zSink;
  if( parQueryInt(pB->db, "PRAGMA reverse_unordered_selects", 0) ){
    buildWhy(pB, "reverse_unordered_selects is on, and the order of ties depends on it%s", "");
    return;
  }
  /* The SELECT's own loops, less the scans of its window subqueries. */
  z1 = buildSelectLoops(pB, &bSort);
  zSink = parSinkSql(pPlan->zExtract, (int)strlen(pPlan->zExtract), pPlan->nExtractCol);
  if( zSink ) z2 = buildLoops(pB->db, zSink, pPlan->pParams, &bSort);
  sqlite3_free(zSink);
  if( z1==0 || z2==0 ){
    buildWhy(pB, "the query plan could not be read%s", "");
  }else if( strcmp(z1, z2)!=0 ){
    buildWhy(pB, "SQLite would read the rows in another order than the extraction query, "
             "and the windows' order of ties depends on it%s", "");
  }else{
    /* The same loops, but walked backwards (a DESC index, a WITHOUT ROWID
    ** key read in reverse for a window's order): ties come reversed. */
    zSink = parSinkSql(pPlan->zExtract, (int)strlen(pPlan->zExtract), pPlan->nExtractCol);
    if( zSink==0 ){
      buildNoMem(pB);
    }else if( buildBackwardSteps(pB->db, pPlan->zSql, pPlan->pParams)
              !=buildBackwardSteps(pB->db, zSink, pPlan->pParams) ){
      buildWhy(pB, "SQLite walks an index backwards where the extraction query walks it "
               "forwards, and the windows' order of ties depends on it%s", "");
    }else if( winSubqueries(pB->db, pPlan->zSql, pPlan->pParams)
              - winSubqueries(pB->db, zSink, pPlan->pParams)!=pPlan->pWindow->nWin ){
      /* SQLite makes a subquery per window (sqlite3WindowRewrite): another
      ** count means it found two windows the same that the planner did
      ** not (t.a against a, (a) against a ...), or the reverse. */
      buildWhy(pB, "SQLite groups the window calls otherwise than the planner%s", "");
    }
    sqlite3_free(zSink);
  }
  sqlite3_free(z2);
}

/* Does ORDER BY term k call a window function: itself, or as the alias or
** ordinal of an item that does (select.c copies the item: resolveAlias)? */
static int winOrderCall(ParBuild *pB, int k){
  const ParSelect *pSel = pB->pSel;
  const ParExpr *pO = &pSel->aOrder[k];
  int t0 = pO->span.iTok, t1 = pO->span.iTokEnd, c, iItem = -1;
  sqlite3_int64 v;
  for(c=0; c<pSel->nWinCall; c++){
    if( pSel->aWinCall[c].eClause==PAR_CLAUSE_ORDER && pSel->aWinCall[c].iExpr==k ) return 1;
  }
  buildStripParens(pSel->aTok, &t0, &t1);
  if( t1-t0>=3 && parTokIs(pSel->zSql, &pSel->aTok[t1-2], "COLLATE") ) t1 -= 2;
  buildStripParens(pSel->aTok, &t0, &t1);
  if( winLiteral(pSel, t0, t1, &v) ){
    if( v>=1 && v<=pSel->nCol ) iItem = (int)v - 1;
  }else if( t1-t0==1 && (pSel->aTok[t0].eType==PT_ID || pSel->aTok[t0].eType==PT_QID) ){
    char *zName = parDequote(pSel->zSql + pSel->aTok[t0].i, pSel->aTok[t0].n);
    if( zName==0 ){ buildNoMem(pB); return 1; }
    for(c=0; c<pSel->nCol && iItem<0; c++){
      if( pSel->aCol[c].zAlias && sqlite3_stricmp(pSel->aCol[c].zAlias, zName)==0 ) iItem = c;
    }
    sqlite3_free(zName);
  }
  for(c=0; c<pSel->nWinCall && iItem>=0; c++){
    const ParWinCall *pC = &pSel->aWinCall[c];
    if( pC->eClause==PAR_CLAUSE_SELECT && pC->iExpr==iItem ) return 1;
  }
  return 0;
}

/* Does the SELECT need a final SQL over the operator's rows: an
** expression around a window call, a window call in ORDER BY, or an ORDER
** BY the window's order does not give?  1 if so, 0 if not, -1 (zWhy) when
** the first call's window is not found. */
static int winNeedsFinal(ParBuild *pB){
  const ParSelect *pSel = pB->pSel;
  int c, k;
  for(k=0; k<pSel->nOrder; k++){
    if( winOrderCall(pB, k) ){
      buildWhy(pB, "an ORDER BY term that is a window call (SQLite computes it again, "
               "in a subquery of its own)%s", "");
      return -1;
    }
  }
  for(c=0; c<pSel->nWinCall; c++){
    const ParWinCall *pC = &pSel->aWinCall[c];
    int t0, t1;
    t0 = pSel->aCol[pC->iExpr].span.iTok;
    t1 = pSel->aCol[pC->iExpr].span.iTokEnd;
    buildStripParens(pSel->aTok, &t0, &t1);
    if( t0!=pC->call.iTok || t1!=pC->call.iTokEnd ) return 1;
  }
  if( pSel->nOrder ){
    const ParWinSpec *pW = winSpecOf(pB, &pSel->aWinCall[0]);
    if( pW==0 ) return -1;
    if( !winOrderBy(pB, pW) ) return 1;
  }
  return 0;
}

/* The final SQL's column references: each name outside window calls that
** SQLite resolves as a column of FROM (not an ORDER BY alias) becomes an
** extraction column, read in the final SQL as the par_rows column of its
** affinity and collation (filled in by winFinalSql).  Before the
** extraction query is made.  0 with zWhy or on OOM. */
static int winFinalRefs(ParBuild *pB){
  const ParSelect *pSel = pB->pSel;
  int k, c;
  for(k=0; k<pSel->nRef && pB->rc==SQLITE_OK; k++){
    ParSpan s = pSel->aRef[k];
    char *zRef;
    for(c=0; c<pSel->nWinCall; c++){
      const ParSpan *pCall = &pSel->aWinCall[c].call;
      if( s.iStart>=pCall->iStart && s.iEnd<=pCall->iEnd ) break;
    }
    if( c<pSel->nWinCall || buildOrderAlias(pSel, s) ) continue;
    zRef = parSpanText(pSel->zSql, s);
    if( zRef==0 ){ buildNoMem(pB); return 0; }
    if( !buildResolves(pB, zRef) ){
      sqlite3_free(zRef);        /* an alias, or a keyword such as TRUE */
      continue;
    }
    buildRepl(pB, s, PAR_REPL_BARE, buildExpr(pB, zRef), -1);
  }
  return pB->rc==SQLITE_OK;
}

/* The final SQL over the operator's rows (par_rows: the extraction
** columns, then one column per call): the select list, ORDER BY and LIMIT
** with each window call replaced by its result (no affinity, the
** collation of its COLLATE as a function's result: buildReplText) and
** each column reference by its extraction column.  SQLite's sorter then
** orders the rows as it orders the windows' rows in the SELECT (stable,
** over the outermost window's order: the rows' order here).  0 with zWhy
** or on OOM. */
static int winFinalSql(ParBuild *pB, sqlite3_stmt *pExtract, int bUtf8){
  const ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  const char *z = pSel->zSql;
  sqlite3_str *pStr;
  sqlite3_stmt *pFinal = 0;
  int k, c, j;
  if( pPlan->nExtractCol + pSel->nWinCall>PAR_ROWS_MAX ){
    return buildWhy(pB, "more columns than par_rows serves%s", ""), 0;
  }
  for(k=0; k<pB->nRepl; k++){
    ParRepl *pR = &pB->aRepl[k];
    int e = buildCollation(pB, pExtract, pR->iCol, pR->span.iTok, pR->span.iTokEnd, bUtf8);
    if( e<0 ){
      return buildWhy(pB, "the collation of a column the final SQL reads is not known%s", ""), 0;
    }
    pR->cAff = parAffinityLetter(sqlite3_column_decltype(pExtract, pR->iCol));
    pR->cColl = PAR_ROWS_COLL[e];
  }
  for(c=0; c<pSel->nWinCall; c++){
    const ParWinCall *pC = &pSel->aWinCall[c];
    int t = -1;
    for(j=0; j<pC->nArg && t==-1; j++){
      t = parExprCollateTok(z, pSel->aTok, pC->aArg[j].iTok, pC->aArg[j].iTokEnd);
    }
    if( t==-2 ) return buildWhy(pB, "a window call under several COLLATEs%s", ""), 0;
    buildRepl(pB, pC->call, PAR_REPL_AGG, pPlan->nExtractCol + c, t);
  }
  if( pB->rc ) return 0;
  pPlan->pWindow->aOutCol = sqlite3_malloc64(sizeof(int)*(pB->nRepl+1));
  if( pPlan->pWindow->aOutCol==0 ){ buildNoMem(pB); return 0; }
  for(k=0; k<pB->nRepl; k++){
    for(j=0; j<pPlan->pWindow->nOutCol; j++){
      if( pPlan->pWindow->aOutCol[j]==pB->aRepl[k].iCol ) break;
    }
    if( j==pPlan->pWindow->nOutCol ) pPlan->pWindow->aOutCol[pPlan->pWindow->nOutCol++] = pB->aRepl[k].iCol;
  }
  pStr = sqlite3_str_new(pB->db);
  sqlite3_str_appendall(pStr, "SELECT ");
  buildSelectList(pB, pStr);
  for(k=0; k<pSel->nOrder; k++){
    char *zO = buildRewrite(pB, pSel->aOrder[k].span);
    sqlite3_str_appendf(pStr, "%s%s %.*s", k ? ", " : " ORDER BY ", zO ? zO : "",
                        pSel->aOrder[k].suffix.iEnd - pSel->aOrder[k].suffix.iStart,
                        z + pSel->aOrder[k].suffix.iStart);
    sqlite3_free(zO);
  }
  if( pSel->bLimit ){
    sqlite3_str_appendf(pStr, " LIMIT %.*s", pSel->limit.iEnd - pSel->limit.iStart,
                        z + pSel->limit.iStart);
  }
  pPlan->zFinal = sqlite3_str_finish(pStr);
  if( pPlan->zFinal==0 ){ buildNoMem(pB); return 0; }
  if( sqlite3_prepare_v2(pB->db, pPlan->zFinal, -1, &pFinal, 0) ){
    buildWhy(pB, "the final query does not prepare: %s", sqlite3_errmsg(pB->db));
  }
  sqlite3_finalize(pFinal);
  return pB->rc==SQLITE_OK && pPlan->zWhy==0;
}

void buildWindowPlan(ParBuild *pB){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  const char *z = pSel->zSql;
  ParPlanWindow *pPW;
  sqlite3_stmt *pExtract = 0;
  int *aItem = 0, *aItemCall = 0;
  int i, j, bUtf8, mReplaced, bFinal;

  if( pSel->zTreeWhy ){ buildWhy(pB, "%s", pSel->zTreeWhy); return; }
  if( !pSel->bFrom ){ buildWhy(pB, "no FROM clause%s", ""); return; }
  if( pSel->nGroup || pSel->bHaving || pSel->nAgg ){
    buildWhy(pB, "window functions over GROUP BY or aggregates%s", "");
    return;
  }
  if( pSel->bDistinct ){ buildWhy(pB, "window functions with DISTINCT%s", ""); return; }
  if( pSel->bStar || pSel->nCol!=pPlan->nCol ){
    buildWhy(pB, "SQL the parser does not follow%s", "");
    return;
  }
  if( buildOtherAggs(pB) ) return;
  if( (bFinal = winNeedsFinal(pB))<0 ) return;
  pPW = pPlan->pWindow = sqlite3_malloc(sizeof(ParPlanWindow));
  aItem = sqlite3_malloc64(sizeof(int)*(pSel->nCol+1));
  aItemCall = sqlite3_malloc64(sizeof(int)*(pSel->nCol+1));
  pB->zFrom = parSpanText(z, pSel->from);
  if( pPW ) memset(pPW, 0, sizeof(*pPW));
  if( pPW==0 || aItem==0 || aItemCall==0 || pB->zFrom==0 ){ buildNoMem(pB); goto done; }
  for(i=0; i<pSel->nCol; i++) aItemCall[i] = aItem[i] = -1;

  /* Extraction columns: the items that are no window call (or, with a
  ** final SQL, the column references it reads), then the windows' keys
  ** and the calls' arguments. */
  if( bFinal ){
    if( !winFinalRefs(pB) ) goto done;
  }else{
    for(i=0; i<pSel->nCol; i++){
      int bCall = 0;
      for(j=0; j<pSel->nWinCall; j++) if( pSel->aWinCall[j].iExpr==i ) bCall = 1;
      aItem[i] = bCall ? -1 : winExpr(pB, pSel->aCol[i].span.iTok, pSel->aCol[i].span.iTokEnd);
      if( pB->rc || pPlan->zWhy ) goto done;
    }
  }
  if( !winCalls(pB, pPW, aItemCall, bFinal) ) goto done;
  if( !bFinal && pSel->bLimit && (pPW->zLimit = buildLimitSql(pB))==0 ) goto done;

  /* The extraction query. */
  if( pB->nExpr==0 ) buildExpr(pB, sqlite3_mprintf("0"));
  buildPlainExtraction(pB, 0);
  if( pB->rc ) goto done;
  if( sqlite3_prepare_v2(pB->db, pPlan->zExtract, -1, &pExtract, 0) ){
    buildWhy(pB, "the extraction query does not prepare: %s", sqlite3_errmsg(pB->db));
    goto done;
  }
  if( sqlite3_column_count(pExtract)!=pPlan->nExtractCol ){
    buildWhy(pB, "SQL the parser does not follow%s", "");
    goto done;
  }
  winCheckOrder(pB);
  if( pPlan->zWhy || pB->rc ) goto done;

  /* Collations: of the keys, and of min/max's arguments. */
  bUtf8 = parDbIsUtf8(pB->db);
  mReplaced = parCollReplaced(pB->db);
  for(i=0; i<pSel->nWinCall; i++){
    const ParWinCall *pC = &pSel->aWinCall[i];
    const ParWinSpec *pW = winSpecOf(pB, pC);
    ParWinFunc *pF = &pPW->aFunc[i];
    ParWinDef *pD = &pPW->aWin[pF->iWin];
    if( pW==0 ) goto done;
    for(j=0; j<pD->nPart; j++){
      pD->aPart[j].eColl = buildKnownColl(buildCollation(pB, pExtract, pD->aPart[j].iCol,
          pW->aPartition[j].iTok, pW->aPartition[j].iTokEnd, bUtf8), mReplaced);
    }
    for(j=0; j<pD->nOrder; j++){
      pD->aOrder[j].eColl = buildKnownColl(buildCollation(pB, pExtract, pD->aOrder[j].iCol,
          pW->aOrder[j].span.iTok, pW->aOrder[j].span.iTokEnd, bUtf8), mReplaced);
    }
    if( pF->eFunc==PAR_WF_AGG && (pF->agg.eFunc==PAR_AGG_MIN || pF->agg.eFunc==PAR_AGG_MAX) ){
      pF->agg.eColl = buildKnownColl(buildCollation(pB, pExtract, pF->agg.iArg,
          pC->aArg[0].iTok, pC->aArg[0].iTokEnd, bUtf8), mReplaced);
    }
  }

  /* The view's columns: the final SQL's, or items of the row and the
  ** operator's results. */
  if( bFinal ){
    winFinalSql(pB, pExtract, bUtf8);
    goto done;
  }
  pPlan->aDirect = sqlite3_malloc64(sizeof(int)*(pSel->nCol+1));
  if( pPlan->aDirect==0 ){ buildNoMem(pB); goto done; }
  for(i=0; i<pSel->nCol; i++){
    pPlan->aDirect[i] = aItemCall[i]>=0 ? pPlan->nExtractCol + aItemCall[i] : aItem[i];
  }

done:
  sqlite3_finalize(pExtract);
  sqlite3_free(aItem);
  sqlite3_free(aItemCall);
}

/* Windows over a GROUP BY's result, which SQLite evaluates in the final
** SQL over par_rows (plan.c): they must see the groups in the order SQLite
** makes them.  sqlite3WindowRewrite puts the aggregate in a subquery whose
** ORDER BY is a window's PARTITION BY then ORDER BY terms; when that has
** as many terms as GROUP BY, select.c gives each key the direction of the
** term in its place.  par_rows holds the groups in ascending key order:
** the same unless a term is DESC, and then it does not matter only when
** the terms are the keys themselves (the window's sort orders the groups
** fully).  Every window is checked (the subquery's is one of them).
** aKeyTok: each key's tokens, [2k, 2k+1).  Returns 1 with zWhy when the
** SELECT must run natively. */
int buildGroupWindowOrder(ParBuild *pB, const int *aKeyTok){
  const ParSelect *pSel = pB->pSel;
  int i, j;
  for(i=0; i<pSel->nWinCall; i++){
    const ParWinCall *pC = &pSel->aWinCall[i];
    const ParWinSpec *pW = &pC->win, *pBase = 0;
    int nDesc = 0, bKeys = 1;
    if( pC->zOver ) pW = winDefNamed(pSel, pC->zOver);
    if( pW && pW->zBase ) pBase = winDefNamedBefore(pSel, pW->zBase, pW);
    if( pW==0 || (pW->zBase && (pBase==0 || pBase->zBase)) ){
      return buildWhy(pB, "a window the planner cannot find%s", "");
    }
    {
      const ParSpan *aPart = pBase ? pBase->aPartition : pW->aPartition;
      int nPart = pBase ? pBase->nPartition : pW->nPartition;
      const ParWinSpec *pO = (pBase && pW->nOrder==0) ? pBase : pW;
      if( nPart + pO->nOrder!=pSel->nGroup ) continue;
      for(j=0; j<pO->nOrder; j++) nDesc += pO->aOrder[j].bDesc;
      if( nDesc==0 ) continue;
      for(j=0; j<pSel->nGroup && bKeys; j++){
        ParSpan s = j<nPart ? aPart[j] : pO->aOrder[j-nPart].span;
        bKeys = winSameTokens(pSel, s.iTok, s.iTokEnd, aKeyTok[2*j], aKeyTok[2*j+1]);
      }
    }
    if( !bKeys ){
      return buildWhy(pB, "SQLite makes the groups in the directions of a window's ORDER BY, "
                      "and the windows' order of ties depends on it%s", "");
    }
  }
  return 0;
}
