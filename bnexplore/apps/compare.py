"""Compare classifiers: stratified cross-validation of the papers' classifiers.

Every Bayesian-network classifier of the papers and two scikit-learn baselines on the
same folds: ROC curves, AUC (Hand & Till), error, log loss, CAL and Dash & Cooper's delta
against the best, and a paired test of each against a baseline over the folds.

How a run is served: :func:`comparison` is a cached function of the data and the
settings (one computation per setting for every session; finished classifiers' out-of-fold
results are also kept on disk, :func:`oof_cache`). A change of a run's settings
computes it in a worker thread (:func:`~bnexplore.apps.page.in_worker`, awaited on the
event loop); the pictures are views of the finished ``result``, built in worker threads too. The progress of
the running setting is read from :data:`_PROGRESS` by a periodic callback that only
sets text. A data change clears ``result`` in the same update as the data.
"""
from __future__ import annotations

import functools
import os
import threading
import time

from typing import Any

import pandas as pd
import panel as pn
import param

from bnexplore.experiments import compare as cmp
from bnexplore.experiments.compare import DEFAULT_PARAMS, PARAM_RANGES

from ._base import App, guarded
from ._cache import cached
from .page import in_worker, on_session, picture
from .data import Data
from .text import md_strong, md_text

#: Dask scheduler for long runs (e.g. tcp://10.0.0.5:8786); unset = run in the server.
SCHEDULER = os.environ.get("BNEXPLORE_DASK_SCHEDULER", "").strip()
POLL_MS = 300
#: paired tests offered (label -> argument of paired_test).
TESTS = {"corrected resampled t-test (Nadeau & Bengio)": "corrected", "paired t-test": "paired"}
LEVELS = {"0.01 (99%)": 0.01, "0.05 (95%)": 0.05, "0.10 (90%)": 0.1}
NOT_RUN = "Not run yet: press \u201cRun again\u201d."
#: the settings a run depends on (a change starts a run).
RUN = ("data", "classifiers", "n_splits", "random_state", "max_parents", "n", "penalty",
       "queue_width")


@functools.lru_cache(maxsize=1)
def available_classifiers() -> dict[str, str]:
    """``key -> ""`` for the classifiers that can be built, ``key -> reason`` otherwise."""
    out = {}
    for key in cmp.CLASSIFIERS:
        try:
            cmp.make_classifier(key)
            out[key] = ""
        except Exception as exc:  # noqa: BLE001 - a method still being written
            out[key] = f"{type(exc).__name__}: {exc}"
    return out


@functools.lru_cache(maxsize=1)
def oof_cache():
    """Finished classifiers' out-of-fold results, in memory and on disk: a later start
    (or a run after a cancel) reads them instead of fitting again."""
    from bnexplore.cache import DiskCache

    return DiskCache("compare-oof", front={})


class Cancelled(Exception):
    """A run cancelled by the user; ``partial`` holds the classifiers finished."""

    def __init__(self, partial):
        super().__init__("cancelled")
        self.partial = partial


#: run key -> {"done", "total", "msg", "cancel", "partial"} of the runs going on.
_PROGRESS: dict[tuple, dict] = {}
_PROGRESS_LOCK = threading.Lock()


def run_key(data: Data, classifiers, n_splits, random_state, max_parents, n, penalty,
            queue_width) -> tuple:
    return (data.key, tuple(classifiers), int(n_splits), int(random_state), int(max_parents),
            int(n), float(penalty), int(queue_width))


def progress(key: tuple) -> dict:
    """The progress record of run ``key`` (created when missing)."""
    with _PROGRESS_LOCK:
        return _PROGRESS.setdefault(key, {"done": 0, "total": 1, "msg": "waiting",
                                          "cancel": threading.Event(), "partial": None})


def frame(data: Data) -> pd.DataFrame:
    """The rows with a class value (cross-validation needs one per row)."""
    return data.frame.dropna(subset=[data.target]).reset_index(drop=True)


@cached(max_items=16)
def comparison(data: Data, classifiers: tuple, n_splits: int, random_state: int,
               max_parents: int, n: int, penalty: float, queue_width: int,
               backend: str = "inline"):
    """The :class:`~bnexplore.experiments.compare.CVResult` of one setting; raises
    :class:`Cancelled` (not cached) when a user cancels it."""
    key = run_key(data, classifiers, n_splits, random_state, max_parents, n, penalty,
                  queue_width)
    rec = progress(key)
    rec["cancel"].clear()

    def on_progress(done, total, msg):
        rec.update(done=done, total=total, msg=msg)

    res = cmp.cross_validate_classifiers(
        frame(data), data.target, list(classifiers), n_splits=int(n_splits),
        random_state=int(random_state), max_parents=int(max_parents), n=int(n),
        penalty=float(penalty), queue_width=int(queue_width), progress_callback=on_progress,
        cancel_event=rec["cancel"], result_callback=lambda r: rec.update(partial=r),
        backend=backend, scheduler=SCHEDULER or None, cache=oof_cache())
    if res.cancelled:
        raise Cancelled(res)
    return res


def metrics_table(result, metric: str, baseline: str, level: float, test: str) -> pd.DataFrame:
    """The metrics with the spread over folds and the paired test against ``baseline``."""
    return cmp.metric_table(result, baseline=baseline, metric=metric, level=float(level),
                            test=TESTS.get(test, test))


class CompareClassifiers(App):
    """Stratified cross-validation of the papers' classifiers and two baselines.

    Parameters
    ----------
    data : DataFrame or str, optional
        Your table, or a bundled data set or network (default ``"vote"``).
    classifiers : list of str
        Keys of :data:`bnexplore.experiments.compare.CLASSIFIERS`.
    n_splits : int
        Folds.
    random_state : int
        The folds' shuffle.
    max_parents, n, penalty, queue_width
        The classifiers' shared parameters (AMA/GTT parents, M*'s parents, STAN/SFAN's
        exclusion penalty, ISMB's queue width).
    metric, baseline, level, test, positive
        What the page shows: the compared metric, the baseline of the paired test, its
        level and kind, and the positive class of the ROC curves.

    Examples
    --------
    >>> import bnexplore as bx
    >>> app = bx.apps.CompareClassifiers("iris", classifiers=["SNN", "LogReg"], n_splits=3)
    >>> app.run()                       # served: a change runs in a worker thread
    >>> sorted(app.result.proba)
    ['LogReg', 'SNN']
    """

    title = "Compare classifiers"
    description = ("Stratified cross-validation of NB, TAN, AODE, AMA, ISMB and the rest against "
                   "logistic regression and kNN: ROC curves per class, AUC, log loss, CAL and "
                   "Dash & Cooper's delta against the best, on bundled data or your own.")
    controls = ("classifiers", "n_splits", "random_state", "max_parents", "n", "penalty",
                "queue_width", "metric", "baseline", "level", "test", "positive")
    widget_types = {"classifiers": pn.widgets.MultiChoice, "metric": pn.widgets.Select}
    warm_settings = ({"classifiers": ["SNN", "TAN", "STAN", "AMA", "LogReg"], "n_splits": 2},)

    classifiers = param.ListSelector(default=[], objects=[], label="Classifiers")
    n_splits = param.Integer(default=5, bounds=(2, 10), label="Folds")
    random_state = param.Integer(default=0, bounds=(0, 20), label="Seed (folds)")
    max_parents = param.Integer(default=DEFAULT_PARAMS["max_parents"], bounds=PARAM_RANGES["max_parents"],
                                label="k (max parents: AMA, GTT)")
    n = param.Integer(default=DEFAULT_PARAMS["n"], bounds=PARAM_RANGES["n"],
                      label="n (AMA summary-network parents)")
    penalty = param.Number(default=DEFAULT_PARAMS["penalty"], bounds=PARAM_RANGES["penalty"],
                           step=0.5, label="Exclusion penalty (STAN, SFAN)")
    queue_width = param.Integer(default=DEFAULT_PARAMS["queue_width"], bounds=PARAM_RANGES["queue_width"],
                                label="ISMB queue width")
    metric = param.Selector(default="auc", objects=list(cmp.FOLD_METRICS),
                            label="Compared metric (error, auc, log_loss, squared_error)")
    baseline = param.Selector(default=None, objects=[], allow_None=True, check_on_set=False,
                              label="Baseline of the paired test")
    level = param.Selector(default=0.05, objects=LEVELS, label="Significance level")
    test = param.Selector(default=list(TESTS)[0], objects=list(TESTS), label="Paired test")
    positive = param.Selector(default=None, objects=[], allow_None=True, check_on_set=False,
                              label="ROC: positive class")
    use_dask = param.Boolean(default=False, label=f"Run on the Dask cluster {SCHEDULER}",
                             precedence=1 if SCHEDULER else -1)
    result = param.Parameter(default=None, precedence=-1,
                             doc="The finished comparison of the current settings (or None).")
    error = param.Parameter(default=None, precedence=-1, doc="Why the last run failed.")
    status = param.String(default=NOT_RUN, precedence=-1,
                          doc="The run's state in a line.")
    _started = False

    def __init__(self, data=None, target=None, **params):
        avail = available_classifiers()
        usable = [k for k, why in avail.items() if not why]
        self.param.classifiers.objects = usable
        self.param.baseline.objects = usable
        params.setdefault("classifiers", [k for k in cmp.DEFAULT_CLASSIFIERS if k in usable])
        params.setdefault("baseline", "SNN" if "SNN" in usable else (usable or [None])[0])
        self._applying = False
        self._running = None            # the key of the run going on for this page
        self._lock = threading.Lock()
        super().__init__(data, target, **params)
        self.param.watch(self._on_run_settings, list(RUN))

    # ------------------------------------------------------------------ runs
    def dependent(self, data: Data) -> dict:
        col = data.frame[data.target]
        classes = [str(c) for c in (col.cat.categories if hasattr(col, "cat")
                                    else sorted(col.dropna().unique()))]
        self.param.positive.objects = classes
        keep = (self.positive if self.positive in classes
                else classes[-1 if len(classes) == 2 else 0] if classes else None)
        # the old results go with the old data, in the same update
        return {"positive": keep, "result": None, "error": None,
                "status": self.status if self._started else NOT_RUN}

    def _settings(self) -> tuple:
        return (self.data, tuple(self.classifiers), self.n_splits, self.random_state,
                self.max_parents, self.n, self.penalty, self.queue_width)

    def key(self) -> tuple | None:
        """The current run's key (None without data)."""
        if self.data is None or self.data.frame is None:
            return None
        return run_key(*self._settings())

    def _on_run_settings(self, *events, force: bool = False) -> None:
        if self._applying:
            return
        key = self.key()
        with self._lock:
            if key is not None and key == self._running and not force:
                return                      # this setting's run is already going
            self._running = key
        if on_session():
            pn.state.execute(self._run_served)    # cross-validates in a worker thread
        else:
            self.run()

    def apply_query(self, values: dict) -> None:
        """A link's settings, applied together: one run (not one per setting)."""
        self._applying = True
        try:
            super().apply_query(values)
        finally:
            self._applying = False
        self._on_run_settings()

    def template(self):
        page = super().template()
        # the first run starts once the page is served (a link's settings applied)
        pn.state.onload(self._start_unless_running)
        return page

    def _start_unless_running(self) -> None:
        if self.result is None and self.error is None and not self._started:
            self._on_run_settings()

    def run(self) -> None:
        """Compute the comparison of the current settings and show it (if the settings
        are still those when it finishes)."""
        key = self.key()
        if key is None:
            return
        started = self._begin()
        self._show(key, started, *self._compute())

    async def _run_served(self) -> None:
        """:meth:`run` on a served page: the page changes on the event loop, the
        cross-validation runs in a worker thread."""
        key = self.key()
        if key is None:
            return
        started = self._begin()
        self._show(key, started, *await in_worker(self._compute))

    def _begin(self) -> float:
        self._started = True
        self.param.update(result=None, error=None, status="Cross-validating...")
        return time.monotonic()

    def _compute(self) -> tuple:
        """``(result, error)`` of the current settings' comparison."""
        backend = "dask" if self.use_dask and SCHEDULER else "inline"
        try:
            return comparison(*self._settings(), backend=backend), None
        except Cancelled as exc:
            return exc.partial, None
        except Exception as exc:  # noqa: BLE001 - shown in the page
            return None, exc

    def _show(self, key: tuple, started: float, res: Any, err: Exception | None) -> None:
        with self._lock:
            if self._running == key:
                self._running = None
        if self.key() != key:        # the settings moved on: another run shows its own
            return
        if err is not None:
            self.param.update(result=None, error=err,
                              status="The comparison could not run:")
            return
        note = " (cancelled: finished classifiers only)" if res.cancelled else ""
        self.param.update(result=res, error=None, status=(
            f"Done: {len(res.proba)} classifiers, {res.settings['n_splits']} folds, "
            f"{time.monotonic() - started:.1f} s{note}"))

    def cancel(self, *_) -> None:
        """Cancel the current run after the classifier being fitted."""
        key = self.key()
        if key is not None:
            progress(key)["cancel"].set()
            self.status = "Cancelling after the current fit..."

    def results(self) -> list:
        self.run()
        return [self.result]

    # ------------------------------------------------------------------ page
    def _status_text(self) -> str:
        key = self.key()
        if (self.result is not None or self.error is not None or key is None
                or not self._started):
            return self.status
        rec = progress(key)
        return f"Cross-validating: {rec['done']}/{rec['total']} fits ({rec['msg']})"

    def controls_row(self) -> pn.Row:
        """The progress bar, the cancel and run buttons (progress polled when served)."""
        bar = pn.indicators.Progress(value=0, max=100, active=False, bar_color="primary",
                                     sizing_mode="stretch_width", css_classes=["bnx-progress"])
        cancel = pn.widgets.Button(name="Cancel", button_type="warning", width=130, height=40,
                                   sizing_mode="fixed")
        again = pn.widgets.Button(name="Run again", button_type="primary", width=130, height=40,
                                  sizing_mode="fixed")
        cancel.on_click(self.cancel)
        again.on_click(lambda *_: self._on_run_settings(force=True))
        status = pn.pane.HTML("", margin=(0, 10), sizing_mode="stretch_width")

        def poll():          # text only: nothing is drawn on the event loop
            key = self.key()
            running = key is not None and self.result is None and self.error is None
            rec = progress(key) if running else None
            bar.active = running
            bar.value = (min(100, int(100 * rec["done"] / max(rec["total"], 1))) if running
                         else 100 if self.result is not None else 0)
            cancel.disabled = not running
            text = f"<div class='bnx-cv-status'>{md_text(self._status_text())}</div>"
            if status.object != text:
                status.object = text
        poll()
        if on_session():
            cb = pn.state.add_periodic_callback(poll, period=POLL_MS)
            pn.state.on_session_destroyed(lambda ctx: cb.stop())
        else:
            self.param.watch(lambda *_: poll(), ["status", "result", "error"])
        return pn.Column(pn.Row(bar, cancel, again, sizing_mode="stretch_width"), status,
                         sizing_mode="stretch_width")

    def views(self) -> list:
        missing = {k: why for k, why in available_classifiers().items() if why}
        note = [pn.pane.Alert("Not available yet (left out): " + "; ".join(
            f"{md_text(k)} ({md_text(v, max_len=80)})" for k, v in missing.items()),
            alert_type="info")] if missing else []
        return [self.controls_row(), *note, self.problems_view, self.tests_view,
                pn.pane.Markdown("### ROC curves and one-vs-rest AUC", margin=(10, 10, 0, 10)),
                self.roc_view, self.heat_view]

    def _shown(self):
        return self.result is not None and self.result.proba

    @param.depends("result", "error")
    @guarded
    def problems_view(self):
        if self.error is not None:
            return pn.pane.Alert(f"**{type(self.error).__name__}**: {md_text(self.error)}",
                                 alert_type="danger", css_classes=["bnx-error"])
        if self.result is not None and self.result.errors:
            return pn.pane.Alert("**Some classifiers failed** (the others are shown):\n\n"
                                 + "\n".join(f"- {md_text(k)}: {md_text(v)}"
                                             for k, v in self.result.errors.items()),
                                 alert_type="warning")
        return pn.pane.Markdown("", margin=0)

    def _baseline(self) -> str:
        keys = list(self.result.proba)
        return self.baseline if self.baseline in keys else keys[0]

    @param.depends("result", "metric", "baseline", "level", "test", "presentation")
    @guarded
    def tests_view(self):
        """W/D/L summary, per-fold spread and the metrics table with the paired test."""
        from bnexplore.viz import compare as vc

        if not self._shown():
            return pn.pane.Markdown("", margin=0)
        res, base, kind = self.result, self._baseline(), TESTS[self.test]
        folds = res.fold_metrics()
        tests = cmp.paired_test(folds, self.metric, base, level=float(self.level), test=kind)
        wdl = cmp.win_draw_loss(tests)
        label = vc.METRIC_LABELS[self.metric]
        table = metrics_table(res, self.metric, base, self.level, self.test)
        return pn.Column(
            pn.pane.Markdown(
                f"**{label}, each classifier against {md_strong(base)}** ({md_text(self.test)}, "
                f"{res.settings.get('n_splits', '?')} folds, level {float(self.level):g}): "
                f"**{wdl['win']} win / {wdl['draw']} draw / {wdl['loss']} loss** (a win is a "
                f"significant difference in the classifier's favour).",
                css_classes=["bnx-wdl"], margin=(0, 10)),
            picture(self.look(vc.fold_spread_plot(folds, self.metric, tests=tests,
                                                  responsive=True)),
                    sizing_mode="stretch_width", height=max(220, 70 + 42 * len(tests)) + 10),
            pn.pane.Markdown("### Metrics (pooled out-of-fold predictions, \u00b1 sd over folds)",
                             margin=(10, 10, 0, 10)),
            pn.pane.Markdown(f"*vs {md_text(base)}*: the paired test on {label}; AUC is Hand & "
                             "Till's; sq. error the squared error; delta Dash & Cooper's share "
                             "of missing ROC area against the best. The CSV has every column "
                             "and the test settings.", margin=(0, 10)),
            pn.Column(pn.widgets.Tabulator(vc.format_comparison_table(table), show_index=False,
                                           disabled=True, layout="fit_data_stretch",
                                           sizing_mode="stretch_width",
                                           css_classes=["bnx-metrics"],
                                           stylesheets=self.table_styles(
                                               [":host { max-width: 100%; }"])),
                      self.csv(table, "metrics"), sizing_mode="stretch_width"),
            sizing_mode="stretch_width")

    @param.depends("result", "positive", "presentation")
    @guarded
    def roc_view(self):
        from bnexplore.viz import compare as vc

        if not self._shown():
            return pn.pane.Markdown("", margin=0)
        classes = [str(c) for c in self.result.classes]
        pos = (self.positive if self.positive in classes
               else classes[-1 if len(classes) == 2 else 0])
        return picture(self.look(vc.roc_comparison(self.result.roc(pos), pos, width=None,
                                                   height=480, responsive=True)),
                       sizing_mode="stretch_width", height=490, min_width=320)

    @param.depends("result", "presentation")
    @guarded
    def heat_view(self):
        from bnexplore.viz import compare as vc

        if not self._shown():
            return pn.pane.Markdown("", margin=0)
        ovr = self.result.ovr_auc()
        return pn.Column(picture(vc.ovr_auc_heatmap(ovr, width=520, height=360,
                                                    presentation=self.presentation)),
                         self.csv(ovr.reset_index(names="classifier"), "one-vs-rest-auc"),
                         sizing_mode="stretch_width")
