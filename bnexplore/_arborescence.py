"""Maximum-weight spanning arborescence (Chu-Liu/Edmonds): the MAP step of SCFs.

The MAP selectively conditioned forest (Ziebart, Dey & Bagnell, Algorithm 1) is a
maximum spanning arborescence from a virtual root: node ``j`` takes parent ``i`` at
weight ``w[i, j]`` (the best family score with that intra-set parent) or the root at
weight ``w[root, j]`` (no intra-set parent).  Chu-Liu/Edmonds finds it exactly:

1. every node but the root takes its best incoming edge, ``parent[j] = argmax_i w[i, j]``;
   without a cycle this is optimal;
2. otherwise the cycle ``C`` is contracted to one node ``c`` with

       w'(u, c) = max_{v in C} [ w(u, v) - w(parent(v), v) ]         (entering C at v)
       w'(c, x) = max_{v in C} w(v, x)                               (leaving C from v)

   for ``u, x`` outside ``C``, and the contracted graph is solved recursively;
3. expanding ``c``: the edge chosen into ``c`` enters ``C`` at its best ``v``, which
   drops its cycle edge; every other cycle node keeps its parent, and an edge chosen
   out of ``c`` leaves from its best ``v``.

The weight of an arborescence of the contracted graph equals that of its expansion
less the (constant) weight of the cycle's edges, so the optimum is preserved.

The contractions run as a loop that records every level (its parents, cycle, rest and
best ``v`` / ``u``) on the way down and expands them on the way up, the same steps in
the same order as the recursion above, so the kernel is numba-compiled.  A spanning
*tree* (exactly one root edge) is the best of the arborescences in which the virtual
root keeps one edge, ``root -> rho``, for every ``rho``: :func:`rooted_trees` solves
them all, one kernel call per ``rho``.

Glossary
--------
w, root
    The dense weight matrix (``-inf``: no edge) and the root.
parent
    The best incoming edge of every node (``-1`` for the root).
cyc, rest, nr
    The nodes of the cycle found, the others, ``len(rest)``; index ``nr`` is ``c``.
into, best_v
    ``w(u, v) - w(parent(v), v)`` for ``u`` in rest, ``v`` in the cycle; the best ``v`` per ``u``.
outof, best_u
    ``w(v, x)`` for ``v`` in the cycle, ``x`` in rest; the best ``v`` per ``x``.
bad
    A node without a finite incoming edge (no arborescence exists), ``-1`` if none.
levels
    The number of contractions made; row ``level`` of ``parents``, ``cycs``, ``rests``,
    ``best_vs``, ``best_us`` holds that contraction's arrays.
rho
    The one child of the virtual root in a spanning tree (the tree's root).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["max_arborescence", "rooted_trees"]


@numba.njit(cache=True, nogil=True)
def _first_argmax(values: np.ndarray) -> int:
    """Index of the first maximum (the first NaN if any), as ``np.argmax``."""
    best = values[0]
    at = 0
    if best != best:
        return 0
    for i in range(1, values.shape[0]):
        v = values[i]
        if v != v:
            return i
        if v > best:
            best = v
            at = i
    return at


@numba.njit(cache=True, nogil=True)
def _find_cycle(parent: np.ndarray, root: int, cyc: np.ndarray) -> int:
    """Write the first cycle of the parent pointers (walking from nodes 0, 1, ...) into
    ``cyc`` and return its length (0: no cycle)."""
    n = parent.shape[0]
    state = np.zeros(n, dtype=np.int8)  # 0 new, 1 on current path, 2 done
    state[root] = 2
    path = np.empty(n, dtype=np.int64)
    for s in range(n):
        if state[s]:
            continue
        length = 0
        v = s
        while state[v] == 0:
            state[v] = 1
            path[length] = v
            length += 1
            v = parent[v]
        if state[v] == 1:  # closed a cycle
            start = 0
            while path[start] != v:
                start += 1
            for i in range(start, length):
                cyc[i - start] = path[i]
            return length - start
        for i in range(length):
            state[path[i]] = 2
    return 0


@numba.njit(cache=True, nogil=True)
def _arborescence(weights: np.ndarray, root: int):
    """``(parent, bad)``: Chu-Liu/Edmonds on a dense weight matrix (see the module notes)."""
    n0 = weights.shape[0]
    # one row per contraction level (fewer than n0 levels: each removes >= 1 node)
    parents = np.empty((n0, n0), dtype=np.int64)
    cycs = np.empty((n0, n0), dtype=np.int64)
    rests = np.empty((n0, n0), dtype=np.int64)
    best_vs = np.empty((n0, n0), dtype=np.int64)
    best_us = np.empty((n0, n0), dtype=np.int64)
    n_cyc = np.empty(n0, dtype=np.int64)
    n_rest = np.empty(n0, dtype=np.int64)
    roots = np.empty(n0, dtype=np.int64)
    incyc = np.empty(n0, dtype=np.bool_)
    into = np.empty(n0)
    outof = np.empty(n0)
    w = weights.copy()
    levels = 0
    while True:
        n = w.shape[0]
        for i in range(n):
            w[i, i] = -np.inf
            w[i, root] = -np.inf
        parent = parents[levels, :n]
        for j in range(n):
            parent[j] = _first_argmax(w[:, j])
        parent[root] = -1
        for j in range(n):
            if j != root and not np.isfinite(w[parent[j], j]):
                return parent.copy(), j
        cyc = cycs[levels]
        nc = _find_cycle(parent, root, cyc)
        if nc == 0:
            break
        incyc[:n] = False
        for c in range(nc):
            incyc[cyc[c]] = True
        rest = rests[levels]
        nr = 0
        for v in range(n):
            if not incyc[v]:
                rest[nr] = v
                nr += 1
        w2 = np.full((nr + 1, nr + 1), -np.inf)
        for a in range(nr):
            for b in range(nr):
                w2[a, b] = w[rest[a], rest[b]]
        best_v = best_vs[levels]
        for a in range(nr):
            for c in range(nc):
                into[c] = w[rest[a], cyc[c]] - w[parent[cyc[c]], cyc[c]]
            best_v[a] = _first_argmax(into[:nc])
            w2[a, nr] = into[best_v[a]]
        best_u = best_us[levels]
        for b in range(nr):
            for c in range(nc):
                outof[c] = w[cyc[c], rest[b]]
            best_u[b] = _first_argmax(outof[:nc])
            w2[nr, b] = outof[best_u[b]]
        n_cyc[levels] = nc
        n_rest[levels] = nr
        roots[levels] = root
        levels += 1
        new_root = 0
        while rest[new_root] != root:
            new_root += 1
        root = new_root
        w = w2
    # on the way up: expand every contracted cycle
    p2 = parents[levels, :w.shape[0]].copy()
    for level in range(levels - 1, -1, -1):
        cyc, rest, best_v, best_u = cycs[level], rests[level], best_vs[level], best_us[level]
        nr = n_rest[level]
        out = parents[level, :nr + n_cyc[level]].copy()
        for a in range(nr):
            v = rest[a]
            if v == roots[level]:
                continue
            pv = p2[a]
            out[v] = cyc[best_u[a]] if pv == nr else rest[pv]
        u_idx = p2[nr]
        out[cyc[best_v[u_idx]]] = rest[u_idx]
        p2 = out
    return p2, -1


def _no_arborescence(bad: int) -> ValueError:
    return ValueError(f"node {bad} has no incoming edge: no spanning arborescence exists")


def max_arborescence(weights: np.ndarray, root: int) -> np.ndarray:
    """Maximum-weight spanning arborescence of a dense digraph (Chu-Liu/Edmonds).

    Parameters
    ----------
    weights : ndarray (n, n)
        ``weights[i, j]`` weight of the edge ``i -> j``; ``-inf`` marks a missing edge.
    root : int
        The root (it gets no parent).

    Returns
    -------
    parent : ndarray of int (n,)
        ``parent[j]`` of every node, ``-1`` for the root.

    Raises
    ------
    ValueError
        If some node cannot be reached from the root.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[0, 5, 1], [0, 0, 2], [0, 9, 0.]]); w[:, 0] = -np.inf
    >>> max_arborescence(w, 0).tolist()   # 0 -> 2 -> 1 weighs 1 + 9
    [-1, 2, 0]
    """
    w = np.array(weights, dtype=np.float64, copy=True)
    n = w.shape[0]
    if w.ndim != 2 or w.shape[1] != n:
        raise ValueError(f"weights must be square, got shape {w.shape}")
    parent, bad = _arborescence(w, int(root))
    if bad >= 0:
        raise _no_arborescence(bad)
    return parent


def rooted_trees(weights: np.ndarray, root: int) -> tuple[np.ndarray, np.ndarray]:
    """The best spanning arborescence with exactly one edge out of ``root``, per child of ``root``.

    ``root`` must be the last node (``root = n - 1``): the virtual root of an SCF.

    Returns
    -------
    parents : ndarray of int (root, n)
        Row ``rho``: the parents of the best arborescence whose only root edge is
        ``root -> rho`` (``-1`` rows where ``weights[root, rho] = -inf``).
    usable : ndarray of bool (root,)
        Whether ``rho`` can be the tree's root (a finite root edge).

    Raises
    ------
    ValueError
        If, for some usable ``rho``, a node cannot be reached (as :func:`max_arborescence`,
        naming the node of the first such ``rho``).

    Examples
    --------
    >>> import numpy as np
    >>> w = np.array([[-np.inf, 5, -np.inf], [1, -np.inf, -np.inf], [3, 0, -np.inf]])
    >>> parents, usable = rooted_trees(w, 2)
    >>> parents.tolist(), usable.tolist()
    ([[2, 0, -1], [1, 2, -1]], [True, True])
    """
    weights = np.asarray(weights, dtype=np.float64)
    n = weights.shape[0]
    parents = np.full((root, n), -1, dtype=np.int64)
    usable = np.isfinite(weights[root, :root])
    for rho in np.flatnonzero(usable):
        w = weights.copy()
        w[root, :] = -np.inf
        w[root, rho] = weights[root, rho]
        parent, bad = _arborescence(w, root)
        if bad >= 0:
            raise _no_arborescence(bad)
        parents[rho] = parent
    return parents, usable
