"""Directed-acyclic-graph pictures: a deterministic layered layout and a HoloViews plot.

The functions here only shape data for plotting; they never learn or score anything.

Examples
--------
>>> import networkx as nx
>>> from bnexplore.viz import dag_plot, layered_layout
>>> g = nx.DiGraph([("A", "B"), ("B", "C"), ("A", "C")])
>>> pos = layered_layout(g)
>>> pos["A"][1] > pos["B"][1] > pos["C"][1]
True
>>> plot = dag_plot(g, states={"A": ["y", "n"]}, highlight=["B"])
"""
from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import networkx as nx

from ._style import PRESENTATION_ARC_SCALE
from ._style import font_px as _font_px

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["layered_layout", "count_crossings", "dag_plot", "node_boxes", "plot_size", "box_widths", "fitted_layout", "literal_title", "NODE_COLOR", "HIGHLIGHT_COLOR", "EDGE_COLOR"]

#: default fill colour of a node.
NODE_COLOR = "#a6cee3"
#: fill colour of highlighted nodes (for example a Markov blanket).
HIGHLIGHT_COLOR = "#fb9a99"
#: colour of arcs.
EDGE_COLOR = "#404040"

_MIN_EDGE_WIDTH = 0.5
_MAX_EDGE_WIDTH = 6.0
_DEFAULT_EDGE_WIDTH = 1.5


def _sort_key(node: Hashable) -> tuple[str, str]:
    """Total, deterministic order over node names of any (mixed) type."""
    return (type(node).__name__, str(node))


def layered_layout(
    dag: nx.DiGraph,
    *,
    class_node: Hashable | None = None,
    node_widths: Mapping[Hashable, float] | None = None,
    gap: float = 0.25,
    sweeps: int = 24,
    max_width: float | None = None,
    _polish: bool = True,
) -> dict[Hashable, tuple[float, float]]:
    """Place the nodes of a DAG on horizontal layers with few arc crossings (Sugiyama).

    Layers come from the topological order (longest paths, then each node moved
    towards the side where it has more arcs, which shortens arcs); arcs that span
    several layers get virtual nodes so that they reserve room where they pass;
    alternating median/barycentre sweeps with adjacent swaps reduce crossings; x
    coordinates put parents above their children with at least ``gap`` between
    neighbouring boxes, so the drawing grows as wide as its widest layer. The ordering
    kept is the one whose straight arcs cross least (:func:`count_crossings`). Details
    and references in :mod:`bnexplore.viz._layered`. Isolated nodes (no arcs at all)
    get their own bottom row. There is no randomness: the same graph always gives the
    same positions. With ``max_width``, a layer wider than that sends nodes down to
    new layers, and isolated nodes wrap onto several rows, so that a narrow window
    gets a taller drawing rather than a wider one.

    Parameters
    ----------
    dag : networkx.DiGraph
        A directed acyclic graph. Node names may be any hashable.
    class_node : node, optional
        Pinned alone on the top layer (arcs into it then point up).
    node_widths : mapping, optional
        ``node -> width`` of the node's box in the unit of x (for example label widths
        in pixels); default 0.75 for every node.
    gap : float, default 0.25
        Least free space between neighbouring boxes of a layer, in the unit of x.
        With the defaults neighbours are at least 1 apart.
    sweeps : int, default 24
        Most crossing-reduction sweeps (it stops earlier when nothing improves).
    max_width : float, optional
        Widest layer (boxes and gaps, in the unit of x) wanted; a single box wider
        than it stays on its row.

    Returns
    -------
    dict
        ``node -> (x, y)``. Layer ``i`` has ``y = -i`` (top layer at ``y = 0``); the
        drawing is centred on ``x = 0``.

    Raises
    ------
    TypeError
        If ``dag`` is not a directed networkx graph.
    ValueError
        If ``dag`` has a directed cycle, or ``class_node`` is not one of its nodes.

    Examples
    --------
    >>> import networkx as nx
    >>> pos = layered_layout(nx.DiGraph([("a", "b"), ("a", "c")]))
    >>> pos["a"], sorted(pos["b"] + pos["c"])
    ((0.0, 0.0), [-1.0, -1.0, -0.5, 0.5])
    >>> count_crossings(nx.DiGraph([("a", "b"), ("a", "c")]), pos)
    0
    """
    if not isinstance(dag, nx.DiGraph):
        raise TypeError(f"dag must be a networkx.DiGraph, got {type(dag).__name__}")
    if not nx.is_directed_acyclic_graph(dag):
        cycle = nx.find_cycle(dag)
        raise ValueError(f"dag has a directed cycle {cycle}: layered_layout needs a DAG")
    if class_node is not None and class_node not in dag:
        raise ValueError(f"class_node {class_node!r} is not a node of the graph")
    widths = {n: float((node_widths or {}).get(n, 0.75)) for n in dag.nodes}
    key = (tuple(dag.nodes), tuple(dag.edges), class_node, tuple(widths.values()), float(gap),
           int(sweeps), bool(_polish), None if max_width is None else float(max_width))
    return dict(_layout_of(key))


@functools.lru_cache(maxsize=512)
def _layout_of(key: tuple) -> tuple:
    """:func:`layered_layout` of the graph that ``key`` spells out, as ``(node, (x, y))``
    pairs. Memoised: a page redraws the same structure for every visitor and at every
    change of a setting that keeps it, and the layout is the dearest part of a drawing."""
    from ._layered import sugiyama

    nodes, edges, class_node, width_values, gap, sweeps, polish, max_width = key
    dag = nx.DiGraph()
    dag.add_nodes_from(nodes)
    dag.add_edges_from(edges)
    widths = dict(zip(nodes, width_values))
    pos = sugiyama(dag, top=class_node, widths=widths, gap=gap, sweeps=sweeps, polish=polish,
                   max_width=max_width)
    pos = {n: (float(x) + 0.0, float(y) + 0.0) for n, (x, y) in pos.items()}
    isolated = sorted((n for n in dag.nodes if n not in pos), key=_sort_key)
    if isolated:
        if class_node in isolated:  # a lone class node still goes on top
            isolated.remove(class_node)
            pos = {n: (x, y - 1.0) for n, (x, y) in pos.items()}
            pos[class_node] = (0.0, 0.0)
        y = min((yy for _, yy in pos.values()), default=1.0) - 1.0
        for row in _rows(isolated, widths, gap, max_width):
            steps = [0.0] + [(widths[a] + widths[b]) / 2 + gap for a, b in zip(row, row[1:])]
            xn = -sum(steps) / 2
            for n, step in zip(row, steps):
                xn += step
                pos[n] = (xn + 0.0, y)
            y -= 1.0
    return tuple(pos.items())


def _rows(nodes: Sequence[Hashable], widths: Mapping[Hashable, float], gap: float,
          max_width: float | None) -> list[list[Hashable]]:
    """``nodes`` in order, cut into rows of boxes and gaps at most ``max_width`` wide
    (one row without a bound; a box wider than the bound gets a row of its own)."""
    rows: list[list[Hashable]] = [[]]
    used = -gap
    for n in nodes:
        if rows[-1] and max_width is not None and used + gap + widths[n] > max_width:
            rows.append([])
            used = -gap
        rows[-1].append(n)
        used += gap + widths[n]
    return rows


def count_crossings(dag: nx.DiGraph, pos: Mapping[Hashable, tuple[float, float]]) -> int:
    """Pairs of arcs whose straight segments between node positions cross or overlap.

    Arcs that share a node count only when they run on top of each other (then the
    reader cannot tell them apart); this is the figure :mod:`benchmarks.bench_layout`
    prints.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([("a", "d"), ("b", "c")])
    >>> count_crossings(g, {"a": (0, 0), "b": (1, 0), "c": (0, -1), "d": (1, -1)})
    1
    """
    from ._layered import count_crossings as _count

    return _count(dag, pos)


def _format_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, Iterable):
        return ", ".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def literal_title(title: Any) -> str:
    """``title`` made safe for HoloViews' ``title`` option, which is a format string.

    HoloViews calls ``title.format(label=..., group=..., ...)``, so a brace in a user
    string (a class value ``{``, a column named ``{label.__class__}``) would raise
    or be replaced by an attribute of the plot. Doubling the braces shows the text
    as given. Apply it exactly once, where the option is set.

    Examples
    --------
    >>> literal_title("ROC, class {x}")
    'ROC, class {{x}}'
    """
    return str(title).replace("{", "{{").replace("}", "}}")


def _ensure_bokeh() -> None:
    """Register the HoloViews Bokeh backend (no notebook output) if it is not loaded."""
    import holoviews as hv

    if "bokeh" not in hv.Store.renderers:
        import holoviews.plotting.bokeh  # noqa: F401  (registers the backend)
    if hv.Store.current_backend != "bokeh" and "bokeh" in hv.Store.renderers:
        hv.Store.set_current_backend("bokeh")


def _arrow_paths(
    segments: Sequence[tuple[tuple[float, float], tuple[float, float]]],
    half_sizes: Sequence[tuple[tuple[float, float], tuple[float, float]]],
    head_px: float = 10.0,
):
    """Arc paths in pixel coordinates that stop at the node boxes and end in an arrowhead.

    ``half_sizes`` gives, per segment, the half width and half height (pixels) of the
    source's and the target's box; a segment leaves a box where it meets its rim.
    """
    import numpy as np

    def exit_fraction(d, half) -> float:
        # fraction of d at which a ray from the box centre meets the rim
        fx = half[0] / abs(d[0]) if abs(d[0]) > 1e-9 else np.inf
        fy = half[1] / abs(d[1]) if abs(d[1]) > 1e-9 else np.inf
        return float(min(fx, fy))

    out = []
    for ((x0, y0), (x1, y1)), (h0, h1) in zip(segments, half_sizes):
        p0, p1 = np.array([x0, y0], float), np.array([x1, y1], float)
        d = p1 - p0
        t0, t1 = exit_fraction(d, h0), 1.0 - exit_fraction(d, h1)
        if t1 - t0 < 1e-3:  # the boxes touch: draw the plain segment
            t0, t1 = 0.0, 1.0
        a, b = p0 + t0 * d, p0 + t1 * d
        ang = float(np.arctan2(*(b - a)[::-1]))
        w0 = b - head_px * np.array([np.cos(ang + np.pi / 7), np.sin(ang + np.pi / 7)])
        w1 = b - head_px * np.array([np.cos(ang - np.pi / 7), np.sin(ang - np.pi / 7)])
        out.append(np.array([a, b, [np.nan, np.nan], w0, b, w1]))
    return out


def text_width_px(text: str, font_px: float) -> float:
    """A generous estimate of the width of ``text`` in a sans-serif font of ``font_px``.

    Wide letters (m, w, capitals) count more than narrow ones (i, l, punctuation), so
    that boxes sized by it hold the rendered text.

    Examples
    --------
    >>> text_width_px("ab", 10.0) < text_width_px("MW", 10.0)
    True
    """
    narrow, wide = set("ijlrtf.,;:'|!()[]-1 "), set("mwMW@%")
    units = 0.0
    for ch in str(text):
        if ch in narrow:
            units += 0.38
        elif ch in wide:
            units += 0.95
        elif ch.isupper() or ch.isdigit():
            units += 0.72
        else:
            units += 0.6
    return units * font_px


def _label_font_px(dag: nx.DiGraph, presentation: bool = False) -> float:
    """Node label font (pixels): large for small graphs, smaller beyond 20 nodes, at
    least 18 px in presentation mode."""
    return _font_px(_FONT_PX[0] if dag.number_of_nodes() <= 20 else _FONT_PX[1], presentation)


def box_widths(dag: nx.DiGraph, names: Mapping[Hashable, str] | None = None,
               presentation: bool = False) -> dict:
    """Width in pixels of each node's box as :func:`dag_plot` draws full names.

    Pass them to :func:`layered_layout` (with ``gap=14``) to get a layout in pixels
    that a ``dag_plot(..., layout=pos)`` shows without stretching.

    Examples
    --------
    >>> import networkx as nx
    >>> w = box_widths(nx.DiGraph([("a", "long-name")]))
    >>> w["a"] < w["long-name"]
    True
    """
    font_px = _label_font_px(dag, presentation)
    return {n: text_width_px(str((names or {}).get(n, n)), font_px) + 2 * _BOX_PAD_PX
            for n in dag.nodes}


def display_labels(names: Sequence[str], max_chars: int | None) -> list[str]:
    """Names cut to ``max_chars`` characters with an ellipsis, kept unique.

    Examples
    --------
    >>> display_labels(["physician-fee-freeze", "physician-fee-x", "a"], 10)
    ['physician\u2026', 'physicia\u20262', 'a']
    """
    out: list[str] = []
    used: set[str] = set()
    for s in map(str, names):
        lab = s
        if max_chars is not None and len(s) > max_chars:
            lab = s[:max(max_chars - 1, 1)] + "\u2026"
        i = 1
        while lab in used:
            i += 1
            lab = s[:max(max_chars or len(s), 4) - 1 - len(str(i))] + "\u2026" + str(i)
        used.add(lab)
        out.append(lab)
    return out


#: font size (pixels) of node labels: large for small graphs, smaller beyond 20 nodes.
_FONT_PX = (15.0, 12.0)
#: horizontal padding inside a node box and least free space between boxes (pixels).
_BOX_PAD_PX = 12.0
_BOX_GAP_PX = 14.0
#: shortest label a node keeps before the picture grows taller instead (characters).
_MIN_LABEL_CHARS = 7
#: most layers of a drawing made taller to fit its width (beyond, it grows wider).
_MAX_WRAPPED_LAYERS = 16
#: least vertical distance between layers (pixels), as a multiple of the box height.
_LAYER_STEP = 2.6
#: figure space outside the frame: title and toolbar above, borders (pixels).
_CHROME_W, _CHROME_H = 20, 75
_BORDER_PX = 6
_TITLE_PX = 36


def _fit_labels(dag: nx.DiGraph, names: Mapping[Hashable, str], font_px: float,
                class_node, frame_width: float, max_label: int | None):
    """Labels, box widths (px) and a pixel layout that fits ``frame_width`` if it can.

    Labels are cut (with an ellipsis) only as much as needed: the longest common
    label length that fits is found by bisection (down to :data:`_MIN_LABEL_CHARS`);
    then the layers that would fit with their full names get them back, if the whole
    picture still fits. When even the shortest labels do not fit, the widest layers
    send nodes down to new layers (``layered_layout``'s ``max_width``), so that the
    picture grows taller rather than wider, up to :data:`_MAX_WRAPPED_LAYERS` layers;
    beyond that it grows wider.
    """
    nodes = sorted(dag.nodes, key=_sort_key)

    def attempt(limits: Mapping[Hashable, int | None], polish: bool = False,
                bound: float | None = None):
        labels: dict = {}
        used: set[str] = set()
        for n in nodes:
            lab = display_labels([names[n]], limits[n])[0]
            i = 1
            while lab in used:  # a cut that collides with another label gets a number
                i += 1
                keep = max(limits[n] or len(names[n]), 4) - 1 - len(str(i))
                lab = names[n][:keep] + "\u2026" + str(i)
            used.add(lab)
            labels[n] = lab
        widths = {n: text_width_px(labels[n], font_px) + 2 * _BOX_PAD_PX for n in nodes}
        # the drawn layout is polished; trials of a label length go without the last
        # local search (the quick layout)
        pos = layered_layout(dag, class_node=class_node, node_widths=widths, gap=_BOX_GAP_PX,
                             max_width=bound, _polish=polish)
        xs = [pos[n][0] - widths[n] / 2 for n in nodes] + [pos[n][0] + widths[n] / 2 for n in nodes]
        extent = (max(xs) - min(xs) + 2 * _BOX_GAP_PX) if xs else 0.0  # with margins
        return labels, widths, pos, extent

    def uniform(limit: int | None, polish: bool = False):
        return attempt({n: limit for n in nodes}, polish)

    def final(trial, limits):
        # the drawn layout is polished; it keeps the trial's fit or falls back to it
        done = attempt(limits, polish=True)
        return done if done[3] <= max(frame_width, trial[3]) else trial

    longest = max((len(names[n]) for n in nodes), default=0)
    top = longest if max_label is None else min(longest, max(int(max_label), 2))
    first = top if top < longest else None
    best = uniform(first)
    if best[3] <= frame_width or top <= _MIN_LABEL_CHARS:
        return _wrapped(final(best, {n: first for n in nodes}), attempt, nodes, first,
                        frame_width)
    lo, hi = _MIN_LABEL_CHARS, top - 1  # the longest common limit that fits
    found, limit = None, _MIN_LABEL_CHARS
    while lo <= hi:
        mid = (lo + hi) // 2
        cand = uniform(mid)
        if cand[3] <= frame_width:
            found, limit, lo = cand, mid, mid + 1
        else:
            hi = mid - 1
    if found is None:
        return _wrapped(final(uniform(_MIN_LABEL_CHARS), {n: _MIN_LABEL_CHARS for n in nodes}),
                        attempt, nodes, _MIN_LABEL_CHARS, frame_width)
    # give full names back to the layers that have room for them
    layer_of = {n: y for n, (_, y) in found[2].items()}
    full_w = {n: text_width_px(names[n], font_px) + 2 * _BOX_PAD_PX for n in nodes}
    rows: dict[float, list] = {}
    for n in nodes:
        rows.setdefault(layer_of[n], []).append(n)
    roomy = {y for y, members in rows.items()
             if sum(full_w[n] for n in members) + (len(members) + 1) * _BOX_GAP_PX
             <= 0.8 * frame_width}
    if not roomy or len(roomy) == len(rows):
        return final(found, {n: limit for n in nodes})
    limits = {n: first if layer_of[n] in roomy else limit for n in nodes}
    mixed = attempt(limits)
    if mixed[3] <= frame_width:
        return final(mixed, limits)
    return final(found, {n: limit for n in nodes})


def _wrapped(drawn, attempt, nodes, limit, frame_width: float):
    """``drawn`` (labels, widths, layout, extent), or when it is wider than
    ``frame_width`` the narrowest layout whose layers are bounded (taller) with at most
    :data:`_MAX_WRAPPED_LAYERS` layers. A bound is what the boxes, gaps and passing arcs
    of a layer need at least; the coordinates that pull parents over children spread
    them further, so the bound tightens until the drawing fits (a few tries)."""
    if drawn[3] <= frame_width:
        return drawn
    limits = {n: limit for n in nodes}
    best, best_bound = drawn, None
    bound = frame_width - 2 * _BOX_GAP_PX
    for _ in range(4):  # quick layouts, the one kept is polished
        taller = attempt(limits, bound=bound)
        if len({y for _, y in taller[2].values()}) > _MAX_WRAPPED_LAYERS:
            break
        if taller[3] < best[3]:
            best, best_bound = taller, bound
        if taller[3] <= frame_width:
            break
        bound *= min(frame_width / taller[3], 0.95)
    if best_bound is None:
        return drawn
    done = attempt(limits, polish=True, bound=best_bound)
    return done if done[3] <= max(frame_width, best[3]) else best


def fitted_layout(dag: nx.DiGraph, width: int = 700, class_node: Hashable | None = None,
                  presentation: bool = False) -> tuple[dict, int | None]:
    """A layered layout in pixels that :func:`dag_plot` draws ``width`` wide, and the
    label length it needs.

    The layout :func:`dag_plot` would compute for ``dag`` (labels cut only as much as
    needed, then wide layers wrapped onto new ones), to keep fixed across pictures of
    the same nodes (e.g. the steps of a search): pass both on,
    ``dag_plot(g, layout=pos, max_label=max_label, width=width)``.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([("r", f"a-rather-long-name-{i}") for i in range(8)])
    >>> pos, cut = fitted_layout(g, width=500)
    >>> cut is not None and plot_size(dag_plot(g, layout=pos, max_label=cut, width=500,
    ...                                        responsive=True))[0] <= 500
    True
    """
    full = {n: str(n) for n in dag.nodes}
    labels, _, pos, _ = _fit_labels(dag, full, _label_font_px(dag, presentation), class_node,
                                    max(float(width) - _CHROME_W, 120.0), None)
    cut = [len(lab) for n, lab in labels.items() if lab != full[n]]
    return pos, (max(cut) if cut else None)


def dag_plot(
    dag: nx.DiGraph,
    states: Mapping[Hashable, Sequence[Any]] | None = None,
    edge_weights: Mapping[tuple[Hashable, Hashable], float] | None = None,
    node_colors: Mapping[Hashable, str] | None = None,
    highlight: Iterable[Hashable] | None = None,
    layout: str | Mapping[Hashable, tuple[float, float]] = "layered",
    title: str = "",
    width: int = 700,
    height: int = 500,
    class_node: Hashable | None = None,
    names: Mapping[Hashable, str] | None = None,
    max_label: int | None = None,
    responsive: bool = False,
    edge_colors: Mapping[tuple[Hashable, Hashable], str] | None = None,
    presentation: bool = False,
):
    """Draw a DAG as labelled boxes and arrows, with the full names in a hover tool.

    Each node is a box sized to its label. Labels are the node names, cut with an
    ellipsis only when the widest layer would not otherwise fit ``width`` (the hover
    shows the full name); no two boxes overlap. The layout is :func:`layered_layout`
    computed on the label widths in pixels, so the picture is as wide as its widest
    layer and as tall as its layers need (``width`` and ``height`` are the size it
    aims at; a graph that cannot fit grows beyond them rather than overlap).

    Parameters
    ----------
    dag : networkx.DiGraph
        The structure. Node attributes (``dag.nodes[n]``) are shown in the hover tool.
    states : mapping, optional
        ``node -> list of state labels``; shown in the hover tool as ``states``.
    edge_weights : mapping, optional
        ``(parent, child) -> weight in [0, 1]`` (for example an arc posterior). Arc width
        and the hover value ``weight`` follow it; arcs missing from the mapping get 0.
        Without it all arcs have the same width.
    node_colors : mapping, optional
        ``node -> CSS colour`` for individual nodes.
    highlight : iterable, optional
        Nodes drawn in :data:`HIGHLIGHT_COLOR` (for example a Markov blanket); this wins
        over ``node_colors``.
    layout : {"layered", "circular"} or mapping, default "layered"
        Node positions: :func:`layered_layout`, a circle, or an explicit mapping
        ``node -> (x, y)`` (then x is stretched to the plot width, each unit at least
        as wide as the widest box).
    title : str
        Plot title.
    width, height : int
        Size of the figure in pixels that the picture aims at.
    class_node : node, optional
        Kept alone on the top layer (a classifier's class).
    names : mapping, optional
        ``node -> display name`` (e.g. ``{"__class__": "class"}``); default ``str(node)``.
    max_label : int, optional
        Cut labels to at most this many characters even when they would fit.
    responsive : bool, default False
        Stretch to the width of the container, never narrower than the picture needs
        (:func:`plot_size`; give its container that ``min-width`` and let an outer
        container scroll) and at most
        1.5 times that; the height stays fixed. Otherwise the frame has a fixed size.
    edge_colors : mapping, optional
        ``(parent, child) -> CSS colour`` of individual arcs (default :data:`EDGE_COLOR`).
    presentation : bool, default False
        Projector sizes: labels and title at least 18 px (boxes grow with them) and
        arcs twice as thick.

    Returns
    -------
    holoviews.Overlay
        ``hv.Graph * hv.Rectangles * hv.Labels`` in pixel coordinates; render with
        ``hv.render(plot, backend="bokeh")`` or show it in a Panel pane.
        :func:`node_boxes` reads the boxes back.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([("Smoker", "Cancer"), ("Cancer", "Xray")])
    >>> p = dag_plot(g, states={"Smoker": ["yes", "no"]}, edge_weights={("Smoker", "Cancer"): 0.9})
    >>> type(p).__name__
    'Overlay'
    >>> node_boxes(p)["label"].tolist()
    ['Smoker', 'Cancer', 'Xray']
    """
    import holoviews as hv

    if not isinstance(dag, nx.DiGraph):
        raise TypeError(f"dag must be a networkx.DiGraph, got {type(dag).__name__}")
    _ensure_bokeh()

    states = dict(states or {})
    node_colors = dict(node_colors or {})
    hl = set(highlight or ())
    unknown = hl - set(dag.nodes)
    if unknown:
        raise ValueError(f"highlight names nodes not in the graph: {sorted(map(str, unknown))}")
    if class_node is not None and class_node not in dag:
        class_node = None
    if isinstance(layout, str) and layout not in ("layered", "circular"):
        raise ValueError(f"layout must be 'layered', 'circular' or a mapping node -> (x, y), "
                         f"got {layout!r}")
    if layout == "layered" and not nx.is_directed_acyclic_graph(dag):
        layout = "circular"  # e.g. both directions of an undirected edge drawn
    full = {n: str((names or {}).get(n, n)) for n in dag.nodes}
    font_px = _label_font_px(dag, presentation)
    box_h = font_px + 12.0
    frame_w = max(float(width) - _CHROME_W, 120.0)

    if layout == "layered":
        labels, box_w, pos, extent = _fit_labels(dag, full, font_px, class_node, frame_w,
                                                 max_label)
        # spread the layers over the width asked for, boxes keep their pixel size (a
        # responsive figure is spread by the browser instead)
        stretch = 1.0 if responsive or extent <= 0 else min(max(frame_w / extent, 1.0), 1.6)
        pos = {n: (x * stretch, y) for n, (x, y) in pos.items()}
    else:
        if isinstance(layout, Mapping):
            missing = [n for n in dag.nodes if n not in layout]
            if missing:
                raise ValueError(f"layout mapping has no position for nodes {missing[:5]}")
            raw = {n: (float(layout[n][0]), float(layout[n][1])) for n in dag.nodes}
        else:
            order = sorted(dag.nodes, key=_sort_key)
            circ = nx.circular_layout(nx.DiGraph(list(zip(order, order))) if order else nx.DiGraph())
            raw = {n: (float(circ[n][0]), float(circ[n][1]) * 2.0) for n in order}
        nodes0 = sorted(dag.nodes, key=_sort_key)
        lab_list = display_labels([full[n] for n in nodes0], max_label)
        labels = dict(zip(nodes0, lab_list))
        box_w = {n: text_width_px(labels[n], font_px) + 2 * _BOX_PAD_PX for n in nodes0}
        # the least x scale (pixels per unit) that keeps boxes of one row apart: rows
        # are at least _LAYER_STEP box heights per y unit apart, so only nodes closer
        # than that vertically can touch
        box_h0 = font_px + 12.0
        near = (box_h0 + 2.0) / (_LAYER_STEP * box_h0)
        unit = 1.0
        for i, a in enumerate(nodes0):
            for b in nodes0[i + 1:]:
                dx, dy = abs(raw[a][0] - raw[b][0]), abs(raw[a][1] - raw[b][1])
                if dy < near:
                    need = (box_w[a] + box_w[b]) / 2 + _BOX_GAP_PX
                    unit = max(unit, need / dx if dx > 1e-9 else need)
        xs0 = [x for x, _ in raw.values()] or [0.0]
        span = (max(xs0) - min(xs0)) or 1.0
        if not responsive:
            unit = max(unit, (frame_w - max(box_w.values(), default=60.0)) / span)
        pos = {n: (x * unit, y) for n, (x, y) in raw.items()}

    nodes = sorted(dag.nodes, key=lambda n: (-pos[n][1], pos[n][0], _sort_key(n)))
    # vertical scale: the figure height asked for, but never less than a readable step
    ys = [pos[n][1] for n in nodes] or [0.0]
    y_span = (max(ys) - min(ys)) + 1.0  # half a layer of margin above and below
    chrome_h = _TITLE_PX if responsive else _CHROME_H
    frame_h = math.ceil(max(float(height) - chrome_h, y_span * _LAYER_STEP * box_h, 3 * box_h))
    sy = frame_h / y_span  # pixels per layer
    xy_px = {n: (pos[n][0], pos[n][1] * sy) for n in nodes}
    left = min((xy_px[n][0] - box_w[n] / 2 for n in nodes), default=-50.0)
    right = max((xy_px[n][0] + box_w[n] / 2 for n in nodes), default=50.0)
    natural = right - left + 2 * _BOX_GAP_PX
    frame_w_used = math.ceil(natural if responsive else max(frame_w, natural))
    mid = (left + right) / 2
    xlim = (mid - frame_w_used / 2, mid + frame_w_used / 2)
    ylim = (min(ys) * sy - sy / 2, max(ys) * sy + sy / 2)

    extra = sorted({str(k) for n in nodes for k in dag.nodes[n]} - {
        "x", "y", "name", "label", "states", "color", "highlighted", "x0", "x1", "y0", "y1"})
    node_cols: dict[str, list] = {
        "x": [xy_px[n][0] for n in nodes],
        "y": [xy_px[n][1] for n in nodes],
        "name": [full[n] for n in nodes],
        "label": [labels[n] for n in nodes],
        "states": [_format_value(states[n]) if n in states else "" for n in nodes],
        "color": [HIGHLIGHT_COLOR if n in hl else node_colors.get(n, NODE_COLOR) for n in nodes],
        "highlighted": ["yes" if n in hl else "no" for n in nodes],
    }
    for k in extra:
        node_cols[k] = [_format_value(dag.nodes[n].get(k, "")) for n in nodes]
    info = ["name", "states", *extra]
    hv_nodes = hv.Nodes({k: v for k, v in node_cols.items()},
                        kdims=["x", "y", "name"], vdims=["label", "states", "color", "highlighted", *extra])

    edges = sorted(dag.edges, key=lambda e: (_sort_key(e[0]), _sort_key(e[1])))
    if edge_weights is not None:
        weights = []
        for u, v in edges:
            w = float(edge_weights.get((u, v), 0.0))
            # posteriors computed in floating point may overshoot [0, 1] by rounding
            if not -1e-9 <= w <= 1.0 + 1e-9:
                raise ValueError(f"edge weight for {(u, v)!r} is {w}: weights must lie in [0, 1]")
            weights.append(min(max(w, 0.0), 1.0))
        widths = [_MIN_EDGE_WIDTH + (_MAX_EDGE_WIDTH - _MIN_EDGE_WIDTH) * w for w in weights]
    else:
        weights = [1.0] * len(edges)
        widths = [_DEFAULT_EDGE_WIDTH] * len(edges)
    if presentation:
        widths = [w * PRESENTATION_ARC_SCALE for w in widths]
    colors = dict(edge_colors or {})
    edge_cols = {
        "source": [full[u] for u, _ in edges],
        "target": [full[v] for _, v in edges],
        "weight": weights,
        "width": widths,
        "color": [colors.get((u, v), EDGE_COLOR) for u, v in edges],
    }
    half = {n: (box_w[n] / 2 + 1.5, box_h / 2 + 1.5) for n in nodes}
    paths = _arrow_paths([(xy_px[u], xy_px[v]) for u, v in edges],
                         [(half[u], half[v]) for u, v in edges])
    graph = hv.Graph((edge_cols, hv_nodes, hv.EdgePaths(paths)),
                     kdims=["source", "target"], vdims=["weight", "width", "color"])
    graph = graph.opts(
        node_size=0, node_alpha=0.0, node_line_alpha=0.0,
        edge_color="color" if edges else EDGE_COLOR, edge_line_width="width", edge_alpha=0.8,
        xaxis=None, yaxis=None, xlim=xlim, ylim=ylim,
        title=literal_title(title), toolbar="above", border=_BORDER_PX, backend="bokeh",
    )
    if responsive:
        # a stretching figure gets its height from its container: give the figure's
        # height and borders), which plot_height reports
        # (frame plus title and borders), which plot_size reports with the least width
        # that keeps the boxes apart; the container enforces that width (a figure's own
        # min_width would widen every enclosing Panel layout and so the page)
        size = dict(responsive=True, height=int(frame_h) + _TITLE_PX, frame_height=None)
    else:
        size = dict(frame_width=int(frame_w_used), frame_height=int(frame_h))
    graph = graph.opts(**size, backend="bokeh")
    box_cols = {
        "x0": [xy_px[n][0] - box_w[n] / 2 for n in nodes],
        "y0": [xy_px[n][1] - box_h / 2 for n in nodes],
        "x1": [xy_px[n][0] + box_w[n] / 2 for n in nodes],
        "y1": [xy_px[n][1] + box_h / 2 for n in nodes],
        **{k: node_cols[k] for k in ("name", "label", "states", "color", "highlighted", *extra)},
    }
    boxes = hv.Rectangles(box_cols, kdims=["x0", "y0", "x1", "y1"],
                          vdims=["name", "label", "states", "color", "highlighted", *extra]).opts(
        color="color", line_color="#333333", line_width=1.2, tools=["hover"],
        hover_tooltips=[(k, f"@{{{k}}}") for k in info], backend="bokeh")
    text = hv.Labels({"x": node_cols["x"], "y": node_cols["y"], "label": node_cols["label"]},
                     kdims=["x", "y"], vdims=["label"]).opts(
        text_font_size=f"{font_px:g}px", text_color="#111111", text_align="center",
        text_baseline="middle", backend="bokeh")
    return (graph * boxes * text).opts(
        title=literal_title(title), toolbar="above", active_tools=["wheel_zoom"],
        fontsize={"title": f"{_font_px(14.0, presentation):g}px"}, **size, backend="bokeh")


def node_boxes(plot) -> "pd.DataFrame":
    """The node boxes of a :func:`dag_plot` picture, in pixels of its frame.

    Columns ``name``, ``label``, ``x0``, ``y0``, ``x1``, ``y1``, ``font_px``: what a test
    needs to check that no two boxes overlap and that each box holds its label.

    Examples
    --------
    >>> import networkx as nx
    >>> b = node_boxes(dag_plot(nx.DiGraph([("a", "b")])))
    >>> bool((b["x1"] > b["x0"]).all())
    True
    """
    import holoviews as hv
    import pandas as pd

    rects = [el for el in plot.traverse(lambda e: e, [hv.Rectangles])]
    if not rects:
        raise ValueError("no node boxes in this plot: pass a dag_plot picture")
    r = rects[0]
    df = pd.DataFrame({d: r.dimension_values(d) for d in ("name", "label", "x0", "y0", "x1", "y1")})
    labels = [el for el in plot.traverse(lambda e: e, [hv.Labels])]
    size = hv.Store.lookup_options("bokeh", labels[0], "style").kwargs.get("text_font_size", "12px") \
        if labels else "12px"
    df["font_px"] = float(str(size).replace("px", ""))
    return df


def plot_size(plot) -> tuple[int, int]:
    """``(least width, height)`` in pixels of a :func:`dag_plot` picture.

    The least width is the frame the node boxes need plus the borders: a responsive
    picture shown narrower would squeeze its boxes together. The height includes the
    title and toolbar.

    Examples
    --------
    >>> import networkx as nx
    >>> w, h = plot_size(dag_plot(nx.DiGraph([("a", "b")]), height=300, responsive=True))
    >>> h >= 300 and w < 300
    True
    """
    import holoviews as hv

    graphs = [el for el in plot.traverse(lambda e: e, [hv.Graph])]
    if not graphs:
        raise ValueError("no graph in this plot: pass a dag_plot picture")
    opts = hv.Store.lookup_options("bokeh", graphs[0], "plot").kwargs
    x0, x1 = opts["xlim"]
    width = int(math.ceil(x1 - x0)) + 2 * _BORDER_PX + 2
    if opts.get("frame_height"):
        return width, int(opts["frame_height"]) + _CHROME_H
    return width, int(opts.get("height") or 400)
