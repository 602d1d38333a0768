"""Averaging over every DAG under a structure-modular prior: the front of :mod:`bnexplore._dag_dp`.

:class:`AllDAGs` scores every family once (the tables of :class:`AllOrders`), builds the
local sums ``alpha_v`` with the subset-sum kernel of :mod:`bnexplore._order_dp`, and runs
the sink, source and arc recursions of :mod:`bnexplore._dag_dp`.  The prior over DAGs is
``P(G) ∝ prod_v rho_v(G_v)`` restricted to at most ``max_parents`` parents: uniform over
those DAGs when ``structure_prior`` is None, so each DAG weighs the same whatever its number of
linear extensions (the order-modular prior of :class:`AllOrders` weighs it by that
number).

Glossary
--------
graph_prior
    The sentence every result carries naming its prior over structures.
prior normaliser
    ``sum_G prod_v rho_v(G_v)``: the number of DAGs with at most ``k`` parents under the
    uniform prior (exact integer, :func:`bnexplore._dag_dp.count_dags`), else the sink
    recursion run on the prior's weights alone.
"""
from __future__ import annotations

import math
from typing import Callable

import numba
import numpy as np
import pandas as pd

from . import _dag_dp, _order_dp
from ._all_orders import _arc_frame, _complete_data, _families_all
from ._order_posterior import family_log_prior
from ._parallel import PARALLEL_LOCK
from ._validation import check_int
from .data.core import DiscreteData, MemoryBudgetError, _check_budget, get_table_budget
from .scores import _check_prior

__all__ = ["AllDAGs", "all_dags_cells"]


def all_dags_cells(n_nodes: int, per_pass: int = 1) -> int:
    """Cells (8-byte words) the exact DP over all DAGs of ``n_nodes`` variables keeps at
    its peak, in units of ``2^n``: every node's ``alpha`` table (``n``: ``n 2^(n-1)``
    extended floats of two words), then the largest of the sink recursion (its sums,
    condition numbers, accumulators and scratch: 9), the source recursion (both sums, the
    sets by size, two words of scratch per thread: 7 + 2 T) and the arc passes (both sums,
    four words of scratch per thread, two per child of a pass: 4 + 4 T + 2 per_pass), with
    ``T`` numba's threads.

    Examples
    --------
    >>> all_dags_cells(20) * 8 / 2**20 < 400   # MiB for 20 variables, one child per pass
    True
    """
    n = int(n_nodes)
    t = numba.get_num_threads()
    return (n + max(9, 7 + 2 * t, 4 + 4 * t + 2 * max(1, int(per_pass)))) * (1 << n)


def _uniform_is_none(structure_prior):
    """The structure prior with "uniform" as None; any other string refused."""
    if isinstance(structure_prior, str):
        if structure_prior.lower() != "uniform":
            raise ValueError(f"structure_prior must be None or 'uniform' (uniform over DAGs), a callable "
                             f"f(child, parents) or a (p, p) matrix of log weights, got {structure_prior!r}")
        return None
    return structure_prior


def _dag_prior_statement(structure_prior, k: int) -> str:
    """The graph_prior sentence of the engines over DAGs."""
    return (f"uniform over DAGs with at most {k} parents per node" if structure_prior is None else
            f"structure-modular (the given structure prior) over DAGs with at most {k} parents per node")


def _prior_normaliser(fam: _order_dp.Families, names: list[str], k: int, structure_prior, alpha_m,
                      alpha_e) -> float:
    """log sum_G prod_v rho_v(G_v) over the DAGs with at most k parents (alpha_m, alpha_e
    are overwritten as scratch)."""
    n = len(names)
    if structure_prior is None:
        return math.log(_dag_dp.count_dags(n, k))
    lw = np.concatenate([np.broadcast_to(family_log_prior(names, v, fam.members[fam.offset[v]:fam.offset[v + 1]],
                                                          fam.size[fam.offset[v]:fam.offset[v + 1]], structure_prior),
                                         (fam.offset[v + 1] - fam.offset[v],)) for v in range(n)])
    rho = _order_dp.Families(np.ascontiguousarray(lw, dtype=float), fam.offset, fam.mask, fam.members, fam.size)
    Z_m, Z_e, cond = np.empty(1 << n), np.empty(1 << n, dtype=np.int64), np.empty(1 << n)
    with PARALLEL_LOCK:
        _order_dp._alpha_tables(rho, n, alpha_m, alpha_e)
    _dag_dp.sink_sums(n, alpha_m, alpha_e, Z_m, Z_e, cond)
    return float(_order_dp.ext_to_log(Z_m[-1], Z_e[-1]))


class AllDAGs:
    """Exact Bayesian model averaging over every DAG (Tian & He 2009).

    Sums over every DAG whose nodes have at most ``max_parents`` parents, each weighted
    by its family scores times a structure-modular prior, by inclusion-exclusion over the
    sinks and the sources of subsets of the variables (``O(n 3^n)`` time, ``O(n 2^n)``
    memory); every arc posterior comes out of one pass per child
    (:mod:`bnexplore._dag_dp` has the mathematics).

    **The prior.**  ``P(G) ∝ prod_v rho_v(G_v)`` over the DAGs with at most
    ``max_parents`` parents per node: with ``structure_prior=None`` every such DAG is equally
    likely a priori (:attr:`graph_prior` says which).  :class:`AllOrders` and
    :func:`order_mcmc` average under the order-modular prior instead, which weighs a
    DAG by its number of linear extensions (the empty graph ``N!`` times a chain).

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Complete discrete data; 20 variables fit the default budget.
    max_parents : int
        ``k``, the largest number of parents of a node.
    prior : {"K2", "BDeu"}, default "K2"
        Parameter prior of the family scores (as :class:`bnexplore.scores.LocalScore`).
    ess : float, default 1.0
        Equivalent sample size of BDeu.
    structure_prior : None, "uniform", callable, or (p, p) array / DataFrame
        The structure prior's modular factor ``rho_v`` in natural logs: None or "uniform"
        (uniform over DAGs), ``f(child, parents) -> float``, or a matrix ``W`` (rows
        parent, columns child) with ``log rho_v(P) = sum_{u in P} W[u, v]``.
    budget : int, optional
        Largest number of cells (8-byte words) kept; default the package budget
        (:func:`bnexplore.data.get_table_budget`).  Checked before any table is allocated.

    Attributes
    ----------
    graph_prior : str
        The prior over structures the posteriors are computed under.
    log_evidence : float
        ``log P(D) = log sum_G P(G) P(D | G)`` (prior normalised).
    log_evidence_error : float
        Estimate of the rounding error of :attr:`log_evidence`: the relative difference of
        the sink and the source recursions' totals, which compute the same sum separately.
    condition : float
        The largest condition number ``(P + N) / |P - N|`` of the sink and source sums.
    n_families : int
        Number of (node, parent set) families scored.

    Raises
    ------
    MemoryBudgetError
        Before anything is allocated, if the tables (:func:`all_dags_cells`) exceed the
        budget.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(300, random_state=0)
    >>> ad = bx.averaging.AllDAGs(df, max_parents=2)
    >>> post = ad.arc_posteriors()
    >>> post.shape, ad.graph_prior
    ((8, 8), 'uniform over DAGs with at most 2 parents per node')
    >>> bool(((post + post.T).values <= 1 + 1e-9).all())   # u -> v and v -> u exclude each other
    True
    """

    def __init__(self, data: DiscreteData | pd.DataFrame, max_parents: int = 2,
                 prior: str = "K2", ess: float = 1.0,
                 structure_prior: Callable | np.ndarray | pd.DataFrame | str | None = None,
                 budget: int | None = None):
        self.max_parents = check_int(max_parents, "max_parents", low=0)
        _check_prior(prior, ess)
        structure_prior = _uniform_is_none(structure_prior)
        self.data = _complete_data(data, "AllDAGs")
        self.names = list(self.data.names)
        self.prior, self.ess, self.structure_prior = prior, float(ess), structure_prior
        self.budget = get_table_budget() if budget is None else _check_budget(budget, "budget")
        n = len(self.names)
        if n < 1:
            raise ValueError("AllDAGs needs at least one variable")
        if n > 40:  # 2^40 sets: far beyond any budget, refused before computing sizes
            raise MemoryBudgetError(f"exact averaging over all DAGs of {n} variables needs 2^{n} tables: "
                                    f"use bnexplore.averaging.partition_mcmc for more than about 20 variables")
        cells = all_dags_cells(n)
        if cells > self.budget:
            raise MemoryBudgetError(
                f"exact averaging over all DAGs of {n} variables keeps {cells:,} cells ({cells * 8 / 2**30:.2f} "
                f"GiB: the local sums of every node over 2^{n - 1} sets, the sink and source sums over 2^{n}), "
                f"over the budget of {self.budget:,}: use bnexplore.averaging.partition_mcmc, fewer "
                f"variables, or raise the budget (budget= or bnexplore.data.set_table_budget)")
        k = self.max_parents
        self.graph_prior = _dag_prior_statement(structure_prior, k)
        self._fam, _ = _families_all(self.data, k, prior, self.ess, structure_prior, self.budget,
                                     "exact averaging over all DAGs")
        self.n_families = int(self._fam.log_weight.size)
        M = 1 << max(n - 1, 0)
        table = _order_dp.big_table  # no transparent huge pages (see there)
        alpha_m, alpha_e = table((n, M)), table((n, M), np.int64)
        self._log_prior_sum = _prior_normaliser(self._fam, self.names, k, structure_prior, alpha_m, alpha_e)
        with PARALLEL_LOCK:
            _order_dp._alpha_tables(self._fam, n, alpha_m, alpha_e)
        Z_m, Z_e, z_cond = table(1 << n), table(1 << n, np.int64), table(1 << n)
        R_m, R_e, r_cond = table(1 << n), table(1 << n, np.int64), table(1 << n)
        _dag_dp.sink_sums(n, alpha_m, alpha_e, Z_m, Z_e, z_cond)
        masks, starts = _dag_dp.layers(n)
        with PARALLEL_LOCK:
            _dag_dp.source_sums(n, alpha_m, alpha_e, R_m, R_e, r_cond, masks, starts, numba.get_num_threads())
        self.condition = float(max(z_cond.max(), r_cond.max()))
        self.log_dag_sum = float(_order_dp.ext_to_log(Z_m[-1], Z_e[-1]))
        #: log R({}): the same sum by the source recursion (equal to log_dag_sum up to rounding)
        self.log_dag_sum_sources = float(_order_dp.ext_to_log(R_m[0], R_e[0]))
        self.log_evidence = self.log_dag_sum - self._log_prior_sum
        # relative difference of Z(V) and R({}) (the logs of both round alike beyond ~1e-12)
        self.log_evidence_error = float(abs(Z_m[-1] - math.ldexp(R_m[0], int(R_e[0] - Z_e[-1]))) / Z_m[-1])
        del z_cond, r_cond, masks, starts
        unit = 1 << n
        self._per_pass = int(max(1, min(n, (self.budget // unit - n - 4 - 4 * numba.get_num_threads()) // 2)))
        self._tables = (alpha_m, alpha_e, Z_m, Z_e, R_m, R_e)
        self._post: np.ndarray | None = None
        self._spread: np.ndarray | None = None

    def _arcs(self) -> None:
        if self._post is None:
            with PARALLEL_LOCK:
                post, spread = _dag_dp.dag_arc_posteriors(self._fam, len(self.names), *self._tables, self._per_pass,
                                                          numba.get_num_threads())
            self._post, self._spread = post, spread

    def arc_posteriors(self) -> pd.DataFrame:
        """Posterior probability of every arc ``P(X_u -> X_v | D)`` over all DAGs.

        Returns
        -------
        DataFrame
            Rows are parents, columns children; the diagonal is 0.

        Examples
        --------
        >>> import bnexplore as bx
        >>> df = bx.networks.load("asia").sample(300, random_state=0)
        >>> post = bx.averaging.AllDAGs(df, max_parents=1).arc_posteriors()
        >>> bool(post.loc["either", "xray"] + post.loc["xray", "either"] > 0.5)
        True
        """
        self._arcs()
        return _arc_frame(np.clip(self._post, 0.0, 1.0), self.names)

    def edge_posteriors(self) -> pd.DataFrame:
        """Posterior probability that ``X_u`` and ``X_v`` are adjacent (either direction):
        ``P(u -> v | D) + P(v -> u | D)``, a symmetric table."""
        post = self.arc_posteriors().to_numpy()
        return _arc_frame(np.clip(post + post.T, 0.0, 1.0), self.names)

    def arc_cancellation(self) -> pd.DataFrame:
        """``(K+ + K-) / Z(V)`` of each arc: the magnitude of the alternating terms behind
        its posterior (1 would mean no cancellation at all); its rounding error is about
        ``n eps`` times this (see :mod:`bnexplore._dag_dp`)."""
        self._arcs()
        return _arc_frame(self._spread.copy(), self.names)

    def __repr__(self) -> str:
        return (f"AllDAGs({len(self.names)} nodes, k={self.max_parents}, {self.n_families:,} families, "
                f"log_evidence={self.log_evidence:.3f}; {self.graph_prior})")
