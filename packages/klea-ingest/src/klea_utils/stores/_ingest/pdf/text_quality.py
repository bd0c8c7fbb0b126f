"""Is a page's text readable? A check per page, used to decide when to OCR.

Text extracted from fonts without a usable Unicode map comes out as dingbats, private-use
code points, control characters or runs of consonants. A page is *readable* when most of
its words look like words of a written language: letters only, and for Latin script with a
vowel. A page with almost no text but with images is a scan.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from klea_utils.stores._ingest.pdf.text_scripts import is_unspaced, script_of

__all__ = ["MIN_PAGE_CHARS", "MIN_WORD_SHARE", "PageQuality", "assess"]

MIN_PAGE_CHARS = 50
"""Fewer non-space characters than this: the page has no real text layer (as ``precheck``)."""

MIN_WORD_SHARE = 0.5
"""Below this share of word-like tokens (and above :data:`MAX_JUNK_SHARE` junk), unreadable."""

MAX_JUNK_SHARE = 0.1
"""Share of junk characters (dingbats, private use, controls, U+FFFD) that makes a page
unreadable on its own."""

_TOKEN = re.compile(r"\S+")
_LOOKALIKE = re.compile(
    r"[^\W\d_]\d+[^\W\d_]"  # a digit inside letters: ``n8pBbiH``, ``nony4aBwHe``
    r"|[A-Z]{2}[a-z]{2}"  # capitals running into small letters: ``KBapTan``, ``CTpaxoBbiX``
)
"""Latin letters and digits standing in for another script's glyphs (an OCR layer that read
Cyrillic as Latin: ``Hanoroea`` for ``Налоговая``): no word of a Latin language looks so."""
_VOWELS = set("aeiouyàáâäãåæèéêëìíîïòóôöõøœùúûüýÿ")


@dataclass(frozen=True)
class PageQuality:
    """Counts behind the verdict for one page."""

    chars: int
    word_share: float
    junk_share: float

    @property
    def empty(self) -> bool:
        return self.chars < MIN_PAGE_CHARS

    @property
    def legible(self) -> bool:
        """Some text, and it reads as words (however little there is)."""
        return (
            self.chars > 0
            and self.junk_share <= MAX_JUNK_SHARE
            and self.word_share >= MIN_WORD_SHARE
        )

    @property
    def readable(self) -> bool:
        """A real text layer (not :attr:`empty`) that is :attr:`legible`."""
        return not self.empty and self.legible


def _junk(char: str) -> bool:
    code = ord(char)
    if 0x2700 <= code <= 0x27BF or 0x2600 <= code <= 0x26FF or 0x25A0 <= code <= 0x25FF:
        return True  # dingbats, miscellaneous symbols, geometric shapes
    if code in (0xFFFD, 0xFFFF) or 0xE000 <= code <= 0xF8FF:
        return True
    category = unicodedata.category(char)
    return category in ("Cc", "Co", "Cn") and char not in "\t\n\r"


def _punctuation(char: str) -> bool:
    return unicodedata.category(char).startswith("P")


def _strip_punctuation(token: str) -> str:
    start, end = 0, len(token)
    while start < end and _punctuation(token[start]):
        start += 1
    while end > start and _punctuation(token[end - 1]):
        end -= 1
    return token[start:end]


def _wordlike(token: str) -> bool:
    core = _strip_punctuation(token)
    letters = [c for c in core if c.isalpha()]
    marks = inner = 0
    if not core.isascii():
        # Thai, Devanagari and Arabic vowels are combining marks: part of the word
        marks = sum(unicodedata.category(c).startswith("M") for c in core)
        # ideographic commas and stops inside a run of Chinese are part of the sentence
        inner = sum(_punctuation(c) and script_of(c) == "HAN" for c in core)
    if len(letters) + marks < 0.8 * (len(core) - inner):
        return False
    if len(letters) < 2 and not (letters and is_unspaced(letters[0])):
        return False  # one Latin letter is no word; one Chinese character is
    if all(unicodedata.name(c, "").startswith("LATIN") for c in letters):
        return any(c.lower() in _VOWELS for c in letters) and not _LOOKALIKE.search(core)
    return True


def _letters_lead(token: str) -> bool:
    letters = sum(c.isalpha() for c in token)
    return letters > 0 and letters >= sum(c.isdigit() for c in token)


def assess(text: str) -> PageQuality:
    """Assess the text of one page."""
    compact = "".join(text.split())
    chars = len(compact)
    tokens = [t for t in _TOKEN.findall(text) if any(c.isalnum() for c in t) or len(t) > 1]
    # a number or a formula with a variable in it (``60000≤Q＜80000``) is no word, nor junk
    alpha = [t for t in tokens if _letters_lead(t) or _junk(t[0])]
    word_share = sum(_wordlike(t) for t in alpha) / len(alpha) if alpha else 0.0
    junk_share = sum(_junk(c) for c in compact) / chars if chars else 0.0
    return PageQuality(chars=chars, word_share=word_share, junk_share=junk_share)
