"""klea-serve's reload: the swap, the drain, the watcher and ``POST /api/reload``.

A real server over the test library; the stores are changed on disk by rewriting the
pickled BM25 corpus with one more paper. The end-to-end case (``klea-stores-create
build`` against a served store) is ``tests-integration/test_serve_reload.py``.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace

import httpx
import pytest
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.serve import (
    AccessPolicy,
    KleaService,
    LiveService,
    ServeOptions,
    build_app,
    open_service,
)
from klea_utils.stores.serve.lifecycle.reload import fingerprint, store_files
from langchain_core.documents import Document
from retrieval_support import corpus_documents, write_corpus_pickle
from serve_support import ServerThread, build_stores, free_port

TOKEN = "reload-token-0123456789abcdef"
NEW = Document(
    id="new2024.pdf:0",
    page_content="Astrocytes regulate synaptic plasticity through gliotransmission.",
    metadata={"file_name": "new2024.pdf", "title": "Astrocytes", "year": 2024},
)


@pytest.fixture
def stores(tmp_path, fake_embeddings):
    return build_stores(tmp_path, fake_embeddings)


def _options(stores, embeddings) -> ServeOptions:
    return ServeOptions(
        config=RetrieverConfig.model_validate_json(stores.bm25_config.read_text()),
        embedding_model=embeddings,
        fts5_index=stores.fts5,
    )


def _live(stores, embeddings, **kwargs) -> LiveService:
    options = _options(stores, embeddings)
    service = open_service(options, progress=lambda _: None)
    return LiveService(service, lambda: options, **kwargs)


def _add_paper(stores) -> None:
    write_corpus_pickle(stores.config.parent / "bm25.pkl", [*corpus_documents(), NEW])


def _files(client: httpx.Client) -> set[str]:
    found = client.post("/api/retrieve", json={"query": "astrocytes gliotransmission", "k": 5})
    assert found.status_code == 200, found.text
    return {p["file"] for p in found.json()["passages"]}


def test_the_watched_files_are_the_stores_and_their_manifests(stores, fake_embeddings):
    options = ServeOptions(
        config=RetrieverConfig.model_validate_json(stores.config.read_text()),
        embedding_model=fake_embeddings,
        fts5_index=stores.fts5,
    )
    names = {p.name for p in store_files(options, stores.config)}
    assert names == {
        "stores.json",
        "bm25.pkl",
        "bm25.pkl.klea.json",
        "chunks.sqlite",
        "chunks.sqlite.klea.json",
        "chroma.sqlite3",
    }
    before = fingerprint(store_files(options, stores.config))
    service = open_service(options, progress=lambda _: None)  # opening touches Chroma's file
    asyncio.run(service.aclose())
    assert fingerprint(store_files(options, stores.config)) == before
    _add_paper(stores)
    assert fingerprint(store_files(options, stores.config)) != before


def test_a_request_finishes_on_the_service_it_started_on(stores, fake_embeddings):
    live = _live(stores, fake_embeddings, interval=0)
    first = live.current
    closed: list[KleaService] = []

    async def scenario() -> None:
        original = first.health
        gate = asyncio.Event()

        async def slow_health() -> dict:
            await gate.wait()
            return await original()

        first.health = slow_health  # type: ignore[method-assign]
        first_aclose = first.aclose

        async def record_close() -> None:
            closed.append(first)
            await first_aclose()

        first.aclose = record_close  # type: ignore[method-assign]
        running = asyncio.create_task(live.health())
        await asyncio.sleep(0.05)
        answer = await live.reload("test")
        assert answer["generation"] == 2
        assert live.current is not first
        await asyncio.sleep(0.2)
        assert closed == []  # its request still runs
        gate.set()
        assert (await running)["status"] == "ok"
        await asyncio.sleep(0.2)
        assert closed == [first]
        await live.aclose()

    asyncio.run(scenario())


def test_the_watcher_reloads_a_changed_store(stores, fake_embeddings):
    lines: list[str] = []
    live = _live(stores, fake_embeddings, interval=0.1, progress=lines.append)
    port = free_port()
    app = build_app(live, port=port)
    with ServerThread(app, port) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        assert "new2024.pdf" not in _files(http)
        _add_paper(stores)
        deadline = time.monotonic() + 30
        while "new2024.pdf" not in _files(http):
            assert time.monotonic() < deadline, lines
            time.sleep(0.1)
        assert live.generation == 2
        time.sleep(0.5)  # five more polls: reopening the stores must not trigger a reload
        assert live.generation == 2
    assert "reloading the stores (the stores changed on disk) ..." in lines


def test_post_reload_behind_the_token_and_a_failed_reload_keeps_serving(stores, fake_embeddings):
    options = _options(stores, fake_embeddings)
    service = open_service(options, progress=lambda _: None)
    broken = {"now": False}

    def load() -> ServeOptions:
        if broken["now"]:
            return replace(options, fts5_index=stores.fts5.with_name("gone.sqlite"))
        return options

    live = LiveService(service, load, interval=0)
    port = free_port()
    app = build_app(live, port=port, access=AccessPolicy(token=TOKEN))
    auth = {"authorization": f"Bearer {TOKEN}"}
    with ServerThread(app, port) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.post("/api/reload").status_code == 401
        _add_paper(stores)
        reloaded = http.post("/api/reload", headers=auth)
        assert reloaded.status_code == 200, reloaded.text
        assert reloaded.json()["generation"] == 2
        http.headers.update(auth)
        assert "new2024.pdf" in _files(http)
        broken["now"] = True
        failed = http.post("/api/reload")
        assert failed.status_code == 503
        assert "gone.sqlite" in failed.json()["detail"]
        assert "previous ones are still served" in failed.json()["detail"]
        assert live.generation == 2
        time.sleep(0.5)  # five more polls: reopening the stores must not trigger a reload
        assert live.generation == 2
        assert "new2024.pdf" in _files(http)


def test_a_reload_serves_the_new_filter_fields_and_domains(stores, fake_embeddings):
    options = _options(stores, fake_embeddings)
    wider = json.loads(stores.bm25_config.read_text())
    wider["domains"]["neuro"]["filter_fields"] = [
        {"name": "lab", "description": "The lab that wrote it.", "value_type": "string"}
    ]
    wider["domains"]["glia"] = wider["domains"]["neuro"]
    later = replace(options, config=RetrieverConfig.model_validate(wider))
    state = {"options": options}
    service = open_service(options, progress=lambda _: None)
    live = LiveService(service, lambda: state["options"], interval=0)
    port = free_port()
    app = build_app(live, port=port)

    async def retrieve_tool() -> dict:
        from mcp import Client

        async with Client(f"{server.url}/mcp") as mcp:
            tools = await mcp.list_tools()
        return next(t.input_schema for t in tools.tools if t.name == "retrieve")

    lab = {"query": "golgi", "filter": {"lab": "Sinha"}}
    with ServerThread(app, port) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        assert http.post("/api/retrieve", json=lab).status_code == 422
        # quoted: a field named lab, not the word "label" of a description
        assert '"lab"' not in json.dumps(http.get("/api/openapi.json").json())
        assert "glia" not in json.dumps(asyncio.run(retrieve_tool()))
        state["options"] = later
        assert http.post("/api/reload").status_code == 200
        answer = http.post("/api/retrieve", json=lab)
        assert answer.status_code == 200, answer.text
        assert answer.json()["filter"] == {"lab": {"$eq": "Sinha"}}
        schema = http.get("/api/openapi.json").json()["components"]["schemas"]
        assert "lab" in schema["RetrieveFilter"]["properties"]
        tool = json.dumps(asyncio.run(retrieve_tool()))
        assert "glia" in tool
        assert "lab" in tool
        assert http.post("/api/retrieve", json={**lab, "filter": {"nope": 1}}).status_code == 422


def test_a_plain_service_has_no_reload_route(stores, fake_embeddings):
    service = open_service(_options(stores, fake_embeddings), progress=lambda _: None)
    app = build_app(service)
    assert "/api/reload" not in {getattr(r, "path", "") for r in app.routes}
    asyncio.run(service.aclose())
