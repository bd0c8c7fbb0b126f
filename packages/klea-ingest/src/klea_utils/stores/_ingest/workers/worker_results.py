"""What a conversion worker is given (its configuration) and what it reports per file.

Re-exported by :mod:`klea_utils.stores.chunk_worker`, which documents them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

__all__ = ["RESULT_STATUSES", "ChunkItemResult", "ChunkWorkerConfig", "ResultStatus", "WorkItem"]

ResultStatus = Literal["ok", "zero_chunks", "failed", "deferred"]
"""Every value ``ChunkItemResult.status`` may take."""

RESULT_STATUSES: tuple[ResultStatus, ...] = get_args(ResultStatus)
"""Every value ``ChunkItemResult.status`` may take."""

WorkItem = tuple[str, str]
"""``(absolute_file_path, file_hash)``: one file to convert."""


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
        log_level: The lowest level a worker forwards to the parent's logging.
        merge_peers: Merge undersized sibling chunks.
        device: ``auto``, ``cpu``, ``cuda`` (or ``cuda:N``) for Docling's models.
        artifacts_path: Folder with Docling's models, if any.
        file_timeout_s: A worker showing no progress for this long is killed.
        overlap_sentences: Sentences repeated at the start of the next piece of a cut text.
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
    overlap_sentences: int = 0

    def __post_init__(self) -> None:
        if self.overlap_sentences < 0:
            raise ValueError(
                f"ChunkWorkerConfig.overlap_sentences must be >= 0, got {self.overlap_sentences}"
            )
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

    def chunking(self) -> dict[str, Any]:
        """The chunking settings a cache entry is keyed on (``chunking_settings``)."""
        from klea_utils.stores._ingest.chunking.chunking import chunking_settings

        return chunking_settings(
            max_tokens=self.max_tokens,
            merge_peers=self.merge_peers,
            tokenizer_model=self.tokenizer_model,
            overlap_sentences=self.overlap_sentences,
        )


@dataclass(frozen=True)
class ChunkItemResult:
    """Outcome of converting one file inside a worker.

    ``status`` is one of:

    - ``ok``: converted and cached; ``file_headings_entry`` holds the file's
      metadata-map template entry;
    - ``zero_chunks``: converted but produced no chunks (e.g. a scanned PDF without OCR);
      ``error``, when set, says why
      (:func:`klea_utils.stores._ingest.convert.not_stored.no_chunks_reason`);
    - ``failed``: conversion raised (or the file killed two workers); ``error`` says why;
    - ``deferred``: not processed because the worker hit its RSS cap; ``file_path`` lets
      the parent re-dispatch it to a fresh worker.
    """

    file_name: str
    file_hash: str
    status: ResultStatus
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
