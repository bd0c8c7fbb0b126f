"""klea-retrieve end to end on BM25 stores (rank_bm25 and fts5:), text and JSON output."""

from __future__ import annotations

import json

import pytest
from klea_utils.stores.retrieve_cli import main
from retrieval_support import (
    build_tiny_cross_encoder,
    corpus_documents,
    write_corpus_pickle,
    write_fts5_index,
)


@pytest.fixture
def stores_json(tmp_path):
    docs = corpus_documents()
    pickle_path = write_corpus_pickle(tmp_path / "bm25.pkl", docs)
    fts5_path = tmp_path / "bm25.sqlite"
    write_fts5_index(fts5_path, docs)
    config = {
        "domains": {
            "neuro": {
                "description": "neuroscience",
                "bm25_stores": [
                    {"name": "pickled", "path": str(pickle_path)},
                    {"name": "fts", "path": f"fts5:{fts5_path}"},
                ],
            },
            "empty": {"description": "nothing configured"},
        }
    }
    path = tmp_path / "stores.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def test_prints_serialized_references(stores_json, capsys):
    argv = ["--stores-config", str(stores_json), "--domain", "neuro", "-k", "2", "Golgi cells"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("### Source document 1/1: [sinha2021.pdf]")
    assert "Granule cells and Golgi cells" in out
    assert "_source_scores" not in out


def test_json_output_with_filter_and_rerank(stores_json, tmp_path, capsys):
    model = build_tiny_cross_encoder(tmp_path / "ce")
    argv = [
        "--stores",
        str(stores_json),
        "--filter",
        '{"year": {"$gte": 2015}}',
        "--rerank",
        str(model),
        "--json",
        "neurons",
    ]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"neuro", "empty"}
    assert data["empty"] == []
    assert data["neuro"]
    assert all(hit["metadata"]["year"] >= 2015 for hit in data["neuro"])
    labels = {label for hit in data["neuro"] for label in hit["metadata"]["_source_scores"]}
    assert labels == {"BM25: pickled", "BM25: fts"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--filter", '{"year": {"$bogus": 1}}', "q"], "$bogus"),
        (["--domain", "nope", "q"], "unknown domain 'nope'"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(stores_json, capsys, argv, message):
    assert main(["--stores", str(stores_json), *argv]) == 2
    assert message in capsys.readouterr().err


def test_argument_errors_are_usage_errors(stores_json, capsys, tmp_path):
    assert main(["--stores-config", str(stores_json), "-k", "0", "q"]) == 2
    assert "-k" in capsys.readouterr().err
    assert main(["--stores-config", str(stores_json), "--filter", "[1]", "q"]) == 2
    assert "must be a JSON object" in capsys.readouterr().err
    assert main(["--stores-config", str(tmp_path / "missing.json"), "q"]) == 2
    assert "missing.json" in capsys.readouterr().err


def test_votes_keep_each_stores_score_and_refuse_other_values(stores_json, capsys):
    for votes in ("auto", "legs", "stores"):
        argv = ["--stores-config", str(stores_json), "--domain", "neuro", "-k", "1"]
        assert main([*argv, "--context", "off", "--votes", votes, "--json", "Golgi cells"]) == 0
        (hit,) = json.loads(capsys.readouterr().out)["neuro"]
        assert hit["metadata"]["file_name"] == "sinha2021.pdf"
        assert set(hit["metadata"]["_source_scores"]) == {"BM25: pickled", "BM25: fts"}
    assert main(["--stores-config", str(stores_json), "--votes", "fused", "q"]) == 2
    assert "--votes must be one of auto, legs, stores, got 'fused'" in capsys.readouterr().err


def test_old_flags_still_work(stores_json, capsys):
    argv = ["--stores", str(stores_json), "--domain", "neuro", "--k", "1", "--json", "Golgi"]
    assert main(argv) == 0
    assert len(json.loads(capsys.readouterr().out)["neuro"]) == 1


def test_help_version_and_defaults_agree(capsys):
    from klea_utils.stores import retrieve_cli
    from klea_utils.stores.embedding_models import DEFAULT_EMBEDDING_MODEL
    from klea_utils.stores.utils import STORES_CONFIG_ENV_VAR

    assert main(["-h"]) == 0
    out = capsys.readouterr().out
    assert "--top-k" in out
    assert "--stores-config" in out
    assert "Exit status" in out
    assert "--model" not in out  # hidden aliases stay out of the help
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("klea-retrieve (klea-retrieval ")
    assert retrieve_cli.DEFAULT_EMBEDDING_MODEL == DEFAULT_EMBEDDING_MODEL
    assert retrieve_cli.STORES_CONFIG_ENV_VAR == STORES_CONFIG_ENV_VAR
    from klea_utils.stores._retrieval import context

    assert retrieve_cli.DEFAULT_CONTEXT_TOKENS == context.DEFAULT_CONTEXT_TOKENS
    # the shared --context options spell their defaults out (klea-serve has them too)
    words = " ".join(out.split())
    assert f"(default: {context.DEFAULT_CONTEXT}; off: the chunks as stored)" in words
    assert f"(default: {context.DEFAULT_CONTEXT_TOKENS})" in words


def test_json_shows_authors_without_their_filter_variants(tmp_path, capsys, monkeypatch):
    from langchain_core.documents import Document

    monkeypatch.delenv("KLEA_STORES_CONFIG_FILE", raising=False)
    doc = Document(
        id="berg.pdf:0",
        page_content="Glacier retreat in the Alps.",
        metadata={"file_name": "berg.pdf", "authors": ["Nora Berg", "nora berg", "Berg"]},
    )
    corpus = write_corpus_pickle(tmp_path / "c.bm25", [doc])
    assert main(["--bm25-store", str(corpus), "--json", "glacier"]) == 0
    hit = json.loads(capsys.readouterr().out)["default"][0]
    assert hit["metadata"]["authors"] == ["Nora Berg"]
    assert main(["--bm25-store", str(corpus), "glacier"]) == 0
    assert "nora berg" not in capsys.readouterr().out


def test_a_missing_rerank_model_is_one_line(stores_json, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    argv = ["--stores-config", str(stores_json), "--rerank", str(tmp_path / "no-model"), "q"]
    assert main(argv) == 1  # the work failed: a model could not be used
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "cannot load cross-encoder" in err
    assert "no-model" in err


def test_a_filter_on_an_unknown_key_names_the_keys(stores_json, capsys):
    argv = ["--stores-config", str(stores_json), "--domain", "neuro", "--filter"]
    assert main([*argv, '{"yeer": 2021}', "neurons"]) == 0
    err = capsys.readouterr().err
    assert "no results: the filter names 'yeer'" in err
    assert "year" in err
    assert "file_name" in err
    assert main([*argv, '{"year": 1900}', "neurons"]) == 0
    assert "no document matching the query passes the filter" in capsys.readouterr().err


def test_an_empty_rerank_is_a_one_line_usage_error(stores_json, capsys):
    argv = ["--stores-config", str(stores_json), "--rerank", "", "q"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("klea-retrieve: error: --rerank needs a cross-encoder")
