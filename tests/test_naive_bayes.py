import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import cross_val_score

from bnexplore.classifiers import NaiveBayes


def toy(n=300, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = pd.DataFrame({"a": (y + rng.integers(0, 2, n)) % 3, "b": rng.choice(["u", "v"], n),
                      "c": (y == 2).astype(int) ^ (rng.random(n) < 0.1)})
    return X, np.array(["lo", "mid", "hi"])[y]


def test_matches_hand_computed_posterior():
    X, y = toy()
    clf = NaiveBayes().fit(X, y)
    row = X.iloc[[5]]
    classes = clf.classes_
    # independent: Laplace estimates from pandas counts (K2 = alpha 1)
    logp = []
    for c in classes:
        m = y == c
        lp = np.log((m.sum() + 1) / (len(y) + len(classes)))
        for col in X.columns:
            r = X[col].nunique()
            lp += np.log(((X.loc[m, col] == row[col].iloc[0]).sum() + 1) / (m.sum() + r))
        logp.append(lp)
    logp = np.array(logp)
    want = np.exp(logp - logp.max()); want /= want.sum()
    np.testing.assert_allclose(clf.predict_proba(row)[0], want, rtol=1e-12)
    assert list(classes) == sorted(set(y))


def test_sklearn_conventions_and_cv():
    X, y = toy()
    clf = NaiveBayes(prior="BDeu", ess=2.0)
    assert clf.get_params() == {"prior": "BDeu", "ess": 2.0, "handle_unknown": "missing"}
    scores = cross_val_score(clf, X, y, cv=3)
    assert scores.mean() > 0.6
    p = clf.fit(X, y).predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert set(clf.predict(X)) <= set(clf.classes_)


def test_bad_inputs():
    X, y = toy()
    with pytest.raises(ValueError, match="single class"):
        NaiveBayes().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="prior"):
        NaiveBayes(prior="x").fit(X, y)
    with pytest.raises(ValueError, match="ess"):
        NaiveBayes(prior="BDeu", ess=-1).fit(X, y)
    clf = NaiveBayes(handle_unknown="error").fit(X, y)
    bad = X.iloc[:2].copy(); bad["b"] = ["u", "w"]
    with pytest.raises(ValueError, match="'b' has value 'w' never seen"):
        clf.predict_proba(bad)
    with pytest.raises(ValueError, match="features"):
        clf.predict_proba(X.iloc[:, :2])
    cont = X.copy(); cont["a"] = np.linspace(0, 1, len(X))
    with pytest.raises(ValueError, match="'a' is continuous"):
        NaiveBayes().fit(cont, y)
    miss = X.copy().astype(object); miss.iloc[:, 1] = None
    with pytest.raises(ValueError, match="column 'b' has no observed value"):
        NaiveBayes().fit(miss, y)
