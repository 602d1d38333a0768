"""Readers for ARFF and CSV files into pandas DataFrames.

* :func:`read_arff` reads Weka ARFF files with :func:`scipy.io.arff.loadarff`, after
  normalising the header so that quirks found in real UCI files (spaces around
  nominal values, ``{ 'a', b}`` spacing, mixed quoting) parse. Files scipy cannot
  read (string or date attributes, sparse rows, quotes inside values) go through a
  small pure-Python parser that gives the same result.
* :func:`read_csv` is plain :func:`pandas.read_csv` (never ``eval`` or unpickling)
  with checks on size, emptiness and duplicate column names.

Bytes are decoded by their byte-order mark (UTF-8, UTF-16, UTF-32), otherwise as
UTF-8, else Latin-1; binary input (NUL bytes) is refused. The limits on columns and
on declared ARFF values are checked before any row is parsed, the limit on distinct
text values of a CSV column right after parsing, before any per-value work.

Both return nominal/text columns as pandas Categoricals, numbers as float (ARFF) or
the dtype pandas infers (CSV), missing values (``?`` in ARFF, empty or ``?`` in CSV)
as NaN, and put the class column in ``df.attrs["target"]``.
"""
from __future__ import annotations

import csv
import io
import os
import re
import warnings
from pathlib import Path
from typing import IO, Union

import numpy as np
import pandas as pd

from .core import _repeated

__all__ = ["read_arff", "read_csv", "ArffError"]

PathOrBuffer = Union[str, os.PathLike, IO[str], IO[bytes]]

#: refuse files larger than this many bytes unless told otherwise.
DEFAULT_MAX_BYTES = 50_000_000
#: refuse files with more columns (attributes) than this unless told otherwise.
DEFAULT_MAX_COLUMNS = 10_000
#: refuse ARFF headers declaring more nominal values than this in all (unless told otherwise).
DEFAULT_MAX_VALUES = 1_000_000
#: refuse a column with more declared (ARFF) or distinct text (CSV) values than this.
DEFAULT_MAX_VALUES_PER_COLUMN = 100_000

#: byte-order marks and the codec that reads the text after them (longest first).
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


class ArffError(ValueError):
    """An ARFF file is malformed; the message gives the line."""


# ------------------------------------------------------------------- reading
def _read_text(path_or_buffer: PathOrBuffer, max_bytes: int | None, what: str) -> tuple[str, str]:
    """Return (text, display name), enforcing the size limit before reading it all."""
    if isinstance(path_or_buffer, (str, os.PathLike)):
        path = Path(path_or_buffer)
        if not path.exists():
            raise FileNotFoundError(f"{what} file {str(path)!r} does not exist")
        size = path.stat().st_size
        if max_bytes is not None and size > max_bytes:
            raise ValueError(f"{what} file {str(path)!r} has {size:,} bytes, over the limit of {max_bytes:,}: "
                             f"pass a larger max_bytes if you trust it")
        raw: str | bytes = path.read_bytes()
        name = str(path)
    elif hasattr(path_or_buffer, "read"):
        raw = path_or_buffer.read() if max_bytes is None else path_or_buffer.read(max_bytes + 1)
        if max_bytes is not None and len(raw) > max_bytes:
            raise ValueError(f"{what} input is over the limit of {max_bytes:,} bytes: "
                             f"pass a larger max_bytes if you trust it")
        name = getattr(path_or_buffer, "name", f"<{what} buffer>")
    else:
        raise TypeError(f"expected a path or a file-like object, got {type(path_or_buffer).__name__}")
    text = _decode(raw, f"{what} input {str(name)!r}") if isinstance(raw, bytes) else raw
    if "\x00" in text:
        raise ValueError(f"{what} input {str(name)!r} contains NUL characters: it is a binary "
                         f"file, not text; save the data as a UTF-8 text file")
    return text, str(name)


def _decode(raw: bytes, what: str) -> str:
    """Decode a file's bytes by their byte-order mark, else as UTF-8, else as Latin-1.

    A byte-order mark (UTF-8, UTF-16, UTF-32) decides the codec; without one the text
    is UTF-8, else Latin-1 (Windows exports), but never a binary file (NUL bytes).

    Raises
    ------
    ValueError
        Bytes that do not decode with the codec of their byte-order mark, or NUL bytes
        without a byte-order mark (binary data, or UTF-16/UTF-32 without a mark).
    """
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            try:
                return raw[len(bom):].decode(codec)
            except UnicodeDecodeError as exc:
                raise ValueError(f"{what} starts with a {codec.upper()} byte-order mark but "
                                 f"is not valid {codec.upper()} (byte {exc.start:,}): save it "
                                 f"again as UTF-8 text") from None
    if b"\x00" in raw:
        raise ValueError(f"{what} contains NUL bytes: it is a binary file, or UTF-16/UTF-32 "
                         f"text without a byte-order mark; save the data as UTF-8 text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _find_target(columns) -> str | None:
    for c in columns:
        if str(c).lower() == "class":
            return str(c)
    return None


# ---------------------------------------------------------------------- ARFF
def _split_values(text: str, lineno: int) -> list[tuple[str, bool]]:
    """Split a comma-separated ARFF list; returns (value, was_quoted) pairs.

    Handles single or double quotes, backslash escapes inside quotes and any
    whitespace around values.
    """
    if "'" not in text and '"' not in text:   # no quotes: the common case, in C
        return [(v.strip(), False) for v in text.split(",")]
    out: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while i <= n:
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] in "'\"":
            q = text[i]
            i += 1
            buf = []
            while i < n and text[i] != q:
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                buf.append(text[i])
                i += 1
            if i >= n:
                raise ArffError(f"line {lineno}: unterminated quote in {text!r}")
            i += 1
            out.append(("".join(buf), True))
            while i < n and text[i] in " \t":
                i += 1
            if i < n and text[i] != ",":
                raise ArffError(f"line {lineno}: unexpected text after a quoted value in {text!r}")
        else:
            j = text.find(",", i)
            j = n if j < 0 else j
            out.append((text[i:j].strip(), False))
            i = j
        i += 1  # skip the comma
    return out


_ATTR = re.compile(r"@attribute\s+", re.IGNORECASE)


def _parse_attribute(line: str, lineno: int, max_values_per_column: int | None = None
                     ) -> tuple[str, str, list[str] | None]:
    rest = _ATTR.sub("", line, count=1).strip()
    if rest[:1] in ("'", '"'):
        q = rest[0]
        end = rest.find(q, 1)
        if end < 0:
            raise ArffError(f"line {lineno}: unterminated quote in attribute name: {line!r}")
        name, rest = rest[1:end], rest[end + 1:].strip()
    else:
        m = re.match(r"(\S+?)(?=\s|\{|$)", rest)
        if not m:
            raise ArffError(f"line {lineno}: cannot read the attribute name in {line!r}")
        name, rest = m.group(1), rest[m.end():].strip()
    if rest.startswith("{"):
        end = rest.rfind("}")
        if end < 0:
            raise ArffError(f"line {lineno}: nominal attribute {name!r} has no closing '}}'")
        body = rest[1:end]
        if max_values_per_column is not None and body.count(",") >= max_values_per_column:
            # a cheap upper bound first (commas inside quotes count too), then the exact count
            n_values = len(_split_values(body, lineno))
            if n_values > max_values_per_column:
                raise ArffError(f"line {lineno}: nominal attribute {name!r} declares "
                                f"{n_values:,} values, over the limit of {max_values_per_column:,} "
                                f"per attribute; merge values or drop the attribute (or pass a "
                                f"larger max_values_per_column if you trust the file)")
        values = [v for v, _ in _split_values(body, lineno)]
        if values == [""]:
            values = []
        dup = _repeated(values)
        if dup:
            shown = ", ".join(repr(v) for v in dup[:10]) + (f" and {len(dup) - 10:,} more"
                                                            if len(dup) > 10 else "")
            raise ArffError(f"line {lineno}: nominal attribute {name!r} declares {shown} more "
                            f"than once; declare each value once")
        return name, "nominal", values
    kind = rest.split()[0].lower() if rest else ""
    if kind in ("numeric", "real", "integer"):
        return name, "numeric", None
    if kind in ("string", "date"):
        return name, kind, None
    if kind == "relational":
        raise ArffError(f"line {lineno}: relational attribute {name!r} is not supported")
    raise ArffError(f"line {lineno}: attribute {name!r} has unknown type {rest!r}")


def _parse_header(text: str, max_columns: int | None = None, max_values: int | None = None,
                  max_values_per_column: int | None = None
                  ) -> tuple[str, list[tuple[str, str, list[str] | None]], int]:
    """Return (relation, attributes, index of the first line after @data).

    The limits are checked as the header is read, before any data row is parsed.
    """
    lines = text.splitlines()
    relation = ""
    attrs: list[tuple[str, str, list[str] | None]] = []
    n_values = 0
    for k, line in enumerate(lines):
        s = line.strip()
        if not s or s.startswith("%"):
            continue
        low = s.lower()
        if low.startswith("@relation"):
            relation = s[len("@relation"):].strip().strip("'\"")
        elif low.startswith("@attribute"):
            if max_columns is not None and len(attrs) >= max_columns:
                n_att = sum(1 for x in lines if x.strip().lower().startswith("@attribute"))
                raise ArffError(f"line {k + 1}: the file declares {n_att:,} attributes, over "
                                f"the limit of {max_columns:,}; drop some columns (or pass a "
                                f"larger max_columns if you trust the file)")
            attrs.append(_parse_attribute(s, k + 1, max_values_per_column))
            n_values += len(attrs[-1][2] or ())
            if max_values is not None and n_values > max_values:
                raise ArffError(f"line {k + 1}: the attributes up to {attrs[-1][0]!r} declare "
                                f"{n_values:,} nominal values in all, over the limit of "
                                f"{max_values:,}; merge values or drop attributes (or pass a "
                                f"larger max_values if you trust the file)")
        elif low.startswith("@data"):
            if not attrs:
                raise ArffError(f"line {k + 1}: @data before any @attribute")
            return relation, attrs, k + 1
        else:
            raise ArffError(f"line {k + 1}: unexpected header line {s[:80]!r}")
    raise ArffError("no @data section: this does not look like an ARFF file")


def _quote_for_scipy(v: str) -> str:
    return f"'{v}'" if re.search(r"[\s,{}%\"]", v) or v == "" else v


def _via_scipy(text: str, attrs, data_start: int) -> pd.DataFrame:
    """Rewrite the header in a canonical form and let scipy parse the data."""
    from scipy.io import arff

    header = ["@relation bnexplore"]
    for name, kind, values in attrs:
        if kind not in ("numeric", "nominal"):
            raise NotImplementedError(kind)
        if "'" in name or any("'" in v for v in values or ()):
            raise NotImplementedError("quote inside a name or value")
        if kind == "numeric":
            header.append(f"@attribute '{name}' numeric")
        else:
            header.append(f"@attribute '{name}' {{{','.join(_quote_for_scipy(v) for v in values)}}}")
    header.append("@data")
    body = text.splitlines()[data_start:]
    if any(line.lstrip().startswith("{") for line in body):
        raise NotImplementedError("sparse rows")
    data, _ = arff.loadarff(io.StringIO("\n".join(header + body) + "\n"))
    cols = {}
    for (name, kind, values), field in zip(attrs, data.dtype.names):
        col = data[field]
        if kind == "numeric":
            cols[name] = col.astype(float)
        else:
            strs = np.array([v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in col], dtype=object)
            strs[strs == "?"] = None
            cols[name] = _nominal(strs, values, name)
    return pd.DataFrame(cols)


def _nominal(strs: np.ndarray, values: list[str], name: str, lines: list[int] | None = None) -> pd.Categorical:
    strs = np.asarray(strs, dtype=object)
    is_na = np.array([s is None for s in strs], dtype=bool)
    cats = pd.Index(values, dtype=object)
    codes = cats.get_indexer(np.where(is_na, "", strs).astype(object)) if len(strs) else np.empty(0, int)
    codes = np.where(is_na, -1, codes)
    bad = (codes < 0) & ~is_na
    if bad.any():
        i = int(np.argmax(bad))
        where = f"line {lines[i]}" if lines is not None else f"row {i}"
        shown = values if len(values) <= 20 else values[:20] + [f"... {len(values) - 20:,} more"]
        raise ArffError(f"attribute {name!r}: value {strs[i]!r} at {where} is not one of the declared "
                        f"values {shown}")
    return pd.Categorical.from_codes(codes, categories=cats)


def _via_python(text: str, attrs, data_start: int) -> pd.DataFrame:
    """Small fallback parser for dense and sparse ARFF rows."""
    n_att = len(attrs)
    rows: list[list[str | None]] = []
    lines_of_rows: list[int] = []
    for k, line in enumerate(text.splitlines()[data_start:], start=data_start + 1):
        s = line.strip()
        if not s or s.startswith("%"):
            continue
        if s.startswith("{"):
            if not s.endswith("}"):
                raise ArffError(f"line {k}: sparse row without closing '}}'")
            row: list[str | None] = []
            for _, kind, values in attrs:
                row.append(values[0] if kind == "nominal" and values else ("0" if kind == "numeric" else None))
            body = s[1:-1].strip()
            for item, _ in (_split_values(body, k) if body else []):
                parts = item.split(None, 1)
                if len(parts) != 2 or not parts[0].isdigit() or int(parts[0]) >= n_att:
                    raise ArffError(f"line {k}: bad sparse entry {item!r}")
                v = parts[1].strip()
                if v[:1] in ("'", '"'):
                    v = _split_values(v, k)[0][0]
                row[int(parts[0])] = v
            rows.append(row)
        else:
            vals = _split_values(s, k)
            if len(vals) != n_att:
                raise ArffError(f"line {k}: {len(vals)} values for {n_att} attributes")
            rows.append([None if (v == "?" and not q) else v for v, q in vals])
        lines_of_rows.append(k)
    cols = {}
    for j, (name, kind, values) in enumerate(attrs):
        raw = [r[j] for r in rows]
        if kind == "numeric":
            out = np.empty(len(raw), dtype=float)
            for i, v in enumerate(raw):
                if v is None or v == "?":
                    out[i] = np.nan
                else:
                    try:
                        out[i] = float(v)
                    except ValueError:
                        raise ArffError(f"line {lines_of_rows[i]}: attribute {name!r} is numeric but has "
                                        f"value {v!r}") from None
            cols[name] = out
        elif kind == "nominal":
            cols[name] = _nominal(np.array(raw, dtype=object), values, name, lines_of_rows)
        else:  # string / date: categories are the sorted observed values
            cols[name] = pd.Categorical(raw)
    return pd.DataFrame(cols)


def read_arff(path_or_buffer: PathOrBuffer, max_bytes: int | None = DEFAULT_MAX_BYTES,
              engine: str = "auto", *, max_columns: int | None = DEFAULT_MAX_COLUMNS,
              max_values: int | None = DEFAULT_MAX_VALUES,
              max_values_per_column: int | None = DEFAULT_MAX_VALUES_PER_COLUMN) -> pd.DataFrame:
    """Read a Weka ARFF file into a DataFrame.

    Parameters
    ----------
    path_or_buffer : str, path or file-like (text or bytes)
    max_bytes : int or None, default 50_000_000
        Refuse larger inputs (``None``: no limit).
    engine : {"auto", "scipy", "python"}
        ``"auto"`` parses with :func:`scipy.io.arff.loadarff` after normalising the
        header, and falls back to the pure-Python parser for what scipy cannot read
        (string/date attributes, sparse rows, quotes inside values).
    max_columns : int or None, default 10_000
        Refuse a header with more attributes (``None``: no limit).
    max_values : int or None, default 1_000_000
        Refuse a header declaring more nominal values over all attributes.
    max_values_per_column : int or None, default 100_000
        Refuse a nominal attribute declaring more values. All three limits are
        checked while the header is read, before any data row is parsed.

    Returns
    -------
    DataFrame
        One column per attribute, in file order. Nominal attributes are
        Categoricals whose categories follow the declared order; numeric
        attributes are float64; string and date attributes are Categoricals of the
        observed text. ``?`` becomes missing (NaN). ``df.attrs["target"]`` is the
        attribute named ``class`` (any case) if there is one, otherwise the last
        attribute; ``df.attrs["relation"]`` is the relation name.

    Raises
    ------
    ArffError
        (a ``ValueError``) for malformed files, with the line number, and for
        headers over a limit (naming the limit).
    ValueError
        Input over ``max_bytes``, binary input (NUL bytes), or bytes that do not
        decode. Bytes are read as UTF-8, UTF-16 or UTF-32 when they start with a
        byte-order mark, otherwise as UTF-8, else Latin-1.

    Examples
    --------
    >>> import io
    >>> from bnexplore.data import read_arff
    >>> text = '''@relation t
    ... @attribute x numeric
    ... @attribute 'my class' { 'a b', c}
    ... @data
    ... 1.5,'a b'
    ... ?,c
    ... '''
    >>> df = read_arff(io.StringIO(text))
    >>> df.attrs["target"], df["my class"].cat.categories.tolist(), df["x"].isna().sum()
    ('my class', ['a b', 'c'], np.int64(1))
    """
    if engine not in ("auto", "scipy", "python"):
        raise ValueError(f"engine must be 'auto', 'scipy' or 'python', got {engine!r}")
    text, name = _read_text(path_or_buffer, max_bytes, "ARFF")
    if not text.strip():
        raise ArffError(f"ARFF input {name!r} is empty")
    relation, attrs, data_start = _parse_header(text, max_columns, max_values,
                                                max_values_per_column)
    names = [a[0] for a in attrs]
    dup = _repeated(names)
    if dup:
        raise ArffError(f"duplicate attribute names {dup} in {name!r}")
    df = None
    if engine in ("auto", "scipy"):
        try:
            df = _via_scipy(text, attrs, data_start)
        except ArffError:
            raise
        except (NotImplementedError, ValueError, TypeError) as exc:
            if engine == "scipy":
                raise ArffError(f"scipy.io.arff cannot read {name!r}: {exc}") from exc
    if df is None:
        df = _via_python(text, attrs, data_start)
    df.attrs["target"] = _find_target(df.columns) or names[-1]
    df.attrs["relation"] = relation
    return df


# ----------------------------------------------------------------------- CSV
def read_csv(path_or_buffer: PathOrBuffer, target: str | None = None,
             max_bytes: int | None = DEFAULT_MAX_BYTES, *,
             max_columns: int | None = DEFAULT_MAX_COLUMNS,
             max_values_per_column: int | None = DEFAULT_MAX_VALUES_PER_COLUMN,
             **kwargs) -> pd.DataFrame:
    """Read a CSV file into a DataFrame of categoricals and numbers.

    Plain :func:`pandas.read_csv` parsing: nothing in the file is evaluated or
    unpickled. Text columns become Categoricals (categories sorted); empty cells
    and ``?`` are missing values.

    Parameters
    ----------
    path_or_buffer : str, path or file-like
    target : str, optional
        Class column, stored in ``df.attrs["target"]``. By default a column named
        ``class`` (any case) if there is one, otherwise no target is set.
    max_bytes : int or None, default 50_000_000
        Refuse larger inputs (``None``: no limit).
    max_columns : int or None, default 10_000
        Refuse more columns, counted on the header line before the file is parsed
        (``None``: no limit).
    max_values_per_column : int or None, default 100_000
        Refuse a text column with more distinct values (numbers are not counted).
    **kwargs
        Passed to :func:`pandas.read_csv` (e.g. ``sep``, ``na_values``).

    Returns
    -------
    DataFrame

    Raises
    ------
    ValueError
        Empty input, header without rows, duplicate column names, unknown
        ``target``, input larger than ``max_bytes``, more columns or distinct
        text values than the limits, binary input (NUL bytes) or bytes that do
        not decode. Bytes are read as UTF-8, UTF-16 or UTF-32 when they start
        with a byte-order mark, otherwise as UTF-8, else Latin-1.

    Examples
    --------
    >>> import io
    >>> from bnexplore.data import read_csv
    >>> df = read_csv(io.StringIO("a,b,class\\nx,1,yes\\ny,?,no\\n"))
    >>> df.attrs["target"], str(df["a"].dtype), int(df["b"].isna().sum())
    ('class', 'category', 1)
    """
    text, name = _read_text(path_or_buffer, max_bytes, "CSV")
    if not text.strip():
        raise ValueError(f"CSV input {name!r} is empty")
    sep = kwargs.get("sep", kwargs.get("delimiter", ","))
    if isinstance(sep, str) and len(sep) == 1 and kwargs.get("header", "infer") == "infer":
        first = next(csv.reader(io.StringIO(text.lstrip("\r\n")), delimiter=sep), [])
        if max_columns is not None and len(first) > max_columns:
            raise ValueError(f"CSV input {name!r} has {len(first):,} columns, over the limit of "
                             f"{max_columns:,}: keep the columns you need (or pass a larger "
                             f"max_columns if you trust the file)")
        if max_columns is not None and any(line.count(sep) >= max_columns
                                           for line in text.splitlines()):
            # a row may be far longer than the header (commas in quotes counted above)
            for k, row in enumerate(csv.reader(io.StringIO(text), delimiter=sep), start=1):
                if len(row) > max_columns:
                    raise ValueError(f"CSV input {name!r}: row {k:,} has {len(row):,} values, "
                                     f"over the limit of {max_columns:,} columns: give every "
                                     f"row as many values as the header (or pass a larger "
                                     f"max_columns if you trust the file)")
        first = [c.strip() for c in first]
        dup = _repeated(first)
        if dup:
            shown = dup[:20] + ([f"... {len(dup) - 20:,} more"] if len(dup) > 20 else [])
            raise ValueError(f"CSV input {name!r} has duplicate column names {shown}: "
                             f"rename them so every column is unique")
    na = kwargs.pop("na_values", None)
    na_values = ["?"] + ([na] if isinstance(na, str) else list(na or []))
    # rows longer than the header would otherwise become an implicit (multi-)index:
    # silently wrong, and slower than quadratic in the row's length
    kwargs.setdefault("index_col", False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(io.StringIO(text), na_values=na_values, skipinitialspace=True,
                             **kwargs)
    except pd.errors.EmptyDataError as exc:
        raise ValueError(f"CSV input {name!r} is empty") from exc
    except pd.errors.ParserError as exc:
        raise ValueError(f"cannot parse CSV input {name!r}: {exc}") from exc
    except pd.errors.ParserWarning as exc:
        raise ValueError(f"cannot parse CSV input {name!r}: a data row has more values than "
                         f"the header has column names; give every row as many values as "
                         f"the header (or name every column)") from exc
    if df.shape[1] == 0:
        raise ValueError(f"CSV input {name!r} has no columns")
    if max_columns is not None and df.shape[1] > max_columns:
        raise ValueError(f"CSV input {name!r} has {df.shape[1]:,} columns, over the limit of "
                         f"{max_columns:,}: keep the columns you need (or pass a larger "
                         f"max_columns if you trust the file)")
    if df.shape[0] == 0:
        raise ValueError(f"CSV input {name!r} has a header ({list(df.columns)[:50]}) but no "
                         f"data rows")
    df.columns = [str(c).strip() for c in df.columns]
    for c in df.columns:
        s = df[c]
        if pd.api.types.is_object_dtype(s.dtype) or pd.api.types.is_string_dtype(s.dtype):
            if max_values_per_column is not None:
                n_distinct = s.nunique()
                if n_distinct > max_values_per_column:
                    raise ValueError(f"column {c!r} of CSV input {name!r} has {n_distinct:,} "
                                     f"distinct values, over the limit of "
                                     f"{max_values_per_column:,} per column: drop the column "
                                     f"or merge its values (or pass a larger "
                                     f"max_values_per_column if you trust the file)")
            vals = s.astype(object).where(s.notna(), None)
            vals = vals.map(lambda v: v.strip() if isinstance(v, str) else v)
            df[c] = pd.Categorical(vals)
    if target is None:
        target = _find_target(df.columns)
    elif target not in df.columns:
        raise ValueError(f"target {target!r} is not a column of {name!r}; columns are {list(df.columns)}")
    if target is not None:
        df.attrs["target"] = target
    return df
