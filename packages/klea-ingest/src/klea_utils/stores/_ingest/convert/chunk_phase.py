"""The steps of :meth:`~klea_utils.stores.ingestion.StoresBuilder.chunk_all`.

:func:`scan_sources` splits the source files into cache hits and files to convert,
:func:`convert_uncached` converts the latter (in this process, in local workers or on Ray),
and :func:`record_and_prune` records the failures and drops stale cache entries. Also the
checks of the builder's chunking and Ray options made at construction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.chunking.chunking import embedding_max_tokens
from klea_utils.stores._ingest.convert.conversion import (
    NATIVE_PIPELINE_WARNING,
    layout_models_available,
)
from klea_utils.stores._ingest.workers.batch_conversion import convert_in_process
from klea_utils.stores._ingest.workers.pool_size import resolve_workers
from klea_utils.stores.chunk_cache import ChunkCache, compute_file_hash
from klea_utils.stores.chunk_worker import (
    ChunkItemResult,
    ChunkWorkerConfig,
    dispatch_conversion_batches,
)

__all__ = [
    "check_ray_options",
    "convert_uncached",
    "record_and_prune",
    "scan_sources",
    "warn_if_forced_max_tokens",
    "warn_if_pdfs_fall_back",
]


def check_ray_options(ray_address: str | None, ray_embed: bool, embeddings: object) -> None:
    """Refuse an empty ``ray_address`` and ``ray_embed`` without a cluster or with embeddings."""
    if ray_address is not None and not ray_address.strip():
        raise ValueError("ray_address must be 'auto', 'local' or host:port, got ''")
    if ray_embed and ray_address is None:
        raise ValueError("ray_embed=True needs ray_address (the cluster to embed on)")
    if ray_embed and embeddings is not None:
        raise ValueError("ray_embed=True embeds on the cluster; do not also pass embeddings")


def warn_if_forced_max_tokens(
    embedding_model: str, max_tokens: int, logger: logging.Logger
) -> None:
    """Warn when ``max_tokens`` exceeds what the embedding model reads (it was forced)."""
    limit = embedding_max_tokens(embedding_model)
    if limit is not None and max_tokens > limit:
        logger.warning(
            "max_tokens=%d exceeds the %d tokens the embedding model %r reads (forced); "
            "the end of longer chunks is truncated when embedded.",
            max_tokens,
            limit,
            embedding_model,
        )


def scan_sources(
    files: list[Path], cache: ChunkCache, force: bool, logger: logging.Logger
) -> tuple[dict[str, dict[str, Any]], dict[Path, str], list[tuple[str, str]]]:
    """Return the cached files' template entries, every readable file's hash, and the
    ``(path, hash)`` pairs still to convert (all of them under ``force``)."""
    file_headings: dict[str, dict[str, Any]] = {}
    live: dict[Path, str] = {}
    todo: list[tuple[str, str]] = []
    for path in files:
        try:
            file_hash = compute_file_hash(path)
        except OSError as exc:  # vanished or unreadable since it was listed
            logger.error("%s: cannot be read (%s); skipped", path, exc.strerror or exc)
            continue
        live[path] = file_hash
        cached = None if force else cache.load(path, file_hash)
        if cached is not None and cached.docs:
            file_headings[path.name] = cached.template_entry()
        else:
            todo.append((str(path), file_hash))
    return file_headings, live, todo


def warn_if_pdfs_fall_back(
    todo: list[tuple[str, str]], artifacts_path: Path | None, logger: logging.Logger
) -> None:
    """Warn once per run when PDFs will go through the model-free pipeline."""
    has_pdf = any(path.lower().endswith(".pdf") for path, _ in todo)
    if has_pdf and not layout_models_available(artifacts_path):
        logger.warning(NATIVE_PIPELINE_WARNING)


def convert_uncached(
    config: ChunkWorkerConfig,
    todo: list[tuple[str, str]],
    *,
    ray_address: str | None,
    worker_batch_size: int,
    in_process: bool,
    logger: logging.Logger,
    workers: int | None = None,
    on_converted: Callable[[ChunkItemResult], object] | None = None,
) -> list[ChunkItemResult]:
    """Convert ``todo`` in this process, on the Ray cluster, or in local workers.

    ``workers`` local workers run at once (``None``: :func:`resolve_workers`'s auto).
    ``on_converted`` is told each file cached as it is, in this process and in local
    workers (not on Ray, whose results come back together).
    """
    if in_process:
        return convert_in_process(config, todo, on_converted)
    if ray_address is not None:
        from klea_utils.stores._ingest.workers.ray_cluster import connect
        from klea_utils.stores._ingest.workers.ray_conversion import convert_on_ray

        ray = connect(ray_address, logger)
        return convert_on_ray(ray, logger, config, todo, worker_batch_size)
    pool = min(resolve_workers(workers, config.mem_limit_bytes), len(todo))
    logger.info("Converting %d file(s) in %d worker(s) at once", len(todo), pool)
    return dispatch_conversion_batches(
        logger, config, todo, worker_batch_size, workers=pool, on_converted=on_converted
    )


def record_and_prune(
    source_path: Path,
    results: list[ChunkItemResult],
    cache: ChunkCache,
    live: dict[Path, str],
    logger: logging.Logger,
) -> None:
    """Record this run's failed files, then drop cache entries of files gone or changed."""
    from klea_utils.stores._ingest.convert.failures import write_conversion_failures

    write_conversion_failures(source_path, results)
    pruned = cache.prune(live)
    if pruned:
        logger.info("Pruned %d stale cache entr%s", pruned, "y" if pruned == 1 else "ies")
