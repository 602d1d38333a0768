"""Shared helpers for the bnexplore Panel apps (no algorithms here).

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

Files whose name starts with ``_`` (like this one) are helpers, not apps.
"""
from __future__ import annotations

import ast
import contextlib
import contextvars
import collections
import functools
import hashlib
import io
import itertools
import json
import re
import sys
import threading
import weakref
from urllib.parse import quote
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import panel as pn
# The plotting stack is imported here, once, by the thread that loads the app: views
# are computed in worker threads, and two threads importing a package for the first
# time can meet Python's import-deadlock detector, which hands one of them the
# half-initialised module ("module 'holoviews' has no attribute 'Path'").
import holoviews  # noqa: E402,F401
import holoviews.plotting.bokeh  # noqa: E402,F401  (registers the Bokeh backend)

APPS_DIR = Path(__file__).resolve().parent
if str(APPS_DIR) not in sys.path:  # so that callbacks can import _common after the run
    sys.path.insert(0, str(APPS_DIR))

#: accent colour of every page.
ACCENT = "#1f5f8b"
#: font stack used instead of a web font (the apps load nothing from the internet).
SYSTEM_FONT = ("system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, "
               "sans-serif")
#: sample sizes offered for network samples.
SAMPLE_SIZES = [100, 200, 500, 1000, 2000, 5000, 10000]
DATASET = "Data set"
NETWORK = "Network sample"
#: largest accepted upload, in bytes.
UPLOAD_MAX_BYTES = 5_000_000
#: most columns an uploaded file may have (the apps learn structures over all of them).
UPLOAD_MAX_COLUMNS = 100
#: most values one column of an upload may have: declared (ARFF) or distinct texts (CSV).
UPLOAD_MAX_VALUES = 1_000
#: most nominal values an uploaded ARFF header may declare over all its attributes.
UPLOAD_MAX_DECLARED_VALUES = 20_000
#: seconds an upload may take to be read and prepared before its worker is stopped
#: (the environment variable BNX_UPLOAD_TIMEOUT_S overrides it for a server).
UPLOAD_TIMEOUT_S = 30.0
#: memory an upload's worker process may add to what it starts with, in bytes.
UPLOAD_MAX_MEMORY = 2_000_000_000
#: prefix of the data-set names given to uploaded files.
UPLOAD_PREFIX = "upload: "
#: folder of the landing page's thumbnails (made by scripts/make_thumbnails.py).
THUMBNAILS_DIR = APPS_DIR / "thumbnails"



def _drop_web_font() -> None:
    """Stop the FAST design from linking a Google web font.

    The apps must work with no internet (a failed font request is also a browser console
    error), so pages use :data:`SYSTEM_FONT` instead. Panel reads the font link from the
    design *class* (``Fast._resources["font"]``), hence the class-level change.
    """
    try:
        from panel.theme.fast import Fast
    except ImportError:  # pragma: no cover - other Panel layouts
        return
    res = getattr(Fast, "_resources", None)
    if isinstance(res, dict) and "font" in res:
        Fast._resources = {k: v for k, v in res.items() if k != "font"}


_drop_web_font()


# --------------------------------------------------------------------------- discovery
@dataclass(frozen=True)
class AppInfo:
    """What the landing page shows about one app."""

    name: str         # file stem, also the URL path segment
    title: str
    description: str
    path: Path


def _str_constant(tree: ast.Module, name: str) -> str | None:
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        for t in targets:
            if (isinstance(t, ast.Name) and t.id == name and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str)):
                return node.value.value
    return None


def read_app_info(path: Path) -> AppInfo:
    """Title and description of an app file, read with :mod:`ast` (never imported).

    ``TITLE`` / ``DESCRIPTION`` constants win; otherwise the docstring's first line is the
    title and its next paragraph (keep it to about two lines) the description; otherwise
    the file name is used.

    Examples
    --------
    >>> info = read_app_info(APPS_DIR / "structure.py")
    >>> info.name
    'structure'
    """
    path = Path(path)
    try:   # every page load asks (routing, links): parse a file again only when it changes
        st = path.stat()
        return _read_app_info(path, st.st_mtime_ns, st.st_size)
    except OSError:
        return _read_app_info(path, 0, 0)


@functools.lru_cache(maxsize=256)
def _read_app_info(path: Path, _mtime_ns: int, _size: int) -> AppInfo:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, OSError):
        tree = ast.Module(body=[], type_ignores=[])
    doc = ast.get_docstring(tree) or ""
    lines = [ln.strip() for ln in doc.strip().splitlines()]
    doc_title = lines[0].rstrip(".") if lines else ""
    rest: list[str] = []
    for ln in lines[1:]:
        if not ln and rest:
            break
        if ln:
            rest.append(ln)
    title = _str_constant(tree, "TITLE") or doc_title or path.stem.replace("_", " ").title()
    description = _str_constant(tree, "DESCRIPTION") or " ".join(rest)
    return AppInfo(path.stem, title.strip(), description.strip(), path)


def discover_apps(apps_dir: Path = APPS_DIR) -> list[AppInfo]:
    """Every app in ``apps_dir``: ``*.py`` except ``main.py`` and ``_*.py``, sorted by name.

    Examples
    --------
    >>> "structure" in [a.name for a in discover_apps()]
    True
    """
    files = sorted(p for p in Path(apps_dir).glob("*.py")
                   if p.stem != "main" and not p.name.startswith("_"))
    return [read_app_info(p) for p in files]


# --------------------------------------------------------------------------- routing
def _request_path() -> str:
    ctx = getattr(pn.state.curdoc, "session_context", None) if pn.state.curdoc else None
    req = getattr(ctx, "request", None) if ctx is not None else None
    return str(getattr(req, "path", "") or "")


def routed_app() -> str:
    """Name in the ``?app=`` query argument of the current session ('' if none)."""
    args = pn.state.session_args or {}
    vals = args.get("app") or [b""]
    val = vals[0]
    return val.decode("utf-8", "replace") if isinstance(val, bytes) else str(val)


def is_directory_mode() -> bool:
    """True when served as ``panel serve apps/`` (a single Bokeh directory app).

    Then only ``main.py`` has a URL and the other apps are reached as ``?app=NAME``;
    with ``panel serve apps/*.py`` every app has its own URL ``/NAME``.
    """
    last = _request_path().rstrip("/").rsplit("/", 1)[-1]
    known = {"", "main", *(a.name for a in discover_apps())}
    return last not in known


def app_url(name: str) -> str:
    """Relative link to app ``name`` that works in both serving modes."""
    return f"?app={name}" if is_directory_mode() else f"./{name}"


def home_url() -> str:
    """Relative link back to the landing page."""
    if routed_app():  # directory mode: the landing page is this same path, no query
        last = _request_path().rstrip("/").rsplit("/", 1)[-1]
        return f"./{quote(last)}" if last else "./"
    return "./"


# --------------------------------------------------------------------------- URL state
_NO_URL: "weakref.WeakSet" = weakref.WeakSet()
#: query arguments that are not widget values (``app`` is the router's).
RESERVED_QUERY = frozenset({"app"})


def no_url(w):
    """Keep widget ``w`` out of the URL query string (returns ``w``)."""
    _NO_URL.add(w)
    return w


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


def _syncable(w) -> bool:
    skip = (pn.widgets.Button, pn.widgets.FileInput, pn.widgets.FileDownload)
    tabular = tuple(getattr(pn.widgets, n) for n in ("Tabulator", "DataFrame")
                    if hasattr(pn.widgets, n))
    return ("value" in w.param and not isinstance(w, skip + tabular)
            and w not in _NO_URL)


def url_widgets(objects: list) -> dict[str, pn.widgets.Widget]:
    """The widgets among (and inside) ``objects`` that go in the URL, by query name.

    The query name is the widget's label in lower case with ``_`` for other
    characters (``"Max in-degree"`` -> ``max_in_degree``); repeated labels get a
    suffix ``_2``, ``_3``. Buttons, file inputs, tables and widgets marked with
    :func:`no_url` are left out.

    Examples
    --------
    >>> w = widget(pn.widgets.IntSlider, "Max in-degree", start=1, end=5, value=3)
    >>> list(url_widgets([pn.Column(w)]))
    ['max_in_degree']
    """
    found: list = []

    def walk(obj):
        if isinstance(obj, pn.widgets.Widget):   # composite widgets are not entered
            yield obj
        elif isinstance(getattr(obj, "objects", None), list):
            for o in obj.objects:
                yield from walk(o)

    for obj in objects:
        for w in walk(obj):
            if _syncable(w) and all(w is not f for f in found):
                found.append(w)
    out: dict[str, pn.widgets.Widget] = {}
    for w in found:
        label = getattr(w, "label", None) if "label" in w.param else None
        base = _slug(label or w.name) or _slug(type(w).__name__)
        if base in RESERVED_QUERY:
            base += "_value"
        name, i = base, 1
        while name in out:
            i += 1
            name = f"{base}_{i}"
        out[name] = w
    return out


def _deserialize(w, value):
    try:
        return w.param["value"].deserialize(value)
    except Exception:  # noqa: BLE001
        return value


def _acceptable(w, value) -> bool:
    """Whether ``value`` (from a URL) is a valid value of widget ``w``."""
    opts = getattr(w, "options", None)
    if opts is not None and "options" in w.param:
        allowed = list(opts.values()) if isinstance(opts, dict) else list(opts)
        if isinstance(value, list):
            return all(v in allowed for v in value)
        return value in allowed
    if "start" in w.param and "end" in w.param and not isinstance(value, (list, tuple)):
        try:
            return w.start <= value <= w.end
        except TypeError:
            return False
    return True


def sync_url(objects: list) -> dict[str, pn.widgets.Widget]:
    """Sync the widgets of ``objects`` with the URL query string of this session.

    Values in the request's query are applied first, in sidebar order (a shared link
    reproduces the view; a value a widget would reject - an unknown option, out of
    range - is ignored and the default stays); then every change of a widget is
    written to the address bar (``pn.state.location``), and once the page has loaded
    all current values are, so the link is complete. Outside a server session
    nothing is synced.
    Returns the synced widgets by query name.
    """
    mapping = url_widgets(objects)
    if live_session() is None:
        return mapping
    loc = pn.state.location
    if loc is None:
        return mapping
    args = pn.state.session_args or {}
    for name, w in mapping.items():
        raw = (args.get(name) or [None])[0]
        if raw is None:
            continue
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        value = _deserialize(w, value)
        if isinstance(w.value, str) and not isinstance(value, str):
            value = text            # a data set called "1" stays a string
        if not _acceptable(w, value):
            continue                # unknown option, out of range: the default stays
        try:
            w.value = value
        except Exception:  # noqa: BLE001 - rejected by the widget: the default stays
            pass

    def _serialized(w) -> str:
        v = w.value
        try:
            v = w.param["value"].serialize(v)
        except Exception:  # noqa: BLE001
            pass
        return v if isinstance(v, str) else json.dumps(v)

    def _on_change(event, name) -> None:
        try:
            loc.update_query(**{name: _serialized(event.obj)})
        except Exception:  # noqa: BLE001 - the link is a convenience
            pass

    synced = {}
    for name, w in mapping.items():
        w.param.watch(functools.partial(_on_change, name=name), "value")
        synced[name] = w

    def _write_all() -> None:
        # once the page is loaded, write every current value: the link is complete
        try:
            loc.update_query(**{n: _serialized(w) for n, w in synced.items()
                                if w.value is not None})
        except Exception:  # noqa: BLE001
            pass

    try:
        pn.state.onload(_write_all)
    except Exception:  # noqa: BLE001
        pass
    return mapping


# --------------------------------------------------------------------------- export
_EXPORT_JS = """
const fmt = FMT;
const base = BASE;
const plots = [];
try {
  for (const v of Bokeh.index.query(v => v.model != null && v.model.x_range !== undefined
                                         && typeof v.export === "function")) {
    if (v.el && v.el.isConnected && v.bbox && v.bbox.width > 0) plots.push(v);
  }
} catch (err) { console.warn("bnexplore export:", err); }
if (!plots.length) { window.alert("There is no figure on this page yet."); return; }
let i = 0;
for (const v of plots) {
  i += 1;
  let title = "figure";
  try { if (v.model.title && v.model.title.text) title = v.model.title.text; } catch (e) {}
  const name = (base + "_" + i + "_" + title).replace(/[^A-Za-z0-9_.-]+/g, "_").slice(0, 90);
  v.export(fmt).to_blob().then((blob) => {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name + "." + fmt;
    document.body.appendChild(a);
    a.click();
    a.remove();
  });
}
"""

_COPY_LINK_JS = """
const url = window.location.href;
const done = () => { btn.label = "Link copied"; setTimeout(() => { btn.label = LABEL; }, 2000); };
if (navigator.clipboard && window.isSecureContext) {
  navigator.clipboard.writeText(url).then(done, () => window.prompt("Copy this link:", url));
} else {
  window.prompt("Copy this link:", url);
}
"""


def export_figures_buttons(basename: str = "bnexplore") -> pn.Row:
    """Two buttons that save every figure of the page as PNG or SVG files.

    The files are drawn in the browser by Bokeh itself (the same renderer as the
    toolbar's save tool; SVG through Bokeh's SVG canvas), one file per figure,
    named after the page and the figure's title.
    """
    base = _slug(basename) or "bnexplore"
    row = []
    for fmt in ("png", "svg"):
        b = pn.widgets.Button(name=f"Figures as {fmt.upper()}", button_type="light",
                              css_classes=[f"bnx-export-{fmt}"], sizing_mode="stretch_width")
        b.js_on_click(code=_EXPORT_JS.replace("FMT", json.dumps(fmt))
                      .replace("BASE", json.dumps(base)))
        row.append(b)
    return pn.Row(*row, sizing_mode="stretch_width")


def copy_link_button() -> pn.widgets.Button:
    """A button that copies the page address (with every setting) to the clipboard."""
    label = "Copy link to this view"
    b = pn.widgets.Button(name=label, button_type="light", css_classes=["bnx-copy-link"],
                          sizing_mode="stretch_width")
    b.js_on_click(args={"btn": b}, code=_COPY_LINK_JS.replace("LABEL", json.dumps(label)))
    return b


def download_csv(frame: Any, filename: str, label: str = "Download CSV"
                 ) -> pn.widgets.FileDownload:
    """A button that downloads a table as CSV.

    Parameters
    ----------
    frame : DataFrame or callable
        The table, or a function returning it (called at click time, so it follows
        the widgets).
    filename : str
        Name of the downloaded file (``.csv`` is added when missing).
    label : str
        Button text.

    Examples
    --------
    >>> import pandas as pd
    >>> b = download_csv(pd.DataFrame({"a": [1]}), "t")
    >>> b.filename
    't.csv'
    """
    if not str(filename).endswith(".csv"):
        filename = f"{filename}.csv"

    def _csv():
        df = frame() if callable(frame) else frame
        buf = io.StringIO()
        df.to_csv(buf, index=False)
        buf.seek(0)
        return buf

    return pn.widgets.FileDownload(callback=_csv, filename=filename, label=label,
                                   button_type="light", embed=False,
                                   css_classes=["bnx-download-csv"],
                                   sizing_mode="stretch_width")


# --------------------------------------------------------------------------- user text
#: every ASCII punctuation character: each can start HTML (``<``, ``&``) or Markdown
#: syntax (links, images, emphasis, code, tables, headings, lists, math, autolinks).
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")
#: control characters (line breaks included): a line break could start a new
#: Markdown block (a heading, a table row, an HTML block) inside a one-line text.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def md_text(value: Any, max_len: int | None = None) -> str:
    """``value`` as literal text for a Markdown, HTML or Alert pane.

    Use it for every string a user controls (file names, column names, class and
    other category values, query arguments, exception messages that quote them)
    before it goes into a pane's markup. Every ASCII punctuation character becomes a
    numeric character reference (``<`` -> ``&#60;``): HTML gets no tag, attribute or
    entity, and Markdown no syntax at all (CommonMark treats a character reference as
    the literal character), so ``[x](javascript:...)``, ``![i](x)``, ``*em*``,
    ``| cell |``, backticks, ``$math$`` and ``http://`` autolinks all show as typed.
    Control characters and line breaks become one space. The browser shows exactly
    the original characters. Do not put the result inside a Markdown code span
    (backticks show references literally): use ``<code>`` instead.

    Parameters
    ----------
    value : object
        Converted with ``str`` first.
    max_len : int, optional
        Cut the text to this many characters (an ellipsis marks the cut) *before*
        escaping, so no character reference is cut in half.

    Returns
    -------
    str
        Text safe in both Markdown and HTML (also inside a quoted HTML attribute).

    Examples
    --------
    >>> md_text("<img src=x onerror=alert(1)>")
    '&#60;img src&#61;x onerror&#61;alert&#40;1&#41;&#62;'
    >>> md_text("[a](javascript:x)")
    '&#91;a&#93;&#40;javascript&#58;x&#41;'
    >>> md_text("vote")
    'vote'
    >>> md_text("a very long name", max_len=6)
    'a very\u2026'
    """
    s = _CONTROL.sub(" ", str(value))
    if max_len is not None and len(s) > max_len:
        s = s[:max_len] + "\u2026"
    return _PUNCTUATION.sub(lambda m: f"&#{ord(m.group())};", s)


def md_strong(value: Any) -> str:
    """``value`` as bold literal text (``<strong>`` around :func:`md_text`).

    An HTML tag, unlike ``**...**``, stays bold whatever characters the text starts
    or ends with (Markdown emphasis next to punctuation does not always open).

    Examples
    --------
    >>> md_strong("a|b")
    '<strong>a&#124;b</strong>'
    """
    return f"<strong>{md_text(value)}</strong>"


def md_join(values: Any, sep: str = ", ", max_items: int | None = None) -> str:
    """Several user strings as one literal text, separated by ``sep``.

    ``sep`` is markup written by the app (not escaped); with ``max_items`` the rest
    is summarised as ``... (N more)``.

    Examples
    --------
    >>> md_join(["a*", "b"], max_items=1)
    'a&#42;, ... (1 more)'
    """
    values = [str(v) for v in values]
    shown = values if max_items is None else values[:max_items]
    out = sep.join(md_text(v) for v in shown)
    if len(shown) < len(values):
        out += f"{sep}... ({len(values) - len(shown)} more)"
    return out


def table_titles(frame: Any) -> dict:
    """Column titles for a :class:`panel.widgets.Tabulator` of ``frame``, as literal text.

    Tabulator puts a column's title into the page as HTML (its cells are escaped),
    so a column named after user data needs ``titles=table_titles(frame)``.

    Examples
    --------
    >>> import pandas as pd
    >>> table_titles(pd.DataFrame(columns=["P(<b>y</b>)"]))
    {'P(<b>y</b>)': 'P&#40;&#60;b&#62;y&#60;&#47;b&#62;&#41;'}
    """
    return {str(c): md_text(c) for c in frame.columns}


# --------------------------------------------------------------------------- page
def make_template(title: str, main: list | None = None, sidebar: list | None = None,
                  description: str = "", home: bool = True, share: bool = True
                  ) -> pn.template.FastListTemplate:
    """A :class:`panel.template.FastListTemplate` with the bnexplore look.

    Parameters
    ----------
    title : str
        Page title (header and browser tab).
    main, sidebar : list, optional
        Objects for the main area and the sidebar.
    description : str
        One paragraph shown at the top of the sidebar.
    home : bool
        Add a link back to the landing page at the top of the sidebar.
    share : bool
        Sync every sidebar widget with the URL query string (:func:`sync_url`) and add
        the "Share & export" section (copy link, figures as PNG/SVG).
    """
    side: list[Any] = []
    if home:
        side.append(pn.pane.HTML(f'<a href="{home_url()}" class="bnx-home">&larr; all apps</a>',
                                 margin=(5, 10)))
    if description:
        side.append(pn.pane.Markdown(description, margin=(0, 10)))
    side.extend(sidebar or [])
    if share:
        sync_url(list(sidebar or []))
        side.append(pn.Column(
            pn.pane.Markdown("### Share & export", margin=(10, 10, 0, 10)),
            pn.pane.Markdown("The address bar holds every setting: a link reproduces "
                             "this view.", margin=(0, 10), styles={"font-size": "0.9em"}),
            copy_link_button(), export_figures_buttons(title),
            sizing_mode="stretch_width", css_classes=["bnx-share"]))
    tpl = pn.template.FastListTemplate(
        title=title, site="bnexplore", site_url=home_url(), main=list(main or []),
        sidebar=side, accent=ACCENT, header_background=ACCENT, theme_toggle=False,
        main_layout=None, sidebar_width=320, font=SYSTEM_FONT,
    )
    return tpl


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
    this only affects the views' worker threads.
    """
    try:
        import numba
        numba.set_num_threads(max(1, numba.config.NUMBA_NUM_THREADS - 1))
    except Exception:  # noqa: BLE001 - no numba, or its threads cannot be set: defaults
        pass


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


def on_document(doc: Any, func: Callable[..., Any], *args: Any) -> bool:
    """Run ``func(*args)`` on the session's event loop with ``doc`` locked and current.

    The one thread-safe way to change a session's page from a worker thread (Bokeh's
    next-tick callback). Returns False if the session is gone.
    """
    from panel.io.state import set_curdoc

    def run() -> None:
        with set_curdoc(doc):
            func(*args)

    try:
        doc.add_next_tick_callback(run)
    except Exception:  # noqa: BLE001 - the session was destroyed meanwhile
        return False
    return True


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
SHOWN_VIEW: "contextvars.ContextVar[Any]" = contextvars.ContextVar("bnx_shown_view", default=None)


class BackgroundView:
    """A pane whose content ``func`` computes in :func:`view_pool`, never on the event loop.

    A server runs every session's callbacks on one event loop; a view computed there
    makes every other session wait for it (and a page cannot even load meanwhile).
    Here a change of a dependency only marks the pane as loading (Panel's spinner)
    and hands the computation to a worker thread; the result is put in the page by a
    next-tick callback of the session's document (the thread-safe way to change a
    Bokeh document), so the loop stays free for other sessions.

    The first computation starts as soon as the page is built, while the browser is
    still loading it (a first visit's slowest seconds); its result is applied once the
    page has loaded, unless a setting changed meanwhile (then the new setting is
    computed). Pages opened with settings in the URL compute those only.

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
        # its own setting only).
        self._prefetch: Any = None
        self._changed = False
        if not set(pn.state.session_args or {}) - RESERVED_QUERY:
            on_document(doc, self._start_prefetch)
        try:
            pn.state.onload(self._on_load)
        except Exception:  # noqa: BLE001 - no onload support: start at once
            self._on_load()

    def _start_prefetch(self) -> None:
        if not (self._loaded or self._changed or self._closed):
            self._prefetch = view_pool().submit(contextvars.copy_context().run, self._compute)

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
        self._request()

    def _request(self, *events: Any) -> None:
        if events:                     # a setting changed: the prefetched result is stale
            self._changed, self._prefetch = True, None
        self._gen += 1
        self.panel.loading = True
        if self._loaded and not (self._running or self._scheduled):
            self._scheduled = True
            on_document(self._doc, self._start)

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
        import time

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
                    if type(exc).__name__ == "_DeadlockError" and attempt < 3:
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
        try:
            out = fut.result()
        except BaseException as exc:  # noqa: BLE001 - e.g. the pool was shut down
            out = error_box(exc)
        self._unwatch()                # the placeholder is gone for good
        if callable(getattr(out, "apply_in_place", None)):
            out.apply_in_place()       # the shown picture takes the new values
        else:
            self.panel.objects = [out if isinstance(out, pn.viewable.Viewable) else pn.panel(out)]
        self.panel.loading = False

    def _close(self, *_: Any) -> None:
        self._closed = True
        self._unwatch()


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


def dag_pane(plot: Any) -> pn.Column:
    """A responsive :func:`bnexplore.viz.dag_plot` picture in a panel of the page width.

    The picture stretches with the page (up to 1.5 times its natural width) but never
    below the width its node boxes need (no two labels overlap); on a narrower window
    it scrolls inside its own panel instead of widening the page. The least width is
    set in CSS: as a Bokeh ``min_width`` it would widen every enclosing layout.
    """
    from bnexplore.viz.graphs import plot_size

    width, height = plot_size(plot)
    pane = pn.pane.HoloViews(plot, backend="bokeh", linked_axes=False,
                             sizing_mode="stretch_width", height=height,
                             styles={"min-width": f"{width}px", "max-width": f"{int(width * 1.5)}px"})
    # room below the picture for the horizontal scroll bar of a narrow window
    return pn.Column(pane, scroll="x-auto", sizing_mode="stretch_width", height=height + 30,
                     css_classes=["bnx-dag"])


def fixed_pane(plot: Any, **kwargs: Any) -> pn.Column:
    """A fixed-size HoloViews picture in a panel of the page width that scrolls sideways
    on a narrow window (the page itself never scrolls sideways).

    The pane takes the picture's own size (``sizing_mode="fixed"``), so HoloViews has
    no responsive mode to give up and logs no warning about it.
    """
    pane = pn.pane.HoloViews(plot, backend="bokeh", linked_axes=False, sizing_mode="fixed",
                             **kwargs)
    return pn.Column(pane, scroll="x-auto", sizing_mode="stretch_width", css_classes=["bnx-fixed"])


def error_box(exc: BaseException) -> pn.pane.Alert:
    """A readable error panel instead of a stack trace.

    The message is shown as literal text (:func:`md_text`): errors often quote what a
    user typed or uploaded (a column name, a ``?app=`` value).
    """
    return pn.pane.Alert(f"**{type(exc).__name__}**: {md_text(exc)}", alert_type="danger")


# --------------------------------------------------------------------------- caching
#: exceptions that say nothing about the setting (the server was short of memory, a
#: wait timed out): they are passed on but not cached, so the next request retries.
#: An exception with a true ``transient`` attribute is not cached either.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (MemoryError, TimeoutError)


class _Failure:
    """A cached exception: what a failed computation of one setting raised.

    The exception is kept without its traceback (whose frames would hold the failed
    computation's data alive in the cache) and every replay raises a fresh copy, so
    sessions replaying it at the same time do not share one traceback.
    """

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException):
        _strip_tracebacks(exc)
        self.exc = exc

    def reraise(self) -> None:
        import copy

        try:
            exc = copy.copy(self.exc)
        except Exception:  # noqa: BLE001 - an exception class that cannot be copied
            exc = self.exc
        raise exc.with_traceback(None)


def _strip_tracebacks(exc: BaseException) -> None:
    """Drop the tracebacks of ``exc`` and of its chained causes/contexts."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        e.__traceback__ = None
        if e.__cause__ is not None:
            _strip_tracebacks(e.__cause__)
        e = e.__context__


def _is_transient(exc: BaseException) -> bool:
    return isinstance(exc, TRANSIENT_ERRORS) or bool(getattr(exc, "transient", False))


def cached(maxsize: int = 64) -> Callable[[Callable], Callable]:
    """Results cache shared by every session of the server, failures included.

    Bokeh runs an app file as a new module for each session and clears that module's
    names when the session closes, so the cache must not keep the first session's
    function: results are stored under (file, function name) in a :func:`shared_cache`
    and a miss is computed by the *calling* session's own function. ``pn.cache`` is no
    alternative: it needs the module in ``sys.modules``, which ``panel serve apps/``
    (routing through ``runpy``) does not give. Arguments must be hashable (use the
    widget values: str, int, float).

    Views compute in worker threads (see :func:`reactive`), so several sessions can ask
    for the same setting at once: the first computes it and the others wait for that
    result (one computation per setting, not one per caller).

    An exception is a result too: a setting whose computation failed (a table over the
    memory budget, a bad class column) raises the same exception again, from the
    cache, without recomputing - every view of every session shows the error box
    at once instead of each retrying a long, failing fit. Exceptions in
    :data:`TRANSIENT_ERRORS` (or with a true ``transient`` attribute) are not cached.

    Examples
    --------
    >>> calls = []
    >>> @cached(maxsize=8)
    ... def inverse(x):
    ...     calls.append(x)
    ...     return 1 / x
    >>> inverse(4), inverse(4), calls
    (0.25, 0.25, [4])
    >>> for _ in range(2):
    ...     try:
    ...         inverse(0)
    ...     except ZeroDivisionError:
    ...         pass
    >>> calls
    [4, 0]
    """
    def deco(func: Callable) -> Callable:
        store = shared_cache(f"{func.__code__.co_filename}:{func.__qualname__}", maxsize)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = (args, tuple(sorted(kwargs.items())))
            return store.compute(key, lambda: func(*args, **kwargs))
        return wrapper
    return deco


class SharedLRU:
    """A small thread-safe LRU mapping (``get`` / ``[]`` / ``in`` / ``len``).

    :meth:`compute` adds what :func:`cached` needs: one computation per key at a time
    (callers asking for a key being computed wait for that computation) and cached
    exceptions.
    """

    _MISS = object()

    def __init__(self, maxsize: int = 128):
        self.maxsize = int(maxsize)
        self._d: "collections.OrderedDict[Any, Any]" = collections.OrderedDict()
        self._lock = threading.Lock()
        # key -> (Future of the running computation, thread ident of its owner)
        self._inflight: dict[Any, tuple[Any, int]] = {}

    def _lookup(self, key: Any) -> Any:
        # call with self._lock held
        if key in self._d:
            self._d.move_to_end(key)
            return self._d[key]
        return self._MISS

    def compute(self, key: Any, func: Callable[[], Any]) -> Any:
        """The value cached under ``key``, else ``func()`` (stored, shared, deduplicated).

        If another thread is computing ``key``, wait for its outcome instead of
        computing it again. An exception of ``func`` is stored (and raised again on
        every later call) unless it is transient (:data:`TRANSIENT_ERRORS`).
        """
        from concurrent.futures import Future

        me = threading.get_ident()
        with self._lock:
            out = self._lookup(key)
            if out is self._MISS:
                running = self._inflight.get(key)
                if running is None or running[1] == me:  # same thread: a recursion
                    fut: Any = Future()
                    if running is None:
                        self._inflight[key] = (fut, me)
                    owner = True
                else:
                    fut, owner = running[0], False
        if out is not self._MISS:
            if isinstance(out, _Failure):
                out.reraise()
            return out
        if not owner:
            out = fut.result()           # the owner's value, or its exception raised here
            if isinstance(out, _Failure):
                out.reraise()
            return out
        try:
            value = func()
        except Exception as exc:  # noqa: BLE001 - cached (or not) and raised again
            if _is_transient(exc):
                self._finish(key, fut, error=exc)
                raise
            failure = _Failure(exc)
            self._finish(key, fut, value=failure, store=True)
            failure.reraise()
        except BaseException as exc:     # interrupted: nothing is cached, waiters see it
            self._finish(key, fut, error=exc)
            raise
        self._finish(key, fut, value=value, store=True)
        return value

    def _finish(self, key: Any, fut: Any, value: Any = None, error: BaseException | None = None,
                store: bool = False) -> None:
        with self._lock:
            if store:
                self._set(key, value)
            if self._inflight.get(key, (None,))[0] is fut:
                del self._inflight[key]
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(value)

    def get(self, key: Any, default: Any = None) -> Any:
        with self._lock:
            out = self._lookup(key)
            return default if out is self._MISS else out

    def __getitem__(self, key: Any) -> Any:
        with self._lock:
            self._d.move_to_end(key)
            return self._d[key]

    def _set(self, key: Any, value: Any) -> None:
        # call with self._lock held
        self._d[key] = value
        self._d.move_to_end(key)
        while len(self._d) > self.maxsize:
            self._d.popitem(last=False)

    def __setitem__(self, key: Any, value: Any) -> None:
        with self._lock:
            self._set(key, value)

    def __contains__(self, key: Any) -> bool:
        with self._lock:
            return key in self._d

    def __len__(self) -> int:
        with self._lock:
            return len(self._d)


_SHARED: dict[str, SharedLRU] = {}
_SHARED_LOCK = threading.Lock()


def shared_cache(name: str, maxsize: int = 128) -> SharedLRU:
    """A named :class:`SharedLRU` shared by all sessions of the server.

    Examples
    --------
    >>> c = shared_cache("doc-example", maxsize=2)
    >>> c["a"] = 1; shared_cache("doc-example").get("a")
    1
    """
    with _SHARED_LOCK:   # sessions build pages concurrently: one cache per name
        if name not in _SHARED:
            _SHARED[name] = SharedLRU(maxsize)
        return _SHARED[name]


def serve(factory: Callable[[], Any]) -> Any:
    """Build a page with ``factory()`` and mark it servable.

    The build runs inside ``curdoc.models.freeze()``: every loading-indicator link
    otherwise makes Bokeh re-scan the whole model graph, which cost seconds per page
    load; frozen, the scan happens once at the end.
    """
    doc = pn.state.curdoc
    ctx = doc.models.freeze() if doc is not None else contextlib.nullcontext()
    with ctx:
        page = factory()
        page.servable()
    return page


def guarded(func: Callable) -> Callable:
    """Wrap a view function so that an exception becomes an :func:`error_box`.

    The failing panel shows the message; the rest of the page keeps working.

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


def _names(module: str) -> list[str]:
    try:
        import importlib
        return list(importlib.import_module(f"bnexplore.{module}").names())
    except (ImportError, AttributeError):  # module not available in this checkout
        return []


# --------------------------------------------------------------------------- uploads
_UPLOADS: "collections.OrderedDict[str, Any]" = collections.OrderedDict()
_UPLOADS_LOCK = threading.Lock()
_UPLOADS_MAX = 16   # uploaded data sets kept on the server (least recently used dropped)
_UPLOAD_IDS = itertools.count(1)   # a CSS class per file input, for its browser-side guard


@dataclass
class PreparedUpload:
    """An uploaded table made ready for the apps (see :func:`prepare_upload`)."""

    frame: Any                      # DataFrame of categoricals, attrs["target"] set
    target: str
    cut_points: dict                # column -> list of cut points (MDL)
    notes: list                     # plain-language remarks (rows dropped, ...)


def _size_error(name: str, size: int, max_bytes: int) -> ValueError:
    return ValueError(f"the file {name!r} has {size:,} bytes, over the upload limit of "
                      f"{max_bytes:,} bytes ({max_bytes / 1e6:g} MB): upload a smaller file, "
                      f"e.g. a sample of its rows")


def check_upload(content: bytes | None, filename: str, max_bytes: int = UPLOAD_MAX_BYTES) -> str:
    """The checks of an upload that need no parsing; return the file's base name.

    Cheap enough for the server's event loop: the size and the file type only.

    Raises
    ------
    ValueError
        An empty file, one over ``max_bytes`` bytes, or an extension other than
        ``.csv``, ``.txt``, ``.tsv`` and ``.arff``.

    Examples
    --------
    >>> check_upload(b"a,b\\n1,2\\n", "dir/t.csv")
    't.csv'
    """
    name = Path(str(filename or "upload")).name
    if content is None or len(content) == 0:
        raise ValueError(f"the file {name!r} is empty: upload a CSV or ARFF file with data")
    if len(content) > max_bytes:
        raise _size_error(name, len(content), max_bytes)
    ext = Path(name).suffix.lower()
    if ext not in (".arff", ".csv", ".txt", ".tsv"):
        raise ValueError(f"cannot read {name!r}: the file type {ext or '(none)'!r} is not "
                         f"supported; upload a .csv or .arff file")
    return name


def read_upload(content: bytes, filename: str, max_bytes: int = UPLOAD_MAX_BYTES,
                max_columns: int = UPLOAD_MAX_COLUMNS, max_values: int = UPLOAD_MAX_VALUES,
                max_declared_values: int = UPLOAD_MAX_DECLARED_VALUES):
    """Parse an uploaded CSV or ARFF file with :mod:`bnexplore.data` (never executed).

    Text is decoded by its byte-order mark (UTF-8, UTF-16, UTF-32), otherwise as
    UTF-8 (else Latin-1); binary files are refused. The limits on columns and values
    are checked on the header, before the rows are parsed.

    Parameters
    ----------
    content : bytes
        The file's bytes.
    filename : str
        Its name; the extension chooses the reader (``.arff``; ``.csv``, ``.txt``;
        ``.tsv`` with tabs).
    max_bytes, max_columns : int
        Largest file and most columns (default :data:`UPLOAD_MAX_BYTES`,
        :data:`UPLOAD_MAX_COLUMNS`).
    max_values : int
        Most values one column may have: declared in an ARFF header, or distinct
        texts in a CSV column (default :data:`UPLOAD_MAX_VALUES`).
    max_declared_values : int
        Most nominal values an ARFF header may declare in all
        (default :data:`UPLOAD_MAX_DECLARED_VALUES`).

    Raises
    ------
    ValueError
        Empty or too large a file, an unsupported extension, more columns or values
        than the limits, binary content, or the reader's own message for a
        malformed file.

    Examples
    --------
    >>> df = read_upload(b"a,b,class\\nx,1,yes\\ny,2,no\\n", "t.csv")
    >>> list(df.columns), df.attrs["target"]
    (['a', 'b', 'class'], 'class')
    """
    from bnexplore.data import read_arff, read_csv

    name = check_upload(content, filename, max_bytes)
    ext = Path(name).suffix.lower()
    buf = io.BytesIO(bytes(content))
    buf.name = name
    if ext == ".arff":
        return read_arff(buf, max_bytes=max_bytes, max_columns=max_columns,
                         max_values=max_declared_values, max_values_per_column=max_values)
    return read_csv(buf, max_bytes=max_bytes, max_columns=max_columns,
                    max_values_per_column=max_values,
                    **({"sep": "\t"} if ext == ".tsv" else {}))


def prepare_upload(raw, target: str, max_target_classes: int = 50) -> PreparedUpload:
    """Check the target, discretise continuous columns (MDL) and validate the table.

    Rows with a missing class are dropped; continuous feature columns are cut by
    :class:`bnexplore.data.MDLDiscretizer` against ``target`` (its rule for
    "continuous"); other numeric columns become categories; a missing value becomes a
    state ``"?"``. The result is validated by
    :meth:`bnexplore.data.DiscreteData.from_frame`, whose errors pass through.

    Raises
    ------
    ValueError
        Unknown target, a target with one class or that looks continuous, no feature
        column, no rows left, or the data layer's message.

    Examples
    --------
    >>> import pandas as pd
    >>> raw = pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.7, 0.8, 0.9] * 5,
    ...                     "class": ["a", "a", "a", "b", "b", "b"] * 5})
    >>> up = prepare_upload(raw, "class")
    >>> up.cut_points
    {'x': [0.5]}
    """
    import warnings

    import pandas as pd

    from bnexplore.data import DiscreteData, MDLDiscretizer

    if target not in raw.columns:
        raise ValueError(f"target {target!r} is not a column of the file; columns are "
                         f"{list(raw.columns)}")
    if raw.shape[1] < 2:
        raise ValueError("the file has a single column: it needs at least one feature "
                         "column besides the target")
    notes: list[str] = []
    df = raw.copy()
    miss = df[target].isna()
    if miss.any():
        notes.append(f"dropped {int(miss.sum())} rows with a missing class")
        df = df.loc[~miss].reset_index(drop=True)
    if len(df) == 0:
        raise ValueError(f"every row has a missing value in target {target!r}")
    y = df[target]
    if pd.api.types.is_numeric_dtype(y) and not isinstance(y.dtype, pd.CategoricalDtype):
        n_distinct = y.nunique()
        if n_distinct > max_target_classes or not (y.dropna() == y.dropna().round()).all():
            raise ValueError(f"target {target!r} looks continuous ({n_distinct} distinct "
                             f"numbers): choose a nominal column as the target")
        y = pd.Categorical(y.astype("int64").astype(str))
    y = pd.Series(pd.Categorical(y), name=target)
    y = y.cat.remove_unused_categories()
    if len(y.cat.categories) < 2:
        raise ValueError(f"target {target!r} has a single class "
                         f"{str(y.cat.categories[0])!r}: a classifier needs at least two "
                         f"classes; choose another target column")
    if len(y.cat.categories) > max_target_classes:
        raise ValueError(f"target {target!r} has {len(y.cat.categories)} classes (more than "
                         f"{max_target_classes}): choose a column with fewer values")
    X = df.drop(columns=[target])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mdl = MDLDiscretizer(columns="auto").fit(X, y)
        Xd = mdl.transform(X)
    cuts = {str(c): list(v) for c, v in mdl.cut_points_.items()}
    out = pd.DataFrame(index=Xd.index)
    for c in Xd.columns:
        col = Xd[c]
        if not isinstance(col.dtype, pd.CategoricalDtype):
            vals = col.astype(object).where(col.notna(), None)
            vals = vals.map(lambda v: (str(int(v)) if isinstance(v, float) and v.is_integer()
                                       else v if v is None else str(v)))
            col = pd.Series(pd.Categorical(vals), index=Xd.index)
        if col.isna().any():
            col = col.cat.add_categories(["?"]).fillna("?")
        out[c] = col
    out[target] = pd.Categorical(y.to_numpy(), categories=y.cat.categories)
    out.attrs["target"] = target
    out.attrs["cut_points"] = cuts
    wide = [c for c in X.columns if out[c].nunique() > 50]
    if wide:
        notes.append(f"columns with many states (consider dropping them): {wide[:5]}")
    DiscreteData.from_frame(out, target=target)   # the data layer's validation
    return PreparedUpload(out, target, cuts, notes)


def store_upload(prepared: PreparedUpload, filename: str, content: bytes) -> str:
    """Keep a prepared upload on the server; return its data-set name for :func:`load_data`.

    The name holds a hash of the content and the target, so it is stable for the same
    file and target and different otherwise.
    """
    digest = hashlib.sha256(bytes(content) + b"\0" + prepared.target.encode()).hexdigest()
    key = f"{UPLOAD_PREFIX}{Path(str(filename)).name} [{prepared.target}] #{digest[:8]}"
    with _UPLOADS_LOCK:
        _UPLOADS[key] = prepared.frame
        _UPLOADS.move_to_end(key)
        while len(_UPLOADS) > _UPLOADS_MAX:
            _UPLOADS.popitem(last=False)
    return key


def _uploaded(name: str):
    with _UPLOADS_LOCK:
        df = _UPLOADS.get(name)
        if df is not None:
            _UPLOADS.move_to_end(name)
    if df is None:
        exc = ValueError(f"the uploaded data set {name!r} is no longer on the server: "
                         f"upload the file again")
        exc.transient = True   # not cached: the same file uploaded again must be served
        raise exc
    return df


@dataclass
class UploadResult:
    """What reading and preparing an upload gave (see :func:`process_upload`)."""

    columns: list                   # the file's column names
    target: str                     # the class column used
    prepared: Any                   # PreparedUpload, or None when preparing failed
    error: Any = None               # the exception of prepare_upload for this target


def process_upload(content: bytes, filename: str, target: str | None = None,
                   max_bytes: int = UPLOAD_MAX_BYTES) -> UploadResult:
    """Read an upload and prepare it for ``target`` (by default the file's class column).

    Errors of reading raise; an error of :func:`prepare_upload` is kept in
    :attr:`UploadResult.error` with the columns, so that another target can be chosen.

    Examples
    --------
    >>> res = process_upload(b"a,class\\nx,yes\\ny,no\\n", "t.csv")
    >>> res.columns, res.target, res.error is None
    (['a', 'class'], 'class', True)
    """
    raw = read_upload(content, filename, max_bytes=max_bytes)
    cols = [str(c) for c in raw.columns]
    if target not in cols:
        default = raw.attrs.get("target") or cols[-1]
        target = default if default in cols else cols[-1]
    try:
        return UploadResult(cols, target, prepare_upload(raw, target))
    except Exception as exc:  # noqa: BLE001 - reported with the columns
        return UploadResult(cols, target, None, exc)


def _upload_worker(conn, content: bytes, filename: str, target: str | None,
                   max_bytes: int, max_memory: int, delay: float = 0.0) -> None:
    """Body of an upload's worker process: send back an UploadResult or the exception.

    ``delay`` (seconds, for tests) makes the worker wait before it starts reading.
    """
    try:
        import resource
        with open("/proc/self/statm") as fh:
            start = int(fh.read().split()[0]) * resource.getpagesize()
        limit = start + int(max_memory)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, OSError, ValueError):  # not Linux: no cap
        pass
    try:
        if delay > 0:
            import time
            time.sleep(delay)
        out: Any = process_upload(content, filename, target, max_bytes)
    except MemoryError:
        out = MemoryError(f"reading {Path(str(filename)).name!r} needs more than the "
                          f"{max_memory / 1e9:g} GB an upload may use: upload a smaller file "
                          f"or fewer columns")
    except BaseException as exc:  # noqa: BLE001 - reported in the page
        out = exc
    if isinstance(out, BaseException):
        out = _portable(out)
    elif out.error is not None:
        out.error = _portable(out.error)
    try:
        conn.send(out)
    except Exception as exc:  # noqa: BLE001 - e.g. a result too odd to pickle
        conn.send(RuntimeError(f"the result of reading {Path(str(filename)).name!r} could not "
                               f"be sent back ({type(exc).__name__}): try again"))
    finally:
        conn.close()


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a ``ValueError`` with its message."""
    import pickle
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - custom constructors, unpicklable attributes
        return ValueError(f"{type(exc).__name__}: {exc}"[:4000])


#: upload worker processes running at once on the server (more jobs wait their turn).
UPLOAD_WORKERS = 2
_UPLOAD_SLOTS = threading.BoundedSemaphore(UPLOAD_WORKERS)
_FORKSERVER_LOCK = threading.Lock()
_FORKSERVER_READY: list = []


def _upload_context():
    """The multiprocessing context of upload workers.

    ``forkserver``: a clean single-threaded server process (started once, with pandas,
    scikit-learn, Panel and the readers imported) forks each worker, so a worker
    starts in milliseconds and nothing of the Bokeh server's threads is copied.
    Falls back to ``spawn`` where ``forkserver`` does not exist.
    """
    import multiprocessing as mp

    with _FORKSERVER_LOCK:
        if _FORKSERVER_READY:
            return _FORKSERVER_READY[0]
        try:
            ctx = mp.get_context("forkserver")
            ctx.set_forkserver_preload(["pandas", "sklearn.base", "scipy.io.arff", "panel",
                                        "bnexplore.data.core", "bnexplore.data.io",
                                        "bnexplore.data.discretize"])
        except ValueError:
            ctx = mp.get_context("spawn")
        _FORKSERVER_READY.append(ctx)
        return ctx


#: seconds after the first page before the upload fork server starts: its imports take
#: a core for seconds, which the first views need more (an earlier upload starts it).
UPLOAD_WARM_UP_DELAY_S = 30.0
_UPLOAD_WARM_UP: list = []      # once per server process


def warm_up_upload_workers() -> None:
    """Start the upload fork server soon (in the background), not at the first upload."""
    with _FORKSERVER_LOCK:
        if _UPLOAD_WARM_UP:
            return
        _UPLOAD_WARM_UP.append(True)

    def _start():
        import time
        time.sleep(UPLOAD_WARM_UP_DELAY_S)
        ctx = _upload_context()
        if ctx.get_start_method() == "forkserver":
            from multiprocessing import forkserver
            with contextlib.suppress(Exception):
                forkserver.ensure_running()
    threading.Thread(target=_start, daemon=True, name="bnx-upload-warmup").start()


class UploadJob:
    """Read and prepare one upload in a worker process, off the server's event loop.

    The job starts at once (in a watcher thread that waits for a free worker slot, see
    :data:`UPLOAD_WORKERS`); ``on_done`` is called in that thread with an
    :class:`UploadResult` or an exception, unless the job was cancelled. A worker is
    killed when cancelled, after ``timeout`` seconds, or when it needs more than
    ``max_memory`` bytes more memory than it started with. ``delay`` (seconds, for
    tests) makes the worker wait before it reads the file.

    Examples
    --------
    >>> out = []
    >>> job = UploadJob(b"a,class\\nx,yes\\ny,no\\n", "t.csv", None, out.append)
    >>> job.wait(120), out[0].columns
    (True, ['a', 'class'])
    """

    def __init__(self, content: bytes, filename: str, target: str | None,
                 on_done: Callable[[Any], None], timeout: float = UPLOAD_TIMEOUT_S,
                 max_bytes: int = UPLOAD_MAX_BYTES, max_memory: int = UPLOAD_MAX_MEMORY,
                 delay: float = 0.0):
        self.filename = str(filename)
        self._args = (bytes(content), self.filename, target, int(max_bytes), int(max_memory),
                      float(delay))
        self._on_done = on_done
        self._timeout = float(timeout)
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._proc = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="bnx-upload")
        self._thread.start()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Stop the job: its worker is killed and ``on_done`` is not called."""
        self._cancelled.set()
        with self._lock:
            proc = self._proc
        if proc is not None and proc.is_alive():
            with contextlib.suppress(Exception):
                proc.kill()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job has finished; ``True`` if it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        try:
            result = self._work()
        except Exception as exc:  # noqa: BLE001 - the machinery failed: say so
            result = RuntimeError(f"the upload could not be processed ({type(exc).__name__}: "
                                  f"{exc}): try again")
        if result is not None and not self.cancelled:
            self._on_done(result)

    def _work(self) -> Any:
        with _UPLOAD_SLOTS:
            if self.cancelled:
                return None
            ctx = _upload_context()
            recv, send = ctx.Pipe(duplex=False)
            # the worker unpickles its target from this module: Bokeh restores sys.path
            # after each app script, so put this folder back for the child to import it
            if str(APPS_DIR) not in sys.path:
                sys.path.insert(0, str(APPS_DIR))
            proc = ctx.Process(target=_upload_worker, args=(send, *self._args), daemon=True,
                               name="bnx-upload-worker")
            with self._lock:
                if self.cancelled:
                    return None
                proc.start()
                self._proc = proc
            send.close()
            name = Path(self.filename).name
            try:
                if recv.poll(self._timeout):
                    return recv.recv()
                return TimeoutError(f"reading and preparing {name!r} took more than "
                                    f"{self._timeout:g} s and was stopped: upload a smaller "
                                    f"file or fewer columns")
            except (EOFError, OSError):
                if self.cancelled:
                    return None
                proc.join(5)
                return RuntimeError(f"reading {name!r} stopped the worker (exit code "
                                    f"{proc.exitcode}), probably out of memory: upload a "
                                    f"smaller file or fewer columns")
            finally:
                if proc.is_alive():
                    proc.kill()
                proc.join(5)
                recv.close()


def load_data(kind: str, name: str, n: int = 1000, seed: int = 0):
    """A bundled data set (MDL-discretised), an uploaded one, or a network sample.

    In data sets a missing value becomes a state of its own (``missing="state"``), so
    no rows are lost. Names starting with :data:`UPLOAD_PREFIX` are uploaded files
    (see :class:`DataSource`). Bundled data and samples are cached on the arguments,
    shared by all sessions of the server.
    """
    if kind == DATASET and isinstance(name, str) and name.startswith(UPLOAD_PREFIX):
        return _uploaded(name)
    return _load_bundled(kind, name, n, seed)


@cached(maxsize=32)
def _load_bundled(kind: str, name: str, n: int = 1000, seed: int = 0):
    import warnings

    import bnexplore as bx

    if kind == DATASET:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return bx.datasets.load(name, discretize="mdl", missing="state")
    if kind == NETWORK:
        return bx.networks.load(name).sample(int(n), seed=seed)
    raise ValueError(f"kind must be {DATASET!r} or {NETWORK!r}, got {kind!r}")


def cut_points_markdown(cuts: dict, max_rows: int = 30) -> str:
    """A Markdown table of MDL cut points (``column -> [c1, c2, ...]``).

    Column names are literal text (:func:`md_text`).
    """
    if not cuts:
        return "No continuous column: nothing was discretised."
    lines = ["| column | cut points |", "|---|---|"]
    for i, (c, v) in enumerate(cuts.items()):
        if i == max_rows:
            lines.append(f"| ... | {len(cuts) - max_rows} more |")
            break
        txt = ", ".join(f"{x:.4g}" for x in v) if v else "none (one state, 'All')"
        lines.append(f"| {md_text(c)} | {txt} |")   # a column name may hold "|" or HTML
    return "\n".join(lines)


def _upload_guard_class():
    """The class of :class:`DataSource`'s upload guard (built on first use: ReactiveHTML)."""
    global _UploadGuard
    if _UploadGuard is not None:
        return _UploadGuard
    import param
    from panel.reactive import ReactiveHTML

    class UploadGuard(ReactiveHTML):
        """Refuse an empty or too large file in the browser, before it is sent.

        Bokeh's file input reads the whole file and sends it over the websocket; a file
        over the websocket's message limit (20 MB base64) closes the connection and
        kills the page, and an empty file sends nothing the server notices. This
        invisible component listens (capture phase, on the window) to the ``input``
        event of the file input whose host carries the CSS class ``target_class``:
        a file of 0 or more than ``max_bytes`` bytes is taken out of the input before
        Bokeh reads it, and ``refused`` tells the server its name and size.
        """

        max_bytes = param.Integer(default=UPLOAD_MAX_BYTES)
        target_class = param.String(default="")
        refused = param.Dict(default={})

        _template = '<div id="guard" class="bnx-upload-guard" style="display:none"></div>'
        _scripts = {
            "render": """
                const handler = (ev) => {
                  const path = ev.composedPath ? ev.composedPath() : [ev.target]
                  const el = path[0]
                  if (!el || el.tagName !== 'INPUT' || el.type !== 'file') return
                  const mine = (n) => n.classList && n.classList.contains(data.target_class)
                  if (!path.some(mine)) return
                  const files = Array.from(el.files || [])
                  const bad = files.find((f) => f.size === 0 || f.size > data.max_bytes)
                  if (bad === undefined) return
                  el.value = ''
                  data.refused = {name: bad.name, size: bad.size,
                                  n: ((data.refused && data.refused.n) || 0) + 1}
                }
                if (state.handler) window.removeEventListener('input', state.handler, true)
                state.handler = handler
                window.addEventListener('input', handler, true)
            """,
            "remove": """
                if (state.handler) window.removeEventListener('input', state.handler, true)
                state.handler = null
            """,
        }

    _UploadGuard = UploadGuard
    return UploadGuard


_UploadGuard = None


def _env_float(name: str, default: float = 0.0) -> float:
    """The positive number in the environment variable ``name``, else ``default``."""
    import os
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


class DataSource:
    """Widgets that choose a bundled data set, an uploaded file or a network sample.

    Attributes
    ----------
    kind, dataset, network, sample_size : panel widgets
        Bind these (``pn.bind(f, src.kind, src.dataset, src.network, src.sample_size)``) or
        use :meth:`param_values` as the arguments of a cached loader.
    upload, upload_target, upload_info : panel widgets / pane
        The file input (CSV or ARFF, at most :data:`UPLOAD_MAX_BYTES`), the choice of
        its class column, and the report (errors, MDL cut points). A successful upload
        becomes a new entry of ``dataset`` (its name starts with
        :data:`UPLOAD_PREFIX`) that :func:`load_data` serves.
    upload_guard : panel component
        Invisible; refuses an empty or too large file in the browser, before it is sent.

    Parameters
    ----------
    background : bool or None
        Read and prepare uploads in a worker process (:class:`UploadJob`) so that the
        server's event loop stays free; the report is written back on the document's
        next tick. ``None`` (default): in the background when served (a Bokeh
        session), at once otherwise (notebooks, tests). A new upload or target
        supersedes (kills) the job still running. :meth:`wait_upload` waits for it.

    Examples
    --------
    >>> src = DataSource()
    >>> src.kind.value in (DATASET, NETWORK)
    True
    """

    def __init__(self, default_dataset: str = "vote", default_network: str = "asia",
                 default_kind: str = DATASET, default_n: int = 1000, upload: bool = True,
                 background: bool | None = None):
        datasets = _names("datasets")
        networks = _names("networks")
        kinds = [k for k, avail in ((DATASET, datasets), (NETWORK, networks)) if avail]
        kinds = kinds or [DATASET, NETWORK]
        if default_kind not in kinds:
            default_kind = kinds[0]
        self.kind = widget(pn.widgets.RadioButtonGroup, "Source", options=kinds,
                           value=default_kind, color="primary")
        self.dataset = widget(
            pn.widgets.Select, "Data set", options=datasets,
            value=default_dataset if default_dataset in datasets else (datasets or [None])[0])
        self.network = widget(
            pn.widgets.Select, "Network", options=networks,
            value=default_network if default_network in networks else (networks or [None])[0])
        self.sample_size = widget(
            pn.widgets.DiscreteSlider, "Sample size", options=SAMPLE_SIZES,
            value=default_n if default_n in SAMPLE_SIZES else 1000)
        self.has_upload = bool(upload)
        self._uid = f"bnx-upload-{next(_UPLOAD_IDS)}"
        self.upload = no_url(pn.widgets.FileInput(
            accept=".csv,.arff,.txt,.tsv", multiple=False, css_classes=["bnx-upload", self._uid],
            sizing_mode="stretch_width"))
        self.upload_guard = _upload_guard_class()(
            max_bytes=UPLOAD_MAX_BYTES, target_class=self._uid, width=0, height=0, margin=0)
        self.upload_target = no_url(widget(pn.widgets.Select, "Class column of the file",
                                           options=[], visible=False))
        self.upload_info = pn.pane.Markdown("", css_classes=["bnx-upload-info"],
                                            margin=(0, 10), sizing_mode="stretch_width")
        self.upload_label = pn.pane.Markdown(
            f"Or upload a CSV / ARFF file (at most {UPLOAD_MAX_BYTES / 1e6:g} MB):",
            margin=(5, 10, 0, 10))
        self._columns: list | None = None     # columns of the file read last
        self._file = ("", b"")
        self._busy = False
        self._job: UploadJob | None = None
        self._job_id = 0
        self._doc = live_session()
        if background is None:
            background = self._doc is not None
        self.background = bool(background)
        #: seconds a background upload job waits before reading (for tests; the
        #: environment variable BNX_UPLOAD_TEST_DELAY sets it for a test server).
        self.upload_delay = _env_float("BNX_UPLOAD_TEST_DELAY")
        #: seconds a background upload job may run (UPLOAD_TIMEOUT_S, or the
        #: environment variable BNX_UPLOAD_TIMEOUT_S).
        self.upload_timeout = _env_float("BNX_UPLOAD_TIMEOUT_S", UPLOAD_TIMEOUT_S)
        if self._doc is not None:
            with contextlib.suppress(Exception):
                self._doc.on_session_destroyed(lambda ctx: self._cancel_job())
        if self.background and self.has_upload:
            warm_up_upload_workers()
        self._sync(self.kind.value)
        self.kind.param.watch(lambda e: self._sync(e.new), "value")
        self.upload.param.watch(self._on_upload, "value")
        self.upload_target.param.watch(self._on_target, "value")
        self.upload_guard.param.watch(self._on_refused, "refused")

    # ---------------------------------------------------------------- upload handling
    def _show_error(self, exc: BaseException) -> None:
        msg = str(exc).replace("\n", " ")
        self.upload_info.object = (f'<div class="bnx-upload-error" style="color:#a40000">'
                                   f"<b>Cannot use this file</b> ({type(exc).__name__}): "
                                   f"{md_text(msg)}</div>")

    def _on_upload(self, event) -> None:
        content = event.new
        filename = self.upload.filename or "upload"
        if isinstance(content, list):  # multiple=True in some Panel versions
            content = content[0] if content else b""
            filename = filename[0] if isinstance(filename, list) and filename else filename
        if content is None:   # the input was cleared (the guard reports a refused file)
            return
        try:
            check_upload(content, filename)
        except Exception as exc:  # noqa: BLE001 - shown in the page, never a traceback
            self._refuse(exc)
            return
        self._file = (str(filename), bytes(content))
        self._columns = None
        self.upload_target.visible = False
        self._start(None)

    def _on_refused(self, event) -> None:
        info = event.new or {}
        name = Path(str(info.get("name") or "upload")).name
        size = int(info.get("size") or 0)
        self._refuse(ValueError(f"the file {name!r} is empty: upload a CSV or ARFF file with "
                                f"data") if size == 0 else
                     _size_error(name, size, self.upload_guard.max_bytes))

    def _refuse(self, exc: BaseException) -> None:
        """A file refused before reading: supersede any job, show why."""
        self._cancel_job()
        self._job_id += 1
        self._columns = None
        self.upload_target.visible = False
        self.upload_target.disabled = False
        self._show_error(exc)

    def _on_target(self, event) -> None:
        if not self._busy and self._columns is not None:
            self._start(self.upload_target.value)

    # ---------------------------------------------------------------- upload jobs
    def _cancel_job(self) -> None:
        job, self._job = self._job, None
        if job is not None:
            job.cancel()

    def _start(self, target: str | None) -> None:
        """Read (and prepare for ``target``) the current file, superseding any job."""
        self._cancel_job()
        self._job_id += 1
        job_id = self._job_id
        name, content = self._file
        self.upload_target.disabled = True
        self.upload_info.object = (
            f'<div class="bnx-upload-busy">Reading the file <b>{md_text(Path(name).name)}'
            f"</b> ({len(content) / 1e3:,.0f} KB)...</div>")
        if not self.background:
            try:
                result: Any = process_upload(content, name, target)
            except Exception as exc:  # noqa: BLE001 - shown in the page
                result = exc
            self._finish(job_id, result)
            return
        self._job = UploadJob(content, name, target,
                              functools.partial(self._dispatch, job_id),
                              timeout=self.upload_timeout, delay=self.upload_delay)

    def _dispatch(self, job_id: int, result: Any) -> None:
        """From a job's thread: hand ``result`` to :meth:`_finish` on the document."""
        if self._doc is None:
            self._finish(job_id, result)
        else:
            on_document(self._doc, self._finish, job_id, result)

    def _finish(self, job_id: int, result: Any) -> None:
        """Show a job's result (on the document); results of superseded jobs are dropped."""
        if job_id != self._job_id:
            return
        self._job = None
        self.upload_target.disabled = False
        if isinstance(result, BaseException):
            self._columns = None
            self.upload_target.visible = False
            self._show_error(result)
            return
        self._columns = list(result.columns)
        self._busy = True
        try:
            self.upload_target.options = self._columns
            self.upload_target.value = result.target
        finally:
            self._busy = False
        self.upload_target.visible = self.has_upload and self.kind.value != NETWORK
        if result.error is not None:
            self._show_error(result.error)
            return
        self._apply(result.prepared)

    def wait_upload(self, timeout: float | None = None) -> bool:
        """Wait for the upload job still running (if any); ``True`` when none is left."""
        job = self._job
        return job is None or job.wait(timeout)

    def _apply(self, prepared: PreparedUpload) -> None:
        key = store_upload(prepared, *self._file)
        df = prepared.frame
        classes = md_join(df[prepared.target].cat.categories, max_items=10)
        notes = "".join(f"\n\n*Note*: {md_text(n)}" for n in prepared.notes)
        self.upload_info.object = (
            f'<span class="bnx-upload-ok">{md_strong(self._file[0])}</span>: '
            f"{len(df)} rows, {df.shape[1] - 1} features, class "
            f"{md_strong(prepared.target)} ({classes}).{notes}\n\n"
            f"MDL cut points of the continuous columns:\n\n"
            f"{cut_points_markdown(prepared.cut_points)}")
        opts = [o for o in self.dataset.options if not str(o).startswith(UPLOAD_PREFIX)
                or o == key]
        self.dataset.options = opts + ([key] if key not in opts else [])
        self.kind.value = DATASET
        self.dataset.value = key

    def _sync(self, kind: str) -> None:
        net = kind == NETWORK
        self.dataset.visible = not net
        self.network.visible = net
        self.sample_size.visible = net
        for w in (self.upload, self.upload_label, self.upload_info):
            w.visible = self.has_upload and not net
        self.upload_target.visible = (self.has_upload and not net and self._columns is not None)

    @property
    def name(self) -> pn.widgets.Widget:
        """The select of the active kind."""
        return self.network if self.kind.value == NETWORK else self.dataset

    def widgets(self) -> list:
        """The widgets for a sidebar."""
        out = [self.kind, self.dataset, self.network, self.sample_size]
        if self.has_upload:
            out += [self.upload_label, self.upload, self.upload_guard, self.upload_target,
                    self.upload_info]
        return out

    def panel(self) -> pn.Column:
        return pn.Column(*self.widgets(), sizing_mode="stretch_width")

    def bind(self, func: Callable, **kwargs: Any):
        """``func(kind, name, n, **kwargs)`` bound to these widgets."""
        def _call(kind, dataset, network, n, **kw):
            if kind == NETWORK:
                return func(kind, network, int(n), **kw)
            return func(kind, dataset, 0, **kw)  # n is unused: keep cache keys stable
        return pn.bind(_call, self.kind, self.dataset, self.network, self.sample_size, **kwargs)


def describe_source(kind: str, name: str, n: int) -> str:
    """Short text such as ``'vote (data set)'`` or ``'asia, 1000 samples'``.

    Ready for a Markdown or HTML pane: the name (an uploaded file's name, for
    uploads) is literal text (:func:`md_text`); do not escape the result again.

    Examples
    --------
    >>> describe_source(DATASET, "a*b*", 0)
    'a&#42;b&#42; (data set)'
    """
    return f"{md_text(name)} (data set)" if kind == DATASET else f"{md_text(name)}, {n} samples"


# the first request of a server process (this module is imported by every app and by
# the landing page) starts compiling the kernels in the background
start_kernel_warm_up()

if __name__.startswith("bokeh"):  # served by `panel serve apps/*.py`: not an app
    pn.pane.Markdown("This is a helper module, not an app. [All apps](./)").servable()
