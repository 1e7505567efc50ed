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
    return lib


lib = _load()
