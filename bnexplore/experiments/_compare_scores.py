"""Scores of a classifier comparison: pooled and per-fold metrics, delta, paired tests.

The out-of-fold class probabilities of all rows (:class:`CVResult`) are scored with
:mod:`bnexplore.metrics`: error, AUC (Hand & Till's M), log loss, squared error, CAL
(one-vs-rest, averaged over classes) and Dash & Cooper's share of missing ROC area

    delta_i(c) = (R_best(c) - R_i(c)) / (1 - R_i(c)),    delta_i = mean over classes c,

with ``R_i(c)`` the one-vs-rest ROC area of classifier ``i`` for class ``c`` and
``R_best(c)`` the best over the compared classifiers.  Per-fold differences
``d_f = m_A(f) - m_B(f)`` against a baseline (``K`` folds, mean ``d``, variance ``s^2``)
are tested with Nadeau & Bengio's corrected resampled t-test
``t = d / sqrt((1/K + 1/(K - 1)) s^2)`` or the plain paired t-test
``t = d / sqrt(s^2 / K)``, two-sided with ``K - 1`` degrees of freedom
(:func:`paired_test`; the module notes of :mod:`bnexplore.experiments.compare`).

Examples
--------
>>> import pandas as pd
>>> from bnexplore.experiments.compare import paired_test, win_draw_loss
>>> f = pd.DataFrame({"classifier": ["A"] * 3 + ["B"] * 3, "fold": [0, 1, 2] * 2,
...                   "error": [.1, .12, .11, .2, .22, .19]})
>>> win_draw_loss(paired_test(f, "error", baseline="B", test="paired"))
{'win': 1, 'draw': 0, 'loss': 0}
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ._compare_setup import CLASSIFIERS

__all__ = ["METRICS", "FOLD_METRICS", "LOWER_IS_BETTER", "CVResult", "metric_table",
           "paired_test", "win_draw_loss", "add_delta"]

METRICS = ("error", "auc", "log_loss", "squared_error", "cal", "delta")
#: metrics that :meth:`CVResult.fold_metrics` computes on each fold (CAL needs bins of
#: 100 rows and delta compares the pooled ROC areas, so they are pooled only).
FOLD_METRICS = ("error", "auc", "log_loss", "squared_error")
#: metrics where a smaller value is better.
LOWER_IS_BETTER = frozenset({"error", "log_loss", "squared_error", "cal", "delta"})


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
        target, n_splits, random_state and the shared parameters, keyed as
        :data:`PARAM_RANGES`: max_parents, n, penalty, queue_width.
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
    >>> from bnexplore.experiments.compare import cross_validate_classifiers
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
    from scipy.special import stdtr     # Student's t CDF (scipy.stats takes 0.5 s to import)

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
                p = float(2 * stdtr(k - 1, -abs(t)))
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
def add_delta(results: pd.DataFrame, by: Sequence[str] = ("dataset", "random_state")
              ) -> pd.DataFrame:
    """Add Dash & Cooper's ``delta`` column to rows of :func:`compare_trial`.

    Within each group (a data set and random state), every classifier is compared with
    the best one per class, from the ``auc_ovr_<j>`` columns.  A table written before
    0.2.0 (a ``seed`` column) is read too.
    """
    from .runner import upgrade_columns

    df = upgrade_columns(results).copy()
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
