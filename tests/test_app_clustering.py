"""The "Clustering hierarchy" app (bnexplore.apps.Clustering): views from a DataFrame,
parameters, the player, links (the boolean order among them), and the served page."""
import io
import re
import time

import numpy as np
import pandas as pd
import panel as pn
import pytest
from browser_checks import assert_boxes_apart, assert_fits_and_no_error
from test_apps_components import query_of

from bnexplore.apps import Clustering
from bnexplore.apps.clustering import HONEYCOMB, incremental


def test_views_follow_the_parameters_and_the_player():
    app = Clustering("asia", sample_size=500, cluster_size=3)
    text = app.summary_view().object
    assert "asia&#44; 500 samples" in text and "true topological order" in text
    inc = incremental(app.data, True, 3, "hierarchy", 0)
    assert f"incremental q = <span class='bnx-q'>{inc.q}</span>" in text
    assert app.n_subspaces == len(inc.subspaces)
    table = app.strategy_view()[0].value          # every variable in one cluster
    assert sorted(sum((v.split(", ") for v in table["variables"]), [])) == sorted(
        app.data.columns)
    csv = pd.read_csv(io.StringIO(app.strategy_view()[1].callback().read()))
    assert list(csv["q in own sub-space"]) == list(table["q in own sub-space"])
    player = app.player()
    assert player.end == max(len(inc.subspaces), 2)
    player.value = 2                                # the player moves the sub-space shown
    assert app.subspace == 2 and "Sub-space 2 of" in app.subspace_view()[0].object
    assert_boxes_apart(app.subspace_view()[1].select(pn.pane.HoloViews)[0].object)
    app.use_order = False
    assert "no order" in app.summary_view().object
    app.param.update(strategy="random groups", random_state=3, cluster_size=2)
    assert player.end == max(app.n_subspaces, 2)
    assert len(app.timeline_view()) == 2
    hc = Clustering(HONEYCOMB, sample_size=500)
    assert hc.source == "network sample" and "share in main group" in hc.strategy_view()[0].value


def test_a_table_without_a_true_order_clusters_its_columns():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 300)
    df = pd.DataFrame({"a": a, "b": (a + (rng.random(300) < 0.1)) % 2,
                       "c": rng.integers(0, 3, 300), "d": rng.integers(0, 2, 300)}).astype(str)
    app = Clustering(df, cluster_size=2)
    assert "no order" in app.summary_view().object     # use_order: there is no true DAG
    assert len(app.dendrogram_view().object.data) > 0


def test_every_parameter_round_trips_through_the_link():
    app = Clustering("asia", sample_size=500)
    app.param.update(use_order=False, cluster_size=2, strategy="random groups", random_state=4,
                     subspace=3)
    query = query_of(app)
    assert query["use_order"] is False                 # the old page's link said true
    fresh = Clustering()
    fresh.apply_query(query)
    for p in app.url_parameters():
        assert getattr(fresh, p) == getattr(app, p), p
    assert fresh.use_order is False and "no order" in fresh.summary_view().object


@pytest.mark.browser
def test_clustering_page_renders_and_the_player_steps(panel_server, page):
    page.goto(f"{panel_server}/apps?app=clustering&network=asia&sample_size=500",
              wait_until="load", timeout=180_000)
    page.locator(".bnx-subspace").first.wait_for(timeout=180_000)
    assert "Clustering hierarchy" in page.title()

    def text(css):
        return page.locator(css).first.evaluate(
            "e => (e.shadowRoot ? e.shadowRoot.textContent : e.textContent) || ''")
    assert re.search(r"greedy q = \d+", text(".bnx-summary"))
    assert "Sub-space 1 of" in text(".bnx-subspace")
    page.locator("button.next").first.click()
    deadline = time.monotonic() + 120
    while "Sub-space 2 of" not in text(".bnx-subspace"):
        assert time.monotonic() < deadline, text(".bnx-subspace")
        page.wait_for_timeout(500)
    page.locator("canvas").nth(2).wait_for(state="attached", timeout=120_000)
    assert "subspace=2" in page.url
    assert_fits_and_no_error(page)
    assert not page.console_errors, page.console_errors
