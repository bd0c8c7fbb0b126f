"""The interface between the dispatcher and an executor of conversion batches.

:class:`~klea_utils.stores._ingest.workers.worker_process.WorkerProcess` (a spawned process) is
one implementation; another executor (a Ray actor, say) implements the same methods and
passes its own :data:`StartWorker` to :func:`klea_utils.stores._ingest.workers.dispatch.dispatch`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from klea_utils.stores._ingest.workers.worker_results import (
    ChunkItemResult,
    ChunkWorkerConfig,
    WorkItem,
)

__all__ = ["ConversionWorker", "StartWorker"]


class ConversionWorker(Protocol):
    """One worker converting one batch, as the dispatcher drives it."""

    finished: bool
    """Set once the worker has reported every file of its batch."""

    def poll(self, timeout: float) -> ChunkItemResult | None:
        """The next result, waiting up to ``timeout`` seconds; ``None`` if none came."""

    def current_index(self) -> int:
        """Index in the batch of the file being converted; ``-1`` between files."""

    def exit_reason(self) -> str | None:
        """``None`` while the worker runs; else how it ended."""

    def kill(self) -> None:
        """Stop the worker now."""

    def drain(self) -> list[ChunkItemResult]:
        """Once the worker has stopped: results sent but not yet polled."""

    def close(self) -> None:
        """Release the worker (killing it if it still runs)."""


StartWorker = Callable[[ChunkWorkerConfig, list[WorkItem]], ConversionWorker]
"""Starts a worker on a batch: ``start(config, batch)``."""
