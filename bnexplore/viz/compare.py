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

__all__ = ["roc_comparison", "metric_bars", "fold_spread_plot", "ovr_auc_heatmap",
           "format_metric_table", "format_comparison_table", "METRIC_LABELS", "LOWER_IS_BETTER", "RESULT_COLORS"]

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
#: colour of a classifier's mean and interval by its paired-test result.
RESULT_COLORS = {"win": "#1a9850", "draw": "#6b6b6b", "loss": "#d73027", "baseline": "#2166ac",
                 "": "#4e79a7"}


def roc_comparison(curves: Mapping[str, tuple[Sequence[float], Sequence[float], float]],
                   positive: object, width: int | None = 560, height: int = 480,
                   responsive: bool = False):
    """One-vs-rest ROC curves of several classifiers for the class ``positive``.

    Parameters
    ----------
    curves : mapping
        ``label -> (fpr, tpr, auc)`` as returned by
        :meth:`bnexplore.experiments.compare.CVResult.roc`.
    positive : label
        The class treated as positive (shown in the title).
    width, height : int
    responsive : bool
        Stretch to the container's width (``width`` is then ignored).

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
                    width=width or 560, height=height, responsive=responsive)
    items = list(plot)
    styled = []
    for i, el in enumerate(items[:-1]):
        styled.append(el.opts(line_dash=_DASHES[(i // len(PALETTE)) % len(_DASHES)],
                              backend="bokeh"))
    size = dict(responsive=True, height=height) if responsive else dict(width=width, height=height)
    return hv.Overlay([*styled, items[-1]]).opts(
        title=literal_title(f"ROC, class {positive!s} vs the rest"), **size,
        xlim=(0, 1), ylim=(0, 1.02), legend_position="bottom_right", show_grid=True,
        backend="bokeh")


def metric_bars(table: pd.DataFrame, metric: str, width: int = 560, height: int = 360):
    """Horizontal bars of one metric per classifier, best at the top.

    The value axis is fitted to the data (it does not start at 0), so that close
    values look different; :func:`fold_spread_plot` also shows the spread over folds.

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
    rng = _fitted_range(data[metric].to_numpy(float), pad=0.15)  # not from 0: show differences
    return bars.opts(ylim=rng,
        invert_axes=True, color="best", cmap={"best": "#59a14f", "other": "#4e79a7"},
        width=width, height=height, title=f"{label} ({'lower' if asc else 'higher'} is "
                                          f"better)",
        xlabel="", ylabel=label, tools=["hover"], show_legend=False, show_grid=True,
        backend="bokeh")


def _fitted_range(values: np.ndarray, pad: float = 0.08, bounds: tuple | None = None):
    """An axis range around the data (not from 0), padded, kept inside ``bounds``."""
    v = values[np.isfinite(values)]
    if not v.size:
        return None
    lo, hi = float(v.min()), float(v.max())
    span = hi - lo if hi > lo else max(abs(hi) * 0.05, 0.01)
    lo, hi = lo - pad * span, hi + pad * span
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return lo, hi


def fold_spread_plot(folds: pd.DataFrame, metric: str, tests: pd.DataFrame | None = None,
                     confidence: float = 0.95, width: int = 620, height: int | None = None,
                     responsive: bool = False):
    """Per-fold values of one metric per classifier, with the mean and its interval.

    Each classifier is a row (best mean on top): its folds are small points, the mean a
    large point with a ``confidence`` t-interval (mean +- t * sd / sqrt(K)). The value
    axis is fitted to the data, not started at 0, so that 0.969 and 0.994 look
    different. With ``tests`` (:func:`bnexplore.experiments.compare.paired_test`) the
    means are coloured by win / draw / loss against the baseline (:data:`RESULT_COLORS`)
    and the row names say the result.

    Parameters
    ----------
    folds : DataFrame
        Columns ``classifier``, ``fold`` and ``metric``
        (:meth:`bnexplore.experiments.compare.CVResult.fold_metrics`).
    metric : str
        One of :data:`METRIC_LABELS` present in ``folds``.
    tests : DataFrame, optional
        Paired-test table indexed by classifier with a ``result`` column.
    confidence : float, default 0.95
        Coverage of the interval drawn around each mean.

    Returns
    -------
    holoviews.Overlay

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"classifier": ["A"] * 3 + ["B"] * 3, "fold": [0, 1, 2] * 2,
    ...                   "auc": [0.96, 0.97, 0.98, 0.99, 0.995, 0.99]})
    >>> p = fold_spread_plot(f, "auc")
    """
    import holoviews as hv
    from scipy.special import stdtrit   # Student's t quantile

    _ensure_bokeh()
    if metric not in METRIC_LABELS:
        raise ValueError(f"metric must be one of {list(METRIC_LABELS)}, got {metric!r}")
    if not {"classifier", metric} <= set(folds.columns):
        raise ValueError(f"folds needs the columns 'classifier' and {metric!r}")
    data = folds[["classifier", metric]].dropna()
    if data.empty:
        raise ValueError(f"no classifier has a value for {metric!r}")
    data = data.assign(classifier=data["classifier"].astype(str))
    g = data.groupby("classifier", sort=False)[metric]
    summ = pd.DataFrame({"mean": g.mean(), "sd": g.std(ddof=1), "k": g.count()})
    tq = np.array([stdtrit(k - 1, 0.5 + confidence / 2) if k > 1 else np.nan for k in summ["k"]])
    summ["half"] = np.nan_to_num(tq * summ["sd"].to_numpy() / np.sqrt(summ["k"].to_numpy()))
    lower = metric in LOWER_IS_BETTER
    summ = summ.sort_values("mean", ascending=not lower, kind="stable")  # best first
    results = {}
    if tests is not None and "result" in tests:
        results = {str(k): str(v) for k, v in tests["result"].items()}
    names = {c: (f"{c} ({results[c]})" if results.get(c) else c) for c in summ.index}
    summ["row"] = [names[c] for c in summ.index]
    summ["result"] = [results.get(c, "") for c in summ.index]
    summ["color"] = [RESULT_COLORS.get(r, RESULT_COLORS[""]) for r in summ["result"]]
    summ["lo"], summ["hi"] = summ["mean"] - summ["half"], summ["mean"] + summ["half"]
    pts = data.assign(row=data["classifier"].map(names))
    rows = list(summ["row"])[::-1]   # drawn bottom-up: best on top
    label = METRIC_LABELS[metric]
    vdim = hv.Dimension(metric, label=label)
    kdim = hv.Dimension("row", label="classifier", values=rows)
    values = np.r_[pts[metric].to_numpy(float), summ["lo"].to_numpy(float), summ["hi"].to_numpy(float)]
    bounds = (0.0, 1.0) if metric in ("error", "auc", "squared_error") else (0.0, np.inf)
    rng = _fitted_range(values, bounds=bounds)
    whisk = hv.ErrorBars(summ.reset_index(drop=True)[["row", "mean", "half"]], kdims=[kdim],
                         vdims=[hv.Dimension("mean", label=label), "half"])
    means = hv.Scatter(summ.reset_index().rename(columns={"index": "classifier"})[
        ["row", "mean", "sd", "k", "result", "color"]], kdims=[kdim],
        vdims=[hv.Dimension("mean", label=label), "sd", "k", "result", "color"])
    folds_el = hv.Scatter(pts[["row", metric, "fold"]] if "fold" in pts else pts[["row", metric]],
                          kdims=[kdim], vdims=[hv.Dimension(metric, label=label)] +
                          (["fold"] if "fold" in pts else []))
    size = dict(responsive=True, height=height or max(220, 70 + 42 * len(rows))) if responsive \
        else dict(width=width, height=height or max(220, 70 + 42 * len(rows)))
    title = (f"{SHORT_LABELS.get(metric, label)} per fold, mean \u00b1 {confidence:.0%} CI "
             f"({'lower' if lower else 'higher'} is better)")
    out = (folds_el.opts(color="#9ecae1", size=6, alpha=0.9, tools=["hover"], backend="bokeh")
           * whisk.opts(line_width=2, color="#333333", backend="bokeh")
           * means.opts(color="color", size=11, line_color="#222222", tools=["hover"], backend="bokeh"))
    opts = dict(invert_axes=True, title=literal_title(title), show_grid=True, xlabel="",
                ylabel=label, fontsize={"yticks": "10pt", "xticks": "10pt"}, **size)
    if rng is not None:
        opts["ylim"] = rng
    return out.opts(**opts, backend="bokeh")


def ovr_auc_heatmap(ovr: pd.DataFrame, width: int = 560, height: int = 360,
                    presentation: bool = False):
    """One-vs-rest ROC area per classifier (rows) and class (columns); ``presentation``
    gives projector sizes (:func:`bnexplore.viz.heatmap`)."""
    df = ovr.copy()
    df.index.name = df.index.name or "classifier"
    df.columns.name = df.columns.name or "class"
    return heatmap(df, title="one-vs-rest AUC per class", cmap="Greens", clim=(0.5, 1.0),
                   annotate=True, width=width, height=height, clabel="AUC",
                   presentation=presentation)


def format_metric_table(table: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """Round the metrics and rename the columns for display (no computation)."""
    out = table.copy()
    for c in METRIC_LABELS:
        if c in out:
            out[c] = out[c].astype(float).round(digits)
    return out.rename(columns=METRIC_LABELS)


#: short column titles of the comparison table (the page has little room).
SHORT_LABELS = {"error": "error", "auc": "AUC", "log_loss": "log loss",
                "squared_error": "sq. error", "cal": "CAL", "delta": "delta"}


def format_comparison_table(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """A :func:`bnexplore.experiments.compare.metric_table` for display (no computation).

    The paired test comes first, as one column ``vs <baseline>`` (``"win (p 0.012)"``);
    metrics with a spread over folds read ``"0.973 \u00b1 0.017"``; column titles are
    short (:data:`SHORT_LABELS`) so that the table fits a narrow page. The long
    classifier names and the test settings are left to the CSV.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"classifier": ["A"], "label": ["a"], "auc": [0.9], "auc_sd": [0.01]})
    >>> format_comparison_table(t)["AUC"].iloc[0]
    '0.900 \u00b1 0.010'
    """
    out = pd.DataFrame({"classifier": table["classifier"]})
    if "result" in table and "baseline" in table and len(table):
        base = str(table["baseline"].dropna().iloc[0]) if table["baseline"].notna().any() else ""
        out[f"vs {base}"] = [
            "" if not isinstance(r, str) else (r if r == "baseline" or np.isnan(p) else f"{r} (p {p:.2g})")
            for r, p in zip(table["result"], table["p"].astype(float))]
    for c, label in SHORT_LABELS.items():
        if c not in table:
            continue
        vals = table[c].astype(float)
        if f"{c}_sd" in table:
            sd = table[f"{c}_sd"].astype(float)
            out[label] = [("" if np.isnan(v) else f"{v:.{digits}f}" + (
                "" if np.isnan(e) else f" \u00b1 {e:.{digits}f}")) for v, e in zip(vals, sd)]
        else:
            out[label] = vals.round(digits + 1)
    return out
