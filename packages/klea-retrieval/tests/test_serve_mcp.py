"""``klea-serve --mcp`` as a subprocess, driven by the MCP SDK's own stdio client."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TextIO

import pytest
from retrieval_support import corpus_documents, write_corpus_pickle, write_fts5_index

KLEA_SERVE = str(Path(sys.executable).with_name("klea-serve"))


@pytest.fixture(scope="module")
def stores_config(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("serve-mcp")
    docs = corpus_documents()
    write_corpus_pickle(folder / "bm25.pkl", docs)
    write_fts5_index(folder / "chunks.sqlite", docs)
    config = {
        "domains": {
            "neuro": {
                "bm25_stores": [
                    {"name": "pickled", "path": "bm25.pkl"},
                    {"name": "fts", "path": "fts5:chunks.sqlite"},
                ]
            }
        }
    }
    path = folder / "stores.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


async def _session(
    stores_config: Path, calls: list[tuple[str, dict]], errlog: TextIO
) -> tuple[list, list]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=KLEA_SERVE, args=["--mcp", "--stores-config", str(stores_config)]
    )
    async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=300) as client:
        tools = (await client.list_tools()).tools
        results = [await client.call_tool(name, args) for name, args in calls]
    return tools, results


@pytest.fixture(scope="module")
def session(stores_config):
    calls = [
        ("retrieve", {"query": "Golgi cells", "k": 2, "filter": {"year": {"gte": 2020}}}),
        ("search", {"query": "golgi OR dopamine", "limit": 5}),
        ("search", {"query": "golgi AND (cells"}),
        ("get_document", {"file_name": "sinha2021.pdf"}),
        ("facets", {"keys": ["year", "author"], "query": "neurons"}),
        ("get_document", {"file_name": "nope.pdf"}),
        ("retrieve", {"query": "x", "domains": ["nope"]}),
        ("retrieve", {"query": "x", "k": 0}),
        ("search", {"query": "x", "filters": {"year_from": 2020, "year_to": 2000}}),
        ("search", {"query": "golgi OR cells OR cerebellum", "group": "paper"}),
    ]
    log = stores_config.with_name("server.log")
    with log.open("w+", encoding="utf-8") as errlog:
        try:
            tools, results = asyncio.run(_session(stores_config, calls, errlog))
        except Exception as exc:  # say what the server printed, not only the client's view
            errlog.seek(0)
            raise AssertionError(f"MCP session failed: {exc!r}\nserver: {errlog.read()}") from exc
    assert "klea-serve: MCP on stdio" in log.read_text(encoding="utf-8")
    return {t.name: t for t in tools}, results


def test_lists_the_five_tools_with_typed_parameters(session):
    tools, _ = session
    assert sorted(tools) == ["citations", "facets", "get_document", "retrieve", "search"]
    retrieve = tools["retrieve"].input_schema
    assert retrieve["required"] == ["query"]
    assert {"query", "k", "filter", "domains"} <= set(retrieve["properties"])
    schema_text = json.dumps(retrieve)
    assert '"gte"' in schema_text
    assert '"authors"' in schema_text
    assert "references" in tools["retrieve"].description
    assert "caret" in tools["search"].description


def test_retrieve(session):
    result = session[1][0]
    assert not result.is_error
    body = result.structured_content
    assert body["passages"][0]["file"] == "sinha2021.pdf"
    assert "Golgi cells" in body["passages"][0]["text"]
    assert all(p["year"] >= 2020 for p in body["passages"])
    assert body["filter"] == {"year": {"$gte": 2020}}
    assert "[sinha2021.pdf]" in body["references"]


def test_search_with_snippets_and_the_located_error(session):
    ok, malformed = session[1][1], session[1][2]
    hits = ok.structured_content["hits"]
    assert {h["file"] for h in hits} == {"sinha2021.pdf", "smith2019.pdf"}
    assert all(h["snippets"][0]["highlights"] for h in hits)
    assert not malformed.is_error
    error = malformed.structured_content["error"]
    assert error["position"] == 10
    assert error["caret"].endswith("\n          ^")


def test_search_grouped_by_paper(session):
    result = session[1][9].structured_content
    assert result["hits"] == []
    [paper] = result["papers"]
    assert (paper["file"], paper["hits"]) == ("sinha2021.pdf", 2)
    assert {p["record_id"] for p in paper["passages"]} == {"sinha2021.pdf:0", "sinha2021.pdf:1"}


def test_get_document_and_facets(session):
    document, facets = session[1][3].structured_content, session[1][4].structured_content
    assert document["title"] == "Cerebellar models"
    assert [p["id"] for p in document["passages"]] == ["sinha2021.pdf:0", "sinha2021.pdf:1"]
    assert set(facets["facets"]) == {"year", "author"}
    assert facets["papers"] == 3  # "neuron" in sinha2021 is another word


@pytest.mark.parametrize(
    ("index", "message"),
    [
        (5, "no paper 'nope.pdf'"),
        (6, "unknown domain 'nope'"),
        (7, "greater than or equal to 1"),
        (8, "above"),
    ],
)
def test_errors_are_tool_errors_with_a_message(session, index, message):
    result = session[1][index]
    assert result.is_error
    assert message in result.content[0].text
