"""The bnexplore apps as components: on your DataFrame, inline in Jupyter, or served::

    import bnexplore as bx
    app = bx.apps.OrderAveraging(df, target="Class")   # your table (or a bundled name)
    app                                  # in a notebook: the controls and the views
    app.servable()                       # in a file for ``panel serve``: the page
    bx.apps.show(df)                     # every app on your table, one tab each

Each app is a :class:`panel.viewable.Viewer` (:class:`~bnexplore.apps._base.App`) built
from a DataFrame (your table: numbers are discretised, identifier and free-text columns
left out with a note) or a bundled name. Its state is its parameters; a served page
keeps them in its address (``?max_parents=2&n=4``), so a link reproduces the view.

In a notebook, load Panel's resources once, inline so that nothing is fetched from the
internet: ``import panel as pn; pn.extension(inline=True)``.

How to add an app (one class)
-----------------------------
1. Write ``bnexplore/apps/my_app.py``: heavy results are module-level functions of the
   data and plain values, wrapped in :func:`~bnexplore.apps._cache.cached` (shared by
   every session; kept on disk for bundled data)::

       @cached
       def fit(data: Data, max_parents: int):
           return something_slow(data.frame, data.target, max_parents=max_parents)

2. The class: a title, a description, parameters declared once with their bounds, the
   names of those shown in the sidebar (``controls``; each is also a URL query name),
   and views as ``param.depends`` methods (pure functions of the parameters; the data
   are ``self.data``: ``.frame``, ``.target``, ``.label``)::

       class MyApp(App):
           title = "My app"
           description = "Two lines for the landing page."
           controls = ("max_parents",)
           warm_settings = ({"max_parents": 1},)      # what bnexplore.warmup computes
           max_parents = param.Integer(default=2, bounds=(1, 4))

           def dependent(self, data):      # optional: parameters that follow the data
               return {}

           def views(self):
               return [self.picture]

           @param.depends("data", "max_parents")
           @guarded                        # no data / an error: shown as text
           def picture(self):
               return pn.pane.HoloViews(plot(fit(self.data, self.max_parents)))

   Tables go through ``self.csv_table(frame, "name")`` (a CSV download comes with it).
   User text (column and file names) goes into Markdown through ``md_text``.
3. Register it in :data:`APPS` below, give it its place in the landing page's lecture
   order (:data:`~bnexplore.apps.landing.LECTURE`) and add ``apps/my_app.py`` with two
   lines::

       import bnexplore.apps as bxa
       bxa.serve("my_app")

Served with ``panel serve apps/``: callbacks run on the server's event loop, and every
view is computed in a worker thread (``_base.guarded``; a view superseded by a newer
setting is cancelled, so a page always ends on its latest setting), views
are filled in after the page loads (``defer_load``), and one computation per setting
serves every session.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

#: every app: the name of its served page (``apps/NAME.py``) -> (module, class).
APPS: dict[str, tuple[str, str]] = {
    "structure": ("structure", "LearnStructure"),
    "order_averaging": ("order_averaging", "OrderAveraging"),
    "all_orders": ("all_orders", "AllOrders"),
    "mixture_weights": ("mixture_weights", "MixtureWeights"),
    "forests": ("forests", "Forests"),
    "ismb_trace": ("ismb_trace", "ISMBTrace"),
    "clustering": ("clustering", "Clustering"),
    "compare": ("compare", "CompareClassifiers"),
    "edge_confidence": ("edge_confidence", "EdgeConfidence"),
    "ask_model": ("ask_model", "AskModel"),
}

#: pages that are no app (no data, no settings): name of the served page -> (module,
#: class); linked from the landing page, not given a card.
PAGES: dict[str, tuple[str, str]] = {
    "glossary": ("glossary", "GlossaryPage"),
}

_CLASSES = {cls: module for module, cls in [*APPS.values(), *PAGES.values()]}
__all__ = ["APPS", "PAGES", "App", "show", "serve", "app_class", *_CLASSES]


def app_class(name: str) -> type:
    """The class of app ``name`` (a key of :data:`APPS`)."""
    if name not in APPS:
        raise ValueError(f"unknown app {name!r}; apps are {sorted(APPS)}")
    module, cls = APPS[name]
    return getattr(import_module(f".{module}", __name__), cls)


def serve(name: str, **params: Any):
    """Serve app (or page) ``name`` in this ``panel serve`` session (the files of
    ``apps/``)."""
    from ._dashboard import serve_app
    return serve_app(name, **params)


def show(data: Any = None, target: str | None = None, apps: list | None = None, **params: Any):
    """Every app on your data, one tab each (see :class:`~bnexplore.apps._dashboard.Dashboard`)."""
    from ._dashboard import Dashboard
    return Dashboard(data, target=target, apps=apps, **params)


def __getattr__(name: str):
    if name in _CLASSES:
        value = getattr(import_module(f".{_CLASSES[name]}", __name__), name)
    elif name == "App":
        value = import_module("._base", __name__).App
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
