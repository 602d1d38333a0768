"""Pictures of a classifier comparison: ROC curves, metric bars, per-class AUC.

Only shaping: the out-of-fold predictions, curves and metrics come from
:mod:`bnexplore.experiments.compare` and :mod:`bnexplore.metrics`.

Examples
--------
>>> import pandas as pd
>>> from bnexplore.viz.compare import metric_bars, roc_comparison
>>> p = roc_comparison({"NB": ([0, 0.2, 1], [0, 0.7, 1], 0.75)}, positive="yes")
>>> t = pd.DataFrame({"classifier": ["NB", "TAN"], "auc": [0.9, 0.95]})
>>> b = metric_bars(t, "auc")
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .curves import PALETTE, heatmap, roc_plot
from .graphs import _ensure_bokeh, literal_title

__all__ = ["roc_comparison", "metric_bars", "ovr_auc_heatmap", "format_metric_table",
           "METRIC_LABELS", "LOWER_IS_BETTER"]

#: column -> human label of the comparison metrics.
METRIC_LABELS = {
    "error": "error rate",
    "auc": "AUC (Hand & Till)",
    "log_loss": "log loss",
    "squared_error": "squared error",
    "cal": "CAL",
    "delta": "delta vs best (Dash & Cooper)",
}
#: metrics where a smaller value is better.
LOWER_IS_BETTER = {"error", "log_loss", "squared_error", "cal", "delta"}
_DASHES = ["solid", "dashed", "dotted", "dotdash"]


def roc_comparison(curves: Mapping[str, tuple[Sequence[float], Sequence[float], float]],
                   positive: object, width: int = 560, height: int = 480):
    """One-vs-rest ROC curves of several classifiers for the class ``positive``.

    Parameters
    ----------
    curves : mapping
        ``label -> (fpr, tpr, auc)`` as returned by
        :meth:`bnexplore.experiments.compare.CVResult.roc`.
    positive : label
        The class treated as positive (shown in the title).
    width, height : int

    Returns
    -------
    holoviews.Overlay
        Curves labelled ``"name (AUC 0.912)"``; beyond ten curves colours repeat with
        another line dash.
    """
    import holoviews as hv

    _ensure_bokeh()
    if not curves:
        raise ValueError("no ROC curve to draw: select at least one classifier that "
                         "finished")
    plot = roc_plot(dict(curves), title=f"ROC, class {positive!s} vs the rest",
                    width=width, height=height)
    items = list(plot)
    styled = []
    for i, el in enumerate(items[:-1]):
        styled.append(el.opts(line_dash=_DASHES[(i // len(PALETTE)) % len(_DASHES)],
                              backend="bokeh"))
    return hv.Overlay([*styled, items[-1]]).opts(
        title=literal_title(f"ROC, class {positive!s} vs the rest"), width=width, height=height,
        xlim=(0, 1), ylim=(0, 1.02), legend_position="bottom_right", show_grid=True,
        backend="bokeh")


def metric_bars(table: pd.DataFrame, metric: str, width: int = 560, height: int = 360):
    """Horizontal bars of one metric per classifier, best at the top.

    Parameters
    ----------
    table : DataFrame
        A ``classifier`` column and one column per metric (NaN rows are skipped).
    metric : str
        One of :data:`METRIC_LABELS`.

    Returns
    -------
    holoviews.Bars
    """
    import holoviews as hv

    _ensure_bokeh()
    if metric not in METRIC_LABELS:
        raise ValueError(f"metric must be one of {list(METRIC_LABELS)}, got {metric!r}")
    if "classifier" not in table or metric not in table:
        raise ValueError(f"table needs the columns 'classifier' and {metric!r}")
    data = table[["classifier", metric]].dropna()
    if data.empty:
        raise ValueError(f"no classifier has a value for {metric!r}")
    asc = metric in LOWER_IS_BETTER
    data = data.sort_values(metric, ascending=asc, kind="stable")   # best first
    best = data[metric].iloc[0]
    data = data.assign(best=np.where(data[metric] == best, "best", "other"))
    label = METRIC_LABELS[metric]
    bars = hv.Bars(data.iloc[::-1], kdims=["classifier"], vdims=[metric, "best"])
    return bars.opts(
        invert_axes=True, color="best", cmap={"best": "#59a14f", "other": "#4e79a7"},
        width=width, height=height, title=f"{label} ({'lower' if asc else 'higher'} is "
                                          f"better)",
        xlabel="", ylabel=label, tools=["hover"], show_legend=False, show_grid=True,
        backend="bokeh")


def ovr_auc_heatmap(ovr: pd.DataFrame, width: int = 560, height: int = 360):
    """One-vs-rest ROC area per classifier (rows) and class (columns)."""
    df = ovr.copy()
    df.index.name = df.index.name or "classifier"
    df.columns.name = df.columns.name or "class"
    return heatmap(df, title="one-vs-rest AUC per class", cmap="Greens", clim=(0.5, 1.0),
                   annotate=True, width=width, height=height, clabel="AUC")


def format_metric_table(table: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """Round the metrics and rename the columns for display (no computation)."""
    out = table.copy()
    for c in METRIC_LABELS:
        if c in out:
            out[c] = out[c].astype(float).round(digits)
    return out.rename(columns=METRIC_LABELS)
