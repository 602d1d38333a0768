"""The "Edge confidence" app (bnexplore.apps.EdgeConfidence): views without a browser."""
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import pytest

import bnexplore as bx
from bnexplore.apps import EdgeConfidence
from bnexplore.apps.edge_confidence import (DISAGREE, FLAG, MCMC, NO_PRIOR, ORDER_PRIOR,
                                            UNIFORM_PRIOR, edge_table)

PRIORS = (ORDER_PRIOR, UNIFORM_PRIOR, "no prior")


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    cols = ["smoke", "lung", "bronc", "either", "dysp"]
    return bx.networks.load("asia").sample(300, random_state=3)[cols].reset_index(drop=True)


def _col(table: pd.DataFrame, start: str) -> str:
    return next(c for c in table.columns if c.startswith(start))


def test_table_is_the_engines_numbers_and_follows_ess(frame):
    app = EdgeConfidence(frame, max_parents=2, n_boot=10, random_state=1)
    assert app.data.frame.shape == (300, 5) and app.score == "BDeu"
    t1 = app.table()
    assert len(t1) == 5 * 4
    # every column but the arc's names says under which prior (or none) it was computed
    for c in t1.columns[2:]:
        assert any(p in c for p in PRIORS), c
    # the numbers are the library's, under the prior each column names
    df = app.data.frame
    ad = bx.averaging.AllDAGs(df, max_parents=2, prior="BDeu", ess=1.0).arc_posteriors()
    ao = bx.averaging.AllOrders(df, max_parents=2, prior="BDeu", ess=1.0).arc_posteriors()
    row = t1.set_index(["parent", "child"])
    for (u, v), r in row.iterrows():
        assert r[_col(t1, f"P(arc), {UNIFORM_PRIOR}")] == pytest.approx(ad.loc[u, v], abs=1e-12)
        assert r[_col(t1, f"P(arc), {ORDER_PRIOR}")] == pytest.approx(ao.loc[u, v], abs=1e-12)
    # the flag is exactly |uniform - bootstrap| > 0.3
    diff = t1[_col(t1, f"P(arc), {UNIFORM_PRIOR}")] - t1[f"arc frequency ({NO_PRIOR})"]
    assert (t1[FLAG] == (diff.abs() > DISAGREE)).all()
    flagged = set(zip(t1.loc[t1[FLAG], "parent"], t1.loc[t1[FLAG], "child"]))
    summary = app.summary_view().object
    assert f"{len(flagged)} arc" in summary and "uniform over DAGs with at most 2 parents" in summary
    assert "linear extensions" in summary and "none: nonparametric bootstrap" in summary
    # the ess slider re-averages: every Bayes column moves
    app.ess = 50.0
    t2 = app.table()
    for start in (f"P(arc), {UNIFORM_PRIOR}", f"P(arc), {ORDER_PRIOR}"):
        a, b = (t.set_index(["parent", "child"])[_col(t, start)].sort_index() for t in (t1, t2))
        assert np.abs(a - b).max() > 1e-3, start
    assert "ess = 50" in app.summary_view().object
    # K2 ignores ess: the slider's position changes nothing
    app.score = "K2"
    k2 = app.table()
    app.ess = 0.1
    pd.testing.assert_frame_equal(k2, app.table())


def test_flags_are_those_over_the_threshold():
    names = ["a", "b", "c"]
    z = pd.DataFrame(np.zeros((3, 3)), index=names, columns=names)
    post = z.copy()
    post.loc["a", "b"], post.loc["b", "c"], post.loc["a", "c"] = 0.9, 0.5, 0.31
    boot = z.copy()
    boot.loc["a", "b"], boot.loc["b", "c"], boot.loc["c", "a"] = 0.55, 0.1, 0.3
    res = dict(stderr=None, how="exact")
    t = edge_table(dict(post=post, **res), dict(post=post, **res),
                   dict(arc=boot, pair=boot + boot.T, threshold=0.2))
    got = set(zip(t.loc[t[FLAG], "parent"], t.loc[t[FLAG], "child"]))
    assert got == {("a", "b"), ("b", "c"), ("a", "c")}     # 0.35, 0.4, 0.31; not c -> a (0.3)


def test_exact_where_possible_then_mcmc():
    from bnexplore.apps.edge_confidence import AUTO, EXACT, _use

    assert [_use(AUTO, ORDER_PRIOR, p) for p in (18, 19)] == [EXACT, MCMC]
    assert [_use(AUTO, UNIFORM_PRIOR, p) for p in (17, 18)] == [EXACT, MCMC]
    assert _use(MCMC, UNIFORM_PRIOR, 3) == MCMC


def test_mcmc_columns_carry_standard_errors_and_convergence(frame):
    app = EdgeConfidence(frame, max_parents=1, method=MCMC, n_iter=2_000, n_boot=4)
    t = app.table()
    assert _col(t, f"s.e., {UNIFORM_PRIOR}") and _col(t, f"s.e., {ORDER_PRIOR}")
    assert "partition MCMC" in _col(t, f"P(arc), {UNIFORM_PRIOR}")
    assert "order MCMC" in _col(t, f"P(arc), {ORDER_PRIOR}")
    text = app.summary_view().object
    assert text.count("converged") >= 2 and "R-hat" in text


def test_settings_round_trip_through_the_link(frame):
    from panel.util import parse_query

    app = EdgeConfidence(frame, n_boot=10)
    app.param.update(max_parents=1, score="K2", ess=20.0, method=MCMC, n_iter=4_000, n_boot=30,
                     random_state=7)
    fresh = EdgeConfidence(frame)
    fresh.apply_query(parse_query("?" + urlencode(app.query())))
    for p in app.url_parameters():
        assert getattr(fresh, p) == getattr(app, p), p
    assert isinstance(fresh.ess, float) and fresh.data.key == app.data.key


@pytest.mark.browser
def test_edge_confidence_page_renders_and_the_ess_slider_re_averages(panel_server, page):
    import re

    from browser_checks import assert_fits_and_no_error

    page.goto(f"{panel_server}/apps?app=edge_confidence&sample_size=500&n_boot=20",
              timeout=180_000)
    page.get_by_text(re.compile(r"BDeu, ess = 1\b")).first.wait_for(timeout=240_000)
    page.locator("canvas").first.wait_for(state="attached", timeout=120_000)
    assert "Edge confidence" in page.title()
    for width in (1400, 1024):
        page.set_viewport_size({"width": width, "height": 1200})
        page.wait_for_timeout(1500)
        assert_fits_and_no_error(page)
    handle = page.locator(".noUi-handle:visible").nth(2)   # sample size, k, then ess
    handle.focus()
    handle.press("ArrowRight")
    page.get_by_text(re.compile(r"BDeu, ess = 2\b")).first.wait_for(timeout=120_000)
    page.wait_for_function("() => window.location.search.includes('ess=2')", timeout=30_000)
    assert not page.console_errors, page.console_errors


def test_views_render_and_export(frame):
    app = EdgeConfidence(frame, max_parents=1, n_boot=4)
    plots = app.plots_view()
    assert [type(o).__name__ for o in plots] == ["HoloViews", "HoloViews"]
    table = app.table_view()
    download = table[-1][-1]
    csv = pd.read_csv(download.callback())
    assert list(csv.columns) == list(app.table().columns) and len(csv) == 20


def test_threshold_leaves_weak_arcs_out_of_the_pictures(frame):
    """Arcs whose posterior is below the threshold under both priors are blank in the
    heat map and not drawn in the scatter plot; the table keeps every arc."""
    import holoviews as hv

    app = EdgeConfidence(frame, max_parents=1, n_boot=4)
    table = app.table()
    u, o = _col(table, f"P(arc), {UNIFORM_PRIOR}"), _col(table, f"P(arc), {ORDER_PRIOR}")
    strong = table[np.maximum(table[u], table[o]) >= 0.4]
    assert 0 < len(strong) < len(table)
    app.threshold = 0.4
    heat, scatter = (p.object for p in app.plots_view())
    cells = heat.get(0).data.dropna(subset=["value"])
    drawn = set(zip(cells["parent"], cells["child"]))
    assert drawn <= set(zip(strong["parent"], strong["child"]))
    points = [el for el in scatter.traverse(lambda e: e, [hv.Scatter])]
    arcs = {a for el in points for a in el.dimension_values("arc")}
    assert arcs == {f"{a} → {b}" for a, b in zip(strong["parent"], strong["child"])}
    assert len(app.table()) == len(table)
    with pytest.raises(ValueError):
        app.threshold = 1.5
