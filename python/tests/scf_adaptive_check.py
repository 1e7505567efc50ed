"""ovl.scf's adaptive SCF against PySCF's own RHF (ctest python_scf_adaptive, run_ctest.sh scf-adaptive).

Water in cc-pVDZ (data/water_ccpvdz's geometry; another case of data/ with its basis:
``scf_adaptive_check.py h2o8_ccpvdz``), at PySCF's default conv_tol (1e-9) and a tight one
(1e-11), on the ranks of MPI.COMM_WORLD: the adaptive SCF (ovl.scf.adaptive_scf) must
converge to PySCF's energy within 1e-9 Eh, in fewer matrix products than purification at
tol 1e-12 every cycle (cold SP2, ovl.pyscf.purify_scf), with float32 products in its early
cycles and float64 to the rounding floor in its last two. Exit 0 or 1 (a line per failure).
"""
import os
import sys

from mpi4py import MPI
from pyscf import gto, scf

import ovl.pyscf
import ovl.scf

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def molecule(case):
    import json
    d = os.path.join(SRC, "data", case)
    with open(os.path.join(d, "geometry.xyz")) as f:
        lines = f.read().splitlines()
    with open(os.path.join(d, "meta.json")) as f:
        basis = json.load(f)["basis"]
    atoms = [ln.split() for ln in lines[2:2 + int(lines[0])]]
    return gto.M(atom=[[a[0], tuple(float(x) for x in a[1:4])] for a in atoms], basis=basis, verbose=0)


def main():
    comm = MPI.COMM_WORLD
    fails = []
    with ovl.pyscf.ranks(comm) as root:
        if not root:
            return 0
        mol = molecule(sys.argv[1] if len(sys.argv) > 1 else "water_ccpvdz")
        for conv_tol in (1e-9, 1e-11):
            ref = scf.RHF(mol)
            ref.conv_tol = conv_tol
            e_ref = ref.kernel()
            cold = ovl.pyscf.purify_scf(scf.RHF(mol), comm=comm, method="sp2", tol=1e-12)
            cold.conv_tol = conv_tol
            e_cold = cold.kernel()
            mf = scf.RHF(mol)
            mf.conv_tol = conv_tol
            ovl.scf.adaptive_scf(mf, comm=comm)
            e = mf.kernel()
            p_cold, p = ovl.scf.total_products(cold), ovl.scf.total_products(mf)
            plan = " ".join("%s/%s/%d" % ("full" if s["tol"] == 0 else "%.0e" % s["tol"], s["precision"][0],
                                          s["products"]) for s in mf.ovl_stats)
            print(f"conv_tol {conv_tol:g}: E_pyscf {e_ref:.12f}, E_adaptive - E_pyscf {e - e_ref:.1e}, "
                  f"E_cold - E_pyscf {e_cold - e_ref:.1e}; products adaptive {p}, cold {p_cold}; "
                  f"cycles (tol/precision/products): {plan}")
            if not (ref.converged and mf.converged and cold.converged):
                fails.append(f"conv_tol {conv_tol:g}: an SCF did not converge")
            if abs(e - e_ref) > 1e-9:
                fails.append(f"conv_tol {conv_tol:g}: |E_adaptive - E_pyscf| = {abs(e - e_ref):.2e} > 1e-9")
            if not p < p_cold:
                fails.append(f"conv_tol {conv_tol:g}: adaptive products {p} not below cold SP2's {p_cold}")
            st = mf.ovl_stats
            if st[0]["precision"] != "mixed":
                fails.append(f"conv_tol {conv_tol:g}: the first cycle ran in {st[0]['precision']}, not mixed")
            if any(s["tol"] != 0 or s["precision"] != "double" for s in st[-2:]):
                fails.append(f"conv_tol {conv_tol:g}: the last two cycles did not run float64 to the floor")
            if not any(s.get("homo_est") is not None for s in st):
                fails.append(f"conv_tol {conv_tol:g}: no cycle used gap estimates (SP2-ACC)")
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
