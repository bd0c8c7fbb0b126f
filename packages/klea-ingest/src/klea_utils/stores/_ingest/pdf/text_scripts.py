"""Writing systems of text: which script a character is in, and what that means for words.

The PDF path reads text in many scripts. Three facts about a script change how lines are
built and judged, and live here so every module asks the same question the same way:

- *unspaced* scripts (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) put no blank
  between words, so a blank between two of their characters is no word boundary, and a
  line of them holds many more words than its blanks say (:func:`word_count`);
- *right-to-left* scripts (Arabic, Hebrew, Syriac, Thaana, N'Ko) are read from the right
  (:mod:`klea_utils.stores._ingest.pdf.pdf_bidi` puts them in logical order);
- sentences end in the script's own full stop (``。``, ``؟``, ``।``), not only in ``.``.

:func:`dominant_scripts` names the scripts of a text's letters, most frequent first; OCR
uses it to choose tesseract's languages (:mod:`klea_utils.stores._ingest.pdf.ocr_languages`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache

__all__ = [
    "DIGIT_GAP_EM",
    "SENTENCE_END",
    "SENTENCE_END_CHARS",
    "UNSPACED_GAP_EM",
    "WORD_GAP_EM",
    "dominant_scripts",
    "is_fullwidth",
    "is_rtl",
    "is_unspaced",
    "join_words",
    "script_of",
    "word_count",
    "word_gap_em",
]

SENTENCE_END_CHARS = '.!?:;)]"\u201d\u3002\uff0e\uff01\uff1f\u061f\u06d4\u0964\u0965\u0e2f'
"""Characters that end a sentence (or a clause that may end a paragraph) in the scripts we
read: Latin punctuation, the ideographic and fullwidth full stops and marks, the Arabic
question mark and full stop, the Devanagari danda and double danda, Thai paiyannoi."""

SENTENCE_END = re.compile(f"[{re.escape(SENTENCE_END_CHARS)}]$")
"""A text's last character is one of :data:`SENTENCE_END_CHARS`."""

_UNSPACED = frozenset(("HAN", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR"))
_RTL = frozenset(("ARABIC", "HEBREW", "SYRIAC", "THAANA", "NKO"))
_NAME_SCRIPT = {
    "CJK": "HAN",
    "IDEOGRAPHIC": "HAN",
    "HALFWIDTH": "HAN",
    "FULLWIDTH": "HAN",
    "HANGUL": "HANGUL",
    "KANGXI": "HAN",
    "BOPOMOFO": "HAN",
    "KATAKANA-HIRAGANA": "KATAKANA",
}


@lru_cache(maxsize=8192)
def script_of(char: str) -> str:
    """The script of ``char`` in capitals (``LATIN``, ``CYRILLIC``, ``HAN``, ``ARABIC``...).

    Read from the first word of the character's Unicode name (Python's ``unicodedata`` has
    no Script property); Han, fullwidth forms and CJK punctuation count as ``HAN``. A
    character with no name, or a common one (digits, punctuation, spaces), is ``COMMON``.
    """
    if not char or char.isspace() or char.isdigit():
        return "COMMON"
    name = unicodedata.name(char, "")
    if not name:
        return "COMMON"
    first = name.split(" ", 1)[0]
    if first in _NAME_SCRIPT:
        if first in ("HALFWIDTH", "FULLWIDTH"):
            # fullwidth Latin letters stay Latin; halfwidth katakana stays katakana
            rest = name.split(" ")[1:2]
            if rest and rest[0] in ("LATIN", "KATAKANA", "HANGUL"):
                return rest[0]
        return _NAME_SCRIPT[first]
    if unicodedata.category(char)[0] not in "LM":
        return "HAN" if 0x3000 <= ord(char) <= 0x303F else "COMMON"
    return first


def is_unspaced(char: str) -> bool:
    """Whether ``char`` belongs to a script written without blanks between words."""
    return script_of(char) in _UNSPACED


def is_fullwidth(char: str) -> bool:
    """Whether ``char`` is set in a square cell one em wide (East Asian width F or W:
    Han, Kana, CJK punctuation, fullwidth digits and letters), its ink narrower than the
    cell. Hangul is left out: Korean puts blanks between words, and its words are told
    apart by the glyphs' own gaps."""
    return unicodedata.east_asian_width(char) in ("F", "W") and script_of(char) != "HANGUL"


def is_rtl(char: str) -> bool:
    """Whether ``char`` is a strong right-to-left character (bidi class R or AL)."""
    return unicodedata.bidirectional(char) in ("R", "AL")


WORD_GAP_EM = 0.25
"""A blank this wide (in ems) between two glyphs is a word space, when the text layer has
no space character there."""

UNSPACED_GAP_EM = 1.0
"""Between two characters of an unspaced script only a blank this wide separates words
(a table cell, a spaced-out title): their glyph boxes are narrower than their advance, so
ordinary gaps between them reach a quarter em."""

DIGIT_GAP_EM = 0.4
"""Between two digits, and between a digit and the point or comma after it: narrow digit
glyphs (a Persian zero is a dot, a ``1`` is a stroke in a digit-wide cell, a point is a
dot at the left of its cell) leave a quarter em of blank inside one number (``1.3``, not
``1 .3``)."""
_DECIMAL_MARKS = frozenset(".,")


def word_gap_em(before: str, after: str) -> float:
    """The blank (in ems) between the glyphs ``before`` and ``after`` that separates words."""
    if before.isdigit() and (after.isdigit() or after in _DECIMAL_MARKS):
        return DIGIT_GAP_EM
    if before.isascii() or after.isascii():
        return WORD_GAP_EM
    if is_unspaced(before) and is_unspaced(after):
        return UNSPACED_GAP_EM
    return WORD_GAP_EM


def join_words(words: list[str]) -> str:
    """Join OCR's words of one line: a blank between them, except between two characters
    of an unspaced script (tesseract cuts Thai and Chinese into clusters, not words)."""
    out = ""
    for word in words:
        if out and not (is_unspaced(out[-1]) and is_unspaced(word[:1])):
            out += " "
        out += word
    return out


def word_count(text: str) -> int:
    """Words in ``text``: blank-separated tokens, and about one word per two characters of
    an unspaced script (a 40-character Japanese line is a sentence, not a 1-word heading)."""
    if text.isascii():
        return len(text.split())
    count = 0
    for token in text.split():
        unspaced = sum(is_unspaced(c) for c in token)
        count += max(1, (unspaced + 1) // 2) if unspaced else 1
    return count


def dominant_scripts(text: str, *, min_share: float = 0.05) -> list[str]:
    """Scripts of the letters of ``text``, most frequent first, each holding at least
    ``min_share`` of them (``[]`` for a text without letters)."""
    counts: Counter[str] = Counter(script_of(c) for c in text if c.isalpha())
    counts.pop("COMMON", None)
    total = sum(counts.values())
    if not total:
        return []
    return [s for s, n in counts.most_common() if n >= min_share * total]
