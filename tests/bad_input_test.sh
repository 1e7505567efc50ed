#!/usr/bin/env bash
# Bad input, one case each, on 1 rank and on several (2, 3 or 4): every case
# must end with a non-zero exit code (2: options, 1: everything else) within a
# timeout, with the same message on every rank, and leave no output file.
#
# "The same message on every rank": the CLI prints an agreed error once, on
# rank 0; with OVL_ERRORS_ALL_RANKS=1 every rank prints its own copy as
# "[rank R] ovl ...: error ...". The test counts one line per rank and checks
# that all lines are equal.
#
# Unreadable files: the tests run as root, and chmod 000 does not stop root,
# so "unreadable" is a directory, a FIFO (opening one for reading would block:
# the readers must refuse it without opening it) and a sidecar that is a
# directory.
#
# usage: bad_input_test.sh OVL DATA_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -u
OVL=$1; DATA=$2; shift 2
MPIEXEC=("$@")
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
export OVL_ERRORS_ALL_RANKS=1
pass=0; fail=0; cases=0; runs=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
T=$((60 * ${OVL_TEST_TIMEOUT_SCALE:-1}))

W=$DATA/water_ccpvdz/fock.raw # n = 24, n_occ = 5
n=24

# ---- the bad files --------------------------------------------------------
f=$tmp/f; mkdir -p "$f"
"$PY" - "$W" "$f" <<'PY'
import json, os, sys
import numpy as np
src, d = sys.argv[1], sys.argv[2]
F = np.fromfile(src, dtype="<f8").reshape(24, 24)
side = lambda p, r, c, s: json.dump({"rows": r, "cols": c, "symmetric": s}, open(p + ".json", "w"))
def raw(name, a, r=None, c=None, s=True):
    p = os.path.join(d, name)
    np.asarray(a, dtype="<f8").tofile(p)
    side(p, a.shape[0] if r is None else r, a.shape[1] if c is None else c, s)
    return p
def mtx(name, a, sym, extra=""):
    with open(os.path.join(d, name), "w") as o:
        o.write("%%%%MatrixMarket matrix array real %s\n%d %d\n" % ("symmetric" if sym else "general", *a.shape))
        for j in range(a.shape[1]):
            for i in range(j if sym else 0, a.shape[0]):
                o.write("%.17g\n" % a[i, j])
        o.write(extra)
raw("good.raw", F)
p = raw("trunc.raw", F); open(p, "r+b").truncate(1000)
p = raw("over.raw", F); open(p, "ab").write(b"\0" * 8)
raw("dims.raw", F, r=20, c=20)                    # sidecar 20 x 20, data 24 x 24
raw("rect.raw", F.reshape(48, 12), s=False)       # a consistent 48 x 12 matrix: not square
p = raw("symrect.raw", F.reshape(48, 12)); side(p, 48, 12, True)  # sidecar: symmetric and not square
p = raw("badjson.raw", F); open(p + ".json", "w").write('{"rows": 24, "cols": 24, "symmetric": yes}')
p = raw("nojson.raw", F); os.unlink(p + ".json")
A = F.copy(); A[3, 7] += 1e-3; raw("asym.raw", A, s=False)
A = F.copy(); A[5, 5] = np.nan; raw("nan.raw", A)
A = F.copy(); A[0, 23] = A[23, 0] = np.inf; raw("inf.raw", A)
mtx("good.mtx", F, True)
mtx("extra.mtx", F, True, "1.0\n")
A = F.copy(); A[3, 7] += 1e-3; mtx("asym.mtx", A, False)
A = F.copy(); A[2, 2] = np.inf; mtx("inf.mtx", A, True)
s = open(os.path.join(d, "good.mtx")).read(); open(os.path.join(d, "trunc.mtx"), "w").write(s[: len(s) // 2])
open(os.path.join(d, "symrect.mtx"), "w").write("%%MatrixMarket matrix array real symmetric\n3 4\n1\n")
# n_occ from a meta.json beside the file
for sub, meta in (("nometa", None), ("bigocc", {"n": 24, "n_occ": 1000})):
    os.makedirs(os.path.join(d, sub))
    raw(os.path.join(sub, "fock.raw"), F)
    if meta: json.dump(meta, open(os.path.join(d, sub, "meta.json"), "w"))
# another F of the same n, for a restart of a different problem
A = F.copy(); A[1, 2] += 1e-2; A[2, 1] += 1e-2; raw("other.raw", A)
# F byte-swapped (finite and symmetric, but not F), beside the meta.json of the real F
os.makedirs(os.path.join(d, "swapped"))
raw(os.path.join("swapped", "fock.raw"), F.byteswap())
open(os.path.join(d, "swapped", "meta.json"), "w").write(open(os.path.join(os.path.dirname(src), "meta.json")).read())
PY
# third round: messages and codes
printf '%%%%MatrixMarket matrix array integer symmetric\n2 2\n1\n1.5\n2\n' >"$f/int.mtx"
printf '{"alpha": 1e308, "beta": 1e308, "gamma": 1e308}\n' >"$f/huge.machine.json"
printf '{"type": "note"}\nnot a tune entry\n' >"$f/notes.tune"
mkdir -p "$f/negocc" "$f/hugeeig"; cp "$f/good.raw" "$f/good.raw.json" "$f/negocc/"; cp "$f/good.raw" "$f/good.raw.json" "$f/hugeeig/"
printf '{"n": 24, "n_occ": -5}\n' >"$f/negocc/meta.json"
printf '{"n": 24, "n_occ": 5, "eig_min": -1e400, "eig_max": 1}\n' >"$f/hugeeig/meta.json"
esc=$(printf 'e\033[31m\377')                   # a file name with a terminal escape and a byte that is not UTF-8
printf '%%%%MatrixMarket matrix array real general\n1 1\n\033[2J\377\n' >"$f/esc.mtx"
mkfifo "$f/fifo.raw"; cp "$f/good.raw.json" "$f/fifo.raw.json"
mkdir "$f/dir.raw"; cp "$f/good.raw.json" "$f/dir.raw.json"
cp "$f/good.raw" "$f/dirjson.raw"; mkdir "$f/dirjson.raw.json"
mkdir -p "$f/ck"
printf '{"iteration": oops}\n' >"$f/ck/bad.state.json"
# a real checkpoint of iteration 2 (the run itself stops at its cap of 3), and states derived from it
"$OVL" purify --fock "$f/good.raw" --nocc 5 --checkpoint "$f/ck/real" --checkpoint-every 2 --max-iter 3 -q >/dev/null 2>&1
[ -f "$f/ck/real.state.json" ] || { echo "FAIL: no checkpoint to restart from"; exit 1; }
# (the data of a state is its prefix's file of its iteration: a restart refuses another)
for v in trunc rect; do
  cp "$f/$v.raw" "$f/ck/$v.it2.raw"; cp "$f/$v.raw.json" "$f/ck/$v.it2.raw.json"
  sed -E "s|\"data\": \"[^\"]*\"|\"data\": \"$f/ck/$v.it2.raw\"|" "$f/ck/real.state.json" >"$f/ck/$v.state.json"
done
# the state of an older ovl: no checksum of F, no mu, no precision
printf '{"iteration": 2, "method": "canonical", "n": 24, "nocc": 5, "data": "%s"}\n' "$f/ck/real.it2.raw" >"$f/ck/old.state.json"
# special files: nodes made here (never /dev/null itself)
mknod "$f/null" c 1 3
mkfifo "$f/fifo.mtx" "$f/fifo.json" "$f/ck/fifo.state.json" "$f/outfifo.raw"
mkdir -p "$f/metafifo"; cp "$f/good.raw" "$f/good.raw.json" "$f/metafifo/"; mkfifo "$f/metafifo/meta.json"
mknod "$f/ck/dev.state.json" c 1 3; mknod "$f/trdev.json" c 1 3
good_sum=$(cat "$f/good.raw" "$f/good.raw.json" | md5sum)

# ---- the checks -----------------------------------------------------------
# case NAME RC PATTERN NPS CMD ARGS...: for each NP of NPS (e.g. "1 4"), run
# `ovl CMD ARGS` (purify: with --allow-idle on 2 and 3 ranks, and on a 2x2x1
# grid with alg6 on 4) and check the exit code, one identical message per
# rank matching PATTERN (grep -E), and an empty output directory.
# The runs wait mostly on process start-up and teardown, not on the CPU: up
# to OVL_BAD_INPUT_JOBS (4) run at once, each with its own output directory.
JOBS=${OVL_BAD_INPUT_JOBS:-4}
res=$tmp/res; mkdir -p "$res"
one_run() { # ID NAME WANT PAT NP CMD ARGS... (ARGS may name @OUT@, the run's output directory)
  local id=$1 name=$2 want=$3 pat=$4 np=$5 cmd=$6; shift 6
  local od=$tmp/out.$id; mkdir -p "$od"
  local args=() a
  for a in "$@"; do args+=("${a//@OUT@/$od}"); done
  local extra=()
  if [ "$cmd" = purify ] && [ -z "${PLAIN:-}" ]; then
    case $np in 2 | 3) extra=(--allow-idle) ;; 4) extra=(--algo alg6) ;; esac
  fi
  # one rank: a singleton (ovl started without mpiexec, as users do; Open
  # MPI's mpiexec takes seconds to end a one-rank job that exits non-zero)
  local launch=("${MPIEXEC[@]}" -n "$np")
  [ "$np" -eq 1 ] && [ -z "${VIA_MPIEXEC:-}" ] && launch=()
  local t0=$SECONDS
  timeout -k 5 "$T" "${launch[@]}" "$OVL" "$cmd" "${args[@]}" "${extra[@]}" >"$od.stdout" 2>"$od.stderr"
  local rc=$? dt=$((SECONDS - t0)) why=""
  local lines nl ndistinct
  lines=$(grep -E '^\[rank [0-9]+\] ovl' "$od.stderr" | sed -E 's/^\[rank [0-9]+\] //')
  nl=$(grep -c . <<<"$lines")
  ndistinct=$(sort -u <<<"$lines" | grep -c .)
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then why="timed out after ${T}s (a hang)"
  elif [ "$rc" -ne "$want" ]; then why="exit code $rc, expected $want"
  elif [ "$nl" -ne "$np" ]; then why="$nl error lines for $np ranks"
  elif [ "$ndistinct" -ne 1 ]; then why="ranks disagree"
  elif ! grep -qE -- "$pat" <<<"$lines"; then why="message does not match /$pat/"
  elif LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f-\xff]' "$od.stderr"; then why="raw control or non-ASCII bytes in the messages"
  elif [ "$want" -eq 2 ] && [ -s "$od.stdout" ]; then why="output before the usage error: $(head -c 200 "$od.stdout")"
  elif [ -n "$(ls -A "$od")" ]; then why="files left behind: $(ls -A "$od" | tr '\n' ' ')"
  fi
  {
    if [ -z "$why" ]; then echo PASS; else
      echo "FAIL: $name (np=$np): $why"; echo "--- stderr:"; grep -v '^--\|^ \|^$\|^[A-Z][a-z]' "$od.stderr" | tail -n 8
    fi
    [ -n "${OVL_BAD_INPUT_VERBOSE:-}" ] && printf '%-34s np=%d rc=%d %2ds  %s\n' "$name" "$np" "$rc" "$dt" "$(head -n 1 <<<"$lines")"
  } >"$res/$id"
}
# case_ NAME RC PATTERN NPS CMD ARGS...: for each NP of NPS (e.g. "1 4"), run
# `ovl CMD ARGS` (purify: with --allow-idle on 2 and 3 ranks, and on a 2x2x1
# grid with alg6 on 4) and check the exit code, one identical message per
# rank matching PATTERN (grep -E), and an empty output directory.
case_() {
  local name=$1 want=$2 pat=$3 nps=$4 cmd=$5; shift 5
  cases=$((cases + 1))
  # OVL_BAD_INPUT_STRIDE=K (the sanitizer build): every K-th case only
  [ -n "${OVL_BAD_INPUT_STRIDE:-}" ] && [ $((cases % OVL_BAD_INPUT_STRIDE)) -ne 0 ] && return 0
  # OVL_BAD_INPUT_LAST_NP=1 (the sanitizer build): only the largest rank count
  [ -n "${OVL_BAD_INPUT_LAST_NP:-}" ] && nps=${nps##* }
  for np in $nps; do
    runs=$((runs + 1))
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    one_run "$runs" "$name" "$want" "$pat" "$np" "$cmd" "$@" &
  done
}
o=(-o "@OUT@/D.raw")
P="1 4"; P3="1 3"

# files: missing, unreadable, truncated, oversized, malformed
VIA_MPIEXEC=1 case_ "missing file" 1 "sidecar of a raw matrix file: cannot open file .*none.raw.json.*No such file" "$P" purify --fock "$f/none.raw" --nocc 5 "${o[@]}"
case_ "missing sidecar"         1 "sidecar.*nojson.raw.json.*No such file" "$P3" purify --fock "$f/nojson.raw" --nocc 5 "${o[@]}"
case_ "missing .mtx"            1 "cannot open Matrix Market file .*none.mtx" "$P" purify --fock "$f/none.mtx" --nocc 5 "${o[@]}"
case_ "unreadable: a directory" 1 "dir.raw.*not a regular file" "$P" purify --fock "$f/dir.raw" --nocc 5 "${o[@]}"
case_ "unreadable: a FIFO"      1 "fifo.raw.*not a regular file" "$P3" purify --fock "$f/fifo.raw" --nocc 5 "${o[@]}"
case_ "unreadable: sidecar dir" 1 "dirjson.raw.json.*not a regular file" "$P" purify --fock "$f/dirjson.raw" --nocc 5 "${o[@]}"
case_ "truncated raw"           1 "trunc.raw.*1000 bytes.*4608 bytes \(truncated\)" "$P" purify --fock "$f/trunc.raw" --nocc 5 "${o[@]}"
case_ "oversized raw"           1 "over.raw.*4616 bytes.*4608 bytes \(oversized\)" "$P3" purify --fock "$f/over.raw" --nocc 5 "${o[@]}"
case_ "truncated .mtx"          1 "trunc.mtx. is truncated" "$P" purify --fock "$f/trunc.mtx" --nocc 5 "${o[@]}"
case_ "oversized .mtx"          1 "extra.mtx.*unexpected data after the last of 300 entries" "$P3" purify --fock "$f/extra.mtx" --nocc 5 "${o[@]}"
case_ "malformed sidecar"       1 "badjson.raw.json. is not valid JSON at line 1.*found .yes" "$P" purify --fock "$f/badjson.raw" --nocc 5 "${o[@]}"
# dimensions against the metadata
case_ "sidecar 20x20, data 24x24" 1 "dims.raw.*4608 bytes.*3200 bytes \(oversized\)" "$P" purify --fock "$f/dims.raw" --nocc 5 "${o[@]}"
case_ "sidecar: symmetric 48x12" 1 "symrect.raw.json.*symmetric 48 x 12 matrix, which is not square" "$P3" purify --fock "$f/symrect.raw" --nocc 5 "${o[@]}"
case_ "not square (48x12)"      1 "rect.raw. is not symmetric: it holds a 48 x 12 matrix" "$P" purify --fock "$f/rect.raw" --nocc 5 "${o[@]}"
case_ ".mtx: symmetric 3x4"     1 "symrect.mtx.*a symmetric matrix must be square, got 3 x 4" "$P" purify --fock "$f/symrect.mtx" --nocc 1 "${o[@]}"
# values
case_ "not symmetric (raw)"     1 "asym.raw.*symmetric" "$P" purify --fock "$f/asym.raw" --nocc 5 "${o[@]}"
case_ "not symmetric (.mtx)"    1 "asym.mtx.*symmetric" "$P3" purify --fock "$f/asym.mtx" --nocc 5 "${o[@]}"
case_ "NaN (raw)"               1 "OVL_ERR_NUMERIC.*nan.raw.*(NaN|nan|finite)" "$P" purify --fock "$f/nan.raw" --nocc 5 "${o[@]}"
case_ "Inf (raw)"               1 "OVL_ERR_NUMERIC.*inf.raw.*(Inf|inf|finite)" "$P3" purify --fock "$f/inf.raw" --nocc 5 "${o[@]}"
case_ "Inf (.mtx)"              1 "OVL_ERR_NUMERIC.*inf.mtx.*(Inf|inf|finite)" "$P" purify --fock "$f/inf.mtx" --nocc 5 "${o[@]}"
# n_occ
VIA_MPIEXEC=1 case_ "n_occ = n + 1" 1 "occupied orbitals must be in \[0, $n\], got 25" "$P" purify --fock "$f/good.raw" --nocc 25 "${o[@]}"
case_ "n_occ < 0"               2 "--nocc: value -1 is outside" "$P" purify --fock "$f/good.raw" --nocc -1 "${o[@]}"
case_ "n_occ not a number"      2 "--nocc: 'five' is not an integer" "$P3" purify --fock "$f/good.raw" --nocc five "${o[@]}"
case_ "n_occ from meta.json > n" 1 "occupied orbitals must be in \[0, $n\], got 1000" "$P" purify --fock "$f/bigocc/fock.raw" "${o[@]}"
case_ "no n_occ anywhere"       2 "--nocc K is required" "$P" purify --fock "$f/nometa/fock.raw" "${o[@]}"
# ranks against the grid
case_ "purify grid 2x2x2"       1 "a 2 x 2 x 2 grid needs 8 ranks but the communicator has" "1 2" purify --fock "$f/good.raw" --nocc 5 --grid 2x2x2 "${o[@]}"
PLAIN=1 case_ "purify: no cube"  1 "idle" "2 3" purify --fock "$f/good.raw" --nocc 5 "${o[@]}"
case_ "purify grid 1x2x1"       2 "--grid is SxSxC, got '1x2x1'" "$P" purify --fock "$f/good.raw" --nocc 5 --grid 1x2x1 "${o[@]}"
case_ "gemm grid 2x3"           1 "needs 6 ranks" "1 4" gemm -n 16 --grid 2x3
case_ "gemm grid 0x2"           2 "expected positive integers" "$P3" gemm -n 16 --grid 0x2
# grids and groups whose product does not fit in an int: an argument error, not a wrapped rank count
case_ "gemm grid 65536x65536"   2 "--grid 65536 x 65536: the product 4294967296 exceeds 2147483647" "$P" gemm -n 16 --algo summa --grid 65536x65536
case_ "gemm grid 2048^2 x 1024" 2 "--grid 2048 x 2048 x 1024: the product 4294967296 exceeds" "$P3" gemm -n 16 --algo 2.5d --grid 2048x2048x1024
case_ "gemm groups 20857x411849" 2 "--groups 20857 x 411849: the product 8589934593 exceeds" "$P" gemm -n 16 --algo hsumma --groups 20857x411849
case_ "purify grid 2048^3"      2 "--grid 2048 x 2048 x 2048: the product 8589934592 exceeds" "$P3" purify --fock "$f/good.raw" --nocc 5 --grid 2048x2048x2048 "${o[@]}"
# N_DUP
case_ "purify ndup 0"           2 "--ndup(: value 0 is outside \[1, 64\]| expects an integer in \[1, 64\].*got '0')" "$P" purify --fock "$f/good.raw" --nocc 5 --ndup 0 "${o[@]}"
case_ "purify ndup -3"          2 "--ndup(: value -3 is outside \[1, 64\]| expects an integer in \[1, 64\].*got '-3')" "$P3" purify --fock "$f/good.raw" --nocc 5 --ndup -3 "${o[@]}"
case_ "purify ndup 65"          2 "--ndup(: value 65 is outside \[1, 64\]| expects an integer in \[1, 64\].*got '65')" "$P" purify --fock "$f/good.raw" --nocc 5 --ndup 65 "${o[@]}"
case_ "gemm ndup 2^40"          2 "--ndup.*'?1099511627776'?" "$P" gemm -n 16 --ndup 1099511627776
# block sizes (b > n is valid: the panel is clamped to the matrix)
case_ "gemm b = 0"              2 "--block: value 0 is outside" "1 3" gemm -n 16 -b 0
case_ "gemm b = -1"             2 "--block: size '-1' is negative" "$P" gemm -n 16 -b -1
case_ "gemm outer < b"          2 "--outer 4 must be >= --block 8" "$P" gemm --algo hsumma -n 16 -b 8 --outer 4
# memory
case_ "gemm --mem-limit 1M"     1 "OVL_ERR_NOMEM.*needs .* MiB per rank, above the limit of 1.0 MiB" "$P" gemm -n 4096 --mem-limit 1M
case_ "gemm n = 256K"           1 "OVL_ERR_NOMEM.*needs .* MiB per rank, but the node has" "$P3" gemm -n 256K
case_ "gemm n = 1G"             1 "OVL_ERR_NOMEM.*1073741824 x 1073741824 matrix of doubles would take more than 2\^60 bytes" "$P" gemm -n 1G
case_ "gemm n = 2^41"           2 "-n/--size: value 2199023255552 is outside" "$P" gemm -n 2048G
# purify checks before it reads F: the limit, and a 100000 x 100000 F (a sparse file: only its header is read)
truncate -s 80000000000 "$f/huge.raw" && printf '{"rows": 100000, "cols": 100000, "symmetric": true}\n' >"$f/huge.raw.json"
case_ "purify --mem-limit 1K"   1 "OVL_ERR_NOMEM.*needs [0-9.]* KiB per rank, above the limit of 1.0 KiB" "$P" purify --fock "$f/good.raw" --nocc 5 --algo alg6 --mem-limit 1K "${o[@]}"
case_ "purify n = 100000"       1 "OVL_ERR_NOMEM.*needs .* MiB per rank, but the node has" "$P" purify --fock "$f/huge.raw" --nocc 5 --algo alg6 "${o[@]}"
# conflicting options
case_ "--mu with canonical"     2 "--mu applies to --method mcweeny only" "$P" purify --fock "$f/good.raw" --nocc 5 --mu 0.1 "${o[@]}"
case_ "mcweeny without --mu"    2 "--method mcweeny needs --mu" "$P3" purify --fock "$f/good.raw" --method mcweeny "${o[@]}"
case_ "--restart alone"         2 "need --checkpoint PREFIX" "$P" purify --fock "$f/good.raw" --nocc 5 --restart "${o[@]}"
case_ "--checkpoint alone"      2 "--checkpoint needs --checkpoint-every" "$P" purify --fock "$f/good.raw" --nocc 5 --checkpoint "@OUT@/ck" "${o[@]}"
case_ "--tol 0"                 2 "--tol must be in \[1e-14, 0.01\]" "$P3" purify --fock "$f/good.raw" --nocc 5 --tol 0 "${o[@]}"
case_ "gemm --groups with summa" 2 "--groups applies to --algo hsumma only" "$P" gemm -n 16 --groups 2x2
case_ "gemm --repl vs --grid"   2 "--repl 2 conflicts with --grid 2x2x1" "$P" gemm --algo 2.5d -n 16 --repl 2 --grid 2x2x1
case_ "flag with a value"       2 "option '--check=1' takes no value" "$P" gemm -n 16 --check=1
# checkpoints to restart from
case_ "restart: no checkpoint"  1 "cannot open checkpoint state .*none.state.json.: No such file" "$P" purify --fock "$f/good.raw" --nocc 5 --checkpoint "$f/ck/none" --restart "${o[@]}"
case_ "restart: malformed state" 1 "checkpoint state .*bad.state.json. is not valid JSON" "$P3" purify --fock "$f/good.raw" --nocc 5 --checkpoint "$f/ck/bad" --restart "${o[@]}"
case_ "restart: truncated data" 1 "trunc.it2.raw.*truncated" "$P" purify --fock "$f/good.raw" --nocc 5 --checkpoint "$f/ck/trunc" --restart "${o[@]}"
case_ "restart: wrong size"     1 "rect.it2.raw" "$P" purify --fock "$f/good.raw" --nocc 5 --checkpoint "$f/ck/rect" --restart "${o[@]}"
# outputs that cannot be written
case_ "output in a missing dir" 1 "cannot write .*nodir/D.raw" "$P" purify --fock "$f/good.raw" --nocc 5 -o "@OUT@/nodir/D.raw"
mkdir -p "$tmp/isdir"
case_ "output is a directory"   1 "cannot write .*isdir" "$P3" purify --fock "$f/good.raw" --nocc 5 -o "$tmp/isdir"
# ---- second round: special files, inputs that could block, memory, restarts, results ----
# outputs never replace what is not theirs: special files, directories, the input itself
case_ "-o a character device"   1 "cannot write output .*null.: it exists and is a character device" "$P" purify --fock "$f/good.raw" --nocc 5 -o "$f/null"
case_ "-o a FIFO"               1 "cannot write output .*outfifo.raw.: it exists and is a FIFO" "$P3" purify --fock "$f/good.raw" --nocc 5 -o "$f/outfifo.raw"
case_ "-o the input"            2 "the output .*good.raw. is the input" "$P" purify --fock "$f/good.raw" --nocc 5 -o "$f/good.raw"
case_ "-o the input's sidecar"  2 "the output .*good.raw.json. is the input" "$P" purify --fock "$f/good.raw" --nocc 5 -o "$f/good.raw.json"
case_ "checkpoint state a device" 1 "cannot write checkpoint state .*dev.state.json.: it exists and is a character device" "$P" purify --fock "$f/good.raw" --nocc 5 --checkpoint "$f/ck/dev" --checkpoint-every 2 "${o[@]}"
case_ "--trace onto a device"   1 "cannot write trace .*trdev.json.: it exists and is a character device" "$P" purify --fock "$f/good.raw" --nocc 5 -t "$f/trdev" "${o[@]}"
case_ "gemm --trace onto a device" 1 "cannot write trace .*trdev.json" "$P" gemm -n 16 -t "$f/trdev"
case_ "bench coll --timeline onto a device" 1 "cannot write timeline .*trdev.json.: it exists and is a character device" "2" bench coll -m 8:64 -i 1 -x 0 --timeline "$f/trdev.json"
case_ "bench machine -o a device" 1 "cannot write machine file .*null.: it exists and is a character device" "2" bench machine -o "$f/null"
case_ "tune -o a device"        1 "cannot write tune file .*null.: it exists and is a character device" "$P" tune --family ssc -n 64 -o "$f/null"
case_ "-o \"\""                  2 "option -o/--output: an empty value" "$P" purify --fock "$f/good.raw" --nocc 5 -o ""
# inputs that could block: every file read goes through one check
case_ "FIFO as --fock x.mtx"    1 "Matrix Market file .*fifo.mtx.: not a regular file \(a FIFO\)" "$P" purify --fock "$f/fifo.mtx" --nocc 5 "${o[@]}"
case_ "FIFO as meta.json"       1 "metadata file .*metafifo/meta.json.: not a regular file \(a FIFO\)" "$P" purify --fock "$f/metafifo/good.raw" "${o[@]}"
case_ "FIFO as the restart state" 1 "cannot read checkpoint state .*fifo.state.json.: not a regular file \\(a FIFO\\)" "$P" purify --fock "$f/good.raw" --nocc 5 --checkpoint "$f/ck/fifo" --restart "${o[@]}"
PLAIN=1 case_ "FIFO as --machine (auto)" 1 "machine file .*fifo.json.: not a regular file \(a FIFO\)" "$P" purify --fock "$f/good.raw" --nocc 5 --algo auto --machine "$f/fifo.json" "${o[@]}"
case_ "gemm: FIFO as --machine" 1 "machine file .*fifo.json.: not a regular file" "$P" gemm -n 16 --algo auto --machine "$f/fifo.json"
PLAIN=1 case_ "--tune-file missing (auto)" 1 "tune file .*none.tune.: No such file" "$P" purify --fock "$f/good.raw" --nocc 5 --algo auto --tune-file "$f/none.tune" "${o[@]}"
# trace locations are checked before computing, on every rank count and in every command
case_ "--trace into a missing dir" 1 "cannot write trace .*nodir/tr.json.: directory .*nodir.: No such file" "$P" purify --fock "$f/good.raw" --nocc 5 -t "@OUT@/nodir/tr" "${o[@]}"
case_ "gemm --trace into a missing dir" 1 "cannot write trace .*nodir/tr.json.: directory .*: No such file" "1 2 4" gemm -n 16 -t "@OUT@/nodir/tr"
# memory: every bench command estimates before allocating
case_ "bench coll alltoall 8G"  1 "OVL_ERR_NOMEM.*needs 32768.0 MiB per rank, but the node has" "4" bench coll --op alltoall -m 8G:8G -i 1 -x 0
case_ "bench coll bcast 16G"    1 "OVL_ERR_NOMEM.*needs 65536.0 MiB per rank" "2" bench coll --op bcast -m 16G:16G -i 1 -x 0
case_ "bench nbc --mem-limit"   1 "OVL_ERR_NOMEM.*above the limit of 1.0 MiB" "2" bench nbc -m 8M:8M -i 1 -x 0 --mem-limit 1M
case_ "bench pingpong --mem-limit" 1 "OVL_ERR_NOMEM.*above the limit of 1.0 MiB" "2" bench pingpong -m 8M:8M -i 1 --mem-limit 1M
case_ "bench progress --mem-limit" 1 "OVL_ERR_NOMEM.*above the limit of 1.0 MiB" "$P" bench progress -n 8M --mem-limit 1M
case_ "bench ssc n = 100000"    1 "OVL_ERR_NOMEM.*but the node has" "$P" bench ssc -n 100000 --allow-idle
case_ "bench machine --mem-limit" 1 "OVL_ERR_NOMEM.*above the limit of 1.0 MiB" "2" bench machine -o "@OUT@/m.json" --mem-limit 1M
# restarts continue the same problem or nothing
case_ "restart: other n_occ"    1 "different problem: .nocc. is 5 there but 7 in this run" "$P" purify --fock "$f/good.raw" --nocc 7 --checkpoint "$f/ck/real" --restart "${o[@]}"
case_ "restart: other F, same n" 1 "different problem: .f_checksum." "$P3" purify --fock "$f/other.raw" --nocc 5 --checkpoint "$f/ck/real" --restart "${o[@]}"
PLAIN=1 case_ "restart: other method"   1 "different problem: .method. is \"canonical\" there but \"sp2\"" "$P" purify --fock "$f/good.raw" --nocc 5 --method trs2 --checkpoint "$f/ck/real" --restart "${o[@]}"
case_ "restart: state lacks fields" 1 "old.state.json. lacks .f_checksum." "$P" purify --fock "$f/good.raw" --nocc 5 --checkpoint "$f/ck/old" --restart "${o[@]}"
# results are reported for what was computed
case_ "--tol inf"               2 "option --tol: 'inf' is not a finite number" "$P" purify --fock "$f/good.raw" --nocc 5 --tol inf "${o[@]}"
case_ "--tol 1e-20"             2 "--tol must be in \[1e-14, 0.01\]" "$P" purify --fock "$f/good.raw" --nocc 5 --tol 1e-20 "${o[@]}"
case_ "--nocc with McWeeny"     2 "--nocc does not apply to --method mcweeny" "$P" purify --fock "$f/good.raw" --nocc 5 --method mcweeny --mu 0 "${o[@]}"
case_ "--max-iter 1"            1 "did not converge: the iteration limit was reached \(--max-iter 1\) .*; raise --max-iter" "$P" purify --fock "$f/good.raw" --nocc 5 --max-iter 1 "${o[@]}"
case_ "byte-swapped F"          1 "swapped/fock.raw. does not match its meta.json.*wrong byte order" "$P" purify --fock "$f/swapped/fock.raw" "${o[@]}"
# ---- third round: messages and codes --------------------------------------
# bad arguments exit 2 before any output (one_run checks that stdout is empty for exit 2)
case_ "model --repl 3 on 8 ranks" 2 "--repl 3: 8 ranks are no 2.5D grid s x s x 3" "1" model --algo 2.5d --repl 3 --ranks 8 -n 256
case_ "model: no grid (alg5, 6 ranks)" 2 "no such configuration: .*6 ranks are not a cube" "1" model --algo alg5 --ranks 6
case_ "tune --band -1"          2 "band \(--band\) must be a finite number >= 0, got -1" "$P" tune --family ssc -n 64 --band -1
case_ "gemm --tol -5"           2 "--tol must be > 0, got -5" "$P" gemm -n 16 --check --tol -5
case_ "gemm --tol 0"            2 "--tol must be > 0, got 0" "1" gemm -n 16 --check --tol 0
case_ "-n ' -18446744073709551615'" 2 "size: ' -18446744073709551615' is not a size \(it must start with a digit\)" "$P" gemm -n ' -18446744073709551615'
case_ "-i ' 3'"                 2 "iterations: ' 3' is not an integer" "1" gemm -n 16 -i ' 3'
case_ "--max-iter 2^64 + 1"     2 "max-iter: '18446744073709551617' is out of range" "1" purify --fock "$f/good.raw" --nocc 5 --max-iter 18446744073709551617 "${o[@]}"
case_ "--alpha -1e400"          2 "alpha: '-1e400' is out of range" "1" gemm -n 16 --alpha -1e400
case_ "bench coll: unknown -a"  2 "'ring' is not a bcast algorithm" "1" bench coll -m 8:64 -i 1 -x 0 -a ring
# outputs of one run that are one file
case_ "-o T.json -t T"          2 "the output .*T.json. and the trace .*T.json. are one file" "$P" purify --fock "$f/good.raw" --nocc 5 -o "@OUT@/T.json" -t "@OUT@/T"
case_ "-o D.raw -t D.raw"       2 "the output sidecar .*D.raw.json. and the trace .*D.raw.json. are one file" "1" purify --fock "$f/good.raw" --nocc 5 -o "@OUT@/D.raw" -t "@OUT@/D.raw"
# options that do not apply are refused, in every command
case_ "gemm --lookahead with cannon" 2 "--lookahead applies to --algo summa and hsumma only, not cannon" "$P" gemm -n 16 --algo cannon --lookahead
case_ "gemm -b with 3d"         2 "--block applies to --algo summa and hsumma only, not 3d" "1" gemm -n 16 --algo 3d -b 4
case_ "gemm --tol without --check" 2 "--tol applies to --check only" "1" gemm -n 16 --tol 1e-3
case_ "purify --algo alg3 with sp2" 2 "--algo does not apply to --method sp2" "$P" purify --fock "$f/good.raw" --nocc 5 --method sp2 --algo alg3 "${o[@]}"
PLAIN=1 case_ "purify --arrival-order with alg4" 2 "--arrival-order applies to --algo summa, hsumma and alg5 only, not alg4" "1" purify --fock "$f/good.raw" --nocc 5 --algo alg4 --arrival-order on "${o[@]}"
case_ "model --lookahead with cannon" 2 "--lookahead applies to --algo summa and hsumma only, not cannon" "1" model --algo cannon --lookahead
case_ "model --max without a sweep" 2 "--max applies to --sweep ndup and ppn only" "1" model --max 4
case_ "bench ssc --arrival-order with alg6" 2 "--arrival-order applies to alg5 only" "1" bench ssc -n 48 -a alg6 --arrival-order on
case_ "bench progress --segment with binomial" 2 "--segment applies to --algo chain" "1" bench progress -n 64K -a binomial --segment 1K
case_ "tune --rounds without --exhaustive" 2 "--rounds applies to --exhaustive only" "$P" tune -n 48 --top 1 -i 1 -x 0 -r 2
case_ "gemm --bcast-alg with --backend mpi" 2 "--bcast-alg chain applies to --backend own only" "$P" gemm -n 16 --bcast-alg chain
case_ "gemm --bcast-alg with cannon" 2 "--bcast-alg applies to --algo summa, hsumma, 3d and 2.5d only, not cannon" "1" gemm -n 16 --algo cannon --backend own --bcast-alg hier
case_ "gemm --backend own with cannon" 2 "--backend own applies to --algo .* only, not cannon" "1" gemm -n 16 --algo cannon --backend own
case_ "bench coll --timeline-size without --timeline" 2 "--timeline-size applies to --timeline only" "1" bench coll -m 8:64 -i 1 -x 0 --timeline-size 64
case_ "bench nbc --num-tests with imb" 2 "--num-tests applies to --mode osu and eff \(or all\) only, not imb" "1" bench nbc -m 8:64 --mode imb --num-tests 3
case_ "bench nbc --compute-us with osu" 2 "--compute-us applies to --mode eff \(or all\) only, not osu" "1" bench nbc -m 8:64 --mode osu --compute-us 5
case_ "bench nbc --full with eff" 2 "--full applies to --mode osu \(or all\) only, not eff" "1" bench nbc -m 8:64 --mode eff -f
case_ "model --ndup with --sweep ndup" 2 "--ndup is what --sweep ndup varies" "1" model --ndup 3 --sweep ndup
case_ "model --sweep G with alg5" 2 "--sweep G varies HSUMMA's groups: --algo alg5 has none" "1" model --algo alg5 --sweep G
case_ "model --sweep c with summa" 2 "--sweep c varies the replication of 2.5d, alg6 and bs2.5d: --algo summa" "1" model --algo summa --sweep c
# bytes of arguments and files are escaped before they reach a terminal
case_ "an escape in an option"  2 "unknown option '--e\\\\x1B\[31m\\\\xFF'" "1" gemm "--$esc"
case_ "an escape in a file name" 1 "e\\\\x1B\[31m\\\\xFFnone.raw.*No such file" "$P" purify --fock "$f/${esc}none.raw" --nocc 5 "${o[@]}"
case_ "an escape in a file"     1 "esc.mtx. line 3: .\\\\x1B\[2J\\\\xFF. is not a number" "1" purify --fock "$f/esc.mtx" --nocc 1 "${o[@]}"
# the values of files: in range, of the declared type
case_ ".mtx integer holding 1.5" 1 "int.mtx. line 4: '1.5' is not an integer" "$P" purify --fock "$f/int.mtx" --nocc 1 "${o[@]}"
case_ "machine file of 1e308"   1 "huge.machine.json.: .alpha. must be in \[0, 1\] s, got 1e\+308" "1" model --machine "$f/huge.machine.json"
PLAIN=1 case_ "--tune-file without an entry" 1 "tune file .*notes.tune. holds no tune entry" "$P" purify --fock "$f/good.raw" --nocc 5 --algo auto --tune-file "$f/notes.tune" "${o[@]}"
case_ "meta.json n_occ -5"      1 "meta.json.: .n_occ. must be an integer >= 0, got -5" "$P" purify --fock "$f/negocc/good.raw" "${o[@]}"
case_ "meta.json eig_min -1e400" 1 "eig_min. must be a finite number, got a number out of range" "1" purify --fock "$f/hugeeig/good.raw" "${o[@]}"
wait
for r in "$res"/*; do
  if [ "$(head -n 1 "$r")" = PASS ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  grep -v '^PASS$' "$r"
done
[ -z "$(ls -A "$tmp/isdir")" ] && [ -z "$(ls -d "$tmp"/isdir.* 2>/dev/null)" ] || { fail=$((fail + 1)); echo "FAIL: files left beside the output directory"; }
# the special files are what they were, and nothing was written beside them or over the input
[ -c "$f/null" ] && [ -p "$f/outfifo.raw" ] && [ -c "$f/ck/dev.state.json" ] && [ -c "$f/trdev.json" ] || { fail=$((fail + 1)); echo "FAIL: a special file was replaced"; }
[ -z "$(ls -d "$f"/null?* "$f"/outfifo.raw?* "$f"/trdev.csv "$f"/ck/dev.* 2>/dev/null | grep -v 'dev.state.json$')" ] || { fail=$((fail + 1)); echo "FAIL: files left beside the special files: $(ls -d "$f"/null?* "$f"/outfifo.raw?* "$f"/ck/dev.* 2>/dev/null | tr '\n' ' ')"; }
[ "$(cat "$f/good.raw" "$f/good.raw.json" | md5sum)" = "$good_sum" ] || { fail=$((fail + 1)); echo "FAIL: the input was replaced"; }

echo "bad input: $cases cases${OVL_BAD_INPUT_STRIDE:+ (every ${OVL_BAD_INPUT_STRIDE}th run)}, $runs runs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
