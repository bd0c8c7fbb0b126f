"""The durable text search store on SQLite FTS5, with the standard-library driver.

The class is the async face: it validates each request on the caller's thread and runs
the operation that answers it on the worker thread. The operations live by job in
:mod:`~sci_etl_core.search._sqlite_state` (what the file records),
:mod:`~sci_etl_core.search._sqlite_writing`,
:mod:`~sci_etl_core.search._sqlite_reading` and
:mod:`~sci_etl_core.search._sqlite_maintenance`; the schema and its migrations in
:mod:`~sci_etl_core.search._sqlite_schema`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from sci_etl_core.exceptions import SearchStoreError
from sci_etl_core.search import _sqlite_maintenance as maintenance
from sci_etl_core.search import _sqlite_reading as reading
from sci_etl_core.search._sqlite_hits import decode_metadata
from sci_etl_core.search._sqlite_state import IndexState, read_built_keys, tokenize_for
from sci_etl_core.search._sqlite_worker import SqliteWorker
from sci_etl_core.search._sqlite_writing import delete_operation, write_operation
from sci_etl_core.search._store_checks import (
    check_facet_request,
    check_filter_request,
    check_range_request,
    check_record_ids,
    check_search_request,
    facet_key_set,
)
from sci_etl_core.search.filters import RangeFilter, SearchFilter
from sci_etl_core.search.query import Node
from sci_etl_core.search.store_base import (
    AsyncTextSearchStore,
    BM25Weights,
    SearchDocument,
    TextHit,
)
from sci_etl_core.search.tokenize import Tokenizer

__all__ = ["AsyncSqliteFts5Store", "built_facet_keys", "fts5_available"]


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


DEFAULT_READERS = 4
"""Reader connections of an :class:`AsyncSqliteFts5Store` unless told otherwise."""


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

    ``multiscript`` chooses, the same way, whether the index finds words in scripts that
    ``unicode61`` cannot split or fold (Chinese, Japanese, Korean, Thai, Lao, Arabic
    script): ``True`` indexes each field as its
    :func:`~sci_etl_core.search.multiscript.shadow_text`, the words of
    :class:`~sci_etl_core.search.multiscript.MultiscriptTokenizer` (the store's
    :attr:`tokenizer` then), and writes every query word the same way; snippets are cut
    in Python from the original text. ``None``, the default, follows the file and builds
    a new file without it. The file records the choice (its FTS5 index reads a view
    named after the rules version), so queries always tokenize as the index did; every
    connection to such a file, this store's included, registers the SQL function the
    view calls, so a program writing to the file without this library is refused
    rather than leaving the index out of step.

    Writes go through one connection, in order. Reads (search, filters, documents, facet
    and range counts) run on up to ``readers`` connections of their own, side by side and
    beside a write, each in one snapshot of the file (SQLite's WAL mode), so concurrent
    searches of a served index do not queue behind one another; ``readers=1`` reads
    through the writer's connection, as an in-memory database always does.

    Raises:
        SearchStoreError: This interpreter's SQLite was built without FTS5.
        TypeError: ``stemming`` or ``multiscript`` is not ``True``, ``False`` or ``None``.
        ValueError: ``readers`` is below 1.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        facet_keys: Iterable[str] = (),
        weights: BM25Weights | None = None,
        now: Callable[[], datetime] | None = None,
        stemming: bool | None = None,
        readers: int = DEFAULT_READERS,
        multiscript: bool | None = None,
    ) -> None:
        if stemming is not None and not isinstance(stemming, bool):
            raise TypeError(f"stemming must be True, False or None, not {stemming!r}")
        if multiscript is not None and not isinstance(multiscript, bool):
            raise TypeError(f"multiscript must be True, False or None, not {multiscript!r}")
        keys = facet_key_set(facet_keys)
        if not fts5_available():
            raise SearchStoreError(
                f"{path}: cannot use the text index: this interpreter's SQLite "
                f"{sqlite3.sqlite_version} was built without FTS5"
            )
        self._now = now or (lambda: datetime.now(UTC))
        self._state = IndexState(
            str(path),
            keys,
            (weights or BM25Weights()).as_tuple(),
            None if stemming is None else tokenize_for(stemming),
            multiscript,
        )
        self._worker = SqliteWorker(
            path, self._state.on_open, readers=readers, on_read_open=self._state.prepare_reader
        )

    @property
    def path(self) -> str:
        """The database file, as given."""
        return self._worker.path

    @property
    def facet_keys(self) -> frozenset[str]:
        """The metadata keys this store tags documents by, for filters and facets."""
        return self._state.facet_keys

    @property
    def stemming(self) -> bool:
        """Whether queries match stemmed words: the file's tokenizer once it is open.

        Before the first operation this is the ``stemming`` asked for, ``False``
        when that was ``None``.
        """
        return self._state.stemming

    @property
    def multiscript(self) -> bool:
        """Whether the index holds multiscript shadow text: the file's choice once it is open.

        Before the first operation this is the ``multiscript`` asked for, ``False``
        when that was ``None``.
        """
        return self._state.multiscript

    @property
    def tokenizer(self) -> Tokenizer:
        """The pure-Python twin of the index's tokenizer (see :attr:`stemming`)."""
        return self._state.tokenizer

    # -- writing -----------------------------------------------------------------------

    async def index(self, documents: Sequence[SearchDocument]) -> None:
        """Store ``documents`` in one transaction, replacing any with the same ``record_id``."""
        latest = self._latest_documents(documents)
        write = write_operation(latest, self._state.facet_keys, self._now)
        if write is not None:
            await self._worker.run("write documents", write)

    async def replace_record(self, document: SearchDocument) -> None:
        """Replace the record's text, metadata, and tags in one transaction."""
        await self.index([document])

    async def delete_record(self, record_id: str) -> None:
        """Remove the document of ``record_id``, if one is stored."""
        await self._worker.run(f"delete record {record_id!r}", delete_operation(record_id))

    # -- reading -----------------------------------------------------------------------

    async def search(
        self,
        query: Node,
        limit: int = 20,
        exclude_record_id: str | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> list[TextHit]:
        """Rank the documents matching ``query`` and ``filters`` by FTS5's ``bm25()``."""
        node, checked = check_search_request(query, filters, self._state.facet_keys)
        if limit < 1:
            return []
        read = reading.search_operation(self._state, node, limit, exclude_record_id, checked)
        return await self._worker.read("search the text index", read)

    async def filter_ids(
        self,
        query: Node | None = None,
        filters: Sequence[SearchFilter] = (),
    ) -> frozenset[str]:
        """Return every record satisfying ``query`` and ``filters``, in no order."""
        node, checked = check_filter_request(query, filters, self._state.facet_keys)
        read = reading.filter_operation(self._state, node, checked)
        return await self._worker.read("filter the text index", read)

    async def get_documents(self, record_ids: Collection[str]) -> dict[str, SearchDocument]:
        """Return the stored documents for ``record_ids``; unknown ids are omitted."""
        check_record_ids(record_ids)
        wanted = sorted(set(record_ids))
        if not wanted:
            return {}
        rows = await self._worker.read("read documents", reading.documents_operation(wanted))
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
        node, checked = check_facet_request(keys, query, filters, self._state.facet_keys)
        read = reading.facet_operation(self._state, keys, node, checked)
        return await self._worker.read("count facets", read)

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
        node, checked = check_range_request(ranges, query, filters, self._state.facet_keys)
        read = reading.range_operation(self._state, ranges, node, checked)
        return await self._worker.read("count ranges", read)

    async def count(self) -> int:
        """Return how many documents the store holds."""
        return await self._worker.read("count documents", reading.count_operation)

    # -- maintenance -------------------------------------------------------------------

    async def optimize(self) -> None:
        """Merge the FTS5 index's segments, which speeds up later queries. Reads no text."""
        await self._worker.run("optimize the FTS5 index", maintenance.optimize)

    async def rebuild_index(self) -> None:
        """Re-tokenize every stored document into a fresh FTS5 index.

        The text already stored in the file is used; nothing is fetched again.
        This repairs an index that :meth:`integrity_check` reports inconsistent,
        and applies a ``stemming`` choice that differs from the file's: the index
        is re-created with the chosen tokenizer, in the same transaction.
        """
        run = partial(maintenance.rebuild_index, state=self._state)
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
        run = partial(maintenance.rebuild_tags, state=self._state)
        await self._worker.run("rebuild tags", run)

    async def integrity_check(self) -> bool:
        """Report whether the FTS5 index agrees with the stored documents.

        ``False`` means the index is inconsistent, for example after the
        ``documents`` table was written without its triggers;
        :meth:`rebuild_index` repairs it.

        Raises:
            SearchStoreError: The check could not run.
        """
        return await self._worker.run("check the index's integrity", maintenance.integrity_check)

    async def aclose(self) -> None:
        """Close the connection; a later call on this store opens it again."""
        await self._worker.close()


def built_facet_keys(path: str | Path) -> tuple[str, ...] | None:
    """Return the facet keys the FTS5 store file at ``path`` has tags built for, sorted.

    The file is opened read-only and never created or migrated, so a tool can learn which
    ``facet_keys`` to construct :class:`AsyncSqliteFts5Store` with before opening it.
    ``None`` when the file does not exist, is not readable as a text index, or records no
    keys yet; opening it with the store then reports any fault.
    """
    return read_built_keys(path)
