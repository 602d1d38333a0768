"""Every app in a real browser at 1400 px and at a projector's 1024 px, and in
presentation mode at 1024 px: screenshots into docs/screenshots/ (``NAME.png``,
``NAME_1024.png``, ``NAME_1024_presentation.png``), no horizontal scroll, no error box,
no responsive-mode warnings.

Slow (every app computes its first results): ``pytest -m slow tests/test_app_screenshots.py``
refreshes the README's screenshots; ``BNX_SCREENSHOTS=forests,clustering`` (app names,
``main`` for the landing page) shoots only those. The fast suite checks the same things
on the apps its other browser tests open (``browser_checks``).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from bnexplore.apps import PAGES
from browser_checks import assert_fits_and_no_error, assert_structures_not_squeezed

REPO = Path(__file__).resolve().parents[1]
SHOTS = REPO / "docs" / "screenshots"
APPS = sorted(p.stem for p in (REPO / "apps").glob("*.py")
              if p.stem != "main" and not p.name.startswith("_"))   # with the glossary page
WIDTHS = (1400, 1024)
HEIGHT = 1500  # the template scrolls inside the page: a tall window shows more
MAX_HEIGHT = 7000  # the tallest screenshot (the whole page of every app)


def _settled(page, timeout_s: float = 240.0, quiet_s: float = 3.0) -> None:
    """Wait until nothing is computing and the number of plots stays put for ``quiet_s``
    (``scripts/make_thumbnails.py``'s wait, failing as an assertion)."""
    from test_thumbnails import load_script

    try:
        load_script().settle(page, timeout_s, quiet_s)
    except TimeoutError as exc:
        raise AssertionError(str(exc)) from exc


@pytest.mark.slow
@pytest.mark.timeout(3600)  # every app thrice, on a loaded machine
@pytest.mark.browser
def test_every_app_at_two_widths_and_in_presentation_mode(panel_server, page):
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems = []

    def shoot(name: str) -> None:
        # the template scrolls inside its main area: a window as tall as the page
        # shows all of it
        w = page.viewport_size["width"]
        tall = page.evaluate("() => { const m = document.querySelector('#main');"
                             " return m ? m.scrollHeight + 80 : 0; }")
        page.set_viewport_size({"width": w, "height": int(min(max(HEIGHT, tall), MAX_HEIGHT))})
        page.wait_for_timeout(1000)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
        page.set_viewport_size({"width": w, "height": HEIGHT})
        try:
            assert_fits_and_no_error(page)
            assert_structures_not_squeezed(page)
        except AssertionError as exc:  # look at every app before failing
            problems.append(f"{name}: {exc}")

    only = {a.strip() for a in os.environ.get("BNX_SCREENSHOTS", "").split(",") if a.strip()}
    unknown = only - {"main", *APPS}
    assert not unknown, f"BNX_SCREENSHOTS names no app {sorted(unknown)}; apps: {APPS}"
    for app in [a for a in ["main", *APPS] if not only or a in only]:
        url = f"{panel_server}/apps" + ("" if app == "main" else f"?app={app}")
        page.set_viewport_size({"width": WIDTHS[0], "height": HEIGHT})
        page.goto(url, timeout=180_000)
        _settled(page, quiet_s=10.0)      # a loaded machine: views come one by one
        for w in WIDTHS:
            page.set_viewport_size({"width": w, "height": HEIGHT})
            page.wait_for_timeout(1500)  # let the layout follow the new width
            shoot(app if w == WIDTHS[0] else f"{app}_{w}")
        if app != "main" and app not in PAGES:    # pages (the glossary) have no settings
            page.goto(f"{url}&presentation=true", timeout=180_000)
            try:
                _settled(page, quiet_s=10.0)
            except AssertionError as exc:  # shoot what there is, and say so
                problems.append(f"{app} in presentation mode: {exc}")
            shoot(f"{app}_{WIDTHS[1]}_presentation")
    log = Path(panel_server.log_path).read_text(errors="replace")
    if "responsive mode could not be enabled" in log:
        problems.append("the server log has HoloViews responsive-mode warnings")
    assert not problems, "\n".join(problems)
    assert page.console_errors == []
