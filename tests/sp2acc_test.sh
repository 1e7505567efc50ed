#!/usr/bin/env bash
# SP2-ACC (ovl purify --method sp2acc) on every shipped case in DATA_DIR at 1 rank (two of them at 4
# and 8 ranks too):
# the density against the eigensolver's (--check), the trace and idempotency; its products
# against SP2's at the same tolerance (relative density error <= 1e-10), measured from the
# counts the runs report; HOMO/LUMO estimates off by 2x (a gap twice as wide and half as
# wide about the true mid-gap); mixed precision; bad estimates refused.
# usage: sp2acc_test.sh OVL DATA_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -u
OVL=$1; DATA=$2; shift 2
MPIEXEC=("$@")
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run() { local np=$1; shift; timeout $((120 * ${OVL_TEST_TIMEOUT_SCALE:-1})) "${MPIEXEC[@]}" -n "$np" "$OVL" purify \
          --json --check "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
ok() { if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name (rc=$rc)"; tail -3 "$tmp/out"; tail -5 "$tmp/err"; fi; }
# json EXPR: evaluate EXPR on the run's record d (exit status 0 when true); val KEY: print a field
json() { python3 -c "import json,sys; d=json.load(open('$tmp/out')); sys.exit(0 if ($1) else 1)" 2>/dev/null; }
val() { python3 -c "import json; print(json.load(open('$tmp/out'))['$1'])"; }
accurate='d["ref_relerr"] <= 1e-10 and d["trace_error"] <= 1e-10 and d["idempotency_error"] <= 1e-10'
# stopped by --tol 1e-10 on ||D^2 - D||_F: the trace within the check's 1e-8
at_tol='d["ref_relerr"] <= 1e-10 and d["trace_error"] <= 1e-8 and d["idempotency_error"] <= 1e-10'

cases=()
for m in "$DATA"/*/meta.json; do [ -f "$(dirname "$m")/fock.raw" ] && cases+=("$(dirname "$m")"); done
[ "${#cases[@]}" -ge 6 ] || { echo "FAIL: expected the 6 shipped cases in $DATA, found ${#cases[@]}"; exit 1; }
for c in "${cases[@]}"; do
  F=$c/fock.raw; cn=$(basename "$c")
  read -r homo lumo < <(python3 -c "import json; m=json.load(open('$c/meta.json')); print(repr(m['homo']), repr(m['lumo']))")
  nps="1"; case $cn in water_ccpvdz | h2o8_ccpvdz) nps="1 4 8" ;; esac # more ranks: two cases suffice
  for np in $nps; do # the estimates from meta.json (the exact gap)
    name="$cn np=$np sp2acc"
    run "$np" --fock "$F" --method sp2acc
    ok test "$rc" -eq 0; ok json "$accurate and d['accelerated'] > 0 and d['stop_reason'] == 'rounding floor'"
  done
  # products at the same tolerance, 1 rank: SP2, SP2-ACC with the exact gap, and with estimates off by 2x
  name="$cn sp2 tol"; run 1 --fock "$F" --method sp2 --tol 1e-10; ok json "$at_tol"; p_sp2=$(val products)
  name="$cn sp2acc tol"; run 1 --fock "$F" --method sp2acc --tol 1e-10; ok json "$at_tol"; p_acc=$(val products)
  # the regression bound (the issue's target, 0.65x, is a benchmark: docs/guides/purification.md)
  name="$cn sp2acc products $p_acc vs sp2 $p_sp2"; ok test $((100 * p_acc)) -le $((75 * p_sp2))
  for f in 2 0.5; do
    read -r h l < <(python3 -c "h=$homo; l=$lumo; m=(h+l)/2; g=(l-h)*$f/2; print(repr(m-g), repr(m+g))")
    name="$cn sp2acc gap x$f"; run 1 --fock "$F" --method sp2acc --tol 1e-10 --homo "$h" --lumo "$l"
    ok test "$rc" -eq 0; ok json "$at_tol"; p=$(val products 2>/dev/null || echo 999)
    name="$cn sp2acc gap x$f: $p products vs $p_acc"; ok test "$p" -le $((p_acc + 4))
  done
  # mixed: idempotent and trace-exact, the density about 1e-6 accurate (so --check's 1e-8 verdict fails: rc 1)
  name="$cn sp2acc mixed"; run 1 --fock "$F" --method sp2acc -P mixed
  ok json "d['ref_relerr'] <= 1e-5 and d['trace_error'] <= 1e-10 and d['idempotency_error'] <= 1e-10 and d['iter_single'] > 0"
  echo "$cn: products sp2 $p_sp2, sp2acc $p_acc at tolerance 1e-10"
done
# without estimates the steps are SP2's
W=$DATA/water_ccpvdz/fock.raw
name="no estimates"; run 1 --fock "$W" --method sp2; p_sp2=$(val products)
run 1 --fock "$W" --method sp2acc --homo -1e300 --lumo 1e300
ok test "$rc" -eq 0; ok json "$accurate and d['products'] == $p_sp2 and d['accelerated'] == 0"
# bad estimates: refused with the option named, on every rank
for bad in "--homo 0.1" "--lumo 0.1" "--homo 0.2 --lumo 0.1" "--homo nan --lumo 0.1"; do
  name="refused: $bad"
  # shellcheck disable=SC2086
  run 2 --fock "$W" --method sp2acc $bad
  ok test "$rc" -ne 0; ok grep -q -- "--homo" "$tmp/err"
done
# estimates given to a method that does not use them: refused, not ignored
name="refused: sp2 with --homo"; run 2 --fock "$W" --method sp2 --homo 0.1 --lumo 0.2
ok test "$rc" -ne 0; ok grep -q -- "apply to --method sp2acc only" "$tmp/err"
echo "sp2acc: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
