"""The "Order averaging" app (bnexplore.apps.OrderAveraging): views follow the parameters,
on bundled data and a user's table; and the served page in a browser."""
import re

import pytest

import bnexplore as bx
from bnexplore.apps import OrderAveraging


def test_views_follow_the_parameters():
    app = OrderAveraging("asia", max_parents=1, n=2)
    assert (app.source, app.target, app.param.n.bounds) == ("network sample", "lung", (1, 7))
    text = app.summary_view().object
    assert "k = 1, n = 2" in text and "order-modular prior" in text and "AMA" in text
    for view in (app.network_view, app.heatmap_view, app.roc_view, app.auc_view):
        assert type(view()).__name__ != "Alert", view.__name__
    app.n = 3
    assert "k = 1, n = 3" in app.summary_view().object
    table = app.auc_view()[0].value
    assert list(table["model"]) == ["SNN", "NMA", "GTT", "AMA"]
    assert table["AUC"].between(0, 1).all()


def test_a_users_table_with_an_id_column(tmp_path):
    df = bx.networks.load("asia").sample(300, random_state=1)
    df.insert(0, "patient", [f"P{i:04d}" for i in range(len(df))])
    app = OrderAveraging(df, target="lung", max_parents=1, n=2)
    assert "patient" not in app.data.features and "patient" not in app.param.target.objects
    assert "k = 1, n = 2" in app.summary_view().object


def test_the_memory_guard_shows_as_text():
    app = OrderAveraging("alarm", sample_size=500, max_parents=3, n=4)
    old = bx.data.set_table_budget(1000)
    try:
        view = app.summary_view()
    finally:
        bx.data.set_table_budget(old)
    assert type(view).__name__ == "Alert" and "budget" in view.object


@pytest.mark.browser
def test_order_averaging_page_renders_reacts_and_keeps_its_link(panel_server, page):
    page.goto(f"{panel_server}/apps?app=order_averaging&source=network+sample&network=asia"
              f"&max_parents=1&n=2", timeout=180_000)
    page.get_by_text(re.compile(r"k = 1, n = 2 ")).first.wait_for(timeout=180_000)
    assert "Order averaging" in page.title()
    handle = page.locator(".noUi-handle:visible").nth(2)       # sample size, k, then n
    handle.focus()
    handle.press("ArrowRight")
    page.get_by_text(re.compile(r"k = 1, n = 3 ")).first.wait_for(timeout=120_000)
    page.wait_for_function(
        """() => Bokeh.documents.some(d => [...d.all_models].some(
               m => typeof m.text === "string" && m.text.includes("Summary network M* (n = 3)")))""",
        timeout=120_000)
    page.wait_for_function("() => window.location.search.includes('n=3')", timeout=30_000)
    assert "max_parents=1" in page.url and "network=asia" in page.url
    assert page.locator(".bnx-download-csv").count() >= 2
    assert not page.console_errors, page.console_errors


def test_threshold_thins_mstar_and_compare_marks_the_removed_arcs():
    from bnexplore.apps import OrderAveraging
    from bnexplore.apps.order_averaging import arc_posteriors

    app = OrderAveraging("asia", sample_size=500, max_parents=1, n=2)
    label, full = app.current_structure()
    app.pin()
    app.threshold = 0.9
    post, _ = arc_posteriors(app.data, 1)
    _, thin = app.current_structure()
    assert set(thin.edges) == {(u, v) for u, v in full.edges if post.loc[u, v] >= 0.9}
    counts = app.diff().counts
    assert counts["removed"] == len(full.edges) - len(thin.edges) and counts["added"] == 0
    assert f"0 added, {counts['removed']} removed" in app.compare_view()[2][0].object
