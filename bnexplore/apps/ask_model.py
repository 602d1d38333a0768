"""Ask the averaged model: set evidence, watch every node's posterior under the single
best network (GTT) and under the model average, with the spread over structures.

The model average of a query ``q`` given evidence ``e`` is
``sum_G P(G | D) P(q, e | G, D) / sum_G P(G | D) P(e | G, D)`` (not the mean of the
structures' conditionals): :func:`bnexplore.averaging.ask_averaged_model` learns it once
per setting (cached for every session); each move of the evidence is one exact
inference per network (:meth:`~bnexplore.averaging.AveragedModel.posteriors`).
"""
from __future__ import annotations

import pandas as pd
import panel as pn
import param

from ._base import NETWORK, App, guarded
from ._cache import cached
from .data import Data
from .text import md_strong, md_text

#: what a node's select shows when the node is not observed.
NOT_OBSERVED = "(not observed)"
#: what the network picture says a click does.
CLICK_TEXT = ("### Click a node to observe its next state\n\nEach click observes the node's "
              "next state; after its last state the node is not observed again. Observed "
              "nodes are red; hover a node for its posterior under GTT and BMA.")
#: the averages offered: method -> what the sidebar says.
METHODS = {"order": "one order (M*, exact)", "mcmc": "order MCMC (sampled DAGs)"}


@cached(max_items=16)
def averaged_model(data: Data, max_parents: int, method: str, random_state: int):
    """The single best network and the model average of ``data`` (all its columns)."""
    import warnings

    import bnexplore as bx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # rows with missing values dropped: said in the page
        return bx.averaging.ask_averaged_model(data.frame, max_parents=int(max_parents),
                                               method=method, random_state=int(random_state))


def evidence_key(evidence: dict) -> tuple:
    """The evidence as a hashable, order-free key (observed nodes only)."""
    return tuple(sorted((str(k), str(v)) for k, v in evidence.items() if v is not None))


@cached(max_items=256, disk=False)
def posterior_table(data: Data, max_parents: int, method: str, random_state: int,
                    evidence: tuple) -> pd.DataFrame:
    """:meth:`AveragedModel.posteriors` of the setting given ``evidence`` (a key)."""
    model = averaged_model(data, max_parents, method, random_state)
    return model.posteriors(dict(evidence))


class AskModel(App):
    """Set evidence and compare the posteriors of the single best network and the average.

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table, or a bundled data set or network (default: 1,000 samples of ASIA).
    max_parents : int
        Largest parent set, of GTT and of the averaged DAGs.
    method : {"order", "mcmc"}
        Average over the DAGs of GTT's order (exact, M*) or over DAGs sampled by order MCMC.
    evidence : dict
        ``{node: state}`` of the observed nodes (states as text).

    Examples
    --------
    >>> import bnexplore as bx
    >>> app = bx.apps.AskModel("asia", max_parents=1)
    >>> app.set_evidence("smoke", "yes")
    >>> app.evidence
    {'smoke': 'yes'}
    """

    title = "Ask the averaged model"
    description = ("Set evidence and watch every node's posterior under the single best network "
                   "(GTT) and under the model average, with the spread over structures.")
    default_source = NETWORK
    default_network = "asia"
    controls = ("max_parents", "method")
    widget_types = {"method": pn.widgets.RadioButtonGroup}
    warm_settings = ({"max_parents": 1},)

    max_parents = param.Integer(default=2, bounds=(1, 4), label="Max parents",
                                doc="Largest parent set of GTT and of the averaged DAGs.")
    method = param.Selector(default="order", objects=list(METHODS),
                            doc="Average over one order (exact) or over order MCMC's DAGs.")
    random_state = param.Integer(default=0, bounds=(0, None), precedence=-1,
                                 doc="Seed of the sampled structures.")
    evidence = param.Dict(default={}, doc="The observed nodes: {node: state}.")

    def __init__(self, data=None, target=None, **params):
        self._selects: dict[str, pn.widgets.Select] = {}
        self._syncing = False
        super().__init__(data, target=target, **params)
        self.param.watch(self._sync_selects, "evidence")

    def dependent(self, data: Data) -> dict:
        return {"evidence": {}}

    # ------------------------------------------------------------------ evidence
    def _model(self):
        return averaged_model(self.data, self.max_parents, self.method, self.random_state)

    def states(self) -> dict[str, list[str]]:
        """Every node's states (as text), in the data's order."""
        frame = self.data.frame
        return {c: [str(s) for s in (frame[c].cat.categories if hasattr(frame[c], "cat")
                                     else sorted(frame[c].dropna().unique(), key=str))]
                for c in frame.columns}

    def set_evidence(self, node: str, state: str | None) -> None:
        """Observe ``node`` in ``state`` (``None``: clear it)."""
        states = self.states()
        if node not in states:
            raise ValueError(f"unknown node {node!r}; nodes are {list(states)}")
        ev = dict(self.evidence)
        if state is None or state == NOT_OBSERVED:
            ev.pop(node, None)
        else:
            if str(state) not in states[node]:
                raise ValueError(f"node {node!r} has no state {state!r}; its states are "
                                 f"{states[node]}")
            ev[node] = str(state)
        self.evidence = ev

    def click_node(self, node: str) -> None:
        """What a click on ``node`` in the network picture does: observe its next state
        (not observed, then each state in turn, then not observed again)."""
        states = self.states()
        if node not in states:
            raise ValueError(f"unknown node {node!r}; nodes are {list(states)}")
        cycle = [None, *states[node]]
        now = self.evidence.get(node)
        self.set_evidence(node, cycle[(cycle.index(now) + 1) % len(cycle)]
                          if now in cycle else None)

    def clear_evidence(self, *_) -> None:
        """Observe nothing."""
        self.evidence = {}

    def table(self) -> pd.DataFrame:
        """The posteriors shown (:meth:`AveragedModel.posteriors` given the evidence)."""
        return posterior_table(self.data, self.max_parents, self.method, self.random_state,
                               evidence_key(self.evidence))

    def results(self) -> list:
        return [self.table()]

    def _sync_selects(self, event) -> None:
        self._syncing = True
        try:
            for node, sel in self._selects.items():
                sel.value = event.new.get(node, NOT_OBSERVED)
        finally:
            self._syncing = False

    def url_parameters(self) -> list[str]:
        return [*super().url_parameters(), "evidence"]

    # ------------------------------------------------------------------ views
    def views(self) -> list:
        return [self.summary_view, self.network_view, self.evidence_view, self.posterior_view,
                self.table_view]

    @param.depends("data", "max_parents", "method", "evidence")
    @guarded
    def summary_view(self):
        model = self._model()
        d = self.data
        ev = ", ".join(f"{md_strong(k)} = {md_text(v)}" for k, v in self.evidence.items())
        conv = ("" if model.converged is None else
                " · the chains " + ("converged (every arc's R-hat < 1.05)" if model.converged
                                    else "**did not converge** (some arc's R-hat >= 1.05)"))
        n_drop = int(d.frame.isna().any(axis=1).sum())
        text = (f"**Single best network**: greedy thick-thin (GTT), max parents "
                f"{self.max_parents}, {model.best.dag.number_of_edges()} arcs · **Model average**: "
                f"{md_text(METHODS[self.method])}, {len(model.models)} distinct structures "
                f"give the spread{conv}.\n\n"
                f"**Prior**: {md_text(model.graph_prior)}.\n\n"
                f"**Evidence**: <span class='bnx-evidence-text'>"
                f"{ev or 'none (the prior marginals given the data)'}</span>"
                + (f"\n\n*Note*: {n_drop} rows with missing values left out." if n_drop else ""))
        return pn.pane.Markdown(text, css_classes=["bnx-ask-summary"], margin=(0, 10),
                                sizing_mode="stretch_width")

    def network_plot(self):
        """The single best network (GTT) with the observed nodes highlighted and named
        ``node = state``; the hover shows each node's posterior under GTT and BMA."""
        import networkx as nx

        from bnexplore.viz import dag_plot

        dag = nx.DiGraph(self._model().best.dag)
        for v, g in self.table().groupby("node", sort=False):
            for col, name in (("best", "GTT"), ("averaged", "BMA")):
                dag.nodes[v][f"P ({name})"] = ", ".join(
                    f"{s} {p:.3f}" for s, p in zip(g["state"], g[col]))
        ev = {k: v for k, v in self.evidence.items() if k in dag}
        return dag_plot(dag, states=self.states(), highlight=list(ev),
                        names={k: f"{k} = {v}" for k, v in ev.items()},
                        title="Single best network (GTT)",
                        width=self.dag_width(900), height=360, responsive=True,
                        presentation=self.presentation)

    def node_at(self, plot, x: float | None, y: float | None) -> str | None:
        """The node whose box in ``plot`` (a :meth:`network_plot`) holds point (x, y)."""
        from bnexplore.viz.graphs import node_boxes

        if x is None or y is None:
            return None
        b = node_boxes(plot)
        hit = b[(b.x0 <= x) & (x <= b.x1) & (b.y0 <= y) & (y <= b.y1)]
        if hit.empty:
            return None
        names = {self._shown_name(n): n for n in self.states()}
        return names.get(hit["name"].iloc[0])

    def _shown_name(self, node: str) -> str:
        return f"{node} = {self.evidence[node]}" if node in self.evidence else node

    @param.depends("data", "max_parents", "method", "evidence", "presentation")
    @guarded
    def network_view(self):
        """The network picture; a click (HoloViews' ``Tap`` stream on the node boxes)
        cycles the clicked node's evidence."""
        import holoviews as hv

        plot = self.network_plot()
        boxes = next(iter(plot.traverse(lambda e: e, [hv.Rectangles])))
        tap = hv.streams.Tap(source=boxes, transient=True)

        def _on_tap(x=None, y=None):
            node = self.node_at(plot, x, y)
            if node is not None:
                self.click_node(node)
        tap.add_subscriber(_on_tap)
        return pn.Column(pn.pane.Markdown(CLICK_TEXT, margin=(10, 10, 0, 10)),
                         pn.pane.HoloViews(plot, sizing_mode="stretch_width",
                                           css_classes=["bnx-ask-network"]),
                         sizing_mode="stretch_width")

    @param.depends("data")
    @guarded
    def evidence_view(self):
        self._selects = {}
        widgets = []
        for node, states in self.states().items():
            sel = pn.widgets.Select(label=node, options=[NOT_OBSERVED, *states],
                                    value=self.evidence.get(node, NOT_OBSERVED), width=190,
                                    css_classes=["bnx-evidence"], margin=(2, 8))

            def _on(event, node=node):
                if not self._syncing:
                    self.set_evidence(node, event.new)
            sel.param.watch(_on, "value")
            self._selects[node] = sel
            widgets.append(sel)
        clear = pn.widgets.Button(label="Clear evidence", color="primary", width=160,
                                  css_classes=["bnx-clear-evidence"], margin=(8, 10))
        clear.on_click(self.clear_evidence)
        return pn.Column(pn.pane.Markdown("### Evidence: click a node above, or choose its observed state",
                                          margin=(10, 10, 0, 10)),
                         pn.FlexBox(*widgets), clear, sizing_mode="stretch_width")

    @param.depends("data", "max_parents", "method", "evidence", "presentation")
    @guarded
    def posterior_view(self):
        from bnexplore.viz import posterior_plot

        plot = posterior_plot(self.table(), title="Posterior marginals given the evidence",
                              width=900, presentation=self.presentation)
        return pn.pane.HoloViews(plot.opts(responsive=True, min_width=300, max_width=1100,
                                           backend="bokeh"),
                                 sizing_mode="stretch_width", css_classes=["bnx-posteriors"])

    @param.depends("data", "max_parents", "method", "evidence")
    @guarded
    def table_view(self):
        t = self.table()[["node", "state", "best", "averaged", "sd", "low", "high",
                          "mean_of_conditionals", "observed"]]
        t = t.rename(columns={"best": "GTT", "averaged": "BMA", "low": "low (5%)",
                              "high": "high (95%)", "mean_of_conditionals": "mean of conditionals"})
        return pn.Column(pn.pane.Markdown("### Posteriors (table)", margin=(10, 10, 0, 10)),
                         # every state of a network up to 60 rows on one page (a lecture
                         # reads the whole table without paging)
                         self.csv_table(t.round(4), "posteriors", page_size=max(1, min(len(t), 60))),
                         sizing_mode="stretch_width")
