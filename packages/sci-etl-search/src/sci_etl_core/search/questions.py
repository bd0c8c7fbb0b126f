"""Plain questions as queries: the OR of a question's content words, each quoted.

A reader types "What do rotation curves tell us about dwarf galaxies?". As Boolean syntax
that is an AND of every word, which matches almost nothing; as the OR of its words, BM25
ranks the records that hold the rare ones first. Its function words ("the", "of") occur
in most records and barely move a score, and its question words ("what", "do") are rare
in papers, so BM25 would rank the few records that happen to hold them first: both are
left out (:data:`QUESTION_STOP_WORDS`, or the caller's own list). A question made only of
such words keeps them all, so "who" or "to be or not" still searches for something.

:func:`question_query` is the one place this is done: the ``sci-etl-search search --any``
command, klea-serve's plain-question search and klea's ``fts5:`` BM25 leg all call it.
:func:`reads_as_question` tells a question from a query that uses the syntax.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from sci_etl_core.search.query import FIELDS
from sci_etl_core.search.tokenize import Unicode61Tokenizer

__all__ = [
    "FUNCTION_WORDS",
    "QUESTION_STOP_WORDS",
    "QUESTION_WORDS",
    "question_query",
    "question_words",
    "reads_as_question",
]

FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)
"""English function words (Lucene's default English stop set)."""

QUESTION_WORDS = frozenset(
    [
        "can",
        "did",
        "do",
        "does",
        "from",
        "how",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
    ]
)
"""The words that make a sentence a question, and the auxiliaries that go with them."""

QUESTION_STOP_WORDS = FUNCTION_WORDS | QUESTION_WORDS
"""What :func:`question_query` leaves out unless told otherwise."""

_TOKENIZER = Unicode61Tokenizer()
_SYNTAX = re.compile(r'["():*]|(^|\s)[-+]|\b(AND|OR|NOT|NEAR)\b')


def question_words(text: str, *, stop_words: Collection[str] = QUESTION_STOP_WORDS) -> list[str]:
    """The distinct words of ``text`` less ``stop_words``, in order of first use.

    Words are the folded tokens of FTS5's ``unicode61 remove_diacritics 2`` tokenizer
    (:class:`~sci_etl_core.search.Unicode61Tokenizer`), so ``Müller`` is ``muller`` and
    ``snake_case`` two words; ``stop_words`` are compared in that folded form. When every
    word is a stop word all are kept; a text without words gives ``[]``.
    """
    words = list(dict.fromkeys(_TOKENIZER.words(text)))
    return [w for w in words if w not in stop_words] or words


def question_query(
    text: str,
    *,
    stop_words: Collection[str] = QUESTION_STOP_WORDS,
    fields: Sequence[str] = (),
) -> str:
    """The OR of :func:`question_words` of ``text``, each quoted; ``""`` when it has none.

    ``fields`` scopes every word (``body:"dwarf" OR body:"galaxies"``); by default a word
    matches in any field. The result always parses with
    :func:`~sci_etl_core.search.parse_query`, whatever ``text`` holds: quotes, brackets and
    operators in it are separators, never syntax.

    >>> question_query("What do rotation curves tell us about dwarf galaxies?")
    '"rotation" OR "curves" OR "tell" OR "us" OR "about" OR "dwarf" OR "galaxies"'
    >>> question_query("Who?", fields=("title",))
    'title:"who"'

    Raises:
        ValueError: When a field is not one of :data:`~sci_etl_core.search.FIELDS`.
    """
    unknown = [f for f in fields if f not in FIELDS]
    if unknown:
        raise ValueError(
            f"unknown field(s) {', '.join(map(repr, unknown))}; choose from {', '.join(FIELDS)}"
        )
    scope = f"{','.join(fields)}:" if fields else ""
    return " OR ".join(f'{scope}"{w}"' for w in question_words(text, stop_words=stop_words))


def reads_as_question(text: str, *, min_words: int = 3) -> bool:
    """Whether ``text`` reads as a plain question rather than a query in the syntax.

    It does when it has at least ``min_words`` words and none of the syntax: no quotes,
    brackets, field scopes, prefix stars, leading ``-``/``+`` signs or upper-case
    ``AND``/``OR``/``NOT``/``NEAR``.
    """
    return _SYNTAX.search(text) is None and len(_TOKENIZER.words(text)) >= min_words
