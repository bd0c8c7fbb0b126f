"""Vector memories that other distributions provide, found by URI scheme through entry points.

sci-etl-search imports nothing outside the standard library, yet its hybrid search and
graphs can read another system's vector store: a distribution registers, in the entry
point group :data:`ENTRY_POINT_GROUP`, one callable per URI scheme it serves::

    [project.entry-points."sci_etl_core.vector_stores"]
    chroma = "klea_utils.stores.sci_etl_vectors:open_for_sci_etl"

The callable is a :class:`VectorStoreOpener`: given the whole URI (``chroma:/data/stores``),
the collection name and an optional embedding model name, it returns an
:class:`OpenedVectorStore`, the :class:`~sci_etl_core.embeddings.store_base.AsyncEmbeddingStore`
and the :class:`~sci_etl_core.embeddings.async_base.AsyncEmbedder` that embeds queries
as the store's vectors were embedded. :func:`open_vector_store_uri` resolves a URI to its
opener and calls it; ``sci-etl-search search --store COLLECTION=URI`` uses it.

The record ids of the memory must be the record ids of the text index searched with it,
so that a hit from either leg names the same record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Protocol

from sci_etl_core.embeddings.async_base import AsyncEmbedder
from sci_etl_core.embeddings.store_base import AsyncEmbeddingStore
from sci_etl_core.exceptions import EmbeddingStoreError

__all__ = [
    "ENTRY_POINT_GROUP",
    "OpenedVectorStore",
    "UnknownVectorStoreSchemeError",
    "VectorStoreOpener",
    "open_vector_store_uri",
    "parse_store_assignment",
    "registered_schemes",
]

ENTRY_POINT_GROUP = "sci_etl_core.vector_stores"
"""The entry point group; each entry point's name is the URI scheme it opens."""


@dataclass(frozen=True)
class OpenedVectorStore:
    """A vector memory and the embedder for queries against it.

    Raises:
        TypeError: ``store`` is not an ``AsyncEmbeddingStore``.
    """

    store: AsyncEmbeddingStore
    embedder: AsyncEmbedder

    def __post_init__(self) -> None:
        if not isinstance(self.store, AsyncEmbeddingStore):
            raise TypeError(
                f"OpenedVectorStore.store must be an AsyncEmbeddingStore, "
                f"got {type(self.store).__name__}"
            )


class VectorStoreOpener(Protocol):
    """Opens the collection ``collection`` of the store at ``uri``, for queries."""

    def __call__(self, uri: str, collection: str, model: str | None = None) -> OpenedVectorStore:
        """Return the store and its query embedder (``model`` ``None``: the default)."""
        ...


class UnknownVectorStoreSchemeError(EmbeddingStoreError, ValueError):
    """No installed distribution opens vector stores of a URI's scheme."""


def registered_schemes() -> dict[str, Callable[[], VectorStoreOpener]]:
    """The URI schemes installed distributions open, each with a loader of its opener."""
    found: dict[str, Callable[[], VectorStoreOpener]] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point.load)
    return found


def parse_store_assignment(text: str) -> tuple[str, str]:
    """Split ``COLLECTION=URI`` into the collection and the URI.

    Raises:
        ValueError: No ``=``, an empty collection, or a URI without ``scheme:``.
    """
    collection, sep, uri = text.partition("=")
    if not sep or not collection.strip():
        raise ValueError(f"--store {text!r}: expected COLLECTION=URI, e.g. papers=chroma:stores")
    scheme, colon, location = uri.partition(":")
    if not colon or not scheme or not location:
        raise ValueError(f"--store {text!r}: the URI needs a scheme, as in chroma:/path")
    return collection.strip(), uri


def open_vector_store_uri(
    uri: str,
    collection: str,
    model: str | None = None,
    *,
    openers: Mapping[str, Callable[[], VectorStoreOpener]] | None = None,
) -> OpenedVectorStore:
    """Open ``collection`` at ``uri`` with the opener registered for the URI's scheme.

    ``openers`` replaces the installed entry points (for tests).

    Raises:
        UnknownVectorStoreSchemeError: No opener for the scheme; the message lists the known.
        TypeError: The opener returned something else than an ``OpenedVectorStore``.
    """
    scheme = uri.partition(":")[0]
    known = registered_schemes() if openers is None else dict(openers)
    if scheme not in known:
        listed = (
            ", ".join(sorted(known)) or "none (install klea-retrieval for chroma, qdrant, pgvector)"
        )
        raise UnknownVectorStoreSchemeError(
            f"no installed package opens {scheme!r} vector stores ({uri}); known schemes: {listed}"
        )
    opened = known[scheme]()(uri, collection, model)
    if not isinstance(opened, OpenedVectorStore):
        raise TypeError(
            f"the {scheme!r} vector store opener returned {type(opened).__name__}, "
            "not OpenedVectorStore"
        )
    return opened
