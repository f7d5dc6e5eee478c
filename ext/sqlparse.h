/*
** sqlparse.h: a tokenizer that follows SQLite's lexical rules and a
** recursive-descent parser of the SELECT structure that keeps every
** expression as a span of the source text.
**
** The parser only ever sees SQL that SQLite has already prepared
** successfully, so it needs to find structure, not to report syntax
** errors: whatever it does not understand makes the statement "not
** accelerated" (zWhy says why) and the statement runs natively.
*/
#ifndef PAR_SQLPARSE_H
#define PAR_SQLPARSE_H

#include "parext.h"

/* Token classes. */
#define PT_EOF      0
#define PT_ID       1   /* unquoted identifier or keyword */
#define PT_QID      2   /* "quoted", [bracketed] or `backticked` identifier */
#define PT_STRING   3   /* 'string literal' */
#define PT_BLOB     4   /* x'hex' */
#define PT_NUMBER   5
#define PT_VARIABLE 6   /* ?, ?NNN, :name, @name, #name, $name, $a(b) */
#define PT_LP       7
#define PT_RP       8
#define PT_COMMA    9
#define PT_DOT      10
#define PT_SEMI     11
#define PT_STAR     12
#define PT_OP       13  /* any other operator */
#define PT_ILLEGAL  14

typedef struct ParToken { int eType; int i; int n; } ParToken;

/* Tokenize zSql (comments and spaces dropped; a PT_EOF token ends the
** array).  Returns the array (sqlite3_malloc) and its length in *pnTok, or
** NULL when out of memory. */
ParToken *parTokenize(const char *zSql, int *pnTok);

/* True if token t is the keyword zKw (case-insensitive, PT_ID only). */
int parTokIs(const char *zSql, const ParToken *t, const char *zKw);

/* A span of the source: bytes [iStart, iEnd) and tokens [iTok, iTokEnd). */
typedef struct ParSpan { int iStart, iEnd, iTok, iTokEnd; } ParSpan;

/* Aggregate functions the kernels compute. */
#define PAR_AGG_COUNT_STAR   0
#define PAR_AGG_COUNT        1
#define PAR_AGG_SUM          2
#define PAR_AGG_TOTAL        3
#define PAR_AGG_AVG          4
#define PAR_AGG_MIN          5
#define PAR_AGG_MAX          6
#define PAR_AGG_GROUP_CONCAT 7

/* One aggregate call found in an expression. */
typedef struct ParAggCall ParAggCall;
struct ParAggCall {
  int eFunc;        /* PAR_AGG_* */
  int bDistinct;    /* DISTINCT argument */
  ParSpan call;     /* the whole call, name to closing parenthesis */
  int nArg;
  ParSpan aArg[2];  /* arguments */
};

/* One expression of the select list, GROUP BY, HAVING or ORDER BY. */
typedef struct ParExpr ParExpr;
struct ParExpr {
  ParSpan span;     /* the expression (ORDER BY: without ASC/DESC/NULLS) */
  ParSpan alias;    /* select list: alias after AS (or implicit), else 0s */
  char *zAlias;     /* the alias, dequoted (sqlite3_malloc), or NULL */
  ParSpan suffix;   /* ORDER BY: ASC/DESC/NULLS FIRST/LAST text, maybe empty */
  int bDesc;        /* ORDER BY: DESC */
  int eNulls;       /* ORDER BY: PAR_NULLS_* as written */
};
#define PAR_NULLS_DEFAULT 0   /* first when ascending, last when descending */
#define PAR_NULLS_FIRST   1
#define PAR_NULLS_LAST    2

/* The structure of one SELECT. */
typedef struct ParSelect ParSelect;
struct ParSelect {
  const char *zSql;
  ParToken *aTok;
  int nTok;
  int bDistinct;
  int nCol;  ParExpr *aCol;      /* select list */
  int bStar;                     /* the select list is "*" alone (any other
                                 ** "*" or "t.*" makes it unaccelerated) */
  int bFrom; ParSpan from;       /* FROM clause body */
  int bWhere; ParSpan where;
  int nGroup; ParExpr *aGroup;
  int bHaving; ParExpr having;
  int nOrder; ParExpr *aOrder;
  int bLimit; ParSpan limit;     /* everything after LIMIT */
  ParSpan limitExpr;             /* the LIMIT expression ... */
  int bOffset; ParSpan offsetExpr;  /* ... and the OFFSET one ("LIMIT a, b":
                                 ** a is the offset, b the limit) */
  int nAgg; ParAggCall *aAgg;    /* aggregate calls in select list, HAVING,
                                 ** ORDER BY, in source order */
  int nRef; ParSpan *aRef;       /* possible column references outside
                                 ** aggregate calls in those clauses */
  int nCall; ParSpan *aCall;     /* other function calls there: the name */
  int *aCallArgc;                /* ... and its number of arguments */
  char *zWhy;                    /* why not accelerated, or NULL */
};

/* Parse zSql.  Returns SQLITE_OK or SQLITE_NOMEM; on SQLITE_OK, p->zWhy is
** NULL if the statement has a shape the planner understands. */
int parSelectParse(const char *zSql, ParSelect *p);
void parSelectClear(ParSelect *p);

/* The token naming the collation SQLite gives the expression of tokens
** [iTok, iTokEnd) through its COLLATE operators: -1 when it has none, -2
** when it has several and which applies is not told by tokens alone. */
int parExprCollateTok(const char *zSql, const ParToken *a, int iTok, int iTokEnd);

/* The text of a span as a new string (sqlite3_malloc), or NULL on OOM. */
char *parSpanText(const char *zSql, ParSpan s);

/* Dequote an identifier or string token into a new string. */
char *parDequote(const char *z, int n);

#endif /* PAR_SQLPARSE_H */
