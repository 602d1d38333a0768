"""Tests of bnexplore.mixtures and the ODE-mixture classifiers (Cerquides & Lopez de Mantaras).

Oracles used here are written independently of the implementation:

* ``weka_aode_proba`` re-implements weka.classifiers.bayes.AODE.distributionForInstance
  (Weka 3.4.3 - 3.8 semantics, default options: Laplace estimates, no M-estimates,
  frequency limit ``m``) with the Java data layout (one flat attribute-value index per
  value plus a "missing" slot per attribute) and plain Python loops per instance.
* BMA over ODEs is checked against the Bayesian definition: the posterior predictive of
  an instance is the ratio of marginal likelihoods with and without it, computed by
  re-counting the augmented data, and ``W_u`` against the chain rule of sequential
  predictions (Eq. 29) and against bnexplore.scores.LocalScore (K2 = Dirichlet(1)).
* Leave-one-out estimates are checked against refitting without each instance.
* MAP weights are checked by the KKT conditions and a second optimiser.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp

import bnexplore as bx
from bnexplore import mixtures as mx
from bnexplore.classifiers import AODE, BMAAODE, MAPLMD, MAPLMG
from bnexplore.classifiers._base import normalize_log
from bnexplore.data import DiscreteData


# --------------------------------------------------------------------------- helpers
def _xy(name, **kw):
    df = bx.datasets.load(name, **kw)
    t = df.attrs["target"]
    return df.drop(columns=[t]), df[t]


def _random_frame(n=60, arities=(2, 3, 4, 2), k=3, seed=0):
    rng = np.random.default_rng(seed)
    cols = {f"a{j}": pd.Categorical(rng.integers(0, r, n), categories=range(r))
            for j, r in enumerate(arities)}
    # make the class depend on the attributes so that the weights differ
    codes = np.column_stack([c.codes for c in cols.values()])
    score = codes[:, 0] + (codes[:, 1] % 2) + rng.integers(0, 2, n)
    cols["cls"] = pd.Categorical(np.clip(score, 0, k - 1), categories=range(k))
    df = pd.DataFrame(cols)
    df.attrs["target"] = "cls"
    return df


def weka_aode_proba(Xtr, ytr, Xte, arities, n_classes, m_limit=1):
    """Weka's AODE (default options) with its own data layout; Python loops per row."""
    n_att = len(arities)
    start, total = [], 0
    for a in arities:
        start.append(total)
        total += a + 1                      # + 1: Weka's slot for missing values
    condi = np.zeros((n_classes, total, total))
    freq = np.zeros(total)
    class_counts = np.zeros(n_classes)
    sum_inst = 0.0
    for x, c in zip(Xtr, ytr):               # updateClassifier
        class_counts[c] += 1
        sum_inst += 1
        idx = [start[a] + x[a] for a in range(n_att)]
        for a in range(n_att):
            freq[idx[a]] += 1
            for b in range(n_att):
                condi[c, idx[a], idx[b]] += 1
    out = []
    for x in Xte:                            # distributionForInstance
        att_index = [start[a] + x[a] for a in range(n_att)]
        probs = np.zeros(n_classes)
        for c in range(n_classes):
            parent_count = 0
            for parent in range(n_att):
                if att_index[parent] == -1:
                    continue
                p_index = att_index[parent]
                if freq[p_index] < m_limit:
                    continue
                counts_cp = condi[c, p_index, p_index]
                att_index[parent] = -1
                parent_count += 1
                missing_parent = freq[start[parent] + arities[parent]]
                spode = (counts_cp + 1.0) / ((sum_inst - missing_parent)
                                              + n_classes * arities[parent])
                for att in range(n_att):
                    if att_index[att] == -1:
                        continue
                    missing_pc = condi[c, p_index, start[att] + arities[att]]
                    spode *= (condi[c, p_index, att_index[att]] + 1.0) / (
                        (counts_cp - missing_pc) + arities[att])
                probs[c] += spode
                att_index[parent] = p_index
            if parent_count < 1:             # NBconditionalProb
                prob = (class_counts[c] + 1.0) / (sum_inst + n_classes)
                for att in range(n_att):
                    ai = start[att] + x[att]
                    prob *= (condi[c, ai, ai] + 1.0) / (class_counts[c] + arities[att])
                probs[c] = prob
            else:
                probs[c] /= parent_count
        out.append(probs / probs.sum())
    return np.array(out)


def _cols(clf, y):
    """Weka's class order (the declared categories) rearranged to ``clf.classes_``."""
    cats = list(y.cat.categories)
    return [cats.index(c) for c in clf.classes_]


def _codes(X, y):
    d = DiscreteData.from_frame(pd.concat([X, y], axis=1), target=y.name)
    return (d.codes[:, :-1], d.codes[:, -1], [int(a) for a in d.arities[:-1]],
            int(d.arities[-1]))


# --------------------------------------------------------------------------- counts / Eq. 14-16
def test_counts_match_family_counts():
    df = _random_frame()
    data = DiscreteData.from_frame(df)
    cnt = mx.ode_counts(data)
    for u in range(4):
        for v in range(4):
            if u == v:
                continue
            fam = bx.scores.family_counts(data, f"a{v}", ["cls", f"a{u}"])  # rows (c, i), last fastest
            K, au, av = 3, cnt.arities[u], cnt.arities[v]
            expect = fam.reshape(K, au, av)
            got = cnt.triple[u, v, :au, :av, :].transpose(2, 0, 1)
            np.testing.assert_array_equal(got, expect)
    assert cnt.pair.sum() == 4 * len(df)
    np.testing.assert_array_equal(cnt.class_counts, np.bincount(data.codes[:, -1], minlength=3))


def test_ode_log_joint_matches_equations_14_16():
    df = _random_frame(n=40, seed=3)
    data = DiscreteData.from_frame(df)
    cnt = mx.ode_counts(data)
    X, y = data.codes[:, :-1], data.codes[:, -1]
    N, K, ar = len(y), 3, cnt.arities
    lj = mx.ode_log_joint(cnt, X[:7])
    for m in range(7):
        x = X[m]
        for u in range(4):
            for c in range(K):
                ncu = np.sum((y == c) & (X[:, u] == x[u]))
                p = (ncu + 1) / (N + K * ar[u])                         # Eq. 15 with the extra #C
                for v in range(4):
                    if v != u:
                        ncuv = np.sum((y == c) & (X[:, u] == x[u]) & (X[:, v] == x[v]))
                        p *= (ncuv + 1) / (ncu + ar[v])                 # Eq. 16
                assert lj[m, u, c] == pytest.approx(np.log(p), rel=1e-12)
    # Eq. 15 sums to one over (c, i) for every u
    base, _ = cnt.log_tables()
    for u in range(4):
        assert np.exp(base[u, :ar[u], :]).sum() == pytest.approx(1.0)


# --------------------------------------------------------------------------- AODE vs Weka
@pytest.mark.parametrize("name,kw", [("weather.nominal", {}), ("contact-lenses", {}),
                                     ("vote", {"missing": "drop"}),
                                     ("breast-cancer", {"missing": "drop"})])
def test_aode_equals_weka_aode_defaults(name, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        X, y = _xy(name, **kw)
    Xc, yc, ar, K = _codes(X, y)
    # train on 2/3, test on all rows (seen and unseen instances)
    rng = np.random.default_rng(1)
    tr = rng.permutation(len(yc))[: max(2 * len(yc) // 3, 8)]
    clf = AODE().fit(X.iloc[tr], y.iloc[tr])
    # the fitted coding keeps every declared category, like Weka's header
    assert clf.counts_.arities.tolist() == ar
    ours = clf.predict_proba(X)
    weka = weka_aode_proba(Xc[tr], yc[tr], Xc, ar, K, m_limit=1)[:, _cols(clf, y)]
    np.testing.assert_allclose(ours, weka, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("t", [1, 5, 30])
def test_aode_threshold_equals_weka_frequency_limit(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        X, y = _xy("vote", missing="drop")
    Xc, yc, ar, K = _codes(X, y)
    tr = np.arange(0, len(yc), 2)
    clf = AODE(threshold=t).fit(X.iloc[tr], y.iloc[tr])
    ours = clf.predict_proba(X)
    # N_u(x_u) > t  <=>  Weka's "frequency >= m" with m = t + 1
    weka = weka_aode_proba(Xc[tr], yc[tr], Xc, ar, K, m_limit=t + 1)[:, _cols(clf, y)]
    np.testing.assert_allclose(ours, weka, rtol=1e-10, atol=1e-13)
    # the threshold changes something on this data (not a vacuous comparison)
    if t == 30:
        assert np.abs(ours - AODE().fit(X.iloc[tr], y.iloc[tr]).predict_proba(X)).max() > 1e-3


def test_aode_falls_back_to_naive_bayes_when_no_parent_qualifies():
    X, y = _xy("contact-lenses")          # 24 rows: no value is seen more than 30 times
    clf = AODE(threshold=30).fit(X, y)
    Xc, yc, ar, K = _codes(X, y)
    n_c = np.bincount(yc, minlength=K)
    logp = np.log((n_c + 1.0) / (len(yc) + K))[None, :].repeat(len(yc), 0)
    for v in range(Xc.shape[1]):
        for c in range(K):
            nvc = np.array([np.sum((yc == c) & (Xc[:, v] == xv)) for xv in Xc[:, v]])
            logp[:, c] += np.log((nvc + 1.0) / (n_c[c] + ar[v]))
    np.testing.assert_allclose(clf.predict_proba(X), normalize_log(logp)[:, _cols(clf, y)],
                               rtol=1e-12)


# --------------------------------------------------------------------------- BMA over ODEs
def _log_evidence_chain(codes, y, ar, K):
    """log P(D | root u) by the chain rule of posterior predictives (Eq. 29)."""
    n = codes.shape[1]
    out = np.zeros(n)
    for u in range(n):
        pair = np.zeros((ar[u], K))
        trip = {v: np.zeros((ar[u], ar[v], K)) for v in range(n) if v != u}
        N = 0
        for x, c in zip(codes, y):
            lp = np.log((pair[x[u], c] + 1) / (N + K * ar[u]))
            for v in trip:
                lp += np.log((trip[v][x[u], x[v], c] + 1) / (pair[x[u], c] + ar[v]))
            out[u] += lp
            pair[x[u], c] += 1
            for v in trip:
                trip[v][x[u], x[v], c] += 1
            N += 1
    return out


def test_bma_log_evidence_is_the_marginal_likelihood():
    df = _random_frame(n=50, seed=7)
    data = DiscreteData.from_frame(df)
    cnt = mx.ode_counts(data)
    logw = mx.bma_log_evidence(cnt)
    chain = _log_evidence_chain(data.codes[:, :-1], data.codes[:, -1],
                                [int(a) for a in cnt.arities], 3)
    np.testing.assert_allclose(logw, chain, rtol=1e-10)
    # and the v-terms are K2 family scores of v given {u, C}
    ls = bx.scores.LocalScore(data, prior="K2")
    from scipy.special import gammaln
    for u in range(4):
        joint = np.bincount(data.codes[:, u] * 3 + data.codes[:, -1], minlength=3 * cnt.arities[u])
        root = gammaln(joint.size) - gammaln(len(df) + joint.size) + gammaln(joint + 1).sum()
        fam = sum(ls.score(f"a{v}", [f"a{u}", "cls"]) for v in range(4) if v != u)
        assert logw[u] == pytest.approx(root + fam, rel=1e-10)


def test_bmaaode_predictive_is_ratio_of_marginal_likelihoods():
    df = _random_frame(n=30, seed=11)
    X, y = df.drop(columns="cls"), df["cls"]
    clf = BMAAODE().fit(X, y)
    ours = clf.predict_proba(X.iloc[:5])
    for m in range(5):
        logs = []
        for c in range(3):
            aug = pd.concat([df, df.iloc[[m]].assign(cls=pd.Categorical([c], categories=range(3)))],
                            ignore_index=True)
            aug.attrs["target"] = "cls"
            logs.append(logsumexp(mx.bma_log_evidence(mx.ode_counts(DiscreteData.from_frame(aug)))))
        expect = np.exp(np.array(logs) - logsumexp(logs))
        np.testing.assert_allclose(ours[m], expect, rtol=1e-9)
    w = clf.weights_
    assert w.sum() == pytest.approx(1.0) and (w > 0).all()
    np.testing.assert_allclose(w, np.exp(clf.log_evidence_ - logsumexp(clf.log_evidence_)))


def test_bma_weight_collapses_as_sample_grows():
    bn = bx.networks.random_network(6, 2, arity=3, random_state=4)
    top = []
    for n in (30, 300, 3000):
        df = bn.sample(n, random_state=1)
        X, y = df.drop(columns="X0"), df["X0"]
        top.append(float(BMAAODE().fit(X, y).weights_.max()))
    assert top[-1] > 0.99 and top[-1] >= top[0]


# --------------------------------------------------------------------------- leave-one-out
def test_loo_equals_refit_without_each_instance():
    df = _random_frame(n=25, arities=(2, 3, 2), seed=5)
    data = DiscreteData.from_frame(df)
    cnt = mx.ode_counts(data)
    loo = mx.ode_log_joint_loo(cnt)
    for m in range(len(df)):
        rest = data.take(np.delete(np.arange(len(df)), m))   # keeps the declared states
        refit = mx.ode_counts(rest)
        expect = mx.ode_log_joint(refit, data.codes[[m], :-1])[0]
        np.testing.assert_allclose(loo[m], expect, rtol=1e-12)


def test_loo_rejects_rows_that_were_not_counted():
    df = _random_frame(n=20, seed=2)
    data = DiscreteData.from_frame(df)
    cnt = mx.ode_counts(data.take(np.arange(5)))
    other = np.array([[1, 2, 3, 1]])
    if cnt.triple[0, 0, 1, 1, 0] == 0:
        with pytest.raises(ValueError, match="not training instances"):
            mx.ode_log_joint_loo(cnt, other, np.array([0]))


# --------------------------------------------------------------------------- MAP weights
def _loo_problem(seed=0, n=200):
    bn = bx.networks.random_network(8, 2, arity=(2, 4), random_state=seed)
    df = bn.sample(n, random_state=seed)
    data = DiscreteData.from_frame(df, target="X0")
    cnt = mx.ode_counts(data)
    return cnt, mx.ode_log_joint_loo(cnt)


def _simplex_max_second(fun, n):
    """Independent check: scipy trust-constr on the simplex."""
    from scipy.optimize import LinearConstraint, Bounds
    r = minimize(lambda a: -fun(a)[0], np.full(n, 1.0 / n), jac=lambda a: -fun(a)[1],
                 method="trust-constr", constraints=[LinearConstraint(np.ones((1, n)), 1, 1)],
                 bounds=Bounds(1e-9, 1.0, keep_feasible=True), options={"gtol": 1e-10, "xtol": 1e-12,
                                                    "maxiter": 3000})
    return r.x / r.x.sum()


def test_maplmd_em_reaches_kkt_point_and_agrees_with_second_optimiser():
    cnt, loo = _loo_problem(seed=1)
    lc = mx.loo_conditional(loo, cnt.y)
    res = mx.maplmd_weights(lc, tol=1e-8)
    assert res.converged and res.kkt <= 1e-8
    assert np.all(np.diff(res.history) >= -1e-9)          # EM never decreases Eq. 8
    f, g = mx.maplmd_objective(res.weights, lc)
    lam = len(cnt.y) + cnt.n_attributes                  # multiplier of sum(a) = 1
    np.testing.assert_allclose(g, lam, rtol=1e-7)
    other = _simplex_max_second(lambda a: mx.maplmd_objective(a, lc), cnt.n_attributes)
    np.testing.assert_allclose(res.weights, other, atol=2e-4)
    assert f >= mx.maplmd_objective(other, lc)[0] - 1e-6


def test_maplmg_gradient_is_eq13_and_matches_finite_differences():
    cnt, loo = _loo_problem(seed=2, n=80)
    n = cnt.n_attributes
    a = np.random.default_rng(0).dirichlet(np.ones(n))
    f, g = mx.maplmg_objective(a, loo, cnt.y)
    # explicit Eq. 10 in probability space (small data: no underflow)
    P = np.exp(loo)

    def eq10(al):
        num = (P[np.arange(len(cnt.y)), :, cnt.y] * al).sum(1)
        den = (P * al[None, :, None]).sum(axis=(1, 2))
        return np.sum(np.log(num / den)) + np.sum(np.log(al))

    assert f == pytest.approx(eq10(a), rel=1e-10)
    eps = 1e-6
    fd = np.array([(eq10(a + eps * e) - eq10(a - eps * e)) / (2 * eps) for e in np.eye(n)])
    np.testing.assert_allclose(g, fd, rtol=1e-5)


@pytest.mark.parametrize("seed", [0, 3])
def test_maplmg_kkt_and_agreement_of_two_optimisers(seed):
    cnt, loo = _loo_problem(seed=seed)
    r1 = mx.maplmg_weights(loo, cnt.y, method="slsqp", tol=1e-7)
    r2 = mx.maplmg_weights(loo, cnt.y, method="softmax", tol=1e-7)
    for r in (r1, r2):
        assert r.converged
        f, g = mx.maplmg_objective(r.weights, loo, cnt.y)
        np.testing.assert_allclose(g, cnt.n_attributes, rtol=1e-5)   # KKT: g_u = lambda = n
        assert np.all(r.weights > 0) and r.weights.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(r1.weights, r2.weights, atol=1e-4)
    assert r1.objective == pytest.approx(r2.objective, abs=1e-6)
    # a third, independent optimiser lands on the same point
    third = _simplex_max_second(lambda a: mx.maplmg_objective(a, loo, cnt.y), cnt.n_attributes)
    assert mx.maplmg_objective(third, loo, cnt.y)[0] <= r1.objective + 1e-6


# --------------------------------------------------------------------------- classifiers
@pytest.mark.parametrize("cls", [AODE, BMAAODE, MAPLMD, MAPLMG])
def test_weights_series_on_simplex(cls):
    X, y = _xy("vote", missing="drop") if False else _xy("breast-cancer", missing="state")
    clf = cls().fit(X, y)
    w = clf.weights_
    assert isinstance(w, pd.Series)
    assert list(w.index) == list(X.columns)
    assert np.all(w > 0) and w.sum() == pytest.approx(1.0)
    p = clf.predict_proba(X)
    assert p.shape == (len(X), len(clf.classes_)) and np.allclose(p.sum(1), 1)
    assert np.all(np.isfinite(p))


def test_maplmg_and_maplmd_predict_as_equations_1_and_2():
    df = _random_frame(n=80, seed=9)
    X, y = df.drop(columns="cls"), df["cls"]
    g = MAPLMG().fit(X, y)
    d = MAPLMD().fit(X, y)
    lj = g.log_joint_per_ode(X)
    pj = np.exp(lj)
    w = g.weights_.to_numpy()
    expect_g = (pj * w[None, :, None]).sum(1)
    np.testing.assert_allclose(g.predict_proba(X), expect_g / expect_g.sum(1, keepdims=True))
    cond = pj / pj.sum(2, keepdims=True)
    expect_d = (cond * d.weights_.to_numpy()[None, :, None]).sum(1)
    np.testing.assert_allclose(d.predict_proba(X), expect_d)
    # AODE is the uniform mixture of Eq. 2
    u = (pj / pj.shape[1]).sum(1)
    np.testing.assert_allclose(AODE().fit(X, y).predict_proba(X), u / u.sum(1, keepdims=True))


def test_sklearn_conventions_cv_and_pipeline():
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline

    X, y = _xy("iris")
    for est in (AODE(threshold=3), BMAAODE(), MAPLMD(tol=1e-5), MAPLMG(method="slsqp")):
        c = clone(est)
        assert c.get_params() == est.get_params()
        pipe = make_pipeline(bx.data.EqualFrequencyDiscretizer(n_bins=5), est)
        scores = cross_val_score(pipe, X, y, cv=3)
        assert scores.mean() > 0.8
    pipe = make_pipeline(bx.data.MDLDiscretizer(), AODE())
    assert cross_val_score(pipe, X, y, cv=3).mean() > 0.8


def test_selected_estimator_checks():
    from sklearn.utils.estimator_checks import (check_classifiers_classes,
                                                check_estimators_unfitted,
                                                check_get_params_invariance,
                                                check_no_attributes_set_in_init,
                                                check_parameters_default_constructible)
    for est in (AODE(), BMAAODE(), MAPLMD(), MAPLMG()):
        name = type(est).__name__
        check_no_attributes_set_in_init(name, est)
        check_parameters_default_constructible(name, est)
        check_get_params_invariance(name, est)
        check_estimators_unfitted(name, est)


def test_integer_numpy_input_and_fast_path_agree():
    df = _random_frame(n=50, seed=4)
    X, y = df.drop(columns="cls"), df["cls"]
    a = AODE().fit(X, y).predict_proba(X)
    b = AODE().fit(X.astype(int).to_numpy(), y.astype(int).to_numpy()).predict_proba(
        X.astype(int).to_numpy())
    np.testing.assert_allclose(a, b)


# --------------------------------------------------------------------------- bad input
def test_single_attribute_reduces_to_one_ode():
    X, y = _xy("contact-lenses")
    X1 = X[["astigmatism"]]
    Xc, yc, ar, K = _codes(X1, y)
    for cls in (AODE, BMAAODE, MAPLMD, MAPLMG):
        clf = cls().fit(X1, y)
        assert clf.weights_.tolist() == [1.0]
        # the single ODE C - A1 is the naive-Bayes structure; its estimate is Eq. 15
        joint = np.array([[np.sum((yc == c) & (Xc[:, 0] == x)) + 1 for c in range(K)]
                          for x in Xc[:, 0]], float)
        expect = (joint / joint.sum(1, keepdims=True))[:, _cols(clf, y)]
        np.testing.assert_allclose(clf.predict_proba(X1), expect)
    np.testing.assert_allclose(AODE().fit(X1, y).predict_proba(X1),
                               weka_aode_proba(Xc, yc, Xc, ar, K)[:, _cols(clf, y)])


def test_no_attribute_is_an_error():
    y = pd.Series(["a", "b", "a"])
    with pytest.raises(ValueError, match="attribute"):
        AODE().fit(pd.DataFrame(index=range(3)), y)


def test_class_unseen_in_training_fold():
    df = _random_frame(n=60, seed=1)
    X, y = df.drop(columns="cls"), df["cls"]
    keep = y != 2
    clf = MAPLMG().fit(X[keep], y[keep].cat.remove_unused_categories())
    assert list(clf.classes_) == [0, 1]
    p = clf.predict_proba(X)
    assert p.shape == (60, 2) and np.all(np.isfinite(p))
    from bnexplore.experiments.cerquides import aligned_proba
    q = aligned_proba(clf, X, np.array([0, 1, 2]))
    assert q.shape == (60, 3) and np.all(q[:, 2] == 0) and np.allclose(q.sum(1), 1)


def test_unseen_category_at_predict_time():
    X, y = _xy("weather.nominal")
    clf = AODE(handle_unknown="error").fit(X, y)
    bad = X.astype(str).copy()
    bad.loc[0, "outlook"] = "foggy"
    with pytest.raises(ValueError, match="outlook.*foggy"):
        clf.predict_proba(bad)
    with pytest.raises(ValueError, match="unseen"):
        mx.ode_log_joint(clf.counts_, np.array([[5, 0, 0, 0]]))


def test_declared_but_unobserved_category_is_smoothed():
    X, y = _xy("weather.nominal")
    X = X.copy()
    X["outlook"] = X["outlook"].cat.add_categories(["foggy"])
    clf = AODE().fit(X, y)
    Xt = X.iloc[:2].copy()
    Xt.loc[Xt.index[0], "outlook"] = "foggy"
    p = clf.predict_proba(Xt)
    assert np.all(np.isfinite(p)) and np.allclose(p.sum(1), 1)


def test_non_converging_weights_warn_with_iteration_count():
    cnt, loo = _loo_problem(seed=0)
    with pytest.warns(mx.WeightsConvergenceWarning, match="after 1 iterations"):
        r = mx.maplmd_weights(mx.loo_conditional(loo, cnt.y), max_iter=1, tol=1e-12)
    assert np.all(np.isfinite(r.weights)) and r.weights.sum() == pytest.approx(1)
    with pytest.warns(mx.WeightsConvergenceWarning, match=r"after \d+ iterations"):
        r = mx.maplmg_weights(loo, cnt.y, max_iter=1, tol=1e-12)
    assert np.all(np.isfinite(r.weights)) and r.weights.sum() == pytest.approx(1)
    df = _random_frame(n=60)
    with pytest.warns(mx.WeightsConvergenceWarning):
        clf = MAPLMD(max_iter=1, tol=1e-12).fit(df.drop(columns="cls"), df["cls"])
    assert clf.converged_ is False and np.isfinite(clf.weights_).all()


@pytest.mark.parametrize("est,match", [(AODE(threshold=-1), "threshold"),
                                       (MAPLMD(max_iter=0), "max_iter"),
                                       (MAPLMG(tol=-1.0), "tol"),
                                       (MAPLMG(method="bfgs"), "method")])
def test_bad_parameters(est, match):
    df = _random_frame(n=20)
    with pytest.raises(ValueError, match=match):
        est.fit(df.drop(columns="cls"), df["cls"])


def test_memory_budget_is_checked():
    df = _random_frame(n=20)
    old = bx.data.set_table_budget(100)
    try:
        with pytest.raises(bx.data.MemoryBudgetError):
            AODE().fit(df.drop(columns="cls"), df["cls"])
    finally:
        bx.data.set_table_budget(old)


def test_vectorised_log_joint_matches_row_loop():
    """The numba kernel and a per-row numpy loop agree on a larger problem."""
    df = _random_frame(n=500, arities=(3, 5, 2, 4, 3, 6), k=4, seed=8)
    data = DiscreteData.from_frame(df)
    cnt = mx.ode_counts(data)
    base, cond = cnt.log_tables()
    X = data.codes[:, :-1]
    fast = mx.ode_log_joint(cnt, X)
    n = X.shape[1]
    for m in range(0, 500, 37):
        x = X[m]
        slow = np.array([base[u, x[u]] + sum(cond[u, v, x[u], x[v]] for v in range(n) if v != u)
                         for u in range(n)])
        np.testing.assert_allclose(fast[m], slow, rtol=1e-12)


# --------------------------------------------------------------------------- reproduction
def test_wdl_table_counts_wins_draws_losses():
    from bnexplore.experiments.cerquides import wdl_table
    rng = np.random.default_rng(0)
    rows = []
    for cfg in range(3):
        for s in range(20):
            base = rng.normal(0.7, 0.05)
            shift = {0: 0.05, 1: 0.0, 2: -0.05}[cfg]        # win, draw, loss for MAPLMG
            rows.append({"cfg": cfg, "AODE0_auc": base, "MAPLMG_auc": base + shift +
                         rng.normal(0, 0.001 if shift else 0.0),
                         "AODE0_er": 0.2, "MAPLMG_er": 0.2 - shift})
    t = wdl_table(pd.DataFrame(rows), ["cfg"], comparisons=[("MAPLMG", "AODE0")],
                  metrics=("auc", "er"))
    assert t.loc["MAPLMG-AODE0", "AUC"] == "1/1/1"
    assert t.loc["MAPLMG-AODE0", "ER"] == "1/1/1"       # lower error is better


@pytest.mark.parametrize("offset", [0.0, 0.3, 1e6])
def test_wdl_table_constant_nonzero_difference_is_a_win_or_loss(offset):
    """A paired difference that is the same non-zero number on every fold (std 0) is
    decided by its sign; an exactly zero difference is a draw (no t-test either way)."""
    from bnexplore.experiments.cerquides import wdl_table
    rows = []
    for cfg, (shift, jitter) in enumerate([(0.01, 0.0), (-0.01, 0.0), (0.0, 0.0), (0.01, 1e-18)]):
        for s in range(10):
            base = offset + 0.1 * s
            rows.append({"cfg": cfg, "AODE0_auc": base, "MAPLMG_auc": base + shift + jitter * s,
                         "AODE0_er": 0.25, "MAPLMG_er": 0.25 + shift})
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # no t-test on a degenerate sample
        t = wdl_table(pd.DataFrame(rows), ["cfg"], comparisons=[("MAPLMG", "AODE0")],
                      metrics=("auc", "er"))
    assert t.attrs["counts"]["MAPLMG-AODE0"]["AUC"] == (2, 1, 1)
    assert t.attrs["counts"]["MAPLMG-AODE0"]["ER"] == (1, 1, 2)   # higher error loses


def test_reduced_random_bn_reproduction_runs():
    from bnexplore import experiments
    from bnexplore.experiments.cerquides import random_bn_trial, wdl_table
    exp = experiments.get("cerquides_random_bn")
    assert exp.n_trials("full") == 4 * 3 * 3 * 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = experiments.run(random_bn_trial, {"n_attributes": [5], "max_arity": [3],
                                               "max_parents": [2], "max_size": 100},
                             random_states=range(3), progress=False)
    assert df["error"].isna().all()
    assert sorted(df["n_train"].unique()) == [25, 100]
    # a training sample holding a single class is recorded as skipped, never as NaN metrics
    skipped = df["AODE0_er"].isna()
    assert (df.loc[skipped, "skipped"] == "one class in the training sample").all()
    ok = df[~skipped]
    assert len(ok) >= 4
    for m in ("AODE0", "AODE30", "BMAAODE", "MAPLMG", "MAPLMD"):
        assert ok[f"{m}_er"].between(0, 1).all() and (ok[f"{m}_logp"] <= 0).all()
    t = wdl_table(df, ["n_attributes", "max_arity", "max_parents", "n_train"])
    for cell in t.to_numpy().ravel():
        assert sum(map(int, cell.split("/"))) <= 2      # at most two configurations


@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_bounded_width_networks_are_connected_with_bounded_moral_treewidth(width):
    """An elimination order of width <= w (min-fill's) proves treewidth <= w; the bound
    is reached, and the class always has a Markov blanket."""
    import networkx as nx

    from bnexplore.experiments.cerquides import bounded_width_network, moral_width
    widths = []
    for seed in range(40):
        bn = bounded_width_network(8 + seed % 13, width, max_arity=4, random_state=seed)
        assert nx.is_directed_acyclic_graph(bn.dag) and nx.is_weakly_connected(bn.dag)
        assert max(d for _, d in bn.dag.in_degree()) <= width
        assert all(bn.markov_blanket(v) for v in bn.nodes)
        assert all(2 <= len(bn.states[v]) <= 4 for v in bn.nodes)
        widths.append(moral_width(bn.dag))
    assert max(widths) == width and np.mean(np.array(widths) == width) > 0.25
    with pytest.raises(ValueError, match="width"):
        bounded_width_network(5, 0, 2, random_state=0)


def test_random_bn_width_trial_rows():
    from bnexplore import experiments
    from bnexplore.experiments.cerquides import random_bn_width_trial
    assert experiments.get("cerquides_random_bn_width").n_trials("full") == 3600
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = random_bn_width_trial(n_attributes=5, max_arity=3, induced_width=2, random_state=1,
                                     max_size=100)
    assert [r["n_train"] for r in rows] == [25, 100]
    assert all(r["mb_size"] >= 1 and r["moral_width"] <= 2 for r in rows)


def test_reduced_uci_trial_runs():
    from bnexplore.experiments.cerquides import uci_trial
    rows = uci_trial("labor", random_state=0, n_folds=3)
    assert len(rows) == 3
    assert all(0 <= r["MAPLMG_er"] <= 1 for r in rows)


def test_weight_functions_check_their_parameters_once_at_the_edge():
    """maplmd_weights / maplmg_weights check max_iter, tol and method with the package's
    validation helpers (errors that are ValueError and TypeError at once)."""
    from bnexplore._validation import InvalidParameterError
    cnt, loo = _loo_problem(seed=0)
    lc = mx.loo_conditional(loo, cnt.y)
    for call, match in [(lambda: mx.maplmd_weights(lc, max_iter=0), "max_iter"),
                        (lambda: mx.maplmd_weights(lc, max_iter=2.5), "max_iter"),
                        (lambda: mx.maplmd_weights(lc, tol=0.0), "tol"),
                        (lambda: mx.maplmg_weights(loo, cnt.y, tol=float("inf")), "tol"),
                        (lambda: mx.maplmg_weights(loo, cnt.y, method="bfgs"), "method")]:
        with pytest.raises(InvalidParameterError, match=match):
            call()


def test_lbfgs_runs_on_one_blas_thread_and_restores_the_pool():
    """MAPLMG's L-BFGS-B runs with one BLAS thread (OpenBLAS threads waking for its tiny
    calls cost 100x on a busy machine) and leaves the thread pools as they were."""
    from threadpoolctl import threadpool_info

    from bnexplore import _mixture_weights as mw
    before = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    with mw._one_blas_thread():
        inside = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    after = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert all(n == 1 for n in inside) and after == before
