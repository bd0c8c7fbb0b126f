"""AsyncHybridSearcher end to end: real FTS5 index, real MiniLM model, small corpus."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from sci_etl_core.embeddings.chunking import SlidingWindowChunker
from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
from sci_etl_core.embeddings.ingest_async import AsyncChunkIngestor
from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore
from sci_etl_core.exceptions import EmbeddingStoreError, SearchQueryError
from sci_etl_core.search.filters import MetadataFilter, RangeFilter
from sci_etl_core.search.fusion import FusionParams, normalized_score_fusion
from sci_etl_core.search.hybrid_async import (
    SEARCH_MODES,
    AsyncHybridSearcher,
    HybridParams,
)
from sci_etl_core.search.index_async import AsyncSearchIndexer
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store
from search_embedding_support import FailingEmbedder, minilm_embedder

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]


@dataclass(frozen=True)
class Record:
    record_id: str
    title: str
    abstract: str
    metadata: dict[str, Any] = field(default_factory=dict)


CORPUS = [
    Record(
        "astro1",
        "Cored dark matter halos in dwarf galaxies",
        "Rotation curves of dwarf galaxies favour cored density profiles over cusps.",
        {"field": "astro", "year": 2019},
    ),
    Record(
        "astro2",
        "Quasar variability at high redshift",
        "We measure optical variability of quasars in a wide-field survey.",
        {"field": "astro", "year": 2022},
    ),
    Record(
        "bio1",
        "Chaperones and protein folding",
        "Molecular chaperones help newly made polypeptides reach their native shape "
        "and prevent aggregation.",
        {"field": "bio", "year": 2020},
    ),
    Record(
        "bio2",
        "Gene regulation in yeast",
        "Transcription factors control gene expression in response to nutrients.",
        {"field": "bio", "year": 2023},
    ),
    Record(
        "cs1",
        "Attention is what transformers use",
        "Transformer language models learn contextual representations of words "
        "from unlabelled text.",
        {"field": "cs", "year": 2021},
    ),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stores(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[tuple[AsyncSqliteFts5Store, AsyncSqliteEmbeddingStore]]:
    base = tmp_path_factory.mktemp("hybrid")
    text_store = AsyncSqliteFts5Store(base / "text.sqlite", facet_keys=("field", "year"))
    memory = AsyncSqliteEmbeddingStore(base / "memory.sqlite")
    indexer = AsyncSearchIndexer(text_store)
    ingestor = AsyncChunkIngestor(minilm_embedder(), memory, SlidingWindowChunker(40))
    for record in CORPUS:
        await indexer.ingest(record, "")
        await ingestor.ingest(record, f"{record.title}. {record.abstract}")
    yield text_store, memory
    await text_store.aclose()
    await memory.aclose()


@pytest.fixture
def searcher(stores: tuple[AsyncSqliteFts5Store, AsyncSqliteEmbeddingStore]) -> AsyncHybridSearcher:
    text_store, memory = stores
    finder = AsyncSimilarArticleFinder(minilm_embedder(), memory)
    return AsyncHybridSearcher(text_store, finder, params=HybridParams(candidate_pool=10))


async def test_lexical_mode_ranks_by_bm25(searcher: AsyncHybridSearcher) -> None:
    outcome = await searcher.search("dwarf galaxies", mode="lexical")
    assert [h.record_id for h in outcome.hits] == ["astro1"]
    hit = outcome.hits[0]
    assert (hit.lexical_rank, hit.semantic_rank) == (1, None)
    assert hit.title == "Cored dark matter halos in dwarf galaxies"
    assert hit.highlights
    assert hit.snippets
    assert outcome.degraded == outcome.skipped == ()


async def test_paraphrase_is_found_by_the_semantic_leg(searcher: AsyncHybridSearcher) -> None:
    query = "how do cells help proteins fold properly"
    lexical = await searcher.search(query, mode="lexical")
    assert "bio1" not in {h.record_id for h in lexical.hits}
    semantic = await searcher.search(query, top_k=3, mode="semantic")
    assert semantic.hits[0].record_id == "bio1"
    assert semantic.hits[0].semantic_rank == 1
    hybrid = await searcher.search(query, top_k=3)
    assert hybrid.hits[0].record_id == "bio1"
    only_semantic = hybrid.hits[0]
    assert only_semantic.lexical_rank is None
    assert only_semantic.title == "Chaperones and protein folding"
    assert only_semantic.metadata == {"field": "bio", "year": 2020}
    (snippet,) = only_semantic.snippets
    assert snippet.field == "body"
    marked = [snippet.text[a:b].lower() for a, b in snippet.highlights]
    assert marked == ["help"]


async def test_hybrid_fuses_both_legs(searcher: AsyncHybridSearcher) -> None:
    outcome = await searcher.search("quasar variability", top_k=5)
    top = outcome.hits[0]
    assert top.record_id == "astro2"
    assert (top.lexical_rank, top.semantic_rank) == (1, 1)
    assert top.score == pytest.approx(2 / 61)
    scores = [h.score for h in outcome.hits]
    assert scores == sorted(scores, reverse=True)


async def test_filters_narrow_both_legs(searcher: AsyncHybridSearcher) -> None:
    for mode in SEARCH_MODES:
        outcome = await searcher.search(
            "protein folding OR galaxies", mode=mode, filters=[MetadataFilter("field", {"astro"})]
        )
        assert outcome.hits, mode
        assert {h.record_id for h in outcome.hits} <= {"astro1", "astro2"}, mode
    ranged = await searcher.search(
        "proteins", mode="semantic", filters=[RangeFilter("year", low=2021)]
    )
    assert {h.record_id for h in ranged.hits} <= {"astro2", "bio2", "cs1"}


async def test_failing_embedder_degrades_to_lexical(
    stores: tuple[AsyncSqliteFts5Store, AsyncSqliteEmbeddingStore],
) -> None:
    text_store, memory = stores
    lines: list[str] = []
    failing = FailingEmbedder()
    searcher = AsyncHybridSearcher(
        text_store, AsyncSimilarArticleFinder(failing, memory), logger=lines.append
    )
    outcome = await searcher.search("dwarf galaxies")
    assert [h.record_id for h in outcome.hits] == ["astro1"]
    assert outcome.degraded == ("semantic",)
    assert outcome.skipped == ()
    assert failing.calls == 1
    assert "unreachable" in lines[0]
    with pytest.raises(Exception, match="unreachable"):
        await searcher.search("dwarf galaxies", mode="semantic")


async def test_no_finder_means_skipped(
    stores: tuple[AsyncSqliteFts5Store, AsyncSqliteEmbeddingStore],
) -> None:
    searcher = AsyncHybridSearcher(stores[0])
    outcome = await searcher.search("dwarf galaxies")
    assert [h.record_id for h in outcome.hits] == ["astro1"]
    assert (outcome.degraded, outcome.skipped) == ((), ("semantic",))
    with pytest.raises(SearchQueryError, match="needs a vector memory"):
        await searcher.search("dwarf", mode="semantic")


async def test_prefix_only_query_skips_the_semantic_leg(searcher: AsyncHybridSearcher) -> None:
    outcome = await searcher.search("quas*")
    assert [h.record_id for h in outcome.hits] == ["astro2"]
    assert outcome.skipped == ("semantic",)


async def test_errors_before_io(
    stores: tuple[AsyncSqliteFts5Store, AsyncSqliteEmbeddingStore],
) -> None:
    failing = FailingEmbedder()
    searcher = AsyncHybridSearcher(stores[0], AsyncSimilarArticleFinder(failing, stores[1]))
    with pytest.raises(ValueError, match="mode must be one of"):
        await searcher.search("a", mode="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(SearchQueryError) as caught:
        await searcher.search("dwarf AND (halo")
    assert caught.value.position is not None
    with pytest.raises(SearchQueryError):
        await searcher.search("NOT dwarf")
    with pytest.raises(ValueError, match="not a facet key"):
        await searcher.search("dwarf", filters=[MetadataFilter("colour", {"red"})])
    with pytest.raises(ValueError, match="second filter on key 'field'"):
        await searcher.search(
            "dwarf", filters=[MetadataFilter("field", {"a"}), MetadataFilter("field", {"b"})]
        )
    assert (await searcher.search("dwarf", top_k=0)).hits == []
    assert failing.calls == 0
    with pytest.raises(ValueError, match="two weights"):
        AsyncHybridSearcher(stores[0], fusion=FusionParams(weights=[1.0]))


async def test_normalized_fusion_strategy(searcher: AsyncHybridSearcher) -> None:
    normalized = AsyncHybridSearcher(
        searcher.text_store,
        searcher.finder,
        strategy=normalized_score_fusion,
        fusion=FusionParams(weights=(1.0, 1.0)),
    )
    outcome = await normalized.search("quasar variability", top_k=2)
    assert outcome.hits[0].record_id == "astro2"
    assert outcome.hits[0].score == pytest.approx(2.0)


async def test_vector_store_failure_is_not_degraded(tmp_path: Path) -> None:
    text_store = AsyncSqliteFts5Store(tmp_path / "t.sqlite")
    await text_store.index([])
    bad = tmp_path / "memory.sqlite"
    bad.write_text("not a database " * 200)
    memory = AsyncSqliteEmbeddingStore(bad)
    searcher = AsyncHybridSearcher(text_store, AsyncSimilarArticleFinder(minilm_embedder(), memory))
    with pytest.raises(EmbeddingStoreError, match=r"memory\.sqlite"):
        await searcher.search("dwarf")
    await memory.aclose()
    await text_store.aclose()


async def test_a_stemming_store_stems_the_highlights_of_semantic_only_hits(
    stores: tuple[AsyncSqliteFts5Store, AsyncSqliteEmbeddingStore],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    path = tmp_path_factory.mktemp("stemmed") / "text.sqlite"
    stemmed = AsyncSqliteFts5Store(path, facet_keys=("field", "year"), stemming=True)
    indexer = AsyncSearchIndexer(stemmed)
    for record in CORPUS:
        await indexer.ingest(record, "")
    finder = AsyncSimilarArticleFinder(minilm_embedder(), stores[1])
    searcher = AsyncHybridSearcher(stemmed, finder, params=HybridParams(candidate_pool=10))
    lexical = await searcher.search("chaperone helps", mode="lexical")
    assert [h.record_id for h in lexical.hits] == ["bio1"]  # "chaperones help", stemmed
    # No record has "foldases", so bio1 is a semantic-only hit; its passage still
    # highlights "chaperones" and "help" for "chaperone" and "helps" through the stems.
    hybrid = await searcher.search("chaperone AND helps AND foldases", top_k=3)
    top = hybrid.hits[0]
    assert (top.record_id, top.lexical_rank) == ("bio1", None)
    marked = {top.snippet[a:b].lower() for a, b in top.highlights}
    assert marked == {"chaperones", "help"}
    await stemmed.aclose()
