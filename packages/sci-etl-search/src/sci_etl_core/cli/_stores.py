"""Open the stores and the embedder a command needs, and close them afterwards.

The text index is an :class:`~sci_etl_core.search.store_sqlite_fts5.AsyncSqliteFts5Store`
file (``--db``); the vector memory an
:class:`~sci_etl_core.embeddings.store_sqlite.AsyncSqliteEmbeddingStore` file
(``--vectors``); the embedder the sentence-transformers embedder, by default the
packaged all-MiniLM-L6-v2 (``--model``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sci_etl_core.embeddings.sentence_transformers_async import (
        AsyncSentenceTransformerEmbedder,
    )
    from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

__all__ = ["load_embedder", "open_text_store", "open_vector_store", "recorded_facet_keys"]


def recorded_facet_keys(path: Path) -> tuple[str, ...] | None:
    """Return the facet keys the text index at ``path`` has tags built for, sorted.

    ``None`` when the file does not exist or records none yet (a new or empty index); see
    :func:`~sci_etl_core.search.store_sqlite_fts5.built_facet_keys`.
    """
    from sci_etl_core.search.store_sqlite_fts5 import built_facet_keys

    return built_facet_keys(path)


@asynccontextmanager
async def open_text_store(
    path: Path, facet_keys: Iterable[str] = (), stemming: bool | None = None
) -> AsyncIterator[AsyncSqliteFts5Store]:
    """Yield the FTS5 text index at ``path`` tagging ``facet_keys``, and close it after.

    ``stemming`` ``None`` follows the file's tokenizer (a new file does not stem).
    """
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

    store = AsyncSqliteFts5Store(path, facet_keys=tuple(facet_keys), stemming=stemming)
    try:
        yield store
    finally:
        await store.aclose()


@asynccontextmanager
async def open_vector_store(path: Path) -> AsyncIterator[AsyncSqliteEmbeddingStore]:
    """Yield the SQLite vector memory at ``path``, and close it after."""
    from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore

    store = AsyncSqliteEmbeddingStore(path)
    try:
        yield store
    finally:
        await store.aclose()


def load_embedder(model: str | None) -> AsyncSentenceTransformerEmbedder:
    """Return the sentence-transformers embedder for ``model``, loaded on first use.

    ``None`` picks the packaged all-MiniLM-L6-v2, which loads offline.

    Raises:
        ImportError: The ``local`` extra is not installed; the message names it.
    """
    from sci_etl_core.embeddings.sentence_transformers_async import (
        AsyncSentenceTransformerEmbedder,
    )

    return AsyncSentenceTransformerEmbedder(model)
