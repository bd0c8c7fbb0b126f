"""Is a page's text readable? A check per page, used to decide when to OCR.

Text extracted from fonts without a usable Unicode map comes out as dingbats, private-use
code points, control characters or runs of consonants. A page is *readable* when most of
its words look like words of a written language: letters only, and for Latin script with a
vowel. A page with almost no text but with images is a scan.

Tokens that are neither words nor garbage do not vote: numbers, hexadecimal codes
(``0xA5``, ``82BC``, ``X'5A1D'``), labels (``K.5``, ``A/1``, ``t1``), Latin tokens of one or
two letters (variables, units, letter-spaced code: ``i n t``), capital acronyms without a
vowel (``DCT``, ``PDF``) and lone symbols. One character of another script still votes: a
Chinese character is a word, a stray Greek or Cyrillic letter from a broken font is not.
A page whose voting tokens are mostly words is readable; a page with no voting token at
all is not.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

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
    r"|[^\W\d_][,\\{}|~][^\W\d_]"  # a comma, backslash, brace, bar or tilde inside
    r"|^~[^\W\d_]"  # letters: ``PaJ,Qen``, ``HMYLL\eCTBO``, ``IWHe}I{Hble``, ``~eneeoM``
    r"|[^\W\d_]\)[^\W\d_]+\("  # brackets the wrong way round: ``aeHe)f(HbtX``
)
"""Latin letters and digits standing in for another script's glyphs (an OCR layer that read
Cyrillic as Latin: ``Hanoroea`` for ``Налоговая``, ``Д`` as ``,Q``, ``Ж`` as ``>K`` or ``}I{``,
``Щ`` as ``LL`` and a backslash, ``ц`` as ``~``): no word of a Latin language looks so."""
_HEX = re.compile(r"(?:0[xX]|[xX]['’])?(?:[0-9A-F]+|[0-9a-f]+)[hH]?['’]?")
"""A hexadecimal code: ``0xA5``, ``82BC``, ``X'5A1D'``, ``3fh`` (one case of digits)."""
_ACRONYM = re.compile(r"[B-DF-HJ-NP-TV-XZ]{2,5}")
"""Capitals without a vowel (``DCT``, ``PDF``, ``HTML``): an acronym, not a word misread."""
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
    if _latin(core):
        return any(c.lower() in _VOWELS for c in letters) and not _LOOKALIKE.search(core)
    return True


_WORD, _NOT_WORD, _NO_VOTE = 1, 0, -1


def _latin(token: str) -> bool:
    return all(unicodedata.name(c, "").startswith("LATIN") for c in token if c.isalpha())


@lru_cache(maxsize=1 << 16)
def _vote(token: str) -> int:
    """:data:`_WORD`, :data:`_NOT_WORD`, or :data:`_NO_VOTE` for a token that is neither
    (see the module's docstring). Cached: a page's words repeat, and so do a document's."""
    if len(token) == 1 and not token.isalnum():
        return _NO_VOTE  # a lone bullet, dash or symbol
    if _junk(token[0]):
        return _NOT_WORD
    letters = sum(c.isalpha() for c in token)
    digits = sum(c.isdigit() for c in token)
    if not letters or letters < digits:
        return _NO_VOTE  # a number, or a formula with a variable in it (``60000≤Q＜80000``)
    core = _strip_punctuation(token)
    if letters <= 2 and _latin(token):
        return _NO_VOTE  # a variable, a unit, a label (``K.5``), letter-spaced code (``i n t``)
    if (digits and _HEX.fullmatch(core)) or _ACRONYM.fullmatch(core):
        return _NO_VOTE  # a hexadecimal code (``82BC``), an acronym (``DCT``)
    return _WORD if _wordlike(token) else _NOT_WORD


def assess(text: str) -> PageQuality:
    """Assess the text of one page."""
    compact = "".join(text.split())
    chars = len(compact)
    words = voters = 0
    for token in _TOKEN.findall(text):
        vote = _vote(token)
        if vote != _NO_VOTE:
            voters += 1
            words += vote
    word_share = words / voters if voters else 0.0
    junk_share = _junk_count(compact) / chars if chars else 0.0
    return PageQuality(chars=chars, word_share=word_share, junk_share=junk_share)


def _junk_count(text: str) -> int:
    """Junk characters in ``text``, judged once per distinct character."""
    return sum(text.count(c) for c in set(text) if _junk(c))
