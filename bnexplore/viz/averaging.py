"""Pictures of order-constrained model averaging (Dash & Cooper): shaping only.

Examples
--------
>>> import pandas as pd, networkx as nx
>>> from bnexplore.viz.averaging import arc_posterior_heatmap, summary_network_plot
>>> post = pd.DataFrame([[0, 0.8], [0, 0]], index=["A", "B"], columns=["A", "B"])
>>> h = arc_posterior_heatmap(post)
>>> g = summary_network_plot(nx.DiGraph([("A", "B")]), post, target="B")
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import networkx as nx
import pandas as pd

from .curves import heatmap
from .graphs import dag_plot, literal_title

__all__ = ["arc_posterior_heatmap", "summary_network_plot", "parent_set_bars", "thin_arcs"]


def arc_posterior_heatmap(post: pd.DataFrame, title: str = "Arc posteriors P(parent \u2192 child | D)",
                          width: int = 620, height: int = 560,
                          order: Sequence | str | None = None, threshold: float | None = None,
                          presentation: bool = False, colorbar_position: str = "right"):
    """Heat map of an arc-posterior matrix (rows parent, columns child), colours fixed to [0, 1].

    ``order``: the order of the averaging (then every arc lies above the diagonal,
    parents before children) or ``"cluster"``; ``threshold`` leaves blank the arcs
    whose posterior is below it; ``presentation`` gives projector sizes;
    ``colorbar_position`` "bottom" leaves the width to the cells. See
    :func:`bnexplore.viz.heatmap`.
    """
    return heatmap(post, title=title, cmap="Blues", clim=(0.0, 1.0), width=width, height=height,
                   order=order, clabel="P(arc)", threshold=threshold, presentation=presentation,
                   colorbar_position=colorbar_position)


def thin_arcs(dag: nx.DiGraph, post: pd.DataFrame, threshold: float | None) -> nx.DiGraph:
    """``dag`` without the arcs whose posterior in ``post`` is below ``threshold`` (every
    node kept), to thin a dense summary network.

    Examples
    --------
    >>> import networkx as nx, pandas as pd
    >>> post = pd.DataFrame([[0, 0.8, 0.1], [0, 0, 0.5], [0, 0, 0]], index=list("ABC"), columns=list("ABC"))
    >>> sorted(thin_arcs(nx.DiGraph([("A", "B"), ("A", "C"), ("B", "C")]), post, 0.3).edges)
    [('A', 'B'), ('B', 'C')]
    """
    if threshold is None:
        return dag
    threshold = float(threshold)
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be an arc posterior in [0, 1], got {threshold!r}")
    out = nx.DiGraph()
    out.add_nodes_from(dag.nodes(data=True))
    out.add_edges_from((u, v) for u, v in dag.edges if float(post.loc[u, v]) >= threshold)
    return out


def summary_network_plot(dag: nx.DiGraph, post: pd.DataFrame, target: Hashable | None = None,
                         states: Mapping[Hashable, Sequence] | None = None, title: str = "",
                         width: int = 700, height: int = 520, responsive: bool = False,
                         threshold: float | None = None, presentation: bool = False):
    """The summary network M*: arcs drawn with width proportional to their posterior.

    ``post`` is the arc-posterior matrix of the full class L_k(pi); ``target`` (the
    class node) is highlighted and kept on top. ``threshold`` drops the arcs whose
    posterior is below it (:func:`thin_arcs`; every node stays), so that a dense M*
    (58 arcs on vote, 138 on ALARM) can be thinned. ``width``, ``height``,
    ``responsive`` and ``presentation`` as in :func:`bnexplore.viz.dag_plot`.
    """
    dag = thin_arcs(dag, post, threshold)
    weights = {(u, v): float(post.loc[u, v]) for u, v in dag.edges}
    in_dag = target is not None and target in dag
    return dag_plot(dag, states=states, edge_weights=weights,
                    highlight=[target] if in_dag else None, class_node=target if in_dag else None,
                    title=title, width=width, height=height, responsive=responsive,
                    presentation=presentation)


def parent_set_bars(table: pd.DataFrame, title: str = "", top: int = 15, width: int = 620,
                    height: int = 320):
    """Horizontal bars of the most probable parent sets of one node.

    ``table`` is :meth:`bnexplore.averaging.OrderedAveraging.parent_set_posteriors`.
    """
    import holoviews as hv

    from .graphs import _ensure_bokeh

    _ensure_bokeh()
    t = table.head(top)
    labels = ["{" + ", ".join(map(str, ps)) + "}" for ps in t["parents"]]
    df = pd.DataFrame({"parent set": labels, "posterior": t["posterior"].to_numpy()})
    return hv.Bars(df, "parent set", "posterior").opts(
        invert_axes=True, width=width, height=height, title=literal_title(title), tools=["hover"],
        color="#1f5f8b", ylim=(0, 1), backend="bokeh")
