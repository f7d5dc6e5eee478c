/*
** sqlparse.h: a tokenizer that follows SQLite's lexical rules and a
** recursive-descent parser of the SELECT structure that keeps every
** expression as a span of the source text.
**
** The parser only ever sees SQL that SQLite has already prepared
** successfully, so it needs to find structure, not to report syntax
** errors: whatever it does not understand makes the statement "not
** accelerated" (zWhy says why) and the statement runs natively.
**
** For the join and window operators it also gives structure: the FROM
** clause as a tree of sources and joins (ParFrom), and every window
** function call and WINDOW definition (ParWinCall, ParWinSpec), following
** SQLite 3.40's grammar.  These are filled in whatever zWhy says and never
** change it; zTreeWhy says what they leave out.
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
  int iCollTok;     /* ORDER BY (and a window's): the token naming the
                    ** collation its COLLATE operators give the term
                    ** (parExprCollateTok: -1 none, -2 not told); -1 elsewhere */
  char *zCollate;   /* ... that name, dequoted (sqlite3_malloc), or NULL */
};
#define PAR_NULLS_DEFAULT 0   /* first when ascending, last when descending */
#define PAR_NULLS_FIRST   1
#define PAR_NULLS_LAST    2

/* ---- FROM as a tree ------------------------------------------------------
**
** The FROM clause is a list of sources in the order written, each but the
** first joined to everything before it by the operator written before it;
** ON / USING belong to the source they follow, the right side of that
** join (as in SQLite's SrcList).  A parenthesized join is a source of its
** own (PAR_SRC_GROUP) holding its own list.  Spans point into the SQL;
** names are also kept dequoted.  An absent part has an empty span
** (iTok==iTokEnd) and a NULL name. */

/* Source kinds. */
#define PAR_SRC_TABLE    1   /* [schema.]name [AS alias] [INDEXED BY i|NOT INDEXED] */
#define PAR_SRC_FUNC     2   /* [schema.]name(args) [AS alias]: table-valued function */
#define PAR_SRC_SUBQUERY 3   /* (SELECT ...) [AS alias] */
#define PAR_SRC_GROUP    4   /* (source JOIN source ...) [AS alias] */

/* Join operators: SQLite's JT_* meanings (sqlite3JoinType), plus COMMA
** for ",".  Every join that is neither LEFT nor RIGHT has INNER ("a, b",
** "a JOIN b", "CROSS JOIN", "NATURAL JOIN" too); FULL is LEFT|RIGHT. */
#define PAR_JOIN_INNER   0x01
#define PAR_JOIN_CROSS   0x02
#define PAR_JOIN_NATURAL 0x04
#define PAR_JOIN_LEFT    0x08
#define PAR_JOIN_RIGHT   0x10
#define PAR_JOIN_OUTER   0x20   /* LEFT, RIGHT, FULL, or OUTER written */
#define PAR_JOIN_COMMA   0x40

/* INDEXED BY / NOT INDEXED. */
#define PAR_INDEXED_NONE 0
#define PAR_INDEXED_BY   1
#define PAR_INDEXED_NOT  2

typedef struct ParFrom ParFrom;
typedef struct ParFromSrc ParFromSrc;
struct ParFromSrc {
  int eType;                  /* PAR_SRC_* */
  ParSpan span;               /* the source: name or parentheses to its alias
                              ** or INDEXED clause (no join operator, ON, USING) */
  int eJoin;                  /* PAR_JOIN_* joining it to the sources before
                              ** it; 0 for the first */
  ParSpan joinOp;             /* that operator as written (",", "LEFT JOIN") */
  ParSpan schema; char *zSchema;  /* TABLE, FUNC: "schema." */
  ParSpan name;   char *zName;    /* TABLE, FUNC: the table or function */
  ParSpan alias;  char *zAlias;   /* AS alias, or the implicit one */
  int eIndexed;               /* PAR_INDEXED_* */
  ParSpan index;  char *zIndex;   /* INDEXED BY: the index */
  int nArg; ParSpan *aArg;    /* FUNC: the arguments */
  ParSpan inner;              /* SUBQUERY, GROUP: the text inside the
                              ** parentheses; FUNC: the argument list */
  ParFrom *pGroup;            /* GROUP: its sources */
  int bOn; ParSpan on;        /* ON expression */
  int bUsing;                 /* USING (...) */
  int nUsing; ParSpan *aUsing; char **azUsing;  /* its columns */
};
struct ParFrom {
  int nSrc;
  ParFromSrc *aSrc;
};

/* ---- window functions and windows -----------------------------------------
**
** SQLite 3.40's grammar (parse.y: window, frame_opt, frame_bound,
** window_clause, over_clause, filter_clause).  A window is
**   [base] [PARTITION BY e, ...] [ORDER BY term, ...] [frame]
** and a frame  ROWS|RANGE|GROUPS bound [EXCLUDE ...]  or
**   ROWS|RANGE|GROUPS BETWEEN bound AND bound [EXCLUDE ...]. */
#define PAR_FRAME_NONE   0   /* no frame written: the default applies */
#define PAR_FRAME_ROWS   1
#define PAR_FRAME_RANGE  2
#define PAR_FRAME_GROUPS 3

#define PAR_BOUND_NONE                0   /* no frame written */
#define PAR_BOUND_UNBOUNDED_PRECEDING 1
#define PAR_BOUND_PRECEDING           2   /* expr PRECEDING */
#define PAR_BOUND_CURRENT_ROW         3
#define PAR_BOUND_FOLLOWING           4   /* expr FOLLOWING */
#define PAR_BOUND_UNBOUNDED_FOLLOWING 5

#define PAR_EXCLUDE_NONE        0   /* no EXCLUDE written (means NO OTHERS) */
#define PAR_EXCLUDE_NO_OTHERS   1
#define PAR_EXCLUDE_CURRENT_ROW 2
#define PAR_EXCLUDE_GROUP       3
#define PAR_EXCLUDE_TIES        4

typedef struct ParFrameBound { int eBound; ParSpan expr; } ParFrameBound;

typedef struct ParWinSpec ParWinSpec;
struct ParWinSpec {
  ParSpan name; char *zName;  /* WINDOW clause: the name it defines */
  ParSpan spec;               /* the text inside the parentheses */
  ParSpan base; char *zBase;  /* the window it builds on, if named first */
  int nPartition; ParSpan *aPartition;   /* PARTITION BY expressions */
  int nOrder; ParExpr *aOrder;           /* ORDER BY terms (as ORDER BY's) */
  int eFrame;                 /* PAR_FRAME_* */
  ParSpan frame;              /* the frame as written, from ROWS|RANGE|GROUPS */
  int bBetween;               /* BETWEEN form; without it the end is an
                              ** implied CURRENT ROW (empty expr) */
  ParFrameBound start, end;   /* the bounds; expr: n of n PRECEDING|FOLLOWING */
  int eExclude;               /* PAR_EXCLUDE_* */
  int bAgg;                   /* WINDOW clause: an aggregate call in it */
};

/* Where a window function call stands. */
#define PAR_CLAUSE_SELECT 1   /* in select list item aCol[iExpr] */
#define PAR_CLAUSE_ORDER  2   /* in ORDER BY term aOrder[iExpr] */

typedef struct ParWinCall ParWinCall;
struct ParWinCall {
  ParSpan call;               /* name to the end of the OVER clause */
  ParSpan name; char *zName;  /* the function */
  int bDistinct;              /* name(DISTINCT ...) */
  int bStar;                  /* name(*) */
  int nArg; ParSpan *aArg;    /* arguments */
  int bFilter; ParSpan filter;  /* FILTER (WHERE filter) */
  ParSpan over;               /* what follows OVER: a name or "(...)" */
  ParSpan overName; char *zOver;  /* OVER name: that window */
  ParWinSpec win;              /* OVER (...): the window (zeros for OVER name) */
  int eClause, iExpr;         /* PAR_CLAUSE_* and the index of its term */
};

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
  int nSub; ParSpan *aSub;       /* subqueries there, "(SELECT ...)" whole
                                 ** (not scanned: no calls or references of
                                 ** theirs above) */
  int nCall; ParSpan *aCall;     /* other function calls there: the name */
  int *aCallArgc;                /* ... and its number of arguments */
  char *zWhy;                    /* why not accelerated, or NULL */
  int bWindow;                   /* zWhy is "a window function" and nothing
                                 ** else stands in the way (the window
                                 ** planner's cue) */
  /* Structure for the join and window operators, filled in alongside
  ** (whatever zWhy says); of the first SELECT of a compound. */
  ParFrom *pFrom;                /* FROM as a tree, or NULL */
  int nWinCall; ParWinCall *aWinCall;  /* window function calls in the
                                 ** select list and ORDER BY, in order */
  int nWinDef; ParWinSpec *aWinDef;     /* WINDOW name AS (...), in order */
  ParSpan winClause;             /* the definitions after WINDOW (iTokEnd 0:
                                 ** no WINDOW clause) */
  int bWinClauseAgg;             /* an aggregate call in it (which counts
                                 ** only if a call uses its window) */
  char *zTreeWhy;                /* why pFrom is NULL with a FROM clause, or
                                 ** window calls or definitions are missing;
                                 ** NULL when all is there */
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
