/*
** batch.h: columnar batches extracted from SQLite, and their sort keys.
**
** A ParBatch holds the result of one read-only SELECT column by column.
** Each column picks the narrowest storage that keeps every value exactly:
**
**   PAR_COL_NULL   every value is NULL (no arrays)
**   PAR_COL_INT    INTEGER or NULL        aInt[nRow]
**   PAR_COL_REAL   REAL or NULL           aReal[nRow]
**   PAR_COL_TEXT   TEXT or NULL           aCode[nRow] into pDict
**   PAR_COL_MIXED  any storage class      aType[nRow] (SQLITE_INTEGER ...
**                                         SQLITE_NULL) and aVal[nRow]: the
**                                         int64, the double's bits, or a
**                                         dictionary code (TEXT and BLOB)
**
** aNull (one bit per row, set for NULL) is present in every storage that
** has a NULL, and NULL otherwise.  The dictionary keeps each distinct
** TEXT / BLOB value once, byte for byte, so a batch turned back into rows
** (parColumnResult) gives exactly the values SQLite returned, types
** included.
**
** Sort keys (parColumnKeys) map each row to one or two 64-bit words whose
** unsigned lexicographic order is SQLite's order for the column: NULL <
** INTEGER and REAL by value < TEXT by collation < BLOB by memcmp; equal
** values (1 and 1.0, 'a' and 'A' under NOCASE) get equal keys.
*/
#ifndef PAR_BATCH_H
#define PAR_BATCH_H

#include "parext.h"

#define PAR_COL_NULL  0
#define PAR_COL_INT   1
#define PAR_COL_REAL  2
#define PAR_COL_TEXT  3
#define PAR_COL_MIXED 4

/* Built-in collations the batch layer can order text by. */
#define PAR_COLL_BINARY 0
#define PAR_COLL_NOCASE 1
#define PAR_COLL_RTRIM  2
#define PAR_N_COLL      3

/* PAR_COLL_* for a collation name, or -1 when it is not one of the three. */
int parCollFromName(const char *zName);

/* "BINARY", "NOCASE" or "RTRIM" for a PAR_COLL_*. */
const char *parCollName(int eColl);

/* The built-in collations db compares otherwise than SQLite does (an
** application may define its own NOCASE, say), as a mask of
** 1<<PAR_COLL_*: those whose answers on db differ from SQLite's own on
** some of a set of probe texts (all of them when the probe fails).  The
** kernels and worker connections compare as SQLite's own do. */
int parCollReplaced(sqlite3 *db);

/* Is db's text UTF-8 (PRAGMA encoding)?  The kernels compare UTF-8 bytes;
** 1 when it cannot be read. */
int parDbIsUtf8(sqlite3 *db);

/* Distinct TEXT and BLOB values of one column. */
typedef struct ParDict ParDict;
struct ParDict {
  uint32_t nEntry, nAlloc;     /* entries used, allocated */
  sqlite3_int64 *aOff;         /* aOff[i]: start of entry i in aByte */
  uint32_t *aLen;              /* aLen[i]: its length in bytes */
  uint8_t *aKind;              /* aKind[i]: SQLITE_TEXT or SQLITE_BLOB */
  char *aByte;                 /* the bytes of all entries */
  sqlite3_int64 nByte, nByteAlloc;
  uint64_t *aHash;             /* open addressing: the hash's high half,
                               ** then code+1 (0: empty); see PAR_SLOT */
  uint32_t nHash;              /* slots in aHash, a power of two */
  uint32_t *aRank[PAR_N_COLL]; /* dense rank of each entry per collation,
                               ** TEXT before BLOB; built on demand */
};

/* The bytes of entry e of pD.  A dictionary holding only empty values has
** no byte array: never offset a NULL pointer. */
static inline const char *parDictText(const ParDict *pD, uint32_t e){
  return pD->aByte ? pD->aByte + pD->aOff[e] : "";
}

/* One column of a batch. */
typedef struct ParColumn ParColumn;
struct ParColumn {
  char *zName;           /* column name as SQLite reports it */
  char *zDeclType;       /* declared type, or NULL */
  int eStore;            /* PAR_COL_* */
  sqlite3_int64 nNull;   /* number of NULL rows */
  uint8_t *aNull;        /* NULL bitmap, or NULL when nNull==0 */
  sqlite3_int64 *aInt;   /* PAR_COL_INT */
  double *aReal;         /* PAR_COL_REAL */
  uint32_t *aCode;       /* PAR_COL_TEXT */
  uint8_t *aType;        /* PAR_COL_MIXED: storage class per row */
  uint64_t *aVal;        /* PAR_COL_MIXED: value bits or dictionary code */
  ParDict *pDict;        /* PAR_COL_TEXT and PAR_COL_MIXED, else NULL */
  int bBorrowDict;       /* pDict belongs to another batch's column */
  int bWindow;           /* the value arrays lie in a ParWindow (batch.c):
                         ** not this column's to free */
  int bRange;            /* PAR_COL_INT: iMin and iMax are the least and
                         ** the greatest value, NULLs aside (iMin>iMax:
                         ** NULLs only); kept while the rows are read */
  sqlite3_int64 iMin, iMax;
};

typedef struct ParWindow ParWindow;

typedef struct ParBatch ParBatch;
struct ParBatch {
  int nCol;
  sqlite3_int64 nRow;
  ParColumn *aCol;
  sqlite3_int64 nRowAlloc;   /* rows allocated in each column's arrays */
  ParWindow *pWin;           /* when set, the value arrays are rows
                             ** [iWinAt, iWinAt+nRowAlloc) of pWin's */
  sqlite3_int64 iWinAt;
  sqlite3_int64 nMem;        /* bytes allocated by this batch */
  sqlite3_int64 mxMem;       /* limit on nMem (0: none) */
  int bOverLimit;            /* an allocation was refused by mxMem */
  sqlite3_int64 *pnShared;   /* when set, mxMem limits this total, shared
                             ** with other batches (updated atomically) */
  int nRef;                  /* owners: parBatchFree frees at the last
                             ** (atomic where the batch is cached: see
                             ** parBatchFree) */
  ParBatch *pOwner;          /* when set, the columns are pOwner's (shallow
                             ** copies of some of them): this batch holds a
                             ** reference to pOwner and frees no column */
  int nKeep;                 /* batches whose dictionaries columns of this
                             ** one borrow (the join's tables): a reference
                             ** to each, dropped when this one is freed */
  ParBatch **apKeep;
};

/* A batch of columns aiCol[0..nCol-1] of pOwner, sharing their arrays (no
** copy); it keeps pOwner alive (a reference taken atomically: pOwner may be
** shared by threads).  NULL when out of memory. */
ParBatch *parBatchSubset(ParBatch *pOwner, const int *aiCol, int nCol);

/* The bytes pB's rows take: every column's arrays and dictionary (a
** dictionary shared by several columns counted with each). */
sqlite3_int64 parBatchBytes(const ParBatch *pB);

/*
** The values bound to the parameters of a view's SELECT (view.c).  The
** planner writes parameter number i of the SELECT (?, ?NNN, :name, @name,
** $name, numbered as SQLite numbers them) as ":par_p<i>" in every SQL text
** it derives (plan.c, parParamsRewrite), so the extraction query, the
** final SQL and the SELECT itself all bind the same values by name, on any
** connection.  apVal[i-1] is the value of number i (a copy owned by the
** ParParams), or NULL where the SELECT has no parameter of that number.
*/
typedef struct ParParams ParParams;
struct ParParams {
  int n;                     /* highest parameter number */
  sqlite3_value **apVal;
};

/* n unbound parameters (every apVal[i] NULL), in one allocation that
** sqlite3_free() frees (parParamsFree() also frees the values); NULL when
** out of memory. */
ParParams *parParamsNew(int n);

/* A copy of p (NULL when p is NULL, or out of memory: *pbNoMem set). */
ParParams *parParamsDup(const ParParams *p, int *pbNoMem);
void parParamsFree(ParParams *p);

/* Bind to pStmt every ":par_p<i>" parameter it has from p (may be NULL:
** nothing to bind).  Values are only read: several threads may bind the
** same ParParams to statements of their own connections at once. */
int parParamsBind(sqlite3_stmt *pStmt, const ParParams *p);

/* The values of p as text that differs whenever a value differs in type
** or bytes, "" for none (sqlite3_malloc; NULL when out of memory): part of
** cache keys. */
char *parParamsKey(const ParParams *p);

/* Run zSql, one read-only statement that returns rows, on db and collect
** its result into a new batch *ppBatch, with pParams (may be NULL) bound
** to it.  mxMem limits the batch's memory in bytes (0: no limit).  On
** error returns an SQLite code, sets *pzErr to a message from
** sqlite3_malloc (the caller frees it) and *ppBatch to NULL. */
int parBatchFromSql(sqlite3 *db, const char *zSql, const ParParams *pParams,
                    sqlite3_int64 mxMem, ParBatch **ppBatch, char **pzErr);

/* Prepare zSql, which must be exactly one statement (comments and spaces
** may follow): *ppStmt on success, else an error with message zNone (no
** statement), zMany (more than one) or SQLite's own. */
int parPrepareOne(sqlite3 *db, const char *zSql, sqlite3_stmt **ppStmt,
                  const char *zNone, const char *zMany, char **pzErr);

/* The same from a prepared statement, which is stepped to the end (not
** reset, not finalized). */
int parBatchFromStmt(sqlite3_stmt *pStmt, sqlite3_int64 mxMem,
                     ParBatch **ppBatch, char **pzErr);

/* Register par_sink(), the aggregate that extraction feeds rows to, on
** db (any other use of it is an error).  Without it, extraction steps
** statements row by row. */
int parBatchRegister(sqlite3 *db);

/* A SELECT has at most this many columns to go through par_sink (one
** function argument each, plus the sink). */
#define PAR_SINK_MAX_COL 126

/* The SQL that feeds the nCol columns of the SELECT zSql[0..nSql-1] to
** par_sink(:par_sink, ...): one sqlite3_step() reads every row (sqlite3_malloc;
** NULL when out of memory). */
char *parSinkSql(const char *zSql, int nSql, int nCol);

/* Run pSink, a statement made from parSinkSql(), into a new batch whose
** columns are named after those of pMeta (the SELECT itself, prepared).
** pSink is reset and its bindings cleared afterwards, so it can be bound
** again and rerun.  pnShared: see ParBatch (may be NULL).  Errors as
** parBatchFromSql(); SQLITE_NOTFOUND (no message) when the par_sink that
** ran was not ours.  With pWin, the batch's value arrays are rows
** [iAt, iAt+nSpan) of pWin's, and more than nSpan rows are an error
** (SQLITE_CORRUPT); else they grow as rows come.  With bStop, the batch
** is the statement's first nSpan rows: the statement is stopped after
** them, and fewer is an error (SQLITE_CORRUPT). */
int parBatchFromSink(sqlite3 *db, sqlite3_stmt *pSink, sqlite3_stmt *pMeta,
                     sqlite3_int64 mxMem, sqlite3_int64 *pnShared, ParWindow *pWin,
                     sqlite3_int64 iAt, sqlite3_int64 nSpan, int bStop,
                     ParBatch **ppBatch, char **pzErr);

/* Arrays of nRow rows for each of nCol columns, shared by the pieces of
** one read (batch.c explains); NULL when out of memory.  Freed by
** parWindowFree(), except what parBatchConcat() took. */
ParWindow *parWindowNew(int nCol, sqlite3_int64 nRow);
void parWindowFree(ParWindow *p);

/* One batch holding the rows of aIn[0..nIn-1] (nIn>=1, same columns), in
** that order.  A piece nothing else references (nRef 1) gives up each
** column's arrays as soon as they are copied, so the pieces and the result
** never both hold every column: such pieces can only be freed afterwards.
** mxMem limits the new batch's memory.  pWin: the window every piece was
** read into (parBatchFromSink), whose arrays the new batch takes, or NULL.
** Errors as parBatchFromSql(). */
int parBatchConcat(ParBatch **aIn, int nIn, sqlite3_int64 mxMem, int nThread,
                   ParWindow *pWin, ParBatch **ppOut, char **pzErr);

/* Large arrays that queries allocate and free again (batch.c "kept
** blocks"): parBigMalloc() is sqlite3_malloc64() that may return a block
** freed by an earlier parBigFree(), already mapped and holding old bytes;
** parBigFree() is sqlite3_free() that keeps up to PAR_BIG_KEEP bytes of
** the most recently freed blocks of PAR_BIG_MIN bytes or more.  parBigRelease() frees every
** kept block and returns their bytes. */
#ifndef PAR_BIG_MIN
# define PAR_BIG_MIN  ((sqlite3_int64)1 << 20)   /* smaller ones: not kept */
#endif
#define PAR_BIG_KEEP  ((sqlite3_int64)64 << 20)  /* bytes kept in all */
#define PAR_BIG_SLOTS 16                          /* blocks kept */
void *parBigMalloc(sqlite3_int64 n);
void parBigFree(void *p);
sqlite3_int64 parBigRelease(void);

/* Drop one reference to p (batches start with one); the last frees it. */
void parBatchFree(ParBatch *p);

/* Free the arrays of one column (not a borrowed dictionary). */
void parColumnClear(ParColumn *pCol);

/* pDst = the rows aIdx[0..nRow-1] of pSrc, in that order, in the same
** storage; pDst borrows pSrc's dictionary.  On error the caller still
** clears pDst. */
int parColumnGather(const ParColumn *pSrc, const uint32_t *aIdx, sqlite3_int64 nRow,
                    int nThread, ParColumn *pDst);

/* Storage class (SQLITE_INTEGER ... SQLITE_NULL) of row iRow. */
int parColumnType(const ParColumn *pCol, sqlite3_int64 iRow);

/* Set the result of ctx to the value of row iRow, exactly as extracted. */
void parColumnResult(const ParColumn *pCol, sqlite3_int64 iRow,
                     sqlite3_context *ctx);

/* The pointer type of the batch bound to par_rows(:par_rows) (view.c).
** Pointer values pass from one function's result to another's argument
** inside a statement, so the name must be one no other extension uses. */
#define PAR_BATCH_PTR "sqlite-parallel ParBatch"

/* Flags for parColumnKeys. */
#define PAR_KEY_DESC       0x01   /* descending order */
#define PAR_KEY_NULLS_LAST 0x02   /* NULLs after every value (default:
                                  ** before, as SQLite's ascending order) */

/* Sort keys of pCol under collation eColl (PAR_COLL_*): on success
** *paKey1 holds nRow words (sqlite3_malloc'd, caller frees) and *paKey2
** is NULL when one word orders the column, or holds a second, less
** significant word per row (integers beyond 2^53 that no double equals).
** Rows compare like their values under SQLite's rules: equal values get
** equal keys.  Keys of different columns are not comparable.  Returns
** SQLITE_OK or SQLITE_NOMEM; when the caller's px_stop (par.h) says stop,
** SQLITE_OK with keys only partly written, which the caller discards. */
int parColumnKeys(ParColumn *pCol, sqlite3_int64 nRow, int eColl, int flags,
                  int nThread, uint64_t **paKey1, uint64_t **paKey2);

/* The code of value (z, n) of storage class eKind (SQLITE_TEXT or
** SQLITE_BLOB) in pD, adding it if new; memory is counted against pB. */
int parDictAdd(ParBatch *pB, ParDict *pD, const unsigned char *z,
               sqlite3_int64 n, int eKind, uint32_t *piCode);

/* Are the n bytes at a and b the same?  Short values (most dictionary
** entries) without a call to memcmp; never reads outside the n bytes. */
int parBytesEqual(const unsigned char *a, const unsigned char *b, sqlite3_int64 n);

/* The dense rank of every dictionary entry under eColl (TEXT entries
** first, then BLOBs by memcmp), built on first use and kept in the
** dictionary (safe for threads sharing the dictionary).  NULL when out of
** memory. */
const uint32_t *parDictRank(ParDict *pDict, int eColl);

#endif /* PAR_BATCH_H */
