"""Learn a structure: greedy thick-thin search, its DAG and every accepted step."""
from __future__ import annotations

import panel as pn
import param

from bnexplore.experiments.compare import PARAM_RANGES

from ._base import App, guarded
from ._cache import cached
from .data import Data


@cached(max_items=64)
def learn(data: Data, score: str, ess: float, max_parents: int):
    """Greedy thick-thin search over all columns: ``(result, states)``."""
    import bnexplore as bx

    df = data.frame
    res = bx.search.greedy_thick_thin(df, prior=score, ess=float(ess), order=None,
                                      max_parents=int(max_parents))
    states = {c: [str(s) for s in df[c].cat.categories] if hasattr(df[c], "cat")
              else sorted(map(str, df[c].unique())) for c in df.columns}
    return res, states


def steps_table(data: Data, score: str, ess: float, max_parents: int):
    """The accepted steps of the search (a table)."""
    res, _ = learn(data, score, ess, max_parents)
    steps = res.steps.copy()
    if "edge" in steps:
        steps["edge"] = [f"{e[0]} \u2192 {e[1]}" if isinstance(e, tuple) and len(e) == 2
                         else str(e) for e in steps["edge"]]
    cols = [c for c in ("step", "phase", "op", "edge", "delta", "score", "n_candidates",
                        "n_improving") if c in steps]
    steps = steps[cols] if cols else steps
    return steps.round({"delta": 2, "score": 2}).rename(
        columns={"n_candidates": "candidates", "n_improving": "improving"})


class LearnStructure(App):
    """Greedy thick-thin search with a K2 or BDeu score: the DAG and every accepted step.

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table, or a bundled data set or network (default ``"vote"``).
    score : {"K2", "BDeu"}
        The structure score.
    ess : float
        Equivalent sample size of BDeu (K2 has none).
    max_parents : int
        Most parents of a node.

    Examples
    --------
    >>> import bnexplore as bx
    >>> app = bx.apps.LearnStructure("asia", max_parents=2)
    >>> app.source, app.data.label
    ('network sample', 'asia, 1000 samples')
    """

    title = "Learn a structure"
    description = ("Greedy thick-thin search with a K2 or BDeu score on bundled data, network "
                   "samples or your data. See the learned DAG, its score and every accepted step.")
    controls = ("score", "ess", "max_parents")
    widget_types = {"score": pn.widgets.RadioButtonGroup}
    warm_settings = ({"score": "K2"}, {"score": "BDeu"})

    score = param.Selector(default="K2", objects=["K2", "BDeu"], doc="The structure score.")
    ess = param.Number(default=1.0, bounds=(0.5, 50.0), step=0.5,
                       label="Equivalent sample size (BDeu)")
    max_parents = param.Integer(default=3, bounds=PARAM_RANGES["k"], label="Max parents")

    def _ess(self) -> float:
        return float(self.ess) if self.score == "BDeu" else 1.0   # K2 ignores it

    def results(self) -> list:
        return [learn(self.data, self.score, self._ess(), self.max_parents)]

    def widget(self, name: str) -> pn.widgets.Widget:
        w = super().widget(name)
        if name == "ess":
            w.visible = self.param.score.rx() == "BDeu"
        return w

    def views(self) -> list:
        return [self.summary_view, self.graph_view, self.steps_view]

    @param.depends("data", "score", "ess", "max_parents")
    @guarded
    def summary_view(self):
        res, _ = learn(self.data, self.score, self._ess(), self.max_parents)
        text = (f"**log score ({self.score})**: <span class='bnx-score'>{res.score:.3f}</span>"
                f" · **{res.dag.number_of_edges()} arcs** over {res.dag.number_of_nodes()} "
                f"variables · {len(res.steps)} accepted steps")
        return pn.pane.Markdown(text, css_classes=["bnx-summary"], margin=(0, 10))

    @param.depends("data", "score", "ess", "max_parents")
    @guarded
    def graph_view(self):
        from bnexplore.viz import dag_plot

        res, states = learn(self.data, self.score, self._ess(), self.max_parents)
        target = self.data.target
        return pn.pane.HoloViews(dag_plot(
            res.dag, states=states, highlight=[target] if target in res.dag else None,
            class_node=target, title=f"GTT structure, at most {self.max_parents} parents",
            width=1000, height=520, responsive=True), sizing_mode="stretch_width")

    @param.depends("data", "score", "ess", "max_parents")
    @guarded
    def steps_view(self):
        steps = steps_table(self.data, self.score, self._ess(), self.max_parents)
        return pn.Column(pn.pane.Markdown("### Accepted steps", margin=(10, 10, 0, 10)),
                         self.csv_table(steps, "steps"), sizing_mode="stretch_width")
