"""Pictures rendered once per setting and copied per session (``apps/_render.py``)."""
from __future__ import annotations

import json

import pytest


@pytest.fixture()
def render(common):
    import _render

    return _render


def _heatmap(scale):
    import holoviews as hv

    data = [(a, b, scale * (i + j)) for i, a in enumerate("abc") for j, b in enumerate("xyz")]
    return hv.HeatMap(data).opts(width=300, height=200, title=f"scale {scale}")


def _kinds(model):
    return sorted(type(m).__name__ for m in model.references())


def _data(model):
    from bokeh.models import ColumnDataSource

    return sorted(repr(sorted((k, list(map(str, v))) for k, v in m.data.items()))
                  for m in model.references() if isinstance(m, ColumnDataSource))


def test_a_setting_is_built_once_and_every_copy_has_its_own_ids(render):
    from bokeh.core.serialization import Deserializer

    calls = []

    def plot(scale):
        calls.append(scale)
        return _heatmap(scale)

    first = render.rendered(plot, 1.5)
    assert render.rendered(plot, 1.5) is first and calls == [1.5]
    render.rendered(plot, 2.5)
    assert calls == [1.5, 2.5]

    a, b = render.bokeh_copy(first), render.bokeh_copy(first)
    ids_a = {m.id for m in a.references()}
    ids_b = {m.id for m in b.references()}
    assert len(ids_a) > 10 and not ids_a & ids_b      # a session never meets old ids
    # the same models and data as the rendered picture, ids aside
    original = Deserializer().decode(json.loads(first.model_json))
    assert _kinds(a) == _kinds(original) and _data(a) == _data(original) != []
    # the values are the picture's: the heat map's colour values went through
    assert "scale 1.5" in first.model_json and "scale 2.5" not in first.model_json


def test_a_failed_build_is_cached_and_raised_again(render):
    calls = []

    def plot(name):
        calls.append(name)
        raise ValueError(f"no picture of {name}")

    for _ in range(3):
        with pytest.raises(ValueError, match="no picture of x"):
            render.rendered(plot, "x")
    assert calls == ["x"]


def test_rendering_leaves_the_calling_sessions_document_alone(render):
    # Views run in worker threads with Panel's curdoc set to the session's document;
    # a render into that document off its lock breaks the session
    # (in a server, HoloViews' renderer is in "server" mode and renders into curdoc())
    import holoviews as hv
    from bokeh.document import Document
    from bokeh.io.doc import patch_curdoc
    from panel.io.state import set_curdoc

    session_doc = Document()
    theme = session_doc.theme
    renderer = hv.renderer("bokeh")
    mode, renderer.mode = renderer.mode, "server"
    try:
        with set_curdoc(session_doc), patch_curdoc(session_doc):
            pic = render.rendered(lambda: _heatmap(3.0))
            pane = render.shared_fixed_pane(lambda: _heatmap(3.0))
    finally:
        renderer.mode = mode
    assert not session_doc.roots and not list(session_doc.models)
    # HoloViews would set the document's theme and add a session callback to it
    assert session_doc.theme is theme and not session_doc.callbacks.session_destroyed_callbacks
    assert "scale 3.0" in pic.model_json and type(pane[0]).__name__ == "Bokeh"


def test_rendering_never_falls_back_to_the_process_wide_curdoc(render):
    # In its default mode HoloViews gives a plot without a document Bokeh's curdoc():
    # in a server thread, whichever session the event loop serves at that moment. That
    # session's document then took the renderer's theme off its lock ("_pending_writes
    # should be non-None", cached for every session of the setting).
    import holoviews as hv
    from bokeh.document import Document
    from bokeh.io.doc import patch_curdoc
    from bokeh.models import Div

    served = Document()
    served.add_root(Div(text="another session"))
    theme = served.theme
    events = []
    served.on_change(events.append)
    assert hv.renderer("bokeh").mode == "default"
    with patch_curdoc(served):
        pic = render.rendered(lambda: _heatmap(7.0))
    assert served.theme is theme and events == [] and "scale 7.0" in pic.model_json


def test_worker_threads_never_patch_curdoc(render, common, monkeypatch):
    # bokeh.io.doc.patch_curdoc keeps one stack for the whole process: a worker thread
    # pushing a document of its own there while the event loop's thread runs a
    # session callback hands that callback the wrong curdoc() (seen as "can't resolve
    # reference" errors in the sessions' patches). Rendering, copying and updating in
    # place must not touch it.
    import contextlib

    import bokeh.io.doc

    used = []
    original = bokeh.io.doc.patch_curdoc

    @contextlib.contextmanager
    def counting(doc):
        used.append(doc)
        with original(doc):
            yield

    monkeypatch.setattr(bokeh.io.doc, "patch_curdoc", counting)
    shown = render.shared_pane(_heatmap, 7.0)
    token = common.SHOWN_VIEW.set(shown)
    try:
        update = render.shared_pane(_heatmap, 8.0)
    finally:
        common.SHOWN_VIEW.reset(token)
    render.shared_dag_pane(lambda: _dag((("a", "b"),)))
    assert type(update).__name__ == "InPlace" and used == []


def test_a_dag_pane_keeps_the_least_width_of_its_boxes(render):
    import networkx as nx
    from bnexplore.viz import dag_plot
    from bnexplore.viz.graphs import plot_size

    def plot(n):
        return dag_plot(nx.DiGraph([(f"node {i}", f"node {i + 1}") for i in range(n)]),
                        responsive=True)

    column = render.shared_dag_pane(plot, 6)
    width, height = plot_size(plot(6))
    pane = column[0]
    assert pane.styles["min-width"] == f"{width}px" and pane.height == height


# ------------------------------------------------------------------ in-place updates
def _shown_after(render, common, make, first, then):
    """Show ``make(first)`` in a document, then ``make(then)`` as a view would; return
    (the update, the shown object, a function that takes it out of the document)."""
    from bokeh.document import Document

    shown = render.shared_pane(make, first)
    doc = Document()
    root = shown.get_root(doc)
    doc.add_root(root)
    token = common.SHOWN_VIEW.set(shown)
    try:
        update = render.shared_pane(make, then)
    finally:
        common.SHOWN_VIEW.reset(token)
    return update, shown, lambda: doc.remove_root(root)


def _root_json(model):
    from bokeh.document import Document

    doc = Document()
    doc.add_root(model)
    try:
        return doc.to_json(deferred=False)["roots"][0]
    finally:
        doc.remove_root(model)


def _dag(edges):
    import networkx as nx
    from bnexplore.viz import dag_plot

    g = nx.DiGraph()
    g.add_nodes_from("abcdef")
    g.add_edges_from(edges)
    return dag_plot(g, title=f"{len(edges)} arcs")


@pytest.mark.parametrize("make, first, then", [
    (_heatmap, 1.0, 4.0),
    (_dag, (("a", "b"), ("b", "c")), (("a", "c"), ("d", "e"), ("e", "f"))),
], ids=["heatmap", "dag"])
def test_a_picture_of_the_same_make_is_updated_in_place_to_what_a_copy_shows(
        render, common, make, first, then):
    update, shown, detach = _shown_after(render, common, make, first, then)
    assert type(update).__name__ == "InPlace" and update.changes
    model = shown.object
    update.apply_in_place()
    # only the changed values travel: far
    # fewer than the picture's models
    assert 0 < len(update.changes) < len(model.references())
    # the shown models now hold what a fresh copy of the new picture holds
    fresh = render.bokeh_copy(render.rendered(make, then))
    detach()
    left = []
    render._walk_models(_root_json(model), _root_json(fresh), {}, left)
    assert left == []
    # and the next move starts from the new picture
    assert shown._bnx_shown.picture is render.rendered(make, then)


def test_a_picture_of_another_make_gets_a_fresh_copy(render, common):
    import holoviews as hv

    def make(n_curves):
        return hv.Overlay([hv.Curve([0, i, 2 * i]) for i in range(1, n_curves + 1)])

    update, shown, _ = _shown_after(render, common, make, 1, 3)
    assert type(update).__name__ == "Bokeh" and update.object is not shown.object
    # the same picture again: nothing to change
    token = common.SHOWN_VIEW.set(shown)
    try:
        same = render.shared_pane(make, 1)
    finally:
        common.SHOWN_VIEW.reset(token)
    assert type(same).__name__ == "InPlace" and same.changes == []


def test_the_changes_of_a_move_are_found_once_for_every_session(render, monkeypatch):
    first, then = render.rendered(_heatmap, 3.5), render.rendered(_heatmap, 4.5)
    walks = []
    walk = render._walk_models
    monkeypatch.setattr(render, "_walk_models", lambda *a: (walks.append(1), walk(*a))[1])
    ids, found = then.diff_from(first)
    walked = len(walks)                  # (the walk recurses model by model)
    assert found and walked and then.diff_from(first) == (ids, found) and len(walks) == walked
    # another make: refused every time, still walked once
    other = render.rendered(lambda: _heatmap(1.0).opts(title="other") * _heatmap(2.0))
    with pytest.raises(render._OtherMake):
        other.diff_from(first)
    walked = len(walks)
    with pytest.raises(render._OtherMake):
        other.diff_from(first)
    assert len(walks) == walked


def test_a_text_view_takes_the_new_text_into_the_pane_it_shows(common):
    import panel as pn

    from _common import views

    shown = [pn.pane.Markdown("k = 2", css_classes=["summary"])]
    pane = shown[0]
    assert views._update_shown(shown, pn.pane.Markdown("k = 3", css_classes=["summary"]))
    assert shown[0] is pane and pane.object == "k = 3"
    # other options, or another kind of pane: the caller replaces the pane
    assert not views._update_shown(shown, pn.pane.Markdown("k = 4", css_classes=["other"]))
    assert not views._update_shown(shown, pn.pane.Alert("k = 4"))
    assert not views._update_shown(shown, pn.Column("k = 4"))
    assert pane.object == "k = 3"


def test_a_table_view_takes_the_new_rows_into_the_table_it_shows(common):
    import pandas as pd
    import panel as pn

    from _common import views

    def table(n):
        return pn.widgets.Tabulator(pd.DataFrame({"cluster": range(n)}), show_index=False,
                                    disabled=True, height=40 + 30 * n)

    shown = [table(3)]
    shown_table = shown[0]
    assert views._update_shown(shown, table(5))
    assert shown[0] is shown_table and len(shown_table.value) == 5 and shown_table.height == 190
    # other options: the caller replaces the table
    other = pn.widgets.Tabulator(pd.DataFrame({"cluster": range(2)}), show_index=True)
    assert not views._update_shown(shown, other) and len(shown_table.value) == 5


def test_the_values_of_a_move_are_decoded_once_and_shared_read_only(render, common):
    """Two sessions making the same move get the same decoded arrays (read-only: one
    session cannot change another's picture) in containers of their own."""
    import numpy as np

    one, _, detach_one = _shown_after(render, common, _heatmap, 5.5, 6.5)
    two, _, detach_two = _shown_after(render, common, _heatmap, 5.5, 6.5)
    detach_one(), detach_two()

    def arrays(value):
        if isinstance(value, dict):
            return [a for v in value.values() for a in arrays(v)]
        if isinstance(value, list):
            return [a for v in value for a in arrays(v)]
        return [value] if isinstance(value, np.ndarray) else []

    shared = 0
    for (_, _, a), (_, _, b) in zip(one.changes, two.changes):
        if isinstance(a, (dict, list)):
            assert a is not b                 # each session its own containers
        for x, y in zip(arrays(a), arrays(b)):
            assert x is y and not x.flags.writeable
            shared += 1
    assert shared > 0


def test_a_picture_kept_on_disk_holds_its_json_and_sizes_only(render):
    import pickle

    pic = render.rendered(lambda scale: _heatmap(scale), 3.5)
    pic.root_json()                                   # parsed once: not part of the file
    back = pickle.loads(pickle.dumps(pic))
    assert (back.model_json, back.least_width, back.height) == (
        pic.model_json, pic.least_width, pic.height)
    assert back._parsed == [] and back._diffs == {}
    assert _kinds(render.bokeh_copy(back)) == _kinds(render.bokeh_copy(pic))


def test_a_copy_with_nested_factors_passes_bokehs_validation(render):
    """JSON turns a categorical axis's nested factors into lists; a page built with the
    copy is validated by Bokeh, which hashes them: the copy has tuples again."""
    import holoviews as hv
    from bokeh.document import Document
    from bokeh.models import FactorRange

    def bars(n):
        return hv.Bars([(g, s, i) for i, (g, s) in enumerate(
            [(g, s) for g in "ab" for s in "xyz"][:n])], ["group", "sub"], "value")

    model = render.bokeh_copy(render.rendered(bars, 6))
    ranges = [m for m in model.references() if isinstance(m, FactorRange)]
    assert ranges and all(isinstance(f, tuple) for r in ranges for f in r.factors)
    doc = Document()
    doc.add_root(model)
    doc.validate()


def test_a_dag_of_a_pages_first_document_takes_new_sizes_in_place(render, common):
    """On a page built with its pictures (``views.serve``), Panel's theme gives the
    pictures' models style sheets of its own; an in-place move to a picture of other
    sizes (or hiding it) must not hand those to the pane, which refuses them."""
    from bokeh.document import Document
    from bokeh.models import ImportedStyleSheet

    shown = render.shared_dag_pane(_dag, (("a", "b"),))
    doc = Document()
    doc.add_root(shown.get_root(doc))
    model = shown[0].object
    model.stylesheets = [*model.stylesheets, ImportedStyleSheet(url="theme.css")]
    token = common.SHOWN_VIEW.set(shown)
    try:        # six arcs over two layers more: another height
        update = render.shared_dag_pane(_dag, tuple(zip("abcde", "bcdef")))
    finally:
        common.SHOWN_VIEW.reset(token)
    assert type(update).__name__ == "InPlace" and update.pane_options
    update.apply_in_place()
    new = render.rendered(_dag, tuple(zip("abcde", "bcdef")))
    assert shown[0].height == new.height and shown.height == new.height + render.DAG_SCROLL_BAR_PX
    assert shown[0].styles["min-width"] == f"{new.least_width}px"
    render._update_pane(shown[0], visible=False)
    assert not model.visible and not shown[0].visible
