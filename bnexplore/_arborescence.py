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
"""
from __future__ import annotations

import numpy as np

__all__ = ["max_arborescence"]


def _find_cycle(parent: np.ndarray, root: int) -> list[int] | None:
    n = parent.shape[0]
    state = np.zeros(n, dtype=np.int8)  # 0 new, 1 on current path, 2 done
    state[root] = 2
    for s in range(n):
        if state[s]:
            continue
        path = []
        v = s
        while state[v] == 0:
            state[v] = 1
            path.append(v)
            v = int(parent[v])
        if state[v] == 1:  # closed a cycle
            return path[path.index(v):]
        for u in path:
            state[u] = 2
    return None


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
    np.fill_diagonal(w, -np.inf)
    w[:, root] = -np.inf
    parent = np.argmax(w, axis=0)
    parent[root] = -1
    others = np.array([j for j in range(n) if j != root], dtype=np.int64)
    if others.size and not np.isfinite(w[parent[others], others]).all():
        bad = int(others[~np.isfinite(w[parent[others], others])][0])
        raise ValueError(f"node {bad} has no incoming edge: no spanning arborescence exists")
    cycle = _find_cycle(parent, root)
    if cycle is None:
        return parent
    cyc = np.array(cycle, dtype=np.int64)
    incyc = np.zeros(n, dtype=bool)
    incyc[cyc] = True
    rest = np.flatnonzero(~incyc)
    nr = rest.size
    w2 = np.full((nr + 1, nr + 1), -np.inf)
    w2[:nr, :nr] = w[np.ix_(rest, rest)]
    cyc_in = w[parent[cyc], cyc]
    into = w[np.ix_(rest, cyc)] - cyc_in[None, :]
    best_v = np.argmax(into, axis=1)
    w2[:nr, nr] = into[np.arange(nr), best_v]
    outof = w[np.ix_(cyc, rest)]
    best_u = np.argmax(outof, axis=0)
    w2[nr, :nr] = outof[best_u, np.arange(nr)]
    new_root = int(np.flatnonzero(rest == root)[0])
    p2 = max_arborescence(w2, new_root)
    out = parent.copy()
    for idx, v in enumerate(rest):
        if v == root:
            continue
        pv = p2[idx]
        out[v] = cyc[best_u[idx]] if pv == nr else rest[pv]
    u_idx = int(p2[nr])
    out[cyc[best_v[u_idx]]] = rest[u_idx]
    return out
