"""Structural EM (Friedman 1997, 1998) with a Gibbs-sampling E-step.

With missing cells the score of a structure ``G`` needs the counts ``N_ijk`` of the
hidden completion.  Structural EM alternates

* **E-step**: complete the data from the current model ``(G_t, theta_t)``: every missing
  cell ``x_{r,v}`` is redrawn from its full conditional (Gibbs sampling, Geman & Geman
  1984)

      P(x_v = k | x_{-v}) ∝ theta_v[pa_v(r), k] * prod_{c in ch(v)} theta_c[pa_c(r | x_v = k), x_c(r)]     (1)

  for ``sweeps`` sweeps over the missing cells, starting from the previous completion;
* **M-step**: search a structure on the completed data, starting from ``G_t`` (Friedman's
  SEM improves the expected score from the current structure), and set ``theta_{t+1}``
  to the posterior-mean parameters (Dash & Cooper Eq. 3) of the expected counts

      E[N_ijk] ≈ (1 / S) sum_{s=1..S} N_ijk(completion s)                                     (2)

  averaged over the completions of the E-step's sweeps (Monte-Carlo EM, Wei & Tanner 1990).

A single completion per structure search makes this a stochastic approximation of
SEM's expected statistics (stochastic EM, Celeux & Diebolt 1985); the iterations stop when an M-step keeps the structure it started from, or after
``max_iter``.  The final model reports the observed-data log-likelihood

      LL_t = sum_r log P(x_{r, observed} | G_t, theta_t)                                          (3)

with every missing cell summed out exactly (:func:`bnexplore.classifiers._missing.cpt_log_joint`).

Glossary
--------
X
    The completed codes (n, p): observed cells as given, missing cells the current draw.
miss
    The missing cells (n, p).
parents, cpts
    The current structure (sorted parent tuples per node) and its CPTs (q, r), rows in
    mixed radix over the parents (last fastest), as :func:`bnexplore.scores.family_counts`.

References
----------
N. Friedman. Learning belief networks in the presence of missing values and hidden
variables. ICML 1997.  N. Friedman. The Bayesian structural EM algorithm. UAI 1998.
G. Celeux, J. Diebolt. The SEM algorithm: a probabilistic teacher algorithm derived from
the EM algorithm for the mixture problem. Computational Statistics Quarterly 2, 1985.
"""
from __future__ import annotations

from typing import Callable, Sequence

import networkx as nx
import numpy as np

from .classifiers._missing import cpt_log_joint
from .data.core import DiscreteData
from .scores import LocalScore, standard_parameters

__all__ = ["structural_em", "em_parameters", "observed_log_likelihood"]


def _config(X: np.ndarray, parents: Sequence[int], arities: np.ndarray) -> np.ndarray:
    """Mixed-radix parent configuration of every row (last parent fastest)."""
    key = np.zeros(X.shape[0], dtype=np.int64)
    for u in parents:
        key = key * int(arities[u]) + X[:, u]
    return key


def _counts(X: np.ndarray, v: int, parents: Sequence[int], arities: np.ndarray,
            rows: np.ndarray | None = None) -> np.ndarray:
    """Count table (q, r) of ``v`` given ``parents`` over the completed rows (or ``rows``)."""
    q = int(np.prod([arities[u] for u in parents])) if len(parents) else 1
    r = int(arities[v])
    Xs = X if rows is None else X[rows]
    key = _config(Xs, parents, arities) * r + Xs[:, v]
    return np.bincount(key, minlength=q * r).reshape(q, r)


def _cpts(counts: list[np.ndarray], prior: str, ess: float) -> list[np.ndarray]:
    """Posterior-mean CPTs of (possibly fractional) expected counts, Eq. (2)."""
    return [standard_parameters(c, prior, ess) for c in counts]


def _gibbs_sweep(X, miss_rows, parents, children, cpts, arities, rng) -> None:
    """One sweep of Eq. (1) over every missing cell, in place."""
    for v, rows in miss_rows:
        if not rows.size:
            continue
        r = int(arities[v])
        Xr = X[rows]
        logp = np.empty((rows.size, r))
        with np.errstate(divide="ignore"):
            own = np.log(cpts[v])[_config(Xr, parents[v], arities)]          # (m, r)
            logp[:] = own
            for k in range(r):
                Xr[:, v] = k
                for c in children[v]:
                    logp[:, k] += np.log(cpts[c][_config(Xr, parents[c], arities), Xr[:, c]])
        logp -= logp.max(axis=1, keepdims=True)
        p = np.exp(logp)
        cum = np.cumsum(p, axis=1)
        u = rng.random(rows.size) * cum[:, -1]
        X[rows, v] = np.minimum((cum < u[:, None]).sum(axis=1), r - 1)


def observed_log_likelihood(data: DiscreteData, parents: Sequence[Sequence[int]],
                            cpts: Sequence[np.ndarray]) -> float:
    """Eq. (3): ``sum_r log P(x_{r, observed})`` of a network, missing cells summed out."""
    ar = data.arities
    factors = []
    for v, pa in enumerate(parents):
        shape = [int(ar[u]) for u in pa] + [int(ar[v])]
        table = np.moveaxis(np.asarray(cpts[v]).reshape(shape), -1, 0)
        with np.errstate(divide="ignore"):
            factors.append(((v, *pa), np.log(table)))
    codes = data.codes.astype(np.int64)
    if data.missing is not None:
        codes = np.where(data.missing, -1, codes)
    return float(cpt_log_joint(factors, codes, [int(a) for a in ar] + [1], 1).sum())


class _Completion:
    """The completed data and the Gibbs machinery of one EM run."""

    def __init__(self, data: DiscreteData, rng: np.random.Generator):
        self.data = data
        self.rng = rng
        self.ar = data.arities.astype(np.int64)
        self.miss = data.missing
        self.X = data.codes.astype(np.int64)
        p = data.n_cols
        self.miss_rows = [(v, np.flatnonzero(self.miss[:, v])) for v in range(p)]
        # start: every missing cell drawn from its column's observed frequencies
        for v, rows in self.miss_rows:
            if rows.size:
                seen = self.X[~self.miss[:, v], v]
                freq = np.bincount(seen, minlength=int(self.ar[v])) + 1.0
                self.X[rows, v] = rng.choice(int(self.ar[v]), size=rows.size, p=freq / freq.sum())

    def expected_counts(self, parents, cpts, sweeps: int) -> list[np.ndarray]:
        """``sweeps`` Gibbs sweeps under the network; Eq. (2) averaged over them."""
        p = len(parents)
        children = [[c for c in range(p) if v in parents[c]] for v in range(p)]
        acc = [np.zeros((int(np.prod([self.ar[u] for u in pa])) if pa else 1, int(self.ar[v])))
               for v, pa in enumerate(parents)]
        for _ in range(sweeps):
            _gibbs_sweep(self.X, self.miss_rows, parents, children, cpts, self.ar, self.rng)
            for v, pa in enumerate(parents):
                acc[v] += _counts(self.X, v, pa, self.ar)
        return [a / sweeps for a in acc]

    def completed(self) -> DiscreteData:
        d = self.data
        return DiscreteData(self.X, d.names, d.states, target=d.target)


def _parents_of(dag: nx.DiGraph, data: DiscreteData) -> list[tuple[int, ...]]:
    return [tuple(sorted(data.index(u) for u in dag.predecessors(v))) for v in data.names]


def _available_cpts(data: DiscreteData, parents, prior: str, ess: float) -> list[np.ndarray]:
    """CPTs counted by available case (each family over the rows it is observed in)."""
    X = data.codes.astype(np.int64)
    out = []
    for v, pa in enumerate(parents):
        rows = data.observed_rows([v, *pa])
        out.append(standard_parameters(_counts(X, v, pa, data.arities, rows), prior, ess))
    return out


def em_parameters(data: DiscreteData, dag: nx.DiGraph, prior: str = "K2", ess: float = 1.0,
                  max_iter: int = 20, sweeps: int = 5, tol: float = 1e-3,
                  random_state=None) -> tuple[dict, int, list[float]]:
    """Parameters of a fixed structure by Monte-Carlo EM (Eq. 1-3).

    Returns ``(cpts, n_iter, log_likelihoods)``: ``cpts`` maps a node to its (q, r)
    table (rows over its parents in sorted column order), the log-likelihood of Eq. (3)
    after each iteration.  Stops when it rises by less than ``tol`` per row.
    """
    from ._validation import check_random_state
    rng = check_random_state(random_state, "random_state")
    parents = _parents_of(dag, data)
    cpts = _available_cpts(data, parents, prior, ess)
    if data.missing is None:
        return _as_named(data, cpts), 0, [observed_log_likelihood(data, parents, cpts)]
    comp = _Completion(data, rng)
    lls: list[float] = []
    for it in range(max_iter):
        cpts = _cpts(comp.expected_counts(parents, cpts, sweeps), prior, ess)
        lls.append(observed_log_likelihood(data, parents, cpts))
        if it and abs(lls[-1] - lls[-2]) < tol * data.n_rows:
            break
    return _as_named(data, cpts), len(lls), lls


def _as_named(data: DiscreteData, cpts) -> dict:
    return {data.names[v]: c for v, c in enumerate(cpts)}


def structural_em(data: DiscreteData, search: Callable[[LocalScore, nx.DiGraph | None], object],
                  start: nx.DiGraph | None, prior: str, ess: float, max_iter: int = 10,
                  sweeps: int = 3, random_state=None, log_likelihood: bool = True):
    """Structural EM around a structure search (Eq. 1-3); returns the last search's result.

    ``search(ls, start)`` runs the search on the scorer ``ls`` from ``start`` and returns a
    :class:`bnexplore.search.SearchResult`.  The first structure is searched by available
    case (:mod:`bnexplore._available_case`).  The result's ``extra`` holds ``n_iter``,
    ``log_likelihood`` (Eq. 3 of the final model, its missing cells summed out exactly),
    ``converged`` (an M-step kept its structure), ``cpts`` (node -> table, parents in sorted
    column order) and ``missing = "em"``.
    """
    from ._validation import check_random_state
    rng = check_random_state(random_state, "random_state")
    res = search(LocalScore(data, prior=prior, ess=ess, missing="keep"), start)
    parents = _parents_of(res.dag, data)
    cpts = _available_cpts(data, parents, prior, ess)
    comp = _Completion(data, rng)
    converged = False
    n_iter = 0
    for it in range(max_iter):
        n_iter = it + 1
        comp.expected_counts(parents, cpts, sweeps)          # E-step: a fresh completion
        done = comp.completed()
        res = search(LocalScore(done, prior=prior, ess=ess), res.dag)
        new = _parents_of(res.dag, data)
        cpts = [standard_parameters(_counts(comp.X, v, pa, comp.ar), prior, ess) for v, pa in enumerate(new)]
        if new == parents:
            converged = True
            parents = new
            break
        parents = new
    # the final parameters: Monte-Carlo expected counts under the final structure
    cpts = _cpts(comp.expected_counts(parents, cpts, sweeps), prior, ess)
    ll = observed_log_likelihood(data, parents, cpts) if log_likelihood else float("nan")
    res.extra.update({"missing": "em", "n_iter": n_iter, "log_likelihood": ll,
                      "converged": converged, "cpts": _as_named(data, cpts)})
    return res
