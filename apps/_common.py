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
          create_app().servable()

* Heavy results are cached with :func:`cached` (an LRU cache keyed on the settings and
  shared by all sessions), and views
  are built with :func:`reactive` so that a spinner shows while they recompute.

* Shareable links: :func:`make_template` syncs every sidebar widget with the URL query
  string (``?max_in_degree=2&score=BDeu``), so a link reproduces the view; opt a widget
  out with :func:`no_url`. The sidebar also gets "Export" buttons that save every
  figure of the page as PNG or SVG (Bokeh's own renderer, in the browser); tables get
  a CSV button with :func:`download_csv`.
* :class:`DataSource` includes an upload of a CSV/ARFF file (parsed by
  :mod:`bnexplore.data`, never executed), choice of target and MDL discretisation;
  uploaded data reach the apps through :func:`load_data` like a bundled data set.

Files whose name starts with ``_`` (like this one) are helpers, not apps.
"""
from __future__ import annotations

import ast
import base64
import collections
import functools
import hashlib
import io
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
    >>> w = pn.widgets.IntSlider(name="Max in-degree", start=1, end=5, value=3)
    >>> list(url_widgets([pn.Column(w)]))
    ['max_in_degree']
    """
    found: list = []
    for obj in objects:
        if isinstance(obj, pn.widgets.Widget):
            cands = [obj]
        elif hasattr(obj, "select"):
            try:
                cands = obj.select(pn.widgets.Widget)
            except Exception:  # noqa: BLE001 - some panes cannot be traversed
                cands = []
        else:
            cands = []
        for w in cands:
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


def sync_url(objects: list) -> dict[str, pn.widgets.Widget]:
    """Sync the widgets of ``objects`` with the URL query string of this session.

    Values in the URL are applied first (a shared link reproduces the view; a value
    a widget rejects, e.g. out of range, is ignored), then every change of a widget
    is written back to the address bar. Outside a server session nothing is synced.
    Returns the synced widgets by query name.
    """
    mapping = url_widgets(objects)
    doc = pn.state.curdoc
    if doc is None or getattr(doc, "session_context", None) is None:
        return mapping
    loc = pn.state.location
    if loc is None:
        return mapping
    for name, w in mapping.items():
        try:
            loc.sync(w, {"value": name}, on_error=lambda bad: None)
        except Exception:  # noqa: BLE001 - a widget that cannot be synced stays local
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


def reactive(func: Callable, *args: Any, **kwargs: Any) -> pn.viewable.Viewable:
    """``pn.bind(func, *args, **kwargs)`` shown in a pane with a loading spinner.

    This is the progress-indicator pattern of the apps: while ``func`` recomputes
    (after a widget change) the pane greys out and shows Panel's spinner.
    Extra layout options go through ``pane_options``.
    """
    opts = kwargs.pop("pane_options", {})
    return pn.panel(pn.bind(func, *args, **kwargs), loading_indicator=True, **opts)


def error_box(exc: BaseException) -> pn.pane.Alert:
    """A readable error panel instead of a stack trace."""
    return pn.pane.Alert(f"**{type(exc).__name__}**: {exc}", alert_type="danger")


# --------------------------------------------------------------------------- caching
_CACHES: dict[tuple[str, str], Callable] = {}


def cached(maxsize: int = 64) -> Callable[[Callable], Callable]:
    """:func:`functools.lru_cache` shared by every session of the server.

    Bokeh re-executes an app file for each session, which would give each session a
    fresh cache; here the cache is registered by (file, function name), so all sessions
    share it. Arguments must be hashable (use the widget values: str, int, float).

    Examples
    --------
    >>> @cached(maxsize=8)
    ... def square(x):
    ...     return x * x
    >>> square(3), square.cache_info().hits
    (9, 0)
    """
    def deco(func: Callable) -> Callable:
        key = (func.__code__.co_filename, func.__qualname__)
        if key not in _CACHES:
            _CACHES[key] = functools.lru_cache(maxsize=maxsize)(func)
        return _CACHES[key]
    return deco


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


@cached(maxsize=32)
def load_data(kind: str, name: str, n: int = 1000, seed: int = 0):
    """A bundled data set (MDL-discretised) or a sample of a bundled network.

    In data sets a missing value becomes a state of its own (``missing="state"``), so
    no rows are lost. Cached on the arguments, shared by all sessions of the server.
    """
    import warnings

    import bnexplore as bx

    if kind == DATASET:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return bx.datasets.load(name, discretize="mdl", missing="state")
    if kind == NETWORK:
        return bx.networks.load(name).sample(int(n), seed=seed)
    raise ValueError(f"kind must be {DATASET!r} or {NETWORK!r}, got {kind!r}")


class DataSource:
    """Widgets that choose a bundled data set or a sample of a bundled network.

    Attributes
    ----------
    kind, dataset, network, sample_size : panel widgets
        Bind these (``pn.bind(f, src.kind, src.dataset, src.network, src.sample_size)``) or
        use :meth:`param_values` as the arguments of a cached loader.

    Examples
    --------
    >>> src = DataSource()
    >>> src.kind.value in (DATASET, NETWORK)
    True
    """

    def __init__(self, default_dataset: str = "vote", default_network: str = "asia",
                 default_kind: str = DATASET, default_n: int = 1000):
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
        self._sync(self.kind.value)
        self.kind.param.watch(lambda e: self._sync(e.new), "value")

    def _sync(self, kind: str) -> None:
        net = kind == NETWORK
        self.dataset.visible = not net
        self.network.visible = net
        self.sample_size.visible = net

    @property
    def name(self) -> pn.widgets.Widget:
        """The select of the active kind."""
        return self.network if self.kind.value == NETWORK else self.dataset

    def widgets(self) -> list:
        """The widgets for a sidebar."""
        return [self.kind, self.dataset, self.network, self.sample_size]

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
    """Short text such as ``'vote (data set)'`` or ``'asia, 1000 samples'``."""
    return f"{name} (data set)" if kind == DATASET else f"{name}, {n} samples"


if __name__.startswith("bokeh"):  # served by `panel serve apps/*.py`: not an app
    pn.pane.Markdown("This is a helper module, not an app. [All apps](./)").servable()
