"""Read the FTS5 store file: ranked search, filters, documents and counts (internal).

Each function takes a request already validated on the caller's thread and returns
the operation the worker thread runs with the connection; the SQL comes from
:mod:`~sci_etl_core.search._sqlite_sql`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from sci_etl_core.search import _sqlite_sql as sql
from sci_etl_core.search._sqlite_hits import read_hits
from sci_etl_core.search._sqlite_state import IndexState
from sci_etl_core.search._store_checks import sort_facet_counts
from sci_etl_core.search.compile_fts5 import to_match_expression
from sci_etl_core.search.filters import RangeFilter, SearchFilter
from sci_etl_core.search.query import Node
from sci_etl_core.search.store_base import TextHit

__all__ = [
    "DocumentRow",
    "count_operation",
    "documents_operation",
    "facet_operation",
    "filter_operation",
    "range_operation",
    "search_operation",
]

T = TypeVar("T")
Operation = Callable[[sqlite3.Connection], T]
DocumentRow = tuple[str, str, str, str, str]
"""``record_id``, title, abstract, body and metadata JSON of one stored document."""

_ID_CHUNK = 500
"""Record ids per ``IN`` list, well under SQLite's limit on bound parameters."""


@contextmanager
def _snapshot(connection: sqlite3.Connection) -> Iterator[None]:
    """One read transaction: every statement inside reads the same state of the file."""
    connection.execute("BEGIN")
    try:
        yield
    finally:
        connection.execute("COMMIT")


def search_operation(
    state: IndexState,
    node: Node,
    limit: int,
    exclude_record_id: str | None,
    filters: tuple[SearchFilter, ...],
) -> Operation[list[TextHit]]:
    """Return the operation ranking the documents matching ``node`` and ``filters``."""
    to_match_expression(node)  # refuse an unrankable query before it is queued

    def read(connection: sqlite3.Connection) -> list[TextHit]:
        state.require_tokenizer(node)
        state.require_built(item.key for item in filters)
        match = to_match_expression(state.fts_query(node))
        with _snapshot(connection):  # the ranking and the hits' records, beside any writer
            ranked = _rank(connection, state, match, limit, exclude_record_id, filters)
            return read_hits(
                connection,
                state.path,
                node,
                match,
                ranked,
                state.tokenizer,
                shadow=state.multiscript,
            )

    return read


def _rank(
    connection: sqlite3.Connection,
    state: IndexState,
    match: str,
    limit: int,
    exclude_record_id: str | None,
    filters: tuple[SearchFilter, ...],
) -> list[tuple[int, float]]:
    """Return the best ``limit`` ``(doc_id, score)`` pairs, higher scores first."""
    if not filters and exclude_record_id is None:
        # The FTS5 table alone; one more row than asked for tells whether a tie
        # crosses the limit, which only the join below orders by record_id.
        statement, params = sql.ranked_rowids_sql(match, state.weights, limit + 1)
        rows = connection.execute(statement, params).fetchall()
        if len(rows) <= limit or rows[limit][1] != rows[limit - 1][1]:
            return [(doc_id, -score) for doc_id, score in rows[:limit]]
    # Filters, an excluded record, or a tie across the limit: rank with the join.
    statement, params = sql.ranked_ids_sql(match, state.weights, limit, exclude_record_id, filters)
    return [(row[0], row[2]) for row in connection.execute(statement, params)]


def filter_operation(
    state: IndexState, node: Node | None, filters: tuple[SearchFilter, ...]
) -> Operation[frozenset[str]]:
    """Return the operation listing every record satisfying ``node`` and ``filters``."""

    def read(connection: sqlite3.Connection) -> frozenset[str]:
        state.require_tokenizer(node)
        state.require_built(item.key for item in filters)
        statement, params = sql.filter_ids_sql(_fts_query(state, node), filters)
        return frozenset(row[0] for row in connection.execute(statement, params))

    return read


def documents_operation(wanted: Sequence[str]) -> Operation[list[DocumentRow]]:
    """Return the operation reading the stored rows of the ``wanted`` record ids."""

    def read(connection: sqlite3.Connection) -> list[DocumentRow]:
        rows: list[DocumentRow] = []
        for start in range(0, len(wanted), _ID_CHUNK):
            chunk = wanted[start : start + _ID_CHUNK]
            holes = ", ".join("?" for _ in chunk)
            rows.extend(
                connection.execute(
                    'SELECT "record_id", "title", "abstract", "body", "metadata" '
                    f'FROM "documents" WHERE "record_id" IN ({holes})',
                    chunk,
                ).fetchall()
            )
        return rows

    return read


def facet_operation(
    state: IndexState,
    keys: Sequence[str],
    node: Node | None,
    filters: tuple[SearchFilter, ...],
) -> Operation[dict[str, tuple[tuple[str, int], ...]]]:
    """Return the operation counting matches per value of each key, in one transaction."""

    def read(connection: sqlite3.Connection) -> dict[str, tuple[tuple[str, int], ...]]:
        state.require_tokenizer(node)
        state.require_built([*keys, *(item.key for item in filters)])
        query = _fts_query(state, node)
        statements = {
            key: sql.facet_sql(key, query, [item for item in filters if item.key != key])
            for key in dict.fromkeys(keys)
        }
        result: dict[str, tuple[tuple[str, int], ...]] = {}
        with _snapshot(connection):
            for key, (statement, params) in statements.items():
                counts = {str(v): int(c) for v, c in connection.execute(statement, params)}
                result[key] = sort_facet_counts(counts)
        return result

    return read


def range_operation(
    state: IndexState,
    ranges: Sequence[RangeFilter],
    node: Node | None,
    filters: tuple[SearchFilter, ...],
) -> Operation[tuple[int, ...]]:
    """Return the operation counting matches inside each of ``ranges``, in one transaction."""

    def read(connection: sqlite3.Connection) -> tuple[int, ...]:
        state.require_tokenizer(node)
        state.require_built([*(r.key for r in ranges), *(f.key for f in filters)])
        query = _fts_query(state, node)
        statements = [
            sql.count_sql(query, [*(f for f in filters if f.key != item.key), item])
            for item in ranges
        ]
        with _snapshot(connection):
            return tuple(
                int(connection.execute(statement, params).fetchone()[0])
                for statement, params in statements
            )

    return read


def _fts_query(state: IndexState, node: Node | None) -> Node | None:
    return None if node is None else state.fts_query(node)


def count_operation(connection: sqlite3.Connection) -> int:
    """Return how many documents the file holds."""
    return int(connection.execute('SELECT COUNT(*) FROM "documents"').fetchone()[0])
