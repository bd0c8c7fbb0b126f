"""A domain's klea vector stores as sci-etl-search's vector memory, for hybrid search and graphs.

``klea-stores-create build`` writes every chunk once, under one readable id
``<file_name>:<chunk_index>``, into the vector store (Chroma, Qdrant or PGVector) and
into the ``fts5:`` index. :class:`KleaVectorMemory` reads the vector store through
sci-etl-search's :class:`~sci_etl_core.embeddings.store_base.AsyncEmbeddingStore`
interface with one record per chunk (record id = chunk id, ``chunk_index`` 0), so
:class:`~sci_etl_core.search.hybrid_async.AsyncHybridSearcher` fuses the ``fts5:``
index's hits and the vector store's under the same ids, with no second chunking or
embedding. :class:`KleaVectorEdgeSource` grows discovery graphs from the stored vectors.

The memory is read-only (``add`` and ``delete_record`` raise
:class:`~sci_etl_core.exceptions.EmbeddingStoreError`): ``build`` writes the store.
Queries must be embedded with the model the store was built with (the domain's
``--embedding-model``); :class:`LangChainEmbedder` turns klea's LangChain embeddings into
sci-etl-search's ``AsyncEmbedder``.

:func:`open_for_sci_etl` is the ``sci_etl_core.vector_stores`` entry point that lets
``sci-etl-search search --store COLLECTION=URI`` search a klea collection.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Sequence
from typing import Any

from klea_utils.stores._retrieval.vector_reads import VectorReader, vector_reader
from sci_etl_core.embeddings.async_base import AsyncEmbedder
from sci_etl_core.embeddings.store_base import AsyncEmbeddingStore, EmbeddingChunk, SearchHit
from sci_etl_core.exceptions import EmbeddingDimensionError, EmbeddingError, EmbeddingStoreError
from sci_etl_core.search.edges import AsyncEdgeSource

__all__ = [
    "KleaVectorEdgeSource",
    "KleaVectorMemory",
    "LangChainEmbedder",
    "open_for_sci_etl",
    "open_vector_memory",
]

_log = logging.getLogger(__name__)


def _query_vector(vector: Sequence[float]) -> list[float]:
    values = [float(x) for x in vector]
    if not values:
        raise ValueError("query vector must not be empty")
    if not all(math.isfinite(x) for x in values):
        raise ValueError("query vector holds a value that is not finite")
    if not any(values):
        raise ValueError("query vector must not be all zeros")
    return values


def _check_top_k(top_k: int, min_score: float) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int):
        raise TypeError(f"top_k must be an int, got {type(top_k).__name__}")
    if not math.isfinite(min_score):
        raise ValueError(f"min_score must be finite, got {min_score!r}")


class KleaVectorMemory(AsyncEmbeddingStore):
    """klea vector stores read as one sci-etl vector memory, one record per chunk.

    ``stores`` are LangChain vector stores klea opened
    (:func:`~klea_utils.stores.utils.instantiate_vector_store`, or a pipeline's loaded
    stores); several are searched together and their hits merged by score. ``label``
    names them in error messages. The memory borrows the stores and never closes them.

    Raises:
        TypeError: A store is not a Chroma, Qdrant or PGVector store.
        ValueError: ``stores`` is empty.
    """

    records_are_chunks = True
    """Each chunk is its own record (its ``<file>:<n>`` id)."""

    def __init__(self, stores: Sequence[Any], *, label: str = "klea vector store") -> None:
        if not stores:
            raise ValueError("KleaVectorMemory needs at least one vector store")
        self.readers: list[VectorReader] = [vector_reader(s) for s in stores]
        self.label = label
        self._dimension: int | None = None

    async def _call(self, what: str, function: Any, *args: Any) -> Any:
        try:
            return await asyncio.to_thread(function, *args)
        except (EmbeddingStoreError, ValueError, TypeError):
            raise
        except Exception as exc:
            raise EmbeddingStoreError(
                f"{self.label}: {what} failed: {type(exc).__name__}: {exc}"
            ) from exc

    async def add(self, chunks: Sequence[EmbeddingChunk]) -> None:
        """Refuse: ``klea-stores-create build`` writes a klea vector store."""
        raise EmbeddingStoreError(
            f"{self.label} is read-only here: add chunks with klea-stores-create build"
        )

    async def delete_record(self, record_id: str) -> None:
        """Refuse: ``klea-stores-create build`` keeps a klea vector store in step."""
        raise EmbeddingStoreError(
            f"{self.label} is read-only here: remove files with klea-stores-create build"
        )

    async def count(self) -> int:
        """How many chunks the stores hold."""
        counts = [await self._call("count", r.count) for r in self.readers]
        return sum(counts)

    async def dimension(self) -> int | None:
        """The stores' vector dimension, ``None`` while they are empty."""
        if self._dimension is None:
            for reader in self.readers:
                sample = await self._call("reading a vector", reader.sample_vector)
                if sample is not None:
                    self._dimension = len(sample)
                    break
        return self._dimension

    async def query(
        self,
        vector: Sequence[float],
        top_k: int = 5,
        min_score: float = -1.0,
        exclude_record_id: str | None = None,
    ) -> list[SearchHit]:
        """The ``top_k`` chunks nearest ``vector`` by cosine similarity, best first.

        Equal scores are ordered by record id. The stores' own index answers (Chroma's is
        approximate: HNSW).

        Raises:
            ValueError: ``vector`` is empty, all zeros, or not finite.
            EmbeddingDimensionError: ``vector`` has another dimension than the stores'.
            EmbeddingStoreError: A store cannot be read.
        """
        _check_top_k(top_k, min_score)
        values = _query_vector(vector)
        dimension = await self.dimension()
        if dimension is None or top_k < 1:
            return []
        if len(values) != dimension:
            raise EmbeddingDimensionError(
                f"query vector has dimension {len(values)}, but {self.label} holds {dimension}"
            )
        wanted = top_k + (1 if exclude_record_id is not None else 0)
        found: dict[str, SearchHit] = {}
        for reader in self.readers:
            pairs = await self._call("a nearest-neighbour query", reader.nearest, values, wanted)
            for doc, score in pairs:
                record_id = str(doc.id)
                if record_id == exclude_record_id or score < min_score:
                    continue
                hit = SearchHit(record_id, 0, doc.page_content, score, dict(doc.metadata))
                if record_id not in found or found[record_id].score < score:
                    found[record_id] = hit
        return sorted(found.values(), key=lambda h: (-h.score, h.record_id))[:top_k]

    async def vectors(self, record_ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored vectors of ``record_ids`` (chunk ids); unknown ids are left out."""
        ids = list(dict.fromkeys(record_ids))
        out: dict[str, list[float]] = {}
        for reader in self.readers:
            missing = [i for i in ids if i not in out]
            if missing:
                out.update(await self._call("reading vectors", reader.vectors, missing))
        return out

    async def neighbours(
        self, record_ids: Sequence[str], top_k: int, *, min_score: float = -1.0
    ) -> dict[str, list[SearchHit]]:
        """Each record's ``top_k`` nearest other chunks, by its stored vector.

        A record the stores do not hold maps to an empty list.
        """
        ids = list(dict.fromkeys(record_ids))
        stored = await self.vectors(ids)
        result: dict[str, list[SearchHit]] = {i: [] for i in ids}
        for record_id, vector in stored.items():
            result[record_id] = await self.query(
                vector, top_k=top_k, min_score=min_score, exclude_record_id=record_id
            )
        return result


class KleaVectorEdgeSource(AsyncEdgeSource):
    """Discovery-graph edges between chunks close in meaning, from their stored vectors.

    Unlike :class:`~sci_etl_core.search.edges.EmbeddingEdgeSource`, nothing is embedded:
    each chunk's own vector (written by ``build``) is the query. The weight is the
    cosine similarity, at least 0.
    """

    def __init__(self, memory: KleaVectorMemory) -> None:
        self.memory = memory

    @property
    def kind(self) -> str:
        """Always ``"semantic"``."""
        return "semantic"

    async def neighbours(
        self, record_ids: Sequence[str], limit: int
    ) -> dict[str, list[tuple[str, float]]]:
        """Each record's ``limit`` most similar other chunks, best first."""
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise ValueError(f"limit must be an int, got {limit!r}")
        if limit < 1:
            return {rid: [] for rid in dict.fromkeys(record_ids)}
        found = await self.memory.neighbours(record_ids, limit, min_score=0.0)
        return {rid: [(h.record_id, h.score) for h in hits] for rid, hits in found.items()}


class LangChainEmbedder(AsyncEmbedder):
    """A LangChain ``Embeddings`` as sci-etl-search's ``AsyncEmbedder``.

    One text is embedded as a query (``embed_query``, as klea's vector leg does), several
    as documents; either runs in a worker thread. Failures raise
    :class:`~sci_etl_core.exceptions.EmbeddingError`, so a hybrid search degrades to its
    lexical leg instead of failing.
    """

    def __init__(self, embeddings: Any) -> None:
        self.embeddings = embeddings

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if len(texts) == 1:
            return [self.embeddings.embed_query(texts[0])]
        return list(self.embeddings.embed_documents(texts))

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts``, one vector each."""
        try:
            vectors = await asyncio.to_thread(self._embed, list(texts))
        except Exception as exc:
            raise EmbeddingError(f"embedding model failed: {type(exc).__name__}: {exc}") from exc
        return [[float(x) for x in v] for v in vectors]


def open_vector_memory(uri: str, collection: str, embeddings: Any) -> KleaVectorMemory:
    """Open the existing collection ``collection`` of the klea vector store at ``uri``.

    ``embeddings`` is the LangChain ``Embeddings`` the stores need to open (Qdrant
    probes a dimension with it when the collection is new); queries are embedded by the
    caller.

    Raises:
        StoreConfigError: ``uri`` is malformed.
        FileNotFoundError: A local Chroma store or collection does not exist.
        MissingExtraError: The backend's extra is not installed.
    """
    from klea_utils.stores.utils import instantiate_vector_store

    store = instantiate_vector_store(uri, collection, embeddings, _log, create=False)
    return KleaVectorMemory([store], label=f"{uri} collection {collection!r}")


def open_for_sci_etl(uri: str, collection: str, model: str | None = None) -> Any:
    """The ``sci_etl_core.vector_stores`` entry point: a klea collection for sci-etl-search.

    ``model`` is a klea embedding spec (``huggingface:all-MiniLM-L6-v2``, the default,
    or ``provider:model``; a bare name means ``huggingface:``): the model the collection
    was built with. Returns sci-etl-search's ``OpenedVectorStore``.
    """
    from klea_utils.stores.embedding_models import DEFAULT_EMBEDDING_MODEL, load_query_embeddings
    from sci_etl_core.embeddings.plugins import OpenedVectorStore

    spec = model or DEFAULT_EMBEDDING_MODEL
    if ":" not in spec:
        spec = f"huggingface:{spec}"
    embeddings = load_query_embeddings(spec)
    memory = open_vector_memory(uri, collection, embeddings)
    return OpenedVectorStore(memory, LangChainEmbedder(embeddings))
