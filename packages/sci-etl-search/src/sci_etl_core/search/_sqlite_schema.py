"""DDL and forward-only migrations of the SQLite FTS5 text index (internal).

The schema version lives in ``PRAGMA user_version``. Version ``n`` is reached by
running ``MIGRATIONS[0:n]`` in order, each in the transaction that bumps the version,
so a file is always at exactly one version. A file whose version is above
:data:`SCHEMA_VERSION` was written by a newer library and is refused.
"""

from __future__ import annotations

import re
import sqlite3

from sci_etl_core.search.multiscript import MULTISCRIPT_RULES_VERSION

__all__ = [
    "MIGRATIONS",
    "MULTISCRIPT_KEY",
    "OWN_TABLES",
    "REBUILD_INDEX",
    "SCHEMA_VERSION",
    "SHADOW_FUNCTION",
    "UNICODE61_TOKENIZE",
    "fts_table_sql",
    "fts_tokenize",
    "is_multiscript",
    "migrate",
    "multiscript_key",
    "retokenize",
    "settle_tokenizer",
]

REBUILD_INDEX = 'INSERT INTO "documents_fts"("documents_fts") VALUES (\'rebuild\')'
"""Re-tokenize every stored document into the FTS5 index (FTS5's ``rebuild`` command)."""

UNICODE61_TOKENIZE = "unicode61 remove_diacritics 2"
"""The FTS5 ``tokenize`` argument of an index built without stemming."""


MULTISCRIPT_KEY = f"multiscript{MULTISCRIPT_RULES_VERSION}"
"""The word that starts the key of an index of shadow text (see :func:`multiscript_key`).

The index's content is then the view of that name, which reads every field of
``documents`` through :data:`SHADOW_FUNCTION`; the number is the rules version, so a file
built with other rules is told apart."""

SHADOW_FUNCTION = "sci_etl_shadow_text"
"""The SQL function (:func:`~sci_etl_core.search.multiscript.shadow_text`) every connection
registers; a multiscript index's triggers and content view call it."""

_FIELDS = ("title", "abstract", "body")


def multiscript_key(tokenize: str) -> str:
    """Return the key of an index of shadow text tokenized by ``tokenize``."""
    return f"{MULTISCRIPT_KEY} {tokenize}"


def is_multiscript(key: str) -> bool:
    """Whether the index key names an index of multiscript shadow text (of any rules version)."""
    return key.startswith("multiscript")


def _split_key(key: str) -> tuple[str, str]:
    """Return the content table and the FTS5 ``tokenize`` argument of an index key."""
    if is_multiscript(key):
        content, _, tokenize = key.partition(" ")
        return content, tokenize
    return "documents", key


def fts_table_sql(key: str) -> str:
    """Return the statement creating the FTS5 index over ``documents`` for the index ``key``.

    ``key`` is an FTS5 ``tokenize`` argument, or one of them after :data:`MULTISCRIPT_KEY`
    for an index of shadow text; it is one of this module's fixed names, never user text.
    """
    content, tokenize = _split_key(key)
    return f"""
    CREATE VIRTUAL TABLE "documents_fts" USING fts5(
        "title", "abstract", "body",
        content='{content}', content_rowid='doc_id',
        tokenize='{tokenize}'
    )
    """


def _index_statements(key: str) -> tuple[str, ...]:
    """The content view (for shadow text) and the triggers that keep the index of ``key``."""
    content, _ = _split_key(key)

    def values(row: str) -> str:
        if content == "documents":
            return ", ".join(f'{row}."{name}"' for name in _FIELDS)
        return ", ".join(f'{SHADOW_FUNCTION}({row}."{name}")' for name in _FIELDS)

    columns = '"title", "abstract", "body"'
    view = (
        f'CREATE VIEW "{content}" AS SELECT "doc_id", '
        + ", ".join(f'{SHADOW_FUNCTION}("{name}") AS "{name}"' for name in _FIELDS)
        + ' FROM "documents"'
    )
    statements = (
        f"""
        CREATE TRIGGER "documents_ai" AFTER INSERT ON "documents" BEGIN
            INSERT INTO "documents_fts"("rowid", {columns})
            VALUES (new."doc_id", {values("new")});
        END
        """,
        f"""
        CREATE TRIGGER "documents_ad" AFTER DELETE ON "documents" BEGIN
            INSERT INTO "documents_fts"("documents_fts", "rowid", {columns})
            VALUES ('delete', old."doc_id", {values("old")});
            DELETE FROM "tags" WHERE "doc_id" = old."doc_id";
        END
        """,
        f"""
        CREATE TRIGGER "documents_au" AFTER UPDATE OF {columns} ON "documents" BEGIN
            INSERT INTO "documents_fts"("documents_fts", "rowid", {columns})
            VALUES ('delete', old."doc_id", {values("old")});
            INSERT INTO "documents_fts"("rowid", {columns})
            VALUES (new."doc_id", {values("new")});
        END
        """,
    )
    return statements if content == "documents" else (view, *statements)


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
    """Return the key of the file's FTS5 index: its ``tokenize`` argument, after its shadow view."""
    row = connection.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'documents_fts'"
    ).fetchone()
    if row is None or not isinstance(row[0], str):
        raise SchemaError("its FTS5 index table is missing")
    match = re.search(r"tokenize\s*=\s*'([^']*)'", row[0])
    if match is None:
        raise SchemaError("its FTS5 index declares no tokenizer")
    content = re.search(r"content\s*=\s*'([^']*)'", row[0])
    if content is not None and is_multiscript(content.group(1)):
        return f"{content.group(1)} {match.group(1)}"
    return match.group(1)


def retokenize(connection: sqlite3.Connection, tokenize: str) -> None:
    """Re-create the FTS5 index as the key ``tokenize`` says and fill it from the stored text.

    Runs inside the caller's transaction. The triggers, and the view of shadow text a
    multiscript index reads, are re-created with it.
    """
    old = fts_tokenize(connection)
    connection.execute('DROP TABLE "documents_fts"')
    for name in ("documents_ai", "documents_ad", "documents_au"):
        connection.execute(f'DROP TRIGGER IF EXISTS "{name}"')
    if is_multiscript(old):
        connection.execute(f'DROP VIEW IF EXISTS "{_split_key(old)[0]}"')
    connection.execute(fts_table_sql(tokenize))
    for statement in _index_statements(tokenize):
        connection.execute(statement)
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
