"""Porter stemming as SQLite FTS5 does it: a pure-Python twin of its ``porter`` tokenizer.

FTS5 configured with ``tokenize = "porter unicode61 remove_diacritics 2"``
(:data:`FTS5_PORTER_TOKENIZE`) splits and folds text with ``unicode61`` and then
replaces every token with its Porter stem, in documents and in queries alike.
:func:`porter_stem` computes the stem of one folded token exactly as FTS5 does, and
:class:`PorterTokenizer` applies it to the tokens of any :class:`Tokenizer`, by default
:class:`~sci_etl_core.search.tokenize.Unicode61Tokenizer`, so the in-memory store and
query evaluation can agree with a stemming SQLite store.

The rules are M. F. Porter's, "An algorithm for suffix stripping", *Program* 14(3),
1980, with the behaviour of FTS5 that the published algorithm leaves open or that FTS5
chooses differently, all found by comparing with FTS5 itself and described in
:func:`porter_stem`. Every rule is checked against FTS5 by the tests.

A stemmed query behaves as FTS5's does: the text of a query term is stemmed with the
same tokenizer, a prefix term included, so ``running*`` searches for stems starting
with ``run`` (``runner``, ``runs``) and ``photometry*`` for stems starting with
``photometri``, which ``photometric`` (stem ``photometr``) is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial

from sci_etl_core.search.tokenize import Token, Tokenizer, Unicode61Tokenizer

__all__ = ["FTS5_PORTER_TOKENIZE", "PorterTokenizer", "porter_stem"]

FTS5_PORTER_TOKENIZE = "porter unicode61 remove_diacritics 2"
"""The FTS5 ``tokenize`` argument that :class:`PorterTokenizer` reproduces."""

_MIN_BYTES = 3  # FTS5 stems a token of 3 to 64 bytes of UTF-8 and passes others through
_MAX_BYTES = 64
_CACHE_SIZE = 1 << 16

# Every byte of the word is one character of a "byte string" (UTF-8 decoded as Latin-1),
# so lengths, suffixes and letter classes are those of the bytes FTS5 sees.
_SHAPE = str.maketrans({chr(b): "v" if chr(b) in "aeiou" else "c" for b in range(256)})

_STEP1A = {"sses": "ss", "ies": "i", "ss": "ss", "s": ""}
_STEP1B = {"eed": "ee", "ed": "", "ing": ""}
_STEP2 = {
    "ational": "ate",
    "tional": "tion",
    "enci": "ence",
    "anci": "ance",
    "izer": "ize",
    "bli": "ble",
    "alli": "al",
    "entli": "ent",
    "eli": "e",
    "ousli": "ous",
    "ization": "ize",
    "ation": "ate",
    "ator": "ate",
    "alism": "al",
    "iveness": "ive",
    "fulness": "ful",
    "ousness": "ous",
    "aliti": "al",
    "iviti": "ive",
    "biliti": "ble",
    "logi": "log",
}
_STEP3 = {
    "icate": "ic",
    "ative": "",
    "alize": "al",
    "iciti": "ic",
    "ical": "ic",
    "ful": "",
    "ness": "",
}
_STEP4 = dict.fromkeys(
    (
        "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
        "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
    ),
    "",
)  # fmt: skip


def _lengths(table: dict[str, str]) -> tuple[int, ...]:
    return tuple(sorted({len(suffix) for suffix in table}, reverse=True))


_STEPS: tuple[tuple[dict[str, str], tuple[int, ...]], ...] = tuple(
    (table, _lengths(table)) for table in (_STEP1A, _STEP1B, _STEP2, _STEP3, _STEP4)
)
_S1A, _S1B, _S2, _S3, _S4 = _STEPS


def _suffix(word: str, step: tuple[dict[str, str], tuple[int, ...]]) -> str | None:
    """The longest suffix of ``step`` that ends ``word`` and leaves at least one byte before it."""
    table, lengths = step
    size = len(word)
    for length in lengths:
        if length < size:
            tail = word[-length:]
            if tail in table:
                return tail
    return None


def _shape(word: str) -> str:
    """One letter per byte: ``v`` for a vowel, ``c`` for a consonant."""
    shape = word.translate(_SHAPE)
    if "y" not in word:
        return shape
    letters = list(shape)
    for i in range(1, len(word)):
        if word[i] == "y" and letters[i - 1] == "c":
            letters[i] = "v"
    return "".join(letters)


def _measure(stem: str) -> int:
    """Porter's *m*: how many times a vowel is followed by a consonant in ``stem``."""
    return _shape(stem).count("vc")


def _has_vowel(stem: str) -> bool:
    return "v" in _shape(stem)


def _ends_cvc(stem: str) -> bool:
    """Porter's ``*o``: consonant, vowel, consonant, the last not ``w``, ``x`` or ``y``."""
    return len(stem) >= 3 and stem[-1] not in "wxy" and _shape(stem).endswith("cvc")


def _step1b(word: str) -> str:
    suffix = _suffix(word, _S1B)
    if suffix is None:
        return word
    stem = word[: -len(suffix)]
    if suffix == "eed":
        return stem + "ee" if _measure(stem) > 0 else word
    if not _has_vowel(stem):
        return word
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    last = stem[-1]
    if len(stem) >= 2 and stem[-2] == last and last not in "aeioulsz":
        return stem[:-1]
    if _measure(stem) == 1 and _ends_cvc(stem):
        return stem + "e"
    return stem


def _replace(word: str, step: tuple[dict[str, str], tuple[int, ...]], minimum: int) -> str:
    suffix = _suffix(word, step)
    if suffix is None:
        return word
    stem = word[: -len(suffix)]
    if _measure(stem) < minimum:
        return word
    if suffix == "ion" and stem[-1] not in "st":
        return word
    return stem + step[0][suffix]


def _stem(word: str) -> str:
    """Stem a byte string (one character per UTF-8 byte) of 3 to 64 bytes."""
    suffix = _suffix(word, _S1A)
    if suffix is not None:
        word = word[: -len(suffix)] + _STEP1A[suffix]
    word = _step1b(word)
    if word[-1] == "y" and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _replace(word, _S2, 1)
    word = _replace(word, _S3, 1)
    word = _replace(word, _S4, 2)
    if word[-1] == "e":
        stem = word[:-1]
        measure = _measure(stem)
        if measure > 1 or (measure == 1 and not _ends_cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


@lru_cache(maxsize=_CACHE_SIZE)
def porter_stem(word: str) -> str:
    """Return the stem FTS5's ``porter`` tokenizer gives the folded token ``word``.

    ``word`` is one token as ``unicode61`` produces it (see
    :class:`~sci_etl_core.search.tokenize.Unicode61Tokenizer`), and the result is
    the term FTS5 indexes or searches for in its place. The algorithm is Porter's
    five steps of 1980, applied the way FTS5 applies them:

    - **Bytes.** The word is stemmed as its UTF-8 bytes. A word shorter than 3
      bytes or longer than 64 bytes is returned unchanged: ``as`` stays ``as``,
      but ``жs`` (3 bytes) gives ``ж``; 63 ``x`` and an ``s`` (64 bytes) lose the
      ``s``, 64 ``x`` and an ``s`` keep it. Only the ASCII bytes ``a e i o u``
      are vowels, and ``y`` when it follows a consonant and is not the first
      byte. Every other byte is a consonant: digits, and each byte of a
      non-ASCII character, so ``жys`` gives ``жy`` (that ``y`` is a vowel) and
      ``straße`` gives ``straß``.
    - **Suffixes.** In each step the longest listed suffix that ends the word
      and leaves at least one byte before it is chosen, and only its condition
      is tested. When it fails the step changes nothing, even if a shorter
      suffix would apply (``feed`` stays ``feed``, ``ablement`` stays
      ``ablement``). A suffix that is the whole word is skipped, so a shorter one
      is tried: ``ies`` gives ``ie``, ``sses`` gives ``sse``, ``eed`` gives ``e``.
    - **Step 1b.** After ``ed`` or ``ing`` is removed, a stem ending in a
      doubled byte other than ``a e i o u l s z`` loses one. ``y`` counts as a
      consonant for this test only, so ``ayyed`` gives ``ai`` (through ``ay``;
      Porter's definition would keep ``ayy`` and give ``ayi``). Because the test
      compares bytes, it can remove the last byte of a character whose two final
      UTF-8 bytes are equal (``₂`` is ``e2 82 82``): ``ba₂ing`` gives the bytes
      ``ba\\xe2\\x82``, which are not valid UTF-8. Such a stem is returned
      decoded with ``surrogateescape``, so
      ``porter_stem(word).encode("utf-8", "surrogateescape")`` is always exactly
      the term FTS5 stores.
    - **Step 2** has the two rules Porter revised after 1980: ``bli`` becomes
      ``ble`` in place of ``abli`` becoming ``able``, and ``logi`` becomes
      ``log`` (``sensibli`` gives ``sensibl``, ``archaeology`` ``archaeolog``).

    A word holding a surrogate code point, which SQLite cannot receive, is
    returned unchanged. Results are cached, as a corpus repeats its words.
    """
    if word.isascii():
        if _MIN_BYTES <= len(word) <= _MAX_BYTES:
            return _stem(word)
        return word
    try:
        data = word.encode("utf-8")
    except UnicodeEncodeError:
        return word
    if not _MIN_BYTES <= len(data) <= _MAX_BYTES:
        return word
    stemmed = _stem(data.decode("latin-1")).encode("latin-1")
    return stemmed.decode("utf-8", "surrogateescape")


_new_token = partial(tuple.__new__, Token)


@dataclass(frozen=True, init=False)
class PorterTokenizer:
    """Reproduce FTS5's ``porter unicode61 remove_diacritics 2`` tokenizer in pure Python.

    The tokens are those of ``base`` (by default
    :class:`~sci_etl_core.search.tokenize.Unicode61Tokenizer`, which makes this
    the twin of :data:`FTS5_PORTER_TOKENIZE`), each with its text replaced by its
    :func:`porter_stem` and its character offsets kept, so ``source[start:end]``
    is still the original spelling. ``Galaxies running`` gives ``galaxi`` and
    ``run``.

    Queries must be tokenized with the same tokenizer, as FTS5 does: pass it as
    ``tokenizer`` to :func:`~sci_etl_core.search.evaluate.matches`. A prefix term
    is stemmed before it is matched as a prefix, as FTS5 stems it.

    One difference with FTS5 is known, and only for a prefix term whose stem ends
    in a character split by :func:`porter_stem` (``a丸ed*`` searches for the
    bytes ``a e4 b8``). FTS5 matches such a prefix byte by byte, so it finds
    ``a丸`` and ``a丸丸``; the surrogate-escaped stem is no string prefix of them,
    so :func:`~sci_etl_core.search.evaluate.matches` finds neither.

    Raises:
        TypeError: ``base`` is not a :class:`Tokenizer`.
    """

    base: Tokenizer

    def __init__(self, base: Tokenizer | None = None) -> None:
        if base is None:
            base = Unicode61Tokenizer()
        elif not isinstance(base, Tokenizer):
            raise TypeError(f"PorterTokenizer base must be a Tokenizer, not {type(base).__name__}")
        object.__setattr__(self, "base", base)

    def tokens(self, text: str) -> list[Token]:
        """Return the tokens of ``text``, stemmed, with the base tokenizer's character offsets."""
        stem = porter_stem
        return [_new_token((stem(word), start, end)) for word, start, end in self.base.tokens(text)]

    def words(self, text: str) -> list[str]:
        """Return only the stems of the tokens of ``text``, in order."""
        base = self.base
        if isinstance(base, Unicode61Tokenizer):
            return list(map(porter_stem, base.words(text)))
        return [porter_stem(token.text) for token in base.tokens(text)]
