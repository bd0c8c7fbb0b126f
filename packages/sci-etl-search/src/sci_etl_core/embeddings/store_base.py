"""Values and the interface of a vector memory: chunks in, nearest chunks out."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sci_etl_core.embeddings._vectors import check_vector
from sci_etl_core.exceptions import EmbeddingDimensionError

__all__ = ["AsyncEmbeddingStore", "EmbeddingChunk", "SearchHit", "StoredRecord"]


def _check_record_id(record_id: object, what: str) -> None:
    if not isinstance(record_id, str):
        raise TypeError(f"{what}.record_id must be a string, got {type(record_id).__name__}")
    if not record_id.strip():
        raise ValueError(f"{what}.record_id must not be blank")


def _check_index(chunk_index: object, what: str) -> None:
    if isinstance(chunk_index, bool) or not isinstance(chunk_index, int):
        raise TypeError(f"{what}.chunk_index must be an int, got {type(chunk_index).__name__}")
    if chunk_index < 0:
        raise ValueError(f"{what}.chunk_index must be >= 0, got {chunk_index}")


@dataclass(frozen=True)
class EmbeddingChunk:
    """One passage of a record with its embedding, as a vector memory stores it.

    ``chunk_index`` numbers the record's passages from 0 in reading order. ``vector`` is
    stored as a tuple of floats; a store normalizes it to unit length, so only its
    direction matters. ``metadata`` is JSON-encoded by durable stores; by convention it
    carries the record's ``title``.

    Raises:
        TypeError: A field has the wrong type.
        ValueError: ``record_id`` is blank, ``chunk_index`` is negative, or ``vector`` is
            empty, all zeros, or holds a value that is not finite.
    """

    record_id: str
    chunk_index: int
    text: str
    vector: Sequence[float]
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        what = f"EmbeddingChunk({self.record_id!r}, {self.chunk_index!r})"
        _check_record_id(self.record_id, "EmbeddingChunk")
        _check_index(self.chunk_index, what)
        if not isinstance(self.text, str):
            raise TypeError(f"{what}.text must be a string, got {type(self.text).__name__}")
        if not isinstance(self.metadata, dict):
            raise TypeError(f"{what}.metadata must be a dict")
        object.__setattr__(self, "vector", check_vector(self.vector, f"{what}.vector"))


@dataclass(frozen=True)
class SearchHit:
    """A stored chunk returned by a similarity query.

    ``score`` is the cosine similarity between the query and the chunk, in [-1, 1],
    higher for a closer match.

    Raises:
        TypeError: A field has the wrong type.
        ValueError: ``record_id`` is blank, ``chunk_index`` is negative, or ``score`` is
            not finite.
    """

    record_id: str
    chunk_index: int
    text: str
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_record_id(self.record_id, "SearchHit")
        _check_index(self.chunk_index, "SearchHit")
        if not math.isfinite(self.score):
            raise ValueError(f"SearchHit.score must be finite, got {self.score!r}")


@dataclass(frozen=True)
class StoredRecord:
    """A record read back from a vector memory: its passages in order, without vectors.

    ``metadata`` is the metadata of the record's first chunk.

    Raises:
        TypeError: A field has the wrong type.
        ValueError: ``record_id`` is blank.
    """

    record_id: str
    passages: tuple[str, ...]
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_record_id(self.record_id, "StoredRecord")
        object.__setattr__(self, "passages", tuple(self.passages))
        for position, passage in enumerate(self.passages):
            if not isinstance(passage, str):
                raise TypeError(f"StoredRecord.passages[{position}] must be a string")


class AsyncEmbeddingStore(ABC):
    """A vector memory holding one row per chunk, searched by cosine similarity.

    Every storage failure raises :class:`~sci_etl_core.exceptions.EmbeddingStoreError`,
    never :class:`~sci_etl_core.exceptions.EmbeddingError`. All vectors of one store share
    a dimension, fixed by the first chunk stored.
    """

    records_are_chunks: bool = False
    """``True`` for a memory that holds one chunk per record (each passage is its own
    record): :class:`~sci_etl_core.embeddings.finder_async.AsyncSimilarArticleFinder` then
    asks it for ``top_k`` chunks, not ``top_k`` times its chunk pool factor."""

    @abstractmethod
    async def add(self, chunks: Sequence[EmbeddingChunk]) -> None:
        """Store ``chunks``, replacing any stored chunk with the same record and index.

        Raises:
            EmbeddingDimensionError: A vector's dimension differs from the store's.
            EmbeddingStoreError: The memory cannot be written.
        """

    @abstractmethod
    async def delete_record(self, record_id: str) -> None:
        """Remove every chunk of ``record_id``, if any is stored."""

    async def replace_record(self, record_id: str, chunks: Sequence[EmbeddingChunk]) -> None:
        """Make ``chunks`` the only stored chunks of ``record_id``.

        The default deletes and then adds; a durable store overrides it with one
        transaction.

        Raises:
            ValueError: A chunk belongs to another record.
        """
        _check_chunks_belong(record_id, chunks)
        await self.delete_record(record_id)
        if chunks:
            await self.add(chunks)

    @abstractmethod
    async def count(self) -> int:
        """Return how many chunks are stored."""

    @abstractmethod
    async def query(
        self,
        vector: Sequence[float],
        top_k: int = 5,
        min_score: float = -1.0,
        exclude_record_id: str | None = None,
    ) -> list[SearchHit]:
        """Return up to ``top_k`` chunks most similar to ``vector``, best first.

        The score is cosine similarity. Chunks scoring below ``min_score`` and the
        chunks of ``exclude_record_id`` are left out. Equal scores are ordered by
        ``record_id`` then ``chunk_index``. A ``top_k`` below 1, or an empty store, gives
        no hits.

        Raises:
            ValueError: ``vector`` is empty, all zeros, or not finite.
            EmbeddingDimensionError: ``vector`` has another dimension than the store's.
            EmbeddingStoreError: The memory cannot be read.
        """

    def iter_records(self, batch_size: int = 100) -> AsyncIterator[StoredRecord]:
        """Yield every stored record in ``record_id`` order, passages in chunk order.

        Records are read ``batch_size`` at a time. The default raises, so a store that
        cannot enumerate its records says so.

        Raises:
            NotImplementedError: The store cannot enumerate its records.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement iter_records")

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release the store's resources. A later call may reopen them."""


def _check_chunks_belong(record_id: str, chunks: Sequence[EmbeddingChunk]) -> None:
    for position, chunk in enumerate(chunks):
        if chunk.record_id != record_id:
            raise ValueError(
                f"chunks[{position}] belongs to record {chunk.record_id!r}, not {record_id!r}"
            )


def check_chunks(chunks: Sequence[EmbeddingChunk], dimension: int | None = None) -> int | None:
    """Return the dimension ``chunks`` share, raising unless they are chunks of one dimension.

    ``dimension`` is the store's, when it holds chunks already; otherwise the first
    chunk sets it. ``None`` when there is neither.

    Raises:
        TypeError: An item is not an :class:`EmbeddingChunk`.
        EmbeddingDimensionError: A chunk's dimension differs from the others'.
    """
    holder = "the store holds" if dimension is not None else "chunks[0] has"
    for position, chunk in enumerate(chunks):
        if not isinstance(chunk, EmbeddingChunk):
            raise TypeError(f"chunks[{position}] is {type(chunk).__name__}, not EmbeddingChunk")
        if dimension is None:
            dimension = len(chunk.vector)
        elif len(chunk.vector) != dimension:
            raise EmbeddingDimensionError(
                f"chunks[{position}] ({chunk.record_id!r}, {chunk.chunk_index}) has dimension "
                f"{len(chunk.vector)}, but {holder} {dimension}"
            )
    return dimension


def check_batch_size(batch_size: int) -> None:
    """Raise unless ``batch_size`` is an int of at least 1."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int):
        raise TypeError(f"batch_size must be an int, got {type(batch_size).__name__}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")


def check_query_args(top_k: int, min_score: float, batch_name: str = "top_k") -> None:
    """Raise unless ``top_k`` is an int and ``min_score`` a finite number."""
    if isinstance(top_k, bool) or not isinstance(top_k, int):
        raise TypeError(f"{batch_name} must be an int, got {type(top_k).__name__}")
    if not math.isfinite(min_score):
        raise ValueError(f"min_score must be finite, got {min_score!r}")
