"""bnexplore apps.

Landing page: one card per app found in ``apps/``.

Works in both serving modes:

* ``panel serve apps/`` serves this directory as one Bokeh *directory app* whose entry
  point is this file; the other apps are then reached as ``?app=NAME`` and this file
  runs them (router).
* ``panel serve apps/*.py --index main`` gives every app its own URL ``/NAME`` and this
  page is the index ``/``.

App titles and descriptions are read from the files with :mod:`ast` (no import), so a
new ``apps/NAME.py`` shows up here without editing this file.
"""
from __future__ import annotations

import base64
import functools
import html
import runpy
import sys
from pathlib import Path

import panel as pn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (ACCENT, THUMBNAILS_DIR, AppInfo, app_url, discover_apps,  # noqa: E402
                     error_box, make_template, routed_app, start_kernel_warm_up_when_shown)

TITLE = "bnexplore"
DESCRIPTION = "Bayesian model averaging over discrete Bayesian-network structures."

pn.extension(sizing_mode="stretch_width", notifications=False)


@functools.lru_cache(maxsize=64)
def _thumbnail_uri(name: str, mtime: float) -> str:
    data = (THUMBNAILS_DIR / f"{name}.png").read_bytes()
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def thumbnail_uri(name: str) -> str | None:
    """The app's thumbnail (``apps/thumbnails/NAME.png``) as a data URI, or None."""
    path = THUMBNAILS_DIR / f"{name}.png"
    try:
        return _thumbnail_uri(name, path.stat().st_mtime)
    except OSError:
        return None


def app_card(info: AppInfo) -> pn.pane.HTML:
    """One clickable card for the landing page: thumbnail, title, two-line explanation.

    Thumbnails are made by ``scripts/make_thumbnails.py``; an app without one gets a
    plain card.
    """
    href = html.escape(app_url(info.name), quote=True)
    uri = thumbnail_uri(info.name)
    thumb = (f'<img class="bnx-thumb" src="{uri}" alt="{html.escape(info.title)}" '
             f'style="width:100%;height:170px;object-fit:cover;object-position:left top;'
             f'border-bottom:1px solid #d0d7de;display:block">' if uri else "")
    body = (
        f'<a class="bnx-app-link" data-app="{html.escape(info.name)}" href="{href}" '
        f'style="text-decoration:none;color:inherit;display:block">'
        f'<div style="border:1px solid #d0d7de;border-top:5px solid {ACCENT};'
        f'border-radius:6px;overflow:hidden;background:#fff;height:{(318 if uri else 140) + (100 if info.teaches else 0)}px">'
        f'{thumb}<div style="padding:10px 14px">'
        f'<div style="font-size:1.15em;font-weight:600;color:{ACCENT}">'
        f'{html.escape(info.title)}</div>'
        f'<div style="margin-top:5px;color:#444;font-size:0.92em;line-height:1.35">'
        f'{html.escape(info.description)}</div>'
        + (f'<div class="bnx-teaches" style="margin-top:6px;color:#222;font-size:0.92em;'
           f'line-height:1.35"><b>Teaches</b>: {html.escape(info.teaches)} '
           f'<span class="bnx-minutes" style="color:#555">(about {info.minutes} min)</span>'
           f'</div>' if info.teaches else "")
        + '</div></div></a>'
    )
    return pn.pane.HTML(body, width=300, height=(335 if uri else 155) + (100 if info.teaches else 0), margin=10,
                        sizing_mode="fixed")


def landing_page() -> pn.template.FastListTemplate:
    apps = discover_apps()
    intro = pn.pane.Markdown(
        "## Explore Bayesian model averaging over Bayesian-network structures\n"
        "Each app below is a picture family from the papers: pick data, move the sliders "
        "and watch structures, arc posteriors and predictions change.",
        margin=(0, 10),
    )
    # a fresh install compiles the kernels while the visitor reads this page
    start_kernel_warm_up_when_shown()
    cards = pn.FlexBox(*[app_card(a) for a in apps]) if apps else pn.pane.Alert(
        "No apps found in apps/.", alert_type="warning")
    return make_template("Apps", main=[pn.Column(intro, cards)],
                         description=DESCRIPTION, home=False, share=False)


def route(name: str) -> None:
    """Run app ``name`` in this session (directory mode), or show an error page."""
    known = {a.name: a for a in discover_apps()}
    if name not in known:
        make_template("Unknown app", main=[error_box(ValueError(
            f"no app {name!r}; available apps are {sorted(known)}"))]).servable()
        return
    # run_name starting with "bokeh" makes the app's own `.servable()` guard fire
    runpy.run_path(str(known[name].path), run_name=f"bokeh_app_{name}")


if __name__.startswith("bokeh"):
    _name = routed_app()
    if _name:
        route(_name)
    else:
        landing_page().servable()
