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
