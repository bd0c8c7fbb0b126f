"""Opening ``klea-serve``'s stores, models and search index: :func:`open_service`.

What a ``stat`` can check (:func:`check_search_files`) is checked before anything loads;
:func:`open_service` then loads every store and model of the options, finds the vector
stores that serve the search index's semantic leg, and answers the
:class:`~klea_utils.stores.serve.operations.klea_service.KleaService` over them.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.pipeline import KleaPipeline
from klea_utils.stores.serve.core.options import ServeOptions
from klea_utils.stores.serve.operations.klea_service import KleaService
from klea_utils.stores.serve.papers.opening import open_catalogue
from klea_utils.stores.serve.search.backend import SearchBackend

__all__ = ["check_search_files", "domain_vector_stores", "open_service", "search_index_problem"]


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
    catalogue = open_catalogue(config)
    counts = catalogue.passage_counts()
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
    return KleaService(options, pipeline, catalogue, search)
