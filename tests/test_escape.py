"""User-controlled strings reach the apps' pages as text, never as HTML or Markdown.

Fast, in-process checks (no server, no browser): every hostile string goes through the
apps' helper (:mod:`bnexplore.apps.text`: :func:`md_text` and the functions built on it)
and through Panel's own Markdown / HTML conversion, and the resulting HTML is parsed: it
must hold no element or attribute the string brought in, and its visible text must be
the string as typed. The browser side is ``tests/test_apps_hostile.py``.
"""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from bnexplore.apps.text import md_join, md_strong, md_text, table_titles

#: strings a user could type into a file, a column header, a cell or a URL.
HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(2)</script>",
    "[link](javascript:alert(3))",
    "![i](x onerror=alert(4))",
    "<javascript:alert(5)>",
    "*em* _u_ **b** `code` ~~s~~",
    "a | b | c",
    "# heading",
    "&lt;b&gt; &amp; &#60;i&#62;",
    "http://example.com/x",
    "$x^2$ and $$y$$",
    "{label.__class__} {",
    "line1\n| x | y |\n|---|---|\n<script>alert(6)</script>",
    "\" onmouseover=\"alert(7)",
    "\\*back\\* <!-- c -->",
]


class _Page(HTMLParser):
    """Elements (with attributes) and visible text of an HTML fragment."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):  # a comment would hide text
        self.tags.append(("!--", {}))


def parse(fragment: str) -> _Page:
    p = _Page()
    p.feed(fragment)
    p.close()
    return p


def _squash(s: str) -> str:
    """Whitespace as a browser shows it (runs of blanks and line breaks -> one space)."""
    return re.sub(r"\s+", " ", s).strip()


def rendered(pane) -> str:
    """The HTML a Panel Markdown/HTML/Alert pane sends to the browser (its innerHTML)."""
    return html.unescape(pane._transform_object(pane.object)["object"])


def markdown_html(text: str) -> str:
    import panel as pn

    return rendered(pn.pane.Markdown(text))


def _assert_no_injection(page: _Page, allowed: set[str]) -> None:
    tags = [t for t, _ in page.tags]
    assert set(tags) <= allowed, page.tags
    for tag, attrs in page.tags:
        for k, v in attrs.items():
            assert not k.startswith("on"), (tag, attrs)
            assert "javascript" not in (v or "").lower(), (tag, attrs)


# ------------------------------------------------------------------ the helper
@pytest.mark.parametrize("s", HOSTILE)
def test_md_text_in_markdown_is_plain_text(s):
    page = parse(markdown_html(f"before {md_text(s)} after"))
    _assert_no_injection(page, {"p"})
    assert _squash("".join(page.text)) == _squash(f"before {s} after")


@pytest.mark.parametrize("s", HOSTILE)
def test_md_text_in_html_and_attributes_is_plain_text(s):
    import panel as pn

    out = rendered(pn.pane.HTML(f"<div title=\"{md_text(s)}\">{md_text(s)}</div>"))
    page = parse(out)
    assert [t for t, _ in page.tags] == ["div"]
    assert page.tags[0][1] == {"title": re.sub(r"[\x00-\x1f]+", " ", s)}
    assert _squash("".join(page.text)) == _squash(s)


def test_md_text_in_a_table_cell_keeps_the_columns():
    md = "| a | b |\n|---|---|\n" + f"| {md_text('x | y')} | 1 |"
    page = parse(markdown_html(md))
    assert [t for t, _ in page.tags].count("td") == 2


def test_md_text_cut_before_escaping_and_helpers():
    assert md_text("<" * 10, max_len=3) == "&#60;" * 3 + "\u2026"
    assert md_text(42) == "42" and md_text("Zürich ok") == "Zürich ok"
    page = parse(markdown_html(f"x {md_strong('*a*')} y"))
    assert [t for t, _ in page.tags] == ["p", "strong"] and "*a*" in "".join(page.text)
    assert "(2 more)" in md_join(["a", "b", "c"], max_items=1)


# ------------------------------------------------------------------ where the apps use it
@pytest.mark.parametrize("s", [HOSTILE[0], HOSTILE[1], "![i](x)", HOSTILE[5]])
def test_the_unknown_app_error_shows_the_name_as_text(s):
    # the landing page's router for an unknown ?app= value
    from bnexplore.apps.landing import unknown_app_page

    page = parse(rendered(unknown_app_page(s).main[0]))
    _assert_no_injection(page, {"p", "strong"})
    assert f"no app {s!r}" in _squash("".join(page.text))


def hostile_csv(n: int = 90, seed: int = 0) -> bytes:
    """A CSV whose column names and class values are markup (the target is last)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    df = pd.DataFrame({
        "<script>alert(13)</script>": x + rng.normal(scale=0.3, size=n),   # continuous
        "![i](x)|*e*": rng.choice(["a|b", "$x$", "<i>v</i>"], size=n),
        "<b>cls</b>|`t`": np.where(x > 0, "<img src=x onerror=alert(11)>",
                                   "[y](javascript:alert(12))"),
    })
    return df.to_csv(index=False).encode()


def test_upload_report_is_text():
    import bnexplore.apps as bxa

    app = bxa.LearnStructure()
    app.load_file(hostile_csv(), "<img src=x onerror=alert(1)>.csv")
    assert app.source == "your data" and app.data.frame is not None
    page = parse(rendered(app.data_view()))
    _assert_no_injection(page, {"p", "strong", "em"})
    text = _squash("".join(page.text))
    for s in ("<img src=x onerror=alert(1)>.csv", "<b>cls</b>|`t`",
              "(2 values: <img src=x onerror=alert(11)>, [y](javascript:alert(12)))",
              "Cut points of the continuous columns: <script>alert(13)</script>: "):
        assert s in text, s
    # a file whose class cannot be used: the message quoting its content is text too
    app.load_file(b"a,<img src=x onerror=alert(2)>\n1,<b>k</b>\n2,<b>k</b>\n", "bad.csv")
    page = parse(rendered(app.data_view()))
    _assert_no_injection(page, {"p", "strong", "em"})
    assert "single class '<b>k</b>'" in "".join(page.text)


# ------------------------------------------------------------------ plot titles
def test_plot_titles_are_literal():
    import holoviews as hv

    from bnexplore.viz import roc_plot
    from bnexplore.viz.compare import roc_comparison

    hv.extension("bokeh", logo=False)
    curve = (np.array([0.0, 1.0]), np.array([0.0, 1.0]), 0.5)
    title = "ROC {label.__class__} { <b>x</b>"
    fig = hv.render(roc_plot({"a": curve}, title=title), backend="bokeh")
    assert fig.title.text == title
    fig = hv.render(roc_comparison({"a": curve, "b": curve}, "{0}"), backend="bokeh")
    assert fig.title.text == "ROC, class {0} vs the rest"


def test_table_titles_are_text():
    import panel as pn

    df = pd.DataFrame({"P(<img src=x onerror=alert(1)> = [a](javascript:b))": [0.5]})
    table = pn.widgets.Tabulator(df, titles=table_titles(df))
    # Tabulator sets a column title as innerHTML: what the browser parses must be text
    title = table.get_root().columns[-1].title
    page = parse(title)
    assert page.tags == [] and "".join(page.text) == df.columns[0]
