"""The citation-links file as the serving side reads it (issue 38), and where config names it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from klea_utils.stores._retrieval.citations_file import (
    REFERENCE_FIELDS,
    LibraryCitations,
    read_citations_file,
)
from klea_utils.stores.config import PerDomainConfig, RetrieverConfig, read_retriever_config
from klea_utils.stores.exceptions import CitationsFileError
from klea_utils.stores.layout import CITATIONS_FILE_VERSION
from klea_utils.stores.store_args import write_stores_config

REFERENCE = {
    "label": "1",
    "text": "S. Shrapnel and F. Costa, Causation does not explain contextuality, 2018.",
    "title": "Causation does not explain contextuality",
    "authors": ["S. Shrapnel", "F. Costa"],
    "year": 2018,
    "venue": "Quantum",
    "doi": None,
    "arxiv": "1708.00137",
    "target": "1708.00137.pdf",
}
LINKS = {
    "version": CITATIONS_FILE_VERSION,
    "papers": {
        "review.pdf": {
            "title": "A review",
            "authors": ["A. Author"],
            "year": 2020,
            "references": [REFERENCE, {**REFERENCE, "label": "2", "target": None}],
            "contexts": [{"entry": 0, "callout": "[1]", "sentence": "Not causation [1]."}],
            "cited_by": [],
        },
        "1708.00137.pdf": {
            "title": "Causation does not explain contextuality",
            "references": [],
            "cited_by": [
                {"file_name": "review.pdf", "title": "A review", "contexts": ["Not causation [1]."]}
            ],
        },
    },
}


def _write(path: Path, payload: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_a_paper_answers_its_references_and_citing_papers(tmp_path: Path) -> None:
    library = read_citations_file(_write(tmp_path / "papers.citations.json", LINKS))
    assert len(library) == 2
    assert "review.pdf" in library
    review = library.of("review.pdf")
    assert [list(r) for r in review["references"]] == [list(REFERENCE_FIELDS)] * 2
    assert [r["target"] for r in review["references"]] == ["1708.00137.pdf", None]
    assert review["cited_by"] == []
    assert library.of("1708.00137.pdf") == {
        "references": [],
        "cited_by": [
            {"file_name": "review.pdf", "title": "A review", "contexts": ["Not causation [1]."]}
        ],
    }
    assert library.of("unknown.pdf") == {"references": [], "cited_by": []}
    review["references"].clear()  # an answer is a copy
    assert len(library.of("review.pdf")["references"]) == 2


def test_an_absent_file_is_an_empty_library(tmp_path: Path) -> None:
    assert len(read_citations_file(tmp_path / "none.citations.json")) == 0
    merged = LibraryCitations().merged(read_citations_file(_write(tmp_path / "a.json", LINKS)))
    assert "review.pdf" in merged


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ("{", "(file)"),
        ({"version": 99, "papers": {}}, "version"),
        ({"version": CITATIONS_FILE_VERSION, "papers": []}, "papers"),
        ({"version": CITATIONS_FILE_VERSION, "papers": {"a.pdf": 3}}, "papers.a.pdf"),
        (
            {"version": CITATIONS_FILE_VERSION, "papers": {"a.pdf": {"references": [{}]}}},
            "papers.a.pdf.references[0].text",
        ),
        (
            {
                "version": CITATIONS_FILE_VERSION,
                "papers": {"a.pdf": {"references": [{**REFERENCE, "year": "2018"}]}},
            },
            "papers.a.pdf.references[0].year",
        ),
        (
            {
                "version": CITATIONS_FILE_VERSION,
                "papers": {"a.pdf": {"cited_by": [{"file_name": "b", "contexts": [1]}]}},
            },
            "papers.a.pdf.cited_by[0].contexts",
        ),
    ],
)
def test_a_malformed_file_names_the_file_and_field_not_the_folder(
    tmp_path: Path, payload: Any, field: str
) -> None:
    path = tmp_path / "secret-folder" / "papers.citations.json"
    path.parent.mkdir()
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    with pytest.raises(CitationsFileError) as info:
        read_citations_file(path)
    assert isinstance(info.value, ValueError)
    assert info.value.field == field
    assert str(info.value).startswith(f"papers.citations.json: {field}: ")
    assert "secret-folder" not in str(info.value)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)
PAPER = st.fixed_dictionaries(
    {},
    optional={
        "references": st.lists(st.dictionaries(st.sampled_from(REFERENCE_FIELDS), JSON)) | JSON,
        "cited_by": st.lists(
            st.dictionaries(st.sampled_from(["file_name", "title", "contexts"]), JSON)
        )
        | JSON,
    },
)


@settings(max_examples=150, deadline=None)
@given(papers=st.dictionaries(st.text(min_size=1, max_size=5), PAPER | JSON, max_size=3))
def test_any_document_reads_or_is_refused_with_a_located_error(
    tmp_path_factory: pytest.TempPathFactory, papers: dict[str, Any]
) -> None:
    path = tmp_path_factory.mktemp("links") / "c.citations.json"
    path.write_text(json.dumps({"version": CITATIONS_FILE_VERSION, "papers": papers}))
    refused: CitationsFileError | None = None
    try:
        library = read_citations_file(path)
    except CitationsFileError as exc:
        refused = exc
    if refused is not None:
        assert refused.field.startswith("papers")
        return
    for name in papers:
        answer = library.of(name)
        assert all(list(r) == list(REFERENCE_FIELDS) for r in answer["references"])
        assert all(isinstance(r["text"], str) for r in answer["references"])
        json.dumps(answer)


def test_the_configuration_names_the_file_relative_to_its_folder(tmp_path: Path) -> None:
    links = _write(tmp_path / "src" / ".klea-cache" / "papers.citations.json", LINKS)
    config = RetrieverConfig(
        domains={"papers": PerDomainConfig(citations=str(links))},
    )
    path = write_stores_config(tmp_path / "stores.json", config)
    written = json.loads(path.read_text())
    assert written["domains"]["papers"]["citations"] == "src/.klea-cache/papers.citations.json"
    assert read_retriever_config(path).domains["papers"].citations == str(links)


def test_an_old_configuration_has_no_citations_file() -> None:
    domain = RetrieverConfig.model_validate({"domains": {"papers": {}}}).domains["papers"]
    assert domain.citations is None
