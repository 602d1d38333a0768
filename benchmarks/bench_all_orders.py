"""Benchmark of averaging over every node order (issue 20).

1. Exact DP over all orders (:class:`bnexplore.averaging.AllOrders`): N = 20 binary
   variables (a random network, in-degree <= 3), 1,000 rows, k = 3, the log evidence
   and every arc posterior, family scores included.  Target: < 10 s on the 2-core
   machine (moonshot: 2 s).
2. N = 25: must run within the memory guard or be refused before allocating; we
   report which, the time to the answer and the process's peak memory growth.
3. Order MCMC (:func:`bnexplore.averaging.order_mcmc`) on ALARM (37 nodes), 10,000
   sampled rows, k = 3, 100,000 iterations per chain, 4 chains (400,000 proposed
   moves), family-score table included.  Target: < 60 s.  Also the same with one
   chain, and the table alone.

Times are wall clock, best of ``--repeat`` runs after one warm-up run (numba
compilation and the first-call imports are not timed).

``--passes N`` instead times each pass of the exact DP on N variables (family scores,
local order scores, forward and backward sums, arc posteriors) with the numba threads
of this process: run it with ``NUMBA_NUM_THREADS=1`` and ``=2`` (and more where a
machine has them) for the speed-up of each pass.

Run: ``python benchmarks/bench_all_orders.py [--repeat 3] [--passes 20]``
"""
from __future__ import annotations

import argparse
import os
import resource
import time

import numba


def _best(fn, repeat):
    """(best wall time, CPU time of that run over all threads, result of the last run)."""
    best, cpu, out = float("inf"), 0.0, None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        if time.perf_counter() - t < best:
            best, cpu = time.perf_counter() - t, time.process_time() - c
    return best, cpu, out


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(repeat: int = 3) -> None:
    import bnexplore as bx
    from bnexplore.averaging import AllOrders, all_orders_cells, order_mcmc

    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, "
          f"{numba.get_num_threads()} numba threads")
    # ---- 1. exact DP, N = 20
    bn = bx.networks.random_network(n_nodes=20, max_parents=3, random_state=0)
    df = bn.sample(1000, random_state=0)

    def exact():
        ao = AllOrders(df, max_parents=3)
        return ao, ao.arc_posteriors()

    exact()  # warm-up: compilation
    t, cpu, (ao, post) = _best(exact, repeat)
    cells = all_orders_cells(20)
    print(f"exact DP over all orders, N=20 binary, 1,000 rows, k=3: {ao.n_families:,} families, "
          f"log evidence {ao.log_evidence:.3f}, all {20 * 19} arc posteriors in {t:.2f} s wall, "
          f"{cpu:.2f} s CPU (best of {repeat}; tables {cells * 8 / 2**20:.0f} MiB) "
          f"[target < 10 s: {'met' if t < 10 else 'NOT met'}; moonshot 2 s: {'met' if t < 2 else 'not met'}]")
    # ---- 2. N = 25: the guard
    n25()
    # ---- 3. order MCMC on ALARM
    alarm = bx.networks.load("alarm").sample(10_000, random_state=0)
    order_mcmc(alarm.iloc[:500, :8], max_parents=3, n_iter=2_000, n_chains=4, random_state=0)  # warm-up
    t_tab, c_tab, _ = _best(lambda: order_mcmc(alarm, max_parents=3, n_iter=1, n_chains=1, random_state=0), 1)
    t4, c4, res = _best(lambda: order_mcmc(alarm, max_parents=3, n_iter=100_000, n_chains=4, random_state=0), 1)
    t1, c1, _ = _best(lambda: order_mcmc(alarm, max_parents=3, n_iter=100_000, n_chains=1, random_state=0), 1)
    top = res.summary().head(3)
    print(f"order MCMC, ALARM 37 nodes, 10,000 rows, k=3: family table ({37 * 7807:,} families) "
          f"{t_tab:.2f} s ({c_tab:.2f} s CPU); 4 chains x 100,000 iterations {t4:.2f} s in all ({c4:.2f} s CPU) "
          f"[target < 60 s: {'met' if t4 < 60 else 'NOT met'}]; 1 chain x 100,000 {t1:.2f} s ({c1:.2f} s CPU); "
          f"acceptance {res.acceptance_rate.mean():.2f}, R-hat max {res.rhat_max:.3f}, "
          f"log-score ESS {res.log_score_ess:.0f}")
    print("  most probable arcs: " + "; ".join(
        f"{r.parent}->{r.child} {r.posterior:.3f} +- {r.stderr:.3f}" for r in top.itertuples()))


def n25() -> None:
    """N = 25, k = 3, 1,000 rows: within the budget (target 60 s and 8 GiB on the 2-core
    24 GiB machine) or refused before allocating; wall, CPU and peak resident memory."""
    import bnexplore as bx
    from bnexplore.averaging import AllOrders
    from bnexplore.data import MemoryBudgetError, get_table_budget

    df25 = bx.networks.random_network(n_nodes=25, max_parents=3, random_state=0).sample(1000, random_state=0)
    before = _peak_mib()
    load = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        ao25 = AllOrders(df25, max_parents=3)
        ao25.arc_posteriors()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        peak = _peak_mib()
        verdict = (f"ran in {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {peak / 1024:.2f} GiB "
                   f"[target 60 s and 8 GiB: {'met' if wall < 60 and peak < 8192 else 'NOT met'}]")
    except MemoryBudgetError as exc:
        verdict = (f"refused before allocating in {time.perf_counter() - t0:.4f} s "
                   f"({str(exc).split(', over')[0]})")
    print(f"exact DP, N=25 (budget {get_table_budget():,} cells, {numba.get_num_threads()} numba threads): "
          f"{verdict}; peak memory grew {_peak_mib() - before:.0f} MiB; load {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after", flush=True)


def passes(n: int, repeat: int = 3) -> None:
    """Wall time of each pass of the exact DP on ``n`` variables (best of ``repeat``)."""
    import numpy as np

    import bnexplore as bx
    from bnexplore import _all_orders, _order_dp
    from bnexplore.data import as_discrete

    data = as_discrete(bx.networks.random_network(n_nodes=n, max_parents=3, random_state=0).sample(1000, random_state=0))
    _all_orders.AllOrders(data.to_frame().iloc[:, :8], max_parents=3).arc_posteriors()  # warm-up
    M = 1 << (n - 1)
    table = _order_dp.big_table  # as dp_tables allocates them
    alpha_m, alpha_e = table((n, M)), table((n, M), np.int32)
    L_m, L_e = table(1 << n), table(1 << n, np.int64)
    R_m, R_e = table(1 << n), table(1 << n, np.int64)
    box = {}
    steps = {
        "family scores": lambda: box.update(fam=_all_orders._families_all(data, 3, "K2", 1.0, None, 1 << 40,
                                                                          "bench")[0]),
        "local order scores": lambda: _order_dp._alpha_tables(box["fam"], n, alpha_m, alpha_e),
        "forward and backward sums": lambda: _order_dp._forward_backward(n, alpha_m, alpha_e, L_m, L_e, R_m, R_e),
        "arc posteriors": lambda: _order_dp.dp_arc_posteriors(box["fam"], n, L_m, L_e, R_m, R_e),
    }
    total = 0.0
    for what, fn in steps.items():
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t, cpu, _ = _best(fn, repeat)
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        total += t
        print(f"N={n}, k=3, {numba.get_num_threads()} numba threads: {what} {t:.2f} s wall, {cpu:.2f} s CPU "
              f"(all {repeat} runs: {r1.ru_utime - r0.ru_utime:.2f} s user, {r1.ru_stime - r0.ru_stime:.2f} s "
              f"system, {r1.ru_minflt - r0.ru_minflt:,} page faults; load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"N={n}, {numba.get_num_threads()} numba threads: all passes {total:.2f} s", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--passes", type=int, default=None, metavar="N")
    ap.add_argument("--n25", action="store_true", help="only the N = 25 case")
    args = ap.parse_args()
    if args.n25:
        n25()
    elif args.passes:
        passes(args.passes, args.repeat)
    else:
        main(args.repeat)
