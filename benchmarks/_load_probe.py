"""Server-side probe for ``bench_load.py --probe`` (run by ``panel serve --setup``).

When a session misses a round's deadline, the bench asks the server what that session's
document holds, to tell a message the server never sent from one the client lost. The
bench writes ``request`` in ``$BNX_LOAD_PROBE``; within a second this probe answers
with ``dump.json``: per session id, whether its document is held, how many events wait
in the hold, how many patch messages Panel has queued for its sockets and whether
Panel's write block is set, the texts of its models and whether a view still computes.

Not part of the package: it reads Panel's private write queues (``_WRITE_MSGS``,
``_WRITE_BLOCK``) because those are what is being diagnosed.
"""
from __future__ import annotations

import json
import os
import time
import weakref
from pathlib import Path

import panel as pn
from panel.io import document as pn_document
from tornado.ioloop import PeriodicCallback

PROBE = Path(os.environ["BNX_LOAD_PROBE"])
_DOCS: "weakref.WeakValueDictionary[str, object]" = weakref.WeakValueDictionary()


def _created(ctx) -> None:
    _DOCS[ctx.id] = ctx._document


def _queued(doc) -> int:
    """Patch messages Panel has queued for the document's sockets."""
    return sum(len(v) for v in pn_document._WRITE_MSGS.get(doc, {}).values())


def _describe(doc) -> dict:
    texts, computing, search = [], 0, None
    for m in list(doc.models):
        props = type(m).properties()
        if type(m).__name__ == "Location":
            search = m.search
        text = getattr(m, "text", None) if "text" in props else None
        if isinstance(text, str):
            texts.append(text[:200])
        classes = getattr(m, "css_classes", None) if "css_classes" in props else None
        if classes and ("bnx-busy" in classes or ("bnx-view" in classes and "pn-loading" in classes)):
            computing += 1
    return {"hold": doc.callbacks.hold_value, "held_events": len(doc.callbacks._held_events),
            "queued_msgs": _queued(doc),
            "write_block": doc in pn_document._WRITE_BLOCK, "computing": computing,
            "loaded": bool(pn.state._loaded.get(doc)), "onload": len(pn.state._onload.get(doc, [])),
            "location_search": search,
            "texts": texts}


def _stranded() -> None:
    # patch messages Panel queued for a session with no write task left to send them:
    # they wait for the session's next change
    for sid, doc in list(_DOCS.items()):
        n = _queued(doc)
        if n and doc not in pn_document._WRITE_BLOCK:
            print(f"[probe {time.strftime('%H:%M:%S')}] session {sid}: {n} patch messages "
                  f"queued, no write under way", flush=True)


def _answer() -> None:
    _stranded()
    request = PROBE / "request"
    if not request.exists():
        return
    request.unlink()
    out = {sid: _describe(doc) for sid, doc in list(_DOCS.items())}
    tmp = PROBE / "dump.tmp"
    tmp.write_text(json.dumps(out, default=str))
    tmp.replace(PROBE / "dump.json")


pn.state.on_session_created(_created)
PeriodicCallback(_answer, 1000).start()
