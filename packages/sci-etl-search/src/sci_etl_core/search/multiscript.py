"""A tokenizer that finds words in every script: CJK bigrams, Hangul stems, Arabic normalised.

:class:`MultiscriptTokenizer` starts from the tokens of
:class:`~sci_etl_core.search.tokenize.Unicode61Tokenizer` and changes only the tokens
holding characters of the scripts ``unicode61`` cannot split or fold, so English (and any
Latin, Greek or Cyrillic) text gives exactly the tokens it gives today:

- **Han and Kana** (Chinese, Japanese): a run is indexed as overlapping bigrams, as
  Lucene's ``CJKBigramFilter`` does; a lone character is a unigram. ``研究方法`` gives
  ``研究``, ``究方``, ``方法``, so the query ``方法`` finds it.
- **Hangul** (Korean): a word of three syllables or more loses one attached particle
  (``연구는``, ``연구에서`` both give ``연구``), leaving at least two syllables, and is then
  indexed as bigrams like Han.
- **Thai and Lao**: runs are indexed as overlapping bigrams of character clusters (a
  base letter with its vowel and tone marks); no dictionary is used.
- **Arabic script** (Arabic, Persian, Urdu): Persian yeh and alef maksura become Arabic
  yeh, Persian kaf Arabic kaf, hamza and madda alef forms plain alef, teh marbuta heh;
  tatweel and harakat are dropped; the definite article (``ال``, with a joined ``و``,
  ``ب``, ``ك`` or ``ف``; ``لل``) is cut, so ``المدرسة`` and ``مدرسة`` are one word;
  Arabic-Indic and Persian digits become ASCII digits;
  presentation forms (lam-alef ligatures) are decomposed by NFKC. A zero-width
  non-joiner separates words, as in ``unicode61`` and Lucene's Persian analysis:
  ``کتاب\u200cها`` gives ``كتاب``, ``ها``.
- Half-width and full-width forms, and CJK compatibility ideographs, are NFKC-normalised.

Every token keeps its character offsets into the original text, so snippets highlight
the original spelling. The same tokenizer must read queries, as it reads documents.

:func:`shadow_text` writes the tokens of a text as words that FTS5's ``unicode61``
tokenizer splits into exactly those tokens (checked by the tests against FTS5 itself),
which is how the SQLite store indexes these scripts: SQLite's Python module cannot
register an FTS5 tokenizer written in Python.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import pairwise

from sci_etl_core.search._multiscript_rules import (
    HANGUL,
    OTHER,
    char_class,
    normalize_arabic,
    strip_article,
    strip_particle,
)
from sci_etl_core.search._unicode_tables import FOLD_RUNS
from sci_etl_core.search.query import And, Near, Node, Not, Or, Phrase, Term
from sci_etl_core.search.tokenize import Token, Unicode61Tokenizer

__all__ = ["MULTISCRIPT_RULES_VERSION", "MultiscriptTokenizer", "shadow_query", "shadow_text"]

MULTISCRIPT_RULES_VERSION = 1
"""The version of the segmentation and normalisation rules; a store built with another must be rebuilt."""  # noqa: E501

_UNICODE61 = Unicode61Tokenizer()
_SETTLE_ROUNDS = 4
_CACHE_SIZE = 1 << 16

# Characters whose tokens this module changes: Arabic script and its presentation forms,
# Hangul jamo, Thai, Lao, CJK punctuation to compatibility ideographs, half/full width.
_SPECIAL = re.compile(
    "[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\u0e00-\u0eff\u1100-\u11ff"
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3040-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufb50-\ufdff\ufe70-\ufeff\uff00-\uffef"
    "\U00020000-\U0003134f]"
)


def _fold_table() -> dict[int, int | None]:
    table: dict[int, int | None] = {}
    for first, last, step, value in FOLD_RUNS:
        for cp in range(first, last + 1, abs(step)):
            target = value if step < 0 else cp + value
            table[cp] = target or None
    return table


_FOLD = _fold_table()


def _separating_marks() -> frozenset[str]:
    """Combining marks of Arabic, Thai and Lao that ``unicode61`` takes for separators."""
    marks = set()
    for first, last in ((0x0600, 0x06FF), (0x0750, 0x077F), (0x08A0, 0x08FF), (0x0E00, 0x0EFF)):
        for code in range(first, last + 1):
            char = chr(code)
            if unicodedata.category(char)[0] == "M" and len(_UNICODE61.words(f"a{char}a")) == 2:
                marks.add(char)
    return frozenset(marks)


_MARKS = _separating_marks()
_DROP_MARKS = dict.fromkeys(map(ord, _MARKS))


@lru_cache(maxsize=_CACHE_SIZE)
def _settle(word: str) -> tuple[str, ...]:
    """Return the words ``unicode61`` gives ``word``, repeated until each is its own token.

    A normalised word can hold a separator (NFKC of ``½`` holds ``⁄``) or fold again, so it
    is re-tokenized until every word gives itself back: that is what keeps
    :func:`shadow_text` and FTS5 in step.
    """
    words: tuple[str, ...] = (word,)
    for _ in range(_SETTLE_ROUNDS):
        settled = tuple(w for part in words for w in _UNICODE61.words(part))
        if settled == words:
            return words
        words = settled
    return words


def _normalize(text: str) -> str:
    """NFKC, Arabic-script normalisation, then ``unicode61`` folding of one piece of a token."""
    text = normalize_arabic(unicodedata.normalize("NFKC", text)).translate(_DROP_MARKS)
    return strip_article(text.translate(_FOLD))


def _units(span: str, offset: int) -> list[tuple[int, int, int]]:
    """Split ``span`` into (class, start, end) units: a character with its combining marks."""
    units: list[tuple[int, int, int]] = []
    for index, char in enumerate(span):
        kind = char_class(char)
        if units and unicodedata.category(char)[0] == "M":
            last_kind, last_start, _ = units[-1]
            units[-1] = (last_kind, last_start, offset + index + 1)
            continue
        units.append((kind, offset + index, offset + index + 1))
    return units


def _runs(units: list[tuple[int, int, int]]) -> list[tuple[int, list[tuple[int, int]]]]:
    """Group consecutive units of one class."""
    runs: list[tuple[int, list[tuple[int, int]]]] = []
    for kind, start, end in units:
        if runs and runs[-1][0] == kind:
            runs[-1][1].append((start, end))
        else:
            runs.append((kind, [(start, end)]))
    return runs


def _ngrams(source: str, spans: list[tuple[int, int]]) -> list[tuple[str, int, int]]:
    if len(spans) == 1:
        start, end = spans[0]
        return [(source[start:end], start, end)]
    return [(source[a_start:b_end], a_start, b_end) for (a_start, _), (_, b_end) in pairwise(spans)]


def _run_pieces(source: str, kind: int, spans: list[tuple[int, int]]) -> list[tuple[str, int, int]]:
    if kind == OTHER:
        start, end = spans[0][0], spans[-1][1]
        return [(source[start:end], start, end)]
    if kind == HANGUL:
        spans = spans[: len(spans) - strip_particle(source[spans[0][0] : spans[-1][1]])]
    return _ngrams(source, spans)


@lru_cache(maxsize=_CACHE_SIZE)
def _split_span(span: str) -> tuple[tuple[str, int, int], ...]:
    """The words of one ``unicode61`` token's span with offsets into it; cached, as words recur."""
    pieces: list[tuple[str, int, int]] = []
    for kind, spans in _runs(_units(span, 0)):
        for piece, start, end in _run_pieces(span, kind, spans):
            pieces.extend((word, start, end) for word in _settle(_normalize(piece)))
    return tuple(pieces)


# Han and Kana letters only, none of them a compatibility or half-width form: the span is
# one run whose bigrams need no normalisation beyond unicode61's folding.
_PURE_CJK = re.compile("[\u3041-\u3096\u30a1-\u30fa\u30fc\u3400-\u4dbf\u4e00-\u9fff]+")
_new_token = partial(tuple.__new__, Token)


def _split_token(source: str, start: int, end: int) -> list[Token]:
    span = source[start:end]
    if _PURE_CJK.fullmatch(span) is not None:
        folded = span.translate(_FOLD)
        if len(folded) == len(span):
            if len(span) == 1:
                return [_new_token((folded, start, end))]
            return [
                _new_token((folded[i : i + 2], start + i, start + i + 2))
                for i in range(len(span) - 1)
            ]
    return [
        _new_token((word, start + first, start + last)) for word, first, last in _split_span(span)
    ]


def _join_across_marks(text: str, tokens: list[Token]) -> list[Token]:
    """Join tokens that only marks ``unicode61`` separates (harakat, Thai tone marks) split."""
    joined: list[Token] = []
    for token in tokens:
        if joined:
            gap = text[joined[-1].end : token.start]
            if gap and all(char in _MARKS for char in gap):
                joined[-1] = Token(joined[-1].text + token.text, joined[-1].start, token.end)
                continue
        joined.append(token)
    return joined


@dataclass(frozen=True)
class MultiscriptTokenizer:
    """``unicode61`` tokens, with CJK, Hangul, Thai/Lao and Arabic-script words made findable.

    Text without a character of those scripts (or of half-width, full-width and
    presentation forms) gives exactly the tokens of
    :class:`~sci_etl_core.search.tokenize.Unicode61Tokenizer`. Every other token is cut
    into runs of one script and each run handled as the module describes; the tokens
    keep their character offsets into ``text``, a bigram spanning its two characters.
    Queries must be tokenized by the same tokenizer. It is an option: the stores and the
    seed API keep ``unicode61`` as their default.
    """

    def tokens(self, text: str) -> list[Token]:
        """Return the tokens of ``text``, with character offsets into ``text``."""
        base = _UNICODE61.tokens(text)
        if _SPECIAL.search(text) is None:
            return base
        tokens: list[Token] = []
        for token in _join_across_marks(text, base):
            if _SPECIAL.search(text, token.start, token.end) is None:
                tokens.append(token)
            else:
                tokens.extend(_split_token(text, token.start, token.end))
        return tokens

    def words(self, text: str) -> list[str]:
        """Return only the texts of the tokens of ``text``, in order."""
        if _SPECIAL.search(text) is None:
            return _UNICODE61.words(text)
        return [token.text for token in self.tokens(text)]


_TOKENIZER = MultiscriptTokenizer()


def shadow_text(text: str) -> str:
    """Return the words of :class:`MultiscriptTokenizer` joined by spaces, for FTS5 to index.

    FTS5's ``unicode61 remove_diacritics 2`` tokenizer splits the result into exactly
    ``MultiscriptTokenizer().words(text)``. Text without a character of the scripts the
    tokenizer handles is returned unchanged, so an English document costs nothing.
    """
    if _SPECIAL.search(text) is None:
        return text
    return " ".join(_TOKENIZER.words(text))


def _shadow_word(word: str) -> str:
    """A query word as a shadow index holds it; a word that gives no token keeps its text."""
    return shadow_text(word).strip() or word


def _shadow_leaf(node: Term | Phrase) -> Term | Phrase:
    if isinstance(node, Term):
        return Term(_shadow_word(node.text), node.fields, node.prefix)
    return Phrase(tuple(_shadow_word(word) for word in node.words), node.fields)


def shadow_query(node: Node) -> Node:
    """Return ``node`` with every word written as :func:`shadow_text`, for an index of shadow text.

    FTS5 reads a quoted word of several tokens as a phrase, so ``研究方法`` (the
    bigrams ``研究 究方 方法``) finds the consecutive bigrams of the indexed text, which is
    what :class:`MultiscriptTokenizer` matches in Python. A word with no token (a lone
    tatweel) keeps its text, which matches nothing either way.
    """
    if isinstance(node, Term | Phrase):
        return _shadow_leaf(node)
    if isinstance(node, Near):
        operands = tuple(_shadow_leaf(operand) for operand in node.operands)
        return Near(operands, node.distance, node.fields)
    if isinstance(node, Not):
        return Not(shadow_query(node.operand))
    if isinstance(node, And):
        return And(tuple(shadow_query(operand) for operand in node.operands))
    return Or(tuple(shadow_query(operand) for operand in node.operands))
