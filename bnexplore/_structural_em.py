"""Structural EM (Friedman 1997, 1998) around a structure search, with an exact E-step.

With missing cells the score of a structure ``G`` needs the counts ``N_ijk`` of the
hidden completion.  Structural EM alternates, from the structure the search finds by
available case (:mod:`bnexplore._available_case`):

* **parameters**: EM of the current structure ``G_t`` with the exact E-step of
  :mod:`bnexplore._em_counts` (each row's missing cells summed out component by
  component), ``theta_t``;
* **E-step**: ``S`` exact draws of every row's missing cells from
  ``P(x_M | x_O; G_t, theta_t)``; every family's expected counts are estimated from them
  (Eq. 5 of :mod:`bnexplore._em_counts`: a row whose family is observed counts 1, any
  other ``1 / S`` at each draw);
* **M-step**: the search, started from ``G_t``, scores every family by K2/BDeu of its
  expected counts (Eq. 6 there, :class:`ExpectedScore`): Friedman's expected score at the
  expected sufficient statistics,

      Q(G : G_t, theta_t) = sum_v score(v | pa_G(v); counts of Eq. 5 there),                       (Q)

  and takes only moves that raise (Q), so ``Q(G_{t+1}) >= Q(G_t)`` on the same draws
  (Friedman's condition for the score to improve; a search restarted from the empty
  graph does not have it);

until an M-step keeps its structure (no move raises (Q) by more than the search's
``tol``: ``converged``) or after ``max_iter`` iterations.  A kept structure's parameters
are already EM's fixed point, so another iteration would change only the draws.

The result reports the observed-data log-likelihood

      LL_t = sum_r log P(x_{r, observed} | G_t, theta_t)                                          (3)

of every iteration's network (exact: missing cells summed out), the final one, its
parameters and the number of iterations.

Glossary
--------
code
    The codes (n, p) with -1 in the missing cells.
draws
    (S, n, p): the observed cells and ``S`` draws of the missing ones.
parents, cpts
    The current structure (sorted parent tuples per node) and its CPTs (q, r), rows in
    mixed radix over the parents (last fastest), as :func:`bnexplore.scores.family_counts`.

References
----------
N. Friedman. Learning belief networks in the presence of missing values and hidden
variables. ICML 1997.  N. Friedman. The Bayesian structural EM algorithm. UAI 1998.
"""
from __future__ import annotations

from typing import Callable, Sequence

import networkx as nx
import numpy as np

from ._em_counts import _family_score, _row_ll_eliminated, estep, fit_parameters
from ._order_em import N_DRAWS
from .data.core import DiscreteData, MemoryBudgetError, get_table_budget
from .scores import LocalScore

__all__ = ["structural_em", "em_parameters", "observed_log_likelihood", "ExpectedScore"]


def _parents_of(dag: nx.DiGraph, data: DiscreteData) -> list[tuple[int, ...]]:
    return [tuple(sorted(data.index(u) for u in dag.predecessors(v))) for v in data.names]


def _code(data: DiscreteData) -> np.ndarray:
    codes = data.codes.astype(np.int64)
    return codes if data.missing is None else np.where(data.missing, -1, codes)


def observed_log_likelihood(data: DiscreteData, parents: Sequence[Sequence[int]],
                            cpts: Sequence[np.ndarray]) -> float:
    """Eq. (3): ``sum_r log P(x_{r, observed})`` of a network, missing cells summed out
    by variable elimination (:func:`bnexplore.classifiers._missing.cpt_log_joint`)."""
    return float(_row_ll_eliminated(_code(data), data.arities, parents, cpts).sum())


class ExpectedScore(LocalScore):
    """Family scores of expected counts: K2/BDeu (Eq. 6 of :mod:`bnexplore._em_counts`) of
    the counts of Eq. 5 there, from the observed cells ``code`` and the draws ``draws``.

    A :class:`~bnexplore.scores.LocalScore` over the first draw (complete data, so the
    searches take their complete-data paths) whose every family score is its own.
    """

    def __init__(self, data: DiscreteData, code: np.ndarray, draws: np.ndarray, prior: str = "K2",
                 ess: float = 1.0):
        super().__init__(DiscreteData(draws[0], data.names, data.states, target=data.target), prior=prior,
                         ess=ess)
        self._code = np.ascontiguousarray(code, dtype=np.int64)
        self._draws = np.ascontiguousarray(draws, dtype=np.int64)

    def score_idx(self, c: int, ps: tuple[int, ...]) -> float:
        return LocalScore.score_idx(self, c, ps)

    def _family(self, c: int, ps) -> float:
        return float(_family_score(self._code, self._draws, int(c), np.asarray(ps, dtype=np.int64), self._arities,
                                   self._bdeu, self.ess))

    def _computed(self, key: tuple[int, tuple[int, ...]]) -> float:
        c, ps = key
        if len(ps) > self._safe_parents:
            self._check_keys(ps)
        val = self._family(c, ps)
        if self.use_cache:
            self._cache[key] = val
        return val

    def _batch(self, c: int, members, arr: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        return np.array([self._family(c, arr[i, :sizes[i]]) for i in range(arr.shape[0])], dtype=np.float64)


def em_parameters(data: DiscreteData, dag: nx.DiGraph, prior: str = "K2", ess: float = 1.0,
                  max_iter: int = 100, tol: float = 1e-6) -> tuple[dict, int, list[float]]:
    """Parameters of a fixed structure by EM with the exact E-step
    (:func:`bnexplore._em_counts.fit_parameters`).

    Returns ``(cpts, n_iter, log_likelihoods)``: ``cpts`` maps a node to its (q, r) table
    (rows over its parents in sorted column order); the log-likelihood of Eq. (3) of the
    starting CPTs (each family counted where it is observed), then after each iteration.
    """
    parents = _parents_of(dag, data)
    cpts, lls, _ = fit_parameters(_code(data), data.arities, parents, prior, ess, max_iter=max_iter, tol=tol)
    return _as_named(data, cpts), len(lls) - 1, lls


def _as_named(data: DiscreteData, cpts) -> dict:
    return {data.names[v]: c for v, c in enumerate(cpts)}


def structural_em(data: DiscreteData, search: Callable[[LocalScore, nx.DiGraph | None], object],
                  start: nx.DiGraph | None, prior: str, ess: float, max_iter: int = 10,
                  n_draws: int = N_DRAWS, random_state=None):
    """Structural EM around a structure search (module docstring); returns the last
    search's result.

    ``search(ls, start)`` runs the search on the scorer ``ls`` from ``start`` and returns a
    :class:`bnexplore.search.SearchResult`.  The result's ``extra`` holds ``n_iter``,
    ``log_likelihood`` (Eq. 3 of the final network with its EM parameters),
    ``log_likelihoods`` (of each iteration's network), ``converged`` (an M-step kept its
    structure), ``cpts`` (node -> table, parents in sorted column order),
    ``sampled_rows`` (rows of the last E-step whose missing cells were Gibbs-sampled,
    not enumerated), ``iterations`` (per iteration: ``log_likelihood`` and ``em_steps`` of
    ``G_t``'s parameter EM, ``expected_score_start`` = (Q) of ``G_t`` and
    ``expected_score`` = (Q) of the M-step's structure on the same draws, its ``edges``)
    and ``missing = "em"``.
    """
    from ._validation import check_random_state
    rng = check_random_state(random_state, "random_state")
    cells = n_draws * data.n_rows * data.n_cols
    if cells > get_table_budget():
        raise MemoryBudgetError(
            f"structural EM keeps {n_draws} draws of the {data.n_rows:,} x {data.n_cols:,} data, {cells:,} "
            f"cells, over the budget of {get_table_budget():,}: use missing='keep', fewer rows or columns, "
            f"or raise the budget (bnexplore.data.set_table_budget)")
    code = _code(data)
    res = search(LocalScore(data, prior=prior, ess=ess, missing="keep"), start)
    parents = _parents_of(res.dag, data)
    cpts = None
    lls: list[float] = []
    history: list[dict] = []
    converged = False
    n_iter = n_sampled = 0
    for it in range(max_iter):
        n_iter = it + 1
        plans: dict = {}     # G_t's eliminations of the rows whose components are sampled
        cpts, fit_lls, _ = fit_parameters(code, data.arities, parents, prior, ess, cpts=cpts, plans=plans)
        lls.append(fit_lls[-1])
        _, _, draws, n_sampled = estep(code, data.arities, parents, cpts, n_draws=n_draws,
                                       seed=int(rng.integers(2**31)), plans=plans)
        es = ExpectedScore(data, code, draws, prior, ess)
        q_start = es.total(res.dag)
        res = search(es, res.dag)        # from G_t: every move raises (Q)
        new = _parents_of(res.dag, data)
        history.append({"log_likelihood": fit_lls[-1], "em_steps": len(fit_lls) - 1, "expected_score_start": q_start,
                        "expected_score": res.score, "edges": sorted(res.dag.edges)})
        if new == parents:
            converged = True
            break
        cpts = [c if a == b else None for c, a, b in zip(cpts, parents, new)]
        parents = new
    if not converged:   # the last search moved: the parameters of its structure
        cpts, fit_lls, _ = fit_parameters(code, data.arities, parents, prior, ess, cpts=cpts)
        lls.append(fit_lls[-1])
    res.extra.update({"missing": "em", "n_iter": n_iter, "log_likelihood": lls[-1], "log_likelihoods": lls,
                      "converged": converged, "cpts": _as_named(data, cpts), "sampled_rows": n_sampled,
                      "iterations": history})
    return res
