"""Browser test of the Forests app (panel serve apps/ + headless Debian Chromium)."""
import sys
from pathlib import Path

import pytest
from browser_checks import assert_fits_and_no_error

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "apps"))


def test_views_build_without_a_browser():
    import forests as app

    assert "Markov blanket" in app.summary_view("iris", 2.0, 1, "map").object
    assert type(app.forest_view("iris", "\u221e", 1, "bma", 0.3)[0]).__name__ == "Bokeh"
    from browser_checks import assert_boxes_apart

    assert_boxes_apart(app.forest_picture("vote", 2.0, 1, "map", None))  # long names
    assert type(app.alpha_view("iris", 1, "map")).__name__ == "Bokeh"


@pytest.mark.browser
def test_forests_app_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=forests", wait_until="domcontentloaded", timeout=120_000)
    page.wait_for_selector(".bnx-forest-summary", timeout=120_000)
    # Bokeh draws into canvases inside shadow roots: Playwright locators pierce them
    page.locator("canvas").first.wait_for(state="attached", timeout=120_000)
    assert "Forests" in page.title()
    page.locator("canvas").nth(2).wait_for(state="attached", timeout=120_000)
    assert_fits_and_no_error(page)
    before = page.locator(".bnx-forest-summary").first.inner_text()
    assert "alpha = 2" in before
    # move the alpha slider one step to the right (keyboard on its handle)
    handle = page.locator(".noUi-handle").first
    handle.focus()
    handle.press("ArrowRight")
    page.locator(".bnx-forest-summary", has_text="alpha = 2.5").first.wait_for(timeout=180_000)
    after = page.locator(".bnx-forest-summary").first.inner_text()
    assert "alpha = 2.5" in after
    page.locator("canvas").first.wait_for(state="attached", timeout=120_000)
    assert page.locator("canvas").count() > 0
    assert_fits_and_no_error(page)
    assert not page.console_errors, page.console_errors
