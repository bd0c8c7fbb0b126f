"""The library's PDF files as klea-serve hands them out: looked up by stored name and hash.

A request names a paper by its file name; :class:`LibraryFiles` answers only for a name the
stores hold (with the ``file_hash`` ingestion recorded), reads it only from the papers
folder given at start-up, and only when the file there still has that hash. Nothing of the
request becomes a path: the stored name is checked to be a plain file name and joined to
the folder. A paper the stores do not know, or whose file is gone from the folder, raises
:class:`PaperFileMissingError` (404); a file changed since it was stored raises
:class:`PaperFileChangedError` (409). Messages name the paper, never a path.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

from klea_utils.stores.serve.core.service import PaperFileChangedError

__all__ = ["LibraryFiles", "PaperFileChangedError", "PaperFileMissingError"]

_HASH_BLOCK = 1 << 20


class PaperFileMissingError(LookupError):
    """The paper is not in the library, or its file is not in the papers folder (404)."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _plain_name(name: str) -> bool:
    return (
        bool(name)
        and name not in (".", "..")
        and "/" not in name
        and "\\" not in name
        and "\x00" not in name
        and os.path.basename(name) == name
    )


class LibraryFiles:
    """Files of the papers folder, by the file name and hash the stores recorded.

    Args:
        folder: The papers folder (the one the stores were built from).
        stored_hash: The ``file_hash`` the stores hold for a file name, ``None`` when the
            stores hold no such paper.
    """

    def __init__(self, folder: Path, stored_hash: Callable[[str], str | None]) -> None:
        if not folder.is_dir():
            raise ValueError("the papers folder is not a folder")
        self.folder = folder.resolve()
        self._stored_hash = stored_hash
        self._seen: dict[Path, tuple[int, int, str]] = {}
        self._lock = threading.Lock()

    def path(self, file_name: str) -> Path:
        """The library file of ``file_name``, checked against the stored hash.

        Raises:
            PaperFileMissingError: No such paper, or its file is gone from the folder.
            PaperFileChangedError: The file's bytes differ from the stored ones.
        """
        stored = self._stored_hash(file_name)
        if stored is None or not _plain_name(file_name):
            raise PaperFileMissingError(f"no paper {file_name!r} in the library")
        path = self.folder / file_name
        try:
            stat = path.stat()
        except OSError as exc:
            raise PaperFileMissingError(
                f"the file of {file_name!r} is no longer in the papers folder (moved or "
                "deleted since the stores were built)"
            ) from exc
        if not path.is_file():
            raise PaperFileMissingError(f"the file of {file_name!r} is not a regular file")
        if self._hash(path, stat.st_mtime_ns, stat.st_size) != stored:
            raise PaperFileChangedError(
                f"the file of {file_name!r} has changed since the stores were built "
                "(rebuild them to serve it)"
            )
        return path

    def _hash(self, path: Path, mtime_ns: int, size: int) -> str:
        with self._lock:
            seen = self._seen.get(path)
        if seen is not None and seen[:2] == (mtime_ns, size):
            return seen[2]
        digest = _sha256(path)
        with self._lock:
            self._seen[path] = (mtime_ns, size, digest)
        return digest
