"""Forward sampling of ALARM: bnexplore.BayesNet.sample vs pgmpy's BayesianModelSampling.

Run:  python benchmarks/bench_sampling.py [--rows 10000] [--repeats 5]

Both run in this process on the same network (parsed from the bundled alarm.bif);
pgmpy is asked for one job and no progress bar so that the comparison is serial.
Also times log_prob and predict_proba on the same rows for reference.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import bnexplore as bx
import bnexplore.networks  # noqa: F401  (import cost is not part of the timings)


def best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    n = args.rows

    t = time.perf_counter()
    bn = bx.networks.load("alarm")
    t_load = time.perf_counter() - t
    bn.sample(10, random_state=0)  # warm-up (compiles sampling tables)
    t_ours = best_of(lambda: bn.sample(n, random_state=0), args.repeats)
    df = bn.sample(n, random_state=0)
    t_lp = best_of(lambda: bn.log_prob(df), args.repeats)
    t_pp = best_of(lambda: bn.predict_proba(df, "CATECHOL"), args.repeats)
    print(f"ALARM ({len(bn)} nodes), {n:,} rows, best of {args.repeats}")
    print(f"  bnexplore read_bif        {t_load * 1e3:9.1f} ms")
    print(f"  bnexplore sample          {t_ours * 1e3:9.1f} ms")
    print(f"  bnexplore log_prob        {t_lp * 1e3:9.1f} ms")
    print(f"  bnexplore predict_proba   {t_pp * 1e3:9.1f} ms")

    try:
        from pgmpy.readwrite import BIFReader
        from pgmpy.sampling import BayesianModelSampling
    except ImportError:
        print("  pgmpy not installed: no comparison")
        return
    import logging
    logging.getLogger("pgmpy").setLevel(logging.ERROR)
    model = BIFReader(str(bx.networks._NETWORK_DIR / "alarm.bif")).get_model()
    sampler = BayesianModelSampling(model)

    def pg():
        return sampler.forward_sample(size=n, seed=0, show_progress=False, n_jobs=1)

    pg_reps = max(1, min(args.repeats, 3))
    pg()  # warm-up
    t_pg = best_of(pg, pg_reps)
    print(f"  pgmpy forward_sample      {t_pg * 1e3:9.1f} ms  (best of {pg_reps}, n_jobs=1)")
    print(f"  ratio pgmpy / bnexplore   {t_pg / t_ours:9.1f} x")

    # sanity: the two samplers agree on marginals
    ours = bn.sample(n, random_state=1)
    theirs = pg()
    worst = max(float(np.abs(ours[v].value_counts(normalize=True).sort_index()
                             - theirs[v].astype(str).value_counts(normalize=True)
                             .reindex(ours[v].cat.categories, fill_value=0).sort_index()).max())
                for v in bn.nodes)
    print(f"  largest marginal-frequency difference between the two samples: {worst:.4f}")


if __name__ == "__main__":
    main()
