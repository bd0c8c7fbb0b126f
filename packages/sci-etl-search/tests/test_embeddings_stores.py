"""The embedding-store conformance suite against every store, and SQLite-specific behaviour."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sci_etl_core.embeddings.store_base import AsyncEmbeddingStore, EmbeddingChunk
from sci_etl_core.embeddings.store_memory import InMemoryEmbeddingStore
from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore
from sci_etl_core.exceptions import EmbeddingStoreError
from search_embedding_support import EmbeddingStoreConformance, chunk, records


class TestInMemoryStore(EmbeddingStoreConformance):
    @pytest.fixture
    async def store(self) -> AsyncIterator[AsyncEmbeddingStore]:
        store = InMemoryEmbeddingStore()
        yield store
        await store.aclose()


class TestSqliteStore(EmbeddingStoreConformance):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[AsyncEmbeddingStore]:
        store = AsyncSqliteEmbeddingStore(tmp_path / "memory.sqlite")
        yield store
        await store.aclose()


async def test_sqlite_store_is_durable_and_reopens(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    store = AsyncSqliteEmbeddingStore(path)
    await store.add([chunk("a", 0, [3.0, 4.0], title="A")])
    await store.aclose()
    await store.add([chunk("b", 0, [4.0, 3.0])])  # aclose is not terminal
    await store.aclose()
    reopened = AsyncSqliteEmbeddingStore(path)
    assert await reopened.count() == 2
    (hit,) = await reopened.query([3.0, 4.0], top_k=1)
    assert (hit.record_id, hit.metadata) == ("a", {"title": "A"})
    await reopened.aclose()


async def test_sqlite_store_reports_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("this is not a database, " * 100)
    store = AsyncSqliteEmbeddingStore(path)
    with pytest.raises(EmbeddingStoreError, match=r"notes\.txt"):
        await store.count()
    await store.aclose()


async def test_sqlite_store_refuses_a_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA user_version = 99")
    connection.close()
    store = AsyncSqliteEmbeddingStore(path)
    with pytest.raises(EmbeddingStoreError, match=r"future\.sqlite: schema version 99 is newer"):
        await store.query([1.0])
    await store.aclose()


async def test_sqlite_keyset_pagination_survives_writes_between_batches(tmp_path: Path) -> None:
    store = AsyncSqliteEmbeddingStore(tmp_path / "m.sqlite")
    await store.add([chunk(f"r{n}", 0, [1.0, float(n)]) for n in range(6)])
    seen = []
    async for record in store.iter_records(batch_size=2):
        seen.append(record.record_id)
        if record.record_id == "r1":
            await store.delete_record("r0")
            await store.add([chunk("r3a", 0, [1.0, 0.0])])
    assert seen == ["r0", "r1", "r2", "r3", "r3a", "r4", "r5"]
    await store.aclose()


async def test_sqlite_query_cache_sees_writes(tmp_path: Path) -> None:
    store = AsyncSqliteEmbeddingStore(tmp_path / "m.sqlite")
    await store.add([chunk("a", 0, [1.0, 0.0])])
    assert [h.record_id for h in await store.query([0.0, 1.0])] == ["a"]
    await store.add([chunk("b", 0, [0.0, 1.0])])
    assert [h.record_id for h in await store.query([0.0, 1.0])] == ["b", "a"]
    await store.delete_record("b")
    assert [h.record_id for h in await store.query([0.0, 1.0])] == ["a"]
    assert [r.record_id for r in await records(store)] == ["a"]
    await store.aclose()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"record_id": ""}, ValueError, "record_id must not be blank"),
        ({"chunk_index": -1}, ValueError, "chunk_index must be >= 0"),
        ({"vector": [0.0, 0.0]}, ValueError, "all zeros"),
        ({"vector": [1.0, float("inf")]}, ValueError, "element 1 is not finite"),
        ({"vector": "ab"}, TypeError, "sequence of floats"),
        ({"text": None}, TypeError, "text must be a string"),
    ],
)
def test_embedding_chunk_validation(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    values: dict[str, object] = {
        "record_id": "a",
        "chunk_index": 0,
        "text": "t",
        "vector": [1.0],
    }
    values.update(kwargs)
    with pytest.raises(error, match=message):
        EmbeddingChunk(**values)  # type: ignore[arg-type]
