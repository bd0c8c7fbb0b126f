"""Papers grouped in memory from chunk documents: :class:`Library`.

:class:`Library` groups chunk documents by ``file_name`` and orders each paper's passages
by chunk number. klea-serve holds no such copy of the whole library: it reads papers from
the stores on each call (:mod:`klea_utils.stores.serve.papers.catalogue`) and groups one
paper's chunks, or a pickled corpus already in memory, with it. :func:`load_library`
reads the chunks of every BM25 store of a configuration (pickled corpora and ``fts5:``
indexes hold every chunk with its metadata) into one :class:`Library`, for callers that
want the copy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.retrieval.bm25 import FTS5_SCHEME, read_corpus
from klea_utils.stores.serve.papers.paper import Paper
from langchain_core.documents import Document

__all__ = ["Library", "load_library"]


def _chunk_number(doc: Document, fallback: int) -> tuple[int, int]:
    index = doc.metadata.get("chunk_index")
    if isinstance(index, int) and not isinstance(index, bool):
        return (index, fallback)
    _, _, tail = (doc.id or "").rpartition(":")
    return (int(tail), fallback) if tail.isdigit() else (fallback, fallback)


class Library:
    """Papers by file name, built from chunk documents."""

    def __init__(self, documents: Iterable[Document]) -> None:
        grouped: dict[str, dict[str, tuple[tuple[int, int], Document]]] = {}
        for position, doc in enumerate(documents):
            name = doc.metadata.get("file_name")
            if not isinstance(name, str) or not name:
                continue
            chunks = grouped.setdefault(name, {})
            chunks.setdefault(doc.page_content, (_chunk_number(doc, position), doc))
        self.papers: dict[str, Paper] = {}
        for name in sorted(grouped):
            ordered = [doc for _, doc in sorted(grouped[name].values(), key=lambda p: p[0])]
            self.papers[name] = Paper(name, dict(ordered[0].metadata), tuple(ordered))

    @property
    def passage_count(self) -> int:
        """Passages held over all papers."""
        return sum(len(p.passages) for p in self.papers.values())


async def _fts5_documents(path: str) -> list[Document]:
    from klea_utils.stores.retrieval.fts5_index import open_fts5_store

    store = open_fts5_store(path)
    try:
        ids = sorted(await store.filter_ids(None))
        records = await store.get_documents(ids)
    finally:
        await store.aclose()
    return [
        Document(id=rid, page_content=rec.body, metadata=dict(rec.metadata))
        for rid, rec in sorted(records.items())
    ]


def load_library(config: RetrieverConfig) -> Library:
    """Read every chunk of the BM25 stores of ``config`` into a :class:`Library`.

    A store whose file is missing is skipped (retrieval reports it already).
    """
    documents: list[Document] = []
    seen: set[str] = set()
    for domain in config.domains.values():
        for store in domain.bm25_stores:
            if store.path in seen:
                continue
            seen.add(store.path)
            if store.path.startswith(FTS5_SCHEME):
                location = store.path[len(FTS5_SCHEME) :]
                if Path(location).is_file():
                    documents.extend(asyncio.run(_fts5_documents(location)))
            elif Path(store.path).is_file():
                documents.extend(read_corpus(store.path))
    return Library(documents)
