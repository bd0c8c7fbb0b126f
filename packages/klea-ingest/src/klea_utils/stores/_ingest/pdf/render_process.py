"""The page renderer's own process: renders PDF pages for OCR, and does nothing else.

pdfium keeps font state for the whole process: rendering a page drawn with a font the PDF
does not embed (one pdfium substitutes) changes the tight character boxes
(``FPDFText_GetCharBox``) that text extraction later reads from *another* PDF in the same
process. So a conversion never renders in the process that reads text layers; it asks
this process instead (:mod:`klea_utils.stores._ingest.pdf.page_renderer` starts it, running
this file, and talks to it). It imports nothing of klea's, so it can run from its file.

The protocol, over the standard streams:

- a request is one JSON line on stdin: ``{"path": str, "page": int (0-based), "scale":
  float}``;
- the answer is one JSON line on stdout, ``{"width": w, "height": h}`` followed by the
  ``w * h`` bytes of the 8-bit greyscale image (row by row), or ``{"error": str}`` when the
  page cannot be rendered (the error names neither the file nor its folder);
- end of stdin (the parent closed it, or died) ends the process.

The last document asked for stays open, so the pages of one file are opened once.
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any

__all__ = ["main", "serve"]


def _error(exc: BaseException) -> str:
    """What went wrong, without the file's path (an ``OSError`` names it)."""
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"{type(exc).__name__}: {detail}"[:300]


class _OpenDocument:
    """The last document rendered from, kept open while requests name it."""

    def __init__(self) -> None:
        self._key: tuple[str, int, int, int] | None = None
        self._pdf: Any = None

    def get(self, path: str) -> Any:
        import pypdfium2 as pdfium

        stat = os.stat(path)
        key = (path, stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if key != self._key:
            self.close()
            self._pdf = pdfium.PdfDocument(path)
            self._key = key
        return self._pdf

    def close(self) -> None:
        if self._pdf is not None:
            self._pdf.close()
        self._pdf, self._key = None, None


def _render(documents: _OpenDocument, request: dict[str, Any]) -> Any:
    path, index, scale = str(request["path"]), int(request["page"]), float(request["scale"])
    pdf = documents.get(path)
    if not 0 <= index < len(pdf):
        raise IndexError(f"page {index + 1} of {len(pdf)}")
    page = pdf[index]
    try:  # rendered with the page's /Rotate applied, as a viewer shows it
        return page.render(scale=scale).to_pil().convert("L")
    finally:
        page.close()


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """Answer each request line of ``requests`` on ``answers`` until ``requests`` ends."""
    documents = _OpenDocument()
    try:
        for line in requests:
            try:
                image = _render(documents, json.loads(line))
            except Exception as exc:  # a bad page or file: the parent names both
                documents.close()
                answers.write(json.dumps({"error": _error(exc)}).encode() + b"\n")
                answers.flush()
                continue
            header = {"width": image.width, "height": image.height}
            answers.write(json.dumps(header).encode() + b"\n")
            answers.write(image.tobytes())
            answers.flush()
    except BrokenPipeError:  # the parent is gone
        pass
    finally:
        documents.close()


def main() -> None:
    """Serve on the standard streams; whatever else writes to stdout goes to stderr."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a library's print cannot break a reply
    serve(sys.stdin.buffer, answers)


if __name__ == "__main__":
    main()
