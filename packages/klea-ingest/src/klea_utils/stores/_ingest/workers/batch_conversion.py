"""Convert a batch of files one by one into the chunk cache: the loop every worker runs.

:func:`convert_items` is shared by the two entry points: :func:`convert_in_process` (the
parent converts, for small corpora and tests) and the spawned worker's
:func:`klea_utils.stores._ingest.workers.worker_process.run_worker`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from klea_utils.stores._ingest.convert.file_processing import FileOutcome, FileProcessor
from klea_utils.stores._ingest.workers.worker_memory import over_cap, rss_bytes
from klea_utils.stores._ingest.workers.worker_results import (
    ChunkItemResult,
    ChunkWorkerConfig,
    ResultStatus,
    WorkItem,
)

__all__ = ["WORKER_LOGGER", "build_processor", "convert_in_process", "convert_items"]

WORKER_LOGGER = "klea_utils.stores.chunk_worker"
"""The logger conversion workers log to (in a spawned worker, forwarded to the parent)."""


def build_processor(config: ChunkWorkerConfig, logger: logging.Logger) -> FileProcessor:
    """The Docling converter and chunker ``config`` describes."""
    return FileProcessor(
        source_path=Path(config.source_path),
        max_tokens=config.max_tokens,
        merge_peers=config.merge_peers,
        overlap_sentences=config.overlap_sentences,
        tokenizer_model=config.tokenizer_model,
        do_ocr=config.do_ocr,
        device=config.device,
        artifacts_path=Path(config.artifacts_path) if config.artifacts_path else None,
        logger=logger,
    )


def _result_for(path: Path, file_hash: str, outcome: FileOutcome) -> ChunkItemResult:
    cached = outcome.cached
    if outcome.error is not None or cached is None:
        error = outcome.error or f"{path}: conversion gave no result"
        return ChunkItemResult(path.name, file_hash, "failed", error=error, file_path=str(path))
    status: ResultStatus = "ok" if cached.docs else "zero_chunks"
    entry = cached.template_entry() if cached.docs else None
    note = None if cached.docs else outcome.note
    return ChunkItemResult(
        path.name, file_hash, status, file_headings_entry=entry, error=note, file_path=str(path)
    )


def _over_cap(config: ChunkWorkerConfig, logger: logging.Logger, left: int) -> bool:
    rss = rss_bytes()
    if not over_cap(rss, config.mem_limit_bytes):
        return False
    logger.info("Worker RSS %d > cap %d: deferring %d file(s)", rss, config.mem_limit_bytes, left)
    return True


def convert_items(
    config: ChunkWorkerConfig,
    items: list[WorkItem],
    processor: FileProcessor,
    emit: Callable[[ChunkItemResult], object],
    logger: logging.Logger,
    mark: Callable[[int], object] = lambda index: None,
) -> None:
    """Convert and cache ``items`` in order, handing one result per item to ``emit``.

    Before each file after the first, if the process RSS exceeds
    ``config.mem_limit_bytes`` the remaining items are emitted as ``deferred`` (so a
    fresh worker always converts at least one file). ``mark`` is told the index of the
    file being converted, and ``-1`` once it is done.
    """
    for index, (file_path, file_hash) in enumerate(items):
        if index > 0 and _over_cap(config, logger, len(items) - index):
            for rest_path, rest_hash in items[index:]:
                emit(
                    ChunkItemResult(
                        Path(rest_path).name, rest_hash, "deferred", file_path=rest_path
                    )
                )
            return
        mark(index)
        path = Path(file_path)
        emit(_result_for(path, file_hash, processor.process(path, file_hash)))
        mark(-1)


def convert_in_process(
    config: ChunkWorkerConfig,
    items: list[WorkItem],
    on_converted: Callable[[ChunkItemResult], object] | None = None,
) -> list[ChunkItemResult]:
    """Convert and cache ``items`` in this process; one result per item, in order.

    ``on_converted`` is told each file cached (``ok``) as soon as it is.
    """
    logger = logging.getLogger(WORKER_LOGGER)
    results: list[ChunkItemResult] = []

    def emit(result: ChunkItemResult) -> None:
        results.append(result)
        if on_converted is not None and result.status == "ok":
            on_converted(result)

    convert_items(config, items, build_processor(config, logger), emit, logger)
    return results
