"""Walking a source folder without aborting on, or silently dropping, what cannot be read.

:func:`walk_candidates` yields every regular file (or link to one) under a folder and logs
one warning for each thing it has to leave out: a folder it cannot list, a broken or
looping symbolic link, a link to a folder (not followed, so a link back up the tree cannot
loop). :func:`unusable_reason` says why a file the run would convert cannot be: a name
that is not valid UTF-8 (chunk ids, the manifest and every store need text), or a file
this user may not read. The caller logs that as one named per-file error and goes on.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Iterator
from pathlib import Path


def display_path(path: Path | str) -> str:
    """``path`` as printable text: bytes that are not UTF-8 shown as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def walk_candidates(source_dir: Path, logger: logging.Logger) -> Iterator[Path]:
    """Yield every file under ``source_dir``, warning about what cannot be walked."""

    def unlistable(exc: OSError) -> None:
        logger.warning(
            "%s: cannot list this folder (%s); its files are skipped",
            display_path(exc.filename or source_dir),
            exc.strerror or exc,
        )

    for root, dirs, files in os.walk(source_dir, onerror=unlistable, followlinks=False):
        base = Path(root)
        for name in dirs:
            if (base / name).is_symlink():
                logger.warning(
                    "%s: a symbolic link to a folder; not followed", display_path(base / name)
                )
        for name in files:
            path = base / name
            if path.is_symlink() and (problem := _link_problem(path)) is not None:
                logger.warning("%s: %s; skipped", display_path(path), problem)
                continue
            yield path


def _link_problem(path: Path) -> str | None:
    try:
        path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link loop"
        return "a broken symbolic link (its target does not exist)"
    return None


def unusable_reason(path: Path) -> str | None:
    """Why ``path`` cannot be ingested, or ``None`` when it can."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return "the file name is not valid UTF-8; rename the file to ingest it"
    if not os.access(path, os.R_OK):
        return "the file cannot be read (permission denied)"
    return None
