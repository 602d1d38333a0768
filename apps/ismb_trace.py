"""ISMB trace.

Pick a data set and a test instance; watch the instance-specific Markov blanket search
(Visweswaran & Cooper) average models: the running estimate, the model scores, ISMB
beside NISMB, and the best blankets found.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import panel as pn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (serve, cached, guarded, make_template, md_text, reactive,  # noqa: E402
                     table_titles, widget)
from _render import shared_fixed_pane, shared_layout  # noqa: E402

TITLE = "ISMB trace"
DESCRIPTION = ("Instance-specific Markov blanket averaging: the estimate P(Z | x, D) as models "
               "are added (phase 1, then phase 2), ISMB beside NISMB, and the top blankets.")

SYNTHETIC = "synthetic: Z = A or (B and C and D)"
QUEUE_WIDTHS = [10, 50, 100, 200, 400, 800, 1000, 1600]
EPSILONS = [1.0, 0.1, 0.01, 0.001, 0.0001, 0.00001]

#: what the page teaches, shown above the pictures.
LESSON = ("To predict the class Z of **one** case x, ISMB averages many Markov blankets of Z, "
          "weighted by their posterior. Phase 1 builds a good blanket greedily; phase 2 adds "
          "the blankets that change the prediction for *this* case most, until a new one "
          "changes it by less than epsilon. NISMB adds models by score alone, ignoring x; "
          "ISMB-MS uses the single best blanket.")

pn.extension("tabulator", sizing_mode="stretch_width", notifications=False)


def _dataset_names() -> list[str]:
    import bnexplore as bx

    skip = {"segment-test"}  # the test half of segment-challenge
    return [SYNTHETIC] + [n for n in bx.datasets.names() if n not in skip]


@cached(16)
def dataset(name: str):
    """(training frame, test frame or None): the synthetic split, or a bundled MDL set."""
    import warnings

    import bnexplore as bx
    from bnexplore.experiments.ismb import synthetic_split

    if name == SYNTHETIC:
        return synthetic_split()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = bx.datasets.load(name, discretize="mdl", missing="state")
    return df, None


def n_instances(name: str) -> int:
    train, test = dataset(name)
    return len(test) if test is not None else len(train)


@cached(32)
def model_for(name: str, left_out: int):
    """MBModel on the training data (leave-one-out for bundled sets), phase 1 done."""
    from bnexplore.ismb import MBModel

    train, test = dataset(name)
    if test is None:
        keep = train.drop(index=train.index[left_out])
        keep.attrs = dict(train.attrs)
        train = keep
    m = MBModel(train, target=train.attrs["target"])
    m.phase1()
    return m


def instance(name: str, index: int) -> pd.Series:
    train, test = dataset(name)
    src = test if test is not None else train
    return src.iloc[index]


@cached(64)
def run(name: str, index: int, width: int, epsilon: float):
    """``(target, instance, ISMB result, NISMB result)`` for one instance (cached on the
    settings, on disk too: the results hold no model, so reading them back needs no
    search kernels)."""
    train, test = dataset(name)
    left = -1 if test is not None else index
    m = model_for(name, left)
    x = instance(name, index)
    res = m.search(x.drop(m.target), queue_width=width, epsilon=epsilon)
    nis = m.search(x.drop(m.target), queue_width=width, variant="nismb", n_phase2=res.n_phase2)
    return m.target, x, res, nis


def _clamp(name: str, index: int) -> int:
    return max(0, min(int(index), n_instances(name) - 1))


@guarded
def instance_view(name, index):
    x = instance(name, _clamp(name, index))
    frame = pd.DataFrame({"variable": x.index, "value": [str(v) for v in x.to_numpy()]})
    return pn.widgets.Tabulator(frame, show_index=False, disabled=True,
                                height=min(36 + 29 * len(frame), 300),
                                layout="fit_data_stretch", sizing_mode="stretch_width")


@guarded
def summary_view(name, index, width, epsilon):
    target, x, res, nis = run(name, _clamp(name, index), int(width), float(epsilon))
    truth = x[target]
    j = list(res.classes).index(truth)
    rows = pd.DataFrame({
        "method": ["ISMB", "ISMB-MS", "NISMB"],
        f"P({target} = {truth})": [res.proba[j], res.proba_ms[j], nis.proba[j]],
        "models": [len(res.models), 1, len(nis.models)],
    })
    txt = (f"<strong>true {md_text(target)} = {md_text(truth)}</strong> &nbsp;·&nbsp; phase 1: {res.n_phase1} models, "
           f"phase 2: {res.n_phase2} models (stopped by {res.stopped_by}) &nbsp;·&nbsp; "
           f"{res.elapsed:.2f} s")
    return pn.Column(pn.pane.Markdown(txt, css_classes=["bnx-ismb-summary"]),
                     pn.widgets.Tabulator(rows.round(4), show_index=False, disabled=True,
                                          layout="fit_data_table",
                                          titles=table_titles(rows)))   # names the class


def trace_picture(name, index, width, epsilon):
    """ISMB's and NISMB's running estimate and model scores, side by side."""
    from bnexplore.viz.ismb import trace_pair

    target, x, res, nis = run(name, index, width, epsilon)
    return trace_pair(res.trace(), nis.trace(), x[target])


def blanket_picture(name, index, width, epsilon, i):
    """The ``i``-th (from 0) highest-scoring Markov blanket in R with its weight."""
    from bnexplore.viz.ismb import blanket_plot

    res = run(name, index, width, epsilon)[2]
    mb, _, weight = res.top_models(i + 1)[i]
    return blanket_plot(mb, weight, rank=i + 1, size=250)


# The pictures are rendered once per setting for all sessions (apps/_render.py).
@guarded
def trace_view(name, index, width, epsilon):
    return shared_fixed_pane(trace_picture, name, _clamp(name, index), int(width), float(epsilon))


@guarded
def blankets_view(name, index, width, epsilon, k):
    """The ``k`` highest-scoring Markov blankets, one picture each: another ``k`` adds or
    hides pictures (shared_layout) instead of drawing the grid again."""
    args = (name, _clamp(name, index), int(width), float(epsilon))
    n = min(int(k), n_models(*args))
    return shared_layout(pn.FlexBox, *(lambda i=i: shared_fixed_pane(blanket_picture, *args, i)
                                       for i in range(n)))


@cached(64)
def n_models(name, index, width, epsilon) -> int:
    """How many models R holds for a setting."""
    return len(run(name, index, width, epsilon)[2].models)


def create_app() -> pn.template.FastListTemplate:
    names = _dataset_names()
    data = widget(pn.widgets.Select, "Data set", options=names, value=SYNTHETIC)
    index = widget(pn.widgets.IntSlider, "Test instance", start=0, end=n_instances(SYNTHETIC) - 1,
                   value=0)

    def _sync(event):
        index.end = n_instances(event.new) - 1
        index.value = min(index.value, index.end)

    data.param.watch(_sync, "value")
    width = widget(pn.widgets.DiscreteSlider, "Queue width w", options=QUEUE_WIDTHS, value=1000)
    eps = widget(pn.widgets.DiscreteSlider, "epsilon", options=EPSILONS, value=0.001)
    k = widget(pn.widgets.IntSlider, "Blankets to draw", start=1, end=9, value=3)

    main = [pn.Column(
        pn.pane.Markdown(LESSON, margin=(0, 10), css_classes=["bnx-lesson"]),
        reactive(summary_view, data, index, width, eps),
        pn.pane.Markdown("### Estimate and model score as models are added",
                         margin=(10, 10, 0, 10)),
        pn.pane.Markdown("Top: the averaged estimate of the true class after each model; "
                         "bottom: the log score of the model just added. Left of the red "
                         "dashed line is phase 1. ISMB's estimate settles where the models "
                         "that matter for this case say; hover a point for its values.",
                         margin=(0, 10)),
        reactive(trace_view, data, index, width, eps),
        pn.pane.Markdown("### Highest-scoring Markov blankets in R", margin=(10, 10, 0, 10)),
        pn.pane.Markdown("The class variable in pink, with its parents, children and the children's "
                         "other parents; the weight is the model's share of the posterior "
                         "within the averaged set R.", margin=(0, 10)),
        reactive(blankets_view, data, index, width, eps, k),
        sizing_mode="stretch_width")]
    sidebar = [data, index, reactive(instance_view, data, index), width, eps, k]
    return make_template(TITLE, main=main, sidebar=sidebar, description=DESCRIPTION)


if __name__.startswith("bokeh"):
    serve(create_app)
