"""The "Clustering hierarchy" app: views without a browser, then the served page in Chromium."""
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "apps"))

ARGS = ("Network sample", "asia", 1000, True, 3, "hierarchy", 0)


def test_views_build_without_a_browser():
    import clustering as app

    text = app.summary_view(*ARGS).object
    assert "greedy q" in text and "incremental q" in text
    assert type(app.dendrogram_view(*ARGS)).__name__ == "HoloViews"
    table = app.strategy_view(*ARGS).value
    assert sorted(sum((v.split(", ") for v in table["variables"]), [])) == sorted(
        app.dataset("Network sample", "asia", 1000)[0].columns)
    assert type(app.subspace_view(*ARGS, 2)).__name__ == "HoloViews"
    assert type(app.timeline_view(*ARGS)).__name__ == "Row"
    # honeycomb source: the table reports the share of each cluster in its main cell
    hc = app.strategy_view("Network sample", app.HONEYCOMB, 1000, True, 4, "hierarchy", 0).value
    assert "share in main group" in hc
    # an impossible setting is shown as an error box, not raised
    assert type(app.summary_view("Network sample", "asia", 1000, True, 0, "hierarchy", 0)).__name__ == "Alert"


def _q(page):
    return page.locator(".bnx-summary").first.inner_text()


@pytest.mark.browser
def test_clustering_app_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=clustering", wait_until="domcontentloaded", timeout=120_000)
    page.wait_for_selector(".bnx-summary", timeout=120_000)
    page.wait_for_function("document.querySelectorAll('canvas').length >= 4", timeout=120_000)
    assert "Clustering hierarchy" in page.title()
    before = _q(page)
    assert re.search(r"greedy q = \d+", before) and "alarm" in before
    # move the cluster-size slider one step (keyboard on its handle): the strategy,
    # the incremental q and the pictures are recomputed
    slider = page.locator(".bk-panel-models-widgets-IntSlider, .bk-input-group", has_text="Cluster size")
    handle = slider.locator(".noUi-handle").first
    handle.focus()
    handle.press("ArrowRight")
    page.wait_for_function(
        "(prev) => { const el = document.querySelector('.bnx-summary');"
        " return el && el.innerText !== prev; }", arg=before, timeout=120_000)
    after = _q(page)
    assert after != before and re.search(r"incremental q = \d+", after)
    page.wait_for_function("document.querySelectorAll('canvas').length >= 4", timeout=120_000)
    assert not page.console_errors, page.console_errors
