"""Open the stores and the embedder a command needs, and close them afterwards.

The text index is an :class:`~sci_etl_core.search.store_sqlite_fts5.AsyncSqliteFts5Store`
file (``--db``); the vector memory an
:class:`~sci_etl_core.embeddings.store_sqlite.AsyncSqliteEmbeddingStore` file
(``--vectors``), or another system's store (``--store COLLECTION=URI``) opened by the
package registered for its scheme (:mod:`sci_etl_core.embeddings.plugins`), with that
package's embedder; otherwise the embedder is the sentence-transformers embedder, by
default the packaged all-MiniLM-L6-v2 (``--model``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sci_etl_core.embeddings.plugins import OpenedVectorStore
    from sci_etl_core.embeddings.sentence_transformers_async import (
        AsyncSentenceTransformerEmbedder,
    )
    from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

__all__ = [
    "load_embedder",
    "open_plugin_store",
    "open_text_store",
    "open_vector_store",
    "recorded_facet_keys",
]


def recorded_facet_keys(path: Path) -> tuple[str, ...] | None:
    """Return the facet keys the text index at ``path`` has tags built for, sorted.

    ``None`` when the file does not exist or records none yet (a new or empty index); see
    :func:`~sci_etl_core.search.store_sqlite_fts5.built_facet_keys`.
    """
    from sci_etl_core.search.store_sqlite_fts5 import built_facet_keys

    return built_facet_keys(path)


@asynccontextmanager
async def open_text_store(
    path: Path,
    facet_keys: Iterable[str] = (),
    stemming: bool | None = None,
    multiscript: bool | None = None,
) -> AsyncIterator[AsyncSqliteFts5Store]:
    """Yield the FTS5 text index at ``path`` tagging ``facet_keys``, and close it after.

    ``stemming`` and ``multiscript`` ``None`` follow the file's tokenizer (a new file
    neither stems nor segments other scripts).
    """
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

    store = AsyncSqliteFts5Store(
        path, facet_keys=tuple(facet_keys), stemming=stemming, multiscript=multiscript
    )
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


def open_plugin_store(assignment: str, model: str | None) -> OpenedVectorStore:
    """Open ``--store COLLECTION=URI`` through the package registered for the URI's scheme.

    Exits with status 2 for a malformed value, a scheme no installed package opens, or a
    value the plugin refuses (a ``ValueError``), and with status 1 when the store or its
    embedding model cannot be opened.
    """
    from sci_etl_core.cli._runtime import EXIT_FAILURE, EXIT_USAGE, fail
    from sci_etl_core.embeddings.plugins import (
        UnknownVectorStoreSchemeError,
        open_vector_store_uri,
        parse_store_assignment,
    )

    try:
        collection, uri = parse_store_assignment(assignment)
    except ValueError as error:
        fail(str(error), EXIT_USAGE)
    try:
        return open_vector_store_uri(uri, collection, model)
    except UnknownVectorStoreSchemeError as error:
        fail(f"--store {assignment}: {error}", EXIT_USAGE)
    except ValueError as error:  # the plugin refused the URI or the collection name
        fail(f"--store {assignment}: {type(error).__name__}: {error}", EXIT_USAGE)
    except Exception as error:  # a plugin's failure, whatever its type: name it, exit 1
        fail(f"--store {assignment}: {type(error).__name__}: {error}", EXIT_FAILURE)
