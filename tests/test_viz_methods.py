"""Plot builders of the method apps (forests, mixtures, ISMB, clustering)."""
import math

import networkx as nx
import pytest
import pandas as pd


def _render(plot):
    import holoviews as hv

    return hv.render(plot, backend="bokeh")


def test_short_labels_are_unique_and_bounded():
    from bnexplore.viz.forests import short_labels

    names = ["adoption-of-the-budget-resolution", "adoption-of-the-budget-x", "crime"]
    lab = short_labels(names, max_len=12)
    assert len(set(lab.values())) == 3
    assert all(len(v) <= 12 for v in lab.values()) and lab["crime"] == "crime"


def test_forest_plot_keeps_full_names_in_the_hover():
    from bnexplore.viz.forests import forest_plot

    g = nx.DiGraph([("C", "a-very-long-feature-name"), ("C", "b")])
    p = forest_plot(g, class_node="C", markov_blanket=["b"], max_label=8, rename={"C": "class"})
    nodes = p.Graph.I.nodes
    assert "a-very-long-feature-name" in list(nodes.dimension_values("name"))
    assert max(len(n) for n in nodes.dimension_values("label")) <= 8
    # without max_label nothing is cut when the picture has room, and the class is on top
    from bnexplore.viz.graphs import node_boxes

    b = node_boxes(forest_plot(g, class_node="C", rename={"C": "class"}, width=800))
    assert set(b["label"]) == {"class", "a-very-long-feature-name", "b"}
    assert b.set_index("name")["y0"].idxmax() == "class"


@pytest.mark.parametrize("column", ["penalty", "alpha"])     # alpha: results before 0.2.0
def test_alpha_plot_shows_the_reference_inside_the_y_range_and_in_the_legend(column):
    from bnexplore.viz.forests import alpha_accuracy_plot

    df = pd.DataFrame({column: [0, 0, 1, 1, math.inf, math.inf],
                       "accuracy": [.90, .92, .93, .94, .91, .90]})
    fig = _render(alpha_accuracy_plot(df, reference={"naive Bayes": 0.80}, responsive=True))
    assert fig.y_range.start < 0.80 < fig.y_range.end
    assert fig.sizing_mode in ("stretch_width", "stretch_both", "scale_width")
    labels = [item.label["value"] for item in fig.legend[0].items]
    assert any("naive Bayes" in s for s in labels)


def test_responsive_builders_have_no_fixed_width():
    from bnexplore.clustering import ClusterNode
    from bnexplore.viz.clustering import dendrogram_plot, q_timeline_plot
    from bnexplore.viz.mixtures import bma_collapse_plot, weights_bars

    a, b, c = ClusterNode(["a"], 1.0), ClusterNode(["b"], 1.0), ClusterNode(["c"], 1.0)
    root = ClusterNode(["a", "b", "c"], 0.2, [ClusterNode(["a", "b"], 0.6, [a, b]), c])
    path = pd.DataFrame({"n_train": [10, 10, 100, 100], "attribute": ["a", "b"] * 2,
                         "weight": [.6, .4, .99, .01]})
    for plot in (dendrogram_plot(root, [["a", "b"], ["c"]], responsive=True),
                 q_timeline_plot({"greedy": [3, 2, 1]}, responsive=True),
                 weights_bars(pd.DataFrame({"m": [.5, .5]}, index=["a", "b"]), responsive=True),
                 bma_collapse_plot(path, current=50, responsive=True)):
        fig = _render(plot)
        assert fig.sizing_mode == "stretch_width", fig.sizing_mode
    # the dendrogram's x range holds every leaf (nothing cut off at the right)
    fig = _render(dendrogram_plot(root, responsive=True))
    assert fig.x_range.start < 0 and fig.x_range.end > 2


def test_blanket_grid_gives_tall_blankets_room():
    import holoviews as hv

    from bnexplore.viz.ismb import blanket_grid

    class Chain:  # the interface blanket_grid uses: .target and .to_networkx()
        target = "Z"

        def to_networkx(self):
            return nx.DiGraph([("A", "Z"), ("Z", "C"), ("C", "D"), ("D", "B")])

    grid = blanket_grid([Chain()], [1.0], size=250)
    assert isinstance(grid, hv.Layout)
    fig = _render(grid.values()[0])
    assert fig.frame_height >= 62 * 5 > 250      # five layers, each ~62 px: arrows stay visible


def test_blanket_plot_is_titled_with_its_rank_and_weight():
    from bnexplore.viz.ismb import blanket_plot

    class Pair:
        target = "Z"

        def to_networkx(self):
            return nx.DiGraph([("A", "Z")])

    fig = _render(blanket_plot(Pair(), 0.25, rank=4, size=250))
    assert fig.title.text.startswith("#4") and "weight in R 0.250" in fig.title.text
    assert _render(blanket_plot(Pair(), rank=2)).title.text == "#2"

