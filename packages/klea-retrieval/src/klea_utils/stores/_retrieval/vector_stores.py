"""Opening and dropping LangChain vector stores named by ``scheme:location`` URIs."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klea_utils.stores._retrieval.extras import import_extra
from klea_utils.stores.exceptions import StoreConfigError
from klea_utils.stores.store_uri import StoreURI

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = [
    "CHROMA_HNSW_EF_SEARCH",
    "CHROMA_HNSW_SPACE",
    "CHROMA_HNSW_SYNC",
    "check_store_target",
    "drop_collection",
    "instantiate_vector_store",
]

CHROMA_HNSW_SPACE = "cosine"
"""HNSW distance space of Chroma collections created by Klea (scores are cosine similarities)."""

CHROMA_HNSW_EF_SEARCH = 400
"""``ef_search`` of Chroma collections created by Klea (Chroma's default is 100).

A question's vector often lies far from every passage (cosine distances of 0.83 to 0.86
for the 20 nearest on the development papers), where the graph walk with 100 candidates
missed the 3rd nearest passage (dev ``d24``); with 400 it returned the exact list.
"""

CHROMA_HNSW_SYNC = 100
"""``batch_size`` and ``sync_threshold`` of Chroma collections created by Klea.

Chroma writes its HNSW index to disk once ``sync_threshold`` records wait in its log
(default 1,000) and keeps up to ``batch_size`` of them (default 100) in an exact buffer.
With the defaults, a store can end its build with up to 999 records only in the log;
every process that opens it inserts those past the buffer into its own copy of the graph
in parallel, so two processes found different near neighbours for the same question
(issue 37). With both at 100, what the log holds after a write fits the exact buffer,
and a store answers the same in every process.
"""

_CHROMA_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]")
"""Chroma's rule for collection names: 3-512 of ``[A-Za-z0-9._-]``, alphanumeric at both ends."""


def check_store_target(path: str, name: str) -> tuple[str, str]:
    """Check a store URI and collection name before any work; return ``(scheme, location)``.

    Raises:
        ValueError: The URI is malformed, the name empty, or (Chroma) outside Chroma's
            naming rule; the message names the store and the name.
    """
    uri = StoreURI.vector(path)
    scheme, location = uri.scheme, uri.location
    if not name:
        raise StoreConfigError(f"store {path!r}: collection name must be non-empty")
    if scheme == "chroma" and (not _CHROMA_NAME.fullmatch(name) or ".." in name):
        raise StoreConfigError(
            f"Chroma store {location!r}: collection name {name!r} must be 3-512 characters "
            "from a-z, A-Z, 0-9, '.', '_' and '-', start and end with a letter or digit, "
            "and hold no '..'"
        )
    return scheme, location


def _chroma(location: str, name: str, embeddings: Embeddings, create: bool) -> Any:
    folder = Path(location).expanduser()
    if folder.exists() and not folder.is_dir():
        raise StoreConfigError(
            f"Chroma store path {location!r} is a file; point it at the store folder "
            "(Chroma keeps <folder>/chroma.sqlite3 and the file name is not configurable)"
        )
    if not (folder / "chroma.sqlite3").is_file() and not create:
        raise FileNotFoundError(f"no Chroma store at {str(folder)!r} (missing chroma.sqlite3)")
    chromadb = import_extra("chromadb", feature="The Chroma backend", extra="chroma")
    import_extra("langchain_chroma", feature="The Chroma backend", extra="chroma")
    from klea_utils.stores._retrieval.chroma import KleaChroma

    folder.mkdir(parents=True, exist_ok=True)
    settings = chromadb.config.Settings(anonymized_telemetry=False)
    client = chromadb.PersistentClient(path=str(folder), settings=settings)
    existing = {c if isinstance(c, str) else c.name for c in client.list_collections()}
    if name not in existing and not create:
        raise FileNotFoundError(f"Chroma store {str(folder)!r} has no collection {name!r}")
    hnsw = {
        "space": CHROMA_HNSW_SPACE,
        "ef_search": CHROMA_HNSW_EF_SEARCH,
        "batch_size": CHROMA_HNSW_SYNC,
        "sync_threshold": CHROMA_HNSW_SYNC,
    }
    configuration: Any = None if name in existing else {"hnsw": hnsw}
    return KleaChroma(
        collection_name=name,
        embedding_function=embeddings,
        client=client,
        collection_configuration=configuration,
    )


def _qdrant(location: str, name: str, embeddings: Embeddings) -> Any:
    import_extra("langchain_qdrant", feature="The Qdrant backend", extra="qdrant")
    from klea_utils.stores._retrieval import qdrant as _qdrant

    if StoreURI("qdrant", location).is_remote:
        from qdrant_client import QdrantClient

        client = QdrantClient(url=location)
    else:
        client = _qdrant.local_qdrant_client(location)
    if not client.collection_exists(name):
        dimension = len(embeddings.embed_query("dimension probe"))
        _qdrant.ensure_qdrant_collection(client, name, dimension)
    return _qdrant.KleaQdrantVectorStore(client=client, collection_name=name, embedding=embeddings)


def sqlalchemy_url(location: str) -> str:
    """Return a SQLAlchemy URL using psycopg 3 for a ``postgresql://`` location."""
    for prefix in ("postgresql://", "postgres://"):
        if location.startswith(prefix):
            return "postgresql+psycopg://" + location[len(prefix) :]
    return location


def _pgvector(location: str, name: str, embeddings: Embeddings, logger: logging.Logger) -> Any:
    import_extra("langchain_postgres", feature="The PGVector backend", extra="pgvector")
    from klea_utils.stores._retrieval.pgvector import KleaPGVector

    return KleaPGVector(
        embeddings=embeddings,
        connection=sqlalchemy_url(location),
        collection_name=name,
        use_jsonb=True,
        logger=logger,
    )


def instantiate_vector_store(
    path: str, name: str, embeddings: Any, logger: logging.Logger, create: bool = False
) -> Any:
    """Instantiate a vector store based on the URI scheme in ``path``.

    ``chroma:/folder`` opens a persistent Chroma store folder (a path to a file, even
    ``chroma.sqlite3`` itself, is rejected); new collections get the
    :data:`CHROMA_HNSW_SPACE` distance space, existing ones keep theirs.
    ``qdrant:http://host:port`` connects to a Qdrant server and ``qdrant:/folder`` opens
    local mode (one shared client per folder); ids are readable chunk ids mapped to
    UUIDv5 point ids. ``pgvector:postgresql://...`` opens a PGVector collection; a new
    one stores ids scoped by the collection and gets its own HNSW index (see
    ``_retrieval/pg_layout.py``). For
    Qdrant and PGVector ``create`` is a no-op: a missing collection is created.

    Raises:
        ValueError: If the scheme is missing or unknown, or a Chroma path is a file.
        FileNotFoundError: If ``create`` is False and a local Chroma store or collection
            does not exist.
    """
    scheme, location = check_store_target(path, name)
    logger.debug("opening %s store %r collection %r", scheme, location, name)
    if scheme == "chroma":
        return _chroma(location, name, embeddings, create)
    if scheme == "qdrant":
        return _qdrant(location, name, embeddings)
    return _pgvector(location, name, embeddings, logger)


def drop_collection(store: Any, store_path: str, collection_name: str) -> None:
    """Drop a vector store collection (portable across backends).

    Chroma and PGVector use ``delete_collection`` on their LangChain wrapper; Qdrant's
    wrapper has none, so its raw client drops the collection.

    Raises:
        ValueError: When the scheme is missing or unknown.
    """
    if StoreURI.vector(store_path).scheme == "qdrant":
        client = store.client
        if client.collection_exists(collection_name):
            client.delete_collection(collection_name)
        return
    store.delete_collection()
