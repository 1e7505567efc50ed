#!/usr/bin/env bash
# End-to-end tests of the ovl command line: usage: cli_test.sh OVL MPIEXEC [MPIEXEC_FLAGS...]
# Each case runs under a timeout and checks the exit code and the output.
set -u
OVL=$1; shift
MPIEXEC=("$@")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

RUN_TIMEOUT=120; SHOW=20
. "$(dirname "$0")/testlib.sh"

# OVL_TEST_QUICK=1 (the sanitizer build, where test_summa and test_mm run every kernel and rank count):
# SUMMA on 1 and 4 ranks; the others on the rank count that gives them a real grid
for np in 1 2 3 4 8; do
  [ "${OVL_TEST_QUICK:-0}" = 1 ] && [ "$np" != 1 ] && [ "$np" != 4 ] && continue
  run "$np" gemm --algo summa -n 97 -b 8 --check -i 2 --beta 0.5
  expect "gemm np=$np" test "$rc" -eq 0
  expect "gemm np=$np PASS" has "PASS" "$out"
done
for algo in hsumma cannon 3d 2.5d auto; do
  for np in 1 4 8; do
    if [ "${OVL_TEST_QUICK:-0}" = 1 ]; then
      case $algo in 3d | 2.5d) [ "$np" = 8 ] || continue ;; *) [ "$np" = 4 ] || continue ;; esac
    fi
    bopt=(); case $algo in hsumma | auto) bopt=(-b 4) ;; esac # the panel width: SUMMA's and HSUMMA's only
    run "$np" gemm --algo "$algo" -n 61 --k 37 "${bopt[@]}" --check -i 1 --allow-idle --transb T --beta -1 --ndup 3
    expect "gemm $algo np=$np" test "$rc" -eq 0
    expect "gemm $algo np=$np PASS" has "PASS" "$out"
  done
done
run 4 gemm --algo summa --lookahead --backend own -n 77 -b 5 --check -i 1
expect "gemm summa lookahead own" has "PASS" "$out"
run 4 gemm --algo hsumma --groups 2x2 --outer 8 -b 4 -n 50 --check -i 1
expect "gemm hsumma 2x2 groups" has "PASS" "$out"
# arrival order inside HSUMMA's groups: the lanes' products (hsumma.lane_dgemm in the trace) instead of the
# whole sub-panel's (hsumma.dgemm); with G = P (no broadcast inside the groups) refused on every rank
for arr in off on; do
  run 4 gemm --algo hsumma --groups 2x1 --outer 8 -b 4 -d 3 -n 50 --check -i 1 --arrival-order "$arr" -t "$tmp/hsarr_$arr"
  expect "gemm hsumma arrival $arr PASS" has "PASS" "$out"
done
if grep -q ',hsumma.dgemm,' "$tmp/hsarr_off.csv"; then # tracing compiled in
  expect "hsumma arrival on: lane products" grep -q ',hsumma.lane_dgemm,' "$tmp/hsarr_on.csv"
  expect "hsumma arrival on: no whole sub-panel product" test "$(grep -c ',hsumma.dgemm,' "$tmp/hsarr_on.csv")" -eq 0
  expect "hsumma arrival off: no lane product" test "$(grep -c ',hsumma.lane_dgemm,' "$tmp/hsarr_off.csv")" -eq 0
fi
run 4 gemm --algo hsumma --groups 2x2 --arrival-order on -n 50 -b 4
expect "hsumma arrival with G = P refused" test "$rc" -ne 0
expect "hsumma arrival with G = P: why" has "acts on the broadcasts inside the groups" "$err"
run 4 gemm --algo hsumma --groups 3x1 -n 50
expect "gemm hsumma groups that do not tile" test "$rc" -eq 1
run 2 gemm --algo summa --repl 2
expect "repl needs 2.5d" test "$rc" -eq 2
run 2 gemm --algo hsumma --outer 2 -b 4
expect "outer < block refused" test "$rc" -eq 2
run 8 gemm --algo cannon -n 16
expect "cannon on 8 ranks needs idle" has "idle" "$err"

run 2 gemm -n 600 --m 301 --k 257 -b 32 --check --check-mode prob -i 1
expect "gemm rect prob" test "$rc" -eq 0
expect "gemm rect prob PASS" has "PASS" "$out"

run 2 gemm -n 64 --json --check -i 3 -x 0
expect "json rc" test "$rc" -eq 0
expect "json parses" python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["check"]=="PASS" and d["iterations"]==3 and d["t_min"]<=d["t_median"]<=d["t_max"]' "$out"
expect "json record type" python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert list(d)[:2]==["type","schema"] and d["type"]=="gemm" and d["schema"]==1 and "bench" not in d' "$out"
run 2 gemm -n 64 -j -i 1 -x 0
expect "json unchecked: relerr null" has '"check":"not checked","relerr":null' "$out"
# options from the environment, as PETSc's PETSC_OPTIONS: other commands' options skipped, the command line wins
OVL_OPTIONS="--ndup 2 --nocc 7" run 2 gemm -n 64 -j -i 1 -x 0
expect "OVL_OPTIONS sets the plan" has '"plan":"summa grid=1x2 b=256 ndup=2 ' "$out"
OVL_OPTIONS="--ndup 2" run 2 gemm -n 64 -j -i 1 -x 0 --ndup 3
expect "the command line wins over OVL_OPTIONS" has '"plan":"summa grid=1x2 b=256 ndup=3 ' "$out"
# the knob walk: a knob given in OVL_OPTIONS and on the command line gives the same printed plan
plan_of() { grep -o '"plan":"[^"]*"' <<<"$out" | sed 's/^"plan":"//; s/"$//'; }
for kv in "--ndup 3" "--block 64" "--grid 2x1" "--backend own --bcast-alg chain"; do
  OVL_OPTIONS="$kv" run 2 gemm -n 64 -j -i 1 -x 0; a=$(plan_of)
  # shellcheck disable=SC2086
  run 2 gemm -n 64 -j -i 1 -x 0 $kv; b=$(plan_of)
  expect "knob $kv: OVL_OPTIONS and the command line give one plan ($a)" test -n "$a" -a "$a" = "$b"
done
# a printed plan pasted back (--plan) gives the same plan; knobs given beside it win
run 2 gemm -n 64 -j -i 1 -x 0 --ndup 2 --block 32 --lookahead; a=$(plan_of)
run 2 gemm -n 64 -j -i 1 -x 0 --plan "$a"; b=$(plan_of)
expect "--plan reads back the printed plan ($a)" test -n "$a" -a "$a" = "$b"
run 2 gemm -n 64 -j -i 1 -x 0 --plan "$a" --ndup 4
expect "--plan: a knob beside it wins" has '"plan":"summa grid=1x2 b=32 ndup=4 lookahead=1 ' "$out"
run 2 gemm -n 64 -j -i 1 -x 0 --plan "summa nosuch=1"
expect "--plan: an unknown key is a usage error" test "$rc" -eq 2 -a -n "$(grep -- nosuch <<<"$err")"
OVL_OPTIONS="--ndup many" run 2 gemm -n 64
expect "a bad value in OVL_OPTIONS: exit 2" test "$rc" -eq 2
expect "a bad value in OVL_OPTIONS: named" has "OVL_OPTIONS" "$err"

run 3 gemm --bogus
expect "bad option exit 2" test "$rc" -eq 2
expect "bad option message once" test "$(count "unknown option '--bogus'" "$err")" -eq 1

run 2 gemm -b 0
expect "b=0 exit 2" test "$rc" -eq 2
expect "b=0 message" has "outside" "$err"

run 4 gemm --grid 3x3 -n 16
expect "grid too big exit 1" test "$rc" -eq 1
expect "grid too big message" has "needs 9 ranks" "$err"

run 3 gemm --grid 1x2 -n 16
expect "grid leaves idle ranks: refused" test "$rc" -eq 1
run 3 gemm --grid 1x2 -n 16 --allow-idle --check -i 1
expect "grid with idle ranks allowed" test "$rc" -eq 0

run 2 gemm --grid 2x2x2
expect "gemm grid 3D refused" test "$rc" -eq 2

run 1 gemm --help
expect "help exit 0" test "$rc" -eq 0
for o in --algo --block --grid --iterations --warmup --check --json --quiet --allow-idle; do
  expect "help lists $o" has "$o" "$out"
done

run 2 nosuchcommand
expect "unknown command exit 2" test "$rc" -eq 2

# bare `ovl`: a usage error (the usage on stderr); `ovl --help`: the usage, exit 0
run 1
expect "bare ovl exit 2" test "$rc" -eq 2
expect "bare ovl: usage on stderr" has "usage: ovl <command>" "$err"
expect "bare ovl: nothing on stdout" test -z "$out"
run 1 --help
expect "ovl --help exit 0" test "$rc" -eq 0
expect "ovl --help usage" has "usage: ovl <command>" "$out"
run 1 bench --help
expect "bench --help exit 0" test "$rc" -eq 0
for b in progress pingpong coll nbc ssc machine; do
  expect "bench --help lists $b" has "^  $b " "$out"
done

# one vocabulary: a short letter means one thing in every command; each default is shown once, and a
# placeholder default in words, never as [default: 0] / [default: -1]
for c in gemm model "bench pingpong" "bench coll" "bench nbc" "bench progress" "bench ssc" "bench machine"; do
  # shellcheck disable=SC2086
  run 1 $c --help
  expect "$c --help exit 0" test "$rc" -eq 0
  expect "$c --help: no doubled default" test "$(grep -c "default.*\[default:" <<<"$out")" -eq 0
  expect "$c --help: no placeholder default" \
    test "$(grep -cE "\[default: (-1|nan)\]|\(0(:0)?[:= ].*\[default: 0(:0)?\]" <<<"$out")" -eq 0
  bad=$(grep -oE "^  -[a-zA-Z], --[a-z0-9-]+" <<<"$out" | awk '
    { m["-a"]="--algo"; m["-b"]="--block"; m["-c"]="--check"; m["-d"]="--ndup"; m["-f"]="--full"; m["-g"]="--grid"
      m["-G"]="--groups"; m["-h"]="--help"; m["-i"]="--iterations"; m["-j"]="--json"; m["-m"]="--message-size"
      m["-M"]="--mem-limit"; m["-n"]="--size"; m["-o"]="--output"; m["-q"]="--quiet"; m["-s"]="--seed"
      m["-t"]="--trace"; m["-v"]="--verbose"; m["-W"]="--window"; m["-x"]="--warmup"
      l=$1; sub(",", "", l); if (m[l] != $2) print l " " $2 }')
  expect "$c: short letters of the vocabulary ($bad)" test -z "$bad"
done
# the long aliases kept for the old names
run 2 gemm --n 32 -i 1 -x 0 --no-blas-check -j
expect "gemm --n (old name of --size)" has '"n":32' "$out"
run 1 model --kernel summa --panel 64 --ranks 4 -n 256 -j
expect "model --panel (old name of --block)" has '"b":64' "$out"
expect "model record" has '^{"type":"model","schema":1,"config":"summa P=4 b=64' "$out"

run 1 version
expect "version" has "ovl " "$out"

# a file error carries the system's reason: the tune file written past a file size limit (ulimit -f, SIGXFSZ
# ignored: EFBIG); 1 KiB, a tune file of more than that kept lines. One singleton rank (PMIx keeps its data
# in memory, no shared-memory transport, MPICH's UCX on self only: MPI itself writes no file).
mkdir -p "$tmp/fsz"
for _ in $(seq 12); do echo '{"type":"note","text":"a line that a store keeps as it is, padding the tune file"}'; done   >"$tmp/fsz/t.json"
cp "$tmp/fsz/t.json" "$tmp/fsz.before"
err=$(PMIX_MCA_gds=hash OMPI_MCA_btl=self UCX_TLS=self timeout 120 bash -c 'ulimit -f 1; trap "" XFSZ; exec "$0" "$@"'   "$OVL" tune --family ssc -n 48 --top 1 -i 1 -x 0 -q -j -o "$tmp/fsz/t.json" 2>&1 >/dev/null)
rc=$?
out=""
expect "tune -o past a file size limit: exit 1" test "$rc" -eq 1
expect "tune -o past a file size limit: the reason" has "cannot write .*: File too large" "$err"
expect "tune -o past a file size limit: the old file kept, no temporary"   test "$(ls -A "$tmp/fsz")" = t.json -a "$(md5sum <"$tmp/fsz/t.json")" = "$(md5sum <"$tmp/fsz.before")"

# bytes of paths and of files reach a terminal escaped (ovl_escape), in results and JSON records as in messages:
# a directory named with a terminal escape and a byte that is not UTF-8, a machine file whose "name" holds an
# escape and a C1 control (JSON's \u escapes: a strict reader refuses raw control bytes and invalid UTF-8)
esc=$(printf 'e\033[31m\377'); ed="$tmp/$esc"; mkdir -p "$ed"
printf '%%%%MatrixMarket matrix array real symmetric\n2 2\n-1\n0\n1\n' >"$ed/f.mtx"
sed -E 's/"name": *"[^"]*"/"name": "m\\u001b[2J\\u009b"/' "$(dirname "$0")/../bench/machines/stampede2-table4.json" >"$ed/m.json"
clean() { # the output holds no control byte but newlines and tabs, only valid UTF-8, and JSON lines that parse
  python3 -c 'import json, re, sys
t = open(sys.argv[1], "rb").read().decode("utf-8")  # strict: raises on a byte that is not UTF-8
assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", t), "a control character"
[json.loads(l) for l in t.splitlines() if l.startswith("{")]' "$1" 2>/dev/null
}
escaped='e\\x1B\[31m\\xFF'
run 1 purify --fock "$ed/f.mtx" --nocc 1 -o "$ed/D.raw"
cat "$tmp/out" "$tmp/err" >"$tmp/all"
expect "escaped: purify -o in a named directory" test "$rc" -eq 0
expect "escaped: the result line names D's path" has "D written to .*/$escaped/D.raw" "$out"
expect "escaped: purify's output holds no raw byte" clean "$tmp/all"
run 1 purify --fock "$ed/f.mtx" --nocc 1 -j
cat "$tmp/out" "$tmp/err" >"$tmp/all"
expect "escaped: purify -j's record" has "\"fock\":\"[^\"]*/e\\\\u001b\\[31m" "$out"
expect "escaped: purify -j is valid JSON, no raw byte" clean "$tmp/all"
for j in "" -j; do
  run 1 tune --family ssc -n 48 --top 1 -i 1 -x 0 $j --machine "$ed/m.json" -o "$ed/t$j.json"
  cat "$tmp/out" "$tmp/err" >"$tmp/all"
  expect "escaped: tune $j with the machine file" test "$rc" -eq 0
  expect "escaped: tune $j prints no raw byte" clean "$tmp/all"
  expect "escaped: tune $j's tune file holds the name escaped" clean "$ed/t$j.json"
  [ -z "$j" ] && expect "escaped: tune names where it stored" has "stored in .*/$escaped/t.json" "$out"
done
run 1 model --machine "$ed/m.json" -n 256
cat "$tmp/out" "$tmp/err" >"$tmp/all"
expect "escaped: model names the machine file" has "machine .*/$escaped/m.json" "$out"
expect "escaped: model prints no raw byte" clean "$tmp/all"

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
