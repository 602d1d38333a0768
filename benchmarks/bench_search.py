"""Greedy hill climbing (add / remove / reverse, in-degree <= 3) on 1,000, 10,000 and
100,000 ALARM rows against pybnesian's GreedyHillClimbing (C++, BDe = BDeu, ess 1), in
the same process from the same DataFrame; and our GTT and hill climbing against pgmpy's
HillClimbSearch (K2) on 10,000 rows.

Both final networks are scored with our exact score (pgmpy's K2 mis-scores unobserved
parent configurations, so its own number is not comparable); "same final score or
better" is checked and printed.  Times are the best of ``--repeat`` interleaved runs
from the DataFrame (data conversion included on both sides), CPU time
(``time.process_time``, all threads) and wall time, each the mean of as many calls as
make about 10,000 rows (10 at 1,000 rows); the load average is
printed with each figure, and the share of our time that goes into turning the
DataFrame into coded data.  A peer that is not installed is skipped with a message.

Run: python benchmarks/bench_search.py [--rows 1000,10000,100000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import networkx as nx

sys.path.insert(0, str(Path(__file__).parent))
from _common import report  # noqa: E402

import bnexplore as bx  # noqa: E402
from bnexplore.scores import LocalScore  # noqa: E402
from bnexplore.search import greedy_thick_thin, hill_climb  # noqa: E402


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _cpu(fn):
    """CPU seconds of one call (``time.process_time``: every thread of the process; on a
    shared machine it moves less with the load than the wall time)."""
    c0 = time.process_time()
    out = fn()
    return time.process_time() - c0, out


def _score_of(judge: LocalScore, names, arcs) -> float:
    g = nx.DiGraph()
    g.add_nodes_from(names)
    g.add_edges_from(arcs)
    return judge.total(g)


def vs_pybnesian(rows, repeat):
    try:
        import pybnesian as pbn
    except ImportError:
        print("pybnesian: skipped (not installed: pip install 'bnexplore[bench]')")
        return
    alarm = bx.networks.load("alarm")
    hill_climb(alarm.sample(300, random_state=1), prior="BDeu", max_parents=3)   # warm-up: compilation
    for n in rows:
        df = alarm.sample(n, random_state=0).astype("category")
        names = list(df.columns)
        t_ours = t_peer = t_conv = c_ours = c_peer = float("inf")
        calls = max(1, 10_000 // n)            # calls per timing: a few ms of CPU at least

        def ours_fn():
            return [hill_climb(df, prior="BDeu", ess=1.0, max_parents=3) for _ in range(calls)][-1]

        def peer_fn():
            return [pbn.GreedyHillClimbing().estimate(pbn.ArcOperatorSet(), pbn.BDe(df, 1.0), pbn.DiscreteBN(names),
                                                      max_indegree=3) for _ in range(calls)][-1]

        for _ in range(repeat):
            t, ours = _timed(ours_fn)
            t_ours = min(t_ours, t / calls)
            c_ours = min(c_ours, _cpu(ours_fn)[0] / calls)
            t_conv = min(t_conv, _timed(lambda: bx.data.as_discrete(df))[0])
            t, model = _timed(peer_fn)
            t_peer = min(t_peer, t / calls)
            c_peer = min(c_peer, _cpu(peer_fn)[0] / calls)
        s_peer = _score_of(LocalScore(df, prior="BDeu", ess=1.0), names, model.arcs())
        verdict = "same or better" if ours.score >= s_peer - 1e-6 * abs(s_peer) else "WORSE"
        print(f"  BDeu score: bnexplore {ours.score:.2f} ({ours.dag.number_of_edges()} arcs), pybnesian "
              f"{s_peer:.2f} ({len(model.arcs())} arcs): {verdict} ({ours.score - s_peer:+.2f})")
        load = os.getloadavg()[0]
        report(f"hill climbing, {n:,} ALARM rows (BDeu, in-degree <= 3), CPU time (load {load:.1f})",
               c_ours, c_peer, "pybnesian")
        report(f"hill climbing, {n:,} ALARM rows (BDeu, in-degree <= 3), wall time (load {load:.1f})",
               t_ours, t_peer, "pybnesian")
        print(f"  of which DataFrame -> DiscreteData (validation and coding) {t_conv:.4g} s: the search "
              f"alone {t_ours - t_conv:.4g} s, {t_peer / (t_ours - t_conv):.1f}x pybnesian's whole call")


def vs_pgmpy():
    try:
        from pgmpy.estimators import HillClimbSearch, K2
    except ImportError:
        print("pgmpy: skipped (not installed)")
        return
    import logging
    logging.getLogger("pgmpy").setLevel(logging.ERROR)
    df = bx.networks.load("alarm").sample(10_000, random_state=0)
    greedy_thick_thin(df.iloc[:200], max_parents=3)  # JIT warm-up on a small slice
    t_gtt, gtt = _timed(lambda: greedy_thick_thin(df, prior="K2", max_parents=3))
    t_hc, hc = _timed(lambda: hill_climb(df, prior="K2", max_parents=3))
    t_peer, model = _timed(lambda: HillClimbSearch(df.astype(str)).estimate(
        scoring_method=K2(df.astype(str)), max_indegree=3, show_progress=False))
    s_peer = _score_of(LocalScore(df, prior="K2"), list(df.columns), model.edges())
    print(f"K2 score: GTT {gtt.score:.1f} ({gtt.dag.number_of_edges()} arcs), "
          f"hill climbing {hc.score:.1f} ({hc.dag.number_of_edges()} arcs), "
          f"pgmpy HillClimbSearch {s_peer:.1f} ({model.number_of_edges()} arcs)")
    report("GTT on ALARM 10k (K2, k<=3)", t_gtt, t_peer, "pgmpy HillClimbSearch")
    report("hill climbing on ALARM 10k (K2, k<=3)", t_hc, t_peer, "pgmpy HillClimbSearch")
    print(f"score difference GTT - pgmpy: {gtt.score - s_peer:+.1f}; hill climbing - pgmpy: {hc.score - s_peer:+.1f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-pgmpy", action="store_true", help="skip the pgmpy comparison")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    vs_pybnesian([int(x) for x in args.rows.split(",")], args.repeat)
    if not args.no_pgmpy:
        vs_pgmpy()


if __name__ == "__main__":
    main()
