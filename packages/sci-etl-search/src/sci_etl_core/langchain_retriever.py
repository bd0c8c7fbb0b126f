"""A LangChain retriever over the hybrid searcher (extra ``sci-etl-search[langchain]``).

:class:`HybridSearchRetriever` wraps an
[`AsyncHybridSearcher`][sci_etl_core.search.hybrid_async.AsyncHybridSearcher] so an agent
framework that takes a LangChain ``BaseRetriever`` can search the corpus without glue::

    retriever = HybridSearchRetriever(searcher=searcher, mode="hybrid", k=5)
    docs = retriever.invoke("how do cells help proteins fold")
    docs = await retriever.ainvoke("how do cells help proteins fold")

This module lives outside ``sci_etl_core.search``, which stays standard-library only;
importing it without LangChain installed raises an ``ImportError`` that names the extra.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence
from typing import Any

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, Field, field_validator
except ImportError as error:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "sci_etl_core.langchain_retriever needs LangChain: pip install 'sci-etl-search[langchain]'"
    ) from error

from sci_etl_core.search.filters import SearchFilter
from sci_etl_core.search.fusion import FusedHit
from sci_etl_core.search.hybrid_async import (
    SEARCH_MODES,
    AsyncHybridSearcher,
    SearchMode,
    SearchOutcome,
)

__all__ = ["HybridSearchRetriever", "hit_document"]

SEARCH_KEYS = (
    "record_id",
    "title",
    "score",
    "lexical_rank",
    "semantic_rank",
    "highlights",
)
"""The metadata keys every returned document carries; they win over record metadata keys."""


def hit_document(hit: FusedHit) -> Document:
    """Turn one fused hit into a LangChain ``Document``.

    ``page_content`` is the hit's snippet: the lexical passage with the query's words, or
    for a record only the semantic leg found, the passage that ranked it. A hit without a
    snippet falls back to its title. ``metadata`` holds the record's own metadata, then
    the keys of ``SEARCH_KEYS`` (``highlights`` as ``[start, end]`` pairs into
    ``page_content``), which replace record metadata of the same name.
    """
    metadata: dict[str, Any] = dict(hit.metadata)
    metadata.update(
        record_id=hit.record_id,
        title=hit.title,
        score=hit.score,
        lexical_rank=hit.lexical_rank,
        semantic_rank=hit.semantic_rank,
        highlights=[list(span) for span in hit.highlights] if hit.snippet else [],
    )
    return Document(page_content=hit.snippet or hit.title, metadata=metadata)


class HybridSearchRetriever(BaseRetriever):
    """Retrieve records with an ``AsyncHybridSearcher``, as LangChain ``Document`` objects.

    Attributes:
        searcher: The searcher to run; the caller owns its stores and closes them.
        mode: ``"lexical"``, ``"semantic"`` or ``"hybrid"`` (see ``SearchMode``).
        filters: Metadata filters applied to every query.
        k: How many documents to return, at most.

    ``invoke`` runs the search on an event loop of its own (in a helper thread when the
    calling thread already runs a loop); ``ainvoke`` awaits it on the caller's loop.
    Legs that failed or had nothing to run are reported to the callbacks with
    ``on_text``. Errors of the search (a malformed query, an unknown filter key, a
    semantic search without a vector memory) propagate unchanged.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    searcher: AsyncHybridSearcher
    mode: SearchMode = "hybrid"
    filters: tuple[SearchFilter, ...] = ()
    k: int = Field(default=4, ge=1)

    @field_validator("mode")
    @classmethod
    def _known_mode(cls, mode: str) -> str:
        if mode not in SEARCH_MODES:
            raise ValueError(f"mode must be one of {SEARCH_MODES}, got {mode!r}")
        return mode

    @field_validator("filters", mode="before")
    @classmethod
    def _filters_tuple(cls, filters: Sequence[SearchFilter]) -> tuple[SearchFilter, ...]:
        return tuple(filters)

    async def _search(self, query: str) -> SearchOutcome:
        return await self.searcher.search(query, self.k, mode=self.mode, filters=self.filters)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        outcome = _run_on_own_loop(self, query)
        for note in _notes(outcome):
            run_manager.on_text(note)
        return [hit_document(hit) for hit in outcome.hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        outcome = await self._search(query)
        for note in _notes(outcome):
            await run_manager.on_text(note)
        return [hit_document(hit) for hit in outcome.hits]


def _run_on_own_loop(retriever: HybridSearchRetriever, query: str) -> SearchOutcome:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(retriever._search(query))
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, retriever._search(query)).result()


def _notes(outcome: SearchOutcome) -> list[str]:
    notes = [f"degraded: the {leg} leg failed\n" for leg in outcome.degraded]
    notes += [f"skipped: the {leg} leg had nothing to run\n" for leg in outcome.skipped]
    return notes
