"""Exact inference on ALARM, INSURANCE and HAILFINDER: ``BayesNet.posteriors`` against
pyAgrum's LazyPropagation in the same process.

Run:  python benchmarks/bench_inference.py

One query is what an app does on a click: set the evidence and read every node's
marginal. bnexplore compiles its junction tree on the first call (timed apart) and
keeps it; the pyAgrum query builds a LazyPropagation engine each time (its usual use
for a new evidence set), which includes its own compilation.
Target (issue 36): a query on ALARM answers well within 1 s.
"""
from __future__ import annotations

import os
import time

import numpy as np

import bnexplore as bx
from _common import best_time


def main() -> None:
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores", flush=True)
    try:
        import pyagrum as gum
    except ImportError:
        gum = None
        print("pyAgrum not installed: bnexplore figures only (pip install pyagrum)")
    for name in ("alarm", "insurance", "hailfinder"):
        bn = bx.networks.load(name)
        row = bn.sample(1, random_state=1).iloc[0]
        ev = {v: str(row[v]) for v in bn.nodes[-5:]}
        t = time.perf_counter()
        bn.posteriors({})
        compile_s = time.perf_counter() - t
        ours = best_time(lambda: bn.posteriors(ev), repeat=20)
        line = f"{name} ({len(bn)} nodes, 5 observed): compile {compile_s * 1000:.1f} ms"
        if gum is None:
            print(f"{line}; query bnexplore {ours * 1000:.2f} ms", flush=True)
            continue
        g = bn.to_pyagrum()

        def peer():
            ie = gum.LazyPropagation(g)
            ie.setEvidence(ev)
            ie.makeInference()
            return [ie.posterior(v).toarray() for v in bn.nodes]

        theirs = best_time(peer, repeat=20)
        ours_post = bn.posteriors(ev)
        err = max(float(np.abs(np.asarray(a) - ours_post[v]).max()) for a, v in zip(peer(), bn.nodes))
        print(f"{line}; query (all marginals) bnexplore {ours * 1000:.2f} ms, pyAgrum LazyPropagation "
              f"{theirs * 1000:.2f} ms, ratio {theirs / ours:.2f}x (>1: bnexplore faster); "
              f"max |difference| {err:.1e}", flush=True)


def averaged() -> None:
    """The model-averaged query of an "ask the averaged model" page on ALARM data: the
    time to learn (GTT, the average, the sampled structures' junction trees) and of one
    query (GTT, the average and the spread over the sampled structures)."""
    df = bx.networks.load("alarm").sample(1000, random_state=0)
    ev = {"HR": "HIGH", "BP": "LOW"}
    for method in ("order", "mcmc"):
        t = time.perf_counter()
        am = bx.averaging.ask_averaged_model(df, max_parents=2, method=method, random_state=0)
        learn = time.perf_counter() - t
        query = best_time(lambda: am.posteriors(ev), repeat=5)
        print(f"ask_averaged_model(alarm 1000 rows, method={method!r}): learn {learn:.1f} s, one query "
              f"{query * 1000:.0f} ms over {len(am.models)} distinct structures + GTT"
              f"{' + M* (n=' + str(am.extra['n']) + ')' if am.averaged is not None else ''}; "
              f"load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
    averaged()
