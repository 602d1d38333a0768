"""Shareable links (widget state in the URL) and exports, for every app."""
from __future__ import annotations

import time
import urllib.parse
from pathlib import Path

import panel as pn
import param
import pytest

from bnexplore.apps import PAGES, App
from bnexplore.apps._base import guarded
from bnexplore.experiments.compare import PARAM_RANGES

#: the handle of the structure app's max in-degree slider (max_parents' declared range)
K_HANDLE = ('.noUi-handle[aria-valuemax="{0}.0"], .noUi-handle[aria-valuemax="{0}"]'
            .format(PARAM_RANGES["max_parents"][1]))

REPO = Path(__file__).resolve().parents[1]
APPS = sorted(p.stem for p in (REPO / "apps").glob("*.py")     # the glossary has no settings
              if p.stem not in {"main", *PAGES} and not p.name.startswith("_"))


def test_the_template_adds_the_share_section():
    import panel as pn

    from bnexplore.apps.page import template

    tpl = template("T", main=[pn.pane.Markdown("x")], sidebar=[])
    assert "bnx-share" in str([o for o in tpl.sidebar])
    plain = template("T", main=[], sidebar=[], share=False)
    assert "bnx-share" not in str([o for o in plain.sidebar])


def test_the_address_stays_a_complete_link_when_the_browser_reports_its_own_late(monkeypatch):
    """The browser reports the address it opened when it connects; when that report
    came after the page had loaded, it replaced the complete link written at load
    (seen in CI: a page whose address kept "?app=..." only)."""
    from bokeh.document import Document

    from bnexplore.apps import _base
    from bnexplore.apps.structure import LearnStructure

    monkeypatch.setattr(_base, "on_session", lambda: True)
    doc = Document()
    pn.state.curdoc = doc
    try:
        app = LearnStructure("iris", max_parents=1)
        app.sync_url()
        loc = pn.state.location
        pn.state._on_load(doc)                      # the page has loaded
        full = dict(urllib.parse.parse_qsl(loc.search.lstrip("?")))
        assert full["max_parents"] == "1" and full["dataset"] == "iris"
        loc.search = "?app=structure"               # the browser's late report
        late = dict(urllib.parse.parse_qsl(loc.search.lstrip("?")))
        assert {k: late.get(k) for k in full} == full
        app.max_parents = 2                         # a move still reaches the link
        assert dict(urllib.parse.parse_qsl(loc.search.lstrip("?")))["max_parents"] == "2"
    finally:
        pn.state.curdoc = None


def test_download_csv():
    import pandas as pd

    from bnexplore.apps.page import download_csv
    calls = []

    def table():
        calls.append(1)
        return pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})

    btn = download_csv(table, "t")
    assert btn.filename == "t.csv"
    assert btn.callback().read() == "a,b\n1,x\n2,y\n" and calls == [1]


class Divide(App):
    """An app with one view, 1 / x; the page moves x from 3 to 4 while it computes."""

    x = param.Number(default=2.0)

    @param.depends("data", "x")
    @guarded
    def view(self):
        x = self.x
        if x == 3:
            self.x = 4
        return pn.pane.Markdown(str(1 / x))


def test_guarded_isolates_a_failure():
    import html

    from bnexplore.apps.data import no_data

    app = Divide()
    assert app.view().object == "0.5"
    app.x = 0
    box = app.view()
    assert isinstance(box, pn.pane.Alert) and "ZeroDivisionError" in box.object
    app.x = 2
    app.data = no_data("a link cannot carry <uploaded> data")      # no data: the reason, as text
    box = app.view()
    assert "bnx-no-data" in box.css_classes
    assert html.unescape(box.object) == "a link cannot carry <uploaded> data"
    assert "<uploaded>" not in box.object


def test_guarded_drops_a_result_its_parameters_outdated():
    """A computation for old values that ends after a change is not shown (Panel then
    shows the computation for the new values)."""
    app = Divide()
    app.x = 3
    with pytest.raises(param.Skip):
        app.view()
    assert app.x == 4 and app.view().object == "0.25"


class Probe(App):
    """An app whose view builds what views build (a widget, a bound function in a layout)
    and notes the document it saw."""

    x = param.Integer(default=1)
    seen: dict = {}

    @param.depends("data", "x")
    @guarded
    def view(self):
        from bnexplore.apps.page import for_served_page

        Probe.seen.update(doc=pn.state.curdoc, served=for_served_page())
        slider = pn.widgets.IntSlider(value=self.x, start=0, end=3)
        return pn.Column(slider, pn.bind(lambda v: pn.pane.Markdown(str(v)), slider))


def test_a_view_computed_for_a_served_page_holds_no_session_document(monkeypatch):
    """On a served page a view is computed in a worker thread with no session document
    current: Panel objects hold "the current document" while they are made, and Panel
    releases a hold made from a thread on a later tick of the loop; a browser message
    handled in between makes Bokeh count the session's new models as sent, and the page
    fails with "reference ... isn't known" (seen in the series of uploads)."""
    import asyncio
    import concurrent.futures
    import contextvars

    from bokeh.document import Document

    from bnexplore.apps import _base

    session_doc = Document()
    monkeypatch.setattr(_base, "on_session", lambda: True)   # as on a served page
    app = Probe()
    pn.state.curdoc = session_doc
    try:
        view = app.view()
        assert asyncio.iscoroutine(view)       # computed in a worker, awaited on the loop
        # a loop of its own in another thread (an earlier test may leave this thread's
        # loop running), in this context: the session document is current there
        context = contextvars.copy_context()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            out = pool.submit(context.run, asyncio.run, view).result()
    finally:
        pn.state.curdoc = None
    assert Probe.seen["doc"] is not session_doc
    assert session_doc.callbacks.hold_value is None
    assert Probe.seen["served"] is True        # pictures still render in the worker
    assert isinstance(out, pn.Column) and out[0].value == 1


class Pictured(App):
    """A view with a static picture and a picture with a stream (tap to pick)."""

    @param.depends("data")
    @guarded
    def view(self):
        import holoviews as hv
        import holoviews.plotting.bokeh  # noqa: F401 - options of the bokeh backend

        static = hv.Curve([1, 3, 2]).opts(responsive=True, height=200)
        tapped = hv.DynamicMap(lambda x, y: hv.Points([(x or 0, y or 0)]),
                               streams=[hv.streams.Tap()])
        return pn.Column(pn.pane.HoloViews(static, sizing_mode="stretch_width"),
                         pn.pane.HoloViews(tapped))


def test_a_served_view_draws_its_static_pictures_in_the_worker(monkeypatch):
    """The worker renders a view's static HoloViews pictures to their Bokeh plots, so the
    event loop (every other session) only attaches them; a picture with a stream stays
    a HoloViews object that Panel updates on the loop. The pane keeps the plot: the
    picture is sized as Panel sizes a HoloViews object (stretching here)."""
    import asyncio
    import concurrent.futures
    import contextvars

    import holoviews as hv
    from bokeh.document import Document
    from holoviews.plotting.plot import Plot

    from bnexplore.apps import _base

    monkeypatch.setattr(_base, "on_session", lambda: True)
    app = Pictured()
    pn.state.curdoc = Document()
    try:
        context = contextvars.copy_context()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            out = pool.submit(context.run, asyncio.run, app.view()).result()
    finally:
        pn.state.curdoc = None
    static, tapped = out.select(pn.pane.HoloViews)
    assert isinstance(static.object, Plot) and static.object.state.title is not None
    assert isinstance(tapped.object, hv.DynamicMap)
    model = static.get_root(Document())
    assert model.sizing_mode == "stretch_width"
    # in place (a notebook) nothing is drawn ahead
    monkeypatch.undo()
    inline = Pictured().view()
    assert isinstance(inline.select(pn.pane.HoloViews)[0].object, hv.Curve)


# ------------------------------------------------------------------ browser
def _query(page) -> dict:
    return {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query).items()}


def _score(page) -> str:
    return (page.locator(".bnx-score").first.text_content() or "").strip()


def _wait(pred, timeout_s=90.0, page=None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return True
        page.wait_for_timeout(250)
    return False


@pytest.mark.browser
def test_a_link_reproduces_the_view(panel_server, page, browser):
    page.goto(f"{panel_server}/apps?app=structure&dataset=iris&score=BDeu&max_parents=2")
    page.locator(".bnx-score").first.wait_for(timeout=120_000)
    assert _wait(lambda: "iris" in (page.locator(".bnx-source").first.text_content() or ""),
                 page=page)
    q = _query(page)
    assert q["app"] == "structure" and q["dataset"] == "iris" and q["score"] == "BDeu"
    assert q["max_parents"] == "2"
    assert "sample_size" in q and "source" in q        # every sidebar widget is in the link
    # moving a slider updates the address bar
    handle = page.locator(K_HANDLE).first
    handle.focus()
    handle.press("ArrowLeft")
    assert _wait(lambda: _query(page).get("max_parents") == "1", page=page)
    assert _wait(lambda: _score(page) not in ("",), page=page)
    page.wait_for_timeout(1500)
    score = _score(page)
    link = page.url

    # the link opened in another browser context (another user) shows the same view
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        other = ctx.new_page()
        other.goto(link)
        other.locator(".bnx-score").first.wait_for(timeout=120_000)
        assert _wait(lambda: _score(other) == score, page=other), (_score(other), score)
        assert "iris" in (other.locator(".bnx-source").first.text_content() or "")
    finally:
        ctx.close()
    assert page.console_errors == []


@pytest.mark.browser
def test_bad_url_values_are_ignored(panel_server, page):
    page.goto(f"{panel_server}/apps?app=structure&max_parents=99&dataset=no-such-data")
    page.locator(".bnx-score").first.wait_for(timeout=120_000)
    assert _wait(lambda: _query(page).get("max_parents") == "3", page=page)
    assert _query(page)["dataset"] == "vote"
    assert page.console_errors == []


@pytest.mark.browser
@pytest.mark.parametrize("app", APPS)
def test_every_app_puts_its_settings_in_the_url(panel_server, page, app):
    page.goto(f"{panel_server}/apps?app={app}")
    assert _wait(lambda: len(_query(page)) > 1, timeout_s=120, page=page), page.url
    page.locator("text=Copy link to this view").first.wait_for(timeout=30_000)
    assert page.locator("button:has-text('Figures as PNG')").count() == 1
