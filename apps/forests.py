"""Forests.

Selective forest-augmented naive Bayes (Ziebart, Dey & Bagnell): move the exclusion
penalty alpha, k and MAP / BMA and watch the forest, the class's Markov blanket, the
accuracy against alpha and the ROC curves change.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import panel as pn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (serve, DATASET, guarded, load_data, make_template, md_strong,  # noqa: E402
                     reactive, cached, widget)
from _render import shared_dag_pane, shared_pane  # noqa: E402

import bnexplore as bx  # noqa: E402

#: what the page teaches, shown above the pictures.
LESSON = ("A forest-augmented naive Bayes lets each feature depend on the class and on at most "
          "one other feature. The exclusion penalty **alpha** makes it costly to keep the class "
          "as a parent: small alpha drops irrelevant features from the class's Markov blanket "
          "(alpha = \u221e keeps them all, which is FAN). Watch the blanket shrink and the "
          "accuracy respond.")

TITLE = "Forests"
DESCRIPTION = ("Selectively conditioned forests as classifiers: SFAN with exclusion penalty alpha "
               "(alpha = infinity is FAN), MAP or Bayesian model averaging, edge posteriors, "
               "accuracy against alpha and ROC curves.")

pn.extension(sizing_mode="stretch_width", notifications=False)



def _class_node() -> str:
    """The class's node in the classifiers' graphs (scikit-learn is imported only by
    a computation: a later start reads the first page's results from disk)."""
    from bnexplore.classifiers import DiscreteClassifier

    return DiscreteClassifier.class_column

INF = "\u221e"
ALPHA_OPTIONS = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, INF]
CURVE_ALPHAS = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, math.inf]


def _alpha(value) -> float:
    return math.inf if value == INF else float(value)


def _xy(name: str):
    df = load_data(DATASET, name)
    target = df.attrs["target"]
    return df.drop(columns=[target]), df[target].astype(str).to_numpy()


@cached(64)
def fit(name: str, alpha: float, k: int, averaging: str):
    """Fitted SFAN on the whole data set and its edge posteriors (BMA over SFANs)."""
    from bnexplore.classifiers import SFAN

    X, y = _xy(name)
    clf = SFAN(penalty=alpha, max_parents=k, averaging=averaging).fit(X, y)
    return clf, clf.edge_posteriors()


@cached(32)
def alpha_curve(name: str, k: int, averaging: str) -> pd.DataFrame:
    """5-fold CV accuracy of SFAN for every alpha of the curve, plus naive Bayes."""
    from bnexplore.classifiers import SFAN, NaiveBayes
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    X, y = _xy(name)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    # alpha = infinity keeps the class as every feature's parent, which k = 0 forbids
    alphas = [a for a in CURVE_ALPHAS if k > 0 or math.isfinite(a)]
    rows = [{"alpha": a, "accuracy": s}
            for a in alphas
            for s in cross_val_score(SFAN(penalty=a, max_parents=k, averaging=averaging), X, y, cv=cv)]
    nb = float(cross_val_score(NaiveBayes(prior="BDeu", ess=10.0), X, y, cv=cv).mean())
    return pd.DataFrame(rows), nb


@cached(64)
def roc_curves(name: str, alpha: float, k: int, averaging: str) -> dict:
    """CV ROC curves (first class positive) of the chosen SFAN, FAN and naive Bayes."""
    from bnexplore.classifiers import FAN, SFAN, NaiveBayes
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    X, y = _xy(name)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    pos = np.unique(y)[0]
    models = {f"SFAN alpha={alpha:g}, {averaging.upper()}": SFAN(penalty=alpha, max_parents=k,
                                                                   averaging=averaging),
              "FAN (MAP)": FAN(), "naive Bayes": NaiveBayes(prior="BDeu", ess=10.0)}
    out = {}
    for label, clf in models.items():
        proba = cross_val_predict(clf, X, y, cv=cv, method="predict_proba")
        fpr, tpr, _ = bx.metrics.roc_curve(y, proba[:, 0], pos_label=pos)
        out[label] = (fpr, tpr, bx.metrics.auc(y == pos, proba[:, 0]))   # class pos vs the rest
    return out, pos


@cached(64)
def summary_text(name: str, alpha: str, k: int, averaging: str) -> str:
    """The fitted forest in a line: class arcs, blanket size, score."""
    clf, post = fit(name, _alpha(alpha), k, averaging)
    cls = _class_node()
    feats = list(clf.feature_names_in_)
    mb = clf.markov_blanket_
    n_class = int(sum(clf.graph_.has_edge(cls, f) for f in feats))
    exp_class = float(post.loc[cls].sum()) if cls in post.index else 0.0
    return (f"{md_strong(name)}: {len(feats)} features, {len(clf.classes_)} classes &nbsp;·&nbsp; "
            f"<span class='bnx-forest-summary'>alpha = {alpha}, k = {k}, {averaging.upper()}: "
            f"class is a parent of {n_class} features in the MAP forest "
            f"(BMA expectation {exp_class:.2f}); Markov blanket of the class: {len(mb)} features; "
            f"log score of the MAP structure {clf.result_.score:.2f}</span>")


@guarded
def summary_view(name, alpha, k, averaging):
    return pn.pane.Markdown(summary_text(name, str(alpha), int(k), averaging), margin=(0, 10))


def forest_picture(name, alpha, k, averaging, threshold):
    """The MAP forest, or the BMA arcs with posterior >= ``threshold``; the class's
    Markov blanket marked, arc width the posterior."""
    from bnexplore.viz.forests import forest_plot

    clf, post = fit(name, alpha, k, averaging)
    if averaging == "map":
        g = clf.graph_
        title = "MAP SFAN, arc width = BMA posterior"
    else:
        g = clf.posterior_graph(threshold)
        title = f"BMA SFAN: every arc with posterior >= {threshold:g}"
    weights = {(u, v): float(post.loc[u, v]) for u, v in g.edges if u in post.index and v in post.columns}
    cls = _class_node()
    mb = clf.markov_blanket_ if averaging == "map" else bx.networks.markov_blanket(g, cls)
    return forest_plot(g, class_node=cls, edge_weights=weights, markov_blanket=mb,
                       rename={cls: "class"}, title=title, width=1000, height=520, responsive=True)


def alpha_picture(name, k, averaging):
    """Cross-validated accuracy against alpha, naive Bayes dashed."""
    from bnexplore.viz.forests import alpha_accuracy_plot

    df, nb = alpha_curve(name, k, averaging)
    return alpha_accuracy_plot(df, reference={"naive Bayes": nb}, height=420, responsive=True,
                               title=f"5-fold CV accuracy against alpha ({averaging.upper()}, k={k})")


def roc_picture(name, alpha, k, averaging):
    """Cross-validated ROC curves of the chosen SFAN, FAN and naive Bayes."""
    from bnexplore.viz import roc_plot

    curves, pos = roc_curves(name, alpha, k, averaging)
    # no fixed width: the plot shares the row (a fixed width in a stretching pane warns)
    return roc_plot(curves, title=f"5-fold CV ROC, positive class {pos!r}", height=420,
                    responsive=True).opts(legend_position="bottom_right")


# The pictures are rendered once per setting for all sessions (apps/_render.py).
@guarded
def forest_view(name, alpha, k, averaging, threshold):
    # the MAP forest does not depend on the threshold: one picture for all of them
    threshold = float(threshold) if averaging == "bma" else None
    return shared_dag_pane(forest_picture, name, _alpha(alpha), int(k), averaging, threshold)


@guarded
def alpha_view(name, k, averaging):
    return shared_pane(alpha_picture, name, int(k), averaging, sizing_mode="stretch_width",
                       height=430)


@guarded
def roc_view(name, alpha, k, averaging):
    return shared_pane(roc_picture, name, _alpha(alpha), int(k), averaging,
                       sizing_mode="stretch_width", height=430)


def create_app() -> pn.template.FastListTemplate:
    """Build the page (one per session)."""
    names = [n for n in bx.datasets.names() if n not in ("labor", "weather.nominal", "contact-lenses")]
    dataset = widget(pn.widgets.Select, "Data set", options=names, value="vote")
    alpha = widget(pn.widgets.DiscreteSlider, "Exclusion penalty alpha", options=ALPHA_OPTIONS,
                   value=2.0)
    k = widget(pn.widgets.IntSlider, "k (class parents per feature; 0 drops the class)", start=0,
               end=1, value=1)
    averaging = widget(pn.widgets.RadioButtonGroup, "Structure", options=["map", "bma"], value="map")
    threshold = widget(pn.widgets.FloatSlider, "BMA: draw arcs with posterior >=", start=0.05,
                       end=0.95, step=0.05, value=0.3)
    main = [pn.Column(
        pn.pane.Markdown(LESSON, margin=(0, 10), css_classes=["bnx-lesson"]),
        reactive(summary_view, dataset, alpha, k, averaging),
        pn.pane.Markdown("### The learned structure", margin=(10, 10, 0, 10)),
        pn.pane.Markdown(
            "Orange: the class; pink: the class's Markov blanket (the features the "
            "prediction uses); blue: features left out. Arc width is the posterior "
            "probability of the arc under Bayesian model averaging; long names are cut, "
            "hover a node for the full name.", margin=(0, 10)),
        reactive(forest_view, dataset, alpha, k, averaging, threshold),
        pn.pane.Markdown("### Does leaving features out pay?", margin=(10, 10, 0, 10)),
        pn.pane.Markdown(
            "First: cross-validated accuracy for every alpha (dashed: naive Bayes). Then: "
            "ROC curves of the chosen model, FAN and naive Bayes; the higher the area "
            "under the curve (AUC), the better the ranking of the cases.", margin=(0, 10)),
        # side by side on a wide window, one below the other on a narrow one
        pn.FlexBox(reactive(alpha_view, dataset, k, averaging,
                            pane_options={"styles": {"flex": "1 1 420px"},
                                          "sizing_mode": "stretch_width"}),
                   reactive(roc_view, dataset, alpha, k, averaging,
                            pane_options={"styles": {"flex": "1 1 420px"},
                                          "sizing_mode": "stretch_width"}),
                   sizing_mode="stretch_width"),
        sizing_mode="stretch_width")]
    sidebar = [dataset, alpha, k, pn.pane.Markdown("MAP or BMA", margin=(0, 10)), averaging, threshold,
               pn.pane.Markdown("Data sets are MDL-discretised; missing values are a state of "
                                "their own. BDeu, prior weight 10.", margin=(10, 10))]
    return make_template(TITLE, main=main, sidebar=sidebar, description=DESCRIPTION)


if __name__.startswith("bokeh"):
    serve(create_app)
