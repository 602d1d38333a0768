"""Partition MCMC: the partition scores sum to the exact evidence over all DAGs, and the
chains' arc posteriors agree with AllDAGs (uniform prior) within their standard errors."""
from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

import bnexplore as bx
from bnexplore import _order_dp, _partition_dp
from bnexplore._all_orders import _families_all
from bnexplore._order_scores import _pascal
from bnexplore.data.core import as_discrete


def _data(n_rows, p, seed):
    rng = np.random.default_rng(seed)
    cols, prev = {}, rng.integers(0, 2, n_rows)
    for i in range(p):
        x = np.where(rng.random(n_rows) < 0.7, prev, rng.integers(0, 2, n_rows))
        if i >= 3:
            x = np.where(rng.random(n_rows) < 0.4, cols["X1"], x)
        cols[f"X{i}"] = x
        prev = x
    return pd.DataFrame({c: pd.Categorical(v) for c, v in cols.items()})


def _ordered_partitions(nodes):
    """Every ordered partition of ``nodes`` (lists of parts)."""
    if not nodes:
        yield []
        return
    first, rest = nodes[0], nodes[1:]
    for sub in _ordered_partitions(rest):
        for i in range(len(sub)):  # join a part
            yield sub[:i] + [sub[i] + [first]] + sub[i + 1:]
        for i in range(len(sub) + 1):  # or open one
            yield sub[:i] + [[first]] + sub[i:]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_partition_scores_sum_to_the_dag_evidence(k):
    """sum over the ordered partitions of prod_v s_v = sum over the DAGs (a bijection)."""
    p = 4
    df = _data(80, p, seed=k)
    d = as_discrete(df)
    fam, _ = _families_all(d, k, "BDeu", 1.0, None, 10**8, "test")
    fam, look = _order_dp.colex_families(fam, p, k, _pascal(p, min(k, p - 1) + 1))
    parts = list(_ordered_partitions(list(range(p))))
    assert len(parts) == 75  # ordered Bell (Fubini) number of 4
    n = len(parts)
    part = np.zeros((n, p), dtype=np.int64)
    for c, pp in enumerate(parts):
        for i, block in enumerate(pp):
            part[c, block] = i
    state = _partition_dp.PartitionState(part, np.array([len(pp) for pp in parts]), np.zeros((n, p)),
                                         np.zeros((n, p), np.uint64), np.zeros((n, p), np.uint64),
                                         np.ones(n, np.uint64))
    _partition_dp.initial_partition_scores(fam, look, state)
    total = logsumexp(state.node_score.sum(axis=1))
    ad = bx.averaging.AllDAGs(df, max_parents=k, prior="BDeu")
    assert total == pytest.approx(ad.log_dag_sum, abs=1e-9)


def test_agrees_with_all_dags_within_standard_errors():
    df = _data(150, 8, seed=4)
    exact = bx.averaging.AllDAGs(df, max_parents=2).arc_posteriors().to_numpy()
    res = bx.averaging.partition_mcmc(df, max_parents=2, n_iter=60_000, n_chains=4, random_state=0)
    got, se = res.arc_posteriors().to_numpy(), res.stderr.to_numpy()
    vary = se > 0
    assert np.all(np.abs(got - exact)[vary] <= 4 * se[vary] + 1e-3)
    assert np.all(np.abs(got - exact)[~vary] < 1e-3)
    assert res.graph_prior == "uniform over DAGs with at most 2 parents per node"
    assert res.converged() and res.convergence.startswith("converged")
    # the order-modular prior of order MCMC gives other posteriors on the same data
    om = bx.averaging.AllOrders(df, max_parents=2).arc_posteriors().to_numpy()
    assert np.abs(om - exact).max() > 0.02


def _within_standard_errors(df, k, prior, n_iter, random_state):
    """Partition MCMC's arc posteriors against AllDAGs (uniform prior over DAGs): every arc
    within 4 standard errors (1e-3 where no draw varies: arcs whose mass no chain visits)."""
    exact = bx.averaging.AllDAGs(df, max_parents=k, prior=prior).arc_posteriors().to_numpy()
    res = bx.averaging.partition_mcmc(df, max_parents=k, prior=prior, n_iter=n_iter, n_chains=4,
                                      random_state=random_state)
    got, se = res.arc_posteriors().to_numpy(), res.stderr.to_numpy()
    vary = se > 0
    bad = np.abs(got - exact) > np.where(vary, 4 * se, 0.0) + 1e-3 * ~vary
    assert not bad.any(), (np.abs(got - exact)[bad], se[bad])
    assert res.converged() and res.rhat_max <= 1.05
    assert exact.max() > 0.5 and ((exact > 0.05) & (exact < 0.95)).sum() >= 5   # not a degenerate case
    return res


def test_agrees_with_all_dags_nine_nodes():
    """Issue 35's validation beyond N = 8, CI size: N = 9, k = 2 (the slow tests go to 12)."""
    _within_standard_errors(_data(150, 9, seed=4), 2, "K2", 150_000, 0)


@pytest.mark.slow
@pytest.mark.parametrize("p,k,prior,seed,n_iter,random_state", [
    (9, 3, "BDeu", 6, 150_000, 0),
    (10, 2, "K2", 4, 250_000, 0),
    (10, 3, "BDeu", 5, 250_000, 1),
    (12, 2, "K2", 4, 400_000, 0),
])
def test_agrees_with_all_dags_nine_to_twelve_nodes(p, k, prior, seed, n_iter, random_state):
    _within_standard_errors(_data(150, p, seed=seed), k, prior, n_iter, random_state)


def test_dag_samples_resume_and_interface():
    df = _data(100, 5, seed=2)
    res = bx.averaging.partition_mcmc(df, max_parents=2, n_iter=4_000, n_chains=2, random_state=3, sample_dags=True)
    dags = res.dags()
    assert len(dags) == 2 * (res.n_draws - res._first)
    for g in dags[:50]:
        assert nx.is_directed_acyclic_graph(g) and max(dict(g.in_degree()).values()) <= 2
    freq = np.mean([nx.to_numpy_array(g, nodelist=res.names) for g in dags], axis=0)
    assert np.abs(freq - res.arc_posteriors().to_numpy()).max() < 0.15
    n_before = res.traces.shape[1]
    res.resume(2_000)
    assert res.n_iter == 6_000 and res.traces.shape[1] > n_before
    assert sum(len(b) for b in res.partitions[0]) == 5
    with pytest.raises(AttributeError, match="partitions"):
        res.orders
    assert res.summary().columns.tolist() == ["parent", "child", "posterior", "stderr", "rhat", "ess"]
    again = bx.averaging.partition_mcmc(df, max_parents=2, n_iter=4_000, n_chains=2, random_state=3, sample_dags=True)
    np.testing.assert_array_equal(again.traces, bx.averaging.partition_mcmc(
        df, max_parents=2, n_iter=4_000, n_chains=2, random_state=3, sample_dags=True).traces)


def test_not_converged_is_said():
    df = _data(300, 8, seed=5)
    res = bx.averaging.partition_mcmc(df, max_parents=2, n_iter=40, n_chains=4, random_state=0, thin=1)
    assert not res.converged() and res.convergence.startswith("NOT converged")


def test_bad_input():
    df = _data(50, 4, seed=1)
    with pytest.raises(ValueError, match="max_parents"):
        bx.averaging.partition_mcmc(df, max_parents=-1)
    with pytest.raises(ValueError, match="n_iter"):
        bx.averaging.partition_mcmc(df, n_iter=0)
    with pytest.raises(ValueError, match="random_state"):
        bx.averaging.partition_mcmc(df, random_state=-2)
    with pytest.raises(ValueError, match="p_swap"):
        bx.averaging.partition_mcmc(df, p_swap=1.5)
    with pytest.raises(ValueError, match="structure_prior"):
        bx.averaging.partition_mcmc(df, structure_prior="order-modular")
    with pytest.raises(ValueError, match="prior"):
        bx.averaging.partition_mcmc(df, prior="BIC")
    with pytest.raises(TypeError):
        bx.averaging.partition_mcmc(df, score="K2")


def test_structure_prior_agrees_with_all_dags():
    df = _data(120, 6, seed=6)
    W = np.random.default_rng(1).normal(0, 1.0, (6, 6))
    exact = bx.averaging.AllDAGs(df, max_parents=2, structure_prior=W).arc_posteriors().to_numpy()
    res = bx.averaging.partition_mcmc(df, max_parents=2, structure_prior=W, n_iter=30_000, n_chains=4, random_state=2)
    assert res.graph_prior.startswith("structure-modular")
    got, se = res.arc_posteriors().to_numpy(), res.stderr.to_numpy()
    assert np.all(np.abs(got - exact) <= 4 * se + 2e-3)


@pytest.mark.parametrize("as_frame", [True, False])
def test_missing_cells_refused_as_order_mcmc_does(as_frame):
    """Both chain samplers (and the exact engines they are checked against) score every
    family on every row: a missing cell is refused with one message, before any work,
    naming what to do; the same data without the incomplete rows runs."""
    df = _data(60, 4, seed=7)
    df = df.astype(object)
    df.iloc[5, 1] = np.nan
    df.iloc[9, 3] = None
    data = df if as_frame else bx.data.DiscreteData.from_frame(df, missing="keep")
    fix = "df.dropna()" if as_frame else "data.complete_cases()"
    messages = {}
    for who, run in [("order_mcmc", lambda: bx.averaging.order_mcmc(data, n_iter=20, n_chains=2)),
                     ("partition_mcmc", lambda: bx.averaging.partition_mcmc(data, n_iter=20, n_chains=2)),
                     ("AllOrders", lambda: bx.averaging.AllOrders(data)),
                     ("AllDAGs", lambda: bx.averaging.AllDAGs(data))]:
        with pytest.raises(ValueError, match="needs complete data") as err:
            run()
        msg = str(err.value)
        assert msg.startswith(who) and fix in msg and "missing=" not in msg, msg
        messages[who] = msg[len(who):]
    assert len(set(messages.values())) == 1, messages
    kept = df.dropna()
    a = bx.averaging.partition_mcmc(kept, n_iter=200, n_chains=2, random_state=0)
    b = bx.averaging.partition_mcmc(bx.data.DiscreteData.from_frame(kept), n_iter=200, n_chains=2, random_state=0)
    np.testing.assert_array_equal(a.traces, b.traces)
