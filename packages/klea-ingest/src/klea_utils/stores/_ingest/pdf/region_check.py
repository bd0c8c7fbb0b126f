"""The proof of a chunk's ``regions``: how many of its words pdfium finds inside them.

For each region the text of the page's text layer inside the box is read with pdfium
(``PdfTextPage.get_text_bounded``); :func:`words_inside_share` is the share of the chunk's
words (its heading lines left out) found there, counted with multiplicity (a word
hyphenated at a line end counts as found when its two halves are; a right-to-left word
counts as found when pdfium reads its letters in visual order, last letter first, as it
does for a layer without logical-order marks: the box holds the word all the same; a word
split by a blank that pdfium's reading has not, or the other way round, counts as found
when its letters are: the same glyphs in the same order). The ingestion
tests and ``scripts/bench/pdf_regions.py`` use it; an OCRed page has no text layer, so its
regions are read from the OCR lines of that page instead (:func:`ocr_text_inside`).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from klea_utils.stores._ingest.pdf.text_scripts import is_unspaced

__all__ = ["chunk_words", "ocr_text_inside", "region_text", "words_inside_share"]

_WORD = re.compile(r"[^\W_]+")
"""Letters and digits: a run of underscores (a form's blank to fill in) is no word, and
its length differs between readings of the same line."""
_MARGIN = 1.0
"""Points added around a region when reading it (glyph boxes are tight)."""


def chunk_words(text: str) -> list[str]:
    """The words of ``text`` (letters and digits), case-folded; in scripts written without
    spaces (Chinese, Japanese, Thai...) every character counts as a word, since where a
    line break falls in such a run differs between the chunk and the page."""
    import unicodedata

    words: list[str] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if any(is_unspaced(char) for char in word):
            words.extend(word)
        else:
            words.append(word)
    return words


def region_text(pdf: Any, regions: Iterable[Mapping[str, Any]]) -> str:
    """The text-layer text inside ``regions`` of an open ``pypdfium2.PdfDocument``."""
    parts: list[str] = []
    pages: dict[int, Any] = {}
    try:
        for region in regions:
            number = int(region["page"])
            if number not in pages:
                pages[number] = pdf[number - 1].get_textpage()
            left, bottom, right, top = (float(v) for v in region["bbox"])
            parts.append(
                pages[number].get_text_bounded(
                    left - _MARGIN, bottom - _MARGIN, right + _MARGIN, top + _MARGIN
                )
            )
    finally:
        for textpage in pages.values():
            textpage.close()
    return "\n".join(parts)


def ocr_text_inside(
    lines: Iterable[tuple[str, tuple[float, float, float, float]]],
    boxes: Iterable[tuple[float, float, float, float]],
) -> str:
    """The text of OCR ``lines`` (text, user-space box) whose centre lies in one of ``boxes``."""
    boxes = list(boxes)
    out = []
    for text, (left, bottom, right, top) in lines:
        x, y = (left + right) / 2, (bottom + top) / 2
        if any(b[0] - _MARGIN <= x <= b[2] + _MARGIN and b[1] - _MARGIN <= y <= b[3] + _MARGIN
               for b in boxes):  # fmt: skip
            out.append(text)
    return "\n".join(out)


def _right_to_left(word: str) -> bool:
    import unicodedata

    return any(unicodedata.bidirectional(char) in ("R", "AL") for char in word)


def _line_end_joins(text: str) -> list[str]:
    """Words hyphenated at a line end, joined (``trans`` + ``forms``): pdfium's text keeps
    the halves on two lines, the chunk the whole word."""
    lines = [chunk_words(line) for line in text.splitlines()]
    return [a[-1] + b[0] for a, b in itertools.pairwise(lines) if a and b]


def words_inside_share(chunk_text: str, inside: str, headings: Iterable[str] = ()) -> float:
    """Share of the words of ``chunk_text`` (its heading lines removed) found in ``inside``.

    A chunk without words counts as fully found (1.0).
    """
    body = chunk_text
    for heading in headings:
        if body.startswith(heading + "\n"):
            body = body[len(heading) + 1 :]
    words = Counter(chunk_words(body))
    total = sum(words.values())
    if not total:
        return 1.0
    inside_words = chunk_words(inside)
    found = Counter(inside_words)
    found.update(_line_end_joins(inside))
    found.update(word[::-1] for word in inside_words if _right_to_left(word))
    return _found(chunk_words(body), found) / total


_MAX_JOIN = 6
"""Most consecutive chunk words whose letters together may make one word of the region."""


def _found(words: list[str], found: Counter[str]) -> int:
    """How many of ``words`` (in order) ``found`` holds, each found word used once; then a
    run of consecutive words not found whose letters joined make one word found (``i
    nsect`` for ``insect``: two readings of the same glyphs put a blank in different
    places, as a font's wide kerning or a line drawn twice makes them) counts as found."""
    left = found.copy()
    hit = [False] * len(words)
    for i, word in enumerate(words):
        if left[word] > 0:
            left[word] -= 1
            hit[i] = True
    for i in range(len(words)):
        for size in range(min(_MAX_JOIN, len(words) - i), 1, -1):
            if any(hit[i : i + size]):
                continue
            joined = "".join(words[i : i + size])
            if left[joined] > 0:
                left[joined] -= 1
                hit[i : i + size] = [True] * size
                break
    return sum(hit)
