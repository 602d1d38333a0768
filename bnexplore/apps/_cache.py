"""Results shared by every session of a server: :func:`panel.cache`, keyed on the data.

An app's heavy results are module-level functions whose first argument is the app's
:class:`~bnexplore.apps.data.Data` and whose other arguments are parameter values.
:func:`cached` wraps such a function in two :func:`panel.cache` layers:

* in memory (``max_items`` results, least recently used dropped), for every data;
* on disk for bundled data (``to_disk=True``), so a later start of the server reads the
  default settings' results back instead of computing them. The folder holds
  :func:`bnexplore.cache.code_version`, so results of other code are never read.

The key is the data's ``key`` (a bundled name, or a hash of the user's table) and the
other arguments. One computation per setting: a session asking for a setting another
session is computing waits for it and reads the result (a class of students moving to
the same setting costs one computation).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Iterator

import panel as pn

from .data import Data

#: how :func:`panel.cache` hashes an app's data: by its key (a hash of a user's table).
HASH_FUNCS = {Data: lambda d: d.key.encode()}
_ONLY_CACHED = contextvars.ContextVar("bnx_only_cached", default=False)


class NotCached(LookupError):
    """Raised under :func:`only_cached` by a result that is not in memory."""


@contextlib.contextmanager
def only_cached() -> Iterator[None]:
    """Within it a :func:`cached` function returns results held in memory and raises
    :class:`NotCached` instead of computing (or reading the disk)."""
    token = _ONLY_CACHED.set(True)
    try:
        yield
    finally:
        _ONLY_CACHED.reset(token)


def disk_path() -> str:
    """The folder of the apps' results on disk (per code version)."""
    from bnexplore.cache import cache_dir, code_version

    return os.path.join(str(cache_dir()), "apps", code_version().replace("+", "-")[:40])


def disk_enabled() -> bool:
    """Results of bundled data are kept on disk unless ``BNX_APPS_DISK_CACHE=0``."""
    try:
        import diskcache  # noqa: F401
    except ImportError:
        return False
    return os.environ.get("BNX_APPS_DISK_CACHE", "1") != "0"


def cached(func: Callable | None = None, *, max_items: int = 64, disk: bool = True):
    """Cache ``func(data, *args, **kwargs)`` for every session (see the module's text).

    Examples
    --------
    >>> from bnexplore.apps.data import bundled_dataset
    >>> calls = []
    >>> @cached(disk=False)
    ... def n_rows(data, plus):
    ...     calls.append(plus)
    ...     return len(data.frame) + plus
    >>> vote = bundled_dataset("vote")
    >>> n_rows(vote, 1), n_rows(vote, 1), calls
    (436, 436, [1])
    """
    if func is None:
        return functools.partial(cached, max_items=max_items, disk=disk)
    on_disk: list = []

    def _disk(data, *args, **kwargs):
        return func(data, *args, **kwargs)

    def _memory(data, *args, **kwargs):
        if disk and data.bundled and disk_enabled():
            if not on_disk:
                on_disk.append(pn.cache(_disk, to_disk=True, cache_path=disk_path(),
                                        hash_funcs=HASH_FUNCS))
            return on_disk[0](data, *args, **kwargs)
        return func(data, *args, **kwargs)

    # panel.cache names a cache by its function's module and name: one name per layer
    for layer, suffix in ((_disk, "disk"), (_memory, "memory")):
        layer.__name__ = layer.__qualname__ = f"{func.__name__}__{suffix}"
        layer.__module__ = func.__module__
    memory = pn.cache(_memory, max_items=max_items, hash_funcs=HASH_FUNCS)
    locks: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
    guard = threading.Lock()
    held: OrderedDict = OrderedDict()   # the keys in memory, least recently used first

    @functools.wraps(func)
    def wrapper(data: Data, *args: Any, **kwargs: Any):
        if not isinstance(data, Data):
            raise TypeError(f"{func.__name__} takes an app's Data first, got "
                            f"{type(data).__name__}")
        key = (data.key, args, tuple(sorted(kwargs.items())))
        with guard:
            if _ONLY_CACHED.get() and key not in held:
                raise NotCached(f"{func.__name__}: not computed yet")
            lock = locks.get(key)
            if lock is None:
                lock = locks[key] = threading.Lock()
        with lock:      # one computation per setting; the others wait and read it
            out = memory(data, *args, **kwargs)
        with guard:     # the same least-recently-used order as the memory layer
            held[key] = True
            held.move_to_end(key)
            while len(held) > max_items:
                held.popitem(last=False)
        return out

    def clear() -> None:
        with guard:
            held.clear()
        memory.clear()
        if on_disk:
            on_disk[0].clear()

    wrapper.clear = clear  # type: ignore[attr-defined]
    return wrapper
