"""Store locations, parsed and checked in one place.

A vector store is named by ``scheme:location``: ``chroma:DIR``, ``qdrant:DIR`` or
``qdrant:http://host:6333``, ``pgvector:postgresql://host/db``. A BM25 store is a bare
path to a pickled corpus, or ``fts5:FILE`` for an SQLite FTS5 index. :class:`StoreURI`
is the one parser of both forms; every malformed location raises
:class:`~klea_utils.stores.exceptions.StoreConfigError` (a ``ValueError``) naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from klea_utils.stores.exceptions import StoreConfigError

__all__ = ["FTS5_PREFIX", "VECTOR_SCHEMES", "Scheme", "StoreURI"]

Scheme = Literal["chroma", "qdrant", "pgvector", "fts5", ""]
"""A store's scheme; ``""`` is a bare BM25 corpus path."""

VECTOR_SCHEMES: tuple[Scheme, ...] = ("chroma", "qdrant", "pgvector")
"""The vector store URI schemes."""

FTS5_PREFIX = "fts5:"
"""Prefix of BM25 stores served by an SQLite FTS5 index (``fts5:/path/index.sqlite``)."""

_BM25_SCHEMES: tuple[Scheme, ...] = ("fts5", "")
_REMOTE = ("http://", "https://")


@dataclass(frozen=True)
class StoreURI:
    """A parsed store location: its ``scheme`` and the ``location`` after the colon.

    Build one with :meth:`vector` or :meth:`bm25`; ``str()`` gives the location back as
    it was written.

    Raises:
        StoreConfigError: The scheme is not a store scheme or the location is empty.
    """

    scheme: Scheme
    location: str

    def __post_init__(self) -> None:
        if self.scheme not in VECTOR_SCHEMES + _BM25_SCHEMES:
            raise StoreConfigError(f"unknown store scheme {self.scheme!r}")
        if not self.location.strip():
            raise StoreConfigError(f"store {str(self)!r} has an empty location")

    @classmethod
    def vector(cls, uri: str) -> StoreURI:
        """Parse a vector store URI, ``scheme:location``.

        Raises:
            StoreConfigError: No scheme, an unknown one, or an empty location; the message
                names the URI.
        """
        expected = ", ".join(VECTOR_SCHEMES)
        if not isinstance(uri, str) or ":" not in uri:
            raise StoreConfigError(
                f"store path {uri!r} has no scheme: expected 'scheme:location' with scheme "
                f"one of {expected}"
            )
        scheme, location = uri.split(":", 1)
        for known in VECTOR_SCHEMES:
            if scheme == known:
                if not location.strip():
                    raise StoreConfigError(f"store path {uri!r} has an empty location")
                return cls(known, location)
        raise StoreConfigError(
            f"store path {uri!r} has unknown scheme {scheme!r}; expected one of {expected}"
        )

    @classmethod
    def bm25(cls, path: str) -> StoreURI:
        """Parse a BM25 store path: ``fts5:FILE``, or a bare pickled-corpus path.

        Raises:
            StoreConfigError: The path (or the part after ``fts5:``) is empty.
        """
        if not isinstance(path, str):
            raise StoreConfigError(f"BM25 store path {path!r} must be a string")
        if path.startswith(FTS5_PREFIX):
            location = path[len(FTS5_PREFIX) :]
            if not location.strip():
                raise StoreConfigError(f"BM25 store path {path!r}: expected fts5:PATH")
            return cls("fts5", location)
        if not path.strip():
            raise StoreConfigError("BM25 store path is empty: expected a file path or fts5:PATH")
        return cls("", path)

    @property
    def is_remote(self) -> bool:
        """Whether the store is a server (``qdrant:http(s)://...``, ``pgvector:...``)."""
        return self.scheme == "pgvector" or (
            self.scheme == "qdrant" and self.location.startswith(_REMOTE)
        )

    @property
    def local_path(self) -> Path | None:
        """The store's file or folder on this machine; ``None`` for a server."""
        return None if self.is_remote else Path(self.location)

    @property
    def prefix(self) -> str:
        """What stands before the location: ``"chroma:"``, ``"fts5:"``, ``""``..."""
        return f"{self.scheme}:" if self.scheme else ""

    def with_location(self, location: str | Path) -> StoreURI:
        """The same kind of store at another location."""
        return StoreURI(self.scheme, str(location))

    def __str__(self) -> str:
        return f"{self.prefix}{self.location}"
