"""The glossary page (bnexplore.apps.glossary): every entry of bnexplore.glossary spelled
out and defined, as text, linked from the landing page and served."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from bnexplore.apps.glossary import GlossaryPage, anchor, entries_html
from bnexplore.glossary import GLOSSARY

REPO = Path(__file__).resolve().parents[1]


def test_the_page_lists_every_entry_spelled_out_and_defined():
    import html

    page = GlossaryPage()
    col = page.__panel__()
    body = col[1].object
    assert body.count('class="bnx-glossary-entry"') == len(GLOSSARY)
    for key, e in GLOSSARY.items():
        assert f'data-key="{html.escape(key, quote=True)}"' in body
        for text in (e.name, e.definition, e.source):
            assert html.escape(text, quote=True) in body, (key, text)
    assert f"{len(GLOSSARY)} abbreviations" in col[0].object
    assert len({anchor(k) for k in GLOSSARY}) == len(GLOSSARY)      # one anchor each
    assert 'bxa.serve("glossary")' in (REPO / "apps" / "glossary.py").read_text()


def test_entries_are_shown_as_text():
    bad = "<img src=x onerror=alert(1)>"
    out = entries_html(pd.DataFrame([(bad, bad, bad, bad)],
                                    columns=["abbreviation", "name", "definition", "source"]))
    assert "<img" not in out and out.count("&lt;img src=x onerror=alert(1)&gt;") == 5   # key twice (attribute, text)


def test_the_landing_page_links_the_glossary_in_both_ways_of_serving(monkeypatch):
    from bnexplore.apps import landing

    page = landing.landing_page()
    links = [o.object for o in page.main.objects[0].objects if "bnx-glossary-link" in str(
        getattr(o, "object", ""))]
    assert links and 'href="./glossary"' in links[0]
    monkeypatch.setattr(landing, "is_directory_mode", lambda: True)
    assert 'href="?app=glossary"' in landing.glossary_link().object
    assert "glossary" not in [c.name for c in landing.cards()]       # a link, not a card


@pytest.mark.browser
def test_the_glossary_is_served_and_linked_from_the_landing_page(panel_server, page):
    page.goto(f"{panel_server}/apps", timeout=120_000)
    page.locator("a.bnx-glossary-link").click()
    entries = page.locator(".bnx-glossary-entry")
    entries.first.wait_for(timeout=60_000)
    assert "app=glossary" in page.url
    keys = [entries.nth(i).get_attribute("data-key") for i in range(entries.count())]
    assert keys == list(GLOSSARY)
    names = page.locator(".bnx-gloss-name").all_inner_texts()
    assert names == [e.name for e in GLOSSARY.values()]
    gtt = page.locator(f"#{anchor('GTT')} .bnx-gloss-definition").inner_text()
    assert GLOSSARY["GTT"].definition in gtt
    assert page.console_errors == []
