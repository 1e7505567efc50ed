#!/usr/bin/env bash
# Load runs of ovl on this machine (not part of ctest: minutes to an hour of
# machine time; docs/lab/reliability.md has the figures).
# usage: load_test.sh OVL MPIEXEC [MPIEXEC_FLAGS...]
# environment: GEMM_N (default 12288), NP (2), PURIFY_N (4096), PURIFY_NP (4),
#   STEPS (default "1 2 3 4": which of the runs below)
#  1. ovl gemm -n GEMM_N on NP ranks, one repetition, result checked: time,
#     and each rank's peak RSS (GNU time %M) against the estimate that ovl gemm
#     checks before allocating (ovl_mm_memory, mem_estimate in --json).
#  2. the largest n that ovl gemm's memory check admits on NP ranks
#     (bisection on the estimate printed with --mem-limit 1, which refuses
#     before allocating) against MemAvailable / NP.
#  3. the same for ovl purify (alg6 on PURIFY_NP ranks), on a header-only
#     Fock file (a sparse file of the right size: the check reads the header).
#  4. ovl purify on a synthetic n = PURIFY_N Fock matrix on PURIFY_NP ranks
#     (alg6, the 2.5D grid): iterations, time, and each rank's peak RSS
#     against the estimate ovl purify checks (ovl_purify_memory).
#     The matrix: a gapped spectrum (n/2 diagonal entries spread over
#     [-1, -0.8], n/2 over [0.8, 1]) plus a symmetric perturbation of 1e-6
#     N(0, 1) entries; n_occ = n/2 (an insulator: few iterations).
set -u
OVL=$(readlink -f "$1"); shift
MPIEXEC=("$@")
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
GEMM_N=${GEMM_N:-12288}; NP=${NP:-2}; PURIFY_N=${PURIFY_N:-4096}; PURIFY_NP=${PURIFY_NP:-4}
STEPS=" ${STEPS:-1 2 3 4} "
step() { [[ "$STEPS" == *" $1 "* ]]; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ovl-load.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
peak_rss() { awk '/peak-rss-kb/ { if ($2 > m) m = $2 } END { printf "%.0f\n", m * 1024 }' "$1"; }
avail=$(awk '/MemAvailable/ { printf "%.0f\n", $2 * 1024 }' /proc/meminfo)
# bisect LO HI NP NEED: the largest n in [LO, HI] whose estimate (NEED n, MiB per rank) fits MemAvailable / NP
bisect() {
  local lo=$1 hi=$2 np=$3 need=$4 mid
  while [ $((hi - lo)) -gt 64 ]; do
    mid=$(((lo + hi) / 2))
    if awk -v a="$($need "$mid")" -v b="$avail" -v p="$np" 'BEGIN { exit !(a != "" && a * 1048576 <= b / p) }'; then
      lo=$mid
    else hi=$mid; fi
  done
  echo "$lo"
}

if step 1; then
  echo "## 1. gemm n=$GEMM_N on $NP ranks"
  "${MPIEXEC[@]}" -n "$NP" /usr/bin/time -f "peak-rss-kb %M wall %e" "$OVL" gemm -n "$GEMM_N" -b 256 --lookahead -i 1 \
    -x 0 --check --check-mode prob --json >"$tmp/g.out" 2>"$tmp/g.err"
  echo "exit $?: $(cat "$tmp/g.out")"
  est=$(sed -n 's/.*"mem_estimate":\([0-9]*\).*/\1/p' "$tmp/g.out")
  rss=$(peak_rss "$tmp/g.err")
  echo "gemm n=$GEMM_N: estimate $(mib "$est") MiB per rank, peak RSS $(mib "$rss") MiB (max over ranks)," \
    "RSS/estimate $(awk -v a="$rss" -v b="$est" 'BEGIN { printf "%.3f", a / b }'), wall $(grep -o 'wall [0-9.]*' "$tmp/g.err" | head -1)"
fi

if step 2; then
  echo "## 2. the largest gemm n admitted on $NP ranks"
  gneed() { "${MPIEXEC[@]}" -n "$NP" "$OVL" gemm -n "$1" -b 256 --lookahead --mem-limit 1 -q 2>&1 |
    sed -n 's/.*needs \([0-9.]*\) MiB per rank.*/\1/p' | head -n 1; }
  lo=$(bisect 1024 65536 "$NP" gneed)
  echo "largest gemm n admitted: about $lo (estimate $(gneed "$lo") MiB per rank; MemAvailable $(mib "$avail") MiB / $NP ranks)"
fi

if step 3; then
  echo "## 3. the largest purify n admitted on $PURIFY_NP ranks (alg6)"
  pneed() {
    truncate -s $(($1 * $1 * 8)) "$tmp/h.raw"
    printf '{"rows": %d, "cols": %d, "symmetric": true}\n' "$1" "$1" >"$tmp/h.raw.json"
    "${MPIEXEC[@]}" -n "$PURIFY_NP" "$OVL" purify --fock "$tmp/h.raw" --nocc 1 --algo alg6 --mem-limit 1 2>&1 |
      sed -n 's/.*needs \([0-9.]*\) MiB per rank.*/\1/p' | head -n 1
    rm -f "$tmp/h.raw" "$tmp/h.raw.json"
  }
  lo=$(bisect 256 65536 "$PURIFY_NP" pneed)
  echo "largest purify n admitted: about $lo (estimate $(pneed "$lo") MiB per rank; MemAvailable $(mib "$avail") MiB / $PURIFY_NP ranks)"
fi

if step 4; then
  echo "## 4. purify n=$PURIFY_N on $PURIFY_NP ranks (alg6)"
  "$PY" - "$PURIFY_N" "$tmp/F.raw" <<'PY'
import json, sys
import numpy as np
n, path = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(1)
h = n // 2
d = np.concatenate([np.linspace(-1.0, -0.8, h), np.linspace(0.8, 1.0, n - h)])
F = np.empty((n, n))
for i in range(0, n, 1024):  # the perturbation in row blocks, symmetrized below
    F[i:i + 1024] = rng.standard_normal((min(1024, n - i), n)) * 1e-6
F += F.T.copy()
F *= 0.5
F[np.diag_indices(n)] += d
F.astype("<f8").tofile(path)
json.dump({"rows": n, "cols": n, "symmetric": True}, open(path + ".json", "w"))
PY
  "${MPIEXEC[@]}" -n "$PURIFY_NP" /usr/bin/time -f "peak-rss-kb %M wall %e" "$OVL" purify --fock "$tmp/F.raw" \
    --nocc $((PURIFY_N / 2)) --algo alg6 --json -o "$tmp/D.raw" >"$tmp/p.out" 2>"$tmp/p.err"
  echo "exit $?: $(cat "$tmp/p.out")"
  est=$(sed -n 's/.*"mem_estimate":\([0-9]*\).*/\1/p' "$tmp/p.out")
  rss=$(peak_rss "$tmp/p.err")
  echo "purify n=$PURIFY_N: $(sed -n 's/.*"iterations":\([0-9]*\).*"t_total":\([0-9.e+-]*\).*"ssc_gflops":\([0-9.]*\).*/\1 iterations, \2 s, SymmSquareCube \3 GFLOP\/s/p' "$tmp/p.out"),"\
" estimate $(mib "$est") MiB per rank, peak RSS $(mib "$rss") MiB (max over ranks), RSS/estimate $(awk -v a="$rss" -v b="$est" 'BEGIN { printf "%.3f", a / b }')"
  ls -l "$tmp"/D.raw* 2>/dev/null
fi
