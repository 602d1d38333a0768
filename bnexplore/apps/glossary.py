"""The glossary page: every abbreviation of :mod:`bnexplore.glossary` spelled out, with
its one-line definition and its source, one entry per line in a lecture's order.

Every app has the same table in a collapsed card at its foot; this page is the one a
lecture links to (the landing page does). Each entry has an anchor (``#gloss-GTT``) so
a link can point at one. The glossary's strings are shown as text (escaped).
"""
from __future__ import annotations

import html
import re

import pandas as pd
import panel as pn

from .page import download_csv, template

INTRO = ("Every abbreviation the apps and the papers behind them use, spelled out, with a "
         "one-line definition and the paper it comes from. In the apps, hover an "
         "abbreviation for its definition.")


def anchor(abbreviation: str) -> str:
    """The HTML id of an entry (letters, digits and dashes).

    Examples
    --------
    >>> anchor("GTT"), anchor("L_k(pi)"), anchor("M*")
    ('gloss-GTT', 'gloss-L-k-pi', 'gloss-M')
    """
    return "gloss-" + (re.sub(r"[^A-Za-z0-9]+", "-", abbreviation).strip("-") or "entry")


def entries_html(table: pd.DataFrame) -> str:
    """``table`` (:func:`bnexplore.glossary.glossary_table`) as an HTML definition list,
    every string escaped.

    Examples
    --------
    >>> from bnexplore.glossary import glossary_table
    >>> 'data-key="GTT"' in entries_html(glossary_table())
    True
    """
    esc = lambda s: html.escape(str(s), quote=True)   # noqa: E731
    items = []
    for row in table.itertuples(index=False):
        items.append(
            f'<div class="bnx-glossary-entry" id="{esc(anchor(row.abbreviation))}" '
            f'data-key="{esc(row.abbreviation)}" style="padding:8px 0;'
            f'border-bottom:1px solid #e3e7ea">'
            f'<dt style="font-weight:600"><span class="bnx-gloss-abbr">{esc(row.abbreviation)}'
            f'</span> &mdash; <span class="bnx-gloss-name">{esc(row.name)}</span></dt>'
            f'<dd class="bnx-gloss-definition" style="margin:4px 0 0 1.5em;line-height:1.45">'
            f'{esc(row.definition)} <span class="bnx-gloss-source" style="color:#555">'
            f'({esc(row.source)})</span></dd></div>')
    return ('<dl class="bnx-glossary-list" style="margin:0;font-size:1.05em;max-width:62em">'
            + "".join(items) + "</dl>")


class GlossaryPage(pn.viewable.Viewer):
    """The glossary as a page: in a notebook the component, served its own page.

    Examples
    --------
    >>> from bnexplore.glossary import GLOSSARY
    >>> page = GlossaryPage()
    >>> len(page.table()) == len(GLOSSARY)
    True
    """

    title = "Glossary"
    description = "Every abbreviation spelled out and defined."

    def table(self) -> pd.DataFrame:
        """Every entry: ``abbreviation``, ``name``, ``definition``, ``source``."""
        from bnexplore.glossary import glossary_table

        return glossary_table()

    def __panel__(self) -> pn.Column:
        t = self.table()
        return pn.Column(
            pn.pane.Markdown(f"## Glossary: {len(t)} abbreviations\n\n{INTRO}",
                             margin=(0, 10)),
            pn.pane.HTML(entries_html(t), css_classes=["bnx-glossary-page"],
                         sizing_mode="stretch_width", margin=(0, 10, 0, 17)),   # aligned with the Markdown text
            download_csv(t, "bnexplore-glossary"), sizing_mode="stretch_width")

    def template(self) -> pn.template.FastListTemplate:
        """The served page (no settings, so no share section)."""
        return template(self.title, main=[self], sidebar=[], description=self.description,
                        share=False)

    def servable(self, title: str | None = None, location: bool = True,
                 area: str = "main", target: str | None = None) -> "GlossaryPage":
        """Serve the page in the bnexplore template (``panel serve``); returns it."""
        self.template().servable(title=title or self.title)
        return self
