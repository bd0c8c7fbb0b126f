"""backfill_text_index: the vector memory's passages become text-index documents."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sci_etl_core.embeddings.chunking import SlidingWindowChunker
from sci_etl_core.embeddings.store_base import (
    AsyncEmbeddingStore,
    EmbeddingChunk,
    SearchHit,
    StoredRecord,
)
from sci_etl_core.embeddings.store_memory import InMemoryEmbeddingStore
from sci_etl_core.search.backfill_async import (
    BackfillReport,
    backfill_text_index,
    merge_passages,
    stored_record_document,
)
from sci_etl_core.search.parser import parse_ranked_query
from sci_etl_core.search.store_base import AsyncTextSearchStore, SearchDocument
from sci_etl_core.search.store_memory import InMemoryTextSearchStore
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

CHUNKER = SlidingWindowChunker(chunk_words=6, overlap_words=2)
TEXTS = {
    "r1": "cold dark matter predicts cuspy halos but dwarf galaxies show cores instead",
    "r2": "molecular chaperones help proteins fold",
    "r3": "",
}


async def _fill(memory: AsyncEmbeddingStore) -> None:
    for n, (record_id, text) in enumerate(TEXTS.items()):
        passages = CHUNKER.chunk(text) or ["   "]
        await memory.add(
            [
                EmbeddingChunk(
                    record_id,
                    i,
                    passage,
                    [1.0, float(n + i)],
                    {"title": "" if record_id == "r3" else f"Title {record_id}", "source_url": "u"},
                )
                for i, passage in enumerate(passages)
            ]
        )


@pytest.fixture(params=["memory", "fts5"])
async def text_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[AsyncTextSearchStore]:
    store: AsyncTextSearchStore
    if request.param == "memory":
        store = InMemoryTextSearchStore()
    else:
        store = AsyncSqliteFts5Store(tmp_path / "text.sqlite")
    yield store
    await store.aclose()


async def test_backfill_indexes_merged_text(text_store: AsyncTextSearchStore) -> None:
    memory = InMemoryEmbeddingStore()
    await _fill(memory)
    report = await backfill_text_index(
        memory, text_store, overlap_words=CHUNKER.overlap_words or 0, batch_size=2
    )
    assert report == BackfillReport(indexed=2, skipped_existing=0, skipped_empty=1)
    documents = await text_store.get_documents(["r1", "r2", "r3"])
    assert sorted(documents) == ["r1", "r2"]
    assert documents["r1"].body == TEXTS["r1"]
    assert documents["r1"].title == "Title r1"
    assert documents["r1"].abstract == ""
    assert documents["r1"].metadata == {"source_url": "u"}
    hits = await text_store.search(parse_ranked_query("dwarf cores"))
    assert [h.record_id for h in hits] == ["r1"]


async def test_existing_records_are_left_alone_unless_asked(
    text_store: AsyncTextSearchStore,
) -> None:
    memory = InMemoryEmbeddingStore()
    await _fill(memory)
    original = SearchDocument(
        "r1", title="Pipeline title", abstract="An abstract", metadata={"y": 1}
    )
    await text_store.index([original])
    report = await backfill_text_index(memory, text_store, overlap_words=2)
    assert report == BackfillReport(indexed=1, skipped_existing=1, skipped_empty=1)
    assert (await text_store.get_documents(["r1"]))["r1"] == original
    report = await backfill_text_index(memory, text_store, overlap_words=2, replace_existing=True)
    assert report == BackfillReport(indexed=2, skipped_existing=0, skipped_empty=1)
    assert (await text_store.get_documents(["r1"]))["r1"].title == "Title r1"


async def test_custom_build_document() -> None:
    memory = InMemoryEmbeddingStore()
    await _fill(memory)
    text_store = InMemoryTextSearchStore(facet_keys=("year",))

    def build(record: StoredRecord, body: str) -> SearchDocument | None:
        if record.record_id == "r2":
            return None
        return SearchDocument(record.record_id, body=body, metadata={"year": 2024})

    report = await backfill_text_index(memory, text_store, overlap_words=2, build_document=build)
    assert report == BackfillReport(indexed=2, skipped_existing=0, skipped_empty=1)

    def wrong(record: StoredRecord, body: str) -> SearchDocument | None:
        return SearchDocument("other", body=body)

    with pytest.raises(ValueError, match="document of 'other' for record 'r1'"):
        await backfill_text_index(
            memory, InMemoryTextSearchStore(), overlap_words=2, build_document=wrong
        )


class NoIterationStore(AsyncEmbeddingStore):
    """A store that cannot enumerate its records (the base class default)."""

    async def add(self, chunks: Sequence[EmbeddingChunk]) -> None:
        return None

    async def delete_record(self, record_id: str) -> None:
        return None

    async def count(self) -> int:
        return 0

    async def query(
        self,
        vector: Sequence[float],
        top_k: int = 5,
        min_score: float = -1.0,
        exclude_record_id: str | None = None,
    ) -> list[SearchHit]:
        return []


async def test_validation() -> None:
    memory, text_store = InMemoryEmbeddingStore(), InMemoryTextSearchStore()
    with pytest.raises(ValueError, match="overlap_words must be >= 0"):
        await backfill_text_index(memory, text_store, overlap_words=-1)
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        await backfill_text_index(memory, text_store, overlap_words=0, batch_size=0)
    with pytest.raises(NotImplementedError, match="NoIterationStore"):
        await backfill_text_index(NoIterationStore(), text_store, overlap_words=0)
    with pytest.raises(ValueError, match="overlap_words"):
        merge_passages(["a"], -2)


def test_stored_record_document() -> None:
    record = StoredRecord("r", ("x",), {"title": "T", "source_url": "u"})
    assert stored_record_document(record, "body") == SearchDocument(
        "r", title="T", body="body", metadata={"source_url": "u"}
    )
    assert stored_record_document(StoredRecord("r", (), {"title": " "}), "  ") is None
    assert stored_record_document(StoredRecord("r", (), {}), "text") == SearchDocument(
        "r", body="text"
    )


def test_merge_passages_keeps_non_overlapping_passages_whole() -> None:
    assert merge_passages(["a b c", "x y z"], 2) == "a b c x y z"
    assert merge_passages(["a b c", "b c"], 2) == "a b c b c"  # not longer than the overlap
    assert merge_passages([], 3) == ""


@given(st.lists(st.sampled_from(["w", "x", "y"]), max_size=40))
def test_merge_round_trip_default_chunker(words: list[str]) -> None:
    chunker = SlidingWindowChunker(chunk_words=7)
    assert merge_passages(chunker.chunk(" ".join(words)), chunker.overlap_words or 0) == " ".join(
        words
    )
