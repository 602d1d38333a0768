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
