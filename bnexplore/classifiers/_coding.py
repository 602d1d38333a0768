"""The classifiers' coding of rows: training rows to :class:`~bnexplore.data.DiscreteData`,
new rows to the training codes.

Two kinds of input skip pandas entirely, because they already are codes or nearly so:

* a 2-D integer (or bool, or whole-valued finite float) numpy array: the states of a
  column are its sorted distinct values, exactly as ``DiscreteData.from_frame`` gives
  (``pandas.factorize(sort=True)``);
* a DataFrame whose every column is a Categorical: the codes are ``cat.codes``, the
  states the categories.

Anything else (strings, objects, mixed types, NaN in a numeric array) goes through
``DiscreteData.from_frame`` and ``DiscreteData.encode``, which clean, check and look up
values one column at a time. Both paths give the same codes and states; the fast ones
only avoid the per-column pandas machinery (a few hundred microseconds a column), which
dominates ``fit`` and ``predict`` on small data sets.

:func:`encode_rows` is the one function that matches new rows to the training coding;
every classifier reaches it through ``DiscreteClassifier._encode``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.core import MAX_STATES, DiscreteData, _continuous_error

__all__ = ["int_array_codes", "categorical_frame_codes", "class_codes", "encode_rows"]


def _column_arrays(X: pd.DataFrame) -> list:
    """The arrays behind the columns of ``X`` (a ``Categorical`` for a categorical column).

    ``DataFrame._get_column_array`` reads them without building a Series per column (a
    Series copies ``X.attrs`` deeply: tens of microseconds a column); the public spelling
    is the fallback for a pandas without it.
    """
    get = getattr(X, "_get_column_array", None)
    if get is None:  # pragma: no cover - other pandas versions
        return [X.iloc[:, j].array for j in range(X.shape[1])]
    return [get(j) for j in range(X.shape[1])]


def _categoricals(X) -> list | None:
    """The Categoricals of a non-empty DataFrame whose every column is categorical, or None.

    The column arrays are read directly (``X.dtypes`` builds a Series: tens of
    microseconds); a column is categorical exactly when its array is a Categorical."""
    if not isinstance(X, pd.DataFrame) or X.shape[0] == 0 or X.shape[1] == 0:
        return None
    cols = _column_arrays(X)
    return cols if all(isinstance(c, pd.Categorical) for c in cols) else None


def _states(cat: pd.Categorical) -> list:
    """The categories of ``cat`` as a list of Python values, as ``Index.tolist`` gives them.

    Arrow-backed string categories (pandas' default string type) are read through the
    Arrow interchange protocol: ``Index.tolist`` costs about 20 microseconds a column there,
    ``to_pylist`` under one."""
    cats = cat.categories
    if isinstance(cats.dtype, pd.StringDtype) and cats.dtype.storage == "pyarrow":
        return cats.array.__arrow_array__().to_pylist()
    return cats.tolist()


def _as_int_array(X) -> np.ndarray | None:
    """``X`` as a 2-D int64 array when it is a numpy array of integers, bools or whole
    finite floats with at least one row and column; otherwise None."""
    if type(X) is not np.ndarray or X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        return None
    kind = X.dtype.kind
    if kind in "iub":
        return X
    if kind == "f":
        if not np.isfinite(X).all() or not (X == np.round(X)).all():
            return None                   # NaN, inf or fractions: the checked path says why
        return X.astype(np.int64)
    return None


def int_array_codes(X) -> tuple[np.ndarray, list[list]] | None:
    """Codes (n, m) and states of an integer array, or None when ``X`` is not one.

    Raises the continuous-column ``ValueError`` of ``DiscreteData.from_frame`` when a
    (non-bool) column has more than ``MAX_STATES`` distinct values.
    """
    A = _as_int_array(X)
    if A is None:
        return None
    codes = np.empty(A.shape, dtype=np.int32)
    states = []
    for j in range(A.shape[1]):
        uniq, inv = np.unique(A[:, j], return_inverse=True)
        if A.dtype.kind != "b" and uniq.size > MAX_STATES:
            raise _continuous_error(f"x{j}", int(uniq.size))
        codes[:, j] = inv
        states.append(uniq.tolist())
    return codes, states


def categorical_frame_codes(X) -> tuple[np.ndarray, list[list], np.ndarray | None] | None:
    """Codes (n, m), states and missing mask (or None) of a DataFrame of Categoricals.

    None when ``X`` is not a non-empty DataFrame whose every column is a Categorical, or
    when a column has no observed value (the checked path raises for it).
    """
    cols = _categoricals(X)
    if cols is None:
        return None
    codes = np.empty(X.shape, dtype=np.int32)
    for j, c in enumerate(cols):
        codes[:, j] = c.codes
    mask = codes < 0
    if mask.any():
        if mask.all(axis=0).any():
            return None
        codes[mask] = 0                      # the placeholder of a missing cell
    else:
        mask = None
    return codes, [_states(c) for c in cols], mask


def class_codes(y) -> tuple[np.ndarray, np.ndarray] | None:
    """``(classes, codes)`` of a 1-D integer array or of a Categorical of string or integer
    labels without missing values (classes sorted as ``numpy.unique`` sorts them), or
    None for anything else (checked by ``DiscreteClassifier._check_y``)."""
    if type(y) is np.ndarray:
        if y.ndim != 1 or y.dtype.kind not in "iub":
            return None
        return np.unique(y, return_inverse=True)
    if isinstance(y, pd.Series) and isinstance(y.dtype, pd.CategoricalDtype):
        cat = y.array                        # the Categorical itself: no Series per access
    elif isinstance(y, pd.Categorical):
        cat = y
    else:
        return None
    cats = cat.categories
    if cats.dtype.kind not in "iub" and cats.inferred_type != "string":
        return None                          # floats, mixed objects: the checked path
    codes = cat.codes
    if codes.size == 0 or codes.min() < 0:
        return None
    present = np.flatnonzero(np.bincount(codes, minlength=len(cats)))
    labels = np.asarray(cats)[present]           # np.asarray(y) holds these values
    order = np.argsort(labels, kind="stable")
    classes = labels[order]
    to_class = np.empty(len(cats), dtype=np.int64)
    to_class[present[order]] = np.arange(present.size)
    return classes, to_class[codes]


def encode_rows(X, data: DiscreteData, columns: list | None) -> np.ndarray | None:
    """Training codes (n, m) of new rows already matched to the training columns, with
    ``-1`` for a missing value, when ``X`` takes a fast path; None otherwise.

    ``columns`` are the training column labels (None after array input). Fast paths: an
    integer array against integer states (fitted on an integer array), or a DataFrame
    with the training columns in order whose Categoricals have the training categories.
    A value never seen in training is coded ``-1`` as well.
    """
    m = len(data.names) - 1
    A = _as_int_array(X)
    if A is not None:
        if A.shape[1] != m:
            return None
        out = np.empty(A.shape, dtype=np.int32)
        for j in range(m):
            st = data.states[j]
            if not all(type(v) is int for v in st):
                return None
            ref = np.asarray(st, dtype=np.int64)
            col = A[:, j]
            pos = np.minimum(np.searchsorted(ref, col), ref.size - 1)
            out[:, j] = np.where(ref[pos] == col, pos, -1)
        return out
    if isinstance(X, pd.DataFrame) and columns is not None and X.shape[1] == m \
            and X.shape[0] > 0 and list(X.columns) == columns:
        cols = _categoricals(X)
        if cols is None:
            return None
        out = np.empty(X.shape, dtype=np.int32)
        for j, c in enumerate(cols):
            if _states(c) != data.states[j]:
                return None
            out[:, j] = c.codes
        return out
    return None
