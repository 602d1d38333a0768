"""Tests for bnexplore.metrics against scikit-learn and hand-computed cases."""
import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from bnexplore import metrics as M


def _random_proba(rng, n, k, ties=False):
    p = rng.dirichlet(np.ones(k), size=n)
    if ties:  # coarse values produce many ties
        p = np.round(p, 1)
        p[:, -1] = 1.0 - p[:, :-1].sum(axis=1)
        p = np.clip(p, 0, 1)
        p /= p.sum(axis=1, keepdims=True)
    return p


@pytest.mark.parametrize("values", [[3.0], [2.0, 1.0, 2.0, 2.0, 0.5, 1.0], [0.1] * 4,
                                    np.round(np.random.default_rng(0).random(200), 1)])
def test_average_ranks_match_scipy(values):
    from scipy.stats import rankdata

    x = np.asarray(values, dtype=float)
    np.testing.assert_array_equal(M._average_ranks(x), rankdata(x))


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("ties", [False, True])
def test_binary_auc_matches_sklearn(seed, ties):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=60)
    s = rng.random(60)
    if ties:
        s = np.round(s, 1)
    expected = skm.roc_auc_score(y, s)
    assert M.auc(y, s) == pytest.approx(expected, abs=1e-12)
    # string labels and a 2-column proba
    labels = np.array(["neg", "pos"])[y]
    assert M.auc(labels, np.column_stack([1 - s, s])) == pytest.approx(expected, abs=1e-12)
    # trapezoidal area under our ROC curve equals the Mann-Whitney statistic
    fpr, tpr, _ = M.roc_curve(labels, s, pos_label="pos")
    assert np.trapezoid(tpr, fpr) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", [False, True])
def test_multiclass_auc_is_hand_till_and_matches_sklearn_ovo(seed, ties):
    rng = np.random.default_rng(seed)
    k = 4
    y = rng.integers(0, k, size=80)
    y[:k] = np.arange(k)
    p = _random_proba(rng, 80, k, ties=ties)
    expected = skm.roc_auc_score(y, p, multi_class="ovo", average="macro")
    assert M.auc(y, p) == pytest.approx(expected, abs=1e-12)
    # labels of any type with explicit class order
    names = np.array(["d", "c", "b", "a"])
    assert M.auc(names[y], p, classes=names) == pytest.approx(expected, abs=1e-12)


def test_hand_till_by_hand():
    # three classes, one instance each; A(i|j) computed by hand
    y = ["a", "b", "c"]
    p = [[0.6, 0.3, 0.1], [0.5, 0.4, 0.1], [0.2, 0.2, 0.6]]
    # A(a|b)=1 (0.6>0.5), A(b|a)=1 (0.4>0.3); A(a|c)=1, A(c|a)=1; A(b|c)=1 (0.4>0.2), A(c|b)=1
    assert M.auc(y, p) == 1.0
    p2 = [[0.4, 0.3, 0.3], [0.5, 0.4, 0.1], [0.2, 0.2, 0.6]]
    # A(a|b)=0 (0.4<0.5), A(b|a)=1 (0.4>0.3): pair ab = 0.5; others 1 -> M = (0.5+1+1)/3
    assert M.auc(y, p2) == pytest.approx(2.5 / 3)


def test_roc_curve_ties_one_step_and_matches_sklearn():
    y = [0, 1, 0, 1, 1, 0]
    s = [0.3, 0.3, 0.3, 0.9, 0.5, 0.1]
    fpr, tpr, thr = M.roc_curve(y, s)
    assert thr.tolist() == [np.inf, 0.9, 0.5, 0.3, 0.1]
    assert fpr.tolist() == pytest.approx([0, 0, 0, 2 / 3, 1])
    assert tpr.tolist() == pytest.approx([0, 1 / 3, 2 / 3, 1, 1])
    sf, st, sthr = skm.roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sf)
    np.testing.assert_allclose(tpr, st)
    np.testing.assert_allclose(thr[1:], sthr[1:])


def test_log_loss_matches_sklearn():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, size=50)
    p = _random_proba(rng, 50, 3)
    assert M.log_loss(y, p) == pytest.approx(skm.log_loss(y, p), rel=1e-12)
    labels = np.array(["x", "y", "z"])[y]
    assert M.log_loss(labels, p, classes=["x", "y", "z"]) == pytest.approx(
        skm.log_loss(y, p), rel=1e-12)
    assert M.log_loss(y, p, base=2) == pytest.approx(skm.log_loss(y, p) / np.log(2))
    # binary with a 1-D proba
    yb = rng.integers(0, 2, size=30)
    pb = rng.random(30)
    assert M.log_loss(yb, pb) == pytest.approx(skm.log_loss(yb, pb), rel=1e-12)
    # zero probability of the true class is clipped, not infinite
    assert np.isfinite(M.log_loss([0, 1], [[1.0, 0.0], [1.0, 0.0]]))


def test_squared_error_definition():
    rng = np.random.default_rng(2)
    yb = rng.integers(0, 2, size=40)
    pb = rng.random(40)
    # binary: equals the usual Brier score mean (y - p)^2
    assert M.squared_error(yb, pb) == pytest.approx(skm.brier_score_loss(yb, pb))
    assert M.squared_error(yb, pb, normalize=False) == pytest.approx(
        2 * skm.brier_score_loss(yb, pb))
    # multi-class by hand: ((.3^2+.2^2+.1^2) + (.5^2+.5^2+0)) / 2 / 2
    y = ["a", "b"]
    p = [[0.7, 0.2, 0.1], [0.5, 0.5, 0.0]]
    assert M.squared_error(y, p, classes=["a", "b", "c"]) == pytest.approx(
        ((0.09 + 0.04 + 0.01) + (0.25 + 0.25)) / 4)


def test_error_rate():
    assert M.error_rate(["a", "b", "c", "c"], ["a", "b", "b", "c"]) == 0.25
    p = [[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]]
    # ties -> first class
    assert M.error_rate([1, 0, 1], p) == pytest.approx(1 / 3)
    assert M.error_rate(pd.Series(["u", "v"], dtype="category"), [[0.1, 0.9], [0.1, 0.9]]) \
        == 0.5


def test_cal_score_by_hand():
    y = [0, 0, 1, 0, 1, 1]
    p = [0.1, 0.2, 0.3, 0.6, 0.7, 0.9]
    # windows of 3 over the sorted cases:
    # (.1,.2,.3) mean .2 vs 1/3; (.2,.3,.6) .3667 vs 1/3; (.3,.6,.7) .5333 vs 2/3;
    # (.6,.7,.9) .7333 vs 2/3
    expected = np.mean([abs(0.2 - 1 / 3), abs(1.1 / 3 - 1 / 3), abs(1.6 / 3 - 2 / 3),
                        abs(2.2 / 3 - 2 / 3)])
    assert M.cal_score(y, p, bin_size=3) == pytest.approx(expected)
    # unsorted input gives the same value
    order = [3, 0, 5, 2, 4, 1]
    assert M.cal_score(np.array(y)[order], np.array(p)[order], bin_size=3) == \
        pytest.approx(expected)
    # fewer cases than bin_size: one window
    assert M.cal_score(y, p) == pytest.approx(abs(np.mean(p) - 0.5))
    # perfectly calibrated constant prediction
    assert M.cal_score([0, 1, 0, 1], [0.5] * 4, bin_size=4) == 0.0
    assert M.cal_score(["n", "p"], [0.0, 1.0], bin_size=1, pos_label="p") == 0.0


def test_cal_score_matches_naive_sliding_window():
    rng = np.random.default_rng(3)
    p = rng.random(250)
    y = (rng.random(250) < p).astype(int)
    o = np.argsort(p, kind="mergesort")
    ps, ys = p[o], y[o]
    naive = np.mean([abs(ps[i:i + 100].mean() - ys[i:i + 100].mean())
                     for i in range(250 - 100 + 1)])
    assert M.cal_score(y, p) == pytest.approx(naive, abs=1e-12)


def test_delta_by_hand():
    assert M.delta(0.9, 0.8) == pytest.approx(0.5)
    assert M.delta(0.8, 0.8) == 0.0
    assert M.delta(0.6, 0.8) == pytest.approx(-1.0)
    assert M.delta(1.0, 0.75) == pytest.approx(1.0)
    assert M.delta(1.0, 1.0) == 0.0
    np.testing.assert_allclose(M.delta([0.9, 1.0, 0.95], [0.8, 1.0, 0.9]), [0.5, 0.0, 0.5])
    assert M.delta(90, 80, perfect=100) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="M2 is perfect"):
        M.delta(0.9, 1.0)
    with pytest.raises(ValueError, match="r1"):
        M.delta(1.2, 0.5)


@pytest.mark.parametrize("call, match", [
    (lambda: M.auc([0, 1, 1], [[0.5, 0.5], [0.5, 0.5]]), "shape"),
    (lambda: M.auc([0, 0], [0.1, 0.2], classes=[0, 1]), "single class"),
    (lambda: M.auc([0, 1, 2], [0.1, 0.2, 0.3]), "1-D proba"),
    (lambda: M.log_loss([0, 1], [[0.5, 0.6], [0.5, 0.5]]), "sum to 1"),
    (lambda: M.log_loss([0, 1], [[1.5, -0.5], [0.5, 0.5]]), r"\[0, 1\]"),
    (lambda: M.log_loss([0, 3], [[0.5, 0.5], [0.5, 0.5]], classes=[0, 1]), "not in classes"),
    (lambda: M.log_loss([0, 1], [[np.nan, 0.5], [0.5, 0.5]]), "NaN"),
    (lambda: M.squared_error([0, 1], [[0.5, 0.5]]), "expected"),
    (lambda: M.squared_error([0, 1], [[0.5, 0.5], [0.5, 0.5]], classes=[0, 0]), "duplicate"),
    (lambda: M.roc_curve(["a", "b"], [0.1, 0.2]), "pos_label"),
    (lambda: M.roc_curve([1, 1], [0.1, 0.2]), "both positive and negative"),
    (lambda: M.cal_score([0, 1], [0.1, 1.2]), r"\[0, 1\]"),
    (lambda: M.cal_score([0, 1], [0.1, 0.2], bin_size=0), "bin_size"),
    (lambda: M.cal_score(["a", "b"], [0.1, 0.2]), "pos_label"),
    (lambda: M.error_rate([0, 1], [0]), "y_pred"),
    (lambda: M.auc([0, None], [0.1, 0.2]), "missing"),
])
def test_clear_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
