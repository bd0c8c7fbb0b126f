"""The catalogue of a stores configuration: its paper sources, domain by domain.

A domain's papers come from its ``fts5:`` BM25 stores when it has any (SQL on the
index), else from its pickled corpora (already in memory for retrieval: their chunks are
reused, not read again), else from its vector stores (metadata reads on Chroma, Qdrant
or PGVector). So ``get_document`` and ``facets`` work with vector stores only, and no
configuration copies the library into the service's memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from klea_utils.stores.config import RetrieverConfig, StoreInfo
from klea_utils.stores.retrieval.bm25 import FTS5_SCHEME, read_corpus
from klea_utils.stores.serve.papers.catalogue import PaperCatalogue
from klea_utils.stores.serve.papers.sources import Fts5PaperSource, MemoryPaperSource, PaperSource
from klea_utils.stores.serve.papers.vector_sources import vector_paper_source

__all__ = ["open_catalogue"]


def _bm25_source(store: StoreInfo) -> PaperSource | None:
    if store.path.startswith(FTS5_SCHEME):
        location = store.path[len(FTS5_SCHEME) :]
        return Fts5PaperSource(location) if Path(location).is_file() else None
    loaded: Any = store.loaded_object
    if loaded is not None and hasattr(loaded, "docs"):
        return MemoryPaperSource(loaded.docs)
    return MemoryPaperSource(read_corpus(store.path)) if Path(store.path).is_file() else None


def open_catalogue(config: RetrieverConfig) -> PaperCatalogue:
    """The papers of every domain of ``config``, read from its stores on each call.

    Vector stores must be loaded already (``KleaPipeline.load``); a store whose file is
    missing is skipped (retrieval reports it already).
    """
    sources: list[PaperSource] = []
    seen: set[str] = set()
    for domain in config.domains.values():
        fts5 = [s for s in domain.bm25_stores if s.path.startswith(FTS5_SCHEME)]
        chosen = fts5 or domain.bm25_stores
        for store in chosen:
            if store.path not in seen:
                seen.add(store.path)
                source = _bm25_source(store)
                if source is not None:
                    sources.append(source)
        if chosen:
            continue
        for vector_store in domain.vector_stores:
            key = f"{vector_store.path}#{vector_store.name}"
            if key not in seen and vector_store.loaded_object is not None:
                seen.add(key)
                sources.append(vector_paper_source(vector_store.path, vector_store.loaded_object))
    return PaperCatalogue(sources)
