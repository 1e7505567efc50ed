"""sparse_cases_test.sh's check of the case pe-test (tools/make-sparse-cases): its files read back (the
Matrix Market header and entries, the sidecars' block sizes, meta.json's counts and sha256) and compared
with tblite's own Gamma-point H and S of the same 2x1x1 supercell, computed here from geometry.xyz.
Then the replication rule in 3D without tblite: a model matrix whose elements are a function of the
atoms' displacement, cut off at 3 A, on one conventional cell of the script's cubic ice (8 waters,
L = 6.35 A, every atom moved at random by up to 0.3 A per coordinate so that no symmetry hides a wrong
shift), summed over the images of the cell (its Gamma point), assembled by make-sparse-cases into a
2x3x2 supercell and compared with the same model summed over the images of the supercell itself. And
the ice cell's geometry: the ice rules hold (one H per O-O bond, two per O), their check fails on two
broken assignments, and every molecule has the stated R(OH) and HOH.
usage: sparse_cases_check.py CASE_DIR (under the tblite venv's python)"""
import hashlib
import importlib.machinery
import importlib.util
import itertools
import json
import os
import sys
import numpy as np
from tblite.interface import Calculator
d = sys.argv[1]
bad = []


def want(ok, what):
    if not ok:
        bad.append(what)


def model_gamma(pos, L, nf, rc):
    """sum over the images T of g(r_j + T - r_i) c(oi, oj), g a smooth function of the displacement that is
    zero beyond rc (< L/2), c a symmetric pattern inside a block."""
    atom = np.repeat(np.arange(len(nf)), nf)  # the atom of every orbital
    orb = np.concatenate([np.arange(k) for k in nf])  # its index inside the atom
    G = np.zeros((len(nf), len(nf)))
    for t in itertools.product((-1, 0, 1), repeat=3):
        dv = pos[None, :, :] + np.array(t) * L - pos[:, None, :]
        r = np.sqrt((dv ** 2).sum(axis=2))
        G += np.where(r < rc, np.exp(-r) * (1 + 0.3 * dv[:, :, 0] * dv[:, :, 1] / (1 + r * r)) * (rc - r) ** 2, 0.0)
    M = G[atom][:, atom] * (1.0 + 0.1 * orb[:, None] * orb[None, :])
    return M
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
msg = f"files ok; against tblite's 2x1x1 Gamma point: max |dH| {dh:.3e}, max |dS| {ds:.3e}"

# the rule in 3D, with a model instead of tblite
tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "make-sparse-cases")
loader = importlib.machinery.SourceFileLoader("make_sparse_cases", tool)
mod = importlib.util.module_from_spec(importlib.util.spec_from_loader("make_sparse_cases", loader))
loader.exec_module(mod)
numbers, pos, L = mod.cell_ice({"m": 1}, np)
pos = pos + np.random.default_rng(7).uniform(-0.3, 0.3, pos.shape)
nf = np.array([2 if z == 1 else 4 for z in numbers])
rc = 3.0
want(rc < L.min() / 2, "model cutoff below half the cell")
Mc = model_gamma(pos, L, nf, rc)
want(np.abs(Mc - Mc.T).max() < 1e-14, f"model symmetric ({np.abs(Mc - Mc.T).max():.1e})")
Mc = (Mc + Mc.T) / 2
shift, _ = mod.atom_pairs(pos, L, np)
off = np.concatenate([[0], np.cumsum(nf)])
keep = (mod.block_max(Mc, off, np) >= mod.DROP)
cell = {"H": Mc, "S": Mc, "shift": shift, "keep": keep, "off": off}
sup = (2, 3, 2)
Ha, _ = mod.assemble(cell, sup, np, dense=True)
N = np.array(sup)
cells = [np.array([a, b, c]) for c in range(N[2]) for b in range(N[1]) for a in range(N[0])]  # x fastest
pos_s = np.vstack([pos + a * L for a in cells])
Ms = model_gamma(pos_s, L * N, np.tile(nf, len(cells)), rc)
dm = float(np.abs(Ha - Ms).max())
big = np.abs(Ms) >= 2 * mod.DROP
want(dm < 1e-13 and np.all(Ha[big] != 0), f"3D model: assembled 2x3x2 against its Gamma sum: {dm:.3e}")
r, c, hv, sv, n = mod.assemble(cell, sup, np)
want(n == Ms.shape[0] and np.all(r >= c) and np.abs(hv - Ms[r, c]).max() < 1e-13, "3D model: the lower-triangle entries")
want(len(set(zip(r.tolist(), c.tolist()))) == len(r) and len(r) == np.count_nonzero(np.tril(Ha)),
     "3D model: every lower entry once")
msg += f"; 3D model (2x3x2 of 8 waters, n = {n}): max |difference| {dm:.3e}"

# the ice cell: the ice rules, and their check fails when they are broken
oxy, hdir = mod.ice_hydrogens(mod.ICE_A, 2, np)
Li = np.full(3, 2 * mod.ICE_A)
roo = mod.ice_rules(oxy, hdir, Li, np)
want(abs(roo - mod.ICE_A * np.sqrt(3) / 4) < 1e-12, f"ice: O-O {roo}")
# oxygen 0 (sublattice A) given B's directions (off its bonds), or (1,1,1) and (-1,1,-1): the second bond
# then has the H of both ends
for what, new in (("an H off the bonds", hdir[1]), ("an O-O bond with two H", np.array([hdir[0][0], -hdir[1][0]]))):
    bad_h = hdir.copy()
    bad_h[0] = new
    try:
        mod.ice_rules(oxy, bad_h, Li, np)
        want(False, f"ice_rules accepts {what}")
    except RuntimeError:
        pass
numbers, pos, L = mod.cell_ice({"m": 2}, np)
mol = pos.reshape(-1, 3, 3)
v1, v2 = mol[:, 1] - mol[:, 0], mol[:, 2] - mol[:, 0]
v1 -= L * np.round(v1 / L)
v2 -= L * np.round(v2 / L)
r1, r2 = np.linalg.norm(v1, axis=1), np.linalg.norm(v2, axis=1)
ang = np.degrees(np.arccos((v1 * v2).sum(axis=1) / (r1 * r2)))
want(len(numbers) == 3 * 64 and np.allclose(L, 2 * mod.ICE_A), "ice: 64 waters in 2 x 2 x 2 cells")
want(np.abs(np.concatenate([r1, r2]) - mod.ICE_ROH).max() < 1e-12 and np.abs(ang - mod.ICE_HOH).max() < 1e-9,
     "ice: R(OH) and HOH")
want(mod.min_distance(pos, L, np) > 0.97, "ice: no atoms closer than an O-H bond")
msg += f"; ice rules hold (O-O {roo:.4f} A) and their check catches two broken assignments"
print("; ".join(bad) if bad else msg)
sys.exit(1 if bad else 0)
