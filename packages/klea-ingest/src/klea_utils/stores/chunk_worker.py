"""Subprocess chunking workers: isolate Docling's per-conversion memory growth.

Each batch of files is converted in a freshly spawned process that exits afterwards, so
memory Docling does not give back is reclaimed by the OS. A worker stops at whichever
comes first, its RSS cap or the batch size, and reports the rest as ``deferred``; results
stream back over a queue one file at a time, and the index of the file being converted is
kept in shared memory so the parent knows which file a dead worker was working on. The
worker's log records are forwarded to the parent's loggers of the same names (a logging
``QueueHandler`` in the worker, a ``QueueListener`` in the parent), so the parent's
logging configuration decides what is shown.

Compared with a naive dispatcher this one guarantees progress and isolates bad files:

- a fresh worker always converts at least one file before it may defer, so a cap below
  the worker's start-up size cannot defer forever;
- when a worker dies (OOM kill, segfault, SIGKILL) the files it finished are kept (their
  cache entries are on disk), the file it was converting is retried alone in a fresh
  worker, and the other unfinished files are re-dispatched; a file that kills a worker
  twice is marked ``failed`` as a poison file;
- a worker that makes no progress for ``file_timeout_s`` is killed and treated as dead.
"""

# The pieces live in klea_utils.stores._ingest: worker_process (the spawned process and the
# parent's handle on it), dispatch (the bookkeeping and the loop that watches a worker),
# batch_conversion (the per-file loop both entry points run).

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from klea_utils.stores._ingest.workers.batch_conversion import convert_in_process
from klea_utils.stores._ingest.workers.dispatch import dispatch
from klea_utils.stores._ingest.workers.worker_process import WorkerProcess, run_worker
from klea_utils.stores._ingest.workers.worker_results import (
    RESULT_STATUSES,
    ChunkItemResult,
    ChunkWorkerConfig,
    ResultStatus,
)

__all__ = [
    "DEFAULT_WORKER_MEM_LIMIT",
    "RESULT_STATUSES",
    "ChunkItemResult",
    "ChunkWorkerConfig",
    "ResultStatus",
    "convert_batch_worker",
    "dispatch_conversion_batches",
]

DEFAULT_WORKER_MEM_LIMIT = 4 * 1024**3
"""Default RSS cap of one conversion worker: 4 GiB (it includes Docling's start-up size)."""


def convert_batch_worker(
    config: ChunkWorkerConfig,
    items: list[tuple[str, str]],
    queue: Any | None = None,
    current_file: Any | None = None,
) -> list[ChunkItemResult] | None:
    """Convert and cache ``items`` in this process, one result per item.

    Without ``queue`` the files are converted here and the results returned. With one,
    this runs a worker's body (as a spawned worker's target): each result is put on
    ``queue``, then a done marker, and the worker logs to its own stderr. Before each
    file after the first, if the process RSS exceeds ``config.mem_limit_bytes`` the
    remaining items are reported as ``deferred``.

    Args:
        config: Worker configuration.
        items: ``(absolute_file_path, file_hash)`` tuples to process.
        queue: Queue for incremental puts (a worker) or ``None``.
        current_file: Shared ``multiprocessing.Value('i')`` set to the index in ``items``
            of the file being converted (``-1`` between files), or ``None``.

    Returns:
        The list of results when ``queue`` is ``None``, else ``None``.
    """
    if queue is None:
        return convert_in_process(config, items)
    run_worker(config, items, queue, current_file)
    return None


def dispatch_conversion_batches(
    parent_logger: logging.Logger,
    config: ChunkWorkerConfig,
    items: list[tuple[str, str]],
    batch_size: int,
    workers: int = 1,
    *,
    on_converted: Callable[[ChunkItemResult], object] | None = None,
) -> list[ChunkItemResult]:
    """Convert ``items`` by spawning a fresh worker process per batch.

    Up to ``workers`` worker processes run at once, each on its own batch, each under the
    RSS cap; every rule below holds for each of them.

    A worker stops at its RSS cap or after ``batch_size`` files; deferred files go to a
    fresh worker. When a worker dies, finished files are kept, the file it was converting
    is retried alone in a fresh worker (a second death marks it ``failed`` as a poison
    file) and the other unfinished files are re-dispatched. A worker with no progress for
    ``config.file_timeout_s`` seconds is killed and handled the same way.

    Args:
        parent_logger: Logger for dispatch progress and errors.
        config: Worker configuration.
        items: ``(absolute_file_path, file_hash)`` items to convert.
        batch_size: Max items handed to any single worker.
        workers: Worker processes running at once (an addition; 1, the default, is the
            original one-at-a-time dispatcher).
        on_converted: Told each file whose chunks are cached, as its result lands (an
            addition: the build embeds them while other files convert); what it raises
            ends the dispatch.

    Returns:
        One final ``ChunkItemResult`` per item (never ``deferred``), in ``items`` order.
    """
    return dispatch(
        items, batch_size, config, parent_logger, _start_process, workers, on_converted=on_converted
    )


def _start_process(config: ChunkWorkerConfig, batch: list[tuple[str, str]]) -> WorkerProcess:
    return WorkerProcess(config, batch).start()
