"""One front door for tables: a raw DataFrame made ready for discrete Bayesian networks.

:func:`prepare_frame` discretises the numeric features against the class and gives
missing values their policy; :func:`bnexplore.datasets.load` prepares the bundled data
sets with it and the apps prepare uploaded files with it, so both follow the same rules.
"""
from __future__ import annotations

import warnings
from typing import Hashable

import pandas as pd

__all__ = ["prepare_frame"]

#: the state that stands for a missing value (``missing="state"``).
MISSING_STATE = "?"


def _as_text_categories(col: pd.Series) -> pd.Series:
    """A column the discretiser left numeric (a few integer values) as categories of text."""
    vals = col.astype(object).where(col.notna(), None)
    vals = vals.map(lambda v: (str(int(v)) if isinstance(v, float) and v.is_integer()
                               else v if v is None else str(v)))
    return pd.Series(pd.Categorical(vals), index=col.index, name=col.name)


def prepare_frame(frame: pd.DataFrame, target: Hashable, discretize: str | None = None,
                  n_bins: int = 5, missing: str = "keep", columns: str = "numeric"
                  ) -> pd.DataFrame:
    """Discretise the features of ``frame`` against ``target`` and apply a missing-value policy.

    Parameters
    ----------
    frame : DataFrame
        The table, e.g. read by :func:`bnexplore.data.read_arff` or
        :func:`~bnexplore.data.read_csv`; it is not changed.
    target : hashable
        The class column.
    discretize : {None, "mdl", "quantile"}
        ``None`` keeps numeric features as they are. ``"mdl"`` cuts them with
        :class:`~bnexplore.data.MDLDiscretizer` against the class (on all rows, as Weka's
        filter does); ``"quantile"`` with
        :class:`~bnexplore.data.EqualFrequencyDiscretizer` into ``n_bins`` bins. A
        feature with no accepted cut becomes the single state ``"All"``; a numeric
        feature the discretiser leaves (``columns="auto"``: at most 50 integer values)
        becomes a categorical of its values as text.
    n_bins : int, default 5
        Bins for ``discretize="quantile"``.
    missing : {"keep", "drop", "state"}
        ``"keep"``: missing values stay NaN. ``"drop"``: rows with a missing value are
        dropped (before discretising) with a warning giving the count. ``"state"``: in
        categorical (and discretised) columns a missing value becomes its own category
        ``"?"``; numeric columns left undiscretised keep NaN.
    columns : {"numeric", "auto"}
        Which features are discretised: every numeric one, or the continuous ones by
        :class:`~bnexplore.data.DiscreteData`'s rule (see :mod:`bnexplore.data.discretize`).

    Returns
    -------
    DataFrame
        Nominal and discretised columns are Categoricals; ``attrs`` are those of
        ``frame`` with ``attrs["target"]`` set and, when discretised,
        ``attrs["cut_points"]`` (column -> cut points).

    Raises
    ------
    ValueError
        ``target`` is not a column, or an unknown ``discretize``, ``missing`` or
        ``columns``.

    Examples
    --------
    >>> import pandas as pd
    >>> from bnexplore.data import prepare_frame
    >>> raw = pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.7, 0.8, 0.9] * 5,
    ...                     "class": pd.Categorical(["a", "a", "a", "b", "b", "b"] * 5)})
    >>> df = prepare_frame(raw, "class", discretize="mdl")
    >>> df.attrs["cut_points"], df["x"].cat.categories.tolist()
    ({'x': [0.5]}, ['(-inf, 0.5]', '(0.5, inf)'])
    """
    if target not in frame.columns:
        raise ValueError(f"target {target!r} is not a column; columns are {list(frame.columns)}")
    if discretize not in (None, "mdl", "quantile"):
        raise ValueError(f"discretize must be None, 'mdl' or 'quantile', got {discretize!r}")
    if missing not in ("keep", "drop", "state"):
        raise ValueError(f"missing must be 'keep', 'drop' or 'state', got {missing!r}")
    if columns not in ("numeric", "auto"):
        raise ValueError(f"columns must be 'numeric' or 'auto', got {columns!r}")
    attrs = dict(frame.attrs)
    df = frame.copy()
    df.attrs = dict(attrs, target=target)
    if missing == "drop":
        bad = df.isna().any(axis=1)
        if bad.any():
            hint = " (consider missing='state')" if 2 * int(bad.sum()) > len(df) else ""
            warnings.warn(f"{attrs.get('name', 'data')}: dropped {int(bad.sum())} of {len(df)} "
                          f"rows with missing values{hint}", UserWarning, stacklevel=2)
            df = df.loc[~bad].reset_index(drop=True)
            df.attrs = dict(attrs, target=target)
    # every attribute categorical (vote, soybean, ...): the discretisers would pass each
    # one through and cut nothing, and importing them costs scikit-learn's import
    # (seconds of a server's first start)
    categorical = all(isinstance(df[c].dtype, pd.CategoricalDtype) for c in df.columns if c != target)
    if discretize is not None and columns == "numeric" and categorical:
        df.attrs["cut_points"] = {}
    elif discretize is not None:
        from .discretize import EqualFrequencyDiscretizer, MDLDiscretizer
        X = df.drop(columns=[target])
        if discretize == "mdl":
            tr = MDLDiscretizer(columns=columns).fit(X, df[target])
        else:
            tr = EqualFrequencyDiscretizer(n_bins=n_bins, columns=columns).fit(X)
        Xd = tr.transform(X)
        for c in Xd.columns:
            col = Xd[c]
            df[c] = col if isinstance(col.dtype, pd.CategoricalDtype) else _as_text_categories(col)
        df.attrs["cut_points"] = tr.cut_points_
    if missing == "state":
        for c in df.columns:
            s = df[c]
            if isinstance(s.dtype, pd.CategoricalDtype) and s.isna().any():
                df[c] = s.cat.add_categories([MISSING_STATE]).fillna(MISSING_STATE)
    return df
