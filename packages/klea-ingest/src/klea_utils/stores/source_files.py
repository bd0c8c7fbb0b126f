"""The source files an ingestion run converts, each name once.

:func:`find_source_files` and the names it is built on are klea-retrieval's
(:mod:`klea_utils.stores.source_listing`), re-exported here; this module adds the check the
chunk and store phases run before any work: no two source files may share a name.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from klea_utils.stores.ingest_exceptions import SourceLayoutError
from klea_utils.stores.layout import CACHE_DIR_NAME
from klea_utils.stores.source_listing import (
    CHROMA_DB_FILE_NAME,
    DOCLING_EXTENSIONS,
    ORGANISE_DIR_NAMES,
    find_source_files,
    supported_extensions,
)

__all__ = [
    "CACHE_DIR_NAME",
    "CHROMA_DB_FILE_NAME",
    "DOCLING_EXTENSIONS",
    "ORGANISE_DIR_NAMES",
    "check_unique_names",
    "find_source_files",
    "find_unique_source_files",
    "supported_extensions",
]


def check_unique_names(files: Iterable[Path], source_dir: Path) -> None:
    """Refuse two source files with the same name (chunk ids and map keys use the name).

    Raises:
        SourceLayoutError: naming every clash with both paths.
    """
    by_name: dict[str, list[Path]] = defaultdict(list)
    for path in files:
        by_name[Path(path).name].append(Path(path))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    if clashes:
        detail = "; ".join(
            f"{name}: " + " and ".join(str(p) for p in paths)
            for name, paths in sorted(clashes.items())
        )
        raise SourceLayoutError(
            f"{source_dir}: source files must have unique names (chunk ids and metadata-map "
            f"keys use the file name), but these repeat: {detail}. Rename one of each pair."
        )


def find_unique_source_files(
    source_dir: Path,
    *,
    metadata_map_path: Path | None = None,
    store_dir: Path | None = None,
    logger: logging.Logger | None = None,
) -> list[Path]:
    """:func:`find_source_files`, then :func:`check_unique_names` on the result.

    What the chunk and store phases ingest: both refuse a source folder with two files
    of the same name before doing any work.
    """
    files = find_source_files(
        source_dir, metadata_map_path=metadata_map_path, store_dir=store_dir, logger=logger
    )
    check_unique_names(files, source_dir)
    return files
