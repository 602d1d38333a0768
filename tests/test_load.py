"""Reliability: concurrent sessions under load, and experiments killed mid-run.

* ``test_sessions_moving_sliders``: 10 Playwright browser contexts (separate users)
  against a dedicated loopback ``panel serve apps/`` move the max parents slider of
  "Learn a structure" for ~25 s and at least three moves each (about a minute on an idle
  machine; ``-m slow``: CI runs 4 sessions of 4 data sets for ~8 s, the same checks); no
  console errors (BokehJS stops at a message that refers to a model it has
  not been sent: see bnexplore/apps/_private.py), bounded growth of the server's memory
  (psutil), and every session shows the score of ITS OWN data set and setting
  (checked against a search run in this process).
* ``test_cli_run_killed_mid_run_resumes``: ``bnexplore run`` in a subprocess is killed
  (SIGKILL) mid-run; rerunning the same command finishes without losing or duplicating
  finished trials.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.parse
import warnings
from pathlib import Path

import pandas as pd
import pytest

from conftest import running_panel_server

from bnexplore.experiments.compare import PARAM_RANGES

#: the handle of the structure app's max parents slider (max_parents' declared range)
K_HANDLE = ('.noUi-handle[aria-valuemax="{0}.0"], .noUi-handle[aria-valuemax="{0}"]'
            .format(PARAM_RANGES["max_parents"][1]))

REPO = Path(__file__).resolve().parents[1]
#: (sessions, seconds of load): the full size, and CI's reduced size (still several
#: sessions per core, each on its own data set)
FULL = (10, 25.0)
REDUCED = (4, 8.0)
DATASETS = ["vote", "iris", "breast-cancer", "contact-lenses", "weather.nominal"]
MAX_RSS_GROWTH_MB = 600.0
MIN_ROUNDS = 3


def _reference_score(dataset: str, max_parents: int) -> str:
    """The score the structure app must show for (dataset, max_parents), as text."""
    import bnexplore as bx
    from bnexplore.apps.data import bundled_dataset

    df = bundled_dataset(dataset).frame
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bx.search.greedy_thick_thin(df, prior="K2", ess=1.0, order=None,
                                          max_parents=int(max_parents))
    return f"{res.score:.3f}"


def _text(page, sel) -> str:
    loc = page.locator(sel)
    return (loc.first.text_content() or "").strip() if loc.count() else ""


def _query(page) -> dict:
    return {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query
                                                       ).items()}


@pytest.mark.browser
@pytest.mark.timeout(900)   # wide: the machine may be busy
@pytest.mark.parametrize("size", [pytest.param(FULL, marks=pytest.mark.slow, id="full"),
                                  pytest.param(REDUCED, id="reduced")])
def test_sessions_moving_sliders(browser, size):
    n_sessions, load_seconds = size
    psutil = pytest.importorskip("psutil")
    with running_panel_server() as base:
        server = psutil.Process(base.pid)
        contexts, pages = [], []
        try:
            # warm up (JIT-compiles the scoring kernels) before measuring memory
            for i in range(n_sessions):
                ctx = browser.new_context(viewport={"width": 1280, "height": 800})
                pg = ctx.new_page()
                pg.set_default_timeout(60_000)
                errors: list[str] = []
                pg.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error"
                      else None)
                pg.on("pageerror", lambda exc, e=errors: e.append(str(exc)))
                pg.errors = errors
                pg.dataset = DATASETS[i % len(DATASETS)]
                pg.goto(f"{base}/apps?app=structure&dataset={pg.dataset}&max_parents=3")
                contexts.append(ctx)
                pages.append(pg)
            for pg in pages:
                pg.locator(".bnx-score").first.wait_for(timeout=150_000)
            rss_start = server.memory_info().rss / 1e6

            # load: every session moves its slider, round-robin, for load_seconds
            t_end = time.monotonic() + load_seconds
            moves = 0
            rss_mid = None
            # at least MIN_ROUNDS moves per session, however slow the machine is
            while time.monotonic() < t_end or moves < MIN_ROUNDS * n_sessions:
                for i, pg in enumerate(pages):
                    handle = pg.locator(K_HANDLE).first
                    handle.focus()
                    cur = int(float(handle.get_attribute("aria-valuenow") or 3))
                    up = (moves // n_sessions + i) % 2 == 0 and cur < PARAM_RANGES["max_parents"][1]
                    key = "ArrowRight" if up \
                        else ("ArrowLeft" if cur > 1 else "ArrowRight")
                    handle.press(key)
                    moves += 1
                pages[0].wait_for_timeout(300)
                if rss_mid is None and time.monotonic() > t_end - load_seconds / 2:
                    rss_mid = server.memory_info().rss / 1e6

            # settle: each session must show its own data set and its own setting
            deadline = time.monotonic() + 90
            checked = 0
            refs: dict[tuple[str, int], str] = {}
            for pg in pages:
                handle = pg.locator(K_HANDLE).first
                handle_k = int(float(handle.get_attribute("aria-valuenow")))
                while (time.monotonic() < deadline
                       and _query(pg).get("max_parents") != str(handle_k)):
                    pg.wait_for_timeout(100)     # the address bar follows the server
                want_k = int(_query(pg).get("max_parents", 0))
                assert want_k == handle_k, "the URL and the slider of a session disagree"
                assert _query(pg)["dataset"] == pg.dataset
                key = (pg.dataset, want_k)
                if key not in refs:
                    refs[key] = _reference_score(*key)
                while time.monotonic() < deadline and _text(pg, ".bnx-score") != refs[key]:
                    pg.wait_for_timeout(250)
                assert _text(pg, ".bnx-score") == refs[key], (pg.dataset, want_k)
                assert pg.dataset in _text(pg, ".bnx-source")
                checked += 1
            rss_end = server.memory_info().rss / 1e6
            assert checked == n_sessions and moves >= MIN_ROUNDS * n_sessions
            for pg in pages:
                assert pg.errors == [], pg.errors[:3]
            growth = rss_end - rss_start
            assert growth < MAX_RSS_GROWTH_MB, (rss_start, rss_mid, rss_end)
            # the second half of the run grows much less than a leak would
            assert rss_end - (rss_mid or rss_start) < MAX_RSS_GROWTH_MB / 2, \
                (rss_start, rss_mid, rss_end)
        finally:
            for ctx in contexts:
                ctx.close()


# ------------------------------------------------------------------ killed experiment
TRIAL_MODULE = textwrap.dedent('''
    import time

    def slow_trial(i, random_state):
        time.sleep(0.15)
        return {"value": i * 10 + random_state, "pid": __import__("os").getpid()}
''')

RUNNER = textwrap.dedent('''
    import sys
    sys.path.insert(0, {here!r})
    from slowtrial import slow_trial
    from bnexplore import experiments
    from bnexplore.cli import main
    experiments.register("killtest_slow", slow_trial, grid={{"i": list(range(40))}},
                         random_states=[0, 1])
    sys.exit(main(["run", "killtest_slow", "--size", "full", "--out", {out!r},
                   "--no-progress"]))
''')


def test_cli_run_killed_mid_run_resumes(tmp_path):
    (tmp_path / "slowtrial.py").write_text(TRIAL_MODULE)
    out = tmp_path / "results.csv"
    script = tmp_path / "run.py"
    script.write_text(RUNNER.format(here=str(tmp_path), out=str(out)))

    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if out.exists() and out.read_text().count("\n") >= 12:   # header + >10 trials
                break
            if proc.poll() is not None:
                pytest.fail(f"run finished before it could be killed: "
                            f"{proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)          # no cleanup, no KeyboardInterrupt
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = pd.read_csv(out, dtype={"trial_id": str})
    assert 10 <= len(before) < 80, "the run was not killed mid-way"

    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    after = pd.read_csv(out, dtype={"trial_id": str})
    assert len(after) == 80 and after["trial_id"].is_unique          # nothing duplicated
    assert set(zip(after["i"], after["random_state"])) == {(i, s) for i in range(40) for s in (0, 1)}
    assert (after["value"] == after["i"] * 10 + after["random_state"]).all()
    # the trials finished before the kill were kept as they were, not rerun
    kept = after.set_index("trial_id").loc[before["trial_id"], ["pid", "elapsed_s"]]
    pd.testing.assert_frame_equal(kept.reset_index(drop=True),
                                  before[["pid", "elapsed_s"]].reset_index(drop=True),
                                  check_dtype=False)
    assert set(after["pid"]) - set(before["pid"]), "the rerun ran the remaining trials"
    assert after["error"].isna().all()
