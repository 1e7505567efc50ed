"""ovl from Python: density-matrix purification and matrix products over MPI.

    from mpi4py import MPI
    import ovl
    D, info = ovl.purify(F, nocc)          # F on rank 0 (None elsewhere)
    C = ovl.gemm(A, B)                     # A, B on rank 0

Data. The input matrices are numpy arrays on rank 0 of the communicator
(other ranks may pass None; what they pass is not read). ovl scatters them
onto the grid its planner chooses, runs there on every rank of the
communicator, and gathers the result to rank 0. The result is returned on
every rank (``bcast=True``, the default: one MPI_Bcast more), or on rank 0
only (``bcast=False``: None elsewhere).

Communicator. ``comm`` is an mpi4py communicator, or None for
MPI.COMM_WORLD. Every call is collective over it.

Errors. A failure raises OvlError with ovl's message on every rank of the
communicator (never on some ranks only).

Threads. The library is called through ctypes.CDLL, which releases the GIL
for the duration of each call (scatter, kernel, gather): other Python
threads run meanwhile. Calls are not thread-safe among themselves (one call
at a time per process, as for MPI collectives on one communicator).
"""
import ctypes

import numpy as np
from mpi4py import MPI

from ._lib import DenseInfo, lib, library_path

__all__ = ["purify", "gemm", "OvlError", "version", "library_path"]


class OvlError(RuntimeError):
    """An ovl error: code (ovl_err's value), name (e.g. OVL_ERR_ARG) and ovl's message."""

    def __init__(self, code, name, message):
        super().__init__(f"{name}: {message}")
        self.code, self.name, self.message = code, name, message


def version():
    return lib.ovl_version().decode()


def _comm(comm):
    return MPI.COMM_WORLD if comm is None else comm


def _check(rc):
    if rc != 0:
        raise OvlError(rc, lib.ovl_err_name(rc).decode(), lib.ovl_errmsg().decode(errors="replace"))


def _agree(comm, msg):
    """Raise msg (rank 0's check of its arrays) on every rank."""
    msg = comm.bcast(msg, root=0)
    if msg:
        raise OvlError(1, "OVL_ERR_ARG", msg)


def _dptr(a):
    return None if a is None else a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


def _handle(comm):
    return ctypes.c_void_p(MPI._addressof(comm))


def _enc(s):
    return None if s is None else str(s).encode()


def _square(F, what):
    """(array in column-major order, error message or None) for rank 0's F."""
    if F is None:
        return None, f"{what} must be given on rank 0"
    try:
        a = np.asarray(F, dtype=np.float64)
    except (TypeError, ValueError) as e:
        return None, f"{what} is not a numeric array: {e}"
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 1:
        return None, f"{what} must be a square matrix, not of shape {a.shape}"
    return np.asfortranarray(a), None


def purify(F, nocc, comm=None, method="sp2", algo="auto", ndup=None, precision="double", tol=0.0, max_iter=200,
           bcast=True):
    """Density matrix D of a symmetric F (orthonormal basis) with nocc occupied orbitals.

    D is the projector onto the nocc lowest eigenvectors of F (D^2 = D, tr D = nocc;
    occupation 1: multiply by 2 for a closed-shell density). F: n x n numpy array on
    rank 0 (None elsewhere); nocc: rank 0's value counts. method: "sp2" (default),
    "trs4" or "canonical"; algo: "auto" (the planner) or an SSC algorithm name
    ("alg3".."alg6", canonical only); ndup: lanes per communication phase (None: the
    planner's); precision: "double" or "mixed" (sp2, trs4); tol: 0 for the method's
    own stopping rule, else in [1e-14, 1e-2]; max_iter: iteration cap.
    Returns (D, info): D as described in the module's doc (bcast), info a dict with
    iterations, products, idem_err, trace_err, energy (tr D F), t_total, t_kernel
    (seconds), stop_reason, plan and why (the planner's reason). COLLECTIVE.
    """
    comm = _comm(comm)
    rank = comm.Get_rank()
    a, msg, n = None, None, 0
    if rank == 0:
        a, msg = _square(F, "F")
        if msg is None:
            n = a.shape[0]
            try:
                nocc = int(nocc)
            except (TypeError, ValueError):
                msg = f"nocc must be an integer, not {nocc!r}"
    _agree(comm, msg)
    D = np.empty((n, n), order="F") if rank == 0 else None
    info = DenseInfo()
    rc = lib.ovl_purify_dense(_handle(comm), n, _dptr(a), int(nocc) if rank == 0 else 0, _enc(method), _enc(algo),
                              int(ndup or 0), _enc(precision), float(tol), int(max_iter), _dptr(D),
                              ctypes.byref(info))
    _check(rc)
    if bcast:
        n = comm.bcast(n, root=0)
        D = _bcast(comm, D, (n, n))
    return D, info.as_dict()


def _bcast(comm, X, shape):
    if comm.Get_rank() != 0:
        X = np.empty(shape, order="F")
    comm.Bcast(X, root=0)
    return X


def gemm(A, B, comm=None, algo="auto", bcast=True):
    """C = A @ B with ovl's distributed multiplication. A (m x k) and B (k x n) on rank 0
    (None elsewhere); algo: "auto" (the planner) or "summa", "hsumma", "cannon", "3d",
    "25d". Returns C (m x n) as described in the module's doc (bcast). COLLECTIVE."""
    comm = _comm(comm)
    rank = comm.Get_rank()
    a = b = None
    msg, dims = None, (0, 0, 0)
    if rank == 0:
        try:
            a = np.asfortranarray(np.asarray(A, dtype=np.float64))
            b = np.asfortranarray(np.asarray(B, dtype=np.float64))
        except (TypeError, ValueError) as e:
            msg = f"A and B must be numeric arrays: {e}"
        if msg is None and (a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0] or a.size == 0 or b.size == 0):
            msg = f"A {np.shape(A)} and B {np.shape(B)} are not non-empty matrices with A's columns = B's rows"
        if msg is None:
            dims = (a.shape[0], b.shape[1], a.shape[1])
    _agree(comm, msg)
    m, n, k = comm.bcast(dims, root=0)
    C = np.empty((m, n), order="F") if rank == 0 else None
    info = DenseInfo()
    rc = lib.ovl_gemm_dense(_handle(comm), m, n, k, _dptr(a), _dptr(b), _dptr(C), _enc(algo), ctypes.byref(info))
    _check(rc)
    if bcast:
        C = _bcast(comm, C, (m, n))
    return C
