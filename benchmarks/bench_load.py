"""Load benchmark: many browser sessions against one loopback ``panel serve apps/``.

For each app measured (Order averaging and Learn a structure by default; ``--apps all``
for every app), ``--sessions`` headless Chromium contexts (separate users) open the app
at once, then every session moves a slider at the same moment, several rounds, and
waits for its own view to show the new setting. Reported per app:

* time to open all sessions (every view filled in);
* update latency (key press -> the view shows the new setting), median and 95th
  percentile, for the first visit of a setting (computed) and for cached settings;
* for Order averaging, the same cached rounds while one more session runs a long
  computation (hailfinder sample, k = 4): whether the others were served meanwhile;
* the server's resident memory (psutil RSS) before the sessions, at the peak and
  after every session was closed (and Bokeh had time to discard them).

Two kinds of client. ``--client chromium`` (the default) drives real pages, so it
also measures drawing; on the project's 2-core machine the 30 browsers take most of
the CPU the server needs. ``--client python`` opens each session with Bokeh's Python
client (``bokeh.client.pull_session``, one thread per session): the server does all
its work (builds the page, computes and serialises every view, receives the widget
change), the client only applies the document patches, so the figures measure the
server. The page is "loaded" when the client sends the ``document_ready`` event a
browser sends.

Not a test: timing depends on the machine. Targets on the project's 2-core machine:
all sessions open within 60 s, a cached setting under 1 s median, and no session
waiting behind another session's long computation.

What each app moves (:data:`SPECS`): Order averaging n, Learn a structure the max
parents, Averaging over orders k, Mixture weights the training size, Forests k,
Clustering hierarchy the cluster size, ISMB trace the number of blankets drawn (no
computation: only pictures). The sessions cycle over five data sets (networks for
Clustering, test instances for ISMB), so a setting is shared by every fifth session.
A view "shows" a setting when its summary text or a picture title carries it and no
view of the page is computing any more (see :func:`_slider_spec`); the Python client
reads this from the session's document, a browser from its address and its panes.

Only 127.0.0.1 is used; every wait has a deadline and the rounds are counted.

Run: python benchmarks/bench_load.py [--client python] [--sessions 30] [--rounds 4]
     [--apps order_averaging structure | --apps all]
"""
from __future__ import annotations

import argparse
import dataclasses
import html
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--no-first-run", "--disable-component-update", "--disable-sync"]
OPEN_DEADLINE = 300.0      # seconds for every session to open (the target is 60)
ROUND_DEADLINE = 180.0     # seconds for every session of a round to see its result
STEADY_DEADLINE = 60.0     # seconds for one session's move to a computed setting
#: texts that carry a setting, compared between a late session's client and server
SETTING_TEXT = (r"for cluster size \d|k = \d|n = \d|#\d+ |at most \d parents|bnx-score"
                r"|penalty = ")
PY_OPEN_DEADLINE = 120.0   # the same, Python client (the server opens 30 in 15-30 s)
LONG_QUERY = ("source=network+sample&network=hailfinder&sample_size=10000"
              "&max_parents=4&n=4")


# ------------------------------------------------------------------ server
def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``panel serve apps/`` on a free loopback port (a context manager)."""

    def __init__(self, timeout: float = 120.0, probe: bool = False):
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.timeout = timeout
        #: a folder through which the server's probe (``_load_probe.py``) answers
        self.probe = Path(tempfile.mkdtemp(prefix="bench-load-probe-")) if probe else None

    def __enter__(self) -> "Server":
        cmd = [sys.executable, "-m", "panel", "serve", "apps/", "--port", str(self.port),
               "--address", "127.0.0.1", f"--allow-websocket-origin=127.0.0.1:{self.port}"]
        # kept after the run: the server's log holds the traceback of every error box
        self.log = tempfile.NamedTemporaryFile("w+", prefix="bench-load-", suffix=".log",
                                               delete=False)
        env = dict(os.environ, PYTHONUNBUFFERED="1", BOKEH_BROWSER="none")
        if self.probe is not None:
            cmd += ["--setup", str(REPO / "benchmarks" / "_load_probe.py")]
            env["BNX_LOAD_PROBE"] = str(self.probe)
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"panel serve exited: {Path(self.log.name).read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.base}/apps", timeout=5) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.5)
        self.__exit__()
        raise RuntimeError("panel serve did not answer in time")

    def documents(self, timeout: float = 15.0) -> dict:
        """What the server's documents hold, per session id (``--probe`` only)."""
        if self.probe is None:
            return {}
        dump = self.probe / "dump.json"
        dump.unlink(missing_ok=True)
        (self.probe / "request").touch()
        deadline = time.monotonic() + timeout
        while not dump.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        return json.loads(dump.read_text()) if dump.exists() else {}

    def rss_mb(self) -> float:
        import psutil
        return psutil.Process(self.proc.pid).memory_info().rss / 1e6

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.log.close()
        print(f"server log: {self.log.name}", file=sys.stderr)


# ------------------------------------------------------------------ apps
@dataclass
class AppSpec:
    """How to drive one app: its URL per session, its slider, what "updated" means."""

    name: str
    query: Callable[[int], str]             # session index -> extra query string
    handle: int                             # index of the slider handle among visible ones
    ready: Callable[[object, int], bool]     # (page, session) -> first view shown
    shows: Callable[[object, int, int], bool]  # (page, session, slider value) -> updated
    values: tuple[int, int]                 # the slider moves between these two values
    slider: str = ""                        # the slider's title (Python client)
    doc_ready: Callable[[object, int], bool] | None = None       # (document, session)
    doc_shows: Callable[[object, int, int], bool] | None = None  # (document, session, value)
    notes: list = field(default_factory=list)


def _has_text(page, pattern: str) -> bool:
    # text selectors pierce the shadow roots Panel renders into
    return page.get_by_text(re.compile(pattern)).count() > 0


OA_DATA = ["vote", "breast-cancer", "labor", "credit-g", "diabetes"]   # >= 6 columns: n can reach 5


_PROPS: dict[type, frozenset] = {}


def _prop(m, name: str):
    """``m.name`` if the Bokeh model ``m`` has that property, else None. (Asking a model
    for an attribute it lacks costs a "did you mean" search: with 30 sessions polled,
    that was most of the client's time.)"""
    cls = type(m)
    props = _PROPS.get(cls)
    if props is None:
        props = _PROPS[cls] = frozenset(cls.properties())
    return getattr(m, name) if name in props else None


def _doc_texts(doc, css_class: str | None = None) -> list[str]:
    """Texts of the document's Markdown/HTML models (optionally of one CSS class)."""
    out = []
    for m in list(doc.models):
        text = _prop(m, "text")
        if isinstance(text, str) and (css_class is None or css_class in (_prop(m, "css_classes") or [])):
            out.append(text)
    return out


def _doc_has_text(doc, pattern: str) -> bool:
    rx = re.compile(pattern)
    return any(rx.search(t) for t in _doc_texts(doc))


def order_averaging_spec() -> AppSpec:
    return AppSpec(
        name="order_averaging",
        query=lambda i: f"dataset={OA_DATA[i % len(OA_DATA)]}&n=4",
        handle=1,                                       # k, then n
        ready=lambda pg, i: _has_text(pg, r"k = 2, n = 4 "),
        shows=lambda pg, i, v: _has_text(pg, rf"k = 2, n = {v} "),
        values=(4, 5), slider="n (max parents in M*)",
        doc_ready=lambda doc, i: _oa_shows(doc, 4),
        doc_shows=lambda doc, i, v: _oa_shows(doc, v))


def _oa_shows(doc, n: int) -> bool:
    # the summary text and the M* picture's title (a Bokeh Title model) both show n
    return (_doc_has_text(doc, rf"k = 2, n = {n} ")
            and _doc_has_text(doc, rf"Summary network M\* \(n = {n}\)"))


ST_DATA = ["vote", "iris", "breast-cancer", "contact-lenses", "weather.nominal"]


def structure_spec() -> AppSpec:
    import bnexplore as bx
    from bnexplore.apps.data import bundled_dataset

    refs: dict = {}

    def score(i: int, k: int) -> str:
        key = (ST_DATA[i % len(ST_DATA)], k)
        if key not in refs:   # the score the app must show, computed in this process
            df = bundled_dataset(key[0]).frame
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = bx.search.greedy_thick_thin(df, prior="K2", ess=1.0, order=None,
                                                  max_parents=k)
            refs[key] = f"{res.score:.3f}"
        return refs[key]

    def text(pg) -> str:
        loc = pg.locator(".bnx-score")
        return (loc.first.text_content() or "").strip() if loc.count() else ""

    def doc_text(doc) -> str:
        # the score is a <span class='bnx-score'> inside the summary's Markdown, whose
        # model holds the rendered HTML escaped
        for t in _doc_texts(doc):
            found = re.search(r"class=.bnx-score.>([^<]*)<", html.unescape(t))
            if found:
                return found.group(1).strip()
        return ""

    def doc_score(doc, i: int, k: int) -> bool:
        # the score can be the same for both max_parents values (a small data set): the DAG's
        # view must be done too
        return doc_text(doc) == score(i, k) and _doc_settled(doc)

    return AppSpec(
        name="structure",
        query=lambda i: f"dataset={ST_DATA[i % len(ST_DATA)]}&max_parents=3",
        handle=0,
        ready=lambda pg, i: text(pg) == score(i, 3) and _page_settled(pg),
        shows=lambda pg, i, v: text(pg) == score(i, v) and _page_settled(pg),
        values=(3, 2), slider="Max parents",
        doc_ready=lambda doc, i: doc_score(doc, i, 3),
        doc_shows=lambda doc, i, v: doc_score(doc, i, v))


def _doc_settled(doc) -> bool:
    """No view of the page is computing: the app marks its main area (class
    ``bnx-main``) with the class ``bnx-busy`` from the widget change to the last view's
    result (a view's own spinner, ``pn-loading``, shows only on long computations)."""
    classes = [_prop(m, "css_classes") or [] for m in list(doc.models)]
    views = [c for c in classes if "bnx-view" in c]
    return (bool(views) and not any("pn-loading" in c for c in views)
            and not any("bnx-busy" in c for c in classes))


def _page_settled(pg) -> bool:
    # CSS locators pierce the shadow roots Panel renders into
    return (pg.locator(".bnx-view").count() > 0
            and pg.locator(".bnx-view.pn-loading").count() == 0
            and pg.locator(".bnx-busy").count() == 0)


def _slider_spec(name: str, query: Callable[[int], str], slider: str, url_key: str,
                 values: tuple[int, int], handle: int,
                 doc_at: Callable[[object, int, int], bool]) -> AppSpec:
    """An app driven by one slider between ``values``; the sessions open at ``values[0]``.

    A document shows value ``v`` when ``doc_at(doc, session, v)`` (a summary text or a
    picture title carrying the setting) and no view is computing any more (the app marks
    its main area ``bnx-busy`` from the first view's computation to the last one's
    result; views computed on the loop from results in memory change the page in the
    same message as the setting). A
    browser page shows ``v`` when its address carries it (the page syncs every sidebar
    widget to the URL when the server takes the change) and no view is computing.
    """
    def page_at(pg, v: int) -> bool:
        return f"{url_key}={v}" in pg.url and _page_settled(pg)

    return AppSpec(
        name=name, query=lambda i: f"{query(i)}&{url_key}={values[0]}", handle=handle,
        ready=lambda pg, i: page_at(pg, values[0]), shows=lambda pg, i, v: page_at(pg, v),
        values=values, slider=slider,
        doc_ready=lambda doc, i: doc_at(doc, i, values[0]) and _doc_settled(doc),
        doc_shows=lambda doc, i, v: doc_at(doc, i, v) and _doc_settled(doc))


AO_DATA = ["vote", "breast-cancer", "diabetes", "labor", "iris"]   # <= 18 columns: exact


def all_orders_spec() -> AppSpec:
    # k moves the exact dynamic programme over all orders and three heat maps
    return _slider_spec(
        "all_orders", lambda i: f"source=data+set&dataset={AO_DATA[i % len(AO_DATA)]}",
        "k (max parents)", "max_parents", (2, 3), handle=0,
        doc_at=lambda doc, i, v: _doc_has_text(doc, rf"variables, k = {v}\b"))


MW_DATA = ["vote", "breast-cancer", "iris", "diabetes", "credit-g"]   # >= 61 training rows


def mixture_weights_spec() -> AppSpec:
    # the training size refits the four mixtures; weights, collapse and ROC pictures
    return _slider_spec(
        "mixture_weights", lambda i: f"dataset={MW_DATA[i % len(MW_DATA)]}",
        "Training size", "n_train", (60, 61), handle=0,
        doc_at=lambda doc, i, v: _doc_has_text(doc, rf"\b{v} training rows"))


FO_DATA = ["vote", "breast-cancer", "iris", "diabetes", "credit-g"]
FO_K = "k (class parents per feature; 0 drops the class)"


def forests_spec() -> AppSpec:
    # k refits SFAN, its forest (a DAG layout), the CV accuracy curve and ROC curves
    return _slider_spec(
        "forests", lambda i: f"dataset={FO_DATA[i % len(FO_DATA)]}",
        FO_K, "max_parents", (1, 0), handle=1,
        doc_at=lambda doc, i, v: _doc_has_text(doc, rf"penalty = 2, k = {v}, MAP"))


CL_NETS = ["asia", "child", "insurance", "alarm", "asia"]


def clustering_spec() -> AppSpec:
    # the cluster size reruns the incremental search: dendrogram, sub-space DAG, q traces
    return _slider_spec(
        "clustering", lambda i: (f"source=network+sample&network={CL_NETS[i % len(CL_NETS)]}"
                                 "&sample_size=1000"),
        "Cluster size", "cluster_size", (4, 3), handle=1,
        # the dendrogram's title (a Bokeh Title model) names the cluster size
        doc_at=lambda doc, i, v: _doc_has_text(doc, rf"for cluster size {v}$"))


def ismb_trace_spec() -> AppSpec:
    # the number of blankets drawn: no computation, a grid of DAG layouts to draw
    def blankets(doc, i: int, v: int) -> bool:
        # each shown blanket's title (a Bokeh Title model) starts with its rank
        models = list(doc.models)
        hidden = {r.id for m in models if _prop(m, "visible") is False for r in m.references()}
        titles = [_prop(m, "text") for m in models if m.id not in hidden]
        return sum(isinstance(t, str) and bool(re.match(r"#\d+ ", t)) for t in titles) == v

    return _slider_spec(
        "ismb_trace", lambda i: f"instance={i % 3}", "Blankets to draw",
        "n_blankets", (3, 4), handle=3, doc_at=blankets)


SPECS = {"order_averaging": order_averaging_spec, "structure": structure_spec,
         "all_orders": all_orders_spec, "mixture_weights": mixture_weights_spec,
         "forests": forests_spec, "clustering": clustering_spec, "ismb_trace": ismb_trace_spec}


# ------------------------------------------------------------------ measuring
def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))
    return xs[i]


def _progress(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _wait_all(items, pred: Callable[[object, int], bool], t0: list[float], deadline_s: float,
              on_poll: Callable[[], None], pause: Callable[[], None] | None = None) -> list[float]:
    """Poll until ``pred(item, i)`` for every item (a page or a :class:`PySession`); seconds
    since ``t0[i]`` (nan: timed out). ``pause`` waits between polls (default: 100 ms
    through the first page, which keeps Playwright's event loop running)."""
    pause = pause or (lambda: items[0].wait_for_timeout(100))
    out = [float("nan")] * len(items)
    left = set(range(len(items)))
    deadline = time.monotonic() + deadline_s
    while left and time.monotonic() < deadline:
        for i in sorted(left):
            try:
                ok = pred(items[i], i)
            except Exception:  # noqa: BLE001 - a page mid-render
                ok = False
            if ok:
                out[i] = time.monotonic() - t0[i]
                left.discard(i)
        on_poll()
        if left:
            pause()
    return out


def _steady(pages, spec: AppSpec, value: int, key: str, interval: float,
            poll: Callable[[], None]) -> list[float]:
    """Sessions move their slider one after another, ``interval`` s apart; latencies."""
    n = len(pages)
    t0 = [float("nan")] * n
    out = [float("nan")] * n
    pressed, left = 0, set()
    deadline = time.monotonic() + n * interval + ROUND_DEADLINE
    next_press = time.monotonic()
    while (pressed < n or left) and time.monotonic() < deadline:
        if pressed < n and time.monotonic() >= next_press:
            handle = pages[pressed].locator(".noUi-handle:visible").nth(spec.handle)
            handle.focus()
            handle.press(key)
            t0[pressed] = time.monotonic()
            left.add(pressed)
            pressed += 1
            next_press += interval
        for i in sorted(left):
            try:
                ok = spec.shows(pages[i], i, value)
            except Exception:  # noqa: BLE001 - a page mid-render
                ok = False
            if ok:
                out[i] = time.monotonic() - t0[i]
                left.discard(i)
        poll()
        pages[0].wait_for_timeout(50)
    return out


def run_app(browser, server: Server, spec: AppSpec, n_sessions: int, rounds: int,
            peak: list[float], interval: float = 1.0) -> dict:
    """Open ``n_sessions`` sessions of one app, move its slider ``rounds`` times; figures."""
    def poll() -> None:
        peak[0] = max(peak[0], server.rss_mb())

    url = f"{server.base}/apps?app={spec.name}"
    contexts, pages, errors = [], [], []
    res: dict = {"app": spec.name, "sessions": n_sessions}
    try:
        for i in range(n_sessions):
            ctx = browser.new_context(viewport={"width": 1280, "height": 900})
            pg = ctx.new_page()
            pg.on("pageerror", lambda exc: errors.append(str(exc)))
            pg.goto("about:blank")
            contexts.append(ctx)
            pages.append(pg)
        # open every session at once: navigations are started, not awaited one by one
        t_open = time.monotonic()
        starts = []
        for i, pg in enumerate(pages):
            starts.append(time.monotonic())
            pg.evaluate(f"window.location.href = {url + '&' + spec.query(i)!r}")
        opened = _wait_all(pages, spec.ready, [t_open] * n_sessions, OPEN_DEADLINE, poll)
        _progress(f"{spec.name}: {n_sessions} sessions open in {max(opened):.1f} s")
        res["open_all_s"] = max(opened)
        res["open_median_s"] = statistics.median(opened)

        first, cached = [], []
        lo, hi = spec.values
        seen: set = {lo}            # the sessions opened at ``lo``: it is computed
        for r in range(rounds):
            value = hi if r % 2 == 0 else lo
            key = "ArrowRight" if value > lo else "ArrowLeft"
            if hi < lo:
                key = "ArrowLeft" if value == hi else "ArrowRight"
            t0 = []
            for pg in pages:
                handle = pg.locator(".noUi-handle:visible").nth(spec.handle)
                handle.focus()
                handle.press(key)
                t0.append(time.monotonic())
            lat = _wait_all(pages, lambda pg, i: spec.shows(pg, i, value), t0, ROUND_DEADLINE,
                            poll)
            (cached if value in seen else first).extend(lat)
            _progress(f"{spec.name}: round {r + 1}, slider to {value}: median "
                      f"{_pct(lat, 0.5):.2f} s, max {max(lat):.2f} s")
            seen.add(value)
        res["first_median_s"], res["first_p95_s"] = _pct(first, 0.5), _pct(first, 0.95)
        res["cached_median_s"], res["cached_p95_s"] = _pct(cached, 0.5), _pct(cached, 0.95)
        # steady use: one session after another moves to a cached setting
        value = hi if rounds % 2 == 0 else lo
        key = "ArrowRight" if value > (lo if value == hi else hi) else "ArrowLeft"
        steady = _steady(pages, spec, value, key, interval, poll)
        _progress(f"{spec.name}: steady moves, one per {interval:g} s: median "
                  f"{_pct(steady, 0.5):.2f} s")
        res["steady_median_s"], res["steady_p95_s"] = _pct(steady, 0.5), _pct(steady, 0.95)
        res["timeouts"] = sum(x != x for x in first + cached + opened + steady)

        if spec.name == "order_averaging":
            res.update(_during_long(browser, url, pages, spec, poll, current=value))
        res["page_errors"] = len(errors)
    finally:
        for ctx in contexts:
            ctx.close()
    return res


def _during_long(browser, url: str, pages, spec: AppSpec, poll, current: int) -> dict:
    """Two cached rounds of every session while one more session runs a long fit."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        long_pg = ctx.new_page()
        long_pg.goto("about:blank")
        long_pg.evaluate(f"window.location.href = {url + '&' + LONG_QUERY!r}")
        t_long = time.monotonic()
        time.sleep(3.0)                  # its request reaches the server first
        lo, hi = spec.values
        other = lo if current == hi else hi
        there = "ArrowRight" if other > current else "ArrowLeft"
        back = "ArrowLeft" if there == "ArrowRight" else "ArrowRight"
        lat = []
        for value, key in ((other, there), (current, back)):   # both settings are cached
            t0 = []
            for pg in pages:
                handle = pg.locator(".noUi-handle:visible").nth(spec.handle)
                handle.focus()
                handle.press(key)
                t0.append(time.monotonic())
            lat += _wait_all(pages, lambda pg, i: spec.shows(pg, i, value), t0, ROUND_DEADLINE,
                             poll)
        long_running = not _has_text(long_pg, r"k = 4, n = 4 ")
        done = _wait_all([long_pg], lambda pg, i: _has_text(pg, r"k = 4, n = 4 "), [t_long],
                         600.0, poll)
        return {"long_s": done[0], "during_long_median_s": _pct(lat, 0.5),
                "during_long_p95_s": _pct(lat, 0.95),
                "others_served_while_long_ran": long_running}
    finally:
        ctx.close()


# ------------------------------------------------------------------ Python client
class _PerThreadStack(list):
    """A list whose contents belong to the calling thread (see :func:`_curdoc_per_thread`)."""

    def __init__(self) -> None:
        super().__init__()
        self._local = threading.local()

    def _stack(self) -> list:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    def append(self, item) -> None:
        self._stack().append(item)

    def pop(self, *index):
        return self._stack().pop(*index)

    def __len__(self) -> int:
        return len(self._stack())

    def __getitem__(self, index):
        return self._stack()[index]


def _curdoc_per_thread() -> None:
    """Give each client thread its own ``curdoc()``.

    Bokeh applies a received patch inside ``patch_curdoc(doc)``, which pushes on one
    process-wide stack. With 30 sessions applying patches in 30 threads of this process
    the pushes and pops interleave, so a thread can decode its patch against another
    session's document: "can't resolve reference" errors and runaway recursion that
    stopped a session's client (not the server, whose sessions share one event loop).
    """
    import bokeh.io.doc

    if not isinstance(bokeh.io.doc._PATCHED_CURDOCS, _PerThreadStack):
        bokeh.io.doc._PATCHED_CURDOCS = _PerThreadStack()


class PySession:
    """One session opened with Bokeh's Python client, its IO loop running in its own thread.

    The thread applies the server's patches to :attr:`doc` as they arrive; the main
    thread reads the document (polling) and changes widgets through the loop
    (:meth:`set_slider`), as a browser would.
    """

    def __init__(self, base: str, app: str, query: str):
        from urllib.parse import parse_qsl

        self.url = f"{base}/apps"
        self.args = {"app": app, **dict(parse_qsl(query))}
        self.doc = None
        #: how many times the server changed the document (the pull counts as one):
        #: a readiness check that failed is not repeated until this grows
        self.changes = 0
        self.error: BaseException | None = None
        self.diagnosis = ""
        self._session = None
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        from bokeh.client import pull_session
        from bokeh.events import DocumentReady

        try:
            self._session = pull_session(url=self.url, arguments=self.args)
            self.doc = self._session.document
            self._watch_patches()
            self.changes += 1
            # what a browser sends once the page is drawn: Panel then runs its onload
            # callbacks, and the apps start computing their views
            self.doc.callbacks.send_event(DocumentReady())
            self._session._connection._loop_until(lambda: self._stop)
        except BaseException as exc:  # noqa: BLE001 - reported as a failed session
            self.error = exc

    def _watch_patches(self) -> None:
        # A patch that names a model this client does not hold stops the session
        # ("can't resolve reference"): note whether the server ever sent that model
        # (then the client dropped it) or never did, to tell a client's fault from a
        # server's
        # (the messages are kept and read only then: reading each as it arrives took
        # the client's Python time that 30 sessions' patches need)
        session = self._session
        first = set(m.id for m in self.doc.models)
        received: list = []
        handle = session._handle_patch

        def watched(message) -> None:
            received.append(message.content)
            try:
                handle(message)
                self.changes += 1
            except Exception as exc:  # noqa: BLE001 - recorded, then the client stops
                missing = re.findall(r"reference '([^']+)'", str(exc))
                defined = first | set(re.findall(
                    r'"type": "object", "name": "[^"]+", "id": "([^"]+)"',
                    json.dumps(received[:-1], default=str)))
                self.diagnosis = (f"{exc}; the server sent that model before: "
                                  f"{bool(missing) and missing[0] in defined}; "
                                  f"the client holds it: {bool(missing) and self.doc.get_model_by_id(missing[0]) is not None}")
                raise
        session._handle_patch = watched

    def has(self, pred: Callable[[object], bool]) -> bool:
        if self.doc is None:
            return False
        try:
            return bool(pred(self.doc))
        except RuntimeError:          # the loop thread changed the document meanwhile
            return False

    def set_slider(self, title: str, value: int) -> None:
        def apply() -> None:
            for m in list(self.doc.models):
                if type(m).__name__.endswith("Slider") and _prop(m, "title") == title:
                    m.value = value      # value_throttled is set by the browser only
                    return
            raise KeyError(f"no slider titled {title!r}")
        self._session._connection._loop.add_callback(apply)

    def close(self) -> None:
        self._stop = True
        if self._session is not None:
            try:
                self._session._connection._loop.add_callback(self._session.close)
            except Exception:  # noqa: BLE001 - already closed
                pass


def _wait_docs(sessions: list[PySession], pred: Callable[[object, int], bool], t0: list[float],
               deadline_s: float, poll: Callable[[], None]) -> list[float]:
    """:func:`_wait_all` over the sessions' documents: until ``pred(doc, i)`` for every one.

    A document is checked again only once the server has changed it: walking 30
    documents of thousands of models every 50 ms took most of the client's Python
    time, and delayed the sessions' own threads that receive the server's messages."""
    checked: dict[int, int] = {}

    def ready(s: PySession, i: int) -> bool:
        changes = s.changes
        if checked.get(i) == changes:
            return False
        ok = s.has(lambda doc: pred(doc, i))
        if not ok:
            checked[i] = changes
        return ok
    return _wait_all(sessions, ready, t0, deadline_s, poll, pause=lambda: time.sleep(0.05))


def _report_timeouts(sessions: list[PySession], lat: list[float],
                     server: "Server | None" = None) -> None:
    # what a session that missed the deadline shows: its error, or its summary texts;
    # with --probe, also what the server's document of that session holds
    late = [i for i, x in enumerate(lat) if x != x]
    server_docs = server.documents() if server is not None and late else {}
    for i, (s, x) in enumerate(zip(sessions, lat)):
        if x == x:
            continue
        if server_docs:
            sid = s._session.id if s._session is not None else None
            d = server_docs.get(sid, {})
            texts = d.pop("texts", [])
            on_server = [t[:80] for t in texts if re.search(SETTING_TEXT, t)]
            client = [t[:80] for t in (_doc_texts(s.doc) if s.doc is not None else [])
                      if re.search(SETTING_TEXT, t)]
            _progress(f"  session {i} on the server: {d}; texts matching {SETTING_TEXT!r}: "
                      f"server {on_server}, client {client}")
        texts = [t[:120] for t in _doc_texts(s.doc)] if s.doc is not None else []
        shown = [t for t in texts if re.search(
            r"k = \d|Summary network|bnx-score|Error|Computing|Preparing", t)]
        # picture titles, and how many views still compute (a change not answered)
        titles = [m.text[:60] for m in list(s.doc.models) if type(m).__name__ == "Title"
                  and m.text] if s.doc is not None else []
        computing = sum("pn-loading" in c for c in (
            _prop(m, "css_classes") or [] for m in list(s.doc.models))
            if "bnx-view" in c) if s.doc is not None else 0
        _progress(f"  session {i} ({s.args}) timed out; error {s.error!r}; shows {shown}; "
                  f"titles {titles}; views computing {computing}"
                  f"{'; ' + s.diagnosis if s.diagnosis else ''}")


def run_app_python(server: Server, spec: AppSpec, n_sessions: int, rounds: int,
                   peak: list[float], interval: float = 1.0) -> dict:
    """As :func:`run_app`, with Bokeh's Python client instead of browsers."""
    def poll() -> None:
        peak[0] = max(peak[0], server.rss_mb())

    res: dict = {"app": spec.name, "sessions": n_sessions}
    sessions = [PySession(server.base, spec.name, spec.query(i)) for i in range(n_sessions)]
    all_sessions = list(sessions)
    try:
        t_open = time.monotonic()
        for s in sessions:            # every session asks at once
            s.start()
        opened = _wait_docs(sessions, spec.doc_ready, [t_open] * n_sessions, PY_OPEN_DEADLINE,
                            poll)
        # a session whose client stopped (an error, or a patch it could not apply) is
        # counted and left out of the rounds; the others go on
        _report_timeouts(sessions, opened)
        keep = [i for i, (s, t) in enumerate(zip(sessions, opened)) if t == t and s.error is None]
        if not keep:
            raise RuntimeError(f"no session opened: {sessions[0].error!r}")
        res["broken_sessions"] = n_sessions - len(keep)
        orig_shows = spec.doc_shows
        sessions, opened = [sessions[i] for i in keep], [opened[i] for i in keep]
        spec = dataclasses.replace(spec, doc_shows=lambda doc, j, v: orig_shows(doc, keep[j], v))
        _progress(f"{spec.name}: {len(keep)} of {n_sessions} sessions open in {max(opened):.1f} s")
        res["open_all_s"], res["open_median_s"] = max(opened), statistics.median(opened)

        first, cached = [], []
        lo, hi = spec.values
        seen: set = {lo}
        for r in range(rounds):
            value = hi if r % 2 == 0 else lo
            t0 = []
            for s in sessions:
                s.set_slider(spec.slider, value)
                t0.append(time.monotonic())
            lat = _wait_docs(sessions, lambda doc, i: spec.doc_shows(doc, i, value), t0,
                             ROUND_DEADLINE, poll)
            _report_timeouts(sessions, lat, server)
            (cached if value in seen else first).extend(lat)
            _progress(f"{spec.name}: round {r + 1}, slider to {value}: median "
                      f"{_pct(lat, 0.5):.2f} s, max {max(lat):.2f} s")
            seen.add(value)
        res["first_median_s"], res["first_p95_s"] = _pct(first, 0.5), _pct(first, 0.95)
        res["cached_median_s"], res["cached_p95_s"] = _pct(cached, 0.5), _pct(cached, 0.95)

        # steady use: one session after another moves to the other (computed) setting
        value = lo if rounds % 2 == 1 else hi
        steady = []
        for i, s in enumerate(sessions):
            t = time.monotonic()
            s.set_slider(spec.slider, value)
            got = _wait_docs([s], lambda doc, _: spec.doc_shows(doc, i, value), [t],
                             STEADY_DEADLINE, poll)
            if got[0] != got[0]:
                _report_timeouts([s], got, server)
            steady += got
            time.sleep(max(0.0, interval - (time.monotonic() - t)))
        _progress(f"{spec.name}: steady moves, one per {interval:g} s: median "
                  f"{_pct(steady, 0.5):.2f} s")
        res["steady_median_s"], res["steady_p95_s"] = _pct(steady, 0.5), _pct(steady, 0.95)
        res["timeouts"] = sum(x != x for x in first + cached + opened + steady)

        if spec.name == "order_averaging":
            long_s = PySession(server.base, spec.name, LONG_QUERY)
            long_s.start()
            t_long = time.monotonic()
            time.sleep(3.0)              # its request reaches the server first
            other = hi if value == lo else lo
            lat = []
            for v in (other, value):     # both settings are computed already
                t0 = []
                for s in sessions:
                    s.set_slider(spec.slider, v)
                    t0.append(time.monotonic())
                lat += _wait_docs(sessions, lambda doc, i: spec.doc_shows(doc, i, v), t0,
                                  ROUND_DEADLINE, poll)
            long_pattern = r"k = 4, n = 4 "
            running = not long_s.has(lambda doc: _doc_has_text(doc, long_pattern))
            done = _wait_docs([long_s], lambda doc, i: _doc_has_text(doc, long_pattern), [t_long],
                              600.0, poll)
            long_s.close()
            res.update({"long_s": done[0], "during_long_median_s": _pct(lat, 0.5),
                        "during_long_p95_s": _pct(lat, 0.95),
                        "others_served_while_long_ran": running})
        res["page_errors"] = 0
    finally:
        for s in all_sessions:
            s.close()
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--client", choices=["chromium", "python"], default="chromium",
                    help="real browser pages, or Bokeh's Python client (measures the server)")
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=4, help="slider moves per session (>= 2)")
    ap.add_argument("--apps", nargs="+", default=["order_averaging", "structure"],
                    choices=[*SPECS, "all"], help="apps to measure ('all': every app)")
    ap.add_argument("--interval", type=float, default=1.0,
                    help="seconds between two sessions' moves in the steady phase")
    ap.add_argument("--settle", type=float, default=45.0,
                    help="seconds to wait after closing the sessions before 'after' memory")
    ap.add_argument("--probe", action="store_true",
                    help="when a session is late, print what the server's document of that "
                         "session holds and what Panel has queued for it (_load_probe.py)")
    ap.add_argument("--server-per-app", action="store_true",
                    help="a fresh server (and table) per app: an app's figures do not depend "
                         "on the apps measured before it")
    args = ap.parse_args(argv)
    if "all" in args.apps:
        args.apps = list(SPECS)
    if args.server_per_app and len(args.apps) > 1:
        return max(run(argparse.Namespace(**{**vars(args), "apps": [name]}))
                   for name in args.apps)
    return run(args)


def run(args: argparse.Namespace) -> int:
    """Measure ``args.apps`` in one server; print the table; 1 if a wait timed out."""
    rows = []
    with Server(probe=args.probe) as server:
        if args.client == "python":
            _curdoc_per_thread()
            # Bokeh's client handles each queued message one call deeper than the last:
            # a session whose thread falls behind (30 threads on 2 cores) overflows the
            # default limit of 1,000 frames and its client stops
            sys.setrecursionlimit(100_000)
            threading.stack_size(256 * 1024 * 1024)
            import importlib
            import pkgutil

            import panel.models
            # every Panel Bokeh model (some register lazily), to read the documents
            for mod in pkgutil.iter_modules(panel.models.__path__):
                importlib.import_module(f"panel.models.{mod.name}")

            from bnexplore.apps.guard import UploadGuard
            # the apps' own model (the upload guard) must be known here too
            UploadGuard(max_bytes=1).get_root()
            for name in args.apps:        # one session per app first: kernels, data
                spec = SPECS[name]()
                warm = PySession(server.base, name, spec.query(0))
                warm.start()
                _wait_docs([warm], spec.doc_ready, [time.monotonic()], OPEN_DEADLINE, lambda: None)
                warm.close()
            rss_before = server.rss_mb()
            peak = [rss_before]
            for name in args.apps:
                rows.append(run_app_python(server, SPECS[name](), args.sessions,
                                           max(2, args.rounds), peak, args.interval))
                print(rows[-1], flush=True)
        else:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                            headless=True)
                try:
                    # one page per app first: numba kernels load, bundled data are read
                    warm = browser.new_page()
                    for name in args.apps:
                        spec = SPECS[name]()
                        warm.goto(f"{server.base}/apps?app={name}&{spec.query(0)}")
                        deadline = time.monotonic() + OPEN_DEADLINE
                        while not spec.ready(warm, 0) and time.monotonic() < deadline:
                            warm.wait_for_timeout(250)
                    warm.close()
                    rss_before = server.rss_mb()
                    peak = [rss_before]
                    for name in args.apps:
                        rows.append(run_app(browser, server, SPECS[name](), args.sessions,
                                            max(2, args.rounds), peak, args.interval))
                        print(rows[-1], flush=True)
                finally:
                    browser.close()
        deadline = time.monotonic() + args.settle
        while time.monotonic() < deadline:
            peak[0] = max(peak[0], server.rss_mb())
            time.sleep(1.0)
        rss_after = server.rss_mb()

    print()
    print(f"load benchmark ({args.client} client): {args.sessions} sessions per app, "
          f"{max(2, args.rounds)} rounds, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores")
    head = ("| app | open all (s) | burst, new setting: median / p95 (s) | burst, cached | "
            f"steady (one move per {args.interval:g} s), cached | "
            "burst, cached, during a long fit | others served while it ran | timeouts |")
    print(head)
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        during = (f"{r['during_long_median_s']:.2f} / {r['during_long_p95_s']:.2f} "
                  f"(fit {r['long_s']:.0f} s)" if "long_s" in r else "-")
        served = ("yes" if r.get("others_served_while_long_ran") else "no") if "long_s" in r else "-"
        stopped = f" (+{r['broken_sessions']} stopped at open)" if r.get("broken_sessions") else ""
        print(f"| {r['app']} | {r['open_all_s']:.1f} | {r['first_median_s']:.2f} / "
              f"{r['first_p95_s']:.2f} | {r['cached_median_s']:.2f} / {r['cached_p95_s']:.2f} | "
              f"{r['steady_median_s']:.2f} / {r['steady_p95_s']:.2f} | "
              f"{during} | {served} | {r['timeouts']}{stopped} |")
    print(f"server RSS: before {rss_before:.0f} MB, peak {peak[0]:.0f} MB, "
          f"after {rss_after:.0f} MB ({args.settle:.0f} s after closing every session)")
    bad = [r for r in rows if r["timeouts"] or r["page_errors"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
