#!/usr/bin/env bash
# Every purification method and variant writes an exactly symmetric D: on
# every shipped case (data/*/fock.raw), canonical and mcweeny with each
# SymmSquareCube algorithm (alg3, alg4, alg5, alg6), sp2 and trs4 in double
# and mixed precision, each with -o and a checkpoint every iteration, on 1
# rank and on 8 (a 2 x 2 x 2 grid; see below). Each run must exit 0 and leave D, its
# sidecar ("symmetric": true) and the last checkpoint; D and the checkpoint
# must be bitwise symmetric, and D a density (idempotent, trace n_occ).
# usage: symmetric_results_test.sh OVL DATA_DIR MPIEXEC [MPIEXEC_FLAGS...]
# Every case runs on 1 rank; the case of `ovl purify`'s example, c40h42_sto3g
# (n = 242: 121 x 121 blocks), also on 8 (a launch of 8 oversubscribed ranks
# costs a second of CPU, so 8 ranks on every case would triple the test).
# OVL_TEST_QUICK=1 (the sanitizer build): every sixth variant of each case
# (in turn, so that each variant runs on one or two cases), and on 8 ranks
# canonical with alg5 only.
set -u
OVL=$1; DATA=$2; shift 2
MPIEXEC=("$@")
# numpy comes from Debian's python3-numpy (scripts/deps.sh): prefer that interpreter
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
RUN_TIMEOUT=120; SHOW=5
source "$(dirname "$0")/testlib.sh"
quick=${OVL_TEST_QUICK:-0}

variants=(canonical:alg3 canonical:alg4 canonical:alg5 canonical:alg6 mcweeny:alg3 mcweeny:alg4 mcweeny:alg5
          mcweeny:alg6 sp2:double sp2:mixed trs4:double trs4:mixed)
cases=("$DATA"/*/fock.raw)
[ -e "${cases[0]}" ] || { echo "no data/*/fock.raw under $DATA"; exit 1; }
k=0; runs=()
ci=0
for f in "${cases[@]}"; do
  c=$(basename "$(dirname "$f")"); ci=$((ci + 1))
  mu=$("$PY" -c "import json,sys;m=json.load(open(sys.argv[1]));print((m['homo']+m['lumo'])/2)" "$(dirname "$f")/meta.json")
  for v in "${variants[@]}"; do
    m=${v%%:*}; x=${v#*:}
    args=(purify --fock "$f" --method "$m" -q)
    case $m in
      canonical) args+=(--algo "$x") ;;
      mcweeny) args+=(--algo "$x" --mu "$mu") ;;
      *) args+=(--precision "$x") ;;
    esac
    k=$((k + 1)); nps=(1)
    [ "$c" = c40h42_sto3g ] && nps=(1 8)
    if [ "$quick" = 1 ]; then
      [ $(((k + ci) % 6)) = 0 ] || nps=() # every sixth variant of this case, in turn over the cases
      [ "$c" = c40h42_sto3g ] && [ "$v" = canonical:alg5 ] && nps=(1 8)
    fi
    for np in "${nps[@]}"; do
      d="$tmp/$c.$m.$x.np$np"; mkdir "$d"
      run "$np" "${args[@]}" -o "$d/D.raw" --checkpoint "$d/ck" --checkpoint-every 1
      expect "$c $v np=$np: exit 0" test "$rc" -eq 0
      expect "$c $v np=$np: D written" test -s "$d/D.raw"
      runs+=("$d")
    done
  done
done
# one interpreter checks every output: D bitwise symmetric with a symmetric
# sidecar, a density (n_occ from meta.json: tr D; mcweeny: an integer), and
# the checkpoint the state names bitwise symmetric too
if ! "$PY" - "$DATA" "${runs[@]}" >"$tmp/check" 2>&1 <<'PY'; then
import glob, json, os, sys
import numpy as np
data, dirs = sys.argv[1], sys.argv[2:]
bad = 0
def fail(d, what):
    global bad
    bad += 1
    print(f"FAIL: {os.path.basename(d)}: {what}")
def load(path):
    side = json.load(open(path + ".json"))
    n = side["rows"]
    a = np.fromfile(path, dtype="<f8")
    if a.size != n * n or {k: side.get(k) for k in ("rows", "cols", "symmetric")} != {"rows": n, "cols": n, "symmetric": True}:
        return None, side
    return a.reshape(n, n), side
for d in dirs:
    case, method = os.path.basename(d).split(".")[:2]
    if not os.path.exists(d + "/D.raw"):
        fail(d, "no D.raw")
        continue
    D, side = load(d + "/D.raw")
    if D is None:
        fail(d, f"sidecar {side} does not describe a symmetric n x n D.raw")
        continue
    asym = np.abs(D - D.T).max()
    if asym != 0.0:
        fail(d, f"D is not bitwise symmetric: max |D - D^T| = {asym:.3e}")
    nocc = json.load(open(f"{data}/{case}/meta.json"))["n_occ"]
    tr = np.trace(D)
    idem = np.linalg.norm(D @ D - D)
    if abs(tr - nocc) > 1e-6 or idem > 1e-8:
        fail(d, f"not the density: |tr D - n_occ| = {abs(tr - nocc):.2e}, ||D^2 - D||_F = {idem:.2e}")
    try:
        state = json.load(open(d + "/ck.state.json"))
        C, side = load(state["data"])
    except (OSError, ValueError, KeyError) as e:
        fail(d, f"no checkpoint: {e}")
        continue
    if C is None:
        fail(d, f"checkpoint sidecar {side} is not a symmetric n x n matrix")
    elif state["iteration"] < 1 or np.abs(C - C.T).max() != 0.0:
        fail(d, f"checkpoint of iteration {state['iteration']} is not bitwise symmetric")
print(f"{len(dirs)} outputs checked, {bad} failed")
sys.exit(1 if bad else 0)
PY
  fail=$((fail + 1))
else
  pass=$((pass + 1))
fi
cat "$tmp/check"
echo "symmetric results: ${#runs[@]} runs, pass=$pass fail=$fail"
[ "$fail" -eq 0 ]
