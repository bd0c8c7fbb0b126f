"""Compile query ASTs into FTS5 MATCH expressions and SQL filter conditions.

Nothing a user types is ever formatted into SQL: words reach FTS5 as double-quoted
string literals inside a MATCH expression, and that expression reaches SQLite as a bound
parameter.
"""

from __future__ import annotations

from sci_etl_core.exceptions import SearchQueryError
from sci_etl_core.search.query import And, Near, Node, Not, Or, Phrase, Term, normalize
from sci_etl_core.search.tokenize import SURROGATE_CODE_POINTS

__all__ = [
    "FILTER_LEAF",
    "is_rankable",
    "require_rankable",
    "to_filter_expression",
    "to_match_expression",
]

FILTER_LEAF = "d.doc_id IN (SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?)"
"""The SQL condition each maximal rankable subtree becomes in :func:`to_filter_expression`.

Its ``?`` takes that subtree's MATCH expression, and it reads ``d.doc_id`` of the documents table.
"""

_UNRANKABLE = (
    "The query cannot be ranked: every NOT must stand in an AND beside a word or phrase "
    "that is not negated, so NOT b alone or a OR NOT b cannot be ranked"
)
_UNSAFE = dict.fromkeys(SURROGATE_CODE_POINTS, " ") | {0: " "}


def _rankable(node: Node) -> bool:
    if isinstance(node, Term | Phrase | Near):
        return True
    if isinstance(node, Or):
        return all(_rankable(operand) for operand in node.operands)
    if isinstance(node, And):
        positives = [operand for operand in node.operands if not isinstance(operand, Not)]
        negatives = [operand for operand in node.operands if isinstance(operand, Not)]
        return (
            bool(positives)
            and len(negatives) <= 1
            and all(_rankable(operand) for operand in positives)
            and all(_rankable(operand.operand) for operand in negatives)
        )
    return False


def is_rankable(node: Node) -> bool:
    """Report whether ``node`` compiles to a single FTS5 MATCH expression, and so can be ranked.

    FTS5 has no unary ``NOT``; its ``NOT`` subtracts one match set from another.
    After :func:`~sci_etl_core.search.query.normalize`:

    - a :class:`Term`, :class:`Phrase`, or :class:`Near` is rankable;
    - an :class:`Or` is rankable when every operand is;
    - an :class:`And` is rankable when every operand that is not a :class:`Not`
      is rankable, and so is the operand of its :class:`Not`, if it has one;
    - a :class:`Not` on its own is not rankable.

    Normalization leaves every ``And`` with at least one operand that is not a
    ``Not``, and at most one that is.
    """
    return _rankable(normalize(node))


def require_rankable(node: Node) -> None:
    """Raise unless ``node`` can be ranked, as :func:`is_rankable` defines it.

    Raises:
        SearchQueryError: ``node`` cannot be ranked, such as a pure negation.
    """
    if not is_rankable(node):
        raise SearchQueryError(_UNRANKABLE)


def _literal(text: str) -> str:
    return '"' + text.translate(_UNSAFE).replace('"', '""') + '"'


def _scoped(fields: tuple[str, ...], expression: str) -> str:
    if not fields:
        return expression
    return "{" + " ".join(fields) + "} : " + expression


def _leaf(node: Term | Phrase | Near) -> str:
    if isinstance(node, Term):
        return _scoped(node.fields, _literal(node.text) + ("*" if node.prefix else ""))
    if isinstance(node, Phrase):
        return _scoped(node.fields, _literal(" ".join(node.words)))
    operands = " ".join(_leaf(operand) for operand in node.operands)
    return _scoped(node.fields, f"NEAR({operands}, {node.distance})")


def _compile(node: Node) -> str:
    if isinstance(node, Term | Phrase | Near):
        return _leaf(node)
    if isinstance(node, Or):
        return "(" + " OR ".join(_compile(operand) for operand in node.operands) + ")"
    if isinstance(node, And):
        positives = [_compile(op) for op in node.operands if not isinstance(op, Not)]
        negated = [op.operand for op in node.operands if isinstance(op, Not)]
        kept = positives[0] if len(positives) == 1 else "(" + " AND ".join(positives) + ")"
        if not negated:
            return kept
        return f"({kept} NOT {_compile(negated[0])})"
    raise SearchQueryError(_UNRANKABLE)  # a Not that is not inside an And


def to_match_expression(node: Node) -> str:
    """Compile the normalized ``node`` into one FTS5 MATCH expression.

    Every word reaches FTS5 inside a double-quoted string literal with each
    ``"`` doubled, so no query text can act as an FTS5 operator. Bind the result
    as a ``?`` parameter; never format it into SQL. SQLite cannot take a NUL or
    a surrogate inside a literal, so each becomes a space; the tokenizer treats
    both as separators, so what matches is unchanged.

    Every ``AND``, ``OR``, and nested ``NOT`` is parenthesized, so FTS5 operator
    precedence never decides the meaning.

    Raises:
        SearchQueryError: ``node`` cannot be ranked, as
            :func:`is_rankable` defines it.
    """
    normal = normalize(node)
    if not _rankable(normal):
        raise SearchQueryError(_UNRANKABLE)
    return _compile(normal)


def _filter(node: Node, params: list[str]) -> str:
    if _rankable(node):
        params.append(_compile(node))
        return FILTER_LEAF
    if isinstance(node, Not):
        return f"(NOT {_filter(node.operand, params)})"
    if isinstance(node, And | Or):
        glue = " AND " if isinstance(node, And) else " OR "
        return "(" + glue.join(_filter(operand, params) for operand in node.operands) + ")"
    raise AssertionError(f"unreachable: a leaf is always rankable: {node!r}")  # pragma: no cover


def to_filter_expression(node: Node) -> tuple[str, tuple[str, ...]]:
    """Compile the normalized ``node`` into a SQL boolean expression, with its parameters.

    Any query compiles, including a pure negation, because SQL's ``AND``,
    ``OR``, and ``NOT`` are total where FTS5's are not. Each maximal rankable
    subtree becomes one :data:`FILTER_LEAF`, whose ``?`` takes that subtree's
    :func:`to_match_expression`; the parameters are returned in the order their
    placeholders appear. The expression reads ``d.doc_id``, so it runs as the
    ``WHERE`` clause of a query over ``documents d``.

    The SQL text comes only from the fixed grammar. Every word reaches SQLite
    as a bound parameter, inside a quoted FTS5 literal.

    For example, ``NOT b OR c`` compiles to
    ``((NOT <leaf>) OR <leaf>)`` with parameters ``('"b"', '"c"')``.
    """
    params: list[str] = []
    sql = _filter(normalize(node), params)
    return sql, tuple(params)
