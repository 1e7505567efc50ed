#!/usr/bin/env bash
# tools/make-sparse-cases end to end on its tiny test case (pe-test: periodic polyethylene, a cell of
# 9 C2H4 units, GFN1-xTB, replicated 2x1x1, n = 288): the case is made (the cell by tblite, with the
# script's own replication check), then its files are read back here (Matrix Market header and
# entries, the sidecars' block sizes, meta.json's counts and sha256) and compared with tblite's own
# Gamma-point H and S of the same 2x1x1 supercell, computed here from geometry.xyz:
# max |difference| <= 1e-6 (H) and 1e-10 (S, the drop threshold); and the rule in 3D on a model matrix
# (sparse_cases_check.py: a 2x3x2 supercell of a jittered ice cell, no tblite), and the ice cell's
# ice rules. --check must pass, and fail after one byte of H.mtx is changed.
# Skipped (77) when tblite is not installed: scripts/deps-tb.sh (a venv, about 20 s here).
# usage: sparse_cases_test.sh SOURCE_DIR
set -u
SRC=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
source "$(dirname "$0")/testlib.sh"
tbpy=${OVL_TB_PYTHON:-$HOME/.cache/ovl/venv-tb/bin/python}
if ! [ -x "$tbpy" ] || ! "$tbpy" -c "import tblite.interface, numpy" 2>/dev/null; then
  echo "SKIP: tblite is not installed (no $tbpy with tblite): scripts/deps-tb.sh installs it (~20 s)"
  exit 77
fi
export OVL_TB_PYTHON=$tbpy OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
rc=0; out=$(python3 "$SRC/tools/make-sparse-cases" --root "$tmp" pe-test 2>&1) || rc=$?; err=""
expect "make-sparse-cases pe-test: exit 0" test "$rc" -eq 0
rc=0; out=$("$tbpy" "$(dirname "$0")/sparse_cases_check.py" "$tmp/pe-test" 2>&1) || rc=$?
echo "$out"
expect "files read back, against tblite's own 2x1x1 H and S" test "$rc" -eq 0
expect "--check passes" python3 "$SRC/tools/make-sparse-cases" --root "$tmp" --check
# the last digit of the first entry changed (+1 mod 10)
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); k = b.index(b"\n", b.index(b"\n", b.index(b"\n") + 1) + 1)
k = b.index(b"\n", k + 1) - 1; b[k] = ord("0") + (b[k] - ord("0") + 1) % 10; open(sys.argv[1], "wb").write(b)' "$tmp/pe-test/H.mtx"
rc=0; out=$(python3 "$SRC/tools/make-sparse-cases" --root "$tmp" --check 2>&1) || rc=$?
expect "--check fails after a changed byte" test "$rc" -ne 0
expect "--check names H.mtx" has "H.mtx" "$out"
echo "sparse_cases_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
