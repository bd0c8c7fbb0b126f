"""Split query text into located lexemes for :mod:`sci_etl_core.search.parser`.

Internal: the lexer knows the surface syntax (quotes, parentheses, operators, field
scopes, prefix stars, NEAR groups) but builds no AST nodes. Every fault raises
:class:`~sci_etl_core.exceptions.SearchQueryError` with its position and token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search.query import FIELDS

MAX_NEAR_DISTANCE = 1_000_000_000
"""The largest NEAR distance the parser accepts, well inside FTS5's integer range."""

_SCOPE_NAMES = re.compile(r"[A-Za-z][A-Za-z,]*")
_DISTANCE = re.compile(r"\s*(\d+)\s*")


class Kind(Enum):
    """What a lexeme is."""

    WORD = "word"
    PHRASE = "phrase"
    LPAREN = "("
    RPAREN = ")"
    AND = "AND"
    OR = "OR"
    NOT = "NOT"
    SCOPE = "scope"
    NEAR = "NEAR"


@dataclass(frozen=True)
class NearOperand:
    """A word or quoted phrase inside a NEAR group."""

    text: str
    position: int
    raw: str
    quoted: bool
    prefix: bool = False


@dataclass(frozen=True)
class Lexeme:
    """One located piece of query text.

    ``raw`` is the text as written, starting at ``position``. ``text`` is a word's stem
    (without its ``*``) or a phrase's content. ``fields`` belongs to a scope, and
    ``operands``/``distance`` to a NEAR group.
    """

    kind: Kind
    position: int
    raw: str
    text: str = ""
    prefix: bool = False
    fields: tuple[str, ...] = ()
    operands: tuple[NearOperand, ...] = ()
    distance: int | None = None


def _fail(message: str, position: int, token: str) -> SearchQueryError:
    return SearchQueryError(message, position=position, token=token)


def _word_end(text: str, start: int, stops: str = '()"') -> int:
    end = start
    while end < len(text):
        ch = text[end]
        if ch.isspace() or ch in stops or text.startswith(("&&", "||"), end):
            break
        end += 1
    return end


def _scope_fields(word: str, position: int) -> tuple[str, ...] | None:
    """Return the fields of a ``name,name:`` prefix of ``word``, or None if it has none."""
    colon = word.find(":")
    if colon <= 0 or not _SCOPE_NAMES.fullmatch(word[:colon]):
        return None
    fields: list[str] = []
    offset = position
    for name in word[:colon].split(","):
        folded = name.lower()
        if folded not in FIELDS:
            what = f"unknown field {name!r}" if name else "empty field name"
            raise _fail(
                f"Field scope names an {what}; fields are {', '.join(FIELDS)}",
                offset,
                name or ",",
            )
        if folded in fields:
            raise _fail(f"Field scope names {folded!r} twice", offset, name)
        fields.append(folded)
        offset += len(name) + 1
    return tuple(fields)


def _stem(word: str, position: int) -> tuple[str, bool]:
    """Split a bare word into its stem and whether it ends in a prefix ``*``."""
    star = word.find("*")
    if star < 0:
        return word, False
    if star != len(word) - 1 or star == 0:
        raise _fail(
            "'*' marks a prefix search and must directly end one word", position + star, "*"
        )
    return word[:-1], True


def _near_group(text: str, position: int) -> tuple[Lexeme, int]:
    """Lex ``NEAR(...)`` starting at ``position``; return it and the offset after ``)``."""
    operands: list[NearOperand] = []
    distance: int | None = None
    i = position + len("NEAR(")
    while True:
        if i >= len(text):
            raise _fail("NEAR( is never closed with ')'", position, "NEAR(")
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == ")":
            i += 1
            break
        elif ch == '"':
            close = text.find('"', i + 1)
            if close < 0:
                raise _fail("Quoted phrase is never closed", i, text[i:])
            operands.append(NearOperand(text[i + 1 : close], i, text[i : close + 1], True))
            i = close + 1
            if i < len(text) and text[i] == "*":
                raise _fail("'*' marks a prefix search and must directly end one word", i, "*")
        elif ch == ",":
            match = _DISTANCE.match(text, i + 1)
            after = match.end() if match else i + 1
            if match is None or after >= len(text) or text[after] != ")":
                raise _fail("NEAR distance must be a whole number before ')'", i, ",")
            distance = int(match.group(1))
            if distance > MAX_NEAR_DISTANCE:
                raise _fail(
                    f"NEAR distance must be at most {MAX_NEAR_DISTANCE}",
                    match.start(1),
                    match.group(1),
                )
            i = after + 1
            break
        elif ch == "(":
            raise _fail("A NEAR group cannot hold parentheses", i, "(")
        else:
            end = _word_end(text, i, '(),"')
            if end == i:  # an operator such as && or ||
                raise _fail("A NEAR group cannot hold operators", i, text[i : i + 2])
            word = text[i:end]
            if word in ("AND", "OR", "NOT") or word.startswith("-"):
                raise _fail("A NEAR group cannot hold operators such as -, NOT or OR", i, word)
            if _scope_fields(word, i) is not None:
                raise _fail("Nothing inside a NEAR group can be scoped; scope the group", i, word)
            stem, prefix = _stem(word, i)
            operands.append(NearOperand(stem, i, word, False, prefix))
            i = end
    raw = text[position:i]
    return Lexeme(Kind.NEAR, position, raw, operands=tuple(operands), distance=distance), i


def lex(text: str) -> list[Lexeme]:
    """Split ``text`` into lexemes, raising a located error on any malformed piece."""
    out: list[Lexeme] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in "()":
            out.append(Lexeme(Kind.LPAREN if ch == "(" else Kind.RPAREN, i, ch))
            i += 1
        elif ch == '"':
            close = text.find('"', i + 1)
            if close < 0:
                raise _fail("Quoted phrase is never closed", i, text[i:])
            out.append(Lexeme(Kind.PHRASE, i, text[i : close + 1], text[i + 1 : close]))
            i = close + 1
            if i < n and text[i] == "*":
                raise _fail("'*' marks a prefix search and must directly end one word", i, "*")
        elif text.startswith(("&&", "||"), i):
            out.append(Lexeme(Kind.AND if ch == "&" else Kind.OR, i, text[i : i + 2]))
            i += 2
        elif ch == "-":
            if i + 1 >= n or text[i + 1].isspace() or text[i + 1] == ")":
                raise _fail("'-' must directly precede what it negates", i, "-")
            out.append(Lexeme(Kind.NOT, i, "-"))
            i += 1
        else:
            i = _lex_word(text, i, out)
    return out


def _lex_word(text: str, i: int, out: list[Lexeme]) -> int:
    end = _word_end(text, i)
    word = text[i:end]
    if word in ("AND", "OR", "NOT"):
        out.append(Lexeme(Kind[word], i, word))
        return end
    if word == "NEAR" and end < len(text) and text[end] == "(":
        lexeme, after = _near_group(text, i)
        out.append(lexeme)
        return after
    fields = _scope_fields(word, i)
    if fields is not None:
        after = i + word.index(":") + 1
        if after >= len(text) or text[after].isspace() or text[after] in "()":
            raise _fail(
                "A field scope must directly precede a word, phrase or NEAR group",
                i,
                text[i:after],
            )
        out.append(Lexeme(Kind.SCOPE, i, text[i:after], fields=fields))
        return after
    stem, prefix = _stem(word, i)
    out.append(Lexeme(Kind.WORD, i, word, stem, prefix))
    return end
