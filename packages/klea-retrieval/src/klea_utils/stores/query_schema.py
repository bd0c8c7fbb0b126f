"""Strict-safe retrieval-query schema builder.

Builds the RAG query generator's structured-output schema from the domain's configured
filter fields, so each allowed filter is a real, typed, optional field instead of a
dynamic-key ``filters`` object. A dynamic-key object becomes a JSON object with
``additionalProperties``, which providers' strict structured-output modes close to ``{}``;
the model then cannot express any constraint at all. One typed field per configured filter
avoids that and restricts the model to the deployment's declared field names.

Field type follows ``FilterFieldInfo.value_type``:

- ``string`` -> ``str`` or ``list[str]`` (a list is an ``$in`` constraint);
- ``int`` -> ``int``, ``list[int]``, or an :class:`IntRange` (``{"gte": ..., "lte": ...}``;
  equality is a bare value);
- ``float`` -> ``float``, ``list[float]``, or a :class:`FloatRange`;
- ``list`` -> ``list[str]`` (element membership).

Every filter field is optional (omitted when the question states no constraint). A bare
value is equality; a ``*Range`` value carries ``eq``/``gte``/``lte`` bounds.

The built schema is ``{search_query: str, <filter field>: <type> | None, ...}``; its JSON
schema sets ``additionalProperties: false`` on every object, nested ranges included.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any, ClassVar

from klea_utils.stores._retrieval.filter_dsl import canonicalize
from klea_utils.stores.config import FilterFieldInfo
from klea_utils.stores.filters import normalize_config_filters
from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

__all__ = ["FloatRange", "IntRange", "build_retrieval_query_schema"]

_logger = logging.getLogger(__name__)

SEARCH_QUERY_FIELD = "search_query"


def _check_bounds(gte: float | None, lte: float | None) -> None:
    if gte is not None and lte is not None and gte > lte:
        raise ValueError(f"gte ({gte}) is greater than lte ({lte})")


def _range_operand(value: IntRange | FloatRange) -> dict[str, Any] | None:
    ops = {f"${k}": v for k, v in (("eq", value.eq), ("gte", value.gte), ("lte", value.lte))}
    present = {op: v for op, v in ops.items() if v is not None}
    return present or None


class IntRange(BaseModel):
    """An integer constraint: equality (``eq``) and/or inclusive bounds (``gte``, ``lte``)."""

    eq: int | None = None
    """Exact value."""
    gte: int | None = None
    """Inclusive lower bound."""
    lte: int | None = None
    """Inclusive upper bound."""

    @model_validator(mode="after")
    def _ordered(self) -> IntRange:
        _check_bounds(self.gte, self.lte)
        return self


class FloatRange(BaseModel):
    """A number constraint: equality (``eq``) and/or inclusive bounds (``gte``, ``lte``)."""

    eq: float | None = None
    """Exact value."""
    gte: float | None = None
    """Inclusive lower bound."""
    lte: float | None = None
    """Inclusive upper bound."""

    @model_validator(mode="after")
    def _ordered(self) -> FloatRange:
        _check_bounds(self.gte, self.lte)
        return self


def _close_objects(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "object" or "properties" in node:
            node["additionalProperties"] = False
        for key, value in node.items():
            if key in ("properties", "$defs") and isinstance(value, dict):
                for schema in value.values():  # a map of names to schemas, not a schema
                    _close_objects(schema)
            else:
                _close_objects(value)
    elif isinstance(node, list):
        for item in node:
            _close_objects(item)


class RetrievalQueryOutput(BaseModel):
    """Base of every built query schema: a search query plus typed filter fields."""

    model_config = ConfigDict(extra="forbid")

    filter_fields: ClassVar[tuple[FilterFieldInfo, ...]] = ()
    """The configured filter fields this schema was built from."""

    search_query: str = Field(description="The search query to run against the stores.")

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Return the JSON schema with ``additionalProperties: false`` on every object."""
        schema = super().model_json_schema(*args, **kwargs)
        _close_objects(schema)
        return schema

    def to_metadata_filter(self) -> dict[str, Any] | None:
        """Return the filter fields that are set as one canonical DSL filter, or ``None``.

        Ranges become ``$eq``/``$gte``/``$lte`` clauses; bare values and lists follow
        :func:`klea_utils.stores.filters.normalize_config_filters`.
        """
        operands: dict[str, Any] = {}
        for field in self.filter_fields:
            value = getattr(self, field.name)
            if isinstance(value, IntRange | FloatRange):
                value = _range_operand(value)
            if value is not None:
                operands[field.name] = value
        clauses = normalize_config_filters(operands, list(self.filter_fields))
        if not clauses:
            return None
        return canonicalize({"$and": clauses})


_TYPES: dict[str, Any] = {
    "string": str | list[str] | None,
    "int": int | list[int] | IntRange | None,
    "float": float | list[float] | FloatRange | None,
    "list": list[str] | None,
}


def _usable_fields(fields: list[FilterFieldInfo]) -> tuple[FilterFieldInfo, ...]:
    usable: dict[str, FilterFieldInfo] = {}
    for field in fields:
        name = field.name
        if not name.isidentifier() or name.startswith("_") or name == SEARCH_QUERY_FIELD:
            _logger.warning("filter field %r cannot be a schema field; skipped", name)
        elif name in usable:
            _logger.warning("filter field %r is configured twice; the first one is used", name)
        else:
            usable[name] = field
    return tuple(usable.values())


@lru_cache(maxsize=128)
def _build(key: tuple[tuple[str, str, str], ...]) -> type[BaseModel]:
    fields = tuple(
        FilterFieldInfo(name=name, description=description, value_type=value_type)  # type: ignore[arg-type]
        for name, description, value_type in key
    )
    definitions: dict[str, Any] = {
        f.name: (_TYPES[f.value_type], Field(default=None, description=f.description))
        for f in fields
    }
    model = create_model("RetrievalQuery", __base__=RetrievalQueryOutput, **definitions)
    model.filter_fields = fields
    return model


def build_retrieval_query_schema(fields: list[FilterFieldInfo]) -> type[BaseModel]:
    """Build the query generator's strict-safe structured-output schema.

    Field names that cannot be schema fields (not identifiers, leading underscore, or
    ``search_query``) are skipped with a logged warning, as are repeated names (the first
    wins). The model is cached per field set, so repeated calls return the same class.

    Args:
        fields: The allowed filter fields for the run's domains (already resolved by the
            node).

    Returns:
        A pydantic model with ``search_query`` and one optional typed field per valid,
        uniquely-named configured filter; its ``to_metadata_filter()`` returns the set
        fields as one DSL filter.
    """
    usable = _usable_fields(fields)
    return _build(tuple((f.name, f.description, f.value_type) for f in usable))
