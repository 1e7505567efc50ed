"""sparse_cases_test.sh's check of the case pe-test (tools/make-sparse-cases): its files read back (the
Matrix Market header and entries, the sidecars' block sizes, meta.json's counts and sha256) and compared
with tblite's own Gamma-point H and S of the same 2x1x1 supercell, computed here from geometry.xyz.
usage: sparse_cases_check.py CASE_DIR (under the tblite venv's python)"""
import hashlib, json, os, sys
import numpy as np
from tblite.interface import Calculator
d = sys.argv[1]
bad = []
def want(ok, what):
    if not ok:
        bad.append(what)
m = json.load(open(os.path.join(d, "meta.json")))
lines = open(os.path.join(d, "geometry.xyz")).read().splitlines()
na = int(lines[0])
lat = [float(x) for x in lines[1].split('"')[1].split()]
sym = [ln.split()[0] for ln in lines[2:2 + na]]
pos = np.array([[float(x) for x in ln.split()[1:4]] for ln in lines[2:2 + na]])
nf = [2 if s == "H" else 4 for s in sym]  # GFN1-xTB: H 1s 2s, C 2s 2p
n = sum(nf)
want(m["n"] == n == 288 and m["atoms"] == na == 108, f"n {m['n']}, atoms {m['atoms']}")
want(m["n_electrons"] == 6 * 36 and m["n_occ"] == 3 * 36, "electrons: 6 per CH2, n_occ half of them")
want(m["method"] == "GFN1-xTB" and m["supercell"] == [2, 1, 1] and m["drop_threshold"] == 1e-10, "method/cell")
mats = {}
for name in ("H", "S"):
    f = os.path.join(d, name + ".mtx")
    side = json.load(open(f + ".json"))
    want(side == {"rows": n, "cols": n, "block_sizes": nf}, f"{name} sidecar")
    want(hashlib.sha256(open(f, "rb").read()).hexdigest() == m["sha256"][name + ".mtx"], f"{name} sha256")
    txt = open(f).read().splitlines()
    want(txt[0] == "%%MatrixMarket matrix coordinate real symmetric", f"{name} header {txt[0]!r}")
    body = [ln for ln in txt[1:] if not ln.startswith("%")]
    rows, cols, nnz = map(int, body[0].split())
    want(rows == cols == n and nnz == len(body) - 1 == m["nonzeros"][name + "_lower"], f"{name} size line")
    e = np.array([ln.split() for ln in body[1:]], dtype=float)
    i, j = e[:, 0].astype(int) - 1, e[:, 1].astype(int) - 1
    want(np.all(i >= j) and len(set(zip(i, j))) == nnz, f"{name}: lower triangle, no repeats")
    want(np.all(np.abs(e[:, 2]) >= 1e-10), f"{name}: nothing below the drop threshold")
    A = np.zeros((n, n))
    A[i, j] = e[:, 2]
    A[j, i] = e[:, 2]
    mats[name] = A
bohr = 0.52917721067
calc = Calculator("GFN1-xTB", np.array([1 if s == "H" else 6 for s in sym]), pos / bohr,
                  lattice=np.diag([lat[0], lat[4], lat[8]]) / bohr, periodic=np.array([True] * 3))
calc.set("verbosity", 0)
calc.set("save-integrals", 1)
r = calc.singlepoint()
S = r.get("overlap-matrix")
sc = S @ r.get("orbital-coefficients")
H = (sc * r.get("orbital-energies")) @ sc.T
dh, ds = np.abs(mats["H"] - H).max(), np.abs(mats["S"] - S).max()
want(dh <= 1e-6 and ds <= 1e-10, f"files against tblite's 2x1x1: |dH| {dh:.3e}, |dS| {ds:.3e}")
want(abs(m["replication_check"]["max_abs_diff_H"]) <= 1e-6, "meta's replication check")
print("; ".join(bad) if bad else f"files ok; against tblite's 2x1x1 Gamma point: max |dH| {dh:.3e}, max |dS| {ds:.3e}")
sys.exit(1 if bad else 0)
