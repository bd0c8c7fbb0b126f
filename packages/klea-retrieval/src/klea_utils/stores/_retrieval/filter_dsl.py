"""Validation and canonical form of the metadata filter DSL (internal).

The canonical form is a dict with exactly one key: a field name mapped to a one-operator
expression (``{"year": {"$gte": 2020}}``), or ``$and``/``$or`` mapped to a list of at
least two canonical filters. Nested combinators of the same kind are flattened and a
combinator with one operand collapses to that operand, so every backend (Chroma rejects
one-operand ``$and``) accepts the result.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from klea_utils.stores.exceptions import MetadataFilterError

FIELD_OPERATORS: frozenset[str] = frozenset(
    {"$contains", "$eq", "$gt", "$gte", "$in", "$lt", "$lte", "$ne", "$nin"}
)
LOGICAL_OPERATORS: frozenset[str] = frozenset({"$and", "$or"})

RANGE_OPERATORS: frozenset[str] = frozenset({"$gt", "$gte", "$lt", "$lte"})
SET_OPERATORS: frozenset[str] = frozenset({"$in", "$nin"})
NEGATED_OPERATORS: frozenset[str] = frozenset({"$ne", "$nin"})

Scalar = str | int | float | bool

MAX_FILTER_DEPTH = 32
"""Deepest nesting of ``$and``/``$or`` a filter may have (deeper ones are refused)."""

MAX_FILTER_INT = 2**63 - 1
"""Largest integer operand magnitude: what every backend stores (a signed 64-bit int)."""


def _fail(where: str, problem: str) -> MetadataFilterError:
    location = where or "<top level>"
    return MetadataFilterError(f"metadata filter clause {location!r}: {problem}")


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def is_number(value: Any) -> bool:
    """Return whether ``value`` is an int or float (``bool`` is not a number here)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_scalar(value: Any, where: str, *, allow_bool: bool) -> Scalar:
    if isinstance(value, bool):
        if allow_bool:
            return value
        raise _fail(where, f"operand must be a string or a number, got {_describe(value)}")
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise _fail(where, f"operand must be a finite number, got {value!r}")
        if isinstance(value, int) and abs(value) > MAX_FILTER_INT:
            raise _fail(
                where, f"integer operand out of range: at most {MAX_FILTER_INT} in magnitude"
            )
        return value
    expected = "a string, a number or a boolean" if allow_bool else "a string or a number"
    raise _fail(where, f"operand must be {expected}, got {_describe(value)}")


def _check_operand(op: str, value: Any, where: str) -> Any:
    if op in ("$eq", "$ne"):
        return _check_scalar(value, where, allow_bool=True)
    if op == "$contains":
        return _check_scalar(value, where, allow_bool=False)
    if op in RANGE_OPERATORS:
        if not is_number(value):
            raise _fail(where, f"operand of {op} must be a number, got {_describe(value)}")
        return _check_scalar(value, where, allow_bool=False)
    # $in / $nin
    if not isinstance(value, list | tuple) or not value:
        raise _fail(where, f"operand of {op} must be a non-empty list, got {_describe(value)}")
    items = [_check_scalar(v, f"{where}[{i}]", allow_bool=False) for i, v in enumerate(value)]
    kinds = {"number" if is_number(v) else "string" for v in items}
    if len(kinds) > 1:
        raise _fail(where, f"operand of {op} mixes strings and numbers: {list(value)!r}")
    return items


def _combine(op: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    flat: list[dict[str, Any]] = []
    for part in parts:
        if op in part:
            flat.extend(part[op])
        else:
            flat.append(part)
    return flat[0] if len(flat) == 1 else {op: flat}


def _field_clause(field: Any, expr: Any, where: str) -> dict[str, Any]:
    if not isinstance(field, str) or not field:
        raise _fail(where, f"field name must be a non-empty string, got {_describe(field)}")
    here = _join(where, field)
    if not isinstance(expr, dict):
        if isinstance(expr, list | tuple):
            raise _fail(
                here,
                "a bare list is ambiguous; use {'$in': [...]} for one of several values "
                "or {'$contains': value} for list membership",
            )
        return {field: {"$eq": _check_scalar(expr, here, allow_bool=True)}}
    if not expr:
        raise _fail(here, "operator expression is empty")
    parts: list[dict[str, Any]] = []
    for op, operand in expr.items():
        if op not in FIELD_OPERATORS:
            allowed = ", ".join(sorted(FIELD_OPERATORS))
            raise _fail(here, f"unknown operator {op!r}; expected one of {allowed}")
        parts.append({field: {op: _check_operand(op, operand, _join(here, op))}})
    return _combine("$and", parts)


def canonicalize(f: Any, where: str = "", depth: int = 0) -> dict[str, Any]:
    """Validate ``f`` and return its canonical form; ``where`` locates ``f`` in errors.

    ``depth`` counts the combinators around ``f``; past :data:`MAX_FILTER_DEPTH` the
    filter is refused.
    """
    if depth > MAX_FILTER_DEPTH:
        raise _fail(where, f"filter is nested more than {MAX_FILTER_DEPTH} levels deep")
    if not isinstance(f, dict):
        raise _fail(where, f"a filter must be a dict, got {_describe(f)}")
    if not f:
        raise _fail(where, "filter is empty")
    parts: list[dict[str, Any]] = []
    for key, value in f.items():
        if isinstance(key, str) and key in LOGICAL_OPERATORS:
            here = _join(where, key)
            if not isinstance(value, list | tuple) or not value:
                raise _fail(
                    here, f"{key} needs a non-empty list of filters, got {_describe(value)}"
                )
            subs = [canonicalize(sub, f"{here}[{i}]", depth + 1) for i, sub in enumerate(value)]
            parts.append(_combine(key, subs))
        elif isinstance(key, str) and key.startswith("$"):
            raise _fail(
                _join(where, key),
                f"{key!r} is not a combinator ($and, $or) and field names cannot start with '$'",
            )
        else:
            parts.append(_field_clause(key, value, where))
    return _combine("$and", parts)


def split_leaf(clause: dict[str, Any]) -> tuple[str, str, Any]:
    """Return ``(field, operator, operand)`` of a canonical field clause."""
    ((field, expr),) = clause.items()
    ((op, operand),) = expr.items()
    return field, op, operand


def iter_leaves(f: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """Yield ``(field, operator, operand)`` for every field clause of a canonical filter."""
    ((key, value),) = f.items()
    if key in LOGICAL_OPERATORS:
        for sub in value:
            yield from iter_leaves(sub)
    else:
        yield split_leaf(f)


def referenced_fields(f: dict[str, Any]) -> set[str]:
    """Return every metadata field a canonical filter mentions."""
    return {field for field, _, _ in iter_leaves(f)}
