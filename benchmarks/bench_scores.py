"""LocalScore per family against pgmpy's BDeu/K2 local_score, same process, same families.

10,000 ALARM rows, random parent sets of size 0-3. Our scorer runs uncached, so every
call counts the data; the batch figure scores the same families in one kernel call.

Run: python benchmarks/bench_scores.py [--families 400]
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import report  # noqa: E402

import bnexplore as bx  # noqa: E402
from bnexplore.scores import LocalScore  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--families", type=int, default=400)
    ap.add_argument("--rows", type=int, default=10_000)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    from pgmpy.estimators import BDeu, K2

    df = bx.networks.load("alarm").sample(args.rows, random_state=0)
    names = list(df.columns)
    rng = np.random.default_rng(0)
    fams = []
    for _ in range(args.families):
        child = names[rng.integers(len(names))]
        k = int(rng.integers(0, 4))
        fams.append((child, list(rng.choice([x for x in names if x != child], size=k, replace=False))))

    ours = LocalScore(df, prior="BDeu", ess=1.0, cache=False)
    ours.score(*fams[0])  # JIT warm-up (compiled code is cached on disk after the first run)
    t0 = time.perf_counter()
    mine = [ours.score(c, p) for c, p in fams]
    t_ours = (time.perf_counter() - t0) / len(fams)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = BDeu(df, equivalent_sample_size=1.0)
        peer.local_score(*fams[0])
        t0 = time.perf_counter()
        theirs = [peer.local_score(c, p) for c, p in fams]
        t_peer = (time.perf_counter() - t0) / len(fams)
    err = max(abs(a - b) / abs(b) for a, b in zip(mine, theirs))
    print(f"max relative difference vs pgmpy BDeu: {err:.2e}")
    report("BDeu local score per family", t_ours * 1e6, t_peer * 1e6, "pgmpy", unit="us")

    k2 = LocalScore(df, prior="K2", cache=False)
    k2.score(*fams[0])
    t0 = time.perf_counter()
    for c, p in fams:
        k2.score(c, p)
    t_k2 = (time.perf_counter() - t0) / len(fams)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pk2 = K2(df)
        t0 = time.perf_counter()
        for c, p in fams:
            pk2.local_score(c, p)
        t_pk2 = (time.perf_counter() - t0) / len(fams)
    report("K2 local score per family", t_k2 * 1e6, t_pk2 * 1e6, "pgmpy", unit="us")

    # batch: all families of one child in one parallel kernel call
    by_child = {}
    for c, p in fams:
        by_child.setdefault(c, []).append(p)
    batch = LocalScore(df, prior="BDeu", ess=1.0, cache=False)
    batch.score_many(fams[0][0], [fams[0][1]])  # JIT warm-up
    t0 = time.perf_counter()
    for c, ps in by_child.items():
        batch.score_many(c, ps)
    t_batch = (time.perf_counter() - t0) / len(fams)
    report("BDeu batch (score_many) per family", t_batch * 1e6, t_peer * 1e6, "pgmpy", unit="us")


if __name__ == "__main__":
    main()
