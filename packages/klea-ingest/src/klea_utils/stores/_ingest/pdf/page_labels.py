"""The page numbers a reader sees: the PDF's own page labels, else the printed folios.

A citation reads "p. 7 (printed 1234)": ``7`` is the physical page (1-based), ``1234`` the
number printed on it. :func:`printed_page_numbers` finds the printed numbers among the
running lines that :mod:`~klea_utils.stores._ingest.pdf.page_furniture` removes (a bare page
number, or a number opening or closing a running head or foot), keeping only those that
agree with the document's dominant offset from the physical page (so a year in a running
head is not taken for a page number); :func:`page_labels` prefers the PDF's own page labels
(``/PageLabels``, pdfium's ``FPDF_GetPageLabel``) where the file has them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["MIN_AGREEING_PAGES", "folio_candidates", "page_labels", "printed_page_numbers"]

MIN_AGREEING_PAGES = 2
"""Pages whose printed number must agree on one offset before any is believed."""

_BARE = re.compile(r"^[\s\-\u2013\u2014\[(]*(?:page\s+)?(\d{1,5})\b", re.IGNORECASE)
_EDGE_NUMBER = re.compile(r"^\s*(\d{1,5})\s+\S|\S\s+(\d{1,5})\s*$")
_MAX_LABEL = 40


def folio_candidates(text: str, bare: bool) -> list[int]:
    """Numbers in a running line that may be its page's folio: the number of a bare page
    number line (``bare``), else one opening or closing the line."""
    if bare:
        match = _BARE.match(text)
        return [int(match.group(1))] if match else []
    match = _EDGE_NUMBER.search(text)
    if not match:
        return []
    return [int(group) for group in match.groups() if group is not None]


def printed_page_numbers(
    candidates: Mapping[int, Iterable[int]], bare: Mapping[int, Iterable[int]] | None = None
) -> dict[int, str]:
    """Each page's printed number from its folio ``candidates`` (page -> numbers).

    The offset (printed minus physical page) most pages agree on wins, when at least
    :data:`MIN_AGREEING_PAGES` pages agree; a page is labelled only by a candidate on it
    that fits that offset. A single folio is believed alone only when it is the one
    candidate of the whole document and was read from a bare page-number line (``bare``:
    page -> such numbers), as a one-page excerpt prints it ("1234" at the foot); a number
    at the edge of a running head ("Journal 2019") alone stays unbelieved.
    """
    offsets: Counter[int] = Counter()
    for page, numbers in candidates.items():
        offsets.update({number - page for number in numbers})
    if not offsets:
        return {}
    offset, agreeing = offsets.most_common(1)[0]
    if agreeing < MIN_AGREEING_PAGES and not _lone_bare_folio(candidates, bare or {}):
        return {}
    return {
        page: str(page + offset)
        for page, numbers in candidates.items()
        if page + offset in set(numbers)
    }


def _lone_bare_folio(
    candidates: Mapping[int, Iterable[int]], bare: Mapping[int, Iterable[int]]
) -> bool:
    """Whether the document offers one folio in all, read from a bare page-number line."""
    found = [(page, number) for page, numbers in candidates.items() for number in numbers]
    if len(found) != 1:
        return False
    page, number = found[0]
    return number in set(bare.get(page, ()))


def page_labels(path: Path, printed: Mapping[int, str] | None = None) -> dict[int, str]:
    """Each page's label (1-based page -> label): the PDF's own where it has one, else the
    printed number in ``printed``; ``{}`` for a file pdfium cannot open."""
    import pypdfium2 as pdfium

    labels = dict(printed or {})
    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception:  # pypdfium2's PdfiumError: the printed numbers are all there is
        return labels
    try:
        for index in range(len(pdf)):
            label = " ".join(str(pdf.get_page_label(index)).split())[:_MAX_LABEL]
            if label:
                labels[index + 1] = label
    finally:
        pdf.close()
    return labels
