"""Feed an ingestion pipeline's records into a text search store."""

from __future__ import annotations

from sci_etl_core.ingest_protocol import IngestRecord
from sci_etl_core.search.store_base import AsyncTextSearchStore, SearchDocument

__all__ = ["AsyncSearchIndexer"]


class AsyncSearchIndexer:
    """Index an article's title, abstract, and full text for Boolean search.

    The lexical counterpart of
    :class:`~sci_etl_core.embeddings.ingest_async.AsyncChunkIngestor`: the same
    ``ingest`` method and the same replace-not-append semantics, with one
    document per record instead of one row per chunk. It satisfies
    :class:`~sci_etl_core.ingest_protocol.MemoryIngestor`, so a search-only
    deployment passes it straight to the pipeline's ``memory_ingestor``.

    The indexer never swallows a failure and never parses a query; whether a
    store fault is fatal is decided by its caller. It borrows ``store`` and
    never closes it.
    """

    def __init__(self, store: AsyncTextSearchStore) -> None:
        if not isinstance(store, AsyncTextSearchStore):
            raise TypeError(f"store must be an AsyncTextSearchStore, not {type(store).__name__}")
        self._store = store

    @property
    def store(self) -> AsyncTextSearchStore:
        """The store documents are written to, borrowed and never closed."""
        return self._store

    async def ingest(self, record: IngestRecord, text: str) -> int:
        """Replace the record's indexed document with its title, abstract, and text.

        A record whose title, abstract, and text are all blank (empty or
        whitespace only) is removed from the index, as ``AsyncChunkIngestor``
        clears a record whose text yields no passages. A record with any one of
        them non-blank is stored, with the blank fields stored as empty strings.
        ``record.metadata`` is copied into the document.

        Returns:
            1 when a document was stored, 0 when the record was cleared.

        Raises:
            SearchStoreError: The index could not be written.
            TypeError: ``text`` or a field of ``record`` is not a string.
        """
        record_id = record.record_id
        parts = {"title": record.title, "abstract": record.abstract, "body": text}
        for name, value in parts.items():
            if not isinstance(value, str):
                raise TypeError(
                    f"record {record_id!r}: {name} must be a string, not {type(value).__name__}"
                )
        cleaned = {name: value if value.strip() else "" for name, value in parts.items()}
        if not any(cleaned.values()):
            await self._store.delete_record(record_id)
            return 0
        document = SearchDocument(
            record_id=record_id, metadata=dict(record.metadata or {}), **cleaned
        )
        await self._store.replace_record(document)
        return 1
