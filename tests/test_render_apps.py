"""Every app's heavy pictures are built and rendered once per setting for all sessions.

Bokeh runs an app file as a new module for each session; here each "session" is such
a fresh module, and the view functions are called as the page's worker threads call
them. Two sessions asking for the same setting must cost one build and render of each
picture (``apps/_render.py``) and get Bokeh models of their own.
"""
from __future__ import annotations

import importlib.util
import itertools

import pytest

from conftest import REPO

_SESSIONS = itertools.count(1)


@pytest.fixture()
def renders(common, monkeypatch, tmp_path):
    """The list of pictures rendered so far (their titles), counting every render.

    The pictures kept on disk for later starts go to a folder of this test: a setting
    another test (or a server of this test session) rendered is rendered again."""
    import _render
    from bnexplore.cache import DiskCache

    store = common.shared_cache("rendered-pictures", _render.RENDER_CACHE_SIZE, persist=True)
    monkeypatch.setattr(store, "_disk", DiskCache("apps", directory=tmp_path))
    done: list[str] = []
    original = _render.render

    def counting(plot, *args, **kwargs):
        picture = original(plot, *args, **kwargs)
        done.append(picture.model_json)
        return picture

    monkeypatch.setattr(_render, "render", counting)
    return done


def _session(app: str):
    """The app file run as a new module, as Bokeh does for each session."""
    spec = importlib.util.spec_from_file_location(f"bnx_session_{app}_{next(_SESSIONS)}",
                                                  REPO / "apps" / f"{app}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bokeh_models(obj) -> list:
    """The Bokeh models of every picture pane in ``obj`` (a pane or a layout of panes)."""
    import panel as pn

    if isinstance(obj, pn.pane.Bokeh):
        return [obj.object]
    assert not isinstance(obj, (pn.pane.Alert, pn.pane.HoloViews)), obj
    return [m for o in getattr(obj, "objects", []) for m in _bokeh_models(o)]


# app, view function, its arguments (a setting no other test asks for), pictures it shows
VIEWS = [
    ("clustering", "dendrogram_view", ("Network sample", "asia", 300, True, 2, "hierarchy", 0), 1),
    ("clustering", "subspace_view", ("Network sample", "asia", 300, True, 2, "hierarchy", 0, 2), 1),
    ("clustering", "timeline_view", ("Network sample", "asia", 300, True, 2, "hierarchy", 0), 2),
]


@pytest.mark.parametrize("app, view, args, n_pictures", VIEWS,
                         ids=[".".join(getattr(case, "values", case)[:2]) for case in VIEWS])
def test_two_sessions_asking_one_setting_cost_one_render_of_each_picture(
        renders, app, view, args, n_pictures):
    first, second = _session(app), _session(app)
    a = getattr(first, view)(*args)
    assert len(renders) == n_pictures          # built and rendered: the setting was new
    b = getattr(second, view)(*args)
    assert len(renders) == n_pictures          # the other session got the same pictures
    models_a, models_b = _bokeh_models(a), _bokeh_models(b)
    assert len(models_a) == len(models_b) == n_pictures
    # each session shows models of its own (a Bokeh model belongs to one document)
    ids_a = {m.id for p in models_a for m in p.references()}
    ids_b = {m.id for p in models_b for m in p.references()}
    assert ids_a and not ids_a & ids_b


def test_the_player_steps_update_the_shown_sub_space_in_place(renders, common):
    # Clustering's player: the caption and the DAG of the next sub-space go into the
    # shown layout (the browser gets the changed values), and only the new picture renders
    args = ("Network sample", "asia", 300, True, 2, "hierarchy", 0)
    app = _session("clustering")
    shown = app.subspace_view(*args, 1)
    caption, column = shown.objects
    model = column[0].object
    token = common.SHOWN_VIEW.set(shown)
    try:
        update = app.subspace_view(*args, 2)
    finally:
        common.SHOWN_VIEW.reset(token)
    assert type(update).__name__ == "LayoutInPlace"
    update.apply_in_place()
    assert shown.objects == [caption, column] and column[0].object is model
    assert "Sub-space 2 of" in caption.object
    titles = [m.text for m in model.references() if isinstance(getattr(m, "text", None), str)]
    assert any(t.startswith("Sub-space 2 of") for t in titles)
    # a view that shows something else (an error box) gets a fresh layout
    token = common.SHOWN_VIEW.set(common.error_box(ValueError("x")))
    try:
        fresh = app.subspace_view(*args, 2)
    finally:
        common.SHOWN_VIEW.reset(token)
    assert type(fresh).__name__ == "Column" and fresh[1][0].object is not model
