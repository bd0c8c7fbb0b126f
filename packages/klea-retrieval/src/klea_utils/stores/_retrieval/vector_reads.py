"""Reading a klea vector store by vector and by chunk id, one backend each (internal).

:class:`VectorReader` is what :mod:`klea_utils.stores.sci_etl_vectors` needs from a
LangChain vector store that klea opened (Chroma, Qdrant, PGVector): the nearest chunks to
a vector with their cosine similarity, the stored vectors of given chunk ids, and the
number of chunks. Every chunk comes back under its readable ``<file_name>:<chunk_index>``
id, the id ``build`` gives it in the vector store and in the ``fts5:`` index alike.
:func:`vector_reader` picks the reader for a store. The calls block: run them in a worker
thread from async code.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.documents import Document

__all__ = ["VectorReader", "chroma_pages", "vector_reader"]

_QDRANT_INTERNAL_KEYS = ("_id", "_collection_name")
"""Metadata keys LangChain's Qdrant wrapper adds to every document it returns."""


def chroma_pages(store: Any, field: str, page: int) -> Iterator[Any]:
    """Every chunk's ``field`` (``documents``, ``metadatas``) of a LangChain Chroma store,
    read ``page`` chunks a call, in the collection's order (``None`` kept)."""
    offset = 0
    while True:
        values = store.get(include=[field], limit=page, offset=offset).get(field) or []
        yield from values
        if len(values) < page:
            return
        offset += page


def _floats(vector: Any) -> list[float]:
    return [float(x) for x in vector]


class VectorReader(ABC):
    """Nearest chunks, stored vectors and the chunk count of one klea vector store."""

    def __init__(self, store: Any) -> None:
        self.store = store

    @abstractmethod
    def nearest(self, vector: Sequence[float], k: int) -> list[tuple[Document, float]]:
        """Up to ``k`` chunks nearest ``vector``: ``(document, cosine similarity)``."""

    @abstractmethod
    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored vectors of the chunks ``ids`` (unknown ids are left out)."""

    @abstractmethod
    def count(self) -> int:
        """How many chunks the store holds."""

    @abstractmethod
    def sample_vector(self) -> list[float] | None:
        """Any one stored vector (its length is the store's dimension), ``None`` when empty."""


class ChromaReader(VectorReader):
    """A Chroma collection (klea creates them in the cosine space)."""

    def nearest(self, vector: Sequence[float], k: int) -> list[tuple[Document, float]]:
        k = min(k, self.count())
        if k < 1:
            return []
        pairs = self.store.similarity_search_by_vector_with_relevance_scores(list(vector), k=k)
        return [(doc, 1.0 - float(distance)) for doc, distance in pairs]

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        got = self.store._collection.get(ids=list(ids), include=["embeddings"])
        return {str(i): _floats(v) for i, v in zip(got["ids"], got["embeddings"], strict=True)}

    def count(self) -> int:
        return int(self.store._collection.count())

    def sample_vector(self) -> list[float] | None:
        got = self.store._collection.get(limit=1, include=["embeddings"])
        embeddings = got.get("embeddings")
        return _floats(embeddings[0]) if embeddings is not None and len(embeddings) else None


class QdrantReader(VectorReader):
    """A Qdrant collection with one unnamed cosine vector per point (klea's layout)."""

    def nearest(self, vector: Sequence[float], k: int) -> list[tuple[Document, float]]:
        if k < 1:
            return []
        pairs = self.store.similarity_search_with_score_by_vector(list(vector), k=k)
        out = []
        for doc, score in pairs:
            metadata = {k: v for k, v in doc.metadata.items() if k not in _QDRANT_INTERNAL_KEYS}
            out.append((doc.model_copy(update={"metadata": metadata}), float(score)))
        return out

    def _points(self, **kwargs: Any) -> list[Any]:
        from klea_utils.stores._retrieval.qdrant import READABLE_ID_PAYLOAD_KEY

        payload = [READABLE_ID_PAYLOAD_KEY]
        client, name = self.store.client, self.store.collection_name
        if "ids" in kwargs:
            return list(client.retrieve(name, with_vectors=True, with_payload=payload, **kwargs))
        points, _ = client.scroll(name, with_vectors=True, with_payload=payload, **kwargs)
        return list(points)

    @staticmethod
    def _vector(point: Any) -> list[float]:
        vector = point.vector
        if isinstance(vector, dict):  # named vectors: klea's is the unnamed ("") one
            vector = vector.get("", next(iter(vector.values())))
        return _floats(vector)

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        from klea_utils.stores._retrieval.qdrant import READABLE_ID_PAYLOAD_KEY, qdrant_point_id

        if not ids:
            return {}
        points = self._points(ids=[qdrant_point_id(i) for i in ids])
        return {
            str((p.payload or {}).get(READABLE_ID_PAYLOAD_KEY, p.id)): self._vector(p)
            for p in points
        }

    def count(self) -> int:
        return int(self.store.client.count(self.store.collection_name, exact=True).count)

    def sample_vector(self) -> list[float] | None:
        points = self._points(limit=1)
        return self._vector(points[0]) if points else None


class PGVectorReader(VectorReader):
    """A PGVector collection (cosine distance, klea's default strategy)."""

    def nearest(self, vector: Sequence[float], k: int) -> list[tuple[Document, float]]:
        if k < 1:
            return []
        pairs = self.store.similarity_search_with_score_by_vector(list(vector), k=k)
        return [(doc, 1.0 - float(distance)) for doc, distance in pairs]

    def _rows(self, ids: Sequence[str] | None, limit: int | None = None) -> list[tuple[str, Any]]:
        """``(chunk id, vector)`` rows of the collection (chunk ids as added, unscoped)."""
        from klea_utils.stores._retrieval.pg_layout import PGLayout, public_id, stored_id
        from sqlalchemy import select

        table = self.store.EmbeddingStore
        with self.store._make_sync_session() as session:
            collection = self.store.get_collection(session)
            if collection is None:
                return []
            stmt = select(table.id, table.embedding).where(table.collection_id == collection.uuid)
            if ids is not None:
                layout = PGLayout.of(collection.name, collection.cmetadata)
                stored = [stored_id(layout, collection.uuid, i) for i in ids]
                stmt = stmt.where(table.id.in_(stored))
            if limit is not None:
                stmt = stmt.limit(limit)
            rows = session.execute(stmt).all()
            return [(public_id(row.id, collection.uuid), row.embedding) for row in rows]

    def vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        return {chunk_id: _floats(vector) for chunk_id, vector in self._rows(ids)}

    def count(self) -> int:
        from sqlalchemy import func, select

        table = self.store.EmbeddingStore
        with self.store._make_sync_session() as session:
            collection = self.store.get_collection(session)
            if collection is None:
                return 0
            stmt = select(func.count()).where(table.collection_id == collection.uuid)
            return int(session.execute(stmt).scalar_one())

    def sample_vector(self) -> list[float] | None:
        rows = self._rows(None, limit=1)
        return _floats(rows[0][1]) if rows else None


def vector_reader(store: Any) -> VectorReader:
    """The reader for a LangChain vector store klea opened.

    Raises:
        TypeError: ``store`` is none of Chroma, Qdrant or PGVector.
    """
    kinds = {cls.__name__ for cls in type(store).__mro__}
    if "Chroma" in kinds:
        return ChromaReader(store)
    if "QdrantVectorStore" in kinds:
        return QdrantReader(store)
    if "PGVector" in kinds:
        return PGVectorReader(store)
    raise TypeError(
        f"cannot read vectors from a {type(store).__name__}: expected a Chroma, Qdrant or "
        "PGVector store opened by klea"
    )
