#!/usr/bin/env bash
# Make the venv the Python package (python/) and its tests use, from PyPI wheels only
# (--only-binary :all:), never touching the system Python: numpy, scipy, mpi4py (its
# wheel loads the MPI library it finds at run time: the system's Open MPI or MPICH),
# pytest, scikit-build-core and PySCF (pyscf==2.14.0, the version the shipped cases
# were made with, scripts/deps-data.sh). The venv is $OVL_PY_VENV, default
# ~/.cache/ovl/venv-python; only what is missing is installed (about a minute the
# first time). Then, as the README says:
#   ~/.cache/ovl/venv-python/bin/pip install ./python
# usage: scripts/deps-python.sh
set -euo pipefail
venv=${OVL_PY_VENV:-$HOME/.cache/ovl/venv-python}
py=$venv/bin/python
want=(numpy scipy mpi4py pytest scikit_build_core pyscf)
if [ ! -x "$py" ]; then
  echo "deps-python.sh: making a venv at $venv ($(command -v python3))"
  python3 -m venv "$venv"
fi
missing=()
for m in "${want[@]}"; do
  "$py" -c "import $m" 2>/dev/null || missing+=("${m//_/-}")
done
missing=("${missing[@]/#pyscf/pyscf==2.14.0}")
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps-python.sh: installing ${missing[*]} into $venv (wheels only)"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$py" -m pip install -q --only-binary :all: "${missing[@]}"
fi
