"""Serial numba kernels run side by side from Python threads.

The package's kernels are compiled serial: a ``parallel=True`` kernel compiles three
to five times slower, which a fresh install pays at its first start. They release
the GIL (``nogil=True``), so a kernel whose work splits into independent parts
(work items handed out through an atomic counter, or batches of nodes) can still use
every core: :func:`run_parts` launches it once per part, part 0 in the calling
thread and the others in a small pool of Python threads.

How many parts: :func:`n_parts`, numba's thread count *of the calling thread*
(``numba.get_num_threads()``) when the work is large enough to pay for a thread
hand-off (some tens of microseconds). A thread that shares the machine with others
(a server's callback) can set its count to one (``numba.set_num_threads(1)``) so that
it never takes a second core from them; a script or a notebook gets every core.

Examples
--------
>>> from bnexplore._threads import run_parts
>>> out = [0, 0, 0]
>>> def part(i):
...     out[i] = i * i
>>> run_parts(part, 3)
>>> out
[0, 1, 4]
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable

__all__ = ["n_parts", "run_parts"]

_POOL: Any = None
_POOL_LOCK = threading.Lock()


def _pool():
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            from concurrent.futures import ThreadPoolExecutor
            _POOL = ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 1) - 1),
                                       thread_name_prefix="bnx-part")
        return _POOL


def n_parts(work: float, min_work: float, most: int | None = None) -> int:
    """How many parts to split ``work`` into: the calling thread's numba thread count
    (at most ``most``) if ``work >= min_work``, else 1.

    Examples
    --------
    >>> n_parts(10, 1_000)
    1
    """
    if work < min_work:
        return 1
    try:
        import numba
        n = numba.get_num_threads()
    except Exception:  # noqa: BLE001 - numba's threads cannot be read: one part
        return 1
    return max(1, min(n, most if most is not None else n))


def run_parts(part: Callable[[int], None], n: int) -> None:
    """Call ``part(i)`` for ``i`` in ``range(n)``, at the same time, and wait for all.

    Part 0 runs in the calling thread, the others in the package's pool; the pool's
    threads only ever run kernels (never wait on each other), so callers in several
    threads at once cannot deadlock, only queue. The first exception of a part is
    raised after every part has ended (a kernel still running must not outlive the
    arrays it writes).
    """
    if n <= 1:
        part(0)
        return
    futures = [_pool().submit(part, i) for i in range(1, n)]
    error: BaseException | None = None
    try:
        part(0)
    except BaseException as exc:  # noqa: BLE001 - raised once the other parts ended
        error = exc
    for f in futures:
        try:
            f.result()
        except BaseException as exc:  # noqa: BLE001
            error = error or exc
    if error is not None:
        raise error
