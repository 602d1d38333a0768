"""Figures of served pages drawn once per setting and patched in place
(bnexplore.apps.figures)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars

import networkx as nx
import numpy as np
import pandas as pd
import panel as pn
import param
import pytest

from bnexplore.apps import _base, figures
from bnexplore.apps._base import App, _show, guarded
from bnexplore.apps._cache import cached

hv = pytest.importorskip("holoviews")
import holoviews.plotting.bokeh  # noqa: E402,F401 - the bokeh backend's options


def _dag_plot(edges, title):
    from bnexplore.viz import dag_plot

    g = nx.DiGraph()
    g.add_nodes_from("ABCDE")
    g.add_edges_from(edges)
    return dag_plot(g, title=title, width=500)


def test_walk_is_the_same_for_two_drawings_by_the_same_code():
    a = figures._render(_dag_plot([("A", "B"), ("B", "C")], "one"), 5)
    b = figures._render(_dag_plot([("A", "B"), ("B", "C")], "one"), 5)
    sa, ma = figures.Snapshot.of(a.state)
    sb, mb = figures.Snapshot.of(b.state)
    assert [type(m) for m in ma] == [type(m) for m in mb] and len(ma) > 10
    assert sa.signature == sb.signature
    assert figures.patch(sa, sb) == []           # same drawing: nothing to change


def test_a_patch_turns_one_drawing_into_the_other():
    """Another structure of the same nodes, another title: the patch sets the data,
    the title and the ranges, and afterwards the figure holds what a new drawing holds."""
    old = figures._render(_dag_plot([("A", "B"), ("B", "C")], "first"), 5)
    new = figures._render(_dag_plot([("C", "A"), ("D", "E"), ("A", "E")], "second"), 5)
    s_old, models = figures.Snapshot.of(old.state)
    s_new, _ = figures.Snapshot.of(new.state)
    assert s_old.signature == s_new.signature
    changes = figures.patch(s_old, s_new)
    changed = {type(models[i]).__name__ for i, _ in changes}
    assert "ColumnDataSource" in changed and "Title" in changed
    for i, values in changes:
        models[i].update(**values)
    assert old.state.title.text == "second"
    after, _ = figures.Snapshot.of(old.state)
    assert figures.patch(after, s_new) == []


def test_a_figure_of_another_structure_has_another_signature():
    curve = figures._render(hv.Curve([1, 2, 3]), 5)
    two = figures._render(hv.Curve([1, 2, 3]) * hv.Scatter([1, 2, 3]), 5)
    assert (figures.Snapshot.of(curve.state)[0].signature
            != figures.Snapshot.of(two.state)[0].signature)


def test_equal_handles_nan_arrays_and_nested_values():
    eq = figures._equal
    assert eq(float("nan"), float("nan")) and not eq(1.0, 2.0)
    assert eq({"x": np.array([1.0, np.nan])}, {"x": np.array([1.0, np.nan])})
    assert not eq({"x": np.array([1.0, 2.0])}, {"x": np.array([1.0, 3.0])})
    assert not eq([1, 2], (1, 2)) and eq([("a", 1)], [("a", 1)])
    assert not eq(np.array(["a", "b"], dtype=object), np.array(["a", "c"], dtype=object))


def test_setting_keys_name_plain_values_only():
    app = Lines()
    values = _base._own_parameters(Lines.view, app)
    key = figures.setting_key(app, "view", values)
    assert key is not None and ("x", 1) in key[-1]
    assert figures.setting_key(app, "view", {"g": nx.DiGraph()}) is None


class Lines(App):
    """A view with one picture: x lines (the structure changes at x = 3)."""

    x = param.Integer(default=1, bounds=(1, 3))

    @param.depends("data", "x")
    @guarded
    def view(self):
        curve = hv.Curve(np.arange(5) * self.x, label=f"x = {self.x}").opts(
            title=f"x = {self.x}", height=200, width=300)
        if self.x == 3:
            curve = curve * hv.Scatter([1, 2])
        return pn.Column(pn.pane.Markdown(f"x = {self.x}"), pn.pane.HoloViews(curve))


def _run(coroutine):
    """``coroutine`` awaited on a loop of its own thread (the test's thread may run one),
    in a copy of the current context (the served fixture's document)."""
    context = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(context.run, asyncio.run, coroutine).result()


def _served(app):
    """The view computed as on a served page (a worker, awaited on a loop), then
    displayed (Panel gives each plot the pane that shows it)."""
    out = _run(app.view())
    out.get_root(pn.state.curdoc)
    return out


@pytest.fixture
def served(monkeypatch):
    from bokeh.document import Document

    monkeypatch.setattr(_base, "on_session", lambda: True)
    drawn = []
    render = figures._render
    monkeypatch.setattr(figures, "_render", lambda *a: drawn.append(1) or render(*a))
    monkeypatch.setattr(figures, "SNAPSHOTS", figures._LRU(16))
    pn.state.curdoc = Document()
    yield drawn
    pn.state.curdoc = None


def _data():
    return pd.DataFrame({"a": list("xyxy"), "Class": list("ppqq")})


def _pictures(out):
    """The picture panes of a served view's output: HoloViews drawings, or Bokeh panes
    of figures built from a snapshot."""
    return out.select(lambda o: isinstance(o, (pn.pane.HoloViews, pn.pane.Bokeh)))


def _figure(pane):
    return pane.object.state if isinstance(pane, pn.pane.HoloViews) else pane.object


def test_a_served_view_patches_its_figure_and_sessions_share_the_drawing(served):
    drawn = served
    one = Lines(_data(), target="Class")
    pane = _served(one).select(pn.pane.HoloViews)[0]
    first = pane.object
    assert len(drawn) == 1                                   # the first display
    one.x = 2
    out = _served(one)
    second = out.select(pn.pane.HoloViews)[0].object
    assert second is first                                   # patched in place
    assert out.select(pn.pane.HoloViews)[0] is pane          # under the pane shown
    source = [m for m in figures.walk(first.state) if type(m).__name__ == "ColumnDataSource"][0]
    assert list(source.data["y"]) == [0, 2, 4, 6, 8] and first.state.title.text == "x = 2"
    assert len(drawn) == 2                                   # the snapshot of x = 2
    # another session at x = 2: its first figure is built from the shared snapshot
    # (a Bokeh pane, nothing drawn); x = 1 was drawn by the first session: patched
    other = Lines(_data(), target="Class", x=2)
    [built] = _pictures(_served(other))
    mine = built.object
    assert isinstance(built, pn.pane.Bokeh) and len(drawn) == 2
    assert mine is not first.state and mine.title.text == "x = 2"
    assert [list(m.data["y"]) for m in figures.walk(mine)
            if type(m).__name__ == "ColumnDataSource"] == [[0, 2, 4, 6, 8]]
    other.x = 1
    [again] = _pictures(_served(other))
    assert again is built and again.object is mine
    assert len(drawn) == 2 and mine.title.text == "x = 1"
    # another structure (a second layer): drawn anew
    one.x = 3
    third = _served(one).select(pn.pane.HoloViews)[0].object
    assert third is not first and len(drawn) == 3


def test_a_figure_built_from_a_snapshot_is_the_figure_drawn():
    # a session's first figure of a setting drawn before is made from the snapshot's
    # values: the page must be the one the HoloViews pane makes, model for model
    from bokeh.document import Document

    from bnexplore.apps.order_averaging import OrderAveraging
    from bnexplore.apps.page import DESIGN

    def page(pane):
        doc = Document()
        pn.Column(pane, sizing_mode="stretch_width").get_root(doc)
        ids = {}

        def norm(x):
            if isinstance(x, dict):
                return {k: ids.setdefault(v, len(ids)) if k == "id" else norm(v)
                        for k, v in sorted(x.items())}
            return [norm(v) for v in x] if isinstance(x, list) else x
        return norm(doc.to_json(deferred=False)["roots"])

    app = OrderAveraging("vote", max_parents=1, n=2)
    outs = [app.network_view(), app.heatmap_view(), app.roc_view()]
    panes = [p for out in outs for p in out.select(pn.pane.HoloViews)]
    assert len(panes) == 3
    for pane in panes:
        plot = figures._render(pane.object, pane.margin)
        snap, models = figures.Snapshot.of(plot.state)
        built = snap.build()
        again, _ = figures.Snapshot.of(built[0])
        assert again.signature == snap.signature and not figures.patch(snap, again)
        assert built == figures.walk(built[0])                 # in snapshot order
        # every model it refers to is its own (a colour mapper in a glyph's colour
        # field too): nothing is shared with the drawing or another session
        assert {m.id for m in built[0].references()} == {m.id for m in built}
        for design in (None, DESIGN):        # a notebook's pane, a served page's
            drawn = pn.pane.HoloViews(pane.object, design=design, **figures._layout(pane))
            bokeh = figures._bokeh_pane(pane, snap.build()[0], design)
            assert page(bokeh) == page(drawn)


def test_a_view_is_updated_in_place_unless_it_makes_new_controls():
    from bnexplore.apps.order_averaging import OrderAveraging

    app = OrderAveraging("vote", max_parents=1, n=2)
    out = app.compare_view()                                 # computed in place
    assert not _base._has_controls(out, app._kept_ids)       # the app's own buttons
    assert app.pin_controls() is app.pin_controls()
    assert _base._has_controls(pn.Column(pn.widgets.Button(label="new")), app._kept_ids)
    assert not _base._has_controls(pn.Column(pn.widgets.FileDownload(callback=lambda: None,
                                                                     filename="a.csv")),
                                   app._kept_ids)


def test_only_cached_reads_memory_and_refuses_to_compute():
    from bnexplore.apps._cache import NotCached, only_cached
    from bnexplore.apps.data import bundled_dataset

    calls = []

    @cached(disk=False, max_items=2)
    def rows(data, plus):
        calls.append(plus)
        return len(data.frame) + plus

    vote = bundled_dataset("vote")
    with only_cached(), pytest.raises(NotCached):
        rows(vote, 1)
    assert calls == []
    assert rows(vote, 1) == 436 and rows(vote, 2) == 437
    with only_cached():
        assert rows(vote, 1) == 436                  # in memory: read
    assert calls == [1, 2]
    rows(vote, 3)                                    # two results kept: 2 dropped
    with only_cached(), pytest.raises(NotCached):
        rows(vote, 2)


class Counted(Lines):
    """Lines whose view reads a cached result: computed in place once it is in memory."""

    cached_views = ("view",)

    @param.depends("data", "x")
    @guarded
    def view(self):
        n = _count(self.data, self.x)
        return pn.pane.Markdown(f"x = {self.x}, {n} rows")


@cached(disk=False)
def _count(data, x):
    return len(data.frame) * x


def test_a_cached_view_is_computed_on_the_loop_once_its_results_are_in_memory(served):
    app = Counted(_data(), target="Class")
    first = app.view()
    assert asyncio.iscoroutine(first)                # not in memory: a worker computes
    first.close()
    _count(app.data, 1)
    out = app.view()                                 # in memory: the output itself
    assert isinstance(out, pn.pane.Markdown) and out.object == "x = 1, 4 rows"


def test_a_page_is_built_with_the_views_whose_results_are_in_memory(served):
    frame = pd.DataFrame({"a": list("xyxyx"), "Class": list("ppqqp")})   # its own results
    # not in memory: the pane waits for the page to load (then a worker computes)
    app = Counted(frame, target="Class")
    assert app._pane(app.view).defer_load
    # in memory: computed while the page is built, and the pane shows that output
    _count(app.data, 1)
    app = Counted(frame, target="Class")
    pane = app._pane(app.view)
    assert not pane.defer_load
    built = app._preloaded["view"][1]
    assert app.view() is built
    assert app.view() is not built                  # handed over once
    # a setting changed before the pane showed it: the new setting is computed
    _count(app.data, 2)
    app = Counted(frame, target="Class")
    app._pane(app.view)
    app.x = 2
    out = app.view()
    assert isinstance(out, pn.pane.Markdown) and out.object == "x = 2, 10 rows"


class Framed(Lines):
    """Lines whose picture pane is wider at x = 2 (a layout value of the pane itself)."""

    @param.depends("data", "x")
    @guarded
    def view(self):
        curve = hv.Curve(np.arange(5) * self.x).opts(height=200, width=300)
        return pn.Column(pn.pane.HoloViews(curve, min_width=300 + 100 * (self.x == 2)))


def test_a_picture_pane_whose_layout_changes_replaces_the_view(served, monkeypatch):
    # Panel 1.9 fails half way through passing a picture pane's layout change on to its
    # figure in place: such a view is replaced instead, and its figure drawn anew
    shown = []
    monkeypatch.setattr(_base, "_show", lambda app, view, out, inplace, updates: shown.append(
        inplace) or _show(app, view, out, inplace, updates))
    app = Framed(_data(), target="Class")
    first = _served(app).select(pn.pane.HoloViews)[0].object
    app.x = 3                                                # same layout: patched
    assert _served(app).select(pn.pane.HoloViews)[0].object is first and shown[-1]
    app.x = 2                                                # wider pane: replaced
    assert _served(app).select(pn.pane.HoloViews)[0].object is not first and not shown[-1]


class Pair(Lines):
    """Two pictures: the first keeps its structure, the second gains a layer at x = 3."""

    @param.depends("data", "x")
    @guarded
    def view(self):
        curve = hv.Curve(np.arange(5) * self.x).opts(height=200, width=300)
        second = hv.Curve(np.arange(5) + self.x).opts(height=200, width=300)
        if self.x == 3:
            second = second * hv.Scatter([1, 2])
        return pn.Column(pn.pane.HoloViews(curve), pn.Row(pn.pane.HoloViews(second)))


def test_a_view_with_a_picture_drawn_anew_draws_all_its_pictures_anew(served, monkeypatch):
    # a replaced view must not hold a pane the page still shows: when one picture of a
    # view cannot be patched, the others are drawn anew too
    shown = []
    monkeypatch.setattr(_base, "_show", lambda app, view, out, inplace, updates: shown.append(
        inplace) or _show(app, view, out, inplace, updates))
    app = Pair(_data(), target="Class")
    first = _served(app).select(pn.pane.HoloViews)
    app.x = 2                                                # both patched
    second = _served(app).select(pn.pane.HoloViews)
    assert [p.object for p in second] == [p.object for p in first] and shown[-1]
    assert second[0] is first[0] and second[1] is first[1]   # the panes shown
    app.x = 3                                                # the second: a new layer
    third = _served(app).select(pn.pane.HoloViews)
    assert not shown[-1]
    assert all(p is not q for p, q in zip(third, first))
    assert all(p.object is not q.object for p, q in zip(third, first))


def test_a_picture_outside_a_list_layout_is_drawn_anew(served):
    # a pane that prepare cannot put in place of the new one (here: inside Tabs,
    # whose items carry names) is drawn anew, never left holding a raw element
    app = Lines(_data(), target="Class")
    first = _served(app).select(pn.pane.HoloViews)[0]
    app.x = 2
    out = pn.Tabs(("lines", pn.pane.HoloViews(hv.Curve(np.arange(5) * 2))))
    out, updates, replace = figures.prepare(app._figures, "view", None, out,
                                            data=app.data.key)
    pane = out.select(pn.pane.HoloViews)[0]
    assert replace and pane is not first and pane.object is not first.object
    assert not isinstance(pane.object, hv.Element)


class Tapped(Lines):
    """A picture a stream listens to (a click on the curve)."""

    @param.depends("data", "x")
    @guarded
    def view(self):
        curve = hv.Curve(np.arange(5) * self.x).opts(height=200, width=300, tools=["tap"])
        hv.streams.Tap(source=curve)
        return pn.Column(pn.pane.HoloViews(curve))


def test_a_picture_with_a_stream_is_drawn_for_each_session(served):
    # a copy made from values would lose the stream's Python callbacks: each session
    # draws its own, and a click still reaches the server
    drawn = served
    _served(Tapped(_data(), target="Class"))
    other = _served(Tapped(_data(), target="Class"))
    [pane] = _pictures(other)
    assert isinstance(pane, pn.pane.HoloViews) and len(drawn) == 2
    assert any(pane.object.traverse(lambda p: p.callbacks))


class Drawn(Lines):
    """A view whose picture is made through App.drawing (counted)."""

    made = []

    @param.depends("data", "x")
    @guarded
    def view(self):
        def picture():
            Drawn.made.append(self.x)
            return hv.Curve(np.arange(5) * self.x).opts(height=200, width=300)
        return pn.Column(pn.pane.HoloViews(self.drawing(picture)))


def test_a_drawing_is_made_once_per_setting_for_every_session(served, monkeypatch):
    monkeypatch.setattr(figures, "DRAWINGS", figures._LRU(16))
    Drawn.made.clear()
    one, other = Drawn(_data(), target="Class"), Drawn(_data(), target="Class")
    first = _served(one).select(pn.pane.HoloViews)[0].object
    _served(other)
    assert Drawn.made == [1]                            # the second session shares it
    one.x = 2
    _served(one)
    assert Drawn.made == [1, 2]                         # another setting: made
    assert figures.DRAWINGS.get((figures.setting_key(one, "view", {
        "data": one.data, "x": 1}), 0)) is not None
    # outside a served page (a notebook, a test) the picture is made each time
    Drawn.made.clear()
    monkeypatch.setattr(_base, "on_session", lambda: False)
    one.view()
    one.view()
    assert Drawn.made == [2, 2] and first is not None


class Bare(Lines):
    """A view whose output is its picture pane itself (as Order averaging's ROC)."""

    @param.depends("data", "x")
    @guarded
    def view(self):
        return pn.pane.HoloViews(hv.Curve(np.arange(5) * self.x).opts(height=200, width=300),
                                 sizing_mode="stretch_width")


def test_a_built_picture_takes_a_spinner(served):
    # the page's spinner changes the classes of the pane showing a view, and Panel
    # passes them on to the view's output: a figure built from a snapshot (a Bokeh
    # pane) must take them, its design given as the page gives it, not as an override
    # that Panel would then set on the figure (Bokeh refuses a 'design' attribute)
    from bnexplore.apps.page import DESIGN

    first = Bare(_data(), target="Class")
    first._design = DESIGN
    _served(first)
    other = Bare(_data(), target="Class")
    other._design = DESIGN
    out = _served(other)
    assert isinstance(out, pn.pane.Bokeh) and out.design is DESIGN
    shown = pn.param.ParamFunction(lambda: out)   # Panel's pane of a function's output
    shown.get_root(pn.state.curdoc)
    for busy in (True, False):
        shown.loading = busy
        assert ("pn-loading" in out.css_classes) == busy
    out.stylesheets = [":host { max-width: 100%; }"]
    assert out.object.sizing_mode == "stretch_width"


def test_a_served_views_spinner_is_set_in_a_session_callback(served, monkeypatch):
    # Panel's Bokeh pane sets its layout on its figure itself, not through Panel's
    # messages: Bokeh accepts that only with the session's document locked, so a
    # delayed spinner is a callback of the session's document, not of the bare loop
    from bokeh.document import Document

    class Session(Document):
        session_context = object()          # as on a served page
        timeouts: list = []

        def add_timeout_callback(self, callback, timeout_milliseconds):
            self.timeouts.append((callback, timeout_milliseconds))

    app = Bare(_data(), target="Class")
    pane = app._pane(app.view)
    doc = pn.state.curdoc = Session()
    monkeypatch.setattr(asyncio, "get_running_loop", lambda: pytest.fail("a bare timer"))
    app._computing("view", +1)
    [(spin, ms)] = doc.timeouts
    assert ms == _base.SPINNER_DELAY_S * 1000 and not pane.loading
    spin()                                  # later, the view still computing
    assert pane.loading
    app._computing("view", -1)
    assert not pane.loading


class Counting(Lines):
    """A view that asks for a change of the app (its count of lines) on the loop."""

    n_lines = param.Integer(default=0)
    threads: list = []

    @param.depends("data", "x")
    @guarded
    def view(self):
        import threading

        def change():
            Counting.threads.append(threading.get_ident())
            self.n_lines = self.x
        self.on_loop(change)
        return pn.pane.Markdown(f"x = {self.x}")


def test_a_change_asked_for_in_a_worker_is_made_on_the_loop(served):
    # a view computed in a worker thread changes the app's parameters (and so the
    # page's widgets) only on the event loop, with its output
    import threading

    app = Counting(_data(), target="Class", x=2)
    loop_thread = []

    async def shown():
        loop_thread.append(threading.get_ident())
        return await app.view()

    out = _run(shown())
    assert out.object == "x = 2" and app.n_lines == 2
    assert Counting.threads == loop_thread
    app.on_loop(lambda: setattr(app, "n_lines", 5))       # outside a worker: now
    assert app.n_lines == 5


def test_a_failed_computation_takes_its_spinner_off_under_a_hold(served, monkeypatch):
    # the spinner's classes reach a built figure directly (Panel's Bokeh pane), which a
    # served session accepts only while Panel holds and dispatches the document's
    # events: a computation that fails takes its spinner off under Panel's hold too
    app = Bare(_data(), target="Class")
    held = []
    computing = App._computing
    monkeypatch.setattr(App, "_computing", lambda self, name, change: held.append(
        (change, pn.state.curdoc.callbacks.hold_value)) or computing(self, name, change))
    monkeypatch.setattr(figures, "prepare", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        _run(app.view())
    assert held == [(+1, None), (-1, "combine")]


def test_two_threads_draw_in_turn_while_holoviews_turns_validation_off():
    """HoloViews turns Bokeh's property validation off for the whole process while it
    updates a plot; a figure drawn meanwhile in another thread kept its title as text.
    Here one drawing pauses with validation off (as HoloViews' updates do) while a
    second thread draws a titled picture: it must wait its turn and succeed."""
    import threading

    import holoviews as hv
    from bokeh.core.property.bases import Property

    paused, errors = threading.Event(), []

    def pause_without_validation(plot, element):
        saved = Property._should_validate
        Property._should_validate = False
        paused.set()
        try:
            threading.Event().wait(0.5)      # the second thread starts drawing now
        finally:
            Property._should_validate = saved

    def draw(element):
        try:
            figures._render(element, 0)
        except Exception as exc:             # noqa: BLE001 - reported below
            errors.append(exc)

    first = threading.Thread(target=draw, args=(
        hv.Curve([1, 2, 3]).opts(hooks=[pause_without_validation]),))
    first.start()
    assert paused.wait(10)
    second = threading.Thread(target=draw, args=(hv.Curve([3, 1, 2]).opts(title="a title"),))
    second.start()
    first.join(10)
    second.join(10)
    assert not errors, errors


def test_a_picture_for_a_served_page_is_drawn_in_a_document_of_its_own():
    """``page.picture`` draws in a worker for a served page. Bokeh's ``curdoc()`` is
    process-wide there: a session's document patched on the event loop, or one of a
    session since closed. A picture drawn into a closed session's document failed
    ("'Document' object has no attribute '_theme'"), and so did every later picture of
    the page: the Compare page showed no picture (CI, one opening in about thirty)."""
    from bokeh.document import Document
    from bokeh.io.doc import patch_curdoc

    from bnexplore.apps import page

    closed, session = Document(), object()
    closed.on_change_dispatch_to(session)
    closed.destroy(session)                    # as Bokeh closes a session's document
    with patch_curdoc(closed):
        pane = _run(page.in_worker(page.picture, hv.Curve([1, 2, 3]).opts(title="t")))
    assert isinstance(pane, pn.pane.Bokeh)
    assert pane.object.title.text == "t"
