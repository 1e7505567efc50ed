#!/usr/bin/env bash
# The whole-SCF replay (bench/scf_replay.py) in the node's two headline settings, then the plot.
#   1x2: 1 rank x 2 BLAS threads (OPENBLAS_NUM_THREADS=2)   2x1: 2 ranks x 1 thread
# usage: bench/scf_replay.sh OUTDIR [SEQ_DIR...]   (default: ~/.cache/ovl/scf/h2o8_ccpvdz, h2o24_ccpvdz,
#        recorded by scripts/scf-sequences.sh); env REPS (default 5), REPS_2X1 (default REPS),
#        PLOT (default docs/img/scf_products.png)
# Writes OUTDIR/replay_1x2.{txt,json}, OUTDIR/replay_2x1.{txt,json}.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=$1
shift
seqs=("$@")
[ ${#seqs[@]} -gt 0 ] || seqs=("$HOME/.cache/ovl/scf/h2o8_ccpvdz" "$HOME/.cache/ovl/scf/h2o24_ccpvdz")
py=${OVL_PY:-$HOME/.cache/ovl/venv-python/bin/python}
mpiexec=${MPIEXEC:-mpiexec}
source "$src/scripts/env.sh"
export OVL_LIBRARY=${OVL_LIBRARY:-$src/build/src/libovl.so} PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH}
export OMP_NUM_THREADS=1
mkdir -p "$out"
OPENBLAS_NUM_THREADS=2 "$py" "$src/bench/scf_replay.py" "${seqs[@]}" --reps "${REPS:-5}" \
  --json "$out/replay_1x2.json" | tee "$out/replay_1x2.txt"
OPENBLAS_NUM_THREADS=1 "$mpiexec" --oversubscribe --bind-to none -x OPENBLAS_NUM_THREADS -n 2 "$py" \
  "$src/bench/scf_replay.py" "${seqs[@]}" --reps "${REPS_2X1:-${REPS:-5}}" --json "$out/replay_2x1.json" | tee "$out/replay_2x1.txt"
/usr/bin/python3 "$src/bench/scf_replay.py" --replot "$out/replay_1x2.json" --plot "${PLOT:-$src/docs/img/scf_products.png}"
