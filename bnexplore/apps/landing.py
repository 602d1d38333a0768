"""The landing page: one card per app of :data:`~bnexplore.apps.APPS`, in lecture order,
and the router of ``?app=NAME``.

Two ways to serve the apps, one page for both:

* ``panel serve apps/`` serves the folder as one Bokeh *directory app* at ``/apps``
  (its entry point is ``apps/main.py``): the landing page is ``/apps`` and app ``NAME``
  is ``/apps?app=NAME``, which this module routes to :func:`~bnexplore.apps.serve`;
* ``panel serve apps/*.py --index main`` gives every app its own page ``/NAME``; the
  landing page is ``/`` and its cards link to ``./NAME``.

A card shows the app's title and description (from its class), what a lecture uses
it for and about how long that takes (:data:`LECTURE`), and its thumbnail
(``apps/thumbnails/NAME.png``, made by ``scripts/make_thumbnails.py``) when there is one.
"""
from __future__ import annotations

import base64
import functools
import html
from dataclasses import dataclass
from pathlib import Path

import panel as pn

from . import APPS, PAGES, app_class
from .page import ACCENT, on_session, template
from .text import md_text

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

DESCRIPTION = "Bayesian model averaging over discrete Bayesian-network structures."
INTRO = ("## Explore Bayesian model averaging over Bayesian-network structures\n"
         "Each app below is a picture family from the papers: pick data, move the sliders "
         "and watch structures, arc posteriors and predictions change.")


@dataclass(frozen=True)
class Card:
    """What the landing page shows about one app."""

    name: str               # the key of APPS: ``apps/NAME.py``, ``?app=NAME``
    title: str
    description: str
    teaches: str = ""       # what a lecture uses it for (LECTURE)
    minutes: int = 0        # about how long that takes in a lecture


def lecture_order(names) -> list[str]:
    """``names`` in the order of :data:`LECTURE`, the others after them by name.

    Examples
    --------
    >>> lecture_order(["zebra", "compare", "structure"])
    ['structure', 'compare', 'zebra']
    """
    order = list(LECTURE)
    return sorted(names, key=lambda n: (order.index(n) if n in LECTURE else len(order), n))


def cards() -> list[Card]:
    """One :class:`Card` per app of :data:`~bnexplore.apps.APPS`, in lecture order.

    Examples
    --------
    >>> [c.name for c in cards()][:2]
    ['structure', 'order_averaging']
    >>> cards()[0].title
    'Learn a structure'
    """
    out = []
    for name in lecture_order(APPS):
        cls = app_class(name)
        teaches, minutes = LECTURE.get(name, ("", 0))
        out.append(Card(name, cls.title, cls.description, teaches, minutes))
    return out


# --------------------------------------------------------------------------- routing
def _request_path() -> str:
    if not on_session():
        return ""
    return str(getattr(pn.state.curdoc.session_context.request, "path", "") or "")


def routed_app() -> str:
    """The name in the ``?app=`` query argument of this session ('' if none)."""
    val = ((pn.state.session_args or {}).get("app") or [b""])[0]
    return val.decode("utf-8", "replace") if isinstance(val, bytes) else str(val)


def is_directory_mode() -> bool:
    """Whether the apps are served as ``panel serve apps/`` (one page, ``?app=NAME``)
    rather than ``panel serve apps/*.py`` (a page ``/NAME`` per app)."""
    last = _request_path().rstrip("/").rsplit("/", 1)[-1]
    return last not in {"", "main", *APPS, *PAGES}


def app_url(name: str) -> str:
    """Relative link to app ``name`` that works in both ways of serving.

    Examples
    --------
    >>> app_url("structure")          # outside a server: a page per app
    './structure'
    """
    return f"?app={name}" if is_directory_mode() else f"./{name}"


# --------------------------------------------------------------------------- cards
@functools.lru_cache(maxsize=64)
def _data_uri(path: Path, _mtime_ns: int) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def thumbnail_uri(name: str, thumbnails: Path | None) -> str | None:
    """The thumbnail ``thumbnails/NAME.png`` as a data URI (None when there is none)."""
    if thumbnails is None:
        return None
    path = Path(thumbnails) / f"{name}.png"
    try:
        return _data_uri(path, path.stat().st_mtime_ns)
    except OSError:
        return None


def card_pane(card: Card, thumbnails: Path | None = None) -> pn.pane.HTML:
    """One clickable card: thumbnail, title, description, what it teaches.

    Examples
    --------
    >>> pane = card_pane(cards()[0])
    >>> 'data-app="structure"' in pane.object and "Learn a structure" in pane.object
    True
    """
    uri = thumbnail_uri(card.name, thumbnails)
    esc = functools.partial(html.escape, quote=True)
    thumb = (f'<img class="bnx-thumb" src="{uri}" alt="{esc(card.title)}" '
             f'style="width:100%;height:170px;object-fit:cover;object-position:left top;'
             f'border-bottom:1px solid #d0d7de;display:block">' if uri else "")
    teaches = (f'<div class="bnx-teaches" style="margin-top:6px;color:#222;font-size:0.92em;'
               f'line-height:1.35"><b>Teaches</b>: {esc(card.teaches)} '
               f'<span class="bnx-minutes" style="color:#555">(about {card.minutes} min)'
               f'</span></div>' if card.teaches else "")
    height = (318 if uri else 140) + (100 if card.teaches else 0)
    body = (f'<a class="bnx-app-link" data-app="{esc(card.name)}" href="{esc(app_url(card.name))}" '
            f'style="text-decoration:none;color:inherit;display:block">'
            f'<div style="border:1px solid #d0d7de;border-top:5px solid {ACCENT};'
            f'border-radius:6px;overflow:hidden;background:#fff;height:{height}px">'
            f'{thumb}<div style="padding:10px 14px">'
            f'<div style="font-size:1.15em;font-weight:600;color:{ACCENT}">{esc(card.title)}</div>'
            f'<div style="margin-top:5px;color:#444;font-size:0.92em;line-height:1.35">'
            f'{esc(card.description)}</div>{teaches}</div></div></a>')
    return pn.pane.HTML(body, width=300, height=height + 17, margin=10, sizing_mode="fixed")


def glossary_link() -> pn.pane.Markdown:
    """The link to the glossary page (every abbreviation spelled out).

    Examples
    --------
    >>> 'href="./glossary"' in glossary_link().object
    True
    """
    return pn.pane.Markdown(f'<a class="bnx-glossary-link" href="{html.escape(app_url("glossary"))}">'
                            f'Glossary</a>: every abbreviation the apps use (GTT, BMA, M\\*, '
                            f'ISMB-MS, ...) spelled out and defined.', margin=(0, 10))


def landing_page(thumbnails: Path | None = None) -> pn.template.FastListTemplate:
    """The landing page: an introduction and one card per app (see :func:`cards`)."""
    main = pn.Column(pn.pane.Markdown(INTRO, margin=(0, 10)), glossary_link(),
                     pn.FlexBox(*[card_pane(c, thumbnails) for c in cards()]))
    return template("Apps", main=[main], sidebar=[], description=DESCRIPTION, share=False,
                    home=False)


def unknown_app_page(name: str) -> pn.template.FastListTemplate:
    """The page of ``?app=NAME`` for a name that is no app (the name shown as text)."""
    exc = ValueError(f"no app {name!r}; available apps are {sorted(APPS)}")
    alert = pn.pane.Alert(f"**{type(exc).__name__}**: {md_text(exc)}", alert_type="danger")
    return template("Unknown app", main=[alert], sidebar=[], share=False)


def serve(thumbnails: Path | None = None) -> None:
    """Serve this session's page (``apps/main.py``): app ``NAME`` for ``?app=NAME``,
    else the landing page, whose showing starts the kernels' warm-up (a first start
    compiles them while the visitor picks an app)."""
    name = routed_app()
    if name in APPS or name in PAGES:
        from ._dashboard import serve_app
        serve_app(name)
        return
    pn.extension(sizing_mode="stretch_width", notifications=False)
    if name:
        unknown_app_page(name).servable()
        return
    landing_page(thumbnails).servable()
    if on_session():
        from bnexplore import warmup
        pn.state.onload(warmup.start_warm_up)


__all__ = ["LECTURE", "Card", "app_url", "card_pane", "cards", "glossary_link", "is_directory_mode",
           "landing_page", "lecture_order", "routed_app", "serve", "unknown_app_page"]
