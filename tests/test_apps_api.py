"""The served files use bnexplore's public API only, the apps take parameter ranges from
one declaration and the landing page stays light (no browser needed)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parents[1] / "apps"
SOURCES = sorted(APPS.glob("*.py"))


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


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_private_bnexplore_name(path):
    assert _private_uses(path) == []


#: the apps' parameters that are the experiments' shared parameters (PARAM_RANGES' names).
SHARED = ("max_parents", "n", "penalty", "queue_width")
#: parameters of those names that mean something else in one app.
OWN_MEANING = {("forests", "max_parents")}    # class parents per feature: 0 or 1


def test_every_apps_shared_parameters_lie_in_the_one_declaration():
    """max_parents, n, penalty and queue_width of every app: bounds (or the curated
    choices) inside PARAM_RANGES, and the experiments accept the largest."""
    import math

    import param

    import bnexplore.apps as bxa
    from bnexplore.experiments.compare import PARAM_RANGES, check_params

    seen = set()
    for name in bxa.APPS:
        cls = bxa.app_class(name)
        for pname in SHARED:
            if pname not in cls.param or (name, pname) in OWN_MEANING:
                continue
            p, (lo, hi) = cls.param[pname], PARAM_RANGES[pname]
            if isinstance(p, param.Selector):
                values = [v for v in p.objects if v != math.inf]       # infinity: FAN
            else:
                assert p.bounds is not None, f"{name}.{pname} has no bounds"
                values = list(p.bounds)
            assert values and all(lo <= v <= hi for v in values), (name, pname, values)
            check_params(**{pname: max(values)})
            seen.add(pname)
    assert seen == set(SHARED)
    with pytest.raises(ValueError, match="out of range"):
        check_params(max_parents=PARAM_RANGES["max_parents"][1] + 1)


def test_the_landing_page_imports_no_plotting_stack():
    """The landing page (its cards: every app's class) answers without HoloViews or
    numba; an app's page imports them when it is served."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from bnexplore.apps import landing\n"
            "page = landing.landing_page()\n"
            "print([m for m in ('holoviews', 'numba') if m in sys.modules], len(landing.cards()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300)
    assert out.stdout.split("\n")[0] == "[] 10"


def test_pages_load_no_mathjax(panel_server):
    """No page loads Bokeh's MathJax bundle (1.8 MB): the apps' texts hold no TeX."""
    import urllib.request

    for query in ("", "?app=mixture_weights"):
        with urllib.request.urlopen(f"{panel_server}/apps{query}", timeout=300) as r:
            page = r.read().decode()
        assert "bokeh.min.js" in page and "bokeh-mathjax" not in page
