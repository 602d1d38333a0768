"""Projector readability: arc diffs, label contrast, presentation sizes, thresholds."""
import holoviews as hv
import networkx as nx
import numpy as np
import pandas as pd
import pytest

from bnexplore.viz import _style
from bnexplore.viz.curves import heatmap
from bnexplore.viz.diff import DIFF_COLORS, arc_diff, arc_diff_plot
from bnexplore.viz.graphs import dag_plot, node_boxes


def _pair():
    g1 = nx.DiGraph([("Age", "Sex"), ("Sex", "Work"), ("Age", "Work"), ("Work", "Car")])
    g2 = nx.DiGraph([("Sex", "Age"), ("Sex", "Work"), ("Work", "Home"), ("Home", "Car")])
    return g1, g2


def test_arc_diff_on_a_constructed_pair():
    g1, g2 = _pair()
    d = arc_diff(g1, g2)
    assert d.added == [("Home", "Car"), ("Work", "Home")]
    assert d.removed == [("Age", "Work"), ("Work", "Car")]
    assert d.reversed == [("Sex", "Age")]
    assert d.kept == [("Sex", "Work")]
    assert d.counts == {"added": 2, "removed": 2, "reversed": 1, "kept": 1} and d.n_changed == 5
    assert len(d.to_frame()) == 6
    same = arc_diff(g2, g2)
    assert same.n_changed == 0 and same.counts["kept"] == 4
    with pytest.raises(TypeError, match="g2"):
        arc_diff(g1, [("a", "b")])


def test_arc_diff_plot_colours_dashes_legend_and_counts():
    g1, g2 = _pair()
    fig = hv.render(arc_diff_plot(g1, g2, title="k = 3", width=700, height=400), backend="bokeh")
    assert fig.title.text == "k = 3: 2 added, 2 removed, 1 reversed, 1 kept"
    lines = {r.glyph.line_color: r.glyph for r in fig.renderers
             if type(getattr(r, "glyph", None)).__name__ == "Line"}
    assert set(lines) == set(DIFF_COLORS.values())
    assert lines[DIFF_COLORS["removed"]].line_dash and not lines[DIFF_COLORS["added"]].line_dash
    labels = [item.label.value for item in fig.legend[0].items]
    assert labels == ["added (2)", "removed (2)", "reversed (1)", "kept (1)"]
    # the drawn graph is g2 plus g1's nodes: Home and Car boxes both present
    boxes = node_boxes(arc_diff_plot(g1, g2))
    assert set(boxes["name"]) == {"Age", "Sex", "Work", "Home", "Car"}
    with pytest.raises(TypeError, match="edge_colors"):
        arc_diff_plot(g1, g2, edge_colors={})


def test_label_colours_follow_the_cell_colour():
    pale = _style.label_colors([0.0, 0.05, 0.1], "Blues", (0.0, 1.0))
    dark = _style.label_colors([0.9, 1.0], "Blues", (0.0, 1.0))
    assert set(pale) == {_style.DARK_TEXT} and set(dark) == {_style.LIGHT_TEXT}
    # diverging map: pale in the middle, dark at both ends
    div = _style.label_colors([-1.0, -0.05, 0.0, 0.05, 1.0], "RdBu_r", (-1.0, 1.0))
    assert div == [_style.LIGHT_TEXT, _style.DARK_TEXT, _style.DARK_TEXT, _style.DARK_TEXT, _style.LIGHT_TEXT]
    for c, v in zip(_style.cell_colors([0.0, 0.5, 1.0], "viridis", (0, 1)), [0.0, 0.5, 1.0]):
        assert _style.contrast_ratio(c, _style.text_color_for(c)) >= 4.5  # WCAG AA for normal text
    with pytest.raises(ValueError, match="colour"):
        _style.relative_luminance("blue")


def test_heatmap_labels_contrast_and_threshold():
    m = pd.DataFrame([[np.nan, 0.95, 0.02], [0.1, np.nan, 0.5], [0.8, 0.3, np.nan]],
                     index=list("ABC"), columns=list("ABC"))
    plot = heatmap(m, clim=(0.0, 1.0))
    labels = [el for el in plot.traverse(lambda e: e, [hv.Labels])][0]
    got = dict(zip(labels.dimension_values("text"), labels.dimension_values("text_color")))
    assert got["0.95"] == _style.LIGHT_TEXT and got["0.02"] == _style.DARK_TEXT and got["0.10"] == _style.DARK_TEXT
    thin = heatmap(m, clim=(0.0, 1.0), threshold=0.25)
    hm = [el for el in thin.traverse(lambda e: e, [hv.HeatMap])][0]
    vals = hm.dimension_values("value")
    assert np.nanmin(vals) >= 0.25 and np.isnan(vals).sum() == 5  # the diagonal, 0.02 and 0.10
    with pytest.raises(ValueError, match="threshold"):
        heatmap(m, threshold=-0.1)


def test_presentation_fonts_and_arcs():
    g = nx.DiGraph([("smoke", "lung"), ("lung", "dysp"), ("bronc", "dysp")])
    normal, big = dag_plot(g), dag_plot(g, presentation=True)
    assert node_boxes(normal)["font_px"].iloc[0] < 18 <= node_boxes(big)["font_px"].iloc[0]
    wb = (node_boxes(big)["x1"] - node_boxes(big)["x0"]).min()
    wn = (node_boxes(normal)["x1"] - node_boxes(normal)["x0"]).min()
    assert wb > wn  # boxes grow with their labels
    f_n, f_b = hv.render(normal, backend="bokeh"), hv.render(big, backend="bokeh")
    assert int(f_b.title.text_font_size.rstrip("px")) >= 18

    def arc_widths(fig):
        edges = [r for r in fig.renderers if hasattr(r, "edge_renderer")][0].edge_renderer
        lw = edges.glyph.line_width  # a number when every arc has the same width
        return np.asarray(edges.data_source.data[lw] if isinstance(lw, str) else [lw], dtype=float)

    np.testing.assert_allclose(arc_widths(f_b), 2 * arc_widths(f_n))
    m = pd.DataFrame(np.eye(3) * 0.5, index=list("ABC"), columns=list("ABC"))
    fig = hv.render(heatmap(m, presentation=True), backend="bokeh")
    ticks = [fig.xaxis[0].major_label_text_font_size, fig.yaxis[0].major_label_text_font_size]
    assert all(float(t.rstrip("px")) >= 18 for t in ticks)


def test_small_networks_get_boxes_sized_to_their_labels():
    g = nx.DiGraph([("asia", "tub"), ("tub", "lung"), ("lung", "dysp")])
    for kw in ({}, {"presentation": True}, {"width": 1400}):
        b = node_boxes(dag_plot(g, **kw))
        widths = b["x1"] - b["x0"]
        assert widths.max() < 90, (kw, widths.tolist())


def test_thresholds_thin_mstar_and_the_difference_map_follows_the_order():
    from bnexplore.viz.averaging import summary_network_plot, thin_arcs
    from bnexplore.viz.orders import posterior_difference_heatmap

    names = ["A", "B", "C", "D"]
    post = pd.DataFrame([[0, 0.9, 0.15, 0.4], [0, 0, 0.6, 0.05], [0, 0, 0, 0.3], [0, 0, 0, 0]],
                        index=names, columns=names)
    dag = nx.DiGraph([(u, v) for u in names for v in names if post.loc[u, v] > 0])
    assert sorted(thin_arcs(dag, post, 0.35).edges) == [("A", "B"), ("A", "D"), ("B", "C")]
    assert set(thin_arcs(dag, post, 0.99).nodes) == set(names)
    plot = summary_network_plot(dag, post, threshold=0.35)
    graph = [el for el in plot.traverse(lambda e: e, [hv.Graph])][0]
    assert len(graph) == 3 and len(node_boxes(plot)) == 4
    with pytest.raises(ValueError, match="threshold"):
        thin_arcs(dag, post, 1.5)
    greedy = ["C", "A", "D", "B"]
    h = posterior_difference_heatmap(post - post.T, order=greedy)
    hm = [el for el in h.traverse(lambda e: e, [hv.HeatMap])][0]
    rows = [str(v) for v in hm.dimension_values(1, expanded=False)]
    assert rows == greedy or rows == greedy[::-1]  # the first row of the order drawn at the top
    fig = hv.render(h, backend="bokeh")
    assert list(fig.y_range.factors) == greedy[::-1]


def test_presentation_of_any_picture():
    from bnexplore.viz import presentation, roc_plot
    from bnexplore.viz.orders import log_score_traces

    for plot in (roc_plot({"NB": ([0, 0.2, 1], [0, 0.7, 1], 0.75)}),
                 log_score_traces(np.array([[-10.0, -9.5, -9.4], [-12.0, -10.0, -9.6]]), thin=10)):
        fig = hv.render(presentation(plot), backend="bokeh")
        sizes = [fig.title.text_font_size, fig.xaxis[0].axis_label_text_font_size,
                 fig.xaxis[0].major_label_text_font_size, fig.yaxis[0].major_label_text_font_size]
        if fig.legend:
            sizes.append(fig.legend[0].label_text_font_size)
        assert all(float(s.rstrip("px")) >= 18 for s in sizes), sizes
    m = pd.DataFrame([[0.1, 0.9], [0.5, 0.2]], index=list("AB"), columns=list("AB"))
    labels = [el for el in presentation(heatmap(m)).traverse(lambda e: e, [hv.Labels])][0]
    assert hv.Store.lookup_options("bokeh", labels, "style").kwargs["text_font_size"] == "18px"


def test_side_by_side_pictures_share_their_node_positions():
    from bnexplore.viz.diff import side_by_side

    g1, g2 = _pair()
    pair = side_by_side(g1, g2, ("pinned", "now"), width=600, height=380)
    left, right = (node_boxes(p).set_index("name").sort_index() for p in pair)
    assert list(left.index) == list(right.index) == sorted(set(g1) | set(g2))
    for col in ("x0", "y0", "x1", "y1"):
        np.testing.assert_allclose(left[col], right[col])
    figs = hv.render(pair, backend="bokeh")
    assert figs is not None
    with pytest.raises(TypeError, match="layout"):
        side_by_side(g1, g2, layout={})


def test_posterior_plot_draws_each_model_and_the_spread():
    import bnexplore as bx
    from bnexplore.viz.inference import MODEL_COLORS, posterior_plot

    df = bx.networks.load("asia").sample(300, random_state=0)
    am = bx.averaging.ask_averaged_model(df, max_parents=2, random_state=0, n_structures=10)
    table = am.posteriors({"smoke": "yes"})
    plot = posterior_plot(table, nodes=["lung", "smoke"], presentation=True)
    rects = [el for el in plot.traverse(lambda e: e, [hv.Rectangles])]
    assert [r.label for r in rects] == ["single best network (GTT)", "model average (BMA)"]
    sub = table[table.node.isin(["lung", "smoke"])]
    lung_first = pd.concat([sub[sub.node == "lung"], sub[sub.node == "smoke"]])
    np.testing.assert_allclose(rects[1].dimension_values("x1"), lung_first["averaged"].to_numpy())
    np.testing.assert_allclose(rects[0].dimension_values("x1"), lung_first["best"].to_numpy())
    segs = [el for el in plot.traverse(lambda e: e, [hv.Segments])][0]
    np.testing.assert_allclose(segs.dimension_values("x0"), lung_first["low"].to_numpy())
    fig = hv.render(plot, backend="bokeh")
    labels = list(fig.yaxis[0].major_label_overrides.values())
    assert "smoke = yes (observed)" in labels and "smoke = no" in labels and "lung = yes" in labels
    assert float(fig.yaxis[0].major_label_text_font_size.rstrip("px")) >= 18
    assert {"best", "averaged"} <= set(MODEL_COLORS)
    three = posterior_plot(table, models=("best", "averaged", "mean_of_conditionals"))
    assert len([el for el in three.traverse(lambda e: e, [hv.Rectangles])]) == 3
    with pytest.raises(ValueError, match="columns"):
        posterior_plot(table.drop(columns=["best"]))
    with pytest.raises(ValueError, match="nodes"):
        posterior_plot(table, nodes=["nope"])


def test_every_heat_map_of_viz_labels_pale_cells_dark_and_dark_cells_light():
    """Each heat map the apps draw (arc posteriors, their difference, mixture weights,
    one-vs-rest AUC) labels its cells by contrast with the cell's own colour."""
    from bnexplore.viz.averaging import arc_posterior_heatmap
    from bnexplore.viz.compare import ovr_auc_heatmap
    from bnexplore.viz.mixtures import weights_heatmap
    from bnexplore.viz.orders import posterior_difference_heatmap

    names = list("ABC")
    post = pd.DataFrame([[np.nan, 0.97, 0.03], [0.5, np.nan, 0.9], [0.1, 0.02, np.nan]],
                        index=names, columns=names)
    diff = pd.DataFrame([[np.nan, 0.94, 0.02], [0.3, np.nan, -0.5], [0.1, 0.6, np.nan]],
                        index=names, columns=names)
    cases = [  # (picture, a pale cell's label, a dark cell's label)
        (arc_posterior_heatmap(post), "0.03", "0.97"),
        (posterior_difference_heatmap(diff), "0.02", "0.94"),
        (posterior_difference_heatmap(-diff), "-0.02", "-0.94"),
        (weights_heatmap(pd.DataFrame({"BMA": [0.98, 0.02], "AODE": [0.5, 0.5]},
                                      index=["x", "y"])), "0.02", "0.98"),
        (ovr_auc_heatmap(pd.DataFrame({"a": [0.52, 0.99]}, index=["NB", "TAN"])), "0.52", "0.99"),
    ]
    for plot, pale, dark in cases:
        labels = [el for el in plot.traverse(lambda e: e, [hv.Labels])][0]
        colour = dict(zip(labels.dimension_values("text"), labels.dimension_values("text_color")))
        assert colour[pale] == _style.DARK_TEXT and colour[dark] == _style.LIGHT_TEXT, colour


def test_bounded_isotonic_fit_is_the_constrained_optimum():
    """x_j - x_{j-1} >= sep_j and lo <= x_0, x_last <= hi: the clipped pool-adjacent-
    violators fit equals a general constrained solver's on random instances."""
    from scipy.optimize import minimize

    from bnexplore.viz._layered import _isotonic_with_gaps

    rng = np.random.default_rng(0)
    for _ in range(25):
        n = int(rng.integers(1, 7))
        d, w = rng.normal(0, 5, n), rng.uniform(0.05, 4, n)
        sep = [0.0, *rng.uniform(0.5, 2, n - 1)]
        lo = float(rng.normal(-3, 1))
        hi = lo + sum(sep) + float(rng.uniform(0, 6))
        got = np.array(_isotonic_with_gaps(d, w, sep, (lo, hi)))
        cons = [{"type": "ineq", "fun": lambda x, j=j: x[j] - x[j - 1] - sep[j]}
                for j in range(1, n)]
        cons += [{"type": "ineq", "fun": lambda x: x[0] - lo},
                 {"type": "ineq", "fun": lambda x: hi - x[-1]}]
        ref = minimize(lambda x: float(np.sum(w * (x - d) ** 2)),
                       np.linspace(lo, lo + sum(sep), n), constraints=cons, method="SLSQP",
                       options={"ftol": 1e-12, "maxiter": 500}).x
        assert np.sum(w * (got - d) ** 2) <= np.sum(w * (ref - d) ** 2) + 1e-6
        assert got[0] >= lo - 1e-9 and got[-1] <= hi + 1e-9
        assert np.all(np.diff(got) >= np.array(sep[1:]) - 1e-9)


def test_a_width_bound_makes_a_wide_drawing_taller_not_wider():
    """A star of 12 long-named children (one layer) and 5 isolated nodes: unbounded it
    is one wide layer and one wide row; with max_width every layer and row fits it,
    the arcs still point down, and dag_plot at a narrow width keeps every box apart
    and inside the width asked for (labels cut first, then the layers wrap)."""
    from bnexplore.viz.graphs import box_widths, layered_layout, plot_size

    g = nx.DiGraph([("hub", f"child-with-a-long-name-{i:02d}") for i in range(12)])
    g.add_nodes_from(f"isolated-{i}" for i in range(5))
    w = box_widths(g)
    free = layered_layout(g, node_widths=w, gap=14)
    bound = 600.0
    pos = layered_layout(g, node_widths=w, gap=14, max_width=bound)

    def extent(p, nodes):
        return max(p[n][0] + w[n] / 2 for n in nodes) - min(p[n][0] - w[n] / 2 for n in nodes)

    assert extent(free, g.nodes) > 2 * bound
    rows: dict = {}
    for n, (_, y) in pos.items():
        rows.setdefault(y, []).append(n)
    assert len(rows) > len({y for _, y in free.values()})
    assert all(extent(pos, members) <= bound + 1e-6 for members in rows.values())
    assert all(pos[u][1] > pos[v][1] for u, v in g.edges)
    plot = dag_plot(g, width=620, responsive=True, presentation=True)
    assert plot_size(plot)[0] <= 620
    from browser_checks import assert_boxes_apart

    assert_boxes_apart(plot)


def test_heatmap_colour_bar_below_leaves_the_width_to_the_cells():
    from bokeh.models import ColorBar

    m = pd.DataFrame(np.eye(3), index=list("abc"), columns=list("abc"))
    fig = hv.render(heatmap(m, colorbar_position="bottom"), backend="bokeh")
    assert any(isinstance(r, ColorBar) for r in fig.below)
    assert not any(isinstance(r, ColorBar) for r in fig.right)
    assert fig.toolbar_location == "above"
    with pytest.raises(ValueError, match="colorbar_position"):
        heatmap(m, colorbar_position="left")
