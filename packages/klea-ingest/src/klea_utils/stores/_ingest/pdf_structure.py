"""Recover headings and paragraphs from a PDF converted by Docling's ``NativePdfPipeline``.

The model-free pipeline emits one plain text item per text line, in the parser's order,
with no headings. Without headings every chunk of a PDF would share one empty heading
path, and the metadata-map template would have nothing to key on. This module rebuilds the
document with a light typographic heuristic:

- a short line (at most :data:`MAX_HEADING_WORDS` words) whose glyphs are at least
  :data:`HEADING_SIZE_RATIO` times the median line height is a heading; distinct heading
  sizes map to levels, the largest size being level 1;
- consecutive body lines on one page with no large vertical gap join into a paragraph
  (a line ending in a hyphen followed by a lower-case word is de-hyphenated).

It is a heuristic: multi-column layouts, tables and reading order stay as the parser
delivered them. Docling's standard pipeline (layout models) does all of this properly.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Any

__all__ = ["HEADING_SIZE_RATIO", "MAX_HEADING_WORDS", "restructure_native_pdf"]

HEADING_SIZE_RATIO = 1.2
"""Minimum line height, relative to the median, for a line to be considered a heading."""

MAX_HEADING_WORDS = 15
"""A line with more words than this is never a heading."""

_PARAGRAPH_GAP_RATIO = 0.9


@dataclass(frozen=True)
class _Line:
    text: str
    page_no: int
    top: float
    bottom: float

    @property
    def height(self) -> float:
        return self.bottom - self.top


def _lines(doc: Any) -> list[_Line]:
    out = []
    for item in doc.texts:
        text = " ".join(item.text.split())
        if not text or not item.prov:
            continue
        prov = item.prov[0]
        page = doc.pages.get(prov.page_no)
        page_height = page.size.height if page is not None else 0.0
        box = prov.bbox.to_top_left_origin(page_height=page_height)
        out.append(_Line(text, prov.page_no, min(box.t, box.b), max(box.t, box.b)))
    return out


def _heading_levels(lines: list[_Line], body: float) -> dict[int, int]:
    sizes = sorted(
        {
            round(line.height, 1)
            for line in lines
            if line.height >= HEADING_SIZE_RATIO * body
            and len(line.text.split()) <= MAX_HEADING_WORDS
        },
        reverse=True,
    )
    levels: dict[int, int] = {}
    for index, line in enumerate(lines):
        size = round(line.height, 1)
        if size in sizes and len(line.text.split()) <= MAX_HEADING_WORDS:
            levels[index] = min(sizes.index(size) + 1, 6)
    return levels


def _join(paragraph: list[str]) -> str:
    text = paragraph[0]
    for line in paragraph[1:]:
        if text.endswith("-") and len(text) > 1 and text[-2].isalpha() and line[:1].islower():
            text = text[:-1] + line
        else:
            text = f"{text} {line}"
    return text


def restructure_native_pdf(doc: Any) -> Any:
    """Return a new ``DoclingDocument`` with headings and paragraphs recovered from ``doc``.

    ``doc`` must come from the native PDF pipeline (text items carry page provenance).
    A document without text items is returned unchanged.
    """
    from docling_core.types.doc.document import DoclingDocument
    from docling_core.types.doc.labels import DocItemLabel

    lines = _lines(doc)
    if not lines:
        return doc
    body = median(line.height for line in lines)
    levels = _heading_levels(lines, body)
    new = DoclingDocument(name=doc.name, origin=doc.origin)
    for page_no, page in doc.pages.items():
        new.add_page(page_no=page_no, size=page.size)
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            text = _join(paragraph)
            new.add_text(label=DocItemLabel.TEXT, text=text, orig=text)
            paragraph.clear()

    previous: _Line | None = None
    for index, line in enumerate(lines):
        if index in levels:
            flush()
            new.add_heading(text=line.text, level=levels[index])
            previous = None
            continue
        if previous is not None and (
            line.page_no != previous.page_no
            or line.top - previous.bottom > _PARAGRAPH_GAP_RATIO * body
        ):
            flush()
        paragraph.append(line.text)
        previous = line
    flush()
    return new
