"""Messages and parameters under hostile use (issue 37, point 5): each message tested."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bnexplore.data import set_table_budget


def _wide_classes(n: int = 400, r: int = 12, k: int = 30, seed: int = 0):
    """Features of ``r`` states that copy the class (``k`` classes) and one another."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    cols = {}
    for j in range(3):
        cols[f"f{j}"] = np.where(rng.random(n) < 0.8, (y + j) % r, rng.integers(0, r, n)).astype(str)
    return pd.DataFrame(cols), y.astype(str)


def test_gtt_never_picks_a_structure_whose_table_exceeds_the_budget():
    from bnexplore.classifiers import GreedyThickThin

    X, y = _wide_classes()
    budget = 12 * 30 - 1             # the class and a feature cannot share a family
    old = set_table_budget(budget)
    try:
        clf = GreedyThickThin().fit(X, y)           # raised MemoryBudgetError before
        p = clf.predict_proba(X.iloc[:5])
    finally:
        set_table_budget(old)
    net = clf.network_
    for v in net.nodes:
        cells = np.prod([len(net.states[u]) for u in net.parents(v)]) * len(net.states[v])
        assert cells <= budget, (v, net.parents(v))
    assert p.shape == (5, 30) and np.allclose(p.sum(axis=1), 1.0)
    # unbudgeted, the search does pick a larger family (the case above is not vacuous)
    big = GreedyThickThin().fit(X, y).network_
    assert max(np.prod([len(big.states[u]) for u in big.parents(v)]) * len(big.states[v])
               for v in big.nodes) > budget


# ------------------------------------------------------------------ MDLDiscretizer
def _iris():
    import bnexplore as bx

    iris = bx.datasets.load("iris")
    return iris.drop(columns="class"), iris["class"]


@pytest.mark.parametrize("bad", [float("nan"), 2.9, 0, -1, "2", True])
def test_mdl_min_rows_must_be_a_whole_number_at_least_one(bad):
    from bnexplore.data import MDLDiscretizer

    X, y = _iris()
    with pytest.raises(ValueError, match="min_rows"):
        MDLDiscretizer(min_rows=bad).fit(X, y)


def test_mdl_min_rows_one_is_accepted_and_means_two():
    from bnexplore.data import MDLDiscretizer

    X, y = _iris()
    assert MDLDiscretizer(min_rows=1).fit(X, y).cut_points_ == MDLDiscretizer().fit(X, y).cut_points_


def test_mdl_refuses_a_continuous_y():
    from bnexplore.data import MDLDiscretizer

    X, _ = _iris()
    y = X["sepallength"] * 1.37 + np.arange(len(X)) / 1000.0
    with pytest.raises(ValueError, match=r"y looks continuous \(\d+ distinct numbers\).*class "
                                         r"labels.*y\.astype\(str\)"):
        MDLDiscretizer().fit(X.drop(columns="sepallength"), y)


def test_mdl_puts_infinities_in_the_extreme_intervals_with_readable_labels():
    from bnexplore.data import EqualFrequencyDiscretizer, MDLDiscretizer

    rng = np.random.default_rng(0)
    x = np.concatenate([np.full(20, -np.inf), rng.normal(0, 1, 100), np.full(20, np.inf)])
    y = np.where(np.isinf(x), "edge", np.where(x < 0, "neg", "pos"))   # a cut at +-inf would pay
    X = pd.DataFrame({"x": x})
    for disc in (MDLDiscretizer().fit(X, y), EqualFrequencyDiscretizer(n_bins=7).fit(X)):
        cuts = disc.cut_points_["x"]
        assert cuts and np.isfinite(cuts).all()
        out = disc.transform(X)["x"]
        labels = out.cat.categories.tolist()
        assert not any("-inf, -inf" in lab or "inf, inf" in lab for lab in labels)
        assert (out[x == -np.inf] == labels[0]).all() and (out[x == np.inf] == labels[-1]).all()
    assert any(abs(c) < 0.5 for c in MDLDiscretizer().fit(X, y).cut_points_["x"])


def test_integer_codes_refused_as_continuous_are_told_how_to_be_categorical():
    from bnexplore.data import DiscreteData

    df = pd.DataFrame({"zip": np.arange(120) % 60 + 10000, "c": ["a", "b"] * 60})
    with pytest.raises(ValueError, match=r"continuous \(60 distinct values\).*category codes.*"
                                         r"df\['zip'\]\.astype\(str\) or \.astype\('category'\)"):
        DiscreteData.from_frame(df)
    ok = DiscreteData.from_frame(df.assign(zip=df["zip"].astype(str)))
    assert ok.arities[0] == 60
    with pytest.raises(ValueError, match="continuous") as info:      # true quantities: no hint
        DiscreteData.from_frame(df.assign(zip=np.linspace(0, 1, 120)))
    assert "astype" not in str(info.value)


# ------------------------------------------------------------------ unknown columns
def _unknown_column_calls():
    import bnexplore as bx
    from bnexplore.scores import LocalScore
    from bnexplore.warmup import tiny_frame

    df = tiny_frame()
    ls = LocalScore(df)
    cols = list(df.columns)
    return {
        "LocalScore.score child": lambda: ls.score("nope", []),
        "LocalScore.score parent": lambda: ls.score("x0", ["nope"]),
        "LocalScore.score position": lambda: ls.score(99, []),
        "LocalScore.score_many": lambda: ls.score_many("nope", [[]]),
        "LocalScore.score_idx": lambda: ls.score_idx(99, ()),
        "LocalScore.rows": lambda: ls.rows("nope"),
        "LocalScore candidates": lambda: LocalScore(df, candidates={"nope": ["x1"]}),
        "family_counts": lambda: bx.scores.family_counts(df, "nope", []),
        "greedy_thick_thin order": lambda: bx.search.greedy_thick_thin(df, order=["nope"] + cols[1:]),
        "hill_climb allowed": lambda: bx.search.hill_climb(df, allowed=[("x0", "nope")]),
        "hill_climb start": lambda: bx.search.hill_climb(df, start=[("x0", "nope")]),
        "OrderedAveraging order": lambda: bx.averaging.OrderedAveraging(df, order=["nope"] + cols[1:]),
        "map_scf targets": lambda: bx.forests.map_scf(df, targets=["nope"], conditions=["class"]),
        "DiscreteData target": lambda: bx.data.DiscreteData.from_frame(df, target="nope"),
        "DiscreteData.subset": lambda: bx.data.DiscreteData.from_frame(df).subset(["nope"]),
        "markov_blanket": lambda: bx.networks.markov_blanket(bx.search.hill_climb(df).dag, "nope"),
    }


@pytest.mark.parametrize("name", list(_unknown_column_calls()))
def test_unknown_columns_raise_value_error_naming_them(name):
    with pytest.raises(ValueError, match=r"nope|99"):
        _unknown_column_calls()[name]()


def test_unknown_column_errors_stay_key_and_index_errors():
    from bnexplore.data.core import ColumnIndexError, UnknownColumnError
    from bnexplore.scores import LocalScore
    from bnexplore.warmup import tiny_frame

    ls = LocalScore(tiny_frame())
    with pytest.raises(KeyError) as info:
        ls.score("nope", [])
    assert isinstance(info.value, UnknownColumnError)
    assert str(info.value).startswith("unknown column 'nope'")     # not KeyError's quoted repr
    with pytest.raises(IndexError):
        ls.score(99, [])
    assert issubclass(ColumnIndexError, ValueError)


# ------------------------------------------------------------------ runner
def test_run_with_an_unreachable_scheduler_says_so_in_one_line_and_leaves_no_file(tmp_path, capsys):
    pytest.importorskip("dask.distributed")
    from bnexplore.cli import main
    from bnexplore.experiments import runner

    out = tmp_path / "results.csv"
    code = main(["run", "demo_sampling", "--scheduler", "tcp://127.0.0.1:1", "--out", str(out),
                 "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == [f"bnexplore run: error: cannot reach the Dask scheduler at 'tcp://127.0.0.1:1' "
                   f"(no answer within {runner.SCHEDULER_TIMEOUT:g} s): start it (dask scheduler) "
                   f"or check the address"]
    assert runner.SCHEDULER_TIMEOUT <= 5
    assert not out.exists()
    with pytest.raises(ConnectionError, match="cannot reach the Dask scheduler"):
        runner.run(lambda random_state: {"x": random_state}, {"a": [1]}, out=out, backend="dask",
                   scheduler="tcp://127.0.0.1:1", progress=False)
    assert not out.exists()
