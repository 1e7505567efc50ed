#!/usr/bin/env bash
# Launch an MPI program on this machine with the flags it needs:
#   scripts/mpirun.sh NP program args...
# Open MPI: --oversubscribe (more ranks than cores) and --bind-to none.
# MPI=mpich selects MPICH's launcher.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
np=$1; shift
case "${MPI:-openmpi}" in
  mpich) exec mpiexec.mpich -n "$np" "$@" ;;
  *) exec mpiexec.openmpi --oversubscribe --bind-to none -n "$np" "$@" ;;
esac
