"""The tokenizer of the search core: a pure-Python twin of FTS5's ``unicode61`` tokenizer.

:class:`Unicode61Tokenizer` splits and folds text exactly as SQLite FTS5 configured with
``tokenize = "unicode61 remove_diacritics 2"`` does, so an in-memory store, query
evaluation, and snippet highlighting agree with what the SQLite store indexes. Its
character tables (:mod:`sci_etl_core.search._unicode_tables`) are generated from FTS5
itself by ``scripts/generate_unicode_tables.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from itertools import accumulate
from typing import NamedTuple, Protocol, runtime_checkable

from sci_etl_core.search import _unicode_tables as _tables

__all__ = [
    "FTS5_MAX_TOKEN_BYTES",
    "SURROGATE_CODE_POINTS",
    "Token",
    "Tokenizer",
    "Unicode61Tokenizer",
]

SURROGATE_CODE_POINTS = range(55296, 57344)
"""Code points :class:`Unicode61Tokenizer` treats as separators; FTS5 cannot receive them, so parity is unchecked."""  # noqa: E501

FTS5_MAX_TOKEN_BYTES = 32768
"""The UTF-8 length at which FTS5 truncates an indexed term; :class:`Unicode61Tokenizer` never truncates."""  # noqa: E501


class _TokenFields(NamedTuple):
    text: str
    start: int
    end: int


class Token(_TokenFields):
    """One token of a text: its folded ``text`` and where it came from.

    ``start`` and ``end`` are character offsets into the Python string that was tokenized,
    half-open, so ``source[start:end]`` is the original spelling of the token. A token is
    an immutable named tuple rather than a dataclass because a tokenizer builds one per
    word of every indexed document; the constructor still validates its fields.

    Raises:
        ValueError: ``start`` is negative or ``end`` is before ``start``.
        TypeError: ``text`` is not a string or an offset is not an integer.
    """

    __slots__ = ()

    def __new__(cls, text: str, start: int, end: int) -> Token:
        if not isinstance(text, str):
            raise TypeError(f"Token text must be a string, not {type(text).__name__}")
        for name, value in (("start", start), ("end", end)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"Token {name} must be an integer, not {type(value).__name__}")
        if start < 0:
            raise ValueError(f"Token start must be >= 0, got {start}")
        if end < start:
            raise ValueError(f"Token end ({end}) must not be before its start ({start})")
        return super().__new__(cls, text, start, end)


_new_token = partial(tuple.__new__, Token)


@runtime_checkable
class Tokenizer(Protocol):
    """Splits text into folded tokens with their character offsets."""

    def tokens(self, text: str) -> list[Token]:
        """Return the tokens of ``text`` in order."""
        ...


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    parts = []
    for first, last in ranges:
        lo = re.escape(chr(first))
        parts.append(lo if first == last else f"{lo}-{re.escape(chr(last))}")
    return "".join(parts)


def _fold_table() -> dict[int, int | None]:
    table: dict[int, int | None] = {}
    for first, last, step, value in _tables.FOLD_RUNS:
        for cp in range(first, last + 1, abs(step)):
            target = value if step < 0 else cp + value
            table[cp] = target or None
    return table


def _token_pattern(limit: int) -> re.Pattern[str]:
    starters = tuple((lo, min(hi, limit)) for lo, hi in _tables.TOKEN_RANGES if lo <= limit)
    continuers = tuple((lo, min(hi, limit)) for lo, hi in _tables.CONTINUE_RANGES if lo <= limit)
    token = _char_class(starters)
    return re.compile(f"([{token}][{token}{_char_class(continuers)}]*)")


# The regex engine tests a character class covering the whole BMP in constant time, but
# walks the ranges beyond it one by one; text without astral characters (nearly all text)
# is split with a class clipped to the BMP, which is several times faster.
_SPLIT_ALL = _token_pattern(0x10FFFF)
_SPLIT_BMP = _token_pattern(0xFFFF)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_FOLD = _fold_table()


def _splitter(text: str) -> re.Pattern[str]:
    if text.isascii() or _ASTRAL.search(text) is None:
        return _SPLIT_BMP
    return _SPLIT_ALL


@dataclass(frozen=True)
class Unicode61Tokenizer:
    """Reproduce FTS5's ``unicode61 remove_diacritics 2`` tokenizer in pure Python.

    A token is a maximal run of letters, numbers, and private-use characters as
    Unicode 6.1 classifies them; every other character separates tokens, so
    ``H-alpha`` gives ``h`` and ``alpha``. Each character is case-folded one to
    one, never with :meth:`str.casefold`, and loses its diacritic: ``Müller``
    gives ``muller`` while ``Straße`` stays ``straße``, exactly as FTS5 indexes
    them. A run whose characters all fold away, such as a lone combining accent,
    gives no token. As in FTS5, code points that Unicode 6.1 leaves unassigned count
    as token characters, and a combining diacritic continues a token but never starts
    one.

    The character tables come from FTS5 itself and are checked against it for
    every code point. Two differences are known:

    - Surrogate code points (:data:`SURROGATE_CODE_POINTS`) are separators here.
      SQLite cannot receive them, so parity cannot be checked.
    - FTS5 truncates an indexed term to :data:`FTS5_MAX_TOKEN_BYTES` bytes of
      UTF-8. This tokenizer never truncates.
    """

    def tokens(self, text: str) -> list[Token]:
        """Return the tokens of ``text``, folded, with character offsets into ``text``."""
        parts = _splitter(text).split(text)
        if len(parts) == 1:
            return []
        bounds = list(accumulate(map(len, parts)))
        folded = "\0".join(parts[1::2]).translate(_FOLD).split("\0")
        tokens = list(map(_new_token, zip(folded, bounds[0:-1:2], bounds[1::2], strict=True)))
        if "" in folded:
            tokens = [token for token in tokens if token.text]
        return tokens

    def words(self, text: str) -> list[str]:
        """Return only the folded texts of the tokens of ``text``, in order."""
        found = _splitter(text).findall(text)
        if not found:
            return []
        words = "\0".join(found).translate(_FOLD).split("\0")
        if "" in words:
            words = [word for word in words if word]
        return words
