"""The in-memory matcher: the reference semantics of the metadata filter DSL (internal).

Rules, which every backend translation is tested against:

- A document without the clause's field never matches, under any operator (``$ne`` and
  ``$nin`` included).
- Comparison operators (``$eq``, ``$ne``, the ranges, ``$in``, ``$nin``) compare a scalar
  stored value with operands of the same kind: numbers with numbers (``1 == 1.0``),
  strings with strings, booleans with booleans. A value of another kind, or a list, never
  satisfies them.
- ``$contains`` matches a list holding an element equal to the operand; a scalar stored
  value is treated as a one-element list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from klea_utils.stores._retrieval.filter_dsl import is_number, split_leaf


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _same(a: Any, b: Any) -> bool:
    kind = _kind(a)
    return kind is not None and kind == _kind(b) and a == b


def _compare(op: str, value: Any, operand: Any) -> bool:
    if op == "$contains":
        items = value if isinstance(value, list | tuple) else [value]
        return any(_same(item, operand) for item in items)
    kind = _kind(value)
    if kind is None:
        return False
    if op == "$eq":
        return _same(value, operand)
    if op == "$ne":
        return kind == _kind(operand) and value != operand
    if op == "$in":
        return any(_same(value, item) for item in operand)
    if op == "$nin":
        return kind == _kind(operand[0]) and not any(_same(value, item) for item in operand)
    if kind != "number":
        return False
    if op == "$gt":
        return bool(value > operand)
    if op == "$gte":
        return bool(value >= operand)
    if op == "$lt":
        return bool(value < operand)
    return bool(value <= operand)  # $lte


def matches(f: dict[str, Any], metadata: Mapping[str, Any]) -> bool:
    """Return whether ``metadata`` satisfies the canonical filter ``f``."""
    ((key, value),) = f.items()
    if key == "$and":
        return all(matches(sub, metadata) for sub in value)
    if key == "$or":
        return any(matches(sub, metadata) for sub in value)
    field, op, operand = split_leaf(f)
    if field not in metadata or metadata[field] is None:
        return False
    return _compare(op, metadata[field], operand)
