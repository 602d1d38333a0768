"""Pictures rendered once per setting and shared by every session of the server.

A HoloViews picture costs twice on every move of a slider: building the elements
(a layered DAG layout can take a second) and rendering them into Bokeh models (about
half a second for a DAG, a few tenths for a heat map). Bokeh models belong to one
document, so a session cannot show another session's models, and all of this runs
under one interpreter lock: 30 students moving to the same setting queue 30 such
renders behind each other.

Here a picture is built and rendered once per *setting* (a hashable key), in the
calling worker thread, and kept as the JSON of a Bokeh document in a shared LRU
(:func:`_common.shared_cache`). A session gets its own copy of the models by
deserialising that JSON, which costs a small fraction of the render; the copy's
model ids get a suffix of their own, so a session that comes back to a setting never
meets the ids of models it showed before. A failed build is cached like any result
of :func:`_common.cached` and raised again for every session.

Bokeh draws on a canvas in the browser and all interaction of these pictures (hover,
pan, zoom, save) is client-side, so the copy behaves exactly as the picture rendered
by a HoloViews pane.
"""
from __future__ import annotations

import itertools
import json
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Hashable

import panel as pn

from _common import shared_cache

#: settings whose rendered pictures are kept (a DAG is 50-150 kB of JSON).
RENDER_CACHE_SIZE = 192

# HoloViews keeps global state while it renders (the current backend, option trees):
# one render at a time (all of it holds the interpreter lock anyway)
_RENDER_LOCK = threading.Lock()
_COPIES = itertools.count(1)
# a reference to a model in Bokeh's serialised document: {"id":"p1234"} or the
# object's own "id" field; column names and values are never serialised this way
_MODEL_ID = re.compile(r'"id":"([^"]+)"')


@dataclass(frozen=True)
class RenderedPicture:
    """A picture rendered once: its Bokeh document as JSON and the sizes panes need."""

    doc_json: str
    least_width: int | None = None
    height: int | None = None


def render(plot: Any, least_width: int | None = None, height: int | None = None
           ) -> RenderedPicture:
    """Render a HoloViews ``plot`` with the Bokeh backend into a :class:`RenderedPicture`."""
    import holoviews as hv
    from bokeh.document import Document

    # a document of its own: left to itself, HoloViews would render into curdoc(),
    # which Panel makes the calling session's document (changed here off its lock)
    doc = Document()
    with _RENDER_LOCK:
        model = hv.renderer("bokeh").get_plot(plot, doc=doc).state
    doc.add_root(model)
    return RenderedPicture(json.dumps(doc.to_json(deferred=False), separators=(",", ":")), least_width, height)


def bokeh_copy(picture: RenderedPicture) -> Any:
    """A fresh Bokeh model tree of ``picture``, for one session's document."""
    from bokeh.document import Document

    suffix = f"-s{next(_COPIES)}"
    text = _MODEL_ID.sub(lambda m: f'"id":"{m.group(1)}{suffix}"', picture.doc_json)
    doc = Document.from_json(json.loads(text))
    (model,) = doc.roots
    doc.remove_root(model)     # detached: the session's document adopts it
    return model


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
        plot = make_plot(*args)
        width, height = sizes(plot) if sizes is not None else (None, None)
        return render(plot, width, height)

    # Bokeh runs an app file as a new module per session: the key names the function
    # by file and name, never by the (per-session) function object
    key = (make_plot.__code__.co_filename, make_plot.__qualname__, args)
    return shared_cache("rendered-pictures", RENDER_CACHE_SIZE).compute(key, build)


def shared_dag_pane(make_plot: Callable[..., Any], *args: Hashable) -> pn.Column:
    """:func:`_common.dag_pane` of the :func:`bnexplore.viz.dag_plot` picture
    ``make_plot(*args)``, rendered once for all sessions."""
    from bnexplore.viz.graphs import plot_size

    pic = rendered(make_plot, *args, sizes=plot_size)
    pane = pn.pane.Bokeh(bokeh_copy(pic), sizing_mode="stretch_width", height=pic.height,
                         styles={"min-width": f"{pic.least_width}px",
                                 "max-width": f"{int(pic.least_width * 1.5)}px"})
    return pn.Column(pane, scroll="x-auto", sizing_mode="stretch_width",
                     height=pic.height + 30, css_classes=["bnx-dag"])


def shared_fixed_pane(make_plot: Callable[..., Any], *args: Hashable) -> pn.Column:
    """:func:`_common.fixed_pane` of the fixed-size picture ``make_plot(*args)``,
    rendered once for all sessions."""
    pane = pn.pane.Bokeh(bokeh_copy(rendered(make_plot, *args)), sizing_mode="fixed")
    return pn.Column(pane, scroll="x-auto", sizing_mode="stretch_width", css_classes=["bnx-fixed"])


def shared_pane(make_plot: Callable[..., Any], *args: Hashable, **options: Any) -> pn.pane.Bokeh:
    """A Bokeh pane (``options`` as for :class:`panel.pane.Bokeh`) of the picture
    ``make_plot(*args)``, rendered once for all sessions."""
    return pn.pane.Bokeh(bokeh_copy(rendered(make_plot, *args)), **options)
