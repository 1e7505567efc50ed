"""ovl from Python: density-matrix purification and matrix products over MPI.

    from mpi4py import MPI
    import ovl
    D, info = ovl.purify(F, nocc)          # F on rank 0 (None elsewhere)
    C = ovl.gemm(A, B)                     # A, B on rank 0
    D_mine, info = ovl.purify(F_mine, nocc, layout="rows")   # each rank's rows

Data, layout="root" (the default). The input matrices are numpy arrays on
rank 0 of the communicator (other ranks may pass None; what they pass is not
read). ovl scatters them onto the grid its planner chooses, runs there on
every rank of the communicator, and gathers the result to rank 0. The result
is returned on every rank (``bcast=True``, the default: one MPI_Bcast more),
or on rank 0 only (``bcast=False``: None elsewhere).

Data, layout="rows". Every rank passes its own contiguous block of rows, the
blocks in rank order (rank r holds the rows after those of ranks 0..r-1), of
any sizes that add up to the matrix's rows: F_mine = F[lo:hi] of shape
(hi - lo, n), like petsc4py's row ownership or a 1D domain decomposition. A
rank without rows passes an array of shape (0, n), or None. ovl moves the
blocks straight to the kernel's grid and back (one MPI_Alltoallv each way,
no rank ever holds the whole matrix) and returns each rank's rows of the
result: D_mine = D[lo:hi], and for gemm C_mine = (A @ B)[lo:hi] with A's row
split (B may be split differently). ``bcast`` does not apply. Why rows and
not ScaLAPACK's 2D block-cyclic layout: it is what a numpy code that
distributes a matrix usually has, it needs no process grid, block sizes or
BLACS from the caller, and every split is allowed (uneven, empty ranks);
block-cyclic matrices are served by the C and Fortran ``ovl_pdpurify``.

Communicator. ``comm`` is an mpi4py communicator, or None for
MPI.COMM_WORLD. Every call is collective over it.

Errors. A failure raises OvlError with ovl's message on every rank of the
communicator (never on some ranks only). Arguments that ctypes would change
on their way to C are refused first, with the same exception on every rank
and a message naming the argument: TypeError for a value that is not an
integer (nocc, ndup, max_iter) or not a real number (tol), and for a matrix
of complex or non-numeric dtype (its imaginary part would be dropped);
ValueError for a count that is not integral (nocc=4.9; 4.0 and numpy
integers are taken) and for an integer beyond the C type it is passed as
(nocc: int64; ndup, max_iter: int), which ctypes would wrap (2**64 + 3 to 3).

Threads. The library is called through ctypes.CDLL, which releases the GIL
for the duration of each call (scatter or exchange, kernel, gather): other
Python threads run meanwhile (tests/test_ovl.py: test_gil_released, both
layouts). Calls are not thread-safe among themselves (one call
at a time per process, as for MPI collectives on one communicator).
"""
import ctypes
import operator

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
    """comm (None: MPI.COMM_WORLD) checked: TypeError for a non-communicator, ValueError for MPI.COMM_NULL."""
    if comm is None:
        return MPI.COMM_WORLD
    if not isinstance(comm, MPI.Intracomm):
        raise TypeError(f"comm must be an mpi4py intra-communicator (e.g. MPI.COMM_WORLD), not {comm!r}")
    if comm == MPI.COMM_NULL:
        raise ValueError("comm is MPI.COMM_NULL")
    return comm


def _check(rc):
    if rc != 0:
        raise OvlError(rc, lib.ovl_err_name(rc).decode(), lib.ovl_errmsg().decode(errors="replace"))


_RAISE = {"TypeError": TypeError, "ValueError": ValueError}


def _pack(err):
    """An error to send: (kind, text) for an exception or a message (OvlError), None for none."""
    if err is None:
        return None
    if isinstance(err, Exception):
        return (type(err).__name__, str(err))
    return ("OvlError", err)


def _raise(packed):
    kind, text = packed
    if kind in _RAISE:
        raise _RAISE[kind](text)
    raise OvlError(1, "OVL_ERR_ARG", text)


def _agree(comm, msg):
    """Raise msg (rank 0's check of its arrays: a message or an exception) on every rank."""
    msg = comm.bcast(_pack(msg), root=0)
    if msg:
        _raise(msg)


def _agree_any(comm, msg):
    """Raise the lowest rank's error, if any rank has one, on every rank."""
    msgs = [m for m in comm.allgather(_pack(msg)) if m]
    if msgs:
        _raise(msgs[0])


_INT64 = (-2**63, 2**63 - 1)
_CINT = (-2**31, 2**31 - 1)


def _integer(value, name, bounds):
    """value as a Python int that fits the C type of bounds; TypeError or ValueError naming name."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value) or value != int(value):
            raise ValueError(f"{name} must be an integral count, not {value!r}")
        value = int(value)
    else:
        try:
            value = operator.index(value)
        except TypeError:
            raise TypeError(f"{name} must be an integer, not {value!r}") from None
    lo, hi = bounds
    if not lo <= value <= hi:
        raise ValueError(f"{name} = {value} is out of range: it must be in [{lo}, {hi}]")
    return value


def _real(value, name):
    """value as a float; TypeError naming name for complex or non-numeric values."""
    if isinstance(value, (complex, np.complexfloating, bool, np.bool_)) or isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a real number, not {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, not {value!r}") from None


def _scalars(ndup, tol, max_iter):
    """(ndup, tol, max_iter) checked for C, or the error (an exception) on this rank."""
    try:
        return (0 if ndup is None else _integer(ndup, "ndup", _CINT), _real(tol, "tol"),
                _integer(max_iter, "max_iter", _CINT)), None
    except (TypeError, ValueError) as e:
        return None, e


def _real_array(X, what):
    """X as a float64 array; TypeError naming what for complex or non-numeric dtypes."""
    a = np.asarray(X)
    if a.dtype.kind == "c":
        raise TypeError(f"{what} is complex ({a.dtype}): ovl computes with real matrices, and converting it would "
                        f"drop the imaginary part (pass {what}.real if that is meant)")
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{what} has dtype {a.dtype}: ovl needs a real numeric array (float or integer)")
    return a.astype(np.float64, copy=False)


def _block(X, what, rank):
    """(this rank's rows of X in column-major order or None, error message or exception, or None)."""
    if X is None:
        return None, None
    try:
        a = _real_array(X, f"{what} on rank {rank}")
    except TypeError as e:
        return None, e
    if a.ndim != 2:
        return None, f"{what} on rank {rank} must be a 2D block of rows, not of shape {a.shape}"
    return np.asfortranarray(a), None


def _ld(a):
    return max(1, a.shape[0])


def _check_layout(layout):
    if layout not in ("root", "rows"):
        raise ValueError(f"layout must be 'root' or 'rows', not {layout!r}")


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
        a = _real_array(F, what)
    except TypeError as e:
        return None, e
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 1:
        return None, f"{what} must be a square matrix, not of shape {a.shape}"
    return np.asfortranarray(a), None


def _inputs(F, nocc, S, rank=None):
    """The checks of nocc, F and S (None: no S) as whole matrices (rank None: rank 0's of the root
    layout) or as this rank's rows: (nocc, F, S, None) as arrays, or a message in the last place.
    LOCAL."""
    take = _square if rank is None else (lambda X, what: _block(X, what, rank))
    where = "" if rank is None else f" on rank {rank}"
    a = s = None
    try:
        nocc = _integer(nocc, "nocc", _INT64)
    except (TypeError, ValueError) as e:
        return nocc, None, None, e
    a, msg = take(F, "F")
    if msg is None and S is not None:
        s, msg = take(S, "S")
        if msg is None and s.shape != (a.shape if a is not None else s.shape):
            msg = f"S{where} {s.shape} and F {a.shape} must have the same shape"
    return nocc, a, s, msg


def purify(F, nocc, comm=None, method="sp2acc", algo="auto", ndup=None, precision="double", tol=0.0, max_iter=200,
           bcast=True, layout="root", options=None, homo=None, lumo=None, S=None, W=False, mu=False, sparse=None,
           sparse_block=None):
    """Density matrix D of a symmetric F (orthonormal basis) with nocc occupied orbitals.

    D is the projector onto the nocc lowest eigenvectors of F (D^2 = D, tr D = nocc;
    occupation 1: multiply by 2 for a closed-shell density). layout="root": F is an
    n x n numpy array on rank 0 (None elsewhere) and rank 0's nocc counts;
    layout="rows": F is this rank's block of rows (shape (rows, n)), every rank
    passes the same nocc and options, and D comes back as this rank's rows. method: "sp2acc" (default:
    SP2 accelerated by scale-and-fold, SP2's steps without homo and lumo), "sp2", "trs4" or "canonical"; algo: "auto" (the planner) or an SSC algorithm name
    ("alg3".."alg6", canonical only); ndup: lanes per communication phase (None: the
    planner's); precision: "double" or "mixed" (sp2, sp2acc, trs4); tol: 0 for the method's
    own stopping rule, else in [1e-14, 1e-2]; max_iter: iteration cap. homo, lumo: sp2acc's
    estimates of F's HOMO and LUMO eigenvalues (both or neither; e.g. the previous SCF
    cycle's): the estimated gap must overlap the true one; without them sp2acc is sp2.
    options: run-time options with the names of the ovl command (docs/guides/cli.md), e.g.
    options="--ndup 4 --algo alg5 --method canonical": the plan's (--algo, --ndup, --grid,
    --backend, ...) and --method, --precision, --nocc, --tol, --max-iter. They override
    the keywords, after $OVL_OPTIONS (defaults < keywords < $OVL_OPTIONS < options); rank
    0's environment and options decide for every rank, and an unknown option raises
    OvlError naming it.
    sparse: the block-sparse route's threshold in [0, 1) (None: dense): F (and S) cut into
    blocks of sparse_block rows (None: the library's default, 32), blocks and block
    products below it dropped, S through S^(-1/2) (docs/guides/sparse.md); sp2, sp2acc
    and trs4 in float64; through ovl_pdpurify, as S, W and mu.
    Returns (D, info): D as described in the module's doc (bcast), info a dict with
    iterations, products, idem_err, trace_err, energy (tr D F), t_total, t_kernel
    (seconds), stop_reason, plan and why (the planner's reason). COLLECTIVE.

    S, W, mu (the library's ovl_pdpurify, as from C and Fortran): S, the overlap
    matrix (symmetric positive definite, given as F is: on rank 0, or this rank's
    rows split as F's), solves F C = S C eps: D = C_occ C_occ^T (tr D S = nocc).
    W=True adds the energy-weighted density W = D F D as info["W"] (distributed
    as D); mu=True asks only for the chemical potential. With any of them the
    call is ovl_pdpurify's (P x 1 BLACS grid over comm), and info holds
    iterations, idem_err, trace_err, energy (tr D F), mu = (homo + lumo) / 2,
    homo, lumo (Lanczos estimates, ovl/pdpurify.h), s, c (the kernel grid),
    t_total, t_purify, t_redist, t_overlap, t_mu (seconds), stop_reason, plan.
    """
    _check_layout(layout)
    comm = _comm(comm)
    if comm.allreduce(S is not None or bool(W) or bool(mu) or sparse is not None, op=MPI.LOR):
        # rank 0's S decides with layout="root"
        return _purify_pd(F, nocc, comm, method, algo, ndup, precision, tol, max_iter, bcast, layout, options, homo,
                          lumo, S, bool(comm.allreduce(bool(W), op=MPI.LOR)), sparse, sparse_block)
    options = _gap_options(homo, lumo, options)
    sc, err = _scalars(ndup, tol, max_iter)
    _agree_any(comm, err)
    ndup, tol, max_iter = sc
    if layout == "rows":
        return _purify_rows(F, nocc, comm, method, algo, ndup, precision, tol, max_iter, options)
    rank = comm.Get_rank()
    a, msg, n = None, None, 0
    if rank == 0:
        nocc, a, _, msg = _inputs(F, nocc, None)
        if msg is None:
            n = a.shape[0]
    _agree(comm, msg)
    D = np.empty((n, n), order="F") if rank == 0 else None
    info = DenseInfo()
    rc = lib.ovl_purify_dense(_handle(comm), n, _dptr(a), nocc if rank == 0 else 0, _enc(method), _enc(algo), ndup,
                              _enc(precision), tol, max_iter, _dptr(D), _enc(options), ctypes.byref(info))
    _check(rc)
    if bcast:
        n = comm.bcast(n, root=0)
        D = _bcast(comm, D, (n, n))
    return D, info.as_dict()


def _gap_options(homo, lumo, options):
    """sp2acc's estimates as options, before the caller's (which override them)."""
    if homo is None and lumo is None:
        return options
    try:
        gap = "--homo %r --lumo %r" % (float(homo), float(lumo))
    except (TypeError, ValueError):
        raise TypeError(f"homo and lumo must be given together as numbers, got {homo!r} and {lumo!r}") from None
    return gap if options is None else gap + " " + str(options)


def _purify_rows(F, nocc, comm, method, algo, ndup, precision, tol, max_iter, options):
    rank = comm.Get_rank()
    nocc, a, _, msg = _inputs(F, nocc, None, rank)
    _agree_any(comm, msg)
    n = comm.allreduce(a.shape[1] if a is not None else -1, op=MPI.MAX)
    if a is None:  # no rows here: the columns are the others'
        a = np.empty((0, max(n, 0)), order="F")
    D = np.empty(a.shape, order="F")
    info = DenseInfo()
    rc = lib.ovl_purify_rows(_handle(comm), a.shape[1], a.shape[0], _dptr(a), _ld(a), nocc, _enc(method), _enc(algo),
                             ndup, _enc(precision), tol, max_iter, _dptr(D), _ld(D), _enc(options), ctypes.byref(info))
    _check(rc)
    return D, info.as_dict()


def _bcast(comm, X, shape):
    if comm.Get_rank() != 0:
        X = np.empty(shape, order="F")
    comm.Bcast(X, root=0)
    return X


def gemm(A, B, comm=None, algo="auto", bcast=True, layout="root", options=None):
    """C = A @ B with ovl's distributed multiplication. layout="root": A (m x k) and
    B (k x n) on rank 0 (None elsewhere), C (m x n) as described in the module's doc
    (bcast); layout="rows": A and B are this rank's blocks of rows (their own splits),
    and C comes back as this rank's rows, split as A. algo: "auto" (the planner) or
    "summa", "hsumma", "cannon", "3d", "2.5d". options: run-time options as purify's
    (the plan's: --algo, --ndup, --block, --grid, ...). COLLECTIVE."""
    _check_layout(layout)
    comm = _comm(comm)
    if layout == "rows":
        return _gemm_rows(A, B, comm, algo, options)
    rank = comm.Get_rank()
    a = b = None
    msg, dims = None, (0, 0, 0)
    if rank == 0:
        try:
            a = np.asfortranarray(_real_array(A, "A"))
            b = np.asfortranarray(_real_array(B, "B"))
        except TypeError as e:
            msg = e
        if msg is None and (a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0] or a.size == 0 or b.size == 0):
            msg = f"A {np.shape(A)} and B {np.shape(B)} are not non-empty matrices with A's columns = B's rows"
        if msg is None:
            dims = (a.shape[0], b.shape[1], a.shape[1])
    _agree(comm, msg)
    m, n, k = comm.bcast(dims, root=0)
    C = np.empty((m, n), order="F") if rank == 0 else None
    info = DenseInfo()
    rc = lib.ovl_gemm_dense(_handle(comm), m, n, k, _dptr(a), _dptr(b), _dptr(C), _enc(algo), _enc(options),
                            ctypes.byref(info))
    _check(rc)
    if bcast:
        C = _bcast(comm, C, (m, n))
    return C


def _gemm_rows(A, B, comm, algo, options):
    rank = comm.Get_rank()
    a, msg = _block(A, "A", rank)
    b, msg_b = _block(B, "B", rank)
    _agree_any(comm, msg or msg_b)
    # the columns of a rank without rows are the others' (k for A, n for B); m is the sum of A's row counts
    cols = comm.allgather((a.shape[1] if a is not None else -1, b.shape[1] if b is not None else -1))
    kmax, nmax = max(c[0] for c in cols), max(c[1] for c in cols)
    a = np.empty((0, max(kmax, 0)), order="F") if a is None else a
    b = np.empty((0, max(nmax, 0)), order="F") if b is None else b
    m = comm.allreduce(a.shape[0], op=MPI.SUM)
    k, n = a.shape[1], b.shape[1]
    C = np.empty((a.shape[0], n), order="F")
    info = DenseInfo()
    rc = lib.ovl_gemm_rows(_handle(comm), m, n, k, a.shape[0], _dptr(a), _ld(a), b.shape[0], _dptr(b), _ld(b),
                           _dptr(C), _ld(C), _enc(algo), _enc(options), ctypes.byref(info))
    _check(rc)
    return C


def _purify_pd(F, nocc, comm, method, algo, ndup, precision, tol, max_iter, bcast, layout, options, homo, lumo, S,
               want_w, sparse=None, sparse_block=None):
    """purify() through ovl_pdpurify: with S, W and mu (ovl/_pd.py moves the rows). COLLECTIVE."""
    from . import _pd
    if (homo is None) != (lumo is None):
        raise TypeError(f"homo and lumo must be given together as numbers, got {homo!r} and {lumo!r}")
    sc, err = _scalars(ndup, tol, max_iter)
    _agree_any(comm, err)
    ndup, tol, max_iter = sc
    rank, P = comm.Get_rank(), comm.Get_size()
    msg, a, s, n = None, None, None, 0
    if layout == "root":
        if rank == 0:
            nocc, a, s, msg = _inputs(F, nocc, S)
            if msg is None:
                n = a.shape[0]
        _agree(comm, msg)
        n, nocc, has_s = comm.bcast((n, nocc, s is not None), root=0)
        src = np.array([0] + [n] * P, dtype=np.int64)
    else:
        nocc, a, s, msg = _inputs(F, nocc, S, rank)
        _agree_any(comm, msg)
        n = comm.allreduce(a.shape[1] if a is not None else -1, op=MPI.MAX)
        counts = comm.allgather(a.shape[0] if a is not None else 0)
        has_s = comm.allreduce(S is not None, op=MPI.LOR)
        if n < 1 or sum(counts) != n or comm.allreduce(S is None and has_s, op=MPI.LOR):
            _raise(_pack(f"the row blocks of F (and S) must together be a square matrix with S given on every rank: "
                         f"{sum(counts)} rows of {n} columns"))
        src = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    prm, msg = _pd.params(method, algo, ndup, precision, tol, max_iter, _gap_options(homo, lumo, options), None,
                          None, sparse, sparse_block)
    _agree_any(comm, msg)
    dst, _ = _pd.even_split(n, P)
    Floc = _pd.move_rows(comm, a, src, dst, n)
    Sloc = _pd.move_rows(comm, s, src, dst, n) if has_s else None
    Dloc, Wloc, rc, mu, energy, info = _pd.run(comm, n, nocc, Floc, Sloc, want_w, prm)
    if rc is None:
        raise OvlError(8, "OVL_ERR_UNSUPPORTED", "S, W and mu need libovl.so built with ScaLAPACK (ovl_pdpurify)")
    _check(rc)
    info.update(mu=mu, energy=energy)
    D = _pd.move_rows(comm, Dloc, dst, src, n)
    Wm = _pd.move_rows(comm, Wloc, dst, src, n) if want_w else None
    if layout == "root":
        D, Wm = (D, Wm) if rank == 0 else (None, None)
        if bcast:
            D = _bcast(comm, None if D is None else np.asfortranarray(D), (n, n))
            Wm = _bcast(comm, None if Wm is None else np.asfortranarray(Wm), (n, n)) if want_w else None
    if want_w:
        info["W"] = Wm
    return D, info


from . import dm  # noqa: E402,F401  (the density-matrix handle, ovl/dm.h)
