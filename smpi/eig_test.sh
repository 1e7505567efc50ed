#!/usr/bin/env bash
# The suite's test of ScaLAPACK's eigensolvers under SMPI (tests/smpi.cmake,
# docs/guides/smpi.md): smpi/eig_sim at 4 simulated ranks (2x2) on
# data/h2o8_ccpvdz (n = 192, n_occ = 40), pdsyevd and pdsyevr with pdgemm, each
# checked against a dense one-rank dsyevd (D to 1e-10, tr D = n_occ, D^2 = D,
# the eigenvalues), HOMO and LUMO against the case's meta.json (1e-8), and a
# generated matrix with a known spectrum (n = 200) by pdsyevd with pdsyrk; the
# simulated times must be positive. Exit 77 (skip) without SimGrid or without
# the ScaLAPACK of smpi/build_scalapack.sh (never built here).
# usage: smpi/eig_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 bld=$2
mkdir -p "$bld"
export OVL_SMPI_EIG_BIN=$bld OVL_SMPI_WORK=$bld/platforms
run() { "$src/smpi/eig_sim.sh" -np 4 "$@" 2>&1; }
set +e
out=$(run --fock "$src/data/h2o8_ccpvdz/fock.raw" --nocc 40 --solver evd,evr --nb 32 --check)
rc=$?
set -e
echo "$out"
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "smpi eig test: eig_sim failed ($rc)"; exit 1; }
read -r homo lumo < <(python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); print(m["homo"], m["lumo"])' \
  "$src/data/h2o8_ccpvdz/meta.json")
verdict=$(echo "$out" | awk -v h="$homo" -v l="$lumo" '
  $1 == "pdsyevd" || $1 == "pdsyevr" {
    n++; ok = $NF == "PASS" && $6 > 0 && $7 > 0 && $8 > 0 && ($9 - h) ^ 2 < 1e-16 && ($1 == "pdsyevr" || ($10 - l) ^ 2 < 1e-16)
    if (!ok) bad = bad " " $1 }
  END { print (n == 2 && bad == "") ? "PASS" : "FAIL" bad }')
echo "smpi eig test: h2o8_ccpvdz, 4 ranks, pdsyevd and pdsyevr: $verdict"
[ "$verdict" = PASS ] || exit 1
out=$(run --gen 200 --nocc 50 --solver evd --dens syrk --check) || { echo "$out"; exit 1; }
echo "$out"
echo "$out" | awk '$1 == "pdsyevd" && $NF == "PASS" && $6 > 0 { ok = 1 } END { exit !ok }' ||
  { echo "smpi eig test: generated n = 200, pdsyevd + pdsyrk: FAIL"; exit 1; }
echo "smpi eig test: generated n = 200 (known spectrum), pdsyevd + pdsyrk: PASS"
