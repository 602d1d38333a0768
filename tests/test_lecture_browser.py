"""Issue 36's lecture features in a real browser (headless Debian Chromium against
``panel serve apps/``): the landing page's lecture order, setting evidence in "Ask the
averaged model" (the posterior shown equals brute-force inference), and presentation
mode at a projector's 1024 x 768 (no horizontal scroll, nothing cut off, no error)."""
from __future__ import annotations

import re
import time

import pytest
from browser_checks import assert_boxes_apart, assert_fits_and_no_error

ASK = "apps?app=ask_model&source=network+sample&network=asia&sample_size=500&max_parents=1"
FIRST_RENDER_MS = 240_000           # learning + first compilation on a loaded machine


@pytest.mark.browser
def test_landing_page_is_in_lecture_order(panel_server, page):
    from bnexplore.apps.landing import LECTURE

    page.goto(f"{panel_server}/apps", timeout=120_000)
    links = page.locator("a.bnx-app-link")
    links.first.wait_for(timeout=60_000)
    shown = [links.nth(i).get_attribute("data-app") for i in range(links.count())]
    assert shown == [n for n in LECTURE if n in shown] + sorted(set(shown) - set(LECTURE))
    assert shown[0] == "structure" and shown[-1] == "ask_model"
    assert "Teaches" in links.first.inner_text() and "min)" in links.first.inner_text()


def _row(page, node: str, state: str) -> list[str]:
    """The cells of the posterior table's row (node, state), once the table shows it (a
    table being replaced after a move shows none for a moment)."""
    rows = page.locator(".tabulator-row")
    deadline = time.monotonic() + 60
    while True:
        for i in range(rows.count()):
            try:
                cells = [c.strip() for c in rows.nth(i).locator(".tabulator-cell").all_inner_texts()]
            except Exception:  # noqa: BLE001 - the row went with its table: look again
                break
            at = cells.index(node) if node in cells else -1    # after a row-number cell, if any
            if at >= 0 and cells[at + 1:at + 2] == [state]:
                return cells[at:]
        assert time.monotonic() < deadline, f"no row {node} = {state} in the table"
        page.wait_for_timeout(250)


def wait_gtt_posterior(page, node: str, state: str, expect: float) -> list[str]:
    """The table's row (node, state) once its GTT posterior shows ``expect`` (the page
    computes after a move)."""
    deadline = time.monotonic() + 60
    while True:
        cells = _row(page, node, state)
        if float(cells[2]) == pytest.approx(expect, abs=6e-5):
            return cells
        assert time.monotonic() < deadline, (f"GTT's P({node}={state} | evidence) shown "
                                             f"{cells[2]}, expected {expect:.4f}")
        page.wait_for_timeout(250)


@pytest.mark.browser
def test_evidence_set_in_the_page_gives_the_brute_force_posterior(panel_server, page):
    from test_app_ask_model import brute_force

    from bnexplore.apps import AskModel
    from bnexplore.apps.ask_model import averaged_model

    app = AskModel("asia", sample_size=500, max_parents=1)
    model = averaged_model(app.data, 1, "order", 0)
    expect = brute_force(model.best, {"smoke": "yes"})["lung"][0]
    expect_avg = brute_force(model.averaged, {"smoke": "yes"})["lung"][0]

    page.goto(f"{panel_server}/{ASK}", timeout=120_000)
    selects = page.locator(".bnx-evidence select")
    selects.first.wait_for(timeout=FIRST_RENDER_MS)
    page.locator(".tabulator-row").first.wait_for(timeout=FIRST_RENDER_MS)
    selects.nth(2).select_option("yes")          # smoke (the data's third column)
    deadline = time.monotonic() + 60
    while "smoke" not in (page.locator(".bnx-evidence-text").first.text_content() or ""):
        assert time.monotonic() < deadline, "the evidence did not reach the summary"
        page.wait_for_timeout(250)
    cells = wait_gtt_posterior(page, "lung", "yes", expect)
    assert float(cells[3]) == pytest.approx(expect_avg, abs=6e-5)
    assert "evidence=" in page.url and "smoke" in page.url       # the link carries it
    assert page.console_errors == []


@pytest.mark.browser
@pytest.mark.parametrize("app", ["ask_model", "structure"])
def test_presentation_mode_fits_a_projector(panel_server, page, app):
    page.set_viewport_size({"width": 1024, "height": 768})
    url = (f"{panel_server}/{ASK}" if app == "ask_model" else
           f"{panel_server}/apps?app=structure&source=network+sample&network=asia&max_parents=2")
    page.goto(url + "&presentation=true", timeout=120_000)
    page.locator(".bk-Canvas, canvas").first.wait_for(timeout=FIRST_RENDER_MS)
    page.wait_for_timeout(3000)
    assert_fits_and_no_error(page)
    size = page.locator(".bnx-view").first.evaluate("e => getComputedStyle(e).fontSize")
    assert float(size.rstrip("px")) >= 18, size
    assert page.console_errors == []


def test_presentation_boxes_hold_their_labels():
    """At projector sizes no label is wider than its box and no boxes overlap (the
    layout of the page's picture, checked without a browser)."""
    from bnexplore.apps import LearnStructure

    app = LearnStructure("alarm", sample_size=500, max_parents=2, presentation=True)
    assert_boxes_apart(app.step_plot(10_000))
