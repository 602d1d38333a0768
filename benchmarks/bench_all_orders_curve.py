"""All-orders DP: the N -> time / memory curve (k = 3, 1,000 rows of a random network),
and the speed-up from 1 to 2 numba threads at one N.

Each N runs in a fresh process (peak resident memory is per process): wall, CPU and peak
RSS of ``AllOrders(df, max_parents=3).arc_posteriors()`` (family scores included), with
the load average. Kernels are compiled (or loaded from numba's cache) by a small warm-up
first, which is not timed.

Run: python benchmarks/bench_all_orders_curve.py [--nodes 18 20 22 24 25] [--threads-at 23]
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

CHILD = r"""
import os, sys, time, resource
import numba
import bnexplore as bx
from bnexplore.averaging import AllOrders
n, threads = int(sys.argv[1]), int(sys.argv[2])
numba.set_num_threads(threads)
warm = bx.networks.random_network(n_nodes=8, max_parents=3, random_state=1).sample(200, random_state=1)
AllOrders(warm, max_parents=3).arc_posteriors()
df = bx.networks.random_network(n_nodes=n, max_parents=3, random_state=0).sample(1000, random_state=0)
load = os.getloadavg()[0]
t0, c0 = time.perf_counter(), time.process_time()
AllOrders(df, max_parents=3).arc_posteriors()
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(f"{n} {threads} {wall:.2f} {cpu:.2f} {peak:.2f} {load:.1f}")
"""


def run(n: int, threads: int) -> list[str]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(threads)], check=True,
                         capture_output=True, text=True, timeout=1800).stdout.split()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, nargs="+", default=[18, 20, 22, 23, 24, 25])
    ap.add_argument("--threads-at", type=int, default=23)
    args = ap.parse_args()
    print("N    threads  wall (s)  CPU (s)  peak RSS (GiB)  load")
    for n in args.nodes:
        _, t, wall, cpu, peak, load = run(n, os.cpu_count() or 1)
        print(f"{n:<4} {t:<8} {wall:>8} {cpu:>8} {peak:>15} {load:>5}", flush=True)
    one = run(args.threads_at, 1)
    two = run(args.threads_at, 2)
    print(f"N = {args.threads_at}: 1 thread {one[2]} s wall, 2 threads {two[2]} s wall: "
          f"speed-up {float(one[2]) / float(two[2]):.2f}x (load {one[5]} / {two[5]})")


if __name__ == "__main__":
    main()
