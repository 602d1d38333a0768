"""Forests: selective forest-augmented naive Bayes (Ziebart, Dey & Bagnell).

Each feature depends on the class and on at most one other feature; the exclusion
``penalty`` makes keeping the class as a parent costly, so a small penalty drops
irrelevant features from the class's Markov blanket (``penalty = inf`` is FAN). MAP or
Bayesian model averaging (BMA) over the forests; BDeu with prior weight 10.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import panel as pn
import param

from ._base import App, guarded
from ._cache import cached
from .data import Data
from .text import md_strong

INF = "\u221e"
#: the penalties offered (label -> value); infinity keeps every class arc (FAN).
PENALTIES = {**{f"{a:g}": a for a in np.arange(0.0, 6.01, 0.5).tolist()}, INF: math.inf}
#: the penalties of the accuracy curve.
CURVE_PENALTIES = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, math.inf]

#: what the page teaches, shown above the pictures.
LESSON = ("A forest-augmented naive Bayes lets each feature depend on the class and on at most "
          "one other feature. The exclusion **penalty** makes it costly to keep the class as a "
          "parent: a small penalty drops irrelevant features from the class's Markov blanket "
          f"(penalty = {INF} keeps them all, which is FAN). Watch the blanket shrink and the "
          "accuracy respond.")
STRUCTURE_TEXT = ("Orange: the class; pink: the class's Markov blanket (the features the "
                  "prediction uses); blue: features left out. Arc width is the posterior "
                  "probability of the arc under Bayesian model averaging; long names are cut, "
                  "hover a node for the full name.")
ACCURACY_TEXT = ("First: cross-validated accuracy for every penalty (dashed: naive Bayes). "
                 "Then: ROC curves of the chosen model, FAN and naive Bayes; the higher the "
                 "area under the curve (AUC), the better the ranking of the cases.")


def _class_node() -> str:
    from bnexplore.classifiers import DiscreteClassifier

    return DiscreteClassifier.class_column


def _xy(data: Data):
    df = data.frame
    return df.drop(columns=[data.target]), df[data.target].astype(str).to_numpy()


def _label(penalty: float) -> str:
    return INF if math.isinf(penalty) else f"{penalty:g}"


@cached(max_items=64)
def fit(data: Data, penalty: float, max_parents: int, averaging: str):
    """SFAN fitted on all rows and its arc posteriors (BMA over the forests)."""
    from bnexplore.classifiers import SFAN

    X, y = _xy(data)
    clf = SFAN(penalty=float(penalty), max_parents=int(max_parents), averaging=averaging).fit(X, y)
    return clf, clf.edge_posteriors()


@cached(max_items=32)
def penalty_curve(data: Data, max_parents: int, averaging: str):
    """5-fold CV accuracy of SFAN for every penalty of the curve (a table), and naive
    Bayes's mean accuracy."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    from bnexplore.classifiers import SFAN, NaiveBayes

    X, y = _xy(data)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    # penalty = infinity keeps the class as every feature's parent, which k = 0 forbids
    penalties = [a for a in CURVE_PENALTIES if max_parents > 0 or math.isfinite(a)]
    rows = [{"alpha": a, "accuracy": s} for a in penalties
            for s in cross_val_score(SFAN(penalty=a, max_parents=int(max_parents),
                                          averaging=averaging), X, y, cv=cv)]
    nb = float(cross_val_score(NaiveBayes(prior="BDeu", ess=10.0), X, y, cv=cv).mean())
    return pd.DataFrame(rows), nb


@cached(max_items=64)
def roc_curves(data: Data, penalty: float, max_parents: int, averaging: str):
    """5-fold CV ROC curves (first class positive, against the rest) of the chosen SFAN,
    FAN and naive Bayes, and the positive class."""
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    from bnexplore.classifiers import FAN, SFAN, NaiveBayes
    from bnexplore.metrics import auc, roc_curve

    X, y = _xy(data)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    pos = np.unique(y)[0]
    models = {f"SFAN penalty={_label(penalty)}, {averaging.upper()}": SFAN(
                  penalty=float(penalty), max_parents=int(max_parents), averaging=averaging),
              "FAN (MAP)": FAN(), "naive Bayes": NaiveBayes(prior="BDeu", ess=10.0)}
    out = {}
    for label, clf in models.items():
        proba = cross_val_predict(clf, X, y, cv=cv, method="predict_proba")
        fpr, tpr, _ = roc_curve(y, proba[:, 0], pos_label=pos)
        out[label] = (fpr, tpr, auc(y == pos, proba[:, 0]))
    return out, pos


class Forests(App):
    """Selective forest-augmented naive Bayes: the forest, the class's Markov blanket,
    accuracy against the exclusion penalty and ROC curves.

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table, or a bundled data set or network (default ``"vote"``).
    penalty : float
        The exclusion penalty (``math.inf``: FAN, every feature keeps the class).
    max_parents : int
        Class parents per feature (0 drops the class: penalty infinity is refused).
    averaging : {"map", "bma"}
        The MAP forest or Bayesian model averaging over forests.
    threshold : float
        BMA: the arcs drawn are those with a posterior at least this.

    Examples
    --------
    >>> import bnexplore as bx
    >>> app = bx.apps.Forests("iris", penalty=1.0)
    >>> app.penalty, app.averaging, app.data.target
    (1.0, 'map', 'class')
    """

    title = "Forests"
    description = ("Selectively conditioned forests as classifiers: SFAN with an exclusion "
                   "penalty (infinity is FAN), MAP or Bayesian model averaging, arc posteriors, "
                   "accuracy against the penalty and ROC curves, on bundled data or your own.")
    controls = ("penalty", "max_parents", "averaging", "threshold")
    widget_types = {"penalty": pn.widgets.DiscreteSlider,
                    "averaging": pn.widgets.RadioButtonGroup}
    warm_settings = ({"averaging": "map"}, {"averaging": "bma"})
    cached_views = ("summary_view", "forest_view", "accuracy_view")

    penalty = param.Selector(default=2.0, objects=PENALTIES, label="Exclusion penalty",
                             doc="The exclusion penalty (infinity: FAN).")
    max_parents = param.Integer(default=1, bounds=(0, 1),
                                label="k (class parents per feature; 0 drops the class)")
    averaging = param.Selector(default="map", objects=["map", "bma"], label="Structure (MAP or BMA)")
    threshold = param.Number(default=0.3, bounds=(0.05, 0.95), step=0.05,
                             label="BMA: draw arcs with posterior >=")

    def widget(self, name: str) -> pn.widgets.Widget:
        w = super().widget(name)
        if name == "threshold":
            w.visible = self.param.averaging.rx() == "bma"
        return w

    def _fit(self):
        return fit(self.data, self.penalty, self.max_parents, self.averaging)

    def results(self) -> list:
        return [self._fit(), penalty_curve(self.data, self.max_parents, self.averaging),
                roc_curves(self.data, self.penalty, self.max_parents, self.averaging)]

    def views(self) -> list:
        return [pn.pane.Markdown(LESSON, margin=(0, 10), css_classes=["bnx-lesson"]),
                self.summary_view,
                pn.pane.Markdown("### The learned structure", margin=(10, 10, 0, 10)),
                pn.pane.Markdown(STRUCTURE_TEXT, margin=(0, 10)),
                self.forest_view,
                pn.pane.Markdown("### Does leaving features out pay?", margin=(10, 10, 0, 10)),
                pn.pane.Markdown(ACCURACY_TEXT, margin=(0, 10)),
                self.accuracy_view]

    @param.depends("data", "penalty", "max_parents", "averaging")
    @guarded
    def summary_view(self):
        clf, post = self._fit()
        cls = _class_node()
        feats = list(clf.feature_names_in_)
        n_class = int(sum(clf.graph_.has_edge(cls, f) for f in feats))
        exp_class = float(post.loc[cls].sum()) if cls in post.index else 0.0
        text = (f"{md_strong(self.data.label)}: {len(feats)} features, {len(clf.classes_)} "
                f"classes · <span class='bnx-forest-summary'>penalty = {_label(self.penalty)}, "
                f"k = {self.max_parents}, {self.averaging.upper()}: the class is a parent of "
                f"{n_class} features in the MAP forest (BMA expectation {exp_class:.2f}); "
                f"Markov blanket of the class: {len(clf.markov_blanket_)} features; log score "
                f"of the MAP structure {clf.result_.score:.2f}</span>")
        return pn.pane.Markdown(text, margin=(0, 10), css_classes=["bnx-summary"])

    @param.depends("data", "penalty", "max_parents", "averaging", "threshold", "presentation")
    @guarded
    def forest_view(self):
        """The MAP forest, or the BMA arcs with posterior >= ``threshold``; the class's
        Markov blanket marked, arc width the posterior."""
        import bnexplore as bx
        from bnexplore.viz.forests import forest_plot

        clf, post = self._fit()
        cls = _class_node()

        def picture():
            if self.averaging == "map":
                g, title = clf.graph_, "MAP SFAN, arc width = BMA posterior"
                mb = clf.markov_blanket_
            else:
                g = clf.posterior_graph(float(self.threshold))
                title = f"BMA SFAN: every arc with posterior >= {self.threshold:g}"
                mb = bx.networks.markov_blanket(g, cls)
            weights = {(u, v): float(post.loc[u, v]) for u, v in g.edges
                       if u in post.index and v in post.columns}
            return forest_plot(g, class_node=cls, edge_weights=weights, markov_blanket=mb,
                               rename={cls: "class"}, title=title, width=self.dag_width(),
                               height=520, responsive=True, presentation=self.presentation)

        arcs = post.rename(index={cls: "class"}, columns={cls: "class"})
        return pn.Column(
            self.dag_pane(self.drawing(picture)),
            self.csv(arcs.reset_index(names="parent"), "arc-posteriors"),
            sizing_mode="stretch_width")

    @param.depends("data", "penalty", "max_parents", "averaging", "presentation")
    @guarded
    def accuracy_view(self):
        from bnexplore.viz import roc_plot
        from bnexplore.viz.forests import alpha_accuracy_plot

        curve, nb = penalty_curve(self.data, self.max_parents, self.averaging)
        curves, pos = roc_curves(self.data, self.penalty, self.max_parents, self.averaging)
        acc = self.drawing(lambda: self.look(alpha_accuracy_plot(
            curve, reference={"naive Bayes": nb}, height=420, responsive=True,
            title=(f"5-fold CV accuracy against the penalty ({self.averaging.upper()}, "
                   f"k={self.max_parents})"))))
        roc = self.drawing(lambda: self.look(roc_plot(
            curves, title=f"5-fold CV ROC, positive class {pos!r}", height=420,
            responsive=True).opts(legend_position="bottom_right")))
        flex = {"styles": {"flex": "1 1 420px"}, "sizing_mode": "stretch_width"}
        table = curve.rename(columns={"alpha": "penalty"})
        table.insert(1, "fold", table.groupby("penalty").cumcount() + 1)
        return pn.Column(
            # side by side on a wide window, one below the other on a narrow one
            pn.FlexBox(pn.pane.HoloViews(acc, **flex), pn.pane.HoloViews(roc, **flex),
                       sizing_mode="stretch_width"),
            self.csv(table, "accuracy-by-penalty"), sizing_mode="stretch_width")
