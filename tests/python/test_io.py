"""read_svmlight (the C reader), errors as kmtk.Error, models saved and loaded."""
import gzip
import os

import numpy as np
import pytest
import scipy.sparse as sp

import kmtk
from conftest import run


def parse_by_hand(path):
    """An independent svmlight parser (plain Python) for the reader's results."""
    rows, cols, vals, y, qid = [], [], [], [], []
    for line in open(path):
        line = line.split("#")[0].split()
        if not line:
            continue
        y.append([float(v) for v in line[0].split(",")])
        for tok in line[1:]:
            k, v = tok.split(":")
            if k == "qid":
                qid.append(int(v))
                continue
            rows.append(len(y) - 1)
            cols.append(int(k) - 1)
            vals.append(float(v))
    X = sp.csr_matrix((vals, (rows, cols)), shape=(len(y), max(cols) + 1))
    return X, np.array(y), (np.array(qid) if qid else None)


def test_read_svmlight_matches_the_file(heart):
    X, y, qid = kmtk.read_svmlight(heart)
    Xh, yh, _ = parse_by_hand(heart)
    assert sp.isspmatrix_csr(X) and X.shape == Xh.shape == (270, 13)
    assert qid is None
    assert np.array_equal(y, yh[:, 0])
    assert (X != Xh).nnz == 0 and X.nnz == Xh.nnz


def test_read_svmlight_gzip_and_qid_and_outputs(tmp_path, heart):
    gz = tmp_path / "h.gz"
    gz.write_bytes(gzip.compress(open(heart, "rb").read()))
    X, y, _ = kmtk.read_svmlight(str(gz))
    X0, y0, _ = kmtk.read_svmlight(heart)
    assert (X != X0).nnz == 0 and np.array_equal(y, y0)
    f = tmp_path / "q.svm"
    f.write_text("1 qid:7 2:0.5 10:-1\n-1 qid:3 1:2\n0.5 qid:7\n")
    X, y, qid = kmtk.read_svmlight(str(f))
    assert X.shape == (3, 10) and np.array_equal(qid, [7, 3, 7])
    assert np.array_equal(X.toarray()[0], [0, .5, 0, 0, 0, 0, 0, 0, 0, -1])
    f.write_text("0.3,-1.2,0.7 1:1\n1,2,3 2:1\n")
    X, y, qid = kmtk.read_svmlight(str(f))
    assert y.shape == (2, 3) and np.array_equal(y[0], [0.3, -1.2, 0.7])


def library_owned(a):
    """True when the array's memory is the library's (its base chain ends at a ctypes
    buffer over the reader's arrays), not a copy."""
    while getattr(a, "base", None) is not None and not hasattr(a, "_owner"):
        a = a.base
    return hasattr(a, "_owner")


def test_read_svmlight_keeps_the_reader_arrays_alive(heart):
    X, y, _ = kmtk.read_svmlight(heart)
    assert library_owned(X.data) and library_owned(X.indices) and library_owned(y)
    data = X.data[5:10].copy()
    del X   # the views below keep the library's arrays
    Xb, yb, _ = kmtk.read_svmlight(heart)
    assert np.array_equal(y, yb) and np.array_equal(Xb.data[5:10], data)


def test_bad_file_raises_error_with_file_line_col(tmp_path):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5\n-1 3 4:1\n")
    with pytest.raises(kmtk.Error) as e:
        kmtk.read_svmlight(str(bad))
    assert e.value.code == 2
    assert str(e.value).startswith(str(bad) + ":2:4: ")
    assert "expected ':'" in e.value.message


def test_missing_file_and_bad_model_raise_error(tmp_path):
    with pytest.raises(kmtk.Error, match="nothing-here"):
        kmtk.read_svmlight(str(tmp_path / "nothing-here"))
    m = tmp_path / "bad.model"
    m.write_text("kmtk-model 1\nsolver linear\nnr_class 2\n")
    with pytest.raises(kmtk.Error, match=str(m)) as e:
        kmtk.load(str(m))
    assert e.value.code == 2


def test_bad_parameters_raise_error(heart):
    X, y, _ = kmtk.read_svmlight(heart)
    with pytest.raises(kmtk.Error, match="unknown option 'nonsense'") as e:
        kmtk.train(X, y, nonsense=1)
    assert e.value.code == 1
    with pytest.raises(kmtk.Error, match="rank") as e:   # an okl option for l1svm
        kmtk.train(X, y, method="l1svm", rank=3)
    with pytest.raises(kmtk.Error):
        kmtk.train(X, y, C=-1)
    with pytest.raises(kmtk.Error, match="unknown method"):
        kmtk.train(X, y, method="nope")
    with pytest.raises(kmtk.Error, match="task id -1"):
        kmtk.train(X, y, method="mtl", qid=-np.ones(len(y), dtype=int))
    with pytest.raises(kmtk.Error, match="rows"):
        kmtk.train(X, y[:-1])
    Xn = X.copy()
    Xn.data[3] = np.nan
    with pytest.raises(kmtk.Error, match="finite"):
        kmtk.train(Xn, y)


def test_save_load_round_trip_is_byte_for_byte(tmp_path, heart):
    X, y, _ = kmtk.read_svmlight(heart)
    m = kmtk.train(X, y, method="l2svm", kernel="poly", degree=2, C=0.5)
    kmtk.save(m, str(tmp_path / "a.model"))
    back = kmtk.load(str(tmp_path / "a.model"))
    kmtk.save(back, str(tmp_path / "b.model"))
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()
    assert np.array_equal(kmtk.predict(m, X).decision_values,
                          kmtk.predict(back, X).decision_values)
    assert list(back.classes) == [-1, 1] and back.n_features == 13


def test_methods_and_help():
    assert {"l1svm", "l2svm", "rls", "svr", "okl", "mtl"} <= set(kmtk.methods())
    assert run("train", "-s", "svr", "-h") == kmtk.method_help("svr")


def test_library_not_found_is_an_import_error(tmp_path):
    import subprocess
    import sys
    env = dict(os.environ, KMTK_LIB=str(tmp_path / "libnothing.so"))
    p = subprocess.run([sys.executable, "-c", "import kmtk"], env=env,
                       cwd=os.path.join(os.path.dirname(kmtk.__file__), ".."),
                       stderr=subprocess.PIPE)
    assert p.returncode != 0 and b"libkmtk not found" in p.stderr
