"""Hostile uploads in a real browser: every file gets a report, the server stays responsive.

Headless Debian Chromium against ``panel serve apps/`` (fixtures in conftest.py). The
files are the ones that once froze the server or the session: 10,000 columns, an ARFF
header declaring 200,000 values, 20 MB, 0 bytes, binary garbage, UTF-16.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pytest


pytestmark = pytest.mark.browser

LIMIT = 5_000_000           # bnexplore.apps.data.UPLOAD_MAX_BYTES
REPORT_MS = 60_000          # every upload must be answered within this (generous) time
FIRST_RENDER_MS = 120_000   # the first search JIT-compiles the scoring kernels


def _csv_of_size(size: int) -> bytes:
    """A valid CSV (a continuous column, a nominal one, a class) of exactly ``size`` bytes."""
    rng = np.random.default_rng(0)
    head = b"x,colour,class\n"
    rows = []
    total = len(head)
    i = 0
    while total < size - 40:
        x = rng.normal()
        row = f"{x:.4f},{'rb'[i % 2]},{'yes' if x > 0 else 'no'}\n".encode()
        rows.append(row)
        total += len(row)
        i += 1
    body = head + b"".join(rows)
    pad = size - len(body)
    assert 0 <= pad < 60
    # pad the last row's number with trailing zeros (still the same number)
    last = rows[-1]
    num, rest = last.split(b",", 1)
    body = head + b"".join(rows[:-1]) + num + b"0" * pad + b"," + rest
    assert len(body) == size
    return body


def hostile_files(tmp: Path) -> list[tuple[Path, str, str]]:
    """(file, expected CSS class of the report, regex the report must match)."""
    rng = np.random.default_rng(0)
    files = []

    def add(name: str, content: bytes, kind: str, pattern: str) -> None:
        p = tmp / name
        p.write_bytes(content)
        files.append((p, kind, pattern))

    wide = (",".join(f"c{i}" for i in range(10_000)) + "\n"
            + "\n".join(",".join(str(v) for v in rng.integers(0, 3, 10_000))
                        for _ in range(40)) + "\n").encode()
    add("wide.csv", wide, "error", r"10,000 columns, over the limit of 100")
    values = ",".join(f"v{i}" for i in range(200_000))
    add("values.arff", (f"@relation r\n@attribute x {{{values}}}\n@attribute class {{a,b}}\n"
                        f"@data\nv1,a\nv2,b\n").encode(),
        "error", r"declares 200,000 values, over the limit of 1,000")
    add("big.csv", b"a,b,class\n" + b"1,2,yes\n3,4,no\n" * 1_400_000, "error",
        r"21,000,010 bytes, over the upload limit of 5,000,000")
    add("empty.csv", b"", "error", r"'empty\.csv' is empty")
    add("garbage.csv", rng.integers(0, 256, 300_000, dtype=np.uint8).tobytes(), "error",
        r"binary file")
    text = "name,n,class\n" + "".join(f"{'Zoë' if i % 2 else 'José'},{i % 3},"
                                      f"{'oui' if i % 2 else 'non'}\n" for i in range(40))
    add("utf16.csv", text.encode("utf-16"), "ok", r"40 rows, 2 features, class class")
    add("over.csv", _csv_of_size(LIMIT + 1), "error",
        r"5,000,001 bytes, over the upload limit of 5,000,000")
    add("exact.csv", _csv_of_size(LIMIT), "ok", r"rows, 2 features, class class")
    return files


#: the text of an element and its shadow tree, without style sheets
_TEXT_JS = """el => {
    const parts = []
    const walk = (n) => {
        for (const c of n.childNodes) {
            if (c.nodeName === 'STYLE' || c.nodeName === 'LINK') continue
            if (c.nodeType === 3) parts.push(c.textContent)
            else { walk(c); if (c.shadowRoot) walk(c.shadowRoot) }
        }
    }
    walk(el.shadowRoot || el)
    return parts.join('')
}"""


def _info(page) -> str:
    """The text of the data's report (a Markdown pane: its text is in a shadow root)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    loc = page.locator(".bnx-data")
    if not loc.count():
        return ""
    try:   # the pane may be replaced between the two calls: then read it on the next poll
        return loc.first.evaluate(_TEXT_JS, timeout=10_000) or ""
    except PlaywrightTimeout:
        return ""


def _upload_and_wait(page, path: Path, kind: str, pattern: str) -> float:
    """Upload ``path``; wait for a report of ``kind`` matching ``pattern``; return seconds."""
    t0 = time.monotonic()
    page.locator("input[type=file]").first.set_input_files(str(path))
    deadline = t0 + REPORT_MS / 1000
    text = ""
    while time.monotonic() < deadline:
        text = _info(page).replace("\n", " ")
        error = "Cannot use this file" in text
        if (kind == "error") == error and re.search(pattern, text):
            return time.monotonic() - t0
        page.wait_for_timeout(200)
    raise AssertionError(f"{path.name}: no {kind} report matching {pattern!r} within "
                         f"{REPORT_MS / 1000:.0f} s; the report reads {text[:300]!r}")


def _score(page) -> str:
    return (page.locator(".bnx-score").first.text_content() or "").strip()


def _wait_for_change(page, old: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if page.locator(".bnx-score").count() and _score(page) not in ("", old):
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"score readout still {old!r} after {timeout_s} s")


def test_every_hostile_upload_gets_a_report(panel_server, page, tmp_path):
    page.goto(f"{panel_server}/apps?app=structure", timeout=120_000)
    page.locator(".bnx-score").first.wait_for(timeout=FIRST_RENDER_MS)
    seconds = {}
    for path, kind, pattern in hostile_files(tmp_path):
        # a bad file after a good one (and the reverse) must replace the report
        seconds[path.name] = _upload_and_wait(page, path, kind, pattern)
        if path.name == "utf16.csv":   # decoded, not mojibake: the names read right
            assert "ÿþ" not in _info(page) and "\x00" not in _info(page)
    print("seconds to the report:", {k: round(v, 1) for k, v in seconds.items()})
    # the session survived the 20 MB file: the page still reacts
    before = _score(page)
    page.get_by_role("button", name="data set", exact=True).click(timeout=90_000)   # from "your data"
    # the data set list shows once the server has answered the click
    page.locator("select:visible").filter(has=page.locator("option", has_text=re.compile(
        r"^iris$"))).first.select_option("iris", timeout=90_000)
    _wait_for_change(page, before, 90)
    assert page.console_errors == []
