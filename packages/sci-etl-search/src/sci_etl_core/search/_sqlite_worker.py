"""A store file's SQLite connections, each used by one worker thread at a time (internal).

Writes and maintenance go through :meth:`SqliteWorker.run`: one writer connection in a
single-thread executor, so they never interleave. Reads may go through
:meth:`SqliteWorker.read` instead: a small pool of reader threads, each with its own
connection (``PRAGMA query_only``), which WAL mode lets read side by side and beside the
writer, each in its own snapshot, so concurrent searches do not queue behind one
connection. The writer opens (creates, migrates) the file before any reader does. A file
given as ``:memory:`` or a ``file:`` URI is read through the writer.

An awaiting task that is cancelled stops waiting, but a statement already running
finishes in its worker, so a connection is never left mid-statement; an operation not
yet started is dropped. Every :class:`sqlite3.Error`, and every other fault opening the
file, surfaces as :class:`SearchStoreError` naming the file and the action.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from sci_etl_core.exceptions import SearchStoreError
from sci_etl_core.search._sqlite_schema import SchemaError, migrate

__all__ = ["SqliteWorker"]

T = TypeVar("T")

_SQLITE_HEADER = b"SQLite format 3\x00"


class SqliteWorker:
    """Owns the connections of one store file: the writer's, and up to ``readers`` more.

    ``on_open`` settles a newly opened writer connection (schema, state);
    ``on_read_open`` prepares a reader's (functions its queries call).
    """

    def __init__(
        self,
        path: str | Path,
        on_open: Callable[[sqlite3.Connection, int], None],
        *,
        readers: int = 1,
        on_read_open: Callable[[sqlite3.Connection], None] = lambda _: None,
    ) -> None:
        if readers < 1:
            raise ValueError(f"readers must be at least 1, got {readers}")
        self.path = str(path)
        self._on_open = on_open
        self._on_read_open = on_read_open
        self._readers = readers
        self._executor: ThreadPoolExecutor | None = None
        self._connection: sqlite3.Connection | None = None
        self._read_executor: ThreadPoolExecutor | None = None
        self._read_local = threading.local()
        self._read_connections: list[sqlite3.Connection] = []
        self._read_lock = threading.Lock()

    def label(self) -> str:
        """Return the file name as error messages show it."""
        return self.path

    async def run(self, action: str, operation: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``operation`` on the connection in the worker thread, opening it first if needed."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-fts5")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._call, action, operation)

    async def read(self, action: str, operation: Callable[[sqlite3.Connection], T]) -> T:
        """Run the read-only ``operation`` on a reader connection (see the module's docs)."""
        if self._readers == 1 or self.path == ":memory:" or self.path.startswith("file:"):
            return await self.run(action, operation)
        if self._connection is None:  # the writer creates and migrates the file first
            await self.run(action, lambda _: None)
        if self._read_executor is None:
            self._read_executor = ThreadPoolExecutor(
                max_workers=self._readers, thread_name_prefix="sqlite-fts5-read"
            )
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._read_executor, self._read_call, action, operation)

    async def close(self) -> None:
        """Close the connections after every operation already submitted; a later run reopens."""
        loop = asyncio.get_running_loop()
        readers, self._read_executor = self._read_executor, None
        if readers is not None:
            await asyncio.shield(loop.run_in_executor(None, readers.shutdown, True))
            self._read_local = threading.local()
            with self._read_lock:
                connections, self._read_connections = self._read_connections, []
            for connection in connections:
                with contextlib.suppress(sqlite3.Error):
                    connection.close()
        executor = self._executor
        if executor is None:
            return
        self._executor = None
        try:
            await asyncio.shield(loop.run_in_executor(executor, self._close_connection))
        finally:
            executor.shutdown(wait=False)

    def _read_call(self, action: str, operation: Callable[[sqlite3.Connection], T]) -> T:
        connection: sqlite3.Connection | None = getattr(self._read_local, "connection", None)
        if connection is None:
            connection = self._open_reader(action)
        return self._guarded(connection, action, operation)

    def _open_reader(self, action: str) -> sqlite3.Connection:
        try:
            connection = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30.0
            )
            connection.execute("PRAGMA query_only = 1")
            self._on_read_open(connection)
        except sqlite3.Error as exc:
            raise SearchStoreError(f"{self.path}: cannot {action}: {_describe(exc)}") from exc
        self._read_local.connection = connection
        with self._read_lock:
            self._read_connections.append(connection)
        return connection

    def _close_connection(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.close()
            except sqlite3.Error as exc:
                raise SearchStoreError(f"{self.path}: cannot close the text index: {exc}") from exc

    def _call(self, action: str, operation: Callable[[sqlite3.Connection], T]) -> T:
        connection = self._connection
        if connection is None:
            connection = self._open()
        return self._guarded(connection, action, operation)

    def _guarded(
        self,
        connection: sqlite3.Connection,
        action: str,
        operation: Callable[[sqlite3.Connection], T],
    ) -> T:
        try:
            return operation(connection)
        except sqlite3.Error as exc:
            if connection.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
            raise SearchStoreError(f"{self.path}: cannot {action}: {_describe(exc)}") from exc
        except UnicodeEncodeError as exc:
            raise SearchStoreError(
                f"{self.path}: cannot {action}: text with a lone surrogate cannot reach SQLite"
            ) from exc

    def _open(self) -> sqlite3.Connection:
        self._check_file()
        try:
            connection = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30.0
            )
        except sqlite3.Error as exc:
            raise SearchStoreError(
                f"{self.path}: cannot open the text index: {_describe(exc)}"
            ) from exc
        try:
            connection.execute("PRAGMA journal_mode = WAL").fetchone()
            connection.execute("PRAGMA synchronous = NORMAL")
            found = migrate(connection)
            self._on_open(connection, found)
        except SchemaError as exc:
            connection.close()
            raise SearchStoreError(f"{self.path}: cannot open the text index: {exc}") from exc
        except sqlite3.Error as exc:
            connection.close()
            raise SearchStoreError(
                f"{self.path}: cannot open the text index: {_describe(exc)}"
            ) from exc
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        return connection

    def _check_file(self) -> None:
        if self.path == ":memory:" or self.path.startswith("file:"):
            return
        file = Path(self.path)
        if file.is_dir():
            raise SearchStoreError(f"{self.path}: cannot open the text index: it is a directory")
        if not file.exists():
            if not file.parent.is_dir():
                raise SearchStoreError(
                    f"{self.path}: cannot create the text index: "
                    f"directory {str(file.parent)!r} does not exist"
                )
            return
        try:
            with file.open("rb") as handle:
                header = handle.read(len(_SQLITE_HEADER))
        except OSError as exc:
            raise SearchStoreError(f"{self.path}: cannot open the text index: {exc}") from exc
        if not header:
            raise SearchStoreError(
                f"{self.path}: cannot open the text index: the file is empty, not a database; "
                "delete it or pass a path that does not exist yet"
            )
        if header != _SQLITE_HEADER:
            raise SearchStoreError(
                f"{self.path}: cannot open the text index: the file is not an SQLite database"
            )


def _describe(exc: sqlite3.Error) -> str:
    text = str(exc) or type(exc).__name__
    if "readonly" in text or "read-only" in text:
        return f"{text} (the file or its directory is read-only)"
    if "unable to open" in text:
        return f"{text} (check that the directory exists and is writable)"
    return text
