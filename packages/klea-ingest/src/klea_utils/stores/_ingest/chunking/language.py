"""The language of a chunk's text, told offline from its script and its commonest words.

:func:`detect_language` needs no model and no dependency: the script of most letters
names the language where a script belongs to few (Hangul, Kana, Thai, Greek, Hebrew),
letters that only one language of a script uses tell Persian and Urdu from Arabic and
Ukrainian from Russian, and a vote of function words tells apart the Latin-script
languages a library mostly holds. Anything it cannot tell is :data:`UNDETERMINED`.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["LANGUAGES", "LANGUAGE_KEY", "UNDETERMINED", "detect_language"]

LANGUAGE_KEY = "language"
"""Metadata key of a chunk's language: an ISO 639-1 code, or :data:`UNDETERMINED`."""

UNDETERMINED = "und"
"""The ISO 639-2 code for a language that cannot be told (too little text, no vote)."""

_SCRIPTS: tuple[tuple[str, str], ...] = (
    ("kana", "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"),
    ("han", "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"),
    ("hangul", "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"),
    ("thai", "\u0e00-\u0e7f"),
    ("lao", "\u0e80-\u0eff"),
    ("arabic", "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff"),
    ("hebrew", "\u0590-\u05ff"),
    ("greek", "\u0370-\u03ff"),
    ("cyrillic", "\u0400-\u04ff"),
    ("devanagari", "\u0900-\u097f"),
    ("latin", "A-Za-z\u00c0-\u024f"),
)
_PATTERNS = {name: re.compile(f"[{chars}]") for name, chars in _SCRIPTS}
_SINGLE = {
    "hangul": "ko",
    "thai": "th",
    "lao": "lo",
    "hebrew": "he",
    "greek": "el",
    "devanagari": "hi",
}
_PERSIAN = re.compile("[\u067e\u0686\u0698\u06af\u06a9\u06cc]")  # پ چ ژ گ ک ی
_URDU = re.compile("[\u0679\u0688\u0691\u06ba\u06be\u06c1\u06d2]")  # ٹ ڈ ڑ ں ھ ہ ے
_ARABIC_ONLY = re.compile("[\u0629\u0643\u064a\u0649]")  # ة ك ي ى
_UKRAINIAN = re.compile("[\u0456\u0457\u0454\u0491\u0406\u0407\u0404\u0490]")  # і ї є ґ
_WORD = re.compile(r"[^\W\d_]+")

_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        [
            "the",
            "of",
            "and",
            "to",
            "in",
            "is",
            "that",
            "for",
            "with",
            "are",
            "this",
            "by",
            "from",
            "was",
            "we",
            "be",
        ]
    ),
    "fr": frozenset(
        [
            "le",
            "la",
            "les",
            "des",
            "et",
            "est",
            "une",
            "dans",
            "pour",
            "que",
            "du",
            "sur",
            "au",
            "avec",
            "sont",
            "nous",
        ]
    ),
    "de": frozenset(
        [
            "der",
            "die",
            "das",
            "und",
            "ist",
            "nicht",
            "mit",
            "ein",
            "eine",
            "den",
            "von",
            "zu",
            "auf",
            "sich",
            "dem",
            "wir",
        ]
    ),
    "es": frozenset(
        [
            "el",
            "los",
            "las",
            "del",
            "que",
            "y",
            "en",
            "un",
            "una",
            "es",
            "por",
            "para",
            "con",
            "se",
            "como",
            "más",
        ]
    ),
    "it": frozenset(
        [
            "il",
            "di",
            "che",
            "è",
            "per",
            "un",
            "una",
            "della",
            "sono",
            "gli",
            "nel",
            "con",
            "si",
            "non",
            "dei",
        ]
    ),
    "pt": frozenset(
        [
            "o",
            "os",
            "da",
            "do",
            "das",
            "dos",
            "que",
            "em",
            "um",
            "uma",
            "para",
            "com",
            "não",
            "é",
            "se",
            "por",
        ]
    ),
    "nl": frozenset(
        [
            "de",
            "het",
            "een",
            "van",
            "en",
            "is",
            "dat",
            "op",
            "te",
            "zijn",
            "met",
            "voor",
            "niet",
            "wordt",
        ]
    ),
}

LANGUAGES: frozenset[str] = frozenset(
    {"zh", "ja", "ko", "th", "lo", "ar", "fa", "ur", "he", "el", "ru", "uk", "hi"}
    | set(_FUNCTION_WORDS)
    | {UNDETERMINED}
)
"""Every code :func:`detect_language` can return."""

_MIN_LETTERS = 8
_MIN_SHARE = 0.2  # a non-Latin script holding this share of the letters names the language
_MIN_VOTES = 2
_URDU_SHARE = 0.2  # Urdu writes Persian's letters too; its own letters are a fifth as many


def _script_counts(text: str) -> Counter[str]:
    return Counter({name: len(pattern.findall(text)) for name, pattern in _PATTERNS.items()})


def _latin_language(text: str) -> str:
    votes: Counter[str] = Counter()
    for word in _WORD.findall(text.lower()):
        for language, words in _FUNCTION_WORDS.items():
            if word in words:
                votes[language] += 1
    if not votes:
        return UNDETERMINED
    (best, count), *rest = [*votes.most_common(2), ("", 0)]
    if count < _MIN_VOTES or count == rest[0][1]:
        return UNDETERMINED
    return best


def _arabic_language(text: str) -> str:
    urdu, persian = len(_URDU.findall(text)), len(_PERSIAN.findall(text))
    arabic = len(_ARABIC_ONLY.findall(text))
    if urdu >= _MIN_VOTES and urdu >= _URDU_SHARE * persian:
        return "ur"
    return "fa" if persian > arabic else "ar"


def detect_language(text: str) -> str:
    """Return the ISO 639-1 code of the language of ``text``, or :data:`UNDETERMINED`.

    Chinese is Han without Kana, Japanese is Kana (with or without Han); Korean, Thai,
    Lao, Hebrew, Greek and Hindi by their scripts; Persian (پ چ ژ گ ک ی) and Urdu
    (ٹ ڈ ڑ ں ھ ہ ے) apart from Arabic, Ukrainian (і ї є ґ) apart from Russian; English,
    French, German, Spanish, Italian, Portuguese and Dutch by a vote of their function
    words. A script other than Latin counts when it holds a fifth of the letters, so a
    Chinese paper that cites English names is Chinese and an English one quoting a
    Chinese title is English.
    """
    counts = _script_counts(text)
    letters = sum(counts.values())
    if letters < _MIN_LETTERS:
        return UNDETERMINED
    others = [(n, c) for n, c in counts.items() if n != "latin" and c >= _MIN_SHARE * letters]
    if not others:
        return _latin_language(text) if counts["latin"] else UNDETERMINED
    script = max(others, key=lambda pair: pair[1])[0]
    if script in {"kana", "han"}:
        return "ja" if counts["kana"] >= max(3, 0.05 * counts["han"]) else "zh"
    if script == "arabic":
        return _arabic_language(text)
    if script == "cyrillic":
        return "uk" if len(_UKRAINIAN.findall(text)) >= 2 else "ru"
    return _SINGLE.get(script, UNDETERMINED)
