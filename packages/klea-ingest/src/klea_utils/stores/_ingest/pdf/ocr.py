"""Offline OCR of a PDF page: pypdfium2 renders it (in the page renderer's own process,
:mod:`klea_utils.stores._ingest.pdf.page_renderer`), the ``tesseract`` CLI reads it.

Used by the model-free PDF path (:mod:`klea_utils.stores._ingest.pdf.offline_pdf`) for the
pages whose text layer is missing or unreadable: :func:`ocr_page_lines` returns the page's
lines with their boxes, so an OCRed page goes through the same structure rebuild as any
other. Whether OCR can run at all is :func:`tesseract_available`.
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
from klea_utils.stores._ingest.pdf.page_renderer import render_page
from klea_utils.stores._ingest.pdf.text_scripts import join_words
from klea_utils.stores.ingest_exceptions import ConversionError

__all__ = [
    "OCR_RENDER_SCALE",
    "TESSERACT_PACKAGE",
    "ocr_page_lines",
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

    ``path`` is the file ``pdf`` was opened from: the renderer's process opens it again.

    Raises:
        ConversionError: The page cannot be rendered, or tesseract fails or times out on it.
    """
    from klea_utils.stores._ingest.pdf.pdf_frames import Frame
    from klea_utils.stores._ingest.pdf.pdf_lines import PageLines

    # rendered with the page's /Rotate applied (a sideways scan is turned by OSD), in the
    # renderer's process: a render here would change the character boxes read after it
    image = render_page(path, index, OCR_RENDER_SCALE)
    page = pdf[index]
    try:
        rotation, box = page.get_rotation(), page.get_bbox()
    finally:
        page.close()
    with tempfile.TemporaryDirectory(prefix="klea-ocr-") as tmp:

        def read(image_path: Path) -> str:
            languages = language(image_path) if callable(language) else language
            return _read_page(image_path, path, index + 1, languages, "tsv")

        tsv, image, turn = read_upright(image, Path(tmp), read)
    width, height = (side / OCR_RENDER_SCALE for side in image.size)
    lines = _tsv_lines(tsv, index + 1, OCR_RENDER_SCALE)
    text = "\n".join(ln.text for ln in lines)
    # the image shows user space turned clockwise by /Rotate, then by OSD's turn: the
    # frame of that many quarter turns maps the word boxes back to user space
    frame = Frame(((rotation + turn) // 90) % 4, *box)
    return PageLines(index + 1, width, height, lines, text, True, image_cover=1.0, frame=frame)
