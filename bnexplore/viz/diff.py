"""Two structures side by side: which arcs were added, removed, reversed or kept.

For graphs ``G1`` (before) and ``G2`` (after) over the same variables, an arc of
``G2`` is *kept* when ``G1`` has it too, *reversed* when ``G1`` has it the other way
round, and *added* otherwise; an arc of ``G1`` is *removed* when ``G2`` has it in
neither direction.  :func:`arc_diff_plot` draws ``G2`` with its arcs coloured by
these classes and ``G1``'s removed arcs dashed, with the counts in the title.

Examples
--------
>>> import networkx as nx
>>> from bnexplore.viz.diff import arc_diff, arc_diff_plot
>>> d = arc_diff(nx.DiGraph([("A", "B"), ("B", "C")]), nx.DiGraph([("B", "A"), ("A", "C")]))
>>> d.counts
{'added': 1, 'removed': 1, 'reversed': 1, 'kept': 0}
>>> plot = arc_diff_plot(nx.DiGraph([("A", "B"), ("B", "C")]), nx.DiGraph([("B", "A"), ("A", "C")]))
"""
from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from ._style import PRESENTATION_ARC_SCALE
from .graphs import _DEFAULT_EDGE_WIDTH, EDGE_COLOR, _arrow_paths, _sort_key, dag_plot, literal_title, node_boxes

__all__ = ["ArcDiff", "arc_diff", "arc_diff_plot", "shared_layout", "side_by_side", "diff_title", "DIFF_COLORS"]

#: colour of each class of arc (colour-blind-safe, Dark2); removed arcs are also dashed
DIFF_COLORS = {"added": "#1b9e77", "removed": "#d95f02", "reversed": "#7570b3", "kept": EDGE_COLOR}
_CLASSES = ("added", "removed", "reversed", "kept")


@dataclass(frozen=True)
class ArcDiff:
    """The arcs of two graphs sorted into classes (reversed arcs in ``G2``'s direction)."""

    added: list
    removed: list
    reversed: list
    kept: list

    @property
    def counts(self) -> dict:
        """``{class: number of arcs}`` in the order added, removed, reversed, kept."""
        return {c: len(getattr(self, c)) for c in _CLASSES}

    @property
    def n_changed(self) -> int:
        """Arcs added, removed or reversed."""
        return len(self.added) + len(self.removed) + len(self.reversed)

    def to_frame(self) -> pd.DataFrame:
        """One row per arc: ``parent``, ``child`` (as drawn) and ``change``."""
        rows = [(u, v, c) for c in _CLASSES for u, v in getattr(self, c)]
        return pd.DataFrame(rows, columns=["parent", "child", "change"])


def arc_diff(g1: nx.DiGraph, g2: nx.DiGraph) -> ArcDiff:
    """The arcs added, removed, reversed and kept going from ``g1`` to ``g2``.

    Parameters
    ----------
    g1, g2 : networkx.DiGraph
        The structure before and after (e.g. M* at k = 2 and at k = 3).

    Returns
    -------
    ArcDiff
        Lists of ``(parent, child)`` arcs, sorted; a reversed arc is listed in ``g2``'s
        direction.

    Examples
    --------
    >>> import networkx as nx
    >>> d = arc_diff(nx.DiGraph([("a", "b"), ("a", "c")]), nx.DiGraph([("a", "b"), ("c", "a"), ("b", "c")]))
    >>> d.added, d.reversed, d.kept, d.removed
    ([('b', 'c')], [('c', 'a')], [('a', 'b')], [])
    """
    for name, g in (("g1", g1), ("g2", g2)):
        if not isinstance(g, nx.DiGraph):
            raise TypeError(f"{name} must be a networkx.DiGraph, got {type(g).__name__}")
    e1, e2 = set(g1.edges), set(g2.edges)
    key = lambda e: (_sort_key(e[0]), _sort_key(e[1]))  # noqa: E731
    kept = sorted(e1 & e2, key=key)
    reversed_ = sorted(((u, v) for u, v in e2 - e1 if (v, u) in e1), key=key)
    added = sorted(((u, v) for u, v in e2 - e1 if (v, u) not in e1), key=key)
    removed = sorted(((u, v) for u, v in e1 - e2 if (v, u) not in e2), key=key)
    return ArcDiff(added, removed, reversed_, kept)


def diff_title(title: str, diff: ArcDiff) -> str:
    """``title`` followed by the counts of changed and kept arcs.

    Examples
    --------
    >>> import networkx as nx
    >>> diff_title("k = 3", arc_diff(nx.DiGraph([("a", "b")]), nx.DiGraph([("b", "a")])))
    'k = 3: 0 added, 0 removed, 1 reversed, 0 kept'
    """
    counts = ", ".join(f"{n} {c}" for c, n in diff.counts.items())
    return f"{title}: {counts}" if title else counts


def _bowed(path: np.ndarray, bow: float = 0.18, head_px: float = 10.0) -> np.ndarray:
    """A straight arrow of :func:`~bnexplore.viz.graphs._arrow_paths` (start, end, gap,
    head) redrawn as a quadratic Bezier bowed sideways by ``bow`` times its length."""
    a, b = path[0], path[1]
    d = b - a
    length = float(np.hypot(*d)) or 1.0
    ctrl = (a + b) / 2 + bow * length * np.array([-d[1], d[0]]) / length
    t = np.linspace(0.0, 1.0, 24)[:, None]
    curve = (1 - t) ** 2 * a + 2 * (1 - t) * t * ctrl + t ** 2 * b
    ang = float(np.arctan2(*(b - ctrl)[::-1]))
    w0 = b - head_px * np.array([np.cos(ang + np.pi / 7), np.sin(ang + np.pi / 7)])
    w1 = b - head_px * np.array([np.cos(ang - np.pi / 7), np.sin(ang - np.pi / 7)])
    return np.vstack([curve, [[np.nan, np.nan]], [w0, b, w1]])


def shared_layout(g1: nx.DiGraph, g2: nx.DiGraph) -> dict:
    """One layered layout for both graphs, so that two pictures side by side put every
    node in the same place (as :func:`side_by_side` draws them).

    The layout is :func:`~bnexplore.viz.layered_layout` of ``g2`` with ``g1``'s nodes and
    those arcs of ``g1`` that keep it acyclic.

    Examples
    --------
    >>> import networkx as nx
    >>> pos = shared_layout(nx.DiGraph([("a", "b")]), nx.DiGraph([("b", "c")]))
    >>> sorted(pos), pos["a"][1] > pos["b"][1] > pos["c"][1]
    (['a', 'b', 'c'], True)
    """
    from .graphs import layered_layout

    union = nx.DiGraph()
    union.add_nodes_from(g2.nodes)
    union.add_nodes_from(g1.nodes)
    union.add_edges_from(g2.edges)
    for u, v in sorted(g1.edges, key=lambda e: (_sort_key(e[0]), _sort_key(e[1]))):
        if not union.has_edge(u, v) and not (u in union and v in union and nx.has_path(union, v, u)):
            union.add_edge(u, v)
    return layered_layout(union)


def arc_diff_plot(g1: nx.DiGraph, g2: nx.DiGraph, title: str = "", presentation: bool = False,
                  **kwargs):
    """Draw ``g2`` with its arcs coloured by how they differ from ``g1``.

    Added, reversed and kept arcs are ``g2``'s, in :data:`DIFF_COLORS`; removed arcs
    (in ``g1`` only) are drawn dashed between the same boxes. A legend names the
    classes present and the title gives every count (:func:`diff_title`). The layout and
    boxes are those of :func:`bnexplore.viz.dag_plot` for ``g2`` (with ``g1``'s nodes
    that ``g2`` lacks), so the picture reads like the other structure drawings.

    Parameters
    ----------
    g1, g2 : networkx.DiGraph
        The structure before (e.g. the pinned setting) and after.
    title : str
        Shown before the counts.
    presentation : bool
        Projector sizes (see :func:`bnexplore.viz.dag_plot`).
    **kwargs
        Passed to :func:`bnexplore.viz.dag_plot` (``width``, ``height``, ``states``,
        ``highlight``, ``class_node``, ``names``, ``responsive``, ``layout``, ...). For
        two pictures side by side give both ``layout=shared_layout(g1, g2)``.

    Returns
    -------
    holoviews.Overlay

    Examples
    --------
    >>> import networkx as nx
    >>> p = arc_diff_plot(nx.DiGraph([("a", "b")]), nx.DiGraph([("b", "a"), ("b", "c")]), title="after")
    >>> "1 added" in p.opts.get().kwargs["title"]
    True
    """
    import holoviews as hv

    diff = arc_diff(g1, g2)
    for bad in ("edge_colors", "edge_weights", "title"):
        if bad in kwargs:
            raise TypeError(f"arc_diff_plot sets {bad} itself")
    drawn = nx.DiGraph()
    drawn.add_nodes_from(g2.nodes(data=True))
    drawn.add_nodes_from(n for n in g1.nodes if n not in g2)
    drawn.add_edges_from(g2.edges)
    colors = {e: DIFF_COLORS[c] for c in ("added", "reversed", "kept") for e in getattr(diff, c)}
    full_title = diff_title(title, diff)
    base = dag_plot(drawn, edge_colors=colors, title=full_title, presentation=presentation, **kwargs)
    boxes = node_boxes(base).set_index("name")
    names = kwargs.get("names") or {}
    width = _DEFAULT_EDGE_WIDTH * (PRESENTATION_ARC_SCALE if presentation else 1.0) * 1.4

    def box(n: Hashable):
        b = boxes.loc[str(names.get(n, n))]
        return ((b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2), ((b.x1 - b.x0) / 2 + 1.5, (b.y1 - b.y0) / 2 + 1.5)

    layers = []
    for c in _CLASSES:
        arcs = getattr(diff, c)
        if not arcs:
            continue
        ends = [(box(u), box(v)) for u, v in arcs]
        paths = _arrow_paths([(a[0], b[0]) for a, b in ends], [(a[1], b[1]) for a, b in ends])
        if c == "removed":  # bowed, so that it never hides under an arc of g2 along the same line
            paths = [_bowed(p) for p in paths]
        # one Curve per class, the arrows separated by NaN gaps: a Curve has a legend entry
        xy = np.concatenate([np.vstack([p, [np.nan, np.nan]]) for p in paths])
        layers.append(hv.Curve(xy, kdims=["x"], vdims=["y"], label=f"{c} ({len(arcs)})").opts(
            color=DIFF_COLORS[c], line_width=width, line_dash="dashed" if c == "removed" else "solid",
            tools=[], backend="bokeh"))
    if not layers:
        return base
    legend_px = 18 if presentation else 12
    return hv.Overlay([base, *layers]).opts(
        title=literal_title(full_title), show_legend=True, legend_position="bottom", legend_cols=2,
        legend_opts={"label_text_font_size": f"{legend_px}px", "background_fill_alpha": 0.85},
        fontsize={"title": f"{18 if presentation else 14}px"}, backend="bokeh")


def side_by_side(g1: nx.DiGraph, g2: nx.DiGraph, titles: tuple[str, str] = ("before", "after"),
                 presentation: bool = False, **kwargs):
    """``g1`` (e.g. the pinned setting) beside ``g2`` drawn by :func:`arc_diff_plot`, every
    node of either graph in the same place in both pictures (:func:`shared_layout`).

    ``kwargs`` go to both drawings (``width``, ``height``, ``states``, ``names``, ...).
    Returns a two-column ``holoviews.Layout``.

    Examples
    --------
    >>> import networkx as nx
    >>> pair = side_by_side(nx.DiGraph([("a", "b")]), nx.DiGraph([("b", "a"), ("b", "c")]), ("k = 2", "k = 3"))
    >>> len(pair)
    2
    """
    import holoviews as hv

    if "layout" in kwargs:
        raise TypeError("side_by_side sets layout itself (shared_layout)")
    pos = shared_layout(g1, g2)
    left = nx.DiGraph()
    left.add_nodes_from(g1.nodes(data=True))
    left.add_nodes_from(n for n in g2.nodes if n not in g1)
    left.add_edges_from(g1.edges)
    before = dag_plot(left, title=titles[0], layout=pos, presentation=presentation, **kwargs)
    after = arc_diff_plot(g1, g2, title=titles[1], layout=pos, presentation=presentation, **kwargs)
    return hv.Layout([before, after]).cols(2)
