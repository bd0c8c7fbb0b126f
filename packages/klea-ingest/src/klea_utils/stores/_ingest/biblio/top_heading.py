"""The title of last resort: the topmost heading near the top of page one.

When no source gives a title (no title item the checks keep, no Info title the page
agrees with, no title line in page one's text), the topmost heading the conversion found
in the top :data:`TOP_SHARE` of page one is the title: a form's head set as a heading
(``SOLICITAÇÃO DE EMPENHO`` over a purchase order) rather than as the page's largest text.

Where page one has no text layer (a scan: fewer than
:data:`~klea_utils.stores._ingest.pdf.text_quality.MIN_PAGE_CHARS` characters), its
headings are OCR's reading, and OCR reads strokes, stamps and another script as Latin
letters and stray signs (``SRAMBARAAFA (£0) APRA? 2021 FER -—MRABELLZ HREM``, a Chinese
form read as Latin). Such a heading is taken only when it is clean words: letters (any
script), with a hyphen or an apostrophe inside a word, and numbers; one sign else (a
bracket, ``?``, ``£``, a dash standing alone) and it is no title.

Only the topmost heading is tried: when it is refused (a running head, noise), the title
stays empty rather than fall to the next one (a wrong title is worse than none).
"""

from __future__ import annotations

import re
from typing import Any

from klea_utils.stores._ingest.pdf.text_quality import MIN_PAGE_CHARS

__all__ = ["TOP_SHARE", "has_text_layer", "is_clean_words", "top_heading"]

TOP_SHARE = 0.3
"""The share of page one's height, from its top, a heading must start in."""

_CLEAN_WORD_RE = re.compile(r"^(?:[^\W\d_]+(?:['’-][^\W\d_]+)*|\d+(?:[.,/]\d+)*)$")
"""A word of letters (a hyphen or an apostrophe inside), or a number."""


def has_text_layer(page_text: str) -> bool:
    """Whether page one's text layer (as pdfium reads it) holds text, i.e. was not OCR'd."""
    return len("".join(page_text.split())) >= MIN_PAGE_CHARS


def is_clean_words(text: str) -> bool:
    """Whether ``text`` is only words of letters and numbers (module docstring)."""
    words = text.split()
    return bool(words) and all(_CLEAN_WORD_RE.match(word) for word in words)


def _top_share(prov: Any, height: float) -> float | None:
    box = getattr(prov, "bbox", None)
    if box is None or height <= 0:
        return None
    flip = str(getattr(box, "coord_origin", "")).upper().endswith("BOTTOMLEFT")
    top = height - float(box.t) if flip else float(box.t)
    return top / height


def _page_one_height(document: Any) -> float:
    page = (getattr(document, "pages", None) or {}).get(1)
    size = getattr(page, "size", None)
    return float(getattr(size, "height", 0.0) or 0.0)


def top_heading(document: Any, *, scanned: bool) -> str | None:
    """The topmost page-one heading starting in the top :data:`TOP_SHARE` of the page, or
    ``None``; on a ``scanned`` page only one that :func:`is_clean_words`."""
    height = _page_one_height(document)
    iterate = getattr(document, "iterate_items", None)
    if iterate is None or height <= 0:
        return None
    found: list[tuple[float, str]] = []
    for entry in iterate():
        item = entry[0] if isinstance(entry, tuple) else entry
        label = getattr(getattr(item, "label", None), "value", getattr(item, "label", ""))
        text = getattr(item, "text", None)
        provs = getattr(item, "prov", None) or []
        if str(label) != "section_header" or not isinstance(text, str) or not provs:
            continue
        if getattr(provs[0], "page_no", None) != 1:
            continue
        share = _top_share(provs[0], height)
        if share is not None and share <= TOP_SHARE:
            found.append((share, " ".join(text.split())))
    if not found:
        return None
    heading = min(found)[1]
    if not heading or (scanned and not is_clean_words(heading)):
        return None
    return heading
