"""An app component inside JupyterLab (offline), driven in headless Chromium.

A notebook loads Panel's resources inline (``pn.extension(inline=True)``: nothing from a
CDN) and shows ``bx.apps.LearnStructure``; moving its "Max parents" slider in the page
changes the learned structure shown under it (the kernel computes, the output follows).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import _free_port

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
CELLS = [
    "import panel as pn\npn.extension('tabulator', inline=True)",
    "import bnexplore as bx\n"
    "app = bx.apps.LearnStructure('asia', sample_size=500, max_parents=1)\napp",
]


def _notebook() -> dict:
    return {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}",
                       "metadata": {}, "outputs": [], "source": src}
                      for i, src in enumerate(CELLS)],
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                        "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture(scope="module")
def jupyterlab():
    pytest.importorskip("jupyterlab")
    root = Path(tempfile.mkdtemp(prefix="bnx-lab-"))
    (root / "app.ipynb").write_text(json.dumps(_notebook()))
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=f"{REPO}:{os.environ.get('PYTHONPATH', '')}",
               JUPYTER_CONFIG_DIR=str(root / ".config"), JUPYTER_RUNTIME_DIR=str(root / ".rt"))
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
           "--ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
           "--allow-root", f"--ServerApp.root_dir={root}", "--LabApp.news_url=",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.extension_manager=readonly"]
    log = open(root / "lab.log", "w")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, (root / "lab.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "JupyterLab did not start"
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_a_slider_of_an_app_moves_in_jupyterlab(jupyterlab, page):
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{jupyterlab}/lab/tree/app.ipynb", timeout=120_000)
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=120_000)
    # the kernel is started and connected: then "Run All Cells" runs them
    page.get_by_text(re.compile(r"Python 3 \(ipykernel\) \| Idle")).first.wait_for(
        timeout=180_000)
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_text("Run All Cells", exact=True).click()
    score = page.locator(".bnx-score")              # the learned DAG's score (CSS pierces)
    score.first.wait_for(timeout=300_000)
    first = score.first.inner_text()
    assert re.fullmatch(r"-?\d+\.\d+", first), first
    handle = page.locator(".jp-OutputArea .noUi-handle:visible").last      # Max parents
    assert handle.get_attribute("aria-valuenow") in ("1", "1.0")
    handle.focus()
    handle.press("ArrowRight")
    deadline = time.monotonic() + 180
    while score.first.inner_text() == first:
        assert time.monotonic() < deadline, "the view did not follow the slider"
        page.wait_for_timeout(500)
    assert handle.get_attribute("aria-valuenow") in ("2", "2.0")
    assert re.fullmatch(r"-?\d+\.\d+", score.first.inner_text())
    # offline: Panel's and Bokeh's scripts come from the notebook, no CDN request
    outside = [u for u in requests if not u.startswith(("http://127.0.0.1", "data:", "blob:"))]
    assert outside == [], outside[:5]
