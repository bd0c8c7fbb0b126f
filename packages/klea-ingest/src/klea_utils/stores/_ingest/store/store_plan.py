"""What one store run will embed, per file, known before the first chunk is embedded.

The store progress shows chunks embedded against this total. It counts only what the run
embeds: a file the manifest already holds in this version plans no chunks. The plan is a
forecast; :class:`~klea_utils.stores._ingest.store.store_progress.StoreProgress` corrects it as
files arrive (a file the store lost is added again, an interrupted one only resumes).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from klea_utils.stores._ingest.store.folded_results import FoldedResults
from klea_utils.stores._ingest.store.manifest import StoreManifest
from langchain_core.documents import Document

__all__ = ["planned_chunks"]


def _counts(
    results: Iterable[tuple[str, list[Document], Path]],
) -> Iterator[tuple[str, str, int]] | None:
    """``(file_name, file_hash, chunks)`` per file, or ``None`` when only iterating can tell."""
    if isinstance(results, FoldedResults):
        counts = results.chunk_counts()  # each entry's recorded count: no chunk is read
        return ((path.name, file_hash, n) for path, (file_hash, n) in counts.items())
    if isinstance(results, Sequence):  # already in memory
        return ((Path(path).name, file_hash, len(docs)) for file_hash, docs, path in results)
    return None  # a one-pass iterator: reading it ahead would consume it


def planned_chunks(
    results: Iterable[tuple[str, list[Document], Path]], manifest: StoreManifest
) -> dict[str, int] | None:
    """Chunks this run will embed, per file name (``0`` for an unchanged file).

    ``None`` when ``results`` is a one-pass iterator (the progress then counts without a
    total). For :class:`FoldedResults` only each cache entry's recorded chunk count is read.
    """
    counts = _counts(results)
    if counts is None:
        return None
    return {
        name: 0 if manifest.is_current(name, file_hash, chunks) else chunks
        for name, file_hash, chunks in counts
    }
