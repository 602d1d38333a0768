"""The Panel apps in a real browser (headless Debian Chromium against `panel serve apps/`).

Plus fast checks of the landing page's app discovery, which needs no browser.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from browser_checks import assert_fits_and_no_error

from bnexplore.experiments.compare import PARAM_RANGES

#: the handle of the structure app's max in-degree slider (max_parents' declared range)
K_HANDLE = ('.noUi-handle[aria-valuemax="{0}.0"], .noUi-handle[aria-valuemax="{0}"]'
            .format(PARAM_RANGES["max_parents"][1]))

REPO = Path(__file__).resolve().parents[1]
APPS_DIR = REPO / "apps"


def app_files() -> list[Path]:
    from bnexplore.apps import PAGES      # pages without settings (the glossary): no card

    return sorted(p for p in APPS_DIR.glob("*.py") if p.stem not in {"main", *PAGES}
                  and not p.name.startswith("_"))


# ------------------------------------------------------------------ landing page (no browser)
def test_every_app_has_a_file_a_card_and_a_place_in_the_lecture():
    from bnexplore.apps import APPS
    from bnexplore.apps.landing import LECTURE, cards

    shown = cards()
    assert [c.name for c in shown] == [n for n in LECTURE if n in APPS] + sorted(
        set(APPS) - set(LECTURE))
    assert sorted(c.name for c in shown) == [p.stem for p in app_files()]
    for card in shown:
        assert card.title and card.description, card.name
        assert card.teaches and card.minutes, f"{card.name}: add it to LECTURE"
        # the served file is the two lines that serve the component
        assert f'bxa.serve("{card.name}")' in (APPS_DIR / f"{card.name}.py").read_text()


def test_cards_link_to_the_app_in_both_ways_of_serving(monkeypatch):
    from bnexplore.apps import landing

    card = landing.cards()[0]
    for directory, href in ((True, "?app=structure"), (False, "./structure")):
        monkeypatch.setattr(landing, "is_directory_mode", lambda d=directory: d)
        pane = landing.card_pane(card, APPS_DIR / "thumbnails")
        assert f'href="{href}"' in pane.object
        assert 'class="bnx-thumb" src="data:image/png;base64,' in pane.object
    assert "bnx-thumb" not in landing.card_pane(card, None).object     # no thumbnail: plain


def test_an_unknown_app_name_is_shown_as_text():
    from bnexplore.apps.landing import unknown_app_page

    alert = unknown_app_page("<img src=x>").main[0]
    assert "no app &#39;&#60;img src&#61;x&#62;&#39;" in alert.object
    assert "<img" not in alert.object


# ------------------------------------------------------------------ browser
browser_test = pytest.mark.browser
FIRST_RENDER_MS = 120_000  # the first search JIT-compiles the scoring kernels


def _score(page) -> str:
    return (page.locator(".bnx-score").first.text_content() or "").strip()


@browser_test
def test_landing_page_links_every_app(panel_server, page):
    page.goto(f"{panel_server}/apps")
    links = page.locator("a.bnx-app-link")
    links.first.wait_for(timeout=60_000)
    found = {links.nth(i).get_attribute("data-app"): links.nth(i)
             for i in range(links.count())}
    expected = {p.stem for p in app_files()}
    assert set(found) == expected
    for name, link in found.items():
        href = link.get_attribute("href") or ""
        assert href.endswith(f"app={name}") or href.endswith(f"/{name}"), href
        assert link.inner_text().strip(), f"card for {name} has no text"
    # the card shows the title read from the app file
    assert "Learn a structure" in found["structure"].inner_text()
    assert page.console_errors == []


@browser_test
def test_structure_app_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps")
    page.locator('a.bnx-app-link[data-app="structure"]').click()
    page.wait_for_url(re.compile(r"app=structure"))
    page.locator(".bnx-score").first.wait_for(timeout=FIRST_RENDER_MS)
    page.locator(".bk-Canvas, canvas").first.wait_for(timeout=30_000)
    assert page.locator("text=Accepted steps").count() >= 1
    first = _score(page)
    assert re.fullmatch(r"-?\d+\.\d+", first), first

    # another data set -> another score
    page.locator("select").first.select_option("iris")
    _wait_for_change(page, first)
    second = _score(page)
    assert second != first
    assert "iris" in (page.locator(".bnx-source").first.text_content() or "")

    # lower max in-degree -> the learned network (and its score) changes
    handle = page.locator(K_HANDLE).first
    handle.focus()
    handle.press("ArrowLeft")
    handle.press("ArrowLeft")
    _wait_for_change(page, second)
    assert _score(page) != second
    page.locator(".bk-Canvas, canvas").first.wait_for()
    assert page.console_errors == []

    # the page fits a wide and a narrow window: the DAG scrolls in its own panel
    for width in (1400, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(1000)
        assert_fits_and_no_error(page)

    # the sidebar link leads back to the landing page
    page.locator("a.bnx-home").first.click()
    page.locator("a.bnx-app-link").first.wait_for(timeout=60_000)
    assert "app=" not in page.url
    assert page.console_errors == []


def _wait_for_change(page, old: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        loc = page.locator(".bnx-score")
        if loc.count() and _score(page) not in ("", old):
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"score readout still {old!r} after {timeout_s} s")
