"""PGVector collections of one database keep apart, and search through their HNSW index.

Real PostgreSQL + pgvector (``pg_url``). LangChain's table keys rows by chunk id across
the whole database; klea's collections scope the stored ids (``_retrieval/pg_layout.py``)
and every public surface speaks the chunk ids that were added.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.pg_layout import (
    PGLayout,
    hnsw_index_sql,
    index_name,
    public_id,
    stored_id,
)
from klea_utils.stores._retrieval.pgvector import KleaPGVector, search_breadth
from klea_utils.stores._retrieval.vector_reads import vector_reader
from klea_utils.stores.exceptions import StoreBackendError, StoreConfigError
from langchain_core.documents import Document
from retrieval_backends import FAKE_DIMENSIONS, HashEmbeddings
from sqlalchemy import event, text

pytestmark = pytest.mark.slow

IDS = ["paper.pdf:0", "paper.pdf:1", "paper.pdf:2"]


def _docs(tag: str) -> list[Document]:
    return [
        Document(page_content=f"{tag} passage {i}", metadata={"file_name": "paper.pdf", "n": i})
        for i in range(len(IDS))
    ]


@pytest.fixture
def opened(pg_url: str) -> Iterator[list[Any]]:
    """Stores opened by a test; their collections are dropped and engines disposed after."""
    stores: list[Any] = []
    yield stores
    for store in stores:
        store.delete_collection()
        store._engine.dispose()


def _open(opened: list[Any], url: str, name: str, **kwargs: Any) -> KleaPGVector:
    store = KleaPGVector(
        HashEmbeddings(), connection=url, collection_name=name, use_jsonb=True, **kwargs
    )
    opened.append(store)
    return store


def _contents(store: Any, ids: list[str]) -> dict[str, str]:
    return {str(d.id): d.page_content for d in store.get_by_ids(ids)}


def test_two_collections_with_the_same_chunk_ids_keep_their_own_rows(
    pg_url: str, opened: list[Any]
) -> None:
    first = _open(opened, pg_url, "scope-first")
    second = _open(opened, pg_url, "scope-second")
    assert first.add_documents(_docs("first"), ids=IDS) == IDS
    assert second.add_documents(_docs("second"), ids=IDS) == IDS

    assert _contents(first, IDS) == {i: f"first passage {n}" for n, i in enumerate(IDS)}
    assert _contents(second, IDS) == {i: f"second passage {n}" for n, i in enumerate(IDS)}
    hits = second.similarity_search_with_score("second passage 1", k=3)
    assert {d.id for d, _ in hits} == set(IDS)
    assert all(d.page_content.startswith("second") for d, _ in hits)
    for store in (first, second):
        reader = vector_reader(store)
        assert reader.count() == len(IDS)
        assert set(reader.vectors(IDS)) == set(IDS)
        assert {d.id for d, _ in reader.nearest([0.5] * FAKE_DIMENSIONS, k=5)} == set(IDS)

    second.delete(ids=IDS[:2])  # a file's stale chunks, as an incremental store deletes them
    assert set(_contents(second, IDS)) == {IDS[2]}
    assert set(_contents(first, IDS)) == set(IDS)

    second.add_documents(_docs("again"), ids=IDS)  # a re-store replaces only its own rows
    assert set(_contents(second, IDS).values()) == {f"again passage {n}" for n in range(3)}
    assert set(_contents(first, IDS).values()) == {f"first passage {n}" for n in range(3)}


def test_a_new_collection_records_its_layout_and_its_query_uses_the_hnsw_index(
    pg_url: str, opened: list[Any]
) -> None:
    no_seqscan = {"connect_args": {"options": "-c enable_seqscan=off"}}
    store = _open(opened, pg_url, "scope-index", engine_args=no_seqscan)
    assert store.layout == PGLayout(scoped=True, dimension=FAKE_DIMENSIONS, distance="cosine")
    store.add_documents(_docs("indexed"), ids=IDS)
    statements: list[tuple[str, Any]] = []
    event.listen(
        store._engine,
        "before_cursor_execute",
        lambda _conn, _cur, sql, params, _ctx, _many: statements.append((sql, params)),
    )
    assert len(store.similarity_search("indexed passage 0", k=2)) == 2
    sql, params = next((s, p) for s, p in statements if "ORDER BY" in s)
    with store._engine.connect() as conn:
        uuid_ = conn.execute(
            text("SELECT uuid FROM langchain_pg_collection WHERE name = 'scope-index'")
        ).scalar_one()
        plan = "\n".join(row[0] for row in conn.exec_driver_sql("EXPLAIN " + sql, params))
    assert f"Index Scan using {index_name(uuid_)}" in plan, plan


def test_search_widens_the_index_scan_and_falls_back_to_an_exact_scan(
    pg_url: str, opened: list[Any]
) -> None:
    store = _open(opened, pg_url, "scope-breadth")
    ids = [f"big.pdf:{i}" for i in range(60)]
    docs = [Document(page_content=f"text {i}", metadata={"n": i}) for i in range(60)]
    store.add_documents(docs, ids=ids)
    queries: list[str] = []
    event.listen(
        store._engine,
        "before_cursor_execute",
        lambda _c, _cur, sql, _p, _ctx, _m: queries.append(sql) if "ORDER BY" in sql else None,
    )
    assert len(store.similarity_search("text 3", k=55)) == 55  # beyond ef_search 40 and 100
    assert len(queries) == 1  # the index answered: no exact fallback was needed
    assert search_breadth(55, filtered=False) == 110
    assert search_breadth(5, filtered=True) == 200
    assert search_breadth(2000, filtered=True) == 1000
    found = store.similarity_search("text 3", k=5, filter={"n": {"$in": [7, 59]}})
    assert {d.id for d in found} == {"big.pdf:7", "big.pdf:59"}
    assert len(store.similarity_search("text 3", k=100)) == 60  # more than it holds


def test_a_collection_written_by_older_klea_stays_readable_and_refuses_to_steal_rows(
    pg_url: str, opened: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    from langchain_postgres import PGVector

    for name, tag in (("scope-legacy-a", "a"), ("scope-legacy-b", "b")):
        old = PGVector(HashEmbeddings(), connection=pg_url, collection_name=name)
        old.add_documents(_docs(tag), ids=[f"{name}/{i}" for i in IDS])
        old._engine.dispose()
    old = PGVector(HashEmbeddings(), connection=pg_url, collection_name="scope-legacy-b")
    old.add_documents(_docs("shared"), ids=["shared.pdf:0"])
    old._engine.dispose()

    with caplog.at_level(logging.WARNING):
        legacy = _open(opened, pg_url, "scope-legacy-a")
    other = _open(opened, pg_url, "scope-legacy-b")
    assert "scope-legacy-a" in caplog.text
    assert "--force" in caplog.text
    assert legacy.layout == PGLayout.legacy()
    ids = [f"scope-legacy-a/{i}" for i in IDS]
    assert set(_contents(legacy, ids)) == set(ids)
    assert {d.id for d in legacy.similarity_search("a passage 0", k=3)} == set(ids)
    legacy.add_documents(_docs("new"), ids=["fresh.pdf:0"])  # updatable
    assert _contents(legacy, ["fresh.pdf:0"]) == {"fresh.pdf:0": "new passage 0"}

    with pytest.raises(StoreBackendError, match=r"'shared.pdf:0'.*'scope-legacy-b'.*--force"):
        legacy.add_documents(_docs("thief")[:1], ids=["shared.pdf:0"])
    legacy.delete(ids=["shared.pdf:0"])  # not its row: left alone
    assert _contents(other, ["shared.pdf:0"]) == {"shared.pdf:0": "shared passage 0"}


def test_a_bulk_load_into_an_empty_collection_builds_the_index_at_its_end(
    pg_url: str, opened: list[Any]
) -> None:
    store = _open(opened, pg_url, "scope-bulk")
    assert store.has_index()

    def killed_mid_run() -> None:
        with store.bulk_load():
            assert not store.has_index()  # empty: dropped for the load
            store.add_documents(_docs("bulk"), ids=IDS)
            raise RuntimeError("killed mid-run")

    with pytest.raises(RuntimeError, match="killed"):
        killed_mid_run()
    assert not store.has_index()  # a failed load leaves it out; queries scan
    assert {d.id for d in store.similarity_search("bulk passage 1", k=3)} == set(IDS)
    with store.bulk_load():
        assert store.has_index()  # the next load builds it first: the collection holds rows
        store.add_documents(_docs("more"), ids=["more.pdf:0"])
    assert store.has_index()

    fresh = _open(opened, pg_url, "scope-bulk-fresh")
    with fresh.bulk_load():
        fresh.add_documents(_docs("fresh"), ids=IDS)
    assert fresh.has_index()
    assert len(fresh.similarity_search("fresh passage 0", k=3)) == 3


def test_dropping_a_collection_drops_its_index(pg_url: str, opened: list[Any]) -> None:
    store = _open(opened, pg_url, "scope-drop")
    with store._engine.connect() as conn:
        uuid_ = conn.execute(
            text("SELECT uuid FROM langchain_pg_collection WHERE name = 'scope-drop'")
        ).scalar_one()
    store.delete_collection()
    with store._engine.connect() as conn:
        left = conn.execute(
            text("SELECT count(*) FROM pg_indexes WHERE indexname = :n"), {"n": index_name(uuid_)}
        ).scalar_one()
    assert left == 0


def test_async_mode_is_refused(pg_url: str) -> None:
    with pytest.raises(StoreConfigError, match="async"):
        KleaPGVector(HashEmbeddings(), connection=pg_url, async_mode=True)


# --------------------------------------------------------------------------- pure functions


@given(st.uuids(), st.text())
def test_a_scoped_id_gives_back_the_chunk_id(collection: uuid.UUID, chunk_id: str) -> None:
    layout = PGLayout(scoped=True, dimension=3)
    stored = stored_id(layout, collection, chunk_id)
    assert stored != chunk_id
    assert public_id(stored, collection) == chunk_id
    assert stored_id(PGLayout.legacy(), collection, chunk_id) == chunk_id


def test_layout_records_round_trip_and_unknown_ones_are_refused() -> None:
    layout = PGLayout(scoped=True, dimension=384, distance="cosine")
    assert PGLayout.of("c", {"klea": layout.to_metadata(), "other": 1}) == layout
    assert PGLayout.of("c", None) == PGLayout.legacy()
    with pytest.raises(StoreConfigError, match=r"'c'.*unknown klea layout"):
        PGLayout.of("c", {"klea": {"layout": 99}})
    with pytest.raises(StoreConfigError, match="distance"):
        PGLayout(scoped=True, dimension=3, distance="manhattan")
    assert not PGLayout(scoped=True, dimension=3072).indexed
    sql = hnsw_index_sql("t", uuid.UUID(int=1), layout)
    assert "vector(384)) vector_cosine_ops" in sql
    assert "'00000000-0000-0000-0000-000000000001'::uuid" in sql
