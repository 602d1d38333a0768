"""Clustering hierarchy: incremental search over sub-spaces (Castelo & Siebes).

Cluster the variables by Cramer's V, flatten the hierarchy into sub-spaces of at most
``cluster_size`` variables (Figure 1) and step through the incremental search; compare
its cost q (improving models looked at) with plain greedy search. K2 score.
"""
from __future__ import annotations

import functools

import panel as pn
import param

from ._base import NETWORK, PROJECTOR_MAIN_PX, App, guarded
from ._cache import cached
from .data import Data, network_names
from .text import md_join, md_strong

HONEYCOMB = "honeycomb (48 nodes)"
HIERARCHY, RANDOM = "hierarchy", "random groups"

#: what the page teaches, shown above the pictures.
LESSON = ("Greedy search scores every possible arc change at every step; its cost is **q**, "
          "the number of improving models it has to look at. Castelo & Siebes first cluster "
          "strongly associated variables (Cramér's V) and search one small sub-space at a "
          "time: the same kind of network is found for a fraction of q.")
TREE_TEXT = ("Leaves are variables; two branches join at the smallest Cramér's V between their "
             "variables, so low joins mean strong association. Cutting the tree into groups of "
             "at most *cluster size* variables gives the coloured clusters (grey: not in a "
             "cluster of the strategy); hover a leaf or a branch for details.")
STRATEGY_TEXT = ("Each cluster is searched on its own first, then together with the clusters "
                 "found before; the last column is the q spent inside that sub-space.")
PLAYER_TEXT = ("Press play or step through the sub-spaces: the arcs are the network found so "
               "far, the red dashed outline the variables searched now, colours the clusters.")
TIMELINE_TEXT = ("Left: improving models met at each step; right: their running total. Time is "
                 "in units of the greedy search's length; grey lines mark a new sub-space. The "
                 "incremental search stays low because each sub-space is small.")


@functools.lru_cache(maxsize=8)
def honeycomb_data(n: int) -> Data:
    """``n`` rows of the honeycomb network (Castelo & Siebes' test domain)."""
    from bnexplore.clustering import honeycomb_network

    bn, _ = honeycomb_network(random_state=0)
    df = bn.sample(int(n), random_state=0)
    return Data(df, str(df.columns[-1]), f"{HONEYCOMB}, {int(n)} samples",
                key=f"network:{HONEYCOMB}:{int(n)}:0", bundled=True)


@functools.lru_cache(maxsize=16)
def _truth(key: str):
    """(true DAG, cells) of a network's samples; (None, None) for other data."""
    import bnexplore as bx

    parts = key.split("|")[0].split(":")
    if parts[0] != "network":
        return None, None
    if parts[1] == HONEYCOMB:
        from bnexplore.clustering import honeycomb_network

        bn, cells = honeycomb_network(random_state=0)
        return bn.dag, cells
    return bx.networks.load(parts[1]).dag, None


def true_order(data: Data, use_order: bool) -> list | None:
    """The true topological order of a network's samples (when asked for), else None."""
    import networkx as nx

    dag = _truth(data.key)[0]
    return list(nx.topological_sort(dag)) if use_order and dag is not None else None


@cached(max_items=16, disk=False)       # a score cache: memory only
def scorer(data: Data):
    from bnexplore.scores import LocalScore

    return LocalScore(data.frame, prior="K2")


@cached(max_items=16)
def tree(data: Data):
    from bnexplore.clustering import hierarchy

    return hierarchy(scorer(data).data)


@cached(max_items=16)
def greedy(data: Data, use_order: bool):
    from bnexplore.clustering import greedy_search

    return greedy_search(score=scorer(data), order=true_order(data, use_order))


@cached(max_items=64)
def incremental(data: Data, use_order: bool, cluster_size: int, strategy: str,
                random_state: int):
    """The incremental search over the hierarchy's clusters (or random groups)."""
    from bnexplore.clustering import incremental_search, incremental_strategy

    clusters = (incremental_strategy(tree(data), int(cluster_size)) if strategy == HIERARCHY
                else None)
    return incremental_search(score=scorer(data), cluster_size=int(cluster_size),
                              strategy="random", random_state=int(random_state),
                              clusters=clusters, order=true_order(data, use_order))


@cached(max_items=16)
def layout(data: Data, use_order: bool, width: int = PROJECTOR_MAIN_PX,
           presentation: bool = False) -> tuple[dict, int | None]:
    """Node positions of the sub-space pictures (the honeycomb's cells, else the
    greedy network's layers fitted to ``width``) and the label length they need
    (:func:`bnexplore.viz.graphs.fitted_layout`)."""
    from bnexplore.viz.clustering import honeycomb_layout
    from bnexplore.viz.graphs import fitted_layout

    cells = _truth(data.key)[1]
    if cells is not None:
        return honeycomb_layout(cells), None
    return fitted_layout(greedy(data, use_order).dag, width=int(width),
                         presentation=bool(presentation))


def strategy_table(data: Data, use_order: bool, cluster_size: int, strategy: str,
                   random_state: int):
    """The clusters of a setting, their variables and the q spent in each."""
    from bnexplore.viz.clustering import strategy_frame

    inc = incremental(data, use_order, cluster_size, strategy, random_state)
    table = strategy_frame(inc.clusters, _truth(data.key)[1])
    table["q in own sub-space"] = [int(inc.subspace_q[i]) for i, k in enumerate(inc.kinds)
                                   if k == "cluster"]
    if "share in main group" in table:
        table["share in main group"] = table["share in main group"].round(2)
    return table


SEARCH = ("data", "use_order", "cluster_size", "strategy", "random_state")


class Clustering(App):
    """Cramer's V hierarchy of the variables, the incremental strategy it gives, and a
    player through the incremental search; q against greedy search.

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table, or a bundled data set or network (default: 2000 samples of
        ``"alarm"``; ``"honeycomb (48 nodes)"`` is the paper's test domain).
    use_order : bool
        Search consistent with the network's true topological order (network samples).
    cluster_size : int
        Most variables in a cluster.
    strategy : {"hierarchy", "random groups"}
        Clusters cut from the hierarchy, or random groups of the same size.
    random_state : int
        The random groups.
    subspace : int
        The sub-space shown (from 1; the player).

    Examples
    --------
    >>> import bnexplore as bx
    >>> app = bx.apps.Clustering("asia", sample_size=500, cluster_size=3)
    >>> app.data.label, app.use_order
    ('asia, 500 samples', True)
    """

    title = "Clustering hierarchy"
    description = ("Cramer's V hierarchy of the variables, the incremental strategy it gives for "
                   "a cluster size, and a player through the incremental search; q against "
                   "greedy, on network samples, data sets or your data.")
    default_source = NETWORK
    default_network = "alarm"
    controls = ("use_order", "cluster_size", "strategy", "random_state")
    widget_types = {"strategy": pn.widgets.RadioButtonGroup}
    warm_settings = ({"cluster_size": 3},)
    cached_views = ("summary_view", "dendrogram_view", "strategy_view", "subspace_view",
                    "timeline_view")

    network = param.Selector(default="alarm", objects=[*network_names(), HONEYCOMB])
    sample_size = param.Selector(default=2000, objects=[100, 200, 500, 1000, 2000, 5000, 10000],
                                 doc="Rows sampled from the network.")
    use_order = param.Boolean(default=True,
                              label="Use the true topological order (network samples)")
    cluster_size = param.Integer(default=4, bounds=(1, 10), label="Cluster size")
    strategy = param.Selector(default=HIERARCHY, objects=[HIERARCHY, RANDOM], label="Strategy")
    random_state = param.Integer(default=0, bounds=(0, 9), label="Random grouping seed")
    subspace = param.Integer(default=1, bounds=(1, 1000), label="Sub-space",
                             doc="The sub-space shown (from 1).")
    n_subspaces = param.Integer(default=2, precedence=-1,
                                doc="How many sub-spaces the current search has.")

    def _bundled(self) -> Data:
        if self.source == NETWORK and self.network == HONEYCOMB:
            return honeycomb_data(int(self.sample_size))
        return super()._bundled()

    def url_parameters(self) -> list[str]:
        return [*super().url_parameters(), "subspace"]

    def widget(self, name: str) -> pn.widgets.Widget:
        w = super().widget(name)
        if name == "random_state":
            w.visible = self.param.strategy.rx() == RANDOM
        return w

    def player(self) -> pn.widgets.Player:
        """The player through the sub-spaces (its end follows the search)."""
        player = pn.widgets.Player.from_param(
            self.param.subspace, start=1, end=max(self.n_subspaces, 2), loop_policy="once",
            interval=1500, show_value=True, sizing_mode="stretch_width")
        self.param.watch(lambda e: setattr(player, "end", max(e.new, 2)), "n_subspaces")
        return player

    def _inc(self):
        inc = incremental(self.data, self.use_order, self.cluster_size, self.strategy,
                          self.random_state)
        n = len(inc.subspaces)
        self.on_loop(lambda: setattr(self, "n_subspaces", n))     # the player's end
        return inc

    def results(self) -> list:
        return [self._inc(), greedy(self.data, self.use_order),
                layout(self.data, self.use_order, self.dag_width(), self.presentation)]

    def views(self) -> list:
        def head(text):
            return pn.pane.Markdown(f"### {text}", margin=(10, 10, 0, 10))

        def say(text):
            return pn.pane.Markdown(text, margin=(0, 10))
        return [pn.pane.Markdown(LESSON, margin=(0, 10), css_classes=["bnx-lesson"]),
                self.summary_view,
                head("Which variables belong together"), say(TREE_TEXT), self.dendrogram_view,
                head("Incremental strategy (order of the sub-spaces)"), say(STRATEGY_TEXT),
                self.strategy_view,
                head("Incremental search, one sub-space at a time (Figure 6)"), say(PLAYER_TEXT),
                self.player(), self.subspace_view,
                head("q along the time line (Figures 4, 7, 8)"), say(TIMELINE_TEXT),
                self.timeline_view]

    @param.depends(*SEARCH)
    @guarded
    def summary_view(self):
        g = greedy(self.data, self.use_order)
        inc = self._inc()
        same = set(inc.dag.edges) == set(g.dag.edges)
        order = "true topological order" if true_order(self.data, self.use_order) else "no order"
        text = (f"{md_strong(self.data.label)} · {order} · **greedy q = {g.q}** "
                f"({len(g.q_trace)} steps) · **incremental q = <span class='bnx-q'>{inc.q}"
                f"</span>** ({len(inc.clusters)} clusters, {len(inc.subspaces)} sub-spaces) · "
                f"greedy needs **{g.q / max(inc.q, 1):.1f}×** as many models · final model "
                f"{'equals' if same else 'differs from'} the greedy one (log score difference "
                f"{inc.score - g.score:+.2f})")
        return pn.pane.Markdown(text, css_classes=["bnx-summary"], margin=(0, 10))

    @param.depends(*SEARCH, "presentation")
    @guarded
    def dendrogram_view(self):
        from bnexplore.viz.clustering import dendrogram_plot

        inc = self._inc()
        what = ("clusters" if self.strategy == HIERARCHY
                else "random groups (they cut across the tree)")
        return pn.pane.HoloViews(self.drawing(lambda: dendrogram_plot(
            tree(self.data), inc.clusters, height=420, responsive=True,
            presentation=self.presentation,
            title=(f"Hierarchy; coloured: {what.split(' (')[0]} of {self.cluster_size}"
                   if self.presentation else    # a projector's width holds a short title
                   f"Complete-linkage hierarchy of the variables; coloured: the {what} for "
                   f"cluster size {self.cluster_size}"))), sizing_mode="stretch_width")

    @param.depends(*SEARCH)
    @guarded
    def strategy_view(self):
        table = strategy_table(self.data, self.use_order, self.cluster_size, self.strategy,
                               self.random_state)
        # long variable lists wrap instead of widening the page
        return self.csv_table(table, "strategy", formatters={"variables": {"type": "textarea"}},
                              widths={"variables": "45%"}, css_classes=["bnx-strategy"],
                              stylesheets=[":host { max-width: 100%; }"])

    @param.depends(*SEARCH, "subspace", "presentation")
    @guarded
    def subspace_view(self):
        """Sub-space ``subspace`` (from 1, as on the player) and the model found so far."""
        from bnexplore.viz.clustering import subspace_plot

        inc = self._inc()
        i = max(0, min(int(self.subspace) - 1, len(inc.subspaces) - 1))
        sub = inc.subspaces[i]
        pos, cut = layout(self.data, self.use_order, self.dag_width(), self.presentation)
        title = (f"Sub-space {i + 1} of {len(inc.subspaces)} ({inc.kinds[i]}, {len(sub)} "
                 f"variables, q = {int(inc.subspace_q[i])})")
        return pn.Column(
            pn.pane.Markdown(f"**Sub-space {i + 1} of {len(inc.subspaces)}** ({inc.kinds[i]}): "
                             f"{md_join(sub)}", css_classes=["bnx-subspace"], margin=(0, 10)),
            self.dag_pane(self.drawing(lambda: subspace_plot(
                inc.model_at(i), sub, layout=pos, max_label=cut, clusters=inc.clusters,
                title=title, width=self.dag_width(), height=520, responsive=True,
                presentation=self.presentation))),
            sizing_mode="stretch_width")

    @param.depends(*SEARCH, "presentation")
    @guarded
    def timeline_view(self):
        from bnexplore.viz.clustering import q_timeline_plot

        g = greedy(self.data, self.use_order)
        inc = self._inc()
        traces = {"greedy": g.q_trace, "incremental": inc.q_trace}
        starts = (inc.steps.groupby("subspace").size().cumsum().tolist()[:-1]
                  if len(inc.steps) else [])
        norm = max(len(g.q_trace), 1)

        def timeline(cumulative: bool):
            title = ("q along the time line (running total)" if cumulative
                     else "Improving models per step")
            return pn.pane.HoloViews(self.drawing(lambda: self.look(q_timeline_plot(
                traces, cumulative=cumulative, normalize_by=norm, boundaries=starts, title=title,
                height=380, responsive=True))), sizing_mode="stretch_width",
                styles={"flex": "1 1 420px"})
        # side by side on a wide window, one below the other on a narrow one
        return pn.FlexBox(timeline(False), timeline(True), sizing_mode="stretch_width")
