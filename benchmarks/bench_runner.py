"""Experiment runner throughput (issue 38): trials per second with 1 and 2 local worker
processes (joblib) and a 2-worker local Dask cluster, and the scaling with the worker
count.

A trial is a hill-climbing search (BDeu, in-degree <= 3) on 3,000 rows sampled from
ALARM with the trial's random state (about a quarter of a second on one core); every worker
runs numba on one thread (the runner's default).  Worker start-up is not timed: each
backend first runs a warm-up batch (process start, imports, numba's disk cache), then
the timed batch of ``--trials`` trials.  On a machine shared with other work the
scaling is bounded by the cores left over: the load average is printed with each
figure.

Run: python benchmarks/bench_runner.py [--trials 24]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def search_trial(rows: int, random_state: int) -> dict:
    """One trial: sample ALARM, hill-climb it."""
    import bnexplore as bx
    from bnexplore.search import hill_climb
    df = bx.networks.load("alarm").sample(rows, random_state=random_state)
    res = hill_climb(df, prior="BDeu", max_parents=3)
    return {"score": res.score, "arcs": res.dag.number_of_edges()}


def _rate(n_trials: int, **kw) -> float:
    from bnexplore.experiments import run
    grid = {"rows": [3000]}
    run(search_trial, grid, random_states=range(10_000, 10_000 + max(2, kw.get("n_jobs", 1))), progress=False, **kw)
    t0 = time.perf_counter()
    df = run(search_trial, grid, random_states=range(n_trials), progress=False, **kw)
    dt = time.perf_counter() - t0
    assert df["error"].isna().all(), df["error"].dropna().iloc[0]
    return n_trials / dt


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=24)
    args = ap.parse_args(argv)
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}", flush=True)
    one = _rate(args.trials, n_jobs=1)
    print(f"1 local worker: {one:.2f} trials/s (load {os.getloadavg()[0]:.1f})", flush=True)
    two = _rate(args.trials, n_jobs=2)
    print(f"2 local workers: {two:.2f} trials/s, {two / one:.2f}x one worker (load {os.getloadavg()[0]:.1f})",
          flush=True)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("Dask cluster: skipped (dask.distributed is not installed: pip install 'bnexplore[dask]')")
        return
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        dask = _rate(args.trials, backend="dask", scheduler=client)
    print(f"2-worker Dask cluster: {dask:.2f} trials/s, {dask / one:.2f}x one local worker "
          f"(load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
