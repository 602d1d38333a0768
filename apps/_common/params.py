"""The range of every shared parameter, declared once, and the slider that shows it.

The ranges are bnexplore's own: :data:`bnexplore.experiments.compare.PARAM_RANGES`
(what the comparison of classifiers accepts). Every app builds its slider of ``k``
(max parents), ``n`` (parents in the summary network M*), ``alpha`` (exclusion penalty)
and ``w`` (ISMB queue width) with :func:`param_slider`, so a range is stated once.
"""
from __future__ import annotations

from typing import Any

import panel as pn
from bnexplore.experiments.compare import DEFAULT_PARAMS, PARAM_RANGES

from .views import widget

#: ``name -> (lowest, highest)`` of every shared parameter (inclusive).
PARAMETERS: dict[str, tuple[float, float]] = PARAM_RANGES
#: steps of the float parameters' sliders.
_STEPS = {"alpha": 0.5}


def param_slider(name: str, label: str, value: float | None = None, end: float | None = None,
                 **kwargs: Any) -> pn.widgets.Widget:
    """A slider over the declared range of parameter ``name`` (see :data:`PARAMETERS`).

    Parameters
    ----------
    name : {"k", "n", "alpha", "w"}
        The parameter.
    label : str
        The slider's label.
    value : number, optional
        Its first value (default: the comparison's default of ``name``).
    end : number, optional
        A smaller upper end where the data allow fewer (e.g. ``n`` below the number of
        columns); never above the declared range.
    **kwargs
        Other options of the widget.

    Examples
    --------
    >>> s = param_slider("k", "k (max parents)")
    >>> (s.start, s.end) == PARAMETERS["k"], s.value
    (True, 2)
    """
    lo, hi = PARAMETERS[name]
    hi = hi if end is None else min(hi, end)
    value = DEFAULT_PARAMS[name] if value is None else value
    value = min(max(value, lo), hi)
    if name in _STEPS:
        return widget(pn.widgets.FloatSlider, label, start=float(lo), end=float(hi),
                      step=_STEPS[name], value=float(value), **kwargs)
    return widget(pn.widgets.IntSlider, label, start=int(lo), end=int(hi), value=int(value),
                  **kwargs)
