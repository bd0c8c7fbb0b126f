"""Whether the line the text-only title fallback chose is, on the printed page, no title.

The fallback title (:func:`..bylines.find_title_and_authors`) reads page one's text, where
a line's place, size and cells are lost. Two kinds of line it would take are told apart
only by those: this module reads page one's lines again with the build's own line reader
(:mod:`klea_utils.stores._ingest.pdf.pdf_lines`) and refuses the chosen line when it is

- **a row of table column heads**: its words stand in three cells or more, apart by blanks
  wider than a cell gap (``DOCUMENT NO.   DATE   PAYEE NAME   ...   AMOUNT ($)``);
- **a running head**: it is one of the page's topmost lines (in its top band, or its first
  two from the top where nothing is in the band) and either the topmost lines of another
  page (pages 2 to 6) hold the same words, its part or section number aside
  (``..., Justice Pt. 1308`` over ``..., Justice § 1308.11``: the page-furniture rule,
  which compares whole lines, kept both), or it is set smaller than the page's body text
  (a one-page excerpt's running head: ``安徽省建设用地使用标准（2020 年版）`` at 9 pt over
  12 pt text).

- **a running foot**: it stands in the page's bottom band (a Thai exam page's
  ``เรียนเลขพี่นวย (คณิตมงคลพิทักษ์สุข) 3``, which the text layer gives first).

A file the line reader cannot open refuses nothing: the fallback keeps its say.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path

from klea_utils.stores._ingest.pdf.page_furniture import EDGE_BAND
from klea_utils.stores._ingest.pdf.pdf_lines import Line, PageLines, page_lines

__all__ = ["refused_title_line", "running_head_key"]

_OTHER_PAGES = 5
"""Pages after page one whose top lines are read for running heads."""
_SMALLER = 0.9
"""A top line set below this share of the body size is a running head, not a title."""
_MIN_CELLS = 3
_TOP = 2
_PART_NUMBER = re.compile(
    r"(?:(?:\b(?:pt|part|sec|section|ch|chap|chapter|p|pp|page)\.?|\u00a7+)\s*)?"
    r"\b(?:\d[\d.\-\u2013]*|[IVX]+)\s*$",
    re.IGNORECASE,
)
_log = logging.getLogger(__name__)


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if c.isalnum()).casefold()


def running_head_key(text: str) -> str:
    """The words of a top line with its part or section number and folio dropped."""
    text = " ".join(text.split())
    text = re.sub(r"^\d{1,4}\s+", "", text)  # a folio printed before the head
    while True:
        shorter = _PART_NUMBER.sub("", text).rstrip(" ,.;:\u2013\u2014-")
        if shorter == text:
            break
        text = shorter
    words = re.findall(r"[^\W\d_]+", text.casefold())
    return " ".join(words) if len(words) >= 2 else ""


def _body_size(page: PageLines) -> float:
    """The type size most of page one's characters are set in."""
    weights: dict[float, int] = {}
    for line in page.lines:
        size = round(line.size, 1)
        weights[size] = weights.get(size, 0) + len(line.text)
    return max(weights, key=lambda s: weights[s]) if weights else 0.0


def _top_lines(page: PageLines) -> list[Line]:
    """The page's topmost lines: those in its top band, else its first :data:`_TOP` lines
    from the top (a scan's margin can push a running head below the band)."""
    ordered = sorted(page.lines, key=lambda ln: ln.top)
    band = [ln for ln in ordered if ln.bottom <= page.height * EDGE_BAND]
    return band or ordered[:_TOP]


def _the_line(page: PageLines, title: str) -> Line | None:
    """The page-one line the title starts with."""
    want = _fold(title)[:24]
    if not want:
        return None
    for line in page.lines:
        have = _fold(line.text)
        if have and (have.startswith(want) or want.startswith(have[:24])):
            return line
    return None


def _other_top_keys(pages: Sequence[PageLines]) -> set[str]:
    keys: set[str] = set()
    for page in pages:
        for line in _top_lines(page):
            key = running_head_key(line.text)
            if key:
                keys.add(key)
    return keys


def _refusal(page: PageLines, title: str, others: Callable[[], Sequence[PageLines]]) -> str | None:
    """The refusal of the module's list; ``others`` reads the pages after page one, only
    when a top line must be compared with theirs."""
    line = _the_line(page, title)
    if line is None:
        return None
    if len(line.cells) >= _MIN_CELLS:
        return "table heads"
    if line.top >= page.height * (1 - EDGE_BAND):
        return "running foot"
    if all(line is not top for top in _top_lines(page)):
        return None
    if line.size < _SMALLER * _body_size(page):
        return "running head"
    key = running_head_key(line.text)
    if key and key in _other_top_keys(others()):
        return "running head"
    return None


def _as_converted(head_lines: Sequence[PageLines | None]) -> list[PageLines]:
    pages = [page for page in head_lines[1 : 1 + _OTHER_PAGES] if page is not None]
    if len(pages) < len(head_lines[1 : 1 + _OTHER_PAGES]):
        raise ValueError("a page after page one was not read by pdfium")
    return pages


def refused_title_line(
    file_path: Path, title: str, head_lines: Sequence[PageLines | None] | None = None
) -> str | None:
    """Why the line ``title`` starts with is no title (``"table heads"``,
    ``"running foot"``, ``"running head"``), or ``None``.

    ``head_lines``: the lines of page one and the pages after it as the conversion read
    them (:attr:`~klea_utils.stores._ingest.pdf.offline_pdf.Recovery.head_lines`), so that
    the file is not opened again; ``None`` reads them from the file. A page that could not
    be read refuses nothing, as when the line reader fails on it."""
    if head_lines is not None:
        if not head_lines or head_lines[0] is None:
            return None
        try:
            return _refusal(head_lines[0], title, lambda: _as_converted(head_lines))
        except Exception as exc:  # a page pdfium could not load: refuse nothing
            _log.debug("%s: page lines not read (%s)", file_path.name, exc)
            return None
    try:
        import pypdfium2 as pdfium

        pdf = pdfium.PdfDocument(file_path)
    except Exception as exc:  # an unreadable file: the fallback keeps its say
        _log.debug("%s: page one not read for the title (%s)", file_path.name, exc)
        return None
    try:
        if len(pdf) == 0:
            return None
        pages = range(1, min(len(pdf), 1 + _OTHER_PAGES))
        return _refusal(page_lines(pdf, 0), title, lambda: [page_lines(pdf, i) for i in pages])
    except Exception as exc:  # a page the line reader fails on: refuse nothing
        _log.debug("%s: page one lines not read (%s)", file_path.name, exc)
        return None
    finally:
        pdf.close()
