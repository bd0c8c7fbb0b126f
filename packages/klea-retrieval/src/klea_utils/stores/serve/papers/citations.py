"""A library's citations as ``klea-serve`` answers them: :class:`CitationFiles`.

Each domain of the stores configuration may name its citation-links file (``citations``,
written by ``klea-stores-create build``). :class:`CitationFiles` reads them on first use
and again whenever one changes on disk (its size or modification time), so a rebuilt
library's links are answered without a restart; a domain without the key, or whose file is
absent, adds nothing. Where two domains' files hold the same paper, the first domain's
record is answered.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from klea_utils.stores._retrieval.citations_file import LibraryCitations, read_citations_file
from klea_utils.stores.config import RetrieverConfig

__all__ = ["CitationFiles", "citation_paths"]

_Stamp = tuple[tuple[int, int] | None, ...]


def citation_paths(config: RetrieverConfig) -> list[Path]:
    """The citation-links files ``config``'s domains name, in domain order, each once."""
    paths = [Path(d.citations).expanduser() for d in config.domains.values() if d.citations]
    return list(dict.fromkeys(paths))


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)


class CitationFiles:
    """The references and citing papers of each paper, read from the configured files."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = tuple(paths)
        self._lock = threading.Lock()
        self._read: tuple[_Stamp, LibraryCitations] | None = None

    def library(self) -> LibraryCitations:
        """Every file's citations, read again when a file changed.

        Raises:
            CitationsFileError: A file is malformed (the message names the file and field).
        """
        stamp = tuple(_stamp(path) for path in self.paths)
        with self._lock:
            if self._read is None or self._read[0] != stamp:
                merged = LibraryCitations()
                for path in self.paths:
                    merged = merged.merged(read_citations_file(path))
                self._read = (stamp, merged)
            return self._read[1]

    def of(self, file_name: str) -> dict[str, list[Any]]:
        """``{"references": [...], "cited_by": [...]}`` of ``file_name`` (empty if none)."""
        return self.library().of(file_name)
