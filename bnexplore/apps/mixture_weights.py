"""Mixture weights: linear mixtures of one-dependence estimators (Cerquides & Lopez de Mantaras).

The weight AODE, BMA over ODEs, MAPLMD and MAPLMG give every super-parent, how BMA
collapses onto one model as the training set grows, and the held-out ROC curves.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import panel as pn
import param

from ._base import App, guarded
from ._cache import cached
from .data import Data
from .text import md_strong, md_text

METHOD_LABELS = {"AODE": "uniform (AODE)", "BMAAODE": "BMA", "MAPLMD": "MAPLMD",
                 "MAPLMG": "MAPLMG"}
TEST_FRACTION = 1 / 3

#: what the page teaches, shown above the pictures.
LESSON = ("Each one-dependence estimator (ODE) makes every attribute depend on the class and "
          "on one *super-parent* attribute; a mixture averages the ODEs with weights. AODE "
          "gives them equal weights; Bayesian model averaging (BMA) puts almost all the weight "
          "on one ODE as soon as there are a few dozen rows, and so behaves like model "
          "*selection*; MAPLMD and MAPLMG learn weights in between. Move the training size "
          "to see it.")
ROC_TEXT = ("ROC curves of the four mixtures on the held-out third of the data: each curve "
            "sweeps a threshold on P(positive class | x) and plots the share of positive cases "
            "caught against the share of negative cases wrongly flagged. The area under the "
            "curve (AUC, in the legend) is the chance that a random positive case is ranked "
            "above a random negative one: 1 is perfect, 0.5 is guessing (dashed diagonal).")


@cached(max_items=16)
def split(data: Data, random_state: int):
    """(train, test): a stratified 2/3 - 1/3 split of the rows, the training rows shuffled
    (so that training prefixes are random subsets)."""
    from sklearn.model_selection import train_test_split

    df = data.frame
    y = df[data.target].astype(str)
    strat = y if y.value_counts().min() >= 2 else None
    tr, te = train_test_split(df, test_size=TEST_FRACTION, random_state=int(random_state),
                              stratify=strat)
    tr = tr.iloc[np.random.default_rng(int(random_state)).permutation(len(tr))]
    return tr, te


def _prefix(data: Data, n: int, random_state: int):
    tr, te = split(data, random_state)
    sub = tr.iloc[:int(max(2, min(n, len(tr))))]
    t = data.target
    return sub.drop(columns=[t]), sub[t].astype(str), te.drop(columns=[t]), te[t].astype(str)


@cached(max_items=64)
def fit_all(data: Data, n_train: int, random_state: int):
    """The four mixtures fitted on the first ``n_train`` training rows: their weights
    (a table, one column per method) and test-set class probabilities."""
    from bnexplore.classifiers import AODE, BMAAODE, MAPLMD, MAPLMG

    X, y, Xt, yt = _prefix(data, n_train, random_state)
    if y.nunique() < 2:
        raise ValueError(f"the first {n_train} training rows hold a single class: choose a "
                         f"larger n_train")
    out, probas = {}, {}
    for key, est in (("AODE", AODE()), ("BMAAODE", BMAAODE()), ("MAPLMD", MAPLMD()),
                     ("MAPLMG", MAPLMG())):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        out[METHOD_LABELS[key]] = est.weights_
        probas[METHOD_LABELS[key]] = (list(est.classes_), est.predict_proba(Xt))
    return pd.DataFrame(out), probas, yt.to_numpy()


def sizes(n_max: int) -> list[int]:
    """A geometric grid of training sizes from 10 to ``n_max``."""
    grid = sorted({int(round(s)) for s in np.geomspace(10, max(n_max, 10), 12)} | {n_max})
    return [s for s in grid if s >= 10]


@cached(max_items=16)
def bma_path(data: Data, random_state: int) -> pd.DataFrame:
    """BMA's weight of every super-parent at a grid of training sizes (long format)."""
    from bnexplore.classifiers import BMAAODE

    rows = []
    for n in sizes(len(split(data, random_state)[0])):
        X, y, _, _ = _prefix(data, n, random_state)
        if y.nunique() < 2:
            continue
        w = BMAAODE().fit(X, y).weights_
        rows += [{"n_train": n, "attribute": a, "weight": float(v)} for a, v in w.items()]
    return pd.DataFrame(rows)


class MixtureWeights(App):
    """The weights four mixtures of one-dependence estimators give every super-parent.

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table, or a bundled data set (numbers in 5 equal-frequency bins, as in the
        paper) or network (default ``"vote"``).
    n_train : int
        Training rows (a random prefix of a fixed 2/3 split).
    positive : str
        The positive class of the ROC curves.
    random_state : int
        The split.

    Examples
    --------
    >>> import bnexplore as bx
    >>> app = bx.apps.MixtureWeights("iris", n_train=30)
    >>> app.param.n_train.bounds, app.positive
    ((10, 100), 'Iris-virginica')
    """

    title = "Mixture weights"
    description = ("AODE, BMA over ODEs, MAPLMD and MAPLMG: the weight of every super-parent, "
                   "how BMA collapses onto one model as the sample grows, and ROC curves with "
                   "AUCs, on bundled data or your own.")
    bundled_binning = ("equal-frequency", 5)
    controls = ("n_train", "positive", "random_state")
    widget_types = {"random_state": pn.widgets.IntInput}
    warm_settings = ({"n_train": 40},)
    cached_views = ("summary_view", "weights_view", "collapse_view", "roc_view")

    binning = param.Selector(default="equal-frequency", objects=["mdl", "equal-frequency"],
                             doc="How continuous columns of your data are cut.")
    bins = param.Integer(default=5, bounds=(2, 10), doc="Equal-frequency bins.")
    n_train = param.Integer(default=100, bounds=(10, 10_000), label="Training size")
    positive = param.Selector(default=None, objects=[], allow_None=True, check_on_set=False,
                              label="Positive class (ROC)")
    random_state = param.Integer(default=0, bounds=(0, 2**31 - 1), label="Random state (split)")

    def dependent(self, data: Data) -> dict:
        n_max = max(10, len(data.frame) - int(np.ceil(len(data.frame) * TEST_FRACTION)))
        self.param.n_train.bounds = (10, n_max)
        classes = sorted(data.frame[data.target].astype(str).unique())
        self.param.positive.objects = classes
        keep = self.positive if self.positive in classes else classes[-1]
        return {"n_train": min(max(self.n_train, 10), n_max), "positive": keep}

    def results(self) -> list:
        return [self._fit(), bma_path(self.data, self.random_state)]

    def views(self) -> list:
        return [pn.pane.Markdown(LESSON, margin=(0, 10), css_classes=["bnx-lesson"]),
                self.summary_view, self.weights_view, self.collapse_view, self.roc_view]

    def _fit(self):
        return fit_all(self.data, self.n_train, self.random_state)

    @param.depends("data", "n_train", "random_state")
    @guarded
    def summary_view(self):
        from bnexplore.metrics import auc

        w, probas, yt = self._fit()
        aucs = {m: auc(yt, p, classes=c) for m, (c, p) in probas.items()}
        bma = w[METHOD_LABELS["BMAAODE"]]
        txt = (f"{md_strong(self.data.label)}: {self.n_train} training rows, {len(yt)} test "
               f"rows, {len(w)} super-parents · BMA's largest weight **{bma.max():.3f}** on "
               f"<code>{md_text(bma.idxmax())}</code> · AUC "
               + ", ".join(f"{m} {a:.3f}" for m, a in aucs.items()))
        return pn.pane.Markdown(txt, css_classes=["bnx-mix-summary"], margin=(0, 10))

    @param.depends("data", "n_train", "random_state", "presentation")
    @guarded
    def weights_view(self):
        from bnexplore.viz.mixtures import weights_bars

        w, _, _ = self._fit()
        return pn.Column(
            pn.pane.Markdown("### Weights given to every super-parent attribute\n\nOne group "
                             "of bars per attribute, one bar per method; each method's weights "
                             "sum to 1.", margin=(10, 10, 0, 10)),
            pn.pane.HoloViews(self.drawing(lambda: weights_bars(
                w, height=420, responsive=True, title=(
                    f"Weights ({self.n_train} training rows)" if self.presentation else
                    f"Weight of each super-parent ({self.n_train} training rows)"),
                legend_position="bottom" if self.presentation else "right",
                presentation=self.presentation)),
                sizing_mode="stretch_width"),
            self.csv(w.reset_index(names="super-parent"), "weights"),
            sizing_mode="stretch_width")

    @param.depends("data", "n_train", "random_state", "presentation")
    @guarded
    def collapse_view(self):
        from bnexplore.viz.mixtures import bma_collapse_plot

        path = bma_path(self.data, self.random_state)
        return pn.Column(
            pn.pane.Markdown("### BMA collapses onto one model as the sample grows\n\nBMA's "
                             "weight of the eight heaviest super-parents (the rest summed as "
                             "*others*); the dashed line is the current training size.",
                             margin=(10, 10, 0, 10)),
            pn.pane.HoloViews(self.drawing(lambda: bma_collapse_plot(
                path, current=self.n_train, height=440, responsive=True,
                title=("BMA weights against the sample size" if self.presentation else
                       "BMA weight of each super-parent against the sample size"),
                presentation=self.presentation)),
                sizing_mode="stretch_width"),
            self.csv(path, "bma-weights-by-size"), sizing_mode="stretch_width")

    @param.depends("data", "n_train", "random_state", "positive", "presentation")
    @guarded
    def roc_view(self):
        from bnexplore.metrics import auc, roc_curve
        from bnexplore.viz import roc_plot

        def picture():
            _, probas, y = self._fit()
            positive = self.positive if self.positive in set(y) else sorted(set(y))[-1]
            curves = {}
            for m, (cls, p) in probas.items():
                score = p[:, cls.index(positive)] if positive in cls else np.zeros(len(y))
                fpr, tpr, _ = roc_curve(y, score, pos_label=positive)
                curves[m] = (fpr, tpr, auc(y == positive, score))
            return self.look(roc_plot(
                curves, title=(f"ROC, positive class {positive!r}" if self.presentation else
                               f"ROC on the test rows, positive class {positive!r}"), height=460,
                responsive=True).opts(min_width=320, max_width=560))

        return pn.Column(
            pn.pane.Markdown("### Does it cost accuracy?", margin=(10, 10, 0, 10)),
            pn.FlexBox(pn.pane.HoloViews(self.drawing(picture),
                styles={"flex": "1 1 360px"}, sizing_mode="stretch_width"),
                pn.pane.Markdown(ROC_TEXT, margin=(10, 20), styles={"flex": "1 1 300px"}),
                sizing_mode="stretch_width"),
            sizing_mode="stretch_width")
