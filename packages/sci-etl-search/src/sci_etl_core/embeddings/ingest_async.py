"""Put one record's full text into the vector memory: chunk, embed, replace."""

from __future__ import annotations

from collections.abc import Sequence

from sci_etl_core.embeddings.async_base import AsyncEmbedder
from sci_etl_core.embeddings.chunking import SlidingWindowChunker
from sci_etl_core.embeddings.store_base import AsyncEmbeddingStore, EmbeddingChunk
from sci_etl_core.exceptions import EmbeddingError
from sci_etl_core.ingest_protocol import IngestRecord

__all__ = ["AsyncChunkIngestor"]


class AsyncChunkIngestor:
    """Chunk a record's text, embed the passages, and replace the record's rows.

    Satisfies :class:`~sci_etl_core.ingest_protocol.MemoryIngestor`. Each chunk's
    metadata holds the record's ``title`` and the values of ``metadata_keys`` found in
    ``record.metadata`` (by default ``source_url``), which is what
    :func:`~sci_etl_core.search.backfill_async.stored_record_document` reads back.
    The ingestor borrows ``embedder`` and ``store`` and never closes them.
    """

    def __init__(
        self,
        embedder: AsyncEmbedder,
        store: AsyncEmbeddingStore,
        chunker: SlidingWindowChunker | None = None,
        *,
        metadata_keys: Sequence[str] = ("source_url",),
    ) -> None:
        self.embedder = embedder
        self.store = store
        self.chunker = chunker if chunker is not None else SlidingWindowChunker()
        self.metadata_keys = tuple(metadata_keys)

    async def ingest(self, record: IngestRecord, text: str) -> int:
        """Replace the record's chunks with those of ``text``; return how many were stored.

        Text without words clears the record and returns 0.

        Raises:
            ValueError: ``record.record_id`` is blank.
            EmbeddingError: The passages could not be embedded, or the embedder returned
                a wrong number of vectors.
            EmbeddingStoreError: The vector memory could not be written.
        """
        record_id = record.record_id
        if not isinstance(record_id, str) or not record_id.strip():
            raise ValueError(f"record.record_id must be a non-blank string, got {record_id!r}")
        passages = self.chunker.chunk(text)
        if not passages:
            await self.store.delete_record(record_id)
            return 0
        vectors = await self.embedder.embed(passages)
        if len(vectors) != len(passages):
            raise EmbeddingError(
                f"record {record_id!r}: embedder returned {len(vectors)} vectors "
                f"for {len(passages)} passages"
            )
        metadata = {"title": record.title or ""}
        for key in self.metadata_keys:
            if key in record.metadata:
                metadata[key] = record.metadata[key]
        chunks = []
        for index, (passage, vector) in enumerate(zip(passages, vectors, strict=True)):
            try:
                chunks.append(EmbeddingChunk(record_id, index, passage, vector, dict(metadata)))
            except (TypeError, ValueError) as error:
                raise EmbeddingError(
                    f"record {record_id!r}: the embedder's vector for passage {index} "
                    f"is unusable: {error}"
                ) from error
        await self.store.replace_record(record_id, chunks)
        return len(chunks)
