"""Issue 36's lecture features that a click drives, in a real browser (headless Debian
Chromium against ``panel serve apps/``): a click on a node of "Ask the averaged model"
cycles its evidence (the posterior shown equals brute-force inference), the step player
plays hill climbing to the final structure in "Learn a structure", and the selected
button of every toggle group there is the strong one."""
from __future__ import annotations

import re
import time

import pytest
from test_lecture_browser import ASK, FIRST_RENDER_MS, wait_gtt_posterior
from test_toggles import assert_selected_is_strong


#: the page position of a node's box centre in the picture whose boxes name it (BokehJS's
#: own view query and the frame's scales: the box's data coordinates to canvas pixels).
_NODE_POSITION = """name => {
    for (const v of Bokeh.index.all_views()) {
        if (!v.frame || !v.renderer_views) continue;
        for (const rv of v.renderer_views.values()) {
            const d = rv.model.data_source && rv.model.data_source.data;
            if (!d || !d.x0 || !d.name) continue;
            const i = Array.from(d.name).indexOf(name);
            if (i < 0) continue;
            const sx = v.frame.x_scale.compute((d.x0[i] + d.x1[i]) / 2);
            const sy = v.frame.y_scale.compute((d.y0[i] + d.y1[i]) / 2);
            const r = v.canvas_view.el.getBoundingClientRect();
            return [r.left + sx, r.top + sy];
        }
    }
    return null; }"""


def _click_node(page, name: str) -> None:
    page.locator(".bnx-ask-network canvas, .bnx-ask-network .bk-Canvas").first.wait_for(
        timeout=FIRST_RENDER_MS)
    deadline = time.monotonic() + 60
    while (xy := page.evaluate(_NODE_POSITION, name)) is None:
        assert time.monotonic() < deadline, f"no box named {name!r} in the network picture"
        page.wait_for_timeout(250)
    page.mouse.click(*xy)


def _wait_evidence(page, text: str) -> None:
    deadline = time.monotonic() + 60
    while text not in (page.locator(".bnx-evidence-text").first.text_content() or ""):
        assert time.monotonic() < deadline, f"{text!r} did not reach the summary"
        page.wait_for_timeout(250)


@pytest.mark.browser
def test_clicking_a_node_cycles_its_evidence_and_moves_the_posteriors(panel_server, page):
    from test_app_ask_model import brute_force

    from bnexplore.apps import AskModel
    from bnexplore.apps.ask_model import averaged_model

    app = AskModel("asia", sample_size=500, max_parents=1)
    model = averaged_model(app.data, 1, "order", 0)
    first, second = app.states()["smoke"]
    yes = list(model.best.states["lung"]).index("yes")
    expect = brute_force(model.best, {"smoke": first})["lung"][yes]
    expect_avg = brute_force(model.averaged, {"smoke": first})["lung"][yes]

    page.goto(f"{panel_server}/{ASK}", timeout=120_000)
    _click_node(page, "smoke")                    # not observed -> its first state
    _wait_evidence(page, f"smoke = {first}")
    cells = wait_gtt_posterior(page, "lung", "yes", expect)
    assert float(cells[3]) == pytest.approx(expect_avg, abs=6e-5)
    assert page.locator(".bnx-evidence select").nth(2).input_value() == first   # widgets follow
    _click_node(page, f"smoke = {first}")         # the redrawn picture names it so
    _wait_evidence(page, f"smoke = {second}")
    assert page.console_errors == []


#: the arcs drawn by every graph in the page (BokehJS's view query).
_ARCS_DRAWN = """() => Array.from(Bokeh.index.all_views())
    .filter(v => v.model.edge_renderer)
    .map(v => v.model.edge_renderer.data_source.data.start.length)"""


@pytest.mark.browser
def test_step_player_plays_hill_climbing_to_the_final_structure(panel_server, page):
    import bnexplore as bx
    from bnexplore.apps import LearnStructure

    app = LearnStructure("asia", sample_size=500, max_parents=2, search="hill climbing")
    res = bx.search.hill_climb(app.data.frame, prior="K2", max_parents=2)
    n, arcs = len(res.step_rows), res.dag.number_of_edges()

    page.goto(f"{panel_server}/apps?app=structure&source=network+sample&network=asia"
              f"&sample_size=500&max_parents=2&search=hill+climbing", timeout=120_000)
    player = page.locator(".bnx-step-player").first
    player.wait_for(timeout=FIRST_RENDER_MS)
    assert_selected_is_strong(page)       # the search, the score and the data source
    caption = page.locator(".bnx-step-caption").first
    player.locator("button.first").click()
    caption.filter(has_text=f"Step 0 of {n}: the empty network").wait_for(timeout=60_000)
    player.locator("button.play").click()
    # the caption's text lives in its shadow root, which has_text reads
    caption.filter(has_text=re.compile(f"Step {n} of {n}: .* the final structure")).wait_for(
        timeout=90_000)
    deadline = time.monotonic() + 30
    while set(drawn := page.evaluate(_ARCS_DRAWN)) != {arcs}:
        assert time.monotonic() < deadline, f"arcs drawn {drawn}, the search found {arcs}"
        page.wait_for_timeout(250)
    page.locator(".bnx-summary", has_text=f"{arcs} arcs").wait_for(timeout=10_000)
    page.locator(".bnx-presentation button").click()         # a toggle, switched on
    page.locator(".bnx-presentation .bk-active").wait_for(timeout=30_000)
    assert_selected_is_strong(page)
    assert page.console_errors == []
