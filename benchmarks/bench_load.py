"""Load benchmark: many browser sessions against one loopback ``panel serve apps/``.

For each app measured (Order averaging and Learn a structure by default), ``--sessions``
headless Chromium contexts (separate users) open the app at once, then every session
moves a slider at the same moment, several rounds, and waits for its own view to show
the new setting. Reported per app:

* time to open all sessions (every view filled in);
* update latency (key press -> the view shows the new setting), median and 95th
  percentile, for the first visit of a setting (computed) and for cached settings;
* for Order averaging, the same cached rounds while one more session runs a long
  computation (hailfinder sample, k = 4): whether the others were served meanwhile;
* the server's resident memory (psutil RSS) before the sessions, at the peak and
  after every session was closed (and Bokeh had time to discard them).

Not a test: timing depends on the machine. Targets on the project's 2-core machine:
all sessions open within 60 s, a cached setting under 1 s median, and no session
waiting behind another session's long computation.

Only 127.0.0.1 is used; every wait has a deadline and the rounds are counted.

Run: python benchmarks/bench_load.py [--sessions 30] [--rounds 4] [--apps order_averaging structure]
"""
from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
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
LONG_QUERY = ("source=Network+sample&network=hailfinder&sample_size=10000"
              "&k_max_parents_averaged=4&n_max_parents_in_m=4")


# ------------------------------------------------------------------ server
def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``panel serve apps/`` on a free loopback port (a context manager)."""

    def __init__(self, timeout: float = 120.0):
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.timeout = timeout

    def __enter__(self) -> "Server":
        cmd = [sys.executable, "-m", "panel", "serve", "apps/", "--port", str(self.port),
               "--address", "127.0.0.1", f"--allow-websocket-origin=127.0.0.1:{self.port}"]
        self.log = tempfile.NamedTemporaryFile("w+", prefix="bench-load-", suffix=".log")
        env = dict(os.environ, PYTHONUNBUFFERED="1", BOKEH_BROWSER="none")
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
    notes: list = field(default_factory=list)


def _has_text(page, pattern: str) -> bool:
    # text selectors pierce the shadow roots Panel renders into
    return page.get_by_text(re.compile(pattern)).count() > 0


OA_DATA = ["vote", "breast-cancer", "labor", "credit-g", "diabetes"]   # >= 6 columns: n can reach 5


def order_averaging_spec() -> AppSpec:
    return AppSpec(
        name="order_averaging",
        query=lambda i: f"data_set={OA_DATA[i % len(OA_DATA)]}&n_max_parents_in_m=4",
        handle=1,                                       # k, then n
        ready=lambda pg, i: _has_text(pg, r"k = 2, n = 4 "),
        shows=lambda pg, i, v: _has_text(pg, rf"k = 2, n = {v} "),
        values=(4, 5))


ST_DATA = ["vote", "iris", "breast-cancer", "contact-lenses", "weather.nominal"]


def structure_spec() -> AppSpec:
    sys.path.insert(0, str(REPO / "apps"))
    import _common
    import bnexplore as bx

    refs: dict = {}

    def score(i: int, k: int) -> str:
        key = (ST_DATA[i % len(ST_DATA)], k)
        if key not in refs:   # the score the app must show, computed in this process
            df = _common.load_data(_common.DATASET, key[0], 0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = bx.search.greedy_thick_thin(df, prior="K2", ess=1.0, order=None,
                                                  max_indegree=k)
            refs[key] = f"{res.score:.3f}"
        return refs[key]

    def text(pg) -> str:
        loc = pg.locator(".bnx-score")
        return (loc.first.text_content() or "").strip() if loc.count() else ""

    return AppSpec(
        name="structure",
        query=lambda i: f"data_set={ST_DATA[i % len(ST_DATA)]}&max_in_degree=3",
        handle=0,
        ready=lambda pg, i: text(pg) == score(i, 3),
        shows=lambda pg, i, v: text(pg) == score(i, v),
        values=(3, 2))


SPECS = {"order_averaging": order_averaging_spec, "structure": structure_spec}


# ------------------------------------------------------------------ measuring
def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))
    return xs[i]


def _progress(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _wait_all(pages, pred: Callable[[object, int], bool], t0: list[float], deadline_s: float,
              on_poll: Callable[[], None]) -> list[float]:
    """Poll until ``pred(page, i)`` for every page; seconds since ``t0[i]`` (nan: timed out)."""
    out = [float("nan")] * len(pages)
    left = set(range(len(pages)))
    deadline = time.monotonic() + deadline_s
    while left and time.monotonic() < deadline:
        for i in sorted(left):
            try:
                ok = pred(pages[i], i)
            except Exception:  # noqa: BLE001 - a page mid-render
                ok = False
            if ok:
                out[i] = time.monotonic() - t0[i]
                left.discard(i)
        on_poll()
        if left:
            pages[0].wait_for_timeout(100)
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=4, help="slider moves per session (>= 2)")
    ap.add_argument("--apps", nargs="+", default=list(SPECS), choices=list(SPECS))
    ap.add_argument("--interval", type=float, default=1.0,
                    help="seconds between two sessions' moves in the steady phase")
    ap.add_argument("--settle", type=float, default=45.0,
                    help="seconds to wait after closing the sessions before 'after' memory")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    rows = []
    with Server() as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
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
    print(f"load benchmark: {args.sessions} sessions per app, {max(2, args.rounds)} rounds, "
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
        print(f"| {r['app']} | {r['open_all_s']:.1f} | {r['first_median_s']:.2f} / "
              f"{r['first_p95_s']:.2f} | {r['cached_median_s']:.2f} / {r['cached_p95_s']:.2f} | "
              f"{r['steady_median_s']:.2f} / {r['steady_p95_s']:.2f} | "
              f"{during} | {served} | {r['timeouts']} |")
    print(f"server RSS: before {rss_before:.0f} MB, peak {peak[0]:.0f} MB, "
          f"after {rss_after:.0f} MB ({args.settle:.0f} s after closing every session)")
    bad = [r for r in rows if r["timeouts"] or r["page_errors"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
