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
* A session's first figure of a setting already drawn (by any session) is **built**
  from the snapshot: its models made from their values with Bokeh's constructors and
  shown in a Bokeh pane laid out as the HoloViews pane would lay it out, 4-8 times
  cheaper than a HoloViews drawing (which is mostly HoloViews' own work: ranges, graph
  edge paths). Opening a page is then mostly Panel's and Bokeh's work. Pictures that
  a stream listens to keep their drawing (a copy would lose its Python callbacks).
* Any other case (a setting never drawn, another structure: a new layer, another
  number of panels) draws a new figure, as Panel would.

Pictures with widgets or streams (HoloMap, DynamicMap: Ask's node clicks) are left to
Panel, which updates them itself.

Glossary: *figure* the Bokeh root model of a rendered HoloViews plot; *setting key* the
tuple naming a view's parameter values; *shown* what a session displays at one place of
one view (its plot, its models in snapshot order, the snapshot they hold).
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
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
def _fields(value: Any) -> dict | None:
    """The fields of a data spec's value (``Field``, ``Value``, ``Expr``: a colour
    ``field("z", transform=mapper)`` holds a model), else None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return None


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
    elif (fields := _fields(value)) is not None:
        yield from _models_in(fields)


def _shape(value: Any, index: dict) -> Any:
    """``value`` with each model replaced by its place in the walk."""
    if isinstance(value, Model):
        return ("model", index[value.id])
    if isinstance(value, (list, tuple)):
        return tuple(_shape(v, index) for v in value)
    if isinstance(value, dict):
        return tuple((k, _shape(v, index)) for k, v in value.items())
    if (fields := _fields(value)) is not None:
        return (type(value).__name__, _shape(fields, index))
    return ("value",)


def _map(value: Any, leaf: Any) -> Any:
    """``value`` with ``leaf`` applied to each item that is not a list, tuple or dict."""
    if isinstance(value, list):
        return [_map(v, leaf) for v in value]
    if isinstance(value, tuple):
        return tuple(_map(v, leaf) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, leaf) for k, v in value.items()}
    return leaf(value)


@dataclass(frozen=True)
class _Ref:
    place: int


@dataclass(frozen=True)
class _Spec:
    kind: type
    fields: dict


def _plan(value: Any, index: dict) -> Any:
    """``value`` as :meth:`Snapshot.build` remakes it: each model by its place."""
    def leaf(v: Any) -> Any:
        if isinstance(v, Model):
            return _Ref(index[v.id])
        if (fields := _fields(v)) is not None:
            return _Spec(type(v), _map(fields, leaf))
        return v
    return _map(value, leaf)


def _made(plan: Any, models: list) -> Any:
    """The value a :func:`_plan` stands for, its models taken from ``models``."""
    def leaf(v: Any) -> Any:
        if isinstance(v, _Ref):
            return models[v.place]
        if isinstance(v, _Spec):
            return v.kind(**_map(v.fields, leaf))
        return v
    return _map(plan, leaf)


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
    if isinstance(value, (set, frozenset)):
        return set(value)
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
    #: per model: its class, the plain properties set (not defaults), its references,
    #: and the (place, property) of the model that owns it by a read-only property;
    #: empty when the figure cannot be remade from values (:func:`_buildable`)
    recipe: list = field(default_factory=list)
    token: int = field(default_factory=lambda: next(_TOKENS))

    @classmethod
    def of(cls, root: Model) -> tuple["Snapshot", list[Model]]:
        """The snapshot of ``root`` and its models in snapshot order."""
        models = walk(root)
        index = {m.id: i for i, m in enumerate(models)}
        signature, values, recipe = [], [], []
        owners: dict[int, tuple[int, str]] = {}
        for i, m in enumerate(models):
            refs = type(m).properties_with_refs()
            plain, shapes, linked = {}, [], {}
            for name in sorted(m.properties()):
                if name == "id":
                    continue
                if m.lookup(name).readonly:
                    if name in refs and isinstance(v := getattr(m, name), Model):
                        owners.setdefault(index[v.id], (i, name))   # its constructor's
                    continue
                v = getattr(m, name)
                if name in refs and any(True for _ in _models_in(v)):
                    shapes.append((name, _shape(v, index)))
                    linked[name] = _plan(v, index)
                else:
                    plain[name] = _copy(v)
                    if name in refs:        # an empty reference: as drawn, not as
                        linked[name] = _copy(v)     # the constructor would make it
            given = [n for n in m.properties_with_values(include_defaults=False)
                     if n in plain]
            signature.append((type(m).__name__, tuple(shapes)))
            values.append(plain)
            recipe.append((type(m), given, linked))
        recipe = [(c, g, l, owners.get(i)) for i, (c, g, l) in enumerate(recipe)]
        if any(owner >= i for i, (owner, _) in owners.items()):
            recipe = []         # a model met before its owner: not remade (drawn)
        return cls(tuple(signature), values, recipe), models

    def build(self) -> list[Model]:
        """A new figure equal to the one snapshotted, its models in snapshot order
        (the root first): made from their values, not drawn by HoloViews, for a
        fifth of the cost. What a session shows first of a setting already drawn.

        A model held by a read-only property (a data source's selection) is the one
        its owner's constructor made, given its values."""
        models: list[Model] = []
        for (cls, given, _, owner), plain in zip(self.recipe, self.values):
            values = {n: _copy(plain[n]) for n in given}
            if owner is None:
                models.append(cls(**values))
                continue
            m = getattr(models[owner[0]], owner[1])
            if values:
                m.update(**values)
            models.append(m)
        for m, (_, _, linked, _) in zip(models, self.recipe):
            if linked:
                m.update(**{n: _made(p, models) for n, p in linked.items()})
        return models


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


#: HoloViews pictures per (setting key, order in the view), shared by sessions.
DRAWINGS = _LRU(256)
#: the setting key of the view being computed, and how many pictures it made so far.
_SETTING: contextvars.ContextVar = contextvars.ContextVar("bnx_setting", default=None)


@contextlib.contextmanager
def setting(key: tuple | None):
    """Compute a view of the setting ``key`` (None: not shared) under this context:
    its :func:`drawing` calls are then shared by every session."""
    token = _SETTING.set(None if key is None else [key, 0])
    try:
        yield
    finally:
        _SETTING.reset(token)


def drawing(make: Any) -> Any:
    """``make()``, a view's HoloViews picture, made once per setting and shared by the
    sessions that show it (under :func:`setting`), else made now.

    A view is a pure function of its parameters, so its n-th picture is the same for
    every session of one setting; making it again (HoloViews elements, their options)
    was half of a session's move to a computed setting. The picture must not be changed
    after ``make`` returns it."""
    state = _SETTING.get()
    if state is None:
        return make()
    key = (state[0], state[1])
    state[1] += 1
    element = DRAWINGS.get(key)
    if element is None:
        element = make()
        DRAWINGS.put(key, element)
    return element


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
class Built:
    """A figure made from a snapshot (:meth:`Snapshot.build`) and the Bokeh pane that
    shows it: what :class:`Shown` holds in place of a HoloViews plot."""

    state: Model
    pane: Any


@dataclass
class Shown:
    """What a session displays at one place of a view."""

    plot: Any               # the HoloViews plot the pane holds, or a Built figure
    models: list            # its models in snapshot order
    snapshot: Snapshot      # the values they hold
    data: Any = None        # the key of the data it draws
    layout: dict = field(default_factory=dict)  # the view's layout values of its pane


@dataclass
class Update:
    """One picture of a view computed in the worker, to apply on the event loop."""

    place: int
    pane: Any                      # the HoloViews or Bokeh pane that shows it
    element: Any
    shown: Shown | None = None     # patched in place: what is shown, and the patch
    changes: list = field(default_factory=list)
    new: Shown | None = None       # drawn anew


def _drawable(obj: Any) -> bool:
    from holoviews.core.dimension import Dimensioned
    from holoviews.core.spaces import HoloMap

    return (isinstance(obj, Dimensioned) and not isinstance(obj, HoloMap)
            and not obj.traverse(lambda x: x, [HoloMap]))


#: one HoloViews drawing at a time. HoloViews turned Bokeh's property validation off for
#: the whole process while it updated a plot, and Bokeh converts a value to a
#: property's accepted type (a title's text to a ``Title``) only when validation
#: rejects it: a drawing in a second thread meanwhile kept a text as a figure's title
#: and failed ("'str' object has no attribute 'update'", about once per 30-session
#: burst). ``_private`` now keeps validation on; drawings still take turns, as
#: HoloViews' options are process-wide too, and they hold the GIL anyway.
_RENDER_LOCK = threading.Lock()


def _render(element: Any, margin: Any = None) -> Any:
    """HoloViews' Bokeh drawing of ``element`` in a document of its own.

    HoloViews uses the ``doc`` given only in server mode; otherwise it takes Bokeh's
    ``curdoc()``, which outside a session's callback is process-wide: a session's
    document being patched on the event loop (the drawing then changed a page's models
    from a worker, "_pending_writes should be non-None"), or one of a session since
    closed (every later drawing failed: "'Document' object has no attribute '_theme'",
    a page with no picture).
    """
    import holoviews as hv

    options = {} if margin is None else {"margin": margin}
    with _RENDER_LOCK:
        return hv.renderer("bokeh").instance(mode="server").get_plot(element, doc=Document(),
                                                                      **options)


def prepare(shown: dict, view: str, key: tuple | None, out: Any,
            patch: bool = True, data: Any = None,
            design: Any = None) -> tuple[Any, list[Update], bool]:
    """In the worker: draw or patch each static picture of ``out``, a view's output.

    ``shown`` maps ``(view, place)`` to what the session displays; each picture of
    ``out`` gets what it will display: the shown figure, patched (its pane takes the
    new pane's place in ``out``: Panel then finds nothing to update in place), a
    figure built from the setting's snapshot (in a Bokeh pane laid out as the
    HoloViews pane would lay it out, ``design`` the page's), or a new HoloViews
    drawing. With ``patch=False`` (the output replaces the view's layout) nothing is
    patched. Figures of other data (``data``, the data's key) are not patched either:
    a new data set is a new picture.

    Returns ``out``, the updates, and whether the view must be replaced rather than
    updated in place: when a displayed picture cannot be patched (another structure
    or data, a pane whose layout changes), and then no picture of the view is patched,
    so that no displayed pane moves into the new layout.
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
            if not _buildable(plot):
                snap.recipe = []
            if k is not None:
                SNAPSHOTS.put(k, snap)
        layout = _layout(pane)
        old = shown.get((view, place)) if patch else None
        kept = getattr(old.plot, "pane", None) if old is not None else None
        patchable = (kept is not None and old.data == data
                     and old.snapshot.signature == snap.signature
                     and _equal(old.layout, layout) and _placeable(out, pane))
        found.append((place, pane, element, snap, plot, models, layout, old, kept, patchable))
    replace = any(old is not None and not patchable for *_, old, _, patchable in found)
    updates = []
    for place, pane, element, snap, plot, models, layout, old, kept, patchable in found:
        if patchable and not replace:
            out = _put(out, pane, kept)
            updates.append(Update(place, kept, element, shown=old,
                                  changes=_patch(old.snapshot, snap),
                                  new=Shown(old.plot, old.models, snap, data, layout)))
        elif plot is None and snap.recipe and _placeable(out, pane):
            # drawn before (by this session or another): built from its snapshot
            models = snap.build()
            bokeh = _bokeh_pane(pane, models[0], design)
            out = _put(out, pane, bokeh)
            updates.append(Update(place, bokeh, element, new=Shown(
                Built(models[0], bokeh), models, snap, data, layout)))
        else:
            if plot is None:
                plot = _render(element, pane.margin)
                models = walk(plot.state)
            pane.object = plot
            updates.append(Update(place, pane, element,
                                  new=Shown(plot, models, snap, data, layout)))
    return out, updates, replace


#: layout values Panel gives a picture pane from its figure, or the page its design.
_FROM_FIGURE = frozenset({"name", "width", "height", "sizing_mode", "design", "css_classes"})


def _buildable(plot: Any) -> bool:
    """Whether a HoloViews drawing can be remade from its models' values: not when a
    stream listens to it (Ask's node clicks), whose Python callbacks a copy would lose."""
    return not any(plot.traverse(lambda p: bool(getattr(p, "callbacks", None))))


def _layout(pane: Any) -> dict:
    """The layout values a view gives its picture pane (not those Panel sets).

    Panel 1.9 passes a layout change of a displayed picture pane on to the Bokeh pane
    inside it, which sets its layout overrides on the figure (the page's design among
    them: Bokeh refuses it) or copies the figure's style sheets back (Panel refuses
    those): the update then fails half done. So a picture is patched only under a
    pane of the same layout, and its view is replaced otherwise.
    """
    from panel.viewable import Layoutable

    return {p: getattr(pane, p) for p in Layoutable.param if p not in _FROM_FIGURE}


def _bokeh_pane(pane: Any, figure: Model, design: Any) -> Any:
    """A Bokeh pane showing ``figure`` as the HoloViews ``pane`` would show its drawing:
    the same layout values, the figure's size and sizing mode where the view set
    none (as Panel's HoloViews pane hands them to the Bokeh pane inside it).

    The page's ``design`` is given as Panel's template gives it to what it renders
    (``config.set``), not as an argument: Panel 1.9's Bokeh pane keeps every layout
    argument as an override and sets them all on the figure at its next layout change
    (the spinner's classes), where Bokeh refuses ``design``.
    """
    from panel.viewable import Layoutable

    values = {p: getattr(pane, p) for p in Layoutable.param if p not in ("name", "design")}
    for p in ("sizing_mode", "width", "height"):
        if values[p] == pane.param[p].default:
            values[p] = getattr(figure, p)
    mode = values["sizing_mode"] or ""
    if mode.endswith(("width", "both")):
        del values["width"]
    if mode.endswith(("height", "both")):
        del values["height"]
    # the setting holds for the current document: the session's on the event loop,
    # in a worker one that no page shows (page.in_worker)
    with pn.config.set(design=pane.design or design):
        return pn.pane.Bokeh(figure, autodispatch=False, **values)


def _placeable(out: Any, pane: Any) -> bool:
    """Whether another pane can take ``pane``'s place in the output ``out``."""
    return pane is out or _holds(out, pane)


def _put(out: Any, pane: Any, other: Any) -> Any:
    """``out`` with ``other`` in ``pane``'s place (a place :func:`_placeable` found)."""
    if pane is out:
        return other
    _swap(out, pane, other)
    return out


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
            # another result of this view may have been applied to the figure since
            # the worker looked: patch from the values it holds now
            now = shown.get((view, u.place))
            base = now.snapshot if now is not None and now.models is u.shown.models \
                else u.shown.snapshot
            changes = u.changes if base is u.shown.snapshot else _patch(base, u.new.snapshot)
            if changes:
                doc = u.shown.plot.state.document
                with pn.io.hold(doc) if doc is not None else contextlib.nullcontext():
                    for i, values in changes:
                        u.shown.models[i].update(**values)
        shown[(view, u.place)] = u.new
    for k in [k for k in shown if k[0] == view and k[1] not in places]:
        del shown[k]
