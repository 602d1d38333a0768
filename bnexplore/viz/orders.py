"""Pictures of averaging over orders (exact DP and order MCMC): shaping only.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from bnexplore.viz.orders import log_score_traces, posterior_difference_heatmap, arc_error_bars
>>> diff = pd.DataFrame([[0, 0.3], [-0.2, 0]], index=["A", "B"], columns=["A", "B"])
>>> h = posterior_difference_heatmap(diff)
>>> t = log_score_traces(np.array([[-10., -9.5, -9.4], [-12., -10., -9.6]]), thin=10)
>>> summary = pd.DataFrame({"parent": ["A"], "child": ["B"], "posterior": [0.7], "stderr": [0.05]})
>>> b = arc_error_bars(summary)
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .curves import heatmap

__all__ = ["posterior_difference_heatmap", "log_score_traces", "arc_error_bars"]

CHAIN_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


def posterior_difference_heatmap(diff: pd.DataFrame, title: str = "All orders minus one order",
                                 width: int = 620, height: int = 560, order: Sequence | None = None,
                                 threshold: float | None = None, presentation: bool = False,
                                 posteriors: Sequence[pd.DataFrame] | None = None):
    """Heat map of a difference of two arc-posterior matrices, colours fixed to [-1, 1]
    (red: more probable over all orders, blue: more probable under the fixed order).

    ``order``: rows and columns in this order (give the printed greedy order, so the
    picture reads along it); ``threshold`` leaves blank the differences smaller than it
    in absolute value, or, when the two arc-posterior matrices are given as
    ``posteriors``, the arcs whose posterior is below it in both (so the difference map
    is thinned as the posterior maps beside it are); ``presentation`` gives projector
    sizes. Cell labels are dark on the pale middle of the colour map and light at both
    ends.

    Examples
    --------
    >>> import pandas as pd
    >>> a = pd.DataFrame([[0, 0.9], [0.1, 0]], index=list("AB"), columns=list("AB"))
    >>> b = pd.DataFrame([[0, 0.6], [0.2, 0]], index=list("AB"), columns=list("AB"))
    >>> h = posterior_difference_heatmap(a - b, threshold=0.5, posteriors=(a, b))
    >>> h.get(0).data["value"].round(2).tolist()
    [nan, 0.3, nan, nan]
    """
    if posteriors is not None and threshold is not None:
        threshold = float(threshold)
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be an arc posterior in [0, 1], got {threshold!r}")
        strong = np.maximum.reduce([p.reindex(index=diff.index, columns=diff.columns)
                                    .fillna(0.0).to_numpy(dtype=float) for p in posteriors])
        diff, threshold = diff.where(strong >= threshold), None
    return heatmap(diff, title=title, cmap="RdBu_r", clim=(-1.0, 1.0), width=width, height=height,
                   clabel="difference in P(arc)", order=order, threshold=threshold,
                   presentation=presentation)


def log_score_traces(traces: np.ndarray, thin: int = 1, burn_in: int = 0,
                     title: str = "Log order score of each chain", width: int = 620, height: int = 300):
    """One line per chain: the log order score ``log P(D | <)`` against the iteration.

    Parameters
    ----------
    traces : array (n_chains, n_draws)
        As :attr:`bnexplore.averaging.OrderMCMC.traces`.
    thin : int
        Iterations between draws (the x axis is in iterations).
    burn_in : int
        Iterations left out of the statistics: shaded grey.
    """
    import holoviews as hv

    from .graphs import _ensure_bokeh, literal_title

    _ensure_bokeh()
    traces = np.asarray(traces, dtype=float)
    if traces.ndim != 2:
        raise ValueError(f"traces must be (n_chains, n_draws), got shape {traces.shape}")
    x = (np.arange(traces.shape[1]) + 1) * int(thin)
    xdim = hv.Dimension("iteration")
    ydim = hv.Dimension("log_score", label="log P(D | order)")
    curves = [hv.Curve((x, row), xdim, ydim, label=f"chain {c + 1}").opts(
        color=CHAIN_COLORS[c % len(CHAIN_COLORS)], line_width=1.5, tools=["hover"])
        for c, row in enumerate(traces)]
    overlay = hv.Overlay(curves)
    if burn_in > 0:
        overlay = overlay * hv.VSpan(0, burn_in).opts(color="#cccccc", alpha=0.4)
    return overlay.opts(width=width, height=height, title=literal_title(title), legend_position="bottom_right")


def arc_error_bars(summary: pd.DataFrame, top: int = 20, title: str = "Most probable arcs, +- 2 standard errors",
                   width: int = 620, height: int = 420):
    """The ``top`` most probable arcs of :meth:`bnexplore.averaging.OrderMCMC.summary`,
    each with an error bar of two Monte Carlo standard errors."""
    import holoviews as hv

    from .graphs import _ensure_bokeh, literal_title

    _ensure_bokeh()
    for col in ("parent", "child", "posterior", "stderr"):
        if col not in summary:
            raise ValueError(f"summary lacks the column {col!r}: pass OrderMCMC.summary()")
    df = summary.sort_values("posterior", ascending=False, kind="stable").head(int(top))
    arcs = [f"{p} \u2192 {c}" for p, c in zip(df["parent"].astype(str), df["child"].astype(str))]
    frame = pd.DataFrame({"arc": arcs, "posterior": df["posterior"].to_numpy(),
                          "err": 2 * df["stderr"].to_numpy()})[::-1]
    pts = hv.Scatter(frame, "arc", ["posterior", "err"]).opts(size=7, color="#1f77b4", tools=["hover"])
    bars = hv.ErrorBars(frame, "arc", ["posterior", "err"]).opts(color="#1f77b4", line_width=1.5)
    return (bars * pts).opts(invert_axes=True, width=width, height=height, ylim=(0, 1.05),
                             title=literal_title(title))
