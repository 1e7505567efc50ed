#!/usr/bin/env bash
# ctest driver of the Python package (tests/CMakeLists.txt registers it).
# usage: run_ctest.sh MODE SRC PYTHON LIBOVL WORKDIR MPIEXEC [MPIEXEC_FLAGS...]
#  MODE pytest-NP : python/tests under MPIEXEC -n NP, the binding pointed at
#                   the in-tree LIBOVL ($OVL_LIBRARY) with python/ on PYTHONPATH
#  MODE install   : pip install the package (scikit-build-core, no build
#                   isolation, no dependencies fetched) into WORKDIR/site and
#                   run the README's example from there under MPIEXEC -n 2
#  MODE scf       : tools/pyscf_scf.py on data/water_ccpvdz under MPIEXEC -n 2,
#                   |E_ovl - E_pyscf| <= 1e-8
# Exit 77 (skipped) when the Python modules are missing: scripts/deps-python.sh installs them.
set -euo pipefail
mode=$1 src=$2 py=$3 libovl=$4 work=$5 mpiexec=$6
shift 6
mpiflags=("$@")
py=$("$py" -c "import sys; print(sys.executable)") # the interpreter itself, not a shim (mpiexec starts it)
need=(numpy mpi4py pytest)
[ "$mode" = install ] && need+=(scikit_build_core)
[ "$mode" = scf ] && need+=(pyscf scipy)
for m in "${need[@]}"; do
  if ! "$py" -c "import $m" 2>/dev/null; then
    echo "SKIP: $py lacks the module $m (scripts/deps-python.sh installs what the Python part needs)"
    exit 77
  fi
done
# mpi4py and libovl must use the same MPI library (Debian's python3-mpi4py is
# built for Open MPI; two MPI libraries in one process crash): compare the MPI
# libraries the two are linked with
mpi_of() { ldd "$1" 2>/dev/null | grep -o -m1 -E 'lib(mpich|mpi)\.so[.0-9]*' || true; }
m4py=$("$py" -c 'import glob, os, mpi4py; print(glob.glob(os.path.join(os.path.dirname(mpi4py.__file__), "MPI*.so"))[0])' 2>/dev/null || true)
a=$(mpi_of "$libovl") b=$([ -n "$m4py" ] && mpi_of "$m4py")
if [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]; then
  echo "SKIP: mpi4py ($m4py) uses $b, libovl ($libovl) uses $a: the Python part needs an mpi4py built for the MPI of the build"
  exit 77
fi
export PYTHONDONTWRITEBYTECODE=1 PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
case "$mode" in
  pytest-*)
    np=${mode#pytest-}
    export OVL_LIBRARY=$libovl PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH}
    exec "$mpiexec" "${mpiflags[@]}" -n "$np" "$py" -m pytest -q -p no:cacheprovider "$src/python/tests"
    ;;
  install)
    rm -rf "$work/site"
    mkdir -p "$work"
    t0=$(date +%s)
    # the build directory is kept between runs (a rebuild only compiles what changed)
    brk=() # Debian's interpreter is externally managed (PEP 668); --target leaves it untouched all the same
    "$py" -c 'import os, sys, sysconfig; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)' &&
      brk=(--break-system-packages)
    "$py" -m pip install -q "${brk[@]}" --no-build-isolation --no-deps --target "$work/site" \
      --config-settings=build-dir="$work/wheel-build" "$src/python"
    echo "python install: pip install took $(($(date +%s) - t0)) s"
    [ -f "$work/site/ovl/libovl.so" ] || { echo "FAIL: no ovl/libovl.so in the installed package"; exit 1; }
    unset OVL_LIBRARY
    cd "$work"
    PYTHONPATH="$work/site" "$mpiexec" "${mpiflags[@]}" -n 2 "$py" "$src/python/tests/readme_example.py" "$src/README.md"
    ;;
  scf)
    export OVL_LIBRARY=$libovl PYTHONPATH=$src/python${PYTHONPATH:+:$PYTHONPATH}
    exec "$mpiexec" "${mpiflags[@]}" -n 2 "$py" "$src/tools/pyscf_scf.py" --case "$src/data/water_ccpvdz" --check 1e-8
    ;;
  *) echo "run_ctest.sh: unknown mode $mode" >&2; exit 2 ;;
esac
