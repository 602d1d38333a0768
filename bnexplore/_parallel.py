"""One lock around every launch of a numba ``parallel=True`` kernel.

numba's fallback threading layer (``workqueue``, used when neither TBB nor OpenMP is
available) aborts the process if two Python threads launch parallel kernels at the
same time - which the apps can do (a cross-validation in a background thread while
another session computes).  Each launch already uses every core, so serialising
them costs nothing measurable.

Examples
--------
>>> from bnexplore._parallel import PARALLEL_LOCK
>>> with PARALLEL_LOCK:
...     pass
"""
from __future__ import annotations

import threading

__all__ = ["PARALLEL_LOCK"]

#: re-entrant, so a wrapper holding it may call another wrapper
PARALLEL_LOCK = threading.RLock()
