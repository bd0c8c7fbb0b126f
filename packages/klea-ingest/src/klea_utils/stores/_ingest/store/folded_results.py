"""The chunk cache read back one file at a time, with the metadata map folded into each chunk."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.convert.failures import format_not_stored, read_conversion_failures
from klea_utils.stores.chunk_cache import ChunkCache, compute_file_hash, iter_cached_files
from klea_utils.stores.ingest_exceptions import MetadataMapError
from klea_utils.stores.metadata_map import (
    file_entry_for,
    fold_chunk_metadata,
    load_metadata_map,
    template_entry,
    template_path,
)
from langchain_core.documents import Document

__all__ = ["FoldedResults", "fold_cached_results"]


@dataclass
class FoldedResults:
    """The chunk cache streamed one file at a time, with the metadata map folded in.

    Iterating yields ``(file_hash, docs, file_path)`` per cached source file. Files with no
    cache entry (never converted or conversion failed) are skipped, listed in
    :attr:`missing` once iteration has finished and, when ``report_missing``, named in
    one logged error with the reason each failed. :meth:`chunk_counts` tells, before
    iterating, how many chunks each file will yield, without reading any chunks.
    """

    source_dir: Path
    metadata_map: Mapping[str, Any] | None
    map_path: Path | None
    files: list[Path]
    logger: logging.Logger
    report_missing: bool = True
    missing: list[Path] = field(default_factory=list, init=False)
    _hashes: dict[Path, str] = field(default_factory=dict, init=False, repr=False)

    def chunk_counts(self) -> dict[Path, tuple[str, int]]:
        """``{file_path: (file_hash, chunk count)}`` of the files with a cache entry.

        Reads each entry's recorded count (see
        :meth:`~klea_utils.stores.chunk_cache.ChunkCache.chunk_count`), not its chunks. The
        hashes taken here are reused by the next iteration, so no file is hashed twice.
        """
        cache = ChunkCache(self.source_dir)
        counts: dict[Path, tuple[str, int]] = {}
        for path in self.files:
            try:
                file_hash = compute_file_hash(path)
            except OSError:  # vanished or unreadable: iteration lists it as missing
                continue
            self._hashes[path] = file_hash
            count = cache.chunk_count(path, file_hash)
            if count is not None:
                counts[path] = (file_hash, count)
        return counts

    def __iter__(self) -> Iterator[tuple[str, list[Document], Path]]:
        self.missing = []
        hashes, self._hashes = self._hashes, {}
        for cached in iter_cached_files(
            self.source_dir, self.files, missing=self.missing, hashes=hashes
        ):
            name = cached.file_path.name
            if self.metadata_map is None:
                entry: Mapping[str, Any] = template_entry(cached.metadata, [])
            elif not cached.docs and name not in self.metadata_map:
                entry = {}  # nothing to fold: a file without chunks needs no map entry
            else:
                entry = file_entry_for(self.metadata_map, name, self.map_path)
            docs = [
                Document(
                    page_content=d.page_content, metadata=fold_chunk_metadata(d.metadata, entry)
                )
                for d in cached.docs
            ]
            yield cached.file_hash, docs, cached.file_path
        if self.missing and self.report_missing:
            reasons = read_conversion_failures(self.source_dir)
            self.logger.error("%s", format_not_stored(self.missing, reasons))


def _needing_entries(source_dir: Path, candidates: list[Path]) -> list[str]:
    """Names of ``candidates`` that have cached chunks (a failed file needs no map entry)."""
    cache = ChunkCache(source_dir)
    return [p.name for p in candidates if cache.chunk_count(p, compute_file_hash(p))]


def fold_cached_results(
    source_dir: Path,
    map_path: Path | None,
    files: list[Path],
    logger: logging.Logger,
    report_missing: bool = True,
) -> FoldedResults:
    """Stream the cached chunks of ``files`` with the metadata map at ``map_path`` applied.

    Without ``map_path`` the template ``chunk`` wrote
    (``<source>/.klea-cache/metadata-map.template.json``) is the map when present, else
    each file's extracted metadata. Every file with cached chunks must have an entry in
    the map; all missing entries are reported at once, before anything is streamed. Files
    whose conversion failed (no cache entry) or produced no chunks need none.

    Raises:
        MetadataMapError: The map is unreadable or lacks an entry for a source file.
    """
    if map_path is None and template_path(source_dir).is_file():
        map_path = template_path(source_dir)
        logger.info("No --metadata-map given: using the template %s", map_path)
    metadata_map = load_metadata_map(map_path) if map_path is not None else None
    if metadata_map is not None:
        absent = _needing_entries(source_dir, [p for p in files if p.name not in metadata_map])
        if absent:
            raise MetadataMapError(
                f"{map_path}: no entry for source file(s) {', '.join(map(repr, absent))}; "
                "add them to the metadata map (see 'klea-stores-create map-lint')"
            )
    return FoldedResults(source_dir, metadata_map, map_path, files, logger, report_missing)
