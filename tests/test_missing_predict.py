"""Real data as users bring it: unseen categories and missing values at predict time.

* ``handle_unknown="missing"`` (every classifier's default) sums an unseen category out
  like a missing value, so stratified cross-validation runs when a value occurs in a
  single row; ``handle_unknown="error"`` names the column, the value and the parameter.
* Missing values (NaN / None) at predict time are summed out exactly:
  ``predict_joint_log_proba`` equals the log-sum-exp over the states of the missing
  features of the completed rows (brute force), and ``predict_proba`` is its softmax.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from sklearn.model_selection import StratifiedKFold, cross_val_score

from bnexplore.classifiers import (AMA, AODE, BMAAODE, FAN, ISMB, MAPLMD, MAPLMG, SFAN, STAN, TAN,
                                   GreedyThickThin, NaiveAveraging, NaiveBayes)
from bnexplore.classifiers._base import normalize_log

ALL = [NaiveBayes, NaiveAveraging, GreedyThickThin, AMA, AODE, BMAAODE, MAPLMD, MAPLMG,
       TAN, FAN, STAN, SFAN, ISMB]

# every classifier whose model defines a joint, with the settings that change the model
JOINT_CASES = [
    (NaiveBayes, {}), (NaiveBayes, {"prior": "BDeu", "ess": 3.0}),
    (NaiveAveraging, {}), (GreedyThickThin, {}),
    (AMA, {}), (AMA, {"max_parents": 2, "n": 1}), (AMA, {"n": None}),
    (AMA, {"order": "random", "random_state": 0}),
    (AODE, {}), (AODE, {"threshold": 15}), (BMAAODE, {}), (MAPLMG, {}),
    (TAN, {}), (FAN, {}), (STAN, {"penalty": 1.0}), (SFAN, {"penalty": 1.0}),
    (TAN, {"averaging": "bma"}), (SFAN, {"penalty": 1.0, "averaging": "bma"}),
]
JOINT_IDS = [f"{c.__name__}-{'-'.join(f'{k}={v}' for k, v in p.items())}" for c, p in JOINT_CASES]


def _small(n: int = 90, p: int = 5, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Dependent discrete features with 2-4 states (string labels) and two classes."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, "a", "b")
    cols = {}
    prev = (y == "a").astype(int)
    for j in range(p):
        r = 2 + j % 3
        noise = rng.integers(0, r, n)
        v = np.where(rng.random(n) < 0.6, (prev + j) % r, noise)
        cols[f"f{j}"] = v.astype(str)
        prev = v
    return pd.DataFrame(cols), y


def _holey(X: pd.DataFrame) -> pd.DataFrame:
    """Test rows with 0, 1, 2, 3 and all cells missing (None and NaN)."""
    T = X.iloc[:7].copy().astype(object)
    T.iloc[1, 1] = None
    T.iloc[2, [0, 2]] = np.nan
    T.iloc[3, [1, 3, 4]] = None
    T.iloc[4, :] = None
    T.iloc[5, 0] = None
    T.iloc[6, [2, 4]] = None
    return T


def _brute_force(clf, T: pd.DataFrame) -> np.ndarray:
    """log-sum-exp of predict_joint_log_proba over every completion of each row."""
    out = []
    for i in range(len(T)):
        row = T.iloc[i]
        miss = [j for j in range(T.shape[1]) if pd.isna(row.iloc[j])]
        comps = []
        for vals in itertools.product(*[clf.data_.states[j] for j in miss]):
            r = row.copy()
            for j, v in zip(miss, vals):
                r.iloc[j] = v
            comps.append(r)
        full = clf.predict_joint_log_proba(pd.DataFrame(comps, columns=T.columns))
        out.append(logsumexp(full, axis=0))
    return np.array(out)


@pytest.fixture(scope="module")
def small():
    return _small()


@pytest.mark.parametrize("cls, params", JOINT_CASES, ids=JOINT_IDS)
def test_missing_features_are_summed_out_exactly(small, cls, params):
    X, y = small
    clf = cls(**params).fit(X, y)
    T = _holey(X)
    got = clf.predict_joint_log_proba(T)
    assert got.shape == (len(T), 2) and np.isfinite(got).all()
    np.testing.assert_allclose(got, _brute_force(clf, T), rtol=0, atol=1e-10)
    # the complete row is unchanged, and predict_proba is the softmax of the joint
    np.testing.assert_allclose(got[0], clf.predict_joint_log_proba(X.iloc[:1])[0], atol=1e-12)
    proba = clf.predict_proba(T)
    np.testing.assert_allclose(proba, normalize_log(got), rtol=0, atol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert list(clf.predict(T)) == list(clf.classes_[np.argmax(proba, axis=1)])


def test_two_random_orders_average_the_conditionals_of_the_summed_out_joints(small):
    X, y = small
    clf = AMA(order="two-random", random_state=0).fit(X, y)
    T = _holey(X)
    codes = clf._encode(T)
    per_order = [normalize_log(j) for j in clf._joints(codes)]
    np.testing.assert_allclose(clf.predict_proba(T), np.mean(per_order, axis=0), atol=1e-12)


def test_maplmd_mixes_the_summed_out_conditionals(small):
    X, y = small
    clf = MAPLMD().fit(X, y)
    T = _holey(X)
    lj = clf.log_joint_per_ode(T)                         # (M, n, K), missing summed out
    cond = np.exp(lj - logsumexp(lj, axis=2, keepdims=True))
    want = np.tensordot(cond, clf.weights_.to_numpy(), axes=([1], [0]))
    np.testing.assert_allclose(clf.predict_proba(T), want / want.sum(1, keepdims=True), atol=1e-12)
    # every ODE's joint is the brute-force sum over the completions
    for i in range(len(T)):
        miss = [j for j in range(T.shape[1]) if pd.isna(T.iloc[i, j])]
        comps = [T.iloc[i].copy() for _ in itertools.product(*[clf.data_.states[j] for j in miss])]
        for r, vals in zip(comps, itertools.product(*[clf.data_.states[j] for j in miss])):
            for j, v in zip(miss, vals):
                r.iloc[j] = v
        full = clf.log_joint_per_ode(pd.DataFrame(comps, columns=T.columns))
        np.testing.assert_allclose(lj[i], logsumexp(full, axis=0), atol=1e-10)
    with pytest.raises(AttributeError, match="no joint"):
        clf.predict_joint_log_proba(T)


def test_unseen_value_is_summed_out_like_a_missing_one(small):
    X, y = small
    T = X.iloc[:5].copy().astype(object)
    T.iloc[2, 3] = "never-seen"
    H = T.copy()
    H.iloc[2, 3] = None
    for cls in ALL:
        clf = cls(queue_width=20) if cls is ISMB else cls().fit(X, y)
        clf.fit(X, y)
        np.testing.assert_allclose(clf.predict_proba(T), clf.predict_proba(H), atol=1e-12,
                                   err_msg=cls.__name__)


@pytest.mark.parametrize("cls", ALL, ids=[c.__name__ for c in ALL])
def test_handle_unknown_error_names_a_parameter_that_exists(small, cls):
    X, y = small
    clf = cls(handle_unknown="error").fit(X, y)
    T = X.iloc[:3].copy().astype(object)
    T.iloc[1, 2] = "zzz"
    with pytest.raises(ValueError, match=r"column 'f2' has value 'zzz' never seen in training "
                                         r"\(row 1.*pass handle_unknown='missing'"):
        clf.predict_proba(T)
    # the parameter named in the message exists and is accepted
    assert cls(handle_unknown="missing").get_params()["handle_unknown"] == "missing"
    with pytest.raises(ValueError, match="handle_unknown must be"):
        cls(handle_unknown="ignore").fit(X, y)


def _zoo_like(n: int = 60, seed: int = 1) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.choice(["mammal", "bird", "fish"], n)
    legs = np.where(y == "mammal", "4", np.where(y == "bird", "2", "0")).astype(object)
    legs[rng.random(n) < 0.15] = "6"
    legs[7] = "5"                                   # a value that occurs in one row only
    X = pd.DataFrame({"legs": legs,
                      "hair": np.where((y == "mammal") ^ (rng.random(n) < 0.1), "y", "n"),
                      "fins": np.where((y == "fish") ^ (rng.random(n) < 0.1), "y", "n"),
                      "eggs": np.where((y != "mammal") ^ (rng.random(n) < 0.1), "y", "n")})
    return X, y


@pytest.mark.parametrize("cls", ALL, ids=[c.__name__ for c in ALL])
def test_stratified_cv_runs_with_defaults_when_a_value_occurs_in_one_row(cls):
    X, y = _zoo_like()
    est = cls(queue_width=20) if cls is ISMB else cls()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = cross_val_score(est, X, y, cv=StratifiedKFold(5, shuffle=True, random_state=0),
                                 error_score="raise")
    assert scores.mean() > 0.6


def test_fast_path_no_missing_gives_the_same_joint(small):
    X, y = small
    for cls, params in JOINT_CASES:
        clf = cls(**params).fit(X, y)
        a = clf.predict_joint_log_proba(X.iloc[:10])
        b = np.vstack([clf.predict_joint_log_proba(X.iloc[[i]]) for i in range(10)])
        np.testing.assert_allclose(a, b, atol=1e-12)


# ------------------------------------------------------------------------ ISMB
def _k2(cols: np.ndarray, v: int, parents: list[int], x: np.ndarray, arity: list[int]) -> float:
    """K2 posterior mean P(x_v | x_parents) counted from the training columns."""
    sel = np.ones(cols.shape[1], dtype=bool)
    for q in parents:
        sel &= cols[q] == x[q]
    return (np.count_nonzero(sel & (cols[v] == x[v])) + 1.0) / (sel.sum() + arity[v])


@pytest.mark.parametrize("missing", [[0], [2], [3], [0, 2], [1, 2, 3], [0, 1, 2, 3]])
def test_ismb_sums_missing_values_out_within_a_blanket_model(missing):
    """Z = play; outlook -> Z, Z -> humidity <- temperature, windy outside the blanket.
    Parents and spouses are roots with their K2 marginal; the sum is over the completions."""
    import bnexplore as bx
    from bnexplore.ismb import MarkovBlanket, MBModel
    df = bx.datasets.load("weather.nominal")
    m = MBModel(df)
    names = list(df.columns)                     # outlook temperature humidity windy play
    t = names.index("play")
    mb = MarkovBlanket(names, "play", {"play": ["outlook"], "humidity": ["play", "temperature"]})
    cols, ar = m._cols, m._arity
    x = m._as_codes(df.drop(columns="play").iloc[3])
    x[missing] = -1
    roots = {0: [], 1: []}                         # outlook, temperature: roots in the blanket
    want = np.zeros(ar[t])
    for states in itertools.product(*[range(ar[v]) for v in missing]):
        xc = x.copy()
        xc[missing] = states
        w = 1.0
        for v in missing:
            if v in roots or v == 3:               # a root or a non-member: its marginal
                w *= _k2(cols, v, [], xc, ar)
        for z in range(ar[t]):
            xz = xc.copy()
            xz[t] = z
            want[z] += w * _k2(cols, t, [0], xz, ar) * _k2(cols, 2, [t, 1], xz, ar)
    np.testing.assert_allclose(m.predict_structure(mb, x), want / want.sum(), rtol=0, atol=1e-12)


def test_ismb_predicts_rows_with_missing_values(small):
    X, y = small
    clf = ISMB(queue_width=20).fit(X, y)
    T = _holey(X)
    p = clf.predict_proba(T)
    assert p.shape == (len(T), 2) and np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(p[0], clf.predict_proba(X.iloc[:1])[0], atol=1e-12)
    U = X.iloc[:3].copy().astype(object)
    U.iloc[1, 2] = "never-seen"
    H = U.copy()
    H.iloc[1, 2] = None
    np.testing.assert_allclose(clf.predict_proba(U), clf.predict_proba(H), atol=1e-12)


# ------------------------------------------------------------ missing values at fit time
def test_naive_bayes_fits_with_missing_values_by_available_case_counting(small):
    X, y = small
    H = X.copy().astype(object)
    rng = np.random.default_rng(3)
    H = H.mask(rng.random(H.shape) < 0.2)
    clf = NaiveBayes().fit(H, y)
    assert clf.data_.missing.sum() == H.isna().to_numpy().sum()
    # the class prior counts every row; the table of f counts the rows where f is observed
    np.testing.assert_allclose(clf.log_class_prior_, NaiveBayes().fit(X, y).log_class_prior_)
    for j, f in enumerate(H.columns):
        obs = H[f].notna().to_numpy()
        one = NaiveBayes().fit(H.loc[obs, [f]].astype(str), y[obs])
        assert one.data_.states[0] == clf.data_.states[j]
        np.testing.assert_allclose(clf.log_cpts_[j], one.log_cpts_[0], atol=1e-12)
    # the model fitted with holes predicts rows with holes (summed out)
    p = clf.predict_proba(_holey(H.fillna(X)))
    assert np.isfinite(p).all()
    scores = cross_val_score(NaiveBayes(), H, y, cv=StratifiedKFold(5, shuffle=True, random_state=0))
    assert scores.mean() > 0.6


# ------------------------------------------------------------ data as users bring it
def _wide(n: int = 150, p: int = 40, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """10-state attributes, 40 features, a value that occurs in one row only."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = pd.DataFrame({f"f{j}": np.where(rng.random(n) < 0.4, (y * 3 + j) % 10,
                                        rng.integers(0, 10, n)).astype(str) for j in range(p)})
    X.iloc[5, 3] = "rare"
    return X, np.array(["no", "yes"])[y]


WIDE = [c for c in ALL if c is not ISMB]


@pytest.mark.parametrize("cls", WIDE, ids=[c.__name__ for c in WIDE])
def test_stratified_cv_with_defaults_on_wide_ten_state_data_with_holes_at_predict_time(cls):
    """Every fold: fit on complete rows, predict rows with 1-3 missing cells each (and the
    one-row value unseen in the folds that do not train on it)."""
    X, y = _wide()
    rng = np.random.default_rng(1)
    acc = []
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = cls().fit(X.iloc[train], y[train])
        T = X.iloc[test].copy().astype(object)
        for i in range(len(T)):
            T.iloc[i, rng.choice(T.shape[1], rng.integers(1, 4), replace=False)] = None
        p = clf.predict_proba(T)
        assert np.isfinite(p).all() and np.allclose(p.sum(axis=1), 1.0)
        if cls is not MAPLMD:           # MAPLMD mixes conditionals: no joint
            np.testing.assert_allclose(p, normalize_log(clf.predict_joint_log_proba(T)),
                                       atol=1e-12)
        acc.append(np.mean(clf.classes_[p.argmax(axis=1)] == y[test]))
    assert np.mean(acc) > 0.8


@pytest.mark.slow
def test_ismb_stratified_cv_with_defaults_on_wide_ten_state_data():
    X, y = _wide()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = cross_val_score(ISMB(), X, y, cv=StratifiedKFold(5, shuffle=True, random_state=0),
                                 error_score="raise")
    assert scores.mean() > 0.8


def test_memory_guard_estimates_the_rows_over_it_and_says_which(small, monkeypatch):
    import bnexplore.classifiers._missing as M
    X, y = small
    T = X.iloc[:3].copy().astype(object)
    T.iloc[[0, 2], :3] = None
    clf = TAN().fit(X, y)
    want = clf.predict_joint_log_proba(T)
    monkeypatch.setattr(M, "MAX_CELLS", 4)
    with pytest.warns(M.ApproximationWarning, match=r"TAN: rows \[0, 2\] .*MAX_CELLS.*"
                                                    r"likelihood-weighting estimates"):
        got = clf.predict_joint_log_proba(T)
    np.testing.assert_allclose(got[1], want[1], atol=1e-12)          # complete: exact
    np.testing.assert_allclose(np.exp(got[[0, 2]]), np.exp(want[[0, 2]]), atol=0.03)
    monkeypatch.setattr(M, "MAX_CELLS", 10**8)
    np.testing.assert_allclose(clf.predict_joint_log_proba(T), want)


def test_enumeration_guard_refuses_with_a_clear_message(small, monkeypatch):
    import bnexplore.classifiers._missing as M
    X, y = small
    T = X.iloc[:2].copy().astype(object)
    T.iloc[:, [0, 1, 2]] = None
    bma = SFAN(averaging="bma").fit(X, y)
    monkeypatch.setattr(M, "MAX_COMPLETIONS", 5)
    with pytest.raises(ValueError, match=r"SFAN\(averaging='bma'\): rows \[0, 1\] \(positions in X\) have "
                                         r"up to 3 missing features with .* joint states .*limit 5.*"
                                         r"MAX_COMPLETIONS"):
        bma.predict_proba(T)


def test_ama_answers_exactly_what_fits_the_memory_guard_and_estimates_the_rest(monkeypatch):
    """Rows missing most features of a lazy summary network: the cost of each row is
    known before any CPT row is read; the rows within the budget are exact, the others
    estimated by likelihood weighting, named in one warning, and no read exceeds it."""
    import math

    import bnexplore.averaging as A
    import bnexplore.classifiers._missing as M
    from bnexplore.classifiers.averaging import _LazyFactor, _network_factors

    X, y = _small(n=150, p=5, seed=1)
    monkeypatch.setattr(A, "MSTAR_DENSE_CELLS", 0)             # every M* CPT lazy
    clf = AMA(max_parents=3, n=4, order=[AMA.class_column] + list(X.columns)).fit(X, y)
    T = X.iloc[:6].copy().astype(object)
    T.iloc[1, 0] = None                      # one missing feature: cheap
    T.iloc[[2, 4], :4] = None                # four of five missing, the last one observed
    exact = clf.predict_proba(T)
    codes = clf._encode(T)
    ar = [int(a) for a in clf.data_.arities]
    factors = _network_factors(clf.networks_[0], clf.data_)
    cost = {i: M._plan(factors, set(np.flatnonzero(codes[i] < 0).tolist()), codes.shape[1], ar).cells
            for i in (1, 2)}
    assert cost[2] > cost[1]
    reads = []
    gather = _LazyFactor.gather

    def spy(self, vars_, codes, keep):
        reads.append(codes.shape[0] * math.prod(self.arities[v] for v in keep)
                     * self.arities[vars_[0]])
        return gather(self, vars_, codes, keep)

    monkeypatch.setattr(_LazyFactor, "gather", spy)
    monkeypatch.setattr(M, "MAX_CELLS", int(cost[1]))
    with pytest.warns(M.ApproximationWarning, match=r"AMA: rows \[2, 4\] \(positions in X\)"):
        got = clf.predict_proba(T)
    assert max(reads) <= cost[1]
    keep = [0, 1, 3, 5]
    np.testing.assert_allclose(got[keep], exact[keep], atol=1e-12)
    np.testing.assert_allclose(got[[2, 4]], exact[[2, 4]], atol=0.05)
    np.testing.assert_allclose(got.sum(axis=1), 1.0)
    with pytest.warns(M.ApproximationWarning):
        np.testing.assert_array_equal(clf.predict_proba(T), got)   # seeded: repeatable
