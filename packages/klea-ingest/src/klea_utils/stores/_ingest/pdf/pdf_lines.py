"""Text lines of a PDF page from pypdfium2's text layer, with the typography a reader uses.

Each :class:`Line` carries its text, box (top-left origin, points), dominant font size,
whether it is bold, small caps or rotated, and the horizontal gaps between its words, which
is what :mod:`klea_utils.stores._ingest.pdf.pdf_structure` needs to tell headings, running
heads, table rows and body text apart.

Fonts without a Unicode map (LaTeX Type 3 bitmap fonts built without cm-super) come out
with T1 (Cork) or OT1 character codes: their ligatures, quotes and dashes are control
characters, mapped back here by the font's encoding family. Publisher fonts without one
that put f-ligatures in ASCII punctuation slots are repaired per font by
:mod:`klea_utils.stores._ingest.pdf.pdf_ligatures`. pdfium's hyphenation marks
(U+FFFE or U+0002 at a line end) are kept as a trailing ``\\ufffe`` so that joining lines
can drop them.
"""

from __future__ import annotations

import ctypes
import math
import re
import unicodedata
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
from klea_utils.stores._ingest.pdf.pdf_frames import Frame, dominant_quarter, quarter_of
from klea_utils.stores._ingest.pdf.pdf_images import MIN_SCAN_COVER, image_cover
from klea_utils.stores._ingest.pdf.pdf_ligatures import repair_ligatures
from klea_utils.stores._ingest.pdf.text_quality import MIN_PAGE_CHARS
from klea_utils.stores._ingest.pdf.text_scripts import UNSPACED_GAP_EM, word_gap_em

__all__ = ["CELL_GAP_EM", "HYPHEN_MARK", "TIGHT_CELL_GAP_EM", "Line", "PageLines", "page_lines"]

HYPHEN_MARK = "\ufffe"
"""Marks a line that ends in a hyphenation hyphen (to be dropped when lines are joined)."""

# T1 (Cork) slots 0x00-0x1F and OT1 slots 0x00-0x1F where they hold text glyphs.
_T1 = {
    0x0D: "\u201a", 0x0E: "\u2039", 0x0F: "\u203a", 0x10: "\u201c", 0x11: "\u201d",
    0x12: "\u201e", 0x13: "\u00ab", 0x14: "\u00bb", 0x15: "\u2013", 0x16: "\u2014",
    0x17: "", 0x19: "\u0131", 0x1A: "\u0237", 0x1B: "ff", 0x1C: "fi", 0x1D: "fl",
    0x1E: "ffi", 0x1F: "ffl",
}  # fmt: skip
_OT1 = {
    0x0B: "ff", 0x0C: "fi", 0x0D: "fl", 0x0E: "ffi", 0x0F: "ffl", 0x10: "\u0131",
    0x11: "\u0237", 0x19: "\u00df", 0x1A: "\u00e6", 0x1B: "\u0153", 0x1C: "\u00f8",
    0x1D: "\u00c6", 0x1E: "\u0152", 0x1F: "\u00d8",
}  # fmt: skip
_PRIVATE_USE = {0xF001: "fi", 0xF002: "fl"}
"""Private-use codes with a meaning in common fonts (Adobe's and Apple's fi/fl ligatures);
every other private-use code is a symbol font's glyph number and is dropped."""
_OT1_FONT = re.compile(r"^(?:[A-Z]{6}\+)?(cm|CM)(?!U)[a-zA-Z]*\d+$")
_BOLD_NAME = re.compile(
    r"bold|black|heavy|semibold|demi|\bmedi|[-,]bd\b|[-,]b$|^(?:[A-Z]{6}\+)?(?:cm|ec|t1)?bx|"
    r"cmb\d|NimbusRomNo9L-Medi|\.B$|TB$|[a-z]{3,}b\d",
    re.IGNORECASE,
)
_SMALLCAPS_NAME = re.compile(r"smallcaps|[-_]sc\b|csc\d|\bsc\d|caps|ecsc|cmcsc|rmsc", re.IGNORECASE)
_ITALIC_NAME = re.compile(
    r"ital|oblique|[-,]it\b|cmti|ecti|cmmi|[-]i$|(?-i:[a-z]TI)$",  # ReguItal, LinLibertineTI
    re.IGNORECASE,
)


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


CELL_GAP_EM = 1.2
"""A blank wider than this many ems between words separates table cells."""

TIGHT_CELL_GAP_EM = 0.6
"""Inside a table, a blank this wide separates cells: twice a word space (0.25-0.35 em)."""


@dataclass
class _Char:
    text: str
    left: float
    right: float
    bottom: float
    top: float
    size: float
    font: int
    face: int = 0
    """The font object the glyph is drawn with (the style id ``font`` is shared by fonts)."""
    turn: int = 0
    """The quarter turn of the glyph's baseline (:mod:`~klea_utils.stores._ingest.pdf.pdf_frames`);
    its box is in the frame of that turn."""
    rotated: bool = False
    """Drawn across the page's reading direction (another quarter, or at a slant)."""


@dataclass(frozen=True)
class _Font:
    bold: bool
    italic: bool
    smallcaps: bool
    ot1: bool


def _font_info(raw: Any, font: Any, weight: int, cache: dict[int, _Font]) -> _Font:
    key = ctypes.cast(font, ctypes.c_void_p).value or 0
    if key in cache:
        return cache[key]
    buf = ctypes.create_string_buffer(256)
    n = raw.FPDFFont_GetBaseFontName(font, buf, 256)
    name = buf.value.decode("utf-8", "replace") if n else ""
    if not name:
        n = raw.FPDFFont_GetFamilyName(font, buf, 256)
        name = buf.value.decode("utf-8", "replace") if n else ""
    font_weight = raw.FPDFFont_GetWeight(font)
    bold = bool(_BOLD_NAME.search(name)) or max(weight, font_weight) >= 600
    info = _Font(
        bold=bold,
        italic=bool(_ITALIC_NAME.search(name)),
        smallcaps=bool(_SMALLCAPS_NAME.search(name)),
        ot1=bool(_OT1_FONT.match(name)),
    )
    cache[key] = info
    return info


def _char_text(code: int, font: _Font | None) -> str:
    if code in (0x02, 0xFFFE):
        return HYPHEN_MARK
    if code < 0x20:
        table = _OT1 if font is not None and font.ot1 else _T1
        return table.get(code, "")
    if 0xD800 <= code < 0xE000:
        return ""
    if 0xE000 <= code <= 0xF8FF:  # private use: a symbol font's own codes, no text
        return _PRIVATE_USE.get(code, "")
    return chr(code)


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
            chars = _read_chars(raw, textpage.raw, Frame(0, *box))
        finally:
            textpage.close()
        cover = 0.0
        if len("".join(raw_text.split())) < MIN_PAGE_CHARS:  # no text layer: a scan?
            cover = image_cover(raw, page.raw, box)
    finally:
        page.close()
    frames = [Frame(q, *box) for q in range(4)]
    quarter = dominant_quarter(c.turn for c in chars if c is not None and c.font != -1)
    chars = _to_frames(chars, frames, quarter)
    fonts: dict[int, _Font] = {}
    frame = frames[quarter]
    built = [_line(group, index + 1, fonts, frames, quarter) for group in _split_lines(chars)]
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


def _to_frames(chars: list[_Char | None], frames: list[Frame], quarter: int) -> list[_Char | None]:
    """Move the turned glyphs' user-space boxes into their own reading frame (upright ones
    are there already) and mark the glyphs that run across the page's direction."""
    if quarter or any(c is not None and c.turn for c in chars):
        for char in chars:
            if char is None or char.font == -1:
                continue
            if char.turn:
                char.left, char.right, char.top, char.bottom = frames[char.turn].box(
                    char.left, char.right, char.bottom, char.top
                )
            char.rotated = char.rotated or char.turn != quarter
    repair_ligatures(chars)
    return _attach_accents(chars)


_STYLE_IDS: dict[_Font, int] = {}
_STYLES: dict[int, _Font] = {}


def _style_id(info: _Font) -> int:
    """A small, stable id per style (at most 16 exist), so characters stay light."""
    if info not in _STYLE_IDS:
        _STYLE_IDS[info] = len(_STYLE_IDS)
        _STYLES[_STYLE_IDS[info]] = info
    return _STYLE_IDS[info]


def _read_chars(raw: Any, tp: Any, upright: Frame) -> list[_Char | None]:
    """Characters in text-layer order with their baseline's quarter turn; ``None`` marks a
    line break pdfium generated. Boxes of upright glyphs are in the ``upright`` frame; those
    of turned glyphs stay in user space (``bottom`` < ``top``) for :func:`_to_frames`."""
    count = raw.FPDFText_CountChars(tp)
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    fonts: dict[int, _Font] = {}
    out: list[_Char | None] = []
    last_obj: int | None = None
    obj_size = 0.0
    current: tuple[_Font, int, int, int, bool] | None = None
    high = 0  # a UTF-16 high surrogate waiting for its low half
    for i in range(count):
        code = raw.FPDFText_GetUnicode(tp, i)
        if 0xD800 <= code < 0xDC00:
            high = code
            continue
        if 0xDC00 <= code < 0xE000:
            if not high:
                continue
            # pdfium gives a character outside the BMP (math italic 𝑑, 𝑛) as two code units
            code, high = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00), 0
        high = 0
        if code in (0x0A, 0x0D):
            if out and out[-1] is not None:
                out.append(None)
            continue
        generated = raw.FPDFText_IsGenerated(tp, i) == 1
        if generated and code == 0x20:
            out.append(_Char(" ", 0, 0, 0, 0, 0, -1))
            continue
        obj = raw.FPDFText_GetTextObject(tp, i)
        obj_key = ctypes.cast(obj, ctypes.c_void_p).value or 0
        if obj_key != last_obj or current is None:
            last_obj = obj_key
            font = raw.FPDFTextObj_GetFont(obj) if obj else None
            weight = raw.FPDFText_GetFontWeight(tp, i)
            info = (
                _font_info(raw, font, weight, fonts) if font else _Font(False, False, False, False)
            )
            turn, slanted = quarter_of(raw.FPDFText_GetCharAngle(tp, i))
            font_id = _style_id(info)
            obj_size = _object_size(raw, obj) if obj else 0.0
            face = ctypes.cast(font, ctypes.c_void_p).value or 0 if font else 0
            current = (info, font_id, face, turn, slanted)
        info, font_id, face, turn, slanted = current
        text = _char_text(code, info)
        if not text:
            continue
        raw.FPDFText_GetCharBox(tp, i, left, right, bottom, top)
        size = obj_size or raw.FPDFText_GetFontSize(tp, i)
        if turn:
            char = _Char(
                text, left.value, right.value, bottom.value, top.value, size, font_id, face
            )
        else:  # the upright frame, inline: most glyphs of most pages
            x0, y1 = upright.x0, upright.y1
            char = _Char(
                text,
                left.value - x0,
                right.value - x0,
                y1 - bottom.value,
                y1 - top.value,
                size,
                font_id,
                face,
            )
        char.turn, char.rotated = turn, slanted
        out.append(char)
    return out


_SPACING_ACCENTS = {
    "\u00b4": "\u0301", "\u02ca": "\u0301", "\u0060": "\u0300", "\u02cb": "\u0300",
    "\u00a8": "\u0308", "\u02c6": "\u0302", "\u005e": "\u0302", "\u02dc": "\u0303",
    "\u007e": "\u0303", "\u00af": "\u0304", "\u02c9": "\u0304", "\u02d8": "\u0306",
    "\u02d9": "\u0307", "\u02da": "\u030a", "\u02dd": "\u030b", "\u02c7": "\u030c",
    "\u00b8": "\u0327", "\u02db": "\u0328",
}  # fmt: skip
"""Accent glyphs TeX sets as separate characters over (or under) a letter, and the
combining mark each becomes on that letter."""

_BELOW_ACCENTS = frozenset("\u00b8\u02db")
"""Cedilla and ogonek hang below their letter; the other accents sit above it."""

_DOTLESS = {"\u0131": "i", "\u0237": "j"}
"""TeX puts accents on a dotless i or j; with its accent the letter is the plain one."""

_ACCENT_REACH = 40
"""How many characters away in the text layer an accent's letter may be (pdfium emits a
TeX accent where it was drawn, sometimes after the rest of the line)."""


def _accent_target(chars: list[_Char | None], index: int) -> int | None:
    """The letter the accent at ``index`` is drawn over (or under), by position."""
    accent = chars[index]
    assert accent is not None
    middle = (accent.left + accent.right) / 2
    below = accent.text in _BELOW_ACCENTS
    best: tuple[float, int] | None = None
    for j in range(max(0, index - _ACCENT_REACH), min(len(chars), index + _ACCENT_REACH + 1)):
        letter = chars[j]
        if j == index or letter is None or letter.font == -1 or len(letter.text) != 1:
            continue
        if letter.turn != accent.turn:
            continue
        if not letter.text.isalpha() or letter.text in _SPACING_ACCENTS:
            continue
        width, height = letter.right - letter.left, letter.bottom - letter.top
        if height <= 0 or not letter.left - 0.2 * width <= middle <= letter.right + 0.2 * width:
            continue
        if below:  # top-left origin: the mark starts near the letter's baseline
            placed = letter.bottom - 0.4 * height <= accent.top <= letter.bottom + 0.3 * height
        else:  # wholly above the letter's body, and not a line above it
            placed = (
                accent.bottom <= letter.top + 0.15 * height
                and accent.bottom >= letter.top - 0.8 * height
            )
        distance = abs(middle - (letter.left + letter.right) / 2)
        if placed and (best is None or distance < best[0]):
            best = (distance, j)
    return None if best is None else best[1]


def _attach_accents(chars: list[_Char | None]) -> list[_Char | None]:
    """Put TeX's separately drawn accents on their letters (``Fre´deric`` -> ``Frédéric``).

    The accent is removed from where pdfium put it, with the blank pdfium generated after
    it when the letters on either side touch (the blank only stood for the accent's jump
    back over the line). An accent over no letter (a prime, an ASCII ``~`` in a URL, a
    ``^`` in text) is left as it is.
    """
    if not any(c is not None and c.text in _SPACING_ACCENTS for c in chars):
        return chars
    drop: set[int] = set()
    for i, char in enumerate(chars):
        if char is None or char.text not in _SPACING_ACCENTS:
            continue
        target = _accent_target(chars, i)
        if target is None:
            continue
        letter = chars[target]
        assert letter is not None
        base = _DOTLESS.get(letter.text, letter.text)
        letter.text = unicodedata.normalize("NFC", base + _SPACING_ACCENTS[char.text])
        drop.add(i)
        blank = i + 1
        if blank < len(chars) and (space := chars[blank]) is not None and space.font == -1:
            before = next((c for c in reversed(chars[:i]) if c is not None), None)
            after = next((c for c in chars[blank + 1 :] if c is not None), None)
            if before is not None and after is not None and before.font != -1:
                em = max(before.size, 1.0)
                if abs(after.left - before.right) < 0.2 * em:
                    drop.add(blank)
    return [c for k, c in enumerate(chars) if k not in drop]


def _object_size(raw: Any, obj: Any) -> float:
    """The text object's font size scaled by its matrix (the size a reader sees)."""
    size = ctypes.c_float()
    if not raw.FPDFTextObj_GetFontSize(obj, size):
        return 0.0
    matrix = raw.FS_MATRIX()
    if not raw.FPDFPageObj_GetMatrix(obj, matrix):
        return float(size.value)
    scale = math.sqrt(abs(matrix.a * matrix.d - matrix.b * matrix.c))
    return float(size.value) * (scale or 1.0)


def _split_lines(chars: list[_Char | None]) -> list[list[_Char]]:
    """Split at pdfium's line breaks, where the baseline jumps without one, and where the
    text turns (a vertical label right after a line of the body)."""
    groups: list[list[_Char]] = []
    current: list[_Char] = []
    for char in chars:
        if char is None:
            if current:
                groups.append(current)
            current = []
            continue
        if char.font != -1 and current:
            last = next((c for c in reversed(current) if c.font != -1), None)
            if last is not None and last.turn != char.turn:
                groups.append(current)
                current = []
            elif last is not None and last.text != " ":
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
    if current:
        groups.append(current)
    return groups


def _went_back(char: _Char, last: _Char, line_h: float) -> bool:
    """Whether ``char`` starts a new line: far back from ``last`` in the reading direction
    (to the left, or to the right for right-to-left text)."""
    if has_rtl(char.text + last.text):
        return char.right > last.right + 6 * line_h
    return char.left < last.left - 6 * line_h


def _line(
    chars: list[_Char], page_no: int, _fonts: dict[int, _Font], frames: list[Frame], quarter: int
) -> Line | None:
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
    fonts = [_STYLES.get(c.font) for c in real]
    bold_chars = [bool(f and f.bold) for f in fonts]
    bold = sum(bold_chars) >= 0.8 * len(real)
    italic = sum(bool(f and f.italic) for f in fonts) >= 0.8 * len(real)
    smallcaps = sum(bool(f and f.smallcaps) for f in fonts) >= 0.6 * len(real)
    rtl = has_rtl("".join(c.text for c in real))
    if rtl:
        text, gaps, cells, tight_cells = _assemble_rtl(chars, size)
    else:
        text, gaps, cells, tight_cells = _assemble(chars, size)
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


def _assemble_rtl(chars: list[_Char], size: float) -> tuple[str, list[float], list[str], list[str]]:
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


def _assemble(chars: list[_Char], size: float) -> tuple[str, list[float], list[str], list[str]]:
    """Text with spaces where glyphs are apart, gap widths, wide-gap and tight-gap cells."""
    parts: list[str] = []
    gaps: list[float] = []
    cells: list[str] = []
    cell: list[str] = []
    tight: list[str] = []
    tight_cell: list[str] = []
    prev: _Char | None = None
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
            if space_pending and not typed_space and word_gap == UNSPACED_GAP_EM:
                space_pending = False  # pdfium's blank inside a run of Chinese or Thai
            if space_pending or gap > word_gap * em:
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
