"""The "Clustering hierarchy" app: views without a browser, then the served page in Chromium."""
import re
import sys
from pathlib import Path

import pytest
from browser_checks import assert_fits_and_no_error

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "apps"))

ARGS = ("Network sample", "asia", 1000, True, 3, "hierarchy", 0)


def test_views_build_without_a_browser():
    import clustering as app

    text = app.summary_view(*ARGS).object
    assert "greedy q" in text and "incremental q" in text
    assert type(app.dendrogram_view(*ARGS)).__name__ == "Bokeh"
    table = app.strategy_view(*ARGS).value
    assert sorted(sum((v.split(", ") for v in table["variables"]), [])) == sorted(
        app.dataset("Network sample", "asia", 1000)[0].columns)
    view = app.subspace_view(*ARGS, 3)
    from browser_checks import assert_boxes_apart

    assert_boxes_apart(app.subspace_picture(*ARGS, 2))   # the picture of sub-space 3
    assert type(view[1][0]).__name__ == "Bokeh" and "Sub-space 3 of" in view[0].object
    assert type(app.timeline_view(*ARGS)).__name__ == "FlexBox"
    # honeycomb source: the table reports the share of each cluster in its main cell
    hc = app.strategy_view("Network sample", app.HONEYCOMB, 1000, True, 4, "hierarchy", 0).value
    assert "share in main group" in hc
    # an impossible setting is shown as an error box, not raised
    assert type(app.summary_view("Network sample", "asia", 1000, True, 0, "hierarchy", 0)).__name__ == "Alert"


def _wait_canvases(page, n, timeout=120.0):
    """Wait until ``n`` Bokeh canvases exist (Playwright locators pierce the shadow DOM)."""
    import time

    deadline = time.monotonic() + timeout
    while page.locator("canvas").count() < n:
        assert time.monotonic() < deadline, f"fewer than {n} plots rendered"
        page.wait_for_timeout(500)


def _text(page, css_class):
    """Text of a Panel pane (its content lives in the element's shadow root)."""
    return page.locator(f".{css_class}").first.evaluate(
        "e => (e.shadowRoot ? e.shadowRoot.textContent : e.textContent) || ''")


def _wait_change(page, css_class, before, timeout=120.0, contains=""):
    import time

    deadline = time.monotonic() + timeout
    while (lambda t: t == before or contains not in t)(_text(page, css_class)):
        assert time.monotonic() < deadline, f".{css_class} did not change"
        page.wait_for_timeout(500)
    return _text(page, css_class)


def _q(page):
    return _text(page, "bnx-summary")


@pytest.mark.browser
def test_clustering_app_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=clustering", wait_until="domcontentloaded", timeout=120_000)
    page.wait_for_selector(".bnx-summary", timeout=120_000)
    _wait_canvases(page, 4)
    assert_fits_and_no_error(page)   # the dendrogram used to run off the right edge
    assert "Clustering hierarchy" in page.title()
    before = _q(page)
    assert re.search(r"greedy q = \d+", before) and "alarm" in before
    # move the cluster-size slider one step (keyboard on its handle): the strategy,
    # the incremental q and the pictures are recomputed
    slider = page.locator(".bk-panel-models-widgets-IntSlider, .bk-input-group", has_text="Cluster size")
    handle = slider.locator(".noUi-handle").first
    handle.focus()
    handle.press("ArrowRight")
    pat = r"incremental q = (\d+) \((\d+) clusters"
    q_before = re.search(pat, before).groups()
    import time
    deadline = time.monotonic() + 120
    while re.search(pat, _q(page)) is None or re.search(pat, _q(page)).groups() == q_before:
        assert time.monotonic() < deadline, "the summary did not follow the cluster-size slider"
        page.wait_for_timeout(500)
    _wait_canvases(page, 4)
    # step the player forward: the sub-space picture moves to the next sub-space
    sub_before = _text(page, "bnx-subspace")
    assert "Sub-space 1 of" in sub_before
    page.locator("button.next").first.click()
    sub_after = _wait_change(page, "bnx-subspace", sub_before, contains="Sub-space 2 of")
    assert "Sub-space 2 of" in sub_after
    _wait_canvases(page, 4)
    assert_fits_and_no_error(page)
    assert not page.console_errors, page.console_errors
