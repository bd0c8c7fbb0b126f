"""JSON with a bounded nesting depth, for every JSON document a user hands over.

Python's parser gives up with ``RecursionError`` somewhere near 1,000 levels, and code
walking a parsed document recursively can fail sooner. Configuration files, filters and
records never need more than a few levels, so :func:`loads_bounded` refuses anything
nested deeper than :data:`MAX_JSON_DEPTH` with an ordinary ``ValueError`` the caller turns
into its own error.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "JsonTooDeepError", "json_depth", "loads_bounded"]

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects accepted in a stores configuration or filter."""


class JsonTooDeepError(ValueError):
    """A JSON document nests arrays or objects deeper than allowed."""


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of ``value`` (a scalar is 0), counted up to ``limit + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth) for child in children)
    return deepest


def loads_bounded(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)``, refusing documents nested deeper than ``limit``.

    Raises:
        json.JSONDecodeError: The text is not JSON.
        JsonTooDeepError: The document nests deeper than ``limit``.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonTooDeepError(f"nested more than {limit} levels deep") from None
    if json_depth(value, limit) > limit:
        raise JsonTooDeepError(f"nested more than {limit} levels deep")
    return value
