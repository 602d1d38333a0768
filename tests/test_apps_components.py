"""The apps as components (bnexplore.apps): data, uploads, links, caching, without a server."""
from __future__ import annotations

import html
import subprocess
import sys
import threading
import time
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import pytest

import bnexplore.apps as bxa
from bnexplore.apps._base import NOT_IN_LINK, USER
from bnexplore.apps._cache import cached
from bnexplore.apps.data import bundled_dataset, prepare_table


def survey(n: int = 60, seed: int = 0) -> pd.DataFrame:
    """A user's table: an ID, a name, free text, a continuous column unrelated to the
    class, a related one, two nominal answers and the class (last)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return pd.DataFrame({
        "ID": np.arange(1000, 1000 + n),
        "name": [f"person {i}" for i in range(n)],
        "comment": [f"I think that answer {i} is fine" for i in range(n)],
        "Age": rng.normal(40, 10, n).round(1),
        "dose": y * 3.0 + rng.normal(0, 0.3, n),
        "smoker": np.where(rng.random(n) < 0.3 + 0.4 * y, "yes", "no"),
        "region": rng.choice(["north", "south", "east"], n),
        "outcome": np.where(y == 1, "ill", "well"),
    })


def query_of(app) -> dict:
    """The app's link query as Panel's location reads it back from the address bar."""
    from panel.util import parse_query

    return parse_query("?" + urlencode(app.query()))


# ------------------------------------------------------------------ package
def test_import_bnexplore_stays_light():
    code = ("import sys, bnexplore as bx; bx.apps; "
            "print('panel' in sys.modules, 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    assert out == ["False", "False"]


def test_unknown_app_and_bad_data_are_refused():
    with pytest.raises(ValueError, match="unknown app 'nope'"):
        bxa.app_class("nope")
    with pytest.raises(TypeError, match="DataFrame or a bundled name"):
        bxa.LearnStructure(data=[1, 2, 3])


# ------------------------------------------------------------------ user data
def test_user_table_class_defaults_and_left_out_columns():
    p = prepare_table(survey())
    assert p.target == "outcome"                  # the last usable column
    assert "ID" not in p.frame and "name" not in p.frame and "comment" not in p.frame
    notes = "\n".join(p.notes)
    assert "ID: an identifier" in notes and "name: an identifier" in notes
    assert "comment: free text" in notes
    assert "Age: no cut point found for the class; dropped" in notes
    assert "Age" not in p.frame and "dose" in p.frame
    q = prepare_table(survey(), binning="equal-frequency", bins=3)
    assert "Age" in q.frame and len(q.frame["Age"].cat.categories) == 3
    # a declared class (ARFF) wins over the last column
    raw = survey()
    raw.attrs["target"] = "smoker"
    assert prepare_table(raw).target == "smoker"


def test_order_averaging_never_offers_an_id_column_as_class():
    raw = survey().drop(columns=["outcome"])
    raw["outcome_code"] = np.arange(len(raw))    # the last column is an identifier
    app = bxa.OrderAveraging(raw)
    assert "ID" not in app.param.target.objects
    assert "outcome_code" not in app.param.target.objects
    assert app.target == "region"                 # the last usable column
    shown = html.unescape(app.data_view().object)
    assert "ID: an identifier" in shown and "outcome_code: an identifier" in shown


def test_a_link_to_uploaded_data_says_so_instead_of_showing_bundled_data():
    app = bxa.OrderAveraging(source=USER)
    assert app.data.frame is None and app.data.error == NOT_IN_LINK
    view = app.summary_view()
    assert type(view).__name__ == "Alert" and "upload the file again" in view.object
    assert "vote" not in app.data_view().object and "upload the file again" in html.unescape(
        app.data_view().object)
    # the same through a link applied to a session
    other = bxa.LearnStructure()
    other.apply_query({"source": USER, "max_parents": 2})
    assert other.data.error == NOT_IN_LINK and other.max_parents == 2


def test_upload_creates_the_same_app_on_the_new_data():
    app = bxa.LearnStructure("vote")
    csv = survey().to_csv(index=False).encode()
    app.load_file(csv, "survey.csv")
    assert app.source == USER and app.data.target == "outcome"
    assert "survey.csv" in app.data.label and "dose" in app.data.features
    summary = app.summary_view().object
    assert "arcs" in summary
    # a file that cannot be read leaves the data as they were and says why
    before = app.data
    app.load_file(b"\x00\x01binary", "bad.csv")
    assert app.data is before and app.upload_status.startswith("Cannot use this file")
    app.load_file(b"", "empty.csv")
    assert "empty" in app.upload_status
    # choosing equal-frequency bins keeps the column MDL dropped
    app.binning = "equal-frequency"
    assert "Age" in app.data.features


# ------------------------------------------------------------------ data change
def test_a_data_change_sets_data_target_and_dependents_in_one_step():
    app = bxa.OrderAveraging("vote", n=9)
    seen = []
    app.param.watch(lambda *e: seen.append((app.data.label, app.target, app.n,
                                             app.param.n.bounds)), ["data", "target", "n"])
    app.source = "network sample"
    app.network = "asia"
    assert app.data.label == "asia, 1000 samples" and app.target == "lung"
    # each step: one call, every value already of the new data (asia has 7 features)
    assert seen[-1] == ("asia, 1000 samples", "lung", 7, (1, 7))
    for label, target, n, (lo, hi) in seen:
        assert n <= hi and (label.startswith("vote") == (target == "Class"))


# ------------------------------------------------------------------ links
@pytest.mark.parametrize("name", ["order_averaging", "structure"])
def test_every_parameter_round_trips_through_the_link(name):
    cls = bxa.app_class(name)
    app = cls()
    changed = {"source": "network sample", "network": "child", "sample_size": 500}
    for p in app.controls:             # every control moved off its default
        obj = app.param[p]
        if hasattr(obj, "objects") and obj.objects:
            changed[p] = [o for o in obj.objects if o != getattr(app, p)][0]
        elif isinstance(getattr(app, p), bool):
            changed[p] = not getattr(app, p)
        else:
            lo, hi = obj.bounds
            changed[p] = hi if hi != getattr(app, p) else lo
    app.param.update(**changed)
    app.target = [c for c in app.param.target.objects if c != app.target][0]
    fresh = cls()
    fresh.apply_query(query_of(app))
    for p in app.url_parameters():
        assert getattr(fresh, p) == getattr(app, p), p
    assert fresh.data.key == app.data.key


def test_a_link_with_a_refused_value_keeps_the_default():
    app = bxa.OrderAveraging()
    app.apply_query({"dataset": "no-such-data", "max_parents": 99, "n": 2, "target": "nope"})
    assert (app.dataset, app.max_parents, app.n, app.target) == ("vote", 2, 2, "Class")
    app.apply_query({"dataset": "iris", "target": "class"})
    assert app.data.key.startswith("dataset:iris") and app.target == "class"


# ------------------------------------------------------------------ cache
def test_one_computation_per_setting_for_all_sessions():
    calls = []

    @cached(disk=False)
    def slow(data, k):
        calls.append(k)
        time.sleep(0.3)
        return k * 2

    vote = bundled_dataset("vote")
    out = []
    threads = [threading.Thread(target=lambda: out.append(slow(vote, 3))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [6] * 4 and calls == [3]
    assert slow(vote, 4) == 8 and calls == [3, 4]


def test_results_of_bundled_data_are_kept_on_disk(tmp_path):
    (tmp_path / "kept_mod.py").write_text(
        "from bnexplore.apps._cache import cached\n"
        "@cached\n"
        "def kept(data, k):\n"
        "    print('computed')\n"
        "    return {'k': k, 'rows': len(data.frame)}\n")
    code = ("import kept_mod; from bnexplore.apps.data import bundled_dataset; "
            "print(kept_mod.kept(bundled_dataset('vote'), 1))")
    env = dict(__import__("os").environ, BNX_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=f"{tmp_path}:{__import__('os').environ.get('PYTHONPATH', '')}")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, timeout=300, check=True).stdout.split("\n")
            for _ in range(2)]
    assert runs[0][:2] == ["computed", "{'k': 1, 'rows': 435}"]
    assert runs[1][0] == "{'k': 1, 'rows': 435}"          # read back: not computed


# ------------------------------------------------------------------ dashboard
def test_show_builds_every_app_on_the_users_table():
    dash = bxa.show(survey(), apps=["structure", "order_averaging"])
    assert [a.data.target for a in dash.apps] == ["outcome", "outcome"]
    tabs = dash.__panel__()
    assert len(tabs) == 2 and [a.title for a in dash.apps] == ["Learn a structure",
                                                               "Order averaging"]


# ------------------------------------------------------------------ warm-up
def test_the_warm_up_asks_every_app_what_to_warm():
    from bnexplore import warmup

    warmed = {a for step in warmup.STEPS.values() for a in getattr(step, "apps", ())}
    assert warmed == set(bxa.APPS)
    frame = warmup.tiny_frame()
    for name in bxa.APPS:
        bxa.app_class(name).warm(frame)          # computes, without an error
    assert warmup.warm_up(steps=["structure", "mixtures"]).keys() == {"structure", "mixtures"}
    assert not warmup.warm_up.errors
