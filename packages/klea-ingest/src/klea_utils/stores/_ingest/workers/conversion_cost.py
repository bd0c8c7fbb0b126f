"""How long a file will take to convert, guessed cheaply, so workers are dealt even work.

A page that needs OCR costs tesseract seconds; a page read from its text layer costs
hundredths. Dealt by bytes, one worker got the scans and converted alone at the end of a
build while the other cores idled (issue 40: 48-79 s of one tesseract running alone). So a
PDF's cost counts its pages, with the pages that will need OCR weighed as such: a sample of
up to :data:`PROBE_PAGES` pages, evenly spread, is checked the way the conversion checks
them (no text layer and a scan's image over the page, or a text layer that does not read)
and the share found is applied to all its pages. The probe reads text layers only; it never
renders a page. Other files (and a PDF pdfium cannot open) cost their bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "BYTES_PER_SECOND",
    "OCR_PAGE_S",
    "PROBE_PAGES",
    "TEXT_PAGE_S",
    "conversion_cost",
    "ocr_share",
]

PROBE_PAGES = 4
"""Pages of a PDF looked at to guess its share of pages that need OCR."""

TEXT_PAGE_S = 0.3
"""CPU seconds a page read from its text layer costs (structure and chunking included)."""

OCR_PAGE_S = 4.0
"""CPU seconds a page read by OCR costs (a 300-dpi render and tesseract's reading)."""

BYTES_PER_SECOND = 80_000.0
"""Bytes of a file that is no PDF converted per CPU second (a rough mean of text PDFs)."""


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
    try:
        size = path.stat().st_size
    except OSError:
        return 0.0
    if path.suffix.lower() != ".pdf":
        return size / BYTES_PER_SECOND
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception:  # PdfiumError: damaged or encrypted; pypdf will try it
        return size / BYTES_PER_SECOND
    try:
        pages = len(pdf)
        share = ocr_share(pdf)
    except Exception:  # a page pdfium refuses: guess from the bytes
        return size / BYTES_PER_SECOND
    finally:
        pdf.close()
    return pages * (share * OCR_PAGE_S + (1 - share) * TEXT_PAGE_S)
