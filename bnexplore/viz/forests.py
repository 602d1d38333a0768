"""Pictures for selectively conditioned forests (Ziebart, Dey & Bagnell).

Pure shaping: the structures, posteriors and accuracies come from
:mod:`bnexplore.forests`, the classifiers and the experiment runner.

Examples
--------
>>> import networkx as nx, pandas as pd
>>> g = nx.DiGraph([("C", "a"), ("a", "b")])
>>> p = forest_plot(g, class_node="C", edge_weights={("a", "b"): 0.7}, markov_blanket=["a"])
>>> q = alpha_accuracy_plot(pd.DataFrame({"penalty": [0, 1, float("inf")], "accuracy": [.6, .7, .65]}))
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping

import networkx as nx
import numpy as np
import pandas as pd

from .curves import PALETTE
from .graphs import _ensure_bokeh, dag_plot, literal_title

__all__ = ["forest_plot", "short_labels", "alpha_accuracy_plot", "noise_accuracy_plot", "dbn_plot", "CLASS_COLOR"]

#: colour of the class node.
CLASS_COLOR = "#fdbf6f"


def short_labels(names: Iterable[Hashable], max_len: int = 14) -> dict:
    """Unique display labels of at most ``max_len`` characters (``"adoption-of-t…"``).

    Long names are cut and end in an ellipsis; a cut that collides with another
    label gets a number. Short names are kept.

    Examples
    --------
    >>> short_labels(["a", "physician-fee-freeze", "physician-fee-x"], max_len=10)
    {'a': 'a', 'physician-fee-freeze': 'physician…', 'physician-fee-x': 'physicia…2'}
    """
    max_len = max(int(max_len), 4)
    out: dict = {}
    used: set = set()
    for n in names:
        s = str(n)
        lab = s if len(s) <= max_len else s[:max_len - 1] + "\u2026"
        i = 1
        while lab in used:
            i += 1
            lab = s[:max_len - 1 - len(str(i))] + "\u2026" + str(i)
        used.add(lab)
        out[n] = lab
    return out


def forest_plot(graph: nx.DiGraph, class_node: Hashable | None = None,
                edge_weights: Mapping[tuple, float] | None = None,
                markov_blanket: Iterable[Hashable] | None = None, rename: Mapping | None = None,
                title: str = "", width: int = 800, height: int = 520, layout=None,
                max_label: int | None = None, responsive: bool = False,
                presentation: bool = False):
    """An SCF / augmented naive Bayes structure: arc width by posterior, the class's
    Markov blanket highlighted, the class on top.

    Parameters
    ----------
    graph : networkx.DiGraph
    class_node : node, optional
        Drawn in :data:`CLASS_COLOR`, alone on the top layer.
    edge_weights : mapping, optional
        ``(parent, child) -> posterior`` in [0, 1].
    markov_blanket : iterable, optional
        Highlighted nodes.
    rename : mapping, optional
        Display names (e.g. ``{"__class__": "class"}``).
    layout : optional
        As in :func:`bnexplore.viz.dag_plot`; default "layered", or "circular" when the
        graph has a directed cycle (e.g. both directions of a BMA edge drawn).
    max_label : int, optional
        Longest node label in characters. By default names are cut (with an ellipsis)
        only as far as the widest layer needs to fit ``width``; the hover tool always
        shows the full name.
    width, height, responsive, presentation
        As in :func:`bnexplore.viz.dag_plot`.
    """
    rename = dict(rename or {})
    if layout is None:
        layout = "layered" if nx.is_directed_acyclic_graph(graph) else "circular"
    names = {n: str(rename.get(n, n)) for n in graph.nodes}
    g = graph
    weights = None
    if edge_weights is not None:
        weights = {(u, v): min(max(float(w), 0.0), 1.0) for (u, v), w in edge_weights.items()}
    colors = {}
    top = class_node if class_node is not None and class_node in graph else None
    if top is not None:
        colors[top] = CLASS_COLOR
    mb = [n for n in (markov_blanket or []) if n in graph]
    return dag_plot(g, edge_weights=weights, node_colors=colors, highlight=mb or None,
                    title=title, width=width, height=height, layout=layout, class_node=top,
                    names=names, max_label=max_label, responsive=responsive,
                    presentation=presentation)


def _alpha_positions(alphas: np.ndarray) -> tuple[np.ndarray, list]:
    finite = alphas[np.isfinite(alphas)]
    top = (finite.max() if finite.size else 0.0) + 1.0
    pos = np.where(np.isfinite(alphas), alphas, top)
    ticks = [(float(a), f"{a:g}") for a in np.unique(finite)]
    if (~np.isfinite(alphas)).any():
        ticks.append((float(top), "\u221e (FAN)"))
    return pos, ticks


def alpha_accuracy_plot(df: pd.DataFrame, title: str = "Accuracy against the exclusion penalty",
                        reference: Mapping[str, float] | None = None,
                        width: int = 600, height: int = 380, responsive: bool = False):
    """Mean accuracy (with a +-1 standard error band when there are repeats) against the
    exclusion penalty.

    ``df`` has columns ``penalty`` and ``accuracy`` (several rows per penalty are
    averaged; ``alpha``, the column's name in results of before 0.2.0, is read too);
    ``penalty = inf`` is drawn at the right end and labelled FAN.  ``reference`` adds
    horizontal lines (e.g. ``{"naive Bayes": 0.71}``), always inside the y range.
    ``responsive=True`` lets the width follow the container.
    """
    _ensure_bokeh()
    import holoviews as hv

    if "penalty" not in df.columns and "alpha" in df.columns:
        df = df.rename(columns={"alpha": "penalty"})
    if not {"penalty", "accuracy"} <= set(df.columns):
        raise ValueError("df needs columns 'penalty' and 'accuracy'")
    g = df.groupby("penalty")["accuracy"]
    stats = pd.DataFrame({"mean": g.mean(), "sem": g.sem().fillna(0.0)}).reset_index()
    pos, ticks = _alpha_positions(stats["penalty"].to_numpy(dtype=float))
    stats["x"] = pos
    stats["lo"] = stats["mean"] - stats["sem"]
    stats["hi"] = stats["mean"] + stats["sem"]
    stats = stats.sort_values("x")
    curve = hv.Curve(stats, "x", "mean", label="SFAN (mean, band: \u00b11 s.e.)").opts(
        color=PALETTE[0], line_width=2)
    pts = hv.Scatter(stats, "x", ["mean", "penalty", "sem"]).opts(
        color=PALETTE[0], size=7, tools=["hover"],
        hover_tooltips=[("penalty", "@penalty"), ("accuracy", "@mean{0.000}"),
                        ("std. error", "@sem{0.000}")])
    band = hv.Area((stats["x"], stats["lo"], stats["hi"]),
                   vdims=["lo", "hi"]).opts(alpha=0.2, color=PALETTE[0], line_alpha=0)
    layers = band * curve * pts
    vals = [*stats["lo"], *stats["hi"]]
    x0, x1 = float(stats["x"].min()) - 0.4, float(stats["x"].max()) + 0.4
    for i, (name, val) in enumerate((reference or {}).items()):
        vals.append(float(val))
        # a dashed curve across the axes rather than an HLine, so that it has a legend entry
        layers = layers * hv.Curve(([x0, x1], [float(val)] * 2), "x", "mean",
                                   label=f"{name} ({float(val):.3f})").opts(
            color=PALETTE[(i + 1) % len(PALETTE)], line_dash="dashed", line_width=2)
    lo, hi = float(np.nanmin(vals)), float(np.nanmax(vals))
    pad = 0.08 * (hi - lo if hi > lo else 0.05)
    size = {"responsive": True} if responsive else {"width": width}
    return layers.opts(title=literal_title(title), height=height, xlabel="exclusion penalty",
                       ylabel="accuracy (fraction correct)", xticks=ticks,
                       xlim=(x0, x1), ylim=(lo - pad, hi + 2.5 * pad),
                       legend_position="bottom_right",
                       show_grid=True, **size)


def noise_accuracy_plot(df: pd.DataFrame, title: str = "Accuracy against irrelevant features",
                        width: int = 600, height: int = 380):
    """Figure 9: mean accuracy of each classifier against the number of added random features.

    ``df`` has columns ``classifier``, ``n_noise`` and ``accuracy``.
    """
    _ensure_bokeh()
    import holoviews as hv

    mean = df.groupby(["classifier", "n_noise"], sort=False)["accuracy"].mean().reset_index()
    curves = []
    for i, (name, sub) in enumerate(mean.groupby("classifier", sort=False)):
        sub = sub.sort_values("n_noise")
        c = PALETTE[i % len(PALETTE)]
        curves.append(hv.Curve(sub, "n_noise", "accuracy", label=str(name)).opts(color=c, line_width=2)
                      * hv.Scatter(sub, "n_noise", "accuracy").opts(color=c, size=6))
    return hv.Overlay(curves).opts(title=literal_title(title), width=width, height=height,
                                   xlabel="irrelevant binary features added", ylabel="mean accuracy",
                                   legend_position="bottom_left", show_grid=True)


def dbn_plot(df: pd.DataFrame, title: str = "Withheld log P(X_t | X_t-1)", width: int = 650,
             height: int = 380):
    """Figure 4: bars of the mean withheld log-probability per model and training size.

    ``df`` has columns ``model``, ``n_train`` and ``log_prob``.
    """
    _ensure_bokeh()
    import holoviews as hv

    mean = df.groupby(["n_train", "model"], sort=False)["log_prob"].mean().reset_index()
    mean["n_train"] = mean["n_train"].astype(str)
    bars = hv.Bars(mean, ["model", "n_train"], "log_prob")
    lo = float(mean["log_prob"].min())
    hi = float(mean["log_prob"].max())
    pad = 0.1 * (hi - lo if hi > lo else 1.0)
    return bars.opts(title=literal_title(title), width=width, height=height, xrotation=45, ylim=(lo - pad, hi + pad),
                     tools=["hover"], ylabel="mean log P(X_t | X_t-1)", show_grid=True)
