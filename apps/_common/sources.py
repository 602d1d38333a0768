"""Data sources of the apps: bundled data sets, network samples and uploads.

:class:`DataSource` holds the widgets that choose the data; :func:`load_data` serves
a bundled data set (MDL-discretised), an uploaded one or a network sample.
"""
from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import Any, Callable

import panel as pn

from .caching import cached
from .pages import no_url
from .text import md_join, md_strong, md_text
from .uploads import (UPLOAD_MAX_BYTES, UPLOAD_PREFIX, UPLOAD_TIMEOUT_S, PreparedUpload, UploadJob,
                      _size_error, _upload_guard_class, _UPLOAD_IDS, _uploaded, check_upload,
                      process_upload, store_upload, warm_up_upload_workers)
from .views import live_session, on_document, widget


#: sample sizes offered for network samples.
SAMPLE_SIZES = [100, 200, 500, 1000, 2000, 5000, 10000]
DATASET = "Data set"
NETWORK = "Network sample"


def _names(module: str) -> list[str]:
    try:
        import importlib
        return list(importlib.import_module(f"bnexplore.{module}").names())
    except (ImportError, AttributeError):  # module not available in this checkout
        return []


def load_data(kind: str, name: str, n: int = 1000, seed: int = 0):
    """A bundled data set (MDL-discretised), an uploaded one, or a network sample.

    In data sets a missing value becomes a state of its own (``missing="state"``), so
    no rows are lost. Names starting with :data:`UPLOAD_PREFIX` are uploaded files
    (see :class:`DataSource`). Bundled data and samples are cached on the arguments,
    shared by all sessions of the server.
    """
    if kind == DATASET and isinstance(name, str) and name.startswith(UPLOAD_PREFIX):
        return _uploaded(name)
    return _load_bundled(kind, name, n, seed)


@cached(maxsize=32)
def _load_bundled(kind: str, name: str, n: int = 1000, seed: int = 0):
    import warnings

    import bnexplore as bx

    if kind == DATASET:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return bx.datasets.load(name, discretize="mdl", missing="state")
    if kind == NETWORK:
        return bx.networks.load(name).sample(int(n), random_state=seed)
    raise ValueError(f"kind must be {DATASET!r} or {NETWORK!r}, got {kind!r}")


def cut_points_markdown(cuts: dict, max_rows: int = 30) -> str:
    """A Markdown table of MDL cut points (``column -> [c1, c2, ...]``).

    Column names are literal text (:func:`md_text`).
    """
    if not cuts:
        return "No continuous column: nothing was discretised."
    lines = ["| column | cut points |", "|---|---|"]
    for i, (c, v) in enumerate(cuts.items()):
        if i == max_rows:
            lines.append(f"| ... | {len(cuts) - max_rows} more |")
            break
        txt = ", ".join(f"{x:.4g}" for x in v) if v else "none (one state, 'All')"
        lines.append(f"| {md_text(c)} | {txt} |")   # a column name may hold "|" or HTML
    return "\n".join(lines)


def _env_float(name: str, default: float = 0.0) -> float:
    """The positive number in the environment variable ``name``, else ``default``."""
    import os
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if value > 0 else default


class DataSource:
    """Widgets that choose a bundled data set, an uploaded file or a network sample.

    Attributes
    ----------
    kind, dataset, network, sample_size : panel widgets
        Bind these (``pn.bind(f, src.kind, src.dataset, src.network, src.sample_size)``) or
        use :meth:`param_values` as the arguments of a cached loader.
    upload, upload_target, upload_info : panel widgets / pane
        The file input (CSV or ARFF, at most :data:`UPLOAD_MAX_BYTES`), the choice of
        its class column, and the report (errors, MDL cut points). A successful upload
        becomes a new entry of ``dataset`` (its name starts with
        :data:`UPLOAD_PREFIX`) that :func:`load_data` serves.
    upload_guard : panel component
        Invisible; refuses an empty or too large file in the browser, before it is sent.

    Parameters
    ----------
    background : bool or None
        Read and prepare uploads in a worker process (:class:`UploadJob`) so that the
        server's event loop stays free; the report is written back on the document's
        next tick. ``None`` (default): in the background when served (a Bokeh
        session), at once otherwise (notebooks, tests). A new upload or target
        supersedes (kills) the job still running. :meth:`wait_upload` waits for it.

    Examples
    --------
    >>> src = DataSource()
    >>> src.kind.value in (DATASET, NETWORK)
    True
    """

    def __init__(self, default_dataset: str = "vote", default_network: str = "asia",
                 default_kind: str = DATASET, default_n: int = 1000, upload: bool = True,
                 background: bool | None = None):
        datasets = _names("datasets")
        networks = _names("networks")
        kinds = [k for k, avail in ((DATASET, datasets), (NETWORK, networks)) if avail]
        kinds = kinds or [DATASET, NETWORK]
        if default_kind not in kinds:
            default_kind = kinds[0]
        self.kind = widget(pn.widgets.RadioButtonGroup, "Source", options=kinds,
                           value=default_kind, color="primary")
        self.dataset = widget(
            pn.widgets.Select, "Data set", options=datasets,
            value=default_dataset if default_dataset in datasets else (datasets or [None])[0])
        self.network = widget(
            pn.widgets.Select, "Network", options=networks,
            value=default_network if default_network in networks else (networks or [None])[0])
        self.sample_size = widget(
            pn.widgets.DiscreteSlider, "Sample size", options=SAMPLE_SIZES,
            value=default_n if default_n in SAMPLE_SIZES else 1000)
        self.has_upload = bool(upload)
        self._uid = f"bnx-upload-{next(_UPLOAD_IDS)}"
        self.upload = no_url(pn.widgets.FileInput(
            accept=".csv,.arff,.txt,.tsv", multiple=False, css_classes=["bnx-upload", self._uid],
            sizing_mode="stretch_width"))
        self.upload_guard = _upload_guard_class()(
            max_bytes=UPLOAD_MAX_BYTES, target_class=self._uid, width=0, height=0, margin=0)
        self.upload_target = no_url(widget(pn.widgets.Select, "Class column of the file",
                                           options=[], visible=False))
        self.upload_info = pn.pane.Markdown("", css_classes=["bnx-upload-info"],
                                            margin=(0, 10), sizing_mode="stretch_width")
        self.upload_label = pn.pane.Markdown(
            f"Or upload a CSV / ARFF file (at most {UPLOAD_MAX_BYTES / 1e6:g} MB):",
            margin=(5, 10, 0, 10))
        self._columns: list | None = None     # columns of the file read last
        self._file = ("", b"")
        self._busy = False
        self._job: UploadJob | None = None
        self._job_id = 0
        self._doc = live_session()
        if background is None:
            background = self._doc is not None
        self.background = bool(background)
        #: seconds a background upload job waits before reading (for tests; the
        #: environment variable BNX_UPLOAD_TEST_DELAY sets it for a test server).
        self.upload_delay = _env_float("BNX_UPLOAD_TEST_DELAY")
        #: seconds a background upload job may run (UPLOAD_TIMEOUT_S, or the
        #: environment variable BNX_UPLOAD_TIMEOUT_S).
        self.upload_timeout = _env_float("BNX_UPLOAD_TIMEOUT_S", UPLOAD_TIMEOUT_S)
        if self._doc is not None:
            with contextlib.suppress(Exception):
                self._doc.on_session_destroyed(lambda ctx: self._cancel_job())
        if self.background and self.has_upload:
            warm_up_upload_workers()
        self._sync(self.kind.value)
        self.kind.param.watch(lambda e: self._sync(e.new), "value")
        self.upload.param.watch(self._on_upload, "value")
        self.upload_target.param.watch(self._on_target, "value")
        self.upload_guard.param.watch(self._on_refused, "refused")

    # ---------------------------------------------------------------- upload handling
    def _show_error(self, exc: BaseException) -> None:
        msg = str(exc).replace("\n", " ")
        self.upload_info.object = (f'<div class="bnx-upload-error" style="color:#a40000">'
                                   f"<b>Cannot use this file</b> ({type(exc).__name__}): "
                                   f"{md_text(msg)}</div>")

    def _on_upload(self, event) -> None:
        content = event.new
        filename = self.upload.filename or "upload"
        if isinstance(content, list):  # multiple=True in some Panel versions
            content = content[0] if content else b""
            filename = filename[0] if isinstance(filename, list) and filename else filename
        if content is None:   # the input was cleared (the guard reports a refused file)
            return
        try:
            check_upload(content, filename)
        except Exception as exc:  # noqa: BLE001 - shown in the page, never a traceback
            self._refuse(exc)
            return
        self._file = (str(filename), bytes(content))
        self._columns = None
        self.upload_target.visible = False
        self._start(None)

    def _on_refused(self, event) -> None:
        info = event.new or {}
        name = Path(str(info.get("name") or "upload")).name
        size = int(info.get("size") or 0)
        self._refuse(ValueError(f"the file {name!r} is empty: upload a CSV or ARFF file with "
                                f"data") if size == 0 else
                     _size_error(name, size, self.upload_guard.max_bytes))

    def _refuse(self, exc: BaseException) -> None:
        """A file refused before reading: supersede any job, show why."""
        self._cancel_job()
        self._job_id += 1
        self._columns = None
        self.upload_target.visible = False
        self.upload_target.disabled = False
        self._show_error(exc)

    def _on_target(self, event) -> None:
        if not self._busy and self._columns is not None:
            self._start(self.upload_target.value)

    # ---------------------------------------------------------------- upload jobs
    def _cancel_job(self) -> None:
        job, self._job = self._job, None
        if job is not None:
            job.cancel()

    def _start(self, target: str | None) -> None:
        """Read (and prepare for ``target``) the current file, superseding any job."""
        self._cancel_job()
        self._job_id += 1
        job_id = self._job_id
        name, content = self._file
        self.upload_target.disabled = True
        self.upload_info.object = (
            f'<div class="bnx-upload-busy">Reading the file <b>{md_text(Path(name).name)}'
            f"</b> ({len(content) / 1e3:,.0f} KB)...</div>")
        if not self.background:
            try:
                result: Any = process_upload(content, name, target)
            except Exception as exc:  # noqa: BLE001 - shown in the page
                result = exc
            self._finish(job_id, result)
            return
        self._job = UploadJob(content, name, target,
                              functools.partial(self._dispatch, job_id),
                              timeout=self.upload_timeout, delay=self.upload_delay)

    def _dispatch(self, job_id: int, result: Any) -> None:
        """From a job's thread: hand ``result`` to :meth:`_finish` on the document."""
        if self._doc is None:
            self._finish(job_id, result)
        else:
            on_document(self._doc, self._finish, job_id, result)

    def _finish(self, job_id: int, result: Any) -> None:
        """Show a job's result (on the document); results of superseded jobs are dropped."""
        if job_id != self._job_id:
            return
        self._job = None
        self.upload_target.disabled = False
        if isinstance(result, BaseException):
            self._columns = None
            self.upload_target.visible = False
            self._show_error(result)
            return
        self._columns = list(result.columns)
        self._busy = True
        try:
            self.upload_target.options = self._columns
            self.upload_target.value = result.target
        finally:
            self._busy = False
        self.upload_target.visible = self.has_upload and self.kind.value != NETWORK
        if result.error is not None:
            self._show_error(result.error)
            return
        self._apply(result.prepared)

    def wait_upload(self, timeout: float | None = None) -> bool:
        """Wait for the upload job still running (if any); ``True`` when none is left."""
        job = self._job
        return job is None or job.wait(timeout)

    def _apply(self, prepared: PreparedUpload) -> None:
        key = store_upload(prepared, *self._file)
        df = prepared.frame
        classes = md_join(df[prepared.target].cat.categories, max_items=10)
        notes = "".join(f"\n\n*Note*: {md_text(n)}" for n in prepared.notes)
        self.upload_info.object = (
            f'<span class="bnx-upload-ok">{md_strong(self._file[0])}</span>: '
            f"{len(df)} rows, {df.shape[1] - 1} features, class "
            f"{md_strong(prepared.target)} ({classes}).{notes}\n\n"
            f"MDL cut points of the continuous columns:\n\n"
            f"{cut_points_markdown(prepared.cut_points)}")
        opts = [o for o in self.dataset.options if not str(o).startswith(UPLOAD_PREFIX)
                or o == key]
        self.dataset.options = opts + ([key] if key not in opts else [])
        self.kind.value = DATASET
        self.dataset.value = key

    def _sync(self, kind: str) -> None:
        net = kind == NETWORK
        self.dataset.visible = not net
        self.network.visible = net
        self.sample_size.visible = net
        for w in (self.upload, self.upload_label, self.upload_info):
            w.visible = self.has_upload and not net
        self.upload_target.visible = (self.has_upload and not net and self._columns is not None)

    @property
    def name(self) -> pn.widgets.Widget:
        """The select of the active kind."""
        return self.network if self.kind.value == NETWORK else self.dataset

    def widgets(self) -> list:
        """The widgets for a sidebar."""
        out = [self.kind, self.dataset, self.network, self.sample_size]
        if self.has_upload:
            out += [self.upload_label, self.upload, self.upload_guard, self.upload_target,
                    self.upload_info]
        return out

    def panel(self) -> pn.Column:
        return pn.Column(*self.widgets(), sizing_mode="stretch_width")

    def bind(self, func: Callable, **kwargs: Any):
        """``func(kind, name, n, **kwargs)`` bound to these widgets."""
        def _call(kind, dataset, network, n, **kw):
            if kind == NETWORK:
                return func(kind, network, int(n), **kw)
            return func(kind, dataset, 0, **kw)  # n is unused: keep cache keys stable
        return pn.bind(_call, self.kind, self.dataset, self.network, self.sample_size, **kwargs)


def describe_source(kind: str, name: str, n: int) -> str:
    """Short text such as ``'vote (data set)'`` or ``'asia, 1000 samples'``.

    Ready for a Markdown or HTML pane: the name (an uploaded file's name, for
    uploads) is literal text (:func:`md_text`); do not escape the result again.

    Examples
    --------
    >>> describe_source(DATASET, "a*b*", 0)
    'a&#42;b&#42; (data set)'
    """
    return f"{md_text(name)} (data set)" if kind == DATASET else f"{md_text(name)}, {n} samples"
