#!/usr/bin/env bash
# Build SimGrid 4.1 with SMPI from its source release on PyPI into a prefix,
# for the large simulations of docs/lab/smpi-reproductions.md ("SimGrid 4.1 for the large runs").
# usage: smpi/build_simgrid.sh [PREFIX]      (default: build-simgrid/4.1 in the checkout)
# Then configure ovl against it:
#   PATH=PREFIX/bin:$PATH cmake -S . -B build-smpi41 -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVL_SMPI=ON
#   PATH=PREFIX/bin:$PATH cmake --build build-smpi41 --target ovl_cli ssc_sim flow_sim
# and run with PATH=PREFIX/bin:$PATH in front of smpi/smpirun.sh, smpi/repro_hsumma.sh (its
# BUILD_DIR argument: build-smpi41) and smpi/repro_ssc.py (--build build-smpi41).
# Needs a C++17 compiler, gfortran, cmake, ninja and Boost's headers (Debian: g++ gfortran cmake
# ninja-build libboost-dev; installed here with apt-get when missing) and pip to fetch the source.
set -euo pipefail
version=4.1
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-$root/build-simgrid/$version}
src=$root/build-simgrid/src
if [ -x "$prefix/bin/smpicc" ] && "$prefix/bin/smpirun" -version 2>/dev/null | grep -q "$version"; then
  echo "SimGrid $version already in $prefix"; exit 0
fi
need=()
for p in g++ gfortran cmake ninja-build libboost-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || { echo "$0: missing ${need[*]}" >&2; exit 2; }
  apt-get install -y --no-install-recommends "${need[@]}"
fi
mkdir -p "$src"
tarball=$src/simgrid-$version.tar.gz
# The source release that docs/lab/smpi-reproductions.md's SimGrid 4.1 runs were made with.
sha256=23ac24cb5b2467f1f051c992ec921b4a9f8f5ac2df16c489bd01bf1c44e6e817
if [ ! -f "$tarball" ]; then
  python3 -m pip download --no-deps --no-binary :all: -d "$src" "simgrid==$version" ||
    { echo "$0: could not download simgrid==$version from PyPI" >&2; exit 2; }
fi
echo "$sha256  $tarball" | sha256sum -c --quiet - ||
  { echo "$0: $tarball is not the simgrid $version source release (sha256 differs)" >&2; exit 2; }
rm -rf "$src/simgrid-$version"
tar -xzf "$tarball" -C "$src"
# The library, SMPI and its tools, with smpif90 (ScaLAPACK, smpi/build_scalapack.sh, needs it):
# no model checker, Python or Java.
cmake -S "$src/simgrid-$version" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" -Denable_smpi=ON -Denable_compile_optimizations=ON -Denable_lto=OFF \
  -Denable_model-checking=OFF -Denable_python=OFF -Denable_fortran=ON -Denable_sthread=OFF \
  -Denable_documentation=OFF
cmake --build "$src/build" -j "${JOBS:-2}"
cmake --install "$src/build"
"$prefix/bin/smpirun" -version | head -1
