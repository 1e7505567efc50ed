"""ovl.purify with an overlap matrix S, the chemical potential mu and the energy-weighted density W: the
call goes to the library's ovl_pdpurify (ovl/pdpurify.h), the entry C and Fortran use, on a BLACS grid of
P x 1 processes over the caller's communicator.

Data. The matrices are moved (one MPI_Alltoallv each) into the row split ovl_pdpurify's descriptor
describes: P x 1 processes, square blocks of nb = ceil(n / P) rows, so that rank r holds rows
[r nb, (r + 1) nb) with all n columns (a block-cyclic layout whose cycle is one block per rank). From
rank 0's whole matrices (layout="root") or from the caller's own row blocks (layout="rows", any split)
there, and back the same way for D and W.
"""
import ctypes

import numpy as np
from mpi4py import MPI

from ._lib import PdpurifyInfo, blacs, lib

_BLACS = blacs(lib)


def _offsets(counts):
    return np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


def even_split(n, P):
    """The row offsets of ovl_pdpurify's split (P + 1 of them) and its block size nb."""
    nb = max(1, -(-n // P))
    return np.array([min(n, r * nb) for r in range(P + 1)], dtype=np.int64), nb


def move_rows(comm, X, src, dst, n):
    """This rank's rows of an m x n matrix split by offsets dst, from its rows X (C order) split by src.
    One MPI_Alltoallv. COLLECTIVE over comm."""
    r, P = comm.Get_rank(), comm.Get_size()
    lo, hi = src[r], src[r + 1]
    scount = [max(0, min(hi, dst[q + 1]) - max(lo, dst[q])) * n for q in range(P)]
    rlo, rhi = dst[r], dst[r + 1]
    rcount = [max(0, min(rhi, src[q + 1]) - max(rlo, src[q])) * n for q in range(P)]
    send = np.ascontiguousarray(X if X is not None else np.empty((0, n)), dtype=np.float64)
    recv = np.empty((rhi - rlo, n))
    comm.Alltoallv([send, (scount, _offsets(scount)[:-1]), MPI.DOUBLE],
                   [recv, (rcount, _offsets(rcount)[:-1]), MPI.DOUBLE])
    return recv


class _Grid:
    """A BLACS context of P x 1 processes over comm (ranks in order), freed on exit."""

    def __init__(self, comm):
        self.comm = comm

    def __enter__(self):
        b = _BLACS
        self.h = b["Csys2blacs_handle"](b["comm_t"](MPI._handleof(self.comm)))
        ctxt = ctypes.c_int(self.h)
        b["Cblacs_gridinit"](ctypes.byref(ctxt), b"R", self.comm.Get_size(), 1)
        self.ctxt = ctxt.value
        return self.ctxt

    def __exit__(self, *exc):
        _BLACS["Cblacs_gridexit"](self.ctxt)
        _BLACS["Cfree_blacs_system_handle"](self.h)


def params(method, algo, ndup, precision, tol, max_iter, options, homo, lumo, sparse=None, sparse_block=None):
    """ovl_pdpurify_params from names, or the library's message for a name it does not know (raise on
    every rank: the caller agrees). LOCAL."""
    prm = lib.ovl_pdpurify_params_default()
    e = ctypes.c_int()
    for field, parse, name in (("method", lib.ovl_purify_method_parse, method),
                               ("prec", lib.ovl_purify_prec_parse, precision), ("algo", lib.ovl_algo_parse, algo)):
        if name is None or (field == "algo" and name == "auto"):  # the default: the planner's
            continue
        if parse(str(name).encode(), ctypes.byref(e)) != 0:
            return None, lib.ovl_errmsg().decode(errors="replace")
        setattr(prm, field, e.value)
    if ndup is not None and ndup > 0:
        prm.ndup = ndup
    prm.tol, prm.max_iter = tol, max_iter
    if homo is not None:
        prm.homo, prm.lumo = float(homo), float(lumo)
    prm.options = None if options is None else str(options).encode()
    try:
        if sparse is not None:
            prm.sparse = float(sparse)
        if sparse_block is not None:
            prm.sparse_block = int(sparse_block)
    except (TypeError, ValueError):
        return None, f"sparse must be a number and sparse_block an integer, got {sparse!r} and {sparse_block!r}"
    return prm, None


def run(comm, n, nocc, Floc, Sloc, want_w, prm):
    """ovl_pdpurify on this rank's rows (C order, the even split of n) of F and S (None: no S).
    Returns (D rows, W rows or None, rc, mu, energy, info). COLLECTIVE over comm."""
    rows = Floc.shape[0]
    ld = max(1, rows)

    def fort(X):  # column-major with ld = max(1, rows)
        return np.asfortranarray(X) if rows else np.zeros((1, n), order="F")

    def dp(X):
        return None if X is None else X.ctypes.data_as(ctypes.POINTER(ctypes.c_double))

    f = fort(Floc)
    s = fort(Sloc) if Sloc is not None else None
    d = np.zeros((max(rows, 1), n), order="F")
    w = np.zeros((max(rows, 1), n), order="F") if want_w else None
    mu, energy, info = ctypes.c_double(), ctypes.c_double(), PdpurifyInfo()
    if _BLACS is None:
        rc = None
    else:
        with _Grid(comm) as ctxt:
            _, nb = even_split(n, comm.Get_size())
            desc = (ctypes.c_int * 9)(1, ctxt, n, n, nb, nb, 0, 0, ld)
            rc = lib.ovl_pdpurify(dp(f), desc, dp(s), desc if s is not None else None, nocc, dp(d), desc, dp(w),
                                  desc if w is not None else None, ctypes.byref(prm), ctypes.byref(mu),
                                  ctypes.byref(energy), ctypes.byref(info))
    D = np.ascontiguousarray(d[:rows])
    W = np.ascontiguousarray(w[:rows]) if want_w else None
    return D, W, rc, mu.value, energy.value, info.as_dict()
