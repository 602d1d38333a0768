"""Figures of a served page, drawn once per setting and updated in place.

On a served page a view is computed in a worker thread (:func:`~bnexplore.apps._base.guarded`);
its HoloViews pictures are drawn there too, to Bokeh models. A figure that each session
received anew at every move cost the event loop, which every session shares, the
attachment of 70-300 new models (Bokeh walks the document, Panel re-links the page),
and cost the worker a HoloViews render per session (0.4 s for a network of 17 nodes).
Here instead:

* A **snapshot** of a figure is the list of its Bokeh models in a fixed order (a
  depth-first walk of the properties that hold models, by name) with each model's plain
  property values (data columns, title, ranges, sizes, colours). Its **signature** is the
  structure: model types and where each model is referenced. A snapshot is made once per
  *setting* (app, view, the values of the view's parameters, the data's key) and shared
  by every session (:data:`SNAPSHOTS`).
* A session whose displayed figure has the signature of the new snapshot gets only the
  properties that differ (a **patch**, computed once per pair of snapshots), set through
  Bokeh's public ``Model.update`` on the event loop in one held message: a move costs a
  few ColumnDataSource and property changes, no new model.
* Any other case (the first display, another structure: a new layer, another number of
  panels) draws a new figure, as Panel would.

Pictures with widgets or streams (HoloMap, DynamicMap: Ask's node clicks) are left to
Panel, which updates them itself.

Glossary: *figure* the Bokeh root model of a rendered HoloViews plot; *setting key* the
tuple naming a view's parameter values; *shown* what a session displays at one place of
one view (its plot, its models in snapshot order, the snapshot they hold).
"""
from __future__ import annotations

import contextlib
import itertools
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Hashable

import numpy as np
import panel as pn
from bokeh.document import Document
from bokeh.model import Model

#: plain values a setting key may hold (anything else: not shared between sessions).
_KEY_TYPES = (str, int, float, bool, type(None))
_TOKENS = itertools.count(1)


# ------------------------------------------------------------------ snapshots
def _models_in(value: Any):
    """The models held by a property value, in order."""
    if isinstance(value, Model):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _models_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _models_in(v)


def _shape(value: Any, index: dict) -> Any:
    """``value`` with each model replaced by its place in the walk."""
    if isinstance(value, Model):
        return ("model", index[value.id])
    if isinstance(value, (list, tuple)):
        return tuple(_shape(v, index) for v in value)
    if isinstance(value, dict):
        return tuple((k, _shape(v, index)) for k, v in value.items())
    return ("value",)


def walk(root: Model) -> list[Model]:
    """The models of ``root`` depth first, properties by name: the same order for two
    figures drawn by the same code."""
    order: list[Model] = []
    seen: set[str] = set()
    stack = [root]
    while stack:
        m = stack.pop()
        if m.id in seen:
            continue
        seen.add(m.id)
        order.append(m)
        children = [c for name in sorted(type(m).properties_with_refs())
                    for c in _models_in(getattr(m, name))]
        stack.extend(reversed(children))
    return order


def _copy(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


@dataclass
class Snapshot:
    """A figure's structure (``signature``) and its models' plain values (``values``)."""

    signature: tuple
    values: list[dict]
    token: int = field(default_factory=lambda: next(_TOKENS))

    @classmethod
    def of(cls, root: Model) -> tuple["Snapshot", list[Model]]:
        """The snapshot of ``root`` and its models in snapshot order."""
        models = walk(root)
        index = {m.id: i for i, m in enumerate(models)}
        signature, values = [], []
        for m in models:
            refs = type(m).properties_with_refs()
            plain, shapes = {}, []
            for name in sorted(m.properties()):
                if name == "id" or m.lookup(name).readonly:
                    continue
                v = getattr(m, name)
                if name in refs and any(True for _ in _models_in(v)):
                    shapes.append((name, _shape(v, index)))
                else:
                    plain[name] = _copy(v)
            signature.append((type(m).__name__, tuple(shapes)))
            values.append(plain)
        return cls(tuple(signature), values), models


def _equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (a != a and b != b)          # NaN (an unset box) is NaN
    if isinstance(a, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        try:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        except TypeError:
            return a.tolist() == b.tolist()
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - values that do not compare: treated as changed
        return False


def patch(old: Snapshot, new: Snapshot) -> list[tuple[int, dict]]:
    """What changes ``old`` into ``new`` (same signature): ``(model place, {name: value})``."""
    out = []
    for i, (a, b) in enumerate(zip(old.values, new.values)):
        changed = {k: v for k, v in b.items() if not _equal(a.get(k), v)}
        if changed:
            out.append((i, changed))
    return out


class _LRU:
    """A small thread-safe least-recently-used map."""

    def __init__(self, size: int):
        self.size, self._d, self._lock = size, OrderedDict(), threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            if key in self._d:
                self._d.move_to_end(key)
                return self._d[key]
        return None

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)


#: snapshots per (setting key, place of the picture in the view), shared by sessions.
SNAPSHOTS = _LRU(512)
#: patches per (old snapshot token, new snapshot token).
PATCHES = _LRU(2048)


def _patch(old: Snapshot, new: Snapshot) -> list:
    key = (old.token, new.token)
    out = PATCHES.get(key)
    if out is None:
        out = patch(old, new)
        PATCHES.put(key, out)
    return out


# ------------------------------------------------------------------ sessions
def setting_key(app: Any, view: str, values: dict) -> tuple | None:
    """The key of a view's setting: the app's class, the view, its parameter values
    (the data by their key); None when a value is not a plain value (not shared)."""
    from .data import Data

    parts = []
    for name in sorted(values):
        v = values[name]
        if isinstance(v, Data):
            v = ("data", v.key)
        elif isinstance(v, tuple) and all(isinstance(x, _KEY_TYPES) for x in v):
            pass
        elif not isinstance(v, _KEY_TYPES):
            return None
        parts.append((name, v))
    return (type(app).__module__, type(app).__qualname__, view, tuple(parts))


@dataclass
class Shown:
    """What a session displays at one place of a view."""

    plot: Any               # the HoloViews plot the pane holds
    models: list            # its models in snapshot order
    snapshot: Snapshot      # the values they hold
    data: Any = None        # the key of the data it draws


@dataclass
class Update:
    """One picture of a view computed in the worker, to apply on the event loop."""

    place: int
    pane: pn.pane.HoloViews
    element: Any
    shown: Shown | None = None     # patched in place: what is shown, and the patch
    changes: list = field(default_factory=list)
    new: Shown | None = None       # drawn anew


def _drawable(obj: Any) -> bool:
    from holoviews.core.dimension import Dimensioned
    from holoviews.core.spaces import HoloMap

    return (isinstance(obj, Dimensioned) and not isinstance(obj, HoloMap)
            and not obj.traverse(lambda x: x, [HoloMap]))


def _render(element: Any, margin: Any) -> Any:
    import holoviews as hv

    # a document of its own: HoloViews would otherwise take Bokeh's current one and
    # set its theme
    return hv.renderer("bokeh").instance(mode="server").get_plot(element, doc=Document(),
                                                                  margin=margin)


def prepare(shown: dict, view: str, key: tuple | None, out: Any,
            patch: bool = True, data: Any = None) -> tuple[Any, list[Update], bool]:
    """In the worker: draw or patch each static picture of ``out``, a view's output.

    ``shown`` maps ``(view, place)`` to what the session displays; each pane of ``out``
    is given the plot to display (the shown one, to patch, or a new one). With
    ``patch=False`` (the output replaces the view's layout) every picture is drawn anew:
    a displayed figure never moves to another layout. Figures of other data (``data``,
    the data's key) are drawn anew too: a new data set is a new picture.

    A patched figure keeps the pane that shows it: it takes the new pane's place in
    ``out`` (Panel then finds nothing to update in place). Returns ``out``, the
    updates, and whether the view must be replaced rather than updated in place: when
    a displayed picture cannot be patched (another structure or data, a pane whose
    layout changes: :func:`_same_layout`), and then every picture of the view is drawn
    anew, so that no displayed pane moves into the new layout.
    """
    if not isinstance(out, pn.viewable.Viewable):
        return out, [], False
    # first pass: each picture's snapshot, and whether it can patch the figure shown
    found = []
    for place, pane in enumerate(out.select(pn.pane.HoloViews)):
        element = pane.object
        if not _drawable(element):
            continue
        k = None if key is None else (key, place)
        snap = SNAPSHOTS.get(k) if k is not None else None
        plot = models = None
        if snap is None:
            plot = _render(element, pane.margin)
            snap, models = Snapshot.of(plot.state)
            if k is not None:
                SNAPSHOTS.put(k, snap)
        old = shown.get((view, place)) if patch else None
        kept = getattr(old.plot, "pane", None) if old is not None else None
        patchable = (old is not None and old.data == data
                     and old.snapshot.signature == snap.signature
                     and _same_layout(pane, kept) and (pane is out or _holds(out, pane)))
        found.append((place, pane, element, snap, plot, models, old, kept, patchable))
    # a view with a displayed picture that cannot be patched is replaced, and then
    # every picture is drawn anew: a displayed figure never moves to another layout
    replace = any(old is not None and not patchable for *_, old, _, patchable in found)
    updates = []
    for place, pane, element, snap, plot, models, old, kept, patchable in found:
        if patchable and not replace:
            if pane is out:
                out = kept
            else:
                _swap(out, pane, kept)
            updates.append(Update(place, kept, element, shown=old,
                                  changes=_patch(old.snapshot, snap),
                                  new=Shown(old.plot, old.models, snap, data)))
            continue
        if plot is None:
            plot = _render(element, pane.margin)
            models = walk(plot.state)
        pane.object = plot
        updates.append(Update(place, pane, element, new=Shown(plot, models, snap, data)))
    return out, updates, replace


#: layout values Panel gives a picture pane from its figure, or the page its design.
_FROM_FIGURE = frozenset({"name", "width", "height", "sizing_mode", "design", "css_classes"})


def _same_layout(pane: Any, kept: Any) -> bool:
    """Whether a new picture pane has the layout of the pane shown (``kept``).

    Panel 1.9 passes a layout change of a picture pane on to the Bokeh pane inside it,
    which sets its layout overrides on the figure (the page's design among them: Bokeh
    refuses it) or copies the figure's style sheets back (Panel refuses those): the
    update then fails half done. So a picture is patched only under a pane of the same
    layout, and the view is replaced otherwise.
    """
    if not isinstance(kept, pn.pane.HoloViews):
        return False
    from panel.viewable import Layoutable

    return all(_equal(getattr(pane, p), getattr(kept, p))
               for p in Layoutable.param if p not in _FROM_FIGURE)


def _holds(layout: Any, pane: Any) -> bool:
    """Whether ``pane`` has a place in ``layout`` that :func:`_swap` can fill."""
    return isinstance(layout, pn.layout.ListLike) and any(
        obj is pane or _holds(obj, pane) for obj in layout.objects)


def _swap(layout: Any, pane: Any, shown: Any) -> None:
    """Put ``shown`` in ``pane``'s place inside ``layout`` (a place :func:`_holds` found)."""
    for i, obj in enumerate(layout.objects):
        if obj is pane:
            layout[i] = shown
            return
        if _holds(obj, pane):
            _swap(obj, pane, shown)
            return


def apply(shown: dict, view: str, updates: list[Update]) -> None:
    """On the event loop: set the patches on the displayed figures (one held message per
    document) and record what each place of ``view`` now shows."""
    places = set()
    for u in updates:
        places.add(u.place)
        if u.shown is not None:
            if shown.get((view, u.place)) is not u.shown:
                # another result of this view was applied since the worker looked:
                # draw this one anew instead of patching a figure no longer shown
                plot = _render(u.element, u.pane.margin)
                snap, models = Snapshot.of(plot.state)
                u.pane.object = plot
                u.new = Shown(plot, models, snap, u.new.data)
            elif u.changes:
                doc = u.shown.plot.state.document
                with pn.io.hold(doc) if doc is not None else contextlib.nullcontext():
                    for i, values in u.changes:
                        u.shown.models[i].update(**values)
        shown[(view, u.place)] = u.new
    for k in [k for k in shown if k[0] == view and k[1] not in places]:
        del shown[k]

