#!/usr/bin/env bash
# valgrind memcheck over a few MPI runs of ovl, and MPI handle accounting.
# usage: valgrind_test.sh OVL HANDLES_SO DATA_DIR MPIEXEC [MPIEXEC_FLAGS...]
#   HANDLES_SO  tests/hard_handles.c built as a shared library: preloaded into
#               every rank, it prints the balance of communicators, windows,
#               requests, datatypes and files at MPI_Finalize.
# Each run must end with exit code 0, "ERROR SUMMARY: 0 errors" on every rank
# (errors and definite/indirect leaks; tests/valgrind.supp suppresses what has
# a frame in the MPI library or the libraries it loads), and a zero balance of
# every handle kind on every rank. Exit 77 (skipped) without valgrind.
set -u
OVL=$1; SO=$2; DATA=$3; shift 3
MPIEXEC=("$@")
SUPP=$(cd "$(dirname "$0")" && pwd)/valgrind.supp
command -v valgrind >/dev/null 2>&1 || { echo "valgrind: SKIP: valgrind is not installed (Debian package valgrind)"; exit 77; }
# valgrind 3.19 has no AVX-512: OpenBLAS must not pick its SkylakeX kernels
export OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1
# keep the names of Open MPI's components in stacks (for the suppressions)
export OMPI_MCA_mca_base_component_disable_dlclose=1
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
T=$((600 * ${OVL_TEST_TIMEOUT_SCALE:-1}))
W=$DATA/water_ccpvdz/fock.raw

vg() { # NAME NP ARGS...
  local name=$1 np=$2; shift 2
  local t0=$SECONDS
  timeout -k 10 "$T" "${MPIEXEC[@]}" -n "$np" env LD_PRELOAD="$SO" valgrind --suppressions="$SUPP" \
    --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
    --num-callers=40 --track-origins=no --log-file="$tmp/$name.%p.vg" "$OVL" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$? why=""
  local logs=("$tmp/$name".*.vg) clean=0 supp=0 h
  for l in "${logs[@]}"; do
    grep -q "ERROR SUMMARY: 0 errors" "$l" && clean=$((clean + 1))
    local k
    k=$(sed -n 's/.*ERROR SUMMARY: .*(suppressed: \([0-9]*\) from.*/\1/p' "$l" | tail -n 1)
    supp=$((supp + ${k:-0}))
  done
  h=$(grep -c '^ovl-handles: rank [0-9]*: comms 0 windows 0 requests 0 types 0 files 0 ' "$tmp/$name.err")
  if [ "$rc" -ne 0 ]; then why="exit code $rc"
  elif [ "${#logs[@]}" -ne "$np" ] || [ "$clean" -ne "$np" ]; then why="$clean of $np ranks without memcheck errors"
  elif [ "$h" -ne "$np" ]; then why="$h of $np ranks with no handle left"
  fi
  if [ -z "$why" ]; then
    pass=$((pass + 1))
    echo "valgrind: $name on $np ranks: 0 errors ($supp suppressed in MPI and its libraries), handles balanced: $(grep -m1 '^ovl-handles' "$tmp/$name.err" | sed 's/.*(made/(made/'), $((SECONDS - t0))s"
  else
    fail=$((fail + 1)); echo "FAIL: $name on $np ranks: $why"
    grep -h '^ovl-handles' "$tmp/$name.err"
    for l in "${logs[@]}"; do grep -q "ERROR SUMMARY: 0 errors" "$l" || { echo "--- $l"; grep -v '^==[0-9]*== *$' "$l" | head -n 60; }; done
    tail -n 5 "$tmp/$name.err"
  fi
}

# SUMMA with lookahead on ovl's own collectives (lanes, nonblocking schedules)
vg gemm-summa-own 2 gemm -n 48 -b 8 --algo summa --lookahead --backend own --ndup 2 --check -i 1 -x 0 --no-blas-check -q
# purification on a 2x2x1 grid (alg6): reading with MPI-IO, checkpoints, output
vg purify-alg6 4 purify --fock "$W" --algo alg6 -q --checkpoint "$tmp/ck" --checkpoint-every 4 -o "$tmp/D.raw"
# multiple PPN: an active subset with a shared-memory window, the others asleep
vg purify-ppn 2 purify --fock "$W" --ppn 1 -q --method trs2
echo "valgrind: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
