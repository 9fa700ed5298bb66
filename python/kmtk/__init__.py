"""kmtk: the kernel machines toolkit from Python (ctypes over libkmtk, common/kmtk.h).

    import kmtk
    X, y, qid = kmtk.read_svmlight("data/heart_scale")    # scipy.sparse CSR, labels, None
    model = kmtk.train(X, y, method="l1svm", kernel="rbf", gamma=0.05, C=1)
    labels, dec = kmtk.predict(model, X)                   # what `predict` and `predict -d` write
    kmtk.save(model, "heart.model")                        # the file `train` writes

Parameters are the method table's option names (`train -s METHOD -h`; kmtk.method_help):
C=, kernel=, gamma=, degree=, coef0=, bias=, tolerance=, threads=, ... (a command-line flag
works too: **{"-c": 4}); True sets a switch; weight={label: w} the per-class C multipliers.
Every failure raises kmtk.Error with the library's message. See doc/python.md.
"""
import collections
import os

import ctypes
import numpy as np
import scipy.sparse as sp

from . import _lib
from ._lib import Error

__all__ = ["Error", "Model", "Prediction", "CrossValidation", "train", "predict", "predict_proba",
           "cross_validate", "rls2_train", "load", "save", "read_svmlight", "methods", "method_help",
           "KernelSVC", "KernelRidge", "RLS2", "OKL"]

_c = _lib.lib
Prediction = collections.namedtuple("Prediction", "labels decision_values")
CrossValidation = collections.namedtuple(
    "CrossValidation", "predictions accuracy mean_squared_error squared_correlation")


def _path(p):
    return os.fsencode(p)


def _method(name):
    m = _c.km_method_find(str(name).encode())
    if not m:
        raise Error(1, "unknown method '%s' (%s)" % (name, ", ".join(methods())))
    return m


def methods():
    """The names of the methods in the method table (train -h)."""
    return [_c.km_method_name(_c.km_method_at(i)).decode() for i in range(_c.km_method_count())]


def method_help(method):
    """A method's options and their defaults, as `train -s METHOD -h` prints them."""
    p = _c.km_method_help(_method(method))
    if not p:
        raise Error(3, "out of memory")
    try:
        return ctypes.string_at(p).decode()
    finally:
        _lib.libc.free(p)


def _value_text(v):
    if isinstance(v, (bool, np.bool_)):
        return ""
    if isinstance(v, (float, np.floating)):
        return repr(float(v))   # the shortest text that reads back to the same double
    return str(v)


class _Params:
    """A km_params set from keyword arguments (None and False: not set)."""

    def __init__(self, params):
        self.p = _c.km_params_new()
        if not self.p:
            raise Error(3, "out of memory")
        err = _lib.KmError()
        try:
            for name, v in params.items():
                if name == "sample_weight" and v is not None:   # instance weights, copied
                    w = np.ascontiguousarray(v, dtype=np.float64).ravel()
                    _lib.check(_c.km_params_set_weights(
                        self.p, w.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), len(w),
                        err), err)
                    continue
                if v is None or v is False or (isinstance(v, np.bool_) and not v):
                    continue
                items = ([("%s:%s" % (_value_text(k), _value_text(w))) for k, w in v.items()]
                         if isinstance(v, dict) else [_value_text(v)])
                for text in items:
                    _lib.check(_c.km_params_set(self.p, name.encode(), text.encode(), err), err)
        except BaseException:
            self.close()
            raise

    def close(self, _free=_c.km_params_free):
        if self.p:
            _free(self.p)
            self.p = None

    def __del__(self):
        self.close()


class _Problem:
    """A km_problem over the caller's arrays: X as CSR (converted only when it is not CSR
    with sorted, distinct float64 entries and int32 indices; row pointers as int64), y as
    float64 (l or l x m), qid as int64. Checked by the library (km_problem_check)."""

    def __init__(self, X, y=None, qid=None):
        X = _as_csr(X)
        l, n = X.shape
        if n >= 2 ** 31 or (X.nnz and X.indices.max(initial=0) >= 2 ** 31):
            raise Error(1, "more than 2^31 - 1 features")
        self.X = X
        self.indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        self.indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        self.data = np.ascontiguousarray(X.data, dtype=np.float64)
        nout = 1
        if y is None:
            self.y = np.zeros(l)
        else:
            self.y = np.ascontiguousarray(y, dtype=np.float64)
            if self.y.ndim == 2 and self.y.shape[1] == 1:
                self.y = self.y.reshape(-1)
            if self.y.ndim == 2:
                nout = self.y.shape[1]
            if self.y.ndim not in (1, 2) or self.y.shape[0] != l:
                raise Error(1, "y has shape %s; X has %d rows" % (self.y.shape, l))
        self.qid = None if qid is None else np.ascontiguousarray(qid, dtype=np.int64)
        if self.qid is not None and self.qid.shape != (l,):
            raise Error(1, "qid has shape %s; X has %d rows" % (self.qid.shape, l))
        P = _lib.KmProblem()
        P.l, P.nnz, P.n, P.nout = l, X.nnz, n, nout if nout > 1 else 0
        P.row_ptr = self.indptr.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        P.index = self.indices.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))
        P.value = self.data.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        P.y = self.y.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        if self.qid is not None:
            P.qid = self.qid.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        self.P = P
        err = _lib.KmError()
        _lib.check(_c.km_problem_check(ctypes.byref(P), err), err)

    @property
    def ref(self):
        return ctypes.byref(self.P)


def _as_csr(X):
    if sp.issparse(X):
        X = X.tocsr() if X.format != "csr" else X
    else:
        a = np.asarray(X)
        if a.ndim != 2:
            raise Error(1, "X must be 2-D (rows x features), not of shape %s" % (a.shape,))
        X = sp.csr_matrix(a.astype(np.float64, copy=False))
    if not X.has_canonical_format:   # sorted indices without duplicates, as the library needs
        X = X.copy()
        X.sum_duplicates()
    return X


class _Report:
    def __init__(self):
        self.r = _lib.KmReport()

    def take(self, obj):
        r = self.r
        obj.objective, obj.gap, obj.converged = r.objective, r.gap, bool(r.converged)
        obj.summary = r.text.decode() if r.text else ""
        obj.warnings = [r.warnings[i].decode() for i in range(r.nr_warnings)]

    def __del__(self, _free=_c.km_report_free, _byref=ctypes.byref):
        _free(_byref(self.r))


class Model:
    """A trained or loaded model (a km_model). Attributes: n_features (features 1..n were
    seen in training), classes (ascending labels; empty for regression), n_decision
    (decision values per row), n_outputs (multi-output models, else 0), has_probability
    (predict_proba applies: logreg, or trained with probability=1), and after training
    objective, gap, converged, summary (train's summary lines), warnings."""

    def __init__(self, ptr):
        self._m = ptr
        e = ptr.contents
        self.n_features = e.n
        self.classes = np.array([e.labels[k] for k in range(e.nr_class)])
        self.n_decision = e.nr_w
        self.n_outputs = e.nr_output
        self.has_probability = bool(_c.km_model_has_probability(ptr))
        self.objective = self.gap = float("nan")
        self.converged, self.summary, self.warnings = None, "", []

    def __del__(self, _free=_c.km_model_free):   # (bound now: safe at interpreter exit)
        if getattr(self, "_m", None):
            _free(self._m)
            self._m = None

    def __repr__(self):
        return "<kmtk.Model: %d features, %s, %d decision values per row>" % (
            self.n_features, "classes %s" % list(self.classes) if len(self.classes)
            else "%d outputs" % self.n_outputs if self.n_outputs else "regression",
            self.n_decision)

    # pickling (sklearn's clone and checks): the model file's text
    def __getstate__(self):
        import tempfile
        d = {k: v for k, v in self.__dict__.items() if k != "_m"}
        with tempfile.TemporaryDirectory() as t:
            save(self, os.path.join(t, "m"))
            with open(os.path.join(t, "m"), "rb") as f:
                d["_file"] = f.read()
        return d

    def __setstate__(self, d):
        import tempfile
        d = dict(d)
        text = d.pop("_file")
        with tempfile.TemporaryDirectory() as t:
            with open(os.path.join(t, "m"), "wb") as f:
                f.write(text)
            other = load(os.path.join(t, "m"))
        self._m, other._m = other._m, None
        self.__dict__.update(d)


def train(X, y, method="l1svm", qid=None, **params):
    """Trains `method` (a row of the method table: l1svm, l2svm, rls, rla, svr, okl, mtl,
    mtmkl, polymkl, ...) on rows X (scipy.sparse or a 2-D array) with labels y (l, or l x m
    for multi-output methods) and task ids qid; returns a Model bit for bit `train`'s on the
    same data and options."""
    m = _method(method)
    prob = _Problem(X, y, qid)
    par = _Params(params)
    err, rep = _lib.KmError(), _Report()
    out = _lib.P_MODEL()
    try:   # OpenBLAS on one thread, as train does: the solvers thread by themselves
        with _lib.blas_threads_as(1):
            rc = _c.km_method_train(m, prob.ref, par.p, ctypes.byref(out), ctypes.byref(rep.r),
                                    err)
    finally:
        par.close()
    _lib.check(rc, err)
    model = Model(out)
    rep.take(model)
    return model


def cross_validate(X, y, folds=5, method="l1svm", qid=None, **params):
    """k-fold cross-validation as `train -v folds`: the prediction of every row by the model
    that did not see it, and accuracy (%) for classification methods or the mean squared
    error and squared correlation for regression (the others None)."""
    m = _method(method)
    prob = _Problem(X, y, qid)
    par = _Params(params)
    err, rep = _lib.KmError(), _Report()
    pred = np.empty(prob.P.l)
    try:
        with _lib.blas_threads_as(1):
            rc = _c.km_method_cross_validate(
                m, prob.ref, par.p, int(folds),
                pred.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ctypes.byref(rep.r), err)
    finally:
        par.close()
    _lib.check(rc, err)
    yt = prob.y if prob.y.ndim == 1 else prob.y[:, 0]
    if _c.km_method_classifies(m):
        return CrossValidation(pred, 100.0 * np.count_nonzero(pred == yt) / len(yt), None, None)
    n = float(len(yt))
    sy, sp_, syy, spp, syp = yt.sum(), pred.sum(), yt @ yt, pred @ pred, yt @ pred
    den = (n * spp - sp_ * sp_) * (n * syy - sy * sy)
    scc = (n * syp - sp_ * sy) ** 2 / den if den > 0 else 0.0
    return CrossValidation(pred, None, float(np.mean((pred - yt) ** 2)), float(scc))


def predict(model, X, qid=None, threads=None):
    """Predictions of every row of X: (labels, decision_values), bit for bit `predict`'s
    and `predict -d`'s. labels: l labels (classification) or values (regression); a
    multi-output model's outputs (l x m). decision_values: l x n_decision (a multi-output
    model's codes). qid: the rows' tasks (multi-task models). threads: None = predict's
    default (the online cores)."""
    prob = _Problem(X, None, qid)
    l, e = prob.P.l, model._m.contents
    dec = np.empty((l, e.nr_w))
    multi = e.nr_output > 0
    out = np.empty((l, e.nr_output)) if multi else None
    pred = np.empty(l)
    dp = ctypes.POINTER(ctypes.c_double)
    err = _lib.KmError()
    # OpenBLAS on one thread, as predict runs it (its results depend on its thread count)
    with _lib.blas_threads_as(1):
        rc = _c.km_model_predict_all(
            model._m, prob.ref, dec.ctypes.data_as(dp), pred.ctypes.data_as(dp),
            out.ctypes.data_as(dp) if multi else None, int(threads or 0), err)
    _lib.check(rc, err)
    return Prediction(out if multi else pred, dec)


def predict_proba(model, X, qid=None):
    """Class probabilities of every row of X (l x classes, columns in model.classes' order),
    bit for bit `predict -b 1`'s: logistic regression (method logreg) gives them directly,
    the SVMs when trained with probability=1 (Platt's sigmoid, as `train -b 1`).
    kmtk.Error when the model has none (model.has_probability)."""
    prob = _Problem(X, None, qid)
    e = model._m.contents
    out = np.empty((prob.P.l, e.nr_class))
    err = _lib.KmError()
    with _lib.blas_threads_as(1):
        rc = _c.km_predict_proba(model._m, prob.ref,
                                 out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), err)
    _lib.check(rc, err)
    return out


def save(model, path):
    """Writes the model file (atomically: a temporary file, then a rename)."""
    err = _lib.KmError()
    _lib.check(_c.km_model_write(model._m, _path(path), err), err)


def load(path):
    """Reads a model file written by train, rls2-path, save, ..."""
    err = _lib.KmError()
    out = _lib.P_MODEL()
    _lib.check(_c.km_model_read(_path(path), ctypes.byref(out), err), err)
    return Model(out)


def _adopt(ptr, count, ctype, dtype, owner):
    """A numpy array over count items of library memory; owner frees it when the last
    array (or view) over it is gone."""
    if count == 0:
        return np.empty(0, dtype)
    buf = (ctype * count).from_address(ctypes.cast(ptr, ctypes.c_void_p).value)
    buf._owner = owner
    return np.frombuffer(buf, dtype=dtype)


class _OwnedProblem:
    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self, _free=_c.km_problem_free):
        _free(self.ptr)


def read_svmlight(path):
    """Reads svmlight/libsvm text (plain or gzip; "-" is standard input) with the C reader
    every kmtk tool uses: returns (X, y, qid), X a scipy.sparse.csr_matrix (l x n, n the
    largest feature index), y the labels (l, or l x m for multi-output data), qid the task
    ids (int64; every row has one or none does) or None. The arrays are the reader's own (no
    copies). Malformed input raises Error "FILE:LINE:COL: what"."""
    err = _lib.KmError()
    ptr = _lib.P_PROBLEM()
    _lib.check(_c.km_svmlight_read(_path(path), ctypes.byref(ptr), err), err)
    owner = _OwnedProblem(ptr)
    P = ptr.contents
    nout = P.nout if P.nout > 1 else 1
    row_ptr = _adopt(P.row_ptr, P.l + 1, ctypes.c_int64, np.int64, owner)
    index = _adopt(P.index, P.nnz, ctypes.c_int32, np.int32, owner)
    value = _adopt(P.value, P.nnz, ctypes.c_double, np.float64, owner)
    y = _adopt(P.y, P.l * nout, ctypes.c_double, np.float64, owner)
    qid = _adopt(P.qid, P.l, ctypes.c_int64, np.int64, owner) if P.qid else None
    if nout > 1:
        y = y.reshape(P.l, nout)
    if P.nnz < 2 ** 31:   # scipy wants one index type: int32 row pointers (l + 1 copied)
        row_ptr = row_ptr.astype(np.int32)
    else:
        index = index.astype(np.int64)
    X = sp.csr_matrix((value, index, row_ptr), shape=(P.l, P.n), copy=False)
    return X, y, qid


class _RLS2Options(ctypes.Structure):
    _fields_ = [("kernels", ctypes.c_char_p), ("scale", ctypes.c_char_p),
                ("center", ctypes.c_int), ("lambda_min", ctypes.c_double),
                ("lambda_max", ctypes.c_double), ("lambdas", ctypes.c_int),
                ("tolerance", ctypes.c_double), ("max_iter", ctypes.c_int),
                ("task", ctypes.c_int), ("no_intercept", ctypes.c_int),
                ("folds", ctypes.c_int), ("one_se", ctypes.c_int),
                ("seed", ctypes.c_int64), ("threads", ctypes.c_int)]


_c.km_rls2_options_default.argtypes = [ctypes.POINTER(_RLS2Options)]
_c.km_rls2_options_default.restype = None
_c.km_rls2_train.argtypes = [_lib.P_PROBLEM, ctypes.POINTER(_RLS2Options),
                                   ctypes.POINTER(_lib.P_MODEL), _lib.P_ERR]
_c.km_rls2_train.restype = ctypes.c_int


def rls2_train(X, y, **options):
    """The model `rls2-path` writes for X, y with these options (km_rls2_options names:
    kernels, scale, center, lambda_min, lambda_max, lambdas, tolerance, max_iter, task
    (1 classes, 0 regression, None: rls2-path's guess), no_intercept, folds, one_se, seed,
    threads)."""
    o = _RLS2Options()
    _c.km_rls2_options_default(ctypes.byref(o))
    keep = []
    for k, v in options.items():
        if k not in dict(_RLS2Options._fields_):
            raise Error(1, "rls2: unknown option '%s'" % k)
        if v is None:
            continue
        if k in ("kernels", "scale"):
            v = str(v).encode()
            keep.append(v)
        setattr(o, k, int(v) if isinstance(v, (bool, np.bool_)) else v)
    prob = _Problem(X, y)
    out, err = _lib.P_MODEL(), _lib.KmError()
    with _lib.blas_threads_as(1):   # as rls2-path does
        rc = _c.km_rls2_train(prob.ref, ctypes.byref(o), ctypes.byref(out), err)
    _lib.check(rc, err)
    return Model(out)


try:   # the scikit-learn estimators, when scikit-learn is there
    from .estimators import KernelSVC, KernelRidge, RLS2, OKL   # noqa: E402,F401
except ImportError:   # pragma: no cover
    __all__ = [n for n in __all__ if n not in ("KernelSVC", "KernelRidge", "RLS2", "OKL")]
