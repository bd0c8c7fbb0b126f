"""klea-serve's pieces without a server: questions as queries, search filters, the library."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.serve import SearchFilters
from klea_utils.stores.serve.papers.catalogue import PaperCatalogue
from klea_utils.stores.serve.papers.grouped import GroupedPapers
from klea_utils.stores.serve.papers.paper import FACET_KEYS, display_metadata
from klea_utils.stores.serve.papers.sources import MemoryPaperSource
from klea_utils.stores.serve.search.backend import question_query, store_filters
from langchain_core.documents import Document
from retrieval_support import corpus_documents, write_corpus_pickle
from sci_etl_core.search import describe, parse_query


def test_a_plain_question_becomes_the_or_of_its_content_words():
    query = question_query("What is the likely range of climate sensitivity?")
    assert query == '"likely" OR "range" OR "climate" OR "sensitivity"'


@pytest.mark.parametrize(
    "text",
    [
        "heat AND shock proteins",
        '"heat shock" proteins fold',
        "title:heat shock proteins",
        "chaperon* help proteins",
        "proteins fold -yeast",
        "(heat shock) proteins",
        "two words",
    ],
)
def test_syntax_or_short_queries_are_left_alone(text):
    assert question_query(text) is None


@given(st.text(alphabet=st.sampled_from("abcXYZ éß ?,.!'"), max_size=60))
def test_a_rewritten_question_always_parses_as_an_or_of_phrases(text):
    query = question_query(text)
    if query is None:
        return
    chips = describe(parse_query(query))
    assert chips
    assert all(chip.operator in ("OR", "") and not chip.negated for chip in chips)


def test_search_filters_name_the_missing_facet():
    filters = SearchFilters(year_from=2010, authors=("Ann Smith",))
    with pytest.raises(ValueError, match="no facet 'authors'; it tags: journal, year"):
        store_filters(filters, frozenset({"year", "journal"}))
    built = store_filters(filters, frozenset({"year", "authors"}))
    assert [f.key for f in built] == ["year", "authors"]


def test_chunks_are_grouped_into_papers_with_their_passages_in_order():
    docs = list(reversed(corpus_documents()))
    docs.append(Document(page_content="no file name", metadata={}))
    grouped = GroupedPapers(docs)
    assert sorted(grouped.papers) == [
        "jones2015.pdf",
        "magee2000.pdf",
        "sinha2021.pdf",
        "smith2019.pdf",
    ]
    sinha = grouped.papers["sinha2021.pdf"]
    assert [d.id for d in sinha.passages] == ["sinha2021.pdf:0", "sinha2021.pdf:1"]


def _chunk(name: str, index: int, **metadata: object) -> Document:
    return Document(
        id=f"{name}:{index}",
        page_content=f"{name} {index}",
        metadata={"file_name": name, **metadata},
    )


def test_facet_counts_count_each_paper_once_most_frequent_first():
    a = {"authors": ["Ann Smith", "Bo Li"], "year": 2020, "keywords": ["cells"],
         "tags": ["cells", "to-read"], "collections": ["Thesis"]}  # fmt: skip
    docs = [
        _chunk("a.pdf", 0, **a),
        _chunk("a.pdf", 1, **a),  # a second passage: still one paper
        _chunk("b.pdf", 0, authors=["Bo Li"], year=2020, tags=["to-read"], collections=["Thesis"]),
        _chunk("c.pdf", 0, authors=["Cy Young"], year=2019, journal="Neuron", language="zh"),
    ]
    catalogue = PaperCatalogue([MemoryPaperSource(docs)])
    papers, facets = catalogue.count_facets(list(FACET_KEYS))
    assert papers == 3
    assert facets == {
        "year": [("2020", 2), ("2019", 1)],
        "author": [("Bo Li", 2), ("Ann Smith", 1), ("Cy Young", 1)],  # ties by name
        "journal": [("Neuron", 1)],
        "tag": [("to-read", 2), ("cells", 1)],  # a keyword that is also a tag: once
        "collection": [("Thesis", 2)],
        "language": [("zh", 1)],
    }
    narrowed = catalogue.count_facets(["author"], ["c.pdf", "a.pdf", "a.pdf", "nope.pdf"])
    assert narrowed == (2, {"author": [("Ann Smith", 1), ("Bo Li", 1), ("Cy Young", 1)]})
    with pytest.raises(ValueError, match="unknown facet key"):
        catalogue.count_facets(["colour"])


def test_expanded_author_variants_are_not_shown():
    doc = Document(
        id="a.pdf:0",
        page_content="text",
        metadata={"file_name": "a.pdf", "authors": ["Nora Berg", "nora berg", "Berg", "berg"]},
    )
    paper = GroupedPapers([doc]).papers["a.pdf"]
    assert paper.summary()["authors"] == ["Nora Berg"]
    assert paper.facet_values("author") == ["Nora Berg"]


def test_pages_from_ingestion_page_start_and_end():
    docs = [
        Document(
            id=f"p.pdf:{i}",
            page_content=f"passage {i}",
            metadata={"file_name": "p.pdf", "page_start": start, "page_end": end},
        )
        for i, (start, end) in enumerate([(1, 1), (2, 3), (3, 3)])
    ]
    paper = GroupedPapers(docs).papers["p.pdf"]
    assert paper.summary()["pages"] == [1, 3]
    assert [display_metadata(d.metadata)["pages"] for d in paper.passages] == [[1], [2, 3], [3]]


def test_cli_help_names_the_variables_and_the_shared_flags(capsys):
    from klea_utils.stores.serve import cli
    from klea_utils.stores.serve.http import access
    from klea_utils.stores.utils import STORES_CONFIG_ENV_VAR

    assert (cli._STORES_ENV, cli._TOKEN_ENV) == (STORES_CONFIG_ENV_VAR, access.TOKEN_ENV)
    assert cli.main(["-h"]) == 0
    text = capsys.readouterr().out
    assert f"${STORES_CONFIG_ENV_VAR}" in text
    assert f"${access.TOKEN_ENV}" in text
    for flag in ["--version", "-q", "--verbose", "--token-file", "--no-auth", "--allowed-host"]:
        assert flag in text
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("klea-serve (klea-retrieval ")
    assert cli.main(["--no-such-flag"]) == 2
    assert "No such option" in capsys.readouterr().err


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20"])
def test_cli_refuses_to_bind_off_loopback_without_a_token(host, capsys, monkeypatch, tmp_path):
    from klea_utils.stores.serve.cli import main

    monkeypatch.delenv("KLEA_SERVE_TOKEN", raising=False)
    missing = str(tmp_path / "never-read.pkl")  # refused before any store is opened
    assert main(["--bm25-store", missing, "--host", host]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"klea-serve: error: --host {host} is reachable from other")
    assert "--no-auth" in err[0]
    assert main(["--bm25-store", missing, "--host", host, "--token", "short"]) == 2
    assert "at least 16" in capsys.readouterr().err


def test_cli_context_and_limits_reach_the_service_options(tmp_path, capsys, monkeypatch):
    from klea_utils.stores.serve import cli

    corpus = write_corpus_pickle(tmp_path / "bm25.pkl", corpus_documents())
    seen = {}

    def capture(options, args, access):
        seen["options"] = options

    monkeypatch.setattr(cli, "_serve_http", capture)
    argv = ["--bm25-store", str(corpus), "--context", "section", "--context-tokens", "300"]
    argv += ["--max-body-bytes", "2048", "--max-query-chars", "100", "--max-concurrent", "3"]
    assert cli.main(argv) == 0
    options = seen["options"]
    assert (options.context, options.context_tokens) == ("section", 300)
    limits = options.limits
    assert (limits.max_body_bytes, limits.max_query_chars, limits.max_concurrent) == (2048, 100, 3)
    assert cli.main(["--bm25-store", str(corpus)]) == 0
    assert (seen["options"].context, seen["options"].limits.max_query_chars) == (None, 4096)
    assert cli.main(["--bm25-store", str(corpus), "--context", "pages"]) == 2
    assert "must be off, neighbours or section" in capsys.readouterr().err
    monkeypatch.delenv("KLEA_SERVE_TOKEN", raising=False)
    assert cli.main(["--bm25-store", str(corpus), "--allowed-host", "*"]) == 2
    assert "DNS rebinding" in capsys.readouterr().err


def test_cli_exit_2_for_bad_stores_and_1_when_loading_fails(tmp_path, capsys):
    from klea_utils.stores.serve.cli import main

    assert main(["--bm25-store", str(tmp_path / "missing.pkl")]) == 2
    assert "missing.pkl" in capsys.readouterr().err
    corpus = write_corpus_pickle(tmp_path / "bm25.pkl", corpus_documents())
    argv = ["--bm25-store", str(corpus), "--fts5-index", str(tmp_path / "none.sqlite")]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "klea-serve: error: --fts5-index" in err
    assert "no such file" in err
    assert "loading" not in err  # found missing before the socket opens and anything loads


def test_cli_failures_are_one_line_with_the_shared_exit_codes(tmp_path, capsys, monkeypatch):
    from klea_utils.stores.serve.cli import main

    def one_error_line(status: int, argv: list[str]) -> str:
        assert main(argv) == status
        errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
        assert len(errors) == 1, errors
        assert errors[0].startswith("klea-serve: error: ")
        return errors[0]

    corpus = write_corpus_pickle(tmp_path / "bm25.pkl", corpus_documents())
    # Usage errors: 2.
    assert "--rerank" in one_error_line(2, ["--bm25-store", str(corpus), "--rerank", " "])
    bad_json = tmp_path / "stores.json"
    bad_json.write_text("{nope", encoding="utf-8")
    assert "not valid JSON" in one_error_line(2, ["--stores-config", str(bad_json)])
    # Work failures: 1 (a corpus that cannot be read, a missing extra).
    not_a_corpus = tmp_path / "notes.pkl"
    not_a_corpus.write_text("{nope", encoding="utf-8")
    # Found by the load after the socket opened (on a free port): the server stops, 1.
    assert "notes.pkl" in one_error_line(1, ["--bm25-store", str(not_a_corpus), "--port", "0"])
    monkeypatch.setitem(sys.modules, "mcp", None)
    assert "serve" in one_error_line(1, ["--bm25-store", str(corpus)])


def test_an_unreadable_search_index_is_named_at_start_up(tmp_path):
    from klea_utils.stores.serve.operations.opening import search_index_problem

    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this is not a database" * 100)
    problem = search_index_problem(broken)
    assert problem is not None
    assert "broken.sqlite" in problem
    assert "not an SQLite database" in problem
    assert broken.read_bytes() == b"this is not a database" * 100


def test_a_question_without_spaces_reads_as_one_over_a_multiscript_index() -> None:
    assert question_query("医学图像分割的方法") is None  # one unicode61 word
    query = question_query("医学图像分割的方法", multiscript=True)
    assert query is not None
    assert query.startswith('"医学" OR "学图" OR "图像"')
    assert question_query("方法", multiscript=True) is None  # one bigram: not a question
    assert question_query('"医学图像" AND 方法', multiscript=True) is None  # syntax
    english = "What is the likely range of climate sensitivity?"
    assert question_query(english, multiscript=True) == question_query(english)
    assert question_query("effect of temperature", multiscript=True) == question_query(
        "effect of temperature"
    )
