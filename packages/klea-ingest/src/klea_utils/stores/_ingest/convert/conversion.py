"""Docling conversion: converter construction, PDF pipeline choice, offline fallbacks.

PDFs go through Docling's standard pipeline (layout, tables, OCR) when its layout model
is available, either under an ``artifacts_path`` or in the Hugging Face cache. When it is
not (an offline host without the models), the model-free path of
:mod:`klea_utils.stores._ingest.pdf.offline_pdf` is used with one warning: pdfium's text layer,
checked page by page, tesseract for scanned or unreadable pages, and structure recovered from
typography and numbering. Every other format uses Docling's own model-free backends.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from klea_utils.stores._ingest.convert.not_stored import (
    CANNOT_OPEN,
    EMPTY_DOCUMENT,
    PASSWORD_NEEDED,
    reason,
)
from klea_utils.stores._ingest.pdf.pdf_fallback import SecondReader
from klea_utils.stores.ingest_exceptions import ConversionError

__all__ = [
    "DEVICES",
    "LAYOUT_REPO_ID",
    "TABLE_REPO_ID",
    "Converter",
    "cached_snapshot",
    "layout_models_available",
    "validate_device",
]

DEVICES = ("auto", "cpu", "cuda", "mps")
"""Accepted ``device`` values (``cuda:N`` selects one GPU)."""

LAYOUT_REPO_ID = "docling-project/docling-layout-heron"
"""Hugging Face repository of Docling's default layout model."""

TABLE_REPO_ID = "docling-project/docling-models"
"""Hugging Face repository of Docling's TableFormer model."""

NATIVE_PIPELINE_WARNING = (
    "Docling's PDF layout models are not available (no artifacts path given and nothing in "
    "the Hugging Face cache), so PDFs are converted on the model-free path: pdfium's text "
    "layer is read page by page, running heads and stamps are removed, headings, tables "
    "and the title are inferred from typography and numbering, and scanned or unreadable "
    "pages are OCRed with tesseract instead of Docling's OCR. To get the full pipeline run "
    "`docling-tools models download` on a machine with internet access and pass its "
    "output folder as artifacts_path (or copy the Hugging Face cache)."
)


def validate_device(device: str) -> str:
    """Return ``device`` if it is ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.

    Raises:
        ValueError: Naming the bad value and the accepted ones.
    """
    base, _, index = device.partition(":")
    if base not in DEVICES or (index and (base != "cuda" or not index.isdigit())):
        raise ValueError(f"device must be one of {', '.join(DEVICES)} or cuda:N, got {device!r}")
    return device


def cached_snapshot(repo_id: str, cache_dir: Path | None = None) -> Path | None:
    """The Hugging Face cache's snapshot of ``repo_id`` at ``main``, ``None`` when absent.

    What ``snapshot_download(repo_id, local_files_only=True)`` finds, read from the cache's
    layout (``models--org--name/refs/main`` naming a folder under ``snapshots``) without
    importing the hub client and its HTTP stack, which cost a worker about 0.4 CPU-seconds
    of start-up. ``cache_dir`` defaults to the hub's (``HF_HUB_CACHE``). An empty ref is
    not a snapshot (the hub client then returns the ``snapshots`` folder itself, from
    which no model loads).
    """
    from huggingface_hub import constants

    repo = Path(cache_dir or constants.HF_HUB_CACHE) / f"models--{repo_id.replace('/', '--')}"
    try:
        commit = (repo / "refs" / "main").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    snapshot = repo / "snapshots" / commit
    return snapshot if commit and snapshot.is_dir() else None


def _repo_available(repo_id: str, artifacts_path: Path | None) -> bool:
    if artifacts_path is not None:
        return (Path(artifacts_path) / repo_id.replace("/", "--")).is_dir()
    return cached_snapshot(repo_id) is not None


def layout_models_available(artifacts_path: Path | None = None) -> bool:
    """Return whether Docling's layout model can be loaded without a download."""
    return _repo_available(LAYOUT_REPO_ID, artifacts_path)


@dataclass(frozen=True)
class _PdfCheck:
    pages: int
    pdfium_opens: bool = True
    """False when only the second reader (pypdf) opens the file."""


_EMPTY_PAGE_TREE = re.compile(rb"/Count\s*0\b")
_PAGE_OBJECT = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def _has_empty_page_tree(path: Path) -> bool:
    data = path.read_bytes()
    return bool(_EMPTY_PAGE_TREE.search(data)) and not _PAGE_OBJECT.search(data)


def _check_pdf(path: Path) -> _PdfCheck:
    """Open ``path`` with pypdfium2, raising a named error for junk, truncated, empty PDFs."""
    import pypdfium2 as pdfium

    with path.open("rb") as handle:
        head = handle.read(1024)
    if b"%PDF-" not in head:
        raise ConversionError(
            path,
            reason(
                CANNOT_OPEN, "not a PDF file (no %PDF- header); the file is junk or mislabelled"
            ),
        )
    try:
        pdf = pdfium.PdfDocument(str(path))
    except Exception as exc:
        if _has_empty_page_tree(path):
            # PDFium refuses a document without pages (with a stale or "success" reason).
            raise ConversionError(path, reason(EMPTY_DOCUMENT, "the PDF has zero pages")) from exc
        if "password" in str(exc).lower():
            raise ConversionError(
                path,
                reason(
                    PASSWORD_NEEDED,
                    "the PDF is password-protected (encrypted); save an unprotected copy "
                    "(for example qpdf --decrypt) to ingest it",
                ),
            ) from exc
        second = SecondReader(path)
        if second.page_count:
            return _PdfCheck(pages=second.page_count, pdfium_opens=False)
        raise ConversionError(
            path,
            reason(
                CANNOT_OPEN,
                f"the PDF is damaged or truncated (pdfium: {exc}; {second.error})",
            ),
        ) from exc
    try:
        pages = len(pdf)
    finally:
        pdf.close()
    if pages == 0:
        raise ConversionError(path, reason(EMPTY_DOCUMENT, "the PDF has zero pages"))
    return _PdfCheck(pages=pages)


class Converter:
    """Converts one source file at a time into a ``DoclingDocument``.

    Args:
        do_ocr: OCR scanned PDFs (Docling's OCR, else tesseract).
        device: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps`` for Docling's models.
        artifacts_path: Folder with Docling's models (``docling-tools models download``).
        logger: Receives conversion messages. The fallback to the model-free PDF
            pipeline is announced once per run by ``StoresBuilder.chunk_all``.
    """

    def __init__(
        self,
        *,
        do_ocr: bool,
        device: str = "auto",
        artifacts_path: Path | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.do_ocr = do_ocr
        self.device = validate_device(device)
        self.artifacts_path = Path(artifacts_path) if artifacts_path is not None else None
        self.logger = logger or logging.getLogger(__name__)
        self.standard_pdf = layout_models_available(self.artifacts_path)
        self._converter: Any = None
        self.last_recovery = ""
        """What the offline PDF path recovered in the last file (pages OCRed, unreadable)."""
        self.last_readout: Any = None
        """The offline PDF path's page record (its ``Recovery``) of the last file, if it
        took that path; what a file without chunks is explained from."""

    def _build(self) -> Any:
        from docling.datamodel.base_models import InputFormat
        from docling.document_converter import DocumentConverter, PdfFormatOption

        if not self.standard_pdf:
            # PDFs take the offline path (offline_pdf); other formats need no models.
            return DocumentConverter()
        option = PdfFormatOption(pipeline_options=self._standard_options())
        return DocumentConverter(format_options={InputFormat.PDF: option})

    def _standard_options(self) -> Any:
        from docling.datamodel.accelerator_options import AcceleratorOptions
        from docling.datamodel.pipeline_options import PdfPipelineOptions, TesseractCliOcrOptions
        from klea_utils.stores._ingest.pdf.ocr import tesseract_available

        options = PdfPipelineOptions(
            artifacts_path=self.artifacts_path,
            do_ocr=self.do_ocr,
            do_table_structure=_repo_available(TABLE_REPO_ID, self.artifacts_path),
            accelerator_options=AcceleratorOptions(device=self.device),
        )
        if self.do_ocr and tesseract_available():
            options.ocr_options = TesseractCliOcrOptions()
        return options

    @property
    def converter(self) -> Any:
        """The lazily built Docling ``DocumentConverter``."""
        if self._converter is None:
            self._converter = self._build()
        return self._converter

    def convert(self, path: Path) -> Any:
        """Convert ``path``; return its ``DoclingDocument``.

        Raises:
            ConversionError: Naming the file and why it failed (junk, truncated or
                zero-page PDF, Docling failure, OCR unavailable).
        """
        path = Path(path)
        self.last_recovery = ""
        self.last_readout = None
        if path.suffix.lower() == ".pdf":
            check = _check_pdf(path)
            if not self.standard_pdf or not check.pdfium_opens:
                # Docling's pipeline reads through pdfium too: a file only pypdf opens
                # takes the offline path, which falls back to pypdf.
                from klea_utils.stores._ingest.pdf.offline_pdf import convert_pdf_offline

                document, recovery = convert_pdf_offline(
                    path, do_ocr=self.do_ocr, logger=self.logger
                )
                self.last_recovery = recovery.describe()
                self.last_readout = recovery
                return document
        try:
            result = self.converter.convert(path, raises_on_error=False)
        except Exception as exc:
            raise ConversionError(path, f"Docling failed: {type(exc).__name__}: {exc}") from exc
        status = getattr(result.status, "value", str(result.status))
        if status not in ("success", "partial_success"):
            messages = "; ".join(e.error_message for e in result.errors) or "no details"
            raise ConversionError(path, f"Docling conversion {status}: {messages}")
        if path.suffix.lower() == ".pdf":
            from klea_utils.stores._ingest.pdf.offline_pdf import (
                convert_pdf_offline,
                unreadable_docling_pages,
            )

            pages = unreadable_docling_pages(result.document, path)
            if pages:
                # Docling's parser misread fonts that pdfium reads (Type 3 bitmap fonts):
                # the offline path reads pdfium's layer and OCRs what stays unreadable.
                self.logger.warning(
                    "%s: Docling's text is unreadable on page(s) %s where pdfium's text layer "
                    "reads; converting with the offline path instead",
                    path.name,
                    ", ".join(map(str, pages)),
                )
                document, recovery = convert_pdf_offline(
                    path, do_ocr=self.do_ocr, logger=self.logger
                )
                note = f"page(s) {', '.join(map(str, pages))} read from pdfium's text layer"
                self.last_recovery = "; ".join(x for x in (note, recovery.describe()) if x)
                self.last_readout = recovery
                return document
        return result.document
