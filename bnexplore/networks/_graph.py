"""Graph helpers shared by the network modules: Markov blankets and a topological order
with ties broken by declaration order."""
from __future__ import annotations

import heapq
from typing import Hashable, Mapping, Sequence

import networkx as nx


def markov_blanket(dag: nx.DiGraph, node: Hashable) -> list:
    """Markov blanket of ``node`` in ``dag``: its parents, children and the children's
    other parents, in the order of ``dag.nodes``.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([("a", "c"), ("b", "c"), ("c", "d"), ("e", "d")])
    >>> markov_blanket(g, "c")
    ['a', 'b', 'd', 'e']
    """
    if node not in dag:
        from ..data.core import UnknownColumnError   # a ValueError (and a KeyError)

        raise UnknownColumnError(f"{node!r} is not a node of the graph; nodes are {list(dag.nodes)}")
    mb = set(dag.predecessors(node)) | set(dag.successors(node))
    for child in dag.successors(node):
        mb.update(dag.predecessors(child))
    mb.discard(node)
    return [v for v in dag.nodes if v in mb]


def _lexicographic_topological_order(declared: list[str], parents: Mapping[str, Sequence[str]]) -> list[str]:
    """Topological order of an acyclic graph given by parent lists, ties broken by
    declaration order (as ``networkx.lexicographical_topological_sort``)."""
    pos = {v: i for i, v in enumerate(declared)}
    children: dict[str, list[str]] = {v: [] for v in declared}
    indeg = {v: len(parents[v]) for v in declared}
    for v in declared:
        for p in parents[v]:
            children[p].append(v)
    heap = [pos[v] for v in declared if indeg[v] == 0]
    heapq.heapify(heap)
    out = []
    while heap:
        v = declared[heapq.heappop(heap)]
        out.append(v)
        for c in children[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                heapq.heappush(heap, pos[c])
    return out
