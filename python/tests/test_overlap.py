"""ovl.purify with an overlap matrix S, the chemical potential and the energy-weighted density W (through
ovl_pdpurify), the plan's family names, and the PySCF hook (ovl.pyscf); under mpiexec (1 and 4 ranks)."""
import json
import os

import numpy as np
import pytest
import scipy.linalg

import ovl
from conftest import ROOT, read_case


def read_raw(case, name):
    d = os.path.join(ROOT, "data", case)
    with open(os.path.join(d, name + ".raw.json")) as f:
        side = json.load(f)
    return np.fromfile(os.path.join(d, name + ".raw"), dtype="<f8").reshape(side["rows"], side["cols"])


def split(n, size, kind):
    counts = [n // size + (r < n % size) for r in range(size)] if kind == "even" else \
        [n - 3 * (size - 1)] + [0] * (size > 1) + [3] * max(0, size - 2) + ([3] if size > 1 else [])
    counts = counts[:size]
    counts[0] += n - sum(counts)
    return np.concatenate([[0], np.cumsum(counts)]).astype(int)


@pytest.mark.parametrize("layout", ["root", "rows-even", "rows-uneven"])
@pytest.mark.parametrize("method", ["sp2", "trs4", "canonical"])
def test_overlap_matches_generalized_eigh(comm, layout, method):
    """F C = S C eps in the AO basis of water: D, W, mu and tr(D F) as scipy.linalg.eigh(F, S) gives them."""
    F, S, nocc = read_raw("water_ccpvdz", "fock_ao"), read_raw("water_ccpvdz", "overlap"), read_case("water_ccpvdz")[1]
    e, C = scipy.linalg.eigh(F, S)
    Co = C[:, :nocc]
    Dref, Wref = Co @ Co.T, Co @ np.diag(e[:nocc]) @ Co.T
    if layout == "root":
        D, info = ovl.purify(F if comm.rank == 0 else None, nocc, comm=comm, S=S if comm.rank == 0 else None, W=True,
                             method=method)
        lo, hi = 0, F.shape[0]
    else:
        off = split(F.shape[0], comm.size, layout.split("-")[1])
        lo, hi = off[comm.rank], off[comm.rank + 1]
        D, info = ovl.purify(F[lo:hi], nocc, comm=comm, S=S[lo:hi], W=True, method=method, layout="rows")
    assert D.shape == (hi - lo, F.shape[0])
    assert np.abs(D - Dref[lo:hi]).max(initial=0.0) <= 1e-8, info
    assert np.abs(info["W"] - Wref[lo:hi]).max(initial=0.0) <= 1e-8, info
    assert abs(info["mu"] - 0.5 * (e[nocc - 1] + e[nocc])) <= 1e-8 * abs(e).max()
    assert e[nocc - 1] - 1e-8 <= info["homo"] and info["lumo"] <= e[nocc] + 1e-8
    assert abs(info["energy"] - e[:nocc].sum()) <= 1e-10 * abs(e[:nocc].sum())
    assert info["plan"].startswith("sq " if method != "canonical" else "alg"), info["plan"]


def test_mu_orthogonal(comm):
    """mu=True without S: the chemical potential of F in an orthonormal basis; W = D F D."""
    F, nocc = read_case("c10h22_631g")
    D, info = ovl.purify(F if comm.rank == 0 else None, nocc, comm=comm, mu=True, W=True)
    e = np.linalg.eigvalsh(F)
    assert abs(info["mu"] - 0.5 * (e[nocc - 1] + e[nocc])) <= 1e-8 * abs(e).max()
    assert np.abs(info["W"] - D @ F @ D).max() <= 1e-9 * abs(e).max()


@pytest.mark.parametrize("method,algo,family", [("sp2", "auto", "sq"), ("trs4", "sq", "sq"), ("sp2acc", "auto", "sq"),
                                                ("canonical", "auto", "alg")])
def test_plan_names_the_family_that_ran(comm, method, algo, family):
    """info["plan"] names the kernel that ran: the symmetric square (sq) for SP2 and TRS4, an SSC algorithm for
    canonical; "sq" is an algorithm the SP2 family takes."""
    F, nocc = read_case("water_ccpvdz")
    D, info = ovl.purify(F if comm.rank == 0 else None, nocc, comm=comm, method=method, algo=algo)
    assert info["plan"].startswith(family), info["plan"]


def test_pyscf_hook(comm):
    """ovl.pyscf.purify_scf on PySCF's RHF (water, STO-3G): the energy of PySCF's own RHF to 1e-8 Eh."""
    pyscf = pytest.importorskip("pyscf")
    import ovl.pyscf
    from pyscf import gto, scf
    with ovl.pyscf.ranks(comm) as root:
        if root:
            mol = gto.M(atom="O 0 0 0.117; H 0 0.757 -0.467; H 0 -0.757 -0.467", basis="sto-3g", verbose=0)
            mf = ovl.pyscf.purify_scf(scf.RHF(mol), comm=comm, method="trs4")
            mf.conv_tol = 1e-11
            e = mf.kernel()
            ref = scf.RHF(mol)
            ref.conv_tol = 1e-11
            e_ref = ref.kernel()
            assert mf.converged and ref.converged
            assert len(mf.ovl_stats) >= mf.cycles
            assert abs(e - e_ref) <= 1e-8, (e, e_ref, pyscf.__version__)
            assert abs(mf.mo_occ.sum() - mol.nelectron) == 0


@pytest.mark.parametrize("sparse,block", [(0.0, 16), (1e-7, 5)])
def test_sparse_route(comm, sparse, block):
    """sparse=EPS: the block-sparse route (S^(-1/2), filtered products) gives the generalized eigenproblem's D
    and W, exactly at 0 and within 100 EPS otherwise; refused for canonical."""
    F, S, nocc = read_raw("c10h22_631g", "fock_ao"), read_raw("c10h22_631g", "overlap"), read_case("c10h22_631g")[1]
    e, C = scipy.linalg.eigh(F, S)
    Co = C[:, :nocc]
    Dref, Wref = Co @ Co.T, Co @ np.diag(e[:nocc]) @ Co.T
    root = comm.rank == 0
    D, info = ovl.purify(F if root else None, nocc, comm=comm, S=S if root else None, W=True, method="sp2",
                         sparse=sparse, sparse_block=block)
    tol = max(1e-9, 100 * sparse)
    assert np.linalg.norm(D - Dref) <= tol * np.linalg.norm(Dref), info
    assert np.linalg.norm(info["W"] - Wref) <= tol * np.linalg.norm(Wref), info
    assert abs(info["energy"] - e[:nocc].sum()) <= max(1e-9, 1e3 * sparse) * abs(e[:nocc].sum())
    with pytest.raises(ovl.OvlError, match="runs sp2, sp2acc or trs4"):
        ovl.purify(F if root else None, nocc, comm=comm, method="canonical", sparse=sparse)
