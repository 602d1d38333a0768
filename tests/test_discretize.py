"""MDLDiscretizer (Fayyad & Irani) and EqualFrequencyDiscretizer."""
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, cross_val_score, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import bnexplore as bx
from bnexplore.data import EqualFrequencyDiscretizer, MDLDiscretizer
from bnexplore.data.discretize import (equal_frequency_cut_points, interval_labels, mdl_accepts,
                                       mdl_cut_points)


def log2(x):
    return math.log(x, 2)


def H(*p):
    n = sum(p)
    return -sum(q / n * log2(q / n) for q in p if q)


@pytest.fixture(scope="module")
def iris():
    df = bx.datasets.load("iris")
    return df.drop(columns="class"), df["class"]


# ------------------------------------------------------------- MDL criterion
def test_mdl_accepts_hand_worked_pure_split():
    # S = 4 + 4, split into two pure halves: gain 1 bit, k = 2, k1 = k2 = 1
    ok, gain, thr = mdl_accepts(np.array([4, 4]), np.array([4, 0]), np.array([0, 4]))
    delta = log2(3 ** 2 - 2) - (2 * 1.0 - 0 - 0)
    assert gain == pytest.approx(1.0)
    assert thr == pytest.approx((log2(7) + delta) / 8)
    assert thr == pytest.approx(0.4518, abs=1e-4)
    assert ok


def test_mdl_rejects_hand_worked_weak_split():
    # x = 1..4, y = 0 1 0 1: best cut 1.5 gives S1 = {0}, S2 = {1, 0, 1}
    ok, gain, thr = mdl_accepts(np.array([2, 2]), np.array([1, 0]), np.array([1, 2]))
    assert gain == pytest.approx(1 - 0.75 * H(1, 2))
    delta = log2(7) - (2 * 1.0 - 1 * 0.0 - 2 * H(1, 2))
    assert thr == pytest.approx((log2(3) + delta) / 4)
    assert not ok
    assert mdl_cut_points(np.array([1.0, 2, 3, 4]), np.array([0, 1, 0, 1])) == []


def test_mdl_cut_points_hand_worked():
    assert mdl_cut_points(np.arange(1.0, 9.0), np.array([0] * 4 + [1] * 4)) == [4.5]
    # 3 of class 0 then 7 of class 1: gain = H(3, 7) = 0.881 > (log2 9 + log2 7 - 2 H) / 10
    x, y = np.arange(1.0, 11.0), np.array([0] * 3 + [1] * 7)
    ok, gain, thr = mdl_accepts(np.array([3, 7]), np.array([3, 0]), np.array([0, 7]))
    assert gain == pytest.approx(H(3, 7)) and thr == pytest.approx((log2(9) + log2(7) - 2 * H(3, 7)) / 10)
    assert mdl_cut_points(x, y) == [3.5]
    # order of the input does not matter
    perm = np.random.default_rng(0).permutation(10)
    assert mdl_cut_points(x[perm], y[perm]) == [3.5]


def test_mdl_cuts_only_between_distinct_values():
    # value 1 carries 20 zeros and 10 ones, value 2 carries 30 ones; the entropy
    # optimum ignoring ties would split inside the 1s - that is not allowed.
    x = np.array([1.0] * 30 + [2.0] * 30)
    y = np.array([0] * 20 + [1] * 10 + [1] * 30)
    assert mdl_cut_points(x, y) == [1.5]
    assert mdl_cut_points(np.full(50, 3.0), np.arange(50) % 2) == []


def test_mdl_rejects_pure_noise():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=300)
        assert mdl_cut_points(x, rng.integers(0, 2, 300)) == [], seed
        assert mdl_cut_points(x, rng.integers(0, 4, 300)) == [], seed


def test_mdl_finds_a_real_threshold():
    rng = np.random.default_rng(1)
    x = rng.normal(size=400)
    y = (x > 0.3).astype(int)
    cuts = mdl_cut_points(x, y)
    assert len(cuts) == 1
    assert max(x[x <= 0.3]) < cuts[0] < min(x[x > 0.3])


def test_iris_classic_cut_points(iris):
    X, y = iris
    mdl = MDLDiscretizer().fit(X, y)
    # the classic Fayyad-Irani / Weka result on the full iris data
    assert mdl.cut_points_["petallength"] == pytest.approx([2.45, 4.75])
    assert mdl.cut_points_["petalwidth"] == pytest.approx([0.8, 1.75])
    assert mdl.cut_points_["sepallength"] == pytest.approx([5.55, 6.15])
    assert mdl.cut_points_["sepalwidth"] == pytest.approx([2.95, 3.35])
    Xd = mdl.transform(X)
    assert list(Xd["petallength"].cat.categories) == ["(-inf, 2.45]", "(2.45, 4.75]", "(4.75, inf)"]
    assert Xd["petallength"].cat.ordered
    # petal length separates setosa perfectly
    setosa = (y == "Iris-setosa").to_numpy()
    assert (Xd["petallength"][setosa] == "(-inf, 2.45]").all()
    assert (Xd["petallength"][~setosa] != "(-inf, 2.45]").all()
    assert list(mdl.classes_) == ["Iris-setosa", "Iris-versicolor", "Iris-virginica"]


# -------------------------------------------------------- transformer rules
def test_labels_and_right_closed_intervals():
    assert interval_labels([2.45, 4.75]) == ["(-inf, 2.45]", "(2.45, 4.75]", "(4.75, inf)"]
    assert interval_labels([]) == ["All"]
    close = interval_labels([1.0000001, 1.0000002])
    assert len(set(close)) == 3
    X = pd.DataFrame({"x": np.arange(1.0, 9.0) + 0.25})
    y = [0] * 4 + [1] * 4
    mdl = MDLDiscretizer(columns=["x"]).fit(X, y)
    cut = mdl.cut_points_["x"][0]
    out = mdl.transform(pd.DataFrame({"x": [cut, cut + 1e-9, -np.inf, np.inf]}))["x"]
    assert list(out.astype(str)) == [f"(-inf, {cut:g}]", f"({cut:g}, inf)", f"(-inf, {cut:g}]", f"({cut:g}, inf)"]


def test_single_state_column_when_no_cut():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"noise": rng.normal(size=200)})
    mdl = MDLDiscretizer().fit(X, rng.integers(0, 2, 200))
    assert mdl.cut_points_ == {"noise": []}
    out = mdl.transform(X)["noise"]
    assert list(out.cat.categories) == ["All"] and (out == "All").all()


def test_auto_columns_and_passthrough():
    rng = np.random.default_rng(0)
    n = 120
    y = rng.integers(0, 2, n)
    X = pd.DataFrame({
        "cont": rng.normal(size=n) + 3 * y,             # continuous: discretised
        "smallint": rng.integers(0, 4, n),              # few integers: left alone (values seen in fit)
        "manyint": rng.integers(0, 1000, n),            # many distinct integers: discretised
        "flag": rng.integers(0, 2, n).astype(bool),
        "cat": pd.Categorical(rng.choice(["a", "b"], n)),
        "txt": rng.choice(["u", "v"], n),
    })
    mdl = MDLDiscretizer().fit(X, y)
    assert mdl.columns_ == ["cont", "manyint"]
    out = mdl.transform(X)
    for c in ["smallint", "flag", "cat", "txt"]:
        pd.testing.assert_series_equal(out[c], X[c])
    assert mdl.value_states_ == {"smallint": [0, 1, 2, 3]}
    assert isinstance(out["cont"].dtype, pd.CategoricalDtype)
    assert len(mdl.cut_points_["cont"]) >= 1
    numeric = MDLDiscretizer(columns="numeric").fit(X, y)
    assert numeric.columns_ == ["cont", "smallint", "manyint"]
    assert list(mdl.get_feature_names_out()) == list(X.columns)


def test_missing_values_pass_through():
    x = np.arange(1.0, 41.0) + 0.25
    y = (x > 20.5).astype(int)
    x[[3, 30]] = np.nan
    X = pd.DataFrame({"x": x})
    mdl = MDLDiscretizer().fit(X, y)
    assert mdl.cut_points_["x"] == [20.75]
    out = mdl.transform(X)["x"]
    assert out.isna().sum() == 2 and out.isna()[3] and out.isna()[30]
    with pytest.raises(ValueError, match="y has 1 missing values"):
        MDLDiscretizer().fit(X, pd.Series(np.where(np.arange(40) == 5, None, y)))


def test_bad_inputs():
    X = pd.DataFrame({"x": np.linspace(0, 1, 60), "t": ["a", "b"] * 30})
    y = [0, 1] * 30
    with pytest.raises(TypeError, match="supervised"):
        MDLDiscretizer().fit(X)
    with pytest.raises(ValueError, match="y has 59 values but X has 60 rows"):
        MDLDiscretizer().fit(X, y[:-1])
    with pytest.raises(NotFittedError):
        MDLDiscretizer().transform(X)
    with pytest.raises(TypeError, match="column 't'.*not numeric"):
        MDLDiscretizer(columns=["t"]).fit(X, y)
    with pytest.raises(ValueError, match=r"columns \['zz'\] are not in X"):
        MDLDiscretizer(columns=["zz"]).fit(X, y)
    with pytest.raises(ValueError, match="columns must be 'auto'"):
        MDLDiscretizer(columns="everything").fit(X, y)
    with pytest.raises(ValueError, match="no rows"):
        MDLDiscretizer().fit(X.iloc[:0], [])
    mdl = MDLDiscretizer().fit(X, y)
    with pytest.raises(ValueError, match=r"missing \['x'\]"):
        mdl.transform(X[["t"]])
    # columns in another order are accepted and put back in fit order
    assert list(mdl.transform(X[["t", "x"]]).columns) == ["x", "t"]


def test_numpy_input():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2))
    y = (X[:, 0] > 0).astype(int)
    mdl = MDLDiscretizer().fit(X, y)
    assert not hasattr(mdl, "feature_names_in_") and mdl.n_features_in_ == 2
    assert set(mdl.cut_points_) == {"x0", "x1"} and len(mdl.cut_points_["x0"]) == 1
    assert list(mdl.transform(X).columns) == ["x0", "x1"]


# ---------------------------------------------------------------- sklearn
def test_sklearn_params_clone(iris):
    X, y = iris
    mdl = MDLDiscretizer(columns="numeric", min_rows=3)
    assert mdl.get_params() == {"columns": "numeric", "min_rows": 3}
    assert clone(mdl).set_params(min_rows=5).min_rows == 5
    mdl.fit(X, y)
    assert list(mdl.feature_names_in_) == list(X.columns) and mdl.n_features_in_ == 4
    assert not hasattr(clone(mdl), "cut_points_")
    ef = EqualFrequencyDiscretizer(n_bins=3)
    assert ef.get_params() == {"n_bins": 3, "columns": "auto"}


def test_pipeline_cross_val_fits_on_training_folds_only(iris):
    X, y = iris
    pipe = make_pipeline(MDLDiscretizer(), OneHotEncoder(handle_unknown="ignore"), LogisticRegression(max_iter=500))
    cv = KFold(5, shuffle=True, random_state=0)
    res = cross_validate(pipe, X, y, cv=cv, return_estimator=True)
    assert res["test_score"].mean() > 0.85
    for est, (train, _) in zip(res["estimator"], cv.split(X, y)):
        fold = MDLDiscretizer().fit(X.iloc[train], y.iloc[train])
        assert est[0].cut_points_ == fold.cut_points_
    pipe_q = make_pipeline(EqualFrequencyDiscretizer(n_bins=5), OneHotEncoder(handle_unknown="ignore"),
                           LogisticRegression(max_iter=500))
    assert cross_val_score(pipe_q, X, y, cv=KFold(3, shuffle=True, random_state=0)).mean() > 0.8


# ----------------------------------------------------------- equal frequency
def test_equal_frequency_cut_points():
    assert equal_frequency_cut_points(np.arange(10.0), 5) == [1.5, 3.5, 5.5, 7.5]
    # ties: fewer bins, later bins re-balanced
    assert equal_frequency_cut_points(np.array([1.0] * 6 + [2, 3]), 4) == [1.5, 2.5]
    assert equal_frequency_cut_points(np.array([1.0, 1, 2, 2]), 5) == [1.5]
    assert equal_frequency_cut_points(np.full(7, 2.0), 5) == []
    assert equal_frequency_cut_points(np.arange(10.0), 1) == []
    assert equal_frequency_cut_points(np.array([np.nan, 1, 2, np.nan]), 2) == [1.5]


def test_equal_frequency_balanced_bins():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=1000), "b": rng.exponential(size=1000)})
    ef = EqualFrequencyDiscretizer().fit(X)
    out = ef.transform(X)
    for c in X:
        assert len(ef.cut_points_[c]) == 4
        counts = out[c].value_counts().to_numpy()
        assert counts.min() >= 195 and counts.max() <= 205


def test_equal_frequency_transformer_conventions():
    X = pd.DataFrame({"const": [2.5] * 60, "x": np.linspace(0, 1, 60), "k": [0, 1, 2] * 20})
    ef = EqualFrequencyDiscretizer(n_bins=3, columns=["const", "x"]).fit(X)
    out = ef.transform(X)
    assert list(out["const"].cat.categories) == ["All"]
    assert len(out["x"].cat.categories) == 3 and out["x"].value_counts().tolist() == [20, 20, 20]
    pd.testing.assert_series_equal(out["k"], X["k"])
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="n_bins must be a positive integer"):
            EqualFrequencyDiscretizer(n_bins=bad).fit(X)


@pytest.mark.parametrize("est", [MDLDiscretizer(), EqualFrequencyDiscretizer()], ids=lambda e: type(e).__name__)
def test_sklearn_check_estimator(est):
    from sklearn.utils.estimator_checks import check_estimator
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = check_estimator(est, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in res if r["status"] == "failed"]
    assert failed == []


def test_input_validation_messages():
    import scipy.sparse as sp
    with pytest.raises(ValueError, match="Reshape your data"):
        EqualFrequencyDiscretizer().fit(np.arange(5.0))
    with pytest.raises(TypeError, match="sparse input is not supported"):
        EqualFrequencyDiscretizer().fit(sp.csr_matrix(np.eye(3)))
    with pytest.raises(ValueError, match="Complex data not supported"):
        EqualFrequencyDiscretizer().fit(np.ones((3, 2), dtype=complex))
    ef = EqualFrequencyDiscretizer().fit(np.random.default_rng(0).normal(size=(20, 3)))
    with pytest.raises(ValueError, match="X has 2 features, but EqualFrequencyDiscretizer is expecting 3"):
        ef.transform(np.zeros((4, 2)))
