"""Shared support for the embedding-side tests: the store conformance suite, embedders, model.

``EmbeddingStoreConformance`` is a mixin of tests; a test module subclasses it and
provides a ``store`` fixture yielding a fresh, empty :class:`AsyncEmbeddingStore`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import pytest
from sci_etl_core.embeddings.async_base import AsyncEmbedder
from sci_etl_core.embeddings.store_base import AsyncEmbeddingStore, EmbeddingChunk, StoredRecord
from sci_etl_core.exceptions import EmbeddingDimensionError, EmbeddingError


class FailingEmbedder(AsyncEmbedder):
    """An embedder whose service is down: every call raises :class:`EmbeddingError`."""

    def __init__(self) -> None:
        self.calls = 0

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        raise EmbeddingError("embedding service unreachable (test embedder)")


@functools.cache
def minilm_embedder() -> AsyncEmbedder:
    """The packaged all-MiniLM-L6-v2 embedder, loaded once per test process."""
    from sci_etl_core.embeddings.sentence_transformers_async import (
        AsyncSentenceTransformerEmbedder,
    )

    embedder = AsyncSentenceTransformerEmbedder(device="cpu")
    embedder._load_sync()
    return embedder


def chunk(
    record_id: str, index: int, vector: Sequence[float], **metadata: object
) -> EmbeddingChunk:
    """Build a chunk whose text names its key."""
    return EmbeddingChunk(record_id, index, f"{record_id} passage {index}", vector, dict(metadata))


async def records(store: AsyncEmbeddingStore, batch_size: int = 100) -> list[StoredRecord]:
    """Every record of ``store``, read through ``iter_records``."""
    return [record async for record in store.iter_records(batch_size)]


class EmbeddingStoreConformance:
    """Behaviour every :class:`AsyncEmbeddingStore` must share."""

    async def test_empty_store(self, store: AsyncEmbeddingStore) -> None:
        assert await store.count() == 0
        assert await store.query([1.0, 0.0]) == []
        assert await records(store) == []

    async def test_query_ranks_by_cosine_and_normalizes(self, store: AsyncEmbeddingStore) -> None:
        await store.add(
            [
                chunk("a", 0, [10.0, 0.0], title="A"),
                chunk("b", 0, [1.0, 1.0], title="B"),
                chunk("c", 0, [-3.0, 0.0], title="C"),
            ]
        )
        hits = await store.query([2.0, 0.0], top_k=3)
        assert [h.record_id for h in hits] == ["a", "b", "c"]
        assert hits[0].score == pytest.approx(1.0, abs=1e-6)
        assert hits[1].score == pytest.approx(math.sqrt(0.5), abs=1e-6)
        assert hits[2].score == pytest.approx(-1.0, abs=1e-6)
        assert hits[0].text == "a passage 0"
        assert hits[0].metadata == {"title": "A"}

    async def test_top_k_min_score_and_exclusion(self, store: AsyncEmbeddingStore) -> None:
        await store.add([chunk("a", 0, [1.0, 0.0]), chunk("a", 1, [0.9, 0.1])])
        await store.add([chunk("b", 0, [0.8, 0.2]), chunk("c", 0, [0.0, 1.0])])
        assert [h.record_id for h in await store.query([1.0, 0.0], top_k=2)] == ["a", "a"]
        excluded = await store.query([1.0, 0.0], top_k=5, exclude_record_id="a")
        assert [h.record_id for h in excluded] == ["b", "c"]
        assert [h.record_id for h in await store.query([1.0, 0.0], min_score=0.5)] == [
            "a",
            "a",
            "b",
        ]
        assert await store.query([1.0, 0.0], top_k=0) == []

    async def test_ties_order_by_record_then_chunk(self, store: AsyncEmbeddingStore) -> None:
        await store.add([chunk(rid, i, [1.0, 1.0]) for rid in ("z", "m", "a") for i in (1, 0)])
        hits = await store.query([1.0, 1.0], top_k=6)
        assert [(h.record_id, h.chunk_index) for h in hits] == [
            ("a", 0),
            ("a", 1),
            ("m", 0),
            ("m", 1),
            ("z", 0),
            ("z", 1),
        ]

    async def test_add_replaces_same_key_and_counts(self, store: AsyncEmbeddingStore) -> None:
        await store.add([chunk("a", 0, [1.0, 0.0])])
        await store.add([EmbeddingChunk("a", 0, "new text", [0.0, 1.0])])
        assert await store.count() == 1
        (hit,) = await store.query([0.0, 1.0], top_k=1)
        assert (hit.text, hit.score) == ("new text", pytest.approx(1.0, abs=1e-6))

    async def test_replace_and_delete_record(self, store: AsyncEmbeddingStore) -> None:
        await store.add([chunk("a", i, [1.0, float(i)]) for i in range(3)])
        await store.add([chunk("b", 0, [0.0, 1.0])])
        await store.replace_record("a", [chunk("a", 0, [1.0, 0.0], title="new")])
        assert await store.count() == 2
        assert [r.passages for r in await records(store)] == [("a passage 0",), ("b passage 0",)]
        await store.delete_record("a")
        await store.delete_record("missing")
        assert [r.record_id for r in await records(store)] == ["b"]
        await store.replace_record("b", [])
        assert await store.count() == 0

    async def test_replace_rejects_foreign_chunks_without_change(
        self, store: AsyncEmbeddingStore
    ) -> None:
        await store.add([chunk("a", 0, [1.0, 0.0])])
        with pytest.raises(ValueError, match=r"chunks\[0\] belongs to record 'b'"):
            await store.replace_record("a", [chunk("b", 0, [1.0, 0.0])])
        assert await store.count() == 1

    async def test_dimension_is_fixed(self, store: AsyncEmbeddingStore) -> None:
        await store.add([chunk("a", 0, [1.0, 0.0])])
        with pytest.raises(EmbeddingDimensionError, match="dimension 3"):
            await store.add([chunk("b", 0, [1.0, 0.0, 0.0])])
        with pytest.raises(EmbeddingDimensionError, match="dimension 3"):
            await store.query([1.0, 0.0, 0.0])
        assert await store.count() == 1

    async def test_bad_query_vectors(self, store: AsyncEmbeddingStore) -> None:
        with pytest.raises(ValueError, match="all zeros"):
            await store.query([0.0, 0.0])
        with pytest.raises(ValueError, match="element 1 is not finite"):
            await store.query([1.0, math.nan])
        with pytest.raises(ValueError, match="empty"):
            await store.query([])

    async def test_iter_records_orders_and_pages(self, store: AsyncEmbeddingStore) -> None:
        ids = [f"r{n:02d}" for n in range(7)]
        for rid in reversed(ids):
            await store.add(
                [chunk(rid, 1, [1.0, 0.0], title=rid), chunk(rid, 0, [0.0, 1.0], title=rid)]
            )
        got = await records(store, batch_size=3)
        assert [r.record_id for r in got] == ids
        assert got[0].passages == ("r00 passage 0", "r00 passage 1")
        assert got[0].metadata == {"title": "r00"}
        with pytest.raises(ValueError, match="batch_size"):
            await records(store, batch_size=0)

    async def test_metadata_round_trips_as_json(self, store: AsyncEmbeddingStore) -> None:
        metadata = {"title": "Müller ∑", "source_url": "https://x.org/1", "n": 3}
        await store.add([EmbeddingChunk("a", 0, "text", [1.0, 2.0], metadata)])
        (hit,) = await store.query([1.0, 2.0])
        assert hit.metadata == metadata
        hit.metadata["title"] = "mutated"
        (again,) = await store.query([1.0, 2.0])
        assert again.metadata["title"] == "Müller ∑"
