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

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import networkx as nx

__all__ = ["layered_layout", "dag_plot", "literal_title", "NODE_COLOR", "HIGHLIGHT_COLOR", "EDGE_COLOR"]

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


def layered_layout(dag: nx.DiGraph, *, sweeps: int = 2) -> dict[Hashable, tuple[float, float]]:
    """Place the nodes of a DAG on horizontal layers, parents above children.

    Node ``v`` goes on layer ``d(v)``, the length of the longest directed path that
    ends in ``v`` (its topological generation), so every arc points down at least one
    layer. Within a layer nodes are ordered by the mean x position of their parents
    (then children, for ``sweeps`` alternating passes), ties broken by name, which
    keeps crossings low. Isolated nodes (no arcs at all) get their own bottom row so
    they do not crowd the roots. There is no randomness: the same graph always gives
    the same positions.

    Parameters
    ----------
    dag : networkx.DiGraph
        A directed acyclic graph. Node names may be any hashable.
    sweeps : int, default 2
        Number of barycentre passes used to order nodes within layers.

    Returns
    -------
    dict
        ``node -> (x, y)``. Layer ``i`` has ``y = -i`` (roots at ``y = 0``); nodes in a
        layer sit at unit spacing centred on ``x = 0``.

    Raises
    ------
    TypeError
        If ``dag`` is not a directed networkx graph.
    ValueError
        If ``dag`` has a directed cycle.

    Examples
    --------
    >>> import networkx as nx
    >>> pos = layered_layout(nx.DiGraph([("a", "b"), ("a", "c")]))
    >>> pos["a"], sorted(pos["b"] + pos["c"])
    ((0.0, 0.0), [-1.0, -1.0, -0.5, 0.5])
    """
    if not isinstance(dag, nx.DiGraph):
        raise TypeError(f"dag must be a networkx.DiGraph, got {type(dag).__name__}")
    if not nx.is_directed_acyclic_graph(dag):
        cycle = nx.find_cycle(dag)
        raise ValueError(f"dag has a directed cycle {cycle}: layered_layout needs a DAG")

    connected = [n for n in dag.nodes if dag.degree(n) > 0]
    isolated = sorted((n for n in dag.nodes if dag.degree(n) == 0), key=_sort_key)

    # longest-path layering = topological generations of the connected part
    layers: list[list[Hashable]] = [
        sorted(gen, key=_sort_key)
        for gen in nx.topological_generations(dag.subgraph(connected))
    ]

    def _x_of(layer: Sequence[Hashable]) -> dict[Hashable, float]:
        off = (len(layer) - 1) / 2.0
        return {n: i - off for i, n in enumerate(layer)}

    x: dict[Hashable, float] = {}
    for layer in layers:
        x.update(_x_of(layer))

    def _reorder(layer: list[Hashable], neighbours) -> list[Hashable]:
        def key(n: Hashable) -> tuple[float, tuple[str, str]]:
            nb = [x[m] for m in neighbours(n) if m in x]
            bary = sum(nb) / len(nb) if nb else x[n]
            return (bary, _sort_key(n))
        return sorted(layer, key=key)

    for s in range(max(0, int(sweeps))):
        if s % 2 == 0:  # downward pass: order by parents
            for i in range(1, len(layers)):
                layers[i] = _reorder(layers[i], dag.predecessors)
                x.update(_x_of(layers[i]))
        else:  # upward pass: order by children
            for i in range(len(layers) - 2, -1, -1):
                layers[i] = _reorder(layers[i], dag.successors)
                x.update(_x_of(layers[i]))

    pos: dict[Hashable, tuple[float, float]] = {}
    for depth, layer in enumerate(layers):
        for n, xn in _x_of(layer).items():
            pos[n] = (float(xn), float(-depth))
    if isolated:
        y = float(-len(layers))
        for n, xn in _x_of(isolated).items():
            pos[n] = (float(xn), y)
    return pos


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
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    width: int,
    height: int,
    node_radius_px: float,
    head_px: float = 10.0,
):
    """Arc paths that stop at the node rims and end in an arrowhead.

    Shortening and the arrowhead are computed in (approximate) screen pixels so that
    they look the same whatever the aspect ratio of the data.
    """
    import numpy as np

    sx = width / max(xlim[1] - xlim[0], 1e-9)
    sy = height / max(ylim[1] - ylim[0], 1e-9)
    out = []
    for (x0, y0), (x1, y1) in segments:
        p0 = np.array([x0 * sx, y0 * sy])
        p1 = np.array([x1 * sx, y1 * sy])
        d = p1 - p0
        length = float(np.hypot(*d))
        if length < 2 * node_radius_px + 1:  # nodes overlap: draw the plain segment
            a, b = p0, p1
        else:
            u = d / length
            a, b = p0 + u * node_radius_px, p1 - u * node_radius_px
        ang = float(np.arctan2(*(b - a)[::-1]))
        h0 = b - head_px * np.array([np.cos(ang + np.pi / 7), np.sin(ang + np.pi / 7)])
        h1 = b - head_px * np.array([np.cos(ang - np.pi / 7), np.sin(ang - np.pi / 7)])
        pts = np.array([a, b, [np.nan, np.nan], h0, b, h1])
        pts[:, 0] /= sx
        pts[:, 1] /= sy
        out.append(pts)
    return out


def _resolve_layout(dag: nx.DiGraph, layout: str | Mapping) -> dict:
    if isinstance(layout, Mapping):
        missing = [n for n in dag.nodes if n not in layout]
        if missing:
            raise ValueError(f"layout mapping has no position for nodes {missing[:5]}")
        return {n: (float(layout[n][0]), float(layout[n][1])) for n in dag.nodes}
    if layout == "layered":
        return layered_layout(dag)
    if layout == "circular":
        nodes = sorted(dag.nodes, key=_sort_key)
        g = nx.DiGraph()
        g.add_nodes_from(nodes)
        return {n: (float(p[0]), float(p[1])) for n, p in nx.circular_layout(g).items()}
    raise ValueError(f"layout must be 'layered', 'circular' or a mapping node -> (x, y), "
                     f"got {layout!r}")


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
):
    """Draw a DAG as a HoloViews graph with arrows, node labels and a hover tool.

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
        Node positions: :func:`layered_layout`, a circle, or an explicit mapping.
    title : str
        Plot title.
    width, height : int
        Plot size in pixels.

    Returns
    -------
    holoviews.Overlay
        ``hv.Graph * hv.Labels``; render with ``hv.render(plot, backend="bokeh")`` or
        show it in a Panel pane.

    Examples
    --------
    >>> import networkx as nx
    >>> g = nx.DiGraph([("Smoker", "Cancer"), ("Cancer", "Xray")])
    >>> p = dag_plot(g, states={"Smoker": ["yes", "no"]}, edge_weights={("Smoker", "Cancer"): 0.9})
    >>> type(p).__name__
    'Overlay'
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
    pos = _resolve_layout(dag, layout)
    nodes = sorted(dag.nodes, key=lambda n: (-pos[n][1], pos[n][0], _sort_key(n)))

    extra = sorted({str(k) for n in nodes for k in dag.nodes[n]} - {"x", "y", "name", "states",
                                                                     "color", "highlighted"})
    node_cols: dict[str, list] = {
        "x": [pos[n][0] for n in nodes],
        "y": [pos[n][1] for n in nodes],
        "name": [str(n) for n in nodes],
        "states": [_format_value(states[n]) if n in states else "" for n in nodes],
        "color": [HIGHLIGHT_COLOR if n in hl else node_colors.get(n, NODE_COLOR) for n in nodes],
        "highlighted": ["yes" if n in hl else "no" for n in nodes],
    }
    for k in extra:
        node_cols[k] = [_format_value(dag.nodes[n].get(k, "")) for n in nodes]
    vdims = ["states", "color", "highlighted", *extra]
    hv_nodes = hv.Nodes(node_cols, kdims=["x", "y", "name"], vdims=vdims)

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
    edge_cols = {
        "source": [str(u) for u, _ in edges],
        "target": [str(v) for _, v in edges],
        "weight": weights,
        "width": widths,
    }
    xs = node_cols["x"] or [0.0]
    ys = node_cols["y"] or [0.0]
    pad_x = 0.75
    pad_y = 0.5
    xlim = (min(xs) - pad_x, max(xs) + pad_x)
    ylim = (min(ys) - pad_y, max(ys) + pad_y)
    node_size = 38 if len(nodes) <= 40 else 24
    paths = _arrow_paths([(pos[u], pos[v]) for u, v in edges], xlim, ylim, width, height,
                         node_radius_px=node_size / 2 + 1)
    graph = hv.Graph((edge_cols, hv_nodes, hv.EdgePaths(paths)),
                     kdims=["source", "target"], vdims=["weight", "width"])
    tooltips = [("name", "@name"), ("states", "@states"), *[(k, f"@{{{k}}}") for k in extra]]

    graph = graph.opts(
        node_color="color",
        node_size=node_size,
        node_line_color="#333333",
        edge_color=EDGE_COLOR,
        edge_line_width="width",
        edge_alpha=0.8,
        tools=["hover"],
        hover_tooltips=tooltips,
        inspection_policy="nodes",
        xaxis=None,
        yaxis=None,
        xlim=xlim,
        ylim=ylim,
        width=width,
        height=height,
        title=literal_title(title),
        toolbar="above",
        active_tools=["wheel_zoom"],
        backend="bokeh",
    )
    labels = hv.Labels(
        {"x": node_cols["x"], "y": node_cols["y"], "name": node_cols["name"]},
        kdims=["x", "y"], vdims=["name"],
    ).opts(text_font_size="8pt" if len(nodes) > 20 else "10pt", text_color="#111111",
                                                                  backend="bokeh")
    return (graph * labels).opts(title=literal_title(title), width=width, height=height, backend="bokeh")
