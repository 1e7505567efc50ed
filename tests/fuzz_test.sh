#!/usr/bin/env bash
# A short, bounded fuzzing run of ovl's parsers with libFuzzer.
# usage: fuzz_test.sh OUT_DIR LIBOVL_A SECONDS_PER_TARGET
# Builds the targets (fuzz/build.sh; exit 77 = skipped when clang or its
# libFuzzer runtime is missing), replays every committed regression input
# (fuzz/regressions/<target>/), then fuzzes each target for SECONDS from the
# seed corpus (fuzz/corpus/<target>/) plus what earlier runs in OUT_DIR found.
# A crash fails the test; the input is kept in OUT_DIR/crashes/ and must be
# committed under fuzz/regressions/<target>/ with the fix.
set -u
OUT=$1; LIB=$2; SECS=$3
SRC=$(cd "$(dirname "$0")/.." && pwd)
bash "$SRC/fuzz/build.sh" "$OUT" "$LIB"
brc=$?
[ "$brc" -eq 77 ] && exit 77
[ "$brc" -ne 0 ] && { echo "fuzz: building the targets failed"; exit 1; }
mkdir -p "$OUT/crashes"
fail=0
for t in sidecar mtx opts; do
  reg=("$SRC/fuzz/regressions/$t"/*)
  if [ -e "${reg[0]}" ]; then
    if ! "$OUT/fuzz_$t" "${reg[@]}" >"$OUT/replay_$t.log" 2>&1; then
      echo "FAIL: fuzz_$t: a regression input crashes again:"; tail -n 20 "$OUT/replay_$t.log"; fail=1; continue
    fi
    echo "fuzz_$t: ${#reg[@]} regression inputs replayed"
  fi
  mkdir -p "$OUT/work_$t"
  "$OUT/fuzz_$t" -max_total_time="$SECS" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -print_final_stats=1 \
    -dict="$SRC/fuzz/$t.dict" -artifact_prefix="$OUT/crashes/$t-" "$OUT/work_$t" "$SRC/fuzz/corpus/$t" \
    >"$OUT/fuzz_$t.log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/fuzz_$t.log")
  cov=$(grep -E '^#[0-9]+' "$OUT/fuzz_$t.log" | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+')
  echo "fuzz_$t: rc=$rc, ${execs:-?} executions in ${SECS}s, corpus $(ls "$OUT/work_$t" | wc -l) inputs, $cov"
  if [ "$rc" -ne 0 ]; then
    fail=1
    echo "FAIL: fuzz_$t found a crash; the input is in $OUT/crashes/ (commit it under fuzz/regressions/$t/ with the fix):"
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$OUT/fuzz_$t.log" | head -n 10
  fi
done
exit "$fail"
