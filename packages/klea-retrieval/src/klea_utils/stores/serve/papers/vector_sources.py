"""Papers read from the vector stores, for configurations with no BM25 store.

Each chunk in a klea vector store carries its metadata (``file_name``, title, authors,
...), so one paper's chunks are a metadata filter on ``file_name`` (Chroma ``where``,
a Qdrant payload filter, PGVector's JSONB column). Counting passages per paper, and the
metadata of every paper for facets, read the metadata of every chunk in pages of
:data:`PAGE` (never the vectors); the result is kept until the store's chunk count
changes, so facets over the whole library cost one scan per change, and what is kept
grows with the number of papers, not of passages.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

from klea_utils.stores._retrieval.vector_reads import chroma_pages
from klea_utils.stores.serve.papers.sources import PaperSource
from klea_utils.stores.store_uri import StoreURI
from langchain_core.documents import Document

__all__ = [
    "PAGE",
    "ChromaPaperSource",
    "PGVectorPaperSource",
    "QdrantPaperSource",
    "VectorPaperSource",
    "vector_paper_source",
]

PAGE = 2_000
"""Chunks read per request when scanning a collection's metadata."""


class VectorPaperSource(PaperSource):
    """A vector store's papers: a filter per paper, a cached metadata scan for all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cached: tuple[int, dict[str, int], dict[str, dict[str, Any]]] | None = None

    def count(self) -> int:
        """Chunks in the collection (cheap: the cache's key)."""
        raise NotImplementedError

    def scan(self) -> Iterator[dict[str, Any]]:
        """The metadata of every chunk, page by page."""
        raise NotImplementedError

    def version(self) -> Hashable:
        return self.count()

    def _table(self) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
        count = self.count()
        with self._lock:
            if self._cached is None or self._cached[0] != count:
                counts: dict[str, int] = {}
                first: dict[str, tuple[int, dict[str, Any]]] = {}
                for metadata in self.scan():
                    name = metadata.get("file_name")
                    if not isinstance(name, str) or not name:
                        continue
                    counts[name] = counts.get(name, 0) + 1
                    index = metadata.get("chunk_index")
                    order = index if isinstance(index, int) else 1 << 30
                    if name not in first or order < first[name][0]:
                        first[name] = (order, metadata)
                self._cached = (count, counts, {n: m for n, (_, m) in first.items()})
            return self._cached[1], self._cached[2]

    def passage_counts(self) -> dict[str, int]:
        return dict(self._table()[0])

    def paper_metadata(self, file_names: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        table = self._table()[1]
        names = table if file_names is None else [n for n in file_names if n in table]
        return {name: table[name] for name in names}


class ChromaPaperSource(VectorPaperSource):
    """A Chroma collection (``KleaChroma``, whose ``get`` decodes klea's list metadata)."""

    label = "chroma"

    def __init__(self, store: Any) -> None:
        super().__init__()
        self.store = store

    def count(self) -> int:
        return int(self.store._collection.count())

    def scan(self) -> Iterator[dict[str, Any]]:
        return (m for m in chroma_pages(self.store, "metadatas", PAGE) if m)

    def passages(self, file_name: str) -> list[Document]:
        found = self.store.get(where={"file_name": file_name}, include=["documents", "metadatas"])
        return [
            Document(id=rid, page_content=text or "", metadata=dict(meta or {}))
            for rid, text, meta in zip(
                found["ids"], found["documents"], found["metadatas"], strict=True
            )
        ]


class QdrantPaperSource(VectorPaperSource):
    """A Qdrant collection (``KleaQdrantVectorStore``: local folder or server)."""

    label = "qdrant"

    def __init__(self, store: Any) -> None:
        super().__init__()
        self.store = store

    def count(self) -> int:
        result = self.store.client.count(self.store.collection_name, exact=True)
        return int(result.count)

    def _points(self, scroll_filter: Any, payload: Any) -> Iterator[Any]:
        offset = None
        while True:
            points, offset = self.store.client.scroll(
                self.store.collection_name,
                scroll_filter=scroll_filter,
                limit=PAGE,
                offset=offset,
                with_payload=payload,
                with_vectors=False,
            )
            yield from points
            if offset is None:
                return

    def scan(self) -> Iterator[dict[str, Any]]:
        key = self.store.metadata_payload_key
        for point in self._points(None, [key]):
            yield dict((point.payload or {}).get(key) or {})

    def passages(self, file_name: str) -> list[Document]:
        from qdrant_client import models

        key = f"{self.store.metadata_payload_key}.file_name"
        match = models.FieldCondition(key=key, match=models.MatchValue(value=file_name))
        docs = []
        for point in self._points(models.Filter(must=[match]), True):
            doc = self.store._document_from_point(
                point,
                self.store.collection_name,
                self.store.content_payload_key,
                self.store.metadata_payload_key,
            )
            doc.metadata.pop("_id", None)
            doc.metadata.pop("_collection_name", None)
            docs.append(doc)
        return docs


class PGVectorPaperSource(VectorPaperSource):
    """A PGVector collection (``KleaPGVector``), read with SQLAlchemy."""

    label = "pgvector"

    def __init__(self, store: Any) -> None:
        super().__init__()
        self.store = store

    def _query(self, session: Any, *columns: Any) -> Any:
        table = self.store.EmbeddingStore
        collection = self.store.get_collection(session)
        if collection is None:
            return None
        return session.query(*columns).filter(table.collection_id == collection.uuid)

    def count(self) -> int:
        from sqlalchemy import func

        with self.store._make_sync_session() as session:
            query = self._query(session, func.count(self.store.EmbeddingStore.id))
            return int(query.scalar()) if query is not None else 0

    def scan(self) -> Iterator[dict[str, Any]]:
        table = self.store.EmbeddingStore
        with self.store._make_sync_session() as session:
            query = self._query(session, table.cmetadata)
            if query is None:
                return
            for (metadata,) in query.yield_per(PAGE):
                yield dict(metadata or {})

    def passages(self, file_name: str) -> list[Document]:
        """The file's chunks under their chunk ids (stored ids lose the collection prefix)."""
        from klea_utils.stores._retrieval.pg_layout import public_id

        table = self.store.EmbeddingStore
        with self.store._make_sync_session() as session:
            columns = (table.id, table.document, table.cmetadata, table.collection_id)
            query = self._query(session, *columns)
            if query is None:
                return []
            rows = query.filter(table.cmetadata["file_name"].astext == file_name).all()
        return [
            Document(id=public_id(rid, collection), page_content=text, metadata=dict(meta))
            for rid, text, meta, collection in rows
        ]


def vector_paper_source(path: str, store: Any) -> VectorPaperSource:
    """The paper source of the loaded vector store ``store`` at URI ``path``.

    Raises:
        ValueError: When the scheme is not chroma, qdrant or pgvector.
    """
    scheme = StoreURI.vector(path).scheme
    if scheme == "chroma":
        return ChromaPaperSource(store)
    if scheme == "qdrant":
        return QdrantPaperSource(store)
    if scheme == "pgvector":
        return PGVectorPaperSource(store)
    raise ValueError(f"vector store {path!r}: no paper source for scheme {scheme!r}")
