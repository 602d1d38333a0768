"""A small sampling profiler for a `panel serve` process (every thread, wall clock).

cProfile sees one thread; the apps compute their views in worker threads and warm up
kernels in another. This samples ``sys._current_frames()`` every ``interval`` seconds
and appends one line per sampled thread to ``out``::

    <seconds since start>\t<thread name>\t<thread CPU seconds so far>\t<frame;...;leaf frame>

(the "collapsed stacks" format, outermost frame first; the thread's CPU time from
``/proc/self/task``, Linux only, else -1). ``summarise`` reads such a file back: the
CPU seconds each thread spent, and in which frames (each sample weighs the CPU its
thread used since its previous sample), so the figures hardly depend on the load.

Run a server under it (what ``bench_first_start.py --profile`` does)::

    python benchmarks/_sampler.py OUT.txt -m panel serve apps/ --port 5006
"""
from __future__ import annotations

import collections
import os
import runpy
import sys
import threading
import time

def _frame_name(code) -> str:
    fn = code.co_filename
    for marker in ("site-packages/", "lib/python3"):
        i = fn.find(marker)
        if i >= 0:
            fn = fn[i + len(marker):]
            break
    else:
        fn = os.path.basename(os.path.dirname(fn)) + "/" + os.path.basename(fn)
    return f"{fn}:{code.co_name}"


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _thread_cpu(native_id) -> float:
    """User + system CPU seconds of one thread of this process (Linux), else -1."""
    if native_id is None:
        return -1.0
    try:
        with open(f"/proc/self/task/{native_id}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return -1.0


def start(out: str, interval: float = 0.01) -> threading.Thread:
    """Sample every thread of this process into ``out`` until the process ends."""
    t0 = time.perf_counter()
    me = []

    def run() -> None:
        me.append(threading.get_ident())
        with open(out, "w", buffering=1 << 16) as fh:
            last_flush = time.perf_counter()
            while True:
                now = time.perf_counter()
                threads = {t.ident: t for t in threading.enumerate()}
                for ident, frame in sys._current_frames().items():
                    if ident == me[0]:
                        continue
                    th = threads.get(ident)
                    cpu = _thread_cpu(getattr(th, "native_id", None))
                    stack = []
                    f = frame
                    while f is not None and len(stack) < 80:
                        stack.append(_frame_name(f.f_code))
                        f = f.f_back
                    fh.write(f"{now - t0:.3f}\t{th.name if th else ident}\t{cpu:.2f}\t"
                             f"{';'.join(reversed(stack))}\n")
                if now - last_flush > 0.25:
                    fh.flush()
                    last_flush = now
                time.sleep(interval)

    th = threading.Thread(target=run, name="bnx-sampler", daemon=True)
    th.start()
    return th


def read(path: str) -> list[tuple[float, str, float, str]]:
    """The samples of a file written by :func:`start`: (time, thread, CPU weight, stack).

    The CPU weight of a sample is the CPU its thread used since the thread's previous
    sample (0 for the first)."""
    rows, last = [], {}
    with open(path) as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4:
                continue
            t, name, cpu, stack = float(parts[0]), parts[1], float(parts[2]), parts[3]
            w = max(cpu - last.get(name, cpu), 0.0) if cpu >= 0 else 0.0
            last[name] = cpu
            rows.append((t, name, w, stack))
    return rows


def thread_kind(name: str) -> str:
    """``bnx-view_3`` -> ``bnx-view``; ``ThreadPoolExecutor-0_1`` -> ``ThreadPoolExecutor``."""
    return name.split("_")[0].rstrip("0123456789-")


def summarise(path: str, until: float | None = None, top: int = 25) -> str:
    """CPU seconds per thread and per inclusive frame up to ``until`` seconds."""
    rows = read(path)
    if not rows:
        return "no samples"
    end = until if until is not None else rows[-1][0]
    per_thread = collections.Counter()
    incl = collections.Counter()
    for t, name, w, stack in rows:
        if t > end or w <= 0:
            continue
        kind = thread_kind(name)
        per_thread[kind] += w
        for fr in set(stack.split(";")):
            incl[(kind, fr)] += w
    lines = [f"CPU seconds up to {end:.1f} s: {sum(per_thread.values()):.2f}"]
    lines += [f"  thread {k}: {v:.2f} s" for k, v in per_thread.most_common()]
    lines.append("inclusive CPU seconds by frame (bnexplore, apps, imports):")
    shown = [(k, v) for k, v in incl.most_common() if any(
        m in k[1] for m in ("bnexplore/", "apps/", "viz/", "classifiers/", ":<module>"))]
    lines += [f"  {v:6.2f} s  [{k}] {fr}" for (k, fr), v in shown[:top]]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--summarise":
        print(summarise(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else None,
                        int(sys.argv[4]) if len(sys.argv) > 4 else 40))
        raise SystemExit(0)
    out, rest = sys.argv[1], sys.argv[2:]
    start(out)
    if rest[:1] == ["-m"]:
        sys.argv = [rest[1]] + rest[2:]
        runpy.run_module(rest[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = rest
        runpy.run_path(rest[0], run_name="__main__")
