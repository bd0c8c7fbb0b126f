"""Which files of a source folder an ingestion run converts (public, standard library only).

:func:`find_source_files` is the one enumeration of "what the store will ingest": the
ingestion pipeline, ``map-lint`` and ``klea_utils.stores.utils.find_source_files`` (the
seed's name, re-exported) all use it. It needs no Docling (the extensions Docling converts
are written out in :data:`DOCLING_EXTENSIONS`), so it lives in klea-retrieval and works
without klea-ingest; ``klea_utils.stores.source_files`` (klea-ingest) re-exports it beside
the unique-name check the chunk and store phases add.
"""

from __future__ import annotations

import logging
from pathlib import Path

from klea_utils.stores._retrieval.source_walk import (
    display_path,
    unusable_reason,
    walk_candidates,
)
from klea_utils.stores.layout import CACHE_DIR_NAME

__all__ = [
    "CHROMA_DB_FILE_NAME",
    "DOCLING_EXTENSIONS",
    "ORGANISE_DIR_NAMES",
    "find_source_files",
    "supported_extensions",
]

CHROMA_DB_FILE_NAME = "chroma.sqlite3"
"""A folder holding this file is a Chroma store, never a source of documents."""


DOCLING_EXTENSIONS = frozenset(
    {
        "aac",
        "adoc",
        "afp",
        "asc",
        "asciidoc",
        "avi",
        "bmp",
        "boxnote",
        "csv",
        "dclg",
        "dclg.xml",
        "dclx",
        "doc",
        "docm",
        "docx",
        "dot",
        "dotm",
        "dotx",
        "ebc",
        "ebcdic",
        "eml",
        "epub",
        "flac",
        "gif",
        "htm",
        "html",
        "jpeg",
        "jpg",
        "json",
        "key",
        "latex",
        "m4a",
        "markdown",
        "md",
        "mht",
        "mhtml",
        "mkv",
        "mov",
        "mp3",
        "mp4",
        "msg",
        "numbers",
        "nxml",
        "odp",
        "ods",
        "odt",
        "ogg",
        "otp",
        "ots",
        "ott",
        "pages",
        "pdf",
        "png",
        "pot",
        "potm",
        "potx",
        "pps",
        "ppsm",
        "ppsx",
        "ppt",
        "pptm",
        "pptx",
        "qmd",
        "rmd",
        "rtf",
        "tar.gz",
        "tex",
        "text",
        "tif",
        "tiff",
        "txt",
        "vtt",
        "wav",
        "webm",
        "webp",
        "xbrl",
        "xhtml",
        "xls",
        "xlsm",
        "xlsx",
        "xlt",
        "xltm",
        "xltx",
        "xml",
    }
)
"""Docling's ``FormatToExtensions``, written out so that listing files imports no Docling
(which loads torch); a test keeps it equal to the installed Docling's."""


def supported_extensions() -> frozenset[str]:
    """Return every file extension (lower case, no dot) Docling can convert.

    :data:`DOCLING_EXTENSIONS`, Docling's ``FormatToExtensions``; multi-part extensions
    such as ``tar.gz`` are kept whole.
    """
    return DOCLING_EXTENSIONS


def _matches(path: Path, extensions: frozenset[str]) -> bool:
    name = path.name.lower()
    suffixes = name.split(".")[1:]
    # Try the longest compound suffix first ("tar.gz" before "gz").
    return any(".".join(suffixes[i:]) in extensions for i in range(len(suffixes)))


def _store_dirs(source_dir: Path, store_dir: Path | None) -> list[Path]:
    """The store folders inside ``source_dir``: never ``source_dir`` itself or a parent."""
    root = source_dir.resolve()
    dirs = [db.parent.resolve() for db in source_dir.rglob(CHROMA_DB_FILE_NAME)]
    if store_dir is not None:
        dirs.append(Path(store_dir).resolve())
    return [d for d in dirs if d != root and d.is_relative_to(root)]


ORGANISE_DIR_NAMES = ("ocr", "no-ocr")
"""Folders ``pre-check --organise`` copies the source files into (scanned PDFs, the rest)."""


def _organised_copy(rel_parts: tuple[str, ...], source_dir: Path) -> bool:
    """Whether a file is ``pre-check --organise``'s copy of a file still in ``source_dir``."""
    if len(rel_parts) < 2 or rel_parts[0] not in ORGANISE_DIR_NAMES:
        return False
    return source_dir.joinpath(*rel_parts[1:]).is_file()


def _excluded(path: Path, source_dir: Path, excluded_dirs: list[Path]) -> bool:
    rel_parts = path.relative_to(source_dir).parts
    if CACHE_DIR_NAME in rel_parts[:-1] or _organised_copy(rel_parts, source_dir):
        return True
    resolved = path.resolve()
    return any(resolved.is_relative_to(d) for d in excluded_dirs)


def find_source_files(
    source_dir: Path,
    *,
    metadata_map_path: Path | None = None,
    store_dir: Path | None = None,
    logger: logging.Logger | None = None,
) -> list[Path]:
    """Walk ``source_dir`` and return files whose extensions are in Docling's FormatToExtensions.

    This is the canonical "what will the store ingest" enumeration: the ingestion
    pipeline and map-lint both use it. Files with unsupported extensions are logged as a
    warning (when a logger is given) and skipped.

    Generated artifacts are excluded: the cache directory (``.klea-cache``), the metadata
    map passed via ``metadata_map_path`` (when it lives inside ``source_dir``), the
    vector store directory (either the configured ``store_dir`` when it lies under
    ``source_dir``, or any directory inside ``source_dir`` that contains a
    ``chroma.sqlite3``), and the copies ``pre-check --organise`` made in ``ocr/`` and
    ``no-ocr/`` (a file there whose original, at the same relative path under
    ``source_dir``, still exists; a file whose original is gone is found in its place).

    Args:
        source_dir: Directory to walk recursively.
        metadata_map_path: The metadata-map file to exclude from ingestion.
        store_dir: Configured vector store directory that may live inside the source
            directory; ``None`` for remote backends with no local folder.
        logger: Optional logger for the unsupported-extension warning.

    Returns:
        Sorted list of files with supported extensions.

    Raises:
        NotADirectoryError: When ``source_dir`` is not an existing directory.
    """
    source_dir = Path(source_dir)
    if not source_dir.is_dir():
        raise NotADirectoryError(f"source directory {source_dir} does not exist or is not a folder")
    extensions = supported_extensions()
    excluded_dirs = _store_dirs(source_dir, store_dir)
    map_file = Path(metadata_map_path).resolve() if metadata_map_path is not None else None
    found: list[Path] = []
    skipped: list[Path] = []
    log = logger if logger is not None else logging.getLogger(__name__)
    for path in walk_candidates(source_dir, log):
        if not path.is_file() or _excluded(path, source_dir, excluded_dirs):
            continue
        if map_file is not None and path.resolve() == map_file:
            continue
        if _matches(path, extensions):
            if (reason := unusable_reason(path)) is not None:
                log.error("%s: %s; skipped", display_path(path), reason)
                continue
            found.append(path)
        elif not path.name.startswith("."):
            skipped.append(path)
    if logger is not None and skipped:
        names = ", ".join(display_path(p.relative_to(source_dir)) for p in sorted(skipped)[:10])
        more = f" (and {len(skipped) - 10} more)" if len(skipped) > 10 else ""
        logger.warning(
            "Skipping %d file(s) with extensions Docling cannot convert: %s%s",
            len(skipped),
            names,
            more,
        )
    return sorted(found)
