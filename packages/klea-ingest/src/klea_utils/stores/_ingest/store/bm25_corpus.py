"""Writing the BM25 corpus: pickled batches of chunk ``Document`` lists.

The corpus file is read back by klea-retrieval's validating reader
(:func:`klea_utils.stores.retrieval.bm25.iter_corpus_documents`), as the retriever reads
it. It is written to a temporary sibling and swapped in on success, so a crash never
leaves a half corpus. On incremental runs the documents of files not seen in this run
(vanished sources, left in the collection) are carried over from the previous corpus, so
the corpus keeps matching the collection.

A sidecar ``<corpus>.klea.json`` records which collection the corpus belongs to; a corpus
of another collection, or one without a sidecar, is never silently overwritten.
"""

from __future__ import annotations

import glob
import json
import os
import pickle
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import IO

from klea_utils.stores._ingest.atomic import atomic_write_json, file_mode
from klea_utils.stores._ingest.store.manifest import sidecar_path
from klea_utils.stores._ingest.store.store_identity import resolve_store_uri
from klea_utils.stores.ingest_exceptions import IngestError
from klea_utils.stores.retrieval.bm25 import iter_corpus_documents
from langchain_core.documents import Document


class Bm25CorpusWriter:
    """Stream documents into a BM25 corpus in pickled batches of ``batch_size``."""

    def __init__(
        self, path: Path, collection: str, store_uri: str, batch_size: int, *, force: bool
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.path = Path(path)
        self.collection = collection
        self.store_uri = resolve_store_uri(store_uri)
        self.batch_size = batch_size
        self.force = force
        self._check_owner()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._remove_leftovers()
        fd, tmp = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent
        )
        os.fchmod(fd, file_mode())  # mkstemp's 0600 would ignore the umask
        self._tmp = Path(tmp)
        self._handle: IO[bytes] = os.fdopen(fd, "wb")
        self._buffer: list[Document] = []
        self._seen: set[str] = set()
        self.written = 0

    def _remove_leftovers(self) -> None:
        """Delete temporary corpora that killed runs left beside this one."""
        for leftover in self.path.parent.glob(f".{glob.escape(self.path.name)}.*.tmp"):
            leftover.unlink(missing_ok=True)

    def _check_owner(self) -> None:
        if not self.path.exists():
            return
        sidecar = sidecar_path(self.path)
        try:
            owner = json.loads(sidecar.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise IngestError(
                f"{self.path}: a BM25 corpus already exists and was not written by this tool "
                f"(no {sidecar.name}); choose another --bm25-store path or remove it"
            ) from None
        except (OSError, ValueError) as exc:
            raise IngestError(f"{sidecar}: unreadable BM25 corpus sidecar ({exc})") from exc
        if not isinstance(owner, dict):
            owner = {}
        recorded = owner.get("store_uri")
        same_store = isinstance(recorded, str) and (
            resolve_store_uri(recorded) == resolve_store_uri(self.store_uri)
        )
        if owner.get("collection") != self.collection or not same_store:
            raise IngestError(
                f"{self.path}: this BM25 corpus belongs to collection "
                f"{owner.get('collection')!r} in {owner.get('store_uri')!r}, not "
                f"{self.collection!r} in {self.store_uri!r}; choose another --bm25-store path"
            )

    def add(self, file_name: str, docs: list[Document]) -> None:
        """Append one file's stored documents."""
        self._seen.add(file_name)
        self._buffer.extend(docs)
        while len(self._buffer) >= self.batch_size:
            self._dump(self._buffer[: self.batch_size])
            self._buffer = self._buffer[self.batch_size :]

    def _dump(self, batch: list[Document]) -> None:
        if batch:
            pickle.dump(batch, self._handle, protocol=pickle.HIGHEST_PROTOCOL)
            self.written += len(batch)

    def commit(self, keep: Collection[str] | None = None) -> None:
        """Carry over unseen files' documents (unless forced), then swap the corpus in.

        ``keep`` names the files the collection holds (the manifest's): only their
        documents are carried over, so chunks of files a forced run dropped, even one that
        was interrupted, never outlive it. ``None`` carries over every unseen file.
        """
        if not self.force and self.path.exists():
            for doc in iter_corpus_documents(self.path, check_count=False):
                name = doc.metadata.get("file_name")
                if name not in self._seen and (keep is None or name in keep):
                    self._buffer.append(doc)
                    if len(self._buffer) >= self.batch_size:
                        self._dump(self._buffer)
                        self._buffer = []
        self._dump(self._buffer)
        self._buffer = []
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        os.replace(self._tmp, self.path)
        atomic_write_json(
            sidecar_path(self.path),
            {
                "collection": self.collection,
                "store_uri": self.store_uri,
                "documents": self.written,  # readers check the corpus holds this many
            },
        )

    def abort(self) -> None:
        """Discard everything written in this run; the previous corpus stays."""
        if not self._handle.closed:
            self._handle.close()
        self._tmp.unlink(missing_ok=True)
