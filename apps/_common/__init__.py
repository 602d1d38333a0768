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
* First start: the first request of a server process starts compiling bnexplore's
  numba kernels in a background thread (:func:`start_kernel_warm_up`); while numba
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
"""
from __future__ import annotations

import sys
from pathlib import Path

# The plotting stack is imported here, once, by the thread that loads the app: views
# are computed in worker threads, and two threads importing a package for the first
# time can meet Python's import-deadlock detector, which hands one of them the
# half-initialised module ("module 'holoviews' has no attribute 'Path'").
import holoviews  # noqa: F401
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend)

_APPS = str(Path(__file__).resolve().parent.parent)
if _APPS not in sys.path:  # so that callbacks (and upload workers) can import _common later
    sys.path.insert(0, _APPS)

from .caching import TRANSIENT_ERRORS, SharedLRU, cached, shared_cache  # noqa: E402
from .pages import (ACCENT, APPS_DIR, RESERVED_QUERY, SYSTEM_FONT, THUMBNAILS_DIR,  # noqa: E402
                    AppInfo, app_url, copy_link_button, discover_apps, download_csv,
                    export_figures_buttons, home_url, is_directory_mode, make_template,
                    no_url, read_app_info, routed_app, sync_url, url_widgets)
from .params import PARAMETERS, param_slider  # noqa: E402
from .sources import (DATASET, NETWORK, SAMPLE_SIZES, DataSource, cut_points_markdown,  # noqa: E402
                      describe_source, load_data)
from .text import md_join, md_strong, md_text, table_titles  # noqa: E402
from .uploads import (UPLOAD_MAX_BYTES, UPLOAD_MAX_COLUMNS,  # noqa: E402
                      UPLOAD_MAX_DECLARED_VALUES, UPLOAD_MAX_MEMORY, UPLOAD_MAX_VALUES,
                      UPLOAD_PREFIX, UPLOAD_TIMEOUT_S, UPLOAD_WORKERS, PreparedUpload,
                      UploadJob, UploadResult, _UPLOADS, _UPLOADS_LOCK, _upload_guard_class,
                      check_upload, prepare_upload, process_upload, read_upload, store_upload,
                      warm_up_upload_workers)
from .views import (COMPUTING_TEXT, PREPARING_TEXT, SHOWN_VIEW, VIEW_THREADS,  # noqa: E402
                    BackgroundView, background, DAG_SCROLL_BAR_PX, dag_column, dag_pane, dag_sizes,
                    error_box, fixed_column, fixed_pane, guarded, live_session,
                    on_document, pending_text, reactive, serve, start_kernel_warm_up,
                    view_pool, widget)

# the first request of a server process (this package is imported by every app and by
# the landing page) starts compiling the kernels in the background
start_kernel_warm_up()
