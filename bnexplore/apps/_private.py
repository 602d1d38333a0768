"""The only private Panel members the apps use, and why (checked by tests/test_apps_private.py).

Panel 1.9 / Bokeh 3.9 (pyproject.toml bounds them to the tested minor versions):

* ``panel.theme.fast.Fast._resources["font"]``: the FAST design links a Google web font
  from the *class*; the apps must load nothing from the internet (a failed request is
  also a console error), so the link is taken out and pages use a system font.
* ``panel.io.resources._panel_use_mathjax``: Panel adds Bokeh's MathJax bundle (1.8 MB)
  to any page with a Markdown or HTML pane in case its text holds TeX; the apps' texts
  hold none (what users type is escaped), so pages load no MathJax.

Both are optimisations of the page: if a later Panel removes them, :func:`apply` does
nothing and the pages still work (with the font link and MathJax loaded).
"""
from __future__ import annotations

#: the private names used here, as ``module:attribute`` (the test checks each exists).
PRIVATE_NAMES = ("panel.theme.fast:Fast._resources", "panel.io.resources:_panel_use_mathjax")
_DONE: list = []


def apply() -> None:
    """Drop the web font of the FAST design and the MathJax bundle (once a process)."""
    if _DONE:
        return
    _DONE.append(True)
    try:
        from panel.theme.fast import Fast
        res = getattr(Fast, "_resources", None)
        if isinstance(res, dict) and "font" in res:
            Fast._resources = {k: v for k, v in res.items() if k != "font"}
    except ImportError:  # pragma: no cover - another Panel
        pass
    from panel.io import resources
    if hasattr(resources, "_panel_use_mathjax"):
        resources._panel_use_mathjax = lambda roots: False
