"""Every app in a real browser at 1400 px and 800 px wide: screenshots into
docs/screenshots/, no horizontal scroll, no error box, no responsive-mode warnings.

Slow (every app computes its first results): ``pytest -m slow tests/test_app_screenshots.py``
refreshes the README's screenshots. The fast suite checks the same things on the
apps its other browser tests open (``browser_checks``).
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from browser_checks import assert_fits_and_no_error

REPO = Path(__file__).resolve().parents[1]
SHOTS = REPO / "docs" / "screenshots"
APPS = sorted(p.stem for p in (REPO / "apps").glob("*.py")
              if p.stem != "main" and not p.name.startswith("_"))
WIDTHS = (1400, 800)
HEIGHT = 1500  # the template scrolls inside the page: a tall window shows more


def _settled(page, timeout_s: float = 240.0) -> None:
    """Wait until nothing is computing and the number of plots stays put for 3 s."""
    deadline = time.monotonic() + timeout_s
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        busy = page.locator("text=Computing").count() + page.locator(".pn-loading").count()
        n = page.locator("canvas").count()
        if n != last or busy:
            last, since = n, time.monotonic()
        elif time.monotonic() - since > 3.0:
            return
        page.wait_for_timeout(500)
    raise AssertionError(f"the page did not settle within {timeout_s:.0f} s")


@pytest.mark.slow
@pytest.mark.browser
def test_every_app_at_two_widths(panel_server, page):
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    for app in ["main", *APPS]:
        page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
        page.goto(f"{panel_server}/apps" + ("" if app == "main" else f"?app={app}"))
        _settled(page)
        for w in WIDTHS:
            page.set_viewport_size({"width": w, "height": HEIGHT})
            page.wait_for_timeout(1500)  # let the layout follow the new width
            suffix = "" if w == WIDTHS[0] else f"_{w}"
            page.screenshot(path=str(SHOTS / f"{app}{suffix}.png"), full_page=True)
            try:
                assert_fits_and_no_error(page)
            except AssertionError as exc:  # look at every app before failing
                problems.append(f"{app} at {w}px: {exc}")
    log = Path(panel_server.log_path).read_text(errors="replace")
    if "responsive mode could not be enabled" in log:
        problems.append("the server log has HoloViews responsive-mode warnings")
    assert not problems, "\n".join(problems)
    assert page.console_errors == []
