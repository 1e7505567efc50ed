"""ctypes declarations of libovl.so's dense entries (ovl/dense.h): whole matrices and row blocks.

The library is found, in this order, at $OVL_LIBRARY (a path to a
libovl.so, e.g. an in-tree build's build/src/libovl.so) or beside this file
(where ``pip install`` puts it). ctypes.CDLL releases the GIL around every
foreign call, so other Python threads run while ovl computes.
"""
import ctypes
import os

from mpi4py import MPI  # noqa: F401  (initialises MPI before the library is used)


class DenseInfo(ctypes.Structure):
    _fields_ = [
        ("iterations", ctypes.c_int),
        ("products", ctypes.c_int),
        ("idem_err", ctypes.c_double),
        ("trace_err", ctypes.c_double),
        ("energy", ctypes.c_double),
        ("t_total", ctypes.c_double),
        ("t_kernel", ctypes.c_double),
        ("stop_reason", ctypes.c_char * 32),
        ("plan", ctypes.c_char * 192),
        ("why", ctypes.c_char * 640),
    ]

    def as_dict(self):
        d = {name: getattr(self, name) for name, _ in self._fields_}
        for k in ("stop_reason", "plan", "why"):
            d[k] = d[k].decode(errors="replace")
        return d


class PdpurifyParams(ctypes.Structure):
    """ovl_pdpurify_params (ovl/pdpurify.h); the enums are C ints, filled from their names by the library's parsers."""
    _fields_ = [
        ("method", ctypes.c_int),
        ("algo", ctypes.c_int),
        ("ndup", ctypes.c_int),
        ("prec", ctypes.c_int),
        ("tol", ctypes.c_double),
        ("max_iter", ctypes.c_int),
        ("c", ctypes.c_int),
        ("verbose", ctypes.c_int),
        ("options", ctypes.c_char_p),
        ("homo", ctypes.c_double),
        ("lumo", ctypes.c_double),
        ("sparse", ctypes.c_double),
        ("sparse_block", ctypes.c_int),
    ]


class PdpurifyInfo(ctypes.Structure):
    """ovl_pdpurify_info (ovl/pdpurify.h)."""
    _fields_ = [
        ("iterations", ctypes.c_int),
        ("idem_err", ctypes.c_double),
        ("trace_err", ctypes.c_double),
        ("homo", ctypes.c_double),
        ("lumo", ctypes.c_double),
        ("s", ctypes.c_int),
        ("c", ctypes.c_int),
        ("t_total", ctypes.c_double),
        ("t_purify", ctypes.c_double),
        ("t_redist", ctypes.c_double),
        ("t_overlap", ctypes.c_double),
        ("t_mu", ctypes.c_double),
        ("stop_reason", ctypes.c_char_p),
        ("plan", ctypes.c_char * 192),
    ]

    def as_dict(self):
        d = {name: getattr(self, name) for name, _ in self._fields_}
        for k in ("stop_reason", "plan"):
            d[k] = (d[k] or b"").decode(errors="replace")
        return d


def library_path():
    env = os.environ.get("OVL_LIBRARY")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libovl.so")


def _load():
    path = library_path()
    if not os.path.exists(path):
        raise ImportError(f"ovl: the library {path} does not exist (install the package with pip, "
                          "or set OVL_LIBRARY to a built libovl.so)")
    lib = ctypes.CDLL(path)
    dp = ctypes.POINTER(ctypes.c_double)
    i64 = ctypes.c_int64
    lib.ovl_purify_dense.argtypes = [ctypes.c_void_p, i64, dp, i64, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                     ctypes.c_char_p, ctypes.c_double, ctypes.c_int, dp, ctypes.c_char_p,
                                     ctypes.POINTER(DenseInfo)]
    lib.ovl_purify_dense.restype = ctypes.c_int
    lib.ovl_gemm_dense.argtypes = [ctypes.c_void_p, i64, i64, i64, dp, dp, dp, ctypes.c_char_p, ctypes.c_char_p,
                                   ctypes.POINTER(DenseInfo)]
    lib.ovl_gemm_dense.restype = ctypes.c_int
    lib.ovl_purify_rows.argtypes = [ctypes.c_void_p, i64, i64, dp, i64, i64, ctypes.c_char_p, ctypes.c_char_p,
                                    ctypes.c_int, ctypes.c_char_p, ctypes.c_double, ctypes.c_int, dp, i64,
                                    ctypes.c_char_p, ctypes.POINTER(DenseInfo)]
    lib.ovl_purify_rows.restype = ctypes.c_int
    lib.ovl_gemm_rows.argtypes = [ctypes.c_void_p, i64, i64, i64, i64, dp, i64, i64, dp, i64, dp, i64,
                                  ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(DenseInfo)]
    lib.ovl_gemm_rows.restype = ctypes.c_int
    lib.ovl_errmsg.argtypes = []
    lib.ovl_errmsg.restype = ctypes.c_char_p
    lib.ovl_err_name.argtypes = [ctypes.c_int]
    lib.ovl_err_name.restype = ctypes.c_char_p
    lib.ovl_version.argtypes = []
    lib.ovl_version.restype = ctypes.c_char_p
    ip = ctypes.POINTER(ctypes.c_int)
    lib.ovl_pdpurify_params_default.argtypes = []
    lib.ovl_pdpurify_params_default.restype = PdpurifyParams
    lib.ovl_pdpurify.argtypes = [dp, ip, dp, ip, i64, dp, ip, dp, ip, ctypes.POINTER(PdpurifyParams),
                                 dp, dp, ctypes.POINTER(PdpurifyInfo)]
    lib.ovl_pdpurify.restype = ctypes.c_int
    for parse in ("ovl_purify_method_parse", "ovl_purify_prec_parse", "ovl_algo_parse"):
        getattr(lib, parse).argtypes = [ctypes.c_char_p, ip]
        getattr(lib, parse).restype = ctypes.c_int
    return lib


def blacs(lib):
    """The BLACS entries of the ScaLAPACK libovl.so is linked with (None when it has none: then
    ovl_pdpurify returns OVL_ERR_UNSUPPORTED). The MPI_Comm argument of Csys2blacs_handle is passed by
    value: a pointer in Open MPI, an int in MPICH (mpi4py knows its size)."""
    try:
        b = {k: getattr(lib, k) for k in ("Csys2blacs_handle", "Cfree_blacs_system_handle", "Cblacs_gridinit",
                                          "Cblacs_gridexit")}
    except AttributeError:
        return None
    comm_t = ctypes.c_int if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_int) else ctypes.c_void_p
    b["comm_t"] = comm_t
    b["Csys2blacs_handle"].argtypes = [comm_t]
    b["Csys2blacs_handle"].restype = ctypes.c_int
    b["Cfree_blacs_system_handle"].argtypes = [ctypes.c_int]
    b["Cfree_blacs_system_handle"].restype = None
    b["Cblacs_gridinit"].argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    b["Cblacs_gridinit"].restype = None
    b["Cblacs_gridexit"].argtypes = [ctypes.c_int]
    b["Cblacs_gridexit"].restype = None
    return b


lib = _load()
