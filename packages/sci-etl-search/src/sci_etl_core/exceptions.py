"""Every exception raised by ``sci-etl-search``.

The hierarchy::

    SciEtlError                      root of everything raised here
    ├── SearchError                  lexical, hybrid or graph search failed
    │   ├── SearchQueryError         the query text is malformed or cannot be ranked
    │   │                            (also a ValueError; carries position and token)
    │   └── SearchStoreError         a text search store cannot be opened, read or written
    ├── EmbeddingError               an embedder failed to turn text into vectors
    └── EmbeddingStoreError          a vector memory cannot be opened, read or written
        └── EmbeddingDimensionError  a vector of the wrong dimension (also a ValueError)

A storage fault is never reported as a failure to embed: :class:`EmbeddingStoreError`
is not a subclass of :class:`EmbeddingError`, so a hybrid search that degrades on
``EmbeddingError`` never hides a broken vector memory.
"""

from __future__ import annotations

__all__ = [
    "EmbeddingDimensionError",
    "EmbeddingError",
    "EmbeddingStoreError",
    "SciEtlError",
    "SearchError",
    "SearchQueryError",
    "SearchStoreError",
]


class SciEtlError(Exception):
    """Root of every exception raised by ``sci_etl_core``."""


class SearchError(SciEtlError):
    """A search could not be run."""


class SearchQueryError(SearchError, ValueError):
    """The query text is malformed or cannot be ranked.

    ``position`` is the 0-based character offset of the fault in the query text, or
    ``None`` when the fault is not at one place (an empty query, say). ``token`` is the
    offending text at that position, so a UI can underline ``len(token)`` characters
    (at least one) starting at ``position``.
    """

    def __init__(self, message: str, *, position: int | None = None, token: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.position = position
        self.token = token

    def __str__(self) -> str:
        if self.position is None:
            return self.message
        if self.token:
            return f"{self.message} (at position {self.position}: {self.token!r})"
        return f"{self.message} (at position {self.position})"

    def caret_line(self, text: str) -> str:
        """Return ``text`` with a line of carets under the fault, for a terminal."""
        if self.position is None:
            return text
        width = max(1, len(self.token))
        return f"{text}\n{' ' * self.position}{'^' * width}"


class SearchStoreError(SearchError):
    """A text search store cannot be opened, read or written.

    The message names the file (or ``:memory:``) and the action that failed.
    """


class EmbeddingError(SciEtlError):
    """An embedder could not turn text into vectors (model missing, service down)."""


class EmbeddingStoreError(SciEtlError):
    """A vector memory cannot be opened, read or written."""


class EmbeddingDimensionError(EmbeddingStoreError, ValueError):
    """A vector's dimension differs from the dimension the vector memory holds."""
