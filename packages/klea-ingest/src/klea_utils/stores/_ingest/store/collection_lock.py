"""One run at a time per collection: a lock file beside the collection's manifest.

``<source>/.klea-cache/<collection>.lock`` is locked with ``flock`` for the length of a
``build`` or ``store`` run. A second run of the same collection from the same source
folder fails at once with :class:`~klea_utils.stores.ingest_exceptions.CollectionBusyError`
instead of redoing the same work beside the first. The lock belongs to the open file, so
the kernel drops it when a process dies, however it dies: a killed run never leaves a
collection locked. Inside one process the lock is re-entrant (``build`` holds it across
its ``store_all``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from klea_utils.stores._ingest.store.manifest import manifest_path
from klea_utils.stores.ingest_exceptions import CollectionBusyError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, runs are not guarded
    fcntl = None  # type: ignore[assignment]

_held: dict[Path, int] = {}
_held_guard = threading.Lock()


def lock_path(source_dir: Path, collection: str) -> Path:
    """``<source_dir>/.klea-cache/<collection>.lock`` (the collection name is checked)."""
    manifest = manifest_path(source_dir, collection)
    return manifest.with_name(f"{collection}.lock")


@contextmanager
def collection_lock(source_dir: Path, collection: str) -> Iterator[Path]:
    """Hold the collection's lock for the block.

    Raises:
        CollectionBusyError: Another process holds it.
    """
    path = lock_path(Path(source_dir).resolve(), collection)
    with _held_guard:
        if path in _held:
            _held[path] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield path
        finally:
            with _held_guard:
                _held[path] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise CollectionBusyError(path, collection) from None
        with _held_guard:
            _held[path] = 1
        try:
            yield path
        finally:
            with _held_guard:
                del _held[path]
    finally:
        os.close(fd)  # closing the descriptor releases the lock
