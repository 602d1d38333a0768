"""Private Panel/Bokeh names: only in bnexplore/apps/_private.py, and those still exist."""
from __future__ import annotations

import ast
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
