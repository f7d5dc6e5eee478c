#!/bin/sh
# demo.sh: run sql/demo_queries.sql through the extension in the sqlite3
# shell over build/demo.db, the 1M-row sample database of sql/demo.sql,
# which it builds first when it is missing or older than sql/demo.sql (a
# few seconds).  Exits non-zero if a parallel answer differs from SQLite's.
set -e
cd "$(dirname "$0")/.."
mkdir -p build
db=build/demo.db
if [ ! -f $db ] || [ sql/demo.sql -nt $db ]; then
  echo "building the sample database $db (1,000,000 sales) ..."
  rm -f $db.tmp $db.tmp-wal $db.tmp-shm
  sqlite3 -bail $db.tmp < sql/demo.sql >/dev/null
  rm -f $db-wal $db-shm
  mv $db.tmp $db
fi
echo "sample database: $db ($(sqlite3 $db 'SELECT count(*) FROM sales') sales)"
sqlite3 -bail -box $db < sql/demo_queries.sql
echo
echo "Bad input is a clear error that changes nothing:"
for q in "SELECT par_config('threads', -3);" \
         "CREATE VIRTUAL TABLE main.v USING parallel('SELECT 1');" \
         "CREATE VIRTUAL TABLE temp.v USING parallel('SELECT nosuch FROM sales');"; do
  echo "  $q"
  printf '.load ./parallel\n%s\n' "$q" | sqlite3 $db 2>&1 | sed 's/^/    -> /' || true
done
