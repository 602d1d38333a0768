r"""Sugiyama-style layered drawing of a DAG: layers, virtual nodes, crossing reduction, x.

The mathematics
---------------
A layered drawing of a DAG :math:`G = (V, E)` gives each node an integer layer
:math:`\ell(v)` with :math:`\ell(u) < \ell(v)` for every arc :math:`u \to v` (drawn at
:math:`y = -\ell`), an order of the nodes within each layer, and an x coordinate
(Sugiyama, Tagawa & Toda 1981; Gansner et al. 1993, "A technique for drawing directed
graphs").

1. **Layering.** Start from the longest-path layering
   :math:`\ell(v) = \max_{u \to v} \ell(u) + 1` (sources on layer 0). The total arc
   span :math:`\sum_{u \to v} \ell(v) - \ell(u)` then changes with one node's layer
   :math:`\ell` as :math:`(\mathrm{indeg}(v) - \mathrm{outdeg}(v))\,\ell + \mathrm{const}`,
   so a node with more children than parents moves down as far as its children allow
   (to :math:`\min_{v \to w} \ell(w) - 1`) and one with more parents than children
   moves up; repeated until nothing moves. Short arcs cross fewer layers and so fewer
   other arcs. A given class node is pinned alone on top (layer 0): its incoming arcs
   are reversed for the layout only, which cannot create a cycle (the node becomes a
   source). Given a width bound :math:`W` (the room of a narrow window), a layer whose
   boxes, gaps and passing arcs need more than :math:`W` sends nodes one layer down,
   top layer first, until every layer with two real nodes or more fits (the idea of
   Coffman & Graham's width-bounded layering, 1972): nodes whose children are at least
   two layers lower go first (nothing else moves), then those with the most children
   below and the fewest parents above (the arcs lengthen least), the widest first;
   children that would no longer be below their parent follow it down.
2. **Virtual nodes.** An arc spanning :math:`k > 1` layers is split by :math:`k - 1`
   virtual nodes, one per layer crossed, so every arc joins adjacent layers and the
   virtual nodes reserve room for the arc in the layers it passes.
3. **Crossing reduction.** Alternating sweeps down and up order each layer by the
   median (or barycentre) of its neighbours' positions in the layer just fixed; after
   each sweep, adjacent nodes are swapped while a swap lowers the crossings with both
   neighbouring layers ("transpose"). Crossings between two layers are the inversions
   of the lower endpoints once arcs are sorted by their upper endpoint. The best
   ordering seen is kept. Several starting orders are tried.
4. **Coordinates.** Within a layer, node :math:`j` needs
   :math:`x_j - x_{j-1} \ge s_j = (b_{j-1} + b_j)/2 + \mathrm{gap}` (:math:`b` the node's
   box width). Given targets :math:`d_j` (the mean x of its neighbours in the adjacent
   layer) and weights :math:`w_j`, minimising :math:`\sum_j w_j (x_j - d_j)^2` under
   those constraints is, with :math:`c_j = \sum_{i \le j} s_i` and
   :math:`y_j = x_j - c_j`, an isotonic regression of :math:`d_j - c_j` (:math:`y`
   non-decreasing), solved exactly by pool-adjacent-violators. Sweeps down, up and
   both ways pull parents over children. Arcs are drawn as straight segments between
   the real nodes, so a virtual node's target is the point of its arc's straight
   segment on its layer (weighted more): the separation constraints then keep the
   other boxes of that layer off the arc. With a width bound :math:`W`, every layer
   also keeps its boxes within :math:`[-W/2, W/2]`: bounds on :math:`x_0` and
   :math:`x_{last}` are the same bounds on every :math:`y_j`, and the isotonic fit
   under them is the unbounded one clipped.

The ordering finally kept is the candidate (several starts, then swaps of neighbours)
with the least badness: crossings of the straight segments (:func:`count_crossings`)
plus the long arcs that still pass through a box.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import networkx as nx
import numpy as np

#: weight of a virtual node's target in the coordinate passes (straightens long arcs).
_VIRTUAL_WEIGHT = 4.0
#: weight of a node with no neighbour on the reference side (it stays where it is).
_FREE_WEIGHT = 0.05


def _sort_key(node: Hashable) -> tuple[str, str]:
    """Total, deterministic order over node names of any (mixed) type."""
    return (type(node).__name__, str(node))


# ------------------------------------------------------------------------ 1. layering
def assign_layers(g: nx.DiGraph, top: Hashable | None = None) -> dict[Hashable, int]:
    """Layers of the nodes of the DAG ``g`` (no isolated nodes expected), top = 0.

    Longest-path layering, then span balancing (module docstring, step 1). ``top`` is
    pinned on layer 0 and every other node is put below it; ``g`` must have ``top`` as
    a source.
    """
    order = list(nx.lexicographical_topological_sort(g, key=lambda n: str(_sort_key(n))))
    floor = {v: (0 if top is None or v == top else 1) for v in order}
    layer: dict[Hashable, int] = {}
    for v in order:
        layer[v] = max([floor[v], *(layer[u] + 1 for u in g.predecessors(v))])
    for _ in range(4 * len(order) + 1):
        moved = False
        for v in reversed(order):
            if v == top:
                continue
            indeg, outdeg = g.in_degree(v), g.out_degree(v)
            if outdeg > indeg:  # more children than parents: go down towards them
                target = min(layer[w] for w in g.successors(v)) - 1
            elif indeg > outdeg:  # more parents: go up towards them
                target = max([floor[v], *(layer[u] + 1 for u in g.predecessors(v))])
            else:
                continue
            if target != layer[v]:
                layer[v] = target
                moved = True
        if not moved:
            break
    low = min(layer.values(), default=0)
    return {v: k - low for v, k in layer.items()}


def bound_layer_widths(g: nx.DiGraph, layer: Mapping[Hashable, int],
                       width: Mapping[Hashable, float], gap: float, max_width: float,
                       virtual_width: float, top: Hashable | None = None) -> dict[Hashable, int]:
    """``layer`` with nodes moved down until no layer of two real nodes or more needs
    more than ``max_width`` (boxes, gaps, and the virtual nodes of the arcs passing
    through it; module docstring, step 1). ``top`` never moves."""
    layer = dict(layer)
    movable = [v for v in layer if v != top]

    def load() -> dict[int, float]:
        need: dict[int, float] = {}
        count: dict[int, int] = {}
        for v, k in layer.items():
            need[k] = need.get(k, -gap) + width[v] + gap
            count[k] = count.get(k, 0) + (v != top)
        for u, v in g.edges:
            for k in range(layer[u] + 1, layer[v]):
                need[k] = need.get(k, -gap) + virtual_width + gap / 2.0
        return {k: w for k, w in need.items() if w > max_width and count.get(k, 0) > 1}

    for _ in range(len(layer) ** 2 + 1):
        over = load()
        if not over:
            break
        k = min(over)

        def cost(v: Hashable) -> tuple:
            free = all(layer[w] > k + 1 for w in g.successors(v))
            return (not free, g.in_degree(v) - g.out_degree(v), -width[v], _sort_key(v))

        v = min((u for u in movable if layer[u] == k), key=cost)
        layer[v] = k + 1
        stack = [v]
        while stack:  # children stay below their parents
            u = stack.pop()
            for w in g.successors(u):
                if layer[w] <= layer[u]:
                    layer[w] = layer[u] + 1
                    stack.append(w)
    return layer


# ---------------------------------------------------------- 2. virtual nodes (proper graph)
class _Proper:
    """The layered graph with virtual nodes: integer ids, neighbours in adjacent layers.

    Ids ``0 .. n_real - 1`` are the real nodes (in ``names`` order); larger ids are
    virtual. ``chains[(u, v)]`` lists the ids along the arc ``u -> v`` (both ends
    included).
    """

    def __init__(self, g: nx.DiGraph, layer: Mapping[Hashable, int],
                 width: Mapping[Hashable, float], virtual_width: float):
        self.names = sorted(layer, key=_sort_key)
        index = {n: i for i, n in enumerate(self.names)}
        self.n_real = len(self.names)
        self.layer_of = [layer[n] for n in self.names]
        self.width = [float(width[n]) for n in self.names]
        self.up: list[list[int]] = [[] for _ in self.names]
        self.down: list[list[int]] = [[] for _ in self.names]
        self.chains: dict[tuple[Hashable, Hashable], list[int]] = {}
        #: widest drawing wanted (x coordinates keep the boxes within it), or None
        self.max_width: float | None = None
        #: virtual id -> (upper real id, lower real id, fraction of the way down)
        self.along: dict[int, tuple[int, int, float]] = {}
        for u, v in sorted(g.edges, key=lambda e: (_sort_key(e[0]), _sort_key(e[1]))):
            a, b = index[u], index[v]
            chain = [a]
            for k in range(layer[u] + 1, layer[v]):
                chain.append(self._new(k, virtual_width))
            chain.append(b)
            span = layer[v] - layer[u]
            for step, i in enumerate(chain[1:-1], start=1):
                self.along[i] = (a, b, step / span)
            for p, q in zip(chain, chain[1:]):
                self.down[p].append(q)
                self.up[q].append(p)
            self.chains[(u, v)] = chain
        n_layers = max(self.layer_of, default=-1) + 1
        self.layers: list[list[int]] = [[] for _ in range(n_layers)]
        for i, k in enumerate(self.layer_of):
            self.layers[k].append(i)

    def _new(self, k: int, w: float) -> int:
        self.layer_of.append(k)
        self.width.append(w)
        self.up.append([])
        self.down.append([])
        return len(self.layer_of) - 1

    def is_virtual(self, i: int) -> bool:
        return i >= self.n_real


# ------------------------------------------------------------ 3. crossing reduction
def _layer_pair_crossings(upper: Sequence[int], down: Sequence[Sequence[int]],
                          pos: Sequence[int]) -> int:
    """Crossings between one layer (``upper``, in order) and the next one."""
    lower = [pos[b] for a in upper for b in sorted(down[a], key=pos.__getitem__)]
    # inversions of the lower endpoints (arcs already sorted by upper endpoint)
    count = 0
    for i in range(len(lower)):
        li = lower[i]
        for j in range(i + 1, len(lower)):
            if lower[j] < li:
                count += 1
    return count


def _total_crossings(layers: Sequence[Sequence[int]], down, pos) -> int:
    return sum(_layer_pair_crossings(layers[k], down, pos) for k in range(len(layers) - 1))


def _positions(layers: Sequence[Sequence[int]], size: int) -> list[int]:
    pos = [0] * size
    for layer in layers:
        for j, i in enumerate(layer):
            pos[i] = j
    return pos


def _median(values: list[int]) -> float:
    values = sorted(values)
    m = len(values)
    if m % 2:
        return float(values[m // 2])
    return (values[m // 2 - 1] + values[m // 2]) / 2.0


def _sweep_layer(layer: list[int], nbrs, pos, use_median: bool) -> list[int]:
    """``layer`` sorted by the median/barycentre of its neighbours' positions."""
    def key(i: int) -> tuple[float, int]:
        ps = [pos[j] for j in nbrs[i]]
        if not ps:
            return (float(pos[i]), pos[i])  # no neighbour there: keep its place
        c = _median(ps) if use_median else sum(ps) / len(ps)
        return (c, pos[i])
    return sorted(layer, key=key)


def _pair_cost(a: int, b: int, p: _Proper, pos) -> int:
    """Crossings among the arcs of ``a`` and ``b`` when ``a`` is left of ``b``."""
    c = 0
    for nb in (p.up, p.down):
        for x in nb[a]:
            px = pos[x]
            for y in nb[b]:
                if px > pos[y]:
                    c += 1
    return c


def _transpose(p: _Proper, layers: list[list[int]], pos: list[int]) -> None:
    """Swap adjacent nodes while that lowers crossings (in place)."""
    for _ in range(len(pos) + 1):
        improved = False
        for layer in layers:
            for j in range(len(layer) - 1):
                a, b = layer[j], layer[j + 1]
                if _pair_cost(b, a, p, pos) < _pair_cost(a, b, p, pos):
                    layer[j], layer[j + 1] = b, a
                    pos[a], pos[b] = j + 1, j
                    improved = True
        if not improved:
            return


def _initial_order(p: _Proper, start: str) -> list[list[int]]:
    """A starting order of each layer: by name, or by a depth-first visit from the top."""
    if start == "name":
        return [sorted(layer, key=lambda i: (p.is_virtual(i), i)) for layer in p.layers]
    seen: dict[int, int] = {}

    def visit(i: int) -> None:
        stack = [i]
        while stack:
            j = stack.pop()
            if j in seen:
                continue
            seen[j] = len(seen)
            stack.extend(reversed(p.down[j] + p.up[j]))
    for layer in p.layers:
        for i in layer:
            if i not in seen:
                visit(i)
    return [sorted(layer, key=seen.__getitem__) for layer in p.layers]


def order_layers(p: _Proper, start: str, use_median: bool, sweeps: int) -> list[list[int]]:
    """Crossing reduction (module docstring, step 3) from one starting order."""
    layers = _initial_order(p, start)
    size = len(p.layer_of)
    pos = _positions(layers, size)
    best = [list(layer) for layer in layers]
    best_c = _total_crossings(layers, p.down, pos)
    stale = 0
    for s in range(max(0, int(sweeps))):
        if s % 2 == 0:
            for k in range(1, len(layers)):
                layers[k] = _sweep_layer(layers[k], p.up, pos, use_median)
                for j, i in enumerate(layers[k]):
                    pos[i] = j
        else:
            for k in range(len(layers) - 2, -1, -1):
                layers[k] = _sweep_layer(layers[k], p.down, pos, use_median)
                for j, i in enumerate(layers[k]):
                    pos[i] = j
        _transpose(p, layers, pos)
        c = _total_crossings(layers, p.down, pos)
        if c < best_c:
            best, best_c, stale = [list(layer) for layer in layers], c, 0
        else:
            stale += 1
            if stale >= 4 or best_c == 0:
                break
    return best


# ------------------------------------------------------------------- 4. coordinates
def _isotonic_with_gaps(target: Sequence[float], weight: Sequence[float],
                        sep: Sequence[float],
                        within: tuple[float, float] | None = None) -> list[float]:
    """Minimise sum w_j (x_j - d_j)^2 subject to x_j - x_{j-1} >= sep_j (PAVA), and
    with ``within = (lo, hi)`` also to lo <= x_0 and x_last <= hi.

    ``sep[0]`` is ignored. See the module docstring, step 4: in y the bounds are
    the same for every j (lo <= y_j <= hi - c_last), and the isotonic fit under
    such bounds is the unbounded fit clipped to them. A layer too wide for the
    bounds is packed and centred between them.
    """
    c = [0.0]
    for s in sep[1:]:
        c.append(c[-1] + s)
    # blocks of pooled values: [weighted sum, weight, count]
    blocks: list[list[float]] = []
    for d, w, cj in zip(target, weight, c):
        blocks.append([w * (d - cj), w, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, w2, n = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += w2
            blocks[-1][2] += n
    y: list[float] = []
    for s, w, n in blocks:
        y.extend([s / w] * int(n))
    if within is not None and y:
        lo, hi = within[0], within[1] - c[-1]
        if hi < lo:
            lo = hi = (lo + hi) / 2.0
        y = [min(max(yj, lo), hi) for yj in y]
    return [yj + cj for yj, cj in zip(y, c)]


def assign_x(p: _Proper, layers: Sequence[Sequence[int]], gap: float,
             passes: int = 4) -> list[float]:
    """x coordinates of every (real and virtual) node, centred on 0."""
    size = len(p.layer_of)
    x = [0.0] * size
    seps = []
    for layer in layers:
        # arcs may pass closer to each other than boxes: half the gap next to a virtual node
        sep = [0.0] + [(p.width[a] + p.width[b]) / 2.0
                       + (gap / 2.0 if p.is_virtual(a) or p.is_virtual(b) else gap)
                       for a, b in zip(layer, layer[1:])]
        seps.append(sep)
        total = sum(sep)
        acc = -total / 2.0
        for j, i in enumerate(layer):
            acc += sep[j]
            x[i] = acc

    def place(k: int, sides, hold: bool = False) -> None:
        layer = layers[k]
        if not layer:
            return
        targets, weights = [], []
        for i in layer:
            xs = [x[j] for nb in sides for j in nb[i]]
            if i in p.along:  # a long arc is drawn straight: its virtual node sits on it
                a, b, t = p.along[i]
                targets.append(x[a] + t * (x[b] - x[a]))
                weights.append(_VIRTUAL_WEIGHT)
            elif hold:  # real nodes stay put, unless a long arc needs room
                targets.append(x[i])
                weights.append(1.0)
            elif xs:
                targets.append(sum(xs) / len(xs))
                weights.append(_VIRTUAL_WEIGHT if p.is_virtual(i) else 1.0)
            else:
                targets.append(x[i])
                weights.append(_FREE_WEIGHT)
        within = None
        if p.max_width is not None:  # box edges inside [-max_width / 2, max_width / 2]
            half = p.max_width / 2.0
            within = (-half + p.width[layer[0]] / 2.0, half - p.width[layer[-1]] / 2.0)
        for i, xi in zip(layer, _isotonic_with_gaps(targets, weights, seps[k], within)):
            x[i] = xi

    for _ in range(passes):
        for k in range(1, len(layers)):
            place(k, (p.up,))
        for k in range(len(layers) - 2, -1, -1):
            place(k, (p.down,))
    for k in range(len(layers)):
        place(k, (p.up, p.down))
    for _ in range(2):  # make room where straight long arcs pass
        for k in range(len(layers)):
            place(k, (), hold=True)
    real = [x[i] for i in range(p.n_real)]
    if real:
        mid = (min(real) + max(real)) / 2.0
        x = [xi - mid for xi in x]
    return x


# ------------------------------------------------------------------------ counting
def _orient(a, b, c) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _segments_cross(p1, p2, q1, q2, share: bool) -> bool:
    """Whether segments p1-p2 and q1-q2 cross or run on top of each other.

    A proper crossing counts only between arcs with no common node (``share`` false);
    collinear segments that overlap beyond a common end always count, since the
    reader cannot tell the two arcs apart.
    """
    eps = 1e-9
    d1, d2 = _orient(q1, q2, p1), _orient(q1, q2, p2)
    if abs(d1) <= eps and abs(d2) <= eps:  # collinear: overlap along a stretch?
        axis = 0 if abs(p2[0] - p1[0]) + abs(q2[0] - q1[0]) > eps else 1
        a0, a1 = sorted((p1[axis], p2[axis]))
        b0, b1 = sorted((q1[axis], q2[axis]))
        return min(a1, b1) - max(a0, b0) > eps
    if share:
        return False
    d3, d4 = _orient(p1, p2, q1), _orient(p1, p2, q2)
    return ((d1 > eps and d2 < -eps) or (d1 < -eps and d2 > eps)) and \
           ((d3 > eps and d4 < -eps) or (d3 < -eps and d4 > eps))


def count_crossings(dag: nx.DiGraph, pos: Mapping[Hashable, tuple[float, float]]) -> int:
    """Pairs of arcs whose straight segments cross or overlap, counted on ``pos``.

    Arcs that share a node are counted only when they run on top of each other.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([("a", "d"), ("b", "c")])
    >>> count_crossings(g, {"a": (0, 0), "b": (1, 0), "c": (0, -1), "d": (1, -1)})
    1
    """
    edges = list(dag.edges)
    if len(edges) < 2:
        return 0
    index = {n: i for i, n in enumerate(dag.nodes)}
    xy = np.array([pos[n] for n in dag.nodes], dtype=float)
    ends = np.array([[index[u], index[v]] for u, v in edges])
    i, j = np.triu_indices(len(edges), k=1)
    a, b = ends[i], ends[j]
    share = (a[:, :1] == b).any(axis=1) | (a[:, 1:] == b).any(axis=1)
    p1, p2, q1, q2 = xy[a[:, 0]], xy[a[:, 1]], xy[b[:, 0]], xy[b[:, 1]]
    eps = 1e-9

    def orient(u, v, w):
        return (v[:, 0] - u[:, 0]) * (w[:, 1] - u[:, 1]) - (v[:, 1] - u[:, 1]) * (w[:, 0] - u[:, 0])
    d1, d2, d3, d4 = orient(q1, q2, p1), orient(q1, q2, p2), orient(p1, p2, q1), orient(p1, p2, q2)
    proper = (((d1 > eps) & (d2 < -eps)) | ((d1 < -eps) & (d2 > eps))) & \
             (((d3 > eps) & (d4 < -eps)) | ((d3 < -eps) & (d4 > eps))) & ~share
    collinear = (np.abs(d1) <= eps) & (np.abs(d2) <= eps)
    # overlap of collinear segments along x (or along y when they are vertical)
    vertical = (np.abs(p2[:, 0] - p1[:, 0]) + np.abs(q2[:, 0] - q1[:, 0])) <= eps
    axis = np.where(vertical, 1, 0)
    rows = np.arange(len(i))
    pa, pb = np.sort(np.c_[p1[rows, axis], p2[rows, axis]], axis=1).T
    qa, qb = np.sort(np.c_[q1[rows, axis], q2[rows, axis]], axis=1).T
    overlap = collinear & (np.minimum(pb, qb) - np.maximum(pa, qa) > eps)
    return int((proper | overlap).sum())


# ----------------------------------------------------------------------------- all
def sugiyama(dag: nx.DiGraph, *, top: Hashable | None = None,
             widths: Mapping[Hashable, float] | None = None, gap: float = 0.25,
             default_width: float = 0.75, sweeps: int = 24, polish: bool = True,
             max_width: float | None = None) -> dict[Hashable, tuple[float, float]]:
    """Positions ``node -> (x, -layer)`` of the non-isolated nodes of ``dag``.

    ``top`` (optional) is pinned alone on layer 0. ``widths`` are box widths in the
    unit of x; ``gap`` the free space between neighbouring boxes. ``polish=False``
    skips the last local search (about ten times faster, a few more crossings).
    ``max_width`` bounds the width of the layers (:func:`bound_layer_widths`).
    """
    g = nx.DiGraph()
    g.add_nodes_from(n for n in dag.nodes if dag.degree(n) > 0)
    for u, v in dag.edges:
        if top is not None and v == top:
            g.add_edge(v, u)  # layout only: the pinned node becomes a source
        else:
            g.add_edge(u, v)
    if g.number_of_nodes() == 0:
        return {}
    width = {n: float((widths or {}).get(n, default_width)) for n in g.nodes}
    layer = assign_layers(g, top if top in g else None)
    virtual_width = min(width.values()) / 4.0
    if max_width is not None:
        layer = bound_layer_widths(g, layer, width, gap, float(max_width), virtual_width,
                                   top if top in g else None)
    p = _Proper(g, layer, width, virtual_width=virtual_width)
    p.max_width = None if max_width is None else float(max_width)
    best = None
    for start in ("dfs", "name"):
        for use_median in (True, False):
            layers = order_layers(p, start, use_median, sweeps)
            score, pos = _drawn(g, p, layers, gap)
            if best is None or score < best[0]:
                best = (score, pos, layers)
    score, pos, layers = best
    if score > 0 and polish:
        score, pos = _polish(g, p, layers, gap, score, pos)
    return pos


def _drawn(g: nx.DiGraph, p: _Proper, layers, gap: float):
    """Badness (straight-segment crossings plus the arcs that run through a box)
    and real-node positions of one ordering."""
    x = assign_x(p, layers, gap)
    pos = {n: (x[i], -float(p.layer_of[i])) for i, n in enumerate(p.names)}
    return count_crossings(g, pos) + _box_hits(p, x), pos


def _box_hits(p: _Proper, x: Sequence[float]) -> int:
    """Long arcs whose straight segment passes through the box of a real node on a
    layer in between (checked at the height of the node's centre)."""
    by_layer: dict[int, list[int]] = {}
    for i in range(p.n_real):
        by_layer.setdefault(p.layer_of[i], []).append(i)
    hits = 0
    for (u, v), chain in p.chains.items():
        a, b = chain[0], chain[-1]
        la, lb = p.layer_of[a], p.layer_of[b]
        for k in range(la + 1, lb):
            at = x[a] + (k - la) / (lb - la) * (x[b] - x[a])
            hits += sum(1 for w in by_layer.get(k, ()) if abs(at - x[w]) < p.width[w] / 2)
    return hits


def _polish(g: nx.DiGraph, p: _Proper, layers, gap: float, score: int, pos, rounds: int = 1):
    """Swap neighbours within layers while the drawn (straight) crossings go down.

    The sweeps minimise crossings of the arcs routed through virtual nodes; the
    drawing uses straight segments, so a last local search works on those directly.
    """
    for _ in range(rounds):
        improved = False
        for layer in layers:
            for j in range(len(layer) - 1):
                layer[j], layer[j + 1] = layer[j + 1], layer[j]
                s, q = _drawn(g, p, layers, gap)
                if s < score:
                    score, pos, improved = s, q, True
                else:
                    layer[j], layer[j + 1] = layer[j + 1], layer[j]
        if not improved or score == 0:
            break
    return score, pos
