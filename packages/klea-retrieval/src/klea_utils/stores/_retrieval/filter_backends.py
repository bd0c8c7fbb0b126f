"""Translations of a canonical metadata filter to each backend's native filter (internal).

Each function takes a filter already in canonical form (see ``_filter_dsl``) and returns
the backend's filter. :func:`chroma` and :func:`pgvector` add the rewrites that keep a live
backend in step with the in-memory matcher (``_filter_match``), described in
``docs/guides/filters.md``; ``translate_metadata_filter`` sends those, while the public
``to_chroma_filter`` and ``to_pgvector_filter`` return the seed's forms
(:func:`pgvector_like` is the latter: only ``$contains`` rewritten).
"""

from __future__ import annotations

import json
import math
from typing import Any

from klea_utils.stores._retrieval.extras import import_extra
from klea_utils.stores._retrieval.filter_dsl import (
    NEGATED_OPERATORS,
    is_number,
    iter_leaves,
    split_leaf,
)


def _leaf(field: str, op: str, operand: Any) -> dict[str, Any]:
    return {field: {op: operand}}


def _group(op: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return parts[0] if len(parts) == 1 else {op: parts}


# --------------------------------------------------------------------------- Chroma


def _chroma_number(field: str, op: str, x: Any) -> dict[str, Any]:
    # Chroma truncates a fractional operand toward zero when it compares it with an int
    # value ({"$eq": 0.5} matches 0). Each rewrite pairs the clause with an integer-operand
    # clause that fixes the int case and never changes the float case.
    if not isinstance(x, float) or x.is_integer():
        return _leaf(field, op, x)
    lo, hi = math.floor(x), math.ceil(x)
    if op == "$eq":
        return {"$and": [_leaf(field, op, x), _leaf(field, "$gt", lo), _leaf(field, "$lt", hi)]}
    if op == "$gt":
        return {"$or": [_leaf(field, op, x), _leaf(field, "$gte", hi)]}
    if op == "$gte":
        return {"$and": [_leaf(field, op, x), _leaf(field, "$gt", lo)]}
    if op == "$lt":
        return {"$or": [_leaf(field, op, x), _leaf(field, "$lte", lo)]}
    return {"$and": [_leaf(field, op, x), _leaf(field, "$lt", hi)]}  # $lte


def _chroma_ne(field: str, x: Any) -> dict[str, Any]:
    # "greater or less" excludes documents without the field, unlike Chroma's $ne.
    return {"$or": [_chroma_number(field, "$gt", x), _chroma_number(field, "$lt", x)]}


def _chroma_leaf(field: str, op: str, operand: Any) -> dict[str, Any]:
    numeric = is_number(operand[0] if op in ("$in", "$nin") else operand)
    if not numeric or op == "$contains":
        return _leaf(field, op, list(operand) if isinstance(operand, list) else operand)
    if op == "$ne":
        return _chroma_ne(field, operand)
    if op == "$nin":
        return _group("$and", [_chroma_ne(field, x) for x in operand])
    if op == "$in":
        if any(isinstance(x, float) and not x.is_integer() for x in operand):
            return _group("$or", [_chroma_number(field, "$eq", x) for x in operand])
        if any(isinstance(x, float) for x in operand):  # Chroma wants one element type
            return _leaf(field, op, [float(x) for x in operand])
        return _leaf(field, op, list(operand))
    return _chroma_number(field, op, operand)


def chroma(f: dict[str, Any]) -> dict[str, Any]:
    """Translate a canonical filter to a Chroma ``where`` dict."""
    ((key, value),) = f.items()
    if key in ("$and", "$or"):
        return {key: [chroma(sub) for sub in value]}
    return _chroma_leaf(*split_leaf(f))


def chroma_is_exact(f: dict[str, Any]) -> bool:
    """Chroma's native ``$ne``/``$nin`` also match documents lacking the field."""
    return not any(
        op in NEGATED_OPERATORS and not is_number(operand if op == "$ne" else operand[0])
        for _, op, operand in iter_leaves(f)
    )


# --------------------------------------------------------------------------- PGVector


def like_pattern(operand: Any) -> str:
    """Return the ``$like`` pattern approximating ``$contains operand`` on PostgreSQL.

    The operand is written as it appears inside the JSON text of the stored value (JSON
    string escapes, no quotes), then LIKE's own metacharacters are escaped.
    """
    text = json.dumps(operand, ensure_ascii=False)
    if isinstance(operand, str):
        text = text[1:-1]
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _pg_like_leaf(field: str, op: str, operand: Any) -> dict[str, Any]:
    if op == "$contains":
        return _leaf(field, "$like", like_pattern(operand))
    return _leaf(field, op, list(operand) if isinstance(operand, list) else operand)


def pgvector_like(f: dict[str, Any]) -> dict[str, Any]:
    """The canonical filter with ``$contains`` as ``$like`` and nothing else changed."""
    ((key, value),) = f.items()
    if key in ("$and", "$or"):
        return {key: [pgvector_like(sub) for sub in value]}
    return _pg_like_leaf(*split_leaf(f))


def _pg_leaf(field: str, op: str, operand: Any) -> dict[str, Any]:
    if op in ("$in", "$nin") and is_number(operand[0]):
        # langchain-postgres compares $in/$nin as text ("2.0" != "2"); compare numerically.
        each = "$eq" if op == "$in" else "$ne"
        return _group("$or" if op == "$in" else "$and", [_leaf(field, each, x) for x in operand])
    return _pg_like_leaf(field, op, operand)


def pgvector(f: dict[str, Any]) -> dict[str, Any]:
    """Translate a canonical filter to what a live PGVector store applies exactly.

    :func:`pgvector_like`, and numeric ``$in``/``$nin`` as ``$or``/``$and`` of
    ``$eq``/``$ne``. Field names are passed as they are: the store returned by
    ``instantiate_vector_store`` quotes any name (see ``_retrieval/pgvector.py``).
    """
    ((key, value),) = f.items()
    if key in ("$and", "$or"):
        return {key: [pgvector(sub) for sub in value]}
    return _pg_leaf(*split_leaf(f))


def pgvector_is_exact(f: dict[str, Any]) -> bool:
    """``$contains`` is approximated by a substring match on PostgreSQL."""
    return not any(op == "$contains" for _, op, _ in iter_leaves(f))


# --------------------------------------------------------------------------- Qdrant


def _qdrant_models() -> Any:
    return import_extra("qdrant_client.models", feature="Qdrant metadata filters", extra="qdrant")


def _qdrant_condition(m: Any, key: str, op: str, operand: Any) -> Any:
    def cond(**kwargs: Any) -> Any:
        return m.FieldCondition(key=key, **kwargs)

    def equal(x: Any) -> Any:
        if isinstance(x, float):  # MatchValue takes no floats: equality as a closed range
            return cond(range=m.Range(gte=x, lte=x))
        return cond(match=m.MatchValue(value=x))

    def differs(x: Any) -> Any:
        if isinstance(x, bool):
            return cond(match=m.MatchValue(value=not x))
        if isinstance(x, float):
            return m.Filter(should=[cond(range=m.Range(gt=x)), cond(range=m.Range(lt=x))])
        return cond(match=m.MatchExcept(**{"except": [x]}))

    if op in ("$eq", "$contains"):
        return equal(operand)
    if op == "$ne":
        return differs(operand)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        return cond(range=m.Range(**{op[1:]: operand}))
    has_float = any(isinstance(x, float) for x in operand)
    if op == "$in":
        if has_float:
            return m.Filter(should=[equal(x) for x in operand])
        return cond(match=m.MatchAny(any=list(operand)))
    if has_float:  # $nin
        return m.Filter(must=[differs(x) for x in operand])
    return cond(match=m.MatchExcept(**{"except": list(operand)}))


def qdrant(f: dict[str, Any], key_prefix: str = "") -> Any:
    """Translate a canonical filter to a ``qdrant_client.models.Filter``."""
    m = _qdrant_models()

    def build(sub: dict[str, Any]) -> Any:
        ((key, value),) = sub.items()
        if key == "$and":
            return m.Filter(must=[build(s) for s in value])
        if key == "$or":
            return m.Filter(should=[build(s) for s in value])
        field, op, operand = split_leaf(sub)
        return m.Filter(must=[_qdrant_condition(m, key_prefix + field, op, operand)])

    return build(f)
