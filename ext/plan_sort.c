/*
** plan_sort.c: planning the sort operator, for a SELECT without GROUP BY
** and aggregates that has ORDER BY or DISTINCT, with or without LIMIT and
** OFFSET (buildSortPlan), and for ORDER BY over a group-by's result
** (buildGroupSortPlan, at the end of this file):
**
**   SELECT [DISTINCT] items FROM src [WHERE w] [ORDER BY terms] [LIMIT ...]
**
** reads the extraction query
**
**   SELECT items, terms FROM src WHERE (w)    -- terms: those not an item
**
** then the sort operator (op_sort.c) keeps the first of each set of equal
** rows (DISTINCT), sorts by the terms and cuts OFFSET and LIMIT; the view
** returns the items straight from its result (ParPlan.aDirect).  "*" alone
** is the extraction's first columns.  An ORDER BY term that is an ordinal
** or a select-list alias (resolve.c: resolveAsName, then
** sqlite3ExprIsInteger, each after COLLATE is skipped) is that item, under
** the term's COLLATE if it has one, else under the item's collation.
**
** The order of ties (select.c, vdbesort.c of SQLite 3.40):
**  1. Without LIMIT, the rows go to SQLite's sorter (OP_SorterOpen) in the
**     order its loops read them, with no sequence number.  Its in-memory
**     merge sort (vdbeSorterSort over a list kept newest first; on equal
**     keys vdbeSorterMerge takes from the older list) and the merge of
**     runs spilled to disk (a tie goes to the earlier run) are stable:
**     rows whose terms are equal come in the order they were read.
**  2. With LIMIT, the rows fill an ephemeral index whose key ends with
**     OP_Sequence, the row's number in reading order, and the greatest
**     entry past LIMIT+OFFSET is dropped: ties again in reading order, and
**     the rows kept are the first LIMIT+OFFSET of that order.
**  3. DISTINCT keeps the first of each set of equal rows (the items
**     compared under their collations) in reading order: by an ephemeral
**     index of the rows seen, or, when ORDER BY is the select list, as a
**     GROUP BY whose groups take their values from their first row.  The
**     rows kept are then sorted as in 1 and 2.
** So the result is a stable sort of the distinct rows in reading order,
** and the rows must be read in the order of SQLite's own plan: the
** extraction query's loops must be the SELECT's (buildCheckOrder), else it
** runs natively.  Checked against SQLite with spilled sorts too
** (tests/test_order.py; docs/order.md).
*/
#include "parext.h"
#include "plan.h"
#include "planint.h"

#include <string.h>

/* Tokens [*pt0, *pt1) without parentheses and top-level COLLATE clauses,
** as sqlite3ExprSkipCollate sees a term. */
static void sortCore(const ParSelect *pSel, int *pt0, int *pt1){
  for(;;){
    buildStripParens(pSel->aTok, pt0, pt1);
    if( *pt1-*pt0>=3 && parTokIs(pSel->zSql, &pSel->aTok[*pt1-2], "COLLATE") ){
      *pt1 -= 2;
    }else{
      return;
    }
  }
}

/* The select-list item an ORDER BY term stands for (0-based), -1 when it
** is an expression of its own, or -2 when it is an ordinal this planner
** does not read (a sign, a hex number). */
static int sortTermItem(const ParSelect *pSel, const ParExpr *pO, int nItem){
  const char *z = pSel->zSql;
  const ParToken *a = pSel->aTok;
  int t0 = pO->span.iTok, t1 = pO->span.iTokEnd, k;
  sortCore(pSel, &t0, &t1);
  if( t1-t0==1 && (a[t0].eType==PT_ID || a[t0].eType==PT_QID) && !pSel->bStar ){
    char *zName = parDequote(z + a[t0].i, a[t0].n);
    int iItem = -1;
    for(k=0; zName && k<pSel->nCol && iItem<0; k++){
      if( pSel->aCol[k].zAlias && sqlite3_stricmp(pSel->aCol[k].zAlias, zName)==0 ) iItem = k;
    }
    sqlite3_free(zName);
    return iItem;
  }
  if( t1-t0==1 && a[t0].eType==PT_NUMBER ){
    sqlite3_int64 v = 0;
    for(k=0; k<a[t0].n; k++){
      char c = z[a[t0].i + k];
      if( c<'0' || c>'9' ) return -1;     /* 1.5, 1e3: an expression */
      if( v<1000000 ) v = v*10 + (c - '0');
    }
    return v>=1 && v<=nItem ? (int)(v-1) : -2;
  }
  if( t1-t0>=2 && a[t0].eType==PT_OP && a[t1-1].eType==PT_NUMBER ) return -2;
  return -1;
}

/* The collation of column iCol of the extraction, one of the columns "*"
** stands for: its table column's, when that is known. */
static int sortStarColl(ParBuild *pB, sqlite3_stmt *pExtract, int iCol, int bUtf8){
  const ParSelect *pSel = pB->pSel;
  int i;
  if( !bUtf8 ) return PAR_COLL_UNKNOWN;
  for(i=pSel->from.iTok; i<pSel->from.iTokEnd; i++){
    if( parTokIs(pSel->zSql, &pSel->aTok[i], "SELECT") ) return PAR_COLL_UNKNOWN;
  }
  return buildOriginColl(pB, pExtract, iCol);
}

char *buildLimitSql(ParBuild *pB){
  const ParSelect *pSel = pB->pSel;
  const char *z = pSel->zSql;
  ParSpan l = pSel->limitExpr, o = pSel->offsetExpr;
  char *zLimit = pSel->bOffset
      ? sqlite3_mprintf("SELECT (%.*s), (%.*s)", l.iEnd - l.iStart, z + l.iStart,
                        o.iEnd - o.iStart, z + o.iStart)
      : sqlite3_mprintf("SELECT (%.*s), 0", l.iEnd - l.iStart, z + l.iStart);
  if( zLimit==0 ) buildNoMem(pB);
  return zLimit;
}

/* The extraction query of the plan: "*" and/or pB->azExpr. */
void buildPlainExtraction(ParBuild *pB, int nStar){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  sqlite3_str *pStr = sqlite3_str_new(pB->db);
  int i;
  if( nStar ) sqlite3_str_appendall(pStr, "*");
  for(i=0; i<pB->nExpr; i++){
    sqlite3_str_appendf(pStr, "%s%s", i || nStar ? ", " : "", pB->azExpr[i]);
  }
  pPlan->zExtractCols = sqlite3_str_finish(pStr);
  pPlan->zExtractFrom = sqlite3_mprintf("%s", pB->zFrom);
  if( pSel->bWhere ) pPlan->zExtractWhere = parSpanText(pSel->zSql, pSel->where);
  if( pPlan->zExtractCols==0 || pPlan->zExtractFrom==0
   || (pSel->bWhere && pPlan->zExtractWhere==0) ){
    buildNoMem(pB);
    return;
  }
  pPlan->zExtract = pSel->bWhere
      ? sqlite3_mprintf("SELECT %s FROM %s WHERE (%s)", pPlan->zExtractCols,
                        pPlan->zExtractFrom, pPlan->zExtractWhere)
      : sqlite3_mprintf("SELECT %s FROM %s", pPlan->zExtractCols, pPlan->zExtractFrom);
  pPlan->nExtractCol = nStar + pB->nExpr;
  if( pPlan->zExtract==0 ){ buildNoMem(pB); return; }
  if( nStar==0 && pB->nExpr>0 ){
    /* The columns by expression, for the cache to serve fewer of them. */
    pPlan->azExtractExpr = sqlite3_malloc64(sizeof(char*)*pB->nExpr);
    if( pPlan->azExtractExpr==0 ){ buildNoMem(pB); return; }
    for(i=0; i<pB->nExpr; i++){
      pPlan->azExtractExpr[i] = sqlite3_mprintf("%s", pB->azExpr[i]);
      if( pPlan->azExtractExpr[i]==0 ) break;
    }
    pPlan->nExtractExpr = i;
    if( i<pB->nExpr ) buildNoMem(pB);
  }
}

/* ORDER BY term j's key: extraction column iCol, the term's collation and
** direction.  iItem: the item the term stands for, or -1; nStar: the
** columns "*" stands for. */
static void sortKey(ParBuild *pB, sqlite3_stmt *pExtract, int nStar, int bUtf8,
                    int mReplaced, int j, int iItem, int iCol){
  ParSelect *pSel = pB->pSel;
  const ParExpr *pO = &pSel->aOrder[j];
  ParSortKey *pK = &pB->pPlan->pSort->aKey[j];
  int e, iCollTok = parExprCollateTok(pSel->zSql, pSel->aTok, pO->span.iTok, pO->span.iTokEnd);
  pK->iCol = iCol;
  pK->zText = parSpanText(pSel->zSql, pO->span);
  if( pK->zText==0 ) buildNoMem(pB);
  if( iItem<0 || iCollTok>=0 ){
    /* An expression, or an item under a COLLATE of the term's own. */
    e = iCollTok==-2 ? PAR_COLL_UNKNOWN
      : buildCollation(pB, pExtract, iCol, pO->span.iTok, pO->span.iTokEnd, bUtf8);
  }else if( nStar ){
    e = sortStarColl(pB, pExtract, iCol, bUtf8);
  }else{
    const ParSpan *pItem = &pSel->aCol[iItem].span;
    e = buildCollation(pB, pExtract, iCol, pItem->iTok, pItem->iTokEnd, bUtf8);
  }
  pK->eColl = buildKnownColl(e, mReplaced);
  /* NULL is the least value: first ascending, last descending, unless
  ** NULLS FIRST/LAST says otherwise. */
  pK->flags = pO->bDesc ? PAR_KEY_DESC : 0;
  if( pO->eNulls==PAR_NULLS_LAST || (pO->eNulls==PAR_NULLS_DEFAULT && pO->bDesc) ){
    pK->flags |= PAR_KEY_NULLS_LAST;
  }
}

void buildSortPlan(ParBuild *pB){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  const char *z = pSel->zSql;
  ParPlanSort *pS;
  sqlite3_stmt *pExtract = 0;
  int *aItem = 0, *aTermCol = 0, *aTermItem = 0;
  int i, j, nItem, nStar, bUtf8, mReplaced;

  if( buildOtherAggs(pB) ) return;
  nItem = pSel->bStar ? pPlan->nCol : pSel->nCol;
  nStar = pSel->bStar ? pPlan->nCol : 0;
  if( nItem!=pPlan->nCol ){ buildWhy(pB, "SQL the parser does not follow%s", ""); return; }
  pS = pPlan->pSort = sqlite3_malloc(sizeof(ParPlanSort));
  pB->zFrom = parSpanText(z, pSel->from);
  aItem = sqlite3_malloc64(sizeof(int)*(nItem+1));
  aTermCol = sqlite3_malloc64(sizeof(int)*(pSel->nOrder+1));
  aTermItem = sqlite3_malloc64(sizeof(int)*(pSel->nOrder+1));
  if( pS ) memset(pS, 0, sizeof(*pS));
  if( pS==0 || pB->zFrom==0 || aItem==0 || aTermCol==0 || aTermItem==0 ){
    buildNoMem(pB);
    goto done;
  }

  /* Extraction columns: the items (or "*"), then the terms of their own. */
  for(i=0; i<nItem; i++){
    aItem[i] = nStar ? i : buildExpr(pB, parSpanText(z, pSel->aCol[i].span));
  }
  for(j=0; j<pSel->nOrder && pB->rc==SQLITE_OK; j++){
    int iItem = sortTermItem(pSel, &pSel->aOrder[j], nItem);
    if( iItem==-2 ){
      buildWhy(pB, "an ORDER BY ordinal the planner does not read%s", "");
      goto done;
    }
    aTermItem[j] = iItem;
    aTermCol[j] = iItem>=0 ? aItem[iItem]
                : nStar + buildExpr(pB, parSpanText(z, pSel->aOrder[j].span));
  }
  if( pB->rc ) goto done;
  buildPlainExtraction(pB, nStar);
  if( pB->rc ) goto done;
  if( sqlite3_prepare_v2(pB->db, pPlan->zExtract, -1, &pExtract, 0) ){
    buildWhy(pB, "the extraction query does not prepare: %s", sqlite3_errmsg(pB->db));
    goto done;
  }
  if( sqlite3_column_count(pExtract)!=pPlan->nExtractCol ){
    buildWhy(pB, "SQL the parser does not follow%s", "");
    goto done;
  }

  /* Ties come in the order the rows are read: SQLite's, or native. */
  pB->bOrderMatters = 1;
  buildCheckOrder(pB);
  if( pPlan->zWhy ) goto done;

  bUtf8 = parDbIsUtf8(pB->db);
  mReplaced = parCollReplaced(pB->db);
  if( pSel->nOrder>0 ){
    pS->aKey = sqlite3_malloc64(sizeof(ParSortKey)*pSel->nOrder);
    if( pS->aKey==0 ){ buildNoMem(pB); goto done; }
    memset(pS->aKey, 0, sizeof(ParSortKey)*pSel->nOrder);
    pS->nKey = pS->nTerm = pSel->nOrder;
    for(j=0; j<pSel->nOrder; j++){
      sortKey(pB, pExtract, nStar, bUtf8, mReplaced, j, aTermItem[j], aTermCol[j]);
    }
  }
  if( pSel->bDistinct ){
    pS->aDistinct = sqlite3_malloc64(sizeof(ParSortKey)*nItem);
    if( pS->aDistinct==0 ){ buildNoMem(pB); goto done; }
    memset(pS->aDistinct, 0, sizeof(ParSortKey)*nItem);
    pS->nDistinct = nItem;
    for(i=0; i<nItem; i++){
      int e = nStar ? sortStarColl(pB, pExtract, i, bUtf8)
            : buildCollation(pB, pExtract, aItem[i], pSel->aCol[i].span.iTok,
                             pSel->aCol[i].span.iTokEnd, bUtf8);
      pS->aDistinct[i].iCol = aItem[i];
      pS->aDistinct[i].eColl = buildKnownColl(e, mReplaced);
    }
  }
  if( pSel->bLimit && (pS->zLimit = buildLimitSql(pB))==0 ) goto done;
  pPlan->aDirect = sqlite3_malloc64(sizeof(int)*(nItem+1));
  if( pPlan->aDirect==0 ){ buildNoMem(pB); goto done; }
  memcpy(pPlan->aDirect, aItem, sizeof(int)*nItem);

done:
  sqlite3_finalize(pExtract);
  sqlite3_free(aItem);
  sqlite3_free(aTermCol);
  sqlite3_free(aTermItem);
}

/* ---- ORDER BY over a group-by's result ------------------------------------------
**
**   SELECT g, count(*) AS n FROM t GROUP BY g [HAVING h] ORDER BY n DESC [LIMIT ...]
**
** runs as scan -> group by -> sort -> final SQL when every ORDER BY term is
** one column of the group-by's result (sortGroupTerm); the final SQL keeps
** the select list and HAVING, and LIMIT only with HAVING.
**
** The order of ties (select.c of SQLite 3.40): the aggregate loop hands its
** output rows, in the order it makes the groups, to the sorter of case 1
** or 2 above: ties in that order.  It makes them in key order, each key
** ascending, or, with as many ORDER BY terms as GROUP BY terms, in the
** direction of the ORDER BY term in its place (select.c copies the DESC
** flags into the GROUP BY, orderByGrp); through an index, in the index's
** order (eGroupOrder 1, checked by buildGroupOrder to be ascending key
** order).  The group-by's result is in ascending key order, so: stable
** sort of it (bReverse: of its reverse when every key is descending), or
** with the keys as further terms when their directions mix -- the
** tie-break buildTieBreak (plan.c) writes for the final SQL. */


/* The par_rows column ORDER BY term j reads, and the collation it sorts
** under, when the term is one column of the group-by's result: an
** aggregate, a bare column (a GROUP BY key's column among them) or an item
** a key stands for, written as itself or through an alias or ordinal,
** with or without a COLLATE of a built-in collation.  0 when it is not
** (an expression over them: the final SQL sorts). */
static int sortGroupTerm(ParBuild *pB, int j, int mReplaced, int *piCol, int *peColl){
  const ParSelect *pSel = pB->pSel;
  const ParExpr *pO = &pSel->aOrder[j];
  const char *z = pSel->zSql;
  int t0 = pO->span.iTok, t1 = pO->span.iTokEnd, iItem, k, e = -1;
  const ParRepl *pR = 0;
  iItem = sortTermItem(pSel, pO, pSel->nCol);
  if( iItem==-2 ) return 0;
  if( iItem>=0 ){
    t0 = pSel->aCol[iItem].span.iTok;
    t1 = pSel->aCol[iItem].span.iTokEnd;
    buildStripParens(pSel->aTok, &t0, &t1);
  }else{
    sortCore(pSel, &t0, &t1);
    for(k=0; k<pSel->nCol; k++){
      /* SQLite takes a term written as an item for that item
      ** (resolveOrderByTermToExprList): the same value. */
      int i0 = pSel->aCol[k].span.iTok, i1 = pSel->aCol[k].span.iTokEnd;
      buildStripParens(pSel->aTok, &i0, &i1);
      if( buildTokensEqual(pSel, i0, i1, t0, t1) ){
        t0 = i0;
        t1 = i1;
        break;
      }
    }
  }
  for(k=0; k<pB->nRepl && pR==0; k++){
    int r0 = pB->aRepl[k].span.iTok, r1 = pB->aRepl[k].span.iTokEnd;
    buildStripParens(pSel->aTok, &r0, &r1);
    if( r0==t0 && r1==t1 ) pR = &pB->aRepl[k];
  }
  if( pR==0 || pO->iCollTok==-2 ) return 0;
  if( pO->iCollTok>=0 ){
    e = pO->zCollate ? parCollFromName(pO->zCollate) : -1;
  }else if( pR->eKind==PAR_REPL_AGG ){
    /* A function's result takes the COLLATE of its arguments, if any. */
    if( pR->iCollTok<0 ){
      e = PAR_COLL_BINARY;
    }else{
      char *zName = parDequote(z + pSel->aTok[pR->iCollTok].i, pSel->aTok[pR->iCollTok].n);
      if( zName==0 ){ buildNoMem(pB); return 0; }
      e = parCollFromName(zName);
      sqlite3_free(zName);
    }
  }else if( pR->eKind==PAR_REPL_ITEM ){
    e = PAR_COLL_BINARY;
  }else{
    const char *zC = strchr(PAR_ROWS_COLL, pR->cColl);
    e = zC && pR->cColl ? (int)(zC - PAR_ROWS_COLL) : -1;
  }
  e = buildKnownColl(e, mReplaced);
  if( e<0 ) return 0;
  *piCol = pR->iCol;
  *peColl = e;
  return 1;
}

void buildGroupSortPlan(ParBuild *pB, int eGroupOrder){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  ParPlanSort *pS;
  int mReplaced = parCollReplaced(pB->db);
  int *aCol, *aColl;
  int j, k, nDesc = 0, nKey;

  if( pSel->nOrder==0 || pSel->bDistinct || pSel->nOrder>PAR_ROWS_MAX ) return;
  aCol = sqlite3_malloc64(sizeof(int)*2*(pSel->nOrder+1));
  if( aCol==0 ){ buildNoMem(pB); return; }
  aColl = aCol + pSel->nOrder + 1;
  for(j=0; j<pSel->nOrder; j++){
    if( !sortGroupTerm(pB, j, mReplaced, &aCol[j], &aColl[j]) ){
      sqlite3_free(aCol);
      return;
    }
  }

  /* Ties: in the order SQLite makes the groups, as buildTieBreak (plan.c)
  ** writes it for the final SQL: the result's order (ascending keys), its
  ** reverse, or by the keys in mixed directions. */
  if( pSel->nOrder==pSel->nGroup && eGroupOrder==0 ){
    for(j=0; j<pSel->nOrder; j++) nDesc += pSel->aOrder[j].bDesc;
  }
  nKey = pSel->nOrder;
  if( nDesc>0 && nDesc<pSel->nGroup ) nKey += pSel->nGroup;
  pS = pPlan->pSort = sqlite3_malloc(sizeof(ParPlanSort));
  if( pS ){
    memset(pS, 0, sizeof(*pS));
    pS->aKey = sqlite3_malloc64(sizeof(ParSortKey)*nKey);
  }
  if( pS==0 || pS->aKey==0 ){ sqlite3_free(aCol); buildNoMem(pB); return; }
  memset(pS->aKey, 0, sizeof(ParSortKey)*nKey);
  pS->bGroup = 1;
  pS->nKey = nKey;
  pS->nTerm = pSel->nOrder;
  for(j=0; j<pSel->nOrder; j++){
    const ParExpr *pO = &pSel->aOrder[j];
    ParSortKey *pK = &pS->aKey[j];
    pK->iCol = aCol[j];
    pK->eColl = aColl[j];
    pK->zText = parSpanText(pSel->zSql, pO->span);
    if( pK->zText==0 ) buildNoMem(pB);
    pK->flags = pO->bDesc ? PAR_KEY_DESC : 0;
    if( pO->eNulls==PAR_NULLS_LAST || (pO->eNulls==PAR_NULLS_DEFAULT && pO->bDesc) ){
      pK->flags |= PAR_KEY_NULLS_LAST;
    }
  }
  sqlite3_free(aCol);
  if( nKey>pSel->nOrder ){
    /* Each key under its collation, through the bare column that holds
    ** it (buildBareCols added one for each), in SQLite's direction. */
    for(k=0; k<pSel->nGroup; k++){
      ParSortKey *pK = &pS->aKey[pSel->nOrder + k];
      for(j=0; j<pPlan->nBare && pPlan->aBareCol[j]!=k; j++){}
      if( j==pPlan->nBare ){
        buildWhy(pB, "a GROUP BY key without its column in the result%s", "");
        return;
      }
      pK->iCol = pPlan->nAgg + j;
      pK->eColl = pPlan->aKeyColl[k];
      pK->flags = pSel->aOrder[k].bDesc ? PAR_KEY_DESC|PAR_KEY_NULLS_LAST : 0;
    }
  }else{
    pS->bReverse = nDesc>0;
  }
  if( pSel->bLimit && !pSel->bHaving ){
    /* Without HAVING the sort's rows are the result's: LIMIT moves too. */
    pS->zLimit = buildLimitSql(pB);
  }
}
