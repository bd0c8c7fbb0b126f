"""The second PDF reader: pypdf, for the pages (or whole files) that pdfium refuses.

pdfium reads nearly every PDF, but a damaged page tree or page object can make it refuse
a page (``PdfiumError: Failed to load page.``) or the whole file. pypdf parses leniently
(it rebuilds a broken cross-reference table, walks what it can of the page tree) and reads
the text of such pages, without geometry: each of its text lines becomes a
:class:`~klea_utils.stores._ingest.pdf.pdf_lines.Line` of one nominal size, stacked down the
page, so the structure builder sees plain body text. Such a page keeps its box in user
space (``PageLines.user_box``, pypdf's crop box as pdfium reports a page's box), so each
chunk of it gets the whole page as its region: the place is the page, not a line. A page
neither reader can load yields nothing; the caller names it in the file's recovery note.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.pdf.pdf_lines import Line, PageLines

__all__ = ["NOMINAL_SIZE", "SecondReader", "text_page_lines"]

NOMINAL_SIZE = 10.0
"""Font size given to the lines of a page read by pypdf (it has no geometry)."""

_LEADING = 1.2 * NOMINAL_SIZE
_MARGIN = 72.0
_CHAR_WIDTH = 0.5 * NOMINAL_SIZE
_LETTER = (612.0, 792.0)


def text_page_lines(
    text: str,
    page_no: int,
    width: float,
    height: float,
    user_box: tuple[float, float, float, float] | None = None,
) -> PageLines:
    """``PageLines`` for plain ``text``: one line per non-blank line, top to bottom;
    ``user_box`` is the page's box in user space (``None``: ``0, 0, width, height``)."""
    lines: list[Line] = []
    top = _MARGIN
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line:
            top += _LEADING  # a blank line keeps paragraphs apart
            continue
        x1 = min(width, _MARGIN + _CHAR_WIDTH * len(line))
        lines.append(Line(line, page_no, _MARGIN, top, x1, top + NOMINAL_SIZE, NOMINAL_SIZE))
        top += _LEADING
    box = user_box if user_box is not None else (0.0, 0.0, width, height)
    return PageLines(page_no, width, max(height, top + _MARGIN), lines, text, user_box=box)


class SecondReader:
    """pypdf on one file, opened on first use; remembers why it could not read it.

    Args:
        path: The PDF.
        logger: Receives pypdf's complaints at DEBUG (they repeat for every damaged
            object and say nothing a user can act on).
    """

    def __init__(self, path: Path, logger: logging.Logger | None = None) -> None:
        self.path = Path(path)
        self.logger = logger or logging.getLogger(__name__)
        self.error = ""
        """Why pypdf could not open the file or a page (``""`` while it could)."""
        self._reader: Any = None
        self._opened = False

    def _open(self) -> Any:
        if not self._opened:
            self._opened = True
            try:
                from pypdf import PdfReader

                reader = PdfReader(str(self.path), strict=False)
                if reader.is_encrypted:
                    reader.decrypt("")
                _ = len(reader.pages)  # walks the page tree: a cyclic one raises here
                self._reader = reader
            except Exception as exc:  # pypdf raises many types on damaged files
                self.error = f"pypdf: {type(exc).__name__}: {exc}"
                self.logger.debug("%s: %s", self.path.name, self.error)
        return self._reader

    @property
    def page_count(self) -> int:
        """Pages pypdf finds (0 when it cannot open the file)."""
        reader = self._open()
        return 0 if reader is None else len(reader.pages)

    def page_lines(self, index: int) -> PageLines | None:
        """The text of page ``index`` (0-based) as ``PageLines``; ``None`` when unreadable."""
        reader = self._open()
        if reader is None:
            return None
        if index >= len(reader.pages):
            self.error = f"pypdf: the page tree holds {len(reader.pages)} page(s)"
            return None
        try:
            page = reader.pages[index]
            box = page.cropbox
            width, height = float(box.width) or _LETTER[0], float(box.height) or _LETTER[1]
            left, bottom = float(box.left), float(box.bottom)
            user_box = (left, bottom, left + width, bottom + height)
            if int(page.get("/Rotate", 0) or 0) % 180:
                width, height = height, width
            text = page.extract_text() or ""
        except Exception as exc:  # a damaged page object or content stream
            self.error = f"pypdf: {type(exc).__name__}: {exc}"
            self.logger.debug("%s page %d: %s", self.path.name, index + 1, self.error)
            return None
        return text_page_lines(text, index + 1, width, height, user_box)
