"""Write and prune an ``fts5:`` BM25 index of chunks (ingestion's side of the layout).

The layout (one record per chunk, which fields, which facet keys) is klea-retrieval's
:mod:`klea_utils.stores.retrieval.fts5_index`; these helpers only write it. The
synchronous helpers run their own event loop (use :func:`awrite_fts5_chunks` and
:func:`adelete_fts5_ids` inside async code).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from klea_utils.stores.retrieval.fts5_index import open_fts5_store, search_document
from langchain_core.documents import Document
from sci_etl_core.search import SearchDocument

__all__ = ["adelete_fts5_ids", "awrite_fts5_chunks", "delete_fts5_ids", "write_fts5_chunks"]


async def awrite_fts5_chunks(
    path: str | Path,
    docs_with_ids: Iterable[tuple[str, Document]],
    *,
    batch_size: int = 500,
    stemming: bool | None = None,
) -> int:
    """Index ``(chunk_id, document)`` pairs into the FTS5 index at ``path``.

    A chunk id already present is replaced. Returns the number of chunks written.
    ``stemming`` is :func:`open_fts5_store`'s: ``True`` builds a new index with
    FTS5's Porter stemmer; an existing index must agree (``None`` follows it).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    store = open_fts5_store(path, stemming=stemming)
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
) -> int:
    """Synchronous :func:`awrite_fts5_chunks` (do not call from a running event loop)."""
    return asyncio.run(
        awrite_fts5_chunks(path, docs_with_ids, batch_size=batch_size, stemming=stemming)
    )


def delete_fts5_ids(path: str | Path, ids: Iterable[str]) -> None:
    """Synchronous :func:`adelete_fts5_ids` (do not call from a running event loop)."""
    asyncio.run(adelete_fts5_ids(path, list(ids)))
