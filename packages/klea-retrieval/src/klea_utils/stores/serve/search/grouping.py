"""Search hits grouped by paper: one card per paper, its best passages under it.

A question about one paper finds many of its passages; listing them one by one repeats
the title and the author list ten times. :func:`group_by_paper` folds the passage hits
(in rank order) into papers ranked by their best passage, as Google Scholar and Semantic
Scholar show a paper once. A card shows the first :data:`SHOWN_AUTHORS` authors and how
many there are (the page writes "et al."); the paper view keeps the full list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["PASSAGES_PER_PAPER", "SHOWN_AUTHORS", "group_by_paper", "passages_to_fetch"]

SHOWN_AUTHORS = 3
"""Authors a paper card names before "et al."."""

PASSAGES_PER_PAPER = 3
"""Best passages a paper card shows."""

_PASSAGE_KEYS = (
    "record_id",
    "headings",
    "pages",
    "page_label",
    "regions",
    "score",
    "lexical_rank",
    "semantic_rank",
)


def passages_to_fetch(papers: int) -> int:
    """Passage hits to ask for so that ``papers`` cards are usually filled."""
    return min(200, max(20, 5 * papers))


def _page_span(pages: Sequence[int]) -> list[int]:
    return sorted(set(pages))


def _card(hit: dict[str, Any], rank: int) -> dict[str, Any]:
    authors = list(hit.get("authors") or [])
    return {
        "rank": rank,
        "file": hit["file"],
        "title": hit["title"],
        "authors": authors[:SHOWN_AUTHORS],
        "authors_total": len(authors),
        "year": hit.get("year"),
        "journal": hit.get("journal"),
        "doi": hit.get("doi"),
        "citekey": hit.get("citekey"),
        "pages": [],
        "hits": 0,
        "passages": [],
    }


def group_by_paper(
    hits: Sequence[dict[str, Any]], limit: int, per_paper: int = PASSAGES_PER_PAPER
) -> list[dict[str, Any]]:
    """The first ``limit`` papers of ``hits`` (best first), each with its best passages.

    ``hits`` are passage hits as ``/api/search`` answers them, best first. A paper's
    ``pages`` are the pages of all its hits, ``hits`` how many of its passages matched,
    ``passages`` the best ``per_paper`` of them (id, headings, pages, score, leg ranks
    and highlighted snippets).

    Raises:
        ValueError: When ``limit`` or ``per_paper`` is below 1.
    """
    if limit < 1 or per_paper < 1:
        raise ValueError(f"limit and per_paper must be at least 1, got {limit}, {per_paper}")
    cards: dict[str, dict[str, Any]] = {}
    for hit in hits:
        key = str(hit.get("file") or hit["record_id"])
        card = cards.get(key)
        if card is None:
            if len(cards) == limit:
                continue
            card = cards[key] = _card(hit, len(cards) + 1)
        card["hits"] += 1
        card["pages"] = _page_span([*card["pages"], *(hit.get("pages") or [])])
        if len(card["passages"]) < per_paper:
            passage = {k: hit.get(k) for k in _PASSAGE_KEYS}
            card["passages"].append({**passage, "snippets": hit.get("snippets") or []})
    return list(cards.values())
