"""Write documents into the FTS5 store file: one transaction per batch (internal).

The documents are cleaned and encoded on the caller's thread; the returned operation
runs on the worker thread with the connection.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from sci_etl_core.search import _sqlite_sql as sql
from sci_etl_core.search.filters import encode_metadata, sanitize_text, tag_rows
from sci_etl_core.search.store_base import SearchDocument

__all__ = ["delete_operation", "indexed_at", "write_operation"]

Operation = Callable[[sqlite3.Connection], None]


def indexed_at(now: Callable[[], datetime]) -> str:
    """Return the moment ``now`` gives as a UTC ISO 8601 string; a naive time is taken as UTC."""
    moment = now()
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat()


def write_operation(
    documents: Sequence[SearchDocument],
    facet_keys: frozenset[str],
    now: Callable[[], datetime],
) -> Operation | None:
    """Return the operation storing ``documents`` (one per record), or ``None`` for none.

    The text is cleaned with :func:`~sci_etl_core.search.filters.sanitize_text`, the
    tags of ``facet_keys`` derived and the time taken from ``now`` here, so the worker
    only runs three statements.
    """
    if not documents:
        return None
    rows: list[list[str]] = []
    tags: list[list[str]] = []
    for document in documents:
        rows.append(
            [
                document.record_id,
                sanitize_text(document.title),
                sanitize_text(document.abstract),
                sanitize_text(document.body),
                encode_metadata(document.metadata),
            ]
        )
        tags.extend(
            [key, value, document.record_id]
            for key, value in tag_rows(document.metadata, facet_keys)
        )
    stamp = indexed_at(now)
    for row in rows:
        row.append(stamp)
    documents_json = json.dumps(rows, ensure_ascii=False)
    tags_json = json.dumps(tags, ensure_ascii=False)
    ids_json = json.dumps([row[0] for row in rows], ensure_ascii=False)

    def write(connection: sqlite3.Connection) -> None:
        # One statement per table: FTS5 flushes its pending terms at every statement
        # savepoint, so row-by-row inserts through the trigger would be much slower.
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(sql.DELETE_TAGS_OF_RECORDS, (ids_json,))
        connection.execute(sql.UPSERT_DOCUMENTS, (documents_json,))
        connection.execute(sql.INSERT_TAGS, (tags_json,))
        connection.execute("COMMIT")

    return write


def delete_operation(record_id: str) -> Operation:
    """Return the operation removing the document of ``record_id``, if one is stored."""

    def delete(connection: sqlite3.Connection) -> None:
        connection.execute('DELETE FROM "documents" WHERE "record_id" = ?', (record_id,))

    return delete
