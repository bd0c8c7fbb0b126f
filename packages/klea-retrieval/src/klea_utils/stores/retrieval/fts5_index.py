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

:func:`write_fts5_chunks` and :func:`delete_fts5_ids` (and their async twins) write and
prune such an index; klea-ingest's ``klea_utils.stores.fts5_writer`` re-exports them under
the name its guides use. They live here, beside the layout they write, so that
klea-retrieval never imports klea-ingest. The synchronous helpers run their own event
loop (use the async twins inside async code).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from klea_utils.stores.utils import normalize_text
from langchain_core.documents import Document
from sci_etl_core.search import BM25Weights, SearchDocument
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

__all__ = [
    "FTS5_FACET_KEYS",
    "adelete_fts5_ids",
    "awrite_fts5_chunks",
    "delete_fts5_ids",
    "open_fts5_store",
    "search_document",
    "write_fts5_chunks",
]

FTS5_FACET_KEYS = (
    "authors",
    "collections",
    "file_name",
    "journal",
    "keywords",
    "language",
    "tags",
    "year",
)
"""Metadata keys tagged in an ``fts5:`` index for facets and native filters."""


def open_fts5_store(
    path: str | Path, *, stemming: bool | None = None, multiscript: bool | None = None
) -> AsyncSqliteFts5Store:
    """Open (lazily creating) the ``AsyncSqliteFts5Store`` at ``path`` with Klea's layout.

    ``stemming`` is the store's: ``None`` follows the file (a new file is built without
    stemming), ``True`` builds a new file with FTS5's Porter stemmer. ``multiscript``
    likewise: ``True`` indexes Chinese, Japanese, Korean, Thai and Arabic-script words
    (:class:`sci_etl_core.search.multiscript.MultiscriptTokenizer`), ``None`` follows the
    file; the file records both, so queries tokenize as the index did.
    """
    weights = BM25Weights(title=0.0, abstract=0.0, body=1.0)
    return AsyncSqliteFts5Store(
        Path(path),
        facet_keys=FTS5_FACET_KEYS,
        weights=weights,
        stemming=stemming,
        multiscript=multiscript,
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


async def awrite_fts5_chunks(
    path: str | Path,
    docs_with_ids: Iterable[tuple[str, Document]],
    *,
    batch_size: int = 500,
    stemming: bool | None = None,
    multiscript: bool | None = None,
) -> int:
    """Index ``(chunk_id, document)`` pairs into the FTS5 index at ``path``.

    A chunk id already present is replaced. Returns the number of chunks written.
    ``stemming`` is :func:`open_fts5_store`'s: ``True`` builds a new index with
    FTS5's Porter stemmer; an existing index must agree (``None`` follows it);
    ``multiscript`` likewise.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    store = open_fts5_store(path, stemming=stemming, multiscript=multiscript)
    written = 0
    batch: list[SearchDocument] = []
    try:
        for record_id, doc in docs_with_ids:
            batch.append(search_document(record_id, doc))
            if len(batch) >= batch_size:
                await store.index(batch)
                written += len(batch)
                batch = []
        if batch:
            await store.index(batch)
            written += len(batch)
    finally:
        await store.aclose()
    return written


async def adelete_fts5_ids(path: str | Path, ids: Iterable[str]) -> None:
    """Delete the chunks of ``ids`` from the FTS5 index at ``path`` (unknown ids ignored)."""
    store = open_fts5_store(path)
    try:
        for record_id in ids:
            await store.delete_record(record_id)
    finally:
        await store.aclose()


def write_fts5_chunks(
    path: str | Path,
    docs_with_ids: Iterable[tuple[str, Document]],
    *,
    batch_size: int = 500,
    stemming: bool | None = None,
    multiscript: bool | None = None,
) -> int:
    """Synchronous :func:`awrite_fts5_chunks` (do not call from a running event loop)."""
    return asyncio.run(
        awrite_fts5_chunks(
            path, docs_with_ids, batch_size=batch_size, stemming=stemming, multiscript=multiscript
        )
    )


def delete_fts5_ids(path: str | Path, ids: Iterable[str]) -> None:
    """Synchronous :func:`adelete_fts5_ids` (do not call from a running event loop)."""
    asyncio.run(adelete_fts5_ids(path, list(ids)))
