"""Posterior quantities of order-constrained model averaging given the family scores.

Dash & Cooper, "Model averaging with discrete Bayesian network classifiers" (AISTATS
2003).  In the class :math:`\\mathcal{L}_k(\\pi)` a node's admissible parent sets are
the subsets of at most ``k`` of its candidates (the nodes on lower levels of the
order), and the posterior of a DAG factorises over the nodes (Theorem 1), so every
quantity is one sum per node over its parent sets ``nu``.  With the family weight

    w_i^nu = log p_s(X_i, P_i^nu) + log score(X_i, P_i^nu)          (natural logs)

(the scores come from the order-scoring engine, ``bnexplore.scores``):

    log P(D) = sum_i logsumexp_nu w_i^nu                                  (Eq. 6)

    P(X_L -> X_M | D) = sum_{nu : X_L in P_M^nu} post_M^nu,
        post_i^nu = exp(w_i^nu - logsumexp_nu' w_i^nu')                   (Eq. 9)

    P(X = x | D) = prod_i sum_nu post_i^nu theta_hat_i^nu(x_i | x_{P_i^nu})  (Eq. 13)

with the standard parameters of the same Dirichlet prior as the score,

    theta_hat_ijk = (alpha_ijk + N_ijk) / (alpha_ij + N_ij),                (Eq. 3)
    alpha_ijk = 1 (K2)  or  ess / (q_i r_i) (BDeu).

**The parent-set list.**  Every node's sets are listed in one fixed order, which the
scores, the weights and Procedure 1 all share: by size, then lexicographically in
the candidates' positions (as ``itertools.combinations``).  A set's index follows
from its members without the list (:func:`unrank_parent_set` is the inverse), so
nothing the size of the list need be kept beside the weights.

Glossary
--------
candidates
    The admissible parents of a node, column indices in column order; the nodes'
    candidates one after another are ``cand_flat`` with ``cand_off[v]`` where node
    ``v``'s begin.
max_parents
    ``k``, the largest size of a parent set (clamped to the number of candidates).
set_off
    ``set_off[v]``: where node ``v``'s parent sets (and their weights) begin in the
    flat lists of every node.
binom
    Pascal's triangle, ``binom[a, b] = C(a, b)``.
standard parameters
    ``theta_hat`` of Eq. 3, one table (parent configurations x child states) per family.
test variants
    Eq. 13 is evaluated on ``C`` variants of the same rows at once (for instance one per
    value of the class), so that each family's table is counted once for all of them.
"""
from __future__ import annotations

import functools
from collections import namedtuple
import math

import numba
import numpy as np
import pandas as pd

from ._deprecation import renamed

__all__ = ["ParentSetLists", "count_parent_sets", "family_log_prior", "lex_parent_sets", "unrank_parent_set",
           "all_parent_sets", "log_normalisers", "eq3_family_table", "eq3_sparse_lookup", "eq13_node_factor",
           "DENSE_CELLS"]

#: every node's parent-set list: its candidates ``cand_flat[cand_off[v]:cand_off[v + 1]]``, the
#: log weights ``log_weight[set_off[v]:set_off[v + 1]]`` of its sets, and ``binom``
ParentSetLists = namedtuple("ParentSetLists", ["cand_flat", "cand_off", "log_weight", "set_off", "binom"])

# dense count tables up to this many cells in the Eq. 13 kernel (larger: sorted keys)
DENSE_CELLS = 1 << 16


# --------------------------------------------------------------------------- the parent-set list
@renamed(k="max_parents")
def count_parent_sets(n_candidates: int, max_parents: int) -> int:
    """Number of parent sets of size <= ``max_parents`` drawn from ``n_candidates`` nodes.

    Examples
    --------
    >>> count_parent_sets(36, 3)
    7807
    """
    return _count_parent_sets(int(n_candidates), int(max_parents))


@functools.lru_cache(maxsize=4096)
def _count_parent_sets(m: int, k: int) -> int:
    return sum(math.comb(m, s) for s in range(min(k, m) + 1))


def family_log_prior(names: list[str], v: int, sets: np.ndarray, sizes: np.ndarray, sp) -> np.ndarray | float:
    """log p_s(X_v, P) (Assumption 1) of each parent set (rows of ``sets`` padded with -1) under a structure
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


@numba.njit(cache=True, nogil=True)
def lex_parent_sets(candidates, max_parents, out, sizes):
    """Every subset of ``candidates`` of size <= ``max_parents`` into the rows of ``out``:
    by size, then lexicographic (as ``itertools.combinations``), padded with -1;
    ``sizes`` their sizes."""
    m = candidates.shape[0]
    width = out.shape[1]
    for i in range(width):
        out[0, i] = -1
    sizes[0] = 0
    row = 1  # row 0 is the empty set
    pos = np.zeros(max(max_parents, 1), dtype=np.int64)  # candidate positions of the members
    for s in range(1, max_parents + 1):
        for i in range(s):
            pos[i] = i
        while True:
            for i in range(s):
                out[row, i] = candidates[pos[i]]
            for i in range(s, width):
                out[row, i] = -1
            sizes[row] = s
            row += 1
            i = s - 1
            while i >= 0 and pos[i] == m - s + i:
                i -= 1
            if i < 0:
                break
            pos[i] += 1
            for j in range(i + 1, s):
                pos[j] = pos[j - 1] + 1


@numba.njit(cache=True, nogil=True)
def unrank_parent_set(index, n_candidates, max_parents, binom, candidates, members):
    """Members of set ``index`` of the :func:`lex_parent_sets` list of ``candidates``
    (``n_candidates`` of them, sizes <= ``max_parents``) into ``members``; returns its
    size."""
    s = 0
    base = 0
    while s < max_parents and index >= base + binom[n_candidates, s]:
        base += binom[n_candidates, s]
        s += 1
    rank = index - base
    c = 0
    for e in range(s):
        while rank >= binom[n_candidates - c - 1, s - e - 1]:  # sets whose next member is c come first
            rank -= binom[n_candidates - c - 1, s - e - 1]
            c += 1
        members[e] = candidates[c]
        c += 1
    return s


@numba.njit(cache=True, nogil=True)
def all_parent_sets(cand_flat, cand_off, max_parents, set_off, width):
    """The parent sets of every node (:func:`lex_parent_sets`), one after another:
    (members padded with -1, sizes)."""
    p = cand_off.shape[0] - 1
    out = np.empty((set_off[p], width), dtype=np.int64)
    sizes = np.empty(set_off[p], dtype=np.int64)
    for v in numba.prange(p):
        cand = cand_flat[cand_off[v]:cand_off[v + 1]]
        lex_parent_sets(cand, min(max_parents, cand.shape[0]), out[set_off[v]:set_off[v + 1]],
                        sizes[set_off[v]:set_off[v + 1]])
    return out, sizes


# --------------------------------------------------------------------------- Eq. 6 and 9
@numba.njit(cache=True, nogil=True)
def log_normalisers(log_weight, set_off):
    """``logsumexp_nu w_v^nu`` of every node (Eq. 6; Eq. 9 divides by it): log-sum-exp of
    every segment ``log_weight[set_off[v]:set_off[v + 1]]``, over chunks of at most 2048
    values spread evenly over the threads (the segments of an order differ in size by
    orders of magnitude), each chunk's (max, sum of exp below it) combined per segment."""
    p = set_off.shape[0] - 1
    C = 2048
    n_chunks = 0
    for v in range(p):
        n_chunks += max(1, (set_off[v + 1] - set_off[v] + C - 1) // C)
    lo = np.empty(n_chunks, dtype=np.int64)
    seg = np.empty(n_chunks, dtype=np.int64)
    c = 0
    for v in range(p):
        a = set_off[v]
        while True:
            lo[c] = a
            seg[c] = v
            c += 1
            a += C
            if a >= set_off[v + 1]:
                break
    cmax = np.empty(n_chunks)
    csum = np.empty(n_chunks)
    for c in numba.prange(n_chunks):
        hi = min(lo[c] + C, set_off[seg[c] + 1])
        m = -np.inf
        for i in range(lo[c], hi):
            if log_weight[i] > m:
                m = log_weight[i]
        t = 0.0
        if np.isfinite(m):
            for i in range(lo[c], hi):
                t += math.exp(log_weight[i] - m)
        cmax[c] = m
        csum[c] = t
    out = np.full(p, -np.inf)
    for c in range(n_chunks):
        out[seg[c]] = max(out[seg[c]], cmax[c])
    tot = np.zeros(p)
    for c in range(n_chunks):
        m = out[seg[c]]
        if np.isfinite(m) and csum[c] > 0:
            tot[seg[c]] += csum[c] * math.exp(cmax[c] - m)
    for v in range(p):
        if np.isfinite(out[v]):
            out[v] += math.log(tot[v])
    return out


# --------------------------------------------------------------------------- Eq. 3 and 13
@numba.njit(cache=True, nogil=True)
def eq3_family_table(train, child, parents, size, arities, bdeu, ess):
    """Standard parameters theta_hat (Eq. 3) of one family, (q r) flattened, the child
    fastest; ``parents[:size]`` the parents, the last fastest in the configuration."""
    n = train.shape[1]
    r = arities[child]
    q = 1
    for a in range(size):
        q *= arities[parents[a]]
    counts = np.zeros(q * r, dtype=np.float64)
    for t in range(n):
        key = 0
        for a in range(size):
            u = parents[a]
            key = key * arities[u] + train[u, t]
        counts[key * r + train[child, t]] += 1.0
    if bdeu:
        a_k = ess / (q * r)
    else:
        a_k = 1.0
    for j in range(q):
        nj = 0.0
        for x in range(r):
            nj += counts[j * r + x]
        for x in range(r):
            counts[j * r + x] = (counts[j * r + x] + a_k) / (nj + a_k * r)
    return counts


@numba.njit(cache=True, nogil=True)
def eq3_sparse_lookup(train, test, child, parents, size, arities, bdeu, ess, out, weight):
    """``out[c, t] += weight * theta_hat(test[c, child, t] | test[c, parents, t])`` for a
    family whose table is too big to be dense: the training rows' keys sorted, each
    test row's counts found by binary search."""
    n = train.shape[1]
    r = arities[child]
    q = 1
    for a in range(size):
        q *= arities[parents[a]]
    a_k = ess / (q * r) if bdeu else 1.0
    keys = np.empty(n, dtype=np.int64)
    for t in range(n):
        key = 0
        for a in range(size):
            u = parents[a]
            key = key * arities[u] + train[u, t]
        keys[t] = key * r + train[child, t]
    keys = np.sort(keys)
    for c in range(test.shape[0]):
        for t in range(test.shape[2]):
            key = 0
            for a in range(size):
                u = parents[a]
                key = key * arities[u] + test[c, u, t]
            lo = np.searchsorted(keys, key * r)
            hi = np.searchsorted(keys, key * r + r)
            cell = key * r + test[c, child, t]
            a0 = np.searchsorted(keys, cell)
            a1 = np.searchsorted(keys, cell + 1)
            out[c, t] += weight * ((a1 - a0) + a_k) / ((hi - lo) + a_k * r)


@numba.njit(cache=True, nogil=True)
def eq13_node_factor(train, test, child, sets, sizes, posterior, arities, bdeu, ess, n_chunks):
    """Node ``child``'s factor of Eq. 13, ``sum_nu posterior[nu] theta_hat_nu(test[c, child, t]
    | test[c, P^nu, t])`` -> (C, m).

    ``test`` has shape (C, p, m): C variants of the m rows (e.g. one per class value);
    each family is counted once for all of them.  The families are dealt to
    ``n_chunks`` partial sums, added in chunk order.
    """
    n_sets = sets.shape[0]
    C = test.shape[0]
    m = test.shape[2]
    r = arities[child]
    parts = np.zeros((n_chunks, C, m))
    for ch in numba.prange(n_chunks):
        for f in range(ch, n_sets, n_chunks):
            w = posterior[f]
            if w == 0.0:
                continue
            s = sizes[f]
            q = 1
            for a in range(s):
                q *= arities[sets[f, a]]
            if q * r > DENSE_CELLS and q * r > 2 * train.shape[1]:
                eq3_sparse_lookup(train, test, child, sets[f], s, arities, bdeu, ess, parts[ch], w)
                continue
            theta = eq3_family_table(train, child, sets[f], s, arities, bdeu, ess)
            for c in range(C):
                for t in range(m):
                    key = 0
                    for a in range(s):
                        u = sets[f, a]
                        key = key * arities[u] + test[c, u, t]
                    parts[ch, c, t] += w * theta[key * r + test[c, child, t]]
    out = np.zeros((C, m))
    for ch in range(n_chunks):
        out += parts[ch]
    return out


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
