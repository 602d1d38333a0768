"""Concurrency of the apps: the shared cache and views computed off the event loop.

* The shared cache (``cached`` in ``apps/_common.py``) computes a setting once even
  when many sessions ask for it at the same time, and caches failures: a setting
  whose computation raised raises the same error again without recomputing.
* In a served app, one session's long computation does not block another session:
  its page loads and its widget changes get their results while the long
  computation still runs (Order averaging, hailfinder sample with k = 4).
"""
from __future__ import annotations

import html
import re
import threading
import time
import urllib.parse

import pytest

from conftest import running_panel_server


# ------------------------------------------------------------------ shared cache
def test_a_failure_is_cached_per_setting(common):
    calls = []

    @common.cached(maxsize=8)
    def fit(name, k):
        calls.append((name, k))
        if k > 3:
            raise ValueError(f"k={k} is over the memory budget for {name}")
        return k * 10

    view = common.guarded(lambda k: fit("big", k))
    boxes = [view(5) for _ in range(4)]              # four views / sessions, one setting
    assert calls == [("big", 5)]                     # computed once, replayed 3 times
    for box in boxes:
        assert type(box).__name__ == "Alert"
        text = html.unescape(box.object)
        assert "ValueError" in text and "k=5 is over the memory budget" in text
    assert fit("big", 2) == 20 and fit("big", 2) == 20   # other settings unaffected
    assert calls == [("big", 5), ("big", 2)]
    # a replayed error carries no growing traceback (the frames of the failed fit)
    tbs = []
    for _ in range(3):
        try:
            fit("big", 5)
        except ValueError as exc:
            tbs.append(len(__import__("traceback").extract_tb(exc.__traceback__)))
    assert tbs[0] == tbs[1] == tbs[2]


def test_an_upload_gone_from_the_server_is_not_cached(common):
    import pandas as pd

    @common.cached(maxsize=8)
    def rows(kind, name):
        return len(common.load_data(kind, name))

    raw = pd.DataFrame({"x": ["a", "b"] * 10, "class": ["y", "n"] * 10})
    up = common.prepare_upload(raw, "class")
    key = common.store_upload(up, "gone.csv", b"x,class\n")
    with common._UPLOADS_LOCK:
        common._UPLOADS.pop(key)
    with pytest.raises(ValueError, match="no longer on the server"):
        rows(common.DATASET, key)
    # the same file uploaded again is served, not the cached error
    assert common.store_upload(up, "gone.csv", b"x,class\n") == key
    assert rows(common.DATASET, key) == 20


def test_a_transient_failure_is_retried(common):
    calls = []

    @common.cached(maxsize=8)
    def flaky(x):
        calls.append(x)
        raise MemoryError("short of memory right now")

    for _ in range(2):
        with pytest.raises(MemoryError):
            flaky(1)
    assert calls == [1, 1]


def test_an_import_deadlock_is_retried_not_cached(common):
    # two threads' first imports of one module can meet Python's deadlock detector;
    # cached, that error was shown for good in every session of the setting
    import importlib._bootstrap as bootstrap

    calls = []

    @common.cached(maxsize=8)
    def importing(x):
        calls.append(x)
        if len(calls) == 1:
            raise bootstrap._DeadlockError("deadlock detected by _ModuleLock('m')")
        return x * 2

    with pytest.raises(bootstrap._DeadlockError):
        importing(3)
    assert importing(3) == 6 and calls == [3, 3]
    # and a view passes it on (its worker then tries again) instead of an error box
    view = common.guarded(lambda: (_ for _ in ()).throw(bootstrap._DeadlockError("d")))
    with pytest.raises(bootstrap._DeadlockError):
        view()


def _hammer(func, n_threads, arg):
    """Call ``func(arg)`` from ``n_threads`` threads at once; outcomes in call order."""
    start = threading.Barrier(n_threads)
    out: list = [None] * n_threads

    def run(i):
        start.wait()
        try:
            out[i] = ("ok", func(arg))
        except Exception as exc:  # noqa: BLE001
            out[i] = ("err", exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    return out


def test_identical_concurrent_requests_compute_once(common):
    calls = []

    @common.cached(maxsize=8)
    def slow(x):
        calls.append(x)
        time.sleep(0.5)        # long enough for every thread to arrive meanwhile
        return x * 2

    out = _hammer(slow, 12, 21)
    assert out == [("ok", 42)] * 12
    assert calls == [21]


def test_concurrent_requests_share_one_failure(common):
    calls = []

    @common.cached(maxsize=8)
    def slow_fail(x):
        calls.append(x)
        time.sleep(0.5)
        raise ValueError(f"bad setting {x}")

    out = _hammer(slow_fail, 8, 7)
    assert calls == [7]
    assert all(kind == "err" and str(exc) == "bad setting 7" for kind, exc in out)


# ------------------------------------------------------------------ browser
LONG = ("source=Network+sample&network=hailfinder&sample_size=10000"
        "&k_max_parents_averaged=4&n_max_parents_in_m=4")



def test_view_results_are_sent_by_bokeh_after_the_callback(common):
    """A change made on a session's document from a worker thread's result is held
    while the callback runs and handed to Bokeh's own sender at its end (one writer
    per socket): Panel's writer for unheld changes could leave one unsent."""
    from bokeh.document import Document
    from bokeh.models import Div

    views = __import__("_common.views", fromlist=["on_document"])
    doc = Document()
    div = Div(text="n = 5")
    doc.add_root(div)
    sent, during = [], []
    doc.on_change(lambda event: sent.append(getattr(event, "new", None)))
    doc.add_next_tick_callback = lambda cb: cb()      # run at once, as the loop would

    def apply():
        during.append(doc.callbacks.hold_value)
        div.text = "n = 4"
        during.append(list(sent))                     # nothing sent yet: held

    assert views.on_document(doc, apply)
    assert during == ["combine", []]
    assert sent == ["n = 4"] and doc.callbacks.hold_value is None


def locked(session, func):
    """Run ``func`` as Bokeh runs a session's callback (document locked, then the
    pending writes), on an event loop of its own thread (a test may have one running)."""
    import asyncio

    done = []
    thread = threading.Thread(
        target=lambda: done.append(asyncio.run(session.with_document_locked(func)) or True))
    thread.start()
    thread.join(60)
    assert done == [True]


def test_a_callbacks_changes_reach_each_connection_as_bokeh_sends_them(common):
    """Every change a callback makes goes to each browser in a PATCH-DOC of its own, in
    Bokeh's order (one message for all of them broke BokehJS on pictures whose column
    data changed length); a change that holds no model is serialised without the table
    of the page's models and gives Bokeh's message; applied to the browser's copy the
    messages give the server's page; Python ``on_change`` callbacks still run; a change
    the browser made itself is not echoed back to it."""
    import weakref

    import numpy as np
    from bokeh.document import Document
    from bokeh.models import Column, ColumnDataSource, Div
    from bokeh.protocol import Protocol
    from bokeh.server.contexts import BokehSessionContext
    from bokeh.server.session import ServerSession

    views = __import__("_common.views", fromlist=["changing"])
    doc = Document()
    title, column = Div(text="k = 2"), Column(children=[])
    source = ColumnDataSource({"x": np.arange(4.0), "label": list("abcd")})
    for root in (title, column, source):
        doc.add_root(root)
    page = doc.to_json()                                # each browser's copy of the page

    class Connection:
        protocol = Protocol()

        def __init__(self):
            self.sent = []
            self._socket = self

        async def send_message(self, message):
            self.sent.append(message)

        def send_patch_document(self, event):           # Bokeh's path (ServerConnection's)
            return self.send_message(self.protocol.create("PATCH-DOC", [event]))

    context = BokehSessionContext("s", None, doc)
    doc._session_context = weakref.ref(context)
    session = ServerSession("s", doc)
    context._set_session(session)
    browser, other = Connection(), Connection()
    session.subscribe(browser)
    session.subscribe(other)
    title.on_change("text", lambda attr, old, new: setattr(column, "css_classes", [new[-1]]))

    def callback():
        with views.changing(doc):
            title.text = "k = 3"
            source.data = {"x": np.arange(2.0), "label": ["e", "f"]}
            column.children = [Div(text="a new picture")]
            title.text = "k = 4"

    locked(session, callback)
    for connection in (browser, other):                 # both get the new model in full
        assert len(connection.sent) == 4                # css_classes, text, data, children
        mirror = Document.from_json(page)
        for message in connection.sent:
            message.apply_to_document(mirror)
        shown = {m.id: m for m in mirror.models}
        assert shown[title.id].text == "k = 4"
        assert shown[column.id].css_classes == ["4"]
        assert [d.text for d in shown[column.id].children] == ["a new picture"]
        assert list(shown[source.id].data["x"]) == [0.0, 1.0]
        assert list(shown[source.id].data["label"]) == ["e", "f"]

    # the message of a change without models is Bokeh's, built without the table
    from bokeh.document.events import ModelChangedEvent
    event = ModelChangedEvent(doc, source, "data", {"x": np.arange(3.0), "label": list("xyz")})
    ours = views._patch_message(browser, event)
    bokehs = browser.protocol.create("PATCH-DOC", [event])
    def text(message):                                  # buffer ids are fresh per message
        import json
        return json.dumps(message.content, default=lambda buffer: "buffer")

    assert text(ours) == text(bokehs)
    assert [bytes(b.data) for b in ours.buffers] == [bytes(b.data) for b in bokehs.buffers]

    # a change from the browser: the callback's own change goes to it, the echo does not
    def from_browser():
        session._current_patch_connection = browser
        try:
            with views.changing(doc):
                title.set_from_json("text", "k = 5", setter=session)
                column.css_classes = ["changed"]
        finally:
            session._current_patch_connection = None

    sent = len(browser.sent), len(other.sent)
    locked(session, from_browser)
    echo = [e["attr"] for m in browser.sent[sent[0]:] for e in m.content["events"]]
    to_other = [e["attr"] for m in other.sent[sent[1]:] for e in m.content["events"]]
    assert echo == ["css_classes", "css_classes"]       # the on_change callback's and the callback's
    assert sorted(to_other) == ["css_classes", "css_classes", "text"]


# ------------------------------------------------------------------ later starts
def test_results_and_pictures_of_bundled_data_outlive_the_server(common, tmp_path, monkeypatch):
    """What a shared cache with ``persist`` computes for a setting of bundled data is
    read back by the next server (a new cache of the same name) instead of computed;
    uploads and failures are computed again; other apps' code or libraries (another
    ``apps_version``) never read it."""
    from bnexplore.cache import DiskCache

    caching = __import__("_common.caching", fromlist=["SharedLRU"])
    disk = DiskCache("apps", directory=tmp_path)
    monkeypatch.setattr(caching, "_disk", lambda: disk)
    calls = []

    def server(name="later-start-test"):
        # a server's cache of that name: empty memory, the disk of every server
        return caching.SharedLRU(8, disk=disk, name=name)

    def square(x):
        calls.append(x)
        if x == "bad":
            raise ValueError("no square of that")
        return x * x if isinstance(x, int) else x

    upload = "upload: mine.csv [class] #0123abcd"
    first = server()
    assert [first.compute(k, lambda k=k: square(k)) for k in (3, upload)] == [9, upload]
    with pytest.raises(ValueError):
        first.compute("bad", lambda: square("bad"))
    assert calls == [3, upload, "bad"]

    later = server()                                   # a restart: memory is empty
    assert later.compute(3, lambda: square(3)) == 9 and calls == [3, upload, "bad"]
    later.compute(upload, lambda: square(upload))      # an upload: computed again
    with pytest.raises(ValueError):                    # so is a failure
        later.compute("bad", lambda: square("bad"))
    assert calls == [3, upload, "bad", upload, "bad"]
    server("another-cache").compute(3, lambda: square(3))      # names do not share
    monkeypatch.setattr(caching, "apps_version", lambda: "other apps or libraries")
    server().compute(3, lambda: square(3))
    assert calls[-2:] == [3, 3]
    assert caching.persistable(("vote", 3, 0.5, None, True))
    assert not caching.persistable(("vote", ("x", upload)))
    assert not caching.persistable(("vote", [1, 2]))           # only tuples of plain values


def test_a_page_build_waits_for_cached_results_only(common, monkeypatch):
    """The page build waits (up to SETTLE_S) for views that read cached results, and
    stops waiting as soon as one has to compute: the event loop that builds the page
    serves every other session too."""
    import types

    views = __import__("_common.views", fromlist=["BackgroundView"])
    monkeypatch.setattr(views, "SETTLE_S", 60.0)
    store = common.shared_cache("settle-test", maxsize=8)
    store["cached"] = "read"

    def view(key, seconds):
        def compute():
            return store.compute(key, lambda: time.sleep(seconds) or "computed")
        stub = types.SimpleNamespace(_loaded=False, _changed=False, _closed=False,
                                     _compute=compute, _prefetch=None, settled=[])
        stub.prefetch = types.MethodType(views.BackgroundView.prefetch, stub)
        stub.settle = lambda: stub.settled.append(stub._prefetch.done())
        return stub

    fast = view("cached", 0)
    views._settle_views([fast])
    assert fast.settled == [True] and fast._prefetch.result() == "read"

    slow, other = view("new setting", 3.0), view("cached", 0)
    t0 = time.monotonic()
    views._settle_views([slow, other])
    waited = time.monotonic() - t0
    assert slow.settled == [False] and waited < 2.5       # not the 60 s, nor the 3 s
    assert slow._prefetch.result(60) == "computed"

    # another session computes a setting: a page that waits for it is told so too
    first = threading.Thread(target=store.compute,
                             args=("shared", lambda: time.sleep(3.0) or "computed"))
    first.start()
    time.sleep(0.3)
    waiter = view("shared", 0)
    t0 = time.monotonic()
    views._settle_views([waiter])
    assert waiter.settled == [False] and time.monotonic() - t0 < 2.0
    first.join()
    assert waiter._prefetch.result(60) == "computed"
