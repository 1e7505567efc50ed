"""PySCF's RHF/RKS with ovl's purification in place of the eigensolver.

    from mpi4py import MPI
    from pyscf import gto, scf
    import ovl.pyscf
    with ovl.pyscf.ranks() as root:        # every rank; the others serve rank 0's purifications
        if root:
            mf = ovl.pyscf.purify_scf(scf.RHF(mol), method="sp2")
            e = mf.kernel()

The hook. PySCF's SCF calls ``mf._eigh(F, S, x=X)`` once per cycle (through ``mf.eig``), with X
the orthogonalisation its ``check_linear_dependency`` made (canonical, overlap eigenvalues below
the linear-dependence threshold dropped). ``purify_scf(mf, **opts)`` replaces that step on this
object only: F' = X^T F X is purified by ``ovl.purify(F', nocc, **opts)`` over the communicator
(nocc = mol.nelectron // 2, occupation 2 as RHF's), and the orbitals PySCF asks for are built from
the purified projector D' instead of diagonalising: C_occ and C_vir from pivoted Cholesky
factorisations of D' and I - D' (each factor of a projector has orthonormal columns; C_occ is
orthonormalised by a QR as well, for a D' purified only to a loose tolerance), C = X [C_occ
C_vir]. They span the same occupied and virtual spaces as the eigenvectors, so the density
2 C_occ C_occ^T, the energy and the orbital gradient (C_vir^T F C_occ) are those of the
diagonalisation; within each space they are not rotated to diagonalise F, and mo_energy holds their
Rayleigh quotients (diag C^T F C): below the chemical potential for the occupied orbitals, above it
for the virtual ones, so PySCF's get_occ picks them. Everything else (Fock builds, DIIS, the
convergence tests, density fitting, RKS's grids) is PySCF's. Restricted closed shell only.

MPI. PySCF runs on rank 0 of ``comm`` (None: MPI.COMM_WORLD); the purification runs on every rank.
``ranks(comm)`` is a context manager for all ranks: rank 0 enters with True and runs the SCF; the
others enter with False after serving every purification rank 0 asks for until rank 0 leaves the
block. With one rank it only yields True.

Times. ``mf.ovl_stats`` (on rank 0) lists each cycle's ``info`` dict from ovl.purify (iterations,
products, t_total, plan, ...).

Policy. ``purify_scf(mf, policy=P)`` asks P before every cycle for that cycle's ovl.purify options
(``P.options(Fo)``: a dict merged over opts) and tells it the result (``P.update(Fo, Do, info)``,
which may add entries to info; False asks for the cycle once more, with P's new options). An
OvlError of the purification goes to ``P.failed(err)``: True retries the cycle once, with P's new
options. ovl.scf's Adaptive is such a policy: SP2-ACC with the previous
cycle's HOMO/LUMO, a tolerance that follows the SCF's error, float32 products while it is loose.
"""
import contextlib

import numpy as np
from mpi4py import MPI

from . import OvlError, purify

__all__ = ["purify_scf", "ranks", "orbitals"]

_STOP = None


def _comm(comm):
    return MPI.COMM_WORLD if comm is None else comm


@contextlib.contextmanager
def ranks(comm=None):
    """Rank 0: yields True and, on leaving, releases the others. Other ranks: serve rank 0's
    purifications (ovl.purify with the options purify_scf was given), then yield False. COLLECTIVE."""
    comm = _comm(comm)
    if comm.Get_rank() != 0:
        while True:
            opts = comm.bcast(None, root=0)
            if opts is _STOP:
                break
            try:
                purify(None, 0, comm=comm, bcast=False, **opts)
            except OvlError:  # rank 0 has it too and decides: retry (a policy's) or raise
                pass
        yield False
        return
    try:
        yield True
    finally:
        if comm.Get_size() > 1:
            comm.bcast(_STOP, root=0)


def _factor(P, k, what):
    """C (n x k) with C C^T = P for a projector P of rank k: pivoted Cholesky (LAPACK dpstrf)."""
    import scipy.linalg.lapack as lapack
    n = P.shape[0]
    if k == 0:
        return np.zeros((n, 0))
    L, piv, rank, info = lapack.dpstrf(P, lower=1, tol=-1.0)
    if info < 0 or rank < k:
        raise RuntimeError(f"ovl.pyscf: the purified {what} projector has rank {rank} < {k}")
    C = np.zeros((n, k))
    C[piv - 1, :] = np.tril(L)[:, :k]
    return C


def orbitals(Fo, Do, nocc):
    """(mo_energy, C) in the orthonormal basis of Fo from the purified projector Do of rank nocc:
    C = [C_occ C_vir] orthonormal, spanning Do's range and its complement, mo_energy their
    Rayleigh quotients diag(C^T Fo C). LOCAL."""
    n = Fo.shape[0]
    # QR of the occupied factor (2 n nocc^2 flops): a projector's factor is orthonormal already, that of
    # a purification stopped at a loose tolerance (ovl.scf) only to its idempotency error, which would
    # reach the energy to first order; orthonormal, the density 2 C_occ C_occ^T is an exact projector
    Co = np.linalg.qr(_factor(Do, nocc, "occupied"))[0]
    C = np.hstack((Co, _factor(np.eye(n) - Do, n - nocc, "virtual")))
    e = np.einsum("ij,ij->j", C, Fo @ C)
    return e, C


def purify_scf(mf, comm=None, policy=None, **opts):
    """mf (a PySCF RHF or RKS object, on rank 0) with its eigensolver step replaced by ovl's
    purification over comm; opts are ovl.purify's keywords (method, algo, ndup, precision, tol,
    max_iter, options). policy: None, or an object whose options(Fo) gives each cycle's keywords
    (over opts) and whose update(Fo, Do, info) sees each result (ovl.scf.Adaptive). Returns mf
    (changed in place). Run the SCF inside ``ranks(comm)``."""
    comm = _comm(comm)
    opts = dict(opts)
    nocc = mf.mol.nelectron // 2
    if mf.mol.spin != 0 or 2 * nocc != mf.mol.nelectron:
        raise ValueError("ovl.pyscf.purify_scf: restricted closed-shell (RHF/RKS) molecules only")
    mf.ovl_stats = []

    def _eigh(h, s, overwrite=False, x=None):
        if x is None:
            x = mf.check_linear_dependency(s)
        Fo = x.T @ h @ x
        Fo = 0.5 * (Fo + Fo.T)
        for attempt in (0, 1):
            run = dict(opts)
            if policy is not None:
                run.update(policy.options(Fo))
            if comm.Get_size() > 1:
                comm.bcast(run, root=0)
            try:
                Do, info = purify(Fo, nocc, comm=comm, bcast=False, **run)
            except OvlError as err:  # the same error on every rank: the others wait for rank 0's next call
                if policy is None or attempt or not policy.failed(err):
                    raise
                continue
            Do = 0.5 * (Do + Do.T)
            if policy is None or policy.update(Fo, Do, info) or attempt:
                break
        mf.ovl_stats.append(info)
        e, C = orbitals(Fo, Do, nocc)
        return e, x @ C

    mf._eigh = _eigh
    return mf
