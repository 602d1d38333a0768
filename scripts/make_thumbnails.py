"""Make the landing page's thumbnails: apps/thumbnails/<app>.png.

Starts ``panel serve apps/`` on a loopback port, opens every app in Debian's headless
Chromium (through Playwright; no browser is downloaded), waits for its first figure,
screenshots the main area and saves a small palette PNG (about 480 x 250 px).

Next to the thumbnails, ``manifest.json`` records for each app the layout of the page
its thumbnail shows (:func:`page_layout`: the app's parameters and its views in page
order, headings by their text) and a fingerprint of it; ``tests/test_thumbnails.py``
recomputes them from the current app classes, so a page that changed since its
thumbnail fails the tests until the thumbnail is made again.

Usage::

    python scripts/make_thumbnails.py                 # every app
    python scripts/make_thumbnails.py compare structure
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APPS = REPO / "apps"
OUT = APPS / "thumbnails"
MANIFEST = OUT / "manifest.json"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SIZE = (480, 250)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _apps() -> list[str]:
    """Every app of the landing page, in its order (:func:`bnexplore.apps.landing.cards`)."""
    from bnexplore.apps.landing import cards

    return [c.name for c in cards()]


def page_layout(name: str) -> dict:
    """What app ``name``'s page is made of, as its class declares it: the parameter
    names and the views in page order (a computed view by its method's name, a
    heading by its text, other text as "text", any other pane by its type), with a
    fingerprint (SHA-256 of both, 12 hex digits). Wording and data do not count."""
    import panel as pn

    from bnexplore.apps import app_class

    app = app_class(name)()
    views = []
    for v in app.views():
        if isinstance(v, pn.pane.Markdown):
            text = str(v.object).strip()
            views.append(text.splitlines()[0] if text.startswith("#") else "text")
        elif callable(v) and not isinstance(v, pn.viewable.Viewable):
            views.append(f"{getattr(v, '__name__', type(v).__name__)}()")
        else:
            views.append(type(v).__name__)
    parameters = sorted(p for p in app.param if p != "name" and not p.startswith("_"))
    key = json.dumps({"parameters": parameters, "views": views}, sort_keys=True)
    return {"fingerprint": hashlib.sha256(key.encode()).hexdigest()[:12],
            "parameters": parameters, "views": views}


def read_manifest() -> dict:
    """``app -> page_layout`` of the pages the thumbnails were made from."""
    return json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}


def _record(names: list[str]) -> None:
    manifest = read_manifest()
    manifest.update({name: page_layout(name) for name in names})
    order = _apps()
    manifest = {k: manifest[k] for k in sorted(manifest, key=lambda k: (
        order.index(k) if k in order else len(order), k)) if k in order}
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")


def settle(page, timeout_s: float, quiet_s: float = 5.0) -> None:
    """Wait until no view is computing and the number of plots stays put for
    ``quiet_s`` (a thumbnail of a spinner shows nothing); TimeoutError after
    ``timeout_s``. The browser tests wait the same way."""
    deadline = time.monotonic() + timeout_s
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        busy = page.locator("text=Computing").count() + page.locator(".pn-loading").count()
        n = page.locator("canvas").count()
        if n != last or busy:
            last, since = n, time.monotonic()
        elif time.monotonic() - since > quiet_s:
            return
        page.wait_for_timeout(500)
    raise TimeoutError(f"the page did not settle within {timeout_s:.0f} s")


def _shrink(png: bytes) -> bytes:
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    img.thumbnail(SIZE, Image.LANCZOS)
    img = img.quantize(colors=64, method=Image.Quantize.MEDIANCUT)
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("apps", nargs="*", help="app names (default: all)")
    ap.add_argument("--timeout", type=float, default=150.0,
                    help="seconds to wait for an app's first figure")
    args = ap.parse_args(argv)
    names = args.apps or _apps()
    OUT.mkdir(exist_ok=True)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "panel", "serve", "apps/", "--port", str(port), "--address",
         "127.0.0.1", f"--allow-websocket-origin=127.0.0.1:{port}"], cwd=REPO,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/apps"
    failed, made = [], []
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(base, timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    print("panel serve did not start", file=sys.stderr)
                    return 1
                time.sleep(0.5)
        from playwright.sync_api import sync_playwright
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            for name in names:
                page = browser.new_page(viewport={"width": 1280, "height": 760})
                try:
                    page.goto(f"{base}?app={name}", timeout=args.timeout * 1000)
                    page.locator(".bk-Canvas, canvas").first.wait_for(
                        timeout=args.timeout * 1000)
                    settle(page, args.timeout)
                    shot = page.screenshot(clip={"x": 330, "y": 70, "width": 940,
                                                 "height": 490})
                    (OUT / f"{name}.png").write_bytes(_shrink(shot))
                    made.append(name)
                    print(f"{name}: {OUT / f'{name}.png'} "
                          f"({(OUT / f'{name}.png').stat().st_size // 1024} KB)")
                except Exception as exc:  # noqa: BLE001 - report and go on
                    failed.append(name)
                    print(f"{name}: no thumbnail ({type(exc).__name__}: {exc})".splitlines()[0],
                          file=sys.stderr)
                finally:
                    page.close()
            browser.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    _record(made)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
