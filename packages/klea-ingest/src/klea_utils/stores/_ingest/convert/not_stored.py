"""Why a file was not stored: one true reason per file, worded so a user can act on it.

Every file that ends without chunks is given exactly one reason, written as
``<label>: <detail>``; the label is one of :data:`REASON_LABELS`:

- ``cannot be opened``: no reader (pdfium, then pypdf) can read the file's structure;
- ``password needed``: the PDF needs a user password;
- ``empty document``: no page, or no page that holds text or an image;
- ``no readable text``: scanned or unreadable pages, and OCR is off or could not read them;
- ``OCR not installed``: pages need OCR and the ``tesseract`` command is missing;
- ``time-out``: the conversion made no progress for the worker's time-out, twice;
- ``worker crash``: the file killed two conversion workers (a crash, the memory cap);
- ``not chunked``: ``store`` found no cached chunks (``chunk`` was not run, or the file
  changed since); only ``store`` gives it.

The conversion raises :class:`~klea_utils.stores.ingest_exceptions.ConversionError` with
one of these for a file it cannot read; a file read but without chunks gets
:func:`no_chunks_reason`; a file that kills its workers gets :func:`worker_death_reason`.
The reason is recorded in the failure record
(:mod:`klea_utils.stores._ingest.convert.failures`) and printed in the ``not stored`` line.
"""

from __future__ import annotations

from typing import Protocol

__all__ = [
    "CANNOT_OPEN",
    "EMPTY_DOCUMENT",
    "NOT_CHUNKED",
    "NO_READABLE_TEXT",
    "OCR_NOT_INSTALLED",
    "PASSWORD_NEEDED",
    "REASON_LABELS",
    "TIME_OUT",
    "WORKER_CRASH",
    "PdfReadout",
    "no_chunks_reason",
    "page_ranges",
    "reason",
    "worker_death_reason",
]

CANNOT_OPEN = "cannot be opened"
PASSWORD_NEEDED = "password needed"
EMPTY_DOCUMENT = "empty document"
NO_READABLE_TEXT = "no readable text"
OCR_NOT_INSTALLED = "OCR not installed"
TIME_OUT = "time-out"
WORKER_CRASH = "worker crash"
NOT_CHUNKED = "not chunked"

REASON_LABELS = (
    CANNOT_OPEN,
    PASSWORD_NEEDED,
    EMPTY_DOCUMENT,
    NO_READABLE_TEXT,
    OCR_NOT_INSTALLED,
    TIME_OUT,
    WORKER_CRASH,
    NOT_CHUNKED,
)
"""Every label a reason starts with."""

TIMED_OUT_MARKS = ("made no progress", "no answer for")
"""Parts of a worker death's reason (local worker, Ray worker) when it was killed for its
time-out."""


def reason(label: str, detail: str) -> str:
    """``label: detail``, the form of every reason."""
    if label not in REASON_LABELS:
        raise ValueError(f"unknown reason label {label!r}; expected one of {REASON_LABELS}")
    return f"{label}: {detail}"


def page_ranges(pages: list[int]) -> str:
    """``1-3, 7`` for pages 1, 2, 3, 7 (sorted, consecutive runs joined)."""
    out: list[list[int]] = []
    for page in sorted(set(pages)):
        if out and out[-1][1] == page - 1:
            out[-1][1] = page
        else:
            out.append([page, page])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


class PdfReadout(Protocol):
    """What the model-free PDF path learnt about a file's pages (its ``Recovery``)."""

    pages: int
    text_pages: list[int]
    image_pages: list[int]
    ocr: list[int]
    failed: list[int]


def no_chunks_reason(file_name: str, readout: PdfReadout | None, do_ocr: bool) -> str:
    """Why a file that was converted produced no chunks.

    ``readout`` is the model-free PDF path's page record (``None`` for other formats, or a
    PDF converted by Docling's pipeline, where only the file's kind is known).
    """
    if readout is None:
        if file_name.lower().endswith(".pdf"):
            how = "OCR is on" if do_ocr else "OCR is off (--no-ocr)"
            return reason(NO_READABLE_TEXT, f"Docling's pipeline found no text ({how})")
        return reason(EMPTY_DOCUMENT, "no text: the file is empty or holds only markup")
    if readout.failed and len(readout.failed) == readout.pages:
        return reason(CANNOT_OPEN, f"none of its {readout.pages} page(s) could be read")
    scans = sorted(set(readout.image_pages) - set(readout.text_pages))
    if not readout.text_pages and not scans:
        detail = f"none of its {readout.pages} page(s) holds text or an image"
        if readout.failed:
            detail += f" (page(s) {page_ranges(readout.failed)} could not be read)"
        return reason(EMPTY_DOCUMENT, detail)
    if scans and not do_ocr:
        return reason(
            NO_READABLE_TEXT,
            f"page(s) {page_ranges(scans)} are images without a text layer and OCR is off "
            "(--no-ocr); build without --no-ocr to read them",
        )
    if scans and not readout.ocr:
        return reason(
            NO_READABLE_TEXT,
            f"page(s) {page_ranges(scans)} are images without a text layer and OCR read "
            "no text in them",
        )
    pages = page_ranges(sorted(set(readout.text_pages) | set(readout.ocr)))
    return reason(
        NO_READABLE_TEXT,
        f"the text read on page(s) {pages} was too little or all page furniture (running "
        "heads, page numbers) and made no chunk",
    )


def worker_death_reason(path: str, deaths: int, last: str) -> str:
    """``path: reason`` for a file that was being converted when ``deaths`` workers died.

    ``last`` is how the last worker ended; a worker killed for making no progress means a
    time-out, any other end a crash.
    """
    if any(mark in last for mark in TIMED_OUT_MARKS):
        return f"{path}: " + reason(
            TIME_OUT,
            f"the conversion made no progress within the time-out in {deaths} workers "
            f"({last}); raise --file-timeout or split the file",
        )
    return f"{path}: " + reason(
        WORKER_CRASH,
        f"poison file: it killed {deaths} conversion workers ({last}); a crash in a PDF "
        "library, or the worker memory cap (--worker-mem-limit)",
    )
