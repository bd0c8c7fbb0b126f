"""Metadata-map template, loading and per-chunk resolution; the seed name of the store policy."""

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


def test_the_seed_name_of_the_store_policy_is_the_metadata_module_s() -> None:
    # The seed documents klea_utils.stores.ingestion._apply_store_metadata_policy; the policy
    # lives beside the key sets (klea_utils.stores.metadata), tested in klea-retrieval.
    from klea_utils.stores import ingestion, metadata

    assert ingestion._apply_store_metadata_policy is metadata.apply_store_metadata_policy
    assert "_apply_store_metadata_policy" in ingestion.__all__


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
