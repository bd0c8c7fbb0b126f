"""The model-free PDF path: pdfium's text layer, checked page by page, OCR where unreadable.

Every page is read with pypdfium2 (:mod:`klea_utils.stores._ingest.pdf.pdf_lines`) and
assessed (:mod:`klea_utils.stores._ingest.pdf.text_quality`). A page without a text layer (a
scan) or with unreadable text (fonts without a Unicode map) is rendered and read by
tesseract instead, when OCR is on; OCR output replaces the page only when it reads better.
The structure is then rebuilt from the lines (:mod:`klea_utils.stores._ingest.pdf.pdf_structure`).

:class:`Recovery` says which pages were recovered and how. A page pdfium refuses (a damaged
page tree or page object) is read by pypdf instead
(:mod:`klea_utils.stores._ingest.pdf.pdf_fallback`), as is every page of a file pdfium cannot
open; a page neither reads is named in the recovery note, never dropped silently. A
document that stays mostly unreadable raises
:class:`~klea_utils.stores.ingest_exceptions.ConversionError` (the file is reported as
failed, with a reason of :mod:`klea_utils.stores._ingest.convert.not_stored`), never a document of
gibberish.
"""

from __future__ import annotations

import copy
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.convert.not_stored import (
    CANNOT_OPEN,
    NO_READABLE_TEXT,
    OCR_NOT_INSTALLED,
    page_ranges,
    reason,
)
from klea_utils.stores._ingest.pdf.ocr import TESSERACT_PACKAGE, ocr_page_lines, tesseract_available
from klea_utils.stores._ingest.pdf.ocr_languages import DocumentLanguages
from klea_utils.stores._ingest.pdf.page_furniture import section_titles
from klea_utils.stores._ingest.pdf.page_labels import printed_page_numbers
from klea_utils.stores._ingest.pdf.pdf_fallback import SecondReader
from klea_utils.stores._ingest.pdf.pdf_lines import PageLines, page_lines
from klea_utils.stores._ingest.pdf.pdf_structure import build_document
from klea_utils.stores._ingest.pdf.text_quality import PageQuality, assess
from klea_utils.stores.ingest_exceptions import ConversionError, OcrUnavailableError

__all__ = [
    "MAX_UNREADABLE_SHARE",
    "Recovery",
    "convert_pdf_offline",
    "unreadable_docling_pages",
]

MAX_UNREADABLE_SHARE = 0.5
"""A document with more than this share of its text pages still unreadable fails."""


_ranges = page_ranges


HEAD_PAGES = 6
"""Pages whose lines as read are kept for the metadata step (page one and the five after it,
which :mod:`~klea_utils.stores._ingest.biblio.title_layout` reads)."""


@dataclass
class Recovery:
    """Per-page outcome of the readability check (1-based page numbers)."""

    ocr: list[int] = field(default_factory=list)
    """Pages read by OCR (no text layer, or an unreadable one)."""
    unreadable: list[int] = field(default_factory=list)
    """Pages whose text stayed unreadable (OCR off, unavailable, or no better)."""
    second_reader: list[int] = field(default_factory=list)
    """Pages pdfium refused and pypdf read (text only)."""
    failed: list[int] = field(default_factory=list)
    """Pages no reader could load: they yield nothing."""
    failure: str = ""
    """Why the last of the ``failed`` pages could not be loaded (both readers' errors)."""
    pages: int = 0
    """Pages in the document."""
    text_pages: list[int] = field(default_factory=list)
    """Pages whose text layer holds text (readable or not)."""
    image_pages: list[int] = field(default_factory=list)
    """Pages that draw an image."""
    printed: dict[int, str] = field(default_factory=dict)
    """The page number printed in each page's running head or foot, where one was found."""
    section_titles: dict[int, str] = field(default_factory=dict)
    """The running head that titles the part of the document each page is in, where one
    does (:func:`~klea_utils.stores._ingest.pdf.page_furniture.section_titles`)."""
    head_lines: list[PageLines | None] = field(default_factory=list)
    """pdfium's lines of the first :data:`HEAD_PAGES` pages as :func:`page_lines` read them,
    before OCR or the structure step changed them (``None`` for a page pdfium could not
    load): the metadata step reads them instead of opening the file again."""

    def describe(self) -> str:
        """One line for logs and reports, empty when every page read cleanly."""
        parts = []
        if self.ocr:
            parts.append(f"page(s) {_ranges(self.ocr)} recovered by OCR (tesseract)")
        if self.unreadable:
            parts.append(f"page(s) {_ranges(self.unreadable)} unreadable")
        if self.second_reader:
            parts.append(f"page(s) {_ranges(self.second_reader)} read by pypdf (pdfium refused)")
        if self.failed:
            parts.append(f"page(s) {_ranges(self.failed)} could not be read ({self.failure})")
        return "; ".join(parts)

    def as_metadata(self) -> dict[str, list[int]]:
        pairs = (
            ("ocr", self.ocr),
            ("unreadable", self.unreadable),
            ("second_reader", self.second_reader),
            ("failed", self.failed),
        )
        return {k: v for k, v in pairs if v}


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
    second = SecondReader(Path(path), log)
    pdf: Any = None
    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception as exc:  # pypdfium2 raises its own PdfiumError
        if not second.page_count:
            raise ConversionError(
                path, reason(CANNOT_OPEN, f"pdfium: {exc}; {second.error}")
            ) from exc
        log.info("%s: pdfium cannot open it (%s); reading it with pypdf", Path(path).name, exc)
    recovery = Recovery(pages=len(pdf) if pdf is not None else second.page_count)
    pages: list[PageLines] = []
    try:
        languages = DocumentLanguages(pdf, Path(path)) if pdf is not None else None
        for index in range(recovery.pages):
            page = _load_page(pdf, index, second, recovery)
            if index < HEAD_PAGES:
                recovery.head_lines.append(_as_read(page, index, recovery))
            if page is None:
                continue  # named in recovery.failed
            quality = assess(page.raw_text)
            if not quality.empty:
                recovery.text_pages.append(index + 1)
            if page.has_images:
                recovery.image_pages.append(index + 1)
            if _needs_ocr(page, quality):
                if languages is None or index + 1 in recovery.second_reader:
                    recovery.unreadable.append(index + 1)  # pdfium cannot render it for OCR
                else:
                    page = _recover(pdf, index, page, quality, do_ocr, recovery, languages)
            pages.append(page)
    finally:
        if pdf is not None:
            pdf.close()
    if recovery.failed and len(recovery.failed) == recovery.pages:
        raise ConversionError(
            path,
            reason(
                CANNOT_OPEN,
                f"none of its {recovery.pages} page(s) could be loaded ({recovery.failure})",
            ),
        )
    text_pages = len(set(recovery.text_pages) | set(recovery.image_pages))
    if recovery.unreadable and len(recovery.unreadable) > MAX_UNREADABLE_SHARE * max(1, text_pages):
        if do_ocr and not tesseract_available():
            raise OcrUnavailableError(
                path,
                reason(
                    OCR_NOT_INSTALLED,
                    f"page(s) {_ranges(recovery.unreadable)} need OCR (no text layer, or "
                    "unreadable text) but the `tesseract` command is not installed; install "
                    f"the `{TESSERACT_PACKAGE}` package (e.g. `apt-get install "
                    f"{TESSERACT_PACKAGE}`) or provide Docling's models via an artifacts path",
                ),
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
            reason(
                NO_READABLE_TEXT,
                f"unreadable text on page(s) {_ranges(recovery.unreadable)} of "
                f"{recovery.pages} (no text layer, or fonts without a Unicode map) and {how}",
            ),
        )
    if recovery.describe():
        log.warning("%s: %s", Path(path).name, recovery.describe())
    document = build_document(Path(path).stem, pages)  # drops the running lines
    recovery.section_titles = section_titles(pages)
    recovery.printed = printed_page_numbers(
        {page.page_no: page.folios for page in pages},
        {page.page_no: page.bare_folios for page in pages},
    )
    return document, recovery


def _as_read(page: PageLines | None, index: int, recovery: Recovery) -> PageLines | None:
    """A copy of ``page``'s lines as pdfium read them (the structure step merges and drops
    lines in place), or ``None`` for a page pdfium could not load."""
    if page is None or index + 1 in recovery.second_reader:
        return None
    lines = [copy.copy(line) for line in page.lines]
    return PageLines(page.page_no, page.width, page.height, lines, raw_text="")


def _load_page(pdf: Any, index: int, second: SecondReader, recovery: Recovery) -> PageLines | None:
    """Page ``index`` read by pdfium, else by pypdf; ``None`` (named in ``recovery``) if
    neither can load it."""
    problem = "pdfium cannot open the file"
    if pdf is not None:
        try:
            return page_lines(pdf, index)
        except Exception as exc:  # PdfiumError: Failed to load page (a damaged page tree)
            problem = f"pdfium: {exc}"
    page = second.page_lines(index)
    if page is not None:
        recovery.second_reader.append(index + 1)
        return page
    recovery.failed.append(index + 1)
    recovery.failure = f"{problem}; {second.error}"
    return None


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
