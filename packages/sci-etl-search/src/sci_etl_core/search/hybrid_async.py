"""Hybrid search: a lexical leg on the text index, a semantic leg on the vector memory, fused."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from sci_etl_core.exceptions import EmbeddingError, SearchQueryError
from sci_etl_core.search.filters import SearchFilter, validate_filters
from sci_etl_core.search.fusion import (
    FusedHit,
    FusionParams,
    FusionStrategy,
    reciprocal_rank_fusion,
)

if TYPE_CHECKING:
    from sci_etl_core.embeddings.finder_async import AsyncSimilarArticleFinder
    from sci_etl_core.embeddings.store_base import SearchHit
    from sci_etl_core.search.query import Node
    from sci_etl_core.search.store_base import AsyncTextSearchStore, TextHit
    from sci_etl_core.search.tokenize import Tokenizer

__all__ = ["SEARCH_MODES", "AsyncHybridSearcher", "HybridParams", "SearchMode", "SearchOutcome"]

SearchMode = Literal["lexical", "semantic", "hybrid"]
"""Which retrieval legs :meth:`AsyncHybridSearcher.search` runs."""

SEARCH_MODES: tuple[SearchMode, ...] = get_args(SearchMode)
"""Every :data:`SearchMode`, for checking a mode that arrives as plain text."""

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class HybridParams:
    """How many candidates each retrieval leg fetches before fusion.

    Each leg fetches ``candidate_pool`` records, and never fewer than the ``top_k``
    asked for, so a record ranked #40 lexically and #3 semantically can still reach the
    top 20.

    The semantic leg asks the vector memory for ``candidate_pool`` x
    ``chunk_pool_factor`` chunks and keeps each record's best chunk. It yields
    ``candidate_pool`` distinct records whenever those chunks span at least that many
    records, that is, when records contribute on average no more than
    ``chunk_pool_factor`` chunks to that prefix of the chunk ranking. When a few long
    records dominate the top chunks, fewer records are returned. The searcher does not
    retry, because a retry would call the embedder again for the same text. Raise the
    factor for corpora of long documents.

    Raises:
        ValueError: ``candidate_pool`` or ``chunk_pool_factor`` is not an int >= 1.
    """

    candidate_pool: int = 100
    chunk_pool_factor: int = 5

    def __post_init__(self) -> None:
        for name in ("candidate_pool", "chunk_pool_factor"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"HybridParams.{name} must be an int >= 1, got {value!r}")


@dataclass(frozen=True)
class SearchOutcome:
    """The fused hits of one search, and which retrieval legs did not contribute.

    ``degraded`` names the legs that were attempted and failed, such as ``"semantic"``
    when the embedding service was unreachable. ``skipped`` names the legs that had
    nothing to run, such as a semantic leg without a finder or for a query made only of
    prefix terms. A UI words the two differently.
    """

    hits: list[FusedHit] = field(default_factory=list)
    degraded: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()


class AsyncHybridSearcher:
    """Search the corpus by Boolean query, by meaning, or by both at once.

    ``mode="lexical"`` ranks documents by BM25 in the text index. ``mode="semantic"``
    ranks whole articles by their best-matching chunk in the vector memory.
    ``mode="hybrid"`` runs both at once and fuses the two rankings with ``strategy``, by
    default reciprocal rank fusion.

    The query is parsed once, before any I/O. The semantic leg embeds
    :func:`~sci_etl_core.search.query.semantic_text` of the query, so operators, field
    scopes, negated terms, and prefix terms never reach the embedder.

    Metadata filters apply to both legs: the lexical leg filters inside the index, and
    the semantic leg's candidates are narrowed to the records passing the filters before
    fusion, so a filtered-out record never takes a slot.

    A hybrid search whose semantic leg raises
    :class:`~sci_etl_core.exceptions.EmbeddingError` falls back to the lexical results,
    logs the failure, and reports it in :attr:`SearchOutcome.degraded`. A lexical failure
    is never swallowed, because it means the local index is broken.

    The searcher never closes; the caller that constructed the stores closes them.
    """

    def __init__(
        self,
        text_store: AsyncTextSearchStore,
        finder: AsyncSimilarArticleFinder | None = None,
        *,
        strategy: FusionStrategy = reciprocal_rank_fusion,
        params: HybridParams | None = None,
        fusion: FusionParams | None = None,
        logger: Callable[[str], None] | None = None,
    ) -> None:
        """Configure the searcher; ``finder`` may be ``None`` to search the text index alone.

        Without a finder, a hybrid search runs the lexical leg alone and reports the
        semantic leg in :attr:`SearchOutcome.skipped`, not in ``degraded``, and a
        semantic search raises :class:`~sci_etl_core.exceptions.SearchQueryError`.

        ``fusion.weights``, when given, weighs the lexical and the semantic list, in that
        order. ``logger`` receives the line logged when a hybrid search falls back to
        lexical results.

        Raises:
            ValueError: ``fusion.weights`` does not hold exactly two weights, or
                ``strategy`` is not callable.
        """
        if not callable(strategy):
            raise ValueError(f"strategy must be callable, got {strategy!r}")
        fusion = fusion if fusion is not None else FusionParams()
        if fusion.weights is not None and len(fusion.weights) != 2:
            raise ValueError(
                "fusion.weights must hold two weights (lexical, semantic), "
                f"got {len(fusion.weights)}"
            )
        self.text_store = text_store
        self.finder = finder
        self.strategy = strategy
        self.params = params if params is not None else HybridParams()
        self.fusion = fusion
        self._log = logger if logger is not None else _LOG.warning

    async def search(
        self,
        query: str,
        top_k: int = 20,
        *,
        mode: SearchMode = "hybrid",
        filters: Sequence[SearchFilter] = (),
    ) -> SearchOutcome:
        """Return the ``top_k`` best records for ``query``, fused across the legs ``mode`` runs.

        Every error below except the last two is raised before any I/O. A ``top_k``
        below 1 returns no hits.

        A hit the lexical leg found carries its snippets and highlights. A hit only the
        semantic leg found takes its title and metadata from the text index, or from its
        best chunk's metadata when the index does not hold the record, and its snippet
        from that chunk, with the query's words highlighted where they occur in it
        (:func:`~sci_etl_core.search.snippets.passage_snippet`).

        Raises:
            ValueError: ``mode`` is not one of :data:`SEARCH_MODES`, ``top_k`` is not an
                int, two filters share a key, or a filter's key is not a facet key of the
                text store.
            SearchQueryError: The query is malformed or cannot be ranked, such as a pure
                negation; or ``mode="semantic"`` without a finder.
            EmbeddingError: The semantic leg failed in ``mode="semantic"``.
            SearchStoreError: The text index cannot be read.
        """
        from sci_etl_core.search.parser import parse_ranked_query, parse_semantic_query

        if mode not in SEARCH_MODES:
            raise ValueError(f"mode must be one of {SEARCH_MODES}, got {mode!r}")
        if isinstance(top_k, bool) or not isinstance(top_k, int):
            raise ValueError(f"top_k must be an int, got {top_k!r}")
        filters = tuple(filters)
        validate_filters(filters, self.text_store.facet_keys)
        if mode == "semantic" and self.finder is None:
            raise SearchQueryError("a semantic search needs a vector memory; none is configured")
        if mode == "lexical":
            node, text = parse_ranked_query(query), ""
        else:
            node, text = parse_semantic_query(query)
        if top_k < 1:
            return SearchOutcome()

        pool = max(self.params.candidate_pool, top_k)
        skipped: list[str] = []
        run_semantic = mode != "lexical"
        if run_semantic and (self.finder is None or not text.strip()):
            skipped.append("semantic")
            run_semantic = False
        if mode == "semantic" and not run_semantic:
            return SearchOutcome(skipped=tuple(skipped))

        lexical_task: Awaitable[list[TextHit]] = (
            self.text_store.search(node, limit=pool, filters=filters)
            if mode != "semantic"
            else _nothing()
        )
        semantic_task: Awaitable[list[SearchHit]] = (
            self._semantic(text, pool, filters) if run_semantic else _nothing()
        )
        outcomes = await asyncio.gather(lexical_task, semantic_task, return_exceptions=True)
        lexical_outcome, semantic_outcome = outcomes
        if isinstance(lexical_outcome, BaseException):
            raise lexical_outcome
        degraded: list[str] = []
        semantic_hits: list[SearchHit] = []
        if isinstance(semantic_outcome, BaseException):
            if mode != "hybrid" or not isinstance(semantic_outcome, EmbeddingError):
                raise semantic_outcome
            self._log(
                f"hybrid search fell back to lexical results: the semantic leg failed: "
                f"{semantic_outcome}"
            )
            degraded.append("semantic")
        else:
            semantic_hits = semantic_outcome
        hits = await self._assemble(mode, node, lexical_outcome, semantic_hits, top_k)
        return SearchOutcome(hits, tuple(degraded), tuple(skipped))

    async def _semantic(
        self, text: str, pool: int, filters: tuple[SearchFilter, ...]
    ) -> list[SearchHit]:
        assert self.finder is not None
        hits = await self.finder.find_similar_articles(
            text, pool, chunk_pool_factor=self.params.chunk_pool_factor
        )
        if filters and hits:
            allowed = await self.text_store.filter_ids(None, filters)
            hits = [hit for hit in hits if hit.record_id in allowed]
        return hits

    async def _assemble(
        self,
        mode: SearchMode,
        node: Node,
        lexical: list[TextHit],
        semantic: list[SearchHit],
        top_k: int,
    ) -> list[FusedHit]:
        lexical_rank = {hit.record_id: rank for rank, hit in enumerate(lexical, start=1)}
        semantic_rank = {hit.record_id: rank for rank, hit in enumerate(semantic, start=1)}
        if mode == "lexical":
            ranking = [(hit.record_id, hit.score) for hit in lexical]
        elif mode == "semantic":
            ranking = [(hit.record_id, hit.score) for hit in semantic]
        else:
            ranking = self.strategy(
                [
                    [(hit.record_id, hit.score) for hit in lexical],
                    [(hit.record_id, hit.score) for hit in semantic],
                ],
                self.fusion,
            )
        ranking = ranking[:top_k]
        by_lexical = {hit.record_id: hit for hit in lexical}
        by_semantic = {hit.record_id: hit for hit in semantic}
        missing = [rid for rid, _ in ranking if rid not in by_lexical]
        documents = await self.text_store.get_documents(missing) if missing else {}
        tokenizer = self.text_store.tokenizer
        return [
            _fused(
                node,
                tokenizer,
                record_id,
                score,
                lexical_rank.get(record_id),
                semantic_rank.get(record_id),
                by_lexical.get(record_id),
                by_semantic.get(record_id),
                documents.get(record_id),
            )
            for record_id, score in ranking
        ]


async def _nothing() -> list[Any]:
    return []


def _fused(
    node: Node,
    tokenizer: Tokenizer,
    record_id: str,
    score: float,
    lexical_rank: int | None,
    semantic_rank: int | None,
    lexical: TextHit | None,
    semantic: SearchHit | None,
    document: object | None,
) -> FusedHit:
    from sci_etl_core.search.snippets import passage_snippet
    from sci_etl_core.search.store_base import SearchDocument

    if lexical is not None:
        return FusedHit(
            record_id,
            score,
            lexical_rank,
            semantic_rank,
            snippet=lexical.snippet,
            highlights=lexical.highlights,
            metadata=dict(lexical.metadata),
            title=lexical.title,
            snippets=lexical.snippets,
        )
    assert semantic is not None
    snippet = passage_snippet(node, semantic.text, "body", tokenizer=tokenizer)
    if isinstance(document, SearchDocument):
        title, metadata = document.title, dict(document.metadata)
    else:
        title = str(semantic.metadata.get("title", "") or "")
        metadata = {k: v for k, v in semantic.metadata.items() if k != "title"}
    return FusedHit(
        record_id,
        score,
        lexical_rank,
        semantic_rank,
        snippet=snippet.text,
        highlights=snippet.highlights,
        metadata=metadata,
        title=title,
        snippets=(snippet,),
    )
