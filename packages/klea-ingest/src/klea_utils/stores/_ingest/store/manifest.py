"""The store manifest: which files a collection holds, written atomically after each file.

``<source>/.klea-cache/<collection>.manifest.json`` keeps one section per store, keyed by
the store's resolved URI (:func:`~.store_identity.resolve_store_uri`), so the same
collection name written to two stores, or one store named by a relative and an absolute
path, never mixes records::

    {"version": 2, "collection": "papers",
     "stores": {"chroma:/data/store": {"files": {
         "a.pdf": {"file_hash": "<sha256>", "chunks": 12, "digest": "<sha256>",
                   "complete": true}},
         "vectors": "huggingface:all-MiniLM-L6-v2", "embedders": ["onnxruntime-fp32"]}}}

A version-1 manifest (one ``store_uri`` and its ``files``) is read as that store's section.
``digest`` is :func:`chunks_digest` of the chunks as stored (text and metadata): a file whose
bytes are unchanged but whose chunks are not (other chunk settings, a newer extraction, a
corrected metadata record) is replaced, not skipped. An entry written before digests were
recorded counts as changed once. The manifest is a record, not the truth: the store phase
checks that the store holds each skipped file's ids and re-adds what it lacks.

A file's entry is written with ``complete: false`` *before* its chunks are added and
flipped to ``true`` once they all are, so a process killed mid-file leaves a marker: the
next run deletes every id the file may have written and adds it again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.atomic import atomic_write_json
from klea_utils.stores.exceptions import StoreConfigError
from klea_utils.stores.ingest_exceptions import IngestError
from klea_utils.stores.layout import CACHE_DIR_NAME
from langchain_core.documents import Document

MANIFEST_VERSION = 2
"""Format version written into every collection manifest (version 1 is still read)."""

SIDECAR_SUFFIX = ".klea.json"
"""Suffix of the sidecar recording which collection a BM25 corpus or FTS5 index belongs to."""

_SAFE_NAME = re.compile(r"^[\w.\-]+$")
_log = logging.getLogger(__name__)


def sidecar_path(store_path: Path) -> Path:
    """The sidecar file of a BM25 corpus or FTS5 index at ``store_path``."""
    return store_path.with_name(store_path.name + SIDECAR_SUFFIX)


def manifest_path(source_dir: Path, collection_name: str) -> Path:
    """``<source_dir>/.klea-cache/<collection>.manifest.json``.

    Raises:
        StoreConfigError: A ``ValueError``, when the collection name could escape the cache
            folder.
    """
    if not _SAFE_NAME.match(collection_name) or collection_name in {".", ".."}:
        raise StoreConfigError(
            f"collection name {collection_name!r} may only use letters, digits, '_', '-' and '.'"
        )
    return Path(source_dir) / CACHE_DIR_NAME / f"{collection_name}.manifest.json"


@dataclass(frozen=True)
class ManifestEntry:
    """One file of a collection: its content hash, chunk count, and whether all were added."""

    file_hash: str
    chunks: int
    complete: bool = True
    digest: str = ""
    """:func:`chunks_digest` of the chunks stored; empty in entries written before it was."""

    def __post_init__(self) -> None:
        if not self.file_hash:
            raise ValueError("ManifestEntry.file_hash must be non-empty")
        if self.chunks < 0:
            raise ValueError(f"ManifestEntry.chunks must be >= 0, got {self.chunks}")

    def ids(self, file_name: str) -> list[str]:
        """The chunk ids this entry put in the collection."""
        return chunk_ids(file_name, self.chunks)


def chunks_digest(docs: list[Document]) -> str:
    """SHA-256 over the chunks' text and metadata, in order: what the store was given."""
    digest = hashlib.sha256()
    for doc in docs:
        record = [doc.page_content, doc.metadata]
        digest.update(json.dumps(record, sort_keys=True, ensure_ascii=False, default=str).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def chunk_ids(file_name: str, count: int) -> list[str]:
    """Deterministic chunk ids ``<file_name>:<chunk_index>``."""
    return [f"{file_name}:{index}" for index in range(count)]


@dataclass
class StoreManifest:
    """The manifest of one collection, loaded from and saved to :attr:`path`."""

    path: Path
    collection: str
    store_uri: str
    files: dict[str, ManifestEntry] = field(default_factory=dict)

    @classmethod
    def load(cls, source_dir: Path, collection: str, store_uri: str) -> CollectionManifest:
        """Load the collection manifest's section for ``store_uri`` (resolved).

        Other stores' sections are kept and written back unchanged by :meth:`save`.

        Raises:
            IngestError: When the manifest exists but cannot be parsed.
        """
        return CollectionManifest.load_section(source_dir, collection, store_uri)

    def to_json(self) -> dict[str, Any]:
        """One store's manifest as a JSON-ready dict (the FTS5 sidecar's format)."""
        return {
            "version": 1,
            "collection": self.collection,
            "store_uri": self.store_uri,
            "files": {name: _entry_json(e) for name, e in sorted(self.files.items())},
        }

    def save(self) -> None:
        """Write the manifest atomically."""
        atomic_write_json(self.path, self.to_json())

    def holds_version(self, file_name: str, file_hash: str, chunks: int, digest: str) -> bool:
        """Whether the collection holds this version of the file, wholly or in part (a run
        killed while adding it): the same bytes cut into the same chunks."""
        entry = self.files.get(file_name)
        return (
            entry is not None
            and entry.file_hash == file_hash
            and entry.chunks == chunks
            and entry.digest == digest
        )

    def is_current(
        self, file_name: str, file_hash: str, chunks: int, digest: str | None = None
    ) -> bool:
        """Whether the collection already holds exactly this version of the file.

        With ``digest`` (:func:`chunks_digest` of the chunks to store) the chunks must be
        the ones stored too; without it only the file's bytes and chunk count are compared
        (a forecast, as the store plan makes before any chunk is read).
        """
        entry = self.files.get(file_name)
        return (
            entry is not None
            and entry.complete
            and entry.file_hash == file_hash
            and entry.chunks == chunks
            and (digest is None or entry.digest == digest)
        )

    def begin(self, file_name: str, file_hash: str, chunks: int, digest: str = "") -> list[str]:
        """Mark a file in progress and save; return the ids to delete before adding it."""
        old = self.files.get(file_name)
        stale = 0 if old is None else old.chunks
        if old is not None and not old.complete:
            stale = max(stale, chunks)  # a crashed run may have written up to `chunks` ids
        self.files[file_name] = ManifestEntry(
            file_hash, max(chunks, stale), complete=False, digest=digest
        )
        self.save()
        return chunk_ids(file_name, stale)

    def commit(self, file_name: str, file_hash: str, chunks: int, digest: str = "") -> None:
        """Mark a file complete with ``chunks`` chunks (whose digest is ``digest``) and save."""
        self.files[file_name] = ManifestEntry(file_hash, chunks, complete=True, digest=digest)
        self.save()

    def expected_chunks(self) -> int:
        """Chunks the manifest says the store holds (complete entries only)."""
        return sum(e.chunks for e in self.files.values() if e.complete)

    def clear(self) -> None:
        """Forget every file and save (after the collection was dropped)."""
        self.files.clear()
        self.save()


def _entry_json(entry: ManifestEntry) -> dict[str, Any]:
    record: dict[str, Any] = {"file_hash": entry.file_hash, "chunks": entry.chunks}
    if entry.digest:
        record["digest"] = entry.digest
    record["complete"] = entry.complete
    return record


def _parse_files(path: Path, files: Any) -> dict[str, ManifestEntry]:
    try:
        return {str(name): ManifestEntry(**entry) for name, entry in files.items()}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise IngestError(f"{path}: malformed store manifest ({exc})") from exc


@dataclass
class CollectionManifest(StoreManifest):
    """A collection's manifest file: this store's section plus the others, kept as read.

    A section also records the vectors it holds: ``vectors`` (the model's
    :func:`~.document_embedder.vectors_key`) and ``embedders`` (the variants that wrote
    them since the collection was last rebuilt, e.g. ``["onnxruntime-fp32", "torch"]``).
    A section written before they were recorded has neither.
    """

    others: dict[str, Any] = field(default_factory=dict)
    vectors: str = ""
    embedders: list[str] = field(default_factory=list)

    def record_embedder(self, vectors: str, variant: str | None) -> None:
        """Record that ``variant`` wrote vectors of ``vectors`` (saved with the next save)."""
        self.vectors = vectors
        if variant and variant not in self.embedders:
            self.embedders = sorted([*self.embedders, variant])

    def clear(self) -> None:
        """Forget the files and the vectors recorded, and save (the collection was dropped)."""
        self.vectors, self.embedders = "", []
        super().clear()

    @classmethod
    def load_section(cls, source_dir: Path, collection: str, store_uri: str) -> CollectionManifest:
        """Read ``store_uri``'s section (empty when absent) and keep the other sections."""
        from klea_utils.stores._ingest.store.store_identity import resolve_store_uri

        path = manifest_path(source_dir, collection)
        store_uri = resolve_store_uri(store_uri)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path, collection, store_uri)
        except (OSError, ValueError, RecursionError) as exc:
            raise IngestError(
                f"{path}: unreadable store manifest ({exc}); delete it and rerun with --force"
            ) from exc
        if not isinstance(raw, dict):
            raise IngestError(f"{path}: malformed store manifest (not a JSON object)")
        sections = raw.get("stores")
        if sections is None and "store_uri" in raw:  # version 1: one store
            sections = {resolve_store_uri(str(raw["store_uri"])): {"files": raw.get("files")}}
        if not isinstance(sections, dict):
            raise IngestError(f"{path}: malformed store manifest (no 'stores' object)")
        mine = sections.pop(store_uri, None)
        if not isinstance(mine, dict):
            return cls(path, collection, store_uri, others=sections)
        files = _parse_files(path, mine.get("files") or {})
        vectors, embedders = mine.get("vectors", ""), mine.get("embedders", [])
        if not isinstance(vectors, str) or not isinstance(embedders, list):
            raise IngestError(f"{path}: malformed store manifest (vectors or embedders)")
        return cls(
            path,
            collection,
            store_uri,
            files,
            others=sections,
            vectors=vectors,
            embedders=[str(e) for e in embedders],
        )

    def to_json(self) -> dict[str, Any]:
        """The whole manifest file: every store's section, this one updated."""
        mine: dict[str, Any] = {"files": super().to_json()["files"]}
        if self.vectors:
            mine["vectors"] = self.vectors
        if self.embedders:
            mine["embedders"] = self.embedders
        stores = {**self.others, self.store_uri: mine}
        return {
            "version": MANIFEST_VERSION,
            "collection": self.collection,
            "stores": dict(sorted(stores.items())),
        }
