"""TeX's separately drawn accents put back on their letters (``Fre´deric`` -> ``Frédéric``).

TeX sets an accent as its own glyph over (or under) a letter; pdfium lists it where it was
drawn, sometimes after the rest of the line. :func:`attach_accents` finds the letter by
position and makes one composed character of the two.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from klea_utils.stores._ingest.pdf.pdf_chars import PdfChar

__all__ = ["attach_accents"]

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


def _accent_target(chars: list[PdfChar | None], index: int) -> int | None:
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


def attach_accents(chars: list[PdfChar | None]) -> list[PdfChar | None]:
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
