"""Writing one run's files to the vector store: stored ids, batches, skips and repairs.

:class:`VectorRun` adds each file's chunks in batches through the collection's manifest:
it skips an unchanged file the store still holds, adds again one the store lost, resumes
one a killed run left incomplete, and replaces a changed one (its stale ids deleted first).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.store.backend_errors import backend_errors
from klea_utils.stores._ingest.store.manifest import StoreManifest, chunk_ids, chunks_digest
from klea_utils.stores._ingest.store.store_check import current_ids, missing_ids
from klea_utils.stores._ingest.store.store_progress import StoreProgress
from klea_utils.stores._ingest.store.summary import StoreSummary
from klea_utils.stores.ingest_exceptions import SourceLayoutError
from klea_utils.stores.metadata import apply_store_metadata_policy
from langchain_core.documents import Document

__all__ = ["VectorRun", "bulk_load", "close_store", "named_files", "stored_docs"]


def named_files(
    results: Iterable[tuple[str, list[Document], Path]], source_dir: Path
) -> Iterator[tuple[str, str, list[Document]]]:
    """``(file_name, file_hash, stored docs)`` per result; refuses a repeated file name."""
    seen: dict[str, Path] = {}
    for file_hash, docs, file_path in results:
        name = Path(file_path).name
        if name in seen:
            raise SourceLayoutError(
                f"{source_dir}: two source files named {name!r}: {seen[name]} and {file_path}"
            )
        seen[name] = Path(file_path)
        yield name, file_hash, stored_docs(name, list(docs))
        del docs


def stored_docs(file_name: str, docs: list[Document]) -> list[Document]:
    """``docs`` as stored: ``<file_name>:<index>`` ids and the stored-metadata policy applied."""
    ids = chunk_ids(file_name, len(docs))
    return [
        Document(
            id=i, page_content=d.page_content, metadata=apply_store_metadata_policy(d.metadata)
        )
        for i, d in zip(ids, docs, strict=True)
    ]


@contextmanager
def bulk_load(store: Any, store_uri: str, collection: str) -> Iterator[None]:
    """One run's writes in the store's bulk-load mode, where it has one.

    A klea PGVector collection that starts the run empty builds its vector index once,
    after the run's last chunk, instead of row by row; a failed run leaves that to the
    next one. Chroma and Qdrant need nothing.
    """
    load = getattr(store, "bulk_load", None)
    if load is None:
        yield
        return
    context = load()
    with backend_errors(store_uri, collection):
        context.__enter__()
    try:
        yield
    except BaseException as exc:
        context.__exit__(type(exc), exc, exc.__traceback__)
        raise
    with backend_errors(store_uri, collection):
        context.__exit__(None, None, None)


def close_store(store: Any) -> None:
    """Release a store's connections (PGVector keeps a SQLAlchemy engine pool open)."""
    engine = getattr(store, "_engine", None)
    if engine is not None and hasattr(engine, "dispose"):
        engine.dispose()


@dataclass
class VectorRun:
    """One run's vector store, manifest and summary; writes one file at a time."""

    store: Any
    manifest: StoreManifest
    batch: int
    summary: StoreSummary

    def write_file(
        self, name: str, file_hash: str, stored: list[Document], progress: StoreProgress
    ) -> None:
        """Skip an unchanged file; else delete its stale ids and add its chunks in batches.

        Unchanged means the same bytes cut into the same chunks (:func:`chunks_digest`):
        a file re-chunked with other settings or a newer extraction is replaced.
        """
        digest = chunks_digest(stored)
        if self.manifest.is_current(name, file_hash, len(stored), digest):
            lost = missing_ids(self.store, [str(d.id) for d in stored])
            if not lost:
                self.summary.files_skipped += 1
                progress.file_done(name, skipped=True)
                return
            self.summary.files_restored += 1
            progress.logger.warning(
                "%s: the manifest records %d chunk(s) but the store lacks %d of them; adding "
                "the file again",
                name,
                len(stored),
                len(lost),
            )
        if self._resume(name, file_hash, stored, digest, progress):
            return
        existed = name in self.manifest.files
        stale = self.manifest.begin(name, file_hash, len(stored), digest)
        if stale:
            self.store.delete(ids=stale)
            self.summary.chunks_deleted += len(stale)
        progress.begin_file(name, len(stored))
        self._add(stored, progress)
        self.manifest.commit(name, file_hash, len(stored), digest)
        self.summary.chunks_added += len(stored)
        if not stored:
            self.summary.files_empty += 1
        if existed:
            self.summary.files_replaced += 1
        else:
            self.summary.files_added += 1
        progress.file_done(name, skipped=False)

    def _add(self, docs: list[Document], progress: StoreProgress) -> None:
        for start in range(0, len(docs), self.batch):
            part = docs[start : start + self.batch]
            self.store.add_documents(part, ids=[d.id for d in part])
            progress.advance(len(part))

    def _resume(
        self,
        name: str,
        file_hash: str,
        stored: list[Document],
        digest: str,
        progress: StoreProgress,
    ) -> bool:
        """Finish a file a killed run left incomplete, embedding only the chunks it lacks.

        Only when the unfinished entry is this very version of the file and of its chunks:
        chunks already in the store with this file hash are kept, ids past the file's
        chunk count are deleted, the rest is added. Returns whether the file was handled.
        """
        entry = self.manifest.files.get(name)
        if (
            entry is None
            or entry.complete
            or entry.file_hash != file_hash
            or entry.digest != digest
            or not stored
        ):
            return False
        done = current_ids(self.store, [str(d.id) for d in stored], file_hash)
        if not done:
            return False
        extra = chunk_ids(name, entry.chunks)[len(stored) :]
        if extra:
            self.store.delete(ids=extra)
            self.summary.chunks_deleted += len(extra)
        todo = [d for d in stored if str(d.id) not in done]
        progress.logger.info(
            "%s: resuming an interrupted file, %d of %d chunk(s) already stored",
            name,
            len(done),
            len(stored),
        )
        progress.begin_file(name, len(stored), done=len(done))
        self._add(todo, progress)
        self.manifest.commit(name, file_hash, len(stored), digest)
        self.summary.chunks_added += len(todo)
        self.summary.files_resumed += 1
        progress.file_done(name, skipped=False)
        return True
