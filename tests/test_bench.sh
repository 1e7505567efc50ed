#!/usr/bin/env bash
# End-to-end tests of the benchmarks: usage: test_bench.sh OVL MPIEXEC [MPIEXEC_FLAGS...]
# Runs `ovl bench pingpong|coll|nbc` at 2 and 4 ranks with tiny sizes and few repetitions; checks exit codes,
# that every JSON line parses and has positive bandwidths / sane fields and increasing sizes, the progress
# lines, the error paths, the --timeline trace, and that tools/ovl-plot turns the outputs into non-empty PNGs
# (skipped, with a message, when matplotlib is missing).
set -u
OVL=$1; shift
MPIEXEC=("$@")
HERE=$(cd "$(dirname "$0")" && pwd)
PLOT="$HERE/../tools/ovl-plot"
PY=python3
skip=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
small=(--cache-bytes 1M) # rotate through 1 MiB: the default (2x the last-level cache) costs memory and time here

RUN_TIMEOUT=180
. "$(dirname "$0")/testlib.sh"

# Checks JSON lines (file $1) of bench $2: every line parses; sizes increase; fields per bench are sane.
cat >"$tmp/check.py" <<'EOF'
import json, sys
path, bench = sys.argv[1], sys.argv[2]
lines = [l for l in open(path) if l.strip()]
assert lines, "no output"
recs = [json.loads(l) for l in lines]
assert all(r["type"] == bench and r["schema"] == 1 for r in recs), "type/schema field"
sizes = [r["bytes"] for r in recs]
assert all(b > a for a, b in zip(sizes, sizes[1:])), "sizes not increasing: %s" % sizes
def pos(x, what):
    assert x > 0 and x == x, "%s = %r is not positive" % (what, x)
fit = ("alpha", "beta", "n_half", "model_bw_MBps")
for r in recs:
    if bench == "pingpong":
        assert r["t_min"] <= r["t_median"] <= r["t_max"], "t order"
        for k in ("bw_MBps", "agg_bw_MBps", "t_median"):
            pos(r[k], k)
        # the Hockney fit: beta > 0, or refused (every fitted value null: times that do not
        # follow one line, e.g. one scheduler tick per message on an oversubscribed machine);
        # never a beta <= 0
        if r["beta"] is None:
            assert all(r[k] is None for k in fit), "a refused fit with values: %s" % [r[k] for k in fit]
        else:
            pos(r["beta"], "beta")
        assert [r[k] for k in fit[:3]] == [recs[0][k] for k in fit[:3]], "one fit for every size"
        assert abs(r["agg_bw_MBps"] - r["pairs"] * r["bw_MBps"]) <= 1e-3 * r["agg_bw_MBps"] + 1e-3, "agg = K x bw"
    elif bench == "coll":
        for case in ("blocking", "ndup_overlap", "ppn_overlap"):
            c = r[case]
            assert c["t_min"] <= c["t_median"] <= c["t_max"], case + " t order"
            pos(c["bw_MBps"], case + ".bw_MBps")
    elif bench == "nbc":
        for m in ("osu", "imb"):
            if m in r:
                assert 0 <= r[m]["overlap_pct"] <= 100, m + " overlap outside [0, 100]"
                pos(r[m]["t_pure"], m + ".t_pure")
        if "eff" in r:
            for k in ("t_comm", "t_comp", "t_seq", "t_ovl", "speedup"):
                pos(r["eff"][k], "eff." + k)
for k, v in [a.split("=", 1) for a in sys.argv[3:]]:
    assert all(str(r[k]) == v for r in recs), "%s != %s" % (k, v)
print("%d lines OK" % len(recs))
EOF
json_ok() { $PY "$tmp/check.py" "$@" >/dev/null; }

# ---- pingpong -------------------------------------------------------------------------------------------------
run 2 bench pingpong -m 1:64K -i 20 -x 2 --large 16K --iterations-large 5 --warmup-large 1 "${small[@]}" -j -q
expect "pingpong np=2 rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/pp1.json"
expect "pingpong np=2 json" json_ok "$tmp/pp1.json" pingpong pairs=1 method=pingpong
expect "pingpong 17 sizes" test "$(wc -l <"$tmp/pp1.json")" -eq 17
expect "pingpong quiet: no progress" test -z "$err"

run 2 bench pingpong -m 8:8K -i 10 -x 1 -f "${small[@]}"
expect "pingpong table rc" test "$rc" -eq 0
expect "pingpong header" has "# ovl bench pingpong: 2 ranks, 1 pair" "$out"
expect "pingpong MPI line" has "# MPI: " "$out"
# the fit, or the statement that the times do not follow one line (a loaded machine: every size takes a
# scheduler time slice); the fit itself is checked on known lines in test_bench.c
expect "pingpong Hockney line" grep -qE "N_half = B\*L = |beta <= 0, the sizes do not follow one line" <<<"$out"
expect "pingpong full columns" has "t_min(us)" "$out"
expect "pingpong progress lines" test "$(count "ovl bench pingpong: \[" "$err")" -eq 11

run 4 bench pingpong -m 64:32K --pairs 2 -W 4 -i 5 -x 1 "${small[@]}" -j -q
expect "pingpong np=4 pairs=2 window rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/pp2.json"
expect "pingpong np=4 json" json_ok "$tmp/pp2.json" pingpong pairs=2 method=window window=4

run 4 bench pingpong -m 1K --pairs 2 --cache-bytes 0 -i 5 -j -q
expect "pingpong without cache busting" test "$rc" -eq 0

run 1 bench pingpong -m 8
expect "pingpong np=1 refused" test "$rc" -eq 1
expect "pingpong np=1 message" has "at least 2 ranks" "$err"
run 4 bench pingpong --pairs 3
expect "pingpong pairs > P/2 refused" test "$rc" -eq 1
run 2 bench pingpong -m 64 -i 2 -x 0 "${small[@]}" -j -q
expect "pingpong one size rc" test "$rc" -eq 0
expect "pingpong one size: no fit, written as null" has '"alpha":null,"beta":null,"n_half":null' "$out"
run 2 bench pingpong --bogus
expect "pingpong bad option exit 2" test "$rc" -eq 2
expect "pingpong bad option once" test "$(count "unknown option" "$err")" -eq 1
run 1 bench pingpong --help
expect "pingpong help" has "Hockney" "$out"

# ---- coll -----------------------------------------------------------------------------------------------------
for op in bcast reduce allreduce allgather alltoall; do
  run 2 bench coll --op "$op" -m 64:16K -i 3 -x 1 -d 3 "${small[@]}" -j -q
  expect "coll $op np=2 rc" test "$rc" -eq 0
  cp "$tmp/out" "$tmp/coll_$op.json"
  expect "coll $op np=2 json" json_ok "$tmp/coll_$op.json" coll op="$op" ndup=3 p=2
done
run 4 bench coll --op allreduce --ppn 2 --backend own --algo ring -m 1K:64K -i 3 -x 1 -d 3 "${small[@]}" -j -q \
  --timeline "$tmp/tl.json" --timeline-size 8K --timeline-reps 2
expect "coll np=4 ppn=2 own ring rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/coll4.json"
expect "coll np=4 json" json_ok "$tmp/coll4.json" coll ppn=2 p=2 backend=own alg=ring
expect "coll timeline json written" test -s "$tmp/tl.json"
expect "coll timeline csv written" test -s "$tmp/tl.csv"
cat >"$tmp/tl.py" <<'EOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
def n(pid, name, ph="i"):
    return sum(1 for e in ev if e["pid"] == pid and e["name"] == name and e["ph"] == ph)
# 2 reps; leaders (ranks 0, 2) run blocking and 3 lanes; everyone runs the ppn case
for r in (0, 2):
    assert n(r, "post allreduce") == 6 and n(r, "done allreduce") == 6, "lanes of rank %d" % r
    assert n(r, "post blocking allreduce") == 2 and n(r, "ndup", "B") == 2, "blocking/ndup of rank %d" % r
for r in range(4):
    assert n(r, "post ppn allreduce") == 2 and n(r, "done ppn allreduce") == 2, "ppn of rank %d" % r
assert n(1, "post allreduce") == 0, "rank 1 sleeps during the lanes case"
EOF
expect "coll timeline events" $PY "$tmp/tl.py" "$tmp/tl.json"
run 4 bench coll --op bcast --ppn 2 -m 256:4K -i 2 -x 1 "${small[@]}"
expect "coll table rc" test "$rc" -eq 0
expect "coll header" has "4 ranks = 2 nodes x 2 ppn (ppn: explicit), p = 2" "$out"
expect "coll progress lines" test "$(count "ovl bench coll: \[" "$err")" -eq 5
run 4 bench coll --ppn 3 -m 64
expect "coll ppn not dividing refused" test "$rc" -eq 1
expect "coll ppn message" has "does not divide" "$err"
run 2 bench coll --algo ring -m 64
expect "coll alg needs own" test "$rc" -eq 2
run 2 bench coll --backend own --op bcast --algo recdbl -m 64
expect "coll alg of another collective refused" test "$rc" -eq 2
run 2 bench coll --op scatter
expect "coll unknown op exit 2" test "$rc" -eq 2
run 2 bench coll --alg auto -m 64 -i 1 -x 0 "${small[@]}" -j -q
expect "coll --alg: an old name of --coll-alg still works" test "$rc" -eq 0
expect "coll --alg: same record" has '"type":"coll","schema":1,"op":"bcast"' "$out"
expect "coll --alg: a deprecation note" has "deprecated, use --coll-alg" "$err"
run 1 bench coll --help
expect "coll help: --coll-alg listed" has "      --coll-alg NAME" "$out"
expect "coll help: the alias --algo not listed" test "$(count "--algo " "$out")" -eq 0
expect "coll help: the alias --alg not listed" test "$(count "--alg " "$out")" -eq 0
expect "coll help: --op and --backend long only" has "      --op OP" "$out"

# ---- nbc ------------------------------------------------------------------------------------------------------
run 2 bench nbc -m 8:4K -i 3 -x 1 --compute-us 100 "${small[@]}" -j -q
expect "nbc np=2 rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/nbc2.json"
expect "nbc np=2 json" json_ok "$tmp/nbc2.json" nbc op=allreduce num_tests=10
run 4 bench nbc --op bcast --backend own --algo binomial --mode eff --num-tests 0 -m 1K:8K -i 3 -x 1 --compute-us 50 "${small[@]}" -j -q
expect "nbc np=4 own eff rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/nbc4.json"
expect "nbc np=4 json" json_ok "$tmp/nbc4.json" nbc op=bcast backend=own num_tests=0
expect "nbc eff only" test "$(grep -c '"osu"' "$tmp/nbc4.json")" -eq 0
run 2 bench nbc -m 64:128 -i 2 -x 0 --compute-us 20 "${small[@]}" -f
expect "nbc table rc" test "$rc" -eq 0
expect "nbc table columns" has "osu_ovl%" "$out"
expect "nbc table eff" has "speedup" "$out"
run 2 bench nbc --compute-us -1
expect "nbc negative compute refused" test "$rc" -eq 2

# ---- 8 ranks: every benchmark (oversubscribed, tiny sizes; OVL_TEST_QUICK=1, the sanitizer build, keeps ssc) ----
if [ "${OVL_TEST_QUICK:-0}" != 1 ]; then
run 8 bench pingpong -m 8:4K --pairs 4 -i 5 -x 1 "${small[@]}" -j -q
expect "pingpong np=8 pairs=4 rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/pp8.json"
expect "pingpong np=8 json" json_ok "$tmp/pp8.json" pingpong pairs=4
run 8 bench coll --op reduce --ppn 2 -m 256:8K -i 3 -x 1 -d 2 "${small[@]}" -j -q
expect "coll np=8 ppn=2 rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/coll8.json"
expect "coll np=8 json" json_ok "$tmp/coll8.json" coll op=reduce ppn=2 p=4 ndup=2
run 8 bench nbc --op allreduce -m 64:1K -i 2 -x 1 --compute-us 20 "${small[@]}" -j -q
expect "nbc np=8 rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/nbc8.json"
expect "nbc np=8 json" json_ok "$tmp/nbc8.json" nbc op=allreduce
run 8 bench progress -n 64K --chunks 4 --chunk-size 32 -i 2 -x 1 -j
expect "progress np=8 rc" test "$rc" -eq 0
expect "progress np=8 two back ends" test "$(count '"type":"progress"' "$out")" -eq 2
fi

# ---- ssc: SymmSquareCube GFLOP/s per algorithm and N_DUP, results checked --------------------------------------
cat >"$tmp/ssc.py" <<'EOF2'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
want = [tuple(x.split(":")) for x in sys.argv[3].split(",")]
got = [(r["algo"], str(r["ndup"])) for r in recs]
assert got == want, "configurations %s, expected %s" % (got, want)
for r in recs:
    assert r["type"] == "ssc" and r["ranks"] == int(sys.argv[2]), "type/ranks"
    assert r["check"] == "PASS" and r["relerr"] <= 1e-10, "result check"
    assert 0 < r["t_min"] <= r["t_median"] <= r["t_max"], "t order"
    assert r["gflops"] > 0 and abs(r["gflops"] - 4 * r["n"] ** 3 / r["t_median"] * 1e-9) <= 1e-3 * r["gflops"] + 1e-3
    assert 0 <= r["t_comm_median"] <= r["t_max"], "comm time"
base = [r for r in recs if r["algo"] == "alg4"]
if base:
    for r in recs:
        assert abs(r["speedup_vs_alg4"] - base[0]["t_median"] / r["t_median"]) <= 1e-3 * r["speedup_vs_alg4"]
EOF2
run 8 bench ssc -n 97 -i 2 -x 1 -d 1,3 -j -q
expect "ssc np=8 rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/ssc8.json"
expect "ssc np=8 json" $PY "$tmp/ssc.py" "$tmp/ssc8.json" 8 alg3:1,alg4:1,alg5:1,alg5:3,alg6:1,alg6:3
run 4 bench ssc -n 50 -a alg6,alg4 -d 2 --allow-idle -i 2 -x 0 -j -q
expect "ssc np=4 idle rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/ssc4.json"
expect "ssc np=4 json" $PY "$tmp/ssc.py" "$tmp/ssc4.json" 4 alg6:2,alg4:1
run 8 bench ssc -n 61 -a alg5 -d 1,3 --arrival-order on --backend own -i 1 -x 0 -j -q
expect "ssc arrival order rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/ssca.json"
expect "ssc arrival order json" $PY "$tmp/ssc.py" "$tmp/ssca.json" 8 alg5:1,alg5:3
run 1 bench ssc -n 40 -i 1 -x 0 --backend own -d 1-2
expect "ssc np=1 table rc" test "$rc" -eq 0
expect "ssc table header" has "# algo  ndup" "$out"
expect "ssc table 6 rows" test "$(count " PASS" "$out")" -eq 6
expect "ssc progress lines" test "$(count "ovl bench ssc: \[" "$err")" -eq 1
run 2 bench ssc -n 40 -a alg4
expect "ssc np=2 no cube refused" test "$rc" -eq 1
expect "ssc no cube message" has "allow-idle\|cube\|grid" "$err"
run 2 bench ssc -d 0
expect "ssc ndup 0 refused (exit 2)" test "$rc" -eq 2
expect "ssc ndup message once" test "$(count "ndup" "$err")" -eq 1
run 2 bench ssc -a alg7
expect "ssc bad algo refused (exit 2)" test "$rc" -eq 2
# a printed plan pasted back runs that one configuration; beside the options it replaces it is refused
run 8 bench ssc -n 61 --plan "alg6 grid=2x2x2 ndup=3 backend=own" -i 1 -x 0 -j -q
expect "ssc --plan rc" test "$rc" -eq 0
cp "$tmp/out" "$tmp/sscp.json"
expect "ssc --plan: the one configuration" $PY "$tmp/ssc.py" "$tmp/sscp.json" 8 alg6:3
expect "ssc --plan: its grid" has '"grid":"2x2x2"' "$out"
run 2 bench ssc --plan "alg5 ndup=2" -d 2
expect "ssc --plan with --ndup refused (exit 2)" test "$rc" -eq 2
expect "ssc --plan with --ndup: named" has "--ndup beside it" "$err"
run 1 bench ssc -a alg3 -d 2
expect "ssc --ndup without alg5/alg6 refused (exit 2)" test "$rc" -eq 2

# ---- plots ----------------------------------------------------------------------------------------------------
png_ok() { [ -s "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = "211PNG" ]; }
if "$PLOT" check >/dev/null 2>&1; then
  expect "plot bw pingpong" "$PLOT" bw "$tmp/pp1.json" "$tmp/pp2.json" -o "$tmp/bw_pp.png"
  expect "plot bw pingpong png" png_ok "$tmp/bw_pp.png"
  expect "plot bw coll" "$PLOT" bw "$tmp/coll4.json" -o "$tmp/bw_coll.png" --title "allreduce"
  expect "plot bw coll png" png_ok "$tmp/bw_coll.png"
  if [ "${OVL_TEST_QUICK:-0}" != 1 ]; then
    expect "plot bw 8 ranks" "$PLOT" bw "$tmp/pp8.json" "$tmp/coll8.json" -o "$tmp/bw8.png"
    expect "plot bw 8 ranks png" png_ok "$tmp/bw8.png"
    expect "plot sweep nbc 8 ranks" "$PLOT" sweep "$tmp/nbc8.json" --x bytes --y osu.overlap_pct -o "$tmp/nbc8.png"
    expect "plot sweep nbc 8 ranks png" png_ok "$tmp/nbc8.png"
  fi
  expect "plot sweep ssc" "$PLOT" sweep "$tmp/ssc8.json" --x ndup --y gflops --series algo -o "$tmp/ssc8.png"
  expect "plot sweep ssc png" png_ok "$tmp/ssc8.png"
  expect "plot timeline" "$PLOT" timeline "$tmp/tl.json" -o "$tmp/tl.png"
  expect "plot timeline png" png_ok "$tmp/tl.png"
  expect "plot timeline one rep" "$PLOT" timeline "$tmp/tl.json" --rep 1 --ranks 0,1 -o "$tmp/tl1.png"
  expect "plot timeline one rep png" png_ok "$tmp/tl1.png"
  expect "plot trace" "$PLOT" trace "$tmp/tl.json" --instants -o "$tmp/tr.png"
  expect "plot trace png" png_ok "$tmp/tr.png"
  cat "$tmp"/coll_*.json >"$tmp/coll_all.json"
  expect "plot sweep coll" "$PLOT" sweep "$tmp/coll_all.json" --x bytes --y ndup_overlap.bw_MBps --series op \
    -o "$tmp/sw.png"
  expect "plot sweep png" png_ok "$tmp/sw.png"
  expect "plot sweep nbc" "$PLOT" sweep "$tmp/nbc2.json" --x bytes --y eff.speedup -o "$tmp/sw2.png"
  expect "plot sweep nbc png" png_ok "$tmp/sw2.png"
  echo '{"bench":"gemm","plan":"summa b=64 ndup=2 lookahead=0","gflops_median":3.5}' >"$tmp/g.json"
  echo '{"bench":"gemm","plan":"summa b=64 ndup=4 lookahead=0","gflops_median":4.5}' >>"$tmp/g.json"
  expect "plot sweep gemm plan token" "$PLOT" sweep "$tmp/g.json" --x ndup --y gflops_median -o "$tmp/sw3.png"
  expect "plot sweep gemm png" png_ok "$tmp/sw3.png"
  "$PLOT" bw "$tmp/nbc2.json" -o "$tmp/x.png" >/dev/null 2>&1; rc=$?
  expect "plot bw of nbc refused" test "$rc" -eq 1
  "$PLOT" bw "$tmp/missing.json" -o "$tmp/x.png" >/dev/null 2>&1; rc=$?
  expect "plot missing file" test "$rc" -eq 1
  # special files: never replaced as outputs, never opened as inputs; the input is not an output
  mknod "$tmp/plotdev" c 1 3; mkfifo "$tmp/plotfifo.json"
  "$PLOT" bw "$tmp/pp1.json" -o "$tmp/plotdev" >/dev/null 2>"$tmp/plot.err"; rc=$?
  expect "plot onto a device refused" test "$rc" -eq 1 -a -c "$tmp/plotdev"
  expect "plot onto a device: message" has "plotdev.*exists and is a character device" "$(cat "$tmp/plot.err")"
  timeout 20 "$PLOT" bw "$tmp/plotfifo.json" -o "$tmp/x.png" >/dev/null 2>"$tmp/plot.err"; rc=$?
  expect "plot from a FIFO refused" test "$rc" -eq 1 -a ! -e "$tmp/x.png"
  cp "$tmp/pp1.json" "$tmp/ppcopy.json"
  "$PLOT" bw "$tmp/ppcopy.json" -o "$tmp/ppcopy.json" >/dev/null 2>"$tmp/plot.err"; rc=$?
  expect "plot over its input refused" cmp -s "$tmp/pp1.json" "$tmp/ppcopy.json"
else
  skip=$((skip + 1))
  echo "SKIP: plotting: matplotlib is missing ($("$PLOT" check 2>&1 | tail -1))"
fi
"$PLOT" --help >/dev/null; rc=$?
expect "plot help" test "$rc" -eq 0

echo "test_bench: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
