#!/usr/bin/env bash
# The reduced demo (scripts/demo.sh --quick): every section is there and every number of its
# tables and headlines parses (their values are measurements and are not checked); the text is
# also in WORK/demo.txt and the picture is a PNG (unless matplotlib is missing).
# usage: tests/demo_test.sh SOURCE_DIR OVL WORK_DIR   (env: SMPI_BUILD, SMPI, MPI as scripts/demo.sh)
set -uo pipefail
src=$1 ovl=$2 work=$3
mkdir -p "$work"
rm -f "$work/demo.txt" "$work/demo.png"
out=$(OVL=$ovl OUT=$work METHODS=sp2,sp2acc THREADS=2 timeout $((240 * ${OVL_TEST_TIMEOUT_SCALE:-1})) bash "$src/scripts/demo.sh" --quick \
      2>"$work/demo.err")
rc=$?
echo "$out"
cat "$work/demo.err"
[ "$rc" -eq 0 ] || { echo "demo test: scripts/demo.sh --quick exited with $rc"; exit 1; }
fail=0
need() { # REGEX WHAT
  grep -qE -- "$1" <<<"$out" || { echo "demo test: FAIL: $2 (no line matching: $1)"; fail=1; }
}
f='[0-9]+\.[0-9]+'          # a fixed-point number
e='[0-9]\.[0-9]+e[-+][0-9]+' # a number in e-notation
need '^== 1\. The main job' "section 1"
[ "$(grep -cE '^check: .* = '"$e"', tr\(D_eig F\) = -?'"$f"' .*: PASS$' <<<"$out")" -eq 2 ] ||
  { echo "demo test: FAIL: section 1 needs two purifications checked (PASS)"; fail=1; }
need '^== 2\. SymmSquareCube' "section 2"
sims="shared memory"
if [ "${SMPI:-1}" = 0 ]; then
  need '^simulated cluster: skipped \(SMPI=0\)' "the simulation skipped on request"
elif command -v smpicc >/dev/null && command -v smpirun >/dev/null; then
  sims="shared memory|simulated"
  need '^Why the two settings differ: ' "the line on why the settings differ"
else
  need '^simulated cluster: skipped: SimGrid' "the simulation skipped without SimGrid"
fi
IFS='|' read -ra names <<<"$sims"
for s in "${names[@]}"; do
  for c in "Alg\. 4" "Alg\. 5 N_DUP 1" "Alg\. 5 N_DUP 4"; do
    need "^$s +$c +$e +$e +${f}x$" "$s, $c: t_min, t_median, ratio"
  done
  need "^Alg\. 5 N_DUP 4 / Alg\. 4 = ${f}x  \(N_DUP 1: ${f}x\)  \[$s: .*rank.*n = [0-9]+" "$s headline with its setting"
done
if [ -x "$(dirname "$ovl")/bench/eig_peer" ]; then
  need '^== 3\. Purification against the eigensolver: 1 rank x 2 BLAS threads' "section 3"
  need "^pdsyevd \+ pdgemm +- +$e +$e +${f}x +\(reference\) +$e$" "pdsyevd's row"
  for p in float64 mixed; do
    for m in SP2 SP2ACC; do
      need "^$m $p +[0-9]+ +$e +$e +${f}x +(< 1e-10|$e) +$e$" "$m $p: iterations, times, ratio, energy and density errors"
    done
  done
  need "^pdsyevd / SP2(ACC)? \(float64\) = ${f}x  \[1 rank x 2 BLAS threads .*n = [0-9]+" "section 3 headline with its setting"
  need "it ran 2 threads" "the eigensolver's process ran 2 BLAS threads"
  need "^Other sizes and rank counts: docs/lab/peers.md" "the pointer to the results at other sizes"
else
  need '^== 3\. Purification against the eigensolver: skipped' "section 3 skipped without eig_peer"
fi
need '^== 4\. Picture' "section 4"
if grep -q '^picture: skipped (matplotlib' <<<"$out"; then
  echo "demo test: matplotlib missing: no picture to check"
else
  need "^picture: $work/demo\.png$" "the picture named"
  [ "$(head -c 8 "$work/demo.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    { echo "demo test: FAIL: $work/demo.png is not a PNG"; fail=1; }
fi
need '^demo: done' "the end"
cmp -s <(echo "$out") "$work/demo.txt" ||
  { echo "demo test: FAIL: $work/demo.txt is not the demo's output"; fail=1; }
[ "$fail" -eq 0 ] && echo "demo test: PASS"
exit "$fail"
