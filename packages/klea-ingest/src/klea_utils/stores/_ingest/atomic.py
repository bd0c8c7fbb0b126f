"""Atomic file writes: write a sibling temporary file, fsync it, then ``os.replace``."""

from __future__ import annotations

import functools
import json
import os
import tempfile
from pathlib import Path
from typing import Any


@functools.cache
def file_mode() -> int:
    """The mode a new file gets from ``open``: ``0o666`` less the process umask.

    ``tempfile.mkstemp`` creates files readable by their owner only (0600); files renamed
    into place from one are given this mode, so outputs respect the umask like any file.
    Read once per process (reading the umask means setting it).
    """
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see either the old or the new file, never half.

    The file gets the mode a plain ``open`` would give it (see :func:`file_mode`).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, payload: Any) -> None:
    """Serialize ``payload`` as indented UTF-8 JSON and write it atomically to ``path``."""
    text = json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))
