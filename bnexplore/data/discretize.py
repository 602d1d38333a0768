"""Discretisers for continuous columns, as scikit-learn transformers.

* :class:`MDLDiscretizer` - supervised, Fayyad & Irani (1993) recursive entropy
  minimisation with the MDL stopping criterion (the method Weka calls
  ``weka.filters.supervised.attribute.Discretize``, used by the papers behind
  bnexplore).
* :class:`EqualFrequencyDiscretizer` - unsupervised quantile binning (Cerquides &
  Lopez de Mantaras use 5 bins).

Both learn cut points on ``fit`` (training data only, so they are safe inside a
:class:`~sklearn.pipeline.Pipeline` and ``cross_val_score``) and ``transform`` a
DataFrame into one of pandas Categoricals whose labels are intervals, e.g.
``"(-inf, 2.45]"``, ``"(2.45, 4.75]"``, ``"(4.75, inf)"``. Intervals are closed on the
right: a value equal to a cut point goes to the lower interval.

Conventions shared by both transformers
---------------------------------------
* Which columns are discretised is set by ``columns``: ``"auto"`` (default) takes the
  continuous columns by the same rule as :class:`~bnexplore.data.DiscreteData`
  (float columns with non-integer values, and float/integer columns with more than
  50 distinct values); ``"numeric"`` takes every non-bool numeric column; or pass a
  list of column names. Other columns are passed through unchanged, except (with
  ``"auto"``) the numeric columns of at most 50 integer values: their values seen in
  ``fit`` (``value_states_``) pass unchanged and ``transform`` replaces a value never
  seen in ``fit`` by the nearest seen one (a tie by the lower), so a test fold of
  ``cross_val_score`` never brings a value the classifier fitted on the training
  fold has not seen.
* A column with no accepted cut point becomes a single-state column labelled
  ``"All"`` (as Weka does): the column carries no information about the class.
* ``-inf`` and ``inf`` belong to the lowest and the highest interval: no cut point
  lies next to them (every cut point is finite).
* Missing values (NaN) in a discretised column are ignored when learning the cut
  points and stay missing (NaN) in the output; handle them afterwards, e.g. with
  ``DiscreteData.from_frame(..., missing="drop")``.
* A NumPy array is accepted and treated as a frame with columns ``x0, x1, ...``.

References
----------
U. M. Fayyad and K. B. Irani, "Multi-interval discretization of continuous-valued
attributes for classification learning", IJCAI 1993, pp. 1022-1027.
"""
from __future__ import annotations

import warnings
from typing import Hashable, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import check_int, check_positive_int
from .core import _as_2d_frame, _is_continuous, _repeated

__all__ = ["MDLDiscretizer", "EqualFrequencyDiscretizer", "interval_labels"]

#: label of the single state of a column with no cut point (Weka's convention).
SINGLE_STATE = "All"


# --------------------------------------------------------------------- helpers
def _format_cuts(cuts: Sequence[float]) -> list[str]:
    """Shortest ``%g`` text (at least 6 significant digits) that keeps cut points distinct."""
    for digits in range(6, 18):
        txt = [f"{c:.{digits}g}" for c in cuts]
        if len(set(txt)) == len(txt):
            return txt
    return [repr(float(c)) for c in cuts]


def interval_labels(cuts: Sequence[float]) -> list[str]:
    """Labels of the ``len(cuts) + 1`` intervals defined by sorted cut points.

    Examples
    --------
    >>> interval_labels([2.45, 4.75])
    ['(-inf, 2.45]', '(2.45, 4.75]', '(4.75, inf)']
    >>> interval_labels([])
    ['All']
    """
    if len(cuts) == 0:
        return [SINGLE_STATE]
    txt = _format_cuts(cuts)
    lows = ["-inf"] + txt
    highs = txt + ["inf"]
    return [f"({lo}, {hi}{')' if hi == 'inf' else ']'}" for lo, hi in zip(lows, highs)]


def _midpoints(x: np.ndarray) -> np.ndarray:
    """Midpoints of adjacent values (no overflow near the float maximum); not finite
    next to an infinite value."""
    lo, hi = x[:-1], x[1:]
    with np.errstate(invalid="ignore", over="ignore"):
        mid = (lo + hi) / 2.0
        big = np.isfinite(lo) & np.isfinite(hi) & ~np.isfinite(mid)
        mid[big] = lo[big] / 2.0 + hi[big] / 2.0
    return mid


def _apply_cuts(values: pd.Series, cuts: Sequence[float]) -> pd.Categorical:
    labels = interval_labels(cuts)
    x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    codes = np.searchsorted(np.asarray(cuts, dtype=float), x, side="left").astype(np.int64)
    codes[np.isnan(x)] = -1
    return pd.Categorical.from_codes(codes, categories=labels, ordered=True)


def _apply_values(values: pd.Series, states: Sequence[int]) -> pd.Series:
    """``values`` with each value not in ``states`` replaced by the nearest state (ties lower).

    The dtype is kept (an integer column stays integer; NaN stays NaN in a float column).
    """
    x = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    st = np.asarray(states, dtype=float)
    if st.size == 0:
        return values
    near = st[np.searchsorted((st[:-1] + st[1:]) / 2.0, x, side="left")]
    if np.array_equal(near, x, equal_nan=True):
        return values                            # every value seen in fit: unchanged
    near[np.isnan(x)] = np.nan
    dtype = values.dtype if pd.api.types.is_float_dtype(values.dtype) or not np.isnan(x).any() \
        else np.float64
    return pd.Series(near, index=values.index, name=values.name).astype(dtype)


def _is_numeric(series: pd.Series) -> bool:
    return (pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype)
            and not pd.api.types.is_complex_dtype(series.dtype)
            and not isinstance(series.dtype, pd.CategoricalDtype))


class _BaseDiscretizer(TransformerMixin, BaseEstimator):
    """Shared fit/transform plumbing of the discretisers."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True        # NaN passes through (documented)
        tags.input_tags.categorical = True      # non-numeric columns pass through
        tags.input_tags.string = True
        tags.transformer_tags.preserves_dtype = []   # output is categorical labels
        return tags

    def _value_columns(self, df: pd.DataFrame, cut: list[Hashable]) -> dict:
        """``"auto"`` only: the sorted values of the numeric columns that are not cut."""
        if not (isinstance(self.columns, str) and self.columns == "auto"):
            return {}
        out = {}
        for c in df.columns:
            if c in cut or not _is_numeric(df[c]):
                continue
            x = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
            vals = np.unique(x[~np.isnan(x)])
            out[c] = [int(v) for v in vals]     # not continuous: finite integers only
        return out

    def _select_columns(self, df: pd.DataFrame) -> list[Hashable]:
        cols = self.columns
        if isinstance(cols, str):
            if cols == "auto":
                return [c for c in df.columns if _is_continuous(df[c])]
            if cols == "numeric":
                return [c for c in df.columns if _is_numeric(df[c])]
            raise ValueError(f"columns must be 'auto', 'numeric' or a list of column names, got {cols!r}")
        cols = list(cols)
        unknown = [c for c in cols if c not in df.columns]
        if unknown:
            raise ValueError(f"columns {unknown} are not in X; columns are {list(df.columns)}")
        for c in cols:
            if not _is_numeric(df[c]):
                raise TypeError(f"column {c!r} has dtype {df[c].dtype}, not numeric: it cannot be "
                                f"discretised; leave it out of columns, or convert it to numbers first "
                                f"(e.g. df[{c!r}].dt.total_seconds() for time spans)")
        return cols

    def _start_fit(self, X) -> pd.DataFrame:
        df = _as_2d_frame(X, type(self).__name__, series_ok=True)  # (refuses 0 features)
        if df.shape[0] == 0:
            raise ValueError("X has no rows: cannot learn cut points from an empty data set")
        dup = _repeated([str(c) for c in df.columns])
        if dup:
            raise ValueError(f"duplicate column names {dup}: rename them so every column is unique")
        if isinstance(X, pd.DataFrame) and all(isinstance(c, str) for c in X.columns):
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.n_features_in_ = df.shape[1]
        self._columns_in = list(df.columns)
        return df

    def _finish_fit(self, df: pd.DataFrame, cuts: dict) -> None:
        self.cut_points_ = {c: [float(v) for v in cuts[c]] for c in cuts}
        self.columns_ = list(cuts)
        self.value_states_ = self._value_columns(df, self.columns_)

    def transform(self, X) -> pd.DataFrame:
        """Replace every fitted column by a Categorical of interval labels.

        Parameters
        ----------
        X : DataFrame or array of shape (n_rows, n_features)
            A DataFrame must have the columns seen in ``fit`` (in any order; missing
            or extra columns are refused); an array is matched by position, with a
            ``UserWarning`` when ``fit`` saw a DataFrame with column names.

        Returns
        -------
        DataFrame
            Same columns and index as ``X``; discretised columns are ordered
            Categoricals, the columns of ``value_states_`` keep their dtype with
            unseen values replaced, the others are unchanged.
        """
        check_is_fitted(self, "cut_points_")
        who = type(self).__name__
        df = _as_2d_frame(X, who, series_ok=True)
        if not isinstance(X, (pd.DataFrame, pd.Series)):
            if df.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {df.shape[1]} features, but {who} is expecting "
                                 f"{self.n_features_in_} features as input")
            if hasattr(self, "feature_names_in_"):
                warnings.warn(f"X does not have valid feature names, but {who} was fitted with "
                              f"feature names: its columns are matched by position to "
                              f"{list(self.feature_names_in_)}", UserWarning, stacklevel=2)
            df = df.set_axis(self._columns_in, axis=1)
        if list(df.columns) != self._columns_in:
            missing = [c for c in self._columns_in if c not in df.columns]
            extra = [c for c in df.columns if c not in self._columns_in]
            if missing or extra:
                raise ValueError(
                    f"X has different columns from those seen in fit: missing {missing}, unexpected {extra}"
                )
            df = df[self._columns_in]
        out = df.copy()
        for c, cuts in self.cut_points_.items():
            if not _is_numeric(df[c]):
                raise TypeError(f"column {c!r} was numeric in fit but has dtype {df[c].dtype} now")
            out[c] = _apply_cuts(df[c], cuts)
        for c, values in getattr(self, "value_states_", {}).items():
            if not _is_numeric(df[c]):
                raise TypeError(f"column {c!r} was numeric in fit but has dtype {df[c].dtype} now")
            out[c] = _apply_values(df[c], values)
        return out

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Output column names: the same as the input ones."""
        check_is_fitted(self, "cut_points_")
        return np.asarray([str(c) for c in self._columns_in], dtype=object)


# -------------------------------------------------------------------- MDL core
def _entropy_rows(counts: np.ndarray) -> np.ndarray:
    """Entropy (bits) of each row of a count matrix."""
    n = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(n > 0, counts / np.where(n > 0, n, 1), 0.0)
        logp = np.where(p > 0, np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return -(p * logp).sum(axis=-1)


def mdl_accepts(counts: np.ndarray, left: np.ndarray, right: np.ndarray) -> tuple[bool, float, float]:
    """Fayyad-Irani MDL test of one binary split.

    Parameters
    ----------
    counts, left, right : ndarray of shape (n_classes,)
        Class counts of the whole interval S and of its two parts S1, S2.

    Returns
    -------
    accepted : bool
        ``gain > log2(N - 1) / N + Delta / N``.
    gain : float
        Information gain ``Ent(S) - |S1|/N Ent(S1) - |S2|/N Ent(S2)`` in bits.
    threshold : float
        The right-hand side, with
        ``Delta = log2(3^k - 2) - [k Ent(S) - k1 Ent(S1) - k2 Ent(S2)]`` and k, k1,
        k2 the numbers of classes present in S, S1, S2.

    Examples
    --------
    >>> import numpy as np
    >>> ok, gain, thr = mdl_accepts(np.array([4, 4]), np.array([4, 0]), np.array([0, 4]))
    >>> ok, round(gain, 3), round(thr, 3)
    (True, 1.0, 0.452)
    """
    counts, left, right = (np.asarray(a, dtype=float) for a in (counts, left, right))
    n, n1, n2 = counts.sum(), left.sum(), right.sum()
    ent, ent1, ent2 = _entropy_rows(np.stack([counts, left, right]))
    gain = ent - (n1 / n) * ent1 - (n2 / n) * ent2
    k, k1, k2 = (int((a > 0).sum()) for a in (counts, left, right))
    delta = np.log2(3.0 ** k - 2) - (k * ent - k1 * ent1 - k2 * ent2)
    threshold = (np.log2(n - 1) + delta) / n if n > 1 else np.inf
    return bool(gain > threshold), float(gain), float(threshold)


def mdl_cut_points(x: np.ndarray, y: np.ndarray, min_rows: int = 2) -> list[float]:
    """Fayyad-Irani cut points of one continuous variable.

    Parameters
    ----------
    x : ndarray of float, shape (n,)
        Values (no NaN).
    y : ndarray of int, shape (n,)
        Class codes ``0..K-1``.
    min_rows : int
        Intervals with fewer rows are not split further.

    Returns
    -------
    list of float
        Sorted cut points; each is the midpoint between two adjacent distinct
        values (candidate cuts lie only between distinct values).

    Examples
    --------
    >>> import numpy as np
    >>> mdl_cut_points(np.arange(1.0, 9.0), np.array([0, 0, 0, 0, 1, 1, 1, 1]))
    [4.5]
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=np.int64)
    order = np.argsort(x, kind="mergesort")
    x, y = x[order], y[order]
    n_classes = int(y.max()) + 1 if y.size else 1
    onehot = np.zeros((x.size, n_classes), dtype=np.int64)
    onehot[np.arange(x.size), y] = 1
    cuts: list[float] = []
    stack = [(0, x.size)]
    while stack:
        lo, hi = stack.pop()
        n = hi - lo
        if n < max(2, min_rows):
            continue
        xs = x[lo:hi]
        # candidate split after position i (left = xs[:i+1]) where the value changes,
        # between two finite values: -inf and inf stay in the extreme intervals
        cand = np.nonzero((xs[:-1] < xs[1:]) & np.isfinite(_midpoints(xs)))[0]
        if cand.size == 0:
            continue
        cum = np.cumsum(onehot[lo:hi], axis=0)
        total = cum[-1]
        if (total > 0).sum() < 2:          # pure interval: nothing to gain
            continue
        left = cum[cand]
        right = total - left
        n1 = (cand + 1).astype(float)
        w = (n1 * _entropy_rows(left) + (n - n1) * _entropy_rows(right)) / n
        best = int(np.argmin(w))
        i = cand[best]
        ok, _, _ = mdl_accepts(total, left[best], right[best])
        if not ok:
            continue
        cuts.append(float(_midpoints(xs[i:i + 2])[0]))
        stack.append((lo, lo + i + 1))
        stack.append((lo + i + 1, hi))
    return sorted(cuts)


class MDLDiscretizer(_BaseDiscretizer):
    """Supervised discretisation by Fayyad & Irani's MDL method.

    Each continuous column is split recursively at the cut point that minimises
    the class entropy of the two parts; a split is kept only if its information
    gain exceeds ``log2(N - 1) / N + Delta / N`` with
    ``Delta = log2(3^k - 2) - [k Ent(S) - k1 Ent(S1) - k2 Ent(S2)]``. Cut points
    lie only between distinct values (midpoints, as in Weka).

    Parameters
    ----------
    columns : "auto", "numeric" or list of str, default "auto"
        Columns to discretise. ``"auto"``: the continuous ones, by the rule
        of :class:`~bnexplore.data.DiscreteData` (non-integer floats, or more
        than 50 distinct values), while the other numeric columns keep their
        values as states (see ``value_states_``); ``"numeric"``: every non-bool
        numeric column. Other columns pass through unchanged.
    min_rows : int, default 2
        Intervals with fewer rows are not split (a whole number >= 1; an interval of
        one row is never split).

    Attributes
    ----------
    cut_points_ : dict of column -> list of float
        Sorted cut points of each discretised column; an empty list means the
        column became the single state ``"All"`` (no split passed the MDL test).
    columns_ : list
        The discretised columns.
    value_states_ : dict of column -> list of int
        With ``columns="auto"``: the values seen in ``fit`` of each numeric column that
        is not continuous (at most 50 integer values).  ``transform`` keeps these
        values and replaces a value never seen in ``fit`` by the nearest seen one (a
        tie by the lower, as for a cut point), so that every value after
        ``transform`` is one a classifier fitted on the same training fold knows.
    classes_ : ndarray
        Class labels seen in ``fit``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` was a DataFrame with string column names.

    Notes
    -----
    Missing values in ``X`` are ignored while learning a column's cut points and
    stay NaN after ``transform``. Missing values in ``y`` are an error, and so is a
    continuous ``y`` (non-integer numbers, or more than 50 distinct ones): the method
    needs class labels.

    References
    ----------
    Fayyad, U. M. and Irani, K. B. (1993). Multi-interval discretization of
    continuous-valued attributes for classification learning. IJCAI, 1022-1027.

    Examples
    --------
    >>> import bnexplore as bx
    >>> iris = bx.datasets.load("iris")
    >>> X, y = iris.drop(columns="class"), iris["class"]
    >>> mdl = bx.data.MDLDiscretizer().fit(X, y)
    >>> mdl.cut_points_["petallength"]
    [2.45, 4.75]
    >>> mdl.transform(X)["petallength"].cat.categories.tolist()
    ['(-inf, 2.45]', '(2.45, 4.75]', '(4.75, inf)']
    """

    def __init__(self, columns: str | Sequence[str] = "auto", min_rows: int = 2):
        self.columns = columns
        self.min_rows = min_rows

    def fit(self, X, y=None) -> "MDLDiscretizer":
        """Learn cut points of the continuous columns of ``X`` with respect to ``y``.

        Parameters
        ----------
        X : DataFrame or array of shape (n_rows, n_features)
        y : array-like of shape (n_rows,)
            Class labels (any hashable values; no missing values).

        Returns
        -------
        self
        """
        if y is None:
            raise TypeError("MDLDiscretizer is supervised: fit(X, y) needs the class labels y "
                            "(use EqualFrequencyDiscretizer for unsupervised binning)")
        df = self._start_fit(X)
        if isinstance(y, pd.Series):
            y_arr = y.to_numpy()
        else:
            y_arr = np.asarray(y, dtype=object)
            if y_arr.ndim == 2 and y_arr.shape[1] == 1:
                y_arr = y_arr[:, 0]
            if y_arr.ndim != 1:
                raise ValueError(f"y must be 1-D (one class label per row), got shape {y_arr.shape}")
        y_ser = pd.Series(y_arr)
        if len(y_ser) != len(df):
            raise ValueError(f"y has {len(y_ser)} values but X has {len(df)} rows")
        n_na = int(y_ser.isna().sum())
        if n_na:
            raise ValueError(f"y has {n_na} missing values (first at row {int(np.argmax(y_ser.isna()))}): "
                             f"drop those rows before fitting")
        min_rows = check_int(self.min_rows, "min_rows", low=1)
        if _is_continuous(y_ser):
            raise ValueError(
                f"y looks continuous ({y_ser.nunique()} distinct numbers): MDLDiscretizer needs "
                f"class labels; discretise y first (e.g. EqualFrequencyDiscretizer) for a "
                f"numeric target, or pass y.astype(str) if its values are labels")
        codes, classes = pd.factorize(y_ser, sort=False)
        self.classes_ = np.asarray(classes)
        cols = self._select_columns(df)
        cuts = {}
        for c in cols:
            x = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
            ok = ~np.isnan(x)
            cuts[c] = mdl_cut_points(x[ok], codes[ok], min_rows=min_rows) if ok.any() else []
        self._finish_fit(df, cuts)
        return self


# --------------------------------------------------------- equal frequency
def equal_frequency_cut_points(x: np.ndarray, n_bins: int) -> list[float]:
    """Cut points splitting ``x`` into at most ``n_bins`` bins of (nearly) equal counts.

    Cuts fall only between distinct values, so ties give fewer bins.

    Examples
    --------
    >>> import numpy as np
    >>> equal_frequency_cut_points(np.arange(10.0), 5)
    [1.5, 3.5, 5.5, 7.5]
    >>> equal_frequency_cut_points(np.array([1.0, 1, 1, 1, 1, 1, 2, 3]), 4)
    [1.5, 2.5]
    """
    x = np.asarray(x, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0 or n_bins < 2:
        return []
    uniq, counts = np.unique(x, return_counts=True)
    if uniq.size < 2:
        return []
    # Weka's equal-frequency walk: after each cut, the target bin size is recomputed
    # from the rows still to place, so ties early on do not starve later bins.
    n_rows = float(counts.sum())
    freq = n_rows / n_bins
    remaining = n_rows
    counter = last = 0.0
    last_idx = -1
    chosen: list[int] = []
    for j in range(uniq.size - 1):           # boundary between uniq[j] and uniq[j + 1]
        counter += counts[j]
        remaining -= counts[j]
        if counter >= freq:
            if last_idx != -1 and (freq - last) < (counter - freq):
                chosen.append(last_idx)          # the previous boundary is closer to the target
                counter -= last
                last = counter
                last_idx = j
            else:
                chosen.append(j)
                counter = last = 0.0
                last_idx = -1
            if len(chosen) >= n_bins - 1:
                break
            freq = (remaining + counter) / (n_bins - len(chosen))
        else:
            last_idx = j
            last = counter
    mids = _midpoints(uniq)
    return [float(mids[i]) for i in chosen if np.isfinite(mids[i])]   # -inf, inf: extreme bins


class EqualFrequencyDiscretizer(_BaseDiscretizer):
    """Unsupervised equal-frequency (quantile) binning.

    Each selected column is cut into at most ``n_bins`` intervals holding about the
    same number of training rows. Cuts are placed only between distinct values,
    so a column with repeated values (ties) gets fewer bins, and a column with one
    distinct value becomes the single state ``"All"``.

    Parameters
    ----------
    n_bins : int, default 5
        Largest number of intervals per column (Cerquides & Lopez de Mantaras use 5).
    columns : "auto", "numeric" or list of str, default "auto"
        Columns to discretise, as for :class:`MDLDiscretizer`.

    Attributes
    ----------
    cut_points_ : dict of column -> list of float
    columns_ : list
    value_states_ : dict of column -> list of int
        As for :class:`MDLDiscretizer`.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Missing values are ignored in ``fit`` and stay NaN after ``transform``.

    Examples
    --------
    >>> import pandas as pd
    >>> from bnexplore.data import EqualFrequencyDiscretizer
    >>> X = pd.DataFrame({"x": [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]})
    >>> EqualFrequencyDiscretizer(n_bins=3).fit(X).cut_points_
    {'x': [2.0, 4.0]}
    """

    def __init__(self, n_bins: int = 5, columns: str | Sequence[str] = "auto"):
        self.n_bins = n_bins
        self.columns = columns

    def fit(self, X, y=None) -> "EqualFrequencyDiscretizer":
        """Learn quantile cut points of the selected columns (``y`` is ignored).

        Returns
        -------
        self
        """
        check_positive_int(self.n_bins, "n_bins")
        df = self._start_fit(X)
        cols = self._select_columns(df)
        cuts = {c: equal_frequency_cut_points(pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float),
                                              int(self.n_bins)) for c in cols}
        self._finish_fit(df, cuts)
        return self
