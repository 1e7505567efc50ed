#!/usr/bin/env bash
# ScaLAPACK's eigensolvers under SMPI (docs/guides/smpi.md): build smpi/eig_sim.c
# against the ScaLAPACK of smpi/build_scalapack.sh and run it with smpi/smpirun.sh.
# usage: smpi/eig_sim.sh [-np P] EIG_SIM_ARGS...   (eig_sim.c's header lists them)
# Environment:
#   OVL_SMPI_SCALAPACK   build_scalapack.sh's output (default ~/.cache/ovl/smpi-scalapack);
#   OVL_SMPI_EIG_BIN     where eig_sim is built (default OVL_SMPI_SCALAPACK/bin)
#   OVL_SMPI_HOST_SPEED  this machine's dgemm rate on one core in flop/s (SimGrid's
#                        smpi/host-speed); default: measured once by `eig_sim --measure`
#                        and kept in OVL_SMPI_EIG_BIN/host_speed_<OPENBLAS_CORETYPE>.txt
#   and smpirun.sh's (OVL_SMPI_PPN: ranks per node, default 1 here; OVL_SMPI_PLATFORM ...).
# The local computation is executed and charged to the simulated clock by SMPI
# (smpi/simulate-computation:yes): its host time x host-speed flops at the
# platform's speed. Exit 77 when SimGrid or the ScaLAPACK build is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sl=${OVL_SMPI_SCALAPACK:-$HOME/.cache/ovl/smpi-scalapack}
command -v smpicc >/dev/null && command -v smpirun >/dev/null ||
  { echo "eig_sim.sh: SKIPPED: smpicc/smpirun not installed"; exit 77; }
[ -f "$sl/lib/libscalapack.a" ] ||
  { echo "eig_sim.sh: SKIPPED: no $sl/lib/libscalapack.a (make it with smpi/build_scalapack.sh)"; exit 77; }
bin=${OVL_SMPI_EIG_BIN:-$sl/bin}
exe=$bin/eig_sim
mkdir -p "$bin"
if [ ! -x "$exe" ] || [ "$here/eig_sim.c" -nt "$exe" ] || [ "$sl/lib/libscalapack.a" -nt "$exe" ]; then
  smpicc -O2 -std=gnu11 -Wall -Werror "$here/eig_sim.c" -o "$exe.tmp" "$sl/lib/libscalapack.a" -llapack -lblas \
    -lgfortran -lm && mv "$exe.tmp" "$exe"
fi
# OpenBLAS's kernel as everywhere else (scripts/env.sh: Debian's 0.3.21 falls back
# to its Prescott kernel on this CPU, 6x slower, unless OPENBLAS_CORETYPE is set).
# shellcheck source=/dev/null
. "$here/../scripts/env.sh"
export OPENBLAS_NUM_THREADS=1 OVL_SMPI_PPN=${OVL_SMPI_PPN:-1}
hs=${OVL_SMPI_HOST_SPEED:-}
if [ -z "$hs" ]; then
  hsf=$bin/host_speed_${OPENBLAS_CORETYPE:-default}.txt # the rate is the kernel's
  if [ ! -s "$hsf" ]; then
    "$here/smpirun.sh" -np 1 "$exe" --measure 2>/dev/null | awk '/host dgemm rate/ { print $4 }' >"$hsf"
  fi
  hs=$(cat "$hsf")
fi
[ -n "$hs" ] || { echo "eig_sim.sh: could not measure the host's dgemm rate" >&2; exit 1; }
echo "# host speed (smpi/host-speed): $hs flop/s (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
export OVL_SMPI_CFG="--cfg=smpi/simulate-computation:yes --cfg=smpi/host-speed:${hs}f ${OVL_SMPI_CFG:-}"
np=()
case ${1:-} in -np | -n) np=(-np "$2"); shift 2 ;; esac
exec "$here/smpirun.sh" "${np[@]}" "$exe" "$@"
