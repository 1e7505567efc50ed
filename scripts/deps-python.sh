#!/usr/bin/env bash
# Install what the Python package (python/) and its tests need into the
# Python in use (python3 on PATH, or $PYTHON), from PyPI, only what is
# missing: numpy, pytest, scikit-build-core, and mpi4py built against the
# MPI library ovl is built with (Debian's Open MPI by default; $MPICC to
# choose another). PySCF is needed only by tools/pyscf_scf.py (pass
# --pyscf to install it too).
# usage: scripts/deps-python.sh [--pyscf]
set -euo pipefail
py=${PYTHON:-python3}
mpicc=${MPICC:-/usr/bin/mpicc.openmpi}
want=(numpy pytest scikit_build_core)
[ "${1:-}" = "--pyscf" ] && want+=(pyscf)
missing=()
for m in "${want[@]}"; do
  "$py" -c "import $m" 2>/dev/null || missing+=("${m//_/-}")
done
# a Debian interpreter is "externally managed" (PEP 668): pip needs leave to add to it
brk=()
"$py" -c 'import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)' &&
  brk=(--break-system-packages)
missing=("${missing[@]/#pyscf/pyscf==2.14.0}") # the version the shipped cases were made with (scripts/deps-data.sh)
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps-python.sh: installing ${missing[*]} into $py"
  "$py" -m pip install -q "${brk[@]}" "${missing[@]}"
fi
# mpi4py must use the same MPI library as libovl.so: a wheel built for
# another MPI would load a second MPI into the process
if ! "$py" -c "import mpi4py" 2>/dev/null; then
  [ -x "$mpicc" ] || { echo "deps-python.sh: no MPI compiler wrapper at $mpicc (set MPICC)" >&2; exit 1; }
  echo "deps-python.sh: building mpi4py with $mpicc"
  MPICC="$mpicc" "$py" -m pip install -q "${brk[@]}" --no-binary mpi4py --no-cache-dir mpi4py
fi
