"""Property-based parity of the in-memory store with the SQLite FTS5 store.

On random corpora and random query trees both stores must return the same record sets,
facet and range counts, and refuse the same unrankable queries. On the query shapes
where FTS5's scores are determined (see ``determined_query`` and the docstring of
:class:`InMemoryTextSearchStore`), the ranking and the scores must agree as well. Both
properties hold for stemming stores too: FTS5's ``porter`` tokenizer against an
in-memory store tokenizing with :class:`PorterTokenizer`.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search.filters import RangeFilter, SearchFilter
from sci_etl_core.search.query import Node
from sci_etl_core.search.stemming import PorterTokenizer
from sci_etl_core.search.store_base import AsyncTextSearchStore, SearchDocument
from sci_etl_core.search.store_memory import InMemoryTextSearchStore
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store
from search_store_support import (
    FACET_KEYS,
    any_query,
    close,
    determined_query,
    documents,
    filter_sets,
    range_filter,
)


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="search-parity-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


class Pair:
    """A fresh pair of stores holding the same corpus."""

    counter = 0

    def __init__(self, workdir: Path, corpus: list[SearchDocument], stemming: bool) -> None:
        Pair.counter += 1
        tokenizer = PorterTokenizer() if stemming else None
        self.memory = InMemoryTextSearchStore(facet_keys=FACET_KEYS, tokenizer=tokenizer)
        self.sqlite = AsyncSqliteFts5Store(
            workdir / f"parity-{Pair.counter}.sqlite", facet_keys=FACET_KEYS, stemming=stemming
        )
        self.corpus = corpus

    async def __aenter__(self) -> tuple[AsyncTextSearchStore, AsyncTextSearchStore]:
        await self.memory.index(self.corpus)
        await self.sqlite.index(self.corpus)
        return self.memory, self.sqlite

    async def __aexit__(self, *_: object) -> None:
        await self.sqlite.aclose()


async def ranked_or_error(
    store: AsyncTextSearchStore, query: Node, filters: list[SearchFilter]
) -> list[tuple[str, float]] | str:
    try:
        hits = await store.search(query, limit=50, filters=filters)
    except SearchQueryError:
        return "refused"
    return [(hit.record_id, hit.score) for hit in hits]


@pytest.mark.parametrize("stemming", [False, True], ids=["unicode61", "porter"])
@settings(max_examples=200)
@given(corpus=documents(), query=st.one_of(st.none(), any_query), filters=filter_sets())
def test_same_sets_counts_and_refusals(
    workdir: Path,
    stemming: bool,
    corpus: list[SearchDocument],
    query: Node | None,
    filters: list[SearchFilter],
) -> None:
    async def check() -> None:
        async with Pair(workdir, corpus, stemming) as (memory, sqlite):
            assert await memory.filter_ids(query, filters) == await sqlite.filter_ids(
                query, filters
            )
            keys = ["year", "categories", "authors"]
            assert await memory.facet_counts(
                keys, query=query, filters=filters
            ) == await sqlite.facet_counts(keys, query=query, filters=filters)
            ranges: list[RangeFilter] = [
                RangeFilter("year", low=2019, high=2021),
                RangeFilter("year", low="2020"),
                RangeFilter("year", high="2020", negated=True),
            ]
            assert await memory.range_counts(
                ranges, query=query, filters=filters
            ) == await sqlite.range_counts(ranges, query=query, filters=filters)
            if query is None:
                return
            left = await ranked_or_error(memory, query, filters)
            right = await ranked_or_error(sqlite, query, filters)
            if isinstance(left, str) or isinstance(right, str):
                assert left == right
            else:
                assert {rid for rid, _ in left} == {rid for rid, _ in right}

    asyncio.run(check())


def assert_same_ranking(left: list[tuple[str, float]], right: list[tuple[str, float]]) -> None:
    assert len(left) == len(right)
    for (lid, lscore), (rid, rscore) in zip(left, right, strict=True):
        assert close(lscore, rscore), (left, right)
        if lid != rid:
            # Only records whose scores tie to rounding may trade places.
            assert close(dict(left)[rid], rscore)
            assert close(dict(right)[lid], lscore)


@pytest.mark.parametrize("stemming", [False, True], ids=["unicode61", "porter"])
@settings(max_examples=200)
@given(corpus=documents(), query=determined_query, filters=filter_sets())
def test_same_order_and_scores_on_determined_shapes(
    workdir: Path,
    stemming: bool,
    corpus: list[SearchDocument],
    query: Node,
    filters: list[SearchFilter],
) -> None:
    async def check() -> None:
        async with Pair(workdir, corpus, stemming) as (memory, sqlite):
            left = await ranked_or_error(memory, query, filters)
            right = await ranked_or_error(sqlite, query, filters)
            assert not isinstance(left, str)
            assert not isinstance(right, str)
            assert_same_ranking(left, right)
            memory_hits = await memory.search(query, limit=50, filters=filters)
            sqlite_hits = await sqlite.search(query, limit=50, filters=filters)
            by_id = {hit.record_id: hit for hit in sqlite_hits}
            for hit in memory_hits:
                other = by_id[hit.record_id]
                assert [s.field for s in hit.snippets] == [s.field for s in other.snippets]
                assert hit.title == other.title
                assert hit.metadata == other.metadata

    asyncio.run(check())


@settings(max_examples=60)
@given(corpus=documents(min_size=2), ranges=st.lists(range_filter, min_size=1, max_size=4))
def test_overlapping_ranges_count_alike(
    workdir: Path, corpus: list[SearchDocument], ranges: list[RangeFilter]
) -> None:
    async def check() -> None:
        async with Pair(workdir, corpus, False) as (memory, sqlite):
            assert await memory.range_counts(ranges) == await sqlite.range_counts(ranges)

    asyncio.run(check())
