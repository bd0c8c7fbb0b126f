"""Support for the klea-serve tests: a small library of real stores, and a server thread.

:func:`build_stores` writes, for the corpus of ``retrieval_support``, a pickled BM25
corpus, an ``fts5:`` chunk index (also the search index), a Chroma collection and a
sci-etl vector memory, the last two embedded with ``HashEmbeddings`` (FAKE vectors: the
tests check plumbing, not ranking by meaning), and a stores configuration naming them.
:class:`ServerThread` runs an ASGI app under uvicorn on a free loopback port, and
:func:`chromium` launches Debian's Chromium for the page tests (Playwright).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from retrieval_backends import add_documents
from retrieval_support import corpus_documents, write_corpus_pickle, write_fts5_index

COLLECTION = "serve_tests"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium under Playwright's sync API, closed on exit.

    Launch it after the servers a module needs: the sync API runs an event loop in this
    thread, and opening a service needs ``asyncio.run``.
    """
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), "install Debian's chromium: apt-get install -y chromium"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclass(frozen=True)
class Stores:
    """Paths of the stores :func:`build_stores` wrote."""

    config: Path
    bm25_config: Path
    fts5: Path
    vectors: Path


@dataclass(frozen=True)
class _Record:
    record_id: str
    title: str
    abstract: str
    metadata: dict[str, Any]


class HashAsyncEmbedder:
    """sci-etl-search's ``AsyncEmbedder`` over a LangChain ``Embeddings``."""

    def __init__(self, embeddings: Embeddings) -> None:
        self.embeddings = embeddings

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return self.embeddings.embed_documents(list(texts))


async def _write_vectors(path: Path, embeddings: Embeddings) -> None:
    from sci_etl_core.embeddings.ingest_async import AsyncChunkIngestor
    from sci_etl_core.embeddings.store_sqlite import AsyncSqliteEmbeddingStore

    store = AsyncSqliteEmbeddingStore(path)
    try:
        ingestor = AsyncChunkIngestor(HashAsyncEmbedder(embeddings), store)
        for doc in corpus_documents():
            record = _Record(doc.id or "", str(doc.metadata["title"]), "", dict(doc.metadata))
            await ingestor.ingest(record, doc.page_content)
    finally:
        await store.aclose()


def build_stores(folder: Path, embeddings: Embeddings) -> Stores:
    """Write every store of the test library into ``folder``."""
    from klea_utils.stores.utils import instantiate_vector_store

    docs = corpus_documents()
    pickle_path = write_corpus_pickle(folder / "bm25.pkl", docs)
    fts5 = folder / "chunks.sqlite"
    write_fts5_index(fts5, docs)
    chroma = instantiate_vector_store(
        f"chroma:{folder / 'chroma'}",
        COLLECTION,
        embeddings,
        logging.getLogger("serve-tests"),
        create=True,
    )
    add_documents(chroma, docs, [d.id or "" for d in docs])
    vectors = folder / "vectors.sqlite"
    asyncio.run(_write_vectors(vectors, embeddings))
    bm25_stores = [
        {"name": "pickled", "path": str(pickle_path)},
        {"name": "fts", "path": f"fts5:{fts5}"},
    ]
    full = {
        "domains": {
            "neuro": {
                "vector_stores": [{"name": COLLECTION, "path": f"chroma:{folder / 'chroma'}"}],
                "bm25_stores": bm25_stores,
            }
        }
    }
    config = folder / "stores.json"
    config.write_text(json.dumps(full), encoding="utf-8")
    bm25_config = folder / "bm25-stores.json"
    bm25_config.write_text(
        json.dumps({"domains": {"neuro": {"bm25_stores": bm25_stores}}}), encoding="utf-8"
    )
    return Stores(config, bm25_config, fts5, vectors)


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerThread:
    """uvicorn serving ``app`` on 127.0.0.1:``port`` in a daemon thread."""

    def __init__(self, app: Any, port: int) -> None:
        import uvicorn

        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def serving(options: Any) -> ServerThread:
    """A :class:`ServerThread` for the service ``options`` (``ServeOptions``) open, on a
    free port; enter it to start the server."""
    from klea_utils.stores.serve import build_app, open_service

    port = free_port()
    return ServerThread(build_app(open_service(options, progress=lambda _: None), port=port), port)


class ServeProcess:
    """``klea-serve ARGS --port P`` as a subprocess, until its page answers (stderr in a log).

    ``headers`` are sent by the readiness probe (a token, when the server needs one).
    """

    def __init__(self, args: list[str], log: Path, headers: dict[str, str] | None = None) -> None:
        import sys

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = [
            str(Path(sys.executable).with_name("klea-serve")),
            *args,
            "--port",
            str(self.port),
        ]
        self.log = log
        self.headers = headers or {}

    def __enter__(self) -> ServeProcess:
        import subprocess

        import httpx

        self._log = self.log.open("w", encoding="utf-8")
        self.process = subprocess.Popen(self.command, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"klea-serve exited: {self.log.read_text(encoding='utf-8')}")
            try:
                httpx.get(self.url + "/api/health", headers=self.headers, timeout=5)
                return self
            except httpx.TransportError:
                time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"klea-serve did not answer: {self.log.read_text(encoding='utf-8')}")

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except Exception:
            self.process.kill()
            self.process.wait()
        self._log.close()


def counting_source(path: Path) -> Any:
    """An ``fts5:`` paper source over ``path`` that counts the reads of every paper's
    metadata (``metadata_reads``)."""
    from klea_utils.stores.serve.papers.sources import Fts5PaperSource

    class CountingSource(Fts5PaperSource):
        def __init__(self, path: Path) -> None:
            super().__init__(path)
            self.metadata_reads = 0

        def paper_metadata(self, file_names: Any = None) -> Any:
            if file_names is None:
                self.metadata_reads += 1
            return super().paper_metadata(file_names)

    return CountingSource(path)
