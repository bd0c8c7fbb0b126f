"""Subprocess chunking workers: isolate Docling's per-conversion memory growth.

File: klea_utils/stores/chunk_worker.py

Each batch of files is converted in a freshly spawned process that exits afterwards, so
memory Docling does not give back is reclaimed by the OS. A worker stops at whichever
comes first, its RSS cap or the batch size, and reports the rest as ``deferred``; results
stream back over a queue one file at a time, and the index of the file being converted is
kept in shared memory so the parent knows which file a dead worker was working on.

Compared with a naive dispatcher this one guarantees progress and isolates bad files:

- a fresh worker always converts at least one file before it may defer, so a cap below
  the worker's start-up size cannot defer forever;
- when a worker dies (OOM kill, segfault, SIGKILL) the files it finished are kept (their
  cache entries are on disk), the file it was converting is retried alone in a fresh
  worker, and the other unfinished files are re-dispatched; a file that kills a worker
  twice is marked ``failed`` as a poison file;
- a worker that makes no progress for ``file_timeout_s`` is killed and treated as dead.
"""

from __future__ import annotations

import logging
import multiprocessing
import queue as queue_module
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.progress import ConversionProgress

__all__ = [
    "DEFAULT_WORKER_MEM_LIMIT",
    "RESULT_STATUSES",
    "ChunkItemResult",
    "ChunkWorkerConfig",
    "convert_batch_worker",
    "dispatch_conversion_batches",
]

DEFAULT_WORKER_MEM_LIMIT = 4 * 1024**3
"""Default RSS cap of one conversion worker: 4 GiB (it includes Docling's start-up size)."""

RESULT_STATUSES = ("ok", "zero_chunks", "failed", "deferred")
"""Every value ``ChunkItemResult.status`` may take."""

_DONE = "__done__"
_POISON_DEATHS = 2
_POLL_S = 0.2
_STARTUP_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class ChunkWorkerConfig:
    """Picklable configuration handed to one conversion worker batch.

    The parent's ``StoresBuilder`` is not picklable (it holds the Docling converter and
    chunker), so the worker rebuilds its own from these plain fields.

    Attributes:
        source_path: The source folder (the cache lives in ``<source_path>/.klea-cache``).
        max_tokens: Token budget per chunk.
        tokenizer_model: Hugging Face tokenizer id for chunking.
        do_ocr: OCR scanned PDFs.
        mem_limit_bytes: RSS cap checked before each file; ``None`` disables it.
        log_level: Logging level inside the worker.
        merge_peers: Merge undersized sibling chunks.
        device: ``auto``, ``cpu``, ``cuda`` (or ``cuda:N``) for Docling's models.
        artifacts_path: Folder with Docling's models, if any.
        file_timeout_s: A worker showing no progress for this long is killed.
    """

    source_path: str
    max_tokens: int
    tokenizer_model: str
    do_ocr: bool
    mem_limit_bytes: int | None
    log_level: int
    merge_peers: bool = True
    device: str = "auto"
    artifacts_path: str | None = None
    file_timeout_s: float = 900.0

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError(f"ChunkWorkerConfig.max_tokens must be >= 1, got {self.max_tokens}")
        if self.mem_limit_bytes is not None and self.mem_limit_bytes < 1:
            raise ValueError(
                "ChunkWorkerConfig.mem_limit_bytes must be positive or None, "
                f"got {self.mem_limit_bytes}"
            )
        if self.file_timeout_s <= 0:
            raise ValueError(
                f"ChunkWorkerConfig.file_timeout_s must be positive, got {self.file_timeout_s}"
            )


@dataclass(frozen=True)
class ChunkItemResult:
    """Outcome of converting one file inside a worker.

    ``status`` is one of:

    - ``ok``: converted and cached; ``file_headings_entry`` holds the file's
      metadata-map template entry;
    - ``zero_chunks``: converted but produced no chunks (e.g. a scanned PDF without OCR);
    - ``failed``: conversion raised (or the file killed two workers); ``error`` says why;
    - ``deferred``: not processed because the worker hit its RSS cap; ``file_path`` lets
      the parent re-dispatch it to a fresh worker.
    """

    file_name: str
    file_hash: str
    status: str
    file_headings_entry: dict[str, Any] | None = None
    error: str | None = None
    file_path: str | None = None

    def __post_init__(self) -> None:
        if self.status not in RESULT_STATUSES:
            raise ValueError(
                f"ChunkItemResult.status for {self.file_name} must be one of "
                f"{', '.join(RESULT_STATUSES)}, got {self.status!r}"
            )
        if self.status == "failed" and not self.error:
            raise ValueError(f"ChunkItemResult for {self.file_name} is failed but has no error")


def _rss_bytes() -> int | None:
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except Exception:  # RSS unavailable on this platform: the batch size bounds the worker
        return None


def _build_processor(config: ChunkWorkerConfig, logger: logging.Logger) -> Any:
    from klea_utils.stores._ingest.file_processing import FileProcessor

    return FileProcessor(
        source_path=Path(config.source_path),
        max_tokens=config.max_tokens,
        merge_peers=config.merge_peers,
        tokenizer_model=config.tokenizer_model,
        do_ocr=config.do_ocr,
        device=config.device,
        artifacts_path=Path(config.artifacts_path) if config.artifacts_path else None,
        logger=logger,
    )


def _result_for(path: Path, file_hash: str, outcome: Any) -> ChunkItemResult:
    if outcome.error is not None:
        return ChunkItemResult(
            path.name, file_hash, "failed", error=outcome.error, file_path=str(path)
        )
    cached = outcome.cached
    status = "ok" if cached.docs else "zero_chunks"
    entry = cached.template_entry() if cached.docs else None
    return ChunkItemResult(
        path.name, file_hash, status, file_headings_entry=entry, file_path=str(path)
    )


def convert_batch_worker(
    config: ChunkWorkerConfig,
    items: list[tuple[str, str]],
    queue: Any | None = None,
    current_file: Any | None = None,
) -> list[ChunkItemResult] | None:
    """Convert and cache ``items`` in this process, one result per item.

    Runs in a spawned child (with ``queue`` and ``current_file``), or directly in the
    parent (``queue`` is ``None``: results are returned). Before each file after the
    first, if the process RSS exceeds ``config.mem_limit_bytes`` the remaining items are
    reported as ``deferred``.

    Args:
        config: Worker configuration.
        items: ``(absolute_file_path, file_hash)`` tuples to process.
        queue: Queue for incremental puts (spawned worker) or ``None``.
        current_file: Shared ``multiprocessing.Value('i')`` set to the index in ``items``
            of the file being converted (``-1`` between files), or ``None``.

    Returns:
        The list of results when ``queue`` is ``None``, else ``None``.
    """
    logger = logging.getLogger("klea_utils.stores.chunk_worker")
    if queue is not None:  # a spawned worker: configure its own logging
        logging.basicConfig(level=config.log_level, format="%(levelname)s %(message)s")
        logger.setLevel(config.log_level)
        if config.log_level > logging.DEBUG:  # Docling's INFO lines would cross the bar
            for name in ("docling", "docling_core", "docling_parse", "transformers", "PIL"):
                logging.getLogger(name).setLevel(max(config.log_level, logging.WARNING))
    processor = _build_processor(config, logger)
    if queue is not None:
        # Start-up is not charged to the first file's timeout (current_file is still -1).
        processor.warm_up()
    results: list[ChunkItemResult] = []

    def emit(result: ChunkItemResult) -> None:
        if queue is None:
            results.append(result)
        else:
            queue.put(result)

    for index, (file_path, file_hash) in enumerate(items):
        rss = _rss_bytes()
        if (
            index > 0
            and config.mem_limit_bytes is not None
            and rss is not None
            and rss > config.mem_limit_bytes
        ):
            logger.info(
                "Worker RSS %d > cap %d: deferring %d file(s)",
                rss,
                config.mem_limit_bytes,
                len(items) - index,
            )
            for rest_path, rest_hash in items[index:]:
                emit(
                    ChunkItemResult(
                        Path(rest_path).name, rest_hash, "deferred", file_path=rest_path
                    )
                )
            break
        if current_file is not None:
            current_file.value = index
        emit(_result_for(Path(file_path), file_hash, processor.process(Path(file_path), file_hash)))
        if current_file is not None:
            current_file.value = -1
    if queue is None:
        return results
    queue.put(_DONE)
    return None


@dataclass
class _BatchRun:
    """What the parent saw of one worker: its results and, if it died, the culprit."""

    results: list[ChunkItemResult] = field(default_factory=list)
    died: bool = False
    culprit: int | None = None
    reason: str = ""


def _run_worker(
    ctx: Any,
    config: ChunkWorkerConfig,
    batch: list[tuple[str, str]],
    progress: ConversionProgress,
) -> _BatchRun:
    results_queue = ctx.Queue()
    current = ctx.Value("i", -1)
    proc = ctx.Process(
        target=convert_batch_worker,
        args=(config, batch, results_queue, current),
        name="klea-chunk-worker",
        daemon=True,
    )
    proc.start()
    run = _BatchRun()
    last_progress = time.monotonic()
    last_index = -2
    finished = False
    try:
        while not finished:
            try:
                message = results_queue.get(timeout=_POLL_S)
            except queue_module.Empty:
                index = current.value
                if index != last_index:
                    last_index, last_progress = index, time.monotonic()
                    if 0 <= index < len(batch):
                        progress.current(Path(batch[index][0]).name)
                if not proc.is_alive():
                    run.died, run.culprit = True, (index if index >= 0 else None)
                    run.reason = f"worker exited with code {proc.exitcode}"
                    break
                # Start-up (importing Docling, loading models) is not a file: allow more.
                allowed = (
                    config.file_timeout_s
                    if index >= 0
                    else max(config.file_timeout_s, _STARTUP_TIMEOUT_S)
                )
                if time.monotonic() - last_progress > allowed:
                    proc.kill()
                    run.died, run.culprit = True, (index if index >= 0 else None)
                    run.reason = (
                        f"worker made no progress for {config.file_timeout_s:g}s and was killed"
                    )
                    break
                continue
            if message == _DONE:
                finished = True
            else:
                run.results.append(message)
                last_progress = time.monotonic()
        proc.join(timeout=30)
        # Results put just before the worker died may still be in the pipe.
        while True:
            try:
                message = results_queue.get(timeout=_POLL_S)
            except (queue_module.Empty, OSError, EOFError):
                break
            if message != _DONE:
                run.results.append(message)
    finally:
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=10)
        results_queue.close()
        results_queue.join_thread()
    return run


def _recover_from_cache(
    config: ChunkWorkerConfig, path: str, file_hash: str
) -> ChunkItemResult | None:
    """A dead worker may have cached a file whose result never reached the queue."""
    from klea_utils.stores.chunk_cache import ChunkCache

    cached = ChunkCache(Path(config.source_path)).load(Path(path), file_hash)
    if cached is None or not cached.docs:
        return None
    return ChunkItemResult(
        Path(path).name,
        file_hash,
        "ok",
        file_headings_entry=cached.template_entry(),
        file_path=path,
    )


def dispatch_conversion_batches(
    parent_logger: logging.Logger,
    config: ChunkWorkerConfig,
    items: list[tuple[str, str]],
    batch_size: int,
) -> list[ChunkItemResult]:
    """Convert ``items`` by spawning a fresh worker process per batch.

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

    Returns:
        One final ``ChunkItemResult`` per item (never ``deferred``), in ``items`` order.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    ctx = multiprocessing.get_context("spawn")
    final: dict[str, ChunkItemResult] = {}
    deaths: dict[str, int] = {}
    pending: deque[list[tuple[str, str]]] = deque()
    queue_items = list(items)
    for start in range(0, len(queue_items), batch_size):
        pending.append(queue_items[start : start + batch_size])
    with ConversionProgress(len(items), parent_logger) as progress:
        while pending:
            batch = pending.popleft()
            run = _run_worker(ctx, config, batch, progress)
            deferred: list[tuple[str, str]] = []
            for result in run.results:
                if result.status == "deferred":
                    deferred.append((result.file_path or "", result.file_hash))
                else:
                    final[result.file_path or ""] = result
                    progress.done(result)
            if deferred:
                pending.appendleft(deferred[:batch_size])
                for start in range(batch_size, len(deferred), batch_size):
                    pending.append(deferred[start : start + batch_size])
            if run.died:
                _handle_death(parent_logger, config, batch, run, final, deaths, pending, progress)
    return [final[path] for path, _ in items]


def _handle_death(
    logger: logging.Logger,
    config: ChunkWorkerConfig,
    batch: list[tuple[str, str]],
    run: _BatchRun,
    final: dict[str, ChunkItemResult],
    deaths: dict[str, int],
    pending: deque[list[tuple[str, str]]],
    progress: ConversionProgress,
) -> None:
    reported = {r.file_path for r in run.results}
    unfinished = [item for item in batch if item[0] not in reported and item[0] not in final]
    # The culprit is the file being converted; if the worker died before its first file,
    # blame the first unfinished one so repeated start-up deaths still terminate.
    culprit = (
        batch[run.culprit] if run.culprit is not None else (unfinished[0] if unfinished else None)
    )
    logger.error(
        "Conversion worker died (%s) while converting %s; %d file(s) unfinished",
        run.reason,
        Path(culprit[0]).name if culprit else "no file",
        len(unfinished),
    )
    others: list[tuple[str, str]] = []
    for path, file_hash in unfinished:
        recovered = _recover_from_cache(config, path, file_hash)
        if recovered is not None:
            final[path] = recovered
            progress.done(recovered)
        elif (path, file_hash) == culprit:
            deaths[path] = deaths.get(path, 0) + 1
            if deaths[path] >= _POISON_DEATHS:
                result = ChunkItemResult(
                    Path(path).name,
                    file_hash,
                    "failed",
                    error=(
                        f"{path}: poison file: it killed {deaths[path]} conversion "
                        f"workers ({run.reason})"
                    ),
                    file_path=path,
                )
                final[path] = result
                progress.done(result)
            else:
                pending.appendleft([(path, file_hash)])
        else:
            others.append((path, file_hash))
    if others:
        pending.append(others)
