"""The "Mixture weights" app (bnexplore.apps.MixtureWeights): views, an upload, and the
served page in a browser."""
import time

import numpy as np
import pandas as pd
import pytest
from browser_checks import assert_fits_and_no_error

from bnexplore.apps import MixtureWeights


def test_views_follow_the_parameters():
    app = MixtureWeights("iris", n_train=30)
    text = app.summary_view().object
    assert "30 training rows" in text and "50 test rows" in text and "BMA" in text
    w = app.weights_view()[2].callback().read()
    table = pd.read_csv(__import__("io").StringIO(w))
    assert np.allclose(table.drop(columns="super-parent").sum(), 1.0)   # weights sum to 1
    app.n_train = 60
    assert "60 training rows" in app.summary_view().object
    app.positive = "Iris-setosa"
    assert "Iris-setosa" in app.roc_view()[1][0].object.opts.get().kwargs["title"]


def test_an_upload_draws_the_model_on_the_users_table():
    rng = np.random.default_rng(0)
    n = 150
    y = rng.integers(0, 2, n)
    df = pd.DataFrame({"row": np.arange(n), "a": y + rng.normal(0, 0.5, n),
                       "b": rng.choice(["u", "v"], n), "label": np.where(y, "yes", "no")})
    app = MixtureWeights(df)
    assert app.data.target == "label" and "row" not in app.data.features
    assert app.param.n_train.bounds == (10, 100) and app.positive == "yes"
    assert "BMA" in app.summary_view().object


@pytest.mark.browser
def test_mixture_weights_page_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=mixture_weights", wait_until="load", timeout=180_000)
    summary = page.get_by_text("BMA's largest weight")
    summary.first.wait_for(timeout=180_000)
    assert "Mixture weights" in page.title()
    before = summary.first.inner_text()
    assert "100 training rows" in before
    handle = page.locator(".noUi-handle:visible").first        # the training size
    handle.focus()
    for _ in range(5):
        handle.press("ArrowRight")
    deadline = time.monotonic() + 120
    while "105 training rows" not in summary.first.inner_text():
        assert time.monotonic() < deadline, summary.first.inner_text()
        page.wait_for_timeout(500)
    page.locator("canvas").nth(2).wait_for(state="attached", timeout=120_000)
    assert_fits_and_no_error(page)
    assert not page.console_errors, page.console_errors
