"""Exact inference in a discrete Bayesian network by a junction tree (Hugin propagation).

The joint of a network factorises over its families, ``P(x) = prod_v P(x_v | x_pa(v))``.
Hard evidence ``E = e`` multiplies the joint by indicators ``1[x_u = e_u]``, and every
posterior marginal is a sum of that product:

    P(x_v, e) = sum_{x : x_v fixed} prod_u P(x_u | x_pa(u)) prod_{u in E} 1[x_u = e_u],
    P(x_v | e) = P(x_v, e) / P(e).

The sums are organised on a junction tree (Lauritzen & Spiegelhalter 1988; Jensen,
Lauritzen & Olesen 1990):

* **moralise and triangulate**: marry the parents of every node, drop directions, and
  eliminate the nodes one at a time, each time the node whose elimination adds the
  fewest fill-in edges (ties: the smallest clique table, then the declaration order);
  the *elimination clique* of ``v`` is ``v`` with its neighbours at elimination time;
* **the tree**: the clique of ``v`` hangs below the clique of the first-eliminated of
  its neighbours (its *separator* is those neighbours), so the cliques processed in
  elimination order meet every child before its parent, and the running-intersection
  property holds (Rose, Tarjan & Lueker 1976);
* **potentials**: each CPT goes to the clique of its family's first-eliminated member
  (which holds the whole family); evidence multiplies the clique of the observed node;
* **collect** (children before parents): ``m_{i->j} = sum_{C_i \\ S_ij} psi_i`` and
  ``psi_j <- psi_j m_{i->j}``; the root then holds ``P(x_root-clique, e)``;
* **distribute** (parents before children): ``psi_i <- psi_i (sum_{C_j \\ S_ij} psi_j) /
  m_{i->j}`` with ``0 / 0 = 0``; every clique then holds ``P(x_C, e)`` up to the
  scale factors below, and a node's marginal is its clique summed over the others.

Every message is rescaled to sum to one and the logs of the scales are added, so that
``log P(e)`` is exact and no table underflows however much evidence is set.

Glossary
--------
clique vars
    Integer node indices in increasing order; every table's axes follow them, so a
    separator table reshapes into either clique by putting 1s on the missing axes.
home
    The clique of a node's own elimination, which holds the node (evidence goes there).

References
----------
S. L. Lauritzen and D. J. Spiegelhalter, "Local computations with probabilities on
graphical structures and their application to expert systems", JRSS B 50 (1988).
F. V. Jensen, S. L. Lauritzen and K. G. Olesen, "Bayesian updating in causal
probabilistic networks by local computations", Comput. Stat. Quarterly 4 (1990).
D. J. Rose, R. E. Tarjan and G. S. Lueker, "Algorithmic aspects of vertex elimination
on graphs", SIAM J. Comput. 5 (1976).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: largest clique table (cells) a junction tree may hold; beyond it inference is refused
MAX_CLIQUE_CELLS = 1 << 26


class ImpossibleEvidenceError(ValueError):
    """The evidence has probability zero under the network: no posterior exists."""


@dataclass
class JunctionTree:
    """A compiled junction tree (structure and CPT products; no evidence).

    ``cliques[i]`` are node indices (increasing), ``parent[i]`` the index of the clique
    above (-1 for a root), ``home[v]`` the clique of node ``v``'s elimination,
    ``psi[i]`` the product of the CPTs assigned to clique ``i``, ``shape[i]`` its table
    shape; ``sep_in_child[i]`` / ``sep_in_parent[i]`` reshape clique ``i``'s separator
    table to clique ``i`` / its parent, and ``sum_child[i]`` / ``sum_parent[i]`` are the
    axes summed to get that separator from either side.
    """

    cliques: list
    parent: list
    home: list
    psi: list
    shape: list
    sep_in_child: list
    sep_in_parent: list
    sum_child: list
    sum_parent: list
    arity: list


def elimination_order(neighbours: list[set], arity: list[int]) -> tuple[list[int], list[list[int]]]:
    """Greedy min-fill elimination (ties: smallest clique table, then lowest index).

    Returns the order and every node's elimination clique (the node, then its
    neighbours at elimination time, in increasing order). ``neighbours`` is changed in
    place into the triangulated graph's remaining part (empty at the end).
    """
    n = len(neighbours)
    alive = set(range(n))
    order, cliques = [], []
    for _ in range(n):
        best, best_key = -1, None
        for v in alive:
            nb = neighbours[v]
            fill = 0
            nbl = list(nb)
            for a in range(len(nbl)):
                na = neighbours[nbl[a]]
                for b in range(a + 1, len(nbl)):
                    if nbl[b] not in na:
                        fill += 1
            key = (fill, math.prod(arity[u] for u in nb) * arity[v], v)
            if best_key is None or key < best_key:
                best, best_key = v, key
        v = best
        nb = sorted(neighbours[v])
        for a in nb:
            neighbours[a].update(u for u in nb if u != a)
            neighbours[a].discard(v)
        order.append(v)
        cliques.append(sorted([v] + nb))
        alive.discard(v)
        neighbours[v] = set()
    return order, cliques


def moral_neighbours(parents: list[list[int]]) -> list[set]:
    """The moral graph of a network given by integer parent lists: every node's
    neighbours once each family (a node and its parents) is made a clique.

    Examples
    --------
    >>> moral_neighbours([[], [], [0, 1]])
    [{1, 2}, {0, 2}, {0, 1}]
    """
    neighbours = [set() for _ in range(len(parents))]
    for v, ps in enumerate(parents):
        fam = list(ps) + [v]
        for a in fam:
            neighbours[a].update(u for u in fam if u != a)
    return neighbours


def largest_clique_cells(parents: list[list[int]], arity: list[int]) -> int:
    """Cells of the largest clique table :func:`compile_tree` would build for a network
    with these integer parent lists (structure only: nothing is allocated).

    Examples
    --------
    >>> largest_clique_cells([[], [0], [0, 1]], [2, 3, 4])
    24
    """
    _, elim = elimination_order(moral_neighbours(parents), arity)
    return max((math.prod(arity[u] for u in c) for c in elim), default=1)


def _aligned(table: np.ndarray, vars_: list[int], target: list[int], arity: list[int]) -> np.ndarray:
    """``table`` (axes ``vars_``, any order) transposed and reshaped to broadcast over the
    axes ``target`` (increasing; a superset of ``vars_``)."""
    perm = sorted(range(len(vars_)), key=lambda i: vars_[i])
    t = np.transpose(table, perm)
    present = set(vars_)
    return t.reshape([arity[u] if u in present else 1 for u in target])


def compile_tree(parents: list[list[int]], cpts: list[np.ndarray], arity: list[int],
                 max_cells: int = MAX_CLIQUE_CELLS) -> JunctionTree:
    """The junction tree of a network given by integer parent lists and (q, r) CPTs
    (rows in mixed radix over the parents, last parent fastest)."""
    n = len(parents)
    order, elim = elimination_order(moral_neighbours(parents), arity)
    pos = {v: i for i, v in enumerate(order)}
    cells = [math.prod(arity[u] for u in c) for c in elim]
    worst = int(np.argmax(cells))
    if cells[worst] > max_cells:
        raise ValueError(f"exact inference needs a clique table of {cells[worst]:,} cells "
                         f"(over {len(elim[worst])} nodes), more than the limit of {max_cells:,}: "
                         f"the network is too densely connected for a junction tree")
    # clique i is the elimination clique of order[i]; its parent is the clique of the
    # first-eliminated of its other members
    parent = []
    for i, v in enumerate(order):
        rest = [u for u in elim[i] if u != v]
        parent.append(min(pos[u] for u in rest) if rest else -1)
    home = [pos[v] for v in range(n)]
    psi = [np.ones([arity[u] for u in c]) for c in elim]
    for v, ps in enumerate(parents):
        fam = list(ps) + [v]
        i = min(pos[u] for u in fam)
        t = np.asarray(cpts[v], dtype=np.float64).reshape([arity[u] for u in fam])
        psi[i] = psi[i] * _aligned(t, fam, elim[i], arity)
    sep_in_child, sep_in_parent, sum_child, sum_parent = [], [], [], []
    for i, c in enumerate(elim):
        j = parent[i]
        if j < 0:
            sep_in_child.append(None), sep_in_parent.append(None), sum_child.append(None), sum_parent.append(None)
            continue
        sep = set(c) & set(elim[j])
        sep_in_child.append(tuple(arity[u] if u in sep else 1 for u in c))
        sep_in_parent.append(tuple(arity[u] if u in sep else 1 for u in elim[j]))
        sum_child.append(tuple(a for a, u in enumerate(c) if u not in sep))
        sum_parent.append(tuple(a for a, u in enumerate(elim[j]) if u not in sep))
    return JunctionTree(elim, parent, home, psi, [p.shape for p in psi], sep_in_child, sep_in_parent,
                        sum_child, sum_parent, list(arity))


def _scaled(t: np.ndarray) -> tuple[np.ndarray, float]:
    """``t`` divided by its sum, and the log of the sum (``-inf`` when it is zero)."""
    s = float(t.sum())
    if s <= 0.0:
        return t, -math.inf
    return t / s, math.log(s)


def propagate(jt: JunctionTree, evidence: dict[int, int]) -> tuple[list[np.ndarray], float]:
    """Collect and distribute with hard ``evidence`` (node index -> state index).

    Returns every clique's normalised table ``P(x_C | e)`` and ``log P(e)``
    (``-inf`` when the evidence is impossible; the tables are then meaningless).
    """
    psi = [p for p in jt.psi]
    for v, s in evidence.items():
        i = jt.home[v]
        axis = jt.cliques[i].index(v)
        mask = np.zeros(jt.arity[v])
        mask[s] = 1.0
        shape = [1] * len(jt.cliques[i])
        shape[axis] = jt.arity[v]
        psi[i] = psi[i] * mask.reshape(shape)
    log_pe = 0.0
    up = [None] * len(psi)
    for i, j in enumerate(jt.parent):  # collect: the cliques in elimination order
        if j < 0:
            psi[i], lz = _scaled(psi[i])
            log_pe += lz
            continue
        m = psi[i].sum(axis=jt.sum_child[i]) if jt.sum_child[i] else psi[i]
        m, lz = _scaled(m)
        log_pe += lz
        if lz == -math.inf:
            return psi, -math.inf
        up[i] = m
        psi[j] = psi[j] * m.reshape(jt.sep_in_parent[i])
    if log_pe == -math.inf:
        return psi, -math.inf
    for i in range(len(psi) - 1, -1, -1):  # distribute: parents before children
        j = jt.parent[i]
        if j < 0:
            continue
        down = psi[j].sum(axis=jt.sum_parent[i]) if jt.sum_parent[i] else psi[j]
        down = down.reshape(jt.sep_in_child[i])
        old = up[i].reshape(jt.sep_in_child[i])
        ratio = np.divide(down, old, out=np.zeros(np.broadcast_shapes(down.shape, old.shape)), where=old > 0)
        psi[i] = psi[i] * ratio
        psi[i] = psi[i] / psi[i].sum()
    return psi, log_pe


def node_marginals(jt: JunctionTree, tables: list[np.ndarray]) -> list[np.ndarray]:
    """Every node's marginal, read from its home clique's table."""
    out = []
    for v, i in enumerate(jt.home):
        c = jt.cliques[i]
        axes = tuple(a for a, u in enumerate(c) if u != v)
        m = tables[i].sum(axis=axes) if axes else tables[i]
        out.append(m / m.sum())
    return out
