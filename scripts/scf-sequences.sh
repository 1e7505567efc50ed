#!/usr/bin/env bash
# Record the PySCF Fock sequences bench/scf_replay.py replays (tools/scf-record), outside git:
# $OVL_SCF_DIR (default ~/.cache/ovl/scf)/<name>/. One thread (OPENBLAS_NUM_THREADS=1).
#   h2o8_ccpvdz    n = 192, exact integrals (a few seconds)
#   h2o24_ccpvdz   n = 576, density fitting with cc-pvdz-jkfit (a few minutes)
# usage: scripts/scf-sequences.sh [NAME...]   (default: both)
# Needs the venv of scripts/deps-python.sh (PySCF) and a built libovl.so (build/src, or $OVL_LIBRARY).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${OVL_SCF_DIR:-$HOME/.cache/ovl/scf}
py=${OVL_PY:-$HOME/.cache/ovl/venv-python/bin/python}
export OVL_LIBRARY=${OVL_LIBRARY:-$src/build/src/libovl.so} PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} OMP_NUM_THREADS=1
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(h2o8_ccpvdz h2o24_ccpvdz)
mkdir -p "$out"
for name in "${names[@]}"; do
  case $name in
    h2o8_ccpvdz) extra=() ;;
    h2o24_ccpvdz) extra=(--density-fit cc-pvdz-jkfit) ;;
    *) echo "scf-sequences.sh: unknown sequence $name (h2o8_ccpvdz, h2o24_ccpvdz)" >&2; exit 2 ;;
  esac
  "$py" "$src/tools/scf-record" --case "$src/data/$name" --out "$out/$name" "${extra[@]}"
done
