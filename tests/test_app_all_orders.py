"""The "Averaging over orders" app (bnexplore.apps.AllOrders): views without a browser,
and the served page in a browser."""
import re

import numpy as np
import pytest

import bnexplore as bx
from bnexplore.apps import AllOrders
from bnexplore.apps.all_orders import EXACT, MCMC


def test_views_follow_the_parameters():
    app = AllOrders("asia", sample_size=500, max_parents=2)
    text = app.summary_view().object
    assert "exact over all 8! orders" in text and "k = 2" in text and "fixed" in text
    # the page shows the library's exact posteriors
    post = bx.averaging.AllOrders(app.data.frame, max_parents=2).arc_posteriors()
    shown = app.heatmaps_view()
    assert len([o for o in shown if type(o).__name__ == "HoloViews"]) == 3
    assert "Order MCMC" in app.chains_view().object or "order MCMC" in app.chains_view().object
    app.param.update(method=MCMC, n_iter=4_000)
    text = app.summary_view().object
    assert "order MCMC, 4 chains x 4,000 iterations" in text and "R-hat max" in text
    chains = app.chains_view()
    assert type(chains).__name__ == "Column" and chains[-1][0].value.shape[0] > 0
    assert np.isfinite(post.to_numpy()).all()


def test_too_many_variables_for_the_exact_average_is_a_readable_error():
    app = AllOrders("alarm", sample_size=200, max_parents=1, method=EXACT)
    big = app.summary_view()
    assert type(big).__name__ == "Alert" and "MemoryBudgetError" in big.object
    assert "37 variables" in big.object


@pytest.mark.browser
def test_all_orders_page_renders_and_reacts(panel_server, page):
    page.goto(f"{panel_server}/apps?app=all_orders&sample_size=500", timeout=180_000)
    page.get_by_text(re.compile(r"k = 2 .*exact over all 8! orders")).first.wait_for(
        timeout=180_000)
    assert "Averaging over orders" in page.title()
    page.locator("canvas").first.wait_for(state="attached", timeout=120_000)
    handle = page.locator(".noUi-handle:visible").nth(1)  # sample size, then k
    handle.focus()
    handle.press("ArrowRight")
    page.get_by_text(re.compile(r"k = 3 ")).first.wait_for(timeout=120_000)
    page.wait_for_function("() => window.location.search.includes('max_parents=3')",
                           timeout=30_000)
    assert page.locator("canvas").count() >= 3
    assert not page.console_errors, page.console_errors


def test_threshold_blanks_weak_cells_and_rows_follow_the_greedy_order():
    import numpy as np

    from bnexplore.apps import AllOrders
    from bnexplore.apps.all_orders import fixed_order

    app = AllOrders("asia", sample_size=500, max_parents=1)
    order, _ = fixed_order(app.data, 1)
    cells = app.heatmaps_view()[1].object.get(0).data
    assert list(dict.fromkeys(cells["parent"])) == list(order)
    assert (cells["value"].dropna() < 0.5).any()
    app.param.update(threshold=0.5, presentation=True)
    thin = app.heatmaps_view()[1].object.get(0).data["value"].to_numpy(float)
    assert np.nanmin(thin) >= 0.5 and np.isnan(thin).sum() > cells["value"].isna().sum()


def test_threshold_thins_the_difference_map_by_the_arc_posteriors():
    """The difference map is thinned as the posterior maps beside it: a cell is blank
    exactly when the arc's posterior is below the threshold under both averages."""
    import numpy as np

    from bnexplore.apps import AllOrders
    from bnexplore.apps.all_orders import fixed_order

    app = AllOrders("asia", sample_size=500, max_parents=1, threshold=0.3)
    _, post, *_ = app._run()
    _, fixed = fixed_order(app.data, 1)
    cells = app.heatmaps_view()[2].object.get(0).data.set_index(["parent", "child"])["value"]
    strong = np.maximum(post, fixed)
    shown = kept = 0
    for (u, v), value in cells.items():
        if u == v:
            continue
        if strong.loc[u, v] >= 0.3:
            kept += 1
            assert value == (post - fixed).loc[u, v]
        else:
            shown += not np.isnan(value)
    assert shown == 0 and 0 < kept < len(post) * (len(post) - 1)
