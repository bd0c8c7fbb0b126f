"""Metadata-map template, loading, per-chunk resolution and the store metadata policy."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.ingest_exceptions import MetadataMapError
from klea_utils.stores.metadata_map import (
    _apply_store_metadata_policy,
    candidate_chains,
    file_entry_for,
    fold_chunk_metadata,
    load_metadata_map,
    resolve_chunk_metadata,
    template_entry,
    template_path,
    write_heading_template,
)

ENTRY = {
    "DEFAULT": {"title": "T", "year": 2020, "url": "https://d"},
    "Intro": {},
    "Methods > Data": {"url": "https://data"},
    "Methods": {"url": "https://methods"},
    "Appendix > Data": {},
}


def test_template_is_written_into_the_cache_folder(tmp_path: Path) -> None:
    entry = template_entry({"title": "T", "_sources": {}}, [["A"], ["A", "B"], ["A"]])
    assert entry == {"DEFAULT": {"title": "T", "_sources": {}}, "A": {}, "A > B": {}}
    path = write_heading_template({"b.md": entry, "a.md": {"X": {}, "DEFAULT": {}}}, tmp_path)
    assert path == template_path(tmp_path)
    assert path == tmp_path / ".klea-cache" / "metadata-map.template.json"
    data = json.loads(path.read_text())
    assert list(data) == ["a.md", "b.md"]
    assert list(data["a.md"]) == ["DEFAULT", "X"]


def test_empty_template_never_clobbers(tmp_path: Path, caplog) -> None:
    path = write_heading_template({"a.md": {"DEFAULT": {}}}, tmp_path)
    assert path is not None
    before = path.read_text()
    with caplog.at_level(logging.WARNING):
        assert write_heading_template({}, tmp_path) is None
    assert path.read_text() == before
    assert "not (re)written" in caplog.text


@pytest.mark.parametrize(
    ("headings", "expected_url"),
    [
        (["Methods", "Data"], "https://data"),  # full chain
        (["Results", "Methods", "Data"], "https://data"),  # suffix
        (["Methods", "Data", "Extra"], "https://data"),  # prefix
        (["Methods", "Stats"], "https://methods"),  # shorter prefix
        (["Appendix", "Data"], "https://d"),  # empty {} falls through to DEFAULT
        (["Intro"], "https://d"),
        ([], "https://d"),
        (["  methods ", "DATA"], "https://data"),  # keys normalized
    ],
)
def test_resolution(headings: list[str], expected_url: str) -> None:
    resolved = resolve_chunk_metadata(ENTRY, headings)
    assert resolved["url"] == expected_url
    assert resolved["title"] == "T"


def test_fold_keeps_machine_keys() -> None:
    entry = {"DEFAULT": {"file_name": "evil", "title": "T"}}
    chunk = {"file_name": "a.md", "file_hash": "h", "headings": ["X"], "dl_meta": 1}
    folded = fold_chunk_metadata(chunk, entry)
    assert folded == {
        "file_name": "a.md",
        "file_hash": "h",
        "headings": ["X"],
        "dl_meta": 1,
        "title": "T",
    }


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(MetadataMapError, match=r"map.json: no entry for source file 'b.pdf'"):
        file_entry_for({"a.pdf": {}}, "b.pdf", tmp_path / "map.json")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON (line 1"),
        ("[]", "must be a JSON object"),
        ('{"a.md": 3}', "entry 'a.md' must be an object"),
        ('{"a.md": {"DEFAULT": []}}', "'a.md' -> 'DEFAULT' must be an object"),
    ],
)
def test_load_rejects_malformed_maps(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "map.json"
    path.write_text(content)
    with pytest.raises(MetadataMapError, match=re.escape(message)) as info:
        load_metadata_map(path)
    assert str(path) in str(info.value)


def test_load_missing_map(tmp_path: Path) -> None:
    with pytest.raises(MetadataMapError, match="not found"):
        load_metadata_map(tmp_path / "nope.json")


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
    out = _apply_store_metadata_policy(meta)
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
    assert _apply_store_metadata_policy({"title": None}) == {"title": None}


_names = st.lists(
    st.from_regex(r"[A-Z][a-z]{1,6}( [A-Z][a-z]{1,6}){0,2}", fullmatch=True), max_size=4
)
_values = st.one_of(
    st.none(), st.text(max_size=5), st.integers(), st.lists(st.text(max_size=3), max_size=3)
)


@given(authors=_names, extra=st.dictionaries(st.text(min_size=1, max_size=6), _values, max_size=5))
def test_store_policy_is_idempotent(authors: list[str], extra: dict) -> None:
    once = _apply_store_metadata_policy({**extra, "authors": authors})
    assert _apply_store_metadata_policy(once) == once
    assert not any(k.startswith("_") for k in once)


@given(st.lists(st.sampled_from(["A", "B", "C", "D"]), max_size=5))
def test_candidate_chains_most_specific_first(headings: list[str]) -> None:
    chains = candidate_chains(headings)
    lengths = [len(c.split(" > ")) for c in chains]
    assert lengths == sorted(lengths, reverse=True)
    if headings:
        assert chains[0] == " > ".join(headings)
        assert headings[-1] in chains
        assert headings[0] in chains
    assert len(chains) == len(set(chains))
