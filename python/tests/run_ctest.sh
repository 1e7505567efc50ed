#!/usr/bin/env bash
# ctest driver of the Python package (tests/CMakeLists.txt registers it).
# usage: run_ctest.sh MODE SRC VENV LIBOVL WORKDIR MPIEXEC [MPIEXEC_FLAGS...]
# VENV: the venv scripts/deps-python.sh makes (wheels: numpy, scipy, mpi4py, pytest,
# scikit-build-core, PySCF), default ~/.cache/ovl/venv-python.
#  MODE pytest-NP : python/tests under MPIEXEC -n NP with VENV's python, the binding
#                   pointed at the in-tree LIBOVL ($OVL_LIBRARY), python/ on PYTHONPATH
#  MODE install   : the README's install lines (the code block after
#                   "<!-- test: python-scf -->", the lines without mpiexec), run as written
#                   from SRC (pip install ./python into VENV; SKBUILD_BUILD_DIR keeps the
#                   build in WORKDIR between runs), then the README's Python example with
#                   VENV's python from WORKDIR under MPIEXEC -n 2 (the installed package)
#  MODE scf       : the README's mpiexec line of that block as written (tools/pyscf_scf.py
#                   on data/water_ccpvdz, --check 1e-8: |E_ovl - E_pyscf| <= 1e-8 Eh) with
#                   the installed package; mpiexec is MPIEXEC with MPIEXEC_FLAGS
#  MODE scf-adaptive-NP : python/tests/scf_adaptive_check.py under MPIEXEC -n NP against the
#                   in-tree LIBOVL (as pytest-NP): ovl.scf's adaptive SCF on water, energy within
#                   1e-9 Eh of PySCF's own and fewer products than SP2 at tol 1e-12 every cycle
# Exit 77 (skipped) when VENV is missing or lacks a module: scripts/deps-python.sh makes it.
set -euo pipefail
mode=$1 src=$2 venv=$3 libovl=$4 work=$5 mpiexec=$6
shift 6
mpiflags=("$@")
py=$venv/bin/python
[ -x "$py" ] || { echo "SKIP: no venv at $venv (scripts/deps-python.sh makes it: wheels from PyPI)"; exit 77; }
need=(numpy mpi4py pytest)
[ "$mode" = install ] && need+=(scikit_build_core)
case "$mode" in scf | scf-adaptive-*) need+=(pyscf scipy) ;; esac
for m in "${need[@]}"; do
  if ! "$py" -c "import $m" 2>/dev/null; then
    echo "SKIP: $py lacks the module $m (scripts/deps-python.sh installs what the Python part needs)"
    exit 77
  fi
done
# mpi4py and libovl must use the same MPI library (two in one process crash): mpi4py's
# wheel loads the one it finds at run time; compare its vendor with libovl's link
a=$(ldd "$libovl" 2>/dev/null | grep -o -E 'lib(mpich|mpi)\.so' | head -n1 || true)
case "$a" in libmpich.so) a="MPICH" ;; libmpi.so) a="Open MPI" ;; esac
b=$(OMPI_MCA_plm=isolated "$py" -c 'from mpi4py import MPI; print(MPI.get_vendor()[0])' 2>/dev/null || true)
if [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]; then
  echo "SKIP: mpi4py in $venv loads $b, libovl ($libovl) uses $a: one MPI library per process"
  exit 77
fi
# the README's block of the install and the SCF tool
block=$(awk '/<!-- test: python-scf -->/{f=1; next} f && /^```sh/{g=1; next} g && /^```/{exit} g' "$src/README.md")
[ -n "$block" ] || { echo "FAIL: README.md has no sh block after <!-- test: python-scf -->"; exit 1; }
mpiexec() { "$mpiexec_bin" "${mpiflags[@]}" "$@"; }
mpiexec_bin=$mpiexec
export PYTHONDONTWRITEBYTECODE=1 PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
case "$mode" in
  pytest-*)
    np=${mode#pytest-}
    export OVL_LIBRARY=$libovl PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH}
    exec "$mpiexec_bin" "${mpiflags[@]}" -n "$np" "$py" -m pytest -q -p no:cacheprovider "$src/python/tests"
    ;;
  scf-adaptive-*)
    np=${mode#scf-adaptive-}
    export OVL_LIBRARY=$libovl PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH} OPENBLAS_NUM_THREADS=1
    exec "$mpiexec_bin" "${mpiflags[@]}" -n "$np" "$py" "$src/python/tests/scf_adaptive_check.py"
    ;;
  install)
    mkdir -p "$work"
    t0=$(date +%s)
    # the README's lines as written, but for the venv's place (VENV for ~/.cache/ovl/venv-python)
    lines=$(printf '%s\n' "$block" | grep -v '^mpiexec' | sed "s|~/.cache/ovl/venv-python|$venv|g")
    echo "$lines"
    (cd "$src" && export SKBUILD_BUILD_DIR="$work/wheel-build" OVL_PY_VENV="$venv" && eval "$lines")
    echo "python install: the README's install lines took $(($(date +%s) - t0)) s"
    lib=$("$py" -c 'import os, importlib.util as u; print(os.path.join(os.path.dirname(u.find_spec("ovl").origin), "libovl.so"))')
    [ -f "$lib" ] || { echo "FAIL: no ovl/libovl.so in the installed package ($lib)"; exit 1; }
    unset OVL_LIBRARY PYTHONPATH
    cd "$work"
    mpiexec -n 2 "$py" "$src/python/tests/readme_example.py" "$src/README.md"
    ;;
  scf)
    unset OVL_LIBRARY PYTHONPATH
    line=$(printf '%s\n' "$block" | grep '^mpiexec' | sed "s|~/.cache/ovl/venv-python|$venv|g")
    echo "$line"
    cd "$src"
    eval "$line"
    ;;
  *) echo "run_ctest.sh: unknown mode $mode" >&2; exit 2 ;;
esac
