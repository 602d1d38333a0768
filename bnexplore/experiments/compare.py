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

The main parameters of the papers are shared by all classifiers: ``max_parents``
(maximum parents of AMA and GTT), ``n`` (AMA's summary-network size), ``penalty``
(exclusion penalty of STAN/SFAN) and ``queue_width`` (ISMB's queue width).

:func:`cross_validate_classifiers` runs inline (with a progress callback and a cancel
event, for the apps) or through :func:`bnexplore.experiments.run` on local processes
or a Dask cluster.  The registered experiment ``compare_classifiers`` runs the
comparison over bundled data sets (``bnexplore run compare_classifiers --size full``).

Examples
--------
>>> import bnexplore as bx
>>> from bnexplore.experiments.compare import cross_validate_classifiers
>>> df = bx.datasets.load("weather.nominal")
>>> res = cross_validate_classifiers(df, "play", ["NB", "LogReg"], n_splits=2, random_state=0)
>>> sorted(res.metrics().index)
['LogReg', 'NB']
>>> res.proba["NB"].shape
(14, 2)
"""
from __future__ import annotations

import functools
import threading
from dataclasses import replace
from typing import Any, Callable, Mapping, MutableMapping, Sequence

import numpy as np
import pandas as pd

from .._deprecation import renamed
from .._validation import check_int
from ._compare_scores import (FOLD_METRICS, LOWER_IS_BETTER, METRICS, CVResult,  # noqa: F401
                              add_delta, metric_table, paired_test, win_draw_loss)
from ._compare_setup import (CLASSIFIERS, DEFAULT_CLASSIFIERS, DEFAULT_PARAMS,  # noqa: F401
                             LEGACY_PARAMS, PARAM_RANGES, ClassifierSpec, check_params,
                             make_classifier)
from .registry import register

__all__ = ["ClassifierSpec", "CLASSIFIERS", "DEFAULT_CLASSIFIERS", "PARAM_RANGES",
           "check_params", "make_classifier", "stratified_folds", "CVResult",
           "cross_validate_classifiers", "metric_table", "add_delta", "compare_trial",
           "CVCancelled", "FOLD_METRICS", "LOWER_IS_BETTER", "paired_test", "win_draw_loss"]


class CVCancelled(Exception):
    """Raised internally when the cancel event is set (the partial result is kept)."""


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


@renamed(seed="random_state")
def stratified_folds(y: Sequence, n_splits: int = 5, random_state: int = 0
                     ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Stratified ``(train_idx, test_idx)`` pairs, shuffled with ``random_state``.

    Raises
    ------
    ValueError
        If ``n_splits`` is not in ``[2, n_rows]`` or a class has fewer rows than
        ``n_splits`` allows to put in each training set.

    Examples
    --------
    >>> folds = stratified_folds(["a"] * 4 + ["b"] * 4, n_splits=2, random_state=0)
    >>> [len(te) for _, te in folds]
    [4, 4]
    """
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(y)
    n_splits = check_int(n_splits, "n_splits", low=2)
    if n_splits > len(y):
        raise ValueError(f"n_splits={n_splits} is larger than the {len(y)} rows: choose at "
                         f"most {len(y)} folds")
    labels, counts = np.unique(y.astype(str), return_counts=True)
    if counts.max() < n_splits:
        raise ValueError(f"every class has fewer than n_splits={n_splits} rows (largest "
                         f"class: {counts.max()}): choose fewer folds")
    skf = StratifiedKFold(n_splits=int(n_splits), shuffle=True, random_state=int(random_state))
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
                 random_state: int) -> np.ndarray:
    model = make_classifier(key, params["max_parents"], params["n"], params["penalty"],
                            params["queue_width"], random_state=random_state)
    model.fit(X.iloc[train], y.iloc[train])
    return _aligned_proba(model, X.iloc[test], classes)


def _fold_trial(classifier: str, fold: int, max_parents: int, n: int, penalty: float,
                queue_width: int, random_state: int, *, X: pd.DataFrame, y: pd.Series, classes: tuple,
                n_splits: int) -> list[dict]:
    """Runner trial: out-of-fold probabilities of one classifier on one fold.

    One result row per test instance: ``row`` (position in the data) and ``p0, p1, ...``
    (probabilities in the order of ``classes``); flat scalars, as the runner requires.
    """
    train, test = stratified_folds(y, n_splits, random_state)[fold]
    params = {"max_parents": max_parents, "n": n, "penalty": penalty,
              "queue_width": queue_width}
    proba = _fit_predict(classifier, params, X, y,
                         np.asarray(classes, dtype=object), train, test, random_state)
    return [{"row": int(r), **{f"p{j}": float(v) for j, v in enumerate(pr)}}
            for r, pr in zip(test, proba)]


# --------------------------------------------------------------------------- main entry
@renamed(seed="random_state", k="max_parents", alpha="penalty", w="queue_width")
def cross_validate_classifiers(
        df: pd.DataFrame, target: str, classifiers: Sequence[str] = DEFAULT_CLASSIFIERS,
        n_splits: int = 5, random_state: int = 0, max_parents: int = 2, n: int = 12,
        penalty: float = 2.0, queue_width: int = 100,
        progress_callback: Callable[[int, int, str], None] | None = None,
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
    random_state : int
        Shuffles the folds and seeds randomised classifiers (``seed=`` is its
        deprecated name).
    max_parents, n, penalty, queue_width : numbers
        Shared parameters (see :func:`check_params`; ``k=``, ``alpha=`` and ``w=`` are
        the deprecated names of ``max_parents=``, ``penalty=`` and ``queue_width=``).
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
        and ``random_state``: a classifier found there is not refitted (moving the ``penalty``
        slider refits only STAN/SFAN), and the test fold of each row (a run whose
        classifiers are all found there computes no folds). An entry stored before
        0.2.0, under the parameters' old names ``k``, ``alpha`` and ``w``, is found too. Any mapping with ``get``
        and item assignment works, e.g. a :class:`bnexplore.cache.DiskCache` that
        keeps them between runs.
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
    params = check_params(max_parents, n, penalty, queue_width)
    X, y = _check_frame(df, target)
    classes = np.asarray(sorted(pd.unique(y.astype(object)), key=str), dtype=object)
    if isinstance(y.dtype, pd.CategoricalDtype):  # follow the declared category order
        cats = [c for c in y.cat.categories if c in set(classes)]
        classes = np.asarray(cats, dtype=object)
    fingerprint = _fingerprint(df) if cache is not None else ""

    def _key(clf: str, names: Mapping[str, str] | None = None) -> tuple:
        uses = tuple(((names or {}).get(p, p), params[p]) for p in CLASSIFIERS[clf].uses)
        return (fingerprint, str(target), clf, uses, int(n_splits), int(random_state))

    def _lookup(clf: str):
        """The cached probabilities of ``clf``, also under the keys of before 0.2.0."""
        hit = cache.get(_key(clf))
        if hit is None:
            old = {new: o for o, new in LEGACY_PARAMS.items()}
            if any(p in old for p in CLASSIFIERS[clf].uses):
                hit = cache.get(_key(clf, old))
                if hit is not None:
                    cache[_key(clf)] = hit
        return hit

    hits = {} if cache is None else {key: _lookup(key) for key in classifiers}
    todo = [c for c in classifiers if hits.get(c) is None]
    # the test fold of each row: kept with the results, so that a run whose classifiers
    # are all cached needs no scikit-learn (its import is most of a cached run's time)
    folds_key = (fingerprint, str(target), int(n_splits), int(random_state))
    fold_of = cache.get(folds_key) if cache is not None and not todo else None
    folds: list = []
    if fold_of is None or len(fold_of) != len(y):
        folds = stratified_folds(y, n_splits, random_state)
        fold_of = np.empty(len(y), dtype=int)
        for f, (_, te) in enumerate(folds):
            fold_of[te] = f
        if cache is not None:
            cache[folds_key] = fold_of
    result = CVResult(y=np.asarray(y.astype(object)), classes=classes, folds=fold_of,
                      settings={"target": target, "n_splits": int(n_splits),
                                "random_state": int(random_state), **params})

    def _cancelled() -> bool:
        return cancel_event is not None and cancel_event.is_set()

    def _report(done: int, total: int, msg: str) -> None:
        if progress_callback is not None:
            progress_callback(done, total, msg)

    def _partial() -> None:
        if result_callback is not None:
            result_callback(_ordered(replace(result, proba=dict(result.proba),
                                             errors=dict(result.errors)), classifiers))

    result.proba.update((key, hit) for key, hit in hits.items() if hit is not None)
    if result.proba:
        _partial()

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
                    proba[te] = _fit_predict(key, params, X, y, classes, tr, te, random_state)
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
            rows = run(trial, grid, random_states=[random_state], out=None, backend=backend,
                       n_jobs=n_jobs, scheduler=scheduler, progress=False)
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


@renamed(k="max_parents", alpha="penalty", w="queue_width", seed="random_state")
def compare_trial(dataset: str, classifier: str, n_splits: int = 10, max_parents: int = 2,
                  n: int = 12, penalty: float = 2.0, queue_width: int = 100,
                  random_state: int = 0) -> dict:
    """Cross-validated metrics of one classifier on one bundled data set.

    A trial of the runner (:func:`bnexplore.experiments.run`): ``random_state`` is the
    replicate the runner passes (a column of the results), an int that shuffles the
    folds and seeds randomised classifiers.

    Returns ``error_rate, auc, log_loss, squared_error, cal``, the one-vs-rest ROC
    areas ``auc_ovr_<j>`` (for :func:`add_delta`) and ``n_rows``.
    """
    import warnings

    from bnexplore import datasets
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        df = datasets.load(dataset, discretize="mdl", missing="state")
    res = cross_validate_classifiers(df, df.attrs["target"], [classifier], n_splits=n_splits,
                                     random_state=random_state, max_parents=max_parents, n=n,
                                     penalty=penalty, queue_width=queue_width)
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
    random_states=range(5), reduced_random_states=[0],
    description="All classifiers, stratified CV on bundled UCI data: error, AUC, log loss, "
                "squared error, CAL (delta vs the best via add_delta)")
