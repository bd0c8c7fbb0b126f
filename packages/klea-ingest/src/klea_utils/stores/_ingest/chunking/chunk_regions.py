"""The place of a chunk on its pages: the ``regions`` key of PDF chunks.

``regions`` lists ``{"page": <1-based page>, "bbox": [left, bottom, right, top]}`` in PDF
user-space points as pdfium reports character boxes (bottom-left origin of the unrotated
page), one box per line (model-free path, OCR included) or per block (Docling's pipeline)
the chunk's text comes from, in reading order, across pages. They come from the items'
provenance; a chunk that holds only part of an item (a long paragraph cut at sentence
ends) keeps the boxes of the lines whose characters its text covers. A provenance that
names its page but no box (a page read without geometry) gives the whole page as its
region, never nothing: the highlight then frames the page. Items without provenance
(Markdown, HTML, text files) give no regions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["REGIONS_KEY", "chunk_regions", "piece_span", "region_pages"]

REGIONS_KEY = "regions"
"""Chunk metadata key of the regions."""

_EDGE_WORDS = 6
"""Words at each end of a piece that locate it in its item's text."""


def _pattern(words: list[str]) -> re.Pattern[str]:
    return re.compile(r"\s*".join(re.escape(w) for w in words))


def piece_span(piece: str, whole: str) -> tuple[int, int] | None:
    """``(start, end)`` of ``piece`` (a part of ``whole`` cut at sentence ends, blanks
    possibly changed) in ``whole``; ``None`` when it is all of it or cannot be found."""
    words = piece.split()
    if not words or not whole:
        return None
    # the edge words may recur (a repeated phrase): take the pair of matches whose span is
    # nearest the piece's own length
    length = len(" ".join(words))
    heads = list(_pattern(words[:_EDGE_WORDS]).finditer(whole))
    tails = list(_pattern(words[-_EDGE_WORDS:]).finditer(whole))
    pairs = [(h, t) for h in heads for t in tails if t.end() > h.start()]
    if not pairs:
        return None
    head, tail = min(pairs, key=lambda pair: abs(pair[1].end() - pair[0].start() - length))
    start, end = head.start(), tail.end()
    if start == 0 and end >= len(whole.rstrip()):
        return None
    return start, end


def _box(prov: Any, heights: Mapping[int, float]) -> list[float] | None:
    box = getattr(prov, "bbox", None)
    if box is None:
        return None
    left, right = float(min(box.l, box.r)), float(max(box.l, box.r))
    top, bottom = float(box.t), float(box.b)
    if not str(getattr(box, "coord_origin", "")).upper().endswith("BOTTOMLEFT"):
        height = heights.get(prov.page_no)
        if height is None:
            return None
        top, bottom = height - top, height - bottom
    low, high = min(top, bottom), max(top, bottom)
    if right - left <= 0 or high - low <= 0:
        return None  # a page read without geometry
    return [round(left, 2), round(low, 2), round(right, 2), round(high, 2)]


def _overlaps(span: tuple[int, int], charspan: Any) -> bool:
    if not isinstance(charspan, tuple | list) or len(charspan) != 2:
        return True
    return int(charspan[0]) < span[1] and span[0] < int(charspan[1])


def chunk_regions(
    items: Iterable[Any],
    text: str,
    heights: Mapping[int, float] | None = None,
    pages: Mapping[int, list[float]] | None = None,
) -> list[dict[str, Any]]:
    """The regions of a chunk of ``text`` made of ``items`` (Docling items with ``prov``).

    ``heights`` gives each page's height, for provenance measured from the top; ``pages``
    each page's whole box (user space), the region of a provenance without a box.
    """
    items = list(items)
    regions: list[dict[str, Any]] = []
    for item in items:
        provs = getattr(item, "prov", None) or []
        item_text = getattr(item, "text", None)
        span = None
        if len(items) == 1 and len(provs) > 1 and isinstance(item_text, str):
            span = piece_span(text, item_text)
        for prov in provs:
            page = getattr(prov, "page_no", None)
            if not isinstance(page, int):
                continue
            if span is not None and not _overlaps(span, getattr(prov, "charspan", None)):
                continue
            box = _box(prov, heights or {}) or (pages or {}).get(page)
            region = {"page": page, "bbox": box}
            if box is not None and (not regions or regions[-1] != region):
                regions.append(region)
    return regions


def region_pages(items: Iterable[Any], regions: list[dict[str, Any]]) -> tuple[int, int] | None:
    """First and last page of ``regions`` when every provenance of ``items`` has a box
    (so the regions tell the chunk's pages: a piece of a paragraph that crosses a page
    may lie on one of them); ``None`` otherwise."""
    if not regions:
        return None
    for item in items:
        for prov in getattr(item, "prov", None) or []:
            if _box(prov, {}) is None and isinstance(getattr(prov, "page_no", None), int):
                return None
    pages = [region["page"] for region in regions]
    return min(pages), max(pages)
