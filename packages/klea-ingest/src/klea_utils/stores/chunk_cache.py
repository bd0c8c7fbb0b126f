"""The on-disk chunk cache under ``<source>/.klea-cache/chunks/``.

One entry per source file, a JSON file named ``<content sha256>-<path key>.json`` where
the path key is a short hash of the file's path relative to the source folder. An entry
holds the file's chunks (each chunk's text and metadata), its bibliographic ``metadata``
(the metadata map's ``DEFAULT`` pre-fill) and its heading chains. Every entry begins with
``{"version": 2, "chunk_count": N,``, so :meth:`ChunkCache.chunk_count` learns how many
chunks a file has from the entry's first bytes, without reading its chunks (the store
phase adds these up to show chunks embedded against a total). Entries written before the
count was recorded lack it and are still read; their count is taken by parsing them.

An entry also records the chunking settings it was cut with (``chunking``: budget,
overlap, tokenizer, version of the rules). A cache opened with settings treats an entry
cut with other settings, or written before settings were recorded, as missing, so the
file is converted and chunked again; a cache opened without settings (the store phase)
reads any entry.

Entries are plain JSON so that reading a cache cannot run code: a papers folder handed
over by someone else may carry a ``.klea-cache``. Pickled entries of klea-ingest before
cache version 2 (``*.pkl``) are never opened; their files are converted again and the old
entries pruned. A file whose bytes change gets
a new entry; the stale one is pruned at the end of the next ``chunk_all``.

Entries are written atomically (temporary file, fsync, rename), so a process killed
mid-write leaves either no entry or a complete one. An entry that cannot be read back is
moved aside as ``*.corrupt`` and treated as missing, so the file is converted again.

The store side reads the cache one file at a time with :func:`iter_cached_files`::

    for cached in iter_cached_files(source_dir):
        store(cached.file_hash, cached.docs, cached.file_path)

Layout::

    <source>/.klea-cache/
        chunks/<sha256>-<pathkey>.json     one entry per source file
        chunks/<...>.json.corrupt          quarantined entries (safe to delete)
        metadata-map.template.json         written by ``chunk``
        doi-cache.json, *.manifest.json    owned by the biblio and store steps
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.atomic import atomic_write_bytes
from klea_utils.stores.ingest_exceptions import ChunkCacheError
from klea_utils.stores.source_files import CACHE_DIR_NAME, find_source_files
from langchain_core.documents import Document

__all__ = [
    "CACHE_FORMAT_VERSION",
    "CHUNKS_DIR_NAME",
    "CachedFile",
    "ChunkCache",
    "compute_file_hash",
    "iter_cached_files",
]

logger = logging.getLogger(__name__)

CACHE_FORMAT_VERSION = 2
"""Version stored in every entry; entries of another version are re-converted."""

ENTRY_SUFFIX = ".json"
"""Suffix of a cache entry (version 1 entries were pickles, ``.pkl``, and are never read)."""

_LEGACY_SUFFIX = ".pkl"

CHUNKS_DIR_NAME = "chunks"
"""Sub-folder of the cache directory holding the per-file entries."""

_HASH_BLOCK = 1 << 20

_COUNT_HEAD = re.compile(rb'\{"version": (\d+), "chunk_count": (\d+),')
"""How every entry written with a chunk count begins (``json.dumps``' default separators)."""

_HEAD_BYTES = 64


def compute_file_hash(path: Path) -> str:
    """Return the SHA-256 hex digest of the file's bytes (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _path_key(rel_path: str) -> str:
    return hashlib.sha256(rel_path.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class CachedFile:
    """One source file's cached chunks.

    Attributes:
        file_path: Absolute path of the source file.
        file_hash: SHA-256 of the file's bytes when it was chunked.
        docs: The chunks; each ``metadata`` has ``file_name``, ``file_hash`` and
            ``headings`` (list of str, most specific last).
        metadata: Extracted bibliographic metadata (the metadata map's ``DEFAULT``).
        headings: Distinct heading chains of the file, ``" > "``-joined, in order.
    """

    file_path: Path
    file_hash: str
    docs: list[Document] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    headings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.file_hash) != 64 or any(c not in "0123456789abcdef" for c in self.file_hash):
            raise ValueError(
                f"CachedFile.file_hash for {self.file_path} is not a sha256 hex digest"
            )
        if not all(isinstance(d, Document) for d in self.docs):
            raise TypeError(f"CachedFile.docs for {self.file_path} must hold Document objects")

    def template_entry(self) -> dict[str, Any]:
        """Return this file's metadata-map template entry: ``DEFAULT`` then one per chain."""
        entry: dict[str, Any] = {"DEFAULT": dict(self.metadata)}
        for chain in self.headings:
            entry.setdefault(chain, {})
        return entry


def heading_chains(docs: Iterable[Document]) -> list[str]:
    """Return the distinct ``" > "``-joined heading chains of ``docs``, in first-seen order."""
    seen: dict[str, None] = {}
    for doc in docs:
        chain = " > ".join(doc.metadata.get("headings") or [])
        if chain:
            seen.setdefault(chain, None)
    return list(seen)


class ChunkCache:
    """Reads and writes the chunk cache of one source folder.

    Args:
        source_dir: The source folder; the cache lives in ``<source_dir>/.klea-cache``.
        chunking: The chunking settings (JSON values) entries must have been cut with, and
            that :meth:`store` records; ``None`` reads entries of any settings.
    """

    def __init__(self, source_dir: Path, *, chunking: Mapping[str, Any] | None = None) -> None:
        self.chunking = dict(chunking) if chunking is not None else None
        self.source_dir = Path(source_dir).resolve()
        self.cache_dir = self.source_dir / CACHE_DIR_NAME
        self.chunks_dir = self.cache_dir / CHUNKS_DIR_NAME

    def _rel(self, file_path: Path) -> str:
        try:
            return Path(file_path).resolve().relative_to(self.source_dir).as_posix()
        except ValueError as exc:
            raise ChunkCacheError(f"{file_path} is not inside {self.source_dir}") from exc

    def entry_path(self, file_path: Path, file_hash: str) -> Path:
        """Return the entry path for ``file_path`` with content ``file_hash``."""
        return self.chunks_dir / f"{file_hash}-{_path_key(self._rel(file_path))}{ENTRY_SUFFIX}"

    def quarantine(self, entry: Path, reason: str) -> Path:
        """Move a bad entry aside as ``<entry>.corrupt`` (numbered if taken); return it."""
        target = entry.with_name(entry.name + ".corrupt")
        n = 1
        while target.exists():
            target = entry.with_name(f"{entry.name}.{n}.corrupt")
            n += 1
        os.replace(entry, target)
        logger.warning(
            "Corrupt cache entry %s (%s); moved to %s, re-converting", entry, reason, target.name
        )
        return target

    def _payload(self, data: bytes, file_path: Path, file_hash: str) -> dict[str, Any]:
        """Decode an entry and check that it is this version of this file."""
        payload = json.loads(data.decode("utf-8"))
        if not isinstance(payload, dict) or payload.get("version") != CACHE_FORMAT_VERSION:
            raise ValueError("unknown entry format")
        if payload["file_hash"] != file_hash or payload["rel_path"] != self._rel(file_path):
            raise ValueError("entry belongs to another file")
        if not isinstance(payload["docs"], list):
            raise ValueError("chunks are not a JSON array")
        count = payload.get("chunk_count", len(payload["docs"]))
        if count != len(payload["docs"]):
            raise ValueError(f"chunk_count {count!r} but {len(payload['docs'])} chunk(s)")
        return payload

    def _read(self, entry: Path) -> bytes | None:
        try:
            return entry.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ChunkCacheError(f"cannot read cache entry {entry}: {exc}") from exc

    def load(self, file_path: Path, file_hash: str) -> CachedFile | None:
        """The entry for this file and hash; ``None`` if missing, corrupt or cut otherwise."""
        entry = self.entry_path(file_path, file_hash)
        data = self._read(entry)
        if data is None:
            return None
        try:
            payload = self._payload(data, file_path, file_hash)
        except Exception as exc:  # any decoding or shape failure means a corrupt entry
            self.quarantine(entry, f"{type(exc).__name__}: {exc}")
            return None
        if self.chunking is not None and payload.get("chunking") != self.chunking:
            logger.info("%s: cached chunks were cut with other settings; re-chunking", file_path)
            return None
        try:
            return CachedFile(
                file_path=self.source_dir / payload["rel_path"],
                file_hash=payload["file_hash"],
                docs=[_doc_from_json(d) for d in payload["docs"]],
                metadata=_json_object(payload["metadata"], "metadata"),
                headings=[str(h) for h in payload["headings"]],
            )
        except Exception as exc:  # any decoding or shape failure means a corrupt entry
            self.quarantine(entry, f"{type(exc).__name__}: {exc}")
            return None

    def chunk_count(self, file_path: Path, file_hash: str) -> int | None:
        """How many chunks the entry for this file and hash holds; ``None`` without one.

        Reads only the entry's first bytes, where the count is recorded. An entry written
        before counts were recorded is parsed instead (one entry at a time, its chunks not
        built); one that cannot be parsed counts as missing here and is quarantined when
        :meth:`load` reads it.

        Raises:
            ChunkCacheError: The entry exists but cannot be read.
        """
        entry = self.entry_path(file_path, file_hash)
        try:
            with entry.open("rb") as handle:
                head = handle.read(_HEAD_BYTES)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ChunkCacheError(f"cannot read cache entry {entry}: {exc}") from exc
        match = _COUNT_HEAD.match(head)
        if match is not None and int(match[1]) == CACHE_FORMAT_VERSION:
            return int(match[2])
        data = self._read(entry)
        if data is None:
            return None
        try:
            return len(self._payload(data, file_path, file_hash)["docs"])
        except Exception:  # corrupt: load() quarantines it and the file counts as missing
            return None

    def store(self, cached: CachedFile) -> Path:
        """Write ``cached`` atomically; return the entry path.

        Raises:
            ChunkCacheError: A chunk's metadata holds a value JSON cannot represent.
        """
        entry = self.entry_path(cached.file_path, cached.file_hash)
        payload = {  # version and chunk_count first: chunk_count() reads them from the head
            "version": CACHE_FORMAT_VERSION,
            "chunk_count": len(cached.docs),
            "rel_path": self._rel(cached.file_path),
            "file_hash": cached.file_hash,
            "docs": [_doc_to_json(d) for d in cached.docs],
            "metadata": cached.metadata,
            "headings": cached.headings,
        }
        if self.chunking is not None:
            payload["chunking"] = self.chunking
        try:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise ChunkCacheError(f"{cached.file_path}: chunks not cacheable ({exc})") from exc
        atomic_write_bytes(entry, data)
        return entry

    def prune(self, live: dict[Path, str]) -> int:
        """Delete entries not matching a live ``{file_path: file_hash}`` pair, and temp files.

        Quarantined ``*.corrupt`` files are kept for inspection. Returns how many entries
        were removed. Call only when no worker is writing.
        """
        keep = {self.entry_path(path, h).name for path, h in live.items()}
        removed = 0
        if not self.chunks_dir.is_dir():
            return 0
        for entry in self.chunks_dir.iterdir():
            stale = entry.suffix == ENTRY_SUFFIX and entry.name not in keep
            if entry.name.endswith(".tmp") or entry.suffix == _LEGACY_SUFFIX or stale:
                entry.unlink(missing_ok=True)
                removed += entry.suffix in (ENTRY_SUFFIX, _LEGACY_SUFFIX)
        return removed

    def entries(self) -> list[Path]:
        """Return the entry files currently in the cache, sorted."""
        if not self.chunks_dir.is_dir():
            return []
        return sorted(p for p in self.chunks_dir.iterdir() if p.suffix == ENTRY_SUFFIX)


def _doc_to_json(doc: Document) -> dict[str, Any]:
    record: dict[str, Any] = {"page_content": doc.page_content, "metadata": doc.metadata}
    if doc.id is not None:
        record["id"] = doc.id
    return record


def _json_object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not a JSON object")
    return value


def _doc_from_json(record: Any) -> Document:
    record = _json_object(record, "chunk")
    text = record["page_content"]
    if not isinstance(text, str):
        raise ValueError("chunk text is not a string")
    doc_id = record.get("id")
    return Document(
        page_content=text,
        metadata=_json_object(record["metadata"], "chunk metadata"),
        id=None if doc_id is None else str(doc_id),
    )


def iter_cached_files(
    source_dir: Path,
    files: Iterable[Path] | None = None,
    *,
    missing: list[Path] | None = None,
    hashes: Mapping[Path, str] | None = None,
) -> Iterator[CachedFile]:
    """Yield the cached chunks of each source file, one file at a time.

    Files are those of :func:`klea_utils.stores.source_files.find_source_files` (or
    ``files``), in sorted order, each hashed now so only an entry matching the current
    bytes is used. Files without a valid entry (never converted, failed, or changed since)
    are skipped and, when ``missing`` is given, appended to it.

    Args:
        source_dir: The source folder.
        files: Source files to read (default: every file ``find_source_files`` returns).
        missing: Receives the files that have no valid entry.
        hashes: Content hashes already taken of some of the files (those are not hashed
            again), e.g. by a caller that counted their chunks first.
    """
    cache = ChunkCache(source_dir)
    known = hashes or {}
    for path in files if files is not None else find_source_files(cache.source_dir):
        try:
            file_hash = known.get(Path(path)) or compute_file_hash(path)
        except OSError:  # vanished or unreadable since it was listed: no valid entry
            if missing is not None:
                missing.append(Path(path))
            continue
        cached = cache.load(path, file_hash)
        if cached is None:
            if missing is not None:
                missing.append(Path(path))
            continue
        yield cached
