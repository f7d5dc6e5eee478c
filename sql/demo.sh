#!/bin/sh
# demo.sh: build the sample database (sql/demo.sql) in build/demo.db and run
# sql/demo_queries.sql against it through the extension in the sqlite3 shell.
set -e
cd "$(dirname "$0")/.."
mkdir -p build
rm -f build/demo.db build/demo.db-wal build/demo.db-shm
sqlite3 build/demo.db < sql/demo.sql >/dev/null
echo "sample database: build/demo.db ($(sqlite3 build/demo.db 'SELECT count(*) FROM sales') sales)"
sqlite3 -bail -box build/demo.db < sql/demo_queries.sql
echo
echo "Bad input is a clear error that changes nothing:"
for q in "SELECT par_config('threads', -3);" \
         "CREATE VIRTUAL TABLE main.v USING parallel('SELECT 1');" \
         "CREATE VIRTUAL TABLE temp.v USING parallel('SELECT nosuch FROM sales');"; do
  echo "  $q"
  printf '.load ./parallel\n%s\n' "$q" | sqlite3 build/demo.db 2>&1 | sed 's/^/    -> /' || true
done
