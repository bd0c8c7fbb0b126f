"""Tests of the strict-safe retrieval query schema."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.config import FilterFieldInfo
from klea_utils.stores.filters import validate_metadata_filter
from klea_utils.stores.query_schema import FloatRange, IntRange, build_retrieval_query_schema
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

FIELDS = [
    FilterFieldInfo(name="year", description="Publication year", value_type="int"),
    FilterFieldInfo(name="score", description="Score", value_type="float"),
    FilterFieldInfo(name="journal", description="Journal"),
    FilterFieldInfo(name="authors", description="Authors", value_type="list"),
]


def _objects(node: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_objects(item))
    return found


def test_ranges_match_the_seed() -> None:
    assert IntRange().model_dump() == {"eq": None, "gte": None, "lte": None}
    assert FloatRange(gte=1).gte == 1.0
    assert IntRange.model_config == {}
    assert FloatRange.model_config == {}
    with pytest.raises(ValidationError, match="greater than lte"):
        IntRange(gte=5, lte=1)


def test_schema_fields_and_types() -> None:
    model = build_retrieval_query_schema(FIELDS)
    assert issubclass(model, BaseModel)
    assert list(model.model_fields) == ["search_query", "year", "score", "journal", "authors"]
    assert model.model_fields["search_query"].is_required()
    assert all(not model.model_fields[f.name].is_required() for f in FIELDS)
    assert model.model_fields["year"].description == "Publication year"
    query = model.model_validate(
        {"search_query": "q", "year": {"gte": 2020}, "score": 0.5, "authors": ["Sinha"]}
    )
    assert isinstance(query.year, IntRange)
    assert query.journal is None
    with pytest.raises(ValidationError):
        model.model_validate({"search_query": "q", "filters": {"year": 2020}})
    with pytest.raises(ValidationError):
        model.model_validate({"search_query": "q", "authors": "Sinha"})


def test_schema_is_strict_safe() -> None:
    model = build_retrieval_query_schema(FIELDS)
    schema = model.model_json_schema()
    objects = _objects(schema)
    assert len(objects) == 3  # the query, IntRange, FloatRange
    assert all(obj["additionalProperties"] is False for obj in objects)
    tool = convert_to_openai_tool(model)
    assert all(o["additionalProperties"] is False for o in _objects(tool["function"]))


def test_schema_is_cached_per_field_set() -> None:
    first = build_retrieval_query_schema(FIELDS)
    assert build_retrieval_query_schema([f.model_copy() for f in FIELDS]) is first
    assert build_retrieval_query_schema(FIELDS[:2]) is not first
    assert list(build_retrieval_query_schema([]).model_fields) == ["search_query"]


def test_unusable_and_repeated_names_are_skipped(caplog: pytest.LogCaptureFixture) -> None:
    fields = [
        FilterFieldInfo(name="bad name", description="d"),
        FilterFieldInfo(name="search_query", description="d"),
        FilterFieldInfo(name="_hidden", description="d"),
        FilterFieldInfo(name="year", description="first", value_type="int"),
        FilterFieldInfo(name="year", description="second"),
    ]
    with caplog.at_level(logging.WARNING):
        model = build_retrieval_query_schema(fields)
    assert list(model.model_fields) == ["search_query", "year"]
    assert model.model_fields["year"].description == "first"
    assert "'bad name'" in caplog.text
    assert "configured twice" in caplog.text


def test_to_metadata_filter() -> None:
    model = build_retrieval_query_schema(FIELDS)
    query: Any = model(
        search_query="q",
        year={"gte": 2020, "lte": 2024},
        score=FloatRange(eq=0.5),
        journal=["nature", "science"],
        authors=["Sinha", "Gleeson"],
    )
    assert query.to_metadata_filter() == {
        "$and": [
            {"year": {"$gte": 2020}},
            {"year": {"$lte": 2024}},
            {"score": {"$eq": 0.5}},
            {"journal": {"$in": ["nature", "science"]}},
            {"authors": {"$contains": "Sinha"}},
            {"authors": {"$contains": "Gleeson"}},
        ]
    }
    empty: Any = model(search_query="q", year=IntRange(), authors=[])
    assert empty.to_metadata_filter() is None
    one: Any = model(search_query="q", year=2021)
    assert one.to_metadata_filter() == {"year": {"$eq": 2021}}


@given(
    year=st.none() | st.integers(1900, 2030) | st.lists(st.integers(1900, 2030), max_size=3),
    journal=st.none() | st.text(max_size=5) | st.lists(st.text(max_size=5), max_size=3),
    authors=st.none() | st.lists(st.text(max_size=5), max_size=3),
)
def test_to_metadata_filter_is_always_canonical(year: Any, journal: Any, authors: Any) -> None:
    model = build_retrieval_query_schema(FIELDS)
    query: Any = model(search_query="q", year=year, journal=journal, authors=authors)
    out = query.to_metadata_filter()
    if out is not None:
        assert validate_metadata_filter(out) == out
