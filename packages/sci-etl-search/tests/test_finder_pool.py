"""How many chunks the finder asks a vector memory for: its pool factor, or one per record."""

from __future__ import annotations

from collections.abc import Sequence

from sci_etl_core.embeddings.async_base import AsyncEmbedder
from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
from sci_etl_core.embeddings.store_base import SearchHit
from sci_etl_core.embeddings.store_memory import InMemoryEmbeddingStore
from search_embedding_support import chunk


class AxisEmbedder(AsyncEmbedder):
    """A test embedder (no model): every text is the first axis of a 3-d space."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0, 0.0] for _ in texts]


class CountingMemory(InMemoryEmbeddingStore):
    """The real in-memory store, remembering the ``top_k`` of each query."""

    def __init__(self, *, records_are_chunks: bool) -> None:
        super().__init__()
        self.records_are_chunks = records_are_chunks
        self.asked: list[int] = []

    async def query(
        self,
        vector: Sequence[float],
        top_k: int = 5,
        min_score: float = -1.0,
        exclude_record_id: str | None = None,
    ) -> list[SearchHit]:
        self.asked.append(top_k)
        return await super().query(vector, top_k, min_score, exclude_record_id)


async def _filled(*, records_are_chunks: bool, chunks_per_record: int) -> CountingMemory:
    memory = CountingMemory(records_are_chunks=records_are_chunks)
    await memory.add(
        [
            chunk(f"r{r}", i, [1.0, 0.1 * r + 0.01 * i, 0.0])
            for r in range(6)
            for i in range(chunks_per_record)
        ]
    )
    return memory


async def test_a_memory_of_passages_is_asked_for_top_k_chunks_with_the_same_hits() -> None:
    per_chunk = await _filled(records_are_chunks=True, chunks_per_record=1)
    plain = await _filled(records_are_chunks=False, chunks_per_record=1)
    got = await AsyncSimilarArticleFinder(AxisEmbedder(), per_chunk).find_similar_articles(
        "q", top_k=3, chunk_pool_factor=5
    )
    want = await AsyncSimilarArticleFinder(AxisEmbedder(), plain).find_similar_articles(
        "q", top_k=3, chunk_pool_factor=5
    )
    assert per_chunk.asked == [3]
    assert plain.asked == [15]
    assert [h.record_id for h in got] == [h.record_id for h in want] == ["r0", "r1", "r2"]


async def test_a_memory_of_long_records_keeps_the_pool_factor() -> None:
    memory = await _filled(records_are_chunks=False, chunks_per_record=4)
    hits = await AsyncSimilarArticleFinder(AxisEmbedder(), memory).find_similar_articles(
        "q", top_k=3, chunk_pool_factor=4
    )
    assert memory.asked == [12]
    assert [h.record_id for h in hits] == ["r0", "r1", "r2"]


async def test_only_a_true_attribute_counts() -> None:
    memory = await _filled(records_are_chunks=False, chunks_per_record=1)
    memory.records_are_chunks = "yes"  # type: ignore[assignment]
    await AsyncSimilarArticleFinder(AxisEmbedder(), memory).find_similar_articles(
        "q", top_k=2, chunk_pool_factor=5
    )
    assert memory.asked == [10]
