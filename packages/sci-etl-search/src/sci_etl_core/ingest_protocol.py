"""The protocol an ingestion pipeline calls to put one record into a memory.

Both the lexical :class:`~sci_etl_core.search.index_async.AsyncSearchIndexer` and the
vector-memory chunk ingestor satisfy it, so a pipeline can feed either, or both.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["IngestRecord", "MemoryIngestor"]


@runtime_checkable
class IngestRecord(Protocol):
    """What an ingestor reads from a record: an id, a title, an abstract and metadata."""

    @property
    def record_id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def abstract(self) -> str: ...

    @property
    def metadata(self) -> dict[str, Any]: ...


@runtime_checkable
class MemoryIngestor(Protocol):
    """Replaces one record's entry in a memory with what ``text`` holds."""

    async def ingest(self, record: IngestRecord, text: str) -> int:
        """Store ``record`` with its full ``text``; return how many rows were stored."""
        ...
