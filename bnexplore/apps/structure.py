"""Learn a structure: greedy thick-thin search or hill climbing, its DAG and every
accepted step."""
from __future__ import annotations

import panel as pn
import param

from bnexplore.experiments.compare import PARAM_RANGES

from ._base import App, guarded
from ._cache import cached
from ._compare import PinStructure
from .data import Data
from .text import md_text


#: the searches offered: name -> (function of bnexplore.search, short name).
SEARCHES = {"greedy thick-thin": ("greedy_thick_thin", "GTT"),
            "hill climbing": ("hill_climb", "hill climbing")}


@cached(max_items=64)
def learn(data: Data, score: str, ess: float, max_parents: int,
          search: str = "greedy thick-thin"):
    """``search`` (a key of :data:`SEARCHES`) over all columns: ``(result, states)``."""
    import bnexplore as bx

    df = data.frame
    run = getattr(bx.search, SEARCHES[search][0])
    res = run(df, prior=score, ess=float(ess), order=None, max_parents=int(max_parents))
    states = {c: [str(s) for s in df[c].cat.categories] if hasattr(df[c], "cat")
              else sorted(map(str, df[c].unique())) for c in df.columns}
    return res, states


def steps_table(data: Data, score: str, ess: float, max_parents: int,
                search: str = "greedy thick-thin"):
    """The accepted steps of the search (a table; hill climbing has one phase, not shown)."""
    res, _ = learn(data, score, ess, max_parents, search)
    steps = res.steps.copy()
    if search != "greedy thick-thin":
        steps = steps.drop(columns="phase", errors="ignore")
    if "edge" in steps:
        steps["edge"] = [f"{e[0]} \u2192 {e[1]}" if isinstance(e, tuple) and len(e) == 2
                         else str(e) for e in steps["edge"]]
    cols = [c for c in ("step", "phase", "op", "edge", "delta", "score", "n_candidates",
                        "n_improving") if c in steps]
    steps = steps[cols] if cols else steps
    return steps.round({"delta": 2, "score": 2}).rename(
        columns={"n_candidates": "candidates", "n_improving": "improving"})


class LearnStructure(PinStructure, App):
    """Greedy thick-thin search or hill climbing with a K2 or BDeu score: the DAG and
    every accepted step.

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table, or a bundled data set or network (default ``"vote"``).
    search : {"greedy thick-thin", "hill climbing"}
        Greedy thick-thin (additions, then removals) or hill climbing (the best of every
        addition, removal and reversal at each step).
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
    description = ("Greedy thick-thin search or hill climbing with a K2 or BDeu score on bundled "
                   "data, network samples or your data. See the learned DAG, its score and "
                   "every accepted step.")
    controls = ("search", "score", "ess", "max_parents")
    widget_types = {"score": pn.widgets.RadioButtonGroup, "search": pn.widgets.RadioButtonGroup}
    warm_settings = ({"score": "K2"}, {"score": "BDeu"}, {"search": "hill climbing"})
    # the pinned comparison draws two structures at each move: in a worker
    cached_views = ("summary_view", "graph_view", "steps_view")

    search = param.Selector(default="greedy thick-thin", objects=list(SEARCHES),
                            doc="The search: greedy thick-thin or hill climbing.")
    score = param.Selector(default="K2", objects=["K2", "BDeu"], doc="The structure score.")
    ess = param.Number(default=1.0, bounds=(0.5, 50.0), step=0.5,
                       label="Equivalent sample size (BDeu)")
    max_parents = param.Integer(default=3, bounds=PARAM_RANGES["max_parents"], label="Max parents")
    step = param.Integer(default=None, allow_None=True, bounds=(0, None), precedence=-1,
                         doc="The accepted step drawn (0: the empty network); None: the "
                             "final structure.")
    n_steps = param.Integer(default=None, allow_None=True, precedence=-1,
                            doc="How many steps the current search accepted (None: not "
                                "known yet).")

    def _ess(self) -> float:
        return float(self.ess) if self.score == "BDeu" else 1.0   # K2 ignores it

    def _learn(self):
        out = learn(self.data, self.score, self._ess(), self.max_parents, self.search)
        n = len(out[0].step_rows)
        self.on_loop(lambda: setattr(self, "n_steps", n))         # the player's end
        return out

    @param.depends("data", "search", "score", "ess", "max_parents", watch=True)
    def _to_final(self):
        self.step = None           # a new search is shown at its final structure

    def results(self) -> list:
        return [self._learn()]

    def widget(self, name: str) -> pn.widgets.Widget:
        w = super().widget(name)
        if name == "ess":
            w.visible = self.param.score.rx() == "BDeu"
        return w

    def views(self) -> list:
        return [self.summary_view, self.step_player(), self.graph_view, self.compare_view,
                self.steps_view]

    def step_player(self) -> pn.widgets.Player:
        """The player through the accepted steps (its end follows the search): play,
        pause or step through every accepted move; it starts (and ends) at the final
        structure. It shows once the search's length is known."""
        def make():
            n = self.n_steps
            player = pn.widgets.Player(
                label="Accepted step", start=0, end=max(n or 0, 1), value=n or 0,
                interval=900, loop_policy="once", show_loop_controls=False,
                css_classes=["bnx-step-player"], width=420, visible=n is not None)
            player.param.watch(lambda e: setattr(
                self, "step", None if e.new >= player.end else e.new), "value")
            self.param.watch(lambda e: player.param.update(
                end=max(e.new, 1), value=e.new if self.step is None else min(self.step, e.new),
                visible=True), "n_steps")
            self.param.watch(lambda e: e.new is None and setattr(player, "value", player.end),
                             "step")
            return player
        return self.kept("step_player", make)

    def current_structure(self):
        res, _ = self._learn()
        ess = f", ess {self._ess():g}" if self.score == "BDeu" else ""
        return (f"{SEARCHES[self.search][1]}, {self.score}{ess}, max parents {self.max_parents}",
                res.dag)

    def step_caption(self, step: int) -> str:
        """What accepted step ``step`` did (0: the empty start network), as Markdown (the
        column names as text)."""
        res, _ = self._learn()
        n = len(res.step_rows)
        if step == 0:
            return f"Step 0 of {n}: the empty network"
        row = res.step_rows[step - 1]
        u, v = row["edge"]
        verb = {"add": "added", "remove": "removed", "reverse": "reversed"}.get(row["op"], row["op"])
        phase = (f" ({row['phase']})" if self.search == "greedy thick-thin" and row.get("phase")
                 else "")
        now = f" to {md_text(v)} \u2192 {md_text(u)}" if row["op"] == "reverse" else ""
        return (f"Step {step} of {n}{phase}: {verb} {md_text(u)} \u2192 {md_text(v)}{now}, score change "
                f"{row['delta']:+.2f}, score {row['score']:.2f}"
                + (" · the final structure" if step == n else ""))

    @param.depends("data", "search", "score", "ess", "max_parents")
    @guarded
    def summary_view(self):
        res, _ = self._learn()
        text = (f"**{md_text(self.search)}** · **log score ({self.score})**: "
                f"<span class='bnx-score'>{res.score:.3f}</span>"
                f" · **{res.dag.number_of_edges()} arcs** over {res.dag.number_of_nodes()} "
                f"variables · {len(res.steps)} accepted steps")
        return pn.pane.Markdown(text, css_classes=["bnx-summary"], margin=(0, 10))

    def step_plot(self, step: int):
        """The network after accepted step ``step`` (the final one: the learned DAG)."""
        from bnexplore.viz import dag_plot

        res, states = self._learn()
        target = self.data.target
        n = len(res.step_rows)
        step = min(max(int(step), 0), n)
        what = (f"{SEARCHES[self.search][1]} structure" if step == n
                else f"after step {step} of {n}")
        return dag_plot(res.dag_at(step), states=states,
                        highlight=[target] if target in res.dag else None, class_node=target,
                        title=f"{what}, at most {self.max_parents} parents",
                        width=self.dag_width(), height=520, responsive=True,
                        presentation=self.presentation)

    @param.depends("data", "search", "score", "ess", "max_parents", "step", "presentation")
    @guarded
    def graph_view(self):
        """The network after the player's step (at its end, the learned structure) and
        what that step did."""
        res, _ = self._learn()
        n = len(res.step_rows)
        k = n if self.step is None else min(self.step, n)
        return pn.Column(pn.pane.Markdown(self.step_caption(k), css_classes=["bnx-step-caption"],
                                          margin=(0, 10)),
                         self.dag_pane(self.drawing(lambda: self.step_plot(k))),
                         sizing_mode="stretch_width")

    @param.depends("data", "search", "score", "ess", "max_parents", "pinned", "presentation")
    @guarded
    def compare_view(self):
        _, states = self._learn()
        return pn.Column(pn.pane.Markdown("### Compare with another setting",
                                          margin=(10, 10, 0, 10)),
                         self.pin_controls(),
                         self.compare_pane(states=states, width=560, height=460,
                                           responsive=True),
                         sizing_mode="stretch_width")

    @param.depends("data", "search", "score", "ess", "max_parents")
    @guarded
    def steps_view(self):
        steps = steps_table(self.data, self.score, self._ess(), self.max_parents, self.search)
        return pn.Column(pn.pane.Markdown("### Accepted steps", margin=(10, 10, 0, 10)),
                         self.csv_table(steps, "steps"), sizing_mode="stretch_width")
