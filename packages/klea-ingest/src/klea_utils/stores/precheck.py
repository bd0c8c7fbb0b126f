"""Pre-check source directories to decide whether OCR is needed per PDF."""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from klea_utils.stores.source_files import CACHE_DIR_NAME

__all__ = [
    "IMAGE_PAGE_CHAR_THRESHOLD",
    "IMAGE_PAGE_FRACTION",
    "NO_OCR_DIR_NAME",
    "NO_PAGES_NEEDS_OCR",
    "OCR_DIR_NAME",
    "PageStats",
    "PdfClassification",
    "classify_directory",
    "classify_pdf",
    "format_precheck_report",
    "organise_directory",
]

logger = logging.getLogger(__name__)

IMAGE_PAGE_CHAR_THRESHOLD = 50
"""A page with fewer non-whitespace characters than this is an image page (scan/figure)."""

IMAGE_PAGE_FRACTION = 0.5
"""A PDF needs OCR when at least this fraction of its pages are image pages."""

NO_OCR_DIR_NAME = "no-ocr"
"""Output directory for text-based PDFs (and all non-PDF files)."""

NO_PAGES_NEEDS_OCR = True
"""A PDF with no readable pages (e.g. zero pages) is conservatively classified as needing OCR."""

OCR_DIR_NAME = "ocr"
"""Output directory for scanned/image PDFs (OCR required)."""

_SKIP_DIR_NAMES = frozenset({CACHE_DIR_NAME, OCR_DIR_NAME, NO_OCR_DIR_NAME})


@dataclass(frozen=True)
class PageStats:
    """Per-PDF page text statistics for the pre-check report.

    Attributes:
        pages: Number of pages read from the PDF.
        image_pages: Number of pages that fell below ``IMAGE_PAGE_CHAR_THRESHOLD``.
        total_chars: Total non-whitespace characters extracted across all pages.
    """

    pages: int = 0
    image_pages: int = 0
    total_chars: int = 0

    def __post_init__(self) -> None:
        for name in ("pages", "image_pages", "total_chars"):
            if getattr(self, name) < 0:
                raise ValueError(f"PageStats.{name} must be >= 0, got {getattr(self, name)}")
        if self.image_pages > self.pages:
            raise ValueError(
                f"PageStats.image_pages ({self.image_pages}) exceeds pages ({self.pages})"
            )


@dataclass(frozen=True)
class PdfClassification:
    """The OCR decision and statistics for a single PDF."""

    path: Path
    needs_ocr: bool
    stats: PageStats


def _decide(stats: PageStats) -> bool:
    if stats.pages == 0:
        return NO_PAGES_NEEDS_OCR
    return stats.image_pages >= IMAGE_PAGE_FRACTION * stats.pages


def classify_pdf(path: Path) -> PdfClassification:
    """Decide whether a PDF needs OCR, based on its embedded text layer.

    Reads the PDF with pypdfium2 and counts non-whitespace characters per page. A page
    under ``IMAGE_PAGE_CHAR_THRESHOLD`` characters is an image page; a PDF with at least
    ``IMAGE_PAGE_FRACTION`` image pages needs OCR. A PDF that cannot be read (missing,
    corrupt, or pypdfium2 unavailable) is conservatively classified as needing OCR.

    Args:
        path: Path to the PDF file.

    Returns:
        A ``PdfClassification`` with the decision and stats.
    """
    path = Path(path)
    try:
        import pypdfium2 as pdfium

        pdf = pdfium.PdfDocument(str(path))
    except Exception as exc:
        logger.warning("Cannot read %s (%s); classifying it as needing OCR", path, exc)
        return PdfClassification(path, True, PageStats())
    pages = image_pages = total = 0
    try:
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            try:
                chars = sum(not c.isspace() for c in textpage.get_text_range())
            finally:
                textpage.close()
                page.close()
            pages += 1
            total += chars
            image_pages += chars < IMAGE_PAGE_CHAR_THRESHOLD
    except Exception as exc:
        logger.warning("Error reading %s (%s); classifying it as needing OCR", path, exc)
        return PdfClassification(path, True, PageStats(pages, image_pages, total))
    finally:
        pdf.close()
    stats = PageStats(pages=pages, image_pages=image_pages, total_chars=total)
    return PdfClassification(path, _decide(stats), stats)


def _iter_files(source_dir: Path, pattern: str) -> list[Path]:
    out = []
    for path in sorted(source_dir.rglob(pattern)):
        rel = path.relative_to(source_dir).parts[:-1]
        if path.is_file() and not _SKIP_DIR_NAMES.intersection(rel):
            out.append(path)
    return out


def classify_directory(source_dir: Path) -> dict[Path, PdfClassification]:
    """Classify every PDF under ``source_dir``.

    Recursively walks ``**/*.pdf``, skipping the chunk cache and the ocr/no-ocr organise
    output directories. Logs progress at INFO roughly every 10% of PDFs (every file for
    small corpora).

    Args:
        source_dir: Directory to walk recursively.

    Returns:
        Mapping of PDF path to its ``PdfClassification``.
    """
    source_dir = Path(source_dir)
    if not source_dir.is_dir():
        raise NotADirectoryError(f"source directory {source_dir} does not exist or is not a folder")
    pdfs = [p for p in _iter_files(source_dir, "*") if p.suffix.lower() == ".pdf"]
    step = max(1, len(pdfs) // 10)
    result: dict[Path, PdfClassification] = {}
    for done, path in enumerate(pdfs, start=1):
        result[path] = classify_pdf(path)
        if done % step == 0 or done == len(pdfs):
            logger.info(
                "Pre-check: %d/%d PDFs classified (%d%%)", done, len(pdfs), 100 * done // len(pdfs)
            )
    return result


def format_precheck_report(classifications: dict[Path, PdfClassification]) -> str:
    """Render a ``classify_directory()`` result as compact text.

    Args:
        classifications: Mapping from ``classify_directory()``.

    Returns:
        Multi-line summary of the classification outcome.
    """
    ocr = sorted(p for p, c in classifications.items() if c.needs_ocr)
    lines = [
        f"PDFs checked: {len(classifications)}",
        f"  text-based (no OCR needed): {len(classifications) - len(ocr)}",
        f"  needing OCR: {len(ocr)}",
    ]
    for path in ocr:
        s = classifications[path].stats
        lines.append(
            f"    {path}: {s.image_pages}/{s.pages} image pages, {s.total_chars} characters"
        )
    return "\n".join(lines)


def organise_directory(
    source_dir: Path, classifications: dict[Path, PdfClassification] | None = None
) -> tuple[Path, Path]:
    """Copy classified files into ``ocr/`` and ``no-ocr/`` subdirectories.

    Copies (never moves) files so the original directory is left untouched. Scanned PDFs
    go to ``ocr/``; text-based PDFs and every non-PDF file, dotfiles included, go to
    ``no-ocr/``. Each file
    keeps its path relative to ``source_dir``, so files with the same name in different
    folders never overwrite each other. Re-running is idempotent: output directories are
    reused and files overwritten.

    Args:
        source_dir: Directory containing the source documents.
        classifications: Optional precomputed classifications; computed if not given.

    Returns:
        ``(ocr_dir, no_ocr_dir)`` the two output directory paths.
    """
    source_dir = Path(source_dir)
    if classifications is None:
        classifications = classify_directory(source_dir)
    ocr_dir, no_ocr_dir = source_dir / OCR_DIR_NAME, source_dir / NO_OCR_DIR_NAME
    ocr_dir.mkdir(exist_ok=True)
    no_ocr_dir.mkdir(exist_ok=True)
    for path in _iter_files(source_dir, "*"):
        found = classifications.get(path)
        needs_ocr = found.needs_ocr if found is not None else False
        if path.suffix.lower() == ".pdf" and found is None:
            needs_ocr = classify_pdf(path).needs_ocr
        target = (ocr_dir if needs_ocr else no_ocr_dir) / path.relative_to(source_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return ocr_dir, no_ocr_dir
