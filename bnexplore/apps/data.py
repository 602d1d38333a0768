"""The data of an app: bundled data sets, network samples and the user's own table.

:class:`Data` is what every view of an app reads: a frame of categoricals with its class
column, a short description, notes for the user, and a ``key`` that names the data
exactly (the bundled name, or a hash of the table) so results can be cached on it.

A user's table (a DataFrame, or an uploaded CSV/ARFF file parsed by
:mod:`bnexplore.data`, never executed) is prepared by :func:`prepare_table`:

* identifier-like columns (a text or integer value unique to each row) and free text
  (long, mostly distinct texts) are left out, each with a note;
* the class defaults to the file's declared class (ARFF) or its last kept column;
* continuous columns are cut by MDL against the class, or into equal-frequency bins;
  a column MDL leaves with one state is dropped and named in a note
  ("Age: no cut point found for the class; dropped").

No Panel here: this module is the apps' data layer and is tested without a server.
"""
from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

#: largest accepted upload, in bytes.
UPLOAD_MAX_BYTES = 5_000_000
#: most columns an uploaded file may have (the apps learn structures over all of them).
UPLOAD_MAX_COLUMNS = 100
#: most values one column of an upload may have: declared (ARFF) or distinct texts (CSV).
UPLOAD_MAX_VALUES = 1_000
#: most nominal values an uploaded ARFF header may declare over all its attributes.
UPLOAD_MAX_DECLARED_VALUES = 20_000
#: most classes a class column may have.
MAX_CLASSES = 50
#: sample sizes offered for network samples.
SAMPLE_SIZES = [100, 200, 500, 1000, 2000, 5000, 10000]
#: the ways a user's continuous columns are cut.
BINNINGS = ("mdl", "equal-frequency")


@dataclass(frozen=True)
class Data:
    """The data an app's views read.

    Attributes
    ----------
    frame : DataFrame or None
        Categorical columns, the class column ``target`` among them; ``None`` when
        there is no data (``error`` says why).
    target : str or None
        The class column.
    label : str
        Plain text naming the data (``"vote (data set)"``, ``"asia, 1000 samples"``).
    key : str
        Names the data exactly; results are cached on it.
    bundled : bool
        Bundled data (the same on every start: results may be kept on disk).
    notes : tuple of str
        Plain-language remarks on the preparation (columns left out, rows dropped).
    cut_points : dict
        Column -> cut points of the discretised continuous columns.
    error : str or None
        Why there is no data.
    """

    frame: Any
    target: str | None
    label: str
    key: str
    bundled: bool = True
    notes: tuple = ()
    cut_points: dict = field(default_factory=dict, compare=False, hash=False)
    error: str | None = None

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Data) and other.key == self.key

    @property
    def columns(self) -> list[str]:
        return [] if self.frame is None else [str(c) for c in self.frame.columns]

    @property
    def features(self) -> list[str]:
        return [c for c in self.columns if c != self.target]

    @property
    def classes(self) -> list[str]:
        """The values of the class column found in the rows, in the column's order.

        Examples
        --------
        >>> bundled_dataset("vote").classes
        ['democrat', 'republican']
        """
        if self.frame is None or self.target not in self.frame:
            return []
        col = self.frame[self.target]
        seen = set(col.dropna().unique())
        order = col.cat.categories if isinstance(col.dtype, pd.CategoricalDtype) else sorted(seen)
        return [str(c) for c in order if c in seen]


def no_data(message: str) -> Data:
    """A :class:`Data` without a table; the views show ``message``."""
    return Data(None, None, "no data", key=f"none:{message}", bundled=False, error=message)


# --------------------------------------------------------------------------- bundled
def dataset_names() -> list[str]:
    import bnexplore as bx
    return list(bx.datasets.names())


def network_names() -> list[str]:
    import bnexplore as bx
    return list(bx.networks.names())


def bundled_dataset(name: str, binning: str = "mdl", bins: int = 5) -> Data:
    """A bundled data set, its numbers cut by MDL (or into ``bins`` equal-frequency bins),
    a missing value as a state of its own."""
    import bnexplore as bx

    if binning not in BINNINGS:
        raise ValueError(f"binning must be one of {BINNINGS}, got {binning!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        df = bx.datasets.load(name, discretize="mdl" if binning == "mdl" else "quantile",
                              n_bins=int(bins), missing="state")
    target = df.attrs.get("target")
    target = target if target in df.columns else df.columns[-1]
    key = f"dataset:{name}" + ("" if binning == "mdl" else f":{binning}:{int(bins)}")
    return Data(df, str(target), f"{name} (data set)", key=key, bundled=True,
                cut_points=dict(df.attrs.get("cut_points") or {}))


def network_sample(name: str, n: int, target: str | None = None, seed: int = 0) -> Data:
    """``n`` rows drawn from a bundled network (``seed`` fixed: the same rows each time)."""
    import bnexplore as bx

    df = bx.networks.load(name).sample(int(n), random_state=seed)
    target = target if target in df.columns else str(df.columns[-1])
    return Data(df, target, f"{name}, {int(n)} samples", key=f"network:{name}:{int(n)}:{seed}",
                bundled=True)


# --------------------------------------------------------------------------- uploads
def size_error(name: str, size: int, max_bytes: int) -> ValueError:
    return ValueError(f"the file {name!r} has {size:,} bytes, over the upload limit of "
                      f"{max_bytes:,} bytes ({max_bytes / 1e6:g} MB): upload a smaller file, "
                      f"e.g. a sample of its rows")


def check_upload(content: bytes | None, filename: str, max_bytes: int = UPLOAD_MAX_BYTES) -> str:
    """The checks of an upload that need no parsing; return the file's base name.

    Raises
    ------
    ValueError
        An empty file, one over ``max_bytes`` bytes, or an extension other than
        ``.csv``, ``.txt``, ``.tsv`` and ``.arff``.

    Examples
    --------
    >>> check_upload(b"a,b\\n1,2\\n", "dir/t.csv")
    't.csv'
    """
    name = Path(str(filename or "upload")).name
    if content is None or len(content) == 0:
        raise ValueError(f"the file {name!r} is empty: upload a CSV or ARFF file with data")
    if len(content) > max_bytes:
        raise size_error(name, len(content), max_bytes)
    ext = Path(name).suffix.lower()
    if ext not in (".arff", ".csv", ".txt", ".tsv"):
        raise ValueError(f"cannot read {name!r}: the file type {ext or '(none)'!r} is not "
                         f"supported; upload a .csv or .arff file")
    return name


def read_upload(content: bytes, filename: str, max_bytes: int = UPLOAD_MAX_BYTES,
                max_columns: int = UPLOAD_MAX_COLUMNS, max_values: int = UPLOAD_MAX_VALUES,
                max_declared_values: int = UPLOAD_MAX_DECLARED_VALUES) -> pd.DataFrame:
    """Parse an uploaded CSV or ARFF file with :mod:`bnexplore.data` (never executed).

    The limits on columns and values are checked on the header, before the rows are
    parsed; ``.tsv`` files are read with tabs.

    Raises
    ------
    ValueError
        Empty or too large a file, an unsupported extension, more columns or values
        than the limits, binary content, or the reader's own message.

    Examples
    --------
    >>> df = read_upload(b"a,b,class\\nx,1,yes\\ny,2,no\\n", "t.csv")
    >>> list(df.columns), df.attrs["target"]
    (['a', 'b', 'class'], 'class')
    """
    from bnexplore.data import read_arff, read_csv

    name = check_upload(content, filename, max_bytes)
    ext = Path(name).suffix.lower()
    buf = io.BytesIO(bytes(content))
    buf.name = name
    if ext == ".arff":
        return read_arff(buf, max_bytes=max_bytes, max_columns=max_columns,
                         max_values=max_declared_values, max_values_per_column=max_values)
    return read_csv(buf, max_bytes=max_bytes, max_columns=max_columns,
                    max_values_per_column=max_values,
                    **({"sep": "\t"} if ext == ".tsv" else {}))


# --------------------------------------------------------------------------- user tables
def _is_text(s: pd.Series) -> bool:
    return (pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)
            or isinstance(s.dtype, pd.CategoricalDtype))


def left_out_columns(raw: pd.DataFrame) -> dict[str, str]:
    """Columns a model should not use: column -> the reason, in plain words.

    * **identifier**: every row has its own value, and the values are texts or
      integers (a row number, a name, a code);
    * **free text**: texts of three words or more on average, or texts that are mostly
      distinct (over half the rows and over 20 distinct values).

    Examples
    --------
    >>> raw = pd.DataFrame({"id": range(6), "x": ["a", "b"] * 3, "y": ["p", "q", "q"] * 2})
    >>> left_out_columns(raw)
    {'id': 'an identifier (a different value in every row)'}
    """
    out: dict[str, str] = {}
    n = len(raw)
    for c in raw.columns:
        s = raw[c].dropna()
        if n < 4 or len(s) == 0:
            continue
        text, integer = _is_text(s), pd.api.types.is_integer_dtype(s)
        if not integer and pd.api.types.is_float_dtype(s):
            integer = bool((s == s.round()).all())
        distinct = s.nunique()
        words = s.astype(str).str.split().str.len().mean() if text else 0
        if words >= 3:
            out[str(c)] = "free text"
        elif (text or integer) and len(s) == n and distinct == n:
            out[str(c)] = "an identifier (a different value in every row)"
        elif text and distinct > 20 and distinct > n / 2:
            out[str(c)] = "free text"
    return out


def default_target(raw: pd.DataFrame, left_out: dict | None = None) -> str:
    """The class of a user's table: its declared class (ARFF), else its last usable column.

    Examples
    --------
    >>> default_target(pd.DataFrame({"a": ["x", "y"] * 3, "id": range(6)}))
    'a'
    """
    left_out = left_out_columns(raw) if left_out is None else left_out
    declared = raw.attrs.get("target")
    if declared in raw.columns and str(declared) not in left_out:
        return str(declared)
    kept = [str(c) for c in raw.columns if str(c) not in left_out]
    return kept[-1] if kept else str(raw.columns[-1])


def class_candidates(raw: pd.DataFrame, left_out: dict | None = None) -> list[str]:
    """The columns that can be a class: kept, 2 to :data:`MAX_CLASSES` values, not continuous."""
    left_out = left_out_columns(raw) if left_out is None else left_out
    out = []
    for c in raw.columns:
        s = raw[c].dropna()
        if str(c) in left_out or not 2 <= s.nunique() <= MAX_CLASSES:
            continue
        if pd.api.types.is_float_dtype(s) and not (s == s.round()).all():
            continue
        out.append(str(c))
    return out


@dataclass
class Prepared:
    """A user's table made ready for the apps (see :func:`prepare_table`)."""

    frame: pd.DataFrame             # categoricals, the class column last, attrs["target"]
    target: str
    cut_points: dict                # column -> cut points
    notes: list                     # plain-language remarks


def prepare_table(raw: pd.DataFrame, target: str | None = None, binning: str = "mdl",
                  bins: int = 3) -> Prepared:
    """Make a user's table ready for the apps.

    Parameters
    ----------
    raw : DataFrame
        The table as read (numbers, texts, missing values).
    target : str, optional
        The class column (default :func:`default_target`).
    binning : {"mdl", "equal-frequency"}
        How continuous columns are cut: by MDL against the class (a column with no cut
        point is dropped, with a note naming it) or into ``bins`` equal-frequency bins.
    bins : int
        Bins of ``binning="equal-frequency"``.

    Raises
    ------
    ValueError
        Unknown target or binning, a class with one value or that looks continuous, no
        feature left, no rows left.

    Examples
    --------
    >>> raw = pd.DataFrame({"id": range(30), "age": [20.5, 31.25, 44.75, 52.5, 61.0] * 6,
    ...                     "x": [0.1, 0.2, 0.3, 0.7, 0.8, 0.9] * 5,
    ...                     "class": ["a", "a", "a", "b", "b", "b"] * 5})
    >>> p = prepare_table(raw)
    >>> p.target, list(p.frame.columns), p.cut_points
    ('class', ['x', 'class'], {'x': [0.5]})
    >>> for note in p.notes: print(note)
    id: an identifier (a different value in every row); left out
    age: no cut point found for the class; dropped (equal-frequency bins keep it)
    >>> list(prepare_table(raw, binning="equal-frequency").frame.columns)
    ['age', 'x', 'class']
    """
    from bnexplore.data import DiscreteData, prepare_frame

    if binning not in BINNINGS:
        raise ValueError(f"binning must be one of {BINNINGS}, got {binning!r}")
    raw = raw.rename(columns=str)
    left_out = left_out_columns(raw)
    if target is None:
        target = default_target(raw, left_out)
    if target not in raw.columns:
        raise ValueError(f"target {target!r} is not a column of the table; columns are "
                         f"{list(raw.columns)}")
    notes = [f"{c}: {why}; left out" for c, why in left_out.items() if c != target]
    df = raw.drop(columns=[c for c in left_out if c != target])
    if df.shape[1] < 2:
        raise ValueError("the table has no feature column besides the target "
                         "(identifiers and free text are left out)")
    miss = df[target].isna()
    if miss.any():
        notes.append(f"dropped {int(miss.sum())} rows with a missing class")
        df = df.loc[~miss].reset_index(drop=True)
    if len(df) == 0:
        raise ValueError(f"every row has a missing value in target {target!r}")
    y = df[target]
    if pd.api.types.is_numeric_dtype(y) and not isinstance(y.dtype, pd.CategoricalDtype):
        n_distinct = y.nunique()
        if n_distinct > MAX_CLASSES or not (y.dropna() == y.dropna().round()).all():
            raise ValueError(f"target {target!r} looks continuous ({n_distinct} distinct "
                             f"numbers): choose a nominal column as the target")
        y = y.astype("int64").astype(str)
    y = pd.Series(pd.Categorical(y), name=target).cat.remove_unused_categories()
    if len(y.cat.categories) < 2:
        raise ValueError(f"target {target!r} has a single class {str(y.cat.categories[0])!r}: "
                         f"a classifier needs at least two classes; choose another target")
    if len(y.cat.categories) > MAX_CLASSES:
        raise ValueError(f"target {target!r} has {len(y.cat.categories)} classes (more than "
                         f"{MAX_CLASSES}): choose a column with fewer values")
    df[target] = pd.Categorical(y.to_numpy(), categories=y.cat.categories)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        df = prepare_frame(df, target, discretize="mdl" if binning == "mdl" else "quantile",
                           n_bins=int(bins), missing="state", columns="auto")
    cuts = {str(c): list(v) for c, v in (df.attrs.get("cut_points") or {}).items()}
    collapsed = [c for c, v in cuts.items() if not v]
    for c in collapsed:
        notes.append(f"{c}: no cut point found for the class; dropped (equal-frequency "
                     f"bins keep it)")
        del cuts[c]
    features = [c for c in df.columns if c != target and c not in collapsed]
    if not features:
        raise ValueError("no feature column is left: MDL found no cut point in any "
                         "continuous column; choose equal-frequency bins")
    out = df[features + [target]]
    out.attrs = dict(target=target, cut_points=cuts)
    DiscreteData.from_frame(out, target=target)   # the data layer's validation
    return Prepared(out, target, cuts, notes)


def table_key(raw: pd.DataFrame) -> str:
    """A hash of a table's column names, dtypes and values (16 hex digits)."""
    h = hashlib.sha256()
    h.update(repr([(str(c), str(t)) for c, t in raw.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(raw.astype(str), index=False).to_numpy().tobytes())
    return h.hexdigest()[:16]


def user_data(raw: pd.DataFrame, name: str, target: str | None = None, binning: str = "mdl",
              bins: int = 3) -> Data:
    """A user's table prepared (:func:`prepare_table`) as the apps' :class:`Data`."""
    p = prepare_table(raw, target, binning, bins)
    key = f"user:{table_key(raw)}:{p.target}:{binning}:{int(bins) if binning != 'mdl' else 0}"
    return Data(p.frame, p.target, str(name), key=key, bundled=False,
                notes=tuple(p.notes), cut_points=p.cut_points)
