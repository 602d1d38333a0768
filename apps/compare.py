"""Compare classifiers.

Cross-validate every Bayesian-network classifier of the papers and two scikit-learn
baselines on the same folds: ROC curves, AUC, error, log loss, CAL and delta.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import panel as pn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (serve, NETWORK, PREPARING_TEXT, RESERVED_QUERY, SETTLE_S, DataSource,  # noqa: E402
                     cached, changing, describe_source, download_csv, error_box,
                     guarded, live_session, load_data, make_template, md_strong, md_text,
                     param_slider, pending_text, shared_cache, widget)

from _render import shared_fixed_pane, shared_pane  # noqa: E402

from bnexplore.cache import DiskCache  # noqa: E402
from bnexplore.experiments import compare as cmp  # noqa: E402
from bnexplore.viz import compare as vc  # noqa: E402

TITLE = "Compare classifiers"
DESCRIPTION = ("Stratified cross-validation of NB, TAN, AODE, AMA, ISMB and the rest against "
               "logistic regression and kNN: ROC curves per class, AUC, log loss, CAL and "
               "Dash & Cooper's delta against the best.")

pn.extension("tabulator", sizing_mode="stretch_width", notifications=False)

#: Dask scheduler for long runs (e.g. tcp://10.0.0.5:8786); unset = run in the server.
SCHEDULER = os.environ.get("BNEXPLORE_DASK_SCHEDULER", "").strip()
POLL_MS = 300


@cached(maxsize=1)
def available_classifiers() -> dict[str, str]:
    """``key -> ""`` for the classifiers that can be built, ``key -> reason`` otherwise.

    Cached, on disk too: building them imports scikit-learn (a second of a later
    start's first page otherwise)."""
    out = {}
    for key in cmp.CLASSIFIERS:
        try:
            cmp.make_classifier(key)
            out[key] = ""
        except Exception as exc:  # noqa: BLE001 - a method still being written
            out[key] = f"{type(exc).__name__}: {exc}"
    return out


def frame_and_target(kind: str, name: str, n: int, target: str | None):
    """The data of the source and a valid target column."""
    df = load_data(kind, name, n)
    if kind == NETWORK:
        df = df.dropna().reset_index(drop=True)
    cols = [str(c) for c in df.columns]
    default = df.attrs.get("target") or cols[-1]
    return df, (target if target in cols else default)


class _MissSignalled:
    """The results cache of one run, setting ``missed`` at its first miss: a classifier
    is then fitted (or the folds computed), the run is not merely read."""

    def __init__(self, cache, missed: threading.Event):
        self._cache, self._missed = cache, missed

    def get(self, key, default=None):
        got = self._cache.get(key, default)
        if got is None:
            self._missed.set()
        return got

    def __setitem__(self, key, value) -> None:
        self._cache[key] = value


class _Status:
    """A one-line status readout (plain text, HTML-escaped, class ``bnx-cv-status``)."""

    def __init__(self):
        self.pane = pn.pane.HTML("", margin=(0, 10), sizing_mode="stretch_width")
        self._text = ""

    @property
    def object(self) -> str:
        return self._text

    @object.setter
    def object(self, text: str) -> None:
        self._text = text
        self.pane.object = f"<div class='bnx-cv-status'>{text}</div>"


# --------------------------------------------------------------------------- runs
def oof_cache() -> DiskCache:
    """Finished classifiers' out-of-fold results, in memory (shared by the sessions)
    and on disk: a later start of the server shows a comparison without fitting."""
    return DiskCache("compare-oof", front=shared_cache("compare-oof", maxsize=256))


def run_key(kind: str, name: str, n: int, target: str, classifiers, n_splits: int, seed: int,
            k: int, n_par: int, alpha: float, w: int) -> tuple:
    """The setting of a comparison (hashable): data, class, the classifiers it holds,
    folds and parameters. Its pictures are rendered once per setting (_render)."""
    return (kind, name, int(n), str(target), tuple(classifiers), int(n_splits), int(seed),
            int(k), int(n_par), float(alpha), int(w))


def kept_runs():
    """Finished comparisons by setting (:func:`run_key`), shared by the sessions: the
    pictures of a run read it here instead of cross-validating again."""
    return shared_cache("compare-runs", maxsize=16)


def comparison(run: tuple):
    """The :class:`CVResult` of the setting ``run`` (:func:`run_key`): the one a run of
    this server kept, else the cross-validation again, whose classifiers a finished run
    left in :func:`oof_cache` (read, not fitted)."""
    def again():
        kind, name, n, target, classifiers, n_splits, seed, k, n_par, alpha, w = run
        df, tgt = frame_and_target(kind, name, n, target)
        return cmp.cross_validate_classifiers(df, tgt, list(classifiers), n_splits=n_splits,
                                              random_state=seed, max_parents=k, n=n_par,
                                              penalty=alpha, queue_width=w,
                                              cache=oof_cache())
    return kept_runs().compute(run, again)


# --------------------------------------------------------------------------- pictures
# pure functions of a setting, rendered once for all sessions and kept on disk (_render)
def roc_picture(run: tuple, positive: str):
    curves = comparison(run).roc(positive)
    return vc.roc_comparison(curves, positive, width=None, height=480, responsive=True)


def heat_picture(run: tuple):
    return vc.ovr_auc_heatmap(comparison(run).ovr_auc(), width=520, height=360)


def spread_picture(run: tuple, metric: str, baseline: str, level: float, test: str):
    folds = comparison(run).fold_metrics()
    tests = cmp.paired_test(folds, metric, baseline, level=level, test=test)
    return vc.fold_spread_plot(folds, metric, tests=tests, responsive=True)


# --------------------------------------------------------------------------- views
@guarded
def roc_view(result, run, positive):
    if result is None or not result.proba:
        return pn.pane.Markdown("")
    classes = [str(c) for c in result.classes]
    pos = positive if positive in classes else classes[-1 if len(classes) == 2 else 0]
    return shared_pane(roc_picture, run, pos, height=490, sizing_mode="stretch_width",
                       min_width=320)


@guarded
def heat_view(result, run):
    if result is None or not result.proba:
        return pn.pane.Markdown("")
    return shared_fixed_pane(heat_picture, run)


#: paired tests offered in the page (label -> argument of paired_test).
TESTS = {"corrected resampled t-test (Nadeau & Bengio)": "corrected", "paired t-test": "paired"}


def _baseline(result, baseline):
    keys = list(result.proba)
    return baseline if baseline in keys else keys[0]


def comparison_table(result, metric, baseline, level, test):
    """The metrics table with the spread over folds and the paired test (CSV content)."""
    return cmp.metric_table(result, baseline=_baseline(result, baseline), metric=metric,
                            level=float(level), test=TESTS.get(test, test))


@guarded
def tests_view(result, run, metric, baseline, level, test):
    """W/D/L summary, per-fold spread plot and the metrics table with the paired test."""
    if result is None or not result.proba:
        return pn.pane.Markdown("")
    base = _baseline(result, baseline)
    folds = result.fold_metrics()
    kind = TESTS.get(test, test)
    tests = cmp.paired_test(folds, metric, base, level=float(level), test=kind)
    wdl = cmp.win_draw_loss(tests)
    label = vc.METRIC_LABELS[metric]
    summary = pn.pane.Markdown(
        f"**{label}, each classifier against {md_strong(base)}** ({test}, "
        f"{result.settings.get('n_splits', '?')} folds, level {float(level):g}): "
        f"**{wdl['win']} win / {wdl['draw']} draw / {wdl['loss']} loss** "
        f"(a win is a significant difference in the classifier's favour).",
        css_classes=["bnx-wdl"], margin=(0, 10))
    table = comparison_table(result, metric, base, level, test)
    pretty = vc.format_comparison_table(table)
    return pn.Column(
        summary,
        shared_pane(spread_picture, run, metric, base, float(level), kind,
                    sizing_mode="stretch_width", height=max(220, 70 + 42 * len(tests)) + 10),
        pn.pane.Markdown("### Metrics (pooled out-of-fold predictions, \u00b1 sd over folds)",
                         margin=(10, 10, 0, 10)),
        pn.pane.Markdown(f"*vs {md_text(base)}*: the paired test on {label}; AUC is Hand & "
                         "Till's; sq. error the squared error; delta Dash & Cooper's share of "
                         "missing ROC area against the best. The CSV has every column and the "
                         "test settings.", margin=(0, 10)),
        pn.widgets.Tabulator(pretty, show_index=False, disabled=True, layout="fit_data_stretch",
                             sizing_mode="stretch_width", css_classes=["bnx-metrics"],
                             stylesheets=[":host { max-width: 100%; }"]),
        download_csv(lambda: comparison_table(result, metric, base, level, test),
                     "classifier_comparison", "Download metrics as CSV"),
        sizing_mode="stretch_width")


# --------------------------------------------------------------------------- page
def create_app() -> pn.template.FastListTemplate:
    """Build the page (one per session)."""
    src = DataSource(default_dataset="vote", default_network="asia")
    target = widget(pn.widgets.Select, "Class column", options=[], value=None)
    avail = available_classifiers()
    usable = [k for k, why in avail.items() if not why]
    missing = {k: why for k, why in avail.items() if why}
    chooser = widget(pn.widgets.MultiChoice, "Classifiers",
                     options=usable,
                     value=[k for k in cmp.DEFAULT_CLASSIFIERS if k in usable])
    folds = widget(pn.widgets.IntSlider, "Folds", start=2, end=10, value=5)
    seed = widget(pn.widgets.IntSlider, "Seed", start=0, end=20, value=0)
    # ranges: the one declaration of every shared parameter (_common.params)
    k = param_slider("k", "k (max parents: AMA, GTT)")
    n = param_slider("n", "n (AMA summary-network parents)")
    alpha = param_slider("alpha", "alpha (exclusion penalty: STAN, SFAN)")
    w = param_slider("w", "w (ISMB queue width)")
    positive = widget(pn.widgets.Select, "ROC: positive class", options=[], value=None)
    metric = widget(pn.widgets.Select, "Compared metric",
                    options={vc.METRIC_LABELS[m]: m for m in cmp.FOLD_METRICS}, value="auc")
    baseline = widget(pn.widgets.Select, "Baseline of the paired test", options=usable,
                      value="SNN" if "SNN" in usable else (usable[0] if usable else None))
    level = widget(pn.widgets.Select, "Significance level",
                   options={"0.01 (99%)": 0.01, "0.05 (95%)": 0.05, "0.10 (90%)": 0.1},
                   value=0.05)
    test_kind = widget(pn.widgets.Select, "Paired test", options=list(TESTS),
                       value=list(TESTS)[0])
    use_dask = widget(pn.widgets.Checkbox, f"Run on the Dask cluster {SCHEDULER}",
                      value=False, visible=bool(SCHEDULER))
    run_btn = widget(pn.widgets.Button, "Run again", color="primary")
    cancel_btn = widget(pn.widgets.Button, "Cancel", color="warning", disabled=True,
                        width=110, sizing_mode="fixed")
    progress = pn.indicators.Progress(value=0, max=100, active=False, bar_color="primary",
                                      sizing_mode="stretch_width", css_classes=["bnx-progress"])
    status = _Status()
    problems = pn.Column(sizing_mode="stretch_width")
    source_note = pn.pane.HTML("", margin=(0, 10))

    # finished classifiers' out-of-fold results, in memory and on disk: a later start of
    # the server shows the default comparison without cross-validating again
    cache = oof_cache()
    state = {"thread": None, "cancel": None, "done": 0, "total": 1, "msg": "",
             "result": None, "run": None, "error": None, "finished": False, "started": 0.0,
             "gen": 0, "partial": None}
    results = pn.Column(sizing_mode="stretch_width")
    lock = threading.Lock()

    # ---- the class column follows the data
    def update_target(*_):
        try:
            df, tgt = frame_and_target(src.kind.value, src.name.value,
                                       int(src.sample_size.value), target.value)
        except Exception:  # noqa: BLE001 - reported by the run
            return
        cols = [str(c) for c in df.columns]
        target.options = cols
        target.value = tgt
    update_target()
    for wdg in (src.kind, src.dataset, src.network, src.sample_size):
        wdg.param.watch(update_target, "value")

    def update_positive(*_):
        try:
            df, tgt = frame_and_target(src.kind.value, src.name.value,
                                       int(src.sample_size.value), target.value)
            classes = [str(c) for c in (df[tgt].cat.categories if hasattr(df[tgt], "cat")
                                        else sorted(df[tgt].dropna().unique()))]
        except Exception:  # noqa: BLE001
            return
        positive.options = classes
        if positive.value not in classes:
            positive.value = classes[-1] if len(classes) == 2 else classes[0]
    update_positive()
    target.param.watch(update_positive, "value")
    for wdg in (src.kind, src.dataset, src.network, src.sample_size):
        wdg.param.watch(update_positive, "value")

    # ---- background run
    def settings():
        return dict(kind=src.kind.value, name=src.name.value, n=int(src.sample_size.value),
                    target=target.value, classifiers=list(chooser.value),
                    n_splits=int(folds.value), seed=int(seed.value), k=int(k.value),
                    n_par=int(n.value), alpha=float(alpha.value), w=int(w.value),
                    dask=bool(use_dask.value and SCHEDULER))

    def work(st, cancel, gen, missed):
        def cb(done, total, msg):
            with lock:
                if state["gen"] == gen:
                    state.update(done=done, total=total, msg=msg)

        def key(res):
            return run_key(st["kind"], st["name"], st["n"], tgt, res.proba, st["n_splits"],
                           st["seed"], st["k"], st["n_par"], st["alpha"], st["w"])

        def partial(res):   # the classifiers finished so far: their ROC curves show at once
            with lock:
                if state["gen"] == gen:
                    state.update(partial=(res, key(res)))
        try:
            df, tgt = frame_and_target(st["kind"], st["name"], st["n"], st["target"])
            res = cmp.cross_validate_classifiers(
                df, tgt, st["classifiers"], n_splits=st["n_splits"], random_state=st["seed"],
                max_parents=st["k"], n=st["n_par"], penalty=st["alpha"], queue_width=st["w"],
                progress_callback=cb, cancel_event=cancel, result_callback=partial,
                backend="dask" if st["dask"] else "inline",
                scheduler=SCHEDULER or None, cache=_MissSignalled(cache, missed))
            run = key(res)
            kept_runs()[run] = res     # for its pictures
            out = {"result": res, "run": run, "error": None}
        except Exception as exc:  # noqa: BLE001 - shown in the page
            out = {"result": None, "run": None, "error": exc}
        with lock:
            if state["gen"] == gen:
                state.update(out, finished=True)

    def start(*_):
        old = state.get("cancel")
        if old is not None:
            old.set()
        cancel, missed = threading.Event(), threading.Event()
        st = settings()
        with lock:
            state["gen"] += 1
            gen = state["gen"]
            state.update(cancel=cancel, done=0, total=1, msg="starting", result=None, run=None,
                         error=None, finished=False, started=time.monotonic(), partial=None)
        source_note.object = (f"<span class='bnx-source'>"
                              f"{describe_source(st['kind'], st['name'], st['n'])}"
                              f"</span>, class <b>{md_text(st['target'])}</b>")
        progress.value, progress.active = 0, True
        cancel_btn.disabled = False
        status.object = "Cross-validating..."
        results.loading = True
        t = threading.Thread(target=work, args=(st, cancel, gen, missed), daemon=True,
                             name=f"bnx-compare-{gen}")
        state.update(thread=t, missed=missed)
        t.start()

    def cancel_run(*_):
        ev = state.get("cancel")
        if ev is not None:
            ev.set()
            status.object = "Cancelling after the current fit..."

    def poll():
        # a periodic callback that changes the page: held, sent by Bokeh (changing)
        with changing(pn.state.curdoc):
            show_progress()

    def show_progress():
        with lock:
            snap = dict(state)
        if snap["cancel"] is None:
            return
        if not snap["finished"]:
            pct = int(100 * snap["done"] / max(snap["total"], 1))
            progress.value = min(pct, 100)
            # a fresh install compiles the kernels during the first fits: say so
            prep = f"{PREPARING_TEXT} " if pending_text() == PREPARING_TEXT else ""
            status.object = (f"{prep}Cross-validating: {snap['done']}/{snap['total']} fits "
                             f"({md_text(snap['msg'])}), "
                             f"{time.monotonic() - snap['started']:.0f} s")
            part = snap["partial"]
            if part is not None and part[0].proba and snap.get("partial_shown") is not part:
                with lock:
                    state["partial_shown"] = part
                results.objects = [
                    pn.pane.Markdown(f"### ROC curves of the {len(part[0].proba)} classifiers "
                                     "finished so far", margin=(10, 10, 0, 10)),
                    pn.bind(roc_view, *part, positive)]
                results.loading = False
            return
        finish(snap)

    def finish(snap):
        """Show a finished run (once)."""
        with lock:
            if state.get("shown") == snap["gen"]:
                return
            state["shown"] = snap["gen"]
        progress.active = False
        progress.value = 100
        cancel_btn.disabled = True
        show(snap)

    def show(snap):
        res, err = snap["result"], snap["error"]
        problems.objects = []
        if err is not None:
            results.objects = [error_box(err)]
            results.loading = False
            status.object = "The comparison could not run:"
            return
        secs = time.monotonic() - snap["started"]
        if res.errors:
            problems.objects = [pn.pane.Alert(
                "**Some classifiers failed** (the others are shown):\n\n" + "\n".join(
                    f"- {md_text(k)}: {md_text(v)}" for k, v in res.errors.items()),
                alert_type="warning")]
        run = snap["run"]
        results.objects = [
            pn.bind(tests_view, res, run, metric, baseline, level, test_kind),
            pn.pane.Markdown("### ROC curves and one-vs-rest AUC", margin=(10, 10, 0, 10)),
            pn.bind(roc_view, res, run, positive), heat_view(res, run),
        ]
        results.loading = False
        note = " (cancelled: finished classifiers only)" if res.cancelled else ""
        status.object = (f"Done: {len(res.proba)} classifiers, "
                         f"{res.settings['n_splits']} folds, {secs:.1f} s{note}")

    def on_change(*_):
        if state.get("loaded"):
            start()

    run_btn.on_click(start)
    cancel_btn.on_click(cancel_run)
    for wdg in (src.kind, src.dataset, src.network, src.sample_size, target, chooser, folds,
                seed, k, n, alpha, w):
        wdg.param.watch(on_change, "value")

    def on_load():
        state["loaded"] = True
        if state["cancel"] is None:     # not started with the page
            start()
        else:
            poll()
        pn.state.add_periodic_callback(poll, period=POLL_MS)
    pn.state.onload(on_load)

    def settle():
        """Wait up to SETTLE_S for the run started with the page and, if it finished,
        put its result in the page itself. The wait ends at the run's first cache miss:
        the event loop that builds this page serves every session."""
        thread, missed = state["thread"], state["missed"]
        deadline = time.monotonic() + SETTLE_S
        while thread.is_alive() and not missed.is_set() and time.monotonic() < deadline:
            thread.join(0.02)
        with lock:
            snap = dict(state)
        if snap["finished"]:
            finish(snap)

    # The default comparison starts with the page, while the browser loads it (a shared
    # link's settings only once they are applied, on load). Read from the cache (a
    # later start of the server), it is part of the page; else it is shown from the load on.
    if live_session() is not None and not set(pn.state.session_args or {}) - RESERVED_QUERY:
        start()
        settle()

    def _stop(*_):
        ev = state.get("cancel")
        if ev is not None:
            ev.set()
    if pn.state.curdoc is not None:
        try:
            pn.state.on_session_destroyed(_stop)
        except Exception:  # noqa: BLE001 - not in a server session
            pass

    missing_note = []
    if missing:
        missing_note = [pn.pane.Alert(
            "Not available yet (left out): " + "; ".join(
                f"{md_text(k)} ({md_text(v, max_len=80)})" for k, v in missing.items()),
            alert_type="info")]

    main = [pn.Column(
        source_note, pn.Row(progress, cancel_btn, sizing_mode="stretch_width"), status.pane,
        *missing_note, problems, results, sizing_mode="stretch_width")]
    sidebar = [pn.pane.Markdown("### Data"), src.panel(), target,
               pn.pane.Markdown("### Classifiers"), chooser, folds, seed,
               pn.pane.Markdown("### Parameters"), k, n, alpha, w,
               pn.pane.Markdown("### Display"), metric, baseline, level, test_kind, positive,
               use_dask, run_btn]
    return make_template(TITLE, main=main, sidebar=sidebar, description=DESCRIPTION)


if __name__.startswith("bokeh"):
    serve(create_app)
