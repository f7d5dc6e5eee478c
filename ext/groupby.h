/*
** groupby.h: the group-by operator (see groupby.c).
*/
#ifndef PAR_GROUPBY_H
#define PAR_GROUPBY_H

#include "plan.h"

/* Group pIn, the extraction batch of pPlan, and compute the aggregates
** and bare columns into a new batch *ppOut (one row per group; bare
** columns' text borrows pIn's dictionaries, so pIn must outlive *ppOut).
** Sets *pbNative and returns SQLITE_OK without a result when the SELECT
** must run natively; on error sets *pzErr.  *pzStrategy names the grouping
** strategy chosen. */
int parGroupBy(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
               ParBatch **ppOut, int *pbNative, char **pzErr,
               const char **pzStrategy);

#endif /* PAR_GROUPBY_H */
