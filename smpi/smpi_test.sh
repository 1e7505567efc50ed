#!/usr/bin/env bash
# The SMPI test of the suite (tests/smpi.cmake): configure and build the
# library, ssc_sim and ovl with smpicc, then run 64 simulated ranks with the
# products really computed and checked (also in arrival order, with SUMMA on
# 16 ranks), and 16 simulated ranks of `ovl gemm`
# where HSUMMA at G = 1 and G = P must take SUMMA's time within 5 %, with
# and without lookahead, and message streams between two nodes with and
# without the per-flow cap (--flowcap), and the reductions' arithmetic
# (--sumrate), and the message volume counted between nodes (ssc_sim
# --volume), and `ovl purify --fock -o` (files through rank 0), and the
# purification's iteration schedule recorded and replayed. Exit 77
# (skip) without smpicc.
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
cmake --build "$bld" -j 2 --target ssc_sim flow_sim ovl >>"$bld.log" 2>&1 || { tail -50 "$bld.log"; exit 1; }
export OVL_SMPI_FLOPS=real OVL_SMPI_PPN=4 OVL_SMPI_WORK=$bld/platforms OPENBLAS_NUM_THREADS=1
out=$(cd "$bld" && "$src/smpi/smpirun.sh" -np 64 "$bld/ssc_sim" -n 150 --algo alg4,alg5 --ndup 1,3 --check --reps 1 2>&1) ||
  { echo "$out"; exit 1; }
echo "$out"
[ "$(echo "$out" | grep -c ' PASS$')" -eq 4 ] || { echo "smpi test: expected 4 PASS lines"; exit 1; }
echo "smpi test: 64 simulated ranks: PASS"
# Files: `ovl purify --fock` reads the raw file on rank 0, which sends the
# blocks, and `--output` writes D through rank 0 (MPI-IO cannot open files on
# the simulated hosts), 8 ranks, SP2 and the canonical method, checked against
# a dense eigensolver and the written D against the case's reference density.
for m in sp2 canonical; do
  rm -f "$bld/purify_$m.raw" "$bld/purify_$m.raw.json"
  out=$(cd "$bld" && OVL_SMPI_PPN=1 "$src/smpi/smpirun.sh" -np 8 "$bld/ovl" purify --fock "$src/data/h2o8_ccpvdz/fock.raw" \
        --nocc 40 --method $m --check -o "$bld/purify_$m.raw" 2>&1) || { echo "$out"; exit 1; }
  echo "$out" | grep -qE '^check: .*PASS$' || { echo "$out"; echo "smpi test: ovl purify --fock ($m): no PASS"; exit 1; }
  python3 - "$bld/purify_$m.raw" "$src/data/h2o8_ccpvdz/dref.raw" <<'PY' || { echo "smpi test: ovl purify -o ($m): wrong file"; exit 1; }
import struct, sys
n = 192
d, r = (struct.unpack("<%dd" % (n * n), open(f, "rb").read()) for f in sys.argv[1:3])
tr, err = sum(d[i * n + i] for i in range(n)), max(abs(a - b) for a, b in zip(d, r))
print("smpi test: written D: tr %.12f, max |D - D_ref| %.2e" % (tr, err))
sys.exit(0 if abs(tr - 40) < 1e-9 and err < 1e-8 else 1)
PY
done
echo "smpi test: ovl purify --fock and -o, 8 ranks, sp2 and canonical: PASS"

# The iteration schedule: recorded by a run that computes (OVL_SMPI_SCHEDULE_OUT) and
# replayed without computing (OVL_SMPI_SCHEDULE, products skipped, memory shared), the
# same simulated time to rounding, the same iterations and products; a bad schedule is
# refused by name.
for mp in trs4:mixed sp2acc:double canonical:double; do
  m=${mp%:*} prec=${mp#*:} sf=$bld/sched_$m.txt
  rm -f "$sf"
  a=$(cd "$bld" && OVL_SMPI_PPN=1 OVL_SMPI_SCHEDULE_OUT="$sf" "$src/smpi/smpirun.sh" -np 8 "$bld/ovl" purify \
      --fock "$src/data/h2o8_ccpvdz/fock.raw" --nocc 40 --method $m --precision $prec --allow-idle --json -q 2>&1) ||
    { echo "$a"; exit 1; }
  b=$(cd "$bld" && OVL_SMPI_PPN=1 OVL_SMPI_FLOPS=skip OVL_SMPI_SHARED_MALLOC=65536 OVL_SMPI_SCHEDULE="@$sf" \
      "$src/smpi/smpirun.sh" -np 8 "$bld/ovl" purify --fock "$src/data/h2o8_ccpvdz/fock.raw" --nocc 40 --method $m \
      --precision $prec --allow-idle --json -q 2>&1) || { echo "$b"; exit 1; }
  python3 - "$a" "$b" "$(cat "$sf")" <<'PY' || { echo "$a"; echo "$b"; echo "smpi test: $m ($prec): the replayed schedule differs"; exit 1; }
import json, sys
a, b = (json.loads(x.strip().splitlines()[-1]) for x in sys.argv[1:3])
print("smpi test: schedule %s: computed %.9f s, replayed %.9f s, %d iterations, %d products" %
      (sys.argv[3], a["t_total"], b["t_total"], b["iterations"], b["products"]))
ok = abs(a["t_total"] - b["t_total"]) <= 1e-9 * a["t_total"] and a["iterations"] == b["iterations"] \
  and a["products"] == b["products"] and b["stop_reason"].startswith("fixed schedule") and a["stop_reason"] != b["stop_reason"]
sys.exit(0 if ok else 1)
PY
done
out=$(cd "$bld" && OVL_SMPI_PPN=1 OVL_SMPI_SCHEDULE="s|x" "$src/smpi/smpirun.sh" -np 4 "$bld/ovl" purify \
      --fock "$src/data/h2o8_ccpvdz/fock.raw" --nocc 40 --method sp2 2>&1) && { echo "$out"; exit 1; }
echo "$out" | grep -q "OVL_SMPI_SCHEDULE: 'x' is not s, d, F or |" ||
  { echo "$out"; echo "smpi test: a bad OVL_SMPI_SCHEDULE was not refused by name"; exit 1; }
echo "smpi test: the iteration schedule recorded and replayed (trs4 mixed, sp2acc, canonical), a bad one refused: PASS"

# The symmetric square charges its flops, the syrk of its diagonal blocks included: on
# one rank every product is one syrk, n^3 flops at the node's 1.56 TFLOP/s (before,
# one rank's products cost no simulated time).
for prec in double mixed; do
  out=$(cd "$bld" && OVL_SMPI_PPN=1 "$src/smpi/smpirun.sh" -np 1 "$bld/ovl" purify --fock "$src/data/h2o8_ccpvdz/fock.raw" \
        --nocc 40 --method sp2 --precision $prec --json -q 2>&1) || { echo "$out"; exit 1; }
  python3 - "$out" <<'PY' || { echo "$out"; echo "smpi test: sp2 ($prec) on one rank: products not charged as n^3 flops"; exit 1; }
import json, sys
j = json.loads(sys.argv[1].strip().splitlines()[-1])
want = j["products"] * j["n"] ** 3 / 1.56e12
sys.exit(0 if abs(j["t_ssc"] - want) <= 0.05 * want else 1)
PY
done
echo "smpi test: the symmetric square's flops on one rank (sp2, double and mixed): PASS"
# Computation in arrival order (--arrival-order on): Algorithm 5's products
# on each lane's part as it arrives (64 ranks), SUMMA with lookahead (16
# ranks, 4 lanes) and HSUMMA with lookahead (16 ranks, 2 x 2 groups, 3
# lanes), products really computed and checked.
out=$(cd "$bld" && "$src/smpi/smpirun.sh" -np 64 "$bld/ssc_sim" -n 150 --algo alg5 --ndup 3 --arrival-order on \
      --check --reps 1 2>&1) || { echo "$out"; exit 1; }
[ "$(echo "$out" | grep -c ' PASS$')" -eq 1 ] || { echo "$out"; echo "smpi test: Alg. 5 in arrival order: no PASS"; exit 1; }
out=$(cd "$bld" && OVL_SMPI_PPN=1 "$src/smpi/smpirun.sh" -np 16 "$bld/ovl" gemm -n 512 -b 64 --backend own --algo summa \
      --lookahead -d 4 --arrival-order on -i 1 -x 0 --no-blas-check --check 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep -qE '^ +summa .*PASS' || { echo "$out"; echo "smpi test: SUMMA in arrival order: no PASS"; exit 1; }
out=$(cd "$bld" && OVL_SMPI_PPN=1 "$src/smpi/smpirun.sh" -np 16 "$bld/ovl" gemm -n 300 -b 8 --outer 32 --groups 2x2 \
      --algo hsumma --lookahead -d 3 --arrival-order on -i 1 -x 0 --no-blas-check --check 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep -qE '^ +hsumma .*PASS' || { echo "$out"; echo "smpi test: HSUMMA in arrival order: no PASS"; exit 1; }
echo "smpi test: arrival order, Alg. 5 (64 ranks), SUMMA and HSUMMA with lookahead (16 ranks): PASS"
# HSUMMA at G = 1 (no outer level) and G = P (no inner level) does SUMMA's
# communication: total and communication time within 5 % of SUMMA's (medians
# of 3 repetitions after a warm-up; one rank per node).
gemm=(gemm -n 512 -b 64 --backend own -i 3 -x 1 --no-blas-check --check)
fail=0
for la in "" --lookahead; do
  ref=""
  for algo in summa "hsumma -G 1" "hsumma -G 16"; do
    # shellcheck disable=SC2086
    line=$(cd "$bld" && OVL_SMPI_PPN=1 "$src/smpi/smpirun.sh" -np 16 "$bld/ovl" "${gemm[@]}" --algo $algo $la 2>&1) ||
      { echo "$line"; exit 1; }
    line=$(echo "$line" | grep -E '^ +h?summa ') || { echo "smpi test: no result line for $algo $la"; exit 1; }
    case "$line" in *PASS*) ;; *) echo "$line"; echo "smpi test: $algo $la: wrong product"; exit 1 ;; esac
    read -r _ _ tmed _ _ _ comm _ <<<"$line"
    if [ -z "$ref" ]; then
      ref="$tmed $comm"
      echo "smpi test: summa ${la:-(no lookahead)}: t_med $tmed s, comm $comm s"
      continue
    fi
    read -r rt rc <<<"$ref"
    verdict=$(awk -v t="$tmed" -v c="$comm" -v rt="$rt" -v rc="$rc" 'BEGIN {
      a = t / rt; b = c / rc; ok = a >= 0.95 && a <= 1.05 && b >= 0.95 && b <= 1.05
      printf "%s total/SUMMA %.3f comm/SUMMA %.3f", ok ? "ok" : "FAIL", a, b }')
    echo "smpi test: $algo ${la:-(no lookahead)}: t_med $tmed s, comm $comm s: $verdict"
    case "$verdict" in ok*) ;; *) fail=1 ;; esac
  done
done
[ "$fail" -eq 0 ] || { echo "smpi test: HSUMMA at G = 1 or G = P is not within 5 % of SUMMA"; exit 1; }
echo "smpi test: HSUMMA at G = 1 and G = 16 within 5 % of SUMMA: PASS"
# The per-flow cap (smpirun.sh --flowcap, docs/guides/smpi.md): between two nodes,
# one stream of 8 MB messages gets the cap (within 5 %), two concurrent
# streams of the same pair twice the cap, six the link (12 GB/s, within 5 %);
# without the cap every count of streams gets the link.
flows() { # CAP: print "K GB/s" per stream count K
  local cap=()
  [ -n "$1" ] && cap=(--flowcap "$1")
  (cd "$bld" && OVL_SMPI_PPN=1 "$src/smpi/smpirun.sh" -np 2 "${cap[@]}" "$bld/flow_sim" --streams 1,2,6 --reps 1 2>&1) |
    awk '$1 == "streams" { print $2, $10 }'
}
fail=0
for cap in "" 2.4GBps; do
  got=$(flows "$cap")
  [ "$(echo "$got" | wc -l)" -eq 3 ] || { echo "smpi test: flow_sim ${cap:-without cap}: no result"; echo "$got"; exit 1; }
  while read -r k bw; do
    verdict=$(awk -v k="$k" -v bw="$bw" -v cap="${cap%GBps}" 'BEGIN {
      want = cap == "" ? 12 : (k * cap < 12 ? k * cap : 12); a = bw / want; ok = a >= 0.95 && a <= 1.05
      printf "%s (want %.2f)", ok ? "ok" : "FAIL", want }')
    echo "smpi test: ${cap:-no cap}: $k stream(s) $bw GB/s: $verdict"
    case "$verdict" in ok*) ;; *) fail=1 ;; esac
  done <<<"$got"
done
[ "$fail" -eq 0 ] || { echo "smpi test: the flow cap does not cap one stream or lets several pass"; exit 1; }
echo "smpi test: per-flow cap: PASS"
# The reductions' arithmetic (smpirun.sh --sumrate, docs/guides/smpi.md): 4 nodes,
# a 4 MB reduction of ovl's own (Rabenseifner, p = 4) adds (p-1)/p of the
# message on each rank, so --sumrate R must lengthen the blocking reduction by
# 0.75 n / R (within 3 %); with 4 ranks per node each summing a quarter of it
# (bench coll's ppn case) by a quarter of that: the ranks of a node add up in
# parallel, as on their own cores.
nb=4194304 rate=1.5e9
coll() { # SUMRATE PPN: print "blocking_us ppn_us"
  local sr=()
  [ -n "$1" ] && sr=(--sumrate "$1")
  (cd "$bld" && OVL_SMPI_PPN=$2 OVL_SMPI_FLOPS=skip "$src/smpi/smpirun.sh" -np $((4 * $2)) "${sr[@]}" "$bld/ovl" bench coll \
    --op reduce --backend own --algo rabenseifner --ppn "$2" -m "$nb:$nb" -i 2 -x 1 -q 2>&1) | awk '$1 == n { print $2, $6 }' n="$nb"
}
read -r b0 _ <<<"$(coll "" 1)"
read -r b1 _ <<<"$(coll 1.5GBps 1)"
read -r _ p0 <<<"$(coll "" 4)"
read -r _ p1 <<<"$(coll 1.5GBps 4)"
[ -n "$b0" ] && [ -n "$b1" ] && [ -n "$p0" ] && [ -n "$p1" ] || { echo "smpi test: bench coll under --sumrate: no result"; exit 1; }
verdict=$(awk -v b0="$b0" -v b1="$b1" -v p0="$p0" -v p1="$p1" -v n="$nb" -v r="$rate" 'BEGIN {
  want = 0.75 * n / r * 1e6; a = (b1 - b0) / want; c = (p1 - p0) / (want / 4)
  ok = a >= 0.97 && a <= 1.03 && c >= 0.97 && c <= 1.03
  printf "%s: blocking +%.0f us, 4 ranks per node +%.0f us (want %.0f and %.0f)", ok ? "PASS" : "FAIL", b1 - b0, p1 - p0, want, want / 4 }')
echo "smpi test: --sumrate 1.5GBps: $verdict"
case "$verdict" in PASS*) ;; *) exit 1 ;; esac
# Message volume (ssc_sim --volume, ovl_volume_*): Algorithm 4 on 2x2x2
# ranks sends its bytes between nodes at 1 rank per node, fewer of them at 4
# (some partners share the node), none at 8 (one node); on the busiest node
# the kinds add up to its total.
vol() { # PPN: print "total_MB_between_nodes busiest_node_MB its_sum_of_kinds"
  (cd "$bld" && OVL_SMPI_PPN=$1 OVL_SMPI_FLOPS=skip "$src/smpi/smpirun.sh" -np 8 "$bld/ssc_sim" -n 150 --algo alg4 \
    --ndup 1 --reps 1 --warmup 0 --volume 2>&1) |
    awk '$1 == "volume" { split($4, k, "="); print $6 * k[2], $5, $7 + $8 + $9 + $10 }'
}
read -r t1 m1 k1 <<<"$(vol 1)"
read -r t4 _ _ <<<"$(vol 4)"
read -r t8 _ _ <<<"$(vol 8)"
[ -n "$t1" ] && [ -n "$t4" ] && [ -n "$t8" ] || { echo "smpi test: ssc_sim --volume: no result"; exit 1; }
verdict=$(awk -v a="$t1" -v m="$m1" -v k="$k1" -v b="$t4" -v c="$t8" 'BEGIN {
  ok = a > 0 && b > 0 && b < a && c == 0 && (k - m) * (k - m) < 1e-4
  printf "%s: MB between nodes %.3f (PPN 1), %.3f (PPN 4), %.3f (PPN 8)", ok ? "PASS" : "FAIL", a, b, c }')
echo "smpi test: --volume: $verdict"
case "$verdict" in PASS*) ;; *) exit 1 ;; esac
# The platform of fitted mechanisms (smpirun.sh --mech smpi/platforms/mech.env,
# docs/guides/smpi.md "Mechanisms"): Algorithm 5 with the products computed
# and checked on it (64 ranks, 4 per node); posting a reduction of 8 MB on 4
# nodes costs OVERHEAD + 8 MB / COPYRATE (Fig. 6's line, within 3 %), and
# 2 MB on each of 4 ranks of a node OVERHEAD + 2 MB / COPYRATE (the node's
# memory, 247 GB/s, does not bind); with NODEMEM set to the per-rank copy
# rate the 4 ranks share it: at least 2.5 times as long, at most the time of
# 4 copies in a row (the ranks leave the barrier at slightly different times).
mech=$src/smpi/platforms/mech.env
out=$(cd "$bld" && "$src/smpi/smpirun.sh" -np 64 --mech "$mech" "$bld/ssc_sim" -n 150 --algo alg5 --ndup 4 --check --reps 1 2>&1) ||
  { echo "$out"; exit 1; }
[ "$(echo "$out" | grep -c ' PASS$')" -eq 1 ] || { echo "$out"; echo "smpi test: --mech: Alg. 5 not PASS"; exit 1; }
posts() { # PPN [NODEMEM]: print the median posting time (us) of the ppn case's reductions on rank 0
  rm -f "$bld/mech_tl.json"
  (cd "$bld" && env OVL_SMPI_PPN="$1" OVL_SMPI_FLOPS=skip ${2:+OVL_MECH_NODEMEM=$2} "$src/smpi/smpirun.sh" -np $((4 * $1)) \
    --mech "$mech" "$bld/ovl" bench coll --op reduce --backend own --ppn "$1" -m 8388608:8388608 -i 1 -x 0 \
    --timeline "$bld/mech_tl.json" --timeline-reps 1 -q >/dev/null 2>&1) || return 1
  python3 - "$bld/mech_tl.json" <<'PY'
import json, sys
ev, last, case, t = json.load(open(sys.argv[1]))["traceEvents"], None, None, []
for e in ev:
  if e["ph"] == "B":
    last, case = e["ts"], e["name"]
  elif e["name"].startswith("post") and case == "ppn" and e["tid"] == 1:
    t.append(e["ts"] - last)
print(sorted(t)[len(t) // 2] if t else "")
PY
}
# shellcheck disable=SC1090
. "$mech"
p1=$(posts 1) || p1=""
p4=$(posts 4) || p4=""
p4s=$(posts 4 "$COPYRATE") || p4s=""
[ -n "$p1" ] && [ -n "$p4" ] && [ -n "$p4s" ] || { echo "smpi test: --mech: no posting times"; exit 1; }
verdict=$(awk -v a="$p1" -v b="$p4" -v d="$p4s" -v o="$OVERHEAD" -v c="$COPYRATE" 'BEGIN {
  w1 = (o + 8388608 / c) * 1e6; w4 = (o + 2097152 / c) * 1e6; full = (o + 4 * 2097152 / c) * 1e6
  ok = a >= 0.97 * w1 && a <= 1.03 * w1 && b >= 0.97 * w4 && b <= 1.03 * w4 && d >= 2.5 * b && d <= 1.03 * full
  printf "%s: post of 8 MB %.0f us (want %.0f); 4 ranks per node, 2 MB each: %.0f us (want %.0f), with NODEMEM = COPYRATE %.0f us (want %.0f-%.0f)",
         ok ? "PASS" : "FAIL", a, w1, b, w4, d, 2.5 * b, full }')
echo "smpi test: --mech: $verdict"
case "$verdict" in PASS*) ;; *) exit 1 ;; esac
