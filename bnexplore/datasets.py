"""Bundled UCI data sets (Weka ARFF versions), ready for discrete Bayesian networks.

The files live in ``bnexplore/data/files/uci`` and ship with the package, so
nothing is downloaded.

=================  =====  ==========  =======  ========  ==================
name               rows   attributes  classes  numeric   missing cells
                          (+ class)            attrs     (rows affected)
=================  =====  ==========  =======  ========  ==================
breast-cancer        286          9        2         0        9 (9)
contact-lenses        24          4        3         0        0
credit-g            1000         20        2         7        0
diabetes             768          8        2         8        0
glass                214          9        6         9        0
ionosphere           351         34        2        34        0
iris                 150          4        3         4        0
labor                 57         16        2         8      326 (56)
segment-challenge   1500         19        7        19        0
segment-test         810         19        7        19        0
soybean              683         35       19         0     2337 (121)
vote                 435         16        2         0      392 (203)
weather.nominal       14          4        2         0        0
=================  =====  ==========  =======  ========  ==================

(glass declares 7 classes but only 6 occur; :func:`describe` counts the classes
that occur.) The class column is the attribute called ``class`` (any case) or
else the last one: ``Class`` (breast-cancer, vote), ``Type`` (glass),
``contact-lenses``, ``play`` (weather.nominal).

Examples
--------
>>> import bnexplore as bx
>>> bx.datasets.names()[:3]
['breast-cancer', 'contact-lenses', 'credit-g']
>>> df = bx.datasets.load("iris", discretize="mdl")
>>> df.attrs["target"], df["petallength"].cat.categories.tolist()
('class', ['(-inf, 2.45]', '(2.45, 4.75]', '(4.75, inf)'])
>>> bx.datasets.load_data("vote")   # doctest: +SKIP
DiscreteData(232 rows x 17 columns, target='Class')
"""
from __future__ import annotations

import functools
import warnings
from importlib import resources

import pandas as pd

from .data.core import DiscreteData

__all__ = ["names", "load", "load_data", "describe", "path"]

_UCI = "files/uci"


def _uci_dir():
    return resources.files("bnexplore.data").joinpath(_UCI)


def names() -> list[str]:
    """Names of the bundled UCI data sets, sorted.

    Examples
    --------
    >>> import bnexplore as bx
    >>> "vote" in bx.datasets.names()
    True
    """
    return sorted(p.name[:-len(".arff")] for p in _uci_dir().iterdir() if p.name.endswith(".arff"))


def _check_name(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"data set name must be a string, got {type(name).__name__}")
    key = name[:-len(".arff")] if name.endswith(".arff") else name
    available = names()
    if key not in available:
        raise ValueError(f"unknown data set {name!r}; bundled data sets are {available}")
    return key


def path(name: str):
    """Path of the bundled ARFF file of ``name`` (a :class:`pathlib.Path`-like object)."""
    return _uci_dir().joinpath(_check_name(name) + ".arff")


@functools.lru_cache(maxsize=None)
def _raw(name: str) -> pd.DataFrame:
    from .data.io import read_arff
    with path(name).open("rb") as fh:
        return read_arff(fh)


def _fresh(name: str) -> pd.DataFrame:
    df = _raw(name)
    out = df.copy(deep=True)
    out.attrs = dict(df.attrs)
    out.attrs["name"] = name
    return out


def load(name: str, discretize: str | None = None, n_bins: int = 5, missing: str = "keep") -> pd.DataFrame:
    """Load a bundled UCI data set as a DataFrame.

    Parameters
    ----------
    name : str
        One of :func:`names`.
    discretize : {None, "mdl", "quantile"}
        ``None`` keeps numeric attributes as float columns (discretise them in a
        Pipeline so that cut points are learnt on training folds only). ``"mdl"``
        discretises every numeric attribute with
        :class:`~bnexplore.data.MDLDiscretizer` against the class (on all rows,
        as Weka's filter does); ``"quantile"`` with
        :class:`~bnexplore.data.EqualFrequencyDiscretizer` into ``n_bins`` bins.
        Numeric attributes with no accepted cut become the single state ``"All"``
        (the rules of :func:`bnexplore.data.prepare_frame`, which uploads follow too).
    n_bins : int, default 5
        Bins for ``discretize="quantile"``.
    missing : {"keep", "drop", "state"}
        ``"keep"``: missing values stay NaN. ``"drop"``: rows with a missing
        value are dropped (before discretising) with a warning giving the count.
        ``"state"``: in categorical (and discretised) columns a missing value
        becomes its own category ``"?"``; numeric columns left undiscretised keep NaN.

    Returns
    -------
    DataFrame
        Nominal and discretised columns are Categoricals, others float;
        ``df.attrs["target"]`` names the class column.

    Examples
    --------
    >>> import bnexplore as bx
    >>> df = bx.datasets.load("weather.nominal")
    >>> df.shape, df.attrs["target"]
    ((14, 5), 'play')
    """
    from .data.frames import prepare_frame

    df = _fresh(_check_name(name))
    return prepare_frame(df, df.attrs["target"], discretize=discretize, n_bins=n_bins,
                         missing=missing)


def load_data(name: str, discretize: str | None = "mdl", n_bins: int = 5,
              missing: str = "drop") -> DiscreteData:
    """Load a bundled data set as :class:`~bnexplore.data.DiscreteData`.

    Parameters
    ----------
    name : str
        One of :func:`names`.
    discretize : {"mdl", "quantile", None}, default "mdl"
        As in :func:`load`; with ``None`` a data set with numeric attributes is
        refused (``ValueError`` naming the column).
    n_bins : int, default 5
    missing : {"drop", "state", "raise"}, default "drop"
        ``"drop"`` drops incomplete rows with a warning, ``"state"`` makes missing
        a category of its own, ``"raise"`` refuses data sets with missing values.
        ``labor`` has only one complete row, so it needs ``missing="state"``
        (with ``"drop"`` the error says so).

    Examples
    --------
    >>> import bnexplore as bx
    >>> d = bx.datasets.load_data("iris")
    >>> d.target, d.arities.tolist()
    ('class', [3, 3, 3, 3, 3])
    """
    if missing not in ("drop", "state", "raise"):
        raise ValueError(f"missing must be 'drop', 'state' or 'raise', got {missing!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if missing == "drop" else "default", UserWarning)
        df = load(name, discretize=discretize, n_bins=n_bins,
                  missing="keep" if missing == "raise" else missing)
    n_all = len(_raw(_check_name(name)))
    if missing == "drop" and len(df) < n_all:
        warnings.warn(f"{name}: dropped {n_all - len(df)} of {n_all} rows with missing values",
                      UserWarning, stacklevel=2)
    try:
        return DiscreteData.from_frame(df, target=df.attrs["target"], missing="raise")
    except ValueError as exc:
        if missing == "drop" and len(df) < n_all:
            raise ValueError(f"{name}: after dropping {n_all - len(df)} of {n_all} rows with missing "
                             f"values: {exc}. Use missing='state' to keep them.") from exc
        raise


@functools.lru_cache(maxsize=1)
def _describe() -> pd.DataFrame:
    rows = []
    for n in names():
        df = _raw(n)
        t = df.attrs["target"]
        attrs = [c for c in df.columns if c != t]
        na = df.isna()
        rows.append({
            "name": n,
            "rows": len(df),
            "attributes": len(attrs),
            "target": t,
            "classes": int(df[t].nunique()),
            "numeric": sum(not isinstance(df[c].dtype, pd.CategoricalDtype) for c in attrs),
            "nominal": sum(isinstance(df[c].dtype, pd.CategoricalDtype) for c in attrs),
            "missing_cells": int(na.values.sum()),
            "rows_with_missing": int(na.any(axis=1).sum()),
        })
    return pd.DataFrame(rows).set_index("name")


def describe() -> pd.DataFrame:
    """One row per bundled data set: rows, attributes, class, classes, numeric/nominal counts, missing.

    ``attributes`` excludes the class column; ``classes`` counts classes that occur;
    ``missing_cells`` and ``rows_with_missing`` count ``?`` values in the file.

    Examples
    --------
    >>> import bnexplore as bx
    >>> bx.datasets.describe().loc["vote", ["rows", "attributes", "classes"]].tolist()
    [435, 16, 2]
    """
    return _describe().copy()
