"""Sizes and colours that make pictures readable: presentation (projector) sizes and
label colours chosen by contrast against the cell they sit on.

Contrast follows WCAG 2.x: the relative luminance of an sRGB colour is
``L = 0.2126 R + 0.7152 G + 0.0722 B`` over the linearised channels
(``c / 12.92`` below 0.04045, else ``((c + 0.055) / 1.055) ** 2.4``), and the contrast
ratio of two colours is ``(L_light + 0.05) / (L_dark + 0.05)``.  A label takes
whichever of the dark and the light text colour has the larger ratio with its cell.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["PRESENTATION_FONT_PX", "PRESENTATION_NAME_CHARS", "PRESENTATION_ARC_SCALE", "DARK_TEXT", "LIGHT_TEXT", "TABLE_CSS", "font_px", "presentation",
           "relative_luminance", "contrast_ratio", "text_color_for", "cell_colors", "label_colors"]

#: least font size (pixels) of every axis, tick, label and table text in presentation mode
PRESENTATION_FONT_PX = 18.0
#: longest name (characters) on a heat map's or a bar chart's axis in presentation mode
#: (longer names are cut with an ellipsis; the hover shows them whole)
PRESENTATION_NAME_CHARS = 16
#: arcs are this many times thicker in presentation mode
PRESENTATION_ARC_SCALE = 2.0
#: text colours a label chooses between
DARK_TEXT = "#111111"
LIGHT_TEXT = "#ffffff"


def font_px(base: float, presentation: bool) -> float:
    """The font size to use: ``base``, or at least :data:`PRESENTATION_FONT_PX` in
    presentation mode.

    Examples
    --------
    >>> font_px(12.0, False), font_px(12.0, True), font_px(24.0, True)
    (12.0, 18.0, 24.0)
    """
    return max(float(base), PRESENTATION_FONT_PX) if presentation else float(base)


def _rgb(color: str) -> np.ndarray:
    c = str(color).lstrip("#")
    if len(c) == 3:
        c = "".join(ch * 2 for ch in c)
    if len(c) not in (6, 8):
        raise ValueError(f"colour must be '#rgb' or '#rrggbb', got {color!r}")
    return np.array([int(c[i:i + 2], 16) for i in (0, 2, 4)], dtype=float) / 255.0


def relative_luminance(color: str) -> float:
    """WCAG relative luminance of a hex colour (0 black, 1 white).

    Examples
    --------
    >>> relative_luminance("#000000"), relative_luminance("#ffffff")
    (0.0, 1.0)
    """
    c = _rgb(color)
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(lin @ np.array([0.2126, 0.7152, 0.0722]))


def contrast_ratio(a: str, b: str) -> float:
    """WCAG contrast ratio of two hex colours (1 to 21).

    Examples
    --------
    >>> round(contrast_ratio("#000000", "#ffffff"), 1)
    21.0
    """
    la, lb = sorted((relative_luminance(a), relative_luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def text_color_for(background: str, dark: str = DARK_TEXT, light: str = LIGHT_TEXT) -> str:
    """The text colour, ``dark`` or ``light``, with the larger contrast on ``background``.

    Examples
    --------
    >>> text_color_for("#f7fbff"), text_color_for("#08306b")
    ('#111111', '#ffffff')
    """
    return dark if contrast_ratio(dark, background) >= contrast_ratio(light, background) else light


def cell_colors(values: Sequence[float], cmap: str, clim: tuple[float, float]) -> list[str]:
    """The colour of each value's cell: ``cmap`` (a HoloViews colour map name) mapped
    linearly over ``clim`` in 256 steps, as the heat map draws it; NaN gives ``""``.

    Examples
    --------
    >>> cell_colors([0.0, 1.0], "Blues", (0.0, 1.0))
    ['#f7fbff', '#08306b']
    """
    from holoviews.plotting.util import process_cmap

    palette = process_cmap(cmap, ncolors=256)
    lo, hi = float(clim[0]), float(clim[1])
    v = np.asarray(values, dtype=float)
    span = hi - lo if hi > lo else 1.0
    idx = np.clip(np.floor((v - lo) / span * 256), 0, 255)
    return ["" if np.isnan(x) else palette[int(i)] for x, i in zip(v, np.nan_to_num(idx))]


def label_colors(values: Sequence[float], cmap: str, clim: tuple[float, float]) -> list[str]:
    """The text colour of each cell label of a heat map: dark on pale cells, light on
    dark cells, by contrast against the cell's own colour (so a diverging map gets
    dark labels in its pale middle and light ones at both ends).

    Examples
    --------
    >>> label_colors([-1.0, 0.0, 1.0], "RdBu_r", (-1.0, 1.0))
    ['#ffffff', '#111111', '#ffffff']
    """
    return [DARK_TEXT if not c else text_color_for(c) for c in cell_colors(values, cmap, clim)]


#: CSS for tables in presentation mode (e.g. ``pn.widgets.Tabulator(..., stylesheets=[TABLE_CSS])``)
TABLE_CSS = (f".tabulator, .tabulator .tabulator-cell, .tabulator .tabulator-col-title "
             f"{{ font-size: {PRESENTATION_FONT_PX:g}px; }}")


def presentation(plot, font: float = PRESENTATION_FONT_PX):
    """Any HoloViews picture with projector fonts: title, axis labels, ticks, legend and
    colour bar at least ``font`` pixels, and text labels (e.g. heat-map cells) too.

    For pictures that lay out boxes from their labels (:func:`~bnexplore.viz.dag_plot`,
    :func:`~bnexplore.viz.heatmap` and their wrappers) pass ``presentation=True``
    instead, so the boxes and cells grow with the text and arcs thicken.

    Examples
    --------
    >>> import holoviews as hv
    >>> big = presentation(hv.Curve([(0, 1), (1, 2)]))
    >>> hv.Store.lookup_options("bokeh", big, "plot").kwargs["fontsize"]["xticks"]
    '18px'
    """
    import holoviews as hv

    from .graphs import _ensure_bokeh

    _ensure_bokeh()
    size = f"{float(font):g}px"
    sizes = {k: size for k in ("title", "labels", "xticks", "yticks", "legend", "clabel", "cticks",
                               "minor_xticks", "minor_yticks")}

    def bigger(el):
        if isinstance(el, hv.Labels):
            now = hv.Store.lookup_options("bokeh", el, "style").kwargs.get("text_font_size", "12px")
            try:
                px = float(str(now).replace("px", "")) * (4 / 3 if str(now).endswith("pt") else 1)
            except ValueError:
                px = 0.0
            el = el.opts(text_font_size=f"{max(px, float(font)):g}px", clone=True, backend="bokeh")
        return el.opts(fontsize=sizes, **legend(el), clone=True, backend="bokeh")

    def legend(el) -> dict:
        # a legend made from a colour mapping (grouped bars) ignores fontsize["legend"]
        allowed = hv.Store.options(backend="bokeh")[type(el).__name__].groups["plot"]
        if "legend_opts" not in allowed.allowed_keywords:
            return {}
        now = hv.Store.lookup_options("bokeh", el, "plot").kwargs.get("legend_opts") or {}
        return {"legend_opts": {**now, "label_text_font_size": size}}

    out = plot.map(bigger, [hv.Element])
    if isinstance(out, (hv.Overlay, hv.NdOverlay)):
        out = out.opts(fontsize=sizes, **legend(out), clone=True, backend="bokeh")
    return out
