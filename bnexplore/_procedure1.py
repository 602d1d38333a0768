"""Procedure 1 of Dash & Cooper: the parents ``P_i^*`` of a node in the summary network.

Dash & Cooper, "Model averaging with discrete Bayesian network classifiers" (AISTATS
2003).  The summary network :math:`M^*` (Theorem 2) gives node ``X_i`` the union
``P_i^*`` of all its admissible parent sets; Procedure 1 keeps it to at most ``n``
parents by a greedy union in decreasing posterior order:

    P_i^* = {}
    for nu in the parent sets of X_i, by decreasing f(X_i, P_i^nu | D)
              (ties: increasing index in the node's list):
        if |P_i^* + P_i^nu| <= n:  P_i^* = P_i^* + P_i^nu
    (stop once |P_i^*| = min(n, number of parents that occur in any set))

Only the order of the weights matters, and the procedure usually stops after the
first few dozen sets of a list of millions, so the sets are not sorted: they are
drawn ``T`` at a time by a bounded insertion buffer (:func:`next_best`), ``T``
growing fourfold each round.

Glossary
--------
weight
    ``f(X_i, P_i^nu | D)`` in log space: ``w_i^nu`` of ``bnexplore._order_posterior``.
union
    A boolean mark per column: the parents that occur in some set of the node (every
    candidate when ``max_parents >= 1``).
candidates, max_parents, binom
    As in ``bnexplore._order_posterior``: a set is found from its index in the node's
    list (:func:`~bnexplore._order_posterior.unrank_parent_set`) when the sets are
    not listed.
"""
from __future__ import annotations

import numba
import numpy as np

from ._order_posterior import unrank_parent_set

__all__ = ["next_best", "procedure1_union", "procedure1_all"]


@numba.njit(cache=True, nogil=True)
def next_best(weight, T, last_weight, last_index, out):
    """Indices of the (up to) ``T`` sets that come next after (``last_weight``,
    ``last_index``) in the order (decreasing weight, then increasing index), in that
    order; returns how many.  Once ``T`` are held, a set below the T-th weight is
    passed over at one comparison."""
    m = 0
    thr = -np.inf
    for i in range(weight.shape[0]):
        wi = weight[i]
        if wi < thr:
            continue
        if wi > last_weight or (wi == last_weight and i <= last_index):
            continue  # already visited
        if m == T:
            wl = weight[out[m - 1]]
            if wi < wl or (wi == wl and i > out[m - 1]):
                continue
            m -= 1
        # insertion into the sorted buffer
        j = m
        while j > 0 and (weight[out[j - 1]] < wi or (weight[out[j - 1]] == wi and out[j - 1] > i)):
            out[j] = out[j - 1]
            j -= 1
        out[j] = i
        m += 1
        if m == T:
            thr = weight[out[m - 1]]
    return m


@numba.njit(cache=True, nogil=True)
def procedure1_union(sets, sizes, weight, n, union, candidates, max_parents, binom):
    """Procedure 1: union of the parent sets in decreasing weight, each added while
    the union stays within ``n`` parents, until it has min(n, number of parents in
    ``union``); returns its members, sorted.  The sets are the rows of ``sets``
    (``sizes`` members), or with ``sets`` empty the
    :func:`~bnexplore._order_posterior.lex_parent_sets` list of ``candidates`` (sizes
    <= ``max_parents``), each found from its index."""
    n_all = union.sum()
    limit = min(n, n_all)
    if limit == n_all:  # every set fits: the union of them all, without ranking
        return np.nonzero(union)[0]
    listed = sets.shape[0] > 0
    members = np.empty(max(max_parents, 1), dtype=np.int64)
    inside = np.zeros(union.shape[0], dtype=np.bool_)
    size = 0
    T = 32
    last_weight = np.inf
    last_index = -1
    buf = np.empty(min(T, weight.shape[0]), dtype=np.int64)
    while size < limit:
        T = min(T, weight.shape[0])
        if buf.shape[0] < T:
            buf = np.empty(T, dtype=np.int64)
        m = next_best(weight, T, last_weight, last_index, buf)
        if m == 0:
            break
        for t in range(m):
            nu = buf[t]
            if size >= limit:
                break
            if listed:
                s = sizes[nu]
                for a in range(s):
                    members[a] = sets[nu, a]
            else:
                s = unrank_parent_set(nu, candidates.shape[0], max_parents, binom, candidates, members)
            new = 0
            for a in range(s):
                if not inside[members[a]]:
                    new += 1
            if size + new <= n:
                for a in range(s):
                    inside[members[a]] = True
                size += new
        last_weight = weight[buf[m - 1]]
        last_index = buf[m - 1]
        T *= 4
    return np.nonzero(inside)[0]


@numba.njit(cache=True, nogil=True)
def procedure1_all(cand_flat, cand_off, log_weight, set_off, binom, n, unions, max_parents, n_threads):
    """Procedure 1 for every node (the fields of
    :class:`~bnexplore._order_posterior.ParentSetLists` as plain arrays: called from
    Python, where numba types a namedtuple argument at every call; ``unions[v]`` marks
    the parents that occur in node v's sets): row v of the result lists P_v^* (padded
    with -1).  The nodes are dealt to ``n_threads`` threads in turn, most sets first."""
    p = set_off.shape[0] - 1
    out = np.full((p, max(n, 1)), -1, dtype=np.int64)
    none = np.zeros((0, 1), dtype=np.int64)
    nt = max(1, min(p, n_threads))
    big = np.argsort(set_off[:-1] - set_off[1:])  # most sets first, dealt round the threads in turn
    for t in numba.prange(nt):
        for i in range(t, p, nt):
            v = big[i]
            cand = cand_flat[cand_off[v]:cand_off[v + 1]]
            star = procedure1_union(none, none[:, 0], log_weight[set_off[v]:set_off[v + 1]], n, unions[v], cand,
                                    min(max_parents, cand.shape[0]), binom)
            out[v, :star.shape[0]] = star
    return out


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
