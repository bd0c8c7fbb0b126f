"""Keeping the optional FTS5 index of a collection's chunks in step, file by file.

The index itself is klea-retrieval's ``fts5:`` BM25 layout, written with
:mod:`klea_utils.stores.retrieval.fts5_index` (one record per chunk, id
``<file_name>:<chunk_index>``, normalized body, facet tags). It is updated like the vector
store: a sidecar ``<index>.klea.json`` is a :class:`~._manifest.StoreManifest` of the files
the index holds (plus the collection it belongs to), saved with ``complete: false`` before
a file's chunks are written and ``true`` after, so a run killed mid-file is repaired by
the next one. Unchanged files are skipped, a changed file's old ids are deleted before its
new chunks are written, files absent from a run are left alone, and ``force`` rebuilds.

An index of another collection, or one without a sidecar, is never written to; one from
an older klea-ingest (a sidecar without a file list) is rebuilt.

``stemming`` is the index's tokenizer choice (see
:func:`klea_utils.stores.retrieval.fts5_index.open_fts5_store`): ``None`` follows the
existing index and builds a new one with FTS5's Porter stemmer
(:data:`NEW_INDEX_STEMMING`), ``True`` or ``False`` chooses.
``multiscript`` chooses the same way whether the index segments Chinese, Japanese,
Korean, Thai and Arabic-script text: ``None`` follows the existing index and builds a new
one multiscript (:data:`NEW_INDEX_MULTISCRIPT`). An explicit stemming or multiscript
choice that an existing index was not built with is applied by
:meth:`Fts5IndexWriter.finish`, which re-tokenizes the stored chunks, so the index never
stays refusing queries. ``finish`` also tags an index built before a facet key joined
:data:`~klea_utils.stores.retrieval.fts5_index.FTS5_FACET_KEYS` (``tags`` and
``collections``, for reference-manager records) for the missing keys, from the stored
metadata, so filters and facets on them work without a rebuild.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Collection
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.store.manifest import (
    ManifestEntry,
    StoreManifest,
    chunks_digest,
    sidecar_path,
)
from klea_utils.stores.ingest_exceptions import IngestError
from klea_utils.stores.retrieval.fts5_index import FTS5_FACET_KEYS, open_fts5_store
from langchain_core.documents import Document

_SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")

NEW_INDEX_STEMMING = True
"""How a new index is built when no choice is made: stemming, so a question's
"inhibits" finds "inhibition". It lifts the ``fts5:`` leg on the development papers'
questions from 31 to 33 of 36 answers in the top 3 and BM25 on SciFact, Cranfield and
CISI alike (``docs/benchmarks-quality.md``)."""

NEW_INDEX_MULTISCRIPT = True
"""Whether a new index finds words in Chinese, Japanese, Korean, Thai and Arabic-script
chunks (:class:`sci_etl_core.search.multiscript.MultiscriptTokenizer`, issue 37). English
chunks index exactly the words they did; an existing index keeps the segmentation it was
built with (the file records it), so old indexes answer as before."""
_log = logging.getLogger(__name__)


class Fts5IndexWriter:
    """Update the FTS5 index at ``path`` one file at a time (see the module docstring)."""

    def __init__(
        self,
        path: Path,
        collection: str,
        *,
        force: bool,
        stemming: bool | None = None,
        multiscript: bool | None = None,
    ) -> None:
        self.path = Path(path)
        self.stemming = stemming
        self.multiscript = multiscript
        self.sidecar = sidecar_path(self.path)
        self.manifest = StoreManifest(self.sidecar, collection, f"fts5:{self.path}")
        files = self._recorded_files(force)
        if files is None:
            self._drop()
            self.manifest.save()
        else:
            self.manifest.files = files
        if not self.path.exists():
            if self.multiscript is None:
                self.multiscript = NEW_INDEX_MULTISCRIPT
            if self.stemming is None:
                self.stemming = NEW_INDEX_STEMMING

    def _recorded_files(self, force: bool) -> dict[str, ManifestEntry] | None:
        """The files the index holds, or ``None`` when it must be rebuilt from scratch."""
        if not self.path.exists():
            return {}  # never written, or deleted: whatever the sidecar says is gone
        if self.path.stat().st_size == 0:
            # Killed between SQLite creating the file and writing its header: nothing was
            # committed (WAL mode is set in that header), so the index starts afresh.
            _log.info("%s: empty (an interrupted first write); rebuilding it", self.path)
            self._drop()
            return {}
        if force:
            return None
        owner = self._read_sidecar()
        if owner.get("collection") != self.manifest.collection:
            raise IngestError(
                f"{self.path}: an FTS5 index of another collection "
                f"({owner.get('collection')!r}) is already there; choose another path"
            )
        if "files" not in owner:
            _log.info("%s: written by an older klea-ingest; rebuilding it", self.path)
            return None
        try:
            return {name: ManifestEntry(**entry) for name, entry in owner["files"].items()}
        except (TypeError, ValueError, AttributeError) as exc:
            raise IngestError(
                f"{self.sidecar}: malformed FTS5 index sidecar ({exc}); rerun with --force"
            ) from exc

    def _read_sidecar(self) -> dict[str, Any]:
        try:
            owner = json.loads(self.sidecar.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise IngestError(f"{self.sidecar}: unreadable FTS5 index sidecar ({exc})") from exc
        return owner if isinstance(owner, dict) else {}

    def _drop(self) -> None:
        for suffix in _SQLITE_SUFFIXES:
            Path(str(self.path) + suffix).unlink(missing_ok=True)

    def add(self, file_name: str, file_hash: str, docs: list[Document]) -> int:
        """Index one file's stored chunks unless already current; return how many were written."""
        from klea_utils.stores import fts5_writer

        digest = chunks_digest(docs)
        if self.manifest.is_current(file_name, file_hash, len(docs), digest):
            return 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        stale = self.manifest.begin(file_name, file_hash, len(docs), digest)
        if stale:
            fts5_writer.delete_fts5_ids(self.path, stale)
        pairs = [(str(d.id), d) for d in docs]
        written = (
            fts5_writer.write_fts5_chunks(
                self.path, pairs, stemming=self.stemming, multiscript=self.multiscript
            )
            if docs
            else 0
        )
        self.manifest.commit(file_name, file_hash, len(docs), digest)
        return written

    def retain(self, keep: Collection[str]) -> int:
        """Delete the chunks of every file not in ``keep`` (the collection's files).

        A forced run that was interrupted dropped files from the collection that an older
        index may still hold; this brings the index back to the collection. Returns the
        number of ids deleted.
        """
        from klea_utils.stores import fts5_writer

        gone = sorted(set(self.manifest.files) - set(keep))
        if not gone or not self.path.exists():
            return 0
        ids = [i for name in gone for i in self.manifest.files[name].ids(name)]
        fts5_writer.delete_fts5_ids(self.path, ids)
        for name in gone:
            del self.manifest.files[name]
        self.manifest.save()
        return len(ids)

    def finish(self) -> bool:
        """Apply an explicit ``stemming`` or ``multiscript`` the index was not built with.

        The stored chunks are re-tokenized in place (``rebuild_index``), nothing is
        re-read from the sources; ``True`` if it did. Nothing happens when both are
        ``None`` or no index file exists.
        """
        if not self.path.exists():
            return False
        self._tag_new_facet_keys()
        if self.stemming is None and self.multiscript is None:
            return False
        return asyncio.run(self._apply_tokenizer())

    def _tag_new_facet_keys(self) -> None:
        """Tag the index for the facet keys it was built without (from stored metadata)."""
        from sci_etl_core.search.store_sqlite_fts5 import built_facet_keys

        built = built_facet_keys(self.path)
        missing = sorted(set(FTS5_FACET_KEYS) - set(built or ()))
        if built is None or not missing:
            return
        _log.info("%s: tagging the FTS5 index for %s", self.path, ", ".join(missing))
        asyncio.run(self._rebuild_tags())

    async def _rebuild_tags(self) -> None:
        store = open_fts5_store(self.path)
        try:
            await store.rebuild_tags()
        finally:
            await store.aclose()

    async def _apply_tokenizer(self) -> bool:
        store = open_fts5_store(self.path, stemming=self.stemming, multiscript=self.multiscript)
        try:
            await store.count()  # opens the file: its properties are then the file's choices
            changes = [
                f"{'with' if wanted else 'without'} {name}"
                for name, wanted, built in (
                    ("stemming", self.stemming, store.stemming),
                    ("multiscript", self.multiscript, store.multiscript),
                )
                if wanted is not None and wanted != built
            ]
            if not changes:
                return False
            _log.info("%s: re-tokenizing the FTS5 index %s", self.path, " and ".join(changes))
            await store.rebuild_index()
            return True
        finally:
            await store.aclose()
