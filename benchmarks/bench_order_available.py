"""Benchmark: order averaging over incomplete data (``OrderedAveraging(missing="keep")``,
every family on its own rows, bnexplore._order_available) against the same table complete
(the order-scoring engine).

Default: 200 rows, 10 variables (arities 2-4), max_parents 3, 20% of the cells missing at
random; the median of ``--repeat`` runs after one warm-up run (numba compiled).  With
``--alarm``, also ALARM (5,000 rows, its topological order, max_parents 3) at 10% and 30%
of the cells missing, by available case (``missing="keep"``) and structural EM
(``missing="em"``, bnexplore._order_em): the largest arc-posterior difference from the
complete data (issue 37's goal: 0.05), the number of arcs off by more than 0.05 and the
sum of the differences, beside the information floor: the same figures for the complete
data minus as many rows as cells are missing (10% or 30% of the rows).

Run:  python benchmarks/bench_order_available.py [--rows 200] [--cols 10] [--alarm]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import networkx as nx
import numpy as np
import pandas as pd

import bnexplore as bx
from bnexplore.averaging import OrderedAveraging


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def table(n: int, p: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cols, prev = {}, rng.integers(0, 2, n)
    for j in range(p):
        a = 2 + j % 3
        x = np.where(rng.random(n) < 0.6, prev % a, rng.integers(0, a, n))
        cols[f"X{j}"] = pd.Categorical(x, categories=range(a))
        prev = x
    return pd.DataFrame(cols)


def node_rows_posteriors(df: pd.DataFrame, order: list, k: int) -> pd.DataFrame:
    """The former rule, for comparison: every parent set of a node scored on the rows where
    the node and all its candidate parents are observed."""
    post = pd.DataFrame(0.0, index=df.columns, columns=df.columns)
    for i, v in enumerate(order):
        if i == 0:
            continue
        sub = df.loc[df[order[:i + 1]].notna().all(axis=1), order[:i + 1]]
        if len(sub):
            avg = OrderedAveraging(sub, levels=[order[:i], [v]], max_parents=k)
            post[v] = avg.arc_posteriors()[v].reindex(df.columns, fill_value=0.0)
    return post


def timed(fn, repeat: int) -> float:
    fn()                                            # compile / warm
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--cols", type=int, default=10)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--frac", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--alarm", action="store_true")
    ap.add_argument("--former", action="store_true", help="also the former rule (slow)")
    args = ap.parse_args()
    full = table(args.rows, args.cols)
    holey = full.mask(np.random.default_rng(1).random(full.shape) < args.frac)
    holey = pd.DataFrame({c: pd.Categorical(holey[c], categories=full[c].cat.categories) for c in full})
    t_full = timed(lambda: OrderedAveraging(full, max_parents=args.k).arc_posteriors(), args.repeat)
    t_keep = timed(lambda: OrderedAveraging(holey, max_parents=args.k, missing="keep").arc_posteriors(),
                   args.repeat)
    avg = OrderedAveraging(holey, max_parents=args.k, missing="keep")
    print(f"{args.rows} rows x {args.cols} variables, k={args.k}, {avg.n_families:,} families, "
          f"{args.frac:.0%} missing: complete {t_full * 1e3:.2f} ms, missing='keep' {t_keep * 1e3:.2f} ms, "
          f"ratio {t_keep / t_full:.1f}x ({load()})", flush=True)
    if args.alarm:
        net = bx.networks.load("alarm")
        df = net.sample(5000, random_state=0)
        order = list(nx.topological_sort(net.dag))
        t0 = time.perf_counter()
        ref = OrderedAveraging(df, order=order, max_parents=3).arc_posteriors()
        t_ref = time.perf_counter() - t0
        warm = df.iloc[:400].mask(np.random.default_rng(2).random((400, df.shape[1])) < 0.1)
        for missing in ("keep", "em"):                  # compile the walks
            OrderedAveraging(warm, order=order, max_parents=3, missing=missing, max_iter=1)
        for frac in (0.1, 0.3):
            gap = df.mask(np.random.default_rng(1).random(df.shape) < frac)
            sub = df.iloc[: int(len(df) * (1 - frac))]
            floor = (OrderedAveraging(sub, order=order, max_parents=3).arc_posteriors() - ref).abs().to_numpy()
            print(f"\nALARM 5,000 rows, {frac:.0%} of cells missing ({load()})", flush=True)
            print(f"  floor, the complete data's first {len(sub):,} rows: max |arc posterior diff| "
                  f"{floor.max():.3f}, {int((floor > 0.05).sum())} arcs off by > 0.05, sum {floor.sum():.2f}",
                  flush=True)
            for missing in ("keep", "em"):
                t0 = time.perf_counter()
                avg = OrderedAveraging(gap, order=order, max_parents=3, missing=missing, random_state=0)
                post = avg.arc_posteriors()
                secs = time.perf_counter() - t0
                diff = (post - ref).abs().to_numpy()
                extra = ""
                if avg.em is not None:
                    extra = (f"; {avg.em['n_iter']} structural-EM iterations (parameter-EM steps "
                             f"{avg.em['em_steps']}), converged {avg.em['converged']}, observed-data "
                             f"log-likelihood {avg.em['log_likelihood']:.1f} (per iteration "
                             f"{[round(x, 1) for x in avg.em['log_likelihoods']]}), {avg.em['n_draws']} draws, "
                             f"{avg.em['sampled_rows']} rows Gibbs-sampled")
                print(f"  missing={missing!r}: max |arc posterior diff| {diff.max():.3f}, "
                      f"{int((diff > 0.05).sum())} arcs off by > 0.05, sum {diff.sum():.2f}; {secs:.1f} s "
                      f"(complete {t_ref:.1f} s){extra} ({load()})", flush=True)
            if args.former:
                old = (node_rows_posteriors(gap, order, 3).loc[ref.index, ref.columns] - ref).abs().to_numpy()
                print(f"  former rule (node and candidates observed): max {old.max():.3f}, "
                      f"{int((old > 0.05).sum())} arcs off by > 0.05", flush=True)


if __name__ == "__main__":
    main()
