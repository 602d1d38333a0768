"""ISMB sums missing values out within each Markov-blanket model, over the missing
members of that model's blanket only (issue 18, item 1).

The reference is the full enumeration ISMB used before: one completion per joint state
of *every* missing variable, each structure's families at the completion plus the log
K2 marginals of the missing variables that are not children of the target. A missing
non-member only adds its marginal, which sums to one, so summing over the members alone
must give the same numbers (to rounding) while staying feasible with many missing values.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import bnexplore as bx
from bnexplore import ismb
from bnexplore.classifiers import ISMB
from bnexplore.ismb import MBModel, _Instance, _MissingInstance


def _full_enumeration(model: MBModel, x: np.ndarray, id_lists) -> np.ndarray:
    """log P(Z | x, G) of each structure by enumerating every missing variable's states."""
    miss = [int(v) for v in np.flatnonzero(x < 0)]
    tb = 1 << model.t
    logmarg = {}
    for v in miss:
        seen = model._cols[v][model._obs[v]] if model._obs is not None else model._cols[v]
        logmarg[v] = [np.log((np.count_nonzero(seen == i) + 1.0)
                             / (len(seen) + model._arity[v])) for i in range(model._arity[v])]
    every = np.unique(np.concatenate([np.asarray(ids) for ids in id_lists]))
    acc = []
    for states in itertools.product(*[range(model._arity[v]) for v in miss]):
        xc = x.copy()
        xc[miss] = states
        inst = _Instance(model._cols, xc, model.r)
        model._ensure(inst, every)
        rows = []
        for ids in id_lists:
            children = {model._fams[i][0] for i in ids[1:]}
            w = sum(logmarg[v][s] for v, s in zip(miss, states) if v not in children)
            rows.append(inst.F[list(ids)].sum(axis=0) + w)
        acc.append(rows)
    acc = np.asarray(acc)                                  # (completions, structures, r)
    top = acc.max(axis=0)
    lse = top + np.log(np.exp(acc - top).sum(axis=0))
    return lse - np.logaddexp.reduce(lse, axis=1, keepdims=True)


@pytest.fixture
def reference(monkeypatch):
    """Make MBModel sum instances with missing values out by the full enumeration."""
    new = MBModel._log_pred_batch

    def old(self, inst, id_lists):
        if isinstance(inst, _MissingInstance) and id_lists:
            return _full_enumeration(self, inst.x, id_lists)
        return new(self, inst, id_lists)

    return lambda: monkeypatch.setattr(MBModel, "_log_pred_batch", old)


def _small(seed: int = 0, n: int = 80, p: int = 5, hole: float = 0.1):
    """p features over 2-3 states related to a binary class, with missing training cells."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    cols = {}
    for j in range(p):
        r = 2 + j % 2
        cols[f"f{j}"] = np.where(rng.random(n) < 0.7, (y + j) % r, rng.integers(0, r, n))
    X = pd.DataFrame(cols).astype(str).mask(rng.random((n, p)) < hole)
    return X, np.array(["a", "b"])[y]


def _holes(X: pd.DataFrame, seed: int = 1) -> pd.DataFrame:
    """Rows of X with 1, 2, 3 and 4 missing values (and one complete row)."""
    rng = np.random.default_rng(seed)
    T = X.dropna().iloc[:6].copy()
    for i, k in enumerate([1, 2, 3, 4, 4, 0]):
        T.iloc[i, rng.choice(T.shape[1], k, replace=False)] = None
    return T


def test_structures_equal_the_full_enumeration():
    """Every 20th of the 3,567 structures over weather's four predictors, with 1-4 of the
    predictors missing (every subset)."""
    df = bx.datasets.load("weather.nominal")
    m = MBModel(df)
    pas = list(ismb._enumerate_masks(m.p, m.t))[::20]
    ids = [m._pred_ids(pa) for pa in pas]
    x = m._as_codes(df.drop(columns="play").iloc[3])
    for k in (1, 2, 3, 4):
        for miss in itertools.combinations([v for v in range(m.p) if v != m.t], k):
            xm = x.copy()
            xm[list(miss)] = -1
            got = m._log_pred_batch(m._instance(xm), ids)
            np.testing.assert_allclose(got, _full_enumeration(m, xm, ids), rtol=0, atol=1e-12)


def test_ismb_ms_nismb_equal_the_full_enumeration(reference):
    """Rows with 1-4 missing values, missing training cells: the three variants' estimates
    and the models each search put into R are those of the full enumeration."""
    X, y = _small(seed=2, p=6)
    T = _holes(X, seed=3)
    clf = ISMB(queue_width=20).fit(X, y)
    got, got_stats = clf.predict_proba_variants(T, return_stats=True)
    got_models = [r.models for r in clf.predict_report(T).results]
    reference()
    want, want_stats = clf.predict_proba_variants(T, return_stats=True)
    for v in ("ismb", "ms", "nismb"):
        np.testing.assert_allclose(got[v], want[v], rtol=0, atol=1e-12)
    pd.testing.assert_frame_equal(got_stats.drop(columns="seconds"),
                                  want_stats.drop(columns="seconds"))
    assert got_models == [r.models for r in clf.predict_report(T).results]


def test_a_row_with_many_missing_values_predicts():
    """14 of 16 binary features missing: 16,384 joint states, but each structure sums over
    its own missing members only."""
    X, y = _small(seed=4, n=120, p=16, hole=0.05)
    X = X.apply(lambda c: c.where(c.isna() | (c != "2"), "0"))    # binary features
    clf = ISMB(queue_width=50).fit(X, y)
    T = X.dropna().iloc[:3].copy()
    T.iloc[0, 2:] = None
    T.iloc[1, :14] = None
    T.iloc[2, :] = None
    p = clf.predict_proba(T)
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)


def test_the_guard_names_the_missing_members(monkeypatch):
    from bnexplore import _ismb_predict  # the guard is read where the sum is taken
    monkeypatch.setattr(_ismb_predict, "MAX_MISSING_COMPLETIONS", 4)
    X, y = _small(seed=4, n=120, p=16, hole=0.0)
    clf = ISMB(queue_width=20).fit(X, y)
    T = X.iloc[:1].copy()
    T.iloc[0, :] = None
    m = clf.model_
    pa = list(m._empty)
    pa[m.t] = 0b111                                        # f0, f1, f2 -> class
    with pytest.raises(ValueError, match=r"3 missing members \(f0, f1, f2\) with 12 joint "
                                         r"states .*limit 4 per structure.*impute some"):
        m._log_pred_batch(m._instance(clf._rows(T)[0]), [m._pred_ids(tuple(pa))])


def test_missing_sums_do_not_depend_on_what_was_predicted_before():
    """The families of a missing sum are added in one order (by family, not by the id a
    search happened to give them), so a row predicts bit for bit the same numbers on a
    fresh model and after other rows."""
    X, y = _small(seed=5, n=150, p=8, hole=0.1)
    T = X.iloc[:6]
    fresh = ISMB(queue_width=50).fit(X, y).predict_proba(T)
    used = ISMB(queue_width=50).fit(X, y)
    used.predict_proba(X.iloc[20:40])
    assert np.array_equal(used.predict_proba(T.iloc[::-1])[::-1], fresh)
