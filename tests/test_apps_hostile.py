"""Hostile input in a real browser: no script runs and markup shows as text.

One ``panel serve apps/`` server and one browser page for the whole module. Three
kinds of input a visitor controls:

* the router's ``?app=`` value (reflected into the "unknown app" error),
* every widget value in the query string of every app (the names are the ones the
  app itself writes to the address bar once loaded),
* an uploaded CSV, into every app with an upload, whose file name, column names,
  target name and class values are markup (stored in the server, shown in the upload
  report, the summaries, the captions and the cut-point table).

After each step: no dialog opened (``alert`` & co.), no element the input could have
injected exists anywhere in the page (searched through every open shadow root, where
Panel renders), and where the page shows the input, it shows it as typed.
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.browser

FIRST_RENDER_MS = 480_000     # first visit of an app: data, JIT compilation, a busy machine

#: the tester's reflected payloads for ``?app=``.
APP_VALUES = ["<img src=x onerror=alert(document.domain)>", "<script>alert(2)</script>",
              "[x](javascript:alert(3))", "![i](x)"]
#: the value put into every widget of the query string (all the payloads in one).
WIDGET_VALUE = ('<img src=x onerror=alert(21)> <script>alert(22)</script> '
                '[w](javascript:alert(23)) " onmouseover="alert(24) {label.__class__}')

FILE_NAME = "<img src=x onerror=alert(1)>.csv"
TARGET = "<b>cls</b>|`t`"
CLASSES = ["<img src=x onerror=alert(11)>", "[y](javascript:alert(12))"]
CONTINUOUS = "<script>alert(13)</script>"
NOMINAL = "[c](javascript:alert(14))|*e*"
#: apps with a data upload, and the query that shows it.
UPLOAD_APPS = {"structure": "", "order_averaging": "", "clustering": "", "compare": ""}

#: every element or attribute hostile input could bring, searched through shadow roots.
_SCAN_JS = r"""
() => {
  const found = [];
  const visit = (root) => {
    for (const el of root.querySelectorAll('*')) {
      const tag = el.tagName.toLowerCase();
      if (tag === 'img' && el.getAttribute('src') === 'x') found.push('img[src=x]');
      if (tag === 'script' && (!el.type || /javascript|module/i.test(el.type))
          && /alert\(/.test(el.textContent)) found.push('script: ' + el.textContent.slice(0, 60));
      for (const a of el.attributes) {
        if (a.name.startsWith('on') && /alert\(/.test(a.value)) found.push(tag + '[' + a.name + ']');
        if (/^\s*javascript:/i.test(a.value)) found.push(tag + '[' + a.name + '=javascript:...]');
      }
      if ((tag === 'b' && el.textContent === 'cls') || (tag === 'em' && el.textContent === 'e'))
        found.push(tag + ' made from a name: ' + el.outerHTML.slice(0, 60));
      if (el.shadowRoot) visit(el.shadowRoot);
    }
  };
  visit(document);
  return found;
}
"""


def hostile_csv(n: int = 120, seed: int = 0) -> bytes:
    """Markup in every name and category; the target (last column) has two classes."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    df = pd.DataFrame({
        CONTINUOUS: x + rng.normal(scale=0.3, size=n),               # MDL cut points
        NOMINAL: np.where(rng.random(n) < 0.8, np.where(x > 0, "a|b", "$x$"), "<i>v</i>"),
        TARGET: np.where(x > 0, CLASSES[0], CLASSES[1]),
    })
    return df.to_csv(index=False).encode()


@pytest.fixture(scope="module")
def hostile_page(browser):
    """One page for the module; ``page.dialogs`` records every dialog (then dismissed)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.dialogs = []

    def _on_dialog(dialog):
        pg.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    pg.on("dialog", _on_dialog)
    pg.set_default_timeout(60_000)
    try:
        yield pg
    finally:
        context.close()


def pane_text(page, css_class: str, nth: int = 0) -> str:
    """Visible text of a Panel pane (its content lives in the element's shadow root)."""
    return page.locator(f".{css_class}").nth(nth).evaluate(
        "e => [...(e.shadowRoot || e).childNodes]"
        ".filter(n => !['STYLE', 'LINK'].includes(n.nodeName))"   # not the pane's CSS
        ".map(n => n.textContent).join(' ')")


def wait_text(page, css_class: str, contains: str, timeout_s: float = 180.0) -> str:
    """Wait until the pane ``css_class`` shows ``contains``; return its text."""
    deadline = time.monotonic() + timeout_s
    text = ""
    while time.monotonic() < deadline:
        loc = page.locator(f".{css_class}")
        if loc.count():
            text = pane_text(page, css_class)
            if contains in text:
                return text
        page.wait_for_timeout(500)
    raise AssertionError(f".{css_class} does not show {contains!r} after {timeout_s} s: "
                         f"{text[:300]!r}")


def assert_clean(page, what: str) -> None:
    """No dialog opened and nothing injected, after letting scripts run a moment."""
    page.wait_for_timeout(1000)            # an onerror handler runs after the image fails
    found = page.evaluate(_SCAN_JS)
    assert found == [], f"{what}: injected elements {found}"
    assert page.dialogs == [], f"{what}: dialogs opened {page.dialogs}"


def open_app(page, base: str, query: str) -> None:
    """Open ``{base}/apps?{query}`` and wait for the page's sidebar (wide time limit)."""
    page.dialogs.clear()            # each step is judged on its own dialogs
    page.goto(f"{base}/apps?{query}", wait_until="domcontentloaded", timeout=FIRST_RENDER_MS)
    page.locator(".bnx-share").first.wait_for(state="attached", timeout=FIRST_RENDER_MS)


def app_names() -> list[str]:
    """Every app of ``apps/`` (as the landing page finds them)."""
    from bnexplore.apps import PAGES      # pages without settings (the glossary)

    apps = Path(__file__).resolve().parents[1] / "apps"
    return sorted(p.stem for p in apps.glob("*.py") if p.stem not in {"main", *PAGES}
                  and not p.name.startswith("_"))


# ------------------------------------------------------------------ reflected: ?app=
def test_hostile_app_names_show_as_text(panel_server, hostile_page):
    """The router's "unknown app" error quotes ``?app=`` as text (the reflected XSS)."""
    page = hostile_page
    for value in APP_VALUES:
        page.dialogs.clear()
        page.goto(f"{panel_server}/apps?{urlencode({'app': value})}", wait_until="load")
        page.locator(".alert-danger").first.wait_for(state="attached", timeout=60_000)
        text = wait_text(page, "alert-danger", "no app", 60)
        assert f"no app {value!r}" in text, text
        assert_clean(page, f"?app={value}")


# ------------------------------------------------------------------ widget values in the URL
@pytest.mark.parametrize("app", app_names())
def test_hostile_widget_values_in_the_url(panel_server, hostile_page, app):
    """Markup as the value of every widget in the query string runs nothing.

    Today's widgets refuse a value outside their options or range, so nothing of it
    reaches the page; the test guards the apps against a widget that would show a
    query value (a free-text input echoed into a pane fails it).
    """
    page = hostile_page
    open_app(page, panel_server, f"app={app}")
    # the query names of the widgets: the app writes every parameter with a value to the
    # address bar once loaded; the labels' slugs are tried too
    deadline = time.monotonic() + 60
    while len(parse_qsl(urlsplit(page.url).query)) < 2 and time.monotonic() < deadline:
        page.wait_for_timeout(250)
    names = {k for k, _ in parse_qsl(urlsplit(page.url).query) if k != "app"}
    assert names, f"{app}: no widget in the URL ({page.url})"
    labels = page.locator("label").all_inner_texts()
    names |= {re.sub(r"[^a-z0-9]+", "_", t.lower()).strip("_") for t in labels} - {""}
    query = {"app": app, **{k: WIDGET_VALUE for k in sorted(names)},
             "<img src=x onerror=alert(25)>": "1"}          # an unknown name, too
    open_app(page, panel_server, urlencode(query))
    page.wait_for_timeout(2000)                         # views update after the values
    assert_clean(page, f"{app} with hostile query values")


# ------------------------------------------------------------------ stored: uploads
@pytest.mark.parametrize("app", sorted(UPLOAD_APPS))
def test_hostile_upload_shows_as_text(panel_server, hostile_page, tmp_path, app):
    """A file whose names and values are markup: report and views show them as text."""
    page = hostile_page
    path = tmp_path / FILE_NAME
    path.write_bytes(hostile_csv())
    open_app(page, panel_server, f"app={app}{UPLOAD_APPS[app]}")
    page.locator("input[type=file]").first.set_input_files(str(path))

    # the upload report: file, target, class values, the continuous column's cut points
    report = wait_text(page, "bnx-data", "Cut points", 120)
    for s in (FILE_NAME, TARGET, *CLASSES, CONTINUOUS):
        assert s in report, (s, report)
    assert_clean(page, f"{app}: upload report")

    # the views now use the upload: its name (and the class) shown as typed
    if app == "structure":
        wait_text(page, "bnx-data", FILE_NAME)
        wait_text(page, "bnx-summary", "arcs")
    elif app == "order_averaging":
        text = wait_text(page, "bnx-ama-summary", FILE_NAME)
        # the class node is one of the file's columns (which one is the app's choice)
        assert any(f"class {c}" in text for c in (TARGET, CONTINUOUS, NOMINAL)), text
    elif app == "clustering":
        wait_text(page, "bnx-summary", FILE_NAME)
        # the caption of the first sub-space names the file's columns (once redrawn)
        deadline = time.monotonic() + 120
        caption = ""
        while not any(c in caption for c in (CONTINUOUS, NOMINAL, TARGET)):
            assert time.monotonic() < deadline, f"the sub-spaces are not the upload's: {caption!r}"
            page.wait_for_timeout(500)
            caption = wait_text(page, "bnx-subspace", "Sub-space 1")
    elif app == "compare":
        page.locator(".bnx-source").first.wait_for(state="attached", timeout=60_000)
        deadline = time.monotonic() + 120
        while FILE_NAME not in (page.locator(".bnx-source").first.text_content() or ""):
            assert time.monotonic() < deadline, "the comparison does not use the upload"
            page.wait_for_timeout(500)
        # the run finishes (or fails) with the hostile class values in plots and tables
        deadline = time.monotonic() + 240
        while not (page.locator(".bnx-cv-status").first.text_content() or "").startswith(
                ("Done", "The comparison could not run")):
            assert time.monotonic() < deadline, "the comparison did not finish"
            page.wait_for_timeout(500)
    assert_clean(page, f"{app}: views of the upload")
