"""Builders for small ingestion test documents (shared by the klea-ingest test suites).

Every builder writes one file at ``path`` (parent folders are created) and returns the
path, so a test assembles a corpus in ``tmp_path`` in a few lines::

    from ingest_corpus import write_markdown, write_text_pdf, write_scanned_pdf

    md = write_markdown(tmp_path / "notes.md", "Methods", ["We measured things."])
    pdf = write_text_pdf(tmp_path / "paper.pdf", "Results", ["Neurons fired."])
    scan = write_scanned_pdf(tmp_path / "scan.pdf", ["SCANNED WORDS HERE"])

Builders:

- :func:`write_markdown`, :func:`write_html`, :func:`write_docx` (python-docx): a title
  heading, then one ``##``/``h2``/``Heading 2`` section per paragraph, so chunks carry
  ``headings`` metadata.
- :func:`write_text_pdf` (reportlab): a born-digital PDF with a text layer.
- :func:`write_scanned_pdf`: a text page rendered to a bitmap and saved as an
  image-only PDF (no text layer), the way a scanner produces one; OCR can read it back.
- :func:`write_zero_page_pdf`, :func:`write_truncated_pdf`, :func:`write_junk_pdf`:
  broken ``.pdf`` files that conversion must reject with a named error.
- :func:`sample_paragraphs`: deterministic filler text.
"""

from __future__ import annotations

import io
from pathlib import Path

__all__ = [
    "sample_paragraphs",
    "write_docx",
    "write_html",
    "write_junk_pdf",
    "write_markdown",
    "write_scanned_pdf",
    "write_text_pdf",
    "write_truncated_pdf",
    "write_zero_page_pdf",
]

_WORDS = (
    "neuron",
    "synapse",
    "cortex",
    "dendrite",
    "axon",
    "spike",
    "plasticity",
    "network",
    "model",
    "membrane",
    "channel",
    "current",
    "voltage",
    "simulation",
    "calcium",
    "receptor",
    "learning",
    "memory",
    "signal",
)


def sample_paragraphs(count: int, words: int = 40, seed: int = 0) -> list[str]:
    """Return ``count`` deterministic paragraphs of ``words`` words each."""
    out = []
    for p in range(count):
        tokens = [_WORDS[(seed * 7 + p * 13 + i * 5) % len(_WORDS)] for i in range(words)]
        out.append(" ".join(tokens).capitalize() + ".")
    return out


def _prepare(path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def write_markdown(path: Path, title: str, paragraphs: list[str]) -> Path:
    """Write a Markdown file: ``# title`` then one ``## Section n`` per paragraph."""
    path = _prepare(path)
    parts = [f"# {title}", ""]
    for n, para in enumerate(paragraphs, start=1):
        parts += [f"## Section {n}", "", para, ""]
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def write_html(path: Path, title: str, paragraphs: list[str]) -> Path:
    """Write an HTML page: ``<h1>title</h1>`` then ``<h2>Section n</h2><p>..</p>`` blocks."""
    path = _prepare(path)
    body = "".join(
        f"<h2>Section {n}</h2><p>{para}</p>" for n, para in enumerate(paragraphs, start=1)
    )
    path.write_text(
        f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>",
        encoding="utf-8",
    )
    return path


def write_docx(path: Path, title: str, paragraphs: list[str]) -> Path:
    """Write a DOCX with python-docx: a level-1 title and a level-2 heading per paragraph."""
    import docx

    path = _prepare(path)
    document = docx.Document()
    document.add_heading(title, level=1)
    for n, para in enumerate(paragraphs, start=1):
        document.add_heading(f"Section {n}", level=2)
        document.add_paragraph(para)
    document.save(str(path))
    return path


def write_text_pdf(path: Path, title: str, paragraphs: list[str]) -> Path:
    """Write a born-digital PDF with reportlab: a bold title, then wrapped paragraphs."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer

    path = _prepare(path)
    styles = getSampleStyleSheet()
    story = [Paragraph(title, styles["Title"]), Spacer(1, 12)]
    for n, para in enumerate(paragraphs, start=1):
        story.append(Paragraph(f"Section {n}", styles["Heading2"]))
        story.append(Paragraph(para, styles["BodyText"]))
    SimpleDocTemplate(str(path), pagesize=A4, invariant=1).build(story)
    return path


def write_lines_pdf(path: Path, lines: list[str], **info: str) -> Path:
    """A one-page PDF printing ``lines`` top down, with Info fields ``title``, ``author``,
    ``keywords``, ``subject`` as given (reportlab's ``untitled``/``anonymous`` defaults
    are left out: an absent field is empty)."""
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path))
    pdf.setTitle(info.get("title", ""))
    pdf.setAuthor(info.get("author", ""))
    if "keywords" in info:
        pdf.setKeywords(info["keywords"])
    if "subject" in info:
        pdf.setSubject(info["subject"])
    y = 800
    for line in lines:
        pdf.drawString(72, y, line)
        y -= 18
    pdf.save()
    return path


def write_scanned_pdf(path: Path, lines: list[str], *, scale: float = 3.0) -> Path:
    """Write an image-only PDF: a text page rendered to a bitmap, with no text layer.

    The page is drawn with reportlab in a large font, rendered with pypdfium2 at ``scale``
    (in the page renderer's process) and saved back as a one-page PDF holding only that
    image, so :func:`klea_utils.stores.precheck.classify_pdf` finds no text and OCR can
    read it.
    """
    from klea_utils.stores._ingest.pdf.page_renderer import render_page
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    path = _prepare(path)
    text_pdf = io.BytesIO()
    c = canvas.Canvas(text_pdf, pagesize=A4, invariant=1)
    c.setFont("Helvetica", 28)
    y = A4[1] - 100
    for line in lines:
        c.drawString(60, y, line)
        y -= 48
    c.save()
    # rendered in the page renderer's process: a render in the test process would change
    # the character boxes that later tests read from PDFs with substituted fonts
    text_path = path.with_name(f".{path.name}.text.pdf")
    text_path.write_bytes(text_pdf.getvalue())
    try:
        image = render_page(text_path, 0, scale)
    finally:
        text_path.unlink()
    png = io.BytesIO()
    image.save(png, format="PNG")
    png.seek(0)
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.drawImage(ImageReader(png), 0, 0, width=A4[0], height=A4[1])
    c.save()
    return path


def write_zero_page_pdf(path: Path) -> Path:
    """Write a well-formed PDF whose page tree holds no pages (saved by PDFium itself)."""
    import pypdfium2 as pdfium

    path = _prepare(path)
    pdf = pdfium.PdfDocument.new()
    try:
        pdf.save(str(path))
    finally:
        pdf.close()
    return path


def write_truncated_pdf(path: Path, source: Path) -> Path:
    """Write the first third of the PDF ``source`` (a download cut short)."""
    path = _prepare(path)
    data = Path(source).read_bytes()
    path.write_bytes(data[: max(16, len(data) // 3)])
    return path


def write_junk_pdf(path: Path) -> Path:
    """Write bytes that are not a PDF at all, under a ``.pdf`` name."""
    path = _prepare(path)
    path.write_bytes(b"this is not a pdf\x00\x01\x02" * 64)
    return path
