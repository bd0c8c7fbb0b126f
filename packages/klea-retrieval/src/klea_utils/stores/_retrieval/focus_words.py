"""The words the passage focus compares: a question's content words and a passage's words.

Both are folded, stemmed as the lexical legs stem them (Porter), with number words from
one to twenty read as their digits ("five" matches "5"; "zero" does not read as "0",
which every decimal and chart axis holds) and ``%``, ``$``, ``°``, ``‰`` read as
"percent", "dollar", "degree", "permille", so "5 percent" finds "5%". A question loses
the lexical legs' stop and question words and the filler it wraps around what it asks.
The passage focus (:mod:`~klea_utils.stores._retrieval.passage_focus`) and the library
counts (:mod:`~klea_utils.stores._retrieval.library_terms`) read words through here, so
a word is the same term in a question, a pooled passage and the library.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

from klea_utils.stores._retrieval.query_words import LEXICAL_STOPWORDS
from klea_utils.stores.text import normalize_text
from sci_etl_core.search.stemming import porter_stem

__all__ = [
    "content_terms",
    "identifier_terms",
    "passage_terms",
    "question_pairs",
    "question_terms",
]

_WORD = re.compile(r"\w+")
_FILLER_TEXT = """
    about above after again against all also am any because been before being below
    between both could during each few further had has have having he her here hers herself
    him himself his i its itself just may me might more most must my myself nor now off
    once only other ought our ours ourselves out over own same she should so some than
    them themselves those through too under until up very we were while would you your
    yours yourself yourselves many much s t d ll m re ve given give gives say says said
    according listed named mentioned shown show shows
"""
_ENGLISH_FILLER = frozenset(_FILLER_TEXT.split())
"""Words a question uses around what it asks (pronouns, auxiliaries, quantifiers, "according
to", "listed", a possessive's ``s``): left out of the focus with the lexical legs' stop and
question words. They are rare in some passages and would weigh as if they mattered."""
_SYMBOLS = str.maketrans({"%": " percent ", "$": " dollar ", "°": " degree ", "‰": " permille "})
_NUMBER_NAMES = """
    one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty
"""
_NUMBER_WORDS = {word: str(value) for value, word in enumerate(_NUMBER_NAMES.split(), start=1)}
"""Number words from one to twenty, read as their digits ("zero" is left as a word)."""


@lru_cache(maxsize=1 << 16)
def _term(word: str) -> str:
    return _NUMBER_WORDS.get(word) or porter_stem(word)


def passage_terms(text: str) -> list[str]:
    """The words of ``text`` as the pass compares them: folded, stemmed, numbers as digits."""
    folded = normalize_text(text).translate(_SYMBOLS).casefold()
    return [_term(word) for word in _WORD.findall(folded)]


def content_terms(question: str) -> list[str]:
    """The content words of ``question`` in its order, as terms (repeats kept)."""
    folded = normalize_text(question).translate(_SYMBOLS).casefold()
    words = [w for w in _WORD.findall(folded) if w not in LEXICAL_STOPWORDS]
    kept = [w for w in words if w not in _ENGLISH_FILLER] or words
    return [_term(w) for w in kept]


def question_terms(question: str) -> list[str]:
    """The distinct content words of ``question`` (stop and question words left out)."""
    return list(dict.fromkeys(content_terms(question)))


def identifier_terms(question: str) -> frozenset[str]:
    """The terms of the question's words written as identifiers: a capital after a word's
    first letter in a word that also has lower-case letters ("CMath", "DeepSeek",
    "MuPDF"), or letters and digits in one word ("GSM8K", "Qwen2", "8038B").

    Words in capitals throughout ("IRS", "WHO", "JPEG") are not counted: they name an
    agency, a standard or a document more often than a place inside it.
    """
    folded = normalize_text(question).translate(_SYMBOLS)
    found: set[str] = set()
    for word in _WORD.findall(folded):
        mixed_case = any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)
        letters_and_digits = any(c.isdigit() for c in word) and any(c.isalpha() for c in word)
        if mixed_case or letters_and_digits:
            found.add(_term(word.casefold()))
    return frozenset(found)


def question_pairs(question: str) -> list[tuple[str, str]]:
    """The question's neighbouring content words, as ordered pairs of terms."""
    terms = content_terms(question)
    return list(dict.fromkeys((a, b) for a, b in itertools.pairwise(terms) if a != b))
