"""klea-retrieve restricted to a paper's citation neighbourhood (issue 38), on BM25 stores."""

from __future__ import annotations

import json

import pytest
from klea_utils.stores.layout import CITATIONS_FILE_VERSION
from klea_utils.stores.retrieve_cli import main
from retrieval_support import corpus_documents, write_fts5_index


def _ref(target: str | None) -> dict[str, object]:
    return {"label": "1", "text": "An entry.", "target": target}


LINKS = {
    "version": CITATIONS_FILE_VERSION,
    "papers": {
        "smith2019.pdf": {
            "references": [_ref("sinha2021.pdf"), _ref("jones2015.pdf"), _ref(None)],
            "cited_by": [],
        },
        "sinha2021.pdf": {
            "references": [],
            "cited_by": [{"file_name": "smith2019.pdf", "title": "", "contexts": []}],
        },
        "magee2000.pdf": {"references": [], "cited_by": []},
    },
}


@pytest.fixture
def stores_json(tmp_path):
    fts5 = tmp_path / "chunks.sqlite"
    write_fts5_index(fts5, corpus_documents())
    (tmp_path / "papers.citations.json").write_text(json.dumps(LINKS), encoding="utf-8")
    config = {
        "domains": {
            "neuro": {
                "bm25_stores": [{"name": "fts", "path": f"fts5:{fts5}"}],
                "citations": "papers.citations.json",
            }
        }
    }
    path = tmp_path / "stores.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def _files(capsys) -> set[str]:
    out = json.loads(capsys.readouterr().out)
    return {hit["metadata"]["file_name"] for hits in out.values() for hit in hits}


def test_references_of_keeps_the_papers_it_cites(stores_json, capsys):
    argv = ["--stores-config", str(stores_json), "--json", "-k", "10", "neurons cells"]
    assert main(argv) == 0
    assert "magee2000.pdf" in _files(capsys)
    assert main([*argv, "--references-of", "smith2019.pdf"]) == 0
    assert _files(capsys) == {"sinha2021.pdf", "jones2015.pdf"}
    assert main([*argv, "--references-of", "smith2019.pdf", "--filter", '{"year": 2015}']) == 0
    assert _files(capsys) == {"jones2015.pdf"}


def test_citing_keeps_the_papers_that_cite_it(stores_json, capsys):
    argv = ["--stores-config", str(stores_json), "--json", "-k", "10", "neurons OR learning"]
    assert main([*argv, "--citing", "sinha2021.pdf"]) == 0
    assert _files(capsys) == {"smith2019.pdf"}
    assert main([*argv, "--citing", "magee2000.pdf"]) == 0  # cited by none: nothing found
    assert _files(capsys) == set()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--citing", "nope.pdf"], "--citing: no paper 'nope.pdf' in the citation links"),
        (["--citing", "a.pdf", "--references-of", "b.pdf"], "not both"),
    ],
)
def test_bad_citation_options_are_usage_errors(stores_json, capsys, extra, message):
    assert main(["--stores-config", str(stores_json), *extra, "cells"]) == 2
    assert message in capsys.readouterr().err


def test_without_a_links_file_the_option_says_how_to_get_one(stores_json, capsys):
    config = json.loads(stores_json.read_text())
    del config["domains"]["neuro"]["citations"]
    stores_json.write_text(json.dumps(config))
    assert main(["--stores-config", str(stores_json), "--citing", "a.pdf", "cells"]) == 2
    assert "names no citation-links file" in capsys.readouterr().err
