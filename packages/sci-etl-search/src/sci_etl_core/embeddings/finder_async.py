"""Find the stored passages and articles closest in meaning to a text."""

from __future__ import annotations

from collections.abc import Sequence

from sci_etl_core.embeddings.async_base import AsyncEmbedder
from sci_etl_core.embeddings.store_base import AsyncEmbeddingStore, SearchHit
from sci_etl_core.exceptions import EmbeddingError

__all__ = ["AsyncSimilarArticleFinder", "best_chunk_per_record"]


def best_chunk_per_record(hits: Sequence[SearchHit], limit: int) -> list[SearchHit]:
    """Keep each record's first (best) hit of ``hits``, up to ``limit`` records, in order."""
    seen: set[str] = set()
    best: list[SearchHit] = []
    for hit in hits:
        if hit.record_id in seen:
            continue
        seen.add(hit.record_id)
        best.append(hit)
        if len(best) >= limit:
            break
    return best


def _check_positive(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")


class AsyncSimilarArticleFinder:
    """Embeds a text and searches the vector memory with it.

    The finder borrows ``embedder`` and ``store`` and never closes them. Failures to
    embed raise :class:`~sci_etl_core.exceptions.EmbeddingError`; failures of the store
    raise :class:`~sci_etl_core.exceptions.EmbeddingStoreError`.
    """

    def __init__(self, embedder: AsyncEmbedder, store: AsyncEmbeddingStore) -> None:
        self.embedder = embedder
        self.store = store

    async def embed_text(self, text: str) -> list[float]:
        """Embed ``text`` alone, checking the embedder returned exactly one vector.

        Raises:
            ValueError: ``text`` is blank.
            EmbeddingError: The embedder failed or returned a wrong number of vectors.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise ValueError("text must not be blank")
        vectors = await self.embedder.embed([text])
        if len(vectors) != 1:
            raise EmbeddingError(f"embedder returned {len(vectors)} vectors for 1 text")
        return vectors[0]

    async def find_similar_chunks(
        self,
        text: str,
        top_k: int = 5,
        *,
        min_score: float = -1.0,
        exclude_record_id: str | None = None,
    ) -> list[SearchHit]:
        """Return the ``top_k`` stored chunks most similar to ``text``, best first."""
        vector = await self.embed_text(text)
        return await self.store.query(
            vector, top_k=top_k, min_score=min_score, exclude_record_id=exclude_record_id
        )

    async def find_best_chunks(
        self,
        vector: Sequence[float],
        top_k: int = 5,
        *,
        chunk_pool_factor: int = 5,
        min_score: float = -1.0,
        exclude_record_id: str | None = None,
    ) -> list[SearchHit]:
        """Return each record's best chunk for an embedded ``vector``, up to ``top_k`` records.

        The store is asked for ``top_k * chunk_pool_factor`` chunks, so fewer than
        ``top_k`` records come back when a few records hold most of the best chunks. A
        store whose :attr:`~AsyncEmbeddingStore.records_are_chunks` is ``True`` holds one
        chunk per record, so it is asked for ``top_k`` chunks alone: the extra chunks
        could not name another record, and fetching them is most of a semantic query's
        cost on a large store.

        Raises:
            ValueError: ``top_k`` or ``chunk_pool_factor`` is below 1.
        """
        _check_positive("top_k", top_k)
        _check_positive("chunk_pool_factor", chunk_pool_factor)
        factor = 1 if self.store.records_are_chunks is True else chunk_pool_factor
        hits = await self.store.query(
            vector,
            top_k=top_k * factor,
            min_score=min_score,
            exclude_record_id=exclude_record_id,
        )
        return best_chunk_per_record(hits, top_k)

    async def find_similar_articles(
        self,
        text: str,
        top_k: int = 5,
        *,
        chunk_pool_factor: int = 5,
        min_score: float = -1.0,
        exclude_record_id: str | None = None,
    ) -> list[SearchHit]:
        """Return the ``top_k`` records most similar to ``text``, each as its best chunk.

        Raises:
            ValueError: ``text`` is blank, or ``top_k`` or ``chunk_pool_factor`` is below 1.
            EmbeddingError: ``text`` could not be embedded.
        """
        _check_positive("top_k", top_k)
        _check_positive("chunk_pool_factor", chunk_pool_factor)
        vector = await self.embed_text(text)
        return await self.find_best_chunks(
            vector,
            top_k,
            chunk_pool_factor=chunk_pool_factor,
            min_score=min_score,
            exclude_record_id=exclude_record_id,
        )
