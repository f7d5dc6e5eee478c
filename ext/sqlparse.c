/*
** sqlparse.c: SQLite's lexical rules and the structure of a SELECT.
**
**   ParSelect s;
**   parSelectParse("SELECT region, sum(amount) FROM sales GROUP BY 1", &s);
**   s.aCol[1].span, s.aAgg[0] (sum, argument "amount"), s.from, s.aGroup[0]
**   parSelectClear(&s);
**
** How it works:
**  1. parTokenize() splits the text the way SQLite's tokenizer does:
**     identifiers in all four quoting styles, 'strings' with '' escapes,
**     x'blobs', numbers (with exponents and hex), parameters, comments.
**  2. parSelectParse() walks the tokens: SELECT [DISTINCT|ALL] items FROM
**     ... WHERE ... GROUP BY ... HAVING ... ORDER BY ... LIMIT ..., tracking
**     parenthesis depth so that clause keywords inside subqueries and
**     function calls do not end a clause.  Expressions stay source spans.
**  3. In the select list, HAVING and ORDER BY it records every aggregate
**     call it accelerates (count, sum, total, avg, min, max, group_concat),
**     every other function call (the planner asks SQLite whether it is an
**     aggregate), and every identifier chain that may be a column
**     reference (the planner asks SQLite whether it is one).
**  Anything else (WITH, compound SELECTs, windows, FILTER, subqueries in
**  those clauses, SELECT *) sets zWhy: the statement then runs natively.
**  4. parseTree() then walks again, for the join and window operators: the
**     FROM clause into a tree of sources (parse.y's seltablist, joinop,
**     on_using), each window function call of the select list and ORDER BY
**     and each WINDOW definition into a ParWinSpec (parse.y's window,
**     frame_opt, frame_bound).  It reads the tokens alone and leaves zWhy
**     and everything above as they were.
**
**   ParSelect s;
**   parSelectParse("SELECT * FROM a LEFT JOIN b USING (k)", &s);
**   s.pFrom->aSrc[1]: eJoin PAR_JOIN_LEFT|PAR_JOIN_OUTER, azUsing {"k"}
**   parSelectParse("SELECT sum(v) OVER (ORDER BY ts ROWS 2 PRECEDING) FROM t", &s);
**   s.aWinCall[0]: zName "sum", aArg {v}, win.aOrder {ts}, win.eFrame
**     PAR_FRAME_ROWS, win.start {PAR_BOUND_PRECEDING, "2"}
*/
#include "sqlparse.h"

#include <ctype.h>
#include <string.h>

/* ---- tokenizer ------------------------------------------------------------- */

static int parIdChar(unsigned char c){
  return isalnum(c) || c=='_' || c=='$' || c>=0x80;
}

/* SQLite's sqlite3Isspace(), whatever the C library's locale says. */
static int parIsSpace(unsigned char c){
  return c==' ' || (c>='\t' && c<='\r');
}

ParToken *parTokenize(const char *zSql, int *pnTok){
  const unsigned char *z = (const unsigned char*)zSql;
  int nAlloc = 64, nTok = 0, i = 0;
  ParToken *a = sqlite3_malloc64(nAlloc*sizeof(ParToken));
  if( a==0 ) return 0;
  for(;;){
    int e, n = 1;
    unsigned char c = z[i];
    if( c==0 ){
      e = PT_EOF;
      n = 0;
    }else if( parIsSpace(c) ){
      i++;
      continue;
    }else if( c=='-' && z[i+1]=='-' ){
      while( z[i] && z[i]!='\n' ) i++;
      continue;
    }else if( c=='/' && z[i+1]=='*' ){
      i += 2;
      while( z[i] && !(z[i]=='*' && z[i+1]=='/') ) i++;
      if( z[i] ) i += 2;
      continue;
    }else if( (c=='x' || c=='X') && z[i+1]=='\'' ){
      e = PT_BLOB;
      n = 2;
      while( z[i+n] && z[i+n]!='\'' ) n++;
      if( z[i+n] ) n++;
    }else if( c=='\'' || c=='"' || c=='`' || c=='[' ){
      unsigned char cEnd = c=='[' ? ']' : c;
      e = c=='\'' ? PT_STRING : PT_QID;
      for(;;){
        if( z[i+n]==0 ){ e = PT_ILLEGAL; break; }
        if( z[i+n]==cEnd ){
          if( cEnd!=']' && z[i+n+1]==cEnd ){ n += 2; continue; }
          n++;
          break;
        }
        n++;
      }
    }else if( isdigit(c) || (c=='.' && isdigit(z[i+1])) ){
      e = PT_NUMBER;
      if( c=='0' && (z[i+1]=='x' || z[i+1]=='X') && isxdigit(z[i+2]) ){
        n = 2;
        while( isxdigit(z[i+n]) ) n++;
      }else{
        n = 0;
        while( isdigit(z[i+n]) ) n++;
        if( z[i+n]=='.' ){ n++; while( isdigit(z[i+n]) ) n++; }
        if( (z[i+n]=='e' || z[i+n]=='E')
         && (isdigit(z[i+n+1])
             || ((z[i+n+1]=='+' || z[i+n+1]=='-') && isdigit(z[i+n+2]))) ){
          n += 2;
          while( isdigit(z[i+n]) ) n++;
        }
      }
      /* "12abc" is one illegal token to SQLite; glue the rest on. */
      while( parIdChar(z[i+n]) ){ n++; e = PT_ILLEGAL; }
    }else if( parIdChar(c) && c!='$' ){
      /* ("$" goes on a name, but does not start one: it starts a parameter) */
      e = PT_ID;
      while( parIdChar(z[i+n]) ) n++;
    }else if( c=='?' ){
      e = PT_VARIABLE;
      while( isdigit(z[i+n]) ) n++;
    }else if( c==':' || c=='@' || c=='$' || c=='#' ){
      /* SQLite's rule (sqlite3GetToken, CC_VARALPHA and CC_DOLLAR): name
      ** characters, among which "::" may stand, then possibly a Tcl array
      ** index: once there is a name character, a "(" takes everything up
      ** to the first ")" into the token, which must come before any space
      ** or the end ("$a((((()" is one parameter).  No name character, or
      ** no ")", makes the token illegal. */
      int nName = 0;
      e = PT_VARIABLE;
      for(; z[i+n]; n++){
        if( parIdChar(z[i+n]) ){
          nName++;
        }else if( z[i+n]=='(' && nName>0 ){
          do{ n++; }while( z[i+n] && !parIsSpace(z[i+n]) && z[i+n]!=')' );
          if( z[i+n]==')' ) n++;
          else e = PT_ILLEGAL;
          break;
        }else if( z[i+n]==':' && z[i+n+1]==':' ){
          n++;
        }else{
          break;
        }
      }
      if( nName==0 ) e = PT_ILLEGAL;
    }else{
      switch( c ){
        case '(': e = PT_LP; break;
        case ')': e = PT_RP; break;
        case ',': e = PT_COMMA; break;
        case '.': e = PT_DOT; break;
        case ';': e = PT_SEMI; break;
        case '*': e = PT_STAR; break;
        default:
          e = PT_OP;
          if( (c=='|' && z[i+1]=='|') || (c=='<' && strchr("=>", z[i+1]) && z[i+1])
           || (c=='>' && z[i+1]=='=') || (c=='=' && z[i+1]=='=')
           || (c=='!' && z[i+1]=='=') || (c=='<' && z[i+1]=='<')
           || (c=='>' && z[i+1]=='>') || (c=='-' && z[i+1]=='>') ){
            n = 2;
            if( c=='-' && z[i+2]=='>' ) n = 3;
          }
          break;
      }
    }
    if( nTok==nAlloc ){
      ParToken *aNew;
      nAlloc *= 2;
      aNew = sqlite3_realloc64(a, nAlloc*sizeof(ParToken));
      if( aNew==0 ){ sqlite3_free(a); return 0; }
      a = aNew;
    }
    a[nTok].eType = e;
    a[nTok].i = i;
    a[nTok].n = n;
    nTok++;
    if( e==PT_EOF ) break;
    i += n;
  }
  *pnTok = nTok;
  return a;
}

int parTokIs(const char *zSql, const ParToken *t, const char *zKw){
  int n = (int)strlen(zKw);
  return t->eType==PT_ID && t->n==n && sqlite3_strnicmp(zSql + t->i, zKw, n)==0;
}

char *parSpanText(const char *zSql, ParSpan s){
  return sqlite3_mprintf("%.*s", s.iEnd - s.iStart, zSql + s.iStart);
}

char *parDequote(const char *z, int n){
  char *zOut = sqlite3_malloc(n+1);
  char q;
  int i, j = 0;
  if( zOut==0 ) return 0;
  q = n>0 ? z[0] : 0;
  if( q=='"' || q=='\'' || q=='`' || q=='[' ){
    char qEnd = q=='[' ? ']' : q;
    for(i=1; i<n-1; i++){
      zOut[j++] = z[i];
      if( z[i]==qEnd && qEnd!=']' && i+1<n-1 && z[i+1]==qEnd ) i++;
    }
  }else{
    memcpy(zOut, z, n);
    j = n;
  }
  zOut[j] = 0;
  return zOut;
}

/* ---- parser ------------------------------------------------------------------ */

typedef struct ParParse {
  ParSelect *p;
  const char *z;
  ParToken *a;
  int i;             /* current token */
  int rc;            /* SQLITE_NOMEM once an allocation failed */
  int bWinCall;      /* a window function call was seen (scanExpr) */
  int nInWindow;     /* scanning a window's definition: its frame words
                     ** (ROWS, UNBOUNDED ...) are no column names */
} ParParse;

static int isKw(ParParse *pP, int i, const char *zKw){
  return parTokIs(pP->z, &pP->a[i], zKw);
}

static void setWhy(ParParse *pP, const char *zWhy){
  if( pP->p->zWhy==0 ){
    pP->p->zWhy = sqlite3_mprintf("%s", zWhy);
    if( pP->p->zWhy==0 ) pP->rc = SQLITE_NOMEM;
  }
}

/* Keywords that end a clause at parenthesis depth 0. */
static int isClauseEnd(ParParse *pP, int i){
  static const char *az[] = { "FROM", "WHERE", "GROUP", "HAVING", "ORDER",
    "LIMIT", "WINDOW", "UNION", "INTERSECT", "EXCEPT" };
  int k;
  const ParToken *t = &pP->a[i];
  if( t->eType==PT_EOF || t->eType==PT_SEMI ) return 1;
  if( t->eType!=PT_ID ) return 0;
  for(k=0; k<(int)(sizeof(az)/sizeof(az[0])); k++){
    if( isKw(pP, i, az[k]) ){
      /* "x IS [NOT] DISTINCT FROM y" is an operator, not a FROM clause. */
      if( k==0 && i>=2 && isKw(pP, i-1, "DISTINCT")
       && (isKw(pP, i-2, "IS") || (i>=3 && isKw(pP, i-2, "NOT") && isKw(pP, i-3, "IS"))) ){
        return 0;
      }
      return 1;
    }
  }
  return 0;
}

/* Words that are operators or literals inside expressions: never a column
** reference and never an implicit alias. */
static int isExprKeyword(ParParse *pP, int i){
  static const char *az[] = { "AND", "OR", "NOT", "IS", "IN", "LIKE", "GLOB",
    "MATCH", "REGEXP", "BETWEEN", "ESCAPE", "CASE", "WHEN", "THEN", "ELSE",
    "END", "CAST", "AS", "COLLATE", "NULL", "ISNULL", "NOTNULL", "EXISTS",
    "DISTINCT", "ALL", "FILTER", "OVER", "SELECT", "ASC", "DESC", "NULLS",
    "RAISE", "CURRENT_TIME", "CURRENT_DATE", "CURRENT_TIMESTAMP", "FROM",
    "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "BY", "VALUES" };
  int k;
  for(k=0; k<(int)(sizeof(az)/sizeof(az[0])); k++){
    if( isKw(pP, i, az[k]) ) return 1;
  }
  return 0;
}

/* Words of a window definition (PARTITION BY, ORDER BY and the frame)
** that are not expressions. */
static int isWindowKeyword(ParParse *pP, int i){
  static const char *az[] = { "PARTITION", "ROWS", "RANGE", "GROUPS", "UNBOUNDED",
    "PRECEDING", "FOLLOWING", "CURRENT", "ROW", "EXCLUDE", "TIES", "OTHERS", "NO" };
  int k;
  for(k=0; k<(int)(sizeof(az)/sizeof(az[0])); k++){
    if( isKw(pP, i, az[k]) ) return 1;
  }
  return 0;
}

static int isName(ParParse *pP, int i){
  int e = pP->a[i].eType;
  return (e==PT_ID && !isExprKeyword(pP, i) && !(pP->nInWindow && isWindowKeyword(pP, i)))
      || e==PT_QID;
}

/* Make room for element n of the array *pa of n elements of sz bytes
** (arrays grow at powers of two).  0 when out of memory: *pa is kept as it
** was, so that parSelectClear() frees it and what it holds. */
static int growArray(ParParse *pP, void *pa, int n, size_t sz){
  void **pp = (void**)pa;
  if( (n & (n-1))==0 ){
    void *aNew = sqlite3_realloc64(*pp, (sqlite3_uint64)(n ? n*2 : 1)*sz);
    if( aNew==0 ){ pP->rc = SQLITE_NOMEM; return 0; }
    *pp = aNew;
  }
  return 1;
}

static ParSpan spanOf(ParParse *pP, int iFirst, int iEnd){
  ParSpan s;
  s.iTok = iFirst;
  s.iTokEnd = iEnd;
  s.iStart = pP->a[iFirst].i;
  s.iEnd = iEnd>iFirst ? pP->a[iEnd-1].i + pP->a[iEnd-1].n : s.iStart;
  return s;
}

static int aggFunc(ParParse *pP, int i){
  static const struct { const char *z; int e; } aAgg[] = {
    { "count", PAR_AGG_COUNT }, { "sum", PAR_AGG_SUM }, { "total", PAR_AGG_TOTAL },
    { "avg", PAR_AGG_AVG }, { "min", PAR_AGG_MIN }, { "max", PAR_AGG_MAX },
    { "group_concat", PAR_AGG_GROUP_CONCAT },
  };
  int k;
  for(k=0; k<(int)(sizeof(aAgg)/sizeof(aAgg[0])); k++){
    if( isKw(pP, i, aAgg[k].z) ) return aAgg[k].e;
  }
  return -1;
}

/* Index of the token after the parenthesis that closes the one at iLp, or
** iEnd when it does not close before token iEnd. */
static int skipParens(ParParse *pP, int iLp, int iEnd){
  int d = 0, i;
  for(i=iLp; i<iEnd && pP->a[i].eType!=PT_EOF; i++){
    if( pP->a[i].eType==PT_LP ) d++;
    if( pP->a[i].eType==PT_RP && --d==0 ) return i+1;
  }
  return i;
}

/* Scan the expression of tokens [iFirst, iEnd) of the select list, HAVING
** or ORDER BY: record aggregate calls, other calls and names that may be
** column references. */
static void scanExpr(ParParse *pP, int iFirst, int iEnd){
  ParSelect *p = pP->p;
  int i = iFirst;
  while( i<iEnd && pP->rc==SQLITE_OK ){
    const ParToken *t = &pP->a[i];
    if( t->eType==PT_LP && i+1<iEnd && isKw(pP, i+1, "SELECT") ){
      /* Its names are its own (or the outer SELECT's, when correlated:
      ** the planner asks SQLite which): kept whole, not scanned. */
      int iNext = skipParens(pP, i, iEnd);
      if( !growArray(pP, &p->aSub, p->nSub, sizeof(ParSpan)) ) return;
      p->aSub[p->nSub++] = spanOf(pP, i, iNext);
      i = iNext;
      continue;
    }
    if( t->eType==PT_ID && i+1<iEnd && pP->a[i+1].eType==PT_LP
     && (isKw(pP, i, "CAST") || !isExprKeyword(pP, i)) ){
      int iLp = i+1, iNext = skipParens(pP, iLp, iEnd), e = aggFunc(pP, i);
      int nArg = 0, j, d = 0, iArg = iLp+1, bDistinct = 0;
      ParSpan aArg[3];
      if( isKw(pP, i, "CAST") ){
        /* CAST(expr AS type): scan expr, skip the type name. */
        int iAs = iLp+1;
        for(d=0; iAs<iNext-1; iAs++){
          if( pP->a[iAs].eType==PT_LP ) d++;
          if( pP->a[iAs].eType==PT_RP ) d--;
          if( d==0 && isKw(pP, iAs, "AS") ) break;
        }
        scanExpr(pP, iLp+1, iAs);
        i = iNext;
        continue;
      }
      if( iNext<iEnd && (isKw(pP, iNext, "FILTER") || isKw(pP, iNext, "OVER")) ){
        /* A window function call (FILTER alone is an aggregate's): the
        ** window planner reads it from aWinCall (parseTree); here its
        ** arguments, FILTER and window are scanned for calls and names
        ** like any expression, and the walk goes on after it. */
        int k = iNext;
        if( isKw(pP, k, "FILTER") ){
          k = k+1<iEnd && pP->a[k+1].eType==PT_LP ? skipParens(pP, k+1, iEnd) : iEnd;
          if( k>=iEnd || !isKw(pP, k, "OVER") ){
            setWhy(pP, "an aggregate with FILTER");
            return;
          }
          scanExpr(pP, iNext+3, k-1);
        }
        pP->bWinCall = 1;
        scanExpr(pP, iLp+1, iNext-1);
        k++;
        if( k<iEnd && pP->a[k].eType==PT_LP ){
          int iRp = skipParens(pP, k, iEnd);
          pP->nInWindow++;
          scanExpr(pP, k+1, iRp-1);
          pP->nInWindow--;
          k = iRp;
        }else{
          k++;
        }
        i = k;
        continue;
      }
      if( isKw(pP, iArg, "DISTINCT") ){ bDistinct = 1; iArg++; }
      else if( isKw(pP, iArg, "ALL") ){ iArg++; }
      /* Split the arguments at commas of depth 1. */
      if( pP->a[iArg].eType!=PT_RP ){
        for(j=iArg, d=0; j<iNext; j++){
          int et = pP->a[j].eType;
          if( et==PT_LP ) d++;
          if( (et==PT_COMMA && d==0) || (et==PT_RP && d==0) ){
            if( nArg<3 ) aArg[nArg] = spanOf(pP, iArg, j);
            nArg++;
            iArg = j+1;
          }
          if( et==PT_RP ) d--;
        }
      }
      if( e==PAR_AGG_COUNT && nArg==1 && pP->a[iLp+1].eType==PT_STAR
       && iNext==iLp+3 ){
        e = PAR_AGG_COUNT_STAR;
        nArg = 0;
      }else if( e==PAR_AGG_COUNT && nArg==0 ){
        e = PAR_AGG_COUNT_STAR;
      }
      if( e>=0 && ((e==PAR_AGG_COUNT_STAR && !bDistinct)
                || (e==PAR_AGG_GROUP_CONCAT && (nArg==1 || nArg==2))
                || (e!=PAR_AGG_GROUP_CONCAT && e!=PAR_AGG_COUNT_STAR && nArg==1)) ){
        ParAggCall *pA;
        if( bDistinct && nArg!=1 ){
          setWhy(pP, "DISTINCT aggregate with more than one argument");
          return;
        }
        if( !growArray(pP, &p->aAgg, p->nAgg, sizeof(ParAggCall)) ) return;
        pA = &p->aAgg[p->nAgg++];
        memset(pA, 0, sizeof(*pA));
        pA->eFunc = e;
        pA->bDistinct = bDistinct;
        pA->call = spanOf(pP, i, iNext);
        pA->nArg = nArg;
        for(j=0; j<nArg && j<2; j++) pA->aArg[j] = aArg[j];
      }else{
        /* Another function: its arguments are ordinary expressions. */
        if( !growArray(pP, &p->aCall, p->nCall, sizeof(ParSpan))
         || !growArray(pP, &p->aCallArgc, p->nCall, sizeof(int)) ){
          return;
        }
        p->aCall[p->nCall] = spanOf(pP, i, i+1);
        p->aCallArgc[p->nCall] = (pP->a[iLp+1].eType==PT_STAR) ? 0 : nArg;
        p->nCall++;
        if( bDistinct ){
          setWhy(pP, "DISTINCT in a call of a function that is not accelerated");
          return;
        }
        scanExpr(pP, iLp+1, iNext-1);
      }
      i = iNext;
      continue;
    }
    if( isKw(pP, i, "COLLATE") ){
      i += 2;   /* the collation name is not a column */
      continue;
    }
    if( t->eType==PT_STAR ){
      /* Multiplication, or "*" / "t.*" as a select item (caught there). */
      i++;
      continue;
    }
    if( isName(pP, i) && !(i>iFirst && pP->a[i-1].eType==PT_DOT) ){
      /* An identifier chain a, a.b or a.b.c. */
      int j = i+1;
      while( j+1<iEnd && pP->a[j].eType==PT_DOT
          && (pP->a[j+1].eType==PT_ID || pP->a[j+1].eType==PT_QID) ){
        j += 2;
      }
      if( j<iEnd && pP->a[j].eType==PT_DOT && j+1<iEnd && pP->a[j+1].eType==PT_STAR ){
        setWhy(pP, "SELECT table.*");
        return;
      }
      if( !growArray(pP, &p->aRef, p->nRef, sizeof(ParSpan)) ) return;
      p->aRef[p->nRef++] = spanOf(pP, i, j);
      i = j;
      continue;
    }
    i++;
  }
}

/* Fill *pE from the ORDER BY term of tokens [iFirst, iEnd): the expression,
** its ASC/DESC and NULLS FIRST/LAST suffix, and the collation its COLLATE
** operators give it. */
static void orderTerm(ParParse *pP, ParExpr *pE, int iFirst, int iEnd){
  int j = iEnd;
  if( j-2>=iFirst && isKw(pP, j-2, "NULLS") ){
    pE->eNulls = isKw(pP, j-1, "FIRST") ? PAR_NULLS_FIRST : PAR_NULLS_LAST;
    j -= 2;
  }
  if( j-1>=iFirst && (isKw(pP, j-1, "ASC") || isKw(pP, j-1, "DESC")) ){
    pE->bDesc = isKw(pP, j-1, "DESC");
    j--;
  }
  pE->suffix = spanOf(pP, j, iEnd);
  pE->span = spanOf(pP, iFirst, j);
  pE->iCollTok = parExprCollateTok(pP->z, pP->a, iFirst, j);
  if( pE->iCollTok>=0 ){
    const ParToken *t = &pP->a[pE->iCollTok];
    pE->zCollate = parDequote(pP->z + t->i, t->n);
    if( pE->zCollate==0 ) pP->rc = SQLITE_NOMEM;
  }
}

/* Parse a comma-separated list of expressions up to a clause end; bItem:
** select list (aliases), bOrder: ORDER BY terms (ASC/DESC/NULLS). */
static void parseList(ParParse *pP, ParExpr **paList, int *pnList, int bItem, int bOrder){
  for(;;){
    int iFirst = pP->i, iEnd, d = 0;
    ParExpr *pE;
    while( pP->rc==SQLITE_OK ){
      int e = pP->a[pP->i].eType;
      if( e==PT_EOF ) break;
      if( d==0 && (e==PT_COMMA || isClauseEnd(pP, pP->i) || e==PT_RP) ) break;
      if( e==PT_LP ) d++;
      if( e==PT_RP ) d--;
      pP->i++;
    }
    iEnd = pP->i;
    if( !growArray(pP, paList, *pnList, sizeof(ParExpr)) ) return;
    pE = &(*paList)[(*pnList)++];
    memset(pE, 0, sizeof(*pE));
    if( bItem ){
      int iAlias = -1;
      if( iEnd-iFirst>=3 && isKw(pP, iEnd-2, "AS") ){
        iAlias = iEnd-1;
      }else if( iEnd-iFirst>=2 ){
        int eL = pP->a[iEnd-1].eType, eP = pP->a[iEnd-2].eType;
        if( (isName(pP, iEnd-1) || eL==PT_STRING)
         && (isName(pP, iEnd-2) || eP==PT_QID || eP==PT_STRING || eP==PT_NUMBER
             || eP==PT_BLOB || eP==PT_VARIABLE || eP==PT_RP
             || isKw(pP, iEnd-2, "END") || isKw(pP, iEnd-2, "NULL")) ){
          iAlias = iEnd-1;
        }
      }
      if( iAlias>=0 ){
        pE->alias = spanOf(pP, iAlias, iAlias+1);
        pE->zAlias = parDequote(pP->z + pP->a[iAlias].i, pP->a[iAlias].n);
        if( pE->zAlias==0 ){ pP->rc = SQLITE_NOMEM; return; }
        iEnd = isKw(pP, iAlias-1, "AS") ? iAlias-1 : iAlias;
      }
      if( iEnd-iFirst==1 && pP->a[iFirst].eType==PT_STAR ){
        /* "*" alone is the SELECT's columns (the sort planner takes them
        ** as they come); anywhere else it is not followed. */
        if( *pnList==1 && pP->a[iEnd].eType!=PT_COMMA ) pP->p->bStar = 1;
        else setWhy(pP, "SELECT *");
      }
    }
    pE->iCollTok = -1;
    if( bOrder ){
      orderTerm(pP, pE, iFirst, iEnd);
      if( pP->rc ) return;
      iEnd = pE->span.iTokEnd;
    }
    pE->span = spanOf(pP, iFirst, iEnd);
    if( bItem || bOrder ) scanExpr(pP, iFirst, iEnd);
    if( pP->a[pP->i].eType!=PT_COMMA ) return;
    pP->i++;
  }
}

/* Split the span after LIMIT into its expressions: "a", "a OFFSET b" or
** "a, b" (then a is the offset), at the first OFFSET or comma outside
** parentheses. */
static void parseLimit(ParParse *pP, ParSpan s){
  ParSelect *p = pP->p;
  int i, d = 0;
  for(i=s.iTok; i<s.iTokEnd; i++){
    int e = pP->a[i].eType;
    if( e==PT_LP ) d++;
    if( e==PT_RP ) d--;
    if( d==0 && (e==PT_COMMA || isKw(pP, i, "OFFSET")) ) break;
  }
  p->limitExpr = spanOf(pP, s.iTok, i);
  if( i<s.iTokEnd ){
    p->bOffset = 1;
    p->offsetExpr = spanOf(pP, i+1, s.iTokEnd);
    if( pP->a[i].eType==PT_COMMA ){
      ParSpan t = p->limitExpr;
      p->limitExpr = p->offsetExpr;
      p->offsetExpr = t;
    }
  }
}

/* Advance to the end of the clause that starts at the current token. */
static ParSpan parseClause(ParParse *pP){
  int iFirst = pP->i, d = 0;
  for(;;){
    int e = pP->a[pP->i].eType;
    if( e==PT_EOF ) break;
    if( d==0 && (isClauseEnd(pP, pP->i) || e==PT_RP) ) break;
    if( e==PT_LP ) d++;
    if( e==PT_RP ) d--;
    pP->i++;
  }
  return spanOf(pP, iFirst, pP->i);
}

/* ---- FROM as a tree, windows ------------------------------------------------
**
** A second walk over what the first one found, filling ParFrom and the
** window structures; it never touches zWhy or what the planner reads
** today.  What it does not follow (SQL that SQLite accepts but this
** parser does not expect) leaves the structure out and says so in
** zTreeWhy. */

static void setTreeWhy(ParParse *pP, const char *zWhy){
  if( pP->p->zTreeWhy==0 ){
    pP->p->zTreeWhy = sqlite3_mprintf("%s", zWhy);
    if( pP->p->zTreeWhy==0 ) pP->rc = SQLITE_NOMEM;
  }
}

/* A dequoted copy of token i into *pz; 0 (and rc set) when out of memory. */
static int tokName(ParParse *pP, int i, ParSpan *pSpan, char **pz){
  *pSpan = spanOf(pP, i, i+1);
  *pz = parDequote(pP->z + pP->a[i].i, pP->a[i].n);
  if( *pz==0 ){ pP->rc = SQLITE_NOMEM; return 0; }
  return 1;
}

/* A token that may be a name (parse.y's nm: an identifier, a keyword that
** falls back to one, a join keyword, a string). */
static int isNm(ParParse *pP, int i){
  int e = pP->a[i].eType;
  return e==PT_ID || e==PT_QID || e==PT_STRING;
}

/* The index of the first comma of depth 0 in [i, iEnd), or iEnd. */
static int listNext(ParParse *pP, int i, int iEnd){
  int d = 0;
  for(; i<iEnd; i++){
    int e = pP->a[i].eType;
    if( e==PT_LP ) d++;
    if( e==PT_RP ) d--;
    if( d==0 && e==PT_COMMA ) break;
  }
  return i;
}

/* Split [iFirst, iEnd) at commas of depth 0 into *paSpan (none when the
** range is empty).  0 on a missing item or out of memory. */
static int splitList(ParParse *pP, int iFirst, int iEnd, ParSpan **paSpan, int *pn){
  int i = iFirst;
  if( iFirst>=iEnd ) return 1;
  for(;;){
    int j = listNext(pP, i, iEnd);
    if( j==i ) return 0;
    if( !growArray(pP, paSpan, *pn, sizeof(ParSpan)) ) return 0;
    (*paSpan)[(*pn)++] = spanOf(pP, i, j);
    if( j>=iEnd ) return 1;
    i = j+1;
  }
}

static const char *azJoinKw[] = {
  "NATURAL", "LEFT", "RIGHT", "FULL", "OUTER", "INNER", "CROSS"
};
static const int aJoinKwFlags[] = {
  PAR_JOIN_NATURAL, PAR_JOIN_LEFT|PAR_JOIN_OUTER, PAR_JOIN_RIGHT|PAR_JOIN_OUTER,
  PAR_JOIN_LEFT|PAR_JOIN_RIGHT|PAR_JOIN_OUTER, PAR_JOIN_OUTER, PAR_JOIN_INNER,
  PAR_JOIN_INNER|PAR_JOIN_CROSS
};

/* PAR_JOIN_* of join keyword i, or 0. */
static int joinKw(ParParse *pP, int i){
  int k;
  for(k=0; k<(int)(sizeof(azJoinKw)/sizeof(azJoinKw[0])); k++){
    if( isKw(pP, i, azJoinKw[k]) ) return aJoinKwFlags[k];
  }
  return 0;
}

/* If a join operator (parse.y's joinop: "," or JOIN or one to three join
** keywords and JOIN) starts at token i of [i, iEnd), the index after it
** and its PAR_JOIN_* in *peJoin; else 0. */
static int joinOpAt(ParParse *pP, int i, int iEnd, int *peJoin){
  int j, e = 0;
  if( i>=iEnd ) return 0;
  if( pP->a[i].eType==PT_COMMA ){ *peJoin = PAR_JOIN_INNER|PAR_JOIN_COMMA; return i+1; }
  for(j=i; j<iEnd && j<i+4; j++){
    int f;
    if( isKw(pP, j, "JOIN") ){
      if( (e & (PAR_JOIN_LEFT|PAR_JOIN_RIGHT))==0 ) e |= PAR_JOIN_INNER;
      *peJoin = e;
      return j+1;
    }
    if( (f = joinKw(pP, j))==0 ) return 0;
    e |= f;
  }
  return 0;
}

/* Words that end a source's name before its implicit alias could. */
static int isSourceStop(ParParse *pP, int i){
  static const char *az[] = { "AS", "ON", "USING", "INDEXED", "NOT", "JOIN",
    "WHERE", "GROUP", "HAVING", "WINDOW", "ORDER", "LIMIT", "UNION", "EXCEPT",
    "INTERSECT" };
  int k;
  if( joinKw(pP, i) ) return 1;
  for(k=0; k<(int)(sizeof(az)/sizeof(az[0])); k++){
    if( isKw(pP, i, az[k]) ) return 1;
  }
  return 0;
}

static void parFromFree(ParFrom *pF);

static void parFromSrcClear(ParFromSrc *pS){
  int i;
  sqlite3_free(pS->zSchema);
  sqlite3_free(pS->zName);
  sqlite3_free(pS->zAlias);
  sqlite3_free(pS->zIndex);
  sqlite3_free(pS->aArg);
  parFromFree(pS->pGroup);
  for(i=0; pS->azUsing && i<pS->nUsing; i++) sqlite3_free(pS->azUsing[i]);
  sqlite3_free(pS->aUsing);
  sqlite3_free(pS->azUsing);
}

static void parFromFree(ParFrom *pF){
  int i;
  if( pF==0 ) return;
  for(i=0; i<pF->nSrc; i++) parFromSrcClear(&pF->aSrc[i]);
  sqlite3_free(pF->aSrc);
  sqlite3_free(pF);
}

/* Parse the sources of tokens [iFirst, iEnd) into pF (parse.y's
** seltablist).  0 when they are not followed, or out of memory. */
static int parseFrom(ParParse *pP, int iFirst, int iEnd, ParFrom *pF){
  int i = iFirst, eJoin = 0, iJoin = iFirst;
  for(;;){
    ParFromSrc *pS;
    int iSrc = i;
    if( i>=iEnd || !growArray(pP, &pF->aSrc, pF->nSrc, sizeof(ParFromSrc)) ) return 0;
    pS = &pF->aSrc[pF->nSrc++];
    memset(pS, 0, sizeof(*pS));
    pS->eJoin = eJoin;
    pS->joinOp = spanOf(pP, iJoin, iSrc);
    if( pP->a[i].eType==PT_LP ){
      int iNext = skipParens(pP, i, iEnd);
      if( pP->a[iNext-1].eType!=PT_RP || iNext-1<=i+1 ) return 0;
      pS->inner = spanOf(pP, i+1, iNext-1);
      if( isKw(pP, i+1, "SELECT") || isKw(pP, i+1, "VALUES") || isKw(pP, i+1, "WITH") ){
        pS->eType = PAR_SRC_SUBQUERY;
      }else{
        pS->eType = PAR_SRC_GROUP;
        pS->pGroup = sqlite3_malloc(sizeof(ParFrom));
        if( pS->pGroup==0 ){ pP->rc = SQLITE_NOMEM; return 0; }
        memset(pS->pGroup, 0, sizeof(ParFrom));
        if( !parseFrom(pP, i+1, iNext-1, pS->pGroup) ) return 0;
      }
      i = iNext;
    }else if( isNm(pP, i) ){
      pS->eType = PAR_SRC_TABLE;
      if( i+2<iEnd && pP->a[i+1].eType==PT_DOT && isNm(pP, i+2) ){
        if( !tokName(pP, i, &pS->schema, &pS->zSchema) ) return 0;
        i += 2;
      }
      if( !tokName(pP, i, &pS->name, &pS->zName) ) return 0;
      i++;
      if( i<iEnd && pP->a[i].eType==PT_LP ){
        int iNext = skipParens(pP, i, iEnd);
        if( pP->a[iNext-1].eType!=PT_RP ) return 0;
        pS->eType = PAR_SRC_FUNC;
        pS->inner = spanOf(pP, i+1, iNext-1);
        if( !splitList(pP, i+1, iNext-1, &pS->aArg, &pS->nArg) ) return 0;
        i = iNext;
      }
    }else{
      return 0;
    }
    /* parse.y's as: AS nm, or an identifier or string. */
    if( i+1<iEnd && isKw(pP, i, "AS") && isNm(pP, i+1) ){
      if( !tokName(pP, i+1, &pS->alias, &pS->zAlias) ) return 0;
      i += 2;
    }else if( i<iEnd && isNm(pP, i) && !isSourceStop(pP, i) ){
      if( !tokName(pP, i, &pS->alias, &pS->zAlias) ) return 0;
      i++;
    }
    if( pS->eType==PAR_SRC_TABLE && i+2<iEnd && isKw(pP, i, "INDEXED")
     && isKw(pP, i+1, "BY") && isNm(pP, i+2) ){
      pS->eIndexed = PAR_INDEXED_BY;
      if( !tokName(pP, i+2, &pS->index, &pS->zIndex) ) return 0;
      i += 3;
    }else if( pS->eType==PAR_SRC_TABLE && i+1<iEnd && isKw(pP, i, "NOT")
           && isKw(pP, i+1, "INDEXED") ){
      pS->eIndexed = PAR_INDEXED_NOT;
      i += 2;
    }
    pS->span = spanOf(pP, iSrc, i);
    if( i<iEnd && isKw(pP, i, "ON") ){
      /* The expression runs to the next join operator of depth 0 (a join
      ** keyword after "." is a column name). */
      int j, d = 0, e;
      for(j=i+1; j<iEnd; j++){
        if( pP->a[j].eType==PT_LP ) d++;
        if( pP->a[j].eType==PT_RP ) d--;
        if( d==0 && pP->a[j-1].eType!=PT_DOT && joinOpAt(pP, j, iEnd, &e) ) break;
      }
      if( j==i+1 ) return 0;
      pS->bOn = 1;
      pS->on = spanOf(pP, i+1, j);
      i = j;
    }else if( i+1<iEnd && isKw(pP, i, "USING") && pP->a[i+1].eType==PT_LP ){
      int iNext = skipParens(pP, i+1, iEnd), k;
      pS->bUsing = 1;
      if( !splitList(pP, i+2, iNext-1, &pS->aUsing, &pS->nUsing) ) return 0;
      pS->azUsing = sqlite3_malloc64(sizeof(char*)*(pS->nUsing+1));
      if( pS->azUsing==0 ){ pP->rc = SQLITE_NOMEM; return 0; }
      memset(pS->azUsing, 0, sizeof(char*)*(pS->nUsing+1));
      for(k=0; k<pS->nUsing; k++){
        ParSpan u = pS->aUsing[k];
        if( u.iTokEnd!=u.iTok+1 || !isNm(pP, u.iTok) ) return 0;
        if( !tokName(pP, u.iTok, &u, &pS->azUsing[k]) ) return 0;
      }
      i = iNext;
    }
    if( i>=iEnd ) return 1;
    iJoin = i;
    if( (i = joinOpAt(pP, i, iEnd, &eJoin))==0 ) return 0;
  }
}

/* Can the token before i end an expression (so that a ROWS, RANGE or
** GROUPS at i starts a frame rather than being a column name)? */
static int endsExpr(ParParse *pP, int i){
  static const char *az[] = { "AND", "OR", "NOT", "IS", "IN", "LIKE", "GLOB",
    "MATCH", "REGEXP", "BETWEEN", "ESCAPE", "CASE", "WHEN", "THEN", "ELSE",
    "CAST", "AS", "COLLATE", "BY" };
  int k, e = pP->a[i-1].eType;
  if( e==PT_QID || e==PT_STRING || e==PT_NUMBER || e==PT_BLOB || e==PT_VARIABLE
   || e==PT_RP ){
    return 1;
  }
  if( e!=PT_ID ) return 0;
  for(k=0; k<(int)(sizeof(az)/sizeof(az[0])); k++){
    if( isKw(pP, i-1, az[k]) ) return 0;
  }
  return 1;
}

static int startsFrame(ParParse *pP, int i){
  return (isKw(pP, i, "ROWS") || isKw(pP, i, "RANGE") || isKw(pP, i, "GROUPS"))
      && endsExpr(pP, i);
}

/* The first token of depth 0 in [i, iEnd) that ends a PARTITION BY or
** ORDER BY list: ORDER BY or a frame. */
static int windowListEnd(ParParse *pP, int i, int iEnd){
  int d = 0;
  for(; i<iEnd; i++){
    int e = pP->a[i].eType;
    if( e==PT_LP ) d++;
    if( e==PT_RP ) d--;
    if( d==0 && ((isKw(pP, i, "ORDER") && isKw(pP, i+1, "BY")) || startsFrame(pP, i)) ){
      break;
    }
  }
  return i;
}

/* One frame bound from token i of [i, iEnd): the index after it, or 0. */
static int frameBound(ParParse *pP, int i, int iEnd, ParFrameBound *pB){
  int j, d = 0;
  if( i+1>=iEnd ) return 0;
  if( isKw(pP, i, "UNBOUNDED") && isKw(pP, i+1, "PRECEDING") ){
    pB->eBound = PAR_BOUND_UNBOUNDED_PRECEDING;
    return i+2;
  }
  if( isKw(pP, i, "UNBOUNDED") && isKw(pP, i+1, "FOLLOWING") ){
    pB->eBound = PAR_BOUND_UNBOUNDED_FOLLOWING;
    return i+2;
  }
  if( isKw(pP, i, "CURRENT") && isKw(pP, i+1, "ROW") ){
    pB->eBound = PAR_BOUND_CURRENT_ROW;
    return i+2;
  }
  for(j=i; j<iEnd; j++){
    int e = pP->a[j].eType;
    if( e==PT_LP ) d++;
    if( e==PT_RP ) d--;
    if( d==0 && j>i && (isKw(pP, j, "PRECEDING") || isKw(pP, j, "FOLLOWING")) ){
      pB->eBound = isKw(pP, j, "PRECEDING") ? PAR_BOUND_PRECEDING : PAR_BOUND_FOLLOWING;
      pB->expr = spanOf(pP, i, j);
      return j+1;
    }
  }
  return 0;
}

static void parWinSpecClear(ParWinSpec *pW){
  int i;
  sqlite3_free(pW->zName);
  sqlite3_free(pW->zBase);
  sqlite3_free(pW->aPartition);
  for(i=0; i<pW->nOrder; i++) sqlite3_free(pW->aOrder[i].zCollate);
  sqlite3_free(pW->aOrder);
}

static void parWinCallClear(ParWinCall *pC){
  sqlite3_free(pC->zName);
  sqlite3_free(pC->aArg);
  sqlite3_free(pC->zOver);
  parWinSpecClear(&pC->win);
}

/* Parse the window of tokens [iFirst, iEnd) (inside its parentheses) into
** pW.  0 when it is not followed, or out of memory. */
static int parseWindow(ParParse *pP, int iFirst, int iEnd, ParWinSpec *pW){
  int i = iFirst, j;
  pW->spec = spanOf(pP, iFirst, iEnd);
  if( i<iEnd && isNm(pP, i) && !(pP->a[i].eType==PT_ID
      && (isKw(pP, i, "PARTITION") || isKw(pP, i, "ORDER") || isKw(pP, i, "ROWS")
          || isKw(pP, i, "RANGE") || isKw(pP, i, "GROUPS"))) ){
    if( !tokName(pP, i, &pW->base, &pW->zBase) ) return 0;
    i++;
  }
  if( i+1<iEnd && isKw(pP, i, "PARTITION") && isKw(pP, i+1, "BY") ){
    j = windowListEnd(pP, i+2, iEnd);
    if( j==i+2 || !splitList(pP, i+2, j, &pW->aPartition, &pW->nPartition) ) return 0;
    i = j;
  }
  if( i+1<iEnd && isKw(pP, i, "ORDER") && isKw(pP, i+1, "BY") ){
    int iEndList = windowListEnd(pP, i+2, iEnd);
    if( iEndList==i+2 ) return 0;
    for(i+=2; ; i=j+1){
      ParExpr *pE;
      j = listNext(pP, i, iEndList);
      if( j==i || !growArray(pP, &pW->aOrder, pW->nOrder, sizeof(ParExpr)) ) return 0;
      pE = &pW->aOrder[pW->nOrder++];
      memset(pE, 0, sizeof(*pE));
      orderTerm(pP, pE, i, j);
      if( pP->rc ) return 0;
      if( j>=iEndList ) break;
    }
    i = iEndList;
  }
  if( i<iEnd && (startsFrame(pP, i)
                 || (i==iFirst && (isKw(pP, i, "ROWS") || isKw(pP, i, "RANGE")
                                   || isKw(pP, i, "GROUPS")))) ){
    /* (A frame alone follows the "(", which ends no expression.) */
    int iFrame = i;
    pW->eFrame = isKw(pP, i, "ROWS") ? PAR_FRAME_ROWS
               : isKw(pP, i, "RANGE") ? PAR_FRAME_RANGE : PAR_FRAME_GROUPS;
    i++;
    if( i<iEnd && isKw(pP, i, "BETWEEN") ){
      pW->bBetween = 1;
      if( (i = frameBound(pP, i+1, iEnd, &pW->start))==0 ) return 0;
      if( !(i<iEnd && isKw(pP, i, "AND")) ) return 0;
      if( (i = frameBound(pP, i+1, iEnd, &pW->end))==0 ) return 0;
    }else{
      if( (i = frameBound(pP, i, iEnd, &pW->start))==0 ) return 0;
      pW->end.eBound = PAR_BOUND_CURRENT_ROW;
      pW->end.expr = spanOf(pP, i, i);
    }
    if( i<iEnd && isKw(pP, i, "EXCLUDE") ){
      if( i+2<iEnd && isKw(pP, i+1, "NO") && isKw(pP, i+2, "OTHERS") ){
        pW->eExclude = PAR_EXCLUDE_NO_OTHERS;
        i += 3;
      }else if( i+2<iEnd && isKw(pP, i+1, "CURRENT") && isKw(pP, i+2, "ROW") ){
        pW->eExclude = PAR_EXCLUDE_CURRENT_ROW;
        i += 3;
      }else if( i+1<iEnd && isKw(pP, i+1, "GROUP") ){
        pW->eExclude = PAR_EXCLUDE_GROUP;
        i += 2;
      }else if( i+1<iEnd && isKw(pP, i+1, "TIES") ){
        pW->eExclude = PAR_EXCLUDE_TIES;
        i += 2;
      }else{
        return 0;
      }
    }
    pW->frame = spanOf(pP, iFrame, i);
  }
  return i==iEnd;
}

/* The WINDOW clause from its keyword at token pP->i: each "name AS (window)"
** into aWinDef; pP->i ends after the last. */
static void parseWindowClause(ParParse *pP){
  ParSelect *p = pP->p;
  int i = pP->i + 1;
  for(;;){
    ParWinSpec *pW;
    int iNext;
    if( !(isNm(pP, i) && isKw(pP, i+1, "AS") && pP->a[i+2].eType==PT_LP) ){
      setTreeWhy(pP, "a WINDOW clause the parser does not follow");
      return;
    }
    iNext = skipParens(pP, i+2, p->nTok);
    if( !growArray(pP, &p->aWinDef, p->nWinDef, sizeof(ParWinSpec)) ) return;
    pW = &p->aWinDef[p->nWinDef++];
    memset(pW, 0, sizeof(*pW));
    if( !tokName(pP, i, &pW->name, &pW->zName) ) return;
    if( !parseWindow(pP, i+3, iNext-1, pW) ){
      if( pP->rc==SQLITE_OK ){
        parWinSpecClear(&p->aWinDef[--p->nWinDef]);
        setTreeWhy(pP, "a WINDOW clause the parser does not follow");
      }
      return;
    }
    /* Its expressions, for the group-by planner's final SQL, which
    ** repeats the clause (aggregates in it, column references). */
    {
      int nAgg = p->nAgg;
      pP->nInWindow++;
      scanExpr(pP, i+3, iNext-1);
      pP->nInWindow--;
      if( p->nAgg>nAgg ) p->bWinClauseAgg = pW->bAgg = 1;
    }
    pP->p->winClause = spanOf(pP, pP->p->winClause.iTokEnd ? pP->p->winClause.iTok : i,
                              iNext);
    pP->i = i = iNext;
    if( pP->a[i].eType!=PT_COMMA ) return;
    i++;
  }
}

/* Record the window function call whose name is token i and whose
** argument list ends before token iRp (its ")"), iEnd bounding what may
** follow.  Returns the index after the call, or 0 when it is not followed
** (or out of memory). */
static int parseWinCall(ParParse *pP, int i, int iRp, int iEnd, int eClause, int iExpr){
  ParSelect *p = pP->p;
  ParWinCall *pC;
  int k = iRp+1, iArg = i+2;
  if( !growArray(pP, &p->aWinCall, p->nWinCall, sizeof(ParWinCall)) ) return 0;
  pC = &p->aWinCall[p->nWinCall++];
  memset(pC, 0, sizeof(*pC));
  pC->eClause = eClause;
  pC->iExpr = iExpr;
  if( !tokName(pP, i, &pC->name, &pC->zName) ) return 0;
  if( iArg+1==iRp && pP->a[iArg].eType==PT_STAR ){
    pC->bStar = 1;
  }else{
    if( isKw(pP, iArg, "DISTINCT") ){ pC->bDistinct = 1; iArg++; }
    else if( isKw(pP, iArg, "ALL") ){ iArg++; }
    if( !splitList(pP, iArg, iRp, &pC->aArg, &pC->nArg) ) return 0;
  }
  if( isKw(pP, k, "FILTER") ){
    int iNext = skipParens(pP, k+1, iEnd);
    if( !isKw(pP, k+2, "WHERE") || iNext-1<=k+3 ) return 0;
    pC->bFilter = 1;
    pC->filter = spanOf(pP, k+3, iNext-1);
    k = iNext;
  }
  if( !isKw(pP, k, "OVER") || k+1>=iEnd ) return 0;
  k++;
  if( pP->a[k].eType==PT_LP ){
    int iNext = skipParens(pP, k, iEnd);
    pC->over = spanOf(pP, k, iNext);
    if( !parseWindow(pP, k+1, iNext-1, &pC->win) ) return 0;
    k = iNext;
  }else{
    pC->over = spanOf(pP, k, k+1);
    if( !tokName(pP, k, &pC->overName, &pC->zOver) ) return 0;
    k++;
  }
  pC->call = spanOf(pP, i, k);
  return k;
}

/* Find the window function calls of the expression [iFirst, iEnd), not
** looking into subqueries (theirs are their own). */
static void scanWinCalls(ParParse *pP, int iFirst, int iEnd, int eClause, int iExpr){
  int i = iFirst;
  while( i<iEnd && pP->rc==SQLITE_OK ){
    int e = pP->a[i].eType;
    if( e==PT_LP && i+1<iEnd && (isKw(pP, i+1, "SELECT") || isKw(pP, i+1, "WITH")
                                 || isKw(pP, i+1, "VALUES")) ){
      i = skipParens(pP, i, iEnd);
      continue;
    }
    if( (e==PT_ID || e==PT_QID) && i+1<iEnd && pP->a[i+1].eType==PT_LP
     && !(i>iFirst && pP->a[i-1].eType==PT_DOT) ){
      int iNext = skipParens(pP, i+1, iEnd), k = iNext;
      if( k<iEnd && isKw(pP, k, "FILTER") && k+1<iEnd && pP->a[k+1].eType==PT_LP ){
        k = skipParens(pP, k+1, iEnd);
      }
      /* OVER is a keyword before "(" or a name (SQLite's tokenizer). */
      if( k+1<iEnd && isKw(pP, k, "OVER")
       && (pP->a[k+1].eType==PT_LP || isNm(pP, k+1)) ){
        int iAfter = parseWinCall(pP, i, iNext-1, iEnd, eClause, iExpr);
        if( iAfter==0 ){
          if( pP->rc==SQLITE_OK ){
            /* Left out, not half there. */
            ParSelect *p = pP->p;
            parWinCallClear(&p->aWinCall[--p->nWinCall]);
            setTreeWhy(pP, "a window function call the parser does not follow");
          }
          return;
        }
        i = iAfter;
        continue;
      }
    }
    i++;
  }
}

/* The second walk (see above). */
static void parseTree(ParParse *pP){
  ParSelect *p = pP->p;
  int i;
  if( p->bFrom && p->from.iTokEnd>p->from.iTok ){
    p->pFrom = sqlite3_malloc(sizeof(ParFrom));
    if( p->pFrom==0 ){ pP->rc = SQLITE_NOMEM; return; }
    memset(p->pFrom, 0, sizeof(ParFrom));
    if( !parseFrom(pP, p->from.iTok, p->from.iTokEnd, p->pFrom) ){
      parFromFree(p->pFrom);
      p->pFrom = 0;
      if( pP->rc ) return;
      setTreeWhy(pP, "a FROM clause the parser does not follow");
    }
  }
  for(i=0; i<p->nCol && pP->rc==SQLITE_OK; i++){
    scanWinCalls(pP, p->aCol[i].span.iTok, p->aCol[i].span.iTokEnd, PAR_CLAUSE_SELECT, i);
  }
  for(i=0; i<p->nOrder && pP->rc==SQLITE_OK; i++){
    scanWinCalls(pP, p->aOrder[i].span.iTok, p->aOrder[i].span.iTokEnd, PAR_CLAUSE_ORDER, i);
  }
}

int parSelectParse(const char *zSql, ParSelect *p){
  ParParse sP;
  int i, d;
  memset(p, 0, sizeof(*p));
  memset(&sP, 0, sizeof(sP));
  p->zSql = zSql;
  p->having.iCollTok = -1;
  p->aTok = parTokenize(zSql, &p->nTok);
  if( p->aTok==0 ) return SQLITE_NOMEM;
  sP.p = p;
  sP.z = zSql;
  sP.a = p->aTok;

  /* SQL that SQLite prepared has balanced parentheses: if the tokens do
  ** not, this tokenizer and SQLite's disagree, and nothing is followed. */
  for(i=0, d=0; p->aTok[i].eType!=PT_EOF && d>=0; i++){
    if( p->aTok[i].eType==PT_LP ) d++;
    if( p->aTok[i].eType==PT_RP ) d--;
  }
  if( d!=0 ){
    setWhy(&sP, "SQL the parser does not follow");
    return sP.rc;
  }
  if( isKw(&sP, 0, "WITH") ){
    setWhy(&sP, "a WITH clause");
    goto tree;
  }
  if( !isKw(&sP, 0, "SELECT") ){
    setWhy(&sP, "not a plain SELECT");
    goto tree;
  }
  sP.i = 1;
  if( isKw(&sP, sP.i, "DISTINCT") ){ p->bDistinct = 1; sP.i++; }
  else if( isKw(&sP, sP.i, "ALL") ){ sP.i++; }
  parseList(&sP, &p->aCol, &p->nCol, 1, 0);
  if( isKw(&sP, sP.i, "FROM") ){
    sP.i++;
    p->bFrom = 1;
    p->from = parseClause(&sP);
  }
  if( isKw(&sP, sP.i, "WHERE") ){
    sP.i++;
    p->bWhere = 1;
    p->where = parseClause(&sP);
  }
  if( isKw(&sP, sP.i, "GROUP") && isKw(&sP, sP.i+1, "BY") ){
    sP.i += 2;
    parseList(&sP, &p->aGroup, &p->nGroup, 0, 0);
  }
  if( isKw(&sP, sP.i, "HAVING") ){
    int iFirst = ++sP.i;
    p->bHaving = 1;
    p->having.span = parseClause(&sP);
    scanExpr(&sP, iFirst, sP.i);
  }
  if( isKw(&sP, sP.i, "WINDOW") ){
    /* Not accelerated, but its windows are taken down, and the clauses
    ** after it (the planner reads none of them once zWhy is set). */
    if( !sP.bWinCall ) setWhy(&sP, "a WINDOW clause");
    if( sP.rc==SQLITE_OK ) parseWindowClause(&sP);
  }
  if( isKw(&sP, sP.i, "UNION") || isKw(&sP, sP.i, "INTERSECT")
   || isKw(&sP, sP.i, "EXCEPT") ){
    setWhy(&sP, "a compound SELECT");
    goto tree;
  }
  if( isKw(&sP, sP.i, "ORDER") && isKw(&sP, sP.i+1, "BY") ){
    sP.i += 2;
    parseList(&sP, &p->aOrder, &p->nOrder, 0, 1);
  }
  if( isKw(&sP, sP.i, "LIMIT") ){
    sP.i++;
    p->bLimit = 1;
    p->limit = parseClause(&sP);
    parseLimit(&sP, p->limit);
  }
  if( sP.a[sP.i].eType==PT_SEMI ) sP.i++;
  if( sP.rc==SQLITE_OK && sP.a[sP.i].eType!=PT_EOF ){
    setWhy(&sP, "SQL the parser does not follow");
  }
  if( sP.bWinCall && p->zWhy==0 && sP.rc==SQLITE_OK ){
    /* Window calls are all that keeps the SELECT from the planners of
    ** plan.c: the window planner (plan_window.c) may take it. */
    p->bWindow = 1;
    setWhy(&sP, "a window function");
  }
tree:
  if( sP.rc==SQLITE_OK ) parseTree(&sP);
  return sP.rc;
}

void parSelectClear(ParSelect *p){
  int i;
  for(i=0; i<p->nCol; i++) sqlite3_free(p->aCol[i].zAlias);
  for(i=0; i<p->nOrder; i++) sqlite3_free(p->aOrder[i].zCollate);
  for(i=0; i<p->nWinCall; i++) parWinCallClear(&p->aWinCall[i]);
  for(i=0; i<p->nWinDef; i++) parWinSpecClear(&p->aWinDef[i]);
  parFromFree(p->pFrom);
  sqlite3_free(p->aWinCall);
  sqlite3_free(p->aWinDef);
  sqlite3_free(p->zTreeWhy);
  sqlite3_free(p->aCol);
  sqlite3_free(p->aGroup);
  sqlite3_free(p->aOrder);
  sqlite3_free(p->aAgg);
  sqlite3_free(p->aRef);
  sqlite3_free(p->aSub);
  sqlite3_free(p->aCall);
  sqlite3_free(p->aCallArgc);
  sqlite3_free(p->aTok);
  sqlite3_free(p->zWhy);
  memset(p, 0, sizeof(*p));
}

/* The last name of the COLLATE operators from token k on ("x COLLATE a
** COLLATE b" is b). */
static int lastCollate(const char *zSql, const ParToken *a, int k, int iTokEnd){
  int iName = -1;
  while( k+1<iTokEnd && parTokIs(zSql, &a[k], "COLLATE") ){
    iName = k+1;
    k += 2;
  }
  return iName;
}

/* The end of the bracket that starts at token i of [i, iTokEnd): the
** index of its ")" (for "(") or of its END (for CASE), or -1. */
static int bracketEnd(const char *zSql, const ParToken *a, int i, int iTokEnd){
  int d = 0, j;
  int bCase = parTokIs(zSql, &a[i], "CASE");
  for(j=i; j<iTokEnd; j++){
    if( bCase ? parTokIs(zSql, &a[j], "CASE") : a[j].eType==PT_LP ) d++;
    if( (bCase ? parTokIs(zSql, &a[j], "END") : a[j].eType==PT_RP) && --d==0 ) return j;
  }
  return -1;
}

/* Is the bracket "(" at token i one whose COLLATE operators do not reach
** the expression: a subquery, or a window's or filter's clause? */
static int bracketHidden(const char *zSql, const ParToken *a, int i, int iTok, int iTokEnd){
  if( i+1<iTokEnd && (parTokIs(zSql, &a[i+1], "SELECT") || parTokIs(zSql, &a[i+1], "WITH")
                      || parTokIs(zSql, &a[i+1], "VALUES")) ) return 1;
  return i>iTok && (parTokIs(zSql, &a[i-1], "OVER") || parTokIs(zSql, &a[i-1], "FILTER"));
}

/* COLLATE operators in [iTok, iTokEnd) that can reach the expression, and
** whether one may apply to more than the primary before it (after IN's
** list, ISNULL, NOTNULL, NOT NULL): then which applies is not told here. */
static int countCollate(const char *zSql, const ParToken *a, int iTok, int iTokEnd,
                        int *pbWide){
  int i, j, n = 0;
  for(i=iTok; i<iTokEnd; i++){
    if( a[i].eType==PT_LP && bracketHidden(zSql, a, i, iTok, iTokEnd) ){
      if( (j = bracketEnd(zSql, a, i, iTokEnd))<0 ) break;
      i = j;
      continue;
    }
    if( parTokIs(zSql, &a[i], "COLLATE") ){
      n++;
      if( i>iTok && (parTokIs(zSql, &a[i-1], "ISNULL") || parTokIs(zSql, &a[i-1], "NOTNULL")
                     || parTokIs(zSql, &a[i-1], "NULL")) ) *pbWide = 1;
      if( i>iTok && a[i-1].eType==PT_RP ){
        for(j=i-1; j>iTok && bracketEnd(zSql, a, j, i)!=i-1; j--){}
        if( j>iTok && parTokIs(zSql, &a[j-1], "IN") ) *pbWide = 1;
      }
    }
  }
  return n;
}

/* The search of parExprCollateTok(), once it is known to be decidable. */
static int collateWalk(const char *zSql, const ParToken *a, int iTok, int iTokEnd){
  int i = iTok, j, d, k, r;
  while( i<iTokEnd ){
    if( a[i].eType==PT_LP || parTokIs(zSql, &a[i], "CASE") ){
      if( (j = bracketEnd(zSql, a, i, iTokEnd))<0 ) return -1;
      if( j+1<iTokEnd && parTokIs(zSql, &a[j+1], "COLLATE") ){
        return lastCollate(zSql, a, j+1, iTokEnd);
      }
      if( a[i].eType==PT_LP && !bracketHidden(zSql, a, i, iTok, iTokEnd) ){
        /* Each argument (or the one expression) in turn. */
        for(k=i+1; k<j; k++){
          int e = k;
          for(d=0; e<j && (d>0 || a[e].eType!=PT_COMMA); e++){
            if( a[e].eType==PT_LP ) d++;
            if( a[e].eType==PT_RP ) d--;
          }
          if( (r = collateWalk(zSql, a, k, e))>=0 ) return r;
          k = e;
        }
      }else if( a[i].eType!=PT_LP && (r = collateWalk(zSql, a, i+1, j))>=0 ){
        return r;       /* CASE: its operands in order */
      }
      i = j+1;
      continue;
    }
    if( parTokIs(zSql, &a[i], "COLLATE") ) return lastCollate(zSql, a, i, iTokEnd);
    i++;
  }
  return -1;
}

/* SQLite gives an expression the collation of an explicit COLLATE found
** by following, from the top, the first operand that contains one
** (sqlite3ExprCollSeq: the left operand before the right, arguments and
** CASE's operands in order).  COLLATE binds tighter than any operator, so
** in token order the first operand holding one is a primary followed by
** COLLATE (the last of several applies), or a parenthesis, call or CASE
** with one inside, searched the same way.  A COLLATE inside a subquery or
** a window's or filter's clause does not reach the expression.  With
** several COLLATE, one after IN's list, ISNULL or NOT NULL may apply to
** more than its primary: -2. */
int parExprCollateTok(const char *zSql, const ParToken *a, int iTok, int iTokEnd){
  int bWide = 0;
  int n = countCollate(zSql, a, iTok, iTokEnd, &bWide);
  if( n==0 ) return -1;
  if( n>1 && bWide ) return -2;
  return collateWalk(zSql, a, iTok, iTokEnd);
}
