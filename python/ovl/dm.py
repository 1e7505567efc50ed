"""The density-matrix handle of ovl/dm.h for SCF codes, through ctypes.

Matrices are ScaLAPACK block-cyclic: each rank holds its local part as a
float64 array in Fortran order (LLD_ rows) with a 9-integer descriptor on a
BLACS context. BlacsGrid makes the context over an mpi4py communicator and
moves whole matrices in and out of that layout; DM is the handle:

    from mpi4py import MPI
    import ovl.dm
    g = ovl.dm.BlacsGrid(MPI.COMM_WORLD)            # the most square grid of the ranks
    f, descf = g.scatter(F, 32)                      # F: the whole matrix, on every rank
    s, descs = g.scatter(S, 32)
    with ovl.dm.DM(g, n, n_electrons=10.0) as h:     # spin-restricted: occupation 2
        h.set("method", "sp2acc")                    # the command line's option names
        h.set_overlap(s, descs)                      # factorised once
        d, w = h.solve(f, descf, energy_weighted=True)   # once per SCF cycle
        r = h.results()                              # mu, energy, homo, lumo, iterations, ...
    D = g.gather(d, descf)

The library is the package's (ovl._lib: $OVL_LIBRARY or the libovl.so
beside the package); BLACS comes with it (libovl.so links ScaLAPACK).
Errors raise ovl.OvlError with the library's message (the same on every
rank for the collective calls). Collective: BlacsGrid(), DM(),
set_overlap, solve, destroy (and close); local: set, get, results.
"""
import ctypes

import numpy as np
from mpi4py import MPI

from ._lib import lib


class DmResults(ctypes.Structure):
    _c_struct_ = "ovl_dm_results"
    _fields_ = [
        ("mu", ctypes.c_double),
        ("energy", ctypes.c_double),
        ("homo", ctypes.c_double),
        ("lumo", ctypes.c_double),
        ("idem_err", ctypes.c_double),
        ("trace_err", ctypes.c_double),
        ("n_occ", ctypes.c_double),
        ("occupation", ctypes.c_double),
        ("iterations", ctypes.c_int),
        ("warm", ctypes.c_int),
        ("solves", ctypes.c_int),
        ("factorizations", ctypes.c_int),
        ("t_solve", ctypes.c_double),
        ("t_purify", ctypes.c_double),
        ("t_redist", ctypes.c_double),
        ("t_overlap", ctypes.c_double),
        ("t_mu", ctypes.c_double),
        ("t_factor", ctypes.c_double),
        ("stop_reason", ctypes.c_char * 48),
        ("plan", ctypes.c_char * 192),
    ]

    def as_dict(self):
        d = {name: getattr(self, name) for name, _ in self._fields_}
        for k in ("stop_reason", "plan"):
            d[k] = d[k].decode(errors="replace")
        return d


_ip = ctypes.POINTER(ctypes.c_int)
_dp = ctypes.POINTER(ctypes.c_double)
_comm_t = ctypes.c_int if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_int) else ctypes.c_void_p


def _declare():
    v, c = ctypes.c_void_p, ctypes.c_char_p
    sig = {
        "ovl_dm_create": ([ctypes.c_int, ctypes.c_int, ctypes.c_double, ctypes.c_int, ctypes.POINTER(v)], ctypes.c_int),
        "ovl_dm_set": ([v, c, c], ctypes.c_int),
        "ovl_dm_get": ([v, c, ctypes.c_char_p, ctypes.c_size_t], ctypes.c_int),
        "ovl_dm_set_overlap": ([v, _dp, _ip], ctypes.c_int),
        "ovl_dm_solve": ([v, ctypes.c_int, _dp, _ip, _dp, _ip, _dp, _ip], ctypes.c_int),
        "ovl_dm_get_results": ([v, ctypes.c_int, ctypes.POINTER(DmResults)], ctypes.c_int),
        "ovl_dm_destroy": ([ctypes.POINTER(v)], ctypes.c_int),
        "Csys2blacs_handle": ([_comm_t], ctypes.c_int),
        "Cblacs_gridinit": ([_ip, c, ctypes.c_int, ctypes.c_int], None),
        "Cblacs_gridinfo": ([ctypes.c_int, _ip, _ip, _ip, _ip], None),
        "Cblacs_gridexit": ([ctypes.c_int], None),
    }
    for name, (args, res) in sig.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res


_declare()


def _check(rc):
    if rc != 0:
        from . import OvlError  # the package's error class
        raise OvlError(rc, lib.ovl_err_name(rc).decode(), lib.ovl_errmsg().decode(errors="replace"))


def numroc(n, nb, iproc, isrc, nprocs):
    """ScaLAPACK's NUMROC: the rows (columns) of an n-long axis in blocks of nb on process iproc."""
    off = (iproc - isrc + nprocs) % nprocs
    nblocks, num = n // nb, (n // nb) // nprocs * nb
    extra = nblocks % nprocs
    if off < extra:
        num += nb
    elif off == extra:
        num += n % nb
    return num


class BlacsGrid:
    """A BLACS grid nprow x npcol (row-major) over an mpi4py communicator (None: COMM_WORLD).

    Without nprow and npcol: the most square grid of the ranks, nprow <= npcol. COLLECTIVE."""

    def __init__(self, comm=None, nprow=None, npcol=None):
        self.comm = MPI.COMM_WORLD if comm is None else comm
        P = self.comm.size
        if nprow is None and npcol is None:
            nprow = max(p for p in range(1, int(P**0.5) + 1) if P % p == 0)
        if nprow is None:
            nprow = P // npcol
        if npcol is None:
            npcol = P // nprow
        if nprow * npcol != P:
            raise ValueError(f"a {nprow} x {npcol} grid does not use the {P} ranks of comm")
        ctxt = ctypes.c_int(lib.Csys2blacs_handle(_comm_t(MPI._handleof(self.comm))))
        lib.Cblacs_gridinit(ctypes.byref(ctxt), b"R", nprow, npcol)
        self.ctxt = ctxt.value
        v = [ctypes.c_int(-1) for _ in range(4)]
        lib.Cblacs_gridinfo(self.ctxt, *[ctypes.byref(x) for x in v])
        self.nprow, self.npcol, self.myrow, self.mycol = (x.value for x in v)

    def descriptor(self, n, mb, nb=None):
        """The descriptor of an n x n matrix in mb x nb blocks (nb None: mb) from process (0, 0)."""
        nb = mb if nb is None else nb
        lld = max(1, numroc(n, mb, self.myrow, 0, self.nprow))
        return np.array([1, self.ctxt, n, n, mb, nb, 0, 0, lld], dtype=np.intc)

    def empty(self, desc):
        """This rank's local array of a descriptor (float64, Fortran order, LLD_ rows)."""
        nloc = numroc(int(desc[3]), int(desc[5]), self.mycol, int(desc[7]), self.npcol)
        return np.zeros((int(desc[8]), max(1, nloc)), dtype=np.float64, order="F")

    def _index(self, desc):
        n, mb, nb = int(desc[2]), int(desc[4]), int(desc[5])
        mloc = numroc(n, mb, self.myrow, int(desc[6]), self.nprow)
        nloc = numroc(n, nb, self.mycol, int(desc[7]), self.npcol)
        r = np.arange(mloc)
        c = np.arange(nloc)
        gr = ((r // mb) * self.nprow + (self.myrow - int(desc[6])) % self.nprow) * mb + r % mb
        gc = ((c // nb) * self.npcol + (self.mycol - int(desc[7])) % self.npcol) * nb + c % nb
        return mloc, nloc, gr, gc

    def scatter(self, A, mb, nb=None):
        """(local array, descriptor) of the whole matrix A that every rank holds. LOCAL."""
        A = np.asarray(A, dtype=np.float64)
        desc = self.descriptor(A.shape[0], mb, nb)
        a = self.empty(desc)
        mloc, nloc, gr, gc = self._index(desc)
        a[:mloc, :nloc] = A[np.ix_(gr, gc)]
        return a, desc

    def gather(self, a, desc):
        """The whole matrix of a local array, on every rank. COLLECTIVE over comm."""
        n = int(desc[2])
        G = np.zeros((n, n))
        mloc, nloc, gr, gc = self._index(desc)
        G[np.ix_(gr, gc)] = a[:mloc, :nloc]
        return self.comm.allreduce(G, op=MPI.SUM)

    def close(self):
        """Free the BLACS context. COLLECTIVE."""
        if self.ctxt is not None:
            lib.Cblacs_gridexit(self.ctxt)
            self.ctxt = None


def _local(a, what, write=True):
    if not isinstance(a, np.ndarray) or a.dtype != np.float64 or not a.flags.f_contiguous or (
            write and not a.flags.writeable):
        raise TypeError(f"{what} must be a writable float64 numpy array in Fortran order (BlacsGrid.empty makes one)")
    return a.ctypes.data_as(_dp)


def _desc(desc, what):
    d = np.ascontiguousarray(desc, dtype=np.intc)
    if d.shape != (9,):
        raise ValueError(f"{what} must hold the 9 integers of a ScaLAPACK descriptor")
    return d, d.ctypes.data_as(_ip)


class DM:
    """ovl_dm: the handle for an n x n problem with n_electrons electrons (nspin 1: occupation 2; nspin 2:
    occupation 1 per spin) on a BlacsGrid (or a BLACS context, an int). COLLECTIVE."""

    def __init__(self, grid, n, n_electrons, nspin=1):
        self.grid = grid if isinstance(grid, BlacsGrid) else None
        ctxt = grid.ctxt if isinstance(grid, BlacsGrid) else int(grid)
        self._h = ctypes.c_void_p()
        _check(lib.ovl_dm_create(ctxt, int(n), float(n_electrons), int(nspin), ctypes.byref(self._h)))
        self.n, self.nspin = int(n), int(nspin)

    def set(self, name, value):
        """An option by the command line's name ("method", "tol", "ndup", "homo", "n_electrons_up", ...). LOCAL."""
        if isinstance(value, bool):
            value = "1" if value else "0"
        elif isinstance(value, float):
            value = repr(value)
        _check(lib.ovl_dm_set(self._h, str(name).encode(), str(value).encode()))

    def get(self, name):
        """The option's value as a string. LOCAL."""
        buf = ctypes.create_string_buffer(256)
        _check(lib.ovl_dm_get(self._h, str(name).encode(), buf, len(buf)))
        return buf.value.decode()

    def set_overlap(self, s=None, desc=None):
        """S (local array and descriptor), factorised once; None: an orthonormal basis again. COLLECTIVE."""
        if s is None:
            _check(lib.ovl_dm_set_overlap(self._h, None, None))
            return
        d, dp = _desc(desc, "desc")
        _check(lib.ovl_dm_set_overlap(self._h, _local(s, "s", False), dp))

    def solve(self, f, descf, ispin=0, d=None, descd=None, energy_weighted=False, w=None, descw=None):
        """(D, W) of channel ispin (W None unless energy_weighted) as local arrays; D and W in F's layout unless
        given. COLLECTIVE."""
        df, dfp = _desc(descf, "descf")
        descd = df if descd is None else descd
        dd, ddp = _desc(descd, "descd")
        if d is None:
            d = np.zeros_like(f, order="F")
        wp = wdp = None
        if energy_weighted:
            descw = df if descw is None else descw
            dw, wdp = _desc(descw, "descw")
            if w is None:
                w = np.zeros_like(f, order="F")
            wp = _local(w, "w")
        else:
            w = None
        _check(lib.ovl_dm_solve(self._h, int(ispin), _local(f, "f", False), dfp, _local(d, "d"), ddp, wp, wdp))
        return d, w

    def results(self, ispin=0):
        """What the last solve of channel ispin did: mu, energy, homo, lumo, iterations, warm, factorizations,
        times, plan (a dict). LOCAL."""
        r = DmResults()
        _check(lib.ovl_dm_get_results(self._h, int(ispin), ctypes.byref(r)))
        return r.as_dict()

    def destroy(self):
        """Free the handle. COLLECTIVE."""
        if self._h:
            _check(lib.ovl_dm_destroy(ctypes.byref(self._h)))
        self._h = ctypes.c_void_p()

    close = destroy

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
        return False
