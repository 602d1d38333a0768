"""The only private members of Panel and HoloViews the apps use, and why (checked by
tests/test_apps_private.py).

Panel 1.9, Bokeh 3.9, HoloViews 1.23 (pyproject.toml bounds them to the tested minor
versions):

* ``panel.theme.fast.Fast._resources["font"]``: the FAST design links a Google web font
  from the *class*; the apps must load nothing from the internet (a failed request is
  also a console error), so the link is taken out and pages use a system font.
* ``panel.io.resources._panel_use_mathjax``: Panel adds Bokeh's MathJax bundle (1.8 MB)
  to any page with a Markdown or HTML pane in case its text holds TeX; the apps' texts
  hold none (what users type is escaped), so pages load no MathJax.

  These two are optimisations of the page: if a later Panel removes them, :func:`apply`
  does nothing and the pages still work (with the font link and MathJax loaded).
* ``panel.io.document._dispatch_msgs``, ``_WRITE_MSGS``, ``_WRITE_BLOCK`` and
  ``_dispatch_write_task``: a fix of a race in Panel's write queue. When a change of a
  served page cannot be written at once (the socket is busy), Panel queues its message
  and starts a task that writes the queue, then lifts the session's write block. A
  message queued while that task awaits its last write, whose own task starts only
  after the block is lifted, is never written: that task finds no block and returns.
  The message then waits for the session's next change, so the page misses a whole
  update (seen with 30 sessions: pages that never showed a setting the server had
  computed and displayed). :func:`_write_queue_drained` writes what is left before the
  block is lifted. ``tests/test_apps_private.py`` reproduces the race on Panel's own
  function, and fails once Panel no longer loses the message (then remove the fix).
* ``holoviews.plotting.bokeh.plot.validate`` and ``holoviews.plotting.bokeh.graphs.validate``
  (HoloViews 1.23): HoloViews turns Bokeh's property validation off for the *whole
  process* while it updates a plot's data (``with validate(False)``), a speed-up for
  one thread. Bokeh also reads that switch when it serialises a data spec: while it is
  off, a colour mapped from a column (``field("zvalues", transform=mapper)``) is sent
  to the browser as a *value* holding that field. A page serialised on the event loop
  while a worker drew a picture then received a heat map BokehJS cannot draw ("n is not
  iterable") and stopped updating (about one Compare opening in two hundred). Here
  HoloViews' ``validate`` keeps validation on: its data updates are validated, as any
  other Bokeh change is. ``tests/test_apps_private.py`` fails once HoloViews no longer
  turns validation off (then remove the fix).
"""
from __future__ import annotations

import contextlib
import importlib

#: the HoloViews modules whose ``validate`` keeps Bokeh's validation on
HOLOVIEWS_VALIDATING = ("holoviews.plotting.bokeh.plot", "holoviews.plotting.bokeh.graphs")
#: the private names used here, as ``module:attribute`` (the test checks each exists).
PRIVATE_NAMES = ("panel.theme.fast:Fast._resources", "panel.io.resources:_panel_use_mathjax",
                 "panel.io.document:_dispatch_msgs", "panel.io.document:_WRITE_MSGS",
                 "panel.io.document:_WRITE_BLOCK", "panel.io.document:_dispatch_write_task",
                 *(f"{module}:validate" for module in HOLOVIEWS_VALIDATING))
_DONE: list = []
_VALIDATION_KEPT: list = []


def _write_queue_drained(dispatch):
    """Panel's queue-writing task ``dispatch``, which leaves no message behind.

    Panel's task writes the messages queued for a document, awaits the writes and lifts
    the document's write block. A message queued meanwhile gets a task of its own,
    which returns at once if it starts after the block is lifted. Here, when the block
    is lifted with messages still queued, the block is set again and a task writes them.
    """
    from panel.io import document as pn_document

    async def drained(doc) -> None:
        await dispatch(doc)
        if doc not in pn_document._WRITE_BLOCK and pn_document._WRITE_MSGS.get(doc):
            pn_document._WRITE_BLOCK[doc] = True
            pn_document._dispatch_write_task(doc, pn_document._dispatch_msgs, doc)

    drained.bnx_fixed = dispatch
    return drained


@contextlib.contextmanager
def _validation_kept(value: bool = True):
    """What HoloViews' ``validate(False)`` becomes: validation stays on."""
    yield


def apply() -> None:
    """Drop the web font of the FAST design and the MathJax bundle, and mend Panel's
    write queue (once a process)."""
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
    from panel.io import document as pn_document
    dispatch = getattr(pn_document, "_dispatch_msgs", None)
    if dispatch is not None and not hasattr(dispatch, "bnx_fixed"):
        pn_document._dispatch_msgs = _write_queue_drained(dispatch)


def keep_validation() -> None:
    """Keep Bokeh's validation on in HoloViews' plot updates (once a process). Called
    when an app is made, before it draws anything (in a worker or, for pictures Panel
    updates itself, on the event loop); not at import: the landing page imports no
    HoloViews."""
    if _VALIDATION_KEPT:
        return
    _VALIDATION_KEPT.append(True)
    for name in HOLOVIEWS_VALIDATING:
        try:
            module = importlib.import_module(name)
        except ImportError:  # pragma: no cover - HoloViews without its Bokeh backend
            continue
        if hasattr(module, "validate"):
            module.validate = _validation_kept
