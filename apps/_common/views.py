"""Views off the event loop: the worker pool, :func:`reactive`, :func:`guarded` and panes.

A server runs every session's callbacks on one event loop; views are computed in a
pool of worker threads (:class:`BackgroundView`) and put in the page by a next-tick
callback of the session's document. Every view function is wrapped by
:func:`guarded` (an exception becomes an :func:`error_box`, the page keeps working).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import os
import sys
import threading
import time
from typing import Any, Callable

import panel as pn
from bokeh.core.serialization import Serializer
from bokeh.document.callbacks import invoke_with_curdoc
from bokeh.document.events import ColumnDataChangedEvent, DocumentPatchedEvent, ModelChangedEvent
from bokeh.model import Model
from bokeh.protocol.messages.patch_doc import patch_doc

from .caching import ON_COMPUTING, is_import_deadlock
from .text import md_text

_LOG = logging.getLogger("bnexplore.apps")


#: worker threads that compute the views of every session (see :func:`reactive`). Most
#: of them just wait (for a setting another view is computing, or for a numba kernel
#: that releases the GIL), so there are more of them than cores: a few long
#: computations must not take every thread from the sessions whose views are cheap.
VIEW_THREADS = 32
_POOL: Any = None
_POOL_LOCK = threading.Lock()


def _leave_a_core() -> None:
    """Numba kernels launched from this worker thread use all cores but one.

    A ``parallel=True`` kernel takes every core it is given (OpenMP threads even spin
    while they wait); on a small server one session's long fit would then starve the
    event loop and every other session. ``numba.set_num_threads`` is per thread, so
    this only affects the views' worker threads. If numba is not imported yet (views
    that only read cached results never import it), ``NUMBA_NUM_THREADS`` set by
    :func:`view_pool` bounds the kernels instead, without importing numba here.
    """
    numba = sys.modules.get("numba")
    if numba is None:
        return
    try:
        numba.set_num_threads(max(1, numba.config.NUMBA_NUM_THREADS - 1))
    except Exception:  # noqa: BLE001 - its threads cannot be set: defaults
        pass


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:     # not on Linux
        return os.cpu_count() or 1


def view_pool():
    """The thread pool that computes views off the server's event loop (one per server).

    Examples
    --------
    >>> view_pool() is view_pool()
    True
    """
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            from concurrent.futures import ThreadPoolExecutor

            if "numba" not in sys.modules:    # read when numba is imported (_leave_a_core)
                os.environ.setdefault("NUMBA_NUM_THREADS", str(max(1, _cores() - 1)))
            _POOL = ThreadPoolExecutor(max_workers=VIEW_THREADS, thread_name_prefix="bnx-view",
                                       initializer=_leave_a_core)
        return _POOL


def live_session(doc: Any = None) -> Any:
    """``doc`` (default: the current document) if it belongs to a live server session, else None.

    Outside a server (a notebook, a test, a script) there is no session: callers then
    compute in place.

    Examples
    --------
    >>> live_session() is None        # no server here
    True
    """
    doc = pn.state.curdoc if doc is None else doc
    return doc if doc is not None and getattr(doc, "session_context", None) is not None else None


@contextlib.contextmanager
def changing(doc: Any):
    """Changes of a session's page, on its event loop: ``doc`` current and held.

    Held, the changes reach the browser through Bokeh's own sender when the hold ends
    (one writer per socket, under its write lock). Unheld, Panel writes them itself
    and, when a socket is busy, queues them for a task that can find its "busy" flag
    already cleared by an earlier task and return: such a change stayed unsent until
    the session's next change, and then arrived after later ones (under 30 sessions a
    summary kept the previous setting now and then, or a view its spinner). Every
    callback of the apps that changes a page runs in this context.
    """
    from panel.io.state import set_curdoc

    if doc is None:                      # no session (a script, a test): nothing to send
        yield doc
        return
    with set_curdoc(doc):
        doc.hold("combine")
        try:
            yield doc
        finally:
            _send_held(doc)


def _send_held(doc: Any) -> None:
    """Bokeh's ``Document.unhold``, each change's message built without the page's table.

    Bokeh sends each held change in a message of its own, and each message starts its
    serialiser from a table of every model of the page (so that a model the browser
    has is sent as a reference): a third of the server's time under 30 sessions of
    Clustering (about 30 changes per move, 300 models). A change that holds no model
    (a number, a text, column data: nearly all of them) needs no table; its message is
    built without one and is the same message. The messages go out one per change and
    in Bokeh's order, through the session's pending writes (one message for all
    changes of a callback made BokehJS fail with "Size mismatch" on pictures whose
    column data changed length). Without that lock (no server session) this is
    Bokeh's ``unhold``.
    """
    session = getattr(getattr(doc, "session_context", None), "_session", None)
    pending = getattr(session, "_pending_writes", None)
    callbacks = doc.callbacks
    if pending is None or callbacks.hold_value is None:
        doc.unhold()
        return
    events = list(callbacks._held_events)
    callbacks._held_events = []
    doc.unhold()                      # what the callbacks below change is sent at once
    for event in events:
        if event.callback_invoker is not None:
            invoke_with_curdoc(doc, event.callback_invoker)
        for receiver, callback in list(callbacks._change_callbacks.items()):
            if receiver is session and isinstance(event, DocumentPatchedEvent):
                continue
            invoke_with_curdoc(doc, functools.partial(callback, event))
        if not isinstance(event, DocumentPatchedEvent):
            continue
        # a change the browser itself made is not echoed to it (Bokeh's rule); one
        # message for every browser of the session (Bokeh serialised one per browser,
        # and only the first got a new model in full)
        browsers = [connection for connection in list(session._subscribed_connections)
                    if not (connection is session._current_patch_connection
                            and event.setter is session)]
        if browsers:
            message = _patch_message(browsers[0], event)
            pending.extend(connection._socket.send_message(message) for connection in browsers)


def _patch_message(connection: Any, event: Any) -> Any:
    """The PATCH-DOC message of one change, as ``ServerConnection.send_patch_document``
    makes it, without the table of the page's models when the change holds none."""
    hint = getattr(event, "hint", None)
    plain = (type(event) in (ModelChangedEvent, ColumnDataChangedEvent)
             and (hint is None or type(hint) is ColumnDataChangedEvent)
             and not _holds_model(getattr(event, "new", None))
             and not _holds_model(getattr(event, "data", None))
             and not (hint is not None and _holds_model(hint.data)))
    if not plain:
        return connection.protocol.create("PATCH-DOC", [event])
    serializer = Serializer()
    message = patch_doc(patch_doc.create_header(), {}, {"events": serializer.encode([event])})
    message.add_buffers(*serializer.buffers)
    return message


def _holds_model(value: Any) -> bool:
    """Whether ``value`` is or contains a Bokeh model (in a dict, list, tuple or set).

    Called for every change sent: a column of labels is passed over without a call
    per text.
    """
    if isinstance(value, Model):
        return True
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, (list, tuple, set)):
        return False
    return any(_holds_model(v) for v in value if not isinstance(v, (str, int, float)))


def on_document(doc: Any, func: Callable[..., Any], *args: Any) -> bool:
    """Run ``func(*args)`` on the session's event loop with ``doc`` locked and current.

    The one thread-safe way to change a session's page from a worker thread (Bokeh's
    next-tick callback). Returns False if the session is gone.
    """
    def run() -> None:
        with changing(doc):
            func(*args)

    def add() -> None:
        try:
            doc.add_next_tick_callback(run)
        except Exception:  # noqa: BLE001 - the session was destroyed meanwhile
            pass

    # Bokeh's callback bookkeeping (sets, held events) is not made for other threads:
    # 30 sessions' worker threads adding callbacks while the loop ran others lost a
    # result now and then, and that view kept its spinner for good. Tornado's
    # add_callback is thread-safe: the callback is added on the loop's own thread.
    loop = _session_loop(doc)
    if loop is None:
        try:
            doc.add_next_tick_callback(run)
        except Exception:  # noqa: BLE001 - the session was destroyed meanwhile
            return False
        return True
    if getattr(doc, "session_context", None) is None:
        return False                     # destroyed (Bokeh drops the context)
    loop.add_callback(add)
    return True


def _session_loop(doc: Any) -> Any:
    """The IO loop of the server that serves ``doc``, or None outside a server."""
    try:
        return doc.session_context.server_context.application_context.io_loop
    except AttributeError:
        return None


#: a view's placeholder while its result is computed.
COMPUTING_TEXT = "Computing ..."
#: a view's placeholder while numba compiles kernels for the first time (empty cache).
PREPARING_TEXT = "Preparing the kernels (first start only) ..."


def start_kernel_warm_up() -> None:
    """Compile (or load from numba's cache) bnexplore's kernels in a background thread.

    Once per server process (:func:`bnexplore.warmup.start_warm_up`), at the first
    request: on a fresh install the kernels compile while the first visitor's page
    loads, instead of one by one as each view first needs them; on later starts they
    are loaded from the cache before a view asks. Outside a server nothing starts.
    """
    if live_session() is None:
        return
    try:
        from bnexplore import warmup
        warmup.start_warm_up()
    except Exception:  # noqa: BLE001 - a warm-up is an optimisation, never a failure
        pass


def pending_text() -> str:
    """:data:`PREPARING_TEXT` while kernels compile for the first time, else :data:`COMPUTING_TEXT`.

    Examples
    --------
    >>> pending_text() in (PREPARING_TEXT, COMPUTING_TEXT)
    True
    """
    try:
        from bnexplore import warmup
        return PREPARING_TEXT if warmup.status() == "compiling" else COMPUTING_TEXT
    except Exception:  # noqa: BLE001
        return COMPUTING_TEXT


def _watch_kernels(callback: Callable[[str], None]) -> Callable[[], None]:
    """``bnexplore.warmup.watch(callback)`` (a no-op unwatch when there is nothing to watch)."""
    try:
        from bnexplore import warmup
        if warmup.status() != "ready":
            return warmup.watch(callback)
    except Exception:  # noqa: BLE001
        pass
    return lambda: None


#: In a view's worker thread: the object its pane shows (None before its first result).
#: A view may return an object with an ``apply_in_place()`` method instead of a new
#: pane; it is then called on the event loop (document locked) to update what is shown.
#: A view that has not answered within this time shows Panel's loading spinner.
SPINNER_DELAY_MS = 250

SHOWN_VIEW: "contextvars.ContextVar[Any]" = contextvars.ContextVar("bnx_shown_view", default=None)


#: what a shown pane of each kind takes from a new one of the same kind and options
#: instead of being replaced: a text pane its text, a table its rows and height
_TAKES = ((pn.pane.Markdown, ("object",)), (pn.pane.HTML, ("object",)), (pn.pane.Alert, ("object",)),
          (pn.widgets.Tabulator, ("value", "height")))


def taken_values(shown: Any, out: Any) -> dict | None:
    """The values the shown pane ``shown`` takes from ``out``, a pane of the same kind and
    options, instead of being replaced by it (:data:`_TAKES`); None if it cannot.

    A new text (a summary under another setting) then costs the browser one changed
    value instead of a new model for every session.

    Examples
    --------
    >>> taken_values(pn.pane.Markdown("k = 2"), pn.pane.Markdown("k = 3"))
    {'object': 'k = 3'}
    >>> taken_values(pn.pane.Markdown("k = 2"), pn.pane.Markdown("k = 3", margin=0)) is None
    True
    """
    if type(shown) is not type(out):
        return None
    takes = next((keys for kind, keys in _TAKES if type(out) is kind), None)
    if takes is None:
        return None
    old, new = shown.param.values(), out.param.values()
    if any(old[k] != new[k] for k in new if k not in takes and k != "name"):
        return None
    return {k: new[k] for k in takes}


def _update_shown(shown: list, out: Any) -> bool:
    """Give the one pane a view shows (``shown``, its objects) the values of ``out``
    (:func:`taken_values`); returns whether it could."""
    values = taken_values(shown[0], out) if len(shown) == 1 else None
    if values is None:
        return False
    shown[0].param.update(**values)
    return True


#: how long a page build waits for its views' first results (seconds; environment
#: variable ``BNX_SETTLE_S``): results that are cached (a setting computed before, by
#: this server or - on disk - by an earlier one) come within a few tenths and are part
#: of the first page; the others are applied when they come, as after any change.
SETTLE_S = float(os.environ.get("BNX_SETTLE_S", "0.4"))
# the views made by the page being built in this context (see serve)
_BUILDING: "contextvars.ContextVar[list | None]" = contextvars.ContextVar("bnx_building",
                                                                          default=None)


class BackgroundView:
    """A pane whose content ``func`` computes in :func:`view_pool`, never on the event loop.

    A server runs every session's callbacks on one event loop; a view computed there
    makes every other session wait for it (and a page cannot even load meanwhile).
    Here a change of a dependency only marks the pane as loading (Panel's spinner)
    and hands the computation to a worker thread; the result is put in the page by a
    next-tick callback of the session's document (the thread-safe way to change a
    Bokeh document), so the loop stays free for other sessions.

    The first computation starts as soon as the page is built, while the browser is
    still loading it (a first visit's slowest seconds); a result that comes within
    :data:`SETTLE_S` (a cached setting) is part of the page the browser gets, a later
    one is applied once the page has loaded, unless a setting changed meanwhile (then
    the new setting is computed). Pages opened with settings in the URL compute those only.

    Changes that arrive while a computation runs are coalesced: when it finishes,
    only the latest settings are computed (a dragged slider costs two computations,
    not one per value passed), and a superseded result is never shown.

    Parameters
    ----------
    bound : callable
        A function bound to widgets/parameters (``pn.bind``); called with their
        current values in a worker thread. An exception becomes an :func:`error_box`.
    doc : bokeh.document.Document
        The session's document.
    **layout : dict
        Options of the :class:`panel.Column` that holds the result.
    """

    def __init__(self, bound: Callable, doc: Any, **layout: Any):
        import param

        self._bound = bound
        self._doc = doc
        self._gen = 0              # number of requests so far
        self._running = False      # a computation of this pane is in the pool
        self._scheduled = False    # a start is queued as a next-tick callback
        self._closed = False
        self._shown_gen = 0        # the request whose result is shown
        self._spinner_due = False  # a timeout will turn the spinner on if still busy
        # "Computing ...", or while numba compiles kernels for the first time (a fresh
        # install: up to a minute) a text that says why this first view takes long
        start_kernel_warm_up()
        self._placeholder = pn.pane.Markdown(pending_text(), css_classes=["bnx-pending"],
                                             min_height=60, margin=(5, 10))
        self._unwatch = _watch_kernels(self._kernels_changed)
        self.panel = pn.Column(self._placeholder, loading=True, **layout)
        self.panel.css_classes = [*self.panel.css_classes, "bnx-view"]
        deps = param.parameterized.resolve_ref(bound)
        by_owner: dict[int, list] = {}
        for p in deps:
            by_owner.setdefault(id(p.owner), []).append(p)
        for group in by_owner.values():
            group[0].owner.param.watch(self._request, [p.name for p in group])
        try:
            pn.state.on_session_destroyed(self._close)
        except Exception:  # noqa: BLE001 - only a courtesy to the pool
            pass
        # The first computation starts once the browser has loaded the page: a result
        # put in the document before the session's websocket is connected can miss
        # the browser (Panel dispatches such changes itself), so a fast, cached view
        # would keep its placeholder. By then the URL values are applied too, so a
        # shared link computes its own setting, not the defaults first.
        self._loaded = False
        # The browser takes seconds to load a first page: compute the defaults meanwhile
        # (once this page is built) and apply the result once it has loaded - unless a
        # setting changed first (a shared link's URL values do: such a page computes
        # its own setting only). A page built by serve() waits a moment for these
        # results: a cached one is then part of the page itself (settle).
        self._prefetch: Any = None
        self._changed = False
        self._settled = False      # the page was built with this view's first result
        from .pages import RESERVED_QUERY   # (pages imports this module)

        if not set(pn.state.session_args or {}) - RESERVED_QUERY:
            building = _BUILDING.get()
            if building is not None:     # serve() starts it once the page is built
                building.append(self)
            else:
                on_document(doc, self.prefetch)
        try:
            pn.state.onload(self._on_load)
        except Exception:  # noqa: BLE001 - no onload support: start at once
            self._on_load()

    def prefetch(self, computing: Any = None) -> Any:
        """Start computing the first result (the page's settings); returns its future,
        or None if there is nothing to prefetch (loaded, changed or closed).
        ``computing`` (a :class:`threading.Event`) is set if a result the view needs is
        not cached (computed, not read)."""
        if not (self._loaded or self._changed or self._closed):
            ctx = contextvars.copy_context()
            if computing is not None:
                ctx.run(ON_COMPUTING.set, computing.set)
            self._prefetch = view_pool().submit(ctx.run, self._compute)
            return self._prefetch
        return None

    def settle(self) -> None:
        """Show the prefetched first result now, while the page is built (it is done)."""
        fut = self._prefetch
        if fut is None or self._changed or not fut.done():
            return
        out = _result(fut)
        if callable(getattr(out, "apply_in_place", None)):
            return                     # (never for a placeholder) applied on load
        self._prefetch, self._settled = None, True
        self._show(out)

    def _kernels_changed(self, _status: str) -> None:
        # any thread (the warm-up's or a compiling one): only a next-tick callback may
        # touch the document
        if not self._closed and not on_document(self._doc, self._show_pending_text):
            self._closed = True

    def _show_pending_text(self) -> None:
        if self._placeholder in self.panel.objects:
            self._placeholder.object = pending_text()

    # all methods below but _compute and _deliver run on the event loop (document locked)
    def _on_load(self) -> None:
        self._loaded = True
        if not (self._settled and not self._changed):
            self._request()

    def _request(self, *events: Any) -> None:
        if events:                     # a setting changed: the prefetched result is stale
            self._changed, self._prefetch = True, None
        self._gen += 1
        # the spinner only for a computation that takes a while: a cached setting
        # answers within a few milliseconds, and each switch of the spinner costs every
        # session a message (30 students moving at once: 60 per view)
        if not self._spinner_due:
            self._spinner_due = True
            self._doc.add_timeout_callback(self._show_spinner, SPINNER_DELAY_MS)
        if self._loaded and not (self._running or self._scheduled):
            self._scheduled = True
            on_document(self._doc, self._start)

    def _show_spinner(self) -> None:
        self._spinner_due = False
        if not self._closed and (self._running or self._scheduled or self._gen != self._shown_gen):
            with changing(self._doc):
                self.panel.loading = True

    def _start(self) -> None:
        self._scheduled = False
        if self._running or self._closed:
            return
        self._running = True
        gen = self._gen
        fut, self._prefetch = self._prefetch, None
        if fut is None or self._changed:
            ctx = contextvars.copy_context()   # pn.state.curdoc etc. in the worker thread
            fut = view_pool().submit(ctx.run, self._compute)
        fut.add_done_callback(functools.partial(self._deliver, gen=gen))

    def _compute(self) -> Any:
        import param
        from panel.io.state import set_curdoc

        # Panel objects made here belong to this session (pn.state.curdoc is a
        # context variable: this thread sees the document set here, nothing else)

        # what the pane shows now: a picture view may update it in place (apps/_render.py)
        SHOWN_VIEW.set(self.panel.objects[0] if self.panel.objects else None)
        with set_curdoc(self._doc):
            for attempt in range(4):
                try:
                    return param.parameterized.resolve_value(self._bound)
                except Exception as exc:  # noqa: BLE001 - shown in the page, never a traceback
                    # two threads importing the same modules for the first time (a
                    # lazily imported plotting stack) can meet Python's import-deadlock
                    # detector; the other thread finishes the import, so try again
                    if is_import_deadlock(exc) and attempt < 3:
                        time.sleep(0.2 * (attempt + 1))
                        continue
                    return error_box(exc)
            return None

    def _deliver(self, fut: Any, gen: int) -> None:
        # worker thread: the document may only be changed through on_document
        if not self._closed and not on_document(self._doc, self._apply, fut, gen):
            self._closed = True

    def _apply(self, fut: Any, gen: int) -> None:
        self._running = False
        if self._closed:
            return
        if gen != self._gen:           # settings changed meanwhile: compute the latest
            self._start()
            return
        self._show(_result(fut))
        self._shown_gen = gen

    def _show(self, out: Any) -> None:
        """Put the result ``out`` in the pane: in place of the placeholder, into the
        shown picture (``apply_in_place``) or the shown text (:func:`_update_shown`),
        else as the pane's new content."""
        first = self._placeholder in self.panel.objects
        self._unwatch()                # the placeholder is gone for good
        if callable(getattr(out, "apply_in_place", None)):
            out.apply_in_place()       # the shown picture takes the new values
        elif first or not _update_shown(self.panel.objects, out):
            self.panel.objects = [out if isinstance(out, pn.viewable.Viewable) else pn.panel(out)]
        if self.panel.loading:
            self.panel.loading = False

    def _close(self, *_: Any) -> None:
        self._closed = True
        self._unwatch()


def _result(fut: Any) -> Any:
    """A view's computed result, or the error box of what stopped it (e.g. the pool
    was shut down; the view's own errors are error boxes already)."""
    try:
        return fut.result()
    except BaseException as exc:  # noqa: BLE001
        return error_box(exc)


def background(compute: Callable[[], Any], apply: Callable[[Any], None]) -> Callable[..., None]:
    """A callback that runs ``compute()`` in :func:`view_pool` and then ``apply(result)``.

    For widget watchers that need a heavy (cached) result to adjust other widgets,
    e.g. a slider's range: ``compute`` runs in a worker thread, ``apply`` on the
    session's event loop (a next-tick callback, document locked), and only the
    result of the latest call is applied. An exception in ``compute`` is dropped (the
    views show it). Outside a server session both run in place.

    Examples
    --------
    >>> got = []
    >>> update = background(lambda: 6 * 7, got.append)
    >>> update(); got
    [42]
    """
    latest = [0]
    waiting = [False]         # a start is registered for when the page has loaded

    def on_load() -> None:
        # Panel may run onload callbacks before pn.state.loaded turns true: this one
        # must not check it again (it would re-register itself for ever)
        waiting[0] = False
        run(loaded=True)

    def run(*_events: Any, loaded: bool = False) -> None:
        doc = live_session()
        if doc is not None and not (loaded or pn.state.loaded):
            if not waiting[0]:        # see BackgroundView: results go to a loaded page
                waiting[0] = True
                pn.state.onload(on_load)
            return
        if doc is None:
            try:
                out = compute()
            except Exception:  # noqa: BLE001 - the views show the error
                return
            apply(out)
            return
        latest[0] += 1
        gen = latest[0]

        def _apply(fut: Any) -> None:
            if gen != latest[0]:
                return                    # a newer call is on its way
            try:
                out = fut.result()
            except Exception:  # noqa: BLE001 - the views show the error
                return
            apply(out)

        view_pool().submit(contextvars.copy_context().run, compute).add_done_callback(
            lambda fut: on_document(doc, _apply, fut))

    return run


def reactive(func: Callable, *args: Any, **kwargs: Any) -> pn.viewable.Viewable:
    """``pn.bind(func, *args, **kwargs)`` shown in a pane with a loading spinner.

    This is the progress-indicator pattern of the apps: while ``func`` recomputes
    (after a widget change) the pane greys out and shows Panel's spinner. In a
    server session ``func`` runs in a worker thread (:class:`BackgroundView`), so one
    session's long computation never blocks the others; outside a server (a
    notebook, a test) it runs in place, as with ``pn.bind``. ``func`` may also be
    an already bound function (``src.bind(...)``) with no further arguments.
    Extra layout options go through ``pane_options``.
    """
    opts = kwargs.pop("pane_options", {})
    prebound = hasattr(func, "_dinfo") and not (args or kwargs)
    bound = func if prebound else pn.bind(func, *args, **kwargs)
    doc = live_session()
    if doc is None:
        return pn.panel(bound, loading_indicator=True, **opts)
    return BackgroundView(bound, doc, **opts).panel


#: room below a DAG picture for the horizontal scroll bar of a narrow window, in pixels
DAG_SCROLL_BAR_PX = 30


def dag_sizes(least_width: int, height: int) -> dict:
    """Size options of a DAG picture's pane (see :func:`dag_pane`).

    Examples
    --------
    >>> dag_sizes(400, 300)["styles"]["max-width"]
    '600px'
    """
    return {"height": height,
            "styles": {"min-width": f"{least_width}px", "max-width": f"{int(least_width * 1.5)}px"}}


def dag_column(pane: Any) -> pn.Column:
    """The scrolling panel of the page width that holds a DAG picture's ``pane``."""
    return pn.Column(pane, scroll="x-auto", sizing_mode="stretch_width",
                     height=pane.height + DAG_SCROLL_BAR_PX, css_classes=["bnx-dag"])


def fixed_column(pane: Any) -> pn.Column:
    """The sideways-scrolling panel of the page width that holds a fixed-size picture."""
    return pn.Column(pane, scroll="x-auto", sizing_mode="stretch_width", css_classes=["bnx-fixed"])


def dag_pane(plot: Any) -> pn.Column:
    """A responsive :func:`bnexplore.viz.dag_plot` picture in a panel of the page width.

    The picture stretches with the page (up to 1.5 times its natural width) but never
    below the width its node boxes need (no two labels overlap); on a narrower window
    it scrolls inside its own panel instead of widening the page. The least width is
    set in CSS: as a Bokeh ``min_width`` it would widen every enclosing layout.
    """
    from bnexplore.viz.graphs import plot_size

    pane = pn.pane.HoloViews(plot, backend="bokeh", linked_axes=False,
                             sizing_mode="stretch_width", **dag_sizes(*plot_size(plot)))
    return dag_column(pane)


def fixed_pane(plot: Any, **kwargs: Any) -> pn.Column:
    """A fixed-size HoloViews picture in a panel of the page width that scrolls sideways
    on a narrow window (the page itself never scrolls sideways).

    The pane takes the picture's own size (``sizing_mode="fixed"``), so HoloViews has
    no responsive mode to give up and logs no warning about it.
    """
    return fixed_column(pn.pane.HoloViews(plot, backend="bokeh", linked_axes=False,
                                          sizing_mode="fixed", **kwargs))


def error_box(exc: BaseException) -> pn.pane.Alert:
    """A readable error panel instead of a stack trace.

    The message is shown as literal text (:func:`md_text`): errors often quote what a
    user typed or uploaded (a column name, a ``?app=`` value).
    """
    # the page gets the message, the server's log the traceback
    _LOG.warning("a view shows %s: %s", type(exc).__name__, exc, exc_info=exc)
    return pn.pane.Alert(f"**{type(exc).__name__}**: {md_text(exc)}", alert_type="danger")


def serve(factory: Callable[[], Any]) -> Any:
    """Build a page with ``factory()`` and mark it servable.

    The build runs inside ``curdoc.models.freeze()``: every loading-indicator link
    otherwise makes Bokeh re-scan the whole model graph, which cost seconds per page
    load; frozen, the scan happens once at the end. Before the page is marked
    servable, the first results of its views are waited for up to :data:`SETTLE_S`
    (:func:`_settle_views`).
    """
    doc = pn.state.curdoc
    ctx = doc.models.freeze() if doc is not None else contextlib.nullcontext()
    views: list = []
    token = _BUILDING.set(views)
    try:
        with ctx:
            page = factory()
            _settle_views(views)
            page.servable()
    finally:
        _BUILDING.reset(token)
    return page


def _settle_views(views: list) -> None:
    """Start the first computation of every view of a page being built and put the
    results that come within :data:`SETTLE_S` in the page itself (one document for
    the browser to draw, instead of a placeholder and a change per view).

    The wait ends as soon as one view computes instead of reading a cached result:
    the page then goes out at once with its placeholders (the event loop that builds
    it serves every other session too, 30 of whom may open a new setting at once)."""
    from concurrent.futures import wait

    computing = threading.Event()
    pending = [fut for fut in (view.prefetch(computing) for view in views) if fut is not None]
    deadline = time.monotonic() + SETTLE_S
    while pending and not computing.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        pending = list(wait(pending, timeout=min(left, 0.02)).not_done)
    for view in views:
        view.settle()


def guarded(func: Callable) -> Callable:
    """Wrap a view function so that an exception becomes an :func:`error_box`.

    The one wrapper of every view of the apps (``@guarded`` above each ``*_view``
    function): a view holds no error handling of its own. The failing panel shows the
    message; the rest of the page keeps working. The same holds whether the view runs
    in a worker thread (:func:`reactive` in a server) or in place (a notebook, a test).

    Examples
    --------
    >>> f = guarded(lambda x: 1 / x)
    >>> type(f(0)).__name__
    'Alert'
    """
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - shown in the page
            if is_import_deadlock(exc):
                raise              # two threads' first imports: the view tries again
            return error_box(exc)
    return wrapper


# --------------------------------------------------------------------------- data
def widget(cls: type, label: str, **kwargs: Any) -> pn.widgets.Widget:
    """Create a widget with a visible label, across Panel versions.

    ``label=`` where the widget has it (else ``name=``); ``color=`` is passed on as
    ``button_type=`` on Panel versions without ``color``.
    """
    key = "label" if "label" in cls.param else "name"
    if "color" in kwargs and "color" not in cls.param:
        kwargs["button_type"] = kwargs.pop("color")
    return cls(**{key: label}, **kwargs)
