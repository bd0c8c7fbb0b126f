"""A paper's display fields, and papers grouped in memory: metadata, passages, facet values.

:class:`Library` groups chunk documents by ``file_name`` and orders each paper's passages
by chunk number. klea-serve no longer holds one for the whole library: it reads papers
from the stores on each call (:mod:`klea_utils.stores.serve.papers`) and groups one
paper's chunks, or a pickled corpus already in memory, with it. :func:`load_library`
reads the chunks of every BM25 store of a configuration (pickled
corpora and ``fts5:`` indexes hold every chunk with its metadata), groups them by
``file_name`` into one :class:`Library` (kept for callers that want the copy).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.retrieval.bm25 import FTS5_SCHEME, read_corpus
from klea_utils.stores.utils import display_person_names
from langchain_core.documents import Document

__all__ = [
    "FACET_KEYS",
    "Library",
    "Paper",
    "display_metadata",
    "facet_values",
    "load_library",
]

FACET_KEYS = ("year", "author", "journal", "tag", "collection")
"""Facets the service counts: one count per paper holding the value. ``tag`` counts a
paper's ``keywords`` and ``tags`` (a reference manager's tags), ``collection`` its
``collections`` (a Zotero library's)."""

_TAG_KEYS = ("keywords", "tags")


def _chunk_number(doc: Document, fallback: int) -> tuple[int, int]:
    index = doc.metadata.get("chunk_index")
    if isinstance(index, int) and not isinstance(index, bool):
        return (index, fallback)
    _, _, tail = (doc.id or "").rpartition(":")
    return (int(tail), fallback) if tail.isdigit() else (fallback, fallback)


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
        "tags": _tags(metadata),
        "collections": _values(metadata, "collections"),
        "citekey": _citekey(metadata),
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


class Library:
    """Papers by file name, built from chunk documents."""

    def __init__(self, documents: Iterable[Document]) -> None:
        grouped: dict[str, dict[str, tuple[tuple[int, int], Document]]] = {}
        for position, doc in enumerate(documents):
            name = doc.metadata.get("file_name")
            if not isinstance(name, str) or not name:
                continue
            chunks = grouped.setdefault(name, {})
            chunks.setdefault(doc.page_content, (_chunk_number(doc, position), doc))
        self.papers: dict[str, Paper] = {}
        for name in sorted(grouped):
            ordered = [doc for _, doc in sorted(grouped[name].values(), key=lambda p: p[0])]
            self.papers[name] = Paper(name, dict(ordered[0].metadata), tuple(ordered))

    @property
    def passage_count(self) -> int:
        """Passages held over all papers."""
        return sum(len(p.passages) for p in self.papers.values())


async def _fts5_documents(path: str) -> list[Document]:
    from klea_utils.stores.retrieval.fts5_index import open_fts5_store

    store = open_fts5_store(path)
    try:
        ids = sorted(await store.filter_ids(None))
        records = await store.get_documents(ids)
    finally:
        await store.aclose()
    return [
        Document(id=rid, page_content=rec.body, metadata=dict(rec.metadata))
        for rid, rec in sorted(records.items())
    ]


def load_library(config: RetrieverConfig) -> Library:
    """Read every chunk of the BM25 stores of ``config`` into a :class:`Library`.

    A store whose file is missing is skipped (retrieval reports it already).
    """
    documents: list[Document] = []
    seen: set[str] = set()
    for domain in config.domains.values():
        for store in domain.bm25_stores:
            if store.path in seen:
                continue
            seen.add(store.path)
            if store.path.startswith(FTS5_SCHEME):
                location = store.path[len(FTS5_SCHEME) :]
                if Path(location).is_file():
                    documents.extend(asyncio.run(_fts5_documents(location)))
            elif Path(store.path).is_file():
                documents.extend(read_corpus(store.path))
    return Library(documents)
