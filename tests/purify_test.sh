#!/usr/bin/env bash
# ovl purify end to end on the shipped real Fock matrices: every SymmSquareCube
# variant and N_DUP against the eigensolver (--check: ||D - D_eig|| / ||D_eig||
# <= 1e-8 and |tr D - n_occ| <= 1e-8), against the shipped reference density,
# all methods, multiple PPN, checkpoint + restart, and bad input.
# usage: purify_test.sh OVL DATA_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -u
OVL=$1; DATA=$2; shift 2
# numpy comes from Debian's python3-numpy (scripts/deps.sh): prefer that interpreter
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
MPIEXEC=("$@")
pass=0; fail=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run() { local np=$1; shift; timeout $((180 * ${OVL_TEST_TIMEOUT_SCALE:-1})) "${MPIEXEC[@]}" -n "$np" "$OVL" purify "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
        out=$(cat "$tmp/out"); err=$(cat "$tmp/err"); }
ok() { if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name (rc=$rc)"; echo "$out" | tail -5; echo "$err" | tail -5; fi; }
has() { grep -q -- "$1" <<<"$2"; }

W=$DATA/water_ccpvdz/fock.raw; A=$DATA/c10h22_631g/fock.raw; H=$DATA/h2o8_ccpvdz/fock.raw
# the rank counts of the checks after the sweeps: NP8 for those whose grid does not matter (the methods,
# --json, bad input), CK (ranks and options) for the output against dref.raw and the checkpoint and
# restart. OVL_TEST_QUICK=1 (the sanitizer build, where a launch of 8 ranks costs 7-10 s): those on 1
# rank, the output and the checkpoints on 4 (alg6's 2x2x1 grid); 8 ranks keep Alg. 5 and 6 in the sweeps,
# and purify_symmetric writes D and checkpoints on 8 there
NP8=8; CK=(8)
[ "${OVL_TEST_QUICK:-0}" = 1 ] && { NP8=1; CK=(4 --algo alg6); }
for np in 1 8; do
  for alg in alg3 alg4 alg5; do
    for nd in 1 2 3 4 7; do
      [ "$alg" != alg5 ] && [ "$nd" != 1 ] && [ "$nd" != 4 ] && continue
      # OVL_TEST_QUICK=1 (the sanitizer build): N_DUP 4 only, Alg. 3 and 4 on one rank and c10h22
      # (test_ssc runs every algorithm and N_DUP under the sanitizers)
      [ "${OVL_TEST_QUICK:-0}" = 1 ] && [ "$nd" != 4 ] && continue
      [ "${OVL_TEST_QUICK:-0}" = 1 ] && [ "$np" = 8 ] && [ "$alg" != alg5 ] && continue # alg3/4 at 1 rank
      for f in "$W" "$A"; do
        # (and Alg. 5 on 8 ranks on c10h22 only)
        [ "${OVL_TEST_QUICK:-0}" = 1 ] && { [ "$alg" != alg5 ] || [ "$np" = 8 ]; } && [ "$f" != "$A" ] && continue
        name="np=$np $alg ndup=$nd $(basename "$(dirname "$f")")"
        run "$np" --fock "$f" --algo "$alg" --ndup "$nd" --check -q
        ok test "$rc" -eq 0; ok has "PASS" "$out"
      done
    done
  done
done
for np in 1 4 8; do
  for nd in 1 4; do
    [ "${OVL_TEST_QUICK:-0}" = 1 ] && { [ "$nd" != 4 ] || [ "$np" = 4 ]; } && continue
    name="np=$np alg6 ndup=$nd"
    run "$np" --fock "$A" --algo alg6 --ndup "$nd" --check -q --backend own
    ok test "$rc" -eq 0; ok has "PASS" "$out"
  done
done
# the shipped reference density, through the output file
name="output vs dref.raw"
run "${CK[@]}" --fock "$H" -o "$tmp/d.raw" -q
ok test "$rc" -eq 0
ok "$PY" - "$tmp/d.raw" "$DATA/h2o8_ccpvdz/dref.raw" <<'PY'
import json, sys
import numpy as np
d, ref = (np.fromfile(p, dtype="<f8") for p in sys.argv[1:3])
meta = json.load(open(sys.argv[1] + ".json"))
n = meta["rows"]
assert set(meta) == {"rows", "cols", "symmetric", "checksum"}, meta
assert meta["cols"] == n and meta["symmetric"] is True and len(meta["checksum"]) == 16, meta
rel = np.linalg.norm(d - ref) / np.linalg.norm(ref)
tr = abs(np.trace(d.reshape(n, n)) - 40)
print(f"||D - Dref||/||Dref|| = {rel:.2e}, |tr D - n_occ| = {tr:.2e}")
sys.exit(0 if rel <= 1e-8 and tr <= 1e-8 else 1)
PY
# methods
homo=$("$PY" -c "import json;m=json.load(open('$DATA/h2o8_ccpvdz/meta.json'));print((m['homo']+m['lumo'])/2)")
name="mcweeny"; run "$NP8" --fock "$H" --method mcweeny --mu "$homo" --check -q; ok has "PASS" "$out"
# McWeeny takes no n_occ: its trace error is the distance of tr D to an integer, and says so
ok has "n_occ from mu=" "$out"; ok has "|tr D - round(tr D)|" "$out"
name="trs2"; run "$NP8" --fock "$H" --method trs2 --check -q; ok has "PASS" "$out"; ok has "stopped at the rounding floor" "$out"
# SP2 and TRS4 on the symmetric square: 1 rank, the 1x1x2 stack (2 ranks), the 2D grid (4 ranks: 2x2x1),
# the 3D grid (8: 2x2x2; a 2.5D grid with 1 < c < s needs 32 ranks: test_sq covers the kernel there),
# N_DUP 1 and 4, both back ends
# (OVL_TEST_QUICK=1, the sanitizer build: N_DUP 4 on c10h22 only, on 1 and 4 ranks)
for np in 1 2 4 8; do
  [ "${OVL_TEST_QUICK:-0}" = 1 ] && [ "$np" != 1 ] && [ "$np" != 4 ] && continue
  for m in sp2 trs4; do
    for nd in 1 4; do
      [ "${OVL_TEST_QUICK:-0}" = 1 ] && [ "$nd" = 1 ] && continue
      for f in "$W" "$A" "$H"; do
        [ "${OVL_TEST_QUICK:-0}" = 1 ] && [ "$f" != "$A" ] && continue
        name="np=$np $m ndup=$nd $(basename "$(dirname "$f")")"
        be=mpi; [ "$nd" = 4 ] && be=own
        run "$np" --fock "$f" --method "$m" --ndup "$nd" --backend "$be" --check --json
        ok test "$rc" -eq 0
        ok "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["check"]=="PASS" and d["ref_relerr"]<=1e-8 \
          and d["trace_error"]<=1e-8 and d["stop_reason"]=="rounding floor" and d["iter_single"]==0, d' "$out"
      done
    done
  done
done
# a tolerance stops earlier and says so
name="sp2 --tol"; run 4 --fock "$A" --method sp2 --tol 1e-6 --json
ok "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["stop_reason"]=="tolerance" and d["idempotency_error"]<=1e-6, d' "$out"
# mixed precision: float32 first, then float64; idempotent and trace-exact, the density about 1e-6 accurate
# (the sanitizer build: on 4 ranks only)
for np in 1 4 8; do
  [ "${OVL_TEST_QUICK:-0}" = 1 ] && [ "$np" != 4 ] && continue
  for m in sp2 trs4; do
    name="np=$np $m mixed"
    run "$np" --fock "$H" --method "$m" --precision mixed --json -o "$tmp/mixed.raw"
    ok test "$rc" -eq 0
    ok "$PY" - "$out" "$tmp/mixed.raw" "$DATA/h2o8_ccpvdz/dref.raw" <<'PY'
import json, sys
import numpy as np
r = json.loads(sys.argv[1])
d, ref = (np.fromfile(p, dtype="<f8") for p in sys.argv[2:4])
rel = np.linalg.norm(d - ref) / np.linalg.norm(ref)
print(f"mixed: {r['iter_single']} of {r['iterations']} iterations in float32, ||D - Dref||/||Dref|| = {rel:.2e}")
assert 0 < r["iter_single"] < r["iterations"] and r["precision"] == "mixed", r
assert r["idempotency_error"] <= 1e-10 and r["trace_error"] <= 1e-8, r
assert 1e-12 < rel <= 1e-5, rel  # float32's rounding stays in the subspace (docs/guides/purification.md)
PY
  done
done
name="mixed needs sp2/sp2acc/trs4"; run 1 --fock "$W" --method canonical --precision mixed -q
ok test "$rc" -eq 2; ok has "needs --method sp2, sp2acc or trs4" "$err"
name="json"; run "$NP8" --fock "$W" --json --check
ok python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["check"]=="PASS" and d["iterations"]>0' "$out"
# multiple PPN: one active rank per node, the others sleep
# and the active rank takes the node's cores as BLAS threads (OpenBLAS; the test nodes run it)
name="ppn"; run 4 --fock "$H" --ppn 1 --check -q; ok has "PASS" "$out"; ok has "(1 active, $(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) BLAS thread" "$out"
name="ppn auto"; run 4 --fock "$H" --ppn auto --check -q; ok has "PASS" "$out"
# checkpoint + restart reaches the same answer as an uninterrupted run (the run above, d.raw)
name="checkpoint"
# leftovers of an earlier run killed while writing (4194305 is above Linux's
# largest pid) and its unreferenced data go; another prefix's files stay
touch "$tmp/ck.it3.raw.tmp.4194305.0123456789ab" "$tmp/ck.state.json.tmp.4194305" "$tmp/ck.it3.raw.json.tmp.4194306.zz3456789abc" "$tmp/ck.it1.raw" "$tmp/ck.it1.raw.json" \
  "$tmp/ckx.it1.raw" "$tmp/ck.it2.raw.bak"
run "${CK[@]}" --fock "$H" -q --checkpoint "$tmp/ck" --checkpoint-every 4 --max-iter 10
ok test "$rc" -eq 1
ok test -f "$tmp/ck.state.json"
ok test "$(cd "$tmp" && ls ck.* | tr '\n' ' ')" = "ck.it2.raw.bak ck.it8.raw ck.it8.raw.json ck.state.json "
ok test -f "$tmp/ckx.it1.raw"
touch "$tmp/ck.it12.raw.tmp.4194305"
run "${CK[@]}" --fock "$H" -q --checkpoint "$tmp/ck" --restart -o "$tmp/restarted.raw"
ok test "$rc" -eq 0
ok cmp -s "$tmp/d.raw" "$tmp/restarted.raw"
ok test ! -e "$tmp/ck.it12.raw.tmp.4194305"
# a restart validates the state before it reads or removes anything: an
# iteration beyond any run's, one not below --max-iter, one that is not the
# iteration of the data the state names (the sweep would remove that data);
# each fails with exit 1 and a message, and every checkpoint file stays
run 1 --fock "$A" -q --checkpoint "$tmp/rs" --checkpoint-every 4 --max-iter 9
name="restart state: made"; ok test "$rc" -eq 1 -a -f "$tmp/rs.it8.raw"
cp "$tmp/rs.state.json" "$tmp/rs.good"
ck_sum() { (cd "$tmp" && md5sum rs.it8.raw rs.it8.raw.json && ls rs.*); }
sum0=$(ck_sum)
bad_state() { # NAME ITERATION PATTERN [options]
  name="restart state: $1"; local it=$2 pat=$3; shift 3
  sed "s/\"iteration\": [0-9]*/\"iteration\": $it/" "$tmp/rs.good" >"$tmp/rs.state.json"
  run 1 --fock "$A" -q --checkpoint "$tmp/rs" --restart -o "$tmp/rs_out.raw" "$@"
  ok test "$rc" -eq 1; ok has "$pat" "$err"; ok test "$(ck_sum)" = "$sum0"; ok test ! -e "$tmp/rs_out.raw"
}
bad_state "iteration 2147483647" 2147483647 "is damaged: its \"iteration\" 2147483647 lies beyond any run's"
bad_state "iteration 300, --max-iter 200" 300 "is of iteration 300, not below --max-iter 200: raise --max-iter"
bad_state "iteration 8, --max-iter 8" 8 "not below --max-iter 8" --max-iter 8
bad_state "iteration 4 naming iteration 8's data" 4 "is inconsistent: it is of iteration 4 but names the data"
cp "$tmp/rs.good" "$tmp/rs.state.json"
name="restart state: intact after the refusals"
run 1 --fock "$A" -q --checkpoint "$tmp/rs" --restart -o "$tmp/rs_out.raw"
ok test "$rc" -eq 0 -a -f "$tmp/rs_out.raw"
# a run stopped by --max-iter says so and asks for more iterations, at any
# cap (before, caps up to about 14 blamed the gap or the input)
caps="2 5 9 14"; [ "${OVL_TEST_QUICK:-0}" = 1 ] && caps="5" # the sanitizer build: one cap
for cap in $caps; do
  name="--max-iter $cap"; run 1 --fock "$H" --max-iter "$cap"
  ok test "$rc" -eq 1; ok has "the iteration limit was reached (--max-iter $cap) .*raise --max-iter" "$err"
  ok test "$(grep -c "gap\|input" <<<"$err")" -eq 0
done
# bad input: one message, exit 1, no output written
name="nocc > n"; run "$NP8" --fock "$W" --nocc 25 -o "$tmp/bad.raw"; ok test "$rc" -eq 1; ok has "occupied" "$err"; ok test ! -e "$tmp/bad.raw"
name="missing"; run "$NP8" --fock "$tmp/none.raw" --nocc 1; ok test "$rc" -eq 1; ok test "$(grep -c error <<<"$err")" -eq 1
"$PY" -c "
import numpy as np, json
a = np.arange(16.0).reshape(4, 4); a.tofile('$tmp/asym.raw')
json.dump({'rows': 4, 'cols': 4, 'symmetric': False}, open('$tmp/asym.raw.json', 'w'))"
name="asymmetric"; run 1 --fock "$tmp/asym.raw" --nocc 1; ok test "$rc" -eq 1; ok has "symmetric" "$err"
name="no convergence"; run 1 --fock "$H" --max-iter 3; ok test "$rc" -eq 1; ok has "did not converge" "$err"
name="mcweeny without mu"; run 1 --fock "$H" --method mcweeny; ok test "$rc" -eq 2
name="2 ranks are no cube"; run 2 --fock "$W"; ok test "$rc" -eq 1; ok has "idle" "$err"
name="2 ranks, one idle"; run 2 --fock "$W" --allow-idle --check -q; ok has "PASS" "$out"
echo "purify: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
