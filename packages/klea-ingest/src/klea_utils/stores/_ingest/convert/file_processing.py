"""Convert, chunk, extract metadata for and cache one source file.

Shared by the spawned conversion workers and the in-process path of ``chunk_all``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.chunking.chunking import Chunker, chunking_settings
from klea_utils.stores._ingest.convert.conversion import Converter
from klea_utils.stores._ingest.convert.not_stored import no_chunks_reason
from klea_utils.stores.chunk_cache import CachedFile, ChunkCache, heading_chains
from klea_utils.stores.ingest_exceptions import ConversionError

__all__ = ["FileOutcome", "FileProcessor", "extract_biblio"]


def extract_biblio(
    path: Path,
    document: Any,
    cache_dir: Path,
    logger: logging.Logger,
    head_lines: list[Any] | None = None,
) -> dict[str, Any]:
    """Return ``klea_utils.stores.biblio.extract_metadata`` for the file, ``{}`` if unavailable.

    ``head_lines``: the first pages' lines as the conversion read them (``None``: the
    metadata step reads them from the file where it needs them)."""
    try:
        from klea_utils.stores.biblio import extract_metadata
    except ImportError:
        return {}
    try:
        return dict(extract_metadata(path, document, cache_dir=cache_dir, head_lines=head_lines))
    except Exception as exc:  # metadata is a pre-fill; a failure must not lose the chunks
        logger.warning("Bibliographic extraction failed for %s: %s", path, exc)
        return {}


class FileOutcome:
    """What processing one file produced: its cache entry, or why it failed.

    ``note`` says why a file that was read produced no chunks (``None`` when it has some).
    """

    __slots__ = ("cached", "error", "note")

    def __init__(
        self, cached: CachedFile | None = None, error: str | None = None, note: str | None = None
    ) -> None:
        self.cached = cached
        self.error = error
        self.note = note


class FileProcessor:
    """Builds the Docling converter and chunker lazily, then processes files one by one.

    Args:
        source_path: The source folder (the cache lives inside it).
        max_tokens, merge_peers, tokenizer_model, overlap_sentences: Chunking options
            (the cache keys entries on them: a changed setting re-chunks).
        do_ocr, device, artifacts_path: Conversion options.
        logger: Logger for warnings and per-file errors.
    """

    def __init__(
        self,
        *,
        source_path: Path,
        max_tokens: int,
        merge_peers: bool,
        tokenizer_model: str,
        do_ocr: bool,
        device: str,
        artifacts_path: Path | None,
        logger: logging.Logger,
        overlap_sentences: int = 0,
    ) -> None:
        settings = chunking_settings(
            max_tokens=max_tokens,
            merge_peers=merge_peers,
            tokenizer_model=tokenizer_model,
            overlap_sentences=overlap_sentences,
        )
        self.cache = ChunkCache(source_path, chunking=settings)
        self.logger = logger
        self._converter = Converter(
            do_ocr=do_ocr, device=device, artifacts_path=artifacts_path, logger=logger
        )
        self._chunker_options = {
            "max_tokens": max_tokens,
            "merge_peers": merge_peers,
            "tokenizer_model": tokenizer_model,
            "overlap_sentences": overlap_sentences,
        }
        self._chunker: Chunker | None = None

    @property
    def chunker(self) -> Chunker:
        """The lazily built chunker (loads the tokenizer on first use)."""
        if self._chunker is None:
            self._chunker = Chunker(logger=self.logger, **self._chunker_options)  # type: ignore[arg-type]
        return self._chunker

    def warm_up(self, suffixes: Iterable[str] | None = None) -> None:
        """Load the tokenizer and the converter the files will need now, not on the first file.

        ``suffixes`` are the files' suffixes (``.pdf``, ``.md``), when known. Without
        Docling's layout models PDFs take the model-free path, which never uses Docling's
        converter: when every file is a PDF, only that path is loaded and the converter
        (Docling's pipelines, a CPU-second or more to import) is not built at all. A
        worker's start-up is most of its cost on a corpus of short PDFs, and every fresh
        worker pays it again. The chunker and the metadata extraction are imported here too,
        so the first file is not charged for them against its time-out.
        """
        pdf_only = suffixes is not None and {s.lower() for s in suffixes} <= {".pdf"}
        if pdf_only and not self._converter.standard_pdf:
            from klea_utils.stores._ingest.pdf import offline_pdf  # noqa: F401
        else:
            _ = self._converter.converter
        self.chunker.warm_up()
        with contextlib.suppress(ImportError):  # as extract_biblio: metadata is optional
            from klea_utils.stores import biblio  # noqa: F401

    def process(self, path: Path, file_hash: str) -> FileOutcome:
        """Convert, chunk and cache ``path``; never raises for a bad document."""
        outcome = self.convert(path, file_hash)
        if outcome.cached is not None and outcome.cached.docs:
            # A zero-chunk file is not cached, so a later run (e.g. with OCR) retries it.
            self.cache.store(outcome.cached)
        return outcome

    def _page_labels(self, path: Path) -> dict[int, str] | None:
        """A PDF's page labels (its own, else the printed numbers the offline path found)."""
        if path.suffix.lower() != ".pdf":
            return None
        from klea_utils.stores._ingest.pdf.page_labels import page_labels

        printed = getattr(self._converter.last_readout, "printed", None)
        return page_labels(path, printed if isinstance(printed, dict) else None)

    def _section_titles(self, path: Path) -> dict[int, str] | None:
        """The running heads that title parts of a PDF read on the offline path, by page."""
        if path.suffix.lower() != ".pdf":
            return None
        titles = getattr(self._converter.last_readout, "section_titles", None)
        return titles if isinstance(titles, dict) else None

    def convert(self, path: Path, file_hash: str) -> FileOutcome:
        """Convert and chunk ``path`` without caching it (the Ray workers' driver caches)."""
        path = Path(path)
        try:
            document = self._converter.convert(path)
            docs = self.chunker.chunk(
                document,
                file_name=path.name,
                file_hash=file_hash,
                page_labels=self._page_labels(path),
                section_titles=self._section_titles(path),
            )
        except ConversionError as exc:
            return FileOutcome(error=str(exc))
        except Exception as exc:  # a Docling bug on one file must not stop the batch
            return FileOutcome(error=f"{path}: {type(exc).__name__}: {exc}")
        head_lines = getattr(self._converter.last_readout, "head_lines", None)
        metadata = extract_biblio(
            path,
            document,
            self.cache.cache_dir,
            self.logger,
            head_lines if isinstance(head_lines, list) else None,
        )
        del document
        cached = CachedFile(
            file_path=path.resolve(),
            file_hash=file_hash,
            docs=docs,
            metadata=metadata,
            headings=heading_chains(docs),
        )
        note = None
        if not docs:
            readout = self._converter.last_readout
            note = f"{path}: " + no_chunks_reason(path.name, readout, self._converter.do_ocr)
        return FileOutcome(cached=cached, note=note)
