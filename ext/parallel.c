/*
** parallel.c: the entry point of the sqlite-parallel extension.
**
**   .load ./parallel
**   SELECT par_version();
**
** SQLite derives the entry point's name, sqlite3_parallel_init, from the
** file name parallel.so.  It makes the connection's ParContext (settings)
** and registers each part of the extension on the connection; each part
** lives in a file of its own and holds a reference to the context.
*/
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "batch.h"

/* The only symbol the library exports: everything else is built with
** -fvisibility=hidden (Makefile), so calls between its files are direct,
** and no name of ours (sqlite3_api included) can take the place of a
** host's or another extension's: SQLite opens extensions RTLD_GLOBAL. */
#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
int sqlite3_parallel_init(sqlite3 *db, char **pzErrMsg,
                          const sqlite3_api_routines *pApi){
  int rc;
  ParContext *pCtx;
  SQLITE_EXTENSION_INIT2(pApi);
  pCtx = parContextNew();
  if( pCtx==0 ) return SQLITE_NOMEM;
  rc = parConfigRegister(db, pCtx);
  if( rc==SQLITE_OK ) rc = parBatchRegister(db);
  if( rc==SQLITE_OK ) rc = parViewRegister(db, pCtx);
  if( rc==SQLITE_OK ) rc = parCacheRegister(db, pCtx);
  if( rc==SQLITE_OK ) rc = parHistogramRegister(db, pCtx);
  /* Registrations took their references; drop ours. */
  parContextUnref(pCtx);
  if( rc!=SQLITE_OK && pzErrMsg ){
    *pzErrMsg = sqlite3_mprintf("parallel: cannot register functions: %s",
                                sqlite3_errstr(rc));
  }
  return rc;
}
