"""Posterior marginals given evidence, under the single best network and the model
average, as one picture: shaping only.

The table comes from :meth:`bnexplore.averaging.AveragedModel.posteriors` (or any frame
with ``node``, ``state`` and one column per model); each state gets one bar per model,
the averaged bar a whisker over the spread of the sampled structures, and observed
nodes are marked in their label.

Examples
--------
>>> import pandas as pd
>>> from bnexplore.viz.inference import posterior_plot
>>> t = pd.DataFrame({"node": ["rain", "rain"], "state": ["no", "yes"], "best": [0.8, 0.2],
...                   "averaged": [0.7, 0.3], "low": [0.6, 0.2], "high": [0.8, 0.4], "observed": [False, False]})
>>> plot = posterior_plot(t)
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._style import font_px
from .graphs import _ensure_bokeh, literal_title

__all__ = ["posterior_plot", "MODEL_COLORS"]

#: bar colour of each model column
MODEL_COLORS = {"best": "#f28e2b", "averaged": "#4e79a7", "mean_of_conditionals": "#bab0ac"}
_LABELS = {"best": "single best network (GTT)", "averaged": "model average (BMA)",
           "mean_of_conditionals": "mean of the conditionals (not BMA)"}


def posterior_plot(table: pd.DataFrame, nodes: Sequence[str] | None = None,
                   models: Sequence[str] = ("best", "averaged"), title: str = "",
                   width: int = 620, presentation: bool = False):
    """Horizontal bars of every node's posterior marginal under each model.

    Parameters
    ----------
    table : DataFrame
        Columns ``node``, ``state``, one column per entry of ``models`` (probabilities),
        optionally ``low`` / ``high`` (whiskers on the ``"averaged"`` bars) and
        ``observed`` (the observed state of an observed node is labelled
        ``node = state (observed)``).
    nodes : sequence of str, optional
        The nodes to show, in this order (default: all, in the table's order).
    models : sequence of str
        The probability columns, one bar each per state; add
        ``"mean_of_conditionals"`` to show what averaging is not.
    title : str
    width : int
        Figure width; the height grows with the number of states.
    presentation : bool
        Projector sizes (fonts at least 18 px, taller rows).

    Returns
    -------
    holoviews.Overlay
    """
    import holoviews as hv

    _ensure_bokeh()
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a DataFrame, got {type(table).__name__}")
    missing = [c for c in ("node", "state", *models) if c not in table.columns]
    if missing:
        raise ValueError(f"table lacks the columns {missing}; it needs node, state and {list(models)}")
    if nodes is not None:
        unknown = [n for n in nodes if n not in set(table["node"])]
        if unknown:
            raise ValueError(f"nodes {unknown} are not in the table")
        table = pd.concat([table[table["node"] == n] for n in nodes])
    gap = 0.6  # between the states of two nodes
    ys, y, last = [], 0.0, None
    for node in table["node"]:
        if last is not None:
            y -= 1.0 + (gap if node != last else 0.0)
        ys.append(y)
        last = node
    ys = np.array(ys)
    observed = table["observed"].to_numpy(bool) if "observed" in table else np.zeros(len(table), bool)
    observed = observed & (table[models[-1]].to_numpy(float) >= 1.0 - 1e-9)  # the observed state itself
    ticks = [(float(yy), f"{n} = {s}" + (" (observed)" if o else ""))
             for yy, n, s, o in zip(ys, table["node"], table["state"], observed)]
    band = 0.8 / len(models)
    layers = []
    for i, m in enumerate(models):
        top = ys + 0.4 - i * band
        p = table[m].to_numpy(float)
        data = {"x0": np.zeros(len(p)), "y0": top - band, "x1": np.nan_to_num(p), "y1": top,
                "node": table["node"].astype(str).to_numpy(), "state": table["state"].astype(str).to_numpy(),
                "probability": p}
        layers.append(hv.Rectangles(data, kdims=["x0", "y0", "x1", "y1"], vdims=["node", "state", "probability"],
                                    label=_LABELS.get(m, m)).opts(
            color=MODEL_COLORS.get(m, "#999999"), line_alpha=0, tools=["hover"], backend="bokeh"))
        if m == "averaged" and {"low", "high"} <= set(table.columns):
            mid = top - band / 2
            layers.append(hv.Segments((table["low"].to_numpy(float), mid, table["high"].to_numpy(float), mid),
                                      kdims=["x0", "y0", "x1", "y1"]).opts(
                color="#222222", line_width=3 if presentation else 2, backend="bokeh"))
    tick = font_px(12.0, presentation)
    row_px = 2.2 * tick
    height = int(90 + row_px * (len(table) + gap * table["node"].nunique()))
    return hv.Overlay(layers).opts(
        title=literal_title(title), width=int(width), height=height, xlim=(0, 1.0),
        ylim=(float(ys.min(initial=0.0)) - 0.7, 0.7), yticks=ticks, xlabel="probability", ylabel="",
        show_legend=True, legend_position="top", show_grid=True,
        fontsize={k: f"{tick:g}px" for k in ("title", "labels", "xticks", "yticks", "legend")},
        backend="bokeh")
