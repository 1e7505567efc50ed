#!/usr/bin/env bash
# The SMPI test of the suite (tests/smpi.cmake): configure and build the
# library and ssc_sim with smpicc, then run 64 simulated ranks with the
# products really computed and checked. Exit 77 (skip) without smpicc.
# usage: smpi/smpi_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 bld=$2
if ! command -v smpicc >/dev/null || ! command -v smpirun >/dev/null; then
  echo "smpi test: SKIPPED: smpicc/smpirun not installed (Debian: apt-get install libsimgrid-dev)"
  exit 77
fi
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$src" -B "$bld" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DOVL_SMPI=ON -DOVL_BUILD_TESTS=OFF >"$bld.log" 2>&1 ||
  { cat "$bld.log"; exit 1; }
cmake --build "$bld" -j 2 --target ssc_sim >>"$bld.log" 2>&1 || { tail -50 "$bld.log"; exit 1; }
export OVL_SMPI_FLOPS=real OVL_SMPI_PPN=4 OVL_SMPI_WORK=$bld/platforms OPENBLAS_NUM_THREADS=1
out=$(cd "$bld" && "$src/smpi/smpirun.sh" -np 64 "$bld/ssc_sim" -n 150 --algo alg4,alg5 --ndup 1,3 --check --reps 1 2>&1) ||
  { echo "$out"; exit 1; }
echo "$out"
[ "$(echo "$out" | grep -c ' PASS$')" -eq 4 ] || { echo "smpi test: expected 4 PASS lines"; exit 1; }
echo "smpi test: 64 simulated ranks: PASS"
