"""Clustering hierarchy.

Cluster the variables by Cramer's V, flatten the hierarchy into sub-spaces (Castelo &
Siebes, Figure 1) and step through the incremental search; compare q with plain greedy.
"""
from __future__ import annotations

import sys
from pathlib import Path

import panel as pn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (serve, NETWORK, DataSource, describe_source, guarded,  # noqa: E402
                     load_data, make_template, md_join, reactive, cached, background)
from _render import shared_dag_pane, shared_layout, shared_pane  # noqa: E402

from bnexplore.viz.clustering import (dendrogram_plot, honeycomb_layout, q_timeline_plot,  # noqa: E402
                                      strategy_frame, subspace_plot)
from bnexplore.viz.graphs import box_widths, layered_layout  # noqa: E402

TITLE = "Clustering hierarchy"
DESCRIPTION = ("Cramer's V hierarchy of the variables, the incremental strategy it gives for a "
               "cluster size, and a player through the incremental search; q against greedy.")

#: what the page teaches, shown above the pictures.
LESSON = ("Greedy search scores every possible arc change at every step; its cost is **q**, "
          "the number of improving models it has to look at. Castelo & Siebes first cluster "
          "strongly associated variables (Cramér's V) and search one small sub-space at a "
          "time: the same kind of network is found for a fraction of q.")

HONEYCOMB = "honeycomb (48 nodes)"
HIERARCHY, RANDOM = "hierarchy", "random groups"

pn.extension("tabulator", sizing_mode="stretch_width", notifications=False)


# --------------------------------------------------------------------------- computation (cached)
@cached(16)
def dataset(kind: str, name: str, n: int):
    """``(DataFrame, true DAG or None, cells or None)`` for the chosen source."""
    if kind == NETWORK and name == HONEYCOMB:
        from bnexplore.clustering import honeycomb_network

        bn, cells = honeycomb_network(random_state=0)
        return bn.sample(int(n), random_state=0), bn.dag, cells
    df = load_data(kind, name, n)
    if kind == NETWORK:
        import bnexplore as bx

        return df, bx.networks.load(name).dag, None
    return df, None, None


@cached(16)
def scorer(kind: str, name: str, n: int):
    from bnexplore.scores import LocalScore

    return LocalScore(dataset(kind, name, n)[0], prior="K2")


def _order(kind, name, n, use_order):
    import networkx as nx

    dag = dataset(kind, name, n)[1]
    return list(nx.topological_sort(dag)) if (use_order and dag is not None) else None


@cached(16)
def tree(kind: str, name: str, n: int):
    from bnexplore.clustering import hierarchy

    return hierarchy(scorer(kind, name, n).data)


@cached(16)
def greedy(kind: str, name: str, n: int, use_order: bool):
    from bnexplore.clustering import greedy_search

    return greedy_search(score=scorer(kind, name, n), order=_order(kind, name, n, use_order))


@cached(64)
def incremental(kind: str, name: str, n: int, use_order: bool, cs: int, strategy: str, seed: int):
    from bnexplore.clustering import incremental_search, incremental_strategy

    clusters = (incremental_strategy(tree(kind, name, n), int(cs)) if strategy == HIERARCHY else None)
    return incremental_search(score=scorer(kind, name, n), cluster_size=int(cs), strategy="random",
                              random_state=int(seed), clusters=clusters, order=_order(kind, name, n, use_order))


@cached(16)
def layout(kind: str, name: str, n: int, use_order: bool):
    cells = dataset(kind, name, n)[2]
    if cells is not None:
        return honeycomb_layout(cells)
    dag = greedy(kind, name, n, use_order).dag
    # in pixels, from the label widths: the picture needs no more room than its labels
    return layered_layout(dag, node_widths=box_widths(dag), gap=14)


# --------------------------------------------------------------------------- views
@guarded
def summary_view(kind, name, n, use_order, cs, strategy, seed):
    g = greedy(kind, name, n, use_order)
    inc = incremental(kind, name, n, use_order, cs, strategy, seed)
    same = set(inc.dag.edges) == set(g.dag.edges)
    order_txt = "true topological order" if _order(kind, name, n, use_order) else "no order"
    text = (f"{describe_source(kind, name, n)} · {order_txt} · **greedy q = {g.q}** "
            f"({len(g.q_trace)} steps) · **incremental q = <span class='bnx-q'>{inc.q}</span>** "
            f"({len(inc.clusters)} clusters, {len(inc.subspaces)} sub-spaces) · greedy needs "
            f"**{g.q / max(inc.q, 1):.1f}×** as many models · final model "
            f"{'equals' if same else 'differs from'} the greedy one "
            f"(log score difference {inc.score - g.score:+.2f})")
    return pn.pane.Markdown(text, css_classes=["bnx-summary"], margin=(0, 10))


def dendrogram_picture(kind, name, n, use_order, cs, strategy, seed):
    """The Cramer's V hierarchy, the strategy's clusters coloured."""
    inc = incremental(kind, name, n, use_order, cs, strategy, seed)
    root = tree(kind, name, n)
    what = "clusters" if strategy == HIERARCHY else "random groups (they cut across the tree)"
    return dendrogram_plot(root, inc.clusters, title=f"Complete-linkage hierarchy of the "
                                                     f"variables; coloured: the {what} for cluster "
                                                     f"size {cs}", height=420, responsive=True)


# The pictures are rendered once per setting for all sessions (apps/_render.py): a
# class stepping through the sub-spaces costs one layout and render per step, not one each.
@guarded
def dendrogram_view(kind, name, n, use_order, cs, strategy, seed):
    return shared_pane(dendrogram_picture, kind, name, n, use_order, cs, strategy, seed,
                       sizing_mode="stretch_width", height=430)


@cached(maxsize=64)
def strategy_table(kind, name, n, use_order, cs, strategy, seed):
    """The clusters of a setting, their variables and scores (computed once for all sessions)."""
    inc = incremental(kind, name, n, use_order, cs, strategy, seed)
    cells = dataset(kind, name, n)[2]
    table = strategy_frame(inc.clusters, cells)
    table["q in own sub-space"] = [int(inc.subspace_q[i]) for i, k in enumerate(inc.kinds) if k == "cluster"]
    if "share in main group" in table:
        table["share in main group"] = table["share in main group"].round(2)
    return table


@guarded
def strategy_view(kind, name, n, use_order, cs, strategy, seed):
    table = strategy_table(kind, name, n, use_order, cs, strategy, seed).copy()  # the session's own
    # the table fits its panel: long variable lists wrap instead of widening the page; a
    # shown table takes the new rows (views.taken_values)
    return pn.widgets.Tabulator(table, show_index=False, disabled=True, layout="fit_data_stretch",
                                sizing_mode="stretch_width", css_classes=["bnx-strategy"],
                                formatters={"variables": {"type": "textarea"}},
                                widths={"variables": "45%"},
                                stylesheets=[":host { max-width: 100%; }"],
                                height=min(40 + 30 * len(table), 420) + 20 * (len(table) // 2))


def subspace_picture(kind, name, n, use_order, cs, strategy, seed, i):
    """Sub-space ``i`` (from 0) and the model found so far, on the fixed layout."""
    inc = incremental(kind, name, n, use_order, cs, strategy, seed)
    pos = layout(kind, name, n, use_order)
    sub = inc.subspaces[i]
    title = (f"Sub-space {i + 1} of {len(inc.subspaces)} ({inc.kinds[i]}, {len(sub)} variables, "
             f"q = {int(inc.subspace_q[i])})")
    return subspace_plot(inc.model_at(i), sub, layout=pos, clusters=inc.clusters, title=title,
                         width=1000, height=520, responsive=True)


@guarded
def subspace_view(kind, name, n, use_order, cs, strategy, seed, k):
    """Sub-space ``k`` (numbered from 1, as on the player) and the model found so far."""
    inc = incremental(kind, name, n, use_order, cs, strategy, seed)
    i = max(0, min(int(k) - 1, len(inc.subspaces) - 1))
    sub = inc.subspaces[i]
    caption = pn.pane.Markdown(f"**Sub-space {i + 1} of {len(inc.subspaces)}** ({inc.kinds[i]}): "
                               f"{md_join(sub)}", css_classes=["bnx-subspace"], margin=(0, 10))
    # the player's steps update the shown caption and picture in place
    return shared_layout(pn.Column, lambda: caption,
                         lambda: shared_dag_pane(subspace_picture, kind, name, n, use_order, cs,
                                                 strategy, seed, i),
                         sizing_mode="stretch_width")


def timeline_picture(kind, name, n, use_order, cs, strategy, seed, cumulative):
    """Improving models per step (or their running total), greedy beside incremental."""
    g = greedy(kind, name, n, use_order)
    inc = incremental(kind, name, n, use_order, cs, strategy, seed)
    traces = {"greedy": g.q_trace, "incremental": inc.q_trace}   # settings: in the summary
    starts = inc.steps.groupby("subspace").size().cumsum().tolist()[:-1] if len(inc.steps) else []
    norm = max(len(g.q_trace), 1)
    title = ("q along the time line (running total)" if cumulative
             else "Improving models per step")
    return q_timeline_plot(traces, cumulative=cumulative, normalize_by=norm, boundaries=starts,
                           title=title, height=380, responsive=True)


@guarded
def timeline_view(kind, name, n, use_order, cs, strategy, seed):
    args = (kind, name, n, use_order, cs, strategy, seed)
    # side by side on a wide window, one below the other on a narrow one
    def picture(cumulative: bool):
        return lambda: shared_pane(timeline_picture, *args, cumulative,
                                   sizing_mode="stretch_width", height=390,
                                   styles={"flex": "1 1 420px"})

    return shared_layout(pn.FlexBox, picture(False), picture(True), sizing_mode="stretch_width")


def _md(text: str, **kw) -> pn.pane.Markdown:
    return pn.pane.Markdown(text, margin=kw.pop("margin", (0, 10)), **kw)


# --------------------------------------------------------------------------- page
def create_app() -> pn.template.FastListTemplate:
    """Build the page (one per session)."""
    src = DataSource(default_network="alarm", default_kind=NETWORK, default_n=2000)
    src.network.options = list(src.network.options) + [HONEYCOMB]
    use_order = pn.widgets.Checkbox(name="Use the true topological order (network samples)", value=True)
    cs = pn.widgets.IntSlider(name="Cluster size", start=1, end=10, value=4)
    strategy = pn.widgets.RadioButtonGroup(name="Strategy", options=[HIERARCHY, RANDOM], value=HIERARCHY,
                                           button_type="primary", button_style="outline")
    seed = pn.widgets.IntSlider(name="Random grouping seed", start=0, end=9, value=0, visible=False)
    strategy.param.watch(lambda e: setattr(seed, "visible", e.new == RANDOM), "value")
    player = pn.widgets.Player(name="Sub-space", start=1, end=2, value=1, loop_policy="once",
                               interval=1500, show_value=True, sizing_mode="stretch_width")

    def args():
        kind = src.kind.value
        name = src.network.value if kind == NETWORK else src.dataset.value
        n = int(src.sample_size.value) if kind == NETWORK else 0
        return kind, name, n, bool(use_order.value), int(cs.value), strategy.value, int(seed.value)

    def set_player(inc):
        end = max(len(inc.subspaces), 2)
        player.end = end
        player.value = min(player.value, end)

    # the incremental search runs in a worker thread, not on the server's event loop
    sync_player = background(lambda: incremental(*args()), set_player)

    for w in (src.kind, src.dataset, src.network, src.sample_size, use_order, cs, strategy, seed):
        w.param.watch(sync_player, "value")
    sync_player()

    def view(func, *extra):
        return reactive(src.bind(func, use_order=use_order, cs=cs, strategy=strategy, seed=seed,
                                 **({"k": extra[0]} if extra else {})))

    main = [pn.Column(
        _md(LESSON, css_classes=["bnx-lesson"]),
        view(summary_view),
        pn.pane.Markdown("### Which variables belong together", margin=(10, 10, 0, 10)),
        _md("Leaves are variables; two branches join at the smallest Cramér's V between "
            "their variables, so low joins mean strong association. Cutting the tree into "
            "groups of at most *cluster size* variables gives the coloured clusters (grey: "
            "not in a cluster of the strategy); hover a leaf or a branch for details."),
        view(dendrogram_view),
        pn.pane.Markdown("### Incremental strategy (order of the sub-spaces)", margin=(10, 10, 0, 10)),
        _md("Each cluster is searched on its own first, then together with the clusters "
            "found before; the last column is the q spent inside that sub-space."),
        view(strategy_view),
        pn.pane.Markdown("### Incremental search, one sub-space at a time (Figure 6)",
                         margin=(10, 10, 0, 10)),
        _md("Press play or step through the sub-spaces: the arcs are the network found so "
            "far, the red dashed outline the variables searched now, colours the clusters."),
        player,
        view(subspace_view, player),
        pn.pane.Markdown("### q along the time line (Figures 4, 7, 8)", margin=(10, 10, 0, 10)),
        _md("Left: improving models met at each step; right: their running total. Time is "
            "in units of the greedy search's length; grey lines mark a new sub-space. The "
            "incremental search stays low because each sub-space is small."),
        view(timeline_view),
        sizing_mode="stretch_width")]
    sidebar = [pn.pane.Markdown("### Data"), src.panel(), use_order,
               pn.pane.Markdown("### Sub-spaces"), cs, pn.pane.Markdown("Strategy", margin=(0, 10)),
               strategy, seed]
    return make_template(TITLE, main=main, sidebar=sidebar, description=DESCRIPTION)


if __name__.startswith("bokeh"):
    serve(create_app)
