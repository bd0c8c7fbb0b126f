"""Convert uncached files on a Ray cluster, with the rules of the local conversion workers.

The driver (this process) keeps the list of files and is the only writer of the chunk
cache: each Ray worker (an actor of
:class:`~klea_utils.stores._ingest.workers.ray_worker.RayConversionWorker`, one process holding
one CPU, and one GPU on a CUDA run) loads Docling once, then is sent one file per call
as bytes and sends back its chunks, which the driver caches exactly as a local worker
would. Each worker has :data:`IN_FLIGHT` calls sent ahead, so it converts the next file
while the driver caches the last; it runs them in the order sent, so the first
unanswered one is the file it is converting. The rules are the local ones
(:mod:`klea_utils.stores.chunk_worker`):

- a worker is retired (and a fresh one started) after ``batch_size`` files, or after a
  file that leaves its RSS above the memory cap, because Docling leaks per conversion
  (the worker checks the cap before each file after its first and answers the files
  sent after it went over ``deferred``: they go to a fresh worker);
- a worker that dies (killed for memory, crashed, its host lost) has the file it was
  converting retried alone in a fresh worker (the file queued behind it is sent again,
  not blamed); a file that kills
  :data:`~klea_utils.stores._ingest.workers.dispatch.POISON_DEATHS` workers is failed as a poison
  file and the run goes on (the count and the verdict are
  :func:`~klea_utils.stores._ingest.workers.dispatch.poison_verdict`, shared with the local
  dispatcher);
- a worker with no answer for ``file_timeout_s`` is killed and treated as dead.

Failed files name the node that handled them, and each finished file's node is logged
at debug level (``-vv``). Results come back in ``items`` order as
:class:`~klea_utils.stores.chunk_worker.ChunkItemResult`, as the local dispatcher returns.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.biblio.doi_cache import open_doi_cache
from klea_utils.stores._ingest.progress import ConversionProgress
from klea_utils.stores._ingest.workers.dispatch import POLL_S, poison_verdict, startup_allowance
from klea_utils.stores._ingest.workers.ray_cluster import (
    actor_options,
    node_label,
    worker_device,
    worker_slots,
)
from klea_utils.stores._ingest.workers.ray_worker import (
    RayConversionWorker,
    RayFileResult,
    over_cap,
    read_doi_records,
)
from klea_utils.stores.chunk_cache import CachedFile, ChunkCache
from klea_utils.stores.chunk_worker import ChunkItemResult, ChunkWorkerConfig
from klea_utils.stores.ingest_exceptions import ClusterError

__all__ = ["convert_on_ray"]

_START_FAILURES = 3

IN_FLIGHT = 2
"""Files sent to one worker ahead of its answers: it converts the next while the driver
caches the last (a Ray actor runs its calls one at a time, in the order they were sent)."""

Item = tuple[str, str]


@dataclass
class _Worker:
    """One Ray conversion worker as the driver sees it.

    ``in_flight`` holds the files sent and not yet answered, in the order the worker runs
    them: the first is the one it is converting, since ``head_since``.
    """

    actor: Any
    ready: Any  # reference to the start-up answer (the node id), None once answered
    created: float
    node: str = "starting"
    sent: int = 0
    solo: bool = False
    retiring: bool = False
    in_flight: deque[tuple[Item, Any]] = field(default_factory=deque)
    head_since: float = 0.0


class _RayDispatch:
    """The state of one Ray conversion run (see the module docstring for the rules)."""

    def __init__(
        self,
        ray: Any,
        logger: logging.Logger,
        config: ChunkWorkerConfig,
        items: list[Item],
        batch_size: int,
        progress: ConversionProgress,
    ) -> None:
        self.ray = ray
        self.logger = logger
        self.config = config
        self.batch_size = batch_size
        self.progress = progress
        self.total = len(items)
        self.cache = ChunkCache(Path(config.source_path), chunking=config.chunking())
        self.doi_cache = open_doi_cache(self.cache.cache_dir)
        self.pending: deque[Item] = deque(items)
        self.retry: deque[Item] = deque()
        self.final: dict[str, ChunkItemResult] = {}
        self.deaths: dict[str, int] = {}
        self.workers: list[_Worker] = []
        self.start_failures = 0
        self.target = min(worker_slots(ray, config.device), len(items))
        self.remote_class = ray.remote(RayConversionWorker).options(**actor_options(config.device))
        self.options = {
            "max_tokens": config.max_tokens,
            "merge_peers": config.merge_peers,
            "overlap_sentences": config.overlap_sentences,
            "tokenizer_model": config.tokenizer_model,
            "do_ocr": config.do_ocr,
            "device": worker_device(config.device),
            "artifacts_path": config.artifacts_path,
            "log_level": config.log_level,
            "mem_limit_bytes": config.mem_limit_bytes,
            "suffixes": sorted({Path(path).suffix.lower() for path, _ in items}),
        }
        self.doi_seed = read_doi_records(self.cache.cache_dir)
        self.idle_since = time.monotonic()

    # -- the loop ------------------------------------------------------------------------

    def run(self) -> None:
        while len(self.final) < self.total:
            self._start_workers()
            self._assign()
            self._wait_and_handle()
            self._kill_stuck()

    def _start_workers(self) -> None:
        busy = sum(1 for worker in self.workers if worker.in_flight)
        wanted = min(self.target, len(self.pending) + len(self.retry) + busy)
        while len(self.workers) < wanted:
            actor = self.remote_class.remote(self.options, self.doi_seed)
            self.workers.append(_Worker(actor, actor.node_id.remote(), time.monotonic()))

    def _assign(self) -> None:
        for worker in list(self.workers):
            if worker.ready is not None or worker.solo or worker.retiring:
                continue
            if self.retry and worker.sent == 0:
                worker.solo = True  # a suspect file is retried alone in a fresh worker
                self._send(worker, self.retry.popleft())
                continue
            while self.pending and len(worker.in_flight) < IN_FLIGHT:
                if worker.sent >= self.batch_size:
                    break
                self._send(worker, self.pending.popleft())
            if self.retry and not self.pending and not worker.in_flight:
                self._retire(worker)  # make room for a fresh worker for the retry

    def _send(self, worker: _Worker, item: Item) -> None:
        path, file_hash = item
        data = Path(path).read_bytes()
        ref = worker.actor.convert.remote(Path(path).name, file_hash, data, path)
        if not worker.in_flight:
            worker.head_since = time.monotonic()
            self.progress.current(Path(path).name)
        worker.in_flight.append((item, ref))
        worker.sent += 1

    def _wait_and_handle(self) -> None:
        by_ref: dict[Any, tuple[_Worker, bool]] = {}
        for worker in self.workers:
            if worker.ready is not None:
                by_ref[worker.ready] = (worker, True)
            elif worker.in_flight:
                by_ref[worker.in_flight[0][1]] = (worker, False)
        if not by_ref:
            time.sleep(POLL_S)
            return
        done, _ = self.ray.wait(list(by_ref), num_returns=1, timeout=POLL_S)
        for ref in done:
            worker, starting = by_ref[ref]
            if starting:
                self._started(worker)
            else:
                self._answered(worker)

    def _started(self, worker: _Worker) -> None:
        try:
            node_id = self.ray.get(worker.ready)
        except self.ray.exceptions.RayError as exc:
            self.workers.remove(worker)
            self.start_failures += 1
            self.logger.error("A Ray conversion worker failed to start: %s", _first_line(exc))
            if self.start_failures >= _START_FAILURES:
                raise ClusterError(
                    f"{self.start_failures} Ray conversion workers in a row failed to start; "
                    f"is klea-ingest installed on every host? Last error: {_first_line(exc)}"
                ) from exc
            return
        self.start_failures = 0
        worker.ready = None
        worker.node = node_label(self.ray, node_id)

    def _answered(self, worker: _Worker) -> None:
        item, ref = worker.in_flight[0]
        try:
            answer: RayFileResult = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            self._died(worker, f"{type(exc).__name__}: {_first_line(exc)}")
            return
        worker.in_flight.popleft()
        worker.head_since = time.monotonic()
        if worker.in_flight:
            self.progress.current(Path(worker.in_flight[0][0][0]).name)
        if answer.deferred:  # the worker was over its cap before this file: a fresh one
            self.pending.appendleft(item)
            worker.retiring = True
        else:
            self.logger.debug("Ray worker on node %s finished %s", worker.node, Path(item[0]).name)
            self._record(self._result(item, answer, worker.node))
            cap = self.config.mem_limit_bytes
            if over_cap(answer.rss, cap):
                self.logger.info(
                    "Ray worker on %s: RSS %s > cap %s, restarting", worker.node, answer.rss, cap
                )
                worker.retiring = True  # what it was sent since comes back deferred
        done = worker.solo or worker.retiring or worker.sent >= self.batch_size
        if done and not worker.in_flight:
            self._retire(worker)

    def _result(self, item: Item, answer: RayFileResult, node: str) -> ChunkItemResult:
        path, file_hash = item
        name = Path(path).name
        if answer.error is not None:
            error = f"{answer.error} (on node {node})"
            return ChunkItemResult(name, file_hash, "failed", error=error, file_path=path)
        cached = CachedFile(
            file_path=Path(path),
            file_hash=file_hash,
            docs=answer.docs,
            metadata=answer.metadata,
            headings=answer.headings,
        )
        for doi, record in answer.doi_records.items():
            self.doi_cache.put(doi, record)
        if not cached.docs:  # not cached, so a later run (e.g. with OCR) retries it
            return ChunkItemResult(
                name, file_hash, "zero_chunks", error=answer.note, file_path=path
            )
        self.cache.store(cached)
        entry = cached.template_entry()
        return ChunkItemResult(name, file_hash, "ok", file_headings_entry=entry, file_path=path)

    def _record(self, result: ChunkItemResult) -> None:
        self.final[result.file_path or ""] = result
        self.progress.done(result)

    def _died(self, worker: _Worker, reason: str) -> None:
        self.workers.remove(worker)
        self.ray.kill(worker.actor)
        if not worker.in_flight:
            return
        (path, file_hash), _ = worker.in_flight.popleft()
        queued = [item for item, _ in worker.in_flight]
        self.pending.extendleft(reversed(queued))  # sent after the culprit: not to blame
        self.logger.error(
            "Ray conversion worker on node %s died (%s) while converting %s",
            worker.node,
            reason,
            Path(path).name,
        )
        failed = poison_verdict(
            self.deaths, path, file_hash, f"{reason}; last on node {worker.node}"
        )
        if failed is None:
            self.retry.append((path, file_hash))
        else:
            self._record(failed)

    def _retire(self, worker: _Worker) -> None:
        self.workers.remove(worker)
        worker.actor.__ray_terminate__.remote()

    def _kill_stuck(self) -> None:
        now = time.monotonic()
        busy = False
        for worker in list(self.workers):
            if worker.in_flight:
                busy = True
                if now - worker.head_since > self.config.file_timeout_s:
                    self._died(
                        worker,
                        f"no answer for {self.config.file_timeout_s:g}s, killed",
                    )
            elif worker.ready is None:
                busy = True
        if busy:
            self.idle_since = now
            return
        allowed = startup_allowance(self.config.file_timeout_s)
        if self.workers and now - self.idle_since > allowed:
            raise ClusterError(
                f"no Ray conversion worker started within {allowed:g}s; cluster resources: "
                f"{self.ray.available_resources()} (check 'ray status')"
            )

    def close(self) -> None:
        for worker in self.workers:
            if not worker.in_flight and worker.ready is None:
                worker.actor.__ray_terminate__.remote()  # idle: let it exit and clean up
            else:
                self.ray.kill(worker.actor)
        self.workers.clear()
        self.doi_cache.flush()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def convert_on_ray(
    ray: Any,
    logger: logging.Logger,
    config: ChunkWorkerConfig,
    items: list[Item],
    batch_size: int,
) -> list[ChunkItemResult]:
    """Convert ``items`` on the Ray cluster ``ray`` is connected to; cache the results here.

    Args:
        ray: The connected ``ray`` module (see :func:`.ray_cluster.connect`).
        logger: Logger for progress and errors.
        config: The conversion options, memory cap and time-out of the local workers.
        items: ``(absolute_file_path, file_hash)`` of the files to convert.
        batch_size: Files a worker converts before it is replaced by a fresh one.

    Returns:
        One final ``ChunkItemResult`` per item (never ``deferred``), in ``items`` order.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if not items:
        return []
    with ConversionProgress(len(items), logger) as progress:
        dispatch = _RayDispatch(ray, logger, config, items, batch_size, progress)
        try:
            dispatch.run()
        finally:
            dispatch.close()
    return [dispatch.final[path] for path, _ in items]
