#!/usr/bin/env bash
# tools/make-tb end to end on two tiny tight-binding cases (tblite GFN2-xTB): an alkane C25H52 and a
# seeded water droplet (H2O)_25, n = 152 and 150. Each is made, its meta.json checked (n, n_occ from
# the valence electrons, HOMO < LUMO, gap = LUMO - HOMO, the SCC Hamiltonian, provenance) and its
# files (sidecars, sizes, exact symmetry, D^2 = D, tr D = n_occ), then `ovl purify --check` must
# match LAPACK's density to 1e-8 (relative). The water droplet is made twice: the same bytes.
# Skipped (77) when tblite is not installed: scripts/deps-tb.sh (a venv, about 20 s here).
# usage: tb_case_test.sh OVL SOURCE_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -u
OVL=$1; SRC=$2; shift 2
MPIEXEC=("$@")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
RUN_TIMEOUT=120; SHOW=15
source "$(dirname "$0")/testlib.sh"
tbpy=${OVL_TB_PYTHON:-$HOME/.cache/ovl/venv-tb/bin/python}
if ! [ -x "$tbpy" ] || ! "$tbpy" -c "import tblite.interface, numpy" 2>/dev/null; then
  echo "SKIP: tblite is not installed (no $tbpy with tblite): scripts/deps-tb.sh installs it (~20 s)"
  exit 77
fi
export OVL_TB_PYTHON=$tbpy
for spec in alkane:152:76 water:150:100; do
  sys=${spec%%:*}; rest=${spec#*:}; n=${rest%%:*}; nocc=${rest#*:}
  d="$tmp/$sys"
  rc=0; out=$(python3 "$SRC/tools/make-tb" --system "$sys" --n 150 -o "$d" 2>&1) || rc=$?; err=""
  expect "$sys: make-tb exit 0" test "$rc" -eq 0
  [ "$rc" -eq 0 ] || continue
  rc=0; out=$("$tbpy" - "$d" "$n" "$nocc" "$sys" 2>&1 <<'PY') || rc=$?
import json, math, os, sys
import numpy as np
d, n, nocc, system = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
m = json.load(open(os.path.join(d, "meta.json")))
bad = []
def want(ok, what):
    if not ok:
        bad.append(what)
want(m["n"] == n and m["n_occ"] == nocc, f"n, n_occ = {m['n']}, {m['n_occ']}, expected {n}, {nocc}")
want(m["n_electrons"] == 2 * nocc, "n_electrons != 2 n_occ")
want(m["homo"] < m["lumo"] and abs(m["gap"] - (m["lumo"] - m["homo"])) < 1e-14 and m["gap"] > 0.05, "gap")
want(m["eig_min"] < m["homo"] and m["lumo"] < m["eig_max"], "eig_min < homo < lumo < eig_max")
want(m["method"] == "GFN2-xTB" and m["system"] == system and m["tblite_version"], "method/system/version")
want("SCC" in m["hamiltonian"] and m["dref"] is True and m["orthogonalization"] == "lowdin", "hamiltonian, dref")
want(m["command"].startswith("tools/make-tb") and m["threads"] == 1, "command, threads")
want(math.isfinite(m["energy_hf"]) and m["energy_hf"] < 0, "energy")
for f in ("fock.raw", "dref.raw"):
    side = json.load(open(os.path.join(d, f + ".json")))
    want(side == {"rows": n, "cols": n, "symmetric": True}, f"{f} sidecar {side}")
    want(os.path.getsize(os.path.join(d, f)) == 8 * n * n, f"{f} size")
F = np.fromfile(os.path.join(d, "fock.raw"), dtype="<f8").reshape(n, n)
D = np.fromfile(os.path.join(d, "dref.raw"), dtype="<f8").reshape(n, n)
want(np.array_equal(F, F.T) and np.array_equal(D, D.T), "F, D exactly symmetric")
want(np.linalg.norm(D @ D - D) < 1e-10 and abs(np.trace(D) - nocc) < 1e-10, "D^2 = D, tr D = n_occ")
w = np.linalg.eigvalsh(F)
want(abs(w[nocc - 1] - m["homo"]) < 1e-10 and abs(w[nocc] - m["lumo"]) < 1e-10, "homo/lumo against eigvalsh(F)")
want(abs(np.sum(D * F) - m["e_trace"]) < 1e-9, "e_trace")
print("; ".join(bad) if bad else "meta and files ok")
sys.exit(1 if bad else 0)
PY
  expect "$sys: meta.json and files" test "$rc" -eq 0
  run 1 purify --fock "$d/fock.raw" --nocc "$nocc" --check --json -q -o "$d/D.raw"
  expect "$sys: ovl purify --check exit 0" test "$rc" -eq 0
  rel=$(python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print(j["check"], j["ref_relerr"])' <<<"$out" 2>/dev/null)
  expect "$sys: purify --check PASS, density against dsyevd <= 1e-8 (got ${rel:-none})" \
    python3 -c 'import sys; x=float(sys.argv[2]); sys.exit(0 if sys.argv[1] == "PASS" and 0 <= x <= 1e-8 else 1)' ${rel:-none nan}
  # and against the case's own dref.raw (numpy eigh)
  expect "$sys: purified D against dref.raw <= 1e-8" "$tbpy" -c '
import sys, numpy as np
n = int(sys.argv[2])
D = np.fromfile(sys.argv[1] + "/D.raw", dtype="<f8").reshape(n, n)
R = np.fromfile(sys.argv[1] + "/dref.raw", dtype="<f8").reshape(n, n)
sys.exit(0 if np.linalg.norm(D - R) <= 1e-8 * np.linalg.norm(R) else 1)' "$d" "$n"
done
# bitwise reproducible: the droplet again, the same bytes
rc=0; out=$(python3 "$SRC/tools/make-tb" --system water --n 150 -o "$tmp/water2" 2>&1) || rc=$?
expect "water again: exit 0" test "$rc" -eq 0
expect "water again: the same fock.raw" cmp -s "$tmp/water/fock.raw" "$tmp/water2/fock.raw"
expect "water again: the same dref.raw" cmp -s "$tmp/water/dref.raw" "$tmp/water2/dref.raw"
echo "tb_case_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
