"""The whole dashboard on one data set (:func:`bnexplore.apps.show`) and the served pages
of ``apps/``."""
from __future__ import annotations

from importlib import import_module
from typing import Any

import panel as pn
import param

from . import APPS, app_class
from ._page import template

#: threads of Panel's pool when ``panel serve`` was not given ``--num-threads``.
DEFAULT_THREADS = 4


def use_threads() -> None:
    """Run the callbacks of served pages in Panel's thread pool (``pn.config.nthreads``).

    The plotting stack is imported first, here (the thread that builds the page): two
    pool threads importing a package for the first time can meet Python's import
    deadlock detector (``_DeadlockError`` on ``narwhals``), a view then fails.
    """
    import holoviews  # noqa: F401
    import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend)
    import_module("bnexplore.viz")
    for viz in ("averaging", "clustering", "forests", "graphs", "ismb", "mixtures", "orders"):
        import_module(f"bnexplore.viz.{viz}")
    if pn.config.nthreads is None:
        pn.config.nthreads = DEFAULT_THREADS


def serve_app(name: str, **params: Any):
    """Serve app ``name`` in the current ``panel serve`` session; returns the app."""
    use_threads()
    from bnexplore import warmup
    warmup.start_warm_up()      # once a process: kernels compile (or load) in the background
    pn.extension("tabulator", sizing_mode="stretch_width", notifications=False)
    app = app_class(name)(**params)
    app.servable()
    return app


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
        use_threads()
        template("bnexplore", main=[self.__panel__()], sidebar=[], share=False,
                 home=False).servable(title=title or "bnexplore")
        return self


__all__ = ["Dashboard", "serve_app", "use_threads"]
