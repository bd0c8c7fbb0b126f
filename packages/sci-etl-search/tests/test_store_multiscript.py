"""Multiscript FTS5 stores: shadow text indexed, original text highlighted, old files kept."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sci_etl_core.exceptions import SearchStoreError
from sci_etl_core.search import parse_query
from sci_etl_core.search.multiscript import MultiscriptTokenizer
from sci_etl_core.search.store_base import AsyncTextSearchStore, SearchDocument
from sci_etl_core.search.store_memory import InMemoryTextSearchStore
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

DOCS = [
    SearchDocument("zh", title="深度学习", body="本文提出一种新的研究方法，用于图像分割。"),
    SearchDocument("ja", title="東京大学", body="東京大学の研究者たちは新しい手法を開発した。"),
    SearchDocument("ko", title="한국어 연구", body="이 연구는 새로운 방법을 제안한다."),
    SearchDocument("fa", title="کتاب", body="این پژوهش روش تازه‌ای برای یادگیری ماشین ارائه می‌دهد."),
    SearchDocument("ar", title="المدرسة", body="قدمت هذه الدراسة طريقةً جديدةً للتعلم الآلي."),
    SearchDocument("th", title="ภาษาไทย", body="งานวิจัยนี้เสนอวิธีการใหม่"),
    SearchDocument("en", title="Dwarf galaxies", body="A new method for image segmentation."),
]

QUESTIONS = [
    ("研究方法", "zh"),
    ("分割", "zh"),
    ("研究者", "ja"),
    ("연구", "ko"),
    ("연구에서", "ko"),
    ("پژوهش", "fa"),
    ("كتاب", "fa"),
    ("مدرسه", "ar"),
    ("دراسة", "ar"),
    ("วิจัย", "th"),
    ("segmentation", "en"),
]


async def found(store: AsyncTextSearchStore, query: str) -> list[str]:
    return [hit.record_id for hit in await store.search(parse_query(query), limit=10)]


@pytest.mark.parametrize("kind", ["sqlite", "memory"])
async def test_words_of_every_script_are_found(tmp_path: Path, kind: str) -> None:
    store: AsyncTextSearchStore = (
        AsyncSqliteFts5Store(tmp_path / "m.sqlite", multiscript=True)
        if kind == "sqlite"
        else InMemoryTextSearchStore(tokenizer=MultiscriptTokenizer())
    )
    await store.index(DOCS)
    for query, record_id in QUESTIONS:
        assert await found(store, query) == [record_id], query
    await store.aclose()


async def test_snippets_highlight_the_original_text(tmp_path: Path) -> None:
    store = AsyncSqliteFts5Store(tmp_path / "m.sqlite", multiscript=True)
    await store.index(DOCS)
    (hit,) = await store.search(parse_query("研究方法"), limit=5)
    assert [s.text[a:b] for s in hit.snippets for a, b in s.highlights] == ["研究方法"]
    (hit,) = await store.search(parse_query("مدرسه"), limit=5)
    assert [s.text[a:b] for s in hit.snippets for a, b in s.highlights] == ["المدرسة"]
    assert store.multiscript
    assert isinstance(store.tokenizer, MultiscriptTokenizer)
    assert await store.integrity_check()
    await store.aclose()


async def test_updates_and_deletes_keep_the_shadow_index_in_step(tmp_path: Path) -> None:
    store = AsyncSqliteFts5Store(tmp_path / "m.sqlite", multiscript=True)
    await store.index(DOCS)
    await store.index([SearchDocument("zh", title="图像", body="没有别的")])
    assert await found(store, "研究方法") == []
    assert await found(store, "图像") == ["zh"]
    await store.delete_record("zh")
    assert await found(store, "图像") == []
    assert await store.count() == len(DOCS) - 1
    assert await store.integrity_check()
    await store.aclose()


async def test_an_old_store_keeps_its_tokenizer_until_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    old = AsyncSqliteFts5Store(path)
    await old.index(DOCS)
    assert await found(old, "研究方法") == []
    await old.aclose()
    follows = AsyncSqliteFts5Store(path, multiscript=None)
    assert await found(follows, "dwarf") == ["en"]
    assert follows.multiscript is False
    await follows.aclose()
    wants = AsyncSqliteFts5Store(path, multiscript=True)
    with pytest.raises(SearchStoreError, match=r"without multiscript .* multiscript=True"):
        await found(wants, "研究方法")
    await wants.rebuild_index()
    assert await found(wants, "研究方法") == ["zh"]
    await wants.aclose()
    reopened = AsyncSqliteFts5Store(path, stemming=True)
    await reopened.rebuild_index()
    assert reopened.multiscript
    assert reopened.stemming
    assert await found(reopened, "galaxy") == ["en"]
    assert await found(reopened, "연구는") == ["ko"]
    await reopened.aclose()


async def test_a_writer_without_the_library_is_refused_not_let_through(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    store = AsyncSqliteFts5Store(path, multiscript=True)
    await store.index(DOCS)
    await store.aclose()
    connection = sqlite3.connect(path)
    with pytest.raises(sqlite3.OperationalError, match="no such function"):
        connection.execute(
            "INSERT INTO documents(record_id, body, indexed_at) VALUES ('x', '研究', 'now')"
        )
    connection.close()
    reopened = AsyncSqliteFts5Store(path)
    assert await reopened.integrity_check()
    assert sorted(await found(reopened, "研究")) == ["ja", "zh"]
    await reopened.aclose()
