"""The ``fts5:`` BM25 index layout: how a chunk becomes a record, and opening the index.

A BM25 store whose path is ``fts5:/path/index.sqlite`` is an SQLite FTS5 index kept by
``sci_etl_core.search.AsyncSqliteFts5Store`` (sci-etl-search, a dependency). Each
chunk is one ``SearchDocument``:

- ``record_id``: the chunk's readable id ``<file_name>:<chunk_index>`` (the same id
  the vector stores use, so deleting a file's chunks works on both);
- ``body``: the chunk text (``page_content``), normalized with ``normalize_text``;
- ``title``: the chunk's ``title`` metadata (stored for display, weight 0 in ranking:
  ranking reads the body only, as rank_bm25 does);
- ``abstract``: empty;
- ``metadata``: the chunk metadata (JSON); filters are applied after ranking with
  ``filter_docs_by_metadata``, and the keys in :data:`FTS5_FACET_KEYS` are tagged so
  other consumers (search UIs) can facet on them.

Ingestion writes such an index with ``klea_utils.stores.fts5_writer`` (klea-ingest):
``write_fts5_chunks``, ``delete_fts5_ids`` and their async twins. Those names are still
importable from here when klea-ingest is installed (they moved in 0.2, as ingestion-only
writers belong to the ingestion distribution).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from klea_utils.stores.utils import normalize_text
from langchain_core.documents import Document
from sci_etl_core.search import BM25Weights, SearchDocument
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

__all__ = ["FTS5_FACET_KEYS", "open_fts5_store", "search_document"]

_MOVED_TO_INGEST = frozenset(
    {"adelete_fts5_ids", "awrite_fts5_chunks", "delete_fts5_ids", "write_fts5_chunks"}
)

FTS5_FACET_KEYS = ("authors", "collections", "file_name", "journal", "keywords", "tags", "year")
"""Metadata keys tagged in an ``fts5:`` index for facets and native filters."""


def open_fts5_store(path: str | Path, *, stemming: bool | None = None) -> AsyncSqliteFts5Store:
    """Open (lazily creating) the ``AsyncSqliteFts5Store`` at ``path`` with Klea's layout.

    ``stemming`` is the store's: ``None`` follows the file (a new file is built without
    stemming), ``True`` builds a new file with FTS5's Porter stemmer.
    """
    weights = BM25Weights(title=0.0, abstract=0.0, body=1.0)
    return AsyncSqliteFts5Store(
        Path(path), facet_keys=FTS5_FACET_KEYS, weights=weights, stemming=stemming
    )


def search_document(record_id: str, doc: Document) -> SearchDocument:
    """The record that stands for chunk ``doc`` (id ``record_id``) in an ``fts5:`` index.

    Raises:
        ValueError: When ``record_id`` is not a non-empty string.
    """
    if not isinstance(record_id, str) or not record_id:
        raise ValueError(f"chunk id must be a non-empty string, got {record_id!r}")
    title = doc.metadata.get("title")
    return SearchDocument(
        record_id=record_id,
        title=title if isinstance(title, str) else "",
        body=normalize_text(doc.page_content),
        metadata=dict(doc.metadata),
    )


def __getattr__(name: str) -> Any:
    """Resolve the writers that moved to klea-ingest's ``fts5_writer`` (when installed)."""
    if name in _MOVED_TO_INGEST:
        try:
            from klea_utils.stores import fts5_writer
        except ImportError as exc:
            raise ImportError(
                f"{name} writes an fts5: index for ingestion and lives in "
                "klea_utils.stores.fts5_writer, which klea-ingest provides: "
                "pip install klea-ingest"
            ) from exc
        return getattr(fts5_writer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
