#!/bin/sh
# run.sh: run the test suites named on the command line ("plain", "asan"),
# print each program's output, and end with one line "N passed, N failed"
# summing every program's own "NAME: N passed, N failed" line.  A program
# that exits non-zero without reporting a failure (a crash, a sanitizer
# report) counts as one failed test.  Exit status 0 only if nothing failed.
cd "$(dirname "$0")/.." || exit 2
PY=/usr/bin/python3
total_pass=0
total_fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() {   # run LABEL COMMAND...
  label=$1; shift
  echo "== $label"
  "$@" >"$log" 2>&1
  rc=$?
  cat "$log"
  line=$(grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  p=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
  f=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
  [ -n "$p" ] || p=0
  [ -n "$f" ] || f=0
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "!! $label exited with status $rc without reporting a failure"
    f=1
  fi
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
}

for suite in "$@"; do
  case $suite in
    plain)
      run "kernels" build/test_kernels
      run "kernels (8-element blocks)" build/test_kernels_tiny
      run "batches" build/test_batch
      run "allocation failures" build/test_oom ./parallel.so
      run "sql" $PY tests/test_sql.py ./parallel.so
      run "views" $PY tests/test_views.py ./parallel.so
      run "extract" $PY tests/test_extract.py ./parallel.so
      run "histogram" $PY tests/test_histogram.py ./parallel.so
      # examples/ as their users run them, outputs compared with examples/*.expected.
      run "examples" $PY tests/test_examples.py ./parallel.so
      # The benchmark at 100k rows: it must run and agree with SQLite.
      run "bench smoke" env BENCH_ROWS=100000 BENCH_REPS=1 BENCH_RESULTS=0 $PY bench/bench.py
      ;;
    asan)
      export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
      export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
      run "asan kernels" build/asan/test_kernels
      run "asan kernels (8-element blocks)" build/asan/test_kernels_tiny
      run "asan batches" build/asan/test_batch
      run "asan allocation failures" build/asan/test_oom ./build/asan/parallel.so
      # The fuzz target over its seeds and every input that ever crashed it
      # (tests/fuzz/crashes/KNOWN: those whose bug is not fixed yet).
      run "asan fuzz replay" build/asan/fuzz_replay tests/fuzz/corpus tests/fuzz/crashes
      # Python is not built with the sanitizers: preload their runtimes and
      # ignore the interpreter's own never-freed memory.
      pre="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
      run "asan sql" env ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
        LD_PRELOAD="$pre" $PY tests/test_sql.py ./build/asan/parallel.so
      run "asan views" env ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
        LD_PRELOAD="$pre" $PY tests/test_views.py ./build/asan/parallel.so
      run "asan extract" env ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
        LD_PRELOAD="$pre" $PY tests/test_extract.py ./build/asan/parallel.so
      run "asan histogram" env ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
        LD_PRELOAD="$pre" $PY tests/test_histogram.py ./build/asan/parallel.so
      ;;
    *) echo "run.sh: unknown suite $suite" >&2; exit 2 ;;
  esac
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
