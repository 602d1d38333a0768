"""The "Order averaging" app: views without a browser, and a browser test."""
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "apps"))

ARGS = ("Data set", "vote", "alarm", 1000, "Class", 1, 3)


def test_views_build_without_a_browser():
    import order_averaging as app

    text = app.summary_view(*ARGS).object
    assert "k = 1, n = 3" in text and "AMA" in text and "NMA" in text
    from browser_checks import assert_boxes_apart

    kind, dataset, _, n_rows, target, k, n = ARGS
    assert_boxes_apart(app.network_plot(kind, dataset, n_rows, target, k, n))  # M* on vote: long names
    for view in (app.heatmap_view, app.network_view, app.roc_view):
        pane = view(*ARGS)
        pane = pane[0] if type(pane).__name__ == "Column" else pane  # a picture scrolls in a Column
        assert type(pane).__name__ == "Bokeh"
    # M* of many parents is lazy now: what used to exceed the memory budget computes
    lazy = app.summary_view("Network sample", "vote", "alarm", 200, "KINKEDTUBE", 1, 30)
    assert type(lazy).__name__ == "Markdown" and "n = 30" in lazy.object
    # the memory guard shows up as a readable error, not a stack trace
    import bnexplore as bx

    old = bx.data.set_table_budget(1000)
    try:
        big = app.summary_view("Network sample", "vote", "alarm", 300, "KINKEDTUBE", 3, 4)
    finally:
        bx.data.set_table_budget(old)
    assert type(big).__name__ == "Alert" and "budget" in big.object


@pytest.mark.browser
def test_order_averaging_app_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=order_averaging", wait_until="networkidle", timeout=180_000)
    page.wait_for_selector(".bnx-ama-summary", timeout=120_000)
    # Bokeh draws inside shadow roots: Playwright locators pierce them, querySelectorAll does not
    page.locator("canvas").first.wait_for(state="attached", timeout=120_000)
    assert "Order averaging" in page.title()
    # text selectors pierce the shadow roots Panel renders into
    page.get_by_text(re.compile(r"k = 2, n = 4 ")).first.wait_for(timeout=120_000)
    handles = page.locator(".noUi-handle:visible")
    handle = handles.nth(1)  # k, then n
    handle.focus()
    handle.press("ArrowRight")
    page.get_by_text(re.compile(r"k = 2, n = 5 ")).first.wait_for(timeout=120_000)
    # the M* picture (drawn on a canvas) follows: its title model in BokehJS's document,
    # whether the picture was rebuilt or updated in place
    page.wait_for_function(
        """() => Bokeh.documents.some(d => [...d.all_models].some(
               m => typeof m.text === "string" && m.text.includes("Summary network M* (n = 5)")))""",
        timeout=120_000)
    # the pictures updated in place without an error in BokehJS
    page.wait_for_timeout(2_000)
    assert page.console_errors == []
    page.locator("canvas").first.wait_for(state="attached", timeout=120_000)
    assert page.locator("canvas").count() >= 3
    assert not page.console_errors, page.console_errors
