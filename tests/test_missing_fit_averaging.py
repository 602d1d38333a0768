"""Missing values at fit time in order averaging, its scores and the Dash & Cooper
classifiers (issue 18, item 2).

Policy under test (DiscreteData's Notes): in order averaging each family is weighed by its
gain over the empty family on its own rows (bnexplore._order_available, checked against
brute force in tests/test_order_available.py); in greedy search a move is compared on the
rows of the variables of its two families; parameters are counted by available case.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from sklearn.model_selection import StratifiedKFold, cross_val_score

from bnexplore.averaging import OrderedAveraging
from bnexplore.classifiers import AMA, GreedyThickThin, NaiveAveraging
from bnexplore.data import DiscreteData
from bnexplore.scores import LocalScore, family_counts, standard_parameters


def _frame(n: int, arities, seed: int, p_missing: float = 0.0) -> pd.DataFrame:
    """Dependent categorical columns V0, V1, ... (each noisy copy of the one before),
    with categories fixed so that subsets keep every state."""
    rng = np.random.default_rng(seed)
    cols, prev = {}, None
    for j, a in enumerate(arities):
        x = rng.integers(0, a, n) if prev is None else np.where(rng.random(n) < 0.6, prev % a, rng.integers(0, a, n))
        cols[f"V{j}"] = x
        prev = x
    df = pd.DataFrame({c: pd.Categorical(v, categories=list(range(a))) for (c, v), a in zip(cols.items(), arities)})
    if p_missing:
        df = df.mask(rng.random(df.shape) < p_missing)
        for c, a in zip(df.columns, arities):
            df[c] = pd.Categorical(df[c], categories=list(range(a)))
    return df


@pytest.fixture(scope="module")
def holey():
    return _frame(160, (2, 3, 2, 3, 2), seed=1, p_missing=0.12)


def test_family_rows_and_weights_equal_a_hand_built_subset(holey):
    names = list(holey.columns)
    for k, prior in ((1, "K2"), (2, "BDeu")):
        avg = OrderedAveraging(holey, max_parents=k, prior=prior, ess=2.0, missing="keep")
        for v, child in enumerate(names):
            cands = names[:v]
            base = LocalScore(holey.loc[holey[child].notna(), [child]], prior=prior, ess=2.0, cache=False)
            got = avg.parent_set_posteriors(child)
            want = []
            for ps in got["parents"]:
                rows = holey[[child, *ps]].notna().all(axis=1).to_numpy()   # by hand
                np.testing.assert_array_equal(avg.family_rows(child, ps), rows)
                ls = LocalScore(holey.loc[rows, [*ps, child]], prior=prior, ess=2.0, cache=False)
                want.append(base.score(child, []) + ls.score(child, list(ps)) - ls.score(child, []))
            np.testing.assert_allclose(got["log_weight"], want, rtol=1e-12, atol=1e-9)
            assert len(got) == sum(1 for s in range(k + 1) for _ in itertools.combinations(cands, s))
        # log evidence: the sum of the per-node terms (the sum over DAGs factorises)
        per_node = [logsumexp(avg.parent_set_posteriors(c)["log_weight"]) for c in names]
        assert avg.log_evidence == pytest.approx(sum(per_node), rel=1e-12)


def test_missing_is_refused_unless_kept(holey):
    with pytest.raises(ValueError, match="missing='keep'"):
        OrderedAveraging(holey)
    with pytest.raises(ValueError, match="complete_cases"):
        OrderedAveraging(DiscreteData.from_frame(holey, missing="keep"))


def _decoy(n=400, seed=0):
    """C copies A (80 %); B is noise and missing in 90 % of the rows."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    c = np.where(rng.random(n) < 0.8, a, 1 - a)
    b = rng.integers(0, 2, n).astype(float)
    b[rng.random(n) < 0.9] = np.nan
    return pd.DataFrame({"A": a, "B": b, "C": c})


def test_available_case_scoring_would_prefer_the_parent_with_more_missing_rows():
    df = _decoy()
    # raw scores on each family's own rows (what no comparison may rank by): {B} is
    # scored on the ~40 rows where B is observed and beats {A}, scored on all 400
    per_family = {ps: LocalScore(df[[*ps, "C"]].dropna(), cache=False).score("C", list(ps))
                  for ps in [(), ("A",), ("B",)]}
    assert max(per_family, key=per_family.get) == ("B",)
    # order averaging weighs each set by its gain over the empty set on its own rows
    avg = OrderedAveraging(df, order=["A", "B", "C"], max_parents=1, missing="keep")
    post = avg.parent_set_posteriors("C")
    assert post["parents"].iloc[0] == ("A",)
    assert avg.arc_posteriors().loc["A", "C"] > 0.9 > 0.1 > avg.arc_posteriors().loc["B", "C"]
    ls = LocalScore(df, missing="keep", cache=False)
    assert ls.score("C", ["A"]) > max(ls.score("C", ["B"]), ls.score("C", []))
    np.testing.assert_array_equal(ls.rows("C"), df.notna().all(axis=1).to_numpy())
    # a narrower candidate pool widens the rows
    narrow = LocalScore(df, missing="keep", candidates={"C": ["A"]}, cache=False)
    assert narrow.rows("C").all()
    assert narrow.score("C", ["A"]) == pytest.approx(LocalScore(df[["A", "C"]]).score("C", ["A"]), rel=1e-12)
    with pytest.raises(ValueError, match="not a candidate parent"):
        narrow.score("C", ["B"])


def test_complete_data_is_unchanged_bit_for_bit():
    df = _frame(200, (2, 3, 2, 4, 2, 3), seed=3)
    a = OrderedAveraging(df, max_parents=2)
    b = OrderedAveraging(df, max_parents=2, missing="keep")
    assert b.data.missing is None
    np.testing.assert_array_equal(a._flat_logw, b._flat_logw)
    assert a.log_evidence == b.log_evidence
    na, nb = a.summary_network(3), b.summary_network(3)
    for v in na.nodes:
        np.testing.assert_array_equal(na.cpts[v], nb.cpts[v])
    np.testing.assert_array_equal(a.predict_log_joint(df.head(20)), b.predict_log_joint(df.head(20)))
    ls, lk = LocalScore(df, cache=False), LocalScore(df, missing="keep", cache=False)
    assert ls.score("V3", ["V0", "V1"]) == lk.score("V3", ["V0", "V1"])


def _eq15_available_case(data: DiscreteData, avg: OrderedAveraging, child: str, star: list[str]) -> np.ndarray:
    """Eq. 15 written out, each family's standard parameters by available case."""
    v = data.index(child)
    post = avg.parent_set_posteriors(child)
    inside = post[[set(ps) <= set(star) for ps in post["parents"]]]
    w = np.exp(inside["log_weight"] - inside["log_weight"].max())
    w = w / w.sum()
    ar = [int(data.arities[data.index(u)]) for u in star]
    r = int(data.arities[v])
    out = np.zeros((int(np.prod(ar)), r))
    for ps, wg in zip(inside["parents"], w):
        theta = standard_parameters(family_counts(data, child, list(ps)), avg.prior, avg.ess)
        for J, cfg in enumerate(itertools.product(*[range(a) for a in ar])):
            j = 0
            for u in ps:
                j = j * ar[star.index(u)] + cfg[star.index(u)]
            out[J] += wg * theta[j]
    return out


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
def test_summary_cpts_count_by_available_case(holey, prior):
    data = DiscreteData.from_frame(holey, missing="keep")
    avg = OrderedAveraging(data, max_parents=2, prior=prior, ess=2.0, missing="keep")
    dense = avg.summary_network(3, lazy=False)
    lazy = avg.summary_network(3)
    for child in data.names:
        ref = _eq15_available_case(data, avg, child, dense.parents(child))
        np.testing.assert_allclose(dense.cpts[child], ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(np.asarray(lazy.cpts[child]), ref, rtol=0, atol=1e-12)


def test_naive_averaging_with_missing_values_by_hand():
    df = _frame(150, (2, 3, 2, 3), seed=5, p_missing=0.15)
    y = df.pop("V0").astype(float)
    keep = y.notna().to_numpy()
    X, y = df[keep].reset_index(drop=True), y[keep].astype(int).to_numpy()
    clf = NaiveAveraging().fit(X, y)
    frame = X.assign(__class__=pd.Categorical(y, categories=[0, 1]))
    data = DiscreteData.from_frame(frame, missing="keep")
    prior = standard_parameters(family_counts(data, "__class__", []))[0]
    test = X.iloc[:8].copy()
    test.iloc[0, 1] = np.nan                               # and one missing at predict time
    logp = np.tile(np.log(prior), (len(test), 1))
    for j, f in enumerate(X.columns):
        rows = data.observed_rows([f, "__class__"])          # the two structures' common rows
        sub = frame.loc[rows, [f, "__class__"]]
        s1 = LocalScore(sub, cache=False).score(f, ["__class__"])
        s0 = LocalScore(sub, cache=False).score(f, [])
        pi = 1.0 / (1.0 + np.exp(s0 - s1))
        assert clf.arc_posteriors_[j] == pytest.approx(pi, rel=1e-10)
        cond = standard_parameters(family_counts(data, f, ["__class__"]))     # available cases
        marg = standard_parameters(family_counts(data, f, []))[0]
        for i, x in enumerate(test[f]):
            if pd.isna(x):
                continue
            logp[i] += np.log(pi * cond[:, int(x)] + (1 - pi) * marg[int(x)])
    want = np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(test), want, rtol=1e-10, atol=1e-12)


def test_greedy_thick_thin_searches_by_available_case_and_counts_available_cases():
    df = _frame(200, (2, 3, 2, 3, 2), seed=6, p_missing=0.1)
    y = df.pop("V0")
    keep = y.notna().to_numpy()
    X, y = df[keep].reset_index(drop=True), y[keep].astype(int).to_numpy()
    clf = GreedyThickThin().fit(X, y)
    data = clf.data_
    assert clf.search_.dag.number_of_nodes() == data.n_cols

    def by_hand(child, ps, rows_of):      # the family over the rows where rows_of is observed
        sub = data.take(data.observed_rows(rows_of)).subset([child, *ps])
        return LocalScore(sub).score(child, list(ps))

    # every move of the search judged on the rows where both families' variables are seen
    parents = {v: set() for v in data.names}
    for row in clf.search_.step_rows:
        u, v = row["edge"]
        new = parents[v] | {u} if row["op"] == "add" else parents[v] - {u}
        rows_of = [v, *(parents[v] | new)]
        want = by_hand(v, sorted(new), rows_of) - by_hand(v, sorted(parents[v]), rows_of)
        assert row["delta"] == pytest.approx(want, rel=1e-10, abs=1e-9)
        parents[v] = new
    assert {(a, b) for b, ps in parents.items() for a in ps} == set(clf.search_.dag.edges)
    for v in clf.network_.nodes:
        ps = clf.network_.parents(v)
        np.testing.assert_allclose(clf.network_.cpts[v],
                                   standard_parameters(family_counts(data, v, ps), "K2"), rtol=1e-12)


@pytest.mark.parametrize("make", [NaiveAveraging, GreedyThickThin, AMA])
def test_cross_validation_with_ten_percent_missing_cells_runs(make):
    rng = np.random.default_rng(7)
    n = 200
    z = rng.integers(0, 2, n)
    X = pd.DataFrame({f"f{j}": np.clip(z * 2 + rng.integers(0, 3, n), 0, 3) for j in range(6)})
    X = X.mask(rng.random(X.shape) < 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # no fallback, no silent drop
        scores = cross_val_score(make(), X, z, cv=StratifiedKFold(5, shuffle=True, random_state=0),
                                 error_score="raise")
    assert np.all(scores > 0.6), scores


def test_ama_with_missing_fit_data_uses_per_family_rows():
    df = _frame(180, (2, 3, 2, 3, 2), seed=8, p_missing=0.1)
    y = df.pop("V0")
    keep = y.notna().to_numpy()
    X, y = df[keep].reset_index(drop=True), y[keep].astype(int).to_numpy()
    clf = AMA(order="random", random_state=0).fit(X, y)
    avg = clf.averagings_[0]
    assert avg.data.missing is not None
    for v, name in enumerate(avg.names):
        for ps in avg.parent_set_posteriors(name, top=3)["parents"]:
            want = avg.data.observed_rows([name, *ps])
            np.testing.assert_array_equal(avg.family_rows(name, ps), want)
            assert want.sum() >= avg.data.observed_rows([name] + [avg.names[u] for u in avg.candidates[v]]).sum()
    p = clf.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
