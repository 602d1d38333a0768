"""Make the landing page's thumbnails: apps/thumbnails/<app>.png.

Starts ``panel serve apps/`` on a loopback port, opens every app in Debian's headless
Chromium (through Playwright; no browser is downloaded), waits for its first figure,
screenshots the main area and saves a small palette PNG (about 480 x 250 px).

Usage::

    python scripts/make_thumbnails.py                 # every app
    python scripts/make_thumbnails.py compare structure
"""
from __future__ import annotations

import argparse
import io
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APPS = REPO / "apps"
OUT = APPS / "thumbnails"
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
    failed = []
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
                    page.wait_for_timeout(4000)          # let the rest of the page settle
                    shot = page.screenshot(clip={"x": 330, "y": 70, "width": 940,
                                                 "height": 490})
                    (OUT / f"{name}.png").write_bytes(_shrink(shot))
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
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
