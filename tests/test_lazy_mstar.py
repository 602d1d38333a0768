"""Lazy M* CPTs (issue 18, item 4): rows computed where prediction reads them."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

import bnexplore as bx
from bnexplore._lazy_mixture import LazyCPT
from bnexplore.averaging import OrderedAveraging
from bnexplore.classifiers import AMA
from bnexplore.data import MemoryBudgetError


def _frame(n, arities, seed, p_missing=0.0):
    rng = np.random.default_rng(seed)
    cols, prev = {}, None
    for j, a in enumerate(arities):
        x = rng.integers(0, a, n) if prev is None else np.where(rng.random(n) < 0.5, prev % a, rng.integers(0, a, n))
        cols[f"V{j}"] = pd.Categorical(x, categories=list(range(a)))
        prev = x
    df = pd.DataFrame(cols)
    if p_missing:
        df = df.mask(rng.random(df.shape) < p_missing)
    return df


def _wisconsin_like(n_attributes=9, n=699, seed=0):
    """The shape of the Wisconsin breast-cancer data (not bundled): 10-state attributes
    that rise with the class, two classes."""
    rng = np.random.default_rng(seed)
    z = rng.random(n) < 0.35
    X = pd.DataFrame({f"a{j}": np.clip(np.where(z, rng.integers(3, 11, n), rng.integers(1, 5, n))
                                       + rng.integers(-1, 2, n), 1, 10) for j in range(n_attributes)})
    return X, np.where(z, "malignant", "benign")


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
def test_lazy_rows_equal_the_dense_path(prior):
    df = _frame(250, (2, 3, 2, 4, 2, 3, 2), seed=1)
    avg = OrderedAveraging(df, max_parents=2, prior=prior, ess=3.0)
    rng = np.random.default_rng(0)
    for n in (0, 2, 4, None):
        dense = avg.summary_network(n, lazy=False)
        lazy = avg.summary_network(n, lazy=True)
        assert all(isinstance(lazy.cpts[v], LazyCPT) for v in lazy.nodes)
        for v in dense.nodes:
            assert lazy.parents(v) == dense.parents(v)
            D, L = dense.cpts[v], lazy.cpts[v]
            assert L.shape == D.shape
            np.testing.assert_allclose(np.asarray(L), D, rtol=0, atol=1e-12)
            rows = rng.integers(0, D.shape[0], 7)
            np.testing.assert_allclose(L[rows], D[rows], rtol=0, atol=1e-12)
            states = rng.integers(0, D.shape[1], 7)
            np.testing.assert_allclose(L[rows, states], D[rows, states], rtol=0, atol=1e-12)
            np.testing.assert_allclose(np.log(L)[rows], np.log(D[rows]), rtol=1e-12, atol=1e-12)
            ps = lazy.parents(v)
            codes = np.array(list(itertools.product(*[range(len(lazy.states[u])) for u in ps])), dtype=np.int64)
            codes = codes.reshape(codes.shape[0], len(ps))   # one row (no columns) without parents
            np.testing.assert_allclose(L.rows(codes), D, rtol=0, atol=1e-12)
        test = df.sample(30, random_state=2)
        np.testing.assert_allclose(lazy.log_prob(test), dense.log_prob(test), rtol=1e-12)
        np.testing.assert_allclose(lazy.predict_proba(test, "V3"), dense.predict_proba(test, "V3"),
                                   rtol=0, atol=1e-12)


def test_auto_builds_small_cpts_and_keeps_large_ones_lazy():
    df = _frame(300, (10, 10, 10, 10, 10, 2), seed=2)
    avg = OrderedAveraging(df, max_parents=2)
    net = avg.summary_network(None)                         # V5: 10^5 x 2 cells would be dense
    assert not isinstance(net.cpts["V1"], LazyCPT)
    old = bx.averaging.MSTAR_DENSE_CELLS
    try:
        bx.averaging.MSTAR_DENSE_CELLS = 1000
        net = avg.summary_network(None)
        assert isinstance(net.cpts["V5"], LazyCPT) and not isinstance(net.cpts["V1"], LazyCPT)
        exact = avg.predict_proba(df.head(25), "V5")           # Eq. 13 (Theorem 2: M* equals it)
        np.testing.assert_allclose(net.predict_proba(df.head(25), "V5"), exact, rtol=0, atol=1e-12)
    finally:
        bx.averaging.MSTAR_DENSE_CELLS = old
    with pytest.raises(ValueError, match="lazy must be"):
        avg.summary_network(2, lazy="yes")
    with pytest.raises(IndexError, match="out of range"):
        net.cpts["V5"][[10**9]]


def test_summary_network_of_twelve_ten_state_parents_equals_exact_averaging():
    X, y = _wisconsin_like(n_attributes=13, n=400)
    df = X.assign(cls=y)
    order = ["cls"] + list(X.columns)
    avg = OrderedAveraging(df, order=order, max_parents=2)
    net = avg.summary_network(12)
    last = order[-1]
    assert len(net.parents(last)) == 12
    q = int(np.prod([len(net.states[u]) for u in net.parents(last)]))
    assert q >= 2 * 10**11 and net.cpts[last].shape == (q, 10)   # never materialised
    with pytest.raises(MemoryBudgetError, match="materialising"):
        np.asarray(net.cpts[last])
    full = avg.summary_network(None)                       # 13 parents: M* is Eq. 13 exactly
    test = df.head(40)
    np.testing.assert_allclose(full.predict_proba(test, "cls"), avg.predict_proba(test, "cls"),
                               rtol=0, atol=1e-10)


def test_ama_defaults_fit_and_predict_on_wisconsin_shaped_data():
    for n_attributes in (9, 13):                            # 13: up to 13 candidate parents, n = 12
        X, y = _wisconsin_like(n_attributes)
        with warnings.catch_warnings():
            warnings.simplefilter("error")                  # no fallback to a smaller n
            clf = AMA().fit(X, y)
            p = clf.predict_proba(X)
        assert not hasattr(clf, "n_used_")
        net = clf.networks_[0]
        assert max(len(net.parents(v)) for v in net.nodes) == min(12, n_attributes)
        assert any(isinstance(net.cpts[v], LazyCPT) for v in net.nodes)
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
        assert clf.score(X, y) > 0.9


def test_ama_sums_missing_features_out_with_lazy_cpts():
    X, y = _wisconsin_like(9, n=300, seed=3)
    clf = AMA(order="random", random_state=1).fit(X, y)
    net = clf.networks_[0]
    assert any(isinstance(net.cpts[v], LazyCPT) for v in net.nodes)
    test = X.iloc[:6].astype(float).copy()
    test.iloc[0, 2] = np.nan
    test.iloc[1, [0, 5]] = np.nan
    got = clf.predict_joint_log_proba(test)
    for i in (0, 1):                                         # brute force: every completion
        miss = np.flatnonzero(test.iloc[i].isna().to_numpy())
        rows = []
        for combo in itertools.product(range(1, 11), repeat=len(miss)):
            r = test.iloc[i].copy()
            r.iloc[miss] = combo
            rows.append(r)
        brute = logsumexp(clf.predict_joint_log_proba(pd.DataFrame(rows)), axis=0)
        np.testing.assert_allclose(got[i], brute, rtol=1e-10)
    np.testing.assert_array_equal(got[2:], clf.predict_joint_log_proba(X.iloc[2:6]))
    # a row whose elimination would read too many rows of a lazy CPT is refused at once
    from bnexplore.classifiers.averaging import _LazyFactor
    v = next(v for v in net.nodes if isinstance(net.cpts[v], LazyCPT) and len(net.parents(v)) >= 8)
    vars_ = (clf.data_.index(v),) + tuple(clf.data_.index(u) for u in net.parents(v))
    factor = _LazyFactor(np.log(net.cpts[v]), vars_, [int(a) for a in clf.data_.arities])
    with pytest.raises(MemoryError, match="impute"):
        factor.gather(vars_, np.zeros((1, X.shape[1]), dtype=np.int64), list(vars_))
    np.testing.assert_allclose(clf.predict_proba(test).sum(axis=1), 1.0, atol=1e-12)


def test_ama_lazy_cpts_with_missing_fit_data_equal_their_materialised_rows():
    df = _frame(200, (4, 3, 4, 3, 2), seed=4, p_missing=0.1)
    avg = OrderedAveraging(df, max_parents=2, missing="keep")
    lazy = avg.summary_network(3)
    dense = avg.summary_network(3, lazy=False)
    for v in lazy.nodes:
        assert isinstance(lazy.cpts[v], LazyCPT) and isinstance(dense.cpts[v], np.ndarray)
        np.testing.assert_allclose(np.asarray(lazy.cpts[v]), dense.cpts[v], rtol=0, atol=1e-15)
        np.testing.assert_allclose(dense.cpts[v].sum(axis=1), 1.0, atol=1e-12)
