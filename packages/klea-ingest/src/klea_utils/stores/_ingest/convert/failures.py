"""The files whose conversion failed, kept in the cache so every later step can say why.

``chunk_all`` records its failed files in ``<source>/.klea-cache/failed-files.json``
(``{file_name: {"file_hash": ..., "error": ...}}``), rewritten on every run: a failed
file has no cache entry, so each run converts it again and records it again. ``store``,
``map-lint`` and ``build`` read it to name each file that was not stored and why, and to
leave those files out of the metadata map's required entries.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.atomic import atomic_write_json
from klea_utils.stores._ingest.convert.not_stored import NOT_CHUNKED as NOT_CHUNKED_LABEL
from klea_utils.stores._ingest.convert.not_stored import reason
from klea_utils.stores.source_files import CACHE_DIR_NAME

__all__ = [
    "FAILURES_FILE_NAME",
    "NOT_CHUNKED",
    "failures_path",
    "format_not_chunked",
    "format_not_stored",
    "read_conversion_failures",
    "write_conversion_failures",
]

FAILURES_FILE_NAME = "failed-files.json"
"""Name of the failure record inside the cache folder."""

NOT_CHUNKED = reason(
    NOT_CHUNKED_LABEL,
    "no cached chunks (run 'klea-stores-create chunk' first, or the file changed)",
)
"""Reason given for a file without chunks and without a recorded reason: ``store`` run
without a ``chunk`` (or ``build``) since the file was added or changed."""


def failures_path(source_dir: Path) -> Path:
    """Return ``<source_dir>/.klea-cache/failed-files.json``."""
    return Path(source_dir) / CACHE_DIR_NAME / FAILURES_FILE_NAME


def write_conversion_failures(source_dir: Path, results: Iterable[Any]) -> dict[str, str]:
    """Record why files of a run were not chunked; return ``{file_name: error}``.

    ``results`` are ``ChunkItemResult`` objects: the ``failed`` ones, and the
    ``zero_chunks`` ones that carry a reason (a file read without any chunk is not stored
    either, and ``store`` must say why rather than ask for a ``chunk`` run just made). An
    empty record removes the file.
    """
    failed = {
        r.file_name: {"file_hash": r.file_hash, "error": str(r.error), "status": r.status}
        for r in results
        if r.status == "failed" or (r.status == "zero_chunks" and r.error)
    }
    path = failures_path(source_dir)
    if failed:
        atomic_write_json(path, dict(sorted(failed.items())))
    else:
        path.unlink(missing_ok=True)
    return {name: entry["error"] for name, entry in failed.items()}


def read_conversion_failures(source_dir: Path) -> dict[str, str]:
    """Return ``{file_name: error}`` from the last ``chunk_all`` run (empty when none)."""
    try:
        data = json.loads(failures_path(source_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(name): str(entry.get("error", "conversion failed"))
        for name, entry in data.items()
        if isinstance(entry, dict)
    }


def format_not_stored(files: Iterable[Path | str], reasons: Mapping[str, str]) -> str:
    """One line naming each file that was not stored and why (``''`` when none)."""
    return _line("not stored", files, reasons)


def format_not_chunked(files: Iterable[Path | str], reasons: Mapping[str, str]) -> str:
    """One line naming each file that produced no chunks and why (``''`` when none)."""
    return _line("not chunked", files, reasons)


def _line(what: str, files: Iterable[Path | str], reasons: Mapping[str, str]) -> str:
    names = [Path(f).name for f in files]
    if not names:
        return ""
    parts = [
        f"{name} ({_one_line(_without_path(name, reasons.get(name, NOT_CHUNKED)))})"
        for name in names
    ]
    return f"{len(names)} file(s) {what}: " + "; ".join(parts)


def _without_path(name: str, text: str) -> str:
    """The reason without the leading ``/path/to/<name>: `` the errors start with."""
    head, sep, rest = text.partition(f"{name}: ")
    return rest if sep and (not head or head.endswith(("/", "\\"))) else text


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
