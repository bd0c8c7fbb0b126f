"""The durable text search store on SQLite FTS5, with the standard-library driver."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from sci_etl_core.exceptions import SearchStoreError
from sci_etl_core.search import _sqlite_sql as sql
from sci_etl_core.search._sqlite_hits import MARKS, decode_metadata, read_hits, snippet_fault
from sci_etl_core.search._sqlite_schema import (
    REBUILD_INDEX,
    UNICODE61_TOKENIZE,
    fts_tokenize,
    retokenize,
    settle_tokenizer,
)
from sci_etl_core.search._sqlite_worker import SqliteWorker
from sci_etl_core.search._store_checks import (
    check_facet_request,
    check_filter_request,
    check_range_request,
    check_record_ids,
    check_search_request,
    facet_key_set,
    sort_facet_counts,
)
from sci_etl_core.search.compile_fts5 import to_match_expression
from sci_etl_core.search.filters import (
    SNIPPET_TOKENS,
    RangeFilter,
    SearchFilter,
    encode_metadata,
    sanitize_text,
    tag_in_range,
    tag_rows,
)
from sci_etl_core.search.query import Node
from sci_etl_core.search.stemming import FTS5_PORTER_TOKENIZE, PorterTokenizer
from sci_etl_core.search.store_base import (
    AsyncTextSearchStore,
    BM25Weights,
    SearchDocument,
    TextHit,
)
from sci_etl_core.search.tokenize import Tokenizer, Unicode61Tokenizer

__all__ = ["AsyncSqliteFts5Store", "built_facet_keys", "fts5_available"]

_BUILT_KEYS = "facet_keys_built"
_Row = tuple[str, str, str, str, str, list[tuple[str, str]]]


def fts5_available(connect: Callable[[], sqlite3.Connection] | None = None) -> bool:
    """Report whether this interpreter's SQLite was built with FTS5.

    ``connect`` opens the connection to probe, by default an in-memory database
    opened through :func:`sqlite3.connect` as it is at call time. A probe that
    cannot connect, or cannot create an FTS5 table, reports ``False``.
    """
    try:
        connection = connect() if connect is not None else sqlite3.connect(":memory:")
    except (sqlite3.Error, OSError):
        return False
    try:
        connection.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)")
        connection.execute("DROP TABLE temp.fts5_probe")
    except sqlite3.Error:
        return False
    finally:
        connection.close()
    return True


class AsyncSqliteFts5Store(AsyncTextSearchStore):
    """Durable lexical index on SQLite FTS5, keeping each article's text once.

    Backed by the standard-library ``sqlite3`` driver run off the event loop, so
    it carries no third-party dependency. The text lives in a ``documents``
    table and FTS5 holds only the inverted index, kept consistent by triggers.
    Every write is one transaction, so re-indexing a record replaces its text,
    metadata, and tags atomically. The single connection is used by one worker
    thread at a time, even when an awaiting task is cancelled, and every SQLite
    failure, including a file that is not a database, surfaces as
    :class:`~sci_etl_core.exceptions.SearchStoreError`.

    Ranking is FTS5's ``bm25()`` with the field weights, reported as a
    score where higher is better. ``snippets`` holds FTS5's snippet of every
    field it highlights a match in, and ``snippet`` is the one of them FTS5's
    ``snippet(..., -1, ...)`` would choose: the most distinct query words shown
    (1000 points each, 1 for each repeat), ties to the earlier field. Only the
    per-field snippets are computed, in the ranking statement itself, so FTS5
    evaluates the query once per search. On the queries where FTS5 counts a word inside a
    part of the query that fails to match, as
    :class:`~sci_etl_core.search.store_memory.InMemoryTextSearchStore`
    describes, the two stores can highlight different words and so list
    different fields. Each document's ``indexed_at`` is the UTC time from
    ``now``, as an ISO 8601 string with an offset.

    ``facet_keys`` names the metadata keys tagged for filters and facets. It is
    fixed for the life of the instance and recorded in the file. To change it,
    construct a store with the new keys and call :meth:`rebuild_tags`; until
    then a filter or facet on a key whose tags are not built raises
    :class:`~sci_etl_core.exceptions.SearchStoreError`.

    The file is opened, and created or migrated to the current schema, on the
    first operation rather than at construction. A file that is not a database,
    or whose schema is newer than this library supports, raises
    :class:`~sci_etl_core.exceptions.SearchStoreError` then.

    :meth:`aclose` is not terminal: a later call reopens the connection. Give
    each instance exactly one owner, which awaits :meth:`aclose`, and use it
    from one event loop. For a one-shot script, list the store in the
    pipeline's closeables.

    ``stemming`` chooses the tokenizer of a new index: ``True`` builds it with
    FTS5's ``porter unicode61 remove_diacritics 2``, so ``matching`` and
    ``matches`` are one word (:class:`~sci_etl_core.search.stemming.PorterTokenizer`
    is its pure-Python twin, for :class:`InMemoryTextSearchStore`); ``False``
    with ``unicode61 remove_diacritics 2`` alone. The file records the choice.
    ``None``, the default, follows the file, and builds a new file without
    stemming. An explicit choice that differs from a file holding documents is
    applied by :meth:`rebuild_index`, which re-tokenizes the stored text; until
    then every query raises :class:`~sci_etl_core.exceptions.SearchStoreError`
    rather than answer with the other tokenizer. An empty file is re-created
    with the chosen tokenizer when it is opened.

    Raises:
        SearchStoreError: This interpreter's SQLite was built without FTS5.
        TypeError: ``stemming`` is not ``True``, ``False`` or ``None``.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        facet_keys: Iterable[str] = (),
        weights: BM25Weights | None = None,
        now: Callable[[], datetime] | None = None,
        stemming: bool | None = None,
    ) -> None:
        if stemming is not None and not isinstance(stemming, bool):
            raise TypeError(f"stemming must be True, False or None, not {stemming!r}")
        keys = facet_key_set(facet_keys)
        if not fts5_available():
            raise SearchStoreError(
                f"{path}: cannot use the text index: this interpreter's SQLite "
                f"{sqlite3.sqlite_version} was built without FTS5"
            )
        self._facet_keys = keys
        self._weights = (weights or BM25Weights()).as_tuple()
        self._now = now or (lambda: datetime.now(UTC))
        self._built: frozenset[str] = frozenset()
        self._wanted_tokenize = None if stemming is None else _tokenize_for(stemming)
        self._file_tokenize: str | None = None
        self._worker = SqliteWorker(path, self._on_open)

    @property
    def path(self) -> str:
        """The database file, as given."""
        return self._worker.path

    @property
    def facet_keys(self) -> frozenset[str]:
        """The metadata keys this store tags documents by, for filters and facets."""
        return self._facet_keys

    @property
    def stemming(self) -> bool:
        """Whether queries match stemmed words: the file's tokenizer once it is open.

        Before the first operation this is the ``stemming`` asked for, ``False``
        when that was ``None``.
        """
        tokenize = self._file_tokenize or self._wanted_tokenize or UNICODE61_TOKENIZE
        return tokenize == FTS5_PORTER_TOKENIZE

    @property
    def tokenizer(self) -> Tokenizer:
        """The pure-Python twin of the index's tokenizer (see :attr:`stemming`)."""
        return _PORTER if self.stemming else _UNICODE61

    # -- opening -----------------------------------------------------------------------

    def _on_open(self, connection: sqlite3.Connection, found_version: int) -> None:
        connection.create_function("tag_in_range", 3, tag_in_range, deterministic=True)
        self._file_tokenize = settle_tokenizer(connection, self._wanted_tokenize)
        row = connection.execute(
            'SELECT "value" FROM "index_settings" WHERE "name" = ?', (_BUILT_KEYS,)
        ).fetchone()
        empty = connection.execute('SELECT NOT EXISTS (SELECT 1 FROM "documents")').fetchone()[0]
        if row is None or empty:
            if row is None or json.loads(row[0]) != sorted(self._facet_keys):
                self._write_built(connection, self._facet_keys)
            self._built = self._facet_keys
            return
        try:
            built = json.loads(row[0])
        except json.JSONDecodeError as exc:
            raise SearchStoreError(
                f"{self.path}: cannot open the text index: index_settings.{_BUILT_KEYS} "
                f"is not JSON ({exc})"
            ) from exc
        self._built = frozenset(str(key) for key in built)

    def _require_tokenizer(self, query: Node | None) -> None:
        """Refuse a query while the file's tokenizer differs from the one asked for."""
        wanted, found = self._wanted_tokenize, self._file_tokenize
        if query is None:
            return
        if wanted is not None and found is not None and wanted != found:
            built = "with" if found == FTS5_PORTER_TOKENIZE else "without"
            raise SearchStoreError(
                f"{self.path}: cannot query the text index: it was built {built} stemming "
                f"but the store was opened with stemming={wanted == FTS5_PORTER_TOKENIZE}; "
                "call rebuild_index() to re-tokenize it, or open it with stemming=None"
            )

    def _write_built(self, connection: sqlite3.Connection, keys: frozenset[str]) -> None:
        connection.execute(
            'INSERT INTO "index_settings"("name", "value") VALUES (?, ?) '
            'ON CONFLICT("name") DO UPDATE SET "value" = excluded."value"',
            (_BUILT_KEYS, json.dumps(sorted(keys))),
        )
        self._built = keys

    def _require_built(self, keys: Iterable[str]) -> None:
        missing = sorted(set(keys) - self._built)
        if missing:
            raise SearchStoreError(
                f"{self.path}: cannot filter or count by {', '.join(map(repr, missing))}: "
                "the file has no tags built for it yet; call rebuild_tags()"
            )

    # -- writing -----------------------------------------------------------------------

    def _prepare(self, documents: Sequence[SearchDocument]) -> list[_Row]:
        rows: list[_Row] = []
        for document in self._latest_documents(documents):
            rows.append(
                (
                    document.record_id,
                    sanitize_text(document.title),
                    sanitize_text(document.abstract),
                    sanitize_text(document.body),
                    encode_metadata(document.metadata),
                    tag_rows(document.metadata, self._facet_keys),
                )
            )
        return rows

    def _indexed_at(self) -> str:
        moment = self._now()
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat()

    async def index(self, documents: Sequence[SearchDocument]) -> None:
        """Store ``documents`` in one transaction, replacing any with the same ``record_id``."""
        rows = self._prepare(documents)
        if not rows:
            return
        stamp = self._indexed_at()

        documents_json = json.dumps(
            [
                [rid, title, abstract, body, meta, stamp]
                for rid, title, abstract, body, meta, _ in rows
            ],
            ensure_ascii=False,
        )
        tags_json = json.dumps(
            [[key, value, row[0]] for row in rows for key, value in row[5]], ensure_ascii=False
        )
        ids_json = json.dumps([row[0] for row in rows], ensure_ascii=False)

        def write(connection: sqlite3.Connection) -> None:
            # One statement per table: FTS5 flushes its pending terms at every statement
            # savepoint, so row-by-row inserts through the trigger would be much slower.
            connection.execute("BEGIN IMMEDIATE")
            connection.execute(sql.DELETE_TAGS_OF_RECORDS, (ids_json,))
            connection.execute(sql.UPSERT_DOCUMENTS, (documents_json,))
            connection.execute(sql.INSERT_TAGS, (tags_json,))
            connection.execute("COMMIT")

        await self._worker.run("write documents", write)

    async def replace_record(self, document: SearchDocument) -> None:
        """Replace the record's text, metadata, and tags in one transaction."""
        await self.index([document])

    async def delete_record(self, record_id: str) -> None:
        """Remove the document of ``record_id``, if one is stored."""

        def delete(connection: sqlite3.Connection) -> None:
            connection.execute('DELETE FROM "documents" WHERE "record_id" = ?', (record_id,))

        await self._worker.run(f"delete record {record_id!r}", delete)

    # -- reading -----------------------------------------------------------------------

    async def search(
        self,
        query: Node,
        limit: int = 20,
        exclude_record_id: str | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> list[TextHit]:
        """Rank the documents matching ``query`` and ``filters`` by FTS5's ``bm25()``."""
        node, filters = check_search_request(query, filters, self._facet_keys)
        if limit < 1:
            return []
        match = to_match_expression(node)
        unfiltered = not filters and exclude_record_id is None

        def read(connection: sqlite3.Connection) -> list[TextHit]:
            self._require_tokenizer(node)
            self._require_built(item.key for item in filters)
            tokenizer = self.tokenizer
            if unfiltered:
                # One more row than asked for tells whether a tie crosses the limit.
                statement, params = sql.ranked_snippets_sql(
                    match, self._weights, limit + 1, MARKS, SNIPPET_TOKENS
                )
                try:
                    rows = connection.execute(statement, params).fetchall()
                except sqlite3.DatabaseError as exc:
                    if not snippet_fault(exc):
                        raise
                    rows = None
                if rows is not None and (
                    len(rows) <= limit or rows[limit][1] != rows[limit - 1][1]
                ):
                    ranked = [(row[0], -row[1]) for row in rows[:limit]]
                    snippets = {row[0]: row[2:] for row in rows[:limit]}
                    return read_hits(
                        connection, self.path, node, match, ranked, tokenizer, snippets
                    )
            # Filters, an excluded record, or a tie across the limit: rank with the join.
            statement, params = sql.ranked_ids_sql(
                match, self._weights, limit, exclude_record_id, filters
            )
            ranked = [(r[0], r[2]) for r in connection.execute(statement, params)]
            return read_hits(connection, self.path, node, match, ranked, tokenizer)

        return await self._worker.run("search the text index", read)

    async def filter_ids(
        self,
        query: Node | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> frozenset[str]:
        """Return every record satisfying ``query`` and ``filters``, in no order."""
        node, filters = check_filter_request(query, filters, self._facet_keys)
        statement, params = sql.filter_ids_sql(node, filters)

        def read(connection: sqlite3.Connection) -> frozenset[str]:
            self._require_tokenizer(node)
            self._require_built(item.key for item in filters)
            return frozenset(row[0] for row in connection.execute(statement, params))

        return await self._worker.run("filter the text index", read)

    async def get_documents(self, record_ids: Collection[str]) -> dict[str, SearchDocument]:
        """Return the stored documents for ``record_ids``; unknown ids are omitted."""
        check_record_ids(record_ids)
        wanted = sorted(set(record_ids))
        if not wanted:
            return {}

        def read(connection: sqlite3.Connection) -> list[tuple[str, str, str, str, str]]:
            rows: list[tuple[str, str, str, str, str]] = []
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                holes = ", ".join("?" for _ in chunk)
                rows.extend(
                    connection.execute(
                        'SELECT "record_id", "title", "abstract", "body", "metadata" '
                        f'FROM "documents" WHERE "record_id" IN ({holes})',
                        chunk,
                    ).fetchall()
                )
            return rows

        rows = await self._worker.run("read documents", read)
        return {
            record_id: SearchDocument(
                record_id, title, abstract, body, decode_metadata(self.path, record_id, metadata)
            )
            for record_id, title, abstract, body, metadata in rows
        }

    async def facet_counts(
        self,
        keys: Sequence[str],
        *,
        query: Node | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> dict[str, tuple[tuple[str, int], ...]]:
        """Count matching documents per value of each facet key, in one consistent read."""
        node, filters = check_facet_request(keys, query, filters, self._facet_keys)
        statements = {
            key: sql.facet_sql(key, node, [item for item in filters if item.key != key])
            for key in dict.fromkeys(keys)
        }

        def read(connection: sqlite3.Connection) -> dict[str, tuple[tuple[str, int], ...]]:
            self._require_tokenizer(node)
            self._require_built([*keys, *(item.key for item in filters)])
            result: dict[str, tuple[tuple[str, int], ...]] = {}
            connection.execute("BEGIN")
            try:
                for key, (statement, params) in statements.items():
                    counts = {str(v): int(c) for v, c in connection.execute(statement, params)}
                    result[key] = sort_facet_counts(counts)
            finally:
                connection.execute("COMMIT")
            return result

        return await self._worker.run("count facets", read)

    async def range_counts(
        self,
        ranges: Sequence[RangeFilter],
        *,
        query: Node | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> tuple[int, ...]:
        """Count matching documents inside each of ``ranges`` in one consistent read.

        The counts are those :meth:`AsyncTextSearchStore.range_counts` describes.
        """
        node, filters = check_range_request(ranges, query, filters, self._facet_keys)
        statements = [
            sql.count_sql(node, [*(f for f in filters if f.key != item.key), item])
            for item in ranges
        ]

        def read(connection: sqlite3.Connection) -> tuple[int, ...]:
            self._require_tokenizer(node)
            self._require_built([*(r.key for r in ranges), *(f.key for f in filters)])
            connection.execute("BEGIN")
            try:
                return tuple(
                    int(connection.execute(statement, params).fetchone()[0])
                    for statement, params in statements
                )
            finally:
                connection.execute("COMMIT")

        return await self._worker.run("count ranges", read)

    async def count(self) -> int:
        """Return how many documents the store holds."""

        def read(connection: sqlite3.Connection) -> int:
            return int(connection.execute('SELECT COUNT(*) FROM "documents"').fetchone()[0])

        return await self._worker.run("count documents", read)

    # -- maintenance -------------------------------------------------------------------

    async def optimize(self) -> None:
        """Merge the FTS5 index's segments, which speeds up later queries. Reads no text."""

        def run(connection: sqlite3.Connection) -> None:
            connection.execute('INSERT INTO "documents_fts"("documents_fts") VALUES (\'optimize\')')

        await self._worker.run("optimize the FTS5 index", run)

    async def rebuild_index(self) -> None:
        """Re-tokenize every stored document into a fresh FTS5 index.

        The text already stored in the file is used; nothing is fetched again.
        This repairs an index that :meth:`integrity_check` reports inconsistent,
        and applies a ``stemming`` choice that differs from the file's: the index
        is re-created with the chosen tokenizer, in the same transaction.
        """

        def run(connection: sqlite3.Connection) -> None:
            # A failing statement is rolled back by the worker, leaving the old index.
            connection.execute("BEGIN IMMEDIATE")
            found = fts_tokenize(connection)
            wanted = self._wanted_tokenize
            if wanted is not None and wanted != found:
                retokenize(connection, wanted)
                found = wanted
            else:
                connection.execute(REBUILD_INDEX)
            connection.execute("COMMIT")
            self._file_tokenize = found

        await self._worker.run("rebuild the FTS5 index", run)

    async def rebuild_tags(self) -> None:
        """Re-derive every document's tags from its stored metadata, for this store's facet keys.

        One transaction replaces every tag and records :attr:`facet_keys` as
        built, so filters and facets on those keys work afterwards, and tags of
        keys no longer in :attr:`facet_keys` are gone. No text is read.

        Raises:
            SearchStoreError: The tags cannot be written, or a stored document's
                metadata is not a JSON object.
        """

        def run(connection: sqlite3.Connection) -> None:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.execute('DELETE FROM "tags"')
                rows = connection.execute(
                    'SELECT "doc_id", "record_id", "metadata" FROM "documents"'
                )
                for doc_id, record_id, text in rows.fetchall():
                    metadata = decode_metadata(self.path, record_id, text)
                    tags = tag_rows(metadata, self._facet_keys)
                    connection.executemany(
                        'INSERT INTO "tags"("key", "value", "doc_id") VALUES (?, ?, ?)',
                        [(key, value, doc_id) for key, value in tags],
                    )
                self._write_built(connection, self._facet_keys)
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise

        await self._worker.run("rebuild tags", run)

    async def integrity_check(self) -> bool:
        """Report whether the FTS5 index agrees with the stored documents.

        ``False`` means the index is inconsistent, for example after the
        ``documents`` table was written without its triggers;
        :meth:`rebuild_index` repairs it.

        Raises:
            SearchStoreError: The check could not run.
        """

        def run(connection: sqlite3.Connection) -> bool:
            if connection.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                return False
            try:
                connection.execute(
                    'INSERT INTO "documents_fts"("documents_fts", "rank") '
                    "VALUES ('integrity-check', 1)"
                )
            except sqlite3.DatabaseError as exc:
                if "malformed" in str(exc) or "corrupt" in str(exc):
                    return False
                raise
            return True

        return await self._worker.run("check the index's integrity", run)

    async def aclose(self) -> None:
        """Close the connection; a later call on this store opens it again."""
        await self._worker.close()


_PORTER = PorterTokenizer()
_UNICODE61 = Unicode61Tokenizer()


def _tokenize_for(stemming: bool) -> str:
    return FTS5_PORTER_TOKENIZE if stemming else UNICODE61_TOKENIZE


def built_facet_keys(path: str | Path) -> tuple[str, ...] | None:
    """Return the facet keys the FTS5 store file at ``path`` has tags built for, sorted.

    The file is opened read-only and never created or migrated, so a tool can learn which
    ``facet_keys`` to construct :class:`AsyncSqliteFts5Store` with before opening it.
    ``None`` when the file does not exist, is not readable as a text index, or records no
    keys yet; opening it with the store then reports any fault.
    """
    file = Path(path)
    if not file.is_file():
        return None
    try:
        connection = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
        try:
            row = connection.execute(
                'SELECT "value" FROM "index_settings" WHERE "name" = ?', (_BUILT_KEYS,)
            ).fetchone()
        finally:
            connection.close()
        keys = json.loads(row[0]) if row is not None else None
    except (sqlite3.Error, TypeError, ValueError):
        return None
    if not isinstance(keys, list):
        return None
    return tuple(sorted(str(key) for key in keys))
