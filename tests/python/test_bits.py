"""The key property: Python gives the command line's results bit for bit on the same data:
a model trained by kmtk.train is train's model file byte for byte, kmtk.predict's labels and
decision values are predict's and predict -d's (printed with 17 digits: exact), and
kmtk.cross_validate's metric is train -v's."""
import os

import numpy as np
import pytest

import kmtk
from conftest import BIN, DATA, run

HEART = os.path.join(DATA, "heart_scale")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """heart_scale, a test file with a row beyond the model's features, a 3-class file,
    regression data, multi-output signals and multi-task ratings."""
    d = tmp_path_factory.mktemp("data")
    f = {"heart": HEART, "test": str(d / "test.svm"), "multi": str(d / "multi.svm"),
         "reg": str(d / "reg.svm"), "sig": str(d / "sig.train"), "sigt": str(d / "sig.test"),
         "mu": str(d / "mu.train")}
    lines = open(HEART).read().splitlines()
    with open(f["test"], "w") as o:
        o.write("\n".join(lines[::3]) + "\n1 3:0.5 20:1\n-1\n")
    with open(f["multi"], "w") as o:   # 3 classes by the sign pattern of features 1 and 5
        for ln in lines:
            toks = dict(t.split(":") for t in ln.split()[1:])
            k = (float(toks.get("1", 0)) > 0) + (float(toks.get("5", 0)) > 0)
            o.write("%d %s\n" % (k + 1, " ".join(ln.split()[1:])))
    with open(f["reg"], "w") as o:
        o.write(run(os.path.join("datasets", "gen_sparse"), "--rows", 300, "--features", 50,
                    "--avg-nnz", 8, "--regression"))
    run(os.path.join("datasets", "gen_okl_signals"), "-m", 12, "--points", 80, "--train", 40,
        f["sig"], f["sigt"])
    run(os.path.join("datasets", "gen_music"), "--items", 30, "-m", 12, str(d / "mu"))
    return f


# (name, data, CLI options, kmtk.train arguments)
CASES = [
    ("linear hinge", "heart", ["-s", "l1svm", "-c", "1"], dict(method="l1svm", C=1)),
    ("squared hinge, bias, class weight", "heart", ["-s", "l2svm", "-B", "1", "-w1", "5"],
     dict(method="l2svm", bias=1, weight={1: 5})),
    ("rbf hinge", "heart", ["-s", "l1svm", "-t", "rbf", "-g", "0.05", "-c", "4"],
     dict(method="l1svm", kernel="rbf", gamma=0.05, C=4)),
    ("poly rls by the fixed point on 2 threads", "heart",
     ["-s", "rls", "-t", "poly", "-d", "2", "-r", "1", "-a", "fixedpoint", "-n", "2"],
     dict(method="rls", kernel="poly", degree=2, coef0=1, solver="fixedpoint", threads=2)),
    ("3 classes, one versus all, rbf", "multi", ["-s", "l2svm", "-t", "rbf", "-c", "2"],
     dict(method="l2svm", kernel="rbf", C=2)),
    ("svr", "reg", ["-s", "svr", "-p", "0.1", "-c", "4", "-B", "1"],
     dict(method="svr", epsilon=0.1, C=4, bias=1)),
    ("okl, multi-output", "sig", ["-s", "okl", "-t", "laplacian", "-g", "10", "--rank", "4",
                                  "-L", "1e-3:1:4"],
     dict(method="okl", kernel="laplacian", gamma=10, rank=4, lambdas="1e-3:1:4")),
    ("mtl, tasks by qid", "mu", ["-s", "mtl", "-t", "expdot", "-g", "1", "--lambda", "0.01"],
     dict(method="mtl", kernel="expdot", gamma=1, **{"lambda": 0.01})),
]


def floats(text):
    return np.array([[float(v) for v in ln.split()] for ln in text.splitlines()])


@pytest.mark.parametrize("name,data,cli,kw", CASES, ids=[c[0] for c in CASES])
def test_model_and_predictions_equal_the_command_line(tmp_path, files, name, data, cli, kw):
    path = files[data]
    run("train", "-q", *cli, path, tmp_path / "cli.model")
    X, y, qid = kmtk.read_svmlight(path)
    m = kmtk.train(X, y, qid=qid, **kw)
    kmtk.save(m, str(tmp_path / "py.model"))
    assert (tmp_path / "py.model").read_bytes() == (tmp_path / "cli.model").read_bytes()
    test = {"heart": files["test"], "sig": files["sigt"]}.get(data, path)
    Xt, _, qt = kmtk.read_svmlight(test)
    labels, dec = kmtk.predict(m, Xt, qid=qt)
    if m.n_outputs:   # okl: the outputs (predict) and the codes (predict --codes)
        assert np.array_equal(labels, floats(run("predict", "-q", test, tmp_path / "cli.model",
                                                 "-")))
        assert np.array_equal(dec, floats(run("predict", "-q", "--codes", test,
                                              tmp_path / "cli.model", "-")))
    else:
        assert np.array_equal(labels, floats(run("predict", "-q", test, tmp_path / "cli.model",
                                                 "-"))[:, 0])
        assert np.array_equal(dec, floats(run("predict", "-q", "-d", test,
                                              tmp_path / "cli.model", "-")))
    # the same from a dense array, on one thread and on two
    dense = Xt.toarray()
    assert np.array_equal(kmtk.predict(m, dense, qid=qt, threads=1).decision_values, dec)
    assert np.array_equal(kmtk.predict(m, Xt, qid=qt, threads=2).decision_values, dec)


def test_training_from_other_inputs_gives_the_same_model(tmp_path):
    """A dense array, a CSC matrix, int labels and unsorted CSR indices: the same model
    (the library sees the same CSR rows)."""
    X, y, _ = kmtk.read_svmlight(HEART)
    ref = kmtk.train(X, y, C=2)
    kmtk.save(ref, str(tmp_path / "ref.model"))
    Xu = X.copy()
    Xu.indices = Xu.indices.copy()
    Xu.data = Xu.data.copy()
    a, b = Xu.indptr[0], Xu.indptr[1]   # reverse the first row's order
    Xu.indices[a:b] = Xu.indices[a:b][::-1].copy()
    Xu.data[a:b] = Xu.data[a:b][::-1].copy()
    Xu.has_sorted_indices = False
    for other in (X.toarray(), X.tocsc(), Xu):
        m = kmtk.train(other, y.astype(int), C=2)
        kmtk.save(m, str(tmp_path / "o.model"))
        assert (tmp_path / "o.model").read_bytes() == (tmp_path / "ref.model").read_bytes()


def test_cross_validation_equals_train_v(files):
    out = run("train", "-v", "5", "-s", "l1svm", "-c", "2", files["heart"])
    X, y, _ = kmtk.read_svmlight(files["heart"])
    cv = kmtk.cross_validate(X, y, folds=5, method="l1svm", C=2)
    assert out == "Cross Validation Accuracy = %g%%\n" % cv.accuracy
    assert cv.predictions.shape == y.shape and set(cv.predictions) <= {-1.0, 1.0}
    out = run("train", "-v", "4", "-s", "svr", "-p", "0.1", "--seed", "3", files["reg"])
    X, y, _ = kmtk.read_svmlight(files["reg"])
    cv = kmtk.cross_validate(X, y, folds=4, method="svr", epsilon=0.1, seed=3)
    assert out == ("Cross Validation Mean squared error = %g\n"
                   "Cross Validation Squared correlation coefficient = %g\n"
                   % (cv.mean_squared_error, cv.squared_correlation))


def test_rls2_equals_rls2_path(tmp_path):
    run("rls2-path", "-q", "--kernels", "linear", "-v", "5", "--one-se", HEART,
        tmp_path / "cli.model")
    X, y, _ = kmtk.read_svmlight(HEART)
    m = kmtk.rls2_train(X, y, kernels="linear", folds=5, one_se=True)
    kmtk.save(m, str(tmp_path / "py.model"))
    assert (tmp_path / "py.model").read_bytes() == (tmp_path / "cli.model").read_bytes()
    run("rls2-path", "-q", "-L", "1e-3:1e2:6", HEART, tmp_path / "cli6.model")
    est = kmtk.RLS2(lambda_min=1e-3, lambda_max=1e2, lambdas=6).fit(X, y)
    kmtk.save(est.model_, str(tmp_path / "py6.model"))
    assert (tmp_path / "py6.model").read_bytes() == (tmp_path / "cli6.model").read_bytes()
    assert np.array_equal(est.predict(X), floats(run("predict", "-q", HEART,
                                                     tmp_path / "cli6.model", "-"))[:, 0])


def test_estimators_train_the_command_line_models(tmp_path, files):
    X, y, _ = kmtk.read_svmlight(HEART)
    run("train", "-q", "-s", "l1svm", "-t", "rbf", "-g", "0.05", "-c", "4", "-w-1", "2", HEART,
        tmp_path / "svc.model")
    svc = kmtk.KernelSVC(C=4, kernel="rbf", gamma=0.05, class_weight={-1: 2}).fit(X, y)
    kmtk.save(svc.model_, str(tmp_path / "py.model"))
    assert (tmp_path / "py.model").read_bytes() == (tmp_path / "svc.model").read_bytes()
    assert np.array_equal(svc.decision_function(X),
                          floats(run("predict", "-q", "-d", HEART, tmp_path / "svc.model",
                                     "-"))[:, 0])
    # string classes: the same decision values as the labels -1, 1 (both ascending)
    names = np.where(y > 0, "present", "absent")
    svs = kmtk.KernelSVC(C=4, kernel="rbf", gamma=0.05, class_weight={"absent": 2}).fit(X, names)
    assert np.array_equal(svs.decision_function(X), svc.decision_function(X))
    assert np.array_equal(svs.predict(X), np.where(svc.predict(X) > 0, "present", "absent"))
    Xr, yr, _ = kmtk.read_svmlight(files["reg"])
    run("train", "-q", "-s", "rls", "-t", "rbf", "-g", "2", "-c", "3", files["reg"],
        tmp_path / "kr.model")
    kr = kmtk.KernelRidge(C=3, gamma=2).fit(Xr, yr)
    kmtk.save(kr.model_, str(tmp_path / "py.model"))
    assert (tmp_path / "py.model").read_bytes() == (tmp_path / "kr.model").read_bytes()
    Xs, Ys, _ = kmtk.read_svmlight(files["sig"])
    run("train", "-q", "-s", "okl", "-t", "laplacian", "-g", "10", "--rank", "3",
        files["sig"], tmp_path / "okl.model")
    okl = kmtk.OKL(kernel="laplacian", gamma=10, rank=3).fit(Xs, Ys)
    kmtk.save(okl.model_, str(tmp_path / "py.model"))
    assert (tmp_path / "py.model").read_bytes() == (tmp_path / "okl.model").read_bytes()
    assert okl.predict(Xs).shape == Ys.shape and okl.codes(Xs).shape == (len(Ys), 3)


def test_probabilities_equal_predict_b(tmp_path, files):
    """kmtk.predict_proba = predict -b 1 (printed with 17 digits), columns in classes order:
    Platt's sigmoid (train -b 1) and logistic regression, two and three classes."""
    for data, cli, kw in (
            ("heart", ["-s", "l1svm", "-t", "rbf", "-g", "0.05", "-b", "1"],
             dict(method="l1svm", kernel="rbf", gamma=0.05, probability=1)),
            ("multi", ["-s", "logreg", "-c", "2"], dict(method="logreg", C=2))):
        X, y, _ = kmtk.read_svmlight(files[data])
        run("train", "-q", *cli, files[data], tmp_path / "m")
        m = kmtk.train(X, y, **kw)
        kmtk.save(m, str(tmp_path / "py"))
        assert (tmp_path / "py").read_bytes() == (tmp_path / "m").read_bytes()
        out = run("predict", "-q", "-b", "1", files[data], tmp_path / "m", "-").splitlines()
        assert out[0].split()[1:] == ["%g" % c for c in m.classes]
        want = floats("\n".join(out[1:]))[:, 1:]
        assert m.has_probability and np.array_equal(kmtk.predict_proba(m, X), want)
    plain = kmtk.train(X, y, method="l1svm")
    assert not plain.has_probability
    with pytest.raises(kmtk.Error):
        kmtk.predict_proba(plain, X)


def test_sample_weight_equals_train_weights(tmp_path, files):
    """kmtk.train(..., sample_weight=w) = train --weights FILE, byte for byte (linear and
    kernel), and cross_validate takes them as train -v does; a wrong count is an Error."""
    X, y, _ = kmtk.read_svmlight(HEART)
    w = np.arange(len(y)) % 4 * 0.5          # 0 (the row dropped), 0.5, 1, 1.5
    np.savetxt(tmp_path / "w", w, fmt="%.17g")
    for cli, kw in ((["-s", "l1svm"], dict(method="l1svm")),
                    (["-s", "rls", "-t", "rbf", "-g", "0.1"],
                     dict(method="rls", kernel="rbf", gamma=0.1))):
        run("train", "-q", *cli, "--weights", tmp_path / "w", HEART, tmp_path / "m")
        kmtk.save(kmtk.train(X, y, sample_weight=w, **kw), str(tmp_path / "py"))
        assert (tmp_path / "py").read_bytes() == (tmp_path / "m").read_bytes()
    out = run("train", "-q", "-s", "l1svm", "-v", "5", "--weights", tmp_path / "w", HEART)
    cv = kmtk.cross_validate(X, y, folds=5, method="l1svm", sample_weight=w)
    assert out == "Cross Validation Accuracy = %g%%\n" % cv.accuracy
    with pytest.raises(kmtk.Error, match="weights"):
        kmtk.train(X, y, sample_weight=w[:-1])
