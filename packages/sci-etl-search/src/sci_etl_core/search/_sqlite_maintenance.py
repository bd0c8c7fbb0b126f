"""Maintain the FTS5 store file: optimize, rebuild, re-tag, check (internal).

Each function is an operation the worker thread runs with the connection. None of
them reads text from outside the file: rebuilding re-tokenizes the stored text, and
re-tagging re-reads the stored metadata.
"""

from __future__ import annotations

import sqlite3

from sci_etl_core.search._sqlite_hits import decode_metadata
from sci_etl_core.search._sqlite_schema import (
    MULTISCRIPT_KEY,
    REBUILD_INDEX,
    fts_tokenize,
    is_multiscript,
    multiscript_key,
    retokenize,
)
from sci_etl_core.search._sqlite_state import IndexState
from sci_etl_core.search.filters import tag_rows

__all__ = ["integrity_check", "optimize", "rebuild_index", "rebuild_tags"]


def optimize(connection: sqlite3.Connection) -> None:
    """Merge the FTS5 index's segments."""
    connection.execute('INSERT INTO "documents_fts"("documents_fts") VALUES (\'optimize\')')


def rebuild_index(connection: sqlite3.Connection, state: IndexState) -> None:
    """Re-tokenize the stored text into a fresh index, with the tokenizer asked for if any."""
    # A failing statement is rolled back by the worker, leaving the old index.
    connection.execute("BEGIN IMMEDIATE")
    found = fts_tokenize(connection)
    wanted = state.wanted_tokenize
    if wanted is None and is_multiscript(found) and not found.startswith(f"{MULTISCRIPT_KEY} "):
        wanted = multiscript_key(found.split(" ", 1)[1])  # segmented by older rules
    if wanted is not None and wanted != found:
        retokenize(connection, wanted)
        found = wanted
    else:
        connection.execute(REBUILD_INDEX)
    connection.execute("COMMIT")
    state.file_tokenize = found


def rebuild_tags(connection: sqlite3.Connection, state: IndexState) -> None:
    """Replace every tag by those of ``state.facet_keys``, in one transaction."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute('DELETE FROM "tags"')
        rows = connection.execute('SELECT "doc_id", "record_id", "metadata" FROM "documents"')
        for doc_id, record_id, text in rows.fetchall():
            metadata = decode_metadata(state.path, record_id, text)
            tags = tag_rows(metadata, state.facet_keys)
            connection.executemany(
                'INSERT INTO "tags"("key", "value", "doc_id") VALUES (?, ?, ?)',
                [(key, value, doc_id) for key, value in tags],
            )
        state.write_built(connection, state.facet_keys)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def integrity_check(connection: sqlite3.Connection) -> bool:
    """Report whether the file is sound and the FTS5 index agrees with the stored text."""
    if connection.execute("PRAGMA quick_check").fetchone()[0] != "ok":
        return False
    try:
        connection.execute(
            'INSERT INTO "documents_fts"("documents_fts", "rank") VALUES (\'integrity-check\', 1)'
        )
    except sqlite3.DatabaseError as exc:
        if "malformed" in str(exc) or "corrupt" in str(exc):
            return False
        raise
    return True
