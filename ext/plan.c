/*
** plan.c: the planner of parallel views.
**
**   ParPlan *p; char *zErr;
**   parPlanBuild(db, "SELECT region, sum(amount) AS s FROM sales "
**                    "WHERE year>=2020 GROUP BY region HAVING s > 10", &p, &zErr);
**   p->zExtract: SELECT region, amount, region FROM sales WHERE year>=2020
**   p->zFinal:   SELECT _pt2, _pn0 AS s FROM par_rows(:par_rows) WHERE s > 10
**
** How it works:
**  1. The SELECT is prepared on the caller's connection first, so every
**     error, the authorizer and the schema are SQLite's own.
**  2. sqlparse.c finds the structure.  Shapes it does not accelerate keep
**     zWhy and run natively.
**  3. The extraction query selects the GROUP BY keys (an ordinal or an
**     alias replaced by its select-list expression, as SQLite resolves
**     them), each aggregate's argument, and every column reference made
**     outside aggregates (a "bare" column: SQLite returns its value from
**     one particular row of the group, see groupby.c), FROM and WHERE
**     unchanged.  Whether a name is a column is asked of SQLite by
**     preparing "SELECT name FROM <from>".
**  4. The final SQL is the select list, HAVING (as WHERE), ORDER BY and
**     LIMIT with each aggregate call and each column reference replaced by
**     a column of par_rows(:par_rows), which serves the group-by result.  Bare
**     columns keep their affinity through par_rows' column names.  When
**     every ORDER BY term is one column of that result, the sort operator
**     orders the groups instead (plan_sort.c, buildGroupSortPlan) and the
**     final SQL has no ORDER BY (nor LIMIT, unless HAVING remains).
**  5. Both queries must prepare, or the statement runs natively.
*/
#include "plan.h"
#include "planint.h"

#include <assert.h>
#include <string.h>
#include <ctype.h>

int parPrepareSelect(sqlite3 *db, const char *zSql, sqlite3_stmt **ppStmt, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  ParToken *aTok;
  int nTok = 0, rc, bSelect;
  if( ppStmt ) *ppStmt = 0;
  rc = parPrepareOne(db, zSql, &pStmt, "no SELECT statement given",
                     "only a single SELECT statement is allowed", pzErr);
  if( rc ) return rc;
  aTok = parTokenize(zSql, &nTok);
  if( aTok==0 ){
    sqlite3_finalize(pStmt);
    return SQLITE_NOMEM;
  }
  bSelect = parTokIs(zSql, &aTok[0], "SELECT") || parTokIs(zSql, &aTok[0], "WITH")
         || parTokIs(zSql, &aTok[0], "VALUES");
  sqlite3_free(aTok);
  if( !bSelect || !sqlite3_stmt_readonly(pStmt) || sqlite3_stmt_isexplain(pStmt)
   || sqlite3_column_count(pStmt)==0 ){
    sqlite3_finalize(pStmt);
    *pzErr = sqlite3_mprintf("not a read-only SELECT statement: %s", zSql);
    return SQLITE_ERROR;
  }
  if( ppStmt ) *ppStmt = pStmt;
  else sqlite3_finalize(pStmt);
  return SQLITE_OK;
}

/* SQLite numbers parameters as it parses (expr.c,
** sqlite3ExprAssignVarNumber): ?NNN is NNN, a name already seen keeps its
** number, and ? or a new name takes one more than the highest so far.
** sqlite3_bind_parameter_index() gives every number but that of ?. */
char *parParamsRewrite(const char *zSql, sqlite3_stmt *pStmt, int *pnParam,
                       char ***pazName){
  int nTok = 0, i, nVar = 0, nMax = sqlite3_bind_parameter_count(pStmt), iLast = 0;
  ParToken *aTok = parTokenize(zSql, &nTok);
  sqlite3_str *pStr = sqlite3_str_new(0);
  char **azName = sqlite3_malloc64(sizeof(char*)*(nMax+1));
  char *zOut;
  *pnParam = 0;
  *pazName = 0;
  if( aTok==0 || azName==0 ) goto nomem;
  memset(azName, 0, sizeof(char*)*(nMax+1));
  for(i=0; i<nTok; i++){
    const ParToken *t = &aTok[i];
    char *zName;
    int iVar;
    if( t->eType!=PT_VARIABLE ) continue;
    zName = sqlite3_mprintf("%.*s", t->n, zSql + t->i);
    if( zName==0 ) goto nomem;
    iVar = t->n==1 ? nVar+1 : sqlite3_bind_parameter_index(pStmt, zName);
    if( iVar<1 || iVar>nMax ){
      /* Not a parameter SQLite numbered (it prepared the text, so this
      ** does not happen): leave it as written. */
      sqlite3_free(zName);
      continue;
    }
    if( iVar>nVar ) nVar = iVar;
    if( azName[iVar-1]==0 ){
      azName[iVar-1] = zName;
    }else{
      sqlite3_free(zName);
    }
    {
      /* "?1abc" is ?1 and an alias: keep the two apart. */
      unsigned char c = (unsigned char)zSql[t->i + t->n];
      int bSep = c>=0x80 || c=='_' || c=='$' || (c>='0' && c<='9')
              || (c>='a' && c<='z') || (c>='A' && c<='Z');
      sqlite3_str_appendf(pStr, "%.*s:par_p%d%s", t->i - iLast, zSql + iLast, iVar,
                          bSep ? " " : "");
    }
    iLast = t->i + t->n;
  }
  sqlite3_str_appendall(pStr, zSql + iLast);
  zOut = sqlite3_str_finish(pStr);
  pStr = 0;
  if( zOut==0 ) goto nomem;
  sqlite3_free(aTok);
  *pnParam = nMax;
  *pazName = azName;
  return zOut;

nomem:
  if( pStr ) sqlite3_free(sqlite3_str_finish(pStr));
  parParamsNamesFree(azName, nMax);
  sqlite3_free(aTok);
  return 0;
}

void parParamsNamesFree(char **azName, int nName){
  int i;
  if( azName==0 ) return;
  for(i=0; i<nName; i++) sqlite3_free(azName[i]);
  sqlite3_free(azName);
}

sqlite3_int64 parQueryInt(sqlite3 *db, const char *zSql, sqlite3_int64 iDefault){
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 v = iDefault;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW
   && sqlite3_column_type(pStmt, 0)!=SQLITE_NULL ){
    v = sqlite3_column_int64(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  return v;
}

void parPlanFree(ParPlan *p){
  int i;
  if( p==0 || --p->nRef>0 ) return;
  sqlite3_free(p->zSql);
  sqlite3_free(p->zFlat);
  parParamsFree(p->pParams);
  sqlite3_free(p->zColSig);
  sqlite3_free(p->zWhy);
  sqlite3_free(p->zExtract);
  sqlite3_free(p->zExtractCols);
  sqlite3_free(p->zExtractFrom);
  sqlite3_free(p->zExtractWhere);
  for(i=0; i<p->nExtractExpr; i++) sqlite3_free(p->azExtractExpr[i]);
  sqlite3_free(p->azExtractExpr);
  sqlite3_free(p->aKeyColl);
  for(i=0; i<p->nKey; i++) sqlite3_free(p->azKey ? p->azKey[i] : 0);
  sqlite3_free(p->azKey);
  for(i=0; i<p->nAgg; i++) sqlite3_free(p->aAgg[i].zText);
  sqlite3_free(p->aAgg);
  sqlite3_free(p->aBareCol);
  sqlite3_free(p->zFinal);
  sqlite3_free(p->aDirect);
  parPlanJoinFree(p->pJoin);
  sqlite3_free(p->zJoinWhy);
  sqlite3_free(p->zJoinOnly);
  for(i=0; i<p->nBind; i++) parPlanFree(p->apBind[i]);
  parPlanWindowFree(p->pWindow);
  if( p->pSort ){
    ParPlanSort *pS = p->pSort;
    for(i=0; i<pS->nKey; i++) sqlite3_free(pS->aKey[i].zText);
    sqlite3_free(pS->aKey);
    sqlite3_free(pS->aDistinct);
    sqlite3_free(pS->zLimit);
    sqlite3_free(pS);
  }
  sqlite3_free(p);
}

void buildNoMem(ParBuild *pB){ pB->rc = SQLITE_NOMEM; }

int buildTokensEqual(const ParSelect *pSel, int s0, int s1, int t0, int t1){
  int i;
  if( s1-s0!=t1-t0 || s1<=s0 ) return 0;
  for(i=0; i<s1-s0; i++){
    const ParToken *x = &pSel->aTok[s0+i], *y = &pSel->aTok[t0+i];
    if( x->eType!=y->eType || x->n!=y->n ) return 0;
    if( x->eType==PT_ID ? sqlite3_strnicmp(pSel->zSql + x->i, pSel->zSql + y->i, x->n)
                        : memcmp(pSel->zSql + x->i, pSel->zSql + y->i, x->n) ) return 0;
  }
  return 1;
}

int buildOtherAggs(ParBuild *pB){
  const ParSelect *pSel = pB->pSel;
  int i;
  for(i=0; i<pSel->nCall; i++){
    char *zName = parSpanText(pSel->zSql, pSel->aCall[i]);
    int bAgg;
    if( zName==0 ){ buildNoMem(pB); return 1; }
    bAgg = buildIsAggFunc(pB, zName, pSel->aCallArgc[i]);
    if( bAgg ) buildWhy(pB, "%s() is an aggregate the kernels do not compute", zName);
    sqlite3_free(zName);
    if( bAgg || pB->rc ) return 1;
  }
  return 0;
}

/* Index of extraction expression zExpr (taking ownership), reusing an
** identical one. */
int buildExpr(ParBuild *pB, char *zExpr){
  int i;
  char **az;
  if( zExpr==0 ){ buildNoMem(pB); return 0; }
  for(i=0; i<pB->nExpr; i++){
    if( strcmp(pB->azExpr[i], zExpr)==0 ){
      sqlite3_free(zExpr);
      return i;
    }
  }
  az = sqlite3_realloc64(pB->azExpr, (pB->nExpr+1)*sizeof(char*));
  if( az==0 ){ sqlite3_free(zExpr); buildNoMem(pB); return 0; }
  pB->azExpr = az;
  az[pB->nExpr] = zExpr;
  return pB->nExpr++;
}

/* Add a replacement: span s reads par_rows column iCol (see ParRepl). */
void buildRepl(ParBuild *pB, ParSpan s, int eKind, int iCol, int iCollTok){
  ParRepl *a = sqlite3_realloc64(pB->aRepl, (pB->nRepl+1)*sizeof(ParRepl));
  if( a==0 ){ buildNoMem(pB); return; }
  pB->aRepl = a;
  a = &a[pB->nRepl++];
  a->span = s;
  a->eKind = eKind;
  a->iCol = iCol;
  a->iCollTok = iCollTok;
  a->cAff = a->cColl = '?';
}

/* Does "SELECT zExpr FROM <from>" prepare?  Tells whether a name is a
** column (or expression) of the FROM clause. */
int buildResolves(ParBuild *pB, const char *zExpr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("SELECT %s FROM %s", zExpr, pB->zFrom);
  int rc;
  if( zSql==0 ){ buildNoMem(pB); return 0; }
  rc = sqlite3_prepare_v2(pB->db, zSql, -1, &pStmt, 0);
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return rc==SQLITE_OK;
}

/* Read pragma_function_list once per build (a read lists every function,
** so one read for all lookups), keeping the application's functions and
** the aggregate and window functions, and checking two of SQLite's own by
** every column a lookup reads (an authorizer can deny the list or read its
** columns as NULL: then eFunc is -1). */
static void buildFuncListRead(ParBuild *pB){
  sqlite3_stmt *pStmt = 0;
  int nCheck = 0;
  int rc;
  pB->eFunc = -1;
  rc = sqlite3_prepare_v2(pB->db,
        "SELECT name, narg, builtin, type IN ('a','w'), "
        "(name='abs' AND builtin AND narg=1 AND type='s') OR "
        "(name='count' AND builtin AND narg=0 AND type IN ('a','w')) "
        "FROM pragma_function_list", -1, &pStmt, 0);
  if( rc!=SQLITE_OK ){
    if( rc==SQLITE_NOMEM ) buildNoMem(pB);
    return;
  }
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zName = (const char*)sqlite3_column_text(pStmt, 0);
    int bBuiltin = sqlite3_column_int(pStmt, 2), bAgg = sqlite3_column_int(pStmt, 3);
    struct ParBuildFunc *a;
    if( sqlite3_column_int(pStmt, 4) ) nCheck++;
    if( zName==0 || (bBuiltin && !bAgg) ) continue;
    a = sqlite3_realloc64(pB->aFunc, sizeof(pB->aFunc[0])*(pB->nFunc+1));
    if( a==0 ){ buildNoMem(pB); break; }
    pB->aFunc = a;
    a[pB->nFunc].zName = sqlite3_mprintf("%s", zName);
    if( a[pB->nFunc].zName==0 ){ buildNoMem(pB); break; }
    a[pB->nFunc].nArg = sqlite3_column_int(pStmt, 1);
    a[pB->nFunc].bBuiltin = bBuiltin;
    a[pB->nFunc].bAgg = bAgg;
    pB->nFunc++;
  }
  rc = sqlite3_finalize(pStmt);
  if( rc==SQLITE_NOMEM ) buildNoMem(pB);
  /* An interrupt is the scan's answer, not the list's: the build fails
  ** (and a failed build is never kept). */
  if( rc==SQLITE_INTERRUPT && pB->rc==SQLITE_OK ) pB->rc = SQLITE_INTERRUPT;
  if( rc==SQLITE_OK && nCheck==2 && pB->rc==SQLITE_OK ) pB->eFunc = 1;
}

/* Does pragma_function_list hold a function named zName (any case) that
** takes nArg arguments and is an aggregate or window function (bAgg) or
** the application's (else)?  1 when the list cannot be read. */
static int buildFuncListHas(ParBuild *pB, int bAgg, const char *zName, int nArg){
  int i;
  if( pB->eFunc==0 ) buildFuncListRead(pB);
  if( pB->eFunc<0 ) return 1;
  for(i=0; i<pB->nFunc; i++){
    const struct ParBuildFunc *f = &pB->aFunc[i];
    if( (bAgg ? f->bAgg : !f->bBuiltin) && (f->nArg==nArg || f->nArg<0)
     && sqlite3_stricmp(f->zName, zName)==0 ){
      return 1;
    }
  }
  return 0;
}

/* Is some function named like token pName with nArg arguments an
** aggregate or window function (other than the ones we accelerate, which
** never get here)? */
int buildIsAggFunc(ParBuild *pB, const char *zName, int nArg){
  return buildFuncListHas(pB, 1, zName, nArg);
}

/* Has the application defined its own zName() with nArg arguments, which
** SQLite then calls instead of its own? */
int buildIsAppFunc(ParBuild *pB, const char *zName, int nArg){
  return buildFuncListHas(pB, 0, zName, nArg);
}

/* SQL text for par_rows column Z as an expression without affinity and
** collation, as a function's result is (sqlite3ExprAffinity and
** sqlite3ExprCollSeq: a CASE has neither; a unary + would keep the
** column's BINARY collation). */
#define PAR_AS_RESULT(Z) "CASE WHEN 1 THEN " Z " END"

/* Append the text of replacement pR to pStr.  An aggregate's result has
** no affinity and takes the collation of its COLLATE (buildAggCollTok); a
** select-list item a key stands for has no affinity and no collation
** (buildKeyStandsIn); a bare column is the par_rows column named with its
** affinity and collation. */
static void buildReplText(ParBuild *pB, sqlite3_str *pStr, const ParRepl *pR){
  const ParSelect *pSel = pB->pSel;
  switch( pR->eKind ){
    case PAR_REPL_AGG:
      if( pR->iCollTok<0 ){
        sqlite3_str_appendf(pStr, "(" PAR_AS_RESULT("_pnb%d") ")", pR->iCol);
      }else{
        const ParToken *t = &pSel->aTok[pR->iCollTok];
        sqlite3_str_appendf(pStr, "(" PAR_AS_RESULT("_pnb%d") " COLLATE %.*s)", pR->iCol,
                            t->n, pSel->zSql + t->i);
      }
      break;
    case PAR_REPL_ITEM:
      sqlite3_str_appendf(pStr, "(" PAR_AS_RESULT("_p%c%c%d") ")", pR->cAff, pR->cColl,
                          pR->iCol);
      break;
    default:
      sqlite3_str_appendf(pStr, "_p%c%c%d", pR->cAff, pR->cColl, pR->iCol);
      break;
  }
}

/* Text of span s with the replacements that fall inside it applied. */
char *buildRewrite(ParBuild *pB, ParSpan s){
  const char *z = pB->pSel->zSql;
  sqlite3_str *pStr = sqlite3_str_new(pB->db);
  int i = s.iStart, k;
  for(;;){
    int iNext = -1;
    /* The replacement starting first at or after i (they never overlap). */
    for(k=0; k<pB->nRepl; k++){
      if( pB->aRepl[k].span.iStart>=i && pB->aRepl[k].span.iEnd<=s.iEnd
       && (iNext<0 || pB->aRepl[k].span.iStart<pB->aRepl[iNext].span.iStart) ){
        iNext = k;
      }
    }
    if( iNext<0 ) break;
    sqlite3_str_append(pStr, z+i, pB->aRepl[iNext].span.iStart - i);
    buildReplText(pB, pStr, &pB->aRepl[iNext]);
    i = pB->aRepl[iNext].span.iEnd;
  }
  sqlite3_str_append(pStr, z+i, s.iEnd - i);
  if( sqlite3_str_errcode(pStr) ) buildNoMem(pB);
  return sqlite3_str_finish(pStr);
}

char parAffinityLetter(const char *zType){
  char *z;
  char c = 'n';
  if( zType==0 ) return 'n';
  z = sqlite3_mprintf("%s", zType);
  if( z==0 ) return 'n';
  for(char *p=z; *p; p++) if( *p>='a' && *p<='z' ) *p -= 'a'-'A';
  if( strstr(z, "INT") ) c = 'i';
  else if( strstr(z, "CHAR") || strstr(z, "CLOB") || strstr(z, "TEXT") ) c = 't';
  else if( strstr(z, "BLOB") || z[0]==0 ) c = 'n';
  else if( strstr(z, "REAL") || strstr(z, "FLOA") || strstr(z, "DOUB") ) c = 'r';
  else c = 'u';
  sqlite3_free(z);
  return c;
}


int buildOriginColl(ParBuild *pB, sqlite3_stmt *pExtract, int iCol){
  const char *zColl = parOriginColl(pB->db, pExtract, iCol);
  const char *zDb = sqlite3_column_database_name(pExtract, iCol);
  const char *zTab = sqlite3_column_table_name(pExtract, iCol);
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int bView = 0, e;
  if( zColl==0 || zTab==0 ) return PAR_COLL_UNKNOWN;
  /* A view's column: its collation is its expression's. */
  zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE type='view' AND name=%Q",
                         zDb ? zDb : "main", zTab);
  if( zSql==0 ) buildNoMem(pB);
  if( zSql && sqlite3_prepare_v2(pB->db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
    bView = sqlite3_step(pStmt)==SQLITE_ROW;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  e = parCollFromName(zColl);
  return bView || e<0 ? PAR_COLL_UNKNOWN : e;
}

/* What result column iCol of the subquery zInner is: 0 a plain column
** reference (its affinity and collation are that column's: select.c
** sqlite3SubqueryColType), 1 an aggregate call without COLLATE in it (no
** affinity, no collation), 2 the same of count() (always an INTEGER), -1
** anything else (or not known). */
int buildSubqueryColKind(const char *zInner, int iCol){
  ParSelect in;
  int e = -1, i;
  memset(&in, 0, sizeof(in));
  if( parSelectParse(zInner, &in)==SQLITE_OK && in.zWhy==0 && iCol>=0 && iCol<in.nCol ){
    const ParSpan *pS = &in.aCol[iCol].span;
    int bChain = pS->iTokEnd>pS->iTok && (pS->iTokEnd-pS->iTok)%2==1;
    for(i=pS->iTok; bChain && i<pS->iTokEnd; i++){
      int t = in.aTok[i].eType;
      if( (i-pS->iTok)%2==0 ? (t!=PT_ID && t!=PT_QID) : t!=PT_DOT ) bChain = 0;
    }
    if( bChain ){
      e = 0;
    }else{
      for(i=0; i<in.nAgg && e<0; i++){
        const ParSpan *pC = &in.aAgg[i].call;
        if( pC->iTok==pS->iTok && pC->iTokEnd==pS->iTokEnd ){
          e = in.aAgg[i].eFunc==PAR_AGG_COUNT || in.aAgg[i].eFunc==PAR_AGG_COUNT_STAR ? 2 : 1;
        }
      }
      for(i=pS->iTok; e>=1 && i<pS->iTokEnd; i++){
        if( parTokIs(in.zSql, &in.aTok[i], "COLLATE") ) e = -1;
      }
    }
  }
  parSelectClear(&in);
  return e;
}

/* Is the column reference of tokens [iTok, iTokEnd) (name, or a chain
** ending in the name) a column of a subquery in FROM?  0: no (FROM holds
** no subquery, or the reference's qualifier is none's, or none has a
** result column of its name); 2: yes, result column *piCol of the
** subquery *pzInner (sqlite3_malloc'd, the caller frees it); 1: it may be
** (not known). */
static int buildSubqueryColumn(ParBuild *pB, int iTok, int iTokEnd, char **pzInner,
                               int *piCol){
  const ParSelect *pSel = pB->pSel;
  const char *z = pSel->zSql;
  const ParToken *a = pSel->aTok;
  char *zName, *zQual = 0;
  int i, eRet = 0;
  *pzInner = 0;
  *piCol = -1;
  for(i=pSel->from.iTok; i<pSel->from.iTokEnd && !parTokIs(z, &a[i], "SELECT"); i++){}
  if( i==pSel->from.iTokEnd ) return 0;
  if( pSel->pFrom==0 ) return 1;
  zName = parDequote(z + a[iTokEnd-1].i, a[iTokEnd-1].n);
  if( iTokEnd-iTok>=3 ) zQual = parDequote(z + a[iTokEnd-3].i, a[iTokEnd-3].n);
  if( zName==0 || (iTokEnd-iTok>=3 && zQual==0) || iTokEnd-iTok>3 ){
    eRet = 1;
  }
  for(i=0; i<pSel->pFrom->nSrc && eRet!=1; i++){
    const ParFromSrc *pS = &pSel->pFrom->aSrc[i];
    sqlite3_stmt *pStmt = 0;
    char *zInner;
    int j, n, nHit = 0, iHit = -1;
    if( pS->eType==PAR_SRC_TABLE ) continue;
    if( pS->eType!=PAR_SRC_SUBQUERY || pS->zAlias==0 ){
      eRet = 1;
      break;
    }
    if( zQual && sqlite3_stricmp(zQual, pS->zAlias)!=0 ) continue;
    zInner = parSpanText(z, pS->inner);
    if( zInner && sqlite3_prepare_v2(pB->db, zInner, -1, &pStmt, 0)==SQLITE_OK ){
      n = sqlite3_column_count(pStmt);
      for(j=0; j<n; j++){
        if( sqlite3_stricmp(sqlite3_column_name(pStmt, j), zName)==0 ){
          nHit++;
          iHit = j;
        }
      }
    }else{
      nHit = 2;
    }
    sqlite3_finalize(pStmt);
    if( nHit==0 ){
      sqlite3_free(zInner);
      continue;
    }
    if( nHit>1 || eRet==2 ){
      sqlite3_free(zInner);
      eRet = 1;
      break;
    }
    eRet = 2;
    *pzInner = zInner;
    *piCol = iHit;
  }
  if( eRet!=2 ){
    sqlite3_free(*pzInner);
    *pzInner = 0;
  }
  sqlite3_free(zName);
  sqlite3_free(zQual);
  return eRet;
}

/* Collation SQLite uses for extraction column iCol, whose expression is
** the token range [iTok, iTokEnd) of the SELECT; PAR_COLL_UNKNOWN when
** this cannot be told without SQLite's expression tree. */
int buildCollation(ParBuild *pB, sqlite3_stmt *pExtract, int iCol,
                          int iTok, int iTokEnd, int bUtf8){
  const char *z = pB->pSel->zSql;
  const ParToken *a = pB->pSel->aTok;
  int i, bChain = 1;
  if( !bUtf8 ) return PAR_COLL_UNKNOWN;
  /* Parentheses around an expression change nothing. */
  buildStripParens(a, &iTok, &iTokEnd);
  /* "expr COLLATE name" at the top level. */
  if( iTokEnd-iTok>=3 && parTokIs(z, &a[iTokEnd-2], "COLLATE") ){
    char *zName = parDequote(z + a[iTokEnd-1].i, a[iTokEnd-1].n);
    int e = zName ? parCollFromName(zName) : PAR_COLL_UNKNOWN;
    sqlite3_free(zName);
    /* Only when no other COLLATE or parenthesis could interfere. */
    for(i=iTok; i<iTokEnd-2; i++){
      if( parTokIs(z, &a[i], "COLLATE") || a[i].eType==PT_LP ) return PAR_COLL_UNKNOWN;
    }
    return e<0 ? PAR_COLL_UNKNOWN : e;
  }
  /* A plain column reference: the column's declared collation. */
  for(i=iTok; i<iTokEnd; i++){
    int e = a[i].eType;
    if( (i-iTok)%2==0 ? (e!=PT_ID && e!=PT_QID) : e!=PT_DOT ) bChain = 0;
  }
  if( bChain && pB->pSel->from.iEnd>0 ){
    /* Through a subquery or view, the origin column's collation may not
    ** be the one SQLite uses: a subquery's column has its expression's
    ** (a plain column's, or none for an aggregate call). */
    char *zInner = 0;
    int iSubCol, e = buildSubqueryColumn(pB, iTok, iTokEnd, &zInner, &iSubCol);
    if( e==2 ){
      e = buildSubqueryColKind(zInner, iSubCol);
      sqlite3_free(zInner);
      return e>=1 ? PAR_COLL_BINARY : e==0 ? buildOriginColl(pB, pExtract, iCol)
                                       : PAR_COLL_UNKNOWN;
    }
    if( e ) return PAR_COLL_UNKNOWN;
    return buildOriginColl(pB, pExtract, iCol);
  }
  /* Any other COLLATE, CAST or unary + may pass a collation up. */
  for(i=iTok; i<iTokEnd; i++){
    if( parTokIs(z, &a[i], "COLLATE") || parTokIs(z, &a[i], "CAST") ) return PAR_COLL_UNKNOWN;
    if( a[i].eType==PT_OP && z[a[i].i]=='+' ) return PAR_COLL_UNKNOWN;
  }
  return PAR_COLL_BINARY;
}

/* The COLLATE that goes with aggregate call pA's column in the final SQL
** (buildReplText).  A function's result takes the collation of
** its first argument that has an explicit COLLATE (sqlite3ExprCollSeq), so
** that COLLATE goes with the column: "(_pnb0 COLLATE NOCASE)" orders,
** compares and passes its collation up to an enclosing expression as
** max(s COLLATE NOCASE) does.  The column stands in a CASE, which like a
** function's result has no affinity and no collation (PAR_AS_RESULT): a
** par_rows column has BLOB affinity and BINARY collation, which in a
** comparison with a TEXT column ("count(*) = s") would keep 2 and '2'
** apart where SQLite converts the count to TEXT, and compare under
** BINARY where SQLite takes s's collation.  Returns the token naming that
** collation, -1 for none, or -2 when which COLLATE applies is not known. */
static int buildAggCollTok(const ParSelect *pSel, const ParAggCall *pA){
  int i, t = -1;
  for(i=0; i<pA->nArg && t==-1; i++){
    t = parExprCollateTok(pSel->zSql, pSel->aTok, pA->aArg[i].iTok, pA->aArg[i].iTokEnd);
  }
  return t;
}

int buildWhy(ParBuild *pB, const char *zFmt, const char *zArg){
  if( pB->pPlan->zWhy==0 ){
    pB->pPlan->zWhy = sqlite3_mprintf(zFmt, zArg);
    if( pB->pPlan->zWhy==0 ) buildNoMem(pB);
  }
  return 1;
}

/* The loops of zSql's query plan, one "SCAN ..."/"SEARCH ..." line each,
** and whether GROUP BY sorts (a temp b-tree) rather than reading an index
** in group order.  NULL on error. */
sqlite3_stmt *buildExplainStmt(sqlite3 *db, const char *zSql, const ParParams *pParams){
  sqlite3_stmt *pStmt = 0;
  char *zEqp = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", zSql);
  if( zEqp==0 || sqlite3_prepare_v2(db, zEqp, -1, &pStmt, 0) ){
    sqlite3_finalize(pStmt);
    pStmt = 0;
  }
  sqlite3_free(zEqp);
  /* With STAT4, the values bound can change the plan. */
  if( pStmt ) parParamsBind(pStmt, pParams);
  return pStmt;
}

char *buildLoops(sqlite3 *db, const char *zSql, const ParParams *pParams,
                        int *pbGroupSort){
  sqlite3_stmt *pStmt = buildExplainStmt(db, zSql, pParams);
  sqlite3_str *pStr;
  int aSub[64], nSub = 0;     /* ids of subqueries' rows */
  *pbGroupSort = 0;
  if( pStmt==0 ) return 0;
  pStr = sqlite3_str_new(db);
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zDetail = (const char*)sqlite3_column_text(pStmt, 3);
    int iId = sqlite3_column_int(pStmt, 0), iParent = sqlite3_column_int(pStmt, 1), k;
    if( zDetail==0 ) continue;
    /* Not the loops of a subquery in an expression: its rows are not the
    ** SELECT's (it runs whole where its expression is evaluated); nor
    ** those of a named subquery in FROM that SQLite materializes or runs
    ** as a co-routine (its rows are read by a loop of the SELECT's own).
    ** The unnamed ones SQLite makes for windows ("(subquery-1)") hold the
    ** loops the window planner reads (buildSelectLoops). */
    for(k=0; k<nSub && aSub[k]!=iParent; k++){}
    if( k<nSub || strstr(zDetail, "SCALAR SUBQUERY") || strstr(zDetail, "LIST SUBQUERY")
     || ((strncmp(zDetail, "MATERIALIZE ", 12)==0 || strncmp(zDetail, "CO-ROUTINE ", 11)==0)
         && strstr(zDetail, " (subquery-")==0) ){
      if( nSub>=(int)(sizeof(aSub)/sizeof(aSub[0])) ){
        sqlite3_finalize(pStmt);
        sqlite3_free(sqlite3_str_finish(pStr));
        return 0;
      }
      aSub[nSub++] = iId;
      continue;
    }
    if( strncmp(zDetail, "SCAN ", 5)==0 || strncmp(zDetail, "SEARCH ", 7)==0 ){
      sqlite3_str_appendf(pStr, "%s\n", zDetail);
    }
    if( strstr(zDetail, "TEMP B-TREE FOR GROUP BY") ) *pbGroupSort = 1;
  }
  sqlite3_finalize(pStmt);
  return sqlite3_str_finish(pStr);
}

/* The loops of the SELECT's query plan and whether its GROUP BY sorts
** (buildLoops), read once per build; NULL when they cannot be read. */
const char *buildSelectLoops(ParBuild *pB, int *pbGroupSort){
  if( !pB->bLoops ){
    pB->zLoops = buildLoops(pB->db, pB->pSel->zSql, pB->pPlan->pParams, &pB->bLoopsSort);
    pB->bLoops = 1;
    if( pB->zLoops && pB->pSel->nWinCall>0 ){
      /* The scans of the subqueries SQLite makes for windows
      ** (sqlite3WindowRewrite) are not loops over the FROM clause. */
      char *zOut = pB->zLoops, *zLine = pB->zLoops;
      while( *zLine ){
        size_t n = strcspn(zLine, "\n");
        const char *zSub = strstr(zLine, "(subquery-");
        int bSub = zSub && zSub<zLine+n;
        n += zLine[n]=='\n';
        if( !bSub ){
          memmove(zOut, zLine, n);
          zOut += n;
        }
        zLine += n;
      }
      *zOut = 0;
    }
  }
  *pbGroupSort = pB->bLoopsSort;
  return pB->zLoops;
}

/* How many instructions of zSql's program step or seek backwards (Last,
** Prev, SeekLT, SeekLE) through a table or index (a cursor of OpenRead:
** an ORDER BY with LIMIT also steps backwards, through an ephemeral
** table), or -1 when it does not prepare. */
int buildBackwardSteps(sqlite3 *db, const char *zSql, const ParParams *pParams){
  sqlite3_stmt *pStmt = 0;
  char *zExplain = sqlite3_mprintf("EXPLAIN %s", zSql);
  int n = -1, i, aBack[65];
  uint64_t mRead = 0;            /* cursors 0..63 opened by OpenRead */
  memset(aBack, 0, sizeof(aBack));
  if( zExplain && sqlite3_prepare_v2(db, zExplain, -1, &pStmt, 0)==SQLITE_OK ){
    parParamsBind(pStmt, pParams);
    while( sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zOp = (const char*)sqlite3_column_text(pStmt, 1);
      int iCur = sqlite3_column_int(pStmt, 2);
      if( zOp==0 ) continue;
      if( strcmp(zOp, "OpenRead")==0 || strcmp(zOp, "ReopenIdx")==0 ){
        if( iCur>=0 && iCur<64 ) mRead |= (uint64_t)1 << iCur;
      }else if( strcmp(zOp, "Last")==0 || strcmp(zOp, "Prev")==0
             || strcmp(zOp, "SeekLT")==0 || strcmp(zOp, "SeekLE")==0 ){
        aBack[iCur>=0 && iCur<64 ? iCur : 64]++;
      }
    }
    if( sqlite3_finalize(pStmt)==SQLITE_OK ){
      n = aBack[64];             /* cursors beyond 63: counted anyway */
      for(i=0; i<64; i++) if( (mRead>>i) & 1 ) n += aBack[i];
    }
  }
  sqlite3_free(zExplain);
  return n;
}

/* The bare column of extraction column iExpr among the *pnBare of
** aBareExpr, added when new; -1 (and the plan runs natively) when
** par_rows has no column for it. */
static int buildBare(ParBuild *pB, int *aBareExpr, int *pnBare, int iExpr){
  int j;
  for(j=0; j<*pnBare && aBareExpr[j]!=iExpr; j++){}
  if( j==*pnBare ) aBareExpr[(*pnBare)++] = iExpr;
  if( pB->pPlan->nAgg + j >= PAR_ROWS_MAX ){
    buildWhy(pB, "more result columns than par_rows serves%s", "");
    return -1;
  }
  return j;
}

/* The names of the collations PAR_COLL_*. */
static const char *azCollName[] = { "BINARY", "NOCASE", "RTRIM" };

/* Collation e, or PAR_COLL_UNKNOWN when the application replaced it (bit
** e of mReplaced). */
int buildKnownColl(int e, int mReplaced){
  return e>=0 && (mReplaced & (1<<e)) ? PAR_COLL_UNKNOWN : e;
}

/* Is ORDER BY term i of pSel descending? */
static int buildOrderDesc(const ParSelect *pSel, int i){
  const ParSpan *pSuf = &pSel->aOrder[i].suffix;
  int t;
  for(t=pSuf->iTok; t<pSuf->iTokEnd; t++){
    if( parTokIs(pSel->zSql, &pSel->aTok[t], "DESC") ) return 1;
  }
  return 0;
}

/* Does SQLite make pSel's groups in an order of mixed directions?  With as
** many ORDER BY terms as GROUP BY terms, select.c gives each key the
** direction of the ORDER BY term in its place. */
static int buildMixedOrder(const ParSelect *pSel){
  int i, nDesc = 0;
  if( pSel->nGroup==0 || pSel->nOrder!=pSel->nGroup ) return 0;
  for(i=0; i<pSel->nOrder; i++) nDesc += buildOrderDesc(pSel, i);
  return nDesc>0 && nDesc<pSel->nGroup;
}

/* Results that depend on the order of rows inside a group (group_concat,
** bare columns, which of equal values min/max keep, the bits of a REAL
** sum, which SQLite adds in row order) match SQLite's only
** if the extraction query visits rows in the order SQLite's own plan
** does: the same loops, each in the same direction (SQLite walks an index
** and an IN list backwards when that gives the GROUP BY keys an ORDER BY's
** direction; its query plan does not say so, its program does), and GROUP
** BY by sorting (stable) rather than by reading an index in group order. */
int buildOrderSensitive(ParBuild *pB){
  ParPlan *pPlan = pB->pPlan;
  int k;
  if( pB->nBareSensitive>0 || pB->bOrderMatters ) return 1;
  for(k=0; k<pPlan->nAgg; k++){
    int e = pPlan->aAgg[k].eFunc;
    if( e==PAR_AGG_GROUP_CONCAT || e==PAR_AGG_MIN || e==PAR_AGG_MAX
     || e==PAR_AGG_SUM || e==PAR_AGG_TOTAL || e==PAR_AGG_AVG ){
      return 1;
    }
  }
  return 0;
}

/* May SQLite stop reading before the last row?  A LIMIT where no temp
** b-tree sorts the rows it keeps (the loops give ORDER BY's order, or
** the groups come in order): then it reads only the rows it returns,
** which the join operator, reading whole tables, would not beat. */
static int buildStopsEarly(ParBuild *pB){
  sqlite3_stmt *pStmt;
  int bSorter = 0;
  if( !pB->pSel->bLimit ) return 0;
  pStmt = buildExplainStmt(pB->db, pB->pSel->zSql, pB->pPlan->pParams);
  if( pStmt==0 ) return 1;
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zDetail = (const char*)sqlite3_column_text(pStmt, 3);
    if( zDetail && sqlite3_column_int(pStmt, 1)==0
     && strstr(zDetail, "USE TEMP B-TREE FOR ")
     && (strstr(zDetail, "ORDER BY") || (pB->pSel->nOrder==0 && strstr(zDetail, "GROUP BY"))) ){
      bSorter = 1;
    }
  }
  sqlite3_finalize(pStmt);
  return !bSorter;
}

/* Can the check of the order wait for the join operator's plan (pB's
** zOrderWhy)?  A FROM of tables the operator may run, SQLite walking
** nothing backwards (nBack) and reading every row. */
static int buildCanDefer(ParBuild *pB, int nBack){
  const ParFrom *pFrom = pB->pSel->pFrom;
  if( pB->pSel->bWhere ){
    /* A subquery left in WHERE (not computed once: exec.c) is evaluated
    ** where SQLite's loops reach it, whose failure is SQLite's to report:
    ** another order of the tables' reads (an index's) would reach it on
    ** other rows, or none (a review's stress run). */
    const ParSpan *pW = &pB->pSel->where;
    int i;
    for(i=pW->iTok; i<pW->iTokEnd; i++){
      if( parTokIs(pB->pSel->zSql, &pB->pSel->aTok[i], "SELECT") ) return 0;
    }
  }
  return pFrom && (pFrom->nSrc>=2 || (pFrom->nSrc==1 && (pFrom->aSrc[0].eType==PAR_SRC_TABLE
                                                           || pFrom->aSrc[0].eType==PAR_SRC_SUBQUERY)))
      && nBack==0 && pB->zOrderWhy==0 && !buildStopsEarly(pB);
}

void buildCheckOrder(ParBuild *pB){
  ParPlan *pPlan = pB->pPlan;
  int bSort1 = 0, bSort2 = 0, nBack1, nBack2;
  const char *z1;
  char *z2;
  if( !buildOrderSensitive(pB) ) return;
  if( pPlan->nKey>0 || pB->bOrderMatters ){
    if( parQueryInt(pB->db, "PRAGMA reverse_unordered_selects", 0) ){
      /* SQLite keeps a GROUP BY's loops in order; the extraction query,
      ** which has none, would come reversed. */
      buildWhy(pB, pB->bOrderMatters
               ? "reverse_unordered_selects is on, and the order of ties depends on it%s"
               : "reverse_unordered_selects is on, and the result depends on the "
                 "order of rows inside groups%s", "");
      return;
    }
  }
  z1 = buildSelectLoops(pB, &bSort1);
  nBack1 = buildBackwardSteps(pB->db, pPlan->zSql, pPlan->pParams);
  {
    /* The rows are read through par_sink (batch.c): its plan is the one. */
    char *zSink = parSinkSql(pPlan->zExtract, (int)strlen(pPlan->zExtract),
                             pPlan->nExtractCol);
    z2 = zSink ? buildLoops(pB->db, zSink, pPlan->pParams, &bSort2) : 0;
    nBack2 = zSink ? buildBackwardSteps(pB->db, zSink, pPlan->pParams) : -1;
    sqlite3_free(zSink);
  }
  if( z1==0 || z2==0 ){
    buildWhy(pB, "the query plan could not be read%s", "");
  }else if( strcmp(z1, z2)!=0 ){
    /* The plan's lines on one line: "SCAN t; SEARCH u ...". */
    char *zLine = sqlite3_mprintf("%s", z1), *z;
    int n = zLine ? (int)strlen(zLine) : 0;
    while( n>0 && zLine[n-1]=='\n' ) zLine[--n] = 0;
    for(z=zLine; z && *z; z++) if( *z=='\n' ) *z = ';';
    if( buildCanDefer(pB, nBack1) ){
      /* The join operator may still visit them in SQLite's order: it
      ** follows the SELECT's loops (plan_join.c joinOrder); decided after
      ** it is planned (parPlanBuild). */
      pB->zOrderWhy = sqlite3_mprintf("SQLite would visit the rows in another order than "
                                      "the extraction query (its plan: %s), and the result "
                                      "depends on it", zLine ? zLine : "?");
      /* (When SQLite reads the groups in index order, its loops make each
      ** group's rows one run: the join operator's rows, in the order of
      ** those loops, grouped by a stable sort, are the same groups of the
      ** same rows in the same order.) */
      if( pB->zOrderWhy==0 ) buildNoMem(pB);
    }else{
      buildWhy(pB, "SQLite would visit the rows in another order than the "
               "extraction query (its plan: %s), and the result depends on it",
               zLine ? zLine : "?");
    }
    sqlite3_free(zLine);
  }else if( nBack1!=nBack2 ){
    buildWhy(pB, "SQLite walks an index or an IN list backwards where the extraction "
             "query walks it forwards, and the result depends on the order%s", "");
  }else if( pPlan->nKey>0 && !bSort1 && buildCanDefer(pB, nBack1) ){
    /* The join operator's scan walks the index as SQLite does (the same
    ** loops), and its rows group as SQLite's (above). */
    pB->zOrderWhy = sqlite3_mprintf("SQLite reads the groups in index order, and the result "
                                    "depends on the order of rows inside groups");
    if( pB->zOrderWhy==0 ) buildNoMem(pB);
  }else if( pPlan->nKey>0 && !bSort1 ){
    buildWhy(pB, "SQLite reads the groups in index order, and the result "
             "depends on the order of rows inside groups%s", "");
  }
  sqlite3_free(z2);
}

static void buildKeyRange(ParBuild *pB, const ParExpr *pTerm, int *piTok, int *piTokEnd,
                          int *piColl);

/* The order SQLite makes the groups in, which decides the rows that tie
** under ORDER BY and the ones a LIMIT keeps: 0 when it sorts them (a temp
** b-tree: by the keys, see the final SQL), 1 when it reads them in the
** order of an index whose first columns are the keys, in GROUP BY order,
** ascending, under their collations, or in rowid order (par_rows' order
** either way); else -1, with why not (zWhy).  aKeyColl: the keys'
** collations. */
/* The table of the FROM clause SQLite's loop (z, n) reads (its name in the
** plan: the table's or its alias), or NULL. */
static const ParFromSrc *buildLoopSource(ParBuild *pB, const char *z, int n){
  ParSelect *pSel = pB->pSel;
  int i;
  for(i=0; pSel->pFrom && i<pSel->pFrom->nSrc; i++){
    const ParFromSrc *p = &pSel->pFrom->aSrc[i];
    const char *zN = p->zAlias ? p->zAlias : p->zName;
    if( p->eType==PAR_SRC_TABLE && zN && (int)strlen(zN)==n && strncmp(zN, z, n)==0 ) return p;
  }
  return 0;
}

/* The schema of the table SQLite's loop (z, n) reads (its name in the
** plan: the table's or its alias), as the FROM clause names it or SQLite
** resolves it; NULL when not one of the FROM's tables. */
static char *buildLoopSchema(ParBuild *pB, const char *z, int n){
  const ParFromSrc *p = buildLoopSource(pB, z, n);
  if( p==0 ) return 0;
  return p->zSchema ? sqlite3_mprintf("%s", p->zSchema) : parResolveSchema(pB->db, p->zName);
}

/* Is the one GROUP BY key of pB's SELECT the INTEGER PRIMARY KEY of
** table (z, n) (its name in the plan: the table's or its alias), named
** alone or qualified by that name? */
static int buildKeyIsRowid(ParBuild *pB, const char *z, int n){
  ParSelect *pSel = pB->pSel;
  const ParFromSrc *pS = buildLoopSource(pB, z, n);
  sqlite3_stmt *pStmt = 0;
  char *zCol = 0, *zQual = 0, *zSchema = 0;
  int t0, t1, k, bOk = 0;
  if( pS==0 || buildWriting(pB->db) ) return 0;
  buildKeyRange(pB, &pSel->aGroup[0], &t0, &t1, &k);
  buildStripParens(pSel->aTok, &t0, &t1);
  if( t1-t0==1 && (pSel->aTok[t0].eType==PT_ID || pSel->aTok[t0].eType==PT_QID) ){
    zCol = parDequote(pSel->zSql + pSel->aTok[t0].i, pSel->aTok[t0].n);
  }else if( t1-t0==3 && pSel->aTok[t0+1].eType==PT_DOT
         && (pSel->aTok[t0+2].eType==PT_ID || pSel->aTok[t0+2].eType==PT_QID) ){
    zQual = parDequote(pSel->zSql + pSel->aTok[t0].i, pSel->aTok[t0].n);
    zCol = parDequote(pSel->zSql + pSel->aTok[t0+2].i, pSel->aTok[t0+2].n);
    if( zQual && sqlite3_strnicmp(zQual, z, n)!=0 ){ sqlite3_free(zCol); zCol = 0; }
    if( zQual && (int)strlen(zQual)!=n ){ sqlite3_free(zCol); zCol = 0; }
  }
  /* The table's one primary key column, declared INTEGER, of a rowid table
  ** (in its schema, named to the pragmas: see buildGroupOrder). */
  zSchema = zCol ? buildLoopSchema(pB, z, n) : 0;
  if( zSchema && sqlite3_prepare_v2(pB->db,
        "SELECT count(*)=1 AND max(upper(i.type)='INTEGER' AND i.name=?3 COLLATE NOCASE) "
        "AND (SELECT NOT wr FROM pragma_table_list(?1) WHERE schema=?2) "
        "FROM pragma_table_info(?1, ?2) AS i WHERE i.pk", -1, &pStmt, 0)==SQLITE_OK ){
    sqlite3_bind_text(pStmt, 1, pS->zName, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, zSchema, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 3, zCol, -1, SQLITE_STATIC);
    bOk = sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_int(pStmt, 0)==1;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSchema);
  sqlite3_free(zCol);
  sqlite3_free(zQual);
  return bOk;
}

/* Does db hold a write transaction?  Then the planner reads no index's
** columns (pragma index_xinfo): inside CREATE TEMP TABLE ... AS SELECT
** over a view, after another connection changed a schema, that read made
** SQLite reload the schemas and abort the statement ("abort due to
** ROLLBACK"); a plan that needs them runs natively. */
int buildWriting(sqlite3 *db){
  return sqlite3_txn_state(db, 0)==SQLITE_TXN_WRITE;
}


static int buildGroupOrder(ParBuild *pB, const int *aKeyColl){
  ParSelect *pSel = pB->pSel;
  const char *z = pSel->zSql;
  const char *zLoops;
  char *zIdx = 0, *zKeyTab = 0;
  int bSort = 0, eOrder = -1, k;
  zLoops = buildSelectLoops(pB, &bSort);
  if( zLoops==0 ){
    buildWhy(pB, "the query plan could not be read%s", "");
    return -1;
  }
  if( bSort ){
    eOrder = 0;
  }else if( strchr(zLoops, '\n')!=zLoops + strlen(zLoops) - 1 ){
    /* Several loops, the first walking an index whose first columns are
    ** the keys (columns of that loop's table): the groups come in the
    ** order the outer loop makes their keys, the index's (the inner loops
    ** only add rows to a group, or leave it out). */
    const char *zU = strstr(zLoops, " USING "), *zNl = strchr(zLoops, '\n'), *zI;
    if( zU && zU<zNl && (zI = strstr(zU, "INDEX "))!=0 && zI<zNl
     && (strncmp(zU, " USING INDEX ", 13)==0 || strncmp(zU, " USING COVERING INDEX ", 22)==0) ){
      const char *zT = zLoops + (zLoops[1]=='C' ? 5 : 7);
      zI += 6;
      zIdx = sqlite3_mprintf("%.*s", (int)strcspn(zI, " \n"), zI);
      zKeyTab = sqlite3_mprintf("%.*s", (int)strcspn(zT, " \n"), zT);
    }else if( strncmp(zLoops, "SCAN ", 5)==0 && (zU==0 || zU>zNl) && pSel->nGroup==1 ){
      /* "SCAN t" first, one key, t's INTEGER PRIMARY KEY: a group per row
      ** of t, in rowid order, ascending keys. */
      eOrder = buildKeyIsRowid(pB, zLoops + 5, (int)(zNl - zLoops - 5)) ? 1 : -1;
    }
  }else{
    /* One loop: "SCAN t", or "SCAN|SEARCH t USING [COVERING] INDEX i ...". */
    const char *zU = strstr(zLoops, " USING ");
    if( zU==0 || strncmp(zU, " USING INTEGER PRIMARY KEY", 26)==0 ){
      /* (With several keys and no sorter, one is the rowid, which makes
      ** each row its group: in rowid order, the keys' order only when the
      ** first key is that rowid.) */
      if( strncmp(zLoops, "SCAN ", 5)==0 && !strstr(zLoops, " VIRTUAL TABLE")
       && (pSel->nGroup<2 || buildKeyIsRowid(pB, zLoops + 5,
                                             (int)strcspn(zLoops + 5, " \n"))) ){
        sqlite3_stmt *pStmt = 0;
        char *zTab = sqlite3_mprintf("%.*s", (int)strcspn(zLoops + 5, " \n"), zLoops + 5);
        /* A rowid table is read in rowid order. */
        if( zTab && sqlite3_prepare_v2(pB->db, "SELECT wr FROM pragma_table_list "
                                       "WHERE name = ?1 AND type = 'table'", -1, &pStmt, 0)==0 ){
          sqlite3_bind_text(pStmt, 1, zTab, -1, SQLITE_STATIC);
          if( sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_int(pStmt, 0)==0
           && sqlite3_step(pStmt)==SQLITE_DONE ){
            eOrder = 1;
          }
        }
        sqlite3_finalize(pStmt);
        sqlite3_free(zTab);
      }
    }else{
      const char *zI = strstr(zU, "INDEX ");
      if( zI ){
        zI += 6;
        zIdx = sqlite3_mprintf("%.*s", (int)strcspn(zI, " \n"), zI);
      }
    }
  }
  if( zIdx ){
    sqlite3_stmt *pStmt = 0;
    int n = 0, bMatch = 1;
    /* The index's schema, its table's; not while the connection writes
    ** (buildWriting). */
    const char *zLoopTab = zLoops + (zLoops[1]=='C' ? 5 : 7);
    char *zSchema = buildLoopSchema(pB, zLoopTab, (int)strcspn(zLoopTab, " \n"));
    char *zQ = zSchema && !buildWriting(pB->db) ? sqlite3_mprintf("SELECT name, desc, coll FROM \"%w\".pragma_index_xinfo(?1) "
                                         "WHERE key ORDER BY seqno", zSchema) : 0;
    if( zQ && sqlite3_prepare_v2(pB->db, zQ, -1, &pStmt, 0)==SQLITE_OK ){
      sqlite3_bind_text(pStmt, 1, zIdx, -1, SQLITE_STATIC);
      while( n<pSel->nGroup && bMatch && sqlite3_step(pStmt)==SQLITE_ROW ){
        const char *zCol = (const char*)sqlite3_column_text(pStmt, 0);
        const char *zColl = (const char*)sqlite3_column_text(pStmt, 2);
        int t0, t1, bSame = 0;
        buildKeyRange(pB, &pSel->aGroup[n], &t0, &t1, &k);
        buildStripParens(pSel->aTok, &t0, &t1);
        /* The key is that column, by name (qualified or not; with several
        ** loops, qualified by the name of the table the index is on, which
        ** a name alone means if SQLite finds it there: else ambiguous). */
        if( zCol && t1>t0 && (pSel->aTok[t1-1].eType==PT_ID || pSel->aTok[t1-1].eType==PT_QID)
         && (t1-t0==1 || (t1-t0==3 && pSel->aTok[t0+1].eType==PT_DOT)) ){
          char *zName = parDequote(z + pSel->aTok[t1-1].i, pSel->aTok[t1-1].n);
          bSame = zName && sqlite3_stricmp(zName, zCol)==0;
          sqlite3_free(zName);
          if( bSame && zKeyTab && t1-t0==3 ){
            zName = parDequote(z + pSel->aTok[t0].i, pSel->aTok[t0].n);
            bSame = zName && sqlite3_stricmp(zName, zKeyTab)==0;
            sqlite3_free(zName);
          }
        }
        if( !bSame || sqlite3_column_int(pStmt, 1)!=0 || zColl==0
         || parCollFromName(zColl)!=aKeyColl[n] ){
          bMatch = 0;
        }
        n++;
      }
    }
    sqlite3_finalize(pStmt);
    sqlite3_free(zSchema);
    sqlite3_free(zQ);
    if( bMatch && n==pSel->nGroup ) eOrder = 1;
    sqlite3_free(zIdx);
  }
  sqlite3_free(zKeyTab);
  if( eOrder==1 && parQueryInt(pB->db, "PRAGMA reverse_unordered_selects", 0) ){
    eOrder = -1;                 /* SQLite reads the index backwards */
  }
  if( eOrder<0 ){
    /* The loops on one line (a copy: they are the build's). */
    char *zLine = sqlite3_mprintf("%s", zLoops), *c;
    for(c=zLine; c && *c; c++){ if( *c=='\n' ) *c = c[1] ? ';' : 0; }
    buildWhy(pB, "SQLite makes the groups in the order of its plan (%s), which decides the "
             "order of the groups, of the rows that tie under ORDER BY, or those LIMIT keeps",
             zLine ? zLine : "?");
    sqlite3_free(zLine);
  }
  return eOrder;
}

/* Are spans a and b the same tokens (keywords and names compared without
** regard to case)? */
static int buildSameTokens(ParSelect *pSel, ParSpan a, ParSpan b){
  int i;
  if( a.iTokEnd-a.iTok != b.iTokEnd-b.iTok ) return 0;
  for(i=0; i<a.iTokEnd-a.iTok; i++){
    const ParToken *x = &pSel->aTok[a.iTok+i], *y = &pSel->aTok[b.iTok+i];
    if( x->eType!=y->eType || x->n!=y->n ) return 0;
    if( x->eType==PT_ID ? sqlite3_strnicmp(pSel->zSql+x->i, pSel->zSql+y->i, x->n)
                        : memcmp(pSel->zSql+x->i, pSel->zSql+y->i, x->n) ) return 0;
  }
  return 1;
}

/* ---- building the plan ---------------------------------------------------------- */

/* Does SQLite merge aggregate calls a and b into one, as it merges calls
** it finds equal once names are resolved (min(t.a) and min(a), min((a))
** and min(a))?  1 when their tokens are the same; else SQLite is asked:
** both calls, and a count(*) that keeps the min/max optimization out,
** over the FROM clause compile to two aggregate steps when merged, three
** when not.  -1 when that does not tell (it does not prepare). */
static int buildSameAgg(ParBuild *pB, const ParAggCall *a, const ParAggCall *b){
  ParSelect *pSel = pB->pSel;
  const char *z = pSel->zSql;
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int nStep = 0;
  if( a->eFunc!=b->eFunc || a->bDistinct!=b->bDistinct || a->nArg!=b->nArg ) return 0;
  if( buildSameTokens(pSel, a->call, b->call) ) return 1;
  zSql = sqlite3_mprintf("EXPLAIN SELECT %.*s, %.*s, count(*) FROM %s",
                         a->call.iEnd - a->call.iStart, z + a->call.iStart,
                         b->call.iEnd - b->call.iStart, z + b->call.iStart, pB->zFrom);
  if( zSql==0 ){ buildNoMem(pB); return -1; }
  if( sqlite3_prepare_v2(pB->db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
    parParamsBind(pStmt, pB->pPlan->pParams);
    while( sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zOp = (const char*)sqlite3_column_text(pStmt, 1);
      if( zOp && strcmp(zOp, "AggStep")==0 ) nStep++;
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return nStep==2 ? 1 : nStep==3 ? 0 : -1;
}

/* Where SQLite analyses an aggregate call at span c: the select list
** first, then ORDER BY, then HAVING, each in source order. */
static int buildAggRank(const ParSelect *pSel, ParSpan c){
  int rank = 0, j;
  if( pSel->bHaving && c.iStart>=pSel->having.span.iStart && c.iEnd<=pSel->having.span.iEnd ){
    rank = 2;
  }
  for(j=0; j<pSel->nOrder; j++){
    if( c.iStart>=pSel->aOrder[j].span.iStart && c.iEnd<=pSel->aOrder[j].span.iEnd ) rank = 1;
  }
  return rank*(1<<24) + c.iStart;
}

static ParSpan buildTokSpan(ParSelect *pSel, int iTok, int iTokEnd);

/* Index of the token after the parenthesis that closes the one at i. */
static int skipParensTo(const ParToken *a, int i){
  int d = 0;
  for(; a[i].eType!=PT_EOF; i++){
    if( a[i].eType==PT_LP ) d++;
    if( a[i].eType==PT_RP && --d==0 ) return i+1;
  }
  return i;
}

/* Token range of the expression a GROUP BY term stands for, after
** resolving an ordinal or an alias as SQLite does. */
static void buildKeyRange(ParBuild *pB, const ParExpr *pTerm, int *piTok, int *piTokEnd,
                          int *piColl){
  ParSelect *pSel = pB->pSel;
  const ParToken *a = pSel->aTok;
  const char *z = pSel->zSql;
  int t0 = pTerm->span.iTok, t1 = pTerm->span.iTokEnd, iColl = -1, j;
  *piTok = t0;
  *piTokEnd = t1;
  *piColl = -2;
  /* SQLite looks through COLLATE, parentheses and unary plus ("GROUP BY
  ** +1", "(1)", "0x1" and "2 COLLATE NOCASE" are all ordinals). */
  for(;;){
    if( t1-t0>=3 && parTokIs(z, &a[t1-2], "COLLATE") && iColl<0 ){
      iColl = t1-1;
      t1 -= 2;
    }else if( t1-t0>=3 && a[t0].eType==PT_LP && a[t1-1].eType==PT_RP
           && skipParensTo(a, t0)==t1 ){
      t0++;
      t1--;
    }else if( t1-t0>=2 && a[t0].eType==PT_OP && a[t0].n==1 && z[a[t0].i]=='+' ){
      t0++;
    }else{
      break;
    }
  }
  if( t1-t0!=1 ) return;
  if( a[t0].eType==PT_NUMBER ){
    sqlite3_int64 k = 0;
    const char *zNum = z + a[t0].i;
    int n = a[t0].n, bHex = n>2 && zNum[0]=='0' && (zNum[1]=='x' || zNum[1]=='X');
    for(j=bHex ? 2 : 0; j<n && k>=0; j++){
      char c = zNum[j];
      int v = (c>='0' && c<='9') ? c-'0' : (bHex && c>='a' && c<='f') ? c-'a'+10
            : (bHex && c>='A' && c<='F') ? c-'A'+10 : -1;
      if( v<0 || k>100000 ){ k = -1; break; }
      k = k*(bHex ? 16 : 10) + v;
    }
    if( k<1 || k>pSel->nCol ) return;
    *piTok = pSel->aCol[k-1].span.iTok;
    *piTokEnd = pSel->aCol[k-1].span.iTokEnd;
  }else if( a[t0].eType==PT_ID || a[t0].eType==PT_QID ){
    char *zName = parSpanText(z, buildTokSpan(pSel, t0, t0+1));
    char *zDeq = zName ? parDequote(zName, (int)strlen(zName)) : 0;
    int bFound = 0;
    if( zName && zDeq && !buildResolves(pB, zName) ){
      for(j=0; j<pSel->nCol && !bFound; j++){
        if( pSel->aCol[j].zAlias && sqlite3_stricmp(pSel->aCol[j].zAlias, zDeq)==0 ){
          *piTok = pSel->aCol[j].span.iTok;
          *piTokEnd = pSel->aCol[j].span.iTokEnd;
          bFound = 1;
        }
      }
    }
    if( zName==0 || zDeq==0 ) buildNoMem(pB);
    sqlite3_free(zName);
    sqlite3_free(zDeq);
    if( !bFound ) return;
  }else{
    return;
  }
  /* Replaced by a select-list expression: a COLLATE on the term applies. */
  if( iColl>=0 ){
    char *zName = parDequote(z + a[iColl].i, a[iColl].n);
    int e = zName ? parCollFromName(zName) : -1;
    sqlite3_free(zName);
    *piColl = e<0 ? PAR_COLL_UNKNOWN : e;
  }
}

static ParSpan buildTokSpan(ParSelect *pSel, int iTok, int iTokEnd){
  ParSpan s;
  s.iTok = iTok;
  s.iTokEnd = iTokEnd;
  s.iStart = pSel->aTok[iTok].i;
  s.iEnd = iTokEnd>iTok ? pSel->aTok[iTokEnd-1].i + pSel->aTok[iTokEnd-1].n : s.iStart;
  return s;
}

/* Is the span inside one of the aggregate calls? */
static int buildInAgg(ParSelect *pSel, ParSpan s){
  int k;
  for(k=0; k<pSel->nAgg; k++){
    if( s.iStart>=pSel->aAgg[k].call.iStart && s.iEnd<=pSel->aAgg[k].call.iEnd ) return 1;
  }
  return 0;
}

/* [*pt0, *pt1) without the parentheses that enclose all of it. */
void buildStripParens(const ParToken *a, int *pt0, int *pt1){
  while( *pt1-*pt0>=3 && a[*pt0].eType==PT_LP && a[*pt1-1].eType==PT_RP
      && skipParensTo(a, *pt0)==*pt1 ){
    (*pt0)++;
    (*pt1)--;
  }
}

/* May the value of the GROUP BY key written as tokens [t0, t1) stand for
** a select-list item that is the same expression (see buildKeyItems)?  Only
** for an expression SQLite gives no affinity and no collation
** (sqlite3ExprAffinity, sqlite3ExprCollSeq): not a column, not CAST(...)
** or unary + at the top (which pass on a column's affinity or collation),
** no COLLATE anywhere (it passes up through functions and operators).
** Not when it reads a subquery, nor for random() and the like, which
** SQLite calls again for the item. */
static int buildKeyStandsIn(const ParSelect *pSel, int t0, int t1){
  static const char *azAgain[] = {
    "random", "randomblob", "changes", "total_changes", "last_insert_rowid"
  };
  const char *z = pSel->zSql;
  const ParToken *a = pSel->aTok;
  int i, k, bChain = 1, bName = 0;
  buildStripParens(a, &t0, &t1);
  if( t1<=t0 || (a[t0].eType==PT_OP && z[a[t0].i]=='+')
   || (parTokIs(z, &a[t0], "CAST") && t0+1<t1 && skipParensTo(a, t0+1)==t1) ){
    return 0;
  }
  for(i=t0; i<t1; i++){
    int e = a[i].eType;
    if( (i-t0)%2==0 ? (e!=PT_ID && e!=PT_QID) : e!=PT_DOT ) bChain = 0;
    if( e==PT_ID || e==PT_QID ) bName = 1;
    if( parTokIs(z, &a[i], "COLLATE") || parTokIs(z, &a[i], "SELECT") ) return 0;
    for(k=0; e==PT_ID && k<(int)(sizeof(azAgain)/sizeof(azAgain[0])); k++){
      if( parTokIs(z, &a[i], azAgain[k]) ) return 0;
    }
  }
  return bName && !bChain;
}

/* Are token ranges [s0, s1) and [t0, t1) the same expression written the
** same way, parentheses around the whole aside? */
static int buildSameExpr(ParSelect *pSel, int s0, int s1, int t0, int t1){
  buildStripParens(pSel->aTok, &s0, &s1);
  buildStripParens(pSel->aTok, &t0, &t1);
  return buildSameTokens(pSel, buildTokSpan(pSel, s0, s1), buildTokSpan(pSel, t0, t1));
}

/* The group-by planner's state from one step of buildPlan to the next
** (buildPlan frees it). */
typedef struct ParGroupBuild {
  int *aKeyTok;          /* key i is the SELECT's tokens [aKeyTok[2*i],
                         ** aKeyTok[2*i+1]) */
  int *aTermColl;        /* GROUP BY term i is an ordinal or an alias with
                         ** a COLLATE: its collation (PAR_COLL_UNKNOWN for
                         ** one not known); else -2 (buildKeyRange) */
  int *aAggOf;           /* the plan's aggregate of each aggregate call */
  int *aCallOf;          /* the first call of each of the plan's aggregates */
  int *aKeyItem;         /* the key that stands for each select-list item,
                         ** or -1 */
  int nBare;             /* bare columns so far */
  int nStable;           /* ...those of keys whose value no row changes
                         ** (buildKeyStable) */
  int *aBareExpr;        /* extraction column of each bare column */
  char *aBareAff;        /* its affinity letter */
  sqlite3_stmt *pExtract;  /* the extraction query, prepared */
  int bUtf8;             /* the database's text is UTF-8 */
  int eGroupOrder;       /* buildGroupOrder(), 0 when not asked */
} ParGroupBuild;

/* The WINDOW definition SQLite takes for zName: the last of that name. */
static int buildWindowDef(const ParSelect *pSel, const char *zName, int nBefore){
  int k, iDef = -1;
  for(k=0; zName && k<nBefore; k++){
    if( pSel->aWinDef[k].zName && sqlite3_stricmp(pSel->aWinDef[k].zName, zName)==0 ) iDef = k;
  }
  return iDef;
}

/* Is every WINDOW definition with an aggregate call in it used by a window
** call (named by it, or the base of the window it names or writes)? */
static int buildWindowDefsUsed(const ParSelect *pSel){
  int k, c;
  for(k=0; k<pSel->nWinDef; k++){
    int bUsed = 0;
    if( !pSel->aWinDef[k].bAgg ) continue;
    for(c=0; c<pSel->nWinCall && !bUsed; c++){
      const ParWinCall *pC = &pSel->aWinCall[c];
      int iDef = buildWindowDef(pSel, pC->zOver, pSel->nWinDef);
      const ParWinSpec *pW = pC->zOver ? (iDef>=0 ? &pSel->aWinDef[iDef] : 0) : &pC->win;
      bUsed = iDef==k || (pW && pW->zBase
                          && buildWindowDef(pSel, pW->zBase, iDef>=0 ? iDef : pSel->nWinDef)==k);
    }
    if( !bUsed ) return 0;
  }
  return 1;
}

/* Send to SQLite what the group-by cannot plan: SELECT * (the final SQL
** reads par_rows, where * would mean its columns); a call of an aggregate
** or window function the kernels do not compute; an aggregate the kernels
** do compute but the application defined again (SQLite calls the
** application's); more GROUP BY terms than par_rows has columns; an alias
** named like a par_rows column, which would change what names in the
** final SQL mean.  Returns 1 when the SELECT runs natively (zWhy) or
** memory ran out, else 0. */
static int buildGroupChecks(ParBuild *pB){
  ParSelect *pSel = pB->pSel;
  const char *z = pSel->zSql;
  int i;
  if( pSel->bStar ){ buildWhy(pB, "SELECT *%s", ""); return 1; }
  if( pSel->bWinClauseAgg && !buildWindowDefsUsed(pSel) ){
    /* It counts only if a call uses its window: no aggregate query
    ** otherwise, and no min()/max() that picks the row of bare columns. */
    buildWhy(pB, "an aggregate call in a WINDOW definition%s", "");
    return 1;
  }
  if( pSel->nWinCall>0 && pSel->bDistinct ){
    buildWhy(pB, "DISTINCT with window functions%s", "");
    return 1;
  }
  for(i=0; i<pSel->nCall; i++){
    char *zName = parSpanText(z, pSel->aCall[i]);
    if( zName==0 ){ buildNoMem(pB); return 1; }
    if( buildIsAggFunc(pB, zName, pSel->aCallArgc[i]) ){
      buildWhy(pB, "%s() is an aggregate the kernels do not compute", zName);
      sqlite3_free(zName);
      return 1;
    }
    sqlite3_free(zName);
  }
  for(i=0; i<pSel->nAgg; i++){
    static const char *azAgg[] = {   /* by PAR_AGG_* */
      "count", "count", "sum", "total", "avg", "min", "max", "group_concat"
    };
    int e = pSel->aAgg[i].eFunc;
    const char *zAgg = e>=0 && e<(int)(sizeof(azAgg)/sizeof(azAgg[0])) ? azAgg[e] : 0;
    if( zAgg && buildIsAppFunc(pB, zAgg, pSel->aAgg[i].nArg) ){
      buildWhy(pB, "the application defines its own %s()", zAgg);
      return 1;
    }
  }
  if( pSel->nGroup>PAR_ROWS_MAX ){ buildWhy(pB, "too many GROUP BY terms%s", ""); return 1; }
  for(i=0; i<pSel->nCol; i++){
    const char *zA = pSel->aCol[i].zAlias;
    if( zA && (zA[0]=='_') && (zA[1]=='p' || zA[1]=='P') && zA[2] && strchr("nirtuNIRTU", zA[2]) ){
      buildWhy(pB, "the alias %s looks like a column of par_rows", zA);
      return 1;
    }
  }
  return 0;
}

/* The GROUP BY keys: key i is extraction column i, added directly rather
** than through buildExpr so that two keys written alike still take a
** column each (an aggregate's argument or a bare column may share a key's
** column).  A key is the expression its term stands for once an ordinal
** or an alias is resolved as SQLite resolves it (buildKeyRange); its
** tokens and the term's own COLLATE are kept for the collations
** (buildGroupColls) and the items a key stands for (buildKeyItems).
** Returns 1 when memory ran out, else 0. */
static int buildGroupKeys(ParBuild *pB, ParGroupBuild *pG){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  const char *z = pSel->zSql;
  int i;
  pPlan->nKey = pSel->nGroup;
  pPlan->aKeyColl = sqlite3_malloc64(sizeof(int)*(pSel->nGroup+1));
  pPlan->azKey = sqlite3_malloc64(sizeof(char*)*(pSel->nGroup+1));
  if( pPlan->azKey ) memset(pPlan->azKey, 0, sizeof(char*)*(pSel->nGroup+1));
  pG->aKeyTok = sqlite3_malloc64(sizeof(int)*2*(pSel->nGroup+1));
  pG->aTermColl = sqlite3_malloc64(sizeof(int)*(pSel->nGroup+1));
  if( pPlan->aKeyColl==0 || pPlan->azKey==0 || pG->aKeyTok==0 || pG->aTermColl==0 ){
    buildNoMem(pB);
    return 1;
  }
  for(i=0; i<pSel->nGroup; i++){
    int iTok, iTokEnd, iColl;
    char *zKey;
    char **az;
    buildKeyRange(pB, &pSel->aGroup[i], &iTok, &iTokEnd, &iColl);
    pG->aTermColl[i] = iColl;
    pG->aKeyTok[2*i] = iTok;
    pG->aKeyTok[2*i+1] = iTokEnd;
    zKey = parSpanText(z, buildTokSpan(pSel, iTok, iTokEnd));
    pPlan->azKey[i] = parSpanText(z, buildTokSpan(pSel, iTok, iTokEnd));
    if( zKey==0 ){ buildNoMem(pB); return 1; }
    az = sqlite3_realloc64(pB->azExpr, (pB->nExpr+1)*sizeof(char*));
    if( az==0 ){ sqlite3_free(zKey); buildNoMem(pB); return 1; }
    pB->azExpr = az;
    az[pB->nExpr++] = zKey;
  }
  return 0;
}

/* The aggregates: each call's arguments become extraction columns (a
** group_concat's also as TEXT, the way SQLite concatenates them), and the
** call a replacement in the final SQL that reads its result column, under
** the COLLATE its result takes (buildAggCollTok).  A call written again
** (in HAVING, ORDER BY) with the same function over the same argument
** texts, and so under the same collations, is computed once:
** pG->aAggOf[k] is the plan's aggregate of call k, pG->aCallOf[m] the
** first call of aggregate m.  Returns 1 when the SELECT runs natively
** (zWhy) or memory ran out before the calls were read, else 0 (pB->rc may
** then be set: buildBareCols stops on it). */
static int buildGroupAggs(ParBuild *pB, ParGroupBuild *pG){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  const char *z = pSel->zSql;
  int k;
  pPlan->aAgg = sqlite3_malloc64(sizeof(ParPlanAgg)*(pSel->nAgg+1));
  pG->aAggOf = sqlite3_malloc64(sizeof(int)*(pSel->nAgg+1));
  pG->aCallOf = sqlite3_malloc64(sizeof(int)*(pSel->nAgg+1));
  if( pPlan->aAgg==0 || pG->aAggOf==0 || pG->aCallOf==0 ){ buildNoMem(pB); return 1; }
  memset(pPlan->aAgg, 0, sizeof(ParPlanAgg)*(pSel->nAgg+1));
  pPlan->nAgg = 0;
  for(k=0; k<pSel->nAgg && pB->rc==SQLITE_OK; k++){
    ParAggCall *pA = &pSel->aAgg[k];
    ParPlanAgg *pP = &pPlan->aAgg[pPlan->nAgg];
    int m, t;
    pP->eFunc = pA->eFunc;
    pP->bDistinct = pA->bDistinct;
    pP->iArg = pP->iText = pP->iSep = -1;
    pP->zText = parSpanText(z, pA->call);
    if( pA->nArg>=1 ){
      pP->iArg = buildExpr(pB, parSpanText(z, pA->aArg[0]));
    }
    if( pA->eFunc==PAR_AGG_GROUP_CONCAT ){
      pP->iText = buildExpr(pB, sqlite3_mprintf("CAST((%.*s) AS TEXT)",
                  pA->aArg[0].iEnd - pA->aArg[0].iStart, z + pA->aArg[0].iStart));
      if( pA->nArg==2 ){
        pP->iSep = buildExpr(pB, sqlite3_mprintf("CAST((%.*s) AS TEXT)",
                   pA->aArg[1].iEnd - pA->aArg[1].iStart, z + pA->aArg[1].iStart));
      }
    }
    for(m=0; m<pPlan->nAgg; m++){
      const ParPlanAgg *pM = &pPlan->aAgg[m];
      if( pM->eFunc==pP->eFunc && pM->bDistinct==pP->bDistinct && pM->iArg==pP->iArg
       && pM->iText==pP->iText && pM->iSep==pP->iSep ){
        break;
      }
    }
    if( m<pPlan->nAgg ){
      sqlite3_free(pP->zText);
      memset(pP, 0, sizeof(*pP));
    }else{
      pG->aCallOf[m] = k;
      pPlan->nAgg++;
    }
    pG->aAggOf[k] = m;
    if( PAR_ROWS_MAX<=m ){ buildWhy(pB, "more result columns than par_rows serves%s", ""); return 1; }
    t = buildAggCollTok(pSel, pA);
    if( t==-2 ){
      buildWhy(pB, "an aggregate whose result collation is not known: %s", pP->zText);
      return 1;
    }
    buildRepl(pB, pA->call, PAR_REPL_AGG, m, t);
  }
  return 0;
}

/* The min/max aggregate whose updates choose the row bare columns come
** from (ParPlan.iDecide, -1 for none): SQLite resets its "min/max hit"
** flag before each min/max step, so the last one it analysed (select
** list, ORDER BY, HAVING: buildAggRank) decides.  SQLite merges identical
** calls into the first one it analysed, so a duplicate ranks where that
** one does; when SQLite cannot be asked whether two calls are identical
** (buildSameAgg), or a min/max(DISTINCT ...) would decide, the SELECT
** runs natively.  Returns 1 when it does (zWhy), else 0. */
static int buildGroupDecide(ParBuild *pB, ParGroupBuild *pG){
  ParSelect *pSel = pB->pSel;
  int best = -1, k;
  pB->pPlan->iDecide = -1;
  for(k=0; k<pSel->nAgg; k++){
    ParAggCall *pA = &pSel->aAgg[k];
    int rank, j;
    if( pA->eFunc!=PAR_AGG_MIN && pA->eFunc!=PAR_AGG_MAX ) continue;
    rank = buildAggRank(pSel, pA->call);
    for(j=0; j<pSel->nAgg && pSel->nRef>0; j++){
      ParAggCall *pB2 = &pSel->aAgg[j];
      int r2, bSame = j==k ? 0 : buildSameAgg(pB, pA, pB2);
      if( bSame<0 ){
        char *zCall = parSpanText(pSel->zSql, pA->call);
        if( pB->rc==SQLITE_OK ){
          buildWhy(pB, "bare columns with %s, which SQLite may take as one with another "
                   "call (it does not say)", zCall ? zCall : "min() or max()");
        }
        sqlite3_free(zCall);
        return 1;
      }
      if( !bSame ) continue;
      r2 = buildAggRank(pSel, pB2->call);
      if( r2<rank ) rank = r2;
    }
    if( rank>best ){ best = rank; pB->pPlan->iDecide = pG->aAggOf[k]; }
    if( pA->bDistinct && pSel->nRef>0 ){
      buildWhy(pB, "bare columns together with min/max(DISTINCT ...)%s", "");
      return 1;
    }
  }
  return 0;
}

/* ParPlan.bHavingKeys.  SQLite moves a HAVING term whose every column is
** inside a GROUP BY key into WHERE (havingToWhere): such a term sees every
** row's key, not the group's row's.  Any name outside aggregate calls in
** HAVING may be one; parGroupBy checks that the keys' values make this no
** matter. */
static void buildHavingKeys(ParBuild *pB){
  ParSelect *pSel = pB->pSel;
  int k;
  for(k=0; k<pSel->nRef && pSel->bHaving && pSel->nGroup>0; k++){
    ParSpan s = pSel->aRef[k];
    if( s.iStart>=pSel->having.span.iStart && s.iEnd<=pSel->having.span.iEnd
     && !buildInAgg(pSel, s) ){
      pB->pPlan->bHavingKeys = 1;
    }
  }
}

/* The select-list items a GROUP BY key stands for (pG->aKeyItem).  An
** item that is a key's expression ("SELECT ts / 86400, count(*) ... GROUP
** BY ts / 86400", or "GROUP BY 1") is SQLite's expression evaluated on
** the group's row: the key's value in that row, a bare column of the
** key's extraction column.  The columns it names need not be read, and a
** dense key stays dense.  Only for a key that may stand in
** (buildKeyStandsIn).  Returns 1 when the SELECT runs natively, else 0. */
/* Is key k a plain column (a name or chain of names, not through a
** subquery or view) of INTEGER, REAL, NUMERIC or TEXT affinity under
** BINARY?  Then every row of one of its groups holds the same value, of
** one storage class (such a column stores 1.0 as 1, or 1 as 1.0, or
** either as text), so a bare reference to it is the same whichever row
** of the group SQLite takes it from. */
static int buildKeyStable(ParBuild *pB, ParGroupBuild *pG, int k){
  const ParSelect *pSel = pB->pSel;
  const ParToken *a = pSel->aTok;
  int t0 = pG->aKeyTok[2*k], t1 = pG->aKeyTok[2*k+1], i, bOk = 0;
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  if( pG->aTermColl[k]>-2 || t1-t0<1 || (t1-t0)%2==0 ) return 0;
  for(i=t0; i<t1; i++){
    int e = a[i].eType;
    if( (i-t0)%2==0 ? (e!=PT_ID && e!=PT_QID) : e!=PT_DOT ) return 0;
  }
  {
    /* Through a subquery: a count's (an INTEGER), or a plain column's. */
    char *zInner = 0;
    int iSub, e = buildSubqueryColumn(pB, t0, t1, &zInner, &iSub);
    if( e==2 ){
      e = buildSubqueryColKind(zInner, iSub);
      sqlite3_free(zInner);
      if( e==2 ) return 1;
      if( e!=0 ) return 0;
    }else if( e ){
      return 0;
    }
  }
  zSql = sqlite3_mprintf("SELECT %.*s FROM %s", a[t1-1].i + a[t1-1].n - a[t0].i,
                         pSel->zSql + a[t0].i, pB->zFrom);
  if( zSql && sqlite3_prepare_v2(pB->db, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_column_origin_name(pStmt, 0) ){
    const char *zColl = parOriginColl(pB->db, pStmt, 0);
    const char *zTab = sqlite3_column_table_name(pStmt, 0);
    char c = parAffinityLetter(sqlite3_column_decltype(pStmt, 0));
    bOk = c!='n' && (zColl==0 || sqlite3_stricmp(zColl, "BINARY")==0) && zTab
       && buildOriginColl(pB, pStmt, 0)!=PAR_COLL_UNKNOWN;     /* (not a view's) */
    if( sqlite3_stricmp(sqlite3_column_origin_name(pStmt, 0), "rowid")==0 ) bOk = zTab!=0;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return bOk;
}

static int buildKeyItems(ParBuild *pB, ParGroupBuild *pG){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  int i, k;
  for(i=0; i<pSel->nCol; i++){
    const ParSpan *pItem = &pSel->aCol[i].span;
    pG->aKeyItem[i] = -1;
    for(k=0; k<pPlan->nKey && pG->aKeyItem[i]<0; k++){
      if( buildKeyStandsIn(pSel, pG->aKeyTok[2*k], pG->aKeyTok[2*k+1])
       && buildSameExpr(pSel, pItem->iTok, pItem->iTokEnd, pG->aKeyTok[2*k],
                        pG->aKeyTok[2*k+1]) ){
        int j = buildBare(pB, pG->aBareExpr, &pG->nBare, k);
        if( j<0 ) return 1;
        /* No affinity, as SQLite's expression has none; the letters are
        ** filled in by buildBareAffinities. */
        buildRepl(pB, *pItem, PAR_REPL_ITEM, pPlan->nAgg + j, -1);
        pG->aKeyItem[i] = k;
      }
    }
  }
  return 0;
}

/* Is the reference at span s an ORDER BY term that is just a name of the
** select list's aliases (in parentheses or with a COLLATE, which SQLite
** looks through)?  It then means that result column, which the final SQL
** names itself. */
int buildOrderAlias(const ParSelect *pSel, ParSpan s){
  const char *z = pSel->zSql;
  const ParToken *a = pSel->aTok;
  int j, bAlias = 0;
  for(j=0; j<pSel->nOrder; j++){
    int t0 = pSel->aOrder[j].span.iTok, t1 = pSel->aOrder[j].span.iTokEnd;
    buildStripParens(a, &t0, &t1);
    if( t1-t0>=3 && parTokIs(z, &a[t1-2], "COLLATE") ) t1 -= 2;
    buildStripParens(a, &t0, &t1);
    if( t1-t0==1 && t0==s.iTok ){
      char *zDeq = parDequote(z + s.iStart, s.iEnd - s.iStart);
      int c;
      for(c=0; zDeq && c<pSel->nCol; c++){
        if( pSel->aCol[c].zAlias && sqlite3_stricmp(pSel->aCol[c].zAlias, zDeq)==0 ) bAlias = 1;
      }
      sqlite3_free(zDeq);
    }
  }
  return bAlias;
}

/* The bare column references: every name outside aggregate calls and
** outside the items a key stands for that SQLite resolves as a column of
** the FROM clause (buildResolves: not an alias, not a keyword such as
** TRUE) is read from the group's row through a bare column.  Returns 1
** when the SELECT runs natively or memory ran out, else 0. */
static int buildBareRefs(ParBuild *pB, ParGroupBuild *pG){
  ParSelect *pSel = pB->pSel;
  int k;
  for(k=0; k<pSel->nRef && pB->rc==SQLITE_OK; k++){
    ParSpan s = pSel->aRef[k];
    char *zRef;
    int iExpr, j;
    if( buildInAgg(pSel, s) ) continue;
    for(j=0; j<pSel->nCol; j++){
      if( pG->aKeyItem[j]>=0 && s.iStart>=pSel->aCol[j].span.iStart
       && s.iEnd<=pSel->aCol[j].span.iEnd ){
        break;
      }
    }
    if( j<pSel->nCol ) continue;           /* inside an item a key stands for */
    if( buildOrderAlias(pSel, s) ) continue;
    zRef = parSpanText(pSel->zSql, s);
    if( zRef==0 ){ buildNoMem(pB); return 1; }
    if( !buildResolves(pB, zRef) ){
      sqlite3_free(zRef);    /* an alias or a keyword such as TRUE */
      continue;
    }
    iExpr = buildExpr(pB, zRef);
    j = buildBare(pB, pG->aBareExpr, &pG->nBare, iExpr);
    if( j<0 ) return 1;
    if( j==pG->nBare-1 && iExpr>=0 && iExpr<pB->pPlan->nKey && buildKeyStable(pB, pG, iExpr) ){
      pG->nStable++;           /* a key's own column: one value per group */
    }
    /* The affinity letter is filled in by buildBareAffinities, after
    ** preparing. */
    buildRepl(pB, s, PAR_REPL_BARE, pB->pPlan->nAgg + j, -1);
  }
  return 0;
}

/* The bare columns: result columns nAgg.. of par_rows, each an extraction
** column's value in the row of its group SQLite takes them from.  First
** the items keys stand for (buildKeyItems) and the column references
** (buildBareRefs), whose values depend on that row (nBareSensitive); then,
** when SQLite makes the groups in an order of mixed directions, the keys
** themselves, which break ORDER BY's ties in the final SQL (whichever row
** of the group a key comes from, it is the same under the key's
** collation).  Returns 1 when the SELECT runs natively or memory ran out,
** else 0. */
static int buildBareCols(ParBuild *pB, ParGroupBuild *pG){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  int nBareMax = pSel->nRef + pSel->nCol + pSel->nGroup + 1;   /* room in aBareExpr */
  int k;
  pG->aBareExpr = sqlite3_malloc64(sizeof(int)*nBareMax);
  pG->aBareAff = sqlite3_malloc64(nBareMax);
  pG->aKeyItem = sqlite3_malloc64(sizeof(int)*(pSel->nCol+1));
  pPlan->aBareCol = sqlite3_malloc64(sizeof(int)*nBareMax);
  if( pG->aBareExpr==0 || pG->aBareAff==0 || pG->aKeyItem==0 || pPlan->aBareCol==0 ){
    buildNoMem(pB);
    return 1;
  }
  if( buildKeyItems(pB, pG) || buildBareRefs(pB, pG) ) return 1;
  if( pB->rc ) return 1;
  pB->nBareSensitive = pG->nBare - pG->nStable;
  if( buildMixedOrder(pSel) && !pSel->bDistinct ){
    for(k=0; k<pPlan->nKey; k++){
      if( buildBare(pB, pG->aBareExpr, &pG->nBare, k)<0 ) return 1;
    }
  }
  pPlan->nBare = pG->nBare;
  memcpy(pPlan->aBareCol, pG->aBareExpr, sizeof(int)*pG->nBare);
  return 0;
}

/* The extraction query, "SELECT <extraction columns> FROM <from> WHERE
** (<where>)", and its parts for extract.c; prepared (pG->pExtract), as
** the collations and affinities are read from it, and the database's
** encoding (pG->bUtf8).  Returns 1 when it does not prepare (the SELECT
** runs natively) or memory ran out, else 0. */
static int buildExtractQuery(ParBuild *pB, ParGroupBuild *pG){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  sqlite3_str *pStr = sqlite3_str_new(pB->db);
  int i;
  for(i=0; i<pB->nExpr; i++){
    sqlite3_str_appendf(pStr, "%s%s", i ? ", " : "", pB->azExpr[i]);
  }
  if( pB->nExpr==0 ) sqlite3_str_appendall(pStr, "0");
  pPlan->zExtractCols = sqlite3_str_finish(pStr);
  if( pB->nExpr ){
    pPlan->azExtractExpr = sqlite3_malloc64(sizeof(char*)*pB->nExpr);
    if( pPlan->azExtractExpr==0 ){ buildNoMem(pB); return 1; }
    for(i=0; i<pB->nExpr; i++){
      pPlan->azExtractExpr[i] = sqlite3_mprintf("%s", pB->azExpr[i]);
      if( pPlan->azExtractExpr[i]==0 ) break;
    }
    pPlan->nExtractExpr = i;
    if( i<pB->nExpr ){ buildNoMem(pB); return 1; }
  }
  pPlan->zExtractFrom = sqlite3_mprintf("%s", pB->zFrom);
  if( pSel->bWhere ){
    pPlan->zExtractWhere = parSpanText(pSel->zSql, pSel->where);
    if( pPlan->zExtractWhere==0 ){ buildNoMem(pB); return 1; }
  }
  if( pPlan->zExtractCols==0 || pPlan->zExtractFrom==0 ){ buildNoMem(pB); return 1; }
  pPlan->zExtract = pSel->bWhere
      ? sqlite3_mprintf("SELECT %s FROM %s WHERE (%s)", pPlan->zExtractCols,
                        pPlan->zExtractFrom, pPlan->zExtractWhere)
      : sqlite3_mprintf("SELECT %s FROM %s", pPlan->zExtractCols, pPlan->zExtractFrom);
  pPlan->nExtractCol = pB->nExpr ? pB->nExpr : 1;
  if( pPlan->zExtract==0 ){ buildNoMem(pB); return 1; }
  if( sqlite3_prepare_v2(pB->db, pPlan->zExtract, -1, &pG->pExtract, 0) ){
    buildWhy(pB, "the extraction query does not prepare: %s", sqlite3_errmsg(pB->db));
    return 1;
  }
  pG->bUtf8 = parDbIsUtf8(pB->db);
  return 0;
}

/* The collations the kernels compare the keys and the aggregates'
** arguments under: a key's from the COLLATE of its term when the term is
** an ordinal or an alias with one, else from its expression; an
** argument's from its expression (buildCollation).  The kernels compare text as SQLite's
** own collations do: one the application replaced is not known to them
** (text then runs natively). */
static void buildGroupColls(ParBuild *pB, ParGroupBuild *pG){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  int mReplaced = parCollReplaced(pB->db);
  int i, k;
  for(i=0; i<pPlan->nKey; i++){
    pPlan->aKeyColl[i] = buildKnownColl(pG->aTermColl[i]>-2 ? pG->aTermColl[i]
        : buildCollation(pB, pG->pExtract, i, pG->aKeyTok[2*i], pG->aKeyTok[2*i+1], pG->bUtf8),
        mReplaced);
  }
  for(k=0; k<pPlan->nAgg; k++){
    ParAggCall *pA = &pSel->aAgg[pG->aCallOf[k]];
    pPlan->aAgg[k].eColl = buildKnownColl(pA->nArg>=1
        ? buildCollation(pB, pG->pExtract, pPlan->aAgg[k].iArg, pA->aArg[0].iTok,
                         pA->aArg[0].iTokEnd, pG->bUtf8)
        : PAR_COLL_BINARY, mReplaced);
  }
}

/* The letters of each bare replacement's par_rows column (PAR_ROWS_AFF,
** PAR_ROWS_COLL).  A bare column keeps its affinity (the extraction
** column's declared type) and its collation; a key standing for an item
** has no collation (see buildKeyStandsIn).  Returns 1 when a collation is
** not known (the SELECT runs natively), else 0. */
static int buildBareAffinities(ParBuild *pB, ParGroupBuild *pG){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  int k;
  for(k=0; k<pG->nBare; k++){
    pG->aBareAff[k] = parAffinityLetter(sqlite3_column_decltype(pG->pExtract,
                                                                pG->aBareExpr[k]));
  }
  for(k=0; k<pB->nRepl; k++){
    ParRepl *pR = &pB->aRepl[k];
    int j = pR->iCol - pPlan->nAgg, e;
    if( pR->eKind==PAR_REPL_AGG ) continue;
    assert( j>=0 && j<pG->nBare );
    e = pR->eKind==PAR_REPL_ITEM ? PAR_COLL_BINARY
      : buildCollation(pB, pG->pExtract, pG->aBareExpr[j], pR->span.iTok, pR->span.iTokEnd,
                       pG->bUtf8);
    if( e<0 ){
      char *zText = sqlite3_mprintf("%.*s", pR->span.iEnd - pR->span.iStart,
                                    pSel->zSql + pR->span.iStart);
      buildWhy(pB, pG->bUtf8 ? "the collation of %s is not known without SQLite's expression "
                               "tree"
                             : "the database is not UTF-8: the collation of %s would compare "
                               "UTF-16 text", zText ? zText : "a column");
      sqlite3_free(zText);
      return 1;
    }
    pR->cAff = pG->aBareAff[j];
    pR->cColl = PAR_ROWS_COLL[e];
  }
  return 0;
}

/* ParPlan.aDirect.  A final SQL that only picks result columns (no
** HAVING, DISTINCT, ORDER BY or LIMIT but the sort operator's, each item
** one aggregate or one bare column) is skipped: the view reads the result
** batch directly.  Returns 1 when memory ran out, else 0. */
static int buildDirect(ParBuild *pB){
  ParSelect *pSel = pB->pSel;
  const ParPlanSort *pS = pB->pPlan->pSort;
  int *aDirect;
  int i;
  if( pSel->bHaving || pSel->bDistinct || pSel->nWinCall>0 || (pSel->nOrder>0 && pS==0)
   || (pSel->bLimit && (pS==0 || pS->zLimit==0)) ){
    return 0;
  }
  aDirect = sqlite3_malloc64(sizeof(int)*(pSel->nCol+1));
  if( aDirect==0 ){ buildNoMem(pB); return 1; }
  for(i=0; i<pSel->nCol && aDirect; i++){
    int r, bFound = 0;
    for(r=0; r<pB->nRepl; r++){
      if( pB->aRepl[r].span.iStart==pSel->aCol[i].span.iStart
       && pB->aRepl[r].span.iEnd==pSel->aCol[i].span.iEnd ){
        aDirect[i] = pB->aRepl[r].iCol;
        bFound = 1;
      }
    }
    if( !bFound ){ sqlite3_free(aDirect); aDirect = 0; }
  }
  pB->pPlan->aDirect = aDirect;
  return 0;
}

/* Append to the final SQL's ORDER BY the terms that order the rows that
** tie under it as SQLite does: in the order SQLite makes the groups, by
** their keys, each in the direction of the ORDER BY term in its place
** when there are as many ORDER BY terms as GROUP BY terms and SQLite
** sorts the groups (select.c copies the directions: the sort may then be
** skipped), else ascending.  par_rows has the groups in ascending key
** order, its rowid counting them.  Returns 1 when the SELECT runs natively
** (zWhy), else 0. */
static int buildTieBreak(ParBuild *pB, ParGroupBuild *pG, sqlite3_str *pStr){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  int i, k, nDesc = 0;
  if( pSel->nOrder==pSel->nGroup && pG->eGroupOrder==0 ){
    for(i=0; i<pSel->nOrder; i++) nDesc += buildOrderDesc(pSel, i);
  }
  if( nDesc>0 && nDesc<pSel->nGroup && !pSel->bDistinct ){
    /* Mixed directions: by the keys, each under its collation (the bare
    ** columns buildBareCols added for them) in the direction SQLite gives
    ** it.  A key of unknown collation holds no text when the kernels
    ** group it (parGroupBy runs such a SELECT natively). */
    for(k=0; k<pPlan->nKey; k++){
      int j = buildBare(pB, pG->aBareExpr, &pG->nBare, k), e = pPlan->aKeyColl[k];
      assert( j>=0 && j<pPlan->nBare );    /* added with the bare columns */
      sqlite3_str_appendf(pStr, ", _pnb%d%s%s%s", pPlan->nAgg + j,
                          e>=0 ? " COLLATE " : "", e>=0 ? azCollName[e] : "",
                          buildOrderDesc(pSel, k) ? " DESC" : "");
    }
  }else if( nDesc>0 && pSel->bDistinct ){
    /* DISTINCT keeps the first of equal rows, which depends on the
    ** direction. */
    buildWhy(pB, "ORDER BY in other directions than its GROUP BY keys'%s", "");
    return 1;
  }else{
    sqlite3_str_appendf(pStr, ", par_rows.rowid%s", nDesc ? " DESC" : "");
  }
  return 0;
}

void buildSelectList(ParBuild *pB, sqlite3_str *pStr){
  const ParSelect *pSel = pB->pSel;
  int i;
  for(i=0; i<pSel->nCol; i++){
    char *zItem = buildRewrite(pB, pSel->aCol[i].span);
    sqlite3_str_appendf(pStr, "%s%s", i ? ", " : "", zItem ? zItem : "");
    sqlite3_free(zItem);
    if( pSel->aCol[i].zAlias ){
      sqlite3_str_appendf(pStr, " AS %.*s", pSel->aCol[i].alias.iEnd - pSel->aCol[i].alias.iStart,
                          pSel->zSql + pSel->aCol[i].alias.iStart);
    }
  }
  sqlite3_str_appendall(pStr, " FROM par_rows(:par_rows)");
}

/* The final SQL: the select list, HAVING as WHERE, ORDER BY (with the
** terms that break its ties: buildTieBreak) and LIMIT, each with its
** replacements applied (buildRewrite), over par_rows(:par_rows).  When
** the sort operator orders the groups (pPlan->pSort), ORDER BY is left
** out, and LIMIT too when the operator applies it: SQLite then reads
** par_rows in its order with no sorter, HAVING a filter that keeps it.
** It must prepare, or the SELECT runs natively. */
static void buildFinal(ParBuild *pB, ParGroupBuild *pG){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  const char *z = pSel->zSql;
  sqlite3_str *pStr = sqlite3_str_new(pB->db);
  sqlite3_stmt *pFinal = 0;
  int i;
  sqlite3_str_appendf(pStr, "SELECT %s", pSel->bDistinct ? "DISTINCT " : "");
  buildSelectList(pB, pStr);
  if( pSel->bHaving ){
    char *zH = buildRewrite(pB, pSel->having.span);
    sqlite3_str_appendf(pStr, " WHERE %s", zH ? zH : "");
    sqlite3_free(zH);
  }
  if( pSel->winClause.iTokEnd>0 ){
    char *zW = buildRewrite(pB, pSel->winClause);
    sqlite3_str_appendf(pStr, " WINDOW %s", zW ? zW : "");
    sqlite3_free(zW);
  }
  for(i=0; i<pSel->nOrder && pPlan->pSort==0; i++){
    char *zO = buildRewrite(pB, pSel->aOrder[i].span);
    sqlite3_str_appendf(pStr, "%s%s %.*s", i ? ", " : " ORDER BY ", zO ? zO : "",
                        pSel->aOrder[i].suffix.iEnd - pSel->aOrder[i].suffix.iStart,
                        z + pSel->aOrder[i].suffix.iStart);
    sqlite3_free(zO);
  }
  /* Rows that tie under ORDER BY come in the order the windows leave them
  ** (SQLite sorts them stably), with windows; else in group order. */
  if( pSel->nOrder>0 && pSel->nGroup>0 && pPlan->pSort==0 && pSel->nWinCall==0
   && buildTieBreak(pB, pG, pStr) ){
    sqlite3_free(sqlite3_str_finish(pStr));
    return;
  }
  if( pSel->bLimit && (pPlan->pSort==0 || pPlan->pSort->zLimit==0) ){
    sqlite3_str_appendf(pStr, " LIMIT %.*s", pSel->limit.iEnd - pSel->limit.iStart,
                        z + pSel->limit.iStart);
  }
  pPlan->zFinal = sqlite3_str_finish(pStr);
  if( pPlan->zFinal==0 ){ buildNoMem(pB); return; }
  pPlan->bFinalWindows = pSel->nWinCall>0;
  if( sqlite3_prepare_v2(pB->db, pPlan->zFinal, -1, &pFinal, 0) ){
    buildWhy(pB, "the final query does not prepare: %s", sqlite3_errmsg(pB->db));
  }
  sqlite3_finalize(pFinal);
}

/* With windows, SQLite moves the aggregate into a subquery whose select
** list puts the calls in another order than the SELECT's (window.c,
** sqlite3WindowRewrite: the items outside window calls, then the window's
** terms, then the calls' arguments).  A bare column's value comes from
** the row the last of several min()/max() calls stepped picks (select.c,
** updateAccumulator's regHit), so with two or more of them it depends on
** that order: such a SELECT runs natively.  Returns 1 then, else 0. */
static int buildWindowBareRows(ParBuild *pB){
  const ParPlan *pPlan = pB->pPlan;
  int k, nMinMax = 0;
  if( pB->nBareSensitive==0 ) return 0;
  for(k=0; k<pPlan->nAgg; k++){
    int e = pPlan->aAgg[k].eFunc;
    nMinMax += (e==PAR_AGG_MIN || e==PAR_AGG_MAX);
  }
  if( nMinMax<2 ) return 0;
  return buildWhy(pB, "columns read from the row of several min() and max() calls under "
                  "window functions, whose order SQLite changes%s", "");
}

/* Plan pB's SELECT: the sort operator (plan_sort.c) when it has no GROUP
** BY and no aggregates, else the group-by, step by step; each step
** either decides the SELECT runs natively (zWhy) or runs out of memory
** (pB->rc), and then the plan stops there, or hands what it found to the
** next in pG.  The order of the steps is the order of the extraction
** columns (keys, aggregates' arguments, bare columns) and, where more
** than one reason could send the SELECT to SQLite, decides which zWhy
** names: the first. */
static void buildPlan(ParBuild *pB){
  ParSelect *pSel = pB->pSel;
  ParPlan *pPlan = pB->pPlan;
  ParGroupBuild g;

  if( !pSel->bFrom ){ buildWhy(pB, "no FROM clause%s", ""); return; }
  if( pSel->nAgg==0 && pSel->nGroup==0 ){
    if( pSel->nOrder>0 || pSel->bDistinct ){
      buildSortPlan(pB);
    }else{
      buildWhy(pB, "no GROUP BY, aggregate, ORDER BY or DISTINCT%s", "");
    }
    return;
  }
  if( buildGroupChecks(pB) ) return;
  pB->zFrom = parSpanText(pSel->zSql, pSel->from);
  if( pB->zFrom==0 ){ buildNoMem(pB); return; }

  memset(&g, 0, sizeof(g));
  g.bUtf8 = 1;
  if( buildGroupKeys(pB, &g) ) goto done;
  if( buildGroupAggs(pB, &g) ) goto done;
  if( buildGroupDecide(pB, &g) ) goto done;
  buildHavingKeys(pB);
  if( buildBareCols(pB, &g) ) goto done;
  if( pSel->nWinCall>0 && buildWindowBareRows(pB) ) goto done;
  if( buildExtractQuery(pB, &g) ) goto done;
  buildCheckOrder(pB);
  if( pPlan->zWhy ) goto done;
  buildGroupColls(pB, &g);
  if( pPlan->nKey>0 ){
    /* (Also without ORDER BY: the view returns the groups in the order
    ** SQLite makes them.) */
    g.eGroupOrder = buildGroupOrder(pB, pPlan->aKeyColl);
    if( g.eGroupOrder<0 ) goto done;
  }
  if( pSel->nWinCall>0 && buildGroupWindowOrder(pB, g.aKeyTok) ) goto done;
  if( buildBareAffinities(pB, &g) ) goto done;
  /* Windows take the groups in SQLite's order and order the result
  ** themselves: ORDER BY stays in the final SQL, after them. */
  if( pSel->nWinCall==0 ) buildGroupSortPlan(pB, g.eGroupOrder);
  if( pB->rc || pPlan->zWhy ) goto done;
  if( buildDirect(pB) ) goto done;
  buildFinal(pB, &g);

done:
  sqlite3_finalize(g.pExtract);
  sqlite3_free(g.aKeyTok);
  sqlite3_free(g.aTermColl);
  sqlite3_free(g.aBareExpr);
  sqlite3_free(g.aAggOf);
  sqlite3_free(g.aCallOf);
  sqlite3_free(g.aBareAff);
  sqlite3_free(g.aKeyItem);
}

/* Subqueries in the select list, HAVING or ORDER BY (ParSelect.aSub):
** each goes whole into the SQL that evaluates its clause (the extraction
** query or the final SQL over par_rows), where SQLite runs it as in the
** SELECT, which only holds when it names nothing of the outer SELECT:
** SQLite must prepare it alone.  Returns 1 (zWhy set) when one does. */
int buildRtrimTable(sqlite3 *db, const char *zTab){
  char *zSql = sqlite3_mprintf("SELECT 1 FROM sqlite_schema WHERE tbl_name=%Q AND sql LIKE "
                               "'%%RTRIM%%' UNION ALL SELECT 1 FROM sqlite_temp_schema WHERE "
                               "tbl_name=%Q AND sql LIKE '%%RTRIM%%'", zTab, zTab);
  int bRtrim = zSql==0 || parQueryInt(db, zSql, 0)!=0;
  sqlite3_free(zSql);
  return bRtrim;
}

/* Does the WHERE hold a correlated subquery over a table with an RTRIM
** column (or naming RTRIM)?  SQLite 3.40 may look such text up through an
** automatic index and a Bloom filter that hashes its length (vdbe.c
** filterHash: 'a ' misses 'a'), and whether it does for a correlated
** subquery depends on the rows the statement reads: the extraction's
** rowid ranges would each get an answer of their own.  (An uncorrelated
** one runs once, the same in each.) */
static int buildWhereRtrim(ParBuild *pB){
  ParSelect *pSel = pB->pSel;
  const char *z = pSel->zSql;
  const ParToken *a = pSel->aTok;
  int i, bHit = 0;
  if( !pSel->bWhere ) return 0;
  for(i=pSel->where.iTok; i+1<pSel->where.iTokEnd && !bHit; i++){
    int j, k, d = 0, bCorrelated;
    char *zSub;
    sqlite3_stmt *pStmt = 0;
    if( a[i].eType!=PT_LP || !parTokIs(z, &a[i+1], "SELECT") ) continue;
    for(j=i; j<pSel->where.iTokEnd; j++){
      if( a[j].eType==PT_LP ) d++;
      if( a[j].eType==PT_RP && --d==0 ) break;
    }
    if( j>=pSel->where.iTokEnd ) return 1;
    zSub = sqlite3_mprintf("%.*s", a[j].i - a[i+1].i, z + a[i+1].i);
    if( zSub==0 ) return 1;
    bCorrelated = sqlite3_prepare_v2(pB->db, zSub, -1, &pStmt, 0)!=SQLITE_OK;
    sqlite3_finalize(pStmt);
    sqlite3_free(zSub);
    /* Each name in it that may be a table's (or RTRIM itself). */
    for(k=i+1; bCorrelated && k<j && !bHit; k++){
      if( a[k].eType==PT_ID || a[k].eType==PT_QID ){
        char *zName = parDequote(z + a[k].i, a[k].n);
        bHit = zName==0 || sqlite3_stricmp(zName, "RTRIM")==0 || buildRtrimTable(pB->db, zName);
        sqlite3_free(zName);
      }
    }
    i = j;
  }
  return bHit;
}

static int buildSubqueries(ParBuild *pB){
  ParSelect *pSel = pB->pSel;
  int i;
  if( buildWhereRtrim(pB) ){
    return buildWhy(pB, "a correlated subquery in WHERE over text under RTRIM (SQLite's "
                    "answer depends on the rows it reads: its automatic indexes' Bloom "
                    "filters)%s", "");
  }
  if( pSel->nSub>0 && (pSel->nWinCall>0 || pSel->winClause.iTokEnd) ){
    return buildWhy(pB, "a subquery in the select list, HAVING or ORDER BY with "
                    "window functions%s", "");
  }
  for(i=0; i<pSel->nSub; i++){
    const ParSpan *pS = &pSel->aSub[i];
    sqlite3_stmt *pStmt = 0;
    int k;
    for(k=pS->iTok; k<pS->iTokEnd; k++){
      /* Alone, "g" that names no column is the string 'g'; in the SELECT
      ** it may be the outer g: not followed. */
      const ParToken *t = &pSel->aTok[k];
      if( t->eType==PT_QID && pSel->zSql[t->i]=='"' ){
        return buildWhy(pB, "a subquery in the select list, HAVING or ORDER BY with a "
                        "name in double quotes%s", "");
      }
    }
    char *zTry = sqlite3_mprintf("SELECT 1 FROM %.*s", pS->iEnd - pS->iStart,
                                 pSel->zSql + pS->iStart);
    int rc = zTry ? sqlite3_prepare_v2(pB->db, zTry, -1, &pStmt, 0) : SQLITE_NOMEM;
    sqlite3_finalize(pStmt);
    sqlite3_free(zTry);
    if( rc==SQLITE_NOMEM ){ buildNoMem(pB); return 1; }
    if( rc!=SQLITE_OK ){
      return buildWhy(pB, "a subquery in the select list, HAVING or ORDER BY that names "
                      "a column of the SELECT (correlated)%s", "");
    }
    /* "x IN (SELECT ...)" applies its affinity to x where x is held: in
    ** the final SQL, the register the select list reads too (a column of
    ** par_rows '0' instead of 0); in SQLite's SELECT, a copy. */
    if( pS->iTok>0 && parTokIs(pSel->zSql, &pSel->aTok[pS->iTok-1], "IN") ){
      return buildWhy(pB, "IN (SELECT ...) in the select list, HAVING or ORDER BY%s", "");
    }
  }
  return 0;
}

const char *parOriginColl(sqlite3 *db, sqlite3_stmt *pStmt, int iCol){
  const char *zTab = sqlite3_column_table_name(pStmt, iCol);
  const char *zCol = sqlite3_column_origin_name(pStmt, iCol);
  const char *zColl = 0;
  if( zTab==0 || zCol==0
   || sqlite3_table_column_metadata(db, sqlite3_column_database_name(pStmt, iCol), zTab, zCol,
                                    0, &zColl, 0, 0, 0)!=SQLITE_OK ){
    return 0;
  }
  return zColl;
}

/* The signature of pStmt's columns (ParPlan.zColSig): for each, its
** declared type and, when it is a table's column, that column's
** collation.  NULL only when out of memory. */
static char *planColumnSig(sqlite3 *db, sqlite3_stmt *pStmt){
  sqlite3_str *pStr = sqlite3_str_new(db);
  int i, n = sqlite3_column_count(pStmt);
  for(i=0; i<n; i++){
    const char *zType = sqlite3_column_decltype(pStmt, i);
    const char *zColl = parOriginColl(db, pStmt, i);
    sqlite3_str_appendf(pStr, "%s\x1f%s\x1e", zType ? zType : "", zColl ? zColl : "");
  }
  if( sqlite3_str_errcode(pStr) ){
    sqlite3_free(sqlite3_str_finish(pStr));
    return 0;
  }
  return sqlite3_str_finish(pStr);
}

/* The loops of each subquery in an expression of zSql's plan, in plan
** order ("SCALAR SUBQUERY", "LIST SUBQUERY" and their kin: the SCAN and
** SEARCH lines under each), one subquery a line of ';'-joined loops; NULL
** when the plan cannot be read. */
static char *planSubqueryLoops(sqlite3 *db, const char *zSql, const ParParams *pParams,
                               int bTop){
  sqlite3_stmt *pStmt = buildExplainStmt(db, zSql, pParams);
  sqlite3_str *pStr;
  int aSub[64], nSub = 0, k;
  if( pStmt==0 ) return 0;
  pStr = sqlite3_str_new(db);
  if( bTop ) sqlite3_str_appendall(pStr, "\n");
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zDetail = (const char*)sqlite3_column_text(pStmt, 3);
    int iId = sqlite3_column_int(pStmt, 0), iParent = sqlite3_column_int(pStmt, 1);
    if( zDetail==0 ) continue;
    if( strstr(zDetail, "SCALAR SUBQUERY") || strstr(zDetail, "LIST SUBQUERY") ){
      if( nSub<64 ) aSub[nSub++] = iId;
      if( !bTop ) sqlite3_str_appendall(pStr, "\n");
      continue;
    }
    for(k=0; k<nSub && aSub[k]!=iParent; k++){}
    if( (bTop ? iParent==0 : k<nSub)
     && (strncmp(zDetail, "SCAN ", 5)==0 || strncmp(zDetail, "SEARCH ", 7)==0
         || strncmp(zDetail, "USE TEMP B-TREE", 15)==0) ){
      sqlite3_str_appendf(pStr, "%s;", zDetail);
    }
  }
  sqlite3_finalize(pStmt);
  return sqlite3_str_finish(pStr);
}

/* Is subquery loops entry zOne ("\nLOOPS;") one of zAll's entries? */
static int planLoopsHas(const char *zAll, const char *zOne){
  int n = (int)strlen(zOne);
  const char *z = zAll;
  while( z && (z = strstr(z, "\n"))!=0 ){
    if( strncmp(z, zOne, n)==0 && (z[n]==0 || z[n]=='\n') ) return 1;
    z++;
  }
  return 0;
}

/* Does the SELECT (as planned: subqueries computed once are parameters)
** keep a scalar subquery, one not after EXISTS or IN, while SQLite's plan
** runs one of its subqueries through an automatic index?  Each reading
** statement (a worker's range) plans it anew and may or may not build the
** index, whose order decides a first row or a REAL sum (a review's stress
** run: total() over an automatic partial index). */
static int planAutomaticScalar(sqlite3 *db, const ParPlan *pPlan){
  const char *z = pPlan->zFlat ? pPlan->zFlat : pPlan->zSql;
  ParToken *a;
  int n = 0, i, bScalar = 0, bAuto = 0;
  char *zIn;
  if( sqlite3_strlike("%(%SELECT%", z, 0)!=0 ) return 0;
  a = parTokenize(z, &n);
  if( a==0 ) return 1;
  for(i=1; i+1<n && !bScalar; i++){
    if( a[i].eType==PT_LP && parTokIs(z, &a[i+1], "SELECT")
     && !parTokIs(z, &a[i-1], "EXISTS") && !parTokIs(z, &a[i-1], "IN")
     && !parTokIs(z, &a[i-1], "FROM") && !parTokIs(z, &a[i-1], "JOIN")
     && a[i-1].eType!=PT_COMMA && !parTokIs(z, &a[i-1], "AS") ){
      bScalar = 1;
    }
  }
  sqlite3_free(a);
  if( !bScalar ) return 0;
  zIn = planSubqueryLoops(db, pPlan->zSql, pPlan->pParams, 0);
  bAuto = zIn==0 || strstr(zIn, "AUTOMATIC")!=0;
  sqlite3_free(zIn);
  return bAuto;
}

/* Does SQLite run each subquery of pPlan's final SQL (select list, HAVING,
** ORDER BY, over par_rows) by the loops it has in the SELECT?  Over the
** grouped rows, a virtual table, SQLite may look an uncorrelated
** subquery's rows up through an automatic index, where the SELECT scans
** them: a "first row" or a REAL sum then differs.  Each subquery's loops
** in the final SQL must be those of one of the SELECT's subqueries. */
static int planSubqueriesSame(sqlite3 *db, const ParPlan *pPlan){
  char *zF = planSubqueryLoops(db, pPlan->zFinal, pPlan->pParams, 0);
  char *zS = planSubqueryLoops(db, pPlan->zSql, pPlan->pParams, 0);
  int bSame = zF && zS;
  char *z;
  for(z=zF; bSame && z && *z; ){
    char *zEnd = strchr(z+1, '\n'), c = 0;
    if( zEnd ){ c = *zEnd; *zEnd = 0; }
    bSame = planLoopsHas(zS, z);
    if( zEnd ){ *zEnd = c; z = zEnd; }else{ z += strlen(z); }
  }
  sqlite3_free(zF);
  sqlite3_free(zS);
  return bSame;
}

/* The uncorrelated scalar subqueries of pPlan's SELECT (as flattened)
** written as parameters after its own (plan_flatten.c parBindScalars),
** each with a plan of its own to compute it (exec.c); nothing when one of
** them has no plan (an error SQLite reports when it runs the SELECT). */
static int planBindScalars(sqlite3 *db, ParPlan *pPlan){
  char *azBind[PAR_MAX_BIND];
  int nBind = 0, nParam = pPlan->pParams ? pPlan->pParams->n : 0, rc = SQLITE_OK, k;
  char *zBound = parBindScalars(db, pPlan->zFlat ? pPlan->zFlat : pPlan->zSql, nParam,
                                &nBind, azBind, &rc);
  ParParams *pNew = 0;
  if( zBound==0 ) return rc;
  pNew = parParamsNew(nParam + nBind);
  if( pNew==0 ) rc = SQLITE_NOMEM;
  for(k=0; k<nParam && rc==SQLITE_OK; k++){
    sqlite3_value *v = pPlan->pParams->apVal[k];
    if( v && (pNew->apVal[k] = sqlite3_value_dup(v))==0 ) rc = SQLITE_NOMEM;
  }
  {
    /* Computed alone, each runs by the loops it has alone: kept where
    ** those are its loops in the SELECT (there SQLite may look its rows up
    ** through an automatic index, and a REAL sum or a first row differs). */
    char *zIn = planSubqueryLoops(db, pPlan->zFlat ? pPlan->zFlat : pPlan->zSql,
                                  pPlan->pParams, 0);
    for(k=0; k<nBind && zBound && rc==SQLITE_OK; k++){
      char *zAlone = planSubqueryLoops(db, azBind[k], pPlan->pParams, 1);
      if( zIn==0 || zAlone==0 || !planLoopsHas(zIn, zAlone) ){
        sqlite3_free(zBound);
        zBound = 0;
      }
      sqlite3_free(zAlone);
    }
    sqlite3_free(zIn);
    if( zBound==0 ){
      parParamsFree(pNew);
      for(k=0; k<nBind; k++) sqlite3_free(azBind[k]);
      return rc;
    }
  }
  for(k=0; k<nBind && rc==SQLITE_OK; k++){
    char *zErr = 0;
    rc = parPlanBuild(db, azBind[k], pPlan->pParams, &pPlan->apBind[k], &zErr);
    sqlite3_free(zErr);
    if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
      /* It does not plan: left to SQLite as written. */
      rc = SQLITE_OK;
      for(k=0; k<nBind; k++){ parPlanFree(pPlan->apBind[k]); pPlan->apBind[k] = 0; }
      sqlite3_free(zBound);
      zBound = 0;
      break;
    }
    pPlan->nBind = k+1;
  }
  if( rc==SQLITE_OK && zBound ){
    /* Kept where SQLite's loops stay the same (the subqueries' aside). */
    int bSort0 = 0, bSort1 = 0;
    char *zL0 = buildLoops(db, pPlan->zFlat ? pPlan->zFlat : pPlan->zSql, pPlan->pParams,
                           &bSort0);
    char *zL1 = buildLoops(db, zBound, pNew, &bSort1);
    if( zL0==0 || zL1==0 || strcmp(zL0, zL1)!=0 || bSort0!=bSort1 ){
      sqlite3_free(zBound);
      zBound = 0;
    }
    sqlite3_free(zL0);
    sqlite3_free(zL1);
  }
  if( rc==SQLITE_OK && zBound ){
    sqlite3_free(pPlan->zFlat);
    pPlan->zFlat = zBound;
    pPlan->mFlat |= PAR_FLAT_BIND;
    pPlan->iBind = nParam + 1;
    parParamsFree(pPlan->pParams);
    pPlan->pParams = pNew;
    pNew = 0;
  }else{
    sqlite3_free(zBound);
    for(k=0; k<PAR_MAX_BIND; k++){ parPlanFree(pPlan->apBind[k]); pPlan->apBind[k] = 0; }
    pPlan->nBind = 0;
  }
  parParamsFree(pNew);
  for(k=0; k<nBind; k++) sqlite3_free(azBind[k]);
  return rc;
}

int parPlanBuild(sqlite3 *db, const char *zSql, const ParParams *pParams,
                 ParPlan **ppPlan, char **pzErr){
  ParSelect sel;
  ParBuild b;
  ParPlan *pPlan;
  char *zFlatWhy = 0;
  int rc, i;

  *ppPlan = 0;
  *pzErr = 0;
  sqlite3_stmt *pStmt = 0;
  rc = parPrepareSelect(db, zSql, &pStmt, pzErr);
  if( rc ) return rc;
  pPlan = sqlite3_malloc(sizeof(*pPlan));
  if( pPlan==0 ){ sqlite3_finalize(pStmt); return SQLITE_NOMEM; }
  memset(pPlan, 0, sizeof(*pPlan));
  pPlan->nRef = 1;
  pPlan->nCol = sqlite3_column_count(pStmt);
  pPlan->zColSig = planColumnSig(db, pStmt);
  sqlite3_finalize(pStmt);
  if( pPlan->zColSig==0 ){
    parPlanFree(pPlan);
    return SQLITE_NOMEM;
  }
  pPlan->zSql = sqlite3_mprintf("%s", zSql);
  {
    int bNoMem = 0;
    pPlan->pParams = parParamsDup(pParams, &bNoMem);
    if( bNoMem ){
      sqlite3_free(pPlan->zSql);
      pPlan->zSql = 0;
    }
  }
  /* A subquery in FROM (or a WITH) that SQLite merges into the SELECT:
  ** planned as merged (plan_flatten.c); else native, saying why. */
  if( pPlan->zSql ){
    rc = parFlatten(db, zSql, pParams, &pPlan->zFlat, &pPlan->mFlat, &zFlatWhy);
    if( rc==SQLITE_OK ) rc = planBindScalars(db, pPlan);
    if( rc ){
      sqlite3_free(zFlatWhy);
      parPlanFree(pPlan);
      return rc;
    }
  }
  rc = parSelectParse(pPlan->zFlat ? pPlan->zFlat : zSql, &sel);
  if( rc==SQLITE_OK && pPlan->zSql ){
    if( sel.zWhy && !sel.bWindow ){
      pPlan->zWhy = sqlite3_mprintf("%s", sel.zWhy);
    }else{
      memset(&b, 0, sizeof(b));
      b.db = db;
      b.pSel = &sel;
      b.pPlan = pPlan;
      /* Windows over a GROUP BY's (or an aggregate's) result are SQLite's,
      ** in the group-by's final SQL. */
      if( buildSubqueries(&b) ){
        /* native: pPlan->zWhy says why */
      }else if( sel.bWindow && sel.nGroup==0 && sel.nAgg==0 ) buildWindowPlan(&b);
      else buildPlan(&b);
      rc = b.rc;
      if( rc==SQLITE_OK && pPlan->zWhy==0 && pPlan->pWindow==0 ){
        buildJoinPlan(&b);
        rc = b.rc;
      }
      if( rc==SQLITE_OK && pPlan->zWhy==0 && b.zOrderWhy ){
        /* Only the join operator visits the rows in SQLite's order. */
        if( pPlan->pJoin && pPlan->pJoin->bOrderMatters ){
          pPlan->zJoinOnly = b.zOrderWhy;
        }else{
          pPlan->zWhy = pPlan->zJoinWhy
              ? sqlite3_mprintf("%s; the join operator does not run it: %s", b.zOrderWhy,
                                pPlan->zJoinWhy)
              : sqlite3_mprintf("%s", b.zOrderWhy);
          sqlite3_free(b.zOrderWhy);
          if( pPlan->zWhy==0 ) rc = SQLITE_NOMEM;
        }
        b.zOrderWhy = 0;
      }
      sqlite3_free(b.zOrderWhy);
      if( rc==SQLITE_OK && pPlan->zWhy==0 && planAutomaticScalar(db, pPlan) ){
        pPlan->zWhy = sqlite3_mprintf("a scalar subquery SQLite runs through an automatic "
                                      "index (its answer, a first row or a REAL sum, "
                                      "depends on the plan of each statement that reads "
                                      "the rows)");
        if( pPlan->zWhy==0 ) rc = SQLITE_NOMEM;
      }
      if( rc==SQLITE_OK && pPlan->zWhy==0 && pPlan->zFinal
       && sqlite3_strlike("%(%SELECT%", pPlan->zFinal, 0)==0
       && !planSubqueriesSame(db, pPlan) ){
        pPlan->zWhy = sqlite3_mprintf("SQLite would run a subquery of the select list, "
                                      "HAVING or ORDER BY by another plan over the "
                                      "grouped rows than in the SELECT (its answer "
                                      "depends on the plan)");
        if( pPlan->zWhy==0 ) rc = SQLITE_NOMEM;
      }
      if( rc==SQLITE_OK && pPlan->zWhy==0 ){
        /* The pipeline: the scan (and the join of its tables), the
        ** group-by and/or the sort, the cursor. */
        pPlan->aOp[pPlan->nOp++] = PAR_OP_SCAN;
        if( pPlan->pJoin ) pPlan->aOp[pPlan->nOp++] = PAR_OP_JOIN;
        if( pPlan->pWindow ){
          pPlan->aOp[pPlan->nOp++] = PAR_OP_WINDOW;
        }else if( pPlan->pSort==0 || pPlan->pSort->bGroup ){
          pPlan->aOp[pPlan->nOp++] = PAR_OP_GROUP;
        }
        if( pPlan->pSort ) pPlan->aOp[pPlan->nOp++] = PAR_OP_SORT;
        pPlan->aOp[pPlan->nOp++] = PAR_OP_FINAL;
      }
      for(i=0; i<b.nExpr; i++) sqlite3_free(b.azExpr[i]);
      sqlite3_free(b.azExpr);
      sqlite3_free(b.aRepl);
      for(i=0; i<b.nFunc; i++) sqlite3_free(b.aFunc[i].zName);
      sqlite3_free(b.aFunc);
      sqlite3_free(b.zFrom);
      sqlite3_free(b.zLoops);
      sqlite3_free(b.aWinChain);
    }
  }else if( rc==SQLITE_OK ){
    rc = SQLITE_NOMEM;
  }
  parSelectClear(&sel);
  if( rc==SQLITE_OK && pPlan->zWhy && zFlatWhy ){
    char *zWhy = sqlite3_mprintf("%s; not merged: %s", pPlan->zWhy, zFlatWhy);
    if( zWhy==0 ) rc = SQLITE_NOMEM;
    sqlite3_free(pPlan->zWhy);
    pPlan->zWhy = zWhy;
  }
  sqlite3_free(zFlatWhy);
  if( rc ){
    parPlanFree(pPlan);
    return rc;
  }
  *ppPlan = pPlan;
  return SQLITE_OK;
}


/* Append z to pStr with each :par_p<i> written as the SELECT wrote it. */
static void explainText(sqlite3_str *pStr, const char *z, const ParExplainIn *pIn){
  while( z && *z ){
    const char *zAt = strstr(z, ":par_p");
    const ParPlan *pB = pIn->pBind;
    int i = 0, n = 6;
    if( zAt==0 ){
      sqlite3_str_appendall(pStr, z);
      break;
    }
    while( zAt[n]>='0' && zAt[n]<='9' && n<14 ) i = i*10 + (zAt[n++] - '0');
    sqlite3_str_append(pStr, z, (int)(zAt - z));
    if( (i>=1 && i<=pIn->nParam && pIn->azParam[i-1])
     || (pB && i>=pB->iBind && i<pB->iBind + pB->nBind) ){
      if( i>=1 && i<=pIn->nParam && pIn->azParam[i-1] ){
        sqlite3_str_appendall(pStr, pIn->azParam[i-1]);
      }else{
        /* A subquery computed once (ParPlan.apBind), as written. */
        ParExplainIn in = *pIn;
        in.pBind = 0;
        sqlite3_str_appendall(pStr, "(");
        explainText(pStr, pB->apBind[i - pB->iBind]->zSql, &in);
        sqlite3_str_appendall(pStr, ")");
      }
      /* The blank parParamsRewrite added, unless a name follows it (the
      ** SQL had a blank there too: "?1 AS p" merged as "(:par_p1 )AS p"
      ** would read ":xAS p"). */
      if( zAt[n]==' ' && !(isalnum((unsigned char)zAt[n+1]) || zAt[n+1]=='_'
                           || zAt[n+1]=='$' || (unsigned char)zAt[n+1]>=0x80) ){
        n++;
      }
    }else{
      sqlite3_str_append(pStr, zAt, n);
    }
    z = zAt + n;
  }
}

/* Does the expression z end in a COLLATE clause of its own? */
static int explainHasCollate(const char *z){
  int nTok = 0, bHas;
  ParToken *aTok = parTokenize(z, &nTok);
  bHas = aTok && nTok>=3 && parTokIs(z, &aTok[nTok-3], "COLLATE");
  sqlite3_free(aTok);
  return bHas;
}

/* The group-by's lines: keys, then aggregates. */
static void explainGroup(sqlite3_str *pStr, const ParPlan *p, const ParExplainIn *pIn){
  int i;
  if( p->nKey==0 ){
    sqlite3_str_appendall(pStr, "group by  (none: one group)\n");
  }else{
    sqlite3_str_appendall(pStr, "group by  ");
    for(i=0; i<p->nKey; i++){
      int e = p->aKeyColl[i];
      if( i ) sqlite3_str_appendall(pStr, ", ");
      explainText(pStr, p->azKey[i], pIn);
      if( e!=PAR_COLL_BINARY && !explainHasCollate(p->azKey[i]) ){
        sqlite3_str_appendf(pStr, " COLLATE %s", e>=0 ? azCollName[e] : "(unknown: native "
                            "if text)");
      }
    }
    sqlite3_str_appendall(pStr, "; strategy chosen from the data\n");
  }
  sqlite3_str_appendall(pStr, "aggregate ");
  for(i=0; i<p->nAgg; i++){
    if( i ) sqlite3_str_appendall(pStr, ", ");
    explainText(pStr, p->aAgg[i].zText, pIn);
  }
  if( p->nAgg==0 ) sqlite3_str_appendall(pStr, "(none)");
  if( p->nBare ){
    sqlite3_str_appendf(pStr, "; %d column%s read from each group's row", p->nBare,
                        p->nBare>1 ? "s" : "");
  }
  sqlite3_str_appendall(pStr, "\n");
}

/* The sort operator's lines: DISTINCT, ORDER BY (the terms, not the
** ones that break their ties), LIMIT. */
static void explainSort(sqlite3_str *pStr, const ParPlan *p, const ParExplainIn *pIn){
  const ParPlanSort *pS = p->pSort;
  int i;
  if( pS->nDistinct ){
    sqlite3_str_appendf(pStr, "distinct  the %d column%s of the select list: the first of "
                        "equal rows, in reading order\n", pS->nDistinct,
                        pS->nDistinct>1 ? "s" : "");
  }
  if( pS->nKey ){
    sqlite3_str_appendall(pStr, "sort      ");
    for(i=0; i<pS->nTerm; i++){
      const ParSortKey *pK = &pS->aKey[i];
      int e = pK->eColl;
      if( i ) sqlite3_str_appendall(pStr, ", ");
      explainText(pStr, pK->zText, pIn);
      if( e!=PAR_COLL_BINARY && !explainHasCollate(pK->zText) ){
        sqlite3_str_appendf(pStr, " COLLATE %s", e>=0 ? azCollName[e] : "(unknown: native "
                            "if text)");
      }
      sqlite3_str_appendf(pStr, "%s%s", (pK->flags & PAR_KEY_DESC) ? " DESC" : "",
                          (pK->flags & PAR_KEY_NULLS_LAST)
                            ? ((pK->flags & PAR_KEY_DESC) ? "" : " NULLS LAST")
                            : ((pK->flags & PAR_KEY_DESC) ? " NULLS FIRST" : ""));
    }
    sqlite3_str_appendf(pStr, "; stable, ties in %s; %s\n",
                        !pS->bGroup ? "reading order"
                        : pS->nKey>pS->nTerm ? "the order of the GROUP BY keys' directions"
                        : pS->bReverse ? "descending GROUP BY order"
                        : "GROUP BY order", pS->zLimit
                        ? "top-k selection when LIMIT + OFFSET is small, else radix sort"
                        : "radix sort");
  }
  if( pS->zLimit ){
    sqlite3_str_appendall(pStr, "limit     ");
    explainText(pStr, pS->zLimit + 7, pIn);    /* past "SELECT " */
    sqlite3_str_appendall(pStr, " (LIMIT, OFFSET: evaluated when the scan runs)\n");
  }
}

/* The window operator's lines: one per window, innermost (sorted first)
** last, each with its calls. */
static void explainWindow(sqlite3_str *pStr, const ParPlan *p, const ParExplainIn *pIn){
  static const char *azBound[] = { "", "UNBOUNDED PRECEDING", "PRECEDING", "CURRENT ROW",
                                   "FOLLOWING", "UNBOUNDED FOLLOWING" };
  static const char *azType[] = { "", "ROWS", "RANGE", "GROUPS" };
  const ParPlanWindow *pW = p->pWindow;
  int i, k;
  for(i=0; i<pW->nWin; i++){
    const ParWinDef *pD = &pW->aWin[i];
    int bFirst = 1;
    sqlite3_str_appendall(pStr, "window    ");
    explainText(pStr, pD->zText, pIn);
    sqlite3_str_appendf(pStr, ": %s", i==0 ? "the result's order" : "evaluated before the "
                        "window above, whose sort keeps its order in ties");
    sqlite3_str_appendall(pStr, "\n          ");
    for(k=0; k<pW->nFunc; k++){
      const ParWinFunc *pF = &pW->aFunc[k];
      if( pF->iWin!=i ) continue;
      if( !bFirst ) sqlite3_str_appendall(pStr, ", ");
      bFirst = 0;
      explainText(pStr, pF->zText, pIn);
      sqlite3_str_appendf(pStr, " [%s ", azType[pF->frame.eType]);
      if( pF->frame.eStart==PAR_BOUND_PRECEDING || pF->frame.eStart==PAR_BOUND_FOLLOWING ){
        sqlite3_str_appendf(pStr, "%lld ", pF->frame.iStart);
      }
      sqlite3_str_appendf(pStr, "%s AND ", azBound[pF->frame.eStart]);
      if( pF->frame.eEnd==PAR_BOUND_PRECEDING || pF->frame.eEnd==PAR_BOUND_FOLLOWING ){
        sqlite3_str_appendf(pStr, "%lld ", pF->frame.iEnd);
      }
      sqlite3_str_appendf(pStr, "%s]", azBound[pF->frame.eEnd]);
    }
    sqlite3_str_appendall(pStr, "\n");
  }
  sqlite3_str_appendall(pStr, "          stable radix sort per window; partitions in parallel\n");
  if( pW->zLimit ){
    sqlite3_str_appendall(pStr, "limit     ");
    explainText(pStr, pW->zLimit + 7, pIn);
    sqlite3_str_appendall(pStr, " (LIMIT, OFFSET: evaluated when the scan runs)\n");
  }
}

/* The join operator's lines: one per table, in the order they join. */
static void explainJoin(sqlite3_str *pStr, const ParPlan *p, const ParExplainIn *pIn){
  const ParPlanJoin *pJ = p->pJoin;
  int i, k;
  if( pJ->nTab==1 ){
    if( pJ->aTab[0].pSub ){
      sqlite3_str_appendf(pStr, "from      subquery %s%s\n", pJ->aTab[0].zName,
                          pJ->zResidText || pJ->zCalcText ? "" : ": no join");
    }else{
      sqlite3_str_appendf(pStr, "from      table %s in SQLite's order, the order of an index "
                          "(the result depends on it)\n", pJ->aTab[0].zName);
    }
  }else{
    sqlite3_str_appendf(pStr, "join      hash join of %d tables in SQLite's loop order%s\n",
                        pJ->nTab, pJ->bOrderMatters ? " (the result depends on the order of "
                        "the joined rows: SQLite's)" : "");
  }
  for(i=0; i<pJ->nTab; i++){
    const ParJoinTab *pT = &pJ->aTab[i];
    const ParPlan *pS = pT->pScan;
    sqlite3_str_appendf(pStr, "  %s: ", pT->zName);
    if( i==0 && pT->zOrdIdx ){
      sqlite3_str_appendf(pStr, "probes, in the order of index %s (%s)", pT->zOrdIdx,
                          pT->nOrd ? "its rows sorted into it" : "its scan walks it");
    }else if( i==0 ){
      sqlite3_str_appendall(pStr, "probes, in reading order");
    }else{
      sqlite3_str_appendall(pStr, "built on ");
      for(k=0; k<pT->nKey; k++){
        const ParJoinKey *pK = &pT->aKey[k];
        if( k ) sqlite3_str_appendall(pStr, " AND ");
        explainText(pStr, pK->zText, pIn);
        if( pK->eColl!=PAR_COLL_BINARY ) sqlite3_str_appendf(pStr, " (%s)", azCollName[pK->eColl]);
        if( pK->bNumeric ) sqlite3_str_appendall(pStr, " (numeric)");
      }
      if( pT->zOrdIdx ){
        sqlite3_str_appendf(pStr, "; a row's matches in the order of index %s (%s)",
                            pT->zOrdIdx, pT->nOrd ? "its rows sorted into it"
                                                  : "its scan walks it");
      }
      if( pJ->bOrderMatters && !pT->bOrderKnown ){
        sqlite3_str_appendf(pStr, "; %s if a row has several matches",
                            p->zJoinOnly ? "native" : "SQLite");
      }
      if( pT->bRowidKey ){
        sqlite3_str_appendall(pStr, "; only the rows the probe keys name (rowid lookups) "
                              "when they are few");
      }
    }
    sqlite3_str_appendf(pStr, " (SQLite: %s)\n", pT->zLoop);
    if( pT->pSub ){
      /* Its own plan's lines (the caller's text of it), indented. */
      const char *z = pIn->azJoinMode ? pIn->azJoinMode[i] : 0;
      sqlite3_str_appendall(pStr, "    the subquery's rows, by its own plan:\n");
      while( z && *z ){
        int n = (int)strcspn(z, "\n");
        sqlite3_str_appendf(pStr, "      %.*s\n", n, z);
        z += n + (z[n]=='\n');
      }
      continue;
    }
    sqlite3_str_appendall(pStr, "    scan ");
    explainText(pStr, pS->zExtract, pIn);
    if( pIn->azJoinMode && pIn->azJoinMode[i] ){
      sqlite3_str_appendf(pStr, ": %s", pIn->azJoinMode[i]);
    }
    sqlite3_str_appendall(pStr, "\n");
  }
  if( pJ->zResidText ){
    sqlite3_str_appendall(pStr, "  filter: ");
    explainText(pStr, pJ->zResidText, pIn);
    sqlite3_str_appendall(pStr, " (SQLite, over the joined rows, in their order)\n");
  }
  if( pJ->zCalcText ){
    sqlite3_str_appendall(pStr, "  computed: ");
    explainText(pStr, pJ->zCalcText, pIn);
    sqlite3_str_appendall(pStr, " (SQLite, over the joined rows, in their order)\n");
  }
}

char *parPlanExplain(const ParPlan *p, const ParExplainIn *pInArg){
  sqlite3_str *pStr = sqlite3_str_new(0);
  ParExplainIn in = *pInArg;
  const ParExplainIn *pIn = &in;
  int i;
  in.pBind = p->nBind ? p : 0;
  if( p->zWhy || (p->zJoinOnly && pIn->bJoinSqlite) ){
    sqlite3_str_appendf(pStr, "native: SQLite runs the whole SELECT (%s%s)\n",
                        p->zWhy ? p->zWhy : "join_strategy is 1: ",
                        p->zWhy ? "" : p->zJoinOnly);
    return sqlite3_str_finish(pStr);
  }
  sqlite3_str_appendall(pStr, "scan      ");
  explainText(pStr, p->zExtractFrom, pIn);
  if( p->zExtractWhere ){
    sqlite3_str_appendall(pStr, " WHERE ");
    explainText(pStr, p->zExtractWhere, pIn);
  }
  if( p->pJoin && !pIn->bJoinSqlite ){
    sqlite3_str_appendall(pStr, ": each table by a scan of its own (join, below)\n");
  }else{
    sqlite3_str_appendf(pStr, ": %s\n", pIn->zMode ? pIn->zMode : "?");
  }
  if( p->mFlat & PAR_FLAT_WITH ){
    sqlite3_str_appendall(pStr, "from      the WITH clause's common table expressions as "
                          "subqueries where they are used\n");
  }
  if( p->mFlat & PAR_FLAT_MERGED ){
    sqlite3_str_appendall(pStr, "from      the subquery in FROM merged into the SELECT, "
                          "as SQLite merges it\n");
  }
  if( p->mFlat & PAR_FLAT_OR ){
    sqlite3_str_appendall(pStr, "where     a term every branch of an OR has taken out of "
                          "the OR (SQLite's MULTI-INDEX OR of one rowid lookup)\n");
  }
  if( p->mFlat & PAR_FLAT_SEMI ){
    sqlite3_str_appendall(pStr, "where     x IN (SELECT y ...) as a join with the subquery's "
                          "distinct values (_ps<n>), by its own plan\n");
  }
  if( p->mFlat & PAR_FLAT_DECOR ){
    sqlite3_str_appendall(pStr, "where     a correlated subquery of aggregates as a table of "
                          "its groups (_pd<n>), joined on the correlated columns\n");
  }
  for(i=0; i<p->nBind; i++){
    ParExplainIn inner = in;
    inner.pBind = 0;
    sqlite3_str_appendall(pStr, "value     (");
    explainText(pStr, p->apBind[i]->zSql, &inner);
    sqlite3_str_appendf(pStr, ") computed once before each scan, %s, and bound as a value\n",
                        p->apBind[i]->zWhy ? "by SQLite" : "by its own plan (kernels)");
  }
  if( p->mFlat & PAR_FLAT_EXISTS ){
    sqlite3_str_appendall(pStr, "where     [NOT] EXISTS over a table scanned for each row, "
                          "as [NOT] IN its list (built once per reading query)\n");
  }
  if( p->zJoinWhy || (p->pJoin && pIn->bJoinSqlite) ){
    sqlite3_str_appendf(pStr, "join      SQLite joins the tables in the scan (%s)\n",
                        p->zJoinWhy ? p->zJoinWhy : "join_strategy is 1");
  }
  if( pIn->nRow>=0 ){
    int bPar = pIn->nRow>=pIn->nMinRow && pIn->nThread>1;
    sqlite3_str_appendf(pStr, "rows      about %lld (rowid span): %s min_rows (%lld): ",
                        pIn->nRow, pIn->nRow<pIn->nMinRow ? "below" : "at or above",
                        pIn->nMinRow);
    if( bPar ) sqlite3_str_appendf(pStr, "parallel, %d threads\n", pIn->nThread);
    else sqlite3_str_appendall(pStr, "one thread\n");
  }else{
    sqlite3_str_appendf(pStr, "rows      not known before the scan; below min_rows (%lld) "
                        "the kernels use one thread\n", pIn->nMinRow);
  }
  for(i=1; i<p->nOp; i++){
    switch( p->aOp[i] ){
      case PAR_OP_GROUP: explainGroup(pStr, p, pIn); break;
      case PAR_OP_SORT:  explainSort(pStr, p, pIn); break;
      case PAR_OP_JOIN:  if( !pIn->bJoinSqlite ) explainJoin(pStr, p, pIn); break;
      case PAR_OP_WINDOW: explainWindow(pStr, p, pIn); break;
      default:
        sqlite3_str_appendf(pStr, "final     %s\n",
            p->pWindow && p->zFinal ? "SQLite evaluates the select list, ORDER BY, LIMIT "
                                      "over the windows' rows, in their order"
            : (p->pSort && !p->pSort->bGroup) || p->pWindow ? "the rows as they are"
            : p->aDirect ? "the groups as they are (no expression left for SQLite)"
            : p->pSort ? "SQLite evaluates the select list, HAVING, LIMIT over the sorted "
                         "groups, in their order"
            : p->bFinalWindows ? "SQLite evaluates the select list, HAVING, the window "
                                 "functions, ORDER BY, LIMIT over the groups"
            : "SQLite evaluates the select list, HAVING, ORDER BY, LIMIT over the groups");
        break;
    }
  }
  if( pIn->bVerbose ){
    sqlite3_str_appendf(pStr, "extraction mode: %s\n",
                        pIn->zModeLong ? pIn->zModeLong : pIn->zMode ? pIn->zMode : "?");
    if( p->zFlat ){
      sqlite3_str_appendall(pStr, "rewritten SQL: ");
      explainText(pStr, p->zFlat, pIn);
      sqlite3_str_appendall(pStr, "\n");
    }
    sqlite3_str_appendall(pStr, "extract SQL: ");
    explainText(pStr, p->zExtract, pIn);
    sqlite3_str_appendall(pStr, "\nfinal SQL:   ");
    explainText(pStr, p->zFinal, pIn);
    sqlite3_str_appendall(pStr, "\n");
  }
  return sqlite3_str_finish(pStr);
}
