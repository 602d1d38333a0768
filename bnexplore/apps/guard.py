"""Refuse an empty or too large file in the browser, before it is sent.

Bokeh's file input reads the whole file and sends it over the websocket; a file over
the websocket's message limit (20 MB base64) closes the connection and kills the page,
and an empty file sends nothing the server notices. :class:`UploadGuard` (invisible)
listens (capture phase, on the window) to the ``input`` event of the file input whose
host carries the CSS class ``target_class``: a file of 0 or more than ``max_bytes`` bytes
is taken out of the input before Bokeh reads it, and ``refused`` tells the server its
name and size.
"""
from __future__ import annotations

import param
from panel.reactive import ReactiveHTML


class UploadGuard(ReactiveHTML):
    """The browser-side check of a file input's file size (see the module's text)."""

    max_bytes = param.Integer(default=5_000_000)
    target_class = param.String(default="")
    refused = param.Dict(default={})

    _template = '<div id="guard" class="bnx-upload-guard" style="display:none"></div>'
    _scripts = {
        "render": """
            const handler = (ev) => {
              const path = ev.composedPath ? ev.composedPath() : [ev.target]
              const el = path[0]
              if (!el || el.tagName !== 'INPUT' || el.type !== 'file') return
              const mine = (n) => n.classList && n.classList.contains(data.target_class)
              if (!path.some(mine)) return
              const files = Array.from(el.files || [])
              const bad = files.find((f) => f.size === 0 || f.size > data.max_bytes)
              if (bad === undefined) return
              el.value = ''
              data.refused = {name: bad.name, size: bad.size,
                              n: ((data.refused && data.refused.n) || 0) + 1}
            }
            if (state.handler) window.removeEventListener('input', state.handler, true)
            state.handler = handler
            window.addEventListener('input', handler, true)
        """,
        "remove": """
            if (state.handler) window.removeEventListener('input', state.handler, true)
            state.handler = null
        """,
    }
