"""Castelo & Siebes: models taken into consideration by greedy vs incremental selection.

``castelo_siebes_alarm`` (Table 1, Figures 4 and 8): on ``n_rows`` rows sampled from
ALARM, plain greedy selection (add / remove, the true topological order) against the
incremental search from clusters of size 4, 5 and 6 found by the hierarchy (``hc``)
and by two random groupings; one row per method with ``q``, the reduction ratio
``q_greedy / q`` and whether the final model equals the greedy one.

``castelo_siebes_honeycomb`` (Figures 5-7): a 48-node honeycombed network whose CPTs
are drawn afresh for every seed, ``n_rows`` rows each; the clusters of the hierarchy
(cluster size 4) against the honeycomb cells (purity, share of clusters that induce a
connected part of the network) and the q ratios of the hierarchy and of random groups.

Run: ``bnexplore run castelo_siebes_alarm --size full`` (see docs/reproduction/castelo_siebes.md).
"""
from __future__ import annotations

from .registry import register

__all__ = ["alarm_trial", "honeycomb_trial"]


def _compare(ls, order, greedy, cluster_sizes, random_groupings, extra=None):
    from bnexplore.clustering import incremental_search

    rows = []
    base = dict(extra or {})
    gset = set(greedy.dag.edges)
    rows.append({**base, "method": "greedy", "cs": 0, "grouping": -1, "q": greedy.q,
                 "ratio": 1.0, "n_steps": len(greedy.q_trace), "n_subspaces": 1,
                 "same_model": True, "score_diff": 0.0})
    for cs in cluster_sizes:
        runs = [("hc", -1)] + [("random", g) for g in random_groupings]
        for strategy, grouping in runs:
            inc = incremental_search(score=ls, cluster_size=int(cs), strategy=strategy,
                                     seed=max(grouping, 0), order=order)
            rows.append({**base, "method": strategy, "cs": int(cs), "grouping": grouping,
                         "q": inc.q, "ratio": greedy.q / inc.q if inc.q else float("inf"),
                         "n_steps": len(inc.q_trace), "n_subspaces": len(inc.subspaces),
                         "same_model": set(inc.dag.edges) == gset,
                         "score_diff": float(inc.score - greedy.score)})
    return rows


def alarm_trial(n_rows: int, seed: int, network: str = "alarm") -> list[dict]:
    """Table 1: greedy q against incremental q (hierarchy and random groups) on ALARM.

    Examples
    --------
    >>> rows = alarm_trial(n_rows=300, seed=0, network="asia")
    >>> rows[0]["method"], sorted({r["method"] for r in rows})
    ('greedy', ['greedy', 'hc', 'random'])
    """
    import networkx as nx

    from bnexplore import networks
    from bnexplore.clustering import greedy_search
    from bnexplore.scores import LocalScore

    bn = networks.load(network)
    df = bn.sample(int(n_rows), seed=seed)
    order = list(nx.topological_sort(bn.dag))
    ls = LocalScore(df, prior="K2")
    greedy = greedy_search(score=ls, order=order)
    true = set(bn.dag.edges)
    rows = _compare(ls, order, greedy, (4, 5, 6), (0, 1))
    for r in rows:
        r["greedy_missing_arcs"] = len(true - set(greedy.dag.edges))
        r["greedy_extra_arcs"] = len(set(greedy.dag.edges) - true)
    return rows


def honeycomb_trial(n_rows: int, cluster_size: int, dependence: float, seed: int,
                    n_cells: int = 8) -> list[dict]:
    """Figures 5-7: hierarchy clusters vs honeycomb cells and q ratios, fresh CPTs per seed.

    Examples
    --------
    >>> rows = honeycomb_trial(n_rows=500, cluster_size=4, dependence=0.6, seed=0, n_cells=2)
    >>> 0 < rows[0]["purity"] <= 1
    True
    """
    import networkx as nx
    import numpy as np

    from bnexplore.clustering import (cluster_purity, connected_clusters, greedy_search, hierarchy,
                                      honeycomb_network, incremental_strategy)
    from bnexplore.scores import LocalScore

    rng = np.random.default_rng(seed)
    bn, cells = honeycomb_network(n_cells=int(n_cells), seed=rng, dependence=float(dependence))
    df = bn.sample(int(n_rows), seed=rng)
    order = list(nx.topological_sort(bn.dag))
    strat = incremental_strategy(hierarchy(df), int(cluster_size))
    extra = {
        "purity": cluster_purity(strat, cells),
        "connected": float(np.mean(connected_clusters(strat, bn.dag))),
        "n_clusters": len(strat),
        "cluster_sizes": " ".join(str(len(c)) for c in strat),
        "clusters": " | ".join(",".join(c) for c in strat),
    }
    ls = LocalScore(df, prior="K2")
    greedy = greedy_search(score=ls, order=order)
    extra["greedy_missing_arcs"] = len(set(bn.dag.edges) - set(greedy.dag.edges))
    return _compare(ls, order, greedy, (int(cluster_size),), (0, 1), extra)


register(
    "castelo_siebes_alarm",
    alarm_trial,
    grid={"n_rows": [10000]},
    reduced_grid={"n_rows": [2000]},
    seeds=(0, 1, 2),
    reduced_seeds=(0,),
    description="Castelo & Siebes Table 1: q of greedy vs incremental selection (hierarchy, "
                "random groups; cluster sizes 4-6) on ALARM with the true order",
)

register(
    "castelo_siebes_honeycomb",
    honeycomb_trial,
    grid={"n_rows": [10000], "cluster_size": [4], "dependence": [0.0, 0.6]},
    reduced_grid={"n_rows": [2000], "cluster_size": [4], "dependence": [0.6]},
    seeds=(0, 1, 2),
    reduced_seeds=(0,),
    description="Castelo & Siebes Figures 5-7: hierarchy clusters vs the cells of a 48-node "
                "honeycomb network (fresh CPTs per sample) and q ratios",
)
