"""Tests for bnexplore.experiments (runner, registry) and bnexplore.cli."""
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from bnexplore import experiments as ex
from bnexplore.cli import main
from bnexplore.experiments import registry as reg


def noisy_mean(n, p, random_state):
    x = np.random.default_rng(random_state).random(n) < p
    return {"mean": float(x.mean()), "first": bool(x[0])}


def _data_rows(path):
    return pd.read_csv(path, dtype={"trial_id": str})


# --------------------------------------------------------------------------- grid
def test_expand_grid_product_list_and_fixed_values():
    g = ex.expand_grid({"a": [1, 2], "b": ("x", "y"), "c": 0.5})
    assert g == [{"a": 1, "b": "x", "c": 0.5}, {"a": 1, "b": "y", "c": 0.5},
                 {"a": 2, "b": "x", "c": 0.5}, {"a": 2, "b": "y", "c": 0.5}]
    assert ex.expand_grid({"n": range(3)}) == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert ex.expand_grid({"n": np.array([1, 2])}) == [{"n": 1}, {"n": 2}]
    assert type(ex.expand_grid({"n": np.array([1])})[0]["n"]) is int
    assert ex.expand_grid([{"a": 1}, {"a": 2, "b": 3}, {"a": 1}]) == [{"a": 1}, {"a": 2, "b": 3}]


@pytest.mark.parametrize("grid, err, match", [
    ({"a": []}, ValueError, "empty"),
    ([], ValueError, "empty"),
    ({"random_state": [1, 2]}, ValueError, "reserved"),
    ({"seed": [1, 2]}, ValueError, "reserved"),      # the column name before 0.2.0
    ({"a": [[1, 2]]}, ValueError, "flat scalars"),
    ([{"a": {"x": 1}}], ValueError, "flat scalars"),
    ("abc", TypeError, "dict of lists"),
    ([1, 2], TypeError, "grid entry 0"),
])
def test_expand_grid_errors(grid, err, match):
    with pytest.raises(err, match=match):
        ex.expand_grid(grid)


def test_trial_id_stable_and_distinct():
    a = ex.trial_id({"n": 10, "k": 2}, 0)
    assert a == ex.trial_id({"k": 2, "n": np.int64(10)}, np.int64(0))
    assert len(a) == 16
    ids = {ex.trial_id({"n": n, "k": k}, s) for n in (1, 2) for k in (1, 2) for s in (0, 1)}
    assert len(ids) == 8


# --------------------------------------------------------------------------- runner
def test_run_in_memory_columns_and_order():
    df = ex.run(noisy_mean, {"n": [5, 50], "p": [0.2, 0.8]}, random_states=[3, 4], progress=False)
    assert list(df.columns) == ["n", "p", "random_state", "trial_id", "mean", "first", "error",
                                "elapsed_s"]
    assert len(df) == 8
    assert df[["n", "p", "random_state"]].to_dict("records")[:3] == [
        {"n": 5, "p": 0.2, "random_state": 3}, {"n": 5, "p": 0.2, "random_state": 4},
        {"n": 5, "p": 0.8, "random_state": 3}]
    assert df["mean"].tolist()[0] == noisy_mean(5, 0.2, 3)["mean"]
    assert df["error"].isna().all()


def test_rows_written_as_trials_finish(tmp_path):
    out = tmp_path / "res.csv"

    def trial(i, random_state):
        # sequential run: every earlier trial must already be on disk
        text = out.read_text() if out.exists() else ""
        n_lines = max(len(text.splitlines()) - 1, 0)
        return {"rows_on_disk": n_lines}

    df = ex.run(trial, {"i": list(range(5))}, out=out, progress=False)
    assert df["rows_on_disk"].tolist() == [0, 1, 2, 3, 4]
    assert len(_data_rows(out)) == 5


def test_resume_after_keyboard_interrupt(tmp_path):
    out = tmp_path / "res.csv"
    grid = {"x": list(range(6))}

    def interrupted(x, random_state):
        if x == 3:
            raise KeyboardInterrupt
        return {"y": x * 10 + random_state}

    with pytest.raises(KeyboardInterrupt):
        ex.run(interrupted, grid, random_states=[0], out=out, progress=False)
    saved = _data_rows(out)
    assert saved["x"].tolist() == [0, 1, 2]

    calls = []

    def full(x, random_state):
        calls.append(x)
        return {"y": x * 10 + random_state}

    df = ex.run(full, grid, random_states=[0], out=out, progress=False)
    assert sorted(calls) == [3, 4, 5]
    disk = _data_rows(out)
    assert len(disk) == 6 and disk["trial_id"].is_unique
    assert sorted(disk["x"]) == list(range(6))
    assert df["y"].tolist() == [0, 10, 20, 30, 40, 50]
    # a third run does nothing and returns everything
    calls.clear()
    df2 = ex.run(full, grid, random_states=[0], out=out, progress=False)
    assert calls == [] and len(df2) == 6
    # a larger grid only runs the new trials
    df3 = ex.run(full, {"x": list(range(8))}, random_states=[0], out=out, progress=False)
    assert sorted(calls) == [6, 7] and len(df3) == 8 and len(_data_rows(out)) == 8


def test_resume_after_killed_subprocess(tmp_path):
    out = tmp_path / "res.csv"
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(f"""
        import time
        from bnexplore.experiments import run

        def slow(x, random_state):
            time.sleep(0.15)
            return {{"y": x + random_state}}

        if __name__ == "__main__":
            run(slow, {{"x": list(range(20))}}, random_states=[0], out={str(out)!r}, progress=False)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            if out.exists() and len(out.read_text().splitlines()) >= 4:  # header + 3 rows
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(5)
    finally:
        if proc.poll() is None:
            proc.kill()
    first = _data_rows(out)
    assert 3 <= len(first) < 20
    # simulate a line cut in the middle of a write
    with open(out, "a") as fh:
        fh.write("7,0,abc")
    sys.path.insert(0, str(tmp_path))
    try:
        import job
        df = ex.run(job.slow, {"x": list(range(20))}, random_states=[0], out=out, progress=False)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("job", None)
    disk = _data_rows(out)
    assert len(disk) == 20 and disk["trial_id"].is_unique
    assert sorted(disk["x"]) == list(range(20))
    assert df["y"].tolist() == list(range(20))


def test_error_rows_recorded_and_retried(tmp_path):
    out = tmp_path / "res.csv"

    def flaky(x, random_state):
        if x in (0, 2):  # the very first trial fails: header grows later
            raise ValueError(f"bad x={x}")
        return {"y": x}

    with pytest.warns(RuntimeWarning, match="2 of 4 trials raised"):
        df = ex.run(flaky, {"x": [0, 1, 2, 3]}, out=out, progress=False)
    assert df["error"].tolist()[0] == "ValueError: bad x=0"
    assert df["error"].isna().tolist() == [False, True, False, True]
    assert df["y"].tolist()[1::2] == [1, 3]
    assert len(_data_rows(out)) == 4

    # resume keeps error rows by default ...
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = ex.run(lambda x, random_state: {"y": x}, {"x": [0, 1, 2, 3]}, out=out, progress=False)
    assert df["error"].notna().sum() == 2
    # ... and retries them on request
    df = ex.run(lambda x, random_state: {"y": x}, {"x": [0, 1, 2, 3]}, out=out, progress=False,
                retry_errors=True)
    assert df["error"].isna().all() and df["y"].tolist() == [0, 1, 2, 3]
    disk = _data_rows(out)
    assert len(disk) == 4 and disk["trial_id"].is_unique


@pytest.mark.parametrize("result, match", [
    (None, "returned NoneType"),
    ([], "empty list"),
    ({"v": [1, 2]}, "flat scalars"),
    ({"random_state": 1}, "clashes"),
    ({"x": 1}, "clashes"),
])
def test_bad_trial_results_become_error_rows(result, match):
    with pytest.warns(RuntimeWarning):
        df = ex.run(lambda x, random_state: result, {"x": [1]}, progress=False)
    assert df["error"].str.contains(match).all()


def test_list_of_dicts_gives_several_rows_per_trial(tmp_path):
    out = tmp_path / "res.csv"

    def per_fold(x, random_state):
        return [{"fold": f, "v": x * f} for f in range(3)]

    df = ex.run(per_fold, {"x": [1, 2]}, out=out, progress=False)
    assert len(df) == 6 and df["trial_id"].nunique() == 2
    assert df["v"].tolist() == [0, 1, 2, 0, 2, 4]
    df = ex.run(per_fold, {"x": [1, 2, 3]}, out=out, progress=False)
    assert len(df) == 9 and len(_data_rows(out)) == 9


def test_parquet_output_and_resume(tmp_path):
    out = tmp_path / "res.parquet"
    ex.run(noisy_mean, {"n": [10], "p": [0.5]}, random_states=[0, 1], out=out, progress=False)
    assert len(pd.read_parquet(out)) == 2
    calls = []

    def counted(n, p, random_state):
        calls.append(random_state)
        return noisy_mean(n, p, random_state)

    df = ex.run(counted, {"n": [10], "p": [0.5]}, random_states=[0, 1, 2], out=out, progress=False)
    assert calls == [2] and len(df) == 3 and len(pd.read_parquet(out)) == 3
    assert not list(tmp_path.glob(".*tmp"))  # no temporary files left behind


def test_no_resume_overwrites(tmp_path):
    out = tmp_path / "res.csv"
    ex.run(noisy_mean, {"n": [10], "p": [0.5]}, random_states=[0, 1], out=out, progress=False)
    ex.run(noisy_mean, {"n": [10], "p": [0.5]}, random_states=[0], out=out, progress=False,
           resume=False)
    assert len(_data_rows(out)) == 1


@pytest.mark.parametrize("kwargs, err, match", [
    ({"out": "x.txt"}, ValueError, r"\.csv or \.parquet"),
    ({"backend": "spark"}, ValueError, "backend"),
    ({"random_states": []}, ValueError, "random_states"),
    ({"random_states": [0.5]}, TypeError, "random_states"),
    ({"n_jobs": 0}, ValueError, "n_jobs"),
])
def test_run_argument_errors(tmp_path, kwargs, err, match):
    if "out" in kwargs:
        kwargs["out"] = tmp_path / kwargs["out"]
    with pytest.raises(err, match=match):
        ex.run(noisy_mean, {"n": [1], "p": [0.5]}, progress=False, **kwargs)


def test_not_a_results_file(tmp_path):
    out = tmp_path / "other.csv"
    out.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="trial_id"):
        ex.run(noisy_mean, {"n": [1], "p": [0.5]}, out=out, progress=False)


def test_local_parallel_matches_sequential(tmp_path):
    exp = ex.get("demo_sampling")
    grid, seeds = exp.settings("reduced")
    seq = ex.run(exp.trial, grid, random_states=seeds, progress=False)
    par = ex.run(exp.trial, grid, random_states=seeds, n_jobs=2, out=tmp_path / "p.csv",
                 progress=False)
    cols = [c for c in seq.columns if c != "elapsed_s"]
    pd.testing.assert_frame_equal(seq[cols], par[cols], check_dtype=False)


def test_dask_backend_matches_local(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    grid = {"n": [5, 50], "p": [0.3, 0.7]}
    local = ex.run(noisy_mean, grid, random_states=[0, 1], out=tmp_path / "l.csv", progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = ex.run(noisy_mean, grid, random_states=[0, 1], out=tmp_path / "d.csv",
                        backend="dask", scheduler=client, progress=False)
        # resume on dask: nothing left to do
        again = ex.run(noisy_mean, grid, random_states=[0, 1], out=tmp_path / "d.csv",
                       backend="dask", scheduler=client, progress=False)
        # a scheduler address instead of a Client
        by_address = ex.run(noisy_mean, grid, random_states=[0, 1], out=tmp_path / "a.parquet",
                            backend="dask", scheduler=cluster.scheduler_address,
                            progress=False)
    cols = [c for c in local.columns if c != "elapsed_s"]
    pd.testing.assert_frame_equal(by_address[cols], local[cols], check_dtype=False)
    pd.testing.assert_frame_equal(local[cols], remote[cols])
    pd.testing.assert_frame_equal(remote[cols], again[cols])
    assert len(_data_rows(tmp_path / "d.csv")) == 8


def rendezvous(x, folder, random_state):
    """Random state 1 leaves a mark at once; random state 0 waits (up to 120 s) for it: it
    finds the mark only if random state 1 ran while random state 0 was still running."""
    from pathlib import Path
    mark = Path(folder) / "seed1.mark"
    if random_state == 1:
        mark.write_text("1")
        return {"saw_seed1": True}
    deadline = time.time() + 120
    while time.time() < deadline and not mark.exists():
        time.sleep(0.02)
    return {"saw_seed1": mark.exists()}


def test_cli_seeds_run_at_once(tmp_path, capsys):
    """--seeds (the old name of --random-states) submits the trials of every selected random
    state together: a slow trial of random state 0 does not hold back random state 1's (one
    after another, random state 0 would time out)."""
    ex.register("t_rendezvous", rendezvous, grid={"x": [0], "folder": str(tmp_path)}, random_states=[0, 1])
    try:
        out = tmp_path / "r.csv"
        assert main(["run", "t_rendezvous", "--size", "full", "--seeds", "0,1", "--n-jobs", "2",
                     "--out", str(out), "--no-progress"]) == 0
    finally:
        ex.unregister("t_rendezvous")
    rows = _data_rows(out)
    assert sorted(rows["random_state"]) == [0, 1] and rows["saw_seed1"].all()


def numba_threads_trial(x, random_state):
    import numba
    return {"threads": numba.get_num_threads()}


def test_workers_run_numba_on_one_thread(tmp_path):
    """Every worker process (joblib) or Dask worker runs numba with one thread unless
    numba_threads says otherwise."""
    import numba
    distributed = pytest.importorskip("dask.distributed")
    grid = {"x": [0, 1, 2]}
    one = ex.run(numba_threads_trial, grid, n_jobs=2, progress=False)
    assert one["threads"].tolist() == [1, 1, 1]
    many = numba.config.NUMBA_NUM_THREADS
    two = ex.run(numba_threads_trial, grid, n_jobs=2, progress=False, numba_threads=2)
    assert two["threads"].tolist() == [min(2, many)] * 3
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = ex.run(numba_threads_trial, grid, backend="dask", scheduler=client, progress=False)
    assert on_dask["threads"].tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="numba_threads"):
        ex.run(numba_threads_trial, grid, numba_threads=0, progress=False)
    assert main(["run", "demo_sampling", "--numba-threads", "0", "--no-progress"]) == 2


# --------------------------------------------------------------------------- registry
def test_register_decorator_get_and_run_named(tmp_path):
    try:
        @ex.register("t_reg", grid={"n": [10, 20, 30]}, reduced_grid={"n": [10]},
                     random_states=range(3), reduced_random_states=[0])
        def coin(n, random_state):
            """Heads in n tosses."""
            return {"heads": int(np.random.default_rng(random_state).integers(0, 2, n).sum())}

        assert callable(coin) and coin(3, random_state=0)["heads"] >= 0
        exp = ex.get("t_reg")
        assert exp.description == "Heads in n tosses."
        assert exp.n_trials("reduced") == 1 and exp.n_trials("full") == 9
        assert "t_reg" in ex.names()
        assert len(ex.run_named("t_reg", progress=False)) == 1
        df = ex.run_named("t_reg", size="full", out=tmp_path / "f.csv", progress=False)
        assert len(df) == 9
        with pytest.raises(ValueError, match="size"):
            ex.run_named("t_reg", size="huge")
        with pytest.raises(ValueError, match="already registered"):
            ex.register("t_reg", lambda n, random_state: {}, grid={"n": [1]})
    finally:
        ex.unregister("t_reg")
    with pytest.raises(KeyError, match="unknown experiment 't_reg'.*demo_sampling"):
        ex.get("t_reg")


def test_register_validates():
    with pytest.raises(ValueError, match="name"):
        ex.register("has space", lambda random_state: {}, grid={"a": [1]})
    with pytest.raises(ValueError, match="reserved"):
        ex.register("t_bad", lambda random_state: {}, grid={"random_state": [1]})
    assert "t_bad" not in reg._REGISTRY


def test_modules_in_package_are_discovered(tmp_path, monkeypatch):
    pkg_dir = tmp_path / "extra"
    pkg_dir.mkdir()
    (pkg_dir / "zz_tmp_paper.py").write_text(textwrap.dedent("""
        from bnexplore.experiments import register

        def trial(a, random_state):
            '''Temporary experiment for the discovery test.'''
            return {"b": a + random_state}

        register("zz_tmp_paper", trial, grid={"a": [1, 2]})
    """))
    (pkg_dir / "zz_broken.py").write_text("raise RuntimeError('broken on purpose')\n")
    monkeypatch.setattr(ex, "__path__", list(ex.__path__) + [str(pkg_dir)])
    monkeypatch.setattr(reg, "_discovered", False)
    try:
        with pytest.warns(RuntimeWarning, match="zz_broken"):
            names = ex.names()
        assert "zz_tmp_paper" in names and "demo_sampling" in names
        assert ex.get("zz_tmp_paper").description.startswith("Temporary experiment")
    finally:
        ex.unregister("zz_tmp_paper")
        for m in ("bnexplore.experiments.zz_tmp_paper", "bnexplore.experiments.zz_broken"):
            sys.modules.pop(m, None)


def test_demo_experiment_is_real():
    r = ex.get("demo_sampling").trial(n_nodes=6, max_parents=2, n_samples=2000, random_state=1)
    assert r["loglik_test_true"] < 0 and r["n_arcs"] >= 1
    small = ex.get("demo_sampling").trial(n_nodes=6, max_parents=2, n_samples=50, random_state=1)
    # more data -> fitted CPTs closer to the truth (same network for the same random_state)
    assert small["n_arcs"] == r["n_arcs"]
    assert r["kl_estimate"] < small["kl_estimate"]


# --------------------------------------------------------------------------- CLI
def test_cli_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "demo_sampling" in out and "KL" in out and "reduced 4 trials" in out


def test_cli_run_and_resume(tmp_path, capsys):
    out = tmp_path / "demo.csv"
    assert main(["run", "demo_sampling", "--out", str(out), "--no-progress"]) == 0
    msg = capsys.readouterr().out
    assert "4 trials, 4 rows" in msg and str(out) in msg
    first = _data_rows(out)
    assert len(first) == 4 and first["error"].isna().all()
    assert main(["run", "demo_sampling", "--out", str(out), "--no-progress",
                 "--n-jobs", "1"]) == 0
    pd.testing.assert_frame_equal(_data_rows(out), first)


def test_cli_default_out(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "demo_sampling", "--no-progress"]) == 0
    assert (tmp_path / "demo_sampling_reduced.csv").exists()


def test_cli_seeds_and_where_run_part_of_the_full_run(tmp_path, capsys):
    out = tmp_path / "demo.csv"
    part = ["--where", "n_nodes=10", "--where", "n_samples=100,1000"]
    # demo_sampling's full run: 27 settings x random states 0-9; run 6 settings, 3 then 1
    assert main(["run", "demo_sampling", "--size", "full", "--random-states", "3,1", *part,
                 "--out", str(out), "--no-progress"]) == 0
    rows = _data_rows(out)
    assert set(rows["n_nodes"]) == {10} and set(rows["n_samples"]) == {100, 1000}
    assert sorted(rows["random_state"].tolist()) == [1] * 6 + [3] * 6   # both, every setting
    # the same trials as the full run's: resuming it with the same filter skips them
    again = ex.run_named("demo_sampling", size="full", out=out, progress=False,
                         random_states=[1, 3], where={"n_nodes": [10], "n_samples": [100, 1000]})
    pd.testing.assert_frame_equal(_data_rows(out), rows)
    assert set(again["trial_id"]) == set(rows["trial_id"])
    full_ids = set(ex.run_named("demo_sampling", size="full", out=None, progress=False,
                                random_states=[1], where={"n_nodes": [10]})["trial_id"])
    assert set(rows.loc[rows["random_state"] == 1, "trial_id"]) <= full_ids
    # usage errors: a random_state or a parameter the experiment does not have, bad specs
    assert main(["run", "demo_sampling", "--random-states", "0-2", "--out", str(out),
                 "--no-progress"]) == 2
    assert "random_states [2] are not among them" in capsys.readouterr().err
    assert main(["run", "demo_sampling", "--where", "colour=red", "--out", str(out),
                 "--no-progress"]) == 2
    assert "no grid parameter 'colour'" in capsys.readouterr().err
    assert main(["run", "demo_sampling", "--where", "n_nodes=7", "--out", str(out),
                 "--no-progress"]) == 2
    assert "no setting" in capsys.readouterr().err
    for bad in (["--seeds", "a-b"], ["--where", "n_nodes"]):
        with pytest.raises(SystemExit):
            main(["run", "demo_sampling", *bad])


def test_parse_seeds():
    from bnexplore.cli import parse_seeds

    assert parse_seeds("5-7,3,5") == [5, 6, 7, 3]
    assert parse_seeds("0") == [0]
    for bad in ("5-3", "-1", "x", ""):
        with pytest.raises(Exception, match="random states"):
            parse_seeds(bad)


def test_where_matches_text_and_numbers():
    from bnexplore.experiments.registry import _matches

    assert _matches(1.0, ["1"]) and _matches(5, ["5"]) and _matches("uniform", ["8", "uniform"])
    assert not _matches(5, ["50"]) and not _matches("8", ["uniform"])


def test_cli_errors(capsys, tmp_path):
    assert main(["run", "no_such_experiment"]) == 2
    err = capsys.readouterr().err
    assert "unknown experiment 'no_such_experiment'" in err and "demo_sampling" in err
    assert main(["run", "demo_sampling", "--out", str(tmp_path / "x.txt")]) == 2
    assert ".csv or .parquet" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["run", "demo_sampling", "--size", "huge"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        main([])


def test_header_rewrite_keeps_values_verbatim(tmp_path):
    out = tmp_path / "res.csv"

    def trial(code, random_state):
        if code == "007":
            raise RuntimeError("first trial fails")
        return {"v": 0.1}

    with pytest.warns(RuntimeWarning):
        ex.run(trial, {"code": ["007", "010"]}, out=out, progress=False)
    lines = out.read_text().splitlines()
    assert lines[0].startswith("code,random_state,trial_id,v,error,elapsed_s")
    assert lines[1].startswith("007,0,") and lines[2].startswith("010,0,")
    assert ",0.1,," in lines[2]
