"""Plot builders for ISMB (Visweswaran & Cooper): estimate traces (Figure 8) and blankets.

Pure shaping functions over :meth:`bnexplore.ismb.ISMBResult.trace` tables and
:class:`~bnexplore.ismb.MarkovBlanket` structures; no search happens here.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

__all__ = ["trace_plot", "trace_pair", "blanket_plot", "blanket_grid", "estimates_bars"]

ESTIMATE_COLOR = "black"
SCORE_COLOR = "#8a8a8a"
BOUNDARY_COLOR = "#d62728"


def _check_trace(trace: pd.DataFrame, label: str) -> str:
    if not isinstance(trace, pd.DataFrame):
        raise TypeError(f"trace must be a DataFrame (ISMBResult.trace()), got {type(trace).__name__}")
    for col in ("step", "phase", "log_score"):
        if col not in trace:
            raise ValueError(f"trace lacks the column {col!r}: pass ISMBResult.trace()")
    col = f"P({label})"
    if col not in trace:
        opts = [c[2:-1] for c in trace.columns if c.startswith("P(")]
        raise ValueError(f"no estimate column for class {label!r}; classes are {opts}")
    return col


def trace_plot(trace: pd.DataFrame, label, title: str = "", width: int = 480,
               height: int = 220):
    """Figure 8 panel: running estimate P(Z = label | x, D) and model log scores.

    The estimate (black, top) and each model's log posterior score (grey, bottom) are
    plotted against the number of models averaged; a red line marks the end of phase 1.

    Returns
    -------
    holoviews.Layout (two rows sharing the x axis)

    Examples
    --------
    >>> import pandas as pd
    >>> tr = pd.DataFrame({"step": [1, 2, 3], "phase": [1, 1, 2], "log_score": [-9., -8., -8.5],
    ...                    "P(T)": [0.4, 0.6, 0.55]})
    >>> type(trace_plot(tr, "T")).__name__
    'Layout'
    """
    import holoviews as hv

    from .graphs import _ensure_bokeh, literal_title

    _ensure_bokeh()
    col = _check_trace(trace, label)
    df = pd.DataFrame({"models": trace["step"].to_numpy(), "estimate": trace[col].to_numpy(),
                       "log_score": trace["log_score"].to_numpy(),
                       "phase": trace["phase"].to_numpy()})
    n1 = int((df["phase"] == 1).sum())
    xdim = hv.Dimension("models", label="models averaged (in the order added)")
    est = hv.Curve(df, xdim, hv.Dimension("estimate", label=f"P({label} | x, D)"),
                   label="estimate").opts(
        color=ESTIMATE_COLOR, line_width=2, width=width, height=height, ylim=(0, 1),
        title=literal_title(title), xaxis=None)
    pts = hv.Scatter(df, xdim, ["estimate", "phase", "log_score"]).opts(
        color=ESTIMATE_COLOR, size=4, tools=["hover"],
        hover_tooltips=[("models", "@models"), ("phase", "@phase"),
                        ("estimate", "@estimate{0.000}"), ("log score", "@log_score{0.00}")])
    score = hv.Curve(df, xdim, hv.Dimension("log_score", label="model log score"),
                     label="log score").opts(
        color=SCORE_COLOR, line_width=2, width=width, height=int(height * 0.85), title="",
        tools=["hover"], hover_tooltips=[("models", "@models"), ("log score", "@log_score{0.00}")],
        yticks=4)
    vl = hv.VLine(n1 + 0.5).opts(color=BOUNDARY_COLOR, line_dash="dashed", line_width=1.5)
    top = (est * pts * vl).opts(show_legend=False, title=literal_title(title))
    bottom = (score * vl).opts(show_legend=False, title="")
    return (top + bottom).cols(1).opts(shared_axes=True)


def trace_pair(ismb_trace: pd.DataFrame, nismb_trace: pd.DataFrame, label, width: int = 460,
               height: int = 220):
    """ISMB (left) and NISMB (right) traces side by side, as one row of Figure 8."""
    import holoviews as hv

    left = trace_plot(ismb_trace, label, title="ISMB (instance-specific)", width=width,
                      height=height)
    right = trace_plot(nismb_trace, label, title="NISMB (non-instance-specific)", width=width,
                       height=height)
    return hv.Layout([left[0], right[0], left[1], right[1]]).cols(2)


def blanket_plot(mb, weight: float | None = None, rank: int = 1, size: int = 260,
                 presentation: bool = False):
    """A small DAG drawing of one Markov blanket, the target highlighted, titled with its
    rank (and its weight).

    Parameters
    ----------
    mb : MarkovBlanket
    weight : float, optional
        Shown in the title (e.g. the posterior weight of the model within R).
    rank : int
        The number in the title (``#rank``).
    size : int
        Width in pixels; the height grows with the blanket's layers.
    presentation : bool
        Projector sizes (labels and title at least 18 px, thicker arcs), as in
        :func:`bnexplore.viz.dag_plot`.

    Examples
    --------
    >>> from bnexplore.ismb import MarkovBlanket
    >>> mb = MarkovBlanket(["Z", "A", "B"], "Z", {"Z": ["A"], "B": ["Z"]})
    >>> type(blanket_plot(mb, 0.25, rank=2)).__name__
    'Overlay'
    """
    from .graphs import dag_plot, layered_layout

    title = f"#{rank}" + (f"   weight in R {weight:.3f}" if weight is not None else "")
    g = mb.to_networkx()
    # room for the layers of a tall blanket (a chain of five needs more than 250 px)
    depth = len(set(y for _, y in layered_layout(g).values())) if g.number_of_nodes() else 1
    row = 62 + (12 if presentation else 0)
    return dag_plot(g, highlight=[mb.target], title=title, width=size,
                    height=max(size, 40 + row * depth), presentation=presentation)


def blanket_grid(models: Sequence, weights: Sequence[float] | None = None, cols: int = 3,
                 size: int = 260):
    """Small DAG drawings of Markov blankets, the target highlighted (:func:`blanket_plot`
    for each, ranked from 1).

    Parameters
    ----------
    models : sequence of MarkovBlanket
    weights : sequence of float, optional
        Shown in the titles (e.g. the posterior weight of each model within R).
    """
    import holoviews as hv

    if not len(models):
        raise ValueError("no models to draw")
    if weights is not None and len(weights) != len(models):
        raise ValueError(f"{len(weights)} weights for {len(models)} models")
    plots = [blanket_plot(mb, None if weights is None else weights[i], rank=i + 1, size=size)
             for i, mb in enumerate(models)]
    return hv.Layout(plots).cols(cols).opts(shared_axes=False)


def estimates_bars(per_case: pd.DataFrame, methods: Sequence[str] = ("complete", "ismb", "ms", "nismb"),
                   width: int = 600, height: int = 260):
    """Grouped bars of P(Z = T) per test case and method (synthetic domain, Table 3)."""
    import holoviews as hv

    from .graphs import _ensure_bokeh

    _ensure_bokeh()
    missing = [m for m in methods if m not in per_case]
    if missing:
        raise ValueError(f"per_case lacks the method columns {missing}")
    long = per_case.melt(id_vars=["case"], value_vars=list(methods), var_name="method",
                         value_name="P(Z=T)")
    long["case"] = long["case"].astype(str)
    return hv.Bars(long, ["case", "method"], "P(Z=T)").opts(
        width=width, height=height, ylim=(0, 1), tools=["hover"], xlabel="test case",
        title="P(Z = T | x, D) per test case")
