"""Cerquides & Lopez de Mantaras (2005), section 7: AODE vs BMAAODE vs MAP linear mixtures.

Two experiments are registered:

``cerquides_random_bn`` (Table 2)
    Random Bayesian networks with ``n_attributes + 1`` nodes (one of them, chosen at
    random, is the class), per-node arity uniform in ``2..max_arity`` and in-degree at
    most ``max_parents`` (standing in for BNGenerator's bound on the induced width),
    CPT rows ~ Dirichlet(1).  Each trial is one network: training samples of sizes
    25, 100, 400, 1600, 6400 (nested prefixes of one sample) and an independent test
    sample of 500.  One result row per sample size.
``cerquides_uci`` (Table 1)
    The bundled UCI data sets, numeric attributes discretised into 5 equal-frequency
    intervals (on all rows, before cross-validation, as Weka's unsupervised filter in
    the paper's setup), missing nominal values as their own state; one trial = one run
    of stratified k-fold CV, one result row per fold.

Every row holds ``<method>_<metric>`` for the methods AODE0, AODE30, BMAAODE, MAPLMG,
MAPLMD and the metrics ``auc`` (Hand & Till for several classes), ``er`` (error rate)
and ``logp`` (mean conditional log-likelihood, natural log, probabilities clipped at
1e-15).  :func:`wdl_table` turns the rows into the Wins/Draws/Losses of the paper's
tables with a two-sided paired t-test at 95% (over networks for each configuration of
Table 2; over the 100 folds of 10 x 10 CV for each data set of Table 1).

Examples
--------
>>> rows = random_bn_trial(n_attributes=4, max_arity=2, max_parents=2, max_size=100,
...                        random_state=0)
>>> [r["n_train"] for r in rows]
[25, 100]
>>> sorted(k for k in rows[0] if k.startswith("AODE0_"))
['AODE0_auc', 'AODE0_er', 'AODE0_logp']
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .registry import register
from .._deprecation import renamed
from .._validation import check_int, check_random_state

__all__ = ["METHODS", "COMPARISONS", "METRICS", "aligned_proba", "evaluate",
           "blanket_summary", "BLANKET_BINS", "bounded_width_network", "moral_width", "random_bn_trial", "random_bn_width_trial", "uci_trial", "wdl_table", "PAPER_TABLE1", "PAPER_TABLE2",
           "SAMPLE_SIZES", "UCI_DATASETS"]

SAMPLE_SIZES = (25, 100, 400, 1600, 6400)
N_TEST = 500
METRICS = ("auc", "er", "logp")
#: the comparisons of Tables 1 and 2, written "first-second": W = first is better.
COMPARISONS = (("AODE0", "AODE30"), ("AODE0", "BMAAODE"), ("MAPLMG", "AODE0"),
               ("MAPLMD", "AODE0"))
UCI_DATASETS = ("breast-cancer", "contact-lenses", "credit-g", "diabetes", "glass",
                "ionosphere", "iris", "labor", "segment-challenge", "soybean", "vote",
                "weather.nominal")

PAPER_TABLE1 = pd.DataFrame(
    {"AUC": ["7/24/7", "26/11/1", "12/20/6", "14/9/15"],
     "ER": ["10/22/6", "25/8/5", "18/18/2", "17/11/10"],
     "LogP": ["13/18/7", "29/4/5", "29/5/4", "26/6/6"]},
    index=["AODE0-AODE30", "AODE0-BMAAODE", "MAPLMGODE-AODE0", "MAPLMDODE-AODE0"])
PAPER_TABLE2 = pd.DataFrame(
    {"AUC": ["38/124/18", "101/77/2", "155/24/1", "176/4/0"],
     "ER": ["45/128/7", "90/83/7", "138/41/1", "145/27/8"],
     "LogP": ["85/92/3", "143/26/11", "151/17/12", "177/2/1"]},
    index=["AODE0-AODE30", "AODE0-BMAAODE", "MAPLMGODE-AODE0", "MAPLMDODE-AODE0"])


def METHODS() -> dict:
    """Fresh estimators of the compared methods (name -> unfitted classifier)."""
    from ..classifiers.mixtures import AODE, BMAAODE, MAPLMD, MAPLMG
    return {"AODE0": AODE(threshold=0), "AODE30": AODE(threshold=30), "BMAAODE": BMAAODE(),
            "MAPLMG": MAPLMG(), "MAPLMD": MAPLMD()}


def aligned_proba(clf, X, classes) -> np.ndarray:
    """``clf.predict_proba(X)`` with columns for every label in ``classes``.

    A class absent from the training fold (so from ``clf.classes_``) gets probability 0.

    Examples
    --------
    >>> import pandas as pd
    >>> from bnexplore.classifiers import AODE
    >>> clf = AODE().fit(pd.DataFrame({"a": ["x", "y"]}), ["p", "q"])
    >>> aligned_proba(clf, pd.DataFrame({"a": ["x"]}), ["p", "q", "r"]).shape
    (1, 3)
    """
    classes = list(classes)
    p = clf.predict_proba(X)
    out = np.zeros((p.shape[0], len(classes)))
    for k, c in enumerate(clf.classes_):
        if c not in classes:
            raise ValueError(f"class {c!r} of the classifier is not in classes={classes}")
        out[:, classes.index(c)] = p[:, k]
    return out


def evaluate(X_train, y_train, X_test, y_test, classes=None) -> dict:
    """Fit every method of :func:`METHODS` and return ``<method>_<metric>`` columns."""
    from ..metrics import auc, error_rate, log_loss

    classes = list(np.unique(np.concatenate([np.asarray(y_train), np.asarray(y_test)]))) \
        if classes is None else list(classes)
    y_test = np.asarray(y_test)
    out = {}
    for name, clf in METHODS().items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf.fit(X_train, y_train)
        p = aligned_proba(clf, X_test, classes)
        out[f"{name}_auc"] = (auc(y_test, p, classes=classes)
                              if len(np.unique(y_test)) > 1 else np.nan)
        out[f"{name}_er"] = error_rate(y_test, p, classes=classes)
        out[f"{name}_logp"] = -log_loss(y_test, p, classes=classes)
        if name in ("MAPLMG", "MAPLMD"):
            out[f"{name}_converged"] = bool(clf.converged_)
            out[f"{name}_warnings"] = len(caught)
        if name == "BMAAODE":
            out["BMAAODE_max_weight"] = float(clf.weights_.max())
    return out


@renamed(seed="random_state")
def bounded_width_network(n_nodes: int, width: int, max_arity: int, random_state=None,
                          concentration: float = 1.0):
    """A random connected Bayesian network whose moral graph has treewidth <= ``width``.

    Stands in for BNGenerator's networks with a bounded induced width (Ide & Cozman),
    which Cerquides & Lopez de Mantaras use.  The construction is a random *partial
    k-tree*: the nodes come in a random order; the first has no parent; every later
    node ``v`` picks an earlier node ``u`` and the clique ``K_u`` it was attached
    with (``u`` and its attachment set, at most ``width + 1`` nodes), drops random
    members until at most ``width`` are left (its attachment set ``C_v``) and takes a
    non-empty random subset of ``C_v`` (size uniform in ``1..|C_v|``) as parents.

    Why the width is bounded: let H be the graph joining every node to its attachment
    set.  Each node's earlier neighbours in H form a clique of H (``C_v`` lies inside
    ``K_u``, a clique), so the reverse node order eliminates H without fill-in and
    H is chordal with cliques of at most ``width + 1`` nodes: treewidth(H) <= width.
    The moral graph lies inside H - a node's parents are a subset of the clique
    ``C_v``, so marrying them adds only edges of H - hence its treewidth, the least
    induced width over elimination orders, is at most ``width``.  Every node after
    the first has a parent, so the network is connected; in-degrees are <= ``width``.
    Unlike BNGenerator's the graphs are not uniform over the constrained DAGs.

    States per node uniform in ``2..max_arity``, CPT rows ~ Dirichlet(concentration);
    ``random_state`` is an int, ``None`` or a ``numpy.random.Generator`` (``seed=`` is
    its deprecated name).

    Examples
    --------
    >>> import networkx as nx
    >>> bn = bounded_width_network(12, width=2, max_arity=3, random_state=0)
    >>> nx.is_weakly_connected(bn.dag), max(d for _, d in bn.dag.in_degree()) <= 2
    (True, True)
    """
    from ..networks import BayesNet

    n, w = check_int(n_nodes, "n_nodes", low=1), check_int(width, "width", low=1)
    rng = check_random_state(random_state)
    names = [f"X{i}" for i in range(n)]
    order = rng.permutation(n)               # construction order (names stay X0..)
    arity = rng.integers(2, max(int(max_arity), 2) + 1, size=n)
    parents: dict[int, list[int]] = {int(order[0]): []}
    clique = {int(order[0]): [int(order[0])]}      # K_v = C_v + [v]
    for i in range(1, n):
        v = int(order[i])
        u = int(order[rng.integers(i)])
        members = list(clique[u])
        rng.shuffle(members)
        attach = sorted(members[:w])
        k = int(rng.integers(1, len(attach) + 1))
        parents[v] = sorted(int(x) for x in rng.choice(attach, size=k, replace=False))
        clique[v] = attach + [v]
    par = {names[v]: [names[p] for p in ps] for v, ps in parents.items()}
    states = {names[v]: [f"s{j}" for j in range(arity[v])] for v in range(n)}
    cpts = {names[v]: rng.dirichlet(np.full(arity[v], float(concentration)),
                                    size=int(np.prod([arity[p] for p in parents[v]])))
            for v in range(n)}
    return BayesNet(par, states, cpts, name=f"random connected, treewidth <= {w}")


def moral_width(dag) -> int:
    """Upper bound on the treewidth of the moral graph of ``dag`` (min-fill heuristic)."""
    import networkx as nx
    from networkx.algorithms.approximation import treewidth_min_fill_in

    moral = nx.moral_graph(dag)
    return int(treewidth_min_fill_in(moral)[0]) if moral.number_of_edges() else 0


@renamed(max_indegree="max_parents", seed="random_state")
def random_bn_trial(n_attributes: int, max_arity: int, max_parents: int, random_state: int,
                    max_size: int = 6400, n_test: int = N_TEST) -> list[dict]:
    """One random network of section 7.1; one row per training size <= ``max_size``.

    ``max_parents`` bounds the in-degree of the random network; ``random_state`` (an
    int) draws it, its class node and the samples.
    """
    from .. import networks

    rng = check_random_state(random_state)
    arity = 2 if max_arity <= 2 else (2, int(max_arity))
    bn = networks.random_network(int(n_attributes) + 1, int(max_parents), arity=arity,
                                 random_state=rng, method="order")
    return _network_rows(bn, rng, max_size, n_test)


@renamed(seed="random_state")
def random_bn_width_trial(n_attributes: int, max_arity: int, induced_width: int,
                          random_state: int, max_size: int = 6400,
                          n_test: int = N_TEST) -> list[dict]:
    """Like :func:`random_bn_trial` on a connected network of treewidth <= ``induced_width``
    (:func:`bounded_width_network`); rows add ``moral_width`` (min-fill upper bound).

    Examples
    --------
    >>> rows = random_bn_width_trial(4, 2, 2, random_state=0, max_size=25)
    >>> rows[0]["mb_size"] > 0, rows[0]["moral_width"] <= 2
    (True, True)
    """
    rng = np.random.default_rng([int(random_state), 2005])
    bn = bounded_width_network(int(n_attributes) + 1, int(induced_width), int(max_arity), rng)
    rows = _network_rows(bn, rng, max_size, n_test)
    width = moral_width(bn.dag)
    for r in rows:
        r["moral_width"] = width
    return rows


def _network_rows(bn, rng, max_size: int, n_test: int) -> list[dict]:
    """A random class node of ``bn``, nested training samples and one test sample; one
    row of :func:`evaluate` per training size."""
    target = bn.nodes[int(rng.integers(len(bn.nodes)))]
    sizes = [s for s in SAMPLE_SIZES if s <= max_size]
    train = bn.sample(max(sizes), random_state=rng)
    test = bn.sample(int(n_test), random_state=rng)
    classes = list(test[target].cat.categories)
    rows = []
    for n in sizes:
        tr = train.iloc[:n]
        row = {"n_train": n, "target": target, "n_arcs": bn.dag.number_of_edges(),
               "mb_size": len(bn.markov_blanket(target))}
        if tr[target].nunique() < 2:
            row["skipped"] = "one class in the training sample"
            rows.append(row)
            continue
        Xtr, ytr = tr.drop(columns=[target]), tr[target].astype(str).to_numpy()
        Xte, yte = test.drop(columns=[target]), test[target].astype(str).to_numpy()
        row.update(evaluate(Xtr, ytr, Xte, yte, classes=[str(c) for c in classes]))
        rows.append(row)
    return rows


@renamed(seed="random_state")
def uci_trial(dataset: str, random_state: int, n_folds: int = 10) -> list[dict]:
    """One run of stratified ``n_folds``-fold CV on a bundled UCI set; one row per fold.

    ``random_state`` (an int) shuffles the folds.
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    from .. import datasets

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = datasets.load(dataset, discretize="quantile", n_bins=5, missing="state")
    target = df.attrs["target"]
    X = df.drop(columns=[target])
    y = df[target].astype(str).to_numpy()
    classes = sorted(np.unique(y))
    counts = pd.Series(y).value_counts()
    splitter = (StratifiedKFold(n_folds, shuffle=True, random_state=random_state)
                if counts.min() >= n_folds
                else KFold(n_folds, shuffle=True, random_state=random_state))
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        splits = list(splitter.split(X, y))
    for k, (tr, te) in enumerate(splits):
        row = {"fold": k, "n_train": len(tr)}
        if len(np.unique(y[tr])) < 2:
            row["skipped"] = "one class in the training fold"
        else:
            row.update(evaluate(X.iloc[tr], y[tr], X.iloc[te], y[te], classes=classes))
        rows.append(row)
    return rows


@renamed(alpha="level")
def wdl_table(results: pd.DataFrame, by: list[str], level: float = 0.05,
              comparisons=COMPARISONS, metrics=METRICS) -> pd.DataFrame:
    """Wins/Draws/Losses at a two-sided paired t-test, as in Tables 1 and 2.

    Rows of ``results`` are grouped by ``by`` (one group = one configuration or data
    set); within a group, the paired samples are the rows (networks or folds).  For a
    comparison ``A-B`` a win means A is significantly better (higher AUC, lower error,
    higher log-likelihood) at significance level ``level`` (as
    :func:`~bnexplore.experiments.compare.paired_test`; ``alpha=`` is its deprecated
    name); equal samples are a draw.

    Two degenerate groups are decided without the t-test, whose statistic is 0/0 or
    c/0 there (and whose p-value then depends on rounding):

    * every paired difference is zero (up to rounding, ``np.allclose(diff, 0)``): a draw;
    * every paired difference is the same non-zero number (a spread of at most 1e-12
      of its size): a win or a loss by its sign.  This is the t-test's limit as the
      spread goes to zero with the mean fixed (the p-value tends to 0): A was better
      (or worse) on every network or fold by the same amount.

    Returns
    -------
    DataFrame
        Index ``"A-B"``, columns ``AUC``, ``ER``, ``LogP`` with ``"W/D/L"`` strings; the
        counts are in ``.attrs["counts"]``.
    """
    from scipy.stats import ttest_rel

    names = {"auc": "AUC", "er": "ER", "logp": "LogP"}
    better_high = {"auc": True, "er": False, "logp": True}
    table, counts = {}, {}
    for a, b in comparisons:
        key = f"{a}-{b}"
        table[key], counts[key] = {}, {}
        for met in metrics:
            w = d = l_ = 0
            ca, cb = f"{a}_{met}", f"{b}_{met}"
            if ca not in results or cb not in results:
                continue
            for _, g in results.groupby(by, sort=True):
                g = g[[ca, cb]].dropna()
                if len(g) < 2:
                    continue
                diff = g[ca].to_numpy() - g[cb].to_numpy()
                if not better_high[met]:
                    diff = -diff
                if np.allclose(diff, 0):                           # identical: a draw
                    d += 1
                    continue
                if np.ptp(diff) <= 1e-12 * np.abs(diff).max():      # constant, non-zero
                    w, l_ = (w + 1, l_) if diff[0] > 0 else (w, l_ + 1)
                    continue
                p = ttest_rel(g[ca], g[cb]).pvalue
                if p < level:
                    w, l_ = (w + 1, l_) if diff.mean() > 0 else (w, l_ + 1)
                else:
                    d += 1
            table[key][names[met]] = f"{w}/{d}/{l_}"
            counts[key][names[met]] = (w, d, l_)
    out = pd.DataFrame(table).T
    out.attrs["counts"] = counts
    return out


#: bins of the class's Markov-blanket size in :func:`blanket_summary`
BLANKET_BINS = ((0, 0, "0"), (1, 1, "1"), (2, 2, "2"), (3, 4, "3-4"), (5, 8, "5-8"),
                (9, 10**9, "9+"))


def blanket_summary(results: pd.DataFrame, first: str = "AODE0", second: str = "BMAAODE"
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``first``'s margin over ``second`` by the size of the class's Markov blanket.

    ``results`` are rows of ``cerquides_random_bn`` (or ``cerquides_random_bn_width``),
    one per network and training size, with the ``mb_size`` column.  Returns

    * per blanket bin (:data:`BLANKET_BINS`): the share of networks, the number of rows,
      the mean AUC margin and its standard error, the shares of rows where ``first`` /
      ``second`` has the higher AUC, the mean error margin (``second``'s error minus
      ``first``'s) and the mean log-likelihood margin;
    * the mean AUC margin by blanket bin (rows) and training size (columns).

    Examples
    --------
    >>> df = pd.DataFrame({"trial_id": ["a", "a", "b"], "n_train": [25, 100, 25],
    ...                    "mb_size": [0, 0, 3], "AODE0_auc": [.6, .7, .8],
    ...                    "BMAAODE_auc": [.5, .7, .9], "AODE0_er": [.3, .3, .2],
    ...                    "BMAAODE_er": [.4, .3, .2], "AODE0_logp": [-1, -1, -1],
    ...                    "BMAAODE_logp": [-2, -1, -1]})
    >>> by_bin, by_size = blanket_summary(df)
    >>> by_bin.loc["0", ["networks_pct", "rows", "auc_margin"]].round(3).tolist()
    [50.0, 2.0, 0.05]
    """
    labels = [b[2] for b in BLANKET_BINS]

    def bin_of(sizes):
        out = pd.Series(pd.NA, index=sizes.index, dtype=object)
        for lo, hi, lab in BLANKET_BINS:
            out[(sizes >= lo) & (sizes <= hi)] = lab
        return pd.Categorical(out, categories=labels, ordered=True)

    networks = results.drop_duplicates("trial_id")
    share = (pd.Series(bin_of(networks["mb_size"])).value_counts(normalize=True)
             .reindex(labels).fillna(0.0) * 100)
    ok = results[f"{first}_auc"].notna() & results[f"{second}_auc"].notna()
    x = results[ok]
    margin = x[f"{first}_auc"] - x[f"{second}_auc"]
    frame = pd.DataFrame({
        "bin": bin_of(x["mb_size"]), "n_train": x["n_train"], "m": margin,
        "first_higher": margin > 0, "second_higher": margin < 0,
        "er": x[f"{second}_er"] - x[f"{first}_er"],
        "logp": x[f"{first}_logp"] - x[f"{second}_logp"]})
    g = frame.groupby("bin", observed=False)
    by_bin = pd.DataFrame({
        "networks_pct": share, "rows": g["m"].size().astype(float),
        "auc_margin": g["m"].mean(), "auc_se": g["m"].sem(),
        f"{first}_higher_pct": g["first_higher"].mean() * 100,
        f"{second}_higher_pct": g["second_higher"].mean() * 100,
        "er_margin": g["er"].mean(), "logp_margin": g["logp"].mean()})
    by_size = frame.pivot_table(index="bin", columns="n_train", values="m", aggfunc="mean",
                                observed=False)
    return by_bin, by_size


# --------------------------------------------------------------------------- registry
register(
    "cerquides_random_bn",
    random_bn_trial,
    grid={"n_attributes": [5, 10, 20, 40], "max_arity": [2, 5, 10], "max_parents": [2, 3, 4],
          "max_size": 6400},
    reduced_grid={"n_attributes": [5], "max_arity": [2, 5], "max_parents": [2],
                  "max_size": 400},
    random_states=range(100),
    reduced_random_states=range(4),
    description="Cerquides & Lopez de Mantaras Table 2: AODE0/AODE30/BMAAODE/MAPLMG/MAPLMD "
                "on random Bayesian networks (AUC, error, log-likelihood)",
)

register(
    "cerquides_random_bn_width",
    random_bn_width_trial,
    grid={"n_attributes": [5, 10, 20, 40], "max_arity": [2, 5, 10], "induced_width": [2, 3, 4],
          "max_size": 6400},
    reduced_grid={"n_attributes": [5], "max_arity": [2, 5], "induced_width": [2],
                  "max_size": 400},
    random_states=range(100),
    reduced_random_states=range(4),
    description="Cerquides & Lopez de Mantaras Table 2 on connected random networks of "
                "treewidth <= 2, 3, 4 (BNGenerator's induced-width bound; random partial "
                "k-trees)",
)

register(
    "cerquides_uci",
    uci_trial,
    grid={"dataset": list(UCI_DATASETS), "n_folds": 10},
    reduced_grid={"dataset": ["iris", "labor"], "n_folds": 3},
    random_states=range(10),
    reduced_random_states=(0,),
    description="Cerquides & Lopez de Mantaras Table 1: the ODE mixtures on the bundled UCI "
                "sets, 5-bin equal-frequency discretisation, 10 x 10-fold CV",
)
