#!/usr/bin/env bash
# The main job: density-matrix purification of real Hartree-Fock Fock matrices
# (data/, made with tools/make-fock), SymmSquareCube Algorithm 5 against
# Algorithm 4, verified against LAPACK's eigensolver, with timings; then the
# methods (canonical, SP2, TRS4) against ScaLAPACK's pdsyevd and ELPA.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/..
OVL=${OVL:-$root/build/ovl}
DATA=${DATA:-$root/data}
NP=${NP:-8}
REPS=${REPS:-3}
run() { echo "\$ mpiexec -n $1 $(basename "$2") ${*:3}"; "$here/mpirun.sh" "$@"; echo; }

echo "== ovl demo: canonical purification on real Fock matrices (orthonormal basis) =="
echo
run 1 "$OVL" purify --fock "$DATA/water_ccpvdz/fock.raw" --check -q
run "$NP" "$OVL" purify --fock "$DATA/h2o24_ccpvdz/fock.raw" --algo alg5 --ndup 4 --check

echo "== SymmSquareCube Algorithm 4 (baseline) vs Algorithm 5 (N_DUP = 4), $NP ranks, $REPS runs each =="
echo "   (shared memory on this machine; with more ranks than cores the ranks share the cores)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for r in $(seq 1 "$REPS"); do
  for a in alg4 alg5; do
    "$here/mpirun.sh" "$NP" "$OVL" purify --fock "$DATA/h2o24_ccpvdz/fock.raw" --algo "$a" --ndup 4 --json \
      >>"$tmp/$a.json"
  done
done
python3 - "$tmp/alg4.json" "$tmp/alg5.json" <<'PY'
import json, statistics, sys
rows = {}
for path in sys.argv[1:]:
    runs = [json.loads(l) for l in open(path) if l.startswith("{")]
    t = [r["t_ssc"] / r["iterations"] for r in runs]
    rows[runs[0]["algo"]] = (min(t), statistics.median(t), runs[0])
print(f"{'algo':6} {'SSC s/iter (min)':>17} {'(median)':>10} {'GFLOP/s (median)':>17}  iterations  energy")
for a, (tmin, tmed, r) in rows.items():
    n = r["n"]
    print(f"{a:6} {tmin:17.5f} {tmed:10.5f} {4 * n**3 / tmed * 1e-9:17.2f}  {r['iterations']:10d}  {r['energy']:.10f}")
if "alg4" in rows and "alg5" in rows:
    print(f"Alg. 5 over Alg. 4 (median time per SymmSquareCube): {rows['alg4'][1] / rows['alg5'][1]:.3f}x")
PY
EIG=${EIG:-$(dirname "$OVL")/bench/eig_peer}
if [ -x "$EIG" ]; then
  echo
  echo "== Purification methods against the eigensolvers, $NP ranks, interleaved, median of $REPS =="
  echo "   canonical on SymmSquareCube (4 n^3 flops per iteration); SP2 and TRS4 on the symmetric square (n^3 per square)"
  run "$NP" "$EIG" --fock "$DATA/h2o24_ccpvdz/fock.raw" -i "$REPS" --purify canonical,sp2,trs4
fi
echo "demo: done"
