"""Exact averaging over all DAGs (uniform / structure-modular prior) against brute force over
every DAG, and against a high-precision sink recursion with one arc removed at a time."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

import bnexplore as bx
from bnexplore._dag_dp import count_dags
from bnexplore.data import MemoryBudgetError
from bnexplore.scores import LocalScore


def _family_weights(df, k, prior, ess, structure_prior):
    ls = LocalScore(df, prior=prior, ess=ess, cache=False)
    names = list(df.columns)
    p = len(names)
    out = []
    for v in range(p):
        others = [u for u in range(p) if u != v]
        sets = [c for s in range(min(k, p - 1) + 1) for c in itertools.combinations(others, s)]
        w = np.array([ls.score(v, list(c)) for c in sets])
        lp = np.zeros(len(sets)) if structure_prior is None else np.array(
            [structure_prior(names[v], tuple(names[u] for u in c)) for c in sets])
        out.append((sets, w + lp, lp))
    return out


def _brute_force(df, k, prior, ess=1.0, structure_prior=None):
    """(arc posteriors, log evidence, number of DAGs): every assignment of parent sets,
    kept when acyclic (peeling nodes whose parents are all peeled), each DAG weighted by
    its family scores times the structure prior, normalised by that prior's total."""
    fams = _family_weights(df, k, prior, ess, structure_prior)
    p = len(fams)
    masks = [np.array([sum(1 << u for u in c) for c in sets], dtype=np.int64) for sets, _, _ in fams]
    idx = [g.ravel() for g in np.meshgrid(*[np.arange(len(m)) for m in masks], indexing="ij")]
    pa = np.stack([masks[v][idx[v]] for v in range(p)], axis=1)
    done = np.zeros(pa.shape[0], dtype=np.int64)
    for _ in range(p):
        free = (pa & ~done[:, None]) == 0
        done = done | (free * (1 << np.arange(p))).sum(axis=1)
    acyclic = done == (1 << p) - 1
    pa = pa[acyclic]
    logw = sum(fams[v][1][idx[v][acyclic]] for v in range(p))
    logprior = sum(fams[v][2][idx[v][acyclic]] for v in range(p))
    z = logsumexp(logw)
    wts = np.exp(logw - z)
    post = np.zeros((p, p))
    for u in range(p):
        for v in range(p):
            if u != v:
                post[u, v] = wts[(pa[:, v] >> u) & 1 == 1].sum()
    return post, z - logsumexp(logprior), int(acyclic.sum())


def _data(n_rows, p, seed):
    """Discrete data with dependencies (a noisy chain and a collider), 2-3 states."""
    rng = np.random.default_rng(seed)
    cols = {}
    prev = rng.integers(0, 2, n_rows)
    for i in range(p):
        r = 2 + (i % 2)
        x = np.where(rng.random(n_rows) < 0.75, prev % r, rng.integers(0, r, n_rows))
        if i >= 3:
            x = np.where(rng.random(n_rows) < 0.5, (cols["X0"] + x) % r, x)
        cols[f"X{i}"] = x
        prev = x
    return pd.DataFrame({c: pd.Categorical(v) for c, v in cols.items()})


def test_count_dags_known_values():
    assert [count_dags(n, n) for n in range(7)] == [1, 1, 3, 25, 543, 29281, 3781503]  # OEIS A003024
    # in-degree <= 1: DAGs are forests of rooted in-trees: sum over forests = (n + 1)^(n - 1)
    assert all(count_dags(n, 1) == (n + 1) ** (n - 1) for n in range(1, 8))


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
@pytest.mark.parametrize("n, k", [(3, 1), (3, 2), (4, 1), (4, 2), (4, 3), (5, 1), (5, 2), (5, 3), (5, 4)])
def test_brute_force(n, k, prior):
    df = _data(60, n, seed=n * 10 + k)
    post, log_ev, n_dags = _brute_force(df, k, prior, ess=2.0)
    assert n_dags == count_dags(n, k)
    ad = bx.averaging.AllDAGs(df, max_parents=k, prior=prior, ess=2.0)
    assert abs(ad.log_evidence - log_ev) < 1e-9
    assert abs(ad.log_dag_sum - ad.log_dag_sum_sources) < 1e-9
    np.testing.assert_allclose(ad.arc_posteriors().to_numpy(), post, atol=1e-9, rtol=0)
    np.testing.assert_allclose(ad.edge_posteriors().to_numpy(), post + post.T, atol=1e-9, rtol=0)
    assert ad.graph_prior == f"uniform over DAGs with at most {k} parents per node"


def test_brute_force_structure_prior():
    df = _data(80, 4, seed=3)
    rng = np.random.default_rng(0)
    W = rng.normal(0, 1.5, (4, 4))
    names = list(df.columns)

    def rho(child, parents):
        return float(sum(W[names.index(u), names.index(child)] for u in parents))

    post, log_ev, _ = _brute_force(df, 2, "K2", structure_prior=rho)
    for given in (rho, W, pd.DataFrame(W, index=names, columns=names)):
        ad = bx.averaging.AllDAGs(df, max_parents=2, structure_prior=given)
        assert ad.graph_prior.startswith("structure-modular")
        assert abs(ad.log_evidence - log_ev) < 1e-9
        np.testing.assert_allclose(ad.arc_posteriors().to_numpy(), post, atol=1e-9, rtol=0)


def _mp_sink_sum(fams, p, drop=None):
    """Sum over DAGs of prod beta in mpmath (50 digits) by the sink recursion written out
    plainly; ``drop=(u, v)`` leaves out v's parent sets holding u (the DAGs without u -> v)."""
    import mpmath

    alpha = {}
    for v in range(p):
        sets, w, _ = fams[v]
        for U in range(1 << p):
            if U >> v & 1:
                continue
            alpha[v, U] = mpmath.fsum(mpmath.exp(mpmath.mpf(float(x))) for c, x in zip(sets, w)
                                      if all(U >> u & 1 for u in c)
                                      and not (drop is not None and drop[1] == v and drop[0] in c))
    Z = [mpmath.mpf(0)] * (1 << p)
    Z[0] = mpmath.mpf(1)
    for S in range(1, 1 << p):
        total = mpmath.mpf(0)
        T = S
        while T:
            U = S ^ T
            term = Z[U]
            for w in range(p):
                if T >> w & 1:
                    term *= alpha[w, U]
            total += term if bin(T).count("1") % 2 else -term
            T = (T - 1) & S
        Z[S] = total
    return Z[-1]


@pytest.mark.parametrize("n, k, prior", [(6, 2, "BDeu"), (7, 2, "K2")])
def test_high_precision(n, k, prior):
    """Against 50-digit arithmetic, arcs by a separate formula: 1 - Z(no u -> v) / Z."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50
    df = _data(200, n, seed=n)
    fams = _family_weights(df, k, prior, 1.0, None)
    z = _mp_sink_sum(fams, n)
    ad = bx.averaging.AllDAGs(df, max_parents=k, prior=prior)
    assert abs(ad.log_dag_sum - float(mpmath.log(z))) < 1e-9
    assert abs(ad.log_evidence - float(mpmath.log(z) - mpmath.log(count_dags(n, k)))) < 1e-9
    got = ad.arc_posteriors().to_numpy()
    for u, v in [(0, 1), (1, 0), (0, n - 1), (n - 1, 0), (2, 3), (3, 2)]:
        exact = float(1 - _mp_sink_sum(fams, n, drop=(u, v)) / z)
        assert abs(got[u, v] - exact) < 1e-9, (u, v, got[u, v], exact)


def test_single_node_and_k0():
    df = _data(50, 3, seed=1)
    ad = bx.averaging.AllDAGs(df[["X0"]], max_parents=1)
    assert ad.arc_posteriors().shape == (1, 1)
    ad0 = bx.averaging.AllDAGs(df, max_parents=0)
    assert np.allclose(ad0.arc_posteriors().to_numpy(), 0.0)
    ls = LocalScore(df, cache=False)
    assert abs(ad0.log_evidence - sum(ls.score(v, []) for v in range(3))) < 1e-9


def test_differs_from_order_modular_and_states_priors():
    df = _data(100, 5, seed=7)
    ad = bx.averaging.AllDAGs(df, max_parents=2)
    ao = bx.averaging.AllOrders(df, max_parents=2)
    assert ao.graph_prior == "order-modular"
    assert np.abs(ad.arc_posteriors().to_numpy() - ao.arc_posteriors().to_numpy()).max() > 1e-3


def test_bad_input_and_budget():
    df = _data(50, 4, seed=1)
    with pytest.raises(ValueError, match="max_parents"):
        bx.averaging.AllDAGs(df, max_parents=-1)
    with pytest.raises(ValueError, match="structure_prior"):
        bx.averaging.AllDAGs(df, structure_prior="order-modular")
    with pytest.raises(ValueError, match="prior"):
        bx.averaging.AllDAGs(df, prior="BIC")
    with pytest.raises((ValueError, TypeError), match="prior"):   # a structure prior given as prior=
        bx.averaging.AllDAGs(df, prior=np.zeros((4, 4)))
    with pytest.raises(TypeError):
        bx.averaging.AllDAGs(df, score="K2")                         # score= is a LocalScore elsewhere
    with pytest.raises(ValueError, match="matrix"):
        bx.averaging.AllDAGs(df, structure_prior=np.zeros((3, 3)))
    assert bx.averaging.AllDAGs(df, max_parents=1, structure_prior="uniform").graph_prior.startswith("uniform")
    with pytest.raises(MemoryBudgetError, match="budget"):
        bx.averaging.AllDAGs(df, budget=100)


def test_children_in_several_passes_give_the_same_arcs():
    """A budget that fits one child's tables per pass changes nothing."""
    from bnexplore.averaging import all_dags_cells
    df = _data(100, 7, seed=2)
    one = bx.averaging.AllDAGs(df, max_parents=3)
    few = bx.averaging.AllDAGs(df, max_parents=3, budget=all_dags_cells(7, per_pass=1))
    assert few._per_pass == 1 and one._per_pass == 7
    np.testing.assert_allclose(few.arc_posteriors().to_numpy(), one.arc_posteriors().to_numpy(), atol=1e-14)
