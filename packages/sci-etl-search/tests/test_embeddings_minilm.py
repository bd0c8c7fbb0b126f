"""The sentence-transformers embedder, finder and chunk ingestor with the real MiniLM model."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sci_etl_core.embeddings.async_base import AsyncEmbedder
from sci_etl_core.embeddings.chunking import SlidingWindowChunker
from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
from sci_etl_core.embeddings.ingest_async import AsyncChunkIngestor
from sci_etl_core.embeddings.sentence_transformers_async import (
    AsyncSentenceTransformerEmbedder,
    default_model_path,
)
from sci_etl_core.embeddings.store_memory import InMemoryEmbeddingStore
from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore
from sci_etl_core.exceptions import EmbeddingError
from sci_etl_core.ingest_protocol import MemoryIngestor
from search_embedding_support import FailingEmbedder, minilm_embedder

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Record:
    record_id: str
    title: str = ""
    abstract: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@pytest.fixture(scope="module")
def embedder() -> AsyncEmbedder:
    return minilm_embedder()


async def test_embeds_unit_vectors_in_order(embedder: AsyncEmbedder) -> None:
    texts = ["dark matter halos of dwarf galaxies", "protein folding", "dark matter in dwarfs"]
    vectors = await embedder.embed(texts)
    assert len(vectors) == 3
    assert all(len(v) == 384 for v in vectors)
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0, rel_tol=1e-4) for v in vectors)

    def cos(a: list[float], b: list[float]) -> float:
        return math.fsum(x * y for x, y in zip(a, b, strict=True))

    assert cos(vectors[0], vectors[2]) > cos(vectors[0], vectors[1]) + 0.3
    assert await embedder.embed([]) == []
    again = await embedder.embed(texts[::-1])
    assert again[0] == pytest.approx(vectors[2], abs=1e-5)


async def test_small_calls_keep_the_event_loop_free(embedder: AsyncEmbedder) -> None:
    assert isinstance(embedder, AsyncSentenceTransformerEmbedder)
    chunked = AsyncSentenceTransformerEmbedder(texts_per_call=2, batch_size=2)
    chunked._model = embedder._model  # share the loaded model
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    vectors = await chunked.embed([f"text number {n}" for n in range(7)])
    task.cancel()
    assert len(vectors) == 7
    assert ticks > 1
    assert chunked.dimension == 384


async def test_rejects_non_text_and_bad_settings(embedder: AsyncEmbedder) -> None:
    with pytest.raises(TypeError, match=r"texts\[1\] is int"):
        await embedder.embed(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="batch_size must be an int >= 1"):
        AsyncSentenceTransformerEmbedder(batch_size=0)


async def test_missing_model_raises_embedding_error(tmp_path: Path) -> None:
    broken = AsyncSentenceTransformerEmbedder(tmp_path / "no-such-model")
    with pytest.raises(EmbeddingError, match="no-such-model"):
        await broken.embed(["text"])


def test_default_model_is_the_packaged_minilm() -> None:
    assert (default_model_path() / "config.json").is_file()
    assert AsyncSentenceTransformerEmbedder().model_name_or_path == str(default_model_path())


async def test_ingestor_chunks_embeds_and_replaces(embedder: AsyncEmbedder, tmp_path: Path) -> None:
    store = AsyncSqliteEmbeddingStore(tmp_path / "memory.sqlite")
    ingestor = AsyncChunkIngestor(
        embedder, store, SlidingWindowChunker(chunk_words=8, overlap_words=2)
    )
    assert isinstance(ingestor, MemoryIngestor)
    record = Record(
        "r1", title="Dwarf halos", metadata={"source_url": "https://x.org/r1", "year": 2020}
    )
    text = "cold dark matter predicts cuspy halos but dwarf galaxies show cores " * 2
    assert await ingestor.ingest(record, text) == 4  # 22 words, windows start 0, 6, 12, 18
    (stored,) = [r async for r in store.iter_records()]
    assert stored.metadata == {"title": "Dwarf halos", "source_url": "https://x.org/r1"}
    assert await ingestor.ingest(record, "a short replacement") == 1
    assert await store.count() == 1
    assert await ingestor.ingest(record, "   ") == 0
    assert await store.count() == 0
    await store.aclose()


async def test_ingestor_propagates_embedding_errors_and_keeps_rows() -> None:
    store = InMemoryEmbeddingStore()
    good = AsyncChunkIngestor(minilm_embedder(), store)
    await good.ingest(Record("r1", "T"), "some words here")
    bad = AsyncChunkIngestor(FailingEmbedder(), store)
    with pytest.raises(EmbeddingError, match="unreachable"):
        await bad.ingest(Record("r1", "T"), "other words")
    assert await store.count() == 1
    with pytest.raises(ValueError, match="record_id must be a non-blank string"):
        await good.ingest(Record(" "), "text")


async def test_finder_finds_articles_by_meaning(embedder: AsyncEmbedder) -> None:
    store = InMemoryEmbeddingStore()
    ingestor = AsyncChunkIngestor(
        embedder, store, SlidingWindowChunker(chunk_words=12, overlap_words=3)
    )
    corpus = {
        "astro": "Rotation curves of dwarf galaxies suggest cored dark matter halos "
        "rather than cusps. "
        "Feedback from supernovae may flatten the inner density profile of these halos.",
        "bio": "Chaperone proteins assist the folding of newly synthesised polypeptide chains "
        "and prevent aggregation inside the crowded cell.",
        "ml": "Transformer language models learn contextual word representations from large "
        "unlabelled text corpora by predicting masked tokens.",
    }
    for rid, text in corpus.items():
        await ingestor.ingest(Record(rid, title=rid), text)
    finder = AsyncSimilarArticleFinder(embedder, store)
    articles = await finder.find_similar_articles(
        "how do proteins fold correctly in cells", top_k=3
    )
    assert articles[0].record_id == "bio"
    assert len({a.record_id for a in articles}) == len(articles) == 3
    chunks = await finder.find_similar_chunks("galaxy dark matter profile", top_k=2)
    assert all(c.record_id == "astro" for c in chunks)
    excluded = await finder.find_similar_articles("galaxy dark matter", exclude_record_id="astro")
    assert "astro" not in {a.record_id for a in excluded}
    with pytest.raises(ValueError, match="text must not be blank"):
        await finder.find_similar_articles("  ")
    with pytest.raises(ValueError, match="chunk_pool_factor must be >= 1"):
        await finder.find_similar_articles("x", chunk_pool_factor=0)
