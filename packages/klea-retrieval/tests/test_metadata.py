"""Tests of the stored-metadata schema constants and the store-write policy."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores import metadata as m
from klea_utils.stores.metadata import apply_store_metadata_policy


def test_seed_values() -> None:
    assert (
        frozenset(
            {
                "authors",
                "doi",
                "file_hash",
                "file_name",
                "headings",
                "journal",
                "keywords",
                "title",
                "year",
            }
        )
        == m.ALWAYS_STORED_METADATA_KEYS
    )
    assert frozenset({"file_hash", "file_name", "headings"}) == m.MACHINE_SET_METADATA_KEYS
    assert frozenset({"authors"}) == m.PERSON_NAME_FILTER_FIELDS
    assert (
        frozenset({"authors", "doi", "journal", "keywords", "title", "year"})
        == m.SHARED_DOC_METADATA_KEYS
    )
    assert frozenset({"source_path", "source_type", "source_url"}) == m.STORE_DROPPED_METADATA_KEYS


def test_schema_is_consistent() -> None:
    assert m.MACHINE_SET_METADATA_KEYS <= m.ALWAYS_STORED_METADATA_KEYS
    assert m.SHARED_DOC_METADATA_KEYS <= m.ALWAYS_STORED_METADATA_KEYS
    assert m.PERSON_NAME_FILTER_FIELDS <= m.SHARED_DOC_METADATA_KEYS
    assert not m.STORE_DROPPED_METADATA_KEYS & m.ALWAYS_STORED_METADATA_KEYS


def test_key_policies() -> None:
    assert m.is_always_stored_key("url_doi")
    assert m.is_always_stored_key("year")
    assert not m.is_always_stored_key("volume")
    assert m.is_dropped_key("_sources")
    assert m.is_dropped_key("source_url")
    assert not m.is_dropped_key("url")


def test_store_policy() -> None:
    meta = {
        "title": "T",
        "authors": ["Ankur Sinha"],
        "_metadata_complete": True,
        "_sources": {"title": "x"},
        "source_path": "/x",
        "source_type": "pdf",
        "source_url": "u",
        "year": 2020,
        "empty": "",
        "none": None,
        "nested": {"a": 1},
        "mixed": [1, "a"],
        "empty_list": [],
        "keywords": ["a", "b"],
        "custom": "kept",
    }
    out = apply_store_metadata_policy(meta)
    # Seed: "researcher-curated keys pass through unmodified".
    assert out == {
        "title": "T",
        "authors": ["Ankur Sinha", "ankur sinha", "Ankur", "Sinha", "ankur", "sinha"],
        "year": 2020,
        "empty": "",
        "none": None,
        "nested": {"a": 1},
        "mixed": [1, "a"],
        "empty_list": [],
        "keywords": ["a", "b"],
        "custom": "kept",
    }
    assert apply_store_metadata_policy({"title": None}) == {"title": None}


_names = st.lists(
    st.from_regex(r"[A-Z][a-z]{1,6}( [A-Z][a-z]{1,6}){0,2}", fullmatch=True), max_size=4
)
_values = st.one_of(
    st.none(), st.text(max_size=5), st.integers(), st.lists(st.text(max_size=3), max_size=3)
)


@given(authors=_names, extra=st.dictionaries(st.text(min_size=1, max_size=6), _values, max_size=5))
def test_store_policy_is_idempotent(authors: list[str], extra: dict) -> None:
    once = apply_store_metadata_policy({**extra, "authors": authors})
    assert apply_store_metadata_policy(once) == once
    assert not any(k.startswith("_") for k in once)
