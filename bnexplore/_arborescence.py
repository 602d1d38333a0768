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

The contractions run as a loop that records every level (its parents, cycle, rest and
best ``v`` / ``u``) on the way down and expands them on the way up, the same steps in
the same order as the recursion above, so the kernel is numba-compiled.  A spanning
*tree* (exactly one root edge) is the best of the arborescences in which the virtual
root keeps one edge, ``root -> rho``, for every ``rho``: :func:`rooted_trees` solves
them all in one kernel call.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["max_arborescence", "rooted_trees"]


@numba.njit(cache=True, nogil=True, inline="always")
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
def _find_cycle(parent: np.ndarray, root: int) -> np.ndarray:
    """The first cycle of the parent pointers (walking from nodes 0, 1, ...), or an empty array."""
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
            return path[start:length].copy()
        for i in range(length):
            state[path[i]] = 2
    return np.empty(0, dtype=np.int64)


@numba.njit(cache=True, nogil=True)
def _arborescence(weights: np.ndarray, root: int):
    """``(parent, bad)``: Chu-Liu/Edmonds on a dense weight matrix (see the module notes)."""
    # on the way down: one entry per contraction
    parents = []
    cycs = []
    rests = []
    best_vs = []
    best_us = []
    roots = []
    w = weights.copy()
    while True:
        n = w.shape[0]
        for i in range(n):
            w[i, i] = -np.inf
            w[i, root] = -np.inf
        parent = np.empty(n, dtype=np.int64)
        for j in range(n):
            parent[j] = _first_argmax(w[:, j])
        parent[root] = -1
        for j in range(n):
            if j != root and not np.isfinite(w[parent[j], j]):
                return parent, j
        cyc = _find_cycle(parent, root)
        if cyc.shape[0] == 0:
            break
        nc = cyc.shape[0]
        incyc = np.zeros(n, dtype=np.bool_)
        for c in range(nc):
            incyc[cyc[c]] = True
        rest = np.flatnonzero(~incyc)
        nr = rest.shape[0]
        w2 = np.full((nr + 1, nr + 1), -np.inf)
        for a in range(nr):
            for b in range(nr):
                w2[a, b] = w[rest[a], rest[b]]
        into = np.empty(nc)
        best_v = np.empty(nr, dtype=np.int64)
        for a in range(nr):
            for c in range(nc):
                into[c] = w[rest[a], cyc[c]] - w[parent[cyc[c]], cyc[c]]
            best_v[a] = _first_argmax(into)
            w2[a, nr] = into[best_v[a]]
        outof = np.empty(nc)
        best_u = np.empty(nr, dtype=np.int64)
        for b in range(nr):
            for c in range(nc):
                outof[c] = w[cyc[c], rest[b]]
            best_u[b] = _first_argmax(outof)
            w2[nr, b] = outof[best_u[b]]
        parents.append(parent)
        cycs.append(cyc)
        rests.append(rest)
        best_vs.append(best_v)
        best_us.append(best_u)
        roots.append(root)
        new_root = 0
        while rest[new_root] != root:
            new_root += 1
        root = new_root
        w = w2
    # on the way up: expand every contracted cycle
    p2 = parent
    for level in range(len(parents) - 1, -1, -1):
        cyc, rest, best_v, best_u = cycs[level], rests[level], best_vs[level], best_us[level]
        nr = rest.shape[0]
        out = parents[level].copy()
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


@numba.njit(cache=True, nogil=True)
def _rooted_trees(weights: np.ndarray, root: int):
    """For every node ``rho`` with a finite root edge, the best arborescence in which
    ``root`` keeps only its edge to ``rho``: ``(parents, bad)`` per ``rho`` (rows)."""
    n = weights.shape[0]
    parents = np.full((root, n), -1, dtype=np.int64)
    bad = np.full(root, -2, dtype=np.int64)        # -2: rho cannot be the root
    for rho in range(root):
        if not np.isfinite(weights[root, rho]):
            continue
        w = weights.copy()
        w[root, :] = -np.inf
        w[root, rho] = weights[root, rho]
        parent, fail = _arborescence(w, root)
        bad[rho] = fail
        if fail < 0:
            parents[rho] = parent
    return parents, bad


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
    w = np.ascontiguousarray(weights, dtype=np.float64)
    parents, bad = _rooted_trees(w, int(root))
    failed = np.flatnonzero(bad >= 0)
    if failed.size:     # the first root that fails raises, as a loop over the roots would
        raise _no_arborescence(int(bad[failed[0]]))
    return parents, bad != -2
