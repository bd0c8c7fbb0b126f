"""Build the SQL the FTS5 store runs, apart from running it (internal).

Every function returns SQL text and its parameters. The SQL text comes only from fixed
fragments here and from :func:`~sci_etl_core.search.compile_fts5.to_filter_expression`;
every value a user supplies travels as a bound parameter.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sci_etl_core.search.compile_fts5 import to_filter_expression
from sci_etl_core.search.filters import MetadataFilter, SearchFilter
from sci_etl_core.search.query import Node

__all__ = [
    "Clause",
    "count_sql",
    "documents_sql",
    "facet_sql",
    "filter_ids_sql",
    "hits_sql",
    "ranked_ids_sql",
    "ranked_rowids_sql",
    "where_clause",
]

Clause = tuple[str, tuple[object, ...]]

DELETE_TAGS_OF_RECORDS = (
    'DELETE FROM "tags" WHERE "doc_id" IN (SELECT "doc_id" FROM "documents" '
    'WHERE "record_id" IN (SELECT "value" FROM json_each(?)))'
)
"""Delete the tags of the records whose ids the JSON array parameter lists."""

UPSERT_DOCUMENTS = (
    'INSERT INTO "documents"("record_id", "title", "abstract", "body", "metadata", "indexed_at") '
    "SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 "
    "FROM json_each(?) WHERE true "
    'ON CONFLICT("record_id") DO UPDATE SET "title" = excluded."title", '
    '"abstract" = excluded."abstract", "body" = excluded."body", '
    '"metadata" = excluded."metadata", "indexed_at" = excluded."indexed_at"'
)
"""Insert or replace documents given as a JSON array of ``[record_id, title, abstract,
body, metadata, indexed_at]`` arrays, in one statement."""

INSERT_TAGS = (
    'INSERT INTO "tags"("key", "value", "doc_id") '
    'SELECT t.value ->> 0, t.value ->> 1, d."doc_id" FROM json_each(?) t '
    'JOIN "documents" d ON d."record_id" = t.value ->> 2'
)
"""Insert tags given as a JSON array of ``[key, value, record_id]`` arrays."""


def filter_clause(item: SearchFilter) -> Clause:
    """Return the condition on ``d."doc_id"`` that one filter imposes."""
    negation = "NOT " if item.negated else ""
    if isinstance(item, MetadataFilter):
        values = tuple(sorted(item.values))
        marks = ", ".join("?" for _ in values)
        sql = (
            f'd."doc_id" {negation}IN (SELECT "doc_id" FROM "tags" '
            f'WHERE "key" = ? AND "value" IN ({marks}))'
        )
        return sql, (item.key, *values)
    sql = (
        f'd."doc_id" {negation}IN (SELECT "doc_id" FROM "tags" '
        'WHERE "key" = ? AND tag_in_range("value", ?, ?))'
    )
    return sql, (item.key, item.low, item.high)


def where_clause(query: Node | None, filters: Sequence[SearchFilter]) -> Clause:
    """Return the condition on ``documents d`` that ``query`` and ``filters`` impose together."""
    parts: list[str] = []
    params: list[object] = []
    if query is not None:
        sql, query_params = to_filter_expression(query)
        parts.append(sql)
        params.extend(query_params)
    for item in filters:
        sql, filter_params = filter_clause(item)
        parts.append(sql)
        params.extend(filter_params)
    if not parts:
        return "1", ()
    return " AND ".join(f"({part})" for part in parts), tuple(params)


def filter_ids_sql(query: Node | None, filters: Sequence[SearchFilter]) -> Clause:
    """Return the query listing every ``record_id`` satisfying ``query`` and ``filters``."""
    where, params = where_clause(query, filters)
    return f'SELECT d."record_id" FROM "documents" d WHERE {where}', params


def count_sql(query: Node | None, filters: Sequence[SearchFilter]) -> Clause:
    """Return the query counting the documents satisfying ``query`` and ``filters``."""
    where, params = where_clause(query, filters)
    return f'SELECT COUNT(*) FROM "documents" d WHERE {where}', params


def facet_sql(key: str, query: Node | None, filters: Sequence[SearchFilter]) -> Clause:
    """Return the query counting matching documents per tag value of ``key``."""
    where, params = where_clause(query, filters)
    sql = (
        'SELECT t."value", COUNT(*) FROM "tags" t WHERE t."key" = ? AND t."doc_id" IN '
        f'(SELECT d."doc_id" FROM "documents" d WHERE {where}) GROUP BY t."value"'
    )
    return sql, (key, *params)


def ranked_ids_sql(
    match: str,
    weights: tuple[float, float, float],
    limit: int,
    exclude_record_id: str | None,
    filters: Sequence[SearchFilter],
) -> Clause:
    """Return the ranked query joined to the documents: doc_id, record_id, positive score.

    The join applies ``filters`` and ``exclude_record_id`` and breaks equal scores by
    ``record_id`` in SQL, best first; no snippets (:func:`hits_sql` makes them).
    """
    where, params = where_clause(None, filters)
    exclude = ' AND d."record_id" <> ?' if exclude_record_id is not None else ""
    sql = (
        'SELECT d."doc_id", d."record_id", -bm25("documents_fts", ?, ?, ?) AS "score" '
        'FROM "documents_fts" JOIN "documents" d ON d."doc_id" = "documents_fts"."rowid" '
        f'WHERE "documents_fts" MATCH ? AND ({where}){exclude} '
        'ORDER BY "score" DESC, d."record_id" LIMIT ?'
    )
    tail: tuple[object, ...] = (exclude_record_id,) if exclude_record_id is not None else ()
    return sql, (*weights, match, *params, *tail, limit)


def ranked_rowids_sql(match: str, weights: tuple[float, float, float], limit: int) -> Clause:
    """Return the unfiltered ranked query on the FTS5 table alone: ``rowid`` and raw ``bm25``.

    The raw score is lower for a better match; ties are ordered by ``record_id``
    afterwards. Without filters, ranking needs no join, and ordering by the ``bm25()``
    expression measured about 15% faster on SciFact than FTS5's ``ORDER BY rank``. It
    makes no snippets: SQLite computes a result column for every row that enters the
    top ``limit`` while it scans, about nine rows for each one kept on SciFact, so
    :func:`hits_sql` makes them afterwards for the rows kept.
    """
    rank = 'bm25("documents_fts", {})'.format(", ".join(repr(float(w)) for w in weights))
    sql = (
        f'SELECT "rowid", {rank} AS "score" FROM "documents_fts" '
        'WHERE "documents_fts" MATCH ? ORDER BY "score" LIMIT ?'
    )
    return sql, (match, limit)


def hits_sql(
    match: str, doc_ids: Sequence[int], marks: tuple[str, str, str], tokens: int
) -> Clause:
    """Return the query giving each of ``doc_ids`` with what its hit shows.

    Rows are ``doc_id``, FTS5's snippet of each column, ``record_id``, title and
    metadata. FTS5 evaluates the MATCH once, over the rowid range the ids span, and
    the ids are a filter on that scan (the unary ``+`` keeps SQLite from looking each
    one up with its own evaluation of the MATCH, which measured twice as slow), so
    snippets are made and documents read for the listed rows only. ``doc_ids`` travel
    as one JSON array, whatever their number.
    """
    open_mark, close_mark, ellipsis = marks
    snippets = ", ".join(f'snippet("documents_fts", {column}, ?, ?, ?, ?)' for column in (0, 1, 2))
    sql = (
        f'SELECT "documents_fts"."rowid", {snippets}, d."record_id", d."title", d."metadata" '
        'FROM "documents_fts" CROSS JOIN "documents" d ON d."doc_id" = "documents_fts"."rowid" '
        'WHERE "documents_fts" MATCH ? AND "documents_fts"."rowid" BETWEEN ? AND ? '
        'AND +"documents_fts"."rowid" IN (SELECT "value" FROM json_each(?))'
    )
    per_snippet = (open_mark, close_mark, ellipsis, tokens)
    ids = json.dumps(list(doc_ids))
    return sql, (*(per_snippet * 3), match, min(doc_ids), max(doc_ids), ids)


def documents_sql(doc_ids: Sequence[int], *, full: bool = False) -> Clause:
    """Return the query giving doc_id, record_id, title and metadata of each of ``doc_ids``.

    With ``full``, the abstract and body follow.
    """
    holes = ", ".join("?" for _ in doc_ids)
    more = ', "abstract", "body"' if full else ""
    sql = (
        f'SELECT "doc_id", "record_id", "title", "metadata"{more} FROM "documents" '
        f'WHERE "doc_id" IN ({holes})'
    )
    return sql, tuple(doc_ids)
