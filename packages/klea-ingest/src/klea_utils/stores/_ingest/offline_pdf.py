"""The model-free PDF path: pdfium's text layer, checked page by page, OCR where unreadable.

Every page is read with pypdfium2 (:mod:`klea_utils.stores._ingest.pdf_lines`) and
assessed (:mod:`klea_utils.stores._ingest.text_quality`). A page without a text layer (a
scan) or with unreadable text (fonts without a Unicode map) is rendered and read by
tesseract instead, when OCR is on; OCR output replaces the page only when it reads better.
The structure is then rebuilt from the lines (:mod:`klea_utils.stores._ingest.pdf_structure`).

:class:`Recovery` says which pages were recovered and how. A document that stays mostly
unreadable raises :class:`~klea_utils.stores.ingest_exceptions.ConversionError` (the
file is reported as failed), never a document of gibberish.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.ocr import TESSERACT_PACKAGE, ocr_page_lines, tesseract_available
from klea_utils.stores._ingest.ocr_languages import DocumentLanguages
from klea_utils.stores._ingest.pdf_lines import PageLines, page_lines
from klea_utils.stores._ingest.pdf_structure import build_document
from klea_utils.stores._ingest.text_quality import PageQuality, assess
from klea_utils.stores.ingest_exceptions import ConversionError, OcrUnavailableError

__all__ = [
    "MAX_UNREADABLE_SHARE",
    "Recovery",
    "convert_pdf_offline",
    "unreadable_docling_pages",
]

MAX_UNREADABLE_SHARE = 0.5
"""A document with more than this share of its text pages still unreadable fails."""


def _ranges(pages: list[int]) -> str:
    out: list[str] = []
    for page in sorted(pages):
        if out and out[-1].split("-")[-1] == str(page - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{page}"
        else:
            out.append(str(page))
    return ", ".join(out)


@dataclass
class Recovery:
    """Per-page outcome of the readability check (1-based page numbers)."""

    ocr: list[int] = field(default_factory=list)
    """Pages read by OCR (no text layer, or an unreadable one)."""
    unreadable: list[int] = field(default_factory=list)
    """Pages whose text stayed unreadable (OCR off, unavailable, or no better)."""

    def describe(self) -> str:
        """One line for logs and reports, empty when every page read cleanly."""
        parts = []
        if self.ocr:
            parts.append(f"page(s) {_ranges(self.ocr)} recovered by OCR (tesseract)")
        if self.unreadable:
            parts.append(f"page(s) {_ranges(self.unreadable)} unreadable")
        return "; ".join(parts)

    def as_metadata(self) -> dict[str, list[int]]:
        return {k: v for k, v in (("ocr", self.ocr), ("unreadable", self.unreadable)) if v}


def _needs_ocr(page: PageLines, quality: PageQuality) -> bool:
    if quality.empty:
        return page.has_images
    return not quality.readable


def convert_pdf_offline(
    path: Path, *, do_ocr: bool, logger: logging.Logger | None = None
) -> tuple[Any, Recovery]:
    """Convert the PDF at ``path``; return ``(DoclingDocument, Recovery)``.

    Raises:
        ConversionError: The PDF cannot be read, or most of its pages stay unreadable
            (the message names the pages and what was tried).
    """
    import pypdfium2 as pdfium

    log = logger or logging.getLogger(__name__)
    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception as exc:  # pypdfium2 raises its own PdfiumError
        raise ConversionError(path, f"cannot open PDF: {exc}") from exc
    recovery = Recovery()
    pages: list[PageLines] = []
    text_pages = 0
    try:
        languages = DocumentLanguages(pdf, Path(path))
        for index in range(len(pdf)):
            page = page_lines(pdf, index)
            quality = assess(page.raw_text)
            if not quality.empty or page.has_images:
                text_pages += 1
            if _needs_ocr(page, quality):
                page = _recover(pdf, index, page, quality, do_ocr, recovery, languages)
            pages.append(page)
    finally:
        pdf.close()
    if recovery.unreadable and len(recovery.unreadable) > MAX_UNREADABLE_SHARE * max(1, text_pages):
        if do_ocr and not tesseract_available():
            raise OcrUnavailableError(
                path,
                f"page(s) {_ranges(recovery.unreadable)} need OCR (no text layer, or "
                "unreadable text) but the `tesseract` command is not installed; install the "
                f"`{TESSERACT_PACKAGE}` package (e.g. `apt-get install {TESSERACT_PACKAGE}`) "
                "or provide Docling's models via an artifacts path",
            )
        how = (
            "OCR is off"
            if not do_ocr
            else "tesseract is not installed"
            if not tesseract_available()
            else "OCR did not read them either"
        )
        raise ConversionError(
            path,
            f"unreadable text on page(s) {_ranges(recovery.unreadable)} of {len(pages)} "
            f"(no text layer, or fonts without a Unicode map) and {how}",
        )
    if recovery.describe():
        log.warning("%s: %s", Path(path).name, recovery.describe())
    return build_document(Path(path).stem, pages), recovery


def _recover(
    pdf: Any,
    index: int,
    page: PageLines,
    quality: PageQuality,
    do_ocr: bool,
    recovery: Recovery,
    languages: DocumentLanguages,
) -> PageLines:
    if quality.empty and not do_ocr:
        return page  # a scan with OCR off: no text, as asked (zero chunks, not gibberish)
    if not do_ocr or not tesseract_available():
        recovery.unreadable.append(index + 1)
        return page
    layer = page.raw_text if quality.legible else ""
    chooser = languages.chooser(layer, index + 1)
    ocr: PageLines = ocr_page_lines(pdf, index, languages.path, language=chooser)
    ocr_text = "\n".join(line.text for line in ocr.lines)
    ocr_quality = assess(ocr_text)
    if quality.legible and not _covers(ocr_text, page.raw_text):
        return page  # a short text layer (a slide's title) that OCR misread: keep it
    if ocr_quality.legible and (quality.empty or ocr_quality.word_share > quality.word_share):
        recovery.ocr.append(index + 1)
        return ocr
    if quality.empty and ocr_quality.empty:
        return page  # a nearly blank scan ("pdf.js" alone): its few characters, not unreadable
    recovery.unreadable.append(index + 1)
    return page


def _covers(ocr_text: str, layer_text: str) -> bool:
    """Whether OCR read at least half of the letters of a legible text layer."""
    layer = Counter(c for c in layer_text.casefold() if c.isalpha())
    if not layer:
        return True
    found = Counter(c for c in ocr_text.casefold() if c.isalpha())
    return sum((layer & found).values()) >= 0.5 * sum(layer.values())


def unreadable_docling_pages(document: Any, path: Path) -> list[int]:
    """Pages whose text in a Docling ``document`` is unreadable while pdfium's reads.

    Docling's own PDF parser turns some fonts (Type 3 bitmap fonts without a Unicode map)
    into dingbat strings that pdfium decodes; such pages are found by comparing each
    page's text in ``document`` with pdfium's text layer of the same page.
    """
    import pypdfium2 as pdfium

    texts: dict[int, list[str]] = {}
    for item, _level in document.iterate_items():
        text = getattr(item, "text", None)
        for prov in getattr(item, "prov", None) or []:
            if isinstance(text, str):
                texts.setdefault(prov.page_no, []).append(text)
    bad: list[int] = []
    pdf = pdfium.PdfDocument(str(path))
    try:
        for page_no, parts in sorted(texts.items()):
            ours = assess("\n".join(parts))
            if ours.empty or ours.readable or not 1 <= page_no <= len(pdf):
                continue
            page = pdf[page_no - 1]
            textpage = page.get_textpage()
            try:
                theirs = assess(str(textpage.get_text_range()))
            finally:
                textpage.close()
                page.close()
            if theirs.readable:
                bad.append(page_no)
    finally:
        pdf.close()
    return bad
