"""The apps use bnexplore's public API only, wrap every view alike and take parameter
ranges from one declaration (no browser needed)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parents[1] / "apps"
SOURCES = sorted(APPS.glob("*.py")) + sorted((APPS / "_common").glob("*.py"))


def _private_uses(path: Path) -> list[str]:
    """bnexplore names starting with ``_`` that ``path`` imports or reaches by attribute."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # private attributes the file sets itself (``obj._bnx_shown = ...``) are its own
    own = {n.attr for n in ast.walk(tree)
           if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bnexplore"):
            parts = node.module.split(".") + [a.name for a in node.names]
            out += [f"from {node.module} import {a.name}" for a in node.names
                    if any(p.startswith("_") for p in parts)]
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.startswith("bnexplore")
                    and any(p.startswith("_") for p in a.name.split("."))]
        elif (isinstance(node, ast.Attribute) and node.attr.startswith("_")
              and not node.attr.startswith("__") and node.attr not in own):
            base = node.value
            # a module's or an estimator's private member: anything but the app's own
            # objects (self, a local class) and Panel's design class
            if not (isinstance(base, ast.Name) and (base.id in ("self", "cls", "Fast"))):
                out.append(ast.unparse(node))
        elif isinstance(node, ast.Constant) and node.value == "__class__":
            out.append('"__class__"')
    return out


#: Bokeh server internals a file may reach, each for a reason: no public Bokeh API
#: sends a callback's held changes to a browser as one message (views._send_held).
BOKEH_INTERNALS = {
    "_common/views.py": {"session._subscribed_connections", "session._current_patch_connection",
                         "callbacks._change_callbacks", "connection._socket"},
}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(APPS)))
def test_no_private_bnexplore_name(path):
    allowed = BOKEH_INTERNALS.get(str(path.relative_to(APPS)), set())
    assert [use for use in _private_uses(path) if use not in allowed] == []


@pytest.mark.parametrize("path", sorted(APPS.glob("*.py")), ids=lambda p: p.name)
def test_every_view_is_wrapped_by_guarded_and_holds_no_error_handler(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name.endswith("_view"):
            assert [ast.unparse(d) for d in fn.decorator_list] == ["guarded"], fn.name
            handlers = [n for n in ast.walk(fn) if isinstance(n, ast.ExceptHandler)]
            assert handlers == [], f"{path.name}:{fn.name} catches errors itself"


def test_parameter_sliders_span_the_one_declaration(common):
    from bnexplore.experiments.compare import PARAM_RANGES, check_params

    assert common.PARAMETERS is PARAM_RANGES
    for name, (lo, hi) in PARAM_RANGES.items():
        s = common.param_slider(name, name)
        assert (s.start, s.end) == (lo, hi) and lo <= s.value <= hi
        new = {"k": "max_parents", "alpha": "penalty", "w": "queue_width"}.get(name, name)
        check_params(**{new: s.end})                        # the ends are accepted
    assert common.param_slider("n", "n", end=5).end == 5     # a data-bound end is lower
    assert common.param_slider("k", "k", value=99).value == PARAM_RANGES["k"][1]
    with pytest.raises(ValueError, match="out of range"):
        check_params(max_parents=PARAM_RANGES["k"][1] + 1)


def test_no_app_states_a_range_of_k_itself():
    """Sliders of the shared parameters come from param_slider, not from literals."""
    for path in sorted(APPS.glob("*.py")):
        if path.name == "order_averaging.py":    # its k slider moves with issue 22 (lead)
            continue
        text = path.read_text(encoding="utf-8")
        for label in ('"k (max parents', '"Max in-degree"', '"n (AMA', '"w (ISMB'):
            for line in text.splitlines():
                if label in line:
                    assert "param_slider(" in line, f"{path.name}: {line.strip()}"


def test_guarded_turns_an_error_into_an_error_box(common):
    view = common.guarded(lambda x: 1 / x)
    box = view(0)
    assert type(box).__name__ == "Alert" and "ZeroDivisionError" in box.object
    assert view(4) == 0.25 and view.__wrapped__ is not None


def test_curated_choices_lie_in_the_declared_ranges(common):
    """Apps that offer a list of values (queue widths, penalties) stay inside the ranges."""
    import math

    from bnexplore.apps.forests import PENALTIES
    from bnexplore.apps.ismb_trace import QUEUE_WIDTHS

    lo, hi = common.PARAMETERS["w"]
    assert all(lo <= w <= hi for w in QUEUE_WIDTHS)
    lo, hi = common.PARAMETERS["alpha"]
    assert all(lo <= a <= hi or a == math.inf for a in PENALTIES.values())   # infinity: FAN


def test_the_landing_page_imports_no_plotting_stack_and_an_app_gets_every_name():
    """``import _common`` (the landing page) stays light; the first app name bound loads
    HoloViews in the importing thread, and every name and submodule is reachable."""
    import subprocess
    import sys

    code = ("import sys, threading\n"
            "import _common\n"
            "light = [m for m in ('holoviews', 'pandas', 'numba') if m in sys.modules]\n"
            "from _common import serve, param_slider, DataSource, make_template\n"
            "names = [n for n in _common._LAZY if not hasattr(_common, n)]\n"
            "print(light, 'holoviews.plotting.bokeh' in sys.modules, names,\n"
            "      _common.params.PARAMETERS is _common.PARAMETERS)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=APPS, capture_output=True, text=True,
                         check=True, env=dict(__import__("os").environ,
                                              PYTHONPATH=str(APPS.parent)))
    assert out.stdout.split("\n")[0] == "[] True [] True"


def test_app_titles_from_the_header_are_those_of_the_whole_file(common, tmp_path, monkeypatch):
    from _common import pages

    paths = sorted(APPS.glob("*.py"))
    quick = [pages._read_app_info(p, -1, 0) for p in paths]
    monkeypatch.setattr(pages, "_parse_header", lambda src, fn: ast.parse(src, filename=fn))
    assert quick == [pages._read_app_info(p, -2, 0) for p in paths]
    monkeypatch.undo()
    # a TITLE assigned below the first definition is still found
    late = tmp_path / "late.py"
    late.write_text('"""Doc title.\n\nDoc text.\n"""\ndef f():\n    pass\n\n\nTITLE = "Late"\n')
    info = pages.read_app_info(late)
    assert (info.title, info.description) == ("Late", "Doc text.")
    early = tmp_path / "early.py"
    early.write_text('"""Doc title.\n\nDoc text.\n"""\nimport sys\n\n\ndef f():\n    return TITLE\n')
    assert pages.read_app_info(early).title == "Doc title"


def test_pages_load_no_mathjax(panel_server):
    """No page loads Bokeh's MathJax bundle (1.8 MB): the apps' texts hold no TeX."""
    import urllib.request

    for query in ("", "?app=mixture_weights"):
        with urllib.request.urlopen(f"{panel_server}/apps{query}", timeout=300) as r:
            page = r.read().decode()
        assert "bokeh.min.js" in page and "bokeh-mathjax" not in page
