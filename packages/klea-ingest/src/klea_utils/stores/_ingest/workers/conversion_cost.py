"""How long a file will take to convert, guessed cheaply, so workers are dealt even work.

A page that needs OCR costs tesseract seconds; a page read from its text layer costs
hundredths. Dealt by bytes, one worker got the scans and converted alone at the end of a
build while the other cores idled (issue 40: 48-79 s of one tesseract running alone). So a
PDF's cost counts its pages, with the pages that will need OCR weighed as such: a sample of
up to :data:`PROBE_PAGES` pages, evenly spread, is checked the way the conversion checks
them (no text layer and a scan's image over the page, or a text layer that does not read)
and the share found is applied to all its pages. The probe reads text layers only; it never
renders a page. Other files (and a PDF pdfium cannot open) cost their bytes.

:func:`probed_costs` runs the probes in a child process, as a conversion worker reads the
files: a damaged or hostile PDF that hangs pdfium or eats memory costs the build its
dealing by pages (after :data:`PROBE_TIMEOUT_S`, every file costs its bytes), never the
build process itself.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "BYTES_PER_SECOND",
    "OCR_PAGE_S",
    "PROBE_PAGES",
    "PROBE_TIMEOUT_S",
    "TEXT_PAGE_S",
    "conversion_cost",
    "ocr_share",
    "probed_costs",
]

PROBE_PAGES = 4
"""Pages of a PDF looked at to guess its share of pages that need OCR."""

TEXT_PAGE_S = 0.3
"""CPU seconds a page read from its text layer costs (structure and chunking included)."""

OCR_PAGE_S = 4.0
"""CPU seconds a page read by OCR costs (a 300-dpi render and tesseract's reading)."""

BYTES_PER_SECOND = 80_000.0
"""Bytes of a file that is no PDF converted per CPU second (a rough mean of text PDFs)."""

PROBE_TIMEOUT_S = 60.0
"""The longest the probes of one build may take (76 real-world files take about 1 s)."""


def ocr_share(pdf: Any) -> float:
    """Share (0-1) of the probed pages of an open ``pypdfium2.PdfDocument`` that need OCR."""
    import pypdfium2.raw as raw
    from klea_utils.stores._ingest.pdf.pdf_images import MIN_SCAN_COVER, image_cover
    from klea_utils.stores._ingest.pdf.text_quality import assess

    pages = len(pdf)
    if not pages:
        return 0.0
    picked = sorted({round(i * (pages - 1) / max(PROBE_PAGES - 1, 1)) for i in range(PROBE_PAGES)})
    needs = 0
    for index in picked:
        page = pdf[index]
        try:
            textpage = page.get_textpage()
            try:
                quality = assess(str(textpage.get_text_range()))
            finally:
                textpage.close()
            if quality.empty:
                needs += image_cover(raw, page.raw, tuple(page.get_bbox())) >= MIN_SCAN_COVER
            else:
                needs += not quality.readable
        finally:
            page.close()
    return needs / len(picked)


def conversion_cost(path: str | Path) -> float:
    """Estimated CPU seconds to convert the file at ``path`` (never raises)."""
    path = Path(path)
    by_bytes = _byte_cost(path)
    if path.suffix.lower() != ".pdf" or not by_bytes:  # no PDF, or no file to read
        return by_bytes
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception:  # PdfiumError: damaged or encrypted; pypdf will try it
        return by_bytes
    try:
        pages = len(pdf)
        share = ocr_share(pdf)
    except Exception:  # a page pdfium refuses: guess from the bytes
        return by_bytes
    finally:
        pdf.close()
    return pages * (share * OCR_PAGE_S + (1 - share) * TEXT_PAGE_S)


def _byte_cost(path: str | Path) -> float:
    """The cost of a file guessed from its bytes (0 when it cannot be read)."""
    try:
        return Path(path).stat().st_size / BYTES_PER_SECOND
    except OSError:
        return 0.0


def probed_costs(paths: Sequence[str | Path], timeout_s: float = PROBE_TIMEOUT_S) -> list[float]:
    """:func:`conversion_cost` of each of ``paths``, probed in a child process; each file's
    bytes instead when the child fails or takes over ``timeout_s`` (it is then stopped)."""
    if not paths:
        return []
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        try:
            return list(pool.map_async(conversion_cost, paths).get(timeout_s))
        except Exception:  # a timeout, or a child that died: deal by bytes
            return [_byte_cost(path) for path in paths]
