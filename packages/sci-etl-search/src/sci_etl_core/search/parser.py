"""Parse Boolean query text into a normalized AST.

The grammar, with ``NOT`` binding tightest, then ``AND``, then ``OR``::

    query    := or
    or       := and (("OR" | "||") and)*
    and      := unary (("AND" | "&&")? unary)*
    unary    := ("NOT" | "-")* primary
    primary  := scope? (word | "phrase" | NEAR(...)) | "(" or ")"

Only parentheses recurse, at most :data:`MAX_GROUP_DEPTH` deep; operator chains of
any length are parsed by loops.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Sequence

from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search._lexer import Kind, Lexeme, NearOperand, lex
from sci_etl_core.search.compile_fts5 import is_rankable, require_rankable
from sci_etl_core.search.query import (
    FIELDS,
    NEAR_DISTANCE,
    And,
    Near,
    Node,
    Not,
    Or,
    Phrase,
    Term,
    normalize,
    semantic_text,
)
from sci_etl_core.search.tokenize import Token, Unicode61Tokenizer

__all__ = ["MAX_GROUP_DEPTH", "parse_query", "parse_ranked_query", "parse_semantic_query"]

MAX_GROUP_DEPTH = 32
"""How deeply :func:`parse_query` lets parentheses nest, which bounds the parser's recursion."""

MAX_QUERY_TERMS = 10_000
"""How many words, phrases and ``NEAR`` groups one query may hold (each is a matching
pass over the candidates, so an unbounded query is an unbounded search)."""

_TOKENIZER = Unicode61Tokenizer()
_OPERAND_START = frozenset({Kind.WORD, Kind.PHRASE, Kind.LPAREN, Kind.NOT, Kind.SCOPE, Kind.NEAR})
_LEAF = frozenset({Kind.WORD, Kind.PHRASE, Kind.NEAR})


def _leaf(text: str, prefix: bool, fields: tuple[str, ...], at: int, raw: str) -> Term | Phrase:
    tokens = _TOKENIZER.tokens(text)
    if not tokens:
        raise SearchQueryError(f"{raw!r} holds no searchable word", position=at, token=raw)
    words = tuple(token.text for token in tokens)
    if prefix:
        if tokens[-1].end != len(text):
            raise SearchQueryError(
                "'*' marks a prefix search and must directly follow a word",
                position=at + len(text),
                token="*",
            )
        return Term(" ".join(words), fields, prefix=True)
    if len(words) == 1:
        return Term(words[0], fields)
    joined = _joined_by_marks(text, tokens)
    if joined is not None:
        return Term(joined, fields)
    return Phrase(words, fields)


def _joined_by_marks(text: str, tokens: list[Token]) -> str | None:
    """The folded word, marks kept, when only combining marks split it (Thai, Arabic harakat).

    ``unicode61`` takes the tone and vowel marks of Thai and Lao and the harakat of Arabic
    for separators, so ``วิจัย`` gives three tokens. As one term it matches exactly what
    the phrase of its parts matches under ``unicode61``, and a tokenizer that segments
    those scripts (:class:`~sci_etl_core.search.multiscript.MultiscriptTokenizer`) still
    sees one word. ``None`` when anything but combining marks separates the tokens.
    """
    parts = [tokens[0].text]
    for before, token in itertools.pairwise(tokens):
        gap = text[before.end : token.start]
        if not all(unicodedata.category(char).startswith("M") for char in gap):
            return None
        parts.extend((gap, token.text))
    return "".join(parts)


def _near_operand(operand: NearOperand) -> Term | Phrase:
    return _leaf(operand.text, operand.prefix, (), operand.position, operand.raw)


class _Parser:
    def __init__(self, text: str, default_fields: tuple[str, ...]) -> None:
        self.text = text
        self.lexemes = lex(text)
        self.leaves = 0
        self.index = 0
        self.default_fields = default_fields

    def peek(self) -> Lexeme | None:
        return self.lexemes[self.index] if self.index < len(self.lexemes) else None

    def take(self) -> Lexeme:
        lexeme = self.lexemes[self.index]
        self.index += 1
        return lexeme

    def expect_operand(self, after: Lexeme) -> None:
        following = self.peek()
        if following is None or following.kind not in _OPERAND_START:
            raise SearchQueryError(
                f"{after.raw!r} needs a word, phrase or group after it",
                position=after.position,
                token=after.raw,
            )

    def parse(self) -> Node:
        if not self.lexemes:
            raise SearchQueryError("The query is empty")
        node = self.parse_or(0)
        extra = self.peek()
        if extra is not None:
            if extra.kind is Kind.RPAREN:
                raise SearchQueryError(
                    "')' has no matching '('", position=extra.position, token=")"
                )
            raise SearchQueryError(
                f"Unexpected {extra.raw!r}", position=extra.position, token=extra.raw
            )
        return node

    def parse_or(self, depth: int) -> Node:
        operands = [self.parse_and(depth)]
        while (lexeme := self.peek()) is not None and lexeme.kind is Kind.OR:
            self.take()
            self.expect_operand(lexeme)
            operands.append(self.parse_and(depth))
        return operands[0] if len(operands) == 1 else Or(tuple(operands))

    def parse_and(self, depth: int) -> Node:
        operands = [self.parse_unary(depth)]
        while (lexeme := self.peek()) is not None:
            if lexeme.kind is Kind.AND:
                self.take()
                self.expect_operand(lexeme)
            elif lexeme.kind not in _OPERAND_START:
                break
            operands.append(self.parse_unary(depth))
        return operands[0] if len(operands) == 1 else And(tuple(operands))

    def parse_unary(self, depth: int) -> Node:
        negations = 0
        while (lexeme := self.peek()) is not None and lexeme.kind is Kind.NOT:
            self.take()
            self.expect_operand(lexeme)
            negations += 1
        node = self.parse_primary(depth)
        return Not(node) if negations % 2 else node

    def parse_primary(self, depth: int) -> Node:
        lexeme = self.peek()
        if lexeme is None:
            raise SearchQueryError(
                "The query ends where a word was expected", position=len(self.text)
            )
        if lexeme.kind in (Kind.AND, Kind.OR):
            raise SearchQueryError(
                f"{lexeme.raw!r} needs a word, phrase or group before it",
                position=lexeme.position,
                token=lexeme.raw,
            )
        if lexeme.kind is Kind.RPAREN:
            raise SearchQueryError("')' has no matching '('", position=lexeme.position, token=")")
        self.take()
        if lexeme.kind is Kind.LPAREN:
            return self.parse_group(lexeme, depth)
        fields = self.default_fields
        if lexeme.kind is Kind.SCOPE:
            target = self.peek()
            if target is None or target.kind not in _LEAF:
                raise SearchQueryError(
                    "A field scope applies to a word, phrase or NEAR group, nothing else",
                    position=lexeme.position,
                    token=lexeme.raw,
                )
            fields = lexeme.fields
            lexeme = self.take()
        return self.leaf(lexeme, fields)

    def parse_group(self, opening: Lexeme, depth: int) -> Node:
        if depth + 1 > MAX_GROUP_DEPTH:
            raise SearchQueryError(
                f"Parentheses nest deeper than {MAX_GROUP_DEPTH}",
                position=opening.position,
                token="(",
            )
        following = self.peek()
        if following is not None and following.kind is Kind.RPAREN:
            raise SearchQueryError("Empty parentheses", position=opening.position, token="()")
        node = self.parse_or(depth + 1)
        closing = self.peek()
        if closing is None or closing.kind is not Kind.RPAREN:
            raise SearchQueryError("'(' is never closed", position=opening.position, token="(")
        self.take()
        return node

    def leaf(self, lexeme: Lexeme, fields: tuple[str, ...]) -> Node:
        self.leaves += 1
        if self.leaves > MAX_QUERY_TERMS:
            raise SearchQueryError(
                f"The query holds more than {MAX_QUERY_TERMS} terms, phrases and NEAR groups",
                position=lexeme.position,
                token=lexeme.raw,
            )
        if lexeme.kind is Kind.NEAR:
            return self.near(lexeme, fields)
        return _leaf(lexeme.text, lexeme.prefix, fields, lexeme.position, lexeme.raw)

    def near(self, lexeme: Lexeme, fields: tuple[str, ...]) -> Near:
        operands = [_near_operand(operand) for operand in lexeme.operands]
        if len(operands) == 1 and isinstance(operands[0], Phrase):
            operands = [Term(word) for word in operands[0].words]
        if len(operands) < 2:
            raise SearchQueryError(
                "A NEAR group needs at least two words or phrases, or one phrase",
                position=lexeme.position,
                token=lexeme.raw,
            )
        distance = NEAR_DISTANCE if lexeme.distance is None else lexeme.distance
        return Near(tuple(operands), distance, fields)


def _default_fields(default_fields: Sequence[str]) -> tuple[str, ...]:
    if isinstance(default_fields, str):
        raise TypeError("default_fields must be a sequence of field names, not a string")
    fields = tuple(str(name).lower() for name in default_fields)
    for name in fields:
        if name not in FIELDS:
            raise ValueError(f"default_fields names unknown field {name!r}; fields are {FIELDS}")
    if len(set(fields)) != len(fields):
        raise ValueError(f"default_fields {tuple(default_fields)!r} names a field twice")
    return fields


def parse_query(text: str, *, default_fields: Sequence[str] = ()) -> Node:
    """Parse a Boolean query into a normalized AST.

    Syntax, with ``NOT`` binding tightest, then ``AND``, then ``OR``:

    - ``galaxy`` is a term, folded by :class:`Unicode61Tokenizer`. A word the
      tokenizer splits, such as ``H-alpha``, is a phrase of its parts.
    - ``"dwarf galaxy"`` is a phrase; a quoted single word is a term.
    - ``photometr*`` is a prefix term. The ``*`` must directly follow one word.
    - ``title:quasar`` and ``title,abstract:"dwarf galaxy"`` scope a term or a
      phrase to fields, named case-insensitively from :data:`FIELDS`.
    - ``NEAR(dwarf "dark matter" halo*, 5)`` matches when its terms and phrases
      all occur in one field within 5 tokens of each other, in any order
      (:class:`~sci_etl_core.search.query.Near`). The distance defaults to 10,
      as in ``NEAR(dwarf halo)``. A group holding one quoted phrase, such as
      ``NEAR("dwarf halo", 3)``, searches for its words near each other. The
      group can be scoped as a whole, as in ``title:NEAR(dwarf halo)``, but
      nothing inside it can, and it holds no operators such as ``-`` or ``OR``.
    - ``a AND b``, ``a && b``, and ``a b`` are conjunctions; ``a OR b`` and
      ``a || b`` are disjunctions; ``NOT a`` and ``-a`` are negations.
    - Parentheses group, nesting at most :data:`MAX_GROUP_DEPTH` deep.
    - A query holds at most :data:`MAX_QUERY_TERMS` words, phrases and ``NEAR`` groups.

    Operators are upper case; ``and`` is an ordinary word. A term or phrase
    without a scope gets ``default_fields``, and empty means every field.

    Parsing is pure: it runs nothing and touches no I/O.

    Raises:
        SearchQueryError: The query is empty or malformed.
    """
    if not isinstance(text, str):
        raise TypeError(f"query text must be a string, not {type(text).__name__}")
    return normalize(_Parser(text, _default_fields(default_fields)).parse())


def _first_negation(text: str) -> Lexeme | None:
    for lexeme in lex(text):
        if lexeme.kind is Kind.NOT:
            return lexeme
    return None


def parse_ranked_query(text: str, *, default_fields: Sequence[str] = ()) -> Node:
    """Parse a query for a ranked search, which needs a term that is not negated.

    This is :func:`parse_query` followed by
    :func:`~sci_etl_core.search.compile_fts5.require_rankable`, with the
    rankability error located in ``text``.

    Raises:
        SearchQueryError: The query is malformed, as for :func:`parse_query`, or
            cannot be ranked, such as a pure negation; the error points at the
            first negation.
    """
    node = parse_query(text, default_fields=default_fields)
    if not is_rankable(node):
        try:
            require_rankable(node)
        except SearchQueryError as error:
            negation = _first_negation(text)
            if negation is None:  # pragma: no cover - an unrankable query has a negation
                raise
            raise SearchQueryError(
                error.message, position=negation.position, token=negation.raw
            ) from None
    return node


def parse_semantic_query(text: str, *, default_fields: Sequence[str] = ()) -> tuple[Node, str]:
    """Parse a query for a semantic search, returning the AST and the text to embed.

    The text is :func:`~sci_etl_core.search.query.semantic_text` of the AST.

    Raises:
        SearchQueryError: The query is malformed or cannot be ranked, as for
            :func:`parse_ranked_query`.
    """
    node = parse_ranked_query(text, default_fields=default_fields)
    return node, semantic_text(node)
