"""The "Learn a structure" app (bnexplore.apps.LearnStructure) without a browser."""
import bnexplore as bx
from bnexplore.apps import LearnStructure


def test_views_follow_the_parameters():
    app = LearnStructure("asia", sample_size=500, max_parents=1)
    first = app.summary_view().object
    assert "log score (K2)" in first
    res = bx.search.greedy_thick_thin(app.data.frame, prior="K2", max_parents=1)
    assert f"{res.score:.3f}" in first            # the page shows the library's result
    assert max(d for _, d in res.dag.in_degree()) <= 1
    app.param.update(score="BDeu", ess=5.0, max_parents=2)
    res2 = bx.search.greedy_thick_thin(app.data.frame, prior="BDeu", ess=5.0, max_parents=2)
    assert f"{res2.score:.3f}" in app.summary_view().object
    steps = app.steps_view()[1][0].value
    assert len(steps) == len(res2.steps) and "edge" in steps


def test_ess_shows_only_for_bdeu():
    app = LearnStructure("asia")
    ess = app.widget("ess")
    assert not ess.visible
    app.score = "BDeu"
    assert ess.visible


def test_step_player_reaches_the_final_structure():
    app = LearnStructure("asia", sample_size=500, max_parents=2)
    res = bx.search.greedy_thick_thin(app.data.frame, prior="K2", max_parents=2)
    player = app.step_player()                 # made before the search: its end follows
    assert not player.visible                  # (and it shows once the end is known)
    app.graph_view()
    assert player.visible
    n = len(res.step_rows)
    assert (player.start, player.end, player.value) == (0, n, n)   # starts at the final DAG
    assert app.step is None and "the final structure" in app.graph_view()[0].object
    player.value = 1                           # the view draws the player's step
    assert app.step == 1 and app.graph_view()[0].object.startswith(f"Step 1 of {n}")
    player.value = n
    assert app.step is None
    player.value = 0
    app.max_parents = 1                        # another search: back at its final structure
    m = len(bx.search.greedy_thick_thin(app.data.frame, prior="K2", max_parents=1).step_rows)
    assert app.step is None and "the final structure" in app.graph_view()[0].object
    assert (player.end, player.value) == (m, m)
    app.max_parents = 2
    assert set(res.dag_at(n).edges) == set(res.dag.edges) and not res.dag_at(0).edges
    title = lambda k: app.step_plot(k).opts.get().kwargs["title"]
    assert title(n).startswith("GTT structure") and title(0).startswith(f"after step 0 of {n}")
    for k in range(1, n + 1):                  # one accepted move per step, as captioned
        row = res.step_rows[k - 1]
        u, v = row["edge"]
        caption = app.step_caption(k)
        assert f"{u} \u2192 {v}" in caption and f"{row['delta']:+.2f}" in caption
    assert "the final structure" in app.step_caption(n)
    assert "empty network" in app.step_caption(0)


def test_compare_with_a_pinned_setting_counts_the_changed_arcs():
    import networkx as nx

    app = LearnStructure("asia", sample_size=500, max_parents=1)
    assert app.diff() is None
    app.pin()
    before = set(app.pinned[1].edges)
    app.max_parents = 3
    after = set(app.current_structure()[1].edges)
    d = app.diff()
    flip = {(v, u) for u, v in after}
    assert d.counts["kept"] == len(before & after)
    assert d.counts["reversed"] == len(before & flip - after)
    assert d.counts["added"] == len(after - before - {(v, u) for u, v in before})
    assert d.counts["removed"] == len(before - after - flip)
    text = app.compare_view()[2][0].object
    assert f"{d.counts['added']} added, {d.counts['removed']} removed" in text
    # a constructed pair through the same view
    app.pinned = ("constructed", nx.DiGraph([("asia", "tub"), ("tub", "either")]))
    app.current_structure = lambda: ("now", nx.DiGraph([("tub", "asia"), ("either", "lung")]))
    assert app.diff().counts == {"added": 1, "removed": 1, "reversed": 1, "kept": 0}
    assert "1 added, 1 removed, 1 reversed, 0 kept" in app.compare_view()[2][0].object
    app.unpin()
    assert "Pin a setting" in app.compare_view()[2].object


def test_presentation_mode_sets_projector_fonts():
    app = LearnStructure("asia", sample_size=500, max_parents=1)
    small = app.step_plot(3)
    app.presentation = True
    big = app.step_plot(3)
    import holoviews as hv

    def fonts(p):
        kw = hv.Store.lookup_options("bokeh", p, "plot").kwargs.get("fontsize", {})
        return {k: float(str(v).rstrip("px")) for k, v in kw.items()}
    assert min(fonts(big).values()) >= 18
    assert fonts(big)["title"] > fonts(small).get("title", 0)


def test_hill_climbing_has_the_same_player_caption_steps_and_compare():
    app = LearnStructure("asia", sample_size=500, max_parents=2, search="hill climbing")
    res = bx.search.hill_climb(app.data.frame, prior="K2", max_parents=2)
    n = len(res.step_rows)
    assert set(app.current_structure()[1].edges) == set(res.dag.edges)
    assert "hill climbing" in app.summary_view().object and f"{res.score:.3f}" in app.summary_view().object
    app.graph_view()
    player = app.step_player()
    assert (player.start, player.end, player.value) == (0, n, n)
    assert app.step_plot(n).opts.get().kwargs["title"].startswith("hill climbing structure")
    for k in range(1, n + 1):
        row = res.step_rows[k - 1]
        u, v = row["edge"]
        caption = app.step_caption(k)
        assert f"{u} \u2192 {v}" in caption and f"{row['delta']:+.2f}" in caption
        assert "(hc)" not in caption
        graph = app.step_plot(k).get(0)            # the picture draws the step's DAG
        drawn = set(zip(graph.dimension_values("source"), graph.dimension_values("target")))
        assert drawn == set(res.dag_at(k).edges)
    assert "the final structure" in app.step_caption(n)
    steps = app.steps_view()[1][0].value
    assert len(steps) == n and "phase" not in steps
    # compare with the greedy thick-thin structure of the same setting
    app.search = "greedy thick-thin"
    app.pin()
    app.search = "hill climbing"
    gtt = bx.search.greedy_thick_thin(app.data.frame, prior="K2", max_parents=2).dag
    assert app.pinned[0].startswith("GTT") and set(app.pinned[1].edges) == set(gtt.edges)
    d = app.diff()
    assert d.counts["kept"] + d.counts["added"] + d.counts["reversed"] == res.dag.number_of_edges()
    assert "hill climbing" in app.compare_view()[2][0].object
