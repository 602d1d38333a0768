"""The search loop in one numba kernel (bnexplore._climb) against the Python loop over
search._State, the reference path: the same moves, step rows, scores (bit for bit),
final candidates and number of distinct families scored."""
import numpy as np
import pandas as pd
import pytest

import bnexplore as bx
from bnexplore import search
from bnexplore.data import get_table_budget, set_table_budget
from bnexplore.scores import LocalScore

HC = [("hc", ("add", "remove", "reverse"))]
GTT = [("thick", ("add",)), ("thin", ("remove",))]


def _both(df, prior="K2", order=None, k=None, start=None, allowed=None, phases=HC, max_steps=None,
          tol=1e-9, ess=1.0):
    out = [search._run(LocalScore(df, prior=prior, ess=ess), order, k, start, allowed, phases, max_steps,
                       tol, compiled=c) for c in (True, False)]
    return out


def _same(a, b):
    assert a.score == b.score                      # bit for bit
    assert a.step_rows == b.step_rows              # every move, gain and running score
    assert set(a.dag.edges) == set(b.dag.edges)
    assert a.final_candidates == b.final_candidates
    assert a.n_families == b.n_families


def _mixed(n=400, seed=0):
    """Binary, ternary and 5-state columns with dependencies, and a constant column."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = (a + rng.integers(0, 2, n)) % 3
    c = (b * 2 + (rng.random(n) < 0.3)) % 5
    d = (a ^ (c > 2)) ^ (rng.random(n) < 0.1)
    e = rng.integers(0, 3, n)
    f = (e + d) % 2
    return pd.DataFrame({"a": a, "b": b, "c": c, "d": d.astype(int), "e": e, "f": f, "const": np.zeros(n, int)})


@pytest.mark.parametrize("prior", ["K2", "BDeu"])
@pytest.mark.parametrize("k", [0, 1, 2, 3, None])
def test_alarm_hill_climb_and_gtt_match_python_loop(prior, k):
    df = bx.networks.load("alarm").sample(300, random_state=3)
    for phases in (HC, GTT):
        _same(*_both(df, prior=prior, k=k, phases=phases))


def test_distinct_rows_path_matches():
    # >= 4096 rows: the kernels count the distinct rows weighed by multiplicity
    df = bx.networks.load("asia").sample(6000, random_state=1)
    _same(*_both(df, prior="BDeu", k=2, ess=5.0))


@pytest.mark.parametrize("case", ["order", "allowed", "start", "operators", "max_steps", "tol"])
def test_options_match_python_loop(case):
    df = _mixed()
    names = list(df.columns)
    kw = {}
    if case == "order":
        kw["order"] = names[::-1]
    elif case == "allowed":
        mask = np.ones((len(names), len(names)), dtype=bool)
        mask[:, 3] = False
        mask[0, 2] = mask[2, 0] = False
        kw["allowed"] = mask
    elif case == "start":
        kw["start"] = [("f", "a"), ("e", "c"), ("c", "d")]
        kw["k"] = 2
    elif case == "operators":
        kw["phases"] = [("hc", ("add", "reverse"))]
        kw["start"] = [("d", "a")]
    elif case == "max_steps":
        kw["max_steps"] = 3
        kw["phases"] = GTT
    else:
        kw["tol"] = 5.0
    _same(*_both(df, prior="BDeu", **kw))


def test_table_budget_bounds_candidates_the_same_way():
    df = _mixed()
    old = set_table_budget(20)
    try:
        a, b = _both(df, prior="K2", k=3)
    finally:
        set_table_budget(old)
    assert get_table_budget() == old
    _same(a, b)
    ar = dict(zip(df.columns, LocalScore(df).data.arities))
    for v in a.dag.nodes:   # no CPT over 20 cells
        assert ar[v] * np.prod([ar[u] for u in a.dag.predecessors(v)]) <= 20


def test_public_searches_use_the_kernel_on_complete_data(monkeypatch):
    from bnexplore import _climb
    calls = []
    kernel = _climb._climb
    monkeypatch.setattr(_climb, "_climb", lambda *a: calls.append(1) or kernel(*a))
    df = _mixed()
    res = search.hill_climb(df, prior="BDeu", max_parents=2)
    assert calls == [1]
    ref = search._run(LocalScore(df, prior="BDeu"), None, 2, None, None, HC, None, 1e-9, compiled=False)
    _same(res, ref)


def test_workspace_too_small_is_grown_with_the_same_result(monkeypatch):
    df = bx.networks.load("alarm").sample(300, random_state=4)
    ref = search._run(LocalScore(df, prior="BDeu"), None, 3, None, None, HC, None, 1e-9, compiled=False)
    monkeypatch.setattr(search, "_workspace", lambda p: (16, 2))   # table and move records regrown
    _same(search._run(LocalScore(df, prior="BDeu"), None, 3, None, None, HC, None, 1e-9), ref)
