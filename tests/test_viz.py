"""Unit tests of bnexplore.viz: layout, DAG plot, ROC curves and heat maps."""
from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pandas as pd
import pytest

hv = pytest.importorskip("holoviews")

from bnexplore.viz import dag_plot, heatmap, layered_layout, roc_plot  # noqa: E402
from bnexplore.viz.graphs import HIGHLIGHT_COLOR, NODE_COLOR  # noqa: E402


def random_dag(n: int, p: float, seed: int) -> nx.DiGraph:
    rng = random.Random(seed)
    g = nx.DiGraph()
    names = [f"X{i}" for i in range(n)]
    g.add_nodes_from(names)
    for i in range(n):
        for j in range(i + 1, n):
            if rng.random() < p:
                g.add_edge(names[i], names[j])
    return g


def asia() -> nx.DiGraph:
    return nx.DiGraph([("asia", "tub"), ("smoke", "lung"), ("smoke", "bronc"),
                       ("tub", "either"), ("lung", "either"), ("either", "xray"),
                       ("either", "dysp"), ("bronc", "dysp")])


def hover_tooltips(fig) -> list[tuple[str, str]]:
    from bokeh.models import HoverTool

    tips = []
    for tool in fig.select(type=HoverTool):
        tips.extend(tool.tooltips or [])
    return tips


# ----------------------------------------------------------------------- layered_layout
@pytest.mark.parametrize("seed", range(5))
def test_layered_layout_edges_go_down_and_all_nodes_placed(seed):
    g = random_dag(25, 0.15, seed)
    g.add_node("lonely")
    pos = layered_layout(g)
    assert set(pos) == set(g.nodes)
    for u, v in g.edges:
        assert pos[u][1] > pos[v][1], (u, v, pos[u], pos[v])
        assert float(pos[u][1]).is_integer() and float(pos[v][1]).is_integer()
    # no two nodes share a position
    assert len(set(pos.values())) == len(pos)


def test_layered_layout_is_deterministic_and_independent_of_insertion_order():
    g = asia()
    h = nx.DiGraph()
    h.add_nodes_from(sorted(g.nodes, reverse=True))
    h.add_edges_from(sorted(g.edges, reverse=True))
    assert layered_layout(g) == layered_layout(g)
    assert layered_layout(g) == layered_layout(h)


def test_layered_layout_layers_are_longest_paths():
    pos = layered_layout(asia())
    assert pos["asia"][1] == pos["smoke"][1] == 0.0
    assert pos["either"][1] == -2.0
    assert pos["dysp"][1] == -3.0  # either -> dysp is the longest path into dysp


def test_layered_layout_isolated_nodes_get_bottom_row():
    g = nx.DiGraph([("a", "b")])
    g.add_nodes_from(["z", "y"])
    pos = layered_layout(g)
    assert pos["y"][1] == pos["z"][1] == -2.0
    assert pos["y"][0] < pos["z"][0]  # sorted by name


def test_layered_layout_small_graphs():
    assert layered_layout(nx.DiGraph()) == {}
    one = nx.DiGraph()
    one.add_node("only")
    assert layered_layout(one) == {"only": (0.0, 0.0)}
    ints = nx.DiGraph([(1, 2), (1, 3)])
    assert set(layered_layout(ints)) == {1, 2, 3}


def test_layered_layout_rejects_cycles_and_undirected():
    with pytest.raises(ValueError, match="cycle"):
        layered_layout(nx.DiGraph([("a", "b"), ("b", "a")]))
    with pytest.raises(TypeError, match="DiGraph"):
        layered_layout(nx.Graph([("a", "b")]))


# ----------------------------------------------------------------------- dag_plot
def test_dag_plot_renders_with_hover_fields():
    g = asia()
    g.nodes["tub"]["cpt_size"] = 4
    states = {n: ["yes", "no"] for n in g.nodes}
    plot = dag_plot(g, states=states, highlight=["either"], title="Asia")
    graph = plot.get(0)
    assert isinstance(graph, hv.Graph)
    assert set(graph.nodes.dimension_values("name")) == set(g.nodes)
    assert len(graph) == g.number_of_edges()
    colors = dict(zip(graph.nodes.dimension_values("name"), graph.nodes.dimension_values("color")))
    assert colors["either"] == HIGHLIGHT_COLOR and colors["asia"] == NODE_COLOR
    st = dict(zip(graph.nodes.dimension_values("name"), graph.nodes.dimension_values("states")))
    assert st["asia"] == "yes, no"

    fig = hv.render(plot, backend="bokeh")
    fields = {label for label, _ in hover_tooltips(fig)}
    assert {"name", "states", "cpt_size"} <= fields
    assert fig.title.text == "Asia"


def test_dag_plot_edge_weights_set_widths():
    g = nx.DiGraph([("a", "b"), ("a", "c")])
    plot = dag_plot(g, edge_weights={("a", "b"): 1.0, ("a", "c"): 0.1})
    graph = plot.get(0)
    widths = dict(zip(zip(graph.dimension_values("source"), graph.dimension_values("target")),
                      graph.dimension_values("width")))
    assert widths[("a", "b")] > widths[("a", "c")]
    hv.render(plot, backend="bokeh")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        dag_plot(g, edge_weights={("a", "b"): 2.0})


def test_dag_plot_empty_and_single_node():
    hv.render(dag_plot(nx.DiGraph()), backend="bokeh")
    one = nx.DiGraph()
    one.add_node("A")
    fig = hv.render(dag_plot(one, states={"A": ["0", "1", "2"]}), backend="bokeh")
    assert fig is not None


def test_dag_plot_other_layouts_and_bad_input():
    g = asia()
    hv.render(dag_plot(g, layout="circular"), backend="bokeh")
    pos = {n: (i, 0) for i, n in enumerate(g.nodes)}
    hv.render(dag_plot(g, layout=pos), backend="bokeh")
    with pytest.raises(ValueError, match="layout"):
        dag_plot(g, layout="spring")
    with pytest.raises(ValueError, match="highlight"):
        dag_plot(g, highlight=["nope"])
    with pytest.raises(TypeError):
        dag_plot({"a": ["b"]})


# ----------------------------------------------------------------------- curves
def test_roc_plot_renders_with_auc_in_legend():
    curves = {"NB": ([0, 0.2, 1], [0, 0.7, 1], 0.75),
              "TAN": (np.array([0, 0.1, 1]), np.array([0, 0.8, 1]), 0.85)}
    plot = roc_plot(curves, title="ROC")
    labels = [el.label for el in plot]
    assert "NB (AUC 0.750)" in labels and "TAN (AUC 0.850)" in labels
    fig = hv.render(plot, backend="bokeh")
    assert fig.title.text == "ROC"
    hv.render(roc_plot({}), backend="bokeh")
    with pytest.raises(ValueError, match="equal length"):
        roc_plot({"bad": ([0, 1], [0, 0.5, 1], 0.5)})


def test_heatmap_renders_and_keeps_order():
    names = ["B", "A", "C"]
    m = pd.DataFrame([[np.nan, 0.9, 0.2], [0.1, np.nan, 0.5], [0.0, 0.3, np.nan]],
                     index=names, columns=names)
    plot = heatmap(m, title="arc posteriors", cmap="viridis")
    hm = plot.get(0) if isinstance(plot, hv.Overlay) else plot
    assert isinstance(hm, hv.HeatMap)
    assert hm.kdims[0].name == "child" and hm.kdims[1].name == "parent"
    fig = hv.render(plot, backend="bokeh")
    assert list(fig.x_range.factors) == names
    assert fig.title.text == "arc posteriors"
    big = pd.DataFrame(np.random.default_rng(0).random((20, 20)))
    assert isinstance(heatmap(big), hv.HeatMap)  # no annotation for big matrices
    hv.render(heatmap(pd.DataFrame()), backend="bokeh")
    with pytest.raises(ValueError, match="numeric"):
        heatmap(pd.DataFrame({"a": ["x", "y"]}))


# ----------------------------------------------------------------------- layout quality
def test_layered_layout_finds_the_planar_drawing():
    # names put in alphabetical order cross (a-z, b-y); a long arc (r -> w) needs a
    # virtual node; the drawing exists without crossings and the layout must find it
    from bnexplore.viz.graphs import count_crossings

    g = nx.DiGraph([("a", "z"), ("b", "y"), ("z", "w"), ("y", "v"), ("r", "z"), ("r", "w"),
                    ("b", "x"), ("x", "v"), ("a", "q"), ("q", "w")])
    naive = {n: (float(i), -float(k)) for k, gen in enumerate(nx.topological_generations(g))
             for i, n in enumerate(sorted(gen))}
    assert count_crossings(g, naive) > 0  # the example is not trivially planar
    pos = layered_layout(g)
    assert count_crossings(g, pos) == 0
    for u, v in g.edges:
        assert pos[u][1] > pos[v][1]


def test_count_crossings_counts_proper_crossings_and_overlaps():
    from bnexplore.viz.graphs import count_crossings

    square = {"a": (0, 0), "b": (1, 0), "c": (0, -1), "d": (1, -1)}
    assert count_crossings(nx.DiGraph([("a", "d"), ("b", "c")]), square) == 1
    assert count_crossings(nx.DiGraph([("a", "c"), ("b", "d")]), square) == 0
    # two arcs out of one node touch there: no crossing; on top of each other: one
    assert count_crossings(nx.DiGraph([("a", "c"), ("a", "d")]), square) == 0
    line = {"a": (0, 0), "b": (0, -1), "c": (0, -2)}
    assert count_crossings(nx.DiGraph([("a", "b"), ("a", "c")]), line) == 1


def test_layered_layout_puts_the_class_node_on_top_alone():
    g = nx.DiGraph([("x1", "x2"), ("x2", "C"), ("C", "x3"), ("x3", "x4"), ("x5", "x4")])
    pos = layered_layout(g, class_node="C")
    assert pos["C"][1] == 0.0
    assert all(y < 0 for n, (x, y) in pos.items() if n != "C")
    with pytest.raises(ValueError, match="class_node"):
        layered_layout(g, class_node="nope")


def test_layered_layout_keeps_boxes_apart_and_grows_with_the_widest_layer():
    g = nx.DiGraph([("root", f"child{i}") for i in range(9)])
    widths = {n: 3.0 if n.endswith("3") else 1.0 for n in g.nodes}
    pos = layered_layout(g, node_widths=widths, gap=0.5)
    row = sorted((pos[n][0], n) for n in g.nodes if n != "root")
    for (xa, a), (xb, b) in zip(row, row[1:]):
        assert xb - xa >= (widths[a] + widths[b]) / 2 + 0.5 - 1e-9
    assert row[-1][0] - row[0][0] >= 8 * 1.5


def _assert_boxes_apart_and_hold_labels(plot):
    from browser_checks import assert_boxes_apart
    from bnexplore.viz.graphs import node_boxes

    assert_boxes_apart(plot)
    b = node_boxes(plot)
    # the rendered figure shows at least one pixel per unit: the boxes are not squeezed
    fig = hv.render(plot, backend="bokeh")
    assert fig.frame_width >= (fig.x_range.end - fig.x_range.start) - 1e-6
    assert fig.frame_height >= (fig.y_range.end - fig.y_range.start) - 1e-6
    return b


@pytest.mark.parametrize("name", ["alarm", "insurance"])
def test_dag_plot_boxes_do_not_overlap_on_bundled_networks(name):
    import bnexplore as bx

    dag = bx.networks.load(name).dag
    b = _assert_boxes_apart_and_hold_labels(dag_plot(dag, width=1000, height=520))
    assert set(b["name"]) == set(map(str, dag.nodes))


def test_dag_plot_shortens_long_labels_only_when_needed_and_hovers_the_full_name():
    long = [f"adoption-of-the-budget-resolution-{i}" for i in range(10)]
    g = nx.DiGraph([("class", n) for n in long])
    narrow = _assert_boxes_apart_and_hold_labels(dag_plot(g, width=700, class_node="class"))
    assert any(lab.endswith("\u2026") or "\u2026" in lab for lab in narrow["label"])
    assert set(narrow["name"]) == {"class", *long}  # the hover shows the full name
    assert len(set(narrow["label"])) == len(narrow)  # cut labels stay distinct
    short = nx.DiGraph([("class", "a"), ("class", "b")])
    b = _assert_boxes_apart_and_hold_labels(dag_plot(short, width=700))
    assert list(b["label"]) == list(b["name"])
    fig = hv.render(dag_plot(g, width=700), backend="bokeh")
    assert ("name", "@{name}") in hover_tooltips(fig)


# ----------------------------------------------------------------------- heat map
def test_heatmap_orders_rows_and_columns_and_titles_the_colour_bar():
    names = [f"V{i:02d}" for i in range(37)]
    rng = np.random.default_rng(0)
    m = pd.DataFrame(rng.random((37, 37)), index=names, columns=names)
    order = names[::-1]
    h = heatmap(m, order=order, clabel="P(arc)", width=600, height=550)
    fig = hv.render(h, backend="bokeh")
    # the first row of the order is drawn at the top, columns follow the order
    assert list(fig.y_range.factors)[::-1] == order
    assert list(fig.x_range.factors) == order
    assert fig.right[0].title == "P(arc)"  # the colour bar
    # 37 names stay readable: at least 14 px a cell, vertical column labels
    assert fig.frame_height >= 37 * 14 and fig.frame_width >= 37 * 14
    assert abs(fig.xaxis[0].major_label_orientation) > 1.5
    # a clustering puts strongly linked pairs side by side
    block = pd.DataFrame(0.0, index=list("abcdef"), columns=list("abcdef"))
    for u, v in [("a", "d"), ("b", "e"), ("c", "f")]:
        block.loc[u, v] = 0.95
    fig = hv.render(heatmap(block, order="cluster"), backend="bokeh")
    rows = list(fig.y_range.factors)[::-1]
    for u, v in [("a", "d"), ("b", "e"), ("c", "f")]:
        assert abs(rows.index(u) - rows.index(v)) == 1
    with pytest.raises(ValueError, match="order"):
        heatmap(block, order="random")


def test_layered_layout_is_memoised_per_graph_and_widths():
    """The layout is memoised (every visitor's page redraws the same structures): the
    same graph and box widths give the same positions from the memo, a caller's changes
    to the returned dict do not reach the next caller, and other widths or another arc
    are laid out afresh."""
    import networkx as nx

    from bnexplore.viz.graphs import _layout_of, layered_layout

    g = nx.DiGraph([("a", "b"), ("a", "c"), ("c", "d")])
    _layout_of.cache_clear()
    first = layered_layout(g, node_widths={"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0})
    first["a"] = (99.0, 99.0)
    again = layered_layout(g, node_widths={"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0})
    assert _layout_of.cache_info().hits == 1 and again["a"] != (99.0, 99.0)
    wide = layered_layout(g, node_widths={"a": 1.0, "b": 5.0, "c": 5.0, "d": 1.0})
    assert abs(wide["b"][0] - wide["c"][0]) > abs(again["b"][0] - again["c"][0])
    g.add_edge("b", "d")
    assert layered_layout(g, node_widths={"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}) != again
    assert _layout_of.cache_info().misses == 3
