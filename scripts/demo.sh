#!/usr/bin/env bash
# The main job: distributed matrix multiplication with verification and timings.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OVL=${OVL:-$here/../build/ovl}
run() { echo "\$ mpiexec -n $1 ${*:2}"; "$here/mpirun.sh" "$@"; echo; }
echo "== ovl demo: SUMMA, C = A*B on random operands, verified =="
run 1 "$OVL" gemm --algo summa -n 2048 -b 256 --check -i 3
run 2 "$OVL" gemm --algo summa -n 4096 -b 256 --check -i 3
run 4 "$OVL" gemm --algo summa -n 2048 -b 256 --check -i 3
echo "demo: done"
