"""Missing values at fit time (issue 18, item 2) for the forest, ODE-mixture and ISMB
classifiers.

The package policy (:class:`bnexplore.data.DiscreteData` notes): parameters by
available case, structures and model weights on one set of rows per comparison.  The
forests and ISMB score each family as its gain over the empty family on the rows where
the family is observed (:mod:`bnexplore._available_case`); the ODE mixtures compare
their candidates on the complete cases of the features, so

(a) the parameters equal counts made by hand over the available rows, and the structure
    scores equal family scores made by hand on those rows (the mixture weights equal
    those learned from the complete cases);
(b) a candidate cannot win because its variables are missing more often: on data where
    per-family available-case scoring would choose the heavily missing, useless
    variable, the default does not;
(c) without missing values the fit is what it was before missing values were accepted
    (predictions recorded from commit a8d8bec);
(d) stratified 5-fold cross-validation with default parameters runs on user-shaped
    data (10% missing cells, a 10-state attribute, a value seen in one row only).
"""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln, logsumexp
from sklearn.model_selection import StratifiedKFold, cross_val_score

from bnexplore import forests as _F
from bnexplore.classifiers import (AODE, BMAAODE, FAN, ISMB, MAPLMD, MAPLMG, SFAN, STAN,
                                   TAN)
from bnexplore.scores import LocalScore

CLS = "__class__"
SCF = [TAN, FAN, STAN, SFAN]


def _data(n: int = 400, seed: int = 0, p_missing: float = 0.12):
    """Dependent categorical features (fixed categories, so that the complete cases keep
    every state) with missing cells, and a binary class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.8, y, rng.integers(0, 3, n))
    b = np.where(rng.random(n) < 0.7, a, rng.integers(0, 3, n))
    c = rng.integers(0, 2, n)
    d = np.where(rng.random(n) < 0.6, (b + c) % 3, rng.integers(0, 3, n))
    X = pd.DataFrame({"a": a, "b": b, "c": c, "d": d})
    X = X.astype({k: pd.CategoricalDtype(list(range(3 if k != "c" else 2))) for k in X})
    X = X.mask(rng.random(X.shape) < p_missing)
    return X, np.array(["no", "yes"])[y]


def _complete(X, y):
    keep = ~X.isna().any(axis=1).to_numpy()
    return X[keep], y[keep]


def _hand_counts(X, y, child, parents, classes=("no", "yes")):
    """(q, r) counts of ``child`` given ``parents`` (feature names or CLS, mixed radix, the
    last fastest) over the rows where the family is observed, by plain iteration."""
    cols = {k: X[k] for k in X}
    cols[CLS] = pd.Series(pd.Categorical(y, categories=list(classes)))
    ar = {k: len(cols[k].cat.categories) for k in cols}
    q = int(np.prod([ar[p] for p in parents])) if parents else 1
    out = np.zeros((q, ar[child]))
    for r in range(len(y)):
        vals = [cols[k].cat.codes.iloc[r] for k in [*parents, child]]
        if min(vals) < 0:                   # a missing cell: the row is not available
            continue
        z = 0
        for p, v in zip(parents, vals[:-1]):
            z = z * ar[p] + v
        out[z, vals[-1]] += 1
    return out


# =========================================================================== forests
def _available(data, child, parents, prior, ess, rows_of=None):
    """The family score of ``child`` given ``parents`` over the rows where ``rows_of``
    (default: the family) is observed, from a LocalScore over those rows only."""
    rows_of = [child, *parents] if rows_of is None else rows_of
    keep = data.observed_rows(rows_of)
    sub = data.take(keep).subset([child, *parents])
    return LocalScore(sub, prior=prior, ess=ess).score(child, parents)


def _raw_by_hand(fam, data, family) -> np.ndarray:
    """``raw[j, i, s] = family(j, parents)`` for every target, intra-set parent and
    condition subset of ``fam`` (names)."""
    raw = np.full_like(fam.raw, -np.inf)
    names = fam.targets
    for jj, j in enumerate(names):
        for ii in range(fam.m + 1):
            if ii == jj:
                continue
            for s_i, s in enumerate(fam.subsets):
                ps = ([names[ii]] if ii < fam.m else []) + [data.names[c] for c in s]
                raw[jj, ii, s_i] = family(j, ps)
    return raw


def _gain_raw(fam, data, prior, ess):
    """``raw[j, i, s]`` by hand: s(j | {}) on the rows where j is seen, plus the family's
    gain over the empty family on the rows where the family is seen (Eq. 2-3 of
    bnexplore._available_case)."""
    return _raw_by_hand(fam, data, lambda j, ps: _available(data, j, [], prior, ess)
                        + _available(data, j, ps, prior, ess) - _available(data, j, [], prior, ess, [j, *ps]))


@pytest.mark.parametrize("cls", SCF, ids=lambda c: c.__name__)
def test_scf_structure_by_available_case_gains_cpts_by_available_case(cls):
    X, y = _data()
    assert X.isna().any(axis=1).mean() > 0.3
    clf = cls().fit(X, y)
    np.testing.assert_allclose(clf.families_.raw, _gain_raw(clf.families_, clf.data_, clf.prior, clf.ess),
                               rtol=1e-12)
    ess = clf.ess
    for j, ps, ar, logcpt in clf._tables.items:
        child = clf.data_.names[j]
        parents = [clf.data_.names[p] for p in ps]
        cnt = _hand_counts(X, y, child, parents)
        q, r = cnt.shape
        a = ess / (q * r)                   # BDeu posterior mean
        want = (cnt + a) / (cnt.sum(axis=1, keepdims=True) + a * r)
        np.testing.assert_allclose(np.exp(logcpt), want, rtol=1e-12)
    # the class prior (the class is never missing)
    K = 2
    cnt = np.array([(y == "no").sum(), (y == "yes").sum()], dtype=float)
    prior = clf._cpt_factors()[0][1]
    np.testing.assert_allclose(np.exp(prior), (cnt + ess / K) / (len(y) + ess), rtol=1e-12)


def test_scf_bma_predictive_tables_by_available_case():
    X, y = _data(seed=1)
    clf = SFAN(averaging="bma", penalty=1.0).fit(X, y)
    fam = clf.families_
    np.testing.assert_allclose(fam.raw, _gain_raw(fam, clf.data_, clf.prior, clf.ess), rtol=1e-12)
    feats = list(X.columns)
    row = np.array([[1, 2, 0, 1, 1]])                    # a, b, c, d, class (codes)
    lWt, lrt = fam.test_log_weights(row)
    ess, m = fam.ess, fam.m
    for jj, j in enumerate(feats):
        rj = len(X[j].cat.categories)
        # root weight: sum over condition subsets () and (class,)
        terms = []
        for s_i, s in enumerate([(), (CLS,)]):
            cnt = _hand_counts(X, y, j, list(s))
            z = row[0, 4] if s else 0
            q = cnt.shape[0]
            a = ess / (q * rj)
            terms.append(fam.scores[jj, m, s_i]
                         + np.log((cnt[z, row[0, jj]] + a) / (cnt[z].sum() + a * rj)))
        assert lrt[0, jj] == pytest.approx(logsumexp(terms), rel=1e-12)
        for ii, i in enumerate(feats):
            if i == j:
                continue
            ri = len(X[i].cat.categories)
            terms = []
            for s_i, s in enumerate([(), (CLS,)]):
                cnt = _hand_counts(X, y, j, [*s, i])         # rows: (class,) x_i
                z = (row[0, 4] * ri if s else 0) + row[0, ii]
                q = cnt.shape[0]
                a = ess / (q * rj)
                terms.append(fam.scores[jj, ii, s_i]
                             + np.log((cnt[z, row[0, jj]] + a) / (cnt[z].sum() + a * rj)))
            assert lWt[0, ii, jj] == pytest.approx(logsumexp(terms), rel=1e-12)


def _decoy_data(n: int = 1500, seed: int = 3):
    """``d`` is a noisy copy of ``a`` (the real dependence); ``b`` is noise observed in
    10% of the rows only."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.7, y, rng.integers(0, 2, n))
    d = np.where(rng.random(n) < 0.8, a, rng.integers(0, 2, n))
    b = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "b": b, "d": d}).astype(pd.CategoricalDtype([0, 1]))
    X["b"] = X["b"].mask(rng.random(n) < 0.9)
    return X, np.array(["no", "yes"])[y]


@pytest.mark.parametrize("cls", SCF, ids=lambda c: c.__name__)
def test_scf_cannot_prefer_a_parent_for_its_missing_rows(cls):
    X, y = _decoy_data()
    clf = cls().fit(X, y)
    fam = clf.families_
    data = clf.data_
    # per-family available-case scores: each family over the rows where it is observed
    av = copy.copy(fam)
    raw = _raw_by_hand(fam, data, lambda j, ps: _available(data, j, ps, "BDeu", clf.ess))
    names = fam.targets
    av.scores = raw.copy()
    av.scores[:, :, 0] -= fam.penalty
    parent, _, _ = _F._map_choice(av)
    a, b, d = names.index("a"), names.index("b"), names.index("d")
    # available-case scoring: the decoy b "explains" a and d, the real a - d edge is lost
    assert parent[a] == b and parent[d] == b
    # the default keeps the a - d edge (which way round is a tie between equivalent trees)
    intra = clf.result_.intra_parent
    assert intra["a"] == "d" or intra["d"] == "a"


# =========================================================================== no missing value
GOLDEN_CONFIGS = [("TAN", TAN, {}), ("TAN-bma", TAN, {"averaging": "bma"}), ("FAN", FAN, {}),
                  ("FAN-bma", FAN, {"averaging": "bma"}), ("STAN", STAN, {"penalty": 1.0}),
                  ("STAN-bma", STAN, {"averaging": "bma", "penalty": 1.0}),
                  ("SFAN", SFAN, {"penalty": 1.0}),
                  ("SFAN-bma", SFAN, {"averaging": "bma", "penalty": 1.0}), ("AODE", AODE, {}),
                  ("BMAAODE", BMAAODE, {}), ("MAPLMD", MAPLMD, {}), ("MAPLMG", MAPLMG, {}),
                  ("ISMB", ISMB, {"queue_width": 50})]

# predict_proba of the first four training rows, recorded with commit a8d8bec (before
# these classifiers accepted missing values at fit time)
GOLDEN = {
    "TAN": [[0.9148871123757292, 0.01615167925543103, 0.06896120836883991],
            [0.4109601907932056, 0.030737217123049932, 0.5583025920837443],
            [0.3662129159071675, 0.28157002872776576, 0.35221705536506676],
            [0.015117132227091995, 0.02915512021683532, 0.9557277475560727]],
    "TAN-bma": [[0.9190454519888901, 0.018555487721402322, 0.062399060289707695],
                [0.4168373597644676, 0.04161843877709065, 0.5415442014584417],
                [0.33896605398304536, 0.28871673953746885, 0.37231720647948574],
                [0.01717459438717937, 0.031304221847708494, 0.9515211837651121]],
    "FAN": [[0.9193736383348635, 0.02474339123783064, 0.05588297042730585],
            [0.45258302428623637, 0.05160360643278914, 0.4958133692809746],
            [0.2785686544712812, 0.3157567091069839, 0.40567463642173496],
            [0.02971461596217677, 0.027156119743402304, 0.943129264294421]],
    "FAN-bma": [[0.9195556264203845, 0.02434264268725145, 0.05610173089236403],
                [0.45114380625876666, 0.0510280152780091, 0.49782817846322436],
                [0.2805631494834899, 0.31643805706378964, 0.40299879345272044],
                [0.02944192301211764, 0.026959778010065123, 0.9435982989778172]],
    "STAN": [[0.9058774190427404, 0.020688134861741984, 0.07343444609551755],
             [0.21209810489274583, 0.02142867284896835, 0.766473222258286],
             [0.30355530837221817, 0.25842698800984815, 0.4380177036179336],
             [0.22757602166406632, 0.020067009117902154, 0.7523569692180315]],
    "STAN-bma": [[0.9108524153643016, 0.022377638740813152, 0.06676994589488533],
                 [0.21457125634049592, 0.028964588685172033, 0.7564641549743321],
                 [0.2854634695699544, 0.23268771542860855, 0.481848815001437],
                 [0.21675729370899208, 0.027318839010351023, 0.755923867280657]],
    "SFAN": [[0.9143102143570541, 0.03278618809766869, 0.05290359754527726],
             [0.2675189377198521, 0.04243834779744557, 0.6900427144827024],
             [0.2927403373424684, 0.2610646782742814, 0.4461949843832503],
             [0.04525702685873287, 0.033268062248871695, 0.9214749108923954]],
    "SFAN-bma": [[0.9096172572281905, 0.030655659832901375, 0.05972708293890805],
                 [0.24515149130241623, 0.03694238611471382, 0.71790612258287],
                 [0.27982553374591956, 0.23746677404747946, 0.48270769220660104],
                 [0.14080600199950974, 0.03290166768344564, 0.8262923303170445]],
    "AODE": [[0.9296647088450881, 0.0240327646397266, 0.04630252651518528],
             [0.42648531107114207, 0.03459188744660798, 0.5389228014822499],
             [0.2940699945914805, 0.3595418047337633, 0.3463882006747561],
             [0.044147577805800184, 0.03979410518425537, 0.9160583170099446]],
    "BMAAODE": [[0.9108145615888895, 0.02526874984916625, 0.06391668856194421],
                [0.4406227909341306, 0.04654179283097993, 0.5128354162348895],
                [0.32739472492600047, 0.3260680582853217, 0.3465372167886779],
                [0.04856366036476883, 0.0436453658551761, 0.9077909737800551]],
    "MAPLMD": [[0.9305491901775824, 0.0231511496460145, 0.04629966017640303],
               [0.42275739572129156, 0.03526003346904555, 0.5419825708096628],
               [0.28839902200004086, 0.3721485597001262, 0.3394524182998329],
               [0.04141328464436485, 0.03513906609733258, 0.9234476492583026]],
    "MAPLMG": [[0.9290582802756321, 0.022993004431918138, 0.04794871529244984],
               [0.4308560331625003, 0.03498368662106492, 0.5341602802164347],
               [0.2988868765432228, 0.36113978134478875, 0.33997334211198843],
               [0.04316071174354595, 0.03769008485796526, 0.9191492033984888]],
    "ISMB": [[0.9363574297699495, 0.018221915451951176, 0.04542065477812006],
             [0.4029451642646336, 0.037091628766050155, 0.5599632069693166],
             [0.3091669740239406, 0.25134396575981915, 0.4394890602162538],
             [0.045686172999445725, 0.03213249380107204, 0.9221813331994724]],
}


def _golden_data():
    rng = np.random.default_rng(20261124)
    n = 90
    y = rng.integers(0, 3, n)
    a = np.where(rng.random(n) < 0.7, y, rng.integers(0, 3, n))
    b = np.where(rng.random(n) < 0.6, (a + 1) % 3, rng.integers(0, 3, n))
    c = rng.integers(0, 4, n)
    d = np.where(rng.random(n) < 0.8, y % 2, rng.integers(0, 2, n))
    X = pd.DataFrame({"a": a, "b": b, "c": c, "d": d}).astype(str)
    return X, np.array(["u", "v", "w"])[y]


@pytest.mark.parametrize("name, cls, params", GOLDEN_CONFIGS, ids=[c[0] for c in GOLDEN_CONFIGS])
def test_complete_data_fit_is_unchanged(name, cls, params):
    X, y = _golden_data()
    clf = cls(**params).fit(X, y)
    assert clf.data_.missing is None
    np.testing.assert_allclose(clf.predict_proba(X.iloc[:4]), GOLDEN[name], rtol=0, atol=1e-13)


# =========================================================================== ODE mixtures
def _codes_and_class(X, y):
    codes = np.stack([X[k].cat.codes.to_numpy() for k in X], axis=1)   # -1: missing
    return codes, (y == "yes").astype(int)


@pytest.mark.parametrize("cls", [AODE, BMAAODE, MAPLMD, MAPLMG], ids=lambda c: c.__name__)
def test_ode_tables_by_available_case_weights_from_complete_cases(cls):
    X, y = _data(n=250, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # no convergence or other warning
        clf = cls().fit(X, y)
        ref = cls().fit(*_complete(X, y))
    codes, yc = _codes_and_class(X, y)
    ar = np.array([len(X[k].cat.categories) for k in X])
    n, K, A = len(ar), 2, int(ar.max())
    pair = np.zeros((n, A, K))
    triple = np.zeros((n, n, A, A, K))
    for r in range(len(yc)):
        for u in range(n):
            if codes[r, u] < 0:
                continue
            pair[u, codes[r, u], yc[r]] += 1
            for v in range(n):
                if codes[r, v] >= 0:
                    triple[u, v, codes[r, u], codes[r, v], yc[r]] += 1
    cnt = clf.counts_
    np.testing.assert_array_equal(cnt.pair, pair)
    np.testing.assert_array_equal(cnt.triple, triple)
    base, cond = cnt.log_tables()
    for u in range(n):
        n_u = (codes[:, u] >= 0).sum()                  # the rows where u is observed
        for i in range(ar[u]):
            for c in range(K):
                assert base[u, i, c] == pytest.approx(
                    np.log((pair[u, i, c] + 1) / (n_u + K * ar[u])), rel=1e-12)
                for v in range(n):
                    if v == u:
                        continue
                    # (c, i) over the rows where u and v are observed
                    both = ((codes[:, u] == i) & (codes[:, v] >= 0) & (yc == c)).sum()
                    for j in range(ar[v]):
                        assert cond[u, v, i, j, c] == pytest.approx(
                            np.log((triple[u, v, i, j, c] + 1) / (both + ar[v])), rel=1e-12)
    # the weights compare ODEs: those of a fit on the complete cases
    np.testing.assert_allclose(clf.weights_, ref.weights_, rtol=1e-10, atol=1e-14)
    if cls is not AODE:                   # AODE compares nothing: uniform weights
        assert clf.weight_counts_.n == len(_complete(X, y)[1])


def test_naive_bayes_fallback_by_available_case():
    from bnexplore import mixtures as mx
    X, y = _data(n=200, seed=4)
    clf = AODE().fit(X, y)
    codes, yc = _codes_and_class(X, y)
    row = np.array([[2, 0, 1, 2]], dtype=np.int32)
    got = mx.naive_bayes_log_joint(clf.counts_, row)[0]
    for c in range(2):
        want = np.log(((yc == c).sum() + 1) / (len(yc) + 2))
        for v in range(4):
            seen = codes[:, v] >= 0
            r_v = len(X.iloc[:, v].cat.categories)
            want += np.log((((codes[:, v] == row[0, v]) & (yc == c)).sum() + 1)
                           / ((seen & (yc == c)).sum() + r_v))
        assert got[c] == pytest.approx(want, rel=1e-12)


def _available_case_log_evidence(cnt) -> np.ndarray:
    """Eq. 25 with each family over its own available rows (what the default avoids)."""
    K, ar = cnt.n_classes, cnt.arities.astype(float)
    out = np.zeros(cnt.n_attributes)
    for u in range(cnt.n_attributes):
        n_u = cnt.pair[u].sum()
        out[u] = gammaln(K * ar[u]) - gammaln(n_u + K * ar[u]) + gammaln(cnt.pair[u] + 1).sum()
        for v in range(cnt.n_attributes):
            if v == u:
                continue
            t = cnt.triple[u, v]                                   # (i, j, c)
            out[u] += (gammaln(ar[v]) - gammaln(t.sum(axis=1) + ar[v])).sum() \
                + gammaln(t + 1).sum()
    return out


def test_bmaaode_cannot_prefer_a_root_for_its_missing_rows():
    rng = np.random.default_rng(7)
    n = 1500
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.8, y, rng.integers(0, 2, n))
    d = np.where(rng.random(n) < 0.7, y, rng.integers(0, 2, n))
    b = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "b": b, "d": d}).astype(pd.CategoricalDtype([0, 1]))
    X["b"] = X["b"].mask(rng.random(n) < 0.9)
    y = np.array(["no", "yes"])[y]
    clf = BMAAODE().fit(X, y)
    # available-case evidences would put all the weight on the root b ...
    assert np.argmax(_available_case_log_evidence(clf.counts_)) == 1
    # ... the default compares the roots on the complete cases: b is the worst root
    assert clf.weights_.idxmin() == "b" and clf.weights_["b"] < 0.1
    np.testing.assert_allclose(clf.log_evidence_,
                               BMAAODE().fit(*_complete(X, y)).log_evidence_, rtol=1e-12)


@pytest.mark.parametrize("cls", [BMAAODE, MAPLMD, MAPLMG], ids=lambda c: c.__name__)
def test_ode_weights_without_complete_rows_are_uniform(cls):
    X = pd.DataFrame({"a": ["x", None, "y", None, "x", None], "b": [None, "u", None, "v", None, "u"]})
    y = np.array([0, 1, 0, 1, 0, 1])
    with pytest.warns(UserWarning, match="no training row has every feature observed"):
        clf = cls().fit(X, y)
    np.testing.assert_array_equal(clf.weights_, [0.5, 0.5])
    assert np.isfinite(clf.predict_proba(X)).all()


@pytest.mark.parametrize("cls", [TAN, FAN, STAN, SFAN, ISMB], ids=lambda c: c.__name__)
def test_structures_without_complete_rows_fit_and_predict(cls):
    X = pd.DataFrame({"a": ["x", None, "y", None, "x", None], "b": [None, "u", None, "v", None, "u"],
                      "c": ["p", "q", "p", "q", "q", "p"]})
    y = np.array([0, 1, 0, 1, 0, 1])
    clf = cls().fit(X, y)           # every structure scores 0 on no rows; CPTs still counted
    p = clf.predict_proba(X)
    assert np.isfinite(p).all() and np.allclose(p.sum(axis=1), 1.0)


def test_ode_engine_refuses_to_compare_available_case_counts():
    from bnexplore import mixtures as mx
    X, y = _data(n=60, seed=5)
    cnt = AODE().fit(X, y).counts_
    assert cnt.has_missing
    for f in (mx.bma_log_evidence, mx.ode_log_joint_loo):
        with pytest.raises(ValueError, match="complete_cases"):
            f(cnt)


# =========================================================================== ISMB
def test_ismb_structures_by_available_case_gains_parameters_by_available_case():
    from bnexplore.ismb import MarkovBlanket
    X, y = _data(n=300, seed=6)
    clf = ISMB(queue_width=20).fit(X, y)
    m = clf.model_
    g = MarkovBlanket(m.names, CLS, {CLS: ["c"], "a": [CLS, "b"]})
    # Eq. 3 of bnexplore._available_case by hand: every node's empty family on its rows,
    # plus each family's gain over the empty family on the rows where it is observed
    d = clf.data_
    want = sum(_available(d, v, [], "K2", 1.0) for v in d.names)
    for v, ps in ((CLS, ["c"]), ("a", [CLS, "b"])):
        want += _available(d, v, ps, "K2", 1.0) - _available(d, v, [], "K2", 1.0, [v, *ps])
    assert m.log_score(g) == pytest.approx(want, rel=1e-12)
    climb, scores = m.phase1()
    assert len(climb) > 1 and all(b > a for a, b in zip(scores, scores[1:]))     # a real climb
    codes, yc = _codes_and_class(X, y)
    xa, xb, xc = 2, 0, 1

    def by_hand(c_weights):
        """P(class | x, g) with K2 posterior means over the available rows; the parent c
        given by its distribution ``c_weights`` (a point mass when observed)."""
        seen_c, seen_ab = codes[:, 2] >= 0, (codes[:, 0] >= 0) & (codes[:, 1] >= 0)
        out = np.zeros(2)
        for z in range(2):
            # P(a = xa | z, b = xb): rows where a, b and the class are observed
            pa = ((((codes[:, 0] == xa) & (codes[:, 1] == xb) & (yc == z)).sum() + 1)
                  / (((codes[:, 1] == xb) & seen_ab & (yc == z)).sum() + 3))
            for ci, w in enumerate(c_weights):
                pz = ((((codes[:, 2] == ci) & (yc == z)).sum() + 1)
                      / (((codes[:, 2] == ci) & seen_c).sum() + 2))
                out[z] += w * pz * pa
        return out / out.sum()

    got = m.predict_structure(g, np.array([xa, xb, xc, 0]))
    np.testing.assert_allclose(got, by_hand([0.0, 1.0]), rtol=1e-12)
    # a missing parent is summed out with its K2 marginal over the rows where it is seen
    seen_c = codes[:, 2] >= 0
    marg = [((codes[:, 2] == i).sum() + 1) / (seen_c.sum() + 2) for i in range(2)]
    got = m.predict_structure(g, np.array([xa, xb, -1, 0]))
    np.testing.assert_allclose(got, by_hand(marg), rtol=1e-12)


def test_ismb_cannot_prefer_an_arc_for_its_missing_rows():
    X, y = _decoy_data()
    clf = ISMB(queue_width=20).fit(X, y)
    m, data = clf.model_, clf.data_

    def available(child, parents):    # a family over the rows where it is observed
        rows = data.complete_cases([child, *parents]).subset([child, *parents])
        return LocalScore(rows, prior="K2").score(child, parents)

    # per-family available-case scoring: the best first arc of the climb is b -> class
    gains = {(x, CLS): available(CLS, [x]) - available(CLS, []) for x in ("a", "b", "d")}
    gains.update({(CLS, x): available(x, [CLS]) - available(x, []) for x in ("a", "b", "d")})
    assert max(gains, key=gains.get) == ("b", CLS)
    # the default compares each family with the empty one on the family's own rows: b,
    # observed in 10% of the rows, gains nothing there and stays out of the blanket
    climb = m.phase1_models()
    assert len(climb) > 1 and "b" not in {x for arc in climb[1].arcs for x in arc}
    last = climb[-1]
    assert "b" not in last.members
    assert {"a", "d"} & set(last.members)


# =========================================================================== CV as users bring data
def _user_shaped(n: int = 150, seed: int = 8):
    """10% missing cells, a 10-state attribute, a value seen in one row only."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    cols = {}
    for j in range(6):
        r = 10 if j == 0 else 2 + j % 3
        cols[f"f{j}"] = np.where(rng.random(n) < 0.6, (y + j) % r, rng.integers(0, r, n)).astype(str)
    X = pd.DataFrame(cols).astype(object)
    X.iloc[7, 2] = "once"
    once = 7 * X.shape[1] + 2                  # keep the single-row value observed
    cells = rng.choice(np.setdiff1d(np.arange(X.size), [once]), X.size // 10, replace=False)
    mask = np.zeros(X.size, dtype=bool)
    mask[cells] = True
    return X.mask(mask.reshape(X.shape)), np.array(["no", "yes"])[y]


ALL9 = [TAN, FAN, STAN, SFAN, AODE, BMAAODE, MAPLMD, MAPLMG, ISMB]


@pytest.mark.parametrize("cls", ALL9, ids=lambda c: c.__name__)
def test_stratified_cv_with_defaults_on_user_shaped_data(cls):
    X, y = _user_shaped()
    assert X.isna().to_numpy().mean() == 0.1 and (X == "once").to_numpy().sum() == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # e.g. a weight optimiser's convergence note
        scores = cross_val_score(cls(), X, y, cv=StratifiedKFold(5, shuffle=True, random_state=0),
                                 error_score="raise")
    assert scores.shape == (5,) and np.isfinite(scores).all()
    assert scores.mean() > 0.6                  # the features carry the class
