"""Stores from the command line: --store, --bm25-store, --stores-config, the environment
variable, relative paths, path checks before loading, and the printed klea-retrieve command."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from klea_utils.stores.exceptions import StoreConfigError
from klea_utils.stores.retrieve_cli import main
from klea_utils.stores.store_args import (
    DIRECT_DOMAIN,
    StoreArgsError,
    parse_bm25_store_arg,
    parse_vector_store_arg,
    retrieve_command,
    retriever_config_from_args,
    write_stores_config,
)
from retrieval_support import corpus_documents, write_corpus_pickle, write_fts5_index


@pytest.fixture
def built(tmp_path):
    """A folder holding a (fake) Chroma store, a pickled corpus and an FTS5 index."""
    folder = tmp_path / "built"
    (folder / "chroma").mkdir(parents=True)
    (folder / "chroma" / "chroma.sqlite3").write_bytes(b"")
    docs = corpus_documents()
    write_corpus_pickle(folder / "papers.bm25", docs)
    write_fts5_index(folder / "papers.sqlite", docs)
    return folder


def _paths(config, domain=DIRECT_DOMAIN):
    d = config.domains[domain]
    return [s.path for s in d.vector_stores], [s.path for s in d.bm25_stores]


def test_direct_stores_resolve_against_the_current_folder(built, monkeypatch):
    monkeypatch.chdir(built)
    config = retriever_config_from_args(
        stores=["papers=chroma:chroma"],
        bm25_stores=["papers.bm25", "fts5:papers.sqlite"],
        environ={},
    )
    assert list(config.domains) == [DIRECT_DOMAIN]
    vector, bm25 = _paths(config)
    assert vector == [f"chroma:{built / 'chroma'}"]
    assert bm25 == [str(built / "papers.bm25"), f"fts5:{built / 'papers.sqlite'}"]
    assert config.domains[DIRECT_DOMAIN].vector_stores[0].name == "papers"


def test_config_file_paths_resolve_against_its_folder(built, tmp_path, monkeypatch):
    config_file = built / "stores.json"
    config_file.write_text(
        json.dumps(
            {
                "domains": {
                    "papers": {
                        "vector_stores": [{"name": "papers", "path": "chroma:chroma"}],
                        "bm25_stores": [
                            {"name": "bm25", "path": "papers.bm25"},
                            {"name": "fts", "path": "fts5:papers.sqlite"},
                            {"name": "abs", "path": str(built / "papers.bm25")},
                        ],
                    }
                }
            }
        )
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = retriever_config_from_args(Path("..") / "built" / "stores.json", environ={})
    vector, bm25 = _paths(config, "papers")
    assert vector == [f"chroma:{built / 'chroma'}"]
    assert bm25[:2] == [str(built / "papers.bm25"), f"fts5:{built / 'papers.sqlite'}"]
    assert bm25[2] == str(built / "papers.bm25")


def test_remote_stores_are_kept_and_not_checked(tmp_path):
    config = retriever_config_from_args(
        stores=["a=qdrant:http://localhost:6333", "b=pgvector:postgresql://u@h/db?x=1"],
        environ={},
    )
    assert _paths(config)[0] == ["qdrant:http://localhost:6333", "pgvector:postgresql://u@h/db?x=1"]


def test_every_missing_path_is_named_before_anything_loads(tmp_path):
    with pytest.raises(StoreConfigError) as info:
        retriever_config_from_args(
            stores=[f"papers=chroma:{tmp_path / 'nochroma'}"],
            bm25_stores=[str(tmp_path / "no.bm25"), f"fts5:{tmp_path / 'no.sqlite'}"],
            environ={},
        )
    message = str(info.value)
    assert "missing chroma.sqlite3" in message
    assert f"no BM25 corpus file at {str(tmp_path / 'no.bm25')!r}" in message
    assert f"no FTS5 index file at {str(tmp_path / 'no.sqlite')!r}" in message
    assert not isinstance(info.value, StoreArgsError)


def test_environment_variable_is_the_fallback(built, tmp_path):
    config_file = built / "stores.json"
    write_stores_config(
        config_file,
        retriever_config_from_args(bm25_stores=[str(built / "papers.bm25")], environ={}),
    )
    env = {"KLEA_STORES_CONFIG_FILE": str(config_file)}
    assert _paths(retriever_config_from_args(environ=env))[1] == [str(built / "papers.bm25")]
    direct = retriever_config_from_args(
        bm25_stores=[f"fts5:{built / 'papers.sqlite'}"], environ=env
    )
    assert _paths(direct)[1] == [f"fts5:{built / 'papers.sqlite'}"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "no stores"),
        ({"stores_config": "x.json", "bm25_stores": ["a"]}, "not both"),
        ({"stores": ["chroma:/x"]}, "expected COLLECTION=URI"),
        ({"stores": ["papers=/x"]}, "must start with one of"),
        ({"stores": ["papers=mongo:/x"]}, "must start with one of"),
        ({"bm25_stores": ["fts5:"]}, "expected a file path"),
    ],
)
def test_usage_errors(kwargs, message):
    with pytest.raises(StoreArgsError, match=message):
        retriever_config_from_args(environ={}, **kwargs)


def test_unknown_domain_names_the_known_ones(built):
    with pytest.raises(StoreArgsError, match=r"unknown domain 'x'.*'default'"):
        retriever_config_from_args(
            bm25_stores=[str(built / "papers.bm25")], domains=["x"], environ={}
        )


def test_same_file_names_get_unique_store_names(built, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    write_corpus_pickle(other / "papers.bm25", corpus_documents())
    config = retriever_config_from_args(
        bm25_stores=[str(built / "papers.bm25"), str(other / "papers.bm25")], environ={}
    )
    assert [s.name for s in config.domains[DIRECT_DOMAIN].bm25_stores] == [
        "papers.bm25",
        "papers.bm25-2",
    ]


def test_written_config_is_relative_and_works_from_elsewhere(built, tmp_path, monkeypatch):
    monkeypatch.chdir(built)
    direct = retriever_config_from_args(
        stores=["papers=chroma:chroma"], bm25_stores=["papers.bm25"], environ={}
    )
    path = write_stores_config(built / "stores.json", direct)
    data = json.loads(path.read_text())
    store = data["domains"][DIRECT_DOMAIN]
    assert store["vector_stores"][0]["path"] == "chroma:chroma"
    assert store["bm25_stores"][0]["path"] == "papers.bm25"
    monkeypatch.chdir(tmp_path)
    assert retriever_config_from_args(path, environ={}) == direct


collections = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True)
locations = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1
).map(lambda t: "/" + t)


def test_a_bm25_store_whose_file_name_is_blank_is_named_by_its_location():
    # Found by the round-trip property below: the name was the blank file name (a
    # pydantic ValidationError, not a usage error).
    assert parse_bm25_store_arg("fts5:/ ").name == "/ "
    assert parse_bm25_store_arg("fts5:/ ").path == "fts5:/ "


@given(collections, st.sampled_from(["chroma", "qdrant", "pgvector"]), locations)
def test_vector_store_args_round_trip_through_the_printed_command(collection, scheme, location):
    uri = f"{scheme}:{location}"
    command = retrieve_command([(collection, uri)], [f"fts5:{location}"], query="q")
    words = shlex.split(command)
    assert words[0] == "klea-retrieve"
    assert words[-1] == "q"
    info = parse_vector_store_arg(words[2])
    assert (info.name, info.path) == (collection, uri)
    assert parse_bm25_store_arg(words[4]).path == f"fts5:{location}"


def test_cli_queries_stores_given_directly(built, capsys, monkeypatch):
    monkeypatch.chdir(built)
    monkeypatch.delenv("KLEA_STORES_CONFIG_FILE", raising=False)
    argv = [
        "--bm25-store",
        "papers.bm25",
        "--bm25-store",
        "fts5:papers.sqlite",
        "-k",
        "2",
        "Golgi cells",
    ]
    assert main(argv) == 0
    assert "sinha2021.pdf" in capsys.readouterr().out


def test_cli_wrong_path_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("KLEA_STORES_CONFIG_FILE", raising=False)
    assert main(["--bm25-store", str(tmp_path / "gone.bm25"), "q"]) == 2
    err = capsys.readouterr().err
    assert "gone.bm25" in err
    assert err.count("\n") == 1
