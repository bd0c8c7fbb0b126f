"""Right-to-left lines in logical order: the order a reader reads, as the text would be typed.

pdfium hands a line's characters over in an order of its own: the content stream's order,
reversed where its bidi pass thinks a run is right-to-left. For Arabic, Persian and Hebrew
that is often, but not always, the logical order; and its reversal also turns round the
characters of one glyph (a lam-alef ligature comes out alef-lam, ``کاالی`` for ``کالای``)
and puts a vowel mark before its letter.

So a line that holds right-to-left letters is rebuilt from geometry instead:

1. its glyphs are put in visual order, left to right by their boxes (the characters of one
   glyph share a box and keep pdfium's order; a combining mark goes with the letter it sits
   on, just before it);
2. the visual text is built like any line (blanks from the gaps between glyphs, table
   cells from wide gaps);
3. :func:`visual_to_logical` turns the visual text into logical order with the Unicode
   bidi algorithm at the level a page needs (two embedding levels: right-to-left text with
   left-to-right runs of Latin words and numbers, or the reverse); the cells of a
   right-to-left row are read from the right;
4. a Latin and an Arabic letter that touch with no blank between them (``Pythonمن``) are
   two words: a blank goes between them (:func:`split_mixed_words`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Protocol, TypeVar

__all__ = [
    "has_rtl",
    "rtl_base",
    "split_mixed_words",
    "visual_order",
    "visual_to_logical",
]


class _Glyph(Protocol):
    text: str
    left: float
    right: float
    font: int
    face: int
    size: float


G = TypeVar("G", bound=_Glyph)

_STRONG_R = frozenset(("R", "AL"))
_NUMBER = frozenset(("EN", "AN"))


def _klass(char: str) -> str:
    """``R``, ``L``, ``N`` (a number) or ``-`` (neutral) for the bidi algorithm."""
    bidi = unicodedata.bidirectional(char)
    if bidi in _STRONG_R:
        return "R"
    if bidi == "L":
        return "L"
    if bidi in _NUMBER:
        return "N"
    return "-"


def has_rtl(text: str) -> bool:
    """Whether ``text`` holds a strong right-to-left character."""
    if text.isascii():
        return False
    return any(unicodedata.bidirectional(c) in _STRONG_R for c in text)


def rtl_base(text: str) -> bool:
    """Whether a line reads right to left: at least as many words with right-to-left
    letters as words with left-to-right ones (an Arabic sentence quoting ``Python``, or a
    row of numbers with an Arabic label, reads from the right)."""
    if not has_rtl(text):
        return False
    rtl = ltr = 0
    for word in text.split():
        classes = {_klass(c) for c in word}
        rtl += "R" in classes
        ltr += "L" in classes and "R" not in classes
    return rtl > 0 and rtl >= ltr


def _numbers(classes: list[str], text: str) -> list[str]:
    """A separator between two digits (``1403/09/19``, ``47.500``) and a currency or
    percent sign next to a number belong to the number (Unicode's rules W4 and W5)."""
    out = list(classes)
    for i, char in enumerate(text):
        if out[i] != "-" or not 0 < i < len(text) - 1:
            continue
        if unicodedata.bidirectional(char) in ("CS", "ES") and out[i - 1] == out[i + 1] == "N":
            out[i] = "N"
    for i, char in enumerate(text):
        if out[i] != "-" or unicodedata.bidirectional(char) != "ET":
            continue
        if (i > 0 and out[i - 1] == "N") or (i + 1 < len(text) and out[i + 1] == "N"):
            out[i] = "N"
    return out


def _levels(text: str, rtl: bool) -> list[int]:
    """Embedding levels of the characters of ``text`` (visual or logical: the same rules)."""
    classes = _numbers([_klass(c) for c in text], text)
    if not rtl:  # in a left-to-right line numbers are left to right (rule W7)
        classes = ["L" if k == "N" else k for k in classes]
    # numbers act as right-to-left for the neutrals around them (rule N1)
    strong = ["R" if k == "N" else k for k in classes]
    levels: list[int] = []
    base = 1 if rtl else 0
    for i, klass in enumerate(classes):
        if klass == "R":
            levels.append(1)
        elif klass in ("L", "N"):
            levels.append(2 if rtl else 0)
        else:
            before = next((strong[j] for j in range(i - 1, -1, -1) if strong[j] != "-"), None)
            after = next((strong[j] for j in range(i + 1, len(text)) if strong[j] != "-"), None)
            if before is not None and before == after:
                levels.append(1 if before == "R" else (2 if rtl else 0))
            else:
                levels.append(base)
    return levels


def visual_to_logical(text: str, rtl: bool | None = None) -> str:
    """Reorder a line's ``text`` from visual (left to right on the page) to logical order.

    ``rtl`` is the line's base direction (guessed with :func:`rtl_base` when ``None``).
    Runs of each level are reversed from the highest level down (Unicode's rule L2), which
    for two levels maps visual order to logical order as well as the reverse.
    """
    if not has_rtl(text):
        return text
    if rtl is None:
        rtl = rtl_base(text)
    chars = list(text)
    levels = _levels(text, rtl)
    for level in range(max(levels), 0, -1):
        i = 0
        while i < len(chars):
            if levels[i] < level:
                i += 1
                continue
            j = i
            while j < len(chars) and levels[j] >= level:
                j += 1
            chars[i:j] = chars[i:j][::-1]
            levels[i:j] = levels[i:j][::-1]
            i = j
    return "".join(chars)


def visual_order(glyphs: Sequence[G]) -> list[G]:
    """``glyphs`` (one line) left to right on the page, without pdfium's generated blanks
    and without the blanks it placed inside a word (:func:`_blank_inside_word`).

    Glyphs with the same box (the characters of one ligature) keep their order; a combining
    mark is placed just before the letter it is drawn over, so that it follows the letter
    once a right-to-left run is reversed.
    """
    keyed: list[tuple[float, int, G]] = []
    for index, glyph in enumerate(glyphs):
        if glyph.font == -1:
            continue  # pdfium's generated blank: no position; gaps decide the blanks
        middle = (glyph.left + glyph.right) / 2
        keyed.append((middle, index, glyph))
    bases = [k for k in keyed if unicodedata.category(k[2].text[:1] or " ") != "Mn"]
    mark_ids: set[int] = set()
    for position, (_middle, index, glyph) in enumerate(keyed):
        if unicodedata.category(glyph.text[:1] or " ") != "Mn":
            continue
        base = _mark_base(glyph, index, bases)
        if base is not None:
            keyed[position] = (base[0], base[1], glyph)
            mark_ids.add(id(glyph))
    # ties: the characters of one glyph in pdfium's order, a mark before its letter
    keyed.sort(key=lambda k: (k[0], k[1], id(k[2]) not in mark_ids))
    ordered = [k[2] for k in keyed]
    inside = {i for i in range(len(ordered)) if _blank_inside_word(ordered, i)}
    return _lam_alef_visual([g for i, g in enumerate(ordered) if i not in inside])


TOUCH_GAP_EM = 0.125
"""Glyphs closer than this (in ems, half a word gap) touch: no word boundary lies between
them. Chromium's shaped Persian and Arabic leave at most 0.2 em between the clusters of a
word and 0.35 em or more between words with no blank drawn; a word space is 0.32 em."""


def _placeless_blank(glyph: _Glyph) -> bool:
    """A blank that pdfium put in the text layer without a font or a width of its own."""
    return glyph.face == 0 and not glyph.text.strip() and glyph.right - glyph.left < 0.01


def _blank_inside_word(ordered: Sequence[_Glyph], index: int) -> bool:
    """Whether the glyph at ``index`` of a line in visual order is a placeless blank between
    two glyphs that touch: a blank inside a word, which the line does without.

    pdfium adds a placeless blank where the content stream's text jumps and places it by
    the text layer's order. Where that order is logical (``camelot`` mednine.pdf) the
    blank falls between the words, where it belongs; where pdfium read a word in visual
    order (chromium draws each glyph cluster of shaped Arabic or Persian as its own run,
    the way a browser prints a web page) it falls between two joined letters of the next
    word (``ح قوق``, ``م یدهد``), while the real boundary is a gap with no blank in it.
    """
    blank = ordered[index]
    if not _placeless_blank(blank):
        return False
    before = next((g for g in reversed(ordered[:index]) if g.text.strip()), None)
    after = next((g for g in ordered[index + 1 :] if g.text.strip()), None)
    if before is None or after is None:
        return False
    em = max(before.size, after.size, 1.0)
    return after.left - before.right < TOUCH_GAP_EM * em


_LAM = "\u0644"
_ALEFS = frozenset("\u0627\u0623\u0625\u0622")
"""Alef and its hamza and madda forms: the letters a lam-alef ligature ends with."""


def _lam_alef_visual(glyphs: list[G]) -> list[G]:
    """Put the two letters of each lam-alef glyph in visual order: alef, then lam.

    A lam-alef ligature (U+FEF5..U+FEFC, or a font's own glyph) is one box holding two
    characters, which pdfium hands over in either order: reversed inside a run it reads as
    right-to-left (``camelot`` mednine.pdf), logical where the content stream drew the
    presentation form (a producer writing U+FEFB). In logical order the lam always comes
    first (an alef never joins the letter after it), so in visual order, which the
    right-to-left run is reversed from, the alef comes first.
    """
    for i in range(len(glyphs) - 1):
        first, second = glyphs[i], glyphs[i + 1]
        if first.text == _LAM and second.text in _ALEFS and _same_box(first, second):
            glyphs[i], glyphs[i + 1] = second, first
    return glyphs


def _same_box(a: _Glyph, b: _Glyph) -> bool:
    return abs(a.left - b.left) < 0.01 and abs(a.right - b.right) < 0.01


def _mark_base(
    mark: _Glyph, index: int, bases: list[tuple[float, int, G]]
) -> tuple[float, int, G] | None:
    """The letter a mark sits on: the nearest glyph in the text layer whose box holds the
    mark's middle."""
    middle = (mark.left + mark.right) / 2
    best: tuple[int, tuple[float, int, G]] | None = None
    for key in bases:
        glyph = key[2]
        if not glyph.text.strip() or not glyph.left - 0.5 <= middle <= glyph.right + 0.5:
            continue
        distance = abs(key[1] - index)
        if distance <= 3 and (best is None or distance < best[0]):
            best = (distance, key)
    return None if best is None else best[1]


def split_mixed_words(text: str) -> str:
    """Put a blank between a left-to-right and a right-to-left letter that touch."""
    if not has_rtl(text):
        return text
    out: list[str] = []
    previous = ""
    for char in text:
        if previous and char.isalpha() and previous.isalpha():
            a, b = _klass(previous), _klass(char)
            if {a, b} == {"L", "R"}:
                out.append(" ")
        out.append(char)
        previous = char
    return "".join(out)
