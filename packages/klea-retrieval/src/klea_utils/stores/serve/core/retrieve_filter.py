"""The typed ``filter`` of ``retrieve``: the served domains' filter fields, as a schema.

Every domain offers :data:`DEFAULT_FILTER_FIELDS`, overridden by its own
``filter_fields``; :func:`query_schema` is the strict query schema of the merged fields
(:func:`klea_utils.stores.query_schema.build_retrieval_query_schema`), which a service
keeps. :func:`metadata_filter` turns typed filter values into the filter DSL through it,
and :func:`filter_model` is the schema without its query field, the ``RetrieveFilter``
the HTTP API and the MCP tool declare.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from klea_utils.stores.config import FilterFieldInfo, RetrieverConfig
from klea_utils.stores.query_schema import build_retrieval_query_schema
from pydantic import BaseModel, ConfigDict, Field, create_model

__all__ = [
    "DEFAULT_FILTER_FIELDS",
    "filter_fields",
    "filter_model",
    "metadata_filter",
    "query_schema",
]

DEFAULT_FILTER_FIELDS = (
    FilterFieldInfo(name="year", description="Publication year.", value_type="int"),
    FilterFieldInfo(
        name="authors", description="Author names; every one must be listed.", value_type="list"
    ),
    FilterFieldInfo(name="journal", description="Journal or venue name.", value_type="string"),
    FilterFieldInfo(name="file_name", description="Source file name.", value_type="string"),
    FilterFieldInfo(
        name="keywords", description="Keywords; every one must match.", value_type="list"
    ),
)
"""Filter fields every domain offers; a domain's own ``filter_fields`` override by name."""


def filter_fields(config: RetrieverConfig) -> list[FilterFieldInfo]:
    """The default filter fields, overridden by the domains' configured ones."""
    fields = {f.name: f for f in DEFAULT_FILTER_FIELDS}
    for domain in config.domains.values():
        for f in domain.filter_fields:
            fields[f.name] = f
    return list(fields.values())


def query_schema(config: RetrieverConfig) -> type[BaseModel]:
    """The strict query schema of the filter fields of ``config``'s domains."""
    return build_retrieval_query_schema(filter_fields(config))


def metadata_filter(
    schema: type[BaseModel], values: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The DSL filter for typed filter ``values``, the fields of the query ``schema``.

    Raises:
        ValueError: When a value does not fit its field (pydantic's message).
    """
    if not values:
        return None
    model: Any = schema.model_validate({"search_query": "", **values})
    result: dict[str, Any] | None = model.to_metadata_filter()
    return result


@lru_cache(maxsize=8)
def filter_model(query_schema: type[BaseModel]) -> type[BaseModel]:
    """The typed ``filter`` of ``retrieve``: ``query_schema`` without its query field.

    Built once per query schema (a service builds its schema once; a reload makes a new
    one), not on every request that validates a filter.
    """
    fields: dict[str, Any] = {
        name: (info.annotation, Field(default=None, description=info.description))
        for name, info in query_schema.model_fields.items()
        if name != "search_query"
    }
    return create_model(
        "RetrieveFilter",
        __config__=ConfigDict(extra="forbid"),
        __doc__="Metadata constraints; leave out what the question does not constrain.",
        **fields,
    )
