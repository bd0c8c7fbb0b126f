"""klea-serve's limits on each request, and its error answers that name no path or secret.

A real server over the test library on a free loopback port: over-long bodies (announced
and streamed), fields and lists; a flood past the concurrency limit; a store that fails
with its path and a PostgreSQL URI holding a password in the exception's text.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.serve import (
    KleaService,
    SearchParams,
    ServeLimits,
    ServeOptions,
    build_app,
    open_service,
)
from klea_utils.stores.serve.core.public_errors import public_text
from klea_utils.stores.serve.http.limits import ConcurrencyLimit
from serve_support import ServerThread, build_stores, free_port
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

LIMITS = ServeLimits(max_body_bytes=64 * 1024, max_query_chars=200, max_list_items=4)
SECRET_URI = "postgresql+psycopg://klea:hunter2-secret@db.lab.example:5432/papers"


def _service(stores: Any, embeddings: Any, **options: Any) -> KleaService:
    return open_service(
        ServeOptions(
            config=RetrieverConfig.model_validate_json(stores.config.read_text()),
            embedding_model=embeddings,
            fts5_index=stores.fts5,
            **options,
        ),
        progress=lambda _: None,
    )


@pytest.fixture(scope="module")
def stores(tmp_path_factory, fake_embeddings):
    return build_stores(tmp_path_factory.mktemp("serve-limits"), fake_embeddings)


@pytest.fixture(scope="module")
def service(stores, fake_embeddings):
    return _service(stores, fake_embeddings, limits=LIMITS)


@pytest.fixture(scope="module")
def http(service) -> Iterator[httpx.Client]:
    port = free_port()
    with (
        ServerThread(build_app(service, port=port), port) as running,
        httpx.Client(base_url=running.url, timeout=30) as client,
    ):
        yield client


# -- bodies, fields and lists ------------------------------------------------------------


def test_a_body_over_the_limit_answers_413_announced_or_streamed(http):
    big = {"query": "golgi", "domains": ["x" * 100] * 1000}  # ~100 kB of JSON
    announced = http.post("/api/retrieve", json=big)
    assert announced.status_code == 413
    assert "65536 bytes" in announced.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: sent chunked
        data = json.dumps(big).encode()
        for start in range(0, len(data), 8192):
            yield data[start : start + 8192]

    streamed = http.post(
        "/api/retrieve", content=chunks(), headers={"content-type": "application/json"}
    )
    assert streamed.status_code == 413
    assert "65536 bytes" in streamed.json()["detail"]
    mcp = http.post("/mcp", content=b"{" + b" " * 70_000 + b"}")
    assert mcp.status_code == 413
    # under the limit, the same route answers
    assert http.post("/api/retrieve", json={"query": "golgi"}).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "request_kwargs", "field"),
    [
        ("POST", "/api/retrieve", {"json": {"query": "g" * 201}}, "query"),
        ("POST", "/api/retrieve", {"json": {"query": "g", "domains": ["a"] * 5}}, "domains"),
        ("POST", "/api/retrieve", {"json": {"query": "g", "domains": ["a" * 513]}}, "domains"),
        ("GET", "/api/search", {"params": {"q": "g" * 201}}, "q"),
        ("GET", "/api/search", {"params": {"q": "g", "author": ["a"] * 5}}, "author"),
        ("GET", "/api/facets", {"params": {"q": "g" * 201}}, "q"),
        ("POST", "/api/graph", {"json": {"record_ids": ["r" * 513]}}, "record_ids"),
    ],
)
def test_an_over_long_field_or_list_answers_422_naming_it(
    http, method, path, request_kwargs, field
):
    answer = http.request(method, path, **request_kwargs)
    assert answer.status_code == 422, answer.text
    errors = answer.json()["detail"]
    assert any(field in error["loc"] for error in errors)
    assert any("at most" in error["msg"] for error in errors)


def test_at_the_limit_a_query_is_served(http):
    assert http.post("/api/retrieve", json={"query": "golgi " * 33 + "ce"}).status_code == 200
    assert http.get("/api/search", params={"q": "g" * 200}).status_code == 200


def test_the_default_query_limit_is_4096_characters(stores, fake_embeddings):
    service = _service(stores, fake_embeddings)
    try:
        assert service.options.limits.max_query_chars == 4096
        asyncio.run(service.retrieve("golgi " * 682 + "cell"))  # 4,096 characters
        with pytest.raises(ValueError, match="4097 characters; at most 4096"):
            asyncio.run(service.retrieve("g" * 4097))
        with pytest.raises(ValueError, match="at most 4096"):
            asyncio.run(service.search(SearchParams(query="g" * 4097)))
    finally:
        asyncio.run(service.aclose())


def test_limits_must_be_positive():
    with pytest.raises(ValueError, match="max_concurrent must be a positive whole number"):
        ServeLimits(max_concurrent=0)


# -- a flood -----------------------------------------------------------------------------


def test_past_the_concurrency_limit_a_request_answers_503_at_once():
    release = asyncio.Event()
    started = asyncio.Event()

    async def slow(_: Any) -> JSONResponse:
        started.set()
        await release.wait()
        return JSONResponse({"ok": True})

    app = ConcurrencyLimit(Starlette(routes=[Route("/slow", slow)]), limit=2)
    transport = httpx.ASGITransport(app=app)

    async def flood() -> list[int]:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            held = [asyncio.create_task(client.get("/slow")) for _ in range(2)]
            while app.in_progress < 2:
                await asyncio.sleep(0.01)
            refused = await client.get("/slow")
            assert refused.headers["retry-after"] == "1"
            assert "busy" in refused.json()["detail"]
            release.set()
            answered = [(await task).status_code for task in held]
            after = await client.get("/slow")
            return [refused.status_code, *answered, after.status_code, app.in_progress]

    assert asyncio.run(flood()) == [503, 200, 200, 200, 0]
    assert started.is_set()


def test_the_app_is_behind_its_concurrency_limit(stores, fake_embeddings):
    service = _service(stores, fake_embeddings, limits=ServeLimits(max_concurrent=1))
    entered, release = threading.Event(), threading.Event()
    original = service.pipeline.retrieve_all

    def held(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        release.wait(30)
        return original(*args, **kwargs)

    service.pipeline.retrieve_all = held  # type: ignore[method-assign]
    port = free_port()
    with ServerThread(build_app(service, port=port), port) as running:
        first: dict[str, int] = {}

        def ask() -> None:
            answer = httpx.post(running.url + "/api/retrieve", json={"query": "golgi"}, timeout=60)
            first["status"] = answer.status_code

        thread = threading.Thread(target=ask)
        thread.start()
        assert entered.wait(30)
        assert httpx.get(running.url + "/api/health").status_code == 503
        release.set()
        thread.join(60)
        assert first["status"] == 200
        assert httpx.get(running.url + "/api/health").status_code == 200


# -- errors without paths or credentials -------------------------------------------------


def test_public_text_keeps_the_problem_and_drops_paths_and_secrets():
    text = public_text(
        f"SearchStoreError: /srv/lab/alice/index/chunks.sqlite: malformed; {SECRET_URI} "
        r"refused; C:\Users\bob\lib\bm25.pkl missing; password=hunter2; and/or 1/2"
    )
    assert text == (
        "SearchStoreError: chunks.sqlite: malformed; postgresql+psycopg://…@db.lab.example:5432"
        "/papers refused; bm25.pkl missing; password=…; and/or 1/2"
    )


def test_health_names_the_index_by_its_file_name_only(http, stores):
    health = http.get("/api/health")
    assert health.json()["search_index"] == stores.fts5.name
    assert str(stores.fts5.parent) not in health.text


def test_a_failing_leg_is_noted_without_its_path_or_password(
    stores, fake_embeddings, caplog: pytest.LogCaptureFixture
):
    service = _service(stores, fake_embeddings)
    folder = stores.config.parent

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise OSError(f"{folder}/bm25.pkl unreadable; fallback {SECRET_URI} refused")

    service.pipeline.bm25.retrieve_per_store = failing  # type: ignore[method-assign]
    port = free_port()
    with (
        caplog.at_level(logging.WARNING),
        ServerThread(build_app(service, port=port), port) as running,
    ):
        answer = httpx.post(running.url + "/api/retrieve", json={"query": "golgi"}, timeout=30)
    assert answer.status_code == 200
    notes = answer.json()["notes"]
    assert notes
    assert all("bm25.pkl unreadable" in n or "vector" in n for n in notes)
    assert str(folder) not in answer.text
    assert "hunter2" not in answer.text
    assert str(folder) in caplog.text  # the operator's log has the whole detail


def test_a_store_that_fails_answers_503_with_a_request_id_and_no_path(
    stores, fake_embeddings, tmp_path, caplog: pytest.LogCaptureFixture
):
    broken = tmp_path / "deep" / "folder" / "broken.sqlite"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"this is not a database" * 100)
    service = open_service(
        ServeOptions(
            config=RetrieverConfig.model_validate_json(stores.bm25_config.read_text()),
            embedding_model=fake_embeddings,
            fts5_index=broken,
        ),
        progress=lambda _: None,
    )
    port = free_port()
    with (
        caplog.at_level(logging.ERROR, logger="klea_utils.stores.serve"),
        ServerThread(build_app(service, port=port), port) as running,
    ):
        answer = httpx.get(running.url + "/api/search", params={"q": "golgi"}, timeout=30)
        health = httpx.get(running.url + "/api/health", timeout=30)
    assert answer.status_code == 503
    body = answer.json()
    assert body["detail"].startswith("SearchStoreError: ")
    assert "broken.sqlite" in body["detail"]
    assert str(tmp_path) not in answer.text
    assert str(tmp_path) not in health.text
    assert f"request {body['request_id']}" in caplog.text
    assert str(tmp_path) in caplog.text


def test_an_unexpected_failure_answers_500_with_a_request_id_only(
    stores, fake_embeddings, caplog: pytest.LogCaptureFixture
):
    service = _service(stores, fake_embeddings)
    folder = stores.config.parent

    async def broken(file_name: str) -> dict[str, Any]:
        raise RuntimeError(f"{folder}/secret/layout went wrong")

    service.get_document = broken  # type: ignore[method-assign]
    port = free_port()
    with (
        caplog.at_level(logging.ERROR, logger="klea_utils.stores.serve"),
        ServerThread(build_app(service, port=port), port) as running,
    ):
        answer = httpx.get(running.url + "/api/documents/x.pdf", timeout=30)
    assert answer.status_code == 500
    assert str(folder) not in answer.text
    assert "Traceback" not in answer.text
    assert answer.json()["request_id"] in caplog.text
