"""Dash & Cooper classifiers: NMA, GTT, AMA (scikit-learn estimators)."""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import Pipeline

import bnexplore as bx
from bnexplore.classifiers import AMA, GreedyThickThin, NaiveAveraging, NaiveBayes
from bnexplore.networks import BayesNet
from bnexplore.scores import LocalScore

C = "__class__"


@pytest.fixture(scope="module")
def small():
    bn = bx.networks.random_network(6, max_parents=2, arity=(2, 3), random_state=11)
    df = bn.sample(300, random_state=12)
    target = bn.nodes[2]
    X, y = df.drop(columns=target), df[target].astype(str)
    return X.iloc[:200], y.iloc[:200], X.iloc[200:], y.iloc[200:]


@pytest.fixture(scope="module")
def vote():
    df = bx.datasets.load("vote", missing="drop")
    return df.drop(columns="Class"), df["Class"]


def test_nma_equals_enumeration_of_selective_naive_structures(small):
    X, y, Xt, _ = small
    X, Xt = X.iloc[:, :4], Xt.iloc[:, :4]
    clf = NaiveAveraging(prior="BDeu", ess=3.0).fit(X, y)
    train = X.copy()
    train[C] = pd.Categorical(y, categories=clf.classes_)
    ls = LocalScore(train, prior="BDeu", ess=3.0)
    feats = list(X.columns)
    logw, joints = [], []
    for mask in itertools.product([False, True], repeat=len(feats)):
        dag = nx.DiGraph()
        dag.add_nodes_from(train.columns)
        dag.add_edges_from((C, f) for f, m in zip(feats, mask) if m)
        logw.append(ls.total(dag))
        net = BayesNet.fit(dag, train, prior="BDeu", ess=3.0)
        per_class = []
        for c in clf.classes_:
            t = Xt.copy()
            t[C] = pd.Categorical([c] * len(t), categories=clf.classes_)
            per_class.append(net.log_prob(t))
        joints.append(np.array(per_class).T)
    logw = np.array(logw)
    post = np.exp(logw - logsumexp(logw))
    lj = logsumexp(np.array(joints), axis=0, b=post[:, None, None])
    ref = np.exp(lj - logsumexp(lj, axis=1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(Xt), ref, atol=1e-9, rtol=0)
    assert clf.arc_posteriors_.shape == (4,)
    assert ((clf.arc_posteriors_ >= 0) & (clf.arc_posteriors_ <= 1)).all()


def test_gtt_is_search_plus_standard_parameters(small):
    X, y, Xt, _ = small
    clf = GreedyThickThin().fit(X, y)
    train = X.copy()
    train[C] = pd.Categorical(y, categories=clf.classes_)
    res = bx.search.greedy_thick_thin(train, prior="K2")
    assert set(res.dag.edges) == set(clf.search_.dag.edges)
    net = BayesNet.fit(res.dag, train, prior="K2")
    np.testing.assert_allclose(clf.predict_proba(Xt), net.predict_proba(Xt, C), atol=1e-12)


def test_ama_with_large_n_is_exact_model_averaging(small):
    X, y, Xt, _ = small
    n_feat = X.shape[1]
    exact = AMA(max_parents=2, n=None, order="random", random_state=3).fit(X, y)
    big = AMA(max_parents=2, n=n_feat, order="random", random_state=3).fit(X, y)
    assert big.orders_ == exact.orders_
    np.testing.assert_allclose(big.predict_proba(Xt), exact.predict_proba(Xt), atol=1e-9, rtol=0)
    small_n = AMA(max_parents=2, n=2, order="random", random_state=3).fit(X, y)
    assert all(len(small_n.networks_[0].parents(v)) <= 2 for v in small_n.networks_[0].nodes)
    assert np.abs(small_n.predict_proba(Xt) - exact.predict_proba(Xt)).max() > 1e-6


def test_ama_orders(small):
    X, y, Xt, _ = small
    g = AMA(order="gtt").fit(X, y)
    topo = g.orders_[0]
    pos = {v: i for i, v in enumerate(topo)}
    assert all(pos[u] < pos[v] for u, v in g.order_search_.dag.edges)
    r1 = AMA(order="random", random_state=5).fit(X, y)
    r2 = AMA(order="random", random_state=5).fit(X, y)
    assert r1.orders_ == r2.orders_
    two = AMA(order="two-random", random_state=5).fit(X, y)
    assert len(two.orders_) == 2 and two.orders_[1] == two.orders_[0][::-1]
    p = two.predict_proba(Xt)
    codes = two._encode(Xt)
    test = bx.data.DiscreteData(np.column_stack([codes, np.zeros(len(codes), dtype=codes.dtype)]),
                                two.data_.names, two.data_.states)
    parts = [net.predict_proba(test, C) for net in two.networks_]
    np.testing.assert_allclose(p, (parts[0] + parts[1]) / 2)
    explicit = AMA(order=list(X.columns)[::-1]).fit(X, y)
    assert explicit.orders_[0] == [C] + list(X.columns)[::-1]
    with_class = AMA(order=list(X.columns[:2]) + [C] + list(X.columns[2:])).fit(X, y)
    assert with_class.orders_[0][2] == C


def test_vote_accuracy_and_sklearn_integration(vote):
    X, y = vote
    for clf in (NaiveAveraging(), GreedyThickThin(), AMA(max_parents=2, n=8)):
        scores = cross_val_score(clf, X, y, cv=3, scoring="roc_auc")
        assert scores.mean() > 0.93, (clf, scores)
        c2 = clone(clf)
        assert c2.get_params() == clf.get_params()
    ama = AMA().fit(X, y)
    assert list(ama.predict(X.head(3))) == list(ama.classes_[np.argmax(ama.predict_proba(X.head(3)), 1)])
    nb = NaiveBayes().fit(X, y)
    assert nb.predict_proba(X).shape == ama.predict_proba(X).shape


def test_pipeline_with_discretiser():
    df = bx.datasets.load("iris")
    X, y = df.drop(columns="class"), df["class"]
    pipe = Pipeline([("disc", bx.data.MDLDiscretizer()), ("clf", AMA(max_parents=2, n=3))])
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.mean() > 0.85
    proba = pipe.fit(X, y).predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_bad_parameters(small):
    X, y, Xt, _ = small
    with pytest.raises(ValueError, match="max_parents"):
        AMA(max_parents=-1).fit(X, y)
    with pytest.raises(TypeError, match="n must"):
        AMA(n=2.5).fit(X, y)
    with pytest.raises(ValueError, match="order must be"):
        AMA(order="sideways").fit(X, y)
    with pytest.raises(ValueError, match="missing"):
        AMA(order=list(X.columns[:-1])).fit(X, y)
    with pytest.raises(ValueError, match="prior"):
        NaiveAveraging(prior="AIC").fit(X, y)
    with pytest.raises(ValueError, match="ess"):
        GreedyThickThin(prior="BDeu", ess=0).fit(X, y)
    with pytest.raises(TypeError, match="max_parents"):
        GreedyThickThin(max_parents="2").fit(X, y)
    clf = AMA(order="random", random_state=0, handle_unknown="error").fit(X, y)
    bad = Xt.copy().astype(str)
    bad.iloc[0, 0] = "unseen-state"
    with pytest.raises(ValueError, match="unseen-state"):
        clf.predict_proba(bad)
    with pytest.raises(ValueError, match="features"):
        clf.predict_proba(Xt.iloc[:, :2])


def test_ama_builds_its_summary_networks_at_first_use():
    """fit leaves the summary networks unbuilt; the first prediction builds them once, in
    place (the estimator's attributes stay the same objects), and they equal the
    networks summary_network gives, so predictions are those of the eager build."""
    import bnexplore as bx
    from bnexplore.classifiers import AMA
    from bnexplore.classifiers.averaging import _network_log_joint
    df = bx.datasets.load("vote", missing="drop").iloc[:120]
    X, y = df.drop(columns="Class"), df["Class"]
    clf = AMA(max_parents=2, n=4, order="two-random", random_state=0).fit(X, y)
    assert clf.networks_._networks is None and len(clf.networks_) == 2   # nothing built yet
    before = dict(vars(clf))
    proba = clf.predict_proba(X)
    assert vars(clf) == before and all(vars(clf)[k] is before[k] for k in before)
    built = clf.networks_._networks
    assert built is not None and clf.networks_[1] is built[1]
    clf.predict_proba(X)
    assert clf.networks_._networks is built                              # built once
    eager = [a.summary_network(4) for a in clf.averagings_]
    codes = clf._encode(X)
    ref = np.mean([np.exp(j - np.logaddexp.reduce(j, axis=1, keepdims=True))
                   for j in (_network_log_joint(n, clf.data_, codes) for n in eager)], axis=0)
    np.testing.assert_array_equal(proba, clf.predict_proba(X))
    np.testing.assert_allclose(proba, ref, rtol=0, atol=1e-12)
    assert len(AMA(max_parents=1, n=None).fit(X, y).networks_) == 0


def test_ama_summary_proba_reuses_the_fitted_networks_and_refits_nothing():
    """summary_proba at the fitted n reads the fitted summary networks (built once); at
    another n it equals a fit with that n, and n=None exact model averaging."""
    import bnexplore as bx
    from bnexplore.classifiers import AMA
    df = bx.datasets.load("vote", missing="drop").iloc[:120]
    X, y = df.drop(columns="Class"), df["Class"]
    clf = AMA(max_parents=2, n=3).fit(X, y)
    np.testing.assert_array_equal(clf.summary_proba(X, 3), clf.predict_proba(X))
    built = clf.networks_._networks
    assert built is not None
    np.testing.assert_array_equal(clf.summary_proba(X, 5), AMA(max_parents=2, n=5).fit(X, y).predict_proba(X))
    np.testing.assert_array_equal(clf.summary_proba(X, None),
                                  AMA(max_parents=2, n=None).fit(X, y).predict_proba(X))
    assert clf.networks_._networks is built
