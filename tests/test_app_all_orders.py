"""The "Averaging over orders" app: views without a browser, and a browser test."""
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "apps"))

ARGS = ("Network sample", "vote", "asia", 500, 2)


def test_views_build_without_a_browser():
    import all_orders as app

    text = app.summary_view(*ARGS, app.AUTO, 4_000).object
    assert "exact over all 8! orders" in text and "k = 2" in text and "fixed" in text
    row = app.heatmaps_view(*ARGS, app.AUTO, 4_000)
    assert [type(p[0]).__name__ for p in row] == ["Bokeh"] * 3  # each in a scroll panel
    note = app.chains_view(*ARGS, app.AUTO, 4_000)
    assert "Order MCMC" in note.object
    text = app.summary_view(*ARGS, app.MCMC, 4_000).object
    assert "order MCMC, 4 chains x 4,000 iterations" in text and "R-hat max" in text
    chains = app.chains_view(*ARGS, app.MCMC, 4_000)
    assert type(chains).__name__ == "Column"
    # too many variables for the exact DP: a readable error, not a stack trace
    big = app.summary_view("Network sample", "vote", "alarm", 200, 1, app.EXACT, 4_000)
    assert type(big).__name__ == "Alert" and "MemoryBudgetError" in big.object and "37 variables" in big.object


@pytest.mark.browser
def test_all_orders_app_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=all_orders", wait_until="networkidle", timeout=180_000)
    page.wait_for_selector(".bnx-orders-summary", timeout=120_000)
    assert "Averaging over orders" in page.title()
    page.get_by_text(re.compile(r"k = 2 .*exact over all 8! orders")).first.wait_for(timeout=120_000)
    page.locator("canvas").first.wait_for(state="attached", timeout=120_000)
    handle = page.locator(".noUi-handle:visible").nth(1)  # sample size, then k
    handle.focus()
    handle.press("ArrowRight")
    page.get_by_text(re.compile(r"k = 3 ")).first.wait_for(timeout=120_000)
    assert page.locator("canvas").count() >= 3
    assert not page.console_errors, page.console_errors
