"""Evaluation measures used by the papers reproduced in bnexplore.

Discrimination: :func:`roc_curve`, :func:`auc` (binary Mann-Whitney, multi-class
Hand & Till 2001 M measure) and :func:`error_rate`.  Probability measures:
:func:`log_loss`, :func:`squared_error` and the calibration score :func:`cal_score`
(Caruana & Niculescu-Mizil 2004).  :func:`delta` is the share of missing ROC area of
Dash & Cooper (2002, Procedure 2).

Conventions (scikit-learn's):

* class labels may be of any hashable type (ints, strings, booleans, categoricals);
* ``proba`` has one row per instance and one column per class, the columns following
  ``classes``; when ``classes`` is omitted it is ``numpy.unique(y_true)`` (sorted);
* for two classes a 1-D ``proba`` is accepted and read as the probability of
  ``classes[1]`` (the "positive" class).

Bad input raises a :class:`ValueError` that says what is wrong.

References
----------
Hand, D. J. and Till, R. J. (2001). A simple generalisation of the area under the ROC
curve for multiple class classification problems. Machine Learning 45, 171-186.

Caruana, R. and Niculescu-Mizil, A. (2004). Data mining in metric space: an empirical
analysis of supervised learning performance criteria. KDD 2004.

Dash, D. and Cooper, G. F. (2002). Exact model averaging with discrete Bayesian network
classifiers (Procedure 2).

Visweswaran, S. and Cooper, G. F. (2010). Learning instance-specific predictive models.
JMLR 11 (Section 6.2, Table 1).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ._validation import check_int

__all__ = ["roc_curve", "auc", "log_loss", "squared_error", "error_rate", "cal_score",
           "delta"]

_PROBA_TOL = 1e-9      # tolerance on [0, 1] bounds
_ROWSUM_TOL = 1e-6     # tolerance on rows summing to one


# --------------------------------------------------------------------------- helpers
def _labels(y: Any, name: str = "y_true") -> np.ndarray:
    """Return labels as a 1-D numpy array (any dtype), rejecting missing values."""
    arr = np.asarray(y)  # categoricals become arrays of their categories
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: at least one instance is needed")
    if pd.isna(arr).any():
        raise ValueError(f"{name} contains missing values (NaN/None): drop or impute them")
    return arr


def _classes(y: np.ndarray, classes: Sequence[Any] | None) -> np.ndarray:
    if classes is None:
        try:
            return np.unique(y)
        except TypeError as exc:  # unorderable mixed types
            raise ValueError("y_true mixes label types that cannot be sorted: pass "
                             "classes= explicitly") from exc
    cls = np.asarray(list(classes) if not isinstance(classes, np.ndarray) else classes)
    if cls.ndim != 1 or cls.size < 2:
        raise ValueError(f"classes must list at least two labels, got {list(cls)!r}")
    if pd.Index(cls).has_duplicates:
        raise ValueError(f"classes contains duplicate labels: {list(cls)!r}")
    return cls


def _codes(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Map labels to column indices of ``classes``; unknown labels are an error."""
    codes = pd.Index(classes).get_indexer(y)
    if (codes < 0).any():
        unknown = pd.unique(y[codes < 0])[:5]
        raise ValueError(f"y_true contains labels {list(unknown)!r} that are not in classes "
                         f"{list(classes)!r}")
    return codes


def _proba(proba: Any, n: int, classes: np.ndarray, *, rows_sum_to_one: bool) -> np.ndarray:
    """Validate ``proba`` and return it as an (n, n_classes) float array."""
    p = np.asarray(proba, dtype=float)
    k = len(classes)
    if p.ndim == 1:
        if k != 2:
            raise ValueError(f"a 1-D proba is only allowed for two classes, but there are "
                             f"{k} classes {list(classes)!r}: pass an (n, {k}) array")
        p = np.column_stack([1.0 - p, p])
    if p.ndim != 2:
        raise ValueError(f"proba must be 1-D or 2-D, got shape {p.shape}")
    if p.shape != (n, k):
        raise ValueError(f"proba has shape {p.shape} but y_true has {n} instances and "
                         f"there are {k} classes {list(classes)!r}: expected ({n}, {k}) "
                         f"with columns following classes")
    if not np.isfinite(p).all():
        raise ValueError("proba contains NaN or infinite values")
    if (p < -_PROBA_TOL).any() or (p > 1 + _PROBA_TOL).any():
        raise ValueError(f"proba values must lie in [0, 1]; found min {p.min():g}, "
                         f"max {p.max():g}")
    p = np.clip(p, 0.0, 1.0)
    if rows_sum_to_one:
        bad = np.abs(p.sum(axis=1) - 1.0) > _ROWSUM_TOL
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"rows of proba must sum to 1 (a distribution over classes); "
                             f"row {i} sums to {p[i].sum():.6g}")
    return p


def _setup(y_true, proba, classes, *, rows_sum_to_one=True):
    y = _labels(y_true)
    cls = _classes(y, classes)
    if len(cls) < 2:
        raise ValueError(f"y_true contains a single class {list(cls)!r}: pass classes= "
                         f"to name all the classes that proba's columns follow")
    codes = _codes(y, cls)
    p = _proba(proba, len(y), cls, rows_sum_to_one=rows_sum_to_one)
    return y, cls, codes, p


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x``, tied values sharing the mean of their ranks.

    A tie group sorted into 0-based positions ``start .. end - 1`` holds the ranks
    ``start + 1 .. end``, whose mean is ``(start + 1 + end) / 2``.
    """
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]      # first value of each tie group
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], len(x)]
    ranks = np.empty(len(x))
    ranks[order] = ((starts + 1 + ends) / 2.0)[np.cumsum(first) - 1]
    return ranks


def _mann_whitney_auc(pos_scores: np.ndarray, neg_scores: np.ndarray) -> float:
    """P(score of a random positive > score of a random negative) + 0.5 P(tie)."""
    n_pos, n_neg = len(pos_scores), len(neg_scores)
    ranks = _average_ranks(np.concatenate([pos_scores, neg_scores]))
    return float((ranks[:n_pos].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


# --------------------------------------------------------------------------- ROC / AUC
def roc_curve(y_true: Any, scores: Any, pos_label: Any = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points of the ROC curve of a binary problem.

    Instances are classified positive when their score is ``>= threshold``; one point
    is produced per distinct score, so tied scores move the curve in one (diagonal)
    step.  The first point is ``(0, 0)`` at threshold ``+inf``, the last ``(1, 1)``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels of any type.  Every label other than ``pos_label`` is negative.
    scores : array-like of shape (n,)
        Higher means "more positive" (e.g. the probability of ``pos_label``).
    pos_label : label, optional
        The positive label.  May be omitted when the labels are ``{0, 1}``,
        ``{-1, 1}`` or booleans (then 1 / True is positive).

    Returns
    -------
    fpr, tpr, thresholds : ndarray
        False- and true-positive rates and the decreasing thresholds.

    Examples
    --------
    >>> fpr, tpr, thr = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 1.0], [0.0, 0.5, 1.0, 1.0])
    >>> thr.tolist()
    [inf, 0.8, 0.4, 0.1]
    """
    y = _labels(y_true)
    s = np.asarray(scores, dtype=float)
    if s.shape != y.shape:
        raise ValueError(f"scores has shape {s.shape} but y_true has shape {y.shape}")
    if not np.isfinite(s).all():
        raise ValueError("scores contains NaN or infinite values")
    if pos_label is None:
        uniq = set(pd.unique(y).tolist())
        if uniq <= {0, 1} or uniq <= {-1, 1}:
            pos_label = 1
        else:
            raise ValueError(f"labels {sorted(map(str, uniq))} are not {{0, 1}}, "
                             f"{{-1, 1}} or booleans: pass pos_label=")
    pos = y == pos_label
    n_pos = int(pos.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"the ROC curve needs both positive and negative instances; "
                         f"y_true has {n_pos} positive (pos_label={pos_label!r}) and "
                         f"{n_neg} negative")
    order = np.argsort(-s, kind="mergesort")
    s_sorted, pos_sorted = s[order], pos[order]
    tp = np.cumsum(pos_sorted)
    fp = np.cumsum(~pos_sorted)
    # last index of each run of tied scores
    last = np.r_[np.flatnonzero(np.diff(s_sorted) != 0), len(s_sorted) - 1]
    tpr = np.r_[0.0, tp[last] / n_pos]
    fpr = np.r_[0.0, fp[last] / n_neg]
    thresholds = np.r_[np.inf, s_sorted[last]]
    return fpr, tpr, thresholds


def auc(y_true: Any, proba: Any, classes: Sequence[Any] | None = None) -> float:
    """Area under the ROC curve; Hand & Till's M for more than two classes.

    Binary case: the Mann-Whitney statistic, the probability that a random positive
    (``classes[1]``) gets a higher score than a random negative, ties counting 1/2.
    It equals the trapezoidal area under :func:`roc_curve`.

    More than two classes: the M measure of Hand & Till (2001),
    ``M = 2 / (c (c - 1)) * sum_{i < j} (A(i|j) + A(j|i)) / 2`` where ``A(i|j)`` is the
    binary AUC separating class ``i`` from class ``j`` using column ``i`` of ``proba``
    on the instances of classes ``i`` and ``j`` only.  This equals scikit-learn's
    ``roc_auc_score(..., multi_class="ovo", average="macro")``.  Pairs involving a
    class absent from ``y_true`` (e.g. in a small test fold) are left out of the
    average; at least two classes must be present.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels of any type.
    proba : array-like of shape (n, n_classes) or (n,)
        Scores per class, columns following ``classes``.  For two classes a 1-D array
        of scores for ``classes[1]`` is accepted.  Rows need not sum to one.
    classes : sequence, optional
        The labels of proba's columns; default ``numpy.unique(y_true)``.

    Returns
    -------
    float

    Examples
    --------
    >>> auc([0, 0, 1, 1], [0.1, 0.4, 0.4, 0.8])
    0.875
    >>> p = [[.8, .1, .1], [.2, .7, .1], [.3, .3, .4], [.1, .2, .7]]
    >>> auc(["a", "b", "c", "c"], p)
    1.0
    """
    y, cls, codes, p = _setup(y_true, proba, classes, rows_sum_to_one=False)
    present = np.unique(codes)
    if len(present) < 2:
        raise ValueError(f"AUC is undefined when y_true contains a single class "
                         f"({y[0]!r}): the test set needs at least two classes")
    if len(cls) == 2:
        return _mann_whitney_auc(p[codes == 1, 1], p[codes == 0, 1])
    total, n_pairs = 0.0, 0
    for a_i, i in enumerate(present):
        for j in present[a_i + 1:]:
            in_i, in_j = codes == i, codes == j
            a_ij = _mann_whitney_auc(p[in_i, i], p[in_j, i])
            a_ji = _mann_whitney_auc(p[in_j, j], p[in_i, j])
            total += (a_ij + a_ji) / 2.0
            n_pairs += 1
    return float(total / n_pairs)


# --------------------------------------------------------------------------- probability measures
def log_loss(y_true: Any, proba: Any, classes: Sequence[Any] | None = None,
             eps: float = 1e-15, base: float | None = None) -> float:
    """Mean logarithmic loss ``-mean_i log p_i(y_i)``.

    Natural logarithm by default (scikit-learn's convention).  Witten & Frank (2005),
    which Visweswaran & Cooper cite for the multi-class log loss, use bits: pass
    ``base=2`` for that.  Probabilities are clipped to ``[eps, 1 - eps]`` so that a
    zero probability for the true class gives a large finite loss.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    proba : array-like of shape (n, n_classes) or (n,)
        Rows must sum to one (within 1e-6).
    classes : sequence, optional
        Labels of proba's columns; default ``numpy.unique(y_true)``.
    eps : float
        Clipping constant.
    base : float, optional
        Logarithm base; ``None`` for natural logarithm.

    Returns
    -------
    float

    Examples
    --------
    >>> round(log_loss(["x", "y"], [[0.5, 0.5], [0.2, 0.8]]), 6)
    0.458145
    """
    if not 0 <= eps < 0.5:
        raise ValueError(f"eps must be in [0, 0.5), got {eps!r}")
    _, _, codes, p = _setup(y_true, proba, classes)
    p_true = np.clip(p[np.arange(len(codes)), codes], eps, 1.0 - eps)
    loss = -np.log(p_true)
    if base is not None:
        if base <= 0 or base == 1:
            raise ValueError(f"base must be positive and != 1, got {base!r}")
        loss = loss / np.log(base)
    return float(loss.mean())


def squared_error(y_true: Any, proba: Any, classes: Sequence[Any] | None = None,
                  normalize: bool = True) -> float:
    """Squared error (multi-class Brier score) of probabilistic predictions.

    ``SE = 1 / (2 n) * sum_i sum_c (1[y_i = c] - p_ic)^2`` with ``normalize=True``
    (default).  This follows Visweswaran & Cooper (2010), who cite Yeung et al. (2005)
    for the multi-class squared error and give its range as ``[0, 1]`` (Table 1): the
    factor 1/2 maps the multi-class Brier sum (range ``[0, 2]``) onto ``[0, 1]``, and
    for two classes it reduces to the familiar ``mean_i (1 - p_i(y_i))^2``, which is
    also what their Table 3 values are consistent with (a misclassified case
    contributes more than 0.25).  With ``normalize=False`` the factor 1/2 is dropped
    (``mean_i sum_c (1[y_i = c] - p_ic)^2``, range ``[0, 2]``).

    Parameters
    ----------
    y_true : array-like of shape (n,)
    proba : array-like of shape (n, n_classes) or (n,)
        Rows must sum to one (within 1e-6).
    classes : sequence, optional
        Labels of proba's columns; default ``numpy.unique(y_true)``.
    normalize : bool
        Divide by 2 so the range is ``[0, 1]``.

    Returns
    -------
    float

    Examples
    --------
    >>> squared_error([0, 1], [[0.8, 0.2], [0.4, 0.6]])  # ((.2)^2 + (.4)^2) / 2
    0.1
    >>> squared_error([0, 1], [0.2, 0.6], normalize=False)
    0.2
    """
    _, cls, codes, p = _setup(y_true, proba, classes)
    onehot = np.zeros_like(p)
    onehot[np.arange(len(codes)), codes] = 1.0
    per_case = ((onehot - p) ** 2).sum(axis=1)
    value = per_case.mean()
    return float(value / 2.0 if normalize else value)


def error_rate(y_true: Any, y_pred: Any, classes: Sequence[Any] | None = None) -> float:
    """Misclassification rate.

    Parameters
    ----------
    y_true : array-like of shape (n,)
    y_pred : array-like of shape (n,) or (n, n_classes)
        Predicted labels, or a probability matrix whose columns follow ``classes``
        (the prediction is the class of the largest probability, the first such
        column on ties).
    classes : sequence, optional
        Only used with a probability matrix; default ``numpy.unique(y_true)``.

    Returns
    -------
    float

    Examples
    --------
    >>> error_rate(["a", "b", "b"], ["a", "a", "b"])
    0.3333333333333333
    >>> error_rate(["a", "b"], [[0.9, 0.1], [0.6, 0.4]])
    0.5
    """
    y = _labels(y_true)
    pred = np.asarray(y_pred)
    if pred.ndim == 2:
        cls = _classes(y, classes)
        _codes(y, cls)
        p = _proba(np.asarray(y_pred, dtype=float), len(y), cls, rows_sum_to_one=False)
        pred = cls[np.argmax(p, axis=1)]
    else:
        pred = _labels(y_pred, "y_pred")
        if pred.shape != y.shape:
            raise ValueError(f"y_pred has {len(pred)} labels but y_true has {len(y)}")
    return float(np.mean(np.asarray(pred, dtype=object) != np.asarray(y, dtype=object)))


def cal_score(y_true: Any, p_pos: Any, bin_size: int = 100, pos_label: Any = None) -> float:
    """CAL calibration score of Caruana & Niculescu-Mizil (2004).

    Cases are sorted by predicted probability (a stable sort, so tied predictions keep
    their input order).  For every window of ``bin_size`` consecutive cases (cases
    1-100, 2-101, 3-102, ...) the absolute difference between the mean predicted
    probability and the observed fraction of positives is computed; CAL is the mean
    of these differences.  Range ``[0, 1]``, 0 is best.

    With fewer than ``bin_size`` cases there is a single window holding all of them
    (so CAL is ``|mean(p) - mean(y)|``, a calibration-in-the-large); this is our
    choice, the original definition assumes at least ``bin_size`` cases.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels; positives are ``pos_label`` (default: 1 / True for labels in
        {0, 1} or booleans).
    p_pos : array-like of shape (n,)
        Predicted probability of the positive class.  For a multi-class problem pass
        the column of the class of interest.
    bin_size : int
        Window width (100 in the paper).
    pos_label : label, optional
        The positive label.

    Returns
    -------
    float

    Examples
    --------
    >>> round(cal_score([0, 1, 1], [0.2, 0.5, 0.9], bin_size=2), 6)  # |.35-.5|, |.7-1|
    0.225
    >>> round(cal_score([0, 1, 1], [0.2, 0.5, 0.9]), 6)    # one window: |.5333 - .6667|
    0.133333
    """
    y = _labels(y_true)
    p = np.asarray(p_pos, dtype=float)
    if p.ndim != 1 or p.shape != y.shape:
        raise ValueError(f"p_pos must be 1-D with one probability per case; got shape "
                         f"{p.shape} for {len(y)} labels")
    if not np.isfinite(p).all():
        raise ValueError("p_pos contains NaN or infinite values")
    if (p < -_PROBA_TOL).any() or (p > 1 + _PROBA_TOL).any():
        raise ValueError(f"p_pos values must lie in [0, 1]; found min {p.min():g}, "
                         f"max {p.max():g}")
    bin_size = check_int(bin_size, "bin_size", low=1)
    if pos_label is None:
        uniq = set(pd.unique(y).tolist())
        if not uniq <= {0, 1}:
            raise ValueError(f"labels {sorted(map(str, uniq))} are not {{0, 1}} or "
                             f"booleans: pass pos_label=")
        pos_label = 1
    obs = (y == pos_label).astype(float)
    order = np.argsort(p, kind="mergesort")
    p_s, o_s = p[order], obs[order]
    w = min(int(bin_size), len(p))
    cp = np.r_[0.0, np.cumsum(p_s)]
    co = np.r_[0.0, np.cumsum(o_s)]
    mean_p = (cp[w:] - cp[:-w]) / w
    mean_o = (co[w:] - co[:-w]) / w
    return float(np.mean(np.abs(mean_p - mean_o)))


# --------------------------------------------------------------------------- delta
def delta(r1: Any, r2: Any, perfect: float = 1.0) -> float | np.ndarray:
    """Share of M2's missing ROC area captured by M1 (Dash & Cooper, Procedure 2).

    ``delta = (R1 - R2) / (T - R2)`` where ``T`` (``perfect``) is the ROC area of a
    perfect classifier, 1 for normalised axes.  Positive when M1 is better, 1 when M1
    is perfect, negative when M1 is worse (unbounded below).

    Defined behaviour at ``R2 == T`` (M2 already perfect): if also ``R1 == T`` the
    result is 0 (nothing was missing, nothing captured - as for the best classifier
    in Dash & Cooper's Table 5); if ``R1 < T`` the ratio is ``-inf`` and a
    :class:`ValueError` is raised, since averaging it would be meaningless.

    Parameters
    ----------
    r1, r2 : float or array-like
        ROC areas of M1 and M2 in ``[0, perfect]``; arrays are compared elementwise.
    perfect : float
        ROC area of a perfect classifier.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(delta(0.9, 0.8), 6)
    0.5
    >>> round(delta(0.7, 0.8), 6)
    -0.5
    >>> delta(1.0, 1.0)
    0.0
    >>> delta([0.9, 1.0], [0.8, 0.5]).round(6).tolist()
    [0.5, 1.0]
    """
    a = np.asarray(r1, dtype=float)
    b = np.asarray(r2, dtype=float)
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError as exc:
        raise ValueError(f"r1 and r2 have incompatible shapes {a.shape} and {b.shape}") \
            from exc
    for name, v in (("r1", a), ("r2", b)):
        if not np.isfinite(v).all() or (v < 0).any() or (v > perfect).any():
            raise ValueError(f"{name} must contain ROC areas in [0, {perfect}], got {v!r}")
    saturated = b == perfect
    if (saturated & (a != perfect)).any():
        raise ValueError(f"delta is -inf when M2 is perfect (r2 == {perfect}) and M1 is "
                         f"not: there is no missing area to capture")
    denom = np.where(saturated, 1.0, perfect - b)
    out = np.where(saturated, 0.0, (a - b) / denom)
    if out.ndim == 0:
        return float(out)
    return out
