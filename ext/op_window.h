/*
** op_window.h: the window operator (see op_window.c).
*/
#ifndef PAR_OP_WINDOW_H
#define PAR_OP_WINDOW_H

#include "plan.h"

/* Apply pPlan->pWindow to pIn, the extraction batch of pPlan: *ppOut gets
** the rows the SELECT returns, in its order, with the columns of
** pPlan->aDirect (their text borrows pIn's dictionaries: pIn must outlive
** *ppOut).  Sets *pbNative and returns SQLITE_OK without a result when the
** SELECT must run natively; on error sets *pzErr (may stay NULL). */
int parWindowRun(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, ParBatch *pIn,
                 ParBatch **ppOut, int *pbNative, char **pzErr, const char **pzStrategy);

#endif /* PAR_OP_WINDOW_H */
