"""What one store run did: files added, replaced, skipped; chunks embedded and deleted.

Filled in by :class:`~klea_utils.stores._ingest.store.vector_run.VectorRun` and the corpus
writers, returned by ``StoreWriter.write`` (re-exported by
:mod:`klea_utils.stores.store_writer`, its public home).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["StoreSummary"]


@dataclass
class StoreSummary:
    """What one store run (``store_all`` or ``build``) did."""

    files_added: int = 0
    files_replaced: int = 0
    files_skipped: int = 0
    files_empty: int = 0
    files_restored: int = 0
    files_resumed: int = 0
    chunks_added: int = 0
    chunks_deleted: int = 0
    bm25_chunks: int = 0
    fts5_chunks: int = 0
    missing_files: list[Path] = field(default_factory=list)
    """Source files without cached chunks (filled when the results came from the cache)."""

    def describe(self) -> str:
        """One line for logs and the CLI summary."""
        text = (
            f"{self.files_added} file(s) added, {self.files_replaced} replaced, "
            f"{self.files_skipped} unchanged; {self.chunks_added} chunk(s) embedded, "
            f"{self.chunks_deleted} stale id(s) deleted"
        )
        if self.files_empty:
            text += f"; {self.files_empty} file(s) without chunks"
        if self.files_resumed:
            text += f"; {self.files_resumed} interrupted file(s) resumed"
        if self.files_restored:
            text += (
                f"; {self.files_restored} file(s) the manifest listed were missing from "
                "the store and were added again"
            )
        if self.bm25_chunks:
            text += f"; BM25 corpus holds {self.bm25_chunks} chunk(s)"
        if self.fts5_chunks:
            text += f"; FTS5 index got {self.fts5_chunks} chunk(s)"
        return text
