"""Results shared by every session of a server: :func:`cached` and :class:`SharedLRU`.

A setting is computed once even when many sessions ask for it at the same time; a
setting whose computation failed raises the same error again without recomputing
(unless the error is transient, :data:`TRANSIENT_ERRORS`).
"""
from __future__ import annotations

import collections
import functools
import logging
import threading
from typing import Any, Callable

_LOG = logging.getLogger("bnexplore.apps")


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
        store = shared_cache(f"{func.__code__.co_filename}:{func.__qualname__}", maxsize)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = (args, tuple(sorted(kwargs.items())))
            return store.compute(key, lambda: func(*args, **kwargs))
        return wrapper
    return deco


class SharedLRU:
    """A small thread-safe LRU mapping (``get`` / ``[]`` / ``in`` / ``len``).

    :meth:`compute` adds what :func:`cached` needs: one computation per key at a time
    (callers asking for a key being computed wait for that computation) and cached
    exceptions.
    """

    _MISS = object()

    def __init__(self, maxsize: int = 128):
        self.maxsize = int(maxsize)
        self._d: "collections.OrderedDict[Any, Any]" = collections.OrderedDict()
        self._lock = threading.Lock()
        # key -> (Future of the running computation, thread ident of its owner)
        self._inflight: dict[Any, tuple[Any, int]] = {}

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
        with self._lock:
            out = self._lookup(key)
            if out is self._MISS:
                running = self._inflight.get(key)
                if running is None or running[1] == me:  # same thread: a recursion
                    fut: Any = Future()
                    if running is None:
                        self._inflight[key] = (fut, me)
                    owner = True
                else:
                    fut, owner = running[0], False
        if out is not self._MISS:
            if isinstance(out, _Failure):
                out.reraise()
            return out
        if not owner:
            out = fut.result()           # the owner's value, or its exception raised here
            if isinstance(out, _Failure):
                out.reraise()
            return out
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
        self._finish(key, fut, value=value, store=True)
        return value

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


def shared_cache(name: str, maxsize: int = 128) -> SharedLRU:
    """A named :class:`SharedLRU` shared by all sessions of the server.

    Examples
    --------
    >>> c = shared_cache("doc-example", maxsize=2)
    >>> c["a"] = 1; shared_cache("doc-example").get("a")
    1
    """
    with _SHARED_LOCK:   # sessions build pages concurrently: one cache per name
        if name not in _SHARED:
            _SHARED[name] = SharedLRU(maxsize)
        return _SHARED[name]
