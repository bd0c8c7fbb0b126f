"""klea-serve answers before its stores are loaded: health says so, requests wait for them.

A real server over the test library whose load is held back by a gate (the opener is
:func:`open_service` once the gate opens), so the state between the socket opening and
the stores being open can be looked at; the command line itself in a subprocess; and the
library's whole-corpus counts, which health reads without the per-paper facet rows.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from klea_utils.stores.config import RetrieverConfig
from klea_utils.stores.exceptions import StoreBackendError
from klea_utils.stores.serve import (
    KleaService,
    LiveService,
    ServeOptions,
    StartingService,
    build_app,
    open_service,
)
from klea_utils.stores.serve.papers.catalogue import PaperCatalogue
from klea_utils.stores.serve.papers.sources import Fts5PaperSource
from serve_support import ServeProcess, ServerThread, build_stores, counting_source, free_port

QUESTION = {"query": "Golgi cells granule", "k": 2}


@pytest.fixture(scope="module")
def stores(tmp_path_factory, fake_embeddings):
    return build_stores(tmp_path_factory.mktemp("serve-startup"), fake_embeddings)


def _options(stores, embeddings) -> ServeOptions:
    return ServeOptions(
        config=RetrieverConfig.model_validate_json(stores.config.read_text()),
        embedding_model=embeddings,
        fts5_index=stores.fts5,
        k=3,
    )


class Gate:
    """An opener that waits for :meth:`open` before opening the service, and counts calls."""

    def __init__(self, fail: bool = False) -> None:
        self.event = threading.Event()
        self.calls = 0
        self.fail = fail

    def open(self) -> None:
        self.event.set()

    def __call__(self, options: ServeOptions) -> KleaService:
        self.calls += 1
        assert self.event.wait(60), "the test never opened the gate"
        if self.fail:
            raise StoreBackendError("Chroma store 'x': the index is damaged")
        return open_service(options, progress=lambda _: None)


def _serve(starting: StartingService, options: ServeOptions) -> ServerThread:
    live = LiveService(starting, lambda: options, interval=0)
    port = free_port()
    return ServerThread(build_app(live, port=port), port)


def test_health_answers_while_loading_and_an_early_retrieve_waits(stores, fake_embeddings):
    options = _options(stores, fake_embeddings)
    expected = open_service(options, progress=lambda _: None)
    gate = Gate()
    starting = StartingService(options, opener=gate)
    with _serve(starting, options) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        starting.start()
        health = http.get("/api/health")
        assert health.status_code == 200
        body = health.json()
        assert (body["status"], body["ready"], body["papers"], body["vectors"]) == (
            "starting",
            False,
            None,
            None,
        )
        assert body["domains"] == ["neuro"]
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            early = pool.submit(http.post, "/api/retrieve", json=QUESTION)
            with pytest.raises(concurrent.futures.TimeoutError):
                early.result(timeout=0.5)  # waits for the stores, does not fail
            assert starting.loaded is None
            gate.open()
            answer = early.result(timeout=60)
        assert answer.status_code == 200, answer.text
        assert answer.json()["notes"] == []
        again = http.get("/api/health").json()
        assert (again["status"], again["ready"], again["papers"], again["passages"]) == (
            "ok",
            True,
            4,
            6,
        )
        assert again["vectors"] is True
        assert http.get("/api/facets").json()["papers"] == 4
    assert gate.calls == 1
    want = asyncio.run(expected.retrieve(QUESTION["query"], k=2))
    assert [p["id"] for p in answer.json()["passages"]] == [p["id"] for p in want["passages"]]
    asyncio.run(expected.aclose())


def test_a_failed_load_is_reported_by_health_and_answers_503(stores, fake_embeddings):
    options = _options(stores, fake_embeddings)
    failures: list[BaseException] = []
    gate = Gate(fail=True)
    starting = StartingService(options, opener=gate, on_failure=failures.append)
    with _serve(starting, options) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        starting.start()
        gate.open()
        answer = http.post("/api/retrieve", json=QUESTION)
        assert answer.status_code == 503
        assert "the index is damaged" in answer.json()["detail"]
        health = http.get("/api/health").json()
        assert (health["status"], health["ready"]) == ("failed", False)
        assert "StoreBackendError: Chroma store 'x': the index is damaged" in health["error"]
    assert [type(f) for f in failures] == [StoreBackendError]


def test_a_reload_asked_during_the_load_waits_for_it(stores, fake_embeddings):
    options = _options(stores, fake_embeddings)
    gate = Gate()
    starting = StartingService(options, opener=gate)
    with _serve(starting, options) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        starting.start()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            reload = pool.submit(http.post, "/api/reload")
            with pytest.raises(concurrent.futures.TimeoutError):
                reload.result(timeout=0.5)
            gate.open()
            answer = reload.result(timeout=60)
        assert answer.status_code == 200, answer.text
        assert answer.json()["generation"] == 2
        assert http.post("/api/retrieve", json=QUESTION).json()["passages"]


def test_passage_counts_do_not_read_every_papers_metadata(stores):
    source = counting_source(stores.fts5)
    catalogue = PaperCatalogue([source])
    counts = catalogue.passage_counts()
    assert (len(counts), sum(counts.values())) == (4, 6)
    assert source.metadata_reads == 0  # health's counts: no facet rows built
    papers, facets = catalogue.count_facets(["year"])
    assert papers == 4
    assert facets["year"]
    catalogue.count_facets(["author"])
    assert source.metadata_reads == 1  # built on the first facets, then kept


def test_the_command_answers_health_first_then_serves(stores, tmp_path):
    args = ["--stores-config", str(stores.bm25_config), "--fts5-index", str(stores.fts5)]
    with ServeProcess(args, tmp_path / "serve.log") as served:
        first = httpx.get(served.url + "/api/health", timeout=30).json()
        assert first["status"] in ("starting", "ok")
        assert first["ready"] is (first["status"] == "ok")
        answer = httpx.post(served.url + "/api/retrieve", json=QUESTION, timeout=120)
        assert answer.status_code == 200, answer.text
        assert answer.json()["passages"][0]["file"] == "sinha2021.pdf"
        health = httpx.get(served.url + "/api/health", timeout=30).json()
        assert (health["status"], health["papers"], health["passages"]) == ("ok", 4, 6)
    log = (tmp_path / "serve.log").read_text(encoding="utf-8")
    assert log.index("loading the stores in the background") < log.index("ready in")


def test_the_facet_rows_are_read_once_the_service_serves(stores, fake_embeddings):
    source = counting_source(stores.fts5)

    def opener(options: ServeOptions) -> KleaService:
        service = open_service(options, progress=lambda _: None)
        service.catalogue = PaperCatalogue([source])
        assert source.metadata_reads == 0  # not while loading
        return service

    starting = StartingService(_options(stores, fake_embeddings), opener=opener)
    starting.start()
    service = starting.wait(60)
    deadline = time.monotonic() + 30
    while source.metadata_reads == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert source.metadata_reads == 1
    assert asyncio.run(service.facets(["year"]))["papers"] == 4
    assert source.metadata_reads == 1  # the first facets found them read
    asyncio.run(service.aclose())


def test_the_app_is_built_and_serves_health_before_the_mcp_sdk_loads(stores, tmp_path):
    """What runs before the socket opens (the command line, the app) imports no MCP SDK."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from klea_utils.stores.serve import cli\n"
        "from klea_utils.stores.config import RetrieverConfig\n"
        "from klea_utils.stores.serve.core.options import ServeOptions\n"
        "from klea_utils.stores.serve.http.app import build_app\n"
        "from klea_utils.stores.serve.lifecycle.reload import LiveService\n"
        "from klea_utils.stores.serve.lifecycle.startup import StartingService\n"
        "config = RetrieverConfig.model_validate_json(Path(sys.argv[1]).read_text())\n"
        "options = ServeOptions(config=config)\n"
        "build_app(LiveService(StartingService(options), lambda: options))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'chromadb')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(stores.config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_opening_and_closing_the_index_keeps_the_source_version(stores, tmp_path):
    """The last connection to close removes an empty WAL: not a change of contents."""
    import shutil

    from klea_utils.stores.retrieval.fts5_index import open_fts5_store

    index = Path(shutil.copy(stores.fts5, tmp_path / "chunks.sqlite"))
    wal = index.with_name(index.name + "-wal")
    wal.write_bytes(b"")  # as a server that stopped leaves it
    source = Fts5PaperSource(index)
    before = source.version()

    async def touch() -> None:
        store = open_fts5_store(str(index))
        await store.count()
        await store.aclose()

    asyncio.run(touch())
    assert not wal.exists()
    assert source.version() == before
