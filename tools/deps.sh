#!/bin/sh
# deps.sh: make sure what the build, the tests and the demo need is here:
# SQLite's headers and library (libsqlite3-dev), the sqlite3 shell
# (sqlite3) and Debian's Python with its sqlite3 module (python3).
# Installs the missing Debian packages when run as root, else names them.
missing=""
[ -f /usr/include/sqlite3.h ] || missing="$missing libsqlite3-dev"
command -v sqlite3 >/dev/null 2>&1 || missing="$missing sqlite3"
[ -x /usr/bin/python3 ] || missing="$missing python3"
command -v gcc >/dev/null 2>&1 || missing="$missing gcc"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "deps: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null && apt-get install -y -q $missing >/dev/null || {
    echo "deps: apt-get install failed for:$missing" >&2; exit 1; }
else
  echo "deps: missing Debian packages:$missing" >&2
  echo "deps: install them with: sudo apt-get install -y$missing" >&2
  exit 1
fi
