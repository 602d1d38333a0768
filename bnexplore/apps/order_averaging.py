"""Order averaging: exact averaging over the DAGs of one order, and the summary network M*.

Exact model averaging over every DAG consistent with a GTT order (at most
``max_parents`` parents), and the summary network M* truncated to ``n`` parents
(Dash & Cooper, AMA): arc posteriors, M*, and the held-out ROC curves of SNN, NMA, GTT
and AMA. Prior: order-modular (uniform over parent sets given the order).
"""
from __future__ import annotations

import numpy as np
import panel as pn
import param

from bnexplore.experiments.compare import PARAM_RANGES

from ._base import App, guarded
from ._cache import cached
from ._compare import PinStructure
from .data import Data
from .text import md_strong


def _class_node() -> str:
    from bnexplore.classifiers import DiscreteClassifier

    return DiscreteClassifier.class_column


@cached(max_items=32)
def fit_models(data: Data, max_parents: int):
    """SNN, NMA, GTT and AMA (order from GTT, averaging with ``max_parents``) on 2/3 of
    the complete rows (a fixed split), and the held-out third."""
    from bnexplore.classifiers import AMA, GreedyThickThin, NaiveAveraging, NaiveBayes

    df = data.frame.dropna().reset_index(drop=True)
    idx = np.random.default_rng(0).permutation(len(df))
    cut = (2 * len(df)) // 3
    tr, te = idx[:cut], idx[cut:]
    X, y = df.drop(columns=data.target), df[data.target].astype(str).to_numpy()
    models = {"SNN": NaiveBayes(), "NMA": NaiveAveraging(), "GTT": GreedyThickThin(),
              "AMA": AMA(max_parents=int(max_parents), n=None, order="gtt")}
    for m in models.values():
        m.fit(X.iloc[tr], y[tr])
    return models, X.iloc[te], y[te]


@cached(max_items=32)
def arc_posteriors(data: Data, max_parents: int):
    """Arc posteriors over L_k(pi) (class under its own name) and the order pi."""
    models, _, _ = fit_models(data, max_parents)
    avg = models["AMA"].averagings_[0]
    cls = _class_node()
    post = avg.arc_posteriors().rename(index={cls: data.target}, columns={cls: data.target})
    order = [data.target if v == cls else v for level in avg.order_levels for v in level]
    return post, order


@cached(max_items=64)
def summary(data: Data, max_parents: int, n: int):
    """M* with ``n`` parents, the held-out class probabilities of the four models, and
    the figures of the averaging."""
    models, Xte, yte = fit_models(data, max_parents)
    avg = models["AMA"].averagings_[0]
    net = avg.summary_network(int(n))
    probas = {m: models[m].predict_proba(Xte) for m in ("SNN", "NMA", "GTT")}
    probas["AMA"] = net.predict_proba(Xte, _class_node())
    facts = dict(n_families=avg.n_families, n_structures=avg.n_structures,
                 log_evidence=avg.log_evidence)
    return net, probas, yte, list(models["AMA"].classes_), facts


def auc_table(data: Data, max_parents: int, n: int):
    """The held-out AUC of each model (a table)."""
    import pandas as pd

    from bnexplore.metrics import auc

    _, probas, yte, classes, _ = summary(data, max_parents, n)
    return pd.DataFrame({"model": list(probas),
                         "AUC": [round(auc(yte, p, classes=classes), 4)
                                 for p in probas.values()]})


class OrderAveraging(PinStructure, App):
    """Exact averaging over the DAGs of one order, and the summary network M*.

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table, or a bundled data set or network (default ``"vote"``).
    target : str, optional
        The class column.
    max_parents : int
        Most parents of a node in the averaged DAGs (k).
    n : int
        Most parents of a node in the summary network M*.

    Examples
    --------
    >>> import bnexplore as bx
    >>> app = bx.apps.OrderAveraging("vote", max_parents=1, n=3)
    >>> app.data.target, app.param.n.bounds
    ('Class', (1, 16))
    >>> app.max_parents = 2          # the views follow (in a notebook: the widgets)
    """

    title = "Order averaging"
    description = ("Exact Bayesian model averaging over all DAGs consistent with a GTT order "
                   "(at most k parents), and the single summary network M* with at most n "
                   "parents (AMA). Compare SNN, NMA, GTT and AMA on held-out data.")
    default_network = "alarm"
    network_targets = {"alarm": "KINKEDTUBE", "asia": "lung", "child": "Disease",
                       "insurance": "Accident"}
    controls = ("max_parents", "n", "threshold")
    warm_settings = ({"max_parents": 2, "n": 3},)
    # the pinned comparison draws two structures at each move: in a worker
    cached_views = ("summary_view", "network_view", "heatmap_view", "roc_view", "auc_view")

    max_parents = param.Integer(default=2, bounds=PARAM_RANGES["max_parents"], label="k (max parents averaged)",
                                doc="Most parents of a node in the averaged DAGs.")
    n = param.Integer(default=4, bounds=(1, PARAM_RANGES["n"][1]), label="n (max parents in M*)",
                      doc="Most parents of a node in the summary network M*.")

    threshold = param.Number(default=0.0, bounds=(0.0, 0.95), step=0.05,
                             label="Arc-posterior threshold",
                             doc="Arcs of M* and cells of the heat map below it are left out.")

    def dependent(self, data: Data) -> dict:
        hi = max(1, min(PARAM_RANGES["n"][1], len(data.features)))
        self.param.n.bounds = (1, hi)
        return {"n": min(max(self.n, 1), hi)}

    def results(self) -> list:
        return [summary(self.data, self.max_parents, self.n),
                arc_posteriors(self.data, self.max_parents)]

    def views(self) -> list:
        return [self.summary_view, self.network_view, self.compare_view, self.heatmap_view,
                self.roc_view, self.auc_view]

    def current_structure(self):
        import networkx as nx

        from bnexplore.viz.averaging import thin_arcs

        net, *_ = summary(self.data, self.max_parents, self.n)
        post, _ = arc_posteriors(self.data, self.max_parents)
        dag = nx.relabel_nodes(net.dag, {_class_node(): self.data.target})
        label = f"k = {self.max_parents}, n = {self.n}"
        if self.threshold:
            dag = thin_arcs(dag, post, self.threshold)
            label += f", P(arc) >= {self.threshold:g}"
        return label, dag

    @param.depends("data", "max_parents", "n", "threshold", "pinned", "presentation")
    @guarded
    def compare_view(self):
        return pn.Column(pn.pane.Markdown("### Compare M* with another setting",
                                          margin=(10, 10, 0, 10)),
                         self.pin_controls(),
                         self.compare_pane(highlight=[self.data.target], width=560, height=480,
                                           responsive=True),
                         sizing_mode="stretch_width")

    @param.depends("data", "max_parents", "n")
    @guarded
    def summary_view(self):
        d = self.data
        _, _, _, _, facts = summary(d, self.max_parents, self.n)
        aucs = auc_table(d, self.max_parents, self.n)
        text = (f"{md_strong(d.label)}, class {md_strong(d.target)} · k = {self.max_parents}, "
                f"n = {self.n} · {facts['n_families']:,} families, "
                f"{facts['n_structures']:.3g} DAGs averaged exactly (order-modular prior), "
                f"log P(D) = {facts['log_evidence']:.2f} · AUC: "
                + ", ".join(f"{m} {a:.3f}" for m, a in zip(aucs["model"], aucs["AUC"])))
        return pn.pane.Markdown(text, css_classes=["bnx-ama-summary"], margin=(0, 10))

    @param.depends("data", "max_parents", "n", "threshold", "presentation")
    @guarded
    def network_view(self):
        import networkx as nx

        from bnexplore.viz.averaging import summary_network_plot

        def picture():
            net, *_ = summary(self.data, self.max_parents, self.n)
            post, _ = arc_posteriors(self.data, self.max_parents)
            dag = nx.relabel_nodes(net.dag, {_class_node(): self.data.target})
            return summary_network_plot(
                dag, post, target=self.data.target, width=self.dag_width(), responsive=True,
                threshold=self.threshold or None, presentation=self.presentation,
                # a shorter title at projector sizes leaves room for the toolbar
                title=(f"M* (n = {self.n}), arc width = posterior" if self.presentation else
                       f"Summary network M* (n = {self.n}); arc width = posterior"))

        return self.dag_pane(self.drawing(picture))

    @param.depends("data", "max_parents", "threshold", "presentation")
    @guarded
    def heatmap_view(self):
        from bnexplore.viz.averaging import arc_posterior_heatmap

        post, order = arc_posteriors(self.data, self.max_parents)
        return pn.Column(self.wide_pane(self.drawing(lambda: arc_posterior_heatmap(
            # at projector sizes the cells grow: the colour bar goes below, so that
            # the names and the cells have the main area of a 1024 px window
            post, order=order, width=self.dag_width(540 if self.presentation else 860),
            height=620, threshold=self.threshold or None,
            colorbar_position="bottom" if self.presentation else "right",
            presentation=self.presentation,
            # a shorter title at projector sizes fits the picture's width
            title=(f"Arc posteriors, order pi (k = {self.max_parents})" if self.presentation
                   else f"Arc posteriors over L_{self.max_parents}(pi), in the order pi")))),
            self.csv(post.reset_index(names="parent"), "arc-posteriors"))

    @param.depends("data", "max_parents", "n", "presentation")
    @guarded
    def roc_view(self):
        from bnexplore.metrics import auc, roc_curve
        from bnexplore.viz import roc_plot

        def picture():
            _, probas, yte, classes, _ = summary(self.data, self.max_parents, self.n)
            present = [c for c in classes if (yte == c).any()]
            pos = min(present, key=lambda c: (yte == c).sum())   # the rarer class
            j = classes.index(pos)
            curves = {}
            for m, p in probas.items():
                fpr, tpr, _ = roc_curve(yte == pos, p[:, j], pos_label=True)
                curves[m] = (fpr, tpr, auc((yte == pos).astype(int), p[:, j]))
            return self.look(roc_plot(
                curves, title=f"Held-out ROC, positive class {self.data.target} = {pos}",
                height=460, responsive=True).opts(min_width=300, max_width=700))

        return pn.pane.HoloViews(self.drawing(picture),
            sizing_mode="stretch_width")

    @param.depends("data", "max_parents", "n")
    @guarded
    def auc_view(self):
        return self.csv_table(auc_table(self.data, self.max_parents, self.n), "auc")
