"""The page around an app: the template, the share buttons and CSV downloads.

Served, an app is a :class:`panel.template.FastListTemplate` (the bnexplore look: system
font, no web font, nothing loaded from the internet) with its controls in the sidebar,
a "Share & export" section (copy the link, figures as PNG/SVG drawn by Bokeh in the
browser) and its views in the main area. Inline (Jupyter) an app is a plain layout.
"""
from __future__ import annotations

import asyncio
import contextvars
import io
import json
import re
from typing import Any, Callable

import panel as pn
from bokeh.document import Document

from . import _private

#: the design of a served page (its template's).
DESIGN = pn.template.FastListTemplate.param.design.default
#: accent colour of every page.
ACCENT = "#1f5f8b"
#: font stack used instead of a web font (the apps load nothing from the internet).
SYSTEM_FONT = ("system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, "
               "sans-serif")

_private.apply()

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


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


def export_figures_buttons(basename: str = "bnexplore") -> pn.Row:
    """Two buttons that save every figure of the page as PNG or SVG files (in the browser)."""
    base = _slug(basename) or "bnexplore"
    row = []
    for fmt in ("png", "svg"):
        b = pn.widgets.Button(name=f"Figures as {fmt.upper()}", color="light",
                              css_classes=[f"bnx-export-{fmt}"], sizing_mode="stretch_width")
        b.js_on_click(code=_EXPORT_JS.replace("FMT", json.dumps(fmt))
                      .replace("BASE", json.dumps(base)))
        row.append(b)
    return pn.Row(*row, sizing_mode="stretch_width")


def copy_link_button() -> pn.widgets.Button:
    """A button that copies the page address (with every setting) to the clipboard."""
    label = "Copy link to this view"
    b = pn.widgets.Button(name=label, color="light", css_classes=["bnx-copy-link"],
                          sizing_mode="stretch_width")
    b.js_on_click(args={"btn": b}, code=_COPY_LINK_JS.replace("LABEL", json.dumps(label)))
    return b


def download_csv(frame: Any, filename: str, label: str = "Download CSV"
                 ) -> pn.widgets.FileDownload:
    """A button that downloads a table as CSV.

    Parameters
    ----------
    frame : DataFrame or callable
        The table, or a function returning it (called at click time).
    filename : str
        Name of the downloaded file (``.csv`` is added when missing).

    Examples
    --------
    >>> import pandas as pd
    >>> b = download_csv(pd.DataFrame({"a": [1]}), "t")
    >>> b.filename, b.callback().read()
    ('t.csv', 'a\\n1\\n')
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
                                   color="light", embed=False,
                                   css_classes=["bnx-download-csv"],
                                   sizing_mode="stretch_width")


def table(frame, filename: str, **kwargs: Any) -> pn.Column:
    """A read-only table of ``frame`` with its CSV download (column titles are text)."""
    from .text import table_titles

    opts = dict(show_index=False, disabled=True, pagination="local", page_size=12,
                layout="fit_data_stretch", sizing_mode="stretch_width",
                titles=table_titles(frame))
    opts.update(kwargs)
    return pn.Column(pn.widgets.Tabulator(frame.reset_index(drop=True), **opts),
                     download_csv(frame, filename), sizing_mode="stretch_width")


def home_url() -> str:
    """The landing page, relative to this page: ``panel serve apps/`` serves the apps as
    ``/apps?app=NAME`` (the landing page is ``/apps``), ``panel serve apps/*.py`` as
    ``/NAME`` (the landing page is ``/``)."""
    from urllib.parse import quote

    if on_session() and (pn.state.session_args or {}).get("app"):
        path = str(getattr(pn.state.curdoc.session_context.request, "path", "") or "")
        last = path.rstrip("/").rsplit("/", 1)[-1]
        return f"./{quote(last)}" if last else "./"
    return "./"


def home_link() -> pn.pane.HTML:
    """A link back to the landing page."""
    return pn.pane.HTML(f'<a href="{home_url()}" class="bnx-home">&larr; all apps</a>',
                        margin=(5, 10))


def template(title: str, main: list, sidebar: list, description: str = "",
             share: bool = True, home: bool = True) -> pn.template.FastListTemplate:
    """A :class:`panel.template.FastListTemplate` with the bnexplore look."""
    side: list[Any] = [home_link()] if home else []
    if description:
        side.append(pn.pane.Markdown(description, margin=(0, 10)))
    side.extend(sidebar)
    if share:
        side.append(pn.Column(
            pn.pane.Markdown("### Share & export", margin=(10, 10, 0, 10)),
            pn.pane.Markdown("The address bar holds every setting: a link reproduces "
                             "this view.", margin=(0, 10), styles={"font-size": "0.9em"}),
            copy_link_button(), export_figures_buttons(title),
            sizing_mode="stretch_width", css_classes=["bnx-share"]))
    return pn.template.FastListTemplate(
        design=DESIGN, title=title, site="bnexplore", site_url=home_url(), main=list(main),
        sidebar=side,
        accent=ACCENT, header_background=ACCENT, theme_toggle=False, main_layout=None,
        sidebar_width=330, font=SYSTEM_FONT,
        # no header spinner: Panel keeps one process-wide busy flag and sets every
        # session's spinner on each event of any session; each view shows its own
        busy_indicator=None)


def on_session() -> bool:
    """Whether the current code runs for a served page (a Bokeh server session)."""
    doc = pn.state.curdoc
    return doc is not None and getattr(doc, "session_context", None) is not None


#: True in a worker thread that computes for a served page (:func:`in_worker`).
_FOR_SERVED_PAGE = contextvars.ContextVar("bnx_for_served_page", default=False)


def _detached(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    # Runs in the worker, in a copy of the caller's context: the settings below hold
    # for this call only. Panel objects built here (a pn.bind, a layout) hold and
    # release "the current document" as they are made; from a thread Panel releases a
    # hold on a later tick of the loop, and a browser message handled in between makes
    # Bokeh count the session's new models as already sent (the page then fails with
    # "reference ... isn't known"). So the current document here is a fresh one that
    # no page shows.
    _FOR_SERVED_PAGE.set(True)
    pn.state.curdoc = Document()
    return fn(*args, **kwargs)


async def in_worker(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` computed in a worker thread for a served page, awaited on
    the event loop; in the worker no session document is current (see
    :func:`for_served_page`)."""
    return await asyncio.to_thread(_detached, fn, *args, **kwargs)


def for_served_page() -> bool:
    """Whether the current code computes for a served page: on the event loop of a
    session, or in a worker thread started by :func:`in_worker` for one."""
    return on_session() or _FOR_SERVED_PAGE.get()


def picture(obj, **kwargs) -> pn.viewable.Viewable:
    """A HoloViews picture as a pane; for a served page it is rendered to Bokeh here, in
    the worker thread that builds the view, as a Bokeh pane of the
    size its options give."""
    if for_served_page():
        from .figures import _render

        return pn.pane.Bokeh(_render(obj).state, **kwargs)
    return pn.pane.HoloViews(obj, **kwargs)
