"""The whole dashboard on one data set (:func:`bnexplore.apps.show`) and the served pages
of ``apps/``."""
from __future__ import annotations

from importlib import import_module
from typing import Any

import panel as pn
import param

from . import APPS, PAGES, app_class
from .page import template

#: what the apps' views import, imported by the thread that builds the first page: two
#: pool threads importing a package for the first time can meet Python's import deadlock
#: detector or a half-initialised module (``_DeadlockError`` on ``narwhals``; "module
#: 'scipy' has no attribute '_lib'"), and a view then fails.
PRELOAD = ("holoviews", "holoviews.plotting.bokeh", "scipy.special", "scipy.stats",
           "scipy.optimize", "scipy.sparse", "scipy.spatial.distance", "scipy.cluster.hierarchy",
           "sklearn.base", "sklearn.model_selection", "sklearn.metrics",
           "sklearn.utils.validation", "bnexplore.data", "bnexplore.datasets",
           "bnexplore.networks", "bnexplore.scores", "bnexplore.search", "bnexplore.averaging",
           "bnexplore.classifiers", "bnexplore.metrics", "bnexplore.forests",
           "bnexplore.mixtures", "bnexplore.clustering", "bnexplore.ismb",
           "bnexplore.experiments.compare", "bnexplore.viz", "bnexplore.viz.averaging",
           "bnexplore.viz.clustering", "bnexplore.viz.forests", "bnexplore.viz.graphs",
           "bnexplore.viz.ismb", "bnexplore.viz.mixtures", "bnexplore.viz.orders")


def preload() -> None:
    """Import :data:`PRELOAD` in this thread, before any worker thread computes a view.

    Served pages run their callbacks on the event loop and compute their views in
    worker threads (see :func:`bnexplore.apps._base.guarded`), not in Panel's thread
    pool (``--num-threads``): the pool runs two changes of one session at once, and the
    one that finishes last (possibly the older setting) is the one the page shows.
    """
    for name in PRELOAD:
        import_module(name)


def serve_app(name: str, **params: Any):
    """Serve app ``name`` (or page, :data:`~bnexplore.apps.PAGES`) in the current
    ``panel serve`` session; returns the app."""
    if name in PAGES:
        pn.extension(sizing_mode="stretch_width", notifications=False)
        module, cls = PAGES[name]
        return getattr(import_module(f".{module}", __package__), cls)(**params).servable()
    preload()
    from bnexplore import warmup
    warmup.start_warm_up()      # once a process: kernels compile (or load) in the background
    _skip_document_checks()
    pn.extension("tabulator", sizing_mode="stretch_width", notifications=False)
    app = app_class(name)(**params)
    app.servable()
    return app


def _skip_document_checks() -> None:
    """Serve sessions without Bokeh's document validation (its documented setting,
    ``BOKEH_VALIDATE_DOC``): the checks walk every model of each new session, an
    eighth of the server's time to open one, and find nothing on pages whose models
    the tests check. Set ``BOKEH_VALIDATE_DOC=true`` to have them."""
    import os

    from bokeh.settings import settings

    if "BOKEH_VALIDATE_DOC" not in os.environ:
        settings.perform_document_validation.set_value(False)


class Dashboard(pn.viewable.Viewer):
    """Every app on the same data, one tab each (only the open tab computes).

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table or a bundled name (each app's default when omitted).
    target : str, optional
        The class column.
    apps : list of str, optional
        Names of :data:`bnexplore.apps.APPS` (default: all).

    Examples
    --------
    >>> import bnexplore as bx
    >>> dash = bx.apps.show("vote", apps=["structure"])
    >>> [type(a).__name__ for a in dash.apps]
    ['LearnStructure']
    """

    active = param.Integer(default=0, bounds=(0, None), doc="The open tab.")

    def __init__(self, data: Any = None, target: str | None = None, apps: list | None = None,
                 **params: Any):
        names = list(APPS) if apps is None else list(apps)
        for n in names:
            app_class(n)        # unknown names: ValueError before anything is built
        super().__init__(**params)
        self.apps = [app_class(n)(data, target=target) for n in names]

    def __panel__(self) -> pn.Tabs:
        tabs = pn.Tabs(*[(a.title, a) for a in self.apps], dynamic=True,
                       sizing_mode="stretch_width")
        tabs.param.watch(lambda e: setattr(self, "active", e.new), "active")
        return tabs

    def servable(self, title: str | None = None, **kwargs: Any) -> "Dashboard":
        """Serve the dashboard in the bnexplore template."""
        preload()
        template("bnexplore", main=[self.__panel__()], sidebar=[], share=False,
                 home=False).servable(title=title or "bnexplore")
        return self


__all__ = ["Dashboard", "preload", "serve_app"]
