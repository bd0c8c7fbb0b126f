"""Filter conformance suite: one DSL filter, four engines, one document set.

The same small corpus (scalar str/int/float fields, a list-of-strings field, every field
missing from some documents) is stored once per session in a real Chroma (persistent,
embedded), Qdrant (local mode, through ``langchain_qdrant``) and PGVector (PostgreSQL from
``pgserver``) collection. Hypothesis generates well-typed filters over every operator and
combinator; each backend's translated filter must return exactly the documents that
``filter_docs_by_metadata`` returns, except for the two documented approximations
(``translation_is_exact`` is False), which are checked against a model of what they do:

- PGVector ``$contains`` is a substring match on the value's JSON text;
- Chroma ``$ne``/``$nin`` with string operands also match documents lacking the field.

The embeddings are FAKE (``HashEmbeddings``): filtering does not depend on the vectors,
and every search asks for more results than the corpus holds.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores._retrieval.filter_dsl import canonicalize, is_number, split_leaf
from klea_utils.stores.filters import (
    filter_docs_by_metadata,
    qdrant_payload_filter,
    to_pgvector_filter,
    to_qdrant_filter,
    translate_metadata_filter,
    translation_is_exact,
)
from langchain_core.documents import Document
from retrieval_backends import (
    FAKE_DIMENSIONS,
    HashEmbeddings,
    add_documents,
    close_pgvector,
    open_chroma,
    open_pgvector,
    open_qdrant,
    search_all,
)
from retrieval_support import filter_trees

pytestmark = pytest.mark.slow

STRINGS = ["alpha", "beta", "gamma", "al"]
INTS = [0, 1, 2, 3, 5]
FLOATS = [-1.75, 0.5, 1.25, 2.5]
# "x" is a substring of "xy": PGVector's $contains approximation over-matches on it.
ELEMENTS = ["x", "xy", "y", "z"]
N_DOCS = 30
PG = "pgvector:postgresql://x"


def make_corpus() -> list[Document]:
    """Deterministic documents; each field is missing from roughly a quarter of them."""
    rng = random.Random(20240611)
    docs = []
    for n in range(N_DOCS):
        metadata: dict[str, Any] = {"doc": f"d{n}"}
        if rng.random() < 0.75:
            metadata["s"] = rng.choice(STRINGS)
        if rng.random() < 0.75:
            metadata["i"] = rng.choice(INTS)
        if rng.random() < 0.75:
            metadata["f"] = rng.choice(FLOATS)
        if rng.random() < 0.75:
            metadata["l"] = rng.sample(ELEMENTS, rng.randint(1, 3))
        docs.append(Document(page_content=f"document number {n}", metadata=metadata))
    return docs


CORPUS = make_corpus()
K = N_DOCS + 5

# --------------------------------------------------------------------- filter strategies

numbers = st.one_of(
    st.sampled_from(INTS),
    st.sampled_from(FLOATS),
    st.integers(-3, 7),
    st.floats(-3, 7, allow_nan=False).map(lambda x: round(x, 2)),
)
strings = st.one_of(st.sampled_from(STRINGS), st.sampled_from(["delta", "ALPHA", ""]))


def _field_clauses(field: str, ops: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    single = st.sampled_from(sorted(ops)).flatmap(
        lambda op: ops[op].map(lambda v: {field: {op: v}})
    )
    if "$gte" not in ops:
        return single
    # Several operators on one field: normalized to an $and of single-operator clauses.
    between = st.fixed_dictionaries({"$gte": ops["$gte"], "$lte": ops["$lte"]})
    return st.one_of(single, between.map(lambda expr: {field: expr}))


def _set_of(values: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(values, min_size=1, max_size=3)


scalar_string_ops = {
    "$eq": strings,
    "$ne": strings,
    "$in": _set_of(strings),
    "$nin": _set_of(strings),
}
numeric_ops = {
    "$eq": numbers,
    "$ne": numbers,
    "$gt": numbers,
    "$gte": numbers,
    "$lt": numbers,
    "$lte": numbers,
    "$in": _set_of(numbers),
    "$nin": _set_of(numbers),
}
leaves = st.one_of(
    _field_clauses("s", scalar_string_ops),
    st.sampled_from(STRINGS).map(lambda v: {"s": v}),  # bare value: implicit $eq
    _field_clauses("i", numeric_ops),
    _field_clauses("f", numeric_ops),
    st.sampled_from([*ELEMENTS, "w"]).map(lambda v: {"l": {"$contains": v}}),
)
filters = filter_trees(leaves, max_leaves=6)

# --------------------------------------------------------------------- approximation models


def _pg_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _model(f: dict[str, Any], metadata: dict[str, Any], leaf_rule: Callable[..., Any]) -> bool:
    ((key, value),) = f.items()
    if key == "$and":
        return all(_model(sub, metadata, leaf_rule) for sub in value)
    if key == "$or":
        return any(_model(sub, metadata, leaf_rule) for sub in value)
    decided = leaf_rule(f, metadata)
    if decided is not None:
        return bool(decided)
    return bool(filter_docs_by_metadata([Document("", metadata=metadata)], f))


def pgvector_leaf(f: dict[str, Any], metadata: dict[str, Any]) -> bool | None:
    """PGVector: $contains is a substring test on the value's JSON text."""
    field, op, operand = split_leaf(f)
    if op != "$contains":
        return None
    inner = operand if isinstance(operand, str) else json.dumps(operand)
    return field in metadata and inner in _pg_text(metadata[field])


def chroma_leaf(f: dict[str, Any], metadata: dict[str, Any]) -> bool | None:
    """Chroma: string $ne/$nin also match documents without the field."""
    field, op, operand = split_leaf(f)
    first = operand if op == "$ne" else operand[0] if op == "$nin" else None
    if op in ("$ne", "$nin") and not is_number(first) and field not in metadata:
        return True
    return None


def expected_ids(f: dict[str, Any], leaf_rule: Callable[..., Any] | None = None) -> set[str]:
    canonical = canonicalize(f)
    if leaf_rule is None:
        docs = filter_docs_by_metadata(CORPUS, canonical)
        return {d.metadata["doc"] for d in docs}
    return {d.metadata["doc"] for d in CORPUS if _model(canonical, d.metadata, leaf_rule)}


def ids(docs: list[Document]) -> set[str]:
    return {d.metadata["doc"] for d in docs}


# --------------------------------------------------------------------- the stores


@pytest.fixture(scope="module")
def stores(chroma_dir: Path, qdrant_client: Any, pg_url: str) -> Iterator[dict[str, Any]]:
    """One collection per backend holding ``CORPUS``."""
    embeddings = HashEmbeddings()
    doc_ids = [d.metadata["doc"] for d in CORPUS]
    chroma = open_chroma(str(chroma_dir), "filter-conformance", embeddings)
    qdrant = open_qdrant(qdrant_client, "filter-conformance", embeddings, FAKE_DIMENSIONS)
    pgvector = open_pgvector(pg_url, "filter_conformance", embeddings)
    for store in (chroma, qdrant, pgvector):
        add_documents(store, CORPUS, doc_ids)
    yield {"chroma": chroma, "qdrant": qdrant, "pgvector": pgvector}
    pgvector.delete_collection()
    close_pgvector(pgvector)


def test_every_backend_holds_the_corpus(stores: dict[str, Any]) -> None:
    for name, store in stores.items():
        found = search_all(store, None, K)
        assert ids(found) == {d.metadata["doc"] for d in CORPUS}, name


@given(f=filters)
def test_chroma_matches_the_reference(stores: dict[str, Any], f: dict[str, Any]) -> None:
    found = ids(search_all(stores["chroma"], translate_metadata_filter("chroma:/x", f), K))
    if translation_is_exact("chroma:/x", f):
        assert found == expected_ids(f)
    else:
        assert found == expected_ids(f, chroma_leaf)
        assert found >= expected_ids(f)


@given(f=filters)
def test_qdrant_matches_the_reference(stores: dict[str, Any], f: dict[str, Any]) -> None:
    assert translation_is_exact("qdrant:/x", f)
    found = ids(search_all(stores["qdrant"], qdrant_payload_filter(f), K))
    assert found == expected_ids(f)


@given(f=filters)
def test_pgvector_matches_the_reference(stores: dict[str, Any], f: dict[str, Any]) -> None:
    found = ids(search_all(stores["pgvector"], translate_metadata_filter(PG, f), K))
    if translation_is_exact("pgvector:postgresql://x", f):
        assert found == expected_ids(f)
    else:
        assert found == expected_ids(f, pgvector_leaf)
        assert found >= expected_ids(f)


@pytest.mark.parametrize("element", ELEMENTS)
def test_pgvector_contains_is_a_documented_superset(stores: dict[str, Any], element: str) -> None:
    f = {"l": {"$contains": element}}
    found = ids(search_all(stores["pgvector"], translate_metadata_filter(PG, f), K))
    assert found == expected_ids(f, pgvector_leaf)
    assert found >= expected_ids(f)
    if element == "x":  # "x" also occurs inside "xy": the approximation over-matches
        assert found > expected_ids(f)


def test_chroma_string_negation_matches_missing_fields(stores: dict[str, Any]) -> None:
    f = {"s": {"$ne": "alpha"}}
    missing = {d.metadata["doc"] for d in CORPUS if "s" not in d.metadata}
    assert missing
    native = translate_metadata_filter("chroma:/x", f)
    found = ids(search_all(stores["chroma"], native, K))
    assert found == expected_ids(f) | missing
    # Post-filtering with the in-memory matcher makes the result exact.
    exact = filter_docs_by_metadata(search_all(stores["chroma"], native, K), f)
    assert ids(exact) == expected_ids(f)


@pytest.mark.parametrize("f", [{"i": {"$ne": 2}}, {"f": {"$nin": [0.5, 2.5]}}])
def test_numeric_negation_never_matches_missing_fields(
    stores: dict[str, Any], f: dict[str, Any]
) -> None:
    (field,) = f
    expected = expected_ids(f)
    assert all(field in d.metadata for d in CORPUS if d.metadata["doc"] in expected)
    for path, store in (
        ("chroma:/x", stores["chroma"]),
        ("qdrant:/x", stores["qdrant"]),
        ("pgvector:postgresql://x", stores["pgvector"]),
    ):
        assert ids(search_all(store, translate_metadata_filter(path, f), K)) == expected, path


def test_qdrant_needs_the_metadata_payload_prefix(stores: dict[str, Any]) -> None:
    f = {"s": "alpha"}
    assert expected_ids(f)
    assert ids(search_all(stores["qdrant"], to_qdrant_filter(f), K)) == set()
    prefixed = to_qdrant_filter(f, key_prefix="metadata.")
    assert ids(search_all(stores["qdrant"], prefixed, K)) == expected_ids(f)


ODD_KEYS = ["has-hyphen", "a.b", "space key", 'quo"te', "back\\slash", "it's", "ünï-cødé"]
# Field names that would widen the match or run SQL if they were pasted into the query.
HOSTILE_KEYS = [
    "x') OR 1=1 --",
    'x" || true || "',
    "x'); DROP TABLE langchain_pg_embedding; --",
    '"doc" like_regex ".*" || $."doc',
    "doc == $value || true",
]


@pytest.fixture(scope="module")
def odd_pgvector(pg_url: str) -> Iterator[Any]:
    docs = [
        Document(
            page_content=f"odd {n}",
            metadata={"doc": f"o{n}", "tag-list": ["x", f"t{n}"], **dict.fromkeys(ODD_KEYS, n)},
        )
        for n in range(4)
    ]
    store = open_pgvector(pg_url, "filter_odd_keys", HashEmbeddings())
    add_documents(store, docs, [d.metadata["doc"] for d in docs])
    yield store
    store.delete_collection()
    close_pgvector(store)


@pytest.mark.parametrize("key", ODD_KEYS)
def test_pgvector_filters_on_any_field_name(odd_pgvector: Any, key: str) -> None:
    # Seed: to_pgvector_filter raises only "When the filter is not well-formed"; a name
    # such as has-hyphen is well-formed, so it is quoted, never refused.
    cases = [
        ({key: 2}, {"o2"}),
        ({key: {"$gte": 2}}, {"o2", "o3"}),
        ({key: {"$ne": 0}}, {"o1", "o2", "o3"}),
        ({key: {"$in": [1, 3]}}, {"o1", "o3"}),
        ({key: {"$nin": [1, 3]}}, {"o0", "o2"}),
        ({"$and": [{key: {"$lt": 3}}, {"tag-list": {"$contains": "t1"}}]}, {"o1"}),
    ]
    for f, expected in cases:
        native = translate_metadata_filter(PG, f)
        assert ids(search_all(odd_pgvector, native, 10)) == expected, f
        seed_form = to_pgvector_filter(f)
        assert ids(search_all(odd_pgvector, seed_form, 10)) >= expected, f


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_a_field_name_cannot_inject_sql_or_json_path(odd_pgvector: Any, key: str) -> None:
    for f in ({key: 1}, {key: {"$ne": "nothing"}}, {key: {"$in": ["a", "b"]}}):
        assert search_all(odd_pgvector, translate_metadata_filter(PG, f), 10) == [], f
    assert ids(search_all(odd_pgvector, None, 10)) == {"o0", "o1", "o2", "o3"}
