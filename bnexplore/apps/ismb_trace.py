"""ISMB trace: instance-specific Markov blanket averaging (Visweswaran & Cooper).

Pick a test case: ISMB averages Markov blankets of the class weighted by their posterior
(K2, uniform structure prior over the blankets searched), phase 1 greedily, phase 2
adding the blankets that change the prediction for *this* case most until one changes
it by less than ``epsilon``. NISMB adds models by score alone; ISMB-MS uses the best one.
"""
from __future__ import annotations

import functools

import pandas as pd
import panel as pn
import param

from ._base import DATASET, App, guarded
from ._cache import cached
from .data import Data, dataset_names
from .text import md_text

SYNTHETIC = "synthetic: Z = A or (B and C and D)"
_SYNTHETIC_KEY = "synthetic-ismb"
QUEUE_WIDTHS = [10, 50, 100, 200, 400, 800, 1000, 1600]
EPSILONS = [1.0, 0.1, 0.01, 0.001, 0.0001, 0.00001]

#: what the page teaches, shown above the pictures.
LESSON = ("To predict the class of **one** case x, ISMB averages many Markov blankets of the "
          "class, weighted by their posterior. Phase 1 builds a good blanket greedily; phase 2 "
          "adds the blankets that change the prediction for *this* case most, until a new one "
          "changes it by less than epsilon. NISMB adds models by score alone, ignoring x; "
          "ISMB-MS uses the single best blanket.")
TRACE_TEXT = ("Top: the averaged estimate of the true class after each model; bottom: the log "
              "score of the model just added. Left of the red dashed line is phase 1. ISMB's "
              "estimate settles where the models that matter for this case say; hover a point "
              "for its values.")
BLANKETS_TEXT = ("The class variable in pink, with its parents, children and the children's "
                 "other parents; the weight is the model's share of the posterior within the "
                 "averaged set R.")


@functools.lru_cache(maxsize=1)
def synthetic_data() -> Data:
    """The paper's synthetic domain: 69 training cases (the 3 test cases apart)."""
    from bnexplore.experiments.ismb import synthetic_split

    train, _ = synthetic_split()
    return Data(train, "Z", "synthetic domain (69 training cases, 3 test cases)",
                key=_SYNTHETIC_KEY, bundled=True)


def _test_frame(data: Data) -> pd.DataFrame | None:
    """The held-out cases of the synthetic domain; ``None`` for other data (each case is
    predicted from the others: leave one out)."""
    if not data.key.startswith(_SYNTHETIC_KEY):
        return None
    from bnexplore.experiments.ismb import synthetic_split

    return synthetic_split()[1]


def n_cases(data: Data) -> int:
    test = _test_frame(data)
    return len(test) if test is not None else len(data.frame)


def case(data: Data, index: int) -> pd.Series:
    test = _test_frame(data)
    return (test if test is not None else data.frame).iloc[int(index)]


@cached(max_items=32, disk=False)   # a model with its score cache: memory only
def model_for(data: Data, left_out: int):
    """MBModel on the training rows (all but row ``left_out``; -1: all), phase 1 done."""
    from bnexplore.ismb import MBModel

    train = data.frame
    if left_out >= 0:
        train = train.drop(index=train.index[left_out])
    m = MBModel(train, target=data.target)
    m.phase1()
    return m


@cached(max_items=64)
def run(data: Data, index: int, queue_width: int, epsilon: float):
    """``(case, ISMB result, NISMB result)`` for case ``index``."""
    left = -1 if _test_frame(data) is not None else int(index)
    m = model_for(data, left)
    x = case(data, index).drop(data.target)
    res = m.search(x, queue_width=int(queue_width), epsilon=float(epsilon))
    nis = m.search(x, queue_width=int(queue_width), variant="nismb", n_phase2=res.n_phase2)
    return case(data, index), res, nis


class ISMBTrace(App):
    """Instance-specific Markov blanket averaging, traced for one case.

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table, or a bundled data set or network (default: the paper's synthetic
        domain, ``Z = A or (B and C and D)``, with its 3 test cases; elsewhere each case
        is predicted from the other rows).
    instance : int
        The case predicted (from 0).
    queue_width : int
        Capacity of the phase-2 priority queue.
    epsilon : float
        Phase 2 stops when a new model changes the estimate by less than this.
    n_blankets : int
        The number of highest-scoring blankets drawn.

    Examples
    --------
    >>> import bnexplore as bx
    >>> app = bx.apps.ISMBTrace(queue_width=50)
    >>> app.data.target, app.param.instance.bounds
    ('Z', (0, 2))
    """

    title = "ISMB trace"
    description = ("Instance-specific Markov blanket averaging: the estimate P(class | x, D) as "
                   "models are added (phase 1, then phase 2), ISMB beside NISMB, and the top "
                   "blankets, on bundled data or your own.")
    default_dataset = SYNTHETIC
    controls = ("instance", "queue_width", "epsilon", "n_blankets")
    widget_types = {"queue_width": pn.widgets.DiscreteSlider,
                    "epsilon": pn.widgets.DiscreteSlider}
    warm_settings = ({"queue_width": 50, "instance": 0},)
    cached_views = ("summary_view", "instance_view", "trace_view", "blankets_view")

    dataset = param.Selector(default=SYNTHETIC, objects=[SYNTHETIC, *dataset_names()],
                             label="Data set")
    instance = param.Integer(default=0, bounds=(0, None), label="Test instance",
                             doc="The case predicted (its bounds follow the data).")
    queue_width = param.Selector(default=1000, objects=QUEUE_WIDTHS, label="Queue width")
    epsilon = param.Selector(default=0.001, objects=EPSILONS, label="epsilon")
    n_blankets = param.Integer(default=3, bounds=(1, 9), label="Blankets to draw")

    def _bundled(self) -> Data:
        if self.source == DATASET and self.dataset == SYNTHETIC:
            return synthetic_data()
        return super()._bundled()

    def dependent(self, data: Data) -> dict:
        hi = max(0, n_cases(data) - 1)
        self.param.instance.bounds = (0, hi)
        return {"instance": min(max(int(self.instance), 0), hi)}

    def _run(self):
        return run(self.data, self.instance, self.queue_width, self.epsilon)

    def results(self) -> list:
        return [self._run()]

    def views(self) -> list:
        return [pn.pane.Markdown(LESSON, margin=(0, 10), css_classes=["bnx-lesson"]),
                self.summary_view, self.instance_view,
                pn.pane.Markdown("### Estimate and model score as models are added",
                                 margin=(10, 10, 0, 10)),
                pn.pane.Markdown(TRACE_TEXT, margin=(0, 10)),
                self.trace_view,
                pn.pane.Markdown("### Highest-scoring Markov blankets in R",
                                 margin=(10, 10, 0, 10)),
                pn.pane.Markdown(BLANKETS_TEXT, margin=(0, 10)),
                self.blankets_view]

    @param.depends("data", "instance", "queue_width", "epsilon")
    @guarded
    def summary_view(self):
        x, res, nis = self._run()
        target = self.data.target
        truth = x[target]
        j = list(res.classes).index(truth)
        rows = pd.DataFrame({"method": ["ISMB", "ISMB-MS", "NISMB"],
                             f"P({target} = {truth})": [res.proba[j], res.proba_ms[j],
                                                        nis.proba[j]],
                             "models": [len(res.models), 1, len(nis.models)]})
        txt = (f"<strong>true {md_text(target)} = {md_text(truth)}</strong> · phase 1: "
               f"{res.n_phase1} models, phase 2: {res.n_phase2} models (stopped by "
               f"{md_text(res.stopped_by)}) · {res.elapsed:.2f} s")
        return pn.Column(pn.pane.Markdown(txt, css_classes=["bnx-ismb-summary"], margin=(0, 10)),
                         self.csv_table(rows.round(4), "estimates"),
                         sizing_mode="stretch_width")

    @param.depends("data", "instance")
    @guarded
    def instance_view(self):
        x = case(self.data, self.instance)
        frame = pd.DataFrame({"variable": [str(v) for v in x.index],
                              "value": [str(v) for v in x.to_numpy()]})
        return pn.Column(pn.pane.Markdown(f"### Test instance {self.instance}",
                                          margin=(10, 10, 0, 10)),
                         self.csv_table(frame, f"instance-{self.instance}"),
                         sizing_mode="stretch_width")

    @param.depends("data", "instance", "queue_width", "epsilon", "presentation")
    @guarded
    def trace_view(self):
        from bnexplore.viz.ismb import trace_plot

        x, res, nis = self._run()
        truth = x[self.data.target]
        # two 420 px pictures side by side on a wide window, one below the other on a
        # narrow one; at projector sizes each is wider, so they stack at 1024 px
        w, h = (560, 280) if self.presentation else (420, 220)
        flex = {"styles": {"flex": "0 1 auto"}, "margin": (0, 10)}

        def picture(result, title):
            return self.drawing(lambda: self.look(trace_plot(result.trace(), truth, title=title,
                                                             width=w, height=h)))

        return pn.FlexBox(
            pn.pane.HoloViews(picture(res, "ISMB (instance-specific)"), **flex),
            pn.pane.HoloViews(picture(nis, "NISMB (non-instance-specific)"), **flex),
            sizing_mode="stretch_width", css_classes=["bnx-ismb-traces"])

    @param.depends("data", "instance", "queue_width", "epsilon", "n_blankets", "presentation")
    @guarded
    def blankets_view(self):
        from bnexplore.viz.ismb import blanket_plot

        _, res, _ = self._run()
        top = res.top_models(min(int(self.n_blankets), len(res.models)))
        size = 300 if self.presentation else 250
        # as many in a row as the window holds (each keeps its own size)
        def picture(rank, mb, weight):
            return self.drawing(lambda: blanket_plot(mb, weight, rank=rank, size=size,
                                                     presentation=self.presentation))

        return pn.FlexBox(*[pn.pane.HoloViews(picture(i + 1, mb, weight), margin=(0, 10),
                                              styles={"flex": "0 0 auto"})
                            for i, (mb, _, weight) in enumerate(top)],
                          flex_wrap="wrap", sizing_mode="stretch_width",
                          css_classes=["bnx-ismb-blankets"])
