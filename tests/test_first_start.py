"""First start: the kernel warm-up (bnexplore.warmup) and the apps' "preparing" state."""
from __future__ import annotations

import os
import re
import threading
import tempfile
import time
from pathlib import Path

import pytest

from bnexplore import warmup


@pytest.fixture(autouse=True)
def _own_pointer_folder(tmp_path_factory, monkeypatch):
    # the warm-up's pointer file (bnexplore's cache folder): one per test
    monkeypatch.setenv("BNX_CACHE_DIR", str(tmp_path_factory.mktemp("bnx-cache")))


def test_tiny_frame_has_every_kind_of_column():
    df = warmup.tiny_frame()
    assert df.attrs["target"] == "class"
    arities = sorted({len(df[c].cat.categories) for c in df.columns})
    assert arities == [2, 3, 4]            # binary and many-valued kernels paths
    assert df["class"].nunique() == 2


def test_warm_up_runs_named_steps_and_refuses_unknown_ones():
    assert list(warmup.warm_up(steps=["scores"])) == ["scores"]
    with pytest.raises(ValueError, match="unknown warm-up steps"):
        warmup.warm_up(steps=["no-such-step"])
    assert list(warmup.STEPS)[0] == "scores"


def test_warm_up_keeps_going_after_a_failing_step(monkeypatch):
    def boom(df):
        raise RuntimeError("broken step")

    monkeypatch.setitem(warmup.STEPS, "broken", boom)
    got = warmup.warm_up(steps=["broken", "scores"], pause=0.0)
    assert list(got) == ["scores"]
    assert "broken step" in warmup.warm_up.errors["broken"]


def test_watchers_see_status_changes(monkeypatch):
    monkeypatch.setitem(warmup._STATE, "status", "loading")
    seen = []
    stop = warmup.watch(seen.append)
    warmup._set_status("compiling")
    warmup._set_status("compiling")        # no change, no call
    stop()
    warmup._set_status("loading")          # unwatched
    assert seen == ["compiling"]


def test_the_kernels_view_follows_the_warm_up():
    import bnexplore.apps as bxa
    from bnexplore.apps._base import PREPARING_TEXT

    app = bxa.LearnStructure()
    app.kernels = "compiling"
    view = app.kernels_view()
    assert view.visible and view.object == PREPARING_TEXT
    assert "first start only" in PREPARING_TEXT
    app.kernels = "ready"
    assert not app.kernels_view().visible
    # outside a server nothing is started
    assert not warmup._THREAD


@pytest.mark.browser
def test_views_say_kernels_are_being_prepared_until_they_are(browser, monkeypatch):
    """A slow first compilation (simulated: the warm-up holds numba's compiler lock while
    a file exists) shows the "preparing" text in the views; it goes away with the plots."""
    from conftest import running_panel_server

    hold = Path(tempfile.mkdtemp(prefix="bnx-hold-")) / "hold"
    hold.write_text("")
    monkeypatch.setenv(warmup.TEST_HOLD_ENV, str(hold))
    try:
        with running_panel_server() as base:
            page = browser.new_page()
            try:
                page.goto(f"{base}/apps?app=structure", wait_until="domcontentloaded",
                          timeout=120_000)
                text = page.get_by_text(re.compile(r"Preparing the kernels \(first start only\)"))
                text.first.wait_for(timeout=120_000)
                time.sleep(1.0)                  # still there while the compiler is busy
                assert text.count() >= 1
                assert page.locator("canvas").count() == 0
                hold.unlink()                    # the "compilation" ends
                page.locator("canvas").first.wait_for(state="attached", timeout=120_000)
                deadline = time.monotonic() + 60
                while text.count() and time.monotonic() < deadline:
                    time.sleep(0.2)
                assert text.count() == 0
            finally:
                page.close()
    finally:
        if hold.exists():
            hold.unlink()
        os.rmdir(hold.parent)


def test_no_kernel_is_parallel_and_calls_are_unliteral():
    """parallel=True compiled 3-5x slower: the kernels the apps' first plots need are
    serial (averaging over all orders keeps its parallel kernels, and the guard)."""
    import importlib

    from numba.core.registry import CPUDispatcher

    from bnexplore import _parallel

    n = 0
    for name in ("scores", "averaging", "_order_posterior", "_procedure1", "_mstar", "_mstar_counts", "mixtures", "_mtree",
                 "_bits", "clustering", "search"):
        mod = importlib.import_module(f"bnexplore.{name}")
        for attr, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher):
                n += 1
                assert not obj.targetoptions.get("parallel"), f"{name}.{attr}"
                assert getattr(obj, "_bnx_unliteral", False), f"{name}.{attr}"
    assert n >= 50
    dp = importlib.import_module("bnexplore._order_dp")
    if any(isinstance(o, CPUDispatcher) and o.targetoptions.get("parallel") for o in vars(dp).values()):
        assert _parallel.PARALLEL_KERNELS is True   # the guard must lock on workqueue


def test_stamp_names_the_code_and_sits_in_the_kernel_cache():
    path = warmup.stamp_path()
    assert path is not None and path.endswith(".stamp")
    assert os.path.dirname(path) == warmup._sentinel()._cache.cache_path
    from bnexplore import scores
    assert warmup._sentinel() in vars(scores).values()
    assert warmup.stamp_path() == path                 # the same code: the same stamp


def test_a_later_start_skips_the_warm_up(tmp_path, monkeypatch):
    """With the stamp of a complete warm-up, starting the warm-up spawns no process and
    loads nothing: the status is "ready" at once. Without it, the process runs."""
    import subprocess

    stamp = tmp_path / "bnexplore-warm-up-x.stamp"
    monkeypatch.setattr(warmup, "stamp_path", lambda: str(stamp))
    monkeypatch.setattr(warmup, "_kernels_next_to", lambda stamp: True)
    spawned, loaded = [], []

    class NoProcess:
        def __init__(self, *a, **k):
            spawned.append(a)
            self.stdout = iter(["ready\n"])

        def wait(self):
            return 0

        def poll(self):
            return 0

    monkeypatch.setattr(subprocess, "Popen", NoProcess)
    monkeypatch.setattr(warmup, "warm_up", lambda *a, **k: loaded.append(1) or {})
    for warm in (False, True):
        if warm:
            warmup._write_stamp()
            assert stamp.exists() and warmup.is_warm()
        spawned.clear(), loaded.clear()
        monkeypatch.setattr(warmup, "_THREAD", [])
        monkeypatch.setattr(warmup, "_DONE", threading.Event())
        monkeypatch.setitem(warmup._STATE, "status", "not started")
        warmup.start_warm_up().join(60)
        assert warmup.status() == "ready"
        assert (len(spawned), len(loaded)) == ((0, 0) if warm else (1, 1))


def test_a_new_stamp_replaces_the_old_ones(tmp_path, monkeypatch):
    old = tmp_path / "bnexplore-warm-up-old.stamp"
    old.write_text("")
    monkeypatch.setattr(warmup, "stamp_path", lambda: str(tmp_path / "bnexplore-warm-up-new.stamp"))
    warmup._write_stamp()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bnexplore-warm-up-new.stamp"]


def test_no_stamp_or_no_cache_is_not_warm(tmp_path, monkeypatch):
    stamp = tmp_path / "bnexplore-warm-up-x.stamp"
    monkeypatch.setattr(warmup, "stamp_path", lambda: str(stamp))
    monkeypatch.setattr(warmup, "_kernels_next_to", lambda stamp: True)
    assert not warmup.is_warm()
    stamp.write_text("")
    assert warmup.is_warm()
    monkeypatch.setattr(warmup, "_kernels_next_to", lambda stamp: False)   # cache emptied by hand
    assert not warmup.is_warm()
    monkeypatch.setattr(warmup, "stamp_path", lambda: None)           # no numba cache at all
    assert not warmup.is_warm()


def test_a_later_start_checks_the_stamp_without_importing_numba(tmp_path):
    """A complete warm-up leaves a pointer to its stamp: a later start's check and its
    warm-up thread then import no numba (half a second of a first page). Without the
    kernels next to the stamp it is not warm."""
    import subprocess
    import sys

    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "scores.some_kernel-1.py311.nbi").write_text("")
    stamp = kernels / "bnexplore-warm-up-x.stamp"
    stamp.write_text("")
    env = dict(os.environ, BNX_CACHE_DIR=str(tmp_path / "results"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    code = ("import sys\n"
            "from bnexplore import warmup\n"
            "if sys.argv[1] == 'point':\n"
            "    warmup._write_pointer(sys.argv[2])\n"
            "elif sys.argv[1] == 'peek':\n"
            "    print(warmup.is_warm())\n"
            "else:\n"
            "    warmup.start_warm_up().join(60)\n"
            "    print(warmup.is_warm(), warmup.status(), 'numba' in sys.modules)\n")

    def run(*args):
        return subprocess.run([sys.executable, "-c", code, *args], env=env, check=True,
                              capture_output=True, text=True).stdout.split()

    run("point", str(stamp))
    assert run("check") == ["True", "ready", "False"]
    (kernels / "scores.some_kernel-1.py311.nbi").unlink()      # the cache emptied by hand
    # asked without starting the warm-up: a started one would compile every kernel into
    # the empty NUMBA_CACHE_DIR (a minute's join, and a stamp if it finished in time)
    assert run("peek") == ["False"]


def test_nominal_data_sets_load_without_scikit_learn():
    """The apps' default data (vote) needs no discretiser: scikit-learn's import (a second
    or more of a first view) is left for the data that has numeric columns."""
    import subprocess
    import sys

    code = ("import sys, bnexplore as bx\n"
            "df = bx.datasets.load('vote', discretize='mdl', missing='state')\n"
            "print(df.attrs['cut_points'], 'sklearn' in sys.modules)\n")
    repo = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True,
                         check=True, env=dict(os.environ, PYTHONPATH=str(repo)))
    assert out.stdout.split() == ["{}", "False"]


@pytest.mark.parametrize("discretize", ["mdl", "quantile"])
def test_nominal_data_sets_are_what_the_discretisers_give(discretize):
    import pandas as pd

    import bnexplore as bx
    from bnexplore.data import EqualFrequencyDiscretizer, MDLDiscretizer

    nominal = 0
    for name in bx.datasets.names():
        raw = bx.datasets.load(name, missing="state")
        target = raw.attrs["target"]
        X = raw.drop(columns=[target])
        if any(not isinstance(X[c].dtype, pd.CategoricalDtype) for c in X.columns):
            continue
        nominal += 1
        tr = (MDLDiscretizer(columns="numeric").fit(X, raw[target]) if discretize == "mdl"
              else EqualFrequencyDiscretizer(columns="numeric").fit(X))
        expected = raw.copy()
        for c, col in tr.transform(X).items():
            expected[c] = col
        got = bx.datasets.load(name, discretize=discretize, missing="state")
        pd.testing.assert_frame_equal(got, expected)
        assert got.attrs["cut_points"] == tr.cut_points_ == {}
    assert nominal >= 3


def test_the_warm_up_reaches_every_order_averaging_of_the_apps():
    """The All orders app's exact averaging and order MCMC are warm-up steps (their
    kernels compiled on the first start after a complete warm-up), and checking a later
    start (``import bnexplore.warmup``) imports neither numpy nor pandas."""
    import subprocess
    import sys

    import inspect

    from bnexplore.apps.all_orders import EXACT, MCMC, AllOrders

    assert warmup.STEPS["all orders"].apps == ("all_orders",)      # the app says what to warm
    assert {s["method"] for s in AllOrders.warm_settings} == {EXACT, MCMC}
    repo = Path(__file__).resolve().parents[1]
    code = "import sys; from bnexplore import warmup; print('numpy' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True,
                         check=True, env=dict(os.environ, PYTHONPATH=str(repo)))
    assert out.stdout.split() == ["False", "False"]
