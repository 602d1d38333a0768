"""Castelo & Siebes: models taken into consideration by greedy vs incremental selection.

``castelo_siebes_alarm`` (Table 1, Figures 4 and 8): on ``n_rows`` rows sampled from
ALARM, plain greedy selection (add / remove, the true topological order) against the
incremental search from clusters of size 4, 5 and 6 found by the hierarchy (``hc``)
and by two random groupings; one row per method with ``q``, the reduction ratio
``q_greedy / q`` and whether the final model equals the greedy one.

``castelo_siebes_honeycomb`` (Figures 5-7): a 48-node honeycombed network whose CPTs
are drawn afresh for every random state, ``n_rows`` rows each; the clusters of the hierarchy
(cluster size 4) against the honeycomb cells (purity, share of clusters that induce a
connected part of the network) and the q ratios of the hierarchy and of random groups.

Each trial takes its replicate's ``random_state`` (an int; ``seed=`` is its deprecated
name).  Run: ``bnexplore run castelo_siebes_alarm --size full`` (see
docs/reproduction/castelo_siebes.md).
"""
from __future__ import annotations

from .registry import register
from .._deprecation import renamed
from .._validation import check_random_state

__all__ = ["alarm_trial", "honeycomb_trial", "greedy_q_trial"]


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
                                     random_state=max(grouping, 0), order=order)
            rows.append({**base, "method": strategy, "cs": int(cs), "grouping": grouping,
                         "q": inc.q, "ratio": greedy.q / inc.q if inc.q else float("inf"),
                         "n_steps": len(inc.q_trace), "n_subspaces": len(inc.subspaces),
                         "same_model": set(inc.dag.edges) == gset,
                         "score_diff": float(inc.score - greedy.score)})
    return rows


@renamed(seed="random_state")
def alarm_trial(n_rows: int, random_state: int, network: str = "alarm") -> list[dict]:
    """Table 1: greedy q against incremental q (hierarchy and random groups) on ALARM.

    Examples
    --------
    >>> rows = alarm_trial(n_rows=300, random_state=0, network="asia")
    >>> rows[0]["method"], sorted({r["method"] for r in rows})
    ('greedy', ['greedy', 'hc', 'random'])
    """
    import networkx as nx

    from bnexplore import networks
    from bnexplore.clustering import greedy_search
    from bnexplore.scores import LocalScore

    bn = networks.load(network)
    df = bn.sample(int(n_rows), random_state=random_state)
    order = list(nx.topological_sort(bn.dag))
    ls = LocalScore(df, prior="K2")
    greedy = greedy_search(score=ls, order=order)
    true = set(bn.dag.edges)
    rows = _compare(ls, order, greedy, (4, 5, 6), (0, 1))
    for r in rows:
        r["greedy_missing_arcs"] = len(true - set(greedy.dag.edges))
        r["greedy_extra_arcs"] = len(set(greedy.dag.edges) - true)
    return rows


@renamed(seed="random_state")
def honeycomb_trial(n_rows: int, cluster_size: int, dependence: float, random_state: int,
                    n_cells: int = 8) -> list[dict]:
    """Figures 5-7: hierarchy clusters vs honeycomb cells and q ratios, fresh CPTs per
    random state.

    Examples
    --------
    >>> rows = honeycomb_trial(n_rows=500, cluster_size=4, dependence=0.6, random_state=0,
    ...                        n_cells=2)
    >>> 0 < rows[0]["purity"] <= 1
    True
    """
    import networkx as nx
    import numpy as np

    from bnexplore.clustering import (cluster_purity, connected_clusters, greedy_search, hierarchy,
                                      honeycomb_network, incremental_strategy)
    from bnexplore.scores import LocalScore

    rng = check_random_state(random_state)
    bn, cells = honeycomb_network(n_cells=int(n_cells), random_state=rng, dependence=float(dependence))
    df = bn.sample(int(n_rows), random_state=rng)
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
    random_states=(0, 1, 2),
    reduced_random_states=(0,),
    description="Castelo & Siebes Table 1: q of greedy vs incremental selection (hierarchy, "
                "random groups; cluster sizes 4-6) on ALARM with the true order",
)

def _penalised_score(df, penalty: str):
    """A :class:`~bnexplore.scores.LocalScore` whose family score is the maximised
    log-likelihood minus a penalty on the free parameters: BIC (``log N / 2`` each) or
    AIC (1 each).

    For a family ``X`` with parents ``Pa`` (``q`` configurations, ``r`` states) and counts
    ``N_jk``: ``sum_jk N_jk log(N_jk / N_j) - c q (r - 1)`` with ``c = log(N) / 2`` (BIC)
    or ``c = 1`` (AIC).  Complete data only; the greedy and K2-style searches call
    ``score_idx``, ``score`` and ``score_many``, which all go through it.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": list("xxyy"), "b": list("uuvv")})
    >>> ls = _penalised_score(df, "AIC")
    >>> round(ls.score("b", ["a"]), 3), round(ls.score("b", []), 3)   # 0 - 2, -4 log 2 - 1
    (-2.0, -3.773)
    """
    import numpy as np

    from bnexplore.scores import LocalScore

    if penalty not in ("BIC", "AIC"):
        raise ValueError(f"penalty must be 'BIC' or 'AIC', got {penalty!r}")

    class PenalisedScore(LocalScore):
        def __init__(self, data):
            super().__init__(data, prior="K2")
            if self.data.missing is not None:
                raise ValueError("the BIC / AIC score of this experiment needs complete data")
            n = self.data.n_rows
            self.prior = penalty
            self._per_parameter = np.log(n) / 2.0 if penalty == "BIC" else 1.0

        def _family(self, c: int, ps) -> float:
            key = 0 * self._cols[c].astype(np.int64)
            q = 1
            for u in ps:                     # mixed-radix key of the parent configuration
                key = key * int(self._arities[u]) + self._cols[u]
                q *= int(self._arities[u])
            r = int(self._arities[c])
            _, n_jk = np.unique(key * r + self._cols[c], return_counts=True)
            _, n_j = np.unique(key, return_counts=True)
            loglik = float((n_jk * np.log(n_jk)).sum() - (n_j * np.log(n_j)).sum())
            return loglik - self._per_parameter * q * (r - 1)

        def score_idx(self, c, ps):
            key = (int(c), tuple(int(u) for u in ps))
            if key not in self._cache:
                self._cache[key] = self._family(*key)
            return self._cache[key]

        def score(self, node, parents=()):
            c = self.data.index(node)
            return self.score_idx(c, tuple(sorted(self.data.index(u) for u in parents)))

        def score_many(self, node, parent_sets):
            return np.array([self.score(node, ps) for ps in parent_sets], dtype=float)

    return PenalisedScore(df)


def _order(dag, kind: str, rng) -> list[str]:
    """A topological order of ``dag``: networkx's ("true"), the lexicographic one ("lex"),
    or a uniformly chosen source at every step ("random")."""
    import networkx as nx

    if kind == "true":
        return list(nx.topological_sort(dag))
    if kind == "lex":
        return list(nx.lexicographical_topological_sort(dag))
    if kind != "random":
        raise ValueError(f"order must be 'true', 'lex' or 'random', got {kind!r}")
    indeg = dict(dag.in_degree())
    ready = sorted(v for v, d in indeg.items() if d == 0)
    out = []
    while ready:
        v = ready.pop(int(rng.integers(len(ready))))
        out.append(v)
        for w in sorted(dag.successors(v)):
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    return out


def _node_by_node(ls, order, allowed, max_parents, tol):
    """K2-style search: each node in turn adds its best predecessor while that improves
    its local score; returns (q, number of arcs).  q counts the improving candidates
    of every step."""
    q, arcs = 0, 0
    for i, v in enumerate(order):
        parents: list[str] = []
        current = ls.score(v, parents)
        while max_parents is None or len(parents) < max_parents:
            cands = [u for u in order[:i] if u not in parents and (u, v) in allowed]
            if not cands:
                break
            gains = ls.score_many(v, [parents + [u] for u in cands]) - current
            q += int((gains > tol).sum())
            best = int(gains.argmax())
            if gains[best] <= tol:
                break
            parents.append(cands[best])
            current += gains[best]
            arcs += 1
    return q, arcs


@renamed(max_indegree="max_parents", seed="random_state")
def greedy_q_trial(n_rows: int, random_state: int, order: str = "true", prior: str = "K2",
                   ess: float = 1.0, max_parents: int = 0, tol: float = 0.0,
                   restrict: str = "none", search: str = "greedy",
                   network: str = "alarm", order_seed: int = 0) -> dict:
    """Greedy q on an ALARM sample under one choice of the conventions the paper leaves open.

    ``order`` ("true", "lex", "random" - a topological order of the true network; the
    random one drawn with ``order_seed``, 0 being the first committed run's),
    ``prior`` (the score: K2, BDeu with ``ess``, or the penalised likelihoods BIC and
    AIC), ``max_parents`` (the largest parent set; 0: none), ``tol`` (the least
    improvement in log units that counts and is accepted), ``restrict`` ("none", or
    "ancestor": only arcs from an ancestor to a descendant in the true network) and
    ``search`` ("greedy": add / remove over the whole graph as in Table 1; "k2":
    node by node, each node adding its best predecessor while that improves).
    ``random_state`` (an int) draws the sample (and, with ``order_seed``, the random
    order).

    Examples
    --------
    >>> r = greedy_q_trial(n_rows=500, random_state=0, network="asia")
    >>> r["q"] > 0 and r["n_arcs"] > 0
    True
    """
    import networkx as nx
    import numpy as np

    from bnexplore import networks
    from bnexplore.clustering import greedy_search
    from bnexplore.scores import LocalScore

    bn = networks.load(network)
    df = bn.sample(int(n_rows), random_state=random_state)
    rng = np.random.default_rng([int(random_state), 7] + ([int(order_seed)] if order_seed else []))
    pi = _order(bn.dag, order, rng)
    ls = (_penalised_score(df, prior) if prior in ("BIC", "AIC")
          else LocalScore(df, prior=prior, ess=ess))
    names = list(df.columns)
    if restrict == "ancestor":
        allowed = {(u, v) for v in names for u in nx.ancestors(bn.dag, v)}
    elif restrict == "none":
        allowed = {(u, v) for u in names for v in names if u != v}
    else:
        raise ValueError(f"restrict must be 'none' or 'ancestor', got {restrict!r}")
    bound = int(max_parents) or None
    if search == "k2":
        q, n_arcs = _node_by_node(ls, pi, allowed, bound, float(tol))
        return {"q": q, "n_arcs": n_arcs, "n_steps": n_arcs}
    if search != "greedy":
        raise ValueError(f"search must be 'greedy' or 'k2', got {search!r}")
    from bnexplore.search import hill_climb
    res = hill_climb(score=ls, order=pi, max_parents=bound, tol=max(float(tol), 1e-9),
                     allowed=sorted(allowed) if restrict != "none" else None,
                     operators=("add", "remove"))
    return {"q": int(res.q), "n_arcs": res.dag.number_of_edges(), "n_steps": len(res.q_trace)}


_Q_BASE = {"n_rows": 10000, "order": "true", "prior": "K2", "ess": 1.0, "max_parents": 0,
           "tol": 0.0, "restrict": "none", "search": "greedy"}
_Q_VARIANTS = ([{}, {"order": "lex"}, {"order": "random"}, {"prior": "BDeu", "ess": 1.0},
                {"prior": "BDeu", "ess": 10.0}, {"max_parents": 4}, {"max_parents": 2},
                {"n_rows": 5000}, {"n_rows": 20000}, {"tol": 1.0}, {"tol": 5.0},
                {"search": "k2"}, {"restrict": "ancestor"}])
#: 13 topological orders of the true network (networkx's, the lexicographic one, 11
#: random ones) under each of the four scores; the settings that equal a variant above
#: are the same trials (the grid drops duplicates).
_Q_ORDERS = ([{"order": "true"}, {"order": "lex"}, {"order": "random"}]
             + [{"order": "random", "order_seed": k} for k in range(1, 11)])
_Q_SCORES = [{"prior": "K2"}, {"prior": "BDeu", "ess": 1.0}, {"prior": "BIC"},
             {"prior": "AIC"}]
register(
    "castelo_siebes_greedy_q",
    greedy_q_trial,
    grid=[{**_Q_BASE, **v} for v in _Q_VARIANTS]
    + [{**_Q_BASE, **sc, **o} for sc in _Q_SCORES for o in _Q_ORDERS],
    reduced_grid=[{**_Q_BASE, "n_rows": 1000, "search": s} for s in ("greedy", "k2")],
    random_states=(0,),
    reduced_random_states=(0,),
    description="Castelo & Siebes Table 1: greedy q on ALARM under each convention the paper "
                "leaves open (order, score, in-degree, sample size, least improvement, "
                "node-by-node search, ancestor-descendant restriction; 13 orders x K2, "
                "BDeu, BIC, AIC)",
)

register(
    "castelo_siebes_honeycomb",
    honeycomb_trial,
    grid={"n_rows": [10000], "cluster_size": [4], "dependence": [0.0, 0.6]},
    reduced_grid={"n_rows": [2000], "cluster_size": [4], "dependence": [0.6]},
    random_states=(0, 1, 2),
    reduced_random_states=(0,),
    description="Castelo & Siebes Figures 5-7: hierarchy clusters vs the cells of a 48-node "
                "honeycomb network (fresh CPTs per sample) and q ratios",
)
