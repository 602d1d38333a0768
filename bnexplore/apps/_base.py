"""The base of every app: :class:`App`, a :class:`panel.viewable.Viewer` over one data set.

An app's state is its parameters, declared once with their bounds; its views are pure
functions of them (``param.depends``) that read heavy results through
:func:`~bnexplore.apps._cache.cached`. The data parameters are the same in every app:

=============  ===========================================================================
``source``     ``"data set"`` (bundled), ``"network sample"`` or ``"your data"``
``dataset``    the bundled data set
``network``    the bundled network sampled, ``sample_size`` rows
``target``     the class column
``binning``    how continuous columns of the user's data are cut (``"mdl"`` or
               ``"equal-frequency"`` into ``bins`` bins)
=============  ===========================================================================

From them the app builds ``data`` (a :class:`~bnexplore.apps.data.Data`), the one
parameter the views read; a change of data sets ``target``, ``data`` and the parameters
that depend on the data (:meth:`App.dependent`) in one update, so no view ever sees
the new data with the old settings.
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import itertools
import json
import weakref
from pathlib import Path
from typing import Any, Callable, ClassVar
from urllib.parse import parse_qs

import pandas as pd
import panel as pn
import param

from . import _private, figures
from .data import (BINNINGS, SAMPLE_SIZES, UPLOAD_MAX_BYTES, Data, size_error,
                    bundled_dataset, check_upload,
                    class_candidates, dataset_names, default_target, left_out_columns,
                    network_names, network_sample, no_data, read_upload, user_data)
from ._cache import NotCached, only_cached
from .guard import UploadGuard
from .page import DESIGN, download_csv, in_worker, on_session, table, template
from .text import glossed, md_join, md_strong, md_text

DATASET, NETWORK, USER = "data set", "network sample", "your data"
SOURCES = (DATASET, NETWORK, USER)
#: what a page shows for a link to data that was uploaded (a link cannot carry data).
NOT_IN_LINK = ("This link was made on uploaded data, which a link cannot carry: upload "
               "the file again (the link's other settings are kept), or choose a data set.")
#: what the views say while numba compiles the kernels (a first start).
PREPARING_TEXT = ("Preparing the kernels (first start only) ... the pictures follow in a "
                  "minute or two.")
#: the data parameters, in the order a link applies them.
DATA_PARAMETERS = ("source", "dataset", "network", "sample_size", "binning", "bins", "target")
#: the page text in presentation mode (the FAST design's base size is a CSS variable,
#: inherited by every pane's shadow root).
PRESENTATION_STYLES = {"--type-ramp-base-font-size": "19px", "font-size": "19px"}
#: the width (px) a picture aims at in presentation mode: the main area of a 1024 px
#: projector window beside the sidebar (677 px in Chromium), less the panes' margins
PROJECTOR_MAIN_PX = 620
#: seconds a view computes before its spinner shows (see App._computing).
SPINNER_DELAY_S = 0.4
_IDENTITY = frozenset({"source", "dataset", "network", "sample_size"})
_UPLOAD_IDS = itertools.count(1)   # a CSS class per file input, for its browser-side guard


def file_name(path: str) -> str:
    return Path(str(path)).name


@functools.lru_cache(maxsize=32)
def _bundled(source: str, name: str, n: int, binning: str = "mdl", bins: int = 5) -> Data:
    if source == DATASET:
        return bundled_dataset(name, binning, bins)
    return network_sample(name, n)


def _same(a: Any, b: Any) -> bool:
    try:
        return a is b or bool(a == b)
    except Exception:  # noqa: BLE001 - values that do not compare (arrays): not the same
        return False


def _own_parameters(view: Callable, app: "App") -> dict:
    """The values of the app's parameters that ``view`` depends on."""
    return {d.name: getattr(app, d.name)
            for d in app.param.method_dependencies(view.__name__) if d.inst is app}


def _unchanged(app: "App", values: dict) -> bool:
    return all(_same(getattr(app, n), v) for n, v in values.items())


def _shown(view: Callable, app: "App", *args, **kwargs) -> Any:
    """``view(app)``, or why there is nothing to show (no data, an error) as text.

    A result whose parameters changed while it was computed is dropped
    (:class:`param.Skip`): the computation for the new values shows instead.
    """
    before = _own_parameters(view, app)
    if app.data is None or app.data.frame is None:
        return pn.pane.Alert(md_text(getattr(app.data, "error", "") or "No data."),
                             alert_type="warning", css_classes=["bnx-no-data"])
    try:
        out = view(app, *args, **kwargs)
    except NotCached:
        raise
    except Exception as exc:  # noqa: BLE001 - shown in the page, never a traceback
        out = pn.pane.Alert(f"**{type(exc).__name__}**: {md_text(exc)}",
                            alert_type="danger", css_classes=["bnx-error"])
    if not _unchanged(app, before):
        raise param.Skip(f"{view.__name__}: its parameters changed while it computed")
    return out


def _served(view: Callable, app: "App", *args, **kwargs) -> tuple:
    """The view's output for a served page, its pictures drawn or to be patched in
    place (:mod:`~bnexplore.apps.figures`), shared between sessions by the setting's
    key (none when the view also depends on another object's parameters)."""
    deps = app.param.method_dependencies(view.__name__)
    key = None
    if not (args or kwargs) and all(d.inst is app for d in deps):
        key = figures.setting_key(app, view.__name__,
                                  {d.name: getattr(app, d.name) for d in deps})
    with figures.setting(key):
        out = _shown(view, app, *args, **kwargs)
    inplace = not _has_controls(out, app._kept_ids)
    out, updates, replace = figures.prepare(app._figures, view.__name__, key, out,
                                            patch=inplace, data=getattr(app.data, "key", None),
                                            design=app._design)
    return out, inplace and not replace, updates


def _show(app: "App", view: Callable, out: Any, inplace: bool, updates: list) -> Any:
    """On the event loop: patch the figures, and let Panel update the rest of the view
    in place (only what differs reaches the page) unless the output makes new controls
    (their callbacks belong to the new layout: replaced, figures drawn anew)."""
    figures.apply(app._figures, view.__name__, updates)
    if isinstance(out, pn.viewable.Viewable):
        # the page's template gives its design to what it shows; a new picture pane
        # without it would take it away in place, and Panel 1.9 then fails to sync
        # the pane with a figure that holds the design's stylesheets. (Passed to a
        # displayed pane, the design would become a figure override that Bokeh refuses:
        # a patched picture keeps its displayed pane instead, and the Bokeh pane of a
        # figure built from a snapshot is given the design when made: figures.prepare.)
        for pane in out.select(pn.pane.HoloViews):
            if pane.design is None and app._design is not None:
                pane.design = app._design
    for pane in app._view_panes.get(view.__name__, ()):
        pane.inplace = inplace
    return out


def _in_place(view: Callable, app: "App", *args, **kwargs) -> Any:
    """On the event loop, when every result the view reads is in memory
    (:func:`~bnexplore.apps._cache.only_cached`; :class:`NotCached` otherwise)."""
    with only_cached():
        out, inplace, updates = _served(view, app, *args, **kwargs)
    return _show(app, view, out, inplace, updates)


#: the page changes asked for by a view computed in a worker thread (App.on_loop)
_ON_LOOP: contextvars.ContextVar[list | None] = contextvars.ContextVar("bnx_on_loop",
                                                                       default=None)


async def _in_worker(view: Callable, app: "App", *args, **kwargs) -> Any:
    values = _own_parameters(view, app)
    app._computing(view.__name__, +1)
    later: list = []
    token = _ON_LOOP.set(later)             # the worker runs in a copy of this context
    try:
        out, inplace, updates = await in_worker(_served, view, app, *args, **kwargs)
        if not _unchanged(app, values):     # a later setting was shown meanwhile
            raise param.Skip(f"{view.__name__}: its parameters changed while it computed")
    except BaseException:
        # under Panel's hold as below: a Bokeh pane sets its figure's classes itself,
        # which Bokeh accepts on a served page only while Panel dispatches the events
        with pn.io.hold():
            app._computing(view.__name__, -1)
        raise
    finally:
        _ON_LOOP.reset(token)
    with pn.io.hold():      # one message: the spinner off, the figures patched
        app._computing(view.__name__, -1)
        for change in later:
            change()
        return _show(app, view, out, inplace, updates)


def _has_controls(out: Any, kept: set) -> bool:
    """Whether a view's output holds widgets a user acts on, made by this computation
    (not tables, downloads, nor the app's :meth:`App.kept` controls)."""
    if not isinstance(out, pn.viewable.Viewable):
        return False
    passive = (pn.widgets.Tabulator, pn.widgets.FileDownload)
    return any(isinstance(o, pn.widgets.Widget) and not isinstance(o, passive)
               and id(o) not in kept for o in out.select())


def guarded(view: Callable) -> Callable:
    """A view that shows why there is nothing to show (no data, an error) as text.

    On a served page the view is computed in a worker thread and returned as a
    coroutine, which Panel awaits on the event loop: the loop (every other session)
    never waits for a computation, the page changes only on the loop, and when a
    setting changes again before a view is ready Panel cancels the superseded
    evaluation (and a result computed for outdated parameters is dropped), so the page
    always ends on the latest setting. A view of :attr:`App.cached_views` whose results
    are all in memory is computed on the loop instead (cheap, and the page is then
    built or changed in one message). Elsewhere (a notebook, a script, a test) the view
    is computed in place.
    """
    @functools.wraps(view)
    def wrapper(self, *args, **kwargs):
        if on_session():
            # the output computed while the page was built, unless a setting changed
            values, out = self._preloaded.pop(view.__name__, (None, None))
            if out is not None and _unchanged(self, values):
                return out
            if view.__name__ in self.cached_views:
                try:
                    return _in_place(view, self, *args, **kwargs)
                except NotCached:
                    pass
            return _in_worker(view, self, *args, **kwargs)
        return _shown(view, self, *args, **kwargs)
    return wrapper


#: button groups whose selected button is the strong one: outlined, the selected ones
#: filled with the accent colour and lettered white (Panel's solid groups show the
#: selected one lighter; its outline style letters it dark on the fill).
SELECTED_STRONG = ", ".join(f":host(.outline) {group}.bk-btn.bk-btn-primary.bk-active{hover}"
                            for group in ("", ".bk-btn-group ") for hover in ("", ":hover")
                            ) + " { color: #ffffff; }"
TOGGLE_STYLE = {kind: {"color": "primary", "variant": "outline",
                       "stylesheets": [SELECTED_STRONG]}
                for kind in (pn.widgets.RadioButtonGroup, pn.widgets.CheckButtonGroup,
                             pn.widgets.Toggle)}


class App(pn.viewable.Viewer):
    """An app over one data set: parameters, views, and the page around them.

    Parameters
    ----------
    data : DataFrame or str, optional
        The user's table (any columns: numbers are discretised, identifiers and free
        text left out), or the name of a bundled data set or network. Default: the
        app's bundled default.
    target : str, optional
        The class column (default: the table's declared or last usable column).
    **params
        Any parameter of the app (see ``App.param``).

    Subclasses set :attr:`title`, :attr:`description` and :attr:`controls`, declare
    their parameters, and write views as ``@param.depends("data", ...)`` methods listed
    by :meth:`views`.
    """

    #: the page's title and the landing page's text.
    title: ClassVar[str] = "App"
    description: ClassVar[str] = ""
    #: the app's own parameters shown in the sidebar, in order (the data's come first).
    controls: ClassVar[tuple] = ()
    #: widget type per parameter, where Panel's default is not the right one.
    widget_types: ClassVar[dict] = {}
    #: bundled defaults.
    default_source: ClassVar[str] = DATASET
    default_dataset: ClassVar[str] = "vote"
    default_network: ClassVar[str] = "asia"
    #: how the bundled data sets' numbers are cut: ("mdl", 5) or ("equal-frequency", bins).
    bundled_binning: ClassVar[tuple] = ("mdl", 5)
    #: the class node of a network's samples (else its last node).
    network_targets: ClassVar[dict] = {}
    #: settings that :meth:`warm` computes (the first page's), for bnexplore.warmup.
    warm_settings: ClassVar[tuple] = ({},)
    #: views whose every heavy step is a :func:`~bnexplore.apps._cache.cached` result:
    #: on a served page they are computed on the event loop when those results are in
    #: memory (no worker, no spinner, the page built with them), else in a worker.
    cached_views: ClassVar[tuple] = ()

    source = param.Selector(default=DATASET, objects=list(SOURCES),
                            doc="Where the data come from.")
    dataset = param.Selector(default="vote", objects=dataset_names(), label="Data set")
    network = param.Selector(default="asia", objects=network_names())
    sample_size = param.Selector(default=1000, objects=SAMPLE_SIZES,
                                 doc="Rows sampled from the network.")
    target = param.Selector(default=None, objects=[], allow_None=True, check_on_set=False,
                            label="Class", doc="The class column.")
    binning = param.Selector(default="mdl", objects=list(BINNINGS),
                             doc="How continuous columns of your data are cut.")
    bins = param.Integer(default=3, bounds=(2, 10), doc="Equal-frequency bins.")
    data = param.ClassSelector(class_=Data, precedence=-1, doc="The data every view reads.")
    upload_status = param.String(default="", precedence=-1,
                                 doc="What became of the last uploaded file.")
    kernels = param.String(default="not started", precedence=-1,
                           doc="The kernels' warm-up (bnexplore.warmup.status()).")
    presentation = param.Boolean(default=False, label="Presentation mode",
                                 doc="Projector sizes: fonts of at least 18 px, thicker arcs.")

    def __init__(self, data: pd.DataFrame | str | None = None, target: str | None = None,
                 **params: Any):
        _private.keep_validation()          # before any picture is drawn or sent
        params.setdefault("source", self.default_source)
        params.setdefault("dataset", self.default_dataset)
        params.setdefault("network", self.default_network)
        self._table: tuple[pd.DataFrame, str] | None = None
        self._busy = True
        if isinstance(data, str):
            if data in self.param.network.objects and data not in self.param.dataset.objects:
                params.update(source=NETWORK, network=data)
            else:
                params.update(source=DATASET, dataset=data)
        elif data is not None:
            if not isinstance(data, pd.DataFrame):
                raise TypeError(f"data must be a DataFrame or a bundled name, got "
                                f"{type(data).__name__}")
            self._table = (data, str(data.attrs.get("name") or "your data"))
            params["source"] = USER
        self._view_panes: dict[str, weakref.WeakSet] = {}   # view name -> its panes
        self._preloaded: dict[str, tuple] = {}   # view name -> (its values, its output)
        self._under_way: dict[str, int] = {}                 # view name -> computations
        self._figures: dict = {}     # (view name, place) -> figures.Shown, served pages
        self._kept: dict = {}        # name -> a Panel object made once (App.kept)
        self._kept_ids: set = set()  # ids of the objects inside them
        self._mains: weakref.WeakSet = weakref.WeakSet()   # the main areas shown (main())
        self._design = None          # the design of the page showing the app (template())
        super().__init__(**params)
        if target is not None:
            self.target = target
        self._busy = False
        self._load(keep_target=target is not None or "target" in params)
        self.param.watch(self._on_data_parameters, list(DATA_PARAMETERS))

    # ------------------------------------------------------------------ data
    def dependent(self, data: Data) -> dict:
        """The parameters that follow the data (bounds, values): set with the data.

        Override to change bounds (``self.param.n.bounds = ...``) and return the values
        to set in the same update as ``data`` (e.g. ``{"n": min(self.n, hi)}``).
        """
        return {}

    def _on_data_parameters(self, *events) -> None:
        if self._busy:
            return
        changed = {e.name for e in events}
        self._load(keep_target="target" in changed or not changed & _IDENTITY)

    def _candidates(self) -> tuple[list, str | None]:
        """The class columns offered and the default one, for the current source."""
        if self.source == USER:
            if self._table is None:
                return [], None
            raw = self._table[0]
            left = left_out_columns(raw)
            return class_candidates(raw, left), default_target(raw, left)
        base = self._bundled()
        default = base.target
        if self.source == NETWORK:
            default = self.network_targets.get(self.network, default)
        return base.columns, default

    def _bundled(self) -> Data:
        if self.source == DATASET:
            return _bundled(DATASET, self.dataset, 0, *self.bundled_binning)
        return _bundled(NETWORK, self.network, int(self.sample_size))

    def _prepare(self, target: str | None) -> Data:
        if self.source == USER:
            if self._table is None:
                return no_data(NOT_IN_LINK)
            raw, name = self._table
            return user_data(raw, name, target, self.binning, int(self.bins))
        base = self._bundled()
        if target == base.target:
            return base
        return Data(base.frame, target, base.label, key=f"{base.key}|target={target}",
                    bundled=True, notes=base.notes, cut_points=base.cut_points)

    def _load(self, keep_target: bool) -> None:
        """Build ``data`` from the data parameters; set it and its dependents at once."""
        try:
            candidates, default = self._candidates()
            target = self.target if keep_target and self.target in candidates else default
            data = self._prepare(target)
        except Exception as exc:  # noqa: BLE001 - the views show why
            candidates = candidates if "candidates" in locals() else []
            target = locals().get("target")
            data = no_data(f"{type(exc).__name__}: {exc}")
        self._busy = True
        try:
            self.param.target.objects = list(candidates)
            updates = dict(target=target, data=data)
            if data.frame is not None:
                updates.update(self.dependent(data))
            self.param.update(**updates)
        finally:
            self._busy = False

    def set_table(self, table: pd.DataFrame, name: str = "your data",
                  target: str | None = None) -> None:
        """Use the user's ``table`` (a new upload): the same app, on the new data."""
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"table must be a DataFrame, got {type(table).__name__}")
        self._table = (table, str(name))
        self._busy = True
        try:
            self.param.update(source=USER, target=target)
        finally:
            self._busy = False
        self._load(keep_target=target is not None)

    def load_file(self, content: bytes, filename: str) -> None:
        """Read an uploaded CSV/ARFF file (parsed, never executed) and use it.

        A file that cannot be read leaves the data as they were and says why in
        ``upload_status``.
        """
        try:
            name = check_upload(content, filename)
            table = read_upload(content, name)
        except Exception as exc:  # noqa: BLE001 - shown next to the file input
            self.upload_status = f"Cannot use this file ({type(exc).__name__}): {exc}"
            return
        self.upload_status = f"{name}: {len(table)} rows, {table.shape[1]} columns read."
        self.set_table(table, name)

    # ------------------------------------------------------------------ views
    def views(self) -> list:
        """The app's views (methods or Panel objects), top to bottom. Override."""
        return []

    @param.depends("data", "upload_status")
    def data_view(self) -> pn.viewable.Viewable:
        """The data in one line, and the notes of their preparation."""
        d = self.data
        parts = []
        if self.upload_status:
            parts.append(f"*{md_text(self.upload_status)}*")
        if d is None or d.frame is None:
            parts.append(f"**No data**: {md_text(d.error if d else '')}")
        else:
            parts.append(f"<strong class='bnx-source'>{md_text(d.label)}</strong>: "
                         f"{len(d.frame):,} rows, "
                         f"{len(d.features)} features, class {md_strong(d.target)} "
                         f"({len(d.classes)} values: {md_join(d.classes, max_items=12)})")
            parts.extend(f"*Note*: {md_text(n)}" for n in d.notes)
            if not d.bundled and d.cut_points:
                parts.append("Cut points of the continuous columns: " + "; ".join(
                    f"{md_strong(c)}: {', '.join(f'{x:.4g}' for x in v)}"
                    for c, v in d.cut_points.items()))
        return pn.pane.Markdown("\n\n".join(parts), css_classes=["bnx-data"], margin=(0, 10),
                                sizing_mode="stretch_width")

    @param.depends("kernels")
    def kernels_view(self) -> pn.pane.Markdown:
        """Says so while numba compiles the kernels for the first time (a first start)."""
        compiling = self.kernels == "compiling"
        return pn.pane.Markdown(PREPARING_TEXT if compiling else "", visible=compiling,
                                css_classes=["bnx-kernels"], margin=(0, 10))

    def _pane(self, view: Any) -> Any:
        if callable(view) and not isinstance(view, pn.viewable.Viewable):
            # served, a view's spinner is the app's (App._computing): Panel's would be
            # switched on and off at every change, two messages per view
            name = getattr(view, "__name__", None)
            defer = on_session() and not self._preload(view, name)
            pane = pn.panel(view, defer_load=defer, lazy=True,
                            loading_indicator=not on_session(),
                            sizing_mode="stretch_width", css_classes=["bnx-view"])
            if name is not None:
                self._view_panes.setdefault(name, weakref.WeakSet()).add(pane)
            return pane
        return view

    def _preload(self, view: Any, name: str | None) -> bool:
        """On a served page, compute a view of :attr:`cached_views` whose results are in
        memory while the page is built: the page is sent with it, instead of a
        placeholder that the view replaces once the page has loaded (a second message,
        and Bokeh walks the document again). False when a result is not in memory."""
        if name not in self.cached_views or not hasattr(view, "__func__"):
            return False
        raw = inspect.unwrap(view.__func__)          # under param.depends and guarded
        try:
            self._preloaded[name] = (_own_parameters(raw, self), _in_place(raw, self))
        except (NotCached, param.Skip):
            return False
        return True

    def on_loop(self, change: Callable[[], None]) -> None:
        """``change()``, a change of the app's parameters or widgets asked for by a view:
        now, or, when the view is computed in a worker thread for a served page, on the
        event loop with the view's output (in the same message, and never a page's
        widget changed from a thread)."""
        later = _ON_LOOP.get()
        if later is None:
            change()
        else:
            later.append(change)

    def kept(self, name: str, make: Callable[[], pn.viewable.Viewable]) -> pn.viewable.Viewable:
        """``make()``, made once per app and returned again after: controls that a view
        shows keep their callbacks, and the view is updated in place."""
        obj = self._kept.get(name)
        if obj is None:
            obj = self._kept[name] = make()
            self._kept_ids.update(id(o) for o in obj.select())
        return obj

    def _computing(self, name: str, change: int) -> None:
        """Count the computations of view ``name`` under way (on the event loop).

        While any view computes, the main area carries the class ``bnx-busy`` (one
        message when the first starts and one when the last ends). A view's own spinner
        shows only when its computation lasts over :data:`SPINNER_DELAY_S`: each change
        of a page is a message that Bokeh serialises against the whole document, and a
        move to a computed setting is over before a spinner would be seen.
        """
        self._under_way[name] = n = self._under_way.get(name, 0) + change
        busy = any(self._under_way.values())
        for main in self._mains:
            if ("bnx-busy" in main.css_classes) != busy:
                main.css_classes = ["bnx-main", "bnx-busy"] if busy else ["bnx-main"]
        if n == 0:
            for pane in self._view_panes.get(name, ()):
                if pane.loading:
                    pane.loading = False
        elif change > 0:
            spin = functools.partial(self._spin, name)
            doc = pn.state.curdoc
            if doc is not None and doc.session_context is not None:
                # a session's callback runs with its document locked: a view shown in a
                # Bokeh pane passes the spinner's classes on to its figure at once
                doc.add_timeout_callback(spin, int(SPINNER_DELAY_S * 1000))
            else:
                asyncio.get_running_loop().call_later(SPINNER_DELAY_S, spin)

    def _spin(self, name: str) -> None:
        if self._under_way.get(name, 0) > 0:
            for pane in self._view_panes.get(name, ()):
                pane.loading = True

    def glossary_view(self) -> pn.Card:
        """Every abbreviation of :mod:`bnexplore.glossary`, spelled out and defined (a
        collapsed card at the foot of the page)."""
        from bnexplore.glossary import glossary_table

        return pn.Card(table(glossary_table(), "glossary", page_size=50,
                             stylesheets=self.table_styles()), title="Glossary",
                       collapsed=True, css_classes=["bnx-glossary"], sizing_mode="stretch_width")

    def main(self) -> pn.Column:
        """The views in a column (projector text size in presentation mode), then the
        glossary."""
        big = self.param.presentation.rx().rx.where(PRESENTATION_STYLES, {})
        main = pn.Column(self.kernels_view, self._pane(self.data_view),
                         *[self._pane(v) for v in self.views()], self.glossary_view(),
                         styles=big, sizing_mode="stretch_width", css_classes=["bnx-main"])
        self._mains.add(main)
        return main

    # ------------------------------------------------------------------ controls
    def widget(self, name: str) -> pn.widgets.Widget:
        """The widget of parameter ``name`` (its type from :attr:`widget_types`)."""
        kind = self.widget_types.get(name)
        p = self.param[name]
        if kind is None:
            return pn.panel(p, sizing_mode="stretch_width")
        return kind.from_param(p, sizing_mode="stretch_width", **TOGGLE_STYLE.get(kind, {}))

    def data_controls(self) -> pn.Column:
        """The data's widgets and the file input."""
        src = self.param.source.rx()
        radio = TOGGLE_STYLE[pn.widgets.RadioButtonGroup]
        source = pn.widgets.RadioButtonGroup.from_param(self.param.source, **radio,
                                                        sizing_mode="stretch_width")
        dataset = pn.widgets.Select.from_param(self.param.dataset, visible=src == DATASET,
                                               sizing_mode="stretch_width")
        network = pn.widgets.Select.from_param(self.param.network, visible=src == NETWORK,
                                               sizing_mode="stretch_width")
        size = pn.widgets.DiscreteSlider.from_param(self.param.sample_size,
                                                    visible=src == NETWORK,
                                                    sizing_mode="stretch_width")
        target = pn.widgets.Select.from_param(self.param.target, sizing_mode="stretch_width")
        binning = pn.widgets.RadioButtonGroup.from_param(self.param.binning, visible=src == USER,
                                                         **radio, sizing_mode="stretch_width")
        bins = pn.widgets.IntSlider.from_param(
            self.param.bins, sizing_mode="stretch_width",
            visible=(src == USER) & (self.param.binning.rx() == "equal-frequency"))
        uid = f"bnx-upload-{next(_UPLOAD_IDS)}"
        upload = pn.widgets.FileInput(accept=".csv,.arff,.txt,.tsv", sizing_mode="stretch_width",
                                      css_classes=["bnx-upload", uid])
        guard = UploadGuard(max_bytes=UPLOAD_MAX_BYTES, target_class=uid, width=0, height=0,
                            margin=0)

        def _on_file(event):
            if event.new:
                self.load_file(event.new, upload.filename or "upload.csv")

        def _on_refused(event):
            info = event.new or {}
            name, size = file_name(info.get("name") or "upload"), int(info.get("size") or 0)
            exc = (ValueError(f"the file {name!r} is empty: upload a CSV or ARFF file with "
                              f"data") if size == 0 else size_error(name, size, UPLOAD_MAX_BYTES))
            self.upload_status = f"Cannot use this file (ValueError): {exc}"

        upload.param.watch(_on_file, "value")
        guard.param.watch(_on_refused, "refused")
        return pn.Column(source, dataset, network, size,
                         pn.pane.Markdown(f"Or upload a CSV / ARFF file (at most "
                                          f"{UPLOAD_MAX_BYTES / 1e6:g} MB):",
                                          margin=(5, 10, 0, 10)),
                         upload, guard, binning, bins, target, sizing_mode="stretch_width")

    def reset(self, *_: Any) -> None:
        """Restore the defaults of the app's own settings (:attr:`controls`) and leave
        presentation mode; the data stay."""
        for name in [*self.controls, "presentation"]:
            self._set_from_link(name, self.param[name].default)   # one out of bounds: kept

    def display_controls(self) -> pn.Column:
        """The presentation-mode toggle and the reset button."""
        toggle = pn.widgets.Toggle.from_param(self.param.presentation,   # on: filled
                                              **TOGGLE_STYLE[pn.widgets.Toggle],
                                              css_classes=["bnx-presentation"],
                                              sizing_mode="stretch_width")
        reset = pn.widgets.Button(label="Reset settings", color="default",
                                  css_classes=["bnx-reset"], sizing_mode="stretch_width")
        reset.on_click(self.reset)
        return pn.Column(toggle, reset, sizing_mode="stretch_width")

    def sidebar(self) -> pn.Column:
        """The data's controls, then the app's own, then presentation mode and reset."""
        own = [self.widget(p) for p in self.controls]
        return pn.Column(pn.pane.Markdown("### Data", margin=(0, 10)), self.data_controls(),
                         *([pn.pane.Markdown("### Settings", margin=(10, 10, 0, 10))] + own
                           if own else []),
                         pn.pane.Markdown("### Display", margin=(10, 10, 0, 10)),
                         self.display_controls(), sizing_mode="stretch_width")

    def __panel__(self) -> pn.viewable.Viewable:
        """Inline (a notebook): the controls beside the views, no template."""
        return pn.Row(pn.Column(self.sidebar(), width=320), self.main(),
                      sizing_mode="stretch_width")

    # ------------------------------------------------------------------ serving
    def url_parameters(self) -> list[str]:
        """The parameters a link carries (their names are the query's names)."""
        return [*DATA_PARAMETERS, *self.controls, "presentation"]

    def sync_url(self) -> None:
        """Sync the parameters with the page's address (served pages only)."""
        loc = pn.state.location
        if loc is None or not on_session():
            return
        loc.sync(self, {p: p for p in self.url_parameters()}, on_error=self.apply_query)

        # the address bar holds a complete link: every setting is written once the page
        # has loaded, and again whenever the address lacks one. The browser reports the
        # address it opened when it connects, and that report can arrive after the page
        # has loaded: it then replaced the complete link (a page at "?app=..." only)
        def complete(*_: Any) -> None:
            query = self.query()
            if not query.keys() <= set(parse_qs(loc.search.lstrip("?"), keep_blank_values=True)):
                loc.update_query(**query)

        def loaded() -> None:
            complete()
            loc.param.watch(complete, "search")
        pn.state.onload(loaded)

    def query(self) -> dict[str, str]:
        """The link's query: every URL parameter, serialised as Panel's location does."""
        out = {}
        for p in self.url_parameters():
            v = getattr(self, p)
            if v is None:
                continue
            v = self.param[p].serialize(v)
            out[p] = v if isinstance(v, str) else json.dumps(v)
        return out

    def apply_query(self, values: dict) -> None:
        """Apply settings read from a link, each that is valid, data parameters first.

        A value the parameter refuses (unknown option, out of bounds) is ignored and
        the current value stays.
        """
        order = [p for p in self.url_parameters() if p in values]
        self._busy = True           # the data are built once, from all their parameters
        try:
            for p in order:
                if p in DATA_PARAMETERS:
                    self._set_from_link(p, values[p])
        finally:
            self._busy = False
        self._load(keep_target=True)
        for p in order:
            if p not in DATA_PARAMETERS:
                self._set_from_link(p, values[p])

    def _set_from_link(self, name: str, value: Any) -> None:
        current = getattr(self, name)
        if isinstance(value, (int, float)) and isinstance(current, str):
            value = str(value)      # a data set called "1" stays a name
        try:
            setattr(self, name, value)
        except Exception:  # noqa: BLE001 - refused (unknown option, out of bounds): kept
            pass

    def follow_kernels(self) -> None:
        """Follow the kernels' warm-up (:mod:`bnexplore.warmup`) in ``kernels``."""
        from bnexplore import warmup

        stop = warmup.watch(lambda status: setattr(self, "kernels", status))
        self.kernels = warmup.status()
        if on_session():
            pn.state.on_session_destroyed(lambda ctx: stop())

    def template(self) -> pn.template.FastListTemplate:
        """The served page: the app in the bnexplore template, its settings in the link."""
        self.sync_url()
        self.follow_kernels()
        self._design = DESIGN
        return template(self.title, main=[self.main()], sidebar=[self.sidebar()],
                        description=glossed(self.description))

    def servable(self, title: str | None = None, location: bool = True,
                 area: str = "main", target: str | None = None) -> "App":
        """Serve the app in its template (``panel serve``); returns the app."""
        # Bokeh recomputes the document's set of models on every JS callback added to a
        # model of it (Panel's links, one per slider label); frozen, it does so once
        doc = pn.state.curdoc
        with doc.models.freeze() if doc is not None else contextlib.nullcontext():
            self.template().servable(title=title or self.title)
        return self

    # ------------------------------------------------------------------ warm-up
    def results(self) -> list:
        """The heavy results of the current settings (what the views read). Override to
        list the cached computations; by default every view is built."""
        return [view() for view in self.views() if callable(view)]

    @classmethod
    def warm(cls, frame: pd.DataFrame) -> None:
        """Compute :meth:`results` for each of :attr:`warm_settings` on ``frame``.

        :mod:`bnexplore.warmup` calls it on a tiny frame, so that every kernel the app
        calls is compiled with the argument types a real call gives.
        """
        for settings in cls.warm_settings:
            app = cls(frame, target=frame.attrs.get("target"), **settings)
            if app.data.frame is None:
                raise ValueError(f"{cls.__name__}.warm: {app.data.error}")
            app.results()

    # ------------------------------------------------------------------ helpers
    def _filename(self, name: str) -> str:
        stem = f"{self.title}-{getattr(self.data, 'label', '')}-{name}"
        return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in stem)[:100]

    def csv(self, frame: pd.DataFrame, name: str) -> pn.widgets.FileDownload:
        """A CSV download of ``frame`` named after the app, the data and ``name``."""
        return download_csv(frame, self._filename(name))

    def csv_table(self, frame: pd.DataFrame, name: str, **kwargs: Any) -> pn.Column:
        """A read-only table of ``frame`` with its CSV download (projector text in
        presentation mode)."""
        kwargs["stylesheets"] = self.table_styles(kwargs.get("stylesheets", ()))
        return table(frame, self._filename(name), **kwargs)

    def table_styles(self, extra: Any = ()) -> Any:
        """A table's stylesheets, ``extra`` and the projector text size
        (:data:`bnexplore.viz.TABLE_CSS`) in presentation mode: a reactive value, so the
        table follows the toggle without its view being computed again."""
        from bnexplore.viz import TABLE_CSS

        extra = list(extra)
        return self.param.presentation.rx().rx.where([*extra, TABLE_CSS], extra)

    def dag_pane(self, plot: Any) -> pn.Column:
        """A responsive structure drawing (:func:`bnexplore.viz.dag_plot`) that follows
        the window's width but is never squeezed narrower than its boxes need
        (:func:`~bnexplore.viz.graphs.plot_size`), which would push labels out of their
        boxes: on a narrower window it scrolls sideways in its own panel."""
        from bnexplore.viz.graphs import plot_size

        least, _ = plot_size(plot)
        # a CSS least width: Panel would pass a min_width on to every enclosing layout,
        # which would widen the page instead of scrolling here. It is the inner column's:
        # the picture pane keeps its layout when the drawing changes (patched in place,
        # see figures._same_layout)
        inner = pn.Column(pn.pane.HoloViews(plot, sizing_mode="stretch_width"),
                          sizing_mode="stretch_width", styles={"min-width": f"{least}px"})
        return pn.Column(inner, scroll="x-auto", sizing_mode="stretch_width",
                         styles={"max-width": "100%"}, css_classes=["bnx-dag"])

    def wide_pane(self, plot: Any) -> pn.Column:
        """A fixed-size picture (e.g. a heat map of many variables) that scrolls
        sideways in its own panel when the window is narrower than it. The panel has
        no Panel sizing of its own (a CSS width), so the picture's width is not passed
        on to the enclosing layouts, which would widen the page."""
        return pn.Column(pn.pane.HoloViews(plot), sizing_mode=None, css_classes=["bnx-fixed"],
                         styles={"width": "100%", "overflow-x": "auto"})

    def dag_width(self, normal: int = 1000) -> int:
        """The width a structure drawing or heat map aims at: ``normal``, or in
        presentation mode :data:`PROJECTOR_MAIN_PX` (the main area of a 1024 px window
        beside the sidebar) if narrower. Long labels are cut to fit (the hover shows
        them whole), then wide layers wrap onto new ones; on a wider window the drawing
        stretches (:meth:`dag_pane`)."""
        return min(int(normal), PROJECTOR_MAIN_PX) if self.presentation else int(normal)

    def drawing(self, make: Callable[[], Any]) -> Any:
        """``make()``: a HoloViews picture of the view being computed. On a served page
        it is made once per setting and shared by every session showing that setting
        (:func:`~bnexplore.apps.figures.drawing`); ``make`` must depend only on the
        view's parameters, and nothing may change the picture it returns."""
        return figures.drawing(make)

    def look(self, plot: Any) -> Any:
        """``plot`` with projector fonts in presentation mode
        (:func:`bnexplore.viz.presentation`), else unchanged: for pictures that do not
        lay out boxes from their labels (curves, bars); views calling it depend on
        ``presentation``."""
        if not self.presentation:
            return plot
        from bnexplore.viz import presentation

        return presentation(plot)
