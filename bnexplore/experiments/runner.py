"""Run a trial function over a grid of settings and seeds, locally or on Dask.

Every finished trial is written to the output file at once, so an interrupted run
loses nothing that had finished, and a rerun with ``resume=True`` (the default) skips
the trials already in the file.
"""
from __future__ import annotations

import csv
import glob
import hashlib
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

from .._validation import InvalidParameterError, check_int

__all__ = ["run", "expand_grid", "trial_id", "RESERVED_COLUMNS"]

#: Columns the runner adds to every row; trial results may not use these names.
RESERVED_COLUMNS = ("seed", "trial_id", "error", "elapsed_s")

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
    >>> expand_grid({"n": [10, 20], "k": [1, 2], "prior": "K2"})
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'n': 10, 'k': 1, 'prior': 'K2'}, {'n': 10, 'k': 2, 'prior': 'K2'},
     {'n': 20, 'k': 1, 'prior': 'K2'}, {'n': 20, 'k': 2, 'prior': 'K2'}]
    >>> expand_grid([{"n": 10}, {"n": 20, "k": 3}])
    [{'n': 10}, {'n': 20, 'k': 3}]
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
            if key in RESERVED_COLUMNS:
                raise ValueError(f"grid parameter {key!r} is reserved (the runner adds "
                                 f"{', '.join(RESERVED_COLUMNS)}); pass seeds with seeds=")
            s[key] = _scalar(value, f"grid value {key}={value!r}")
        marker = json.dumps(s, sort_keys=True, default=repr)
        if marker not in seen:
            seen.add(marker)
            out.append(s)
    return out


def trial_id(settings: Mapping[str, Any], seed: int) -> str:
    """Stable identifier of one trial: a hash of its settings and seed.

    Independent of key order and of the process, so it identifies finished trials in
    a results file across runs.

    Examples
    --------
    >>> trial_id({"n": 10, "k": 2}, 0) == trial_id({"k": 2, "n": 10}, 0)
    True
    >>> trial_id({"n": 10}, 0) == trial_id({"n": 10}, 1)
    False
    """
    payload = {"settings": {k: _scalar(v, k) for k, v in settings.items()},
               "seed": _scalar(seed, "seed")}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


# --------------------------------------------------------------------------- one trial
def _writable(text: str) -> str:
    """``text`` with characters UTF-8 cannot encode (lone surrogates, e.g. from a file name
    in an error message) escaped, so that every results file can store it."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="backslashreplace").decode("utf-8")


def _call_trial(trial: Trial, settings: dict[str, Any], seed: int, tid: str
                ) -> list[dict[str, Any]]:
    """Run one trial and return its finished rows; exceptions become an error row."""
    base = {**settings, "seed": seed, "trial_id": tid}
    start = time.perf_counter()
    try:
        result = trial(**settings, seed=seed)
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

    def __init__(self, path: Path, resume: bool, retry_errors: bool) -> None:
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
            if retry_errors and "error" in df.columns and (df["error"] != "").any():
                df = df[df["error"] == ""]
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

    def __init__(self, path: Path, resume: bool, retry_errors: bool) -> None:
        self.path = path
        _clean_stale_tmp(path)
        if path.exists() and resume:
            df = pd.read_parquet(path)
            if len(df) and "trial_id" not in df.columns:
                raise ValueError(f"{path} has no 'trial_id' column: it is not a bnexplore "
                                 f"results file; choose another out= or delete it")
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


def _make_sink(out: str | os.PathLike | None, resume: bool, retry_errors: bool):
    if out is None:
        return _MemorySink()
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _CsvSink(path, resume, retry_errors)
    if suffix in (".parquet", ".pq"):
        return _ParquetSink(path, resume, retry_errors)
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


def _call_trial_worker(numba_threads: int | None, trial: Trial, settings: dict[str, Any], seed: int,
                       tid: str) -> list[dict[str, Any]]:
    """:func:`_call_trial` in a worker process, numba limited to ``numba_threads``."""
    _set_numba_threads(numba_threads)
    return _call_trial(trial, settings, seed, tid)


def _call_trial_watched(parent: int, numba_threads: int | None, trial: Trial, settings: dict[str, Any],
                        seed: int, tid: str) -> list[dict[str, Any]]:
    _watch_parent(parent)
    return _call_trial_worker(numba_threads, trial, settings, seed, tid)


def _run_local(tasks, trial, n_jobs, numba_threads=1) -> Iterator[list[dict[str, Any]]]:
    from joblib import Parallel, delayed, parallel_config

    if n_jobs == 1:
        calls = (delayed(_call_trial)(trial, s, seed, tid) for s, seed, tid in tasks)
        yield from Parallel(n_jobs=1, return_as="generator_unordered")(calls)
        return
    me = os.getpid()
    calls = (delayed(_call_trial_watched)(me, numba_threads, trial, s, seed, tid) for s, seed, tid in tasks)
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
        for s, seed, tid in tasks:
            fut = client.submit(_call_trial_worker, numba_threads, trial, s, seed, tid, pure=False)
            futures[fut] = (s, seed, tid)
        for fut in as_completed(list(futures)):
            s, seed, tid = futures.pop(fut)
            try:
                rows = fut.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker died
                rows = [{**s, "seed": seed, "trial_id": tid,
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
def run(trial: Trial, grid: Grid, seeds: Iterable[int] = (0,),
        out: str | os.PathLike | None = None, backend: str = "local", n_jobs: int = 1,
        scheduler: Any = None, progress: bool = True, resume: bool = True,
        retry_errors: bool = False, desc: str | None = None,
        numba_threads: int | None = 1) -> pd.DataFrame:
    """Run ``trial`` for every setting in ``grid`` and every seed.

    Each trial is called as ``trial(**settings, seed=seed)`` and returns a dict (or a
    list of dicts, one per row) of flat scalar result columns.  Every row carries the
    settings, ``seed``, a stable ``trial_id`` (:func:`trial_id`), ``error`` (empty
    unless the trial raised) and ``elapsed_s`` (seconds).  Rows are written to ``out``
    as trials finish - one flushed CSV line per row, or an atomic rewrite of a Parquet
    file - so an interrupted run keeps every finished trial.

    Parameters
    ----------
    trial : callable
        The experiment for one setting and seed.  With ``n_jobs > 1`` or Dask it must
        be picklable (a module-level function is best).
    grid : dict of lists or list of dicts
        See :func:`expand_grid`.
    seeds : iterable of int
        Each setting is run once per seed.
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
        ``resume=False`` an existing ``out`` is overwritten.
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
        All rows of the trials of this grid and seeds - those finished before (read
        back from ``out``) and the new ones - in grid order.

    Warns
    -----
    RuntimeWarning
        When some trials raised; their messages are in the ``error`` column.

    Notes
    -----
    Every trial of every setting and seed is handed to the workers at once, so a slow
    trial holds back no other; finished trials are written as they finish, in any
    order, and a stopped run loses at most the trials in flight.
    ``trial_id`` depends only on the settings and the seed, not on the trial function:
    use one results file per experiment.  A ``KeyboardInterrupt`` stops the run;
    finished trials stay in ``out`` and a rerun picks up the rest.

    Examples
    --------
    >>> def trial(n, p, seed):
    ...     import numpy as np
    ...     x = np.random.default_rng(seed).random(n) < p
    ...     return {"mean": float(x.mean())}
    >>> df = run(trial, {"n": [10, 100], "p": [0.5]}, seeds=[0, 1], progress=False)
    >>> df[["n", "seed"]].values.tolist()
    [[10, 0], [10, 1], [100, 0], [100, 1]]
    >>> list(df.columns)
    ['n', 'p', 'seed', 'trial_id', 'mean', 'error', 'elapsed_s']
    >>> bool(df["error"].isna().all())
    True
    """
    if not callable(trial):
        raise TypeError(f"trial must be callable, got {type(trial).__name__}")
    if backend not in ("local", "dask"):
        raise ValueError(f"backend must be 'local' or 'dask', got {backend!r}")
    if check_int(n_jobs, "n_jobs") == 0:
        raise InvalidParameterError("n_jobs must be a non-zero int (-1: every core), got 0")
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds is empty: give at least one seed")
    seeds = [check_int(s, "seeds") for s in seeds]
    if numba_threads is not None:
        check_int(numba_threads, "numba_threads", low=1)
    settings = expand_grid(grid)

    tasks, order = [], {}
    for s in settings:
        for seed in seeds:
            tid = trial_id(s, seed)
            if tid not in order:
                order[tid] = len(order)
                tasks.append((s, seed, tid))

    connected = None
    if backend == "dask" and isinstance(scheduler, str):
        connected = scheduler = _connect(scheduler)    # before any file: fail fast and clean
    try:
        return _run_tasks(trial, tasks, order, out, backend, n_jobs, scheduler, progress, resume,
                          retry_errors, desc, numba_threads)
    finally:
        if connected is not None:
            connected.close()


def _run_tasks(trial, tasks, order, out, backend, n_jobs, scheduler, progress, resume,
               retry_errors, desc, numba_threads) -> pd.DataFrame:
    sink = _make_sink(out, resume, retry_errors)
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
