"""Tests of bnexplore.clustering (Castelo & Siebes): Cramer's V, the complete-linkage
hierarchy, the Figure 1 flattening, counted greedy search and incremental search."""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from scipy.stats.contingency import association, crosstab

import bnexplore as bx
from bnexplore import clustering as C
from bnexplore.data.core import as_discrete
from bnexplore.scores import LocalScore

FIG2 = [[["a", "b"], "c"], [["d", "e"], [["f", "g"], "h"]]]


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def asia():
    bn = bx.networks.load("asia")
    return bn, bn.sample(3000, random_state=3)


@pytest.fixture(scope="module")
def alarm_small():
    bn = bx.networks.load("alarm")
    df = bn.sample(5000, random_state=0)
    return bn, df, LocalScore(df)


def _random_frame(n, arities, seed):
    rng = np.random.default_rng(seed)
    cols = {}
    base = rng.integers(0, 3, n)
    for i, r in enumerate(arities):
        # mix in a shared component so that some pairs are dependent
        x = np.where(rng.random(n) < 0.4, base % r, rng.integers(0, r, n))
        cols[f"x{i}"] = pd.Categorical([f"s{v}" for v in x], categories=[f"s{v}" for v in range(r)])
    return pd.DataFrame(cols)


# --------------------------------------------------------------------------- Cramer's V
def test_cramers_v_matches_scipy_on_random_pairs():
    df = _random_frame(700, [2, 3, 4, 2, 5, 3], seed=1)
    v = C.cramers_v(df)
    assert np.allclose(v.to_numpy(), v.to_numpy().T)
    assert np.allclose(np.diag(v), 1.0)
    for a, b in itertools.combinations(df.columns, 2):
        table = crosstab(df[a].astype(str), df[b].astype(str)).count
        expected = association(table, method="cramer", correction=False)
        assert v.loc[a, b] == pytest.approx(expected, abs=1e-9), (a, b)


def test_cramers_v_chi2_definition_and_unobserved_states():
    # declared but unobserved states do not enter the table (chi2_contingency agrees)
    from scipy.stats import chi2_contingency

    rng = np.random.default_rng(5)
    x = rng.integers(0, 3, 400)
    y = (x + (rng.random(400) < 0.3)) % 4
    df = pd.DataFrame({"x": pd.Categorical(x, categories=range(5)),
                       "y": pd.Categorical(y, categories=range(4)),
                       "k": pd.Categorical(np.zeros(400, int), categories=[0, 1])})
    v = C.cramers_v(df)
    table = pd.crosstab(x, y).to_numpy()
    chi2 = chi2_contingency(table, correction=False)[0]
    assert v.loc["x", "y"] == pytest.approx(np.sqrt(chi2 / (400 * (min(table.shape) - 1))), abs=1e-9)
    assert v.loc["k", "x"] == 0.0 and v.loc["k", "k"] == 1.0   # a constant variable


def test_cramers_v_perfect_and_independent():
    df = pd.DataFrame({"a": list("xxyyzz") * 10, "b": list("uuvvww") * 10, "c": list("pqpqpq") * 10})
    v = C.cramers_v(as_discrete(df))
    assert v.loc["a", "b"] == pytest.approx(1.0)
    assert v.loc["a", "c"] == pytest.approx(0.0, abs=1e-7)


def test_cramers_v_bad_input():
    with pytest.raises(TypeError):
        C.cramers_v(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="no rows|at least one row"):
        C.cramers_v(pd.DataFrame({"a": pd.Categorical([], categories=["x"])}))


# --------------------------------------------------------------------------- hierarchy
def _naive_complete_linkage(v: pd.DataFrame) -> set[frozenset]:
    """O(p^3) agglomeration: merge the two clusters with the largest smallest association."""
    clusters = [frozenset([n]) for n in v.index]
    out = set(clusters)
    while len(clusters) > 1:
        best = None
        for i, j in itertools.combinations(range(len(clusters)), 2):
            link = min(v.loc[a, b] for a in clusters[i] for b in clusters[j])
            if best is None or link > best[0]:
                best = (link, i, j)
        _, i, j = best
        merged = clusters[i] | clusters[j]
        clusters = [c for k, c in enumerate(clusters) if k not in (i, j)] + [merged]
        out.add(merged)
    return out


def test_hierarchy_radius_is_smallest_association_inside(asia):
    _, df = asia
    v = C.cramers_v(df)
    root = C.hierarchy(df)
    assert sorted(root.variables) == sorted(df.columns)
    nodes = list(root.walk())
    assert len(nodes) == 2 * df.shape[1] - 1
    for node in nodes:
        if node.is_leaf:
            assert node.radius == 1.0
            continue
        brute = min(v.loc[a, b] for a, b in itertools.combinations(node.variables, 2))
        assert node.radius == pytest.approx(brute, abs=1e-12)
        assert sorted(node.variables) == sorted(sum((c.variables for c in node.children), []))
        assert all(c.radius >= node.radius - 1e-12 for c in node.children)


def test_hierarchy_is_complete_linkage_brute_force():
    df = _random_frame(500, [2, 3, 2, 4, 3, 2, 2, 3, 5], seed=7)
    v = C.cramers_v(df)
    root = C.hierarchy(df)
    ours = {frozenset(n.variables) for n in root.walk()}
    assert ours == _naive_complete_linkage(v)
    # a precomputed association gives the same tree
    root2 = C.hierarchy(association=v)
    assert [n.variables for n in root2.walk()] == [n.variables for n in root.walk()]


def test_hierarchy_single_variable_and_bad_input():
    df = pd.DataFrame({"a": pd.Categorical(list("xy"))})
    root = C.hierarchy(df)
    assert root.variables == ["a"] and root.is_leaf
    with pytest.raises(ValueError, match="data or an association"):
        C.hierarchy()
    with pytest.raises(ValueError, match="square DataFrame"):
        C.hierarchy(association=pd.DataFrame(np.eye(2), index=["a", "b"], columns=["a", "c"]))
    with pytest.raises(ValueError, match="missing or infinite"):
        C.hierarchy(association=pd.DataFrame([[1, np.nan], [np.nan, 1]], index=list("ab"),
                                             columns=list("ab")))


# --------------------------------------------------------------------------- Figure 1
def test_figure2_example():
    # root children of sizes 3 and 5, cs = 4: [first 3, second 5]
    assert C.incremental_strategy(FIG2, 4) == [["a", "b", "c"], ["d", "e", "f", "g", "h"]]


@pytest.mark.parametrize("cs, expected", [
    # window [0, 2]: every child of size 1-2 taken, larger ones explored
    (1, [["a", "b"], ["c"], ["d", "e"], ["f", "g"], ["h"]]),
    # window [1, 3]: abc taken; the 5-cluster explored: de and fgh taken
    (2, [["a", "b", "c"], ["d", "e"], ["f", "g", "h"]]),
    (3, [["a", "b", "c"], ["d", "e"], ["f", "g", "h"]]),
    # window [5, 7]: abc is small, defgh taken; the small list comes last
    (6, [["d", "e", "f", "g", "h"], ["a", "b", "c"]]),
    # window [6, 8]: both children small; merged as abc (3 <= 6) then abcdefgh (8 > 6)
    (7, [["a", "b", "c", "d", "e", "f", "g", "h"]]),
    # cluster size larger than the number of variables: one remainder group
    (20, [["a", "b", "c", "d", "e", "f", "g", "h"]]),
])
def test_figure1_by_hand(cs, expected):
    assert C.incremental_strategy(FIG2, cs) == expected


def test_figure1_deep_unbalanced_tree():
    # ((((((a,b),c),d),e),f),g),h with cs = 3 (window [2, 4]): the walk goes down the
    # spine; abcd is the first node in the window; e, f, g, h are met as small leaves
    # in that order and merged at the top call: efg (3 > 2) closes, h is the remainder.
    tree = [[[[[[["a", "b"], "c"], "d"], "e"], "f"], "g"], "h"]
    assert C.incremental_strategy(tree, 3) == [["a", "b", "c", "d"], ["e", "f", "g"], ["h"]]
    # cs = 2 (window [1, 3]): abc taken, d..h are single leaves, each in the window
    assert C.incremental_strategy(tree, 2) == [["a", "b", "c"], ["d"], ["e"], ["f"], ["g"], ["h"]]
    # cs = 6 (window [5, 7]): the 7-node a..g is in the window at once, h is small
    assert C.incremental_strategy(tree, 6) == [["a", "b", "c", "d", "e", "f", "g"], ["h"]]


def test_figure1_small_list_spans_recursion_levels():
    # small nodes met at different depths are merged in the order met, at the top only
    tree = [["a", "b"], [["c", "d"], [["e", "f", "g"], ["h", "i", "j"]]]]
    # cs = 4, window [3, 5]: ab small; right (8) explored: cd small; efghij (6) explored:
    # efg and hij taken. Top: w = ab (2 <= 3), abcd (4 > 3) closes.
    assert C.incremental_strategy(tree, 4) == [["e", "f", "g"], ["h", "i", "j"], ["a", "b", "c", "d"]]
    # cs = 5, window [4, 6]: ab small; right explored: cd small, efghij (6) taken.
    # Top: abcd (4 <= 4) stays open -> remainder.
    assert C.incremental_strategy(tree, 5) == [["e", "f", "g", "h", "i", "j"], ["a", "b", "c", "d"]]


def test_figure1_single_variable():
    assert C.incremental_strategy("x", 4) == [["x"]]
    assert C.incremental_strategy(["x"], 1) == [["x"]]
    assert C.incremental_strategy(C.ClusterNode(["x"], 1.0), 3) == [["x"]]


@pytest.mark.parametrize("cs", [1, 2, 3, 4, 5, 6, 9])
def test_figure1_properties_on_real_hierarchy(alarm_small, cs):
    _, df, _ = alarm_small
    root = C.hierarchy(df)
    strat = C.incremental_strategy(root, cs)
    flat = [v for c in strat for v in c]
    assert sorted(flat) == sorted(df.columns) and len(flat) == len(set(flat))
    node_sets = {frozenset(n.variables): len(n) for n in root.walk() if n is not root}
    small = [frozenset(n.variables) for n in root.walk() if n is not root and len(n) < cs - 1]
    n_merged = 0
    for k, c in enumerate(strat):
        if frozenset(c) in node_sets and cs - 1 <= len(c) <= cs + 1:
            continue
        # otherwise a group merged from the small list: a union of small nodes,
        # closed when it exceeds cs - 1 variables (only the last may be smaller)
        n_merged += 1
        assert all(any(v in s for s in small) for v in c)
        assert len(c) > cs - 1 or k == len(strat) - 1
    assert n_merged <= len(strat)


def test_incremental_strategy_bad_input():
    with pytest.raises(ValueError, match="at least 1"):
        C.incremental_strategy(FIG2, 0)
    with pytest.raises(TypeError, match="integer"):
        C.incremental_strategy(FIG2, 2.5)
    with pytest.raises(TypeError, match="integer"):
        C.incremental_strategy(FIG2, True)
    with pytest.raises(TypeError, match="ClusterNode"):
        C.incremental_strategy({"a": 1}, 2)
    with pytest.raises(ValueError, match="more than once"):
        C.incremental_strategy([["a", "b"], "a"], 2)
    with pytest.raises(ValueError, match="empty list"):
        C.incremental_strategy([["a", "b"], []], 2)
    assert C.incremental_strategy(FIG2, np.int64(4)) == C.incremental_strategy(FIG2, 4)


def test_random_strategy():
    groups = C.random_strategy(list("abcdefghij"), 4, random_state=3)
    assert [len(g) for g in groups] == [4, 4, 2]
    assert sorted(sum(groups, [])) == list("abcdefghij")
    assert groups == C.random_strategy(list("abcdefghij"), 4, random_state=3)
    assert groups != C.random_strategy(list("abcdefghij"), 4, random_state=4)
    with pytest.raises(ValueError):
        C.random_strategy([], 2)
    with pytest.raises(ValueError):
        C.random_strategy(list("ab"), -1)


# --------------------------------------------------------------------------- greedy q
def _neighbours(edges: frozenset, names, pos):
    """All legal one-move neighbours (add / remove / reverse) as arc sets."""
    out = []
    for u, v in itertools.permutations(names, 2):
        if (u, v) in edges:
            out.append(edges - {(u, v)})
            if pos is None or pos[v] < pos[u]:
                rev = (edges - {(u, v)}) | {(v, u)}
                if nx.is_directed_acyclic_graph(nx.DiGraph(list(rev))):
                    out.append(rev)
        elif (v, u) not in edges and (pos is None or pos[u] < pos[v]):
            new = edges | {(u, v)}
            if nx.is_directed_acyclic_graph(nx.DiGraph(list(new))):
                out.append(new)
    return out


def _total(ls, names, edges):
    g = nx.DiGraph()
    g.add_nodes_from(names)
    g.add_edges_from(edges)
    return ls.total(g)


@pytest.mark.parametrize("use_order", [True, False])
def test_greedy_q_trace_brute_force(asia, use_order):
    bn, df = asia
    sub = df.iloc[:1500]
    ls = LocalScore(sub)
    names = list(sub.columns)
    order = list(nx.topological_sort(bn.dag)) if use_order else None
    res = C.greedy_search(score=ls, order=order)
    pos = {v: i for i, v in enumerate(order)} if order else None
    edges = frozenset()
    union = set()
    for i, row in enumerate(res.steps.itertuples()):
        cur = _total(ls, names, edges)
        scored = [(e, _total(ls, names, e)) for e in _neighbours(edges, names, pos)]
        improving = [e for e, s in scored if s > cur + 1e-9]
        assert res.q_trace[i] == len(improving), f"step {i}"
        assert row.n_candidates == len(scored)
        union.update(improving)
        best = max(s for _, s in scored)
        u, v = row.edge
        nxt = {"add": edges | {(u, v)}, "remove": edges - {(u, v)},
               "reverse": (edges - {(u, v)}) | {(v, u)}}[row.op]
        assert _total(ls, names, nxt) == pytest.approx(best, abs=1e-6)
        edges = frozenset(nxt)
    # at the end no neighbour improves
    cur = _total(ls, names, edges)
    assert all(_total(ls, names, e) <= cur + 1e-9 for e in _neighbours(edges, names, pos))
    assert edges == frozenset(res.dag.edges)
    # q = |W*|: the improving sets of the steps are disjoint here
    assert res.q == len(union)
    if use_order:
        assert (res.steps["op"] != "reverse").all()


# --------------------------------------------------------------------------- incremental
def test_incremental_subspace_sequence(asia):
    bn, df = asia
    ls = LocalScore(df)
    clusters = [["asia", "tub", "either"], ["smoke", "lung", "bronc"], ["xray", "dysp"]]
    inc = C.incremental_search(score=ls, clusters=clusters)
    assert inc.subspaces == [clusters[0], clusters[1], clusters[0] + clusters[1], clusters[2],
                             clusters[0] + clusters[1] + clusters[2]]
    assert inc.kinds == ["cluster", "cluster", "join", "cluster", "join"]
    for sub, model in zip(inc.subspaces, inc.models):
        assert all(u in sub and v in sub for u, v in model.edges)
    # the join starts from the union of the previous joined model and the cluster model
    start2 = set(inc.models[0].edges) | set(inc.models[1].edges)
    replay = bx.search.hill_climb(score=ls, start=list(start2),
                                  allowed=[(u, v) for u in inc.subspaces[2] for v in inc.subspaces[2] if u != v])
    assert set(replay.dag.edges) == set(inc.models[2].edges)
    assert replay.q == inc.subspace_q[2]
    assert inc.q == int(inc.subspace_q.sum()) == int(inc.q_trace.sum())
    assert len(inc.q_trace) == len(inc.steps)
    assert set(inc.dag.edges) == set(inc.models[-1].edges)
    assert inc.score == pytest.approx(ls.total(inc.dag))
    # growing model of Figure 6
    assert set(inc.model_at(1).edges) == set(inc.models[0].edges) | set(inc.models[1].edges)
    assert set(inc.model_at(3).edges) == set(inc.models[2].edges) | set(inc.models[3].edges)
    with pytest.raises(IndexError):
        inc.model_at(5)


def test_single_cluster_is_plain_greedy(asia):
    _, df = asia
    ls = LocalScore(df)
    inc = C.incremental_search(score=ls, clusters=[list(df.columns)])
    g = C.greedy_search(score=ls)
    assert inc.q == g.q and set(inc.dag.edges) == set(g.dag.edges)


def test_true_order_same_model_asia(asia):
    bn, df = asia
    ls = LocalScore(df)
    order = list(nx.topological_sort(bn.dag))
    g = C.greedy_search(score=ls, order=order)
    for cs in (2, 3, 4):
        inc = C.incremental_search(score=ls, cluster_size=cs, order=order)
        assert set(inc.dag.edges) == set(g.dag.edges), cs
        assert inc.q < g.q
    for seed in (0, 1):
        inc = C.incremental_search(score=ls, cluster_size=3, strategy="random", random_state=seed, order=order)
        assert set(inc.dag.edges) == set(g.dag.edges)


def test_true_order_same_model_alarm_reduced(alarm_small):
    # 5000 rows: every run ends at the greedy model. (At 2000 rows some random
    # groupings stop at a local optimum 14 log-units worse - CATECHOL's parent
    # VENTALV instead of ARTCO2 - which no single ordered move can repair.)
    bn, df, ls = alarm_small
    order = list(nx.topological_sort(bn.dag))
    g = C.greedy_search(score=ls, order=order)
    for cs in (4, 5, 6):
        hc = C.incremental_search(score=ls, cluster_size=cs, order=order)
        assert set(hc.dag.edges) == set(g.dag.edges), cs
        assert g.q / hc.q > 3   # the hierarchy saves most of the work
        for seed in (0, 1):
            rnd = C.incremental_search(score=ls, cluster_size=cs, strategy="random", random_state=seed, order=order)
            assert set(rnd.dag.edges) == set(g.dag.edges), (cs, seed)
            assert rnd.q < g.q


def test_incremental_search_bad_input(asia):
    _, df = asia
    ls = LocalScore(df)
    with pytest.raises(ValueError, match="strategy"):
        C.incremental_search(score=ls, strategy="kmeans")
    with pytest.raises(ValueError, match="at least 1"):
        C.incremental_search(score=ls, cluster_size=0)
    with pytest.raises(TypeError, match="integer"):
        C.incremental_search(score=ls, cluster_size="4")
    with pytest.raises(ValueError, match=r"missing: \['xray'\]"):
        C.incremental_search(score=ls, clusters=[[c for c in df.columns if c != "xray"]])
    with pytest.raises(ValueError, match=r"repeated: \['asia'\]"):
        C.incremental_search(score=ls, clusters=[list(df.columns), ["asia"]])
    with pytest.raises(ValueError, match=r"unknown: \['zzz'\]"):
        C.incremental_search(score=ls, clusters=[list(df.columns) + ["zzz"]])
    with pytest.raises(TypeError, match="lists of variable names"):
        C.incremental_search(score=ls, clusters="asia")
    with pytest.raises(ValueError, match="empty"):
        C.incremental_search(score=ls, clusters=[list(df.columns), []])
    with pytest.raises(TypeError, match="LocalScore"):
        C.incremental_search(score="K2")
    with pytest.raises(ValueError, match="order"):
        C.incremental_search(score=ls, order=["asia"])


# --------------------------------------------------------------------------- honeycomb
def test_honeycomb_structure_and_fresh_cpts():
    bn, cells = C.honeycomb_network(random_state=0)
    assert bn.dag.number_of_nodes() == 48 and len(cells) == 8
    assert bn.dag.number_of_edges() == 8 * 6 + 7
    assert nx.is_directed_acyclic_graph(bn.dag)
    for cell in cells:
        assert nx.is_connected(bn.dag.subgraph(cell).to_undirected())
        assert bn.dag.subgraph(cell).number_of_edges() == 6
    for v, t in bn.cpts.items():
        assert np.allclose(t.sum(axis=1), 1.0)
    bn2, _ = C.honeycomb_network(random_state=1)
    assert not np.allclose(bn.cpts["C1_3"], bn2.cpts["C1_3"])
    # with dependence every child row leans towards the parents' (rounded mean) state
    bn3, _ = C.honeycomb_network(n_cells=2, random_state=0, dependence=0.9)
    t = bn3.cpts["C0_1"]
    assert t[0, 0] > 0.9 and t[1, 1] > 0.9
    for bad in ({"n_cells": 0}, {"arity": 1}, {"dependence": 1.5}, {"concentration": 0.0}):
        with pytest.raises(ValueError):
            C.honeycomb_network(**bad)


def test_honeycomb_clusters_follow_cells():
    bn, cells = C.honeycomb_network(random_state=0)
    df = bn.sample(5000, random_state=0)
    strat = C.incremental_strategy(C.hierarchy(df), 4)
    assert C.cluster_purity(strat, cells) > 0.7
    assert np.mean(C.connected_clusters(strat, bn.dag)) > 0.7


def test_purity_and_connectivity_helpers():
    assert C.cluster_purity([["a", "b", "c"]], [["a", "b"], ["c"]]) == pytest.approx(2 / 3)
    assert C.cluster_purity([["a"], ["c"]], [["a", "b"], ["c"]]) == 1.0
    with pytest.raises(ValueError, match="no group"):
        C.cluster_purity([["z"]], [["a"]])
    g = nx.DiGraph([("a", "b"), ("c", "b"), ("d", "e")])
    assert C.connected_clusters([["a", "c"], ["a", "b", "c"], ["d", "e"]], g) == [False, True, True]


# --------------------------------------------------------------------------- reproduction (reduced)
def test_reduced_reproductions_run():
    from bnexplore import experiments

    alarm = experiments.run_named("castelo_siebes_alarm", size="reduced", progress=False)
    assert alarm["error"].isna().all()
    assert set(alarm["method"]) == {"greedy", "hc", "random"} and len(alarm) == 10
    greedy_q = alarm.loc[alarm["method"] == "greedy", "q"].iloc[0]
    hc = alarm[alarm["method"] == "hc"]
    assert (hc["q"] < greedy_q).all() and hc["same_model"].all()
    assert (hc["ratio"] > alarm.loc[alarm["method"] == "random", "ratio"].min()).all()
    honey = experiments.run_named("castelo_siebes_honeycomb", size="reduced", progress=False)
    assert honey["error"].isna().all()
    assert honey["purity"].iloc[0] > 0.7 and honey["same_model"].all()


@pytest.mark.slow
def test_full_alarm_reproduction():
    from bnexplore.experiments.castelo_siebes import alarm_trial

    rows = pd.DataFrame(alarm_trial(n_rows=10_000, random_state=0))
    assert rows["same_model"].all()
    hc = rows[rows["method"] == "hc"]
    rnd = rows[rows["method"] == "random"]
    assert hc["ratio"].min() > 5 and rnd["ratio"].min() > 3
    assert hc["ratio"].mean() > rnd["ratio"].mean()


def test_greedy_q_variants_on_asia():
    from bnexplore.experiments.castelo_siebes import greedy_q_trial

    base = greedy_q_trial(n_rows=1000, random_state=0, network="asia")
    anc = greedy_q_trial(n_rows=1000, random_state=0, network="asia", restrict="ancestor")
    k2 = greedy_q_trial(n_rows=1000, random_state=0, network="asia", search="k2")
    assert 0 < anc["q"] <= base["q"] and 0 < k2["q"] < base["q"]
    strict = greedy_q_trial(n_rows=1000, random_state=0, network="asia", tol=5.0)
    assert strict["q"] <= base["q"] and strict["n_arcs"] <= base["n_arcs"]
    with pytest.raises(ValueError, match="restrict"):
        greedy_q_trial(n_rows=100, random_state=0, network="asia", restrict="cousins")


@pytest.mark.parametrize("penalty", ["BIC", "AIC"])
def test_penalised_score_against_counts(asia, penalty):
    """The BIC / AIC family score of the greedy-q experiment, from pandas counts."""
    from bnexplore.experiments.castelo_siebes import _penalised_score

    df = asia[0].sample(500, random_state=1)
    ls = _penalised_score(df, penalty)
    child, parents = "dysp", ["bronc", "either"]
    n_jk = df.groupby(parents + [child], observed=True).size()
    n_jk = n_jk[n_jk > 0]
    n_j = df.groupby(parents, observed=True).size()
    n_j = n_j[n_j > 0]
    loglik = (n_jk * np.log(n_jk)).sum() - (n_j * np.log(n_j)).sum()
    q = np.prod([df[p].cat.categories.size for p in parents])
    r = df[child].cat.categories.size
    per = np.log(len(df)) / 2 if penalty == "BIC" else 1.0
    assert ls.score(child, parents) == pytest.approx(loglik - per * q * (r - 1), rel=1e-12)
    assert ls.score(child, parents[::-1]) == ls.score(child, parents)
    assert ls.score_many(child, [[], parents]).tolist() == [ls.score(child, []),
                                                            ls.score(child, parents)]


def test_greedy_q_penalised_scores_and_orders_on_asia():
    from bnexplore.experiments.castelo_siebes import greedy_q_trial

    bic = greedy_q_trial(n_rows=1000, random_state=0, network="asia", prior="BIC")
    aic = greedy_q_trial(n_rows=1000, random_state=0, network="asia", prior="AIC")
    assert 0 < bic["n_arcs"] <= aic["n_arcs"] and 0 < bic["q"] <= aic["q"]
    orders = {greedy_q_trial(n_rows=1000, random_state=0, network="asia", order="random",
                             order_seed=k)["q"] for k in range(4)}
    assert all(q > 0 for q in orders)
    with pytest.raises(ValueError, match="penalty"):
        from bnexplore.experiments.castelo_siebes import _penalised_score
        _penalised_score(pd.DataFrame({"a": ["x", "y"]}), "MDL")

