"""Writing the chunks to an SQLite FTS5 index (``sci_etl_core.search``), so lexical search scales.

One FTS5 record per chunk: ``record_id`` is the chunk id (``<file_name>:<index>``), the title
field holds the chunk's ``title`` metadata, the body its text, and the stored metadata rides
along. Like the BM25 corpus the index is rebuilt into a temporary file during the store run
and swapped in at the end, so a crash never leaves a half index. Unlike the BM25 corpus,
chunks of files absent from the run are not carried over.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from klea_utils.stores._atomic import atomic_write_json
from klea_utils.stores.ingest_exceptions import IngestError
from langchain_core.documents import Document

SIDECAR_SUFFIX = ".klea.json"


class Fts5CorpusWriter:
    """Index stored chunks into a fresh FTS5 database, swapped in on :meth:`commit`."""

    def __init__(self, path: Path, collection: str, *, force: bool) -> None:
        from sci_etl_core.search import AsyncSqliteFts5Store

        self.path = Path(path)
        self.collection = collection
        self._sidecar = self.path.with_name(self.path.name + SIDECAR_SUFFIX)
        if self.path.exists() and not force:
            self._check_owner()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self._tmp.unlink(missing_ok=True)
        self._loop = asyncio.new_event_loop()
        self._store: Any = AsyncSqliteFts5Store(self._tmp, facet_keys=("file_name",))

    def _check_owner(self) -> None:
        try:
            owner = json.loads(self._sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            owner = {}
        if owner.get("collection") != self.collection:
            raise IngestError(
                f"{self.path}: an FTS5 index of another collection "
                f"({owner.get('collection')!r}) is already there; choose another path"
            )

    def add(self, file_name: str, docs: list[Document]) -> int:
        """Index one file's stored chunks; return how many were indexed."""
        from sci_etl_core.search import SearchDocument

        records = [
            SearchDocument(
                record_id=str(doc.id),
                title=str(doc.metadata.get("title", "")),
                body=doc.page_content,
                metadata={"file_name": file_name, **doc.metadata},
            )
            for doc in docs
            if doc.page_content.strip()
        ]
        if records:
            self._loop.run_until_complete(self._store.index(records))
        return len(records)

    def commit(self) -> None:
        """Close the new index and swap it in place of the old one."""
        try:
            self._loop.run_until_complete(self._store.aclose())
        finally:
            self._loop.close()
        os.replace(self._tmp, self.path)
        atomic_write_json(self._sidecar, {"collection": self.collection})

    def abort(self) -> None:
        """Discard the new index; the previous one stays."""
        if not self._loop.is_closed():
            try:
                self._loop.run_until_complete(self._store.aclose())
            finally:
                self._loop.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(self._tmp) + suffix).unlink(missing_ok=True)
