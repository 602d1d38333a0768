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

import html
import runpy
import sys
from pathlib import Path

import panel as pn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (ACCENT, AppInfo, app_url, discover_apps, error_box,  # noqa: E402
                     make_template, routed_app)

TITLE = "bnexplore"
DESCRIPTION = "Bayesian model averaging over discrete Bayesian-network structures."

pn.extension(sizing_mode="stretch_width", notifications=False)


def app_card(info: AppInfo) -> pn.pane.HTML:
    """One clickable card for the landing page."""
    href = html.escape(app_url(info.name), quote=True)
    body = (
        f'<a class="bnx-app-link" data-app="{html.escape(info.name)}" href="{href}" '
        f'style="text-decoration:none;color:inherit;display:block">'
        f'<div style="border:1px solid #d0d7de;border-left:6px solid {ACCENT};'
        f'border-radius:6px;padding:14px 18px;min-height:92px;background:#fff">'
        f'<div style="font-size:1.2em;font-weight:600;color:{ACCENT}">'
        f'{html.escape(info.title)}</div>'
        f'<div style="margin-top:6px;color:#444">{html.escape(info.description)}</div>'
        f'</div></a>'
    )
    return pn.pane.HTML(body, width=380, height=130, margin=10, sizing_mode="fixed")


def landing_page() -> pn.template.FastListTemplate:
    apps = discover_apps()
    intro = pn.pane.Markdown(
        "## Explore Bayesian model averaging over Bayesian-network structures\n"
        "Each app below is a picture family from the papers: pick data, move the sliders "
        "and watch structures, arc posteriors and predictions change.",
        margin=(0, 10),
    )
    cards = pn.FlexBox(*[app_card(a) for a in apps]) if apps else pn.pane.Alert(
        "No apps found in apps/.", alert_type="warning")
    return make_template("Apps", main=[pn.Column(intro, cards)],
                         description=DESCRIPTION, home=False)


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
