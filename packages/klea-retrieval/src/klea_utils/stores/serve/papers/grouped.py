"""Papers grouped in memory from chunk documents: :class:`GroupedPapers`.

:class:`GroupedPapers` groups chunk documents by ``file_name`` and orders each paper's
passages by chunk number. klea-serve holds no such copy of the whole library: the
:class:`~klea_utils.stores.serve.papers.catalogue.PaperCatalogue` reads papers from the
stores on each call and groups one paper's chunks with it, and a pickled corpus already in
memory is grouped once
(:class:`~klea_utils.stores.serve.papers.sources.MemoryPaperSource`).
"""

from __future__ import annotations

from collections.abc import Iterable

from klea_utils.stores.serve.papers.paper import Paper
from langchain_core.documents import Document

__all__ = ["GroupedPapers"]


def _chunk_number(doc: Document, fallback: int) -> tuple[int, int]:
    index = doc.metadata.get("chunk_index")
    if isinstance(index, int) and not isinstance(index, bool):
        return (index, fallback)
    _, _, tail = (doc.id or "").rpartition(":")
    return (int(tail), fallback) if tail.isdigit() else (fallback, fallback)


class GroupedPapers:
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
