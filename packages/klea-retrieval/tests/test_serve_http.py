"""klea-serve's HTTP API through a real server on a free loopback port, bad input included."""

from __future__ import annotations

import asyncio
import concurrent.futures

import httpx
import pytest
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.serve import ServeOptions, build_app, open_service
from serve_support import ServerThread, build_stores, free_port
from test_pipeline import FailingEmbeddings


def _serve(config_path, fts5, vectors, embeddings, progress=lambda _: None):
    options = ServeOptions(
        config=RetrieverConfig.model_validate_json(config_path.read_text()),
        embedding_model=embeddings,
        fts5_index=fts5,
        vectors=vectors,
        k=3,
    )
    service = open_service(options, progress=progress)
    port = free_port()
    return ServerThread(build_app(service, port=port), port)


@pytest.fixture(scope="module")
def stores(tmp_path_factory, fake_embeddings):
    return build_stores(tmp_path_factory.mktemp("serve-http"), fake_embeddings)


@pytest.fixture(scope="module")
def server(stores, fake_embeddings):
    with _serve(stores.config, stores.fts5, stores.vectors, fake_embeddings) as running:
        yield running


@pytest.fixture
def client(server):
    with httpx.Client(base_url=server.url, timeout=30) as http:
        yield http


def test_health(client):
    body = client.get("/api/health").json()
    assert body["status"] == "ok"
    assert body["domains"] == ["neuro"]
    assert (body["papers"], body["passages"], body["search_records"]) == (4, 6, 6)
    assert body["vectors"] is True


def test_retrieve_passages_and_references(client):
    response = client.post("/api/retrieve", json={"query": "Golgi cells granule", "k": 2})
    assert response.status_code == 200
    body = response.json()
    assert body["notes"] == []
    first = body["passages"][0]
    assert first["file"] == "sinha2021.pdf"
    assert first["authors"] == ["Ankur Sinha", "Padraig Gleeson"]
    assert first["year"] == 2021
    assert first["title"] == "Cerebellar models"
    assert "Granule cells and Golgi cells" in first["text"]
    assert body["references"].startswith("### Source document 1/")


def test_retrieve_typed_filter(client):
    body = client.post(
        "/api/retrieve", json={"query": "neurons", "k": 5, "filter": {"year": {"gte": 2015}}}
    ).json()
    assert body["filter"] == {"year": {"$gte": 2015}}
    assert body["passages"]
    assert all(p["year"] >= 2015 for p in body["passages"])


@pytest.mark.parametrize(
    ("payload", "status", "fragment"),
    [
        ({"query": "x", "k": 0}, 422, "greater than or equal to 1"),
        ({"k": 3}, 422, "Field required"),
        ({"query": "x", "filter": {"colour": "red"}}, 422, "Extra inputs are not permitted"),
        ({"query": "x", "domains": ["nope"]}, 400, "unknown domain 'nope'"),
        ({"query": "   "}, 400, "query must not be blank"),
        ({"query": "x", "context": "page"}, 422, "'off', 'neighbours' or 'section'"),
        ({"query": "x", "context_tokens": 0}, 422, "greater than or equal to 1"),
    ],
)
def test_retrieve_bad_input(client, payload, status, fragment):
    response = client.post("/api/retrieve", json=payload)
    assert response.status_code == status
    assert fragment in response.text


def test_search_boolean_with_highlights(client):
    body = client.get("/api/search", params={"q": "golgi OR dopamine", "mode": "lexical"}).json()
    assert body["error"] is None
    files = {hit["file"] for hit in body["hits"]}
    assert files == {"sinha2021.pdf", "smith2019.pdf"}
    for hit in body["hits"]:
        snippet = hit["snippets"][0]
        marked = [snippet["text"][a:b].lower() for a, b in snippet["highlights"]]
        assert set(marked) & {"golgi", "dopamine"}
    assert [c["text"] for c in body["chips"]] == ["golgi", "dopamine"]


def test_search_question_uses_any_word_and_hybrid(client):
    body = client.get("/api/search", params={"q": "what do golgi cells inhibit"}).json()
    assert body["mode"] == "hybrid"
    assert body["interpreted_as"] == '"golgi" OR "cells" OR "inhibit"'
    assert body["hits"][0]["file"] == "sinha2021.pdf"


def test_search_malformed_query_answers_the_caret(client):
    response = client.get("/api/search", params={"q": "golgi AND (cells"})
    assert response.status_code == 200
    error = response.json()["error"]
    assert error["position"] == 10
    assert error["caret"] == "golgi AND (cells\n          ^"


def test_search_facet_filters(client):
    params = {"q": "neurons", "mode": "lexical", "year_from": 2016, "author": "Ann Smith"}
    body = client.get("/api/search", params=params).json()
    assert {hit["file"] for hit in body["hits"]} == {"smith2019.pdf"}


@pytest.mark.parametrize(
    ("params", "status", "fragment"),
    [
        ({"q": "x", "mode": "psychic"}, 422, "'lexical', 'semantic' or 'hybrid'"),
        ({"q": "x", "limit": 500}, 422, "less than or equal to 50"),
        ({"q": ""}, 422, "at least 1 character"),
        ({"q": "x", "year_from": "soon"}, 422, "valid integer"),
        ({"q": "x", "year_from": 2020, "year_to": 2010}, 400, "above"),
    ],
)
def test_search_bad_input(client, params, status, fragment):
    response = client.get("/api/search", params=params)
    assert response.status_code == status, response.text
    assert fragment in response.text


def test_get_document_in_order_and_404(client):
    body = client.get("/api/documents/sinha2021.pdf").json()
    assert body["title"] == "Cerebellar models"
    assert body["year"] == 2021
    assert [p["id"] for p in body["passages"]] == ["sinha2021.pdf:0", "sinha2021.pdf:1"]
    missing = client.get("/api/documents/nope.pdf")
    assert missing.status_code == 404
    assert "no paper 'nope.pdf'" in missing.json()["detail"]


def test_facets_all_and_for_a_query(client):
    body = client.get("/api/facets").json()
    assert body["papers"] == 4
    years = {f["value"]: f["count"] for f in body["facets"]["year"]}
    assert years == {"2000": 1, "2015": 1, "2019": 1, "2021": 1}
    assert {"value": "Neuron", "count": 1} in body["facets"]["journal"]
    narrowed = client.get("/api/facets", params={"key": "author", "q": "golgi"}).json()
    assert narrowed["facets"] == {
        "author": [{"value": "Ankur Sinha", "count": 1}, {"value": "Padraig Gleeson", "count": 1}]
    }
    assert client.get("/api/facets", params={"key": "colour"}).status_code == 422
    bad = client.get("/api/facets", params={"q": "golgi AND ("})
    assert bad.status_code == 400
    assert "at position 11" in bad.text


def test_graph_of_results(client):
    ids = ["sinha2021.pdf:0", "sinha2021.pdf:1", "jones2015.pdf:0"]
    body = client.post("/api/graph", json={"record_ids": ids}).json()
    assert body["available"] is True
    assert [n["id"] for n in body["nodes"]] == ids
    assert body["edges"]
    assert all(e["source"] in ids and e["target"] in ids for e in body["edges"])
    assert {e["kind"] for e in body["edges"]} == {"similarity"}
    assert body["citations"] is False  # no links file configured
    assert client.post("/api/graph", json={"record_ids": []}).status_code == 422
    wrong = client.post("/api/graph", json={"record_ids": ids, "edge_kinds": ["cites"]})
    assert wrong.status_code == 422
    assert "edge_kinds" in wrong.text
    only = client.post("/api/graph", json={"record_ids": ids, "edge_kinds": ["citation"]})
    assert only.json()["edges"] == []


def test_openapi_docs_and_page(client):
    schema = client.get("/api/openapi.json").json()
    assert {"/api/retrieve", "/api/search", "/api/facets", "/api/health"} <= set(schema["paths"])
    assert "klea-serve HTTP API" in client.get("/api/docs").text
    page = client.get("/")
    assert page.status_code == 200
    assert 'id="q"' in page.text
    assert client.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/nope.js").status_code == 404


def test_concurrent_requests_all_answer(server):
    def one(i: int) -> int:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            if i % 2:
                return http.post("/api/retrieve", json={"query": f"neurons {i}"}).status_code
            return http.get("/api/search", params={"q": "neurons"}).status_code

    with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
        assert set(pool.map(one, range(24))) == {200}


def test_mcp_over_streamable_http(server):
    from mcp import Client

    async def talk():
        async with Client(f"{server.url}/mcp") as mcp:
            tools = await mcp.list_tools()
            result = await mcp.call_tool("get_document", {"file_name": "magee2000.pdf"})
            return [t.name for t in tools.tools], result.structured_content

    names, document = asyncio.run(talk())
    assert sorted(names) == ["citations", "facets", "get_document", "retrieve", "search"]
    assert document["title"] == "Dendritic integration"


def test_a_failing_store_degrades_with_a_note(stores):
    with (
        _serve(stores.config, None, None, FailingEmbeddings()) as running,
        httpx.Client(base_url=running.url, timeout=30) as http,
    ):
        body = http.post("/api/retrieve", json={"query": "Golgi cells"}).json()
        assert body["notes"] == ["neuro: vector store: RuntimeError: embedding server unreachable"]
        assert body["passages"][0]["file"] == "sinha2021.pdf"
        missing = http.get("/api/search", params={"q": "golgi"})
        assert missing.status_code == 404
        assert "--fts5-index" in missing.text


def test_an_unreadable_search_index_answers_503(stores, fake_embeddings, tmp_path):
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this is not a database" * 100)
    lines: list[str] = []
    with (
        _serve(stores.bm25_config, broken, None, fake_embeddings, lines.append) as running,
        httpx.Client(base_url=running.url, timeout=30) as http,
    ):
        response = http.get("/api/search", params={"q": "golgi"})
        assert response.status_code == 503
        assert response.json()["detail"].startswith("SearchStoreError: ")
        assert http.post("/api/retrieve", json={"query": "golgi"}).status_code == 200
    assert any(line.startswith("warning: ") and "broken.sqlite" in line for line in lines)
