"""A durable vector memory in one SQLite file, searched by exact cosine scan."""

from __future__ import annotations

import asyncio
import functools
import json
import sqlite3
import threading
from array import array
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from sci_etl_core.embeddings._ranking import prepare_query, rank_rows
from sci_etl_core.embeddings._sqlite_schema import migrate
from sci_etl_core.embeddings._vectors import ScanMatrix, unit_vector
from sci_etl_core.embeddings.store_base import (
    AsyncEmbeddingStore,
    EmbeddingChunk,
    SearchHit,
    StoredRecord,
    _check_chunks_belong,
    check_batch_size,
    check_chunks,
    check_query_args,
)
from sci_etl_core.exceptions import EmbeddingDimensionError, EmbeddingStoreError

__all__ = ["AsyncSqliteEmbeddingStore"]

T = TypeVar("T")


def _encode_metadata(metadata: dict[str, Any]) -> str:
    return json.dumps(metadata, ensure_ascii=False, default=str, sort_keys=True)


class AsyncSqliteEmbeddingStore(AsyncEmbeddingStore):
    """Durable vector memory: one SQLite row per chunk, vectors as unit float32 blobs.

    Queries scan every stored vector exactly; the vectors are read once into memory and
    kept until the next write, so repeated queries cost one matrix product each (NumPy
    when installed, pure Python otherwise). Suited to tens of thousands of chunks.

    The file is opened, and created or migrated to the current schema, on the first
    operation. The standard-library ``sqlite3`` driver runs in a worker thread, one
    operation at a time. Every SQLite failure, including a file that is not a database
    or a schema newer than this library, raises
    :class:`~sci_etl_core.exceptions.EmbeddingStoreError` naming the file.
    :meth:`aclose` is not terminal: a later operation reopens the file.
    """

    def __init__(self, path: str | Path) -> None:
        self._path = str(path)
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._matrix: tuple[ScanMatrix, list[tuple[str, int]]] | None = None

    @property
    def path(self) -> str:
        """The database file, or ``:memory:``."""
        return self._path

    async def _run(self, action: str, work: Callable[[sqlite3.Connection], T]) -> T:
        def call() -> T:
            with self._lock:
                try:
                    return work(self._connect())
                except sqlite3.Error as error:
                    raise EmbeddingStoreError(f"{self._path}: cannot {action}: {error}") from error

        return await asyncio.to_thread(call)

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = sqlite3.connect(self._path, check_same_thread=False)
            try:
                migrate(connection, self._path)
            except BaseException:
                connection.close()
                raise
            self._connection = connection
        return self._connection

    def _dimension(self, connection: sqlite3.Connection) -> int | None:
        row = connection.execute("SELECT dimension FROM chunks LIMIT 1").fetchone()
        return None if row is None else int(row[0])

    async def add(self, chunks: Sequence[EmbeddingChunk]) -> None:
        """Store ``chunks`` in one transaction, replacing chunks with the same key."""
        rows = _rows(chunks)

        def work(connection: sqlite3.Connection) -> None:
            with connection:
                _insert(connection, rows, self._dimension(connection))
            self._matrix = None

        await self._run("add chunks", work)

    async def delete_record(self, record_id: str) -> None:
        """Remove every chunk of ``record_id``."""

        def work(connection: sqlite3.Connection) -> None:
            with connection:
                connection.execute("DELETE FROM chunks WHERE record_id = ?", (record_id,))
            self._matrix = None

        await self._run(f"delete record {record_id!r}", work)

    async def replace_record(self, record_id: str, chunks: Sequence[EmbeddingChunk]) -> None:
        """Replace the chunks of ``record_id`` with ``chunks`` in one transaction."""
        _check_chunks_belong(record_id, chunks)
        rows = _rows(chunks)

        def work(connection: sqlite3.Connection) -> None:
            with connection:
                connection.execute("DELETE FROM chunks WHERE record_id = ?", (record_id,))
                _insert(connection, rows, self._dimension(connection))
            self._matrix = None

        await self._run(f"replace record {record_id!r}", work)

    async def count(self) -> int:
        """Return how many chunks are stored."""
        return await self._run(
            "count chunks",
            lambda connection: int(connection.execute("SELECT count(*) FROM chunks").fetchone()[0]),
        )

    async def query(
        self,
        vector: Sequence[float],
        top_k: int = 5,
        min_score: float = -1.0,
        exclude_record_id: str | None = None,
    ) -> list[SearchHit]:
        """Return the chunks most similar to ``vector``, best first."""
        check_query_args(top_k, min_score)
        values = prepare_query(vector, None)

        def work(connection: sqlite3.Connection) -> list[SearchHit]:
            matrix, keys = self._scan_matrix(connection)
            if keys and len(values) != matrix.dimension:
                raise EmbeddingDimensionError(
                    f"{self._path}: query vector has dimension {len(values)}, "
                    f"but the store holds {matrix.dimension}"
                )
            ranked = rank_rows(
                matrix,
                keys,
                values,
                top_k=top_k,
                min_score=min_score,
                exclude_record_id=exclude_record_id,
            )
            return [_hit(connection, keys[row], score) for row, score in ranked]

        return await self._run("query chunks", work)

    def _scan_matrix(
        self, connection: sqlite3.Connection
    ) -> tuple[ScanMatrix, list[tuple[str, int]]]:
        if self._matrix is None:
            keys: list[tuple[str, int]] = []
            vectors: list[array[float]] = []
            dimension = 0
            cursor = connection.execute(
                "SELECT record_id, chunk_index, dimension, vector FROM chunks "
                "ORDER BY record_id, chunk_index"
            )
            for record_id, chunk_index, dim, blob in cursor:
                vector = array("f")
                vector.frombytes(blob)
                keys.append((record_id, chunk_index))
                vectors.append(vector)
                dimension = int(dim)
            self._matrix = (ScanMatrix(dimension, vectors), keys)
        return self._matrix

    async def iter_records(self, batch_size: int = 100) -> AsyncIterator[StoredRecord]:
        """Yield every record in ``record_id`` order, reading ``batch_size`` at a time.

        Records are paged by key (``record_id > last``), so a write between batches
        never makes a record appear twice.
        """
        check_batch_size(batch_size)
        last: str | None = None
        while True:
            batch = await self._run(
                "read records",
                functools.partial(_record_batch, after=last, batch_size=batch_size),
            )
            for record in batch:
                yield record
            if len(batch) < batch_size:
                return
            last = batch[-1].record_id

    async def aclose(self) -> None:
        """Close the connection; a later operation reopens it."""

        def work() -> None:
            with self._lock:
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None
                self._matrix = None

        await asyncio.to_thread(work)


def _rows(chunks: Sequence[EmbeddingChunk]) -> list[tuple[str, int, str, str, int, bytes]]:
    check_chunks(chunks)
    return [
        (
            chunk.record_id,
            chunk.chunk_index,
            chunk.text,
            _encode_metadata(chunk.metadata),
            len(chunk.vector),
            unit_vector(chunk.vector).tobytes(),
        )
        for chunk in chunks
    ]


def _insert(
    connection: sqlite3.Connection,
    rows: list[tuple[str, int, str, str, int, bytes]],
    stored_dimension: int | None,
) -> None:
    if rows and stored_dimension is not None and rows[0][4] != stored_dimension:
        raise EmbeddingDimensionError(
            f"chunks have dimension {rows[0][4]}, but the store holds {stored_dimension}"
        )
    connection.executemany(
        "INSERT OR REPLACE INTO chunks "
        "(record_id, chunk_index, text, metadata, dimension, vector) VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )


def _metadata(text: str) -> dict[str, Any]:
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def _hit(connection: sqlite3.Connection, key: tuple[str, int], score: float) -> SearchHit:
    text, metadata = connection.execute(
        "SELECT text, metadata FROM chunks WHERE record_id = ? AND chunk_index = ?", key
    ).fetchone()
    return SearchHit(key[0], key[1], text, score, _metadata(metadata))


def _record_batch(
    connection: sqlite3.Connection, *, after: str | None, batch_size: int
) -> list[StoredRecord]:
    ids = [
        row[0]
        for row in connection.execute(
            "SELECT DISTINCT record_id FROM chunks WHERE ? IS NULL OR record_id > ? "
            "ORDER BY record_id LIMIT ?",
            (after, after, batch_size),
        )
    ]
    if not ids:
        return []
    placeholders = ", ".join("?" for _ in ids)
    passages: dict[str, list[str]] = {record_id: [] for record_id in ids}
    first_metadata: dict[str, dict[str, Any]] = {}
    for record_id, text, metadata in connection.execute(
        f"SELECT record_id, text, metadata FROM chunks WHERE record_id IN ({placeholders}) "
        "ORDER BY record_id, chunk_index",
        ids,
    ):
        passages[record_id].append(text)
        first_metadata.setdefault(record_id, _metadata(metadata))
    return [
        StoredRecord(record_id, tuple(passages[record_id]), first_metadata[record_id])
        for record_id in ids
    ]
