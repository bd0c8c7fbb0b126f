"""Page furniture: running heads and feet, page numbers and rotated margin stamps.

A line is furniture when it is rotated (margin stamps such as arXiv's identifier), matches
a known stamp, is a bare page number near the top or bottom of the page, or repeats (digits
ignored) near the top or bottom of several pages. Furniture is removed from the body text:
it would otherwise land in the middle of a sentence and become a heading. The numbers a
removed running line may print as the page's folio are kept on the page (``folios``).

A running head can name the part of the document a page belongs to rather than the
document: "Command Code BMFOL Return Form 941 Display" over the four pages of one exhibit
of a manual, a chapter's title over its pages. Removed from the body, it would leave
those pages' passages without the words that tell them apart from the next part's (every
exhibit of that manual is a table of the same line numbers and positions). The removed
top lines are kept on the page (``running_heads``), and :func:`section_titles` keeps those
that title a run of pages, not the whole document, for the chunker to add to the heading
chain of the passages on those pages.
"""

from __future__ import annotations

import re
from collections import Counter

from klea_utils.stores._ingest.pdf.page_labels import folio_candidates
from klea_utils.stores._ingest.pdf.pdf_lines import Line, PageLines

__all__ = [
    "EDGE_BAND",
    "SECTION_TITLE_MAX_SHARE",
    "SECTION_TITLE_MIN_PAGES",
    "is_stamp",
    "remove_furniture",
    "section_titles",
]

EDGE_BAND = 0.15
"""Share of the page height, at the top and at the bottom, where running lines sit."""

SECTION_TITLE_MAX_SHARE = 0.5
"""A running head printed over more than this share of the pages (or over a span of pages
that long) titles the document, not a part of it: it is no section title."""
SECTION_TITLE_MIN_PAGES = 0.25
"""Share of the pages that must carry a section title for any to be believed."""
_SECTION_TITLE_MAX_WORDS = 16
_LETTERS = re.compile(r"[^\W\d_]{2,}")

# arXiv's stamp is a whole line: the id with its version or its date ("arXiv:2101.01234v2
# [cs.CL] 3 Jan 2021"). A reference line that opens with an id ("arXiv:2212.08073, 2022.")
# is no stamp (issue 38: the reference lists lost their arXiv ids).
_ARXIV_ID = r"(?:\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})"
_STAMP_DATE = r"\s+\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4}"
_STAMP = re.compile(
    rf"^\s*arXiv:\s*{_ARXIV_ID}"
    rf"(?:v\d+(?:\s*\[[^\]]{{1,20}}\])?(?:{_STAMP_DATE})?|(?:\s*\[[^\]]{{1,20}}\])?{_STAMP_DATE})"
    r"\s*$|"
    r"(?i:preprint submitted to .{3,60}$)|"
    r"(?i:^\s*(?:downloaded from|this article is protected by copyright|accepted manuscript\b))"
)
_PAGE_NUMBER = re.compile(
    r"^[\s\-\u2013\u2014\[(]*(?:page\s+)?(?:\d{1,4}|[ivxlc]{1,7})(?:\s*(?:of|/)\s*\d{1,4})?"
    r"[\s\-\u2013\u2014\])]*$",
    re.IGNORECASE,
)


def is_stamp(text: str) -> bool:
    """Return whether ``text`` is a margin or submission stamp (arXiv id, "Preprint ...")."""
    return bool(_STAMP.search(text))


def _key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split()).casefold())


def _in_band(line: Line, page: PageLines) -> str | None:
    if line.bottom <= page.height * EDGE_BAND:
        return "top"
    if line.top >= page.height * (1 - EDGE_BAND):
        return "bottom"
    return None


def _isolated(line: Line, page: PageLines) -> bool:
    """No other line within one line height above or below (a running head stands apart)."""
    reach = max(line.height, line.size, 1.0)
    for other in page.lines:
        if other is line or other.rotated:
            continue
        if other.x1 < line.x0 - 2 * reach and other.top < line.bottom and other.bottom > line.top:
            continue  # beside it on the same row (a page number next to a running head)
        near = other.top < line.bottom + reach and other.bottom > line.top - reach
        inside = other.top >= line.top - 2 and other.bottom <= line.bottom + 2
        if near and not inside:
            return False
    return True


def _slot(line: Line, band: str) -> tuple[str, int]:
    return band, round(line.top / 3)


def remove_furniture(pages: list[PageLines]) -> int:
    """Drop furniture lines from every page in place; return how many were dropped."""
    counts: Counter[tuple[str, str]] = Counter()
    slots: Counter[tuple[str, int]] = Counter()
    for page in pages:
        seen = set()
        places = set()
        for line in page.lines:
            band = _in_band(line, page)
            if band is not None:
                seen.add((band, _key(line.text)))
                if len(line.text.split()) <= 10 and _isolated(line, page):
                    places.add(_slot(line, band))
        counts.update(seen)
        slots.update(places)
    needed = 2 if len(pages) <= 4 else 3
    repeating = {key for key, n in counts.items() if n >= needed and len(key[1]) >= 3}
    same_place = {slot for slot, n in slots.items() if n >= max(needed, len(pages) // 2)}
    dropped = 0
    for page in pages:
        kept = []
        for line in page.lines:
            band = _in_band(line, page)
            furniture = (
                line.rotated
                or is_stamp(line.text)
                or (band is not None and (band, _key(line.text)) in repeating)
                or (band is not None and bool(_PAGE_NUMBER.match(line.text)))
                or (
                    band is not None
                    and _slot(line, band) in same_place
                    and not line.bold
                    and len(line.text.split()) <= 10
                    and _isolated(line, page)
                )
            )
            if furniture:
                dropped += 1
                if band is not None and not line.rotated and not is_stamp(line.text):
                    bare = bool(_PAGE_NUMBER.match(line.text))
                    if band == "top" and not bare:
                        page.running_heads.append(" ".join(line.text.split()))
                    numbers = folio_candidates(line.text, bare)
                    page.folios.extend(numbers)
                    if bare:
                        page.bare_folios.extend(numbers)
            else:
                kept.append(line)
        page.lines = kept
    return dropped


def section_titles(pages: list[PageLines]) -> dict[int, str]:
    """Page number -> the running heads that title the part of the document it is in.

    A removed top line is a section title when the same text (whitespace aside) heads at
    least two pages, all within a span of at most :data:`SECTION_TITLE_MAX_SHARE` of the
    document's pages, and it has words (two letters or more) and at most
    :data:`_SECTION_TITLE_MAX_WORDS` of them. A head that changes on every page (it holds
    the folio) never repeats; one over the whole document (its title, a journal's name)
    spans too many pages. Several on one page are joined by line breaks, in reading order. Unless at
    least :data:`SECTION_TITLE_MIN_PAGES` of the pages get one, none is kept.
    """
    if len(pages) < 4:
        return {}
    where: dict[str, list[int]] = {}
    for page in pages:
        for text in dict.fromkeys(page.running_heads):
            where.setdefault(text.casefold(), []).append(page.page_no)
    limit = SECTION_TITLE_MAX_SHARE * len(pages)
    titles = {
        key
        for key, numbers in where.items()
        if len(numbers) >= 2
        and max(numbers) - min(numbers) + 1 <= limit
        and _LETTERS.search(key)
        and len(key.split()) <= _SECTION_TITLE_MAX_WORDS
    }
    out = {}
    for page in pages:
        kept = [t for t in dict.fromkeys(page.running_heads) if t.casefold() in titles]
        if kept:
            out[page.page_no] = "\n".join(kept)
    # A document that titles its parts does so on most of its pages; a few pages with a
    # repeated line at the top (a figure's legend over two pages) are no such convention.
    return out if len(out) >= SECTION_TITLE_MIN_PAGES * len(pages) else {}
