"""A guard around every launch of a numba ``parallel=True`` kernel.

numba runs parallel regions on one of three threading layers. ``omp`` (OpenMP) and
``tbb`` accept launches from several Python threads at once; the fallback
``workqueue`` (used when neither library is present) aborts the process when two
threads launch at the same time, which the apps do (every session computes in its own
worker thread). So the guard is a real lock only where it must be:

* until a parallel kernel has run, numba has not chosen its layer: the guard locks
  (the first launch also loads the layer; loading it from two threads at once is
  not safe on any layer);
* afterwards it locks only on ``workqueue``.

On a threadsafe layer two sessions therefore score their orders side by side instead
of one waiting for the other's whole launch (16 s for hailfinder with k = 4).
Kernels that share a buffer between calls must keep one per thread.

Examples
--------
>>> from bnexplore._parallel import PARALLEL_LOCK
>>> with PARALLEL_LOCK:
...     pass
"""
from __future__ import annotations

import threading

__all__ = ["PARALLEL_LOCK", "ParallelGuard"]

#: numba's threading layers that accept concurrent launches from Python threads
THREADSAFE_LAYERS = frozenset({"omp", "tbb"})

#: whether any kernel of the package is compiled with ``parallel=True``. Only the
#: averaging over all orders (``_order_dp``: exact DP, order-MCMC chains) is; every other
#: kernel is serial (on the small machines the apps serve from, a parallel kernel
#: compiled three to five times slower, a fresh install's first start, and gained
#: nothing in the apps' views, which run one numba thread each) and large work is split
#: over Python threads instead (:mod:`bnexplore._threads`). Serial kernels release the
#: GIL and run side by side in several threads on any layer: were there no parallel
#: kernel, the guard would never lock.
PARALLEL_KERNELS = True


def _layer() -> str | None:
    """The threading layer numba chose, or None while no parallel kernel has run."""
    try:
        import numba
        return numba.threading_layer()
    except (ImportError, ValueError):   # ValueError: no layer initialised yet
        return None


class ParallelGuard:
    """Context manager: a re-entrant lock on unsafe (or not yet chosen) threading layers.

    Re-entrant, so a wrapper holding it may call another wrapper; whether an entry
    took the lock is remembered per thread, so a layer chosen between entry and exit
    never leaves the lock held.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._threadsafe = False          # known once a parallel kernel has run
        self._held = threading.local()    # per thread: stack of "this entry locked"

    def _must_lock(self) -> bool:
        if not PARALLEL_KERNELS:
            return False
        if not self._threadsafe:
            layer = _layer()
            self._threadsafe = layer in THREADSAFE_LAYERS
            return not self._threadsafe
        return False

    def __enter__(self) -> "ParallelGuard":
        stack = getattr(self._held, "stack", None)
        if stack is None:
            stack = self._held.stack = []
        locked = self._must_lock()
        if locked:
            self._lock.acquire()
        stack.append(locked)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._held.stack.pop():
            self._lock.release()


#: the guard every parallel launch of the package goes through
PARALLEL_LOCK = ParallelGuard()
