"""The classifiers' fast coding paths (integer arrays, Categorical frames) give exactly
what the checked pandas path gives, and NaiveBayes equals scikit-learn's CategoricalNB."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.naive_bayes import CategoricalNB

import bnexplore as bx
from bnexplore.classifiers import AODE, BMAAODE, FAN, TAN, NaiveAveraging, NaiveBayes
from bnexplore.classifiers._coding import categorical_frame_codes, class_codes, int_array_codes


def _sets():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("breast-cancer", "contact-lenses", "iris", "vote"):
            df = bx.datasets.load(name, discretize="mdl", missing="state")
            t = df.attrs["target"]
            yield name, df.drop(columns=[t]), df[t]


@pytest.mark.parametrize("name,X,y", list(_sets()), ids=lambda v: v if isinstance(v, str) else "")
def test_naive_bayes_equals_categorical_nb(name, X, y):
    Xc = np.column_stack([np.unique(X[c].cat.codes.to_numpy(), return_inverse=True)[1]
                          for c in X.columns]).astype(np.int64)
    classes, yc = np.unique(np.asarray(y, dtype=object), return_inverse=True)
    n_c = np.bincount(yc, minlength=len(classes))
    prior = (n_c + 1.0) / (n_c.sum() + len(classes))      # NaiveBayes' K2 class prior
    ours = NaiveBayes().fit(Xc, yc).predict_proba(Xc)
    peer = CategoricalNB(min_categories=Xc.max(axis=0) + 1, class_prior=prior).fit(Xc, yc)
    np.testing.assert_allclose(ours, peer.predict_proba(Xc), rtol=0, atol=1e-14)
    # a frame of Categoricals keeps every category as a state, as OrdinalEncoder would
    arities = [len(X[c].cat.categories) for c in X.columns]
    peer = CategoricalNB(min_categories=arities, class_prior=prior).fit(
        np.column_stack([X[c].cat.codes for c in X.columns]), yc)
    got = NaiveBayes().fit(X, y)
    assert list(got.classes_) == list(classes)
    np.testing.assert_allclose(got.predict_proba(X), peer.predict_proba(
        np.column_stack([X[c].cat.codes for c in X.columns])), rtol=0, atol=1e-14)


@pytest.mark.parametrize("make", [NaiveBayes, NaiveAveraging, AODE, BMAAODE, TAN, FAN])
def test_fast_paths_equal_checked_path(make):
    rng = np.random.default_rng(0)
    Xi = rng.integers(0, 3, size=(60, 4)) * 10 + 1         # states 1, 11, 21
    y = rng.integers(0, 2, size=60)
    X_obj = pd.DataFrame(Xi.astype(object), columns=[f"x{j}" for j in range(4)])
    fast = make().fit(Xi, y)
    slow = make().fit(X_obj.astype(str).astype(object).map(int).to_numpy(dtype=object), y)
    assert fast.data_.states == slow.data_.states
    np.testing.assert_array_equal(fast.data_.codes, slow.data_.codes)
    np.testing.assert_array_equal(fast.predict_proba(Xi), slow.predict_proba(Xi))
    # unseen value 5 at predict time: summed out on both paths
    Xn = Xi[:5].copy()
    Xn[0, 0] = 5
    np.testing.assert_array_equal(fast.predict_proba(Xn), slow.predict_proba(Xn.astype(object)))
    # categorical frame (with a missing cell) against the string frame
    cat = pd.DataFrame({f"c{j}": pd.Categorical(Xi[:, j].astype(str)) for j in range(4)})
    cat.iloc[3, 1] = np.nan
    yl = np.where(y == 1, "b", "a")
    f_fast = make().fit(cat, pd.Categorical(yl))
    f_slow = make().fit(cat.astype(object), yl)
    assert f_fast.data_.states == f_slow.data_.states
    np.testing.assert_array_equal(f_fast.data_.missing, f_slow.data_.missing)
    np.testing.assert_array_equal(f_fast.predict_proba(cat), f_slow.predict_proba(cat.astype(object)))
    assert list(f_fast.feature_names_in_) == list(f_slow.feature_names_in_)


def test_fast_path_refusals():
    assert int_array_codes(np.array([[1.5, 2.0]])) is None          # fractions: checked path
    assert int_array_codes(np.array([[np.nan, 2.0]])) is None
    assert int_array_codes(np.array([["a", "b"]])) is None
    with pytest.raises(ValueError, match="'x0' is continuous"):
        int_array_codes(np.arange(120).reshape(60, 2))
    assert categorical_frame_codes(pd.DataFrame({"a": ["x"]})) is None
    assert class_codes(np.array([0.5, 1.5])) is None                 # floats: type_of_target
    classes, codes = class_codes(pd.Categorical(["b", "a", "b"], categories=["b", "a", "z"]))
    assert list(classes) == ["a", "b"] and codes.tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match="single class"):
        NaiveBayes().fit(np.zeros((3, 2), dtype=int), np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="handle_unknown"):
        NaiveBayes(handle_unknown="bad").fit(np.zeros((3, 2), dtype=int), np.array([0, 1, 1]))
    clf = NaiveBayes(handle_unknown="error").fit(np.array([[0], [1], [1]]), np.array([0, 1, 1]))
    with pytest.raises(ValueError, match="never seen in training"):
        clf.predict(np.array([[7]]))
