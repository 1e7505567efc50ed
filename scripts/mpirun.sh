#!/usr/bin/env bash
# Launch an MPI program on this machine with the flags it needs:
#   scripts/mpirun.sh NP program args...
# Open MPI: --oversubscribe (more ranks than cores) and --bind-to none; it
# yields the processor while waiting when oversubscribed.
# MPI=mpich selects MPICH's launcher (Hydra). MPICH 4.0 (ch4) busy-polls and
# has no setting that makes it yield, so the ranks get libovl_yield.so
# preloaded (tools/yield: blocking calls that yield while they wait, active
# only when ranks outnumber cores; docs/guides/mpi.md). It is looked for in
# $OVL_YIELD_LIB, then beside $BUILD or $OVL (the demo's), then in the MPICH
# build directories of this tree.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
np=$1; shift
case "${MPI:-openmpi}" in
  mpich)
    yield=${OVL_YIELD_LIB:-}
    if [ -z "$yield" ]; then
      for d in "${BUILD:-}" "$(dirname "${OVL:-.}")" build-mpich build-mpich-asan; do
        [ -n "$d" ] || continue
        case "$d" in /*) ;; *) d=$here/../$d ;; esac
        [ -f "$d/lib/libovl_yield.so" ] && { yield=$d/lib/libovl_yield.so; break; }
      done
    fi
    pre=()
    if [ -n "$yield" ]; then
      pre=(-genv LD_PRELOAD "$yield${LD_PRELOAD:+:$LD_PRELOAD}")
    elif [ "$np" -gt "$(nproc)" ]; then
      echo "mpirun.sh: libovl_yield.so not found (build the MPICH tree or set OVL_YIELD_LIB): $np ranks on $(nproc) cores will busy-poll, each message costing a scheduler tick" >&2
    fi
    exec mpiexec.mpich "${pre[@]}" -n "$np" "$@" ;;
  *) exec mpiexec.openmpi --oversubscribe --bind-to none -n "$np" "$@" ;;
esac
