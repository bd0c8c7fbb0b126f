"""sci-etl-search search --any: a natural-language question searched by any of its words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from search_cli_support import index_corpus, run_cli

QUESTION = "What do rotation curves tell us about dwarf galaxies?"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _, db = index_corpus(tmp_path_factory.mktemp("any"))
    return db


def test_a_question_finds_nothing_and_the_message_suggests_any(corpus: Path) -> None:
    result = run_cli("search", QUESTION, "--db", corpus, "--mode", "lexical")
    assert result.returncode == 0
    assert result.stdout == ""
    assert "add --any" in result.stderr


def test_any_ranks_records_by_bm25_over_the_questions_words(corpus: Path) -> None:
    result = run_cli("search", "--any", QUESTION, "--db", corpus, "--mode", "lexical", "--json")
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)["hits"]
    assert hits[0]["record_id"] == "dwarf-halos"


def test_a_question_without_words_is_a_usage_error(corpus: Path) -> None:
    result = run_cli("search", "--any", "?!", "--db", corpus)
    assert result.returncode == 2
    assert "no words" in result.stderr


def test_any_leaves_the_question_words_out(corpus: Path) -> None:
    result = run_cli("search", "--any", "what is it", "--db", corpus, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["query"] == '"what" OR "is" OR "it"'
    result = run_cli("search", "--any", QUESTION, "--db", corpus, "--json")
    assert json.loads(result.stdout)["query"].startswith('"rotation" OR "curves"')


def test_index_of_a_folder_names_the_files_it_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    (folder / ".klea-cache").mkdir(parents=True)
    (folder / "a.md").write_text("# Dwarf galaxies\n\nRotation curves.\n", encoding="utf-8")
    (folder / "b.pdf").write_bytes(b"%PDF-1.7")
    (folder / "c.docx").write_bytes(b"PK")
    (folder / ".klea-cache" / "x.json").write_text("{}", encoding="utf-8")
    result = run_cli("index", folder, "--db", tmp_path / "p.db")
    assert result.returncode == 0, result.stderr
    assert "indexed 1 of 1 records" in result.stdout
    assert "skipped 2 file(s) that are not .txt or .md: b.pdf, c.docx" in result.stderr
    assert "--fts5-store" in result.stderr
    assert "x.json" not in result.stderr


def test_version_and_log_flags(corpus: Path) -> None:
    assert run_cli("--version").stdout.startswith("sci-etl-search ")
    quiet = run_cli("-q", "search", "--any", QUESTION, "--db", corpus, "--mode", "lexical")
    assert quiet.returncode == 0, quiet.stderr
    assert "dwarf" in quiet.stdout.lower()
    assert run_cli("-vv", "facets", "year", "--db", corpus).returncode == 0
