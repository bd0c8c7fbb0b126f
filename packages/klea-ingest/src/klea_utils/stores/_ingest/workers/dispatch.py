"""Dispatch batches of files to conversion workers and survive the workers that die.

Three pieces, each with one job:

- :class:`~klea_utils.stores._ingest.workers.worker_interface.ConversionWorker`, what the
  dispatcher needs of one running worker (poll, drain, kill), started by a
  :data:`~klea_utils.stores._ingest.workers.worker_interface.StartWorker`. A spawned process
  (:mod:`.worker_process`) implements it; another executor (a Ray actor, say) can too.
- :class:`DispatchState`, the bookkeeping: the batches still to run, each file's final
  result, how many workers each file has killed. :meth:`DispatchState.on_result` and
  :meth:`DispatchState.on_death` are all a worker's outcome changes.
- :func:`watch_worker`, the parent's loop over one worker: it feeds results to the state,
  follows the file in progress, and declares the worker dead when it exits early or makes
  no progress for the time-out.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from klea_utils.stores._ingest.convert.not_stored import worker_death_reason
from klea_utils.stores._ingest.progress import ConversionProgress
from klea_utils.stores._ingest.workers.worker_interface import ConversionWorker, StartWorker
from klea_utils.stores._ingest.workers.worker_results import (
    ChunkItemResult,
    ChunkWorkerConfig,
    WorkItem,
)
from klea_utils.stores.chunk_cache import ChunkCache

__all__ = [
    "POISON_DEATHS",
    "POLL_S",
    "DispatchState",
    "WorkerDeath",
    "dispatch",
    "poison_verdict",
    "startup_allowance",
    "watch_worker",
]

POISON_DEATHS = 2
"""A file that was being converted when this many workers died is ``failed``."""

POLL_S = 0.2
"""How long the dispatcher waits for a result before it checks on its workers."""

_STARTUP_TIMEOUT_S = 600.0


def startup_allowance(file_timeout_s: float) -> float:
    """How long a starting worker (importing Docling, loading models) may show nothing."""
    return max(file_timeout_s, _STARTUP_TIMEOUT_S)


def poison_verdict(
    deaths: dict[str, int], path: str, file_hash: str, reason: str
) -> ChunkItemResult | None:
    """Count one more worker killed while converting ``path``; its ``failed`` result once poison.

    ``None`` means the file is retried alone in a fresh worker; a result means it killed
    :data:`POISON_DEATHS` workers and is final: a ``time-out`` when the last worker was
    killed for making no progress, else a ``worker crash``
    (:func:`~klea_utils.stores._ingest.convert.not_stored.worker_death_reason`); ``reason`` says
    how the last worker ended.
    """
    deaths[path] = deaths.get(path, 0) + 1
    if deaths[path] < POISON_DEATHS:
        return None
    error = worker_death_reason(path, deaths[path], reason)
    return ChunkItemResult(Path(path).name, file_hash, "failed", error=error, file_path=path)


@dataclass(frozen=True)
class WorkerDeath:
    """A worker that stopped before reporting its whole batch."""

    culprit: int | None
    """Index in the batch of the file it was converting, if any."""
    reason: str


@dataclass
class _Clock:
    """When the worker last showed progress, and how long it may go without."""

    file_timeout_s: float
    index: int = -2
    since: float = field(default_factory=time.monotonic)

    def touch(self) -> None:
        self.since = time.monotonic()

    def moved_to(self, index: int) -> bool:
        """Record the file in progress; whether it changed (which counts as progress)."""
        if index == self.index:
            return False
        self.index = index
        self.touch()
        return True

    def stalled(self) -> bool:
        # Start-up (importing Docling, loading models) is not a file: allow more.
        allowed = self.file_timeout_s if self.index >= 0 else startup_allowance(self.file_timeout_s)
        return time.monotonic() - self.since > allowed


@dataclass
class DispatchState:
    """The batches still to convert and the final result of each file.

    Attributes:
        items: ``(absolute_file_path, file_hash)`` to convert.
        batch_size: Most files handed to one worker.
        config: Worker configuration (its source folder holds the cache).
        logger: Receives one error per dead worker.
        progress: Told about each file's final result.
        pending: The batches still to hand to fresh workers, next first.
        final: Each finished file's result, by path.
        deaths: How many workers died converting each file, by path.
        batch: The batch of the current worker.
    """

    items: list[WorkItem]
    batch_size: int
    config: ChunkWorkerConfig
    logger: logging.Logger
    progress: ConversionProgress
    pending: deque[list[WorkItem]] = field(init=False)
    final: dict[str, ChunkItemResult] = field(init=False, default_factory=dict)
    deaths: dict[str, int] = field(init=False, default_factory=dict)
    batch: list[WorkItem] = field(init=False, default_factory=list)
    _reported: set[str] = field(init=False, default_factory=set)
    _deferred: list[WorkItem] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        self.pending = deque(self._batches(self.items))

    def _batches(self, items: list[WorkItem]) -> list[list[WorkItem]]:
        size = self.batch_size
        return [items[start : start + size] for start in range(0, len(items), size)]

    def next_batch(self) -> list[WorkItem] | None:
        """The next batch to hand a fresh worker, or ``None`` when all are done."""
        if not self.pending:
            return None
        self.batch = self.pending.popleft()
        self._reported, self._deferred = set(), []
        return self.batch

    def on_result(self, result: ChunkItemResult) -> None:
        """A worker reported a file: final, or deferred to a fresh worker."""
        path = result.file_path or ""
        self._reported.add(path)
        if result.status == "deferred":
            self._deferred.append((path, result.file_hash))
        else:
            self._finish(path, result)

    def end_batch(self) -> None:
        """The worker is gone: its deferred files go first to the next fresh worker."""
        deferred = self._batches(self._deferred)
        if deferred:
            self.pending.appendleft(deferred[0])
            self.pending.extend(deferred[1:])

    def on_death(self, death: WorkerDeath) -> None:
        """A worker died: keep what it finished, retry its culprit alone, re-queue the rest.

        A file whose cache entry exists was finished even if its result was lost. The
        culprit (the file being converted; else the first unfinished one, so repeated
        start-up deaths still end) is retried alone, and is ``failed`` as a poison file
        once it has killed :data:`POISON_DEATHS` workers.
        """
        unfinished = [
            item
            for item in self.batch
            if item[0] not in self._reported and item[0] not in self.final
        ]
        culprit = (
            self.batch[death.culprit]
            if death.culprit is not None
            else (unfinished[0] if unfinished else None)
        )
        self.logger.error(
            "Conversion worker died (%s) while converting %s; %d file(s) unfinished",
            death.reason,
            Path(culprit[0]).name if culprit else "no file",
            len(unfinished),
        )
        others: list[WorkItem] = []
        for path, file_hash in unfinished:
            recovered = self._recover_from_cache(path, file_hash)
            if recovered is not None:
                self._finish(path, recovered)
            elif (path, file_hash) == culprit:
                self._blame(path, file_hash, death.reason)
            else:
                others.append((path, file_hash))
        if others:
            self.pending.append(others)

    def _blame(self, path: str, file_hash: str, reason: str) -> None:
        failed = poison_verdict(self.deaths, path, file_hash, reason)
        if failed is None:
            self.pending.appendleft([(path, file_hash)])
        else:
            self._finish(path, failed)

    def _recover_from_cache(self, path: str, file_hash: str) -> ChunkItemResult | None:
        """A dead worker may have cached a file whose result never reached the parent."""
        cached = ChunkCache(Path(self.config.source_path)).load(Path(path), file_hash)
        if cached is None or not cached.docs:
            return None
        entry = cached.template_entry()
        return ChunkItemResult(
            Path(path).name, file_hash, "ok", file_headings_entry=entry, file_path=path
        )

    def _finish(self, path: str, result: ChunkItemResult) -> None:
        self.final[path] = result
        self.progress.done(result)

    def results(self) -> list[ChunkItemResult]:
        """One final result per item, in the order the items were given."""
        return [self.final[path] for path, _ in self.items]


def watch_worker(
    worker: ConversionWorker,
    state: DispatchState,
    file_timeout_s: float,
    progress: ConversionProgress,
) -> WorkerDeath | None:
    """Follow ``worker`` until it has reported its batch or died; ``None`` if it finished.

    Results go to ``state.on_result`` as they come. A worker that exits early, or shows
    no progress (no result, no new file) for ``file_timeout_s`` (start-up: at least ten
    minutes), is dead; a stalled one is killed first.
    """
    batch = state.batch
    clock = _Clock(file_timeout_s)
    death: WorkerDeath | None = None
    while not worker.finished:
        result = worker.poll(POLL_S)
        if result is not None:
            state.on_result(result)
            clock.touch()
            continue
        if worker.finished:
            break
        index = worker.current_index()
        if clock.moved_to(index) and 0 <= index < len(batch):
            progress.current(Path(batch[index][0]).name)
        culprit = index if index >= 0 else None
        reason = worker.exit_reason()
        if reason is None and clock.stalled():
            worker.kill()
            reason = f"worker made no progress for {file_timeout_s:g}s and was killed"
        if reason is not None:
            death = WorkerDeath(culprit, reason)
            break
    # Results put just before the worker stopped may still be in transit.
    for result in worker.drain():
        state.on_result(result)
    return death


def dispatch(
    items: list[WorkItem],
    batch_size: int,
    config: ChunkWorkerConfig,
    logger: logging.Logger,
    start_worker: StartWorker,
) -> list[ChunkItemResult]:
    """Convert ``items`` with a fresh worker from ``start_worker`` per batch.

    Returns:
        One final result per item (never ``deferred``), in ``items`` order.
    """
    with ConversionProgress(len(items), logger) as progress:
        state = DispatchState(items, batch_size, config, logger, progress)
        while (batch := state.next_batch()) is not None:
            worker = start_worker(config, batch)
            try:
                death = watch_worker(worker, state, config.file_timeout_s, progress)
            finally:
                worker.close()
            state.end_batch()
            if death is not None:
                state.on_death(death)
    return state.results()
