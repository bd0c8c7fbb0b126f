"""The glyphs of a PDF page's text layer, read through pdfium with their boxes and fonts.

:func:`read_chars` walks pypdfium2's text page in text-layer order and gives one
:class:`PdfChar` per glyph (``None`` where pdfium broke a line), with its box, size, style
and the quarter turn of its baseline; :func:`to_frames` moves turned glyphs into their own
reading frame (:mod:`klea_utils.stores._ingest.pdf.pdf_frames`), repairs ligatures and
puts TeX's separate accents on their letters. :mod:`klea_utils.stores._ingest.pdf.pdf_lines`
builds lines from them.

Fonts without a Unicode map (LaTeX Type 3 bitmap fonts built without cm-super) come out
with T1 (Cork) or OT1 character codes: their ligatures, quotes and dashes are control
characters, mapped back here by the font's encoding family. pdfium's hyphenation marks
(U+FFFE or U+0002 at a line end) are kept as :data:`HYPHEN_MARK` so that joining lines can
drop them. A glyph wholly outside the page box is dropped: no viewer shows it.
"""

from __future__ import annotations

import ctypes
import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from klea_utils.stores._ingest.pdf.pdf_accents import attach_accents
from klea_utils.stores._ingest.pdf.pdf_frames import Frame, quarter_of
from klea_utils.stores._ingest.pdf.pdf_ligatures import repair_ligatures

__all__ = [
    "HYPHEN_MARK",
    "STYLES",
    "FontStyle",
    "PdfChar",
    "read_chars",
    "to_frames",
]

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


@dataclass(slots=True)
class PdfChar:
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
class FontStyle:
    bold: bool
    italic: bool
    smallcaps: bool
    ot1: bool


def _font_info(raw: Any, font: Any, weight: int, cache: dict[int, FontStyle]) -> FontStyle:
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
    info = FontStyle(
        bold=bold,
        italic=bool(_ITALIC_NAME.search(name)),
        smallcaps=bool(_SMALLCAPS_NAME.search(name)),
        ot1=bool(_OT1_FONT.match(name)),
    )
    cache[key] = info
    return info


def _char_text(code: int, font: FontStyle | None) -> str:
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


def to_frames(
    chars: list[PdfChar | None], frames: list[Frame], quarter: int
) -> list[PdfChar | None]:
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
    return attach_accents(chars)


_STYLE_IDS: dict[FontStyle, int] = {}
STYLES: dict[int, FontStyle] = {}


def _style_id(info: FontStyle) -> int:
    """A small, stable id per style (at most 16 exist), so characters stay light."""
    if info not in _STYLE_IDS:
        _STYLE_IDS[info] = len(_STYLE_IDS)
        STYLES[_STYLE_IDS[info]] = info
    return _STYLE_IDS[info]


class _Calls:
    """Typed entry points into pdfium for the per-glyph loop.

    pypdfium2's bindings check every argument against a pointer type and return typed
    pointers; per glyph that costs more than pdfium's own work. These prototypes take and
    return plain addresses (a text object is compared by address, and only a change of
    object is looked up through the typed binding)."""

    def __init__(self, raw: Any) -> None:
        void, integer = ctypes.c_void_p, ctypes.c_int
        self.text_object = self._bind(raw.FPDFText_GetTextObject, void, void, integer)
        self.char_box = self._bind(
            raw.FPDFText_GetCharBox, integer, void, integer, void, void, void, void
        )

    @staticmethod
    def _bind(function: Any, restype: Any, *argtypes: Any) -> Any:
        address = ctypes.cast(function, ctypes.c_void_p).value or 0
        return ctypes.CFUNCTYPE(restype, *argtypes)(address)


@cache
def _calls(raw: Any) -> _Calls:
    return _Calls(raw)


def _codes(raw: Any, tp: Any, count: int) -> list[int]:
    """The UTF-16 code unit of every glyph, read in one call (one per glyph if pdfium's
    page text does not line up with its glyphs). The page text writes U+FFFE for a glyph
    without a code and for a hyphenation mark alike: those few are asked one by one."""
    buffer = (ctypes.c_ushort * (count + 1))()
    written = raw.FPDFText_GetText(tp, 0, count, buffer) if count else 0
    if written != count + 1:
        return [raw.FPDFText_GetUnicode(tp, i) for i in range(count)]
    codes = list(buffer)[:count]
    if 0xFFFE in codes:
        for i, code in enumerate(codes):
            if code == 0xFFFE:
                codes[i] = raw.FPDFText_GetUnicode(tp, i)
    return codes


def read_chars(raw: Any, tp: Any, upright: Frame) -> list[PdfChar | None]:
    """Characters in text-layer order with their baseline's quarter turn; ``None`` marks a
    line break pdfium generated. Boxes of upright glyphs are in the ``upright`` frame; those
    of turned glyphs stay in user space (``bottom`` < ``top``) for :func:`to_frames`."""
    calls = _calls(raw)
    handle = ctypes.cast(tp, ctypes.c_void_p)
    count = raw.FPDFText_CountChars(tp)
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    box = [ctypes.addressof(v) for v in (left, right, bottom, top)]
    fonts: dict[int, FontStyle] = {}
    out: list[PdfChar | None] = []
    last_obj: int | None = None
    obj_size = 0.0
    current: tuple[FontStyle, int, int, int, bool] | None = None
    high = 0  # a UTF-16 high surrogate waiting for its low half
    x0, y1 = upright.x0, upright.y1
    for i, code in enumerate(_codes(raw, tp, count)):
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
        if code == 0x20 and raw.FPDFText_IsGenerated(tp, i) == 1:
            out.append(PdfChar(" ", 0, 0, 0, 0, 0, -1))
            continue
        obj_key = calls.text_object(handle, i) or 0
        if obj_key != last_obj or current is None:
            last_obj = obj_key
            obj = raw.FPDFText_GetTextObject(tp, i)
            font = raw.FPDFTextObj_GetFont(obj) if obj else None
            weight = raw.FPDFText_GetFontWeight(tp, i)
            info = (
                _font_info(raw, font, weight, fonts)
                if font
                else FontStyle(False, False, False, False)
            )
            turn, slanted = quarter_of(raw.FPDFText_GetCharAngle(tp, i))
            font_id = _style_id(info)
            obj_size = _object_size(raw, obj) if obj else 0.0
            face = ctypes.cast(font, ctypes.c_void_p).value or 0 if font else 0
            current = (info, font_id, face, turn, slanted)
        info, font_id, face, turn, slanted = current
        text = chr(code) if 0x20 <= code < 0xD800 else _char_text(code, info)
        if not text:
            continue
        calls.char_box(handle, i, *box)
        if _off_page(left.value, right.value, bottom.value, top.value, upright):
            continue
        size = obj_size or raw.FPDFText_GetFontSize(tp, i)
        if turn:
            char = PdfChar(
                text,
                left.value,
                right.value,
                bottom.value,
                top.value,
                size,
                font_id,
                face,
                turn,
                slanted,
            )
        else:  # the upright frame, inline: most glyphs of most pages
            char = PdfChar(
                text,
                left.value - x0,
                right.value - x0,
                y1 - bottom.value,
                y1 - top.value,
                size,
                font_id,
                face,
                turn,
                slanted,
            )
        out.append(char)
    return out


OFF_PAGE_MARGIN = 2.0
"""Points a glyph may stand beyond the page box and still count as on the page."""


def _off_page(left: float, right: float, bottom: float, top: float, page: Frame) -> bool:
    """Whether a glyph's box (user space) lies wholly outside the page box: no viewer shows
    it (a broken writer's content stream spilled into a string runs far off the page), so
    it is no text of the page, and no region on the page could hold it.

    The box with its sides swapped counts as the page too: some writers swap them for
    ``/Rotate`` and then draw in the unswapped box, text meant to be read.
    """
    margin = OFF_PAGE_MARGIN
    width, height = page.x1 - page.x0, page.y1 - page.y0
    for right_edge, top_edge in ((page.x1, page.y1), (page.x0 + height, page.y0 + width)):
        if (
            right >= page.x0 - margin
            and left <= right_edge + margin
            and top >= page.y0 - margin
            and bottom <= top_edge + margin
        ):
            return False
    return True


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
