#!/usr/bin/env bash
# Purification (ovl) against eigendecomposition (ScaLAPACK pdsyevd + the
# density Z_occ Z_occ^T with pdgemm) on the same matrices and ranks, with
# bench/peers' eig_peer: one launch per (matrix, rank count), the two methods
# interleaved, time = MAX over ranks, median of REPS.
# usage: bench/purify_vs_eig.sh [BUILD_DIR]   (env: NPS="1 4 8", CASES="h2o8_ccpvdz h2o24_ccpvdz", REPS=5)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/..
build=${1:-$root/build}
NPS=${NPS:-"1 4 8"}
CASES=${CASES:-"c10h22_631g h2o8_ccpvdz h2o24_ccpvdz"}
REPS=${REPS:-5}
out=$(mktemp); trap 'rm -f "$out"' EXIT
for c in $CASES; do
  for np in $NPS; do
    "$root/scripts/mpirun.sh" "$np" "$build/bench/eig_peer" --fock "$root/data/$c/fock.raw" -i "$REPS" --json >>"$out"
  done
done
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print("| matrix n | ranks | pdsyevd + pdgemm (s) | BLACS grid | purify (s) | ovl grid, algorithm | iterations | eig / purify | errors vs reference |")
print("|---:|---:|---:|---|---:|---|---:|---:|---|")
for e, p in zip(rows[0::2], rows[1::2]):
    print("| %d | %d | %.4f | %s | %.4f | %s %s ndup=%d | %d | **%.2f** | %.0e / %.0e |" % (
        e["n"], e["ranks"], e["t_median"], e["grid"], p["t_median"], p["grid"], p["algo"], p["ndup"],
        p["iterations"], p["eig_over_purify"], e["relerr"], p["relerr"]))
PY
