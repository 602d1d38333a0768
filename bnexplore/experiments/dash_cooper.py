"""Dash & Cooper (2003) experiments: Procedure 2, Tables 2-5.

* ``dash_cooper_table2``: percent difference in ROC area between exact model averaging
  over ``L_k(pi)`` and AMA over ``L_k^n(pi | D)`` as ``n``, ``N`` and ``k`` vary.
* ``dash_cooper_table3``: delta of AMA (n = 12) against GTT as ``N``, ``k``, ``K`` and
  ``N_r`` vary.
* ``dash_cooper_table4``: the same on ALARM samples, classifying KINKEDTUBE and
  ANAPHYLAXIS (k = 3, n = 10).

The paper's ``k`` (largest parent set of the averaged models) is the parameter and
column ``max_parents``; its ``K`` (in-degree bound of the random graph G(N, K)) stays
``K``.  Each trial takes its replicate's ``random_state`` (an int); ``k=`` and ``seed=``
are deprecated names of ``max_parents=`` and ``random_state=``.
* ``dash_cooper_table5``: SNN, GTT, NMA and AMA on the bundled UCI data sets; delta of
  the best classifier of each data set against every classifier, averaged over the
  one-vs-rest ROC curves of the class.

Procedure 2: a random graph G(N, K) (uniform over DAGs with in-degree <= K, binary
variables, CPT rows from a uniform Dirichlet generated lazily - only for parent
configurations that occur, as in the paper, so dense graphs stay feasible), N_r
training and N_test = 1000 test records, a class node drawn at random, the order
``pi`` a topological sort of the GTT graph, K2 prior, uniform structure prior,
``delta = (R1 - R2) / (1 - R2)``.  Module-level imports stay light (the registry
imports this module to list experiments).

Two conventions the paper does not state are parameters: ``ties``, the credit a tied
(positive, negative) pair of scores gets in the ROC area ("half", the Mann-Whitney
statistic and the trapezoidal area; "none"; "full"), and ``class_node``, how the class
node of a random graph is chosen ("random": any node; "root": a node without parents).
``dash_cooper_conventions`` runs Table 2's n rows and three Table 3 rows under each.
"""
from __future__ import annotations

from .registry import register
from .._deprecation import renamed
from .._validation import check_random_state

__all__ = ["lazy_random_sample", "table2_trial", "table3_trial", "table4_trial", "table5_trial",
           "conventions_trial", "summarise_conventions", "binary_auc", "choose_k"]

N_TEST = 1000
T2_N_VALUES = (1, 5, 7, 10, 12, 15)
TIES = ("half", "none", "full")
CLASS_NODES = ("random", "root")


def binary_auc(positive, score, ties: str = "half") -> float:
    """ROC area of ``score`` for the boolean labels ``positive``, ties credited as ``ties``.

    The probability that a random positive scores above a random negative, plus
    ``w`` times the probability of a tie, with ``w`` = 1/2 ("half", the usual
    Mann-Whitney / trapezoidal area), 0 ("none") or 1 ("full").

    Examples
    --------
    >>> y, s = [False, False, True, True], [0.1, 0.4, 0.4, 0.8]
    >>> [binary_auc(y, s, t) for t in ("none", "half", "full")]
    [0.75, 0.875, 1.0]
    """
    import numpy as np

    w = {"half": 0.5, "none": 0.0, "full": 1.0}.get(ties)
    if w is None:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    pos = np.asarray(positive, dtype=bool)
    s = np.asarray(score, dtype=float)
    neg = np.sort(s[~pos])
    below = np.searchsorted(neg, s[pos], side="left")      # negatives strictly below
    tied = np.searchsorted(neg, s[pos], side="right") - below
    return float((below.sum() + w * tied.sum()) / (pos.sum() * len(neg)))


@renamed(max_indegree="max_parents")
def lazy_random_sample(n_nodes: int, max_parents: int, n_rows: int, rng):
    """Sample a uniform random DAG G(N, K) with binary nodes, generating CPT rows lazily.

    Returns ``(DiscreteData, parents)``; ``parents[i]`` lists node ``i``'s parents.
    A CPT row (uniform Dirichlet) is drawn only for parent configurations that occur.
    """
    import numpy as np

    from ..data.core import DiscreteData
    from ..networks._random import _uniform_dag

    parents = _uniform_dag(int(n_nodes), int(max_parents), rng)
    import networkx as nx
    g = nx.DiGraph()
    g.add_nodes_from(range(n_nodes))
    g.add_edges_from((u, v) for v, ps in enumerate(parents) for u in ps)
    codes = np.zeros((n_rows, n_nodes), dtype=np.int32)
    for v in nx.topological_sort(g):
        ps = parents[v]
        if ps:
            _, inv = np.unique(codes[:, ps], axis=0, return_inverse=True)
            inv = inv.ravel()
            theta = rng.dirichlet([1.0, 1.0], size=int(inv.max()) + 1)[:, 1]
            p1 = theta[inv]
        else:
            p1 = np.full(n_rows, rng.dirichlet([1.0, 1.0])[1])
        codes[:, v] = (rng.random(n_rows) < p1).astype(np.int32)
    names = [f"X{i}" for i in range(n_nodes)]
    return DiscreteData(codes, names, [["s0", "s1"]] * n_nodes), parents


def _gtt_order(train):
    import networkx as nx

    from ..search import greedy_thick_thin

    res = greedy_thick_thin(train, prior="K2")
    pos = {v: i for i, v in enumerate(train.names)}
    return res, list(nx.lexicographical_topological_sort(res.dag, key=lambda v: pos[v]))


def _synthetic(n_nodes, K, n_records, random_state, class_node: str = "random"):
    """Training and test data of one Procedure-2 trial and the class column name.

    ``class_node``: "random" draws the class among all nodes, "root" among the nodes
    without parents.
    """
    import numpy as np

    if class_node not in CLASS_NODES:
        raise ValueError(f"class_node must be one of {CLASS_NODES}, got {class_node!r}")
    rng = check_random_state(random_state)
    K = int(rng.integers(1, n_nodes + 1)) if K is None or K == "uniform" else int(K)
    for _ in range(20):  # the class must take both values in training and test data
        data, parents = lazy_random_sample(n_nodes, K, n_records + N_TEST, rng)
        if class_node == "random":
            target = data.names[int(rng.integers(n_nodes))]
        else:
            roots = [v for v in range(n_nodes) if not parents[v]]
            target = data.names[roots[int(rng.integers(len(roots)))]]
        col = data.column(target)
        if len(np.unique(col[:n_records])) == 2 and len(np.unique(col[n_records:])) == 2:
            break
    else:
        raise RuntimeError("no class node took both values in 20 random graphs")
    train = data.take(np.arange(n_records))
    test = data.take(np.arange(n_records, n_records + N_TEST))
    return train, test, target, K


def _auc(test, target, proba, ties: str = "half"):
    from ..metrics import auc

    y = test.column(target)
    if ties == "half":
        return float(auc(y, proba, classes=list(range(proba.shape[1]))))
    if proba.shape[1] != 2:
        raise ValueError("ties other than 'half' need a binary class")
    return binary_auc(y == 1, proba[:, 1], ties)


def _ama_vs_gtt(train, test, target: str, max_parents: int, n: int, ties="half"):
    """AUC of AMA (max_parents, n; order = topological sort of GTT) and of GTT, and delta in percent.

    A tuple ``ties`` gives a list of such dicts, one per convention, from the same fits.
    """
    from ..averaging import OrderedAveraging
    from ..metrics import delta
    from ..networks import BayesNet

    res, order = _gtt_order(train)
    gtt = BayesNet.fit(res.dag, train, prior="K2")
    p_gtt = gtt.predict_proba(test, target)
    avg = OrderedAveraging(train, order=order, max_parents=max_parents)
    p_ama = avg.summary_network(n).predict_proba(test, target)
    out = []
    for t in (ties,) if isinstance(ties, str) else ties:
        r_gtt, r_ama = _auc(test, target, p_gtt, t), _auc(test, target, p_ama, t)
        d = 100.0 * delta(r_ama, r_gtt) if r_gtt < 1 else 0.0
        out.append({"auc_ama": r_ama, "auc_gtt": r_gtt, "delta_pct": float(d)})
    return out[0] if isinstance(ties, str) else out


@renamed(k="max_parents", seed="random_state")
def table2_trial(n_nodes: int, max_parents: int, n_records: int, random_state: int,
                 ties: str = "half", class_node: str = "random") -> list[dict]:
    """Exact MA over L_k(pi) vs AMA over L_k^n(pi|D): percent ROC-area difference per n.

    ``max_parents`` is the paper's k; ``random_state`` (an int) draws the graph, its
    CPTs, the records and the class node.  ``ties`` and ``class_node``: see the module
    docstring; ``ties="each"`` returns the rows of all three tie conventions (a ``ties``
    column) from the same fits.

    Examples
    --------
    >>> rows = table2_trial(n_nodes=5, max_parents=1, n_records=50, random_state=0)
    >>> [r["n"] for r in rows]
    [1, 5, 7, 10, 12, 15]
    """
    import numpy as np

    from ..averaging import OrderedAveraging

    train, test, target, K = _synthetic(n_nodes, None, n_records, random_state, class_node)
    _, order = _gtt_order(train)
    avg = OrderedAveraging(train, order=order, max_parents=max_parents)
    p_exact = avg.predict_proba(test, target)
    conventions = TIES if ties == "each" else (ties,)
    rows = []
    for n in T2_N_VALUES:
        p_ama = avg.summary_network(n).predict_proba(test, target)
        for t in conventions:
            r_exact, r_ama = _auc(test, target, p_exact, t), _auc(test, target, p_ama, t)
            row = {"n": n, "K": K, "auc_exact": r_exact, "auc_ama": r_ama,
                   "delta_pct": 100.0 * (r_exact - r_ama) / r_exact}
            if ties == "each":
                row = {"ties": t, **row, "distinct_ama_scores": int(len(np.unique(p_ama[:, 1])))}
            rows.append(row)
    return rows


@renamed(k="max_parents", seed="random_state")
def table3_trial(part: str, n_nodes: int, max_parents: int, K, n_records: int,
                 random_state: int, n: int = 12, ties: str = "half",
                 class_node: str = "random") -> dict | list[dict]:
    """AMA (summary network, n = 12) vs GTT on one random graph: delta in percent.

    ``max_parents`` is the paper's k, ``K`` the in-degree bound of G(N, K) ("uniform":
    drawn); ``ties="each"`` returns one row per tie convention (a ``ties`` column).

    Examples
    --------
    >>> r = table3_trial("N", n_nodes=5, max_parents=1, K=2, n_records=50, random_state=0)
    >>> sorted(r)
    ['K_used', 'auc_ama', 'auc_gtt', 'delta_pct']
    """
    train, test, target, K_used = _synthetic(n_nodes, K, n_records, random_state, class_node)
    if ties != "each":
        return {"K_used": K_used, **_ama_vs_gtt(train, test, target, max_parents, n, ties)}
    return [{"ties": t, "K_used": K_used, **r}
            for t, r in zip(TIES, _ama_vs_gtt(train, test, target, max_parents, n, TIES))]


@renamed(k="max_parents", seed="random_state")
def conventions_trial(table: str, n_nodes: int, max_parents: int, K, n_records: int,
                      class_node: str, random_state: int) -> list[dict]:
    """One Table 2 or Table 3 trial with every tie convention (``ties`` column).

    Table 2 rows carry ``n`` (the summary-network size); Table 3 rows ``n`` = 12.
    The same ``random_state`` and ``class_node="random"`` give the trials of
    ``dash_cooper_table2`` / ``dash_cooper_table3`` exactly.
    """
    if table == "2":   # K is a setting here: Table 2's drawn in-degree bound is K_used
        return [{("K_used" if c == "K" else c): v for c, v in r.items()}
                for r in table2_trial(n_nodes, max_parents, n_records, random_state,
                                      ties="each", class_node=class_node)]
    rows = table3_trial("", n_nodes, max_parents, K, n_records, random_state, ties="each",
                        class_node=class_node)
    return [{"n": 12, **r} for r in rows]


@renamed(k="max_parents", seed="random_state")
def table4_trial(target: str, n_records: int, random_state: int, max_parents: int = 3,
                 n: int = 10) -> dict:
    """ALARM samples: AMA (k = 3, n = 10) vs GTT classifying one node, delta in percent.

    ``max_parents`` is the paper's k; ``random_state`` (an int) draws the records.
    """
    import numpy as np

    from .. import networks

    bn = networks.load("alarm")
    rng = check_random_state(random_state)
    for _ in range(20):
        data = bn.sample(n_records + N_TEST, random_state=rng, as_frame=False)
        col = data.column(target)
        if len(np.unique(col[:n_records])) > 1 and len(np.unique(col[n_records:])) > 1:
            break
    train = data.take(np.arange(n_records))
    test = data.take(np.arange(n_records, n_records + N_TEST))
    return _ama_vs_gtt(train, test, target, max_parents, n)


def choose_k(n_nodes: int, max_families: int = 50_000) -> int:
    """Largest k <= N - 1 whose total order has at most ``max_families`` families
    (k = N for small N, as in the paper's Table 5)."""
    from ..averaging import count_parent_sets

    best = 1
    for k in range(1, n_nodes):
        if sum(count_parent_sets(i, k) for i in range(n_nodes)) <= max_families:
            best = k
    return best


@renamed(seed="random_state")
def table5_trial(dataset: str, fold: int, random_state: int, n_folds: int = 5,
                 n: int = 12) -> list[dict]:
    """SNN, GTT, NMA and AMA on one cross-validation fold of a bundled UCI data set.

    ``random_state`` (an int) shuffles the folds; AMA's ``max_parents`` (the paper's k,
    a column of the rows) is :func:`choose_k` of the number of attributes.
    Returns one row per (classifier, class value) with the one-vs-rest ROC area; the
    deltas against the best classifier are computed when the table is summarised
    (:func:`summarise_table5`).
    """
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    from .. import datasets
    from ..classifiers import AMA, GreedyThickThin, NaiveAveraging, NaiveBayes
    from ..metrics import roc_curve

    df = datasets.load(dataset, discretize="mdl", missing="state")
    target = df.attrs["target"]
    X, y = df.drop(columns=target), df[target].astype(str).to_numpy()
    counts = {c: int((y == c).sum()) for c in np.unique(y)}
    keep = np.isin(y, [c for c, m in counts.items() if m >= n_folds])
    X, y = X[keep].reset_index(drop=True), y[keep]
    skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
    tr, te = list(skf.split(X, y))[fold]
    k = choose_k(X.shape[1] + 1)
    models = {"SNN": NaiveBayes(), "GTT": GreedyThickThin(), "NMA": NaiveAveraging(),
              "AMA": AMA(max_parents=k, n=n, order="gtt")}
    rows = []
    from ..data.core import MemoryBudgetError
    for name, clf in models.items():
        while True:  # AMA: n = 12, lowered until the summary network fits the memory budget
            try:
                clf.fit(X.iloc[tr], y[tr])
                break
            except MemoryBudgetError:
                if name != "AMA" or clf.n <= 1:
                    raise
                clf.set_params(n=clf.n - 1)
        proba = clf.predict_proba(X.iloc[te])
        for j, c in enumerate(clf.classes_):
            pos = y[te] == c
            if pos.all() or not pos.any():
                continue
            fpr, tpr, _ = roc_curve(pos.astype(int), proba[:, j], pos_label=1)
            rows.append({"classifier": name, "class_value": str(c), "max_parents": k,
                         "n_used": clf.n if name == "AMA" else None,
                         "n_features": X.shape[1], "n_rows": len(y),
                         "auc": float(np.trapezoid(tpr, fpr))})
    return rows


def summarise_table5(df):
    """Per data set: mean over classes and folds of delta(best, classifier) (Table 5)."""
    import numpy as np
    import pandas as pd

    from ..metrics import delta

    g = df.groupby(["dataset", "class_value", "classifier"])["auc"].mean().unstack("classifier")
    out = []
    for (ds, _), row in g.iterrows():
        best = row.max()
        out.append({"dataset": ds, **{c: float(delta(best, v)) if v < 1 else 0.0
                                      for c, v in row.items()}})
    res = pd.DataFrame(out).groupby("dataset").mean()
    res["top_two"] = res.apply(lambda r: ",".join(r.nsmallest(2).index), axis=1)
    return res.round(3) if not res.empty else res.assign(**{c: np.nan for c in ()})


def summarise_conventions(df, z: float = 2.576):
    """Tables of ``dash_cooper_conventions``: mean delta (%) ± its 99% interval per cell.

    ``z`` times the standard error of the mean (the normal 99% interval, as on the
    reproduction page).  Returns ``(table2, table3)``: Table 2 indexed by ``n`` with one
    column per (class node, ties); Table 3 indexed by the row (N, K) with columns per
    class node and ties holding ``"mean ± half-width [median]"``; both carry the number
    of trials per cell in ``.attrs["trials"]`` and the random states in
    ``.attrs["random_states"]`` (a table of before 0.2.0, with a ``seed`` column, is read
    too).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"table": ["2", "2"], "class_node": "random", "ties": "half",
    ...                    "n": 1, "n_nodes": 15, "K": "uniform", "random_state": [0, 1],
    ...                    "delta_pct": [1.0, 3.0]})
    >>> t2, _ = summarise_conventions(df)
    >>> t2.loc[1, ("random", "half")]
    '2.0 ± 2.6'
    """
    import numpy as np
    import pandas as pd

    def cell(x, median=False):
        x = np.asarray(x, dtype=float)
        x = x[np.isfinite(x)]
        if len(x) == 0:
            return ""
        half = z * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan
        text = f"{_fmt(x.mean())} ± {_fmt(half)}"
        return text + (f" [{_fmt(np.median(x))}]" if median else "")

    from .runner import upgrade_columns

    df = upgrade_columns(df)
    df = df[df["error"].isna()] if "error" in df.columns else df
    df = df.assign(table=df["table"].astype(str))
    out = []
    for table, keys, median in (("2", ["n"], False), ("3", ["n_nodes", "K"], True)):
        sub = df[df["table"] == table]
        if sub.empty:
            out.append(pd.DataFrame())
            continue
        t = (sub.groupby(keys + ["class_node", "ties"])["delta_pct"]
             .apply(lambda x: cell(x, median)).unstack(["class_node", "ties"]))
        t.attrs["trials"] = int(sub.groupby(keys + ["class_node", "ties"]).size().min())
        t.attrs["random_states"] = sorted(int(v) for v in sub["random_state"].unique())
        out.append(t)
    return out[0], out[1]


def _fmt(v: float) -> str:
    """Two significant figures, as in the paper's tables (``.74``-style is left to the page)."""
    import math

    if not math.isfinite(v):
        return "nan"
    if v == 0 or abs(v) >= 10:
        return f"{v:.0f}" if abs(v) >= 10 else "0.0"
    digits = max(1 - int(math.floor(math.log10(abs(v)))), 0)
    return f"{v:.0f}" if abs(round(v, digits)) >= 10 else f"{v:.{digits}f}"


# --------------------------------------------------------------------------- registry
_T2_FULL = ([{"n_nodes": N, "max_parents": 1, "n_records": 100} for N in (15, 20, 30, 40, 50, 60, 80, 100)]
            + [{"n_nodes": 20, "max_parents": k, "n_records": 100} for k in (1, 2, 3, 4)])
register("dash_cooper_table2", table2_trial, grid=_T2_FULL,
         reduced_grid=[{"n_nodes": 15, "max_parents": 1, "n_records": 100}, {"n_nodes": 10, "max_parents": 2, "n_records": 100}],
         random_states=range(40), reduced_random_states=(0, 1),
         description="Dash & Cooper Table 2: exact MA vs AMA, percent ROC-area difference as n, N, k vary")

_T3_FULL = ([{"part": "N", "n_nodes": N, "max_parents": 2, "K": "uniform", "n_records": 100}
             for N in (5, 10, 20, 40, 80, 160)]
            + [{"part": "k", "n_nodes": 20, "max_parents": k, "K": "uniform", "n_records": 100} for k in range(1, 7)]
            + [{"part": "K", "n_nodes": 50, "max_parents": 2, "K": K, "n_records": 100} for K in (2, 4, 8, 16, 32, 50)]
            + [{"part": "N_r", "n_nodes": 20, "max_parents": 3, "K": "uniform", "n_records": r}
               for r in (25, 50, 100, 400, 800, 3200)])
register("dash_cooper_table3", table3_trial, grid=_T3_FULL,
         reduced_grid=[{"part": "N", "n_nodes": 10, "max_parents": 2, "K": "uniform", "n_records": 100},
                       {"part": "N_r", "n_nodes": 10, "max_parents": 2, "K": "uniform", "n_records": 50}],
         random_states=range(40), reduced_random_states=(0, 1),
         description="Dash & Cooper Table 3: AMA (n=12) vs GTT, delta as N, k, K, N_r vary")

_CONV_FULL = ([{"table": "2", "n_nodes": N, "max_parents": 1, "K": "uniform", "n_records": 100,
                "class_node": c} for c in CLASS_NODES for N in (15, 20, 30, 40, 50, 60, 80, 100)]
              + [{"table": "3", "n_nodes": N, "max_parents": 2, "K": K, "n_records": 100, "class_node": c}
                 for c in CLASS_NODES for N, K in ((80, "uniform"), (50, 8), (50, 16))])
register("dash_cooper_conventions", conventions_trial, grid=_CONV_FULL,
         reduced_grid=[{"table": t, "n_nodes": 10, "max_parents": 1, "K": "uniform", "n_records": 100,
                        "class_node": c} for t in ("2", "3") for c in CLASS_NODES],
         random_states=range(40), reduced_random_states=(0,),
         description="Dash & Cooper Tables 2-3 under each tie convention of the ROC area "
                     "(half / none / full credit) and class node (random / root)")

register("dash_cooper_table4", table4_trial,
         grid={"target": ["KINKEDTUBE", "ANAPHYLAXIS"], "n_records": [50, 100, 200, 400, 800, 3200]},
         reduced_grid={"target": ["KINKEDTUBE"], "n_records": [100]},
         random_states=range(40), reduced_random_states=(0,),
         description="Dash & Cooper Table 4: ALARM, AMA (k=3, n=10) vs GTT on KINKEDTUBE and ANAPHYLAXIS")

_UCI = ["breast-cancer", "contact-lenses", "credit-g", "diabetes", "glass", "ionosphere", "iris",
        "labor", "soybean", "vote"]
register("dash_cooper_table5", table5_trial,
         grid={"dataset": _UCI, "fold": list(range(5))},
         reduced_grid={"dataset": ["iris"], "fold": [0]},
         random_states=(0,), reduced_random_states=(0,),
         description="Dash & Cooper Table 5: SNN, GTT, NMA, AMA on bundled UCI data (delta vs best)")
