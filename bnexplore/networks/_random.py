"""Random Bayesian networks G(N, K) (Dash & Cooper, Procedure 2) and DAG counting.

Counting: ``b(n, s)`` labelled DAGs on ``n`` nodes with in-degree <= K and exactly ``s``
sinks satisfy the sink-layer recursion of Kuipers & Moffa (2015) restricted to parent
sets of size <= K; sampling walks the same recursion backwards, so a DAG is drawn
exactly uniformly.

References
----------
D. Dash and G. F. Cooper, "Model averaging with discrete Bayesian network classifiers",
AISTATS 2003, Section 4.1 and Procedure 2.

J. Kuipers and G. Moffa, "Uniform random generation of large acyclic digraphs",
Statistics and Computing 25 (2015).
"""
from __future__ import annotations

import math
import random as _pyrandom
from functools import lru_cache
from typing import Sequence

import numpy as np
import pandas as pd

from .._deprecation import renamed
from .._validation import check_int, check_number, check_positive_int, check_random_state
from ..data.core import check_table_size
from ._bayesnet import BayesNet


def _n_parent_sets(m: int, k: int) -> int:
    """Number of parent sets of size <= k drawn from m candidates."""
    return sum(math.comb(m, j) for j in range(min(k, m) + 1))


@lru_cache(maxsize=16)
def _dag_counts(n_max: int, k: int) -> tuple:
    """b[n][s]: labelled DAGs on n nodes with in-degree <= k and exactly s sinks.

    With m = n - s non-sinks, each of the s sinks picks a parent set (size <= k)
    among the m others, and together they must cover the sinks of the DAG on the
    m non-sinks (inclusion-exclusion over uncovered ones):
    ``b(n, s) = C(n, s) * sum_t b(m, t) * sum_i (-1)^i C(t, i) f(m - i)^s``.
    """
    f = [_n_parent_sets(m, k) for m in range(n_max + 1)]
    b = [[0] * (n_max + 1) for _ in range(n_max + 1)]
    # h[m][i] = sum_t C(t, i) b(m, t)
    h = [[0] * (n_max + 1) for _ in range(n_max + 1)]
    b[0][0] = 1
    h[0][0] = 1
    for n in range(1, n_max + 1):
        for s in range(1, n + 1):
            m = n - s
            if m == 0:
                b[n][s] = 1
                continue
            acc = 0
            for i in range(0, m + 1):
                if h[m][i]:
                    term = h[m][i] * f[m - i] ** s
                    acc += -term if i % 2 else term
            b[n][s] = math.comb(n, s) * acc
        for i in range(n + 1):
            h[n][i] = sum(math.comb(t, i) * b[n][t] for t in range(max(i, 1), n + 1))
    # h[m][0] counts b(m, t) for t >= 1 only; m = 0 keeps the empty graph.
    return tuple(tuple(row) for row in b), tuple(f)


@renamed(max_indegree="max_parents")
def count_dags(n_nodes: int, max_parents: int | None = None) -> int:
    """Number of labelled DAGs on ``n_nodes`` nodes with in-degree <= ``max_parents``.

    Examples
    --------
    >>> from bnexplore.networks import count_dags
    >>> [count_dags(n) for n in range(1, 6)]
    [1, 3, 25, 543, 29281]
    """
    n = check_positive_int(n_nodes, "n_nodes")
    k = n - 1 if max_parents is None else int(max_parents)
    if k < 0:
        raise ValueError(f"max_parents must be >= 0, got {max_parents}")
    b, _ = _dag_counts(n, min(k, n - 1))
    return sum(b[n])


def _cover_count(m: int, u: int, t: int, f: tuple) -> int:
    """Ways for t nodes to pick parent sets among m nodes covering a fixed u-subset."""
    return sum((-1) ** i * math.comb(u, i) * f[m - i] ** t for i in range(u + 1))


def _draw_weighted(pyrng: _pyrandom.Random, weights: Sequence[int]) -> int:
    total = sum(weights)
    x = pyrng.randrange(total)
    for i, w in enumerate(weights):
        if x < w:
            return i
        x -= w
    raise AssertionError("unreachable")


def _uniform_dag(n: int, k: int, rng: np.random.Generator) -> list[list[int]]:
    """Parent lists of a DAG drawn uniformly from all labelled DAGs with in-degree <= k."""
    k = min(k, n - 1)
    b, f = _dag_counts(n, k)
    pyrng = _pyrandom.Random(int(rng.integers(2**63)))
    parents: list[list[int]] = [[] for _ in range(n)]
    remaining = list(range(n))
    pyrng.shuffle(remaining)
    s = _draw_weighted(pyrng, b[n])  # number of sinks of the whole graph
    sinks, rest = remaining[:s], remaining[s:]
    while rest:
        m = len(rest)
        # number t of sinks among the rest, weighted by DAGs on rest x coverings
        weights = [0] + [b[m][t] * _cover_count(m, t, s, f) for t in range(1, m + 1)]
        t = _draw_weighted(pyrng, weights)
        pyrng.shuffle(rest)
        sub_sinks = rest[:t]
        uncovered = set(sub_sinks)
        others_pool = rest
        for idx, v in enumerate(sinks):
            left = len(sinks) - idx - 1
            u = len(uncovered)
            unc_list = [w for w in others_pool if w in uncovered]
            cov_list = [w for w in others_pool if w not in uncovered]
            options, wts = [], []
            for j in range(min(k, m) + 1):
                for c in range(max(0, j - (m - u)), min(j, u) + 1):
                    w = math.comb(u, c) * math.comb(m - u, j - c) * _cover_count(m, u - c, left, f)
                    if w:
                        options.append((j, c))
                        wts.append(w)
            j, c = options[_draw_weighted(pyrng, wts)]
            chosen = pyrng.sample(unc_list, c) + pyrng.sample(cov_list, j - c)
            parents[v] = sorted(chosen)
            uncovered.difference_update(chosen)
        assert not uncovered
        sinks, rest, s = sub_sinks, rest[t:], t
    return parents


def _order_dag(n: int, k: int, rng: np.random.Generator) -> list[list[int]]:
    """Random order; each node takes Uniform{0..min(k, #predecessors)} parents among them."""
    order = rng.permutation(n)
    parents: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        n_par = int(rng.integers(0, min(k, i) + 1))
        if n_par:
            chosen = rng.choice(i, size=n_par, replace=False)
            parents[order[i]] = sorted(int(order[c]) for c in chosen)
    return parents


def _arities(arity, n: int, rng: np.random.Generator) -> list[int]:
    if isinstance(arity, (bool, np.bool_)):
        raise TypeError(f"arity must be an int >= 2, a (min, max) tuple or a list of {n} ints, got {arity!r}")
    if isinstance(arity, (int, np.integer)):
        if arity < 2:
            raise ValueError(f"arity must be >= 2, got {arity}")
        return [int(arity)] * n
    if isinstance(arity, tuple) and len(arity) == 2:
        lo, hi = (int(a) for a in arity)
        if not 2 <= lo <= hi:
            raise ValueError(f"arity range (min, max) must have 2 <= min <= max, got {arity}")
        return [int(a) for a in rng.integers(lo, hi + 1, size=n)]
    if isinstance(arity, (list, np.ndarray, pd.Series)):
        ar = [int(a) for a in arity]
        if len(ar) != n:
            raise ValueError(f"arity list has {len(ar)} entries for {n} nodes")
        if min(ar) < 2:
            raise ValueError(f"every arity must be >= 2, got {ar}")
        return ar
    raise TypeError(f"arity must be an int >= 2, a (min, max) tuple or a list of {n} ints, "
                    f"got {type(arity).__name__}")


@renamed(max_indegree="max_parents", seed="random_state")
def random_network(n_nodes: int, max_parents: int, arity=2, random_state=None, method: str = "uniform",
                   concentration: float = 1.0, prefix: str = "X") -> BayesNet:
    """Random Bayesian network G(N, K) with in-degree <= K and Dirichlet CPTs.

    Follows Dash & Cooper (2003, Section 4.1): graphs are drawn "from a uniform
    distribution over DAGs with fixed K" -- ``method="uniform"`` samples exactly
    uniformly from all labelled DAGs on ``n_nodes`` nodes with in-degree <=
    ``max_parents`` (sink-layer counting recursion, exact integers). ``method="order"``
    is the cheaper classical generator: a random node order, then for each node a
    number of parents uniform in ``0..min(K, #predecessors)`` chosen uniformly among
    its predecessors. Every CPT row is drawn from a symmetric Dirichlet
    (``concentration=1``: uniform on the simplex). Unlike the paper, CPTs are built
    eagerly, so very dense graphs hit the table budget
    (:func:`bnexplore.data.set_table_budget`).

    Parameters
    ----------
    n_nodes : int
        Number of nodes N (> 0); they are named ``X0, X1, ...``.
    max_parents : int
        Maximum number of parents K (>= 0).
    arity : int, (min, max) tuple or list of ints
        Number of states: the same for all nodes, uniform in ``[min, max]`` per
        node (e.g. ``(2, 10)`` for Cerquides & Lopez de Mantaras' "maximum number of
        values 10"), or one per node.
    random_state : None, int or numpy.random.Generator
    method : {"uniform", "order"}
    concentration : float
        Dirichlet parameter of every CPT entry (> 0).
    prefix : str
        Node-name prefix.

    Returns
    -------
    BayesNet
        States are labelled ``"s0", "s1", ...``.

    Examples
    --------
    >>> import bnexplore as bx
    >>> bn = bx.networks.random_network(10, max_parents=2, random_state=0)
    >>> max(d for _, d in bn.dag.in_degree()) <= 2, len(bn)
    (True, 10)
    """
    n = check_positive_int(n_nodes, "n_nodes")
    max_parents = check_int(max_parents, "max_parents", low=0)
    if method not in ("uniform", "order"):
        raise ValueError(f"method must be 'uniform' or 'order', got {method!r}")
    concentration = check_number(concentration, "concentration", low=0, closed="neither")
    rng = check_random_state(random_state)
    k = int(min(max_parents, n - 1))
    ar = _arities(arity, n, rng)
    par = _uniform_dag(n, k, rng) if method == "uniform" else _order_dag(n, k, rng)
    nm = [f"{prefix}{i}" for i in range(n)]
    # budget check for every table before allocating any
    for i in range(n):
        check_table_size([ar[p] for p in par[i]] + [ar[i]], [nm[p] for p in par[i]] + [nm[i]],
                         what=f"CPT of {nm[i]!r}")
    parents = {nm[i]: [nm[p] for p in par[i]] for i in range(n)}
    states = {nm[i]: [f"s{j}" for j in range(ar[i])] for i in range(n)}
    cpts = {}
    for i in range(n):
        q = int(np.prod([ar[p] for p in par[i]], dtype=np.int64))
        cpts[nm[i]] = rng.dirichlet(np.full(ar[i], float(concentration)), size=q)
    return BayesNet(parents, states, cpts, name=f"random G({n}, {int(max_parents)})")
