"""The DOI look-up cache (``<source>/.klea-cache/doi-cache.json``), written atomically in batches.

Several conversion workers may share one cache file, so a flush re-reads the file and merges
before replacing it: entries written by another process are never lost.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.atomic import atomic_write_json

DOI_CACHE_FILE_NAME = "doi-cache.json"
"""File name of the DOI cache inside the cache directory."""

FLUSH_EVERY = 10
"""New entries held in memory before the cache is written back to disk."""

_log = logging.getLogger(__name__)
_OPEN: dict[Path, DoiCache] = {}
_OPEN_LOCK = threading.Lock()


def _read(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        _log.warning("%s: unreadable DOI cache ignored (%s)", path, exc)
        return {}
    if not isinstance(data, dict):
        _log.warning("%s: DOI cache is not a JSON object; ignored", path)
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict)}


class DoiCache:
    """DOI -> normalized bibliographic record, persisted as one JSON object.

    A record of ``{}`` means "looked up, nothing found" so the services are not asked again.
    """

    def __init__(self, path: Path, flush_every: int = FLUSH_EVERY) -> None:
        if flush_every < 1:
            raise ValueError(f"flush_every must be >= 1, got {flush_every}")
        self.path = path
        self.flush_every = flush_every
        self._entries = _read(path)
        self._pending: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(doi: str) -> str:
        """Cache key of a DOI: DOIs are case-insensitive, so keys are lowercased."""
        return doi.strip().lower()

    def get(self, doi: str) -> dict[str, Any] | None:
        """Return the cached record for ``doi`` (``{}`` for a cached miss), or ``None``."""
        with self._lock:
            return self._entries.get(self.key(doi))

    def records(self) -> dict[str, dict[str, Any]]:
        """A copy of every record held (those on disk when opened, and those put since)."""
        with self._lock:
            return dict(self._entries)

    def put(self, doi: str, record: dict[str, Any]) -> None:
        """Remember ``record`` for ``doi``; flushes once :data:`FLUSH_EVERY` entries are pending."""
        with self._lock:
            self._entries[self.key(doi)] = record
            self._pending[self.key(doi)] = record
            due = len(self._pending) >= self.flush_every
        if due:
            self.flush()

    def flush(self) -> None:
        """Merge pending entries into the file on disk and replace it atomically."""
        with self._lock:
            if not self._pending:
                return
            merged = _read(self.path)
            merged.update(self._pending)
            try:
                atomic_write_json(self.path, merged)
            except OSError as exc:
                _log.warning("%s: could not write the DOI cache (%s)", self.path, exc)
                return
            self._entries = {**merged, **self._entries}
            self._pending.clear()


def open_doi_cache(cache_dir: Path) -> DoiCache:
    """Return the process-wide cache for ``cache_dir`` (flushed at interpreter exit)."""
    path = (cache_dir / DOI_CACHE_FILE_NAME).resolve()
    with _OPEN_LOCK:
        cache = _OPEN.get(path)
        if cache is None:
            cache = _OPEN[path] = DoiCache(path)
        return cache


def flush_all() -> None:
    """Flush every open DOI cache (registered with :mod:`atexit`)."""
    with _OPEN_LOCK:
        caches = list(_OPEN.values())
    for cache in caches:
        cache.flush()


atexit.register(flush_all)
