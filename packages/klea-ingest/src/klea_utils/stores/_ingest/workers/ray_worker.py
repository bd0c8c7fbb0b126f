"""What runs on a Ray host: a conversion worker that converts file bytes it is sent.

:class:`RayConversionWorker` becomes a Ray actor (see
:mod:`klea_utils.stores._ingest.workers.ray_conversion`): Docling and the tokenizer are loaded once
when the actor starts, then each call converts one file. The host needs no shared file
system and writes nothing the driver reads: the file's bytes arrive with the call, are
written to the actor's private temporary folder under the file's own name (Docling and
the bibliographic extraction read the name), and the chunks, metadata and heading chains
go back to the driver, which alone writes the chunk cache. DOI look-ups the actor makes
are returned too, so the driver's ``doi-cache.json`` keeps them.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.biblio.doi_cache import DOI_CACHE_FILE_NAME, open_doi_cache
from klea_utils.stores._ingest.workers.worker_memory import over_cap, rss_bytes
from langchain_core.documents import Document

__all__ = ["RayConversionWorker", "RayFileResult", "over_cap", "read_doi_records"]

_PREFIX = "klea-ray-"
"""Start of a worker's private folder name, followed by its process id."""


@dataclass
class RayFileResult:
    """What a Ray worker sends back for one file.

    ``error`` is set when the conversion failed (the message names the driver's path);
    otherwise ``docs`` may be empty (a file with zero chunks). ``rss`` is the worker's
    resident memory after the file, so the driver retires a worker over its cap.
    ``deferred`` means the worker was already over its cap when the file's turn came (it
    converts nothing more), so the driver sends the file to a fresh worker.
    """

    docs: list[Document] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    headings: list[str] = field(default_factory=list)
    error: str | None = None
    note: str | None = None
    """Why a file read without error produced no chunks (names the driver's path)."""
    doi_records: dict[str, dict[str, Any]] = field(default_factory=dict)
    rss: int | None = None
    deferred: bool = False


class RayConversionWorker:
    """Converts files sent as bytes; one instance per Ray actor (one worker process).

    Args:
        options: The conversion options: ``max_tokens``, ``merge_peers``,
            ``overlap_sentences``,
            ``tokenizer_model``, ``do_ocr``, ``device``, ``artifacts_path`` (a folder
            on the worker's host, or ``None``), ``log_level`` and ``mem_limit_bytes``
            (the memory cap, checked before each file after the first, as in a local
            worker; ``None``: no cap), and ``suffixes``, those of the run's files (what
            to load at start-up; ``None``: everything).
        doi_records: The driver's DOI cache, so the worker does not ask again.
    """

    def __init__(self, options: dict[str, Any], doi_records: dict[str, dict[str, Any]]) -> None:
        from klea_utils.stores._ingest.convert.file_processing import FileProcessor

        logging.basicConfig(level=options["log_level"])
        from klea_utils.stores._ingest.library_noise import route_library_noise

        route_library_noise()
        self.logger = logging.getLogger("klea_utils.stores.ray_worker")
        self.logger.setLevel(options["log_level"])
        _sweep_dead_workers_folders()
        self.root = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
        atexit.register(shutil.rmtree, self.root, True)
        self.files = self.root / "files"
        self.files.mkdir()
        artifacts = options.get("artifacts_path")
        self.processor = FileProcessor(
            source_path=self.root,
            max_tokens=options["max_tokens"],
            merge_peers=options["merge_peers"],
            overlap_sentences=options.get("overlap_sentences", 0),
            tokenizer_model=options["tokenizer_model"],
            do_ocr=options["do_ocr"],
            device=options["device"],
            artifacts_path=Path(artifacts) if artifacts else None,
            logger=self.logger,
        )
        self.doi_cache = open_doi_cache(self.processor.cache.cache_dir)
        for doi, record in doi_records.items():
            self.doi_cache.put(doi, record)
        self.doi_cache.flush()
        self.known_dois = set(doi_records)
        self.mem_limit: int | None = options.get("mem_limit_bytes")
        self.converted = 0
        self.processor.warm_up(options.get("suffixes"))

    def node_id(self) -> str:
        """The Ray node this worker runs on (answered once start-up is over)."""
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def pid(self) -> int:
        """This worker's process id."""
        return os.getpid()

    def convert(self, name: str, file_hash: str, data: bytes, driver_path: str) -> RayFileResult:
        """Convert one file from its bytes; ``driver_path`` names it in errors.

        The driver sends the next file before this one is answered, so the cap is checked
        here: once over it, every later call is answered ``deferred`` without converting.
        """
        if self.converted and over_cap(rss_bytes(), self.mem_limit):
            return RayFileResult(deferred=True)
        self.converted += 1
        path = self.files / name
        path.write_bytes(data)
        try:
            outcome = self.processor.convert(path, file_hash)
        finally:
            path.unlink(missing_ok=True)
        result = RayFileResult(rss=rss_bytes())
        if outcome.error is not None:
            result.error = outcome.error.replace(str(path), driver_path)
            return result
        cached = outcome.cached
        assert cached is not None  # FileOutcome holds a cache entry or an error
        result.docs, result.metadata, result.headings = (
            cached.docs,
            cached.metadata,
            cached.headings,
        )
        if outcome.note is not None:
            result.note = outcome.note.replace(str(path), driver_path)
        result.doi_records = self._new_doi_records()
        return result

    def _new_doi_records(self) -> dict[str, dict[str, Any]]:
        self.doi_cache.flush()
        entries = self.doi_cache.records()
        new = {doi: entries[doi] for doi in entries if doi not in self.known_dois}
        self.known_dois.update(new)
        return new


def _sweep_dead_workers_folders() -> None:
    """Remove the folders of workers on this host that were killed (their process is gone)."""
    import psutil

    for folder in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*-*"):
        pid = folder.name[len(_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def read_doi_records(cache_dir: Path) -> dict[str, dict[str, Any]]:
    """The DOI records in ``cache_dir``'s ``doi-cache.json`` (empty when there is none)."""
    from klea_utils.stores._ingest.biblio.doi_cache import DoiCache

    return DoiCache(cache_dir / DOI_CACHE_FILE_NAME).records()
