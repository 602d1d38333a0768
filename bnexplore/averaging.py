"""Exact and approximate model averaging over order-constrained DAGs (Dash & Cooper).

The class :math:`\\mathcal{L}_k(\\pi)` holds every DAG whose arcs point from an
earlier to a later level of a partial order ``pi`` (a total order is the special
case of one node per level) and whose nodes have at most ``k`` parents
(Definition 1).  Under structure modularity (Assumption 1) the posterior of a DAG
factorises over the nodes, so every sum over the super-exponentially many DAGs of
the class factorises into one sum per node over that node's admissible parent sets
(Buntine 1991; Friedman & Koller 2000; Dash & Cooper Theorem 1):

* ``log P(D) = sum_i logsumexp_nu w_i^nu`` with ``w_i^nu = log p_s(X_i, P_i^nu) +
  log score(X_i, P_i^nu)`` (Eq. 6, natural logs throughout);
* ``P(X_L -> X_M | D) = sum_{nu : X_L in P_M^nu} exp(w_M^nu - logsumexp_nu w_M^nu)``
  (Eq. 9, the factors of the other nodes cancel with ``kappa``);
* ``P(X = x | D) = prod_i sum_nu post_i^nu theta_hat_i^nu(x_i | x_{P_i^nu})`` (Eq. 13)
  with the standard parameters ``theta_hat = (alpha_ijk + N_ijk) / (alpha_ij + N_ij)``
  (Eq. 3) of the same Dirichlet prior as the score;
* the summary network :math:`M^*` (Theorem 2, Eq. 14-15) gives node ``X_i`` the
  union ``P_i^*`` of its parent sets and the CPT ``theta*_ijk = sum_nu post_i^nu
  theta_hat^nu_{i, J_j^nu, k}``, so that single-network inference reproduces Eq. 13;
  Procedure 1 truncates ``P_i^*`` to at most ``n`` parents (greedy union of the
  parent sets in decreasing posterior order) and the averaged structures become the
  admissible sets contained in ``P_i^*`` (approximate model averaging, AMA).

This module is the front (checks, budgets, tables of names); the engines are private
modules, each opening with its mathematics: ``bnexplore.scores`` scores the families,
``bnexplore._order_posterior`` lists the parent sets and computes Eq. 6, 9 and 13,
``bnexplore._procedure1`` Procedure 1 (:func:`procedure1`, re-exported here),
``bnexplore._mstar_plan`` decides which M* CPTs are built in full and splits their
build over threads, ``bnexplore._mstar_counts`` and ``bnexplore._mstar`` compute the
M* CPTs of Eq. 15, and ``bnexplore._all_orders`` (over
``bnexplore._order_dp``) the averaging over every order (:class:`AllOrders`,
:func:`order_mcmc`), whose names this module re-exports.

References
----------
D. Dash and G. F. Cooper, "Model averaging with discrete Bayesian network
classifiers", AISTATS 2003.  W. Buntine, "Theory refinement on Bayesian networks",
UAI 1991.  N. Friedman and D. Koller, "Being Bayesian about network structure",
UAI 2000.
"""
from __future__ import annotations

import collections.abc
import math
from typing import Callable, Sequence

import numba
import numpy as np
import pandas as pd
from scipy.special import logsumexp

from ._parallel import PARALLEL_LOCK
from .data.core import DiscreteData, MemoryBudgetError, _check_budget, as_discrete, get_table_budget
from ._lazy_mixture import LazyCPT, MixtureSpec, lex_set_index, mixture_rows, star_sets
from ._mstar_plan import check_dense, dense_nodes, star_cpts
from ._order_posterior import (all_parent_sets, count_parent_sets, eq13_node_factor, family_log_prior,
                               log_normalisers)
from ._all_orders import AllOrders, OrderMCMC, all_orders_cells, order_mcmc
from ._all_dags import AllDAGs, all_dags_cells
from ._partition_mcmc import PartitionMCMC, partition_mcmc
from ._bootstrap import BootstrapArcs, arc_table, bootstrap_arcs, inclusion_threshold
from ._validation import Interval, check_int, check_random_state
from ._procedure1 import procedure1, procedure1_all
from ._averaged_query import AveragedModel, AveragedPosteriors, ask_averaged_model, averaged_posteriors, greedy_order
from ._order_available import available_case_weights, uses_threads, walk_cells
from ._order_em import em_cells, order_em_weights
from ._order_scores import _pascal, _row_bitsets
from .scores import _check_prior, _score_order_flat

__all__ = ["OrderedAveraging", "AllOrders", "AllDAGs", "all_dags_cells", "PartitionMCMC",
           "partition_mcmc", "BootstrapArcs", "bootstrap_arcs", "inclusion_threshold", "arc_table",
           "OrderMCMC", "order_mcmc", "all_orders_cells", "count_parent_sets", "procedure1",
           "averaged_posteriors", "AveragedPosteriors", "ask_averaged_model", "AveragedModel",
           "greedy_order"]


#: the check of ``n``, a summary network's largest parent set
_SUMMARY_SIZE = Interval(int, 0, None, allow_none=True, label="summary-network size")

_SEQUENCES = (collections.abc.Sequence, np.ndarray, pd.Index)  # what an order or a level may be

#: M* CPTs up to this many cells are built in full by ``summary_network(lazy="auto")``;
#: larger ones are lazy (a full table costs more than the rows prediction reads)
MSTAR_DENSE_CELLS = 1 << 22


class OrderedAveraging:
    """Exact Bayesian model averaging over DAGs consistent with an order, in-degree <= k.

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Discrete data (complete unless ``missing="keep"``).
    order : sequence of column names, optional
        A total order ``pi``: arcs only from earlier to later nodes.
    levels : sequence of sequences of column names, optional
        A partial order given as levels (Definition 1): arcs only from a lower to a
        higher level; nodes of one level are never connected.  Give ``order`` or
        ``levels``, not both; with neither, the data's column order is the order.
    max_parents : int
        ``k``, the largest number of parents of a node.
    prior : {"K2", "BDeu"}, default "K2"
        Parameter prior of the score (Eq. 6) and of the standard parameters (Eq. 3).
    ess : float, default 1.0
        Equivalent sample size of BDeu.
    structure_prior : None, callable, or (p, p) array / DataFrame
        The modular structure prior ``p_s(X_i, P_i)`` of Assumption 1 in natural
        logs.  ``None`` is uniform over the class (the paper's choice).  A callable
        ``f(child, parents_tuple) -> float`` is called once per family.  A matrix ``W``
        (rows parent, columns child) gives ``log p_s = sum_{u in P_i} W[u, i]``.
    budget : int, optional
        Largest number of cells the enumeration and each CPT of a summary network may
        use; default the package budget (:func:`bnexplore.data.get_table_budget`).
    missing : {"raise", "drop", "keep", "em"}
        What to do with missing cells: refuse them (default), drop the incomplete rows
        (with a warning), keep them (available case per family) or structural EM, as
        described in the Notes.
    max_iter : int, default 10
        Largest number of structural-EM iterations (``missing="em"``).
    random_state : None, int or numpy.random.Generator
        The draws of structural EM's E-step (``missing="em"``).

    Notes
    -----
    **Missing values** (``missing="keep"``).  Every family is counted on its own rows, by
    available case per parent set: the family of ``X_v`` with parent set ``A`` has the
    weight

        ``w_v(A) = s(v | {} ; O({v})) + s(v | A ; O({v} u A)) - s(v | {} ; O({v} u A))``

    where ``s(v | A ; R)`` is the family score (K2 or BDeu) counted on the rows ``R`` and
    ``O(W)`` the rows where every column of ``W`` is observed
    (:mod:`bnexplore._order_available`; Eq. 3 of :mod:`bnexplore._available_case`, the
    score the structure learners give a structure).  The parent set's gain over the empty
    set is counted on the family's own rows, so a missing cell costs only the families it
    touches, and no parent set wins because its members are missing more often (raw scores
    on fewer rows would be larger).  A DAG weighs ``sum_v w_v(Pa_v)`` times its structure
    prior, and the arc posteriors, :attr:`log_evidence` (``log sum_G exp(sum_v w_v)``) and
    samples are the exact sums over the class under these weights: not the marginal
    likelihood of one data set, but equal to it on every family with no missing cell.  The
    standard parameters of predictions (Eq. 13) and of M* (Eq. 15) are counted on the same
    rows (available case).  See :class:`~bnexplore.data.DiscreteData` for the package's
    policy.

    **Structural EM** (``missing="em"``, :mod:`bnexplore._order_em`).  Starting from the
    weights above: the best DAG of the class, its parameters by EM (exact E-step: each
    row's missing cells summed out), ``S = 16`` exact draws of every row's missing cells
    from that network, and every family weighed by K2/BDeu of its *expected* counts over
    all the rows (Friedman 1997); repeated until the best DAG stays the same
    (``max_iter``).  :attr:`em` reports the iterations, the observed-data
    log-likelihood of each iteration's network and its parameters.  On ALARM (5,000
    rows, its order, k = 3) with 10% of the cells missing, 5 arc posteriors differ from
    the complete data's by more than 0.05 (18 by available case), against 6 for the
    complete data minus 10% of its rows; with 30% missing 8 (available case 30, the
    complete data minus 30% of its rows 11).  It costs parameter EM and a walk over
    every family per iteration, the walk most of it (ALARM, loaded machine: 16 times the
    available-case weights at 10% missing, over 100 times at 30%).  The standard
    parameters of predictions (Eq. 13) and of M* (Eq. 15) are then the posterior means of
    the expected counts the weights were scored on (Eq. 5 of :mod:`bnexplore._em_counts`:
    the last E-step's ``S`` draws of every row's missing cells, each weighing ``1 / S``),
    counted on first use over ``S`` times the rows.  With no missing cell it is the
    complete-data averaging.

    Attributes
    ----------
    data : DiscreteData
    names : list of str
    max_parents : int
        ``k`` (:attr:`k` is its former name, kept).
    candidates : list of ndarray
        Admissible parents (column indices) of every node.
    log_evidence : float
        ``log sum_S P(D | S) P(S)`` over the class (with ``p_s`` unnormalised).
    n_families : int
        Number of (node, parent set) families scored.
    n_structures : int
        Number of DAGs in the class (exact integer).
    em : dict or None
        ``missing="em"`` on data with missing cells: ``n_iter``, ``converged``,
        ``log_likelihood`` and ``log_likelihoods`` (observed-data, of each iteration's
        network with its EM parameters), ``em_steps``, ``n_draws``, ``sampled_rows``,
        ``parents``, ``cpts`` and ``seed`` (:class:`bnexplore._order_em.EMInfo`); else None.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(500, random_state=0)
    >>> avg = bx.averaging.OrderedAveraging(df, order=list(df.columns), max_parents=2)
    >>> post = avg.arc_posteriors()
    >>> post.shape, float(post.values.max()) <= 1.0
    ((8, 8), True)
    >>> mstar = avg.summary_network(n=3)
    >>> max(len(mstar.parents(v)) for v in mstar.nodes) <= 3
    True
    """

    def __init__(self, data: DiscreteData | pd.DataFrame, order: Sequence[str] | None = None,
                 levels: Sequence[Sequence[str]] | None = None, max_parents: int = 2,
                 prior: str = "K2", ess: float = 1.0,
                 structure_prior: Callable | np.ndarray | pd.DataFrame | None = None,
                 budget: int | None = None, missing: str = "raise", max_iter: int = 10, random_state=None):
        max_parents = check_int(max_parents, "max_parents", low=0)
        _check_prior(prior, ess)
        if missing not in ("raise", "drop", "keep", "em"):
            raise ValueError(f"missing must be 'raise', 'drop', 'keep' or 'em', got {missing!r}")
        if missing == "em":
            max_iter = check_int(max_iter, "max_iter", low=1)
        self.data = as_discrete(data, missing="keep" if missing == "em" else missing)
        self.em: dict | None = None
        self.names = list(self.data.names)
        self.prior = prior
        self.ess = float(ess)
        self.max_parents = max_parents
        self.budget = get_table_budget() if budget is None else _check_budget(budget, "budget")
        self._bitsets = None
        self.level = self._levels(order, levels)
        p = len(self.names)
        if p * p > self.budget:  # the (p, p) candidate and index tables, before building any
            raise MemoryBudgetError(
                f"order averaging over {p:,} variables keeps (p, p) candidate and index tables of {p * p:,} "
                f"cells, over the budget of {self.budget:,}: use fewer variables (select features first), "
                f"or raise the budget (budget= or bnexplore.data.set_table_budget)")
        lower = self.level[None, :] < self.level[:, None]  # [v, u]: u may be a parent of v
        cand_cols = np.nonzero(lower)[1].astype(np.int64)  # row-major: each node's candidates in column order
        n_cand = lower.sum(axis=1)
        cand_off = np.zeros(p + 1, dtype=np.int64)
        np.cumsum(n_cand, out=cand_off[1:])
        ends = cand_off.tolist()
        self.candidates = [cand_cols[a:b] for a, b in zip(ends[:-1], ends[1:])]
        # ---- memory guard before enumerating anything
        mu = [count_parent_sets(len(c), self.max_parents) for c in self.candidates]
        kk = max(min(self.max_parents, max((len(c) for c in self.candidates), default=0)), 1)
        total = sum(mu)
        if total * kk > self.budget:
            worst = int(np.argmax(mu))
            raise MemoryBudgetError(
                f"order averaging with k={self.max_parents} needs {total:,} parent sets ({mu[worst]:,} for "
                f"{self.names[worst]!r} alone), {total * kk:,} cells, over the budget of "
                f"{self.budget:,}: use a smaller max_parents (k), a partial order with fewer "
                f"candidate parents, or raise the budget (budget= or bnexplore.data.set_table_budget)")
        ar = self.data.arities.astype(float)
        k = self.max_parents
        if (k + 1) * math.log2(ar.max(initial=1.0)) >= 61.5:  # only then can a family's cells overflow
            top = -np.sort(-np.where(lower, ar[None, :], 1.0), axis=1)[:, :k]  # the largest k candidate arities
            for v in np.flatnonzero(np.log2(top).sum(axis=1) + np.log2(ar) >= 61.5):
                c = self.candidates[v]
                if c.size and self.max_parents:
                    top_v = sorted(self.data.arities[c].tolist(), reverse=True)[:self.max_parents]
                    size = int(np.prod(top_v, dtype=object)) * int(self.data.arities[v])
                    if size >= 2**62:
                        raise MemoryBudgetError(
                            f"parent sets of {self.names[v]!r} can have {size:,} cells, too many to "
                            f"index: use a smaller max_parents (k) or merge states")
        # ---- enumerate, score, keep log space
        self._specs: dict = {}  # Eq. 13 mixtures of each node with missing values (on first use)
        self._em_columns = None  # structural EM's last draws, (p, S N): the mixtures count on them
        self._cand_flat = cand_cols
        self._cand_off = cand_off
        self._set_arrays: tuple | None = None  # the parent sets, listed on first use (_listed)
        if self.data.missing is None:
            flat, off = _score_order_flat(self.data, self.level, self.max_parents, prior=prior, ess=ess)
            self._off = off
        else:
            off = self._off = np.zeros(p + 1, dtype=np.int64)
            np.cumsum(mu, out=off[1:])
            d = self.data
            cells = walk_cells(d.n_rows, self.max_parents, uses_threads(total, d.n_rows)) + d.n_rows * p
            if cells > self.budget:
                raise MemoryBudgetError(
                    f"order averaging over {d.n_rows:,} rows with missing cells keeps {cells:,} cells of "
                    f"working memory (a copy of the codes, and each thread's row lists for k={self.max_parents}), "
                    f"over the budget of {self.budget:,}: use a smaller max_parents (k), fewer rows, "
                    f"or raise the budget (budget= or bnexplore.data.set_table_budget)")
            if missing == "em":
                cells = em_cells(d.n_rows, p, self.max_parents, total)
                if cells > self.budget:
                    raise MemoryBudgetError(
                        f"structural EM over {d.n_rows:,} rows keeps {cells:,} cells of working memory (the "
                        f"draws of the missing cells and each thread's entries for k={self.max_parents}), over "
                        f"the budget of {self.budget:,}: use a smaller max_parents (k), missing='keep', "
                        f"or raise the budget (budget= or bnexplore.data.set_table_budget)")
            flat = available_case_weights(d.codes, d.missing, d.arities, cand_cols, cand_off, self.max_parents,
                                          off, prior == "BDeu", float(ess))
        # C(m, s) for m up to the most candidates, s <= k + 1: a parent set's index in its node's list
        m_max = int(n_cand.max(initial=0))
        self._binom = _pascal(m_max, min(self.max_parents, m_max) + 1)
        lp = np.zeros(flat.size)
        if structure_prior is not None:
            sets, sizes = self._flat_sets, self._flat_sizes
            for v in range(p):
                seg = slice(off[v], off[v + 1])
                lp[seg] = self._structure_logprior(v, sets[seg], sizes[seg], structure_prior)
        if missing == "em" and self.data.missing is not None:
            d = self.data
            flat, self.em, draws = order_em_weights(np.where(d.missing, -1, d.codes).astype(np.int64), d.arities,
                                                    self.names, cand_cols, cand_off, self.max_parents, off,
                                                    self._flat_sets, self._flat_sizes, prior, float(ess), flat,
                                                    lp, max_iter, random_state)
            self._em_columns = np.ascontiguousarray(np.moveaxis(draws, 2, 0).reshape(p, -1), dtype=d.columns.dtype)
        if structure_prior is not None:
            flat = flat + lp
            for v in range(p):
                seg = slice(off[v], off[v + 1])
                if not np.isfinite(flat[seg]).any():
                    raise ValueError(f"the structure prior gives every parent set of {self.names[v]!r} "
                                     f"probability zero: allow at least one (e.g. the empty set)")
                if np.isnan(flat[seg]).any() or np.isposinf(flat[seg]).any():
                    raise ValueError(f"the structure prior returned NaN or +inf for {self.names[v]!r}")
        self._flat_logw = flat
        self._logw = [flat[off[v]:off[v + 1]] for v in range(p)]
        self._lognorm_v: np.ndarray | None = None  # per-node log normalisers, on first use (AMA never needs them)
        self.n_families = int(total)
        self.n_structures = math.prod(mu)

    # ----------------------------------------------------------------- set-up
    def family_rows(self, node: str | int, parents: Sequence[str | int] = ()) -> np.ndarray:
        """Boolean mask of the rows on which the family of ``node`` with ``parents`` is
        counted (``O({node} u parents)`` of the class Notes): those where the node and every
        parent are observed (every row when nothing is missing).

        Examples
        --------
        >>> import numpy as np, pandas as pd, bnexplore as bx
        >>> df = pd.DataFrame({"a": [0, 1, np.nan, 1, 0], "b": [0, np.nan, 1, 1, 0]})
        >>> avg = bx.averaging.OrderedAveraging(df, max_parents=1, missing="keep")
        >>> avg.family_rows("b", ["a"]).tolist(), int(avg.family_rows("b").sum())
        ([True, False, False, True, True], 4)
        """
        return self.data.observed_rows([self.data.index(node), *(self.data.index(u) for u in parents)])

    def _levels(self, order, levels) -> np.ndarray:
        p = len(self.names)
        if order is not None and levels is not None:
            raise ValueError("give either order (a total order) or levels (a partial order), not both")
        if levels is None:
            if order is None:
                order = self.names
            if isinstance(order, str) or not isinstance(order, _SEQUENCES):
                raise TypeError(f"order must be a list of column names, got {type(order).__name__}")
            groups = ((name,) for name in order)  # a total order: one name per level
        elif isinstance(levels, str) or not isinstance(levels, collections.abc.Sequence):
            raise TypeError(f"levels must be a list of lists of column names, got {type(levels).__name__}")
        else:
            groups = levels
        lev = [-1] * p
        what = "order" if order is not None else "levels"
        for li, group in enumerate(groups):
            if levels is not None:
                if isinstance(group, str) or not isinstance(group, _SEQUENCES):
                    raise TypeError(f"level {li} must be a list of column names, got {group!r}")
                if len(group) == 0:
                    raise ValueError(f"level {li} is empty: drop it")
            for name in group:
                try:
                    j = self.data.index(name)
                except (KeyError, IndexError):
                    raise ValueError(f"{what} names {name!r}, which is not a column; columns are "
                                     f"{self.names}") from None
                if lev[j] >= 0:
                    raise ValueError(f"{what} lists column {self.names[j]!r} more than once")
                lev[j] = li
        missing = [self.names[j] for j in range(p) if lev[j] < 0]
        if missing:
            raise ValueError(f"{what} must place every column; missing {missing}")
        return np.array(lev, dtype=np.int64)

    @property
    def _flat_sets(self) -> np.ndarray:
        """Every node's parent sets (rows padded with -1), one after another, in the
        order of the scores; listed on first use (AMA construction never needs them)."""
        return self._listed()[0]

    @property
    def _flat_sizes(self) -> np.ndarray:
        return self._listed()[1]

    @property
    def _sets(self) -> list[np.ndarray]:
        """Node v's parent sets (a view of :attr:`_flat_sets`)."""
        return self._listed()[2]

    @property
    def _sizes(self) -> list[np.ndarray]:
        return self._listed()[3]

    def _listed(self) -> tuple:
        """(flat sets, flat sizes, per-node sets, per-node sizes), listed once."""
        if self._set_arrays is None:
            width = max(1, min(self.max_parents, int(np.diff(self._cand_off).max(initial=0))))
            with PARALLEL_LOCK:
                sets, sizes = all_parent_sets(self._cand_flat, self._cand_off, self.max_parents, self._off, width)
            off = self._off
            self._set_arrays = (sets, sizes, [sets[off[v]:off[v + 1]] for v in range(len(self.names))],
                                [sizes[off[v]:off[v + 1]] for v in range(len(self.names))])
        return self._set_arrays

    def _structure_logprior(self, v, sets, sizes, sp) -> np.ndarray | float:
        return family_log_prior(self.names, v, sets, sizes, sp)

    # ----------------------------------------------------------------- queries
    @property
    def order_levels(self) -> list[list[str]]:
        """The levels of the order (lists of names)."""
        out: dict[int, list[str]] = {}
        for j, li in enumerate(self.level):
            out.setdefault(int(li), []).append(self.names[j])
        return [out[li] for li in sorted(out)]

    @property
    def _lognorm(self) -> np.ndarray:
        """Per node, the log of the sum of its families' weights (one parallel
        log-sum-exp), computed on first use."""
        if self._lognorm_v is None:
            with PARALLEL_LOCK:
                self._lognorm_v = log_normalisers(self._flat_logw, self._off)
        return self._lognorm_v

    @property
    def log_evidence(self) -> float:
        """``log sum_S P(D | S) P(S)`` over the class: the sum of the nodes' log normalisers."""
        return float(self._lognorm.sum())

    def _probs(self, v: int) -> np.ndarray:
        return np.exp(self._logw[v] - self._lognorm[v])

    def arc_posteriors(self) -> pd.DataFrame:
        """Posterior probability of every arc ``P(X_L -> X_M | D)`` (Eq. 9).

        Returns
        -------
        DataFrame
            Rows are parents ``X_L``, columns children ``X_M``; arcs the order forbids
            (and the diagonal) are 0.

        Examples
        --------
        >>> import bnexplore as bx
        >>> df = bx.networks.load("asia").sample(300, random_state=1)
        >>> avg = bx.averaging.OrderedAveraging(df, max_parents=1)
        >>> float(avg.arc_posteriors().iloc[-1].sum())  # the last node has no children
        0.0
        """
        p = len(self.names)
        out = np.zeros((p, p))
        for v in range(p):
            sets = self._sets[v]
            mask = sets >= 0
            if not mask.any():
                continue
            w = np.broadcast_to(self._probs(v)[:, None], sets.shape)[mask]
            out[:, v] = np.bincount(sets[mask], weights=w, minlength=p)
        np.clip(out, 0.0, 1.0, out=out)
        df = pd.DataFrame(out, index=pd.Index(self.names, name="parent"),
                          columns=pd.Index(self.names, name="child"))
        return df

    def parent_set_posteriors(self, node: str, top: int | None = None) -> pd.DataFrame:
        """Posterior of each admissible parent set of ``node``, most probable first.

        Columns ``parents`` (tuple of names), ``size``, ``log_weight`` (log score plus
        log structure prior) and ``posterior``.
        """
        v = self.data.index(node)
        sets, sizes = self._sets[v], self._sizes[v]
        order = np.argsort(-self._logw[v], kind="stable")
        if top is not None:
            order = order[:int(top)]
        probs = self._probs(v)
        return pd.DataFrame({
            "parents": [tuple(self.names[u] for u in sets[i, :sizes[i]]) for i in order],
            "size": sizes[order],
            "log_weight": self._logw[v][order],
            "posterior": probs[order],
        })

    def sample_dags(self, n: int, random_state=None) -> list:
        """``n`` DAGs drawn from the posterior over the class: each node's parent set
        independently, with its posterior (the posterior factorises over the nodes).

        Examples
        --------
        >>> import bnexplore as bx
        >>> df = bx.networks.load("asia").sample(300, random_state=0)
        >>> avg = bx.averaging.OrderedAveraging(df, max_parents=2)
        >>> dags = avg.sample_dags(5, random_state=0)
        >>> len(dags), max(max(dict(g.in_degree()).values()) for g in dags) <= 2
        (5, True)
        """
        import networkx as nx

        n = check_int(n, "n", low=1)
        rng = check_random_state(random_state, "random_state")
        p = len(self.names)
        picks = []
        for v in range(p):
            probs = self._probs(v)
            picks.append(rng.choice(probs.size, size=n, p=probs / probs.sum()))
        out = []
        for i in range(n):
            g = nx.DiGraph()
            g.add_nodes_from(self.names)
            for v in range(p):
                s = picks[v][i]
                g.add_edges_from((self.names[u], self.names[v]) for u in self._sets[v][s, :self._sizes[v][s]])
            out.append(g)
        return out

    # ----------------------------------------------------------------- prediction
    def _test_columns(self, X, skip: int | None = None) -> np.ndarray:
        """Codes (p, m) of new rows in the training coding; column ``skip`` may be absent."""
        need = [c for j, c in enumerate(self.names) if j != skip]
        if isinstance(X, DiscreteData):
            if X.names == self.names and X.states == self.data.states:
                return np.ascontiguousarray(X.columns.astype(np.int64))
            X = X.to_frame()
        if not isinstance(X, pd.DataFrame):
            raise TypeError(f"X must be a DataFrame or DiscreteData, got {type(X).__name__}")
        X = X.rename(columns=str)
        miss = [c for c in need if c not in X.columns]
        if miss:
            raise ValueError(f"X lacks columns {miss}: every variable of the averaged networks "
                             f"is needed")
        present = [c for c in self.names if c in X.columns]
        codes = self.data.encode(X[present], unseen="raise")
        out = np.zeros((len(self.names), len(X)), dtype=np.int64)
        for k, c in enumerate(present):
            out[self.data.index(c)] = codes[:, k]
        return out

    @property
    def _observed(self) -> np.ndarray | None:
        """Observed cells (p, N), one row per variable; None when complete."""
        if self.data.missing is None:
            return None
        if getattr(self, "_observed_v", None) is None:
            self._observed_v = np.ascontiguousarray(~self.data.missing.T)
        return self._observed_v

    def _mixture_spec(self, v: int, star: list[int] | None = None) -> MixtureSpec:
        """Node ``v``'s mixture over the parent sets inside ``star`` (None: every
        candidate, Eq. 13), weights normalised over them (Eq. 15)."""
        cand = self.candidates[v].tolist() if self.max_parents > 0 else []
        if star is None:
            star = cand
        pos = {u: i for i, u in enumerate(cand)}
        sets = star_sets(len(star), min(self.max_parents, len(star)))
        width = max(1, max((len(g) for g in sets), default=0))
        cp = np.full((len(sets), width), -1, dtype=np.int64)
        for i, g in enumerate(sets):
            cp[i, :len(g)] = [pos[star[e]] for e in g]
        lw = self._logw[v][lex_set_index(cp, len(cand), self.max_parents)]
        w = np.exp(lw - lw.max())
        w /= w.sum()
        if self._em_columns is not None:   # Eq. 5's expected counts: the S draws of every row
            return MixtureSpec(self._em_columns, None, self.data.arities, v, star, sets, w, self.prior, self.ess,
                               scale=self.em["n_draws"])
        return MixtureSpec(self.data.columns, self._observed, self.data.arities, v, star, sets, w,
                           self.prior, self.ess)

    def _node_mixture(self, v: int, test: np.ndarray) -> np.ndarray:
        """Eq. 13 factor of node ``v`` for test codes of shape (C, p, m) -> (C, m)."""
        if self.data.missing is not None:  # available cases: the mixture evaluated where asked
            spec = self._specs.get(v)
            if spec is None:
                spec = self._specs[v] = self._mixture_spec(v)
            C, _, m = test.shape
            q = np.moveaxis(test[:, spec.star, :], 1, 2).reshape(C * m, spec.star.size)
            rows = mixture_rows(spec, q)
            return rows[np.arange(C * m), test[:, v, :].reshape(-1)].reshape(C, m)
        n_chunks = max(1, min(self._sets[v].shape[0], 4 * numba.get_num_threads()))
        with PARALLEL_LOCK:
            return eq13_node_factor(self.data.columns, np.ascontiguousarray(test, dtype=np.int32), v,
                                   self._sets[v], self._sizes[v], self._probs(v), self.data.arities,
                                   self.prior == "BDeu", self.ess, n_chunks)

    def predict_log_joint(self, X: pd.DataFrame | DiscreteData) -> np.ndarray:
        """Exact model-averaged ``log P(X = x | D)`` of every row (Eq. 13).

        Examples
        --------
        >>> import numpy as np, bnexplore as bx
        >>> df = bx.networks.load("asia").sample(300, random_state=2)
        >>> avg = bx.averaging.OrderedAveraging(df, max_parents=2)
        >>> bool(np.all(avg.predict_log_joint(df.head(5)) < 0))
        True
        """
        test = self._test_columns(X)[None]
        total = np.zeros(test.shape[2])
        for v in range(len(self.names)):
            total += np.log(self._node_mixture(v, test)[0])
        return total

    def predict_proba(self, X: pd.DataFrame | DiscreteData, target: str) -> np.ndarray:
        """Exact model-averaged ``P(target | other variables, D)`` (Eq. 13, normalised).

        Only the target and the nodes that may have it as a parent depend on its value;
        the other factors of Eq. 13 cancel.  The target is named per call (unlike a
        classifier's ``predict_proba(X)``, fixed to the class it was fitted on): the
        average is a model of every variable, so any node can be asked about.

        Returns
        -------
        ndarray (n_rows, r_target), columns follow the target's states.
        """
        t = self.data.index(target)
        test = self._test_columns(X, skip=t)
        relevant = [t] + [v for v in range(len(self.names)) if t in set(self.candidates[v].tolist())
                          and self.max_parents > 0]
        r = int(self.data.arities[t])
        variants = np.repeat(test[None], r, axis=0)
        variants[:, t, :] = np.arange(r)[:, None]
        logp = np.zeros((r, test.shape[1]))
        for v in relevant:
            logp += np.log(self._node_mixture(v, variants))
        logp -= logsumexp(logp, axis=0, keepdims=True)
        return np.exp(logp).T

    # ----------------------------------------------------------------- summary network
    def summary_parents(self, n: int | None = None) -> dict[str, list[str]]:
        """``P_i^*`` of every node: all candidates (``n=None``) or Procedure 1 with ``n``."""
        return {self.names[v]: [self.names[u] for u in star] for v, star in enumerate(self._stars(n))}

    def summary_table(self, n: int | None = None) -> pd.DataFrame:
        """Per node: ``P_i^*`` after Procedure 1, the number of averaged parent sets and
        the posterior mass they hold in the full class ``L_k(pi)``."""
        n = _SUMMARY_SIZE(n, "n")
        rows = []
        for v, star in enumerate(self._stars(n)):
            inside = self._inside(v, star)
            rows.append({"node": self.names[v], "parents": [self.names[u] for u in star],
                         "n_parents": len(star), "n_candidates": int(self.candidates[v].size),
                         "n_sets": int(inside.sum()), "n_sets_all": int(inside.size),
                         "mass": float(self._probs(v)[inside].sum())})
        return pd.DataFrame(rows).set_index("node")

    def _inside(self, v: int, star: list[int]) -> np.ndarray:
        allowed = np.zeros(len(self.names) + 1, dtype=bool)
        allowed[star] = True
        allowed[-1] = True  # padding
        return allowed[self._sets[v]].all(axis=1)

    def summary_network(self, n: int | None = None, name: str | None = None, lazy: bool | str = "auto"):
        """The summary network :math:`M^*` (Theorem 2), truncated by Procedure 1.

        Node ``X_i`` gets the parents ``P_i^*`` (Procedure 1 with at most ``n``
        parents; ``n=None`` keeps every candidate, which is exact model averaging)
        and the CPT of Eq. 14-15, averaging the standard parameters of every
        admissible parent set (size <= k) contained in ``P_i^*`` with weights
        proportional to their posterior.  Single-network inference in ``M^*`` then
        equals model averaging over that class, in O(N) per case.

        A CPT over many parents of many states is far larger than what prediction
        reads (10^12 rows for twelve 10-state parents), so such CPTs are *lazy*
        (:class:`~bnexplore._lazy_mixture.LazyCPT`): indexed like a dense table, they
        compute only the rows read, from the training data (memory linear in the rows).

        Parameters
        ----------
        n : int or None
            Largest number of parents of a node in ``M^*`` (>= 0).  An ``n`` at least
            a node's number of candidate parents keeps all of them, as ``None`` does
            (any larger ``n`` is accepted and means the same).
        name : str, optional
        lazy : "auto", True or False
            ``"auto"``: a CPT is built in full when it has at most
            ``MSTAR_DENSE_CELLS`` cells and its working memory fits the budget (and the
            data are complete), otherwise it is lazy; ``True``: every CPT is lazy;
            ``False``: every CPT in full, refused over the budget.

        Returns
        -------
        bnexplore.networks.BayesNet

        Raises
        ------
        MemoryBudgetError
            With ``lazy=False``, before allocating, if a CPT (parent configurations x
            states) or its working memory would exceed the budget; use a smaller ``n``
            (or ``k``), or a lazy network.

        Examples
        --------
        >>> import bnexplore as bx
        >>> df = bx.networks.load("asia").sample(300, random_state=0)
        >>> avg = bx.averaging.OrderedAveraging(df, max_parents=2)
        >>> net = avg.summary_network(None, lazy=True)       # nothing materialised
        >>> p = net.predict_proba(df.head(3), "lung")        # reads 3 x 2 rows per factor
        >>> bool(abs(p - avg.summary_network(None, lazy=False).predict_proba(df.head(3), "lung")).max() < 1e-12)
        True
        """
        from .networks import BayesNet

        if not (lazy == "auto" or lazy is True or lazy is False):
            raise ValueError(f"lazy must be 'auto', True or False, got {lazy!r}")
        n = _SUMMARY_SIZE(n, "n")
        p = len(self.names)
        star_arr, star_len = self._star_array(n)
        stars = [row[:m] for row, m in zip(star_arr.tolist(), star_len.tolist())]
        ar = self.data.arities.tolist()
        all_cells = [math.prod([ar[u] for u in st]) * ar[v] for v, st in enumerate(stars)]
        complete = self.data.missing is None
        if lazy is False and complete:
            check_dense(self.names, ar, stars, all_cells, n, self.max_parents, self.budget)
            dense = list(range(p))
        elif lazy == "auto" and complete:
            dense = dense_nodes(ar, stars, all_cells, self.max_parents, self.budget, MSTAR_DENSE_CELLS)
        else:  # lazy, or missing values (counted by available case, row by row)
            dense = []
        parents = {self.names[v]: [self.names[u] for u in stars[v]] for v in range(p)}
        cpts = {}
        if dense:
            use = np.zeros(p, dtype=bool)
            use[dense] = True
            lens = np.where(use, star_len, 0)  # the lazy nodes' CPTs are not built here
            cells = [all_cells[v] if use[v] else ar[v] for v in range(p)]
            built = star_cpts(self.names, (self.data.columns, self._bits, self.data.arities.astype(np.int64)),
                              self._parent_set_lists, star_arr, lens, cells, self.max_parents,
                              self.prior == "BDeu", self.ess, self.budget)
            cpts = {self.names[v]: built[v] for v in dense}
        for v in range(p):
            if self.names[v] not in cpts:
                cpts[self.names[v]] = LazyCPT(self._mixture_spec(v, stars[v]), name=self.names[v])
        if lazy is False and not complete:  # every row, by available case
            total = sum(all_cells)
            if total > self.budget:
                raise MemoryBudgetError(
                    f"the summary network (n={n}) would need {total:,} CPT cells in all, over the budget "
                    f"of {self.budget:,}: use a smaller n or k, or lazy CPTs")
            cpts = {v: np.asarray(t) for v, t in cpts.items()}
        states = {self.names[v]: list(self.data.states[v]) for v in range(p)}
        label = name or f"M* (k={self.max_parents}, n={'all' if n is None else n})"
        return BayesNet._from_valid(parents, states, {v: cpts[v] for v in self.names}, name=label)

    def _stars(self, n: int | None) -> list[list[int]]:
        """``P_i^*`` of every node: every parent that occurs (``n=None``), or Procedure 1
        with at most ``n`` parents (one parallel kernel)."""
        arr, lens = self._star_array(n)
        return [row[:m] for row, m in zip(arr.tolist(), lens.tolist())]

    def _star_array(self, n: int | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_stars` as rows padded with -1 (at least one column), and their lengths."""
        # [v, u]: u occurs in a parent set of v (every candidate does when k >= 1)
        unions = (self.level[None, :] < self.level[:, None]) & (self.max_parents >= 1)
        if n is None:
            lens = unions.sum(axis=1).astype(np.int64)
            out = np.full((len(self.names), max(1, int(lens.max(initial=0)))), -1, dtype=np.int64)
            for v, row in enumerate(unions):
                out[v, :lens[v]] = np.flatnonzero(row)
            return out, lens
        # a node's P_i^* never has more members than it has candidates: a larger n changes
        # nothing (Procedure 1 then keeps every candidate) and is clamped before the (p, n) result
        n = min(int(n), int(np.diff(self._cand_off).max(initial=0)))
        with PARALLEL_LOCK:
            out = procedure1_all(*self._parent_set_lists, n, unions, self.max_parents, numba.get_num_threads())
        return out, (out >= 0).sum(axis=1).astype(np.int64)

    @property
    def _parent_set_lists(self) -> tuple:
        """The fields of :class:`~bnexplore._order_posterior.ParentSetLists` (every node's
        candidates and the log weights of its parent sets), as the kernels take them."""
        return self._cand_flat, self._cand_off, self._flat_logw, self._off, self._binom

    @property
    def _bits(self) -> np.ndarray:
        """Row bitsets of every (column, value), built on first use."""
        if self._bitsets is None:
            self._bitsets = _row_bitsets(self.data.columns, self.data.arities.astype(np.int64))
        return self._bitsets

    def __repr__(self) -> str:
        return (f"OrderedAveraging({len(self.names)} nodes, {len(self.order_levels)} levels, "
                f"k={self.max_parents}, {self.n_families:,} families, log_evidence={self.log_evidence:.3f})")
