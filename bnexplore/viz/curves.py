"""ROC curves and heat maps (arc posteriors, association matrices) as HoloViews elements.

Only shaping happens here: the curves, AUCs and matrices are computed elsewhere
(:mod:`bnexplore.metrics`, :mod:`bnexplore.averaging`, ...).

Examples
--------
>>> import pandas as pd
>>> from bnexplore.viz import heatmap, roc_plot
>>> p = roc_plot({"NB": ([0, 0.2, 1], [0, 0.7, 1], 0.75)})
>>> h = heatmap(pd.DataFrame([[0, 0.8], [0.1, 0]], index=list("AB"), columns=list("AB")))
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ._style import PRESENTATION_NAME_CHARS, font_px, label_colors
from .graphs import _ensure_bokeh, literal_title

__all__ = ["roc_plot", "heatmap", "PALETTE"]

#: colours used for successive curves (Tableau 10).
PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
           "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]


def roc_plot(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float], float]],
    title: str = "ROC curves",
    width: int = 500,
    height: int = 450,
    responsive: bool = False,
):
    """Overlay ROC curves, each labelled with its AUC, over the chance diagonal.

    Parameters
    ----------
    curves : mapping
        ``label -> (fpr, tpr, auc)``: false- and true-positive rates of equal length
        (e.g. from :func:`sklearn.metrics.roc_curve`) and the area under the curve.
    title : str
        Plot title.
    width, height : int
        Plot size in pixels.
    responsive : bool
        Stretch to the container's width (``width`` is ignored; no fixed width is set,
        so HoloViews does not warn that it cannot be responsive).

    Returns
    -------
    holoviews.Overlay
        One ``hv.Curve`` per label (legend ``"label (AUC 0.912)"``) plus the diagonal.

    Raises
    ------
    ValueError
        If a curve's ``fpr`` and ``tpr`` differ in length or leave [0, 1].

    Examples
    --------
    >>> p = roc_plot({"TAN": ([0.0, 0.1, 1.0], [0.0, 0.8, 1.0], 0.85)})
    >>> len(p)
    2
    """
    import holoviews as hv

    _ensure_bokeh()
    diag = hv.Curve(([0.0, 1.0], [0.0, 1.0]), "False positive rate", "True positive rate",
                    label="chance").opts(color="#999999", line_dash="dashed", line_width=1,
                                         backend="bokeh")
    elements = []
    for i, (label, value) in enumerate(curves.items()):
        try:
            fpr, tpr, auc = value
        except (TypeError, ValueError):
            raise ValueError(f"curve {label!r} must be a tuple (fpr, tpr, auc), got {value!r}")
        fpr = np.asarray(fpr, dtype=float)
        tpr = np.asarray(tpr, dtype=float)
        if fpr.shape != tpr.shape or fpr.ndim != 1:
            raise ValueError(f"curve {label!r}: fpr and tpr must be 1-d of equal length, "
                             f"got shapes {fpr.shape} and {tpr.shape}")
        if fpr.size and (np.nanmin(np.r_[fpr, tpr]) < 0 or np.nanmax(np.r_[fpr, tpr]) > 1):
            raise ValueError(f"curve {label!r}: rates must lie in [0, 1]")
        name = f"{label} (AUC {float(auc):.3f})"
        elements.append(
            hv.Curve((fpr, tpr), "False positive rate", "True positive rate", label=name)
            .opts(color=PALETTE[i % len(PALETTE)], line_width=2, tools=["hover"],
                  backend="bokeh")
        )
    size = dict(responsive=True, height=height) if responsive else dict(width=width, height=height)
    return hv.Overlay([*elements, diag]).opts(
        title=literal_title(title), **size, xlim=(0, 1), ylim=(0, 1.02),
        legend_position="bottom_right", show_grid=True, backend="bokeh",
    )


def _cluster_order(values: pd.DataFrame) -> list:
    """Rows of a square matrix in the leaf order of an average-linkage clustering.

    Two variables are close when the arcs between them are strong in either
    direction: the similarity is ``max(M[i, j], M[j, i])`` (NaN counts as 0), the
    distance ``1 - similarity / max``; the leaves are put in the optimal order
    (scipy's ``optimal_leaf_ordering``) so that neighbours are similar.
    """
    from scipy.cluster.hierarchy import leaves_list, linkage, optimal_leaf_ordering
    from scipy.spatial.distance import squareform

    m = np.nan_to_num(values.to_numpy(dtype=float), nan=0.0)
    if m.shape[0] < 3:
        return list(values.index)
    sim = np.maximum(m, m.T)
    top = sim.max() or 1.0
    dist = 1.0 - sim / top
    np.fill_diagonal(dist, 0.0)
    z = linkage(squareform(dist, checks=False), method="average")
    z = optimal_leaf_ordering(z, squareform(dist, checks=False))
    return [values.index[i] for i in leaves_list(z)]


def heatmap(
    df: pd.DataFrame,
    title: str = "",
    cmap: str = "Blues",
    clim: tuple[float, float] | None = None,
    annotate: bool | None = None,
    width: int = 600,
    height: int = 550,
    order: Sequence | str | None = None,
    clabel: str = "value",
    cell: int | None = None,
    presentation: bool = False,
    threshold: float | None = None,
    colorbar_position: str = "right",
):
    """Draw a matrix such as arc posteriors (rows parent, columns child) as a heat map.

    Rows and columns are kept as in ``df`` unless ``order`` is given; the first row
    is drawn at the top. Missing values (NaN, e.g. the diagonal) are left blank. The
    colour bar carries the title ``clabel``. A matrix of more than 15 columns gets
    vertical column labels, a smaller font and cells of at least ``cell`` pixels, so
    that every name stays readable (the picture grows beyond ``width``/``height`` if
    it must).

    Parameters
    ----------
    df : pandas.DataFrame
        Numeric matrix. ``df.index.name`` / ``df.columns.name`` name the axes
        (defaults ``"parent"`` and ``"child"``).
    title : str
        Plot title.
    cmap : str
        Any colour map name HoloViews knows (``"Blues"``, ``"viridis"``, ...).
    clim : (float, float), optional
        Colour limits; default is the data range.
    annotate : bool, optional
        Print the values in the cells; default only when the matrix is at most 15 x 15.
    width, height : int
        Plot size in pixels (the frame grows when the cells need more room).
    order : sequence or "cluster", optional
        For a square matrix with the same names on both axes: a sequence of names puts
        rows and columns in that order (names not in it follow, in their order);
        ``"cluster"`` orders both by an average-linkage clustering of
        ``max(M, M.T)`` so that strongly linked variables sit together.
    clabel : str, default "value"
        Title of the colour bar.
    cell : int, optional
        Least cell size in pixels; default 14 beyond 15 rows or columns.
    presentation : bool, default False
        Projector sizes: every tick, title and cell label at least 18 px, names cut to
        :data:`~bnexplore.viz._style.PRESENTATION_NAME_CHARS` characters, and cells large enough to hold
        their labels; cells that round to 0.00 keep their colour
        but lose their label, and labels drop the leading zero (``.26``, ``-.41``).
    threshold : float, optional
        Leave blank the cells whose absolute value is below it (e.g. arc posteriors
        under 0.2), to thin a dense matrix.
    colorbar_position : {"right", "bottom"}, default "right"
        Where the colour bar goes: "bottom" (with the toolbar above) leaves the width
        to the cells and the row names (a narrow window).

    Returns
    -------
    holoviews.HeatMap or holoviews.Overlay
        The heat map, overlaid with value labels when ``annotate``.

    Examples
    --------
    >>> import pandas as pd
    >>> m = pd.DataFrame([[None, 0.9], [0.1, None]], index=["A", "B"], columns=["A", "B"])
    >>> h = heatmap(m, title="arc posteriors", order=["B", "A"], clabel="P(arc)")
    >>> [str(v) for v in h.dimension_values(1, expanded=False)]
    ['B', 'A']
    """
    import holoviews as hv

    _ensure_bokeh()
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if colorbar_position not in ("right", "bottom"):
        raise ValueError(f"colorbar_position must be 'right' or 'bottom', "
                         f"got {colorbar_position!r}")
    values = df.apply(pd.to_numeric, errors="coerce")
    if values.notna().sum().sum() < df.notna().sum().sum():
        raise ValueError("heatmap needs a numeric matrix: some entries are not numbers")
    if threshold is not None:
        threshold = float(threshold)
        if not np.isfinite(threshold) or threshold < 0:
            raise ValueError(f"threshold must be a non-negative number, got {threshold!r}")
        values = values.where(values.abs() >= threshold)
    if order is not None:
        if list(df.index) != list(df.columns) and set(df.index) != set(df.columns):
            raise ValueError("order needs a square matrix with the same names on both axes")
        if isinstance(order, str):
            if order != "cluster":
                raise ValueError(f"order must be a sequence of names or 'cluster', got {order!r}")
            names = _cluster_order(values.reindex(index=list(df.index), columns=list(df.index)))
        else:
            given = [n for n in order if n in set(df.index)]
            names = given + [n for n in df.index if n not in set(given)]
        df = df.reindex(index=names, columns=names)
        values = values.reindex(index=names, columns=names)
    rname = str(df.index.name) if df.index.name is not None else "parent"
    cname = str(df.columns.name) if df.columns.name is not None else "child"
    if rname == cname:
        cname = f"{cname} "
    rows = [str(r) for r in df.index]
    cols = [str(c) for c in df.columns]
    if presentation:  # long names would take the room of the cells: cut (with an ellipsis)
        from .forests import short_labels

        cut = short_labels(dict.fromkeys(rows + cols), PRESENTATION_NAME_CHARS)
        rows, cols = [cut[r] for r in rows], [cut[c] for c in cols]
    long = pd.DataFrame({
        cname: np.tile(cols, len(rows)),
        rname: np.repeat(rows, len(cols)),
        "value": values.to_numpy(dtype=float).ravel() if values.size else np.array([]),
    })
    hm = hv.HeatMap(long, kdims=[cname, rname], vdims=["value"]).redim.values(
        **{cname: cols, rname: rows[::-1]} if rows and cols else {}
    )
    big = max(len(rows), len(cols)) > 15
    base_tick = 12.0 if big else 13.0
    tick_px = font_px(base_tick, presentation)
    label_px = font_px(11.0, presentation)
    cell_px = int(cell if cell is not None else (14 if big else 0))
    if annotate is None:
        annotate = 0 < len(rows) <= 15 and 0 < len(cols) <= 15
    if presentation:  # a cell holds its ".26" label, or else one line of tick text
        cell_px = max(cell_px, int(2.6 * label_px if annotate else 1.3 * tick_px))
    font = f"{tick_px:g}px"
    longest = max((len(s) for s in rows), default=1)
    char_px = (7.0 if big else 8.0) * tick_px / base_tick  # room per character of a name
    # room for the row names on the left and the colour bar on the right (or below)
    below = colorbar_position == "bottom"
    side_px = int(min(longest, 40) * char_px) + (30 if below else 110)
    top_px = (int(min(max((len(s) for s in cols), default=1), 40) * (char_px if big else 0))
              + 70 + (3 * tick_px if below else 0))
    frame_w = max(width - side_px, cell_px * len(cols), 120)
    frame_h = max(height - top_px, cell_px * len(rows), 120)
    opts = dict(cmap=cmap, colorbar=True, colorbar_position=colorbar_position,
                # a narrow layout: the toolbar goes above too
                tools=["hover"], xrotation=90 if big else 45, toolbar="above" if below else "right",
                frame_width=int(frame_w), frame_height=int(frame_h),
                title=literal_title(title), clipping_colors={"NaN": "#f4f4f4"},
                xaxis="top" if big else "bottom", clabel=clabel,
                fontsize={"xticks": font, "yticks": font, "title": f"{font_px(14.0, presentation):g}px",
                          "clabel": font, "cticks": font, "xlabel": font, "ylabel": font}, backend="bokeh")
    if clim is not None:
        opts["clim"] = tuple(clim)
    hm = hm.opts(**opts)
    if not annotate:
        return hm
    lab = long.dropna(subset=["value"]).assign(text=lambda d: d["value"].map("{:.2f}".format))
    if presentation:  # from the back of the room only the cells that say something,
        # without the leading zero (".26", "-.41") so that a label fits its cell
        lab = lab[~lab["text"].isin(["0.00", "-0.00"])]
        lab["text"] = lab["text"].str.replace(r"^(-?)0\.", r"\1.", regex=True)
    lo, hi = clim if clim is not None else (lab["value"].min(), lab["value"].max())
    # dark text on pale cells, light text on dark ones, by contrast with the cell's colour
    lab["text_color"] = label_colors(lab["value"].to_numpy(), cmap, (lo, hi)) if len(lab) else []
    labels = hv.Labels(lab, kdims=[cname, rname], vdims=["text", "text_color"]).opts(
        text_font_size=f"{label_px:g}px", text_color="text_color", backend="bokeh")
    return (hm * labels).opts(title=literal_title(title), frame_width=int(frame_w),
                              frame_height=int(frame_h), toolbar=opts["toolbar"],
                              backend="bokeh")
