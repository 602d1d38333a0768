"""Results kept on disk between runs, so that a later start reuses them.

The apps compute the same default settings every time a server starts (the Compare app
cross-validates six classifiers before its first plot). :class:`DiskCache` keeps such
results in files under :func:`cache_dir`, so a later start reads them back in
milliseconds instead of recomputing them.

What makes a cached result the one the computation gives
--------------------------------------------------------
An entry's file name is the SHA-256 of

* the cache's ``name`` (one name per kind of result),
* the key, encoded by :func:`stable_key` (strings, numbers, tuples, lists, dicts,
  NumPy arrays, and data frames through :func:`data_fingerprint`: column names, dtypes,
  category lists and every value), and
* :func:`code_version`: bnexplore's version and a hash of the text of every one of its
  source files, so results made by other code (an upgrade, an edited kernel) are
  never read; they age out of the cache.

The file holds that full encoded key next to the value, and a read checks it, so two
keys can never share an entry. Anything that cannot be read back (a file cut short, a
value pickled by another library version) is a miss: the result is computed again.

Concurrent writers (several server processes, two sessions) are safe: each writes a
private temporary file in the cache folder and renames it over the entry
(:func:`os.replace`, atomic on POSIX and Windows), so a reader sees either the old
file, the new one, or none - never half of one. A failed write (disk full, read-only
folder) is ignored: the cache is an optimisation, never a requirement.

Values are pickled: only point ``BNX_CACHE_DIR`` at a folder that you alone can write.

Examples
--------
>>> import tempfile
>>> cache = DiskCache("doc-example", directory=tempfile.mkdtemp())
>>> cache.compute(("vote", 5), lambda: 42)
42
>>> ("vote", 5) in cache, cache[("vote", 5)]
(True, 42)
>>> cache.compute(("vote", 5), lambda: 1 / 0)     # a hit: not computed again
42
"""
from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile
import threading
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

__all__ = ["cache_dir", "code_version", "data_fingerprint", "stable_key", "DiskCache",
           "CACHE_DIR_ENV"]

#: environment variable that names the cache folder (default: the user's cache folder).
CACHE_DIR_ENV = "BNX_CACHE_DIR"
_SUFFIX = ".pkl"


def cache_dir() -> Path:
    """The folder of bnexplore's caches: ``$BNX_CACHE_DIR``, else the user's cache folder.

    The user's cache folder is ``$XDG_CACHE_HOME/bnexplore`` or ``~/.cache/bnexplore``
    (``%LOCALAPPDATA%\\bnexplore\\cache`` on Windows). Nothing is created here.

    Examples
    --------
    >>> cache_dir().name in ("bnexplore", "cache") or CACHE_DIR_ENV in os.environ
    True
    """
    env = os.environ.get(CACHE_DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "bnexplore" / "cache"
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".cache") / "bnexplore"


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """bnexplore's version and a hash of all its source files (computed once a process).

    Any edit of any module (a kernel, a default) gives another value, so a cache keyed
    on it never serves a result of other code.

    Examples
    --------
    >>> code_version().startswith(__import__("bnexplore").__version__ + "+")
    True
    """
    from . import __version__

    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return f"{__version__}+{h.hexdigest()[:16]}"


def data_fingerprint(df: Any) -> str:
    """A hash of a data frame's column names, dtypes (categories in order) and values.

    Two frames get the same fingerprint exactly when they hold the same data in the
    same layout (``attrs``, such as the target, are not part of it: put what a
    computation reads from them in the key itself).

    Examples
    --------
    >>> import pandas as pd
    >>> a = pd.DataFrame({"x": pd.Categorical(["u", "v"])})
    >>> b = pd.DataFrame({"x": pd.Categorical(["u", "v"], categories=["v", "u"])})
    >>> data_fingerprint(a) == data_fingerprint(a.copy()), data_fingerprint(a) == data_fingerprint(b)
    (True, False)
    """
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"data_fingerprint needs a pandas DataFrame, got {type(df).__name__}")
    h = hashlib.sha256()
    layout = []
    for col in df.columns:
        dtype = df[col].dtype
        cats = (list(map(repr, dtype.categories)), bool(dtype.ordered)) \
            if isinstance(dtype, pd.CategoricalDtype) else None
        layout.append((repr(col), str(dtype), cats))
    h.update(repr((df.shape, layout)).encode())
    for col in df.columns:
        s = df[col]
        # the codes of a categorical (its categories are in the layout), else the values
        values = s.cat.codes if isinstance(s.dtype, pd.CategoricalDtype) else s
        h.update(pd.util.hash_pandas_object(values, index=False).to_numpy().tobytes())
    return h.hexdigest()


def stable_key(key: Any) -> str:
    """A text that names ``key`` the same way in every process (the cache's key).

    Accepts ``None``, booleans, integers, floats, strings, bytes, NumPy scalars and
    arrays, pandas data frames (by :func:`data_fingerprint`) and tuples, lists and
    dicts of these. Anything else is a :class:`TypeError`: its text could differ
    between processes (an object's default ``repr`` holds its memory address).

    Examples
    --------
    >>> stable_key(("vote", 2, 0.5, None))
    "('vote', 2, 0.5, None)"
    >>> stable_key({"b": 1, "a": [1, 2]}) == stable_key({"a": [1, 2], "b": 1})
    True
    """
    import pandas as pd

    if key is None or isinstance(key, (bool, str, bytes)):
        return repr(key)
    if isinstance(key, (int, np.integer)):
        return repr(int(key))
    if isinstance(key, (float, np.floating)):
        return repr(float(key))     # repr of a float is exact (round-trips)
    if isinstance(key, (np.bool_,)):
        return repr(bool(key))
    if isinstance(key, tuple):
        inner = ", ".join(stable_key(k) for k in key)
        return f"({inner},)" if len(key) == 1 else f"({inner})"
    if isinstance(key, list):
        return "[" + ", ".join(stable_key(k) for k in key) + "]"
    if isinstance(key, dict):
        items = sorted((stable_key(k), stable_key(v)) for k, v in key.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(key, np.ndarray):
        if key.dtype.hasobject:
            return "array(" + stable_key(key.tolist()) + ")"
        digest = hashlib.sha256(np.ascontiguousarray(key).tobytes()).hexdigest()
        return f"array({key.dtype.str}, {key.shape}, {digest})"
    if isinstance(key, pd.DataFrame):
        return f"frame({data_fingerprint(key)})"
    raise TypeError(f"cache keys are made of str, numbers, None, tuples, lists, dicts, arrays "
                    f"and data frames; got {type(key).__name__}")


class DiskCache(MutableMapping):
    """A mapping from keys (see :func:`stable_key`) to pickled values in files.

    Parameters
    ----------
    name : str
        The kind of result (e.g. ``"compare-oof"``): caches of different names never
        share entries.
    directory : str or Path, optional
        The folder (default ``cache_dir() / "results" / name``), created on the first
        write.
    front : mutable mapping, optional
        A faster mapping consulted first and filled on every hit and write (e.g. an
        in-memory LRU shared by a server's sessions).
    max_entries : int
        Most files kept; beyond, the least recently used go (a hit refreshes an
        entry's time).
    max_entry_bytes : int, optional
        Largest pickled value written to a file; a larger one stays in ``front``
        only (a result of many megabytes is not worth the disk and the read).

    Notes
    -----
    Iterating lists the keys of readable entries written by this code version;
    ``len`` counts every file of the folder.

    Examples
    --------
    >>> import tempfile
    >>> d = DiskCache("doc-example", directory=tempfile.mkdtemp())
    >>> d[("a", 1)] = [1, 2]
    >>> DiskCache("doc-example", directory=d.directory).get(("a", 1))   # another process
    [1, 2]
    >>> d.get(("a", 2), "missing")
    'missing'
    """

    def __init__(self, name: str, directory: str | os.PathLike | None = None,
                 front: MutableMapping | None = None, max_entries: int = 2000,
                 max_entry_bytes: int | None = None):
        if not isinstance(name, str) or not name or any(c in name for c in "/\\\0"):
            raise ValueError(f"name must be a non-empty string without slashes, got {name!r}")
        if int(max_entries) < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries!r}")
        if max_entry_bytes is not None and int(max_entry_bytes) < 1:
            raise ValueError(f"max_entry_bytes must be at least 1 or None, got {max_entry_bytes!r}")
        self.name = name
        self.directory = Path(directory) if directory is not None else cache_dir() / "results" / name
        self.front = front
        self.max_entries = int(max_entries)
        self.max_entry_bytes = None if max_entry_bytes is None else int(max_entry_bytes)
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- file names
    def _full_key(self, key: Any) -> str:
        return f"{self.name}|{code_version()}|{stable_key(key)}"

    def _path(self, full: str) -> Path:
        return self.directory / (hashlib.sha256(full.encode()).hexdigest() + _SUFFIX)

    def _front_get(self, full: str) -> Any:
        if self.front is None:
            return _MISS
        try:
            return self.front.get(full, _MISS)
        except Exception:  # noqa: BLE001 - a front is a convenience
            return _MISS

    def _front_set(self, full: str, value: Any) -> None:
        if self.front is not None:
            try:
                self.front[full] = value
            except Exception:  # noqa: BLE001
                pass

    def _read(self, full: str) -> Any:
        path = self._path(full)
        try:
            with open(path, "rb") as fh:
                stored_key, value = pickle.load(fh)
        except FileNotFoundError:
            return _MISS
        except Exception:  # noqa: BLE001 - cut short, other versions' pickles: a miss
            return _MISS
        if stored_key != full:            # a hash collision (never seen; checked anyway)
            return _MISS
        try:
            os.utime(path)                # least recently used goes first
        except OSError:
            pass
        return value

    # ----------------------------------------------------------------- mapping
    def get(self, key: Any, default: Any = None) -> Any:
        """The value stored under ``key``, else ``default``."""
        full = self._full_key(key)
        value = self._front_get(full)
        if value is _MISS:
            value = self._read(full)
            if value is _MISS:
                return default
            self._front_set(full, value)
        return value

    def __getitem__(self, key: Any) -> Any:
        value = self.get(key, _MISS)
        if value is _MISS:
            raise KeyError(key)
        return value

    def __contains__(self, key: Any) -> bool:
        return self.get(key, _MISS) is not _MISS

    def __setitem__(self, key: Any, value: Any) -> None:
        full = self._full_key(key)
        self._front_set(full, value)
        try:
            data = pickle.dumps((full, value), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - an unpicklable value stays in the front only
            return
        if self.max_entry_bytes is not None and len(data) > self.max_entry_bytes:
            return
        path = self._path(full)
        tmp = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=self.directory)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)          # atomic: readers see the old or the new file
            tmp = None
        except OSError:
            return
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        self._prune()

    def __delitem__(self, key: Any) -> None:
        full = self._full_key(key)
        if self.front is not None:
            try:
                del self.front[full]
            except Exception:  # noqa: BLE001 - not there, or a front without deletion
                pass
        try:
            os.unlink(self._path(full))
        except FileNotFoundError:
            raise KeyError(key) from None

    def _entries(self) -> list[os.DirEntry]:
        try:
            return [e for e in os.scandir(self.directory) if e.name.endswith(_SUFFIX)]
        except OSError:
            return []

    def __iter__(self) -> Iterator[Any]:
        # keys are stored as text: only their text can be listed
        for entry in self._entries():
            try:
                with open(entry.path, "rb") as fh:
                    full, _ = pickle.load(fh)
            except Exception:  # noqa: BLE001
                continue
            prefix = f"{self.name}|{code_version()}|"
            if isinstance(full, str) and full.startswith(prefix):
                yield full[len(prefix):]

    def __len__(self) -> int:
        return len(self._entries())

    def _prune(self) -> None:
        entries = self._entries()
        if len(entries) <= self.max_entries:
            return
        with self._lock:
            def mtime(e: os.DirEntry) -> float:
                try:
                    return e.stat().st_mtime
                except OSError:
                    return 0.0
            for e in sorted(entries, key=mtime)[:len(entries) - self.max_entries]:
                try:
                    os.unlink(e.path)
                except OSError:
                    pass

    def clear(self) -> None:
        """Remove every entry of this cache (all code versions)."""
        if self.front is not None:
            try:
                self.front.clear()
            except Exception:  # noqa: BLE001
                pass
        for e in self._entries():
            try:
                os.unlink(e.path)
            except OSError:
                pass

    # ----------------------------------------------------------------- compute
    def compute(self, key: Any, func: Callable[[], Any]) -> Any:
        """The value stored under ``key``, else ``func()`` (stored, then returned).

        An exception of ``func`` is raised and nothing is stored.
        """
        value = self.get(key, _MISS)
        if value is _MISS:
            value = func()
            self[key] = value
        return value


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISS = _Missing()
