"""Where the real-paper development set is, for the tests that read real pages.

CI always has ``shared/`` beside the clone: there a missing data set fails the tests (the
fixtures assert ``DATA``); elsewhere (a bare checkout of this repository alone) they skip.
"""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path

import pytest
from klea_utils.stores._ingest.chunking.chunking import MINILM_MAX_TOKENS, Chunker
from klea_utils.stores.packaged_minilm import packaged_minilm_path


def _shared_pdf_dir(data_set: str) -> Path | None:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / data_set / "pdf"
        if candidate.is_dir():
            return candidate
    return None


DATA = _shared_pdf_dir("realpapers-dev")
"""The folder of real PDFs (``shared/data/realpapers-dev/pdf``), ``None`` when absent."""

needs_data = pytest.mark.skipif(
    DATA is None and not os.environ.get("CI"), reason="shared/data/realpapers-dev not found"
)


WILD = _shared_pdf_dir("realpapers-wild")
"""The real-world PDFs (``shared/data/realpapers-wild/pdf``), ``None`` when absent."""

needs_wild = pytest.mark.skipif(
    WILD is None and not os.environ.get("CI"), reason="shared/data/realpapers-wild not found"
)


def wild_page(name: str, index: int, folder: Path, *, data: Path | None = None) -> Path:
    """Page ``index`` (0-based) of the wild file ``name`` (or of ``data``'s file ``name``),
    saved alone as a PDF in ``folder``: a small real fixture cut from a long file."""
    import pypdfium2 as pdfium

    origin = data or WILD
    assert origin is not None
    src = pdfium.PdfDocument(str(origin / name))
    out = pdfium.PdfDocument.new()
    try:
        out.import_pages(src, [index])
        path = folder / f"{Path(name).stem}-p{index + 1}.pdf"
        out.save(str(path))
    finally:
        out.close()
        src.close()
    return path


def _tesseract_available() -> bool:
    from klea_utils.stores._ingest.pdf.ocr import tesseract_available

    return tesseract_available()


# scripts/test installs tesseract: under CI a missing one fails these tests instead.
needs_tesseract = pytest.mark.skipif(
    not _tesseract_available() and not os.environ.get("CI"), reason="tesseract not installed"
)


@functools.cache
def minilm_chunker() -> Chunker:
    """The chunker a build uses by default (the packaged MiniLM's tokenizer and budget),
    made once: the tests that convert real pages cut them as a build does."""
    return Chunker(
        max_tokens=MINILM_MAX_TOKENS,
        merge_peers=True,
        tokenizer_model=str(packaged_minilm_path()),
        logger=logging.getLogger("test"),
    )
