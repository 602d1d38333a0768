"""Order averaging over incomplete data by structural EM (``OrderedAveraging(missing="em")``).

The family weights of :mod:`bnexplore._order_available` (available case) start it; then,
for ``t = 0, 1, ..``:

1. ``G_t``: the most probable DAG of the class under the current weights (each node's
   best parent set plus structure prior: the class factorises over the nodes);
2. parameter EM of ``G_t`` with the exact E-step (:func:`bnexplore._em_counts.fit_parameters`,
   warm-started from the CPTs of the families ``G_{t-1}`` shares);
3. ``S`` exact draws of every row's missing cells from ``P(x_M | x_O; G_t, theta_t)`` and
   every family's weight = K2/BDeu of its expected counts (Eq. 5-6 of
   :mod:`bnexplore._em_counts`);

until ``G_{t+1} = G_t`` (converged) or ``max_iter`` iterations.  The sums over the class
(arc posteriors, evidence, samples) then use these weights: Friedman's (1997) structural
EM score, every family scored on expected sufficient statistics of all the rows, rather
than on the rows where it is observed.

Glossary
--------
w
    The flat family weights (a node's parent sets at ``set_off[v]:set_off[v + 1]``).
lp
    The structure prior's log terms laid out as ``w`` (zeros when uniform).
"""
from __future__ import annotations

import numpy as np

from ._em_counts import estep, expected_weights, fit_parameters, walk_cells
from ._order_available import uses_threads
from ._validation import check_random_state

__all__ = ["order_em_weights", "EMInfo"]

#: draws of each row's missing cells per E-step (a power of two: the weights 1 / S are exact)
N_DRAWS = 16


class EMInfo(dict):
    """What structural EM did: ``n_iter``, ``converged``, ``log_likelihood`` (the observed-data
    log-likelihood of the last network with its EM parameters), ``log_likelihoods`` (that of
    each iteration's network), ``em_steps`` (parameter-EM iterations of each), ``n_draws``,
    ``sampled_rows`` (rows whose missing cells were Gibbs-sampled, not enumerated, in the
    last E-step: :data:`bnexplore._em_counts.MAX_COMPONENT_STATES`),
    ``parents`` and ``cpts`` (the last E-step's network, node -> parent names and node ->
    (q, r) CPT, rows over the parents in column order, last fastest) and ``seed`` (of its
    draws: :func:`bnexplore._em_counts.estep` with them gives the draws again)."""


def _best_parents(w: np.ndarray, lp: np.ndarray, set_off: np.ndarray, sets: np.ndarray,
                  sizes: np.ndarray) -> list[tuple[int, ...]]:
    out = []
    for v in range(set_off.size - 1):
        a, b = int(set_off[v]), int(set_off[v + 1])
        i = a + int(np.argmax(w[a:b] + lp[a:b]))
        out.append(tuple(sorted(int(u) for u in sets[i, :sizes[i]])))
    return out


def order_em_weights(code: np.ndarray, arities: np.ndarray, names, cand_flat, cand_off, max_parents: int,
                     set_off, sets, sizes, prior: str, ess: float, w0: np.ndarray, lp: np.ndarray,
                     max_iter: int, random_state, n_draws: int = N_DRAWS
                     ) -> tuple[np.ndarray, EMInfo, np.ndarray]:
    """Structural EM's family weights (module docstring) from the available-case weights
    ``w0``; ``code`` has -1 in the missing cells.  Returns ``(w, info, draws)``: ``draws``
    (S, rows, columns) are the last E-step's, on which ``w`` was scored."""
    rng = check_random_state(random_state, "random_state")
    threads = uses_threads(int(set_off[-1]), code.shape[0] * n_draws)
    w = w0
    parents = _best_parents(w, lp, set_off, sets, sizes)
    cpts = None
    info = EMInfo(n_iter=0, converged=False, log_likelihoods=[], em_steps=[], n_draws=n_draws)
    for _ in range(max_iter):
        plans: dict = {}     # G_t's eliminations of the rows whose components are sampled
        cpts, lls, _ = fit_parameters(code, arities, parents, prior, ess, cpts=cpts, plans=plans)
        seed = int(rng.integers(2**31))
        _, _, draws, n_sampled = estep(code, arities, parents, cpts, n_draws=n_draws, seed=seed, plans=plans)
        w = expected_weights(code, draws, arities, cand_flat, cand_off, max_parents, set_off, prior == "BDeu",
                             ess, threads=threads)
        info["n_iter"] += 1
        info["log_likelihoods"].append(lls[-1])
        info["em_steps"].append(len(lls) - 1)
        info["sampled_rows"] = n_sampled
        used, used_cpts, used_draws = parents, cpts, draws
        new = _best_parents(w, lp, set_off, sets, sizes)
        if new == parents:
            info["converged"] = True
            break
        cpts = [c if a == b else None for c, a, b in zip(cpts, parents, new)]
        parents = new
    info["log_likelihood"] = info["log_likelihoods"][-1]
    info["parents"] = {names[v]: [names[u] for u in pa] for v, pa in enumerate(used)}
    info["cpts"] = {names[v]: c for v, c in enumerate(used_cpts)}
    info["seed"] = seed
    return w, info, used_draws


def em_cells(n_rows: int, n_cols: int, max_parents: int, n_families: int, n_draws: int = N_DRAWS) -> int:
    """Cells of working memory of :func:`order_em_weights`: the draws and the walk."""
    threads = uses_threads(n_families, n_rows * n_draws)
    return n_draws * n_rows * n_cols + walk_cells(n_rows, n_draws, max_parents, threads)
