"""Context around a hit: a chunk widened with its neighbours of the same section.

An answer whose sentence straddles a chunk boundary, or whose question words sit in the
chunk before the one with the number, is read whole when each hit comes with the chunks
around it. klea-ingest gives every chunk ``chunk_index`` (its place in the file) and
``section_index`` (shared by a run of chunks under one heading chain); :func:`widen`
joins a hit with chunks of the same file and section:

- ``neighbours``: the chunk after it, then the one before, while the passage stays
  within the token budget;
- ``section``: as many chunks of the section around it as the budget allows, alternately
  after and before.

Tokens are estimated (:func:`estimate_tokens`: words and punctuation marks, close to a
word-piece count for English prose), since the retriever holds no chunking tokenizer.
Text a chunk repeats from the one before (``--overlap-sentences``) and its heading lines
are not repeated. The widened hit's ``page_start``/``page_end`` span the chunks joined,
so the references show the passage's page range; its ``regions`` are theirs joined in
order, and its ``page_label`` is kept only when every joined chunk has the same one;
``_context_chunks`` lists their indices.

Neighbours are looked up by a :class:`NeighbourSource` over a store of the domain:
:func:`neighbour_source` builds one for a BM25 corpus held in memory, a Chroma collection
or a Qdrant collection (by metadata filter), and for an ``fts5:`` index or a PGVector
collection by id: klea-ingest names chunks ``<file_name>:<chunk_index>``, so the chunks
around a hit are fetched by the ids of a window around its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard, get_args

from klea_utils.stores._retrieval.regions import REGIONS_KEY, join_regions
from langchain_core.documents import Document

__all__ = [
    "CHUNK_INDEX_KEY",
    "CONTEXT_MODES",
    "DEFAULT_CONTEXT",
    "DEFAULT_CONTEXT_TOKENS",
    "NO_ORDER_NOTE",
    "NO_SOURCE_NOTE",
    "SECTION_INDEX_KEY",
    "ContextMode",
    "NeighbourSource",
    "check_context",
    "estimate_tokens",
    "neighbour_source",
    "widen",
    "widen_hits",
]

ContextMode = Literal["off", "neighbours", "section"]
CONTEXT_MODES: tuple[str, ...] = get_args(ContextMode)

DEFAULT_CONTEXT: ContextMode = "neighbours"
"""Whether hits are widened unless asked otherwise."""

DEFAULT_CONTEXT_TOKENS = 768
"""Token budget of a widened passage (the hit included)."""

NO_SOURCE_NOTE = "context: no store of this domain can look chunks up by metadata; not widened"
"""The note of :func:`widen_hits` for a domain whose stores cannot widen at all."""

NO_ORDER_NOTE = (
    "context: the chunks record no order (chunk_index, section_index); rebuild the "
    "stores with this klea-ingest to widen hits; not widened"
)
"""The note of :func:`widen_hits` for stores built before chunks recorded their order."""

CHUNK_INDEX_KEY = "chunk_index"
SECTION_INDEX_KEY = "section_index"

_TOKEN = re.compile(r"\w+|[^\w\s]")
_CHUNK_ID = re.compile(r"^(?P<file>.+):(?P<index>\d+)$")
_ID_WINDOW = 24
"""Chunks fetched on each side of a hit by a store that looks chunks up by id."""

Lookup = Callable[[str, int], list[Document]]
"""``(file_hash, section_index)`` to the chunks of that section, in any order."""

FetchIds = Callable[[list[str]], list[Document]]
"""Chunk ids to the stored chunks (unknown ids left out)."""


def estimate_tokens(text: str) -> int:
    """About how many word pieces ``text`` is: its words and punctuation marks."""
    return len(_TOKEN.findall(text))


def check_context(context: str, context_tokens: int) -> ContextMode:
    """``context`` as a :data:`ContextMode`.

    Raises:
        ValueError: An unknown mode, or a budget below 1.
    """
    if context not in CONTEXT_MODES:
        raise ValueError(f"context must be one of {', '.join(CONTEXT_MODES)}; got {context!r}")
    if (
        isinstance(context_tokens, bool)
        or not isinstance(context_tokens, int)
        or context_tokens < 1
    ):
        raise ValueError(f"context_tokens must be an integer >= 1, got {context_tokens!r}")
    return context  # type: ignore[return-value]


@dataclass(frozen=True)
class NeighbourSource:
    """Looks up the chunks of one section of one file in a store.

    Attributes:
        name: The store, for notes (``"BM25 store 'papers.bm25'"``).
        lookup: ``(file_hash, section_index)`` to that section's chunks, for a store
            that filters by metadata.
        fetch_ids: Chunk ids to chunks, for a store read by id; the ids around a hit's
            own (``<file_name>:<chunk_index>``) are fetched.
    """

    name: str
    lookup: Lookup | None = None
    fetch_ids: FetchIds | None = None

    def section_of(self, hit: Document, file_hash: str, section: int, index: int) -> list[Document]:
        """The chunks of the hit's section this store holds (a window of it, by id)."""
        if self.lookup is not None:
            return self.lookup(file_hash, section)
        match = _CHUNK_ID.match(str(hit.id or ""))
        if self.fetch_ids is None or match is None or int(match["index"]) != index:
            return []
        first = max(0, index - _ID_WINDOW)
        ids = [f"{match['file']}:{i}" for i in range(first, index + _ID_WINDOW + 1)]
        return [
            doc
            for doc in self.fetch_ids(ids)
            if (place := _place(doc)) is not None and place[:2] == (file_hash, section)
        ]


def _place(doc: Document) -> tuple[str, int, int] | None:
    """``(file_hash, section_index, chunk_index)`` of a chunk that records its order."""
    meta = doc.metadata
    file_hash, section, index = (
        meta.get("file_hash"),
        meta.get(SECTION_INDEX_KEY),
        meta.get(CHUNK_INDEX_KEY),
    )
    if not isinstance(file_hash, str) or not _is_int(section) or not _is_int(index):
        return None
    return file_hash, section, index


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _body(doc: Document) -> str:
    """A chunk's text without the heading lines that open it."""
    text = doc.page_content
    headings = doc.metadata.get("headings")
    if isinstance(headings, list | tuple) and headings:
        prefix = "\n".join(str(h) for h in headings) + "\n"
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


def _join(first: str, second: str) -> str:
    """``first`` then ``second``, text that ``second`` repeats from the end of ``first`` once."""
    probe = second[:24]
    if len(probe) >= 8:
        start = first.find(probe)
        while start != -1:
            if second.startswith(first[start:]):
                return first + second[len(first) - start :]
            start = first.find(probe, start + 1)
    return f"{first}\n{second}"


def _pages(docs: Iterable[Document]) -> tuple[int, int] | None:
    pages: list[int] = []
    for doc in docs:
        for key in ("page_start", "page_end"):
            value = doc.metadata.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                pages.append(value)
    return (min(pages), max(pages)) if pages else None


def widen(hit: Document, section: Sequence[Document], mode: ContextMode, budget: int) -> Document:
    """``hit`` joined with chunks of ``section`` around it, within ``budget`` tokens.

    ``section`` holds the chunks of the hit's section (any order; others are ignored).
    A hit without order metadata, or ``mode`` ``off``, is returned as it is.
    """
    place = _place(hit)
    if mode == "off" or place is None:
        return hit
    file_hash, section_index, index = place
    by_index = {
        p[2]: d
        for d in section
        if (p := _place(d)) is not None and p[0] == file_hash and p[1] == section_index
    }
    by_index[index] = hit
    low = high = index
    used = estimate_tokens(hit.page_content)
    reach = 1 if mode == "neighbours" else len(by_index)
    for step in range(1, reach + 1):
        grown = False
        for candidate in (index + step, index - step):
            doc = by_index.get(candidate)
            if doc is None or candidate not in (high + 1, low - 1):
                continue
            cost = estimate_tokens(_body(doc))
            if used + cost > budget:
                continue
            used += cost
            low, high = min(low, candidate), max(high, candidate)
            grown = True
        if not grown:
            break
    if low == high:
        return hit
    chunks = [by_index[i] for i in range(low, high + 1)]
    text = chunks[0].page_content
    for doc in chunks[1:]:
        text = _join(text, _body(doc))
    metadata = {**hit.metadata, "_context_chunks": list(range(low, high + 1))}
    pages = _pages(chunks)
    if pages is not None:
        metadata["page_start"], metadata["page_end"] = pages
    regions = join_regions(doc.metadata for doc in chunks)
    if regions:
        metadata[REGIONS_KEY] = regions
    labels = {doc.metadata.get("page_label") for doc in chunks}
    if len(labels) > 1:  # the joined chunks print other page numbers: the pages say it
        metadata.pop("page_label", None)
    return hit.model_copy(update={"page_content": text, "metadata": metadata})


def widen_hits(
    hits: Sequence[tuple[Document, float]],
    sources: Sequence[NeighbourSource],
    mode: ContextMode,
    budget: int,
    limit: int | None = None,
) -> tuple[list[tuple[Document, float]], list[str]]:
    """Each hit widened (:func:`widen`), and notes on what could not be done.

    A hit whose chunk a better hit's passage already holds is dropped, so the passages
    read are distinct; ``limit`` passages are returned at most. Without a source, or
    when no hit records its order (stores built before chunks carried it), the hits
    come back as they are with a note.
    """
    if mode == "off":
        return list(hits[:limit] if limit else hits), []
    if not sources:
        return list(hits[:limit] if limit else hits), [NO_SOURCE_NOTE]
    if not any(_place(doc) is not None for doc, _ in hits):
        return list(hits[:limit] if limit else hits), [NO_ORDER_NOTE] if hits else []
    out: list[tuple[Document, float]] = []
    held: set[tuple[str, int]] = set()
    notes: list[str] = []
    for doc, score in hits:
        if limit and len(out) >= limit:
            break
        place = _place(doc)
        if place is None:
            out.append((doc, score))
            continue
        if (place[0], place[2]) in held:
            continue
        section = _section(sources, doc, place, notes)
        wide = widen(doc, section, mode, budget)
        indices = wide.metadata.get("_context_chunks") or [place[2]]
        held.update((place[0], i) for i in indices)
        out.append((wide, score))
    return out, notes


def _section(
    sources: Sequence[NeighbourSource],
    hit: Document,
    place: tuple[str, int, int],
    notes: list[str],
) -> list[Document]:
    for source in sources:
        try:
            found = source.section_of(hit, *place)
        except Exception as exc:  # a failing lookup leaves the hit as it is
            notes.append(f"context: {source.name}: {type(exc).__name__}: {exc}")
            continue
        if found:
            return found
    return []


def neighbour_source(scheme: str, name: str, store: Any) -> NeighbourSource | None:
    """A :class:`NeighbourSource` over a loaded store, ``None`` where none is offered.

    ``scheme`` is the store's kind: ``bm25`` (a corpus in memory or an ``fts5:`` index),
    ``chroma``, ``qdrant`` or ``pgvector``.
    """
    if scheme == "bm25" and hasattr(store, "docs"):
        return NeighbourSource(f"BM25 store {name!r}", lookup=_memory_lookup(store.docs))
    if scheme == "bm25" and hasattr(store, "documents"):
        return NeighbourSource(f"BM25 store {name!r}", fetch_ids=store.documents)
    if scheme == "chroma":
        return NeighbourSource(f"vector store {name!r}", lookup=_chroma_lookup(store))
    if scheme == "qdrant":
        return NeighbourSource(f"vector store {name!r}", lookup=_qdrant_lookup(store))
    if scheme == "pgvector" and hasattr(store, "get_by_ids"):
        return NeighbourSource(f"vector store {name!r}", fetch_ids=store.get_by_ids)
    return None


def _memory_lookup(docs: Sequence[Document]) -> Lookup:
    sections: dict[tuple[str, int], list[Document]] = {}
    for doc in docs:
        place = _place(doc)
        if place is not None:
            sections.setdefault(place[:2], []).append(doc)
    return lambda file_hash, section: sections.get((file_hash, section), [])


def _chroma_lookup(store: Any) -> Lookup:
    def lookup(file_hash: str, section: int) -> list[Document]:
        where = {"$and": [{"file_hash": file_hash}, {SECTION_INDEX_KEY: section}]}
        found = store.get(where=where, include=["documents", "metadatas"])
        return [
            Document(id=i, page_content=text or "", metadata=meta or {})
            for i, text, meta in zip(
                found["ids"], found["documents"], found["metadatas"], strict=True
            )
        ]

    return lookup


def _qdrant_lookup(store: Any) -> Lookup:
    def lookup(file_hash: str, section: int) -> list[Document]:
        from qdrant_client import models

        key = store.metadata_payload_key
        condition = models.Filter(
            must=[
                models.FieldCondition(
                    key=f"{key}.file_hash", match=models.MatchValue(value=file_hash)
                ),
                models.FieldCondition(
                    key=f"{key}.{SECTION_INDEX_KEY}", match=models.MatchValue(value=section)
                ),
            ]
        )
        points, _ = store.client.scroll(
            store.collection_name, scroll_filter=condition, limit=1000, with_payload=True
        )
        content = store.content_payload_key
        return [
            Document(
                id=str(p.id),
                page_content=(p.payload or {}).get(content) or "",
                metadata=(p.payload or {}).get(key) or {},
            )
            for p in points
        ]

    return lookup
