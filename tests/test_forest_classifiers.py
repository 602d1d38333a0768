"""TAN / FAN / STAN / SFAN: structure classes, predictions against independent oracles."""
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline

import bnexplore as bx
from bnexplore.classifiers import FAN, SFAN, STAN, TAN, NaiveBayes
from bnexplore.networks import BayesNet
from test_forests import brute_force

CLS = "__class__"


@pytest.fixture(scope="module")
def vote():
    with pytest.warns(UserWarning, match="dropped"):
        df = bx.datasets.load("vote", missing="drop")
    return df.drop(columns="Class"), df["Class"]


def small_data(n=150, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    f0 = np.where(rng.random(n) < 0.8, y, 1 - y)
    f1 = np.where(rng.random(n) < 0.7, f0, rng.integers(0, 2, n))
    f2 = rng.integers(0, 3, n)
    X = pd.DataFrame({"f0": f0, "f1": f1, "f2": f2}).astype("category")
    return X, pd.Series(np.where(y == 1, "yes", "no"))


@pytest.mark.parametrize("cls, tree, all_class", [(TAN, True, True), (FAN, False, True),
                                                   (STAN, True, False), (SFAN, False, False)])
def test_structure_classes(vote, cls, tree, all_class):
    X, y = vote
    clf = cls().fit(X, y)
    g = clf.graph_
    feats = list(X.columns)
    intra = g.subgraph(feats)
    assert nx.is_directed_acyclic_graph(g)
    assert all(intra.in_degree(f) <= 1 for f in feats)
    roots = [f for f in feats if intra.in_degree(f) == 0]
    if tree:
        assert len(roots) == 1
    if all_class:
        assert all(g.has_edge(CLS, f) for f in feats)
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert (clf.predict(X) == y).mean() > 0.9


def test_map_prediction_equals_bayesnet_oracle(vote):
    X, y = vote
    clf = SFAN(penalty=1.0).fit(X, y)
    frame = X.copy()
    frame.attrs = {}
    frame[CLS] = pd.Categorical(y, categories=clf.classes_)
    bn = BayesNet.fit(clf.graph_, frame, prior="BDeu", ess=10.0)
    oracle = bn.predict_proba(frame.drop(columns=CLS), CLS)
    np.testing.assert_allclose(clf.predict_proba(X), np.asarray(oracle), atol=1e-10)


@pytest.mark.parametrize("cls, intra, pen", [(SFAN, "forest", 0.0), (FAN, "forest", math.inf),
                                             (STAN, "tree", 0.0), (TAN, "tree", math.inf)])
def test_bma_prediction_equals_brute_force(cls, intra, pen):
    X, y = small_data()
    clf = cls(averaging="bma", ess=10.0).fit(X, y)
    frame = X.copy()
    frame[CLS] = pd.Categorical(y, categories=clf.classes_)
    test = X.iloc[:8]
    logp = []
    for c in clf.classes_:
        t = test.copy()
        t[CLS] = pd.Categorical([c] * len(t), categories=clf.classes_)
        bf = brute_force(frame, ["f0", "f1", "f2"], [CLS], 1, pen, "BDeu", 10.0, intra=intra, test=t)
        n_c = (y == c).sum()
        logp.append(bf["logpred"] + np.log((n_c + 5.0) / (len(y) + 10.0)))
    logp = np.array(logp).T
    expect = np.exp(logp - logp.max(axis=1, keepdims=True))
    expect /= expect.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(clf.predict_proba(test), expect, atol=1e-10)


def test_fan_is_sfan_with_infinite_penalty(vote):
    X, y = vote
    a = FAN().fit(X, y)
    b = SFAN(penalty=float("inf")).fit(X, y)
    assert set(a.graph_.edges) == set(b.graph_.edges)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X))


def test_selective_models_drop_noise_features(vote):
    X, y = vote
    rng = np.random.default_rng(0)
    Xn = X.copy()
    for i in range(20):
        Xn[f"noise{i}"] = pd.Categorical(rng.integers(0, 2, len(X)))
    sfan = SFAN().fit(Xn, y)
    noisy_in_mb = [f for f in sfan.markov_blanket_ if f.startswith("noise")]
    assert len(noisy_in_mb) <= 2
    fan = FAN().fit(Xn, y)
    assert sum(f.startswith("noise") for f in fan.markov_blanket_) == 20


def test_bma_edge_posteriors_of_classifier(vote):
    X, y = vote
    clf = SFAN(averaging="bma", penalty=2.0).fit(X, y)
    P = clf.edge_posteriors()
    feats = list(X.columns)
    np.testing.assert_allclose(P.loc[feats + [bx.forests.ROOT], feats].sum(axis=0), 1.0, atol=1e-9)
    assert ((P.loc[CLS] >= 0) & (P.loc[CLS] <= 1)).all()
    for tree in (TAN(), STAN(averaging="bma", penalty=2.0)):    # spanning trees: one root
        P = tree.fit(X, y).edge_posteriors()
        np.testing.assert_allclose(P.loc[feats + [bx.forests.ROOT], feats].sum(axis=0), 1.0, atol=1e-9)
        assert P.loc[bx.forests.ROOT].sum() == pytest.approx(1.0, abs=1e-9)


def test_sklearn_conventions(vote):
    X, y = vote
    clf = SFAN(penalty=2.0, averaging="bma")
    assert clf.get_params() == {"penalty": 2.0, "max_parents": 1, "averaging": "bma",
                                "prior": "BDeu", "ess": 10.0, "handle_unknown": "missing"}
    c2 = clone(clf)
    assert c2.get_params() == clf.get_params()
    scores = cross_val_score(SFAN(), X, y, cv=3)
    assert scores.mean() > 0.85
    # pipeline with the MDL discretiser on continuous data
    iris = bx.datasets.load("iris")
    Xi, yi = iris.drop(columns="class"), iris["class"]
    pipe = make_pipeline(bx.data.MDLDiscretizer(), TAN())
    assert cross_val_score(pipe, Xi, yi, cv=3).mean() > 0.85
    # numpy input works too
    Xa = np.asarray(X.astype(str))
    assert (SFAN().fit(Xa, y).predict(Xa) == y.to_numpy()).mean() > 0.9


def test_compared_with_naive_bayes(vote):
    X, y = vote
    nb = cross_val_score(NaiveBayes(prior="BDeu", ess=10.0), X, y, cv=5).mean()
    tan = cross_val_score(TAN(), X, y, cv=5).mean()
    assert tan > nb - 0.02


@pytest.mark.parametrize("clf, exc, match", [
    (SFAN(averaging="mean"), ValueError, "averaging must be"),
    (SFAN(penalty=-2.0), ValueError, "penalty must be >= 0"),
    (SFAN(max_parents=-1), ValueError, "max_parents"),
    (SFAN(prior="uniform"), ValueError, "prior must be one of"),
    (STAN(ess=0.0), ValueError, "ess"),
])
def test_bad_parameters(vote, clf, exc, match):
    X, y = vote
    with pytest.raises(exc, match=match):
        clf.fit(X, y)


def test_bad_predict_input(vote):
    X, y = vote
    clf = SFAN().fit(X, y)
    bad = X.iloc[:3].copy()
    bad.iloc[0, 0] = np.nan
    fitted = SFAN().fit(bad, y[:3])           # NaN at fit time is a missing value
    assert fitted.data_.missing[0, 0]
    with pytest.raises(ValueError, match="features"):
        clf.predict(X.iloc[:, :3])
    with pytest.raises(ValueError, match="single class"):
        SFAN().fit(X, np.zeros(len(X)))
