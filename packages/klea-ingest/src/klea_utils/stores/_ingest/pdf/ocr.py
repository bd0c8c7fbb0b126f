"""Offline OCR for scanned PDFs: pypdfium2 renders each page, the ``tesseract`` CLI reads it.

Used when a PDF needs OCR and Docling's own OCR pipeline cannot run (its layout models are
not installed). The result is a :class:`~docling_core.types.doc.DoclingDocument` with one
text item per paragraph, so it chunks like any other conversion.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.pdf.ocr_orientation import read_upright
from klea_utils.stores._ingest.pdf.text_scripts import join_words
from klea_utils.stores.ingest_exceptions import ConversionError, OcrUnavailableError

__all__ = [
    "OCR_RENDER_SCALE",
    "TESSERACT_PACKAGE",
    "ocr_page_lines",
    "ocr_pdf",
    "tesseract_available",
]

OCR_RENDER_SCALE = 300 / 72
"""Render scale for OCR: 300 dpi, tesseract's preferred input resolution."""

TESSERACT_PACKAGE = "tesseract-ocr"
"""The system package that provides the ``tesseract`` command (Debian/Ubuntu name)."""

_PAGE_TIMEOUT_S = 300


def tesseract_available() -> bool:
    """Return whether the ``tesseract`` command is on ``PATH``."""
    return shutil.which("tesseract") is not None


def _read_page(image_path: Path, pdf_path: Path, page_no: int, language: str, *extra: str) -> str:
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    cmd = ["tesseract", str(image_path), "stdout", "-l", language, *extra]
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=_PAGE_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ConversionError(pdf_path, f"tesseract timed out on page {page_no}") from exc
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()[-1:] or ["no message"]
        raise ConversionError(pdf_path, f"tesseract failed on page {page_no}: {detail[0]}")
    return done.stdout


def _paragraphs(text: str) -> list[str]:
    blocks = [" ".join(block.split()) for block in text.split("\n\n")]
    return [b for b in blocks if b]


def ocr_pdf_pages(path: Path, *, language: str = "eng") -> list[list[str]]:
    """OCR every page of the PDF at ``path``; return each page's paragraphs.

    Raises:
        OcrUnavailableError: ``tesseract`` is not installed (names the package).
        ConversionError: The PDF cannot be rendered or tesseract fails on a page.
    """
    if not tesseract_available():
        raise OcrUnavailableError(
            path,
            "this PDF needs OCR (it has no text layer) but the `tesseract` command is not "
            f"installed; install the `{TESSERACT_PACKAGE}` package (e.g. `apt-get install "
            f"{TESSERACT_PACKAGE}`) or provide Docling's models via an artifacts path",
        )
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception as exc:  # pypdfium2 raises its own PdfiumError
        raise ConversionError(path, f"cannot open PDF for OCR: {exc}") from exc
    pages: list[list[str]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="klea-ocr-") as tmp:
            for index in range(len(pdf)):
                image = pdf[index].render(scale=OCR_RENDER_SCALE).to_pil().convert("L")
                image_path = Path(tmp) / f"page-{index + 1}.png"
                image.save(image_path)
                pages.append(_paragraphs(_read_page(image_path, path, index + 1, language)))
                image_path.unlink()
    finally:
        pdf.close()
    return pages


def ocr_pdf(path: Path, *, language: str = "eng") -> object:
    """OCR the PDF at ``path`` into a ``DoclingDocument`` (one text item per paragraph)."""
    from docling_core.types.doc.base import Size
    from docling_core.types.doc.document import DoclingDocument
    from docling_core.types.doc.labels import DocItemLabel

    pages = ocr_pdf_pages(path, language=language)
    doc = DoclingDocument(name=Path(path).stem)
    for page_no, paragraphs in enumerate(pages, start=1):
        doc.add_page(page_no=page_no, size=Size(width=595, height=842))
        for para in paragraphs:
            doc.add_text(label=DocItemLabel.TEXT, text=para, orig=para)
    return doc


_BIDI_MARKS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Direction marks tesseract puts around right-to-left words: no text of the page."""


def _tsv_lines(tsv: str, page_no: int, scale: float) -> list[Any]:
    """Group tesseract's TSV words into lines (PDF points, top-left origin)."""
    from klea_utils.stores._ingest.pdf.pdf_lines import Line

    groups: dict[tuple[int, int, int], list[tuple[str, float, float, float, float]]] = {}
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) < 12 or cols[0] != "5" or not _BIDI_MARKS.sub("", cols[11]).strip():
            continue
        block, par, line = int(cols[2]), int(cols[3]), int(cols[4])
        left, top, width, height = (float(c) / scale for c in cols[6:10])
        groups.setdefault((block, par, line), []).append(
            (_BIDI_MARKS.sub("", cols[11]).strip(), left, top, left + width, top + height)
        )
    lines = []
    for words in groups.values():
        heights = sorted(w[4] - w[2] for w in words)
        lines.append(
            Line(
                text=join_words([w[0] for w in words]),
                page_no=page_no,
                x0=min(w[1] for w in words),
                top=min(w[2] for w in words),
                x1=max(w[3] for w in words),
                bottom=max(w[4] for w in words),
                size=heights[len(heights) // 2],
            )
        )
    return lines


def ocr_page_lines(
    pdf: Any, index: int, path: Path, *, language: str | Callable[[Path], str] = "eng"
) -> Any:
    """OCR page ``index`` (0-based) of an open ``pypdfium2.PdfDocument`` into ``PageLines``.

    ``language`` is tesseract's ``-l`` argument (``rus+eng``), or a function of the
    rendered page image that returns it (it may look at the image: tesseract's script
    detection, see :mod:`klea_utils.stores._ingest.pdf.ocr_languages`).

    Raises:
        ConversionError: tesseract fails or times out on the page.
    """
    from klea_utils.stores._ingest.pdf.pdf_lines import PageLines

    page = pdf[index]
    try:  # rendered with the page's /Rotate applied; a sideways scan is turned by OSD
        image = page.render(scale=OCR_RENDER_SCALE).to_pil().convert("L")
    finally:
        page.close()
    with tempfile.TemporaryDirectory(prefix="klea-ocr-") as tmp:

        def read(image_path: Path) -> str:
            languages = language(image_path) if callable(language) else language
            return _read_page(image_path, path, index + 1, languages, "tsv")

        tsv, image = read_upright(image, Path(tmp), read)
    width, height = (side / OCR_RENDER_SCALE for side in image.size)
    lines = _tsv_lines(tsv, index + 1, OCR_RENDER_SCALE)
    text = "\n".join(ln.text for ln in lines)
    return PageLines(index + 1, width, height, lines, text, True, image_cover=1.0)
