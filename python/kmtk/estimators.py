"""scikit-learn estimators over kmtk: KernelSVC, KernelRidge, RLS2, OKL.

Each passes its parameters to the library under the method table's option names (None:
the library's default), so `KernelSVC(C=4, kernel="rbf", gamma=0.05).fit(X, y)` trains the
model `train -s l1svm -c 4 -t rbf -g 0.05` does. The fitted model is .model_ (a kmtk.Model;
kmtk.save writes it). KernelSVC(probability=True) or loss="logreg" gives predict_proba.
"""
import ctypes

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import predict, predict_proba, rls2_train, train


# Checks of sklearn.utils.estimator_checks that do not apply, and why.
_XFAIL = {"check_non_transformer_estimators_n_iter":
          "the library reports its iterations in text (model_.summary), not as n_iter_"}


# The options of the kernel methods (train -s l1svm, l2svm, logreg, rls) the estimators pass.
_KERNEL_OPTIONS = ("C", "kernel", "gamma", "degree", "coef0", "tolerance", "threads",
                   "max_iter", "seed", "cache", "rule", "solver")


class _KmtkEstimator(BaseEstimator):
    _method = None
    _options = ()   # the constructor's parameters that are library options

    def _keep(self, params):
        """The constructor's parameters as attributes of the same names (sklearn's
        convention): params is the constructor's locals()."""
        for k, v in params.items():
            if k != "self":
                setattr(self, k, v)

    def _params(self):
        return {k: getattr(self, k) for k in self._options}

    def _fit_data(self, X, y, **kw):
        return self._validate_data(X, y, accept_sparse="csr", dtype=np.float64, reset=True,
                                   **kw)

    def _check_X(self, X):
        return self._validate_data(X, accept_sparse="csr", dtype=np.float64, reset=False)

    def _predicted(self, X):
        """The fitted model's prediction of X (labels and decision values)."""
        check_is_fitted(self, "model_")
        return predict(self.model_, self._check_X(X), threads=self.threads)

    def _decision(self, X):
        dec = self._predicted(X).decision_values
        return dec[:, 0] if dec.shape[1] == 1 else dec

    def _class_codes(self, y, name):
        """Sets classes_ and the library's labels of y's classes; y's class indices (name:
        the estimator's, for the error of fewer than 2 classes)."""
        check_classification_targets(y)
        self.classes_, code = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError("%s needs at least 2 classes in y; got 1 class" % name)
        self._labels = _library_labels(self.classes_)
        return code

    def _classes_of(self, labels):
        """The classes_ of the library's labels."""
        return self.classes_[np.searchsorted(self._labels, labels)]

    def _more_tags(self):
        return {"requires_y": True, "_xfail_checks": _XFAIL}


class KernelSVC(ClassifierMixin, _KmtkEstimator):
    """Kernel support vector classification (thesis Algorithm 1; no offset b):
    loss="l1svm" (hinge, the default), "l2svm" (squared hinge) or "logreg" (logistic),
    one-versus-all for more than two classes. Parameters as `train -s LOSS -h` names them;
    probability=True fits Platt's sigmoid by internal 5-fold CV (`train -b 1`) for
    predict_proba, which logreg has without it."""
    _options = _KERNEL_OPTIONS

    def __init__(self, C=1.0, kernel="rbf", gamma=None, degree=None, coef0=None, loss="l1svm",
                 tolerance=None, threads=None, max_iter=None, seed=None, cache=None,
                 rule=None, solver=None, class_weight=None, probability=False):
        self._keep(locals())

    def fit(self, X, y):
        if self.loss not in ("l1svm", "l2svm", "logreg"):
            raise ValueError("loss must be 'l1svm', 'l2svm' or 'logreg', not %r" % (self.loss,))
        X, y = self._fit_data(X, y)
        code = self._class_codes(y, "KernelSVC")
        weight = None
        if self.class_weight is not None:   # {class: multiplier of C}
            index = {c: k for k, c in enumerate(self.classes_)}
            weight = {self._labels[index[c]]: w for c, w in self.class_weight.items()}
        prob = 1 if self.probability and self.loss != "logreg" else None
        self.model_ = train(X, self._labels[code], method=self.loss, weight=weight,
                            probability=prob, **self._params())
        return self

    def decision_function(self, X):
        """Decision values: l (two classes: > 0 means classes_[1]) or l x classes (one
        versus all)."""
        return self._decision(X)

    def predict(self, X):
        return self._classes_of(self._predicted(X).labels)

    def _has_proba(self):
        return bool(self.probability) or self.loss == "logreg"

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities, l x classes in classes_' order (`predict -b 1`'s values)."""
        check_is_fitted(self, "model_")
        p = predict_proba(self.model_, self._check_X(X))
        return p[:, np.searchsorted(self.model_.classes, self._labels)]

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def _more_tags(self):
        return {"requires_y": True, "_xfail_checks": dict(_XFAIL, check_class_weight_classifiers=(
            "the kernel solver has no offset b: far from the training rows the decision "
            "values tend to 0, whatever the class weights (LIBSVM's b absorbs them)"))}


class KernelRidge(RegressorMixin, _KmtkEstimator):
    """Regularized least squares with a kernel (method rls: C sum (y - f(x))^2/2 +
    ||f||^2/2, thesis Table 2.1; no offset b)."""
    _options = _KERNEL_OPTIONS

    def __init__(self, C=1.0, kernel="rbf", gamma=None, degree=None, coef0=None,
                 tolerance=None, threads=None, max_iter=None, seed=None, cache=None,
                 rule=None, solver=None):
        self._keep(locals())

    def fit(self, X, y):
        X, y = self._fit_data(X, y, y_numeric=True)
        self.model_ = train(X, y, method="rls", **self._params())
        return self

    def predict(self, X):
        return self._predicted(X).labels


class RLS2(_KmtkEstimator):
    """RLS2 multiple kernel learning along a regularization path (thesis ch. 4; the model
    `rls2-path` writes): a convex combination of basis kernels ("paper", "linear" or a
    kernel-list file) learned with the predictor; the lambda by k-fold cross-validation
    (folds, one_se) or the last of the path. task: "class", "reg" or None (rls2-path's
    guess). A classifier or a regressor by task: score() is accuracy or R^2 accordingly."""

    def __init__(self, kernels="paper", scale="trace", center=False, lambda_min=1e-6,
                 lambda_max=1e6, lambdas=30, tolerance=1e-2, max_iter=1000, task=None,
                 no_intercept=False, folds=0, one_se=False, seed=1, threads=1):
        self._keep(locals())

    def fit(self, X, y):
        X, y = self._fit_data(X, y, y_numeric=self.task == "reg")
        if self.task not in (None, "class", "reg"):
            raise ValueError("task must be 'class', 'reg' or None, not %r" % (self.task,))
        classes = self.task == "class" or (self.task is None and _looks_like_classes(y))
        if classes:
            code = self._class_codes(y, "RLS2")
            yl = self._labels[code]
        else:
            self.classes_ = None
            yl = np.asarray(y, dtype=np.float64)
        self.model_ = rls2_train(X, yl, kernels=self.kernels, scale=self.scale,
                                 center=self.center, lambda_min=self.lambda_min,
                                 lambda_max=self.lambda_max, lambdas=self.lambdas,
                                 tolerance=self.tolerance, max_iter=self.max_iter,
                                 task=None if self.task is None else int(classes),
                                 no_intercept=self.no_intercept, folds=self.folds,
                                 one_se=self.one_se, seed=self.seed, threads=self.threads)
        return self

    def decision_function(self, X):
        """Decision values (l; l x classes for more than two classes, one versus all)."""
        return self._decision(X)

    def predict(self, X):
        labels = self._predicted(X).labels
        return labels if self.classes_ is None else self._classes_of(labels)

    def score(self, X, y, sample_weight=None):
        check_is_fitted(self, "model_")
        mixin = ClassifierMixin if self.classes_ is not None else RegressorMixin
        return mixin.score(self, X, y, sample_weight)

    def _more_tags(self):
        return {"requires_y": True, "_xfail_checks": _XFAIL, "poor_score": True}


def _library_labels(classes):
    """The labels the library trains with for classes (sorted): the classes themselves when
    they are numbers (the model file then is the command line's), else 0..k-1."""
    if classes.dtype.kind in "iuf":
        return classes.astype(np.float64)
    return np.arange(len(classes), dtype=np.float64)


def _looks_like_classes(y):
    """rls2-path's guess: integers with at most 32 values (or labels that are not numbers)."""
    y = np.asarray(y)
    if y.dtype.kind not in "iuf":
        return True
    return bool(np.all(y == np.floor(y)) and len(np.unique(y)) <= 32)


class OKL(RegressorMixin, _KmtkEstimator):
    """Low-rank output kernel learning (seed 001, method okl): multi-output regression
    y (l x m) with a rank-p output kernel learned with the predictor along a lambda path.
    predict gives the m outputs; decision_function the p codes A'k(x)."""
    _options = ("kernel", "gamma", "degree", "coef0", "rank", "lambdas", "valid",
                "identity", "plain", "tolerance", "max_iter", "threads")

    def __init__(self, kernel="rbf", gamma=None, degree=None, coef0=None, rank=None,
                 lambdas=None, valid=None, identity=False, plain=False, tolerance=None,
                 max_iter=None, threads=None):
        self._keep(locals())

    def fit(self, X, y):
        X, y = self._fit_data(X, y, multi_output=True, y_numeric=True)
        self._1d = y.ndim == 1
        Y = y.reshape(-1, 1) if self._1d else y
        if Y.shape[1] == 1:   # the library's multi-output rows need m >= 2: pad a zero
            Y = np.hstack([Y, np.zeros((Y.shape[0], 1))])   # output (the fit of one output
        self.n_outputs_ = y.shape[1] if y.ndim == 2 else 1   # does not depend on it)
        params = self._params()
        if isinstance(params.get("lambdas"), (tuple, list)):
            params["lambdas"] = ":".join(repr(float(v)) if i < 2 else str(int(v))
                                         for i, v in enumerate(params["lambdas"]))
        self.model_ = train(X, Y, method="okl", **params)
        return self

    def predict(self, X):
        out = self._predicted(X).labels
        out = out[:, :self.n_outputs_]
        return out[:, 0] if self._1d else out

    def codes(self, X):
        """The p codes g1(x) = A'k(x) of each row (predict --codes): l x p."""
        return self._predicted(X).decision_values

    def _more_tags(self):
        return {"requires_y": True, "_xfail_checks": _XFAIL, "multioutput": True}
