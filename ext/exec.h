/*
** exec.h: running a plan's pipeline of operators (see exec.c).
*/
#ifndef PAR_EXEC_H
#define PAR_EXEC_H

#include "plan.h"
#include "extract.h"

/* What one operator of a run did. */
typedef struct ParOpStat ParOpStat;
struct ParOpStat {
  int eOp;                   /* PAR_OP_* */
  double ms;                 /* its time */
  sqlite3_int64 nRow;        /* rows it returned */
  const char *zStrategy;     /* what it chose from the data, or NULL */
};

/* One run of a plan. */
typedef struct ParExec ParExec;
struct ParExec {
  ParBatch *pIn;             /* the scan's batch (a reference) */
  ParBatch *pOut;            /* the last operator's batch (a reference; its
                             ** text may borrow pIn's dictionaries) */
  int bNative;               /* the SELECT must run natively: pIn, pOut NULL */
  int iNativeOp;             /* ...as operator aOp[iNativeOp] found at run
                             ** time, or -1 (the plan said so) */
  int eMode;                 /* how the scan read its rows (PAR_EXTRACT_*) */
  char *zJoinSqlite;         /* the plan's join was read by SQLite after all:
                             ** why (found at run time), or NULL; the
                             ** caller frees it (parExecClear() does) */
  int nStat;                 /* the operators that ran */
  ParOpStat aStat[PAR_MAX_OP];
};

/* Run pPlan's operators but the last (PAR_OP_FINAL, the cursor's) into
** *pX: the extraction, then each operator over the batch of the one
** before, under parStopBegin (an interrupt stops the kernels).  An
** operator that finds the SELECT must run natively stops the run with
** pX->bNative set, as does an SQL function failing on some row during the
** extraction (whether SQLite fails too depends on the rows it reaches).
** Returns SQLITE_OK or an error with *pzErr (may stay NULL). */
int parExecRun(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, const ParStamp *pStamp,
               ParExec *pX, char **pzErr);

/* Prepare the statement whose rows a scan of pPlan returns: its final SQL
** over pOut (bound to par_rows) or, pOut NULL, the SELECT itself (it runs
** natively); the SELECT's parameters bound either way. */
int parExecFinalStmt(sqlite3 *db, const ParPlan *pPlan, ParBatch *pOut, sqlite3_stmt **ppStmt);

/* Rows of the table pPlan's extraction reads as the span of its rowids,
** read from the two ends of the table, or -1 when its FROM clause is not
** one rowid table. */
sqlite3_int64 parPlanRowidSpan(sqlite3 *db, const ParPlan *pPlan);

/* Release the batches pX still holds. */
void parExecClear(ParExec *pX);

/* "scan", "group by", "sort", "final" for a PAR_OP_*. */
const char *parOpName(int eOp);

#endif /* PAR_EXEC_H */
