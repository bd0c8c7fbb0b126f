"""Text lines of a PDF page from pypdfium2's text layer, with the typography a reader uses.

Each :class:`Line` carries its text, box (top-left origin, points), dominant font size,
whether it is bold, small caps or rotated, and the horizontal gaps between its words, which
is what :mod:`klea_utils.stores._ingest.pdf.pdf_structure` needs to tell headings, running
heads, table rows and body text apart. The glyphs come from
:mod:`klea_utils.stores._ingest.pdf.pdf_chars`; a line ending in a hyphenation hyphen keeps
a trailing :data:`~klea_utils.stores._ingest.pdf.pdf_chars.HYPHEN_MARK` so that joining lines
can drop it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import Any

from klea_utils.stores._ingest.pdf.pdf_bidi import (
    has_rtl,
    rtl_base,
    split_mixed_words,
    visual_order,
    visual_to_logical,
)
from klea_utils.stores._ingest.pdf.pdf_chars import (
    HYPHEN_MARK,
    STYLES,
    PdfChar,
    read_chars,
    to_frames,
)
from klea_utils.stores._ingest.pdf.pdf_frames import Frame, dominant_quarter
from klea_utils.stores._ingest.pdf.pdf_images import MIN_SCAN_COVER, image_cover
from klea_utils.stores._ingest.pdf.raised_digits import raise_callout_digits
from klea_utils.stores._ingest.pdf.text_quality import MIN_PAGE_CHARS
from klea_utils.stores._ingest.pdf.text_scripts import UNSPACED_GAP_EM, is_fullwidth, word_gap_em

__all__ = ["CELL_GAP_EM", "TIGHT_CELL_GAP_EM", "Line", "PageLines", "page_lines"]


@dataclass
class Line:
    """One text line of a page (top-left origin, PDF points)."""

    text: str
    page_no: int
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    bold: bool = False
    italic: bool = False
    smallcaps: bool = False
    rotated: bool = False
    gaps: list[float] = field(default_factory=list)
    """Widths of the blank runs between consecutive words (for table detection)."""
    cells: list[str] = field(default_factory=list)
    """The line split at wide gaps (more than :data:`CELL_GAP_EM` ems), in order."""
    tight_cells: list[str] = field(default_factory=list)
    """The line split at blanks wider than :data:`TIGHT_CELL_GAP_EM` ems: the cells of a row
    of a table already found, whose columns may sit closer than :data:`CELL_GAP_EM`."""
    bold_prefix: str = ""
    """Leading bold words when the rest of the line is not bold (a run-in heading)."""

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def width(self) -> float:
        return self.x1 - self.x0


@dataclass
class PageLines:
    """The lines of one page, in the text layer's order, and the page size."""

    page_no: int
    width: float
    height: float
    lines: list[Line]
    raw_text: str
    has_images: bool = False
    """The page draws images over at least :data:`~klea_utils.stores._ingest.pdf.pdf_images.
    MIN_SCAN_COVER` of its area, inside forms too (a scan); measured only on pages whose
    text layer is empty (:data:`~klea_utils.stores._ingest.pdf.text_quality.MIN_PAGE_CHARS`)."""
    image_cover: float = 0.0
    """Share of the page the images cover (0 where not measured)."""
    folios: list[int] = field(default_factory=list)
    """Numbers in the running lines removed from the page that may be its printed page
    number (:mod:`~klea_utils.stores._ingest.pdf.page_labels`)."""
    bare_folios: list[int] = field(default_factory=list)
    """Those of :attr:`folios` read from a line that is a page number and nothing else."""
    running_heads: list[str] = field(default_factory=list)
    """The running lines removed from the top of the page (not page numbers or stamps), in
    order: :func:`~klea_utils.stores._ingest.pdf.page_furniture.section_titles` reads the
    titles of the document's parts from them."""
    frame: Frame | None = None
    """The frame the line boxes are measured in (:meth:`Frame.user` maps them back to the
    page's user space); ``None`` for lines without geometry (read by pypdf)."""
    user_box: tuple[float, float, float, float] | None = None
    """``(left, bottom, right, top)`` of the page in user space where its lines carry no
    geometry (read by pypdf): the region every chunk of the page gets."""


CELL_GAP_EM = 1.2
"""A blank wider than this many ems between words separates table cells."""

TIGHT_CELL_GAP_EM = 0.6
"""Inside a table, a blank this wide separates cells: twice a word space (0.25-0.35 em)."""


def page_lines(pdf: Any, index: int) -> PageLines:
    """Read the lines of page ``index`` (0-based) of an open ``pypdfium2.PdfDocument``.

    Boxes are in the page's reading frame (:mod:`~klea_utils.stores._ingest.pdf.pdf_frames`):
    the page turned so that most of its text runs left to right, whatever ``/Rotate`` or
    the text matrix say; ``width`` and ``height`` are the turned page's.
    """
    import pypdfium2.raw as raw

    page = pdf[index]
    try:
        box = page.get_bbox()
        rotation = page.get_rotation()
        textpage = page.get_textpage()
        try:
            raw_text = str(textpage.get_text_range())
            chars = read_chars(raw, textpage.raw, Frame(0, *box))
        finally:
            textpage.close()
        cover = 0.0
        if len("".join(raw_text.split())) < MIN_PAGE_CHARS:  # no text layer: a scan?
            cover = image_cover(raw, page.raw, box)
    finally:
        page.close()
    frames = [Frame(q, *box) for q in range(4)]
    quarter = dominant_quarter(c.turn for c in chars if c is not None and c.font != -1)
    chars = to_frames(chars, frames, quarter)
    frame = frames[quarter]
    built = [_line(group, index + 1, frames, quarter) for group in _split_lines(chars)]
    lines = [ln for ln in built if ln is not None]
    if (quarter - rotation // 90) % 4 == 3:
        lines = _restore_order(lines)
    return PageLines(
        index + 1,
        frame.width,
        frame.height,
        lines,
        raw_text,
        has_images=cover >= MIN_SCAN_COVER,
        image_cover=cover,
        frame=frame,
    )


def _restore_order(lines: list[Line]) -> list[Line]:
    """Undo pdfium's order for text that runs down the displayed page.

    pdfium lists the lines of such text bottom line first within each run of stacked lines
    (a column with the heading over it), though the content draws them top first; a run of
    lines each set above the one before it, overlapping it across, is turned back round.
    """
    out: list[Line] = []
    run: list[Line] = []
    for line in lines:
        prev = run[-1] if run else None
        if prev is not None and not (prev.rotated or line.rotated):
            height = max(prev.bottom - prev.top, line.bottom - line.top, 1.0)
            above = prev.top - line.bottom >= -0.3 * height
            across = line.x0 < prev.x1 and prev.x0 < line.x1
            if above and across:
                run.append(line)
                continue
        out.extend(reversed(run))
        run = [line]
    out.extend(reversed(run))
    return out


def _split_lines(chars: list[PdfChar | None]) -> list[list[PdfChar]]:
    """Split at pdfium's line breaks, where the baseline jumps without one, and where the
    text turns (a vertical label right after a line of the body)."""
    groups: list[list[PdfChar]] = []
    current: list[PdfChar] = []
    last: PdfChar | None = None  # the last glyph of ``current`` that is not a generated space
    for char in chars:
        if char is None:
            if current:
                groups.append(current)
            current, last = [], None
            continue
        if char.font != -1 and last is not None:
            if last.turn != char.turn:
                groups.append(current)
                current = []
            elif last.text != " ":
                # a dot or a kashida has a tiny box: the type size bounds the line height
                line_h = max(last.bottom - last.top, 0.5 * last.size, 1.0)
                jumped = (
                    abs(char.bottom - last.bottom) > 0.8 * line_h
                    and abs(char.top - last.top) > 0.8 * line_h
                )
                if jumped and _went_back(char, last, line_h):
                    groups.append(current)
                    current = []
        current.append(char)
        if char.font != -1:
            last = char
    if current:
        groups.append(current)
    return groups


def _went_back(char: PdfChar, last: PdfChar, line_h: float) -> bool:
    """Whether ``char`` starts a new line: far back from ``last`` in the reading direction
    (to the left, or to the right for right-to-left text)."""
    if has_rtl(char.text + last.text):
        return char.right > last.right + 6 * line_h
    return char.left < last.left - 6 * line_h


def _line(chars: list[PdfChar], page_no: int, frames: list[Frame], quarter: int) -> Line | None:
    real = [c for c in chars if c.font != -1 and c.text.strip()]
    if not real:
        return None
    box = (
        min(c.left for c in real),
        min(c.top for c in real),
        max(c.right for c in real),
        max(c.bottom for c in real),
    )
    if real[0].turn != quarter:  # built in its own frame, placed in the page's
        box = frames[quarter].from_frame(frames[real[0].turn], *box)
    sizes = [c.size for c in real if c.size > 0]
    size = median(sizes) if sizes else median(c.bottom - c.top for c in real)
    rotated = sum(c.rotated for c in real) > len(real) / 2
    fonts = [STYLES.get(c.font) for c in real]
    bold_chars = [bool(f and f.bold) for f in fonts]
    bold = sum(bold_chars) >= 0.8 * len(real)
    italic = sum(bool(f and f.italic) for f in fonts) >= 0.8 * len(real)
    smallcaps = sum(bool(f and f.smallcaps) for f in fonts) >= 0.6 * len(real)
    rtl = has_rtl("".join(c.text for c in real))
    if rtl:
        text, gaps, cells, tight_cells = _assemble_rtl(chars, size)
    else:
        text, gaps, cells, tight_cells = _assemble(raise_callout_digits(chars, size), size)
    text = " ".join(text.split(" ")).strip()
    if not text:
        return None
    prefix = ""
    if not bold and bold_chars[0] and not rtl:
        n = 0
        while n < len(real) and bold_chars[n]:
            n += 1
        prefix = "".join(c.text for c in real[:n])
        # rebuild with spaces: take the text up to the same number of non-space chars
        prefix = _prefix_by_chars(text, len(prefix))
    return Line(
        text=" ".join(text.split()) if not text.endswith(HYPHEN_MARK) else text,
        page_no=page_no,
        x0=box[0],
        top=box[1],
        x1=box[2],
        bottom=box[3],
        size=size,
        bold=bold,
        italic=italic,
        smallcaps=smallcaps,
        rotated=rotated,
        gaps=gaps,
        cells=cells,
        tight_cells=tight_cells,
        bold_prefix=prefix,
    )


def _prefix_by_chars(text: str, count: int) -> str:
    seen = 0
    for pos, ch in enumerate(text):
        if not ch.isspace():
            seen += len(ch)
            if seen >= count:
                return text[: pos + 1]
    return text


def _assemble_rtl(
    chars: list[PdfChar], size: float
) -> tuple[str, list[float], list[str], list[str]]:
    """:func:`_assemble` for a line with right-to-left letters: built in visual order,
    then read in logical order (:mod:`klea_utils.stores._ingest.pdf.pdf_bidi`)."""
    text, gaps, cells, tight = _assemble(visual_order(chars), size)
    base = rtl_base(text)

    def logical(part: str) -> str:
        return split_mixed_words(visual_to_logical(part, base))

    order = -1 if base else 1  # a right-to-left row's cells are read from the right
    return (
        logical(text),
        gaps[::order],
        [logical(c) for c in cells][::order],
        [logical(c) for c in tight][::order],
    )


def _assemble(chars: list[PdfChar], size: float) -> tuple[str, list[float], list[str], list[str]]:
    """Text with spaces where glyphs are apart, gap widths, wide-gap and tight-gap cells."""
    parts: list[str] = []
    gaps: list[float] = []
    cells: list[str] = []
    cell: list[str] = []
    tight: list[str] = []
    tight_cell: list[str] = []
    prev: PdfChar | None = None
    space_pending = False
    typed_space = False  # a space character of the text layer, not one pdfium generated
    em = max(size, 1.0)
    for char in chars:
        if char.font == -1 or not char.text.strip():
            space_pending = True
            typed_space = typed_space or char.font != -1
            continue
        if prev is not None:
            gap = char.left - prev.right
            if gap > CELL_GAP_EM * em:
                cells.append("".join(cell).strip())
                cell = []
            if gap > TIGHT_CELL_GAP_EM * em:
                tight.append("".join(tight_cell).strip())
                tight_cell = []
            word_gap = word_gap_em(prev.text[-1], char.text[0])
            blank = gap
            if word_gap != UNSPACED_GAP_EM and (
                is_fullwidth(prev.text[-1]) or is_fullwidth(char.text[0])
            ):
                blank = _cell_gap(prev, char)
                if space_pending and not typed_space and blank <= word_gap * em:
                    space_pending = False  # pdfium's blank between cells that touch
            if space_pending and not typed_space and word_gap == UNSPACED_GAP_EM:
                space_pending = False  # pdfium's blank inside a run of Chinese or Thai
            if space_pending or blank > word_gap * em:
                if gap > 0.1 * em:
                    gaps.append(gap)
                parts.append(" ")
                cell.append(" ")
                tight_cell.append(" ")
        parts.append(char.text)
        cell.append(char.text)
        tight_cell.append(char.text)
        prev = char
        space_pending = typed_space = False
    cells.append("".join(cell).strip())
    tight.append("".join(tight_cell).strip())
    return "".join(parts), gaps, [c for c in cells if c], [c for c in tight if c]


def _cell_gap(prev: PdfChar, char: PdfChar) -> float:
    """The blank between two glyphs, a fullwidth one (:func:`~klea_utils.stores._ingest.pdf.
    text_scripts.is_fullwidth`) measured from the edge of its em cell rather than of its ink.

    A fullwidth digit or letter is drawn narrow in the middle of a cell one em wide, so
    its ink stands half an em off the Han or Kana glyph it touches (``に１回``); the
    cells of glyphs printed without a blank meet, whatever their ink. A glyph whose size
    is unknown or not above its ink's width keeps its ink box."""
    return _cell_left(char) - _cell_right(prev)


def _cell_half(char: PdfChar, edge: str) -> float | None:
    if not char.text or not is_fullwidth(edge) or char.size <= char.right - char.left:
        return None
    return char.size / 2


def _cell_right(char: PdfChar) -> float:
    half = _cell_half(char, char.text[-1])
    return char.right if half is None else (char.left + char.right) / 2 + half


def _cell_left(char: PdfChar) -> float:
    half = _cell_half(char, char.text[0])
    return char.left if half is None else (char.left + char.right) / 2 - half
