"""A PGVector store whose metadata filters accept any field name (internal).

``langchain_postgres`` writes a field name into the JSON path of a comparison
(``$.year >= $value``), so it refuses every name that is not a Python identifier, such as
``has-hyphen``. :class:`KleaPGVector` handles those names itself: the name is quoted as a
JSON path string (``$."has-hyphen"``), and the whole path, like every value, travels to
PostgreSQL as a bound parameter, so a field name can neither change the SQL nor the path.
Identifier names go through ``langchain_postgres`` unchanged. Needs the ``pgvector`` extra.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_postgres import PGVector
from langchain_postgres.vectorstores import COMPARISONS_TO_NATIVE
from sqlalchemy import cast, func
from sqlalchemy.dialects.postgresql import JSONB, JSONPATH

__all__ = ["KleaPGVector", "json_path_key"]


def json_path_key(field: str) -> str:
    """Return ``field`` as a quoted SQL/JSON path key: ``has-hyphen`` -> ``"has-hyphen"``.

    JSON string escapes are the path language's string escapes, so quotes, backslashes
    and control characters in the name stay inside the key.
    """
    return json.dumps(field, ensure_ascii=False)


class KleaPGVector(PGVector):
    """``langchain_postgres.PGVector`` with metadata filters on any field name."""

    def _handle_field_filter(self, field: str, value: Any) -> Any:
        if not isinstance(field, str) or field.isidentifier() or field.startswith("$"):
            return super()._handle_field_filter(field, value)
        if isinstance(value, dict) and len(value) == 1:
            ((operator, operand),) = value.items()
        elif isinstance(value, dict):
            return super()._handle_field_filter(field, value)  # its own error message
        else:
            operator, operand = "$eq", value
        metadata = self.EmbeddingStore.cmetadata
        native = COMPARISONS_TO_NATIVE.get(operator)
        if native is not None:
            path = f"$.{json_path_key(field)} {native} $value"
            return func.jsonb_path_match(
                metadata, cast(path, JSONPATH), cast({"value": operand}, JSONB)
            )
        text = metadata[field].astext  # ->> with the name bound as a parameter
        if operator == "$in":
            return text.in_([str(x) for x in operand])
        if operator == "$nin":
            return ~text.in_([str(x) for x in operand])
        if operator == "$like":
            return text.like(operand)
        if operator == "$ilike":
            return text.ilike(operand)
        raise ValueError(f"metadata filter on {field!r}: operator {operator!r} is not supported")
