#!/usr/bin/env bash
# The demo (`make demo`): each claim of ovl in the setting that can show it.
#  1. the main job: canonical purification of real Hartree-Fock Fock matrices (data/, made with
#     tools/make-fock), checked against LAPACK's eigensolver;
#  2. SymmSquareCube Algorithm 5 (N_DUP 1 and 4) against Algorithm 4, in shared memory on this
#     machine and on a simulated Stampede2-like cluster (SimGrid SMPI, docs/lab/smpi-reproductions.md), side by side;
#  3. purification against ScaLAPACK's eigensolver (pdsyevd; ELPA when built) on one rank with the
#     node's cores as BLAS threads on both sides, float64 and mixed precision, with their errors;
#  4. a picture of 2 and 3 (PNG) beside the text, which is kept in OUT/demo.txt.
# usage: scripts/demo.sh [--quick]
#   --quick: smaller cases and fewer repetitions (a few seconds; the suite's `demo` test)
#   env: OVL (build/ovl), NP (8: ranks of the shared-memory runs), REPS (5; --quick 2),
#        METHODS (sp2,sp2acc: the purification methods of part 3, comma-separated; each in float64 and mixed),
#        THREADS (2: BLAS threads of part 3), OUT (the directory of ovl: demo/), SMPI_BUILD (the SMPI
#        build of part 2: beside ovl, demo-smpi/), JOBS (2: its compile jobs), SMPI=0 skips the simulation
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
OVL=${OVL:-$root/build/ovl}
[ -x "$OVL" ] || { echo "demo: no ovl at $OVL (make build, or set OVL)" >&2; exit 2; }
bin=$(cd "$(dirname "$OVL")" && pwd)
DATA=${DATA:-$root/data}
NP=${NP:-8}
THREADS=${THREADS:-2}
METHODS=${METHODS:-sp2,sp2acc}
OUT=${OUT:-$bin/demo}
SMPI_BUILD=${SMPI_BUILD:-$bin/demo-smpi}
EIG=${EIG:-$bin/bench/eig_peer}
cores=$(nproc)
if [ "$quick" -eq 1 ]; then
  REPS=${REPS:-2} big=h2o8_ccpvdz sim_np=27 sim_n=1000
else
  REPS=${REPS:-5} big=h2o24_ccpvdz sim_np=64 sim_n=7645
fi
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3 # Debian's matplotlib (scripts/deps.sh)
report() { "$PY" "$here/demo_report.py" "$@"; }
mkdir -p "$OUT"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
nfock=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["n"])' "$DATA/$big/meta.json")
thr=$([ "${OPENBLAS_NUM_THREADS:-1}" = 1 ] && echo "1 BLAS thread" || echo "$OPENBLAS_NUM_THREADS BLAS threads")
run() { echo "\$ mpiexec -n $1 $(basename "$2") ${*:3}"; "$here/mpirun.sh" "$@"; echo; }

demo() {
  echo "== 1. The main job: purification of real Fock matrices (orthonormal basis), checked against LAPACK =="
  echo
  run 1 "$OVL" purify --fock "$DATA/water_ccpvdz/fock.raw" --check -q
  run "$NP" "$OVL" purify --fock "$DATA/$big/fock.raw" --algo alg5 --ndup 4 --check -q

  echo "== 2. SymmSquareCube: Algorithm 5 (N_DUP 1, 4) against Algorithm 4, ovl's own collectives =="
  echo
  local ranks="$NP ranks"; [ "$NP" = 1 ] && ranks="1 rank"
  local shm_set="[shared memory: $ranks x $thr on $cores cores, n = $nfock, min/median of $REPS rounds interleaved in one launch]"
  echo "\$ mpiexec -n $NP ovl bench ssc -n $nfock --algo alg4,alg5 --ndup 1,4 --backend own -i $REPS"
  "$here/mpirun.sh" "$NP" "$OVL" bench ssc -n "$nfock" --algo alg4,alg5 --ndup 1,4 --backend own --allow-idle \
    -i "$REPS" --json -q >"$tmp/ssc_shm.jsonl"
  local sim=() sim_set=""
  if [ "${SMPI:-1}" = 0 ]; then
    echo "simulated cluster: skipped (SMPI=0)"
  elif ! command -v smpicc >/dev/null || ! command -v smpirun >/dev/null; then
    echo "simulated cluster: skipped: SimGrid's smpicc/smpirun are not installed (scripts/deps.sh installs libsimgrid-dev)"
  elif ! smpi_build; then
    echo "simulated cluster: skipped: the SMPI build failed (log: $SMPI_BUILD.log)"
  else
    local p; p=$(awk -v n="$sim_np" 'BEGIN { p = int(n ^ (1 / 3) + 0.5); print p "x" p "x" p }')
    sim_set="[simulated: Stampede2-like cluster (SimGrid SMPI), $sim_np ranks ($p, 1 per node), n = $sim_n,"
    sim_set+=" per-flow cap 9.3 GB/s, reductions' sums at 1.62 GB/s; simulated time, deterministic: one run]"
    echo "\$ smpi/smpirun.sh -np $sim_np --flowcap 9.3GBps --sumrate 1.62GBps ssc_sim -n $sim_n --algo alg4 --ndup 1"
    echo "\$ smpi/smpirun.sh -np $sim_np --flowcap 9.3GBps --sumrate 1.62GBps ssc_sim -n $sim_n --algo alg5 --ndup 1,4"
    local t0=$SECONDS
    for a in "alg4 --ndup 1" "alg5 --ndup 1,4"; do
      # shellcheck disable=SC2086
      OVL_SMPI_PPN=1 OVL_SMPI_FLOPS=skip OVL_SMPI_SHARED_MALLOC=1048576 OVL_SMPI_WORK=$OUT/smpi-platforms \
        "$root/smpi/smpirun.sh" -np "$sim_np" --flowcap 9.3GBps --sumrate 1.62GBps "$SMPI_BUILD/ssc_sim" -n "$sim_n" \
        --algo $a --reps 1 --warmup 0 >>"$tmp/ssc_sim.txt" 2>"$tmp/ssc_sim.err" ||
        { cat "$tmp/ssc_sim.err" >&2; echo "demo: the simulation failed" >&2; return 1; }
    done
    echo "(the simulation took $((SECONDS - t0)) s of host time)"
    sim=(--sim "$tmp/ssc_sim.txt" --sim-setting "$sim_set")
  fi
  echo
  report ssc --shm "$tmp/ssc_shm.jsonl" --shm-setting "$shm_set" "${sim[@]}"
  [ "$quick" -eq 1 ] || [ ${#sim[@]} -eq 0 ] ||
    echo "(docs/lab/smpi-reproductions.md, Table I with the cap and the sums, 1hsg_70: Alg. 4 23.45, Alg. 5 N_DUP 4 26.78 TFLOP/s: 1.14x)"
  echo

  local eig=() eig_set=""
  if [ -x "$EIG" ]; then
    echo "== 3. Purification against the eigensolver: 1 rank x $THREADS BLAS threads on both sides =="
    echo
    local list="" m
    for m in ${METHODS//,/ }; do list+="${list:+,}$m:double,$m:mixed"; done
    eig_set="[1 rank x $THREADS BLAS threads (OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=$THREADS), n = $nfock ($big),"
    eig_set+=" min/median of $REPS repetitions interleaved in one launch]"
    echo "\$ OPENBLAS_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS mpiexec -n 1 eig_peer --fock $big -i $REPS --purify $list"
    OPENBLAS_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS "$here/mpirun.sh" 1 "$EIG" --fock "$DATA/$big/fock.raw" \
      -i "$REPS" --purify "$list" --json >"$tmp/eig.jsonl"
    echo
    report eig --eig "$tmp/eig.jsonl" --setting "$eig_set" --threads "$THREADS" --methods "$METHODS"
    echo "(the eigensolvers and ovl call the same OpenBLAS in one process; it ran $THREADS threads.)"
    [[ ",$METHODS," == *,sp2acc,* ]] &&
      echo "(SP2ACC: SP2 accelerated by scale-and-fold, given the case's HOMO and LUMO from meta.json as an SCF's previous cycle gives them.)"
    echo "Other sizes and rank counts: docs/lab/peers.md (n = 134-4000 on this 2-core machine: the fastest eigensolver route"
    echo "  beats every float64 purification there); simulated scale: docs/lab/smpi-reproductions.md (SymmSquareCube);"
    echo "  sparse matrices: none in the docs yet."
    eig=(--eig "$tmp/eig.jsonl" --setting "$eig_set")
    echo
  else
    echo "== 3. Purification against the eigensolver: skipped (no $EIG: ovl was built without ScaLAPACK) =="
    echo
  fi

  echo "== 4. Picture =="
  report plot -o "$OUT/demo.png" --shm "$tmp/ssc_shm.jsonl" --shm-setting "$shm_set" "${sim[@]}" "${eig[@]}" ||
    [ $? -eq 3 ]
  echo "demo: done (text: $OUT/demo.txt)"
}

# The SMPI build of ssc_sim (smpicc; docs/guides/smpi.md): the library and ssc_sim only, configured once.
smpi_build() {
  echo "(ssc_sim with smpicc in $SMPI_BUILD; log: $SMPI_BUILD.log)"
  local gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  { [ -f "$SMPI_BUILD/CMakeCache.txt" ] ||
      cmake -S "$root" -B "$SMPI_BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DOVL_SMPI=ON -DOVL_BUILD_TESTS=OFF
    cmake --build "$SMPI_BUILD" -j "${JOBS:-2}" --target ssc_sim; } >"$SMPI_BUILD.log" 2>&1
}

demo | tee "$OUT/demo.txt"
exit "${PIPESTATUS[0]}"
