"""The experiments speak the public vocabulary (issue 33): ``max_parents`` and
``random_state`` in the trial functions, grids, results columns, runner and CLI; the old
names (``k``, ``max_indegree``, ``seed``, ``seeds``) keep working for one release with a
``RenamedParameterWarning``; a results file written before 0.2.0 resumes.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from bnexplore import experiments as ex
from bnexplore._deprecation import RenamedParameterWarning
from bnexplore.experiments import (castelo_siebes, cerquides, compare, dash_cooper, demo, ismb,
                                   orders, registry, runner, ziebart)

#: every public experiment callable with a renamed keyword -> its old keyword -> new one
RENAMED = {
    dash_cooper.table2_trial: {"k": "max_parents", "seed": "random_state"},
    dash_cooper.table3_trial: {"k": "max_parents", "seed": "random_state"},
    dash_cooper.conventions_trial: {"k": "max_parents", "seed": "random_state"},
    dash_cooper.table4_trial: {"k": "max_parents", "seed": "random_state"},
    dash_cooper.table5_trial: {"seed": "random_state"},
    orders.exact_vs_mcmc_trial: {"k": "max_parents", "seed": "random_state"},
    orders.network_mcmc_trial: {"k": "max_parents", "seed": "random_state"},
    cerquides.random_bn_trial: {"max_indegree": "max_parents", "seed": "random_state"},
    cerquides.random_bn_width_trial: {"seed": "random_state"},
    cerquides.bounded_width_network: {"seed": "random_state"},
    cerquides.uci_trial: {"seed": "random_state"},
    demo.demo_sampling: {"max_indegree": "max_parents", "seed": "random_state"},
    castelo_siebes.alarm_trial: {"seed": "random_state"},
    castelo_siebes.honeycomb_trial: {"seed": "random_state"},
    castelo_siebes.greedy_q_trial: {"max_indegree": "max_parents", "seed": "random_state"},
    ismb.ismb_synthetic: {"seed": "random_state"},
    ismb.ismb_uci: {"seed": "random_state"},
    ismb.ismb_uci_peers: {"seed": "random_state"},
    ziebart.uci_trial: {"seed": "random_state"},
    ziebart.weak_trial: {"seed": "random_state"},
    ziebart.dbn_trial: {"seed": "random_state"},
    ziebart.bat_trial: {"seed": "random_state"},
    compare.compare_trial: {"k": "max_parents", "alpha": "penalty", "w": "queue_width",
                            "seed": "random_state"},
    runner.run: {"seeds": "random_states"},
    runner.trial_id: {"seed": "random_state"},
    registry.run_named: {"seeds": "random_states"},
    registry.register: {"seeds": "random_states", "reduced_seeds": "reduced_random_states"},
}
CASES = [(f, old, new) for f, names in RENAMED.items() for old, new in names.items()]
OLD = {"k", "max_indegree", "seed", "seeds", "reduced_seeds", "alpha", "w"}


def _probe(*args, **kwargs):
    return args, kwargs


@pytest.mark.parametrize("func, old, new", CASES,
                         ids=[f"{f.__name__}-{o}" for f, o, _ in CASES])
def test_each_old_keyword_warns_and_reaches_the_new_one(func, old, new, monkeypatch):
    """The alias maps the old keyword to the new one (the body is swapped for a probe that
    returns what it received, so that every alias is checked without running a trial)."""
    assert new in inspect.signature(func).parameters
    assert old not in inspect.signature(func).parameters
    monkeypatch.setattr(func.__wrapped__, "__code__", _probe.__code__)
    with pytest.warns(RenamedParameterWarning, match=f"{func.__name__}\\({old}=...\\) is "
                                                     f"deprecated .* use {new}= instead"):
        _, got = func(**{old: 7})
    assert got == {new: 7}
    with pytest.raises(TypeError, match=f"pass only {new}="):
        func(**{old: 7, new: 7})


def test_every_registered_trial_and_grid_uses_the_new_names():
    for name in ex.names():
        exp = ex.get(name)
        params = inspect.signature(exp.trial).parameters
        assert "random_state" in params and not OLD & set(params), name
        for size in ("full", "reduced"):
            grid, states = exp.settings(size)
            keys = {k for s in ex.expand_grid(grid) for k in s}
            assert not keys & OLD, (name, keys & OLD)
            assert all(isinstance(rs, int) for rs in states)
    for f in RENAMED:
        assert not OLD & set(inspect.signature(f).parameters), f.__name__


def test_old_names_give_the_new_names_result():
    with pytest.warns(RenamedParameterWarning) as seen:
        old = demo.demo_sampling(n_nodes=4, max_indegree=1, n_samples=30, seed=2)
    said = " ".join(str(w.message) for w in seen)
    assert "use max_parents=" in said and "use random_state=" in said
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        new = demo.demo_sampling(n_nodes=4, max_parents=1, n_samples=30, random_state=2)
    assert old == new
    with pytest.warns(RenamedParameterWarning, match="use random_state="):
        bn_old = cerquides.bounded_width_network(6, width=2, max_arity=3, seed=1)
    bn_new = cerquides.bounded_width_network(6, width=2, max_arity=3, random_state=1)
    assert set(bn_old.dag.edges) == set(bn_new.dag.edges)


def test_runner_passes_random_state_and_stores_the_column():
    seen = []

    def trial(n, random_state):
        seen.append(random_state)
        return {"y": n + random_state}

    df = ex.run(trial, {"n": [1]}, random_states=[3, 4], progress=False)
    assert sorted(seen) == [3, 4] and "random_state" in df.columns and "seed" not in df.columns
    with pytest.warns(RenamedParameterWarning, match="use random_states="):
        again = ex.run(trial, {"n": [1]}, seeds=[3, 4], progress=False)
    pd.testing.assert_frame_equal(df.drop(columns="elapsed_s"), again.drop(columns="elapsed_s"))


def test_a_trial_written_with_seed_still_runs_with_a_warning():
    def old_style(n, seed):
        return {"y": n * 10 + seed}

    with pytest.warns(RenamedParameterWarning, match="name its parameter random_state="):
        df = ex.run(old_style, {"n": [1, 2]}, random_states=[0, 5], progress=False)
    assert df["error"].isna().all()
    assert df["y"].tolist() == [10, 15, 20, 25] and df["random_state"].tolist() == [0, 5, 0, 5]


def _old_trial_id(settings: dict, seed: int) -> str:
    """The trial id as bnexplore 0.1 computed it (a copy of its code)."""
    payload = {"settings": settings, "seed": seed}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def test_ids_of_grids_without_renamed_settings_are_unchanged():
    assert ex.trial_id({"n": 10, "p": 0.5}, 3) == _old_trial_id({"n": 10, "p": 0.5}, 3)


def _counting_trial(calls):
    def trial(n_nodes, max_parents, random_state):
        calls.append((max_parents, random_state))
        return {"score": float(n_nodes * 100 + max_parents * 10 + random_state)}
    return trial


@pytest.mark.parametrize("old_name", ["k", "max_indegree"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_resume_a_results_file_written_before_the_rename(tmp_path, old_name, suffix):
    """A file of the old code (columns ``k`` / ``max_indegree`` and ``seed``, the old
    ids) resumes: its finished trials are not run again, its columns and ids are renamed,
    and the rows are those a new run would write."""
    grid = {"n_nodes": [5], "max_parents": [1, 2]}
    finished = [(1, 0), (1, 1), (2, 0)]                # (max_parents, seed); (2, 1) is left
    old_rows = [{"n_nodes": 5, old_name: mp, "seed": s,
                 "trial_id": _old_trial_id({"n_nodes": 5, old_name: mp}, s),
                 "score": float(500 + mp * 10 + s), "error": None, "elapsed_s": 0.5}
                for mp, s in finished]
    out = tmp_path / f"old{suffix}"
    old = pd.DataFrame(old_rows)
    old.to_csv(out, index=False) if suffix == ".csv" else old.to_parquet(out, index=False)

    calls = []
    df = ex.run(_counting_trial(calls), grid, random_states=[0, 1], out=out, progress=False)
    assert calls == [(2, 1)]                            # only the unfinished trial ran
    assert list(df.columns[:4]) == ["n_nodes", "max_parents", "random_state", "trial_id"]
    assert old_name not in df.columns and "seed" not in df.columns
    assert df[["max_parents", "random_state"]].values.tolist() == [[1, 0], [1, 1], [2, 0], [2, 1]]
    assert df["score"].tolist() == [510.0, 511.0, 520.0, 521.0]
    assert df["trial_id"].tolist() == [ex.trial_id({"n_nodes": 5, "max_parents": mp}, s)
                                       for mp in (1, 2) for s in (0, 1)]
    stored = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert set(stored.columns) == set(df.columns)      # the file itself speaks the new names
    fresh = ex.run(_counting_trial([]), grid, random_states=[0, 1], progress=False)
    pd.testing.assert_frame_equal(df.drop(columns="elapsed_s"), fresh.drop(columns="elapsed_s"),
                                  check_dtype=False)
    ex.run(_counting_trial(calls), grid, random_states=[0, 1], out=out, progress=False)
    assert calls == [(2, 1)]                            # resumed again: nothing to run


def test_resume_an_old_file_of_a_registered_experiment(tmp_path):
    """``run_named`` on an old-style file of ``demo_sampling`` (``max_indegree``, ``seed``)
    runs nothing that file holds."""
    exp = ex.get("demo_sampling")
    grid, states = exp.settings("reduced")
    new = ex.run(exp.trial, grid, random_states=states, progress=False)
    old = new.rename(columns={"max_parents": "max_indegree", "random_state": "seed"})
    old["trial_id"] = [_old_trial_id({"n_nodes": r.n_nodes, "max_indegree": r.max_indegree,
                                      "n_samples": r.n_samples}, r.seed)
                       for r in old.itertuples()]
    old["kl_estimate"] = -1.0                          # a value no trial computes
    out = tmp_path / "demo_sampling.csv"
    old.to_csv(out, index=False)
    df = ex.run_named("demo_sampling", out=out, progress=False)
    assert (df["kl_estimate"] == -1.0).all()           # nothing was run again
    assert df["trial_id"].tolist() == new["trial_id"].tolist()


def test_upgrade_columns_renames_k_only_for_a_max_parents_grid():
    old = pd.DataFrame({"k": [3], "seed": [1], "trial_id": ["x"]})
    assert list(runner.upgrade_columns(old, settings=["k"]).columns) == ["k", "random_state",
                                                                         "trial_id"]
    assert list(runner.upgrade_columns(old).columns) == ["max_parents", "random_state",
                                                        "trial_id"]
    current = old.rename(columns={"seed": "random_state", "k": "max_parents"})
    assert runner.upgrade_columns(current) is current        # nothing to rename: unchanged


def test_upgrade_columns_renames_alpha_only_where_penalty_is_written():
    old = pd.DataFrame({"alpha": [0.5], "accuracy": [0.7], "seed": [1], "trial_id": ["x"]})
    assert list(runner.upgrade_columns(old).columns) == ["alpha", "accuracy", "random_state",
                                                        "trial_id"]   # a user's own alpha
    assert list(runner.upgrade_columns(old, settings=["penalty"]).columns)[0] == "penalty"


def test_resume_an_old_ziebart_weak_file_renames_alpha_to_penalty(tmp_path):
    """A ``ziebart_weak`` file of before 0.2.0 (result column ``alpha``, the exclusion
    penalty) resumes: nothing is run again and the column is ``penalty``."""
    exp = ex.get("ziebart_weak")
    assert "penalty" in getattr(ziebart.weak_trial, runner.RESULT_COLUMNS_ATTR)
    grid, states = exp.settings("reduced")
    rows = [{**s, "seed": rs, "trial_id": ex.trial_id(s, rs), "alpha": a, "accuracy": -1.0,
             "weak_in_mb": 0, "noise_in_mb": 0, "error": "", "elapsed_s": 0.0}
            for s in ex.expand_grid(grid) for rs in states for a in (0.0, 2.5, -1.0)]
    out = tmp_path / "ziebart_weak.csv"
    pd.DataFrame(rows).to_csv(out, index=False)
    df = ex.run_named("ziebart_weak", out=out, progress=False)
    assert (df["accuracy"] == -1.0).all()                # nothing was run again
    assert "alpha" not in df.columns and sorted(set(df["penalty"])) == [-1.0, 0.0, 2.5]
    header = out.read_text().split("\n", 1)[0].split(",")
    assert "penalty" in header and "alpha" not in header and "random_state" in header


def test_summaries_read_old_and_new_tables():
    rows = pd.DataFrame({"table": ["2", "2"], "class_node": "random", "ties": "half", "n": 1,
                         "n_nodes": 15, "K": "uniform", "seed": [0, 1],
                         "delta_pct": [1.0, 3.0]})
    t_old, _ = dash_cooper.summarise_conventions(rows)
    t_new, _ = dash_cooper.summarise_conventions(rows.rename(columns={"seed": "random_state"}))
    assert t_old.equals(t_new) and t_new.attrs["random_states"] == [0, 1]
    ovr = pd.DataFrame({"dataset": "d", "seed": [0, 0], "classifier": ["A", "B"],
                        "auc_ovr_0": [0.9, 0.8], "auc_ovr_1": [0.7, 0.75]})
    assert np.isfinite(compare.add_delta(ovr)["delta"]).all()


def test_the_committed_results_use_the_new_names():
    from pathlib import Path
    root = Path(__file__).resolve().parents[1] / "docs" / "reproduction" / "results"
    for path in root.glob("*.csv"):
        header = set(path.read_text().split("\n", 1)[0].split(","))
        assert "random_state" in header and not header & set(runner.LEGACY_COLUMNS), path.name
