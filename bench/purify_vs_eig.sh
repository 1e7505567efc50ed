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
runs = {}
for r in rows:
    runs.setdefault((r["n"], r["ranks"]), {})[r["method"]] = r
print("| matrix n | ranks | pdsyevd + pdgemm (s) | ELPA 2-stage + pdgemm (s) | purify (s) | ovl grid, algorithm | iterations | pdsyevd / purify | ELPA / purify | errors vs reference (pdsyevd, ELPA, purify) |")
print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---|")
for (n, np_), m in sorted(runs.items()):
    e, p, l = m["pdsyevd"], m["purify"], m.get("elpa")
    print("| %d | %d | %.4f | %s | %.4f | %s %s ndup=%d | %d | **%.2f** | %s | %.0e, %s, %.0e |" % (
        n, np_, e["t_median"], "%.4f" % l["t_median"] if l else "-", p["t_median"], p["grid"], p["algo"], p["ndup"],
        p["iterations"], e["t_median"] / p["t_median"], "**%.2f**" % (l["t_median"] / p["t_median"]) if l else "-",
        e["relerr"], "%.0e" % l["relerr"] if l else "-", p["relerr"]))
PY
