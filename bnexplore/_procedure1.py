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

from typing import Sequence

from ._order_posterior import unrank_parent_set
from ._validation import Interval
from .data.core import MemoryBudgetError, get_table_budget

__all__ = ["procedure1", "next_best", "procedure1_union", "procedure1_all"]

#: the check of ``n``, the largest union
_UNION_SIZE = Interval(int, 0, None, label="largest union size")


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
    n = _UNION_SIZE(n, "n")
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
    return procedure1_union(sets, np.asarray(sizes, dtype=np.int64), w, min(int(n), top + 1), union,
                            np.zeros(0, dtype=np.int64), 0,
                       np.zeros((1, 1), dtype=np.int64)).tolist()


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
