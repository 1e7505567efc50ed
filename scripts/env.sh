# Runtime environment for ovl on this kind of machine. Source it:
#   . scripts/env.sh
# - one OpenBLAS thread per rank;
# - Debian's OpenBLAS 0.3.21 does not recognise recent Xeons and silently uses
#   a generic kernel about 5x slower: pick the right one from the CPU flags;
# - Open MPI refuses to run as root unless told it may.
# (MPICH 4.0's ch4 device has no variable that makes it yield when ranks
# outnumber cores; scripts/mpirun.sh preloads libovl_yield.so instead.)
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ -r /proc/cpuinfo ]; then
  if grep -qm1 ' avx512f' /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX
  elif grep -qm1 ' avx2' /proc/cpuinfo; then export OPENBLAS_CORETYPE=Haswell; fi
fi
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
