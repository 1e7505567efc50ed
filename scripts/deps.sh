#!/usr/bin/env bash
# Install what ovl needs from Debian, only what is missing.
# usage: scripts/deps.sh [openmpi|mpich] [extra-debian-packages...]
set -euo pipefail
mpi=${1:-openmpi}; shift || true
pkgs=(cmake ninja-build make gcc libopenblas-dev liblapacke-dev libcjson-dev python3 python3-numpy python3-matplotlib)
case "$mpi" in
  openmpi) pkgs+=(openmpi-bin libopenmpi-dev) ;;
  mpich) pkgs+=(mpich libmpich-dev) ;;
  *) echo "deps.sh: unknown MPI '$mpi' (openmpi or mpich)" >&2; exit 2 ;;
esac
# Extra packages of the optional suites, one file per suite (scripts/deps.d/*.txt):
# one package a line; a second word (openmpi or mpich) limits it to that MPI
# (Debian builds ScaLAPACK, mpi4py and ELPA for one MPI per package).
for f in "$(dirname "$0")"/deps.d/*.txt; do
  [ -f "$f" ] || continue
  while read -r p for_mpi _; do
    [ -n "$p" ] && [ "${p#\#}" = "$p" ] || continue
    [ -z "$for_mpi" ] || [ "${for_mpi#\#}" != "$for_mpi" ] || [ "$for_mpi" = "$mpi" ] || continue
    pkgs+=("$p")
  done <"$f"
done
pkgs+=("$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
  echo "deps.sh: run as root, or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
