"""Markov blanket structures as tuples of parent masks: legality, operators, enumeration.

A structure over ``p`` variables is ``pa``, a tuple of ``p`` integers: bit ``u`` of
``pa[v]`` is set when ``u -> v``.  With ``t`` the target (Visweswaran & Cooper,
section 5.1), a *Markov blanket (MB) structure* is a DAG whose every arc is a blanket
arc, one that points into ``t`` or into a child of ``t``:

    legal(pa)  <=>  acyclic(pa)  and  for every v != t with pa[v] != 0: bit t of pa[v]

The five groups of nodes (Figure 4) are masks computed from ``pa``:

    P = pa[t],    C = {v : t in pa[v]},    S = (union of pa[c], c in C) - t - P - C,
    O = everything else but t                                       (:func:`_categories`)

Operators (section 5.7, Figures 4 and 5; :data:`bnexplore.ismb.OPERATOR_TABLE`) change
one or two masks; :func:`_successor_masks` yields every valid one with the nodes whose
mask changed, so that a successor's score is its parent's plus the changed families'
differences (the score is decomposable).

Counting.  A structure with ``k`` children chooses them (``C(n, k)``), the target's
parents among the other ``n - k`` predictors (``2^(n-k)``), each child's extra parents
among the non-children (``2^(k(n-k))``) and a DAG among the children (``a_k`` labelled
DAGs, Robinson's recurrence ``a_n = sum_j (-1)^(j+1) C(n, j) 2^(j(n-j)) a_(n-j)``):

    #MB(n) = sum_k C(n, k) 2^(n-k) 2^(k(n-k)) a_k                     (structure count)

:func:`_enumerate_masks` lists them one by one in that decomposition.

Glossary
--------
pa
    Parent masks of a structure, one int per variable.
t, tb
    Index of the target; ``1 << t``.
pm, cm, sm, om
    Masks of the target's parents, children, spouses and the other variables.
changed
    The nodes whose parent mask an operator changes.

The structure type itself, :class:`MarkovBlanket` (``bnexplore.ismb.MarkovBlanket``), is
defined here, apart from the search: an ISMB result holds these structures, and reading
a kept result back then needs no search kernels.
"""
from __future__ import annotations

import math
from itertools import combinations
from typing import TYPE_CHECKING, Iterator, Sequence

if TYPE_CHECKING:
    import networkx as nx

__all__: list[str] = []


#: _bits of the masks met so far (a search meets the same few masks again and again)
_BITS_CACHE: dict[int, list[int]] = {}


def _bits(mask: int) -> list[int]:
    """The set bits of ``mask``, lowest first (a cached list: do not modify it)."""
    out = _BITS_CACHE.get(mask)
    if out is None:
        out = []
        m = mask
        while m:
            low = m & -m
            out.append(low.bit_length() - 1)
            m ^= low
        if len(_BITS_CACHE) < 1 << 16:
            _BITS_CACHE[mask] = out
    return out


def _children_mask(pa: tuple[int, ...], t: int) -> int:
    tb = 1 << t
    m = 0
    for i, pm in enumerate(pa):
        if pm & tb:
            m |= 1 << i
    return m


def _categories(pa: tuple[int, ...], t: int) -> tuple[int, int, int, int]:
    """(P, C, S, O) node masks of a structure."""
    p = len(pa)
    cm = _children_mask(pa, t)
    pm = pa[t]
    sm = 0
    for c in _bits(cm):
        sm |= pa[c]
    sm &= ~((1 << t) | pm | cm)
    om = ((1 << p) - 1) & ~((1 << t) | pm | cm | sm)
    return pm, cm, sm, om


def _reaches(pa: tuple[int, ...], src: int, dst: int, within: int) -> bool:
    """Is there a directed path src -> ... -> dst through nodes of mask ``within``?"""
    if src == dst:
        return True
    seen = 1 << src
    stack = [src]
    while stack:
        u = stack.pop()
        ub = 1 << u
        for v in _bits(within & ~seen):
            if pa[v] & ub:
                if v == dst:
                    return True
                seen |= 1 << v
                stack.append(v)
    return False


def _descendants(pa: tuple[int, ...], src: int, within: int) -> int:
    """Mask of the nodes of ``within`` reachable from ``src`` by a directed path whose
    nodes after ``src`` all lie in ``within`` (``src`` itself excluded)."""
    seen = 0
    frontier = 1 << src
    while frontier:
        low = frontier & -frontier
        frontier ^= low
        for v in _bits(within & ~seen):
            if pa[v] & low:
                seen |= 1 << v
                frontier |= 1 << v
    return seen


def _is_acyclic(pa: Sequence[int]) -> bool:
    p = len(pa)
    indeg = [bin(m).count("1") for m in pa]
    order = [i for i in range(p) if indeg[i] == 0]
    done = 0
    while order:
        u = order.pop()
        done += 1
        ub = 1 << u
        for v in range(p):
            if pa[v] & ub:
                indeg[v] -= 1
                if indeg[v] == 0:
                    order.append(v)
    return done == p


def _is_legal(pa: Sequence[int], t: int) -> bool:
    """Legal MB structure: acyclic and every arc points into t or into a child of t."""
    tb = 1 << t
    for i, pm in enumerate(pa):
        if pm and i != t and not (pm & tb):
            return False
        if pm & (1 << i):
            return False
    return _is_acyclic(pa)


def _successor_masks(pa: tuple[int, ...], t: int):
    """Yield (op, tail, head, new_masks, changed_nodes) for every valid operation."""
    p = len(pa)
    tb = 1 << t
    pm, cm, sm, om = _categories(pa, t)
    children = _bits(cm)
    # ---- add
    outside = _bits(sm | om)
    for x in outside:                              # X -> Z
        new = list(pa)
        new[t] = pa[t] | (1 << x)
        yield "add", x, t, tuple(new), (t,)
    for x in outside:                              # Z -> X: X becomes a child
        new = list(pa)
        new[x] = tb
        yield "add", t, x, tuple(new), (x,)
    for c in children:                             # X -> C
        cand = ((1 << p) - 1) & ~(pa[c] | tb | (1 << c))
        # a child X -> C closes a cycle when X is a descendant of C among the children
        cand &= ~_descendants(pa, c, cm)
        for x in _bits(cand):
            new = list(pa)
            new[c] = pa[c] | (1 << x)
            yield "add", x, c, tuple(new), (c,)
    # ---- delete
    for x in _bits(pa[t]):
        new = list(pa)
        new[t] = pa[t] & ~(1 << x)
        yield "delete", x, t, tuple(new), (t,)
    for c in children:
        new = list(pa)
        new[c] = 0                                 # clean-up: arcs into c leave the blanket
        yield "delete", t, c, tuple(new), (c,)
        for x in _bits(pa[c] & ~tb):
            new = list(pa)
            new[c] = pa[c] & ~(1 << x)
            yield "delete", x, c, tuple(new), (c,)
    # ---- reverse
    for x in _bits(pa[t]):                         # P -> Z  =>  Z -> P
        new = list(pa)
        new[t] = pa[t] & ~(1 << x)
        new[x] = tb
        yield "reverse", x, t, tuple(new), (t, x)
    for c in children:
        new = list(pa)                             # Z -> C  =>  C -> Z, C loses its parents
        new[c] = 0
        new[t] = pa[t] | (1 << c)
        yield "reverse", t, c, tuple(new), (t, c)
        for x in _bits(pa[c] & cm):                # C1 -> C2  =>  C2 -> C1
            new = list(pa)
            new[c] = pa[c] & ~(1 << x)
            if _reaches(tuple(new), x, c, cm):
                continue
            new[x] = pa[x] | (1 << c)
            yield "reverse", x, c, tuple(new), (x, c)


def _n_labelled_dags(k: int) -> int:
    # Robinson's recurrence
    a = [1]
    for n in range(1, k + 1):
        a.append(sum((-1) ** (j + 1) * math.comb(n, j) * 2 ** (j * (n - j)) * a[n - j]
                     for j in range(1, n + 1)))
    return a[k]


def _enumerate_masks(p: int, t: int) -> Iterator[tuple[int, ...]]:
    """Every MB structure over p variables with target index t, as parent masks."""
    preds = [i for i in range(p) if i != t]
    n = len(preds)
    tb = 1 << t
    for k in range(n + 1):
        for ch in combinations(preds, k):
            cm = sum(1 << c for c in ch)
            others = [i for i in preds if not (cm >> i) & 1]
            # parents of the target: any subset of the non-children
            tpas = [sum(1 << o for o, b in zip(others, bits) if b)
                    for bits in _subsets_bits(len(others))]
            # extra parents of each child: any subset of the other predictors, acyclic
            opts = []
            for c in ch:
                pool = [i for i in preds if i != c]
                opts.append([sum(1 << q for q, b in zip(pool, bits) if b)
                             for bits in _subsets_bits(len(pool))])
            for combo in _product(opts):
                pa = [0] * p
                for c, extra in zip(ch, combo):
                    pa[c] = tb | extra
                if k > 1 and not _is_acyclic(pa):
                    continue
                for tp in tpas:
                    pa[t] = tp
                    yield tuple(pa)


def _subsets_bits(n: int):
    for m in range(1 << n):
        yield [(m >> i) & 1 for i in range(n)]


def _product(lists):
    if not lists:
        yield ()
        return
    head, rest = lists[0], lists[1:]
    for h in head:
        for r in _product(rest):
            yield (h,) + r


# --------------------------------------------------------------------------- structure type
class MarkovBlanket:
    """A Markov blanket structure of a target (immutable, hashable).

    Parameters
    ----------
    names : sequence of str
        All variables of the domain (the target included).
    target : str
        The target variable Z.
    parents : mapping name -> iterable of names, optional
        Parent sets; nodes not listed have no parents.  Every arc must point into the
        target or into a child of the target and the graph must be acyclic.

    Examples
    --------
    >>> mb = MarkovBlanket(["Z", "A", "B", "C"], "Z", {"Z": ["A"], "B": ["Z", "C"]})
    >>> mb.parents, mb.children, mb.spouses
    (['A'], ['B'], ['C'])
    >>> sorted(mb.arcs)
    [('A', 'Z'), ('C', 'B'), ('Z', 'B')]
    """

    __slots__ = ("names", "target", "_t", "_pa", "_hash")

    def __init__(self, names: Sequence[str], target: str, parents=None):
        names = [str(n) for n in names]
        if len(set(names)) != len(names):
            raise ValueError(f"names must be unique, got {names}")
        if target not in names:
            raise ValueError(f"target {target!r} is not one of the variables {names}")
        index = {n: i for i, n in enumerate(names)}
        pa = [0] * len(names)
        for child, ps in (parents or {}).items():
            if child not in index:
                raise ValueError(f"unknown variable {child!r} in parents; variables are {names}")
            for q in ps:
                if q not in index:
                    raise ValueError(f"unknown parent {q!r} of {child!r}; variables are {names}")
                pa[index[child]] |= 1 << index[q]
        t = index[target]
        if not _is_legal(pa, t):
            raise ValueError(
                "not a Markov blanket structure of %r: every arc must point into the target or "
                "into a child of the target, and the graph must be acyclic" % target)
        self._init(names, t, tuple(pa))

    def _init(self, names, t, pa):
        self.names = names
        self.target = names[t]
        self._t = t
        self._pa = pa
        self._hash = hash(pa)

    @classmethod
    def _from_masks(cls, names: list[str], t: int, pa: tuple[int, ...]) -> "MarkovBlanket":
        obj = cls.__new__(cls)
        obj._init(names, t, pa)
        return obj

    @classmethod
    def from_dag(cls, dag: nx.DiGraph, target: str, names: Sequence[str] | None = None
                 ) -> "MarkovBlanket":
        """The MB structure of ``target`` extracted from a DAG (section 5.1): keeps the arcs
        into the target and into its children, drops every other arc."""
        if target not in dag:
            raise ValueError(f"target {target!r} is not a node of the DAG")
        names = list(names) if names is not None else [str(n) for n in dag.nodes]
        ch = set(dag.successors(target))
        parents = {target: list(dag.predecessors(target))}
        for c in ch:
            parents[c] = list(dag.predecessors(c))
        return cls(names, target, parents)

    # -- views
    @property
    def masks(self) -> tuple[int, ...]:
        """Parent bit masks, one per variable (internal representation)."""
        return self._pa

    def _names_of(self, mask: int) -> list[str]:
        return [self.names[i] for i in _bits(mask)]

    @property
    def parents(self) -> list[str]:
        """Parents of the target."""
        return self._names_of(self._pa[self._t])

    @property
    def children(self) -> list[str]:
        return self._names_of(_children_mask(self._pa, self._t))

    @property
    def spouses(self) -> list[str]:
        """Parents of children that are neither the target, its parents nor its children."""
        return self._names_of(_categories(self._pa, self._t)[2])

    @property
    def members(self) -> list[str]:
        """The blanket: parents, children and every other parent of a child."""
        pm, cm, _, om = _categories(self._pa, self._t)
        allm = (1 << len(self.names)) - 1
        return self._names_of(allm & ~om & ~(1 << self._t))

    def category(self, name: str) -> str:
        """'T', 'P', 'C', 'S' or 'O' (Figure 4)."""
        i = self.names.index(name)
        if i == self._t:
            return "T"
        pm, cm, sm, _ = _categories(self._pa, self._t)
        for lab, m in (("P", pm), ("C", cm), ("S", sm)):
            if m >> i & 1:
                return lab
        return "O"

    def parents_of(self, name: str) -> list[str]:
        return self._names_of(self._pa[self.names.index(name)])

    @property
    def arcs(self) -> list[tuple[str, str]]:
        return [(self.names[q], self.names[v]) for v, m in enumerate(self._pa) for q in _bits(m)]

    def to_networkx(self, members_only: bool = True) -> nx.DiGraph:
        """The structure as a DiGraph (by default only the target and its blanket)."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_node(self.target)
        g.add_nodes_from(self.members if members_only else self.names)
        g.add_edges_from(self.arcs)
        return g

    def __eq__(self, other) -> bool:
        return (isinstance(other, MarkovBlanket) and self._pa == other._pa
                and self._t == other._t and self.names == other.names)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        arcs = ", ".join(f"{a}->{b}" for a, b in self.arcs) or "no arcs"
        return f"MarkovBlanket(target={self.target!r}: {arcs})"
