"""Order averaging over incomplete data: every family weighed on its own rows.

With missing cells, :class:`bnexplore.averaging.OrderedAveraging` (``missing="keep"``)
gives the family of node ``X_v`` with parent set ``A`` the weight of Eq. (3) of
:mod:`bnexplore._available_case`, the score the structure learners give one structure:

    w_v(A) = s(v | {} ; O({v})) + g_v(A)                                        (W)
    g_v(A) = s(v | A ; O({v} u A)) - s(v | {} ; O({v} u A))                     (G)

where ``s(v | A ; R)`` is the K2 or BDeu family score counted on the rows ``R`` and
``O(W)`` the rows where every column of ``W`` is observed.  The gain (G) compares ``A``
with the empty set on the same rows, so a parent set whose members are often missing
earns nothing from its fewer rows (a family counted on fewer rows has a larger log
marginal likelihood: ranking raw scores ``s(v | A ; O({v} u A))`` would reward
missingness); the first term of (W) is the same for every ``A`` of ``v`` and makes
``w_v(A)`` the ordinary family score when ``X_v`` and ``A`` are observed on every row.
A DAG's weight is ``sum_v w_v(Pa_v)`` (plus the structure prior), so the sums over the
DAGs of an order still factorise over the nodes (Dash & Cooper Eq. 6 and 9).

Counting (:func:`_node_weights`).  The parent sets of ``X_v`` are walked depth first
(``{u1}``, ``{u1, u2}``, ``{u1, u2, u3}``, ...): level ``d`` keeps the rows of
``O({v, u1 .. ud})`` and each row's configuration index ``j`` (mixed radix), made from
level ``d - 1`` by one pass that drops the rows where ``ud`` is missing, so a family costs
one pass over its prefix's rows.  A row's key is ``j * r + x`` (``x`` the child's state,
``r`` its arity); keys are counted in a dense table when the family has at most
:data:`DENSE_CELLS` cells (only touched cells are read and reset), otherwise sorted.
A family's place among its node's sets (by size, then lexicographic, as
:func:`bnexplore._order_posterior.lex_parent_sets` lists them) is
``sum_{t < s} C(c, t) + C(c, s) - 1 - sum_e C(c - 1 - pos_e, s - e + 1)`` for members at
candidate positions ``pos_1 < .. < pos_s`` of ``c`` candidates.
The score of the counts (:func:`bnexplore.scores._score_sorted_keys`, or from the dense
tables :func:`_score_dense`) is

    K2:    sum_j [ lgamma(r) - lgamma(r + N_j) + sum_x lgamma(1 + N_jx) ]
    BDeu:  sum_j [ lgamma(a q^-1) - lgamma(a q^-1 + N_j)
                   + sum_x lgamma(a (qr)^-1 + N_jx) - lgamma(a (qr)^-1) ]

over the configurations seen (``q`` the number of parent configurations, ``a`` the
ess), as :class:`bnexplore.scores.LocalScore`.

Glossary
--------
code
    The codes, rows x columns, with -1 in the missing cells.
rows, cfgs, n_at
    ``rows[d, :n_at[d]]``: the rows of level ``d`` of the walk; ``cfgs[d]`` their
    configuration indices.
keys, m
    The keys of the rows counted for one family (sorting path), and how many there are.
dense, cfg
    Workspace of the dense path: counts per key and per configuration.
touched
    The keys written in the dense tables (read, then reset to 0 with their configurations).
logfact
    ``log(x!)`` for the K2 terms (:func:`bnexplore._order_scores._logfact`).
tot
    The child's state counts over the rows counted: the counts of ``s(v | {} ; O(W))``.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from ._order_scores import _logfact, _pascal
from ._parallel import PARALLEL_LOCK
from .scores import _config_terms, _score_sorted_keys

__all__ = ["available_case_weights", "walk_cells", "uses_threads"]

#: families with at most this many cells (configurations x child states) are counted in a
#: dense table; larger ones by sorting their keys
DENSE_CELLS = 1 << 16

#: families x rows from which the nodes are spread over threads (below it, about 10 ms of
#: work, handing them out costs more than it saves on a busy machine)
SPLIT_WORK = 10_000_000


@numba.njit(cache=True, nogil=True)
def _score_dense(touched, n_touched, dense, cfg, r, q, bdeu, ess, logfact):
    """``s(v | A ; R)`` from the dense tables, resetting the cells it reads."""
    a_j = ess / q
    a_jx = a_j / r
    lg_ajx = math.lgamma(a_jx)
    s = 0.0
    for t in range(n_touched):
        key = touched[t]
        n = dense[key]
        s += math.lgamma(a_jx + n) - lg_ajx if bdeu else logfact[n]
        dense[key] = 0
        j = key // r
        n_j = cfg[j]
        if n_j:
            s += _config_terms(n_j, 0.0, a_j, a_jx, bdeu, logfact, r)
            cfg[j] = 0
    return s


@numba.njit(cache=True, nogil=True)
def _empty_score(tot, r, bdeu, ess, logfact):
    """``s(v | {} ; R)`` from the child's state counts ``tot[:r]`` over ``R`` (0 on no row)."""
    n = tot[:r].sum()
    if n == 0:
        return 0.0
    a = ess / r
    cell = 0.0
    for x in range(r):
        cell += math.lgamma(a + tot[x]) - math.lgamma(a) if bdeu else logfact[tot[x]]
    return _config_terms(n, cell, ess, a, bdeu, logfact, r)


@numba.njit(cache=True, nogil=True)
def _family_score(code, v, r, rows, cfgs, m, q, bdeu, ess, logfact, keys, tot, dense, cfg, touched):
    """``s(v | A ; R) - s(v | {} ; R)`` for the rows ``R = rows[:m]`` with configuration
    indices ``cfgs[:m]`` of the parent set ``A`` (``q`` configurations)."""
    tot[:r] = 0
    if q * r <= dense.shape[0]:
        n_touched = 0
        for t in range(m):
            x = code[rows[t], v]
            tot[x] += 1
            key = cfgs[t] * r + x
            if dense[key] == 0:
                touched[n_touched] = key
                n_touched += 1
            dense[key] += 1
            cfg[cfgs[t]] += 1
        s = _score_dense(touched, n_touched, dense, cfg, r, q, bdeu, ess, logfact)
    else:
        for t in range(m):
            x = code[rows[t], v]
            tot[x] += 1
            keys[t] = cfgs[t] * r + x
        keys[:m].sort()
        s = _score_sorted_keys(keys, m, r, q, bdeu, ess, logfact)
    return s - _empty_score(tot, r, bdeu, ess, logfact)


@numba.njit(cache=True, nogil=True)
def set_place(binom, first, c, d, pos):
    """The place of the set of candidates at positions ``pos[1 .. d]`` among its node's
    parent sets (the formula of the module docstring; ``first[d]`` the first place of size d)."""
    rank = 0
    for e in range(1, d + 1):
        rank += binom[c - 1 - pos[e], d - e + 1]
    return first[d] + binom[c, d] - 1 - rank


@numba.njit(cache=True, nogil=True)
def next_set(d, k, pos):
    """The depth-first walk's step after the set at positions ``pos[1 .. d]``: one member
    more while ``d < k``, else the next candidate at depth ``d``; returns the new depth."""
    if d < k:
        d += 1
        pos[d] = pos[d - 1] + 1
    else:
        pos[d] += 1
    return d


@numba.njit(cache=True, nogil=True)
def _node_weights(code, arities, v, cand, k, binom, bdeu, ess, logfact, out):
    """Eq. (W) of every parent set of ``v`` (subsets of ``cand`` of size <= ``k``) into
    ``out``, in the order of :func:`bnexplore._order_posterior.lex_parent_sets`."""
    n = code.shape[0]
    c = cand.shape[0]
    k = min(k, c)
    r = arities[v]
    rows = np.empty((k + 1, n), dtype=np.int64)
    cfgs = np.zeros((k + 1, n), dtype=np.int64)
    n_at = np.zeros(k + 1, dtype=np.int64)
    q_at = np.ones(k + 1, dtype=np.int64)
    keys = np.empty(n, dtype=np.int64)
    tot = np.zeros(r, dtype=np.int64)
    top = np.sort(arities[cand])[::-1]
    cells = r                                       # the node's largest family (dense up to DENSE_CELLS)
    for t in range(k):
        cells = min(cells * top[t], DENSE_CELLS)
    dense = np.zeros(cells, dtype=np.int64)
    cfg = np.zeros(cells, dtype=np.int64)
    touched = np.empty(min(n, cells), dtype=np.int64)
    m = 0
    for i in range(n):
        if code[i, v] >= 0:
            rows[0, m] = i
            m += 1
    n_at[0] = m
    for x in range(r):
        tot[x] = 0
    for t in range(m):
        tot[code[rows[0, t], v]] += 1
    base = _empty_score(tot, r, bdeu, ess, logfact)
    out[0] = base                                   # the empty set gains nothing
    if k == 0:
        return
    first = np.zeros(k + 2, dtype=np.int64)         # sum_{t < s} C(c, t): the first place of size s
    for s in range(1, k + 2):
        first[s] = first[s - 1] + binom[c, s - 1]
    pos = np.zeros(k + 1, dtype=np.int64)           # pos[d]: candidate position of the d-th member
    d = 1
    pos[1] = 0
    while d >= 1:
        if pos[d] >= c:                             # this level is done: back up
            d -= 1
            if d >= 1:
                pos[d] += 1
            continue
        u = cand[pos[d]]
        a = arities[u]
        m = 0
        for t in range(n_at[d - 1]):                # level d: drop the rows where u is missing
            i = rows[d - 1, t]
            xu = code[i, u]
            if xu >= 0:
                rows[d, m] = i
                cfgs[d, m] = cfgs[d - 1, t] * a + xu
                m += 1
        n_at[d] = m
        q_at[d] = q_at[d - 1] * a
        gain = _family_score(code, v, r, rows[d], cfgs[d], m, q_at[d], bdeu, ess, logfact, keys, tot, dense, cfg,
                             touched) if m else 0.0
        out[set_place(binom, first, c, d, pos)] = base + gain
        d = next_set(d, k, pos)


@numba.njit(cache=True, nogil=True)
def _all_weights(code, arities, cand_flat, cand_off, k, binom, set_off, bdeu, ess, logfact, out):
    """Eq. (W) of every family, node after node (small tables: threads would cost more)."""
    for v in range(cand_off.shape[0] - 1):
        _node_weights(code, arities, v, cand_flat[cand_off[v]:cand_off[v + 1]], k, binom, bdeu, ess, logfact,
                      out[set_off[v]:set_off[v + 1]])


@numba.njit(cache=True, parallel=True)
def _all_weights_threads(code, arities, cand_flat, cand_off, k, binom, set_off, bdeu, ess, logfact, out):
    """:func:`_all_weights` with the nodes spread over the threads."""
    for v in numba.prange(cand_off.shape[0] - 1):
        _node_weights(code, arities, v, cand_flat[cand_off[v]:cand_off[v + 1]], k, binom, bdeu, ess, logfact,
                      out[set_off[v]:set_off[v + 1]])


def uses_threads(n_families: int, n_rows: int) -> bool:
    """Whether the nodes are spread over threads (:data:`SPLIT_WORK`)."""
    return n_families * n_rows > SPLIT_WORK


def walk_cells(n_rows: int, max_parents: int, threads: bool) -> int:
    """Cells of working memory the walk keeps: per node being walked, the rows and
    configurations of ``max_parents + 1`` levels, the keys and the dense tables."""
    per_node = 2 * (max_parents + 1) * n_rows + 2 * n_rows + 2 * DENSE_CELLS
    return per_node * (numba.get_num_threads() if threads else 1)


def available_case_weights(codes: np.ndarray, miss: np.ndarray, arities: np.ndarray, cand_flat: np.ndarray,
                           cand_off: np.ndarray, max_parents: int, set_off: np.ndarray, bdeu: bool,
                           ess: float) -> np.ndarray:
    """Eq. (W) of every family: node ``v``'s parent sets are the subsets of its candidates
    ``cand_flat[cand_off[v]:cand_off[v + 1]]`` (sorted) of size <= ``max_parents``, in the
    order of :func:`bnexplore._order_posterior.lex_parent_sets`, at
    ``set_off[v]:set_off[v + 1]`` of the result; ``codes`` (rows x columns) with the
    missing cells ``miss``.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 0], [1, 1], [1, 1], [0, 1]])
    >>> miss = np.array([[False, False], [False, False], [True, False], [False, False]])
    >>> cand_flat, cand_off, set_off = np.array([0]), np.array([0, 0, 1]), np.array([0, 1, 3])
    >>> w = available_case_weights(codes, miss, np.array([2, 2]), cand_flat, cand_off, 1, set_off, False, 1.0)
    >>> bool(np.isclose(w[1], np.log(1 / 20)))   # K2, b on 4 rows: 1 zero, 3 ones
    True
    """
    code = np.where(miss, -1, codes).astype(np.int64)
    cand_off = np.asarray(cand_off, dtype=np.int64)
    m_max = int(np.diff(cand_off).max(initial=0))
    binom = _pascal(m_max, min(int(max_parents), m_max) + 1)
    out = np.empty(int(set_off[-1]))
    run = _all_weights_threads if uses_threads(out.size, code.shape[0]) else _all_weights
    with PARALLEL_LOCK:
        run(code, np.asarray(arities, dtype=np.int64), np.asarray(cand_flat, dtype=np.int64), cand_off,
                     int(max_parents), binom, np.asarray(set_off, dtype=np.int64), bool(bdeu), float(ess),
                     _logfact(code.shape[0] + int(np.max(arities, initial=1)) + 1), out)
    return out
