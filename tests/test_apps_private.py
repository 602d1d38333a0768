"""Private Panel/Bokeh names: only in bnexplore/apps/_private.py, and those still exist."""
from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import importlib
from pathlib import Path

import pytest

from bnexplore.apps import _private

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "bnexplore" / "apps"


@pytest.mark.parametrize("name", _private.PRIVATE_NAMES)
def test_the_private_names_used_still_exist(name):
    """Fails when Panel or Bokeh changes them: then update _private.py (and the bounds)."""
    module, attr = name.split(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        assert hasattr(obj, part), f"{name} is gone: see bnexplore/apps/_private.py"
        obj = getattr(obj, part)


def _own_names() -> set[str]:
    """Names the apps' package defines itself (functions, classes, attributes, arguments)."""
    out: set[str] = set()
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                out.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                out.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, ast.alias):
                out.add(node.asname or node.name.split(".")[0])
    return out


def test_no_private_name_of_another_library_outside_the_one_module():
    own = _own_names()
    files = [p for p in PACKAGE.glob("*.py") if p.name != "_private.py"]
    files += sorted((REPO / "apps").glob("*.py"))
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__") and node.attr not in own):
                found.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert not found, found


def test_panel_and_bokeh_have_upper_bounds_at_the_tested_minor_versions():
    import tomllib

    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    bounds = {d.split(">")[0].split("<")[0]: d for d in deps}
    for name in ("panel", "bokeh", "holoviews", "numba"):
        assert "<" in bounds[name], f"{name} needs an upper bound: {bounds[name]}"
        module = importlib.import_module(name)
        major, minor = (int(x) for x in module.__version__.split(".")[:2])
        upper = bounds[name].split("<")[1]
        assert tuple(int(x) for x in upper.split(".")[:2]) == (major, minor + 1), (
            f"{name} {module.__version__} is installed; its bound is {bounds[name]}")


# ------------------------------------------------------------------ Panel's write queue
class _Socket:
    """A socket whose writes complete when the test says (``pending``)."""


class _Protocol:
    def create(self, kind, events):
        return (kind, tuple(e.new for e in events))


class _Connection:
    def __init__(self):
        self._socket = _Socket()
        self.protocol = _Protocol()


def _race(dispatch) -> tuple[list, int, bool]:
    """Panel's write queue with ``dispatch`` as its queue-writing task, driven into the
    race of :func:`bnexplore.apps._private._write_queue_drained`: a second message is
    queued, and its task started, just after the first task's last write completed but
    before that task lifted the write block. Returns the messages written, the number
    still queued, and whether the write block is set."""
    from bokeh.document import Document
    from bokeh.document.events import ModelChangedEvent
    from bokeh.models import Div
    from panel.io import document as pn_document

    written, pending = [], []

    def write(conn, events=None, msg=None):
        written.append(msg)
        pending.append(asyncio.get_running_loop().create_future())
        return [pending[-1]]

    async def drive(doc, conn, div):
        def change(text):
            return [ModelChangedEvent(doc, div, "text", text)]
        pn_document.schedule_write_events(doc, [conn], change("first"))
        while not pending:                 # the first task writes and awaits the write
            await asyncio.sleep(0)

        def complete_then_queue():
            pending[0].set_result(None)    # the first task is woken up next ...
            pn_document.schedule_write_events(doc, [conn], change("second"))  # ... then this one
        asyncio.get_running_loop().call_soon(complete_then_queue)
        for _ in range(50):
            await asyncio.sleep(0.005)
            for f in pending:
                if not f.done():
                    f.set_result(None)

    doc, div, conn = Document(), Div(text="start"), _Connection()
    doc.add_root(div)
    saved = pn_document._dispatch_msgs
    pn_document.extra_socket_handlers[_Socket] = write
    pn_document._dispatch_msgs = dispatch
    try:
        _run(drive(doc, conn, div))
        queued = sum(len(v) for v in pn_document._WRITE_MSGS.get(doc, {}).values())
        return written, queued, doc in pn_document._WRITE_BLOCK
    finally:
        pn_document._dispatch_msgs = saved
        del pn_document.extra_socket_handlers[_Socket]
        pn_document._WRITE_MSGS.pop(doc, None)
        pn_document._WRITE_BLOCK.pop(doc, None)


def _panels_dispatch():
    from panel.io import document as pn_document
    return getattr(pn_document._dispatch_msgs, "bnx_fixed", pn_document._dispatch_msgs)


def test_panels_write_queue_still_loses_a_message_queued_while_it_drains():
    """Fails once Panel writes every queued message itself: then remove
    ``_write_queue_drained`` from bnexplore/apps/_private.py."""
    written, queued, blocked = _race(_panels_dispatch())
    assert [m[1] for m in written] == [("first",)]
    assert queued == 1 and not blocked      # waits for the session's next change


def test_the_mended_write_queue_writes_every_message_in_order():
    written, queued, blocked = _race(_private._write_queue_drained(_panels_dispatch()))
    assert [m[1] for m in written] == [("first",), ("second",)]
    assert queued == 0 and not blocked


def test_the_pages_use_the_mended_write_queue():
    from panel.io import document as pn_document

    import bnexplore.apps.page  # noqa: F401 - applies _private at import

    assert hasattr(pn_document._dispatch_msgs, "bnx_fixed")


def _run(coroutine):
    """``coroutine`` awaited on a loop of its own thread (the test's thread may run one)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _serialised_while_holoviews_updates(validate) -> dict:
    """A heat map's colour spec, serialised on this thread while another thread is inside
    ``validate(False)`` (as HoloViews is while it updates a plot's data)."""
    import threading

    from bokeh.core.serialization import Serializer
    from bokeh.models import LinearColorMapper, Rect

    glyph = Rect(fill_color={"field": "zvalues",
                             "transform": LinearColorMapper(palette=["#000000", "#ffffff"])})
    inside, done = threading.Event(), threading.Event()

    def update():
        with validate(False):
            inside.set()
            done.wait(10)

    other = threading.Thread(target=update)
    other.start()
    try:
        assert inside.wait(10)
        return Serializer().encode(glyph)["attributes"]["fill_color"]
    finally:
        done.set()
        other.join(10)


def test_holoviews_still_turns_bokeh_validation_off_in_its_plot_updates():
    """Fails once HoloViews no longer turns validation off process-wide: then remove
    ``_validation_kept`` from bnexplore/apps/_private.py. While it is off, Bokeh sends a
    colour mapped from a column as a value (BokehJS: "n is not iterable")."""
    import inspect

    from bokeh.core.property.validation import validate
    from holoviews.plotting.bokeh import graphs, plot

    assert "validate(False)" in inspect.getsource(plot)
    assert "validate(False)" in inspect.getsource(graphs)
    assert _serialised_while_holoviews_updates(validate)["type"] == "value"


def test_a_page_serialised_while_holoviews_draws_keeps_its_mapped_colours():
    """Once an app is made, HoloViews' ``validate`` keeps validation on: a heat map's
    colour serialised meanwhile stays a field with its colour mapper."""
    import pandas as pd
    from holoviews.plotting.bokeh import graphs, plot

    from bnexplore.apps import LearnStructure

    LearnStructure(pd.DataFrame({"a": ["x", "y"] * 5, "b": ["u", "u", "v", "v", "v"] * 2}))

    for module in (plot, graphs):
        spec = _serialised_while_holoviews_updates(module.validate)
        assert spec["type"] == "field" and spec["field"] == "zvalues", spec
