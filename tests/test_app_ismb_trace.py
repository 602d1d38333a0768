"""Browser test of the ISMB trace app (panel serve apps/ + headless Debian Chromium)."""
import time

import pytest
from browser_checks import assert_fits_and_no_error


def _summary(page) -> str:
    """Text of the summary line (a Markdown pane: its text sits in the shadow root)."""
    loc = page.locator(".bnx-ismb-summary p")
    return loc.first.inner_text() if loc.count() else ""


def _wait(cond, timeout=90.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.5)
    return False


@pytest.mark.browser
def test_ismb_trace_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=ismb_trace", wait_until="load", timeout=120_000)
    page.locator(".bnx-ismb-summary").first.wait_for(timeout=90_000)
    # Bokeh draws into canvases inside shadow roots: Playwright's CSS locators pierce them
    page.locator("canvas").first.wait_for(state="attached", timeout=90_000)
    n_canvas = page.locator("canvas").count()
    assert n_canvas > 0
    assert "ISMB trace" in page.title()
    assert_fits_and_no_error(page)
    assert _wait(lambda: "phase 1" in _summary(page)), "no summary text"
    before = _summary(page)
    assert "phase 1" in before and "true Z" in before
    # move the test-instance slider one step to the right (keyboard on its handle)
    handle = page.locator(".noUi-handle").first
    handle.focus()
    handle.press("ArrowRight")
    assert _wait(lambda: _summary(page) != before), "summary did not change"
    assert _wait(lambda: page.locator("canvas").count() > 0)
    assert_fits_and_no_error(page)
    assert not page.console_errors, page.console_errors
