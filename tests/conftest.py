"""Shared fixtures: a `panel serve apps/` server and a headless Chromium (browser tests).

The browser is Debian's ``/usr/bin/chromium`` driven by Playwright's sync API; no
browser is ever downloaded. Without that binary the browser tests are skipped, except
under ``CI=true`` where a missing browser is a failure.
"""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Sequence

import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--no-first-run", "--disable-component-update", "--disable-sync"]
SERVER_START_TIMEOUT = 90.0  # seconds; Panel imports are slow on a busy 2-core machine

# Results the apps keep on disk between runs (bnexplore.cache) go to a folder of this
# test session: tests neither read a developer's cached results nor leave any behind.
_RESULTS_CACHE = tempfile.mkdtemp(prefix="bnx-test-results-")
os.environ["BNX_CACHE_DIR"] = _RESULTS_CACHE


@pytest.fixture(scope="session", autouse=True)
def _remove_results_cache():
    yield
    import shutil
    shutil.rmtree(_RESULTS_CACHE, ignore_errors=True)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _missing(reason: str):
    """Skip locally, fail in CI (where the browser must be installed by .ci/run)."""
    if _in_ci():
        pytest.fail(f"{reason} (CI=true: browser tests must run, see .ci/run)", pytrace=False)
    pytest.skip(reason)


class ServerURL(str):
    """The base URL of a test server (a ``str``) that also knows the server's ``pid``."""

    pid: int = 0
    log_path: str = ""  # the server's combined stdout/stderr (e.g. to look for warnings)


@contextlib.contextmanager
def running_panel_server(extra_args: Sequence[str] = ()):
    """Run ``panel serve apps/`` on a free loopback port; yield a :class:`ServerURL`.

    Used by the session-wide :func:`panel_server` fixture and by tests that need a
    server of their own (e.g. the load test, which measures the server's memory).
    """
    port = _free_port()
    cmd = [sys.executable, "-m", "panel", "serve", "apps/", "--port", str(port),
           "--address", "127.0.0.1", f"--allow-websocket-origin=127.0.0.1:{port}",
           *extra_args]
    log = tempfile.NamedTemporaryFile("w+", prefix="panel-serve-", suffix=".log", delete=False)
    env = dict(os.environ, PYTHONUNBUFFERED="1", BOKEH_BROWSER="none")
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env=env)
    base = ServerURL(f"http://127.0.0.1:{port}")
    base.pid = proc.pid
    base.log_path = log.name

    def _log() -> str:
        log.flush()
        return Path(log.name).read_text(errors="replace")[-4000:]

    deadline = time.monotonic() + SERVER_START_TIMEOUT
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"panel serve exited with code {proc.returncode}:\n{_log()}",
                            pytrace=False)
            try:
                with urllib.request.urlopen(f"{base}/apps", timeout=5) as resp:
                    if resp.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"panel serve did not answer within {SERVER_START_TIMEOUT:.0f} s:\n"
                            f"{_log()}", pytrace=False)
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()
        os.unlink(log.name)


@pytest.fixture(scope="session")
def panel_server():
    """Run ``panel serve apps/`` on a free loopback port; yield the base URL.

    The landing page is at ``{base}/apps`` (directory app); other apps at
    ``{base}/apps?app=NAME``. The URL is a ``str`` with a ``pid`` attribute.
    """
    with running_panel_server() as base:
        yield base


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium through Playwright (never a downloaded browser)."""
    if not os.path.exists(CHROMIUM):
        _missing(f"{CHROMIUM} not found (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    """A fresh page; ``page.console_errors`` collects console errors and page errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("console", lambda msg: errors.append(f"console.{msg.type}: {msg.text}")
          if msg.type == "error" else None)
    pg.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    pg.console_errors = errors
    pg.set_default_timeout(30_000)
    try:
        yield pg
    finally:
        context.close()
