"""Digits printed raised after a word, kept raised in the text: ``before³``, not ``before3``.

A paper in the superscript citation style calls its numbered references by raised digits
(``as shown before³``, ``space¹,²``, ``fields⁴⁻⁶``); footnote marks are printed the same
way. The text layer gives them as plain digits glued to the word (``before3``), which no
later step can tell from ``CO2`` or ``GPT4``. The line reader writes such a run with the
Unicode superscript digits instead, so the citation step can read the callouts
(:mod:`klea_utils.stores._ingest.citations.callouts` decides which are callouts) and the
text keeps what the page shows.

A run is raised when its glyphs are set at most :data:`RAISED_SIZE` of the line's size and
sit above its baseline by at least :data:`RAISED_LIFT` of that size, and it follows a word
of two letters or more or a closing mark (``.``, ``,``, ``)``). An exponent after a single
letter, a digit or a bracket of a formula (``x²``, ``10³``) is no such run and stays as the
text layer gives it.
"""

from __future__ import annotations

from dataclasses import replace
from statistics import median

from klea_utils.stores._ingest.pdf.pdf_chars import PdfChar

__all__ = ["RAISED_LIFT", "RAISED_SIZE", "SUPERSCRIPT", "raise_callout_digits"]

RAISED_SIZE = 0.8
"""A raised glyph is set at most this share of the line's type size."""
RAISED_LIFT = 0.2
"""... and its bottom sits this share of the line's size or more above the baseline."""
SUPERSCRIPT = str.maketrans(
    "0123456789-\u2013", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b\u207b"
)
"""Digits and the range dash, raised."""
_RUN_MARKS = frozenset(",-\u2013")
_BEFORE_MARKS = frozenset(".,;:)\u201d\u2019'\"")


def _raised(char: PdfChar, size: float, baseline: float) -> bool:
    return 0 < char.size <= RAISED_SIZE * size and baseline - char.bottom >= RAISED_LIFT * size


def _opens_after(chars: list[PdfChar], start: int) -> bool:
    """Whether the run at ``start`` follows, with no blank between, a closing mark or a
    word of two letters or more."""
    if start == 0 or not chars[start - 1].text.strip():
        return False
    if chars[start - 1].text in _BEFORE_MARKS:
        return True
    letters = 0
    while start - 1 - letters >= 0 and chars[start - 1 - letters].text.isalpha():
        letters += 1
    return letters >= 2


def raise_callout_digits(chars: list[PdfChar], size: float) -> list[PdfChar]:
    """``chars`` with each raised digit run after a word written in superscript digits."""
    full = [c for c in chars if c.text.strip() and c.size > RAISED_SIZE * size]
    if not full or not any(c.text.isdigit() for c in chars):
        return chars
    baseline = median(c.bottom for c in full)
    out = list(chars)
    index = 0
    while index < len(out):
        char = out[index]
        if not (char.text.isdigit() and _raised(char, size, baseline)):
            index += 1
            continue
        end = index
        while (
            end < len(out)
            and _raised(out[end], size, baseline)
            and (out[end].text.isdigit() or out[end].text in _RUN_MARKS)
        ):
            end += 1
        after = out[end].text if end < len(out) else " "
        if _opens_after(out, index) and not after.isalnum():
            for k in range(index, end):
                out[k] = replace(out[k], text=out[k].text.translate(SUPERSCRIPT))
        index = end
    return out
