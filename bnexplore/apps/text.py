"""User text in pages: every string a user controls is shown as literal text.

File, column and class names, query values and the messages quoting them go into a
Markdown/HTML/Alert pane through :func:`md_text` (or :func:`md_strong`, :func:`md_join`);
a table whose column titles name user data gets ``titles=table_titles(frame)``.
"""
from __future__ import annotations

import re
from typing import Any


# --------------------------------------------------------------------------- user text
#: every ASCII punctuation character: each can start HTML (``<``, ``&``) or Markdown
#: syntax (links, images, emphasis, code, tables, headings, lists, math, autolinks).
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")
#: control characters (line breaks included): a line break could start a new
#: Markdown block (a heading, a table row, an HTML block) inside a one-line text.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def md_text(value: Any, max_len: int | None = None) -> str:
    """``value`` as literal text for a Markdown, HTML or Alert pane.

    Use it for every string a user controls (file names, column names, class and
    other category values, query arguments, exception messages that quote them)
    before it goes into a pane's markup. Every ASCII punctuation character becomes a
    numeric character reference (``<`` -> ``&#60;``): HTML gets no tag, attribute or
    entity, and Markdown no syntax at all (CommonMark treats a character reference as
    the literal character), so ``[x](javascript:...)``, ``![i](x)``, ``*em*``,
    ``| cell |``, backticks, ``$math$`` and ``http://`` autolinks all show as typed.
    Control characters and line breaks become one space. The browser shows exactly
    the original characters. Do not put the result inside a Markdown code span
    (backticks show references literally): use ``<code>`` instead.

    Parameters
    ----------
    value : object
        Converted with ``str`` first.
    max_len : int, optional
        Cut the text to this many characters (an ellipsis marks the cut) *before*
        escaping, so no character reference is cut in half.

    Returns
    -------
    str
        Text safe in both Markdown and HTML (also inside a quoted HTML attribute).

    Examples
    --------
    >>> md_text("<img src=x onerror=alert(1)>")
    '&#60;img src&#61;x onerror&#61;alert&#40;1&#41;&#62;'
    >>> md_text("[a](javascript:x)")
    '&#91;a&#93;&#40;javascript&#58;x&#41;'
    >>> md_text("vote")
    'vote'
    >>> md_text("a very long name", max_len=6)
    'a very\u2026'
    """
    s = _CONTROL.sub(" ", str(value))
    if max_len is not None and len(s) > max_len:
        s = s[:max_len] + "\u2026"
    return _PUNCTUATION.sub(lambda m: f"&#{ord(m.group())};", s)


def md_strong(value: Any) -> str:
    """``value`` as bold literal text (``<strong>`` around :func:`md_text`).

    An HTML tag, unlike ``**...**``, stays bold whatever characters the text starts
    or ends with (Markdown emphasis next to punctuation does not always open).

    Examples
    --------
    >>> md_strong("a|b")
    '<strong>a&#124;b</strong>'
    """
    return f"<strong>{md_text(value)}</strong>"


def md_join(values: Any, sep: str = ", ", max_items: int | None = None) -> str:
    """Several user strings as one literal text, separated by ``sep``.

    ``sep`` is markup written by the app (not escaped); with ``max_items`` the rest
    is summarised as ``... (N more)``.

    Examples
    --------
    >>> md_join(["a*", "b"], max_items=1)
    'a&#42;, ... (1 more)'
    """
    values = [str(v) for v in values]
    shown = values if max_items is None else values[:max_items]
    out = sep.join(md_text(v) for v in shown)
    if len(shown) < len(values):
        out += f"{sep}... ({len(values) - len(shown)} more)"
    return out


def table_titles(frame: Any) -> dict:
    """Column titles for a :class:`panel.widgets.Tabulator` of ``frame``, as literal text.

    Tabulator puts a column's title into the page as HTML (its cells are escaped),
    so a column named after user data needs ``titles=table_titles(frame)``.

    Examples
    --------
    >>> import pandas as pd
    >>> table_titles(pd.DataFrame(columns=["P(<b>y</b>)"]))
    {'P(<b>y</b>)': 'P&#40;&#60;b&#62;y&#60;&#47;b&#62;&#41;'}
    """
    return {str(c): md_text(c) for c in frame.columns}


def glossed(text: str, seen: set | None = None) -> str:
    """Our own ``text`` (never a user's: it is not escaped) with the first use of each
    abbreviation of :mod:`bnexplore.glossary` spelled out after it, and a hover
    definition (``<abbr title=...>``) on it. ``seen`` (updated) holds the abbreviations
    already spelled out on the page.

    Examples
    --------
    >>> glossed("GTT finds one network; GTT is greedy.")  # doctest: +ELLIPSIS
    '<abbr class="bnx-abbr" title="Greedy thick-thin: ...">GTT</abbr> (Greedy thick-thin) finds one network; GTT is greedy.'
    """
    import html

    from bnexplore.glossary import GLOSSARY, _patterns

    seen = set() if seen is None else seen
    hits = []
    for key, pat in _patterns():
        m = pat.search(text)
        if m and key not in seen and GLOSSARY[key].name.lower() != m.group(0).lower():
            hits.append((m.start(), m.end(), key))
    hits.sort()
    out, last = [], 0
    for start, end, key in hits:
        if start < last:            # inside an abbreviation already marked
            continue
        e = GLOSSARY[key]
        tip = html.escape(f"{e.name}: {e.definition}", quote=True)
        out.append(text[last:start])
        out.append(f'<abbr class="bnx-abbr" title="{tip}">{text[start:end]}</abbr> '
                   f'({html.escape(e.name)})')
        last = end
        seen.add(key)
    out.append(text[last:])
    return "".join(out)
