"""Reference-manager keys in retrieval: ``citekey`` in references, ``tags``/``collections``.

A record matched to a reference manager carries ``citekey`` (``smith2020``), ``tags`` and
``collections`` (lists). References show the citekey as ``[@smith2020]`` so an agent can
cite in Pandoc/LaTeX form; ``klea-retrieve --json`` carries it in the metadata; a
``$contains`` filter on a list key means membership on the pickled corpus and ``fts5:``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from klea_utils.stores.retrieve_cli import main
from klea_utils.stores.utils import serialize_reference_material
from langchain_core.documents import Document
from retrieval_support import corpus_documents, write_corpus_pickle, write_fts5_index

LIBRARY: dict[str, dict[str, Any]] = {
    "sinha2021.pdf": {"citekey": "sinha2021", "tags": ["to-read", "cerebellum"]},
    "magee2000.pdf": {"citekey": "magee2000", "tags": ["dendrites"], "collections": ["Thesis"]},
    "jones2015.pdf": {"citekey": "jones2015", "collections": ["Thesis", "Imaging"]},
}


def _library_documents() -> list[Document]:
    docs = corpus_documents()
    for doc in docs:
        doc.metadata.update(LIBRARY.get(doc.metadata["file_name"], {}))
    return docs


def _one(file_name: str, content: str, **metadata: Any) -> tuple[Document, float]:
    return Document(page_content=content, metadata={"file_name": file_name, **metadata}), 1.0


def test_a_shared_citekey_is_written_on_the_header_in_pandoc_form() -> None:
    material = {
        "d": [
            _one("smith.pdf", "first", title="T", year=2020, citekey="smith2020", tags=["a", "b"]),
            _one("smith.pdf", "second", title="T", year=2020, citekey="smith2020", tags=["a", "b"]),
        ]
    }
    text = serialize_reference_material(material)
    assert text.startswith(
        "### Source document 1/1: [smith.pdf] [@smith2020]\ntitle: T | year: 2020 | tags: a; b\n"
    )
    assert "citekey" not in text


def test_without_a_citekey_the_references_keep_the_seed_format() -> None:
    material = {"d": [_one("smith.pdf", "first", title="T", year=2020)]}
    assert serialize_reference_material(material) == (
        "### Source document 1/1: [smith.pdf]\ntitle: T | year: 2020\n\n#### Excerpt 1/1\nfirst"
    )


@pytest.mark.parametrize("odd", [None, "", "  ", 7])
def test_a_citekey_that_is_no_key_is_not_cited(odd: Any) -> None:
    text = serialize_reference_material({"d": [_one("a.pdf", "x", citekey=odd)]})
    assert "[@" not in text


def test_chunks_that_disagree_on_the_citekey_show_it_inline() -> None:
    material = {"d": [_one("a.pdf", "x", citekey="k1"), _one("a.pdf", "y", citekey="k2")]}
    text = serialize_reference_material(material)
    assert "[@" not in text.splitlines()[0]
    assert "citekey: k1\nx" in text
    assert "citekey: k2\ny" in text


@pytest.fixture
def library_stores(tmp_path: Path) -> Path:
    docs = _library_documents()
    pickle_path = write_corpus_pickle(tmp_path / "bm25.pkl", docs)
    fts5_path = tmp_path / "bm25.sqlite"
    write_fts5_index(fts5_path, docs)
    config = {
        "domains": {
            "pickled": {
                "description": "p",
                "bm25_stores": [{"name": "p", "path": str(pickle_path)}],
            },
            "fts": {
                "description": "f",
                "bm25_stores": [{"name": "f", "path": f"fts5:{fts5_path}"}],
            },
        }
    }
    path = tmp_path / "stores.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_klea_retrieve_shows_the_citekey(library_stores: Path, capsys: Any) -> None:
    assert main(["--stores", str(library_stores), "--domain", "fts", "-k", "1", "Golgi"]) == 0
    assert capsys.readouterr().out.startswith(
        "### Source document 1/1: [sinha2021.pdf] [@sinha2021]"
    )
    assert main(["--stores", str(library_stores), "--json", "-k", "2", "Golgi cells"]) == 0
    data = json.loads(capsys.readouterr().out)
    hits = [hit for domain in ("pickled", "fts") for hit in data[domain]]
    assert hits
    assert {hit["metadata"]["citekey"] for hit in hits} == {"sinha2021"}


@pytest.mark.parametrize(
    ("clause", "files"),
    [
        ({"tags": {"$contains": "to-read"}}, {"sinha2021.pdf"}),
        ({"tags": "dendrites"}, set()),  # a bare value is $eq: a list never equals a string
        ({"collections": {"$contains": "Thesis"}}, {"magee2000.pdf", "jones2015.pdf"}),
        ({"collections": {"$contains": "Imaging"}}, {"jones2015.pdf"}),
        (
            {
                "$or": [
                    {"tags": {"$contains": "dendrites"}},
                    {"collections": {"$contains": "Imaging"}},
                ]
            },
            {"magee2000.pdf", "jones2015.pdf"},
        ),
        ({"tags": {"$contains": "to-rea"}}, set()),  # membership, not a substring
    ],
)
def test_contains_on_a_list_key_is_membership_on_both_bm25_stores(
    library_stores: Path, capsys: Any, clause: dict[str, Any], files: set[str]
) -> None:
    argv = ["--stores", str(library_stores), "--json", "-k", "10", "--filter", json.dumps(clause)]
    assert main([*argv, "neurons cells learning imaging protein"]) == 0
    data = json.loads(capsys.readouterr().out)
    for domain in ("pickled", "fts"):
        assert {hit["metadata"]["file_name"] for hit in data[domain]} <= files, domain
    if files:
        assert all(data[domain] for domain in ("pickled", "fts"))
