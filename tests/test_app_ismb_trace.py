"""The "ISMB trace" app (bnexplore.apps.ISMBTrace): views from a DataFrame, parameters,
links, an upload, and the served page in a browser."""
import io
import time

import numpy as np
import pandas as pd
import pytest
from browser_checks import assert_fits_and_no_error
from test_apps_components import query_of

from bnexplore.apps import ISMBTrace
from bnexplore.experiments.ismb import synthetic_split
from bnexplore.ismb import MBModel


def test_the_synthetic_domain_predicts_its_test_cases_as_the_library_does():
    app = ISMBTrace(queue_width=50, epsilon=0.01)
    assert app.param.instance.bounds == (0, 2) and app.data.target == "Z"
    train, test = synthetic_split()
    m = MBModel(train, target="Z")
    m.phase1()
    res = m.search(test.iloc[1].drop("Z"), queue_width=50, epsilon=0.01)
    app.instance = 1
    summary = app.summary_view()
    assert "true Z = T" in summary[0].object and f"phase 1: {res.n_phase1} models" in \
        summary[0].object
    table = summary[1][0].value
    j = list(res.classes).index("T")
    assert table.loc[0, "P(Z = T)"] == pytest.approx(round(res.proba[j], 4))
    assert len(app.trace_view()) == 2
    assert len(app.blankets_view()) == 3
    app.n_blankets = 1
    assert len(app.blankets_view()) == 1
    csv = pd.read_csv(io.StringIO(app.instance_view()[1][1].callback().read()))
    assert list(csv["variable"]) == list("ABCDZ")


def test_an_upload_predicts_each_row_from_the_others():
    rng = np.random.default_rng(1)
    n = 40
    a = rng.choice(["x", "y"], n)
    df = pd.DataFrame({"a": a, "b": rng.choice(["u", "v"], n),
                       "cls": np.where(a == "x", "pos", "neg")})
    app = ISMBTrace(df, instance=30, queue_width=10)
    assert app.param.instance.bounds == (0, n - 1) and app.instance == 30
    assert f"true cls = {df.loc[30, 'cls']}" in app.summary_view()[0].object
    app.set_table(df.iloc[:20], "smaller")            # a new upload clamps the instance
    assert app.param.instance.bounds == (0, 19) and app.instance == 19


def test_every_parameter_round_trips_through_the_link():
    app = ISMBTrace()
    app.param.update(instance=2, queue_width=200, epsilon=0.1, n_blankets=5)
    fresh = ISMBTrace()
    fresh.apply_query(query_of(app))
    for p in app.url_parameters():
        assert getattr(fresh, p) == getattr(app, p), p
    other = ISMBTrace("weather.nominal", instance=9)
    fresh = ISMBTrace()
    fresh.apply_query(query_of(other))
    assert (fresh.dataset, fresh.instance, fresh.param.instance.bounds) == (
        "weather.nominal", 9, (0, 13))


@pytest.mark.browser
def test_ismb_trace_page_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=ismb_trace", wait_until="load", timeout=180_000)
    page.locator(".bnx-ismb-summary").first.wait_for(timeout=180_000)
    assert "ISMB trace" in page.title()
    page.locator("canvas").first.wait_for(state="attached", timeout=120_000)

    def summary():     # a Markdown pane's text sits in its shadow root
        return page.locator(".bnx-ismb-summary").first.evaluate(
            "e => (e.shadowRoot ? e.shadowRoot.textContent : e.textContent) || ''")
    before = summary()
    assert "phase 1" in before and "true Z" in before
    handle = page.locator(".noUi-handle:visible").first        # the test instance
    handle.focus()
    handle.press("ArrowRight")
    deadline = time.monotonic() + 120
    while summary() == before:
        assert time.monotonic() < deadline, "the summary did not follow the instance"
        page.wait_for_timeout(500)
    assert_fits_and_no_error(page)
    assert not page.console_errors, page.console_errors
