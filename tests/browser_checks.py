"""Assertions shared by the apps' browser tests."""


def assert_fits_and_no_error(page) -> None:
    """No plot reaches past the window's right edge, and no panel shows an error box."""
    right = page.locator("canvas").evaluate_all(
        "els => Math.max(0, ...els.map(e => e.getBoundingClientRect().right))")
    width = page.evaluate("() => window.innerWidth")
    assert right <= width + 1, f"a plot is cut off: its right edge is at {right}px of {width}px"
    boxes = page.locator(".alert-danger")
    # an Alert's text lives in its shadow root: inner_text of the host is empty
    assert boxes.count() == 0, boxes.evaluate_all(
        "els => els.map(e => Array.from((e.shadowRoot || e).childNodes)"
        "  .filter(n => n.nodeName !== 'STYLE').map(n => n.textContent).join(''))")
