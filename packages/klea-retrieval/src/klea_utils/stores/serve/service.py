"""The four operations ``klea-serve`` offers, shared by its MCP tools and its HTTP API.

:class:`KleaService` holds what :func:`open_service` loaded once at start-up: the
retrieval pipeline (every store and model opened), the library of papers, and the
optional sci-etl-search index with its vector memory. Its coroutines run blocking work
in worker threads, so concurrent requests never block the event loop, and they answer
plain JSON-ready dictionaries.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klea_utils.stores._retrieval.context import DEFAULT_CONTEXT_TOKENS
from klea_utils.stores.config import FilterFieldInfo, RetrieverConfig
from klea_utils.stores.embedding_models import DEFAULT_EMBEDDING_MODEL
from klea_utils.stores.pipeline import KleaPipeline
from klea_utils.stores.query_schema import build_retrieval_query_schema
from klea_utils.stores.serve.grouping import group_by_paper, passages_to_fetch
from klea_utils.stores.serve.library import FACET_KEYS, display_metadata
from klea_utils.stores.serve.limits import ServeLimits
from klea_utils.stores.serve.paper_sources import StoreLibrary, check_facet_keys
from klea_utils.stores.serve.papers import open_papers
from klea_utils.stores.serve.public_errors import public_text
from klea_utils.stores.serve.search import SearchBackend, SearchFilters
from klea_utils.stores.utils import serialize_reference_material, truncate_reference_material
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from pydantic import BaseModel

__all__ = [
    "DEFAULT_FILTER_FIELDS",
    "DocumentNotFoundError",
    "KleaService",
    "ServeOptions",
    "open_service",
]

_log = logging.getLogger(__name__)

DEFAULT_FILTER_FIELDS = (
    FilterFieldInfo(name="year", description="Publication year.", value_type="int"),
    FilterFieldInfo(
        name="authors", description="Author names; every one must be listed.", value_type="list"
    ),
    FilterFieldInfo(name="journal", description="Journal or venue name.", value_type="string"),
    FilterFieldInfo(name="file_name", description="Source file name.", value_type="string"),
    FilterFieldInfo(
        name="keywords", description="Keywords; every one must match.", value_type="list"
    ),
)
"""Filter fields every domain offers; a domain's own ``filter_fields`` override by name."""

MAX_K = 50
"""Largest ``k`` and ``limit`` a request may ask for."""


class DocumentNotFoundError(LookupError):
    """No paper with the requested file name is in the library."""


@dataclass(frozen=True)
class ServeOptions:
    """What ``klea-serve`` loads: stores, models, the search index and vector memory."""

    config: RetrieverConfig
    embedding_model: str | Embeddings = DEFAULT_EMBEDDING_MODEL
    rerank: str | None = None
    k: int = 5
    fts5_index: Path | None = None
    vectors: Path | None = None
    leg_timeout: float | None = 20.0
    max_chars: int = 12_000
    context: str | None = None
    """How ``retrieve`` widens passages unless a request says (``None``: the pipeline's
    default, ``neighbours``)."""
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    """Token budget of a widened passage."""
    limits: ServeLimits = field(default_factory=ServeLimits)
    """What one request may ask: body size, query length, list lengths, concurrency."""


def filter_fields(config: RetrieverConfig) -> list[FilterFieldInfo]:
    """The default filter fields, overridden by the domains' configured ones."""
    fields = {f.name: f for f in DEFAULT_FILTER_FIELDS}
    for domain in config.domains.values():
        for f in domain.filter_fields:
            fields[f.name] = f
    return list(fields.values())


def _passage(domain: str, doc: Document, score: float) -> dict[str, Any]:
    return {
        "id": doc.id,
        "domain": domain,
        **display_metadata(doc.metadata),
        "score": score,
        "text": doc.page_content,
    }


class KleaService:
    """retrieve / search / get_document / facets over what was loaded once."""

    def __init__(
        self,
        options: ServeOptions,
        pipeline: KleaPipeline,
        library: StoreLibrary,
        search: SearchBackend | None,
    ) -> None:
        self.options = options
        self.pipeline = pipeline
        self.library = library
        self.search_backend = search
        self.started = time.time()
        schema = build_retrieval_query_schema(filter_fields(options.config))
        self.query_schema: type[BaseModel] = schema

    # -- retrieve ----------------------------------------------------------------------

    def to_metadata_filter(self, values: dict[str, Any] | None) -> dict[str, Any] | None:
        """The DSL filter for typed filter ``values`` (the strict query schema's fields).

        Raises:
            ValueError: When a value does not fit its field (pydantic's message).
        """
        if not values:
            return None
        model: Any = self.query_schema.model_validate({"search_query": "", **values})
        result: dict[str, Any] | None = model.to_metadata_filter()
        return result

    async def retrieve(
        self,
        query: str,
        *,
        k: int = 5,
        filter: dict[str, Any] | None = None,
        domains: Sequence[str] | None = None,
        context: str | None = None,
        context_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The fused klea pipeline: passages, notes of degraded legs, and references.

        ``context`` (``off``, ``neighbours``, ``section``; default: the pipeline's) widens
        each passage with the chunks around it in its section, up to ``context_tokens``.

        Raises:
            ValueError: Blank query, ``k`` out of range, unknown domain, bad filter, bad
                context settings.
        """
        if not query.strip():
            raise ValueError("query must not be blank")
        self.options.limits.check_query(query)
        if not 1 <= k <= MAX_K:
            raise ValueError(f"k must be between 1 and {MAX_K}, got {k}")
        metadata_filter = self.to_metadata_filter(filter)
        results = await asyncio.to_thread(
            self.pipeline.retrieve_all,
            query,
            domains=list(domains) if domains else None,
            metadata_filter=metadata_filter,
            k=k,
            limit=k,
            context=context,
            context_tokens=context_tokens,
        )
        passages = [
            _passage(domain, doc, score)
            for domain, result in results.items()
            for doc, score in result.hits
        ]
        notes = [f"{d}: {n}" for d, r in results.items() for n in r.notes]
        for note in notes:  # the whole text for the operator; the caller's is redacted
            _log.warning("retrieve: %s", note)
        material = {d: r.hits for d, r in results.items()}
        material = truncate_reference_material(material, self.options.max_chars)
        return {
            "query": query,
            "filter": metadata_filter,
            "passages": passages,
            "notes": [public_text(note) for note in notes],
            "references": serialize_reference_material(material),
        }

    # -- search ------------------------------------------------------------------------

    async def search(
        self,
        query: str,
        *,
        mode: str | None = None,
        limit: int = 10,
        filters: SearchFilters | None = None,
        any_words: bool | None = None,
        group: str = "passage",
    ) -> dict[str, Any]:
        """sci-etl-search Boolean / hybrid search with snippets, or the located error.

        ``group="passage"`` answers ``limit`` passage ``hits``; ``group="paper"`` answers
        ``limit`` ``papers`` (:func:`~klea_utils.stores.serve.grouping.group_by_paper`),
        each with its best passages, ranked by its best passage, and ``hits`` empty.

        Raises:
            LookupError: When no FTS5 index is served.
            ValueError: Bad mode, limit, group, or a filter the index cannot apply.
        """
        if self.search_backend is None:
            raise LookupError("no FTS5 index is served: start klea-serve with --fts5-index")
        self.options.limits.check_query(query)
        if not 1 <= limit <= MAX_K:
            raise ValueError(f"limit must be between 1 and {MAX_K}, got {limit}")
        if group not in ("passage", "paper"):
            raise ValueError(f"group must be 'passage' or 'paper', got {group!r}")
        fetch = passages_to_fetch(limit) if group == "paper" else limit
        result = await self.search_backend.search(
            query, mode=mode, limit=fetch, filters=filters, any_words=any_words
        )
        result["group"] = group
        if group == "paper":
            result["papers"] = group_by_paper(result["hits"], limit)
            result["hits"] = []
        return result

    async def graph(self, record_ids: Sequence[str]) -> dict[str, Any]:
        """Edges by meaning between search results (empty without a vector memory)."""
        if self.search_backend is None:
            return {"nodes": [], "edges": [], "available": False}
        return await self.search_backend.graph(record_ids[:MAX_K])

    # -- documents and facets ----------------------------------------------------------

    async def get_document(self, file_name: str) -> dict[str, Any]:
        """A paper's metadata and its passages in order, read from the stores.

        Raises:
            DocumentNotFoundError: When the library has no such file.
        """
        paper = await asyncio.to_thread(self.library.paper, file_name)
        if paper is None:
            raise DocumentNotFoundError(
                f"no paper {file_name!r} in the library (GET /api/facets counts its papers)"
            )
        return {
            **paper.summary(),
            "passages": [
                {
                    "id": d.id,
                    "headings": display_metadata(d.metadata)["headings"],
                    "pages": display_metadata(d.metadata)["pages"],
                    "text": d.page_content,
                }
                for d in paper.passages
            ],
        }

    async def facets(
        self, keys: Sequence[str] | None = None, query: str | None = None
    ) -> dict[str, Any]:
        """Papers per year, author, journal and tag; with ``query``, over its matches.

        The matches come from the FTS5 index when one is served, else from retrieval.
        The counts are read from the stores on each call.

        Raises:
            ValueError: Unknown key or a malformed query (the message locates it).
        """
        keys = list(keys) if keys else list(FACET_KEYS)
        check_facet_keys(keys)  # before any search
        if query:
            self.options.limits.check_query(query)
        files: list[str] | None = None
        if query and query.strip():
            if self.search_backend is not None:
                files = await self.search_backend.matching_files(query)
            else:
                found = await self.retrieve(query, k=MAX_K)
                files = [p["file"] for p in found["passages"] if p["file"]]
        papers, counts = await asyncio.to_thread(self.library.count_facets, keys, files)
        return {
            "query": query,
            "papers": papers,
            "facets": {
                k: [{"value": v, "count": c} for v, c in pairs] for k, pairs in counts.items()
            },
        }

    async def health(self) -> dict[str, Any]:
        """What is loaded, for ``/api/health``."""
        records = await self.search_backend.count() if self.search_backend else None
        counts = await asyncio.to_thread(self.library.passage_counts)
        return {
            "status": "ok",
            "ready": True,
            "error": None,
            "domains": self.pipeline.domains,
            "papers": len(counts),
            "passages": sum(counts.values()),
            "search_index": self.options.fts5_index.name
            if self.options.fts5_index is not None and self.search_backend
            else None,
            "search_records": records,
            "vectors": self.search_backend is not None and self.search_backend.vectors is not None,
            "uptime_s": round(time.time() - self.started, 1),
        }

    def warm(self) -> None:
        """Do now (blocking) what the first requests would pay for: one retrieval through
        every leg (a vector store's first query reads its index) and every paper's facet
        row; :class:`~klea_utils.stores.serve.startup.StartingService` calls it in its
        thread once the service is serving."""
        self.pipeline.retrieve_all("warm up", k=1, limit=1)
        self.warm_facets()

    def warm_facets(self) -> None:
        """Read every paper's facet row now (blocking), so the first ``facets`` over the
        whole library need not."""
        self.library.count_facets(list(FACET_KEYS))

    async def aclose(self) -> None:
        """Close the search index and stop the pipeline's threads."""
        if self.search_backend is not None:
            await self.search_backend.aclose()
        self.library.close()
        self.pipeline.close()


def _progress(message: str) -> None:
    print(f"klea-serve: {message}", file=sys.stderr, flush=True)


def search_index_problem(path: Path) -> str | None:
    """Why the FTS5 index at ``path`` cannot be searched, or ``None`` when it can."""
    from sci_etl_core.exceptions import SciEtlError
    from sci_etl_core.search.store_sqlite_fts5 import AsyncSqliteFts5Store

    async def count() -> None:
        store = AsyncSqliteFts5Store(path)
        try:
            await store.count()
        finally:
            await store.aclose()

    try:
        asyncio.run(count())
    except SciEtlError as exc:
        return str(exc)
    return None


def domain_vector_stores(config: RetrieverConfig, index: Path) -> tuple[str, list[Any]] | None:
    """The domain whose ``fts5:`` BM25 store is ``index``, with its vector stores' info.

    ``build`` writes a domain's vector store and ``fts5:`` index with the same chunk ids,
    so the index's hybrid search can read that domain's vectors. ``None`` when no domain
    holds ``index`` or the domain has no vector store.
    """
    from klea_utils.stores.store_uri import StoreURI

    wanted = index.expanduser().resolve()
    for name, domain in config.domains.items():
        for store in domain.bm25_stores:
            uri = StoreURI.bm25(store.path)
            if uri.scheme == "fts5" and Path(uri.location).expanduser().resolve() == wanted:
                return (name, list(domain.vector_stores)) if domain.vector_stores else None
    return None


def check_search_files(options: ServeOptions) -> None:
    """Check that the search index and vector memory of ``options`` exist (a ``stat``).

    Raises:
        FileNotFoundError: One is missing; the message names its option and path.
    """
    if options.fts5_index is not None and not options.fts5_index.is_file():
        raise FileNotFoundError(f"--fts5-index {options.fts5_index}: no such file")
    if (
        options.fts5_index is not None
        and options.vectors is not None
        and not options.vectors.is_file()
    ):
        raise FileNotFoundError(f"--vectors {options.vectors}: no such file")


def _open_search(
    options: ServeOptions, pipeline: KleaPipeline, progress: Callable[[str], None]
) -> SearchBackend:
    """The search backend over ``options.fts5_index``, hybrid when vectors are at hand.

    ``--vectors`` names a sci-etl vector memory; without it, the vector stores of the
    domain the index belongs to serve the semantic leg and the graph, read through
    :class:`~klea_utils.stores.sci_etl_vectors.KleaVectorMemory` and queried with the
    pipeline's embedding model (the one the stores were built with).
    """
    from klea_utils.stores.sci_etl_vectors import KleaVectorMemory, LangChainEmbedder

    index = options.fts5_index
    assert index is not None
    check_search_files(options)
    embedder = None
    memory = None
    described = ""
    owner = None if options.vectors is not None else domain_vector_stores(options.config, index)
    if options.vectors is not None:
        described = f" with vector memory {options.vectors.name}"
    elif owner is not None:
        domain, stores = owner
        loaded = [s.loaded_object for s in stores if s.loaded_object is not None]
        if loaded:
            memory = KleaVectorMemory(loaded, label=f"domain {domain!r} vector stores")
            names = ", ".join(s.name for s in stores)
            described = f" with the vectors of domain {domain!r} ({names})"
    if options.vectors is not None or memory is not None:
        pipeline.vector.setup()
        embedder = LangChainEmbedder(pipeline.vector.embeddings)
    search = SearchBackend(index, options.vectors, embedder, memory=memory)
    progress(f"search index {index.name}{described}")
    problem = search_index_problem(index)
    if problem:  # served anyway: search answers 503 naming it, retrieve keeps working
        progress(f"warning: {problem}; search will answer 503 until it is repaired")
    return search


def open_service(
    options: ServeOptions,
    progress: Callable[[str], None] = _progress,
    logger: logging.Logger | None = None,
) -> KleaService:
    """Load every store and model of ``options`` now, reporting each step on ``progress``.

    Raises:
        FileNotFoundError, ValueError, ImportError: A store, index or model cannot load.
    """
    started = time.perf_counter()
    config = options.config
    pipeline = KleaPipeline(
        config,
        embedding_model=options.embedding_model,
        k=options.k,
        rerank=options.rerank,
        leg_timeout=options.leg_timeout,
        logger=logger,
        context=options.context,
        context_tokens=options.context_tokens,
    )
    stores = sum(len(d.vector_stores) + len(d.bm25_stores) for d in config.domains.values())
    progress(f"loading {stores} store(s) in {len(config.domains)} domain(s) ...")
    pipeline.load()
    library = open_papers(config)
    counts = library.passage_counts()
    progress(f"library: {len(counts)} papers, {sum(counts.values())} passages")
    search = None
    if options.fts5_index is not None:
        search = _open_search(options, pipeline, progress)
    if pipeline.vector.embeddings is not None:
        try:  # the first query pays for lazy initialisation otherwise
            pipeline.vector.embeddings.embed_query("warm up")
        except Exception as exc:  # the vector leg will degrade with a note per query
            progress(f"warning: the embedding model failed its first query: {exc}")
    progress(f"ready in {time.perf_counter() - started:.1f} s")
    return KleaService(options, pipeline, library, search)
