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

One family's counts (:func:`_family_counts`): every row of ``O({v})`` whose parent cells
are all observed gets the key ``j * r + x`` (``j`` the mixed-radix index of the parent
configuration, ``x`` the child's state, ``r`` its arity); keys are counted in a dense
table when the family has at most :data:`DENSE_CELLS` cells (only touched cells are
read and reset), otherwise sorted.  The score of the counts (:func:`_score_counts`) is

    K2:    sum_j [ lgamma(r) - lgamma(r + N_j) + sum_x lgamma(1 + N_jx) ]
    BDeu:  sum_j [ lgamma(a q^-1) - lgamma(a q^-1 + N_j)
                   + sum_x lgamma(a (qr)^-1 + N_jx) - lgamma(a (qr)^-1) ]

over the configurations seen (``q`` the number of parent configurations, ``a`` the
ess), as :class:`bnexplore.scores.LocalScore`.

Glossary
--------
keys, m
    The keys of the rows counted for one family, and how many there are.
dense, cfg
    Workspace of the dense path: counts per key and per configuration.
touched, touched_j
    The keys and configurations written in the dense tables (read, then reset to 0).
tot
    The child's state counts over the rows counted: the counts of ``s(v | {} ; O(W))``.
"""
from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["available_case_weights"]

#: families with at most this many cells (configurations x child states) are counted in a
#: dense table; larger ones by sorting their keys
DENSE_CELLS = 1 << 16


@numba.njit(cache=True, nogil=True)
def _score_counts(keys, m, r, q, bdeu, ess):
    """``s(v | A ; R)`` from the sorted keys ``keys[:m]`` of the rows ``R``."""
    lg_r = math.lgamma(r)
    a_j = ess / q
    a_jx = a_j / r
    lg_aj, lg_ajx = math.lgamma(a_j), math.lgamma(a_jx)
    s = 0.0
    i = 0
    while i < m:
        j = keys[i] // r
        n_j = 0
        while i < m and keys[i] // r == j:
            key = keys[i]
            n = 0
            while i < m and keys[i] == key:
                n += 1
                i += 1
            n_j += n
            s += math.lgamma(a_jx + n) - lg_ajx if bdeu else math.lgamma(1.0 + n)
        s += lg_aj - math.lgamma(a_j + n_j) if bdeu else lg_r - math.lgamma(r + n_j)
    return s


@numba.njit(cache=True, nogil=True)
def _score_dense(touched, n_touched, dense, cfg, r, q, bdeu, ess):
    """``s(v | A ; R)`` from the dense tables, resetting the cells it reads."""
    a_j = ess / q
    a_jx = a_j / r
    lg_aj, lg_ajx, lg_r = math.lgamma(a_j), math.lgamma(a_jx), math.lgamma(r)
    s = 0.0
    for t in range(n_touched):
        key = touched[t]
        n = dense[key]
        s += math.lgamma(a_jx + n) - lg_ajx if bdeu else math.lgamma(1.0 + n)
        dense[key] = 0
        j = key // r
        n_j = cfg[j]
        if n_j:
            s += lg_aj - math.lgamma(a_j + n_j) if bdeu else lg_r - math.lgamma(r + n_j)
            cfg[j] = 0
    return s


@numba.njit(cache=True, nogil=True)
def _empty_score(tot, r, bdeu, ess):
    """``s(v | {} ; R)`` from the child's state counts ``tot`` over ``R``."""
    n = 0
    s = 0.0
    for x in range(r):
        n += tot[x]
        s += math.lgamma(ess / r + tot[x]) - math.lgamma(ess / r) if bdeu else math.lgamma(1.0 + tot[x])
    if n == 0:
        return 0.0
    return s + (math.lgamma(ess) - math.lgamma(ess + n) if bdeu else math.lgamma(r) - math.lgamma(r + n))


@numba.njit(cache=True, nogil=True)
def _family_counts(codes, miss, arities, v, rows, members, keys, tot):
    """Keys ``j * r + x`` of the rows of ``rows`` (those of ``O({v})``) where every parent
    of ``members`` is observed, written to ``keys``; the child's state counts to ``tot``.
    Returns the number of rows counted."""
    r = arities[v]
    tot[:r] = 0
    m = 0
    for i in rows:
        j = 0
        seen = True
        for u in members:
            if miss[i, u]:
                seen = False
                break
            j = j * arities[u] + codes[i, u]
        if seen:
            x = codes[i, v]
            keys[m] = j * r + x
            tot[x] += 1
            m += 1
    return m


@numba.njit(cache=True, nogil=True)
def _node_weights(codes, miss, arities, v, sets, sizes, bdeu, ess, out, keys, tot, dense, cfg, touched):
    """Eq. (W) for every parent set ``sets[f, :sizes[f]]`` of node ``v``, into ``out``."""
    rows = np.flatnonzero(~miss[:, v])
    r = arities[v]
    m0 = _family_counts(codes, miss, arities, v, rows, sets[0, :0], keys, tot)
    base = _empty_score(tot, r, bdeu, ess) if m0 else 0.0
    for f in range(sets.shape[0]):
        members = sets[f, :sizes[f]]
        q = 1
        for u in members:
            q *= arities[u]
        m = _family_counts(codes, miss, arities, v, rows, members, keys, tot)
        if m == 0:
            out[f] = base                     # no row: the family explains nothing, gains nothing
            continue
        if q * r <= dense.shape[0]:
            n_touched = 0
            for t in range(m):
                key = keys[t]
                if dense[key] == 0:
                    touched[n_touched] = key
                    n_touched += 1
                dense[key] += 1
                cfg[key // r] += 1
            s = _score_dense(touched, n_touched, dense, cfg, r, float(q), bdeu, ess)
        else:
            keys[:m].sort()
            s = _score_counts(keys, m, r, float(q), bdeu, ess)
        out[f] = base + s - _empty_score(tot, r, bdeu, ess)


@numba.njit(cache=True, nogil=True)
def _all_weights(codes, miss, arities, sets, sizes, off, bdeu, ess, out):
    """Eq. (W) of every family, node after node, with one workspace."""
    n = codes.shape[0]
    keys = np.empty(n, dtype=np.int64)
    tot = np.zeros(arities.max(), dtype=np.int64)
    dense = np.zeros(DENSE_CELLS, dtype=np.int64)
    cfg = np.zeros(DENSE_CELLS, dtype=np.int64)
    touched = np.empty(min(n, DENSE_CELLS), dtype=np.int64)
    for v in range(off.shape[0] - 1):
        a, b = off[v], off[v + 1]
        if b > a:
            _node_weights(codes, miss, arities, v, sets[a:b], sizes[a:b], bdeu, ess, out[a:b], keys, tot, dense,
                          cfg, touched)


def available_case_weights(codes: np.ndarray, miss: np.ndarray, arities: np.ndarray, sets: np.ndarray,
                           sizes: np.ndarray, off: np.ndarray, bdeu: bool, ess: float) -> np.ndarray:
    """Eq. (W) of every family: node ``v``'s parent sets are ``sets[off[v]:off[v + 1]]``
    (members padded with -1, ``sizes`` of them), scored on ``codes`` (rows x columns)
    with the missing cells ``miss``.  Returns one weight per family, in the order of ``sets``.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([[0, 0], [1, 1], [1, 1], [0, 1]])
    >>> miss = np.array([[False, False], [False, False], [True, False], [False, False]])
    >>> sets = np.array([[-1], [-1], [0]]); sizes = np.array([0, 0, 1]); off = np.array([0, 1, 3])
    >>> w = available_case_weights(codes, miss, np.array([2, 2]), sets, sizes, off, False, 1.0)
    >>> bool(np.isclose(w[1], np.log(1 / 20)))   # K2, b on 4 rows: 1 zero, 3 ones
    True
    """
    out = np.empty(int(off[-1]))
    _all_weights(np.ascontiguousarray(codes, dtype=np.int64), np.ascontiguousarray(miss), arities.astype(np.int64),
                 np.ascontiguousarray(sets, dtype=np.int64), sizes.astype(np.int64), off.astype(np.int64),
                 bool(bdeu), float(ess), out)
    return out
