"""A spawned conversion worker: its entry point, and the handle the parent drives it with.

The worker converts one batch (:func:`run_worker`) and reports over three channels:

- a results queue, one :class:`ChunkItemResult` per file, then a "done" marker;
- a shared integer, the index of the file being converted (``-1`` between files), so the
  parent knows which file a dead worker was working on;
- a log pipe: its log records go through a :class:`logging.handlers.QueueHandler` to a
  :class:`logging.handlers.QueueListener` in the parent, which hands them to the parent's
  loggers of the same names, so the parent's logging decides what is shown.

:class:`WorkerProcess` is the parent's side (start, poll, drain, kill, close); it is one
implementation of :class:`klea_utils.stores._ingest.workers.dispatch.ConversionWorker`.
"""

from __future__ import annotations

import logging
import multiprocessing
import queue as queue_module
from logging.handlers import QueueHandler, QueueListener
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.library_noise import route_library_noise
from klea_utils.stores._ingest.pdf.page_renderer import close_page_renderer
from klea_utils.stores._ingest.workers.batch_conversion import (
    WORKER_LOGGER,
    build_processor,
    convert_items,
)
from klea_utils.stores._ingest.workers.worker_results import (
    ChunkItemResult,
    ChunkWorkerConfig,
    WorkItem,
)

__all__ = ["DONE", "LogPipe", "WorkerProcess", "forward_to_parent_loggers", "run_worker"]

DONE = "__done__"
"""Put on the results queue after a worker's last result."""

_CONTEXT = multiprocessing.get_context("spawn")
_DRAIN_POLL_S = 0.2
_CHATTY_LOGGERS = ("docling", "docling_core", "docling_parse", "transformers", "PIL")
"""Loggers a worker keeps at WARNING unless it logs at DEBUG."""


class LogPipe:
    """The queue of a worker's log records: a one-way pipe written only by the worker.

    A ``multiprocessing.Queue`` shares a lock between its writers, which a killed worker
    may leave held; a pipe with a single writer has no lock, and reading it ends
    (``queue.Empty``) once the worker has exited, which stops the listener.
    """

    def __init__(self) -> None:
        self._reader, self._writer = _CONTEXT.Pipe(duplex=False)

    def put_nowait(self, record: logging.LogRecord) -> None:
        """Send ``record`` to the parent (the worker's ``QueueHandler`` calls this)."""
        self._writer.send(record)

    def get(self, block: bool = True) -> logging.LogRecord:
        """The next record; ``queue.Empty`` once the worker is gone (its listener stops)."""
        try:
            record: logging.LogRecord = self._reader.recv()
        except (EOFError, OSError) as exc:
            raise queue_module.Empty from exc
        return record

    def close_writer(self) -> None:
        """Close the parent's copy of the writing end (once the worker holds its own)."""
        self._writer.close()

    def close(self) -> None:
        """Close both ends (closing one twice is harmless)."""
        self._writer.close()
        self._reader.close()


def forward_to_parent_loggers(record: logging.LogRecord) -> None:
    """Hand a worker's ``record`` to this process's logger of the same name.

    Only when that logger is enabled for the record's level: the parent's logging
    configuration, not the worker's, decides what is shown.
    """
    logger = logging.getLogger(record.name)
    if logger.isEnabledFor(record.levelno):
        logger.handle(record)


class _ToParentLoggers(logging.Handler):
    """The listener's handler: :func:`forward_to_parent_loggers`."""

    def emit(self, record: logging.LogRecord) -> None:
        forward_to_parent_loggers(record)


class _WorkerLogListener(QueueListener):
    """A ``QueueListener`` on a :class:`LogPipe`: it stops when the pipe ends."""

    def enqueue_sentinel(self) -> None:
        """Nothing to send: the pipe ends when the worker exits, which ends the thread."""


def _forward_logs(logs: LogPipe | None, level: int) -> None:
    """In a worker: send its records (at ``level`` and above) to the parent, or to stderr."""
    if logs is None:  # a caller-run worker without a log pipe logs to its own stderr
        logging.basicConfig(level=level, format="%(levelname)s %(message)s")
    else:
        root = logging.getLogger()
        for handler in list(root.handlers):
            root.removeHandler(handler)
        root.addHandler(QueueHandler(logs))
        root.setLevel(level)
    logging.getLogger(WORKER_LOGGER).setLevel(level)
    route_library_noise()  # Docling's UserWarnings: to the parent's log at INFO, not stderr
    if level > logging.DEBUG:  # Docling's INFO lines would cross the progress bar
        for name in _CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(max(level, logging.WARNING))


def run_worker(
    config: ChunkWorkerConfig,
    items: list[WorkItem],
    results: Any,
    current_file: Any,
    logs: LogPipe | None = None,
) -> None:
    """The worker's entry point: convert ``items``, reporting as the module docstring says.

    Args:
        config: Worker configuration.
        items: ``(absolute_file_path, file_hash)`` to convert.
        results: Queue receiving each result, then :data:`DONE`.
        current_file: Shared ``multiprocessing.Value('i')`` (or ``None``) set to the index
            of the file being converted, ``-1`` between files.
        logs: Where log records go; ``None`` logs to the worker's stderr.
    """
    _forward_logs(logs, config.log_level)
    logger = logging.getLogger(WORKER_LOGGER)
    processor = build_processor(config, logger)
    # Start-up is not charged to the first file's timeout (current_file is still -1).
    processor.warm_up(Path(path).suffix for path, _ in items)

    def mark(index: int) -> None:
        if current_file is not None:
            current_file.value = index

    try:
        convert_items(config, items, processor, results.put, logger, mark)
    finally:
        close_page_renderer()  # the OCR page renderer's child lives as long as the worker
    results.put(DONE)


class WorkerProcess:
    """A spawned process converting one batch, seen from the parent.

    Args:
        config: Worker configuration.
        batch: ``(absolute_file_path, file_hash)`` to convert.
    """

    def __init__(self, config: ChunkWorkerConfig, batch: list[WorkItem]) -> None:
        self.batch = batch
        self.finished = False
        self._started = False
        self._results = _CONTEXT.Queue()
        self._current = _CONTEXT.Value("i", -1)
        self._logs = LogPipe()
        self._listener = _WorkerLogListener(self._logs, _ToParentLoggers())
        self._process = _CONTEXT.Process(
            target=run_worker,
            args=(config, batch, self._results, self._current, self._logs),
            name="klea-chunk-worker",
            daemon=True,
        )

    def start(self) -> WorkerProcess:
        """Start the worker and the thread forwarding its log records."""
        self._process.start()
        self._logs.close_writer()
        self._listener.start()
        self._started = True
        return self

    def poll(self, timeout: float) -> ChunkItemResult | None:
        """The next result, waiting up to ``timeout`` seconds; ``None`` if none came.

        Sets :attr:`finished` when the worker reports it is done.
        """
        try:
            message = self._results.get(timeout=timeout)
        except queue_module.Empty:
            return None
        if message == DONE:
            self.finished = True
            return None
        result: ChunkItemResult = message
        return result

    def current_index(self) -> int:
        """Index in the batch of the file being converted; ``-1`` between files."""
        return int(self._current.value)

    def exit_reason(self) -> str | None:
        """``None`` while the worker runs; else how it ended."""
        if self._process.is_alive():
            return None
        return f"worker exited with code {self._process.exitcode}"

    def kill(self) -> None:
        """Kill the worker (SIGKILL)."""
        self._process.kill()

    def drain(self) -> list[ChunkItemResult]:
        """Once the worker has stopped: the results still in the pipe."""
        self._process.join(timeout=30)
        left: list[ChunkItemResult] = []
        while True:
            try:
                message = self._results.get(timeout=_DRAIN_POLL_S)
            except (queue_module.Empty, OSError, EOFError):
                return left
            if message != DONE:
                left.append(message)

    def close(self) -> None:
        """Kill the worker if it still runs, then release its queue and log pipe."""
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=10)
        self._results.close()
        self._results.join_thread()
        if self._started:
            self._listener.stop()  # returns once the pipe has ended: every record handled
        self._logs.close()
