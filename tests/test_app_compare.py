"""Classifier comparison: cross-validation routine, plot builders and the browser app."""
from __future__ import annotations

import json
import threading
import time
import urllib.parse
import urllib.request
import warnings

import numpy as np
import pandas as pd
import pytest

import bnexplore as bx
from bnexplore.experiments import compare as cmp
from bnexplore.viz import compare as vc


@pytest.fixture(scope="module")
def iris():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bx.datasets.load("iris", discretize="mdl")


@pytest.fixture(scope="module")
def vote():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bx.datasets.load("vote", discretize="mdl", missing="state")


# ------------------------------------------------------------------ cross-validation
def test_pooled_predictions_match_a_manual_loop(iris):
    from sklearn.model_selection import StratifiedKFold

    from bnexplore.classifiers import NaiveBayes

    res = cmp.cross_validate_classifiers(iris, "class", ["SNN", "LogReg"], n_splits=4, random_state=3)
    X, y = iris.drop(columns="class"), iris["class"]
    skf = StratifiedKFold(4, shuffle=True, random_state=3)
    manual = np.zeros((len(y), 3))
    for tr, te in skf.split(np.zeros(len(y)), y.astype(str)):
        m = NaiveBayes(prior="K2").fit(X.iloc[tr], y.iloc[tr])
        manual[te] = m.predict_proba(X.iloc[te])
    np.testing.assert_allclose(res.proba["SNN"], manual, rtol=1e-12, atol=1e-12)
    assert list(res.classes) == list(y.cat.categories)
    met = res.metrics()
    assert met.loc["SNN", "auc"] == pytest.approx(bx.metrics.auc(y, manual, y.cat.categories))
    assert met.loc["SNN", "error"] == pytest.approx(
        np.mean(np.asarray(y.cat.categories)[manual.argmax(1)] != np.asarray(y)))
    assert met.loc["SNN", "log_loss"] == pytest.approx(
        bx.metrics.log_loss(y, manual, y.cat.categories))
    # every row is predicted exactly once: folds partition the rows
    assert sorted(np.bincount(res.folds).tolist()) == sorted([38, 38, 37, 37])


def test_ovr_auc_and_roc_agree_with_sklearn(iris):
    from sklearn.metrics import roc_auc_score

    res = cmp.cross_validate_classifiers(iris, "class", ["SNN", "kNN"], n_splits=3, random_state=0)
    ovr = res.ovr_auc()
    y = np.asarray(iris["class"].astype(str))
    for key, p in res.proba.items():
        for j, c in enumerate(res.classes):
            assert ovr.loc[key, str(c)] == pytest.approx(roc_auc_score(y == c, p[:, j]))
        # Hand & Till's M equals sklearn's one-vs-one macro AUC
        assert res.metrics().loc[key, "auc"] == pytest.approx(
            roc_auc_score(y, p, multi_class="ovo", labels=list(res.classes)))
    curves = res.roc("Iris-versicolor")
    fpr, tpr, a = curves["kNN"]
    assert fpr[0] == 0 and tpr[-1] == 1
    assert a == pytest.approx(np.trapezoid(tpr, fpr))
    with pytest.raises(ValueError, match="positive class"):
        res.roc("no-such-class")


def test_delta_against_the_best_per_class():
    y = np.array(["a"] * 5 + ["b"] * 5, dtype=object)
    good = np.c_[np.linspace(0.9, 0.6, 10), np.linspace(0.1, 0.4, 10)]
    rng = np.random.default_rng(0)
    noisy = rng.dirichlet([1, 1], size=10)
    res = cmp.CVResult(y=y, classes=np.array(["a", "b"], dtype=object),
                       proba={"good": good, "noisy": noisy})
    met = res.metrics()
    assert met.loc["good", "auc"] == pytest.approx(1.0)
    assert met.loc["good", "delta"] == pytest.approx(0.0)
    r = bx.metrics.auc((y == "b").astype(int), noisy[:, 1], classes=[0, 1])
    # best is perfect: delta = (1 - r) / (1 - r) = 1 for the noisy one
    assert met.loc["noisy", "delta"] == pytest.approx((1.0 - r) / (1.0 - r))
    assert list(met.index) == ["good", "noisy"]          # sorted by AUC


def test_progress_and_cancel(iris):
    seen, ev = [], threading.Event()

    def cb(done, total, msg):
        seen.append((done, total))
        if done == 3:        # SNN's three folds finished: cancel during TAN
            ev.set()

    res = cmp.cross_validate_classifiers(iris, "class", ["SNN", "TAN", "AODE"], n_splits=3,
                                         progress_callback=cb, cancel_event=ev)
    assert res.cancelled
    assert list(res.proba) == ["SNN"]                    # finished work is kept
    assert seen[0] == (0, 9) and (3, 9) in seen
    done = [d for d, _ in seen]
    assert done == sorted(done)


def test_a_failing_classifier_is_isolated(iris, monkeypatch):
    def boom(**_):
        raise RuntimeError("deliberate failure")
    spec = cmp.ClassifierSpec("BOOM", "always fails", "test", boom)
    monkeypatch.setitem(cmp.CLASSIFIERS, "BOOM", spec)
    res = cmp.cross_validate_classifiers(iris, "class", ["BOOM", "SNN"], n_splits=2)
    assert "deliberate failure" in res.errors["BOOM"]
    assert list(res.proba) == ["SNN"]
    table = cmp.metric_table(res)
    assert set(table["classifier"]) == {"SNN", "BOOM"}
    assert table.set_index("classifier").loc["BOOM", ["auc", "error"]].isna().all()


def test_cache_skips_finished_classifiers(iris):
    cache, calls = {}, []
    cmp.cross_validate_classifiers(iris, "class", ["SNN", "SFAN"], n_splits=2, penalty=1.0,
                                   cache=cache)
    assert len(cache) == 3          # two classifiers and the folds
    res = cmp.cross_validate_classifiers(
        iris, "class", ["SNN", "SFAN"], n_splits=2, penalty=3.0, cache=cache,
        progress_callback=lambda d, t, m: calls.append(m))
    # only SFAN (which uses penalty) was refitted
    assert all(m.startswith("SFAN") for m in calls if "fold" in m)
    assert len(cache) == 4 and list(res.proba) == ["SNN", "SFAN"]


def test_cache_entries_of_before_0_2_0_are_found(iris):
    """A cache (e.g. the Compare app's disk cache) filled when the shared parameters were
    keyed k, alpha and w: its entries are found, not refitted, and stored again under
    the new names."""
    new = {}
    first = cmp.cross_validate_classifiers(iris, "class", ["SNN", "SFAN", "GTT"], n_splits=2,
                                           penalty=1.0, cache=new)
    assert first.settings["penalty"] == 1.0 and first.settings["max_parents"] == 2
    assert not {"k", "alpha", "w"} & set(first.settings)
    old_names = {v: k for k, v in cmp.LEGACY_PARAMS.items()}
    old = {}
    for key, value in new.items():
        if len(key) == 6:               # a classifier's entry: (.., clf, uses, ..)
            key = key[:3] + (tuple((old_names.get(p, p), v) for p, v in key[3]),) + key[4:]
        old[key] = value
    assert any(p == "alpha" for key in old if len(key) == 6 for p, _ in key[3])
    calls = []
    again = cmp.cross_validate_classifiers(iris, "class", ["SNN", "SFAN", "GTT"], n_splits=2,
                                           penalty=1.0, cache=old,
                                           progress_callback=lambda d, t, m: calls.append(m))
    assert not [m for m in calls if "fold" in m]          # nothing refitted
    for clf in first.proba:
        np.testing.assert_array_equal(again.proba[clf], first.proba[clf])
    assert set(new) <= set(old)                           # stored under the new keys too


def test_a_cached_run_computes_no_folds(iris, monkeypatch):
    cache = {}
    first = cmp.cross_validate_classifiers(iris, "class", ["SNN", "NB"], n_splits=3, random_state=2,
                                           cache=cache)

    def no_folds(*args, **kwargs):
        raise AssertionError("folds computed again")
    monkeypatch.setattr(cmp, "stratified_folds", no_folds)
    again = cmp.cross_validate_classifiers(iris, "class", ["NB", "SNN"], n_splits=3, random_state=2,
                                           cache=cache)
    np.testing.assert_array_equal(again.folds, first.folds)
    assert list(again.proba) == ["NB", "SNN"]
    for key in first.proba:
        np.testing.assert_array_equal(again.proba[key], first.proba[key])
    pd.testing.assert_frame_equal(again.fold_metrics().sort_values(["classifier", "fold"],
                                                                   ignore_index=True),
                                  first.fold_metrics().sort_values(["classifier", "fold"],
                                                                   ignore_index=True))
    with pytest.raises(AssertionError, match="folds computed"):   # another seed: new folds
        cmp.cross_validate_classifiers(iris, "class", ["NB"], n_splits=3, random_state=3, cache=cache)


def test_runner_backend_gives_the_same_predictions(iris):
    a = cmp.cross_validate_classifiers(iris, "class", ["SNN", "AODE"], n_splits=3, random_state=1)
    b = cmp.cross_validate_classifiers(iris, "class", ["SNN", "AODE"], n_splits=3, random_state=1,
                                       backend="local", n_jobs=1)
    for key in a.proba:
        np.testing.assert_allclose(a.proba[key], b.proba[key])


@pytest.mark.parametrize("kwargs, match", [
    ({"classifiers": []}, "no classifier selected"),
    ({"classifiers": ["XYZ"]}, "unknown classifiers"),
    ({"max_parents": 0}, r"max_parents=0 is out of range"),
    ({"penalty": -1.0}, r"penalty=-1.0 is out of range"),
    ({"queue_width": 2.5}, "queue_width must be an integer"),
    ({"n_splits": 1}, "n_splits must be >= 2"),
    ({"n_splits": 1000}, "larger than the 150 rows"),
    ({"backend": "spark"}, "backend must be"),
])
def test_bad_input(iris, kwargs, match):
    args = {"classifiers": ["SNN"], **kwargs}
    with pytest.raises(ValueError, match=match):
        cmp.cross_validate_classifiers(iris, "class", **args)


def test_bad_data(iris):
    one = iris.copy()
    one["class"] = pd.Categorical(["x"] * len(one))
    with pytest.raises(ValueError, match="single class"):
        cmp.cross_validate_classifiers(one, "class", ["SNN"])
    with pytest.raises(ValueError, match="not a column"):
        cmp.cross_validate_classifiers(iris, "klass", ["SNN"])
    with pytest.raises(ValueError, match="missing"):
        bad = iris.copy()
        bad.loc[0, "class"] = np.nan
        cmp.cross_validate_classifiers(bad, "class", ["SNN"])
    with pytest.raises(TypeError, match="DataFrame"):
        cmp.cross_validate_classifiers(iris.to_numpy(), "class", ["SNN"])
    with pytest.raises(ValueError, match="fewer than n_splits"):
        cmp.stratified_folds(["a", "b", "a", "b"], n_splits=3)


def test_make_classifier_passes_the_shared_parameters():
    assert cmp.make_classifier("AMA", max_parents=3, n=7).get_params()["max_parents"] == 3
    assert cmp.make_classifier("SFAN", penalty=4.5).get_params()["penalty"] == 4.5
    assert cmp.make_classifier("ISMB", queue_width=33).get_params()["queue_width"] == 33
    assert cmp.make_classifier("GTT", max_parents=1).get_params()["max_parents"] == 1


def test_registered_experiment_and_delta(tmp_path):
    from bnexplore import experiments

    exp = experiments.get("compare_classifiers")
    assert exp.n_trials("reduced") == 8
    df = experiments.run(cmp.compare_trial,
                         {"dataset": ["iris"], "classifier": ["SNN", "LogReg"], "n_splits": 3},
                         random_states=[0], out=tmp_path / "c.csv", progress=False)
    assert df["error"].isna().all()
    with_delta = cmp.add_delta(df)
    assert with_delta["delta"].min() >= 0
    assert {"auc", "error_rate", "log_loss", "cal", "auc_ovr_0", "auc_ovr_2"} <= set(df.columns)


# ------------------------------------------------------------------ plot builders
def test_plot_builders():
    import holoviews as hv
    curves = {"NB": ([0, 0.2, 1], [0, 0.7, 1], 0.75),
              **{f"C{i}": ([0, 1], [0, 1], 0.5) for i in range(11)}}
    p = vc.roc_comparison(curves, positive="yes")
    assert isinstance(p, hv.Overlay) and len(p) == 13
    assert "NB (AUC 0.750)" in [el.label for el in p]
    t = pd.DataFrame({"classifier": ["NB", "TAN", "X"], "auc": [0.9, 0.95, np.nan],
                      "error": [0.1, 0.05, np.nan]})
    bars = vc.metric_bars(t, "error")
    assert list(bars.data["classifier"]) == ["NB", "TAN"]   # drawn bottom-up: best on top
    assert list(bars.data["best"]) == ["other", "best"]
    with pytest.raises(ValueError, match="metric must be"):
        vc.metric_bars(t, "speed")
    with pytest.raises(ValueError, match="no ROC curve"):
        vc.roc_comparison({}, positive="a")
    assert "AUC (Hand & Till)" in vc.format_metric_table(t).columns


# ------------------------------------------------------------------ the app (bnexplore.apps)
def _two_tables(n=150, seed=0):
    """Two user tables with different columns and classes (a data change)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    first = pd.DataFrame({"alpha": np.where(rng.random(n) < 0.8, y, 1 - y).astype(str),
                          "beta": rng.choice(list("pq"), n), "cls": np.where(y, "yes", "no")})
    z = rng.integers(0, 3, n)
    second = pd.DataFrame({"gamma": (z + (rng.random(n) < 0.2)).astype(str),
                           "delta": rng.choice(list("uv"), n),
                           "kind": np.array(["r", "s", "t"])[z]})
    return first, second


def test_the_app_shows_a_run_its_tests_and_csv():
    from bnexplore.apps import CompareClassifiers

    app = CompareClassifiers("iris", classifiers=["SNN", "LogReg"], n_splits=3)
    assert app.result is None and "Not run yet" in app.status      # nothing computed yet
    app.run()
    assert sorted(app.result.proba) == ["LogReg", "SNN"] and "2 classifiers, 3 folds" in app.status
    ref = cmp.cross_validate_classifiers(app.data.frame, "class", ["SNN", "LogReg"], n_splits=3)
    np.testing.assert_allclose(app.result.proba["SNN"], ref.proba["SNN"])
    view = app.tests_view()
    assert "win / " in view[0].object and "AUC" in view[0].object
    csv = view[4][1].callback().read()
    assert csv.splitlines()[0].startswith("classifier,label,error,auc") and len(csv.splitlines()) == 3
    app.metric = "error"
    assert "Error" in app.tests_view()[0].object or "error" in app.tests_view()[0].object
    app.positive = "Iris-setosa"
    assert "Iris-setosa" in str(app.roc_view().object.opts.get().kwargs.get("title", "")) or \
        app.roc_view().object is not None
    heat = app.heat_view()[1].callback().read()
    assert heat.splitlines()[0].startswith("classifier,Iris-setosa")
    app.n_splits = 4                      # a run setting: runs again (synchronously here)
    assert app.result.settings["n_splits"] == 4


def test_bad_settings_are_said_and_the_page_keeps_working():
    from bnexplore.apps import CompareClassifiers

    app = CompareClassifiers("weather.nominal", classifiers=["SNN"], n_splits=10)
    app.run()
    assert app.result is None and "could not run" in app.status
    assert "fewer than n_splits=10" in __import__("html").unescape(app.problems_view().object)
    app.n_splits = 2
    assert app.result is not None and app.error is None
    assert app.problems_view().object == ""


def test_a_data_change_while_a_run_goes_resets_columns_and_results_in_one_step():
    """Issue 34: the previous data set's results and columns stayed after a data change
    (ValueError: handicapped-infants not in list). The run of the old data finishes after
    the change and is dropped; no view ever sees the new data with the old result."""
    from bnexplore.apps import CompareClassifiers
    from bnexplore.apps.compare import progress

    first, second = _two_tables()
    app = CompareClassifiers(first, classifiers=["SNN", "TAN", "AODE", "kNN"], n_splits=10,
                             random_state=int(time.time()) % 20)
    seen, errors = [], []
    app.param.watch(lambda *e: seen.append((app.data.target, app.result)), ["data", "result"])
    key = app.key()
    worker = threading.Thread(target=lambda: _catch(app.run, errors))
    worker.start()
    deadline = time.monotonic() + 120
    while progress(key)["done"] < 1:          # the run of the first table is going
        assert time.monotonic() < deadline and worker.is_alive()
        time.sleep(0.01)
    app._applying = True                        # the change alone (the next run by hand)
    app.set_table(second, "second")
    app._applying = False
    assert app.data.target == "kind" and app.result is None and app.positive in ("r", "s", "t")
    worker.join(120)
    assert errors == [] and app.result is None   # the old run finished and was dropped
    app.run()
    assert list(app.result.classes) == ["r", "s", "t"]
    for target, result in seen:                  # never the new data with the old result
        assert result is None or set(map(str, result.classes)) == (
            {"r", "s", "t"} if target == "kind" else {"no", "yes"})
    table = app.tests_view()[4][0].value
    assert "alpha" not in " ".join(map(str, table.to_numpy().ravel()))


def _catch(func, errors):
    try:
        func()
    except Exception as exc:  # noqa: BLE001 - reported by the test
        errors.append(exc)


def test_cancel_keeps_the_finished_classifiers_and_is_not_cached():
    from bnexplore.apps import CompareClassifiers
    from bnexplore.apps.compare import progress

    first, _ = _two_tables(n=200, seed=int(time.time()) % 1000)
    app = CompareClassifiers(first, classifiers=["SNN", "ISMB"], n_splits=5, queue_width=500)
    key = app.key()
    worker = threading.Thread(target=app.run)
    worker.start()
    deadline = time.monotonic() + 120
    while "ISMB" not in progress(key)["msg"]:
        assert time.monotonic() < deadline and worker.is_alive()
        time.sleep(0.01)
    app.cancel()
    worker.join(120)
    assert app.result.cancelled and list(app.result.proba) == ["SNN"]
    assert "cancelled" in app.status and "1 classifiers" in app.status


def test_every_parameter_round_trips_through_the_link():
    from test_apps_components import query_of

    from bnexplore.apps import CompareClassifiers

    app = CompareClassifiers("iris", classifiers=["SNN"], n_splits=2)
    app._applying = True                    # settings only: no run
    app.param.update(classifiers=["TAN", "LogReg"], n_splits=7, random_state=3, max_parents=3,
                     n=5, penalty=4.5, queue_width=50, metric="log_loss", baseline="TAN",
                     level=0.01, test="paired t-test", positive="Iris-setosa")
    fresh = CompareClassifiers()
    fresh._applying = True
    fresh.param.watch(lambda *e: None, "result")
    runs = []
    fresh.run = lambda: runs.append(fresh.key())      # the link's run: one, all applied
    fresh.apply_query(query_of(app))
    for p in app.url_parameters():
        assert getattr(fresh, p) == getattr(app, p), p
    assert runs == [app.key()]


# ------------------------------------------------------------------ browser
browser_test = pytest.mark.browser


def _status(page) -> str:
    return (page.locator(".bnx-cv-status").first.text_content() or "").strip()


def _wait_done(page, timeout_s=180.0, not_text: str | None = None, want: str = "") -> str:
    """The first "Done" status (other than ``not_text``, containing ``want``)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        txt = _status(page)
        if txt.startswith("Done") and txt != not_text and want in txt:
            return txt
        page.wait_for_timeout(250)
    raise AssertionError(f"comparison did not finish: status {_status(page)!r}")


def _url(base: str, **query) -> str:
    q = {"app": "compare", **{k: v if isinstance(v, str) else json.dumps(v)
                              for k, v in query.items()}}
    return f"{base}/apps?{urllib.parse.urlencode(q)}"


@browser_test
def test_compare_page_runs_and_other_sessions_answer_meanwhile(panel_server, page):
    """Issue 37.2: the comparison is computed and its pictures drawn off the event loop:
    while one session's comparison runs and draws, other sessions' pages are served
    (median under 2 s, a wide margin on a loaded machine; a page waiting for the event
    loop waited for the whole run and drawing)."""
    other = f"{panel_server}/apps"
    urllib.request.urlopen(other, timeout=120).read()           # built once (imports)
    # a first start compiles the kernels in the background: wait, so that the figures
    # measure the page against the comparison, not against the compiler
    page.goto(_url(panel_server, dataset="iris", classifiers=["SNN"], n_splits=2),
              timeout=180_000)
    _wait_done(page, timeout_s=600)
    deadline = time.monotonic() + 900
    while page.locator(".bnx-kernels:visible").count() and time.monotonic() < deadline:
        page.wait_for_timeout(1000)
    seed = int(time.time()) % 20
    page.goto(_url(panel_server, dataset="vote", classifiers=["SNN", "TAN", "AODE", "kNN"],
                   n_splits=10, random_state=seed), timeout=180_000)
    times, t_end = [], time.monotonic() + 300
    while time.monotonic() < t_end:
        t0 = time.monotonic()
        urllib.request.urlopen(other, timeout=60).read()
        times.append(time.monotonic() - t0)
        if _status(page).startswith("Done") and page.locator("canvas").count() >= 2:
            break
        page.wait_for_timeout(300)
    assert "4 classifiers, 10 folds" in _wait_done(page)
    assert len(times) >= 2, "no other page was served while the comparison ran"
    assert sorted(times)[len(times) // 2] < 2.0, f"other sessions' pages waited {times}"
    q = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)
    assert q["n_splits"] == ["10"] and q["dataset"] == ["vote"]
    page.get_by_text("win / ").first.wait_for(timeout=120_000)
    with page.expect_download(timeout=30_000) as dl:
        page.locator(".bnx-metrics").first.wait_for(timeout=60_000)
        page.get_by_role("button", name="Download CSV").first.click()
    assert open(dl.value.path(), encoding="utf-8").read().startswith("classifier,label,error,auc")
    assert page.console_errors == []


# ------------------------------------------------------------------ paired test, W/D/L
def _folds(values: dict) -> pd.DataFrame:
    return pd.DataFrame([{"classifier": c, "fold": f, "error": v, "auc": 1 - v}
                         for c, vals in values.items() for f, v in enumerate(vals)])


def test_win_draw_loss_counts_on_a_constructed_example():
    # 10 folds; the baseline's error is 0.20 +- noise. A is clearly better, B clearly
    # worse, C the same up to noise, D better by a hair that the noise hides.
    noise = np.array([0.01, -0.01, 0.02, -0.02, 0.0, 0.015, -0.015, 0.005, -0.005, 0.0])
    base = 0.20 + noise
    f = _folds({"base": base, "A": base - 0.08 + noise[::-1] / 4, "B": base + 0.07 + noise / 5,
                "C": base + noise[::-1], "D": base - 0.002 + noise[::-1]})
    for test in ("corrected", "paired"):
        t = cmp.paired_test(f, "error", "base", level=0.05, test=test)
        assert t.loc["base", "result"] == "baseline"
        assert (t.loc["A", "result"], t.loc["B", "result"]) == ("win", "loss")
        assert t.loc["C", "result"] == t.loc["D", "result"] == "draw"
        assert cmp.win_draw_loss(t) == {"win": 1, "draw": 2, "loss": 1}
        # on AUC (higher is better) the same classifiers win and lose
        ta = cmp.paired_test(f, "auc", "base", level=0.05, test=test)
        assert (ta.loc["A", "result"], ta.loc["B", "result"]) == ("win", "loss")


def test_paired_test_p_value_is_scipys():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(3)
    base = 0.2 + rng.normal(0, 0.02, 7)
    other = base - 0.01 + rng.normal(0, 0.02, 7)
    t = cmp.paired_test(_folds({"base": base, "X": other}), "error", "base", test="paired")
    ref = ttest_rel(other, base)
    assert t.loc["X", "t"] == pytest.approx(ref.statistic, rel=1e-12)
    assert t.loc["X", "p"] == pytest.approx(ref.pvalue, rel=1e-10)


def test_corrected_test_is_more_cautious_than_the_paired_test():
    rng = np.random.default_rng(3)
    base = 0.2 + rng.normal(0, 0.02, 10)
    f = _folds({"base": base, "X": base - 0.012 + rng.normal(0, 0.012, 10)})
    plain = cmp.paired_test(f, "error", "base", test="paired").loc["X"]
    corr = cmp.paired_test(f, "error", "base", test="corrected").loc["X"]
    # Nadeau & Bengio: variance times (1/K + 1/(K-1)) instead of 1/K
    assert corr["t"] == pytest.approx(plain["t"] * np.sqrt((1 / 10) / (1 / 10 + 1 / 9)))
    assert corr["p"] > plain["p"]
    # a level between the two p-values: a win for the plain test, a draw for the corrected
    level = (plain["p"] + corr["p"]) / 2
    assert cmp.paired_test(f, "error", "base", level, "paired").loc["X", "result"] == "win"
    assert cmp.paired_test(f, "error", "base", level, "corrected").loc["X", "result"] == "draw"
    with pytest.raises(ValueError, match="baseline"):
        cmp.paired_test(f, "error", "nope")
    with pytest.raises(ValueError, match="test"):
        cmp.paired_test(f, "error", "base", test="wilcoxon")


def test_fold_metrics_table_csv_and_spread_plot(iris):
    import holoviews as hv

    res = cmp.cross_validate_classifiers(iris, iris.attrs["target"], ["SNN", "LogReg"],
                                         n_splits=3, random_state=0)
    folds = res.fold_metrics()
    assert len(folds) == 6 and set(folds["fold"]) == {0, 1, 2}
    t = cmp.metric_table(res, baseline="SNN", metric="auc", level=0.05, test="corrected")
    assert {"auc_sd", "error_sd", "baseline", "test", "level", "p", "result"} <= set(t.columns)
    assert t.set_index("classifier").loc["SNN", "result"] == "baseline"
    assert t.set_index("classifier").loc["LogReg", "result"] in ("win", "draw", "loss")
    pretty = vc.format_comparison_table(t)
    assert list(pretty.columns[:2]) == ["classifier", "vs SNN"] and "\u00b1" in pretty["AUC"].iloc[0]
    fig = hv.render(vc.fold_spread_plot(folds, "auc"), backend="bokeh")
    lo = folds["auc"].min()
    # the value axis is fitted to the data, not started at 0
    assert fig.x_range.start > 0.5 and fig.x_range.start <= lo
