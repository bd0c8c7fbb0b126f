"""Unit and property tests of the filter DSL: validation, matcher, translations, helpers."""

from __future__ import annotations

import logging
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.config import FilterFieldInfo
from klea_utils.stores.exceptions import MetadataFilterError, MissingExtraError
from klea_utils.stores.filters import (
    FIELD_OPERATORS,
    LOGICAL_OPERATORS,
    filter_docs_by_metadata,
    normalize_config_filters,
    qdrant_payload_filter,
    restrict_metadata_filter,
    to_chroma_filter,
    to_pgvector_filter,
    to_qdrant_filter,
    translate_metadata_filter,
    translation_is_exact,
    validate_metadata_filter,
)
from langchain_core.documents import Document
from qdrant_client import models
from retrieval_support import filter_trees

# ----------------------------------------------------------------- the seed's examples


def test_seed_constants() -> None:
    assert (
        frozenset({"$contains", "$eq", "$gt", "$gte", "$in", "$lt", "$lte", "$ne", "$nin"})
        == FIELD_OPERATORS
    )
    assert frozenset({"$and", "$or"}) == LOGICAL_OPERATORS


def test_seed_example_validate() -> None:
    assert validate_metadata_filter({"year": {"$gte": 2020, "$lte": 2025}}) == {
        "$and": [{"year": {"$gte": 2020}}, {"year": {"$lte": 2025}}]
    }


def test_seed_example_filter_docs() -> None:
    docs = [
        Document(page_content="a", metadata={"authors": ["Magee"]}),
        Document(page_content="b", metadata={"authors": ["Jones"]}),
    ]
    assert filter_docs_by_metadata(docs, {"authors": {"$contains": "Magee"}}) == [docs[0]]


def test_seed_example_normalize_config_filters() -> None:
    fields = [
        FilterFieldInfo(name="repository_type", description="...", value_type="string"),
        FilterFieldInfo(name="tags", description="...", value_type="list"),
    ]
    assert normalize_config_filters(
        {"repository_type": ["github", "dandi"], "tags": "moose"}, fields
    ) == [{"repository_type": {"$in": ["github", "dandi"]}}, {"tags": {"$contains": "moose"}}]


def test_seed_example_restrict() -> None:
    f = {"$and": [{"journal": {"$eq": "nature"}}, {"username": {"$eq": "padraig"}}]}
    assert restrict_metadata_filter(f, {"journal"}) == {"journal": {"$eq": "nature"}}


def test_seed_examples_chroma_pgvector_translate() -> None:
    f = {"authors": {"$contains": "Magee"}}
    assert to_chroma_filter(f) == {"authors": {"$contains": "Magee"}}
    assert to_pgvector_filter(f) == {"authors": {"$like": "%Magee%"}}
    assert translate_metadata_filter("chroma:/data/store", f) == {"authors": {"$contains": "Magee"}}


def test_seed_example_qdrant() -> None:
    expected = models.Filter(
        must=[
            models.Filter(must=[models.FieldCondition(key="year", range=models.Range(gte=2020.0))]),
            models.Filter(must=[models.FieldCondition(key="year", range=models.Range(lte=2025.0))]),
        ]
    )
    assert to_qdrant_filter({"year": {"$gte": 2020, "$lte": 2025}}) == expected


# ----------------------------------------------------------------- validation errors


@pytest.mark.parametrize(
    ("bad", "where", "says"),
    [
        ({}, "<top level>", "empty"),
        ("year", "<top level>", "must be a dict"),
        ({"year": {"$foo": 1}}, "year", "unknown operator '$foo'"),
        ({"year": {}}, "year", "empty"),
        ({"$and": [{"a": 1}, {"b": {"$gt": "x"}}]}, "$and[1].b.$gt", "must be a number"),
        ({"$or": []}, "$or", "non-empty list"),
        ({"$or": {"a": 1}}, "$or", "non-empty list"),
        ({"$not": {"a": 1}}, "$not", "not a combinator"),
        ({"a": [1, 2]}, "a", "bare list is ambiguous"),
        ({"a": {"$in": [1, "x"]}}, "a.$in", "mixes strings and numbers"),
        ({"a": {"$in": []}}, "a.$in", "non-empty list"),
        ({"a": {"$nin": "x"}}, "a.$nin", "non-empty list"),
        ({"a": {"$in": [None]}}, "a.$in[0]", "string or a number"),
        ({"a": {"$eq": None}}, "a.$eq", "string, a number or a boolean"),
        ({"a": {"$eq": float("nan")}}, "a.$eq", "finite"),
        ({"a": {"$gt": True}}, "a.$gt", "must be a number"),
        ({"a": {"$contains": ["x"]}}, "a.$contains", "string or a number"),
        ({"$and": [{"a": 1}, {"": 2}]}, "$and[1]", "non-empty string"),
        ({"$or": [{"a": 1}, "b"]}, "$or[1]", "must be a dict"),
    ],
)
def test_malformed_filters_name_the_clause(bad: Any, where: str, says: str) -> None:
    with pytest.raises(MetadataFilterError) as info:
        validate_metadata_filter(bad)
    assert f"clause {where!r}" in str(info.value)
    assert says in str(info.value)
    assert isinstance(info.value, ValueError)


def test_every_entry_point_rejects_malformed_filters() -> None:
    bad = {"year": {"$between": [1, 2]}}
    for fn in (to_chroma_filter, to_pgvector_filter, to_qdrant_filter, validate_metadata_filter):
        with pytest.raises(ValueError, match=r"\$between"):
            fn(bad)
    with pytest.raises(ValueError, match=r"\$between"):
        filter_docs_by_metadata([], bad)
    with pytest.raises(ValueError, match=r"\$between"):
        restrict_metadata_filter(bad, {"year"})


def test_canonical_form_flattens_and_collapses() -> None:
    f = {"$and": [{"$and": [{"a": 1}, {"b": 2}]}, {"$or": [{"c": 3}]}], "d": {"$ne": 4}}
    assert validate_metadata_filter(f) == {
        "$and": [
            {"a": {"$eq": 1}},
            {"b": {"$eq": 2}},
            {"c": {"$eq": 3}},
            {"d": {"$ne": 4}},
        ]
    }


def test_validation_does_not_alias_the_input() -> None:
    values = ["a", "b"]
    out = validate_metadata_filter({"s": {"$in": values}})
    out["s"]["$in"].append("c")
    assert values == ["a", "b"]


# ----------------------------------------------------------------- matcher semantics

DOCS = [
    Document("0", metadata={"s": "a", "n": 1, "l": ["x", "y"]}),
    Document("1", metadata={"s": "b", "n": 2.5, "l": ["y"]}),
    Document("2", metadata={"n": 2}),
    Document("3", metadata={"s": None, "n": "2", "l": "x"}),
]


def hits(f: dict[str, Any]) -> list[str]:
    return [d.page_content for d in filter_docs_by_metadata(DOCS, f)]


@pytest.mark.parametrize(
    ("f", "expected"),
    [
        ({"s": {"$ne": "a"}}, ["1"]),  # missing or null never matches, even $ne
        ({"s": {"$nin": ["a"]}}, ["1"]),
        ({"n": {"$eq": 1.0}}, ["0"]),  # numbers compare numerically
        ({"n": {"$eq": 2}}, ["2"]),  # "2" is a string: another kind never equals
        ({"n": {"$ne": 2}}, ["0", "1"]),  # ...nor differs
        ({"n": {"$in": ["2"]}}, ["3"]),
        ({"n": {"$gt": 1}}, ["1", "2"]),
        ({"n": {"$lte": 2}}, ["0", "2"]),
        ({"l": {"$contains": "x"}}, ["0", "3"]),  # a scalar is a one-element list
        ({"l": {"$eq": "y"}}, []),  # comparisons do not look inside lists
        ({"s": True}, []),
        ({"$or": [{"s": "a"}, {"n": 2}]}, ["0", "2"]),
        ({"$and": [{"l": {"$contains": "y"}}, {"n": {"$gte": 2}}]}, ["1"]),
    ],
)
def test_matcher_semantics(f: dict[str, Any], expected: list[str]) -> None:
    assert hits(f) == expected


def test_booleans_are_not_numbers() -> None:
    docs = [Document("t", metadata={"b": True}), Document("1", metadata={"b": 1})]
    assert [d.page_content for d in filter_docs_by_metadata(docs, {"b": True})] == ["t"]
    assert [d.page_content for d in filter_docs_by_metadata(docs, {"b": {"$eq": 1}})] == ["1"]


# ----------------------------------------------------------------- property tests

scalars = st.one_of(st.sampled_from(["a", "b", "c"]), st.integers(-2, 2), st.sampled_from([0.5]))
field_names = st.sampled_from(["s", "n", "l"])
leaf = st.one_of(
    st.builds(lambda k, v: {k: v}, field_names, scalars),
    st.builds(
        lambda k, op, v: {k: {op: v}},
        field_names,
        st.sampled_from(["$eq", "$ne", "$contains"]),
        scalars,
    ),
    st.builds(
        lambda k, op, v: {k: {op: v}},
        field_names,
        st.sampled_from(["$gt", "$gte", "$lt", "$lte"]),
        st.integers(-2, 3),
    ),
    st.builds(
        lambda k, op, v: {k: {op: v}},
        field_names,
        st.sampled_from(["$in", "$nin"]),
        st.one_of(
            st.lists(st.sampled_from("abc"), min_size=1, max_size=3),
            st.lists(st.integers(-2, 2), min_size=1, max_size=3),
        ),
    ),
)
dsl = filter_trees(leaf, max_leaves=8)
metadata = st.dictionaries(
    field_names,
    st.one_of(scalars, st.lists(st.sampled_from("abc"), min_size=1, max_size=3)),
)


def _is_canonical(f: dict[str, Any]) -> bool:
    if len(f) != 1:
        return False
    ((key, value),) = f.items()
    if key in LOGICAL_OPERATORS:
        return len(value) >= 2 and all(_is_canonical(s) and key not in s for s in value)
    return isinstance(value, dict) and len(value) == 1 and set(value) <= FIELD_OPERATORS


@given(f=dsl)
def test_canonical_form_is_canonical_and_idempotent(f: dict[str, Any]) -> None:
    canonical = validate_metadata_filter(f)
    assert _is_canonical(canonical)
    assert validate_metadata_filter(canonical) == canonical


@given(f=dsl, metas=st.lists(metadata, max_size=6))
def test_normalizing_keeps_the_meaning(f: dict[str, Any], metas: list[dict[str, Any]]) -> None:
    docs = [Document(str(i), metadata=m) for i, m in enumerate(metas)]
    assert filter_docs_by_metadata(docs, f) == filter_docs_by_metadata(
        docs, validate_metadata_filter(f)
    )


@given(a=dsl, b=dsl, metas=st.lists(metadata, max_size=6))
def test_combinators_are_intersection_and_union(
    a: dict[str, Any], b: dict[str, Any], metas: list[dict[str, Any]]
) -> None:
    docs = [Document(str(i), metadata=m) for i, m in enumerate(metas)]
    ids_a = {d.page_content for d in filter_docs_by_metadata(docs, a)}
    ids_b = {d.page_content for d in filter_docs_by_metadata(docs, b)}
    both = {d.page_content for d in filter_docs_by_metadata(docs, {"$and": [a, b]})}
    either = {d.page_content for d in filter_docs_by_metadata(docs, {"$or": [a, b]})}
    assert both == ids_a & ids_b
    assert either == ids_a | ids_b


@given(f=dsl, allowed=st.sets(field_names))
def test_restrict_only_keeps_allowed_fields(f: dict[str, Any], allowed: set[str]) -> None:
    out = restrict_metadata_filter(f, allowed)
    if out is not None:
        from klea_utils.stores._retrieval.filter_dsl import referenced_fields

        assert referenced_fields(validate_metadata_filter(out)) <= allowed
    everything = restrict_metadata_filter(f, {"s", "n", "l"})
    assert everything is not None
    assert validate_metadata_filter(everything) == validate_metadata_filter(f)
    if list(f) == ["$and"] and len(f["$and"]) == 1:
        assert everything == f["$and"][0]  # a single surviving clause, as it was given
    elif len(f) == 1:
        assert everything == f  # a single clause, or the $and/$or given, as it was


# ----------------------------------------------------------------- restrict / normalize


def test_restrict_keeps_or_whole_or_drops_it() -> None:
    f = {"$or": [{"journal": "nature"}, {"username": "p"}]}
    assert restrict_metadata_filter(f, {"journal"}) is None
    assert restrict_metadata_filter(f, {"journal", "username"}) == f
    assert restrict_metadata_filter(None, {"journal"}) is None
    assert restrict_metadata_filter({"year": 2020}, set()) is None


def test_restrict_decomposes_top_level_and() -> None:
    f = {"$and": [{"a": 1}, {"b": 2}, {"$or": [{"a": 3}, {"c": 4}]}, {"a": {"$ne": 5}}]}
    assert restrict_metadata_filter(f, {"a"}) == {"$and": [{"a": 1}, {"a": {"$ne": 5}}]}


def test_restrict_returns_a_single_clause_as_is() -> None:
    # Seed: "recombines the survivors (a single clause returned as-is, several wrapped in
    # $and)".
    assert restrict_metadata_filter({"flag": False}, {"flag"}) == {"flag": False}
    f = {"$and": [{"flag": False}, {"user": "p"}]}
    assert restrict_metadata_filter(f, {"flag"}) == {"flag": False}
    assert restrict_metadata_filter({"flag": False, "user": "p"}, {"flag"}) == {"flag": False}
    # "the multi-value $and clauses emitted by normalize_config_filters() are kept or
    # dropped as a unit"
    tags = {"$and": [{"tags": {"$contains": "a"}}, {"tags": {"$contains": "b"}}]}
    assert restrict_metadata_filter({"$and": [tags, {"user": "p"}]}, {"tags"}) == tags


FIELDS = [
    FilterFieldInfo(name="journal", description="journal"),
    FilterFieldInfo(name="year", description="year", value_type="int"),
    FilterFieldInfo(name="score", description="score", value_type="float"),
    FilterFieldInfo(name="tags", description="tags", value_type="list"),
]


def test_normalize_config_filters_value_types() -> None:
    out = normalize_config_filters(
        {
            "journal": "nature",
            "year": [2020.0, 2021],
            "score": 0.5,
            "tags": ["a", "b"],
        },
        FIELDS,
    )
    assert out == [
        {"journal": {"$eq": "nature"}},
        {"year": {"$in": [2020, 2021]}},
        {"score": {"$eq": 0.5}},
        {"$and": [{"tags": {"$contains": "a"}}, {"tags": {"$contains": "b"}}]},
    ]


def test_normalize_config_filters_operator_dicts_and_empties() -> None:
    out = normalize_config_filters(
        {"year": {"$gte": 2020, "$lte": 2024}, "tags": [], "journal": None}, FIELDS
    )
    assert out == [{"$and": [{"year": {"$gte": 2020}}, {"year": {"$lte": 2024}}]}]
    assert normalize_config_filters({}, FIELDS) == []


def test_normalize_config_filters_ignores_unknown_fields(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        assert normalize_config_filters({"username": "padraig"}, FIELDS) == []
    assert "username" in caplog.text


@pytest.mark.parametrize(
    ("filters", "says"),
    [
        ({"year": "2020"}, "'year' (int) expects an integer"),
        ({"year": 2020.5}, "'year' (int) expects an integer"),
        ({"year": [2020, "x"]}, "year[1]"),
        ({"journal": 3}, "'journal' (string) expects a string"),
        ({"score": "high"}, "'score' (float) expects a number"),
        ({"tags": {"$regex": "x"}}, "unknown operator '$regex'"),
        ({"tags": [None]}, "tags[0]"),
    ],
)
def test_normalize_config_filters_rejects_bad_operands(filters: dict[str, Any], says: str) -> None:
    with pytest.raises(MetadataFilterError, match=None) as info:
        normalize_config_filters(filters, FIELDS)
    assert says in str(info.value)


# ----------------------------------------------------------------- translations


CHROMA = "chroma:/data/store"
PGVECTOR = "pgvector:postgresql://h/db"


def test_chroma_translation_rewrites_numeric_negation_and_fractions() -> None:
    def chroma(f: dict[str, Any]) -> Any:
        return translate_metadata_filter(CHROMA, f)

    assert chroma({"n": {"$ne": 2}}) == {"$or": [{"n": {"$gt": 2}}, {"n": {"$lt": 2}}]}
    assert chroma({"n": {"$eq": 0.5}}) == {
        "$and": [{"n": {"$eq": 0.5}}, {"n": {"$gt": 0}}, {"n": {"$lt": 1}}]
    }
    assert chroma({"n": {"$in": [1, 2.0]}}) == {"n": {"$in": [1.0, 2.0]}}
    assert chroma({"s": {"$nin": ["a"]}}) == {"s": {"$nin": ["a"]}}


def test_pgvector_translation_escapes_like_patterns_and_in_lists() -> None:
    def pgvector(f: dict[str, Any]) -> Any:
        return translate_metadata_filter(PGVECTOR, f)

    assert pgvector({"t": {"$contains": 'a_b%"c'}}) == {"t": {"$like": '%a\\_b\\%\\\\"c%'}}
    assert pgvector({"n": {"$in": [1, 2]}}) == {"$or": [{"n": {"$eq": 1}}, {"n": {"$eq": 2}}]}
    assert pgvector({"n": {"$nin": [1]}}) == {"n": {"$ne": 1}}
    assert pgvector({"s": {"$in": ["a"]}}) == {"s": {"$in": ["a"]}}
    assert pgvector({"has-hyphen": 1}) == {"has-hyphen": {"$eq": 1}}


@given(dsl)
def test_chroma_filter_is_the_normalized_form_unchanged(f: dict[str, Any]) -> None:
    # Seed: the Chroma translation "validates the filter and returns the normalized form
    # unchanged".
    assert to_chroma_filter(f) == validate_metadata_filter(f)


@given(dsl)
def test_pgvector_filter_is_the_normalized_form_but_contains(f: dict[str, Any]) -> None:
    # Seed: PGVector "accepts the canonical normalized form directly. The one gap is
    # $contains".
    normalized = validate_metadata_filter(f)
    translated = to_pgvector_filter(f)

    def walk(a: dict[str, Any], b: dict[str, Any]) -> None:
        ((key, value),) = a.items()
        if key in ("$and", "$or"):
            assert list(b) == [key]
            for x, y in zip(value, b[key], strict=True):
                walk(x, y)
            return
        ((op, operand),) = value.items()
        if op == "$contains":
            assert b == {key: {"$like": f"%{operand}%"}}
        else:
            assert b == a

    walk(normalized, translated)


def test_seed_departures_named_in_the_issue_are_gone() -> None:
    assert to_chroma_filter({"n": {"$ne": 1999}}) == {"n": {"$ne": 1999}}
    assert to_chroma_filter({"n": {"$gt": 0.5}}) == {"n": {"$gt": 0.5}}
    assert to_pgvector_filter({"n": {"$in": [1, 2]}}) == {"n": {"$in": [1, 2]}}
    # Seed: raises only "When the filter is not well-formed".
    assert to_pgvector_filter({"has-hyphen": 1}) == {"has-hyphen": {"$eq": 1}}


def test_qdrant_conditions() -> None:
    def cond(**kwargs: Any) -> models.Filter:
        return models.Filter(must=[models.FieldCondition(key="k", **kwargs)])

    assert to_qdrant_filter({"k": "a"}) == cond(match=models.MatchValue(value="a"))
    assert to_qdrant_filter({"k": {"$contains": 3}}) == cond(match=models.MatchValue(value=3))
    assert to_qdrant_filter({"k": {"$eq": 0.5}}) == cond(range=models.Range(gte=0.5, lte=0.5))
    assert to_qdrant_filter({"k": {"$in": ["a", "b"]}}) == cond(
        match=models.MatchAny(any=["a", "b"])
    )
    assert to_qdrant_filter({"k": {"$nin": [1]}}) == cond(
        match=models.MatchExcept(**{"except": [1]})
    )
    assert to_qdrant_filter({"k": {"$ne": "a"}}) == cond(
        match=models.MatchExcept(**{"except": ["a"]})
    )
    assert to_qdrant_filter({"k": {"$ne": True}}) == cond(match=models.MatchValue(value=False))
    either = to_qdrant_filter({"$or": [{"k": 1}, {"k": 2}]})
    assert either.should is not None
    assert len(either.should) == 2


def test_qdrant_payload_prefix() -> None:
    plain = to_qdrant_filter({"year": 2020})
    prefixed = qdrant_payload_filter({"year": 2020})
    assert plain.must[0].key == "year"
    assert prefixed.must[0].key == "metadata.year"
    assert to_qdrant_filter({"year": 2020}, key_prefix="metadata.") == prefixed
    assert translate_metadata_filter("qdrant:http://localhost:6333", {"year": 2020}) == prefixed


def test_qdrant_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "qdrant_client.models", None)
    with pytest.raises(MissingExtraError, match=r"klea-retrieval\[qdrant\]"):
        to_qdrant_filter({"year": 2020})


def test_translate_dispatch_and_unknown_schemes() -> None:
    f = {"authors": {"$contains": "Magee"}}
    assert translate_metadata_filter("pgvector:postgresql://h/db", f) == to_pgvector_filter(f)
    for path in ("/data/store", "faiss:/data", ":x"):
        with pytest.raises(ValueError, match="scheme"):
            translate_metadata_filter(path, f)


def test_translation_is_exact() -> None:
    contains = {"authors": {"$contains": "Magee"}}
    assert not translation_is_exact("pgvector:postgresql://h/db", contains)
    assert translation_is_exact("chroma:/d", contains)
    assert not translation_is_exact("chroma:/d", {"s": {"$ne": "a"}})
    assert not translation_is_exact("chroma:/d", {"$or": [{"a": 1}, {"s": {"$nin": ["a"]}}]})
    assert translation_is_exact("chroma:/d", {"n": {"$ne": 1}})
    assert translation_is_exact("qdrant:/d", {"s": {"$ne": "a"}})
    with pytest.raises(ValueError, match="scheme"):
        translation_is_exact("x", contains)
