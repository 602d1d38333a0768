"""Pictures of ODE-mixture weights (Cerquides & Lopez de Mantaras): shaping only.

The weights come from the classifiers' ``weights_`` (:mod:`bnexplore.classifiers.mixtures`);
ROC curves use :func:`bnexplore.viz.curves.roc_plot`.

Examples
--------
>>> import pandas as pd
>>> w = pd.DataFrame({"AODE": [0.5, 0.5], "BMA": [0.9, 0.1]}, index=["a", "b"])
>>> p = weights_bars(w)
>>> path = pd.DataFrame({"n_train": [10, 10, 100, 100], "attribute": ["a", "b", "a", "b"],
...                      "weight": [0.6, 0.4, 0.99, 0.01]})
>>> q = bma_collapse_plot(path, current=100)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._style import PRESENTATION_NAME_CHARS
from .curves import PALETTE
from .graphs import _ensure_bokeh, literal_title

__all__ = ["weights_bars", "bma_collapse_plot", "weights_heatmap"]


def weights_bars(weights: pd.DataFrame, title: str = "Mixture weight of each super-parent",
                 width: int = 800, height: int = 380, responsive: bool = False,
                 legend_position: str = "right", presentation: bool = False):
    """Grouped bars: one group per super-parent attribute, one bar per method.

    Parameters
    ----------
    weights : DataFrame
        Rows = super-parent attributes, columns = methods (e.g. uniform, BMA, MAPLMD,
        MAPLMG); each column on the simplex.
    title : str
    width, height : int
    responsive : bool
        Width follows the container (``width`` ignored).
    legend_position : str
        Where the legend goes (``"bottom"`` leaves the width to the bars on a
        narrow window).
    presentation : bool
        Projector sizes (18 px text, :func:`bnexplore.viz.presentation`) with the bars
        lying down: one row per attribute, the height growing with them, names cut to
        :data:`~bnexplore.viz._style.PRESENTATION_NAME_CHARS` characters (the hover shows them whole), so
        that long names never crush the bars.

    Returns
    -------
    holoviews.Bars
    """
    import holoviews as hv

    _ensure_bokeh()
    if not isinstance(weights, pd.DataFrame) or weights.empty:
        raise ValueError("weights must be a non-empty DataFrame (rows attributes, columns "
                         "methods)")
    if not np.all(np.isfinite(weights.to_numpy(dtype=float))):
        raise ValueError("weights contain NaN or infinite values")
    long = (weights.rename_axis("attribute").reset_index()
            .melt(id_vars="attribute", var_name="method", value_name="weight"))
    long["attribute"] = long["attribute"].astype(str)
    methods = list(weights.columns)
    cmap = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(methods)}
    size = {"responsive": True} if responsive else {"width": width}
    top = float(long["weight"].max()) if len(long) else 1.0
    lying = {}
    if presentation:
        from .forests import short_labels

        names = short_labels(list(dict.fromkeys(long["attribute"])), PRESENTATION_NAME_CHARS)
        long = long.assign(name=long["attribute"], attribute=long["attribute"].map(names))
        height = max(height, 110 + 26 * len(names) + 40 * (legend_position == "bottom"))
        lying = dict(invert_axes=True, legend_opts={"ncols": 2})   # two columns fit 620 px
    else:
        long = long.assign(name=long["attribute"])
    bars = hv.Bars(long, ["attribute", "method"], ["weight", "name"]).opts(
        title=literal_title(title), height=height, color="method", cmap=cmap,
        xrotation=0 if presentation else 45, tools=["hover"], show_grid=True,
        ylim=(0, min(1.0, top) * 1.05 or 1.0),
        hover_tooltips=[("super-parent", "@name"), ("method", "@method"),
                        ("weight", "@weight{0.000}")],
        xlabel="super-parent attribute", ylabel="mixture weight",
        multi_level=False, show_legend=True, legend_position=legend_position,
        backend="bokeh", **size, **lying)
    if presentation:
        from ._style import presentation as projector

        bars = projector(bars)
    return bars


def bma_collapse_plot(path: pd.DataFrame, current: float | None = None,
                      title: str = "BMA root posterior as the sample grows",
                      width: int = 800, height: int = 380, top: int = 8,
                      responsive: bool = False, legend_position: str = "right",
                      presentation: bool = False):
    """Posterior weight of each root (BMAAODE) against the training size (log x axis).

    Parameters
    ----------
    path : DataFrame
        Long format with columns ``n_train``, ``attribute``, ``weight``.
    current : float, optional
        Training size marked with a vertical line (the app's slider).
    top : int
        Draw the ``top`` attributes with the largest final weight; the rest are summed
        into ``"others"``.
    responsive : bool
        Width follows the container (``width`` ignored).
    legend_position : str
        Where the legend goes, as in :func:`weights_bars`.
    presentation : bool
        Projector sizes (18 px text) with the legend below in three columns, names cut
        to :data:`~bnexplore.viz._style.PRESENTATION_NAME_CHARS` characters (the hover shows them whole).

    Returns
    -------
    holoviews.Overlay
    """
    import holoviews as hv

    _ensure_bokeh()
    need = {"n_train", "attribute", "weight"}
    if not isinstance(path, pd.DataFrame) or not need <= set(path.columns):
        raise ValueError(f"path must be a DataFrame with columns {sorted(need)}")
    wide = path.pivot_table(index="n_train", columns="attribute", values="weight",
                            aggfunc="mean").sort_index()
    order = wide.iloc[-1].sort_values(ascending=False).index
    keep = list(order[:top])
    if len(order) > top:
        wide["others"] = wide[list(order[top:])].sum(axis=1)
        keep.append("others")
    curves = []
    xs = wide.index.to_numpy(float)
    shown = {a: str(a) for a in keep}
    if presentation:
        from .forests import short_labels

        shown = short_labels(keep, PRESENTATION_NAME_CHARS)
        legend_position = "bottom"
    for i, a in enumerate(keep):
        col = PALETTE[i % len(PALETTE)]
        frame = pd.DataFrame({"training_size": xs, "weight": wide[a].to_numpy(float),
                              "super_parent": str(a)})
        curves.append(hv.Curve(frame, "training_size", ["weight", "super_parent"],
                               label=shown[a])
                      .opts(color=col, line_width=2, backend="bokeh"))
        curves.append(hv.Scatter(frame, "training_size", ["weight", "super_parent"],
                                 label=shown[a])
                      .opts(color=col, size=5, tools=["hover"],
                            hover_tooltips=[("super-parent", "@super_parent"),
                                            ("training rows", "@training_size{0}"),
                                            ("weight", "@weight{0.000}")], backend="bokeh"))
    if current is not None:
        curves.append(hv.VLine(float(current)).opts(color="#555555", line_dash="dashed",
                                                    backend="bokeh"))
    ticks = [t for t in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000)
             if xs.min() * 0.9 <= t <= xs.max() * 1.1]
    size = {"responsive": True} if responsive else {"width": width}
    out = hv.Overlay(curves).opts(title=literal_title(title), height=height, logx=True, xticks=ticks or None,
                                  xlabel="training rows (log scale)",
                                  ylabel="BMA posterior weight", ylim=(0, 1.02), show_grid=True,
                                  legend_position=legend_position, backend="bokeh", **size)
    if presentation:
        from ._style import presentation as projector

        out = projector(out.opts(legend_cols=3, height=height + 120, backend="bokeh"))
    return out


def weights_heatmap(weights: pd.DataFrame, title: str = "Weights", cmap: str = "Blues"):
    """The same weights as a heat map (methods x attributes); see :func:`weights_bars`."""
    from .curves import heatmap

    df = weights.T.copy()
    df.index.name, df.columns.name = "method", "attribute"
    return heatmap(df, title=title, cmap=cmap, clim=(0, float(np.nanmax(df.to_numpy()))))
