#!/bin/sh
# fuzz.sh: run the libFuzzer target for FUZZ_SECONDS (default 600) in
# FUZZ_JOBS (default 1) processes; make fuzz builds the target and calls this.
#
#   sh tests/fuzz/fuzz.sh build/fuzz/fuzz_sql
#
# The work corpus build/fuzz-corpus starts as a copy of tests/fuzz/corpus
# and tests/fuzz/crashes (less the crashers listed in crashes/KNOWN, which
# would stop every run at once) and keeps what the runs add; the processes
# share it (libFuzzer reloads it).  A process that finds a crash, a leak, a
# timeout or an out-of-memory stops; this script starts it again until the
# time is up.  Crash and leak reproducers are copied to tests/fuzz/crashes/
# (make test replays them); timeouts and OOMs stay in build/fuzz-artifacts/.
# The end: each run's last statistics and every finding.
cd "$(dirname "$0")/../.." || exit 2
bin=${1:-build/fuzz/fuzz_sql}
secs=${FUZZ_SECONDS:-600}
jobs=${FUZZ_JOBS:-1}
corpus=build/fuzz-corpus
arts=build/fuzz-artifacts
logs=build/fuzz-logs
mkdir -p "$corpus" "$arts" "$logs" tests/fuzz/crashes || exit 2
rm -f "$logs"/*.log "$arts"/*

known=tests/fuzz/crashes/KNOWN
isknown() {   # isknown NAME: listed in KNOWN
  [ -f "$known" ] && sed 's/#.*//' "$known" | grep -qxF -- "$1"
}
for f in tests/fuzz/corpus/* tests/fuzz/crashes/*; do
  [ -f "$f" ] || continue
  n=$(basename "$f")
  case $n in KNOWN|README*) continue ;; esac
  isknown "$n" && continue
  [ -e "$corpus/$n" ] || cp "$f" "$corpus/$n"
done

end=$(( $(date +%s) + secs ))
worker() {   # worker J: runs until the time is up
  j=$1; k=0
  while :; do
    left=$(( end - $(date +%s) ))
    [ "$left" -gt 5 ] || break
    k=$((k + 1))
    log=$logs/job$j-run$k.log
    "$bin" -dict=tests/fuzz/sql.dict -max_len=2000 -timeout=30 -rss_limit_mb=3072 \
      -max_total_time="$left" -print_final_stats=1 -artifact_prefix="$arts/" \
      "$corpus" >"$log" 2>&1
    rc=$?
    echo "[job $j run $k] exit $rc: $(grep -E '^#[0-9]+' "$log" | tail -n 1)"
    new=0
    for a in "$arts"/crash-* "$arts"/leak-*; do
      [ -f "$a" ] || continue
      if [ ! -e "tests/fuzz/crashes/$(basename "$a")" ]; then
        cp "$a" tests/fuzz/crashes/
        new=1
        echo "[job $j run $k] NEW FINDING: tests/fuzz/crashes/$(basename "$a") (log: $log)"
      fi
    done
    [ "$rc" -eq 0 ] && break
    # A run that ends without anything new (an input of the corpus that
    # crashes at start, or a repeated timeout) would only repeat itself.
    if [ "$new" -eq 0 ] && ! grep -qE '^#[0-9]+.*(NEW|pulse|REDUCE)' "$log"; then
      echo "[job $j run $k] stopped early: see $log"
      break
    fi
  done
}

echo "fuzz: $bin for ${secs}s in $jobs process(es); corpus $corpus, logs $logs/"
j=1
while [ "$j" -le "$jobs" ]; do
  worker "$j" &
  j=$((j + 1))
done
wait

echo "== statistics (last line of each run)"
for log in "$logs"/*.log; do
  [ -f "$log" ] || continue
  s=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  e=$(grep -E '^stat::number_of_executed_units' "$log" | sed 's/.*: *//')
  echo "$(basename "$log" .log): ${s:-no statistics} ${e:+(executions: $e)}"
done
echo "corpus: $(ls "$corpus" | wc -l) inputs in $corpus"
echo "== findings"
found=0
for a in "$arts"/*; do
  [ -f "$a" ] || continue
  echo "$a"
  found=$((found + 1))
done
[ "$found" -eq 0 ] && echo "none"
echo "fuzz: replay one with: build/asan/fuzz_replay FILE (make build/asan/fuzz_replay)"
exit 0
