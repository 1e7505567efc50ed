#!/usr/bin/env bash
# End-to-end tests of `ovl model`, `ovl bench machine`, `ovl tune` and `auto`.
# usage: model_test.sh OVL MPIEXEC [MPIEXEC_FLAGS...]
set -u
OVL=$1; shift
MPIEXEC=("$@")
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
RUN_TIMEOUT=240
. "$(dirname "$0")/testlib.sh"
jcheck() { $PY -c "$1" "$tmp/out" >/dev/null 2>"$tmp/pyerr" || { cat "$tmp/pyerr"; return 1; }; }

# ---- ovl model -------------------------------------------------------------------------------------------------
for k in summa hsumma cannon 3d 2.5d alg3 alg4 alg5 alg6; do
  P=8; case $k in cannon) P=16 ;; hsumma) P=16 ;; esac
  G=(); [ "$k" = hsumma ] && G=(-G 4) # HSUMMA's groups: the other kernels refuse -G
  run 1 model --algo "$k" -n 2000 --ranks "$P" "${G[@]}" -j
  expect "model $k rc" test "$rc" -eq 0
  expect "model $k json" jcheck '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert len(r) == 1 and "error" not in r[0], r
assert r[0]["type"] == "model" and r[0]["schema"] == 1, r
r = r[0]
assert r["total"] > 0 and r["compute"] > 0 and r["latency"] >= 0 and r["bandwidth"] > 0
assert r["total"] <= (r["latency"] + r["bandwidth"] + r["compute"]) * (1 + 1e-6)
'
done
run 1 model --algo alg5 -n 5000 --ranks 64 --sweep ndup --max 6
expect "sweep ndup rc" test "$rc" -eq 0
expect "sweep ndup rows" test "$(count "alg5 P=64 ndup=" "$out")" -eq 6
run 1 model --algo hsumma -n 8192 --ranks 64 --sweep G -j
expect "sweep G rows (1, 4, 16, 64 tile 8x8 squarely; 2, 8, 32 too)" test "$(count '"algo":"hsumma"' "$out")" -ge 4
run 1 model --algo alg6 -n 4000 --ranks 128 --sweep c
expect "sweep c: 8x8x2 and 4x4x8? only c | s: 8x8x2" has "alg6 P=128 c=2" "$out"
run 1 model --algo alg5 -n 4000 --ranks 8 --sweep ppn --max 8 --ndup 1
expect "sweep ppn rows" test "$(count "alg5 P=" "$out")" -eq 8
# 8 nodes x 2 ranks are no cube: the largest cube of them, 8 ranks on 4 nodes (the other ranks asleep)
expect "sweep ppn: 16 ranks, the 2x2x2 cube on 4 nodes" has "alg5 P=8 (2x2x2) ndup=1 ppn=2 nodes=4" "$out"
expect "sweep ppn: 8 x 8 ranks, the 4x4x4 cube" has "alg5 P=64 (4x4x4) ndup=1 ppn=8 nodes=8" "$out"
# the machine of Huang & Chow's Table IV (docs/design/models.md): the paper's meshes, PPN 1 and 8 on 64 nodes
run 1 model --algo alg5 -n 7645 --ranks 64 --sweep ppn --max 8 --ndup 4 --machine "$(dirname "$0")/../bench/machines/stampede2-table4.json"
expect "Table III machine" has "alg5 P=343 (7x7x7) ndup=4 ppn=6 nodes=58" "$out"
expect "Table III machine: 48 cores" has "48 cores and 1 NIC" "$out"
run 1 model --algo 3d -n 4000 --ranks 1000 --sweep P
expect "sweep P: cubes" test "$(count "^  3d P=" "$out")" -eq 10
run 1 model --algo summa -n 4096 --ranks 64 --sweep algo
expect "sweep algo: 10 rows" test "$(count "^  [a-z0-9.]* P=64" "$out")" -eq 10
run 1 model --algo alg4 -n 7645 --ranks 64
expect "model header names the built-in machine" has "stampede2" "$out"
# the block-sparse product: a shape from --fill and --sparse-block, its parts, the sweeps over c, N_DUP and algo
run 1 model --algo bsumma -n 20000 --fill 0.05 --ranks 16 -j
expect "bsumma rc" test "$rc" -eq 0
expect "bsumma json: parts and shape" jcheck '
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["algo"] == "bsumma" and r["nblk"] == 625 and r["products"] > 0 and "b" not in r, r
assert r["total"] > 0 and r["compute"] > 0 and r["latency"] > 0 and r["bandwidth"] > 0 and r["layer_comm"] == 0, r
assert r["total"] <= (r["latency"] + r["bandwidth"] + r["compute"]) * (1 + 1e-9), r
assert abs(r["latency"] + r["bandwidth"] - r["step_comm"]) <= 1e-9 * r["step_comm"], r
'
run 1 model --algo bs2.5d -n 65536 --sparse-block 8 --fill 0.01 --ranks 4096 --sweep c
expect "bs2.5d sweep c: c = 1, 4, 16, 4096 (c <= s, or s = 1)" test "$(count "^  bs2.5d P=4096 c=" "$out")" -eq 4
expect "bs2.5d sweep c: the shape line" has "# block-sparse shape: nblk=8192 (mean block 8.0)" "$out"
run 1 model --algo bsumma -n 8000 --fill 0.1 --ranks 64 --sweep algo
expect "bsmul sweep algo: bsumma and bs2.5d only" test "$(count "^  [a-z0-9.]* P=64" "$out")" -eq 2
run 1 model --algo bsumma -n 8000 --fill 0.1 --ranks 64 --sweep ndup --max 4
expect "bsumma sweep ndup rows" test "$(count "^  bsumma P=64 ndup=" "$out")" -eq 4
run 1 model --algo bsumma -n 8000
expect "bsumma without --fill: exit 2" test "$rc" -eq 2
expect "bsumma without --fill: says so" has "give --fill" "$err"
run 1 model --algo summa --fill 0.1
expect "--fill on a dense kernel: exit 2" test "$rc" -eq 2
run 1 model --algo bs2.5d --fill 0.1 --ranks 32 --repl 8
expect "bs2.5d c > s: exit 2" test "$rc" -eq 2
run 1 model --algo bsumma --fill 0 -n 1000
expect "--fill 0: exit 2" test "$rc" -eq 2
run 1 model --algo alg7
expect "bad kernel exit 2" test "$rc" -eq 2
echo '{"beta": 1e-9}' >"$tmp/bad.json"
run 1 model --machine "$tmp/bad.json"
expect "bad machine file exit 1" test "$rc" -eq 1
expect "bad machine file message" has "gamma" "$err"
run 1 model --machine "$tmp/nope.json"
expect "missing machine file exit 1" test "$rc" -eq 1

# ---- ovl bench machine -------------------------------------------------------------------------------------------
run 2 bench machine -o "$tmp/m.json" --max-size 64K -i 3 -q
expect "bench machine rc" test "$rc" -eq 0
expect "machine file written" test -s "$tmp/m.json"
cp "$tmp/m.json" "$tmp/out"
expect "machine file content" jcheck '
import json, sys
m = json.load(open(sys.argv[1]))
assert m["type"] == "machine" and m["schema"] == 1, m
assert m["beta"] > 0 and m["gamma"] > 0 and m["peak_bw"] > 0, m
assert {(t["coll"], t["p"]) for t in m["fbw"]} == {("bcast", 2), ("reduce", 2), ("allreduce", 2)}
assert all(len(t["size"]) == len(t["bw"]) == 4 and all(b > 0 for b in t["bw"]) for t in m["fbw"])
'
run 1 model --algo alg5 -n 1000 --ranks 8 --machine "$tmp/m.json"
expect "model reads the measured machine" has "3 f_BW tables" "$out"
run 1 bench machine -o "$tmp/m1.json"
expect "bench machine needs 2 ranks" test "$rc" -eq 2
run 2 bench machine
expect "bench machine needs -o" test "$rc" -eq 2

# ---- ovl tune and auto ---------------------------------------------------------------------------------------------
# OVL_TEST_QUICK=1 (the sanitizer build) skips the slowest runs: the exhaustive sweep and --ppn auto.
if [ "${OVL_TEST_QUICK:-0}" != 1 ]; then
run 8 tune --family ssc -n 48 --exhaustive -i 1 -r 2 -x 0 -q --machine "$tmp/m.json" -o "$tmp/tune.json"
expect "tune ssc np=8 rc" test "$rc" -eq 0
expect "tune ssc: all 13 configurations timed" test "$(grep -c "^ *[0-9]* *alg[3-6]" <<<"$out")" -eq 13
expect "tune ssc: sweep line" has "# sweep: best .* auto (tune file $tmp/tune.json, measured at n=48): .*x the best" "$out"
expect "tune file entry" test "$(grep -c '"family":"ssc","n":48,"P":8' "$tmp/tune.json")" -eq 1
# the JSON form: the tuner's set timed in its rounds, auto found among the candidates and equal to the tuner's
# choice (it reads the tune file just written), every ratio >= 1 and the best's = 1
run 8 tune --family ssc -n 48 --exhaustive -i 1 -r 2 -x 0 -q --json --machine "$tmp/m.json" -o "$tmp/tune.json"
expect "tune --exhaustive --json" "$PY" -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith("{")]
cands = [r for r in rows if r["type"] == "tune-candidate"]
sw = [r for r in rows if r["type"] == "tune-sweep"][0]
assert len(cands) == 13 == sw["configurations"] and sw["rounds"] == 2, sw
tuned = [r for r in cands if r["tuner"]]
assert len(tuned) >= 3 and all(r["t_median_tuner"] > 0 for r in tuned)
assert all(r["t_median_tuner"] is None for r in cands if not r["tuner"])
best = min(cands, key=lambda r: r["t_median"])
assert sw["best"] == best["config"] and abs(sw["t_best"] - best["t_median"]) <= 1e-6 * best["t_median"], sw
choice = min(tuned, key=lambda r: r["t_median_tuner"])
assert sw["tuner"] == choice["config"] == sw["auto"], sw
assert abs(sw["auto_ratio"] - choice["t_median"] / best["t_median"]) < 1e-3, sw
assert min(sw["model_ratio"], sw["tuner_ratio"], sw["auto_ratio"]) >= 1.0, sw
' <<<"$out"
run 8 tune --family ssc -n 48 --top 2 --band 0 -i 1 -x 0 -q --machine "$tmp/m.json" -o "$tmp/tune.json"
expect "tune again replaces the entry" test "$(grep -c '"family":"ssc"' "$tmp/tune.json")" -eq 1
fi
run 4 tune --family gemm -n 64 --top 3 --band 0 -i 1 -x 0 -q -o "$tmp/tune.json"
expect "tune gemm np=4 rc" test "$rc" -eq 0
expect "tune gemm: 3 timed" test "$(grep -c "^ *[1-3]  " <<<"$out")" -eq 3
expect "tune file has the gemm entry" test "$(grep -c '"family":"gemm","n":64,"P":4' "$tmp/tune.json")" -eq 1
choice=$(grep -o '# choice: [^(]*' <<<"$out" | sed 's/# choice: //; s/ *$//')
run 4 gemm -n 70 --algo auto --tune-file "$tmp/tune.json" --check -i 1 -x 0 --no-blas-check
expect "gemm auto from the tune file rc" test "$rc" -eq 0
expect "gemm auto names the tune file" has "# auto: $choice (tune file" "$out"
expect "gemm auto result checked" has "PASS" "$out"
run 4 gemm -n 300 --algo auto --tune-file "$tmp/tune.json" -i 1 -x 0 --no-blas-check
expect "gemm auto: n far from the tuned one uses the model" has "(cost model" "$out"
run 4 gemm -n 70 --algo auto --tune-file "$tmp/tune.json" --ndup 3 -i 1 -x 0 --no-blas-check
expect "explicit --ndup wins over auto" has "ndup=3" "$out"
DATA=${OVL_TEST_DATA:-$(dirname "$0")/../data}
run 8 tune --family ssc -n 24 --top 2 --band 0 -i 1 -x 0 -q -o "$tmp/tune.json"
expect "tune ssc n=24 rc" test "$rc" -eq 0
choice=$(grep -o '# choice: [^(]*' <<<"$out" | sed 's/# choice: //; s/ *$//; s/ [0-9]*x[0-9]*x[0-9]*//')
run 8 purify --fock "$DATA/water_ccpvdz/fock.raw" --algo auto --ndup auto --tune-file "$tmp/tune.json" --check
expect "purify auto from the tune file rc" test "$rc" -eq 0
expect "purify auto names the tune file" has "# auto: $choice ppn=0 (all ranks) (tune file" "$out"
expect "purify auto checked" has "PASS" "$out"
if [ "${OVL_TEST_QUICK:-0}" != 1 ]; then
run 8 purify --fock "$DATA/water_ccpvdz/fock.raw" --algo alg5 --ndup auto --ppn auto --check
expect "purify ppn auto rc" test "$rc" -eq 0
expect "purify ppn auto: alg5 kept, a model choice" has "# auto: alg5 ndup=[0-9]* ppn=[0-9]*.*(cost model" "$out"
expect "purify ppn auto checked" has "PASS" "$out"
fi
run 2 purify --fock "$DATA/water_ccpvdz/fock.raw" --ndup many
expect "purify --ndup many exit 2" test "$rc" -eq 2
expect "purify --ndup message" has "integer in \[1, .*\] or auto" "$err"
run 2 tune --family ssc -n 40
expect "tune ssc on 2 ranks: no grid fits" test "$rc" -eq 1
expect "tune ssc on 2 ranks: message" has "fits 2 ranks" "$err"
run 1 tune --family nope
expect "tune bad family exit 2" test "$rc" -eq 2
expect "tune bad family: the families listed" has "gemm.*ssc.*sq" "$err"
run 1 tune --family sq -n 40
expect "tune sq refused: exit 2" test "$rc" -eq 2
expect "tune sq refused: why" has "sq has nothing to tune.*N_DUP.*--ndup" "$err"

echo "model_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
