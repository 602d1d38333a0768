"""Pictures rendered once per setting and shared by every session of the server.

A HoloViews picture costs twice on every move of a slider: building the elements
(a layered DAG layout can take a second) and rendering them into Bokeh models (about
half a second for a DAG, a few tenths for a heat map). Bokeh models belong to one
document, so a session cannot show another session's models, and all of this runs
under one interpreter lock: 30 students moving to the same setting queue 30 such
renders behind each other.

Here a picture is built and rendered once per *setting* (a hashable key), in the
calling worker thread, and kept as the JSON of its Bokeh models in a shared LRU
(:func:`_common.shared_cache`, and on disk for a later start of the server). A
session gets its own copy of the models by deserialising that JSON, which costs a
small fraction of the render; the copy's model ids get a suffix of their own, so a
session that comes back to a setting never meets the ids of models it showed before.
A failed build is cached like any result of :func:`_common.cached` and raised again
for every session.

Bokeh draws on a canvas in the browser and all interaction of these pictures (hover,
pan, zoom, save) is client-side, so the copy behaves exactly as the picture rendered
by a HoloViews pane.

A move of a slider usually gives a picture of the same make: the same Bokeh models
holding other values (M* with other arcs, ROC curves of other points). A pane then
keeps its models and takes the new values: the two pictures' JSON are walked side by
side, model by model, and each attribute that differs is set on the shown model
(:class:`InPlace`, applied on the event loop), so the browser receives only the
changed values and nothing is built. Any difference of make (another model type,
another attribute set, a list of other length) falls back to a fresh copy.
"""
from __future__ import annotations

import functools
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

import panel as pn
import param

from bokeh.models import FactorRange

from _common import (DAG_SCROLL_BAR_PX, SHOWN_VIEW, dag_column, dag_sizes, fixed_column,
                     shared_cache, taken_values)

#: settings whose rendered pictures are kept (a DAG is 50-150 kB of JSON).
RENDER_CACHE_SIZE = 192
#: per picture, the in-place updates from the pictures last shown before it
DIFFS_KEPT = 8

# HoloViews keeps global state while it renders (the current backend, option trees):
# one render at a time (all of it holds the interpreter lock anyway)
_RENDER_LOCK = threading.Lock()
_COPIES = itertools.count(1)
_RENDERER: list = []      # the HoloViews renderer of every picture (made under the lock)
# a reference to a model in Bokeh's serialised document: {"id":"p1234"} or the
# object's own "id" field; column names and values are never serialised this way
_MODEL_ID = re.compile(r'"id":"([^"]+)"')


@dataclass(frozen=True)
class RenderedPicture:
    """A picture rendered once: its Bokeh model tree as JSON and the sizes panes need."""

    model_json: str
    least_width: int | None = None
    height: int | None = None
    _parsed: list = field(default_factory=list, compare=False, repr=False)
    _diffs: dict = field(default_factory=dict, compare=False, repr=False)

    def __reduce__(self):
        # kept on disk for a later start (_common.shared_cache): the JSON and sizes only
        return type(self), (self.model_json, self.least_width, self.height)

    def root_json(self) -> dict:
        """The picture's root model as parsed JSON (parsed once; read-only)."""
        if not self._parsed:
            self._parsed.append(json.loads(self.model_json))
        return self._parsed[0]

    def diff_from(self, shown: "RenderedPicture") -> tuple[dict, list]:
        """What changes from the picture ``shown`` to this one: the new picture's model
        ids mapped to the shown one's, and ``(shown model id, attribute, new value)``
        per changed attribute, the values decoded (arrays read-only: every session
        shares them; give each its own containers with :func:`_fresh`).

        Computed once per pair of pictures: every session that makes the same move
        gets the same answer. Raises :class:`_OtherMake` if the makes differ (or a
        value cannot be decoded alone).
        """
        from bokeh.core.serialization import Deserializer

        key = id(shown)
        got = self._diffs.get(key)
        if got is None or got[0] is not shown:
            ids: dict | None = {}
            found: list | None = []
            try:
                _walk_models(shown.root_json(), self.root_json(), ids, found)
                decode = Deserializer().decode
                found = [(old_id, attr, _read_only(decode(value))) for old_id, attr, value in found]
            except Exception:  # noqa: BLE001 - another make, or a value Bokeh cannot decode alone
                ids, found = None, None
            got = (shown, ids, found)
            if len(self._diffs) >= DIFFS_KEPT:      # pictures last moved from
                self._diffs.pop(next(iter(self._diffs)))
            self._diffs[key] = got
        if got[1] is None:
            raise _OtherMake
        return got[1], got[2]


def _read_only(value: Any) -> Any:
    # a decoded value shared by the sessions: its arrays cannot be changed in place
    if isinstance(value, dict):
        for v in value.values():
            _read_only(v)
    elif isinstance(value, list):
        for v in value:
            _read_only(v)
    elif hasattr(value, "setflags"):
        value.setflags(write=False)
    return value


def _fresh(value: Any) -> Any:
    """A session's own containers around a shared decoded value (arrays shared)."""
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    return value


def render(plot: Any, least_width: int | None = None, height: int | None = None
           ) -> RenderedPicture:
    """Render a HoloViews ``plot`` with the Bokeh backend into a :class:`RenderedPicture`."""
    import holoviews as hv
    from bokeh.core.serialization import Serializer
    from bokeh.document import Document

    # A document of its own (HoloViews would otherwise use curdoc(), in a server the
    # calling session's document, and change it off its lock), which never gets the
    # model as a root: adding or removing a root fires Bokeh's change callbacks under
    # patch_curdoc, a process-wide stack that the event loop's thread uses too.
    with _RENDER_LOCK:
        model = _server_renderer(hv).get_plot(plot, doc=Document()).state
    rep = Serializer(deferred=False).encode(model)
    return RenderedPicture(json.dumps(rep, separators=(",", ":")), least_width, height)


def _server_renderer(hv: Any) -> Any:
    # A renderer in "server" mode takes the document it is given. In the default mode
    # HoloViews leaves the plot without one and then falls back to Bokeh's curdoc():
    # in a server thread that is whichever session the event loop is serving (a
    # process-wide stack), whose every model then got the theme applied - events in
    # another session's document, off its lock ("_pending_writes should be non-None").
    if not _RENDERER:
        _RENDERER.append(hv.renderer("bokeh").instance(mode="server"))
    return _RENDERER[0]


def bokeh_copy(picture: RenderedPicture) -> Any:
    """A fresh Bokeh model tree of ``picture``, for one session's document."""
    return _copy(picture)[0]


def _copy(picture: RenderedPicture) -> tuple[Any, dict]:
    # the root model and {id in the picture's JSON: model of the copy}; decoded with
    # no document (see render), the session's document adopts the models
    from bokeh.core.serialization import Deserializer

    suffix = f"-s{next(_COPIES)}"
    text = _MODEL_ID.sub(lambda m: f'"id":"{m.group(1)}{suffix}"', picture.model_json)
    model = Deserializer().decode(json.loads(text))
    n = len(suffix)
    models = {m.id[:-n]: m for m in model.references()}
    for m in models.values():
        _tuple_factors(m)
    return model, models


def _tuple_factors(model: Any) -> None:
    # JSON has no tuples: nested factors of a categorical range come back as lists,
    # which Bokeh's validation of a document (a page built with its pictures) cannot
    # hash ("unhashable type: 'list'")
    if isinstance(model, FactorRange) and any(isinstance(f, list) for f in model.factors):
        model.factors = [tuple(f) if isinstance(f, list) else f for f in model.factors]


# ------------------------------------------------------------------ in-place updates
class _OtherMake(Exception):
    """Two pictures differ in make (not only in values): no in-place update."""


def _is_object(v: Any) -> bool:
    return isinstance(v, dict) and v.get("type") == "object"


def _is_ref(v: Any) -> bool:
    return isinstance(v, dict) and len(v) == 1 and "id" in v


def _holds_models(v: Any) -> bool:
    if isinstance(v, dict):
        return _is_object(v) or _is_ref(v) or any(_holds_models(x) for x in v.values())
    if isinstance(v, list):
        return any(_holds_models(x) for x in v)
    return False


def _walk_models(old: dict, new: dict, ids: dict, changes: list) -> None:
    """Pair the model ``old`` (shown) with ``new`` (to show); collect changed values.

    ``ids`` maps the new picture's model ids to the old picture's; ``changes`` gets
    ``(old id, attribute, new JSON value)``.
    """
    if _is_ref(new) or _is_ref(old):
        if not (_is_ref(new) and _is_ref(old)) or ids.get(new["id"]) != old["id"]:
            raise _OtherMake
        return
    if old.get("name") != new.get("name"):
        raise _OtherMake
    ids[new["id"]] = old["id"]
    a, b = old.get("attributes", {}), new.get("attributes", {})
    if a.keys() != b.keys():
        raise _OtherMake
    for key, nv in b.items():
        ov = a[key]
        if ov == nv:
            continue
        if _holds_models(ov) or _holds_models(nv):
            _walk_value(ov, nv, ids, changes)
        else:
            changes.append((old["id"], key, nv))


def _walk_value(old: Any, new: Any, ids: dict, changes: list) -> None:
    # a value that holds models: the same shape, models paired, other values equal
    if (_is_object(new) or _is_ref(new)) and isinstance(old, dict):
        _walk_models(old, new, ids, changes)
    elif isinstance(new, list) and isinstance(old, list) and len(old) == len(new):
        for o, n in zip(old, new):
            if o != n:
                _walk_value(o, n, ids, changes)
    elif isinstance(new, dict) and isinstance(old, dict) and old.keys() == new.keys():
        for k in new:
            if old[k] != new[k]:
                _walk_value(old[k], new[k], ids, changes)
    else:
        raise _OtherMake


@dataclass
class _Shown:
    """What a picture pane shows: its picture and the session's models by picture id."""

    picture: RenderedPicture
    models: dict


class InPlace:
    """New values for the models a picture pane shows (made in a worker thread).

    :meth:`apply_in_place` runs on the session's event loop (the document locked):
    it sets each changed attribute on the shown model, which sends the browser the
    new values only.
    """

    def __init__(self, shown: Any, state: _Shown, changes: list, pane_options: dict):
        self.shown, self.state, self.changes = shown, state, changes
        self.pane_options = pane_options

    def apply_in_place(self) -> None:
        # one event per attribute: held and combined by Panel (panel.io.hold), a
        # picture's column-data changes reached BokehJS as "Size mismatch" errors
        for model, key, value in self.changes:
            # (HasProps.set_from_json formats the value for a trace log first: the repr
            # of every array, whatever the log level)
            model.lookup(key).set_from_json(model, value)
        for obj, options in self.pane_options.items():
            changed = {k: v for k, v in options.items() if getattr(obj, k) != v}
            if changed:
                _update_pane(obj, **changed)
        self.shown._bnx_shown = self.state


def _update_pane(obj: Any, **changed: Any) -> None:
    """Set layout options (sizes, ``visible``) of a pane that shows a picture."""
    if isinstance(obj, pn.pane.Bokeh):
        # the picture's model takes them, as the pane gave them to it: an update of
        # the pane would copy every layout property of the model back to it, the
        # style sheets Panel's theme put on a page's first models too, which the pane
        # refuses (a page built with its pictures, views.serve)
        obj.object.update(**changed)
        with param.parameterized.discard_events(obj):
            obj.param.update(**changed)
    else:
        obj.param.update(**changed)


def _in_place(shown: Any, picture: RenderedPicture, pane_options: Callable[[Any], dict]
              ) -> InPlace | None:
    """An :class:`InPlace` update of ``shown`` to ``picture``, or None if not possible."""
    state = getattr(shown, "_bnx_shown", None)
    if state is None:
        return None
    if state.picture is picture:
        return InPlace(shown, state, [], {})
    try:
        ids, found = picture.diff_from(state.picture)
        changes = [(state.models[old_id], key, _fresh(value)) for old_id, key, value in found]
    except (_OtherMake, KeyError):  # another make: a fresh copy
        return None
    models = {new_id: state.models[old_id] for new_id, old_id in ids.items()
              if old_id in state.models}
    return InPlace(shown, _Shown(picture, models), changes, pane_options(shown))


def _picture_pane(picture: RenderedPicture, build: Callable[[Any], Any],
                  pane_options: Callable[[Any], dict]) -> Any:
    """The pane of ``picture``: the shown one updated in place when it can be, else
    ``build(model)`` around a fresh copy."""
    shown = SHOWN_VIEW.get()
    if shown is not None:
        update = _in_place(shown, picture, pane_options)
        if update is not None:
            return update
    model, models = _copy(picture)
    out = build(model)
    out._bnx_shown = _Shown(picture, models)
    return out


def rendered(make_plot: Callable[..., Any], *args: Hashable,
             sizes: Callable[[Any], tuple[int | None, int | None]] | None = None
             ) -> RenderedPicture:
    """The picture ``make_plot(*args)``, built and rendered once for all sessions.

    Parameters
    ----------
    make_plot : callable
        A pure function of its arguments that builds a HoloViews picture; it runs
        once per argument tuple, in whichever session asks first (the others wait
        for it). Its exceptions are cached and raised again.
    *args : hashable
        The setting: everything the picture depends on.
    sizes : callable, optional
        ``plot -> (least width, height)`` kept with the picture for its pane.
    """
    def build() -> RenderedPicture:
        from bokeh.document import Document
        from panel.io.state import set_curdoc

        # built for every session: nothing in it may reach the asking session's
        # document (changed off its lock, it would fail with "_pending_writes should be
        # non-None" and the failure would be cached for all)
        with set_curdoc(Document()):
            plot = make_plot(*args)
            width, height = sizes(plot) if sizes is not None else (None, None)
            return render(plot, width, height)

    # Bokeh runs an app file as a new module per session: the key names the function
    # by file and name, never by the (per-session) function object
    key = (make_plot.__code__.co_filename, make_plot.__qualname__, args)
    return shared_cache("rendered-pictures", RENDER_CACHE_SIZE, persist=True).compute(key, build)


def shared_dag_pane(make_plot: Callable[..., Any], *args: Hashable) -> Any:
    """:func:`_common.dag_pane` of the :func:`bnexplore.viz.dag_plot` picture
    ``make_plot(*args)``, rendered once for all sessions."""
    from bnexplore.viz.graphs import plot_size

    pic = rendered(make_plot, *args, sizes=plot_size)
    options = dag_sizes(pic.least_width, pic.height)

    def sizes(column: pn.Column) -> dict:
        return {column[0]: options, column: {"height": pic.height + DAG_SCROLL_BAR_PX}}

    return _picture_pane(
        pic, lambda model: dag_column(pn.pane.Bokeh(model, sizing_mode="stretch_width", **options)),
        sizes)


def shared_fixed_pane(make_plot: Callable[..., Any], *args: Hashable) -> Any:
    """:func:`_common.fixed_pane` of the fixed-size picture ``make_plot(*args)``,
    rendered once for all sessions."""
    return _picture_pane(rendered(make_plot, *args),
                         lambda model: fixed_column(pn.pane.Bokeh(model, sizing_mode="fixed")),
                         lambda column: {})


def shared_pane(make_plot: Callable[..., Any], *args: Hashable, **options: Any) -> Any:
    """A Bokeh pane (``options`` as for :class:`panel.pane.Bokeh`) of the picture
    ``make_plot(*args)``, rendered once for all sessions."""
    return _picture_pane(rendered(make_plot, *args),
                         lambda model: pn.pane.Bokeh(model, **options), lambda pane: {})


# ------------------------------------------------------------------ layouts of pictures
class LayoutInPlace:
    """In-place updates of the parts a layout shows (see :func:`shared_layout`)."""

    def __init__(self, updates: list[Callable[[], None]]):
        self.updates = updates

    def apply_in_place(self) -> None:
        for update in self.updates:
            update()


def _text_update(shown: Any, new: Any) -> Callable[[], None] | None:
    # a text pane (a caption, a summary) of the same kind and look takes the new text
    values = taken_values(shown, new)
    return None if values is None else (lambda: shown.param.update(**values))


def shared_layout(layout: type, *parts: Callable[[], Any], **options: Any) -> Any:
    """``layout(*(part() for part in parts), **options)``, updated in place when it can be.

    Each ``part`` makes one child: a picture pane of :func:`shared_pane` and its kin,
    or a text pane. When the view shows such a layout already, each part is made with
    :data:`SHOWN_VIEW` set to the child it replaces: if every picture can be updated
    in place and every text pane is of the same kind, the shown layout keeps its
    children and takes the new values (a player stepping through pictures sends the
    browser the changed values only); parts beyond the shown children are added as
    fresh copies and children beyond the parts are hidden (one more picture in a grid
    costs one copy, not a copy of the grid, and moving back and forth costs none);
    otherwise a fresh layout is built. A hidden child shown again is first updated in
    place like the others.

    Parameters
    ----------
    layout : type
        The Panel layout (:class:`panel.Column`, :class:`panel.FlexBox`, ...).
    *parts : callable
        Each makes one child, in order (e.g. ``lambda: shared_pane(plot, setting)``).
    **options
        Options of the layout.

    Returns
    -------
    The layout, or a :class:`LayoutInPlace` for the shown one (a view returns it as is).

    Examples
    --------
    >>> col = shared_layout(pn.Column, lambda: pn.pane.Markdown("caption"))
    >>> type(col).__name__, col[0].object
    ('Column', 'caption')
    """
    shown = SHOWN_VIEW.get()
    children = list(shown.objects) if isinstance(shown, layout) else None
    if children is not None:
        updates = []
        common = min(len(children), len(parts))
        for part, child in zip(parts[:common], children[:common]):
            token = SHOWN_VIEW.set(child)
            try:
                out = part()
            finally:
                SHOWN_VIEW.reset(token)
            update = (out.apply_in_place if callable(getattr(out, "apply_in_place", None))
                      else _text_update(child, out))
            if update is None:
                break
            updates.append(update)
            if not child.visible:
                updates.append(functools.partial(_update_pane, child, visible=True))
        else:
            # children beyond the parts are hidden, not dropped: moving back shows them
            updates += [functools.partial(_update_pane, child, visible=False)
                        for child in children[common:] if child.visible]
            if len(parts) > len(children):    # parts added: fresh copies
                token = SHOWN_VIEW.set(None)
                try:
                    added = [part() for part in parts[common:]]
                finally:
                    SHOWN_VIEW.reset(token)
                updates.append(lambda: setattr(shown, "objects", children + added))
            return LayoutInPlace(updates)
    token = SHOWN_VIEW.set(None)      # fresh copies of every picture
    try:
        return layout(*(part() for part in parts), **options)
    finally:
        SHOWN_VIEW.reset(token)
