"""Browser test of the mixture-weights app (panel serve apps/ + headless Debian Chromium)."""
import time

import pytest
from browser_checks import assert_fits_and_no_error


def _summary(page) -> str:
    loc = page.get_by_text("BMA's largest weight")  # pierces the shadow roots
    return loc.first.inner_text() if loc.count() else ""


def _wait_plots(page, n: int, timeout: float = 120.0) -> int:
    """Wait until at least ``n`` Bokeh canvases exist (locators pierce the shadow DOM)."""
    deadline = time.monotonic() + timeout
    while True:
        count = page.locator("canvas").count()
        if count >= n or time.monotonic() > deadline:
            return count
        page.wait_for_timeout(500)


@pytest.mark.browser
def test_mixture_weights_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=mixture_weights", wait_until="load", timeout=180_000)
    assert _wait_plots(page, 3) >= 3, page.locator("body").inner_text()[:2000]
    assert "Mixture weights" in page.title()
    before = _summary(page)
    assert "100 training rows" in before and "BMA" in before
    assert_fits_and_no_error(page)
    # move the training-size slider (keyboard on its handle)
    handle = page.locator(".noUi-handle").first
    handle.focus()
    for _ in range(5):
        handle.press("ArrowRight")
    deadline = time.monotonic() + 120
    while "105 training rows" not in _summary(page) and time.monotonic() < deadline:
        page.wait_for_timeout(500)
    assert "105 training rows" in _summary(page)
    assert _summary(page) != before
    assert _wait_plots(page, 3) >= 3
    assert_fits_and_no_error(page)   # e.g. after the change, a cache miss must not fail
    assert not page.console_errors, page.console_errors
