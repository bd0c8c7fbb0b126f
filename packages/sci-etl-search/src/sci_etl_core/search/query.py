"""The Boolean query AST: leaves, groups, normalization, and display helpers.

:func:`~sci_etl_core.search.parser.parse_query` builds these nodes from text; stores,
evaluation, and the FTS5 compiler consume them. Every node is a frozen dataclass that
validates its fields when built.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeAlias

__all__ = [
    "FIELDS",
    "NEAR_DISTANCE",
    "And",
    "Near",
    "Node",
    "Not",
    "Or",
    "Phrase",
    "QueryChip",
    "Term",
    "describe",
    "normalize",
    "semantic_text",
]

FIELDS: tuple[str, ...] = ("title", "abstract", "body")
"""The text fields of a document, in index column order; a term or phrase can be scoped to any of them."""  # noqa: E501

NEAR_DISTANCE = 10
"""The distance of a NEAR group written without one, as in FTS5."""


def _check_fields(owner: str, fields: object) -> tuple[str, ...]:
    if not isinstance(fields, tuple | list):
        raise TypeError(f"{owner} fields must be a tuple of field names, not {fields!r}")
    for name in fields:
        if name not in FIELDS:
            raise ValueError(f"{owner} field {name!r} is not one of {', '.join(FIELDS)}")
    if len(set(fields)) != len(fields):
        raise ValueError(f"{owner} fields {tuple(fields)!r} name a field twice")
    return tuple(fields)


@dataclass(frozen=True)
class Term:
    """One tokenizer-normalized word, matched exactly or, with ``prefix``, as a prefix.

    ``fields`` limits the match to those fields; empty means every field.

    Raises:
        ValueError: ``text`` is blank, or ``fields`` names an unknown field or one twice.
    """

    text: str
    fields: tuple[str, ...] = ()
    prefix: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError(f"Term text must be a non-blank string, got {self.text!r}")
        object.__setattr__(self, "fields", _check_fields("Term", self.fields))
        if not isinstance(self.prefix, bool):
            raise TypeError(f"Term prefix must be a bool, got {self.prefix!r}")


@dataclass(frozen=True)
class Phrase:
    """Tokenizer-normalized words that must appear adjacent and in this order.

    ``fields`` limits the match to those fields; empty means every field.

    Raises:
        ValueError: ``words`` is empty or holds a blank word, or ``fields`` names an
            unknown field or one twice.
    """

    words: tuple[str, ...]
    fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.words, tuple | list) or not self.words:
            raise ValueError(f"Phrase words must be a non-empty tuple, got {self.words!r}")
        for word in self.words:
            if not isinstance(word, str) or not word.strip():
                raise ValueError(f"Phrase word must be a non-blank string, got {word!r}")
        object.__setattr__(self, "words", tuple(self.words))
        object.__setattr__(self, "fields", _check_fields("Phrase", self.fields))


@dataclass(frozen=True)
class Near:
    """Terms and phrases that must all occur in one field, close to each other, in any order.

    With the occurrences chosen so that the one starting last starts at token
    ``p``, every other operand must end at most ``distance`` tokens before
    ``p``: ``NEAR(a b, 2)`` matches ``a x x b`` and ``b x a`` but not
    ``a x x x b``. The operands carry no field scope of their own; ``fields``
    limits the whole group, and empty means any one field.

    Raises:
        ValueError: There are fewer than two operands, an operand has ``fields``
            of its own, ``distance`` is negative, or ``fields`` names an unknown
            field or one twice.
    """

    operands: tuple[Term | Phrase, ...]
    distance: int = NEAR_DISTANCE
    fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.operands, tuple | list) or len(self.operands) < 2:
            raise ValueError(f"Near needs at least two operands, got {self.operands!r}")
        for operand in self.operands:
            if not isinstance(operand, Term | Phrase):
                raise ValueError(f"Near operands must be terms or phrases, got {operand!r}")
            if operand.fields:
                raise ValueError(
                    f"Near operand {operand!r} has fields of its own; scope the group instead"
                )
        if not isinstance(self.distance, int) or isinstance(self.distance, bool):
            raise TypeError(f"Near distance must be an integer, got {self.distance!r}")
        if self.distance < 0:
            raise ValueError(f"Near distance must be >= 0, got {self.distance}")
        object.__setattr__(self, "operands", tuple(self.operands))
        object.__setattr__(self, "fields", _check_fields("Near", self.fields))


def _check_operands(owner: str, operands: object) -> tuple[Node, ...]:
    if not isinstance(operands, tuple | list) or not operands:
        raise ValueError(f"{owner} needs at least one operand, got {operands!r}")
    for operand in operands:
        if not isinstance(operand, _NODE_TYPES):
            raise ValueError(f"{owner} operand must be a query node, got {operand!r}")
    return tuple(operands)


@dataclass(frozen=True)
class And:
    """Matches when every operand matches.

    Raises:
        ValueError: ``operands`` is empty or holds something that is not a node.
    """

    operands: tuple[Node, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "operands", _check_operands("And", self.operands))


@dataclass(frozen=True)
class Or:
    """Matches when any operand matches.

    Raises:
        ValueError: ``operands`` is empty or holds something that is not a node.
    """

    operands: tuple[Node, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "operands", _check_operands("Or", self.operands))


@dataclass(frozen=True)
class Not:
    """Matches when its operand does not.

    Raises:
        ValueError: ``operand`` is not a node.
    """

    operand: Node

    def __post_init__(self) -> None:
        if not isinstance(self.operand, _NODE_TYPES):
            raise ValueError(f"Not operand must be a query node, got {self.operand!r}")


Node: TypeAlias = Term | Phrase | Near | And | Or | Not
"""Any node of a query AST."""

_NODE_TYPES = (Term, Phrase, Near, And, Or, Not)


@dataclass(frozen=True)
class QueryChip:
    """One word or phrase of a query, labelled for display.

    ``text`` is the term, or the phrase's words joined by single spaces.
    ``fields`` is empty when every field is searched. ``operator`` is ``"AND"``
    or ``"OR"``, the operator of the innermost group holding the chip, and is
    empty when the whole query is this one word or phrase. ``negated`` is true
    when the chip must not match, and ``depth`` counts the groups around it, so
    a UI can bracket ``a (b OR c)`` without re-implementing the grammar.
    ``near`` is the distance of the NEAR group the chip stands for, whose
    ``text`` is then its terms and phrases, phrases in double quotes, joined by
    single spaces; it is ``None`` for any other chip.

    Raises:
        ValueError: ``operator`` is not ``""``, ``"AND"`` or ``"OR"``, or ``depth``
            is negative.
    """

    text: str
    fields: tuple[str, ...] = ()
    operator: str = ""
    negated: bool = False
    prefix: bool = False
    phrase: bool = False
    depth: int = 0
    near: int | None = None

    def __post_init__(self) -> None:
        if self.operator not in ("", "AND", "OR"):
            raise ValueError(f"QueryChip operator must be '', 'AND' or 'OR', got {self.operator!r}")
        if self.depth < 0:
            raise ValueError(f"QueryChip depth must be >= 0, got {self.depth}")
        object.__setattr__(self, "fields", tuple(self.fields))


def _normalize_once(node: Node) -> Node:
    if isinstance(node, Not):
        inner = _normalize_once(node.operand)
        if isinstance(inner, Not):
            return inner.operand
        return Not(inner)
    if isinstance(node, And | Or):
        kind = type(node)
        flat: list[Node] = []
        for operand in node.operands:
            child = _normalize_once(operand)
            if type(child) is kind:
                flat.extend(child.operands)
            else:
                flat.append(child)
        if kind is And:
            negated = [child for child in flat if isinstance(child, Not)]
            if len(negated) > 1:
                first = flat.index(negated[0])
                merged = Not(Or(tuple(child.operand for child in negated)))
                flat = [
                    merged if i == first else child
                    for i, child in enumerate(flat)
                    if i == first or not isinstance(child, Not)
                ]
        if len(flat) == 1:
            return flat[0]
        return And(tuple(flat)) if kind is And else Or(tuple(flat))
    return node


def normalize(node: Node) -> Node:
    """Return the canonical form of ``node``, which ``normalize`` leaves unchanged.

    The rules apply bottom-up until nothing changes:

    - ``Not(Not(x))`` becomes ``x``.
    - Nested ``And`` and ``Or`` flatten, and a single-operand ``And`` or ``Or``
      becomes its operand.
    - Inside an ``And``, two or more ``Not`` operands merge by De Morgan's law
      into one, placed where the first stood:
      ``And((a, Not(b), Not(c)))`` becomes ``And((a, Not(Or((b, c)))))``.
    - Operand order is preserved, never sorted.

    The result matches exactly the documents ``node`` matches.
    """
    while True:
        result = _normalize_once(node)
        if result == node:
            return result
        node = result


def _chip_text(node: Term | Phrase | Near) -> str:
    if isinstance(node, Term):
        return node.text
    if isinstance(node, Phrase):
        return " ".join(node.words)
    return " ".join(
        f'"{" ".join(op.words)}"' if isinstance(op, Phrase) else op.text for op in node.operands
    )


def _walk_chips(node: Node, operator: str, negated: bool, depth: int) -> Iterator[QueryChip]:
    if isinstance(node, Not):
        yield from _walk_chips(node.operand, operator, not negated, depth)
    elif isinstance(node, And | Or):
        label = "AND" if isinstance(node, And) else "OR"
        for operand in node.operands:
            yield from _walk_chips(operand, label, negated, depth + 1)
    else:
        yield QueryChip(
            text=_chip_text(node),
            fields=node.fields,
            operator=operator,
            negated=negated,
            prefix=isinstance(node, Term) and node.prefix,
            phrase=isinstance(node, Phrase),
            depth=depth,
            near=node.distance if isinstance(node, Near) else None,
        )


def describe(node: Node) -> list[QueryChip]:
    """Return the words and phrases of ``node`` as chips, in the order they were written.

    ``node`` is normalized first, so ``NOT NOT a`` is described as ``a``. The query as a
    whole is not a group: in ``a (b OR c)`` the chip ``a`` has depth 0 and ``b``, ``c``
    depth 1. A group under a top-level ``NOT`` is bracketed, so it counts.
    """
    root = normalize(node)
    # The operands of a top-level AND or OR stand in no group: start one level above 0.
    return list(_walk_chips(root, "", False, -1 if isinstance(root, And | Or) else 0))


def _positive_words(node: Node) -> Iterator[str]:
    if isinstance(node, Not):
        return
    if isinstance(node, And | Or | Near):
        for operand in node.operands:
            yield from _positive_words(operand)
    elif isinstance(node, Phrase):
        yield " ".join(node.words)
    elif not node.prefix:
        yield node.text


def semantic_text(node: Node) -> str:
    """Return the words an embedder should see for ``node``: its meaning, not its syntax.

    ``node`` is normalized first. The text of every term and phrase that is not
    negated is joined with single spaces, in the order written. Operators,
    field scopes, and every negated subtree are dropped, so ``quasar -dwarf``
    becomes ``quasar`` rather than pulling results towards dwarfs.

    Prefix terms are left out entirely: ``photometr`` is a matching feature, not
    a word an embedder understands, so ``photometr* dwarf`` gives ``dwarf`` and
    ``photometr*`` gives the empty string.

    ``OR`` loses its meaning here. A single vector cannot represent a
    disjunction, so ``quasar OR blazar`` gives ``quasar blazar``, the same text
    as ``quasar AND blazar``.
    """
    return " ".join(_positive_words(normalize(node)))
