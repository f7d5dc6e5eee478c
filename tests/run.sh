#!/bin/sh
# run.sh: run the test suites named on the command line and end with one
# line "N passed, N failed" summing every program's own last "NAME: N
# passed, N failed" line.  Suites:
#
#   plain   every test against ./parallel.so and the plain test builds
#   asan    the same under AddressSanitizer + UBSan (build/asan/)
#   quick   make check: the kernel, batch and parser tests, the SQL suites' quick
#           parts and the examples, plain builds only (under a minute)
#
# For each program it prints "== LABEL" as it starts and "LABEL: N passed,
# N failed (12.3 s)" as it ends; a program's whole output is shown only
# when something failed (RUN_LOGS=DIR keeps every program's output there).
# A program that exits non-zero without reporting a failure (a crash, a
# sanitizer report) counts as one failed test.  Exit status 0 only if
# nothing failed.
#
# How it runs: the tests that time themselves (how soon an interrupt or a
# progress handler stops a scan) run first, one at a time with nothing
# else running; then every other program runs in RUN_JOBS lanes at once
# (3 by default, on a 2-core machine: most of the suite is single-threaded
# Python and SQLite, and a third lane fills the time the others wait: make
# test took 8m50s with 3 lanes, 10m15s with 2), each lane taking the next
# program not yet taken,
# longest first.  Every test runs exactly as it would alone: results never
# depend on the thread count or on timing.
cd "$(dirname "$0")/.." || exit 2
PY=/usr/bin/python3
JOBS=${RUN_JOBS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -z "$RUN_LOGS" ] || mkdir -p "$RUN_LOGS"

# The tests that measure time, run alone (HARNESS_ONLY, tests/harness.py);
# the rest of their programs skip them (HARNESS_SKIP) and run in the lanes.
# (test_interrupt_stops_kernels runs in the lanes: it checks rows and that
# some scan stopped, not how soon, and took 45 s alone.)
TIMED_EXTRACT=test_interrupt_stops_workers,test_progress_handler_stops_scans
TIMED_HISTOGRAM=test_interrupt_stops_sorts
# make check's parts of the SQL suites: the hand-written groups of
# test_views.py (targeted, native, scan, errors: ORDER below), and
# test_extract.py but for its tests that take more than a second or so
# (make test runs them all).
SLOW_EXTRACT=test_parallel_matches_native,test_snapshot_wal
SLOW_EXTRACT=$SLOW_EXTRACT,test_snapshot_rollback_journal,test_snapshot_without_rowid
SLOW_EXTRACT=$SLOW_EXTRACT,test_cache_never_stale,test_application_threads
SLOW_EXTRACT=$SLOW_EXTRACT,test_memory_limit_parallel,test_ranges_by_row_count
SLOW_EXTRACT=$SLOW_EXTRACT,test_storage_changes_along_rowids
SLOW_EXTRACT=$SLOW_EXTRACT,test_memory_limit_serial_cache_no_leak,test_interrupt_stops_kernels
SLOW_EXTRACT=$SLOW_EXTRACT,test_serial_fallbacks,test_without_rowid_key_ranges
SLOW_EXTRACT=$SLOW_EXTRACT,test_threads_bit_identical,test_view_scanned_again_in_one_statement
SLOW_EXTRACT=$SLOW_EXTRACT,test_rowid_names_and_aliases,test_progress_handler_stops_scans
SLOW_EXTRACT=$SLOW_EXTRACT,test_view_rows_not_kept_past_their_statement,test_replaced_collations
SLOW_EXTRACT=$SLOW_EXTRACT,test_transactions_see_their_own_view,test_attached_file_replaced
SLOW_EXTRACT=$SLOW_EXTRACT,test_attached_file,test_interrupt_stops_workers
SLOW_EXTRACT=$SLOW_EXTRACT,test_cache_serves_fewer_columns

# Python is not built with the sanitizers: preload their runtimes and
# ignore the interpreter's own never-freed memory.  ASan programs: stop at
# the first error, and report leaks.
ASAN_PRE="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
asan_py() {   # asan_py [NAME=VALUE...] SCRIPT ARGS...: Python against the ASan build
  env ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    LD_PRELOAD="$ASAN_PRE" "$@"
}
asan_c() {    # asan_c PROGRAM ARGS...: a program built with the sanitizers
  env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$@"
}

# One program per job name: its label and command (ORDER below: which first).
job() {
  case $1 in
    # -- plain: alone
    p-extract-timed) run "extract (timing)" env HARNESS_ONLY=$TIMED_EXTRACT $PY tests/test_extract.py ./parallel.so ;;
    p-hist-timed)    run "histogram (timing)" env HARNESS_ONLY=$TIMED_HISTOGRAM $PY tests/test_histogram.py ./parallel.so ;;
    # -- plain: lanes
    p-extract)   run "extract" env HARNESS_SKIP=$TIMED_EXTRACT $PY tests/test_extract.py ./parallel.so ;;
    p-views)     run "views" $PY tests/test_views.py ./parallel.so ;;
    p-oom)       run "allocation failures" build/test_oom ./parallel.so ;;
    p-kernels)   run "kernels" build/test_kernels ;;
    p-histogram) run "histogram" env HARNESS_SKIP=$TIMED_HISTOGRAM $PY tests/test_histogram.py ./parallel.so ;;
    p-tiny)      run "kernels (8-element blocks)" build/test_kernels_tiny ;;
    p-examples)  run "examples" $PY tests/test_examples.py ./parallel.so ;;
    p-batches)   run "batches" build/test_batch ;;
    p-parse)     run "parser" build/test_parse ;;
    p-agg)       run "aggregates" build/test_agg ;;
    p-sql)       run "sql" $PY tests/test_sql.py ./parallel.so ;;
    p-params)    run "parameters" $PY tests/test_params.py ./parallel.so ;;
    p-settings)  run "settings" $PY tests/test_settings.py ./parallel.so ;;
    p-order)     run "order" $PY tests/test_order.py ./parallel.so ;;
    p-join)      run "join" $PY tests/test_join.py ./parallel.so ;;
    p-subquery)  run "subquery" $PY tests/test_subquery.py ./parallel.so ;;
    p-rewrites)  run "rewrite cases" $PY tests/test_rewrite_cases.py ./parallel.so ;;
    p-groupsort) run "group sort" $PY tests/test_groupsort.py ./parallel.so ;;
    p-window)    run "window" $PY tests/test_window.py ./parallel.so ;;
    p-wstress)   run "window stress" $PY tests/stress_window.py ./parallel.so ;;
    p-plancache) run "plan cache" $PY tests/test_plancache.py ./parallel.so ;;
    p-delivery)  run "delivery" $PY tests/test_delivery.py ./parallel.so ;;
    # TPC-H's 22 queries at scale factor 0.01 (build/tpch_dbgen's data).
    p-tpch)      run "tpch" $PY tests/test_tpch.py ./parallel.so ;;
    # The benchmark at 100k rows: it must run and agree with SQLite.
    p-bench)     run "bench smoke" env BENCH_ROWS=100000 BENCH_REPS=1 BENCH_RESULTS=0 $PY bench/bench.py ;;
    # -- asan: alone
    a-extract-timed) run "asan extract (timing)" asan_py HARNESS_ONLY=$TIMED_EXTRACT $PY tests/test_extract.py ./build/asan/parallel.so ;;
    a-hist-timed)    run "asan histogram (timing)" asan_py HARNESS_ONLY=$TIMED_HISTOGRAM $PY tests/test_histogram.py ./build/asan/parallel.so ;;
    # -- asan: lanes
    # A third of the random cases under the sanitizers (the plain lane runs
    # them all; here they look for memory errors): make test's 10 minutes.
    a-views)     run "asan views" asan_py env VIEWS_CASES=0.35 $PY tests/test_views.py ./build/asan/parallel.so ;;
    a-extract)   run "asan extract" asan_py HARNESS_SKIP=$TIMED_EXTRACT $PY tests/test_extract.py ./build/asan/parallel.so ;;
    a-oom)       run "asan allocation failures" asan_c build/asan/test_oom ./build/asan/parallel.so ;;
    a-histogram) run "asan histogram" asan_py HARNESS_SKIP=$TIMED_HISTOGRAM $PY tests/test_histogram.py ./build/asan/parallel.so ;;
    a-kernels)   run "asan kernels" asan_c build/asan/test_kernels ;;
    a-tiny)      run "asan kernels (8-element blocks)" asan_c build/asan/test_kernels_tiny ;;
    a-batches)   run "asan batches" asan_c build/asan/test_batch ;;
    a-parse)     run "asan parser" asan_c build/asan/test_parse ;;
    a-agg)       run "asan aggregates" asan_c build/asan/test_agg ;;
    # The fuzz target over its seeds and every input that ever crashed it
    # (tests/fuzz/crashes/KNOWN: those whose bug is not fixed yet).
    a-fuzz)      run "asan fuzz replay" asan_c build/asan/fuzz_replay tests/fuzz/corpus tests/fuzz/crashes ;;
    a-sql)       run "asan sql" asan_py $PY tests/test_sql.py ./build/asan/parallel.so ;;
    a-params)    run "asan parameters" asan_py $PY tests/test_params.py ./build/asan/parallel.so ;;
    a-settings)  run "asan settings" asan_py $PY tests/test_settings.py ./build/asan/parallel.so ;;
    # Fewer cases under the sanitizers (test_order.py sees libasan preloaded).
    a-order)     run "asan order" asan_py $PY tests/test_order.py ./build/asan/parallel.so ;;
    a-join)      run "asan join" asan_py $PY tests/test_join.py ./build/asan/parallel.so ;;
    a-subquery)  run "asan subquery" asan_py $PY tests/test_subquery.py ./build/asan/parallel.so ;;
    a-rewrites)  run "asan rewrite cases" asan_py $PY tests/test_rewrite_cases.py ./build/asan/parallel.so ;;
    a-groupsort) run "asan group sort" asan_py $PY tests/test_groupsort.py ./build/asan/parallel.so ;;
    a-window)    run "asan window" asan_py $PY tests/test_window.py ./build/asan/parallel.so ;;
    a-plancache) run "asan plan cache" asan_py $PY tests/test_plancache.py ./build/asan/parallel.so ;;
    a-delivery)  run "asan delivery" asan_py $PY tests/test_delivery.py ./build/asan/parallel.so ;;
    # -- quick (make check)
    q-kernels)   run "kernels" build/test_kernels ;;
    q-tiny)      run "kernels (8-element blocks)" build/test_kernels_tiny ;;
    q-batches)   run "batches" build/test_batch ;;
    q-parse)     run "parser" build/test_parse ;;
    q-agg)       run "aggregates" build/test_agg ;;
    q-sql)       run "sql" $PY tests/test_sql.py ./parallel.so ;;
    q-params)    run "parameters" $PY tests/test_params.py ./parallel.so ;;
    q-settings)  run "settings" $PY tests/test_settings.py ./parallel.so ;;
    q-order)     run "order (quick)" $PY tests/test_order.py ./parallel.so --quick ;;
    q-plancache) run "plan cache" $PY tests/test_plancache.py ./parallel.so ;;
    q-delivery)  run "delivery" $PY tests/test_delivery.py ./parallel.so ;;
    q-extract)   run "extract (quick)" env HARNESS_SKIP=$SLOW_EXTRACT $PY tests/test_extract.py ./parallel.so ;;
    q-histogram) run "histogram" env HARNESS_SKIP=$TIMED_HISTOGRAM $PY tests/test_histogram.py ./parallel.so ;;
    q-examples)  run "examples" $PY tests/test_examples.py ./parallel.so ;;
    q-views-*)   run "views ${1#q-views-}" $PY tests/test_views.py ./parallel.so --part "${1#q-views-}" ;;
    *) echo "run.sh: no job $1" >&2; exit 2 ;;
  esac
}

now() { date +%s%N; }
lock() { while ! mkdir "$tmp/print.lock" 2>/dev/null; do sleep 0.05; done; }
unlock() { rmdir "$tmp/print.lock"; }

run() {   # run LABEL COMMAND...: one program; its counts go to $tmp/counts
  label=$1; shift
  log=$tmp/log.$(echo "$label" | tr -c 'A-Za-z0-9' '_')
  echo "== $label"
  t0=$(now)
  "$@" >"$log" 2>&1
  rc=$?
  t1=$(now)
  ds=$(( (t1 - t0) / 100000000 ))          # tenths of a second
  line=$(grep -E '^[A-Za-z0-9_. -]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  p=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p')
  f=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p')
  [ -n "$p" ] || p=0
  [ -n "$f" ] || f=0
  lock
  if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
    cat "$log"
    if [ "$f" -eq 0 ]; then
      echo "!! $label exited with status $rc without reporting a failure"
      f=1
    fi
  fi
  echo "$label: $p passed, $f failed ($((ds / 10)).$((ds % 10)) s)"
  echo "$p $f" >>"$tmp/counts"
  unlock
  if [ -n "$RUN_LOGS" ]; then
    mv "$log" "$RUN_LOGS/$(echo "$label" | tr -c 'A-Za-z0-9.\n-' '_').log"
  else
    rm -f "$log"
  fi
}

# In the lanes, RUN_JOBS programs share the cores, each with up to 3 or
# more OpenMP threads: libgomp's default is to spin for a while at every
# barrier, and with more threads than cores the spinning takes the core
# the awaited thread needs (measured: a 300-row scan at 2 threads took 40-70
# ms instead of 1 ms while another program ran).  Waiting passively changes
# speed only, never a result; the timing tests run alone, with the default.
lane() {  # lane JOB...: run each job no other lane has taken yet
  export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
  for j in "$@"; do
    mkdir "$tmp/taken.$j" 2>/dev/null && job "$j"
  done
}

# Longest first (times on an idle 2-core machine), so that the lanes end
# together.
ORDER="a-views a-extract p-extract p-views a-oom a-kernels p-oom a-histogram p-kernels a-tiny
       a-batches p-histogram a-fuzz a-order a-params p-join a-join p-subquery a-subquery p-tpch p-rewrites a-rewrites p-tiny p-order a-groupsort p-groupsort a-window p-window p-wstress p-params p-examples a-sql p-batches p-sql
       a-settings p-settings a-plancache p-plancache a-delivery p-delivery p-bench q-extract q-order q-params q-settings
       q-plancache q-delivery q-kernels q-histogram q-views-targeted q-views-native q-views-scan
       q-views-errors q-tiny q-examples q-batches q-sql p-parse a-parse q-parse p-agg a-agg q-agg"
alone=""
want=""
for suite in "$@"; do
  case $suite in
    plain) alone="$alone p-extract-timed p-hist-timed"; want="$want p-" ;;
    asan)  alone="$alone a-extract-timed a-hist-timed"; want="$want a-" ;;
    quick) want="$want q-" ;;
    *) echo "run.sh: unknown suite $suite" >&2; exit 2 ;;
  esac
done
pool=""
for j in $ORDER; do
  for w in $want; do
    case $j in "$w"*) pool="$pool $j" ;; esac
  done
done

: >"$tmp/counts"
for j in $alone; do job "$j"; done
k=0
while [ "$k" -lt "$JOBS" ]; do
  lane $pool &
  k=$((k + 1))
done
wait
total_pass=0
total_fail=0
while read -r p f; do
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
done <"$tmp/counts"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
