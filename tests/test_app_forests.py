"""The "Forests" app (bnexplore.apps.Forests): views from a DataFrame, parameters, links,
an upload, and the served page in a browser."""
import io
import math
import time

import numpy as np
import pandas as pd
import panel as pn
import pytest
from browser_checks import assert_boxes_apart, assert_fits_and_no_error
from test_apps_components import query_of

from bnexplore.apps import Forests
from bnexplore.classifiers import SFAN


def _table(n=120, seed=0):
    """A class that two features carry, a noise feature, an ID column and a number."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    flip = lambda p: np.where(rng.random(n) < p, 1 - y, y)   # noqa: E731
    return pd.DataFrame({"id": np.arange(n), "a": np.where(flip(0.1), "x", "z"),
                         "b": np.where(flip(0.2), "u", "v"), "noise": rng.choice(["p", "q"], n),
                         "dose": y + rng.normal(0, 0.4, n), "label": np.where(y, "yes", "no")})


def test_views_follow_the_parameters_and_match_the_library():
    app = Forests(_table(), penalty=2.0)
    assert app.data.target == "label" and "id" not in app.data.features
    X, y = app.data.frame.drop(columns="label"), app.data.frame["label"].astype(str)
    ref = SFAN(penalty=2.0, max_parents=1).fit(X, y)
    text = app.summary_view().object
    assert "penalty = 2" in text and f"{ref.result_.score:.2f}" in text
    assert f"Markov blanket of the class: {len(ref.markov_blanket_)} features" in text
    app.penalty = math.inf                             # FAN: every feature keeps the class
    assert "penalty = \u221e" in app.summary_view().object
    assert "parent of 4 features" in app.summary_view().object
    app.param.update(averaging="bma", threshold=0.5)
    forest = app.forest_view()
    assert "posterior >= 0.5" in forest[0].select(pn.pane.HoloViews)[0].object.opts.get().kwargs["title"]
    arcs = pd.read_csv(io.StringIO(forest[1].callback().read()))
    assert arcs.columns[0] == "parent" and "class" in set(arcs["parent"])
    acc = app.accuracy_view()
    table = pd.read_csv(io.StringIO(acc[1].callback().read()))
    assert sorted(table["penalty"].unique())[-1] == math.inf and table["fold"].max() == 5
    app.param.update(max_parents=0, penalty=3.0)       # infinity is left out of the curve
    table = pd.read_csv(io.StringIO(app.accuracy_view()[1].callback().read()))
    assert np.isfinite(table["penalty"]).all()
    app.penalty = math.inf                             # refused by SFAN: said, not raised
    assert "bnx-error" in app.summary_view().css_classes


def test_the_forest_of_long_names_keeps_its_boxes_apart():
    app = Forests("vote")
    assert_boxes_apart(app.forest_view()[0].select(pn.pane.HoloViews)[0].object)


def test_every_parameter_round_trips_through_the_link():
    app = Forests(dataset="iris")
    app.param.update(penalty=math.inf, max_parents=0, averaging="bma", threshold=0.75)
    fresh = Forests()
    fresh.apply_query(query_of(app))
    for p in app.url_parameters():
        assert getattr(fresh, p) == getattr(app, p), p


@pytest.mark.browser
def test_forests_page_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=forests", wait_until="load", timeout=180_000)
    summary = page.locator(".bnx-forest-summary").first
    summary.wait_for(timeout=180_000)
    assert "Forests" in page.title() and "penalty = 2" in summary.inner_text()
    handle = page.locator(".noUi-handle:visible").first        # the penalty
    handle.focus()
    handle.press("ArrowRight")
    deadline = time.monotonic() + 120
    while "penalty = 2.5" not in page.locator(".bnx-forest-summary").first.inner_text():
        assert time.monotonic() < deadline
        page.wait_for_timeout(500)
    page.locator("canvas").nth(2).wait_for(state="attached", timeout=120_000)
    assert_fits_and_no_error(page)
    assert not page.console_errors, page.console_errors
