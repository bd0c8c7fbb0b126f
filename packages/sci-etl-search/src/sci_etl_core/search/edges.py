"""Edge sources for discovery graphs: shared tags, closeness in the vector memory, citations."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from sci_etl_core.exceptions import EmbeddingError
from sci_etl_core.search.filters import MetadataFilter, tag_rows

if TYPE_CHECKING:
    from sci_etl_core.embeddings.async_base import AsyncEmbedder
    from sci_etl_core.embeddings.store_base import AsyncEmbeddingStore
    from sci_etl_core.search.store_base import AsyncTextSearchStore

__all__ = [
    "AsyncEdgeSource",
    "CitationEdgeSource",
    "EmbeddingEdgeSource",
    "MetadataEdgeSource",
]

Neighbours = dict[str, list[tuple[str, float]]]


def _check_limit(limit: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise ValueError(f"limit must be an int, got {limit!r}")


def _best_first(weights: dict[str, float], limit: int) -> list[tuple[str, float]]:
    ranked = sorted(weights.items(), key=lambda item: (-item[1], item[0]))
    return ranked[: max(limit, 0)]


class AsyncEdgeSource(ABC):
    """Finds each record's nearest records by one notion of relatedness, for a discovery graph.

    A source borrows the stores it reads and never closes them.
    """

    @property
    @abstractmethod
    def kind(self) -> str:
        """The kind of the edges this source produces, such as ``"semantic"``."""

    @abstractmethod
    async def neighbours(self, record_ids: Sequence[str], limit: int) -> Neighbours:
        """Return up to ``limit`` weighted neighbours for each record, best first.

        A neighbour is a ``(record_id, weight)`` pair, and a higher weight means more
        related. The ids arrive as one batch, one breadth-first level of a graph build,
        so a source can share work across them. Every requested record is a key of the
        result, mapping to an empty list when it has no neighbour.
        """


class MetadataEdgeSource(AsyncEdgeSource):
    """Relates records that share tag values, such as an arXiv category or an author.

    The weight is the Jaccard index of two records' tags under ``keys``: the
    ``(key, value)`` tags they share divided by all their distinct tags. It needs no
    embeddings, only tags built for ``keys`` in the text store (see
    :func:`~sci_etl_core.search.filters.tag_rows`).

    A batch costs one ``get_documents`` call for its records, one ``filter_ids`` call per
    distinct ``(key, value)`` tag among them, and one ``get_documents`` call for the
    candidates, so a tag shared by much of the corpus makes the candidate set large.

    Raises:
        ValueError: ``keys`` is empty, or holds a key that is not among the text store's
            ``facet_keys``.
    """

    def __init__(
        self,
        text_store: AsyncTextSearchStore,
        keys: Sequence[str] = ("categories", "authors"),
    ) -> None:
        keys = tuple(keys)
        if not keys:
            raise ValueError("MetadataEdgeSource needs at least one key")
        unknown = [key for key in keys if key not in text_store.facet_keys]
        if unknown:
            raise ValueError(
                f"MetadataEdgeSource keys {unknown} are not facet keys of the text store "
                f"(facet_keys: {sorted(text_store.facet_keys)})"
            )
        self.text_store = text_store
        self.keys = keys

    @property
    def kind(self) -> str:
        """Always ``"metadata"``."""
        return "metadata"

    async def neighbours(self, record_ids: Sequence[str], limit: int) -> Neighbours:
        """Return each record's records with the highest tag Jaccard index, best first."""
        _check_limit(limit)
        ids = list(dict.fromkeys(record_ids))
        documents = await self.text_store.get_documents(ids)
        tags = {rid: set(tag_rows(doc.metadata, self.keys)) for rid, doc in documents.items()}
        distinct = sorted(set().union(*tags.values())) if tags else []
        candidates: set[str] = set()
        for key, value in distinct:
            candidates |= await self.text_store.filter_ids(
                None, [MetadataFilter(key, frozenset({value}))]
            )
        others = await self.text_store.get_documents(sorted(candidates)) if candidates else {}
        other_tags = {rid: set(tag_rows(doc.metadata, self.keys)) for rid, doc in others.items()}
        result: Neighbours = {}
        for record in ids:
            mine = tags.get(record, set())
            weights: dict[str, float] = {}
            if mine:
                for other, theirs in other_tags.items():
                    shared = mine & theirs
                    if other != record and shared:
                        weights[other] = len(shared) / len(mine | theirs)
            result[record] = _best_first(weights, limit)
        return result


class EmbeddingEdgeSource(AsyncEdgeSource):
    """Relates records whose text means similar things, by cosine similarity in the vector memory.

    For each batch, the records' title and abstract are read from ``text_store`` and
    embedded in one ``embed`` call. Each record then runs one vector-memory query for
    ``limit`` x ``chunk_pool_factor`` chunks, excluding its own chunks, and keeps each
    other record's best chunk, as
    :meth:`~sci_etl_core.embeddings.finder_async.AsyncSimilarArticleFinder.find_similar_articles`
    does. ``chunk_pool_factor`` has the meaning of
    :attr:`~sci_etl_core.search.hybrid_async.HybridParams.chunk_pool_factor`.

    A record absent from the text index, or whose title and abstract are both blank, has
    no neighbours. Only similarities of at least 0 count.

    The embedder and stores are used through ``embed`` and ``query`` only, so importing
    this module never loads NumPy. With an exact-scan vector store, every query scans
    every stored chunk.

    Raises:
        ValueError: ``chunk_pool_factor`` is below 1.
    """

    def __init__(
        self,
        embedder: AsyncEmbedder,
        store: AsyncEmbeddingStore,
        text_store: AsyncTextSearchStore,
        *,
        chunk_pool_factor: int = 5,
    ) -> None:
        if (
            isinstance(chunk_pool_factor, bool)
            or not isinstance(chunk_pool_factor, int)
            or chunk_pool_factor < 1
        ):
            raise ValueError(f"chunk_pool_factor must be an int >= 1, got {chunk_pool_factor!r}")
        self.embedder = embedder
        self.store = store
        self.text_store = text_store
        self.chunk_pool_factor = chunk_pool_factor

    @property
    def kind(self) -> str:
        """Always ``"semantic"``."""
        return "semantic"

    async def neighbours(self, record_ids: Sequence[str], limit: int) -> Neighbours:
        """Return each record's most similar other records, best first."""
        _check_limit(limit)
        ids = list(dict.fromkeys(record_ids))
        result: Neighbours = {record: [] for record in ids}
        if limit < 1 or not ids:
            return result
        documents = await self.text_store.get_documents(ids)
        texts: dict[str, str] = {}
        for record in ids:
            document = documents.get(record)
            if document is None:
                continue
            text = "\n".join(p for p in (document.title.strip(), document.abstract.strip()) if p)
            if text:
                texts[record] = text
        if not texts:
            return result
        vectors = await self.embedder.embed(list(texts.values()))
        if len(vectors) != len(texts):
            raise EmbeddingError(f"embedder returned {len(vectors)} vectors for {len(texts)} texts")
        hits = await asyncio.gather(
            *(
                self.store.query(
                    vector,
                    top_k=limit * self.chunk_pool_factor,
                    min_score=0.0,
                    exclude_record_id=record,
                )
                for record, vector in zip(texts, vectors, strict=True)
            )
        )
        for record, record_hits in zip(texts, hits, strict=True):
            best: dict[str, float] = {}
            for hit in record_hits:
                if hit.record_id != record and hit.record_id not in best:
                    best[hit.record_id] = hit.score
            result[record] = _best_first(best, limit)
        return result


class CitationEdgeSource(AsyncEdgeSource):
    """Relates a record to the records it cites and to those citing it, in the library.

    ``links`` are ``(citing record, cited record)`` pairs, such as the links a
    citation-links file resolves inside a library, with each paper mapped to the record
    that stands for it. An edge is undirected, of weight 1.0 (a citation is there or not),
    so ``GraphParams.mutual_only`` keeps it; a record never cites itself (such a pair is
    dropped). Neighbours come best first, ties by record id. It reads no store.

    Raises:
        ValueError: A pair is not two non-empty strings.
    """

    def __init__(self, links: Iterable[tuple[str, str]]) -> None:
        self._linked: dict[str, set[str]] = {}
        for pair in links:
            if (
                not isinstance(pair, tuple)
                or len(pair) != 2
                or not all(isinstance(r, str) and r for r in pair)
            ):
                raise ValueError(
                    f"a citation link is a (citing, cited) pair of record ids, got {pair!r}"
                )
            citing, cited = pair
            if citing != cited:
                self._linked.setdefault(citing, set()).add(cited)
                self._linked.setdefault(cited, set()).add(citing)

    @property
    def kind(self) -> str:
        """Always ``"citation"``."""
        return "citation"

    async def neighbours(self, record_ids: Sequence[str], limit: int) -> Neighbours:
        """Return the records each record cites or is cited by, ordered by record id."""
        _check_limit(limit)
        return {
            record: _best_first(dict.fromkeys(self._linked.get(record, ()), 1.0), limit)
            for record in dict.fromkeys(record_ids)
        }
