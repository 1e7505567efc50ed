#!/usr/bin/env bash
# bench/peers/eig_peer: every eigensolver route and purification once on two
# shipped cases; eig_peer compares each density with the case's reference and
# each eigensolver density's trace with n_occ, and exits 1 on a mismatch.
# usage: eig_peer_test.sh EIG_PEER DATA_DIR HAVE_ELPA(0|1) MPIEXEC [MPIEXEC_FLAGS...]
set -u
OVL=$1 DATA=$2 ELPA=$3
shift 3
MPIEXEC=("$@")
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
RUN_TIMEOUT=120
. "$(dirname "$0")/testlib.sh"
routes="pdsyevd pdsyevr pdsyevx"
[ "$ELPA" = 1 ] && routes="$routes elpa1 elpa2"
row() { grep -Eq "^  $1 " <<<"$out"; }

# 1 rank, text output: every route (with one-rank dsyevr) and every method x precision ovl offers
run 1 --fock "$DATA/water_ccpvdz/fock.raw" -i 1 --eig all --purify all
expect "water all: rc" test "$rc" -eq 0
expect "water all: PASS" has "PASS$" "$out"
for r in $routes dsyevr canonical:double sp2:double sp2:mixed trs4:double trs4:mixed; do
  expect "water all: row $r" row "$r"
done
expect "water all: ratio table" has "eigensolver time / purification time" "$out"
[ "$ELPA" = 1 ] && expect "water all: elpa2 kernel named" grep -Eq "^# elpa2 real kernel: [A-Z0-9_]+ " <<<"$out"

# 4 ranks, JSON: dsyevr skipped with a message, the others checked field by field
run 4 --fock "$DATA/h2o8_ccpvdz/fock.raw" -i 1 -x 0 --eig all --json \
  --purify canonical,sp2,trs4,sp2:mixed,sp2@1,canonical@2
expect "h2o8 np4: rc" test "$rc" -eq 0
expect "h2o8 np4: dsyevr skipped" has "dsyevr skipped: one-rank LAPACK runs on 1 rank only" "$err"
expect "h2o8 np4: json" $PY -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
routes = sys.argv[2].split()
eig = {r["method"]: r for r in rows if r["method"] != "purify"}
assert sorted(eig) == sorted(routes), (sorted(eig), routes)
for r in eig.values():
    assert r["relerr"] <= 1e-8 and abs(r["trace_err"]) <= 1e-8 * r["nocc"], r
    assert r["nev"] == (r["n"] if r["method"] == "pdsyevd" else r["nocc"]), r
    assert 0 < r["t_solve_min"] <= r["t_min"] and r["t_min"] <= r["t_median"], r
    assert abs(r["energy"] - eig["pdsyevd"]["energy"]) < 1e-9, r
pur = [r for r in rows if r["method"] == "purify"]
assert len(pur) == 6, len(pur)
for p in pur:
    assert sorted(p["over"]) == sorted(routes) and sorted(p["over_min"]) == sorted(routes), p
    for k, v in p["over"].items():
        # the ratio is printed to 4 decimals (half a unit: 5e-5), the times to 7 digits
        assert abs(v - eig[k]["t_median"] / p["t_median"]) <= 1e-3 * v + 5e-5, (k, v, p)
    assert p["relerr"] <= (1e-5 if p["precision"] == "mixed" else 1e-8), p
if "elpa2" in eig:
    assert eig["elpa2"]["kernel"] and eig["elpa2"]["kernel"] in eig["elpa2"]["kernel_trials"], eig["elpa2"]
' "$tmp/out" "$routes"

# the block-sparse route (/EPS): from the dense F to the dense D through filtered block-sparse matrices, checked
# against the reference like the others (eig_peer exits 1 above 1e-8); a bad threshold refused
run 2 --fock "$DATA/c10h22_631g/fock.raw" -i 1 -x 0 --eig pdsyevd --purify sp2/1e-12,trs4/0,sp2:mixed/1e-9 --json
expect "c10h22 sparse: rc" test "$rc" -eq 0
expect "c10h22 sparse: json" $PY -c '
import json, sys
pur = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{") and "\"purify\":" in l]
assert [p["purify"] for p in pur] == ["sp2", "trs4", "sp2"] and pur[2]["precision"] == "mixed", pur
for p in pur:
    assert p["grid"] in ("bsumma", "bs2.5d") and p["relerr"] <= (1e-5 if p["precision"] == "mixed" else 1e-8), p
' "$tmp/out"
run 1 --fock "$DATA/c10h22_631g/fock.raw" -i 1 --purify sp2/2
expect "bad threshold: refused" has "is not a threshold in \[0, 1)" "$err"
run 1 --fock "$DATA/c10h22_631g/fock.raw" -i 1 --purify canonical/1e-6
expect "canonical /EPS: refused" has "runs sp2, sp2acc or trs4" "$err"

# the default routes stay pdsyevd (and elpa2 with ELPA), without pdsyevr
run 1 --fock "$DATA/water_ccpvdz/fock.raw" -i 1 -x 0 --purify sp2 --dprod gemm
expect "water default: rc" test "$rc" -eq 0
expect "water default: pdsyevd" row pdsyevd
expect "water default: no pdsyevr" bash -c '! grep -q "^  pdsyevr " <<<"$1"' _ "$out"

# without dref.raw beside F the reference is pdsyevd's own density (an SCF cycle's
# Fock matrix has none): every route and purification agrees with it, on 1 and 4 ranks
mkdir -p "$tmp/noref"
cp "$DATA/water_ccpvdz/fock.raw" "$DATA/water_ccpvdz/fock.raw.json" "$DATA/water_ccpvdz/meta.json" "$tmp/noref/"
for np in 1 4; do
  run $np --fock "$tmp/noref/fock.raw" -i 1 -x 0 --eig pdsyevd,pdsyevr --purify sp2,canonical
  expect "no dref, np=$np: rc" test "$rc" -eq 0
  expect "no dref, np=$np: PASS against pdsyevd" has "PASS$" "$out"
done

# a wrong n_occ: every density is off, the run must fail
run 1 --fock "$DATA/water_ccpvdz/fock.raw" --nocc 4 -i 1 -x 0 --eig pdsyevr,dsyevr --purify sp2
expect "water nocc=4: rc 1" test "$rc" -eq 1
expect "water nocc=4: FAIL" has "FAIL$" "$out"
run 1 --fock "$DATA/water_ccpvdz/fock.raw" -i 1 --eig pdsyevq
expect "bad route: rc 2" test "$rc" -eq 2
expect "bad route: message" has "'pdsyevq' is not a route" "$err"

echo "eig_peer_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
