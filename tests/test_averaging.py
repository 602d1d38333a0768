"""Order-constrained model averaging (Dash & Cooper) against brute-force enumeration.

Every DAG of L_k(pi) is enumerated explicitly; its posterior comes from
``LocalScore.total`` and its predictions from ``BayesNet.fit`` (standard parameters,
Eq. 3), both independent of ``bnexplore.averaging``.
"""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

import bnexplore as bx
from bnexplore.averaging import OrderedAveraging, count_parent_sets, procedure1
from bnexplore.data import MemoryBudgetError
from bnexplore.networks import BayesNet
from bnexplore.scores import LocalScore


def _data(n_nodes=5, rows=60, seed=0):
    bn = bx.networks.random_network(n_nodes, max_parents=2, arity=(2, 3), random_state=seed)
    df = bn.sample(rows + 25, random_state=seed + 1)
    return df.iloc[:rows].reset_index(drop=True), df.iloc[rows:].reset_index(drop=True)


def _level_of(names, order, levels):
    if levels is None:
        levels = [[v] for v in order]
    return {v: i for i, g in enumerate(levels) for v in g}


def _brute(train, test, order=None, levels=None, k=2, prior="K2", ess=1.0, restrict=None,
           logprior=None, target=None):
    """Enumerate every DAG of L_k(pi) (optionally with parents inside restrict[v])."""
    names = list(train.columns)
    lev = _level_of(names, order, levels)
    ls = LocalScore(train, prior=prior, ess=ess)
    options = []
    for v in names:
        cand = [u for u in names if lev[u] < lev[v] and (restrict is None or u in restrict[v])]
        options.append([ps for s in range(min(k, len(cand)) + 1) for ps in itertools.combinations(cand, s)])
    logw, joints, probas = [], [], []
    arcs = []
    fit_prior = "BDeu" if prior == "BDeu" else "K2"
    states = list(train[target].cat.categories) if target is not None else []
    variants = [test]
    for c in states:
        t2 = test.copy()
        t2[target] = pd.Categorical([c] * len(t2), categories=states)
        variants.append(t2)
    fam_cache = {}

    def fam_logp(v, ps):
        # log theta_hat(x_v | x_ps) of every test variant, from a BayesNet fitted on the family
        if (v, ps) not in fam_cache:
            fitted = BayesNet.fit({v: list(ps), **{u: [] for u in ps}}, train[[v, *ps]],
                                  prior=fit_prior, ess=ess)
            fam_cache[v, ps] = np.array([
                fitted.log_prob(t[[v, *ps]])
                - sum(np.log(fitted.cpts[u][0, t[u].cat.codes.to_numpy()]) for u in ps)
                for t in variants])
        return fam_cache[v, ps]

    for combo in itertools.product(*options):
        dag = nx.DiGraph()
        dag.add_nodes_from(names)
        dag.add_edges_from((u, v) for v, ps in zip(names, combo) for u in ps)
        lw = ls.total(dag)
        if logprior is not None:
            lw += sum(logprior[u][v] for u, v in dag.edges)
        logw.append(lw)
        arcs.append(set(dag.edges))
        lp = sum(fam_logp(v, ps) for v, ps in zip(names, combo))
        joints.append(lp[0])
        if target is not None:  # P(c, f | S, D) for every class value c
            probas.append(lp[1:].T)
    logw = np.array(logw)
    post = np.exp(logw - logsumexp(logw))
    arc = pd.DataFrame(0.0, index=names, columns=names)
    for w, es in zip(post, arcs):
        for u, v in es:
            arc.loc[u, v] += w
    joint = logsumexp(np.array(joints), axis=0, b=post[:, None])
    out = {"log_evidence": float(logsumexp(logw)), "arcs": arc, "joint": joint,
           "n_structures": len(logw)}
    if target is not None:
        # Bayesian prediction: P(c | f, D) = P(c, f | D) / P(f | D), both averaged (Eq. 13)
        lj = logsumexp(np.array(probas), axis=0, b=post[:, None, None])
        out["proba"] = np.exp(lj - logsumexp(lj, axis=1, keepdims=True))
    return out


CASES = [
    # (order kind, k, prior)
    ("total", 1, "K2"),
    ("total", 2, "BDeu"),
    ("total", 3, "K2"),
    ("partial", 1, "BDeu"),
    ("partial", 2, "K2"),
    ("partial", 3, "BDeu"),
]


@pytest.mark.parametrize("kind,k,prior", CASES)
def test_matches_brute_force(kind, k, prior):
    train, test = _data(seed=k + (10 if kind == "partial" else 0))
    names = list(train.columns)
    rng = np.random.default_rng(k)
    perm = [names[i] for i in rng.permutation(len(names))]
    if kind == "total":
        order, levels = perm, None
    else:
        order, levels = None, [perm[:2], perm[2:3], perm[3:]]
    target = perm[1]
    ess = 2.5
    avg = OrderedAveraging(train, order=order, levels=levels, max_parents=k, prior=prior, ess=ess)
    ref = _brute(train, test, order=order, levels=levels, k=k, prior=prior, ess=ess, target=target)
    assert avg.n_structures == ref["n_structures"]
    assert avg.log_evidence == pytest.approx(ref["log_evidence"], abs=1e-9, rel=0)
    got = avg.arc_posteriors().loc[names, names]
    np.testing.assert_allclose(got.to_numpy(), ref["arcs"].to_numpy(), atol=1e-9, rtol=0)
    np.testing.assert_allclose(avg.predict_log_joint(test), ref["joint"], atol=1e-9, rtol=0)
    np.testing.assert_allclose(avg.predict_proba(test.drop(columns=[target]), target), ref["proba"],
                               atol=1e-9, rtol=0)
    # Theorem 2: the untruncated summary network reproduces exact MA
    mstar = avg.summary_network(None)
    np.testing.assert_allclose(mstar.log_prob(test), ref["joint"], atol=1e-9, rtol=0)
    np.testing.assert_allclose(mstar.predict_proba(test, target), ref["proba"], atol=1e-9, rtol=0)
    # n = number of candidates: the same network
    n_max = max(c.size for c in avg.candidates)
    np.testing.assert_allclose(avg.summary_network(n_max).log_prob(test), ref["joint"], atol=1e-9)


def test_truncated_summary_is_averaging_over_restricted_class():
    """AMA with small n averages exactly the structures with P_i subset of P_i^* (|P_i| <= k)."""
    train, test = _data(seed=3)
    names = list(train.columns)
    avg = OrderedAveraging(train, order=names, max_parents=2, prior="K2")
    for n in (1, 2):
        star = avg.summary_parents(n)
        assert all(len(ps) <= n for ps in star.values())
        ref = _brute(train, test, order=names, k=2, restrict=star)
        np.testing.assert_allclose(avg.summary_network(n).log_prob(test), ref["joint"], atol=1e-9, rtol=0)


def test_structure_prior_matrix_and_callable():
    train, test = _data(seed=4)
    names = list(train.columns)
    rng = np.random.default_rng(0)
    W = pd.DataFrame(rng.normal(size=(5, 5)), index=names, columns=names)
    avg = OrderedAveraging(train, order=names, max_parents=2, structure_prior=W)
    ref = _brute(train, test, order=names, k=2, logprior=W.to_dict(orient="index"))
    assert avg.log_evidence == pytest.approx(ref["log_evidence"], abs=1e-9)
    np.testing.assert_allclose(avg.arc_posteriors().to_numpy(), ref["arcs"].to_numpy(), atol=1e-9)
    # the same prior as a callable
    avg2 = OrderedAveraging(train, order=names, max_parents=2,
                            structure_prior=lambda v, ps: sum(W.loc[u, v] for u in ps))
    assert avg2.log_evidence == pytest.approx(avg.log_evidence, abs=1e-9)


def test_arc_posteriors_respect_order_and_counts():
    train, _ = _data(seed=5)
    names = list(train.columns)
    levels = [names[:2], names[2:]]
    avg = OrderedAveraging(train, levels=levels, max_parents=2)
    post = avg.arc_posteriors()
    assert list(post.index) == names and list(post.columns) == names
    assert post.index.name == "parent" and post.columns.name == "child"
    # forbidden arcs: within a level, upward, diagonal
    for u in names:
        for v in names:
            if not (u in levels[0] and v in levels[1]):
                assert post.loc[u, v] == 0.0
    assert ((post.to_numpy() >= 0) & (post.to_numpy() <= 1)).all()
    # counts: level-1 nodes choose up to 2 of 2 parents -> 4 sets; 3 such nodes
    assert avg.n_families == 2 * 1 + 3 * 4
    assert avg.n_structures == 4 ** 3
    assert count_parent_sets(36, 3) == 7807
    assert avg.order_levels == [names[:2], names[2:]]


def test_default_order_is_column_order_and_parent_sets_table():
    train, _ = _data(seed=6)
    avg = OrderedAveraging(train, max_parents=1)
    assert avg.order_levels == [[c] for c in train.columns]
    tab = avg.parent_set_posteriors(train.columns[2])
    assert len(tab) == 3 and tab["posterior"].sum() == pytest.approx(1.0)
    assert tab["posterior"].is_monotonic_decreasing
    st = avg.summary_table(1)
    assert (st["n_parents"] <= 1).all() and (st["mass"] <= 1 + 1e-12).all()


def test_procedure1_rules():
    sets = [(), (0,), (1,), (0, 2), (1, 3, 4)]
    w = np.array([0.0, 0.5, 0.2, 0.9, 1.0])
    # (1,3,4) is best but does not fit n=2, then (0,2) fits, then (0,) adds nothing, (1,) overflows
    assert procedure1(sets, w, 2) == [0, 2]
    assert procedure1(sets, w, 3) == [1, 3, 4]
    assert procedure1(sets, w, 4) == [0, 1, 3, 4]  # (0,2) overflows, (0,) still fits
    assert procedure1(sets, w, 5) == [0, 1, 2, 3, 4]
    assert procedure1(sets, w, 0) == []


def test_alarm_summary_close_to_exact():
    bn = bx.networks.load("alarm")
    d = bn.sample(1000, random_state=0, as_frame=False)
    test = bn.sample(300, random_state=1, as_frame=False)
    avg = OrderedAveraging(d, order=list(bn.nodes), max_parents=2)
    exact = avg.predict_proba(test, "KINKEDTUBE")
    approx = avg.summary_network(10).predict_proba(test, "KINKEDTUBE")
    assert np.abs(exact - approx).max() < 0.05
    assert avg.arc_posteriors().to_numpy().sum() > 10


# ------------------------------------------------------------------ bad input
def test_bad_orders():
    train, _ = _data(seed=7)
    names = list(train.columns)
    with pytest.raises(ValueError, match="not both"):
        OrderedAveraging(train, order=names, levels=[names])
    with pytest.raises(ValueError, match="'nope'"):
        OrderedAveraging(train, order=names[:-1] + ["nope"])
    with pytest.raises(ValueError, match="missing"):
        OrderedAveraging(train, order=names[:-1])
    with pytest.raises(ValueError, match="more than once"):
        OrderedAveraging(train, order=names + [names[0]])
    with pytest.raises(ValueError, match="level 1 is empty"):
        OrderedAveraging(train, levels=[names, []])
    with pytest.raises(TypeError, match="order"):
        OrderedAveraging(train, order="X0")
    with pytest.raises(TypeError, match="max_parents"):
        OrderedAveraging(train, max_parents=1.5)
    with pytest.raises(ValueError, match="max_parents"):
        OrderedAveraging(train, max_parents=-1)
    with pytest.raises(ValueError, match="prior"):
        OrderedAveraging(train, prior="AIC")
    with pytest.raises(ValueError, match="shape"):
        OrderedAveraging(train, structure_prior=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="probability zero"):
        OrderedAveraging(train, structure_prior=lambda v, ps: -np.inf)
    with pytest.raises(TypeError):
        OrderedAveraging([[1, 2]])


def test_memory_guard_before_allocating():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.integers(0, 2, size=(30, 40)), columns=[f"v{i}" for i in range(40)])
    with pytest.raises(MemoryBudgetError, match="smaller max_parents"):
        OrderedAveraging(df, max_parents=5, budget=10**6)
    avg = OrderedAveraging(df, max_parents=1)
    with pytest.raises(MemoryBudgetError, match="smaller k or n|smaller n"):
        avg.summary_network(None, lazy=False)
    lazy = avg.summary_network(None)              # too large to build: the big CPTs are lazy
    assert lazy.cpts["v39"].shape == (2**39, 2)
    with pytest.raises(MemoryBudgetError, match="materialising"):
        np.asarray(lazy.cpts["v39"])
    old = bx.data.set_table_budget(100)
    try:
        with pytest.raises(MemoryBudgetError):
            OrderedAveraging(df, max_parents=3)
    finally:
        bx.data.set_table_budget(old)


def test_bad_prediction_input():
    train, test = _data(seed=8)
    avg = OrderedAveraging(train, max_parents=1)
    with pytest.raises(ValueError, match="lacks columns"):
        avg.predict_log_joint(test.drop(columns=[train.columns[0]]))
    bad = test.copy()
    bad[train.columns[1]] = bad[train.columns[1]].astype(str)
    bad.loc[0, train.columns[1]] = "never"
    with pytest.raises(ValueError, match="never"):
        avg.predict_log_joint(bad)
    with pytest.raises(KeyError):
        avg.predict_proba(test, "nope")
    with pytest.raises(TypeError, match="n"):
        avg.summary_network(2.5)
    with pytest.raises(ValueError, match="n"):
        avg.summary_network(-1)
    with pytest.raises(TypeError):
        avg.predict_log_joint(np.zeros((2, 5)))


# ------------------------------------------------------------------ reproduction (reduced)
def test_dash_cooper_experiments_registered_and_reduced_trials_run():
    from bnexplore import experiments
    from bnexplore.experiments import dash_cooper as dc

    for t in (2, 3, 4, 5):
        assert f"dash_cooper_table{t}" in experiments.names()
    data, parents = dc.lazy_random_sample(12, 3, 200, np.random.default_rng(0))
    assert data.codes.shape == (200, 12) and max(len(p) for p in parents) <= 3
    rows = dc.table2_trial(n_nodes=8, max_parents=1, n_records=60, random_state=0)
    assert [r["n"] for r in rows] == list(dc.T2_N_VALUES)
    assert abs(rows[-1]["delta_pct"]) < 1e-9  # n = 15 >= N - 1: AMA is exact MA
    r = dc.table3_trial(part="N", n_nodes=8, max_parents=2, K="uniform", n_records=60,
                         random_state=1)
    assert 0 <= r["auc_ama"] <= 1 and np.isfinite(r["delta_pct"])
    assert dc.choose_k(5) == 4 and dc.choose_k(40) < 4


def test_dash_cooper_conventions_ties_and_class_node():
    from bnexplore.experiments import dash_cooper as dc
    from bnexplore.metrics import auc

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300).astype(bool)
    s = rng.integers(0, 4, 300) / 4.0             # few distinct scores: many ties
    half = dc.binary_auc(y, s, "half")
    assert half == pytest.approx(auc(y.astype(int), s))
    none, full = dc.binary_auc(y, s, "none"), dc.binary_auc(y, s, "full")
    assert none < half < full and half == pytest.approx((none + full) / 2)
    with pytest.raises(ValueError, match="ties"):
        dc.binary_auc(y, s, "some")
    # a root as class: the class node has no parents in the generating graph
    for seed in range(3):
        train, _, target, _ = dc._synthetic(10, 3, 50, seed, class_node="root")
        _, parents = dc.lazy_random_sample(10, 3, 5, np.random.default_rng(seed))
        assert not parents[train.names.index(target)]   # same graph: drawn first
    rows = dc.conventions_trial("2", 8, 1, "uniform", 60, "random", 0)
    assert {r["ties"] for r in rows} == set(dc.TIES) and "K" not in rows[0]
    same = [r for r in rows if r["ties"] == "half"]
    ref = dc.table2_trial(n_nodes=8, max_parents=1, n_records=60, random_state=0)
    assert [r["delta_pct"] for r in same] == pytest.approx([r["delta_pct"] for r in ref])
    rows3 = dc.conventions_trial("3", 8, 2, "uniform", 60, "root", 1)
    assert len(rows3) == 3 and all(0 <= r["auc_ama"] <= 1 for r in rows3)
