"""The character classes, Arabic-script mappings and Korean particles of the multiscript tokenizer.

Kept apart from :mod:`sci_etl_core.search.multiscript` so the tables can be read (and
changed, with :data:`~sci_etl_core.search.multiscript.MULTISCRIPT_RULES_VERSION` bumped)
in one place.
"""

from __future__ import annotations

__all__ = [
    "CJK",
    "HANGUL",
    "KOREAN_PARTICLES",
    "OTHER",
    "SOUTHEAST_ASIAN",
    "char_class",
    "normalize_arabic",
    "strip_article",
    "strip_particle",
]

OTHER, CJK, HANGUL, SOUTHEAST_ASIAN = 0, 1, 2, 3

# (first, last, class): Han, Kana (full and half width), Hangul (syllables, jamo, half
# width), Thai and Lao. Everything else, Arabic script included, is OTHER.
_RANGES: tuple[tuple[int, int, int], ...] = (
    (0x0E00, 0x0EFF, SOUTHEAST_ASIAN),
    (0x1100, 0x11FF, HANGUL),
    (0x2E80, 0x2FDF, CJK),
    (0x3005, 0x3007, CJK),
    (0x3021, 0x3029, CJK),
    (0x3038, 0x303B, CJK),
    (0x3040, 0x30FF, CJK),
    (0x3130, 0x318F, HANGUL),
    (0x31F0, 0x31FF, CJK),
    (0x3400, 0x4DBF, CJK),
    (0x4E00, 0x9FFF, CJK),
    (0xA960, 0xA97F, HANGUL),
    (0xAC00, 0xD7FF, HANGUL),
    (0xF900, 0xFAFF, CJK),
    (0xFF66, 0xFF9F, CJK),
    (0xFFA0, 0xFFDC, HANGUL),
    (0x20000, 0x3134F, CJK),
)


def char_class(char: str) -> int:
    """Return the class of ``char``: :data:`CJK`, :data:`HANGUL`, :data:`SOUTHEAST_ASIAN` or :data:`OTHER`."""  # noqa: E501
    code = ord(char)
    if code < 0x0E00:
        return OTHER
    for first, last, kind in _RANGES:
        if code < first:
            return OTHER
        if code <= last:
            return kind
    return OTHER


_YEH, _KAF, _ALEF, _HEH = "\u064a", "\u0643", "\u0627", "\u0647"
_ARABIC: dict[int, str | None] = {
    0x0649: _YEH,  # alef maksura
    0x06CC: _YEH,  # Farsi yeh
    0x06D2: _YEH,  # yeh barree
    0x06A9: _KAF,  # keheh (Persian kaf)
    0x06AA: _KAF,  # swash kaf
    0x0622: _ALEF,  # alef with madda above
    0x0623: _ALEF,  # alef with hamza above
    0x0625: _ALEF,  # alef with hamza below
    0x0671: _ALEF,  # alef wasla
    0x0629: _HEH,  # teh marbuta
    0x06C0: _HEH,  # heh with yeh above
    0x06C1: _HEH,  # heh goal
    0x06D5: _HEH,  # ae
    0x0640: None,  # tatweel
    0x0670: None,  # superscript alef
    **dict.fromkeys(range(0x064B, 0x0660), None),  # harakat: fathatan to wavy hamza below
    **dict.fromkeys(range(0x06D6, 0x06EE), None),  # Quranic annotation marks
    **{0x0660 + digit: str(digit) for digit in range(10)},  # Arabic-Indic digits
    **{0x06F0 + digit: str(digit) for digit in range(10)},  # Persian digits
}


def normalize_arabic(text: str) -> str:
    """Map Arabic-script letters that readers treat as one to one form, and drop marks."""
    return text.translate(_ARABIC)


_ARTICLES = ("وال", "بال", "كال", "فال", "ال", "لل")  # longest first; after normalize_arabic
_MIN_AFTER_ARTICLE = 2


def strip_article(word: str) -> str:
    """Cut the Arabic definite article, with a joined conjunction or preposition, from ``word``.

    ``المدرسة`` and ``مدرسة`` are then one word, as in Lucene's Arabic light stemmer;
    at least two letters remain (``الف`` stays). Only the first letters are looked at,
    so a word of another script is returned unchanged.
    """
    for article in _ARTICLES:
        if word.startswith(article) and len(word) - len(article) >= _MIN_AFTER_ARTICLE:
            return word[len(article) :]
    return word


KOREAN_PARTICLES: tuple[str, ...] = tuple(
    sorted(
        (
            "은", "는", "이", "가", "을", "를", "의", "에", "와", "과", "도", "만", "로",
            "으로", "에서", "에게", "까지", "부터", "보다", "처럼", "에는", "에서는",
            "으로는", "로는", "와는", "과는", "이나", "나", "이며", "이고", "하고", "이다",
            "에도", "에서도", "만을", "들", "들은", "들이", "들을", "들의", "들과", "들에",
        ),
        key=len,
        reverse=True,
    )
)  # fmt: skip
"""Particles (and the plural 들 with one) one of which is cut from the end of a Hangul word."""

_MIN_STEM = 2


def strip_particle(word: str) -> int:
    """Return how many syllables of particle to cut from the Hangul ``word``.

    The longest listed particle that ends the word is cut when at least two syllables
    remain, so ``연구는`` loses ``는`` but ``결과`` (two syllables) keeps its ``과``.
    """
    for particle in KOREAN_PARTICLES:
        if word.endswith(particle) and len(word) - len(particle) >= _MIN_STEM:
            return len(particle)
    return 0
