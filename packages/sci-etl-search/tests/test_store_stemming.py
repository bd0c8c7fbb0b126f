"""Stemming text stores: FTS5's porter tokenizer in the SQLite store, its twin in memory."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sci_etl_core.exceptions import SearchStoreError
from sci_etl_core.search import parse_query
from sci_etl_core.search.stemming import FTS5_PORTER_TOKENIZE, PorterTokenizer
from sci_etl_core.search.store_base import AsyncTextSearchStore, SearchDocument
from sci_etl_core.search.store_memory import InMemoryTextSearchStore
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store
from sci_etl_core.search.tokenize import Unicode61Tokenizer

DOCS = [
    SearchDocument("r1", title="Matching relational records", abstract="Records matched fast."),
    SearchDocument("r2", title="Inhibition of kinases", abstract="The drug inhibits relapses."),
    SearchDocument("r3", title="Galaxy surveys", abstract="Dwarf galaxies are faint."),
]


def fts_declaration(path: Path) -> str:
    with sqlite3.connect(path) as connection:
        row = connection.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'documents_fts'"
        ).fetchone()
    connection.close()
    return str(row[0])


async def found(store: AsyncTextSearchStore, query: str) -> list[str]:
    return [hit.record_id for hit in await store.search(parse_query(query), limit=10)]


@pytest.mark.parametrize("kind", ["sqlite", "memory"])
async def test_stemmed_words_match_each_other(tmp_path: Path, kind: str) -> None:
    store: AsyncTextSearchStore = (
        AsyncSqliteFts5Store(tmp_path / "s.sqlite", stemming=True)
        if kind == "sqlite"
        else InMemoryTextSearchStore(tokenizer=PorterTokenizer())
    )
    await store.index(DOCS)
    assert await found(store, "matches") == ["r1"]
    assert await found(store, "inhibiting") == ["r2"]
    assert await found(store, "galaxy") == ["r3"]
    assert await found(store, '"relation record"') == ["r1"]
    (hit,) = await store.search(parse_query("inhibitions"), limit=5)
    marked = [(s.field, s.text[a:b]) for s in hit.snippets for a, b in s.highlights]
    assert marked == [("title", "Inhibition"), ("abstract", "inhibits")]
    assert isinstance(store.tokenizer, PorterTokenizer)
    await store.aclose()


async def test_default_store_does_not_stem(tmp_path: Path) -> None:
    store = AsyncSqliteFts5Store(tmp_path / "plain.sqlite")
    await store.index(DOCS)
    assert await found(store, "matches") == []
    assert store.stemming is False
    assert isinstance(store.tokenizer, Unicode61Tokenizer)
    assert "porter" not in fts_declaration(tmp_path / "plain.sqlite")
    await store.aclose()


async def test_the_file_records_stemming_and_none_follows_it(tmp_path: Path) -> None:
    path = tmp_path / "stemmed.sqlite"
    store = AsyncSqliteFts5Store(path, stemming=True)
    await store.index(DOCS)
    await store.aclose()
    assert f"tokenize='{FTS5_PORTER_TOKENIZE}'" in fts_declaration(path)
    follower = AsyncSqliteFts5Store(path)
    assert follower.stemming is False  # not opened yet
    assert await found(follower, "matches") == ["r1"]
    assert follower.stemming is True
    assert isinstance(follower.tokenizer, PorterTokenizer)
    await follower.aclose()


async def test_a_mismatch_refuses_queries_until_rebuild_index(tmp_path: Path) -> None:
    path = tmp_path / "plain.sqlite"
    plain = AsyncSqliteFts5Store(path)
    await plain.index(DOCS)
    await plain.aclose()
    stemmed = AsyncSqliteFts5Store(path, stemming=True, facet_keys=())
    assert await stemmed.count() == 3  # reading documents needs no tokenizer
    with pytest.raises(SearchStoreError, match=r"plain\.sqlite.*without stemming.*rebuild_index"):
        await stemmed.search(parse_query("matches"))
    with pytest.raises(SearchStoreError, match="rebuild_index"):
        await stemmed.filter_ids(parse_query("matches"))
    with pytest.raises(SearchStoreError, match="rebuild_index"):
        await stemmed.facet_counts([], query=parse_query("matches"))
    assert await stemmed.filter_ids() == {"r1", "r2", "r3"}
    await stemmed.index([SearchDocument("r4", title="Matchings")])  # writes still work
    await stemmed.rebuild_index()
    assert await stemmed.integrity_check()
    assert sorted(await found(stemmed, "matches")) == ["r1", "r4"]
    await stemmed.aclose()
    assert "porter" in fts_declaration(path)
    back = AsyncSqliteFts5Store(path, stemming=False)
    with pytest.raises(SearchStoreError, match=r"built with stemming but .* stemming=False"):
        await back.search(parse_query("matches"))
    await back.rebuild_index()
    assert await found(back, "matches") == []
    await back.aclose()


async def test_an_empty_file_takes_the_requested_tokenizer(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    plain = AsyncSqliteFts5Store(path)
    assert await plain.count() == 0
    await plain.aclose()
    stemmed = AsyncSqliteFts5Store(path, stemming=True)
    await stemmed.index(DOCS)
    assert await found(stemmed, "matches") == ["r1"]
    await stemmed.aclose()
    assert "porter" in fts_declaration(path)


def test_stemming_must_be_a_bool_or_none(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="stemming must be True, False or None, not 'yes'"):
        AsyncSqliteFts5Store(tmp_path / "x.sqlite", stemming="yes")  # type: ignore[arg-type]
