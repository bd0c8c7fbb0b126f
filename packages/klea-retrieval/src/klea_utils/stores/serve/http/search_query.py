"""The query string of ``GET /api/search``: the search parameters, flat.

A query string holds no nested object, so :func:`search_query_model` lays the fields of
:class:`~klea_utils.stores.serve.core.params.SearchParams`'s ``filters`` beside the others,
where ``filters`` stands. A list is one name repeated, in the singular
(``?author=A&author=B``), and the query is ``q``, as the page writes them
(:data:`QUERY_NAMES`). The model is built for one server's
:class:`~klea_utils.stores.serve.core.options.ServeLimits`, so the OpenAPI schema declares
them and FastAPI answers 422 past them: the query's length, the number of items of a list
and the length of each. :func:`search_params` turns the parameters back into a
``SearchParams``.
"""

from __future__ import annotations

from typing import Annotated, Any

from klea_utils.stores.serve.core.options import ServeLimits
from klea_utils.stores.serve.core.params import SearchFilters, SearchParams
from pydantic import BaseModel, Field, create_model
from pydantic.fields import FieldInfo

__all__ = ["QUERY_NAMES", "SearchQuery", "search_params", "search_query_model"]

QUERY_NAMES = {
    "query": "q",
    "authors": "author",
    "journals": "journal",
    "tags": "tag",
    "collections": "collection",
    "languages": "language",
}
"""Query-string names of the fields whose name differs there."""


class SearchQuery(BaseModel):
    """``GET /api/search``'s parameters (unknown ones are ignored, as FastAPI always has)."""


def _query_field(name: str, info: FieldInfo, limits: ServeLimits) -> tuple[Any, Any]:
    """The field ``name`` of the parameters as a query parameter for a server with
    ``limits``: the text's length limited, a list one name repeated (its items and their
    lengths limited), any other field's type, constraints and default kept."""
    alias, description = QUERY_NAMES.get(name), info.description
    if info.annotation is str:  # the query
        limited = Field(min_length=1, max_length=limits.max_query_chars)
        return Annotated[str, limited], Field(alias=alias, description=description)
    if info.annotation == tuple[str, ...]:
        item = Annotated[str, Field(min_length=1, max_length=limits.max_item_chars)]
        limited = Field(max_length=limits.max_list_items)
        annotation = Annotated[tuple[item, ...] | None, limited]
        return annotation, Field(None, alias=alias, description=description)
    default = info.get_default(call_default_factory=True)
    kept = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
    return kept, Field(default, alias=alias, description=description)


def search_params(parameters: SearchQuery) -> SearchParams:
    """The :class:`SearchParams` the query-string ``parameters`` ask for."""
    given = {name: value for name, value in parameters if value is not None}
    filters = {name: given.pop(name) for name in SearchFilters.model_fields if name in given}
    return SearchParams(**given, filters=SearchFilters(**filters))


def search_query_model(limits: ServeLimits) -> type[SearchQuery]:
    """The query-string model of ``GET /api/search`` for a server with ``limits``."""
    fields: dict[str, Any] = {}
    for name, info in SearchParams.model_fields.items():
        if name == "filters":
            for inner, inner_info in SearchFilters.model_fields.items():
                fields[inner] = _query_field(inner, inner_info, limits)
        else:
            fields[name] = _query_field(name, info, limits)
    model: type[SearchQuery] = create_model("SearchQuery", __base__=SearchQuery, **fields)
    return model
