"""Results shared by every session of a server: :func:`cached` and :class:`SharedLRU`.

A setting is computed once even when many sessions ask for it at the same time; a
setting whose computation failed raises the same error again without recomputing
(unless the error is transient, :data:`TRANSIENT_ERRORS`).

A later start of the server reuses what an earlier one computed: the results of
:func:`cached` functions and the rendered pictures of ``apps/_render.py`` are also
written to disk (:class:`bnexplore.cache.DiskCache`, under ``$BNX_CACHE_DIR``) and
read back when the same setting is first asked for again, so the first page after a
restart shows the default setting without running the search, the fits or the
layout again. An entry is keyed by the setting, the cache's name and
:func:`apps_version` (the apps' sources and the versions of the libraries that made
the value), on top of bnexplore's own code version, so other code never reads it.
Only settings of bundled data are kept (:func:`persistable`); failures never are.
"""
from __future__ import annotations

import collections
import contextvars
import functools
import hashlib
import logging
import threading
from typing import Any, Callable

_LOG = logging.getLogger("bnexplore.apps")

#: most results and pictures kept on disk for later starts (least recently used go)
PERSIST_MAX_ENTRIES = 1000
#: a larger pickled result stays in memory only (a picture is 50-150 kB)
PERSIST_MAX_BYTES = 16 * 2**20


# --------------------------------------------------------------------------- caching
#: exceptions that say nothing about the setting (the server was short of memory, a
#: wait timed out): they are passed on but not cached, so the next request retries.
#: An exception with a true ``transient`` attribute is not cached either.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (MemoryError, TimeoutError)


class _Failure:
    """A cached exception: what a failed computation of one setting raised.

    The exception is kept without its traceback (whose frames would hold the failed
    computation's data alive in the cache) and every replay raises a fresh copy, so
    sessions replaying it at the same time do not share one traceback.
    """

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException):
        _strip_tracebacks(exc)
        self.exc = exc

    def reraise(self) -> None:
        import copy

        try:
            exc = copy.copy(self.exc)
        except Exception:  # noqa: BLE001 - an exception class that cannot be copied
            exc = self.exc
        raise exc.with_traceback(None)


def _strip_tracebacks(exc: BaseException) -> None:
    """Drop the tracebacks of ``exc`` and of its chained causes/contexts."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        e.__traceback__ = None
        if e.__cause__ is not None:
            _strip_tracebacks(e.__cause__)
        e = e.__context__


def is_import_deadlock(exc: BaseException) -> bool:
    """Whether ``exc`` is Python's import-deadlock error: two threads first importing the
    same modules (a lazily imported plotting stack) meet its detector, and the next try
    imports fine, so such an error is retried, never cached or shown."""
    return type(exc).__name__ == "_DeadlockError"


def _is_transient(exc: BaseException) -> bool:
    return (isinstance(exc, TRANSIENT_ERRORS) or bool(getattr(exc, "transient", False))
            or is_import_deadlock(exc))


def cached(maxsize: int = 64) -> Callable[[Callable], Callable]:
    """Results cache shared by every session of the server, failures included.

    Bokeh runs an app file as a new module for each session and clears that module's
    names when the session closes, so the cache must not keep the first session's
    function: results are stored under (file, function name) in a :func:`shared_cache`
    and a miss is computed by the *calling* session's own function. ``pn.cache`` is no
    alternative: it needs the module in ``sys.modules``, which ``panel serve apps/``
    (routing through ``runpy``) does not give. Arguments must be hashable (use the
    widget values: str, int, float).

    Views compute in worker threads (see :func:`reactive`), so several sessions can ask
    for the same setting at once: the first computes it and the others wait for that
    result (one computation per setting, not one per caller).

    An exception is a result too: a setting whose computation failed (a table over the
    memory budget, a bad class column) raises the same exception again, from the
    cache, without recomputing - every view of every session shows the error box
    at once instead of each retrying a long, failing fit. Exceptions in
    :data:`TRANSIENT_ERRORS` (or with a true ``transient`` attribute) are not cached.

    Examples
    --------
    >>> calls = []
    >>> @cached(maxsize=8)
    ... def inverse(x):
    ...     calls.append(x)
    ...     return 1 / x
    >>> inverse(4), inverse(4), calls
    (0.25, 0.25, [4])
    >>> for _ in range(2):
    ...     try:
    ...         inverse(0)
    ...     except ZeroDivisionError:
    ...         pass
    >>> calls
    [4, 0]
    """
    def deco(func: Callable) -> Callable:
        store = shared_cache(f"{func.__code__.co_filename}:{func.__qualname__}", maxsize,
                             persist=True)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = (args, tuple(sorted(kwargs.items())))
            return store.compute(key, lambda: func(*args, **kwargs))
        return wrapper
    return deco


#: called (if set in the calling context) when a :meth:`SharedLRU.compute` finds no
#: value, in memory or on disk: the caller's result is being computed, not read (also
#: when the caller waits for another thread that computes it)
ON_COMPUTING: "contextvars.ContextVar[Callable[[], None] | None]" = contextvars.ContextVar(
    "bnx_on_computing", default=None)


class SharedLRU:
    """A small thread-safe LRU mapping (``get`` / ``[]`` / ``in`` / ``len``).

    :meth:`compute` adds what :func:`cached` needs: one computation per key at a time
    (callers asking for a key being computed wait for that computation) and cached
    exceptions.
    """

    _MISS = object()

    def __init__(self, maxsize: int = 128, disk: Any = None, name: str = ""):
        self.maxsize = int(maxsize)
        # a mapping kept between server starts (see shared_cache), or None
        self._disk = disk
        self._name = name
        self._d: "collections.OrderedDict[Any, Any]" = collections.OrderedDict()
        self._lock = threading.Lock()
        # key -> [Future of the running computation, thread ident of its owner,
        #         whether it computes (not reads the disk), ON_COMPUTING hooks of waiters]
        self._inflight: dict[Any, list] = {}

    def _lookup(self, key: Any) -> Any:
        # call with self._lock held
        if key in self._d:
            self._d.move_to_end(key)
            return self._d[key]
        return self._MISS

    def compute(self, key: Any, func: Callable[[], Any]) -> Any:
        """The value cached under ``key``, else ``func()`` (stored, shared, deduplicated).

        If another thread is computing ``key``, wait for its outcome instead of
        computing it again. An exception of ``func`` is stored (and raised again on
        every later call) unless it is transient (:data:`TRANSIENT_ERRORS`).
        """
        from concurrent.futures import Future

        me = threading.get_ident()
        tell = None
        with self._lock:
            out = self._lookup(key)
            if out is self._MISS:
                running = self._inflight.get(key)
                if running is None or running[1] == me:  # same thread: a recursion
                    fut: Any = Future()
                    if running is None:
                        self._inflight[key] = [fut, me, False, []]
                    owner = True
                else:
                    fut, owner = running[0], False
                    hook = ON_COMPUTING.get()
                    if hook is not None and running[2]:
                        tell = hook           # the owner computes: so does this caller
                    elif hook is not None:
                        running[3].append(hook)   # told if the owner has to compute
        if out is not self._MISS:
            if isinstance(out, _Failure):
                out.reraise()
            return out
        if not owner:
            if tell is not None:
                tell()
            out = fut.result()           # the owner's value, or its exception raised here
            if isinstance(out, _Failure):
                out.reraise()
            return out
        value = self._disk_get(key)
        if value is not self._MISS:
            self._finish(key, fut, value=value, store=True)
            return value
        self._computing(key)
        try:
            value = func()
        except Exception as exc:  # noqa: BLE001 - cached (or not) and raised again
            if _is_transient(exc):
                self._finish(key, fut, error=exc)
                raise
            # the traceback goes to the server's log once; the cache keeps the exception
            _LOG.warning("cached failure of %r: %s", key, exc, exc_info=exc)
            failure = _Failure(exc)
            self._finish(key, fut, value=failure, store=True)
            failure.reraise()
        except BaseException as exc:     # interrupted: nothing is cached, waiters see it
            self._finish(key, fut, error=exc)
            raise
        self._disk_put(key, value)
        self._finish(key, fut, value=value, store=True)
        return value

    def _computing(self, key: Any) -> None:
        # the owner calls func: it and every caller waiting for it compute, not read
        with self._lock:
            running = self._inflight.get(key)
            hooks = []
            if running is not None:
                running[2] = True
                hooks, running[3] = running[3], []
        for hook in [*hooks, ON_COMPUTING.get()]:
            if hook is not None:
                hook()

    def _disk_get(self, key: Any) -> Any:
        if self._disk is None or not persistable(key):
            return self._MISS
        try:
            return self._disk.get((apps_version(), self._name, key), self._MISS)
        except Exception:  # noqa: BLE001 - the disk is an optimisation: compute instead
            return self._MISS

    def _disk_put(self, key: Any, value: Any) -> None:
        if self._disk is not None and persistable(key):
            try:
                self._disk[(apps_version(), self._name, key)] = value
            except Exception:  # noqa: BLE001 - not kept for the next start, nothing else
                pass

    def _finish(self, key: Any, fut: Any, value: Any = None, error: BaseException | None = None,
                store: bool = False) -> None:
        with self._lock:
            if store:
                self._set(key, value)
            if self._inflight.get(key, (None,))[0] is fut:
                del self._inflight[key]
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(value)

    def get(self, key: Any, default: Any = None) -> Any:
        with self._lock:
            out = self._lookup(key)
            return default if out is self._MISS else out

    def __getitem__(self, key: Any) -> Any:
        with self._lock:
            self._d.move_to_end(key)
            return self._d[key]

    def _set(self, key: Any, value: Any) -> None:
        # call with self._lock held
        self._d[key] = value
        self._d.move_to_end(key)
        while len(self._d) > self.maxsize:
            self._d.popitem(last=False)

    def __setitem__(self, key: Any, value: Any) -> None:
        with self._lock:
            self._set(key, value)

    def __contains__(self, key: Any) -> bool:
        with self._lock:
            return key in self._d

    def __len__(self) -> int:
        with self._lock:
            return len(self._d)


_SHARED: dict[str, SharedLRU] = {}
_SHARED_LOCK = threading.Lock()


def shared_cache(name: str, maxsize: int = 128, persist: bool = False) -> SharedLRU:
    """A named :class:`SharedLRU` shared by all sessions of the server.

    With ``persist``, what :meth:`SharedLRU.compute` computes for a
    :func:`persistable` key is also written to disk and a later server start reads it
    back instead of computing it (see the module's docstring). The first call of a
    name decides.

    Examples
    --------
    >>> c = shared_cache("doc-example", maxsize=2)
    >>> c["a"] = 1; shared_cache("doc-example").get("a")
    1
    """
    with _SHARED_LOCK:   # sessions build pages concurrently: one cache per name
        if name not in _SHARED:
            _SHARED[name] = SharedLRU(maxsize, disk=_disk() if persist else None, name=name)
        return _SHARED[name]


@functools.lru_cache(maxsize=1)
def _disk() -> Any:
    from bnexplore.cache import DiskCache

    # one folder for every app's results and pictures: one bound on their number
    return DiskCache("apps", max_entries=PERSIST_MAX_ENTRIES, max_entry_bytes=PERSIST_MAX_BYTES)


def persistable(key: Any) -> bool:
    """Whether a setting ``key`` may be kept on disk for later starts.

    Only keys made of texts, numbers, booleans, None and tuples of these, and naming
    no uploaded file: an upload's data set name holds the file's name and a short hash
    of its content, enough to tell uploads apart within a server but not to let a
    later visitor's file claim another's results; uploads are computed again.

    Examples
    --------
    >>> persistable(("dataset", "vote", 0, "K2", 1.0, 3))
    True
    >>> persistable(("dataset", "upload: mine.csv [class] #0123abcd", 0))
    False
    >>> persistable((object(),))
    False
    """
    from .uploads import UPLOAD_PREFIX

    if isinstance(key, str):
        return not key.startswith(UPLOAD_PREFIX)
    if key is None or isinstance(key, (bool, int, float)):
        return True
    if isinstance(key, tuple):
        return all(persistable(k) for k in key)
    return False


@functools.lru_cache(maxsize=1)
def apps_version() -> str:
    """A hash of the apps' sources and of the versions of the libraries behind their
    results and pictures (part of every key kept on disk)."""
    import importlib.metadata as md
    import sys

    from .pages import APPS_DIR

    h = hashlib.sha256(sys.version.encode())
    for dist in ("panel", "bokeh", "holoviews", "pandas", "numpy", "scipy", "networkx",
                 "scikit-learn"):
        try:
            h.update(f"|{dist}={md.version(dist)}".encode())
        except md.PackageNotFoundError:
            h.update(f"|{dist}=-".encode())
    for path in sorted(APPS_DIR.rglob("*.py")):
        if "__pycache__" not in path.parts:
            h.update(str(path.relative_to(APPS_DIR)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]
