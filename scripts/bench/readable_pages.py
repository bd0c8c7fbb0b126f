"""Which pages change their OCR verdict when the look-alike rule of ``text_quality`` changes.

Reads the text layer of every page of the development and real-world PDFs (pdfium's page
text, a close stand-in for the converter's ``page_lines``), assesses it with today's
:func:`klea_utils.stores._ingest.pdf.text_quality.assess` and with the look-alike pattern
before issue 37's continuation (``BEFORE``, set in the same process), and prints every page
whose verdict (readable or sent to OCR) differs, with the counts and the time taken::

    nice -n 5 uv run --frozen python scripts/bench/readable_pages.py [--set dev|wild|both]
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import pypdfium2 as pdfium
from klea_utils.stores._ingest.pdf import text_quality

ROOT = Path(__file__).resolve().parents[2]
SETS = {
    "dev": ROOT.parent / "shared" / "data" / "realpapers-dev" / "pdf",
    "wild": ROOT.parent / "shared" / "data" / "realpapers-wild" / "pdf",
}
BEFORE = re.compile(r"[^\W\d_]\d+[^\W\d_]|[A-Z]{2}[a-z]{2}")
"""``text_quality._LOOKALIKE`` before the continuation of issue 37."""


def verdict(text: str, pattern: re.Pattern[str]) -> bool:
    text_quality._LOOKALIKE = pattern  # type: ignore[attr-defined]
    text_quality._vote.cache_clear()
    return text_quality.assess(text).readable


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=["dev", "wild", "both"], default="both")
    args = parser.parse_args()
    now = text_quality._LOOKALIKE  # type: ignore[attr-defined]
    folders = list(SETS.values()) if args.set == "both" else [SETS[args.set]]
    wall, cpu = time.perf_counter(), time.process_time()
    pages = changed = readable_before = readable_now = 0
    for folder in folders:
        for path in sorted(folder.glob("*.pdf")):
            try:
                doc = pdfium.PdfDocument(str(path))
            except pdfium.PdfiumError:
                continue
            for index in range(len(doc)):
                try:
                    text = doc[index].get_textpage().get_text_range()
                except pdfium.PdfiumError:
                    continue
                before, after = verdict(text, BEFORE), verdict(text, now)
                pages += 1
                readable_before += before
                readable_now += after
                if before != after:
                    changed += 1
                    state = "readable -> OCR" if before else "OCR -> readable"
                    print(f"{path.name} p. {index + 1}: {state}")
            doc.close()
    print(
        f"{pages} pages: readable {readable_before} before, {readable_now} now; "
        f"{changed} changed; {time.perf_counter() - wall:.0f} s wall, "
        f"{time.process_time() - cpu:.0f} s CPU"
    )


if __name__ == "__main__":
    main()
