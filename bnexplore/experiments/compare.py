"""Compare classifiers by stratified cross-validation: ROC curves, AUC, error, log loss.

Every classifier of :mod:`bnexplore.classifiers` (SNN/NB, NMA, GTT, AMA, AODE, BMAAODE,
MAPLMD, MAPLMG, TAN, FAN, STAN, SFAN, ISMB and variants) plus two scikit-learn
baselines (logistic regression and k-nearest neighbours on a one-hot encoding) is
evaluated on the same stratified folds.  The out-of-fold class probabilities of all
rows are pooled and scored with :mod:`bnexplore.metrics`:

* ``error`` (misclassification rate), ``auc`` (Hand & Till's M; the plain AUC for two
  classes), ``log_loss`` (natural log), ``squared_error`` (multi-class Brier / 2),
* ``cal`` - the CAL calibration score of Caruana & Niculescu-Mizil averaged over the
  one-vs-rest problems of the classes (the positive class only, for two classes),
* ``delta`` - Dash & Cooper's share of missing ROC area (Procedure 2 as used in their
  Table 5): for every class ``c`` the one-vs-rest ROC area ``R_i(c)`` of classifier
  ``i`` is compared with the best area over the compared classifiers,
  ``delta_i(c) = (R_best(c) - R_i(c)) / (1 - R_i(c))``, and ``delta_i`` is the mean
  over classes.  0 for the best classifier; the larger, the more of classifier ``i``'s
  missing area the best one captures.

Differences are judged fold by fold (:meth:`CVResult.fold_metrics`,
:func:`paired_test`): for classifier ``A`` against a baseline ``B`` the per-fold
differences ``d_f = m_A(f) - m_B(f)`` (``f = 1..K``) have mean ``d`` and variance
``s^2``; the **corrected resampled t-test** of Nadeau & Bengio (2003, "Inference for
the generalization error") uses ``t = d / sqrt((1/K + n_test/n_train) s^2)`` with
``n_test/n_train = 1/(K - 1)`` for K-fold cross-validation, which allows for the
overlap of the training sets; ``test="paired"`` gives the plain paired t-test
``t = d / sqrt(s^2 / K)`` that Cerquides & Lopez de Mantaras report (Wins/Draws/Losses
at a 95% t-test level). Both have ``K - 1`` degrees of freedom and are two-sided. A
classifier *wins* when the difference is significant at the chosen level and in its
favour (lower error, higher AUC, ...), *loses* when significant against it, and
*draws* otherwise.

The main parameters of the papers are shared by all classifiers: ``k`` (maximum
parents of AMA and GTT), ``n`` (AMA's summary-network size), ``alpha`` (exclusion
penalty of STAN/SFAN) and ``w`` (ISMB's queue width).

:func:`cross_validate_classifiers` runs inline (with a progress callback and a cancel
event, for the apps) or through :func:`bnexplore.experiments.run` on local processes
or a Dask cluster.  The registered experiment ``compare_classifiers`` runs the
comparison over bundled data sets (``bnexplore run compare_classifiers --size full``).

Examples
--------
>>> import bnexplore as bx
>>> from bnexplore.experiments.compare import cross_validate_classifiers
>>> df = bx.datasets.load("weather.nominal")
>>> res = cross_validate_classifiers(df, "play", ["NB", "LogReg"], n_splits=2, seed=0)
>>> sorted(res.metrics().index)
['LogReg', 'NB']
>>> res.proba["NB"].shape
(14, 2)
"""
from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, MutableMapping, Sequence

import numpy as np
import pandas as pd

from .registry import register

__all__ = ["ClassifierSpec", "CLASSIFIERS", "DEFAULT_CLASSIFIERS", "PARAM_RANGES",
           "check_params", "make_classifier", "stratified_folds", "CVResult",
           "cross_validate_classifiers", "metric_table", "add_delta", "compare_trial",
           "CVCancelled", "FOLD_METRICS", "LOWER_IS_BETTER", "paired_test", "win_draw_loss"]

#: allowed ranges of the shared parameters (inclusive): the one declaration, also of the
#: apps' sliders. k stops at 4: exact averaging scores every parent set of at most k of
#: the other variables (C(36, 4) = 58,905 per variable of ALARM), and order MCMC on ALARM
#: already takes minutes at k = 4.
PARAM_RANGES: dict[str, tuple[float, float]] = {
    "k": (1, 4), "n": (1, 60), "alpha": (0.0, 50.0), "w": (1, 10_000)}
DEFAULT_PARAMS = {"k": 2, "n": 12, "alpha": 2.0, "w": 100}
METRICS = ("error", "auc", "log_loss", "squared_error", "cal", "delta")
#: metrics that :meth:`CVResult.fold_metrics` computes on each fold (CAL needs bins of
#: 100 rows and delta compares the pooled ROC areas, so they are pooled only).
FOLD_METRICS = ("error", "auc", "log_loss", "squared_error")
#: metrics where a smaller value is better.
LOWER_IS_BETTER = frozenset({"error", "log_loss", "squared_error", "cal", "delta"})


@dataclass(frozen=True)
class ClassifierSpec:
    """How to build one compared classifier from the shared parameters."""

    key: str
    label: str
    family: str                        # paper / library it comes from
    build: Callable[..., Any]          # build(k, n, alpha, w, seed) -> estimator
    uses: tuple[str, ...] = ()         # which of k, n, alpha, w it depends on
    slow: bool = False                 # instance-based search: minutes on big data


def _c(name: str):
    from bnexplore import classifiers
    return getattr(classifiers, name)


def _onehot_pipeline(final):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    return make_pipeline(OneHotEncoder(handle_unknown="ignore"), final)


def _logreg(**_):
    from sklearn.linear_model import LogisticRegression
    return _onehot_pipeline(LogisticRegression(max_iter=2000))


def _knn(**_):
    from sklearn.neighbors import KNeighborsClassifier
    return _onehot_pipeline(KNeighborsClassifier(n_neighbors=5))


_SPECS = [
    ClassifierSpec("SNN", "SNN (naive Bayes, K2)", "Dash & Cooper",
                   lambda **p: _c("NaiveBayes")(prior="K2")),
    ClassifierSpec("NMA", "NMA (naive model averaging)", "Dash & Cooper",
                   lambda **p: _c("NaiveAveraging")()),
    ClassifierSpec("GTT", "GTT (greedy thick-thin, k parents)", "Dash & Cooper",
                   lambda k, **p: _c("GreedyThickThin")(max_indegree=int(k)), ("k",)),
    ClassifierSpec("AMA", "AMA (approximate model averaging)", "Dash & Cooper",
                   lambda k, n, seed, **p: _c("AMA")(max_parents=int(k), n=int(n), seed=seed),
                   ("k", "n")),
    ClassifierSpec("AODE", "AODE", "Cerquides & Lopez de Mantaras",
                   lambda **p: _c("AODE")()),
    ClassifierSpec("BMAAODE", "BMAAODE", "Cerquides & Lopez de Mantaras",
                   lambda **p: _c("BMAAODE")()),
    ClassifierSpec("MAPLMD", "MAPLMD", "Cerquides & Lopez de Mantaras",
                   lambda **p: _c("MAPLMD")()),
    ClassifierSpec("MAPLMG", "MAPLMG", "Cerquides & Lopez de Mantaras",
                   lambda **p: _c("MAPLMG")()),
    ClassifierSpec("NB", "NB (naive Bayes, BDeu 10)", "Ziebart, Dey & Bagnell",
                   lambda **p: _c("NaiveBayes")(prior="BDeu", ess=10.0)),
    ClassifierSpec("TAN", "TAN", "Ziebart, Dey & Bagnell", lambda **p: _c("TAN")()),
    ClassifierSpec("FAN", "FAN", "Ziebart, Dey & Bagnell", lambda **p: _c("FAN")()),
    ClassifierSpec("STAN", "STAN (penalty alpha)", "Ziebart, Dey & Bagnell",
                   lambda alpha, **p: _c("STAN")(penalty=float(alpha)), ("alpha",)),
    ClassifierSpec("SFAN", "SFAN (penalty alpha)", "Ziebart, Dey & Bagnell",
                   lambda alpha, **p: _c("SFAN")(penalty=float(alpha)), ("alpha",)),
    ClassifierSpec("TAN-BMA", "TAN, averaged over trees", "Ziebart, Dey & Bagnell",
                   lambda **p: _c("TAN")(averaging="bma")),
    ClassifierSpec("SFAN-BMA", "SFAN, averaged over forests", "Ziebart, Dey & Bagnell",
                   lambda alpha, **p: _c("SFAN")(penalty=float(alpha), averaging="bma"),
                   ("alpha",)),
    ClassifierSpec("ISMB", "ISMB (queue width w)", "Visweswaran & Cooper",
                   lambda w, **p: _c("ISMB")(queue_width=int(w)), ("w",), slow=True),
    ClassifierSpec("ISMB-MS", "ISMB-MS (best model)", "Visweswaran & Cooper",
                   lambda w, **p: _c("ISMB")(queue_width=int(w), variant="ms"), ("w",),
                   slow=True),
    ClassifierSpec("NISMB", "NISMB (non instance-specific)", "Visweswaran & Cooper",
                   lambda w, **p: _c("ISMB")(queue_width=int(w), variant="nismb"), ("w",),
                   slow=True),
    ClassifierSpec("LogReg", "logistic regression (one-hot)", "scikit-learn", _logreg),
    ClassifierSpec("kNN", "k-nearest neighbours, 5 (one-hot)", "scikit-learn", _knn),
]
#: every comparable classifier, by key.
CLASSIFIERS: dict[str, ClassifierSpec] = {s.key: s for s in _SPECS}
#: a quick default selection.
DEFAULT_CLASSIFIERS = ("SNN", "TAN", "AODE", "AMA", "LogReg", "kNN")


class CVCancelled(Exception):
    """Raised internally when the cancel event is set (the partial result is kept)."""


# --------------------------------------------------------------------------- validation
def check_params(k: int = 2, n: int = 12, alpha: float = 2.0, w: int = 100) -> dict:
    """Validate the shared parameters; return them as a dict of plain numbers.

    Raises
    ------
    ValueError
        Naming the parameter and its allowed range.

    Examples
    --------
    >>> check_params(k=3, n=10, alpha=0.5, w=50)
    {'k': 3, 'n': 10, 'alpha': 0.5, 'w': 50}
    """
    out = {}
    for name, value, integer in (("k", k, True), ("n", n, True), ("alpha", alpha, False),
                                 ("w", w, True)):
        lo, hi = PARAM_RANGES[name]
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                             np.floating)):
            raise TypeError(f"{name} must be a number, got {value!r}")
        if not math.isfinite(float(value)) or not lo <= value <= hi:
            raise ValueError(f"{name}={value!r} is out of range: choose a value in "
                             f"[{lo:g}, {hi:g}]")
        if integer and float(value) != int(value):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        out[name] = int(value) if integer else float(value)
    return out


def make_classifier(key: str, k: int = 2, n: int = 12, alpha: float = 2.0, w: int = 100,
                    seed: int = 0):
    """A fresh, unfitted estimator for classifier ``key`` (see :data:`CLASSIFIERS`).

    Examples
    --------
    >>> make_classifier("AMA", k=3, n=8)
    AMA(max_parents=3, n=8, seed=0)
    """
    if key not in CLASSIFIERS:
        raise ValueError(f"unknown classifier {key!r}; choose from {sorted(CLASSIFIERS)}")
    p = check_params(k, n, alpha, w)
    return CLASSIFIERS[key].build(**p, seed=int(seed))


def _check_frame(df: pd.DataFrame, target: str) -> tuple[pd.DataFrame, pd.Series]:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if target not in df.columns:
        raise ValueError(f"target {target!r} is not a column; columns are {list(df.columns)}")
    if df.shape[1] < 2:
        raise ValueError("the data need at least one feature column besides the target")
    y = df[target]
    if y.isna().any():
        raise ValueError(f"target column {target!r} has {int(y.isna().sum())} missing "
                         f"values: drop those rows first")
    n_cls = y.nunique()
    if n_cls < 2:
        only = list(pd.unique(y))[:1]
        raise ValueError(f"target column {target!r} has a single class {only!r}: a "
                         f"classifier comparison needs at least two classes")
    return df.drop(columns=[target]), y


def stratified_folds(y: Sequence, n_splits: int = 5, seed: int = 0
                     ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified ``(train_idx, test_idx)`` pairs, shuffled with ``seed``.

    Raises
    ------
    ValueError
        If ``n_splits`` is not in ``[2, n_rows]`` or a class has fewer rows than
        ``n_splits`` allows to put in each training set.

    Examples
    --------
    >>> folds = stratified_folds(["a"] * 4 + ["b"] * 4, n_splits=2, seed=0)
    >>> [len(te) for _, te in folds]
    [4, 4]
    """
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(y)
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) \
            or n_splits < 2:
        raise ValueError(f"n_splits must be an integer >= 2, got {n_splits!r}")
    if n_splits > len(y):
        raise ValueError(f"n_splits={n_splits} is larger than the {len(y)} rows: choose at "
                         f"most {len(y)} folds")
    labels, counts = np.unique(y.astype(str), return_counts=True)
    if counts.max() < n_splits:
        raise ValueError(f"every class has fewer than n_splits={n_splits} rows (largest "
                         f"class: {counts.max()}): choose fewer folds")
    skf = StratifiedKFold(n_splits=int(n_splits), shuffle=True, random_state=int(seed))
    import warnings
    with warnings.catch_warnings():  # small classes: sklearn warns, folds stay valid
        warnings.simplefilter("ignore", UserWarning)
        return [(tr, te) for tr, te in skf.split(np.zeros(len(y)), y.astype(str))]


def _aligned_proba(model, X_test: pd.DataFrame, classes: np.ndarray) -> np.ndarray:
    """``model.predict_proba`` with columns put in the order of ``classes``.

    A class missing from a training fold gets probability 0.
    """
    p = np.asarray(model.predict_proba(X_test), dtype=float)
    own = [str(c) for c in getattr(model, "classes_", classes)]
    out = np.zeros((len(X_test), len(classes)))
    idx = {str(c): j for j, c in enumerate(classes)}
    for j, c in enumerate(own):
        out[:, idx[c]] = p[:, j]
    s = out.sum(axis=1, keepdims=True)
    bad = ~np.isfinite(out).all(axis=1) | (s[:, 0] <= 0)
    if bad.any():
        raise ValueError(f"{type(model).__name__} returned {int(bad.sum())} rows of "
                         f"probabilities that are not a distribution")
    return out / s


def _fit_predict(key: str, params: Mapping[str, Any], X: pd.DataFrame, y: pd.Series,
                 classes: np.ndarray, train: np.ndarray, test: np.ndarray,
                 seed: int) -> np.ndarray:
    model = make_classifier(key, **params, seed=seed)
    model.fit(X.iloc[train], y.iloc[train])
    return _aligned_proba(model, X.iloc[test], classes)


def _fold_trial(classifier: str, fold: int, k: int, n: int, alpha: float, w: int,
                seed: int, *, X: pd.DataFrame, y: pd.Series, classes: tuple,
                n_splits: int) -> list[dict]:
    """Runner trial: out-of-fold probabilities of one classifier on one fold.

    One result row per test instance: ``row`` (position in the data) and ``p0, p1, ...``
    (probabilities in the order of ``classes``); flat scalars, as the runner requires.
    """
    train, test = stratified_folds(y, n_splits, seed)[fold]
    proba = _fit_predict(classifier, {"k": k, "n": n, "alpha": alpha, "w": w}, X, y,
                         np.asarray(classes, dtype=object), train, test, seed)
    return [{"row": int(r), **{f"p{j}": float(v) for j, v in enumerate(pr)}}
            for r, pr in zip(test, proba)]


# --------------------------------------------------------------------------- results
def _cal_ovr(y: np.ndarray, proba: np.ndarray, classes: np.ndarray, bin_size: int) -> float:
    from bnexplore.metrics import cal_score
    cols = [1] if len(classes) == 2 else range(len(classes))
    vals = [cal_score((y == classes[j]).astype(int), proba[:, j], bin_size=bin_size)
            for j in cols]
    return float(np.mean(vals))


def _ovr_aucs(y: np.ndarray, proba: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """One-vs-rest ROC area per class (NaN for a class absent from ``y``)."""
    from bnexplore.metrics import auc
    out = np.full(len(classes), np.nan)
    for j, c in enumerate(classes):
        pos = (y == c).astype(int)
        if 0 < pos.sum() < len(pos):
            out[j] = auc(pos, proba[:, j], classes=[0, 1])
    return out


def _delta_vs_best(ovr: Mapping[str, np.ndarray]) -> dict[str, float]:
    """Dash & Cooper's delta of every classifier against the best one, per class."""
    from bnexplore.metrics import delta
    keys = list(ovr)
    if not keys:
        return {}
    mat = np.vstack([ovr[k] for k in keys])           # classifiers x classes
    ok = ~np.isnan(mat).any(axis=0)
    if not ok.any():
        return {k: float("nan") for k in keys}
    mat = mat[:, ok]
    best = mat.max(axis=0)
    return {k: float(np.mean(delta(best, mat[i]))) for i, k in enumerate(keys)}


@dataclass
class CVResult:
    """Pooled out-of-fold predictions of several classifiers on the same folds.

    Attributes
    ----------
    y : ndarray
        True labels of every row (as in the data).
    classes : ndarray
        Class labels; the columns of every ``proba`` array follow them.
    proba : dict
        ``key -> (n_rows, n_classes)`` out-of-fold probabilities, only for the
        classifiers that finished every fold.
    errors : dict
        ``key -> message`` of the classifiers that raised (the others are unaffected).
    folds : ndarray
        Fold index of every row.
    cancelled : bool
        True when the run was cancelled; unfinished classifiers are missing from
        ``proba``.
    settings : dict
        n_splits, seed, k, n, alpha, w, target.
    """

    y: np.ndarray
    classes: np.ndarray
    proba: dict[str, np.ndarray] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    folds: np.ndarray | None = None
    cancelled: bool = False
    settings: dict[str, Any] = field(default_factory=dict)

    def ovr_auc(self) -> pd.DataFrame:
        """One-vs-rest ROC area per classifier (rows) and class (columns)."""
        rows = {k: _ovr_aucs(self.y, p, self.classes) for k, p in self.proba.items()}
        return pd.DataFrame.from_dict(rows, orient="index",
                                      columns=[str(c) for c in self.classes])

    def metrics(self, bin_size: int = 100) -> pd.DataFrame:
        """Error, AUC (Hand & Till), log loss, squared error, CAL and delta vs the best.

        One row per finished classifier (index = key), sorted by AUC (best first).
        """
        from bnexplore import metrics as m
        rows = {}
        for key, p in self.proba.items():
            rows[key] = {
                "error": m.error_rate(self.y, p, classes=self.classes),
                "auc": m.auc(self.y, p, classes=self.classes),
                "log_loss": m.log_loss(self.y, p, classes=self.classes),
                "squared_error": m.squared_error(self.y, p, classes=self.classes),
                "cal": _cal_ovr(self.y, p, self.classes, bin_size),
            }
        if not rows:
            return pd.DataFrame(columns=list(METRICS))
        deltas = _delta_vs_best({k: _ovr_aucs(self.y, p, self.classes)
                                 for k, p in self.proba.items()})
        df = pd.DataFrame.from_dict(rows, orient="index")
        df["delta"] = pd.Series(deltas)
        df.index.name = "classifier"
        return df.sort_values("auc", ascending=False, kind="stable")

    def fold_metrics(self) -> pd.DataFrame:
        """Error, AUC, log loss and squared error of every classifier on every fold.

        One row per (classifier, fold) with the columns ``classifier``, ``fold`` and
        :data:`FOLD_METRICS`; the input of :func:`paired_test`. A fold whose test rows
        hold a single class has no AUC (NaN).
        """
        from bnexplore import metrics as m
        cols = ["classifier", "fold", *FOLD_METRICS]
        if self.folds is None or not self.proba:
            return pd.DataFrame(columns=cols)
        rows = []
        for key, p in self.proba.items():
            for f in np.unique(self.folds):
                sel = self.folds == f
                y, q = self.y[sel], p[sel]
                try:
                    a = m.auc(y, q, classes=self.classes)
                except ValueError:  # one class only in this fold
                    a = np.nan
                rows.append({"classifier": key, "fold": int(f),
                             "error": m.error_rate(y, q, classes=self.classes), "auc": a,
                             "log_loss": m.log_loss(y, q, classes=self.classes),
                             "squared_error": m.squared_error(y, q, classes=self.classes)})
        return pd.DataFrame(rows, columns=cols)

    def roc(self, positive: Any) -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
        """``key -> (fpr, tpr, auc)``: one-vs-rest ROC of class ``positive``."""
        from bnexplore.metrics import auc, roc_curve
        names = [str(c) for c in self.classes]
        if str(positive) not in names:
            raise ValueError(f"positive class {positive!r} is not one of {names}")
        j = names.index(str(positive))
        pos = (self.y.astype(str) == str(positive)).astype(int)
        if pos.sum() in (0, len(pos)):
            raise ValueError(f"class {positive!r} has no rows (or only rows): no ROC curve")
        out = {}
        for key, p in self.proba.items():
            fpr, tpr, _ = roc_curve(pos, p[:, j], pos_label=1)
            out[key] = (fpr, tpr, auc(pos, p[:, j], classes=[0, 1]))
        return out


# --------------------------------------------------------------------------- main entry
def cross_validate_classifiers(
        df: pd.DataFrame, target: str, classifiers: Sequence[str] = DEFAULT_CLASSIFIERS,
        n_splits: int = 5, seed: int = 0, k: int = 2, n: int = 12, alpha: float = 2.0,
        w: int = 100, progress_callback: Callable[[int, int, str], None] | None = None,
        cancel_event: threading.Event | None = None, backend: str = "inline",
        n_jobs: int = 1, scheduler: Any = None,
        cache: MutableMapping | None = None,
        result_callback: Callable[[CVResult], None] | None = None) -> CVResult:
    """Stratified cross-validation of several classifiers on the same folds.

    Parameters
    ----------
    df : DataFrame
        Discrete (categorical) features and the class column ``target``.  The
        scikit-learn baselines one-hot encode the features.
    target : str
        The class column; it needs at least two classes and no missing value.
    classifiers : sequence of str
        Keys of :data:`CLASSIFIERS`.
    n_splits : int
        Number of folds (>= 2).
    seed : int
        Seed of the fold shuffling and of randomised classifiers.
    k, n, alpha, w : numbers
        Shared parameters (see :func:`check_params`).
    progress_callback : callable, optional
        Called as ``progress_callback(done, total, message)`` after each fit (inline)
        or each classifier (runner backends).
    cancel_event : threading.Event, optional
        Checked between fits; when set, the run stops and the result (with
        ``cancelled=True``) holds the classifiers finished so far.
    backend : {"inline", "local", "dask"}
        ``"inline"`` fits in this process; ``"local"`` / ``"dask"`` submit the
        (classifier, fold) fits through :func:`bnexplore.experiments.run` (joblib
        processes or a Dask cluster at ``scheduler``), one classifier at a time.
    n_jobs : int
        Worker processes of the runner backends.
    scheduler : str or dask.distributed.Client, optional
        Dask scheduler for ``backend="dask"``.
    cache : mutable mapping, optional
        Out-of-fold probabilities of finished classifiers, keyed on a fingerprint of
        the data, the target, the classifier, the parameters it uses, ``n_splits``
        and ``seed``: a classifier found there is not refitted (moving the ``alpha``
        slider refits only STAN/SFAN). Any mapping with ``get`` and item assignment
        works, e.g. a :class:`bnexplore.cache.DiskCache` that keeps them between runs.
    result_callback : callable, optional
        Called with the result so far (a copy holding the classifiers finished until
        then, in the order asked for) each time a classifier finishes, and once at the
        start if the cache already holds some: a page can show the first ROC curves
        while the other classifiers still run.

    Returns
    -------
    CVResult

    Raises
    ------
    ValueError
        For an unknown classifier, an empty selection, bad parameters, a target with
        one class, too many folds.
    """
    if isinstance(classifiers, str):
        classifiers = [classifiers]
    classifiers = list(dict.fromkeys(classifiers))
    if not classifiers:
        raise ValueError("no classifier selected: choose at least one")
    unknown = [c for c in classifiers if c not in CLASSIFIERS]
    if unknown:
        raise ValueError(f"unknown classifiers {unknown}; choose from {sorted(CLASSIFIERS)}")
    if backend not in ("inline", "local", "dask"):
        raise ValueError(f"backend must be 'inline', 'local' or 'dask', got {backend!r}")
    params = check_params(k, n, alpha, w)
    X, y = _check_frame(df, target)
    folds = stratified_folds(y, n_splits, seed)
    classes = np.asarray(sorted(pd.unique(y.astype(object)), key=str), dtype=object)
    if isinstance(y.dtype, pd.CategoricalDtype):  # follow the declared category order
        cats = [c for c in y.cat.categories if c in set(classes)]
        classes = np.asarray(cats, dtype=object)
    y_arr = np.asarray(y.astype(object))
    fold_of = np.empty(len(y), dtype=int)
    for f, (_, te) in enumerate(folds):
        fold_of[te] = f
    result = CVResult(y=y_arr, classes=classes, folds=fold_of,
                      settings={"target": target, "n_splits": int(n_splits),
                                "seed": int(seed), **params})

    def _cancelled() -> bool:
        return cancel_event is not None and cancel_event.is_set()

    def _report(done: int, total: int, msg: str) -> None:
        if progress_callback is not None:
            progress_callback(done, total, msg)

    fingerprint = _fingerprint(df) if cache is not None else ""

    def _key(clf: str) -> tuple:
        uses = tuple((p, params[p]) for p in CLASSIFIERS[clf].uses)
        return (fingerprint, str(target), clf, uses, int(n_splits), int(seed))

    def _partial() -> None:
        if result_callback is not None:
            result_callback(_ordered(replace(result, proba=dict(result.proba),
                                             errors=dict(result.errors)), classifiers))

    if cache is not None:
        for key in classifiers:
            hit = cache.get(_key(key))
            if hit is not None:
                result.proba[key] = hit
        todo = [c for c in classifiers if c not in result.proba]
        if result.proba:
            _partial()
    else:
        todo = list(classifiers)

    def _done(key: str, proba: np.ndarray) -> None:
        result.proba[key] = proba
        if cache is not None:
            cache[_key(key)] = proba
        _partial()

    if backend == "inline":
        total = max(len(todo) * len(folds), 1)
        done = 0
        _report(0, total, "starting")
        for key in todo:
            start = done
            proba = np.zeros((len(y), len(classes)))
            try:
                for f, (tr, te) in enumerate(folds):
                    if _cancelled():
                        raise CVCancelled
                    proba[te] = _fit_predict(key, params, X, y, classes, tr, te, seed)
                    done += 1
                    _report(done, total, f"{key}: fold {f + 1}/{len(folds)}")
            except CVCancelled:
                result.cancelled = True
                break
            except Exception as exc:  # noqa: BLE001 - one classifier's failure is reported
                result.errors[key] = f"{type(exc).__name__}: {exc}"
                done = start + len(folds)
                _report(done, total, f"{key}: failed")
                continue
            _done(key, proba)
        _report(total, total, "finished")
        return _ordered(result, classifiers)

    from .runner import run
    trial = functools.partial(_fold_trial, X=X, y=y, classes=tuple(classes),
                              n_splits=int(n_splits))
    total = max(len(todo), 1)
    _report(0, total, "starting")
    for i, key in enumerate(todo):
        if _cancelled():
            result.cancelled = True
            break
        grid = [{"classifier": key, "fold": f, **params} for f in range(len(folds))]
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            rows = run(trial, grid, seeds=[seed], out=None, backend=backend, n_jobs=n_jobs,
                       scheduler=scheduler, progress=False)
        errs = rows["error"].dropna() if "error" in rows else pd.Series(dtype=object)
        if len(errs):
            result.errors[key] = str(errs.iloc[0])
        else:
            proba = np.zeros((len(y), len(classes)))
            pcols = [f"p{j}" for j in range(len(classes))]
            proba[rows["row"].to_numpy(dtype=int)] = rows[pcols].to_numpy(dtype=float)
            _done(key, proba)
        _report(i + 1, total, f"{key}: done")
    return _ordered(result, classifiers)


def _ordered(result: CVResult, classifiers: Sequence[str]) -> CVResult:
    result.proba = {k: result.proba[k] for k in classifiers if k in result.proba}
    return result


def _fingerprint(df: pd.DataFrame) -> str:
    """A hash of the content, column names and dtypes of ``df``."""
    import hashlib
    h = hashlib.sha1()
    h.update(repr([(str(c), str(df[c].dtype)) for c in df.columns]).encode())
    h.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return h.hexdigest()


def metric_table(result: CVResult, baseline: str | None = None, metric: str = "auc",
                 level: float = 0.05, test: str = "corrected") -> pd.DataFrame:
    """:meth:`CVResult.metrics` with a ``label`` column and failed classifiers listed.

    With ``baseline`` (a finished classifier), the spread over folds and the paired
    test are added: ``<m>_sd`` (standard deviation over folds) for each of
    :data:`FOLD_METRICS`, then ``baseline``, ``test``, ``level``, ``metric`` (the
    settings) and ``diff``, ``p`` and ``result`` (win / draw / loss against the
    baseline on ``metric``, see :func:`paired_test`).

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.datasets.load("weather.nominal")
    >>> res = cross_validate_classifiers(df, "play", ["SNN"], n_splits=2)
    >>> list(metric_table(res).columns)[:3]
    ['classifier', 'label', 'error']
    """
    m = result.metrics().reset_index().rename(columns={"index": "classifier"})
    if "classifier" not in m:
        m.insert(0, "classifier", [])
    m.insert(1, "label", [CLASSIFIERS[k].label for k in m["classifier"]])
    if baseline is not None and baseline in result.proba:
        folds = result.fold_metrics()
        sd = folds.groupby("classifier")[list(FOLD_METRICS)].std(ddof=1)
        for c in FOLD_METRICS:
            m[f"{c}_sd"] = m["classifier"].map(sd[c])
        tests = paired_test(folds, metric, baseline, level=level, test=test)
        m["baseline"], m["test"], m["level"], m["metric"] = baseline, test, float(level), metric
        for c in ("diff", "p", "result"):
            m[c] = m["classifier"].map(tests[c])
    for key, msg in result.errors.items():
        m.loc[len(m)] = {"classifier": key, "label": CLASSIFIERS[key].label,
                         **{c: np.nan for c in m.columns if c not in ("classifier", "label")}}
    return m


# --------------------------------------------------------------------------- paired test
def paired_test(folds: pd.DataFrame, metric: str, baseline: str, level: float = 0.05,
                test: str = "corrected") -> pd.DataFrame:
    """Each classifier against ``baseline`` by a two-sided t-test over matched folds.

    Parameters
    ----------
    folds : DataFrame
        Columns ``classifier``, ``fold`` and ``metric`` (:meth:`CVResult.fold_metrics`).
    metric : str
        One of :data:`FOLD_METRICS`; :data:`LOWER_IS_BETTER` says which way is better.
    baseline : str
        The classifier every other one is compared with.
    level : float, default 0.05
        Significance level (0.05 = the papers' 95% confidence).
    test : {"corrected", "paired"}
        Nadeau & Bengio's corrected resampled t-test (default) or the plain paired
        t-test (module docstring).

    Returns
    -------
    DataFrame
        One row per classifier (index ``classifier``): ``mean``, ``sd`` (over folds),
        ``n_folds``, ``diff`` (mean of classifier minus baseline), ``t``, ``p`` and
        ``result`` (``"win"``, ``"draw"``, ``"loss"`` as seen from the classifier, or
        ``"baseline"``). Folds where either value is NaN are left out of the pair.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"classifier": ["A"] * 5 + ["B"] * 5, "fold": list(range(5)) * 2,
    ...                   "error": [.10, .12, .11, .10, .13, .20, .22, .21, .19, .23]})
    >>> paired_test(f, "error", baseline="B", test="paired").loc["A", "result"]
    'win'
    """
    from scipy import stats

    if test not in ("corrected", "paired"):
        raise ValueError(f"test must be 'corrected' or 'paired', got {test!r}")
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    if metric not in folds.columns:
        raise ValueError(f"folds has no column {metric!r}")
    wide = folds.pivot_table(index="fold", columns="classifier", values=metric, aggfunc="mean",
                             dropna=False)
    if baseline not in wide.columns:
        raise ValueError(f"baseline {baseline!r} is not one of the classifiers "
                         f"{sorted(map(str, wide.columns))}")
    order = list(dict.fromkeys(folds["classifier"]))
    lower = metric in LOWER_IS_BETTER
    rows = {}
    for key in order:
        vals = wide[key]
        row = {"mean": float(vals.mean()), "sd": float(vals.std(ddof=1)) if vals.count() > 1 else np.nan,
               "n_folds": int(vals.count()), "diff": np.nan, "t": np.nan, "p": np.nan}
        if key == baseline:
            row["result"] = "baseline"
            rows[key] = row
            continue
        d = (vals - wide[baseline]).dropna().to_numpy(dtype=float)
        k = len(d)
        result = "draw"
        if k >= 2:
            mean, var = float(d.mean()), float(d.var(ddof=1))
            # the corrected test inflates the variance for overlapping training sets
            factor = (1.0 / k + 1.0 / (k - 1)) if test == "corrected" else 1.0 / k
            row["diff"] = mean
            if var > 0:
                t = mean / math.sqrt(factor * var)
                p = float(2 * stats.t.sf(abs(t), df=k - 1))
            else:  # identical differences on every fold: certain unless all zero
                t, p = (0.0, 1.0) if mean == 0 else (math.copysign(math.inf, mean), 0.0)
            row["t"], row["p"] = t, p
            if p < level and mean != 0:
                better = mean < 0 if lower else mean > 0
                result = "win" if better else "loss"
        row["result"] = result
        rows[key] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "classifier"
    return out


def win_draw_loss(tests: pd.DataFrame) -> dict[str, int]:
    """Counts of ``win``, ``draw`` and ``loss`` in a :func:`paired_test` table.

    Examples
    --------
    >>> import pandas as pd
    >>> win_draw_loss(pd.DataFrame({"result": ["win", "draw", "baseline", "win"]}))
    {'win': 2, 'draw': 1, 'loss': 0}
    """
    counts = tests["result"].value_counts()
    return {r: int(counts.get(r, 0)) for r in ("win", "draw", "loss")}


# --------------------------------------------------------------------------- experiment
def add_delta(results: pd.DataFrame, by: Sequence[str] = ("dataset", "seed")) -> pd.DataFrame:
    """Add Dash & Cooper's ``delta`` column to rows of :func:`compare_trial`.

    Within each group (a data set and seed), every classifier is compared with the
    best one per class, from the ``auc_ovr_<j>`` columns.
    """
    df = results.copy()
    df["delta"] = np.nan
    ovr_cols = sorted((c for c in df.columns if str(c).startswith("auc_ovr_")),
                      key=lambda c: int(str(c).rsplit("_", 1)[1]))
    if not ovr_cols:
        return df
    ok = df["error"].isna() if "error" in df.columns else pd.Series(True, index=df.index)
    for _, grp in df[ok].groupby(list(by)):
        ovr = {i: grp.loc[i, ovr_cols].to_numpy(dtype=float) for i in grp.index}
        # classes absent from the data set have NaN in every row: drop them
        mat = np.vstack(list(ovr.values()))
        keep = ~np.isnan(mat).all(axis=0)
        ovr = {i: v[keep] for i, v in ovr.items()}
        for i, d in _delta_vs_best(ovr).items():
            df.loc[i, "delta"] = d
    return df


def compare_trial(dataset: str, classifier: str, n_splits: int = 10, k: int = 2,
                  n: int = 12, alpha: float = 2.0, w: int = 100, seed: int = 0) -> dict:
    """Cross-validated metrics of one classifier on one bundled data set.

    Returns ``error_rate, auc, log_loss, squared_error, cal``, the one-vs-rest ROC
    areas ``auc_ovr_<j>`` (for :func:`add_delta`) and ``n_rows``.
    """
    import warnings

    from bnexplore import datasets
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        df = datasets.load(dataset, discretize="mdl", missing="state")
    res = cross_validate_classifiers(df, df.attrs["target"], [classifier], n_splits=n_splits,
                                     seed=seed, k=k, n=n, alpha=alpha, w=w)
    if classifier in res.errors:
        raise RuntimeError(res.errors[classifier])
    row = res.metrics().iloc[0].drop("delta").to_dict()
    row["error_rate"] = row.pop("error")     # 'error' is the runner's exception column
    row.update({f"auc_ovr_{j}": float(v)
                for j, v in enumerate(res.ovr_auc().iloc[0].to_numpy())})
    row["n_rows"] = len(df)
    return {key: float(v) for key, v in row.items()}


_FULL_CLASSIFIERS = [k for k in CLASSIFIERS if k not in ("ISMB-MS", "NISMB")]
register(
    "compare_classifiers", compare_trial,
    grid={"dataset": ["breast-cancer", "credit-g", "diabetes", "glass", "ionosphere", "iris",
                      "labor", "soybean", "vote", "segment-challenge"],
          "classifier": _FULL_CLASSIFIERS, "n_splits": [10]},
    reduced_grid={"dataset": ["iris", "vote"], "classifier": ["SNN", "TAN", "AODE", "LogReg"],
                  "n_splits": [3]},
    seeds=range(5), reduced_seeds=[0],
    description="All classifiers, stratified CV on bundled UCI data: error, AUC, log loss, "
                "squared error, CAL (delta vs the best via add_delta)")
