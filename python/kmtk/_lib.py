"""ctypes declarations of libkmtk (common/kmtk.h) and the search for the library.

The library is found, in order: the file named by the environment variable KMTK_LIB; the
build tree next to this package (python/kmtk -> ../../lib/libkmtk.so.0, what `make` builds);
the system loader (libkmtk.so.0 as installed by `make install`, LD_LIBRARY_PATH).
"""
import ctypes
import ctypes.util
import os

from ctypes import POINTER, c_char, c_char_p, c_double, c_int, c_int32, c_int64, c_void_p

SONAME = "libkmtk.so.0"


class Error(Exception):
    """An error reported by libkmtk: .code is its km_error code (1 usage, 2 input or I/O,
    3 internal), .message its one-line message ("FILE:LINE:COL: what" for input)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class KmError(ctypes.Structure):
    _fields_ = [("code", c_int), ("msg", c_char * 1024)]


class KmProblem(ctypes.Structure):
    _fields_ = [("l", c_int64), ("nnz", c_int64), ("n", c_int32),
                ("row_ptr", POINTER(c_int64)), ("index", POINTER(c_int32)),
                ("value", POINTER(c_double)), ("y", POINTER(c_double)),
                ("nout", c_int32), ("qid", POINTER(c_int64)),
                ("id", POINTER(c_int64))]


class KmReport(ctypes.Structure):
    _fields_ = [("text", c_char_p), ("nr_warnings", c_int), ("warnings", POINTER(c_char_p)),
                ("objective", c_double), ("gap", c_double), ("converged", c_int)]


class KmModel(ctypes.Structure):   # the envelope every model has (struct km_model)
    _fields_ = [("kind", c_void_p), ("body", c_void_p), ("loss", c_int),
                ("C", c_double), ("eps", c_double), ("bias", c_double), ("n", c_int32),
                ("nr_class", c_int), ("labels", POINTER(c_double)),
                ("label_weight", POINTER(c_double)), ("nr_w", c_int),
                ("nr_output", c_int64)]


P_ERR = POINTER(KmError)
P_PROBLEM = POINTER(KmProblem)
P_MODEL = POINTER(KmModel)

# name: (restype, argtypes)
_PROTOTYPES = {
    "km_svmlight_read": (c_int, [c_char_p, POINTER(P_PROBLEM), P_ERR]),
    "km_problem_check": (c_int, [P_PROBLEM, P_ERR]),
    "km_problem_free": (None, [P_PROBLEM]),
    "km_params_new": (c_void_p, []),
    "km_params_set": (c_int, [c_void_p, c_char_p, c_char_p, P_ERR]),
    "km_params_free": (None, [c_void_p]),
    "km_params_set_weights": (c_int, [c_void_p, POINTER(c_double), c_int64, P_ERR]),
    "km_method_find": (c_void_p, [c_char_p]),
    "km_method_count": (c_int, []),
    "km_method_at": (c_void_p, [c_int]),
    "km_method_name": (c_char_p, [c_void_p]),
    "km_method_classifies": (c_int, [c_void_p]),
    "km_method_check": (c_int, [c_void_p, c_void_p, P_ERR]),
    "km_method_help": (c_void_p, [c_void_p]),
    "km_method_train": (c_int, [c_void_p, P_PROBLEM, c_void_p, POINTER(P_MODEL),
                                POINTER(KmReport), P_ERR]),
    "km_method_cross_validate": (c_int, [c_void_p, P_PROBLEM, c_void_p, c_int,
                                         POINTER(c_double), POINTER(KmReport), P_ERR]),
    "km_report_free": (None, [POINTER(KmReport)]),
    "km_model_write": (c_int, [P_MODEL, c_char_p, P_ERR]),
    "km_model_read": (c_int, [c_char_p, POINTER(P_MODEL), P_ERR]),
    "km_model_free": (None, [P_MODEL]),
    "km_model_predict_all": (c_int, [P_MODEL, P_PROBLEM, POINTER(c_double),
                                     POINTER(c_double), POINTER(c_double), c_int, P_ERR]),
    "km_model_has_probability": (c_int, [P_MODEL]),
    "km_predict_proba": (c_int, [P_MODEL, P_PROBLEM, POINTER(c_double), P_ERR]),
}


def _candidates():
    env = os.environ.get("KMTK_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "lib", SONAME)   # the build tree (make)
    yield SONAME                                           # the system loader
    found = ctypes.util.find_library("kmtk")
    if found:
        yield found


def load():
    """The library (ctypes.CDLL) with its prototypes; ImportError naming what was tried."""
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (absent)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        for name, (res, args) in _PROTOTYPES.items():
            f = getattr(lib, name)
            f.restype = res
            f.argtypes = args
        return lib, path
    raise ImportError("kmtk: libkmtk not found; build it with make, install it, or set "
                      "KMTK_LIB to its path. Tried: " + "; ".join(tried))


lib, path = load()
libc = ctypes.CDLL(None)
libc.free.argtypes = [c_void_p]
libc.free.restype = None


def _blas_threads_fns():
    """OpenBLAS's thread setters (libkmtk's dependency), or None: the command-line tools run
    OpenBLAS on one thread around training and single-output prediction, and so do we."""
    try:
        s, g = lib.openblas_set_num_threads, lib.openblas_get_num_threads
    except AttributeError:
        return None
    s.argtypes, s.restype, g.argtypes, g.restype = [c_int], None, [], c_int
    return s, g


blas_threads = _blas_threads_fns()


class blas_threads_as:
    """with blas_threads_as(n): OpenBLAS on n threads inside, the caller's count after."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        if blas_threads:
            self.old = blas_threads[1]()
            blas_threads[0](self.n)

    def __exit__(self, *exc):
        if blas_threads:
            blas_threads[0](self.old)


def check(rc, err):
    """Raises Error when rc is not KM_OK."""
    if rc:
        raise Error(err.code or rc, err.msg.decode("utf-8", "replace"))
