"""The words of a natural question that the lexical (BM25) legs search for.

A reader asks "What bandwidth does the intra-node interconnect provide?". Its function
words ("the") occur in most chunks and barely move a BM25 score; its question words
("what", "does") are rare in papers, so BM25 gives them a high IDF and ranks the few
chunks that happen to hold them above the passage that answers. Both sets (defined in
:mod:`sci_etl_core.search.questions` and re-exported here) are left out of the query of
both lexical legs (the pickled corpus and ``fts5:``) and of klea-serve's plain-question
search. A query made only of such words keeps them all, so "who" or "to
be or not" still search for something.

On the development questions (``scripts/bench/real_questions.py``) leaving the question
words out lifts the pickled BM25 leg from 23 to 25 answers at rank 1 (see
``docs/benchmarks-quality.md``).
"""

from __future__ import annotations

import re

from klea_utils.stores.text import ARABIC_SCRIPT_LETTERS, normalize_text
from sci_etl_core.search.questions import FUNCTION_WORDS, QUESTION_STOP_WORDS
from sci_etl_core.search.questions import QUESTION_WORDS as SEARCH_QUESTION_WORDS
from sci_etl_core.search.tokenize import Unicode61Tokenizer

__all__ = [
    "LEXICAL_STOPWORDS",
    "QUERY_STOPWORDS",
    "QUESTION_WORDS",
    "content_words",
    "joined_compounds",
    "lexical_question",
]

_TOKENIZER = Unicode61Tokenizer()

QUERY_STOPWORDS = FUNCTION_WORDS
"""English function words (:data:`sci_etl_core.search.FUNCTION_WORDS`)."""

QUESTION_WORDS = SEARCH_QUESTION_WORDS
"""The words that make a sentence a question (:data:`sci_etl_core.search.QUESTION_WORDS`)."""

LEXICAL_STOPWORDS = QUESTION_STOP_WORDS
"""Everything :func:`content_words` leaves out (the stop list of
:func:`sci_etl_core.search.question_query`, which klea-serve and the ``fts5:`` leg call)."""


def content_words(text: str, *, fold: bool = True, distinct: bool = True) -> list[str]:
    """The words of ``text`` less :data:`LEXICAL_STOPWORDS`, in order.

    Words are the tokens of FTS5's ``unicode61 remove_diacritics 2`` tokenizer over the
    normalized text (:class:`sci_etl_core.search.Unicode61Tokenizer`): ``fold`` returns
    them case- and diacritic-folded, as an ``fts5:`` index holds them; ``fold=False`` as
    written, for a tokenizer of its own (the pickled corpus's). ``distinct`` keeps each
    word once (by its folded form); ``distinct=False`` keeps a repeated word as often as
    the text has it, so a long query still weighs the words it repeats. When every word
    is a stop word, all are kept; a text without words gives ``[]``.
    """
    text = normalize_text(text)
    words = [(t.text, text[t.start : t.end]) for t in _TOKENIZER.tokens(text)]
    if distinct:
        first: dict[str, str] = {}
        for folded, written in words:
            first.setdefault(folded, written)
        words = list(first.items())
    kept = [(f, w) for f, w in words if f not in LEXICAL_STOPWORDS] or words
    return [f if fold else w for f, w in kept]


_COMPOUND = re.compile(f"[{ARABIC_SCRIPT_LETTERS}]+(?:\u200c[{ARABIC_SCRIPT_LETTERS}]+)+")


def joined_compounds(text: str) -> list[str]:
    """The Persian compounds ``text`` writes with a zero-width non-joiner
    (``کتاب\u200cها``), their parts joined (``کتابها``) and normalized.

    ``normalize_text`` reads such a non-joiner as a space (chunking rules 12); stores built
    before hold the parts joined, as do texts typed without it.
    """
    return [normalize_text(match.replace("\u200c", "")) for match in _COMPOUND.findall(text)]


def lexical_question(query: str) -> str:
    """``query`` as the lexical legs search it: normalized, and each Persian compound
    typed with a zero-width non-joiner asked for joined as well as by its parts, so a
    chunk that writes it joined (typed so, or stored before chunking rules 12) is found."""
    return " ".join([normalize_text(query), *joined_compounds(query)])
