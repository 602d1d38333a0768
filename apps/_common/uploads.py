"""Uploaded CSV/ARFF files: checks, parsing, preparation and worker processes.

A file is read by :mod:`bnexplore.data` (never executed) in a worker process
(:class:`UploadJob`), prepared by :func:`bnexplore.data.prepare_frame` (MDL cut points,
missing values as a state, as :func:`bnexplore.datasets.load` does for bundled data)
and kept on the server (:func:`store_upload`) under a name :func:`load_data` serves.
"""
from __future__ import annotations

import collections
import contextlib
import hashlib
import itertools
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from bnexplore.apps.data import (UPLOAD_MAX_BYTES, UPLOAD_MAX_COLUMNS,  # noqa: F401
                                  UPLOAD_MAX_DECLARED_VALUES, UPLOAD_MAX_VALUES, check_upload,
                                  read_upload)
from bnexplore.apps.data import size_error as _size_error  # noqa: F401

from .pages import APPS_DIR


#: seconds an upload may take to be read and prepared before its worker is stopped
#: (the environment variable BNX_UPLOAD_TIMEOUT_S overrides it for a server).
UPLOAD_TIMEOUT_S = 30.0
#: memory an upload's worker process may add to what it starts with, in bytes.
UPLOAD_MAX_MEMORY = 2_000_000_000
#: prefix of the data-set names given to uploaded files.
UPLOAD_PREFIX = "upload: "


# --------------------------------------------------------------------------- uploads
_UPLOADS: "collections.OrderedDict[str, Any]" = collections.OrderedDict()
_UPLOADS_LOCK = threading.Lock()
_UPLOADS_MAX = 16   # uploaded data sets kept on the server (least recently used dropped)
_UPLOAD_IDS = itertools.count(1)   # a CSS class per file input, for its browser-side guard


@dataclass
class PreparedUpload:
    """An uploaded table made ready for the apps (see :func:`prepare_upload`)."""

    frame: Any                      # DataFrame of categoricals, attrs["target"] set
    target: str
    cut_points: dict                # column -> list of cut points (MDL)
    notes: list                     # plain-language remarks (rows dropped, ...)


def prepare_upload(raw, target: str) -> PreparedUpload:
    """Check the target, leave out identifiers and free text, discretise continuous
    columns (MDL) and validate the table: :func:`bnexplore.apps.data.prepare_table`.

    Examples
    --------
    >>> import pandas as pd
    >>> raw = pd.DataFrame({"x": [0.1, 0.2, 0.3, 0.7, 0.8, 0.9] * 5,
    ...                     "class": ["a", "a", "a", "b", "b", "b"] * 5})
    >>> prepare_upload(raw, "class").cut_points
    {'x': [0.5]}
    """
    from bnexplore.apps.data import prepare_table

    p = prepare_table(raw, target)
    return PreparedUpload(p.frame, p.target, p.cut_points, p.notes)


def store_upload(prepared: PreparedUpload, filename: str, content: bytes) -> str:
    """Keep a prepared upload on the server; return its data-set name for :func:`load_data`.

    The name holds a hash of the content and the target, so it is stable for the same
    file and target and different otherwise.
    """
    digest = hashlib.sha256(bytes(content) + b"\0" + prepared.target.encode()).hexdigest()
    key = f"{UPLOAD_PREFIX}{Path(str(filename)).name} [{prepared.target}] #{digest[:8]}"
    with _UPLOADS_LOCK:
        _UPLOADS[key] = prepared.frame
        _UPLOADS.move_to_end(key)
        while len(_UPLOADS) > _UPLOADS_MAX:
            _UPLOADS.popitem(last=False)
    return key


def _uploaded(name: str):
    with _UPLOADS_LOCK:
        df = _UPLOADS.get(name)
        if df is not None:
            _UPLOADS.move_to_end(name)
    if df is None:
        exc = ValueError(f"the uploaded data set {name!r} is no longer on the server: "
                         f"upload the file again")
        exc.transient = True   # not cached: the same file uploaded again must be served
        raise exc
    return df


@dataclass
class UploadResult:
    """What reading and preparing an upload gave (see :func:`process_upload`)."""

    columns: list                   # the file's column names
    target: str                     # the class column used
    prepared: Any                   # PreparedUpload, or None when preparing failed
    error: Any = None               # the exception of prepare_upload for this target


def process_upload(content: bytes, filename: str, target: str | None = None,
                   max_bytes: int = UPLOAD_MAX_BYTES) -> UploadResult:
    """Read an upload and prepare it for ``target`` (by default the file's class column).

    Errors of reading raise; an error of :func:`prepare_upload` is kept in
    :attr:`UploadResult.error` with the columns, so that another target can be chosen.

    Examples
    --------
    >>> res = process_upload(b"a,class\\nx,yes\\ny,no\\n", "t.csv")
    >>> res.columns, res.target, res.error is None
    (['a', 'class'], 'class', True)
    """
    raw = read_upload(content, filename, max_bytes=max_bytes)
    cols = [str(c) for c in raw.columns]
    if target not in cols:
        default = raw.attrs.get("target") or cols[-1]
        target = default if default in cols else cols[-1]
    try:
        return UploadResult(cols, target, prepare_upload(raw, target))
    except Exception as exc:  # noqa: BLE001 - reported with the columns
        return UploadResult(cols, target, None, exc)


def _upload_worker(conn, content: bytes, filename: str, target: str | None,
                   max_bytes: int, max_memory: int, delay: float = 0.0) -> None:
    """Body of an upload's worker process: send back an UploadResult or the exception.

    ``delay`` (seconds, for tests) makes the worker wait before it starts reading.
    """
    try:
        import resource
        with open("/proc/self/statm") as fh:
            start = int(fh.read().split()[0]) * resource.getpagesize()
        limit = start + int(max_memory)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, OSError, ValueError):  # not Linux: no cap
        pass
    try:
        if delay > 0:
            import time
            time.sleep(delay)
        out: Any = process_upload(content, filename, target, max_bytes)
    except MemoryError:
        out = MemoryError(f"reading {Path(str(filename)).name!r} needs more than the "
                          f"{max_memory / 1e9:g} GB an upload may use: upload a smaller file "
                          f"or fewer columns")
    except BaseException as exc:  # noqa: BLE001 - reported in the page
        out = exc
    if isinstance(out, BaseException):
        out = _portable(out)
    elif out.error is not None:
        out.error = _portable(out.error)
    try:
        conn.send(out)
    except Exception as exc:  # noqa: BLE001 - e.g. a result too odd to pickle
        conn.send(RuntimeError(f"the result of reading {Path(str(filename)).name!r} could not "
                               f"be sent back ({type(exc).__name__}): try again"))
    finally:
        conn.close()


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else a ``ValueError`` with its message."""
    import pickle
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - custom constructors, unpicklable attributes
        return ValueError(f"{type(exc).__name__}: {exc}"[:4000])


#: upload worker processes running at once on the server (more jobs wait their turn).
UPLOAD_WORKERS = 2
_UPLOAD_SLOTS = threading.BoundedSemaphore(UPLOAD_WORKERS)
_FORKSERVER_LOCK = threading.Lock()
_FORKSERVER_READY: list = []


def _upload_context():
    """The multiprocessing context of upload workers.

    ``forkserver``: a clean single-threaded server process (started once, with pandas,
    scikit-learn, Panel and the readers imported) forks each worker, so a worker
    starts in milliseconds and nothing of the Bokeh server's threads is copied.
    Falls back to ``spawn`` where ``forkserver`` does not exist.
    """
    import multiprocessing as mp

    with _FORKSERVER_LOCK:
        if _FORKSERVER_READY:
            return _FORKSERVER_READY[0]
        try:
            ctx = mp.get_context("forkserver")
            ctx.set_forkserver_preload(["pandas", "sklearn.base", "scipy.io.arff", "panel",
                                        "bnexplore.data.core", "bnexplore.data.io",
                                        "bnexplore.data.discretize"])
        except ValueError:
            ctx = mp.get_context("spawn")
        _FORKSERVER_READY.append(ctx)
        return ctx


#: seconds after the first page before the upload fork server starts: its imports take
#: a core for seconds, which the first views need more (an earlier upload starts it).
UPLOAD_WARM_UP_DELAY_S = 30.0
_UPLOAD_WARM_UP: list = []      # once per server process


def warm_up_upload_workers() -> None:
    """Start the upload fork server soon (in the background), not at the first upload."""
    with _FORKSERVER_LOCK:
        if _UPLOAD_WARM_UP:
            return
        _UPLOAD_WARM_UP.append(True)

    def _start():
        import time
        time.sleep(UPLOAD_WARM_UP_DELAY_S)
        ctx = _upload_context()
        if ctx.get_start_method() == "forkserver":
            from multiprocessing import forkserver
            with contextlib.suppress(Exception):
                forkserver.ensure_running()
    threading.Thread(target=_start, daemon=True, name="bnx-upload-warmup").start()


class UploadJob:
    """Read and prepare one upload in a worker process, off the server's event loop.

    The job starts at once (in a watcher thread that waits for a free worker slot, see
    :data:`UPLOAD_WORKERS`); ``on_done`` is called in that thread with an
    :class:`UploadResult` or an exception, unless the job was cancelled. A worker is
    killed when cancelled, after ``timeout`` seconds, or when it needs more than
    ``max_memory`` bytes more memory than it started with. ``delay`` (seconds, for
    tests) makes the worker wait before it reads the file.

    Examples
    --------
    >>> out = []
    >>> job = UploadJob(b"a,class\\nx,yes\\ny,no\\n", "t.csv", None, out.append)
    >>> job.wait(120), out[0].columns
    (True, ['a', 'class'])
    """

    def __init__(self, content: bytes, filename: str, target: str | None,
                 on_done: Callable[[Any], None], timeout: float = UPLOAD_TIMEOUT_S,
                 max_bytes: int = UPLOAD_MAX_BYTES, max_memory: int = UPLOAD_MAX_MEMORY,
                 delay: float = 0.0):
        self.filename = str(filename)
        self._args = (bytes(content), self.filename, target, int(max_bytes), int(max_memory),
                      float(delay))
        self._on_done = on_done
        self._timeout = float(timeout)
        self._cancelled = threading.Event()
        self._lock = threading.Lock()
        self._proc = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="bnx-upload")
        self._thread.start()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Stop the job: its worker is killed and ``on_done`` is not called."""
        self._cancelled.set()
        with self._lock:
            proc = self._proc
        if proc is not None and proc.is_alive():
            with contextlib.suppress(Exception):
                proc.kill()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job has finished; ``True`` if it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        try:
            result = self._work()
        except Exception as exc:  # noqa: BLE001 - the machinery failed: say so
            result = RuntimeError(f"the upload could not be processed ({type(exc).__name__}: "
                                  f"{exc}): try again")
        if result is not None and not self.cancelled:
            self._on_done(result)

    def _work(self) -> Any:
        with _UPLOAD_SLOTS:
            if self.cancelled:
                return None
            ctx = _upload_context()
            recv, send = ctx.Pipe(duplex=False)
            # the worker unpickles its target from this module: Bokeh restores sys.path
            # after each app script, so put this folder back for the child to import it
            if str(APPS_DIR) not in sys.path:
                sys.path.insert(0, str(APPS_DIR))
            proc = ctx.Process(target=_upload_worker, args=(send, *self._args), daemon=True,
                               name="bnx-upload-worker")
            with self._lock:
                if self.cancelled:
                    return None
                proc.start()
                self._proc = proc
            send.close()
            name = Path(self.filename).name
            try:
                if recv.poll(self._timeout):
                    return recv.recv()
                return TimeoutError(f"reading and preparing {name!r} took more than "
                                    f"{self._timeout:g} s and was stopped: upload a smaller "
                                    f"file or fewer columns")
            except (EOFError, OSError):
                if self.cancelled:
                    return None
                proc.join(5)
                return RuntimeError(f"reading {name!r} stopped the worker (exit code "
                                    f"{proc.exitcode}), probably out of memory: upload a "
                                    f"smaller file or fewer columns")
            finally:
                if proc.is_alive():
                    proc.kill()
                proc.join(5)
                recv.close()


def _upload_guard_class():
    """The class of :class:`DataSource`'s upload guard (:mod:`bnexplore.apps.guard`)."""
    from bnexplore.apps.guard import UploadGuard
    return UploadGuard
