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

References
----------
D. Dash and G. F. Cooper, "Model averaging with discrete Bayesian network
classifiers", AISTATS 2003.  W. Buntine, "Theory refinement on Bayesian networks",
UAI 1991.  N. Friedman and D. Koller, "Being Bayesian about network structure",
UAI 2000.
"""
from __future__ import annotations

import collections.abc
import functools
import math
from typing import Callable, Sequence

import numba
import numpy as np
import pandas as pd
from scipy.special import logsumexp

from . import _order_dp
from ._parallel import PARALLEL_LOCK
from .data.core import (DiscreteData, MemoryBudgetError, _check_budget, as_discrete, check_table_size,
                        get_table_budget)
from ._lazy_mixture import LazyCPT, MixtureSpec, lex_set_index, mixture_rows, star_sets
from ._mstar import ParentSetLists, eq15_star_cpts, mstar_work, psi_scratch
from ._mstar_counts import BINARY_WORDS, KEY_ROWS, TrainingRows, bitset_capacity  # noqa: F401 (BINARY_WORDS, KEY_ROWS: re-exported)
from ._order_posterior import all_parent_sets, eq13_node_factor, log_normalisers
from ._procedure1 import procedure1_all, procedure1_union
from .scores import _check_prior, _pascal, _row_bitsets, _score_order_flat

__all__ = ["OrderedAveraging", "AllOrders", "OrderMCMC", "order_mcmc", "all_orders_cells", "count_parent_sets",
           "procedure1"]


_SEQUENCES = (collections.abc.Sequence, np.ndarray, pd.Index)  # what an order or a level may be

#: M* CPTs up to this many cells are built in full by ``summary_network(lazy="auto")``;
#: larger ones are lazy (a full table costs more than the rows prediction reads)
MSTAR_DENSE_CELLS = 1 << 22


def count_parent_sets(n_candidates: int, k: int) -> int:
    """Number of parent sets of size <= ``k`` drawn from ``n_candidates`` nodes.

    Examples
    --------
    >>> count_parent_sets(36, 3)
    7807
    """
    return _count_parent_sets(int(n_candidates), int(k))


@functools.lru_cache(maxsize=4096)
def _count_parent_sets(m: int, k: int) -> int:
    return sum(math.comb(m, s) for s in range(min(k, m) + 1))


def procedure1(parent_sets: Sequence[Sequence[int]], weights: np.ndarray, n: int) -> list[int]:
    """Dash & Cooper's Procedure 1: approximate ``P_i^*`` with at most ``n`` parents.

    Visit the parent sets in decreasing ``weights`` (ties: the given order) and add a
    set to the union whenever the union stays within ``n`` parents.

    Parameters
    ----------
    parent_sets : sequence of sequences of int
        The admissible parent sets ``P_i^nu`` of one node.
    weights : array of float
        Their (log) posterior weights ``f(X_i, P_i^nu | D)``; only the order matters.
    n : int
        Largest size of the union (>= 0; an ``n`` at least the number of distinct
        members gives the union of every set).

    Returns
    -------
    list of int
        The sorted union ``P_i^*``.

    Raises
    ------
    TypeError, ValueError
        If ``n`` is not a non-negative int, or a member is not a column index (a
        number so large that marking it would exceed the table budget).

    Examples
    --------
    >>> procedure1([(), (0,), (1,), (0, 2)], np.array([0.1, 0.5, 0.2, 0.9]), n=2)
    [0, 2]
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n (largest union size) must be a non-negative int, got {n!r}")
    if n < 0:
        raise ValueError(f"n (largest union size) must be >= 0, got {n}")
    w = np.asarray(weights, dtype=float)
    if isinstance(parent_sets, np.ndarray) and parent_sets.ndim == 2 and parent_sets.dtype.kind == "i":
        sets = np.ascontiguousarray(parent_sets, dtype=np.int64)
        sizes = (sets >= 0).sum(axis=1)
    else:
        lists = [[int(u) for u in ps if u >= 0] for ps in parent_sets]
        sizes = np.array([len(x) for x in lists], dtype=np.int64)
        sets = np.full((len(lists), max(1, int(sizes.max(initial=0)))), -1, dtype=np.int64)
        for i, x in enumerate(lists):
            sets[i, :len(x)] = x
    if w.shape != (sets.shape[0],):
        raise ValueError(f"{sets.shape[0]} parent sets but {w.size} weights")
    if np.isnan(w).any():  # NaN is never visited: the ranking would not end
        raise ValueError(f"weights holds NaN (first at {int(np.argmax(np.isnan(w)))}): give every parent set a "
                         f"number (-inf for probability zero)")
    top = int(sets.max(initial=-1))
    if top >= get_table_budget():
        raise MemoryBudgetError(f"parent_sets holds member {top:,}, over the table budget of {get_table_budget():,} "
                                f"cells: members are column indices (0 .. number of columns - 1)")
    union = np.zeros(top + 1, dtype=np.bool_)
    union[sets[sets >= 0]] = True
    return procedure1_union(sets, np.asarray(sizes, dtype=np.int64), w, min(int(n), top + 1), union, np.zeros(0, dtype=np.int64), 0,
                       np.zeros((1, 1), dtype=np.int64)).tolist()


_MSTAR_ALLOC_FAILED = (
    "building the summary network's CPTs could not allocate working memory ({missing} nodes not built): the "
    "machine has less free memory than the budget assumes; use a smaller n or k, or lower the budget "
    "(budget= or bnexplore.data.set_table_budget) so that such runs are refused before they start")


def _family_logprior(names: list[str], v: int, sets: np.ndarray, sizes: np.ndarray, sp) -> np.ndarray | float:
    """log p_s(X_v, P) of each parent set (rows of ``sets`` padded with -1) under a structure
    prior given as None (uniform: 0), a callable ``f(child, parents)`` or a (p, p) matrix
    (rows parent, columns child) of per-arc log weights."""
    if sp is None:
        return 0.0
    if callable(sp):
        out = np.empty(sets.shape[0])
        for i in range(sets.shape[0]):
            out[i] = float(sp(names[v], tuple(names[u] for u in sets[i, :sizes[i]])))
        return out
    W = sp
    if isinstance(W, pd.DataFrame):
        if set(map(str, W.index)) != set(names) or set(map(str, W.columns)) != set(names):
            raise ValueError("structure_prior DataFrame must have every column name as index and columns")
        W = W.loc[names, names].to_numpy(dtype=float)
    W = np.asarray(W, dtype=float)
    p = len(names)
    if W.shape != (p, p):
        raise ValueError(f"structure_prior matrix must have shape {(p, p)} (rows parent, columns "
                         f"child), got {W.shape}")
    col = np.append(W[:, v], 0.0)  # index -1 (padding) -> 0
    return col[sets].sum(axis=1)


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
    prior : {"K2", "BDeu"}
        Parameter prior of the score (Eq. 6) and of the standard parameters (Eq. 3).
    ess : float
        Equivalent sample size of BDeu.
    structure_prior : None, callable, or (p, p) array / DataFrame
        The modular structure prior ``p_s(X_i, P_i)`` of Assumption 1 in natural
        logs.  ``None`` is uniform over the class (the paper's choice).  A callable
        ``f(child, parents_tuple) -> float`` is called once per family.  A matrix ``W``
        (rows parent, columns child) gives ``log p_s = sum_{u in P_i} W[u, i]``.
    budget : int, optional
        Largest number of cells the enumeration and each CPT of a summary network may
        use; default the package budget (:func:`bnexplore.data.get_table_budget`).
    missing : {"raise", "drop", "keep"}
        What to do with missing cells: refuse them (default), drop the incomplete rows
        (with a warning), or keep them, as described in the Notes.

    Notes
    -----
    **Missing values** (``missing="keep"``).  Every parent set a node averages over is
    scored on the same rows: those where the node and all its candidate parents (the
    nodes on lower levels) are observed, so no parent set can win because its own
    members have more missing rows.  Different nodes may use different rows, so
    :attr:`log_evidence` is then the sum over the nodes of ``log sum_nu exp(w_i^nu)``
    each over its node's rows (not the evidence of one data set), and arc posteriors
    are those of the per-node comparisons.  The standard parameters of predictions
    (Eq. 13) and of M* (Eq. 15) are counted by available case: each family over the
    rows where the node and that family's parents are observed.  See
    :class:`~bnexplore.data.DiscreteData` for the package's policy.

    Attributes
    ----------
    data : DiscreteData
    names : list of str
    k : int
    candidates : list of ndarray
        Admissible parents (column indices) of every node.
    log_evidence : float
        ``log sum_S P(D | S) P(S)`` over the class (with ``p_s`` unnormalised).
    n_families : int
        Number of (node, parent set) families scored.
    n_structures : int
        Number of DAGs in the class (exact integer).

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(500, seed=0)
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
                 budget: int | None = None, missing: str = "raise"):
        if isinstance(max_parents, (bool, np.bool_)) or not isinstance(max_parents, (int, np.integer)):
            raise TypeError(f"max_parents (k) must be a non-negative int, got {max_parents!r}")
        if max_parents < 0:
            raise ValueError(f"max_parents (k) must be >= 0, got {max_parents}")
        _check_prior(prior, ess)
        self.data = as_discrete(data, missing=missing)
        self.names = list(self.data.names)
        self.prior = prior
        self.ess = float(ess)
        self.k = int(max_parents)
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
        mu = [count_parent_sets(len(c), self.k) for c in self.candidates]
        kk = max(min(self.k, max((len(c) for c in self.candidates), default=0)), 1)
        total = sum(mu)
        if total * kk > self.budget:
            worst = int(np.argmax(mu))
            raise MemoryBudgetError(
                f"order averaging with k={self.k} needs {total:,} parent sets ({mu[worst]:,} for "
                f"{self.names[worst]!r} alone), {total * kk:,} cells, over the budget of "
                f"{self.budget:,}: use a smaller max_parents (k), a partial order with fewer "
                f"candidate parents, or raise the budget (budget= or bnexplore.data.set_table_budget)")
        ar = self.data.arities.astype(float)
        if (self.k + 1) * math.log2(ar.max(initial=1.0)) >= 61.5:  # only then can a family's cells overflow
            top = -np.sort(-np.where(lower, ar[None, :], 1.0), axis=1)[:, :self.k]  # largest k candidate arities
            for v in np.flatnonzero(np.log2(top).sum(axis=1) + np.log2(ar) >= 61.5):
                c = self.candidates[v]
                if c.size and self.k:
                    top_v = sorted(self.data.arities[c].tolist(), reverse=True)[:self.k]
                    size = int(np.prod(top_v, dtype=object)) * int(self.data.arities[v])
                    if size >= 2**62:
                        raise MemoryBudgetError(
                            f"parent sets of {self.names[v]!r} can have {size:,} cells, too many to "
                            f"index: use a smaller max_parents (k) or merge states")
        # ---- enumerate, score, keep log space
        self._specs: dict = {}  # Eq. 13 mixtures of each node with missing values (on first use)
        if self.data.missing is None:
            flat, off = _score_order_flat(self.data, self.level, self.k, prior=prior, ess=ess)
        else:
            flat, off = self._score_per_node_rows(mu)
        self._off = off
        self._cand_flat = cand_cols
        self._cand_off = cand_off
        # C(m, s) for m up to the most candidates, s <= k + 1: a parent set's index in its node's list
        m_max = int(n_cand.max(initial=0))
        self._binom = _pascal(m_max, min(self.k, m_max) + 1)
        self._set_arrays: tuple | None = None  # the parent sets, listed on first use (_listed)
        if structure_prior is not None:
            flat = flat.copy()
            sets, sizes = self._flat_sets, self._flat_sizes
            for v in range(p):
                seg = slice(off[v], off[v + 1])
                flat[seg] += self._structure_logprior(v, sets[seg], sizes[seg], structure_prior)
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
    def node_rows(self, node: str | int) -> np.ndarray:
        """Boolean mask of the rows on which ``node``'s parent sets are scored: those
        where the node and all its candidate parents are observed (every row when
        nothing is missing)."""
        v = self.data.index(node)
        return self.data.observed_rows([v, *self.candidates[v].tolist()])

    def _score_per_node_rows(self, mu: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The scores of every node's parent sets, each node on its own rows
        (:meth:`node_rows`): one call of the order-scoring engine per node, on the
        node and its candidates (candidates on level 0, the node on level 1), so the
        sets come in the same order as from one call over the whole order."""
        p = len(self.names)
        off = np.zeros(p + 1, dtype=np.int64)
        np.cumsum(mu, out=off[1:])
        flat = np.zeros(int(off[-1]))
        for v in range(p):
            cols = sorted(self.candidates[v].tolist() + [v])
            rows = self.node_rows(v)
            if not rows.any():  # no row to score on: every set has likelihood 1 (log 0)
                continue
            sub = self.data.subset(cols).take(rows)
            lev = np.where(np.asarray(cols) == v, 1, 0)
            f, o = _score_order_flat(sub, lev, self.k, prior=self.prior, ess=self.ess)
            j = cols.index(v)
            seg = f[o[j]:o[j + 1]]
            assert seg.size == mu[v]
            flat[off[v]:off[v + 1]] = seg
        return flat, off

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
            width = max(1, min(self.k, int(np.diff(self._cand_off).max(initial=0))))
            with PARALLEL_LOCK:
                sets, sizes = all_parent_sets(self._cand_flat, self._cand_off, self.k, self._off, width)
            off = self._off
            self._set_arrays = (sets, sizes, [sets[off[v]:off[v + 1]] for v in range(len(self.names))],
                                [sizes[off[v]:off[v + 1]] for v in range(len(self.names))])
        return self._set_arrays

    def _structure_logprior(self, v, sets, sizes, sp) -> np.ndarray | float:
        return _family_logprior(self.names, v, sets, sizes, sp)

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
        >>> df = bx.networks.load("asia").sample(300, seed=1)
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
        cand = self.candidates[v].tolist() if self.k > 0 else []
        if star is None:
            star = cand
        pos = {u: i for i, u in enumerate(cand)}
        sets = star_sets(len(star), min(self.k, len(star)))
        width = max(1, max((len(g) for g in sets), default=0))
        cp = np.full((len(sets), width), -1, dtype=np.int64)
        for i, g in enumerate(sets):
            cp[i, :len(g)] = [pos[star[e]] for e in g]
        lw = self._logw[v][lex_set_index(cp, len(cand), self.k)]
        w = np.exp(lw - lw.max())
        w /= w.sum()
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
        >>> df = bx.networks.load("asia").sample(300, seed=2)
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
        the other factors of Eq. 13 cancel.

        Returns
        -------
        ndarray (n_rows, r_target), columns follow the target's states.
        """
        t = self.data.index(target)
        test = self._test_columns(X, skip=t)
        relevant = [t] + [v for v in range(len(self.names)) if t in set(self.candidates[v].tolist())
                          and self.k > 0]
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

    def _check_n(self, n) -> int | None:
        if n is None:
            return None
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"n (summary-network size) must be a non-negative int or None, got {n!r}")
        if n < 0:
            raise ValueError(f"n (summary-network size) must be >= 0, got {n}")
        return int(n)

    def summary_table(self, n: int | None = None) -> pd.DataFrame:
        """Per node: ``P_i^*`` after Procedure 1, the number of averaged parent sets and
        the posterior mass they hold in the full class ``L_k(pi)``."""
        n = self._check_n(n)
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
        >>> df = bx.networks.load("asia").sample(300, seed=0)
        >>> avg = bx.averaging.OrderedAveraging(df, max_parents=2)
        >>> net = avg.summary_network(None, lazy=True)       # nothing materialised
        >>> p = net.predict_proba(df.head(3), "lung")        # reads 3 x 2 rows per factor
        >>> bool(abs(p - avg.summary_network(None, lazy=False).predict_proba(df.head(3), "lung")).max() < 1e-12)
        True
        """
        from .networks import BayesNet

        if not (lazy == "auto" or lazy is True or lazy is False):
            raise ValueError(f"lazy must be 'auto', True or False, got {lazy!r}")
        n = self._check_n(n)
        p = len(self.names)
        star_arr, star_len = self._star_array(n)
        stars = [row[:m] for row, m in zip(star_arr.tolist(), star_len.tolist())]
        ar = self.data.arities.tolist()
        all_cells = [math.prod([ar[u] for u in st]) * ar[v] for v, st in enumerate(stars)]
        complete = self.data.missing is None
        if lazy is False and complete:
            self._check_dense(stars, all_cells, n)
            dense = list(range(p))
        elif lazy == "auto" and complete:
            dense = self._dense_nodes(stars, all_cells)
        else:  # lazy, or missing values (counted by available case, row by row)
            dense = []
        parents = {self.names[v]: [self.names[u] for u in stars[v]] for v in range(p)}
        cpts = {}
        if dense:
            use = np.zeros(p, dtype=bool)
            use[dense] = True
            lens = np.where(use, star_len, 0)  # the lazy nodes' CPTs are not built here
            cells = [all_cells[v] if use[v] else ar[v] for v in range(p)]
            built = self._star_cpts(star_arr, lens, cells)
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
        label = name or f"M* (k={self.k}, n={'all' if n is None else n})"
        return BayesNet._from_valid(parents, states, {v: cpts[v] for v in self.names}, name=label)

    def _check_dense(self, stars: list[list[int]], all_cells: list[int], n: int | None) -> None:
        """Refuse (before allocating) a summary network whose full CPTs or their
        working memory exceed the budget."""
        p = len(self.names)
        ar = self.data.arities.tolist()
        total = sum(all_cells)
        lim = min(self.budget, 2**31 - 1)
        for v in range(p) if 3 * max(all_cells, default=0) > lim else ():  # guard every table before building any
            cells = all_cells[v]
            if cells > self.budget:
                check_table_size([ar[u] for u in stars[v]] + [ar[v]],
                                 [self.names[u] for u in stars[v]] + [self.names[v]],
                                 what=f"summary-network CPT of {self.names[v]!r} (n={n})",
                                 budget=self.budget)
            if 3 * cells <= lim:  # the working cells are at most 3 * cells
                continue
            work = mstar_work([ar[u] for u in stars[v]], ar[v], self.k)
            if work > self.budget or work >= 2**31:  # (row keys of the subset tables are 32-bit)
                raise MemoryBudgetError(
                    f"building the M* CPT of {self.names[v]!r} (n={n}) needs {work:,} working cells "
                    f"(the Moebius table and the largest subset's tables), over the budget of "
                    f"{self.budget:,}: use a smaller n or k")
        if total > self.budget:
            raise MemoryBudgetError(
                f"the summary network (n={n}) would need {total:,} CPT cells in all, over the budget "
                f"of {self.budget:,}: use a smaller n or k")
        if max((len(st) for st in stars), default=0) > 62:
            v = next(v for v in range(p) if len(stars[v]) > 62)
            raise MemoryBudgetError(f"{self.names[v]!r} would get {len(stars[v])} parents in M*: at most 62")

    def _dense_nodes(self, stars: list[list[int]], all_cells: list[int]) -> list[int]:
        """The nodes whose M* CPT is built in full by ``lazy="auto"``: at most
        ``MSTAR_DENSE_CELLS`` cells, working memory within the budget, smallest
        first while their total fits the budget."""
        ar = self.data.arities.tolist()
        lim = min(self.budget, 2**31 - 1)
        out, total = [], 0
        for v in sorted(range(len(self.names)), key=lambda v: all_cells[v]):
            cells = all_cells[v]
            if cells > min(self.budget, MSTAR_DENSE_CELLS) or len(stars[v]) > 62 or total + cells > self.budget:
                continue
            if 3 * cells > lim:
                work = mstar_work([ar[u] for u in stars[v]], ar[v], self.k)
                if work > self.budget or work >= 2**31:
                    continue
            out.append(v)
            total += cells
        return sorted(out)

    def _stars(self, n: int | None) -> list[list[int]]:
        """``P_i^*`` of every node: every parent that occurs (``n=None``), or Procedure 1
        with at most ``n`` parents (one parallel kernel)."""
        arr, lens = self._star_array(n)
        return [row[:m] for row, m in zip(arr.tolist(), lens.tolist())]

    def _star_array(self, n: int | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_stars` as rows padded with -1 (at least one column), and their lengths."""
        # [v, u]: u occurs in a parent set of v (every candidate does when k >= 1)
        unions = (self.level[None, :] < self.level[:, None]) & (self.k >= 1)
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
            out = procedure1_all(self._flat_logw, self._off, n, unions, self._cand_flat, self._cand_off, self.k,
                                  self._binom, numba.get_num_threads())
        return out, (out >= 0).sum(axis=1).astype(np.int64)

    @property
    def _bits(self) -> np.ndarray:
        """Row bitsets of every (column, value), built on first use."""
        if self._bitsets is None:
            self._bitsets = _row_bitsets(self.data.columns, self.data.arities.astype(np.int64))
        return self._bitsets

    def _star_cpts(self, star_arr: np.ndarray, star_len: np.ndarray, cells: list[int]) -> list[np.ndarray]:
        """Every node's M* CPT (Eq. 15; the stars as from :meth:`_star_array`, ``cells``
        the CPT sizes), the nodes split into one balanced batch per thread."""
        lens = star_len.tolist()
        p = len(lens)
        ar = self.data.arities.tolist()
        if max(lens, default=0) > 62:
            v = next(v for v in range(p) if lens[v] > 62)
            raise MemoryBudgetError(f"{self.names[v]!r} would get {lens[v]} parents in M*: at most 62")
        cost = [cells[v] + count_parent_sets(lens[v], self.k) for v in range(p)]  # cells, star subsets
        work = max((cells[v] // ar[v] * (ar[v] - 1) for v in range(p)), default=1)  # Psi of Eq. 15
        n_bins = max(1, min(numba.get_num_threads(), p)) if sum(cost) > 50_000 else 1  # small: one thread
        n_bins = max(1, min(n_bins, self.budget // max(work, 1)))  # one Psi per thread, within the budget
        bins: list[list[int]] = [[] for _ in range(n_bins)]
        load = [0] * n_bins
        for v in sorted(range(p), key=lambda v: -cost[v]):  # largest first, to the lightest bin
            b = load.index(min(load))
            bins[b].append(v)
            load[b] += cost[v]
        cpt_off = np.concatenate([[0], np.cumsum(cells)]).astype(np.int64)
        out = np.empty(int(cpt_off[-1]))
        done = np.zeros(p, dtype=np.bool_)
        with PARALLEL_LOCK:
            try:
                rows = TrainingRows(self.data.columns, self._bits, self.data.arities.astype(np.int64))
                sets = ParentSetLists(self._cand_flat, self._cand_off, self._flat_logw, self._off, self._binom)
                eq15_star_cpts(rows, sets, star_arr, star_len, self.k, self.prior == "BDeu", self.ess,
                               bitset_capacity(self.data.n_rows), np.array([v for b in bins for v in b], dtype=np.int64),
                               np.concatenate([[0], np.cumsum([len(b) for b in bins])]).astype(np.int64),
                               cpt_off, psi_scratch(n_bins, work), done, out)
            except (MemoryError, SystemError) as exc:  # an allocation failed inside the parallel region
                raise MemoryError(_MSTAR_ALLOC_FAILED.format(missing=int(p - done.sum()))) from exc
        if not done.all():  # never return a CPT that was not written
            raise MemoryError(_MSTAR_ALLOC_FAILED.format(missing=int(p - done.sum())))
        return [out[cpt_off[v]:cpt_off[v + 1]].reshape(cells[v] // ar[v], ar[v]) for v in range(p)]

    def __repr__(self) -> str:
        return (f"OrderedAveraging({len(self.names)} nodes, {len(self.order_levels)} levels, "
                f"k={self.k}, {self.n_families:,} families, log_evidence={self.log_evidence:.3f})")


# =========================================================================== all orders
def _families_all(data: DiscreteData, k: int, prior: str, ess: float, structure_prior, budget: int,
                  what: str) -> tuple[_order_dp.Families, int]:
    """Every family (node, parent set of at most ``k`` of the other nodes) with its log
    weight, scored by the order-scoring engine once per node (the node alone on the top
    level, so that every other node is a candidate).  Returns (families, kk)."""
    p = data.n_cols
    names = list(data.names)
    kk = min(k, p - 1)
    per_node = count_parent_sets(p - 1, k)
    total = p * per_node
    cells = total * (3 + max(kk, 1))  # log weight, mask, size and the member rows
    if cells > budget:
        raise MemoryBudgetError(
            f"{what} keeps every family's score: {p:,} variables x {per_node:,} parent sets of at most "
            f"k={k} = {total:,} families, {cells:,} cells, over the budget of {budget:,}: use a smaller "
            f"max_parents (k), fewer variables, or raise the budget (budget= or "
            f"bnexplore.data.set_table_budget)")
    scores = np.empty(total)
    for v in range(p):
        level = np.zeros(p, dtype=np.int64)
        level[v] = 1  # v alone above the others: all of them are its candidates
        flat, off = _score_order_flat(data, level, k, prior=prior, ess=ess)
        scores[v * per_node:(v + 1) * per_node] = flat[off[v]:off[v + 1]]
    cand_flat = np.array([u for v in range(p) for u in range(p) if u != v], dtype=np.int64)
    cand_off = (np.arange(p + 1) * (p - 1)).astype(np.int64)
    set_off = (np.arange(p + 1) * per_node).astype(np.int64)
    with PARALLEL_LOCK:
        members, size = all_parent_sets(cand_flat, cand_off, k, set_off, max(kk, 1))
    if structure_prior is not None:
        for v in range(p):
            seg = slice(v * per_node, (v + 1) * per_node)
            scores[seg] += _family_logprior(names, v, members[seg], size[seg], structure_prior)
            if not np.isfinite(scores[seg]).any():
                raise ValueError(f"the structure prior gives every parent set of {names[v]!r} "
                                 f"probability zero: allow at least one (e.g. the empty set)")
            if np.isnan(scores[seg]).any() or np.isposinf(scores[seg]).any():
                raise ValueError(f"the structure prior returned NaN or +inf for {names[v]!r}")
    bits = np.where(members >= 0, np.left_shift(np.uint64(1), np.maximum(members, 0).astype(np.uint64)),
                    np.uint64(0))
    mask = np.bitwise_or.reduce(bits, axis=1).astype(np.uint64)
    return _order_dp.Families(scores, set_off, mask, members, size.astype(np.int64)), kk


def _check_k(max_parents) -> int:
    if isinstance(max_parents, (bool, np.bool_)) or not isinstance(max_parents, (int, np.integer)):
        raise TypeError(f"max_parents (k) must be a non-negative int, got {max_parents!r}")
    if max_parents < 0:
        raise ValueError(f"max_parents (k) must be >= 0, got {max_parents}")
    return int(max_parents)


def _arc_frame(values: np.ndarray, names: list[str]) -> pd.DataFrame:
    return pd.DataFrame(values, index=pd.Index(names, name="parent"), columns=pd.Index(names, name="child"))


def all_orders_cells(n_nodes: int) -> int:
    """Cells (8-byte words) the exact DP over all orders of ``n_nodes`` variables keeps:
    the local order scores of every node (``n 2^(n-1)`` extended floats of two words),
    the forward and backward sums (``2^n`` each) and one superset-sum buffer per thread.

    Examples
    --------
    >>> all_orders_cells(20) * 8 / 2**20 < 400   # MiB for 20 variables
    True
    """
    n = int(n_nodes)
    half = 1 << max(n - 1, 0)
    return 2 * n * half + 4 * (1 << n) + 2 * numba.get_num_threads() * half


class AllOrders:
    """Exact Bayesian model averaging over every node order (Koivisto & Sood 2004).

    Sums over all ``N!`` total orders and, for each, over every DAG consistent with it
    whose nodes have at most ``k`` parents, by dynamic programming over the subsets of
    the variables (``O(N^2 2^N)`` time, ``O(N 2^N)`` memory); the arc posteriors of
    every arc come out at once from forward and backward sums (Koivisto 2006).  Each
    order's term is exactly the one of :class:`OrderedAveraging` for that order.

    **The order-modular prior.**  Orders are uniform and, given an order, the DAGs are
    weighted by the modular structure prior (uniform by default), so the joint prior
    is ``P(<, G) ∝ prod_i p_s(X_i, P_i)`` for every ``G`` consistent with ``<``.
    Summing out the order, a DAG's prior is proportional to ``prod_i p_s(X_i, P_i)``
    *times its number of linear extensions*: it is **not** uniform over DAGs.  DAGs
    with many linear extensions (few arcs, wide and shallow: the empty graph has
    ``N!``) get more prior weight than chains (one linear extension each), and arc
    posteriors lean towards sparser, less ordered structures compared with a uniform
    DAG prior.  This is the price of the exact sum (the prior that makes the order
    sum factorise); MCMC over DAGs is needed for a truly modular DAG prior.

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Complete discrete data; 20 variables fit the default budget (about 210 MiB of tables), each
        further variable doubles it.
    max_parents : int
        ``k``, the largest number of parents of a node.
    prior : {"K2", "BDeu"}
        Parameter prior of the family scores (as :class:`bnexplore.scores.LocalScore`).
    ess : float
        Equivalent sample size of BDeu.
    structure_prior : None, callable, or (p, p) array / DataFrame
        The modular factor ``p_s(X_i, P_i)`` in natural logs, as in
        :class:`OrderedAveraging`: ``None`` (uniform), ``f(child, parents) -> float``,
        or a matrix ``W`` (rows parent, columns child) with ``log p_s = sum_{u in P_i}
        W[u, i]``.
    budget : int, optional
        Largest number of cells (8-byte words) the DP may keep; default the package
        budget (:func:`bnexplore.data.get_table_budget`).  Checked before any table
        is allocated.

    Attributes
    ----------
    log_evidence : float
        ``log (1/N!) sum_< P(D | <)``: the log marginal likelihood under the uniform
        prior over orders, **including** the ``1/N!``, i.e. the log of the mean over
        the orders of ``exp(OrderedAveraging(order).log_evidence)``.
    log_order_sum : float
        ``log sum_< P(D | <)`` (without the ``1/N!``).
    n_families : int
        Number of (node, parent set) families scored.

    Raises
    ------
    MemoryBudgetError
        Before anything is allocated, if the tables (:func:`all_orders_cells`) exceed
        the budget: the tables double with every variable: N = 22 needs about 120 M cells.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(300, seed=0)
    >>> ao = bx.averaging.AllOrders(df, max_parents=2)
    >>> post = ao.arc_posteriors()
    >>> post.shape, bool((post.values >= 0).all() and (post.values <= 1).all())
    ((8, 8), True)
    """

    def __init__(self, data: DiscreteData | pd.DataFrame, max_parents: int = 2, prior: str = "K2",
                 ess: float = 1.0, structure_prior: Callable | np.ndarray | pd.DataFrame | None = None,
                 budget: int | None = None):
        self.k = _check_k(max_parents)
        _check_prior(prior, ess)
        self.data = as_discrete(data)
        self.names = list(self.data.names)
        self.prior = prior
        self.ess = float(ess)
        self.budget = get_table_budget() if budget is None else _check_budget(budget, "budget")
        p = len(self.names)
        if p < 1:
            raise ValueError("AllOrders needs at least one variable")
        if p > 40:  # 2^40 sets: far beyond any budget, refused before computing sizes
            raise MemoryBudgetError(f"exact averaging over all orders of {p} variables needs 2^{p} tables: "
                                    f"use order_mcmc for more than about 20 variables")
        cells = all_orders_cells(p)
        if cells > self.budget:
            raise MemoryBudgetError(
                f"exact averaging over all orders of {p} variables keeps {cells:,} cells "
                f"({cells * 8 / 2**30:.2f} GiB: local order scores of every node over 2^{p - 1} sets, "
                f"forward and backward sums over 2^{p}), over the budget of {self.budget:,}: use "
                f"bnexplore.averaging.order_mcmc, fewer variables, or raise the budget (budget= or "
                f"bnexplore.data.set_table_budget)")
        self._fam, _ = _families_all(self.data, self.k, prior, self.ess, structure_prior, self.budget,
                                     "exact averaging over all orders")
        self.n_families = int(self._fam.log_weight.size)
        with PARALLEL_LOCK:
            _, _, L_m, L_e, R_m, R_e = _order_dp.dp_tables(self._fam, p)  # the alpha tables are dropped here
        self._LR = (L_m, L_e, R_m, R_e)
        full = (1 << p) - 1
        self.log_order_sum = float(_order_dp.ext_to_log(L_m[full], L_e[full]))
        self.log_evidence = self.log_order_sum - math.lgamma(p + 1)
        self._post: np.ndarray | None = None

    def arc_posteriors(self) -> pd.DataFrame:
        """Posterior probability of every arc ``P(X_u -> X_v | D)`` over all orders.

        Returns
        -------
        DataFrame
            Rows are parents, columns children; the diagonal is 0.

        Examples
        --------
        >>> import bnexplore as bx
        >>> df = bx.networks.load("asia").sample(300, seed=0)
        >>> post = bx.averaging.AllOrders(df, max_parents=1).arc_posteriors()
        >>> float(post.loc["either", "xray"]) > 0.5
        True
        """
        if self._post is None:
            with PARALLEL_LOCK:
                post = _order_dp.dp_arc_posteriors(self._fam, len(self.names), *self._LR)
            self._post = np.clip(post, 0.0, 1.0)
        return _arc_frame(self._post.copy(), self.names)

    def __repr__(self) -> str:
        return (f"AllOrders({len(self.names)} nodes, k={self.k}, {self.n_families:,} families, "
                f"log_evidence={self.log_evidence:.3f})")


# =========================================================================== order MCMC
def _split_rhat(x: np.ndarray) -> np.ndarray:
    """Split R-hat (Gelman et al.; Vehtari et al. 2021 without rank normalisation) of
    draws ``x`` (chains, draws, ...) over the leading two axes; 1 where every draw is
    equal, inf where the chains are constant but differ."""
    m, n = x.shape[:2]
    half = n // 2
    if half < 2:
        return np.full(x.shape[2:], np.nan)
    parts = np.concatenate([x[:, :half], x[:, n - half:]], axis=0)  # 2m chains of length half
    means = parts.mean(axis=1)
    W = parts.var(axis=1, ddof=1).mean(axis=0)
    B_n = means.var(axis=0, ddof=1)
    var_plus = (half - 1) / half * W + B_n
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(var_plus / W)
    r = np.where(W > 0, r, np.where(B_n > 0, np.inf, 1.0))
    return r


def _ess(x: np.ndarray) -> np.ndarray:
    """Effective sample size of draws ``x`` (chains, draws, ...) by Geyer's initial
    monotone sequence on the multi-chain autocorrelation (as Stan and ArviZ); the
    number of draws where every draw is equal."""
    m, n = x.shape[:2]
    if n < 4:
        return np.full(x.shape[2:], float(m * n))
    if x.ndim > 3:
        return _ess(x.reshape(m, n, -1)).reshape(x.shape[2:])
    if x.ndim == 3 and x.shape[2] > 64:  # in blocks of quantities: the FFT tables stay small
        return np.concatenate([_ess(x[:, :, a:a + 64]) for a in range(0, x.shape[2], 64)])
    import scipy.fft

    # draws on the last, contiguous axis: an FFT along a strided axis is several times slower
    xc = np.ascontiguousarray(np.moveaxis(x - x.mean(axis=1, keepdims=True), 1, -1))
    size = scipy.fft.next_fast_len(2 * n - 1, real=True)
    f = scipy.fft.rfft(xc, n=size, axis=-1)
    f = f.real ** 2 + f.imag ** 2
    acov = np.moveaxis(scipy.fft.irfft(f, n=size, axis=-1)[..., :n] / n, -1, 1)  # (m, n, ...) biased autocovariances
    chain_var = acov[:, 0] * n / (n - 1)
    W = chain_var.mean(axis=0)
    var_plus = W * (n - 1) / n
    if m > 1:
        var_plus = var_plus + x.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = 1.0 - (W - acov.mean(axis=0)) / var_plus  # (n, ...)
    rho[0] = 1.0
    n_pairs = n // 2
    P = rho[0:2 * n_pairs:2] + rho[1:2 * n_pairs:2]  # (n_pairs, ...)
    positive = np.cumprod(P > 0, axis=0).astype(bool)  # up to the first non-positive pair
    P = np.where(positive, P, 0.0)
    P = np.minimum.accumulate(np.where(positive, P, np.inf), axis=0)  # monotone
    P = np.where(positive, P, 0.0)
    tau = -1.0 + 2.0 * P.sum(axis=0)
    tau = np.maximum(tau, 1.0 / math.log10(max(m * n, 10)))  # as Stan: antithetic chains cap the ESS
    with np.errstate(divide="ignore", invalid="ignore"):
        ess = m * n / tau
    return np.where(var_plus > 0, ess, float(m * n))


class OrderMCMC:
    """Result of :func:`order_mcmc`: samples of orders, arc posteriors and diagnostics.

    Statistics use the draws recorded after ``burn_in`` iterations of each chain.

    Attributes
    ----------
    names : list of str
    k, n_chains, thin, burn_in : int
    n_iter : int
        Iterations run per chain (grows with :meth:`resume`).
    traces : ndarray (n_chains, n_draws)
        The log order score ``log P(D | <)`` every ``thin`` iterations, burn-in included.
    acceptance_rate : ndarray (n_chains,)
    orders : list of list of str
        The current order of each chain.
    stderr : DataFrame
        Monte Carlo standard error of each arc posterior (posterior sd of the
        Rao-Blackwellised draws over the square root of their ESS).  It is estimated
        from the draws: posterior mass in orders that no chain visited (total
        probability below about 1 / ESS) is invisible to it, so arcs with tiny
        posteriors can be off by more than a few standard errors (0 when every draw
        agrees).
    rhat : DataFrame
        Split R-hat of each arc (1.0 for arcs whose draws never vary).
    ess : DataFrame
        Effective sample size of each arc.
    rhat_max : float
        The largest R-hat over the arcs and the log order score (inf when chains sit
        in different states that none of them leaves: an arc certain in one chain and
        impossible in another).
    log_score_rhat, log_score_ess : float
        The diagnostics of the trace of the log order score.
    """

    def __init__(self, names, k, fam, look, state, rec, n_iter, thin, burn_in, p_adjacent, sample_dags,
                 accepted, seed):
        self.names = list(names)
        self.k = k
        self._fam, self._look, self._state, self._rec = fam, look, state, rec
        self.n_iter = n_iter
        self.n_chains = state.order.shape[0]
        self.thin = thin
        self.burn_in = burn_in
        self.p_adjacent = p_adjacent
        self.sample_dags = sample_dags
        self._accepted = accepted
        self.seed = seed
        self._stats: dict | None = None

    # ----------------------------------------------------------------- draws
    @property
    def n_draws(self) -> int:
        return self.n_iter // self.thin

    @property
    def _first(self) -> int:
        """First draw after the burn-in (at least 2 draws kept when there are any)."""
        return min(-(-self.burn_in // self.thin), max(self.n_draws - 2, 0))

    @property
    def traces(self) -> np.ndarray:
        return self._rec.log_score[:, :self.n_draws].copy()

    @property
    def acceptance_rate(self) -> np.ndarray:
        return self._accepted / max(self.n_iter, 1)

    @property
    def orders(self) -> list[list[str]]:
        return [[self.names[v] for v in row] for row in self._state.order]

    def _kept_arcs(self) -> np.ndarray:
        return self._rec.arc[:, self._first:self.n_draws]

    def _compute(self) -> dict:
        if self._stats is None:
            x = self._kept_arcs()
            p = len(self.names)
            flat = x.reshape(x.shape[0], x.shape[1], p * p)
            mean = flat.mean(axis=(0, 1))
            n_all = flat.shape[0] * flat.shape[1]
            sd = np.sqrt(flat.var(axis=(0, 1), ddof=1)) if n_all > 1 else np.zeros(p * p)
            # arcs whose draws all agree to 1e-10 (most of them: impossible or certain under every
            # kept order) have no Monte Carlo error worth a diagnostic; the others get one
            ess = np.full(p * p, float(n_all))
            rhat = np.ones(p * p)
            vary = np.flatnonzero(sd > 1e-10)
            if vary.size:
                ess[vary] = _ess(flat[:, :, vary])
                rhat[vary] = _split_rhat(flat[:, :, vary])
            with np.errstate(divide="ignore", invalid="ignore"):
                se = np.where(sd > 1e-10, sd / np.sqrt(ess), 0.0)
            tr = self._rec.log_score[:, self._first:self.n_draws][:, :, None]
            self._stats = {"mean": mean.reshape(p, p), "se": se.reshape(p, p), "ess": ess.reshape(p, p),
                           "rhat": rhat.reshape(p, p), "trace_rhat": float(_split_rhat(tr)[0]),
                           "trace_ess": float(_ess(tr)[0])}
        return self._stats

    def arc_posteriors(self) -> pd.DataFrame:
        """Monte Carlo estimate of every arc posterior ``P(X_u -> X_v | D)`` over orders.

        Each kept order contributes its exact arc probabilities given the order
        (Rao-Blackwellisation); rows parent, columns child.
        """
        return _arc_frame(np.clip(self._compute()["mean"], 0.0, 1.0), self.names)

    @property
    def stderr(self) -> pd.DataFrame:
        return _arc_frame(self._compute()["se"], self.names)

    @property
    def rhat(self) -> pd.DataFrame:
        return _arc_frame(self._compute()["rhat"], self.names)

    @property
    def ess(self) -> pd.DataFrame:
        return _arc_frame(self._compute()["ess"], self.names)

    @property
    def log_score_rhat(self) -> float:
        return self._compute()["trace_rhat"]

    @property
    def log_score_ess(self) -> float:
        return self._compute()["trace_ess"]

    @property
    def rhat_max(self) -> float:
        r = self._compute()["rhat"]
        vals = np.append(r[~np.isnan(r)], self.log_score_rhat)
        vals = vals[~np.isnan(vals)]
        return float(vals.max()) if vals.size else float("nan")

    def converged(self, rhat: float = 1.05) -> bool:
        """Whether every arc's and the log score's split R-hat is below ``rhat``."""
        return bool(self.rhat_max < rhat)

    def dags(self, chain: int | None = None) -> list:
        """The DAGs drawn from the kept orders (``sample_dags=True``), one per draw, as
        networkx DiGraphs; of one chain, or of all chains one after another."""
        import networkx as nx

        if not self.sample_dags:
            raise ValueError("no DAG samples: run order_mcmc with sample_dags=True")
        chains = range(self.n_chains) if chain is None else [int(chain)]
        out = []
        for c in chains:
            for r in range(self._first, self.n_draws):
                g = nx.DiGraph()
                g.add_nodes_from(self.names)
                for v, f in enumerate(self._rec.dag_family[c, r]):
                    for u in self._fam.members[f, :self._fam.size[f]]:
                        g.add_edge(self.names[u], self.names[v])
                out.append(g)
        return out

    def summary(self) -> pd.DataFrame:
        """One row per arc: posterior, standard error, R-hat and ESS, most probable first."""
        st = self._compute()
        p = len(self.names)
        u, v = np.nonzero(~np.eye(p, dtype=bool))
        df = pd.DataFrame({"parent": [self.names[i] for i in u], "child": [self.names[j] for j in v],
                           "posterior": st["mean"][u, v], "stderr": st["se"][u, v], "rhat": st["rhat"][u, v],
                           "ess": st["ess"][u, v]})
        return df.sort_values("posterior", ascending=False, kind="stable").reset_index(drop=True)

    # ----------------------------------------------------------------- more iterations
    def resume(self, n_iter: int, progress: bool | Callable[[int, int], None] = False) -> "OrderMCMC":
        """Run every chain ``n_iter`` more iterations from where it stopped (in place;
        returns self).  The draws go on as if the run had been one longer run."""
        n_iter = _check_count(n_iter, "n_iter")
        self._rec = _grow_record(self._rec, (self.n_iter + n_iter) // self.thin)
        _advance(self, n_iter, progress)
        return self

    def __repr__(self) -> str:
        return (f"OrderMCMC({len(self.names)} nodes, k={self.k}, {self.n_chains} chains x {self.n_iter:,} "
                f"iterations, {self.n_draws - self._first} draws kept per chain, R-hat max {self.rhat_max:.3f})")


def _check_count(x, name: str, minimum: int = 1) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {x!r}")
    if x < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {x}")
    return int(x)


def _new_record(n_chains: int, n_draws: int, p: int) -> _order_dp.ChainRecord:
    return _order_dp.ChainRecord(np.full((n_chains, n_draws), np.nan), np.zeros((n_chains, n_draws, p, p)),
                                 np.full((n_chains, n_draws, p), -1, dtype=np.int64))


def _grow_record(rec: _order_dp.ChainRecord, n_draws: int) -> _order_dp.ChainRecord:
    n_chains, old, p = rec.dag_family.shape
    if n_draws <= old:
        return rec
    new = _new_record(n_chains, n_draws, p)
    new.log_score[:, :old] = rec.log_score
    new.arc[:, :old] = rec.arc
    new.dag_family[:, :old] = rec.dag_family
    return new


def _advance(res: OrderMCMC, n_iter: int, progress) -> None:
    """Run ``n_iter`` iterations of every chain of ``res`` in chunks (progress between them)."""
    bar = None
    callback = progress if callable(progress) else None
    if progress is True:
        from tqdm.auto import tqdm
        bar = tqdm(total=n_iter, desc="order MCMC", unit="it")
    chunk = max(1000, min(n_iter // 50 + 1, 20_000))
    done = 0
    try:
        while done < n_iter:
            step = min(chunk, n_iter - done)
            with PARALLEL_LOCK:
                _order_dp.run_chains(res._fam, res._look, res._state, step, res.thin, res.n_iter, res.p_adjacent,
                                     res._rec, res.n_iter // res.thin, True, res.sample_dags, res._accepted)
            res.n_iter += step
            res._stats = None
            done += step
            if bar is not None:
                bar.update(step)
            if callback is not None:
                callback(done, n_iter)
    finally:
        if bar is not None:
            bar.close()


def order_mcmc(data: DiscreteData | pd.DataFrame, max_parents: int = 2, n_iter: int = 10_000, n_chains: int = 4,
               seed: int | None = 0, prior: str = "K2", ess: float = 1.0,
               structure_prior: Callable | np.ndarray | pd.DataFrame | None = None, thin: int | None = None,
               burn_in: int | None = None, p_adjacent: float = 0.5, sample_dags: bool = False,
               progress: bool | Callable[[int, int], None] = False, budget: int | None = None) -> OrderMCMC:
    """Order MCMC (Friedman & Koller 2003): sample node orders, average over their DAGs.

    A Metropolis-Hastings chain over total orders targets ``P(<) P(D | <)`` with the
    orders uniform and ``P(D | <)`` the exact sum over the DAGs consistent with the
    order whose nodes have at most ``k`` parents (as :class:`OrderedAveraging`).  The
    prior over DAGs is therefore the order-modular prior of :class:`AllOrders`, and
    with enough iterations the arc posteriors converge to its exact ones.  A move
    swaps two adjacent nodes (probability ``p_adjacent``) or two random ones; both
    proposals are symmetric.  Every family score is computed once (by the
    order-scoring engine), and a move recomputes the local order scores of the nodes
    between the swapped positions only.  Chains start from dispersed orders (pairs of
    chains from a random order and its reverse) and run in parallel.

    Parameters
    ----------
    data : DataFrame or DiscreteData
        Complete discrete data, at most 64 variables.
    max_parents : int
        ``k``.
    n_iter : int
        Iterations (proposed moves) per chain, burn-in included.
    n_chains : int
        Independent chains (at least 2 for R-hat).
    seed : int or None
        Seeds the starting orders and every chain's random stream.
    prior, ess, structure_prior
        As in :class:`AllOrders`.
    thin : int, optional
        Record a draw every ``thin`` iterations (default: about 1,000 draws per chain).
    burn_in : int, optional
        Iterations of each chain left out of the statistics (default ``n_iter // 4``).
    p_adjacent : float
        Probability of proposing an adjacent swap rather than a random pair.
    sample_dags : bool
        Draw one DAG from each recorded order (see :meth:`OrderMCMC.dags`).
    progress : bool or callable
        A tqdm bar, or ``f(done, total)`` called between chunks of iterations.
    budget : int, optional
        Cell budget of the family table and the recorded draws (draws x N^2).

    Returns
    -------
    OrderMCMC
        ``.arc_posteriors()``, ``.stderr``, ``.rhat``, ``.ess``, ``.traces``;
        :meth:`OrderMCMC.resume` runs further.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(300, seed=0)
    >>> res = bx.averaging.order_mcmc(df, max_parents=2, n_iter=4_000, n_chains=2, seed=1)
    >>> res.arc_posteriors().shape, res.traces.shape
    ((8, 8), (2, 1000))
    """
    k = _check_k(max_parents)
    _check_prior(prior, ess)
    n_iter = _check_count(n_iter, "n_iter")
    n_chains = _check_count(n_chains, "n_chains")
    thin = max(1, n_iter // 1000) if thin is None else _check_count(thin, "thin")
    burn_in = n_iter // 4 if burn_in is None else _check_count(burn_in, "burn_in", 0)
    if not (isinstance(p_adjacent, (int, float, np.floating)) and 0.0 <= float(p_adjacent) <= 1.0):
        raise ValueError(f"p_adjacent must be a probability in [0, 1], got {p_adjacent!r}")
    data = as_discrete(data)
    names = list(data.names)
    p = len(names)
    if p < 1:
        raise ValueError("order_mcmc needs at least one variable")
    if p > 64:
        raise ValueError(f"order_mcmc handles at most 64 variables (sets are 64-bit masks), got {p}: "
                         f"select features first")
    budget = get_table_budget() if budget is None else _check_budget(budget, "budget")
    n_draws = n_iter // thin
    draw_cells = n_chains * n_draws * (p * p + p + 1)
    if draw_cells > budget:
        raise MemoryBudgetError(
            f"order MCMC would record {n_chains} chains x {n_draws:,} draws of the {p} x {p} arc "
            f"probabilities, {draw_cells:,} cells, over the budget of {budget:,}: use a larger thin, "
            f"fewer iterations or chains, or raise the budget")
    fam, _ = _families_all(data, k, prior, float(ess), structure_prior, budget, "order MCMC")
    # colex layout: a parent set inside the predecessors is looked up, not searched for
    fam, look = _order_dp.colex_families(fam, p, k, _pascal(p, min(k, max(p - 1, 0)) + 1))
    # dispersed starts: a random order and its reverse, for each pair of chains
    rng = np.random.default_rng(seed)
    order = np.empty((n_chains, p), dtype=np.int64)
    for c in range(n_chains):
        order[c] = rng.permutation(p) if c % 2 == 0 else order[c - 1][::-1]
    streams = np.random.SeedSequence(rng.integers(2**63)).generate_state(n_chains, dtype=np.uint64)
    streams[streams == 0] = np.uint64(0x9E3779B97F4A7C15)  # xorshift needs a non-zero state
    state = _order_dp.ChainState(order, _order_dp.initial_scores(fam, look, order), streams)
    res = OrderMCMC(names, k, fam, look, state, _new_record(n_chains, n_draws, p), 0, thin, burn_in,
                    float(p_adjacent), bool(sample_dags), np.zeros(n_chains, dtype=np.int64), seed)
    _advance(res, n_iter, progress)
    return res


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
