"""ovl.scf's pieces that need no PySCF: the gap edges and the tolerance rule (the adaptive SCF
itself: python/tests/scf_adaptive_check.py, ctest python_scf_adaptive)."""
import math

import numpy as np
import pytest

import ovl
import ovl.scf
from conftest import read_case


@pytest.mark.parametrize("case", ["water_ccpvdz", "c10h22_631g"])
def test_gap_edges(case):
    F, nocc = read_case(case)
    w, C = np.linalg.eigh(F)
    D = C[:, :nocc] @ C[:, :nocc].T
    edges = ovl.scf.GapEdges()
    homo, lumo = edges(F, D)
    # Ritz values inside the restricted spectra: an estimated gap that contains the true one
    assert homo <= w[nocc - 1] + 1e-12 and lumo >= w[nocc] - 1e-12
    gap = w[nocc] - w[nocc - 1]
    assert abs(homo - w[nocc - 1]) < 0.05 * gap and abs(lumo - w[nocc]) < 0.05 * gap  # from random vectors
    # warm start on a slightly changed F: still inside, still close
    G = F + 1e-4 * np.diag(np.linspace(-1, 1, F.shape[0]))
    v, E = np.linalg.eigh(G)
    De = E[:, :nocc] @ E[:, :nocc].T
    homo, lumo = edges(G, De)
    assert v[nocc - 1] - 0.05 * gap <= homo <= v[nocc - 1] + 1e-12 and v[nocc] - 1e-12 <= lumo <= v[nocc] + 0.05 * gap


def test_adaptive_policy(comm):
    F, nocc = read_case("c10h22_631g")
    pol = ovl.scf.Adaptive(full_below=1e-4)
    o = pol.options(F)
    assert o == {"method": "sp2acc", "tol": 1e-4, "precision": "mixed"}  # first cycle: loose, float32, no estimates
    D, info = ovl.purify(F if comm.Get_rank() == 0 else None, nocc, comm=comm, **o)
    if comm.Get_rank() == 0:
        assert pol.update(F, D, info)
        assert info["homo"] < info["lumo"] and math.isinf(info["delta"])
    o = comm.bcast(pol.options(F) if comm.Get_rank() == 0 else None, root=0)
    if comm.Get_rank() == 0:
        assert "homo" in o and o["tol"] == 1e-4
    D2, info2 = ovl.purify(F if comm.Get_rank() == 0 else None, nocc, comm=comm, **o)
    assert info2["products"] < info["products"]  # SP2-ACC with the edges: fewer products for the same F
    if comm.Get_rank() == 0:
        pol.update(F, D2, info2)
        assert info2["delta"] < 1e-3  # the same F: only the purification's own error changes D
        pol.delta = 5e-4
        assert pol.tolerance() == (5e-6, "double")  # below tol_mixed: float64
        pol.delta = 5e-5
        assert pol.tolerance() == (0.0, "double")  # below full_below: to the rounding floor
        pol.delta = 1e-3
        assert pol.tolerance() == (1e-5, "mixed")
