"""Reads of the SQLite FTS5 store on connections of their own, beside each other and a write."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest
from sci_etl_core.exceptions import SearchStoreError
from sci_etl_core.search._sqlite_worker import SqliteWorker
from sci_etl_core.search.query import Term
from sci_etl_core.search.store_base import SearchDocument
from sci_etl_core.search.store_sqlite_fts5 import DEFAULT_READERS, AsyncSqliteFts5Store
from search_store_support import CORPUS, ids


def _worker(path: Path, readers: int) -> SqliteWorker:
    def on_open(connection: sqlite3.Connection, found: int) -> None:
        connection.execute('CREATE TABLE IF NOT EXISTS "t"("x")')

    return SqliteWorker(path, on_open, readers=readers)


def _meeting(other_started: threading.Event, started: threading.Event):
    """A read that waits for another read to be running at the same time."""

    def read(connection: sqlite3.Connection) -> bool:
        started.set()
        return other_started.wait(5)

    return read


async def test_two_reads_run_side_by_side_on_their_own_connections(tmp_path: Path) -> None:
    worker = _worker(tmp_path / "w.sqlite", readers=2)
    a, b = threading.Event(), threading.Event()
    try:
        met = await asyncio.gather(
            worker.read("read a", _meeting(b, a)), worker.read("read b", _meeting(a, b))
        )
    finally:
        await worker.close()
    assert list(met) == [True, True]


async def test_with_one_reader_reads_take_turns(tmp_path: Path) -> None:
    worker = _worker(tmp_path / "w.sqlite", readers=1)
    a, b = threading.Event(), threading.Event()
    try:
        met = await asyncio.gather(
            worker.read("read a", _meeting(b, a)), worker.read("read b", _meeting(a, b))
        )
    finally:
        await worker.close()
    assert list(met) == [False, True]  # the first waited in vain: the second could not start


async def test_a_reader_connection_cannot_write(tmp_path: Path) -> None:
    worker = _worker(tmp_path / "w.sqlite", readers=2)
    try:
        with pytest.raises(SearchStoreError, match=r"w\.sqlite: cannot sneak a write"):
            await worker.read("sneak a write", lambda c: c.execute('INSERT INTO "t" VALUES (1)'))
        await worker.run("write", lambda c: c.execute('INSERT INTO "t" VALUES (1)'))
        count = await worker.read(
            "count", lambda c: c.execute('SELECT count(*) FROM "t"').fetchone()
        )
    finally:
        await worker.close()
    assert count == (1,)


def test_readers_must_be_at_least_one(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="readers must be at least 1"):
        AsyncSqliteFts5Store(tmp_path / "s.sqlite", readers=0)


@pytest.mark.parametrize("readers", [1, DEFAULT_READERS])
async def test_searches_beside_writes_see_each_committed_write(
    tmp_path: Path, readers: int
) -> None:
    store = AsyncSqliteFts5Store(tmp_path / "s.sqlite", readers=readers, facet_keys=("year",))
    try:
        await store.index(CORPUS[:1])
        for doc in CORPUS[1:]:
            searches = [store.search(Term("the"), limit=50) for _ in range(6)]
            found, _ = await asyncio.gather(asyncio.gather(*searches), store.index([doc]))
            assert len({tuple(ids(hits)) for hits in found}) == 1  # one snapshot each
            after = await store.search(Term(doc.title.split()[0].lower()), limit=50)
            assert doc.record_id in ids(after)
        assert await store.count() == len(CORPUS)
        await store.aclose()  # not terminal: the readers reopen
        assert await store.count() == len(CORPUS)
    finally:
        await store.aclose()


async def test_an_in_memory_index_reads_through_its_one_connection() -> None:
    store = AsyncSqliteFts5Store(":memory:", readers=4)
    try:
        await store.index([SearchDocument("r1", "Heat shock", "", "chaperones fold", {})])
        assert ids(await store.search(Term("chaperones"))) == ["r1"]
    finally:
        await store.aclose()
