"""Open the stores and the embedder a command needs, and close them afterwards.

The text index is an :class:`~sci_etl_core.search.store_sqlite_fts5.AsyncSqliteFts5Store`
file (``--db``); the vector memory an
:class:`~sci_etl_core.embeddings.store_sqlite.AsyncSqliteEmbeddingStore` file
(``--vectors``); the embedder the sentence-transformers embedder, by default the
packaged all-MiniLM-L6-v2 (``--model``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sci_etl_core.embeddings.sentence_transformers_async import (
        AsyncSentenceTransformerEmbedder,
    )
    from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

__all__ = ["load_embedder", "open_text_store", "open_vector_store", "recorded_facet_keys"]

_SETTINGS_QUERY = 'SELECT "value" FROM "index_settings" WHERE "name" = ?'
_BUILT_KEYS = "facet_keys_built"


def recorded_facet_keys(path: Path) -> tuple[str, ...] | None:
    """Return the facet keys the text index at ``path`` has tags built for, sorted.

    :class:`~sci_etl_core.search.store_sqlite_fts5.AsyncSqliteFts5Store` records them in
    the file. ``None`` when the file does not exist or records none yet (a new or empty
    index); a file that is not a text index is left for the store to report.
    """
    import json

    if not path.is_file():
        return None
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            row = db.execute(_SETTINGS_QUERY, (_BUILT_KEYS,)).fetchone()
    except sqlite3.Error:
        return None
    if row is None:
        return None
    try:
        keys = json.loads(row[0])
    except (TypeError, ValueError):
        return None
    if not isinstance(keys, list):
        return None
    return tuple(sorted(str(key) for key in keys))


@asynccontextmanager
async def open_text_store(
    path: Path, facet_keys: Iterable[str] = ()
) -> AsyncIterator[AsyncSqliteFts5Store]:
    """Yield the FTS5 text index at ``path`` tagging ``facet_keys``, and close it after."""
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

    store = AsyncSqliteFts5Store(path, facet_keys=tuple(facet_keys))
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
