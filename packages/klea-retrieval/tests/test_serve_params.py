"""The search parameters: one model (``SearchParams``), read from ``GET /api/search``'s query
string with the server's limits, and the MCP tool's arguments built on the same fields."""

from __future__ import annotations

import asyncio

import pytest
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.serve import (
    LiveService,
    SearchFilters,
    SearchParams,
    ServeLimits,
    ServeOptions,
    StartingService,
    build_app,
)
from klea_utils.stores.serve.http.search_query import search_params, search_query_model
from pydantic import ValidationError

CONFIG = RetrieverConfig.model_validate(
    {"domains": {"neuro": {"bm25_stores": [{"name": "b", "path": "never-read.pkl"}]}}}
)
QUERY_STRING = [
    "q",
    "mode",
    "limit",
    "year_from",
    "year_to",
    "author",
    "journal",
    "tag",
    "collection",
    "language",
    "any_words",
    "group",
]
"""``GET /api/search``'s parameters, in order, as the page and API callers write them."""


def _app(limits: ServeLimits):  # the stores are never opened: the schema needs none
    options = ServeOptions(config=CONFIG, limits=limits)
    return build_app(LiveService(StartingService(options), lambda: options))


def test_the_query_string_names_the_fields_of_search_params_and_applies_the_limits():
    limits = ServeLimits(max_query_chars=300, max_list_items=3, max_item_chars=40)
    search = _app(limits).openapi()["paths"]["/api/search"]["get"]
    parameters = {p["name"]: p for p in search["parameters"]}
    assert list(parameters) == QUERY_STRING
    assert all(p["in"] == "query" for p in parameters.values())
    assert [name for name, p in parameters.items() if p["required"]] == ["q"]
    q = parameters["q"]["schema"]
    assert (q["minLength"], q["maxLength"]) == (1, 300)
    for name in ("author", "journal", "tag", "collection", "language"):
        listed = parameters[name]["schema"]["anyOf"][0]
        assert listed["type"] == "array"
        assert listed["maxItems"] == 3
        assert (listed["items"]["minLength"], listed["items"]["maxLength"]) == (1, 40)
    limit = parameters["limit"]["schema"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 50, 10)
    assert parameters["group"]["schema"]["enum"] == ["passage", "paper"]


def test_a_query_string_becomes_search_params_with_its_filters():
    model = search_query_model(ServeLimits())
    given = model.model_validate(
        {"q": "golgi", "author": ["A", "B"], "year_to": "2020", "group": "paper", "other": "x"}
    )
    assert search_params(given) == SearchParams(
        query="golgi",
        group="paper",
        filters=SearchFilters(year_to=2020, authors=("A", "B")),
    )
    assert search_params(model.model_validate({"q": "x"})) == SearchParams(query="x")


@pytest.mark.parametrize(
    "values",
    [
        {"query": "x", "limit": 0},
        {"query": "x", "limit": 51},
        {"query": "x", "mode": "fuzzy"},
        {"query": "x", "group": "journal"},
        {"query": "x", "authors": ["A"]},  # a filter belongs in filters
        {"query": "x", "filters": {"author": ["A"]}},
    ],
)
def test_search_params_refuse_what_no_server_accepts(values):
    with pytest.raises(ValidationError):
        SearchParams.model_validate(values)


def test_search_params_are_values():
    params = SearchParams(query="x", filters=SearchFilters(tags=("t",)))
    assert params == SearchParams.model_validate({"query": "x", "filters": {"tags": ["t"]}})
    with pytest.raises(ValidationError):
        params.limit = 3  # type: ignore[misc]


def test_the_mcp_search_tool_takes_the_fields_of_search_params():
    from klea_utils.stores.serve import build_mcp_server

    options = ServeOptions(config=CONFIG)
    server = build_mcp_server(StartingService(options))
    tools = {tool.name: tool for tool in asyncio.run(server.list_tools())}
    schema = tools["search"].input_schema
    assert list(schema["properties"]) == ["query", "mode", "limit", "filters", "group"]
    assert schema["required"] == ["query"]
    filters = schema["$defs"]["SearchFilters"]
    assert list(filters["properties"]) == list(SearchFilters.model_fields)
    assert filters["additionalProperties"] is False
    for name in ("query", "mode", "limit", "group"):
        described = SearchParams.model_fields[name].description
        assert schema["properties"][name]["description"] == described
