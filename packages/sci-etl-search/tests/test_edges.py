"""Edge sources on real stores: shared tags (FTS5 index) and closeness (MiniLM + SQLite)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sci_etl_core.embeddings.chunking import SlidingWindowChunker
from sci_etl_core.embeddings.ingest_async import AsyncChunkIngestor
from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore
from sci_etl_core.exceptions import EmbeddingError
from sci_etl_core.search.edges import EmbeddingEdgeSource, MetadataEdgeSource
from sci_etl_core.search.graph import GraphParams, build_discovery_graph
from sci_etl_core.search.store_base import SearchDocument
from sci_etl_core.search.store_memory import InMemoryTextSearchStore
from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store
from search_embedding_support import FailingEmbedder, minilm_embedder

DOCS = [
    SearchDocument(
        "a",
        "Dark matter halos of dwarf galaxies",
        "Cored profiles in dwarf galaxy rotation curves.",
        metadata={"categories": ["astro-ph.GA", "astro-ph.CO"], "authors": ["Kim"]},
    ),
    SearchDocument(
        "b",
        "Cusp-core problem in dwarf spheroidals",
        "Feedback flattens the inner dark matter density of small galaxies.",
        metadata={"categories": ["astro-ph.GA"], "authors": ["Kim", "Lee"]},
    ),
    SearchDocument(
        "c",
        "Quasar clustering",
        "Large-scale clustering of quasars measured in a redshift survey.",
        metadata={"categories": ["astro-ph.CO"], "authors": ["Ng"]},
    ),
    SearchDocument(
        "d",
        "Protein folding chaperones",
        "Chaperones help proteins fold.",
        metadata={"categories": ["q-bio.BM"], "authors": ["Ortiz"]},
    ),
    SearchDocument("e", "", "", metadata={"categories": ["q-bio.BM"]}),
]


@pytest.fixture
async def text_store(tmp_path: Path) -> AsyncIterator[AsyncSqliteFts5Store]:
    store = AsyncSqliteFts5Store(tmp_path / "text.sqlite", facet_keys=("categories", "authors"))
    await store.index(DOCS)
    yield store
    await store.aclose()


async def test_metadata_source_weights_by_jaccard(text_store: AsyncSqliteFts5Store) -> None:
    source = MetadataEdgeSource(text_store)
    assert source.kind == "metadata"
    result = await source.neighbours(["a", "d", "missing"], limit=5)
    assert result["a"] == [("b", pytest.approx(2 / 4)), ("c", pytest.approx(1 / 4))]
    assert result["d"] == [("e", 0.5)]
    assert result["missing"] == []
    assert (await source.neighbours(["a"], limit=1))["a"] == [("b", 0.5)]


async def test_metadata_source_same_on_the_in_memory_store() -> None:
    store = InMemoryTextSearchStore(facet_keys=("categories", "authors"))
    await store.index(DOCS)
    result = await MetadataEdgeSource(store, keys=["categories"]).neighbours(["a"], limit=5)
    assert result["a"] == [("b", 0.5), ("c", 0.5)]


async def test_metadata_source_validation(text_store: AsyncSqliteFts5Store) -> None:
    with pytest.raises(ValueError, match=r"keys \['year'\] are not facet keys"):
        MetadataEdgeSource(text_store, keys=["year"])
    with pytest.raises(ValueError, match="at least one key"):
        MetadataEdgeSource(text_store, keys=[])


@pytest.mark.slow
async def test_embedding_source_and_graph(text_store: AsyncSqliteFts5Store, tmp_path: Path) -> None:
    memory = AsyncSqliteEmbeddingStore(tmp_path / "memory.sqlite")
    ingestor = AsyncChunkIngestor(minilm_embedder(), memory, SlidingWindowChunker(30))
    for doc in DOCS:
        await ingestor.ingest(doc, f"{doc.title}. {doc.abstract}")
    source = EmbeddingEdgeSource(minilm_embedder(), memory, text_store)
    assert source.kind == "semantic"
    result = await source.neighbours(["a", "e", "zzz"], limit=2)
    assert result["a"][0][0] == "b"
    assert len(result["a"]) == 2
    assert all(weight >= 0 for _, weight in result["a"])
    assert result["e"] == []  # blank title and abstract
    assert result["zzz"] == []  # not in the text index

    metadata = MetadataEdgeSource(text_store)
    graph = await build_discovery_graph(
        "a", [source, metadata], text_store, params=GraphParams(fanout=2, min_weight=0.3)
    )
    ids = {n.record_id for n in graph.nodes}
    assert {"a", "b"} <= ids
    assert "d" not in ids
    assert {e.kind for e in graph.edges} <= {"semantic", "metadata"}
    assert any(e.source == "a" and e.target == "b" for e in graph.edges)

    failing = EmbeddingEdgeSource(FailingEmbedder(), memory, text_store)
    with pytest.raises(EmbeddingError, match="unreachable"):
        await build_discovery_graph("a", [metadata, failing], text_store)
    with pytest.raises(ValueError, match="chunk_pool_factor"):
        EmbeddingEdgeSource(minilm_embedder(), memory, text_store, chunk_pool_factor=0)
    await memory.aclose()
