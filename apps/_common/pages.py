"""The page: app discovery, routing, shareable URLs, export buttons and the template.

Every app's page is built by :func:`make_template`, which gives it the bnexplore look
(system font, no web font), syncs the sidebar widgets with the URL query string and
adds the "Share & export" section.
"""
from __future__ import annotations

import ast
import functools
import io
import json
import re
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import panel as pn

from .views import live_session, widget  # noqa: F401  (widget: in the examples)


#: the apps' folder (this package's parent).
APPS_DIR = Path(__file__).resolve().parent.parent


#: accent colour of every page.
ACCENT = "#1f5f8b"
#: font stack used instead of a web font (the apps load nothing from the internet).
SYSTEM_FONT = ("system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, "
               "sans-serif")


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
    teaches: str = ""     # what a lecture uses it for (LECTURE)
    minutes: int = 0      # about how long that takes in a lecture


#: the landing page's order (a lecture on model averaging): app -> (what it teaches,
#: about how many minutes it takes). Apps not listed follow, by name.
LECTURE: dict[str, tuple[str, int]] = {
    "structure": ("One network from data: how a greedy search adds, removes and reverses "
                  "arcs, step by step.", 10),
    "order_averaging": ("Averaging every DAG of one order exactly, and the single summary "
                        "network M* it gives.", 15),
    "all_orders": ("Averaging over orders too: which arcs survive when the order is not "
                   "fixed.", 10),
    "edge_confidence": ("Which prior over structures: order-modular against uniform over "
                        "DAGs, and the bootstrap beside both.", 10),
    "mixture_weights": ("How the weights of a mixture of networks move with the data.", 10),
    "forests": ("Forest-augmented classifiers: averaging over trees and forests "
                "exactly.", 10),
    "clustering": ("Learning many variables: clusters of variables searched one by one.", 10),
    "ismb_trace": ("A model per instance: instance-specific Markov blankets.", 10),
    "compare": ("The classifiers side by side on held-out data.", 10),
    "ask_model": ("Set evidence: what averaging changes in the answers.", 10),
}


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


#: the first top-level definition of a file: its docstring and constants come before.
_FIRST_DEFINITION = re.compile(r"^(?:def |class |async def |@|if __name__)", re.MULTILINE)
#: a module-level assignment of the landing page's constants.
_CONSTANT = re.compile(r"^(?:TITLE|DESCRIPTION)\b\s*[:=]", re.MULTILINE)


def _parse_header(source: str, filename: str) -> ast.Module:
    """The module's statements up to its first definition (the landing page reads nine
    files at its first answer: parsing whole files took a tenth of a second). The whole
    file when ``TITLE`` or ``DESCRIPTION`` is assigned further down, or the header is
    no module of its own."""
    m = _FIRST_DEFINITION.search(source)
    if m is not None and not _CONSTANT.search(source, m.start()):
        try:
            return ast.parse(source[:m.start()], filename=filename)
        except SyntaxError:
            pass
    return ast.parse(source, filename=filename)


@functools.lru_cache(maxsize=256)
def _read_app_info(path: Path, _mtime_ns: int, _size: int) -> AppInfo:
    try:
        tree = _parse_header(path.read_text(encoding="utf-8"), str(path))
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
    """Every app in ``apps_dir``: ``*.py`` except ``main.py`` and ``_*.py``, in the order
    of :data:`LECTURE` (then by name), with what each teaches and how long it takes.

    Examples
    --------
    >>> "structure" in [a.name for a in discover_apps()]
    True
    """
    order = list(LECTURE)
    files = sorted((p for p in Path(apps_dir).glob("*.py")
                    if p.stem != "main" and not p.name.startswith("_")),
                   key=lambda p: (order.index(p.stem) if p.stem in LECTURE else len(order),
                                  p.stem))
    out = []
    for p in files:
        info = _component_info(p) or read_app_info(p)
        teaches, minutes = LECTURE.get(p.stem, ("", 0))
        out.append(AppInfo(info.name, info.title, info.description, info.path, teaches,
                           minutes))
    return out


def _component_info(path: Path) -> AppInfo | None:
    """Title and description of an app ported to :mod:`bnexplore.apps` (from its class)."""
    import bnexplore.apps as bxa

    if path.stem not in bxa.APPS:
        return None
    cls = bxa.app_class(path.stem)
    return AppInfo(path.stem, cls.title, cls.description, path)


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
from bnexplore.apps.page import copy_link_button, download_csv, export_figures_buttons  # noqa: E402,F401


# --------------------------------------------------------------------------- page
def _load_no_mathjax() -> None:
    """Pages of the apps load no MathJax.

    Panel adds Bokeh's MathJax bundle (1.8 MB of JavaScript, a fifth of a second of
    every page load on a fast machine) to any page with an HTML or Markdown pane, in
    case its text holds TeX. The apps' texts hold none, and what users type is escaped
    (:func:`md_text`), never rendered as math. Bokeh's own check still loads it for a
    picture whose labels hold TeX.
    """
    from panel.io import resources

    if hasattr(resources, "_panel_use_mathjax"):       # Panel's check (1.x)
        resources._panel_use_mathjax = lambda roots: False


_load_no_mathjax()


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
        # no header spinner: Panel keeps one process-wide busy flag and sets every
        # session's spinner on each event of any session (30 sessions moving a slider
        # made 1,800 spinner updates, most of the server's time); each view shows
        # its own progress instead (views.BackgroundView)
        busy_indicator=None,
    )
    return tpl
