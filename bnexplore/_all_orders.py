"""Averaging over every node order: the fronts of the exact sum and of order MCMC.

:class:`AllOrders` sums over all ``N!`` total orders and, for each, over the DAGs
consistent with it with at most ``k`` parents per node (Koivisto & Sood 2004); every
order's term is the one of ``bnexplore.averaging.OrderedAveraging`` for that order,

    P(D | <) = prod_v alpha_v(U_v),   alpha_v(U) = sum_{G subset U, |G| <= k} exp w_v(G),

(``U_v`` the nodes before ``v``, ``w_v(G)`` the family's log score plus log structure
prior), and :func:`order_mcmc` samples the orders with probability proportional to
``P(D | <)`` (Friedman & Koller 2003).  The mathematics of both, and their kernels,
are in ``bnexplore._order_dp``; this module scores the families, checks the budget,
and reports arc posteriors and the chains' diagnostics: split R-hat (Gelman et al.;
Vehtari et al. 2021)

    R-hat = sqrt(((n - 1) / n W + B / n) / W)

over the 2m half-chains (``W`` the mean within-chain variance, ``B / n`` the variance of
the chain means), and the effective sample size ``m n / tau`` by Geyer's initial
monotone sequence on the multi-chain autocorrelation.

Glossary
--------
families
    Every (node, parent set of at most ``max_parents`` other nodes) with its log weight,
    as ``bnexplore._order_dp.Families``.
draws
    The states of a chain recorded every ``thin`` iterations, burn-in included.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numba
import numpy as np
import pandas as pd

from ._deprecation import renamed
from . import _order_dp
from ._order_posterior import all_parent_sets, count_parent_sets, family_log_prior
from ._parallel import PARALLEL_LOCK
from ._validation import check_int, check_probability, check_random_state
from .data.core import (DEFAULT_TABLE_BUDGET, DiscreteData, MemoryBudgetError, _check_budget, as_discrete,
                        get_table_budget)
from ._order_scores import _pascal
from .scores import _check_prior, _score_order_flat

__all__ = ["AllOrders", "OrderMCMC", "order_mcmc", "all_orders_cells", "all_orders_budget"]


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
            scores[seg] += family_log_prior(names, v, members[seg], size[seg], structure_prior)
            if not np.isfinite(scores[seg]).any():
                raise ValueError(f"the structure prior gives every parent set of {names[v]!r} "
                                 f"probability zero: allow at least one (e.g. the empty set)")
            if np.isnan(scores[seg]).any() or np.isposinf(scores[seg]).any():
                raise ValueError(f"the structure prior returned NaN or +inf for {names[v]!r}")
    bits = np.where(members >= 0, np.left_shift(np.uint64(1), np.maximum(members, 0).astype(np.uint64)),
                    np.uint64(0))
    mask = np.bitwise_or.reduce(bits, axis=1).astype(np.uint64)
    return _order_dp.Families(scores, set_off, mask, members, size.astype(np.int64)), kk


def _arc_frame(values: np.ndarray, names: list[str]) -> pd.DataFrame:
    return pd.DataFrame(values, index=pd.Index(names, name="parent"), columns=pd.Index(names, name="child"))


def all_orders_cells(n_nodes: int) -> int:
    """Cells (8-byte words) the exact DP over all orders of ``n_nodes`` variables keeps:
    the local order scores of every node (``n 2^(n-1)`` extended floats of a word and a
    half: a float64 mantissa and an int32 exponent), the forward and backward sums
    (``2^n`` each, two words) and one superset-sum buffer per thread.

    Examples
    --------
    >>> all_orders_cells(20) * 8 / 2**20 < 400   # MiB for 20 variables
    True
    """
    n = int(n_nodes)
    half = 1 << max(n - 1, 0)
    return n * half + (n * half + 1) // 2 + 4 * (1 << n) + 2 * numba.get_num_threads() * half


#: the share of the available memory the exact DP takes by default, and its cap in cells
#: (32 GiB): N = 25 needs 6.2 GiB, N = 26 13 GiB, N = 27 27 GiB
MEMORY_SHARE = 0.75
MEMORY_CAP_CELLS = 1 << 32


def _available_memory() -> int | None:
    """Bytes of memory available to a new allocation (psutil, else /proc/meminfo's
    MemAvailable), or None when neither tells."""
    try:
        import psutil
        return int(psutil.virtual_memory().available)
    except (ImportError, OSError, AttributeError):
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def all_orders_budget() -> int:
    """Default cell budget of :class:`AllOrders`: ``MEMORY_SHARE`` (3/4) of the memory
    available now, at most ``MEMORY_CAP_CELLS`` (2^32 cells, 32 GiB), and never less
    than the package budget (:func:`bnexplore.data.get_table_budget`).  A package budget
    set with :func:`bnexplore.data.set_table_budget` (anything but its default) is used
    as it is, and so is the package budget where the available memory cannot be read.

    Examples
    --------
    >>> from bnexplore.data import get_table_budget
    >>> all_orders_budget() >= get_table_budget()
    True
    """
    package = get_table_budget()
    avail = _available_memory()
    if package != DEFAULT_TABLE_BUDGET or avail is None:
        return package
    return max(package, min(MEMORY_CAP_CELLS, int(MEMORY_SHARE * avail) // 8))


def _complete_data(data, who: str) -> DiscreteData:
    """``data`` as DiscreteData, refused (naming what to do) when a value is missing:
    the order-space engines score every family on every row."""
    if isinstance(data, pd.DataFrame):
        n, fix = int(data.isna().values.sum()), "df.dropna()"
    elif isinstance(data, DiscreteData) and data.missing is not None:
        n, fix = int(data.missing.sum()), "data.complete_cases()"
    else:
        n, fix = 0, ""
    if n:
        raise ValueError(f"{who} needs complete data, got {n} missing values: drop the "
                         f"incomplete rows first ({fix})")
    return as_discrete(data)


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
        Complete discrete data; 20 variables need about 170 MiB of tables, each further
        variable doubles it (N = 25: 6.2 GiB).
    max_parents : int
        ``k``, the largest number of parents of a node.
    prior : {"K2", "BDeu"}, default "K2"
        Parameter prior of the family scores (as :class:`bnexplore.scores.LocalScore`).
    ess : float, default 1.0
        Equivalent sample size of BDeu.
    structure_prior : None, callable, or (p, p) array / DataFrame
        The modular factor ``p_s(X_i, P_i)`` in natural logs, as in
        :class:`OrderedAveraging`: ``None`` (uniform), ``f(child, parents) -> float``,
        or a matrix ``W`` (rows parent, columns child) with ``log p_s = sum_{u in P_i}
        W[u, i]``.
    budget : int, optional
        Largest number of cells (8-byte words) the DP may keep; default
        :func:`all_orders_budget`: three quarters of the memory available when the
        object is made, at most 32 GiB (or the package budget, when
        :func:`bnexplore.data.set_table_budget` has set one).  Checked before any
        table is allocated.

    Attributes
    ----------
    max_parents : int
        ``k`` (:attr:`k` is its former name, kept).
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
        the budget: the tables double with every variable: N = 25 needs about 830 M
        cells (6.2 GiB).

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.networks.load("asia").sample(300, random_state=0)
    >>> ao = bx.averaging.AllOrders(df, max_parents=2)
    >>> post = ao.arc_posteriors()
    >>> post.shape, bool((post.values >= 0).all() and (post.values <= 1).all())
    ((8, 8), True)
    """

    #: the prior over structures the posteriors are computed under (see the class docstring)
    graph_prior = "order-modular"

    def __init__(self, data: DiscreteData | pd.DataFrame, max_parents: int = 2, prior: str = "K2",
                 ess: float = 1.0, structure_prior: Callable | np.ndarray | pd.DataFrame | None = None,
                 budget: int | None = None):
        self.max_parents = check_int(max_parents, "max_parents", low=0)
        _check_prior(prior, ess)
        self.data = _complete_data(data, "AllOrders")
        self.names = list(self.data.names)
        self.prior = prior
        self.ess = float(ess)
        self.budget = all_orders_budget() if budget is None else _check_budget(budget, "budget")
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
                f"forward and backward sums over 2^{p}), over the budget of {self.budget:,} "
                f"({self.budget * 8 / 2**30:.2f} GiB{self._budget_origin(budget)}): use "
                f"bnexplore.averaging.order_mcmc, fewer variables, or raise the budget (budget= or "
                f"bnexplore.data.set_table_budget)")
        self._fam, _ = _families_all(self.data, self.max_parents, prior, self.ess, structure_prior, self.budget,
                                     "exact averaging over all orders")
        self.n_families = int(self._fam.log_weight.size)
        with PARALLEL_LOCK:
            _, _, L_m, L_e, R_m, R_e = _order_dp.dp_tables(self._fam, p)  # the alpha tables are dropped here
        self._LR = (L_m, L_e, R_m, R_e)
        full = (1 << p) - 1
        self.log_order_sum = float(_order_dp.ext_to_log(L_m[full], L_e[full]))
        self.log_evidence = self.log_order_sum - math.lgamma(p + 1)
        self._post: np.ndarray | None = None

    def _budget_origin(self, budget) -> str:
        """Where the budget came from, for the refusal message."""
        if budget is not None:
            return ""
        if self.budget == get_table_budget():
            return ": the package budget"
        return f": {MEMORY_SHARE:.0%} of the memory available"

    def arc_posteriors(self) -> pd.DataFrame:
        """Posterior probability of every arc ``P(X_u -> X_v | D)`` over all orders.

        Returns
        -------
        DataFrame
            Rows are parents, columns children; the diagonal is 0.

        Examples
        --------
        >>> import bnexplore as bx
        >>> df = bx.networks.load("asia").sample(300, random_state=0)
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
        return (f"AllOrders({len(self.names)} nodes, k={self.max_parents}, {self.n_families:,} families, "
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
    max_parents, n_chains, thin, burn_in : int
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
        Rank-normalised split R-hat of each arc (Vehtari et al. 2021; 1.0 for arcs whose
        draws never vary).
    ess : DataFrame
        Bulk effective sample size of each arc.
    rhat_max : float
        The largest R-hat over the arcs and the log order score (inf when chains sit
        in different states that none of them leaves: an arc certain in one chain and
        impossible in another).
    log_score_rhat, log_score_ess : float
        The diagnostics of the trace of the log order score.
    graph_prior : str
        "order-modular": the prior over structures of the arc posteriors (see :class:`AllOrders`).
    """

    graph_prior = "order-modular"
    _label = "order MCMC"

    def __init__(self, names, max_parents, fam, look, state, rec, n_iter, thin, burn_in, p_adjacent, sample_dags,
                 accepted, seed):
        self.names = list(names)
        self.max_parents = max_parents
        self._fam, self._look, self._state, self._rec = fam, look, state, rec
        self.n_iter = n_iter
        self.n_chains = len(accepted)
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
            from ._diagnostics import bulk_ess, rank_rhat  # (it imports _ess from here)
            if vary.size:
                ess[vary] = bulk_ess(flat[:, :, vary])
                rhat[vary] = rank_rhat(flat[:, :, vary])
            with np.errstate(divide="ignore", invalid="ignore"):
                se = np.where(sd > 1e-10, sd / np.sqrt(ess), 0.0)
            tr = self._rec.log_score[:, self._first:self.n_draws][:, :, None]
            self._stats = {"mean": mean.reshape(p, p), "se": se.reshape(p, p), "ess": ess.reshape(p, p),
                           "rhat": rhat.reshape(p, p), "trace_rhat": float(rank_rhat(tr)[0]),
                           "trace_ess": float(bulk_ess(tr)[0])}
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

    @property
    def convergence(self) -> str:
        """Plain statement of whether the chains converged (R-hat < 1.05 on every arc and
        the log score), with the largest R-hat and the smallest bulk ESS."""
        ess = self._compute()["ess"]
        p = len(self.names)
        low = float(ess[~np.eye(p, dtype=bool)].min()) if p > 1 else float("nan")
        word = "converged" if self.converged(1.05) else "NOT converged"
        return (f"{word}: largest rank-normalised R-hat {self.rhat_max:.4g} (threshold 1.05), smallest "
                f"arc bulk ESS {low:.0f}, {self.n_chains} chains x {self.n_iter:,} iterations")

    def _run_chunk(self, step: int) -> None:
        """Advance every chain ``step`` iterations, recording into the record."""
        _order_dp.run_chains(self._fam, self._look, self._state, step, self.thin, self.n_iter, self.p_adjacent,
                             self._rec, self.n_iter // self.thin, True, self.sample_dags, self._accepted)

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
        n_iter = check_int(n_iter, "n_iter", low=1)
        self._rec = _grow_record(self._rec, (self.n_iter + n_iter) // self.thin)
        _advance(self, n_iter, progress)
        return self

    def __repr__(self) -> str:
        return (f"OrderMCMC({len(self.names)} nodes, k={self.max_parents}, {self.n_chains} chains x {self.n_iter:,} "
                f"iterations, {self.n_draws - self._first} draws kept per chain, R-hat max {self.rhat_max:.3f})")


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
        bar = tqdm(total=n_iter, desc=res._label, unit="it")
    chunk = max(1000, min(n_iter // 50 + 1, 20_000))
    done = 0
    try:
        while done < n_iter:
            step = min(chunk, n_iter - done)
            with PARALLEL_LOCK:
                res._run_chunk(step)
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


class _Chains(NamedTuple):
    """A chain sampler's checked inputs and tables (:func:`_chain_tables`)."""
    data: DiscreteData
    names: list
    fam: np.ndarray
    look: np.ndarray
    n_draws: int
    max_parents: int
    n_iter: int
    n_chains: int
    thin: int
    burn_in: int
    rng: np.random.Generator


def _chain_tables(data, max_parents, prior: str, ess: float, structure_prior, n_iter, n_chains, thin, burn_in,
                  random_state, budget, who: str, what: str) -> _Chains:
    """The checks and tables every chain sampler over DAGs needs, each input checked once:
    the arguments the samplers share, complete data (:func:`_complete_data`, ``who`` the
    function's name), the record's budget before the family table is built, then the
    families in the colex layout and their Lookup (``what`` names the sampler in messages)."""
    max_parents = check_int(max_parents, "max_parents", low=0)
    _check_prior(prior, ess)
    n_iter = check_int(n_iter, "n_iter", low=1)
    n_chains = check_int(n_chains, "n_chains", low=1)
    thin = max(1, n_iter // 1000) if thin is None else check_int(thin, "thin", low=1)
    burn_in = n_iter // 4 if burn_in is None else check_int(burn_in, "burn_in", low=0)
    rng = check_random_state(random_state, "random_state")
    data = _complete_data(data, who)
    names = list(data.names)
    p = len(names)
    if p < 1:
        raise ValueError(f"{what} needs at least one variable")
    if p > 64:
        raise ValueError(f"{what} handles at most 64 variables (sets are 64-bit masks), got {p}: "
                         f"select features first")
    budget = get_table_budget() if budget is None else _check_budget(budget, "budget")
    n_draws = n_iter // thin
    draw_cells = n_chains * n_draws * (p * p + p + 1)
    if draw_cells > budget:
        raise MemoryBudgetError(
            f"{what} would record {n_chains} chains x {n_draws:,} draws of the {p} x {p} arc "
            f"probabilities, {draw_cells:,} cells, over the budget of {budget:,}: use a larger thin, "
            f"fewer iterations or chains, or raise the budget")
    fam, _ = _families_all(data, max_parents, prior, float(ess), structure_prior, budget, what)
    # colex layout: a parent set inside the predecessors is looked up, not searched for
    fam, look = _order_dp.colex_families(fam, p, max_parents, _pascal(p, min(max_parents, max(p - 1, 0)) + 1))
    return _Chains(data, names, fam, look, n_draws, max_parents, n_iter, n_chains, thin, burn_in, rng)


def _chain_streams(rng: np.random.Generator, n_chains: int) -> np.ndarray:
    """One non-zero xorshift64* state per chain, drawn from ``rng``."""
    streams = np.random.SeedSequence(rng.integers(2**63)).generate_state(n_chains, dtype=np.uint64)
    streams[streams == 0] = np.uint64(0x9E3779B97F4A7C15)  # xorshift needs a non-zero state
    return streams


@renamed(seed="random_state")
def order_mcmc(data: DiscreteData | pd.DataFrame, max_parents: int = 2, n_iter: int = 10_000, n_chains: int = 4,
               random_state: int | None = 0, prior: str = "K2", ess: float = 1.0,
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
    random_state : int or None
        Seeds the starting orders and every chain's random stream.
    prior, ess, structure_prior
        As in :class:`AllOrders` (default "K2", 1.0 and None).
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
    >>> df = bx.networks.load("asia").sample(300, random_state=0)
    >>> res = bx.averaging.order_mcmc(df, max_parents=2, n_iter=4_000, n_chains=2, random_state=1)
    >>> res.arc_posteriors().shape, res.traces.shape
    ((8, 8), (2, 1000))
    """
    p_adjacent = check_probability(p_adjacent, "p_adjacent")
    ch = _chain_tables(data, max_parents, prior, ess, structure_prior, n_iter, n_chains, thin, burn_in, random_state,
                       budget, "order_mcmc", "order MCMC")
    p = len(ch.names)
    # dispersed starts: a random order and its reverse, for each pair of chains
    order = np.empty((ch.n_chains, p), dtype=np.int64)
    for c in range(ch.n_chains):
        order[c] = ch.rng.permutation(p) if c % 2 == 0 else order[c - 1][::-1]
    streams = _chain_streams(ch.rng, ch.n_chains)
    state = _order_dp.ChainState(order, _order_dp.initial_scores(ch.fam, ch.look, order), streams)
    res = OrderMCMC(ch.names, ch.max_parents, ch.fam, ch.look, state, _new_record(ch.n_chains, ch.n_draws, p), 0,
                    ch.thin, ch.burn_in, float(p_adjacent), bool(sample_dags), np.zeros(ch.n_chains, dtype=np.int64),
                    random_state)
    _advance(res, ch.n_iter, progress)
    return res
