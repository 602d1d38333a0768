"""Shared helpers for benchmark scripts: timing and a result line."""
from __future__ import annotations

import time
from typing import Callable


def best_time(fn: Callable[[], object], repeat: int = 3) -> float:
    """Smallest wall time of ``repeat`` calls (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def report(what: str, ours: float, peer: float, peer_name: str, unit: str = "s") -> str:
    line = (f"{what}: bnexplore {ours:.4g} {unit}, {peer_name} {peer:.4g} {unit}, "
            f"ratio {peer / ours:.1f}x")
    print(line, flush=True)
    return line
