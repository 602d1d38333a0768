"""Order averaging.

Exact model averaging over every DAG consistent with an order (in-degree <= k) and the
summary network M* truncated to n parents (Dash & Cooper): arc posteriors, M*, ROC curves.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import panel as pn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (serve, NETWORK, DataSource, cached, describe_source, guarded, load_data,  # noqa: E402
                     make_template, md_strong, param_slider, PARAMETERS, reactive)
from _render import shared_dag_pane, shared_fixed_pane, shared_pane  # noqa: E402

TITLE = "Order averaging"
DESCRIPTION = ("Exact Bayesian model averaging over all DAGs consistent with a GTT order "
               "(at most k parents), and the single summary network M* with at most n parents "
               "(AMA). Compare SNN, NMA, GTT and AMA on held-out data.")

pn.extension(sizing_mode="stretch_width", notifications=False)

PREFERRED_TARGET = {"alarm": "KINKEDTUBE", "asia": "lung", "child": "Disease", "insurance": "Accident"}


def _class_node() -> str:
    """The class's node in the classifiers' networks (scikit-learn is imported only by
    a computation: a later start reads the first page's results from disk)."""
    from bnexplore.classifiers import DiscreteClassifier

    return DiscreteClassifier.class_column


def frame(kind: str, name: str, n: int):
    """The complete-case data frame and its default class node."""
    df = load_data(kind, name, n).dropna().reset_index(drop=True)
    target = df.attrs.get("target") if kind != NETWORK else PREFERRED_TARGET.get(name)
    if target not in df.columns:
        target = df.columns[-1]
    return df, target


@cached(maxsize=32)
def fit_all(kind: str, name: str, n: int, target: str, k: int):
    """Train SNN, NMA, GTT and AMA (order from GTT, averaging with k) on 2/3 of the rows."""
    from bnexplore.classifiers import AMA, GreedyThickThin, NaiveAveraging, NaiveBayes

    df, _ = frame(kind, name, n)
    if target not in df.columns:
        raise ValueError(f"class node {target!r} is not a column of {name}")
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(df))
    cut = (2 * len(df)) // 3
    tr, te = idx[:cut], idx[cut:]
    X, y = df.drop(columns=target), df[target].astype(str).to_numpy()
    models = {"SNN": NaiveBayes(), "NMA": NaiveAveraging(), "GTT": GreedyThickThin(),
              "AMA": AMA(max_parents=int(k), n=None, order="gtt")}
    for m in models.values():
        m.fit(X.iloc[tr], y[tr])
    return models, X.iloc[te], y[te]


@cached(maxsize=32)
def posteriors(kind: str, name: str, n_rows: int, target: str, k: int):
    """Arc posteriors of the averaging over L_k(pi) (they do not depend on n)."""
    models, _, _ = fit_all(kind, name, n_rows, target, k)
    post = models["AMA"].averagings_[0].arc_posteriors()
    cls = _class_node()
    return post.rename(index={cls: target}, columns={cls: target})


@cached(maxsize=32)
def averaging_order(kind: str, name: str, n_rows: int, target: str, k: int) -> list:
    """The order pi of the averaging (its levels flattened), class renamed to ``target``."""
    models, _, _ = fit_all(kind, name, n_rows, target, k)
    levels = models["AMA"].averagings_[0].order_levels
    cls = _class_node()
    return [target if v == cls else v for level in levels for v in level]


@cached(maxsize=64)
def summary(kind: str, name: str, n_rows: int, target: str, k: int, n: int):
    """Arc posteriors, M* (n parents) and the test-set class probabilities of the four models."""
    models, Xte, yte = fit_all(kind, name, n_rows, target, k)
    ama = models["AMA"]
    avg = ama.averagings_[0]
    post = posteriors(kind, name, n_rows, target, k)
    net = avg.summary_network(int(n))
    probas = {m: models[m].predict_proba(Xte) for m in ("SNN", "NMA", "GTT")}
    probas["AMA"] = net.predict_proba(Xte, _class_node())   # M* reads the rows by column name
    return post, net, probas, yte, ama.classes_, avg


def _positive(classes, yte):
    # the positive class of the ROC curves: the less frequent of the classes seen in the test set
    present = [c for c in classes if (yte == c).any()]
    return min(present, key=lambda c: (yte == c).sum())


@cached(maxsize=64)
def summary_text(kind: str, name: str, n_rows: int, target: str, k: int, n: int) -> str:
    """The summary line of a setting (computed once for every session)."""
    from bnexplore.metrics import auc

    post, net, probas, yte, classes, avg = summary(kind, name, n_rows, target, k, n)
    aucs = ", ".join(f"{m} {auc(yte, p, classes=list(classes)):.3f}" for m, p in probas.items())
    n_arcs = net.dag.number_of_edges()
    # the source and the class come from the user (an uploaded file): literal text
    text = (f"<strong>{describe_source(kind, name, n_rows)}</strong>, class {md_strong(target)} "
            f"&nbsp;·&nbsp; "
            f"k = {k}, n = {n} &nbsp;·&nbsp; {avg.n_families:,} families, "
            f"{avg.n_structures:.3g} DAGs averaged exactly, log P(D) = {avg.log_evidence:.2f}"
            f" &nbsp;·&nbsp; M* has {n_arcs} arcs &nbsp;·&nbsp; AUC: {aucs}")
    return text


@guarded
def summary_view(kind, dataset, network, n_rows, target, k, n):
    name = network if kind == NETWORK else dataset
    return pn.pane.Markdown(summary_text(kind, name, n_rows, target, k, n),
                            css_classes=["bnx-ama-summary"], margin=(0, 10))


def heatmap_plot(kind, name, n_rows, target, k):
    """The arc posteriors, rows and columns in the order averaged over (every arc lies
    above the diagonal)."""
    from bnexplore.viz.averaging import arc_posterior_heatmap

    post = posteriors(kind, name, n_rows, target, k)
    order = averaging_order(kind, name, n_rows, target, k)
    return arc_posterior_heatmap(post, order=order, width=860, height=620,
                                 title=f"Arc posteriors over L_{k}(pi), in the order pi")


def network_plot(kind, name, n_rows, target, k, n):
    """The summary network M* with the class node under its own name."""
    import networkx as nx
    from bnexplore.viz.averaging import summary_network_plot

    post, net, *_ = summary(kind, name, n_rows, target, k, n)
    dag = nx.relabel_nodes(net.dag, {_class_node(): target})
    return summary_network_plot(dag, post, target=target,
                                title=f"Summary network M* (n = {n}); arc width = posterior",
                                width=1000, responsive=True)


def roc_plot(kind, name, n_rows, target, k, n):
    """Held-out ROC curves of the four models for the least frequent class."""
    from bnexplore.metrics import auc, roc_curve
    from bnexplore.viz import roc_plot as plot_curves

    _, _, probas, yte, classes, _ = summary(kind, name, n_rows, target, k, n)
    pos = _positive(classes, yte)
    j = list(classes).index(pos)
    curves = {}
    for m, p in probas.items():
        fpr, tpr, _ = roc_curve(yte == pos, p[:, j], pos_label=True)
        curves[m] = (fpr, tpr, auc((yte == pos).astype(int), p[:, j]))
    # stretch with the page (a fixed width in a stretching pane makes HoloViews warn)
    return plot_curves(curves, title=f"Held-out ROC, positive class {target} = {pos}", height=460,
                       responsive=True).opts(min_width=300, max_width=700)


# The pictures are rendered once per setting for all sessions (apps/_render.py): a
# class of students moving to the same setting costs one render, not one each.
@guarded
def heatmap_view(kind, dataset, network, n_rows, target, k, n=None):
    """The arc posteriors; they do not depend on ``n`` (unused), so the page does not
    bind it and moving n does not redraw the heatmap."""
    name = network if kind == NETWORK else dataset
    return shared_fixed_pane(heatmap_plot, kind, name, n_rows, target, k)


@guarded
def network_view(kind, dataset, network, n_rows, target, k, n):
    name = network if kind == NETWORK else dataset
    return shared_dag_pane(network_plot, kind, name, n_rows, target, k, n)


@guarded
def roc_view(kind, dataset, network, n_rows, target, k, n):
    name = network if kind == NETWORK else dataset
    return shared_pane(roc_plot, kind, name, n_rows, target, k, n,
                       height=470, sizing_mode="stretch_width")


def create_app() -> pn.template.FastListTemplate:
    src = DataSource(default_dataset="vote", default_network="alarm", default_n=1000)
    target = pn.widgets.Select(name="Class node")
    k = param_slider("k", "k (max parents averaged)")
    n = param_slider("n", "n (max parents in M*)", value=4, end=10)

    def sync(*_):
        kind = src.kind.value
        name = src.network.value if kind == NETWORK else src.dataset.value
        try:
            df, default = frame(kind, name, int(src.sample_size.value))
        except Exception:  # noqa: BLE001 - the views show the error
            return
        cols = list(df.columns)
        target.options = cols
        if target.value not in cols:
            target.value = default
        n.end = min(max(len(cols) - 1, 2), PARAMETERS["n"][1])
        n.start = 1
        n.value = min(max(n.value, 1), n.end)

    for w in (src.kind, src.dataset, src.network, src.sample_size):
        w.param.watch(sync, "value")
    sync()

    def view(func, *settings):
        # computed in a worker thread (reactive): a long fit blocks no other session
        return reactive(func, src.kind, src.dataset, src.network, src.sample_size, target,
                        *settings)

    main = [pn.Column(view(summary_view, k, n), view(network_view, k, n),
                      view(heatmap_view, k), view(roc_view, k, n),
                      sizing_mode="stretch_width")]
    sidebar = [pn.pane.Markdown("### Data"), src.panel(), target,
               pn.pane.Markdown("### Averaging"), k, n]
    return make_template(TITLE, main=main, sidebar=sidebar, description=DESCRIPTION)


if __name__.startswith("bokeh"):
    serve(create_app)
