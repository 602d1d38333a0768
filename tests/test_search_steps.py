"""Step player data of greedy search: SearchResult.dag_at / iter_steps replayed forwards
from the start network, and each DAG rescored independently against its step's score."""
import networkx as nx
import pytest

from bnexplore.scores import LocalScore
from bnexplore.search import greedy_thick_thin, hill_climb
from test_search import chain_data


def _data(n=1500, seed=0):
    return chain_data(n, seed)


def _forward(start, rows):
    """Apply the recorded moves to the start network (independent of dag_at)."""
    g = nx.DiGraph(start)
    out = [g.copy()]
    for row in rows:
        u, v = row["edge"]
        if row["op"] == "add":
            g.add_edge(u, v)
        elif row["op"] == "remove":
            g.remove_edge(u, v)
        else:
            g.remove_edge(u, v)
            g.add_edge(v, u)
        out.append(g.copy())
    return out


@pytest.mark.parametrize("search,start", [
    (greedy_thick_thin, None),
    (hill_climb, None),
    (hill_climb, [("d", "a"), ("c", "b"), ("e", "c")]),  # wrong directions: reversals and removals
])
def test_replay_reaches_the_final_dag(search, start):
    df = _data()
    ls = LocalScore(df)
    res = search(score=ls, max_parents=2, start=start)
    n = len(res.step_rows)
    assert n >= 3
    g0 = nx.DiGraph()
    g0.add_nodes_from(df.columns)
    g0.add_edges_from(start or [])
    want = _forward(g0, res.step_rows)
    for i in range(n + 1):
        assert set(res.dag_at(i).edges) == set(want[i].edges)
        assert set(res.dag_at(i).nodes) == set(df.columns)
    assert set(res.dag_at(n).edges) == set(res.dag.edges)
    steps = list(res.iter_steps())
    assert [row["step"] for row, _ in steps] == list(range(1, n + 1))
    for row, g in steps:
        assert nx.is_directed_acyclic_graph(g)
        assert abs(ls.total(g) - row["score"]) < 1e-6
    if start:
        assert {row["op"] for row in res.step_rows} == {"add", "remove", "reverse"}


def test_dag_at_refuses_a_step_out_of_range():
    res = greedy_thick_thin(_data(300), max_parents=1)
    n = len(res.step_rows)
    for bad in (-1, n + 1, 1.5, "1", True):
        with pytest.raises(ValueError, match=f"0 to {n}"):
            res.dag_at(bad)


@pytest.mark.parametrize("search", [greedy_thick_thin, hill_climb])
def test_score_changes_sum_to_the_final_score_minus_the_empty_networks(search):
    """Each step's recorded score change is the rescored change of its move, and they
    add up to the final score minus the empty network's (both rescored independently)."""
    df = _data()
    ls = LocalScore(df)
    res = search(score=ls, max_parents=2)
    empty = nx.DiGraph()
    empty.add_nodes_from(df.columns)
    deltas = [row["delta"] for row in res.step_rows]
    assert sum(deltas) == pytest.approx(ls.total(res.dag) - ls.total(empty), abs=1e-6)
    assert res.score == pytest.approx(ls.total(res.dag), abs=1e-6)
    before = ls.total(empty)
    for row, g in res.iter_steps():
        after = ls.total(g)
        assert row["delta"] == pytest.approx(after - before, abs=1e-6) and row["delta"] > 0
        before = after
