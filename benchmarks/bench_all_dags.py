"""Benchmark of exact averaging over every DAG (issue 35) and of partition MCMC.

1. :class:`bnexplore.averaging.AllDAGs` (uniform prior over DAGs with at most k = 3
   parents, K2): N = 16 binary variables of a random network, 1,000 rows, every arc
   posterior, family scores included (target 4 s on the 2-core machine); N = 18 (target
   60 s); N = 20 runs or is refused before allocating.
2. Peer in the same process: sumu's ``aps`` (Viinikka et al. 2020), which computes every
   parent set's posterior under the same structure-modular (uniform over DAGs) prior; it
   gets our family scores as its input (sets above k as -inf), so both compute the same
   numbers: the largest difference of the arc posteriors and the time ratio are printed.
   When sumu is not installed the line says so.
3. The numerical error: the two recursions (sinks, sources) against each other, and the
   arcs' cancellation magnitude ``(K+ + K-) / Z``.
4. :func:`bnexplore.averaging.partition_mcmc` on ALARM (37 nodes, 10,000 rows, k = 3):
   time, R-hat and bulk ESS per arc, and whether it converged (R-hat <= 1.05 on every arc).

Times are wall clock and CPU time (all threads) after a warm-up run (numba compilation is
not timed); the load average is printed with each figure: the machine is shared.

Run: ``python benchmarks/bench_all_dags.py [--sizes 16 18 20] [--mcmc-iter 200000]``
"""
from __future__ import annotations

import argparse
import os
import time

import numba
import numpy as np


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def _timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - t, time.process_time() - c, out


def _sumu_weights(ad) -> np.ndarray:
    """AllDAGs' family log weights as sumu's (n, 2^(n-1)) table (-inf above k)."""
    fam = ad._fam
    n = len(ad.names)
    W = np.full((n, 1 << (n - 1)), -np.inf)
    for v in range(n):
        for f in range(fam.offset[v], fam.offset[v + 1]):
            m = 0
            for u in fam.members[f, :fam.size[f]]:
                m |= 1 << int(u if u < v else u - 1)
            W[v, m] = fam.log_weight[f]
    return W


def _sumu_arcs(W: np.ndarray) -> np.ndarray:
    import sumu

    n = W.shape[0]
    post = sumu.aps(W, as_dict=True, normalize=True)
    arc = np.zeros((n, n))
    for v, sets in post.items():
        for ps, lp in sets.items():
            for u in ps:
                arc[u, v] += np.exp(lp)
    return arc


def exact(sizes, k: int = 3) -> None:
    import bnexplore as bx
    from bnexplore.averaging import AllDAGs, all_dags_cells
    from bnexplore.data import MemoryBudgetError, get_table_budget

    try:
        import sumu  # noqa: F401
        have_sumu = True
    except ImportError:
        have_sumu = False
        print("peer sumu is not installed (pip install sumu failed or was not run): no peer figures")
    warm = bx.networks.random_network(n_nodes=8, max_parents=3, random_state=0).sample(200, random_state=0)
    AllDAGs(warm, max_parents=k).arc_posteriors()
    for n in sizes:
        df = bx.networks.random_network(n_nodes=n, max_parents=3, random_state=0).sample(1000, random_state=0)
        cells = all_dags_cells(n)
        load = _load()
        try:
            t, c, (ad, post) = _timed(lambda: (lambda a: (a, a.arc_posteriors()))(AllDAGs(df, max_parents=k)))
        except MemoryBudgetError as exc:
            print(f"AllDAGs N={n}, k={k}: refused before allocating ({str(exc).split(', over')[0]}; budget "
                  f"{get_table_budget():,} cells) [{load}]")
            continue
        target = {16: 4.0, 18: 60.0}.get(n)
        verdict = "" if target is None else f" [target {target:.0f} s: {'met' if t < target else 'NOT met'} wall]"
        print(f"AllDAGs N={n} binary, 1,000 rows, k={k}: {ad.n_families:,} families, log evidence "
              f"{ad.log_evidence:.3f}, all {n * (n - 1)} arc posteriors in {t:.2f} s wall, {c:.2f} s CPU "
              f"(tables {cells * 8 / 2**20:.0f} MiB, {numba.get_num_threads()} threads){verdict} [{load}]")
        print(f"  error: |Z(V) - R({{}})| / Z(V) = {ad.log_evidence_error:.1e} (two recursions), largest "
              f"condition {ad.condition:.1f}, largest arc cancellation (K+ + K-)/Z "
              f"{ad.arc_cancellation().to_numpy().max():.1f}; prior: {ad.graph_prior}")
        if have_sumu and n <= 18:
            W = _sumu_weights(ad)
            load = _load()
            ts, cs, arc = _timed(lambda: _sumu_arcs(W))
            diff = np.abs(arc - post.to_numpy()).max()
            print(f"  sumu.aps (same family scores, same prior, parent-set posteriors summed to arcs): "
                  f"{ts:.2f} s wall, {cs:.2f} s CPU, scores excluded; largest arc difference {diff:.1e}; "
                  f"ratio sumu / bnexplore {ts / t:.1f}x wall, {cs / c:.1f}x CPU [{load}]")


def mcmc(n_iter: int) -> None:
    import bnexplore as bx

    alarm = bx.networks.load("alarm").sample(10_000, random_state=0)
    bx.averaging.partition_mcmc(alarm.iloc[:500, :8], max_parents=3, n_iter=2_000, n_chains=4)  # warm-up
    load = _load()
    t, c, res = _timed(lambda: bx.averaging.partition_mcmc(alarm, max_parents=3, n_iter=n_iter, n_chains=4,
                                                           random_state=0))
    p = len(res.names)
    off = ~np.eye(p, dtype=bool)
    rh, es = res.rhat.to_numpy()[off], res.ess.to_numpy()[off]
    print(f"partition MCMC, ALARM 37 nodes, 10,000 rows, k=3, 4 chains x {n_iter:,} iterations: {t:.1f} s wall, "
          f"{c:.1f} s CPU; acceptance {res.acceptance_rate.mean():.3f}; per-arc R-hat median {np.median(rh):.3f}, "
          f"max {rh.max():.4g} ({int((rh > 1.05).sum())} of {rh.size} arcs above 1.05); per-arc bulk ESS min "
          f"{es.min():.0f}, median {np.median(es):.0f}; log-score R-hat {res.log_score_rhat:.3f} [{load}]")
    print(f"  {res.convergence}; prior: {res.graph_prior}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[16, 18, 20])
    ap.add_argument("--mcmc-iter", type=int, default=200_000)
    ap.add_argument("--skip-mcmc", action="store_true")
    a = ap.parse_args()
    exact(a.sizes)
    if not a.skip_mcmc:
        mcmc(a.mcmc_iter)
