"""Execute every teaching notebook end to end (each must run in under a minute).

A notebook's time is mostly its kernel's start, imports and Panel's inline scripts, one
core's work: the notebooks run two at a time (one per core of a two-core machine) from
the first test on, and each test waits for its own notebook's result.
"""
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("[0-9]*.ipynb"))


def _execute(path):
    """Run the notebook in a fresh kernel; the error outputs of its code cells."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


@pytest.fixture(scope="module")
def runs(request):
    """The run of every selected notebook, started at once on (at most) two workers:
    path -> future (a notebook deselected with -k is not run)."""
    pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    # the kernel spec may launch plain "python": make that this interpreter (the venv's)
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    selected = [item.callspec.params["path"] for item in request.session.items
                if item.path == Path(__file__) and item.originalname == "test_notebook_runs"]
    pool = ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1))
    try:
        yield {path: pool.submit(_execute, path) for path in selected}
    finally:
        pool.shutdown(wait=True, cancel_futures=True)   # an interrupted session starts no more


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, runs):
    errors = runs[path].result()
    assert not errors, errors
