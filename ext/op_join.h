/*
** op_join.h: the join operator (op_join.c).
*/
#ifndef PAR_OP_JOIN_H
#define PAR_OP_JOIN_H

#include "plan.h"
#include "extract.h"

/* What a run of the join gives. */
typedef struct ParJoinOut {
  ParBatch *pOut;        /* the extraction's columns over the joined rows */
  char *zSqlite;         /* when not NULL (pOut NULL): why SQLite must read
                         ** the join after all (sqlite3_malloc) */
  int eMode;             /* how the tables were read: PAR_EXTRACT_CACHED
                         ** when every one came from the cache, else
                         ** PARALLEL when any was read in parallel */
  double msScan;         /* reading the tables */
  double msJoin;         /* joining them */
  int bReordered;        /* joined in another order than SQLite's loops:
                         ** the order did not matter, and the largest table
                         ** probes (op_join.c joinChooseOrder) */
  int bKept;             /* the join of these very batches was kept from
                         ** an earlier run, not made again */
  int nLookup;           /* tables read by rowid lookups of the probe keys */
} ParJoinOut;

/* Read each table of pPlan->pJoin by its scan and join them (under the
** interrupt stop).  SQLITE_OK with pO->pOut, or pO->zSqlite; else an
** error (*pzErr may be set): SQLITE_ERROR from a scan is an SQL function
** failing on a row, as parExtract says. */
int parJoinRun(ParContext *pCtx, sqlite3 *db, const ParPlan *pPlan, const ParStamp *pStamp,
               ParJoinOut *pO, char **pzErr);

#endif /* PAR_OP_JOIN_H */
