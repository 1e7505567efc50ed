#!/usr/bin/env bash
# Load runs of ovl on this machine (not part of ctest: minutes of machine time).
# usage: load_test.sh OVL MPIEXEC [MPIEXEC_FLAGS...]
# environment: GEMM_N (default 12288), PURIFY_N (4096), BIG_N (24576), NP (2),
#   STEPS (default "1 2 3 4": which of the runs below)
#  1. ovl gemm -n GEMM_N on NP ranks, one repetition: time, and each rank's
#     peak RSS (GNU time %M) against the estimate that ovl gemm checks before
#     allocating (ovl_mm_memory, printed as mem_estimate by --json).
#  2. the largest n that the memory check admits on NP ranks (bisection on the
#     estimate printed by --mem-limit 1, which refuses before allocating)
#     against MemAvailable / NP.
#  3. ovl gemm -n BIG_N: allocated, filled, and run until the multiplication
#     is under way (peak RSS sampled from /proc/PID/status every second), then
#     stopped: a full run at the memory limit would take far longer than the
#     machine can be lent for.
#  4. ovl purify on a synthetic n = PURIFY_N Fock matrix on 4 ranks (alg6,
#     2 x 2 x 1): time, iterations, peak RSS per rank.
set -u
OVL=$(readlink -f "$1"); shift
MPIEXEC=("$@")
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
GEMM_N=${GEMM_N:-12288}; PURIFY_N=${PURIFY_N:-4096}; BIG_N=${BIG_N:-24576}; NP=${NP:-2}; STEPS=" ${STEPS:-1 2 3 4} "
step() { [[ "$STEPS" == *" $1 "* ]]; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

if step 1; then
echo "## 1. gemm n=$GEMM_N on $NP ranks"
"${MPIEXEC[@]}" -n "$NP" /usr/bin/time -f "peak-rss-kb %M wall %e" "$OVL" gemm -n "$GEMM_N" -b 256 --lookahead -i 1 -x 0 \
  --json --no-blas-check >"$tmp/g.out" 2>"$tmp/g.err"
est=$(sed -n 's/.*"mem_estimate":\([0-9]*\).*/\1/p' "$tmp/g.out")
t=$(sed -n 's/.*"t_min":\([0-9.e+-]*\).*/\1/p' "$tmp/g.out")
gf=$(sed -n 's/.*"gflops_median":\([0-9.]*\).*/\1/p' "$tmp/g.out")
rss=$(awk '/peak-rss-kb/ { if ($2 > m) m = $2 } END { printf "%.0f\n", m * 1024 }' "$tmp/g.err")
echo "gemm n=$GEMM_N: time $t s ($gf GFLOP/s), estimate $(mib "$est") MiB per rank, peak RSS $(mib "$rss") MiB (max over ranks), RSS/estimate $(awk -v a="$rss" -v b="$est" 'BEGIN { printf "%.3f", a / b }')"
fi

if step 2; then
echo "## 2. the largest n admitted on $NP ranks"
avail=$(awk '/MemAvailable/ { printf "%.0f\n", $2 * 1024 }' /proc/meminfo)
need() { "${MPIEXEC[@]}" -n "$NP" "$OVL" gemm -n "$1" -b 256 --lookahead --mem-limit 1 -q 2>&1 | sed -n 's/.*needs \([0-9.]*\) MiB per rank.*/\1/p' | head -n 1; }
lo=1024; hi=65536
while [ $((hi - lo)) -gt 256 ]; do
  mid=$(((lo + hi) / 2))
  if awk -v a="$(need "$mid")" -v b="$avail" -v p="$NP" 'BEGIN { exit !(a * 1048576 <= b / p) }'; then lo=$mid; else hi=$mid; fi
done
echo "largest n admitted: about $lo (estimate $(need "$lo") MiB per rank; MemAvailable $(mib "$avail") MiB / $NP ranks)"
fi

if step 3; then
echo "## 3. gemm n=$BIG_N on $NP ranks, until the multiplication is under way"
"${MPIEXEC[@]}" -n "$NP" "$OVL" gemm -n "$BIG_N" -b 256 --lookahead -i 1 -x 0 --no-blas-check >"$tmp/b.out" 2>"$tmp/b.err" &
job=$!
peak=0; started=0; t0=$SECONDS
while kill -0 "$job" 2>/dev/null && [ $((SECONDS - t0)) -lt 600 ]; do
  sleep 1
  for p in $(pgrep -P "$job"); do
    h=$(awk '/VmHWM/ { printf "%.0f\n", $2 * 1024 }' "/proc/$p/status" 2>/dev/null)
    [ -n "$h" ] && [ "$h" -gt "$peak" ] && peak=$h
  done
  # the estimate line is printed after the operands are allocated and filled
  if [ "$started" -eq 0 ] && grep -q "memory:" "$tmp/b.out"; then started=$SECONDS; fi
  [ "$started" -gt 0 ] && [ $((SECONDS - started)) -ge 30 ] && break
done
kill -TERM "$job" 2>/dev/null; wait "$job" 2>/dev/null
best=$(sed -n 's/^# memory: \([0-9.]*\) MiB per rank.*/\1/p' "$tmp/b.out")
echo "gemm n=$BIG_N: estimate $best MiB per rank, peak RSS $(mib "$peak") MiB after $((SECONDS - t0)) s ($((started > 0 ? SECONDS - started : 0)) s into the multiplication), RSS/estimate $(awk -v a="$peak" -v b="$best" 'BEGIN { if (b > 0) printf "%.3f", a / 1048576 / b; else print "?" }')"
fi

if step 4; then
echo "## 4. purify n=$PURIFY_N on 4 ranks (alg6, 2x2x1)"
"$PY" - "$PURIFY_N" "$tmp/F.raw" <<'PY'
import json, sys
import numpy as np
n, p = int(sys.argv[1]), sys.argv[2]
r = np.random.default_rng(1).standard_normal((n, n)) * 1e-3
F = np.diag(np.linspace(-1, 1, n)) + (r + r.T) / 2
F.astype("<f8").tofile(p)
json.dump({"rows": n, "cols": n, "symmetric": True}, open(p + ".json", "w"))
PY
"${MPIEXEC[@]}" -n 4 /usr/bin/time -f "peak-rss-kb %M wall %e" "$OVL" purify --fock "$tmp/F.raw" --nocc $((PURIFY_N / 2)) \
  --algo alg6 --json -o "$tmp/D.raw" >"$tmp/p.out" 2>"$tmp/p.err"
rss=$(awk '/peak-rss-kb/ { if ($2 > m) m = $2 } END { printf "%.0f\n", m * 1024 }' "$tmp/p.err")
blocks=$((4 * (PURIFY_N / 2) * (PURIFY_N / 2) * 8))
echo "purify n=$PURIFY_N: $(sed -n 's/.*"iterations":\([0-9]*\).*"t_total":\([0-9.e+-]*\).*"ssc_gflops":\([0-9.]*\).*/\1 iterations, \2 s, SymmSquareCube \3 GFLOP\/s/p' "$tmp/p.out"), peak RSS $(mib "$rss") MiB per rank (max), F D D2 D3 blocks $(mib "$blocks") MiB per rank"
fi
