"""ovl.dm, the density-matrix handle (ovl/dm.h), against numpy's eigensolver (run under mpiexec, 1 and 4 ranks)."""
import numpy as np
import pytest

import ovl
import ovl.dm


def problem(n, nocc, seed):
    """A symmetric F with a gap after orbital nocc and an overlap S = I + E (the same on every rank)."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    eps = np.linspace(-1.0, 1.0, n) + 0.5 * (np.arange(n) >= nocc)
    F = Q @ np.diag(eps) @ Q.T
    E = 0.02 * (rng.random((n, n)) - 0.5)
    S = np.eye(n) + np.triu(E, 1) + np.triu(E, 1).T
    return (F + F.T) / 2, S


def reference(F, S, nocc, occ):
    """D, W, energy, HOMO, LUMO of F C = S C eps (by the Cholesky factor of S)."""
    L = np.linalg.cholesky(S)
    Li = np.linalg.inv(L)
    e, V = np.linalg.eigh(Li @ F @ Li.T)
    C = (Li.T @ V)[:, :nocc]
    return occ * C @ C.T, occ * C @ np.diag(e[:nocc]) @ C.T, occ * e[:nocc].sum(), e[nocc - 1], e[nocc]


def rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def test_restricted_with_overlap(comm):
    n, nel = 29, 18.0
    F, S = problem(n, 9, 1)
    g = ovl.dm.BlacsGrid(comm)
    f, descf = g.scatter(F, 4)
    s, descs = g.scatter(S, 5, 3)
    with ovl.dm.DM(g, n, nel) as h:
        h.set("method", "sp2acc")
        assert h.get("method") == "sp2acc"
        h.set_overlap(s, descs)
        d, w = h.solve(f, descf, energy_weighted=True)
        D, W = g.gather(d, descf), g.gather(w, descf)
        Dr, Wr, er, homo, lumo = reference(F, S, 9, 2.0)
        assert rel(D, Dr) < 1e-8 and rel(W, Wr) < 1e-8
        r = h.results()
        assert abs(r["energy"] - er) < 1e-9 and homo < r["mu"] < lumo
        assert abs(np.trace(D @ S) - nel) < 1e-8
        assert r["occupation"] == 2.0 and r["factorizations"] == 1 and r["warm"] == 0
        # the next cycle: the factor and the previous gap reused
        F2 = F + 1e-3 * np.triu(np.ones((n, n)))
        F2 = (F2 + F2.T) / 2
        f2, _ = g.scatter(F2, 4)
        d, _ = h.solve(f2, descf)
        r2 = h.results()
        assert rel(g.gather(d, descf), reference(F2, S, 9, 2.0)[0]) < 1e-8
        assert r2["factorizations"] == 1 and r2["warm"] == 1 and r2["iterations"] < r["iterations"], (r, r2)
    g.close()


def test_unrestricted(comm):
    n = 17
    F, S = problem(n, 5, 2)
    g = ovl.dm.BlacsGrid(comm)
    f, descf = g.scatter(F, 3)
    h = ovl.dm.DM(g, n, 9.0, nspin=2)
    with pytest.raises(ovl.OvlError, match="n_electrons_up"):
        h.solve(f, descf)  # an odd count: the split is the caller's
    h.set("n_electrons_up", 5)
    assert float(h.get("n_electrons_down")) == 4.0
    for ispin, nocc in ((0, 5), (1, 4)):
        d, _ = h.solve(f, descf, ispin=ispin)
        assert rel(g.gather(d, descf), reference(F, np.eye(n), nocc, 1.0)[0]) < 1e-8
        assert h.results(ispin)["n_occ"] == nocc
    h.destroy()
    g.close()


def test_bad_input(comm):
    g = ovl.dm.BlacsGrid(comm)
    with pytest.raises(ovl.OvlError, match="integer"):
        ovl.dm.DM(g, 10, 7.0)  # 3.5 orbitals of occupation 2
    with pytest.raises(ovl.OvlError, match="nspin"):
        ovl.dm.DM(g, 10, 6.0, nspin=3)
    h = ovl.dm.DM(g, 10, 6.0)
    with pytest.raises(ovl.OvlError, match="no-such"):
        h.set("no-such", "1")
    with pytest.raises(ovl.OvlError, match="ndup"):
        h.set("ndup", "many")
    with pytest.raises(ovl.OvlError, match="ispin"):
        h.results(1)
    h.destroy()
    with pytest.raises(ovl.OvlError):
        h.get("method")  # a NULL handle: an error, not a crash
    g.close()
