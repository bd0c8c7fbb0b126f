"""What only the SQLite FTS5 store does: files, schema, tags, maintenance, cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sci_etl_core.exceptions import SearchStoreError
from sci_etl_core.search._sqlite_schema import SCHEMA_VERSION
from sci_etl_core.search.filters import MetadataFilter, RangeFilter
from sci_etl_core.search.query import Term
from sci_etl_core.search.store_base import SearchDocument
from sci_etl_core.search.store_sqlite_fts5 import (
    AsyncSqliteFts5Store,
    built_facet_keys,
    fts5_available,
)
from search_store_support import CORPUS, ids


async def open_store(path: Path, **options: object) -> AsyncSqliteFts5Store:
    store = AsyncSqliteFts5Store(path, **options)  # type: ignore[arg-type]
    await store.count()
    return store


async def test_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    path.touch()
    store = AsyncSqliteFts5Store(path)
    with pytest.raises(SearchStoreError, match=r"empty\.sqlite.*cannot open.*file is empty"):
        await store.count()
    assert path.stat().st_size == 0


async def test_random_bytes_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "noise.sqlite"
    path.write_bytes(os.urandom(4096))
    with pytest.raises(SearchStoreError, match=r"noise\.sqlite.*not an SQLite database"):
        await AsyncSqliteFts5Store(path).search(Term("x"))


async def test_corrupt_database_body_surfaces_as_store_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.sqlite"
    store = AsyncSqliteFts5Store(path)
    await store.index(list(CORPUS))
    await store.aclose()
    data = bytearray(path.read_bytes())
    data[100:] = os.urandom(len(data) - 100)
    path.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with pytest.raises(SearchStoreError, match=r"broken\.sqlite: cannot"):
        await AsyncSqliteFts5Store(path).filter_ids()


async def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite"
    await (await open_store(path)).aclose()
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    with pytest.raises(SearchStoreError, match=r"future\.sqlite.*newer than version"):
        await AsyncSqliteFts5Store(path).count()


async def test_foreign_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER)")
    connection.close()
    with pytest.raises(SearchStoreError, match=r"another application.*invoices"):
        await AsyncSqliteFts5Store(path).count()


def _lock(directory: Path) -> Callable[[], None]:
    """Make ``directory`` unwritable, returning how to undo it (root ignores modes)."""
    if os.geteuid() != 0:
        directory.chmod(0o500)
        return lambda: directory.chmod(0o700)
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(directory)], check=False).returncode:
        pytest.skip("running as root on a file system without chattr +i")
    return lambda: subprocess.run([chattr, "-i", str(directory)], check=True) and None


async def test_read_only_directory(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    unlock = _lock(locked)
    try:
        with pytest.raises(SearchStoreError, match=r"locked/index\.sqlite: cannot") as caught:
            await AsyncSqliteFts5Store(locked / "index.sqlite").index([CORPUS[0]])
    finally:
        unlock()
    assert "writable" in str(caught.value) or "read-only" in str(caught.value)
    assert isinstance(caught.value.__cause__, sqlite3.Error | None)


async def test_missing_directory_and_directory_path(tmp_path: Path) -> None:
    with pytest.raises(SearchStoreError, match="does not exist"):
        await AsyncSqliteFts5Store(tmp_path / "nope" / "x.sqlite").count()
    with pytest.raises(SearchStoreError, match="is a directory"):
        await AsyncSqliteFts5Store(tmp_path).count()


async def test_schema_objects_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    store = await open_store(path, facet_keys=["year"])
    await store.index(list(CORPUS))
    await store.aclose()
    connection = sqlite3.connect(path)
    try:
        names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        assert {"documents", "documents_fts", "tags", "index_settings"} <= names
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        # The text is stored once: FTS5 keeps no content of its own.
        assert "documents_fts_content" not in names
        tags = connection.execute("SELECT key, value FROM tags ORDER BY 1, 2").fetchall()
        assert ("year", "2020") in tags
        assert all(key == "year" for key, _ in tags)
    finally:
        connection.close()


async def test_indexed_at_comes_from_now_in_utc(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    moment = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    store = AsyncSqliteFts5Store(path, now=lambda: moment)
    await store.index([CORPUS[0]])
    await store.aclose()
    with sqlite3.connect(path) as connection:
        (stamp,) = connection.execute("SELECT indexed_at FROM documents").fetchone()
    connection.close()
    assert stamp == "2025-01-02T01:04:05+00:00"


async def test_new_facet_keys_need_rebuild_tags(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    first = AsyncSqliteFts5Store(path, facet_keys=["year"])
    await first.index(list(CORPUS))
    await first.aclose()
    second = AsyncSqliteFts5Store(path, facet_keys=["year", "authors"])
    with pytest.raises(SearchStoreError, match=r"'authors'.*rebuild_tags"):
        await second.filter_ids(None, [MetadataFilter("authors", ["Lee"])])
    with pytest.raises(SearchStoreError, match="rebuild_tags"):
        await second.facet_counts(["authors"])
    assert await second.filter_ids(None, [RangeFilter("year", low=2022)]) == {"r2", "r4"}
    await second.rebuild_tags()
    assert await second.filter_ids(None, [MetadataFilter("authors", ["Lee"])]) == {"r1", "r3"}
    await second.aclose()
    third = AsyncSqliteFts5Store(path, facet_keys=["authors"])
    await third.rebuild_tags()
    await third.aclose()
    with sqlite3.connect(path) as connection:
        keys = {row[0] for row in connection.execute("SELECT DISTINCT key FROM tags")}
    connection.close()
    assert keys == {"authors"}


async def test_rebuild_tags_refuses_bad_metadata(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    store = AsyncSqliteFts5Store(path, facet_keys=["year"])
    await store.index([CORPUS[0]])
    await store.aclose()
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE documents SET metadata = '[1, 2]'")
    connection.close()
    with pytest.raises(SearchStoreError, match=r"record 'r1'.*not an object"):
        await store.rebuild_tags()


async def test_integrity_check_and_rebuild_index(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    store = AsyncSqliteFts5Store(path)
    await store.index(list(CORPUS))
    assert await store.integrity_check()
    await store.optimize()
    await store.aclose()
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TRIGGER documents_au")
        connection.execute("UPDATE documents SET title = 'zebra' WHERE record_id = 'r3'")
    connection.close()
    assert not await store.integrity_check()
    await store.rebuild_index()
    assert await store.integrity_check()
    assert await store.filter_ids(Term("zebra")) == {"r3"}


async def test_cancelled_search_leaves_connection_usable(tmp_path: Path) -> None:
    store = AsyncSqliteFts5Store(tmp_path / "index.sqlite")
    documents = [
        SearchDocument(f"c{i}", title=f"word{i % 50} common", abstract="common text " * 20)
        for i in range(3000)
    ]
    for _ in range(5):
        task = asyncio.create_task(store.index(documents))
        await asyncio.sleep(0.001)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        searching = asyncio.create_task(store.search(Term("common"), limit=5))
        await asyncio.sleep(0)
        searching.cancel()
    assert await store.count() in (0, 3000)
    await store.index(documents)
    assert await store.count() == 3000
    assert await store.integrity_check()
    await store.aclose()


async def test_fts5_available_probe() -> None:
    assert fts5_available()

    def broken() -> sqlite3.Connection:
        raise sqlite3.OperationalError("no")

    assert not fts5_available(broken)


async def test_search_results_survive_reopen(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    store = AsyncSqliteFts5Store(path, facet_keys=["year"])
    await store.index(list(CORPUS))
    before = await store.search(Term("dark"))
    await store.aclose()
    again = AsyncSqliteFts5Store(path, facet_keys=["year"])
    assert ids(await again.search(Term("dark"))) == ids(before)
    await again.aclose()


async def test_search_builds_only_the_ranking_sql_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sci_etl_core.search import _sqlite_sql

    built: list[str] = []
    for name in ("ranked_rowids_sql", "ranked_ids_sql"):
        original = getattr(_sqlite_sql, name)

        def record(*args: object, _name: str = name, _original: Callable = original) -> object:
            built.append(_name)
            return _original(*args)

        monkeypatch.setattr(_sqlite_sql, name, record)
    store = AsyncSqliteFts5Store(tmp_path / "index.sqlite", facet_keys=["year"])
    await store.index(list(CORPUS))
    assert await store.search(Term("dark"))
    assert built == ["ranked_rowids_sql"]  # unfiltered: the FTS5 table alone
    built.clear()
    await store.search(Term("dark"), filters=[RangeFilter("year", low="2000")])
    assert built == ["ranked_ids_sql"]  # filtered: the join, never the FTS5 table alone
    await store.aclose()


async def test_built_facet_keys_are_read_without_opening_the_store(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    assert built_facet_keys(path) is None  # no file: nothing recorded, nothing created
    assert not path.exists()
    store = AsyncSqliteFts5Store(path, facet_keys=("year", "journal"))
    try:
        await store.index([SearchDocument("a", title="t", metadata={"year": 2020})])
    finally:
        await store.aclose()
    before = path.read_bytes()
    assert built_facet_keys(path) == ("journal", "year")
    assert path.read_bytes() == before  # read-only
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(os.urandom(4096))
    assert built_facet_keys(junk) is None
