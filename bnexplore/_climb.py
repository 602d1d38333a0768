"""The greedy search loop of :mod:`bnexplore.search` as one numba kernel (complete data).

A search step picks the best legal arc move from two delta tables,

    add_raw[u, v] = S(v | Pa_v + u) - S(v | Pa_v)      (every u that may join Pa_v)
    rem[u, v]     = S(v | Pa_v - u) - S(v | Pa_v)      (every u of Pa_v)

(a reversal of ``u -> v`` gains ``rem[u, v] + add_raw[v, u]``), applies it and rescores
the columns of the one or two children whose parents changed.  ``S`` is the family score
of :mod:`bnexplore.scores`, computed by its kernels (so the same floats as
:class:`bnexplore.search._State`, which runs the same loop in Python and stays the path
for missing values and for scores of other kinds).  Keeping the loop, the delta tables,
the reachability matrix and the family table in one kernel removes the Python cost per
move, which was most of a search on 1,000 rows.

Glossary
--------
family table
    Open-addressing hash table of the families scored so far, ``(child, sorted
    parents) -> S``: a family met again (the set left by a removal is usually the
    previous one) is not recounted, and its size is the number of distinct families
    scored (:attr:`bnexplore.search.SearchResult.n_families`).  The keys live in a
    ``pool`` (``child, size, parents...`` one after another), the slots hold their
    offsets (-1: empty).  Its size is set by the caller (a workspace too small is
    reported, and the search runs again with a larger one: no reallocation in the
    kernels, which keeps their compilation short).
trace
    Per accepted move: phase, operator, ``u``, ``v``, gain, candidates, improving
    candidates, and the family scores after it (the caller sums them with numpy, as the
    Python loop does).
"""
from __future__ import annotations

import numba
import numpy as np

from .scores import _score_additions, _score_family_rows
from .search import _best_move, _reach_after_add, transitive_closure

_NEG = -np.inf


# --------------------------------------------------------------------------- family table
@numba.njit(cache=True, nogil=True)
def _slot(tab, pool, child, ps, m):
    """The slot of family ``(child, ps[:m])``: where it is, or the empty slot to put it."""
    h = child * 1000003 + m
    for j in range(m):
        h = (h ^ ps[j]) * 1099511628211
    mask = tab.shape[0] - 1
    i = (h ^ (h >> 29)) & mask
    while True:
        o = tab[i]
        if o < 0:
            return i
        if pool[o] == child and pool[o + 1] == m:
            same = True
            for j in range(m):
                if pool[o + 2 + j] != ps[j]:
                    same = False
                    break
            if same:
                return i
        i = (i + 1) & mask


@numba.njit(cache=True, nogil=True)
def _put(tab, vals, pool, fill, i, child, ps, m, val):
    """Store a family in its empty slot ``i``; ``fill = [pool used, families, full]``.
    A table over half full or a full pool sets ``full`` (the caller runs again with a
    larger workspace) and stores nothing more."""
    if fill[2] or fill[0] + m + 2 > pool.shape[0] or 2 * (fill[1] + 1) > tab.shape[0]:
        fill[2] = 1
        return
    o = fill[0]
    pool[o] = child
    pool[o + 1] = m
    for j in range(m):
        pool[o + 2 + j] = ps[j]
    fill[0] += m + 2
    fill[1] += 1
    tab[i] = o
    vals[i] = val


@numba.njit(cache=True, nogil=True)
def _family(ucols, w, cols, arities, bdeu, ess, logfact, tab, vals, pool, fill, v, pa, m):
    """``S(v | pa[:m])`` from the family table, else counted and stored."""
    i = _slot(tab, pool, v, pa, m)
    if tab[i] >= 0:
        return vals[i]
    val = _score_family_rows(ucols, w, cols, v, pa[:m], arities, bdeu, ess, logfact)
    _put(tab, vals, pool, fill, i, v, pa, m, val)
    return val


# --------------------------------------------------------------------------- the loop
@numba.njit(cache=True, nogil=True)
def _change(pa, m, u, gains, out):
    """``out[:m + 1]`` = the sorted set ``pa[:m] + {u}`` (``gains``), else ``out[:m - 1]``
    = ``pa[:m]`` without ``u``; returns the new size."""
    j = 0
    for i in range(m):
        if pa[i] < u or (not gains and pa[i] > u):
            out[j] = pa[i]
            j += 1
        elif gains and pa[i] > u:
            break
    if not gains:
        return j
    out[j] = u
    for i in range(m):
        if pa[i] > u:
            j += 1
            out[j] = pa[i]
    return j + 1


@numba.njit(cache=True, nogil=True)
def _refresh(ucols, w, cols, arities, bdeu, ess, logfact, safe_parents, k, budget, tab, vals, pool, fill,
             v, parents, npar, fam, add_raw, rem, scratch, todo, deltas):
    """``fam[v]`` for the parents ``parents[v, :npar[v]]`` and, with ``deltas``, column
    ``v`` of the delta tables: every addition that keeps ``v`` within ``k`` parents and
    its CPT within ``budget`` cells (the families not in the table counted in one
    :func:`bnexplore.scores._score_additions` call, which computes the cells of the
    current parents once), and every removal."""
    p = add_raw.shape[0]
    pa = parents[v]
    m = npar[v]
    fam[v] = _family(ucols, w, cols, arities, bdeu, ess, logfact, tab, vals, pool, fill, v, pa, m)
    if not deltas:
        return
    for u in range(p):
        add_raw[u, v] = _NEG
        rem[u, v] = _NEG
    if m < k:
        cells = arities[v]
        for i in range(m):
            cells *= arities[pa[i]]
            if cells > budget:
                break
        most = budget // cells if cells <= budget else 0   # the largest arity of a parent to add
        n_todo = 0
        for u in range(p):
            member = u == v
            for i in range(m):
                member |= pa[i] == u
            if member or arities[u] > most:
                continue
            _change(pa, m, u, True, scratch)
            i = _slot(tab, pool, v, scratch, m + 1)
            if tab[i] >= 0:
                add_raw[u, v] = vals[i] - fam[v]
            elif m + 1 > safe_parents:    # family by family (as LocalScore does with such keys)
                add_raw[u, v] = _family(ucols, w, cols, arities, bdeu, ess, logfact, tab, vals, pool, fill,
                                        v, scratch, m + 1) - fam[v]
            else:
                todo[n_todo] = u
                n_todo += 1
        if n_todo > 0:
            got = _score_additions(ucols, w, cols, v, pa[:m], todo[:n_todo], arities, bdeu, ess, logfact)
            for i in range(n_todo):
                u = todo[i]
                _change(pa, m, u, True, scratch)
                _put(tab, vals, pool, fill, _slot(tab, pool, v, scratch, m + 1), v, scratch, m + 1, got[i])
                add_raw[u, v] = got[i] - fam[v]
    for j in range(m):
        _change(pa, m, pa[j], False, scratch)
        rem[pa[j], v] = _family(ucols, w, cols, arities, bdeu, ess, logfact, tab, vals, pool, fill, v, scratch,
                                m - 1) - fam[v]


@numba.njit(cache=True, nogil=True)
def _climb(ucols, w, cols, arities, bdeu, ess, logfact, safe_parents, adj, mask, k, budget,
           phase_ops, n_ops, max_steps, tol, pair, tab, vals, pool, fill, moves, trace):
    """Greedy search from ``adj`` (changed in place to the final network) under the
    arcs ``mask``, at most ``k`` parents per node and ``budget`` CPT cells, with the
    operators ``phase_ops[f, :n_ops[f]]`` of each phase ``f`` (indices into
    :data:`bnexplore.search._OPERATORS`), at most ``max_steps`` moves (-1: no limit).
    ``pair[u, v]`` = ``S(v | u)`` for every ``v`` without parents in ``adj`` (with
    ``k > 0``; :func:`bnexplore.scores._score_pairs`, called before: kept out of this
    kernel, whose compilation it would lengthen).

    Workspace: the family table ``tab, vals, pool, fill`` (empty: ``tab`` all -1,
    ``fill`` zeros) and the move records ``moves`` (rows ``phase, op, u, v,
    n_candidates, n_improving``) and ``trace`` (the gain, then the family scores after
    the move).  Returns ``(fam, n_moves, final_candidates)``; ``n_moves`` is -1 when the
    workspace was too small (``fill[2]`` set or more moves than rows): run again with a
    larger one.  ``fill[1]`` is the number of distinct families scored."""
    p = adj.shape[0]
    width = max(1, min(k, p - 1))
    parents = np.zeros((p, width + 1), dtype=np.int64)
    npar = np.zeros(p, dtype=np.int64)
    scratch = np.empty(width + 1, dtype=np.int64)
    todo = np.empty(p, dtype=np.int64)
    fam = np.empty(p)
    add_raw = np.full((p, p), _NEG)
    rem = np.full((p, p), _NEG)
    for v in range(p):
        for u in range(p):
            if adj[u, v]:
                parents[v, npar[v]] = u
                npar[v] += 1
        # the parentless nodes' first parents are scored below, all pairs at once
        _refresh(ucols, w, cols, arities, bdeu, ess, logfact, safe_parents, k, budget, tab, vals, pool, fill,
                 v, parents, npar, fam, add_raw, rem, scratch, todo, k == 0 or npar[v] > 0)
    if k > 0:   # the first parent of every parentless node (the caller's pair tables)
        for v in range(p):
            for u in range(p):
                if npar[v] == 0 and u != v:
                    scratch[0] = u
                    _put(tab, vals, pool, fill, _slot(tab, pool, v, scratch, 1), v, scratch, 1, pair[u, v])
                    if arities[u] * arities[v] <= budget:
                        add_raw[u, v] = pair[u, v] - fam[v]
    n_moves = 0
    final_candidates = 0
    reach = transitive_closure(adj)
    fresh = True       # reach is the closure of adj (kept through additions)
    for f in range(phase_ops.shape[0]):
        ops = phase_ops[f, :n_ops[f]]
        while max_steps < 0 or n_moves < max_steps:
            if fill[2] or n_moves == moves.shape[0]:
                return fam, -1, 0
            if not fresh:
                reach = transitive_closure(adj)
                fresh = True
            n_cand, n_impr, best, gain, u, v = _best_move(adj, reach, mask, add_raw, rem, ops, tol)
            if best < 0:
                final_candidates = n_cand
                break
            adj[u, v] = best == 0
            if best == 0:
                _reach_after_add(reach, u, v)
            else:
                fresh = False
                adj[v, u] = best == 2
            for change in range(2 if best == 2 else 1):   # v gains or loses u; a reversal: u gains v
                x, y = (v, u) if change == 0 else (u, v)
                npar[x] = _change(parents[x], npar[x], y, best == 0 or change == 1, scratch)
                parents[x, :npar[x]] = scratch[:npar[x]]
                _refresh(ucols, w, cols, arities, bdeu, ess, logfact, safe_parents, k, budget, tab, vals, pool,
                         fill, x, parents, npar, fam, add_raw, rem, scratch, todo, True)
            moves[n_moves, 0] = f
            moves[n_moves, 1] = best
            moves[n_moves, 2] = u
            moves[n_moves, 3] = v
            moves[n_moves, 4] = n_cand
            moves[n_moves, 5] = n_impr
            trace[n_moves, 0] = gain
            trace[n_moves, 1:] = fam
            n_moves += 1
    if fill[2]:
        return fam, -1, 0
    return fam, n_moves, final_candidates


# one compilation per argument type when the kernels call each other (see bnexplore._jit)
from ._jit import unliteral_calls  # noqa: E402

unliteral_calls(globals())
