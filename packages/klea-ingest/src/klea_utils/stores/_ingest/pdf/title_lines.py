"""The title of page one as its layout sets it, for the model-free path's structure.

The title is the largest text on page one (at least :data:`TITLE_MIN_RATIO` times the body
size, starting in the top half) that is not a banner, stamp or a standard's designation
(``CCITT T.81``; on a cover whose top half holds one, the title may start down to three
quarters of the page). Its block goes on over the lines right under it while they are of
its size, a little smaller, or a phrase broken mid-way, and stops at a line in another
column or after a line that ends on a year. A lone article set small above it (``The`` /
``GLIDER EXPRESS``) and a smaller kicker line ending on a linking word (``UPDATED
RECOMMENDATIONS ON``) open it; the lines right under a one-word title finish it.
"""

from __future__ import annotations

import re

from klea_utils.stores._ingest.biblio.line_kinds import is_banner, is_designation
from klea_utils.stores._ingest.pdf.headings import looks_like_words
from klea_utils.stores._ingest.pdf.page_furniture import is_stamp
from klea_utils.stores._ingest.pdf.pdf_lines import Line, PageLines
from klea_utils.stores._ingest.pdf.text_scripts import SENTENCE_END

__all__ = ["TITLE_MIN_RATIO", "title_lines"]

TITLE_MIN_RATIO = 1.2
"""The title's type must be at least this many times the body size."""


_ARTICLES = frozenset(
    ["the", "a", "an", "le", "la", "les", "el", "los", "der", "die", "das", "il", "lo"]
)
"""A lone article printed small above a masthead title belongs to it (``The`` / GLIDER EXPRESS)."""
_ENDS_ON_YEAR = re.compile(r"(?<![\w.,/-])(?:1[5-9]|20)\d\d\s*$")
"""A line that ends on a year (a lone number of four digits), which closes a title block."""
_RUN_ON_RATIO = 0.75
"""A title line this many times the largest size or more goes on the title block (OCR and
designers set a title's second line a little smaller: ``32 Track MIDI Sequence Recorder``)."""


_TITLE_BAND = 0.5
"""The title starts in this top share of page one."""
_COVER_BAND = 0.75
"""... or in this share, on a cover whose top half holds a standard's designation (a
standards body sets its title in the lower half, under the designation and the series)."""


def title_lines(page: PageLines, body: float) -> list[Line]:
    """Page one's title block, top line first (empty when no line is set large enough;
    ``body`` is the body text's size): see the module docstring."""
    top_half = [ln for ln in page.lines[:40] if ln.top < page.height * _TITLE_BAND]
    cover = any(is_designation(ln.text) for ln in top_half)
    band = _COVER_BAND if cover else _TITLE_BAND
    candidates = [
        ln
        for ln in page.lines[:40]
        if ln.top < page.height * band
        and looks_like_words(ln.text)
        and not is_banner(ln.text)
        and not is_stamp(ln.text)
        and not is_designation(ln.text)
        and ln.size >= TITLE_MIN_RATIO * body
    ]
    if not candidates:
        return []
    biggest = max(ln.size for ln in candidates)
    chosen = [ln for ln in candidates if abs(ln.size - biggest) < 0.5]
    first = page.lines.index(chosen[0])
    block = [chosen[0]]
    for ln in page.lines[first + 1 :]:
        if _beside(block[0], ln):
            continue  # a heading of the next column on the title's row (two side by side)
        if _runs_on(block[-1], ln, biggest, body):
            block.append(ln)
        elif (
            ln.top >= block[-1].top - 1
            and abs(ln.size - biggest) >= 0.5
            and ln.size < 0.6 * biggest
        ):
            continue  # a footnote marker on the title line
        else:
            break
    if len(block) == 1 and len(block[0].text.split()) == 1:
        block += _subtitle_lines(page, first, body)
    before = page.lines[first - 1] if first > 0 else None
    if before is not None and (
        (
            before.text.strip().casefold() in _ARTICLES
            and 0 <= block[0].top - before.bottom < 2.0 * before.size
        )
        or _kicker(before, block[0], body)
    ):
        block.insert(0, before)
    return block


_KICKER_ENDS = _ARTICLES | frozenset(
    [
        "on",
        "of",
        "for",
        "to",
        "in",
        "and",
        "with",
        "from",
        "about",
        "de",
        "des",
        "du",
        "sur",
        "pour",
        "et",
        "von",
        "zur",
        "zum",
        "für",
        "über",
        "und",
        "del",
        "della",
        "di",
        "per",
        "sobre",
        "y",
        "e",
    ]
)
"""Words a kicker line ends on: it runs on into the title under it (``UPDATED
RECOMMENDATIONS ON`` / ``TREATMENT OF ADOLESCENTS AND ...``)."""


def _kicker(line: Line, title: Line, body: float) -> bool:
    """Whether ``line``, printed right above the title's first line, opens the title: set
    smaller than the title but larger than the body text, starting at the title's left
    edge, within :data:`_SMALLER_GAP_EM` of the title's size above it, and ending on a
    linking word (a phrase the title finishes)."""
    words = line.text.split()
    return (
        len(words) >= 2
        and words[-1].casefold() in _KICKER_ENDS
        and TITLE_MIN_RATIO * body <= line.size < title.size - 0.5
        and 0 <= title.top - line.bottom < _SMALLER_GAP_EM * title.size
        and abs(line.x0 - title.x0) < 0.5 * line.size
        and looks_like_words(line.text)
        and not is_banner(line.text)
    )


_SUBTITLE_LINES = 3
_SUBTITLE_MIN_RATIO = 1.1
"""A subtitle under a one-word title is set this many times the body size or more."""
_SMALLER_GAP_EM = 0.9
"""A line set smaller than the title goes on its block only this close under it (in ems of
the title's size): further down, a change of size and a blank start the next part."""


def _subtitle_lines(page: PageLines, first: int, body: float) -> list[Line]:
    """The lines right under a one-word title that finish it (``Russia`` / ``Democracy
    Assessment: Political Process,`` / ``Local Governance, and Civil Society``): set
    smaller than the title but above the body size, all of one size, the first within
    :data:`_SMALLER_GAP_EM` of the title's size under it, each next one within a line's
    height of the one above; the first change of size or wider blank ends them."""
    title = page.lines[first]
    found: list[Line] = []
    for ln in page.lines[first + 1 :]:
        last = found[-1] if found else title
        size = found[0].size if found else ln.size
        gap = ln.top - last.bottom
        limit = 1.2 * size if found else _SMALLER_GAP_EM * title.size
        if (
            len(found) == _SUBTITLE_LINES
            or not -2.0 <= gap < limit
            or abs(ln.size - size) >= 0.5
            or not _SUBTITLE_MIN_RATIO * body <= ln.size < title.size - 0.5
            or not looks_like_words(ln.text)
            or is_banner(ln.text)
            or _beside(title, ln)
        ):
            break
        found.append(ln)
    return found


def _beside(first: Line, line: Line) -> bool:
    """Whether ``line`` stands in another column than the title's first line: no part of
    them over each other, a word space or more apart, and ``line`` starts no lower than the
    title's line ends (a Korean brochure's two headings, each over two lines)."""
    apart = line.x0 > first.x1 + 0.5 * first.size or line.x1 < first.x0 - 0.5 * first.size
    return apart and line.top < first.bottom + 1.5 * first.size


def _runs_on(last: Line, line: Line, biggest: float, body: float) -> bool:
    """Whether ``line`` goes on the title block that ends with ``last``: right below it and
    of the title's size, a little smaller (a second line set smaller), or starting in lower
    case after a line that ends no sentence (a title broken mid-phrase). A line ending on
    a year closes the block unless the next one starts in lower case: a banner's title
    names its edition last (``الانتخابات التشريعية 2014`` over the sheet's own head)."""
    if _ENDS_ON_YEAR.search(last.text) and not line.text.lstrip()[:1].islower():
        return False
    gap = line.top - last.bottom
    if abs(line.size - biggest) < 0.5:
        return gap < 1.2 * biggest
    if not -2.0 <= gap < _SMALLER_GAP_EM * biggest or not looks_like_words(line.text):
        return False
    if line.size >= max(_RUN_ON_RATIO * biggest, TITLE_MIN_RATIO * body):
        return not SENTENCE_END.search(last.text.rstrip())
    return (
        line.size >= 0.7 * biggest
        and line.text[:1].islower()
        and not SENTENCE_END.search(last.text.rstrip())
    )
