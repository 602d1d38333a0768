"""Shared helpers for the bnexplore Panel apps (no algorithms here), one module per job.

===============  ============================================================================
:mod:`.pages`    app discovery, routing, shareable URLs, export buttons, the template
:mod:`.text`     user text shown literally (``md_text`` and the helpers built on it)
:mod:`.views`    views off the event loop (``reactive``), the view wrapper ``guarded``, panes
:mod:`.caching`  results shared by every session (``cached``, ``shared_cache``)
:mod:`.uploads`  uploaded files: checks, parsing, preparation, worker processes
:mod:`.sources`  bundled data, network samples, uploads (``DataSource``, ``load_data``)
:mod:`.params`   the one declaration of the parameter ranges (``param_slider``)
===============  ============================================================================

Apps import the names from here (``from _common import ...``): each app puts its own
folder on ``sys.path``, so this package is found when ``panel serve apps/`` runs them.

Conventions every app in ``apps/`` follows
------------------------------------------
* A module docstring whose first line is the app's title and whose next lines are a
  two-line description (or module-level ``TITLE`` / ``DESCRIPTION`` string constants).
  ``apps/main.py`` reads these with :mod:`ast` to build the landing page, so adding an
  app never needs an edit to ``main.py``.
* A ``create_app()`` function that returns the page (use :func:`make_template`), and at
  the bottom::

      if __name__.startswith("bokeh"):
          serve(create_app)

* Heavy results are cached with :func:`cached` (an LRU cache keyed on the settings and
  shared by all sessions), and views
  are built with :func:`reactive` so that a spinner shows while they recompute.
* First start: the first app loaded by a server process, or the landing page once
  shown, starts compiling bnexplore's numba kernels in the background
  (:func:`start_kernel_warm_up`); while numba
  compiles for the first time (empty cache), a view's placeholder reads
  :data:`PREPARING_TEXT` instead of :data:`COMPUTING_TEXT`.

* Shareable links: :func:`make_template` syncs every sidebar widget with the URL query
  string (``?max_in_degree=2&score=BDeu``), so a link reproduces the view; opt a widget
  out with :func:`no_url`. The sidebar also gets "Export" buttons that save every
  figure of the page as PNG or SVG (Bokeh's own renderer, in the browser); tables get
  a CSV button with :func:`download_csv`.
* :class:`DataSource` includes an upload of a CSV/ARFF file (parsed by
  :mod:`bnexplore.data`, never executed), choice of target and MDL discretisation;
  uploaded data reach the apps through :func:`load_data` like a bundled data set.
* User text is text: every string a user controls (file, column and class names,
  query values, messages quoting them) goes into a Markdown/HTML/Alert pane through
  :func:`md_text` (or :func:`md_strong`, :func:`md_join`, and the helpers built on
  them: :func:`error_box`, :func:`describe_source`, :func:`cut_points_markdown`);
  a table whose column titles name user data gets ``titles=table_titles(frame)``.
  Plot titles are literal in :mod:`bnexplore.viz` (``literal_title``); Bokeh draws
  titles, labels and ticks on a canvas and escapes hover values.

Files and folders whose name starts with ``_`` (like this one) are helpers, not apps.

Loading: the landing page needs only the page's names (:mod:`.pages`, :mod:`.text`,
``error_box``), which are light; every other name (the views, caches, data sources,
uploads, parameters) is bound on first use, which also imports the plotting stack
(HoloViews) in the calling thread, the one that loads the app. So the landing page
answers without HoloViews, pandas or bnexplore, and an app pays for them once.
"""
from __future__ import annotations

import sys
import threading
from importlib import import_module
from pathlib import Path

_APPS = str(Path(__file__).resolve().parent.parent)
if _APPS not in sys.path:  # so that callbacks (and upload workers) can import _common later
    sys.path.insert(0, _APPS)

# the landing page's names: light (Panel and the standard library only)
from .pages import (ACCENT, APPS_DIR, LECTURE, RESERVED_QUERY, SYSTEM_FONT, THUMBNAILS_DIR,  # noqa: E402
                    AppInfo, app_url, copy_link_button, discover_apps, download_csv,
                    export_figures_buttons, home_url, is_directory_mode, make_template,
                    no_url, read_app_info, routed_app, sync_url, url_widgets)
from .text import md_join, md_strong, md_text, table_titles  # noqa: E402
from .views import error_box, live_session, start_kernel_warm_up  # noqa: E402

#: the apps' names, bound on first use (:func:`_load_app_stack`): module -> names.
_APP_STACK = {
    "caching": ("TRANSIENT_ERRORS", "SharedLRU", "cached", "shared_cache"),
    "params": ("PARAMETERS", "param_slider"),
    "sources": ("DATASET", "NETWORK", "SAMPLE_SIZES", "DataSource", "cut_points_markdown",
                "describe_source", "load_data"),
    "uploads": ("UPLOAD_MAX_BYTES", "UPLOAD_MAX_COLUMNS", "UPLOAD_MAX_DECLARED_VALUES",
                "UPLOAD_MAX_MEMORY", "UPLOAD_MAX_VALUES", "UPLOAD_PREFIX", "UPLOAD_TIMEOUT_S",
                "UPLOAD_WORKERS", "PreparedUpload", "UploadJob", "UploadResult", "_UPLOADS",
                "_UPLOADS_LOCK", "_upload_guard_class", "check_upload", "prepare_upload",
                "process_upload", "read_upload", "store_upload", "warm_up_upload_workers"),
    "views": ("COMPUTING_TEXT", "PREPARING_TEXT", "SETTLE_S", "SHOWN_VIEW", "VIEW_THREADS",
              "BackgroundView",
              "background", "changing", "DAG_SCROLL_BAR_PX", "dag_column", "dag_pane", "dag_sizes",
              "fixed_column", "fixed_pane", "guarded", "live_session", "on_document",
              "pending_text", "reactive", "serve", "taken_values", "view_pool", "widget"),
}
_LAZY = {name: module for module, names in _APP_STACK.items() for name in names}
_LOAD_LOCK = threading.RLock()


def _load_app_stack() -> None:
    """Import the plotting stack and bind every name of :data:`_APP_STACK` (once)."""
    with _LOAD_LOCK:
        if "serve" in globals():
            return
        # The plotting stack is imported here, once, by the thread that loads the app
        # (its ``from _common import ...``): views are computed in worker threads, and
        # two threads importing a package for the first time can meet Python's
        # import-deadlock detector, which hands one of them the half-initialised module
        # ("module 'holoviews' has no attribute 'Path'").
        import holoviews  # noqa: F401
        import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend)
        # the apps' pictures: views import these lazily, in several threads at once
        # (a view once got "cannot import name 'roc_plot' from 'bnexplore.viz'")
        for viz in ("", ".averaging", ".clustering", ".forests", ".graphs", ".ismb", ".mixtures",
                    ".orders"):
            import_module(f"bnexplore.viz{viz}")

        for module, names in _APP_STACK.items():
            mod = import_module(f".{module}", __name__)
            for name in names:
                globals()[name] = getattr(mod, name)
    # an app's views need the kernels: start the warm-up now (once per process)
    start_kernel_warm_up()


def __getattr__(name: str):
    if name in _LAZY:
        _load_app_stack()
        return globals()[name]
    if name in _APP_STACK:      # a submodule not imported yet (``_common.params``)
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def start_kernel_warm_up_when_shown() -> None:
    """Start the kernel warm-up (:func:`start_kernel_warm_up`) once this session's page is
    shown in the browser: the landing page answers first, then the kernels compile
    (first start) while the visitor picks an app. An app starts it at once (when it
    binds its names, :func:`_load_app_stack`); outside a server nothing starts."""
    if live_session() is None:
        return
    try:
        import panel as pn
        pn.state.onload(start_kernel_warm_up)
    except Exception:  # noqa: BLE001 - then at once
        start_kernel_warm_up()
