"""DDL and forward-only migrations of the SQLite FTS5 text index (internal).

The schema version lives in ``PRAGMA user_version``. Version ``n`` is reached by
running ``MIGRATIONS[0:n]`` in order, each in the transaction that bumps the version,
so a file is always at exactly one version. A file whose version is above
:data:`SCHEMA_VERSION` was written by a newer library and is refused.
"""

from __future__ import annotations

import re
import sqlite3

__all__ = [
    "MIGRATIONS",
    "OWN_TABLES",
    "REBUILD_INDEX",
    "SCHEMA_VERSION",
    "UNICODE61_TOKENIZE",
    "fts_table_sql",
    "fts_tokenize",
    "migrate",
    "retokenize",
    "settle_tokenizer",
]

REBUILD_INDEX = 'INSERT INTO "documents_fts"("documents_fts") VALUES (\'rebuild\')'
"""Re-tokenize every stored document into the FTS5 index (FTS5's ``rebuild`` command)."""

UNICODE61_TOKENIZE = "unicode61 remove_diacritics 2"
"""The FTS5 ``tokenize`` argument of an index built without stemming."""


def fts_table_sql(tokenize: str) -> str:
    """Return the statement creating the FTS5 index over ``documents`` with ``tokenize``.

    ``tokenize`` is one of this module's fixed tokenizer names, never user text.
    """
    return f"""
    CREATE VIRTUAL TABLE "documents_fts" USING fts5(
        "title", "abstract", "body",
        content='documents', content_rowid='doc_id',
        tokenize='{tokenize}'
    )
    """


_V1 = (
    """
    CREATE TABLE "documents" (
        "doc_id" INTEGER PRIMARY KEY,
        "record_id" TEXT NOT NULL UNIQUE,
        "title" TEXT NOT NULL DEFAULT '',
        "abstract" TEXT NOT NULL DEFAULT '',
        "body" TEXT NOT NULL DEFAULT '',
        "metadata" TEXT NOT NULL DEFAULT '{}',
        "indexed_at" TEXT NOT NULL
    )
    """,
    fts_table_sql(UNICODE61_TOKENIZE),
    """
    CREATE TRIGGER "documents_ai" AFTER INSERT ON "documents" BEGIN
        INSERT INTO "documents_fts"("rowid", "title", "abstract", "body")
        VALUES (new."doc_id", new."title", new."abstract", new."body");
    END
    """,
    """
    CREATE TRIGGER "documents_ad" AFTER DELETE ON "documents" BEGIN
        INSERT INTO "documents_fts"("documents_fts", "rowid", "title", "abstract", "body")
        VALUES ('delete', old."doc_id", old."title", old."abstract", old."body");
        DELETE FROM "tags" WHERE "doc_id" = old."doc_id";
    END
    """,
    """
    CREATE TRIGGER "documents_au" AFTER UPDATE OF "title", "abstract", "body" ON "documents" BEGIN
        INSERT INTO "documents_fts"("documents_fts", "rowid", "title", "abstract", "body")
        VALUES ('delete', old."doc_id", old."title", old."abstract", old."body");
        INSERT INTO "documents_fts"("rowid", "title", "abstract", "body")
        VALUES (new."doc_id", new."title", new."abstract", new."body");
    END
    """,
    """
    CREATE TABLE "tags" (
        "key" TEXT NOT NULL,
        "value" TEXT NOT NULL,
        "doc_id" INTEGER NOT NULL,
        PRIMARY KEY ("key", "value", "doc_id")
    ) WITHOUT ROWID
    """,
    'CREATE INDEX "tags_by_doc" ON "tags"("doc_id", "key")',
    """
    CREATE TABLE "index_settings" (
        "name" TEXT PRIMARY KEY,
        "value" TEXT NOT NULL
    )
    """,
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1,)
"""The statements taking a file from version ``i`` to ``i + 1``, for each ``i``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this library writes."""

OWN_TABLES = frozenset(
    {
        "documents",
        "documents_fts",
        "documents_fts_data",
        "documents_fts_idx",
        "documents_fts_docsize",
        "documents_fts_config",
        "tags",
        "index_settings",
    }
)
"""Every table the schema creates, including FTS5's shadow tables."""


class SchemaError(Exception):
    """The file's schema cannot be used; the message says why."""


def migrate(connection: sqlite3.Connection) -> int:
    """Bring the open database to :data:`SCHEMA_VERSION`, returning the version found.

    The connection must be in autocommit mode; each migration runs in its own
    ``BEGIN IMMEDIATE`` transaction, which re-reads the version so two processes
    opening one new file never both migrate it.
    """
    found = int(connection.execute("PRAGMA user_version").fetchone()[0])
    if found > SCHEMA_VERSION:
        raise SchemaError(
            f"its schema version is {found}, newer than version {SCHEMA_VERSION} "
            "this library supports; upgrade sci-etl-search to open it"
        )
    while True:
        connection.execute("BEGIN IMMEDIATE")
        try:
            version = int(connection.execute("PRAGMA user_version").fetchone()[0])
            if version >= SCHEMA_VERSION:
                connection.execute("COMMIT")
                return found
            if version == 0:
                _refuse_foreign(connection)
            for statement in MIGRATIONS[version]:
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {version + 1}")
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise


def _refuse_foreign(connection: sqlite3.Connection) -> None:
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    foreign = sorted(str(row[0]) for row in rows if not str(row[0]).startswith("sqlite_"))
    if foreign:
        raise SchemaError(
            f"it is an SQLite database of another application (tables: {', '.join(foreign[:5])}), "
            "not a text search index"
        )


def fts_tokenize(connection: sqlite3.Connection) -> str:
    """Return the ``tokenize`` argument the file's FTS5 index was created with."""
    row = connection.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'documents_fts'"
    ).fetchone()
    if row is None or not isinstance(row[0], str):
        raise SchemaError("its FTS5 index table is missing")
    match = re.search(r"tokenize\s*=\s*'([^']*)'", row[0])
    if match is None:
        raise SchemaError("its FTS5 index declares no tokenizer")
    return match.group(1)


def retokenize(connection: sqlite3.Connection, tokenize: str) -> None:
    """Re-create the FTS5 index with ``tokenize`` and fill it from the stored text.

    Runs inside the caller's transaction; the triggers keep naming the same table.
    """
    connection.execute('DROP TABLE "documents_fts"')
    connection.execute(fts_table_sql(tokenize))
    connection.execute(REBUILD_INDEX)


def settle_tokenizer(connection: sqlite3.Connection, wanted: str | None) -> str:
    """Return the file's tokenizer after opening, re-creating an empty index as ``wanted``.

    A file holding documents keeps its tokenizer whatever is ``wanted``; re-tokenizing
    it is an explicit ``rebuild_index``. The connection must be in autocommit mode.
    """
    found = fts_tokenize(connection)
    if wanted is None or wanted == found:
        return found
    connection.execute("BEGIN IMMEDIATE")
    try:
        empty = connection.execute('SELECT NOT EXISTS (SELECT 1 FROM "documents")').fetchone()[0]
        if empty:
            retokenize(connection, wanted)
            found = wanted
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return found
