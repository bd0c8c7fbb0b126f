"""Screenshots of the klea-serve search page on the demo stores, for docs/guides/serve.md.

Run after ``scripts/demo`` (which builds the stores in ``.demo``)::

    uv run --frozen python scripts/serve_screenshots.py [--workdir .demo]

Starts ``klea-serve`` on a free port, drives Debian's chromium with Playwright at desktop
and phone widths, writes PNGs into docs/assets/ and stops the server.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "docs" / "assets"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(workdir: Path, port: int) -> subprocess.Popen[bytes]:
    command = [
        str(Path(sys.executable).with_name("klea-serve")),
        "--stores-config",
        str(workdir / "stores.json"),
        "--port",
        str(port),
    ]
    server = subprocess.Popen(command)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2):
                return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit("klea-serve exited before it answered") from None
            time.sleep(1)
    server.terminate()
    raise SystemExit("klea-serve did not answer within 300 s")


def shoot(url: str) -> None:
    from playwright.sync_api import sync_playwright

    ASSETS.mkdir(parents=True, exist_ok=True)
    query = "?q=How+do+chaperones+help+proteins+fold+under+heat+stress%3F"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        for name, width, height in (("desktop", 1280, 1000), ("phone", 390, 844)):
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(url + "/" + query)
            page.wait_for_selector("#hits .hit")
            if name == "desktop":
                page.wait_for_selector("#graph-panel:not([hidden]) circle", timeout=30_000)
            page.screenshot(path=str(ASSETS / f"serve-{name}.png"), full_page=name == "desktop")
            page.close()
        page = browser.new_page(viewport={"width": 1280, "height": 700})
        page.goto(url + "/?q=heat+AND+(shock+OR+chaperone")
        page.wait_for_selector("#query-error:not([hidden])")
        page.screenshot(path=str(ASSETS / "serve-error.png"))
        page.goto(url + "/?doc=protein-folding-scanned.pdf")
        page.wait_for_selector("#paper:not([hidden]) .passages li")
        page.screenshot(path=str(ASSETS / "serve-paper.png"))
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=ROOT / ".demo")
    args = parser.parse_args()
    port = free_port()
    server = start_server(args.workdir.resolve(), port)
    try:
        shoot(f"http://127.0.0.1:{port}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"screenshots in {ASSETS.relative_to(ROOT)}/serve-*.png")


if __name__ == "__main__":
    main()
