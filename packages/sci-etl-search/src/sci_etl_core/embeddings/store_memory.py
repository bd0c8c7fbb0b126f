"""A vector memory in a dict: the reference implementation and a test double."""

from __future__ import annotations

from array import array
from collections.abc import AsyncIterator, Sequence

from sci_etl_core.embeddings._ranking import prepare_query, rank_rows
from sci_etl_core.embeddings._vectors import ScanMatrix, unit_vector
from sci_etl_core.embeddings.store_base import (
    AsyncEmbeddingStore,
    EmbeddingChunk,
    SearchHit,
    StoredRecord,
    _check_chunks_belong,
    check_batch_size,
    check_chunks,
    check_query_args,
)

__all__ = ["InMemoryEmbeddingStore"]


class InMemoryEmbeddingStore(AsyncEmbeddingStore):
    """Non-persistent vector memory with exact cosine scan.

    Behaves as :class:`~sci_etl_core.embeddings.store_sqlite.AsyncSqliteEmbeddingStore`
    does (both pass one conformance suite), so tests and small tools can use it in its
    place. Metadata is copied on the way in and out, so callers cannot mutate stored rows.
    """

    def __init__(self) -> None:
        self._chunks: dict[tuple[str, int], tuple[EmbeddingChunk, array[float]]] = {}
        self._dimension: int | None = None
        self._matrix: tuple[ScanMatrix, list[tuple[str, int]]] | None = None

    async def add(self, chunks: Sequence[EmbeddingChunk]) -> None:
        """Store ``chunks``, replacing any chunk with the same record and index."""
        dimension = check_chunks(chunks, self._dimension if self._chunks else None)
        for chunk in chunks:
            stored = EmbeddingChunk(
                chunk.record_id, chunk.chunk_index, chunk.text, chunk.vector, dict(chunk.metadata)
            )
            self._chunks[(chunk.record_id, chunk.chunk_index)] = (
                stored,
                unit_vector(chunk.vector),
            )
        if chunks:
            self._dimension = dimension
            self._matrix = None

    async def delete_record(self, record_id: str) -> None:
        """Remove every chunk of ``record_id``."""
        doomed = [key for key in self._chunks if key[0] == record_id]
        for key in doomed:
            del self._chunks[key]
        if doomed:
            self._matrix = None

    async def replace_record(self, record_id: str, chunks: Sequence[EmbeddingChunk]) -> None:
        """Make ``chunks`` the only chunks of ``record_id``, validating before any change."""
        _check_chunks_belong(record_id, chunks)
        others = {k: v for k, v in self._chunks.items() if k[0] != record_id}
        saved = (self._chunks, self._dimension)
        self._chunks = others
        try:
            await self.add(chunks)
        except BaseException:
            self._chunks, self._dimension = saved
            raise
        self._matrix = None

    async def count(self) -> int:
        """Return how many chunks are stored."""
        return len(self._chunks)

    async def query(
        self,
        vector: Sequence[float],
        top_k: int = 5,
        min_score: float = -1.0,
        exclude_record_id: str | None = None,
    ) -> list[SearchHit]:
        """Return the chunks most similar to ``vector``, best first."""
        check_query_args(top_k, min_score)
        query = prepare_query(vector, self._dimension if self._chunks else None)
        if top_k < 1 or not self._chunks:
            return []
        matrix, keys = self._scan_matrix()
        ranked = rank_rows(
            matrix,
            keys,
            query,
            top_k=top_k,
            min_score=min_score,
            exclude_record_id=exclude_record_id,
        )
        hits = []
        for row, score in ranked:
            chunk = self._chunks[keys[row]][0]
            hits.append(
                SearchHit(
                    chunk.record_id, chunk.chunk_index, chunk.text, score, dict(chunk.metadata)
                )
            )
        return hits

    def _scan_matrix(self) -> tuple[ScanMatrix, list[tuple[str, int]]]:
        if self._matrix is None:
            keys = sorted(self._chunks)
            dimension = self._dimension or 0
            self._matrix = (ScanMatrix(dimension, [self._chunks[k][1] for k in keys]), keys)
        return self._matrix

    async def iter_records(self, batch_size: int = 100) -> AsyncIterator[StoredRecord]:
        """Yield every record in ``record_id`` order, passages in chunk order."""
        check_batch_size(batch_size)
        by_record: dict[str, list[EmbeddingChunk]] = {}
        for key in sorted(self._chunks):
            by_record.setdefault(key[0], []).append(self._chunks[key][0])
        for record_id, chunks in by_record.items():
            yield StoredRecord(record_id, tuple(c.text for c in chunks), dict(chunks[0].metadata))
