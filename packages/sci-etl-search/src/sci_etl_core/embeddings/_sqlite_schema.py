"""Schema and migrations of the SQLite vector memory; SQL text lives here only."""

from __future__ import annotations

import sqlite3

from sci_etl_core.exceptions import EmbeddingStoreError

__all__ = ["SCHEMA_VERSION", "migrate"]

#: One script per schema version; script ``n`` upgrades version ``n`` to ``n + 1``.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE chunks (
        record_id TEXT NOT NULL,
        chunk_index INTEGER NOT NULL,
        text TEXT NOT NULL,
        metadata TEXT NOT NULL,
        dimension INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (record_id, chunk_index)
    );
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


def migrate(connection: sqlite3.Connection, path: str) -> None:
    """Bring the database to :data:`SCHEMA_VERSION`, one transaction per step."""
    version = int(connection.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise EmbeddingStoreError(
            f"{path}: schema version {version} is newer than this library supports "
            f"({SCHEMA_VERSION}); upgrade sci-etl-search"
        )
    for step in range(version, SCHEMA_VERSION):
        with connection:
            connection.executescript(
                "BEGIN;\n" + MIGRATIONS[step] + f"\nPRAGMA user_version = {step + 1};\nCOMMIT;"
            )
