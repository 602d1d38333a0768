"""Browser test of the mixture-weights app (panel serve apps/ + headless Debian Chromium)."""
import pytest


def _summary(page) -> str:
    return page.locator(".bnx-mix-summary").first.inner_text()


@pytest.mark.browser
def test_mixture_weights_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=mixture_weights", wait_until="load", timeout=180_000)
    page.wait_for_selector(".bnx-mix-summary", timeout=120_000)
    page.wait_for_function("document.querySelectorAll('canvas').length >= 3", timeout=120_000)
    assert "Mixture weights" in page.title()
    before = _summary(page)
    assert "100 training rows" in before and "BMA" in before
    # move the training-size slider (keyboard on its handle)
    handle = page.locator(".noUi-handle").first
    handle.focus()
    for _ in range(5):
        handle.press("ArrowRight")
    page.wait_for_function(
        "(prev) => { const el = document.querySelector('.bnx-mix-summary');"
        " return el && el.innerText !== prev && !el.innerText.includes('100 training'); }",
        arg=before, timeout=120_000)
    after = _summary(page)
    assert "105 training rows" in after
    page.wait_for_function("document.querySelectorAll('canvas').length >= 3", timeout=120_000)
    assert not page.console_errors, page.console_errors
