/*
** op_sort.h: the sort operator (see op_sort.c).
*/
#ifndef PAR_OP_SORT_H
#define PAR_OP_SORT_H

#include "plan.h"

/* ORDER BY terms, or DISTINCT columns, the operator sorts by at most (more
** run natively). */
#define PAR_SORT_MAX_KEY 64

/* Apply pPlan->pSort to pIn, the extraction batch of pPlan: *ppOut gets
** the rows the SELECT returns, in its order, with the columns of
** pPlan->aDirect (their text borrows pIn's dictionaries: pIn must outlive
** *ppOut).  Sets *pbNative and returns SQLITE_OK without a result when the
** SELECT must run natively; on error sets *pzErr (may stay NULL).
** *pzStrategy: "sort", "top-k" or "distinct". */
/* LIMIT and OFFSET, "SELECT (limit), (offset)" (zLimit, or NULL for
** none) evaluated on db with pPlan's parameters: *piLimit -1 for none (or
** negative), *piOffset 0 for negative (select.c computeLimitOffset).
** *pbNative when they are not integers, or fail (SQLite then says what
** it says).  SQLITE_OK, or SQLITE_NOMEM. */
int parLimitEval(sqlite3 *db, const ParPlan *pPlan, const char *zLimit, sqlite3_int64 *piLimit,
                 sqlite3_int64 *piOffset, int *pbNative);

/* The sort's pieces, shared with the join's index order (op_join.c).
** parSortUnknownText: does a key of unknown collation meet text (SQLite's
** order then not known here)?  parSortWords: the key words of aKey over
** the rows aRow (all rows, in order, when NULL), most significant first,
** *pnWord arrays of nRow words in aaWord (the caller frees them with
** parSortWordsFree, also on error).  parSortPack: words spanning few
** bits packed into fewer, the same order and equality. */
int parSortUnknownText(const ParBatch *pIn, const ParSortKey *aKey, int nKey);
int parSortWords(ParBatch *pIn, const ParSortKey *aKey, int nKey, const uint32_t *aRow,
                 size_t nRow, int nThread, uint64_t **aaWord, int *pnWord);
int parSortPack(uint64_t **aaWord, int *pnWord, size_t nRow, int nThread);
void parSortWordsFree(uint64_t **aaWord, int nWord);

int parSortRun(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
               ParBatch **ppOut, int *pbNative, char **pzErr, const char **pzStrategy);

#endif /* PAR_OP_SORT_H */
