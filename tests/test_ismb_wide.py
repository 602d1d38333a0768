"""ISMB on wide data (issue 38): structures are bitsets of any width, and the classifier's
documented candidate pre-selection (``max_candidates``) keeps the features of largest
one-arc K2 gain."""
import numpy as np
import pandas as pd
import pytest

from bnexplore.classifiers import ISMB
from bnexplore.classifiers.ismb import one_arc_gains
from bnexplore.data import DiscreteData
from bnexplore.ismb import MBModel
from bnexplore.scores import LocalScore


def dna_shaped(n=400, p=180, seed=0):
    """n rows of p binary features (the DNA shape), 3 classes tied to features far past
    the 64th, so that the blankets hold bits beyond one machine word."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, p))
    a, b, c = p * 5 // 6, p * 17 // 18, p * 5 // 9      # 150, 170, 100 of 180
    y = (X[:, a] + X[:, b] + (rng.random(n) < 0.1)) % 3
    X[:, c] = X[:, a] ^ (rng.random(n) < 0.05)
    return pd.DataFrame(X, columns=[f"a{j}" for j in range(p)]), np.array(["ei", "ie", "n"])[y]


def test_one_arc_gains_are_k2_family_score_differences():
    X, y = dna_shaped(n=60, p=12)
    X = X.astype(str)
    X.iloc[3, 4] = None                     # available case: that row leaves feature 4 only
    df = X.assign(Z=y)
    data = DiscreteData.from_frame(df, target="Z", missing="keep")
    assert data.missing.sum() == 1
    g = one_arc_gains(data)
    t = data.n_cols - 1
    for j in range(t):
        sub = data.subset([data.names[j], "Z"]).take(np.flatnonzero(~data.missing[:, j]))
        ls = LocalScore(sub, prior="K2")
        want = max(ls.score_idx(1, (0,)) - ls.score_idx(1, ()), ls.score_idx(0, (1,)) - ls.score_idx(0, ()))
        assert g[j] == pytest.approx(want, rel=1e-12, abs=1e-9)


def test_mbmodel_on_180_features_scores_and_predicts_like_the_definitions():
    X, y = dna_shaped()
    df = X.astype(str).assign(Z=y)
    df.attrs["target"] = "Z"
    m = MBModel(df)
    assert m.p == 181
    res = m.search(X.astype(str).iloc[0], queue_width=50)
    wide = [mb for mb in res.models if any(mb.masks[v] >> 64 for v in range(m.p))
            or any(mb.names.index(c) >= 64 for c in mb.children)]
    assert wide, "no structure used a variable past the 64th"
    ls = LocalScore(m.data.complete_cases(), prior="K2")
    for mb, s in zip(res.models[:20], res.log_scores[:20]):
        fams = sum(ls.score_idx(v, tuple(sorted(m.data.index(q) for q in mb.parents_of(name))))
                   for v, name in enumerate(mb.names))
        assert s == pytest.approx(fams, rel=1e-10)
    assert np.isclose(res.proba.sum(), 1.0)


def test_classifier_on_180_features_all_candidates_and_selected():
    X, y = dna_shaped()
    full = ISMB(queue_width=50, max_candidates=None).fit(X, y)
    assert full.model_.p == 181 and list(full.candidates_) == list(range(180))
    p_full = full.predict_proba(X.iloc[:2])
    assert p_full.shape == (2, 3) and np.allclose(p_full.sum(axis=1), 1.0)
    sel = ISMB(queue_width=50, max_candidates=20).fit(X, y)
    gains = one_arc_gains(sel.data_)
    assert len(sel.candidates_) == 20
    assert gains[sel.candidates_].min() >= np.delete(gains, sel.candidates_).max()
    assert {100, 150, 170} <= set(sel.candidates_.tolist())
    # the selection is the whole difference: the same as fitting on those columns
    alone = ISMB(queue_width=50).fit(X.iloc[:, sel.candidates_], y)
    np.testing.assert_array_equal(sel.predict_proba(X.iloc[:3]), alone.predict_proba(X.iloc[:3, sel.candidates_]))


def test_default_selects_61_of_many_features_and_few_are_untouched():
    X, y = dna_shaped(n=30, p=70)
    clf = ISMB(queue_width=20).fit(X, y)
    assert len(clf.candidates_) == 61 and clf.model_.p == 62
    assert clf.predict(X.iloc[:2]).shape == (2,)
    clf = ISMB(queue_width=20).fit(X.iloc[:, :61], y)
    assert list(clf.candidates_) == list(range(61))


def test_max_candidates_is_checked():
    X, y = dna_shaped(n=20, p=5)
    with pytest.raises(ValueError, match="max_candidates"):
        ISMB(max_candidates=0).fit(X, y)
    with pytest.raises(TypeError, match="max_candidates"):
        ISMB(max_candidates=2.5).fit(X, y)
