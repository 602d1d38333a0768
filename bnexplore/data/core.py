"""Validated discrete data: integer codes with names, state labels and arities.

Every algorithm in bnexplore works on :class:`DiscreteData`. It is built from a
pandas DataFrame of categorical, string, bool or small-integer columns and turns
back into one with the original labels.
"""
from __future__ import annotations

import math
import warnings
from typing import Hashable, Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "DiscreteData",
    "MemoryBudgetError",
    "as_discrete",
    "check_table_size",
    "config_index",
    "config_strides",
    "get_table_budget",
    "set_table_budget",
]

#: default largest number of cells a single contingency table may have.
DEFAULT_TABLE_BUDGET = 50_000_000
_TABLE_BUDGET = {"cells": DEFAULT_TABLE_BUDGET}

#: a float or integer column with more distinct values than this is "continuous".
MAX_STATES = 50


class UnknownColumnError(ValueError, KeyError):
    """A column name the data do not have: a ``ValueError`` (bad input, as everywhere in
    bnexplore), and a ``KeyError`` for code that looks columns up like a mapping."""

    __str__ = BaseException.__str__        # the message itself, not KeyError's quoted repr


class ColumnIndexError(ValueError, IndexError):
    """A column position out of range: a ``ValueError``, and an ``IndexError``."""


class MemoryBudgetError(ValueError):
    """A table (parent configurations x child states) would not fit the memory budget."""


def get_table_budget() -> int:
    """Largest number of cells a contingency/CPT table may have (default 5e7)."""
    return _TABLE_BUDGET["cells"]


def set_table_budget(cells: int) -> int:
    """Set the table budget; returns the previous value.

    Parameters
    ----------
    cells : int
        Largest number of cells (8-byte words) one table or kernel working set may
        use; a positive whole number (``1e8`` is accepted as ``100_000_000``).

    Raises
    ------
    TypeError
        If ``cells`` is not a number (or is a bool).
    ValueError
        If ``cells`` is zero, negative, fractional, NaN or infinite.

    Examples
    --------
    >>> import bnexplore as bx
    >>> old = bx.data.set_table_budget(10**6)
    >>> _ = bx.data.set_table_budget(old)
    """
    cells = _check_budget(cells, "cells")
    old = _TABLE_BUDGET["cells"]
    _TABLE_BUDGET["cells"] = cells
    return old


def _check_budget(cells, name: str) -> int:
    """A budget as a positive int: an int or a whole float (``1e8``); bools, fractions,
    NaN, infinities and non-numbers are refused, naming the parameter ``name``."""
    if isinstance(cells, (bool, np.bool_)) or not isinstance(cells, (int, np.integer, float, np.floating)):
        raise TypeError(f"{name} (table budget) must be a positive int number of cells, got {cells!r}")
    if isinstance(cells, (float, np.floating)) and not (math.isfinite(cells) and cells == int(cells)):
        raise ValueError(f"{name} (table budget) must be a positive whole number of cells, got {cells!r}")
    if cells < 1:
        raise ValueError(f"{name} (table budget) must be a positive number of cells, got {cells!r}: "
                         f"pass at least 1 (the default is 50,000,000)")
    return int(cells)


def check_table_size(arities: Sequence[int], names: Sequence[str] | None = None,
                     what: str = "table", budget: int | None = None) -> int:
    """Return the product of ``arities``; raise :class:`MemoryBudgetError` if too large.

    The product is computed with Python integers so it never overflows.
    """
    budget = get_table_budget() if budget is None else int(budget)
    size = 1
    for a in arities:
        size *= int(a)
    if size > budget:
        cols = f" over columns {list(names)}" if names is not None else ""
        raise MemoryBudgetError(
            f"{what}{cols} would need {size:,} cells ({size * 8 / 2**30:.2f} GiB as float64), "
            f"over the budget of {budget:,} cells: use fewer parents (a smaller k or n), "
            f"merge states, or raise the budget with bnexplore.data.set_table_budget()"
        )
    return size


def config_strides(arities: Sequence[int]) -> np.ndarray:
    """Place values of a mixed-radix configuration index, the **last variable fastest**.

    ``strides[i] = prod(arities[i + 1:])``, so configuration ``(x_0, ..., x_m)`` has index
    ``sum_i x_i * strides[i]`` (C order, as ``numpy.ravel_multi_index``). This is the
    row order of every CPT and count table in bnexplore.

    Examples
    --------
    >>> config_strides([2, 3, 4]).tolist()
    [12, 4, 1]
    """
    ar = np.asarray(arities, dtype=np.int64)
    strides = np.ones(ar.size, dtype=np.int64)
    if ar.size > 1:
        strides[:-1] = np.cumprod(ar[::-1])[::-1][1:]
    return strides


def config_index(codes: Sequence[np.ndarray], arities: Sequence[int], n: int | None = None
                 ) -> np.ndarray:
    """Mixed-radix index of the configurations of several variables, row by row.

    ``codes[i]`` holds the (n,) state codes of the i-th variable, ``arities[i]`` its number
    of states; the last variable varies fastest (:func:`config_strides`). With no variable
    every row is configuration 0 (give ``n``).

    Examples
    --------
    >>> import numpy as np
    >>> config_index([np.array([0, 1, 1]), np.array([2, 0, 1])], [2, 3]).tolist()
    [2, 3, 4]
    """
    if len(codes) == 0:
        return np.zeros(0 if n is None else n, dtype=np.int64)
    cfg = np.array(codes[0], dtype=np.int64)       # a copy: callers may add to it
    for col, a in zip(codes[1:], arities[1:]):
        cfg = cfg * int(a) + col
    return cfg


def _as_2d_frame(X, who: str, series_ok: bool = False) -> pd.DataFrame:
    """``X`` as a DataFrame (arrays get columns x0, x1, ...), refusing sparse, 1-D (a
    Series too, unless ``series_ok``), non-2-D, complex and featureless input with a
    message that says how to mend it.  The shared front door of the estimators."""
    if hasattr(X, "tocsr") or hasattr(X, "toarray"):
        raise TypeError(f"sparse input is not supported by {who} ({type(X).__name__}): pass a dense "
                        f"array or a DataFrame (X.toarray())")
    if isinstance(X, pd.Series):
        if not series_ok:
            raise ValueError(f"Expected a 2-D X, got a pandas Series of length {len(X)}: Reshape your "
                             f"data with X.to_frame() (one feature) or X.to_frame().T (one sample)")
        X = X.to_frame()
    if isinstance(X, pd.DataFrame):
        frame = X
    else:
        arr = np.asarray(X)
        if arr.ndim == 1:
            raise ValueError(f"Expected a 2-D X, got a 1-D array of shape {arr.shape}: Reshape your "
                             f"data either using array.reshape(-1, 1) if it has a single feature or "
                             f"array.reshape(1, -1) if it contains a single sample.")
        if arr.ndim != 2:
            raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {arr.shape}")
        if np.iscomplexobj(arr):
            raise ValueError("Complex data not supported: X must hold real numbers or discrete labels")
        frame = pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])
    if frame.shape[1] == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape={frame.shape}) while a minimum of 1 "
                         f"is required by {who}: X needs at least one feature attribute (column)")
    _check_unique_columns(frame.columns)
    return frame


def _repeated(values: Sequence[Hashable]) -> list:
    """The values that occur more than once in ``values``, sorted by their text (linear time).

    Examples
    --------
    >>> _repeated(["a", "b", "a", "c", "b"])
    ['a', 'b']
    """
    seen: set = set()
    return sorted({v for v in values if v in seen or seen.add(v)}, key=str)


def _check_unique_columns(columns) -> None:
    """Refuse column labels that repeat, also after conversion to text (``0`` and ``"0"``)."""
    if columns.is_unique and (columns.dtype != object or
                              len({str(c) for c in columns}) == len(columns)):
        return
    dup = _repeated([str(c) for c in columns])
    raise ValueError(f"duplicate column names {dup}: rename them so every column is unique "
                     f"(e.g. X.columns = [f'{{c}}_{{i}}' for i, c in enumerate(X.columns)])")


#: ``infer_dtype`` kinds of object columns that are refused, with what to do instead
_REFUSED_KINDS = {
    "datetime": "dates/times",
    "datetime64": "dates/times",
    "date": "dates",
    "time": "times of day",
    "timedelta": "time spans",
    "timedelta64": "time spans",
    "complex": "complex numbers",
}


def _refuse_kind(name, kind: str) -> None:
    if kind in ("timedelta", "timedelta64"):
        todo = (f"convert it to a number, e.g. df[{name!r}].dt.total_seconds(), and discretise "
                f"that with MDLDiscretizer, or convert it to strings with .astype(str)")
    elif kind == "complex":
        todo = (f"split it into real numbers, e.g. np.real / np.imag or np.abs of df[{name!r}], "
                f"and discretise those with MDLDiscretizer")
    else:
        todo = (f"derive a discrete column from it, e.g. df[{name!r}].dt.year or .dt.month, or "
                f"convert it to strings with .astype(str) if every value is a state")
    raise ValueError(f"column {name!r} holds {_REFUSED_KINDS[kind]}, which bnexplore cannot use as "
                     f"discrete states: {todo}")


def _as_label(v):
    """Text form of one value of a column that mixes types (``1``, ``1.0`` and ``"1"`` -> ``"1"``)."""
    if isinstance(v, (bool, np.bool_, str)):
        return str(v)
    if isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return str(v)


def _clean_column(s: pd.Series, name) -> pd.Series:
    """Refuse datetime, timedelta and complex columns; unify object columns that mix types.

    An object column mixing numbers and strings (e.g. ``1`` and ``"1"``, as pandas' chunked
    CSV reader can produce) is encoded by the text of each value, so ``1``, ``1.0`` and
    ``"1"`` are one state ``"1"``; a column mixing only integers and floats becomes numeric.
    """
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return s
    kind = dtype.kind
    if kind in "mMc":
        _refuse_kind(name, {"M": "datetime", "m": "timedelta", "c": "complex"}[kind])
    if kind != "O":
        return s
    inferred = pd.api.types.infer_dtype(s, skipna=True)
    if inferred in _REFUSED_KINDS:
        _refuse_kind(name, inferred)
    if inferred == "mixed-integer-float":
        return pd.to_numeric(s)
    if inferred in ("mixed", "mixed-integer"):
        vals = s.to_numpy()
        na = pd.isna(s).to_numpy()
        if any(isinstance(v, (complex, np.complexfloating)) for v in vals[~na]):
            _refuse_kind(name, "complex")
        out = np.array([None if m else _as_label(v) for v, m in zip(vals, na)], dtype=object)
        return pd.Series(out, index=s.index, name=s.name)
    return s


def _continuous_error(name, n_distinct: int, whole: bool = False) -> ValueError:
    """The refusal of a continuous column; ``whole``: its values are whole numbers,
    perhaps category codes (zip codes, ids), which a string or categorical dtype keeps."""
    codes = (f"; if its values are category codes rather than quantities, make it "
             f"categorical: df[{name!r}].astype(str) or .astype('category')") if whole else ""
    return ValueError(
        f"column {name!r} is continuous ({n_distinct} distinct values): discretise it "
        f"with bnexplore.data.MDLDiscretizer (supervised) or EqualFrequencyDiscretizer, "
        f"or load with discretize='mdl'{codes}")


def _whole_numbers(series: pd.Series) -> bool:
    x = pd.to_numeric(series, errors="coerce").dropna().to_numpy(dtype=float)
    return bool(np.all(np.isfinite(x) & (x == np.round(x))))


def _is_continuous(series: pd.Series) -> bool:
    if isinstance(series.dtype, pd.CategoricalDtype) or series.dtype.kind not in "iuf":
        return False                        # labels: no need to look at the values
    s = series.dropna()
    if s.empty:
        return False
    if pd.api.types.is_bool_dtype(s):
        return False
    if pd.api.types.is_float_dtype(s):
        vals = s.to_numpy(dtype=float)
        if not np.all(np.isfinite(vals)):
            return True
        if not np.all(vals == np.round(vals)):
            return True
        return s.nunique() > MAX_STATES
    if pd.api.types.is_integer_dtype(s):
        return s.nunique() > MAX_STATES
    return False


def _column_arrays(df: pd.DataFrame) -> list:
    """The arrays of ``df``'s columns (a ``Categorical`` for a categorical column), in
    order.  pandas' own column iterator makes no Series per column (a Series costs about
    ten microseconds, which for a frame of 40 columns is more than coding 1,000 rows);
    where a pandas version lacks it, each column's ``Series.array``."""
    it = getattr(df, "_iter_column_arrays", None)
    if it is not None:
        try:
            arrays = list(it())
        except Exception:          # pragma: no cover - a pandas without the iterator
            arrays = None
        if arrays is not None and len(arrays) == df.shape[1]:
            return arrays
    return [df.iloc[:, j].array for j in range(df.shape[1])]


class DiscreteData:
    """Integer-coded discrete data set.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_cols)
        Integer state codes, ``0 <= codes[:, j] < arities[j]`` (a float array is
        accepted if every value is a whole number; NaN, fractions and codes outside
        the states raise ``ValueError``).
    names : sequence of str
        Column names (unique).
    states : sequence of sequences
        State labels of every column, ``len(states[j]) == arities[j]``.
    target : str, optional
        Name of the class column, if any.
    labels : sequence, optional
        The original column labels (``df.columns``) when they are not all strings;
        an integer given to :meth:`index` is then a label, not a position.
    missing : ndarray of bool, shape (n_rows, n_cols), optional
        Marks the cells whose value is missing. Their entry in ``codes`` is a
        placeholder (state 0) that must never be counted.

    Attributes
    ----------
    codes : ndarray of int32, shape (n_rows, n_cols), Fortran order
    columns : ndarray of int32, shape (n_cols, n_rows)
        The transposed, C-contiguous codes (one row per variable) used by kernels.
    arities : ndarray of int64
    missing : ndarray of bool, shape (n_rows, n_cols), or None
        The missing cells; ``None`` when every value is observed (the usual case,
        so that code for complete data pays nothing).

    Notes
    -----
    **Missing values.** A data set with missing cells comes from
    ``from_frame(df, missing="keep")`` (or a classifier's ``fit``). The policy of the
    package is

    * *parameters* (CPTs, ODE tables) are counted by **available case**: each family
      over the rows where all of its variables are observed;
    * *structures and model weights* are compared on **one set of rows per
      comparison**: every candidate (parent set, tree, mixture component) is scored
      on the same rows, those where all the variables the comparison involves are
      observed. A candidate can therefore never win because its own variables have
      more missing rows (a family scored on fewer rows has a larger log marginal
      likelihood, so per-family available-case counting would reward missingness).
      Where one number per structure is needed (order averaging, the forests, ISMB),
      each family counts its *gain over the empty family*, both on the family's own
      rows (Eq. 3 of :mod:`bnexplore._available_case`), which is such a comparison.

    Methods that need complete rows refuse data with missing cells (through
    :func:`as_discrete`), naming :meth:`complete_cases`.

    Examples
    --------
    >>> import pandas as pd
    >>> from bnexplore.data import DiscreteData
    >>> d = DiscreteData.from_frame(pd.DataFrame({"a": ["x", "y", "x"], "b": [0, 1, 1]}))
    >>> d.arities.tolist(), d.n_rows
    ([2, 2], 3)
    >>> d.to_frame()["a"].tolist()
    ['x', 'y', 'x']
    """

    def __init__(self, codes: np.ndarray, names: Sequence[str], states: Sequence[Sequence[Hashable]],
                 target: str | None = None, labels: Sequence[Hashable] | None = None,
                 missing: np.ndarray | None = None):
        codes = np.asarray(codes)
        if codes.ndim != 2:
            raise ValueError(f"codes must be 2-D (rows x columns), got shape {codes.shape}")
        names = [str(n) for n in names]
        if len(names) != codes.shape[1]:
            raise ValueError(f"{len(names)} names for {codes.shape[1]} columns")
        dup = _repeated(names)
        if dup:
            raise ValueError(f"duplicate column names {dup}: rename them so every column is unique")
        if len(states) != len(names):
            raise ValueError(f"{len(states)} state lists for {len(names)} columns")
        self.arities = np.array([len(s) for s in states], dtype=np.int64)
        codes = _integer_codes(codes, names)
        if codes.size:
            lo = codes.min(axis=0)
            if lo.min() < 0:
                j = int(np.argmax(lo < 0))
                raise ValueError(f"column {names[j]!r} has the negative code {lo[j]}: codes must be "
                                 f"non-negative, 0 .. arity - 1 (build from a DataFrame with DiscreteData.from_frame, "
                                 f"which encodes missing values as you choose with missing=)")
            bad = np.nonzero(codes.max(axis=0) >= self.arities)[0]
            if bad.size:
                raise ValueError(f"column {names[bad[0]]!r} has a code outside its {self.arities[bad[0]]} states: "
                                 f"codes must be 0 .. arity - 1, one state label per code")
        if missing is not None:
            missing = np.asarray(missing)
            if missing.shape != codes.shape or missing.dtype != np.bool_:
                raise ValueError(f"missing must be a boolean array of shape {codes.shape}, got "
                                 f"{missing.dtype} of shape {missing.shape}")
            if not missing.any():
                missing = None
        if target is not None and target not in names:
            raise ValueError(f"target {target!r} is not a column; columns are {names}")
        if labels is not None and not all(isinstance(c, str) for c in labels) and len(labels) != len(names):
            raise ValueError(f"{len(labels)} labels for {len(names)} columns")
        self._assign(np.ascontiguousarray(np.asarray(codes, dtype=np.int32).T), names,
                     [list(s) for s in states], target, labels, missing)

    def _assign(self, columns: np.ndarray, names: list[str], states: Sequence[Sequence[Hashable]],
                target: str | None, labels: Sequence[Hashable] | None, missing: np.ndarray | None) -> None:
        """Set the fields from checked parts: ``columns`` (n_cols, n_rows) int32 C-contiguous
        (:attr:`codes` is its transpose, no copy), ``states`` as lists or as the sequences
        they are made from on first use (a frame's categories: turning labels into Python
        objects costs more than coding the rows), ``missing`` None or with a missing cell."""
        self.names: list[str] = names
        self._states_src = states
        self._states: list[list] | None = None
        self.arities = np.array([len(s) for s in states], dtype=np.int64)
        self.columns = columns
        self.codes = columns.T
        self.missing = missing
        self.target = target
        self._index = {n: i for i, n in enumerate(names)}
        # integer labels of a frame whose columns are not all strings: label -> position
        self._labels = None
        if labels is not None and not all(isinstance(c, str) for c in labels):
            self._labels = list(labels)
        self._label_index = None if self._labels is None else {
            c: i for i, c in enumerate(self._labels)
            if isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_))}

    @property
    def states(self) -> list[list]:
        """State labels of every column (``len(states[j]) == arities[j]``)."""
        if self._states is None:
            self._states = [list(s) for s in self._states_src]
            self._states_src = None
        return self._states

    # ------------------------------------------------------------------ build
    @classmethod
    def from_frame(cls, df: pd.DataFrame, target: str | None = None, missing: str = "raise",
                   check_target: bool = True) -> "DiscreteData":
        """Validate and encode a DataFrame.

        Parameters
        ----------
        df : DataFrame
            Categorical, string, bool or small-integer columns.
        target : str, optional
            Class column; defaults to ``df.attrs.get("target")``. It must take at
            least two values (when ``check_target``).
        missing : {"raise", "drop", "keep"}
            ``"raise"`` refuses missing values and says where they are; ``"drop"``
            drops the incomplete rows with a warning that gives the count;
            ``"keep"`` keeps them, marked in :attr:`missing` (see the class notes for
            how the package counts and scores them).
        check_target : bool, default True
            Require at least two values in the ``target`` column.

        Notes
        -----
        Datetime, timedelta and complex columns are refused with a message that says how
        to derive a discrete column from them.  An object column that mixes numbers and
        strings (as pandas' chunked CSV reader can produce) is encoded by the text of
        each value: ``1``, ``1.0`` and ``"1"`` are the same state ``"1"``.  Column labels
        that are not strings (e.g. the integers of ``pd.DataFrame(array)``) are kept, so
        :meth:`index` finds the column labelled ``0`` by that label, as pandas does.
        """
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
        if missing not in ("raise", "drop", "keep"):
            raise ValueError(f"missing must be 'raise', 'drop' or 'keep', got {missing!r}")
        _check_unique_columns(df.columns)
        cols = [str(c) for c in df.columns]
        if df.shape[1] == 0:
            raise ValueError("the data frame has no columns")
        if df.shape[0] == 0:
            raise ValueError("the data frame has no rows")
        if target is None:
            target = df.attrs.get("target")
        if target is not None and target not in df.columns:
            raise ValueError(f"target {target!r} is not a column; columns are {cols}")
        labels = list(df.columns)
        n, p = df.shape
        # categorical columns are coded from their codes, other columns through a Series
        # that is cleaned (mixed types unified), checked for continuity and factorised
        arrays = _column_arrays(df)
        series = {j: _clean_column(df.iloc[:, j], labels[j]) for j, a in enumerate(arrays)
                  if not isinstance(a.dtype, pd.CategoricalDtype)}
        for j, s in series.items():
            if _is_continuous(s):
                raise _continuous_error(labels[j], s.nunique(), _whole_numbers(s))
        na_of = {}                              # column -> its missing cells, where it has any
        for j, a in enumerate(arrays):
            na = a.codes < 0 if j not in series else series[j].isna().to_numpy()
            if na.any():
                na_of[j] = na
        mask = None
        if na_of and missing == "keep":
            mask = np.zeros((n, p), dtype=bool)
            for j, na in na_of.items():
                mask[:, j] = na
            empty = [j for j, na in na_of.items() if na.all()]
            if empty:
                raise ValueError(f"column {cols[empty[0]]!r} has no observed value: drop it")
        elif na_of:
            incomplete = np.logical_or.reduce(list(na_of.values()))
            rows = np.flatnonzero(incomplete)
            where = ", ".join(f"{labels[j]!r}: {int(na.sum())}" for j, na in sorted(na_of.items()))
            if missing == "raise":
                n_missing = sum(int(na.sum()) for na in na_of.values())
                raise ValueError(
                    f"{n_missing} missing values in {rows.size} rows (first rows {rows[:5].tolist()}; "
                    f"by column {where}): pass missing='keep' to keep them or missing='drop' to "
                    f"drop incomplete rows"
                )
            warnings.warn(f"dropped {rows.size} rows with missing values ({where})", UserWarning, stacklevel=2)
            if rows.size == n:
                raise ValueError("no rows left after dropping rows with missing values")
            keep = ~incomplete
            arrays = [a[keep] if j not in series else a for j, a in enumerate(arrays)]
            series = {j: s[keep] for j, s in series.items()}
            n = int(keep.sum())
        columns = np.empty((p, n), dtype=np.int32)
        states: list = []
        for j, a in enumerate(arrays):
            if j not in series:
                columns[j] = a.codes
                states.append(a.categories)     # turned into a list on first use of .states
            else:
                s = series[j]
                if pd.api.types.is_float_dtype(s):
                    s = s.astype("Int64") if mask is not None else s.astype(np.int64)
                inv, uniq = pd.factorize(s, sort=True)
                columns[j] = inv
                states.append(uniq.tolist())
        if mask is not None:
            columns[mask.T] = 0                 # the placeholder of a missing cell
        data = cls.__new__(cls)                 # the codes are valid by construction
        data._assign(columns, cols, states, str(target) if target is not None else None, labels, mask)
        if target is not None and check_target:
            t = data.index(target)
            present = np.unique(data.columns[t] if data.missing is None
                                else data.columns[t][~data.missing[:, t]])
            if present.size < 2:
                raise ValueError(
                    f"target {target!r} takes only one value ({data.states[t][present[0]]!r}) in these "
                    f"rows: a classifier needs at least two classes"
                )
        return data

    # ------------------------------------------------------------- accessors
    @property
    def n_rows(self) -> int:
        return self.codes.shape[0]

    @property
    def n_cols(self) -> int:
        return self.codes.shape[1]

    def __len__(self) -> int:
        return self.n_rows

    def __repr__(self) -> str:
        t = f", target={self.target!r}" if self.target else ""
        m = "" if self.missing is None else f", {int(self.missing.sum())} missing"
        return f"DiscreteData({self.n_rows} rows x {self.n_cols} columns{t}{m})"

    @property
    def has_missing(self) -> bool:
        """Whether any cell is missing."""
        return self.missing is not None

    def observed_rows(self, names: Iterable[str | int] | None = None) -> np.ndarray:
        """Boolean mask of the rows where all of ``names`` (default: every column) are observed.

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"a": ["x", None, "y"], "b": ["u", "v", None]})
        >>> d = DiscreteData.from_frame(df, missing="keep")
        >>> d.observed_rows(["a"]).tolist(), d.observed_rows().tolist()
        ([True, False, True], [True, False, False])
        """
        if self.missing is None:
            return np.ones(self.n_rows, dtype=bool)
        idx = list(range(self.n_cols)) if names is None else self.indices(names)
        return ~self.missing[:, idx].any(axis=1)

    def complete_cases(self, names: Iterable[str | int] | None = None) -> "DiscreteData":
        """The rows where all of ``names`` (default: every column) are observed.

        Returns ``self`` when nothing is missing. States are kept, so codes stay
        comparable with the full data set.
        """
        if self.missing is None:
            return self
        return self.take(self.observed_rows(names))

    def index(self, name: str | int) -> int:
        """Column position of ``name``.

        A string is a column name.  An integer is a position (checked and returned),
        except for data built from a frame with integer column labels, where it is
        the label (``df[0]`` is the column labelled 0, wherever it stands).
        """
        if isinstance(name, (int, np.integer)) and not isinstance(name, (bool, np.bool_)):
            if self._label_index is not None:
                j = self._label_index.get(int(name))
                if j is None:
                    raise UnknownColumnError(f"unknown column {name!r}; columns are {self._labels}")
                return j
            if not 0 <= int(name) < self.n_cols:
                raise ColumnIndexError(f"column index {name} out of range 0..{self.n_cols - 1}")
            return int(name)
        try:
            return self._index[name]
        except KeyError:
            raise UnknownColumnError(f"unknown column {name!r}; columns are {self.names}") from None

    def indices(self, names: Iterable[str | int]) -> list[int]:
        return [self.index(n) for n in names]

    def column(self, name: str | int) -> np.ndarray:
        return self.columns[self.index(name)]

    def subset(self, names: Sequence[str | int]) -> "DiscreteData":
        """A new data set with only these columns (in this order)."""
        idx = self.indices(names)
        tgt = self.target if self.target in [self.names[i] for i in idx] else None
        labels = None if self._labels is None else [self._labels[i] for i in idx]
        return DiscreteData(self.codes[:, idx], [self.names[i] for i in idx],
                            [self.states[i] for i in idx], target=tgt, labels=labels,
                            missing=None if self.missing is None else self.missing[:, idx])

    def take(self, rows: np.ndarray | Sequence[int]) -> "DiscreteData":
        """A new data set with the given rows (indices or boolean mask); states are kept."""
        rows = np.asarray(rows)
        return DiscreteData(self.codes[rows], self.names, self.states, target=self.target,
                            labels=self._labels,
                            missing=None if self.missing is None else self.missing[rows])

    def to_frame(self) -> pd.DataFrame:
        """Back to a DataFrame of categoricals with the original labels."""
        out = {}
        for j, n in enumerate(self.names):
            codes = self.codes[:, j]
            if self.missing is not None:
                codes = np.where(self.missing[:, j], -1, codes)   # -1: NaN in a Categorical
            out[n] = pd.Categorical.from_codes(codes, categories=pd.Index(self.states[j]))
        df = pd.DataFrame(out)
        if self.target is not None:
            df.attrs["target"] = self.target
        return df

    def encode(self, df: pd.DataFrame, unseen: str = "raise") -> np.ndarray:
        """Encode new rows with this data set's states (for predict time).

        ``unseen="raise"`` names the column and value of the first category never
        seen in training; ``unseen="missing"`` codes it -1 so that callers can skip it.
        """
        cols = [c for c in self.names if c in df.columns]
        out = np.full((len(df), len(cols)), -1, dtype=np.int32)
        for k, c in enumerate(cols):
            j = self.index(c)
            states = self.states[j]
            col = df[c]
            vals = col.astype(object).to_numpy() if isinstance(col.dtype, pd.CategoricalDtype) else col.to_numpy()
            codes = _lookup_codes(vals, states)
            missing = pd.isna(col).to_numpy()
            # the messages cannot name ``unseen=``: most callers (a network's or an
            # averaging's predict) have no such parameter; the classifiers do
            if unseen == "raise" and missing.any():
                raise ValueError(f"column {c!r} has {int(missing.sum())} missing values (first at row "
                                 f"{int(np.argmax(missing))}): impute or drop them (the classifiers of "
                                 f"bnexplore.classifiers sum missing values out)")
            codes[missing] = -1
            if unseen == "raise" and (codes < 0).any():
                bad = vals[np.argmax(codes < 0)]
                raise ValueError(
                    f"column {c!r} has value {bad!r} never seen in training (known: {states}): the "
                    f"model has no probability for it (the classifiers of bnexplore.classifiers "
                    f"treat it as missing, handle_unknown='missing')"
                )
            out[:, k] = codes
        return out


def _integer_codes(codes: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """``codes`` as an integer array, refusing what cannot be a state code (NaN, inf,
    fractions, strings, objects) with a message naming the first bad column; integer
    and bool arrays pass untouched (vectorised checks only)."""
    kind = codes.dtype.kind
    if kind in "iub":
        return codes
    if kind == "f":
        finite = np.isfinite(codes)
        whole = finite & (codes == np.round(np.where(finite, codes, 0.0)))
        if not whole.all():
            j = int(np.argmax(~whole.all(axis=0)))
            i = int(np.argmax(~whole[:, j]))
            what = "missing (NaN)" if np.isnan(codes[i, j]) else f"not an integer code ({codes[i, j]!r})"
            raise ValueError(
                f"column {names[j]!r} row {i} is {what}: codes must be integers 0 .. arity - 1; drop or impute "
                f"missing values first, or build from a DataFrame with DiscreteData.from_frame(df, missing='drop')")
        big = np.abs(codes).max(initial=0.0)
        if big >= 2**31:
            raise ValueError(f"codes must be integers 0 .. arity - 1, got a value of {big!r}")
        return codes.astype(np.int64)
    raise ValueError(f"codes must be an integer array (state codes 0 .. arity - 1), got dtype {codes.dtype}: "
                     f"build from a DataFrame with DiscreteData.from_frame, which encodes the labels")


def _lookup_codes(vals: np.ndarray, states: Sequence) -> np.ndarray:
    """Vectorised state lookup: exact matches first, then text forms (CSV round trips; ``1``,
    ``1.0`` and ``"1"`` alike)."""
    try:
        codes = pd.Index(states).get_indexer(vals).astype(np.int32)
    except (TypeError, ValueError):  # pragma: no cover - unhashable or mixed values
        codes = np.full(len(vals), -1, dtype=np.int32)
    miss = codes < 0
    if miss.any():
        as_str = pd.Index([_as_label(s) for s in states])
        if as_str.is_unique:
            alt = as_str.get_indexer(pd.Index([_as_label(v) for v in vals[miss]], dtype=object))
            codes[miss] = alt.astype(np.int32)
    return codes


def as_discrete(data, target: str | None = None, missing: str = "raise") -> DiscreteData:
    """Accept a :class:`DiscreteData` or a DataFrame and return a :class:`DiscreteData`.

    ``missing`` is what the caller can do with missing cells: ``"raise"`` (it needs
    complete rows: a data set with missing cells is refused, naming
    :meth:`DiscreteData.complete_cases`), ``"drop"`` (incomplete rows are dropped with a
    warning) or ``"keep"`` (the caller honours :attr:`DiscreteData.missing`).
    """
    if missing not in ("raise", "drop", "keep"):
        raise ValueError(f"missing must be 'raise', 'drop' or 'keep', got {missing!r}")
    if isinstance(data, DiscreteData):
        if target is not None and target != data.target:
            if target not in data.names:
                raise ValueError(f"target {target!r} is not a column; columns are {data.names}")
            data = DiscreteData(data.codes, data.names, data.states, target=target,
                                labels=data._labels, missing=data.missing)
        if data.missing is not None and missing != "keep":
            n_rows = int(data.missing.any(axis=1).sum())
            if missing == "raise":
                raise ValueError(
                    f"the data has {int(data.missing.sum())} missing values in {n_rows} rows and this "
                    f"method needs complete rows: pass data.complete_cases() to use the "
                    f"{data.n_rows - n_rows} complete rows")
            warnings.warn(f"dropped {n_rows} rows with missing values", UserWarning, stacklevel=3)
            data = data.complete_cases()
            if data.n_rows == 0:
                raise ValueError("no rows left after dropping rows with missing values")
        return data
    if isinstance(data, pd.DataFrame):
        return DiscreteData.from_frame(data, target=target, missing=missing)
    raise TypeError(f"expected a DataFrame or DiscreteData, got {type(data).__name__}")
