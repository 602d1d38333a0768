"""Pictures for Castelo & Siebes: the variable hierarchy, the sub-spaces of the
incremental search (Figure 6) and q along the time line (Figures 4, 7, 8).

Only shaping: the trees, clusters, traces and models come from
:mod:`bnexplore.clustering`.

Examples
--------
>>> from bnexplore.clustering import ClusterNode
>>> from bnexplore.viz.clustering import dendrogram_segments
>>> a, b = ClusterNode(["a"], 1.0), ClusterNode(["b"], 1.0)
>>> seg, leaves = dendrogram_segments(ClusterNode(["a", "b"], 0.4, [a, b]))
>>> len(seg), list(leaves["name"])
(3, ['a', 'b'])
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import networkx as nx
import numpy as np
import pandas as pd

from ._style import PRESENTATION_FONT_PX
from .graphs import _ensure_bokeh, dag_plot, layered_layout, literal_title, node_boxes

__all__ = ["cluster_colors", "dendrogram_segments", "dendrogram_plot", "strategy_frame",
           "honeycomb_layout", "subspace_plot", "q_timeline_plot"]

_GREY = "#9a9a9a"
#: pixels between two leaves of a sideways dendrogram (projector-size names never overlap)
LEAF_ROW_PX = 26
_OUTLINE = "#d62728"


def cluster_colors(n: int) -> list[str]:
    """``n`` distinct colours (Category20, cycled).

    Examples
    --------
    >>> cluster_colors(2)
    ['#1f77b4', '#aec7e8']
    """
    from bokeh.palettes import Category20

    pal = list(Category20[20])
    return [pal[i % len(pal)] for i in range(n)]


def _cluster_of(clusters: Sequence[Sequence[str]] | None) -> dict:
    return {v: k for k, c in enumerate(clusters or []) for v in c}


def dendrogram_segments(root, clusters: Sequence[Sequence[str]] | None = None):
    """Line segments of a dendrogram whose height is the cluster radius.

    Leaves sit at ``x = 0, 1, ...`` (depth-first leaf order) and ``y = 1`` (a leaf's
    radius); an inner node sits at its radius, above the mean x of its children,
    joined to them by a horizontal bar and two verticals (U shape).

    Parameters
    ----------
    root : ClusterNode
    clusters : list of list of str, optional
        Extracted clusters: a segment below a node whose variables all lie in
        cluster ``k`` gets ``cluster = k``, otherwise -1.

    Returns
    -------
    (segments, leaves) : (DataFrame, DataFrame)
        ``segments``: ``x0, y0, x1, y1, cluster, size, radius``; ``leaves``:
        ``name, x, y, cluster``.
    """
    where = _cluster_of(clusters)
    leaves: list[dict] = []
    segs: list[dict] = []

    def owner(vars_) -> int:
        ks = {where.get(v, -1) for v in vars_}
        return ks.pop() if len(ks) == 1 else -1

    def rec(node) -> tuple[float, float]:
        if node.is_leaf:
            x = float(len(leaves))
            leaves.append({"name": str(node.variables[0]), "x": x, "y": 1.0,
                           "cluster": where.get(node.variables[0], -1)})
            return x, 1.0
        pts = [rec(c) for c in node.children]
        y = float(node.radius)
        xs = [p[0] for p in pts]
        k = owner(node.variables)
        for (cx, cy), c in zip(pts, node.children):
            segs.append({"x0": cx, "y0": cy, "x1": cx, "y1": y, "cluster": owner(c.variables),
                         "size": len(c), "radius": float(c.radius)})
        segs.append({"x0": min(xs), "y0": y, "x1": max(xs), "y1": y, "cluster": k,
                     "size": len(node), "radius": y})
        return float(np.mean(xs)), y

    rec(root)
    seg = pd.DataFrame(segs, columns=["x0", "y0", "x1", "y1", "cluster", "size", "radius"])
    return seg, pd.DataFrame(leaves, columns=["name", "x", "y", "cluster"])


def dendrogram_plot(root, clusters: Sequence[Sequence[str]] | None = None, title: str = "",
                    width: int = 900, height: int = 420, responsive: bool = False,
                    presentation: bool = False):
    """Dendrogram of the variable hierarchy with the cluster radius on the y axis.

    Branches inside an extracted cluster are drawn in that cluster's colour, the rest
    in grey; the radius axis is inverted so that leaves (radius 1) are at the bottom.
    Hovering a leaf shows the variable and its cluster, hovering a branch the number
    of variables below it and its radius.

    Parameters
    ----------
    root : ClusterNode
    clusters : list of list of str, optional
        Extracted clusters (coloured; numbered from 1 in the hover tool).
    title : str
    width, height : int
        Size in pixels; with ``responsive=True`` the width follows the container
        (``width`` is ignored) and the height stays fixed.
    presentation : bool
        Projector sizes: every text at least 18 px and the tree drawn sideways (the
        leaves one below the other, :data:`LEAF_ROW_PX` apart, so that their names
        never overlap however many there are; the height grows with them).

    Examples
    --------
    >>> from bnexplore.clustering import incremental_strategy, _tree_from_nested
    >>> tree = _tree_from_nested([["a", "b"], "c"])
    >>> p = dendrogram_plot(tree, clusters=incremental_strategy(tree, 2))
    """
    import holoviews as hv

    _ensure_bokeh()
    seg, leaves = dendrogram_segments(root, clusters)
    colors = cluster_colors(max(len(clusters or []), 1))
    seg = seg.assign(color=[colors[k] if k >= 0 else _GREY for k in seg["cluster"]],
                     width=[3.0 if k >= 0 else 1.5 for k in seg["cluster"]],
                     cluster_no=[str(k + 1) if k >= 0 else "none" for k in seg["cluster"]])
    lcol = [colors[k] if k >= 0 else _GREY for k in leaves["cluster"]]
    lno = [str(k + 1) if k >= 0 else "none" for k in leaves["cluster"]]
    leaves = leaves.assign(color=lcol, cluster_no=lno)
    ticks = list(zip(leaves["x"], leaves["name"]))
    ymin = float(min(seg["y1"].min(), 1.0)) if len(seg) else 0.0
    leaf_lim = (-0.7, max(len(leaves) - 0.3, 0.7))
    radius_lim = (max(ymin - 0.05, -0.02), 1.02)
    radius_label = "cluster radius (smallest Cramér's V inside)"
    if presentation:
        # sideways: the leaves down the y axis (the first at the top), radius along x
        seg = seg.rename(columns={"x0": "y0", "y0": "x0", "x1": "y1", "y1": "x1"})
        leaves = leaves.rename(columns={"x": "y", "y": "x"})
    segments = hv.Segments(seg, kdims=["x0", "y0", "x1", "y1"],
                           vdims=["color", "width", "size", "radius", "cluster_no"]).opts(
        color="color", line_width="width", tools=["hover"],
        hover_tooltips=[("variables below", "@size"), ("radius", "@radius{0.000}"),
                        ("cluster", "@cluster_no")], backend="bokeh")
    points = hv.Points(leaves, kdims=["x", "y"], vdims=["name", "color", "cluster_no"]).opts(
        color="color", size=7, tools=["hover"],
        hover_tooltips=[("variable", "@name"), ("cluster", "@cluster_no")], backend="bokeh")
    size = {"responsive": True} if responsive else {"width": width}
    if presentation:
        font = f"{PRESENTATION_FONT_PX:g}px"
        return (segments * points).opts(
            title=literal_title(title), height=int(LEAF_ROW_PX * len(ticks) + 120),
            invert_yaxis=True, invert_xaxis=True, yticks=ticks, ylim=leaf_lim, xlim=radius_lim,
            ylabel="", xlabel=radius_label,
            fontsize={k: font for k in ("title", "labels", "xticks", "yticks")},
            backend="bokeh", **size)
    return (segments * points).opts(
        title=literal_title(title), height=height, invert_yaxis=True, xticks=ticks, xrotation=60,
        fontsize={"xticks": "8pt" if len(ticks) > 30 else "9pt"},
        xlim=leaf_lim, ylim=radius_lim, xlabel="", ylabel=radius_label, backend="bokeh", **size)


def strategy_frame(clusters: Sequence[Sequence[str]], groups: Sequence[Sequence[str]] | None = None
                   ) -> pd.DataFrame:
    """The incremental strategy as a table: order, size, variables (and group purity).

    Examples
    --------
    >>> strategy_frame([["a", "b"], ["c"]])["size"].tolist()
    [2, 1]
    """
    rows = []
    where = {v: g for g, vs in enumerate(groups or []) for v in vs}
    for k, c in enumerate(clusters):
        row = {"order": k + 1, "size": len(c), "variables": ", ".join(map(str, c))}
        if groups is not None:
            cnt = np.bincount([where[v] for v in c]) if c else np.zeros(1, int)
            row["main group"] = int(cnt.argmax())
            row["share in main group"] = float(cnt.max() / max(len(c), 1))
        rows.append(row)
    return pd.DataFrame(rows)


def honeycomb_layout(cells: Sequence[Sequence[str]], per_row: int = 4) -> dict:
    """Positions for the honeycomb network: each cell a hexagon, cells on a grid.

    Variables ``v0..v5`` of a cell go round the hexagon with ``v0`` on top and ``v3``
    at the bottom; rows of ``per_row`` cells, every other row right to left, so that
    consecutive (linked) cells are neighbours.

    Examples
    --------
    >>> pos = honeycomb_layout([["a", "b", "c", "d", "e", "f"]])
    >>> pos["a"][1] > pos["d"][1]
    True
    """
    pos = {}
    ang = np.pi / 2 - np.arange(6) * np.pi / 3          # v0 top, clockwise
    for c, cell in enumerate(cells):
        row, col = divmod(c, per_row)
        col = col if row % 2 == 0 else per_row - 1 - col
        cx, cy = col * 2.6, -row * 2.8
        for i, v in enumerate(cell):
            pos[v] = (float(cx + np.cos(ang[i % 6])), float(cy + np.sin(ang[i % 6])))
    return pos


def _outline(points: np.ndarray, pad: float) -> np.ndarray:
    """A closed padded outline around ``points`` (convex hull, or a box when degenerate)."""
    from scipy.spatial import ConvexHull, QhullError

    angles = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    ring = np.concatenate([points + pad * np.c_[np.cos(a), np.sin(a)] for a in angles])
    try:
        hull = ConvexHull(ring)
        poly = ring[hull.vertices]
    except (QhullError, ValueError):
        lo, hi = ring.min(axis=0), ring.max(axis=0)
        poly = np.array([lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]])
    return np.vstack([poly, poly[:1]])


def _encloses(poly: np.ndarray, points: np.ndarray) -> bool:
    """Whether any of ``points`` lies inside the convex polygon ``poly``."""
    from scipy.spatial import Delaunay

    if not len(points):
        return False
    return bool((Delaunay(poly[:-1]).find_simplex(points) >= 0).any())


def subspace_plot(model: nx.DiGraph, subspace: Sequence[str], layout: Mapping | str = "layered",
                  clusters: Sequence[Sequence[str]] | None = None, title: str = "",
                  width: int = 800, height: int = 520, states: Mapping | None = None,
                  responsive: bool = False, presentation: bool = False,
                  max_label: int | None = None):
    """The network known so far, with the sub-space being explored outlined (Figure 6).

    Parameters
    ----------
    model : networkx.DiGraph
        E.g. ``IncrementalResult.model_at(k)``.
    subspace : list of str
        Variables of the sub-space searched at this step: highlighted and enclosed
        by a dashed line (their padded convex hull, or a dashed ring around each of
        them when the hull would enclose other variables).
    layout : mapping or "layered"
        Fixed positions (keep them fixed across steps so the picture does not jump).
    clusters : list of list of str, optional
        Colours the other variables by cluster.
    width, height, responsive, presentation, max_label
        As in :func:`bnexplore.viz.dag_plot` (a layout and label length that fit a
        width: :func:`bnexplore.viz.graphs.fitted_layout`).

    Examples
    --------
    >>> import networkx as nx
    >>> p = subspace_plot(nx.DiGraph([("a", "b"), ("c", "b")]), ["a", "b"])
    """
    import holoviews as hv

    _ensure_bokeh()
    pos = layered_layout(model) if layout == "layered" else layout
    if isinstance(pos, str):
        raise ValueError(f"layout must be 'layered' or a mapping node -> (x, y), got {pos!r}")
    colors = cluster_colors(max(len(clusters or []), 1))
    node_colors = {v: colors[k] for v, k in _cluster_of(clusters).items() if v in model}
    plot = dag_plot(model, states=states, node_colors=node_colors, highlight=list(subspace),
                    layout=pos, title=title, width=width, height=height, responsive=responsive,
                    presentation=presentation, max_label=max_label)
    # the outline is drawn in the plot's pixel coordinates, around the node boxes
    boxes = node_boxes(plot).set_index("name")
    sub_names = [str(v) for v in subspace if v in model]
    others = boxes.drop(index=sub_names, errors="ignore")
    pad = 8.0
    corners = np.array([[x, y] for v in sub_names
                        for x in (boxes.at[v, "x0"] - pad, boxes.at[v, "x1"] + pad)
                        for y in (boxes.at[v, "y0"] - pad, boxes.at[v, "y1"] + pad)]).reshape(-1, 2)
    other_pts = np.c_[(others["x0"] + others["x1"]) / 2, (others["y0"] + others["y1"]) / 2]
    poly = _outline(corners, pad=4.0) if len(corners) else np.zeros((0, 2))
    if len(corners) and _encloses(poly, other_pts):
        # the hull would enclose other variables: frame each variable of the sub-space instead
        paths = [np.array([[boxes.at[v, "x0"] - pad, boxes.at[v, "y0"] - pad],
                           [boxes.at[v, "x1"] + pad, boxes.at[v, "y0"] - pad],
                           [boxes.at[v, "x1"] + pad, boxes.at[v, "y1"] + pad],
                           [boxes.at[v, "x0"] - pad, boxes.at[v, "y1"] + pad],
                           [boxes.at[v, "x0"] - pad, boxes.at[v, "y0"] - pad]]) for v in sub_names]
    else:
        paths = [poly] if len(poly) else []
    outline = hv.Path(paths).opts(color=_OUTLINE, line_dash="dashed",
                                  line_width=3 if presentation else 2, backend="bokeh")
    # the product is a new overlay: carry over the picture's size (responsive or fixed)
    size = {k: v for k, v in hv.Store.lookup_options("bokeh", plot, "plot").kwargs.items()
            if k in ("responsive", "width", "height", "frame_width", "frame_height",
                     "min_width", "max_width", "active_tools", "toolbar", "fontsize")}
    return (plot * outline).opts(title=literal_title(title), **size, backend="bokeh")


def q_timeline_plot(traces: Mapping[str, Sequence[int]], cumulative: bool = False,
                    normalize_by: int | None = None, boundaries: Sequence[int] | None = None,
                    title: str = "", width: int = 700, height: int = 320,
                    responsive: bool = False, legend_position: str | None = None):
    """q along the time line: improving models per step, or their running total.

    Parameters
    ----------
    traces : mapping label -> per-step counts
        E.g. ``{"greedy": greedy.q_trace, "incremental (hc)": inc.q_trace}``.
    cumulative : bool
        Plot the running total (the paper's second row) instead of per-step counts.
    normalize_by : int, optional
        Divide the step number by this (the paper normalises time by the greedy
        search's number of steps).
    boundaries : list of int, optional
        Step indices where a new sub-space starts (drawn as faint vertical lines).
    responsive : bool
        Width follows the container (``width`` ignored).
    legend_position : str, optional
        HoloViews legend position; default ``"bottom"``, below the axes, where it
        never hides a curve.

    Examples
    --------
    >>> p = q_timeline_plot({"greedy": [5, 3, 1], "incremental": [2, 1, 1, 1]}, cumulative=True)
    """
    import holoviews as hv

    _ensure_bokeh()
    if not traces:
        raise ValueError("traces is empty: give at least one label -> per-step counts")
    scale = float(normalize_by) if normalize_by else 1.0
    colors = cluster_colors(2 * len(traces))[::2]
    xname = "time" if normalize_by else "step"
    yname = "q_total" if cumulative else "q_step"
    ylabel = "q so far (running total)" if cumulative else "q per step (improving models)"
    curves = []
    for (label, tr), col in zip(traces.items(), colors):
        y = np.asarray(tr, dtype=float)
        y = np.cumsum(y) if cumulative else y
        x = np.arange(1, len(y) + 1) / scale
        curves.append(hv.Curve((x, y), xname, yname, label=f"{label}: q = {int(np.sum(tr))}").opts(
            color=col, line_width=2, tools=["hover"],
            hover_tooltips=[(xname, f"@{xname}{{0.000}}" if normalize_by else f"@{xname}"),
                            ("q", f"@{yname}{{0}}")], backend="bokeh"))
    over = hv.Overlay(curves)
    if boundaries:
        # one element for all boundaries: another cluster size moves lines, it does not
        # add models (a shown picture then takes the new positions in place)
        over = over * hv.VLines(np.asarray(boundaries, dtype=float) / scale).opts(
            color="#cccccc", line_width=1, backend="bokeh")
    xlabel = "time (steps / number of greedy steps)" if normalize_by else "step"
    size = {"responsive": True} if responsive else {"width": width}
    pos = legend_position or "bottom"
    return over.opts(title=literal_title(title), height=height, legend_position=pos, xlabel=xlabel,
                     ylabel=ylabel, show_grid=True, backend="bokeh", **size)
