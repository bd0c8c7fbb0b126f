"""Real SQLite FTS5 as the oracle for Python-side matching: a table, loading, and queries.

The compiler tests (unicode61) and the stemming tests (porter) both load a corpus into an
FTS5 table and compare the rows FTS5 selects with what ``matches`` accepts.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from sci_etl_core.search.compile_fts5 import to_filter_expression, to_match_expression
from sci_etl_core.search.evaluate import matches
from sci_etl_core.search.query import Node
from sci_etl_core.search.store_base import SearchDocument
from sci_etl_core.search.tokenize import Tokenizer


@contextmanager
def fts5_oracle(tokenize: str) -> Iterator[sqlite3.Connection]:
    """An in-memory database with ``documents`` and ``documents_fts`` using ``tokenize``."""
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE documents(doc_id INTEGER PRIMARY KEY)")
    connection.execute(
        "CREATE VIRTUAL TABLE documents_fts USING fts5(title, abstract, body, "
        f"tokenize = '{tokenize}')"
    )
    try:
        yield connection
    finally:
        connection.close()


def load(db: sqlite3.Connection, docs: list[SearchDocument]) -> None:
    """Replace the corpus with ``docs``, numbered from 1."""
    db.execute("DELETE FROM documents")
    db.execute("DELETE FROM documents_fts")
    for doc_id, doc in enumerate(docs, start=1):
        db.execute("INSERT INTO documents(doc_id) VALUES (?)", (doc_id,))
        db.execute(
            "INSERT INTO documents_fts(rowid, title, abstract, body) VALUES (?, ?, ?, ?)",
            (doc_id, doc.title, doc.abstract, doc.body),
        )


def expected(
    node: Node, docs: list[SearchDocument], tokenizer: Tokenizer | None = None
) -> set[int]:
    """The numbers of the documents ``matches`` accepts."""
    return {i for i, doc in enumerate(docs, start=1) if matches(node, doc, tokenizer=tokenizer)}


def fts5_match(db: sqlite3.Connection, node: Node) -> set[int]:
    """The rows FTS5 selects for the node's MATCH expression."""
    rows = db.execute(
        "SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?", (to_match_expression(node),)
    )
    return {row[0] for row in rows}


def fts5_filter(db: sqlite3.Connection, node: Node) -> set[int]:
    """The rows the node's filter expression selects."""
    sql, params = to_filter_expression(node)
    rows = db.execute(f"SELECT d.doc_id FROM documents d WHERE {sql}", params)
    return {row[0] for row in rows}


@contextmanager
def vocab_oracle(tokenize: str) -> Iterator[sqlite3.Connection]:
    """An in-memory one-column FTS5 table ``t`` using ``tokenize``, read through ``v``."""
    connection = sqlite3.connect(":memory:")
    connection.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{tokenize}')")
    connection.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    try:
        yield connection
    finally:
        connection.close()


def indexed_terms(db: sqlite3.Connection, text: str) -> list[bytes]:
    """The terms FTS5 indexes for ``text``, in order, as bytes (a stem need not be UTF-8)."""
    db.execute("DELETE FROM t")
    db.execute("INSERT INTO t(rowid, x) VALUES (1, ?)", (text,))
    rows = db.execute("SELECT offset, CAST(term AS BLOB) FROM v ORDER BY offset").fetchall()
    assert [offset for offset, _ in rows] == list(range(len(rows)))
    return [term for _, term in rows]
