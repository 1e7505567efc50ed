#!/usr/bin/env bash
# The pdgemm drop-in against plain ScaLAPACK: one unchanged binary
# (build/tests/dropin_pdgemm --bench, linked with ScaLAPACK only) run without
# and with LD_PRELOAD=libovl_scalapack.so, interleaved: each round launches
# every (ranks, n) both ways, alternating which goes first. Each launch: C :=
# A B, n x n, NB x NB blocks, beta 0, 1 warm-up + REPS timed calls, time =
# MAX over ranks. Prints a markdown table: per (ranks, n) the min and median
# of all timed calls of each variant, GFLOP/s at the min, and the ratios
# ScaLAPACK / drop-in of the min and median times (> 1: the drop-in is faster).
#   bench/dropin_bench.sh [BUILD_DIR]
#   env: SIZES="2000 4000" RANKS="4 8" NB=128 ROUNDS=3 REPS=2
#        OPTIONS="--dropin-mem 1024G" (the drop-in's OVL_OPTIONS: by default
#        no memory cap, so every call runs on ovl; bench/peers/dropin_shapes.sh
#        measures the defaults)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
exe=$build/tests/dropin_pdgemm lib=$build/lib/libovl_scalapack.so
[ -x "$exe" ] && [ -e "$lib" ] || { echo "dropin_bench: build $exe and $lib first (cmake --build $build)" >&2; exit 2; }
SIZES=${SIZES:-"2000 4000"} RANKS=${RANKS:-"4 8"} NB=${NB:-128} ROUNDS=${ROUNDS:-3} REPS=${REPS:-2}
OPTIONS=${OPTIONS:-"--dropin-mem 1024G"}
. "$root/scripts/env.sh"
out=$(mktemp "${TMPDIR:-/tmp}/dropin_bench.XXXXXX")
trap 'rm -f "$out"' EXIT
echo "# bench/dropin_bench.sh: sizes $SIZES, ranks $RANKS, NB=$NB, $ROUNDS rounds x $REPS timed calls (+1 warm-up) per launch"
echo "# $(getconf _NPROCESSORS_ONLN) cores; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
launch() { # VARIANT NP N
  local pre=()
  [ "$1" = ovl ] && pre=(-x "LD_PRELOAD=$lib" -x OVL_SCALAPACK_REPORT=1 -x "OVL_OPTIONS=$OPTIONS")
  local o
  o=$("$root/scripts/mpirun.sh" "$2" "${pre[@]}" "$exe" --bench "$3" "$NB" "$REPS" 2>&1) || { echo "$o" >&2; exit 1; }
  grep -q "check=ok" <<<"$o" || { echo "$o" >&2; echo "dropin_bench: wrong result" >&2; exit 1; }
  if [ "$1" = ovl ] && ! grep -q "pdgemm calls=.* forwarded=0" <<<"$o"; then
    echo "$o" >&2; echo "dropin_bench: the drop-in forwarded calls" >&2; exit 1
  fi
  grep -o 't=[0-9.]*' <<<"$o" | while read -r t; do echo "$1 $2 $3 ${t#t=}"; done >>"$out"
}
for ((r = 0; r < ROUNDS; r++)); do
  for np in $RANKS; do
    for n in $SIZES; do
      if ((r % 2 == 0)); then launch scalapack "$np" "$n"; launch ovl "$np" "$n"
      else launch ovl "$np" "$n"; launch scalapack "$np" "$n"; fi
    done
  done
done
echo "# load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" <<'EOF'
import sys, statistics
t = {}
for line in open(sys.argv[1]):
    v, np, n, s = line.split()
    t.setdefault((int(np), int(n)), {}).setdefault(v, []).append(float(s))
print("| ranks | n | ScaLAPACK min (med) s | drop-in min (med) s | GFLOP/s at min: ScaLAPACK / drop-in | ratio min | ratio median |")
print("|---|---|---|---|---|---|---|")
for (np, n), d in sorted(t.items()):
    a, b = d["scalapack"], d["ovl"]
    gf = lambda x: 2.0 * n**3 / x / 1e9
    print(f"| {np} | {n} | {min(a):.3f} ({statistics.median(a):.3f}) | {min(b):.3f} ({statistics.median(b):.3f}) | "
          f"{gf(min(a)):.1f} / {gf(min(b)):.1f} | {min(a) / min(b):.2f} | "
          f"{statistics.median(a) / statistics.median(b):.2f} |")
EOF
