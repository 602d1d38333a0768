"""Run a trial function over a grid of settings and random states, locally or on Dask.

Every finished trial is written to the output file at once, so an interrupted run
loses nothing that had finished, and a rerun with ``resume=True`` (the default) skips
the trials already in the file.

Each trial receives its replicate's ``random_state`` (an int) and the rows carry it in a
``random_state`` column.  Results files written before 0.2.0 name that column ``seed``
and the largest parent set ``k`` or ``max_indegree``; resuming such a file renames
those columns (:data:`LEGACY_COLUMNS`) and recognises its trial ids.
"""
from __future__ import annotations

import csv
import functools
import glob
import hashlib
import inspect
import io
import itertools
import json
import numbers
import os
import re
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from .._deprecation import REMOVED_IN, RenamedParameterWarning, renamed
from .._validation import InvalidParameterError, check_int

__all__ = ["run", "expand_grid", "trial_id", "upgrade_columns", "RESERVED_COLUMNS",
           "LEGACY_COLUMNS", "RESULT_COLUMNS_ATTR"]

#: Columns the runner adds to every row; trial results may not use these names.
RESERVED_COLUMNS = ("random_state", "trial_id", "error", "elapsed_s")
#: Column names of results files written before 0.2.0 and their names now.  ``seed`` is
#: reserved too (a grid parameter ``seed`` would collide with an old file's column).
#: ``alpha`` was the exclusion penalty, a result column of ``ziebart_weak``.
LEGACY_COLUMNS = {"seed": "random_state", "k": "max_parents", "max_indegree": "max_parents",
                  "alpha": "penalty"}
#: Attribute of a trial function naming the result columns it writes under a new name of
#: :data:`LEGACY_COLUMNS` (an old file's column is renamed only for such a trial).
RESULT_COLUMNS_ATTR = "__result_columns__"
_RESERVED = RESERVED_COLUMNS + ("seed",)

Grid = Mapping[str, Any] | Sequence[Mapping[str, Any]]
Trial = Callable[..., Mapping[str, Any] | Sequence[Mapping[str, Any]]]


# --------------------------------------------------------------------------- grid
def _scalar(value: Any, what: str) -> Any:
    """Return ``value`` as a plain Python scalar or raise a ValueError naming ``what``."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, numbers.Real):  # Fraction, Decimal-like
        return float(value)
    raise ValueError(f"{what} is {value!r} of type {type(value).__name__}; only flat scalars "
                     f"(str, int, float, bool, None) fit in a results table - encode it "
                     f"as a string or a number")


def expand_grid(grid: Grid) -> list[dict[str, Any]]:
    """Expand a grid into the list of settings dictionaries.

    Parameters
    ----------
    grid : dict or list of dict
        A dict maps each parameter to a list of values and is expanded to the
        cartesian product (in key order, the last key varying fastest); a value that
        is not a list/tuple/range/array is a single fixed value.  A list of dicts is
        taken as the explicit list of settings.  Duplicates are dropped.

    Returns
    -------
    list of dict

    Examples
    --------
    >>> expand_grid({"n": [10, 20], "max_parents": [1, 2], "prior": "K2"})
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'n': 10, 'max_parents': 1, 'prior': 'K2'}, {'n': 10, 'max_parents': 2, 'prior': 'K2'},
     {'n': 20, 'max_parents': 1, 'prior': 'K2'}, {'n': 20, 'max_parents': 2, 'prior': 'K2'}]
    >>> expand_grid([{"n": 10}, {"n": 20, "max_parents": 3}])
    [{'n': 10}, {'n': 20, 'max_parents': 3}]
    """
    if isinstance(grid, Mapping):
        keys = list(grid)
        values = []
        for key in keys:
            v = grid[key]
            if isinstance(v, (list, tuple, range, np.ndarray, pd.Index, pd.Series)):
                v = list(v)
                if not v:
                    raise ValueError(f"grid parameter {key!r} has an empty list of values")
            else:
                v = [v]
            values.append(v)
        settings = [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        settings = []
        for i, s in enumerate(grid):
            if not isinstance(s, Mapping):
                raise TypeError(f"grid entry {i} is {type(s).__name__}, expected a dict of "
                                f"settings")
            settings.append(dict(s))
    else:
        raise TypeError(f"grid must be a dict of lists or a list of dicts, got "
                        f"{type(grid).__name__}")
    if not settings:
        raise ValueError("grid is empty: it expands to no trials")
    out, seen = [], set()
    for s in settings:
        for key, value in s.items():
            if not isinstance(key, str):
                raise TypeError(f"grid parameter names must be strings, got {key!r}")
            if key in _RESERVED:
                raise ValueError(f"grid parameter {key!r} is reserved (the runner adds "
                                 f"{', '.join(RESERVED_COLUMNS)}); pass the random states "
                                 f"with random_states=")
            s[key] = _scalar(value, f"grid value {key}={value!r}")
        marker = json.dumps(s, sort_keys=True, default=repr)
        if marker not in seen:
            seen.add(marker)
            out.append(s)
    return out


@renamed(seed="random_state")
def trial_id(settings: Mapping[str, Any], random_state: int) -> str:
    """Stable identifier of one trial: a hash of its settings and random state.

    Independent of key order and of the process, so it identifies finished trials in
    a results file across runs.  The random state is hashed under the key ``"seed"``
    (its name before 0.2.0), so the ids of grids whose parameter names did not change
    are the ids that older versions wrote; a grid whose ``k`` or ``max_indegree`` became
    ``max_parents`` has new ids, and :func:`run` recognises the old ones when resuming.

    Examples
    --------
    >>> trial_id({"n": 10, "max_parents": 2}, 0) == trial_id({"max_parents": 2, "n": 10}, 0)
    True
    >>> trial_id({"n": 10}, 0) == trial_id({"n": 10}, 1)
    False
    """
    payload = {"settings": {k: _scalar(v, k) for k, v in settings.items()},
               "seed": _scalar(random_state, "random_state")}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _legacy_ids(settings: Mapping[str, Any], random_state: int) -> list[str]:
    """The ids that code before 0.2.0 gave this trial, when a setting was renamed since
    (``max_parents`` was ``k`` or ``max_indegree``)."""
    olds = {new: [o for o, n in LEGACY_COLUMNS.items() if n == new and o != "seed"]
            for new in settings if new in LEGACY_COLUMNS.values()}
    ids = []
    for new, names in olds.items():
        for old in names:
            if old in settings:
                continue
            renamed_settings = {(old if key == new else key): v for key, v in settings.items()}
            ids.append(trial_id(renamed_settings, random_state))
    return ids


def upgrade_columns(df: pd.DataFrame, settings: Iterable[str] = ("max_parents",)
                    ) -> pd.DataFrame:
    """``df`` (a results table) with the column names of before 0.2.0 renamed.

    ``seed`` becomes ``random_state``; ``k`` and ``max_indegree`` become ``max_parents``
    when ``max_parents`` is among ``settings`` (the grid parameters of the run: ``k`` may
    be something else in a user's own experiment), and ``alpha`` becomes ``penalty``
    when ``penalty`` is (a grid parameter, or a result column the trial declares in its
    ``__result_columns__``, as ``ziebart_weak``'s).  A column whose new name is already
    present is left alone.

    Examples
    --------
    >>> import pandas as pd
    >>> old = pd.DataFrame({"n_nodes": [10], "k": [2], "seed": [0], "trial_id": ["ab"]})
    >>> list(upgrade_columns(old).columns)
    ['n_nodes', 'max_parents', 'random_state', 'trial_id']
    """
    settings = set(settings)
    mapping = {}
    for old, new in LEGACY_COLUMNS.items():
        if old in df.columns and new not in df.columns and new not in mapping.values() \
                and (old == "seed" or new in settings):
            mapping[old] = new
    return df.rename(columns=mapping) if mapping else df


# --------------------------------------------------------------------------- one trial
def _writable(text: str) -> str:
    """``text`` with characters UTF-8 cannot encode (lone surrogates, e.g. from a file name
    in an error message) escaped, so that every results file can store it."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="backslashreplace").decode("utf-8")


def _call_trial(trial: Trial, settings: dict[str, Any], random_state: int, tid: str
                ) -> list[dict[str, Any]]:
    """Run one trial and return its finished rows; exceptions become an error row."""
    base = {**settings, "random_state": random_state, "trial_id": tid}
    start = time.perf_counter()
    try:
        result = trial(**settings, random_state=random_state)
        if isinstance(result, Mapping):
            results = [result]
        elif isinstance(result, Sequence) and not isinstance(result, (str, bytes)):
            results = list(result)
            if not results:
                raise ValueError("the trial returned an empty list; return at least one "
                                 "dict of result columns")
        else:
            raise TypeError(f"the trial returned {type(result).__name__}; return a dict "
                            f"(or a list of dicts) of result columns")
        rows = []
        for res in results:
            if not isinstance(res, Mapping):
                raise TypeError(f"the trial returned a list containing "
                                f"{type(res).__name__}; each item must be a dict")
            row = dict(base)
            for key, value in res.items():
                if key in base or key in RESERVED_COLUMNS:
                    raise ValueError(f"result column {key!r} clashes with a setting or a "
                                     f"runner column ({', '.join(RESERVED_COLUMNS)})")
                value = _scalar(value, f"result column {key!r}")
                row[str(key)] = _writable(value) if isinstance(value, str) else value
            rows.append(row)
    except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
        rows = [{**base, "error": _writable(f"{type(exc).__name__}: {exc}")}]
    elapsed = time.perf_counter() - start
    for row in rows:
        row.setdefault("error", None)
        row["elapsed_s"] = elapsed
    return rows


# --------------------------------------------------------------------------- sinks
class _Legacy:
    """What a results file written before 0.2.0 needs to be resumed by this run: the
    grid parameters (for :func:`upgrade_columns`) and each old trial id of this run's
    trials with its new id."""

    def __init__(self, settings: Iterable[str] = (), ids: Mapping[str, str] | None = None):
        self.settings = set(settings)
        self.ids = dict(ids or {})

    def upgrade(self, df: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
        """``(df with new column names and trial ids, whether anything changed)``."""
        new = upgrade_columns(df, self.settings)
        changed = new is not df
        if self.ids and len(new) and "trial_id" in new.columns:
            tid = new["trial_id"].astype(str)
            hit = tid.isin(self.ids.keys())
            if hit.any():
                new = new.assign(trial_id=tid.where(~hit, tid.map(self.ids)))
                changed = True
        return new, changed


class _MemorySink:
    """Keeps rows in memory (``out=None``)."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def done_ids(self) -> set[str]:
        return set()

    def write(self, rows: list[dict[str, Any]]) -> None:
        self.rows.extend(rows)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)


def _read_csv(path: Path) -> pd.DataFrame:
    if path.stat().st_size == 0:
        return pd.DataFrame()
    return pd.read_csv(path, dtype={"trial_id": str, "error": object},
                       keep_default_na=True)


def _read_raw(path: Path) -> pd.DataFrame:
    """Read a results CSV as text, so that rewriting it changes no value."""
    if path.stat().st_size == 0:
        return pd.DataFrame()
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (True when that cannot be told)."""
    if os.name == "nt":          # os.kill(pid, 0) would terminate the process on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:              # PermissionError: it exists, under another user
        return True
    return True


def _clean_stale_tmp(path: Path) -> list[Path]:
    """Remove the ``.NAME.PID.tmp`` files that a killed writer of ``path`` left behind.

    Only files of processes that no longer exist are removed (a live writer keeps its
    file).  Returns the removed paths.
    """
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.(\d+)\.tmp$")
    removed = []
    try:
        candidates = list(path.parent.glob(f".{glob.escape(path.name)}.*.tmp"))
    except OSError:
        return removed
    for tmp in candidates:
        m = pattern.match(tmp.name)
        if not m:
            continue
        pid = int(m.group(1))
        if pid == os.getpid() or _pid_alive(pid):
            continue
        try:
            tmp.unlink()
            removed.append(tmp)
        except OSError:
            pass
    return removed


def _complete_csv_prefix(text: str) -> int:
    """Length of the part of a results CSV made of complete records.

    A record is complete when it ends with a newline, closes every quoted field (an
    error message may hold newlines) and has as many fields as the header.  Only an
    incomplete *last* record counts: a crash can cut only the tail of an append.
    """
    lines = text.split("\n")
    lines = [ln + "\n" for ln in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    consumed = [0]

    def feed():
        for ln in lines:
            consumed[0] += len(ln)
            yield ln

    reader = csv.reader(feed(), strict=True)
    good, width = 0, None
    try:
        for rec in reader:
            end = consumed[0]
            if end == 0 or text[end - 1] != "\n":
                break                       # the last line, cut before its newline
            if not rec:
                good = end                  # a blank line: harmless
                continue
            if width is None:
                width = len(rec)
            elif len(rec) != width:
                if next(reader, None) is not None:
                    return len(text)        # not the tail: leave the file to the reader
                break
            good = end
    except csv.Error:
        if consumed[0] < len(text):
            return len(text)                # bad quoting before the end: not a cut write
        # else: the data ended inside a quoted field - a cut write
    return good


def _atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


class _CsvSink:
    """Appends one CSV line per finished row and flushes it at once.

    When a row brings a column the header lacks, the file is rewritten atomically with
    the extended header (rare: typically once, after the first successful trial).
    """

    def __init__(self, path: Path, resume: bool, retry_errors: bool,
                 legacy: _Legacy | None = None) -> None:
        self.path = path
        self.columns: list[str] = []
        self._done: set[str] = set()
        _clean_stale_tmp(path)
        if path.exists() and resume:
            self._repair_partial_line()
            df = _read_raw(path)
            if len(df.columns) and "trial_id" not in df.columns:
                raise ValueError(f"{path} has no 'trial_id' column: it is not a bnexplore "
                                 f"results file; choose another out= or delete it")
            df, changed = (legacy or _Legacy()).upgrade(df)
            if retry_errors and "error" in df.columns and (df["error"] != "").any():
                df, changed = df[df["error"] == ""], True
            if changed:
                _atomic_write(path, lambda tmp: df.to_csv(tmp, index=False))
            self.columns = list(df.columns)
            if len(df):
                self._done = set(df["trial_id"].astype(str))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")

    def _repair_partial_line(self) -> None:
        """Drop a last record cut short by a crash in the middle of a write (also one
        whose quoted error message spans several lines)."""
        data = self.path.read_bytes()
        if not data:
            return
        text = data.decode("utf-8", errors="surrogateescape")
        keep = _complete_csv_prefix(text)
        if keep < len(text):
            self.path.write_bytes(text[:keep].encode("utf-8", errors="surrogateescape"))

    def done_ids(self) -> set[str]:
        return set(self._done)

    def write(self, rows: list[dict[str, Any]]) -> None:
        new_cols = [c for r in rows for c in r if c not in self.columns]
        if new_cols or not self.columns:
            old = _read_raw(self.path) if self.columns else pd.DataFrame()
            cols = list(dict.fromkeys(
                [c for c in self.columns if c not in ("error", "elapsed_s")]
                + [c for r in rows for c in r if c not in ("error", "elapsed_s")]
                + ["error", "elapsed_s"]))
            df = pd.concat([old, pd.DataFrame(rows)], ignore_index=True)
            df = df.reindex(columns=cols)
            _atomic_write(self.path, lambda tmp: df.to_csv(tmp, index=False))
            self.columns = cols
        else:
            buf = io.StringIO()
            writer = csv.DictWriter(buf, fieldnames=self.columns, lineterminator="\n")
            writer.writerows(rows)
            with open(self.path, "a", newline="", encoding="utf-8") as fh:
                fh.write(buf.getvalue())   # one write per finished trial
                fh.flush()
                os.fsync(fh.fileno())
        self._done.update(r["trial_id"] for r in rows)

    def frame(self) -> pd.DataFrame:
        return _read_csv(self.path)


class _ParquetSink:
    """Keeps all rows and rewrites the Parquet file atomically after each trial."""

    def __init__(self, path: Path, resume: bool, retry_errors: bool,
                 legacy: _Legacy | None = None) -> None:
        self.path = path
        _clean_stale_tmp(path)
        if path.exists() and resume:
            df = pd.read_parquet(path)
            if len(df) and "trial_id" not in df.columns:
                raise ValueError(f"{path} has no 'trial_id' column: it is not a bnexplore "
                                 f"results file; choose another out= or delete it")
            df, _ = (legacy or _Legacy()).upgrade(df)
            if retry_errors and "error" in df.columns:
                df = df[df["error"].isna()]
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            df = pd.DataFrame()
        self.df = df.reset_index(drop=True)
        self._flush()

    def _flush(self) -> None:
        _atomic_write(self.path, lambda tmp: self.df.to_parquet(tmp, index=False))

    def done_ids(self) -> set[str]:
        return set(self.df["trial_id"].astype(str)) if len(self.df) else set()

    def write(self, rows: list[dict[str, Any]]) -> None:
        new = pd.DataFrame(rows)
        self.df = new if self.df.empty else pd.concat([self.df, new], ignore_index=True)
        cols = [c for c in self.df.columns if c not in ("error", "elapsed_s")]
        self.df = self.df.reindex(columns=cols + ["error", "elapsed_s"])
        self._flush()

    def frame(self) -> pd.DataFrame:
        return pd.read_parquet(self.path)


def _make_sink(out: str | os.PathLike | None, resume: bool, retry_errors: bool,
               legacy: _Legacy | None = None):
    if out is None:
        return _MemorySink()
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _CsvSink(path, resume, retry_errors, legacy)
    if suffix in (".parquet", ".pq"):
        return _ParquetSink(path, resume, retry_errors, legacy)
    raise ValueError(f"out={str(out)!r}: the results file must end in .csv or .parquet")


# --------------------------------------------------------------------------- backends
#: the process a worker of this process watches (set once per worker process)
_WATCHED_PARENT: list[int] = []


def _watch_parent(parent: int, interval: float = 0.5) -> None:
    """In a worker process: exit as soon as ``parent`` (the process running :func:`run`)
    is gone, so a killed run leaves no worker computing (loky's would otherwise finish
    their current trial, hundreds of MB each).  Does nothing in the parent itself."""
    if os.getpid() == parent or _WATCHED_PARENT:
        return
    _WATCHED_PARENT.append(parent)
    ppid0 = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(interval)
            gone = os.getppid() != ppid0 if ppid0 == parent else not _pid_alive(parent)
            if gone:
                os._exit(1)

    threading.Thread(target=watch, name="bnexplore-parent-watch", daemon=True).start()


def _set_numba_threads(n: int | None) -> None:
    """In a worker: run numba (and the package's thread-split kernels, which follow
    ``numba.get_num_threads()`` of the calling thread) on ``n`` threads, at most the
    worker's pool; ``None`` leaves numba as it is."""
    if n is None:
        return
    import numba
    numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))


def _call_trial_worker(numba_threads: int | None, trial: Trial, settings: dict[str, Any],
                       random_state: int, tid: str) -> list[dict[str, Any]]:
    """:func:`_call_trial` in a worker process, numba limited to ``numba_threads``."""
    _set_numba_threads(numba_threads)
    return _call_trial(trial, settings, random_state, tid)


def _call_trial_watched(parent: int, numba_threads: int | None, trial: Trial, settings: dict[str, Any],
                        random_state: int, tid: str) -> list[dict[str, Any]]:
    _watch_parent(parent)
    return _call_trial_worker(numba_threads, trial, settings, random_state, tid)


def _run_local(tasks, trial, n_jobs, numba_threads=1) -> Iterator[list[dict[str, Any]]]:
    from joblib import Parallel, delayed, parallel_config

    if n_jobs == 1:
        calls = (delayed(_call_trial)(trial, s, rs, tid) for s, rs, tid in tasks)
        yield from Parallel(n_jobs=1, return_as="generator_unordered")(calls)
        return
    me = os.getpid()
    calls = (delayed(_call_trial_watched)(me, numba_threads, trial, s, rs, tid)
             for s, rs, tid in tasks)
    # joblib caps the native thread pools of its workers (NUMBA_NUM_THREADS among them)
    # at cores // n_jobs; a chosen count of numba threads sets that cap
    with parallel_config(backend="loky", inner_max_num_threads=numba_threads):
        yield from Parallel(n_jobs=n_jobs, return_as="generator_unordered")(calls)


#: seconds to wait for a Dask scheduler given by its address to answer
SCHEDULER_TIMEOUT = 3.0


def _connect(address: str):
    """A ``dask.distributed.Client`` of the scheduler at ``address``; ``ConnectionError``
    (one line, naming the address) when it does not answer within
    :data:`SCHEDULER_TIMEOUT` seconds."""
    try:
        from dask.distributed import Client
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("backend='dask' needs dask.distributed: pip install "
                          "'bnexplore[dask]'") from exc
    try:
        return Client(address, timeout=SCHEDULER_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ConnectionError(f"cannot reach the Dask scheduler at {address!r} (no answer within "
                              f"{SCHEDULER_TIMEOUT:g} s): start it (dask scheduler) or check the "
                              f"address") from exc


def _run_dask(tasks, trial, n_jobs, scheduler, numba_threads=1) -> Iterator[list[dict[str, Any]]]:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("backend='dask' needs dask.distributed: pip install "
                          "'bnexplore[dask]'") from exc
    owned: list[Any] = []
    if isinstance(scheduler, Client):
        client = scheduler
    elif scheduler is None:
        cluster = LocalCluster(n_workers=max(int(n_jobs), 1), threads_per_worker=1)
        client = Client(cluster)
        owned += [client, cluster]
    else:  # a cluster object (an address is connected to by run, before any file)
        client = Client(scheduler, timeout=SCHEDULER_TIMEOUT, set_as_default=False)
        owned.append(client)
    futures = {}
    try:
        for s, rs, tid in tasks:
            fut = client.submit(_call_trial_worker, numba_threads, trial, s, rs, tid, pure=False)
            futures[fut] = (s, rs, tid)
        for fut in as_completed(list(futures)):
            s, rs, tid = futures.pop(fut)
            try:
                rows = fut.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker died
                rows = [{**s, "random_state": rs, "trial_id": tid,
                         "error": _writable(f"{type(exc).__name__}: {exc}"),
                         "elapsed_s": float("nan")}]
            fut.release()
            yield rows
    finally:
        if futures:
            client.cancel(list(futures))
        for obj in owned:
            obj.close()


# --------------------------------------------------------------------------- run
def _seed_trial(trial: Trial, random_state: int, **settings: Any):
    """Call a trial function written for code before 0.2.0 (it takes ``seed=``)."""
    return trial(**settings, seed=random_state)


def _takes_random_state(trial: Trial) -> bool:
    """Whether ``trial`` accepts ``random_state=`` (or takes no ``seed=`` instead)."""
    try:
        params = inspect.signature(trial).parameters
    except (TypeError, ValueError):
        return True
    if "random_state" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return True
    return "seed" not in params


@renamed(seeds="random_states")
def run(trial: Trial, grid: Grid, random_states: Iterable[int] = (0,),
        out: str | os.PathLike | None = None, backend: str = "local", n_jobs: int = 1,
        scheduler: Any = None, progress: bool = True, resume: bool = True,
        retry_errors: bool = False, desc: str | None = None,
        numba_threads: int | None = 1) -> pd.DataFrame:
    """Run ``trial`` for every setting in ``grid`` and every random state.

    Each trial is called as ``trial(**settings, random_state=random_state)`` (an int) and
    returns a dict (or a list of dicts, one per row) of flat scalar result columns.  Every
    row carries the settings, ``random_state``, a stable ``trial_id`` (:func:`trial_id`),
    ``error`` (empty
    unless the trial raised) and ``elapsed_s`` (seconds).  Rows are written to ``out``
    as trials finish - one flushed CSV line per row, or an atomic rewrite of a Parquet
    file - so an interrupted run keeps every finished trial.

    Parameters
    ----------
    trial : callable
        The experiment for one setting and random state.  With ``n_jobs > 1`` or Dask
        it must be picklable (a module-level function is best).  A trial that takes
        ``seed=`` instead of ``random_state=`` (written for code before 0.2.0) still
        runs, with a ``RenamedParameterWarning``.
    grid : dict of lists or list of dicts
        See :func:`expand_grid`.
    random_states : iterable of int
        Each setting is run once per random state (the replicates; ``seeds=`` is the
        deprecated name).
    out : path, optional
        ``.csv`` or ``.parquet`` results file; ``None`` keeps results in memory only.
    backend : {"local", "dask"}
        ``"local"`` runs with joblib on ``n_jobs`` processes; ``"dask"`` submits to a
        ``dask.distributed`` scheduler.
    n_jobs : int
        Local worker processes (joblib convention, -1 = all cores); with Dask and no
        ``scheduler``, the number of workers of a private ``LocalCluster``.
    scheduler : str or dask.distributed.Client, optional
        Scheduler address (``"tcp://host:8786"``), a ``Client`` or a cluster object.
        Only used with ``backend="dask"``.  An address is connected to first: one that
        does not answer within ``SCHEDULER_TIMEOUT`` seconds raises
        ``ConnectionError`` before ``out`` is created or touched.
    progress : bool
        Show a tqdm progress bar.
    resume : bool
        Skip the trials whose ``trial_id`` is already in ``out``.  With
        ``resume=False`` an existing ``out`` is overwritten.  A file written before
        0.2.0 is resumed too: its columns ``seed``, ``k``, ``max_indegree`` and
        ``alpha`` are renamed (:data:`LEGACY_COLUMNS`, :func:`upgrade_columns`) and its
        trial ids of this grid rewritten to the new ones, so its finished trials are not
        run again.
    retry_errors : bool
        When resuming, drop the error rows from ``out`` and run those trials again.
    desc : str, optional
        Label of the progress bar.
    numba_threads : int or None
        numba threads of each worker process (joblib with ``n_jobs != 1``, or Dask):
        1 by default, so that ``n`` workers on ``n`` cores do not each start a thread
        per core; at most the worker's numba pool.  ``None`` leaves the workers'
        numba as it is.  A run with ``n_jobs=1`` computes in this process, whose
        numba threads are not changed.

    Returns
    -------
    pandas.DataFrame
        All rows of the trials of this grid and random states - those finished before (read
        back from ``out``) and the new ones - in grid order.

    Warns
    -----
    RuntimeWarning
        When some trials raised; their messages are in the ``error`` column.

    Notes
    -----
    Every trial of every setting and random state is handed to the workers at once, so a slow
    trial holds back no other; finished trials are written as they finish, in any
    order, and a stopped run loses at most the trials in flight.
    ``trial_id`` depends only on the settings and the random state, not on the trial function:
    use one results file per experiment.  A ``KeyboardInterrupt`` stops the run;
    finished trials stay in ``out`` and a rerun picks up the rest.

    Examples
    --------
    >>> def trial(n, p, random_state):
    ...     import numpy as np
    ...     x = np.random.default_rng(random_state).random(n) < p
    ...     return {"mean": float(x.mean())}
    >>> df = run(trial, {"n": [10, 100], "p": [0.5]}, random_states=[0, 1], progress=False)
    >>> df[["n", "random_state"]].values.tolist()
    [[10, 0], [10, 1], [100, 0], [100, 1]]
    >>> list(df.columns)
    ['n', 'p', 'random_state', 'trial_id', 'mean', 'error', 'elapsed_s']
    >>> bool(df["error"].isna().all())
    True
    """
    if not callable(trial):
        raise TypeError(f"trial must be callable, got {type(trial).__name__}")
    if backend not in ("local", "dask"):
        raise ValueError(f"backend must be 'local' or 'dask', got {backend!r}")
    if check_int(n_jobs, "n_jobs") == 0:
        raise InvalidParameterError("n_jobs must be a non-zero int (-1: every core), got 0")
    random_states = list(random_states)
    if not random_states:
        raise ValueError("random_states is empty: give at least one random state (an int)")
    random_states = [check_int(s, "random_states") for s in random_states]
    if numba_threads is not None:
        check_int(numba_threads, "numba_threads", low=1)
    settings = expand_grid(grid)
    declared = set(getattr(trial, RESULT_COLUMNS_ATTR, ()))
    if not _takes_random_state(trial):
        name = getattr(trial, "__qualname__", "the trial")
        desc = desc or getattr(trial, "__name__", None)
        warnings.warn(f"{name}(seed=...): a trial function taking seed= is deprecated and "
                      f"will not run in {REMOVED_IN}: name its parameter random_state=",
                      RenamedParameterWarning, stacklevel=3)
        trial = functools.partial(_seed_trial, trial)

    tasks, order, legacy = [], {}, {}
    for s in settings:
        for rs in random_states:
            tid = trial_id(s, rs)
            if tid not in order:
                order[tid] = len(order)
                tasks.append((s, rs, tid))
                legacy.update(dict.fromkeys(_legacy_ids(s, rs), tid))
    legacy = _Legacy({key for s in settings for key in s} | declared, legacy)

    connected = None
    if backend == "dask" and isinstance(scheduler, str):
        connected = scheduler = _connect(scheduler)    # before any file: fail fast and clean
    try:
        return _run_tasks(trial, tasks, order, out, backend, n_jobs, scheduler, progress, resume,
                          retry_errors, desc, numba_threads, legacy)
    finally:
        if connected is not None:
            connected.close()


def _run_tasks(trial, tasks, order, out, backend, n_jobs, scheduler, progress, resume,
               retry_errors, desc, numba_threads, legacy=None) -> pd.DataFrame:
    sink = _make_sink(out, resume, retry_errors, legacy)
    done = sink.done_ids()
    todo = [t for t in tasks if t[2] not in done]

    from tqdm.auto import tqdm

    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), disable=not progress,
               desc=desc or getattr(trial, "__name__", "trials"), unit="trial")
    errors: list[str] = []
    try:
        if todo:
            stream = (_run_local(todo, trial, n_jobs, numba_threads) if backend == "local"
                      else _run_dask(todo, trial, n_jobs, scheduler, numba_threads))
            for rows in stream:
                sink.write(rows)
                errors += [r["error"] for r in rows if r.get("error")]
                bar.update(1)
                if errors:
                    bar.set_postfix(errors=len(errors))
    finally:
        bar.close()

    if errors:
        where = f" in {out}" if out is not None else ""
        warnings.warn(f"{len(errors)} of {len(todo)} trials raised an exception; their rows "
                      f"carry the message in the 'error' column{where}. First: {errors[0]}",
                      RuntimeWarning, stacklevel=3)

    df = sink.frame()
    if df.empty:
        return df
    df = df[df["trial_id"].astype(str).isin(order)]
    key = df["trial_id"].astype(str).map(order)
    df = df.iloc[np.argsort(key.to_numpy(), kind="stable")].reset_index(drop=True)
    tail = [c for c in ("error", "elapsed_s") if c in df.columns]
    df = df[[c for c in df.columns if c not in tail] + tail]
    if "error" in df.columns:  # the same missing marker (NaN) from every sink
        df["error"] = df["error"].astype(object).where(df["error"].notna(), np.nan)
    return df
