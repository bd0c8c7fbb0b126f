"""Tests of the stored-metadata schema constants."""

from __future__ import annotations

from klea_utils.stores import metadata as m


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
