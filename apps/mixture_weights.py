"""Mixture weights.

Linear mixtures of one-dependence estimators (Cerquides & Lopez de Mantaras): the weight
each method gives every super-parent, BMA's collapse onto one model, and ROC curves.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import panel as pn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (serve, cached, guarded, make_template, md_strong, md_text,  # noqa: E402
                     reactive, widget)
from _render import shared_pane  # noqa: E402

TITLE = "Mixture weights"
DESCRIPTION = ("AODE, BMA over ODEs, MAPLMD and MAPLMG on a bundled data set: the weight of "
               "every super-parent, how BMA collapses onto one model as the sample grows, "
               "and ROC curves with AUCs.")

METHOD_LABELS = {"AODE": "uniform (AODE)", "BMAAODE": "BMA", "MAPLMD": "MAPLMD",
                 "MAPLMG": "MAPLMG"}
TEST_FRACTION = 1 / 3

#: what the page teaches, shown above the pictures.
LESSON = ("Each one-dependence estimator (ODE) makes every attribute depend on the class and on "
          "one *super-parent* attribute; a mixture averages the ODEs with weights. AODE gives "
          "them equal weights; Bayesian model averaging (BMA) puts almost all the weight on one "
          "ODE as soon as there are a few dozen rows, and so behaves like model *selection*; "
          "MAPLMD and MAPLMG learn weights in between. Move the training size to see it.")

pn.extension(sizing_mode="stretch_width", notifications=False)


def _dataset_names() -> list[str]:
    import bnexplore as bx

    return [n for n in bx.datasets.names() if n not in ("segment-test",)]


@cached(16)
def split(name: str, seed: int = 0):
    """(train, test) frames: 5-bin equal-frequency discretisation, stratified 2/3 - 1/3."""
    import bnexplore as bx
    from sklearn.model_selection import train_test_split

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = bx.datasets.load(name, discretize="quantile", n_bins=5, missing="state")
    target = df.attrs["target"]
    y = df[target].astype(str)
    strat = y if y.value_counts().min() >= 2 else None
    tr, te = train_test_split(df, test_size=TEST_FRACTION, random_state=seed, stratify=strat)
    rng = np.random.default_rng(seed)
    tr = tr.iloc[rng.permutation(len(tr))]          # training prefixes are random subsets
    tr.attrs, te.attrs = dict(df.attrs), dict(df.attrs)
    return tr, te


def n_train_max(name: str) -> int:
    return len(split(name)[0])


def _prefix(name: str, n: int):
    tr, te = split(name)
    n = int(max(2, min(n, len(tr))))
    t = tr.attrs["target"]
    sub = tr.iloc[:n]
    return sub.drop(columns=[t]), sub[t].astype(str), te.drop(columns=[t]), te[t].astype(str)


@cached(64)
def fit_all(name: str, n: int):
    """Fit the four mixtures on the first ``n`` training rows; weights, test probabilities."""
    from bnexplore.classifiers import AODE, BMAAODE, MAPLMD, MAPLMG

    X, y, Xt, yt = _prefix(name, n)
    if y.nunique() < 2:
        raise ValueError(f"the first {n} training rows hold a single class: use a larger "
                         f"training size")
    out, probas = {}, {}
    for key, est in (("AODE", AODE()), ("BMAAODE", BMAAODE()), ("MAPLMD", MAPLMD()),
                     ("MAPLMG", MAPLMG())):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        out[METHOD_LABELS[key]] = est.weights_
        probas[METHOD_LABELS[key]] = (est.classes_, est.predict_proba(Xt))
    return pd.DataFrame(out), probas, yt


def _sizes(n_max: int) -> list[int]:
    sizes = sorted({int(round(s)) for s in np.geomspace(10, n_max, 12)} | {n_max})
    return [s for s in sizes if s >= 10]


@cached(16)
def bma_path(name: str) -> pd.DataFrame:
    """BMAAODE root posterior at a geometric grid of training sizes (long format)."""
    from bnexplore.classifiers import BMAAODE

    rows = []
    for n in _sizes(n_train_max(name)):
        X, y, _, _ = _prefix(name, n)
        if y.nunique() < 2:
            continue
        w = BMAAODE().fit(X, y).weights_
        rows += [{"n_train": n, "attribute": a, "weight": float(v)} for a, v in w.items()]
    return pd.DataFrame(rows)


def classes_of(name: str) -> list[str]:
    return sorted(split(name)[1][split(name)[1].attrs["target"]].astype(str).unique())


# --------------------------------------------------------------------------- views
@guarded
def summary_view(name, n):
    from bnexplore.metrics import auc

    w, probas, yt = fit_all(name, int(n))
    aucs = {m: auc(yt.to_numpy(), p, classes=list(c)) for m, (c, p) in probas.items()}
    bma = w[METHOD_LABELS["BMAAODE"]]
    txt = (f"{md_strong(name)}: {int(n)} training rows, {len(yt)} test rows, {len(w)} super-parents "
           f"&nbsp;·&nbsp; BMA's largest weight **{bma.max():.3f}** on <code>{md_text(bma.idxmax())}</code> "
           f"&nbsp;·&nbsp; AUC " + ", ".join(f"{m} {a:.3f}" for m, a in aucs.items()))
    return pn.pane.Markdown(txt, css_classes=["bnx-mix-summary"], margin=(0, 10))


def weights_plot(name, n):
    """Grouped bars: the weight each method gives every super-parent."""
    from bnexplore.viz.mixtures import weights_bars

    w, _, _ = fit_all(name, int(n))
    return weights_bars(w, title=f"Weight of each super-parent ({int(n)} training rows)",
                        height=420, responsive=True)


def collapse_plot(name, n):
    """BMA's weights against the training size, the current size marked."""
    from bnexplore.viz.mixtures import bma_collapse_plot

    return bma_collapse_plot(bma_path(name), current=int(n), height=440, responsive=True,
                             title="BMA weight of each super-parent against the sample size")


def roc_picture(name, n, positive):
    """Test-set ROC curves of the four mixtures for the class ``positive``."""
    from bnexplore.metrics import auc, roc_curve
    from bnexplore.viz import roc_plot

    _, probas, yt = fit_all(name, int(n))
    y = yt.to_numpy()
    if positive not in set(y):
        positive = sorted(set(y))[-1]
    curves = {}
    for m, (cls, p) in probas.items():
        cls = list(cls)
        score = p[:, cls.index(positive)] if positive in cls else np.zeros(len(y))
        fpr, tpr, _ = roc_curve(y, score, pos_label=positive)
        curves[m] = (fpr, tpr, auc(y == positive, score))
    return roc_plot(curves, title=f"ROC on the test rows, positive class {positive!r}",
                    height=460, responsive=True).opts(min_width=320, max_width=560)


# The pictures are rendered once per setting for all sessions (apps/_render.py).
@guarded
def weights_view(name, n):
    return shared_pane(weights_plot, name, int(n), sizing_mode="stretch_width", height=430)


@guarded
def collapse_view(name, n):
    return shared_pane(collapse_plot, name, int(n), sizing_mode="stretch_width", height=450)


@guarded
def roc_view(name, n, positive):
    return shared_pane(roc_picture, name, int(n), positive, sizing_mode="stretch_width",
                       height=470, styles={"flex": "1 1 360px"})


def create_app() -> pn.template.FastListTemplate:
    names = _dataset_names()
    default = "vote" if "vote" in names else names[0]
    data = widget(pn.widgets.Select, "Data set", options=names, value=default)
    nmax = n_train_max(default)
    size = widget(pn.widgets.IntSlider, "Training size", start=10, end=nmax,
                  value=min(100, nmax), step=1)
    cls = classes_of(default)
    positive = widget(pn.widgets.Select, "Positive class (ROC)", options=cls, value=cls[-1])

    def _sync(event):
        end = n_train_max(event.new)
        size.end = end
        size.value = min(size.value, end)
        c = classes_of(event.new)
        positive.options = c
        positive.value = c[-1]

    data.param.watch(_sync, "value")
    main = [pn.Column(
        pn.pane.Markdown(LESSON, margin=(0, 10), css_classes=["bnx-lesson"]),
        reactive(summary_view, data, size),
        pn.pane.Markdown("### Weights given to every super-parent attribute",
                         margin=(10, 10, 0, 10)),
        pn.pane.Markdown("One group of bars per attribute, one bar per method; each method's "
                         "weights sum to 1. Hover a bar for its value.", margin=(0, 10)),
        reactive(weights_view, data, size),
        pn.pane.Markdown("### BMA collapses onto one model as the sample grows",
                         margin=(10, 10, 0, 10)),
        pn.pane.Markdown("BMA's weight of the eight heaviest super-parents (the rest summed "
                         "as *others*) for growing training sets; the dashed line is the "
                         "current training size.", margin=(0, 10)),
        reactive(collapse_view, data, size),
        pn.pane.Markdown("### Does it cost accuracy?", margin=(10, 10, 0, 10)),
        pn.FlexBox(reactive(roc_view, data, size, positive,
                            pane_options={"styles": {"flex": "1 1 360px"},
                                          "sizing_mode": "stretch_width"}),
               pn.pane.Markdown(
                   "ROC curves of the four mixtures on the held-out third of the data: each "
                   "curve sweeps a threshold on P(positive class | x) and plots the share of "
                   "positive cases caught against the share of negative cases wrongly "
                   "flagged. The area under the curve (AUC, in the legend) is the chance "
                   "that a random positive case is ranked above a random negative one: 1 is "
                   "perfect, 0.5 is guessing (dashed diagonal). Compare BMA, which bets on "
                   "one model, with the mixtures that spread their weight as you move the "
                   "training size.",
                   margin=(10, 20), styles={"flex": "1 1 300px"}),
               sizing_mode="stretch_width"),
        sizing_mode="stretch_width")]
    sidebar = [data, size, positive,
               pn.pane.Markdown("Numeric attributes: 5 equal-frequency bins (as in the "
                                "paper). Training rows are random prefixes of a fixed 2/3 "
                                "split; MAPLMD/MAPLMG weights use leave-one-out ODE "
                                "estimates (Eq. 30-32).")]
    return make_template(TITLE, main=main, sidebar=sidebar, description=DESCRIPTION)


if __name__.startswith("bokeh"):
    serve(create_app)
