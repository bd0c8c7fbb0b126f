"""Dispatch batches of files to conversion workers and survive the workers that die.

Three pieces, each with one job:

- :class:`~klea_utils.stores._ingest.workers.worker_interface.ConversionWorker`, what the
  dispatcher needs of one running worker (poll, drain, kill), started by a
  :data:`~klea_utils.stores._ingest.workers.worker_interface.StartWorker`. A spawned process
  (:mod:`.worker_process`) implements it; another executor (a Ray actor, say) can too.
- :class:`DispatchState`, the bookkeeping: the batches still to run, each file's final
  result, how many workers each file has killed. :meth:`DispatchState.on_result` and
  :meth:`DispatchState.on_death` are all a worker's outcome changes; each running batch is
  a :class:`BatchRun`.
- :class:`WorkerWatch`, the parent's view of one worker: each :meth:`WorkerWatch.step` feeds
  a result to the state or follows the file in progress, and declares the worker dead when
  it exits early or makes no progress for the time-out.

:func:`dispatch` keeps up to ``workers`` workers running at once, each on its own batch,
and steps through them in turn (:func:`watch_worker` follows a single one to its end).
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from klea_utils.stores._ingest.convert.not_stored import worker_death_reason
from klea_utils.stores._ingest.progress import ConversionProgress
from klea_utils.stores._ingest.workers.conversion_cost import probed_costs
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
    "BatchRun",
    "DispatchState",
    "WorkerDeath",
    "WorkerWatch",
    "balanced_batches",
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
class BatchRun:
    """One worker's batch and what that worker has reported of it so far."""

    batch: list[WorkItem]
    reported: set[str] = field(default_factory=set)
    deferred: list[WorkItem] = field(default_factory=list)


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
        workers: How many workers will run at once: with more than one, the first batches
            are at most ``len(items) / workers`` files each, balanced by file size
            (:func:`balanced_batches`), so every worker has a share from the start.
        pending: The batches still to hand to fresh workers, next first.
        final: Each finished file's result, by path.
        deaths: How many workers died converting each file, by path.
        on_converted: Told each file whose chunks are now in the cache (status ``ok``),
            as soon as its result is final; what it raises stops the dispatch.
    """

    items: list[WorkItem]
    batch_size: int
    config: ChunkWorkerConfig
    logger: logging.Logger
    progress: ConversionProgress
    workers: int = 1
    on_converted: Callable[[ChunkItemResult], object] | None = None
    pending: deque[list[WorkItem]] = field(init=False)
    final: dict[str, ChunkItemResult] = field(init=False, default_factory=dict)
    deaths: dict[str, int] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        if self.workers == 1:
            self.pending = deque(self._batches(self.items))
        else:
            self.pending = deque(balanced_batches(self.items, self.batch_size, self.workers))

    def _batches(self, items: list[WorkItem]) -> list[list[WorkItem]]:
        size = self.batch_size
        return [items[start : start + size] for start in range(0, len(items), size)]

    def next_batch(self) -> BatchRun | None:
        """The next batch to hand a fresh worker, or ``None`` while none is pending."""
        if not self.pending:
            return None
        return BatchRun(self.pending.popleft())

    def on_result(self, run: BatchRun, result: ChunkItemResult) -> None:
        """A worker reported a file: final, or deferred to a fresh worker."""
        path = result.file_path or ""
        run.reported.add(path)
        if result.status == "deferred":
            run.deferred.append((path, result.file_hash))
        else:
            self._finish(path, result)

    def end_batch(self, run: BatchRun) -> None:
        """The worker is gone: its deferred files go first to the next fresh worker."""
        deferred = self._batches(run.deferred)
        if deferred:
            self.pending.appendleft(deferred[0])
            self.pending.extend(deferred[1:])

    def on_death(self, run: BatchRun, death: WorkerDeath) -> None:
        """A worker died: keep what it finished, retry its culprit alone, re-queue the rest.

        A file whose cache entry exists was finished even if its result was lost. The
        culprit (the file being converted; else the first unfinished one, so repeated
        start-up deaths still end) is retried alone, and is ``failed`` as a poison file
        once it has killed :data:`POISON_DEATHS` workers.
        """
        unfinished = [
            item for item in run.batch if item[0] not in run.reported and item[0] not in self.final
        ]
        culprit = (
            run.batch[death.culprit]
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
        if self.on_converted is not None and result.status == "ok":
            self.on_converted(result)

    def results(self) -> list[ChunkItemResult]:
        """One final result per item, in the order the items were given."""
        return [self.final[path] for path, _ in self.items]


def balanced_batches(items: list[WorkItem], batch_size: int, workers: int) -> list[list[WorkItem]]:
    """``items`` cut into batches for ``workers`` workers running at once.

    At least ``workers`` batches (fewer only with fewer items), none over ``batch_size``
    files; the costliest files are dealt first, each to the batch with the least work so
    far (then the fewest files), and each batch converts its costliest files first, so
    that no worker is left alone with a scan at the end. A file's cost is
    :func:`~klea_utils.stores._ingest.workers.conversion_cost.conversion_cost` (its pages,
    those that will need OCR weighed as such), probed in a child process
    (:func:`~klea_utils.stores._ingest.workers.conversion_cost.probed_costs`).
    """
    if not items:
        return []
    count = max(min(workers, len(items)), math.ceil(len(items) / batch_size))
    size = math.ceil(len(items) / count)
    costs = probed_costs([path for path, _ in items])
    order = sorted(range(len(items)), key=lambda i: (-costs[i], i))
    batches: list[list[int]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for index in order:
        open_ = [b for b in range(count) if len(batches[b]) < size]
        target = min(open_, key=lambda b: (loads[b], len(batches[b]), b))
        batches[target].append(index)  # in ``order``: the costliest first
        loads[target] += costs[index]
    return [[items[i] for i in batch] for batch in batches if batch]


class WorkerWatch:
    """The parent's view of one worker converting ``run``'s batch.

    :meth:`step` handles one result, or checks on the worker when none came; once it
    returns ``True`` the worker is over and :meth:`end` hands its last results, its
    deferred files and (when it died) its death to the state.
    """

    def __init__(
        self,
        worker: ConversionWorker,
        run: BatchRun,
        state: DispatchState,
        file_timeout_s: float,
        progress: ConversionProgress,
    ) -> None:
        self.worker = worker
        self.run = run
        self.death: WorkerDeath | None = None
        self._state = state
        self._timeout = file_timeout_s
        self._progress = progress
        self._clock = _Clock(file_timeout_s)

    def step(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for a result; whether the worker is over (done or dead)."""
        worker, batch = self.worker, self.run.batch
        if worker.finished:
            return True
        result = worker.poll(timeout)
        if result is not None:
            self._state.on_result(self.run, result)
            self._clock.touch()
            return worker.finished
        if worker.finished:
            return True
        index = worker.current_index()
        if self._clock.moved_to(index) and 0 <= index < len(batch):
            self._progress.current(Path(batch[index][0]).name)
        culprit = index if index >= 0 else None
        reason = worker.exit_reason()
        if reason is None and self._clock.stalled():
            worker.kill()
            reason = f"worker made no progress for {self._timeout:g}s and was killed"
        if reason is not None:
            self.death = WorkerDeath(culprit, reason)
            return True
        return False

    def drain(self) -> None:
        """Results put just before the worker stopped may still be in transit."""
        for result in self.worker.drain():
            self._state.on_result(self.run, result)

    def end(self) -> None:
        """Release the worker; its deferred files and its death go to the state."""
        try:
            self.drain()
        finally:
            self.worker.close()
        self._state.end_batch(self.run)
        if self.death is not None:
            self._state.on_death(self.run, self.death)


def watch_worker(
    worker: ConversionWorker,
    state: DispatchState,
    run: BatchRun,
    file_timeout_s: float,
    progress: ConversionProgress,
) -> WorkerDeath | None:
    """Follow ``worker`` until it has reported ``run``'s batch or died; ``None`` if it finished.

    Results go to ``state.on_result`` as they come. A worker that exits early, or shows
    no progress (no result, no new file) for ``file_timeout_s`` (start-up: at least ten
    minutes), is dead; a stalled one is killed first. The worker is not closed.
    """
    watch = WorkerWatch(worker, run, state, file_timeout_s, progress)
    while not watch.step(POLL_S):
        pass
    watch.drain()
    return watch.death


def dispatch(
    items: list[WorkItem],
    batch_size: int,
    config: ChunkWorkerConfig,
    logger: logging.Logger,
    start_worker: StartWorker,
    workers: int = 1,
    *,
    on_converted: Callable[[ChunkItemResult], object] | None = None,
) -> list[ChunkItemResult]:
    """Convert ``items`` with a fresh worker from ``start_worker`` per batch.

    Up to ``workers`` workers run at once, each on its own batch; every rule of one
    worker holds for each (its memory cap, its time-out, a dead worker's files recovered
    from the cache or retried, a file that killed :data:`POISON_DEATHS` workers
    ``failed``). A worker is started as soon as one ends and a batch is pending.
    ``on_converted`` is told each file cached (``ok``) as its result lands; an exception
    it raises ends the dispatch (the workers are closed) and propagates.

    Returns:
        One final result per item (never ``deferred``), in ``items`` order.
    """
    with ConversionProgress(len(items), logger) as progress:
        state = DispatchState(
            items, batch_size, config, logger, progress, workers, on_converted=on_converted
        )
        active: list[WorkerWatch] = []
        try:
            while True:
                while len(active) < workers and (run := state.next_batch()) is not None:
                    worker = start_worker(config, run.batch)
                    active.append(WorkerWatch(worker, run, state, config.file_timeout_s, progress))
                if not active:
                    break
                wait = POLL_S / len(active)
                for watch in list(active):
                    if watch.step(wait):
                        active.remove(watch)
                        watch.end()
        finally:
            for watch in active:
                watch.worker.close()
    return state.results()
