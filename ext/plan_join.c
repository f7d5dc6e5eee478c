/*
** plan_join.c: planning the join operator (ParPlanJoin, plan.h): a FROM
** clause that joins tables by equalities is read table by table, each by
** a scan of its own, and joined by the kernels (op_join.c runs it).
**
**   SELECT d.grp, count(*), sum(f.v) FROM fact f JOIN dim d ON d.id = f.k
**     GROUP BY d.grp;
**   -> scan f: SELECT f.k, f.v FROM "fact" AS "f"
**      scan d: SELECT d.id, d.grp FROM "dim" AS "d"
**      join:   d built on d.id, probed with f.k, in f's order
**
** What is planned here, and why each rule holds:
**  - Sources: tables only (rowid tables: their scans read in rowid order),
**    joined by INNER, CROSS, NATURAL, "," or LEFT joins.  For an inner
**    join, ON terms are WHERE terms: every term is an AND-term of one
**    list.  A LEFT JOIN's ON terms are its keys (to tables on its left) and
**    filters of its own table (pushed into its scan: they decide which of
**    its rows can match); a term there that filters the left side, and any
**    WHERE term on a NULL-padded table, leave the join to SQLite.
**  - A term "a.x = b.y" between plain columns of two tables is a join key.
**    SQLite compares them with the collation of the left operand's column
**    (expr.c sqlite3BinaryCompareCollSeq) and, when either column has
**    INTEGER, REAL or NUMERIC affinity, after numeric affinity applied to
**    TEXT on both sides (sqlite3CompareAffinity of two columns: NUMERIC, or
**    none at all: TEXT against a column of no affinity converts nothing).
**    USING and NATURAL columns compare the leftmost table's column having
**    the name with the right table's (select.c sqlite3ProcessJoin).
**  - A term that names one table goes into that table's scan; a constant
**    term into the first table's; one that names several tables (other
**    than a key) leaves the join to SQLite.  Each extraction column must
**    name one table (or none).
**  - Order: the tables are joined in the order of SQLite's loops (its
**    query plan), the first probed in the order it is read, each next one
**    built and probed with the rows joined so far; a probe keeps its rows'
**    order and gives a row's matches in the build table's reading order.
**    So the joined rows come in SQLite's nested-loop order when each loop
**    visits rows as the scans read them: the outer loop as its scan does
**    (the same plan line), and each inner loop the rows matching one outer
**    row in rowid order (a rowid lookup, a full scan, a lookup through an
**    index of the key's one column: joinLoopKeyIndex) or, when SQLite's
**    loop gives no such order it can be sure of (an index: its plan line
**    does not tell an IN list or further columns apart), the matches are
**    unique (op_join.c checks at run time).  Only results that depend on
**    the order need this (ParPlanJoin.bOrderMatters).
** Anything else leaves the join to SQLite, as before: the extraction
** query runs on each worker over rowid ranges of the first table, and
** par_explain says why (ParPlan.zJoinWhy).
*/
#include "parext.h"
#include "planint.h"

#include <string.h>

/* The planner's state for one join. */
typedef struct JoinBuild {
  ParBuild *pB;
  int nTab;
  const ParFromSrc *apSrc[PAR_JOIN_MAX_TAB];  /* in FROM order */
  char *azSrc[PAR_JOIN_MAX_TAB];   /* each as a FROM clause of its own */
  char *azSchema[PAR_JOIN_MAX_TAB];/* the schema SQLite finds each in */
  int aPos[PAR_JOIN_MAX_TAB];      /* FROM order -> join order */
  int aOrd[PAR_JOIN_MAX_TAB];      /* join order -> FROM order */
  char *azLoop[PAR_JOIN_MAX_TAB];  /* SQLite's loop line, FROM order */
  int nCol[PAR_JOIN_MAX_TAB];      /* scan columns so far, FROM order */
  char **aazCol[PAR_JOIN_MAX_TAB];
  sqlite3_str *apWhere[PAR_JOIN_MAX_TAB];
  int nWhere[PAR_JOIN_MAX_TAB];
  int aLeft[PAR_JOIN_MAX_TAB];     /* FROM order: joined by LEFT JOIN */
  int aNullable[PAR_JOIN_MAX_TAB]; /* ...or after one: its columns can be
                                   ** NULL padding in the joined rows */
  ParPlan *apSub[PAR_JOIN_MAX_TAB];/* FROM order: a subquery's own plan */
  char *azInner[PAR_JOIN_MAX_TAB]; /* ...and its text */
  int iOn;                         /* the LEFT JOIN whose ON terms are being
                                   ** read, or -1 */
  int nResid;                      /* terms over the joined rows (joinResid) */
  char *azResid[PAR_JOIN_MAX_RESID];  /* each rewritten for par_rows */
  sqlite3_str *pResidText;         /* the terms as written */
  sqlite3_str *pExpose;            /* ", _p..N AS name": columns of the joined
                                   ** rows under the names a term with a
                                   ** subquery reads (joinResidScoped) */
  sqlite3_str *pCalc;              /* columns over several tables (joinCalc): */
  sqlite3_str *pCalcText;          /* the SELECT over par_rows, the columns */
  int nResidCol;                   /* the columns they read: */
  int aResidTab[4*PAR_JOIN_MAX_RESID];   /* table (FROM order) */
  char *azResidCol[4*PAR_JOIN_MAX_RESID];/* expression */
  int nEdge;
  struct JoinEdge {
    int iOn;                       /* the LEFT JOIN source whose ON it is
                                   ** part of, or -1 */
    int iTabL, iTabR;              /* FROM order; L the left operand's */
    char *zColL, *zColR;           /* the operands' text */
    int eColl, bNumeric;
    char *zText;
  } aEdge[64];
} JoinBuild;

static int joinWhy(JoinBuild *pJ, const char *zFmt, const char *zArg){
  ParPlan *pPlan = pJ->pB->pPlan;
  if( pPlan->zJoinWhy==0 ){
    pPlan->zJoinWhy = sqlite3_mprintf(zFmt, zArg);
    if( pPlan->zJoinWhy==0 ) buildNoMem(pJ->pB);
  }
  return 1;
}

/* Does zSql prepare on db? */
static int joinPrepares(sqlite3 *db, const char *zSql){
  sqlite3_stmt *pStmt = 0;
  int rc;
  if( zSql==0 ) return 0;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_finalize(pStmt);
  return rc==SQLITE_OK;
}

/* The table (FROM order) expression zExpr names: -1 when it names none
** (a constant: the caller picks), -2 when it names columns of several or
** of none alone.  bTerm: zExpr is a WHERE term rather than a value. */
static int joinExprTab(JoinBuild *pJ, const char *zExpr, int bTerm){
  sqlite3 *db = pJ->pB->db;
  char *zSql;
  int i, iTab = -2, ok, bDqs = 0;
  /* With double-quoted strings allowed (SQLite's default), "w" prepares
  ** as a string wherever no column w is in scope: off while asking, so
  ** that "w" is a column or nothing (an expression that uses one as a
  ** string then names no table: SQLite joins). */
  sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, -1, &bDqs);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int*)0);
  zSql = sqlite3_mprintf(bTerm ? "SELECT 1 WHERE (%s)" : "SELECT (%s)", zExpr);
  ok = joinPrepares(db, zSql);
  sqlite3_free(zSql);
  if( ok ){
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, bDqs, (int*)0);
    return -1;
  }
  for(i=0; i<pJ->nTab; i++){
    zSql = sqlite3_mprintf(bTerm ? "SELECT 1 FROM %s WHERE (%s)" : "SELECT (%s) FROM %s",
                           bTerm ? pJ->azSrc[i] : zExpr, bTerm ? zExpr : pJ->azSrc[i]);
    if( zSql==0 ){ buildNoMem(pJ->pB); iTab = -2; break; }
    ok = joinPrepares(db, zSql);
    sqlite3_free(zSql);
    if( ok ){
      if( iTab>=0 ){ iTab = -2; break; }   /* a USING column, say: both have it */
      iTab = i;
    }
  }
  sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, bDqs, (int*)0);
  return iTab;
}

/* Scan column of table iTab (FROM order) for expression zExpr (copied),
** added when new; -1 when out of memory. */
static int joinScanCol(JoinBuild *pJ, int iTab, const char *zExpr){
  int i, n = pJ->nCol[iTab];
  char **az;
  for(i=0; i<n; i++) if( strcmp(pJ->aazCol[iTab][i], zExpr)==0 ) return i;
  az = sqlite3_realloc64(pJ->aazCol[iTab], sizeof(char*)*(n+1));
  if( az==0 ){ buildNoMem(pJ->pB); return -1; }
  pJ->aazCol[iTab] = az;
  if( (az[n] = sqlite3_mprintf("%s", zExpr))==0 ){ buildNoMem(pJ->pB); return -1; }
  pJ->nCol[iTab] = n+1;
  return n;
}

/* Is tokens [t0, t1) a plain column reference: name, table.name or
** schema.table.name? */
static int joinPlainColumn(const ParToken *a, int t0, int t1){
  int i, n = t1-t0;
  if( n!=1 && n!=3 && n!=5 ) return 0;
  for(i=t0; i<t1; i++){
    int bName = ((i-t0)&1)==0;
    if( bName && a[i].eType!=PT_ID && a[i].eType!=PT_QID ) return 0;
    if( !bName && a[i].eType!=PT_DOT ) return 0;
  }
  return 1;
}

/* The result column of subquery source iTab (FROM order) that expression
** zExpr reads, when zExpr is a plain reference to one (name, alias.name);
** else -1. */
static int joinSubCol(JoinBuild *pJ, int iTab, const char *zExpr){
  sqlite3 *db = pJ->pB->db;
  sqlite3_stmt *pOuter = 0, *pInner = 0;
  char *zSql;
  ParToken *a;
  int nTok, i, iCol = -1;
  a = parTokenize(zExpr, &nTok);
  if( a==0 ){ buildNoMem(pJ->pB); return -1; }
  for(i=0; i<nTok && a[i].eType!=PT_EOF; i++){}
  if( i==0 || !joinPlainColumn(a, 0, i) ){
    sqlite3_free(a);
    return -1;
  }
  sqlite3_free(a);
  zSql = sqlite3_mprintf("SELECT %s FROM %s", zExpr, pJ->azSrc[iTab]);
  if( zSql && sqlite3_prepare_v2(db, zSql, -1, &pOuter, 0)==SQLITE_OK
   && sqlite3_prepare_v2(db, pJ->azInner[iTab], -1, &pInner, 0)==SQLITE_OK ){
    const char *zName = sqlite3_column_name(pOuter, 0);
    int n = sqlite3_column_count(pInner);
    for(i=0; zName && i<n; i++){
      const char *z = sqlite3_column_name(pInner, i);
      if( z && sqlite3_stricmp(z, zName)==0 ){
        if( iCol>=0 ){ iCol = -1; break; }    /* two columns of the name */
        iCol = i;
      }
    }
  }
  if( zSql==0 ) buildNoMem(pJ->pB);
  sqlite3_finalize(pOuter);
  sqlite3_finalize(pInner);
  sqlite3_free(zSql);
  return iCol;
}

/* What the result column of subquery source iTab that zCol reads is: 0 a
** plain column of a table (its affinity and collation are that column's,
** as SQLite gives a subquery's column: select.c
** sqlite3SubqueryColType), 1 an aggregate call without COLLATE (no
** affinity, BINARY), -1 anything else or not a column of it. */
static int joinSubColKind(JoinBuild *pJ, int iTab, const char *zCol){
  int iCol = joinSubCol(pJ, iTab, zCol);
  return iCol<0 ? -1 : buildSubqueryColKind(pJ->azInner[iTab], iCol);
}

/* The affinity (a letter of PAR_ROWS_AFF) and collation (PAR_COLL_*, or
** PAR_COLL_UNKNOWN for another) of plain column zCol of table iTab (FROM
** order) as declared.  Returns 0 when it is not a table's column read
** straight. */
static int joinColumnMeta(JoinBuild *pJ, int iTab, const char *zCol, char *pcAff, int *peColl){
  sqlite3 *db = pJ->pB->db;
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  const char *zDb, *zTab, *zOrig, *zType = 0, *zColl = 0;
  int ok = 0;
  if( pJ->apSub[iTab] ){
    /* A subquery's column: an aggregate's has no affinity and no
    ** collation; a plain column's are its table's (below). */
    int e = joinSubColKind(pJ, iTab, zCol);
    if( e>=1 ){
      *pcAff = 'n';
      *peColl = PAR_COLL_BINARY;
      return 1;
    }
    if( e!=0 ) return 0;
  }
  zSql = sqlite3_mprintf("SELECT %s FROM %s", zCol, pJ->azSrc[iTab]);
  if( zSql==0 ) buildNoMem(pJ->pB);
  if( zSql && sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
    zDb = sqlite3_column_database_name(pStmt, 0);
    zTab = sqlite3_column_table_name(pStmt, 0);
    zOrig = sqlite3_column_origin_name(pStmt, 0);
    if( zDb && zTab && zOrig
     && sqlite3_table_column_metadata(db, zDb, zTab, zOrig, &zType, &zColl, 0, 0, 0)==SQLITE_OK ){
      /* The rowid: INTEGER affinity, whatever the table declares. */
      *pcAff = sqlite3_stricmp(zOrig, "rowid")==0 && zType==0 ? 'i' : parAffinityLetter(zType);
      *peColl = zColl ? parCollFromName(zColl) : PAR_COLL_BINARY;
      if( *peColl<0 ) *peColl = PAR_COLL_UNKNOWN;
      ok = 1;
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return ok;
}

/* Of a join key's column: *pbNumeric (INTEGER, REAL or NUMERIC affinity)
** and *peColl (joinColumnMeta). */
static int joinColumnInfo(JoinBuild *pJ, int iTab, const char *zCol, int *pbNumeric,
                          int *peColl){
  char c = 0;
  if( !joinColumnMeta(pJ, iTab, zCol, &c, peColl) ) return 0;
  *pbNumeric = c=='i' || c=='r' || c=='u';
  return 1;
}

/* Add the key "zL = zR" between tables iL and iR (FROM order). */
static int joinAddEdge(JoinBuild *pJ, int iL, const char *zL, int iR, const char *zR,
                       const char *zText){
  struct JoinEdge *e;
  int bNumL, bNumR, eCollL, eCollR;
  if( pJ->nEdge>=(int)(sizeof(pJ->aEdge)/sizeof(pJ->aEdge[0])) ){
    return joinWhy(pJ, "more join keys than the join operator takes%s", "");
  }
  if( !joinColumnInfo(pJ, iL, zL, &bNumL, &eCollL)
   || !joinColumnInfo(pJ, iR, zR, &bNumR, &eCollR) ){
    return joinWhy(pJ, "a join key that is not a table's column: %s", zText);
  }
  eCollL = buildKnownColl(eCollL, parCollReplaced(pJ->pB->db));
  if( eCollL==PAR_COLL_UNKNOWN ){
    return joinWhy(pJ, "a join key under a collation the kernels do not know: %s", zText);
  }
  e = &pJ->aEdge[pJ->nEdge++];
  memset(e, 0, sizeof(*e));
  e->iOn = pJ->iOn;
  e->iTabL = iL;
  e->iTabR = iR;
  e->zColL = sqlite3_mprintf("%s", zL);
  e->zColR = sqlite3_mprintf("%s", zR);
  e->zText = sqlite3_mprintf("%s", zText);
  e->eColl = eCollL;
  e->bNumeric = bNumL || bNumR;
  if( e->zColL==0 || e->zColR==0 || e->zText==0 ){ buildNoMem(pJ->pB); return 1; }
  return 0;
}

/* The letters of PAR_ROWS_AFF and PAR_ROWS_COLL for the column zCol of
** table iTab (FROM order) as the joined rows hold it, so that it compares
** in the residual terms as the table's column does; 0 when not known. */
static int joinColumnLetters(JoinBuild *pJ, int iTab, const char *zCol, char *pcAff,
                             char *pcColl){
  int e = PAR_COLL_UNKNOWN;
  if( !joinColumnMeta(pJ, iTab, zCol, pcAff, &e) ) return 0;
  e = buildKnownColl(e, parCollReplaced(pJ->pB->db));
  if( e<0 ) return 0;
  *pcColl = PAR_ROWS_COLL[e];
  return 1;
}

/* The column of the joined rows, after the extraction's, that holds
** column zRef of table iTab (FROM order) for the terms and expressions over
** several tables: added (a copy) when new; -1 when the join cannot be
** planned (too many, or out of memory). */
static int joinResidColumn(JoinBuild *pJ, int iTab, const char *zRef){
  int k;
  for(k=0; k<pJ->nResidCol; k++){
    if( pJ->aResidTab[k]==iTab && sqlite3_stricmp(pJ->azResidCol[k], zRef)==0 ) return k;
  }
  if( k>=(int)(sizeof(pJ->aResidTab)/sizeof(pJ->aResidTab[0])) ){
    joinWhy(pJ, "more columns in terms and expressions over several tables than the join "
            "operator takes%s", "");
    return -1;
  }
  if( (pJ->azResidCol[k] = sqlite3_mprintf("%s", zRef))==0 ){
    buildNoMem(pJ->pB);
    return -1;
  }
  pJ->aResidTab[k] = iTab;
  pJ->nResidCol++;
  return k;
}

/* Append to pStr the expression of tokens [t0, t1) of z with each column
** reference written as the column of the joined rows that holds it (added
** to azResidCol when new), under its table's affinity and collation.  A
** reference to a table a LEFT JOIN pads is refused unless bPadded (the
** joined rows hold NULL there, as SQLite's loops do).  Returns 1 when
** the join cannot be planned (zWhat: what the expression is, for the
** reason). */
static int joinRewriteRefs(JoinBuild *pJ, const char *z, const ParToken *a, int t0, int t1,
                           int bPadded, const char *zWhat, sqlite3_str *pStr){
  int i, k, iPrev = a[t0].i;
  for(i=t0; i<t1; i++){
    int j = i, iTab;
    char *zRef;
    char cAff = 0, cColl = 0;
    if( a[i].eType==PT_ID && i+1<t1 && a[i+1].eType==PT_LP ) continue;   /* a function */
    if( (a[i].eType!=PT_ID && a[i].eType!=PT_QID)
     || (i>t0 && (a[i-1].eType==PT_DOT || parTokIs(z, &a[i-1], "COLLATE")
                  || parTokIs(z, &a[i-1], "AS"))) ){
      continue;
    }
    while( j+2<t1 && a[j+1].eType==PT_DOT && (a[j+2].eType==PT_ID || a[j+2].eType==PT_QID) ){
      j += 2;
    }
    zRef = sqlite3_mprintf("%.*s", a[j].i + a[j].n - a[i].i, z + a[i].i);
    if( zRef==0 ){ buildNoMem(pJ->pB); return 1; }
    iTab = joinExprTab(pJ, zRef, 0);
    if( iTab==-1 || (iTab==-2 && a[i].eType==PT_ID && j==i
                     && sqlite3_keyword_check(z + a[i].i, a[i].n)) ){
      sqlite3_free(zRef);        /* a keyword, TRUE, a constant name */
      i = j;
      continue;
    }
    if( iTab<0 || (pJ->aNullable[iTab] && !bPadded)
     || !joinColumnLetters(pJ, iTab, zRef, &cAff, &cColl) ){
      sqlite3_free(zRef);
      return joinWhy(pJ, iTab>=0 && pJ->aNullable[iTab] && !bPadded
                     ? "a term on the NULL-padded side of a LEFT JOIN: %s"
                     : "%s whose columns are not known", zWhat);
    }
    k = joinResidColumn(pJ, iTab, zRef);
    sqlite3_free(zRef);
    if( k<0 ) return 1;
    /* The joined rows hold the extraction's columns, then these. */
    sqlite3_str_appendf(pStr, "%.*s_p%c%c%d", a[i].i - iPrev, z + iPrev, cAff, cColl,
                        pJ->pB->pPlan->nExtractCol + k);
    iPrev = a[j].i + a[j].n;
    i = j;
  }
  sqlite3_str_appendf(pStr, "%.*s", a[t1-1].i + a[t1-1].n - iPrev, z + iPrev);
  return 0;
}

/* A term, tokens [t0, t1) (text zTerm), that names columns of several
** tables and is no key: SQLite evaluates it over the joined rows (the
** join operator then filters them, keeping their order, as the loop that
** reaches its last table tests it), with each column reference a column
** of the joined rows under its table's affinity and collation.  Only for
** terms of WHERE and of inner joins' ON, over tables no LEFT JOIN pads.
** Returns 1 when the join cannot be planned. */
static int joinResidScoped(JoinBuild *pJ, int t0, int t1, const char *zTerm, int bPadded);

static int joinResid(JoinBuild *pJ, int t0, int t1, const char *zTerm, int bPadded){
  ParSelect *pSel = pJ->pB->pSel;
  sqlite3_str *pStr;
  char *zWhat;
  int rc;
  if( pJ->nResid>=PAR_JOIN_MAX_RESID ){
    return joinWhy(pJ, "more terms over several tables than the join operator takes%s", "");
  }
  if( sqlite3_strlike("%(%SELECT%", zTerm, 0)==0 ){
    /* (Its names inside the subquery are the subquery's own.) */
    return joinResidScoped(pJ, t0, t1, zTerm, bPadded);
  }
  zWhat = sqlite3_mprintf("a term over several tables: %s", zTerm);
  if( zWhat==0 ){ buildNoMem(pJ->pB); return 1; }
  pStr = sqlite3_str_new(0);
  rc = joinRewriteRefs(pJ, pSel->zSql, pSel->aTok, t0, t1, bPadded, zWhat, pStr);
  sqlite3_free(zWhat);
  if( rc ){
    sqlite3_free(sqlite3_str_finish(pStr));
    return 1;
  }
  pJ->azResid[pJ->nResid] = sqlite3_str_finish(pStr);
  if( pJ->azResid[pJ->nResid]==0 ){ buildNoMem(pJ->pB); return 1; }
  pJ->nResid++;
  if( pJ->pResidText==0 ) pJ->pResidText = sqlite3_str_new(0);
  sqlite3_str_appendf(pJ->pResidText, "%s%s", pJ->nResid>1 ? " AND " : "", zTerm);
  return 0;
}

/* A term over several tables that holds a subquery (TPC-H's Q2: ps_supplycost
** = (SELECT min(ps_supplycost) FROM partsupp, ... WHERE p_partkey =
** ps_partkey ...)): kept as written, and SQLite evaluates it over the joined
** rows with each column of the SELECT's tables it names, unqualified, a
** column of the joined rows under that name (ParPlanJoin.zResid: "SELECT
** _prow FROM (SELECT rowid AS _prow, *, _p..N AS name ... FROM par_rows)"),
** under its table's affinity and collation.  Inside the subquery SQLite
** finds a name in the subquery's own tables first, as in the SELECT, and
** else the joined rows' column: the name the SELECT's table has.  Refused:
** a name qualified by a table of the SELECT (the joined rows have no such
** table), a column of the SELECT's tables named ambiguously, names that
** clash with the joined rows' own. */
static int joinResidScoped(JoinBuild *pJ, int t0, int t1, const char *zTerm, int bPadded){
  ParSelect *pSel = pJ->pB->pSel;
  const char *z = pSel->zSql;
  const ParToken *a = pSel->aTok;
  int i, k;
  for(i=t0; i<t1; i++){
    char *zRef;
    int iTab;
    char cAff = 0, cColl = 0;
    if( a[i].eType!=PT_ID && a[i].eType!=PT_QID ) continue;
    if( i+1<t1 && a[i+1].eType==PT_LP ) continue;                    /* a function */
    if( i>t0 && (parTokIs(z, &a[i-1], "COLLATE") || parTokIs(z, &a[i-1], "AS")) ) continue;
    if( (i+1<t1 && a[i+1].eType==PT_DOT) || (i>t0 && a[i-1].eType==PT_DOT) ){
      /* A qualified name: not one qualified by a table of the SELECT. */
      int m;
      if( i+1<t1 && a[i+1].eType==PT_DOT ){
        char *zQ = parDequote(z + a[i].i, a[i].n);
        if( zQ==0 ){ buildNoMem(pJ->pB); return 1; }
        for(m=0; m<pJ->nTab; m++){
          const ParFromSrc *pS = pJ->apSrc[m];
          if( sqlite3_stricmp(zQ, pS->zAlias ? pS->zAlias : pS->zName)==0 ) break;
        }
        sqlite3_free(zQ);
        if( m<pJ->nTab ){
          return joinWhy(pJ, "a term with a subquery naming a table of the SELECT: %s", zTerm);
        }
      }
      continue;
    }
    zRef = parDequote(z + a[i].i, a[i].n);
    if( zRef==0 ){ buildNoMem(pJ->pB); return 1; }
    iTab = joinExprTab(pJ, zRef, 0);
    if( iTab<0 ){
      /* Not a column of the SELECT's tables (a keyword, a name of the
      ** subquery's own), or ambiguous there: SQLite finds it inside. */
      sqlite3_free(zRef);
      continue;
    }
    if( (pJ->aNullable[iTab] && !bPadded) || !joinColumnLetters(pJ, iTab, zRef, &cAff, &cColl)
     || sqlite3_strnicmp(zRef, "_p", 2)==0 || sqlite3_stricmp(zRef, "rowid")==0 ){
      sqlite3_free(zRef);
      return joinWhy(pJ, "a term with a subquery over columns not known: %s", zTerm);
    }
    k = joinResidColumn(pJ, iTab, zRef);
    if( k<0 ){ sqlite3_free(zRef); return 1; }
    if( pJ->pExpose==0 ) pJ->pExpose = sqlite3_str_new(0);
    {
      char *zAs = sqlite3_mprintf(" AS \"%w\"", zRef);
      const char *zHave = sqlite3_str_value(pJ->pExpose);
      if( zAs==0 ){ sqlite3_free(zRef); buildNoMem(pJ->pB); return 1; }
      if( zHave==0 || strstr(zHave, zAs)==0 ){
        sqlite3_str_appendf(pJ->pExpose, ", _p%c%c%d%s", cAff, cColl,
                            pJ->pB->pPlan->nExtractCol + k, zAs);
      }
      sqlite3_free(zAs);
    }
    sqlite3_free(zRef);
  }
  pJ->azResid[pJ->nResid] = sqlite3_mprintf("%s", zTerm);
  if( pJ->azResid[pJ->nResid]==0 ){ buildNoMem(pJ->pB); return 1; }
  pJ->nResid++;
  if( pJ->pResidText==0 ) pJ->pResidText = sqlite3_str_new(0);
  sqlite3_str_appendf(pJ->pResidText, "%s%s", pJ->nResid>1 ? " AND " : "", zTerm);
  return 0;
}

/* An extraction column zExpr that names columns of several tables:
** SQLite computes it over the joined rows (after the filter, in their
** order), as its loops compute it where the last of those tables is
** reached; NULL padding included.  Appends "expr" rewritten for par_rows
** to pCalc.  Returns 1 when the join cannot be planned. */
static int joinCalc(JoinBuild *pJ, const char *zExpr, sqlite3_str *pCalc){
  int nTok, rc, i;
  ParToken *a;
  char *zWhat;
  if( sqlite3_strlike("%(%SELECT%", zExpr, 0)==0 ){
    return joinWhy(pJ, "a column that names several tables with a subquery: %s", zExpr);
  }
  a = parTokenize(zExpr, &nTok);
  zWhat = sqlite3_mprintf("a column over several tables: %s", zExpr);
  if( a==0 || zWhat==0 ){
    sqlite3_free(a);
    sqlite3_free(zWhat);
    buildNoMem(pJ->pB);
    return 1;
  }
  for(i=0; i<nTok && a[i].eType!=PT_EOF; i++){}
  rc = i==0 ? joinWhy(pJ, "an empty column%s", "")
             : joinRewriteRefs(pJ, zExpr, a, 0, i, 1, zWhat, pCalc);
  sqlite3_free(zWhat);
  sqlite3_free(a);
  return rc;
}

/* One AND-term, tokens [t0, t1) of the SELECT: a key, or a filter of one
** table's scan.  Returns 1 when the join cannot be planned. */
static int joinTerm(JoinBuild *pJ, int t0, int t1){
  ParSelect *pSel = pJ->pB->pSel;
  const ParToken *a = pSel->aTok;
  ParSpan s;
  char *zTerm;
  int i, iTab, rc = 0;
  buildStripParens(a, &t0, &t1);
  if( t0>=t1 ) return joinWhy(pJ, "an empty term%s", "");
  s.iTok = t0; s.iTokEnd = t1;
  s.iStart = a[t0].i; s.iEnd = a[t1-1].i + a[t1-1].n;
  zTerm = parSpanText(pSel->zSql, s);
  if( zTerm==0 ){ buildNoMem(pJ->pB); return 1; }
  for(i=t0+1; i<t1-1; i++){
    if( a[i].eType==PT_OP && (a[i].n==1 || a[i].n==2)
     && strncmp(pSel->zSql+a[i].i, "==", a[i].n)==0
     && joinPlainColumn(a, t0, i) && joinPlainColumn(a, i+1, t1) ){
      char *zL = sqlite3_mprintf("%.*s", a[i-1].i+a[i-1].n-a[t0].i, pSel->zSql+a[t0].i);
      char *zR = sqlite3_mprintf("%.*s", a[t1-1].i+a[t1-1].n-a[i+1].i, pSel->zSql+a[i+1].i);
      int iL = zL ? joinExprTab(pJ, zL, 0) : -2, iR = zR ? joinExprTab(pJ, zR, 0) : -2;
      if( zL==0 || zR==0 ) buildNoMem(pJ->pB);
      if( iL>=0 && iR>=0 && iL!=iR
       && (pJ->iOn<0 || (iL==pJ->iOn && iR<iL) || (iR==pJ->iOn && iL<iR)) ){
        rc = joinAddEdge(pJ, iL, zL, iR, zR, zTerm);
        sqlite3_free(zL);
        sqlite3_free(zR);
        sqlite3_free(zTerm);
        return rc;
      }
      sqlite3_free(zL);
      sqlite3_free(zR);
      break;
    }
  }
  iTab = joinExprTab(pJ, zTerm, 1);
  if( iTab==-1 ) iTab = pJ->iOn>=0 ? pJ->iOn : 0;
  if( iTab==-2 && pJ->iOn<0 ){
    rc = joinResid(pJ, t0, t1, zTerm, 1);
  }else if( iTab==-2 ){
    rc = joinWhy(pJ, "a LEFT JOIN's ON term that names several tables: %s", zTerm);
  }else if( pJ->iOn>=0 && iTab!=pJ->iOn ){
    rc = joinWhy(pJ, "a LEFT JOIN's ON term that filters the rows on its left: %s", zTerm);
  }else if( pJ->iOn<0 && (pJ->aNullable[iTab] || pJ->apSub[iTab]) ){
    /* A WHERE term of a table a LEFT JOIN pads with NULLs is true or not of
    ** the joined rows, padding included; one of a subquery filters its
    ** rows, which its own plan makes whole: both over the joined rows, in
    ** their order, as a term over several tables. */
    rc = joinResid(pJ, t0, t1, zTerm, 1);
  }else{
    sqlite3_str_appendf(pJ->apWhere[iTab], "%s(%s)", pJ->nWhere[iTab] ? " AND " : "", zTerm);
    pJ->nWhere[iTab]++;
  }
  sqlite3_free(zTerm);
  return rc;
}

/* Split tokens [t0, t1) into AND-terms (joinTerm each): ANDs outside
** parentheses, CASE ... END, and the AND of a BETWEEN. */
static int joinTerms(JoinBuild *pJ, int t0, int t1){
  ParSelect *pSel = pJ->pB->pSel;
  const ParToken *a = pSel->aTok;
  int i, iStart = t0, nDepth = 0, nCase = 0, nBetween = 0;
  for(i=t0; i<t1; i++){
    if( a[i].eType==PT_LP ) nDepth++;
    else if( a[i].eType==PT_RP ) nDepth--;
    if( nDepth>0 ) continue;
    if( parTokIs(pSel->zSql, &a[i], "CASE") ) nCase++;
    else if( parTokIs(pSel->zSql, &a[i], "END") && nCase>0 ) nCase--;
    else if( nCase==0 && parTokIs(pSel->zSql, &a[i], "BETWEEN") ) nBetween++;
    else if( nCase==0 && parTokIs(pSel->zSql, &a[i], "AND") ){
      if( nBetween>0 ){ nBetween--; continue; }
      if( joinTerm(pJ, iStart, i) ) return 1;
      iStart = i+1;
    }
  }
  return joinTerm(pJ, iStart, t1);
}

/* The columns of table iTab (FROM order) that are not hidden, by name
** (sqlite3_malloc'd, NULL-terminated), or NULL when out of memory. */
static char **joinTableCols(JoinBuild *pJ, int iTab){
  sqlite3_stmt *pStmt = 0;
  const ParFromSrc *pS = pJ->apSrc[iTab];
  char **az = 0;
  int n = 0;
  /* (Generated columns join too; a virtual table's hidden ones not.  A
  ** subquery's: its result columns.) */
  char *zSql = pJ->apSub[iTab] ? 0
    : sqlite3_mprintf("SELECT name FROM pragma_table_xinfo(%Q, %Q) "
                      "WHERE hidden IN (0, 2, 3)", pS->zName, pJ->azSchema[iTab]);
  if( pJ->apSub[iTab] && sqlite3_prepare_v2(pJ->pB->db, pJ->azInner[iTab], -1,
                                            &pStmt, 0)==SQLITE_OK ){
    int i, nCol = sqlite3_column_count(pStmt);
    for(i=0; i<nCol; i++){
      char **azNew = sqlite3_realloc64(az, sizeof(char*)*(n+2));
      if( azNew==0 ) break;
      az = azNew;
      az[n] = sqlite3_mprintf("%s", sqlite3_column_name(pStmt, i));
      if( az[n]==0 ) break;
      az[++n] = 0;
    }
  }else if( zSql && sqlite3_prepare_v2(pJ->pB->db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
    while( sqlite3_step(pStmt)==SQLITE_ROW ){
      char **azNew = sqlite3_realloc64(az, sizeof(char*)*(n+2));
      if( azNew==0 ) break;
      az = azNew;
      az[n] = sqlite3_mprintf("%s", (const char*)sqlite3_column_text(pStmt, 0));
      if( az[n]==0 ) break;
      az[++n] = 0;
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  if( az==0 ) az = sqlite3_malloc64(sizeof(char*));
  if( az && n==0 ) az[0] = 0;
  return az;
}

static void joinColsFree(char **az){
  int i;
  for(i=0; az && az[i]; i++) sqlite3_free(az[i]);
  sqlite3_free(az);
}

/* The key of USING column zCol (or a NATURAL one) of source iTab: the
** leftmost source before it with the column, against iTab's. */
static int joinUsing(JoinBuild *pJ, int iTab, const char *zCol){
  int i, rc = 1;
  for(i=0; i<iTab; i++){
    char **az = joinTableCols(pJ, i);
    int j, bHas = 0;
    if( az==0 ){ buildNoMem(pJ->pB); return 1; }
    for(j=0; az[j] && !bHas; j++) bHas = sqlite3_stricmp(az[j], zCol)==0;
    joinColsFree(az);
    if( bHas ){
      const ParFromSrc *pL = pJ->apSrc[i], *pR = pJ->apSrc[iTab];
      char *zL = sqlite3_mprintf("\"%w\".\"%w\"", pL->zAlias ? pL->zAlias : pL->zName, zCol);
      char *zR = sqlite3_mprintf("\"%w\".\"%w\"", pR->zAlias ? pR->zAlias : pR->zName, zCol);
      char *zText = sqlite3_mprintf("USING (%s)", zCol);
      if( zL && zR && zText ) rc = joinAddEdge(pJ, i, zL, iTab, zR, zText);
      else buildNoMem(pJ->pB);
      sqlite3_free(zL);
      sqlite3_free(zR);
      sqlite3_free(zText);
      return rc;
    }
  }
  return joinWhy(pJ, "a USING column no table on its left has: %s", zCol);
}

/* Source iTab (FROM order), a subquery: planned by itself (its own
** pipeline, whose result batch the join reads as the table's rows).  Only
** one the kernels run, and whose result columns have distinct names (else
** SQLite renames them). */
static int joinSubquery(JoinBuild *pJ, int iTab){
  ParBuild *pB = pJ->pB;
  const ParFromSrc *pS = pJ->apSrc[iTab];
  sqlite3_stmt *pStmt = 0;
  char *zErr = 0;
  int rc, i, j, n;
  pJ->azInner[iTab] = parSpanText(pB->pSel->zSql, pS->inner);
  if( pJ->azInner[iTab]==0 ){ buildNoMem(pB); return 1; }
  rc = parPlanBuild(pB->db, pJ->azInner[iTab], pB->pPlan->pParams, &pJ->apSub[iTab], &zErr);
  if( rc ){
    if( rc==SQLITE_NOMEM ) buildNoMem(pB);
    else joinWhy(pJ, "a subquery in FROM that does not prepare alone: %s", zErr ? zErr : "?");
    sqlite3_free(zErr);
    return 1;
  }
  if( pJ->apSub[iTab]->zWhy ){
    return joinWhy(pJ, "a subquery in FROM that the kernels do not run (%s)",
                   pJ->apSub[iTab]->zWhy);
  }
  rc = sqlite3_prepare_v2(pB->db, pJ->azInner[iTab], -1, &pStmt, 0);
  n = rc==SQLITE_OK ? sqlite3_column_count(pStmt) : 0;
  for(i=0; i<n && rc==SQLITE_OK; i++){
    for(j=0; j<i; j++){
      if( sqlite3_stricmp(sqlite3_column_name(pStmt, i), sqlite3_column_name(pStmt, j))==0 ){
        rc = SQLITE_ERROR;
      }
    }
  }
  sqlite3_finalize(pStmt);
  if( rc ) return joinWhy(pJ, "a subquery in FROM with two columns named alike%s", "");
  pJ->azSrc[iTab] = sqlite3_mprintf("(%s) AS \"%w\"", pJ->azInner[iTab], pS->zAlias);
  if( pJ->azSrc[iTab]==0 ){ buildNoMem(pB); return 1; }
  return 0;
}

/* The sources: tables joined by inner joins; their names and texts. */
static int joinSources(JoinBuild *pJ){
  ParBuild *pB = pJ->pB;
  const ParFrom *pF = pB->pSel->pFrom;
  int i, j;
  pJ->nTab = pF->nSrc;
  if( pF->nSrc>PAR_JOIN_MAX_TAB ){
    return joinWhy(pJ, "more tables than the join operator takes (8)%s", "");
  }
  for(i=0; i<pF->nSrc; i++){
    const ParFromSrc *pS = &pF->aSrc[i];
    const char *zName = pS->zAlias ? pS->zAlias : pS->zName;
    pJ->apSrc[i] = pS;
    if( pS->eType!=PAR_SRC_TABLE && pS->eType!=PAR_SRC_SUBQUERY ){
      return joinWhy(pJ, "a source that is not a table%s", "");
    }
    if( pS->eJoin & PAR_JOIN_RIGHT ){
      return joinWhy(pJ, "a RIGHT or FULL join%s", "");
    }
    pJ->aLeft[i] = (pS->eJoin & PAR_JOIN_LEFT)!=0;
    pJ->aNullable[i] = pJ->aLeft[i];
    if( pS->eType==PAR_SRC_SUBQUERY && (pJ->aLeft[i] || pS->zAlias==0) ){
      return joinWhy(pJ, pJ->aLeft[i] ? "a LEFT JOIN of a subquery%s"
                                      : "a subquery in FROM without a name%s", "");
    }
    for(j=0; j<i; j++){
      const ParFromSrc *pT = &pF->aSrc[j];
      if( sqlite3_stricmp(pT->zAlias ? pT->zAlias : pT->zName, zName)==0 ){
        return joinWhy(pJ, "two sources named alike: %s", zName);
      }
    }
    if( pS->eType==PAR_SRC_SUBQUERY ){
      if( joinSubquery(pJ, i) ) return 1;
    }else{
      sqlite3_stmt *pStmt = 0;
      int bOk = 0;
      /* The table SQLite reads: in the schema named, else the first schema
      ** holding the name in SQLite's search order (temp, main, then the
      ** attached ones: build.c sqlite3FindTable). */
      char *zSql = pS->zSchema
        ? sqlite3_mprintf("SELECT type='table' AND wr=0, schema FROM pragma_table_list "
                          "WHERE schema=%Q AND name=%Q", pS->zSchema, pS->zName)
        : sqlite3_mprintf("SELECT l.type='table' AND l.wr=0, l.schema FROM pragma_database_list d "
                          "JOIN pragma_table_list l ON l.schema=d.name WHERE l.name=%Q "
                          "ORDER BY CASE d.seq WHEN 1 THEN -1 ELSE d.seq END LIMIT 1",
                          pS->zName);
      if( zSql && sqlite3_prepare_v2(pB->db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
        bOk = sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_int(pStmt, 0);
        if( bOk ){
          pJ->azSchema[i] = sqlite3_mprintf("%s", (const char*)sqlite3_column_text(pStmt, 1));
          if( pJ->azSchema[i]==0 ) bOk = 0;
        }
      }
      sqlite3_finalize(pStmt);
      sqlite3_free(zSql);
      if( !bOk ){
        return joinWhy(pJ, "a source that is not a rowid table of this database: %s",
                       pS->zName);
      }
      pJ->azSrc[i] = pS->zSchema
          ? sqlite3_mprintf("\"%w\".\"%w\" AS \"%w\"", pS->zSchema, pS->zName, zName)
          : sqlite3_mprintf("\"%w\" AS \"%w\"", pS->zName, zName);
    }
    pJ->apWhere[i] = sqlite3_str_new(pB->db);
    if( pJ->azSrc[i]==0 ){ buildNoMem(pB); return 1; }
  }
  return 0;
}

/* Every key and filter: ON terms, USING and NATURAL columns, WHERE. */
static int joinConditions(JoinBuild *pJ){
  ParSelect *pSel = pJ->pB->pSel;
  char *azOn[PAR_JOIN_MAX_TAB];     /* each table's ON terms, WHERE's read */
  int aOn[PAR_JOIN_MAX_TAB];
  int i, j, bFail;
  pJ->iOn = -1;
  for(i=1; i<pJ->nTab; i++){
    const ParFromSrc *pS = pJ->apSrc[i];
    pJ->iOn = pJ->aLeft[i] ? i : -1;
    if( pS->bOn && joinTerms(pJ, pS->on.iTok, pS->on.iTokEnd) ) return 1;
    for(j=0; j<pS->nUsing; j++){
      if( joinUsing(pJ, i, pS->azUsing[j]) ) return 1;
    }
    if( pS->eJoin & PAR_JOIN_NATURAL ){
      char **az = joinTableCols(pJ, i);
      int k, rc = 0;
      if( az==0 ){ buildNoMem(pJ->pB); return 1; }
      for(k=0; az[k] && rc==0; k++){
        int m, bLeft = 0;
        for(m=0; m<i && !bLeft; m++){
          char **azL = joinTableCols(pJ, m);
          int q;
          for(q=0; azL && azL[q] && !bLeft; q++) bLeft = sqlite3_stricmp(azL[q], az[k])==0;
          joinColsFree(azL);
        }
        if( bLeft ) rc = joinUsing(pJ, i, az[k]);
      }
      joinColsFree(az);
      if( rc ) return 1;
    }
  }
  /* A table's scan tests the WHERE terms before the ON terms, as SQLite
  ** does (it appends each ON clause to the WHERE clause): which of two
  ** failing terms is evaluated first (a scalar subquery's error) is
  ** SQLite's. */
  for(i=0; i<pJ->nTab; i++){
    azOn[i] = pJ->nWhere[i] ? sqlite3_str_finish(pJ->apWhere[i]) : 0;
    if( pJ->nWhere[i]==0 ) sqlite3_free(sqlite3_str_finish(pJ->apWhere[i]));
    if( pJ->nWhere[i] && azOn[i]==0 ) buildNoMem(pJ->pB);
    aOn[i] = pJ->nWhere[i];
    pJ->apWhere[i] = sqlite3_str_new(pJ->pB->db);
    pJ->nWhere[i] = 0;
  }
  pJ->iOn = -1;
  bFail = pSel->bWhere && joinTerms(pJ, pSel->where.iTok, pSel->where.iTokEnd);
  for(i=0; i<pJ->nTab; i++){
    if( azOn[i] ){
      sqlite3_str_appendf(pJ->apWhere[i], "%s%s", pJ->nWhere[i] ? " AND " : "", azOn[i]);
      pJ->nWhere[i] += aOn[i];
      sqlite3_free(azOn[i]);
    }
  }
  if( bFail ) return 1;
  return pJ->pB->rc!=SQLITE_OK;
}

/* SQLite's loops: the order of the join and each table's loop line. */
static int joinLoops(JoinBuild *pJ){
  int bSort, n = 0, i;
  const char *zLoops = buildSelectLoops(pJ->pB, &bSort), *z;
  if( zLoops==0 ) return joinWhy(pJ, "the query plan could not be read%s", "");
  for(i=0; i<pJ->nTab; i++) pJ->aPos[i] = -1;
  for(z=zLoops; *z; ){
    const char *zEnd = strchr(z, '\n'), *zName;
    int nName;
    if( zEnd==0 ) zEnd = z + strlen(z);
    zName = z + (z[1]=='C' ? 5 : 7);          /* "SCAN " or "SEARCH " */
    for(nName=0; zName+nName<zEnd && zName[nName]!=' '; nName++){}
    for(i=0; i<pJ->nTab; i++){
      const ParFromSrc *pS = pJ->apSrc[i];
      const char *zN = pS->zAlias ? pS->zAlias : pS->zName;
      if( (int)strlen(zN)==nName && strncmp(zN, zName, nName)==0 ) break;
    }
    if( i==pJ->nTab || pJ->aPos[i]>=0 || n>=pJ->nTab ){
      return joinWhy(pJ, "a query plan with loops other than the tables'%s", "");
    }
    pJ->aPos[i] = n;
    pJ->aOrd[n++] = i;
    pJ->azLoop[i] = sqlite3_mprintf("%.*s", (int)(zEnd-z), z);
    if( pJ->azLoop[i]==0 ){ buildNoMem(pJ->pB); return 1; }
    z = *zEnd ? zEnd+1 : zEnd;
  }
  if( n!=pJ->nTab ) return joinWhy(pJ, "a query plan with loops other than the tables'%s", "");
  return 0;
}

/* The one loop line of a table's scan (as par_sink reads it), or NULL. */
static char *joinScanLoop(ParBuild *pB, const ParPlan *pScan){
  char *zSink = parSinkSql(pScan->zExtract, (int)strlen(pScan->zExtract), pScan->nExtractCol);
  char *z;
  int bSort, n;
  if( zSink==0 ) return 0;
  z = buildLoops(pB->db, zSink, pScan->pParams, &bSort);
  sqlite3_free(zSink);
  n = z ? (int)strlen(z) : 0;
  if( n>0 && z[n-1]=='\n' ) z[--n] = 0;
  if( z && strchr(z, '\n') ){ sqlite3_free(z); return 0; }
  return z;
}

/* Does SQLite's inner loop zLoop over table zName give the rows matching
** one outer row in rowid order?  A rowid lookup or a full scan.  An index
** lookup is not taken to: its "x=?" may be an IN list (values in the
** list's order) or the index have columns beyond the keys, which its plan
** line does not tell apart; its matches must then be unique (run time). */
static int joinLoopRowidOrder(const char *zLoop, const char *zName){
  char *zScan = sqlite3_mprintf("SCAN %s", zName);
  char *zPk = sqlite3_mprintf("SEARCH %s USING INTEGER PRIMARY KEY (rowid=?)", zName);
  int bOk = zScan && zPk && (strcmp(zLoop, zScan)==0 || strcmp(zLoop, zPk)==0);
  sqlite3_free(zScan);
  sqlite3_free(zPk);
  return bOk;
}

/* Does SQLite's loop over pT look its rows up, for one outer row, in rowid
** order: "SEARCH t USING [COVERING] INDEX i (k=?)" where i is an index of
** that one column (its entries for one value of k are in rowid order) and
** k is the column of one of pT's join keys (so whatever SQLite compares k
** with, an IN list included, one value of k matches the outer row)?  Not
** an automatic index, whose entries carry other columns. */
static int joinLoopKeyIndex(JoinBuild *pJ, const ParJoinTab *pT){
  sqlite3 *db = pJ->pB->db;
  const char *zLoop = pT->zLoop, *zIdx, *zCol;
  char *zPre = sqlite3_mprintf("SEARCH %s USING ", pT->zName), *zIdxName = 0, *zColName = 0;
  sqlite3_stmt *pStmt = 0;
  int bOk = 0, nKeyCol = 0, k, n;
  if( zPre==0 ){ buildNoMem(pJ->pB); return 0; }
  n = (int)strlen(zPre);
  if( strncmp(zLoop, zPre, n)==0 ){
    zIdx = zLoop + n;
    if( strncmp(zIdx, "COVERING ", 9)==0 ) zIdx += 9;
    if( strncmp(zIdx, "INDEX ", 6)==0 ){
      zIdx += 6;
      zCol = strstr(zIdx, " (");
      /* "(k=?)": one column, the whole constraint. */
      if( zCol && strlen(zCol)>=6 && strcmp(zCol + strlen(zCol) - 3, "=?)")==0
       && strchr(zCol + 2, ' ')==0 ){
        zIdxName = sqlite3_mprintf("%.*s", (int)(zCol - zIdx), zIdx);
        zColName = sqlite3_mprintf("%.*s", (int)strlen(zCol) - 5, zCol + 2);
      }
    }
  }
  sqlite3_free(zPre);
  if( zIdxName && zColName
   && sqlite3_prepare_v2(db, "SELECT name FROM pragma_index_xinfo(?1, ?2) WHERE key", -1,
                         &pStmt, 0)==SQLITE_OK ){
    const char *zSchema = pJ->azSchema[pJ->aOrd[pT - pJ->pB->pPlan->pJoin->aTab]];
    sqlite3_bind_text(pStmt, 1, zIdxName, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, zSchema ? zSchema : "main", -1, SQLITE_STATIC);
    while( sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zName = (const char*)sqlite3_column_text(pStmt, 0);
      nKeyCol++;
      bOk = nKeyCol==1 && zName && sqlite3_stricmp(zName, zColName)==0;
    }
    if( nKeyCol!=1 ) bOk = 0;
  }
  sqlite3_finalize(pStmt);
  /* ... and k is a join key's column of pT. */
  for(k=0, n=bOk; n && k<pT->nKey; k++){
    const char *zExpr = pT->pScan && pT->aKey[k].iBuildCol<pT->pScan->nExtractExpr
                      ? pT->pScan->azExtractExpr[pT->aKey[k].iBuildCol] : 0;
    const char *zLast = zExpr ? strrchr(zExpr, '.') : 0;
    char *zDeq = zExpr ? parDequote(zLast ? zLast + 1 : zExpr,
                                    (int)strlen(zLast ? zLast + 1 : zExpr)) : 0;
    if( zDeq && sqlite3_stricmp(zDeq, zColName)==0 ) n = 0;
    sqlite3_free(zDeq);
  }
  if( n ) bOk = 0;
  sqlite3_free(zIdxName);
  sqlite3_free(zColName);
  return bOk;
}

/* May pT (an inner table of the join, no LEFT JOIN) be read by rowid
** lookups of the probe keys?  Its one key's column is its rowid, which
** SQLite's loop looks up ("SEARCH t USING INTEGER PRIMARY KEY (rowid=?)",
** the plan of "WHERE key = ?" too: not a constraint of its own that SQLite
** looks up by rowid while the key is another column). */
static int joinRowidKey(JoinBuild *pJ, const ParJoinTab *pT){
  sqlite3 *db = pJ->pB->db;
  const char *zKey;
  char *zPk, *zSql;
  sqlite3_stmt *pStmt = 0;
  int bOk = 0, n = 0;
  if( pT->nKey!=1 || pT->bLeft || pT->pSub || pT->aKey[0].iBuildCol>=pT->pScan->nExtractExpr ){
    return 0;
  }
  zKey = pT->pScan->azExtractExpr[pT->aKey[0].iBuildCol];
  zPk = sqlite3_mprintf("SEARCH %s USING INTEGER PRIMARY KEY (rowid=?)", pT->zName);
  zSql = sqlite3_mprintf("EXPLAIN QUERY PLAN SELECT 1 FROM %s WHERE %s = ?",
                         pT->pScan->zExtractFrom, zKey);
  if( zPk && zSql && strcmp(pT->zLoop, zPk)==0
   && sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
    while( sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zD = (const char*)sqlite3_column_text(pStmt, 3);
      n++;
      bOk = zD && strcmp(zD, zPk)==0;
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zPk);
  sqlite3_free(zSql);
  return bOk && n==1;
}

/* Table iTab's scan (FROM order) as a plan of its own. */
static ParPlan *joinScanPlan(JoinBuild *pJ, int iTab){
  ParPlan *pPlan = pJ->pB->pPlan, *p;
  sqlite3_str *pStr;
  int i, bNoMem = 0;
  p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return 0;
  memset(p, 0, sizeof(*p));
  p->nRef = 1;
  p->pParams = parParamsDup(pPlan->pParams, &bNoMem);
  pStr = sqlite3_str_new(pJ->pB->db);
  for(i=0; i<pJ->nCol[iTab]; i++){
    sqlite3_str_appendf(pStr, "%s%s", i ? ", " : "", pJ->aazCol[iTab][i]);
  }
  p->zExtractCols = sqlite3_str_finish(pStr);
  p->zExtractFrom = sqlite3_mprintf("%s", pJ->azSrc[iTab]);
  if( pJ->nWhere[iTab] ){
    p->zExtractWhere = sqlite3_str_finish(pJ->apWhere[iTab]);
    pJ->apWhere[iTab] = 0;
  }
  p->nExtractCol = pJ->nCol[iTab];
  p->azExtractExpr = sqlite3_malloc64(sizeof(char*)*(pJ->nCol[iTab]+1));
  if( p->azExtractExpr ){
    for(i=0; i<pJ->nCol[iTab]; i++){
      p->azExtractExpr[i] = pJ->aazCol[iTab][i];
      pJ->aazCol[iTab][i] = 0;
    }
    p->nExtractExpr = pJ->nCol[iTab];
  }
  if( p->zExtractCols && p->zExtractFrom ){
    p->zExtract = p->zExtractWhere
        ? sqlite3_mprintf("SELECT %s FROM %s WHERE %s", p->zExtractCols, p->zExtractFrom,
                          p->zExtractWhere)
        : sqlite3_mprintf("SELECT %s FROM %s", p->zExtractCols, p->zExtractFrom);
  }
  if( bNoMem || p->zExtract==0 || p->azExtractExpr==0
   || (pJ->nWhere[iTab] && p->zExtractWhere==0) ){
    parPlanFree(p);
    return 0;
  }
  if( pJ->apSub[iTab]==0 ){
    /* A scan that walks a whole index (a covering one, for few columns)
    ** reads every row either way: in rowid order instead, on the worker
    ** connections in parallel (an index's order, where it counts, comes
    ** from a sort: joinIndexOrder). */
    char *zLoop = joinScanLoop(pJ->pB, p);
    char *zPre = sqlite3_mprintf("SCAN %s USING ", pJ->apSrc[iTab]->zAlias
                                 ? pJ->apSrc[iTab]->zAlias : pJ->apSrc[iTab]->zName);
    if( zLoop && zPre && strncmp(zLoop, zPre, strlen(zPre))==0 && strstr(zLoop, "INDEX ")
     && !strstr(zLoop, "(") ){
      char *zFrom = sqlite3_mprintf("%s NOT INDEXED", p->zExtractFrom);
      char *zSql = zFrom ? (p->zExtractWhere
          ? sqlite3_mprintf("SELECT %s FROM %s WHERE %s", p->zExtractCols, zFrom,
                            p->zExtractWhere)
          : sqlite3_mprintf("SELECT %s FROM %s", p->zExtractCols, zFrom)) : 0;
      if( zSql ){
        sqlite3_free(p->zExtractFrom);
        sqlite3_free(p->zExtract);
        p->zExtractFrom = zFrom;
        p->zExtract = zSql;
      }else{
        sqlite3_free(zFrom);
      }
    }
    sqlite3_free(zLoop);
    sqlite3_free(zPre);
  }
  return p;
}

void parPlanJoinFree(ParPlanJoin *pJoin){
  int i, k;
  if( pJoin==0 ) return;
  for(i=0; i<pJoin->nTab; i++){
    ParJoinTab *pT = &pJoin->aTab[i];
    sqlite3_free(pT->zName);
    sqlite3_free(pT->zLoop);
    parPlanFree(pT->pScan);
    parPlanFree(pT->pSub);
    sqlite3_free(pT->aSubCol);
    for(k=0; pT->aOrd && k<PAR_SORT_MAX_ORD; k++) sqlite3_free(pT->aOrd[k].zText);
    sqlite3_free(pT->aOrd);
    sqlite3_free(pT->zOrdIdx);
    for(k=0; k<pT->nKey; k++) sqlite3_free(pT->aKey[k].zText);
    sqlite3_free(pT->aKey);
  }
  sqlite3_free(pJoin->aTab);
  sqlite3_free(pJoin->aOutTab);
  sqlite3_free(pJoin->aOutCol);
  sqlite3_free(pJoin->zResid);
  sqlite3_free(pJoin->zResidText);
  sqlite3_free(pJoin->zCalc);
  sqlite3_free(pJoin->zCalcText);
  sqlite3_free(pJoin->aCalcCol);
  sqlite3_free(pJoin);
}

/* Is expression zExpr of table iTab (FROM order) NULL on a row of
** NULLs, the padding a LEFT JOIN gives?  Asked of SQLite: zExpr over a
** row of NULLs under the table's name (typeof(x), coalesce(x, 0), x IS
** NULL are not). */
static int joinPadsToNull(JoinBuild *pJ, int iTab, const char *zExpr){
  const ParFromSrc *pS = pJ->apSrc[iTab];
  char **az = joinTableCols(pJ, iTab);
  sqlite3_str *pStr = sqlite3_str_new(pJ->pB->db);
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int i, bNull = 0;
  sqlite3_str_appendall(pStr, "SELECT ");
  for(i=0; az && az[i]; i++) sqlite3_str_appendf(pStr, "%sNULL AS \"%w\"", i ? ", " : "", az[i]);
  if( i==0 ) sqlite3_str_appendall(pStr, "NULL");
  zSql = sqlite3_mprintf("SELECT (%s) FROM (%s) AS \"%w\"", zExpr, sqlite3_str_value(pStr),
                         pS->zAlias ? pS->zAlias : pS->zName);
  if( zSql && sqlite3_prepare_v2(pJ->pB->db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
    parParamsBind(pStmt, pJ->pB->pPlan->pParams);
    bNull = sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_type(pStmt, 0)==SQLITE_NULL;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  sqlite3_free(sqlite3_str_finish(pStr));
  joinColsFree(az);
  return bNull;
}

/* The operator from what pJ found: tables in join order, keys assigned to
** the later table of each, the columns, the scans. */
static int joinIndexOrder(JoinBuild *pJ, int iTab, ParJoinTab *pT);

static int joinAssemble(JoinBuild *pJ, int bOrderMatters){
  ParBuild *pB = pJ->pB;
  ParPlan *pPlan = pB->pPlan;
  ParPlanJoin *pJoin;
  int i, j, e;
  int aKeyL[64], aKeyR[64];

  /* Columns first: the keys', then the extraction's. */
  for(e=0; e<pJ->nEdge; e++){
    aKeyL[e] = joinScanCol(pJ, pJ->aEdge[e].iTabL, pJ->aEdge[e].zColL);
    aKeyR[e] = joinScanCol(pJ, pJ->aEdge[e].iTabR, pJ->aEdge[e].zColR);
    if( aKeyL[e]<0 || aKeyR[e]<0 ) return 1;
  }
  if( pPlan->nExtractExpr!=pPlan->nExtractCol
   && !(pPlan->nExtractExpr==0 && strcmp(pPlan->zExtractCols, "0")==0) ){
    return joinWhy(pJ, "the columns read are not known one by one%s", "");
  }
  pJoin = sqlite3_malloc(sizeof(*pJoin));
  if( pJoin==0 ){ buildNoMem(pB); return 1; }
  memset(pJoin, 0, sizeof(*pJoin));
  pPlan->pJoin = pJoin;
  pJoin->bOrderMatters = bOrderMatters;
  /* (joinCalc below adds columns to those of the filter's terms.) */
  pJoin->aOutTab = sqlite3_malloc64(sizeof(int)*(pPlan->nExtractCol+4*PAR_JOIN_MAX_RESID+1));
  pJoin->aOutCol = sqlite3_malloc64(sizeof(int)*(pPlan->nExtractCol+4*PAR_JOIN_MAX_RESID+1));
  pJoin->aCalcCol = sqlite3_malloc64(sizeof(int)*(pPlan->nExtractCol+1));
  pJoin->aTab = sqlite3_malloc64(sizeof(ParJoinTab)*pJ->nTab);
  if( pJoin->aOutTab==0 || pJoin->aOutCol==0 || pJoin->aTab==0 || pJoin->aCalcCol==0 ){
    buildNoMem(pB);
    return 1;
  }
  memset(pJoin->aTab, 0, sizeof(ParJoinTab)*pJ->nTab);
  for(j=0; j<pPlan->nExtractCol; j++){
    const char *zExpr = j<pPlan->nExtractExpr ? pPlan->azExtractExpr[j] : "0";
    int iTab = joinExprTab(pJ, zExpr, 0);
    if( iTab==-2 ){
      /* Computed over the joined rows; until then a stand-in column. */
      if( pJ->pCalc==0 ){
        pJ->pCalc = sqlite3_str_new(0);
        pJ->pCalcText = sqlite3_str_new(0);
      }
      sqlite3_str_appendall(pJ->pCalc, pJoin->nCalc ? ", " : "SELECT ");
      sqlite3_str_appendf(pJ->pCalcText, "%s%s", pJoin->nCalc ? ", " : "", zExpr);
      if( joinCalc(pJ, zExpr, pJ->pCalc) ) return 1;
      pJoin->aCalcCol[pJoin->nCalc++] = j;
      pJoin->aOutTab[j] = -1;
      continue;
    }
    if( iTab<0 ) iTab = pJ->aOrd[0];
    if( pJ->aNullable[iTab] && !joinPadsToNull(pJ, iTab, zExpr) ){
      return joinWhy(pJ, "a column of the NULL-padded side of a LEFT JOIN that is not NULL "
                     "on padding: %s", zExpr);
    }
    pJoin->aOutTab[j] = pJ->aPos[iTab];
    pJoin->aOutCol[j] = joinScanCol(pJ, iTab, zExpr);
    if( pJoin->aOutCol[j]<0 ) return 1;
  }
  if( pPlan->nExtractCol + pJ->nResidCol>PAR_ROWS_MAX ){
    return joinWhy(pJ, "more columns than par_rows serves for the terms over several "
                   "tables%s", "");
  }
  for(j=0; j<pJ->nResidCol; j++){
    int iTab = pJ->aResidTab[j];
    pJoin->aOutTab[pPlan->nExtractCol + j] = pJ->aPos[iTab];
    pJoin->aOutCol[pPlan->nExtractCol + j] = joinScanCol(pJ, iTab, pJ->azResidCol[j]);
    if( pJoin->aOutCol[pPlan->nExtractCol + j]<0 ) return 1;
  }
  pJoin->nResidCol = pJ->nResidCol;
  if( pJ->pCalc ){
    for(j=0; j<pJoin->nCalc; j++){
      pJoin->aOutTab[pJoin->aCalcCol[j]] = pJoin->aOutTab[pPlan->nExtractCol];
      pJoin->aOutCol[pJoin->aCalcCol[j]] = pJoin->aOutCol[pPlan->nExtractCol];
    }
    sqlite3_str_appendall(pJ->pCalc, " FROM par_rows(:par_rows)");
    pJoin->zCalc = sqlite3_str_finish(pJ->pCalc);
    pJoin->zCalcText = sqlite3_str_finish(pJ->pCalcText);
    pJ->pCalc = pJ->pCalcText = 0;
    if( pJoin->zCalc==0 || pJoin->zCalcText==0 ){ buildNoMem(pB); return 1; }
    if( !joinPrepares(pB->db, pJoin->zCalc) ){
      return joinWhy(pJ, "the columns over several tables do not prepare over the joined "
                     "rows%s", "");
    }
  }
  if( pJ->nResid>0 ){
    sqlite3_str *pStr = sqlite3_str_new(0);
    /* Under a CASE: SQLite plans OR terms of a virtual table's WHERE one
    ** by one, without par_rows' argument, which par_rows refuses. */
    if( pJ->pExpose ){
      /* (Terms with a subquery read the columns under their names.) */
      char *zExp = sqlite3_str_finish(pJ->pExpose);
      pJ->pExpose = 0;
      if( zExp==0 ){ sqlite3_free(sqlite3_str_finish(pStr)); buildNoMem(pB); return 1; }
      sqlite3_str_appendf(pStr, "SELECT _prow FROM (SELECT rowid AS _prow, *%s "
                          "FROM par_rows(:par_rows)) WHERE CASE WHEN ", zExp);
      sqlite3_free(zExp);
    }else{
      sqlite3_str_appendall(pStr, "SELECT rowid FROM par_rows(:par_rows) WHERE CASE WHEN ");
    }
    for(j=0; j<pJ->nResid; j++) sqlite3_str_appendf(pStr, "%s(%s)", j ? " AND " : "", pJ->azResid[j]);
    sqlite3_str_appendall(pStr, " THEN 1 END");
    pJoin->zResid = sqlite3_str_finish(pStr);
    pJoin->zResidText = sqlite3_str_finish(pJ->pResidText);
    pJ->pResidText = 0;
    if( pJoin->zResid==0 || pJoin->zResidText==0 ){ buildNoMem(pB); return 1; }
    if( !joinPrepares(pB->db, pJoin->zResid) ){
      return joinWhy(pJ, "the terms over several tables do not prepare over the joined "
                     "rows%s", "");
    }
  }
  pJoin->nTab = pJ->nTab;
  for(i=0; i<pJ->nTab; i++){
    int iTab = pJ->aOrd[i];
    const ParFromSrc *pS = pJ->apSrc[iTab];
    ParJoinTab *pT = &pJoin->aTab[i];
    pT->zName = sqlite3_mprintf("%s", pS->zAlias ? pS->zAlias : pS->zName);
    pT->bLeft = pJ->aLeft[iTab];
    pT->zLoop = pJ->azLoop[iTab];
    pJ->azLoop[iTab] = 0;
    pT->aKey = sqlite3_malloc64(sizeof(ParJoinKey)*(pJ->nEdge+1));
    if( pT->zName==0 || pT->aKey==0 ){ buildNoMem(pB); return 1; }
    for(e=0; e<pJ->nEdge; e++){
      struct JoinEdge *pE = &pJ->aEdge[e];
      int pL = pJ->aPos[pE->iTabL], pR = pJ->aPos[pE->iTabR];
      ParJoinKey *pK;
      if( (pL>pR ? pL : pR)!=i ) continue;
      if( pE->iOn!=(pJ->aLeft[iTab] ? iTab : -1) ){
        return joinWhy(pJ, "SQLite's loops join a LEFT JOIN's table by another "
                       "table's terms: %s", pE->zText);
      }
      pK = &pT->aKey[pT->nKey++];
      pK->eColl = pE->eColl;
      pK->bNumeric = pE->bNumeric;
      pK->zText = sqlite3_mprintf("%s", pE->zText);
      if( pK->zText==0 ){ buildNoMem(pB); return 1; }
      if( pL>pR ){
        pK->iBuildCol = aKeyL[e];
        pK->iProbeTab = pR;
        pK->iProbeCol = aKeyR[e];
      }else{
        pK->iBuildCol = aKeyR[e];
        pK->iProbeTab = pL;
        pK->iProbeCol = aKeyL[e];
      }
    }
    if( pT->nKey>PAR_JOIN_MAX_KEY ){
      return joinWhy(pJ, "more than 4 keys join %s (the kernel's limit)", pT->zName);
    }
    if( i>0 && pT->nKey==0 ){
      return joinWhy(pJ, "SQLite's loop over %s has no equality with the tables before it "
                     "(a cross product)", pT->zName);
    }
  }
  for(i=0; i<pJ->nTab && bOrderMatters; i++){
    /* (Its columns join the scan's before the scan is made.) */
    if( pJ->apSub[pJ->aOrd[i]]==0 && joinIndexOrder(pJ, pJ->aOrd[i], &pJoin->aTab[i]) ){
      return 1;
    }
  }
  for(i=0; i<pJ->nTab; i++){
    ParJoinTab *pT = &pJoin->aTab[i];
    int iTab = pJ->aOrd[i];
    if( pJ->apSub[iTab] && pJ->nWhere[iTab] ){
      return joinWhy(pJ, "a term that filters the rows of subquery %s", pT->zName);
    }
    pT->pScan = joinScanPlan(pJ, iTab);
    if( pT->pScan==0 ){ buildNoMem(pB); return 1; }
    if( pJ->apSub[iTab] ){
      /* Each column read of it: one of its result columns. */
      pT->aSubCol = sqlite3_malloc64(sizeof(int)*(pT->pScan->nExtractCol+1));
      if( pT->aSubCol==0 ){ buildNoMem(pB); return 1; }
      for(j=0; j<pT->pScan->nExtractCol; j++){
        pT->aSubCol[j] = j<pT->pScan->nExtractExpr
                       ? joinSubCol(pJ, iTab, pT->pScan->azExtractExpr[j]) : -1;
        if( pT->aSubCol[j]<0 ){
          return joinWhy(pJ, "an expression over the columns of subquery %s", pT->zName);
        }
      }
      pT->pSub = pJ->apSub[iTab];
      pT->pSub->nRef++;
    }
  }
  return 0;
}

/* The order checks: see the header comment. */
static int joinOrder(JoinBuild *pJ){
  ParPlanJoin *pJoin = pJ->pB->pPlan->pJoin;
  int i, k, bIdxOrder;
  for(i=0; i<pJoin->nTab; i++){
    ParJoinTab *pT = &pJoin->aTab[i];
    char *zScan;
    if( pT->pSub ){
      /* A subquery's rows come in the order SQLite makes them (as every
      ** plan returns its rows: a view of it gives SQLite's rows in
      ** SQLite's order), the order SQLite materializes and scans them in.
      ** An inner loop that looks them up through an automatic index
      ** visits one key's rows in the index's order (by its other
      ** columns): unique matches only (run time). */
      char *zRowid = sqlite3_mprintf("SCAN %s", pT->zName);
      if( zRowid==0 ){ buildNoMem(pJ->pB); return 1; }
      for(k=0; k<pT->nKey; k++){
        if( pT->aKey[k].eColl==PAR_COLL_RTRIM && strcmp(pT->zLoop, zRowid)!=0 ){
          sqlite3_free(zRowid);
          return joinWhy(pJ, "an RTRIM key of subquery %s (SQLite looks its rows up "
                         "through an automatic index and a Bloom filter)", pT->zName);
        }
      }
      pT->bOrderKnown = i==0 || strcmp(pT->zLoop, zRowid)==0;
      if( i==0 && pJoin->bOrderMatters && strcmp(pT->zLoop, zRowid)!=0
       && strcmp(pT->zLoop, zRowid+1)!=0 && !(strncmp(pT->zLoop, "SEARCH ", 7)==0
                                              && strcmp(pT->zLoop+7, pT->zName)==0) ){
        /* The outer loop reads the subquery's rows in their order: "SCAN
        ** s", or "SEARCH s" (min() or max() over it, read whole); through
        ** an automatic index, in the index's. */
        joinWhy(pJ, "SQLite reads subquery %s through an index, and the result depends "
                "on the order", pT->zName);
        sqlite3_free(zRowid);
        return 1;
      }
      sqlite3_free(zRowid);
      continue;
    }
    zScan = joinScanLoop(pJ->pB, pT->pScan);
    if( zScan==0 ) return joinWhy(pJ, "a table's scan has no plan SQLite tells%s", "");
    bIdxOrder = 0;
    if( pT->nOrd ){
      /* In the order of the index SQLite walks: the scan walks all of it
      ** (no sort), or reads in rowid order and is sorted into it, when
      ** SQLite walks nothing backwards and no simpler order holds. */
      char *zRowid = sqlite3_mprintf("SCAN %s", pT->zName);
      char *zWalk = sqlite3_mprintf("SCAN %s USING INDEX %s", pT->zName, pT->zOrdIdx);
      char *zCover = sqlite3_mprintf("SCAN %s USING COVERING INDEX %s", pT->zName, pT->zOrdIdx);
      if( zRowid==0 || zWalk==0 || zCover==0 ){
        sqlite3_free(zRowid);
        sqlite3_free(zWalk);
        sqlite3_free(zCover);
        sqlite3_free(zScan);
        buildNoMem(pJ->pB);
        return 1;
      }
      if( strcmp(zScan, pT->zLoop)==0
       || (i>0 && strcmp(zScan, zRowid)==0
           && (joinLoopRowidOrder(pT->zLoop, pT->zName) || joinLoopKeyIndex(pJ, pT)))
       || buildBackwardSteps(pJ->pB->db, pJ->pB->pPlan->zSql, pJ->pB->pPlan->pParams)!=0 ){
        pT->nOrd = 0;
      }else if( strcmp(zScan, zWalk)==0 || strcmp(zScan, zCover)==0 ){
        pT->nOrd = 0;            /* (zOrdIdx stays: par_explain) */
        bIdxOrder = 1;
      }else if( strcmp(zScan, zRowid)==0 ){
        bIdxOrder = 1;
      }else{
        pT->nOrd = 0;
      }
      if( !bIdxOrder ){
        sqlite3_free(pT->zOrdIdx);
        pT->zOrdIdx = 0;
      }
      sqlite3_free(zRowid);
      sqlite3_free(zWalk);
      sqlite3_free(zCover);
    }
    if( i==0 ){
      pT->bOrderKnown = 1;
      if( pJoin->bOrderMatters && strcmp(zScan, pT->zLoop)!=0 && !bIdxOrder ){
        joinWhy(pJ, "SQLite's outer loop reads the rows in another order than the "
                "table's scan, and the result depends on it (%s)", pT->zLoop);
        sqlite3_free(zScan);
        return 1;
      }
    }else{
      char *zRowid = sqlite3_mprintf("SCAN %s", pT->zName);
      for(k=0; k<pT->nKey && zRowid; k++){
        if( pT->aKey[k].eColl==PAR_COLL_RTRIM && strcmp(pT->zLoop, zRowid)!=0 ){
          /* SQLite 3.40 probes its index of such a loop through a Bloom
          ** filter hashing a text by its length (vdbe.c filterHash): texts
          ** that RTRIM finds equal but differ in length do not match
          ** there.  SQLite's answer is SQLite's to give. */
          joinWhy(pJ, "an RTRIM key SQLite looks up through an index and a Bloom "
                  "filter (%s)", pT->zLoop);
          sqlite3_free(zRowid);
          sqlite3_free(zScan);
          return 1;
        }
      }
      pT->bOrderKnown = bIdxOrder
                     || (zRowid && strcmp(zScan, zRowid)==0
                         && (joinLoopRowidOrder(pT->zLoop, pT->zName)
                             || joinLoopKeyIndex(pJ, pT)));
      pT->bRowidKey = zRowid && strcmp(zScan, zRowid)==0 && joinRowidKey(pJ, pT);
      sqlite3_free(zRowid);
    }
    sqlite3_free(zScan);
  }
  return 0;
}

/* Does text z hold an IN or an OR (SQLite may turn "x=1 OR x=2" into an
** IN list)?  A loop that uses an IN list on an index column visits the
** list's values in the list's order. */
static int joinHasInOr(const char *z){
  ParToken *a;
  int n = 0, i, bHas = 0;
  if( z==0 ) return 0;
  a = parTokenize(z, &n);
  if( a==0 ) return 1;
  for(i=0; i<n && !bHas; i++) bHas = parTokIs(z, &a[i], "IN") || parTokIs(z, &a[i], "OR");
  sqlite3_free(a);
  return bHas;
}

/* When SQLite's loop over table iTab (FROM order; pT its place in the
** plan) walks an index of it, "SCAN t USING [COVERING] INDEX i" or
** "SEARCH t USING [COVERING] INDEX i (...)", and the order matters: the
** index's key columns as scan columns in pT->aOrd, with its collations
** and directions.  Its entries are in that order, then by rowid, so the
** table's rows read in rowid order and sorted stably by them come in the
** order the loop visits them, a range or an equality on its first
** columns only leaving some out (op_join.c sorts them when joinOrder
** keeps it).  Nothing when the loop could walk an IN list (its values'
** order: an IN or OR among the table's terms or those over several
** tables), skips (ANY), or the index has an expression, or the table has
** no rowid. */
static int joinIndexOrder(JoinBuild *pJ, int iTab, ParJoinTab *pT){
  sqlite3 *db = pJ->pB->db;
  const char *zLoop = pT->zLoop, *z, *zEnd;
  const char *zSchema = pJ->azSchema[iTab];
  const ParFromSrc *pS = pJ->apSrc[iTab];
  const char *zN = pS->zAlias ? pS->zAlias : pS->zName;
  char *zIdx = 0;
  sqlite3_stmt *pStmt = 0;
  int bUtf8 = parDbIsUtf8(db), mReplaced = parCollReplaced(db), n = 0, rc, bOk = 1, k;
  if( zLoop==0 || buildWriting(db) ) return 0;
  z = zLoop + (zLoop[1]=='C' ? 5 : 7) + strlen(zN);         /* past "SCAN t" */
  if( strncmp(z, " USING ", 7)!=0 ) return 0;
  z += 7;
  if( strncmp(z, "COVERING ", 9)==0 ) z += 9;
  if( strncmp(z, "INDEX ", 6)!=0 ) return 0;
  z += 6;
  zEnd = strstr(z, " (");
  if( zEnd==0 ) zEnd = z + strlen(z);
  if( strstr(zEnd, "ANY(") ) return 0;
  if( joinHasInOr(pJ->apWhere[iTab] ? sqlite3_str_value(pJ->apWhere[iTab]) : 0)
   || joinHasInOr(pJ->pB->pPlan->pJoin->zResidText) ){
    return 0;
  }
  zIdx = sqlite3_mprintf("%.*s", (int)(zEnd - z), z);
  if( zIdx==0 ){ buildNoMem(pJ->pB); return 1; }
  /* A rowid table (a WITHOUT ROWID one is read in its key's order). */
  rc = sqlite3_prepare_v2(db, "SELECT NOT wr FROM pragma_table_list(?1) WHERE schema=?2", -1, &pStmt, 0);
  if( rc==SQLITE_OK ){
    sqlite3_bind_text(pStmt, 1, pS->zName, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, zSchema, -1, SQLITE_STATIC);
    bOk = sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_int(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;
  if( rc==SQLITE_NOMEM ){ sqlite3_free(zIdx); buildNoMem(pJ->pB); return 1; }
  if( bOk ){
    rc = sqlite3_prepare_v2(db, "SELECT cid, name, desc, coll FROM pragma_index_xinfo(?1, ?2) "
                                "WHERE key ORDER BY seqno", -1, &pStmt, 0);
  }
  if( bOk && rc==SQLITE_OK ){
    sqlite3_bind_text(pStmt, 1, zIdx, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, zSchema, -1, SQLITE_STATIC);
    pT->aOrd = sqlite3_malloc64(sizeof(ParSortKey)*PAR_SORT_MAX_ORD);
    if( pT->aOrd==0 ) rc = SQLITE_NOMEM;
    else memset(pT->aOrd, 0, sizeof(ParSortKey)*PAR_SORT_MAX_ORD);
    while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zCol = (const char*)sqlite3_column_text(pStmt, 1);
      const char *zColl = (const char*)sqlite3_column_text(pStmt, 3);
      ParSortKey *pK;
      char *zExpr;
      int e;
      if( sqlite3_column_int(pStmt, 0)<0 || zCol==0 || n>=PAR_SORT_MAX_ORD ){ n = 0; break; }
      pK = &pT->aOrd[n];
      /* (The column itself when the scan reads it already, by its name.) */
      zExpr = sqlite3_mprintf("%s.%s", zN, zCol);
      if( zExpr==0 ){ rc = SQLITE_NOMEM; break; }
      for(k=0; k<pJ->nCol[iTab] && sqlite3_stricmp(pJ->aazCol[iTab][k], zCol)!=0
                                && sqlite3_stricmp(pJ->aazCol[iTab][k], zExpr)!=0; k++){}
      sqlite3_free(zExpr);
      zExpr = k<pJ->nCol[iTab] ? sqlite3_mprintf("%s", pJ->aazCol[iTab][k])
                               : sqlite3_mprintf("\"%w\".\"%w\"", zN, zCol);
      pK->zText = sqlite3_mprintf("%s", zCol);
      if( zExpr==0 || pK->zText==0 ){ sqlite3_free(zExpr); rc = SQLITE_NOMEM; break; }
      pK->iCol = joinScanCol(pJ, iTab, zExpr);
      sqlite3_free(zExpr);
      if( pK->iCol<0 ){ rc = SQLITE_NOMEM; break; }
      e = zColl ? parCollFromName(zColl) : PAR_COLL_BINARY;
      pK->eColl = bUtf8 && e>=0 ? buildKnownColl(e, mReplaced) : PAR_COLL_UNKNOWN;
      /* (DESC reverses the whole order: NULLs, the least, last.) */
      pK->flags = sqlite3_column_int(pStmt, 2) ? PAR_KEY_DESC|PAR_KEY_NULLS_LAST : 0;
      n++;
    }
  }
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_NOMEM ){ sqlite3_free(zIdx); buildNoMem(pJ->pB); return 1; }
  pT->nOrd = n;
  if( n>0 ){
    pT->zOrdIdx = zIdx;
  }else{
    sqlite3_free(zIdx);
  }
  return 0;
}

/* Plan the join of the SELECT's FROM clause, when it has one: sets
** pPlan->pJoin, or pPlan->zJoinWhy. */
void buildJoinPlan(ParBuild *pB){
  ParPlan *pPlan = pB->pPlan;
  JoinBuild j;
  int i, e;
  if( pPlan->zWhy || pPlan->zExtract==0 ) return;
  if( pB->pSel->pFrom==0 ){
    if( pB->pSel->zTreeWhy && strchr(pPlan->zExtractFrom, ',') ){
      pPlan->zJoinWhy = sqlite3_mprintf("%s", pB->pSel->zTreeWhy);
    }
    return;
  }
  /* (A subquery alone in FROM: its own plan's rows, as a join of one.) */
  /* (A table alone whose rows SQLite reads in the order of an index when
  ** the result depends on it: read, and sorted into that order, as a
  ** join of one.) */
  if( pB->pSel->pFrom->nSrc<2 && (pB->pSel->pFrom->nSrc<1
                                  || (pB->pSel->pFrom->aSrc[0].eType!=PAR_SRC_SUBQUERY
                                      && pB->zOrderWhy==0)) ){
    return;
  }
  memset(&j, 0, sizeof(j));
  j.pB = pB;
  if( joinSources(&j)==0 && joinConditions(&j)==0 && joinLoops(&j)==0
   && joinAssemble(&j, buildOrderSensitive(pB))==0 ){
    joinOrder(&j);
  }
  if( (pPlan->zJoinWhy || pB->rc) && pPlan->pJoin ){
    parPlanJoinFree(pPlan->pJoin);
    pPlan->pJoin = 0;
  }
  for(i=0; i<PAR_JOIN_MAX_TAB; i++){
    int k;
    sqlite3_free(j.azSrc[i]);
    sqlite3_free(j.azSchema[i]);
    sqlite3_free(j.azLoop[i]);
    sqlite3_free(j.azInner[i]);
    parPlanFree(j.apSub[i]);
    for(k=0; k<j.nCol[i]; k++) sqlite3_free(j.aazCol[i][k]);
    sqlite3_free(j.aazCol[i]);
    sqlite3_free(sqlite3_str_finish(j.apWhere[i]));
  }
  for(i=0; i<j.nResid; i++) sqlite3_free(j.azResid[i]);
  for(i=0; i<j.nResidCol; i++) sqlite3_free(j.azResidCol[i]);
  sqlite3_free(sqlite3_str_finish(j.pResidText));
  sqlite3_free(sqlite3_str_finish(j.pExpose));
  sqlite3_free(sqlite3_str_finish(j.pCalc));
  sqlite3_free(sqlite3_str_finish(j.pCalcText));
  for(e=0; e<j.nEdge; e++){
    sqlite3_free(j.aEdge[e].zColL);
    sqlite3_free(j.aEdge[e].zColR);
    sqlite3_free(j.aEdge[e].zText);
  }
}
