"""The metadata map: the per-file template, loading a reviewed map, and per-chunk resolution.

A metadata map is a JSON object keyed by source file name. Each file entry holds a
``"DEFAULT"`` metadata dict (pre-filled by :func:`klea_utils.stores.biblio.extract_metadata`)
and one dict per heading chain (``"Methods > Data"``) found in that file; the researcher fills
those in where a section needs its own metadata (a different ``url``, say)::

    {"paper.pdf": {"DEFAULT": {"title": "...", "year": 2021},
                   "Methods > Data": {"url": "https://example.org/data"}}}

For each chunk the longest matching heading chain wins: the chunk's full chain first, then
shorter suffixes and prefixes of it. An empty ``{}`` falls through to the next candidate.
The chunk gets ``{**DEFAULT, **match}``. Heading keys are compared after Unicode, whitespace
and case normalization, so a hand-edited key still matches.

What is stored is decided afterwards, by the store-write policy next to the metadata key
sets (:func:`klea_utils.stores.metadata.apply_store_metadata_policy`).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.atomic import atomic_write_json
from klea_utils.stores.ingest_exceptions import MetadataMapError
from klea_utils.stores.layout import CACHE_DIR_NAME, TEMPLATE_FILE_NAME
from klea_utils.stores.metadata import MACHINE_SET_METADATA_KEYS
from klea_utils.stores.text import normalize_text

__all__ = [
    "DEFAULT_KEY",
    "HEADING_SEPARATOR",
    "candidate_chains",
    "fold_chunk_metadata",
    "heading_key",
    "load_metadata_map",
    "resolve_chunk_metadata",
    "template_entry",
    "template_path",
    "write_heading_template",
]

DEFAULT_KEY = "DEFAULT"
"""Key of the file-wide entry in a file's metadata-map entry."""

HEADING_SEPARATOR = " > "
"""Separator between the headings of a chain in metadata-map keys."""

_log = logging.getLogger(__name__)


def heading_key(headings: Iterable[str]) -> str:
    """The metadata-map key of a heading chain (``["A", "B"]`` -> ``"A > B"``)."""
    return HEADING_SEPARATOR.join(" ".join(str(h).split()) for h in headings)


def _normalize_key(key: str) -> str:
    parts = [p for p in re.split(r"\s*>\s*", normalize_text(key)) if p.strip()]
    return HEADING_SEPARATOR.join(" ".join(p.split()).casefold() for p in parts)


def template_path(source_dir: Path) -> Path:
    """The template path: ``<source_dir>/.klea-cache/metadata-map.template.json``."""
    return Path(source_dir) / CACHE_DIR_NAME / TEMPLATE_FILE_NAME


def template_entry(
    metadata: Mapping[str, Any], heading_chains: Iterable[Iterable[str]]
) -> dict[str, Any]:
    """One file's template entry: ``DEFAULT`` = ``metadata``, plus ``{}`` per unique chain."""
    entry: dict[str, Any] = {DEFAULT_KEY: dict(metadata)}
    for chain in heading_chains:
        key = heading_key(chain)
        if key and key != DEFAULT_KEY:
            entry.setdefault(key, {})
    return entry


def write_heading_template(
    file_headings: dict[str, dict[str, Any]],
    source_dir: Path,
    logger: logging.Logger | None = None,
) -> Path | None:
    """Write ``metadata-map.template.json`` into the source directory's cache folder.

    Each file gets its ``DEFAULT`` entry (pre-filled with the extracted metadata) and one
    empty entry per heading chain. When ``file_headings`` is empty (nothing was chunked)
    nothing is written, so an existing template is never clobbered with an empty one.

    Args:
        file_headings: ``{file_name: {"DEFAULT": {...}, "heading > heading": {}, ...}}``.
        source_dir: The source directory; the template goes to its ``.klea-cache`` folder.
        logger: Where to report; defaults to this module's logger.

    Returns:
        The template path, or ``None`` when nothing was written.
    """
    log = logger or _log
    if not file_headings:
        log.warning("No files were chunked: the metadata-map template was not (re)written")
        return None
    ordered = {name: _ordered_entry(entry) for name, entry in sorted(file_headings.items())}
    path = template_path(source_dir)
    atomic_write_json(path, ordered)
    log.info("Metadata-map template for %d file(s) written to %s", len(ordered), path)
    return path


def _ordered_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    default = entry.get(DEFAULT_KEY, {})
    rest = {k: v for k, v in entry.items() if k != DEFAULT_KEY}
    return {DEFAULT_KEY: default, **rest}


def load_metadata_map(path: Path) -> dict[str, dict[str, Any]]:
    """Read and validate a metadata map.

    Raises:
        MetadataMapError: When the file is missing or not JSON, or an entry is not an object
            of objects; the message names the file and the key at fault.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise MetadataMapError(f"{path}: metadata map not found") from exc
    except json.JSONDecodeError as exc:
        raise MetadataMapError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise MetadataMapError(f"{path}: cannot read the metadata map ({exc})") from exc
    if not isinstance(data, dict):
        raise MetadataMapError(f"{path}: a metadata map must be a JSON object keyed by file name")
    for file_name, entry in data.items():
        if not isinstance(entry, dict):
            raise MetadataMapError(f"{path}: entry {file_name!r} must be an object")
        for key, value in entry.items():
            if not isinstance(value, dict):
                raise MetadataMapError(
                    f"{path}: {file_name!r} -> {key!r} must be an object of metadata, "
                    f"got {type(value).__name__}"
                )
    return data


def candidate_chains(headings: list[str]) -> list[str]:
    """Heading-chain keys to try for a chunk, most specific first.

    The full chain, then for each shorter length its suffix (the innermost headings)
    and its prefix (the outermost ones).
    """
    chain = [h for h in headings if isinstance(h, str) and h.strip()]
    out: list[str] = []
    for length in range(len(chain), 0, -1):
        for part in (chain[len(chain) - length :], chain[:length]):
            key = heading_key(part)
            if key not in out:
                out.append(key)
    return out


def resolve_chunk_metadata(file_entry: Mapping[str, Any], headings: list[str]) -> dict[str, Any]:
    """``{**DEFAULT, **match}`` for a chunk under ``headings`` (see the module docstring)."""
    default = dict(file_entry.get(DEFAULT_KEY) or {})
    normalized = {_normalize_key(k): v for k, v in file_entry.items() if k != DEFAULT_KEY and v}
    for key in candidate_chains(headings):
        match = normalized.get(_normalize_key(key))
        if match:
            return {**default, **match}
    return default


def fold_chunk_metadata(
    chunk_metadata: Mapping[str, Any],
    file_entry: Mapping[str, Any],
) -> dict[str, Any]:
    """A chunk's metadata with the map folded in; machine-set keys always win."""
    headings = chunk_metadata.get("headings") or []
    resolved = resolve_chunk_metadata(file_entry, list(headings))
    folded = {**chunk_metadata, **resolved}
    for key in MACHINE_SET_METADATA_KEYS:
        if key in chunk_metadata:
            folded[key] = chunk_metadata[key]
    return folded


def file_entry_for(
    metadata_map: Mapping[str, Any], file_name: str, map_path: Path | str | None
) -> Mapping[str, Any]:
    """The map entry of ``file_name``.

    Raises:
        MetadataMapError: When the map has no entry for the file (naming both).
    """
    entry: Mapping[str, Any] | None = metadata_map.get(file_name)
    if entry is None:
        where = f"{map_path}: " if map_path else ""
        raise MetadataMapError(
            f"{where}no entry for source file {file_name!r}; add it to the metadata map "
            f"(run 'klea-stores-create map-lint' to list every missing file)"
        )
    return entry
