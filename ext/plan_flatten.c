/*
** plan_flatten.c: a SELECT whose FROM is one subquery, or one common table
** expression used once, planned as the SELECT SQLite itself runs: the
** subquery merged into it (select.c's flattenSubquery).
**
**   SELECT nation, sum(amount) FROM (SELECT n_name AS nation,
**          l_price * (1 - l_discount) AS amount FROM lineitem, nation
**          WHERE l_nation = n_id) AS profit GROUP BY nation
**
** becomes
**
**   SELECT n_name, sum((l_price * (1 - l_discount))) FROM lineitem, nation
**          WHERE (l_nation = n_id) GROUP BY n_name
**
** which the other planners take as any SELECT over tables (here a join
** feeding a group-by).  The text must mean exactly what SQLite's merged
** tree means, so it is written only where each rule below holds, and kept
** only where SQLite flattens the original too: the two statements' query
** plans (EXPLAIN QUERY PLAN) must be the same loops in the same order, so
** that the rows reach the aggregates in the same order.  Everything else
** runs natively, and par_explain says why.
**
** Rules (SQLite 3.40's flattenSubquery and substExpr):
**   - the subquery: a plain SELECT with FROM, without GROUP BY, aggregates,
**     DISTINCT, ORDER BY, LIMIT, windows, "*" or COLLATE in its select
**     list, whose result columns have distinct names (alias, else the
**     column's name, else the expression's text, as sqlite3ColumnsFromExprList);
**   - the outer SELECT: that subquery alone in FROM, no window, no other
**     subquery;
**   - the subquery's WHERE comes first, then the outer one's (TK_AND of
**     the two, in that order);
**   - a reference to a subquery column becomes its expression: a column
**     as it is (SQLite substitutes the column itself); any other
**     expression in parentheses.  SQLite gives such an expression the
**     collation it had as a subquery column (implicit, BINARY when it has
**     none); the parentheses give it none.  That differs only where a
**     collation is looked up across operands (a comparison with a column
**     of another collation, min(a, b) and the like), so the expression is
**     substituted only where it is numeric (an arithmetic, comparison or
**     logical operator at its top: a collation never applies to numbers)
**     or where it stands alone: a whole select-list item, GROUP BY or
**     ORDER BY term, the single argument of an aggregate, a WHERE or
**     HAVING term;
**   - every other name of the outer SELECT (an alias of its select list)
**     must name no column of the subquery's tables, which would take it
**     once merged; and no alias of the outer select list may be a
**     subquery column's name, whose references would change meaning.
*/
#include "planint.h"
#include <string.h>

#define FLAT_MAX_DEPTH 4        /* subqueries within subqueries merged */

/* How a subquery column is substituted. */
#define FLAT_PLAIN  0           /* a column reference: as it is */
#define FLAT_NUM    1           /* a numeric expression: in parentheses */
#define FLAT_OTHER  2           /* any other: in parentheses, alone only */

typedef struct FlatCol {
  char *zName;                  /* the subquery's name of the column */
  char *zExpr;                  /* its expression, as written */
  int eKind;                    /* FLAT_* */
  int bInt;                     /* an integer literal (signs and parentheses
                                ** around it): written "((expr)+0)", the same
                                ** value, type and (no) affinity and
                                ** collation, where "(1)" in ORDER BY or
                                ** GROUP BY would be a column's number */
} FlatCol;

typedef struct Flat {
  sqlite3 *db;
  const char *zSql;             /* the outer SELECT */
  ParSelect outer, inner;
  char *zInner;                 /* the subquery's text */
  char *zAlias;                 /* the subquery's alias, or NULL */
  int nCol; FlatCol *aCol;
  char *zWhy;                   /* why it is not merged */
  int rc;
} Flat;

static int flatWhy(Flat *p, const char *zWhy, const char *zArg){
  if( p->zWhy==0 ){
    p->zWhy = sqlite3_mprintf(zWhy, zArg);
    if( p->zWhy==0 ) p->rc = SQLITE_NOMEM;
  }
  return 1;
}

static int isKwAt(const char *z, const ParToken *a, int i, const char *zKw){
  return i>=0 && parTokIs(z, &a[i], zKw);
}

/* The column of the subquery named by the identifier token t, or -1. */
static int flatColumn(Flat *p, const char *z, const ParToken *t){
  char *zName = parDequote(z + t->i, t->n);
  int i;
  if( zName==0 ){ p->rc = SQLITE_NOMEM; return -1; }
  for(i=0; i<p->nCol && sqlite3_stricmp(p->aCol[i].zName, zName); i++){}
  sqlite3_free(zName);
  return i<p->nCol ? i : -1;
}

/* Whether tokens [t0, t1) are an identifier chain "a", "a.b" or "a.b.c". */
static int flatIsChain(const ParToken *a, int t0, int t1){
  int i;
  if( t1-t0!=1 && t1-t0!=3 && t1-t0!=5 ) return 0;
  for(i=t0; i<t1; i++){
    if( ((i-t0)&1)==0 ? (a[i].eType!=PT_ID && a[i].eType!=PT_QID) : a[i].eType!=PT_DOT ){
      return 0;
    }
  }
  return 1;
}

/* Whether token t ends an operand (so that an operator after it is
** binary). */
static int flatOperandEnd(const char *z, const ParToken *t){
  switch( t->eType ){
    case PT_RP: case PT_QID: case PT_STRING: case PT_NUMBER: case PT_BLOB:
    case PT_VARIABLE:
      return 1;
    case PT_ID:
      return !sqlite3_keyword_check(z + t->i, t->n) || parTokIs(z, t, "END")
          || parTokIs(z, t, "NULL") || parTokIs(z, t, "CURRENT_DATE")
          || parTokIs(z, t, "CURRENT_TIME") || parTokIs(z, t, "CURRENT_TIMESTAMP");
  }
  return 0;
}

/* Whether the expression of tokens [t0, t1) is numeric by its top
** operator: a binary operator at parenthesis depth 0 other than "||",
** "->" and "->>" (the only ones that bind more tightly than the others,
** which all give a number or NULL); else, with none of those three, a
** leading "-", "~" or NOT; else a number alone. */
static int flatNumeric(const char *z, const ParToken *a, int t0, int t1){
  static const char *azKw[] = { "AND", "OR", "IS", "IN", "LIKE", "GLOB", "MATCH",
    "REGEXP", "BETWEEN", "ISNULL", "NOTNULL", "NOT" };
  int i, k, d = 0, bTight = 0;
  for(i=t0; i<t1; i++){
    const ParToken *t = &a[i];
    if( t->eType==PT_LP || parTokIs(z, t, "CASE") ){ d++; continue; }
    if( t->eType==PT_RP || (d>0 && parTokIs(z, t, "END")) ){ d--; continue; }
    if( d>0 || i==t0 || !flatOperandEnd(z, &a[i-1]) ) continue;
    if( t->eType==PT_OP && (t->n==2 || t->n==3)
     && (strncmp(z + t->i, "||", 2)==0 || strncmp(z + t->i, "->", 2)==0) ){
      bTight = 1;
      continue;
    }
    if( t->eType==PT_STAR || t->eType==PT_OP ) return 1;
    for(k=0; t->eType==PT_ID && k<(int)(sizeof(azKw)/sizeof(azKw[0])); k++){
      if( parTokIs(z, t, azKw[k]) ) return 1;
    }
  }
  if( bTight ) return 0;
  if( a[t0].eType==PT_OP && a[t0].n==1 && (z[a[t0].i]=='-' || z[a[t0].i]=='~') ) return 1;
  if( parTokIs(z, &a[t0], "NOT") ) return 1;
  if( a[t0].eType==PT_OP && a[t0].n==1 && z[a[t0].i]=='+' ) t0++;
  return t1==t0+1 && a[t0].eType==PT_NUMBER;
}

/* Whether tokens [t0, t1) are an integer literal, with signs and
** parentheses around it. */
static int flatIsInteger(const char *z, const ParToken *a, int t0, int t1){
  int j;
  while( t0<t1 && (a[t0].eType==PT_LP
                   || (a[t0].eType==PT_OP && a[t0].n==1
                       && (z[a[t0].i]=='+' || z[a[t0].i]=='-'))) ){
    t0++;
  }
  while( t1>t0 && a[t1-1].eType==PT_RP ) t1--;
  if( t1!=t0+1 || a[t0].eType!=PT_NUMBER ) return 0;
  for(j=0; j<a[t0].n; j++){
    char c = z[a[t0].i + j];
    if( c=='.' || c=='e' || c=='E' ) return (z[a[t0].i]=='0' && a[t0].n>1
                                             && (z[a[t0].i+1]=='x' || z[a[t0].i+1]=='X'));
  }
  return 1;
}

/* The subquery's result columns (Flat.aCol), or 1 when it cannot be
** merged. */
static int flatColumns(Flat *p){
  ParSelect *pIn = &p->inner;
  const char *z = pIn->zSql;
  const ParToken *a = pIn->aTok;
  int i, j;
  if( pIn->zWhy && !isKwAt(z, a, 0, "SELECT") ) return flatWhy(p, "a subquery in FROM: %s", pIn->zWhy);
  if( pIn->zWhy && strstr(pIn->zWhy, "compound") ) return flatWhy(p, "a compound SELECT in FROM%s", "");
  if( pIn->zWhy && strstr(pIn->zWhy, "subquery") ){
    return flatWhy(p, "a subquery in FROM with %s", pIn->zWhy);
  }
  if( !pIn->bFrom ) return flatWhy(p, "a subquery in FROM without FROM%s", "");
  if( pIn->nGroup || pIn->nAgg || pIn->bDistinct || pIn->nOrder || pIn->bLimit
   || pIn->nWinCall || pIn->winClause.iTokEnd ){
    return flatWhy(p, "a subquery in FROM with GROUP BY, an aggregate, DISTINCT, ORDER BY, "
                   "LIMIT or a window%s", "");
  }
  p->aCol = sqlite3_malloc64(sizeof(FlatCol)*(pIn->nCol+1));
  if( p->aCol==0 ){ p->rc = SQLITE_NOMEM; return 1; }
  memset(p->aCol, 0, sizeof(FlatCol)*(pIn->nCol+1));
  for(i=0; i<pIn->nCol; i++){
    const ParExpr *pE = &pIn->aCol[i];
    FlatCol *pC = &p->aCol[p->nCol++];
    int t0 = pE->span.iTok, t1 = pE->span.iTokEnd;
    for(j=t0; j<t1; j++){
      if( a[j].eType==PT_STAR && (j==t0 || a[j-1].eType==PT_DOT) ){
        return flatWhy(p, "a subquery in FROM that selects \"*\"%s", "");
      }
    }
    if( parExprCollateTok(z, a, t0, t1)!=-1 ){
      return flatWhy(p, "a subquery in FROM with COLLATE in its select list%s", "");
    }
    pC->zExpr = parSpanText(z, pE->span);
    if( pC->zExpr==0 ){ p->rc = SQLITE_NOMEM; return 1; }
    pC->bInt = flatIsInteger(z, a, t0, t1);
    pC->eKind = flatIsChain(a, t0, t1) ? FLAT_PLAIN
              : flatNumeric(z, a, t0, t1) ? FLAT_NUM : FLAT_OTHER;
    if( pC->eKind==FLAT_PLAIN && t1==t0+1 && a[t0].eType==PT_QID && z[a[t0].i]=='"' ){
      /* "x" that names no column is the string 'x' (SQLite's fallback):
      ** no column, so it takes BINARY as a subquery column. */
      char *zName = parDequote(z + a[t0].i, a[t0].n);
      int bCol = zName && !strchr(zName, ']');
      if( zName==0 ){ p->rc = SQLITE_NOMEM; return 1; }
      if( bCol ){
        sqlite3_stmt *pStmt = 0;
        char *zTry = sqlite3_mprintf("SELECT [%s] FROM %.*s", zName,
                                     pIn->from.iEnd - pIn->from.iStart, z + pIn->from.iStart);
        bCol = zTry && sqlite3_prepare_v2(p->db, zTry, -1, &pStmt, 0)==SQLITE_OK;
        sqlite3_finalize(pStmt);
        sqlite3_free(zTry);
      }
      sqlite3_free(zName);
      if( !bCol ) pC->eKind = FLAT_OTHER;
    }
    if( pE->zAlias ){
      pC->zName = sqlite3_mprintf("%s", pE->zAlias);
    }else if( pC->eKind==FLAT_PLAIN ){
      pC->zName = parDequote(z + a[t1-1].i, a[t1-1].n);
    }else{
      pC->zName = sqlite3_mprintf("%s", pC->zExpr);
    }
    if( pC->zName==0 ){ p->rc = SQLITE_NOMEM; return 1; }
    for(j=0; j<i; j++){
      if( sqlite3_stricmp(p->aCol[j].zName, pC->zName)==0 ){
        return flatWhy(p, "a subquery in FROM with two columns named %s", pC->zName);
      }
    }
  }
  return 0;
}

/* Whether the reference of tokens [r0, r1) of the outer SELECT stands
** alone: a whole select-list item, GROUP BY or ORDER BY term, WHERE or
** HAVING term, or the single argument of an aggregate function. */
static int flatAlone(const char *z, const ParToken *a, int r0, int r1, int nDepth){
  static const char *azAgg[] = { "count", "sum", "total", "avg", "min", "max",
                                 "group_concat" };
  static const char *azPrev[] = { "SELECT", "DISTINCT", "ALL", "BY", "WHERE", "HAVING",
                                  "AND", "OR" };
  static const char *azNext[] = { "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT",
                                  "AS", "ASC", "DESC", "NULLS", "AND", "OR", "WINDOW" };
  int k, bPrev = 0, bNext = 0, p0 = r0-1;
  if( nDepth>0 ){
    if( isKwAt(z, a, p0, "DISTINCT") ) p0--;
    if( p0<1 || a[p0].eType!=PT_LP || a[p0-1].eType!=PT_ID || a[r1].eType!=PT_RP ) return 0;
    for(k=0; k<(int)(sizeof(azAgg)/sizeof(azAgg[0])); k++){
      if( parTokIs(z, &a[p0-1], azAgg[k]) ) return 1;
    }
    return 0;
  }
  if( a[p0].eType==PT_COMMA ) bPrev = 1;
  for(k=0; !bPrev && k<(int)(sizeof(azPrev)/sizeof(azPrev[0])); k++){
    bPrev = parTokIs(z, &a[p0], azPrev[k]);
  }
  if( a[r1].eType==PT_COMMA || a[r1].eType==PT_EOF || a[r1].eType==PT_SEMI ) bNext = 1;
  for(k=0; !bNext && k<(int)(sizeof(azNext)/sizeof(azNext[0])); k++){
    bNext = parTokIs(z, &a[r1], azNext[k]);
  }
  /* The AND of "BETWEEN a AND x" is no term's. */
  if( bPrev && isKwAt(z, a, p0, "AND") ){
    int d = 0;
    for(k=p0-1; k>=0; k--){
      if( a[k].eType==PT_RP ){ d++; continue; }
      if( a[k].eType==PT_LP && d--==0 ) break;
      if( d>0 ) continue;
      if( isKwAt(z, a, k, "BETWEEN") ) return 0;
      if( isKwAt(z, a, k, "WHERE") || isKwAt(z, a, k, "HAVING") || isKwAt(z, a, k, "AND")
       || isKwAt(z, a, k, "OR") ){
        break;
      }
    }
  }
  return bPrev && bNext;
}

/* Whether a bare name of the outer SELECT (not a subquery column) would
** name a column of the subquery's tables once merged. */
static int flatCaptured(Flat *p, const char *zName){
  sqlite3_stmt *pStmt = 0;
  char *zTry;
  int rc;
  /* In brackets: a name in double quotes that names no column would be
  ** read as a string. */
  if( strchr(zName, ']') ) return 1;
  zTry = sqlite3_mprintf("SELECT [%s] FROM %.*s", zName,
                               p->inner.from.iEnd - p->inner.from.iStart,
                               p->zInner + p->inner.from.iStart);
  if( zTry==0 ){ p->rc = SQLITE_NOMEM; return 1; }
  rc = sqlite3_prepare_v2(p->db, zTry, -1, &pStmt, 0);
  sqlite3_finalize(pStmt);
  sqlite3_free(zTry);
  if( rc==SQLITE_NOMEM ){ p->rc = rc; return 1; }
  return rc==SQLITE_OK;
}

/* An outer alias named like a subquery column: 1 unless its item is
** that very column. */
static int flatAliasClash(Flat *p){
  ParSelect *pOut = &p->outer;
  int i;
  for(i=0; i<pOut->nCol; i++){
    const ParExpr *pE = &pOut->aCol[i];
    const ParToken *a = pOut->aTok;
    int t0 = pE->span.iTok, t1 = pE->span.iTokEnd, iCol;
    if( pE->zAlias==0 ) continue;
    for(iCol=0; iCol<p->nCol && sqlite3_stricmp(p->aCol[iCol].zName, pE->zAlias); iCol++){}
    if( iCol==p->nCol ) continue;
    if( flatIsChain(a, t0, t1) && flatColumn(p, pOut->zSql, &a[t1-1])==iCol ) continue;
    return flatWhy(p, "an alias of the select list named as a column of the subquery "
                   "in FROM: %s", pE->zAlias);
  }
  return 0;
}

/* Append the outer SELECT with the subquery merged into it to pStr.
** Returns 1 when it cannot be merged. */
static int flatWrite(Flat *p, sqlite3_str *pStr){
  ParSelect *pOut = &p->outer, *pIn = &p->inner;
  const char *z = pOut->zSql;
  const ParToken *a = pOut->aTok;
  const ParFromSrc *pSrc = &pOut->pFrom->aSrc[0];
  char *zInWhere = pIn->bWhere ? parSpanText(p->zInner, pIn->where) : 0;
  int i, iPrev = 0, d = 0, rc = 0;
  if( pIn->bWhere && zInWhere==0 ){ p->rc = SQLITE_NOMEM; return 1; }
  for(i=0; a[i].eType!=PT_EOF && rc==0; i++){
    int r1 = i+1, iCol = -1;
    if( i==pSrc->span.iTok ){
      sqlite3_str_appendf(pStr, "%.*s%.*s", a[i].i - iPrev, z + iPrev,
                          pIn->from.iEnd - pIn->from.iStart, p->zInner + pIn->from.iStart);
      if( zInWhere && !pOut->bWhere ) sqlite3_str_appendf(pStr, " WHERE %s", zInWhere);
      iPrev = a[pSrc->span.iTokEnd-1].i + a[pSrc->span.iTokEnd-1].n;
      i = pSrc->span.iTokEnd-1;
      continue;
    }
    if( zInWhere && pOut->bWhere && i==pOut->where.iTok ){
      sqlite3_str_appendf(pStr, "%.*s(%s) AND (", a[i].i - iPrev, z + iPrev, zInWhere);
      iPrev = a[i].i;
    }
    if( zInWhere && pOut->bWhere && i==pOut->where.iTokEnd ){
      int iEnd = a[i-1].i + a[i-1].n;
      sqlite3_str_appendf(pStr, "%.*s)", iEnd - iPrev, z + iPrev);
      iPrev = iEnd;
    }
    if( a[i].eType==PT_LP ){ d++; continue; }
    if( a[i].eType==PT_RP ){ d--; continue; }
    if( a[i].eType==PT_STAR && (i==0 || a[i-1].eType!=PT_LP)
     && (isKwAt(z, a, i-1, "SELECT") || isKwAt(z, a, i-1, "DISTINCT")
         || isKwAt(z, a, i-1, "ALL") || a[i-1].eType==PT_COMMA || a[i-1].eType==PT_DOT) ){
      /* "*" or "alias.*" of the select list: every subquery column. */
      int k, iStart = a[i-1].eType==PT_DOT ? a[i-2].i : a[i].i;
      sqlite3_str_appendf(pStr, "%.*s", iStart - iPrev, z + iPrev);
      for(k=0; k<p->nCol; k++){
        sqlite3_str_appendf(pStr, k ? ", %s" : "%s", p->aCol[k].zExpr);
      }
      iPrev = a[i].i + a[i].n;
      continue;
    }
    if( (a[i].eType!=PT_ID && a[i].eType!=PT_QID)
     || (i>0 && (a[i-1].eType==PT_DOT || isKwAt(z, a, i-1, "AS")
                 || isKwAt(z, a, i-1, "COLLATE")))
     || (a[i].eType==PT_ID && a[i+1].eType==PT_LP) ){
      continue;
    }
    if( a[i+1].eType==PT_DOT && a[i+2].eType!=PT_STAR ){
      char *zQual = parDequote(z + a[i].i, a[i].n);
      int bMine = zQual && p->zAlias && sqlite3_stricmp(zQual, p->zAlias)==0;
      sqlite3_free(zQual);
      if( zQual==0 ){ p->rc = SQLITE_NOMEM; rc = 1; break; }
      if( !bMine || a[i+3].eType==PT_DOT ){
        rc = flatWhy(p, "a name the subquery in FROM does not give: %.40s", z + a[i].i);
        break;
      }
      iCol = flatColumn(p, z, &a[i+2]);
      if( iCol<0 ){
        rc = flatWhy(p, "a name the subquery in FROM does not give: %.40s", z + a[i].i);
        break;
      }
      r1 = i+3;
    }else if( a[i+1].eType!=PT_DOT ){
      iCol = flatColumn(p, z, &a[i]);
      if( iCol<0 ){
        char *zName;
        if( p->rc ){ rc = 1; break; }
        /* (Keywords too: SQLite takes many as names, "key" say.) */
        zName = parDequote(z + a[i].i, a[i].n);
        if( zName==0 ){ p->rc = SQLITE_NOMEM; rc = 1; break; }
        /* An alias (or a name SQLite resolves elsewhere): it must stay
        ** unresolved by the merged FROM. */
        if( flatCaptured(p, zName) ){
          rc = flatWhy(p, "a name that a table of the subquery in FROM has too: %s", zName);
        }
        sqlite3_free(zName);
        continue;
      }
      if( a[i].eType==PT_ID && sqlite3_keyword_check(z + a[i].i, a[i].n) ){
        rc = flatWhy(p, "a subquery column named as a keyword: %s", p->aCol[iCol].zName);
        break;
      }
    }else{
      continue;
    }
    if( p->aCol[iCol].eKind==FLAT_OTHER && !flatAlone(z, a, i, r1, d) ){
      rc = flatWhy(p, "a subquery column whose collation would change where it is "
                   "compared: %s", p->aCol[iCol].zName);
      break;
    }
    sqlite3_str_appendf(pStr, p->aCol[iCol].eKind==FLAT_PLAIN ? "%.*s%s"
                              : p->aCol[iCol].bInt ? "%.*s((%s)+0)" : "%.*s(%s)",
                        a[i].i - iPrev, z + iPrev, p->aCol[iCol].zExpr);
    iPrev = a[r1-1].i + a[r1-1].n;
    i = r1-1;
  }
  if( rc==0 ){
    int iEnd = (int)strlen(z);
    if( zInWhere && pOut->bWhere && pOut->where.iTokEnd>=i ){
      sqlite3_str_appendf(pStr, "%.*s)", iEnd - iPrev, z + iPrev);
    }else{
      sqlite3_str_appendf(pStr, "%.*s", iEnd - iPrev, z + iPrev);
    }
  }
  sqlite3_free(zInWhere);
  return rc;
}

/* The details of zSql's query plan, one per line, with subqueries'
** numbers left out (they count SELECTs, which merging changes); NULL
** when it cannot be read. */
static char *flatPlan(sqlite3 *db, const char *zSql, const ParParams *pParams){
  sqlite3_stmt *pStmt = buildExplainStmt(db, zSql, pParams);
  sqlite3_str *pStr;
  if( pStmt==0 ) return 0;
  pStr = sqlite3_str_new(db);
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zDetail = (const char*)sqlite3_column_text(pStmt, 3);
    const char *zNum = zDetail ? strstr(zDetail, "SUBQUERY ") : 0;
    if( zDetail==0 ) continue;
    if( zNum ){
      zNum += 9;
      sqlite3_str_appendf(pStr, "%.*s", (int)(zNum - zDetail), zDetail);
      while( *zNum>='0' && *zNum<='9' ) zNum++;
      sqlite3_str_appendf(pStr, "%s\n", zNum);
    }else{
      sqlite3_str_appendf(pStr, "%s\n", zDetail);
    }
  }
  if( sqlite3_finalize(pStmt)!=SQLITE_OK ){
    sqlite3_free(sqlite3_str_finish(pStr));
    return 0;
  }
  return sqlite3_str_finish(pStr);
}

/* zSql with its one common table expression, used once as the only
** source of FROM, written as a subquery there; NULL (*pzWhy set, or
** p->rc) when it is not that. */
static char *flatWith(Flat *p, const char *zSql){
  int nTok, i, iName, iBody, iEnd, iUse = -1, nUse = 0;
  ParToken *a = parTokenize(zSql, &nTok);
  char *zName = 0, *zOut = 0;
  ParSelect sel;
  if( a==0 ){ p->rc = SQLITE_NOMEM; return 0; }
  memset(&sel, 0, sizeof(sel));
  i = 1;
  if( isKwAt(zSql, a, i, "RECURSIVE") ){ flatWhy(p, "WITH RECURSIVE%s", ""); goto done; }
  iName = i++;
  if( a[i].eType==PT_LP ){ flatWhy(p, "a WITH clause naming its columns%s", ""); goto done; }
  if( !isKwAt(zSql, a, i, "AS") ){ flatWhy(p, "a WITH clause%s", ""); goto done; }
  i++;
  if( isKwAt(zSql, a, i, "MATERIALIZED") || isKwAt(zSql, a, i, "NOT") ){
    flatWhy(p, "a MATERIALIZED or NOT MATERIALIZED common table expression%s", "");
    goto done;
  }
  if( a[i].eType!=PT_LP ){ flatWhy(p, "a WITH clause%s", ""); goto done; }
  iBody = i;
  {
    int d = 0;
    for(i=iBody; a[i].eType!=PT_EOF; i++){
      if( a[i].eType==PT_LP ) d++;
      if( a[i].eType==PT_RP && --d==0 ) break;
    }
  }
  iEnd = i;                                 /* the ")" closing the body */
  if( a[iEnd].eType==PT_EOF || !isKwAt(zSql, a, iEnd+1, "SELECT") ){
    flatWhy(p, "a WITH clause of several common table expressions%s", "");
    goto done;
  }
  zName = parDequote(zSql + a[iName].i, a[iName].n);
  if( zName==0 ){ p->rc = SQLITE_NOMEM; goto done; }
  for(i=iBody+1; a[i].eType!=PT_EOF; i++){
    char *z;
    if( i==iEnd || (a[i].eType!=PT_ID && a[i].eType!=PT_QID) ) continue;
    z = parDequote(zSql + a[i].i, a[i].n);
    if( z==0 ){ p->rc = SQLITE_NOMEM; goto done; }
    /* A use: not a qualifier (name.col), not an alias (AS name, name name) */
    if( sqlite3_stricmp(z, zName)==0 && a[i+1].eType!=PT_DOT
     && !isKwAt(zSql, a, i-1, "AS") && !(i-1==iUse && nUse>0) ){
      if( i<iEnd ){
        sqlite3_free(z);
        flatWhy(p, "a common table expression that names itself%s", "");
        goto done;
      }
      nUse++;
      iUse = i;
    }
    sqlite3_free(z);
  }
  if( p->rc ) goto done;
  p->rc = parSelectParse(zSql + a[iEnd+1].i, &sel);
  if( p->rc ) goto done;
  if( nUse!=1 || sel.pFrom==0 || sel.pFrom->nSrc!=1
   || sel.pFrom->aSrc[0].eType!=PAR_SRC_TABLE || sel.pFrom->aSrc[0].zSchema
   || sel.pFrom->aSrc[0].name.iTok + (iEnd+1)!=iUse
   || sel.pFrom->aSrc[0].eIndexed ){
    flatWhy(p, "a common table expression that is not the only source of FROM, "
            "used once%s", "");
    goto done;
  }
  {
    const ParFromSrc *pS = &sel.pFrom->aSrc[0];
    zOut = sqlite3_mprintf("%.*s(%.*s) AS \"%w\"%s",
                           a[iEnd+1+pS->span.iTok].i - a[iEnd+1].i, zSql + a[iEnd+1].i,
                           a[iEnd].i - a[iBody].i - 1, zSql + a[iBody].i + 1,
                           pS->zAlias ? pS->zAlias : zName,
                           zSql + a[iEnd+1].i + pS->span.iEnd);
    if( zOut==0 ) p->rc = SQLITE_NOMEM;
  }
done:
  parSelectClear(&sel);
  sqlite3_free(zName);
  sqlite3_free(a);
  return zOut;
}

/* ---- common table expressions written where they are used ----------------
**
**   WITH revenue0 (supplier_no, total_revenue) AS (SELECT l_suppkey,
**     sum(...) FROM lineitem WHERE ... GROUP BY l_suppkey)
**   SELECT ... FROM supplier, revenue0 WHERE ... AND total_revenue =
**     (SELECT max(total_revenue) FROM revenue0)
**
** becomes the SELECT with each use of a name in FROM (of the SELECT or of
** a subquery in it) written as the body in parentheses, "(SELECT l_suppkey
** AS "supplier_no", sum(...) AS "total_revenue" FROM ...) AS revenue0",
** which the other rewrites and planners then take as any subquery in FROM
** (TPC-H's Q15: a derived table joined, its maximum a scalar subquery
** computed once).  The same rows: a common table expression is a subquery
** with a name (select.c: its columns, their affinities and collations are
** a subquery's, renamed by the column list), SQLite materializes one used
** twice and each use reads the same rows, a deterministic SELECT's at one
** snapshot, which each inlined copy makes again; the same order: kept only
** where SQLite's loops over the SELECT's own tables stay the same
** (parFlatten).  Taken: WITH without RECURSIVE, without MATERIALIZED
** hints, each body a plain SELECT (not compound) naming no common table
** expression after it nor itself; with a column list, a select list of as
** many items without aliases (an alias the body's own clauses might use)
** and no "*"; no other WITH in the text. */

#define FLAT_MAX_CTE 8

/* zName as an identifier in SQL: as it is when it is a plain one (letters,
** digits, "_", not a keyword), else in double quotes.  (Other rewrites
** leave subqueries with double-quoted names alone: "x" may be a string.) */
static void flatAppendName(sqlite3_str *pStr, const char *zName){
  int i, bPlain = zName[0] && !(zName[0]>='0' && zName[0]<='9')
               && !sqlite3_keyword_check(zName, (int)strlen(zName));
  for(i=0; zName[i] && bPlain; i++){
    char c = zName[i];
    bPlain = (c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9') || c=='_';
  }
  if( bPlain ) sqlite3_str_appendall(pStr, zName);
  else sqlite3_str_appendf(pStr, "\"%w\"", zName);
}

/* Is token i of a a name that can stand after a source in FROM as its
** alias (an identifier, not a keyword that goes on the FROM clause)? */
static int flatIsAliasTok(const char *z, const ParToken *a, int i){
  return a[i].eType==PT_QID || (a[i].eType==PT_ID && !sqlite3_keyword_check(z + a[i].i, a[i].n));
}

/* zText with every use in FROM of a name of aName[0..nName-1] (dequoted)
** written as "(azBody[k])" with its alias, or as "(azBody[k]) AS name";
** NULL when out of memory. */
static char *flatUseBodies(const char *zText, int nName, char **azName, char **azBody){
  int nTok, i, d = 0, iPrev = 0;
  ParToken *a = parTokenize(zText, &nTok);
  unsigned char aFrom[64], aExpect[64];
  sqlite3_str *pStr;
  if( a==0 ) return 0;
  memset(aFrom, 0, sizeof(aFrom));
  memset(aExpect, 0, sizeof(aExpect));
  pStr = sqlite3_str_new(0);
  for(i=0; i<nTok && a[i].eType!=PT_EOF; i++){
    const ParToken *t = &a[i];
    int bExpect = d<64 && aExpect[d];
    if( d<64 ) aExpect[d] = 0;
    if( t->eType==PT_LP ){
      d++;
      if( d<64 ) aFrom[d] = aExpect[d] = 0;
      continue;
    }
    if( t->eType==PT_RP ){ if( d>0 ) d--; continue; }
    if( d>=64 ) continue;
    if( parTokIs(zText, t, "FROM") ){
      aFrom[d] = 1;
      aExpect[d] = 1;
    }else if( parTokIs(zText, t, "WHERE") || parTokIs(zText, t, "GROUP")
           || parTokIs(zText, t, "HAVING") || parTokIs(zText, t, "ORDER")
           || parTokIs(zText, t, "LIMIT") || parTokIs(zText, t, "WINDOW")
           || parTokIs(zText, t, "UNION") || parTokIs(zText, t, "EXCEPT")
           || parTokIs(zText, t, "INTERSECT") || parTokIs(zText, t, "SELECT") ){
      aFrom[d] = 0;
    }else if( aFrom[d] && (t->eType==PT_COMMA || parTokIs(zText, t, "JOIN")) ){
      aExpect[d] = 1;
    }else if( bExpect && (t->eType==PT_ID || t->eType==PT_QID)
           && a[i+1].eType!=PT_DOT && a[i+1].eType!=PT_LP ){
      char *zN = parDequote(zText + t->i, t->n);
      int k;
      if( zN==0 ) break;
      for(k=0; k<nName && sqlite3_stricmp(zN, azName[k])!=0; k++){}
      sqlite3_free(zN);
      if( k<nName ){
        int bAlias = isKwAt(zText, a, i+1, "AS") || flatIsAliasTok(zText, a, i+1);
        sqlite3_str_appendf(pStr, "%.*s(%s)", t->i - iPrev, zText + iPrev, azBody[k]);
        if( !bAlias ){
          sqlite3_str_appendall(pStr, " AS ");
          flatAppendName(pStr, azName[k]);
        }
        iPrev = t->i + t->n;
      }
    }
  }
  sqlite3_str_appendall(pStr, zText + iPrev);
  sqlite3_free(a);
  return sqlite3_str_finish(pStr);
}

/* zSql (a WITH statement) with its common table expressions written where
** they are used (see above), or NULL: *pzWhy says why not (or *pRc). */
static char *flatInlineWith(const char *zSql, char **pzWhy, int *pRc){
  int nTok, i, n = 0, k, iMain;
  ParToken *a = parTokenize(zSql, &nTok);
  char *azName[FLAT_MAX_CTE], *azBody[FLAT_MAX_CTE], *zOut = 0;
  const char *zWhy = 0;
  memset(azName, 0, sizeof(azName));
  memset(azBody, 0, sizeof(azBody));
  if( a==0 ){ *pRc = SQLITE_NOMEM; return 0; }
  if( !isKwAt(zSql, a, 0, "WITH") ){
    sqlite3_free(a);
    return 0;
  }
  i = 1;
  if( isKwAt(zSql, a, i, "RECURSIVE") ){ zWhy = "WITH RECURSIVE"; goto done; }
  for(;;){
    int iName = i, iCols = -1, iBody, iEnd, dd = 0, nCol = 0, j;
    ParSelect sel;
    sqlite3_str *pB;
    if( n>=FLAT_MAX_CTE ){ zWhy = "a WITH clause of many common table expressions"; goto done; }
    if( a[iName].eType!=PT_ID && a[iName].eType!=PT_QID ){ zWhy = "a WITH clause"; goto done; }
    i++;
    if( a[i].eType==PT_LP ){
      iCols = i;
      for(; a[i].eType!=PT_EOF && a[i].eType!=PT_RP; i++){
        if( a[i].eType==PT_ID || a[i].eType==PT_QID ) nCol++;
      }
      i++;
    }
    if( !isKwAt(zSql, a, i, "AS") ){ zWhy = "a WITH clause"; goto done; }
    i++;
    if( isKwAt(zSql, a, i, "MATERIALIZED") || isKwAt(zSql, a, i, "NOT") ){
      zWhy = "a MATERIALIZED or NOT MATERIALIZED common table expression";
      goto done;
    }
    if( a[i].eType!=PT_LP || !isKwAt(zSql, a, i+1, "SELECT") ){
      zWhy = "a WITH clause";
      goto done;
    }
    iBody = i;
    for(; a[i].eType!=PT_EOF; i++){
      if( a[i].eType==PT_LP ) dd++;
      if( a[i].eType==PT_RP && --dd==0 ) break;
    }
    if( a[i].eType==PT_EOF ){ zWhy = "a WITH clause"; goto done; }
    iEnd = i;
    azName[n] = parDequote(zSql + a[iName].i, a[iName].n);
    azBody[n] = sqlite3_mprintf("%.*s", a[iEnd].i - a[iBody+1].i, zSql + a[iBody+1].i);
    if( azName[n]==0 || azBody[n]==0 ){ *pRc = SQLITE_NOMEM; n++; goto done; }
    n++;
    *pRc = parSelectParse(azBody[n-1], &sel);
    if( *pRc ) goto done;
    if( sel.zWhy && (strstr(sel.zWhy, "compound") || strstr(sel.zWhy, "WITH")) ){
      zWhy = "a common table expression of a compound SELECT or a WITH of its own";
    }else if( iCols>=0 ){
      /* The column list as aliases of the select list's items. */
      if( sel.nCol!=nCol || sel.bStar ){
        zWhy = "a common table expression whose column list and select list differ";
      }
      for(j=0; j<sel.nCol && !zWhy; j++){
        if( sel.aCol[j].zAlias || sel.aCol[j].alias.iTokEnd ){
          zWhy = "a common table expression naming its columns twice";
        }
      }
      if( !zWhy ){
        int c = 0, iPrev = 0;
        const char *zB = azBody[n-1];
        pB = sqlite3_str_new(0);
        for(j=iCols+1; a[j].eType!=PT_RP && c<sel.nCol; j++){
          char *zCol;
          if( a[j].eType!=PT_ID && a[j].eType!=PT_QID ) continue;
          zCol = parDequote(zSql + a[j].i, a[j].n);
          if( zCol==0 ){ *pRc = SQLITE_NOMEM; break; }
          sqlite3_str_appendf(pB, "%.*s AS ", sel.aCol[c].span.iEnd - iPrev, zB + iPrev);
          flatAppendName(pB, zCol);
          iPrev = sel.aCol[c].span.iEnd;
          sqlite3_free(zCol);
          c++;
        }
        sqlite3_str_appendall(pB, zB + iPrev);
        sqlite3_free(azBody[n-1]);
        azBody[n-1] = sqlite3_str_finish(pB);
        if( azBody[n-1]==0 && *pRc==SQLITE_OK ) *pRc = SQLITE_NOMEM;
      }
    }
    parSelectClear(&sel);
    if( zWhy || *pRc ) goto done;
    /* Earlier names used in this body: their bodies. */
    if( n>1 ){
      char *z = flatUseBodies(azBody[n-1], n-1, azName, azBody);
      if( z==0 ){ *pRc = SQLITE_NOMEM; goto done; }
      sqlite3_free(azBody[n-1]);
      azBody[n-1] = z;
    }
    i = iEnd + 1;
    if( a[i].eType==PT_COMMA ){ i++; continue; }
    break;
  }
  iMain = i;
  if( !isKwAt(zSql, a, iMain, "SELECT") ){ zWhy = "a WITH clause"; goto done; }
  for(k=iMain; a[k].eType!=PT_EOF; k++){
    if( parTokIs(zSql, &a[k], "WITH") ){ zWhy = "a WITH inside the SELECT"; goto done; }
  }
  for(k=0; k<n; k++){
    /* Not recursive: no name used in its own body (or a later one's,
    ** which SQLite does not allow either). */
    char *z = flatUseBodies(azBody[k], 1, &azName[k], &azBody[k]);
    int bSelf = z && strcmp(z, azBody[k])!=0;
    sqlite3_free(z);
    if( z==0 ){ *pRc = SQLITE_NOMEM; goto done; }
    if( bSelf ){ zWhy = "a common table expression that names itself"; goto done; }
  }
  zOut = flatUseBodies(zSql + a[iMain].i, n, azName, azBody);
  if( zOut==0 ) *pRc = SQLITE_NOMEM;
done:
  for(k=0; k<n; k++){
    sqlite3_free(azName[k]);
    sqlite3_free(azBody[k]);
  }
  sqlite3_free(a);
  if( zWhy && *pRc==SQLITE_OK ){
    *pzWhy = sqlite3_mprintf("%s", zWhy);
    if( *pzWhy==0 ) *pRc = SQLITE_NOMEM;
  }
  return zOut;
}

/* One merge of zSql (see the header comment): the merged SELECT, or NULL
** with p->zWhy set (or p->rc), or NULL and no zWhy when zSql has no
** subquery in FROM and no WITH. */
static char *flatOnce(Flat *p, const char *zSql){
  sqlite3_str *pStr = 0;
  char *zWith = 0, *zOut = 0;
  const ParFromSrc *pSrc;
  int i;
  p->zSql = zSql;
  if( sqlite3_strnicmp(zSql, "WITH", 4)==0 ){
    zWith = flatWith(p, zSql);
    if( zWith==0 ) return 0;
    zSql = p->zSql = zWith;
  }
  p->rc = parSelectParse(zSql, &p->outer);
  if( p->rc ) goto done;
  if( p->outer.pFrom==0 ) goto done;
  for(i=0; i<p->outer.pFrom->nSrc; i++){
    if( p->outer.pFrom->aSrc[i].eType==PAR_SRC_SUBQUERY ) break;
  }
  if( i==p->outer.pFrom->nSrc ) goto done;
  if( p->outer.pFrom->nSrc!=1 ){
    flatWhy(p, "a subquery in FROM beside other sources%s", "");
    goto done;
  }
  if( p->outer.nWinCall || p->outer.winClause.iTokEnd ){
    flatWhy(p, "window functions over a subquery in FROM%s", "");
    goto done;
  }
  if( p->outer.zWhy && strstr(p->outer.zWhy, "compound") ){
    flatWhy(p, "a compound SELECT%s", "");
    goto done;
  }
  pSrc = &p->outer.pFrom->aSrc[0];
  for(i=0; p->outer.aTok[i].eType!=PT_EOF; i++){
    if( (i<pSrc->span.iTok || i>=pSrc->span.iTokEnd) && p->outer.aTok[i].eType==PT_LP
     && isKwAt(zSql, p->outer.aTok, i+1, "SELECT") ){
      flatWhy(p, "a subquery in FROM and another subquery%s", "");
      goto done;
    }
  }
  p->zInner = parSpanText(zSql, pSrc->inner);
  if( p->zInner==0 ){ p->rc = SQLITE_NOMEM; goto done; }
  if( pSrc->zAlias ){
    p->zAlias = sqlite3_mprintf("%s", pSrc->zAlias);
    if( p->zAlias==0 ){ p->rc = SQLITE_NOMEM; goto done; }
  }
  p->rc = parSelectParse(p->zInner, &p->inner);
  if( p->rc || flatColumns(p) || flatAliasClash(p) ) goto done;
  pStr = sqlite3_str_new(p->db);
  if( flatWrite(p, pStr)==0 && p->rc==SQLITE_OK ){
    zOut = sqlite3_str_finish(pStr);
    pStr = 0;
    if( zOut==0 ) p->rc = SQLITE_NOMEM;
  }
done:
  sqlite3_free(sqlite3_str_finish(pStr));
  for(i=0; i<p->nCol; i++){
    sqlite3_free(p->aCol[i].zName);
    sqlite3_free(p->aCol[i].zExpr);
  }
  sqlite3_free(p->aCol);
  p->aCol = 0;
  p->nCol = 0;
  sqlite3_free(p->zInner);
  sqlite3_free(p->zAlias);
  p->zInner = p->zAlias = 0;
  parSelectClear(&p->outer);
  parSelectClear(&p->inner);
  sqlite3_free(zWith);
  if( zOut==0 && p->zWhy==0 && p->rc==SQLITE_OK && zWith ){
    flatWhy(p, "a WITH clause%s", "");
  }
  return zOut;
}

/* ---- [NOT] EXISTS as [NOT] IN -------------------------------------------
**
** A WHERE term  [NOT] EXISTS (SELECT ... FROM t2 WHERE t2.a = x AND rest)
** whose only reference to the outer SELECT is the column x of that one
** equality runs the subquery once per outer row; without an index on
** t2.a, a scan of t2 each time.  The same term as
**   EXISTS:      x IN (SELECT t2.a FROM t2 WHERE t2.a IS NOT NULL AND (rest))
**   NOT EXISTS:  (x IS NULL OR x NOT IN (SELECT t2.a FROM t2 WHERE
**                                        t2.a IS NOT NULL AND (rest)))
** is one list, built once per statement, probed per row.  The two agree
** where "=" and IN compare alike: t2.a and x of one affinity class
** (numeric, TEXT or none: then neither converts the other) and both under
** BINARY; NULLs of t2.a match nothing either way (left out of the list,
** where a NULL would make NOT IN unknown); a NULL x matches nothing (EXISTS
** false: IN gives NULL, false as a WHERE term; NOT EXISTS true: the IS
** NULL).  As a WHERE term (an AND-term at the top of WHERE), only whether
** it is true counts. */

/* The affinity class (n, t or the numeric u) and whether the collation is
** BINARY of the column zExpr over zFrom, or 0 when it is not a column
** there. */
static char flatColumnClass(sqlite3 *db, const char *zExpr, const char *zFrom, int *pbBinary){
  sqlite3_stmt *pStmt = 0;
  char c = 0;
  char *zSql = sqlite3_mprintf("SELECT %s FROM %s", zExpr, zFrom);
  *pbBinary = 0;
  if( zSql && sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_column_count(pStmt)==1 && sqlite3_column_origin_name(pStmt, 0) ){
    const char *zColl = parOriginColl(db, pStmt, 0);
    c = parAffinityLetter(sqlite3_column_decltype(pStmt, 0));
    if( c=='i' || c=='r' ) c = 'u';
    *pbBinary = zColl==0 || sqlite3_stricmp(zColl, "BINARY")==0;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return c;
}

/* Ends [*pi, ...) of the next AND-term of tokens [i0, i1): the term is
** [t0, t1); *pi moves past its AND.  Returns 0 when none is left. */
static int flatNextTerm(const char *z, const ParToken *a, int *pi, int i1, int *pt0, int *pt1){
  int i, d = 0, nBetween = 0;
  if( *pi>=i1 ) return 0;
  *pt0 = *pi;
  for(i=*pi; i<i1; i++){
    if( a[i].eType==PT_LP || parTokIs(z, &a[i], "CASE") ) d++;
    else if( a[i].eType==PT_RP || (d>0 && parTokIs(z, &a[i], "END")) ) d--;
    else if( d==0 && parTokIs(z, &a[i], "BETWEEN") ) nBetween++;
    else if( d==0 && parTokIs(z, &a[i], "AND") ){
      if( nBetween>0 ){ nBetween--; continue; }
      break;
    }
  }
  *pt1 = i;
  *pi = i+1;
  return 1;
}

/* Does subquery pIn name RTRIM or read a table with an RTRIM column?
** SQLite 3.40 looks such text up in automatic indexes through a Bloom
** filter that hashes its length (vdbe.c filterHash), and misses 'a ' for
** 'a' where the subquery's loop builds one; a rewrite changes where it
** does, so SQLite's answer with it.  1 also when out of memory. */
static int flatRtrim(sqlite3 *db, const ParSelect *pIn){
  int i;
  if( sqlite3_strlike("%RTRIM%", pIn->zSql, 0)==0 ) return 1;
  for(i=0; pIn->pFrom && i<pIn->pFrom->nSrc; i++){
    if( pIn->pFrom->aSrc[i].zName && buildRtrimTable(db, pIn->pFrom->aSrc[i].zName) ) return 1;
  }
  return 0;
}

/* The text inside tokens [iLP, t1) of z when they are exactly one
** "( SELECT ... )" with no double-quoted name in it ("x" may be a string
** there and the outer column here: not followed), else NULL (also when
** out of memory). */
static char *flatSubqueryText(const char *z, const ParToken *a, int iLP, int t1){
  int i, d = 0;
  if( t1-iLP<3 || a[iLP].eType!=PT_LP || !parTokIs(z, &a[iLP+1], "SELECT")
   || a[t1-1].eType!=PT_RP ){
    return 0;
  }
  for(i=iLP; i<t1; i++){
    if( a[i].eType==PT_LP ) d++;
    if( a[i].eType==PT_RP && --d==0 ) break;
    if( a[i].eType==PT_QID && z[a[i].i]=='"' ) return 0;
  }
  if( i!=t1-1 ) return 0;
  return sqlite3_mprintf("%.*s", a[t1-1].i - a[iLP+1].i, z + a[iLP+1].i);
}

/* The AND-terms of the WHERE of subquery pIn (FROM text zFrom) inside a
** SELECT whose FROM is zOuterFrom, split: up to nMax correlated
** equalities "t.a = x" (either way round) between a column of pIn's FROM
** and one of the outer FROM, of one affinity class and both BINARY
** (*pnEq of them: azA[i] the inner column, azX[i] the outer one), and
** the other terms ANDed in *pzRest ("" for none).  Returns 1 when the
** subquery's table or text has an RTRIM collation (below), or out of
** memory (the caller's strings are then freed). */
static int flatCorrelation(sqlite3 *db, const ParSelect *pIn, const char *zFrom,
                           const char *zOuterFrom, int nMax, char **azA, char **azX,
                           int *pnEq, char **pzRest){
  const char *zInner = pIn->zSql;
  const ParToken *b = pIn->aTok;
  sqlite3_str *pRest;
  int k = pIn->where.iTok, e0, e1, nEq = 0, i;
  *pnEq = 0;
  *pzRest = 0;
  if( flatRtrim(db, pIn) ) return 1;
  pRest = sqlite3_str_new(db);
  while( flatNextTerm(zInner, b, &k, pIn->where.iTokEnd, &e0, &e1) ){
    int iOp = -1, j;
    for(j=e0+1; j<e1-1; j++){
      if( b[j].eType==PT_OP && ((b[j].n==1 && zInner[b[j].i]=='=')
                                || (b[j].n==2 && strncmp(zInner+b[j].i, "==", 2)==0)) ){
        iOp = j;
        break;
      }
    }
    if( iOp>0 && flatIsChain(b, e0, iOp) && flatIsChain(b, iOp+1, e1) ){
      char *zL = sqlite3_mprintf("%.*s", b[iOp-1].i + b[iOp-1].n - b[e0].i, zInner + b[e0].i);
      char *zR = sqlite3_mprintf("%.*s", b[e1-1].i + b[e1-1].n - b[iOp+1].i,
                                 zInner + b[iOp+1].i);
      int bL, bR, bOut;
      char cL = zL ? flatColumnClass(db, zL, zFrom, &bL) : 0;
      char cR = zR ? flatColumnClass(db, zR, zFrom, &bR) : 0;
      if( nEq<nMax && zL && zR && (cL!=0)!=(cR!=0) ){
        /* One side is the subquery's column, the other names the outer
        ** SELECT. */
        char *zIn = cL ? zL : zR, *zOut = cL ? zR : zL;
        char cOut = flatColumnClass(db, zOut, zOuterFrom, &bOut);
        if( cOut==(cL ? cL : cR) && (cL ? bL : bR) && bOut ){
          azA[nEq] = zIn;
          azX[nEq++] = zOut;
          continue;
        }
      }
      sqlite3_free(zL);
      sqlite3_free(zR);
    }
    sqlite3_str_appendf(pRest, "%s(%.*s)", sqlite3_str_length(pRest) ? " AND " : "",
                        b[e1-1].i + b[e1-1].n - b[e0].i, zInner + b[e0].i);
  }
  if( sqlite3_str_errcode(pRest) ){
    sqlite3_free(sqlite3_str_finish(pRest));
  }else if( sqlite3_str_length(pRest)==0 ){
    sqlite3_free(sqlite3_str_finish(pRest));   /* (an empty one finishes as NULL) */
    *pzRest = sqlite3_mprintf("");
  }else{
    *pzRest = sqlite3_str_finish(pRest);
  }
  if( *pzRest==0 ){
    for(i=0; i<nEq; i++){ sqlite3_free(azA[i]); sqlite3_free(azX[i]); }
    return 1;
  }
  *pnEq = nEq;
  return 0;
}

/* The rewrite of one WHERE term [t0, t1) of the SELECT p (see above),
** appended to pStr; 0 when the term is not of that form. */
static int flatExistsTerm(sqlite3 *db, const ParSelect *p, int t0, int t1, sqlite3_str *pStr){
  const char *z = p->zSql;
  const ParToken *a = p->aTok;
  int bNot = 0, rc = 0, nEq = 0;
  ParSelect in;
  char *zInner = 0, *zFrom = 0, *zOuterFrom = 0, *zA = 0, *zX = 0, *zRest = 0;
  if( parTokIs(z, &a[t0], "NOT") ){ bNot = 1; t0++; }
  if( t1-t0<4 || !parTokIs(z, &a[t0], "EXISTS")
   || (zInner = flatSubqueryText(z, a, t0+1, t1))==0 ){
    return 0;
  }
  memset(&in, 0, sizeof(in));
  zOuterFrom = parSpanText(z, p->from);
  if( zInner==0 || zOuterFrom==0 || parSelectParse(zInner, &in) ) goto done;
  /* (Its select list does not count: "SELECT *" is fine.) */
  if( (in.zWhy && (strstr(in.zWhy, "compound") || strstr(in.zWhy, "plain SELECT")
                   || strstr(in.zWhy, "WITH") || strstr(in.zWhy, "does not follow")))
   || !in.bFrom || !in.bWhere || in.nGroup || in.nAgg || in.bDistinct || in.bLimit
   || in.nWinCall || in.pFrom==0 || in.pFrom->nSrc!=1
   || in.pFrom->aSrc[0].eType!=PAR_SRC_TABLE ){
    goto done;
  }
  zFrom = parSpanText(zInner, in.from);
  if( zFrom==0 || flatCorrelation(db, &in, zFrom, zOuterFrom, 1, &zA, &zX, &nEq, &zRest)
   || nEq!=1 ){
    goto done;
  }
  {
    /* Only where SQLite scans t2 for each outer row: with an index on
    ** t2.a it looks the rows up, cheaper than a list of all of them. */
    sqlite3_stmt *pStmt = 0;
    char *zEqp = sqlite3_mprintf("EXPLAIN QUERY PLAN SELECT 1 FROM %s WHERE %s = ?%s%s",
                                 zFrom, zA, zRest[0] ? " AND " : "", zRest);
    int bScan = 0;
    if( zEqp && sqlite3_prepare_v2(db, zEqp, -1, &pStmt, 0)==SQLITE_OK ){
      bScan = 1;
      while( sqlite3_step(pStmt)==SQLITE_ROW ){
        const char *zD = (const char*)sqlite3_column_text(pStmt, 3);
        if( zD && strncmp(zD, "SEARCH", 6)==0 ) bScan = 0;
      }
    }
    sqlite3_finalize(pStmt);
    sqlite3_free(zEqp);
    if( !bScan ) goto done;
  }
  {
    /* Everything else is t2's alone: it prepares over t2 by itself. */
    sqlite3_stmt *pStmt = 0;
    char *zTry = sqlite3_mprintf("SELECT %s FROM %s%s%s", zA, zFrom, zRest[0] ? " WHERE " : "",
                                 zRest);
    int bOk = zTry && sqlite3_prepare_v2(db, zTry, -1, &pStmt, 0)==SQLITE_OK;
    sqlite3_finalize(pStmt);
    sqlite3_free(zTry);
    if( !bOk ) goto done;
  }
  if( bNot ){
    sqlite3_str_appendf(pStr, "(%s IS NULL OR %s NOT IN (SELECT %s FROM %s WHERE %s IS NOT NULL%s%s))",
                        zX, zX, zA, zFrom, zA, zRest[0] ? " AND " : "", zRest);
  }else{
    sqlite3_str_appendf(pStr, "(%s IN (SELECT %s FROM %s WHERE %s IS NOT NULL%s%s))",
                        zX, zA, zFrom, zA, zRest[0] ? " AND " : "", zRest);
  }
  rc = 1;
done:
  parSelectClear(&in);
  sqlite3_free(zInner);
  sqlite3_free(zFrom);
  sqlite3_free(zOuterFrom);
  sqlite3_free(zA);
  sqlite3_free(zX);
  sqlite3_free(zRest);
  return rc;
}

/* zSql with each top-level AND-term of its WHERE that xTerm rewrites
** (appending the new term to its sqlite3_str, returning 1) rewritten;
** NULL when none is (or out of memory: *pRc). */
static char *flatWhereTerms(sqlite3 *db, const char *zSql,
                            int (*xTerm)(sqlite3*, const ParSelect*, int, int, sqlite3_str*),
                            int *pRc){
  ParSelect sel;
  sqlite3_str *pStr;
  char *zOut = 0;
  int k, t0, t1, iPrev = 0, nDone = 0;
  *pRc = parSelectParse(zSql, &sel);
  if( *pRc || !sel.bWhere || !sel.bFrom
   || (sel.zWhy && (strstr(sel.zWhy, "compound") || strstr(sel.zWhy, "plain SELECT")
                    || strstr(sel.zWhy, "WITH") || strstr(sel.zWhy, "does not follow"))) ){
    parSelectClear(&sel);
    return 0;
  }
  pStr = sqlite3_str_new(db);
  k = sel.where.iTok;
  while( flatNextTerm(zSql, sel.aTok, &k, sel.where.iTokEnd, &t0, &t1) ){
    sqlite3_str *pTerm = sqlite3_str_new(db);
    if( t0<t1 && xTerm(db, &sel, t0, t1, pTerm) ){
      char *zTerm = sqlite3_str_finish(pTerm);
      if( zTerm==0 ){ *pRc = SQLITE_NOMEM; break; }
      sqlite3_str_appendf(pStr, "%.*s%s", sel.aTok[t0].i - iPrev, zSql + iPrev, zTerm);
      iPrev = sel.aTok[t1-1].i + sel.aTok[t1-1].n;
      sqlite3_free(zTerm);
      nDone++;
    }else{
      sqlite3_free(sqlite3_str_finish(pTerm));
    }
  }
  if( nDone>0 && *pRc==SQLITE_OK ){
    sqlite3_str_appendall(pStr, zSql + iPrev);
    zOut = sqlite3_str_finish(pStr);
    if( zOut==0 ) *pRc = SQLITE_NOMEM;
  }else{
    sqlite3_free(sqlite3_str_finish(pStr));
  }
  parSelectClear(&sel);
  return zOut;
}

/* ---- correlated scalar subqueries of an aggregate ------------------------
**
** A WHERE term  L op (SELECT e FROM t2 WHERE t2.a = x AND rest)  where e is
** an expression of aggregates of t2's rows (sum, avg, min, max: NULL over
** no rows), correlated by equalities alone, runs the subquery once per
** outer row: with no index on t2.a, a scan of t2 each time (TPC-H's Q17).
** The same rows come from a join with the groups of t2, made once:
**
**   FROM ... CROSS JOIN (SELECT t2.a AS _pk0, avg(t2.q) AS _pv0 FROM t2
**                        WHERE rest GROUP BY t2.a) AS _pd0
**   WHERE ... AND _pd0._pk0 = x AND L op (0.2 * (+_pd0._pv0))
**
** Why each outer row keeps the same answer:
**   - the groups are t2's rows by the correlated columns, under the
**     equalities' own comparison (t2.a and x of one affinity class, both
**     BINARY, as for EXISTS above), so an outer row matches at most one
**     group, the one holding exactly the rows its subquery sees; a NULL x
**     or a value no group has matches none: the row is dropped, as the
**     subquery's NULL (e is NULL when each aggregate is, checked by SQLite
**     itself) makes the comparison NULL;
**   - each group's aggregates are over the same rows in the same order:
**     SQLite scans t2 in rowid order for each outer row (its plan for the
**     subquery has no SEARCH: checked), the group-by sums in rowid order;
**   - "+" takes the affinity off the column as the subquery's value has
**     none (an aggregate's result), so L op v converts as before; e may
**     hold no COLLATE, CAST, FILTER or function other than the aggregates;
**   - the derived table comes last in FROM (CROSS JOIN: SQLite keeps it
**     after every other table), and the rewrite is kept only where the
**     loops over the SELECT's own tables are the same as before, so the
**     joined rows come in the same order.
** The join planner (plan_join.c) runs the derived table by its own plan:
** the group-by kernels. */

#define FLAT_MAX_DECOR 4          /* such terms in one SELECT */

/* Is token t a comparison operator? */
static int flatIsCompare(const char *z, const ParToken *t){
  static const char *az[] = { "<", "<=", ">", ">=", "=", "==", "<>", "!=" };
  int i;
  if( t->eType!=PT_OP ) return 0;
  for(i=0; i<(int)(sizeof(az)/sizeof(az[0])); i++){
    if( (int)strlen(az[i])==t->n && strncmp(z + t->i, az[i], t->n)==0 ) return 1;
  }
  return 0;
}

/* Are the aggregates of subquery pIn (FROM text zFrom) the same over its
** rows in any order?  min() and max() of a plain column of INTEGER, REAL,
** NUMERIC or TEXT affinity under BINARY: the values that tie are the same
** value of one storage class (see buildKeyStable), so whichever comes
** first is the answer.  (Sums of REALs are not: each order rounds its own
** way.) */
static int flatOrderFree(sqlite3 *db, const ParSelect *pIn, const char *zFrom){
  int k;
  for(k=0; k<pIn->nAgg; k++){
    const ParAggCall *pA = &pIn->aAgg[k];
    int bBinary = 0;
    char c;
    char *zArg;
    if( (pA->eFunc!=PAR_AGG_MIN && pA->eFunc!=PAR_AGG_MAX) || pA->nArg!=1
     || !flatIsChain(pIn->aTok, pA->aArg[0].iTok, pA->aArg[0].iTokEnd) ){
      return 0;
    }
    zArg = parSpanText(pIn->zSql, pA->aArg[0]);
    c = zArg ? flatColumnClass(db, zArg, zFrom, &bBinary) : 0;
    if( c!=0 && c!='n' ){
      /* (flatColumnClass folds INTEGER and REAL into 'u': ask for 'n'.) */
      sqlite3_stmt *pStmt = 0;
      char *zSql = sqlite3_mprintf("SELECT %s FROM %s", zArg, zFrom);
      if( zSql && sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
        if( parAffinityLetter(sqlite3_column_decltype(pStmt, 0))=='n' ) c = 0;
      }else{
        c = 0;
      }
      sqlite3_finalize(pStmt);
      sqlite3_free(zSql);
    }
    sqlite3_free(zArg);
    if( c==0 || c=='n' || !bBinary ) return 0;
  }
  return 1;
}

/* The rewrite of term [t0, t1) of p (see above) as the derived table
** number iD, its FROM item appended to pAdd and the term to pStr; 0 when
** the term is not of that form. */
static int flatScalarAggTerm(sqlite3 *db, const ParSelect *p, int t0, int t1,
                             const char *zOuterFrom, int iD, sqlite3_str *pStr,
                             sqlite3_str *pAdd){
  const char *z = p->zSql;
  const ParToken *a = p->aTok;
  ParSelect in;
  char *zInner = 0, *zFrom = 0, *zRest = 0, *azA[4], *azX[4], *zDerived = 0;
  sqlite3_str *pE = 0, *pNull = 0, *pCols = 0;
  int i, d = 0, iOp = -1, nEq = 0, rc = 0, iPrev, k, bOrderFree;
  const ParExpr *pCol;

  /* L op ( SELECT ... ), the subquery ending the term. */
  for(i=t0; i<t1; i++){
    if( a[i].eType==PT_LP ) d++;
    else if( a[i].eType==PT_RP ) d--;
    else if( d==0 && flatIsCompare(z, &a[i]) ){
      if( iOp>=0 ) return 0;
      iOp = i;
    }
  }
  if( iOp<=t0 ) return 0;
  for(i=t0; i<iOp; i++){
    /* (no subquery on the left; "x": see flatSubqueryText) */
    if( parTokIs(z, &a[i], "SELECT") || (a[i].eType==PT_QID && z[a[i].i]=='"') ) return 0;
  }
  if( (zInner = flatSubqueryText(z, a, iOp+1, t1))==0 ) return 0;
  memset(&in, 0, sizeof(in));
  if( parSelectParse(zInner, &in) ) goto done;
  if( in.zWhy || !in.bFrom || !in.bWhere || in.nGroup || in.bHaving || in.bDistinct
   || in.bLimit || in.nOrder || in.nWinCall || in.nCol!=1 || in.nAgg<1 || in.nRef
   || in.nSub || in.nCall || in.pFrom==0 || in.pFrom->nSrc<1 ){
    goto done;
  }
  for(k=0; k<in.pFrom->nSrc; k++){
    if( in.pFrom->aSrc[k].eType!=PAR_SRC_TABLE
     || (in.pFrom->aSrc[k].eJoin & (PAR_JOIN_LEFT|PAR_JOIN_RIGHT|PAR_JOIN_NATURAL)) ){
      goto done;
    }
  }
  pCol = &in.aCol[0];
  for(i=pCol->span.iTok; i<pCol->span.iTokEnd; i++){
    if( parTokIs(zInner, &in.aTok[i], "COLLATE") || parTokIs(zInner, &in.aTok[i], "CAST")
     || parTokIs(zInner, &in.aTok[i], "FILTER") ){
      goto done;
    }
  }
  for(k=0; k<in.nAgg; k++){
    int e = in.aAgg[k].eFunc;
    if( e!=PAR_AGG_SUM && e!=PAR_AGG_AVG && e!=PAR_AGG_MIN && e!=PAR_AGG_MAX ) goto done;
  }
  zFrom = parSpanText(zInner, in.from);
  if( zFrom==0 || flatCorrelation(db, &in, zFrom, zOuterFrom, 4, azA, azX, &nEq, &zRest) ){
    goto done;
  }
  if( nEq==0 ) goto done;
  bOrderFree = flatOrderFree(db, &in, zFrom);
  if( in.pFrom->nSrc>1 && !bOrderFree ) goto done;

  /* e with each aggregate as the derived table's column (pE), as NULL
  ** (pNull); the derived table's columns (pCols). */
  pE = sqlite3_str_new(db);
  pNull = sqlite3_str_new(db);
  pCols = sqlite3_str_new(db);
  for(k=0; k<nEq; k++) sqlite3_str_appendf(pCols, "%s%s AS _pk%d", k ? ", " : "", azA[k], k);
  iPrev = in.aTok[pCol->span.iTok].i;
  for(k=0; k<in.nAgg; k++){
    const ParSpan *pC = &in.aAgg[k].call;
    int i0 = in.aTok[pC->iTok].i, i1 = in.aTok[pC->iTokEnd-1].i + in.aTok[pC->iTokEnd-1].n;
    sqlite3_str_appendf(pE, "%.*s(+_pd%d._pv%d)", i0 - iPrev, zInner + iPrev, iD, k);
    sqlite3_str_appendf(pNull, "%.*sNULL", i0 - iPrev, zInner + iPrev);
    sqlite3_str_appendf(pCols, ", %.*s AS _pv%d", i1 - i0, zInner + i0, k);
    iPrev = i1;
  }
  {
    int iEnd = in.aTok[pCol->span.iTokEnd-1].i + in.aTok[pCol->span.iTokEnd-1].n;
    sqlite3_str_appendf(pE, "%.*s", iEnd - iPrev, zInner + iPrev);
    sqlite3_str_appendf(pNull, "%.*s", iEnd - iPrev, zInner + iPrev);
  }
  if( sqlite3_str_errcode(pE) || sqlite3_str_errcode(pNull) || sqlite3_str_errcode(pCols) ){
    goto done;
  }
  {
    /* NULL over no rows, as the subquery is. */
    char *zTry = sqlite3_mprintf("SELECT (%s) IS NULL", sqlite3_str_value(pNull));
    int bNull = zTry && parQueryInt(db, zTry, 0)==1;
    sqlite3_free(zTry);
    if( !bNull ) goto done;
  }
  if( !bOrderFree ){
    /* SQLite scans t2 for each outer row: its rows in rowid order. */
    sqlite3_stmt *pStmt = 0;
    sqlite3_str *pEqp = sqlite3_str_new(db);
    char *zEqp;
    int bScan = 0;
    sqlite3_str_appendf(pEqp, "EXPLAIN QUERY PLAN SELECT 1 FROM %s WHERE ", zFrom);
    for(k=0; k<nEq; k++) sqlite3_str_appendf(pEqp, "%s%s = ?", k ? " AND " : "", azA[k]);
    if( zRest[0] ) sqlite3_str_appendf(pEqp, " AND %s", zRest);
    zEqp = sqlite3_str_finish(pEqp);
    if( zEqp && sqlite3_prepare_v2(db, zEqp, -1, &pStmt, 0)==SQLITE_OK ){
      bScan = 1;
      while( sqlite3_step(pStmt)==SQLITE_ROW ){
        const char *zD = (const char*)sqlite3_column_text(pStmt, 3);
        if( zD && strncmp(zD, "SEARCH", 6)==0 ) bScan = 0;
      }
    }
    sqlite3_finalize(pStmt);
    sqlite3_free(zEqp);
    if( !bScan ) goto done;
  }
  {
    /* The derived table: t2's alone (it prepares by itself). */
    sqlite3_str *pD = sqlite3_str_new(db);
    sqlite3_stmt *pStmt = 0;
    sqlite3_str_appendf(pD, "SELECT %s FROM %s", sqlite3_str_value(pCols), zFrom);
    if( zRest[0] ) sqlite3_str_appendf(pD, " WHERE %s", zRest);
    sqlite3_str_appendall(pD, " GROUP BY ");
    for(k=0; k<nEq; k++) sqlite3_str_appendf(pD, "%s%s", k ? ", " : "", azA[k]);
    zDerived = sqlite3_str_finish(pD);
    if( zDerived==0 || sqlite3_prepare_v2(db, zDerived, -1, &pStmt, 0)!=SQLITE_OK ){
      sqlite3_finalize(pStmt);
      goto done;
    }
    sqlite3_finalize(pStmt);
  }
  sqlite3_str_appendf(pAdd, " CROSS JOIN (%s) AS _pd%d", zDerived, iD);
  /* (AND-terms at the top of WHERE, where the term stood.) */
  for(k=0; k<nEq; k++) sqlite3_str_appendf(pStr, "_pd%d._pk%d = %s AND ", iD, k, azX[k]);
  sqlite3_str_appendf(pStr, "%.*s (%s)", a[iOp].i + a[iOp].n - a[t0].i, z + a[t0].i,
                      sqlite3_str_value(pE));
  rc = 1;
done:
  for(k=0; k<nEq; k++){ sqlite3_free(azA[k]); sqlite3_free(azX[k]); }
  sqlite3_free(sqlite3_str_finish(pE));
  sqlite3_free(sqlite3_str_finish(pNull));
  sqlite3_free(sqlite3_str_finish(pCols));
  parSelectClear(&in);
  sqlite3_free(zInner);
  sqlite3_free(zFrom);
  sqlite3_free(zRest);
  sqlite3_free(zDerived);
  return rc;
}

/* The rewrite of a WHERE term as a derived table number iD: appends its
** FROM item to pAdd and the new term to pStr, returns 1; or 0. */
typedef int (*FlatDerivedTerm)(sqlite3*, const ParSelect*, int, int, const char*, int,
                               sqlite3_str*, sqlite3_str*);

/* zSql with each WHERE term xTerm rewrites as a derived table (named
** zPrefix<n>, a prefix zSql must not hold) rewritten, the derived tables
** appended to its FROM; NULL when none is (or out of memory: *pRc). */
static char *flatDerivedTerms(sqlite3 *db, const char *zSql, FlatDerivedTerm xTerm,
                              const char *zPrefix, int *pRc){
  ParSelect sel;
  sqlite3_str *pAdd, *pTail;
  char *zOut = 0, *zOuterFrom = 0;
  int k, t0, t1, iPrev, nDone = 0, iFromEnd;
  *pRc = parSelectParse(zSql, &sel);
  if( *pRc || !sel.bWhere || !sel.bFrom || sel.pFrom==0 || strstr(zSql, zPrefix)
   || (sel.zWhy && (strstr(sel.zWhy, "compound") || strstr(sel.zWhy, "plain SELECT")
                    || strstr(sel.zWhy, "WITH") || strstr(sel.zWhy, "does not follow"))) ){
    parSelectClear(&sel);
    return 0;
  }
  zOuterFrom = parSpanText(zSql, sel.from);
  iFromEnd = sel.aTok[sel.from.iTokEnd-1].i + sel.aTok[sel.from.iTokEnd-1].n;
  pAdd = sqlite3_str_new(db);
  pTail = sqlite3_str_new(db);
  iPrev = iFromEnd;
  k = sel.where.iTok;
  while( zOuterFrom && nDone<FLAT_MAX_DECOR
      && flatNextTerm(zSql, sel.aTok, &k, sel.where.iTokEnd, &t0, &t1) ){
    sqlite3_str *pTerm = sqlite3_str_new(db);
    if( t0<t1 && xTerm(db, &sel, t0, t1, zOuterFrom, nDone, pTerm, pAdd) ){
      char *zTerm = sqlite3_str_finish(pTerm);
      if( zTerm==0 ){ *pRc = SQLITE_NOMEM; break; }
      sqlite3_str_appendf(pTail, "%.*s%s", sel.aTok[t0].i - iPrev, zSql + iPrev, zTerm);
      iPrev = sel.aTok[t1-1].i + sel.aTok[t1-1].n;
      sqlite3_free(zTerm);
      nDone++;
    }else{
      sqlite3_free(sqlite3_str_finish(pTerm));
    }
  }
  if( zOuterFrom==0 ) *pRc = SQLITE_NOMEM;
  if( nDone>0 && *pRc==SQLITE_OK ){
    char *zAdd = sqlite3_str_finish(pAdd), *zTail = sqlite3_str_finish(pTail);
    pAdd = pTail = 0;
    zOut = zAdd && zTail ? sqlite3_mprintf("%.*s%s%s%s", iFromEnd, zSql, zAdd, zTail,
                                           zSql + iPrev) : 0;
    if( zOut==0 ) *pRc = SQLITE_NOMEM;
    sqlite3_free(zAdd);
    sqlite3_free(zTail);
  }
  sqlite3_free(sqlite3_str_finish(pAdd));
  sqlite3_free(sqlite3_str_finish(pTail));
  sqlite3_free(zOuterFrom);
  parSelectClear(&sel);
  return zOut;
}

/* Are the loops zL1 those of zL0 and then only loops over the derived
** tables named zPrefix<n> ("SCAN _pd0", "SEARCH _pd1 ...")?  With
** bFirstScan, the first loop may also be "SCAN t" where zL0's was
** "SEARCH t USING INTEGER PRIMARY KEY (rowid=?)": the rows of t whose
** rowids an IN list holds, in the list's order (ascending: its numbers
** sorted), which is rowid order, the order SCAN t reads them in. */
static int flatLoopsThenDerived(const char *zL0, const char *zL1, const char *zPrefix,
                                int bFirstScan){
  int n, nPre = (int)strlen(zPrefix);
  const char *z;
  if( bFirstScan && strncmp(zL0, "SEARCH ", 7)==0 && strncmp(zL1, "SCAN ", 5)==0 ){
    int nName = (int)strcspn(zL0 + 7, " \n");
    if( strncmp(zL0 + 7 + nName, " USING INTEGER PRIMARY KEY (rowid=?)\n", 37)==0
     && strncmp(zL1 + 5, zL0 + 7, nName)==0 && zL1[5+nName]=='\n' ){
      zL0 += 7 + nName + 37;
      zL1 += 5 + nName + 1;
    }
  }
  n = (int)strlen(zL0);
  if( strncmp(zL0, zL1, n)!=0 ) return 0;
  for(z=zL1+n; *z; ){
    if( !(strncmp(z, "SCAN ", 5)==0 && strncmp(z+5, zPrefix, nPre)==0)
     && !(strncmp(z, "SEARCH ", 7)==0 && strncmp(z+7, zPrefix, nPre)==0) ){
      return 0;
    }
    z += strcspn(z, "\n");
    if( *z ) z++;
  }
  return 1;
}

/* ---- x IN (SELECT y ...) as a join ----------------------------------------
**
** A WHERE term  x IN (SELECT y FROM ...)  (uncorrelated) is true for the
** outer rows whose x equals a value of the list.  The same rows come from
**   FROM ... CROSS JOIN (SELECT DISTINCT y AS _pk0 FROM ...) AS _ps0
**   WHERE ... AND _ps0._pk0 = x
** where x and y are columns of one affinity class under BINARY (as for
** EXISTS above: = and IN compare alike), DISTINCT leaves one row per value
** (values that compare equal match the same x), and a NULL on either
** side matches nothing (IN gives NULL or false there: the row is dropped
** either way).  The subquery's own plan (it holds TPC-H Q20's correlated
** sum) runs on the kernels instead of SQLite's list built on each
** reading connection.  Kept where the SELECT's loops stay the same: the
** list often drives SQLite's outer loop as rowid lookups, which visit the
** rows in rowid order, as SCAN does (flatLoopsThenDerived). */
static int flatSemiJoinTerm(sqlite3 *db, const ParSelect *p, int t0, int t1,
                            const char *zOuterFrom, int iD, sqlite3_str *pStr,
                            sqlite3_str *pAdd){
  const char *z = p->zSql;
  const ParToken *a = p->aTok;
  ParSelect in;
  char *zInner = 0, *zX = 0, *zY = 0, *zFrom = 0;
  int i, iIn, rc = 0, bX, bY;
  char cX, cY;
  for(iIn=t0; iIn<t1 && !parTokIs(z, &a[iIn], "IN"); iIn++){}
  if( iIn==t0 || iIn+3>=t1 || !flatIsChain(a, t0, iIn) ) return 0;
  if( (zInner = flatSubqueryText(z, a, iIn+1, t1))==0 ) return 0;
  memset(&in, 0, sizeof(in));
  zX = sqlite3_mprintf("%.*s", a[iIn-1].i + a[iIn-1].n - a[t0].i, z + a[t0].i);
  if( zX==0 || parSelectParse(zInner, &in) ) goto done;
  if( (in.zWhy && (strstr(in.zWhy, "compound") || strstr(in.zWhy, "plain SELECT")
                   || strstr(in.zWhy, "WITH") || strstr(in.zWhy, "does not follow")))
   || !in.bFrom || in.bLimit || in.nCol!=1 || in.nAgg || in.nGroup || in.nWinCall
   || in.pFrom==0
   || !flatIsChain(in.aTok, in.aCol[0].span.iTok, in.aCol[0].span.iTokEnd) ){
    goto done;
  }
  zY = parSpanText(zInner, in.aCol[0].span);
  zFrom = parSpanText(zInner, in.from);
  if( zY==0 || zFrom==0 ) goto done;
  cX = flatColumnClass(db, zX, zOuterFrom, &bX);
  cY = flatColumnClass(db, zY, zFrom, &bY);
  if( cX==0 || cX!=cY || !bX || !bY ) goto done;
  for(i=0; i<in.pFrom->nSrc; i++){
    if( in.pFrom->aSrc[i].eType!=PAR_SRC_TABLE ) goto done;
  }
  if( flatRtrim(db, &in) ) goto done;
  {
    /* Uncorrelated: it prepares alone. */
    sqlite3_stmt *pStmt = 0;
    int bOk = sqlite3_prepare_v2(db, zInner, -1, &pStmt, 0)==SQLITE_OK;
    sqlite3_finalize(pStmt);
    if( !bOk ) goto done;
  }
  /* SELECT DISTINCT y AS _pk0 FROM ... (the rest of the subquery as it is) */
  sqlite3_str_appendf(pAdd, " CROSS JOIN (SELECT DISTINCT %s AS _pk0 %s) AS _ps%d", zY,
                      zInner + in.aTok[in.from.iTok-1].i, iD);
  sqlite3_str_appendf(pStr, "_ps%d._pk0 = %s", iD, zX);
  rc = 1;
done:
  parSelectClear(&in);
  sqlite3_free(zInner);
  sqlite3_free(zX);
  sqlite3_free(zY);
  sqlite3_free(zFrom);
  return rc;
}

/* ---- a term common to every branch of an OR -----------------------------
**
** WHERE (a = b AND x) OR (a = b AND y) OR ...  (TPC-H's Q19) hides its join
** key inside the OR; SQLite looks the inner table up once per branch
** (MULTI-INDEX OR).  Written  a = b AND ((x) OR (y) OR ...)  (AND and OR
** distribute in SQLite's three-valued logic, and a term that no branch
** lacks is true in whichever branch is), the key is a key.  Only terms
** without function calls or subqueries (nothing that can fail, so the
** order terms are evaluated in cannot matter), and kept only where the
** rows come in the same order: the plans are the same loops once the
** original's MULTI-INDEX OR of rowid lookups of one table (at most one
** row per outer row, found once) reads as that one lookup. */

/* Whether tokens [t0, t1) call no function and hold no subquery. */
static int flatPlainTerm(const char *z, const ParToken *a, int t0, int t1){
  int i;
  for(i=t0; i<t1; i++){
    if( a[i].eType==PT_ID && i+1<t1 && a[i+1].eType==PT_LP ){
      /* IN (...) and the like are operators, not calls */
      if( !parTokIs(z, &a[i], "IN") && !parTokIs(z, &a[i], "AND") && !parTokIs(z, &a[i], "OR")
       && !parTokIs(z, &a[i], "NOT") ){
        return 0;
      }
    }
    if( parTokIs(z, &a[i], "SELECT") ) return 0;
  }
  return 1;
}

/* The tokens of [t0, t1) written one space apart, to compare terms. */
static char *flatTermKey(const char *z, const ParToken *a, int t0, int t1){
  sqlite3_str *pStr = sqlite3_str_new(0);
  int i;
  for(i=t0; i<t1; i++) sqlite3_str_appendf(pStr, "%s%.*s", i>t0 ? " " : "", a[i].n, z + a[i].i);
  return sqlite3_str_finish(pStr);
}

#define FLAT_MAX_OR 8     /* branches */
#define FLAT_MAX_AND 24   /* terms in a branch */

/* The term [t0, t1) of SELECT p factored (above) into pStr; 0 when it is
** not an OR of parenthesized branches sharing a term. */
/* (db: unused; flatWhereTerms passes it.) */
static int flatOrTerm(sqlite3 *db, const ParSelect *p, int t0, int t1, sqlite3_str *pStr){
  const char *z = p->zSql;
  const ParToken *a = p->aTok;
  int aB0[FLAT_MAX_OR], aB1[FLAT_MAX_OR], nB = 0, i, j, k, d, rc = 0;
  int aT0[FLAT_MAX_OR][FLAT_MAX_AND], aT1[FLAT_MAX_OR][FLAT_MAX_AND], anT[FLAT_MAX_OR];
  char *azKey[FLAT_MAX_OR][FLAT_MAX_AND];
  int abCommon[FLAT_MAX_AND], nCommon = 0;
  /* Branches: "(...)" OR "(...)" ... */
  for(i=t0; i<t1; ){
    if( a[i].eType!=PT_LP || nB>=FLAT_MAX_OR ) return 0;
    for(j=i, d=0; j<t1; j++){
      if( a[j].eType==PT_LP ) d++;
      if( a[j].eType==PT_RP && --d==0 ) break;
    }
    if( j>=t1 ) return 0;
    aB0[nB] = i+1; aB1[nB] = j; nB++;
    i = j+1;
    if( i<t1 && !parTokIs(z, &a[i], "OR") ) return 0;
    if( i<t1 ) i++;
  }
  if( nB<2 || !flatPlainTerm(z, a, t0, t1) ) return 0;
  memset(azKey, 0, sizeof(azKey));
  for(k=0; k<nB; k++){
    int it = aB0[k], e0, e1;
    anT[k] = 0;
    while( flatNextTerm(z, a, &it, aB1[k], &e0, &e1) ){
      if( anT[k]>=FLAT_MAX_AND || e0>=e1 ) goto done;
      aT0[k][anT[k]] = e0; aT1[k][anT[k]] = e1;
      azKey[k][anT[k]] = flatTermKey(z, a, e0, e1);
      if( azKey[k][anT[k]]==0 ) goto done;
      anT[k]++;
    }
  }
  for(i=0; i<anT[0]; i++){
    abCommon[i] = 1;
    for(k=1; k<nB && abCommon[i]; k++){
      for(j=0; j<anT[k] && strcmp(azKey[k][j], azKey[0][i]); j++){}
      abCommon[i] = j<anT[k];
    }
    nCommon += abCommon[i];
  }
  if( nCommon==0 ) goto done;
  /* Every branch keeps a term of its own. */
  for(k=0; k<nB; k++){
    int nOwn = 0;
    for(j=0; j<anT[k]; j++){
      for(i=0; i<anT[0] && !(abCommon[i] && strcmp(azKey[0][i], azKey[k][j])==0); i++){}
      nOwn += i==anT[0];
    }
    if( nOwn==0 ) goto done;
  }
  for(i=0, j=0; i<anT[0]; i++){
    if( !abCommon[i] ) continue;
    sqlite3_str_appendf(pStr, "%s(%.*s)", j++ ? " AND " : "",
                        a[aT1[0][i]-1].i + a[aT1[0][i]-1].n - a[aT0[0][i]].i, z + a[aT0[0][i]].i);
  }
  sqlite3_str_appendall(pStr, " AND (");
  for(k=0; k<nB; k++){
    int n = 0;
    sqlite3_str_appendall(pStr, k ? " OR (" : "(");
    for(j=0; j<anT[k]; j++){
      for(i=0; i<anT[0] && !(abCommon[i] && strcmp(azKey[0][i], azKey[k][j])==0); i++){}
      if( i<anT[0] ) continue;
      sqlite3_str_appendf(pStr, "%s(%.*s)", n++ ? " AND " : "",
                          a[aT1[k][j]-1].i + a[aT1[k][j]-1].n - a[aT0[k][j]].i,
                          z + a[aT0[k][j]].i);
    }
    sqlite3_str_appendall(pStr, ")");
  }
  sqlite3_str_appendall(pStr, ")");
  rc = 1;
done:
  for(k=0; k<nB; k++){
    for(j=0; j<FLAT_MAX_AND; j++) sqlite3_free(azKey[k][j]);
  }
  return rc;
}

/* zPlan (flatPlan's lines) with each MULTI-INDEX OR whose branches are all
** the same rowid lookup written as that one lookup; NULL when out of
** memory. */
static char *flatPlanOrAsOne(const char *zPlan){
  sqlite3_str *pStr = sqlite3_str_new(0);
  const char *z = zPlan;
  while( *z ){
    const char *zEnd = strchr(z, '\n');
    int n = zEnd ? (int)(zEnd - z) : (int)strlen(z);
    const char *zNext = zEnd ? zEnd + 1 : z + n;
    if( n==14 && strncmp(z, "MULTI-INDEX OR", 14)==0 ){
      const char *zSearch = 0, *w = zNext;
      int nSearch = 0, bSame = 1, nBranch = 0;
      while( strncmp(w, "INDEX ", 6)==0 ){
        const char *zL2 = strchr(w, '\n'), *zS, *zE;
        if( zL2==0 ) break;
        zS = zL2 + 1;
        zE = strchr(zS, '\n');
        if( zE==0 || strncmp(zS, "SEARCH ", 7)!=0
         || strstr(zS, "USING INTEGER PRIMARY KEY (rowid=?)")==0
         || strstr(zS, "USING INTEGER PRIMARY KEY (rowid=?)")>zE ){
          bSame = 0;
          break;
        }
        if( zSearch && ((int)(zE - zS)!=nSearch || strncmp(zS, zSearch, nSearch)) ) bSame = 0;
        zSearch = zS;
        nSearch = (int)(zE - zS);
        nBranch++;
        w = zE + 1;
      }
      if( bSame && nBranch>0 ){
        sqlite3_str_appendf(pStr, "%.*s\n", nSearch, zSearch);
        z = w;
        continue;
      }
    }
    sqlite3_str_appendf(pStr, "%.*s\n", n, z);
    z = zNext;
  }
  return sqlite3_str_finish(pStr);
}

/* One rewrite of WHERE terms as derived tables (flatDerivedTerms with
** xTerm, tables named zPrefix<n>) of *pzCur (or zSql when NULL), when its
** text is LIKE zLike: kept (in *pzCur, mFlag added to *pmDone) where the
** loops over the SELECT's own tables stay SQLite's (flatLoopsThenDerived,
** bFirstScan) and GROUP BY sorts as before. */
static void flatDerivedStep(sqlite3 *db, const char *zSql, const ParParams *pParams,
                            char **pzCur, const char *zLike, FlatDerivedTerm xTerm,
                            const char *zPrefix, int bFirstScan, int mFlag, int *pmDone,
                            int *pRc){
  const char *zFrom = *pzCur ? *pzCur : zSql;
  char *zNew = sqlite3_strlike(zLike, zFrom, 0)==0
             ? flatDerivedTerms(db, zFrom, xTerm, zPrefix, pRc) : 0;
  if( zNew ){
    int bSort0 = 0, bSort1 = 0;
    char *zL0 = buildLoops(db, zFrom, pParams, &bSort0);
    char *zL1 = buildLoops(db, zNew, pParams, &bSort1);
    if( zL0 && zL1 && flatLoopsThenDerived(zL0, zL1, zPrefix, bFirstScan) && bSort0==bSort1 ){
      sqlite3_free(*pzCur);
      *pzCur = zNew;
      zNew = 0;
      *pmDone |= mFlag;
    }
    sqlite3_free(zNew);
    sqlite3_free(zL0);
    sqlite3_free(zL1);
  }
}

int parFlatten(sqlite3 *db, const char *zSql, const ParParams *pParams,
               char **pzFlat, int *pmDone, char **pzWhy){
  Flat f;
  char *zCur = 0, *zPlan0 = 0, *zPlan1 = 0, *zInl = 0;
  int nDepth;
  *pzFlat = 0;
  *pzWhy = 0;
  *pmDone = 0;
  memset(&f, 0, sizeof(f));
  f.db = db;
  if( sqlite3_strlike("%WITH%", zSql, 0)==0 ){
    /* Common table expressions where they are used, when SQLite's loops
    ** over the SELECT's own tables stay the same. */
    char *zWhyInl = 0;
    zInl = flatInlineWith(zSql, &zWhyInl, &f.rc);
    sqlite3_free(zWhyInl);
    if( zInl ){
      int bSort0 = 0, bSort1 = 0;
      char *zL0 = buildLoops(db, zSql, pParams, &bSort0);
      char *zL1 = buildLoops(db, zInl, pParams, &bSort1);
      if( zL0 && zL1 && strcmp(zL0, zL1)==0 && bSort0==bSort1 ){
        zSql = zInl;
        *pmDone |= PAR_FLAT_WITH;
      }else{
        sqlite3_free(zInl);
        zInl = 0;
      }
      sqlite3_free(zL0);
      sqlite3_free(zL1);
    }
    if( f.rc ) return f.rc;
  }
  /* A subquery to merge needs a second SELECT (or a WITH). */
  for(nDepth=(sqlite3_strnicmp(zSql, "WITH", 4)
              && sqlite3_strlike("%SELECT%SELECT%", zSql, 0)) ? FLAT_MAX_DEPTH : 0;
      nDepth<FLAT_MAX_DEPTH; nDepth++){
    char *zNext = flatOnce(&f, zCur ? zCur : zSql);
    if( zNext==0 ) break;
    sqlite3_free(zCur);
    zCur = zNext;
  }
  if( f.rc==SQLITE_OK && f.zWhy==0 && zCur ){
    /* Kept only where SQLite merges it too: the same loops. */
    sqlite3_stmt *pStmt = 0;
    int rc = sqlite3_prepare_v2(db, zCur, -1, &pStmt, 0);
    sqlite3_finalize(pStmt);
    if( rc==SQLITE_NOMEM ){
      f.rc = rc;
    }else if( rc!=SQLITE_OK ){
      flatWhy(&f, "a subquery in FROM whose merged text SQLite does not take: %s",
              sqlite3_errmsg(db));
    }else{
      zPlan0 = flatPlan(db, zSql, pParams);
      zPlan1 = flatPlan(db, zCur, pParams);
      if( zPlan0==0 || zPlan1==0 || strcmp(zPlan0, zPlan1)!=0 ){
        flatWhy(&f, "a subquery in FROM that SQLite does not flatten%s", "");
      }
    }
  }
  sqlite3_free(zPlan0);
  sqlite3_free(zPlan1);
  if( f.rc || f.zWhy ){
    sqlite3_free(zCur);
    zCur = 0;
  }
  if( zCur ) *pmDone |= PAR_FLAT_MERGED;
  if( f.rc==SQLITE_OK ){
    /* [NOT] EXISTS terms of the SELECT (merged or not) as [NOT] IN. */
    const char *zBefore = zCur ? zCur : zSql;
    char *zIn = sqlite3_strlike("%EXISTS%", zBefore, 0)==0
              ? flatWhereTerms(db, zBefore, flatExistsTerm, &f.rc) : 0;
    if( zIn ){
      /* Kept only where SQLite reads the SELECT's own tables the same way
      ** (an index on x would otherwise serve x IN (...)): the same loops,
      ** the subqueries' aside. */
      int bSort0 = 0, bSort1 = 0;
      char *zL0 = buildLoops(db, zBefore, pParams, &bSort0);
      char *zL1 = buildLoops(db, zIn, pParams, &bSort1);
      if( zL0 && zL1 && strcmp(zL0, zL1)==0 && bSort0==bSort1 ){
        sqlite3_free(zCur);
        zCur = zIn;
        zIn = 0;
        *pmDone |= PAR_FLAT_EXISTS;
      }
      sqlite3_free(zIn);
      sqlite3_free(zL0);
      sqlite3_free(zL1);
    }
  }
  if( f.rc==SQLITE_OK ){
    /* A term every branch of an OR has, out of the OR. */
    const char *zFrom = zCur ? zCur : zSql;
    char *zOr = sqlite3_strlike("%OR%", zFrom, 0)==0
              ? flatWhereTerms(db, zFrom, flatOrTerm, &f.rc) : 0;
    if( zOr ){
      char *zP0 = flatPlan(db, zFrom, pParams), *zP1 = flatPlan(db, zOr, pParams);
      char *zP0one = zP0 ? flatPlanOrAsOne(zP0) : 0;
      if( zP0one && zP1 && strcmp(zP0one, zP1)==0 ){
        sqlite3_free(zCur);
        zCur = zOr;
        zOr = 0;
        *pmDone |= PAR_FLAT_OR;
      }
      sqlite3_free(zOr);
      sqlite3_free(zP0);
      sqlite3_free(zP0one);
      sqlite3_free(zP1);
    }
  }
  if( f.rc==SQLITE_OK ){
    /* Correlated scalar subqueries of aggregates as derived tables. */
    flatDerivedStep(db, zSql, pParams, &zCur, "%SELECT%SELECT%", flatScalarAggTerm, "_pd", 0,
                    PAR_FLAT_DECOR, pmDone, &f.rc);
  }
  if( f.rc==SQLITE_OK ){
    /* x IN (SELECT y ...) as a join with its distinct values. */
    flatDerivedStep(db, zSql, pParams, &zCur, "%SELECT%IN%SELECT%", flatSemiJoinTerm, "_ps", 1,
                    PAR_FLAT_SEMI, pmDone, &f.rc);
  }
  if( zCur==0 && zInl ){
    zCur = zInl;
    zInl = 0;
  }
  sqlite3_free(zInl);
  *pzFlat = zCur;
  *pzWhy = f.zWhy;
  if( f.rc ){
    sqlite3_free(f.zWhy);
    *pzWhy = 0;
  }
  return f.rc;
}

/* ---- uncorrelated scalar subqueries, computed once ------------------------
**
** A comparison with a subquery that names nothing of the SELECT,
**
**   WHERE c_acctbal > (SELECT avg(c_acctbal) FROM customer WHERE ...)
**   HAVING sum(v) > (SELECT sum(v) * 0.001 FROM ...)
**
** is evaluated by SQLite once per statement (its plan: SCALAR SUBQUERY),
** by each statement that reads the rows: once per worker connection and
** range, in SQLite, on one thread.  It is written as a parameter instead,
** ":par_p<n>" after the SELECT's own, whose value exec.c computes before
** each run through the subquery's own plan (the kernels where it has one)
** and binds to every statement the plan makes.  The same value: the
** subquery's first row's one column, NULL without rows, at the snapshot
** of the scan.  The same comparison: SQLite compares with a subquery's
** value under the affinity of its one result expression and no collation
** (expr.c sqlite3ExprAffinity, sqlite3ExprCollSeq), and a parameter has
** neither; so only subqueries whose result has no affinity are taken: a
** function call (not likely(), unlikely(), likelihood(), which pass their
** argument's on) or an expression whose top operator gives a number,
** without COLLATE or CAST anywhere in it.  Where SQLite would never
** evaluate it (no row reaches the comparison), computing it anyway changes
** nothing but time, unless it fails: then the SELECT runs natively
** (exec.c). */

/* Does subquery text zInner (no parentheses) return one value of no
** affinity, naming nothing outside itself? */
static int flatBindable(sqlite3 *db, const char *zInner, int *pRc){
  static const char *azPass[] = { "likely", "unlikely", "likelihood" };
  ParSelect sel;
  sqlite3_stmt *pStmt = 0;
  int bOk, t0, t1, i, rc;
  rc = sqlite3_prepare_v2(db, zInner, -1, &pStmt, 0);
  bOk = rc==SQLITE_OK && pStmt && sqlite3_column_count(pStmt)==1
     && sqlite3_column_decltype(pStmt, 0)==0 && sqlite3_stmt_readonly(pStmt);
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_NOMEM ){ *pRc = rc; return 0; }
  if( !bOk ) return 0;
  if( (*pRc = parSelectParse(zInner, &sel))!=SQLITE_OK ) return 0;
  /* (Whatever else the parser says of it: SQLite runs it, or its plan.) */
  bOk = sel.nCol==1 && sel.bFrom && !sel.bStar
     && !(sel.zWhy && (strstr(sel.zWhy, "compound") || strstr(sel.zWhy, "plain SELECT")));
  if( bOk ){
    const ParToken *a = sel.aTok;
    t0 = sel.aCol[0].span.iTok;
    t1 = sel.aCol[0].span.iTokEnd;
    buildStripParens(a, &t0, &t1);
    for(i=t0; i<t1 && bOk; i++){
      bOk = !parTokIs(zInner, &a[i], "COLLATE") && !parTokIs(zInner, &a[i], "CAST")
         && !parTokIs(zInner, &a[i], "SELECT");
    }
    if( bOk && !flatNumeric(zInner, a, t0, t1) ){
      /* name ( ... ) and nothing after it */
      int d = 0;
      bOk = t1-t0>=3 && a[t0].eType==PT_ID && a[t0+1].eType==PT_LP;
      for(i=t0+1; bOk && i<t1; i++){
        if( a[i].eType==PT_LP ) d++;
        if( a[i].eType==PT_RP && --d==0 ) break;
      }
      bOk = bOk && i==t1-1;
      for(i=0; bOk && i<(int)(sizeof(azPass)/sizeof(azPass[0])); i++){
        bOk = !parTokIs(zInner, &a[t0], azPass[i]);
      }
    }
  }
  parSelectClear(&sel);
  return bOk;
}

char *parBindScalars(sqlite3 *db, const char *zSql, int nParam, int *pnBind, char **azBind,
                     int *pRc){
  ParSelect sel;
  sqlite3_str *pStr;
  char *zOut = 0;
  int iPrev = 0, c;
  *pnBind = 0;
  if( sqlite3_strlike("%SELECT%SELECT%", zSql, 0)!=0 ) return 0;
  *pRc = parSelectParse(zSql, &sel);
  if( *pRc || !sel.bFrom || (!sel.bWhere && !sel.bHaving) || sel.pFrom==0 ){
    parSelectClear(&sel);
    return 0;
  }
  pStr = sqlite3_str_new(db);
  for(c=0; c<2 && *pRc==SQLITE_OK; c++){
    /* WHERE, then HAVING: each "(SELECT ...)" beside a comparison. */
    const ParToken *a = sel.aTok;
    int i0 = c==0 ? (sel.bWhere ? sel.where.iTok : 0) : (sel.bHaving ? sel.having.span.iTok : 0);
    int i1 = c==0 ? (sel.bWhere ? sel.where.iTokEnd : 0)
                  : (sel.bHaving ? sel.having.span.iTokEnd : 0);
    int i;
    for(i=i0; i<i1 && *pRc==SQLITE_OK; i++){
      int j, d = 0;
      char *zInner;
      if( a[i].eType!=PT_LP || i+1>=i1 || !parTokIs(zSql, &a[i+1], "SELECT") ) continue;
      for(j=i; j<i1; j++){
        if( a[j].eType==PT_LP ) d++;
        if( a[j].eType==PT_RP && --d==0 ) break;
      }
      if( j>=i1 ) break;
      if( *pnBind<PAR_MAX_BIND
       && ((i>i0 && flatIsCompare(zSql, &a[i-1])) || (j+1<i1 && flatIsCompare(zSql, &a[j+1])))
       && (zInner = flatSubqueryText(zSql, a, i, j+1))!=0 ){
        if( flatBindable(db, zInner, pRc) ){
          azBind[*pnBind] = zInner;
          ++*pnBind;
          sqlite3_str_appendf(pStr, "%.*s:par_p%d ", a[i].i - iPrev, zSql + iPrev,
                              nParam + *pnBind);
          iPrev = a[j].i + a[j].n;
        }else{
          sqlite3_free(zInner);
        }
      }
      i = j;      /* (not into the subquery) */
    }
  }
  if( *pnBind>0 && *pRc==SQLITE_OK ){
    sqlite3_str_appendall(pStr, zSql + iPrev);
    zOut = sqlite3_str_finish(pStr);
    if( zOut==0 ) *pRc = SQLITE_NOMEM;
  }else{
    sqlite3_free(sqlite3_str_finish(pStr));
  }
  if( zOut==0 ){
    while( *pnBind>0 ) sqlite3_free(azBind[--*pnBind]);
  }
  parSelectClear(&sel);
  return zOut;
}
