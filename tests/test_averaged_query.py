"""The model-averaged query against enumeration over every DAG of a small network.

Weights are exact K2 marginal likelihoods (computed here with gammaln, independently of
bnexplore.scores) and parameters their posterior means; the averaged query is
sum_G P(G|D) P(q,e|G) / sum_G P(G|D) P(e|G), read off each DAG's full joint."""
import itertools
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy.special import gammaln

import bnexplore as bx
from bnexplore.networks import BayesNet, ImpossibleEvidenceError

NAMES = ["A", "B", "C"]
STATES = {"A": ["a0", "a1"], "B": ["b0", "b1", "b2"], "C": ["c0", "c1"]}


@pytest.fixture(scope="module")
def data():
    truth = BayesNet({"A": [], "B": ["A"], "C": ["B"]}, STATES,
                     {"A": np.array([[0.3, 0.7]]),
                      "B": np.array([[0.8, 0.1, 0.1], [0.1, 0.3, 0.6]]),
                      "C": np.array([[0.9, 0.1], [0.5, 0.5], [0.15, 0.85]])})
    df = truth.sample(40, random_state=4)
    return df[NAMES]


def _all_dags():
    arcs = [(u, v) for u in NAMES for v in NAMES if u != v]
    out = []
    for mask in itertools.product([0, 1], repeat=len(arcs)):
        g = nx.DiGraph()
        g.add_nodes_from(NAMES)
        g.add_edges_from(a for a, m in zip(arcs, mask) if m)
        if nx.is_directed_acyclic_graph(g):
            out.append(g)
    return out


def _k2_model(g, df):
    """(log marginal likelihood under K2, the network with posterior-mean parameters)."""
    codes = {v: pd.Categorical(df[v], categories=STATES[v]).codes for v in NAMES}
    logml, parents, cpts = 0.0, {}, {}
    for v in NAMES:
        ps = sorted(g.predecessors(v))
        r = len(STATES[v])
        q = math.prod(len(STATES[p]) for p in ps)
        cfg = np.zeros(len(df), dtype=int)
        for p in ps:
            cfg = cfg * len(STATES[p]) + codes[p]
        n = np.zeros((q, r))
        np.add.at(n, (cfg, codes[v]), 1)
        logml += float((gammaln(r) - gammaln(n.sum(1) + r)).sum() + gammaln(n + 1).sum())
        parents[v] = ps
        cpts[v] = (n + 1) / (n.sum(1, keepdims=True) + r)
    return logml, BayesNet(parents, STATES, cpts)


def _joint(bn):
    j = np.ones([len(STATES[v]) for v in NAMES])
    for v in NAMES:
        fam = bn.parents(v) + [v]
        t = np.asarray(bn.cpts[v]).reshape([len(STATES[u]) for u in fam])
        t = np.transpose(t, sorted(range(len(fam)), key=lambda a: NAMES.index(fam[a])))
        j = j * t.reshape([len(STATES[u]) if u in fam else 1 for u in NAMES])
    return j


def _enumerate(models, logw, evidence):
    """(BMA marginals, mean of the conditionals) by brute force over the joints."""
    w = np.exp(np.asarray(logw) - max(logw))
    w /= w.sum()
    idx = tuple(STATES[v].index(evidence[v]) if v in evidence else slice(None) for v in NAMES)
    kept = [v for v in NAMES if v not in evidence]
    num = {v: 0.0 for v in kept}
    pe = 0.0
    naive = {v: 0.0 for v in kept}
    for wi, m in zip(w, models):
        sub = _joint(m)[idx]
        pe += wi * sub.sum()
        for v in kept:
            marg = sub.sum(axis=tuple(a for a, u in enumerate(kept) if u != v))
            num[v] = num[v] + wi * marg
            naive[v] = naive[v] + wi * marg / marg.sum()
    return {v: num[v] / pe for v in kept}, naive


EVIDENCE = [{}, {"C": "c1"}, {"A": "a0", "C": "c0"}, {"B": "b2"}]


@pytest.mark.parametrize("evidence", EVIDENCE)
def test_equals_enumeration_over_every_dag(data, evidence):
    dags = _all_dags()
    assert len(dags) == 25
    fitted = [_k2_model(g, data) for g in dags]
    logw = [lw for lw, _ in fitted]
    models = [m for _, m in fitted]
    want, naive = _enumerate(models, logw, evidence)
    got = bx.averaging.averaged_posteriors(models, np.exp(np.array(logw) - max(logw)), evidence)
    for v in want:
        np.testing.assert_allclose(got.mean[v], want[v], atol=1e-10, rtol=0)
        assert np.all(got.low[v] <= got.high[v] + 1e-15) and np.all(got.sd[v] >= 0)
    if evidence:  # the average is not the mean of the conditionals (most visibly when
        # two observations together judge the dependence between them)
        for v in want:
            np.testing.assert_allclose(got.mean_of_conditionals[v], naive[v], atol=1e-10)
        gap = max(np.abs(got.mean[v] - naive[v]).max() for v in want)
        assert gap > (1e-3 if len(evidence) > 1 else 1e-6)
        assert max(got.sd[v].max() for v in want) > 1e-3
    else:
        for v in want:
            np.testing.assert_allclose(naive[v], want[v], atol=1e-12)


@pytest.mark.parametrize("evidence", EVIDENCE[1:3])
def test_order_method_is_exact_over_the_order(data, evidence):
    order = ["A", "B", "C"]
    pos = {v: i for i, v in enumerate(order)}
    dags = [g for g in _all_dags() if all(pos[u] < pos[v] for u, v in g.edges)]
    assert len(dags) == 8
    fitted = [_k2_model(g, data) for g in dags]
    want, _ = _enumerate([m for _, m in fitted], [lw for lw, _ in fitted], evidence)
    am = bx.averaging.ask_averaged_model(data, max_parents=2, method="order", order=order, random_state=0,
                                         n_structures=50)
    assert "uniform" in am.graph_prior and am.order == order
    table = am.posteriors(evidence)
    for v in want:
        np.testing.assert_allclose(table.loc[table.node == v, "averaged"].to_numpy(), want[v], atol=1e-10)
    best = am.best.posteriors(evidence)
    for v in NAMES:
        np.testing.assert_allclose(table.loc[table.node == v, "best"].to_numpy(), best[v], atol=1e-14)
    assert table.loc[table.node.isin(list(evidence)), "observed"].all()
    assert not table.loc[~table.node.isin(list(evidence)), "observed"].any()
    assert sum(am.weights) == 50 and len(am.models) == len(am.weights)


def test_mcmc_method_approaches_the_order_modular_average(data):
    """Order MCMC's draws stand for P(G | D) under the order-modular prior, P(G) proportional
    to the number of orders G is consistent with (k = 2 admits every DAG of 3 nodes)."""
    dags = _all_dags()
    fitted = [_k2_model(g, data) for g in dags]
    n_ext = [sum(all(o.index(u) < o.index(v) for u, v in g.edges) for o in itertools.permutations(NAMES))
             for g in dags]
    logw = [lw + math.log(e) for (lw, _), e in zip(fitted, n_ext)]
    evidence = {"C": "c1"}
    want, _ = _enumerate([m for _, m in fitted], logw, evidence)
    am = bx.averaging.ask_averaged_model(data, max_parents=2, method="mcmc", random_state=1, n_iter=20_000,
                                         n_structures=2_000)
    assert "order-modular" in am.graph_prior and isinstance(am.converged, bool)
    table = am.posteriors(evidence)
    direct = bx.averaging.averaged_posteriors(am.models, am.weights, evidence)
    for v in want:
        got = table.loc[table.node == v, "averaged"].to_numpy()
        np.testing.assert_allclose(got, direct.mean[v], atol=1e-14)
        np.testing.assert_allclose(got, want[v], atol=0.03)


def test_bad_input(data):
    _, m1 = _k2_model(_all_dags()[0], data)
    other = BayesNet({"A": []}, {"A": ["a0", "a1"]}, {"A": np.array([[0.5, 0.5]])})
    with pytest.raises(ValueError, match="same variables"):
        bx.averaging.averaged_posteriors([m1, other], None)
    with pytest.raises(ValueError, match="weights"):
        bx.averaging.averaged_posteriors([m1], [-1.0])
    with pytest.raises(ValueError, match="2 entries"):
        bx.averaging.averaged_posteriors([m1], [0.5, 0.5])
    with pytest.raises(TypeError, match="BayesNet"):
        bx.averaging.averaged_posteriors(["net"], None)
    with pytest.raises(ValueError, match="at least one"):
        bx.averaging.averaged_posteriors([], None)
    with pytest.raises(ValueError, match="'D'"):
        bx.averaging.averaged_posteriors([m1], None, {"D": "x"})
    with pytest.raises(ValueError, match="method"):
        bx.averaging.ask_averaged_model(data, method="exact")
    with pytest.raises(ValueError, match="prior"):
        bx.averaging.ask_averaged_model(data, prior="AIC")
    with pytest.raises(ValueError, match="prior"):
        bx.averaging.greedy_order(data, prior="AIC")
    bdeu = bx.averaging.ask_averaged_model(data, prior="BDeu", ess=2.0, random_state=0, n_structures=5)
    assert abs(bdeu.posteriors({"A": "a1"}).groupby("node")["averaged"].sum() - 1).max() < 1e-12
    zero = BayesNet({"A": []}, {"A": ["a0", "a1"]}, {"A": np.array([[1.0, 0.0]])})
    with pytest.raises(ImpossibleEvidenceError, match="every model"):
        bx.averaging.averaged_posteriors([zero, zero], [1, 2], {"A": "a1"})
    # impossible under one model only: that model gets weight zero
    half = BayesNet({"A": []}, {"A": ["a0", "a1"]}, {"A": np.array([[0.5, 0.5]])})
    got = bx.averaging.averaged_posteriors([zero, half], [1, 1], {"A": "a1"})
    assert got.structure_weights.tolist() == [0.0, 1.0]


def test_summary_size_auto_exact_on_small_and_ama_when_asked(data):
    am = bx.averaging.ask_averaged_model(data, max_parents=2, random_state=0, n_structures=5)
    assert am.extra["exact"] and am.extra["n"] is None and "AMA" not in am.graph_prior
    ama = bx.averaging.ask_averaged_model(data, max_parents=2, random_state=0, n_structures=5, n=1)
    assert not ama.extra["exact"] and "AMA" in ama.graph_prior and "M* (AMA, n=1)" == ama.averaged.name
    assert max(len(ama.averaged.parents(v)) for v in NAMES) <= 1
    with pytest.raises(ValueError, match="n must be"):
        bx.averaging.ask_averaged_model(data, n="all")


def test_greedy_order_is_a_topological_order_of_gtt(data):
    from bnexplore.search import greedy_thick_thin

    order = bx.averaging.greedy_order(data, max_parents=2)
    dag = greedy_thick_thin(data, max_parents=2).dag
    assert sorted(order) == sorted(NAMES)
    assert all(order.index(u) < order.index(v) for u, v in dag.edges)
    am = bx.averaging.ask_averaged_model(data, max_parents=2, random_state=0, n_structures=5)
    assert am.order == order
