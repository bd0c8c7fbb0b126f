"""One paper as klea-serve shows it: its display fields, facet values and passages.

:func:`display_metadata` picks what a person or an agent reads about a passage (display
names only, pages, the passage's boxes on them, tags, collections, citation key) from a
chunk's metadata; a
:class:`Paper` is one source file's metadata and passages; :data:`FACET_KEYS` are the
facets the service counts, one count per paper holding the value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from klea_utils.stores._retrieval.regions import regions_of
from klea_utils.stores.utils import display_person_names
from langchain_core.documents import Document

__all__ = [
    "FACET_KEYS",
    "Paper",
    "check_facet_keys",
    "display_metadata",
    "facet_values",
]

FACET_KEYS = ("year", "author", "journal", "tag", "collection", "language")
"""Facets the service counts: one count per paper holding the value. ``tag`` counts a
paper's ``keywords`` and ``tags`` (a reference manager's tags), ``collection`` its
``collections`` (a Zotero library's), ``language`` the ``language`` klea-ingest records
for each chunk (a paper's is that of the chunk its metadata is read from; ``und``, not
told, is not counted)."""

_TAG_KEYS = ("keywords", "tags")


def _authors(metadata: dict[str, Any]) -> list[str]:
    authors = metadata.get("authors")
    if isinstance(authors, list):
        return display_person_names(authors)
    return [authors] if isinstance(authors, str) and authors else []


def _values(metadata: dict[str, Any], key: str) -> list[str]:
    value = metadata.get(key)
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int) and not isinstance(v, bool)]
    return [value] if isinstance(value, str) and value else []


def _tags(metadata: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(v for key in _TAG_KEYS for v in _values(metadata, key)))


def _citekey(metadata: dict[str, Any]) -> str | None:
    key = metadata.get("citekey")
    return key.strip() if isinstance(key, str) and key.strip() else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _pages(metadata: dict[str, Any]) -> list[int]:
    """The chunk's first and last page: ``page_start``/``page_end`` as ingestion records
    them for PDFs, else a ``pages`` list or a single ``page``; empty when unknown."""
    start, end = _int(metadata.get("page_start")), _int(metadata.get("page_end"))
    if start is not None:
        return [start] if end is None or end == start else [start, end]
    for key in ("pages", "page_numbers", "page_no", "page"):
        value = metadata.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return [value]
        if isinstance(value, list):
            return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
    return []


def _page_label(metadata: dict[str, Any]) -> str | None:
    """The number printed on the passage's page(s) (``"1234"``), ``None`` when unknown."""
    label = metadata.get("page_label")
    if not isinstance(label, str) or not label.strip():
        return None
    return " ".join(label.split())[:40]


def _language(metadata: dict[str, Any]) -> str | None:
    language = metadata.get("language")
    return language if isinstance(language, str) and language and language != "und" else None


def display_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The fields a person or an agent reads about a passage (display names only)."""
    year = metadata.get("year")
    return {
        "file": metadata.get("file_name"),
        "title": metadata.get("title") or metadata.get("file_name") or "",
        "authors": _authors(metadata),
        "year": year if isinstance(year, int) and not isinstance(year, bool) else None,
        "journal": metadata.get("journal"),
        "doi": metadata.get("doi"),
        "headings": [h for h in metadata.get("headings") or [] if isinstance(h, str)],
        "pages": _pages(metadata),
        "page_label": _page_label(metadata),
        "regions": regions_of(metadata),
        "tags": _tags(metadata),
        "collections": _values(metadata, "collections"),
        "citekey": _citekey(metadata),
        "language": _language(metadata),
    }


def facet_values(shown: dict[str, Any], key: str) -> list[str]:
    """The values of facet ``key`` in ``shown``, a paper's :func:`display_metadata`."""
    if key == "year":
        return [str(shown["year"])] if shown["year"] is not None else []
    if key == "author":
        return list(shown["authors"])
    if key == "journal":
        return [shown["journal"]] if isinstance(shown["journal"], str) else []
    if key == "collection":
        return list(shown["collections"])
    if key == "language":
        return [shown["language"]] if isinstance(shown.get("language"), str) else []
    return list(shown["tags"])


@dataclass(frozen=True)
class Paper:
    """One source file: its shared metadata and its passages in reading order."""

    file_name: str
    metadata: dict[str, Any]
    passages: tuple[Document, ...] = field(default=())

    def facet_values(self, key: str) -> list[str]:
        """The values of facet ``key`` (one of :data:`FACET_KEYS`) this paper holds."""
        return facet_values(display_metadata(self.metadata), key)

    def summary(self) -> dict[str, Any]:
        """The paper's display metadata, its page span and its passage count."""
        pages = [p for doc in self.passages for p in _pages(doc.metadata)]
        span = [min(pages), max(pages)] if pages else []
        return {
            **display_metadata(self.metadata),
            "pages": span[:1] if span and span[0] == span[1] else span,
            "passages": len(self.passages),
        }


def check_facet_keys(keys: Sequence[str]) -> None:
    """Raise ``ValueError`` naming every key that is not one of :data:`FACET_KEYS`."""
    unknown = [k for k in keys if k not in FACET_KEYS]
    if unknown:
        raise ValueError(
            f"unknown facet key(s) {', '.join(map(repr, unknown))}; "
            f"choose from {', '.join(FACET_KEYS)}"
        )
