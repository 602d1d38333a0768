"""Structures from incomplete data (issue 37, point 1).

Every structure learner compares two candidates on the rows where the variables of both
are observed (bnexplore._available_case), so a missing cell costs only the comparisons
it touches; structural EM (missing="em") is an option for the searches and for
GreedyThickThin; a learner that cannot use a column says so.

The congressional-votes table with one vote blanked in each complete row has no
complete row at all: before, GTT learned the empty network, STAN and SFAN a tree with no
arc to or from the class, and all three predicted one constant probability.
"""
from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict, train_test_split

import bnexplore as bx
from bnexplore._available_case import AvailableCaseScore, available_case, warn_unusable
from bnexplore._structural_em import em_parameters, observed_log_likelihood
from bnexplore.classifiers import ISMB, SFAN, STAN, GreedyThickThin, NaiveBayes
from bnexplore.data import DiscreteData
from bnexplore.scores import LocalScore
from bnexplore.search import greedy_thick_thin, hill_climb


# --------------------------------------------------------------------------- data
def _vote_without_complete_rows(seed: int = 0):
    df = bx.datasets.load("vote", missing="keep")
    X, y = df.drop(columns="Class").copy(), df["Class"].to_numpy()
    X.attrs = {}
    rng = np.random.default_rng(seed)
    for i in np.flatnonzero(~X.isna().any(axis=1).to_numpy()):
        X.iloc[i, rng.integers(X.shape[1])] = np.nan
    assert not (~X.isna().any(axis=1)).any()
    return X, y


def _cv_auc(clf, X, y) -> float:
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = cross_val_predict(clf, X, y, cv=cv, method="predict_proba")[:, 1]
    assert p.std() > 0.1                        # not one constant probability
    return roc_auc_score(y == np.unique(y)[1], p)


def _masked(df: pd.DataFrame, frac: float, seed: int) -> pd.DataFrame:
    return df.mask(np.random.default_rng(seed).random(df.shape) < frac)


def _by_hand(df: pd.DataFrame, child: str, parents, rows_of, prior="K2", ess=1.0) -> float:
    """The family score over the rows where every column of ``rows_of`` is observed."""
    sub = df[df[list(rows_of)].notna().all(axis=1)][[child, *parents]]
    sub = sub.astype({c: pd.CategoricalDtype(df[c].dropna().unique()) for c in sub})
    return LocalScore(sub, prior=prior, ess=ess).score(child, list(parents))


def _shd(a: nx.DiGraph, b: nx.DiGraph) -> int:
    """Structural Hamming distance: arcs missing or extra (as adjacencies) plus reversed."""
    ua = {frozenset(e) for e in a.edges}
    ub = {frozenset(e) for e in b.edges}
    rev = sum(1 for e in a.edges if frozenset(e) in ub and not b.has_edge(*e))
    return len(ua ^ ub) + rev


# --------------------------------------------------------------------------- Eq. (1)-(3) by hand
@pytest.mark.parametrize("prior", ["K2", "BDeu"])
def test_available_case_delta_is_the_difference_on_the_shared_rows(prior):
    df = _masked(bx.networks.load("asia").sample(600, random_state=2), 0.15, 1)
    ls = LocalScore(df, prior=prior, ess=2.0, missing="keep")
    ac = AvailableCaseScore(ls)
    names = list(df.columns)
    idx = {n: i for i, n in enumerate(names)}
    cases = [("dysp", ("bronc",), ("bronc", "either")), ("xray", (), ("either",)),
             ("either", ("lung", "tub"), ("lung",)), ("smoke", ("asia",), ("bronc", "lung"))]
    for child, old, new in cases:
        o = tuple(sorted(idx[u] for u in old))
        n = tuple(sorted(idx[u] for u in new))
        got = ac.deltas(idx[child], o, [n])[0]
        rows_of = {child, *old, *new}
        want = (_by_hand(df, child, new, rows_of, prior, 2.0) - _by_hand(df, child, old, rows_of, prior, 2.0))
        assert got == pytest.approx(want, rel=1e-12, abs=1e-9)
        # Eq. (2): the gain over the empty family on the family's rows
        assert ac.gain(idx[child], n) == pytest.approx(
            _by_hand(df, child, new, {child, *new}, prior, 2.0) - _by_hand(df, child, (), {child, *new}, prior, 2.0),
            rel=1e-12, abs=1e-9)


def test_complete_data_takes_the_complete_path():
    df = bx.networks.load("asia").sample(500, random_state=0)
    ls = LocalScore(df)
    assert available_case(ls) is None
    with pytest.raises(ValueError, match="missing cells"):
        AvailableCaseScore(ls)
    # the search is the one it always was
    a = hill_climb(df, max_parents=2)
    b = hill_climb(score=LocalScore(df), max_parents=2)
    assert sorted(a.dag.edges) == sorted(b.dag.edges) and a.score == b.score


@pytest.mark.parametrize("search", [hill_climb, greedy_thick_thin])
def test_every_accepted_move_is_judged_on_its_own_rows(search):
    """Replay the search: each recorded delta equals the score change of the changed
    families computed by hand on the rows where the variables of both are observed."""
    df = _masked(bx.networks.load("asia").sample(800, random_state=3), 0.2, 4)
    assert not df.notna().all(axis=1).any() or df.notna().all(axis=1).mean() < 0.3
    res = search(df, max_parents=2)
    parents = {v: set() for v in df.columns}
    assert len(res.step_rows) >= 4
    for row in res.step_rows:
        u, v = row["edge"]
        if row["op"] == "add":
            changes = [(v, parents[v], parents[v] | {u})]
        elif row["op"] == "remove":
            changes = [(v, parents[v], parents[v] - {u})]
        else:
            changes = [(v, parents[v], parents[v] - {u}), (u, parents[u], parents[u] | {v})]
        want = 0.0
        for child, old, new in changes:
            rows_of = {child, *old, *new}
            want += _by_hand(df, child, sorted(new), rows_of) - _by_hand(df, child, sorted(old), rows_of)
        assert row["delta"] == pytest.approx(want, rel=1e-10, abs=1e-8)
        for child, _, new in changes:
            parents[child] = new
    assert {(a, b) for b, ps in parents.items() for a in ps} == set(res.dag.edges)


def test_search_finds_the_network_without_a_complete_row():
    """Every row misses a value: complete cases give the empty network, available
    case the arcs of the complete data."""
    full = bx.networks.load("asia").sample(3000, random_state=5)
    blank = np.zeros(full.shape, dtype=bool)
    blank[np.arange(len(full)), np.random.default_rng(5).integers(0, full.shape[1], len(full))] = True
    df = full.mask(blank)
    assert not df.notna().all(axis=1).any()
    ref = greedy_thick_thin(full, max_parents=2)
    res = greedy_thick_thin(df, max_parents=2)
    with pytest.raises(ValueError, match="no rows left"), pytest.warns(UserWarning):
        greedy_thick_thin(df, max_parents=2, missing="drop")              # complete cases: none
    skel = lambda g: {frozenset(e) for e in g.edges}        # noqa: E731
    assert len(skel(res.dag) & skel(ref.dag)) >= len(skel(ref.dag)) - 1
    with pytest.raises(ValueError, match="missing"):
        greedy_thick_thin(df, missing="raise")


# --------------------------------------------------------------------------- the classifiers
@pytest.fixture(scope="module")
def vote_blanked():
    return _vote_without_complete_rows()


@pytest.fixture(scope="module")
def nb_auc(vote_blanked):
    return _cv_auc(NaiveBayes(), *vote_blanked)


@pytest.mark.parametrize("cls", [GreedyThickThin, STAN, SFAN], ids=lambda c: c.__name__)
def test_structure_classifiers_without_a_complete_row(cls, vote_blanked, nb_auc):
    auc = _cv_auc(cls(), *vote_blanked)
    assert auc >= nb_auc - 0.03, (auc, nb_auc)


def test_ismb_climbs_without_a_complete_row(vote_blanked):
    """Phase 1 (the instance-independent climb) on rows that all miss a vote leaves the
    empty blanket and takes in the vote that separates the parties best; the complete
    cases (none) kept it empty."""
    X, y = vote_blanked
    m = ISMB(queue_width=5).fit(X, y).model_
    last = m.phase1_models()[-1]
    assert len(m.phase1()[0]) > 5
    assert "physician-fee-freeze" in last.members


@pytest.mark.slow
def test_ismb_without_a_complete_row(vote_blanked):
    """ISMB trained on rows that all miss a vote, tested on held-out complete rows (about
    a minute on a loaded machine: ISMB searches structures for every test row)."""
    X, y = vote_blanked
    full = bx.datasets.load("vote", missing="keep")
    Xf = full.drop(columns="Class")
    train, test = train_test_split(np.arange(len(y)), test_size=0.3, stratify=y, random_state=0)
    test = test[Xf.iloc[test].notna().all(axis=1).to_numpy()]
    assert len(test) > 40 and len(set(y[test])) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = ISMB(queue_width=20).fit(X.iloc[train], y[train])
        nb = NaiveBayes().fit(X.iloc[train], y[train])
    pos = y[test] == clf.classes_[1]
    auc = roc_auc_score(pos, clf.predict_proba(Xf.iloc[test])[:, 1])
    ref = roc_auc_score(pos, nb.predict_proba(Xf.iloc[test])[:, 1])
    assert auc >= ref - 0.03, (auc, ref)
    assert len(clf.model_.phase1()[0]) > 2               # the climb left the empty blanket


def test_a_mostly_missing_column_costs_only_its_own_comparisons():
    """A column missing on 95% of the rows cut the complete cases from 232 to about 10;
    now GTT's structure among the other columns is the one learned without it."""
    df = bx.datasets.load("vote", missing="keep")
    X, y = df.drop(columns="Class"), df["Class"].to_numpy()
    rng = np.random.default_rng(1)
    extra = pd.Series(np.where(rng.random(len(X)) < 0.5, "a", "b"), index=X.index).mask(rng.random(len(X)) < 0.95)
    Xe = X.assign(extra=extra)
    assert (~Xe.isna().any(axis=1)).sum() < 25
    with_extra = GreedyThickThin().fit(Xe, y).search_.dag
    without = GreedyThickThin().fit(X, y).search_.dag
    rest = with_extra.subgraph([n for n in with_extra if n != "extra"])
    skel = lambda g: {frozenset(e) for e in g.edges}        # noqa: E731
    # complete cases: 10 rows and the empty network; now most adjacencies are kept
    assert len(skel(rest) & skel(without)) >= 0.8 * len(skel(without))
    assert _cv_auc(GreedyThickThin(), Xe, y) >= _cv_auc(GreedyThickThin(), X, y) - 0.005


# --------------------------------------------------------------------------- warnings
@pytest.mark.parametrize("fit", [
    lambda X, y: GreedyThickThin().fit(X, y),
    lambda X, y: STAN().fit(X, y),
    lambda X, y: ISMB(queue_width=5).fit(X, y),
    lambda X, y: hill_climb(X.assign(y=y)),
], ids=["GreedyThickThin", "STAN", "ISMB", "hill_climb"])
def test_unusable_columns_are_named(fit):
    df = bx.datasets.load("vote", missing="keep").iloc[:120]
    X, y = df.drop(columns="Class").copy(), df["Class"].to_numpy()
    X.attrs = {}
    X["ghost"] = pd.Series([None] * len(X), index=X.index, dtype=object)
    X.iloc[:3, X.columns.get_loc("ghost")] = ["a", "b", "a"]
    with pytest.warns(UserWarning, match=r"cannot use the columns \['ghost'\]"):
        fit(X, y)


def test_no_warning_when_columns_are_usable():
    X, y = _vote_without_complete_rows()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GreedyThickThin().fit(X, y)
    assert warn_unusable(DiscreteData.from_frame(X, missing="keep")) == []


# --------------------------------------------------------------------------- structural EM
def _brute_observed_ll(net_parents, cpts, codes, arities) -> float:
    """sum_r log sum over the completions of the row's missing cells of the joint."""
    from test_em_counts import _brute
    return float(_brute(codes, arities, net_parents, cpts)[1].sum())


def test_observed_log_likelihood_sums_missing_cells_out_exactly():
    df = _masked(bx.networks.load("asia").sample(60, random_state=7), 0.3, 8)
    data = DiscreteData.from_frame(df, missing="keep")
    parents = [(), (0,), (), (2,), (2,), (1, 3), (5,), (4, 5)]
    rng = np.random.default_rng(0)
    cpts = [rng.dirichlet(np.ones(2), size=2 ** len(pa)) for pa in parents]
    codes = np.where(data.missing, -1, data.codes).astype(np.int64)
    want = _brute_observed_ll(parents, cpts, codes, [int(a) for a in data.arities])
    assert observed_log_likelihood(data, parents, cpts) == pytest.approx(want, rel=1e-10)


def test_em_parameters_raise_the_observed_likelihood():
    net = bx.networks.load("asia")
    df = _masked(net.sample(1500, random_state=9), 0.3, 10)
    data = DiscreteData.from_frame(df, missing="keep")
    dag = nx.DiGraph(net.dag)
    cpts, n_iter, lls = em_parameters(data, dag, max_iter=6)
    parents = [tuple(sorted(data.index(u) for u in dag.predecessors(v))) for v in data.names]
    assert n_iter == len(lls) - 1 >= 1 and np.isfinite(lls).all()
    assert lls[-1] > lls[0]                                 # lls[0]: each family where it is observed
    assert observed_log_likelihood(data, parents, [cpts[v] for v in data.names]) == pytest.approx(lls[-1],
                                                                                                  rel=1e-10)


def test_structural_em_recovers_the_complete_data_structure_better_than_complete_cases():
    net = bx.networks.load("asia")
    full = net.sample(2000, random_state=11)
    df = _masked(full, 0.25, 12)
    assert df.notna().all(axis=1).mean() < 0.15
    ref = greedy_thick_thin(full, max_parents=2).dag
    cc = greedy_thick_thin(df, max_parents=2, missing="drop")
    em = greedy_thick_thin(df, max_parents=2, missing="em", random_state=0, max_iter=6)
    assert _shd(em.dag, ref) < _shd(cc.dag, ref)
    assert 1 <= em.extra["n_iter"] <= 6 and np.isfinite(em.extra["log_likelihood"])
    again = greedy_thick_thin(df, max_parents=2, missing="em", random_state=0, max_iter=6)
    assert sorted(again.dag.edges) == sorted(em.dag.edges)
    assert again.extra["log_likelihood"] == em.extra["log_likelihood"]


def test_greedy_thick_thin_classifier_em(vote_blanked, nb_auc):
    X, y = vote_blanked
    clf = GreedyThickThin(missing="em", max_iter=3, random_state=0).fit(X, y)
    assert 1 <= clf.n_iter_ <= 3 and np.isfinite(clf.log_likelihood_)
    # the fitted network carries structural EM's parameters: its observed-data log-likelihood
    data, net = clf.data_, clf.network_
    parents = [tuple(data.index(u) for u in net.parents(v)) for v in data.names]
    assert observed_log_likelihood(data, parents, [net.cpts[v] for v in data.names]) == pytest.approx(
        clf.log_likelihood_, rel=1e-10)
    plain = GreedyThickThin().fit(X, y)
    assert plain.n_iter_ == 1 and plain.log_likelihood_ is None
    p = clf.predict_proba(X)
    assert np.allclose(p.sum(axis=1), 1.0)
    assert roc_auc_score(y == clf.classes_[1], p[:, 1]) > 0.95


@pytest.mark.parametrize("bad, match", [({"missing": "impute"}, "missing"), ({"max_iter": 0}, "max_iter"),
                                        ({"random_state": -1}, "random_state")])
def test_greedy_thick_thin_refuses_bad_missing_parameters(bad, match):
    X, y = _vote_without_complete_rows()
    with pytest.raises((ValueError, TypeError), match=match):
        GreedyThickThin(**bad).fit(X, y)


def test_search_refuses_an_unknown_missing_policy():
    df = bx.networks.load("asia").sample(100, random_state=0)
    with pytest.raises(ValueError, match="missing must be one of"):
        hill_climb(df, missing="impute")
    with pytest.raises(ValueError, match="max_iter"):
        hill_climb(_masked(df, 0.1, 0), missing="em", max_iter=0)


# --------------------------------------------------------------------------- clustering
def test_cramers_v_pairs_on_their_shared_rows():
    df = _masked(bx.networks.load("asia").sample(800, random_state=13), 0.2, 14)
    v = bx.clustering.cramers_v(df)
    for a, b in [("smoke", "lung"), ("either", "xray"), ("asia", "dysp")]:
        pair = df[[a, b]].dropna()
        assert v.loc[a, b] == pytest.approx(bx.clustering.cramers_v(pair).loc[a, b], rel=1e-9, abs=1e-12)


def test_incremental_search_with_missing_cells():
    """Without a complete row the incremental search still finds most of the score the
    complete-data search finds (measured on the complete data)."""
    full = bx.networks.load("asia").sample(2000, random_state=15)
    blank = np.zeros(full.shape, dtype=bool)
    blank[np.arange(len(full)), np.random.default_rng(16).integers(0, full.shape[1], len(full))] = True
    df = full.mask(blank)
    inc = bx.clustering.incremental_search(df, cluster_size=3)
    ref = bx.clustering.incremental_search(full, cluster_size=3)
    ls = LocalScore(full)
    empty = ls.total(nx.empty_graph(list(full.columns), create_using=nx.DiGraph))
    assert ls.total(inc.dag) - empty >= 0.95 * (ref.score - empty)


def test_expected_score_of_complete_draws_is_the_complete_data_search():
    """ExpectedScore over draws that are the complete data scores every family as
    LocalScore, and the searches on it (pairs, additions, batches through its own family
    score) find the same structure."""
    from bnexplore._structural_em import ExpectedScore
    from bnexplore.search import hill_climb
    full = bx.networks.load("asia").sample(800, random_state=3)
    data = DiscreteData.from_frame(full)
    code = data.codes.astype(np.int64)
    for prior, ess in (("K2", 1.0), ("BDeu", 5.0)):
        ls = LocalScore(data, prior=prior, ess=ess)
        es = ExpectedScore(data, code, np.repeat(code[None], 2, 0), prior, ess)
        assert es.score("dysp", ["bronc", "either"]) == pytest.approx(ls.score("dysp", ["bronc", "either"]),
                                                                      rel=1e-12)
        np.testing.assert_allclose(es.score_many("lung", [[], ["smoke"], ["smoke", "tub"]]),
                                   ls.score_many("lung", [[], ["smoke"], ["smoke", "tub"]]), rtol=1e-12)
        for run in (greedy_thick_thin, hill_climb):
            a, b = run(score=es, max_parents=2), run(score=ls, max_parents=2)
            assert sorted(a.dag.edges) == sorted(b.dag.edges)
            assert a.score == pytest.approx(b.score, rel=1e-10)


def test_structural_em_reports_every_iteration():
    df = _masked(bx.networks.load("asia").sample(1000, random_state=4), 0.2, 5)
    res = greedy_thick_thin(df, max_parents=2, missing="em", random_state=1, max_iter=4)
    ex = res.extra
    assert 1 <= ex["n_iter"] <= 4 and ex["missing"] == "em" and ex["sampled_rows"] == 0
    assert len(ex["log_likelihoods"]) == ex["n_iter"] + (0 if ex["converged"] else 1)
    assert ex["log_likelihood"] == ex["log_likelihoods"][-1]
    data = DiscreteData.from_frame(df, missing="keep")
    parents = [tuple(sorted(data.index(u) for u in res.dag.predecessors(v))) for v in data.names]
    # the reported likelihood is that of the returned network with the returned parameters
    assert observed_log_likelihood(data, parents, [ex["cpts"][v] for v in data.names]) == pytest.approx(
        ex["log_likelihood"], rel=1e-10)


def test_structural_em_m_step_never_lowers_the_expected_score():
    """Friedman's condition: each M-step starts from G_t and takes only moves that raise
    the expected score Q on the E-step's draws, so Q(G_t+1) >= Q(G_t) on the same draws;
    iterations stop when a structure is kept, and the last iteration's structure is the
    one returned."""
    df = _masked(bx.networks.load("asia").sample(2000, random_state=0), 0.1, 100)
    res = greedy_thick_thin(df, max_parents=2, missing="em", random_state=0, max_iter=6)
    its = res.extra["iterations"]
    assert len(its) == res.extra["n_iter"] >= 2          # this sample moves once, then stays
    for it in its:
        assert it["expected_score"] >= it["expected_score_start"] - 1e-9
    assert any(it["expected_score"] > it["expected_score_start"] + 1e-6 for it in its)
    assert its[-1]["edges"] == sorted(res.dag.edges)
    assert res.extra["converged"] and its[-1]["edges"] == its[-2]["edges"]
    assert its[-1]["expected_score"] == pytest.approx(its[-1]["expected_score_start"], abs=1e-9)
    assert [it["log_likelihood"] for it in its] == res.extra["log_likelihoods"]


def test_structural_em_ends_near_the_complete_data_search_from_its_start():
    """At 10% missing the structural-EM structure is within SHD 1 of the complete-data
    search started where structural EM starts (the available-case structure), and scores
    on the complete data at least as well as the available-case structure."""
    full = bx.networks.load("asia").sample(2000, random_state=0)
    df = _masked(full, 0.1, 100)
    ls = LocalScore(full)
    keep = greedy_thick_thin(df, max_parents=2)
    em = greedy_thick_thin(df, max_parents=2, missing="em", random_state=0, max_iter=6)
    ref = greedy_thick_thin(score=ls, max_parents=2, start=keep.dag)
    assert _shd(em.dag, ref.dag) <= 1 < _shd(keep.dag, ref.dag)
    assert ls.total(em.dag) >= ls.total(keep.dag)


def test_structural_em_checks_the_draws_against_the_budget():
    from bnexplore.data import get_table_budget, set_table_budget
    from bnexplore.data.core import MemoryBudgetError
    df = _masked(bx.networks.load("asia").sample(300, random_state=4), 0.2, 5)
    old = get_table_budget()
    set_table_budget(16 * 300 * 8 - 1)
    try:
        with pytest.raises(MemoryBudgetError, match="missing='keep'"):
            greedy_thick_thin(df, max_parents=2, missing="em", random_state=1)
    finally:
        set_table_budget(old)


# --------------------------------------------------------------------------- EM parameters
def _brute_em(code, arities, parents, cpts, n_iter, prior="K2", ess=1.0):
    """``n_iter`` EM updates by summing every completion of each row (test_em_counts._brute)."""
    from test_em_counts import _brute
    from bnexplore.scores import standard_parameters
    for _ in range(n_iter):
        counts, _ = _brute(code, arities, parents, cpts)
        cpts = [standard_parameters(c, prior, ess) for c in counts]
    return cpts, float(_brute(code, arities, parents, cpts)[1].sum())


def test_bayesnet_fit_em_equals_brute_force_em():
    """BayesNet.fit(missing="em") takes the same EM steps as EM by enumeration, from the
    available-case CPTs; a parent order other than the columns' gives the same network."""
    net = bx.networks.load("asia")
    df = _masked(net.sample(120, random_state=21), 0.25, 22)
    data = DiscreteData.from_frame(df, missing="keep")
    code = np.where(data.missing, -1, data.codes).astype(np.int64)
    ar = [int(a) for a in data.arities]
    given = {v: list(net.dag.predecessors(v))[::-1] for v in data.names}     # reversed parent order
    for prior, ess in (("K2", 1.0), ("BDeu", 4.0)):
        keep = bx.networks.BayesNet.fit(given, df, prior=prior, ess=ess, missing="keep")
        em = bx.networks.BayesNet.fit(given, df, prior=prior, ess=ess, missing="em", max_iter=4, tol=0.0)
        assert keep.em is None and em.em["n_iter"] == 4 and len(em.em["log_likelihoods"]) == 5
        parents = [tuple(sorted(data.index(u) for u in given[v])) for v in data.names]
        start = bx.networks.BayesNet.fit({v: sorted(given[v], key=data.index) for v in data.names}, df,
                                         prior=prior, ess=ess, missing="keep")
        want, want_ll = _brute_em(code, ar, parents, [start.cpts[v] for v in data.names], 4, prior, ess)
        assert em.em["log_likelihood"] == pytest.approx(want_ll, rel=1e-10)
        sorted_em = bx.networks.BayesNet.fit({v: sorted(given[v], key=data.index) for v in data.names}, df,
                                             prior=prior, ess=ess, missing="em", max_iter=4, tol=0.0)
        for v, w in zip(data.names, want):
            np.testing.assert_allclose(sorted_em.cpts[v], w, rtol=1e-10)
        full = df.dropna()
        np.testing.assert_allclose(em.log_prob(full), sorted_em.log_prob(full), rtol=1e-10)


def test_bayesnet_fit_em_raises_the_observed_likelihood_over_available_case():
    net = bx.networks.load("asia")
    df = _masked(net.sample(1500, random_state=23), 0.3, 24)
    data = DiscreteData.from_frame(df, missing="keep")
    nets = {m: bx.networks.BayesNet.fit(net.dag, df, prior="K2", missing=m) for m in ("keep", "em")}
    parents = [tuple(data.index(u) for u in nets["em"].parents(v)) for v in data.names]    # the CPTs' order
    ll = {m: observed_log_likelihood(data, parents, [nets[m].cpts[v] for v in data.names]) for m in nets}
    assert nets["em"].em["converged"] and ll["em"] == pytest.approx(nets["em"].em["log_likelihood"], rel=1e-10)
    assert ll["em"] > ll["keep"] + 1.0
    assert nets["em"].em["log_likelihoods"][0] == pytest.approx(ll["keep"], rel=1e-10)


def test_bayesnet_fit_em_without_missing_cells_is_the_complete_data_fit():
    net = bx.networks.load("asia")
    df = net.sample(500, random_state=25)
    a = bx.networks.BayesNet.fit(net.dag, df, prior="K2")
    b = bx.networks.BayesNet.fit(net.dag, df, prior="K2", missing="em")
    assert b.em is None
    for v in a.cpts:
        np.testing.assert_array_equal(a.cpts[v], b.cpts[v])


@pytest.mark.parametrize("kw, err, match", [({"missing": "impute"}, ValueError, "missing must be"),
                                            ({"missing": "em", "max_iter": 0}, ValueError, "max_iter"),
                                            ({"missing": "em", "tol": -1.0}, ValueError, "tol"),
                                            ({"missing": "em", "prior": "mle"}, ValueError, "prior='K2'"),
                                            ({}, ValueError, "missing values")])
def test_bayesnet_fit_refuses_bad_missing_parameters(kw, err, match):
    net = bx.networks.load("asia")
    df = _masked(net.sample(100, random_state=0), 0.1, 0)
    with pytest.raises(err, match=match):
        bx.networks.BayesNet.fit(net.dag, df, **kw)
    with pytest.raises(err, match=match):
        bx.networks.BayesNet.fit(net.dag, DiscreteData.from_frame(df, missing="keep"), **kw)
