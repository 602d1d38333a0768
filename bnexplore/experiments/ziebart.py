"""Ziebart, Dey & Bagnell (UAI 2007): the experiments of Figures 4 and 6-10.

* ``ziebart_uci`` (Figures 6-9): 10-fold cross-validated accuracy of NB, TAN, FAN,
  STAN and SFAN (all MAP, BDeu with prior weight 10) on bundled UCI sets with 0, 5 or
  20 uniform random binary features added; rows with missing values removed; MDL
  (Fayyad-Irani) discretisation learnt inside each training fold; three CV random states.
* ``ziebart_weak`` (Figure 10): 10 binary features weakly tied to the class
  (``p(F_i = C) = 0.6``) and 20 irrelevant ones, 100 training and 100 test rows, SFAN
  accuracy against the exclusion penalty (column ``penalty``) in 0..6 (and FAN =
  penalty infinite), for BDeu prior weights 1, 3 and 10 (the paper states 10 only for
  its UCI experiments).
* ``ziebart_dbn`` (Figure 4): a random two-slice DBN (intra-slice forest, up to two
  inter-slice parents) generates 500 / 1000 training steps and 1000 test steps; the
  average withheld ``log P(X_t | X_{t-1})`` of No structure, Intra, Inter(k), MAP SCF(k)
  and BMA SCF(k) (BDeu, ess 20).
* ``ziebart_bat`` (Figure 4, the paper's second data set): the same models on the
  Bayesian Automated Taxi DBN (Forbes, Huang, Kanazawa & Russell 1995; the two-slice
  structure as given by Boyen & Koller 1998 and Kevin Murphy's BNT): 28 binary nodes,
  26 intra-slice and 16 inter-slice arcs (:data:`BAT_INTRA`, :data:`BAT_INTER`), with
  random CPTs (the paper does not give BAT's parameters): ``cpts="bnt"`` draws every
  CPT row as independent uniform numbers, normalised (BNT's random tabular CPDs, which
  its BAT model uses), ``cpts="dirichlet"`` Dirichlet(0.5) rows as the random DBN above.
  BAT is *outside* SCF(2): seven nodes have two intra-slice parents (the slice is not
  a forest) and LatAct has five inter-slice parents, FwdAct three.

Module-level imports are light; the trials import what they need.
"""
from __future__ import annotations

from .registry import register
from .runner import RESULT_COLUMNS_ATTR
from .._deprecation import renamed
from .._validation import check_random_state

__all__ = ["uci_trial", "weak_trial", "dbn_trial", "bat_trial", "bat_dbn", "sample_bat",
           "weak_features", "UCI_SETS", "BAT_NODES", "BAT_INTRA", "BAT_INTER"]

#: The eight bundled UCI sets used for Figures 6-9 (the paper does not name its eight).
UCI_SETS = ["breast-cancer", "credit-g", "diabetes", "glass", "ionosphere", "iris", "soybean", "vote"]
CLASSIFIERS = ["NB", "TAN", "FAN", "STAN", "SFAN"]
ALPHAS = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, float("inf")]


#: The BAT DBN's 28 nodes (all binary).
BAT_NODES = ("LeftClr", "RightClr", "LatAct", "Xdot", "InLane", "FwdAct", "Ydot", "Stopped",
             "EngStatus", "FBStatus", "LeftClrSens", "RightClrSens", "TurnSignalSens",
             "XdotSens", "YdotSens", "FYdotDiffSens", "FclrSens", "BXdotSens", "BclrSens",
             "BYdotDiffSens", "SensorValid", "FYdotDiff", "FcloseSlow", "Fclr", "BXdot",
             "BcloseFast", "Bclr", "BYdotDiff")
#: Its 26 intra-slice arcs (parent, child), both in slice t.
BAT_INTRA = (
    ("LeftClr", "LeftClrSens"), ("RightClr", "RightClrSens"), ("LatAct", "TurnSignalSens"),
    ("LatAct", "Xdot"), ("Xdot", "XdotSens"), ("FwdAct", "Ydot"), ("Ydot", "YdotSens"),
    ("Ydot", "Stopped"), ("EngStatus", "Ydot"), ("EngStatus", "FYdotDiff"),
    ("EngStatus", "Fclr"), ("EngStatus", "BXdot"), ("SensorValid", "XdotSens"),
    ("SensorValid", "YdotSens"), ("FYdotDiff", "FYdotDiffSens"), ("FYdotDiff", "FcloseSlow"),
    ("FcloseSlow", "FBStatus"), ("Fclr", "FclrSens"), ("Fclr", "FcloseSlow"),
    ("BXdot", "BXdotSens"), ("Bclr", "BclrSens"), ("Bclr", "BXdot"), ("Bclr", "BcloseFast"),
    ("BcloseFast", "FBStatus"), ("BYdotDiff", "BYdotDiffSens"), ("BYdotDiff", "BcloseFast"))
#: Its 16 inter-slice arcs (parent in slice t-1, child in slice t).
BAT_INTER = (
    ("LeftClr", "LeftClr"), ("LeftClr", "LatAct"), ("RightClr", "RightClr"),
    ("RightClr", "LatAct"), ("LatAct", "LatAct"), ("LatAct", "FwdAct"), ("Xdot", "Xdot"),
    ("Xdot", "InLane"), ("InLane", "InLane"), ("InLane", "LatAct"), ("FwdAct", "FwdAct"),
    ("Ydot", "Ydot"), ("Stopped", "Stopped"), ("EngStatus", "EngStatus"),
    ("FBStatus", "FwdAct"), ("FBStatus", "LatAct"))


def _make(name: str, ess: float):
    from bnexplore.classifiers import FAN, SFAN, STAN, TAN, NaiveBayes
    return {"NB": NaiveBayes(prior="BDeu", ess=ess), "TAN": TAN(ess=ess), "FAN": FAN(ess=ess),
            "STAN": STAN(ess=ess), "SFAN": SFAN(ess=ess)}[name]


@renamed(seed="random_state")
def uci_trial(dataset: str, n_noise: int, n_folds: int, random_state: int, ess: float = 10.0,
              min_class_rows: int = 0) -> list[dict]:
    """10-fold CV accuracy of NB/TAN/FAN/STAN/SFAN with ``n_noise`` random binary features.

    ``random_state`` (an int) draws the added features and the folds.  ``min_class_rows``
    drops the rows of
    classes with fewer rows (0, the default, keeps every row as the paper does; an
    earlier run used 10, which drops glass's 9 "tableware" rows and nothing else).

    Examples
    --------
    >>> rows = uci_trial("iris", n_noise=2, n_folds=3, random_state=0)
    >>> sorted(r["classifier"] for r in rows)
    ['FAN', 'NB', 'SFAN', 'STAN', 'TAN']
    """
    import warnings

    import numpy as np
    import pandas as pd
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline

    import bnexplore as bx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        df = bx.datasets.load(dataset, missing="drop")
    target = df.attrs["target"]
    X, y = df.drop(columns=[target]), df[target].astype(str).to_numpy()
    rng = check_random_state(random_state)
    for i in range(n_noise):
        X[f"noise{i:02d}"] = pd.Categorical(rng.integers(0, 2, len(X)), categories=[0, 1])
    if min_class_rows > 0:
        vals, cnt = np.unique(y, return_counts=True)
        keep = np.isin(y, vals[cnt >= min_class_rows])
        X, y = X.loc[keep].reset_index(drop=True), y[keep]
    folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=random_state)
    correct = {c: 0 for c in CLASSIFIERS}
    with warnings.catch_warnings():
        # a class with fewer rows than folds is missing from some test folds: allowed
        warnings.filterwarnings("ignore", message="The least populated class")
        splits = list(folds.split(X, y))
    for tr, te in splits:
        for c in CLASSIFIERS:
            pipe = make_pipeline(bx.data.MDLDiscretizer(columns="numeric"), _make(c, ess))
            pipe.fit(X.iloc[tr], y[tr])
            correct[c] += int((pipe.predict(X.iloc[te]) == y[te]).sum())
    return [{"classifier": c, "accuracy": correct[c] / len(y), "n_rows": int(len(y)),
             "n_features": int(X.shape[1])} for c in CLASSIFIERS]


@renamed(seed="random_state")
def weak_features(n: int, n_weak: int = 10, n_noise: int = 20, p_match: float = 0.6, random_state=None):
    """The synthetic set of Figure 10: ``n_weak`` features equal to the class with probability
    ``p_match``, ``n_noise`` independent uniform binary features."""
    import numpy as np
    import pandas as pd

    rng = check_random_state(random_state)
    y = rng.integers(0, 2, n)
    cols = {}
    for i in range(n_weak):
        cols[f"weak{i:02d}"] = np.where(rng.random(n) < p_match, y, 1 - y)
    for i in range(n_noise):
        cols[f"noise{i:02d}"] = rng.integers(0, 2, n)
    X = pd.DataFrame({k: pd.Categorical(v, categories=[0, 1]) for k, v in cols.items()})
    return X, y


def _dbn_model_rows(train, test, ess: float, bma_k2: bool) -> list[dict]:
    """Mean test log-likelihood per slice and fit time of the Section 5.1 models."""
    import time

    from bnexplore.forests import DBNSCF

    models = [("No structure", dict(max_parents=0, intra="none")),
              ("Intra", dict(max_parents=0)),
              ("Inter(1)", dict(max_parents=1, intra="none")),
              ("Inter(2)", dict(max_parents=2, intra="none")),
              ("MAP SCF(1)", dict(max_parents=1)),
              ("MAP SCF(2)", dict(max_parents=2)),
              ("BMA SCF(1)", dict(max_parents=1, averaging="bma"))]
    if bma_k2:
        models.append(("BMA SCF(2)", dict(max_parents=2, averaging="bma")))
    rows = []
    for name, kw in models:
        t = time.perf_counter()
        m = DBNSCF(ess=ess, **kw).fit(train)
        rows.append({"model": name, "log_prob": m.mean_log_prob(test),
                     "seconds": time.perf_counter() - t})
    return rows


@renamed(seed="random_state")
def weak_trial(n_train: int, n_test: int, n_weak: int, n_noise: int, random_state: int,
               ess: float = 10.0) -> list[dict]:
    """SFAN accuracy against the exclusion penalty on the weak-features set (Figure 10).

    Examples
    --------
    >>> rows = weak_trial(100, 100, 10, 20, random_state=0)
    >>> len(rows) == len(ALPHAS) + 1   # the last row is naive Bayes (penalty -1)
    True
    """
    from bnexplore.classifiers import SFAN, NaiveBayes

    X, y = weak_features(n_train + n_test, n_weak, n_noise, random_state=random_state)
    Xtr, ytr, Xte, yte = X.iloc[:n_train], y[:n_train], X.iloc[n_train:], y[n_train:]
    rows = []
    for a in ALPHAS:
        clf = SFAN(penalty=a, ess=ess).fit(Xtr, ytr)
        mb = clf.markov_blanket_
        rows.append({"penalty": a, "accuracy": float((clf.predict(Xte) == yte).mean()),
                     "weak_in_mb": sum(f.startswith("weak") for f in mb),
                     "noise_in_mb": sum(f.startswith("noise") for f in mb)})
    nb = NaiveBayes(prior="BDeu", ess=ess).fit(Xtr, ytr)
    rows.append({"penalty": -1.0, "accuracy": float((nb.predict(Xte) == yte).mean()),
                 "weak_in_mb": n_weak, "noise_in_mb": n_noise})  # penalty -1 marks naive Bayes
    return rows


#: results files written before 0.2.0 call ``penalty`` ``alpha`` (renamed on resume).
setattr(weak_trial, RESULT_COLUMNS_ATTR, ("penalty", "accuracy", "weak_in_mb", "noise_in_mb"))


@renamed(seed="random_state")
def dbn_trial(n_train: int, n_vars: int, random_state: int, n_test: int = 1000,
              ess: float = 20.0,
              bma_k2: bool = True) -> list[dict]:
    """Average withheld log P(X_t | X_{t-1}) of the Figure 4 models on a random two-slice DBN.

    Examples
    --------
    >>> rows = dbn_trial(200, 5, random_state=0, n_test=200, bma_k2=False)
    >>> {r["model"] for r in rows} >= {"No structure", "MAP SCF(1)", "BMA SCF(1)"}
    True
    """
    import numpy as np

    from bnexplore.forests import random_dbn, sample_dbn

    rng = check_random_state(random_state)
    dbn = random_dbn(n_vars, max_inter=2, random_state=rng)
    train = sample_dbn(dbn, n_train, random_state=rng)
    test = sample_dbn(dbn, n_test, random_state=rng)
    return _dbn_model_rows(train, test, ess, bma_k2)


@renamed(seed="random_state")
def bat_dbn(cpts: str = "bnt", random_state=None, concentration: float = 0.5) -> dict:
    """The BAT two-slice DBN with random CPTs.

    Parameters
    ----------
    cpts : {"bnt", "dirichlet"}
        Every CPT row is independent uniform numbers normalised to one ("bnt", as BNT's
        random tabular CPDs) or a Dirichlet(``concentration``) draw ("dirichlet").
    random_state : int or numpy Generator
    concentration : float
        Of the Dirichlet rows (``cpts="dirichlet"``).

    Returns
    -------
    dict
        ``names``, ``order`` (a topological order of the slice), ``inter`` and ``intra``
        (parent index lists per node) and ``cpts`` (per node an array
        ``(2 ** n_parents, 2)``; parents ordered inter then intra, the last varying
        fastest).

    Examples
    --------
    >>> bat = bat_dbn(random_state=0)
    >>> len(bat["names"]), sum(map(len, bat["intra"])), sum(map(len, bat["inter"]))
    (28, 26, 16)
    >>> max(map(len, bat["intra"])), max(map(len, bat["inter"]))   # outside SCF(2)
    (2, 5)
    """
    import networkx as nx
    import numpy as np

    rng = check_random_state(random_state)
    names = list(BAT_NODES)
    idx = {n: i for i, n in enumerate(names)}
    intra = [sorted(idx[p] for p, c in BAT_INTRA if c == n) for n in names]
    inter = [sorted(idx[p] for p, c in BAT_INTER if c == n) for n in names]
    g = nx.DiGraph()
    g.add_nodes_from(range(len(names)))
    g.add_edges_from((idx[p], idx[c]) for p, c in BAT_INTRA)
    order = list(nx.lexicographical_topological_sort(g))
    if cpts not in ("bnt", "dirichlet"):
        raise ValueError(f"cpts must be 'bnt' or 'dirichlet', got {cpts!r}")
    tables = []
    for i in range(len(names)):
        q = 2 ** (len(inter[i]) + len(intra[i]))
        if cpts == "bnt":
            u = rng.random((q, 2))
            tables.append(u / u.sum(axis=1, keepdims=True))
        else:
            tables.append(rng.dirichlet(np.full(2, concentration), size=q))
    return {"names": names, "order": order, "inter": inter, "intra": intra, "cpts": tables}


@renamed(seed="random_state")
def sample_bat(bat: dict, n_steps: int, random_state=None, burn_in: int = 50):
    """``n_steps`` consecutive slices of :func:`bat_dbn` after ``burn_in`` (a DataFrame of 0/1)."""
    import numpy as np
    import pandas as pd

    rng = check_random_state(random_state)
    m = len(bat["names"])
    x = rng.integers(0, 2, size=m)
    out = np.empty((n_steps, m), dtype=np.int64)
    u = rng.random((n_steps + burn_in, m))
    for t in range(n_steps + burn_in):
        new = np.empty(m, dtype=np.int64)
        for i in bat["order"]:
            z = 0
            for p in bat["inter"][i]:
                z = 2 * z + x[p]
            for p in bat["intra"][i]:
                z = 2 * z + new[p]
            new[i] = int(u[t, i] >= bat["cpts"][i][z, 0])
        x = new
        if t >= burn_in:
            out[t - burn_in] = x
    return pd.DataFrame({n: pd.Categorical(out[:, i], categories=[0, 1])
                         for i, n in enumerate(bat["names"])})


@renamed(seed="random_state")
def bat_trial(n_train: int, random_state: int, cpts: str = "bnt", n_test: int = 1000,
              ess: float = 20.0,
              bma_k2: bool = False) -> list[dict]:
    """Figure 4's models on the BAT DBN: average withheld log P(X_t | X_{t-1}) per step.

    ``bma_k2`` adds BMA SCF(2) (about ten times the cost of all the other models).

    Examples
    --------
    >>> rows = bat_trial(100, random_state=0, n_test=100)    # doctest: +SKIP
    >>> best_inter = max(r["log_prob"] for r in rows if r["model"].startswith("Inter"))  # doctest: +SKIP
    >>> [r["model"] for r in rows][-1], bool(rows[4]["log_prob"] > best_inter)   # doctest: +SKIP
    ('BMA SCF(1)', True)
    """
    import numpy as np

    rng = check_random_state(random_state)
    bat = bat_dbn(cpts, random_state=rng)
    train = sample_bat(bat, n_train, random_state=rng)
    test = sample_bat(bat, n_test, random_state=rng)
    return _dbn_model_rows(train, test, ess, bma_k2)


register("ziebart_uci", uci_trial,
         grid={"dataset": UCI_SETS, "n_noise": [0, 5, 20], "n_folds": [10],
               "min_class_rows": [0]},
         reduced_grid={"dataset": ["iris", "vote"], "n_noise": [0, 20], "n_folds": [3]},
         random_states=(0, 1, 2), reduced_random_states=(0,),
         description="Figures 6-9: CV accuracy of NB/TAN/FAN/STAN/SFAN with 0/5/20 random features")
register("ziebart_weak", weak_trial,
         grid={"n_train": [100], "n_test": [100], "n_weak": [10], "n_noise": [20],
               "ess": [1.0, 3.0, 10.0]},
         reduced_grid={"n_train": [100], "n_test": [100], "n_weak": [10], "n_noise": [20],
                       "ess": [10.0]},
         random_states=range(100), reduced_random_states=range(5),
         description="Figure 10: SFAN accuracy against the exclusion penalty (weak features)")
register("ziebart_dbn", dbn_trial,
         grid={"n_train": [500, 1000], "n_vars": [20]},
         reduced_grid=[{"n_train": 300, "n_vars": 6, "n_test": 300, "bma_k2": False}],
         random_states=range(5), reduced_random_states=(0,),
         description="Figure 4: withheld log P(X_t|X_t-1) of SCF DBNs vs subclasses")
register("ziebart_bat", bat_trial,
         grid={"n_train": [500, 1000], "cpts": ["bnt", "dirichlet"]},
         reduced_grid=[{"n_train": 200, "n_test": 200, "cpts": "bnt"}],
         random_states=range(5), reduced_random_states=(0,),
         description="Figure 4 on the BAT DBN (28 binary nodes, 26 intra- and 16 inter-slice "
                     "arcs, random CPTs): withheld log P(X_t|X_t-1) of SCF DBNs vs subclasses")
