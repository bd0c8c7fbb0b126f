"""Rebuild a PDF's structure from its text lines for the model-free (offline) path.

Input: the lines of every page (:mod:`klea_utils.stores._ingest.pdf.pdf_lines`, or OCR lines),
in the text layer's reading order. Output: a ``DoclingDocument`` whose every item carries
page provenance, so chunks know their pages:

1. page furniture (running heads and feet, page numbers, rotated margin stamps) is removed
   (:mod:`klea_utils.stores._ingest.pdf.page_furniture`);
2. the title is the largest text on page one that is not a banner, stamp or a standard's
   designation, joined across its lines
   (:mod:`klea_utils.stores._ingest.pdf.title_lines`);
3. headings come from numbering, usual section names, bold or small-caps runs and larger
   type, never from a line that continues a sentence
   (:mod:`klea_utils.stores._ingest.pdf.headings`); a bold run that opens a paragraph
   (``1.1 Motivation.``) becomes a heading of its own;
4. consecutive lines join into paragraphs across line, column and page breaks while the
   sentence goes on (hyphenation hyphens dropped); a paragraph that spans pages carries
   both pages;
5. runs of lines with table cells (wide gaps between words) become one table item, with
   its caption where the page prints it (above or below), one row per line and ``|``
   between cells.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Any

from klea_utils.stores._ingest.chunking.table_pieces import CAPTION_LINE
from klea_utils.stores._ingest.pdf.headings import (
    Context,
    contents_entries,
    heading_level,
    heading_wraps,
    name_match,
    numbering_depth,
)
from klea_utils.stores._ingest.pdf.hyphens import Hyphenation
from klea_utils.stores._ingest.pdf.line_regions import (
    line_box,
    line_spans,
    row_spans,
    visible_box,
)
from klea_utils.stores._ingest.pdf.page_furniture import remove_furniture
from klea_utils.stores._ingest.pdf.pdf_bidi import rtl_base
from klea_utils.stores._ingest.pdf.pdf_chars import HYPHEN_MARK
from klea_utils.stores._ingest.pdf.pdf_frames import Frame
from klea_utils.stores._ingest.pdf.pdf_lines import CELL_GAP_EM, TIGHT_CELL_GAP_EM, Line, PageLines
from klea_utils.stores._ingest.pdf.text_scripts import SENTENCE_END, is_unspaced
from klea_utils.stores._ingest.pdf.title_lines import TITLE_MIN_RATIO, title_lines

__all__ = ["TITLE_MIN_RATIO", "build_document", "join_lines"]

_LEADER_CELL = re.compile(r"^[.\u2026\u00b7\s]+$")
_CAPTION = CAPTION_LINE  # one rule for a caption, here and where a table is cut
_STACKED_OVERLAP = 0.5
"""A header row's box may reach this many body sizes into the row under it (stacked heads)."""
_HEAD_CELLS = 3
"""A line that could be a heading is taken as a table's header only with this many cells."""


def join_lines(lines: list[str], hyphens: Hyphenation | None = None) -> str:
    """Join wrapped lines into one paragraph, dropping hyphenation hyphens.

    A line-end hyphen is kept when ``hyphens`` (the document's evidence, see
    :mod:`klea_utils.stores._ingest.pdf.hyphens`) says the word is a compound; without it,
    pdfium's hyphenation marks are dropped and a plain ``-`` is kept.
    """
    text = ""
    for line in lines:
        line = line.strip()
        if not text:
            text = line
        elif text.endswith(HYPHEN_MARK):
            keep = hyphens is not None and hyphens.keep(text[:-1], line)
            text = text[:-1] + ("-" if keep else "") + line
        elif text.endswith("-") and len(text) > 1 and text[-2].isalpha() and line[:1].islower():
            keep = hyphens is None or hyphens.keep(text[:-1], line)
            text = (text if keep else text[:-1]) + line
        elif is_unspaced(text[-1]) and is_unspaced(line[:1]):
            text += line  # a line break inside a Chinese or Thai sentence is no blank
        else:
            text = f"{text} {line}"
    return text.replace(HYPHEN_MARK, "")


def _body_size(pages: list[PageLines]) -> float:
    weights: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            weights[round(line.size * 2) / 2] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 10.0


def _column_width(pages: list[PageLines], body: float) -> float:
    widths = [ln.width for p in pages for ln in p.lines if abs(ln.size - body) < 0.6]
    if not widths:
        return 400.0
    widths.sort()
    return widths[int(0.9 * (len(widths) - 1))]


def _merge_fragments(page: PageLines) -> None:
    """Join pieces of one visual line that the text layer split (superscripts, accents)."""
    merged: list[Line] = []
    for line in page.lines:
        prev = merged[-1] if merged else None
        if prev is not None and not prev.rotated and not line.rotated:
            mid = (line.top + line.bottom) / 2
            same_row = prev.top - 1 <= mid <= prev.bottom + 1
            # a right-to-left line goes on to the left of its first piece
            rtl = rtl_base(prev.text) and rtl_base(line.text)
            gap = prev.x0 - line.x1 if rtl else line.x0 - prev.x1
            em = max(prev.size, line.size, 1.0)
            single = len(line.cells) <= 1 and len(prev.cells) <= 1
            # pieces of one table cell (a gap narrower than a cell gap) join whatever the
            # row holds; two single-cell pieces join across a wider gap, as before
            near = gap < (3 * em if single else CELL_GAP_EM * em)
            onward = line.x1 <= prev.x1 + 1 if rtl else line.x0 >= prev.x0 - 1
            if same_row and onward and near:
                _join_fragment(prev, line)
                continue
        merged.append(line)
    page.lines = merged


def _join_fragment(prev: Line, line: Line) -> None:
    """Append ``line`` to ``prev`` (same row); the longer piece sets size and style."""
    single = len(line.cells) <= 1 and len(prev.cells) <= 1
    rtl = rtl_base(prev.text) and rtl_base(line.text)
    gap = prev.x0 - line.x1 if rtl else line.x0 - prev.x1
    # a sub- or superscript touches its base; a smaller piece a word space away is a word
    glue = (
        ""
        if gap < 0.15 * prev.size or (line.size < 0.8 * prev.size and gap < 0.25 * prev.size)
        else " "
    )
    if len(line.text) > len(prev.text):  # a sub- or superscript first, then the body text
        prev.size, prev.bold, prev.italic = line.size, line.bold, line.italic
        prev.smallcaps = line.smallcaps
    if prev.text.endswith(HYPHEN_MARK):
        glue = ""
    prev.text = f"{prev.text}{glue}{line.text}"
    if single:
        prev.cells = [prev.text]
    else:
        prev.cells = _join_cells(prev.cells or [""], line.cells or [line.text], glue)
    tight_gap = gap > TIGHT_CELL_GAP_EM * max(prev.size, 1.0)
    head, tail = prev.tight_cells or [""], line.tight_cells or [line.text]
    prev.tight_cells = [*head, *tail] if tight_gap else _join_cells(head, tail, glue)
    if rtl:
        prev.x0 = min(prev.x0, line.x0)
    prev.x1 = max(prev.x1, line.x1)
    prev.top, prev.bottom = min(prev.top, line.top), max(prev.bottom, line.bottom)


def _join_cells(head: list[str], tail: list[str], glue: str) -> list[str]:
    return [*head[:-1], f"{head[-1]}{glue}{tail[0]}", *tail[1:]]


def _is_table_row(line: Line) -> bool:
    return len(line.cells) >= 3 or (
        len(line.cells) == 2
        and sum(c.isdigit() for c in line.text) >= 0.3 * len(line.text.replace(" ", ""))
    )


class _Builder:
    def __init__(self, name: str, pages: list[PageLines]) -> None:
        from docling_core.types.doc.base import Size
        from docling_core.types.doc.document import DoclingDocument

        self.doc = DoclingDocument(name=name)
        self.frames: dict[int, Frame] = {}
        self.flat_boxes = {p.page_no: p.user_box for p in pages if p.user_box is not None}
        """The box in user space of each page read without geometry (by pypdf)."""
        for page in pages:
            width, height = page.width, page.height
            if page.frame is not None:
                # provenance is in user space (before /Rotate, the page box's own origin):
                # the size reaches the box's far corner so that Docling clamps no box
                self.frames[page.page_no] = page.frame
                width, height = page.frame.x1, page.frame.y1
            elif page.user_box is not None:
                width, height = page.user_box[2], page.user_box[3]  # its box, unclamped
            self.doc.add_page(page_no=page.page_no, size=Size(width=width, height=height))
        self.paragraph: list[Line] = []
        self.hyphens = Hyphenation(ln.text for page in pages for ln in page.lines)
        self.open_heading: int | None = None
        """Level of the last item when it is a heading with no text under it yet."""

    def _prov(self, lines: list[Line], text: str, rows: list[str] | None = None) -> list[Any]:
        """One provenance per line, in reading order: its box in the page's user space
        (:func:`~klea_utils.stores._ingest.pdf.line_regions.line_box`, cut to the page
        box) and its span of ``text``. A line printed wholly off the page has no box and
        gives none, unless no line of the item is on the page: the item then keeps the
        first line's page, as one box, the whole page. A page without geometry (read by
        pypdf) gets one box, the whole page. ``rows``: the text of a table's first lines
        as written in ``text``."""
        from docling_core.types.doc.base import BoundingBox, CoordOrigin
        from docling_core.types.doc.common.reference import ProvenanceItem

        provs = []
        if rows:
            spans = row_spans(rows, [ln.text for ln in lines[len(rows) :]], text)
        else:
            spans = line_spans([ln.text for ln in lines], text)
        seen_flat: set[int] = set()
        off_page: tuple[int, Frame] | None = None
        for line, span in zip(lines, spans, strict=True):
            frame = self.frames.get(line.page_no)
            if frame is None:
                if line.page_no in seen_flat:
                    continue
                seen_flat.add(line.page_no)
                left, bottom, right, top = self.flat_boxes.get(line.page_no, (0.0, 0.0, 0.0, 0.0))
                span = (0, len(text))
            else:
                seen = visible_box(frame, line_box(frame, line))
                if seen is None:
                    off_page = off_page or (line.page_no, frame)
                    continue
                left, bottom, right, top = seen
            box = BoundingBox(l=left, t=top, r=right, b=bottom, coord_origin=CoordOrigin.BOTTOMLEFT)
            provs.append(ProvenanceItem(page_no=line.page_no, bbox=box, charspan=span))
        if not provs and off_page is not None:
            page_no, frame = off_page
            box = BoundingBox(
                l=frame.x0, t=frame.y1, r=frame.x1, b=frame.y0, coord_origin=CoordOrigin.BOTTOMLEFT
            )
            provs.append(ProvenanceItem(page_no=page_no, bbox=box, charspan=(0, len(text))))
        return provs

    def add(
        self,
        kind: str,
        lines: list[Line],
        text: str,
        level: int = 1,
        lead: tuple[str, list[Any]] | None = None,
        rows: list[str] | None = None,
    ) -> None:
        """Add an item of ``text`` built from ``lines``; ``lead`` is the text and provenance
        of an item read before them and put in front (a table's caption printed above it),
        so its boxes stay among the item's; ``rows`` the text of a table's rows as written
        in ``text`` (one per line, before any caption under them)."""
        from docling_core.types.doc.labels import DocItemLabel

        text = " ".join(text.split()) if kind != "table" else text
        if not text:
            return
        provs = self._prov(lines, text, rows)
        if lead is not None:
            lead_text, lead_provs = lead
            shift = len(lead_text) + 1
            moved = [
                p.model_copy(update={"charspan": (p.charspan[0] + shift, p.charspan[1] + shift)})
                for p in provs
            ]
            provs = [*lead_provs, *moved]
            text = f"{lead_text}\n{text}"
        if kind == "heading" and self.open_heading is not None and level <= self.open_heading:
            # a heading with nothing under it ("Appendix" right above "A. Contributions")
            # would vanish from every chunk's heading path: the next one nests under it
            level = min(self.open_heading + 1, 6)
        self.open_heading = level if kind == "heading" else None
        if kind == "title":
            item = self.doc.add_title(text=text, prov=provs[0])
        elif kind == "heading":
            item = self.doc.add_heading(text=text, level=level, prov=provs[0])
        else:
            item = self.doc.add_text(label=DocItemLabel.TEXT, text=text, orig=text, prov=provs[0])
        item.prov.extend(provs[1:])

    def flush(self) -> None:
        if self.paragraph:
            text = join_lines([ln.text for ln in self.paragraph], self.hyphens)
            self.add("text", self.paragraph, text)
            self.paragraph = []


def _new_block(prev: Line | None, line: Line, body: float) -> bool:
    """Whether ``line`` starts a new paragraph after ``prev``."""
    if prev is None:
        return True
    if prev.text.endswith(HYPHEN_MARK) and line.text[:1].islower():
        return False  # a word hyphenated at the line end goes on, whatever the gap or size
    ended = bool(SENTENCE_END.search(prev.text.rstrip()))
    if line.page_no != prev.page_no or line.top < prev.top - body:
        return ended  # page or column break: the sentence may go on
    gap = line.top - prev.bottom
    if gap > 1.1 * max(body, prev.size):
        return True
    if abs(line.size - prev.size) > 0.25 * body:
        return True
    indented = line.x0 - prev.x0 > 0.8 * body
    return ended and indented


def build_document(name: str, pages: list[PageLines]) -> Any:
    """Return a ``DoclingDocument`` with title, headings, paragraphs and tables."""
    for page in pages:
        _merge_fragments(page)
    remove_furniture(pages)
    body = _body_size(pages)
    ctx = Context(body_size=body, column_width=_column_width(pages, body))
    builder = _Builder(name, pages)
    title = title_lines(pages[0], body) if pages else []
    stream = [ln for page in pages for ln in page.lines]
    if len(title) == len(stream):
        # a title with nothing under it would leave the document no passage to store (a
        # one-line page, a scan of two lines): its lines are the text instead
        title = []
    if title:
        builder.add("title", title, join_lines([ln.text for ln in title], builder.hyphens))
    title_ids = {id(ln) for ln in title}
    stream = [ln for ln in stream if id(ln) not in title_ids]
    contents = contents_entries(pages)
    prev: Line | None = None
    index = 0
    while index < len(stream):
        line = stream[index]
        following = stream[index + 1] if index + 1 < len(stream) else None
        if _is_table_row(line):
            end = index
            while (
                end < len(stream)
                and (
                    _is_table_row(stream[end])
                    or (
                        end + 1 < len(stream)
                        and _is_table_row(stream[end + 1])
                        and len(stream[end].text) < 80
                    )
                )
                and stream[end].page_no == line.page_no
            ):
                end += 1
            rows = stream[index:end]
            if sum(_is_table_row(r) for r in rows) >= 3:
                header = _header_above(builder.paragraph, rows, body)
                if header is not None:
                    builder.paragraph.pop()
                    rows = [header, *rows]
                below = _caption_below(stream, end, body)
                _emit_table(builder, rows, below)
                prev, index = None, end + len(below)
                continue
        starts = _new_block(prev, line, body) or line.bold or line.size >= 1.15 * body
        if starts and _heads_table(line, following, body):
            starts = False  # a table's column heads, not a section's (taken with its rows)
        if starts and following is not None and heading_wraps(line, following, body):
            joined = replace(
                line,
                text=join_lines([line.text, following.text], builder.hyphens),
                bottom=following.bottom,
                x1=max(line.x1, following.x1),
            )
            after = stream[index + 2] if index + 2 < len(stream) else None
            level = heading_level(joined, after, ctx) if id(line) not in contents else None
            if level is not None:  # a heading wrapped over two lines
                builder.flush()
                builder.add("heading", [line, following], joined.text, level)
                prev, index = None, index + 2
                continue
        level = heading_level(line, following, ctx) if starts and id(line) not in contents else None
        if level is not None:
            builder.flush()
            builder.add("heading", [line], line.text.replace(HYPHEN_MARK, ""), level)
            prev, index = None, index + 1
            continue
        if starts and line.bold_prefix and _run_in(line.bold_prefix, ctx, line):
            builder.flush()
            heading = line.bold_prefix.strip().rstrip(".:").strip()
            builder.add("heading", [line], heading, _run_in(line.bold_prefix, ctx, line) or 3)
            rest = line.text[len(line.bold_prefix) :].strip()
            if rest:
                line.text = rest
                builder.paragraph.append(line)
            prev, index = line, index + 1
            continue
        if _new_block(prev, line, body):
            builder.flush()
        builder.paragraph.append(line)
        prev, index = line, index + 1
    builder.flush()
    return builder.doc


def _run_in(prefix: str, ctx: Context, line: Line) -> int | None:
    """A bold run opening a paragraph is a heading when it is numbered or a section name."""
    words = prefix.split()
    if not 1 <= len(words) <= 8 or not prefix.strip().endswith((".", ":")):
        return None
    probe = Line(prefix.strip().rstrip(".:"), line.page_no, line.x0, line.top, line.x0, line.bottom,
                 line.size, bold=True)  # fmt: skip
    level = heading_level(probe, None, ctx)
    if level is None:
        return None
    if numbering_depth(probe.text) is None and not name_match(probe.text):
        return None
    return level


def _caption_below(stream: list[Line], start: int, body: float) -> list[Line]:
    """The ``Table N`` caption set right under a table (at most six lines), else ``[]``."""
    if start >= len(stream) or not _CAPTION.match(stream[start].text):
        return []
    first = stream[start]
    if (
        first.page_no != stream[start - 1].page_no
        or first.top - stream[start - 1].bottom > 3 * body
    ):
        return []
    lines = [first]
    for line in stream[start + 1 : start + 6]:
        if _new_block(lines[-1], line, body) or _is_table_row(line):
            break
        lines.append(line)
    return lines


def _header_above(paragraph: list[Line], rows: list[Line], body: float) -> Line | None:
    """The header row right above a table whose cells only tight gaps separate, else None.

    Column heads are often set closer than the data (``Stage  Pre-Training  Context
    Extension``), so the wide-gap test that finds the rows misses them; the line directly
    above the first row, on its page, with at least as many tight cells as the rows have
    columns less one, is the header. A head set in two stacked lines (``DeepSeek-V2`` over
    ``Base``) may touch the line under it: the boxes of tall glyphs overlap by a little.
    """
    if not paragraph:
        return None
    line, first = paragraph[-1], rows[0]
    columns = max(len(_row_cells(r)) for r in rows)
    if (
        line.page_no != first.page_no
        or not -_STACKED_OVERLAP * body <= first.top - line.bottom < 1.5 * body
        or len(line.tight_cells) < max(2, columns - 1)
        or _CAPTION.match(line.text)
        or any(_LEADER_CELL.match(cell) for cell in line.tight_cells)
    ):
        return None
    return line


def _heads_table(line: Line, following: Line | None, body: float) -> bool:
    """Whether ``line``, no table row itself, is the header right above the row after it:
    three column heads or more (a numbered heading, ``2.3.59.1  Program Scope``, has two
    tight cells and stays a heading)."""
    return (
        following is not None
        and len(line.tight_cells) >= _HEAD_CELLS
        and not _is_table_row(line)
        and _is_table_row(following)
        and _header_above([line], [following], body) is not None
    )


def _row_cells(row: Line) -> list[str]:
    """A table row's cells: split at tight gaps (columns set close, ``Pre-Training  Context
    Extension``) where that finds more cells than the wide gaps that found the table."""
    tight = row.tight_cells
    if len(tight) <= len(row.cells) or any(_LEADER_CELL.match(cell) for cell in tight):
        return row.cells  # dot leaders (a contents line) are spaced wider than words
    return tight


def _emit_table(builder: _Builder, rows: list[Line], below: list[Line]) -> None:
    """One item: a row per line, with the caption before or after them as printed."""
    builder.flush()
    last = builder.doc.texts[-1] if builder.doc.texts else None
    text_rows = [" | ".join(_row_cells(r)) if len(_row_cells(r)) > 1 else r.text for r in rows]
    body = "\n".join(text_rows)
    if below:  # printed under the rows: read after them, as on the page
        body = f"{body}\n{join_lines([ln.text for ln in below], builder.hyphens)}"
    caption = None
    if not below and last is not None and _CAPTION.match(getattr(last, "text", "")):
        caption = (last.text, list(last.prov))  # its boxes go with its text
        builder.doc.delete_items(node_items=[last])
    builder.add("table", rows + below, body, lead=caption, rows=text_rows)
