"""A LangChain ``BaseRetriever`` over the whole klea pipeline.

:class:`KleaRetriever` answers ``invoke(query)`` / ``await ainvoke(query)`` with the
fused, re-ranked documents of one domain (see :mod:`klea_utils.stores.pipeline`), so an
agent framework that takes a LangChain retriever needs no glue::

    retriever = KleaRetriever.from_config(config, domain="papers", k=5)
    docs = retriever.invoke("How do chaperones help proteins fold?")

Each document's metadata holds its final score under ``score`` and the per-store scores
under ``_source_scores``. With ``context="neighbours"`` (or ``"section"``) each document
is widened with the chunks around it in its section (see
:mod:`klea_utils.stores._retrieval.context`). The async path runs the pipeline in a
worker thread, so it does not block the event loop. Legs that failed are logged (see
``PipelineResult.notes``).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.pipeline import KleaPipeline, PipelineResult
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, model_validator

__all__ = ["KleaRetriever"]


class KleaRetriever(BaseRetriever):
    """Retrieve from one domain's stores through a shared :class:`KleaPipeline`.

    Attributes:
        pipeline: The loaded (or lazily loading) pipeline; several retrievers may share it.
        domain: The domain to search; may be left out when the configuration has one.
        k: Hits per store and documents returned.
        metadata_filter: A filter in the DSL applied to every query, or ``None``.
        context: ``off``, ``neighbours`` or ``section``: widen each hit with the chunks
            around it in its section; ``None`` keeps the pipeline's setting.
        context_tokens: Token budget of a widened passage; ``None``: the pipeline's.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    pipeline: KleaPipeline
    domain: str = ""
    k: int = Field(default=5, ge=1)
    metadata_filter: dict[str, Any] | None = None
    context: Literal["off", "neighbours", "section"] | None = None
    context_tokens: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _known_domain(self) -> KleaRetriever:
        domains = self.pipeline.domains
        if not self.domain:
            if len(domains) != 1:
                raise ValueError(
                    f"name a domain: the configuration has {len(domains)} "
                    f"({', '.join(sorted(domains)) or 'none'})"
                )
            self.domain = domains[0]
        elif self.domain not in domains:
            raise ValueError(
                f"unknown domain {self.domain!r}; configured domains: "
                f"{', '.join(sorted(domains)) or 'none'}"
            )
        return self

    @classmethod
    def from_config(
        cls,
        config: RetrieverConfig,
        *,
        domain: str = "",
        k: int = 5,
        metadata_filter: dict[str, Any] | None = None,
        **pipeline_options: Any,
    ) -> KleaRetriever:
        """Build the pipeline for ``config`` (``pipeline_options`` go to ``KleaPipeline``)."""
        pipeline = KleaPipeline(config, k=k, **pipeline_options)
        return cls(pipeline=pipeline, domain=domain, k=k, metadata_filter=metadata_filter)

    def _retrieve(self, query: str) -> PipelineResult:
        return self.pipeline.retrieve(
            self.domain,
            query,
            metadata_filter=self.metadata_filter,
            k=self.k,
            limit=self.k,
            context=self.context,
            context_tokens=self.context_tokens,
        )

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        result = self._retrieve(query)
        for note in result.notes:
            run_manager.on_text(f"degraded: {note}\n")
        return result.documents()

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        result = await asyncio.to_thread(self._retrieve, query)
        for note in result.notes:
            await run_manager.on_text(f"degraded: {note}\n")
        return result.documents()
