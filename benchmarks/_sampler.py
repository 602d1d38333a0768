"""A small sampling profiler for a `panel serve` process (every thread, wall clock).

cProfile sees one thread; the apps compute their views in worker threads and warm up
kernels in another. This samples ``sys._current_frames()`` every ``interval`` seconds
and appends one line per sampled thread to ``out``::

    <seconds since start>\t<thread name>\t<frame;frame;...;leaf frame>

(the "collapsed stacks" format, outermost frame first). ``summarise`` reads such a
file back: the time each thread spent in each module group, busy samples only.

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

#: leaf functions of a thread that waits (not counted as busy).
IDLE_LEAVES = ("wait", "select", "poll", "_worker", "get", "sleep", "accept", "readline",
               "_wait_for_tstate_lock", "run_forever", "_run_once", "recv_into", "read")


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


def start(out: str, interval: float = 0.005) -> threading.Thread:
    """Sample every thread of this process into ``out`` until the process ends."""
    t0 = time.perf_counter()
    me = []

    def run() -> None:
        me.append(threading.get_ident())
        with open(out, "w", buffering=1 << 16) as fh:
            last_flush = time.perf_counter()
            while True:
                now = time.perf_counter()
                names = {t.ident: t.name for t in threading.enumerate()}
                for ident, frame in sys._current_frames().items():
                    if ident == me[0]:
                        continue
                    stack = []
                    f = frame
                    while f is not None and len(stack) < 80:
                        stack.append(_frame_name(f.f_code))
                        f = f.f_back
                    fh.write(f"{now - t0:.3f}\t{names.get(ident, ident)}\t"
                             f"{';'.join(reversed(stack))}\n")
                if now - last_flush > 0.25:
                    fh.flush()
                    last_flush = now
                time.sleep(interval)

    th = threading.Thread(target=run, name="bnx-sampler", daemon=True)
    th.start()
    return th


def busy(stack: str) -> bool:
    leaf = stack.rsplit(";", 1)[-1].rsplit(":", 1)[-1]
    return leaf not in IDLE_LEAVES


def summarise(path: str, until: float | None = None, top: int = 25) -> str:
    """Busy seconds per thread and per inclusive frame (up to ``until`` seconds)."""
    rows = []
    with open(path) as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                continue
            rows.append((float(parts[0]), parts[1], parts[2]))
    if not rows:
        return "no samples"
    times = sorted({r[0] for r in rows})
    dt = (times[-1] - times[0]) / max(len(times) - 1, 1)
    end = until if until is not None else times[-1]
    per_thread = collections.Counter()
    incl = collections.Counter()
    for t, name, stack in rows:
        if t > end or not busy(stack):
            continue
        kind = name.split("_")[0].rstrip("0123456789-")
        per_thread[kind] += dt
        for fr in set(stack.split(";")):
            incl[(kind, fr)] += dt
    lines = [f"sample interval {dt * 1000:.1f} ms, up to {end:.1f} s"]
    lines += [f"  thread {k}: busy {v:.2f} s" for k, v in per_thread.most_common()]
    lines.append("inclusive busy seconds by frame:")
    lines += [f"  {v:6.2f} s  [{k}] {fr}" for (k, fr), v in incl.most_common(top)]
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
